//! The command line as people run it (the real binary): one run is one view of the cluster
//! (ConfigMaps across files), errors placed where the problem is, `fix` keeping files as written,
//! and the conveniences other linters have (`rules`, completions, a config file, `--skip`).

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

use common::run_in;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The Redis replication fixture split as Helm output often is: the health ConfigMap in one file,
/// the two StatefulSets in another.
fn split_redis(dir: &Path) -> (String, String) {
    let text = std::fs::read_to_string(root().join("tests/fixtures/scripts/redis-replication.yaml")).unwrap();
    let (configmap, workloads) = text.split_once("\n---\n").unwrap();
    assert!(configmap.contains("kind: ConfigMap") && !workloads.contains("kind: ConfigMap"));
    std::fs::write(dir.join("health.yaml"), configmap).unwrap();
    std::fs::write(dir.join("redis.yaml"), workloads).unwrap();
    (configmap.to_string(), workloads.to_string())
}

#[test]
fn a_configmap_in_one_file_resolves_the_script_of_a_workload_in_another() {
    let dir = tempfile::tempdir().unwrap();
    let (configmap, workloads) = split_redis(dir.path());
    // Alone, the script is unknown: a note, never a denial.
    let alone = run_in(dir.path(), &["check", "redis.yaml"], None);
    assert_eq!(alone.status.code(), Some(0), "{}", stdout(&alone));
    assert!(stdout(&alone).contains("not analysed (ConfigMap data/cache-redis-health is not available)"));
    // Two files, either order, and a file plus standard input: one view, the replica denied.
    for args in [
        vec!["check", "health.yaml", "redis.yaml"],
        vec!["check", "redis.yaml", "health.yaml"],
        vec!["check", "health.yaml", "-"],
    ] {
        let stdin = args.contains(&"-").then_some(workloads.as_str());
        let o = run_in(dir.path(), &args, stdin);
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {out}");
        let deny: Vec<&str> = out.lines().filter(|l| l.contains(" deny ")).collect();
        assert_eq!(deny.len(), 1, "{out}");
        assert!(deny[0].contains("cache-redis-replicas") && deny[0].contains("liveness-dependency"), "{out}");
    }
    // The ConfigMap on standard input, the workloads in a file.
    let o = run_in(dir.path(), &["check", "-", "redis.yaml"], Some(&configmap));
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    // explain sees it too: the replica's liveness reaches outside the pod only with the ConfigMap.
    let with = stdout(&run_in(dir.path(), &["explain", "health.yaml", "redis.yaml"], None));
    let without = stdout(&run_in(dir.path(), &["explain", "redis.yaml"], None));
    let marker = "reaches outside the pod (liveness-dependency)";
    assert!(with.contains(marker), "{with}");
    assert!(!without.contains(marker), "{without}");
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs `check` on one file written into a fresh directory.
fn check_text(name: &str, text: &str) -> Output {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(name), text).unwrap();
    run_in(dir.path(), &["check", name], None)
}

const POD_HEAD: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers:\n  - name: app\n    image: nginx\n";

#[test]
fn an_invalid_field_is_reported_at_its_line_with_its_path() {
    let text =
        format!("{POD_HEAD}    livenessProbe:\n      httpGet:\n        path: /\n        port: [1, 2]\n");
    let o = check_text("bad.yaml", &text);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains(
            "bad.yaml:12:15: the object is not a valid Pod: spec.containers[0].livenessProbe.httpGet.port: invalid type: sequence"
        ),
        "{e}"
    );
    // A value never appears in the message (env values hold secrets).
    let text = format!("{POD_HEAD}    env:\n    - name: TOKEN\n      value: {{hunter2: 1}}\n");
    let e = stderr(&check_text("env.yaml", &text));
    assert!(
        e.contains(
            "env.yaml:11:14: the object is not a valid Pod: spec.containers[0].env[0].value: invalid type"
        ),
        "{e}"
    );
    assert!(!e.contains("hunter2"), "{e}");
}

#[test]
fn a_duplicate_key_is_explained_without_the_libraries_advice() {
    let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n  name: y\nspec:\n  containers: []\n";
    let e = stderr(&check_text("dup.yaml", text));
    assert!(e.contains("dup.yaml:5:3: invalid YAML: duplicate key `name`"), "{e}");
    assert!(!e.contains("DuplicateKeyPolicy"), "{e}");
}

#[test]
fn an_unrendered_helm_template_is_one_error_suggesting_helm_template() {
    let text = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ include \"x.fullname\" . }}\n  labels:\n    {{- include \"x.labels\" . | nindent 4 }}\nspec:\n  template:\n    spec:\n      containers:\n      - name: {{ .Chart.Name }}\n";
    let o = check_text("deployment.yaml", text);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.contains("deployment.yaml:4:9: an unrendered Helm template") && e.contains("helm template"),
        "{e}"
    );
    // Template-like text inside a valid manifest is just text.
    let text = format!("{POD_HEAD}    args: [\"{{{{ not a template }}}}\"]\n");
    let o = check_text("ok.yaml", &text);
    assert_ne!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn skip_annotations_get_did_you_mean_and_a_note_where_they_are_not_read() {
    let text = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  annotations:\n    probegate.dev/skip: startup-probe\nspec:\n  template:\n    metadata:\n      annotations:\n        probegate.dev/skip: prestop-slep\n    spec:\n      containers:\n      - name: app\n        image: nginx\n        ports: [{containerPort: 80}]\n";
    let out = stdout(&check_text("web.yaml", text));
    assert!(out.contains(r#"unknown rule "prestop-slep" (did you mean "prestop-sleep"?)"#), "{out}");
    assert!(out.contains("on the Deployment's own metadata is not read"), "{out}");
    // Where it is read, it works: the rule is skipped, the skip is reported as a note (never
    // silent), and nothing is warned about the annotation.
    let fixed = text
        .replace("prestop-slep", "prestop-sleep")
        .replace("  annotations:\n    probegate.dev/skip: startup-probe\n", "");
    let out = stdout(&check_text("web.yaml", &fixed));
    assert!(!out.contains("(prestop-sleep)"), "{out}");
    assert!(!out.contains("unknown rule") && !out.contains("is not read"), "{out}");
    assert!(out.contains("rules skipped by annotation probegate.dev/skip: prestop-sleep"), "{out}");
}

/// `serve --admin-addr localhost:PORT` (as the README writes HOST:PORT) is accepted and serves.
#[test]
fn serve_takes_host_names_for_its_addresses() {
    use std::io::{BufRead, Read};
    let dir = tempfile::tempdir().unwrap();
    let bad = run_in(dir.path(), &["serve", "--admin-addr", "localhost"], None);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("is not HOST:PORT"), "{}", stderr(&bad));
    let ca = dir.path().join("ca.pem");
    let mut child = Command::new(env!("CARGO_BIN_EXE_probegate"))
        .args(["serve", "--addr", "localhost:0", "--admin-addr", "localhost:0", "--no-namespace-watch"])
        .arg("--write-ca")
        .arg(&ca)
        .env("PROBEGATE_LOG_FORMAT", "json")
        .env("KUBECONFIG", dir.path().join("none"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut admin = None;
    while admin.is_none() {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let Ok(line) = rx.recv_timeout(left) else { break };
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else { continue };
        if let Some(a) = v["admin"].as_str().filter(|a| *a != "none") {
            admin = Some(a.parse::<std::net::SocketAddr>().unwrap());
        }
    }
    let result = admin.map(|admin| {
        assert!(admin.ip().is_loopback(), "{admin}");
        let mut s = std::net::TcpStream::connect(admin).unwrap();
        s.write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").unwrap();
        let mut reply = String::new();
        s.read_to_string(&mut reply).unwrap();
        reply
    });
    let _ = child.kill();
    let _ = child.wait();
    let reply = result.expect("serve did not log its admin address within 60 s");
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
}

/// `probegate rules`: every rule with its default action and a link to its section of docs/rules.md,
/// the same link SARIF gives as `helpUri`.
#[test]
fn rules_lists_every_rule_with_a_link_that_sarif_shares_and_the_docs_have() {
    let o = run_in(&root(), &["rules", "-o", "json"], None);
    assert_eq!(o.status.code(), Some(0));
    let rules: Vec<serde_json::Value> = serde_json::from_slice(&o.stdout).unwrap();
    let docs = std::fs::read_to_string(root().join("docs/rules.md")).unwrap();
    let policy = probegate::policy::Policy::default();
    // The links' one source: Cargo.toml's `repository` field.
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let repository = manifest
        .lines()
        .find_map(|l| l.strip_prefix("repository = "))
        .expect("Cargo.toml has a repository field")
        .trim_matches('"');
    assert!(repository.starts_with("https://"), "{repository}");
    assert_eq!(rules.len(), probegate::policy::RuleId::ALL.len());
    for (rule, id) in rules.iter().zip(probegate::policy::RuleId::ALL) {
        assert_eq!(rule["id"], id.as_str());
        assert_eq!(rule["defaultAction"], policy.rules.action(id).as_str(), "{rule}");
        let uri = rule["helpUri"].as_str().unwrap();
        assert_eq!(uri, format!("{repository}/blob/main/docs/rules.md#{}", id.as_str()));
        assert!(docs.contains(&format!("\n## {}\n", id.as_str())), "docs/rules.md has no section {id}");
    }
    let text = stdout(&run_in(&root(), &["rules"], None));
    assert!(text.lines().any(|l| l.starts_with("liveness-dependency") && l.contains(" deny ")), "{text}");
    // SARIF links the same sections.
    let sarif = run_in(&root(), &["check", "-o", "sarif", "tests/fixtures/cli/app.yaml"], None);
    let sarif: serde_json::Value = serde_json::from_slice(&sarif.stdout).unwrap();
    let driver_rules = sarif["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap();
    for (r, listed) in driver_rules.iter().zip(&rules) {
        assert_eq!(r["helpUri"], listed["helpUri"]);
    }
}

#[test]
fn completions_are_scripts_for_each_shell() {
    let bash = run_in(&root(), &["completions", "bash"], None);
    assert_eq!(bash.status.code(), Some(0));
    let script = stdout(&bash);
    for word in ["check", "fix", "explain", "rules", "--fail-on"] {
        assert!(script.contains(word), "{word}");
    }
    // bash itself reads it without a syntax error, where bash is installed.
    if let Ok(o) = Command::new("bash").args(["-n", "-c", &script]).output() {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    for shell in ["zsh", "fish", "powershell", "elvish"] {
        let o = run_in(&root(), &["completions", shell], None);
        assert!(o.status.success() && o.stdout.len() > 100, "{shell}");
    }
    // `--skip` completes to the rule ids (not to file names) in bash, zsh and fish.
    let rules = run_in(&root(), &["rules", "-o", "json"], None);
    let rules: Vec<serde_json::Value> = serde_json::from_slice(&rules.stdout).unwrap();
    assert!(rules.len() >= 13);
    for shell in ["bash", "zsh", "fish"] {
        let script = stdout(&run_in(&root(), &["completions", shell], None));
        for r in &rules {
            let id = r["id"].as_str().unwrap();
            assert!(script.contains(id), "{shell}: no {id}");
        }
    }
    // In bash, the words offered after `--skip` are the rule ids.
    let after_skip = script
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("--skip)"))
        .nth(1)
        .unwrap_or_default()
        .to_string();
    assert!(after_skip.contains("compgen -W \"liveness-dependency "), "{after_skip}");
    assert!(!after_skip.contains("compgen -f"), "{after_skip}");
    assert_eq!(run_in(&root(), &["completions", "tcsh"], None).status.code(), Some(2));
}

const WEB: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: nginx\n        ports: [{containerPort: 80}]\n";

/// `.probegate.yaml` in the current folder or a parent (or `$PROBEGATE_CONFIG`) gives defaults a CI
/// job would otherwise pass as flags; flags win; `--skip` and the file's `skip` turn rules off.
#[test]
fn a_config_file_found_by_convention_replaces_flags_and_skip_turns_rules_off() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("k8s/sub");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(dir.path().join("k8s/web.yaml"), WEB).unwrap();
    // No configuration: the defaults (readiness-missing is a warn, prestop-sleep a fix; --fail-on deny).
    let plain = run_in(dir.path(), &["check", "k8s/web.yaml"], None);
    assert_eq!(plain.status.code(), Some(0), "{}", stdout(&plain));
    assert!(stdout(&plain).contains("(prestop-sleep)"));
    // Found from a subfolder, paths relative to the file, failOn and skip applied.
    std::fs::write(
        dir.path().join(".probegate.yaml"),
        "failOn: warn\nskip: [prestop-sleep]\npaths: [k8s/web.yaml]\nnamespace: shop\n",
    )
    .unwrap();
    let o = run_in(&sub, &["check"], None);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    assert!(out.contains("../../k8s/web.yaml:9") && out.contains("Deployment shop/web"), "{out}");
    assert!(out.contains("(readiness-missing)") && !out.contains("(prestop-sleep)"), "{out}");
    assert!(out.contains("(--fail-on warn)"), "{out}");
    // Flags win; --skip adds to the file's skips.
    let o = run_in(&sub, &["check", "--fail-on", "deny", "--skip", "readiness-missing"], None);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(!out.contains("(readiness-missing)") && !out.contains("(prestop-sleep)"), "{out}");
    // fix reads it too: nothing to add once prestop-sleep is skipped, and the readiness-missing
    // warning it leaves fails the run at the file's failOn: warn, as check does.
    let o = run_in(&sub, &["fix", "--diff"], None);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("left to you: 0 deny, 1 warn; failed (--fail-on warn)"), "{}", stderr(&o));
    assert!(!stdout(&o).contains("preStop"), "{}", stdout(&o));
    // $PROBEGATE_CONFIG names another file; a bad one is exit 2 naming the key and the nearest rule.
    let other = dir.path().join("ci.yaml");
    std::fs::write(&other, "skip: [prestop-slep]\n").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_probegate"))
        .args(["check", "k8s/web.yaml"])
        .current_dir(dir.path())
        .env("PROBEGATE_CONFIG", &other)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(r#"unknown rule "prestop-slep" (did you mean "prestop-sleep"?)"#),
        "{}",
        stderr(&o)
    );
    // No paths anywhere: a clear error.
    let empty = tempfile::tempdir().unwrap();
    let o = run_in(empty.path(), &["check"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("name the files or directories to read"), "{}", stderr(&o));
    // An unknown rule on the command line: did you mean.
    let o = run_in(dir.path(), &["check", "--skip", "readines", "k8s/web.yaml"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains(r#"did you mean "readiness-missing"?"#), "{}", stderr(&o));
}

/// Runs `explain` on one manifest (and extra flags) in a fresh directory.
fn explain_text(text: &str, flags: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("w.yaml"), text).unwrap();
    let mut args = vec!["explain"];
    args.extend_from_slice(flags);
    args.push("w.yaml");
    let o = run_in(dir.path(), &args, None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    stdout(&o)
}

const WORKER: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: worker}\nspec:\n  replicas: 2\n  template:\n    spec:\n      containers:\n      - name: w\n        image: x\n        livenessProbe:\n          exec: {command: [sh, -c, 'psql -h $DB_HOST -c \"select 1\"']}\n";

#[test]
fn explain_says_what_it_assumed() {
    // Shell quoting kept: the command reads as it would be typed.
    let worker = explain_text(WORKER, &[]);
    assert!(worker.contains(r#"exec `sh -c 'psql -h $DB_HOST -c "select 1"'`"#), "{worker}");
    // A worker serves nothing: restarts are simulated, no serving timeline.
    assert!(worker.contains("4 restarts") && worker.contains("nothing serves requests"), "{worker}");
    assert!(!worker.contains("replicas serving requests, every"), "{worker}");
    // With ports: the timeline, and the 0 s warm-up named as the reason "as written" looks fine.
    let web =
        WORKER.replace("        image: x\n", "        image: x\n        ports: [{containerPort: 8080}]\n");
    let out = explain_text(&web, &[]);
    assert!(out.contains("replicas serving requests, every"), "{out}");
    assert!(out.contains("the warm-up is the 0 s default") && out.contains("--warmup SECONDS"), "{out}");
    let out = explain_text(&web, &["--warmup", "40"]);
    assert!(!out.contains("0 s default"), "{out}");
    // No probe checks a dependency: no simulation of one.
    let local = web.replace(r#"psql -h $DB_HOST -c "select 1""#, "pg_isready -h localhost");
    let out = explain_text(&local, &[]);
    assert!(out.contains("outage simulation: none: no probe checks a dependency"), "{out}");
    assert!(!out.contains("replicas serving requests"), "{out}");
    // Unless asked for.
    let out = explain_text(&local, &["--dependency-check", "readiness"]);
    assert!(out.contains("dependency checked by readiness only"), "{out}");
    // The help says what --dependency-check means.
    let help = stdout(&run_in(&root(), &["explain", "--help"], None))
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        help.contains("a failing check restarts the container") && !help.contains("module documentation"),
        "{help}"
    );
}

/// `fix` edits the text: a container ending with `lifecycle:` (postStart) gets its preStop inside
/// it and the startup probe after it, comments and flow style kept, no Kubernetes defaults spelt
/// out; `--in-place` writes exactly that.
#[test]
fn fix_keeps_the_file_as_it_was() {
    let text = "# my pod\napiVersion: v1\nkind: Pod\nmetadata:\n  name: web   # the web pod\nspec:\n  containers:\n    - name: web\n      image: nginx\n      ports: [{containerPort: 80}]\n      livenessProbe:\n        httpGet: {path: /healthz, port: 80}\n      lifecycle:\n        postStart:\n          exec: {command: [sh, -c, \"echo hi\"]}\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pod.yaml"), text).unwrap();
    let o = run_in(dir.path(), &["fix", "pod.yaml"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("re-serialized"), "{}", stderr(&o));
    let fixed = stdout(&o);
    let expected_tail = "      lifecycle:\n        postStart:\n          exec: {command: [sh, -c, \"echo hi\"]}\n        preStop:\n          sleep:\n            seconds: 5\n      startupProbe:\n        failureThreshold: 24\n        httpGet:\n          path: /healthz\n          port: 80\n        periodSeconds: 5\n        timeoutSeconds: 3\n";
    assert!(fixed.starts_with("# my pod\n") && fixed.contains("  name: web   # the web pod\n"), "{fixed}");
    assert!(fixed.ends_with(expected_tail), "{fixed}");
    for default in ["initialDelaySeconds", "successThreshold", "scheme"] {
        assert!(!fixed.contains(default), "{default} written: {fixed}");
    }
    // The fixed file checks clean of fix findings.
    std::fs::write(dir.path().join("fixed.yaml"), &fixed).unwrap();
    let o = run_in(dir.path(), &["check", "fixed.yaml"], None);
    assert!(stdout(&o).contains(" 0 fix, 0 errors"), "{}", stdout(&o));
    // --in-place writes the same text.
    let o = run_in(dir.path(), &["fix", "-i", "pod.yaml"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(dir.path().join("pod.yaml")).unwrap(), fixed);
}

#[test]
fn fix_writes_crlf_lines_into_a_crlf_file() {
    let text = "apiVersion: v1\r\nkind: Pod\r\nmetadata:\r\n  name: w\r\nspec:\r\n  containers:\r\n  - name: w\r\n    image: x\r\n    ports:\r\n    - containerPort: 80\r\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("w.yaml"), text).unwrap();
    let o = run_in(dir.path(), &["fix", "w.yaml"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let fixed = stdout(&o);
    assert!(fixed.len() > text.len() && fixed.contains("preStop:\r\n"), "{fixed:?}");
    assert_eq!(fixed.matches('\n').count(), fixed.matches("\r\n").count(), "{fixed:?}");
}

#[test]
fn explain_writes_json() {
    let o = run_in(&root(), &["explain", "-o", "json", "tests/fixtures/explain/seed-scenario.yaml"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let e = &v.as_array().unwrap()[0];
    assert_eq!(e["object"], "Deployment shop/api");
    // Named fields with units (docs/cli.md), not an untyped pair.
    assert_eq!(e["grace"], serde_json::json!({"seconds": 30, "defaulted": false}));
    assert_eq!(e["containers"][0]["liveness"]["period"], 10);
    // The failure budget check and the text report give: periodSeconds 10 x failureThreshold 3.
    assert_eq!(e["containers"][0]["liveness"]["failureBudget"], 30);
    assert_eq!(e["containers"][0]["readiness"]["failureBudget"], 10);
    let sim = &e["simulation"];
    assert_eq!(sim["written"]["scenario"]["dependencyCheck"], "liveness");
    // The same numbers as the text report (the article's table).
    assert_eq!(sim["written"]["outcome"]["restarts"], 12);
    assert_eq!(sim["fixed"]["outcome"]["restarts"], 0);
    assert_eq!(sim["written"]["outcome"]["lostPodSecondsAfterRecovery"], 215);
}

/// Text output wraps only on a terminal: piped, each finding is one line however long, as scripts
/// and the goldens read it (the wrapping itself: `cli::wrap`'s unit tests).
#[test]
fn piped_text_output_is_not_wrapped() {
    for args in [
        &["check", "tests/fixtures/corpus"][..],
        &["explain", "tests/fixtures/explain/seed-scenario.yaml"][..],
    ] {
        let o = run_in(&root(), args, None);
        let text = stdout(&o);
        assert!(text.lines().any(|l| l.chars().count() > 200), "{args:?}: {text}");
        if args[0] == "check" {
            // Every finding row ends with its rule id: no row was broken.
            for l in text.lines().filter(|l| l.starts_with("tests/fixtures/corpus/")) {
                assert!(l.ends_with(')') || l.ends_with(']'), "{l}");
            }
        }
        // (The longest line whose words fit the width: a word longer than it, such as a corpus
        // file's 120-character path now that rows are not padded, is never split.)
        let longest = text
            .lines()
            .filter(|l| l.split_whitespace().all(|w| w.chars().count() <= 100))
            .max_by_key(|l| l.len())
            .unwrap();
        let wrapped = probegate::cli::wrap::wrap_line(longest, 100);
        assert!(wrapped.len() > 1 && wrapped.iter().all(|l| l.chars().count() <= 100), "{wrapped:?}");
    }
}

/// A Deployment whose liveness probe asks Spring Boot's aggregate health endpoint, and a worker
/// with no probe reaching anything.
const AGGREGATE: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  replicas: 3\n  template:\n    spec:\n      containers:\n      - name: app\n        image: example/api:1\n        ports: [{containerPort: 8080}]\n        livenessProbe:\n          httpGet: {path: /actuator/health, port: 8080}\n        readinessProbe:\n          httpGet: {path: /ready, port: 8080}\n";

/// Beside a `liveness-dependency-path` warning, `explain` does not say that no probe checks a
/// dependency: it names the aggregate endpoint as one that may. And `--svg` draws a chart only for
/// a workload with an outage to show, saying why for the others.
#[test]
fn explain_agrees_with_the_aggregate_path_warning_and_draws_only_real_outages() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("api.yaml"), AGGREGATE).unwrap();
    let check = run_in(dir.path(), &["check", "--fail-on", "warn", "api.yaml"], None);
    assert!(stdout(&check).contains("(liveness-dependency-path)"), "{}", stdout(&check));
    let svg = dir.path().join("chart.svg");
    let o = run_in(dir.path(), &["explain", "--svg", svg.to_str().unwrap(), "api.yaml"], None);
    // No chart to draw is an error (s16): the text is still written.
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(!text.contains("no probe checks a dependency"), "{text}");
    assert!(
        text.contains("aggregate health endpoint, which may check dependencies (liveness-dependency-path)"),
        "{text}"
    );
    assert!(text.contains("--dependency-check liveness simulates that outage"), "{text}");
    assert!(!svg.exists(), "a chart of an outage that changes nothing");
    assert!(
        stderr(&o).contains("no chart for Deployment default/api: no probe checks a dependency"),
        "{}",
        stderr(&o)
    );
    // Told that the endpoint checks the database, it simulates and draws the outage.
    let o = run_in(
        dir.path(),
        &["explain", "--dependency-check", "liveness", "--svg", svg.to_str().unwrap(), "api.yaml"],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<polyline"));
    // A workload that serves nothing gets the restarts but no serving chart.
    let worker = AGGREGATE.replace("        ports: [{containerPort: 8080}]\n", "");
    std::fs::write(dir.path().join("worker.yaml"), worker).unwrap();
    let none = dir.path().join("worker.svg");
    let o = run_in(
        dir.path(),
        &["explain", "--dependency-check", "liveness", "--svg", none.to_str().unwrap(), "worker.yaml"],
        None,
    );
    assert!(!none.exists());
    assert!(stderr(&o).contains("no container declares ports"), "{}", stderr(&o));
}

/// The note on a target the analysis cannot resolve says why, per kind of value.
#[test]
fn an_unresolved_target_says_where_its_value_comes_from() {
    let pod = |name: &str, env: &str, script: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\nspec:\n  containers:\n  - name: app\n    image: example/app:1\n    env:\n{env}    livenessProbe:\n      exec: {{command: [sh, -c, '{script}']}}\n"
        )
    };
    let text = [
        pod(
            "node",
            "    - name: NODE_IP\n      valueFrom: {fieldRef: {fieldPath: status.hostIP}}\n",
            "redis-cli -h $NODE_IP ping",
        ),
        pod(
            "secret",
            "    - name: REDIS_HOST\n      valueFrom: {secretKeyRef: {name: redis, key: host}}\n",
            "redis-cli -h $REDIS_HOST ping",
        ),
        pod(
            "configmap",
            "    - name: DB_HOST\n      valueFrom: {configMapKeyRef: {name: settings, key: db}}\n",
            "pg_isready -h $DB_HOST",
        ),
        pod("argument", "    - {name: X, value: x1}\n", "redis-cli -h $1 ping"),
        pod("unset", "    - {name: X, value: x1}\n", "redis-cli -h $CACHE ping"),
        // The kubelet's `$(VAR)` syntax on a variable the env does not declare: the kubelet leaves
        // it as written, and the shell runs `HOSTNAME` as a command substitution.
        pod("kubelet", "    - {name: X, value: x1}\n", "curl -sf http://$(HOSTNAME):8080/healthz"),
    ]
    .join("---\n");
    let o = check_text("pods.yaml", &text);
    let out = stdout(&o);
    assert!(!out.contains("not a literal env value"), "{out}");
    for (object, note) in [
        ("Pod default/node", "reaches $NODE_IP (from the Pod's status.hostIP, set at run time)"),
        ("Pod default/secret", "reaches $REDIS_HOST (from Secret redis key host)"),
        (
            "Pod default/configmap",
            "reaches $DB_HOST (from ConfigMap settings key db, which is not available)",
        ),
        ("Pod default/argument", "reaches $1 (argument 1 of the script or function, unknown here)"),
        ("Pod default/unset", "reaches $CACHE (not in the container's env; no value known here)"),
        (
            "Pod default/kubelet",
            "`curl -sf http://$(HOSTNAME):8080/healthz` runs a command named `HOSTNAME` for its host; for the \
             variable write `$HOSTNAME` (not in env: the kubelet leaves it)",
        ),
    ] {
        assert!(
            out.lines().any(|l| l.contains(&format!("{object} ")) && l.contains(note)),
            "{object}: no {note:?} in\n{out}"
        );
    }
    // A ConfigMap in the input without the key says so.
    let configmap = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  other: x\n---\n";
    let o = check_text("pods.yaml", &format!("{configmap}{text}"));
    assert!(stdout(&o).contains("reaches $DB_HOST (ConfigMap settings has no key db)"), "{}", stdout(&o));
}

/// A second `fix --in-place` on a fixed file says there is nothing to fix, not "0 objects fixed
/// in 0 files".
#[test]
fn a_second_fix_says_nothing_to_fix() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("web.yaml"), WEB).unwrap();
    let first = run_in(dir.path(), &["fix", "--in-place", "web.yaml"], None);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    assert!(
        stderr(&first).contains("probegate fix: 1 object fixed in 1 file (1 object in 1 file checked)"),
        "{}",
        stderr(&first)
    );
    let fixed = std::fs::read_to_string(dir.path().join("web.yaml")).unwrap();
    assert_ne!(fixed, WEB);
    // A diff writes nothing, and says so.
    std::fs::write(dir.path().join("other.yaml"), WEB).unwrap();
    let diff = run_in(dir.path(), &["fix", "--diff", "other.yaml"], None);
    assert!(
        stderr(&diff)
            .contains("1 object fixed in 1 file (1 object in 1 file checked; a diff only, no file written)"),
        "{}",
        stderr(&diff)
    );
    assert_eq!(std::fs::read_to_string(dir.path().join("other.yaml")).unwrap(), WEB);
    let second = run_in(dir.path(), &["fix", "--in-place", "web.yaml"], None);
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    assert!(
        stderr(&second).trim().ends_with(
            "probegate fix: nothing to fix (1 object in 1 file checked); left to you: 0 deny, 1 warn"
        ),
        "{}",
        stderr(&second)
    );
    assert_eq!(std::fs::read_to_string(dir.path().join("web.yaml")).unwrap(), fixed);
}

/// `check` on a captured AdmissionReview checks the object inside it (`request.object`), in the
/// review's namespace when the object names none, as the webhook would.
#[test]
fn check_reads_the_object_of_an_admission_review() {
    let o = run_in(&root(), &["check", "examples/pod-liveness-checks-database-review.json"], None);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("deny  Pod default/web-coupled") && out.contains("(liveness-dependency)"), "{out}");
    assert!(out.contains("1 object in 1 file"), "{out}");
    let mut review: serde_json::Value = serde_json::from_slice(
        &std::fs::read(root().join("examples/pod-liveness-checks-database-review.json")).unwrap(),
    )
    .unwrap();
    review["request"]["namespace"] = "shop".into();
    review["request"]["object"]["metadata"].as_object_mut().unwrap().remove("namespace");
    let o = run_in(&root(), &["check", "-"], Some(&review.to_string()));
    assert!(stdout(&o).contains("deny  Pod shop/web-coupled"), "{}", stdout(&o));
    // A DELETE review carries no object: nothing to check.
    review["request"]["object"] = serde_json::Value::Null;
    let o = run_in(&root(), &["check", "-"], Some(&review.to_string()));
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("0 objects"), "{}", stdout(&o));
}

/// Each example review's `last-applied-configuration` is the Pod it carries, as `kubectl apply`
/// writes it: the same name and the same probes.
#[test]
fn the_example_reviews_last_applied_configuration_is_their_own_pod() {
    for file in ["examples/pod-create-review.json", "examples/pod-liveness-checks-database-review.json"] {
        let review: serde_json::Value =
            serde_json::from_slice(&std::fs::read(root().join(file)).unwrap()).unwrap();
        let object = &review["request"]["object"];
        let applied: serde_json::Value = serde_json::from_str(
            object["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(applied["metadata"]["name"], object["metadata"]["name"], "{file}");
        assert_eq!(applied["metadata"]["name"], review["request"]["name"], "{file}");
        let containers = object["spec"]["containers"].as_array().unwrap();
        let applied_containers = applied["spec"]["containers"].as_array().unwrap();
        assert_eq!(containers.len(), applied_containers.len(), "{file}");
        for (live, applied) in containers.iter().zip(applied_containers) {
            assert_eq!(live["name"], applied["name"], "{file}");
            for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
                let handler = |p: &serde_json::Value| {
                    ["httpGet", "exec", "tcpSocket", "grpc"].map(|h| p[probe][h].clone())
                };
                // The API server adds defaults (scheme, thresholds); the handler is as applied.
                let mut live_handler = handler(live);
                if let Some(get) = live_handler[0].as_object_mut() {
                    get.remove("scheme");
                }
                assert_eq!(live_handler, handler(applied), "{file}: {probe}");
            }
        }
    }
}

/// The server's hot reload logs every error of an invalid policy, each with its file, line and
/// field, as `policy validate` prints them.
#[test]
fn hot_reload_logs_every_error_of_an_invalid_policy() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.yaml");
    let head = "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\n";
    std::fs::write(&policy, head).unwrap();
    let args: Vec<String> = ["--addr", "127.0.0.1:0", "--no-namespace-watch", "--policy"]
        .into_iter()
        .map(String::from)
        .chain([policy.display().to_string()])
        .collect();
    let served = common::Served::start(&args, &[], std::time::Duration::from_secs(60));
    // Three mistakes: a value of the wrong type, one out of range, a misspelt rule id. Written
    // whole, then renamed over the policy (as an editor or a ConfigMap update replaces it): a
    // write in place can be read half done (empty: a fourth, "unexpected end of input", error).
    let next = dir.path().join("policy.yaml.new");
    std::fs::write(&next, include_str!("fixtures/policies/three-mistakes.yaml")).unwrap();
    std::fs::rename(&next, &policy).unwrap();
    let fields =
        ["rules.startup-probe.budgetSeconds", "rules.prestop-sleep.seconds", "rules.liveness-dependancy"];
    common::wait_until("the reload's errors are logged", std::time::Duration::from_secs(20), || {
        let log = served.log();
        fields.iter().all(|f| log.contains(&format!("field `{f}`")))
    });
    let log = served.log();
    let refused: Vec<&str> = log.lines().filter(|l| l.contains("refused an invalid policy")).collect();
    assert_eq!(refused.len(), 3, "{log}");
    for (line, (at, field)) in refused.iter().zip([(4, fields[0]), (6, fields[1]), (7, fields[2])]) {
        assert!(line.contains(&format!("{}:{at}:", policy.display())) && line.contains(field), "{line}");
    }
}

/// A directory holding a Helm chart is one error for the chart's templates (with the command that
/// renders it), not one per template; the rest of the directory is still checked.
#[test]
fn a_helm_chart_in_a_directory_is_one_error() {
    let dir = tempfile::tempdir().unwrap();
    let chart = dir.path().join("deploy/chart");
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::write(chart.join("Chart.yaml"), "apiVersion: v2\nname: web\nversion: 0.1.0\n").unwrap();
    std::fs::write(chart.join("values.yaml"), "replicas: 2\n").unwrap();
    for t in ["deployment.yaml", "service.yaml", "configmap.yaml"] {
        std::fs::write(
            chart.join("templates").join(t),
            "metadata:\n  name: {{ .Release.Name }}\n  labels:\n    {{- include \"x\" . | nindent 4 }}\n",
        )
        .unwrap();
    }
    std::fs::write(dir.path().join("deploy/web.yaml"), WEB).unwrap();
    let o = run_in(dir.path(), &["check", "deploy"], None);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("deploy/chart/templates: a Helm chart's templates, not manifests")
            && err.contains("`helm template RELEASE deploy/chart | probegate check -`"),
        "{err}"
    );
    assert!(stdout(&o).contains("Deployment default/web"), "{}", stdout(&o));
}

/// `value: true` where Kubernetes wants a string is an invalid object, as kubectl says too; the
/// error says to quote it (without quoting the value).
#[test]
fn an_unquoted_boolean_env_value_gets_a_hint() {
    let text = WEB.replace(
        "        image: nginx\n",
        "        image: nginx\n        env:\n        - {name: ALLOW_ALL, value: true}\n",
    );
    let o = check_text("web.yaml", &text);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("spec.template.spec.containers[0].env[0].value: invalid type: boolean")
            && err.contains("quote the value to make it a string"),
        "{err}"
    );
    // Other type errors get no such hint.
    let o = check_text(
        "web.yaml",
        &WEB.replace("ports: [{containerPort: 80}]", "ports: [{containerPort: [80]}]"),
    );
    assert!(!stderr(&o).contains("quote the value"), "{}", stderr(&o));
}

/// A workload the API server would refuse (no apiVersion, or `extensions/v1beta1`, gone since
/// Kubernetes 1.16) is an error naming the fix, not a document skipped as "not a workload" that
/// lets `check` pass; a `Job` of another API group (a CRD) is still not a workload.
#[test]
fn a_workload_with_an_unserved_api_version_is_not_skipped_in_silence() {
    let old = WEB.replace("apps/v1", "extensions/v1beta1");
    let missing = WEB.replace("apiVersion: apps/v1\n", "");
    let crd = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: j\n";
    let o = check_text("web.yaml", &format!("{old}---\n{missing}---\n{crd}"));
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains("web.yaml:1: Deployment extensions/v1beta1 is no longer served (removed in Kubernetes 1.16): use apiVersion apps/v1; not checked"),
        "{err}"
    );
    assert!(
        err.contains("web.yaml:13: a Deployment without apiVersion (the API server refuses it): not checked"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 2, "{err}");
    assert!(stdout(&o).contains("(1 other document skipped: not workloads)"), "{}", stdout(&o));
}

/// A test's `serve` never writes `$TMPDIR/probegate-ca.pem`, where the README's Quick-start server
/// keeps the CA its user's curl trusts: the harness gives the server a CA path in the test's own
/// folder (removed on drop). The child here gets a `TMPDIR` of this test's, to see where it writes.
#[test]
fn a_served_test_server_writes_its_ca_in_its_own_folder_not_the_users() {
    let user_tmp = tempfile::tempdir().unwrap();
    let args: Vec<String> =
        ["--addr", "127.0.0.1:0", "--no-namespace-watch"].into_iter().map(String::from).collect();
    let served = common::Served::start(
        &args,
        &[("TMPDIR", user_tmp.path().to_str().unwrap())],
        std::time::Duration::from_secs(60),
    );
    let written: Vec<_> =
        std::fs::read_dir(user_tmp.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(written.is_empty(), "the server wrote into the user's temporary folder: {written:?}");
    assert!(served.ca_pem().starts_with("-----BEGIN CERTIFICATE-----"), "{}", served.ca_pem());
    let own = served.dir.path().join("ca.pem");
    assert!(served.log().contains(&format!("--cacert {}", own.display())), "{}", served.log());
    let folder = served.dir.path().to_path_buf();
    drop(served);
    assert!(!folder.exists(), "the server's folder outlives it: {}", folder.display());
}

/// No test names a path in the shared temporary folder itself (`env::temp_dir`): each works
/// in a `tempfile` folder of its own, removed on drop, so a run leaves nothing in /tmp and never
/// meets a file of another run or of the user's.
#[test]
fn tests_keep_their_files_in_folders_of_their_own() {
    let mut offenders = Vec::new();
    let mut dirs = vec![root().join("tests")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if !path.ends_with("fixtures") {
                    dirs.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                let needle = ["std::env::", "temp_dir()"].concat();
                offenders.extend(
                    text.lines()
                        .enumerate()
                        .filter(|(_, l)| l.contains(&needle))
                        .map(|(i, _)| format!("{}:{}", path.display(), i + 1)),
                );
            }
        }
    }
    assert!(offenders.is_empty(), "shared temporary paths: {offenders:?}");
}

/// `fix --help` gives every exit code of fix, as docs/cli.md's table does: 0, 1 for a finding left
/// at or above `--fail-on` (s19: it was 0 with a denial left), and 2 for bad input, a bad policy,
/// and a refused `--in-place` (standard input, or a document only re-serializing could fix).
#[test]
fn fix_help_gives_every_exit_code_docs_cli_md_gives() {
    let help =
        stdout(&run_in(&root(), &["fix", "--help"], None)).split_whitespace().collect::<Vec<_>>().join(" ");
    for expected in [
        "Exit codes: 0 when",
        "; 2 when",
        "--in-place is refused",
        "for standard input",
        "re-serializing",
        "; 1 when one is",
        "2 wins over 1",
    ] {
        assert!(help.contains(expected), "fix --help lacks {expected:?}: {help}");
    }
    let docs = std::fs::read_to_string(root().join("docs/cli.md")).unwrap();
    let fix = docs.split("### `probegate fix").nth(1).unwrap().split("\n### ").next().unwrap();
    let codes: Vec<&str> = fix
        .lines()
        .filter_map(|l| l.strip_prefix("| ")?.split(" |").next())
        .filter(|c| c.chars().all(|ch| ch.is_ascii_digit()))
        .collect();
    assert_eq!(codes, ["0", "1", "2"], "docs/cli.md's fix exit codes");
    assert!(fix.contains("`--in-place` refused"), "{fix}");
    assert!(fix.contains("at or above `--fail-on`"), "{fix}");
}

/// `kubectl get deploy -o json | jq -c '.items[]'` writes one JSON object per line, and `jq
/// '.items[]'` writes them pretty-printed one after the other: both are streams of documents, read
/// on standard input and in files, each object on its own line; a broken one is an error naming
/// its line, and `kind: List` (`kubectl get -o json` itself) still works.
#[test]
fn a_stream_of_json_documents_is_read_on_stdin_and_in_files() {
    let list: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root().join("tests/fixtures/cli/list.json")).unwrap())
            .unwrap();
    let items = list["items"].as_array().unwrap();
    assert!(items.len() >= 2);
    let lines: String = items.iter().map(|i| format!("{i}\n")).collect();
    let pretty: String = items.iter().map(|i| serde_json::to_string_pretty(i).unwrap() + "\n").collect();
    let concatenated: String = items.iter().map(ToString::to_string).collect();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pretty.json"), &pretty).unwrap();
    std::fs::write(dir.path().join("concatenated.json"), &concatenated).unwrap();
    let from_list = run_in(&root(), &["check", "-o", "json", "tests/fixtures/cli/list.json"], None);
    let report = |o: &Output| -> serde_json::Value {
        assert_ne!(o.status.code(), Some(2), "{}", stderr(o));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let expected = report(&from_list);
    let names = |r: &serde_json::Value| -> Vec<String> {
        r["objects"].as_array().unwrap().iter().map(|o| o["name"].as_str().unwrap().to_string()).collect()
    };
    let summary = |r: &serde_json::Value| {
        (r["summary"]["objects"].clone(), r["summary"]["deny"].clone(), r["summary"]["fix"].clone())
    };
    assert!(!names(&expected).is_empty());
    for (what, out) in [
        ("JSON lines on stdin", run_in(dir.path(), &["check", "-o", "json", "-"], Some(&lines))),
        ("pretty objects in a file", run_in(dir.path(), &["check", "-o", "json", "pretty.json"], None)),
        ("objects on one line", run_in(dir.path(), &["check", "-o", "json", "concatenated.json"], None)),
    ] {
        let r = report(&out);
        assert_eq!(names(&r), names(&expected), "{what}");
        assert_eq!(summary(&r), summary(&expected), "{what}");
    }
    // Each object of JSON lines is placed on its own line.
    let r = report(&run_in(dir.path(), &["check", "-o", "json", "-"], Some(&lines)));
    let objects = r["objects"].as_array().unwrap();
    let first = items.iter().position(|i| i["metadata"]["name"] == objects[0]["name"]).unwrap();
    assert_eq!(objects[0]["line"], first + 1, "{r}");
    // A broken object: an error at its line, the ones before it still checked.
    let broken = format!("{}{{\"apiVersion\": \"v1\", \"kind\": \"Pod\",,}}\n", lines);
    let out = run_in(dir.path(), &["check", "-"], Some(&broken));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let line = items.len() + 1;
    assert!(stderr(&out).contains(&format!("<stdin>:{line}:")), "{}", stderr(&out));
    assert!(stderr(&out).contains("invalid JSON"), "{}", stderr(&out));
    assert!(stderr(&out).contains(&format!("starting on line {line}")), "{}", stderr(&out));
    assert!(stdout(&out).contains(&format!("{} object", names(&expected).len())), "{}", stdout(&out));
}

/// A kustomize overlay's patches (a Deployment with a name and the one field it changes) are part of
/// an object, not one: files a kustomization in their folder (or a folder above) lists under
/// `patches`, `patchesStrategicMerge` or `patchesJson6902` are not checked, with a note naming the
/// kustomization and `kubectl kustomize`. A file of the same shape that no kustomization lists as a
/// patch, and the overlay's own resources, are still checked.
#[test]
fn kustomize_patches_are_noted_not_checked_as_whole_objects() {
    let dir = tempfile::tempdir().unwrap();
    let overlay = dir.path().join("overlays/prod");
    std::fs::create_dir_all(overlay.join("patches")).unwrap();
    let partial = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      \
                   containers:\n      - name: web\n        resources:\n          limits: {memory: 1Gi}\n";
    let resource = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: extra\nspec:\n  containers:\n  - name: extra\n    \
                    image: nginx:1.27\n";
    std::fs::write(
        overlay.join("kustomization.yaml"),
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [../../base, extra.yaml]\n\
         patches:\n- path: patches/memory.yaml\n- path: json.yaml\n  target: {kind: Deployment, name: web}\n\
         patchesStrategicMerge:\n- ./smp.yaml\n",
    )
    .unwrap();
    std::fs::write(overlay.join("patches/memory.yaml"), partial).unwrap();
    std::fs::write(overlay.join("smp.yaml"), partial).unwrap();
    std::fs::write(overlay.join("json.yaml"), "- op: replace\n  path: /spec/replicas\n  value: 3\n").unwrap();
    std::fs::write(overlay.join("extra.yaml"), resource).unwrap();
    // The same partial Deployment, listed nowhere: checked as what it says it is.
    std::fs::write(dir.path().join("unlisted.yaml"), partial).unwrap();

    let out = run_in(dir.path(), &["check", "-o", "json", "."], None);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let files: Vec<&str> =
        report["objects"].as_array().unwrap().iter().map(|o| o["file"].as_str().unwrap()).collect();
    assert_eq!(files, ["./overlays/prod/extra.yaml", "./unlisted.yaml"], "{report}");
    let skipped: Vec<&str> =
        report["skippedFiles"].as_array().unwrap().iter().map(|s| s["file"].as_str().unwrap()).collect();
    assert_eq!(
        skipped,
        ["./overlays/prod/json.yaml", "./overlays/prod/patches/memory.yaml", "./overlays/prod/smp.yaml"]
    );
    let message = report["skippedFiles"][1]["message"].as_str().unwrap();
    assert!(message.contains("./overlays/prod/kustomization.yaml lists it"), "{message}");
    assert!(message.contains("kubectl kustomize ./overlays/prod | probegate check -"), "{message}");
    // In text, one note per kustomization, however many patches it lists.
    let text = stdout(&run_in(dir.path(), &["check", "."], None));
    let notes: Vec<&str> = text.lines().filter(|l| l.starts_with("note: ")).collect();
    assert_eq!(notes.len(), 1, "{text}");
    assert!(notes[0].starts_with("note: ./overlays/prod/kustomization.yaml: 3 kustomize patches"), "{text}");
    assert!(notes[0].contains("not checked: json.yaml, patches/memory.yaml, smp.yaml;"), "{text}");
    assert!(notes[0].ends_with("`kubectl kustomize ./overlays/prod | probegate check -`"), "{text}");

    // The text report notes each one; a patch named on the command line is skipped the same way.
    let out = run_in(&overlay, &["check", "smp.yaml", "extra.yaml"], None);
    let text = stdout(&out);
    assert!(text.contains("note: smp.yaml: a kustomize patch (kustomization.yaml lists it)"), "{text}");
    assert!(text.contains("`kubectl kustomize . | probegate check -`"), "{text}");
    assert!(text.contains("1 object in 1 file"), "{text}");
    assert!(!text.contains("Deployment"), "{text}");
    // fix and explain leave them alone and say so.
    for command in ["fix", "explain"] {
        let out = run_in(&overlay, &[command, "smp.yaml"], None);
        assert_eq!(out.status.code(), Some(0), "{command}: {}", stderr(&out));
        assert!(stderr(&out).contains("note: smp.yaml: a kustomize patch"), "{command}: {}", stderr(&out));
        assert!(!stdout(&out).contains("resources"), "{command}: {}", stdout(&out));
    }
}

/// `probegate check . | head`: a reader that stops early wanted no more output. The run ends with
/// its own exit code (check and fix: 1 for the corpus's denial, which fix cannot change; explain:
/// 0) and no error about the pipe.
#[test]
fn a_reader_that_stops_early_is_no_error() {
    for (args, code) in [
        (&["check", "tests/fixtures/corpus"][..], 1),
        (&["check", "-o", "json", "tests/fixtures/corpus"][..], 1),
        (&["fix", "tests/fixtures/corpus"][..], 1),
        (&["fix", "--diff", "tests/fixtures/corpus"][..], 1),
        (&["explain", "tests/fixtures/corpus"][..], 0),
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_probegate"))
            .args(args)
            .current_dir(root())
            .env_remove("PROBEGATE_CONFIG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes away before the corpus is read and reported.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = stderr(&out);
        assert!(!err.contains("Broken pipe") && !err.contains("cannot write"), "{args:?}: {err}");
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    }
}

/// `helm template . | probegate check -` where helm failed gives an empty standard input: the run
/// says nothing was checked there instead of passing in silence.
#[test]
fn an_empty_standard_input_is_noted() {
    for text in ["", "\n# only a comment\n"] {
        let out = run_in(&root(), &["check", "-"], Some(text));
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("note: standard input is empty: nothing was checked there"),
            "{:?}",
            stderr(&out)
        );
    }
    let out =
        run_in(&root(), &["check", "-"], Some("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"));
    assert!(!stderr(&out).contains("is empty"), "{}", stderr(&out));
}

/// A liveness finding says what the outage does to the object's own kind of Pods: a Deployment's
/// replicas, a DaemonSet's Pod on every node, the running Pods of a Job or a CronJob's Jobs, a bare
/// Pod's container.
#[test]
fn a_liveness_finding_names_the_pods_of_its_kind() {
    let text = r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  selector: {matchLabels: {app: d}}
  template:
    metadata: {labels: {app: d}}
    spec:
      containers:
        - {name: app, image: x, livenessProbe: {exec: {command: [pg_isready, -h, orders-db]}}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ds}
spec:
  selector: {matchLabels: {app: ds}}
  template:
    metadata: {labels: {app: ds}}
    spec:
      containers:
        - {name: app, image: x, livenessProbe: {exec: {command: [pg_isready, -h, orders-db]}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - {name: app, image: x, livenessProbe: {exec: {command: [pg_isready, -h, orders-db]}}}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: cj}
spec:
  schedule: "@daily"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
            - {name: app, image: x, livenessProbe: {exec: {command: [pg_isready, -h, orders-db]}}}
---
apiVersion: v1
kind: Pod
metadata: {name: x}
spec:
  containers:
    - {name: app, image: x, livenessProbe: {exec: {command: [pg_isready, -h, orders-db]}}}
"#;
    let o = check_text("kinds.yaml", text);
    let out = stdout(&o);
    for (object, words) in [
        ("Deployment default/d ", "its outage would restart every replica;"),
        ("DaemonSet default/ds ", "its outage would restart the container in every node's Pod;"),
        ("Job default/j ", "its outage would kill the container in every running Pod of the Job;"),
        ("CronJob default/cj ", "its outage would kill the container in every running Pod of its Jobs;"),
        ("Pod default/x ", "its outage would restart this Pod's container;"),
    ] {
        assert!(
            out.lines()
                .any(|l| l.contains(object) && l.contains(words) && l.contains("(liveness-dependency)")),
            "{object}: no {words:?} in\n{out}"
        );
    }
}

/// A cmd command line the analysis cannot read is called a command line, not a shell script.
#[test]
fn a_cmd_line_not_analysed_is_called_a_command_line() {
    let text = format!(
        "{POD_HEAD}    livenessProbe:\n      exec: {{command: [cmd, /c, 'curl -sf \"http://localhost:8080/ & ( if']}}\n"
    );
    let o = check_text("win.yaml", &text);
    let err = format!("{}{}", stdout(&o), stderr(&o));
    assert!(
        err.contains("not analysed (its cmd command line has a construct probegate does not read"),
        "{err}"
    );
    assert!(!err.contains("shell script"), "{err}");
    // A shell script with a syntax error is still a shell script.
    let text = format!("{POD_HEAD}    livenessProbe:\n      exec: {{command: [sh, -c, 'if then fi (']}}\n");
    let o = check_text("sh.yaml", &text);
    let err = format!("{}{}", stdout(&o), stderr(&o));
    assert!(err.contains("not analysed (its shell script has a syntax error at line 1"), "{err}");
}

/// `explain` shows a probe's script as written: its `;`, quoting and the variables it sets stay
/// (the s6 display masked every variable, `h=*** pg_isready -h $h`, and dropped the `;`); only
/// secrets are redacted, the variable that carries one included.
#[test]
fn explain_shows_a_script_as_written_with_only_its_secrets_redacted() {
    let pod = |script: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: shop}}\nspec:\n  containers:\n  - name: app\n    \
             image: a\n    livenessProbe:\n      exec:\n        command: [sh, -c, {}]\n",
            serde_json::to_string(script).unwrap()
        )
    };
    for (script, shown) in [
        ("h=db; pg_isready -h $h", "exec `sh -c 'h=db; pg_isready -h $h'`"),
        // Line breaks are shown as ⏎, so that a probe stays on its line.
        ("set -e\n  h=db\n  pg_isready -h $h\n", "exec `sh -c 'set -e ⏎ h=db ⏎ pg_isready -h $h'`"),
        ("H=localhost;redis-cli -h \"$H\" ping", "exec `sh -c 'H=localhost;redis-cli -h \"$H\" ping'`"),
        ("P=hunter22; redis-cli -a \"$P\" ping", "exec `sh -c 'P=***; redis-cli -a *** ping'`"),
        ("A=hunter22; B=$A; redis-cli -a $B ping", "exec `sh -c 'A=***; B=***; redis-cli -a *** ping'`"),
        (
            "mysqladmin ping -uroot -phunter22 -h 127.0.0.1",
            "exec `sh -c 'mysqladmin ping -uroot -p*** -h 127.0.0.1'`",
        ),
    ] {
        let out = explain_text(&pod(script), &[]);
        assert!(out.contains(shown), "{script}: {out}");
        assert!(!out.contains("hunter22"), "{script}: {out}");
        let json = explain_text(&pod(script), &["-o", "json"]);
        assert!(!json.contains("hunter22"), "{script}: {json}");
    }
    // Every spelling of a credential the engine's redaction knows (the redaction property tests'
    // table), through explain's text and JSON output.
    let secret = "Zq9SeCrEtxK7";
    let docs: Vec<String> =
        probegate::engine::exec::credential_spellings(secret).iter().map(|s| pod(s)).collect();
    let all = docs.join("---\n");
    for flags in [&[][..], &["-o", "json"][..]] {
        let out = explain_text(&all, flags);
        assert!(out.contains("db.svc"), "the commands are shown: {out}");
        if let Some(at) = out.find(secret) {
            let from = out.floor_char_boundary(at.saturating_sub(200));
            panic!("explain {flags:?} shows the secret: …{}", &out[from..at + secret.len()]);
        }
    }
    // A literal fed to a program's standard input needs no credential flag (s13 verdict pass:
    // `echo TOKEN | vault login -` was shown whole): such a script shows its programs only, while
    // a pipe out of the check (`| tee`) is still shown as written.
    for script in [
        format!("echo {secret} | vault login -address=https://vault:8200 -"),
        format!("printf '%s' {secret} | redis-cli -h cache -x AUTH"),
        format!("vault login - <<EOF\n{secret}\nEOF"),
    ] {
        for flags in [&[][..], &["-o", "json"][..]] {
            let out = explain_text(&pod(&script), flags);
            assert!(!out.contains(secret), "{script}: {out}");
            assert!(out.contains("a script, shown by its programs only"), "{script}: {out}");
        }
    }
    let out = explain_text(&pod("pg_isready -h db | tee -a /tmp/l"), &[]);
    assert!(out.contains("exec `sh -c 'pg_isready -h db | tee -a /tmp/l'`"), "{out}");
}

/// `policy explain` takes `-n` like check, fix and explain, defaults the namespace and policy as
/// they do (the configuration file, else `default`), and refuses a namespace no Namespace can have.
#[test]
fn policy_explain_takes_the_namespace_flags_of_the_other_commands() {
    let dir = tempfile::tempdir().unwrap();
    let policy = root().join("policies/audit-rollout.yaml");
    let policy = policy.to_str().unwrap();
    let explain = |args: &[&str]| {
        let mut all = vec!["policy", "explain"];
        all.extend_from_slice(args);
        run_in(dir.path(), &all, None)
    };
    let long =
        explain(&["--policy", policy, "--namespace", "billing-eu", "--labels", "probegate.dev/tier=legacy"]);
    let short = explain(&["--policy", policy, "-n", "billing-eu", "--labels", "probegate.dev/tier=legacy"]);
    assert_eq!(long.status.code(), Some(0), "{}", stderr(&long));
    assert_eq!(stdout(&long), stdout(&short));
    assert!(stdout(&short).contains("namespace: billing-eu"), "{}", stdout(&short));
    // No namespace: `default`, as check, fix and explain assume.
    let o = explain(&["--policy", policy]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("namespace: default"), "{}", stdout(&o));
    // The configuration file gives both, and a flag wins over it.
    std::fs::write(dir.path().join(".probegate.yaml"), format!("policy: {policy}\nnamespace: billing-eu\n"))
        .unwrap();
    let o = explain(&[]);
    assert!(
        stdout(&o).contains("namespace: billing-eu") && stdout(&o).contains("audit-rollout"),
        "{}",
        stdout(&o)
    );
    let o = explain(&["-n", "shop"]);
    assert!(stdout(&o).contains("namespace: shop"), "{}", stdout(&o));
    std::fs::remove_file(dir.path().join(".probegate.yaml")).unwrap();
    // Bad values: a clear message, exit 2, for every command that takes the flag.
    for (args, expect) in [
        (
            &["policy", "explain", "-n", "Shop_1"][..],
            "'Shop_1' for '--namespace <NAMESPACE>': not a valid namespace name: only lowercase letters, digits and '-'",
        ),
        (&["policy", "explain", "--namespace", ""][..], "it is empty"),
        (&["policy", "explain", "--namespace=-shop-"][..], "start and end with a letter or digit"),
        (&["check", "-n", "Shop", "-"][..], "not a valid namespace name"),
        (&["explain", "--namespace", "a.b", "-"][..], "not a valid namespace name"),
        (&["fix", "-n", &"a".repeat(64), "-"][..], "longer than 63 characters"),
        (&["policy", "explain", "--labels", "tier"][..], "--labels: label \"tier\" is not KEY=VALUE"),
        (&["policy", "explain", "--output", "json"][..], "unexpected argument '--output'"),
    ] {
        let o = run_in(dir.path(), args, Some(""));
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(expect), "{args:?}: {}", stderr(&o));
    }
    // A configuration file with a bad namespace is an error naming the file.
    std::fs::write(dir.path().join(".probegate.yaml"), "namespace: Shop\n").unwrap();
    let o = explain(&[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(".probegate.yaml: namespace \"Shop\": not a valid namespace name"),
        "{}",
        stderr(&o)
    );
}

/// A liveness probe that reaches a dependency but whose exit status does not follow it (`| tee`,
/// `& wait`, a later `f 0`): `check` warns that the dependency's outage cannot fail the probe but a
/// hang past timeoutSeconds can, and `explain` says the same, naming the client and the
/// timeoutSeconds, from the engine's finding (s14, fresh-user pass: it said "no probe checks a
/// dependency, so its outage restarts nothing"). A readiness probe reaching a host known only at
/// run time is `check`'s warning in explain too, not "takes no pod out of the endpoints".
#[test]
fn explain_says_what_check_says_of_a_dependency_whose_status_does_not_count() {
    let deployment = |probe: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: api}}\nspec:\n  template:\n    spec:\n      \
             containers:\n      - name: api\n        image: example/api:1\n        ports: [{{containerPort: 8080}}]\n{probe}"
        )
    };
    for (script, client) in [
        ("pg_isready -h db | tee -a /tmp/l", "pg_isready"),
        ("redis-cli -h cache ping & wait", "redis-cli"),
        ("f() { exit $1; }; pg_isready -h db; f 0", "pg_isready"),
    ] {
        let text = deployment(&format!(
            "        readinessProbe: {{httpGet: {{path: /ready, port: 8080}}}}\n        livenessProbe:\n          \
             timeoutSeconds: 4\n          exec: {{command: [sh, -c, '{script}']}}\n"
        ));
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("w.yaml"), &text).unwrap();
        let check = stdout(&run_in(dir.path(), &["check", "w.yaml"], None));
        assert!(
            check.contains("cannot fail the probe: ")
                && check.contains("only a hang past timeoutSeconds can"),
            "{check}"
        );
        let out = explain_text(&text, &[]);
        assert!(!out.contains("no probe checks a dependency"), "{script}: {out}");
        assert!(!out.contains("outage restarts nothing and takes no pod"), "{script}: {out}");
        assert!(
            out.contains("but its exit status cannot fail the probe (liveness-dependency)"),
            "{script}: {out}"
        );
        assert!(
            out.contains("makes it hang past timeoutSeconds 4 fails the probe and restarts the container")
                && out.contains(&format!("an outage that makes {client} fail restarts nothing")),
            "{script}: {out}"
        );
        let json = explain_text(&text, &["-o", "json"]);
        assert!(
            json.contains("\"livenessHangOnly\"") && json.contains(&format!("\"program\": \"{client}\"")),
            "{json}"
        );
    }
    let text = deployment(
        "        readinessProbe:\n          exec: {command: [sh, -c, 'redis-cli -h $TARGET ping']}\n",
    );
    let out = explain_text(&text, &[]);
    assert!(out.contains("readiness-shared-dependency warns: readinessProbe reaches $TARGET"), "{out}");
    assert!(out.contains("known only at run time"), "{out}");
    assert!(!out.contains("takes no pod out of the endpoints"), "{out}");
}

/// A Pod whose liveness probe runs `LIVENESS` (an exec command, YAML flow) beside an HTTP readiness
/// probe, with a port.
fn liveness_pod(liveness: &str) -> String {
    format!(
        "{POD_HEAD}    ports: [{{containerPort: 8080}}]\n    readinessProbe: {{httpGet: {{path: /ready, port: 8080}}}}\n    livenessProbe: {liveness}\n"
    )
}

/// A liveness check `liveness-dependency` warns about (its exit status cannot fail the probe) gets
/// no startup probe, and `check`, `fix` and `explain` say why: a copy would wait on what it
/// reaches (fresh-user pass: nothing said why). A denied one gets no such note (the denial asks
/// for the change first); a check of this pod alone still gets its startup probe.
#[test]
fn a_warned_liveness_check_gets_no_startup_probe_and_the_reason() {
    let tee = liveness_pod(r#"{exec: {command: [sh, -c, "pg_isready -h db | tee /tmp/x"]}}"#);
    let o = check_text("p.yaml", &tee);
    let out = stdout(&o);
    let note = out.lines().find(|l| l.ends_with("(startup-probe)")).unwrap_or_else(|| panic!("{out}"));
    assert!(
        note.contains("  warn  ")
            && note.contains(
                "not added: a copy of the liveness check would wait on what liveness-dependency flags; add one \
                 that checks only this container"
            ),
        "{note}"
    );
    // `fix` changes the rest and says what it left, and why.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.yaml"), &tee).unwrap();
    let o = run_in(dir.path(), &["fix", "--diff", "p.yaml"], None);
    assert!(!stdout(&o).contains("startupProbe"), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains("probegate: note: p.yaml:7: Pod default/x: not changed: container app: no startupProbe")
            && err.contains("what liveness-dependency flags; add one that checks only this container"),
        "{err}"
    );
    // Denied: the denial says what to change; no startup-probe note beside it.
    let denied = liveness_pod("{exec: {command: [pg_isready, -h, db]}}");
    let out = stdout(&check_text("p.yaml", &denied));
    assert!(out.contains("(liveness-dependency)") && !out.contains("(startup-probe)"), "{out}");
    // Not flagged: the startup probe is added as before.
    let local = liveness_pod("{exec: {command: [pg_isready, -h, localhost]}}");
    let out = stdout(&check_text("p.yaml", &local));
    assert!(out.contains("added one with the liveness handler"), "{out}");
}

/// `explain` lists every finding `check` gives for a container, at the same level and in the same
/// words (fresh-user pass: the `curl -m 120` Pod's probe-client-deadline warning was missing).
#[test]
fn explain_lists_every_finding_check_gives() {
    let pod = liveness_pod(
        r#"{timeoutSeconds: 1, exec: {command: [curl, -m, "120", "http://localhost:8080/healthz"]}}"#,
    );
    let check = stdout(&check_text("w.yaml", &pod));
    let explain = explain_text(&pod, &[]);
    let listed: Vec<&str> = check.lines().filter(|l| l.contains("container app: ")).collect();
    assert!(listed.len() >= 4 && check.contains("(probe-client-deadline)"), "{check}");
    for line in listed {
        let (head, message) = line.split_once("container app: ").unwrap();
        let level = head.split_whitespace().nth(1).unwrap();
        assert!(
            explain.lines().any(|l| l.trim_start().trim_start_matches("findings:").trim_start()
                == format!("{level:<4}  {message}")),
            "{level} {message} missing from\n{explain}"
        );
    }
    // And as JSON.
    let json: serde_json::Value = serde_json::from_str(&explain_text(&pod, &["-o", "json"])).unwrap();
    let findings = &json[0]["containers"][0]["findings"];
    assert!(
        findings
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule"] == "probe-client-deadline" && f["level"] == "warn"),
        "{findings}"
    );
}

/// A readiness-only Pod restarts nothing in any run, so the warm-up changes nothing: no warm-up
/// note (fresh-user pass: it said "a restart costs nothing" of a Pod nothing restarts).
#[test]
fn a_readiness_only_pod_gets_no_warm_up_note() {
    let pod = format!(
        "{POD_HEAD}    ports: [{{containerPort: 8080}}]\n    readinessProbe: {{exec: {{command: [pg_isready, -h, db]}}}}\n"
    );
    let out = explain_text(&pod, &[]);
    assert!(out.contains("dependency checked by readiness only: 0 restarts"), "{out}");
    assert!(!out.contains("note:") && !out.contains("--warmup SECONDS"), "{out}");
    // Simulated as checked by liveness, it restarts: the note is there, and short.
    let out = explain_text(&pod, &["--dependency-check", "liveness"]);
    let note = out.lines().find(|l| l.contains("note:")).unwrap_or_else(|| panic!("{out}"));
    assert!(note.contains("0 s default") && note.contains("--warmup SECONDS") && note.len() < 160, "{note}");
}

/// Fresh-user pass (s16): `fix` on a probe written as a YAML flow mapping added its member
/// JSON-style (`periodSeconds: 10, "timeoutSeconds": 3}`). The key now takes the mapping's style:
/// plain in plain YAML, quoted where the keys are quoted (JSON), and each fixed file parses back to
/// the object as written plus the fix.
#[test]
fn fix_adds_a_flow_member_in_the_mappings_style() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: shop}\nspec:\n  containers:\n  - name: app\n    image: example/app:1\n    livenessProbe: {exec: {command: [test, -f, /tmp/ok]}, periodSeconds: 10}\n    startupProbe: {exec: {command: [test, -f, /tmp/ok]}, periodSeconds: 5, failureThreshold: 30, timeoutSeconds: 3}\n";
    let json = r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop"}, "spec": {"containers": [{"name": "app", "image": "example/app:1", "livenessProbe": {"exec": {"command": ["test", "-f", "/tmp/ok"]}, "periodSeconds": 10}, "startupProbe": {"exec": {"command": ["test", "-f", "/tmp/ok"]}, "periodSeconds": 5, "failureThreshold": 30, "timeoutSeconds": 3}}]}}
"#;
    for (name, text, member) in [
        ("pod.yaml", yaml, "periodSeconds: 10, timeoutSeconds: 3}"),
        ("pod.json", json, "\"periodSeconds\": 10, \"timeoutSeconds\": 3}"),
    ] {
        std::fs::write(dir.path().join(name), text).unwrap();
        let diff = run_in(dir.path(), &["fix", "--diff", name], None);
        assert_eq!(diff.status.code(), Some(0), "{}", stderr(&diff));
        assert!(stdout(&diff).contains(member), "{name}: {}", stdout(&diff));
        let o = run_in(dir.path(), &["fix", name], None);
        let fixed = stdout(&o);
        assert!(fixed.contains(member), "{name}: {fixed}");
        // The object as written plus the fix, and nothing else changed.
        let mut expected: serde_json::Value = serde_saphyr::from_str(text).unwrap();
        expected["spec"]["containers"][0]["livenessProbe"]["timeoutSeconds"] = 3.into();
        let got: serde_json::Value = serde_saphyr::from_str(&fixed).unwrap();
        assert_eq!(got, expected, "{name}: {fixed}");
        assert_eq!(fixed.lines().count(), text.lines().count(), "{name}: {fixed}");
    }
}

/// Fresh-user pass (s16): `explain --svg FILE` wrote no file and exited 0 when no workload had a
/// chart to draw, and `-o json --svg FILE` never drew one at all. Now no chart at all is exit 2
/// with the reason, and `-o json` draws the charts `-o text` draws.
#[test]
fn explain_svg_writes_its_chart_or_fails() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(root().join("tests/fixtures/cli/app.yaml"), dir.path().join("app.yaml")).unwrap();
    let worker = AGGREGATE.replace("        ports: [{containerPort: 8080}]\n", "");
    std::fs::write(dir.path().join("worker.yaml"), worker).unwrap();
    for format in ["text", "json"] {
        let svg = dir.path().join(format!("{format}.svg"));
        let o =
            run_in(dir.path(), &["explain", "-o", format, "--svg", svg.to_str().unwrap(), "app.yaml"], None);
        assert_eq!(o.status.code(), Some(0), "{format}: {}", stderr(&o));
        assert!(std::fs::read_to_string(&svg).unwrap().contains("<polyline"), "{format}");
        assert!(stderr(&o).contains("wrote"), "{}", stderr(&o));
        if format == "json" {
            let _: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        }
        let none = dir.path().join(format!("none-{format}.svg"));
        let o = run_in(
            dir.path(),
            &["explain", "-o", format, "--svg", none.to_str().unwrap(), "worker.yaml"],
            None,
        );
        assert_eq!(o.status.code(), Some(2), "{format}: {}", stderr(&o));
        assert!(!none.exists());
        assert!(stderr(&o).contains("not written: no workload has a chart to draw"), "{}", stderr(&o));
        assert!(!stdout(&o).is_empty(), "{format}: the explanation itself is still written");
    }
}

/// Fresh-user pass (s16): a grpc_health_probe denial showed the resolver scheme as part of the
/// host (`reaches dns:///orders:50051`). It shows the endpoint reached (`orders:50051`), with the
/// DNS server a `dns://SERVER/` target asks; other targets as written.
#[test]
fn a_grpc_target_shows_the_host_it_reaches() {
    let dir = tempfile::tempdir().unwrap();
    let pod = |name: &str, addr: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: shop}}\nspec:\n  containers:\n  - name: app\n    image: example/app:1\n    livenessProbe: {{exec: {{command: [grpc_health_probe, \"-addr={addr}\"]}}, timeoutSeconds: 5}}\n"
        )
    };
    let text = [
        pod("dns", "dns:///orders:50051"),
        pod("server", "dns://10.96.0.10:53/orders.shop.svc:50051"),
        pod("pass", "passthrough:///orders:50051"),
        pod("list", "ipv4:10.0.0.1:50051,10.0.0.2:50051"),
    ]
    .join("---\n");
    std::fs::write(dir.path().join("grpc.yaml"), text).unwrap();
    let out = stdout(&run_in(dir.path(), &["check", "grpc.yaml"], None));
    for (object, reaches) in [
        ("Pod shop/dns ", "reaches orders:50051 (network service, via grpc_health_probe)"),
        ("Pod shop/server ", "reaches orders.shop.svc:50051 (DNS server 10.96.0.10:53) (network service"),
        ("Pod shop/pass ", "reaches orders:50051 (network service"),
        ("Pod shop/list ", "reaches ipv4:10.0.0.1:50051,10.0.0.2:50051 (network service"),
    ] {
        assert!(
            out.lines().any(|l| l.contains(object) && l.contains(reaches) && l.contains(" deny ")),
            "{object}{reaches}:\n{out}"
        );
    }
}

/// Fresh-user pass (s16): `sh -c 'pg_isready -h $$(DB_HOST)'` was said to reach a host "known only
/// at run time". The kubelet makes `$$(DB_HOST)` the text `$(DB_HOST)`, and bash and dash then run a
/// command named `DB_HOST` ("DB_HOST: not found"), so pg_isready gets no host at all. The liveness
/// warning and the readiness one say what the shell runs and how to write the variable; still
/// warnings (the image may have such a command).
#[test]
fn an_escaped_reference_says_what_the_shell_runs() {
    let dir = tempfile::tempdir().unwrap();
    let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: shop}\nspec:\n  containers:\n  - name: app\n    image: example/app:1\n    ports: [{containerPort: 8080}]\n    env: [{name: DB_HOST, value: db.shop.svc}]\n    livenessProbe: {exec: {command: [sh, -c, 'pg_isready -h $$(DB_HOST)']}, timeoutSeconds: 5}\n    readinessProbe: {exec: {command: [sh, -c, 'pg_isready -h $$(DB_HOST)']}, timeoutSeconds: 5}\n";
    std::fs::write(dir.path().join("pod.yaml"), text).unwrap();
    let o = run_in(dir.path(), &["check", "--fail-on", "deny", "pod.yaml"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(!out.contains("known only at run time"), "{out}");
    for rule in ["(liveness-dependency)", "(readiness-shared-dependency)"] {
        let line = out.lines().find(|l| l.ends_with(rule)).unwrap_or_else(|| panic!("no {rule}: {out}"));
        assert!(line.contains(" warn "), "{line}");
        assert!(line.contains("runs a command named `DB_HOST` for "), "{line}");
        assert!(line.contains("for the variable write `$DB_HOST`"), "{line}");
    }
}
