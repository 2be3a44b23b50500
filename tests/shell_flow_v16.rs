//! Session 26, a new user's team-style liveness scripts denied at 0 / 0 (s26-fda; three of the
//! scripts are `tests/fixtures/scripts/s26_*.sh`, hosts renamed orders-db and redis-master): a check's output
//! taken as read through a variable only written out or matched by a harmless `case` (16), a
//! log file named through a variable or written by a function (01), an EXIT trap that keeps
//! success and failure under errexit (37), and an `ERR` trap that only logs, with status files
//! named through a variable (51). Every row was run in bash 5.2.15 and dash 0.5.12 with stub
//! clients on PATH (`/tmp/emstub/run.sh`: `redis-cli` exits 0 up and 1 down, `pg_isready` 0 up
//! and 2 down; rows whose outcome rests on what the client prints were run with a `redis-cli`
//! that prints `role:master` and `PONG` up), in a network namespace with a server answering 200
//! on 127.0.0.1:8080 (so `curl -fs localhost:8080/live` passes); each row's statuses, up / down,
//! are in its comment ("0 / 0" is not coupled: never a denial; "0 / 1" in both shells is). Every
//! warned row was denied on main 0dae461.

mod common;
use common::flow::*;
use probegate::policy::Action;

const L: &str = "curl -fs localhost:8080/live";

/// The scripts, each as `sh -c` and `bash -c`, with `{L}` replaced by the local check.
fn with_l(rows: &[&str]) -> Vec<String> {
    rows.iter().map(|r| r.replace("{L}", L)).collect()
}

/// [`expect_actions`] of rows holding `{L}`.
#[track_caller]
fn expect(warned: &[&str], denied: &[&str]) {
    let (warned, denied) = (with_l(warned), with_l(denied));
    let warned: Vec<&str> = warned.iter().map(String::as_str).collect();
    let denied: Vec<&str> = denied.iter().map(String::as_str).collect();
    expect_actions(&warned, &denied);
}

/// The finding about orders-db or redis-master of `script` run by `shell -c`, as an action.
fn action_of(shell: &str, script: &str) -> Option<Action> {
    let script = script.replace("{L}", L);
    finding_of(&[shell, "-c", &script])
        .filter(|(_, m)| m.contains("orders-db") || m.contains("redis-master"))
        .map(|(a, _)| a)
}

/// A check whose status its `|| echo DOWN` ends, in a substitution whose value only chooses a
/// harmless `case` item or is only written out: the output reaches no status (16).
#[test]
fn a_substitution_value_only_printed_or_matched_harmlessly_is_not_read() {
    expect(
        &[
            // 0 / 0 in bash and dash (redis-cli printing PONG up).
            "state=$(redis-cli -h redis-master ping 2>/dev/null || echo DOWN); case \"$state\" in PONG) echo ok;; *) echo degraded >&2;; esac; {L}",
            // 0 / 0.
            "x=$(redis-cli -h redis-master ping || echo DOWN); echo \"cache: $x\"; {L}",
            // 0 / 0.
            "echo \"cache: $(redis-cli -h redis-master ping || echo DOWN)\"; {L}",
            // 0 / 0.
            "case \"$(redis-cli -h redis-master ping || echo DOWN)\" in *PONG*) echo ok;; *) echo bad;; esac; {L}",
        ],
        &[
            // 0 / 1 in bash and dash: an item that exits 1.
            "state=$(redis-cli -h redis-master ping || echo DOWN); case \"$state\" in *PONG*) echo ok;; *) exit 1;; esac; {L}",
            // 0 / 1: an item that fails, last.
            "x=$(redis-cli -h redis-master ping || echo DOWN); case \"$x\" in *PONG*) ;; *) false;; esac",
            // 0 / 1: the value piped to grep.
            "x=$(redis-cli -h redis-master ping || echo DOWN); echo \"$x\" | grep -q PONG || exit 1; {L}",
            // 0 / 1: the subject's `case` exits 1.
            "case \"$(redis-cli -h redis-master ping || echo DOWN)\" in *PONG*) echo ok;; *) exit 1;; esac; {L}",
            // 0 / 1: a test of the value.
            "x=$(redis-cli -h redis-master ping || echo DOWN); [ \"$x\" != DOWN ]",
            // 0 / 1: echo's output read.
            "echo \"cache: $(redis-cli -h redis-master ping || echo DOWN)\" | grep -q PONG",
        ],
    );
}

/// A log file written through a variable holding a literal path, or by a function whose body
/// only writes such a file, is read by nothing: the check is judged as with `>> /tmp/x` (01).
#[test]
fn a_log_file_named_through_a_variable_or_written_by_a_function_is_unread() {
    expect(
        &[
            // 0 / 0 in bash and dash each.
            "LOG=/tmp/health.log; pg_isready -h orders-db || echo down >> \"$LOG\"; {L}",
            "LOG=/tmp/health.log; log() { echo \"$*\" >> \"$LOG\"; }; pg_isready -h orders-db || log down; {L}",
            "LOG=/tmp/health.log; log() { echo \"$(date +%s) [health] $*\" >> \"$LOG\" 2>/dev/null; }; if ! pg_isready -h orders-db; then log down; fi; {L}",
            "log() { echo \"$*\" >> /tmp/health.log; }; pg_isready -h orders-db || log down; {L}",
            "log() { echo \"$*\" >> /tmp/health.log; }; if ! pg_isready -h orders-db; then log down; fi; {L}",
            "readonly D=/tmp/health; mkdir -p \"$D\"; pg_isready -h orders-db && echo up > \"$D/db\"; {L}",
        ],
        &[
            // 0 / 1 in bash and dash: the outage branch exits 1.
            "LOG=/tmp/health.log; log() { echo \"$*\" >> \"$LOG\"; }; if ! pg_isready -h orders-db; then log down; exit 1; fi; {L}",
            // 0 / 1: the log read back, through the variable or by its path.
            "LOG=/tmp/health.log; rm -f \"$LOG\"; log() { echo \"$*\" >> \"$LOG\"; }; pg_isready -h orders-db || log down; ! grep -q down \"$LOG\"",
            "rm -f /tmp/health.log; log() { echo \"$*\" >> /tmp/health.log; }; pg_isready -h orders-db || log down; ! grep -q down /tmp/health.log",
            // 0 / 1: the status file tested.
            "readonly D=/tmp/health; rm -f \"$D/db\"; pg_isready -h orders-db && echo up > \"$D/db\"; test -s \"$D/db\"",
            "D=/tmp/health; rm -f /tmp/health/db; pg_isready -h orders-db && echo up > \"$D/db\"; cat /tmp/health/db >/dev/null",
        ],
    );
}

/// A test command's `[` (`while [ $i -lt 3 ]`, in a function never called there) is no glob:
/// it names no file the check's outcome is written to. A bracket expression with its `]` is one.
#[test]
fn a_test_bracket_is_no_glob() {
    expect(
        &[
            // 0 / 0 in bash and dash.
            "f() { while [ $i -lt 3 ]; do sleep 1; done; }; pg_isready -h orders-db || echo x >> /tmp/h.log; {L}",
        ],
        &[
            // 1 / 0 in bash and dash: the file written is read by a pattern (missing while up).
            "f() { while [ $i -lt 3 ]; do sleep 1; done; }; rm -f /tmp/h.log; pg_isready -h orders-db || echo x >> /tmp/h.log; cat /tmp/h.l[o]g",
        ],
    );
}

/// An EXIT trap that runs only output, choosing it by the status it saved, keeps a passing
/// script passing and a failing one failing, also under errexit: the script is judged as without
/// it (37).
#[test]
fn an_exit_trap_keeping_success_and_failure_under_errexit() {
    expect(
        &[
            // 0 / 0 in bash and dash each.
            "set -eu; trap 'rc=$?; [ $rc -eq 0 ] || echo \"exiting rc=$rc\" >&2' EXIT; pg_isready -h orders-db || echo down >&2; {L}",
            "set -e; trap 'rc=$?; [ $rc -ne 0 ] && echo \"failed rc=$rc\" >&2' EXIT; pg_isready -h orders-db || echo down >&2; {L}",
            "set -e; trap 'rc=$?; echo \"done rc=$rc\"' EXIT; pg_isready -h orders-db || echo down; {L}",
            "set -e; trap 'rc=$?; [ $rc -eq 0 ] && echo ok' EXIT; pg_isready -h orders-db || echo down; {L}",
            "set -e; trap 'rc=$?; [ $rc -eq 1 ] || echo x' EXIT; pg_isready -h orders-db || echo down; {L}",
        ],
        &[
            // 0 / 2 in bash and dash: errexit ends the script at the check.
            "set -eu; trap 'rc=$?; [ $rc -eq 0 ] || echo \"exiting rc=$rc\" >&2' EXIT; pg_isready -h orders-db; {L}",
            // 0 / 2: the check last.
            "set -eu; trap 'rc=$?; [ $rc -eq 0 ] || echo \"exiting rc=$rc\" >&2' EXIT; {L}; pg_isready -h orders-db",
            // 0 / 1: `|| exit 1`.
            "set -e; trap 'rc=$?; [ $rc -eq 0 ] || echo \"exiting rc=$rc\" >&2' EXIT; pg_isready -h orders-db || exit 1; {L}",
        ],
    );
}

/// An `ERR` trap whose action only logs, to standard error or to a file nothing reads, changes
/// no status (51). Coupled where it runs `exit 1`, or where its log is read.
#[test]
fn an_err_trap_that_only_logs_changes_nothing() {
    const LOG: &str = "readonly LOG_FILE=/tmp/hc.log; log() { printf '%s %s\\n' \"$(date -u +%FT%TZ)\" \"$*\" >> \"$LOG_FILE\"; }";
    let warned = [
        // 0 / 0 in bash and dash.
        format!("{LOG}; on_err() {{ log \"failed at line $1\"; }}; trap 'on_err $LINENO' ERR; redis-cli -h redis-master ping || echo down; {{L}}"),
        "on_err() { echo \"failed at line $1\" >&2; }; trap 'on_err $LINENO' ERR; redis-cli -h redis-master ping || echo down; {L}".to_string(),
        // 0 / 0 in bash, 1 / 1 in dash (no `-E`).
        format!("set -Ee; {LOG}; trap 'log \"failed at $LINENO\"' ERR; redis-cli -h redis-master ping || echo down; {{L}}"),
        // 0 / 0: both branches write the status file, named through a variable, nothing reads.
        "readonly D=/tmp/health; check_cache() { if redis-cli -h redis-master ping; then echo up > \"$D/cache\"; else echo down > \"$D/cache\"; fi; }; check_cache || true; {L}".to_string(),
    ];
    let denied = [
        // 0 / 1 in bash and dash: the check last.
        "on_err() { echo \"failed at line $1\" >&2; }; trap 'on_err $LINENO' ERR; redis-cli -h redis-master ping".to_string(),
        // 0 / 1: the status file read.
        "readonly D=/tmp/health; check_cache() { if redis-cli -h redis-master ping; then echo up > \"$D/cache\"; else echo down > \"$D/cache\"; fi; }; check_cache || true; grep -q up \"$D/cache\"".to_string(),
    ];
    let warned: Vec<&str> = warned.iter().map(String::as_str).collect();
    let denied: Vec<&str> = denied.iter().map(String::as_str).collect();
    expect(&warned, &denied);
    // 0 / 1 in bash, 0 / 0 in dash: under `bash -c`, the trap's `exit 1`, or its log read back.
    for script in [
        "on_err() { echo failed; exit 1; }; trap 'on_err' ERR; redis-cli -h redis-master ping; {L}",
        "readonly LOG_FILE=/tmp/hc.log; rm -f \"$LOG_FILE\"; log() { echo \"$*\" >> \"$LOG_FILE\"; }; trap 'log failed' ERR; redis-cli -h redis-master ping; ! grep -q failed \"$LOG_FILE\"",
    ] {
        assert_eq!(action_of("bash", script), Some(Action::Deny), "{script}");
    }
}

/// Three of the new user's scripts, whole (hosts renamed): 0 / 0 in bash and dash with the local
/// server up. Each was denied on main 0dae461. (The fourth, 51, is still denied: its
/// `check_heartbeat`'s `$(( $(date +%s) - $(stat ...) ))` reads as a command named by an
/// expansion to `flow::reach`, so every function that writes a file counts; an open item.)
#[test]
fn the_new_user_s_scripts_are_warnings() {
    for (script, shell) in [
        (include_str!("fixtures/scripts/s26_01_log_var.sh"), "sh"),
        (include_str!("fixtures/scripts/s26_16_case_state.sh"), "sh"),
        (include_str!("fixtures/scripts/s26_37_exit_trap.sh"), "sh"),
    ] {
        assert_eq!(action_of(shell, script), Some(Action::Warn), "{script}");
    }
}
