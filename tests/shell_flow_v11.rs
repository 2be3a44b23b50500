//! Session 24, false denials of the liveness-dependency rule (s24-fd): traps whose action keeps
//! the script's status or never runs, an EXIT trap that always fails or is not readable, an ERR
//! trap dash does not have, a function that returns a literal status saved in a variable, a
//! `$(hostname -i || ...)` host and a libpq host that is a URL. Every row was run in bash 5.2.15
//! and dash 0.5.12 with stub clients on PATH (`/tmp/emstub/run.sh`: `redis-cli` exits 0 up and 1
//! down, `pg_isready` 0 up and 2 down); each row's statuses, up / down, are in its comment ("0 /
//! 0" is not coupled: never a denial; "0 / 1" in both shells is).

use probegate::policy::Action;

mod common;
use common::flow::*;

/// The liveness-dependency action about orders-db or redis-master under `shell -c script`.
fn action_in(shell: &str, script: &str) -> Option<Action> {
    finding_of(&[shell, "-c", script])
        .filter(|(_, m)| m.contains("orders-db") || m.contains("redis-master"))
        .map(|(a, _)| a)
}

/// Every liveness-dependency finding's action under `sh -c` and `bash -c`, whatever it names.
fn any_denial(script: &str) -> Vec<String> {
    let mut out = Vec::new();
    for shell in ["sh", "bash"] {
        let e = eval_liveness(&[shell, "-c", script]);
        for f in &e.evaluation.findings {
            if f.rule == probegate::policy::RuleId::LivenessDependency && f.action == Action::Deny {
                out.push(format!("{shell} {script:?}: {}", f.describe()));
            }
        }
    }
    out
}

/// An EXIT trap whose action runs no `exit` with a status of its own (a bare `exit` keeps the
/// status the shell was exiting with), nor anything that ends or replaces the shell, leaves the
/// script's status as it was (POSIX `trap`; bash manual, `exit`), and a trap on INT or TERM never
/// runs in a probe's run. Each warned row exits 0 / 0 in bash and dash (denied on main c1ae9f2):
/// the check is not last. Still denied where the check is the script's last command (0 / 1 each)
/// or the action is `echo bye` before a last check (0 / 1).
#[test]
fn a_trap_that_keeps_the_status_changes_no_verdict() {
    let warned = [
        "trap 'false' EXIT; redis-cli -h redis-master ping; exit 0",
        "trap 'exit' EXIT; redis-cli -h redis-master ping; true",
        "trap 'false; exit' EXIT; redis-cli -h redis-master ping; true",
        "cleanup(){ return 3; }; trap cleanup EXIT; redis-cli -h redis-master ping; true",
        "cleanup(){ rm -f /tmp/x; return 3; }; trap cleanup EXIT; redis-cli -h redis-master ping; echo done",
        "trap 'false' INT TERM; redis-cli -h redis-master ping; true",
        "trap 'exit 1' INT TERM; redis-cli -h redis-master ping; true",
        "trap 'rm -f /tmp/l; exit 1' HUP INT QUIT TERM; pg_isready -h orders-db; echo ok",
        "trap 'false' 0; pg_isready -h orders-db; true",
        // `exit $?` on EXIT beside signals (0 / 0; last, 0 / 1 below).
        "trap 'exit $?' EXIT INT TERM; redis-cli -h redis-master ping; echo ok",
    ];
    let denied = [
        "trap 'false' EXIT; redis-cli -h redis-master ping",
        "trap 'exit' EXIT; redis-cli -h redis-master ping",
        "cleanup(){ return 3; }; trap cleanup EXIT; redis-cli -h redis-master ping",
        "trap 'exit 1' INT TERM; redis-cli -h redis-master ping",
        "trap 'echo bye' EXIT; redis-cli -h redis-master ping",
        "trap 'false' EXIT; pg_isready -h orders-db",
        "trap 'exit $?' EXIT INT TERM; redis-cli -h redis-master ping",
    ];
    expect_actions(&warned, &denied);
}

/// A failing command in an EXIT trap's action ends the shell with its status under errexit
/// (`set -e; trap 'false' EXIT; C; true` exits 1 / 1 in both shells: never coupled, and the
/// walk must not read the action as keeping the status, so the check stays judged as the rest
/// of the script has it); a trap on CHLD runs at every child's end (`trap 'exit 1' CHLD; C;
/// true`: 0 / 1 in bash, 1 / 1 in dash), so it is not taken as never running.
#[test]
fn a_trap_under_errexit_or_on_chld_is_not_taken_as_harmless() {
    // (Judged as before: the trap is not followed, the check is kept coupled.)
    for script in [
        "set -e; trap 'false' EXIT; redis-cli -h redis-master ping; true",
        "trap 'exit 1' CHLD; redis-cli -h redis-master ping; true",
    ] {
        assert_eq!(action_in("bash", script), Some(Action::Deny), "{script}");
    }
}

/// The ConfigMap-style EXIT trap that reports a failure on its way out (`st=$?; [ $st -ne 0 ] &&
/// echo failed >&2`) runs no `exit`: the script's status is the one it had. After `C; exit 0`,
/// `C; true` or `C; echo ok` (and on lines of their own) it exits 0 / 0 in bash and dash (denied
/// on main c1ae9f2); with the check last, 0 / 1: still denied.
#[test]
fn an_exit_trap_that_only_reports_keeps_the_status() {
    let trap = "trap 'st=$?; [ $st -ne 0 ] && echo \"probe failed: $st\" >&2' EXIT";
    let warned = [
        format!("{trap}; redis-cli -h redis-master ping; exit 0"),
        format!("{trap}; redis-cli -h redis-master ping; true"),
        format!("{trap}; redis-cli -h redis-master ping; echo ok"),
        format!("#!/bin/sh\n{trap}\nredis-cli -h redis-master ping\necho ok\n"),
        format!("{trap}\npg_isready -h orders-db -t 2\nexit 0\n"),
    ];
    let denied = [
        format!("{trap}; redis-cli -h redis-master ping"),
        format!("#!/bin/sh\n{trap}\nredis-cli -h redis-master ping\n"),
    ];
    let warned: Vec<&str> = warned.iter().map(String::as_str).collect();
    let denied: Vec<&str> = denied.iter().map(String::as_str).collect();
    expect_actions(&warned, &denied);
}

/// An ERR trap runs in bash where a command fails; dash 0.5.12 has no ERR condition ("bad trap")
/// and runs on. `trap 'exit 1' ERR; C; echo ok` exits 0 / 1 in bash, 0 / 0 in dash: under `sh
/// -c` (either shell) a warning that names the doubt, under `bash -c` denied. With the check
/// last, 0 / 1 in both: denied under both.
#[test]
fn an_err_trap_under_sh_is_a_doubt() {
    let script = "trap 'exit 1' ERR; redis-cli -h redis-master ping; echo ok";
    assert_eq!(action_in("bash", script), Some(Action::Deny));
    assert_eq!(action_in("sh", script), Some(Action::Warn));
    let why = finding_of(&["sh", "-c", script]).map(|(_, m)| m).unwrap_or_default();
    assert!(why.contains("`sh`") && why.contains("ERR"), "{why}");
    let last = "trap 'exit 1' ERR; redis-cli -h redis-master ping";
    assert_eq!(action_in("bash", last), Some(Action::Deny));
    assert_eq!(action_in("sh", last), Some(Action::Deny));
    let pg = "trap 'exit 1' ERR; pg_isready -h orders-db; echo ok";
    assert_eq!(action_in("sh", pg), Some(Action::Warn));
    assert_eq!(action_in("bash", pg), Some(Action::Deny));
}

/// An EXIT trap whose action is a variable's value (`trap "$A" EXIT`): what it runs at the
/// script's end is not read, a warning, never a denial (`A='echo bye'; ...; C; echo done` 0 / 0;
/// with the check last 0 / 1, still a warning: the action could be `exit 0`). An EXIT trap that
/// ends with `exit 1` makes the probe fail every time (1 / 1 with the check last or not, and
/// after it): a warning that says so, never this denial.
#[test]
fn an_exit_trap_not_read_or_always_failing_is_no_denial() {
    let warned = [
        "A='echo bye'; trap \"$A\" EXIT; redis-cli -h redis-master ping; echo done",
        "A='echo bye'; trap \"$A\" EXIT; redis-cli -h redis-master ping",
        "trap 'echo bye; exit 1' EXIT; redis-cli -h redis-master ping; echo done",
        "trap 'echo bye; exit 1' EXIT; redis-cli -h redis-master ping",
        // 2 / 2.
        "trap 'exit 2' EXIT; pg_isready -h orders-db || exit 0",
        // 1 / 1: set after the check, before the script can end.
        "redis-cli -h redis-master ping; trap 'exit 1' EXIT",
        // 1 / 1: a handler function that ends with `exit 1`, with the check last or not.
        "cleanup(){ rm -f /tmp/x; exit 1; }; trap cleanup EXIT; redis-cli -h redis-master ping; echo ok",
        "cleanup(){ rm -f /tmp/x; exit 1; }; trap cleanup EXIT; redis-cli -h redis-master ping",
    ];
    expect_actions(&warned, &[]);
    let why = finding_of(&["sh", "-c", warned[2]]).map(|(_, m)| m).unwrap_or_default();
    assert!(why.contains("`exit 1`") && why.contains("fails every time"), "{why}");
    let why = finding_of(&["sh", "-c", warned[0]]).map(|(_, m)| m).unwrap_or_default();
    assert!(why.contains("EXIT trap"), "{why}");
}

/// `f(){ rc=0; C || return $rc; ...; }`: `rc` is set to a literal once, as a statement of the
/// body before the `return`, and named nowhere else, so `return $rc` is `return 0` (0 / 0 each,
/// denied on main c1ae9f2). Still denied where `rc` is 1 (0 / 1), assigned again by the check's
/// `||` (0 / 1), or the check is last (0 / 1).
#[test]
fn a_function_returning_a_literal_saved_status_is_read_as_it() {
    let warned = [
        "f(){ rc=0; redis-cli -h redis-master ping || return $rc; echo ok; }; f",
        "f(){ local rc=0; redis-cli -h redis-master ping || return $rc; echo ok; }; f",
        "f(){ rc=0; redis-cli -h redis-master ping || return \"${rc}\"; echo ok; }; f",
        "f(){ rc=0; redis-cli -h redis-master ping || exit $rc; echo ok; }; f",
        "f(){ rc=0; pg_isready -h orders-db; return $rc; }; f",
    ];
    let denied = [
        "f(){ rc=1; redis-cli -h redis-master ping || return $rc; echo ok; }; f",
        "f(){ rc=0; redis-cli -h redis-master ping || rc=1; return $rc; }; f",
        "f(){ rc=0; echo start; redis-cli -h redis-master ping; }; f",
        "f(){ rc=2; pg_isready -h orders-db || exit $rc; echo ok; }; f",
        // `return 1` on the `||` side (0 / 1).
        "f(){ redis-cli -h redis-master ping || return 1; return 0; }; f",
    ];
    expect_actions(&warned, &denied);
}

/// `$(hostname -i || FALLBACK)`: `hostname -i` succeeds in a Pod (the kubelet writes its name and
/// IP into `/etc/hosts`), so FALLBACK (`getent hosts redis-master`) runs only where the image has
/// no `hostname`, and the host is this Pod's own address: no denial (a warning at most). Still
/// denied: the DNS lookup alone (`getent hosts redis-master` 0 / 2 with a resolver that answers
/// / does not) and a FALLBACK first (`$(getent hosts redis-master || hostname -i)`, the
/// dependency asked first).
#[test]
fn a_fallback_after_hostname_is_no_denial() {
    for script in [
        "host=\"$(hostname -i || getent hosts redis-master)\"; redis-cli -h \"$host\" ping",
        "host=\"$(hostname -i || getent hosts redis-master)\"; redis-cli -h \"$host\" ping; echo ok",
        "host=$(hostname || getent hosts redis-master); redis-cli -h $host ping",
        // (0 / 1 with stubs, where `hostname -i` prints the stub host's address.)
        "H=$(hostname -i 2>/dev/null || getent hosts redis-master | awk '{print $1}'); redis-cli -h $H ping",
    ] {
        let denials = any_denial(script);
        assert!(denials.is_empty(), "{denials:#?}");
    }
    assert_eq!(action_in("sh", "getent hosts redis-master"), Some(Action::Deny));
    assert!(
        !any_denial("ip=$(getent hosts redis-master || hostname -i); redis-cli -h \"$ip\" ping").is_empty()
    );
}

/// libpq's `host` (`-h`) is a list of host names or socket directories, never a URL:
/// `pg_isready -h "https://pypi.org/simple/," -p 5432` asks a name no resolver knows (psql 16:
/// `could not translate host name "https://pypi.org/simple/" to address`), then the default
/// socket (the empty item): no dependency. Still denied: `-h orders-db` and a list
/// whose every item is another host.
#[test]
fn a_libpq_host_that_is_a_url_is_no_dependency() {
    for script in [
        "pg_isready -h \"https://pypi.org/simple/,\" -p 5432",
        "pg_isready -h \"https://pypi.org/simple/\" -p 5432",
        "psql -h http://orders-db/ -c 'select 1'",
    ] {
        let denials = any_denial(script);
        assert!(denials.is_empty(), "{denials:#?}");
    }
    expect_actions(&[], &["pg_isready -h orders-db -p 5432", "pg_isready -h \"orders-db\" -p 5432"]);
}
