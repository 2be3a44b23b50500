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
/// called there is followed into its body. Denied where that body leaves state read later (`ok=1`
/// then `[ "$ok" = 1 ]`: 1 / 0) or leaves the script (`exit 0`, then the script's `exit 1`: 1 /
/// 0). Kills `status/outage.rs:117:39` (the `!` of the word split deleted: no word of the skipped
/// branch is a function's name, its body never looked at, both rows warned).
#[test]
fn a_function_the_skipped_branch_calls_is_followed() {
    let denied = [
        "attach() { ok=1; }; if redis-cli -h redis-master ping; then attach; fi; [ \"$ok\" = 1 ]",
        "g() { echo up; exit 0; }; if redis-cli -h redis-master ping; then g; fi; exit 1",
    ];
    expect_actions(&[], &denied);
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
