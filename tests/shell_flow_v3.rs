//! Session 20, false-deny pass: liveness exec probes whose verdict rests on where a check's status
//! goes, and a probe's `$(NAME)` the kubelet empties in a curl URL. Every row was run in bash 5.2 and dash 0.5.12 with stub clients (`pg_isready` exits 0
//! with the database up, 2 with it down): the warned rows exit the same up and down (0 / 0; 7 / 7
//! where a `curl` of localhost finds no server here), the
//! denied rows fail only with the database down (0 / 1 or 0 / 2).

use probegate::policy::Action;

mod common;
use common::flow::*;

/// The check's status saved (`rc=$?`) and handed to a function of the script inside a longer
/// argument (`log "rc $rc"`, `log rc=$rc`), where the function only writes its arguments out
/// (`log() { echo "$@"; }`) or ignores them: the word `rc` in the string is text the function
/// prints, not a read of the variable, so the status reaches nothing (0 / 0: denied before s20).
/// Still denied where the status does reach the script's: a function that returns, exits with
/// or tests what it is given (`return $1`, `exit "$1"` handed `$?`, `[ "$1" = ... ]`), the
/// printed text read by a pipeline (`| grep -q`), or the variable read again as a name by
/// bash's arithmetic (`[[ rc -eq 0 ]]`, which reads `rc` unquoted or quoted: 0 / 1 in bash).
#[test]
fn a_status_handed_to_a_function_inside_a_string_it_only_prints_is_a_warning() {
    let warned = [
        "log() { echo \"$@\"; }; pg_isready -h orders-db; rc=$?; log \"rc $rc\"",
        "log() { echo \"$@\"; }; pg_isready -h orders-db; rc=$?; log rc=$rc",
        "log() { echo \"$@\"; }; pg_isready -h orders-db; rc=$?; log \"rc: ${rc}\" >&2",
        "log() { echo \"$@\"; }; pg_isready -h orders-db; rc=$?; log 'rc' \"$rc\"",
        "log() { :; }; pg_isready -h orders-db; rc=$?; log \"rc $rc\"",
        "log() { printf '%s\\n' \"$*\"; }; pg_isready -h orders-db; rc=$?; log \"pg_isready rc=$rc\"; curl -sf localhost:8080/",
        "pg_isready -h orders-db; rc=$?; echo \"rc $rc\"; curl -sf localhost:8080/",
        "pg_isready -h orders-db; rc=$?; logger \"rc $rc\"; sleep 0",
    ];
    let denied = [
        "f() { return $1; }; pg_isready -h orders-db; f $?",
        "f() { exit \"$1\"; }; pg_isready -h orders-db; f \"$?\"",
        "f() { [ \"$1\" = 0 ]; }; pg_isready -h orders-db; rc=$?; f \"$rc\"",
        "f() { [ \"$1\" = \"rc 0\" ]; }; pg_isready -h orders-db; rc=$?; f \"rc $rc\"",
        "log() { echo \"$@\"; }; pg_isready -h orders-db; rc=$?; log \"rc $rc\" | grep -q \"rc 0\"",
        "log() { echo \"$@\"; }; pg_isready -h orders-db; rc=$?; log \"rc $rc\"; exit $rc",
        "log() { echo \"$@\"; }; pg_isready -h orders-db; rc=$?; log \"rc $rc\"; [ $rc -eq 0 ]",
        "pg_isready -h orders-db; rc=$?; echo \"rc $rc\"; x=$(echo rc); [ \"$rc\" = 0 ]",
    ];
    expect_actions(&warned, &denied);
    // bash reads a bare word as a variable in `[[ -eq ]]` and in `let`'s expression, quoted or
    // not (0 / 1; dash has no `[[` nor `let`: 127 / 127): the text `rc` there is no printed text.
    for script in [
        "log() { echo \"$@\"; }; pg_isready -h orders-db; rc=$?; log \"rc $rc\"; [[ rc -eq 0 ]]",
        "pg_isready -h orders-db; rc=$?; echo \"rc $rc\"; let \"rc == 0\"",
        "pg_isready -h orders-db; rc=$?; echo \"rc $rc\"; let rc==0",
    ] {
        let got = finding_of(&["bash", "-c", script]);
        assert!(got.as_ref().is_some_and(|g| g.0 == Action::Deny), "{script}: {got:?}");
    }
}

/// A check run in the background at the top level (`pg_isready -h orders-db &`, alone or with
/// commands after it) is not waited for: its status never reaches the script's (bash 5.2 and
/// dash 0.5.12: 0 / 0), so it is a warning that says so, neither a denial nor nothing (a hang
/// is still only a hang of the background job). The rows with `kill`, `eval`, `source` or a
/// `trap` that may end the script are scripts whose statuses the walk of `status::discarded`
/// does not follow: only `flow::uncoupled`'s background rule sees them (cargo-mutants: deleting
/// the `!` of its parent check, `flow/uncoupled.rs`, denied them).
#[test]
fn a_check_run_in_the_background_at_the_top_level_is_a_warning() {
    let rows = [
        "pg_isready -h orders-db &",
        "pg_isready -h orders-db & sleep 1",
        "pg_isready -h orders-db &\nsleep 1",
        "pg_isready -h orders-db > /dev/null &",
        "pg_isready -h orders-db & kill -0 1",
        // (`kill -CONT`, not `kill -0`: `kill -0` sends no signal and the walk now reads it as
        // a test, s25, so the row would no longer reach the background rule alone; 0 / 0 both.)
        "pg_isready -h orders-db &\nkill -CONT 1; echo ok",
        "pg_isready -h orders-db & eval \"echo started\"",
        "pg_isready -h orders-db & trap 'exit 1' TERM; sleep 1",
        "pg_isready -h orders-db & . /dev/null",
    ];
    let mut wrong = wrong_actions(&rows, Action::Warn);
    for script in rows {
        let got = finding_of(&["sh", "-c", script]);
        if !got.as_ref().is_some_and(|g| g.1.contains("it runs in the background (`&`)")) {
            wrong.push(format!("background reason expected: {script:?}: {got:?}"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// `status::calls` reads a function's definitions from the script's top-level statements, looking
/// into a statement only when its text holds the name: a definition nested anywhere (an `if`
/// branch, a loop, a `{ }`, another function's body) leaves the call to the walk, as every
/// definition found by walking the whole tree did before s20. A `( )` body is read as a `{ }`
/// one (its status is its last command's): `log() ( echo "$@" ); ...; log $?` and `f() ( : )`
/// exit 0 / 0 and were denied; `f() ( exit $1 )` (0 / 2) and `f() ( [ "$1" = 0 ] )` stay denied. Each
/// denied row redefines `log` to test what it is given before the call (0 / 1 in bash 5.2 and
/// dash 0.5.12; only this reading keeps them denied: checked with the nested look removed); the
/// warned ones define it once, as a top-level `{ }` that only writes (0 / 0).
#[test]
fn a_function_s_definitions_are_read_from_the_top_level_and_nested_ones_keep_the_call_coupled() {
    let warned = [
        "log() { echo \"$@\"; }; pg_isready -h orders-db; log $?",
        "log() { echo \"$@\"; }\nsetup() { echo start; }\npg_isready -h orders-db; rc=$?; log \"rc $rc\"",
        "log() ( echo \"$@\" ); pg_isready -h orders-db; log $?",
        "log() ( echo \"$@\" ); pg_isready -h orders-db; rc=$?; log \"rc $rc\"",
        "f() ( : ); pg_isready -h orders-db; f $?",
    ];
    let denied = [
        "log() { echo \"$@\"; }; if true; then log() { [ \"$1\" = 0 ]; }; fi; pg_isready -h orders-db; log $?",
        "log() { echo \"$@\"; }; for i in 1; do log() { [ \"$1\" = 0 ]; }; done; pg_isready -h orders-db; log $?",
        "log() { echo \"$@\"; }; { log() { [ \"$1\" = 0 ]; }; }; pg_isready -h orders-db; log $?",
        "log() { echo \"$@\"; }; setup() { log() { [ \"$1\" = 0 ]; }; }; setup; pg_isready -h orders-db; log $?",
        "f() ( exit $1 ); pg_isready -h orders-db; f $?",
        "f() ( [ \"$1\" = 0 ] ); pg_isready -h orders-db; f $?",
        "log() ( echo \"$@\" ); pg_isready -h orders-db; log $? | grep -q 0",
    ];
    expect_actions(&warned, &denied);
}

/// The liveness-dependency findings (action, message) of a Pod whose container has `POD_IP` from
/// `status.podIP` (a `valueFrom` variable) and the exec liveness probe `command` (a JSON list).
fn pod_ip_findings(command: &str) -> Vec<(Action, String)> {
    let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop"},
        "spec": {"containers": [{"name": "c", "image": "shop/api:1",
            "env": [{"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}],
            "livenessProbe": {"exec": {"command": serde_json::from_str::<serde_json::Value>(command).unwrap()}}}]}});
    let e = probegate::admission::evaluate_object_with_configmaps(
        &probegate::policy::Policy::default(),
        &common::workload(&pod),
        "shop",
        None,
        &probegate::engine::NoConfigMaps,
    );
    e.evaluation
        .findings
        .iter()
        .filter(|f| f.rule == probegate::policy::RuleId::LivenessDependency)
        .map(|f| (f.action, f.describe()))
        .collect()
}

/// A probe's `$(POD_IP)` of a `valueFrom` variable is the empty string (the kubelet's prober
/// expands a probe's command from `env` values only: `ExpandContainerCommandOnlyStatic`), so
/// `curl -sf http://$(POD_IP):8080/healthz` runs `curl -sf http://:8080/healthz`, which curl
/// 7.88.1 refuses before connecting (exit 3, also with `-x`, `--resolve` or `--unix-socket`):
/// the probe fails every time. It gave no finding (the author meant this Pod); now a warning
/// that shows the URL curl gets and says to write `$POD_IP` in `sh -c`. None where the probe need not fail: a
/// `|| true`, a second URL (curl's status is its last transfer's), the shell's `$POD_IP`, and
/// `http://$(POD_IP)/healthz`, which curl reads as the host `healthz` (exit 6 here, not 3).
#[test]
fn a_curl_url_whose_host_the_kubelet_emptied_fails_every_time_and_is_a_warning() {
    for command in [
        r#"["sh", "-c", "curl -sf http://$(POD_IP):8080/healthz"]"#,
        r#"["curl", "-sf", "http://$(POD_IP):8080/healthz"]"#,
        r#"["/bin/bash", "-ec", "curl -sf \"https://$(POD_IP):8443/healthz\""]"#,
        r#"["curl", "-sf", "http://$(POD_IP)"]"#,
    ] {
        let f = pod_ip_findings(command);
        assert_eq!(f.len(), 1, "{command}: {f:?}");
        assert_eq!(f[0].0, Action::Warn, "{command}");
        for part in [
            "curl gets `http",
            "://",
            "$(POD_IP) from valueFrom is empty",
            "no host: curl exits 3 every time",
            "use $POD_IP in sh -c",
        ] {
            assert!(f[0].1.contains(part), "{part}: {}", f[0].1);
        }
        assert!(!f[0].1.contains("$(POD_IP):"), "{}", f[0].1);
    }
    for command in [
        r#"["sh", "-c", "curl -sf http://$(POD_IP):8080/healthz || true"]"#,
        r#"["sh", "-c", "curl -sf http://$(POD_IP):8080/ http://localhost:8080/"]"#,
        r#"["sh", "-c", "curl -sf http://$POD_IP:8080/healthz"]"#,
        r#"["sh", "-c", "curl -sf http://$(POD_IP)/healthz"]"#,
        r#"["sh", "-c", "echo http://$(POD_IP):8080/"]"#,
    ] {
        assert_eq!(pod_ip_findings(command), [], "{command}");
    }
}
