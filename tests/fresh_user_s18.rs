//! Messages a new user met in the s17 fresh-user pass that said the wrong thing or lost their
//! advice: a negated check (`! redis-cli ...`), a `$NAME` no shell expands, `env -S` shown split,
//! `explain` modelling readiness for a Job's Pods, and warnings whose advice the 256-character cut
//! removed.

mod common;

use std::process::Command;

use probegate::engine::{self, Evaluation, Finding};
use probegate::policy::{Action, Policy, RuleId};
use serde_json::{Value, json};

/// An object of `kind` ("Pod", "Job", "Deployment") whose one container `c` has `env` and the
/// liveness exec probe `argv`.
fn object(kind: &str, argv: &[&str], env: Value) -> Value {
    let spec = json!({"containers": [{"name": "c", "image": "x", "env": env,
        "livenessProbe": {"exec": {"command": argv}, "timeoutSeconds": 5}}]});
    match kind {
        "Pod" => {
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": spec})
        }
        "Job" => {
            let mut spec = spec;
            spec["restartPolicy"] = json!("OnFailure");
            json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"},
                "spec": {"template": {"spec": spec}}})
        }
        _ => {
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}}, "spec": spec}}})
        }
    }
}

fn eval(doc: &Value) -> Evaluation {
    engine::evaluate(&Policy::default().rules, &common::workload(doc))
}

/// The liveness-dependency finding of `argv` in a Deployment (env `env`): action and message.
fn liveness(kind: &str, argv: &[&str], env: Value) -> Option<(Action, String)> {
    let e = eval(&object(kind, argv, env));
    e.findings.iter().find(|f| f.rule == RuleId::LivenessDependency).map(|f| (f.action, f.message.clone()))
}

// === 1. `! CHECK`: the probe fails whenever the dependency is UP ===

/// `sh -c '! redis-cli -h cache ping'` exits 1 with Redis up and 0 with it down (bash 5.2, dash
/// 0.5.12, the check below): coupled, so denied, but the message says the probe fails while the
/// dependency is healthy, not "its outage would restart".
#[test]
fn a_negated_check_is_denied_for_failing_while_the_dependency_is_up() {
    for shell in ["sh", "bash", "dash"] {
        for script in [
            "! redis-cli -h cache ping",
            "! redis-cli -h cache ping >/dev/null 2>&1",
            "! redis-cli -h cache ping # down is fine?\n",
            "echo checking; ! redis-cli -h cache ping",
        ] {
            let (action, message) = liveness("Deployment", &[shell, "-c", script], json!([]))
                .unwrap_or_else(|| panic!("{shell} {script:?}: no finding"));
            assert_eq!(action, Action::Deny, "{shell} {script:?}: {message}");
            assert!(
                message.contains("`! redis-cli -h cache ping` fails while cache is up (`!` inverts it)")
                    && message.contains("so it would restart every replica all the time")
                    && message.ends_with("; drop `!`, check it in readinessProbe")
                    && !message.contains("its outage would"),
                "{shell} {script:?}: {message}"
            );
        }
    }
    // A Job's Pods: the Job's advice (no readinessProbe there).
    let (_, message) = liveness("Job", &["sh", "-c", "! pg_isready -h orders-db"], json!([])).unwrap();
    assert!(message.contains("fails while orders-db is up"), "{message}");
    assert!(message.contains("kill the container in every running Pod of the Job all the time"), "{message}");
    assert!(message.ends_with("; drop it from livenessProbe"), "{message}");
}

/// Where the check's status does not reach the probe inverted, the message is the outage one:
/// `if ! CHECK; then exit 1; fi` fails when it is down, a `!` inside a function called under `!`
/// cancels out, and a `!` that is not the script's last statement gives up its status.
#[test]
fn a_check_whose_status_is_not_inverted_keeps_the_outage_message() {
    for script in [
        "redis-cli -h cache ping",
        "if ! redis-cli -h cache ping; then exit 1; fi",
        "f() { ! redis-cli -h cache ping; }; ! f",
    ] {
        let (action, message) = liveness("Deployment", &["sh", "-c", script], json!([]))
            .unwrap_or_else(|| panic!("{script:?}: no finding"));
        assert_eq!(action, Action::Deny, "{script:?}: {message}");
        assert!(message.contains("its outage would restart every replica"), "{script:?}: {message}");
        assert!(!message.contains("`!` inverts"), "{script:?}: {message}");
    }
    // Where something else may decide the status, not said to be inverted: a file write that can
    // fail (bash and dash: `! true > /nonexistent/x` exits 0), an EXIT trap that exits, an alias.
    for script in [
        "! redis-cli -h cache ping > /tmp/pong",
        "trap 'exit 1' EXIT; ! redis-cli -h cache ping",
        "alias ok=true; ! redis-cli -h cache ping",
    ] {
        let found = liveness("Deployment", &["sh", "-c", script], json!([]));
        assert!(found.as_ref().is_some_and(|(_, m)| !m.contains("`!` inverts")), "{script:?}: {found:?}");
    }
    // Not the last statement: its status is not the script's (a warning, as before).
    let (action, message) =
        liveness("Deployment", &["sh", "-c", "! redis-cli -h cache ping; exit 0"], json!([])).unwrap();
    assert_eq!(action, Action::Warn, "{message}");
    assert!(!message.contains("`!` inverts"), "{message}");
}

/// What the message says, checked on the shells themselves: a stub `redis-cli` that exits 0 when
/// the server is up and 1 when it is not (redis-cli exits 1 when it cannot connect), run by bash
/// and dash as the probe runs it.
#[test]
fn bash_and_dash_invert_a_negated_check() {
    let dir = tempfile::tempdir().unwrap();
    let stub = dir.path().join("redis-cli");
    let up = dir.path().join("up");
    std::fs::write(&stub, format!("#!/bin/sh\n[ -f '{}' ] && exit 0\nexit 1\n", up.display())).unwrap();
    std::fs::set_permissions(&stub, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", dir.path().display(), std::env::var("PATH").unwrap_or_default());
    for shell in ["bash", "dash"] {
        for (server_up, probe_status) in [(true, 1), (false, 0)] {
            if server_up {
                std::fs::write(&up, "").unwrap();
            } else {
                let _ = std::fs::remove_file(&up);
            }
            let status = Command::new(shell)
                .args(["-c", "! redis-cli -h cache ping"])
                .env("PATH", &path)
                .status()
                .unwrap_or_else(|e| panic!("{shell}: {e}"));
            assert_eq!(status.code(), Some(probe_status), "{shell}, server up: {server_up}");
        }
    }
}

// === 2. `$NAME` in an argv no shell runs ===

/// `command: [redis-cli, -h, $REDIS_HOST, ping]`: no shell expands `$REDIS_HOST`, and the kubelet
/// expands only `$(REDIS_HOST)` (Kubernetes docs, "Define Dependent Environment Variables"), so
/// redis-cli is given the text `$REDIS_HOST` and fails every time: a warning naming the fix, not
/// a denial for reaching `$REDIS_HOST`.
#[test]
fn a_dollar_variable_no_shell_expands_is_a_warning_naming_the_fix() {
    let env = json!([{"name": "REDIS_HOST", "value": "cache"}, {"name": "DB_HOST", "value": "orders-db"}]);
    for (argv, name) in [
        (&["redis-cli", "-h", "$REDIS_HOST", "ping"][..], "REDIS_HOST"),
        (&["redis-cli", "-h", "${REDIS_HOST}", "ping"][..], "REDIS_HOST"),
        (&["timeout", "3", "redis-cli", "-h", "$REDIS_HOST", "ping"][..], "REDIS_HOST"),
        (&["pg_isready", "-h", "$DB_HOST"][..], "DB_HOST"),
        (&["curl", "-f", "http://$DB_HOST:8080/health"][..], "DB_HOST"),
    ] {
        let (action, message) =
            liveness("Deployment", argv, env.clone()).unwrap_or_else(|| panic!("{argv:?}"));
        assert_eq!(action, Action::Warn, "{argv:?}: {message}");
        assert!(
            message.contains("fails every time")
                && message.contains(&format!("no shell expands `${name}`, the kubelet only `$({name})`"))
                && message.contains("write that or use sh -c, then check it in readinessProbe"),
            "{argv:?}: {message}"
        );
    }
    // Expanded, by the kubelet or by a shell: the dependency itself, denied as before.
    for argv in [
        &["redis-cli", "-h", "$(REDIS_HOST)", "ping"][..],
        &["sh", "-c", "redis-cli -h $REDIS_HOST ping"][..],
        &["sh", "-c", "redis-cli -h \"${REDIS_HOST}\" ping"][..],
    ] {
        let (action, message) = liveness("Deployment", argv, env.clone()).unwrap();
        assert_eq!(action, Action::Deny, "{argv:?}: {message}");
        assert!(message.contains("its outage would") && !message.contains("fails every time"), "{message}");
    }
}

// === 5. `env -S STRING` shown as written ===

#[test]
fn env_split_string_is_shown_as_written_and_redacted() {
    for (argv, shown) in [
        (&["env", "-S", "redis-cli -h cache ping"][..], "`env -S 'redis-cli -h cache ping'`"),
        (&["env", "-i", "-S", "redis-cli -h cache ping"][..], "`env -i -S 'redis-cli -h cache ping'`"),
        (
            &["env", "-S", "redis-cli -h cache -a s3cretpw ping"][..],
            "`env -S 'redis-cli -h cache -a *** ping'`",
        ),
        (&["env", "-S", "pg_isready -h orders-db", "-t", "3"][..], "`env -S 'pg_isready -h orders-db' -t 3`"),
    ] {
        let (action, message) = liveness("Deployment", argv, json!([])).unwrap_or_else(|| panic!("{argv:?}"));
        assert_eq!(action, Action::Deny, "{argv:?}: {message}");
        assert!(message.contains(shown) && !message.contains("s3cretpw"), "{argv:?}: {message}");
    }
    // A command found deeper (a shell env -S runs) is shown as that command.
    let (_, message) =
        liveness("Deployment", &["env", "-S", "sh -c 'redis-cli -h cache ping'"], json!([])).unwrap();
    assert!(message.contains("`redis-cli -h cache ping`"), "{message}");
}

// === 3. `explain` on a Job's Pods ===

fn explain(yaml: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("w.yaml");
    std::fs::write(&file, yaml).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_probegate")).arg("explain").arg(&file).output().unwrap();
    assert!(!out.stdout.is_empty(), "{yaml}\n{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

const POD_SPEC: &str = "          containers:
          - name: job
            image: a
            ports: [{containerPort: 8080}]
            livenessProbe:
              exec: {command: [pg_isready, -h, orders-db]}
";

/// A CronJob's (and a Job's) Pods get no Service traffic: the rules ask them no readiness probe
/// and advise dropping the check from liveness, so `explain` models no readiness probe for them,
/// no "as fixed" readiness check and no serving timeline. A Deployment keeps all three.
#[test]
fn explain_models_no_readiness_for_a_jobs_pods() {
    let cron = format!(
        "apiVersion: batch/v1\nkind: CronJob\nmetadata: {{name: nightly, namespace: default}}\nspec:\n  schedule: '0 * * * *'\n  \
         jobTemplate:\n    spec:\n      template:\n        spec:\n          restartPolicy: OnFailure\n{POD_SPEC}"
    );
    let job = format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: nightly, namespace: default}}\nspec:\n  template:\n    \
         spec:\n      restartPolicy: Never\n{}",
        POD_SPEC.replace("          ", "      ")
    );
    for (what, yaml) in [("CronJob", cron), ("Job", job)] {
        let out = explain(&yaml);
        assert!(
            out.contains("readiness: none (a Job's Pods get no Service traffic: none needed)"),
            "{what}:\n{out}"
        );
        assert!(
            out.contains("as fixed assumes the check dropped from liveness")
                && out.contains("as fixed:   dependency checked by no probe: 0 restarts"),
            "{what}:\n{out}"
        );
        assert!(out.contains("no serving timeline"), "{what}:\n{out}");
        for modelled in [
            "assumes a readiness probe",
            "readiness checks the dependency",
            "serve degraded",
            "replicas serving",
        ] {
            assert!(!out.contains(modelled), "{what}: {modelled:?}:\n{out}");
        }
    }
    let deployment = format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: nightly, namespace: default}}\nspec:\n  selector: {{matchLabels: {{a: b}}}}\n  \
         template:\n    metadata: {{labels: {{a: b}}}}\n    spec:\n{}",
        POD_SPEC.replace("          ", "      ")
    );
    let out = explain(&deployment);
    for modelled in [
        "readiness: none (Ready as soon as the container runs)",
        "as written assumes a readiness probe that fails with the dependency",
        "readiness checks the dependency",
        "serve degraded",
        "replicas serving requests",
    ] {
        assert!(out.contains(modelled), "Deployment: {modelled:?}:\n{out}");
    }
}

// === 4. advice the 256-character cut removed ===

/// The warnings of the corpus and the script fixtures whose advice was cut off at 256 characters
/// (`probegate: ` and the message, as admission sends it): liveness-matches-readiness put its
/// advice after a handler that may be a whole script summary, the quorum warning after its cited
/// source. Each now fits, or, where a script's path makes it longer, keeps its advice before the cut.
#[test]
fn corpus_warnings_keep_their_advice_within_256_characters() {
    let out = Command::new(env!("CARGO_BIN_EXE_probegate"))
        .args(["check", "-o", "json"])
        .arg(common::fixtures().join("corpus"))
        .arg(common::fixtures().join("scripts"))
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let findings = report["findings"].as_array().unwrap();
    let mut seen = 0;
    for f in findings {
        let (rule, message) = (f["rule"].as_str().unwrap(), f["message"].as_str().unwrap());
        let advice = match rule {
            "liveness-matches-readiness" => "lengthen its failure window",
            "liveness-dependency" if message.contains("lost quorum") => {
                "check quorum in readinessProbe and keep liveness on this process"
            }
            _ => continue,
        };
        seen += 1;
        let warning = format!("probegate: {message}");
        let kept: String = warning.chars().take(255 - " (liveness-matches-readiness)".len() - 1).collect();
        assert!(kept.contains(advice), "{} chars, advice cut: {warning}", warning.chars().count());
    }
    assert!(seen >= 10, "{seen} warnings looked at");
}

/// The new messages fit a warning whole, with a container name of 20 characters (a bare Pod's
/// "restart this Pod's container", the longest outside a Job's).
#[test]
fn the_new_messages_fit_a_warning() {
    let name = "orders-api-consumer1";
    let docs = [
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": name, "image": "x",
                "livenessProbe": {"exec": {"command": ["sh", "-c", "! redis-cli -h redis-master ping"]}}}]}}),
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": name, "image": "x", "env": [{"name": "REDIS_HOST", "value": "c"}],
                "livenessProbe": {"exec": {"command": ["redis-cli", "-h", "$REDIS_HOST", "ping"]}}}]}}),
    ];
    // (The quorum warning cites its source, about 200 characters of its own, and
    // liveness-matches-readiness ends with the handler, as long as a script's summary: both keep
    // their advice before the cut instead, `corpus_warnings_keep_their_advice_within_256_characters`.)
    for doc in &docs {
        let rule = RuleId::LivenessDependency;
        let e = eval(doc);
        let f: Vec<&Finding> = e.findings.iter().filter(|f| f.rule == rule).collect();
        assert_eq!(f.len(), 1, "{rule}: {:?}", e.findings);
        let text = format!("probegate: {}", f[0].describe());
        assert!(text.chars().count() <= 256, "{} chars: {text}", text.chars().count());
    }
}
