//! Issue 10 ("never deny on a guess"), verdict break-it pass v2 on a00d258: liveness exec probes
//! denied where bash 5.2 and dash 0.5.12 exit 0 with the dependency down. Every row was run in
//! both shells with stub clients (`pg_isready` exits 2 for a remote host, 0 for localhost;
//! `redis-cli` exits 1): the warned rows give 0 / 0 (database down / up), the denied rows fail
//! with the database down (1 / 0 or 2 / 0), or always (`| jq .`: 4 / 4, `exit $(...)`: 2 / 2).

use probegate::policy::Action;

mod common;
use common::flow::*;

/// Filters that exit 0 whatever they read, at the end of the check's pipeline: `sed` whose `q`
/// has no exit code (GNU sed, "Commands": `q [exit-code]`), `xargs` with no command (it runs
/// `echo`: findutils, "Invoking xargs"), `paste`, `column`, `md5sum`/`sha256sum` (not `-c`),
/// `fold`, `base64` (not `-d`), awk whose every `exit` is `exit 0`. Kept denied: `grep -q`,
/// `jq` (fails on non-JSON), `sort -c`, `sed q1`/`Q 3`, `awk exit !f`/`exit 3`, `base64 -d`
/// (fails on "no response"), `md5sum -c`, `xargs test -z` (123 / 123).
#[test]
fn filters_that_exit_0_whatever_they_read_end_the_check_s_pipeline() {
    expect_actions(
        &[
            "pg_isready -h orders-db | sed 1q",
            "pg_isready -h orders-db | sed -n '1p;1q'",
            "redis-cli -h redis-master ping | xargs",
            "pg_isready -h orders-db | xargs -r",
            "pg_isready -h orders-db | paste -sd,",
            "pg_isready -h orders-db | column -t",
            "pg_isready -h orders-db | md5sum",
            "pg_isready -h orders-db | sha256sum",
            "pg_isready -h orders-db | fold -w 40",
            "pg_isready -h orders-db | base64",
            "pg_isready -h orders-db | awk 'END{exit 0}'",
            "pg_isready -h orders-db | awk 'NR==1{print; exit 0}'",
        ],
        &[
            "pg_isready -h orders-db | grep -q accepting",
            "pg_isready -h orders-db | jq .",
            "mysqladmin -h orders-db ping 2>&1 | sort -c",
            "pg_isready -h orders-db | sed '/no response/q1'",
            "pg_isready -h orders-db | sed '/no/Q 3'",
            "pg_isready -h orders-db | sed 'q 5'",
            "pg_isready -h orders-db | awk '/accepting/{f=1} END{exit !f}'",
            "pg_isready -h orders-db | awk '/no/{exit 3}'",
            "pg_isready -h orders-db | awk '/no/{exit 1}'",
            "pg_isready -h orders-db | base64 -d",
            "pg_isready -h orders-db | md5sum -c",
            "pg_isready -h orders-db | xargs test -z",
            "pg_isready -h orders-db | xargs -n 1 test -z",
        ],
    );
}

/// `exec` in a subshell replaces the subshell, not the script (bash manual, "Command Execution
/// Environment"): `(exec pg_isready -h orders-db); exit 0` and `... || true` exit 0 / 0, while
/// the subshell as the last statement gives the check's status (2 / 0).
#[test]
fn exec_in_a_subshell_replaces_only_the_subshell() {
    expect_actions(
        &["(exec pg_isready -h orders-db); exit 0", "(exec pg_isready -h orders-db) || true"],
        &[
            "(exec pg_isready -h orders-db)",
            "(exec pg_isready -h orders-db) && echo up",
            "exec pg_isready -h orders-db; exit 0",
            "(exec pg_isready -h orders-db; echo x)",
        ],
    );
}

/// A command substitution used as an argument: its status is lost, its output is the command's
/// argument. `echo "$(check; echo $?)"` writes the status (0 / 0, as `echo "db: $(check)"`);
/// `curl -sf "http://localhost:8080/healthz?db=$(check)"` has curl's status, of this Pod (0 / 0);
/// a log line then a local check, 0 / 0. Denied where something reads the output as a status:
/// `exit $(check; echo $?)` (2 / 2), a test of it (1 / 1, 1 / 0), a remote curl carrying it.
#[test]
fn a_substitution_used_as_an_argument_loses_its_status() {
    expect_actions(
        &[
            "echo \"$(pg_isready -h orders-db -q; echo $?)\"",
            "echo \"db: $(pg_isready -h orders-db)\"",
            "curl -sf \"http://localhost:8080/healthz?db=$(pg_isready -h orders-db -q)\"",
            "echo \"db=$(pg_isready -q -h orders-db; echo $?)\" >> /tmp/health.log; curl -sf http://localhost:8080/livez",
        ],
        &[
            "exit $(pg_isready -h orders-db -q; echo $?)",
            "[ \"$(pg_isready -h orders-db -q; echo $?)\" = 0 ]",
            "test \"$(pg_isready -h orders-db)\" != \"no response\"",
            "echo \"$(pg_isready -h orders-db -q; echo $?)\" | grep -q 0",
            "echo \"db=$(pg_isready -h orders-db)\" > /tmp/h; grep -q accepting /tmp/h",
        ],
    );
}

/// A `case` on a check's output or status: the `case`'s status is the branch's (0 when no pattern
/// matches: POSIX, 2.9.4 "Case Conditional Construct"). `echo` branches, `exit 0` branches, a
/// later local check, `case $? in 3) exit 1;; esac` (an outage gives 2: 0 / 0) are warned; a
/// branch that fails (`*) exit 1;;`, `*) false;;`) is denied (1 / 0).
#[test]
fn a_case_on_a_check_s_output_has_its_branch_s_status() {
    expect_actions(
        &[
            "case \"$(redis-cli -h redis-master ping)\" in PONG) echo ok;; *) echo bad;; esac",
            "case \"$(redis-cli -h redis-master ping)\" in PONG) exit 0;; *) exit 0;; esac",
            "r=$(redis-cli -h redis-master ping); case \"$r\" in PONG) echo ok;; *) echo bad;; esac",
            "case \"$(redis-cli -h redis-master ping)\" in PONG) ;; esac; curl -sf localhost:8080/livez",
            "pg_isready -h orders-db; case $? in 3) exit 1;; esac",
            "r=$(redis-cli -h redis-master ping 2>&1); case \"$r\" in PONG) ;; *) echo \"down: $r\" >&2;; esac; redis-cli -h 127.0.0.1 ping | grep -q PONG",
        ],
        &[
            "case \"$(redis-cli -h redis-master ping)\" in PONG) echo ok;; *) exit 1;; esac",
            "case \"$(redis-cli -h redis-master ping)\" in PONG) echo ok;; *) false;; esac",
            "r=$(redis-cli -h redis-master ping); case \"$r\" in PONG) echo ok;; *) exit 1;; esac",
            "r=$(redis-cli -h redis-master ping); case \"$r\" in PONG) echo ok;; esac; [ \"$r\" = PONG ]",
            "pg_isready -h orders-db; case $? in 0) ;; *) exit 1;; esac",
            "pg_isready -h orders-db; case $? in 2) exit 1;; esac",
            "case \"$(redis-cli -h redis-master ping)\" in PONG) echo ok;; *) echo bad;; esac > /tmp/s; grep -q ok /tmp/s",
        ],
    );
}

/// A `for` loop's status is its last body command's on its last iteration (POSIX, 2.9.4 "The for
/// Loop"): over `orders-db localhost` it is localhost's (0 / 0), over `localhost orders-db`
/// orders-db's (2 / 0), as with errexit on (2 / 0); `|| continue` makes each iteration 0 (continue's status), pg-0 remote or
/// not (0 / 0). A check piped into `while read -r l; do echo "$l"; done` has the loop's status,
/// echo's (0 / 0); one whose body tests the line is denied (1 / 0).
#[test]
fn a_loop_s_status_is_its_last_iteration_s() {
    expect_actions(
        &[
            "for h in orders-db localhost; do pg_isready -h $h; done",
            "for h in orders-db pg-0; do pg_isready -h $h -q || continue; done",
            "pg_isready -h orders-db | while read -r l; do echo \"$l\"; done",
            "pg_isready -h orders-db | while IFS= read -r l; do echo \"$l\"; done",
        ],
        &[
            "for h in localhost orders-db; do pg_isready -h $h; done",
            "set -e; for h in orders-db localhost; do pg_isready -h $h; done",
            "for h in orders-db localhost; do pg_isready -h orders-db; done",
            "pg_isready -h orders-db | while read -r l; do echo \"$l\"; done | grep -q accepting",
            "while ! pg_isready -h orders-db; do sleep 1; done",
            "pg_isready -h orders-db | while read -r l; do [ \"$l\" != \"no response\" ]; done",
        ],
    );
}

/// Session 15, issue 15: the survivors of CI's advisory mutation sample on 7ccbcae, each told apart
/// by a script (bash 5.2 and dash 0.5.12, database down / up):
/// - `status.rs`, the command-substitution arm's guard (`!errexit || exempt || last_statement`) made
///   `true`: errexit ends the substitution at the check, so the file written after it is missing
///   and `grep` fails (2 / 0 in both): denied, not "only written" by `echo`;
/// - `constructs.rs` `named_by_count`, the `!` of its split deleted: the script's words counted are
///   its separators, so a file named `@` is "named" by `probe@localhost` (0 / 0 in both, `curl`
///   stubbed to exit 0: a warning);
/// - `harmless.rs` `harmless_traps`, `i + 4 + j` made `i * 4 + j`: the scan skips past the second
///   `trap`, an ERR trap that exits (bash 1 / 0, dash 0 / 0, ERR is bash's: denied under `bash
///   -c`; s24: under `sh -c`, which may be dash, a warning that says so).
#[test]
fn survivors_of_the_sample_on_7ccbcae_are_told_apart() {
    expect_actions(
        &["pg_isready -h orders-db > /tmp/@; curl -sf http://probe@localhost:8080/healthz"],
        &["echo \"$(set -e; pg_isready -h orders-db; echo up > /tmp/s)\"; grep -q up /tmp/s"],
    );
    let script = ": ; trap '' TERM; trap 'exit 1' ERR; pg_isready -h orders-db; echo done";
    for (shell, want) in [("bash", Action::Deny), ("sh", Action::Warn)] {
        let got = finding_of(&[shell, "-c", script]);
        assert_eq!(got.as_ref().map(|g| g.0), Some(want), "{shell} {script:?}: {got:?}");
    }
}

/// Session 15 (found reading the first survivor above): with errexit on, a check that is not the
/// last statement of a command substitution ends it (dash; bash in POSIX mode), skipping the rest;
/// when the rest only writes output (`echo x`), only the substitution's output and status differ,
/// and `echo`'s or `export`'s status is its own: bash 5.2 and dash 0.5.12 exit 0 / 0, warned (they
/// were denied). Denied: the value kept by an assignment under `set -e` (dash 2 / 0; bash, which
/// clears errexit in the substitution, 0 / 0: warned for `bash -c`, s16), and the output read from
/// a file (dash 1 / 0).
#[test]
fn errexit_ending_a_substitution_early_changes_only_its_output() {
    expect_actions(
        &[
            "set -e; echo \"$(pg_isready -h orders-db; echo x)\"; curl -sf http://localhost:8080/healthz",
            "set -e; export X=\"$(pg_isready -h orders-db; echo x)\"; curl -sf http://localhost:8080/healthz",
        ],
        &["set -e; echo \"$(pg_isready -h orders-db; echo x)\" > /tmp/s; grep -q x /tmp/s"],
    );
    let kept = ["set -e; out=$(pg_isready -h orders-db; echo x); echo \"$out\""];
    assert_eq!(finding_of(&["sh", "-c", kept[0]]).map(|f| f.0), Some(Action::Deny));
    assert_eq!(finding_of(&["bash", "-c", kept[0]]).map(|f| f.0), Some(Action::Warn));
}

/// A check in a process substitution (`done < <(check)`, `cat <(check)`): no shell keeps its
/// status (bash manual, "Process Substitution"; not `$?`, errexit or pipefail), its output is the
/// reader's input as in `check | reader`. bash 5.2: a `while read` loop that only echoes, `cat`,
/// `head -1` exit 0 / 0 (database down / up), errexit on or not; `grep -q` reading it (1 / 0), a
/// loop that exits or tests the line, or assigns what a later test reads (1 / 0), are denied.
/// dash rejects `<(` (a syntax error, 2 / 2): the warning says so.
#[test]
fn a_check_in_a_process_substitution_has_its_reader_s_status() {
    expect_actions(
        &[
            "while read -r line; do echo \"$line\"; done < <(pg_isready -h orders-db)",
            "while IFS= read -r l; do echo \"$l\" >&2; done < <(pg_isready -h orders-db -t 2)",
            "set -e; while read -r line; do echo \"$line\"; done < <(pg_isready -h orders-db)",
            "for x in 1; do while read -r line; do echo \"$line\"; done < <(pg_isready -h orders-db); done",
            "while read -r l; do echo \"$l\"; done < <(pg_isready -h orders-db) > /dev/null",
            "cat < <(pg_isready -h orders-db)",
            "cat <(pg_isready -h orders-db)",
            "head -1 <(pg_isready -h orders-db) <(redis-cli -h redis-master ping)",
            "grep -q accepting < <(pg_isready -h orders-db); echo done",
            "while read -r l; do :; done < <(pg_isready -h orders-db)",
        ],
        &[
            "while read -r l; do echo \"$l\"; done < <(pg_isready -h orders-db); pg_isready -h orders-db",
            "while read -r line; do echo \"$line\" | grep -q accepting && exit 0; done < <(pg_isready -h orders-db)",
            "while read -r line; do echo \"$line\" | grep -q accepting && exit 0; done < <(pg_isready -h orders-db); exit 1",
            "grep -q accepting < <(pg_isready -h orders-db)",
            "grep -q accepting <(pg_isready -h orders-db)",
            "while read -r l; do echo \"$l\"; done < <(pg_isready -h orders-db) | grep -q accepting",
            "while read -r l; do echo \"$l\"; done < <(pg_isready -h orders-db) > /tmp/o; grep -q accepting /tmp/o",
            "while read -r l; do last=$l; done < <(pg_isready -h orders-db); case \"$last\" in *accepting*) exit 0;; esac; exit 1",
            "mapfile -t a < <(pg_isready -h orders-db); [ \"${a[0]}\" != \"no response\" ]",
        ],
    );
    let (_, message) = finding_of(&["sh", "-c", "cat < <(pg_isready -h orders-db)"]).unwrap();
    assert!(message.contains("dash") && message.contains("process substitution"), "{message}");
}

/// `$?` tested for a value an outage does not give: pg_isready exits 1 (rejecting) or 2 (no
/// response), redis-cli 1 (the client rows' `outage_status`), so `[ $? -ne 3 ]`, `test $? -lt
/// 3`, `[ "$?" != "3" ] || exit 1`, `if [ $? -eq 3 ]; then exit 1; fi` test as with the server
/// up (0 / 0 in bash 5.2 and dash 0.5.12), and so does a status test of a command whose outage
/// statuses are not known that some failure passes (`nc -z ...; [ $? -ne 3 ]`: in doubt, a
/// warning). Denied: a test an outage fails (`-eq 0`, `-ne 2`, `-lt 2`, redis `-ne 1`: 1 / 0),
/// `-gt 0` or `-eq 0` for any command, errexit on (2 / 0), a later check.
#[test]
fn a_status_test_an_outage_passes_is_a_warning() {
    expect_actions(
        &[
            "pg_isready -h orders-db; [ $? -ne 3 ]",
            "pg_isready -h orders-db; [ \"$?\" != 3 ]",
            "pg_isready -h orders-db; test $? -lt 3",
            "pg_isready -h orders-db; [ $? -ne 3 ] || exit 1",
            "pg_isready -h orders-db; if [ $? -eq 3 ]; then exit 1; fi",
            "pg_isready -h orders-db; [ $? -ne 03 ] && [ $? = 0 ]",
            "redis-cli -h redis-master ping; [ $? -ne 2 ]",
            "redis-cli -h redis-master ping; case $? in 2) exit 1;; esac",
            "nc -z orders-db 5432; [ $? -ne 3 ]",
            "pg_isready -h orders-db; [ $? -gt 2 ] && exit 1; exit 0",
        ],
        &[
            "pg_isready -h orders-db; [ $? -eq 0 ]",
            "pg_isready -h orders-db; [ $? -ne 2 ]",
            "pg_isready -h orders-db; [ $? -lt 2 ]",
            "pg_isready -h orders-db; if [ $? -ne 0 ]; then exit 1; fi",
            "redis-cli -h redis-master ping; [ $? -ne 1 ]",
            "redis-cli -h redis-master ping; case $? in 1) exit 1;; esac",
            "nc -z orders-db 5432; [ $? -eq 0 ]",
            "nc -z orders-db 5432; [ $? -gt 0 ] && exit 1; exit 0",
            "set -e; pg_isready -h orders-db; [ $? -ne 3 ]",
            "pg_isready -h orders-db; [ $? -ne 3 ]; pg_isready -h orders-db",
        ],
    );
}

/// A status test of the check when the script defines a function and the replay does not run
/// (a `trap` or a here-document stops it): the test itself is judged (`status::lost::status_test`),
/// and a function of another name changes nothing there (s20, `lost.rs:444:59`: `f == name`
/// made `!=` read any function as one named like the check, and denied). bash 5.2 and dash
/// 0.5.12 with the stub `pg_isready` (2 down, 0 up): the warned rows 0 / 0, the denied 1 / 0.
#[test]
fn a_status_test_after_a_function_of_another_name_is_still_judged() {
    expect_actions(
        &[
            "f() { :; }; trap \"rm -f /tmp/x\" EXIT; pg_isready -h orders-db; [ $? -ne 3 ]",
            "f() { :; }; trap \"rm -f /tmp/x\" EXIT; pg_isready -h orders-db; test $? -lt 3",
            "f() { :; }\ncat <<EOF >/dev/null\nx\nEOF\npg_isready -h orders-db; [ $? -ne 3 ]",
        ],
        &[
            "f() { :; }; trap \"rm -f /tmp/x\" EXIT; pg_isready -h orders-db; [ $? -eq 0 ]",
            "f() { :; }; trap \"rm -f /tmp/x\" EXIT; pg_isready -h orders-db; [ $? -ne 2 ]",
        ],
    );
}

/// A status assigned with a here-document on the assignment (tree-sitter-bash 0.25 reads `x=$?
/// <<EOF` as a redirected assignment, not a command) and then tested or exited with: the check's
/// status goes on (bash 5.2 and dash 0.5.12 with the stub `pg_isready`: 1 / 0, `exit`: 2 / 0),
/// also for a variable named `echo` or `printf` (s20, `harmless.rs:493:24`: the redirected
/// body's command guard made `true` read `echo=$?` as `echo` writing the status out, and warned).
#[test]
fn a_status_assigned_under_a_here_document_then_tested_is_a_denial() {
    expect_actions(
        &[],
        &[
            "pg_isready -h orders-db; echo=$? <<EOF\nhi\nEOF\n[ $echo -eq 0 ]",
            "pg_isready -h orders-db; printf=$? <<EOF\nhi\nEOF\ntest $printf = 0",
            "pg_isready -h orders-db; echo=$? <<EOF\nhi\nEOF\nexit $echo",
            "pg_isready -h orders-db; rc=$? <<EOF\nhi\nEOF\nexit $rc",
        ],
    );
}

/// An `until` loop that retries a check a counted number of times: `break`'s status, 0, is the
/// loop's once the count is reached (bash manual, "Bourne Shell Builtins"), and with `until check
/// || [ $n -ge 2 ]` the body's last, `sleep`'s (POSIX, 2.9.4 "The until Loop"): 0 / 0 in bash
/// 5.2 and dash 0.5.12, `while ! check` alike. Denied: `exit 1` for `break`, the counter or the
/// check read after the loop, a body that fails (`false`), errexit with `exit $n` (1 / 0).
#[test]
fn a_counted_retry_loop_ends_with_status_0() {
    expect_actions(
        &[
            "n=0; until pg_isready -h orders-db; do n=$((n+1)); [ $n -ge 3 ] && break; sleep 1; done",
            "n=0; until pg_isready -h orders-db -t 1 || [ $n -ge 2 ]; do n=$((n+1)); sleep 1; done",
            "i=0; until pg_isready -h orders-db; do i=$((i+1)); if [ \"$i\" -ge 3 ]; then echo giving up; break; fi; sleep 1; done",
            "n=0; while ! pg_isready -h orders-db; do n=$((n+1)); [ $n -ge 3 ] && break; sleep 1; done",
            "n=0; until pg_isready -h orders-db; do n=$((n+1)); [ $n -ge 3 ] && { echo down >&2; break; }; sleep 1; done; echo ok",
            // (A fractional literal sleep is a quiet step too: CI's mutation sample on s15.)
            "n=0; until pg_isready -h orders-db; do n=$((n+1)); [ $n -ge 3 ] && break; sleep 0.5; done",
        ],
        &[
            "n=0; until pg_isready -h orders-db; do n=$((n+1)); [ $n -ge 3 ] && exit 1; sleep 1; done",
            "n=0; until pg_isready -h orders-db; do n=$((n+1)); [ $n -ge 3 ] && break; sleep 1; done; [ $n -lt 3 ]",
            "n=0; until pg_isready -h orders-db; do n=$((n+1)); [ $n -ge 3 ] && break; sleep 1; done; pg_isready -h orders-db",
            "n=0; until pg_isready -h orders-db || [ $n -ge 2 ]; do n=$((n+1)); sleep 1; done; [ $n -lt 2 ]",
            "n=0; until pg_isready -h orders-db || [ $n -ge 2 ]; do n=$((n+1)); false; done",
            "set -e; n=0; until pg_isready -h orders-db; do n=$((n+1)); [ $n -ge 3 ] && break; sleep 1; done; exit $n",
            "until pg_isready -h orders-db; do sleep 1; done",
            // (No `break`, or one on a command that is no test: it waits until the probe times out.)
            "n=0; until pg_isready -h orders-db; do n=$((n+1)); sleep 1; done",
            "n=0; until pg_isready -h orders-db; do n=$((n+1)); grep -q \"x$n\" /dev/null && break; sleep 1; done",
        ],
    );
}

/// grpc_health_probe's `-addr` is a gRPC target (gRPC docs, "gRPC Name Resolution"):
/// `dns:///svc:50051`, `dns://DNS-SERVER/svc:50051`, `dns:svc:50051`, `passthrough:///svc:50051`
/// and `ipv4:ADDR,...` reach svc (or the address), denied; `unix:` sockets and `dns:///localhost`
/// are this Pod (`unix:/tmp/grpc.sock` was denied as reaching a host `unix`).
#[test]
fn a_grpc_target_s_scheme_is_not_its_host() {
    for addr in [
        "dns:///grpc-backend.default.svc:50051",
        "dns://10.0.0.10:53/grpc-backend.default.svc:50051",
        "dns:grpc-backend:50051",
        "passthrough:///grpc-backend:50051",
        "ipv4:10.1.9.9:50051,10.1.9.8:50051",
    ] {
        let got = finding_of(&["grpc_health_probe", &format!("-addr={addr}")]);
        assert!(got.as_ref().is_some_and(|g| g.0 == Action::Deny), "{addr}: {got:?}");
    }
    for addr in ["unix:/tmp/grpc.sock", "unix:///tmp/grpc.sock", "dns:///localhost:50051", "localhost:50051"]
    {
        let got = finding_of(&["grpc_health_probe", &format!("-addr={addr}")]);
        assert!(got.is_none(), "{addr}: {got:?}");
    }
}

/// A `for` loop that tries each host until one answers (`&& exit 0`, `&& break`) with the host as
/// the client's positional argument (`nc -z $b 9092`), one of the words this Pod: a fallback
/// (bash 5.2 and dash 0.5.12 exit 0 with kafka-0 down and localhost up), as with `-h $h` (found
/// while checking the IFS broker lists of the v2 pass: `nc` was denied, `pg_isready -h` warned).
/// Denied: every word remote, the host not the loop's variable, `|| exit 1` (1 / 0).
#[test]
fn a_loop_trying_each_positional_host_is_a_fallback() {
    let warned = [
        "for b in kafka-0.kafka-headless localhost; do nc -z -w 2 $b 9092 && exit 0; done; exit 1",
        "for b in kafka-0.kafka-headless localhost; do nc -z -w 2 \"$b\" 9092 && exit 0; done",
        "for b in kafka-0.kafka-headless 127.0.0.1; do nc -z $b 9092 && break; done",
    ];
    let denied = [
        "for b in kafka-0.kafka-headless kafka-1.kafka-headless; do nc -z -w 2 \"$b\" 9092 && exit 0; done; exit 1",
        "for b in kafka-0.kafka-headless localhost; do nc -z -w 2 kafka-0.kafka-headless 9092 && exit 0; done; exit 1",
        "for b in localhost kafka-0.kafka-headless; do nc -z $b 9092 || exit 1; done",
    ];
    for (scripts, action) in [(&warned, Action::Warn), (&denied, Action::Deny)] {
        for script in scripts {
            let got = finding_of(&["sh", "-c", script]);
            assert!(
                got.as_ref().is_some_and(|g| g.0 == action && g.1.contains("kafka-0")),
                "{action:?} expected: {script}: {got:?}"
            );
        }
    }
}

/// Clients whose outage statuses their docs give (the rows' `outage_status`): `nc`/`ncat`/`telnet`/
/// `socat` 1, `mysqladmin` and the MySQL clients 1, `grpc_health_probe` 2 (connection failure),
/// `curl` 6 or 7 (no such host, connection refused). A `$?` test that sets the outage's status
/// apart from 0 keeps the check's status: with stubs exiting those statuses, bash 5.2 and dash
/// 0.5.12 exit 1 with the server down, 0 up (the verdict pass on s15 found these warned when no
/// statuses were known). A test no outage status passes differently from 0 is a warning (0 / 0).
#[test]
fn a_status_test_that_sets_a_known_outage_status_apart_is_a_denial() {
    expect_actions(
        &[
            "nc -z orders-db 5432; [ $? -ne 3 ]",
            "mysqladmin -h orders-db ping; [ $? -ne 2 ]",
            "grpc_health_probe -addr=orders-db:50051; [ $? -ne 4 ]",
            "curl -s http://orders-db/health; [ $? -ne 22 ]",
            "nc -z orders-db 5432; case $? in 2) exit 1;; esac",
            // (`-ge`, CI's mutation sample on s15: every status is at least 0.)
            "pg_isready -h orders-db; test $? -ge 0",
        ],
        &[
            "nc -z orders-db 9092; [ $? -ne 1 ]",
            "ncat -z orders-db 9092; [ $? -ne 1 ]",
            "mysqladmin -h orders-db ping; [ $? -ne 1 ]",
            "grpc_health_probe -addr=orders-db:50051; [ $? -ne 2 ]",
            "grpc_health_probe -addr=orders-db:50051; [ $? -lt 2 ]",
            "curl -s http://orders-db/health; [ $? -ne 7 ]",
            "curl -s http://orders-db/health; [ $? -ne 6 ]",
            "nc -z orders-db 5432; case $? in 1) exit 1;; esac",
        ],
    );
}

/// Every liveness-dependency finding of `sh -c SCRIPT` and `bash -c SCRIPT` (`shells`) for the
/// scripts that do not all have `action`, each described.
fn not_all(scripts: &[&str], shells: &[&str], action: Action) -> Vec<String> {
    let mut wrong = Vec::new();
    for shell in shells {
        for script in scripts {
            let e = eval_liveness(&[shell, "-c", script]);
            let found: Vec<_> = e
                .evaluation
                .findings
                .iter()
                .filter(|f| f.rule == probegate::policy::RuleId::LivenessDependency)
                .map(|f| (f.action, f.describe()))
                .collect();
            if found.is_empty() || found.iter().any(|f| f.0 != action) {
                wrong.push(format!("{action:?} expected: {shell} {script:?}: {found:?}"));
            }
        }
    }
    wrong
}

/// A check's status tested in any shape is replayed for each status its outage gives (the client
/// rows' `outage_status`: pg_isready 1 and 2, redis-cli 1, nc 1, curl 6 and 7, grpc_health_probe
/// 2; through `timeout`, 124 too): saved in a variable (`rc=$?`), compared either way round, in
/// `[ ]`, `test`, `[[ ]]`, `(( ))`, `exit $(( ))`, `case`, `if`/`elif`, `-a`/`-o`, after `!`,
/// after `||`, after a pipeline into `grep` (0, 1 or 2) or an `&&`/`||` list of checks, in
/// `( )` or `{ }`. Warned rows exit 0 for every outage status in bash 5.2 and dash 0.5.12 with
/// stub clients (`[[ ]]`, `(( ))`: bash); denied rows exit 1 (or the status) for one of them
/// where they exit 0 with the server up: `case $? in 0|2) exit 0;; esac; exit 1` fails with
/// pg_isready's 1 ("rejecting connections", during a restart). A test the replay cannot
/// evaluate (`[ $? -ne $LIMIT ]`) or a client whose outage statuses are not known (psql) some
/// status passes is a doubt, warned.
#[test]
fn a_status_test_is_replayed_for_each_outage_status() {
    let warned = [
        "pg_isready -h orders-db; [ 3 -ne $? ]",
        "pg_isready -h orders-db; [ \"3\" != \"$?\" ]",
        "pg_isready -h orders-db; rc=$?; [ $rc -ne 3 ]",
        "pg_isready -h orders-db; rc=$?; test \"$rc\" -lt 3",
        "pg_isready -h orders-db; RC=$?; [ ${RC:-0} -ne 3 ]",
        "pg_isready -h orders-db || [ $? -ne 3 ]",
        "pg_isready -h orders-db || test 3 -ne $?",
        "pg_isready -h orders-db; exit $(( $? == 3 ))",
        "! pg_isready -h orders-db; [ $? -ne 3 ]",
        "pg_isready -h orders-db | grep -q accepting; [ $? -ne 3 ]",
        "redis-cli -h redis-master ping && pg_isready -h orders-db; [ $? -ne 3 ]",
        "nc -z redis-master 6379 || pg_isready -h orders-db; [ $? -ne 3 ]",
        "nc -z redis-master 6379; test $? -eq 0 -o $? -eq 1",
        "pg_isready -h orders-db; [ $? -eq 0 ] || [ $? -eq 1 ]",
        "curl -s http://redis-master/health; rc=$?; [ $rc -eq 0 ] || [ $rc -eq 7 ] || [ $rc -eq 6 ]",
        "pg_isready -h orders-db; if [ $? -eq 2 ]; then exit 0; fi",
        "redis-cli -h redis-master ping; case $? in 0|1) exit 0;; esac; exit 1",
        "redis-cli -h redis-master ping; s=$?; [ $s -eq 0 ] || [ $s -eq 1 ]",
        "redis-cli -h redis-master ping || [ $? -eq 1 ]",
        "redis-cli -h redis-master ping; [ $? -ne 0 -a $? -ne 1 ] && exit 1; exit 0",
        "grpc_health_probe -addr=redis-master:50051; rc=$?; [ $rc -ne 3 ] && exit 0; exit 1",
        "timeout 3 pg_isready -h orders-db; [ $? -ne 3 ]",
        "pg_isready -h orders-db; rc=$?; if [ $rc -eq 3 ]; then exit 1; elif [ $rc -eq 4 ]; then exit 1; else exit 0; fi",
        "pg_isready -h orders-db; ( [ $? -ne 3 ] )",
        "pg_isready -h orders-db; { [ $? -ne 3 ]; }",
        "pg_isready -h orders-db; [ $? -ne $LIMIT ]",
        "pg_isready -h orders-db; rc=$?; [ $rc -ne \"$LIMIT\" ] && exit 0; exit 1",
        "psql -h orders-db; rc=$?; [ $rc -ne 3 ]",
        "pg_isready -h orders-db; case $? in [34]) exit 1;; esac",
        "pg_isready -h orders-db; [ \\( $? -ne 3 \\) ]",
        "pg_isready -h orders-db; rc=$?; [ $rc -ne 3 ] || exit 1; curl -sf http://localhost:8080/health",
    ];
    let denied = [
        "pg_isready -h orders-db; [ 2 -ne $? ]",
        "pg_isready -h orders-db; rc=$?; [ $rc -eq 0 ]",
        "pg_isready -h orders-db; rc=$?; [ $rc -ne 3 ]; exit $rc",
        "pg_isready -h orders-db || [ $? -ne 2 ]",
        "pg_isready -h orders-db; exit $(( $? != 0 ))",
        "! pg_isready -h orders-db; [ $? -eq 1 ]",
        "pg_isready -h orders-db | grep -q accepting; [ $? -eq 0 ]",
        "redis-cli -h redis-master ping && pg_isready -h orders-db; [ $? -eq 0 ]",
        "nc -z redis-master 6379; test $? -eq 0 -o $? -eq 2",
        "curl -s http://redis-master/health; rc=$?; [ $rc -eq 0 ] || [ $rc -eq 28 ]",
        "pg_isready -h orders-db; if [ $? -eq 1 ]; then exit 1; fi",
        "pg_isready -h orders-db; case $? in 0|2) exit 0;; esac; exit 1",
        "pg_isready -h orders-db; s=$?; [ $s -eq 0 ] || [ $s -eq 2 ]",
        "pg_isready -h orders-db || [ $? -eq 2 ]",
        "pg_isready -h orders-db; [ $? -ne 0 -a $? -ne 2 ] && exit 1; exit 0",
        "timeout 3 pg_isready -h orders-db; [ $? -ne 2 ]",
        "grpc_health_probe -addr=redis-master:50051; rc=$?; [ $rc -lt 2 ]",
        "pg_isready -h orders-db; ( [ $? -ne 2 ] )",
        "psql -h orders-db; rc=$?; [ $rc -eq 0 ]",
        "pg_isready -h orders-db; case $? in [12]) exit 1;; esac",
        "pg_isready -h orders-db; case $? in 0) ;; *) exit 1;; esac",
        "f() { exit $rc; }; pg_isready -h orders-db; rc=$?; [ $rc -ne 3 ] || exit 1; f",
    ];
    let bash_warned = [
        "pg_isready -h orders-db; (( $? != 3 ))",
        "pg_isready -h orders-db; rc=$?; (( rc < 3 ))",
        "pg_isready -h orders-db; [[ $? -ne 3 ]]",
        "pg_isready -h orders-db; rc=$?; [[ $rc != 3 && $rc != 4 ]]",
        "pg_isready -h orders-db; (( $? != 0x3 ))",
    ];
    let bash_denied = [
        "pg_isready -h orders-db; (( $? == 0 ))",
        "pg_isready -h orders-db; rc=$?; (( rc < 2 ))",
        "pg_isready -h orders-db; [[ $? -ne 2 ]]",
    ];
    let mut wrong = not_all(&warned, &["sh", "bash"], Action::Warn);
    wrong.extend(not_all(&denied, &["sh", "bash"], Action::Deny));
    wrong.extend(not_all(&bash_warned, &["bash"], Action::Warn));
    wrong.extend(not_all(&bash_denied, &["bash"], Action::Deny));
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// A process substitution opened on a descriptor other than 0 (`3< <(check)`): nothing reads it
/// unless the script names the descriptor (`<&3`, `read -u 3`, `/dev/fd/3`, an `exec` keeping it
/// open), so its output goes nowhere and its status nowhere either. bash 5.2 with stub clients:
/// warned rows exit 0 / 0 (database down / up, `0< <(check)` as `< <(check)`), denied rows 1 / 0.
#[test]
fn a_process_substitution_on_an_unread_descriptor_loses_the_check() {
    let warned = [
        "while read -r l; do echo \"$l\"; done 3< <(pg_isready -h orders-db)",
        "cat 3< <(pg_isready -h orders-db)",
        "cat 0< <(pg_isready -h orders-db)",
    ];
    let denied = [
        "grep -q accepting 0< <(pg_isready -h orders-db)",
        "while read -r l <&3; do echo \"$l\" | grep -q accepting && exit 0; done 3< <(pg_isready -h orders-db); exit 1",
        "while read -r -u 3 l; do echo \"$l\" | grep -q accepting && exit 0; done 3< <(pg_isready -h orders-db); exit 1",
        "while read -u3 l; do echo \"$l\" | grep -q accepting && exit 0; done 3< <(pg_isready -h orders-db); exit 1",
        "grep -q accepting /dev/fd/3 3< <(pg_isready -h orders-db)",
        "exec 4< <(pg_isready -h orders-db); grep -q accepting <&4",
    ];
    let mut wrong = not_all(&warned, &["bash"], Action::Warn);
    wrong.extend(not_all(&denied, &["bash"], Action::Deny));
    assert!(wrong.is_empty(), "{wrong:#?}");
    let (_, message) = finding_of(&["bash", "-c", "cat 3< <(pg_isready -h orders-db)"]).unwrap();
    assert!(message.contains("descriptor nothing reads"), "{message}");
}

/// Asserts that no script of `scripts`, run by `sh -c` and `bash -c`, has a liveness-dependency
/// finding: the check in it never runs.
#[track_caller]
fn expect_silent(scripts: &[&str]) {
    let mut wrong = Vec::new();
    for shell in ["sh", "bash"] {
        for script in scripts {
            if let Some(got) = finding_of(&[shell, "-c", script]) {
                wrong.push(format!("no finding expected: {shell} {script:?}: {got:?}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// An `&&`/`||` list whose left side's status is known as written (s16, vd3 ch08/ch12c/ch18/
/// ch23/mx09; bash 5.2 and dash 0.5.12 with stub clients, database down / up): `true || R || R
/// ...` (any length) and `true || exit 0 && true || R` never run R (0 / 0, no finding);
/// `R && false || local`, `R || true || R`, `R && nc ... || pg_isready ... && false || local`
/// always run what follows the constant left side, whose status is the list's (0 / 0, warned);
/// `R && exit 0 || exit 0` exits 0 either way (warned). Denied: a left side that can exit
/// (`|| exit 1`, a function that exits), one that writes a file read later, a remote check
/// after it, `R && exit 0 || true; exit 1` (1 / 0, 2 / 0). (`true` redefined as a function: a
/// warning since s19, [`a_function_named_like_a_command_the_analysis_reads_is_a_doubt`].)
#[test]
fn a_list_whose_left_side_s_status_is_known_as_written() {
    expect_silent(&[
        "true || redis-cli -h redis-master ping || redis-cli -h redis-master ping || redis-cli -h redis-master ping || redis-cli -h redis-master ping || redis-cli -h redis-master ping || redis-cli -h redis-master ping || redis-cli -h redis-master ping || redis-cli -h redis-master ping || redis-cli -h redis-master ping || redis-cli -h redis-master ping || redis-cli -h redis-master ping",
        "true || exit 0 && true || redis-cli -h redis-master ping",
        ": && false && pg_isready -h orders-db || redis-cli ping",
    ]);
    expect_actions(
        &[
            "redis-cli -h redis-master ping && exit 0 || exit 0",
            "redis-cli -h redis-master ping && nc -z kafka 9092 || pg_isready -h orders-db && false || redis-cli ping",
            "pg_isready -h orders-db && false || redis-cli ping",
            "pg_isready -h orders-db || true || pg_isready -h orders-db",
            "pg_isready -h orders-db || ! false && redis-cli ping",
        ],
        &[
            "pg_isready -h orders-db && false || pg_isready -h orders-db",
            "pg_isready -h orders-db || exit 1 && false || redis-cli ping",
            "pg_isready -h orders-db && exit 0 || true; exit 1",
            "pg_isready -h orders-db || false && redis-cli ping",
            "f() { exit 2; }; pg_isready -h orders-db || f && false || redis-cli ping",
            "pg_isready -h orders-db > /tmp/s && false || grep -q accepting /tmp/s",
        ],
    );
}

/// errexit and command substitutions (s16, vd3 ee12-ee29; bash 5.2 and dash 0.5.12, database
/// down / up): an assignment statement's status is its LAST substitution's (`x=$(R) y=$(true)`,
/// `x="$(R)"$(true)`: POSIX "Simple Commands"); an assignment in an `if`/`while` condition, an
/// `&&` list or after `!` is one of errexit's exceptions; `set +e` (or `set -u` alone) leaves
/// errexit off; `x=$(R >/dev/null; echo ok)` has echo's status and value, R's output gone;
/// `while R; do break; done` ends with 0 either way. All 0 / 0, warned. Denied (1 / 0, 2 / 0): R's
/// substitution last, a condition with an `exit 1` branch, `2>&1 >/dev/null` (R's errors in the
/// value), `echo $?`, an assignment last in an `&&` list, a value tested, `${y:+$(true)}` (may
/// not run).
#[test]
fn an_assignment_s_status_is_its_last_substitution_s_and_errexit_s_exceptions_apply() {
    expect_actions(
        &[
            "set -e; x=$(pg_isready -h orders-db) y=$(true)",
            "set -e; x=\"$(pg_isready -h orders-db)\"$(true); echo ok",
            "set -e; if x=$(pg_isready -h orders-db); then :; fi",
            "x=$(pg_isready -h orders-db >/dev/null; echo ok); [ \"$x\" = ok ]",
            "x=$(pg_isready -h orders-db >/dev/null 2>&1; echo ok); [ \"$x\" = ok ]",
            "set -e; set +e; x=$(pg_isready -h orders-db); echo ok",
            "set -u; x=$(pg_isready -h orders-db); echo ok",
            "set -e; x=$(pg_isready -h orders-db) && echo ok; echo end",
            "set -e; ! x=$(pg_isready -h orders-db); echo ok",
            "set -e; while x=$(pg_isready -h orders-db); do break; done; echo ok",
            "while pg_isready -h orders-db; do echo up; break; done",
            "x=$(pg_isready -h orders-db; echo done)",
        ],
        &[
            "set -e; x=$(true) y=$(pg_isready -h orders-db); echo ok",
            "set -e; x=$(pg_isready -h orders-db)${y:+$(true)}; echo ok",
            "set -e; if x=$(pg_isready -h orders-db); then :; else exit 1; fi",
            "x=$(redis-cli -h redis-master ping 2>&1 >/dev/null; echo ok); [ \"$x\" = ok ]",
            "x=$(pg_isready -h orders-db >/dev/null; echo $?); [ \"$x\" = 0 ]",
            "set -e; x=$(pg_isready -h orders-db) && echo ok",
            "x=$(redis-cli -h redis-master ping) y=$(true); [ -n \"$x\" ]",
            "while ! pg_isready -h orders-db; do exit 1; done",
            "set -e; set +e; x=$(pg_isready -h orders-db); echo $x | grep -q accepting",
        ],
    );
}

/// bash (by name, not `sh`) clears errexit in a command substitution's subshell (bash manual,
/// "The Set Builtin", `-e`; s16, vd3 ee07b): `set -e; x=$(R; echo done)` exits 0 / 0 in bash 5.2,
/// warned; 2 / 0 with `shopt -s inherit_errexit`, `set -o posix`, a `set -e` in the substitution,
/// and in dash (`sh -c`): denied.
#[test]
fn bash_clears_errexit_in_a_command_substitution() {
    let bash = |script: &str| finding_of(&["bash", "-c", script]).map(|f| f.0);
    let sh = |script: &str| finding_of(&["sh", "-c", script]).map(|f| f.0);
    for script in [
        "set -e; x=$(pg_isready -h orders-db; echo done)",
        "set -e; x=$(pg_isready -h orders-db >/dev/null; echo ok); [ \"$x\" = ok ]",
    ] {
        assert_eq!(bash(script), Some(Action::Warn), "bash {script}");
        assert_eq!(sh(script), Some(Action::Deny), "sh {script}");
    }
    for script in [
        "shopt -s inherit_errexit; set -e; x=$(pg_isready -h orders-db; echo done)",
        "set -o posix; set -e; x=$(pg_isready -h orders-db; echo done)",
        "set -e; x=$(set -e; pg_isready -h orders-db; echo done)",
    ] {
        assert_eq!(bash(script), Some(Action::Deny), "bash {script}");
    }
}

/// A check in a `case` pattern (s16: it was not analysed at all): the pattern is expanded when the
/// items before it did not match (bash manual, "Conditional Constructs"), and its output only
/// chooses the item: bash 5.2 and dash 0.5.12 exit 0 / 0 (database down / up) where every item
/// only writes output, 1 / 0 where the item chosen, or the code after the `case`, exits. Both are
/// warned: which item runs depends on what the check prints in an outage, a guess
/// (`shapes::CASE_PATTERN`). A pattern after one that always matches never runs (`ok)` first: 0
/// / 0, no finding). The warned rows tell a pattern (`in_case_body` false) from a body.
#[test]
fn a_check_in_a_case_pattern_chooses_the_item() {
    expect_actions(
        &[
            "case ok in $(pg_isready -h orders-db >/dev/null && echo ok)) echo up;; esac; echo done",
            "case ok in x|$(pg_isready -h orders-db >/dev/null && echo ok)) echo up;; *) echo down;; esac",
            // Whether the pattern matches depends on what the check prints in an outage: a
            // guess, so a warning even where the shells fail the probe (1 / 0 here) ...
            "case ok in $(pg_isready -h orders-db >/dev/null && echo ok)) exit 0;; esac; exit 1",
            "case ok in \"$(pg_isready -h orders-db >/dev/null && echo ok)\") exit 0;; esac; exit 1",
            "case ok in x|$(pg_isready -h orders-db >/dev/null && echo ok)) exit 0;; esac; exit 1",
            "case ok in no) echo no;; $(pg_isready -h orders-db >/dev/null && echo ok)) exit 0;; esac; exit 1",
            "case ok in $(pg_isready -h orders-db >/dev/null && echo ok)) ;; *) exit 1;; esac",
            // ... and where they do not (0 / 0: never `ok`; s16 fresh-user pass, denied).
            "case ok in $(redis-cli -h redis-master ping)) exit 1;; esac",
        ],
        &[],
    );
    expect_silent(&[
        "case ok in ok) exit 0;; $(pg_isready -h orders-db >/dev/null && echo ok)) exit 0;; esac; exit 1",
    ]);
}

/// Loops a counter ends (s16, vd3 un04/un05/un09; bash 5.2 and dash 0.5.12, dependency down /
/// up): `until [ $n -ge 3 ]` or `while [ $n -lt 3 ]` around `check && break`, `until [ $i -eq 3 ]
/// || check`, and `until check` whose counted `if` runs `false; break` (or `break` alone, last):
/// the loop ends at the count or a `break`, with status 0 (0 / 0, warned). Denied: the check's
/// `&& break` last (its failure is the loop's, 2 / 0), an `exit 1` for `break`, the counter or
/// the check read after the loop (1 / 0, 2 / 0).
#[test]
fn a_loop_a_counter_ends_has_status_0() {
    expect_actions(
        &[
            "n=0; until [ $n -ge 3 ]; do redis-cli -h redis-master ping && break; n=$((n+1)); done",
            "n=0; while [ $n -lt 3 ]; do pg_isready -h orders-db && break; n=$((n+1)); sleep 0; done",
            "n=0; until pg_isready -h orders-db; do n=$((n+1)); if [ $n -gt 2 ]; then false; break; fi; done",
            "i=0; until [ $i -eq 3 ] || pg_isready -h orders-db; do i=$((i+1)); done",
            "n=0; until pg_isready -h orders-db; do n=$((n+1)); if [ $n -gt 2 ]; then break; fi; done",
        ],
        &[
            "n=0; until [ $n -ge 3 ]; do n=$((n+1)); pg_isready -h orders-db && break; done",
            "n=0; until pg_isready -h orders-db; do n=$((n+1)); if [ $n -gt 2 ]; then false; exit 1; fi; done",
            "i=0; until [ $i -eq 3 ] || pg_isready -h orders-db; do i=$((i+1)); done; pg_isready -h orders-db",
            "i=0; until [ $i -eq 3 ] || pg_isready -h orders-db; do i=$((i+1)); done; [ $i -lt 3 ]",
            "n=0; until [ $n -ge 3 ]; do pg_isready -h orders-db && break; n=$((n+1)); done; [ $n -lt 3 ]",
        ],
    );
}

/// Pipelines and process substitutions that drop a check (s16, vd3 o26/ps08/ps12; bash 5.2 and
/// dash 0.5.12, dependency down / up; `<(`/`>(` are bash's, a syntax error in dash): a check
/// piped into a local check that reads no input (`| redis-cli ping`, `| pg_isready -h
/// localhost`, `| curl -sf http://localhost...`) has that check's status; a statement of a
/// process substitution, last or not, only writes to its reader (`< <(check; echo done)` read by
/// a loop that echoes); an output process substitution's status is lost (`echo hi >
/// >(check)`). All 0 / 0, warned. Denied: `pipefail`, a later check, a reader testing what it
/// reads (`grep -q`), `tee >(check) | grep -q` (the check writes into the pipe): 1 / 0, 2 / 0.
#[test]
fn pipelines_and_process_substitutions_that_drop_a_check() {
    expect_actions(
        &[
            "redis-cli -h redis-master ping | redis-cli ping",
            "pg_isready -h orders-db | pg_isready -h localhost",
            "pg_isready -h orders-db | curl -sf http://localhost:8080/healthz",
            "while read l; do echo $l; done < <(redis-cli -h redis-master ping; echo done)",
            "while read l; do echo $l; done < <(set -e; pg_isready -h orders-db; echo done)",
            "echo hi > >(redis-cli -h redis-master ping >/dev/null)",
            "echo hi > >(pg_isready -h orders-db)",
        ],
        &[
            "set -o pipefail; pg_isready -h orders-db | redis-cli ping",
            "pg_isready -h orders-db | redis-cli ping; pg_isready -h orders-db",
            "tee >(pg_isready -h orders-db) < /dev/null | grep -q accepting",
            "cat <(pg_isready -h orders-db; echo done) | grep -q accepting",
            "grep -q done < <(pg_isready -h orders-db && echo done)",
            "echo hi > >(pg_isready -h orders-db); pg_isready -h orders-db",
        ],
    );
}

/// The replay runs up to `MAX_STEPS` (400) statements after the check: `rc=$?`, 398 `:` and the
/// test are 400, all run, so the test is read (bash and dash: 0 / 0, a warning). Kills CI's
/// sampled mutant on d922922 making the bound `>=` (the replay stopped before the test).
#[test]
fn the_replay_runs_its_whole_step_budget() {
    let script = format!("pg_isready -h orders-db; rc=$?; {}[ $rc -ne 3 ]", ": ; ".repeat(398));
    expect_actions(&[script.as_str()], &[]);
}

/// A `[[ ]]` test with a parenthesised group right of `||`: the replay splits at the `||` outside
/// the group (bash 5.2: 1 / 0 with the database down / up, denied). Kills CI's sampled mutant on
/// d922922 deleting the `(` arm of the replay's depth count (the `||` was never split: a doubt,
/// warned).
#[test]
fn the_replay_splits_a_test_outside_its_parentheses() {
    let denied = ["pg_isready -h orders-db; rc=$?; [[ $rc -eq 0 || ( $rc -eq 3 && $rc -eq 3 ) ]]"];
    let wrong = not_all(&denied, &["bash"], Action::Deny);
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// pg_isready prints a status line on stdout up or down (`db:5432 - no response`, PostgreSQL
/// docs, "pg_isready"; real pg_isready 15): a test only of whether its captured output is empty
/// gives the same answer either way (break-it pass, s17: docs/scripts.md's own example of a used
/// output was denied). bash and dash with a stub that prints as pg_isready does: the warned rows
/// exit 0 / 0 (down / up); denied: a client silent on stdout when down (redis-cli: its error goes
/// to stderr), `-q`, a comparison of the text, the assignment's status read (1 / 0), or a test
/// that fails either way (1 / 1, 2 / 2).
#[test]
fn an_emptiness_test_of_a_status_line_always_printed_cannot_fail_on_the_outage() {
    expect_actions(
        &[
            r#"out=$(pg_isready -h orders-db); [ -n "$out" ]"#,
            r#"out=$(pg_isready -h orders-db); [ -z "$out" ] && exit 1; exit 0"#,
            r#"out=$(pg_isready -h orders-db); test -n "$out""#,
            r#"out=$(/usr/bin/pg_isready -h orders-db -t 3); [ "$out" ]"#,
            r#"out=$(pg_isready -h orders-db); [ -n "${out}" ]"#,
            r#"[ -n "$(pg_isready -h orders-db)" ]; exit $?"#,
            r#"test -z "$(pg_isready -h orders-db -t 2)" && exit 1; exit 0"#,
            r#"[ "$(pg_isready -h orders-db)" ]"#,
        ],
        &[
            r#"out=$(redis-cli -h redis-master ping); [ -n "$out" ]"#,
            r#"[ -n "$(redis-cli -h redis-master ping)" ]"#,
            r#"[ -n "$(pg_isready -q -h orders-db)" ]"#,
            r#"[ "$(pg_isready -h orders-db)" = "orders-db:5432 - accepting connections" ]"#,
            r#"out=$(pg_isready -q -h orders-db); [ -n "$out" ]"#,
            r#"out=$(pg_isready -qh orders-db); [ -n "$out" ]"#,
            r#"out=$(pg_isready --quiet -h orders-db); [ -n "$out" ]"#,
            r#"out=$(pg_isready -h orders-db); [ -n "$out" ] && echo "$out" | grep -q accepting"#,
            r#"out=$(pg_isready -h orders-db) || exit 1; [ -n "$out" ]"#,
            r#"out=$(pg_isready -h orders-db); [ -n $out ]"#,
            r#"out=$(pg_isready -h orders-db >/dev/null); [ -n "$out" ]"#,
            r#"out=$(pg_isready -h orders-db); [ -n "$out" -a -n "$x" ]"#,
            r#"out=$(pg_isready -h orders-db); [ "$out" = "orders-db:5432 - accepting connections" ]"#,
        ],
    );
}

/// A here-document whose operator's line goes on with commands and holds a substitution (which
/// `heredoc::group_here_document_lines` leaves as written): the grammar holds the rest of the
/// line inside the redirection, and the split walks it (bash 5.2 and dash 0.5.12: 2 / 0 with
/// the database down / up, denied). Kills the s16 sample's survivor `shell.rs:611:41` (`emit`'s
/// `n.end_byte() <= walk.cut` made `>`: the rest of the line was walked only when the parse was
/// cut short, so `pg_isready` was never seen; applied by hand: no finding).
#[test]
fn commands_after_a_here_document_operator_with_a_substitution_are_walked() {
    expect_actions(
        &[],
        &[
            "cat <<EOF && pg_isready -h \"$(echo orders-db)\"\nhello\nEOF",
            "cat <<EOF && pg_isready -h orders-db `true`\nhello\nEOF",
            "cat <<EOF | grep -q hello && pg_isready -h orders-db $(true)\nhello\nEOF",
        ],
    );
}

/// A function called in a command substitution that bash runs (s17, vd3 ee33): bash clears
/// errexit there (bash manual, "The Set Builtin", `-e`), so the function's body runs without it
/// and a check not last in it has its status dropped: `set -e; g() { check; echo x; }; y=$(g);
/// echo ok` exits 0 / 0 in bash 5.2 (database down / up), warned. Denied: the same run by `sh`
/// (dash 0.5.12: 1 / 0), `shopt -s inherit_errexit` (bash 1 / 0), the check last in the function.
#[test]
fn a_function_called_in_a_bash_substitution_runs_without_errexit() {
    let script = "set -e; g(){ redis-cli -h redis-master ping; echo x; }; y=$(g); echo ok";
    let mut wrong = not_all(&[script], &["bash"], Action::Warn);
    wrong.extend(not_all(&[script], &["sh"], Action::Deny));
    wrong.extend(not_all(
        &[
            "shopt -s inherit_errexit; set -e; g(){ redis-cli -h redis-master ping; echo x; }; y=$(g); echo ok",
            "set -e; g(){ redis-cli -h redis-master ping; }; y=$(g); echo ok",
        ],
        &["bash"],
        Action::Deny,
    ));
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// A check's output read along with a local check's (s17, vd3 ps20): `paste <(remote) <(local)
/// | grep -q PONG` finds the local check's `PONG` with the cache down (bash 5.2: 0 / 0), warned.
/// Denied (1 / 0): the other source remote too, or text the script writes (`<(echo done)`), or a
/// check in an output substitution `>(...)` beside a local `<(...)` (`tee` writes to both paths,
/// reads neither; the check's `PONG` reaches `grep` through the pipe: bash 5.2, 1 / 0).
#[test]
fn a_check_read_along_with_a_local_check_is_a_doubt() {
    let warned = [
        "paste <(redis-cli -h redis-master ping) <(redis-cli ping) | grep -q PONG",
        "paste <(redis-cli -h redis-master ping) <(redis-cli -h 127.0.0.1 ping) | grep -q PONG",
    ];
    let denied = [
        "paste <(redis-cli -h redis-master ping) <(redis-cli -h redis-master ping) | grep -q PONG",
        "cat <(redis-cli -h redis-master ping) <(echo done) | grep -q PONG",
        "tee >(redis-cli -h redis-master ping) <(redis-cli ping) </dev/null | grep -q PONG",
    ];
    let mut wrong = not_all(&warned, &["bash"], Action::Warn);
    wrong.extend(not_all(&denied, &["bash"], Action::Deny));
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// A substitution of a check with its errors (`2>&1`) tested only for being non-empty (s17, vd3
/// o20): the failing client writes an error message, so the test passes with the cache down or
/// up (bash 5.2 and dash 0.5.12: 0 / 0), warned. Denied (1 / 0, 2 / 0): without `2>&1`, the
/// value unquoted in `test` (split into words), the errors silenced (`nc -z`, `curl -s`).
#[test]
fn a_check_s_errors_tested_for_being_non_empty_is_not_coupled() {
    let warned = [
        "test -n \"$(redis-cli -h redis-master ping 2>&1)\"",
        "[ -n \"$(redis-cli -h redis-master ping 2>&1)\" ]",
        "[ \"$(redis-cli -h redis-master ping 2>&1)\" ] && exit 0; exit 1",
    ];
    let denied = [
        "test -n \"$(redis-cli -h redis-master ping)\"",
        "test -n $(redis-cli -h redis-master ping 2>&1)",
        "[ -n \"$(nc -z redis-master 6379 2>&1)\" ]",
        "[ -n \"$(curl -s http://redis-master:8080/health 2>&1)\" ]",
    ];
    let mut wrong = not_all(&warned, &["sh", "bash"], Action::Warn);
    wrong.extend(not_all(&denied, &["sh", "bash"], Action::Deny));
    wrong.extend(not_all(&["[[ -n $(redis-cli -h redis-master ping 2>&1) ]]"], &["bash"], Action::Warn));
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// A `case` whose subject is the check's status (`$(check >/dev/null; echo $?)`, s17) is
/// replayed for the client's outage statuses: pg_isready's are 1 and 2, so `3) exit 1` never
/// runs (bash 5.2 and dash 0.5.12: 0 / 0, warned); psql's are not known (a doubt, warned).
/// Denied (1 / 0): `2) exit 1`, `*) exit 1`.
#[test]
fn a_case_on_the_check_s_status_in_a_substitution_is_replayed() {
    expect_actions(
        &[
            "case $(pg_isready -h orders-db >/dev/null; echo $?) in 3) exit 1;; esac",
            "case \"$(pg_isready -h orders-db >/dev/null; echo $?)\" in 3|4) exit 1;; esac; exit 0",
            "case $(psql -h orders-db -c 'select 1' >/dev/null; echo $?) in 3) exit 1;; esac",
        ],
        &[
            "case \"$(pg_isready -h orders-db >/dev/null; echo $?)\" in 2) exit 1;; esac",
            "case $(pg_isready -h orders-db >/dev/null; echo $?) in 0) ;; *) exit 1;; esac",
        ],
    );
}

/// A check whose own output goes into a `case` pattern after `|| echo down` (s17): whether the
/// pattern matches in an outage is a guess (`case ok in $(pg_isready -h db || echo down)) exit
/// 1;; esac; exit 0`: bash 5.2 and dash 0.5.12 0 / 0; in `{ }` alike), warned. Denied (1 / 0): the
/// check's output thrown away (`>/dev/null || echo ok`, on it or its `{ }`: the pattern is known)
/// or read by `grep -q`.
#[test]
fn a_check_printing_into_a_case_pattern_is_a_doubt() {
    expect_actions(
        &[
            "case ok in $(pg_isready -h orders-db || echo down)) exit 1;; esac; exit 0",
            "case ok in $({ pg_isready -h orders-db; } 2>/dev/null || echo down)) exit 1;; esac; exit 0",
        ],
        &[
            "case ok in $(pg_isready -h orders-db >/dev/null || echo ok)) exit 1;; esac; exit 0",
            "case ok in $({ pg_isready -h orders-db; } >/dev/null || echo ok)) exit 1;; esac; exit 0",
            "case ok in $(pg_isready -h orders-db | grep -q acc || echo ok)) exit 1;; esac; exit 0",
        ],
    );
}

/// A status variable assigned again from a later command before anything reads it (s17): the
/// replay stops at the later command (`psql -h localhost`), which reads neither `$?` nor `rc`,
/// and `rc=$?` after it holds that command's status, not the check's (bash 5.2 and dash 0.5.12:
/// 0 / 0, warned). A quoted `'select 1'` is no `select` loop. Denied (1 / 0): `rc` read before
/// it is assigned again, `rc=$rc`, `rc` tested after one check.
#[test]
fn a_status_variable_assigned_again_drops_the_check_s_status() {
    expect_actions(
        &[
            "psql -h orders-db -c 'select 1'; rc=$?; psql -h localhost -c 'select 1'; rc=$?; [ $rc -eq 0 ]",
            "psql -h orders-db -c 'select 1'; rc=$?; psql -h orders-db -c 'select 2'; rc=$?; [ $rc -ne 3 ]",
            "pg_isready -h orders-db; rc=$?; pg_isready -h localhost; rc=$?; [ $rc -eq 0 ]",
        ],
        &[
            "psql -h orders-db -c 'select 1'; rc=$?; psql -h localhost -c 'select 1'; [ $rc -eq 0 ]",
            "pg_isready -h orders-db; rc=$?; pg_isready -h localhost; rc=$rc; [ $rc -eq 0 ]",
            "psql -h orders-db -c 'select 1'; rc=$?; [ $rc -eq 0 ]",
        ],
    );
}

/// `timeout`'s options before the duration (`-k`/`--kill-after=`, `--foreground`, `-v`/
/// `--verbose`) are read past, so the replay knows the outage statuses of the command after the
/// duration (pg_isready's, 124 and, with `-k`, 137): `[ $? -ne 2 ]` fails on pg_isready's 2 (bash
/// and dash with coreutils' timeout and a stub pg_isready: 1 / 0, denied), `[ $? -ne 3 ]` on none
/// (0 / 0, warned). An option it does not know leaves them unknown: `-s pg_isready` is an invalid
/// signal, so timeout exits 125 and never runs pg_isready (0 / 0; a doubt, warned, where reading
/// the word after `-s` as the duration made the command `pg_isready 3 ...` and denied). Kills
/// survivors of the whole-module run of replay.rs (`outage_codes`): an option's arm deleted,
/// `i += 1`/`i += 2` made `-=` (the statuses unknown: a doubt, warned), and the unknown-option
/// guard made `false`.
#[test]
fn timeout_options_before_the_duration_keep_the_outage_statuses_known() {
    expect_actions(
        &[
            "timeout -k 1 3 pg_isready -h orders-db; [ $? -ne 3 ]",
            "timeout --foreground -k 1 3 pg_isready -h orders-db; [ $? -ne 3 ]",
            "timeout -s pg_isready 3 pg_isready -h orders-db; [ $? -ne 2 ]",
        ],
        &[
            "timeout -k 1 3 pg_isready -h orders-db; [ $? -ne 2 ]",
            "timeout --kill-after=1 3 pg_isready -h orders-db; [ $? -ne 2 ]",
            "timeout --foreground 3 pg_isready -h orders-db; [ $? -ne 2 ]",
            "timeout -v 3 pg_isready -h orders-db; [ $? -ne 2 ]",
            "timeout --verbose 3 pg_isready -h orders-db; [ $? -ne 2 ]",
        ],
    );
}

/// The warning of a replayed test says what decided it: every outage status of a known client
/// replayed and passing ("each status an outage gives makes the script run as with the server
/// up"), or some status passing where the client's statuses are not known (psql) or the test
/// cannot be evaluated (`${LIMIT:-3}`, a variable the replay did not assign): a doubt ("in a way
/// that some status its outage may give passes"). Every row exits 0 / 0 in bash 5.2 and dash
/// 0.5.12 (stub psql: 2 with the server down). Kills mutants of replay.rs's `verdict` found by
/// hand past the part of the whole-module run that finished: the early stop for unknown statuses
/// (`known.is_none() && some && !all`, 163) with `!` deleted (a doubt told as replayed) or the
/// first `&&` made `||` (`[ $rc -ne 1 ]` denied), and the `doubt` arm's guard made `false` (174:
/// `${LIMIT:-3}` denied). Each applied by hand: fails.
#[test]
fn a_replayed_test_s_warning_says_what_decided_it() {
    const REPLAYED: &str = "each status an outage gives makes the script run as with the server up";
    const DOUBT: &str = "in a way that some status its outage may give passes";
    let mut wrong = Vec::new();
    for (script, reason) in [
        ("pg_isready -h orders-db; rc=$?; [ $rc -ne 3 ]", REPLAYED),
        ("timeout -k 1 3 pg_isready -h orders-db; [ $? -ne 3 ]", REPLAYED),
        ("psql -h orders-db; rc=$?; [ $rc -ne 3 ]", DOUBT),
        ("psql -h orders-db; rc=$?; [ $rc -ne 1 ]", DOUBT),
        ("pg_isready -h orders-db; [ $? -ne \"${LIMIT:-3}\" ]", DOUBT),
    ] {
        for shell in ["sh", "bash"] {
            let got = finding_of(&[shell, "-c", script]);
            if !got.as_ref().is_some_and(|(a, m)| *a == Action::Warn && m.contains(reason)) {
                wrong.push(format!("{shell} {script:?}: {reason:?} expected: {got:?}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// A check's output tested only for being empty, in a word that also holds literal text, is never
/// empty: the test's status is the same with the cache up or down (s18; stub redis-cli printing
/// its error on stderr, bash 5.2 and dash 0.5.12: 0 / 0), so the check is not coupled, and the
/// warning says why. Denied (0 / 1, 0 / 2): the literal beside is empty (`''`), the part beside is
/// an unquoted variable, or the value is split into words in `[` (`$(... 2>&1)x` unquoted).
/// Where errors go into the value (`2>&1`), `-z` and a bare `test` are constant too (1 / 1, 0 /
/// 0). Kills `status/subst.rs`'s `nonempty_with_errors` mutant (`&&` made `||` in its old word
/// match, which read `$(...)xy` as the value) by asserting the reason, and the false deny it
/// showed.
#[test]
fn a_check_s_output_beside_literal_text_is_never_empty() {
    const NEVER_EMPTY: &str = "beside literal text that is never empty";
    const WITH_ERRORS: &str = "with its errors (`2>&1`), is only tested for being empty";
    let mut wrong = Vec::new();
    let mut expect = |shells: &[&str], script: &str, reason: Option<&str>| {
        for shell in shells {
            let got = finding_of(&[shell, "-c", script]);
            let ok = match reason {
                Some(r) => got.as_ref().is_some_and(|(a, m)| *a == Action::Warn && m.contains(r)),
                None => got.as_ref().is_some_and(|(a, _)| *a == Action::Deny),
            };
            if !ok {
                wrong.push(format!("{shell} {script:?}: {reason:?} expected: {got:?}"));
            }
        }
    };
    let both = ["sh", "bash"];
    expect(&["bash"], "[[ -n $(redis-cli -h redis-master ping 2>&1)xy ]]", Some(NEVER_EMPTY));
    expect(&["bash"], "[[ -n $(redis-cli -h redis-master ping)xy ]]", Some(NEVER_EMPTY));
    expect(&both, "[ -n \"$(redis-cli -h redis-master ping)x\" ]", Some(NEVER_EMPTY));
    expect(&both, "[ -n x\"$(redis-cli -h redis-master ping)\" ]", Some(NEVER_EMPTY));
    expect(&both, "[ \"$(redis-cli -h redis-master ping)\"x ]", Some(NEVER_EMPTY));
    expect(&both, "test \"$(redis-cli -h redis-master ping)x\"", Some(NEVER_EMPTY));
    expect(&both, "[ -z \"$(redis-cli -h redis-master ping)x\" ] || exit 0; exit 1", Some(NEVER_EMPTY));
    expect(&both, "[ -z \"$(redis-cli -h redis-master ping 2>&1)\" ]", Some(WITH_ERRORS));
    expect(&both, "test \"$(redis-cli -h redis-master ping 2>&1)\"", Some(WITH_ERRORS));
    expect(&["bash"], "[[ -n $(redis-cli -h redis-master ping 2>&1)$x ]]", Some(WITH_ERRORS));
    expect(&both, "[ -n \"$(redis-cli -h redis-master ping)\"$x ]", None);
    expect(&both, "[ -n \"$(redis-cli -h redis-master ping)\"'' ]", None);
    expect(&both, "[ -n \"$(redis-cli -h redis-master ping)\" ]", None);
    expect(&both, "[ -n $(redis-cli -h redis-master ping 2>&1)x ]", None);
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// Session 18 (fd): clients whose outage status was assumed, measured, and a check in a network
/// namespace of its own. Debian's netcat-traditional 1.10-47 exits 1 on a refused port or a name
/// that does not resolve (with and without `-z`), so a test of `$? -ne 1` fails with the server
/// down (bash 5.2 and dash 0.5.12: 1 / 0) and `-ne 3` never does (0 / 0). wget2 1.99.1 exits 0
/// when it cannot connect once its tries are bounded (`-t 1`: 0 / 0); with its default 20 tries
/// it retried a refused port for 190 s (then exited 0), past the probe's timeout. `unshare -n
/// CHECK` runs CHECK with no network (util-linux 2.38.1: curl to a local server exits 7 inside): no finding.
#[test]
fn measured_outage_statuses_and_a_check_without_network() {
    expect_actions(
        &[
            "nc.traditional -z orders-db 5432; [ $? -ne 3 ]",
            "wget2 -q -t 1 -O- http://orders-db:8080/",
            "wget2 -q --tries=2 -O- http://orders-db:8080/ && curl -sf localhost:8080/",
        ],
        &[
            "nc.traditional -z orders-db 5432; [ $? -ne 1 ]",
            "nc.traditional -z orders-db 5432; case $? in 1) exit 1;; esac",
            "nc.traditional -z orders-db 5432",
            "wget2 -q -O- http://orders-db:8080/",
            "wget2 -q --tries=0 -O- http://orders-db:8080/",
            "unshare -U pg_isready -h orders-db",
        ],
    );
    expect_silent(&[
        "unshare -n pg_isready -h orders-db",
        "unshare -rn sh -c 'pg_isready -h orders-db'",
        "unshare --net=/run/netns/x -- pg_isready -h orders-db",
        "exec unshare -Un redis-cli -h redis-master ping",
    ]);
}

/// Survivors of the whole-module run of replay.rs (s18, at 173fc71), each killed here with the
/// verdict bash 5.2 and dash 0.5.12 give (stub `pg_isready`: 2 with the server down, 0 up; real
/// pg_isready 15 exits 2 for an unreachable host). A function defined in the script, named like
/// no command the replay runs (`f`, `log`), leaves the replay on: `f() { :; }; pg_isready -h
/// orders-db; rc=$?; [ $rc -ne 3 ]` exits 0 / 0 and is warned; with `verdict`'s function guard's
/// `g == f` made `!=` (153:100: any function turns the replay off) the walk alone denies it.
/// Applied by hand: denied.
#[test]
fn survivors_of_the_replay_s_verdict_are_told_apart() {
    expect_actions(
        &[
            "f() { :; }; pg_isready -h orders-db; rc=$?; [ $rc -ne 3 ]",
            "log() { echo \"$@\"; }; pg_isready -h orders-db; rc=$?; [ $rc -ne 3 ] || log down",
        ],
        &[],
    );
}

/// A function named like a command the analysis reads by name (s19; `status::shadowing_call`):
/// bash 5.2 and dash 0.5.12 run the function where the walk, its replay and the flow run the
/// command, so whatever they conclude from the name is a guess. Called, it makes the check a
/// warning ("whether it fails the probe rests on `echo()`"), never a denial. Each row was
/// run in bash 5.2 and dash 0.5.12 with stub clients (pg_isready: 2 with the database down, 0 up;
/// a local HTTP server for curl), statuses down / up in both unless said:
/// - `[`/`test`: a `test` function never called leaves the replay on (`[` is the builtin: 0 / 0);
///   called, 1 / 1; `function [ { return 1; }` before `[ $rc -ne 3 ]`, bash 1 / 1 (dash 2 / 2);
/// - `echo`/`printf`: `case $(check; echo $?) in 2) exit 1;; esac` with `echo` printing nothing,
///   0 / 0 (denied on 511f845); the value of `$(echo orders-db)` is the function's (`localhost`);
/// - `exit`: `exit() { :; }; check; exit $?`, bash 0 / 0 (denied on 511f845); dash refuses the
///   definition ("Bad function name": 2 / 2), as `function echo` (2 / 2);
/// - `true`/`:`/`false`: `true() { return 1; }; check; true`, 1 / 1 (denied on 511f845). Also
///   warned now, and coupled (misses, no longer denied on a guess): `true() { exit 1; }; check ||
///   true; curl localhost` (1 / 0; dash 2 / 2 for `:`), `true() { false; }; true || check` and
///   `true() { return 1; }; if true; then :; else check; fi` (2 / 0);
/// - filters and the `grep` family: `| tee` returning 1 (1 / 1), `| cat` and `| grep -q`
///   returning 0 (0 / 0); `read`, a state builtin (0 / 0); `sleep` (0 / 0).
///
/// Denied (2 / 0): a function named like no such command (`log`, `echo_ok`, `retest`), a `test`
/// function never called with the check last, the word `test` only in a string of another's.
#[test]
fn a_function_named_like_a_command_the_analysis_reads_is_a_doubt() {
    expect_actions(
        &[
            "test() { return 1; }; pg_isready -h orders-db; rc=$?; [ $rc -ne 3 ]",
            "test() { return 1; }; pg_isready -h orders-db; rc=$?; test $rc -ne 3",
            "echo() { :; }; case $(pg_isready -h orders-db; echo $?) in 2) exit 1;; esac",
            "echo() { :; }; case $(pg_isready -h orders-db >/dev/null; echo $?) in 2) exit 1;; esac",
            "printf() { :; }; pg_isready -h orders-db; rc=$?; printf x; [ $rc -ne 3 ]",
            "echo() { printf localhost; }; H=$(echo orders-db); pg_isready -h \"$H\"",
            "exit() { :; }; pg_isready -h orders-db; exit $?",
            "function echo { :; }; pg_isready -h orders-db; echo $?",
            "true() { return 1; }; pg_isready -h orders-db; true",
            "true() { exit 1; }; pg_isready -h orders-db || true; curl -sf localhost:8080/healthz",
            ":() { exit 1; }; pg_isready -h orders-db || :; curl -sf localhost:8080/healthz",
            "alias true='exit 1'\ntrue() { exit 1; }\npg_isready -h orders-db || true; curl -sf localhost:8080/healthz",
            "true() { false; }; true || pg_isready -h orders-db",
            "true() { return 1; }; if true; then :; else pg_isready -h orders-db; fi",
            "tee() { return 1; }; pg_isready -h orders-db | tee /tmp/x",
            "cat() { :; }; pg_isready -h orders-db | cat",
            "grep() { return 0; }; pg_isready -h orders-db | grep -q accepting",
            "read() { :; }; pg_isready -h orders-db | read x",
            "sleep() { :; }; pg_isready -h orders-db || sleep 5",
            "function [ { return 1; }; pg_isready -h orders-db; rc=$?; [ $rc -ne 3 ]",
        ],
        &[
            "log() { echo \"$@\"; }; pg_isready -h orders-db",
            "test() { return 1; }; pg_isready -h orders-db",
            "echo_ok() { echo ok; }; pg_isready -h orders-db; rc=$?; echo_ok; exit $rc",
            "retest() { :; }; retest; pg_isready -h orders-db",
            "f() { echo \"test\"; }; f; pg_isready -h orders-db",
        ],
    );
    // (The replay and the `$?` test's walk do not run `test` as the builtin once it is called:
    // the reason is the function, not "its status is only tested".)
    for (script, name) in [
        ("exit() { :; }; pg_isready -h orders-db; exit $?", "exit"),
        ("test() { return 1; }; pg_isready -h orders-db; rc=$?; test $rc -ne 3", "test"),
        ("test() { return 1; }; pg_isready -h orders-db; test $? -ne 3", "test"),
        ("function [ { return 1; }; pg_isready -h orders-db; rc=$?; [ $rc -ne 3 ]", "["),
    ] {
        let (_, message) = finding_of(&["bash", "-c", script]).unwrap();
        assert!(message.contains(&format!("whether it fails the probe rests on `{name}()`")), "{message}");
    }
}

/// `wget` with bounded tries (s19): the program named `wget` is GNU Wget 1.x on Debian and
/// Ubuntu, but wget2 on Fedora 40 and later. Measured with `-t 1` on a refused port, a name that
/// does not resolve (`orders-db` here) and an HTTP 500: GNU Wget 1.21.3 exits 4, 4 and 8, wget2
/// 1.99.1 exits 0, 0 and 0 (the same in bash 5.2 and dash 0.5.12: `wget -q -t 1 -O-
/// http://orders-db:8080/; [ $? -eq 0 ]` 1 / 0 with GNU Wget, 0 / 0 with wget2). Which one the
/// image has is known only at run time: a warning. Without `--tries` (or with `0`/`inf`,
/// unlimited) both fail the probe, GNU Wget at once (4) and wget2 by retrying past the probe's
/// timeout (190 s with its default 20 tries): still denied.
#[test]
fn a_wget_with_bounded_tries_may_be_wget2_and_is_a_warning() {
    expect_actions(
        &[
            "wget -q -t 1 -O- http://orders-db:8080/",
            "wget -q --tries=2 -O- http://orders-db:8080/; [ $? -eq 0 ]",
            "wget -q -T 2 --tries 1 -O /dev/null http://orders-db:8080/health",
            "wget -q -e tries=1 -O- http://orders-db:8080/",
        ],
        &[
            "wget -q -O- http://orders-db:8080/",
            "wget -q -t 0 -O- http://orders-db:8080/",
            "wget -q -t inf -O- http://orders-db:8080/",
            "wget -q --spider http://orders-db:8080/health",
        ],
    );
    let (action, message) = finding_of(&["wget", "-q", "-t", "1", "-O-", "http://orders-db:8080/"]).unwrap();
    assert_eq!(action, Action::Warn, "{message}");
    assert!(message.contains("rests on the image's wget (Fedora 40+'s, wget2, exits 0)"), "{message}");
}

/// A function of the script handed the check's status (`f $?`, `rc=$?; f $rc`) whose body reads
/// neither it nor its arguments, or only writes them out, cannot couple the probe: bash 5.2 and
/// dash 0.5.12 with a stub pg_isready exit 0 / 0 (up / down), warned (s19: denied before).
/// Denied, each 0 / 2 or 0 / 1 in both shells: a body that returns its argument or the status
/// it starts with (`return $1`, a bare `return`, a call of another function that reads `$?`),
/// and a written status that a reader then tests (`f $? | grep -q 0`).
#[test]
fn a_function_handed_the_status_that_ignores_it_does_not_couple_the_probe() {
    let warned = [
        "f() { :; }; pg_isready -h orders-db; f $?",
        "f() { echo \"$1\"; }; pg_isready -h orders-db; f $?",
        "f() { :; }; pg_isready -h orders-db; rc=$?; f $rc",
        "pg_isready -h orders-db; rc=$?; f() { :; }; f $rc",
    ];
    let denied = [
        "f() { return $1; }; pg_isready -h orders-db; f $?",
        "f() { return; }; pg_isready -h orders-db; f $?",
        "f() { g; }; g() { return $?; }; pg_isready -h orders-db; f $?",
        "f() { echo \"$1\"; }; pg_isready -h orders-db; f $? | grep -q 0",
    ];
    let mut wrong = not_all(&warned, &["sh", "bash"], Action::Warn);
    wrong.extend(not_all(&denied, &["sh", "bash"], Action::Deny));
    assert!(wrong.is_empty(), "{wrong:#?}");
}
