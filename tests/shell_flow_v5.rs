//! Session 21, false-deny pass: a check's status read as `$?` after ANOTHER command. `$?` is the
//! status of the last command run (bash manual, "Special Parameters"; POSIX 2.5.2), so a `$?`
//! read after `echo`, `true`, `:`, `logger` or an assignment without a substitution (status 0),
//! or after an `if` no branch of which fails (POSIX 2.9.4: no branch taken gives 0), is not the
//! check's; nor is one read in a function's body after a command of its own. Every row was run
//! in bash 5.2.15 and dash 0.5.12 with stub clients (`pg_isready` exits 0 with the database up,
//! 2 with it down; `curl` 0 and 6): the warned rows exit 0 / 0, the denied rows 0 / 1 or 0 / 2.
//!
//! (Its name: s21 had two false-deny passes at once; s21-fd's is tests/shell_flow_v4.rs.)

use probegate::policy::Action;

mod common;
use common::flow::*;

/// `exit $rc` (`$rc`, `${rc}`, `"$rc"`), one variable's value as the status, is followed where
/// `rc` is assigned (as `exit ${rc:-0}` was): denied before s21 whatever `rc` held. Still denied
/// where `rc` holds the check's status (`rc=$?` right after it, `|| rc=$?`, assigned in the
/// branches the check chooses or by `&&`) and where `$rc` is empty, which makes `exit $rc` a bare
/// `exit` returning the check's status (`pg_isready -h orders-db; exit $rc`: 0 / 2).
#[test]
fn an_exit_of_a_variable_that_holds_another_command_s_status_is_a_warning() {
    let warned = [
        "pg_isready -h orders-db; echo checked; rc=$?; exit $rc",
        "pg_isready -h orders-db; true; rc=$?; exit $rc",
        "pg_isready -h orders-db; :; rc=$?; exit \"$rc\"",
        "pg_isready -h orders-db; logger x; rc=$?; exit ${rc}",
        "curl -sf http://orders-db/healthz; echo checked; rc=$?; exit $rc",
        "pg_isready -h orders-db; rc=$?; rc2=$?; exit $rc2",
        "if pg_isready -h orders-db; then ok=1; fi; rc=$?; exit $rc",
    ];
    let denied = [
        "pg_isready -h orders-db; rc=$?; echo checked; exit $rc",
        "pg_isready -h orders-db; exit $?",
        "if pg_isready -h orders-db; then exit 0; else exit 1; fi",
        "pg_isready -h orders-db; rc=$?; [ $rc -eq 0 ]",
        "pg_isready -h orders-db; exit $rc",
        // (`rc` empty or unset where the script ends: 0 / 2.)
        "if [ -f /nonexistent ]; then rc=1; fi; pg_isready -h orders-db; exit $rc",
        "rc=$1; pg_isready -h orders-db; exit $rc",
        "read rc < /dev/null; pg_isready -h orders-db; exit $rc",
        "pg_isready -h orders-db; rc=$?; echo x; exit \"${rc}\"",
        "pg_isready -h orders-db || rc=$?; echo x; exit $rc",
        "if pg_isready -h orders-db; then rc=0; else rc=1; fi; exit $rc",
        "rc=1; pg_isready -h orders-db && rc=0; echo; exit $rc",
        "pg_isready -h orders-db; rc=$?; rc2=$rc; exit $rc2",
        "for i in 1 2; do rc=$?; pg_isready -h orders-db; done; exit $rc",
    ];
    expect_actions(&warned, &denied);
}

/// A function's body that reads `$?` only after a command of its own (`f() { echo x; exit $?;
/// }`) cannot read the status its caller left: the script is walked as any other (denied before
/// s21, as a body reading `$?` anywhere was taken to read the check's). Still denied where the
/// body reads `$?` first (`f() { rc=$?; ...; }` called right after the check), also past a `;`
/// in quotes or in a loop's body (`for` runs no command before it), and where the check's own
/// status is read in the body (`f() { pg_isready -h orders-db; rc=$?; exit $rc; }`).
#[test]
fn a_function_s_body_reading_a_status_its_own_commands_gave_is_a_warning() {
    let warned = [
        "f() { pg_isready -h orders-db; echo checked; rc=$?; exit $rc; }; f",
        "f() { pg_isready -h orders-db; echo checked; exit $?; }; f",
        "f() { pg_isready -h orders-db; true; rc=$?; [ $rc -eq 0 ]; }; f",
        "f() { echo x; exit $?; }; pg_isready -h orders-db; f",
    ];
    let denied = [
        "f() { pg_isready -h orders-db; rc=$?; exit $rc; }; f",
        "f() { [ $? -eq 0 ] || exit 1; }; pg_isready -h orders-db; f",
        "f() { rc=$?; echo x; exit $rc; }; pg_isready -h orders-db; f",
        "f() { echo \"x;$?\" | grep -q \"x;0\"; }; pg_isready -h orders-db; f",
        "f() { for i in 1; do [ $? -eq 0 ] || exit 1; done; }; pg_isready -h orders-db; f",
    ];
    expect_actions(&warned, &denied);
}

/// `trap 'ACTION; exit 0' ERR` at the top level, then the check as the script's last statement:
/// bash runs the trap when the check fails and exits 0 (bash 5.2: 0 / 0, also under `set -e`).
/// dash 0.5.12 has no ERR condition ("trap: ERR: bad trap", status 1) and runs on: without
/// `set -e` the check is the script's status (0 / 2), so `sh` stays denied; after `set -e` it
/// exits 1 at the `trap` (1 / 1): the probe always fails there, never on the dependency, a
/// warning that says so. Still denied in bash where the trap does not run on the check's failure
/// (an `if` condition, left of `||` or `&&`: 0 / 1, 0 / 2), exits 1, or is reset (`trap - ERR`).
#[test]
fn an_err_trap_that_exits_0_after_a_last_check_is_a_warning() {
    let bash_warned = [
        "trap 'echo failed; exit 0' ERR; pg_isready -h orders-db",
        "set -e; trap 'echo failed; exit 0' ERR; pg_isready -h orders-db",
        "trap -- 'exit 0' ERR; echo start; pg_isready -h orders-db > /dev/null",
    ];
    let bash_denied = [
        "trap 'echo failed; exit 0' ERR; if pg_isready -h orders-db; then exit 0; else exit 1; fi",
        "trap 'echo failed; exit 0' ERR; pg_isready -h orders-db || exit 1",
        "trap 'echo failed; exit 0' ERR; pg_isready -h orders-db && echo ok",
        "trap 'echo failed; exit 1' ERR; pg_isready -h orders-db",
        "trap 'exit 0' ERR; trap - ERR; pg_isready -h orders-db",
    ];
    let sh_warned = [
        "set -e; trap 'echo failed; exit 0' ERR; pg_isready -h orders-db",
        "set -eu; trap \"echo failed; exit 0\" err; pg_isready -h orders-db",
    ];
    let sh_denied = ["trap 'echo failed; exit 0' ERR; pg_isready -h orders-db"];
    let mut wrong = Vec::new();
    for (shell, rows, action) in [
        ("bash", &bash_warned[..], Action::Warn),
        ("bash", &bash_denied[..], Action::Deny),
        ("sh", &sh_warned[..], Action::Warn),
        ("sh", &sh_denied[..], Action::Deny),
    ] {
        for script in rows {
            let got = finding_of(&[shell, "-c", script]);
            if !got.as_ref().is_some_and(|g| g.0 == action && g.1.contains("orders-db")) {
                wrong.push(format!("{action:?} expected: {shell} {script:?}: {got:?}"));
            }
        }
    }
    let got = finding_of(&["sh", "-c", sh_warned[0]]);
    if !got.as_ref().is_some_and(|g| g.1.contains("dash rejects `trap ... ERR`")) {
        wrong.push(format!("dash reason expected: {got:?}"));
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}
