//! Session 25 (s25-fda): false denials of `liveness-dependency` a new user and a hunt on public
//! scripts found (s24's todo), each a script that exits the same with the dependency up and down.
//! Every row was run in bash 5.2.15 and dash 0.5.12 with stub clients on PATH (`redis-cli`,
//! `psql`: exit 0 up, 1 down; `redis-cli` printing `role:master` up where the row reads its
//! output; `logger` exits 0), with `test -d /` as the container's own check: its statuses up /
//! down are in each row's comment (bash, then dash where they differ). The rows are also written
//! with `curl -f localhost:8080/live` as that check (the form users write; in the stubs' run
//! nothing listens there, so curl fails 7 / 7 there: still not coupled).
//! Next to each fix, the coupled contrasts (0 / 1) that stay denied.

use probegate::policy::Action;

mod common;
use common::flow::*;

const C: &str = "redis-cli -h redis.cache.svc ping";

/// Each script with `L` replaced by the local check `test -d /`, and again by `curl -f
/// localhost:8080/live`; `C` by the remote check.
fn both_forms(scripts: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for s in scripts {
        for local in ["test -d /", "curl -f localhost:8080/live"] {
            out.push(s.replace('C', C).replace('L', local));
        }
    }
    out
}

/// The scripts (each run by `sh -c` and `bash -c`) that are denied, with their findings.
fn denied(scripts: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for shell in ["sh", "bash"] {
        for script in scripts {
            let got = finding_of(&[shell, "-c", script]);
            if got.as_ref().is_some_and(|g| g.0 == Action::Deny) {
                out.push(format!("{shell} {script:?}: {got:?}"));
            }
        }
    }
    out
}

/// The scripts (each run by `sh -c` and `bash -c`) that are not denied.
fn not_denied(scripts: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for shell in ["sh", "bash"] {
        for script in scripts {
            let got = finding_of(&[shell, "-c", script]);
            if got.as_ref().is_none_or(|g| g.0 != Action::Deny) {
                out.push(format!("{shell} {script:?}: {got:?}"));
            }
        }
    }
    out
}

/// Asserts that every `uncoupled` script is a warning that names the dependency (never a deny,
/// never silence: a hang can still time the probe out), and every `coupled` one is denied.
fn judged(uncoupled: &[&str], coupled: &[&str]) {
    let uncoupled = both_forms(uncoupled);
    assert_eq!(denied(&uncoupled), Vec::<String>::new());
    for script in &uncoupled {
        let (action, message) = finding_of(&["sh", "-c", script]).expect(script);
        assert_eq!(action, Action::Warn, "{script}: {message}");
        assert!(message.contains("redis.cache.svc") || message.contains("db"), "{script}: {message}");
    }
    let coupled: Vec<String> = coupled.iter().map(|s| s.replace('C', C).replace('L', "test -d /")).collect();
    assert_eq!(not_denied(&coupled), Vec::<String>::new());
}

/// `exec` with redirections only runs no program: the shell goes on, and the status is 0 (bash
/// manual, `exec`). Denied before s25 when the redirection went to `/dev/null`, closed a
/// descriptor or wrote a log file (only `exec 2>&1` and `/proc/1/fd/N` were read so).
#[test]
fn an_exec_of_redirections_only_runs_no_program() {
    judged(
        &[
            // 0 / 0 in bash and dash.
            "exec 2>/dev/null; C; true",
            "exec 2>/dev/null; C; L",
            "exec 2>/dev/null; C || echo down; L",
            "exec >/dev/null 2>&1; C; L",
            "exec 3>&-; C; L",
            "exec >>/tmp/probe.log 2>&1; C; L",
        ],
        &[
            // 0 / 1: the check is last, or the script's last `exec` runs it.
            "exec 2>/dev/null; C",
            "exec 3>&1; C",
            "exec 2>/dev/null; exec C",
            "exec C",
        ],
    );
    // The file the `exec` sends the output to is read again: with `redis-cli` printing PONG up,
    // 0 / 1 (1 / 1 with a stub printing nothing): kept.
    let read_again = format!("exec >/tmp/o1; {C}; grep -q PONG /tmp/o1");
    assert_eq!(not_denied(&[read_again]), Vec::<String>::new());
}

/// `while ! C; do break; done` and `until C; do break; done`: the check's failure runs the body
/// once, which ends the loop with `break` (status 0); its success ends it before the body (0).
#[test]
fn a_retry_loop_that_breaks_at_once_is_not_coupled() {
    judged(
        &[
            // 0 / 0 in bash and dash.
            "while ! C; do break; done; exit 0",
            "until C; do break; done; exit 0",
            "until C; do echo down; break; done; L",
            "while ! C; do sleep 1; break; done",
            "until C; do break; done",
        ],
        &[
            // 0 / 1.
            "while ! C; do exit 1; done; exit 0",
            "until C; do exit 1; done; exit 0",
            "until C; do break; done; C",
        ],
    );
    // A retry that does not break waits on the dependency until the probe times out (0 / 124
    // under `timeout 5`): denied as before.
    let waits =
        [format!("until {C}; do sleep 1; done; exit 0"), format!("while ! {C}; do echo down; done; exit 0")];
    assert_eq!(not_denied(&waits), Vec::<String>::new());
}

/// A variable the check's failure assigns, then only written out or never read: `RES=$(C) ||
/// RES=down`, `ok=0; C || ok=1; echo $ok > /tmp/dbstate` (state for another process).
#[test]
fn state_the_script_only_writes_out_is_not_coupled() {
    judged(
        &[
            // 0 / 0 in bash and dash.
            "RES=$(C) || RES=down; L",
            "RES=$(C) || RES=down; echo \"$RES\"; L",
            "ok=0; C || ok=1; echo $ok > /tmp/dbstate; L",
            "ok=0; C || ok=1; echo \"db=$ok\"; L",
        ],
        &[
            // 0 / 1.
            "RES=$(C) || RES=down; [ \"$RES\" != down ]",
            "ok=0; C || ok=1; echo $ok > /tmp/s; [ $ok = 0 ]",
            "ok=0; C || ok=1; echo $ok > /tmp/s2; grep -q 0 /tmp/s2",
            "ok=0; C || ok=1; exit $ok",
        ],
    );
}

/// `touch` and `rm` of a file the script never reads again mark state for another process
/// (a readiness probe), and change nothing the script does after them.
#[test]
fn a_marker_file_the_script_never_reads_is_not_coupled() {
    judged(
        &[
            // 0 / 0 in bash and dash.
            "C && touch /tmp/ok || rm -f /tmp/ok; L",
            "C || rm -f /tmp/ready; L",
            "C && touch /tmp/ok3; L",
            "C || touch /tmp/down; L",
        ],
        &[
            // 0 / 1: the file is tested after.
            "C && touch /tmp/ok2 || rm -f /tmp/ok2; [ -f /tmp/ok2 ]",
            "C && touch /tmp/ok4 || rm -f /tmp/ok4; test -f /tmp/ok4",
            "C && touch /tmp/ok6; cat /tmp/ok6",
            // Under `set -e` the write's failure ends the script: `rm` of a file not there
            // fails with the dependency down.
            "set -e; C || rm /tmp/cache/x; L",
        ],
    );
}

/// Output piped to a filter that exits 0 whatever it reads (`logger`, `tee -a` to a file never
/// read again) goes nowhere the script reads.
#[test]
fn output_piped_to_a_logger_is_not_read() {
    judged(
        &[
            // 0 / 0 in bash and dash.
            "{ C || echo x; } 2>&1 | logger; L",
            "{ C || echo x; } 2>&1 | logger -t probe; L",
            "C 2>&1 | logger -t probe; L",
            "{ C; echo x; } | logger; L",
            "{ C || echo x; } | tee -a /tmp/log1; L",
        ],
        &[
            // 0 / 1 with `redis-cli` printing PONG up.
            "{ C || echo x; } | tee /tmp/log2; grep -q PONG /tmp/log2",
            "{ C || echo x; } | grep -q PONG",
        ],
    );
}

/// A here-document fed to a client is data: its `select` is no `select` loop of the shell.
#[test]
fn a_here_document_client_before_the_local_check_is_not_coupled() {
    let uncoupled: Vec<String> = ["test -d /", "curl -f localhost:8080/live"]
        .iter()
        // 0 / 0 in bash and dash (with `test -d /`).
        .flat_map(|l| {
            [
                format!("psql -h db -U u <<SQL\nselect 1;\nSQL\n{l}"),
                format!("psql -h db -U u <<'SQL'\nselect 1;\nSQL\n{l}"),
                format!("mysql -h db -u u <<EOF\nselect 1;\nEOF\n{l}"),
            ]
        })
        .collect();
    assert_eq!(denied(&uncoupled), Vec::<String>::new());
    // 0 / 1.
    let coupled = [
        "psql -h db -U u <<SQL\nselect 1;\nSQL".to_string(),
        "psql -h db -U u <<SQL || exit 1\nselect 1;\nSQL\ntest -d /".to_string(),
        "psql -h db -U u <<SQL\nselect 1;\nSQL\n[ $? -eq 0 ]".to_string(),
    ];
    assert_eq!(not_denied(&coupled), Vec::<String>::new());
}

/// `x=$(C || echo down)` under `set -e`: the substitution's status is 0 either way and `x` is
/// never read.
#[test]
fn an_unread_value_of_a_failing_check_with_a_fallback_is_not_coupled() {
    judged(
        &[
            // 0 / 0 in bash and dash.
            "set -e; x=$(C || echo down); L",
            "x=$(C || echo down); L",
        ],
        &[
            // 0 / 1.
            "set -e; x=$(C); L",
            "set -e; x=$(C || echo down); [ \"$x\" != down ]",
        ],
    );
}

/// `if ! out=$(C); then exit 0; fi; ...`: every outage exits 0 before the output is read, with
/// no `$?` in the script (s24 left it denied: replayed only where a `$?` was read).
#[test]
fn a_fail_open_condition_without_a_status_read_is_not_coupled() {
    judged(
        &[
            // 0 / 0 in bash and dash with `redis-cli` printing `role:master` up.
            "if ! out=$(C); then exit 0; fi; echo \"$out\" | grep -q role:",
            "if ! out=$(C); then exit 0; fi; L",
            "if out=$(C); then echo \"$out\" | grep -q role:; else exit 0; fi",
        ],
        &[
            // 0 / 1.
            "if ! out=$(C); then exit 1; fi; L",
            "if ! out=$(C); then echo down; fi; echo \"$out\" | grep -q role:",
            "if C; then exit 0; fi; exit 1",
            "if C > /tmp/o7; then :; fi; grep -q PONG /tmp/o7",
        ],
    );
}
