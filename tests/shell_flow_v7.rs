//! Session 22, a new user's false denies: what a `||` list's right side, a `{ }` group, a `( )`
//! subshell, an `if` in a function's body and an EXIT trap can exit with. Every row was run in
//! bash 5.2.15 and dash 0.5.12 with stub clients on PATH (`redis-cli` prints PONG and exits 0 up,
//! writes its error to stderr and exits 1 down; `pg_isready` exits 0 up, prints "no response" and
//! exits 2 down): the warned rows exit 0 with the dependency down (and up), the denied rows 0 up
//! and non-zero down (each row's statuses, down / up, in its comment where they differ).

mod common;
use common::flow::*;

/// A `{ }` group or `( )` subshell on the right of `||` that only writes output and ends with
/// `exit 0` (`return 0` in a function's body) gives the check's failure status 0, as `|| exit 0`
/// does; so does an `if` in a function's body none of whose branches fails (no branch taken:
/// status 0, POSIX 2.9.4). Denied before s22 (0 / 0 each). Still denied where the group or the
/// function ends otherwise, or what the `return` skips changes what the caller reads.
#[test]
fn a_group_or_if_that_ends_with_status_0_is_a_warning() {
    let warned = [
        "redis-cli -h redis-master ping || { echo down; exit 0; }",
        "redis-cli -h redis-master ping || { exit 0; }",
        "redis-cli -h redis-master ping || ( echo down; exit 0 )",
        "pg_isready -h orders-db || { echo down >&2; exit 0; }",
        "f() { redis-cli -h redis-master ping || { echo down; return 0; }; }; f",
        "f() { pg_isready -h orders-db || { return 0; }; echo checked; }; f",
        "check() { if redis-cli -h redis-master ping; then return 0; fi; }; check",
        "check() { if redis-cli -h redis-master ping; then return 0; else echo down; fi; }; check",
        "check() { if ! pg_isready -h orders-db; then echo down; return 0; fi; }; check",
    ];
    let denied = [
        // 1 / 0, 3 / 0, 1 / 0, 1 / 0.
        "redis-cli -h redis-master ping || { echo down; exit 1; }",
        "redis-cli -h redis-master ping || ( exit 3 )",
        "check() { if redis-cli -h redis-master ping; then return 0; fi; return 1; }; check",
        "check() { if redis-cli -h redis-master ping; then return 0; else return 1; fi; }; check",
        // (The `return` skips `ok=1`, which the caller tests: 1 / 0.)
        "f() { redis-cli -h redis-master ping || { echo down; return 0; }; ok=1; }; f; [ \"$ok\" = 1 ]",
        // 2 / 0.
        "f() { pg_isready -h orders-db || { echo down; return 2; }; }; f",
    ];
    expect_actions(&warned, &denied);
}

/// An EXIT trap's action runs as the shell exits: `exit $?` exits with the status it was
/// exiting with (echo's, 0, after `echo done`), and `rc=$?; exit 0` with 0; an `exit 0` trap set
/// at the top level after the check, before anything can end the script, makes every way out
/// exit 0 (0 / 0 each, denied before s22). Still denied where the action exits with the status
/// the check left (1 / 0), and where the script can end before the trap is set (`|| exit 1`,
/// errexit, `${x:?}`, a loop on the dependency: 1 / 0, 2 / 0, 127 / 0 in bash and 2 / 0 in dash,
/// 2 / 0).
#[test]
fn an_exit_trap_that_keeps_or_zeroes_the_status_is_judged_by_what_it_exits_with() {
    let warned = [
        "trap 'exit $?' EXIT; redis-cli -h redis-master ping; echo done",
        "trap 'rc=$?; exit 0' EXIT; redis-cli -h redis-master ping",
        "f() { redis-cli -h redis-master ping; }; f; ret=$?; trap 'exit 0' EXIT; exit $ret",
        "pg_isready -h orders-db; trap 'exit 0' EXIT; exit 1",
    ];
    let denied = [
        "trap 'exit $?' EXIT; redis-cli -h redis-master ping",
        "trap 'rc=$?; echo bye; exit $rc' EXIT; redis-cli -h redis-master ping",
        "pg_isready -h orders-db || exit 1; trap 'exit 0' EXIT",
        "set -e; pg_isready -h orders-db; trap 'exit 0' EXIT; exit 1",
        "x=$(redis-cli -h redis-master ping); : ${x:?}; trap 'exit 0' EXIT",
        "until pg_isready -h orders-db; do exit 2; done; trap 'exit 0' EXIT",
    ];
    expect_actions(&warned, &denied);
}

/// A client in an EXIT trap's action reaches its dependency at every exit: found now (no finding
/// before s22). Its status is not the script's (0 / 0) unless the action exits with it or
/// errexit is on (a failing command there ends the shell with its status: 1 / 0, 2 / 0).
#[test]
fn a_check_in_an_exit_trap_s_action_is_found() {
    let warned = [
        "trap 'redis-cli -h redis-master ping' EXIT; exit 0",
        "f() { redis-cli -h redis-master ping; }; trap f EXIT; exit 0",
        "trap 'pg_isready -h orders-db' EXIT",
        "set -e; trap 'redis-cli -h redis-master ping || true' EXIT; exit 0",
        // A trap that runs a client is no reason to doubt the script's own status (a mutant of
        // `runs_a_client` made these two denials, CI sample s22; 0 / 0).
        "trap 'redis-cli -h redis-master ping' EXIT; pg_isready -h orders-db; echo done",
        "trap 'redis-cli -h redis-master ping' EXIT; if pg_isready -h orders-db; then exit 0; fi; exit 0",
    ];
    let denied = [
        "set -e; trap 'redis-cli -h redis-master ping' EXIT; exit 0",
        "trap 'redis-cli -h redis-master ping || exit 1' EXIT; exit 0",
        "trap 'pg_isready -h orders-db; exit $?' EXIT; exit 0",
        "f() { pg_isready -h orders-db || exit 1; }; trap f EXIT; exit 0",
    ];
    expect_actions(&warned, &denied);
    let (_, message) = finding_of(&["sh", "-c", warned[0]]).expect("a finding");
    assert!(message.contains("EXIT trap, whose status is not the script's"), "{message}");
}

/// `|| true` drops the check's status, not its output: in a command substitution that a test
/// reads (`[ "$out" = PONG ]`, `[ -n "$x" ]`, `!= "PONG"`) the probe fails with the server down
/// (1 / 0 in bash and dash). Whether a test of that output fails on an outage is not judged
/// there: a warning that says so, no longer "cannot fail the probe".
#[test]
fn a_substitution_s_output_past_or_true_is_a_doubt_not_a_dropped_status() {
    let warned = [
        "out=$(redis-cli -h redis-master ping 2>&1 || true); [ \"$out\" = PONG ]",
        "x=$(redis-cli -h redis-master ping) || true; [ -n \"$x\" ]",
        "out=$(redis-cli -h redis-master ping 2>/dev/null || true); if [ \"$out\" != \"PONG\" ]; then exit 1; fi",
    ];
    expect_actions(&warned, &[]);
    for script in warned {
        let (_, message) = finding_of(&["bash", "-c", script]).expect("a finding");
        assert!(
            message.contains("whether it fails the probe rests on what the script does with its output")
                && !message.contains("cannot fail"),
            "{script}: {message}"
        );
    }
}

/// A function that writes `$?` out (`echo $?`) hands the check's status on when its caller reads
/// that output (`$(g)`): it decides the exit status (1 / 0; `exit $(g)` and `exit $x` 1 / 2, the
/// check's own `PONG` breaking `exit` with the server up), warned before s22 as a status not used. A
/// function whose output no substitution reads, or one of another name (`$(gx)`), still only
/// writes it (0 / 0).
#[test]
fn a_status_a_function_writes_for_its_caller_to_read_is_coupled() {
    let warned = [
        "g() { redis-cli -h redis-master ping; echo \"rc $?\"; }; g",
        "g() { pg_isready -h orders-db; echo \"rc $?\"; }; gx() { :; }; x=$(gx); g",
    ];
    let denied = [
        "g() { redis-cli -h redis-master ping; echo $?; }; case $(g) in *1) exit 1;; esac",
        "g() { redis-cli -h redis-master ping; echo \"rc=$?\"; }; out=$(g); [ \"${out##*=}\" = 0 ]",
        "g() { redis-cli -h redis-master ping; echo $?; }; exit $(g)",
        "g() { redis-cli -h redis-master ping; echo $?; }; x=`g`; exit $x",
    ];
    expect_actions(&warned, &denied);
}
