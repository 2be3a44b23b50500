//! Session 20, false-deny pass: liveness exec probes whose verdict rests on where a check's status
//! goes. Every row was run in bash 5.2 and dash 0.5.12 with stub clients (`pg_isready` exits 0
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
    // bash reads a bare word as a variable in `[[ -eq ]]` (0 / 1; dash has no `[[`).
    let bash_only = "log() { echo \"$@\"; }; pg_isready -h orders-db; rc=$?; log \"rc $rc\"; [[ rc -eq 0 ]]";
    let got = finding_of(&["bash", "-c", bash_only]);
    assert!(got.as_ref().is_some_and(|g| g.0 == Action::Deny), "{got:?}");
}
