//! Session 21, false-deny pass: liveness exec probes denied on main 476245e although they exit
//! the same with the database up and down. Every row was run in bash 5.2 and dash 0.5.12 with
//! stub clients (`pg_isready` exits 0 with the database up, 2 with it down): the warned rows
//! exit 0 / 0 (1 / 1 where the script fails either way), the denied rows fail only with the
//! database down (0 / 1 or 0 / 2).

use probegate::policy::Action;

mod common;
use common::flow::*;

/// An EXIT trap whose action calls a function of the script that only writes output or removes
/// files (`cleanup() { rm -f /tmp/x; }; trap cleanup EXIT`) changes no status, as the same
/// commands written in the trap do: the trap's own status is not the script's. Denied on main
/// (the trap stopped the analysis). Still denied where the handler can: it runs `exit` (on a
/// flag the check sets), a definition of it does, errexit is on (a failing handler command then
/// ends the shell with its status), or the status reaches the script by itself.
#[test]
fn an_exit_trap_calling_a_function_that_only_writes_or_removes_is_no_status() {
    let warned = [
        "cleanup() { rm -f /tmp/x; }; trap cleanup EXIT; pg_isready -h orders-db; exit 0",
        "log() { echo \"$@\"; }; trap \"log bye\" EXIT; pg_isready -h orders-db; exit 0",
        "cleanup() { rm -f /tmp/x; }; trap cleanup EXIT; pg_isready -h orders-db; [ $? -ne 3 ]",
        "log() { echo \"$@\" >&2; }; trap 'log \"probe done\"' EXIT TERM; pg_isready -h orders-db; exit 0",
        "cleanup() {\n  rm -f /tmp/x\n}\ntrap cleanup EXIT\npg_isready -h orders-db\nexit 0",
    ];
    let denied = [
        "cleanup() { rm -f /tmp/x; }; trap cleanup EXIT; pg_isready -h orders-db",
        "cleanup() { rm -f /tmp/x; }; trap cleanup EXIT; pg_isready -h orders-db; [ $? -eq 0 ]",
        "f() { [ \"$ok\" = 1 ] || exit 1; }; trap f EXIT; pg_isready -h orders-db && ok=1; exit 0",
        "set -e; f() { [ \"$ok\" = 1 ]; }; trap f EXIT; pg_isready -h orders-db && ok=1; exit 0",
        "f() { echo bye; }; f() { [ \"$ok\" = 1 ] || exit 1; }; trap f EXIT; pg_isready -h orders-db && ok=1; exit 0",
        "f() { echo bye; exit $rc; }; trap f EXIT; pg_isready -h orders-db; rc=$?; exit 0",
        "f() { echo bye; }; trap 'f; [ \"$ok\" = 1 ] || exit 1' EXIT; pg_isready -h orders-db && ok=1; exit 0",
    ];
    expect_actions(&warned, &denied);
    // `sh -ec`: errexit from the shell's own option.
    let script = "f() { [ \"$ok\" = 1 ]; }; trap f EXIT; pg_isready -h orders-db && ok=1; exit 0";
    let got = finding_of(&["sh", "-ec", script]);
    assert!(got.as_ref().is_some_and(|g| g.0 == Action::Deny), "{got:?}");
}

/// `rc=$?` with a here-document (`rc=$? <<EOF`): the here-document gives the assignment no
/// status unless a command substitution in it does (POSIX 2.9.1), so the saved status is
/// followed as a plain `rc=$?` is. Denied on main.
#[test]
fn a_saved_status_under_a_here_document_is_followed_as_a_plain_one() {
    let warned = [
        "pg_isready -h orders-db; rc=$? <<EOF\nhello\nEOF",
        "pg_isready -h orders-db; rc=$? <<'EOF'\n$(exit 3)\nEOF\necho \"rc $rc\" >&2",
    ];
    let denied = [
        "pg_isready -h orders-db; rc=$? <<EOF\nhello\nEOF\n[ $rc -eq 0 ]",
        "pg_isready -h orders-db; rc=$? <<EOF\n$(test $? -eq 0)\nEOF",
    ];
    expect_actions(&warned, &denied);
}

/// `exit ${1:-0}` where the shell was given no `$1` (`sh -c SCRIPT`, or `sh -c SCRIPT name`,
/// where `name` is `$0`) exits 0. Denied on main. A default that is the status (`${1:-$?}`),
/// or a function's `$1` (its call's argument), keeps it coupled.
#[test]
fn an_exit_status_defaulting_an_unset_positional_parameter_is_its_default() {
    let warned = ["pg_isready -h orders-db; exit ${1:-0}", "pg_isready -h orders-db; exit \"${1-0}\""];
    let denied =
        ["pg_isready -h orders-db; exit ${1:-$?}", "f() { exit ${1:-0}; }; pg_isready -h orders-db; f $?"];
    expect_actions(&warned, &denied);
    let script = "pg_isready -h orders-db; exit ${1:-0}";
    let got = finding_of(&["sh", "-c", script, "probe"]);
    assert!(got.as_ref().is_some_and(|g| g.0 == Action::Warn), "{got:?}");
    // `sh -c SCRIPT probe 3`: `$1` is 3, not read as unset (exit 3 either way: kept as before).
    let got = finding_of(&["sh", "-c", script, "probe", "3"]);
    assert!(got.as_ref().is_some_and(|g| g.0 == Action::Deny), "{got:?}");
}

/// A function redefined at the top level after a call: the later definition does not apply to
/// the call before it (`log $?; log() { [ "$1" = 0 ]; }` runs the first `log`). Denied on main.
/// Still denied where the call may run after the redefinition (in a function called after it),
/// or where the definition that holds at the call reads the status.
#[test]
fn a_later_top_level_definition_does_not_apply_to_a_call_before_it() {
    let warned = [
        "log() { echo \"$@\"; }; pg_isready -h orders-db; log $?; log() { [ \"$1\" = 0 ]; }",
        "log() { echo \"$@\"; }; pg_isready -h orders-db || log down; log() { [ \"$1\" = 0 ]; }",
        "log() { echo \"$@\"; }; pg_isready -h orders-db; log $?; log() { exit 1; }; echo done",
    ];
    let denied = [
        "log() { echo \"$@\"; }; main() { pg_isready -h orders-db; log $?; }; log() { [ \"$1\" = 0 ]; }; main",
        // A function defined inside a compound statement is a body all the same (cargo-mutants,
        // `calls.rs` `!in_body` made `in_body`: the call was read as a top-level one).
        "log() { echo \"$@\"; }; if true; then main() { pg_isready -h orders-db; log $?; }; fi; \
         log() { [ \"$1\" = 0 ]; }; main",
        "log() { [ \"$1\" = 0 ]; }; pg_isready -h orders-db; log $? || exit 1; log() { echo \"$@\"; }",
        "log() { exit 1; }; pg_isready -h orders-db || log down; log() { echo \"$@\"; }",
    ];
    expect_actions(&warned, &denied);
}

/// A wrapper function named like the client (`pg_isready() { command pg_isready "$@" || true;
/// }`): its body is what runs, and `|| true` there ignores the outage (a warning on main
/// already, pinned); a wrapper that keeps the status is denied.
#[test]
fn a_wrapper_function_named_like_the_client_is_judged_by_its_body() {
    let warned = [
        "pg_isready() { command pg_isready \"$@\" || true; }; pg_isready -h orders-db",
        "pg_isready() { command pg_isready \"$@\" || true; }; pg_isready -h orders-db || exit 1",
        "pg_isready() { command pg_isready \"$@\" >/dev/null || echo down; }; pg_isready -h orders-db",
    ];
    let denied = ["pg_isready() { command pg_isready \"$@\"; }; pg_isready -h orders-db"];
    expect_actions(&warned, &denied);
}

/// A function defined alike in every branch of an `if`/`else` is defined after it, when no word
/// of the `if` calls a function (`Ctx::guarded_if`): a word there is split at what no name holds,
/// so `orders-db` in a condition is one word, not a call of the script's `db` (cargo-mutants,
/// `flow.rs` `c == '_' || c == '-'` made `&&`, read it as one and denied the first row, 0 / 0),
/// while a call of another function in a branch (`set_up`, which redefines `log`) keeps the
/// definition uncertain (0 / 1).
#[test]
fn a_word_of_an_if_is_a_call_only_as_a_whole_name() {
    let warned = [
        "db() { :; }; if [ -f /etc/orders-db ]; then log() { echo \"$@\"; }; else log() { echo \"$@\"; }; fi; \
         main() { pg_isready -h orders-db || log down; }; main",
    ];
    let denied =
        ["set_up() { log() { exit 1; }; }; if [ -n \"$HOME\" ]; then log() { echo \"$@\"; }; set_up; \
         else log() { echo \"$@\"; }; fi; main() { pg_isready -h orders-db || log down; }; main"];
    expect_actions(&warned, &denied);
}

/// A probe's `$$` is the kubelet's escape for `$` (Define a Command and Arguments for a
/// Container), so `echo $$; pg_isready -h orders-db` runs `echo $; pg_isready -h orders-db`:
/// bash and dash read the lone `$` as text (0 / 2), tree-sitter-bash 0.25.1 as a syntax error,
/// and main noted the probe as not analysed. A lone `$` before an operator now reads as a word.
#[test]
fn a_lone_dollar_before_an_operator_is_text() {
    let warned = ["echo $$; pg_isready -h orders-db || true", "pg_isready -h orders-db; echo $$;"];
    let denied = [
        "echo $$; pg_isready -h orders-db",
        "echo $$|cat; pg_isready -h orders-db",
        "echo $$&& pg_isready -h orders-db",
        "(echo $$); pg_isready -h orders-db",
        "x=$$; pg_isready -h orders-db",
        "echo $$>/dev/null; pg_isready -h orders-db",
    ];
    expect_actions(&warned, &denied);
}
