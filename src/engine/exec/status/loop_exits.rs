//! A loop the check's failure keeps going (`until CHECK`, `while ! CHECK`) whose body leaves with
//! status 0 (s26, a new user's false denials): `until C; do exit 0; done`, `while ! C; do echo
//! down; exit 0; done; exit 0`, `f() { until C; do return 0; done; }; f`, and the counted retry
//! `n=0; until C; do n=$((n+1)); [ "$n" -ge 3 ] && { echo ignoring; exit 0; }; sleep 1; done` exit
//! 0 / 0 in bash 5.2 and dash 0.5.12 with a stub client up / down, and were denied: only `break`
//! was read as ending such a loop (`constructs::loop_condition`, `lost::bounded_retry`).
//!
//! The check's success ends the loop before its body (status 0: POSIX 2.9.4, "The until Loop",
//! "zero if none was executed"); its failure runs the body, whose `exit 0` ends the script with 0
//! as `C || exit 0` does, and whose `return 0` returns 0 from the function as `C || return 0`
//! does (`zero::ends_harmlessly`: what the `return` skips changes nothing). Taken where:
//! - `exit 0` runs in the script's own shell (`outage::in_script_shell`: no function's body, no
//!   subshell, pipeline or background around the loop), and what runs after the loop when the
//!   check succeeds does not certainly fail: a last `exit N` (N not 0) or `false` after harmless
//!   commands would fail the probe while the dependency is up and pass while it is down, an
//!   inverted check (`until C; do exit 0; done; exit 1`, 1 / 0) that stays denied, as its `if`
//!   form is (`outage::INVERTED_IF`);
//! - `return 0` ends a called function's body ([`super::zero::ends_harmlessly`]).
//!
//! `exit 1` there is coupled (`until C; do exit 1; done`: 0 / 1) and stays denied.
//!
//! s27, the same loops the other way round and in a pipeline:
//! - `while C; do exit 0; done` (and `until ! C`): the check's success runs the body, which
//!   leaves with status 0 at once, and its failure ends the loop with status 0 (POSIX 2.9.4):
//!   0 / 0 in bash 5.2.15 and dash 0.5.12, denied before; taken under the same conditions
//!   ([`leaves_zero`]: `while C; do exit 0; done; exit 1` is 0 / 1, coupled, and stays denied);
//! - a loop that is an element of a pipeline but the last ([`piped_loop_ends_at_once`]): it runs
//!   in a subshell of its own (bash manual, "Pipelines"), so an `exit N` in its body ends only
//!   that element, as `break` would, and the pipeline's status is its last command's (without
//!   pipefail). When the body's first round leaves at once, the loop never waits on the
//!   dependency, and the walk goes on from the pipeline, judging the loop's output where it goes:
//!   `until C; do echo down; exit 0; done | cat` exits 0 / 0 in bash 5.2.15 and dash 0.5.12
//!   (denied before), while `... | grep -q down` (1 / 0) stays coupled.

use crate::engine::exec::kinds::KindName;
use tree_sitter::Node;

use super::super::flow::mentions;
use super::super::shell::Walk;
use super::functions::Funcs;
use super::harmless::{harmless, harmless_text, plain_commands, reads_status_text};
use super::zero::{Ending, ending, ends_harmlessly};
use super::{Rules, is_statement, text};

/// A reason the walk gives (`discarded`).
pub(super) const LOOP_LEAVES_ZERO: &str = "its failure only runs its loop's body, which ends with status 0 (`exit 0`, or `return 0` from its function) at most writing output first, as its success ends the loop with status 0";

/// A reason the walk gives (`discarded`): `while C; do exit 0; done` (module docs, s27).
pub(super) const LOOP_SUCCESS_LEAVES_ZERO: &str = "its success only runs its loop's body, which ends with status 0 (`exit 0`, or `return 0` from its function) at most writing output first, as its failure ends the loop with status 0";

/// Whether `looped`, a `while`/`until` loop whose condition ends with the check `at`, is an element of a
/// pipeline but the last, and its body's first round runs only statements that change nothing
/// (`quiet`) and then `break` or `exit N` (a literal N, any): the loop ends on its first round
/// whatever the check gives, in the element's own subshell (module docs, s27). The caller goes on
/// from the loop as a pipeline element whose status is lost.
pub(super) fn piped_loop_ends_at_once(
    at: Node<'_>,
    looped: Node<'_>,
    walk: &Walk<'_>,
    quiet: &dyn Fn(Node<'_>) -> bool,
) -> bool {
    let Some(pipeline) = looped.parent().filter(|p| p.kind_name() == "pipeline") else {
        return false;
    };
    let mut c = pipeline.walk();
    if pipeline.named_children(&mut c).filter(|k| is_statement(*k)).last() == Some(looped) {
        return false;
    }
    let mut c = looped.walk();
    let Some(body) = looped.named_children(&mut c).find(|k| k.kind_name() == "do_group") else {
        return false;
    };
    // (The check is the condition's last statement.)
    if at.start_byte() >= body.start_byte()
        || super::siblings_after(at, looped).take_while(|s| *s != body).any(is_statement)
    {
        return false;
    }
    let mut c = body.walk();
    let statements: Vec<Node<'_>> = body.named_children(&mut c).filter(|k| is_statement(*k)).collect();
    let leaves = |k: Node<'_>| {
        let words: Vec<&str> = text(k, walk).split_whitespace().collect();
        k.kind_name() == "command"
            && match words.as_slice() {
                ["break"] | ["break", "1"] => true,
                ["exit", n] => super::literal_status(n).is_some(),
                _ => false,
            }
    };
    statements.iter().position(|k| leaves(*k)).is_some_and(|i| statements[..i].iter().all(|k| quiet(*k)))
}

/// Whether `k`, a statement of the body of `looped` (a `while`/`until` loop), ends the script
/// with `exit 0` or its function with `return 0` (alone, or last in a `{ }` after commands that
/// only write output: [`ending`]) where that cannot fail the probe (module docs).
pub(super) fn leaves_zero(
    k: Node<'_>,
    looped: Node<'_>,
    walk: &Walk<'_>,
    rules: &Rules,
    funcs: &Funcs,
) -> bool {
    match ending(k, walk, funcs) {
        Some(Ending::Exits) => {
            !rules.in_function
                && !rules.called
                && super::outage::in_script_shell(looped, rules)
                && !fails_after(looped, walk, funcs)
        }
        Some(Ending::Returns) => ends_harmlessly(&[Ending::Returns], looped, walk, rules, funcs),
        _ => false,
    }
}

/// Whether the body of `looped` runs, on its first round, only statements that cannot fail or
/// change anything (`quiet`) and then one that [`leaves_zero`]: the check's failure ends the
/// script (or function) with status 0 at once.
pub(super) fn body_leaves_zero(
    looped: Node<'_>,
    walk: &Walk<'_>,
    rules: &Rules,
    funcs: &Funcs,
    quiet: &dyn Fn(Node<'_>) -> bool,
) -> bool {
    let mut c = looped.walk();
    let Some(body) = looped.named_children(&mut c).find(|k| k.kind_name() == "do_group") else {
        return false;
    };
    let mut c = body.walk();
    let statements: Vec<Node<'_>> = body.named_children(&mut c).filter(|k| is_statement(*k)).collect();
    statements
        .iter()
        .position(|k| leaves_zero(*k, looped, walk, rules, funcs))
        .is_some_and(|at| statements[..at].iter().all(|k| quiet(*k)))
}

/// Whether what runs after `looped` (a statement of the script's top level) certainly fails: its
/// statements are harmless but the last, which is `exit N` (a literal N that is not 0 modulo 256)
/// or `false`. (`exit $?` there reads the loop's status, 0.) `true` too when `looped` is not at the top level (not followed here).
fn fails_after(looped: Node<'_>, walk: &Walk<'_>, funcs: &Funcs) -> bool {
    let Some(program) = looped.parent().filter(|p| p.kind_name() == "program") else {
        return true;
    };
    let after: Vec<Node<'_>> = super::siblings_after(looped, program).filter(|k| is_statement(*k)).collect();
    let Some((last, before)) = after.split_last() else {
        return false;
    };
    let words: Vec<&str> = text(*last, walk).split_whitespace().collect();
    let fails = last.kind_name() == "command"
        && match words.as_slice() {
            ["exit", n] => super::literal_status(n).is_some_and(|s| s != 0),
            ["false"] => true,
            _ => false,
        };
    fails && before.iter().all(|k| harmless(*k, walk, funcs))
}

/// Whether `looped` (a `while`/`until` loop whose condition ends with `at`) is a pipeline element
/// but the last whose body leaves on its first round ([`piped_loop_ends_at_once`]), with the
/// statements before the leaving one read as `constructs::loop_condition` reads a quiet body. The
/// walk (`status::discarded_at`) then goes on from the loop as a pipeline element, where
/// `loop_condition` found no reason (s27: `until C; do exit 0; done | cat`).
pub(super) fn piped_loop_ends(at: Node<'_>, looped: Node<'_>, walk: &Walk<'_>, funcs: &Funcs) -> bool {
    let mut ok = funcs.ok.to_vec();
    ok.push("sleep".to_string());
    let quiet = |k: Node<'_>| {
        harmless_text(text(k, walk), &funcs.risky)
            && plain_commands(k, walk, k.start_byte(), &ok)
            && !mentions(text(k, walk), &["exit", "return"])
    };
    !reads_status_text(text(looped, walk)) && piped_loop_ends_at_once(at, looped, walk, &quiet)
}
