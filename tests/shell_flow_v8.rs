//! Session 22, false-deny pass (s22-fdc): an `if` whose branches differ, judged by the branch
//! the dependency's outage takes. Denied on main 51d7fe6 whatever the direction: `if ! dep; then
//! echo skip; exit 0; fi; local-check` (Bitnami's Redis probes skip a master they cannot reach),
//! `if dep; then pcp_attach_node -n 1; fi` (Bitnami's pgpool health check), both exiting 0 / 0.
//! Every row was run in bash 5.2.15 and dash 0.5.12 with stub clients (`pg_isready` exits 0 with
//! the database up, 2 with it down; `redis-cli` 0 and 1; a client aimed at localhost always
//! answers; `pcp_attach_node` and `psql` 0): the warned rows exit 0 / 0 (1 / 0 where the outage
//! can only make the probe pass), the denied rows 0 / 1 or 0 / 2.

use probegate::policy::Action;

mod common;
use common::flow::*;

/// The outage makes the condition fail (or, under `!`, succeed) and takes a branch that only
/// writes output: ending with `exit 0`, the script exits 0; with no `exit`, the `if`'s status is
/// that branch's (0) and the script goes on as if the `if` were not there, while the branch it
/// skips runs programs only (`pcp_attach_node`, a local check), or leaves state (`ok=1`, `touch`)
/// that nothing after the `if` reads. Still denied where the outage's branch fails (`exit 1`,
/// `false`, the `else` of `elif`s), where the skipped branch leaves the script (`exit 0`) or
/// leaves state read later (`[ "$ok" = 1 ]`, `[ -f F ]`, `$PWD`, a caller reading it, a loop
/// around it), and where `exit 0` ends only a subshell.
#[test]
fn an_if_whose_outage_branch_cannot_fail_is_a_warning() {
    let warned = [
        "if ! redis-cli -h redis-master ping; then echo skip; exit 0; fi; redis-cli -h localhost ping | grep -q PONG",
        "if redis-cli -h redis-master ping >/dev/null; then redis-cli -h localhost ping | grep -q PONG; fi",
        "if pg_isready -h orders-db; then pcp_attach_node -n 1; fi; curl -sf localhost:8080/",
        "if pg_isready -h orders-db; then touch /tmp/attached; fi",
        "psql -h localhost -c 'select 1' || exit 1; if pg_isready -h orders-db; then pcp_attach_node -n 1; fi",
        "set -e; if pg_isready -h orders-db; then pcp_attach_node -n 1; fi",
        "if ! pg_isready -h orders-db; then echo down; else pcp_attach_node -n 1; fi",
        "if pg_isready -h orders-db; then pcp_attach_node -n 1; else echo down; fi; curl -sf localhost:8080/",
        "if pg_isready -h orders-db; then ok=1; fi",
        "if [ -f /etc/x ]; then :; elif pg_isready -h orders-db; then pcp_attach_node -n 1; fi",
        "if [ -n \"x\" ] && pg_isready -h orders-db; then pcp_attach_node -n 1; fi; curl -sf localhost:8080/",
        "if { pg_isready -h orders-db; }; then pcp_attach_node -n 1; fi; curl -sf localhost:8080/",
        // (1 / 0: the outage can only make the probe pass.)
        "if ! pg_isready -h orders-db; then exit 0; fi; pcp_attach_node -n 1; exit 1",
    ];
    let denied = [
        "if redis-cli -h redis-master ping; then exit 0; else exit 1; fi",
        "if ! pg_isready -h orders-db; then exit 1; fi; echo ok",
        "if pg_isready -h orders-db; then echo ok; else false; fi",
        "if pg_isready -h orders-db; then exit 0; fi; exit 1",
        "if pg_isready -h orders-db; then ok=1; fi; [ \"$ok\" = 1 ]",
        "if pg_isready -h orders-db; then ok=1; fi; pcp_attach_node -n 1; [ \"$ok\" = 1 ]",
        "if pg_isready -h orders-db; then touch /tmp/attached; fi; [ -f /tmp/attached ]",
        "f() { if pg_isready -h orders-db; then ok=1; fi; }; f; [ \"$ok\" = 1 ]",
        "for h in a b; do if pg_isready -h orders-db; then ok=1; fi; done; [ \"$ok\" = 1 ]",
        "if pg_isready -h orders-db; then cd /tmp; fi; [ \"$PWD\" = /tmp ]",
        "if pg_isready -h orders-db; then echo ok; elif [ -f /x ]; then :; else exit 1; fi",
        "if ! pg_isready -h orders-db; then echo down; false; fi",
        "if [ -n \"x\" ] && ! pg_isready -h orders-db; then exit 1; fi",
        "( if ! pg_isready -h orders-db; then exit 0; fi; exit 1 ) || exit 0; exit 1",
        "f() { if ! pg_isready -h orders-db; then exit 0; fi; exit 1; }; ( f ) || exit 0; exit 1",
        "for i in 1; do if pg_isready -h orders-db; then :; else break; fi; exit 0; done; exit 1",
    ];
    expect_actions(&warned, &denied);
}

/// The warning says which way the outage goes.
#[test]
fn the_warning_names_the_branch_the_outage_takes() {
    let script = "if ! redis-cli -h redis-master ping; then echo skip; exit 0; fi; redis-cli -h localhost ping | grep -q PONG";
    let got = finding_of(&["sh", "-c", script]);
    assert!(got.as_ref().is_some_and(|g| g.0 == Action::Warn && g.1.contains("exits 0")), "{got:?}");
    let script = "if pg_isready -h orders-db; then pcp_attach_node -n 1; fi; curl -sf localhost:8080/";
    let got = finding_of(&["sh", "-c", script]);
    assert!(got.as_ref().is_some_and(|g| g.0 == Action::Warn && g.1.contains("skipping one")), "{got:?}");
}
