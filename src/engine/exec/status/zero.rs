//! What a `{ }` group, a `( )` subshell or an `if` can end with, for the walk's `||` lists and
//! `if` conditions (s22, fresh-user pass: false denies). A construct that only writes output and
//! ends with `exit 0` or `return 0` gives the check's failure status 0, as `|| exit 0` does:
//! `C || { echo down; exit 0; }`, `C || ( echo down; exit 0 )`, and in a function's body `C || {
//! echo down; return 0; }` and `if C; then return 0; fi` (no branch taken: status 0, POSIX 2.9.4)
//! exit 0 / 0 in bash 5.2 and dash 0.5.12 with the client down / up, while `C || { echo down;
//! exit 1; }`, `C || ( exit 3 )` and `if C; then return 0; fi; return 1` exit 1 / 0 and 3 / 0.
//!
//! And what `C && TEST` ends with ([`only_tests`], s23): the check's own status when it fails.

use crate::engine::exec::kinds::KindName;
use tree_sitter::Node;

use super::super::shell::Walk;
use super::functions::Funcs;
use super::harmless::{harmless, harmless_after};
use super::tree::{last_statement, leaves};
use super::{Rules, is_statement, text};

/// How a statement that changes nothing ends, when it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ending {
    /// It goes on to what follows it, its status its own (output, `true`, a client judged by
    /// itself: [`harmless`]), or 0 (a `( )` that ends with `exit 0`).
    Falls,
    /// It ends the shell it runs in with status 0 (`exit 0`, a `{ }` ending with it).
    Exits,
    /// It returns 0 from the function it runs in (`return 0`, a `{ }` ending with it).
    Returns,
}

/// How `n` ends ([`Ending`]), or `None` when it may fail, change the shell's state or end another
/// way: a simple command `exit 0` or `return 0`, a [`harmless`] statement that leaves nothing, or a
/// `{ }` or `( )` whose statements but the last are such and whose last one ends so. A `( )` that
/// exits 0 goes on with status 0 (the subshell's, bash manual "Command Execution Environment");
/// one that returns is not followed.
pub(super) fn ending(n: Node<'_>, walk: &Walk<'_>, funcs: &Funcs) -> Option<Ending> {
    let kind = n.kind_name();
    if kind == "command" {
        let words: Vec<&str> = text(n, walk).split_whitespace().collect();
        match words.as_slice() {
            ["exit", "0"] => return Some(Ending::Exits),
            ["return", "0"] => return Some(Ending::Returns),
            _ => {}
        }
    }
    if !matches!(kind, "compound_statement" | "subshell") {
        return (harmless(n, walk, funcs) && !leaves(n, walk)).then_some(Ending::Falls);
    }
    let mut c = n.walk();
    let statements: Vec<Node<'_>> = n.named_children(&mut c).filter(|k| is_statement(*k)).collect();
    let (last, before) = statements.split_last()?;
    if !before.iter().all(|s| harmless(*s, walk, funcs) && !leaves(*s, walk)) {
        return None;
    }
    match (ending(*last, walk, funcs)?, kind) {
        (Ending::Returns, "subshell") => None,
        (_, "subshell") => Some(Ending::Falls),
        (end, _) => Some(end),
    }
}

/// Whether `n` runs in the shell of the text walked: no `( )`, substitution, pipeline or `&`
/// around it up to the root (a `return` there would end only that subshell).
fn in_own_shell(n: Node<'_>) -> bool {
    let mut at = n;
    while let Some(p) = at.parent() {
        if matches!(p.kind_name(), "subshell" | "command_substitution" | "process_substitution" | "pipeline")
            || at.next_sibling().is_some_and(|s| s.kind_name() == "&")
        {
            return false;
        }
        at = p;
    }
    true
}

/// Whether a construct at `at` (the `||` list, or the `if`) whose ways out all end as `ends` gives
/// the check's failure a status that cannot fail the script: going on (its status not the
/// check's) or `exit 0` (as `|| exit 0`), or `return 0` in a called function's body: in the
/// function's own shell, when what it skips (the rest of the body) is [`harmless`] too (the call
/// then returns 0 or the status of harmless commands, with the same state either way), or in a
/// `( )`, substitution or pipeline element of the body, which it ends with status 0 as `exit 0`
/// would (s23: bash 5.2 and dash 0.5.12 exit 0 / 0 on `f() { ( C || { echo down; return 0; } );
/// }; f`; outside a function bash refuses `return` there, status 2, so it is not taken).
pub(super) fn ends_harmlessly(
    ends: &[Ending],
    at: Node<'_>,
    walk: &Walk<'_>,
    rules: &Rules,
    funcs: &Funcs,
) -> bool {
    !ends.contains(&Ending::Returns)
        || rules.in_function
            && (!in_own_shell(at)
                || harmless_after(at, walk, funcs)
                || returns_zero_after(at, walk, rules, funcs))
}

/// Whether what follows `n`, a statement of a called function's body (at its top level, or in a
/// branch of an `if` there, not its condition), is statements that are [`harmless`] and leave
/// nothing (or, where errexit cannot be on, [`only_fails`]: `false`, a test, whose status the
/// `return 0` replaces), then, last in the body, `return 0` in the function's own shell: the
/// function returns 0 there as a `return 0` at `n` would, with the same state (s25, deny24's
/// list: `f(){ C || return 0; return 0; }; f` exits 0 / 0 in bash 5.2 and dash 0.5.12, and was
/// denied; `f(){ C || return 1; return 0; }; f` is 0 / 1). s26: `f(){ C || return 0; false;
/// return 0; }; f` and `f(){ if true; then C || return 0; fi; return 0; }; f` exit 0 / 0 in bash
/// 5.2.15 and dash 0.5.12; after `set -e` the first is 1 / 0 (`false` ends the shell while the
/// dependency is up), so not taken there.
pub(super) fn returns_zero_after(n: Node<'_>, walk: &Walk<'_>, rules: &Rules, funcs: &Funcs) -> bool {
    let quiet_failures = !rules.errexit
        && !super::options::sets_errexit(walk.src)
        && !super::super::flow::mentions(walk.src, &["shopt", "SHELLOPTS"]);
    let mut at = n;
    let mut returns = false;
    while let Some(parent) = at.parent() {
        let branch = match parent.kind_name() {
            "program" | "compound_statement" => false,
            "if_statement" | "elif_clause" if !super::tree::in_condition(at, parent) => true,
            "else_clause" => true,
            _ => return false,
        };
        let top = parent.kind_name() == "program"
            || parent.parent().is_some_and(|g| g.kind_name() == "program" && g.named_child_count() == 1);
        // (The other clauses of an `if` do not run after the branch `at` is in.)
        let after: Vec<Node<'_>> = super::siblings_after(at, parent)
            .filter(|k| is_statement(*k) && !matches!(k.kind_name(), "elif_clause" | "else_clause"))
            .collect();
        for (i, s) in after.iter().enumerate() {
            if top
                && !returns
                && i + 1 == after.len()
                && s.kind_name() == "command"
                && text(*s, walk).split_whitespace().eq(["return", "0"])
                && in_own_shell(*s)
            {
                returns = true;
                continue;
            }
            // (`[ "$out" = PONG ] || echo unexpected >&2` last: status 0 either way, s27.)
            if top
                && !returns
                && i + 1 == after.len()
                && in_own_shell(*s)
                && test_or_print(*s, walk, rules, funcs)
            {
                returns = true;
                continue;
            }
            if (!harmless(*s, walk, funcs) || leaves(*s, walk))
                && !(quiet_failures && only_fails(*s, walk, rules))
            {
                return false;
            }
        }
        // (From an `elif`/`else` clause, on to the `if` it belongs to.)
        at = if branch && parent.kind_name() != "if_statement" {
            parent.parent().unwrap_or(parent)
        } else {
            parent
        };
        if branch && at.kind_name() != "if_statement" {
            return false;
        }
    }
    returns
}

/// Whether `n` is `TEST || PRINT`: a test that runs nothing ([`only_tests`]: `[ "$out" = PONG ]`),
/// then `echo` whose output nothing reads and that writes no file ([`harmless`]): its status is 0
/// whichever way the test goes (the test's 0, or echo's), as a last `return 0` gives (not
/// `printf`, whose `%d` of a word that is no number exits 1, nor `logger`, 1 with no
/// `/dev/log`). s27: `check_redis(){ out=$(C 2>&1) || return 0; [ "$out"
/// = PONG ] || echo unexpected >&2; }; check_redis; L` exits 0 / 0 in bash 5.2 and dash 0.5.12
/// and was denied; `... || exit 1` there, or the test alone, is coupled (0 / 1).
fn test_or_print(n: Node<'_>, walk: &Walk<'_>, rules: &Rules, funcs: &Funcs) -> bool {
    // (tree-sitter-bash hangs `[ ... ] || echo x >&2`'s redirection on the list; bash gives it to
    // `echo`: taken when it writes no file, `>&2` or `> /dev/null`.)
    let n = match n.child_by_field("body").filter(|_| n.kind_name() == "redirected_statement") {
        Some(body) => {
            let redirects = walk.src.get(body.end_byte()..n.end_byte()).unwrap_or("");
            if !super::harmless::harmless_text(redirects, &[])
                || !super::harmless::file_targets(redirects).is_empty()
            {
                return false;
            }
            body
        }
        None => n,
    };
    if n.kind_name() != "list"
        || n.child(1).map(|o| o.kind_name()) != Some("||")
        || n.named_child_count() != 2
    {
        return false;
    }
    let (Some(test), Some(print)) = (n.named_child(0), n.named_child(1)) else {
        return false;
    };
    let command = match print.kind_name() {
        "redirected_statement" => print.child_by_field("body"),
        _ => Some(print),
    };
    only_tests(test, walk, rules)
        && command.is_some_and(|c| {
            c.kind_name() == "command"
                && c.child_by_field("name").is_some_and(|m| text(m, walk) == "echo")
                && super::calls::only_prints_arguments(c, walk)
                && !rules.functions.iter().any(|f| f == "echo")
        })
        && harmless(print, walk, funcs)
        && !leaves(print, walk)
}

/// Whether `n` changes nothing and ends nothing, and only its status may be a failure: `false`, or
/// [`only_tests`] (a test with no substitution or assignment). Replaced by the next statement's
/// status where errexit is off.
pub(super) fn only_fails(n: Node<'_>, walk: &Walk<'_>, rules: &Rules) -> bool {
    let is_false = n.kind_name() == "command"
        && text(n, walk).trim() == "false"
        && !rules.functions.iter().any(|f| f == "false");
    is_false || only_tests(n, walk, rules)
}

/// Whether `right`, the right side of the `||` list `list`, is `NAME=VALUE` (a literal of letters,
/// digits and `_./:-`, or nothing) where `NAME` certainly holds that value already: an earlier
/// statement of the same `{ }` body or script assigns it the same text, with only [`harmless`]
/// statements (no assignment, no call of a function that assigns) between, in a text that makes
/// no variable read-only (a failing assignment). It changes nothing and exits 0, as `|| true`
/// (s25, deny24's list: `f(){ status=0; C || status=0; return $status; }; f` exits 0 / 0 in bash
/// 5.2 and dash 0.5.12, and was denied; `status=1` there is coupled, 0 / 1).
pub(super) fn same_value_assignment(list: Node<'_>, right: Node<'_>, walk: &Walk<'_>, funcs: &Funcs) -> bool {
    if right.kind_name() != "variable_assignment"
        || super::super::flow::mentions(walk.src, &["readonly", "declare", "typeset", "export"])
    {
        return false;
    }
    let literal = |v: &str| v.bytes().all(|b| b.is_ascii_alphanumeric() || b"_./:-".contains(&b));
    let parts = |a: Node<'_>| {
        let name = a.child_by_field("name").map(|m| text(m, walk))?;
        let value = a.child_by_field("value").map_or("", |v| text(v, walk));
        (text(a, walk) == format!("{name}={value}") && literal(value)).then_some((name, value))
    };
    let Some(wanted) = parts(right) else { return false };
    let Some(parent) = list.parent().filter(|p| matches!(p.kind_name(), "program" | "compound_statement"))
    else {
        return false;
    };
    let mut before = list.prev_named_sibling();
    while let Some(s) = before {
        if s.kind_name() == "variable_assignment" && parts(s) == Some(wanted) {
            return s.parent() == Some(parent);
        }
        // (`local rc=0` in a function's body: the same value, in the body's own scope.)
        if s.kind_name() == "declaration_command"
            && text(s, walk) == format!("local {}={}", wanted.0, wanted.1)
        {
            return s.parent() == Some(parent);
        }
        if !is_statement(s) {
            before = s.prev_named_sibling();
            continue;
        }
        if !harmless(s, walk, funcs) || leaves(s, walk) {
            return false;
        }
        before = s.prev_named_sibling();
    }
    false
}

/// Whether the `{ }` or `( )` after `||` in `list` ends with status 0 or goes on harmlessly
/// ([`ending`]) where that cannot fail the script ([`ends_harmlessly`]): `|| { echo down; exit 0;
/// }`, `|| ( echo down; exit 0 )`, `|| { echo down; return 0; }` in a function's body. (A plain
/// `|| exit 0` or `|| return 0` is `flow::uncoupled`'s and `constructs::forces_zero`'s, with
/// their messages.)
pub(super) fn or_ends_zero(list: Node<'_>, walk: &Walk<'_>, rules: &Rules, funcs: &Funcs) -> bool {
    list.named_child(list.named_child_count().saturating_sub(1))
        .filter(|right| matches!(right.kind_name(), "compound_statement" | "subshell"))
        .and_then(|right| ending(right, walk, funcs))
        .is_some_and(|end| ends_harmlessly(&[end], list, walk, rules, funcs))
}

/// Whether every branch of `construct`, an `if` whose condition `cond` the check is in, ends as
/// [`ending`] says (its statements but the last [`harmless`], the last one ending so), and one
/// returns 0 (the cases with none are `harmless::selection_is_harmless`'s), where that cannot fail
/// the script ([`ends_harmlessly`]): `check() { if C; then return 0; fi; }` returns 0 whether the
/// branch runs or not (no branch taken: the `if`'s status is 0, POSIX 2.9.4).
pub(super) fn branches_end_zero(
    cond: Node<'_>,
    construct: Node<'_>,
    walk: &Walk<'_>,
    rules: &Rules,
    funcs: &Funcs,
) -> bool {
    if !rules.in_function {
        return false;
    }
    let mut ends = Vec::new();
    let mut parts = vec![construct];
    let mut c = construct.walk();
    parts.extend(
        construct.children(&mut c).filter(|k| matches!(k.kind_name(), "elif_clause" | "else_clause")),
    );
    for part in parts {
        let mut c = part.walk();
        for k in part.children(&mut c).filter(|k| is_statement(*k)) {
            if matches!(k.kind_name(), "elif_clause" | "else_clause")
                || k.start_byte() <= cond.start_byte() && cond.end_byte() <= k.end_byte()
            {
                continue;
            }
            match ending(k, walk, funcs) {
                Some(Ending::Falls) => ends.push(Ending::Falls),
                Some(end) if last_statement(k, part) => ends.push(end),
                _ => return false,
            }
        }
    }
    ends.contains(&Ending::Returns) && ends_harmlessly(&ends, construct, walk, rules, funcs)
}

/// Whether `n`, the right side of an `&&` list whose left side is the check, only tests: `[ ... ]`,
/// `[[ ... ]]` or `test ...` (or `!`, `&&`, `||` of such), with no substitution, arithmetic,
/// redirection or assigning expansion (`${X:=y}`), and no function named `test` or `[`. It may
/// fail, but runs nothing and changes nothing, and it does not run when the check fails: the list
/// then fails with the check's own status (POSIX 2.9.3, "AND Lists"), followed on as the check's
/// (s23: `if C && [ -n x ]; then echo ok; fi; curl -sf localhost:8080/` exits 0 / 0 in bash 5.2
/// and dash 0.5.12, and was denied; `C && [ -n x ]` last exits 1 / 0, still denied).
pub(super) fn only_tests(n: Node<'_>, walk: &Walk<'_>, rules: &Rules) -> bool {
    let t = text(n, walk);
    if t.contains(['`', '<', '>']) || t.contains("$(") || t.contains("$[") || t.contains("((") {
        return false;
    }
    if super::constructs::assigning_expansion(t) || rules.functions.iter().any(|f| f == "test" || f == "[") {
        return false;
    }
    match n.kind_name() {
        // (`[[ 1 -eq x++ ]]` evaluates its operands as arithmetic in bash, which may assign.)
        "test_command" => {
            !t.starts_with("[[")
                || !t.split_whitespace().any(|w| matches!(w, "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge"))
        }
        "command" => n
            .child_by_field("name")
            .is_some_and(|m| matches!(text(m, walk), "test" | "[") && n.child_by_field("redirect").is_none()),
        "negated_command" | "list" => {
            let mut c = n.walk();
            let parts: Vec<Node<'_>> = n.named_children(&mut c).filter(|k| is_statement(*k)).collect();
            !parts.is_empty() && parts.iter().all(|k| only_tests(*k, walk, rules))
        }
        _ => false,
    }
}

/// Whether a branch of `construct`, an `if` in a called function's body whose condition `cond`
/// the check is in, runs `exit`: it ends the caller's script too, whose code after the call this
/// walk does not see. With no branch taken the `if`, and the call, goes on with status 0 (POSIX
/// 2.9.4), so what the caller runs next decides: `check() { if C; then exit 0; fi; }; check; exit
/// 1` exits 0 / 1 in bash 5.2 and dash 0.5.12 (coupled; warned before s24), `...; check; exit 0`
/// and `...; check` alone 0 / 0. So only where the caller certainly fails next
/// (`Rules::caller_fails_after`: `exit 1`, `false`, after output only) is the selection not
/// taken as harmless here.
pub(super) fn exits_past_body(cond: Node<'_>, construct: Node<'_>, walk: &Walk<'_>, rules: &Rules) -> bool {
    rules.in_function
        && rules.caller_fails_after
        && super::harmless::other_parts(cond, construct)
            .iter()
            .any(|p| super::super::flow::mentions(text(*p, walk), &["exit"]))
}
