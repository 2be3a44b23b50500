//! Session 26, false denials of the liveness-dependency rule (s26-fdb): a new user's team
//! scripts (fresh25's 07, 39 and 44, kept as fixtures `tests/fixtures/scripts/s26b_*.sh`, their
//! hosts renamed orders-db) and the shapes left open by s25-fda and s25-fdb. Every row was run in
//! bash 5.2.15 and dash 0.5.12 with stub clients on PATH (`redis-cli` exits 0 up and 1 down,
//! `pg_isready` 0 up and 2 down), the status files removed before each run, with `test -d /`
//! standing for the local check `curl -f localhost:8080/live`; each row's statuses, up / down,
//! are in its comment ("0 / 0" is not coupled: never a denial; "0 / 1" in both shells is). Every
//! warned row was denied on main 0dae461 but the two that say so.

mod common;
use common::flow::*;

/// An EXIT trap that kills a background child and waits for it (`kill $PID; wait $PID`, PID only
/// ever `$!`) runs as the shell exits: without errexit its status (143) is not the script's.
/// `wait $PID` outside a trap reads the child's status, and a check last stays coupled.
#[test]
fn an_exit_trap_waiting_for_a_killed_child_changes_no_status() {
    let warned = [
        // bash 0 / 0, dash 0 / 0.
        "sleep 5 & PID=$!; trap 'kill $PID; wait $PID' EXIT; redis-cli -h redis-master.cache.svc ping; curl -f localhost:8080/live",
        // bash 0 / 0, dash 0 / 0.
        "sleep 5 & PID=$!; trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null' EXIT; redis-cli -h redis-master.cache.svc ping; curl -f localhost:8080/live",
        // bash 0 / 0, dash 0 / 0.
        "sleep 5 & trap 'kill $!; wait $!' EXIT; pg_isready -h orders-db -q; curl -f localhost:8080/live",
    ];
    let denied = [
        // bash 0 / 1, dash 0 / 1.
        "sleep 5 & PID=$!; trap 'kill $PID; wait $PID' EXIT; redis-cli -h redis-master.cache.svc ping",
        // bash 0 / 1, dash 0 / 1.
        "redis-cli -h redis-master.cache.svc ping & PID=$!; wait $PID",
        // bash 0 / 1, dash 0 / 1.
        "sleep 5 & PID=$!; trap 'kill $PID; wait $PID' EXIT; redis-cli -h redis-master.cache.svc ping || exit 1; curl -f localhost:8080/live",
    ];
    expect_actions(&warned, &denied);
}

/// `trap "rm -f /tmp/x.$$" EXIT` in the probe's own command: the kubelet turns `$$` into `$`, and
/// `"/tmp/x.$"` is the text `$` (no parameter follows it). A cleanup trap changes no status.
#[test]
fn a_literal_dollar_in_a_double_quoted_trap_action_is_text() {
    let warned = [
        // bash 0 / 0, dash 0 / 0.
        "trap \"rm -f /tmp/x.$$\" EXIT; redis-cli -h redis-master.cache.svc ping; curl -f localhost:8080/live",
        // bash 0 / 0, dash 0 / 0.
        "trap \"rm -f /tmp/probe.$$.lock /tmp/out.$$\" EXIT; pg_isready -h orders-db -q; curl -f localhost:8080/live",
    ];
    let denied = [
        // bash 0 / 1, dash 0 / 1.
        "trap \"rm -f /tmp/x.$$\" EXIT; redis-cli -h redis-master.cache.svc ping",
        // bash 0 / 1, dash 0 / 1.
        "trap \"rm -f /tmp/x.$$\" EXIT; redis-cli -h redis-master.cache.svc ping || exit 1; curl -f localhost:8080/live",
    ];
    expect_actions(&warned, &denied);
}

/// Both branches write the same file, and every other command naming it only tests that it exists
/// or is not empty (`test -s` when every write puts a byte in it), removes it, or copies it to a
/// file nothing reads: its contents, the only difference, are never read.
#[test]
fn a_status_file_read_only_for_its_size_or_kind_is_not_read() {
    let warned = [
        // bash 0 / 0, dash 0 / 0.
        "if pg_isready -h orders-db -q; then echo up > /tmp/db.status; else echo down > /tmp/db.status; fi; test -s /tmp/db.status",
        // bash 0 / 0, dash 0 / 0.
        "F=/tmp/db.status; if redis-cli -h redis-master.cache.svc ping; then echo up > $F; else echo down > $F; fi; test -s $F",
        // bash 0 / 0, dash 0 / 0.
        "if redis-cli -h redis-master.cache.svc ping; then echo up > /tmp/db.status; else echo down > /tmp/db.status; fi; [ -f /tmp/db.status ] && curl -f localhost:8080/live",
        // bash 0 / 0, dash 0 / 0.
        "if redis-cli -h redis-master.cache.svc ping; then echo up >> /var/tmp/cache.state; else echo down >> /var/tmp/cache.state; fi; test -e /var/tmp/cache.state; curl -f localhost:8080/live",
        // bash 0 / 0, dash 0 / 0.
        "tmp=$(mktemp); trap 'rm -f \"$tmp\"' EXIT; if pg_isready -h orders-db -q; then echo up > \"$tmp\"; else echo down > \"$tmp\"; fi; cp \"$tmp\" /tmp/last 2>/dev/null || :; kill -0 1",
    ];
    let denied = [
        // bash 0 / 1, dash 0 / 1.
        "if pg_isready -h orders-db -q; then echo up > /tmp/db.status; else echo down > /tmp/db.status; fi; grep -q up /tmp/db.status",
        // bash 0 / 1, dash 0 / 1.
        "if redis-cli -h redis-master.cache.svc ping; then echo up > /tmp/db.status; else echo down > /tmp/db.status; fi; [ \"$(cat /tmp/db.status)\" = up ]",
        // bash 0 / 1, dash 0 / 1.
        "if redis-cli -h redis-master.cache.svc ping; then echo up > /tmp/db.status; fi; test -s /tmp/db.status",
        // bash 0 / 1, dash 0 / 1.
        "tmp=$(mktemp); if pg_isready -h orders-db -q; then echo up > \"$tmp\"; else echo down > \"$tmp\"; fi; cp \"$tmp\" /tmp/last; grep -q up /tmp/last",
        // bash 0 / 1, dash 0 / 1.
        "if redis-cli -h redis-master.cache.svc ping; then printf up > /tmp/db.status; else printf '' > /tmp/db.status; fi; test -s /tmp/db.status",
    ];
    expect_actions(&warned, &denied);
}

/// A here-document whose `$(C && echo up || echo down)` goes into a file (`cat > F <<EOF`) that is
/// only tested for size: the file is never empty, whatever the check prints.
#[test]
fn a_here_document_status_file_read_only_for_its_size_is_not_read() {
    let warned = [
        // bash 0 / 0, dash 0 / 0.
        "cat > /tmp/status.json <<JSON\n{\"db\":\"$(pg_isready -h orders-db -q && echo up || echo down)\"}\nJSON\ntest -s /tmp/status.json",
        // bash 0 / 0, dash 0 / 0.
        "cat > /tmp/status.json <<JSON\n{\"cache\":\"$(redis-cli -h redis-master.cache.svc ping && echo up || echo down)\",\"ts\":$(date +%s)}\nJSON\n[ -s /tmp/status.json ] && curl -f localhost:8080/live",
    ];
    let denied = [
        // bash 0 / 1, dash 0 / 1.
        "cat > /tmp/status.json <<JSON\n{\"db\":\"$(pg_isready -h orders-db -q && echo up || echo down)\"}\nJSON\ngrep -q '\"up\"' /tmp/status.json",
        // bash 0 / 2, dash 0 / 2.
        "cat > /tmp/status.json <<JSON\n$(pg_isready -h orders-db -q)\nJSON\npg_isready -h orders-db -q",
    ];
    expect_actions(&warned, &denied);
}

/// `set -e; x=$(C || echo down); echo "$x"`: the value is only written out; tested, it is read.
#[test]
fn a_substitution_value_only_printed_is_not_read() {
    let warned = [
        // bash 0 / 0, dash 0 / 0.
        "set -e; x=$(redis-cli -h redis-master.cache.svc ping || echo down); echo \"$x\"; curl -f localhost:8080/live",
        // bash 0 / 0, dash 0 / 0.
        "set -e; x=$(pg_isready -h orders-db -q || echo down); echo \"db: $x\" >&2; curl -f localhost:8080/live",
    ];
    let denied = [
        // bash 0 / 1, dash 0 / 1.
        "set -e; x=$(redis-cli -h redis-master.cache.svc ping || echo down); [ \"$x\" != down ]",
        // bash 0 / 1, dash 0 / 1.
        "set -e; x=$(redis-cli -h redis-master.cache.svc ping || echo down); echo \"$x\" | grep -q down && exit 1; curl -f localhost:8080/live",
    ];
    expect_actions(&warned, &denied);
}

/// `until C; do false; break; done`: the body runs once on an outage and `break` gives 0; under
/// `set -e` the `false` ends the script.
#[test]
fn an_until_body_that_only_fails_then_breaks_ends_with_zero() {
    let warned = [
        // bash 0 / 0, dash 0 / 0.
        "until redis-cli -h redis-master.cache.svc ping; do false; break; done; curl -f localhost:8080/live",
        // bash 0 / 0, dash 0 / 0.
        "until pg_isready -h orders-db -q; do [ -f /tmp/nonexistent ]; break; done; curl -f localhost:8080/live",
        // bash 0 / 0, dash 0 / 0.
        "until redis-cli -h redis-master.cache.svc ping; do false; break; done",
    ];
    let denied = [
        // bash 0 / 1, dash 0 / 1.
        "set -e; until redis-cli -h redis-master.cache.svc ping; do false; break; done; curl -f localhost:8080/live",
        // bash 0 / 1, dash 0 / 1.
        "until redis-cli -h redis-master.cache.svc ping; do exit 1; done; curl -f localhost:8080/live",
    ];
    expect_actions(&warned, &denied);
}

/// `up=1; C || up=0; [ $up -eq 1 ] || echo warn; L`: the test only chooses whether to print, and
/// the next statement's status replaces its own. `|| exit 1`, the test last or a `$?` read after
/// it stay coupled.
#[test]
fn a_flag_read_only_by_a_test_that_changes_nothing_is_not_read() {
    let warned = [
        // bash 0 / 0, dash 0 / 0.
        "up=1; redis-cli -h redis-master.cache.svc ping || up=0; [ $up -eq 1 ] || echo warn; curl -f localhost:8080/live",
        // bash 0 / 0, dash 0 / 0.
        "up=1; pg_isready -h orders-db -q || up=0; if [ \"$up\" = 1 ]; then echo ok; else echo degraded >&2; fi; curl -f localhost:8080/live",
        // bash 0 / 0, dash 0 / 0 (warned on 0dae461 too).
        "up=1; redis-cli -h redis-master.cache.svc ping || up=0; [ $up -eq 1 ] || echo warn; exit $?",
    ];
    let denied = [
        // bash 0 / 1, dash 0 / 1.
        "up=1; redis-cli -h redis-master.cache.svc ping || up=0; [ $up -eq 1 ] || exit 1; curl -f localhost:8080/live",
        // bash 0 / 1, dash 0 / 1.
        "up=1; redis-cli -h redis-master.cache.svc ping || up=0; [ $up -eq 1 ]",
        // bash 0 / 1, dash 0 / 1.
        "up=1; redis-cli -h redis-master.cache.svc ping || up=0; [ $up -eq 1 ] && echo ok; exit $?",
    ];
    expect_actions(&warned, &denied);
}

/// `f(){ C || return 0; false; return 0; }` and the form with the check in an `if` branch return
/// 0 either way without errexit; with `set -e`, `false` ends the script while the cache is up.
#[test]
fn a_body_returning_zero_after_quiet_failures_returns_zero() {
    let warned = [
        // bash 0 / 0, dash 0 / 0.
        "f(){ redis-cli -h redis-master.cache.svc ping || return 0; false; return 0; }; f",
        // bash 0 / 0, dash 0 / 0 (warned on 0dae461 too).
        "f(){ redis-cli -h redis-master.cache.svc ping || return 0; false; return 0; }; f; curl -f localhost:8080/live",
        // bash 0 / 0, dash 0 / 0.
        "f(){ if true; then redis-cli -h redis-master.cache.svc ping || return 0; fi; return 0; }; f",
        // bash 0 / 0, dash 0 / 0.
        "f(){ if [ -d / ]; then pg_isready -h orders-db -q || return 0; echo ok; else echo no; fi; return 0; }; f",
    ];
    let denied = [
        // bash 1 / 0, dash 1 / 0.
        "set -e; f(){ redis-cli -h redis-master.cache.svc ping || return 0; false; return 0; }; f",
        // bash 0 / 1, dash 0 / 1.
        "f(){ if true; then redis-cli -h redis-master.cache.svc ping || return 1; fi; return 0; }; f",
        // bash 1 / 0, dash 1 / 0.
        "f(){ redis-cli -h redis-master.cache.svc ping || return 0; false; }; f",
    ];
    expect_actions(&warned, &denied);
}

/// A last `case` on the check's output whose every item exits non-zero (with a `*)` item) fails
/// every time: a warning, never a denial. Rows of this test were run with a `redis-cli` stub
/// printing `PONG` when up.
#[test]
fn a_last_case_whose_every_item_fails_fails_every_time() {
    let warned = [
        // bash 1 / 1, dash 1 / 1.
        "case $(redis-cli -h redis-master.cache.svc ping) in PONG) exit 1;; *) exit 1;; esac",
        // bash 2 / 1, dash 2 / 1.
        "case \"$(redis-cli -h redis-master.cache.svc ping 2>&1)\" in PONG) echo up; exit 2;; *) exit 1;; esac",
    ];
    let denied = [
        // bash 0 / 1, dash 0 / 1.
        "case $(redis-cli -h redis-master.cache.svc ping) in PONG) exit 0;; *) exit 1;; esac",
        // bash 1 / 0, dash 1 / 0.
        "case $(redis-cli -h redis-master.cache.svc ping) in PONG) exit 1;; esac",
    ];
    expect_actions(&warned, &denied);
}

/// The new user's scripts (fresh25's 07, 39 and 44, hosts renamed orders-db), whole: each exits
/// 0 / 0 in bash 5.2.15 and dash 0.5.12 (the status files removed first). The same scripts whose
/// last line reads the status file's contents (`grep -q up`) are 0 / 1.
#[test]
fn the_new_user_s_status_file_scripts_are_warned() {
    let tmp_status_trap = include_str!("fixtures/scripts/s26b_tmp_status_trap.sh");
    let status_file = include_str!("fixtures/scripts/s26b_status_file_test_s.sh");
    let heredoc = include_str!("fixtures/scripts/s26b_heredoc_status_json.sh");
    let warned = [tmp_status_trap, status_file, heredoc];
    // bash 0 / 1, dash 0 / 1 each (the contents read back).
    let tmp_read = tmp_status_trap.replace("kill -0 1", "grep -q up /tmp/last-db-status");
    let status_read = status_file.replace("test -s /tmp/db.status", "grep -q up /tmp/db.status");
    let heredoc_read = heredoc.replace("test -s /tmp/status.json", "grep -q '\"up\"' /tmp/status.json");
    let denied = [tmp_read.as_str(), status_read.as_str(), heredoc_read.as_str()];
    expect_actions(&warned, &denied);
}
