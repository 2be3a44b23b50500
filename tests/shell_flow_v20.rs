//! Session 27, false denials of the liveness-dependency rule (s27-fdb): shapes left from s26
//! whose exit status is the same with the dependency up and down. Every row was run in bash
//! 5.2.15 and dash 0.5.12 with stub clients on PATH (`redis-cli` exits 0 up and 1 down,
//! `pg_isready` 0 up and 2 down), with `test -d /` standing for the local check `curl -f
//! localhost:8080/live`; each row's statuses, up / down, are in its comment ("0 / 0" or "1 / 1"
//! is not coupled: never a denial; "0 / 1" in both shells is). Every warned row was denied on
//! main 559344a.

mod common;
use common::flow::*;
use probegate::admission;
use probegate::engine::NoConfigMaps;
use probegate::policy::{Action, Policy, RuleId};

/// An EXIT trap whose `kill` signals a target that is the same on every path (a literal pid, a
/// variable the script never sets) runs as the shell exits: the shell then exits with the status
/// it had (POSIX `trap`), so a check not last changes nothing. The check last, or `|| exit 1`, or
/// a bare `exit` in the action beside the `kill`, stays coupled.
#[test]
fn an_exit_trap_that_kills_a_steady_target_changes_no_status() {
    let warned = [
        // bash 0 / 0, dash 0 / 0.
        "trap 'kill 42' EXIT; redis-cli -h redis-master.cache.svc ping; echo ok",
        // bash 0 / 0, dash 0 / 0.
        "trap 'rm -f /tmp/x; kill $p 2>/dev/null' EXIT; redis-cli -h redis-master.cache.svc ping; echo ok",
        // bash 0 / 0, dash 0 / 0.
        "trap 'kill -TERM 4242' EXIT; redis-cli -h redis-master.cache.svc ping; curl -f localhost:8080/live",
        // bash 0 / 0, dash 0 / 0.
        "trap 'kill ${WORKER_PID} 2>/dev/null' EXIT; redis-cli -h redis-master.cache.svc ping; curl -f localhost:8080/live",
        // bash 0 / 0, dash 0 / 0.
        "trap 'kill 42' EXIT; redis-cli -h redis-master.cache.svc ping || echo down; curl -f localhost:8080/live",
    ];
    let denied = [
        // bash 0 / 1, dash 0 / 1.
        "trap 'kill 42' EXIT; redis-cli -h redis-master.cache.svc ping",
        // bash 0 / 1, dash 0 / 1.
        "trap 'kill 42' EXIT; redis-cli -h redis-master.cache.svc ping || exit 1; curl -f localhost:8080/live",
        // bash 0 / 1, dash 0 / 1.
        "trap 'kill 42; exit' EXIT; redis-cli -h redis-master.cache.svc ping",
        // bash 0 / 1, dash 0 / 1.
        "trap 'rm -f /tmp/x; kill $p 2>/dev/null' EXIT; redis-cli -h redis-master.cache.svc ping",
        // bash 0 / 1, dash 0 / 1.
        "p=42; trap 'kill $p' EXIT; redis-cli -h redis-master.cache.svc ping || exit 1; curl -f localhost:8080/live",
    ];
    expect_actions(&warned, &denied);
}

/// `C || kill %1` (or `kill $p`, `p=$!`) signals a background child only: the shell's state is
/// untouched, and the status is followed on as a command that may only fail. A `kill $$` (the
/// shell itself: 143) or an `exit 1` beside the `kill` stays coupled.
#[test]
fn killing_a_background_child_after_a_failed_check_changes_no_status() {
    let warned = [
        // bash 0 / 0, dash 0 / 0.
        "sleep 100 & redis-cli -h redis-master.cache.svc ping || kill %1; echo ok",
        // bash 0 / 0, dash 0 / 0.
        "sleep 100 & p=$!; redis-cli -h redis-master.cache.svc ping || kill $p; echo ok",
        // bash 0 / 0, dash 0 / 0.
        "sleep 100 & p=$!; redis-cli -h redis-master.cache.svc ping || kill $p 2>/dev/null; curl -f localhost:8080/live",
        // bash 0 / 0, dash 0 / 0.
        "sleep 100 & redis-cli -h redis-master.cache.svc ping || kill -9 %1; curl -f localhost:8080/live",
        // bash 0 / 0, dash 0 / 0 (a `kill` after `then`/`else` was not read as one, s27).
        "sleep 60 & pid=$!; if ! redis-cli -h redis-master.cache.svc ping; then kill $pid; fi; curl -f localhost:8080/live",
        // bash 0 / 0, dash 0 / 0.
        "sleep 60 & pid=$!; if redis-cli -h redis-master.cache.svc ping; then :; else kill $pid; fi; curl -f localhost:8080/live",
    ];
    let denied = [
        // bash 0 / 1, dash 0 / 1.
        "sleep 100 & p=$!; redis-cli -h redis-master.cache.svc ping || { kill $p; exit 1; }; curl -f localhost:8080/live",
        // bash 0 / 143, dash 0 / 143.
        "sleep 100 & redis-cli -h redis-master.cache.svc ping || kill $$; curl -f localhost:8080/live",
        // bash 0 / 1, dash 0 / 1.
        "sleep 60 & pid=$!; if ! redis-cli -h redis-master.cache.svc ping; then kill $pid; exit 1; fi; curl -f localhost:8080/live",
    ];
    expect_actions(&warned, &denied);
}

/// A team's helper script (`tests/fixtures/scripts/s27b_helper_kill.sh`): a helper started for
/// the check, killed by the EXIT trap and after a failed check. bash 0 / 0, dash 0 / 0.
#[test]
fn a_helper_killed_by_its_trap_and_after_the_check_is_a_warning() {
    let script = include_str!("fixtures/scripts/s27b_helper_kill.sh");
    expect_actions(&[script], &[]);
    // The check last instead of the local one: bash 0 / 1, dash 0 / 1.
    let last = script.replace(" > /dev/null || kill $helper\ncurl -f localhost:8080/live\n", "\n");
    assert_ne!(last, script);
    expect_actions(&[], &[&last]);
}

/// Lists that fail whatever the check gives: `C && exit 1` followed by `|| false`, by `&& ...`
/// (never run), or by `|| true; false`. A warning that says the probe fails every time; the
/// inverted `C && exit 1 || true` and the plain `C && exit 0 || exit 1` stay denied.
#[test]
fn lists_that_always_fail_are_never_coupled() {
    let warned = [
        // bash 1 / 1, dash 1 / 1.
        "redis-cli -h redis-master.cache.svc ping && exit 1 || false",
        // bash 1 / 1, dash 1 / 1.
        "redis-cli -h redis-master.cache.svc ping && exit 1 && echo ok",
        // bash 1 / 1, dash 1 / 1.
        "redis-cli -h redis-master.cache.svc ping && exit 1 || true; false",
        // bash 2 / 1, dash 2 / 1.
        "echo start; redis-cli -h redis-master.cache.svc ping && exit 2 && echo up",
        // bash 1 / 1, dash 1 / 1.
        "redis-cli -h redis-master.cache.svc ping && exit 1 || true; echo checked; false",
        // bash 1 / 2, dash 1 / 2.
        "redis-cli -h redis-master.cache.svc ping && exit 1 || exit 2 || false",
    ];
    let denied = [
        // bash 0 / 1, dash 0 / 1.
        "redis-cli -h redis-master.cache.svc ping && exit 0 || exit 1",
        // bash 1 / 0, dash 1 / 0.
        "redis-cli -h redis-master.cache.svc ping && exit 1 || true",
        // bash 1 / 0, dash 1 / 0.
        "redis-cli -h redis-master.cache.svc ping && exit 1 || echo down",
        // bash 1 / 0, dash 1 / 0.
        "redis-cli -h redis-master.cache.svc ping && exit 1 || true; true",
    ];
    expect_actions(&warned, &denied);
    for script in &warned[..3] {
        let (_, text) = finding_of(&["sh", "-c", script]).expect("a finding");
        assert!(text.contains("fails every time"), "{script}: {text}");
    }
}

/// A loop whose body leaves at once: `while C; do exit 0; done` (the check's success exits 0, its
/// failure ends the loop with 0), and a loop in a pipeline, whose `exit` ends only its own
/// element (the pipeline's status is the last command's). A loop that waits, a body's `exit 1`
/// outside a pipeline, a failure after the loop, or the loop's output tested stay coupled.
#[test]
fn loops_left_at_once_or_in_a_pipeline_change_no_status() {
    let warned = [
        // bash 0 / 0, dash 0 / 0.
        "until redis-cli -h redis-master.cache.svc ping; do echo down; exit 0; done | cat",
        // bash 0 / 0, dash 0 / 0.
        "while redis-cli -h redis-master.cache.svc ping; do exit 0; done",
        // bash 0 / 0, dash 0 / 0.
        "until redis-cli -h redis-master.cache.svc ping; do exit 1; done | cat",
        // bash 0 / 0, dash 0 / 0.
        "while redis-cli -h redis-master.cache.svc ping; do echo up; exit 0; done; curl -f localhost:8080/live",
        // bash 0 / 0, dash 0 / 0.
        "while ! redis-cli -h redis-master.cache.svc ping; do echo down; exit 3; done | cat; curl -f localhost:8080/live",
        // bash 0 / 0, dash 0 / 0.
        "until redis-cli -h redis-master.cache.svc ping; do echo down >&2; exit 0; done | cat > /dev/null",
    ];
    let denied = [
        // bash 1 / 0, dash 1 / 0.
        "until redis-cli -h redis-master.cache.svc ping; do echo down; exit 0; done | grep -q down",
        // bash 0 / 1, dash 0 / 1.
        "while redis-cli -h redis-master.cache.svc ping; do exit 0; done; exit 1",
        // bash 0 / 1, dash 0 / 1.
        "while redis-cli -h redis-master.cache.svc ping; do exit 0; done; false",
        // bash 0 / 1, dash 0 / 1.
        "until redis-cli -h redis-master.cache.svc ping; do echo down; exit 1; done",
        // bash 0 / 124 (the probe times out), dash 0 / 124.
        "until redis-cli -h redis-master.cache.svc ping; do sleep 1; done | cat",
        // bash 0 / 1, dash 0 / 1.
        "until redis-cli -h redis-master.cache.svc ping; do echo down; exit 0; done | cat; redis-cli -h redis-master.cache.svc ping || exit 1",
        // bash 0 / 1, dash 0 / 1: a check with `|| exit 1` inside the loop's body.
        "until redis-cli -h redis-master.cache.svc ping; do redis-cli -h redis-master.cache.svc ping || exit 1; exit 0; done",
    ];
    expect_actions(&warned, &denied);
}

/// The liveness-dependency finding (action, message) of a container whose env is `SVC:
/// postgres`, then `DB_HOST: "$(SVC).shop.svc"`, and whose liveness probe runs `argv`.
fn composed_env_finding(argv: &[&str]) -> Option<(Action, String)> {
    let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop"},
        "spec": {"containers": [{"name": "c", "image": "x",
            "env": [{"name": "SVC", "value": "postgres"}, {"name": "DB_HOST", "value": "$(SVC).shop.svc"}],
            "livenessProbe": {"exec": {"command": argv}}}]}});
    let e = admission::evaluate_object_with_configmaps(
        &Policy::default(),
        &common::workload(&pod),
        "shop",
        None,
        &NoConfigMaps,
    );
    e.evaluation
        .findings
        .iter()
        .find(|f| f.rule == RuleId::LivenessDependency)
        .map(|f| (f.action, f.describe()))
}

/// The kubelet expands a probe's `$(VAR)` from the container's env values as written, one pass
/// (`ExpandContainerCommandOnlyStatic`, kubernetes/kubernetes pkg/kubelet/container/helpers.go):
/// `$(DB_HOST)` of `DB_HOST: "$(SVC).shop.svc"` is the text `$(SVC).shop.svc`. exec: a host no
/// resolver knows, pg_isready 2 / 2; `sh -c`: `$(SVC)` runs a command named SVC (not found),
/// host `.shop.svc`, 2 / 2 in bash 5.2.15 and dash 0.5.12. Never a denial. The shell's
/// `$DB_HOST` reads the container's environment, where the kubelet did resolve the reference
/// (`postgres.shop.svc`: coupled, 0 / 2), and the probe's `$(SVC)` is `postgres` (0 / 2).
#[test]
fn a_probe_gets_a_composed_env_value_as_written() {
    for argv in [
        &["pg_isready", "-h", "$(DB_HOST)"][..],
        &["sh", "-c", "pg_isready -h $(DB_HOST)"],
        &["bash", "-c", "pg_isready -h $(DB_HOST) -p 5432"],
    ] {
        let got = composed_env_finding(argv);
        assert!(got.as_ref().is_none_or(|(a, _)| *a != Action::Deny), "{argv:?}: {got:?}");
        assert!(
            got.as_ref().is_none_or(|(_, t)| !t.contains("postgres.shop.svc")),
            "{argv:?}: the kubelet does not expand the value again: {got:?}"
        );
    }
    let (_, text) = composed_env_finding(&["sh", "-c", "pg_isready -h $(DB_HOST)"]).expect("a warning");
    assert!(text.contains("runs a command named `SVC`"), "{text}");
    for argv in [
        &["sh", "-c", "pg_isready -h $DB_HOST"][..],
        &["sh", "-c", "pg_isready -h \"${DB_HOST}\" -p 5432"],
        &["pg_isready", "-h", "$(SVC).shop.svc"],
    ] {
        let got = composed_env_finding(argv);
        assert!(
            got.as_ref().is_some_and(|(a, t)| *a == Action::Deny && t.contains("postgres.shop.svc")),
            "{argv:?}: {got:?}"
        );
    }
}
