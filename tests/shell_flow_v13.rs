//! Session 25, false denials of the liveness-dependency rule (s25-fdb, from s24's verdict hunt):
//! traps that only clean up with a value in their action, function returns that give 0 either
//! way, a check that fails the script only on `timeout`'s own status (a hang), scripts that fail
//! every time, and the message of a check inverted by an `&&` list. Every row was run in bash
//! 5.2.15 and dash 0.5.12 with stub clients on PATH (`/tmp/emstub/run.sh`: `redis-cli` exits 0 up
//! and 1 down, `pg_isready` 0 up and 2 down); each row's statuses, up / down, the same in both
//! shells, are in its comment. "0 / 0" and "1 / 1" are not coupled: never a denial. "0 / 1" is.

use probegate::policy::Action;

mod common;
use common::flow::*;

/// The liveness-dependency action about orders-db or redis-master under `shell -c script`, and
/// its message.
fn finding_in(shell: &str, script: &str) -> Option<(Action, String)> {
    finding_of(&[shell, "-c", script]).filter(|(_, m)| m.contains("orders-db") || m.contains("redis-master"))
}

/// A trap whose double-quoted action expands a variable (`trap "rm -f $TMPF" EXIT`) reads its
/// value when the `trap` runs; the shell runs that text when the trap fires. With the value one
/// plain word (`$(mktemp)`, `$$`, a literal path) the trap only removes a file and keeps the
/// status; with a value from elsewhere it is a doubt. A `kill` of a background child (`PID=$!`)
/// signals nothing of the shell. Each was denied before s25.
#[test]
fn traps_that_only_clean_up_with_a_value_are_not_denied() {
    let warned = [
        // 0 / 0: TMPF from the image or the env (empty here): a doubt.
        "trap \"rm -f $TMPF\" EXIT; redis-cli -h redis-master ping; echo ok",
        // 0 / 0
        "TMPF=$(mktemp); trap \"rm -f $TMPF\" EXIT; redis-cli -h redis-master ping; echo ok",
        // 0 / 0
        "sleep 100 & PID=$!; trap 'kill $PID' EXIT; redis-cli -h redis-master ping; echo ok",
        // 0 / 0
        "F=/tmp/probe.lock; trap \"rm -f ${F}\" EXIT; touch $F; pg_isready -h orders-db; true",
        // 1 / 1: the trap's `exit 1` fails every run.
        "trap \"rm -f $F; exit 1\" EXIT; redis-cli -h redis-master ping; echo ok",
        // 1 / 1
        "TMPF=$(mktemp); trap \"rm -f $TMPF; exit 1\" EXIT; redis-cli -h redis-master ping; echo ok",
        // 0 / 1 with TMPF empty or a path, but TMPF is known only at run time, and its value is
        // read as commands of the action (`x; exit 0` would make it 0 / 0): a doubt.
        "trap \"rm -f $TMPF\" EXIT; redis-cli -h redis-master ping",
        // 0 / 0
        "sleep 100 & PID=$!; trap 'kill $PID 2>/dev/null' EXIT; redis-cli -h redis-master ping; echo ok",
    ];
    let denied = [
        // 0 / 1: the check is last.
        "TMPF=$(mktemp); trap \"rm -f $TMPF\" EXIT; redis-cli -h redis-master ping",
        // 0 / 1
        "sleep 100 & PID=$!; trap 'kill $PID' EXIT; redis-cli -h redis-master ping",
        // 0 / 1: the check's failure exits 1 through `||`.
        "TMPF=$(mktemp); trap \"rm -f $TMPF\" EXIT; redis-cli -h redis-master ping || exit 1; echo ok",
    ];
    expect_actions(&warned, &denied);
    // Known plain: no doubt in the message, the check is judged where it is.
    let (_, m) = finding_in("sh", warned[1]).unwrap();
    assert!(m.contains("cannot fail the probe"), "{m}");
    let (_, m) = finding_in("sh", warned[6]).unwrap();
    assert!(m.contains("rests on the value of `$TMPF`"), "{m}");
}

/// A value that is not one plain word is read as what it may be, commands of the action: a doubt
/// (warned, "rests on the value of ..."), never a denial, even where this value would leave the
/// check coupled. A `kill` whose pid is known only at run time may signal the shell itself: not
/// taken, the trap keeps the check as it was (coupled where it is last).
#[test]
fn a_trap_value_with_syntax_is_a_doubt_and_an_unknown_kill_is_not_taken() {
    // 0 / 1 (`rm -f x; echo bye` as the action).
    let script = "TMPF='x; echo bye'; trap \"rm -f $TMPF\" EXIT; redis-cli -h redis-master ping";
    for shell in ["sh", "bash"] {
        let (a, m) = finding_in(shell, script).unwrap();
        assert_eq!(a, Action::Warn, "{shell} {script}: {m}");
        assert!(m.contains("rests on the value of `$TMPF`"), "{m}");
    }
    // 0 / 1 (PID unset: `kill` without an operand, status 2 inside the trap).
    let script = "trap 'kill $PID' EXIT; redis-cli -h redis-master ping";
    for shell in ["sh", "bash"] {
        assert_eq!(finding_in(shell, script).map(|f| f.0), Some(Action::Deny), "{shell} {script}");
    }
}

/// A function whose check's failure returns what its end returns anyway gives 0 either way:
/// `|| return 0` before a last `return 0`, and `|| status=0` of a variable that already holds 0.
#[test]
fn function_returns_that_give_zero_either_way_are_not_denied() {
    let warned = [
        // 0 / 0
        "f(){ redis-cli -h redis-master ping || return 0; return 0; }; f",
        // 0 / 0
        "f(){ redis-cli -h redis-master ping || return 0; echo checked; return 0; }; f",
        // 0 / 0
        "f() {\n  pg_isready -h orders-db || return 0\n  return 0\n}\nf",
        // 0 / 0
        "f(){ status=0; redis-cli -h redis-master ping || status=0; return $status; }; f",
        // 0 / 0
        "f(){ status=0; echo start; redis-cli -h redis-master ping || status=0; return $status; }; f",
        // 0 / 0
        "rc=0; redis-cli -h redis-master ping || rc=0; exit $rc",
        // 0 / 0
        "f(){ local rc=0; redis-cli -h redis-master ping || rc=0; return $rc; }; f",
        // 0 / 0
        "f(){ redis-cli -h redis-master ping && return 0; return 0; }; f",
        // 0 / 0
        "check(){ redis-cli -h redis-master ping || { echo down; return 0; }; return 0; }; check",
    ];
    let denied = [
        // 0 / 1
        "f(){ redis-cli -h redis-master ping || return 1; return 0; }; f",
        // 0 / 1: with `false` between, `|| return 1` still decides.
        "f(){ redis-cli -h redis-master ping || return 1; false; return 0; }; f",
        // 0 / 1
        "f(){ status=0; redis-cli -h redis-master ping || status=1; return $status; }; f",
        // 0 / 2
        "f(){ rc=1; rc=0; pg_isready -h orders-db || rc=2; return $rc; }; f",
        // 0 / 1
        "rc=0; redis-cli -h redis-master ping || rc=1; exit $rc",
        // 0 / 1
        "f(){ local rc=0; redis-cli -h redis-master ping || rc=1; return $rc; }; f",
        // 1 / 0
        "f(){ redis-cli -h redis-master ping && return 1; return 0; }; f",
        // 0 / 1
        "check(){ redis-cli -h redis-master ping || { echo down; return 1; }; return 0; }; check",
    ];
    expect_actions(&warned, &denied);
}

/// `timeout`'s own status 124 (the check hung past its limit) is not the outage of a refused or
/// down server: a script that fails only on it is a warning, never a denial. A test of the
/// client's own outage status stays coupled, and so does the check alone.
#[test]
fn a_script_that_fails_only_on_a_hang_is_a_warning() {
    let warned = [
        // 0 / 0
        "timeout 2 pg_isready -h orders-db; [ $? -eq 124 ] && exit 1; exit 0",
        // 0 / 0
        "timeout 2 pg_isready -h orders-db; rc=$?; if [ $rc -eq 124 ]; then exit 1; fi; exit 0",
        // 0 / 0
        "timeout 3 redis-cli -h redis-master ping; [ $? -ne 124 ]",
    ];
    let denied = [
        // 0 / 2
        "timeout 2 pg_isready -h orders-db",
        // 0 / 1
        "timeout 2 pg_isready -h orders-db; [ $? -eq 2 ] && exit 1; exit 0",
        // 0 / 1
        "timeout 2 pg_isready -h orders-db; [ $? -eq 0 ] || exit 1; exit 0",
        // 0 / 1
        "timeout 3 redis-cli -h redis-master ping; [ $? -eq 0 ]",
    ];
    expect_actions(&warned, &denied);
    let (_, m) = finding_in("sh", warned[0]).unwrap();
    assert!(m.contains("124"), "{m}");
}

/// A script every way out of which is a non-zero `exit` or `return` fails every time: not coupled,
/// a warning that says so. With one way out that gives 0 it stays coupled.
#[test]
fn a_script_that_always_fails_is_a_warning_that_says_so() {
    let warned = [
        // 1 / 1
        "if redis-cli -h redis-master ping; then exit 1; fi; exit 1",
        // 1 / 1
        "f(){ redis-cli -h redis-master ping && return 1; return 1; }; f",
        // 1 / 1
        "f(){ if redis-cli -h redis-master ping; then return 1; fi; return 1; }; f",
        // 2 / 1
        "if pg_isready -h orders-db; then exit 2; fi; exit 1",
        // 3 / 3
        "redis-cli -h redis-master ping || exit 3; exit 3",
        // 1 / 1: the check's failure is the list's status, its success runs `exit 1`.
        "redis-cli -h redis-master ping && exit 1",
        // 1 / 1
        "redis-cli -h redis-master ping && exit 1 || exit 1",
        // 3 / 2
        "pg_isready -h orders-db && exit 3 || exit 2",
    ];
    let denied = [
        // 0 / 1
        "if redis-cli -h redis-master ping; then exit 0; fi; exit 1",
        // 0 / 1
        "f(){ redis-cli -h redis-master ping && return 0; return 1; }; f",
        // 0 / 1: `exit 256` is 0.
        "if redis-cli -h redis-master ping; then exit 256; fi; exit 1",
        // 0 / 1: a `{ }` in the body (not read by the scan).
        "f(){ redis-cli -h redis-master ping || { echo down; return 1; }; echo up; }; f",
        // 0 / 1
        "redis-cli -h redis-master ping || exit 1",
    ];
    expect_actions(&warned, &denied);
    for script in warned {
        let (_, m) = finding_in("sh", script).unwrap();
        assert!(m.contains("fails every time"), "{script}: {m}");
    }
}

/// `C && exit 1 || exit 0` fails while the dependency is UP and passes while it is down (1 / 0):
/// the dependency alone decides the probe, so it is denied, as `! C` last is, and the message says
/// what happens (it said "its outage would restart", which is false). `C && exit 0 || exit 1` (0
/// / 1) keeps the outage message.
#[test]
fn a_check_inverted_by_an_and_list_says_so() {
    for script in [
        // 1 / 0
        "redis-cli -h redis-master ping && exit 1 || exit 0",
        // 1 / 0
        "redis-cli -h redis-master ping && { echo up; exit 1; } || exit 0",
        // 1 / 0
        "redis-cli -h redis-master ping && exit 1; echo down",
        // 2 / 0
        "redis-cli -h redis-master ping && exit 2\nexit 0",
        // 1 / 0
        "redis-cli -h redis-master ping && exit 1 || echo down",
    ] {
        for shell in ["sh", "bash"] {
            let (a, m) = finding_in(shell, script).unwrap_or_else(|| panic!("{shell} {script}"));
            assert_eq!(a, Action::Deny, "{shell} {script}: {m}");
            assert!(
                m.contains("fails while redis-master is up (its `&&` list exits non-zero"),
                "{script}: {m}"
            );
            assert!(!m.contains("its outage would"), "{script}: {m}");
        }
    }
    // 0 / 1
    let (a, m) = finding_in("sh", "redis-cli -h redis-master ping && exit 0 || exit 1").unwrap();
    assert_eq!(a, Action::Deny);
    assert!(m.contains("its outage would"), "{m}");
}

/// An EXIT trap's handler that ends with `exit N` gives N modulo 256, as bash and dash do
/// (`status::handler_exit_status`): `exit 256` and `exit 0000` are 0, `exit 0001` is 1. Before
/// s25 such a status was not read (only 3 digits), and the check stayed coupled: these rows,
/// 0 / 0 and 1 / 1, were denied. They kill the mutant `&&` -> `||` in its digit guard (which
/// read `0000` and `0001` but not `256`) and the old guard's length bound.
#[test]
fn a_handler_s_exit_status_is_taken_modulo_256() {
    let warned = [
        // 0 / 0
        "cleanup(){ rm -f /tmp/x; exit 256; }; trap cleanup EXIT; redis-cli -h redis-master ping; echo ok",
        // 0 / 0
        "cleanup(){ rm -f /tmp/x; exit 0000; }; trap cleanup EXIT; redis-cli -h redis-master ping",
        // 1 / 1
        "cleanup(){ rm -f /tmp/x; exit 0001; }; trap cleanup EXIT; redis-cli -h redis-master ping; echo ok",
        // 0 / 0
        "trap 'exit 256' EXIT; redis-cli -h redis-master ping",
    ];
    let denied = [
        // 0 / 1: no `exit` in the handler, the check is last.
        "cleanup(){ rm -f /tmp/x; }; trap cleanup EXIT; redis-cli -h redis-master ping",
    ];
    expect_actions(&warned, &denied);
    let (_, m) = finding_in("sh", warned[2]).unwrap();
    assert!(m.contains("fails every time"), "{m}");
}
