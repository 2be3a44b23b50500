//! Session 24 (s24-miss): misses, where a probe certainly coupled got no finding or only a
//! warning, and small defects. Every script row was run in bash 5.2.15 and dash 0.5.12 with stub
//! clients (`/tmp/emstub/run.sh`: `redis-cli` exits 0 with its server up, 1 down; `pg_isready` 0
//! and 2; a client aimed at this Pod or the loopback always answers), statuses as "up / down".

use probegate::policy::{Action, Policy, RuleId};

mod common;
use common::flow::*;

/// The liveness-dependency finding of `script` run by `shell -c`, as (action, message).
fn finding(shell: &str, script: &str) -> Option<(Action, String)> {
    finding_of(&[shell, "-c", script])
}

/// Every script of `warned` (run by `sh -c` and `bash -c`) is warned about and every one of
/// `denied` denied, whatever host the finding names.
fn expect_actions(warned: &[&str], denied: &[&str]) {
    let mut wrong = Vec::new();
    for (scripts, action) in [(warned, Action::Warn), (denied, Action::Deny)] {
        for shell in ["sh", "bash"] {
            for script in scripts {
                let got = finding(shell, script);
                if got.as_ref().is_none_or(|g| g.0 != action) {
                    wrong.push(format!("{action:?} expected: {shell} {script:?}: {got:?}"));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// Each of `scripts`, run by `sh -c` and `bash -c`, gets no liveness-dependency finding.
fn expect_quiet(scripts: &[&str]) {
    for shell in ["sh", "bash"] {
        for script in scripts {
            assert_eq!(finding(shell, script), None, "{shell} {script}");
        }
    }
}

const C: &str = "redis-cli -h redis.cache.svc ping";

/// Item 1: Arguments built in a branch (a public Redis healthcheck: `ARGS="-h HOST -p PORT"`, and `-a
/// $REDIS_PASSWORD` added when a password is set): the unquoted `$ARGS` is split into words, each
/// value as the command's own. Every value reaching the remote master: denied (0 / 1 in bash and
/// dash, password set or not); one value local (no `-h`: redis-cli's 127.0.0.1): a warning (0 / 1
/// when the branch runs); every value local: nothing. Silent on main 2c3f567.
#[test]
fn arguments_built_in_a_branch_are_judged_in_each_of_their_values() {
    let denied = [
        "ARGS=\"-h redis-master.cache.svc -p 6379\"; if [ -n \"$REDIS_PASSWORD\" ]; then ARGS=\"$ARGS -a $REDIS_PASSWORD\"; fi; redis-cli $ARGS ping",
        "ARGS=\"-h redis-master.cache.svc\"; if [ -f /tmp/tls ]; then ARGS=\"-h redis-tls.cache.svc --tls\"; fi; redis-cli $ARGS ping",
        "ARGS=\"-h redis-master.cache.svc\"; [ -f /tmp/auth ] && ARGS=\"$ARGS -a s3cr3t-pw\"; redis-cli ${ARGS} ping",
    ];
    let warned = [
        "ARGS=\"\"; if [ -n \"$REDIS_REMOTE\" ]; then ARGS=\"-h redis-master.cache.svc\"; fi; redis-cli $ARGS ping",
        "ARGS=\"-h localhost\"; if [ -f /tmp/remote ]; then ARGS=\"-h redis-master.cache.svc\"; fi; redis-cli $ARGS ping",
        // (Its status cannot fail the probe: `exit 0` last, 0 / 0.)
        "ARGS=\"-h redis-master.cache.svc -p 6379\"; if [ -n \"$REDIS_PASSWORD\" ]; then ARGS=\"$ARGS -a $REDIS_PASSWORD\"; fi; redis-cli $ARGS ping; exit 0",
    ];
    expect_actions(&warned, &denied);
    expect_quiet(&[
        "ARGS=\"-p 6379\"; if [ -n \"$REDIS_PASSWORD\" ]; then ARGS=\"$ARGS -a $REDIS_PASSWORD\"; fi; redis-cli $ARGS ping",
        "ARGS=\"-h 127.0.0.1\"; if [ -f /tmp/tls ]; then ARGS=\"-h localhost --tls\"; fi; redis-cli $ARGS ping",
    ]);
    // The warning names what is uncertain; no password is ever shown, the script's own or one
    // from the container's env.
    let got = finding("sh", warned[0]).unwrap();
    assert!(
        got.1.contains("redis-master.cache.svc") && got.1.contains("only some of the values of $ARGS"),
        "{got:?}"
    );
    for script in [
        "ARGS=\"-h redis-master.cache.svc -a s3cr3t-pw\"; if [ -f /tmp/noauth ]; then ARGS=\"-h redis-master.cache.svc\"; fi; redis-cli $ARGS ping",
        "ARGS=\"-h localhost -a s3cr3t-pw\"; if [ -f /tmp/remote ]; then ARGS=\"-h redis-master.cache.svc -a s3cr3t-pw\"; fi; redis-cli $ARGS ping",
        denied[2],
    ] {
        for shell in ["sh", "bash"] {
            let got = finding(shell, script).unwrap_or_else(|| panic!("{shell} {script}"));
            assert!(!got.1.contains("s3cr3t"), "{shell} {script}: {got:?}");
        }
    }
}

/// Item 2: A known client given no host but the words of a value known only at run time (`$ARGS`
/// not in the script or the container's env, `$(cat FILE)`): not its local default (redis-cli's
/// 127.0.0.1), the host is known only at run time: a warning naming that, never a denial, also
/// where the variable's name says it is a host. Silent on main 2c3f567 (0 / 1 in bash and dash
/// when the words are `-h redis-master`). A quoted word is one argument, no option; a host given
/// besides (a documented limit), or a literal value, is read as before.
#[test]
fn a_client_given_unknown_words_and_no_host_is_warned() {
    let warned = [
        "redis-cli $ARGS ping",
        "redis-cli ${ARGS} ping",
        "redis-cli $(cat /etc/redis-args) ping",
        "pg_isready $PG_OPTS",
        "mysqladmin $MYSQL_OPTS ping",
        "redis-cli $REDIS_HOST ping",
        "timeout 3 redis-cli $ARGS ping",
    ];
    expect_actions(&warned, &[]);
    let got = finding("sh", warned[0]).unwrap();
    assert!(got.1.contains("$ARGS (its words are known only at run time and may set the host"), "{got:?}");
    expect_quiet(&[
        "redis-cli \"$ARGS\" ping",
        "redis-cli -h localhost $ARGS ping",
        "redis-cli ping",
        "ARGS='-p 6380'; redis-cli $ARGS ping",
    ]);
}

/// Item 3: Values known only at run time (an array filled from a file) used as hosts: a warning, not
/// silence or a note. `arr=($(cat FILE))` splits the output into any number of elements, so
/// `${arr[1]}` is not empty (it read as empty, redis-cli's local default: silent on main
/// 2c3f567); `mapfile`/`readarray` fill the array from their input (a note "script variable not
/// known" on main). An array of known words is split as bash splits it: `${arr[1]}` of `($H)`
/// with two remote names is the second (bash 0 / 1), denied.
#[test]
fn array_elements_known_only_at_run_time_are_warned() {
    let warned = [
        "arr=($(cat /etc/hosts-list)); for h in \"${arr[@]}\"; do redis-cli -h \"$h\" ping || exit 1; done",
        "arr=($(cat /etc/hosts-list)); redis-cli -h \"${arr[1]}\" ping",
        "arr=( $(cat /etc/hosts-list) ); redis-cli -h \"${arr[0]}\" ping",
        "mapfile -t arr < /etc/hosts-list; for h in \"${arr[@]}\"; do redis-cli -h \"$h\" ping || exit 1; done",
        "readarray -t arr < /etc/hosts-list; redis-cli -h \"${arr[2]}\" ping",
        "mapfile < /etc/hosts-list; redis-cli -h \"${MAPFILE[0]}\" ping",
    ];
    for script in warned {
        let got = finding("bash", script);
        assert!(got.as_ref().is_some_and(|g| g.0 == Action::Warn), "{script}: {got:?}");
    }
    let denied = "H='redis-a.cache.svc redis-b.cache.svc'; arr=($H); redis-cli -h \"${arr[1]}\" ping";
    let got = finding("bash", denied);
    assert!(
        got.as_ref().is_some_and(|g| g.0 == Action::Deny && g.1.contains("redis-b.cache.svc")),
        "{got:?}"
    );
    for quiet in [
        "arr=(localhost 127.0.0.1); for h in \"${arr[@]}\"; do redis-cli -h \"$h\" ping || exit 1; done",
        "H='localhost 127.0.0.1'; arr=($H); redis-cli -h \"${arr[1]}\" ping",
        "arr=(\"$(hostname -i)\"); redis-cli -h \"${arr[0]}\" ping",
    ] {
        assert_eq!(finding("bash", quiet), None, "{quiet}");
    }
}

/// Item 4: A function whose `if` exits 0 when the check passes, and a caller that goes on to fail:
/// `check() { if C; then exit 0; fi; }; check; exit 1` is 0 / 1 in bash and dash (the `if`
/// with no branch taken, and the call, give 0, then `exit 1`): denied (warned on main 2c3f567,
/// "no branch fails by itself"). Where the caller goes on to pass, 0 / 0: still a warning.
#[test]
fn an_exit_in_a_functions_branch_is_judged_with_what_the_caller_runs_next() {
    let denied = [
        format!("check() {{ if {C}; then exit 0; fi; }}; check; exit 1"),
        format!("check() {{ if {C}; then exit 0; fi; }}; check; false"),
        format!("check() {{ if {C}; then echo up; exit 0; fi; }}; check; echo down; exit 1"),
    ];
    let warned = [
        format!("check() {{ if {C}; then exit 0; fi; }}; check; exit 0"),
        format!("check() {{ if {C}; then exit 0; fi; }}; check"),
        format!("check() {{ if {C}; then exit 0; fi; }}; check; echo x"),
    ];
    let denied: Vec<&str> = denied.iter().map(String::as_str).collect();
    let warned: Vec<&str> = warned.iter().map(String::as_str).collect();
    expect_actions(&warned, &denied);
}

/// Item 5: A check in a function's `local X=$(...)` is warned (its status is the declaration's, 0 / 0
/// in bash), and the message names `local`, not `export` (it did before s24:
/// `status::reasons::declared` names each declaration builtin).
#[test]
fn a_check_in_a_local_declaration_is_named_as_local() {
    let got = finding("bash", &format!("f() {{ local X=$({C}); echo ok; }}; f")).unwrap();
    assert_eq!(got.0, Action::Warn, "{got:?}");
    assert!(got.1.contains("(`local X=$(...)`)") && !got.1.contains("export"), "{got:?}");
}

/// Item 7: With `liveness-dependency: off`, a liveness check that reaches another workload is still not
/// copied into a startup probe, and the `startup-probe` warning stays a warning (decided, s24:
/// docs/rules.md, startup-probe), so `check --fail-on warn` fails on it; its message says how to
/// accept no startup probe, and `startup-probe: off` in the policy does that (exit 0).
#[test]
fn a_startup_probe_not_added_with_liveness_dependency_off_stays_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let pod = dir.join("pod.yaml");
    std::fs::write(
        &pod,
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  containers:\n  - name: app\n    image: a\n    \
             livenessProbe: {{exec: {{command: [sh, -c, '{C}']}}, timeoutSeconds: 5}}\n"
        ),
    )
    .unwrap();
    let run = |policy: &str| {
        let file = dir.join("policy.yaml");
        std::fs::write(
            &file,
            format!("apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\nrules:\n{policy}"),
        )
        .unwrap();
        std::process::Command::new(env!("CARGO_BIN_EXE_probegate"))
            .args(["check", "--fail-on", "warn", "--policy"])
            .arg(&file)
            .arg(&pod)
            .output()
            .unwrap()
    };
    let off = run("  liveness-dependency: {action: off}\n");
    let out = String::from_utf8_lossy(&off.stdout);
    assert_eq!(off.status.code(), Some(1), "{out}");
    assert!(out.contains("warn") && out.contains("set startup-probe off here to accept none"), "{out}");
    assert!(!out.contains("(liveness-dependency)"), "{out}");
    let both = run("  liveness-dependency: {action: off}\n  startup-probe: {action: off}\n");
    assert_eq!(both.status.code(), Some(0), "{}", String::from_utf8_lossy(&both.stdout));
}

/// The liveness-matches-readiness findings of a Pod whose liveness and readiness probes run
/// `live` and `ready` (each an exec argv in YAML flow style).
fn matches_readiness(live: &str, ready: &str) -> usize {
    let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop"},
        "spec": {"containers": [{"name": "c", "image": "x",
            "livenessProbe": {"exec": {"command": serde_json::from_str::<serde_json::Value>(live).unwrap()}},
            "readinessProbe": {"exec": {"command": serde_json::from_str::<serde_json::Value>(ready).unwrap()}}}]}});
    let e = probegate::admission::evaluate_object_with_configmaps(
        &Policy::default(),
        &common::workload(&pod),
        "shop",
        None,
        &probegate::engine::NoConfigMaps,
    );
    e.evaluation.findings.iter().filter(|f| f.rule == RuleId::LivenessMatchesReadiness).count()
}

/// Item 8: liveness-matches-readiness promises "same command, where a client's explicit loopback host
/// equal to its local default is the same as none" (docs/rules.md, README): it held for one
/// command and missed the same loopback check in a pipeline written with other blanks or an
/// explicit loopback host (`redis-cli ping | grep PONG` and `redis-cli -h 127.0.0.1 ping|grep
/// PONG`). Different checks, or a remote host, still do not match.
#[test]
fn the_same_loopback_check_in_a_pipeline_matches() {
    let same = [
        (
            r#"["sh", "-c", "curl -sf localhost:8080/healthz | grep ok"]"#,
            r#"["sh", "-c", "curl -sf localhost:8080/healthz | grep ok"]"#,
        ),
        (
            r#"["sh", "-c", "curl -sf localhost:8080/healthz | grep ok"]"#,
            r#"["sh", "-c", "curl -sf localhost:8080/healthz|grep ok"]"#,
        ),
        (
            r#"["sh", "-c", "curl -sf localhost:8080/healthz | grep ok"]"#,
            r#"["bash", "-c", "curl -sf  localhost:8080/healthz | grep ok"]"#,
        ),
        (
            r#"["sh", "-c", "redis-cli ping | grep PONG"]"#,
            r#"["sh", "-c", "redis-cli -h 127.0.0.1 ping|grep PONG"]"#,
        ),
        (
            r#"["sh", "-c", "redis-cli ping && echo ok"]"#,
            r#"["sh", "-c", "redis-cli -h localhost ping && echo ok"]"#,
        ),
    ];
    for (live, ready) in same {
        assert_eq!(matches_readiness(live, ready), 1, "{live} {ready}");
    }
    let different = [
        (
            r#"["sh", "-c", "curl -sf localhost:8080/healthz | grep ok"]"#,
            r#"["sh", "-c", "curl -sf localhost:8080/ready | grep ok"]"#,
        ),
        (r#"["sh", "-c", "redis-cli ping | grep PONG"]"#, r#"["sh", "-c", "redis-cli ping || grep PONG"]"#),
        (r#"["sh", "-c", "redis-cli ping | grep PONG"]"#, r#"["sh", "-c", "redis-cli ping"]"#),
        (
            r#"["sh", "-c", "curl -sf localhost:8080/healthz | grep ok"]"#,
            r#"["sh", "-c", "curl -sf localhost:8080/healthz & grep ok"]"#,
        ),
    ];
    for (live, ready) in different {
        assert_eq!(matches_readiness(live, ready), 0, "{live} {ready}");
    }
}

/// Item 9a: `pod_output::split_or_list` skips operators inside parentheses (its `depth > 0` guard): a
/// filter's argument with `&&` in a nested substitution leaves the `||` alternatives as they are,
/// each this Pod (`hostname -I | cut ...` or the loopback): no finding. With the guard made
/// `false` (the `&&` read as the list's own), the whole is not read as this Pod's output, and the
/// host was warned as known only at run time (checked with the mutant applied by hand, s24).
#[test]
fn an_operator_in_a_nested_substitution_keeps_the_alternatives_this_pod() {
    expect_quiet(&[
        "host=$(hostname -I | cut -d' ' -f$(true && echo 1) || echo 127.0.0.1); redis-cli -h \"$host\" ping",
        "redis-cli -h \"$(hostname -I | cut -d' ' -f$(true && echo 1) || echo 127.0.0.1)\" ping",
    ]);
    expect_actions(
        &[
            "host=$(hostname -I | cut -d' ' -f$(true && echo 1) || echo redis-master); redis-cli -h \"$host\" ping",
        ],
        &[],
    );
}

/// Item 9b: `zero::only_tests` takes `[ A -eq B ]` and `[[ ... ]]` without an integer comparison as
/// tests (its `||`): `if C && [ 1 -eq 1 ]; then echo ok; fi; curl ...` exits 0 / 0 in bash 5.2
/// and dash 0.5.12 (curl of this Pod answering): a warning; `C && [ 1 -eq 1 ]` last is 0 / 1,
/// denied.
#[test]
fn a_test_right_of_the_check_with_an_integer_comparison_only_tests() {
    let warned = [
        format!("if {C} && [ 1 -eq 1 ]; then echo ok; fi; curl -sf localhost:8080/healthz"),
        format!("if {C} && [ \"$n\" -ge 0 ]; then echo ok; fi; curl -sf localhost:8080/healthz"),
    ];
    let denied = [format!("{C} && [ 1 -eq 1 ]")];
    let warned: Vec<&str> = warned.iter().map(String::as_str).collect();
    let denied: Vec<&str> = denied.iter().map(String::as_str).collect();
    expect_actions(&warned, &denied);
    let got =
        finding("bash", &format!("if {C} && [[ -n x ]]; then echo ok; fi; curl -sf localhost:8080/healthz"));
    assert!(got.as_ref().is_some_and(|g| g.0 == Action::Warn), "{got:?}");
}

/// Item 6: `probegate check` of a Pod whose readiness or startup probe runs a script from a ConfigMap
/// volume not in the check's input says the script was not read, as it does for a liveness
/// probe's (it said nothing on main 2c3f567); the same script in liveness and readiness is noted
/// once; with the ConfigMap in the input, nothing.
#[test]
fn a_readiness_or_startup_script_not_read_is_noted() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let pod = |probes: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  containers:\n  - name: app\n    image: a\n\
             {probes}    volumeMounts: [{{name: s, mountPath: /scripts}}]\n  volumes:\n  - name: s\n    configMap: {{name: probe-scripts}}\n"
        )
    };
    let run = |name: &str, text: &str| {
        let file = dir.join(name);
        std::fs::write(&file, text).unwrap();
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_probegate"))
            .arg("check")
            .arg(&file)
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
    };
    let exec = "{exec: {command: [/scripts/check.sh]}}";
    let out = run("ready.yaml", &pod(&format!("    readinessProbe: {exec}\n")));
    assert!(
        out.contains(
            "container app: readiness script /scripts/check.sh not analysed (ConfigMap default/probe-scripts"
        ),
        "{out}"
    );
    let out = run("startup.yaml", &pod(&format!("    startupProbe: {exec}\n")));
    assert!(out.contains("container app: startup script /scripts/check.sh not analysed"), "{out}");
    let out = run("both.yaml", &pod(&format!("    livenessProbe: {exec}\n    readinessProbe: {exec}\n")));
    assert_eq!(out.matches("script /scripts/check.sh not analysed").count(), 1, "{out}");
    assert!(out.contains("liveness script /scripts/check.sh not analysed"), "{out}");
    let cm = "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: probe-scripts}\ndata:\n  check.sh: |\n    #!/bin/sh\n    curl -sf localhost:8080/ready\n";
    let out = run("with-cm.yaml", &(pod(&format!("    readinessProbe: {exec}\n")) + cm));
    assert!(!out.contains("not analysed"), "{out}");
}
