//! Session 23: survivors of CI's mutation sample in `src/engine/exec/status/` (issue #15), and
//! false denies of what a list, group, subshell, `if`, function or trap can exit with. Every row
//! was run in bash 5.2.15 and dash 0.5.12 with stub clients on PATH (`redis-cli` prints PONG and
//! exits 0 up, writes its error to stderr and exits 1 down; `pg_isready` exits 0 up, prints "no
//! response" and exits 2 down): the warned rows exit 0 with the dependency down (and up), the
//! denied rows 0 up and non-zero down (down / up in a row's comment where it says more).

use probegate::policy::Action;

mod common;
use common::flow::*;

/// An `if` whose outage branch goes on, judged by what the branch it skips does: a function
/// called there is followed into its body, a caller's or one the script defines at its top level
/// (warned: 0 / 0 each; denied on main 2c3f567, which followed a caller's functions only). Denied
/// where that body leaves state read later (`ok=1` then `[ "$ok" = 1 ]`: 1 / 0) or leaves the
/// script (`exit 0`, itself, in another definition of the name, or in a function it calls, then
/// the script's `exit 1`: 1 / 0). Kills `status/outage.rs:117:39` (the `!` of the word split
/// deleted: no word of the skipped branch is a function's name, its body never looked at, the
/// first two denied rows warned).
#[test]
fn a_function_the_skipped_branch_calls_is_followed() {
    let warned = [
        "attach() { pcp_attach_node -n 1; }; if redis-cli -h redis-master ping; then attach; fi; curl -sf localhost:8080/",
        "attach() { ok=1; }; if redis-cli -h redis-master ping; then attach; fi",
    ];
    let denied = [
        "attach() { ok=1; }; if redis-cli -h redis-master ping; then attach; fi; [ \"$ok\" = 1 ]",
        "g() { echo up; exit 0; }; if redis-cli -h redis-master ping; then g; fi; exit 1",
        "attach() { pcp_attach_node -n 1; }; attach() { exit 0; }; if redis-cli -h redis-master ping; then attach; fi; exit 1",
        "h() { exit 0; }; attach() { h; }; if redis-cli -h redis-master ping; then attach; fi; exit 1",
    ];
    expect_actions(&warned, &denied);
}

/// An ERR trap whose action holds an unquoted expansion (`"echo "$X`): what it runs is not the
/// text the analysis reads. With `X='bye;false;exit'` bash runs `echo bye;false;exit` when the
/// check fails and exits 1 (1 / 0); dash rejects the ERR condition (0 / 0, and `sh` is not
/// pinned here). Kills `status/traps.rs:51:25` (the guard refusing an unquoted `$`, backquote,
/// `\`, `<`, `>`, `(`, `)` made `false`: the action read as a harmless `echo $X`, a warning).
#[test]
fn an_err_trap_with_an_unquoted_expansion_is_not_read_as_harmless() {
    let script = "X='bye;false;exit'; trap \"echo \"$X ERR; redis-cli -h redis-master ping; echo done";
    let got = finding_of(&["bash", "-c", script]);
    assert!(got.as_ref().is_some_and(|g| g.0 == Action::Deny && g.1.contains("redis-master")), "{got:?}");
}

/// `C && TEST` (`[ ]`, `[[ ]]`, `test`, no substitution or assignment): the test does not run
/// when the check fails, so the list fails with the check's status, judged where the list is (an
/// `if` condition whose branches cannot fail, a status errexit does not take). Denied on main
/// 2c3f567 (0 / 0 each). Still denied where the list's failure is the script's (last: 1 / 0),
/// leads to `exit 1`, or feeds `|| exit 1` (1 / 0 each).
#[test]
fn a_test_right_of_the_check_s_and_keeps_its_failure() {
    let warned = [
        "if redis-cli -h redis-master ping && [ -n x ]; then echo ok; fi; curl -sf localhost:8080/",
        "if redis-cli -h redis-master ping && test -n x && [ ! -f /nonexistent ]; then echo ok; fi; curl -sf localhost:8080/",
        "set -e; redis-cli -h redis-master ping && [ -n x ]; echo done",
        // A single-bracket test with an arithmetic operator only tests (bash evaluates arithmetic
        // operands only inside `[[ ]]`; 0 / 0 in both shells).
        "x=0; if redis-cli -h redis-master ping && [ \"$x\" -eq 0 ]; then echo ok; fi; echo done",
        "x=0; if pg_isready -h orders-db && test \"$x\" -ge 0; then echo ok; fi; echo done",
        // (A redirection on the client: warned on main too.)
        "if ! redis-cli -h redis-master ping >/tmp/pg.log; then echo skip; exit 0; fi; curl -sf localhost:8080/",
    ];
    let denied = [
        "redis-cli -h redis-master ping && [ -n x ]",
        "if redis-cli -h redis-master ping && [ -n x ]; then exit 0; fi; exit 1",
        "redis-cli -h redis-master ping && [ -n x ] || exit 1; echo done",
    ];
    expect_actions(&warned, &denied);
}

/// `return 0` in a `( )` of a function's body ends the subshell with 0, as `exit 0` would (bash
/// 5.2 and dash 0.5.12: 0 / 0, denied on main). Still denied where it returns 1 (1 / 0), and in
/// bash outside a function, where `return` fails with 2 (2 / 0; dash exits the subshell with 0,
/// so `sh` is not pinned there).
#[test]
fn a_return_0_in_a_subshell_of_a_function_ends_the_subshell_with_0() {
    let warned = [
        "f() { ( redis-cli -h redis-master ping || { echo down; return 0; } ); }; f",
        "f() { ( redis-cli -h redis-master ping || { echo down; return 0; } ); echo after; }; f",
    ];
    let denied = ["f() { ( redis-cli -h redis-master ping || { echo down; return 1; } ); }; f"];
    expect_actions(&warned, &denied);
    let script = "( redis-cli -h redis-master ping || { echo down; return 0; } )";
    let got = finding_of(&["bash", "-c", script]);
    assert!(got.as_ref().is_some_and(|g| g.0 == Action::Deny), "{got:?}");
}

/// An EXIT trap that exits with a status it saved (`rc=$?; echo bye; exit $rc`), or whose handler
/// ends with `exit $?` after a command whose status is its own (`rm -f x`, `echo`): the first
/// keeps the status the script was exiting with (echo's after `echo done`), the second gives
/// that command's (0 / 0 each, denied on main). Still denied where the saved status is the
/// check's (the check last, or `exit $rc` after it: 1 / 0), where the handler's `exit $?` or bare
/// `exit` has no command before it to take the status from (1 / 0).
#[test]
fn an_exit_trap_that_exits_with_a_saved_or_its_own_status_is_judged_by_it() {
    let warned = [
        "trap 'rc=$?; echo bye; exit $rc' EXIT; redis-cli -h redis-master ping; echo done",
        "cleanup(){ rm -f x; exit $?; }; trap cleanup EXIT; redis-cli -h redis-master ping",
        "cleanup(){ echo bye; exit $?; }; trap cleanup EXIT; redis-cli -h redis-master ping",
    ];
    let denied = [
        "trap 'rc=$?; echo bye; exit $rc' EXIT; redis-cli -h redis-master ping",
        "trap 'rc=$?; echo bye; exit $rc' EXIT; redis-cli -h redis-master ping; rc=$?; echo done; exit $rc",
        "trap 'rc=$?; echo bye; exit $rc' EXIT; redis-cli -h redis-master ping || exit 1; echo done",
        "cleanup(){ exit $?; }; trap cleanup EXIT; redis-cli -h redis-master ping",
        "cleanup(){ rm -f x; exit; }; trap cleanup EXIT; redis-cli -h redis-master ping",
    ];
    expect_actions(&warned, &denied);
}
