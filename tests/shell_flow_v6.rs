//! Session 22, false-deny pass: liveness exec probes denied on main 2d84b53 although they exit
//! the same with the database up and down. Every row was run in bash 5.2 and dash 0.5.12 with
//! stub clients (`pg_isready` exits 0 with the database up, 2 with it down): the warned rows
//! exit 0 / 0, the denied rows fail only with the database down (0 / 1 or 0 / 2).

use probegate::policy::Action;

mod common;
use common::flow::*;

/// The status written to a file the script never names again (`echo $rc > /tmp/rc`) is read by
/// nothing in the probe: the replay runs such an `echo` (status 0, or 1 where the write fails,
/// whatever the check gave), and a bare `exit` after it exits with echo's status. A variable's
/// name spelling the file's (`rc`, `/tmp/rc`) and `$?` are no mention of the file. Denied on
/// main. Still denied where the file is read back (`exit $(cat /tmp/rc)`), or the saved status
/// reaches the exit another way (`exit $rc`, also after a write that may fail).
#[test]
fn a_status_written_to_a_file_nothing_reads_is_no_status() {
    let warned = [
        "pg_isready -h orders-db; rc=$?; echo $rc > /tmp/rc; exit",
        "pg_isready -h orders-db; echo $? > /tmp/rc",
        "pg_isready -h orders-db; rc=$?; echo \"rc=$rc\" >> /tmp/probe.log",
    ];
    let denied = [
        "pg_isready -h orders-db; rc=$?; echo $rc > /tmp/rc; exit $(cat /tmp/rc)",
        "pg_isready -h orders-db; echo $? > /tmp/rc; exit $(cat /tmp/rc)",
        "pg_isready -h orders-db; rc=$?; echo $rc > /tmp/rc; exit $rc",
        "pg_isready -h orders-db; rc=$?; echo $rc > /tmp/rc || exit 1; exit $rc",
    ];
    expect_actions(&warned, &denied);
}

/// An EXIT trap calling a function of the script each definition of which ends with `exit 0`
/// (after commands that only write or remove files) makes the script exit 0, as `trap 'exit 0'
/// EXIT` does. Denied on main. Still denied where the handler's `exit` is bare (the status
/// before the trap: the check's), the handler is never defined or is unset.
#[test]
fn an_exit_trap_calling_a_function_that_exits_zero_ends_the_script_with_zero() {
    let warned = [
        "cleanup() { rm -f /tmp/probe.lock; exit 0; }; trap cleanup EXIT; pg_isready -h orders-db",
        "cleanup() { exit 0; }; trap cleanup EXIT; pg_isready -h orders-db; [ $? -eq 0 ]",
    ];
    let denied = [
        "cleanup() { rm -f /tmp/probe.lock; exit; }; trap cleanup EXIT; pg_isready -h orders-db",
        "cleanup() { exit 0; }; trap cleanup EXIT; unset -f cleanup; pg_isready -h orders-db",
        "trap cleanup EXIT; pg_isready -h orders-db",
        "cleanup() { exit 0; }; cleanup() { rm -f /tmp/x; }; trap cleanup EXIT; pg_isready -h orders-db",
    ];
    expect_actions(&warned, &denied);
}

/// A variable set once to a literal before the check, and only read after it (`rc=0; ...; exit
/// $rc`, `exit $((rc))`), holds that literal: the replay reads it. Denied on main. Still denied
/// where the check's status is assigned to it.
#[test]
fn a_constant_exit_status_set_before_the_check_is_its_value() {
    let warned = [
        "rc=0; pg_isready -h orders-db; exit $rc",
        "rc=0; pg_isready -h orders-db; exit $((rc))",
        "rc=0; pg_isready -h orders-db || exit $rc; echo ok",
    ];
    let denied = [
        "rc=0; pg_isready -h orders-db; rc=$?; exit $rc",
        "rc=0; pg_isready -h orders-db || rc=1; exit $rc",
        "rc=0; pg_isready -h orders-db; rc=$?; exit $((rc))",
    ];
    expect_actions(&warned, &denied);
}

/// `trap 'exit 0' ERR` (after output at most), without errexit: bash ends the script with 0 where
/// a command of its own shell fails, dash rejects the condition and runs on; either way an outage
/// never fails the probe sooner, and the rest is judged as without the trap. Denied on main.
/// Still denied where the trap exits non-zero, or, under `sh` (dash), where the check is last.
#[test]
fn an_err_trap_exiting_zero_is_judged_as_no_trap() {
    let warned = [
        "trap 'exit 0' ERR; pg_isready -h orders-db; echo done",
        "trap 'echo failed; exit 0' ERR; pg_isready -h orders-db; echo done",
    ];
    expect_actions(&warned, &[]);
    // An ERR trap that exits non-zero is bash's: bash 0 / 1, dash 0 / 0 (run.sh, s24). Denied
    // under `bash -c`; under `sh -c`, which may be dash, a warning that names the doubt (s24:
    // both were denied).
    let script = "trap 'exit 1' ERR; pg_isready -h orders-db; echo done";
    for (shell, want) in [("bash", Action::Deny), ("sh", Action::Warn)] {
        let got = finding_of(&[shell, "-c", script]);
        assert_eq!(got.as_ref().map(|g| g.0), Some(want), "{shell} {script:?}: {got:?}");
    }
    // dash: 0 / 2; bash: 0 / 0 (the ERR trap exits 0).
    let script = "trap 'exit 0' ERR; pg_isready -h orders-db; exit $?";
    let got = finding_of(&["sh", "-c", script]);
    assert!(got.as_ref().is_some_and(|g| g.0 == Action::Deny), "{got:?}");
}

/// `exit ${1:-0}` where the shell was given `$1` empty (`sh -c SCRIPT name ''`) exits 0. Denied
/// on main. `${1-0}` of an empty `$1` is empty (a bare `exit`: the check's status).
#[test]
fn an_exit_status_defaulting_an_empty_positional_parameter_is_its_default() {
    let got = finding_of(&["sh", "-c", "pg_isready -h orders-db; exit ${1:-0}", "probe", ""]);
    assert!(got.as_ref().is_some_and(|g| g.0 == Action::Warn), "{got:?}");
    for script in ["pg_isready -h orders-db; exit ${1-0}", "pg_isready -h orders-db; exit ${1:-$?}"] {
        let got = finding_of(&["sh", "-c", script, "probe", ""]);
        assert!(got.as_ref().is_some_and(|g| g.0 == Action::Deny), "{script}: {got:?}");
    }
}

/// `rc=$? <<EOF` whose body's command substitution reads no status (`$(echo hello)`): the
/// statement's status is that substitution's own, and `rc` is followed as a plain `rc=$?` is.
/// Denied on main. Still denied where `rc` is the exit status.
#[test]
fn a_saved_status_under_a_here_document_with_a_plain_substitution_is_followed() {
    let warned = ["pg_isready -h orders-db; rc=$? <<EOF\n$(echo hello)\nEOF"];
    let denied = ["pg_isready -h orders-db; rc=$? <<EOF\n$(echo hello)\nEOF\nexit $rc"];
    expect_actions(&warned, &denied);
}

/// A harmless EXIT trap in the probe's script leaves the analysis of the code it runs (a called
/// function's body, a nested `sh -c`) to the walk (cargo-mutants, `script.rs`: the trap's
/// `&&` made `||` stopped it, denying what follows).
#[test]
fn a_harmless_trap_leaves_called_code_to_the_walk() {
    let warned = [
        "trap 'rm -f /tmp/x' EXIT; f() { pg_isready -h orders-db; echo checked; }; f",
        "trap 'rm -f /tmp/x' EXIT; sh -c 'pg_isready -h orders-db; echo checked'",
    ];
    let denied = ["trap 'rm -f /tmp/x' EXIT; f() { pg_isready -h orders-db; }; f"];
    expect_actions(&warned, &denied);
}

/// bash reads an operand of `[[ A -eq B ]]` as an arithmetic expression: a name there is its
/// variable's value (`[[ rc -eq 0 ]]`, `[[ $(echo rc) -eq 0 ]]`: 0 / 1 in bash 5.2; dash has no
/// `[[`, 127 / 127, as for `[[ $rc -eq 0 ]]`, already denied). Warned on main (a doubt). A test
/// every outage status passes, or a name the replay does not hold, stays a warning.
#[test]
fn a_name_in_a_double_bracket_arithmetic_comparison_is_its_value() {
    let warned = [
        "pg_isready -h orders-db; rc=$?; [[ rc -ne 3 ]]",
        "pg_isready -h orders-db; rc=$?; [[ $(echo rc) -ne 3 ]]",
        "pg_isready -h orders-db; rc=$?; [[ foo -eq 0 ]]",
        "pg_isready -h orders-db; rc=$?; [[ $(echo 0) -eq 0 ]]",
    ];
    let denied = [
        "pg_isready -h orders-db; rc=$?; [[ rc -eq 0 ]]",
        "pg_isready -h orders-db; rc=$?; [[ $(echo rc) -eq 0 ]]",
    ];
    expect_actions(&warned, &denied);
}
