//! Session 26, a new user's false denials (s26-fdc): loops whose body leaves with status 0 when
//! the check fails, `exit` with a constant arithmetic status, a check's output that only a test
//! compares (the test's failure only writes), and `|| expr 1`. Every row was run in bash 5.2.15
//! and dash 0.5.12 with stub clients on PATH (`/tmp/emstub/run.sh`: `redis-cli` exits 0 up and 1
//! down, `pg_isready` 0 up and 2 down); each row's statuses, up / down, are in its comment, the
//! same in both shells ("0 / 0" or "1 / 1" is not coupled: never a denial; "0 / 1" is). Every
//! warned row was denied on main 93f2201; every denied row was denied there too.

mod common;
use common::flow::*;

const R: &str = "redis-cli -h redis-master.shop.svc ping";
const P: &str = "pg_isready -h orders-db";

/// Each script with `R` and `P` put in.
fn rows(scripts: &[&str]) -> Vec<String> {
    scripts.iter().map(|s| s.replace("{R}", R).replace("{P}", P)).collect()
}

/// [`expect_actions`] on [`rows`].
#[track_caller]
fn expect(warned: &[&str], denied: &[&str]) {
    let (warned, denied) = (rows(warned), rows(denied));
    let warned: Vec<&str> = warned.iter().map(String::as_str).collect();
    let denied: Vec<&str> = denied.iter().map(String::as_str).collect();
    expect_actions(&warned, &denied);
}

/// `until C; do exit 0; done` (and `while ! C`, a function's `return 0`, a counted retry ending
/// in `exit 0`): the check's failure ends the script, or the function, with 0, its success ends
/// the loop with 0. `exit 1` there is coupled, and a script that fails after the loop fails while
/// the dependency is up (inverted: denied, as its `if` form is).
#[test]
fn a_loop_whose_body_leaves_with_zero_is_not_coupled() {
    expect(
        &[
            // 0 / 0
            "until {R}; do exit 0; done",
            // 0 / 0
            "while ! {R}; do exit 0; done; exit 0",
            // 0 / 0
            "f() { until {R}; do return 0; done; }; f",
            // 0 / 0
            "until {R}; do exit 0; done; test -d /",
            // 0 / 0
            "until {R}; do echo down; exit 0; done",
            // 0 / 0
            "until {R}; do { echo down; exit 0; }; done",
            // 0 / 0
            "until {R}; do sleep 1; exit 0; done",
            // 0 / 0 (after three rounds)
            "n=0; until {P} -q; do n=$((n+1)); [ \"$n\" -ge 3 ] && { echo ignoring; exit 0; }; sleep 1; done",
            // 0 / 0 (after three rounds)
            "n=0; until {P} -q; do n=$((n+1)); if [ \"$n\" -ge 3 ]; then echo ignoring; exit 0; fi; sleep 1; done",
        ],
        &[
            // 0 / 1
            "until {R}; do exit 1; done",
            // 0 / 1
            "while ! {R}; do exit 1; done; exit 0",
            // 1 / 0: fails while redis is up
            "until {R}; do exit 0; done; exit 1",
            // 0 / 1
            "f() { until {R}; do return 1; done; }; f",
            // 0 / 124: the subshell's `exit 0` only ends the round; the loop waits on redis
            "until {R}; do ( exit 0 ); done",
            // 0 / 1 (after three rounds)
            "n=0; until {P} -q; do n=$((n+1)); [ \"$n\" -ge 3 ] && { echo giving up; exit 1; }; sleep 1; done",
        ],
    );
}

/// `exit $((0))`: a constant arithmetic expansion is a constant status, read as the number it
/// gives (`$((1))` is `exit 1`: the probe fails every time, a warning that says so).
#[test]
fn a_constant_arithmetic_exit_status_is_a_constant() {
    expect(
        &[
            // 0 / 0
            "{R}; exit $((0))",
            // 0 / 0
            "{R}; exit $(( 0 ))",
            // 0 / 0
            "{R}; exit \"$((0))\"",
            // 0 / 0
            "{R} || exit $((0))",
            // 0 / 0
            "{P}; exit $((1-1))",
            // 0 / 0 (256 is 0 in both shells)
            "{R}; exit $((256))",
            // 0 / 0
            "f() { {R} || return $((0)); echo ok; }; f",
            // 1 / 1: fails every time
            "{R}; exit $((1))",
            // 1 / 1
            "{R}; exit $((1-1+1))",
        ],
        &[
            // 0 / 1
            "{R} || exit $((1))",
            // 0 / 1
            "{R} || exit \"$(( 2 - 1 ))\"",
            // 0 / 1
            "{R} && exit $((0))",
            // 0 / 1: a variable in the expression is not a constant (judged as before)
            "rc=1; {R} || exit $((rc))",
        ],
    );
}

/// The check's output compared by a test whose result cannot fail the script: its failure only
/// writes (`|| echo bad`), a later command's status replaces it, or it only chooses between
/// branches that write. (Statuses with a `redis-cli` stub that prints `PONG` up, nothing down.)
/// A test that is last, or followed by `|| exit 1`, or a value read by another test, is coupled.
#[test]
fn an_output_test_whose_result_is_lost_is_not_coupled() {
    expect(
        &[
            // 0 / 0
            "[ \"$({R})\" = PONG ] || echo bad",
            // 0 / 0
            "out=$({R}); [ \"$out\" = PONG ] || echo \"unexpected: $out\"",
            // 0 / 0
            "[ \"$({R})\" = PONG ]; test -d /",
            // 0 / 0
            "test \"$({R})\" = PONG || echo bad",
            // 0 / 0
            "if [ \"$({R})\" = PONG ]; then echo ok; else echo bad; fi",
            // 0 / 0
            "out=$({R}); if [ \"$out\" != PONG ]; then echo \"unexpected: $out\"; fi; exit 0",
        ],
        &[
            // 0 / 1
            "[ \"$({R})\" = PONG ]",
            // 0 / 1
            "[ \"$({R})\" = PONG ] || exit 1",
            // 0 / 1
            "[ \"$({R})\" != PONG ] && exit 1; exit 0",
            // 0 / 1
            "out=$({R}); [ \"$out\" = PONG ] || exit 1",
            // 0 / 1
            "out=$({R}); [ \"$out\" = PONG ]",
            // 0 / 1: the value read again by a last test
            "out=$({R}); [ \"$out\" = PONG ] || echo bad; [ -n \"$out\" ]",
            // 0 / 1 (from a clean /tmp): the failure leaves a file a later test reads
            "[ \"$({R})\" = PONG ] || touch /tmp/down; [ ! -f /tmp/down ]",
        ],
    );
}

/// `|| expr 1`: `expr` of constants whose value is not 0 exits 0, as `true` does. `expr 0`, `expr
/// 1 - 1` (status 1) and `expr 1 / 0` (2) fail by themselves.
#[test]
fn a_true_constant_expr_after_or_is_not_coupled() {
    expect(
        &[
            // 0 / 0
            "{R} || expr 1 > /dev/null",
            // 0 / 0
            "{R} || expr 2 + 3 > /dev/null",
        ],
        &[
            // 0 / 1
            "{R} || expr 0 > /dev/null",
            // 0 / 1
            "{R} || expr 1 - 1 > /dev/null",
            // 0 / 2
            "{R} || expr 1 / 0 > /dev/null",
        ],
    );
}
