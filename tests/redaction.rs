//! Issue 9, redaction: a secret given to a probe's client through any spelling never appears in
//! what probegate shows: the server's denial messages and warnings, its log lines for the review,
//! and `probegate check` output (text and JSON). The spellings come from the engine's table of
//! credential-bearing flags (`exec::credential_spellings`), so a client added there is covered here.

mod common;

use std::time::Duration;

use proptest::strategy::{Strategy, ValueTree};
use serde_json::{Value, json};

/// A Pod whose liveness probe runs `script` and whose readiness probe runs it too (a readiness
/// dependency is a warning: both the denial and the warning show the command's target).
fn pod(i: usize, script: &str) -> Value {
    let probe = json!({"exec": {"command": ["sh", "-c", script]}});
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": format!("p{i}"), "namespace": "shop"},
        "spec": {"containers": [{"name": "app", "image": "registry.example.com/app:1", "ports": [{"containerPort": 8080}],
            "livenessProbe": probe, "readinessProbe": probe}]}})
}

/// Pods whose liveness, readiness and startup probes name `secret` as user info of an httpGet or
/// tcpSocket host (`u:SECRET@db.svc`, `SECRET@db.svc`): the liveness denial and both warnings
/// show the host.
fn host_pods(first: usize, secret: &str) -> Vec<Value> {
    let http = |host: String| json!({"httpGet": {"host": host, "path": "/healthz", "port": 8080}});
    let tcp = |host: String| json!({"tcpSocket": {"host": host, "port": 8080}});
    [format!("u:{secret}@db.svc"), format!("{secret}@db.svc")]
        .into_iter()
        .enumerate()
        .map(|(i, host)| {
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": format!("p{}", first + i), "namespace": "shop"},
                "spec": {"containers": [{"name": "app", "image": "registry.example.com/app:1", "ports": [{"containerPort": 8080}],
                    "livenessProbe": http(host.clone()), "readinessProbe": tcp(host.clone()), "startupProbe": http(host)}]}})
        })
        .collect()
}

/// `probegate check` on `file` with `extra` arguments: stdout and stderr together.
fn check(file: &std::path::Path, extra: &[&str]) -> String {
    run("check", file, extra)
}

/// The `response` of the server at `base` to a CREATE review of `obj` (uid `uid-{i}`) at
/// `/{endpoint}`.
async fn respond(client: &reqwest::Client, base: &str, endpoint: &str, i: usize, obj: &Value) -> Value {
    let review = common::review("CREATE", obj, None, &format!("uid-{i}"));
    let r = client.post(format!("{base}/{endpoint}")).json(&review).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let mut answer: Value = r.json().await.unwrap();
    answer["response"].take()
}

/// `probegate <verb>` on `file` with `extra` arguments: stdout and stderr together.
fn run(verb: &str, file: &std::path::Path, extra: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_probegate"))
        .arg(verb)
        .args(extra)
        .arg(file)
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c != 2), "{verb} failed to run: {out:?}");
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// A server logging at `level` (its CA in a temp folder, returned so it lives as long as the
/// test), an HTTPS client trusting it, and its base URL.
fn serve_logging(level: &str) -> (tempfile::TempDir, common::Served, reqwest::Client, String) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    let args: Vec<String> = ["--addr", "127.0.0.1:0", "--write-ca", &ca.display().to_string()]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let served = common::Served::start(&args, &[("RUST_LOG", level)], Duration::from_secs(30));
    let client = common::https_client(&[&std::fs::read_to_string(&ca).unwrap()], false);
    let base = format!("https://localhost:{}", served.addr.port());
    (dir, served, client, base)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_in_any_spelling_never_reaches_a_message_warning_log_line_or_check_output() {
    // Every level the server logs at, the request spans included.
    let (dir, served, client, base) = serve_logging("trace");

    // Random secrets from proptest's runner (three: each runs every spelling through the server and
    // two `check` runs).
    let mut runner = proptest::test_runner::TestRunner::default();
    let secrets: Vec<String> =
        (0..3).map(|_| "S3c[A-Za-z0-9]{8,12}".new_tree(&mut runner).unwrap().current()).collect();
    for secret in secrets {
        let scripts = probegate::engine::exec::credential_spellings(&secret);
        let mut pods: Vec<Value> = scripts.iter().enumerate().map(|(i, s)| pod(i, s)).collect();
        pods.extend(host_pods(pods.len(), &secret));
        let log_before = served.log().len();
        let mut answers = String::new();
        for (i, obj) in pods.iter().enumerate() {
            let response = &respond(&client, &base, "validate", i, obj).await;
            // Every spelling's command is shown (denied, or in a warning; a script that feeds standard
            // input by its programs only): the property is not vacuous.
            let shown = response.to_string();
            assert!(
                shown.contains("db.svc")
                    || shown.contains("***")
                    || shown.contains("shown by its programs only"),
                "{}: {response}",
                scripts.get(i).map_or("a probe host", String::as_str)
            );
            answers.push_str(&response.to_string());
        }
        // The log lines of these reviews (the decision lines are written before the answer).
        common::wait_until("the decision log lines", Duration::from_secs(10), || {
            served.log()[log_before..].matches("admission decision").count() >= pods.len()
        });
        let log = served.log()[log_before..].to_string();
        let file = dir.path().join("pods.yaml");
        let docs: Vec<String> = pods.iter().map(|p| serde_json::to_string(p).unwrap()).collect();
        std::fs::write(&file, docs.join("\n---\n")).unwrap();
        let text = check(&file, &[]);
        let json = check(&file, &["-o", "json"]);
        let explain = run("explain", &file, &[]);
        assert!(text.contains("db.svc") && json.contains("db.svc"), "check shows the dependency:\n{text}");
        assert!(explain.contains("of host u:***@db.svc"), "explain shows the host:\n{explain}");
        let outputs = [
            ("answers", &answers),
            ("log", &log),
            ("check", &text),
            ("check -o json", &json),
            ("explain", &explain),
        ];
        assert_not_shown(&secret, &outputs);
    }
}

/// A request's uid is the caller's text: at debug level (the line for an admitted review) and at
/// info level (the decision line) its control characters are escaped, so a crafted uid cannot
/// start a forged log line (break-it pass: the debug line wrote it raw).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crafted_uid_cannot_forge_a_log_line() {
    let (_dir, served, client, base) = serve_logging("debug");
    let forged = "FORGED admission decision denied=true";
    let allowed = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "ok", "namespace": "shop"},
        "spec": {"containers": [{"name": "app", "image": "x"}]}});
    let denied = pod(0, "pg_isready -h orders-db.shop.svc");
    for (i, obj) in [allowed, denied].iter().enumerate() {
        let uid = format!("u{i}\n{forged}\r\u{202e}");
        let review = common::review("CREATE", obj, None, &uid);
        let r = client.post(format!("{base}/validate")).json(&review).send().await.unwrap();
        assert_eq!(r.status(), 200);
    }
    common::wait_until("both reviews logged", Duration::from_secs(10), || {
        served.log().contains("\"admitted\"") || served.log().matches("u1").count() > 0
    });
    common::wait_until("the decision line", Duration::from_secs(10), || {
        served.log().contains("admission decision")
    });
    let log = served.log();
    assert!(log.contains("admitted") && log.contains("u0"), "the debug line is written: {log}");
    for line in log.lines() {
        assert!(!line.trim_start().starts_with("FORGED"), "a forged line: {line:?}\n{log}");
        assert!(!line.contains('\r') && !line.contains('\u{202e}'), "a raw control character: {line:?}");
    }
}

/// The commands of [`every_rule_pods`]: five spellings of `secret` (`-pSECRET`, `--password=SECRET`,
/// `PGPASSWORD=SECRET`, `https://u:SECRET@h/`, `?token=SECRET`), each reaching `host`, and each in
/// the shapes a probe's command takes: a `sh -c` script, one string, argv words, and scripts the
/// shell parser rejects (an unbalanced `(`, an unclosed `"`).
fn command_shapes(secret: &str, host: &str) -> Vec<Value> {
    let commands = [
        format!("mysqladmin -h {host} -p{secret} ping"),
        format!("mysqladmin -h {host} --password={secret} ping"),
        format!("PGPASSWORD={secret} pg_isready -h {host}"),
        format!("curl -m 10 -fsS https://u:{secret}@{host}:8080/healthz"),
        format!("curl -m 10 -fsS http://{host}:8080/healthz?token={secret}"),
    ];
    let mut out = Vec::new();
    for c in commands {
        out.push(json!(["sh", "-c", c]));
        out.push(json!([c]));
        out.push(json!(c.split(' ').collect::<Vec<_>>()));
        out.push(json!(["sh", "-c", format!("({c}")]));
        out.push(json!(["sh", "-c", format!("\"{c}")]));
    }
    out
}

/// Pods on which every rule that shows a command, URL, path or host shows one with `secret` in it:
/// liveness-dependency (a remote check, and notes for scripts not analysed), liveness-matches-
/// readiness (the same exec command or httpGet path in both), exec-probe-replaceable and
/// probe-client-deadline (a local `curl -m 10`), readiness-shared-dependency and
/// startup-remote-dependency (a remote check), liveness-dependency-path (an aggregate path), and
/// probe-paths-swapped.
fn every_rule_pods(secret: &str) -> Vec<Value> {
    let exec = |command: &Value| json!({"exec": {"command": command}});
    let http = |path: String| json!({"httpGet": {"path": path, "port": 8080}});
    let pod = |i: usize, container: Value| {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": format!("r{i}"), "namespace": "shop"},
            "spec": {"containers": [container]}})
    };
    let container = |probes: Value| {
        let mut c =
            json!({"name": "app", "image": "registry.example.com/app:1", "ports": [{"containerPort": 8080}]});
        c.as_object_mut().unwrap().extend(probes.as_object().unwrap().clone());
        c
    };
    let mut containers = Vec::new();
    for command in command_shapes(secret, "orders-db.shop.svc") {
        containers.push(json!({"livenessProbe": exec(&command), "readinessProbe": http("/ready".into())}));
        containers.push(json!({"livenessProbe": http("/livez".into()), "readinessProbe": exec(&command), "startupProbe": exec(&command)}));
    }
    for command in command_shapes(secret, "127.0.0.1") {
        containers.push(json!({"livenessProbe": exec(&command), "readinessProbe": exec(&command)}));
    }
    let path = format!("/actuator/health?token={secret}&password={secret}");
    containers.push(json!({"livenessProbe": http(path.clone()), "readinessProbe": http(path)}));
    containers.push(json!({"livenessProbe": http(format!("/ready?token={secret}")), "readinessProbe": http(format!("/livez?token={secret}"))}));
    containers.into_iter().enumerate().map(|(i, probes)| pod(i, container(probes))).collect()
}

/// Break-it pass (s14): for each rule that can show a command, a secret given as `-pSECRET`,
/// `--password=SECRET`, `PGPASSWORD=SECRET`, URL user info or `?token=SECRET` never appears in an
/// AdmissionResponse (status message, warnings, audit annotations) at either endpoint, nor in
/// `check -o json`: a one-string command was shown whole by liveness-matches-readiness, and a
/// script the parser rejects was echoed in the `unresolved-scripts` annotation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_rule_shows_a_secret_of_a_command_parsed_or_not() {
    let (dir, _served, client, base) = serve_logging("info");
    let mut runner = proptest::test_runner::TestRunner::default();
    let secrets: Vec<String> =
        (0..2).map(|_| "S3c[A-Za-z0-9]{8,12}".new_tree(&mut runner).unwrap().current()).collect();
    for secret in secrets {
        let pods = every_rule_pods(&secret);
        let mut answers = String::new();
        for (i, obj) in pods.iter().enumerate() {
            for endpoint in ["validate", "mutate"] {
                let mut answer = respond(&client, &base, endpoint, i, obj).await;
                let response = answer.as_object_mut().unwrap();
                // The patch copies the probes as written (the user's own command, to the user's
                // own object): not something probegate shows.
                response.remove("patch");
                answers.push_str(&serde_json::to_string(response).unwrap());
                answers.push('\n');
            }
        }
        // Not vacuous: every rule that shows a command did show one, redacted.
        assert_shows_all(
            &answers,
            &[
                "exec-probe-replaceable",
                "probe-client-deadline",
                "readiness-shared-dependency",
                "startup-remote-dependency",
                "liveness-dependency-path",
                "probe-paths-swapped",
                "PGPASSWORD=***",
                "token=***",
            ],
        );
        let (json, text) = check_json_and_text(dir.path(), "rules.yaml", &pods);
        assert_not_shown(&secret, &[("answers", &answers), ("check -o json", &json), ("check", &text)]);
    }
}

/// Panics unless `answers` show the rules that show a command (liveness-dependency,
/// liveness-matches-readiness, the unresolved-scripts annotation), secrets redacted (`-p***`,
/// `--password=***`, `u:***@`), and each of `more`.
fn assert_shows_all(answers: &str, more: &[&str]) {
    let shown = ["liveness-dependency", "liveness-matches-readiness", "unresolved-scripts", "-p***"];
    for shown in shown.iter().chain(&["--password=***", "u:***@"]).chain(more) {
        assert!(answers.contains(shown), "no answer shows {shown}:\n{answers}");
    }
}

/// `probegate check -o json` and `probegate check` on `pods` written to `name` in `dir`.
fn check_json_and_text(dir: &std::path::Path, name: &str, pods: &[Value]) -> (String, String) {
    let file = dir.join(name);
    let docs: Vec<String> = pods.iter().map(|p| serde_json::to_string(p).unwrap()).collect();
    std::fs::write(&file, docs.join("\n---\n")).unwrap();
    (check(&file, &["-o", "json"]), check(&file, &[]))
}

/// Panics with the place where `secret` shows in any of `outputs` (named).
fn assert_not_shown(secret: &str, outputs: &[(&str, &String)]) {
    for (what, shown) in outputs {
        if let Some(at) = shown.find(secret) {
            let from = (0..=at.saturating_sub(300)).rev().find(|&k| shown.is_char_boundary(k)).unwrap_or(0);
            let to = ((at + 100).min(shown.len())..=shown.len()).find(|&k| shown.is_char_boundary(k));
            panic!("the {what} show the secret {secret}: …{}…", &shown[from..to.unwrap_or(shown.len())]);
        }
    }
}

/// Pods whose liveness and readiness probes both run one of the break-it shapes
/// (`exec::break_it_shapes`) of every credential spelling of `secret`: the liveness denial or
/// the unresolved-scripts note, and the liveness-matches-readiness warning, show the command.
fn break_it_pods(secret: &str) -> Vec<Value> {
    let mut pods = Vec::new();
    for script in probegate::engine::exec::credential_spellings(secret) {
        for argv in probegate::engine::exec::break_it_shapes(&script, secret) {
            let probe = json!({"exec": {"command": argv}});
            pods.push(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": format!("b{}", pods.len()), "namespace": "shop"},
                "spec": {"containers": [{"name": "app", "image": "registry.example.com/app:1", "ports": [{"containerPort": 8080}],
                    "livenessProbe": probe, "readinessProbe": probe}]}}));
        }
    }
    pods
}

/// Break-it pass (s15): a script with `$(` or a backquote, or with `|`, `&&`, `>` stuck to the
/// secret, that the parser rejects (shown raw in the `unresolved-scripts` annotation and in
/// `check`'s note); an argument with blanks inside (raw in the liveness-matches-readiness
/// warning); the words after `sh -c SCRIPT`, the script's `$0`, `$1`... (raw, or cut inside the
/// secret); an argument with a leading blank (raw in the denial). For every credential spelling,
/// none shows the secret in an AdmissionResponse (status message, warnings, audit annotations)
/// nor in the server's log or `check` (JSON and text); the positional words are shown as
/// `<redacted>`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_break_it_shape_of_a_command_shows_its_secret() {
    let (dir, served, client, base) = serve_logging("info");
    let secret = "S3cBreakIt42";
    let pods = break_it_pods(secret);
    let mut answers = String::new();
    for (i, obj) in pods.iter().enumerate() {
        let response = respond(&client, &base, "validate", i, obj).await;
        for part in ["status", "warnings", "auditAnnotations"] {
            answers.push_str(&response[part].to_string());
        }
        answers.push('\n');
    }
    // Not vacuous: each place a command is shown did show one, redacted.
    assert_shows_all(&answers, &["\"code\":403", "<redacted>", "password=***"]);
    common::wait_until("the decision log lines", Duration::from_secs(10), || {
        served.log().matches("admission decision").count() >= pods.len()
    });
    let log = served.log();
    let (json, text) = check_json_and_text(dir.path(), "shapes.yaml", &pods);
    assert!(text.contains("not analysed") && json.contains("liveness-matches-readiness"), "{text}");
    let outputs = [("answers", &answers), ("log", &log), ("check -o json", &json), ("check", &text)];
    assert_not_shown(secret, &outputs);
}

/// Fresh-user pass (s16): a URL password holding a raw `/` (`http://u:pw/x@h/`). RFC 3986 ends
/// the authority at the `/`, so curl 7.88 reads host `u` with the port `pw` (and fails: "URL using
/// bad/illegal format"), while a parser that takes the last `@` reads the password `pw/x`. Either
/// way the text between the `:` and the `@` may be a password: `check` (text and JSON) and
/// `explain` showed it (`reaches http://u:pw/x@h/`, `reaches admin:s3cr`); now they show
/// `u:***@`. A port stays shown (`http://db:8080/a@b`).
#[test]
fn a_url_password_with_a_raw_slash_is_hidden() {
    let dir = tempfile::tempdir().unwrap();
    let mut pods = Vec::new();
    for (i, url) in [
        "http://u:Pw7q/zRt@db.shop.svc/health",
        "https://u:Pw7q?zRt@db.shop.svc:8443/x",
        "http://u:Pw7q#zRt@db.shop.svc/",
    ]
    .into_iter()
    .enumerate()
    {
        let probe = json!({"exec": {"command": ["curl", "-f", url]}});
        let script = json!({"exec": {"command": ["sh", "-c", format!("curl -f {url} && echo ok")]}});
        pods.push(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": format!("p{i}"), "namespace": "shop"},
            "spec": {"containers": [{"name": "app", "image": "registry.example.com/app:1", "ports": [{"containerPort": 8080}],
                "livenessProbe": probe, "readinessProbe": script}]}}));
    }
    let (json, text) = check_json_and_text(dir.path(), "slash.yaml", &pods);
    let explained = run("explain", &dir.path().join("slash.yaml"), &[]);
    for (what, shown) in [("check -o json", &json), ("check", &text), ("explain", &explained)] {
        assert!(shown.contains("u:***@"), "{what}: {shown}");
        for part in ["Pw7q", "zRt"] {
            assert_not_shown(part, &[(what, shown)]);
        }
    }
    // A port is a port, and an `@` in the path is the path's.
    let port =
        vec![json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "port", "namespace": "shop"},
        "spec": {"containers": [{"name": "app", "image": "registry.example.com/app:1",
            "livenessProbe": {"exec": {"command": ["curl", "-f", "http://db.shop.svc:8080/@me"]}}}]}})];
    let (_, text) = check_json_and_text(dir.path(), "port.yaml", &port);
    assert!(text.contains("http://db.shop.svc:8080/@me"), "{text}");
}
