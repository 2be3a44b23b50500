//! Session 27, false denials left from s26 (s27-fda): an arithmetic expansion read as a command
//! named by an expansion (fresh25's 51), `local out` making a variable "may be read elsewhere", a
//! function whose rest after `|| return 0` is a test whose failure only prints, `cat F` and a test
//! of F's directory after both branches wrote F, a substitution's value read only by tests whose
//! status is lost, output appended to a file the script only writes (by the check itself, by
//! `&& log up`), and pg_isready's status line written to a file only tested for being non-empty.
//!
//! Every row was run in bash 5.2.15 and dash 0.5.12 with stub clients on PATH
//! (`/tmp/emstub/run.sh`: `redis-cli` exits 0 up and 1 down, printing nothing; `pg_isready` 0 up
//! and 2 down), `{L}` replaced by `test -d /` there; each row's statuses, up / down, are in its
//! comment, the same in both shells unless said ("0 / 0" or "1 / 1" is not coupled: never a
//! denial; "0 / 1" is). Every warned row was denied on main 559344a; every denied row was denied
//! there too.

mod common;
use common::flow::*;
use probegate::policy::Action;

const R: &str = "redis-cli -h redis-master.shop.svc ping";
const P: &str = "pg_isready -h orders-db";
const L: &str = "curl -fs localhost:8080/live";

/// Each script with `R`, `P` and `L` put in.
fn rows(scripts: &[&str]) -> Vec<String> {
    scripts.iter().map(|s| s.replace("{R}", R).replace("{P}", P).replace("{L}", L)).collect()
}

/// [`expect_actions`] on [`rows`].
#[track_caller]
fn expect(warned: &[&str], denied: &[&str]) {
    let (warned, denied) = (rows(warned), rows(denied));
    let warned: Vec<&str> = warned.iter().map(String::as_str).collect();
    let denied: Vec<&str> = denied.iter().map(String::as_str).collect();
    expect_actions(&warned, &denied);
}

/// The liveness-dependency action on the redis-master or orders-db check of `script` run by
/// `shell -c`.
fn action_of(shell: &str, script: &str) -> Option<Action> {
    finding_of(&[shell, "-c", script])
        .filter(|(_, m)| m.contains("orders-db") || m.contains("redis-master"))
        .map(|(a, _)| a)
}

/// fresh25's 51 whole (a bash template: `set -Eeuo pipefail`, an ERR trap that logs, a retry
/// helper, status files, the cache check made harmless by `|| true`): bash 0 / 0 with the local
/// server up (dash 2 / 2: no `pipefail`). `check_heartbeat`'s `[ $(( $(date +%s) - $(stat -c %Y
/// "$F") )) -lt 120 ]` was read as running a command named by an expansion, so any function
/// could run, and the cache check's `if` was kept coupled.
#[test]
fn fresh25_51_whole_is_a_warning() {
    let script = include_str!("fixtures/scripts/s27_51_heartbeat_arith.sh");
    assert_eq!(action_of("bash", script), Some(Action::Warn));
}

/// Arithmetic in a function body names no command; the command substitutions in it still do.
#[test]
fn arithmetic_in_a_function_body_runs_no_named_command() {
    expect(
        &[
            // 0 / 0
            "chk(){ if {R}; then echo up > /tmp/c; else echo down > /tmp/c; fi; }; hb(){ [ $(( $(date +%s) - 1 )) -gt 0 ]; }; chk || true; hb",
            // 0 / 0
            "chk(){ if {R}; then echo up > /tmp/c; else echo down > /tmp/c; fi; }; hb(){ [ $(( $(date +%s) - $(stat -c %Y /) )) -gt 0 ]; }; chk || true; hb",
        ],
        &[
            // 0 / 1
            "chk(){ {R}; }; hb(){ [ $(( $(date +%s) - 1 )) -gt 0 ]; }; chk && hb",
            // 0 / 1
            "chk(){ if {R}; then echo up > /tmp/c; else exit 1; fi; }; hb(){ [ $(( $(date +%s) - 1 )) -gt 0 ]; }; chk || true; hb",
        ],
    );
}

/// `local out` (or `declare out`) with no option reads, exports and prints nothing; and a body
/// whose rest after `out=$(C) || return 0` is `[ "$out" = PONG ] || echo ...` returns 0 either
/// way. `|| return 1`, a rest that can fail, or the call feeding `&&` stay coupled.
#[test]
fn a_plain_local_and_a_test_that_only_prints_are_not_coupled() {
    expect(
        &[
            // 0 / 0
            "check_redis(){ local out; out=$({R} 2>&1) || return 0; [ \"$out\" = PONG ] || echo \"unexpected\" >&2; }; check_redis; {L}",
            // 0 / 0
            "check_redis(){ local out; out=$({R} 2>&1) || return 0; [ \"$out\" = PONG ] || echo \"unexpected\" >&2; }; check_redis",
            // 0 / 0
            "f(){ local out rc; out=$({R}) || return 0; [ -n \"$out\" ] || echo empty; }; f; {L}",
            // 0 / 0
            "f(){ declare out; out=$({R}) || return 0; [ \"$out\" = PONG ] || echo bad; }; f; {L}",
            // 0 / 0
            "f(){ out=$({R} 2>&1) || return 0; [ \"$out\" = PONG ] || echo \"unexpected\" >&2; }; f; {L}",
        ],
        &[
            // 0 / 1
            "check_redis(){ local out; out=$({R} 2>&1) || return 1; [ \"$out\" = PONG ] || echo \"unexpected\" >&2; }; check_redis",
            // 0 / 1
            "check_redis(){ local out; out=$({R} 2>&1) || return 1; echo \"$out\"; }; check_redis && {L}",
            // 1 / 0 with the stub (which prints nothing up); the test alone is the body's status
            "check_redis(){ local out; out=$({R} 2>&1) || return 0; [ \"$out\" = PONG ]; }; check_redis",
        ],
    );
}

/// Both branches write the same file; `cat F` alone (at the top level, output unread) or a test
/// of F's directory cannot see what was written. Piped, substituted, read by `grep`, copied and
/// read, or written by one branch only, it stays coupled.
#[test]
fn cat_and_the_directory_of_a_file_both_branches_write_are_blind() {
    expect(
        &[
            // 0 / 0
            "if {R}; then echo up > /tmp/s; else echo down > /tmp/s; fi; cat /tmp/s; {L}",
            // 0 / 0
            "if {R}; then echo up > /tmp/s; else echo down > /tmp/s; fi; cat /tmp/s",
            // 0 / 0
            "if {R}; then echo up > /tmp/s; else echo down > /tmp/s; fi; test -d /tmp; {L}",
            // 0 / 0
            "if {R}; then echo up > /tmp/s; else echo down > /tmp/s; fi; [ -d /tmp ] && test -s /tmp/s",
        ],
        &[
            // 0 / 1
            "if {R}; then echo up > /tmp/s; else echo down > /tmp/s; fi; cat /tmp/s | grep -q up",
            // 0 / 1
            "if {R}; then echo up > /tmp/s; else echo down > /tmp/s; fi; { cat /tmp/s; } | grep -q up",
            // 0 / 1
            "if {R}; then echo up > /tmp/s; else echo down > /tmp/s; fi; [ \"$(cat /tmp/s)\" = up ]",
            // 0 / 1
            "if {R}; then echo up > /tmp/s; else echo down > /tmp/s; fi; grep -q up /tmp/s",
            // 0 / 1
            "if {R}; then echo up > /tmp/s; else echo down > /tmp/s; fi; cat /tmp/s > /tmp/s2; grep -q up /tmp/s2",
            // 0 / 1
            "rm -f /tmp/s1; if {R}; then echo up > /tmp/s1; fi; test -s /tmp/s1",
        ],
    );
}

/// `x=$(C || echo DOWN)` whose `x` only plain tests read, each test's status lost (a later
/// command's replaces it, or its failure only prints). Last, or `|| exit 1`, coupled.
#[test]
fn a_substitution_only_tested_with_the_status_lost_is_not_coupled() {
    expect(
        &[
            // 0 / 0
            "x=$({R} || echo DOWN); [ \"$x\" = PONG ] && echo ok; {L}",
            // 0 / 0
            "x=$({R} || echo DOWN); [ \"$x\" != DOWN ] || echo degraded >&2; {L}",
            // 0 / 0
            "x=$({R} || echo DOWN); if [ \"$x\" = DOWN ]; then echo degraded; else echo ok; fi; {L}",
        ],
        &[
            // 0 / 1
            "x=$({R} || echo DOWN); [ \"$x\" != DOWN ] || exit 1",
            // 0 / 1
            "x=$({R} || echo DOWN); [ \"$x\" != DOWN ]",
            // 0 / 1
            "x=$({R} || echo DOWN); [ \"$x\" != DOWN ] && echo ok",
            // 0 / 1
            "x=$({R} || echo DOWN); [ \"$x\" != DOWN ] && echo ok; exit $?",
        ],
    );
}

/// Output appended to a file the script only writes: by `&& log up || log down` (a function
/// that appends), by `&& echo up >> F`, by the check's own redirection and its `|| echo down >>
/// F`. An `exit 1` on the outage side, or a read of the file, stays coupled.
#[test]
fn output_to_a_file_the_script_only_writes_is_not_read() {
    expect(
        &[
            // 0 / 0
            "log(){ echo \"$(date) $*\" >> /tmp/h.log; }; {R} && log up || log down; {L}",
            // 0 / 0
            "{R} && echo up >> /tmp/h.log || echo down >> /tmp/h.log; {L}",
            // 0 / 0
            "LOGFILE=/tmp/l.log; {R} >> \"$LOGFILE\" 2>&1 || echo down >> \"$LOGFILE\"; {L}",
            // 0 / 0
            "{R} >> /tmp/l.log 2>&1 || echo down >> /tmp/l.log; {L}",
            // 0 / 0
            "{R} > /tmp/l.log 2>&1 || echo down > /tmp/l.log; {L}",
        ],
        &[
            // 0 / 1
            "log(){ echo \"$(date) $*\" >> /tmp/h.log; }; {R} && log up || { log down; exit 1; }; {L}",
            // 0 / 1
            "LOGFILE=/tmp/l.log; {R} >> \"$LOGFILE\" 2>&1 || exit 1; echo ok >> \"$LOGFILE\"",
            // 1 / 0 (the log made afresh; the stub prints nothing up)
            "rm -f /tmp/l2.log; {R} >> /tmp/l2.log 2>&1 || echo down >> /tmp/l2.log; grep -q down /tmp/l2.log",
            // 0 / 1 (the file made afresh: only `echo up` writes it, which may not run)
            "rm -f /tmp/h2.log; {R} && echo up >> /tmp/h2.log; test -e /tmp/h2.log",
            // 0 / 1
            "rm -f /tmp/h2.log; {R} && echo up > /tmp/h2.log; test -e /tmp/h2.log",
            // 1 / 0
            "rm -f /tmp/h2.log; {R} || echo down >> /tmp/h2.log; test -e /tmp/h2.log",
        ],
    );
}

/// pg_isready without `-q` prints its status line on standard output up or down ("orders-db:5432 -
/// accepting connections" / "orders-db:5432 - no response": PostgreSQL docs, pg_isready; the
/// Debian 15.18 client here prints the second with no server), so a file its standard output
/// goes to is never empty: `test -s` of it sees nothing of the outage. Statuses with a stub that
/// prints those lines (the emstub one prints nothing, 1 / 1). `grep` of the line, `-s` after `-q`
/// or of its standard error only stay coupled (0 / 1 with the printing stub, or 1 / 1).
#[test]
fn a_status_line_written_to_a_file_only_tested_non_empty_is_not_coupled() {
    expect(
        &[
            // 0 / 0
            "{P} > /tmp/pg.log 2>&1; test -s /tmp/pg.log",
            // 0 / 0
            "{P} > /tmp/pg.log; [ -s /tmp/pg.log ]",
            // 0 / 0
            "{P} >> /tmp/pg.log 2>&1; test -s /tmp/pg.log; {L}",
            // 0 / 0: the redirection makes the file, quiet or not
            "rm -f /tmp/pgq.log; {P} -q > /tmp/pgq.log 2>&1; test -e /tmp/pgq.log",
            // 0 / 0: the same of a client that prints nothing down
            "rm -f /tmp/h4.log; {R} > /tmp/h4.log; test -e /tmp/h4.log; {L}",
        ],
        &[
            // 0 / 1
            "{P} > /tmp/pg.log 2>&1; grep -q accepting /tmp/pg.log",
            // 0 / 1 (`-q`: nothing printed, the file made afresh; only `&& echo ok` fills it)
            "rm -f /tmp/pg3.log; {P} -q > /tmp/pg3.log 2>&1 && echo ok > /tmp/pg3.log; test -s /tmp/pg3.log",
        ],
    );
}
