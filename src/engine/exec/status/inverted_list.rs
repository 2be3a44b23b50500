//! A check inverted by an `&&` list (s25, deny24's list): `C && exit 1 || exit 0` exits 1 with
//! the dependency up and 0 with it down in bash 5.2 and dash 0.5.12. The probe fails while the
//! dependency is HEALTHY and passes while it is down: still decided by the dependency alone, so
//! denied, but its message must say so (it said "its outage would restart", which is false),
//! as for `! C` last and the inverted `if` (`outage::INVERTED_IF`, docs/rules.md).

use crate::engine::exec::kinds::KindName;
use tree_sitter::Node;

use super::super::flow::mentions;
use super::super::shell::Walk;
use super::functions::Funcs;
use super::harmless::harmless;
use super::tree::leaves;
use super::{Rules, is_statement, siblings_after, text};

/// A reason the walk gives (`discarded`), read as no reason: the check is coupled, inverted
/// (`exec::Dependency::inverted_list`).
pub(in crate::engine::exec) const INVERTED_LIST: &str =
    "its `&&` list exits non-zero when it succeeds and 0 when it fails";

/// A reason the walk gives (`discarded`), read as no reason: the check is coupled, inverted
/// (`exec::ListInversion::OrExitZero`).
pub(in crate::engine::exec) const INVERTED_OR: &str =
    "its `|| exit 0` is followed by a non-zero end: it exits non-zero when it succeeds and 0 when it fails";

/// Whether the `&&`/`||` list `list` runs where an inversion can be told: in the script's own
/// top level (not a function body, not a called function), in the foreground, in a script with no
/// `trap` (an EXIT trap may set the status).
fn foreground_top_level(list: Node<'_>, walk: &Walk<'_>, rules: &Rules) -> bool {
    !(rules.in_function
        || rules.called
        || mentions(walk.src, &["trap"])
        || list.next_sibling().is_some_and(|s| s.kind_name() == "&"))
}

/// Whether the `||` list `list` (the check left of `right`) is a top-level statement of the
/// probe's own script (no function body, no caller, no `trap`, not in the background) whose
/// right side exits 0 (`exit 0`, or a `{ }` of harmless statements ending with it:
/// `zero::ending`), followed by harmless statements the last of which certainly exits non-zero
/// (`exit N`, N not 0 modulo 256, or `false`): the script fails when the check succeeds and
/// passes when it fails, as `C && exit 1 || exit 0` does (s26: `redis-cli -h cache ping || exit
/// 0; exit 1` exits 1 / 0 in bash 5.2 and dash 0.5.12, and was warned as "cannot fail").
pub(super) fn inverted_or(
    list: Node<'_>,
    right: Node<'_>,
    walk: &Walk<'_>,
    rules: &Rules,
    funcs: &Funcs,
) -> bool {
    if !foreground_top_level(list, walk, rules)
        || super::zero::ending(right, walk, funcs) != Some(super::zero::Ending::Exits)
    {
        return false;
    }
    let Some(program) = list.parent().filter(|p| p.kind_name() == "program") else {
        return false;
    };
    let after: Vec<Node<'_>> = siblings_after(list, program).filter(|k| is_statement(*k)).collect();
    after.split_last().is_some_and(|(last, before)| {
        (exits_nonzero(*last, walk, funcs) || text(*last, walk) == "false")
            && before.iter().all(|k| harmless(*k, walk, funcs) && !leaves(*k, walk))
    })
}

/// Whether `n` certainly ends the shell with a status that is not 0: `exit N` (a literal, N not
/// 0 modulo 256), or a `{ }` group of [`harmless`] statements that ends with one.
fn exits_nonzero(n: Node<'_>, walk: &Walk<'_>, funcs: &Funcs) -> bool {
    match n.kind_name() {
        "command" => matches!(
            text(n, walk).split_whitespace().collect::<Vec<_>>().as_slice(),
            ["exit", s] if super::traps::literal_status(s).is_some_and(|s| s != 0)
        ),
        "compound_statement" => {
            let mut c = n.walk();
            let statements: Vec<Node<'_>> = n.named_children(&mut c).filter(|k| is_statement(*k)).collect();
            statements.split_last().is_some_and(|(last, before)| {
                exits_nonzero(*last, walk, funcs)
                    && before.iter().all(|k| harmless(*k, walk, funcs) && !leaves(*k, walk))
            })
        }
        _ => false,
    }
}

/// Whether `n` exits 0 or certainly ends with status 0: `exit 0`, `true`, `:`, or an `echo` with
/// no redirection, substitution or expansion that could fail.
fn ends_zero(n: Node<'_>, walk: &Walk<'_>) -> bool {
    let t = text(n, walk);
    n.kind_name() == "command"
        && (t.split_whitespace().eq(["exit", "0"])
            || matches!(t, "true" | ":")
            || (t == "echo" || t.starts_with("echo "))
                && !t.contains(['>', '<', '|', '&', '`', '$', '(', ')']))
}

/// Whether `n` is a simple command (or `[ ]` test) that may exit 0 and runs nothing of the script:
/// no function of it, no builtin that ends, jumps or changes the shell (`exit`, `return`, `exec`,
/// `kill`, `break`, `eval`, ...), not `false`, no redirection. A check of the container itself
/// (`test -d /`, `curl -f localhost:8080/live`) right of `C && exit 1 ||`: the script fails while
/// the dependency is up, and in an outage exits as that check does, 0 while the container is
/// healthy (s26: `redis-cli -h cache ping && exit 1 || test -d /` exits 1 / 0 in bash 5.2 and
/// dash 0.5.12, and was denied with "its outage would restart").
fn may_pass(n: Node<'_>, walk: &Walk<'_>, funcs: &Funcs) -> bool {
    if n.kind_name() == "test_command" {
        return true;
    }
    let Some(name) = n.child_by_field("name").filter(|_| n.kind_name() == "command").map(|m| text(m, walk))
    else {
        return false;
    };
    let defined = walk.defined_functions.get_or_init(|| super::texts::defined_functions(walk.src));
    !matches!(
        name,
        "exit"
            | "return"
            | "false"
            | "exec"
            | "kill"
            | "break"
            | "continue"
            | "eval"
            | "source"
            | "."
            | "trap"
            | "set"
            | "shift"
            | "wait"
            | "logout"
            | "suspend"
            | "!"
    ) && !name.contains(['$', '`', '='])
        && !funcs.risky.iter().chain(funcs.ok.iter()).any(|f| f == name)
        && !defined.iter().any(|f| f == name)
}

/// Whether the `&&` list `list`, whose left side is the check and whose right side `right`
/// certainly exits non-zero ([`exits_nonzero`]), is a statement of the probe's own script (no
/// function body, subshell, pipeline, background) that exits 0 when the check fails: the left
/// side of `|| exit 0` (or `||` a `{ }` of harmless output ending with `exit 0`) at the script's
/// top level, or a top-level statement followed by harmless statements the last of which ends
/// with 0 ([`ends_zero`]). In a script with no `trap` (an EXIT trap may set the status).
pub(super) fn inverted_list(
    list: Node<'_>,
    right: Node<'_>,
    walk: &Walk<'_>,
    rules: &Rules,
    funcs: &Funcs,
) -> bool {
    if !foreground_top_level(list, walk, rules) || !exits_nonzero(right, walk, funcs) {
        return false;
    }
    let Some(parent) = list.parent() else { return false };
    match parent.kind_name() {
        "list" => {
            let or = parent.child(1).is_some_and(|op| op.kind_name() == "||");
            let else_side = parent.named_child(parent.named_child_count().saturating_sub(1));
            let Some(program) = parent.parent().filter(|p| p.kind_name() == "program") else {
                return false;
            };
            or && parent.named_child(0) == Some(list)
                && parent.next_sibling().is_none_or(|s| s.kind_name() != "&")
                && else_side.is_some_and(|e| {
                    ends_zero(e, walk) && text(e, walk).starts_with("exit")
                        || super::zero::ending(e, walk, funcs) == Some(super::zero::Ending::Exits)
                        // (`|| echo down` last, or before harmless statements that end with 0.)
                        || ends_zero(e, walk) && zero_after(parent, program, walk, funcs, true)
                        // (`|| test -d /`, a check of the container, s26.)
                        || may_pass(e, walk, funcs) && zero_after(parent, program, walk, funcs, true)
                })
        }
        "program" => zero_after(list, parent, walk, funcs, false),
        _ => false,
    }
}

/// Whether the statements after `n` in `program` are [`harmless`] ones the last of which ends
/// with 0 ([`ends_zero`]), or none when `none_ok`.
fn zero_after(n: Node<'_>, program: Node<'_>, walk: &Walk<'_>, funcs: &Funcs, none_ok: bool) -> bool {
    let after: Vec<Node<'_>> = siblings_after(n, program).filter(|k| is_statement(*k)).collect();
    match after.split_last() {
        None => none_ok,
        Some((last, before)) => {
            ends_zero(*last, walk) && before.iter().all(|k| harmless(*k, walk, funcs) && !leaves(*k, walk))
        }
    }
}
