//! Session 26: the mutants CI's sample left alive (cargo-mutants 27.1.0), each killed by a row
//! that fails with the mutant applied by hand and passes without it, and the false denials two of
//! them showed. Every script row was run in bash 5.2.15 and dash 0.5.12 with stub clients on PATH
//! (`/tmp/emstub/run.sh`: `redis-cli` exits 0 up and 1 down, `pg_isready` 0 up and 2 down); each
//! row's statuses, up / down, are in its comment ("0 / 0" is not coupled: never a denial).

mod common;

use common::flow::*;
use common::workload;
use probegate::engine::{self, NoConfigMaps, ParseCache, Workload};
use probegate::policy::{Action, Policy};
use serde_json::{Value, json};

/// A script of `lines` heavy lines (each about 300 of parse weight) that reach no dependency.
fn heavy_filler(tag: usize, lines: usize) -> String {
    (0..lines).map(|l| format!("echo {} && test -d /tmp/f{tag}-{l}\n", "a b ".repeat(70))).collect()
}

/// The evaluation as text (findings, patches, notes), cold or through `cache`.
fn evaluation(w: &Workload, cache: Option<&mut ParseCache>) -> String {
    let policy = Policy::default();
    match cache {
        None => format!("{:?}", engine::evaluate_with(&policy.rules, w, &policy.exemptions.containers)),
        Some(cache) => format!(
            "{:?}",
            engine::evaluate_cached(
                &policy.rules,
                w,
                &policy.exemptions.containers,
                &NoConfigMaps,
                "",
                cache
            )
        ),
    }
}

/// `parse_cache.rs:246` (`ObjectParses::new_owner`'s `+=` made `*=`: every budget of an object
/// owner 0). The liveness analyses of earlier containers spend most of the object's parse
/// allowance, so the last container's liveness parse of its script is cut short; its readiness
/// probe runs the same script on a budget of its own and must read it whole (a parse another
/// budget's allowance cut short is not its own), finding the `redis-cli` check on its last line.
/// Cold and warm alike, and the same either way.
#[test]
fn a_parse_cut_short_by_the_liveness_allowance_is_not_the_readiness_analysis_s() {
    let script = format!("{}redis-cli -h redis-master.shop.svc ping\n", heavy_filler(99, 8));
    let mut containers: Vec<Value> = (0..7)
        .map(|i| {
            json!({"name": format!("c{i}"), "image": "app:1",
                "livenessProbe": {"exec": {"command": ["sh", "-c", heavy_filler(i, 10)]}}})
        })
        .collect();
    containers.push(json!({"name": "last", "image": "app:1",
        "readinessProbe": {"exec": {"command": ["sh", "-c", script]}},
        "livenessProbe": {"exec": {"command": ["sh", "-c", script]}}}));
    let pod = workload(&json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "namespace": "shop"}, "spec": {"containers": containers}}));
    let cold = evaluation(&pod, None);
    // The liveness analysis was cut short (a note), and did not find the check on the last line.
    assert!(cold.contains("over what probegate parses"), "{cold}");
    assert!(!cold.contains("livenessProbe `redis-cli"), "{cold}");
    // The readiness analysis read the whole script.
    assert!(cold.contains("readinessProbe reaches redis-master.shop.svc (via redis-cli)"), "{cold}");
    let mut cache = ParseCache::new();
    assert_eq!(evaluation(&pod, Some(&mut cache)), cold);
    assert_eq!(evaluation(&pod, Some(&mut cache)), cold, "a second, warm, evaluation");
    // The same script alone: its liveness analysis reads it whole.
    let alone = workload(&json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "namespace": "shop"}, "spec": {"containers": [{"name": "last",
        "image": "app:1", "livenessProbe": {"exec": {"command": ["sh", "-c", script]}}}]}}));
    assert!(evaluation(&alone, None).contains("livenessProbe `redis-cli"));
}

const FAIL: &str = r#"fail() { echo "F $*" >&2; exit 1; }"#;
const WARN: &str = r#"warn() { echo "WARN $*" >&2; }"#;

/// `flow/reach.rs:87` (only `trap` commands' words count as calls of a function wherever they
/// are; the mutant counted every command's) and a false denial next to it: a function name given
/// as an argument (`echo fail`, `warn "fail"`) runs nothing, so `fail`'s `exit 1` keeps no call of
/// another function from being judged where it is. Called, or run by a function that runs its
/// arguments (`"$@"`), or named by a trap, it still counts.
#[test]
fn a_function_name_given_as_an_argument_is_no_call() {
    let warned = [
        // bash 0 / 0, dash 0 / 0: `fail` only printed, at the top level (warned on main 0dae461
        // too; denied by the mutant).
        format!(
            r#"{FAIL}; {WARN}; echo fail; soft() {{ pg_isready -h orders-db || warn ignored; }}; soft; echo ok"#
        ),
        format!(
            r#"{FAIL}; {WARN}; warn "fail is defined"; soft() {{ pg_isready -h orders-db || warn x; }}; soft; echo ok"#
        ),
        // 0 / 0: `fail` an argument of `warn` in the body called (DENIED on main 0dae461).
        format!(r#"{FAIL}; {WARN}; soft() {{ pg_isready -h orders-db || warn "fail"; }}; soft; echo ok"#),
        format!(r#"{FAIL}; {WARN}; soft() {{ pg_isready -h orders-db || echo fail >&2; }}; soft; echo ok"#),
        // 0 / 0: a trap names `fail`, for a signal no one sends (warned on main too).
        format!(
            r#"{FAIL}; {WARN}; trap fail INT; soft() {{ pg_isready -h orders-db || warn x; }}; soft; echo ok"#
        ),
    ];
    let denied = [
        // 0 / 1 in bash and dash: `fail` called in the body.
        format!(r#"{FAIL}; {WARN}; soft() {{ pg_isready -h orders-db || fail "db"; }}; soft; echo ok"#),
        // 0 / 1: called in a command substitution, and in backquotes.
        format!(r#"{FAIL}; soft() {{ pg_isready -h orders-db || x=$(fail db); }}; soft; echo ok"#),
        // 0 / 1: `run` runs its arguments (`"$@"`), and `soft` passes it `fail`.
        format!(
            r#"{FAIL}; run() {{ "$@"; }}; soft() {{ pg_isready -h orders-db || run fail db; }}; soft; echo ok"#
        ),
        // 0 / 1: after a redirection, and after an assignment.
        format!(r#"{FAIL}; soft() {{ pg_isready -h orders-db || 2>/dev/null fail db; }}; soft; echo ok"#),
        format!(r#"{FAIL}; soft() {{ pg_isready -h orders-db || X=1 fail db; }}; soft; echo ok"#),
    ];
    let warned: Vec<&str> = warned.iter().map(String::as_str).collect();
    let denied: Vec<&str> = denied.iter().map(String::as_str).collect();
    expect_actions(&warned, &denied);
}

/// The liveness-dependency finding's action and message for `sh -c script` and `bash -c script`.
fn findings(script: &str) -> Vec<(Action, String)> {
    ["sh", "bash"]
        .iter()
        .map(|shell| finding_of(&[shell, "-c", script]).unwrap_or_else(|| panic!("no finding: {script}")))
        .collect()
}

const INVERTED: &str = "fails while redis-master is up (its `&&` list exits non-zero when it succeeds)";

/// `status/inverted_list.rs:82` (`or &&` made `or ||`: any `C && exit 1 || X` read as inverted)
/// and the right message for `C && exit 1 || L`, L a check of the container: 1 / 0 in bash and
/// dash while the container is healthy (1 / 1 while it is not): the probe fails whenever redis is
/// UP. Denied on main 0dae461 too, but as "its outage would restart", which is false: now the
/// inverted list's message. A right side that certainly fails (`false`, a function that exits 1),
/// or a later `false`, fails the script in an outage too (1 / 1): never said to pass there.
#[test]
fn a_check_of_the_container_right_of_an_inverted_list_keeps_it_inverted() {
    let inverted = [
        // bash 1 / 0, dash 1 / 0 (with `test -d /`; `curl` stands for a local check here, run
        // as `test -d /`: no server listens on this machine).
        "redis-cli -h redis-master ping && exit 1 || test -d /",
        "redis-cli -h redis-master ping && exit 1 || curl -f localhost:8080/live",
        "redis-cli -h redis-master ping && exit 1 || [ -d / ]",
        "redis-cli -h redis-master ping && exit 1 || test -d /; echo ok",
        // 1 / 0: a function of another name defined (`may_pass` refuses only the script's own
        // functions on the right).
        r#"log() { echo "$*"; }; redis-cli -h redis-master ping && exit 1 || test -d /"#,
        // 1 / 0 (inverted on main too).
        "redis-cli -h redis-master ping && exit 1 || exit 0",
    ];
    for script in inverted {
        for (action, message) in findings(script) {
            assert!(action == Action::Deny && message.contains(INVERTED), "{script}: {message}");
        }
    }
    let not_inverted = [
        // bash 1 / 1, dash 1 / 1: each fails with redis down too.
        "redis-cli -h redis-master ping && exit 1 || false",
        "redis-cli -h redis-master ping && exit 1 && echo ok",
        "redis-cli -h redis-master ping && exit 1 && exit 0",
        "redis-cli -h redis-master ping && exit 1 || test -d /; false",
        "fail() { exit 1; }; redis-cli -h redis-master ping && exit 1 || fail",
        "redis-cli -h redis-master ping && exit 1 || exit 1",
    ];
    // (Several of these are still DENIED, as on main 0dae461: 1 / 1 is no coupling, an open
    // false denial not pinned here; only the claim that they pass in an outage is refused.)
    for script in not_inverted {
        for (_, message) in findings(script) {
            assert!(!message.contains("fails while"), "{script}: {message}");
        }
    }
}

/// `status/unread.rs:98` (`plain_assignment`'s word split, `||` made `&&`: no word of an
/// assignment's value is the variable's name). The test it made, "the value names the variable",
/// refused what every mention already judges: `every_mention` asks of each mention in the value
/// (`RES=${RES}x`: an expansion that is no command's argument, refused there), and counts a name
/// in text the tree does not show. What only the word test refused was a mention every other
/// rule takes as no read: an argument a function ignores (`log() { :; }`). Those rows were DENIED
/// at 0 / 0 (bash 5.2, dash 0.5.12); the test is gone, and the mutant with it.
#[test]
fn a_value_that_names_its_variable_only_where_it_is_not_read_reads_nothing() {
    let warned = [
        // bash 0 / 0, dash 0 / 0 (DENIED on main 0dae461; `RES=$(C) || RES=$(log "$RES"); test
        // -d /`, 0 / 0 too, is still denied: another rule refuses it, an open item).
        r#"log() { :; }; redis-cli -h redis-master ping; rc=$?; rc=$(log "$rc"); echo "$rc"; test -d /"#,
        r#"log() { :; }; redis-cli -h redis-master ping; rc=$?; rc=$(log rc "$rc"); echo "$rc"; test -d /"#,
    ];
    let denied = [
        // 0 / 1: the value is tested.
        r#"RES=$(redis-cli -h redis-master ping) || RES="${RES}down"; [ "$RES" != down ]"#,
        // 0 / 1: the status saved is read by `exit`, through an assignment that names it.
        r#"redis-cli -h redis-master ping; rc=$?; rc=$((rc + 0)); exit $rc"#,
        r#"redis-cli -h redis-master ping; rc=$?; rc="${rc}"; exit $rc"#,
    ];
    expect_actions(&warned, &denied);
}

/// Part of a check's output redirected to a file the script reads again (s26): the replay of
/// the status (`status/replay.rs`) followed `$?` only, so `C > /tmp/o.txt; rc=$?; if [ $rc -ne 0
/// ]; then echo down; fi; grep -q role /tmp/o.txt` (0 / 1 in bash 5.2 and dash 0.5.12 with
/// `redis-cli` printing `role:master` up and nothing down) was warned as "cannot fail". The walk
/// decides such a script now; a file never read again, or an outage that exits 0 before the file
/// is read, stays a warning.
#[test]
fn a_check_whose_output_file_is_read_later_is_not_only_status_tested() {
    let c = "redis-cli -h redis-master info replication";
    let denied = [
        // 0 / 1 each (up: `role:master` in /tmp/o.txt).
        format!("{c} > /tmp/o.txt; rc=$?; if [ $rc -ne 0 ]; then echo down; fi; grep -q role /tmp/o.txt"),
        format!("{c} > /tmp/o.txt; if [ $? -ne 0 ]; then echo down; fi; grep -q role /tmp/o.txt"),
        format!("{c} >/tmp/o.txt 2>&1; rc=$?; [ $rc -eq 0 ] || echo down; grep -q role /tmp/o.txt"),
    ];
    let warned = [
        // 0 / 0 each: the file is never read, or nothing is.
        format!("{c} > /tmp/o.txt; rc=$?; if [ $rc -ne 0 ]; then echo down; fi; test -d /"),
        format!("{c} > /dev/null; rc=$?; if [ $rc -ne 0 ]; then echo down; fi; test -d /"),
        // 0 / 0: an outage exits 0 before the file is read.
        format!("{c} > /tmp/o.txt; [ $? -ne 0 ] && exit 0; grep -q role /tmp/o.txt"),
        // 0 / 0: read, but the script then exits 0.
        format!(
            "{c} > /tmp/o.txt; rc=$?; if [ $rc -ne 0 ]; then echo down; fi; grep -q role /tmp/o.txt; exit 0"
        ),
    ];
    let warned: Vec<&str> = warned.iter().map(String::as_str).collect();
    let denied: Vec<&str> = denied.iter().map(String::as_str).collect();
    expect_actions(&warned, &denied);
}

const INVERTED_OR: &str =
    "fails while redis-master is up (the script after its `|| exit 0` exits non-zero when it succeeds)";

/// `C || exit 0; exit 1` fails whenever the dependency is UP and passes while it is down, as `C
/// && exit 1 || exit 0` (denied as inverted since s25) does: it was warned as "cannot fail the
/// probe" (s26). Denied with its own message now; 0 / 0 and 0 / 1 shapes next to it keep theirs.
#[test]
fn an_or_exit_zero_before_a_failing_end_is_inverted() {
    let inverted = [
        // bash 1 / 0, dash 1 / 0 each.
        "redis-cli -h redis-master ping || exit 0; exit 1",
        "redis-cli -h redis-master ping || exit 0; echo down; exit 1",
        "redis-cli -h redis-master ping || { echo down; exit 0; }; exit 1",
        "redis-cli -h redis-master ping || exit 0; false",
    ];
    for script in inverted {
        for (action, message) in findings(script) {
            assert!(action == Action::Deny && message.contains(INVERTED_OR), "{script}: {message}");
        }
    }
    // 0 / 0 each: warned, as before.
    let warned = [
        "redis-cli -h redis-master ping || exit 0; exit 0",
        "redis-cli -h redis-master ping || exit 0; echo ok",
        "redis-cli -h redis-master ping || exit 0; test -d /",
    ];
    // 0 / 1: the outage fails it (its usual message).
    let denied = ["redis-cli -h redis-master ping || exit 1; exit 0"];
    expect_actions(&warned, &denied);
    for script in warned.iter().chain(&denied) {
        for (_, message) in findings(script) {
            assert!(!message.contains("fails while"), "{script}: {message}");
        }
    }
    // 1 / 1: fails either way (`|| true`), and a check in the background: never inverted. 0 /
    // 0: an EXIT trap that exits 0, and `exit 256` (0 modulo 256).
    for script in [
        "redis-cli -h redis-master ping || true; exit 1",
        "redis-cli -h redis-master ping || exit 0 & exit 1",
        "trap 'exit 0' EXIT; redis-cli -h redis-master ping || exit 0; exit 1",
        "redis-cli -h redis-master ping || exit 0; exit 256",
    ] {
        for (_, message) in findings(script) {
            assert!(!message.contains("fails while"), "{script}: {message}");
        }
    }
}
