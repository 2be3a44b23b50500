//! Session 27: the mutant CI's sample left alive at the end of session 26 (cargo-mutants 27.1.0),
//! killed by rows that fail with the mutant applied by hand and pass without it. Every script row
//! was run in bash 5.2.15 and dash 0.5.12 with stub clients on PATH (`/tmp/emstub/run.sh`:
//! `redis-cli` exits 0 up and 1 down, `pg_isready` 0 up and 2 down); each row's statuses, up /
//! down, are in its comment ("0 / 0" is not coupled: never a denial).

mod common;

use common::flow::*;

/// `status/zero.rs:120:13` (delete the `else_clause` arm of `returns_zero_after`'s walk up from
/// the check): a function whose `else` branch holds `C || return 0`, its body ending in `return
/// 0`, returns 0 either way (as the `if` branch form of `shell_flow_v17` does); without the arm
/// the walk gives up at the `else` and the check's outage is read as failing the call. Contrasts:
/// `return 1` in the branch, and a last statement that fails.
#[test]
fn a_check_in_an_else_branch_of_a_body_returning_zero_returns_zero() {
    let warned = [
        // bash 0 / 0, dash 0 / 0.
        "f(){ if false; then :; else redis-cli -h redis-master.cache.svc ping || return 0; fi; return 0; }; f",
        // bash 0 / 0, dash 0 / 0.
        "f(){ if [ -f /nonexistent ]; then echo x; else pg_isready -h orders-db -q || return 0; echo ok; fi; return 0; }; f",
    ];
    let denied = [
        // bash 0 / 1, dash 0 / 1.
        "f(){ if false; then :; else redis-cli -h redis-master.cache.svc ping || return 1; fi; return 0; }; f",
        // bash 0 / 2, dash 0 / 2.
        "f(){ if false; then :; else pg_isready -h orders-db -q; fi; }; f",
    ];
    expect_actions(&warned, &denied);
}
