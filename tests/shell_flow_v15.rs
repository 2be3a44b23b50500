//! Session 25, a new user's team template denied at 0 / 0 (s25-fdd): a function nothing calls
//! (`fail() { ...; exit 1; }`) kept every call of another from being judged where it is, a
//! helper writing to `>&2` was not taken as harmless in a called body under `set -e`, and a body
//! writing a log file nothing reads kept `check_cache || true` coupled. Every row was run in
//! bash 5.2.15 and dash 0.5.12 with stub clients on PATH (`/tmp/emstub/run.sh`: `redis-cli`
//! exits 0 up and 1 down, `pg_isready` 0 up and 2 down); each row's statuses, up / down, are in
//! its comment ("0 / 0" is not coupled: never a denial; "0 / 1" in both shells is). Every warned
//! row was denied on main add77c2 but the first, warned there too.

mod common;
use common::flow::*;

const FAIL: &str = r#"fail() { echo "F $*" >&2; exit 1; }"#;
const WARN: &str = r#"warn() { echo "WARN $*" >&2; }"#;
const SOFT: &str = r#"soft() { pg_isready -h orders-db || warn "ignored"; }; soft; echo ok"#;

/// A function no call can reach changes no verdict: `fail`'s `exit 1` runs only where `fail` is
/// called. Called (directly, through another function, or after `C ||`), it keeps the check
/// coupled.
#[test]
fn a_function_nothing_calls_changes_no_verdict() {
    let warned = [
        // bash 0 / 0, dash 0 / 0 (warned on add77c2 too).
        format!("{WARN}; {SOFT}"),
        // 0 / 0 each: `fail` defined before, or after, and never called.
        format!("{FAIL}; {WARN}; {SOFT}"),
        format!("{WARN}; {SOFT}; {FAIL}"),
        // 0 / 0: the check last in a body whose call is not last.
        format!("{FAIL}; soft() {{ pg_isready -h orders-db; }}; soft; echo ok"),
    ];
    let denied = [
        // 0 / 1 in bash and dash: `fail` called after `||`.
        format!("{FAIL}; pg_isready -h orders-db || fail \"db down\""),
        // 0 / 1: `soft` returns 1 with the database down, and is last.
        format!("{FAIL}; {WARN}; soft() {{ pg_isready -h orders-db || return 1; }}; soft"),
        // 0 / 1: `fail` called from the body of the function called.
        format!("{FAIL}; soft() {{ pg_isready -h orders-db || fail db; }}; soft; echo ok"),
        // 0 / 1: through two calls.
        format!(
            "{FAIL}; chk() {{ pg_isready -h orders-db >/dev/null || fail db; }}; run() {{ chk; }}; run; echo ok"
        ),
    ];
    let warned: Vec<&str> = warned.iter().map(String::as_str).collect();
    let denied: Vec<&str> = denied.iter().map(String::as_str).collect();
    expect_actions(&warned, &denied);
}

/// Under `set -e`, a called function's `C || warn x` is 0 either way when `warn` only writes to
/// standard error: `>&2` ends no command.
#[test]
fn a_helper_writing_to_stderr_is_harmless_under_errexit() {
    let warned = [
        // 0 / 0 each in bash and dash (`soft`'s `||` list is errexit's exception).
        format!("set -e; {WARN}; {SOFT}"),
        format!("set -e; {FAIL}; {WARN}; {SOFT}"),
        format!("set -eu; {FAIL}; {WARN}; {SOFT}"),
        // 0 / 0: `soft` last, its status `warn`'s.
        format!("set -e; {WARN}; soft() {{ pg_isready -h orders-db || warn x; }}; soft"),
    ];
    let denied = [
        // 0 / 1: `warn` then `return 1`.
        format!(
            "set -e; {WARN}; soft() {{ pg_isready -h orders-db || {{ warn x; return 1; }}; }}; soft; echo ok"
        ),
        // 0 / 1: a helper that exits 1 after writing to stderr.
        "set -e; die() { echo \"$*\" >&2; exit 1; }; pg_isready -h orders-db || die down; echo ok"
            .to_string(),
    ];
    let warned: Vec<&str> = warned.iter().map(String::as_str).collect();
    let denied: Vec<&str> = denied.iter().map(String::as_str).collect();
    expect_actions(&warned, &denied);
}

/// A function that writes a log file nothing else names leaves nothing the script reads: its call
/// left of `|| true` is judged where it is. A file the script reads again, or a body returning the
/// check's status to `|| exit 1`, keeps it coupled.
#[test]
fn a_log_file_nothing_reads_leaves_no_state() {
    let warned = [
        // 0 / 0 in bash and dash.
        "check_cache() { if redis-cli -h redis-master ping >/dev/null 2>&1; then :; else echo down >> /tmp/h.log; fi; }; check_cache || true",
    ];
    let denied = [
        // 0 / 1 in bash and dash: the body returns the check's status.
        "check_cache() { redis-cli -h redis-master ping >/dev/null 2>&1; }; check_cache || exit 1",
        // 0 / 1: the file written is read afterwards.
        "rm -f /tmp/h; check_cache() { if redis-cli -h redis-master ping >/dev/null 2>&1; then :; else echo down > /tmp/h; fi; }; check_cache || true; ! grep -q down /tmp/h",
    ];
    expect_actions(&warned, &denied);
}

/// The user's team template (`set -eu`, log/warn/fail helpers, retries, a soft database check;
/// `tests/fixtures/scripts/s25_team_template_no_trap.sh`, its host renamed orders-db and its EXIT
/// trap line taken out: with it, `status::rules` still gives up, an open item): 0 / 0 in bash and
/// dash with `curl` stubbed to answer (1 / 1 without: never coupled). Denied on add77c2.
#[test]
fn the_team_template_is_a_warning() {
    let script = include_str!("fixtures/scripts/s25_team_template_no_trap.sh");
    expect_actions(&[script], &[]);
}
