//! What a new user met in the s19 fresh-user pass of `check`, `fix` and `explain`: a
//! `liveness-matches-readiness` that counted `initialDelaySeconds` (so `check` warned anew on
//! `fix`'s output), `fix --diff` saying "fixed" with a denial left, `fix --diff` printing secrets,
//! budgets worded differently by `check` and `explain`, defaulted fields shown without
//! "(default)", and warnings cut mid-word at 256 characters.

mod common;

use std::collections::BTreeMap;
use std::process::Output;

use probegate::admission::{self, Endpoint};
use probegate::engine::{self, Evaluation};
use probegate::policy::{Policy, RuleId};
use proptest::prelude::*;
use serde_json::{Value, json};

/// Runs the binary in the crate root with `stdin` ([`common::run_in`]).
fn probegate(args: &[&str], stdin: Option<&str>) -> Output {
    common::run_in(std::path::Path::new(env!("CARGO_MANIFEST_DIR")), args, stdin)
}

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).unwrap()
}

fn eval(doc: &Value) -> Evaluation {
    engine::evaluate(&Policy::default().rules, &common::workload(doc))
}

fn pod(container: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [container]}})
}

// === 1. liveness-matches-readiness compares failure budgets, not start delays ===

/// The fresh user's Pod: liveness `initialDelaySeconds: 60` and otherwise the same check, period
/// and threshold as readiness. Both fail together once it runs (rules.md: `FB(L) ≤ FB(R)`), so it
/// is a warning with or without the delay, and after `fix` moved the delay into a startup probe.
#[test]
fn an_initial_delay_does_not_hide_a_liveness_that_matches_readiness() {
    let c = |delay: Option<i64>| {
        let mut live = json!({"httpGet": {"path": "/healthz", "port": 8080}, "timeoutSeconds": 3});
        if let Some(d) = delay {
            live["initialDelaySeconds"] = json!(d);
        }
        json!({"name": "web", "image": "w", "livenessProbe": live,
            "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "timeoutSeconds": 3}})
    };
    for delay in [None, Some(15), Some(60)] {
        let e = eval(&pod(c(delay)));
        let f = e.findings.iter().find(|f| f.rule == RuleId::LivenessMatchesReadiness);
        let f = f.unwrap_or_else(|| panic!("delay {delay:?}: {:?}", e.findings));
        assert!(f.message.contains("(failure budget 30 s vs 30 s)"), "{}", f.message);
    }
    // A longer failure budget still is the documented pattern, delay or not.
    let mut patient = c(Some(60));
    patient["livenessProbe"]["failureThreshold"] = json!(6);
    assert!(eval(&pod(patient)).findings.iter().all(|f| f.rule != RuleId::LivenessMatchesReadiness));
}

/// `(kind namespace/name, container, rule)` of every finding of a `check -o json` report, counted.
fn finding_counts(report: &[u8]) -> BTreeMap<String, usize> {
    let report: Value = serde_json::from_slice(report).unwrap();
    let mut counts = BTreeMap::new();
    for f in report["findings"].as_array().unwrap() {
        let key = format!("{} {}/{} {} {}", f["kind"], f["namespace"], f["name"], f["container"], f["rule"]);
        *counts.entry(key).or_default() += 1;
    }
    counts
}

/// Findings of `after` that `before` lacks (a key counted more often).
fn new_findings(before: &BTreeMap<String, usize>, after: &BTreeMap<String, usize>) -> Vec<String> {
    after.iter().filter(|(k, n)| before.get(*k).copied().unwrap_or(0) < **n).map(|(k, _)| k.clone()).collect()
}

/// `check(fix(x))` raises no finding `check(x)` lacked, on the whole corpus and the CLI sample.
#[test]
fn check_of_fix_output_raises_nothing_new_on_the_corpus() {
    let paths =
        ["tests/fixtures/corpus", "tests/fixtures/cli/app.yaml", "tests/fixtures/cli/fresh-user-s19.yaml"];
    let before = probegate(&[&["check", "-o", "json"][..], &paths[..]].concat(), None);
    let fixed = probegate(&[&["fix"][..], &paths[..]].concat(), None);
    let after = probegate(&["check", "-o", "json", "-"], Some(&text(&fixed.stdout)));
    let (before, after) = (finding_counts(&before.stdout), finding_counts(&after.stdout));
    assert!(before.len() > 40, "{before:?}");
    assert_eq!(new_findings(&before, &after), Vec::<String>::new());
}

/// A probe of the handler `h` with generated timing (`None`: the field is left out).
fn timed(h: &Value, t: (Option<i32>, Option<i32>, Option<i32>, Option<i32>)) -> Value {
    let mut p = h.clone();
    for (k, v) in ["initialDelaySeconds", "periodSeconds", "failureThreshold", "timeoutSeconds"]
        .into_iter()
        .zip([t.0, t.1, t.2, t.3])
    {
        if let Some(v) = v {
            p[k] = json!(v);
        }
    }
    p
}

fn timing() -> impl Strategy<Value = (Option<i32>, Option<i32>, Option<i32>, Option<i32>)> {
    (
        prop::option::of(0..200i32),
        prop::option::of(1..30i32),
        prop::option::of(1..10i32),
        prop::option::of(1..12i32),
    )
}

fn mutate(object: &Value) -> Option<Value> {
    let body = serde_json::to_vec(&common::review("CREATE", object, None, "p")).unwrap();
    let request = admission::parse_review(&body).unwrap();
    let response = admission::review(&Policy::default(), None, Endpoint::Mutate, &request).unwrap();
    response.review.response.patch.map(|b64| common::apply(object, &common::decode_patch(&b64)))
}

fn counts(e: &Evaluation) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for f in &e.findings {
        *counts.entry(format!("{} {}", f.container, f.rule)).or_default() += 1;
    }
    counts
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    /// The same property on generated containers whose liveness and readiness share a handler
    /// (the case the rule is about), with any delays, periods, thresholds and timeouts, with or
    /// without a startup probe: patching the object as `fix` and `/mutate` do never adds a finding.
    #[test]
    fn patching_never_adds_a_finding(
        h in prop::sample::select(vec![
            json!({"httpGet": {"path": "/healthz", "port": 8080}}),
            json!({"tcpSocket": {"port": 6379}}),
            json!({"exec": {"command": ["redis-cli", "ping"]}}),
        ]),
        live in timing(),
        ready in timing(),
        startup in prop::option::of(timing()),
        ports in any::<bool>(),
    ) {
        let mut c = json!({"name": "c", "image": "i", "livenessProbe": timed(&h, live),
            "readinessProbe": timed(&h, ready)});
        if let Some(s) = startup {
            c["startupProbe"] = timed(&h, s);
        }
        if ports {
            c["ports"] = json!([{"containerPort": 8080}]);
        }
        let object = pod(c);
        if let Some(after) = mutate(&object) {
            let added = new_findings(&counts(&eval(&object)), &counts(&eval(&after)));
            prop_assert!(added.is_empty(), "{added:?} after patching {object}");
        }
    }
}

// === 2. `fix` says what is left to a person, and fails on a denial left ===

/// `fix --diff` on the README's sample fixes two objects and leaves a denial (a liveness probe
/// that names another host, which only a person can move): it names it, counts it in its summary
/// and exits 1, as `check` does; `--fail-on warn` fails on a warning left too, and a file with
/// nothing left passes.
#[test]
fn fix_names_what_is_left_and_fails_on_a_denial_left() {
    for args in [&["fix", "--diff"][..], &["fix"][..], &["fix", "--fail-on", "deny"][..]] {
        let o = probegate(&[args, &["tests/fixtures/cli/app.yaml"][..]].concat(), None);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("probegate: left to you: tests/fixtures/cli/app.yaml:21: deny Deployment shop/web: container web: livenessProbe.httpGet.host is \"db.shop.svc\""),
            "{err}"
        );
        assert!(err.contains(" fixed in 1 file ("), "{err}");
        assert!(err.trim_end().ends_with("; left to you: 1 deny, 0 warn; failed (--fail-on deny)"), "{err}");
    }
    // A warning left: 0, unless --fail-on warn (or the configuration file's failOn) says otherwise.
    let file = "tests/fixtures/cli/fresh-user-s19.yaml";
    let o = probegate(&["fix", "--diff", file], None);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("left to you: 0 deny, 1 warn\n"), "{}", text(&o.stderr));
    let o = probegate(&["fix", "--diff", "--fail-on", "warn", file], None);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("left to you: 0 deny, 1 warn; failed (--fail-on warn)"));
    // Nothing left: no verdict.
    let o = probegate(
        &["fix", "-"],
        Some(&text(&probegate(&["fix", "tests/fixtures/cli/list.yaml"], None).stdout)),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(!text(&o.stderr).contains("left to you"), "{}", text(&o.stderr));
}

// === 3. `fix --diff` shows no secret; the files it writes keep them ===

#[test]
fn fix_diff_redacts_env_values_and_credentials_but_the_fixed_file_keeps_them() {
    let file = "tests/fixtures/cli/fresh-user-s19.yaml";
    let o = probegate(&["fix", "--diff", file], None);
    let (diff, err) = (text(&o.stdout), text(&o.stderr));
    assert!(!diff.contains("S3cret") && !err.contains("S3cret"), "{diff}{err}");
    // The context line of the env value and the added startup probe's command, redacted.
    assert!(diff.contains("\n           value: ***\n"), "{diff}");
    assert!(diff.contains("\n+            - -p***\n"), "{diff}");
    assert!(err.contains("it is for reading, not for `git apply`"), "{err}");
    // The hunk headers are the file's lines: redaction keeps every line where it was.
    assert!(diff.contains("@@ -59,3 +65,17 @@"), "{diff}");
    // The fixed file, to standard output or in place, keeps the real command.
    let o = probegate(&["fix", file], None);
    let fixed = text(&o.stdout);
    assert!(fixed.contains("            - -pS3cret\n"), "{fixed}");
    assert!(fixed.contains("          value: S3cret\n"), "{fixed}");
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("s19.yaml");
    std::fs::copy(file, &copy).unwrap();
    probegate(&["fix", "--in-place", copy.to_str().unwrap()], None);
    assert_eq!(std::fs::read_to_string(&copy).unwrap(), fixed);
}

/// A Secret just below the workload: the diff's context lines reach into it (stop 33's
/// fresh-user pass), so its stored values are masked too; the written file keeps them.
#[test]
fn fix_diff_masks_a_secret_beside_the_workload_it_changes() {
    let workload = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: i\n    livenessProbe:\n      httpGet: {path: /healthz, port: 8080}\n";
    let secret =
        "---\nstringData:\n  password: Pw-0f-db\nkind: Secret\napiVersion: v1\nmetadata: {name: db}\n";
    let input = format!("{workload}{secret}");
    let o = probegate(&["fix", "--diff", "-"], Some(&input));
    let (diff, err) = (text(&o.stdout), text(&o.stderr));
    assert!(diff.contains("\n stringData:\n   password: ***\n"), "{diff}");
    assert!(!diff.contains("Pw-0f-db") && !err.contains("Pw-0f-db"), "{diff}{err}");
    let fixed = text(&probegate(&["fix", "-"], Some(&input)).stdout);
    assert!(fixed.ends_with(secret), "{fixed}");
}

// === 4. one budget, one number, one unit style in `check` and `explain` ===

/// `check` said "30s" where `explain` said "31 s": the failure budget (Kubernetes docs:
/// `failureThreshold × periodSeconds`) is 30 s, and 31 s is a hang's worst case (the budget and
/// one `timeoutSeconds`). Both now name the budget alike, and durations are `N s` in both.
#[test]
fn check_and_explain_give_one_failure_budget_in_one_unit_style() {
    let file = "tests/fixtures/cli/fresh-user-s19.yaml";
    let fixed = text(&probegate(&["fix", file], None).stdout);
    let check = text(&probegate(&["check", "-"], Some(&fixed)).stdout);
    let explain = text(&probegate(&["explain", "-"], Some(&fixed)).stdout);
    assert!(check.contains("(failure budget 30 s vs 30 s)"), "{check}");
    assert_eq!(
        explain
            .matches("failure budget 30 s = periodSeconds 10 (default) x failureThreshold 3 (default)")
            .count(),
        0,
        "{explain}"
    );
    assert_eq!(
        explain.matches("failure budget 30 s = periodSeconds 10 x failureThreshold 3;").count(),
        4,
        "{explain}"
    );
    assert!(
        explain.contains(
            "a hang is a restart after at most 33 s = the budget + timeoutSeconds 3 (at least 23 s)"
        ),
        "{explain}"
    );
    // No `Ns` left in check's messages: `under 3 s`, `120 s to boot`, `a 5 s preStop sleep`.
    let all = text(&probegate(&["check", "tests/fixtures/corpus", "tests/fixtures/cli"], None).stdout);
    let glued: Vec<&str> = all
        .split_whitespace()
        .filter(|w| {
            let w = w.trim_end_matches([',', ')', ':', ';']);
            w.len() > 1 && w.ends_with('s') && w[..w.len() - 1].chars().all(|c| c.is_ascii_digit())
        })
        .collect();
    assert!(glued.iter().all(|w| *w == "5s" || *w == "5s`"), "{glued:?}");
    // A period of 0 is the default in both (the API server's SetDefaults_Probe), not 1 s.
    let zero = "apiVersion: v1\nkind: Pod\nmetadata: {name: z}\nspec:\n  containers:\n  - name: z\n    image: z\n    livenessProbe: {httpGet: {path: /h, port: 80}, periodSeconds: 0, timeoutSeconds: 3}\n    readinessProbe: {httpGet: {path: /h, port: 80}, timeoutSeconds: 3}\n";
    let check = text(&probegate(&["check", "-"], Some(zero)).stdout);
    let explain = text(&probegate(&["explain", "-"], Some(zero)).stdout);
    assert!(check.contains("(failure budget 30 s vs 30 s)"), "{check}");
    assert!(explain.contains("periodSeconds 10 (default), timeoutSeconds 3"), "{explain}");
}

// === 5. a defaulted field says so ===

#[test]
fn a_field_the_manifest_leaves_out_is_shown_with_default() {
    let probe_timeout = |timeout: &str| {
        let c = format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: t}}\nspec:\n  containers:\n  - name: t\n    image: t\n    livenessProbe: {{tcpSocket: {{port: 80}}{timeout}}}\n    startupProbe: {{tcpSocket: {{port: 80}}}}\n"
        );
        let out = text(&probegate(&["check", "-"], Some(&c)).stdout);
        out.lines().find(|l| l.contains("(probe-timeout)")).unwrap_or_else(|| panic!("{out}")).to_string()
    };
    assert!(probe_timeout("").contains("livenessProbe.timeoutSeconds 1 (default) is under 3 s"));
    assert!(
        probe_timeout(", timeoutSeconds: 0")
            .contains("livenessProbe.timeoutSeconds 1 (default) is under 3 s")
    );
    assert!(probe_timeout(", timeoutSeconds: 1").contains("livenessProbe.timeoutSeconds 1 is under 3 s"));
    // A period that leaves no room, defaulted or not.
    let no_room = probe_timeout(", periodSeconds: 2");
    assert!(no_room.contains("timeoutSeconds 1 (default) is under 3 s (periodSeconds 2)"), "{no_room}");
    // The grace period as explain writes it.
    let grace = "apiVersion: v1\nkind: Pod\nmetadata: {name: g}\nspec:\n  containers:\n  - name: g\n    image: g\n    ports: [{containerPort: 80}]\n    readinessProbe: {tcpSocket: {port: 80}, timeoutSeconds: 2}\n";
    let policy =
        "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\nrules:\n  prestop-sleep: {seconds: 30}\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.yaml"), policy).unwrap();
    let out = text(
        &probegate(&["check", "--policy", dir.path().join("p.yaml").to_str().unwrap(), "-"], Some(grace))
            .stdout,
    );
    assert!(
        out.contains("terminationGracePeriodSeconds 30 (default) leaves no room for a 30 s preStop sleep"),
        "{out}"
    );
    // At admission the API server has filled the defaults in: the value alone.
    let e = eval(&pod(json!({"name": "t", "image": "t",
        "livenessProbe": {"tcpSocket": {"port": 80}, "timeoutSeconds": 1, "periodSeconds": 10}})));
    let f = e.findings.iter().find(|f| f.rule == RuleId::ProbeTimeout).unwrap();
    assert!(f.message.starts_with("livenessProbe.timeoutSeconds 1 is under 3 s"), "{}", f.message);
}

// === 6. a cut warning is cut between words, and kept whole in the audit annotation ===

#[test]
fn a_cut_warning_ends_between_words_and_the_audit_log_keeps_it_whole() {
    // bitnami's MySQL chart runs this in all three probes; a container name of 40 characters.
    let script = "password_aux=\"${MYSQL_ROOT_PASSWORD:-}\"; mysqladmin status -uroot -p\"${password_aux}\" | grep -q Uptime";
    let c = json!({"name": "orders-primary-database-mysql-container", "image": "db", "ports": [{"containerPort": 5432}],
        "livenessProbe": {"exec": {"command": ["bash", "-ec", script]}, "timeoutSeconds": 5},
        "readinessProbe": {"exec": {"command": ["bash", "-ec", script]}, "timeoutSeconds": 5},
        "startupProbe": {"tcpSocket": {"port": 5432}},
        "lifecycle": {"preStop": {"sleep": {"seconds": 5}}}});
    let body = serde_json::to_vec(&common::review("CREATE", &pod(c), None, "u")).unwrap();
    let request = admission::parse_review(&body).unwrap();
    let r =
        admission::review(&Policy::default(), None, Endpoint::Validate, &request).unwrap().review.response;
    let warnings = r.warnings.unwrap_or_default();
    let tail = " (liveness-matches-readiness)";
    let cut = warnings.iter().find(|w| w.ends_with(tail)).unwrap_or_else(|| panic!("{warnings:?}"));
    assert!(cut.chars().count() <= 255 && cut.contains('…'), "{cut}");
    let head = cut.strip_suffix(&format!("…{tail}")).unwrap();
    let notes = r.audit_annotations.unwrap_or_default();
    let full: Vec<String> =
        serde_json::from_str(notes.get("full-warnings").unwrap_or_else(|| panic!("{notes:?}"))).unwrap();
    assert_eq!(full.len(), 1, "{full:?}");
    assert!(
        full[0].starts_with(head) && full[0].ends_with(tail) && full[0].chars().count() > 255,
        "{full:?}"
    );
    // Between words: what follows the kept text starts a new word.
    assert!(full[0][head.len()..].starts_with(' '), "{cut}\n{}", full[0]);
}
