//! Session 25, a new user's false denials of the liveness-dependency rule (s25-fdc): a word in a
//! comment or a printed string read as a command (`# we do not use pipefail here`, `echo
//! "trap"`), `kill -0` after the check, `for` retry loops, and `${out:-text}` of a `local`'s
//! value. Every row was run in bash 5.2.15 and dash 0.5.12 with stub clients on PATH
//! (`/tmp/emstub/run.sh`: `redis-cli` and `psql` exit 0 up and 1 down, `pg_isready` 0 up and 2
//! down); each row's statuses, up / down, are in its comment ("0 / 0" is not coupled: never a
//! denial; "0 / 1" in both shells is). Every warned row was denied on main add77c2.

use probegate::policy::Action;

mod common;
use common::flow::*;

/// The liveness-dependency action about orders-db or redis-master under `shell -c script`.
fn action_in(shell: &str, script: &str) -> Option<Action> {
    finding_of(&[shell, "-c", script])
        .filter(|(_, m)| m.contains("orders-db") || m.contains("redis-master"))
        .map(|(a, _)| a)
}

/// A comment or a string `echo` or `printf` only prints runs nothing: a word in it never changes
/// a verdict (`pipefail`, `trap`, `exec`, `kill`, `source`, `exit`, `return`, `set -e`, each of
/// which turned these warnings into denials). Warned rows exit 0 / 0 in bash and dash; the denied
/// ones, the same words before a check that is last or `|| exit 1`, 0 / 2 (0 / 1 for `exit 1`).
#[test]
fn a_word_in_a_comment_or_a_printed_string_changes_no_verdict() {
    let tee = "pg_isready -h orders-db 2>&1 | tee -a /tmp/health.log >/dev/null";
    let mut warned = vec![
        // 0 / 0 each: without pipefail the pipeline's status is tee's.
        format!("# we do not use pipefail here\n{tee}"),
        format!("echo \"pipefail\"; {tee}"),
        format!("printf 'no pipefail\\n' >&2; {tee}"),
        // 0 / 0: the EXIT trap's `exit 0` is the script's status, under `set -e` too.
        "# see trap below\nset -e; trap 'exit 0' EXIT; pg_isready -h orders-db -q".to_string(),
        "echo \"trap\"; set -e; trap 'exit 0' EXIT; pg_isready -h orders-db -q".to_string(),
        // 0 / 0: no errexit.
        "# set -e is not used\npg_isready -h orders-db -q; echo ok".to_string(),
        "echo \"set -e\"; pg_isready -h orders-db -q; echo ok".to_string(),
    ];
    let mut denied = vec![
        // 0 / 1; 0 / 2.
        "# we do not use pipefail here\npg_isready -h orders-db || exit 1".to_string(),
        "set -e # errexit\npg_isready -h orders-db -q; echo ok".to_string(),
    ];
    for word in ["trap", "exec", "kill", "source", "exit", "return"] {
        // 0 / 0 each.
        warned.push(format!("# {word}\npg_isready -h orders-db || echo down >&2; echo ok"));
        warned.push(format!("echo \"{word}\"; pg_isready -h orders-db || echo down >&2; echo ok"));
        warned.push(format!("echo '{word}' >&2; pg_isready -h orders-db | cat; echo ok"));
        warned.push(format!("# {word}\npg_isready -h orders-db | cat; echo ok"));
        // 0 / 2 each.
        denied.push(format!("# {word}\npg_isready -h orders-db"));
        denied.push(format!("echo \"{word}\"; pg_isready -h orders-db"));
    }
    let warned: Vec<&str> = warned.iter().map(String::as_str).collect();
    let denied: Vec<&str> = denied.iter().map(String::as_str).collect();
    expect_actions(&warned, &denied);
    // bash 0 / 2 (dash 2 / 2: no pipefail there): pipefail set by a command, or by a file the
    // printed text was written to and then sourced, still makes the pipeline the check's.
    for script in [
        format!("set -o pipefail; {tee}"),
        format!("echo 'set -o pipefail' > /tmp/o; . /tmp/o; {tee}"),
        format!("echo \"pipefail\"; {tee}; exit ${{PIPESTATUS[0]}}"),
    ] {
        assert_eq!(action_in("bash", &script), Some(Action::Deny), "{script}");
    }
}

/// `kill -0 PID` sends no signal; it only tests that the process exists (kill(1), kill(2)), like
/// `test -e /proc/1`: after the check it ends nothing. Warned 0 / 0; denied where the check is
/// last after it or `kill -0` of a process that does not exist is the fallback (0 / 1 each).
#[test]
fn kill_zero_tests_a_process_and_ends_nothing() {
    expect_actions(
        &[
            "redis-cli -h redis-master ping >/dev/null || echo \"redis down\" >&2; kill -0 1",
            "redis-cli -h redis-master ping >/dev/null || echo \"redis down\" >&2; kill -0 1 2>/dev/null; echo ok",
        ],
        &[
            "kill -0 1 && redis-cli -h redis-master ping",
            "redis-cli -h redis-master ping >/dev/null || kill -0 999999",
        ],
    );
}

/// A `for` loop whose body is `check && break` (or `if check; then break; fi`) and quiet steps,
/// the last one quiet, ends with 0 whatever the check gives, as the counted `while` form (0 / 0
/// each). Denied: `check || exit 1` in the body, the check last in the body, or a last step that
/// fails (0 / 1 each).
#[test]
fn a_for_retry_loop_ends_with_zero() {
    expect_actions(
        &[
            "for i in 1 2 3; do redis-cli -h redis-master ping && break; sleep 0.1; done; test -d /",
            "for i in $(seq 1 3); do if pg_isready -h orders-db -q; then break; fi; sleep 0.1; done; test -d /",
            "for i in 1 2 3; do redis-cli -h redis-master ping && break; sleep 0.1; done",
        ],
        &[
            "for i in 1 2 3; do redis-cli -h redis-master ping || exit 1; sleep 0.1; done",
            "for i in 1 2 3; do sleep 0.1; redis-cli -h redis-master ping && break; done",
            "for i in 1 2 3; do redis-cli -h redis-master ping && break; false; done",
        ],
    );
}

/// `local out=$(check)` has local's status (0) under `set -e`, and `${out:-nothing}` in a printed
/// argument only writes the value, as `$out` does (0 / 0). Denied: a separate `out=$(check)`,
/// whose status is the check's under `set -e` (0 / 1).
#[test]
fn a_local_value_printed_with_a_default_is_only_output() {
    expect_actions(
        &[
            "set -e; probe() { local out=$(psql -h orders-db -tAc \"select 1\"); echo \"db says: ${out:-nothing}\" >/dev/null; }; probe",
        ],
        &[
            "set -e; probe() { local out; out=$(psql -h orders-db -tAc \"select 1\"); echo \"db says: ${out:-nothing}\" >/dev/null; }; probe",
        ],
    );
}
