//! Session 23, a new user's false denies (s23-fd): a status saved before the check, a
//! declaration's own status, a function's state lost in a pipeline element, an `if` that fails
//! while the dependency answers, and bash-only syntax that dash reads otherwise under `sh -c`.
//! Every row was run in bash 5.2.15 and dash 0.5.12 with stub clients on PATH (`redis-cli` prints
//! PONG and exits 0 up, writes its error to stderr and exits 1 down; `pg_isready` exits 0 up,
//! prints "no response" and exits 2 down): the warned rows exit 0 with the dependency down (and
//! up), the denied rows 0 up and non-zero down (each row's statuses, down / up, in its comment
//! where they differ).

use probegate::policy::Action;

mod common;
use common::flow::*;

/// A variable assigned `$?` (or an arithmetic value) before the check, once, and only read
/// after it holds an earlier status: the same whatever the check gives, and never empty, so
/// `exit $rc` is no bare `exit` (0 / 0 each, denied on main 2c3f567). Still denied where the
/// variable is assigned after the check, by its `||` side, or is empty (a bare `exit`).
#[test]
fn a_status_saved_before_the_check_is_not_the_check_s() {
    let warned = [
        "x=$?; redis-cli -h redis-master ping; exit $x",
        "rc=$?; pg_isready -h orders-db; exit $rc",
        "rc=$?; pg_isready -h orders-db; exit \"${rc}\"",
        "rc=$((1-1)); pg_isready -h orders-db; exit $rc",
    ];
    let denied = [
        // 2 / 0 each, 1 / 0 for the `||` row.
        "pg_isready -h orders-db; rc=$?; redis-cli -h redis-master ping; exit $rc",
        "rc=$?; pg_isready -h orders-db; rc=$?; exit $rc",
        "rc=$?; pg_isready -h orders-db || rc=1; exit $rc",
        "rc=; pg_isready -h orders-db; exit $rc",
    ];
    expect_actions(&warned, &denied);
}

/// `local NAME=$(check)` (`declare` in bash) returns the declaration's own status, 0 (bash
/// manual, "Bash Builtins"), so a `$?` read after it is 0 whatever the check gave (0 / 0, denied
/// on main 2c3f567; dash has no `declare`: 127 / 127, denied as before). Still denied where the
/// assignment is a statement of its own (`local out; out=$(check)`: 1 / 0) or the value is
/// tested (1 / 0).
#[test]
fn a_declaration_s_own_status_hides_the_substitution_s() {
    let warned = [
        "f() { local out=$(redis-cli -h redis-master ping); rc=$?; return $rc; }; f",
        "f() { local out=$(pg_isready -h orders-db); return $?; }; f",
        "f() { local out=$(pg_isready -h orders-db); rc=$?; exit $rc; }; f",
    ];
    let denied = [
        "f() { local out; out=$(redis-cli -h redis-master ping); rc=$?; return $rc; }; f",
        "f() { out=$(redis-cli -h redis-master ping); rc=$?; return $rc; }; f",
        "f() { local out=$(redis-cli -h redis-master ping); [ -n \"$out\" ]; }; f",
        "f() { redis-cli -h redis-master ping; rc=$?; return $rc; }; f",
    ];
    expect_actions(&warned, &denied);
}

/// A function called as a pipeline element that is not the last runs in a subshell (bash manual,
/// "Pipelines"; dash always): what it assigns, and its `exit`, end with that subshell (0 / 0,
/// denied on main 2c3f567). Still denied where the call runs in the script's shell (1 / 0, 2 / 0).
#[test]
fn a_function_s_state_in_a_pipeline_element_is_lost() {
    let warned = [
        "f() { redis-cli -h redis-master ping || status=$?; }; status=0; f | cat; exit $status",
        "f() { pg_isready -h orders-db || status=$?; }; status=0; f | cat; [ $status -eq 0 ]",
        "f() { pg_isready -h orders-db || exit 1; }; f | cat",
    ];
    let denied = [
        "f() { redis-cli -h redis-master ping || status=$?; }; status=0; f; exit $status",
        "f() { pg_isready -h orders-db || exit 1; }; f; echo done",
        // A file written in the pipeline's subshell outlives it (0 / 1 in both shells): the CI
        // sample's surviving mutant `leaves_lasting_state -> false` warned on both.
        "f() { redis-cli -h redis-master ping || touch /tmp/down; }; f | cat; [ -f /tmp/down ] && exit 1; exit 0",
        "f() { pg_isready -h orders-db || touch /tmp/down; }; f | cat; if [ -f /tmp/down ]; then exit 1; fi",
    ];
    expect_actions(&warned, &denied);
}

/// What `sh -c` and `bash -c` make of `script`: the finding's action about orders-db or
/// redis-master, if any.
fn action_in(shell: &str, script: &str) -> Option<Action> {
    finding_of(&[shell, "-c", script])
        .filter(|(_, m)| m.contains("orders-db") || m.contains("redis-master"))
        .map(|(a, _)| a)
}

/// bash-only syntax that dash runs otherwise, with no syntax error: under `sh -c` (dash on
/// Debian and Ubuntu images, bash on RHEL and UBI ones) the verdict rests on which shell `sh` is,
/// a warning that says so; `bash -c` keeps its verdict. dash reads `C &>F` as `C &` then `>F`
/// (in the background: 0 / 0), bash as a redirection (1 / 0); dash has no `shopt` (127, and the
/// script goes on without `lastpipe`: 0 / 0), so the last element of a pipeline runs in a subshell
/// there and in the script's shell in bash (1 / 0); dash has no `[[` (127: `if [[ ... ]]` takes
/// the other branch there).
#[test]
fn bash_only_syntax_under_sh_is_a_warning() {
    let rows = [
        "f() { redis-cli -h redis-master ping; }; f &>/dev/null; [ $? = 0 ]",
        "redis-cli -h redis-master ping &>/dev/null",
        "pg_isready -h orders-db &>/dev/null || exit 1",
        "shopt -s lastpipe; f() { redis-cli -h redis-master ping || status=$?; }; status=0; cat /dev/null | f; exit $status",
        // dash: `[[` not found, the branch never runs (0 / 0); bash: 2 / 0.
        "if [[ a != b ]]; then pg_isready -h orders-db; fi",
        "if [[ $MODE == clu* ]]; then pg_isready -h orders-db; fi",
        "redis-cli -h redis-master ping; if [[ $? -ne 0 ]]; then exit 1; fi",
    ];
    let mut wrong = Vec::new();
    for script in rows {
        for (shell, want) in [("sh", Action::Warn), ("bash", Action::Deny)] {
            let got = action_in(shell, script);
            if got != Some(want) {
                wrong.push(format!(
                    "{want:?} expected: {shell} {script:?}: {:?}",
                    finding_of(&[shell, "-c", script])
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    let why = finding_of(&["sh", "-c", rows[0]]).map(|(_, m)| m).unwrap_or_default();
    assert!(why.contains("`sh`") && why.contains("&>"), "{why}");
}

/// An `if` whose check's failure takes a branch that exits 0 and whose success one that exits
/// non-zero (its `else`, or the script after it) fails the probe while the dependency answers
/// (down / up: 0 / 1, 0 / 1, 0 / 2): an inverted check, denied as `! CHECK` last is (the
/// dependency's state alone decides the probe), and said so. On main 2c3f567 each was a warning
/// that it "cannot fail the probe".
#[test]
fn an_if_that_exits_non_zero_when_the_check_succeeds_is_an_inverted_check() {
    let inverted = [
        "f() { redis-cli -h redis-master ping; }; if f; then exit 1; else exit 0; fi",
        "if pg_isready -h orders-db; then exit 1; else exit 0; fi",
        "if ! pg_isready -h orders-db; then exit 0; fi; exit 2",
    ];
    expect_actions(&[], &inverted);
    for script in inverted {
        for shell in ["sh", "bash"] {
            let (_, m) = finding_of(&[shell, "-c", script]).unwrap_or((Action::Warn, String::new()));
            assert!(m.contains("is up (its `if` exits non-zero when it succeeds)"), "{shell} {script}: {m}");
            assert!(!m.contains("cannot fail"), "{m}");
        }
    }
    // Still a warning where the success's branch does not fail (0 / 0).
    let warned = [
        "f() { redis-cli -h redis-master ping; }; if f; then echo ok; else exit 0; fi",
        "if pg_isready -h orders-db; then exit 0; else exit 0; fi",
    ];
    expect_actions(&warned, &[]);
}
