//! An `if`/`elif` condition whose branches differ (`selection_is_harmless` fails), judged by the
//! branch the dependency's outage takes (s22 false-deny pass: `if ! dep; then echo skip; exit 0;
//! fi; local-check` and `if dep; then attach; fi` were denied though bash 5.2 and dash 0.5.12
//! exit 0 / 0 with stub clients). An outage makes the check fail; the condition's status then
//! follows from it (`!` inverts it, `A && B` fails when a part fails, `A || B` succeeds when a
//! part succeeds) and chooses one branch, the outage's. The check cannot fail the probe by its
//! outage when that branch only writes output and then
//! - ends with `exit 0`: the script exits 0 (its own shell: no subshell, pipeline or function
//!   body around the `if`), or
//! - goes on (no `exit`/`return`): the `if`'s status is that branch's, as if the `if` were not
//!   there, and the branches it skips neither leave the script, loop or function (`exit`,
//!   `return`, `break`, `continue`, `exec`) nor leave state that runs later: with a variable,
//!   option, directory or file changed (an assignment, `cd`, `touch`, a redirection, a function
//!   whose body does), nothing may run after the `if` in the script's shell and no file written
//!   may be named elsewhere in the script (the next probe run reads it). A branch that only runs
//!   programs (`pcp_attach_node -n 1`) changes nothing the script reads: what a later command
//!   would read of a program's effects is a guess, and a guess is never a denial.
//!
//! Anything else (the outage's branch fails, `exit 1`, `false`, an assignment; an `elif` after
//! the outage's condition; a direction that cannot be told) keeps the walk's verdict: coupled.

use crate::engine::exec::kinds::KindName;
use tree_sitter::Node;

use super::super::flow::mentions;
use super::super::shell::Walk;
use super::data::ENDS_OR_UNFOLLOWED;
use super::functions::Funcs;
use super::harmless::{file_targets, harmless, leaves_state, may_only_fail, other_parts};
use super::path_vars::named_elsewhere_in;
use super::tree::{in_case_body, in_condition, last_statement};
use super::{Rules, is_statement, text, work};

/// A reason the walk gives (`discarded`).
pub(super) const OUTAGE_EXITS_ZERO: &str =
    "when it fails, its `if` takes a branch that exits 0, at most writing output first";
/// A reason the walk gives (`discarded`).
pub(super) const OUTAGE_SKIPS: &str =
    "when it fails, its `if` runs a branch that cannot fail, skipping one that changes nothing read later";

/// A reason the walk gives (`discarded`), read as no reason: the `if` exits 0 when the check
/// fails and non-zero when it succeeds, so the probe fails while the dependency answers (s23:
/// `f() { redis-cli -h cache ping; }; if f; then exit 1; else exit 0; fi` exits 1 up and 0 down in
/// bash 5.2 and dash 0.5.12, and was warned as unable to fail the probe). The check is coupled,
/// inverted (`exec::Dependency::inverted`), as `! CHECK` last is.
pub(in crate::engine::exec) const INVERTED_IF: &str =
    "its `if` exits non-zero when it succeeds and 0 when it fails";

/// Programs that write the files named by their operands (POSIX utilities): with state left
/// behind, each operand is a file the script must not name elsewhere.
const WRITES_OPERANDS: &[&str] =
    &["touch", "rm", "mkdir", "mv", "cp", "tee", "ln", "truncate", "chmod", "chown"];

/// Why the check `check` in the condition of `clause` (an `if_statement` or `elif_clause` of the
/// `if` `construct`), whose last statement `cond` holds it, cannot fail the probe by its outage
/// (module docs), or `None`.
#[allow(clippy::too_many_arguments)]
pub(super) fn outage_branch<'t>(
    check: Node<'t>,
    cond: Node<'t>,
    clause: Node<'t>,
    construct: Node<'t>,
    pipefail: bool,
    walk: &Walk<'t>,
    rules: &Rules,
    funcs: &Funcs,
) -> Option<&'static str> {
    let succeeds = outage_sense(check, cond, pipefail, walk)?;
    let mut c = clause.walk();
    let kids: Vec<Node<'t>> = clause.children(&mut c).collect();
    let then_at = kids.iter().position(|k| k.kind_name() == "then")?;
    let body = kids[then_at + 1..]
        .iter()
        .filter(|k| is_statement(**k) && !matches!(k.kind_name(), "elif_clause" | "else_clause"))
        .copied();
    let mut c = construct.walk();
    let later: Vec<Node<'t>> = construct
        .children(&mut c)
        .filter(|k| {
            matches!(k.kind_name(), "elif_clause" | "else_clause") && k.start_byte() > clause.start_byte()
        })
        .collect();
    let body: Vec<Node<'t>> = body.collect();
    let taken: Vec<Node<'t>> = if succeeds {
        body.clone()
    } else {
        // (Another condition would run: its branches are not followed here.)
        if later.iter().any(|k| k.kind_name() == "elif_clause") {
            return None;
        }
        later
            .iter()
            .flat_map(|e| {
                let mut c = e.walk();
                e.named_children(&mut c).filter(|k| is_statement(*k)).collect::<Vec<_>>()
            })
            .collect()
    };
    // A write to a file nothing reads may fail too (a read-only root filesystem), so the `if`'s
    // status may be the write's: taken only when the script then exits 0 (s24's new user: `if !
    // pg_isready -h db; then echo down >> /tmp/probe.log; fi; exit 0` after a guard that may
    // `exit 1`, 0 / 0 in bash 5.2 and dash 0.5.12, was denied).
    let unread_write = |k: &Node<'t>| {
        let own = [(k.start_byte(), k.end_byte())];
        may_only_fail(*k, walk, funcs)
            && !file_targets(text(*k, walk)).iter().any(|f| named_elsewhere_in(f, walk.src, &own))
            && (exits_zero_after(construct, walk, rules) || status_replaced_after(construct, walk, rules))
    };
    if !taken.iter().all(|k| harmless(*k, walk, funcs) || unread_write(k)) {
        return None;
    }
    let leaves = |k: &Node<'_>| mentions(text(*k, walk), &["exit", "return"]);
    if let Some((last, before)) = taken.split_last()
        && last.kind_name() == "command"
        && text(*last, walk).split_whitespace().eq(["exit", "0"])
        && !before.iter().any(leaves)
    {
        // The branch the check's success takes (with no `elif`): one that certainly exits
        // non-zero makes the check inverted.
        let other: Vec<Node<'t>> = if succeeds {
            let mut c = construct.walk();
            let parts: Vec<Node<'t>> = construct.children(&mut c).collect();
            match parts.iter().find(|k| matches!(k.kind_name(), "elif_clause" | "else_clause")) {
                Some(e) if e.kind_name() == "else_clause" => {
                    let mut c = e.walk();
                    e.named_children(&mut c).filter(|k| is_statement(*k)).collect()
                }
                Some(_) => Vec::new(),
                // No `else`: what follows the `if` at the script's top level runs.
                None => match construct.parent().filter(|p| p.kind_name() == "program") {
                    Some(p) => super::siblings_after(construct, p).filter(|k| is_statement(*k)).collect(),
                    None => Vec::new(),
                },
            }
        } else {
            body
        };
        let fails = other.split_last().is_some_and(|(last, before)| {
            let words: Vec<&str> = text(*last, walk).split_whitespace().collect();
            last.kind_name() == "command"
                && matches!(words.as_slice(), ["exit", n] if n.bytes().all(|b| b.is_ascii_digit()) && n.parse::<u8>().is_ok_and(|n| n != 0))
                && before.iter().all(|k| harmless(*k, walk, funcs) && !leaves(k))
        });
        let why = if fails { INVERTED_IF } else { OUTAGE_EXITS_ZERO };
        return in_script_shell(construct, rules).then_some(why);
    }
    if taken.iter().any(leaves) {
        return None;
    }
    // The parts the outage skips: every other statement of the `if` (conditions of other
    // clauses too), as `selection_is_harmless` takes them.
    let skipped: Vec<Node<'t>> =
        other_parts(cond, construct).into_iter().filter(|k| !taken.contains(k)).collect();
    let jumps =
        |t: &str| mentions(t, &["exit", "return", "break", "continue"]) || mentions(t, ENDS_OR_UNFOLLOWED);
    let mut stateful = false;
    for k in &skipped {
        let t = text(*k, walk);
        if jumps(t) {
            return None;
        }
        stateful |= leaves_state(t);
        // A function it calls: its body is followed (one level), if known.
        for word in t.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')) {
            if word.is_empty()
                || !rules.functions.iter().any(|f| f == word)
                || funcs.ok.iter().any(|f| f == word)
            {
                continue;
            }
            let bodies: Vec<&str> = match rules.known.iter().find(|(name, _)| name == word) {
                Some((_, body)) => vec![body.as_str()],
                None => top_level_bodies(construct, word, walk, rules)?,
            };
            for body in bodies {
                let calls_more =
                    body.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')).any(|w| {
                        w != word
                            && rules.functions.iter().any(|f| f == w)
                            && !funcs.ok.iter().any(|f| f == w)
                    });
                if jumps(body) || calls_more {
                    return None;
                }
                stateful |= leaves_state(body);
            }
        }
    }
    if !stateful {
        return Some(OUTAGE_SKIPS);
    }
    // State left behind: nothing may run after the `if`, and no file it writes may be read by
    // the script elsewhere (here or on the next probe run).
    if !nothing_after(construct, walk, rules) {
        return None;
    }
    let own: Vec<(usize, usize)> = skipped.iter().map(|k| (k.start_byte(), k.end_byte())).collect();
    for k in &skipped {
        let t = text(*k, walk);
        let mut files = file_targets(t);
        for command in t.split([';', '\n', '&', '|']) {
            let mut words = command.split_whitespace();
            if words.next().is_some_and(|w| WRITES_OPERANDS.contains(&w)) {
                files.extend(words.filter(|w| !w.starts_with('-')).map(str::to_string));
            }
        }
        if files.iter().any(|f| named_elsewhere_in(f, walk.src, &own)) {
            return None;
        }
    }
    Some(OUTAGE_SKIPS)
}

/// The bodies of the function `name` defined in the text walked (not a caller's), when every
/// definition of it is a statement of the text's top level (s23: `attach() { pcp_attach_node -n
/// 1; }; if C; then attach; fi; curl -sf localhost:8080/` exits 0 / 0 in bash 5.2 and dash
/// 0.5.12, and was denied: only a caller's functions were followed). `None` when one is
/// elsewhere (in a branch, a body): the skipped call is then not followed.
fn top_level_bodies<'t>(
    construct: Node<'t>,
    name: &str,
    walk: &Walk<'t>,
    rules: &Rules,
) -> Option<Vec<&'t str>> {
    let root = super::tree::tree_root(construct, walk);
    let mut c = root.walk();
    let bodies: Vec<&'t str> = root
        .named_children(&mut c)
        .filter(|k| {
            k.kind_name() == "function_definition"
                && k.child_by_field("name").is_some_and(|m| text(m, walk) == name)
        })
        .filter_map(|k| k.child_by_field("body").map(|b| text(b, walk)))
        .collect();
    (!bodies.is_empty() && bodies.len() == rules.functions.iter().filter(|f| *f == name).count())
        .then_some(bodies)
}

/// Whether the condition `cond` (a statement holding `check`) succeeds (`Some(true)`) or fails
/// when `check` fails, whatever the other parts give: through `!`, redirections, a part of `A &&
/// B` that fails or of `A || B` that succeeds (either side: when it runs its status is the
/// list's, when it does not the other part decided alike), the last command of a pipeline (any
/// failing one with pipefail), the last statement of `{ }` or `( )`. `None` otherwise.
fn outage_sense(check: Node<'_>, cond: Node<'_>, pipefail: bool, walk: &Walk<'_>) -> Option<bool> {
    let mut at = check;
    let mut ok = false;
    while at != cond {
        let parent = at.parent()?;
        work(walk, 1);
        match parent.kind_name() {
            "redirected_statement" => {}
            "negated_command" => ok = !ok,
            "list" => {
                let op = parent.child(1)?.kind_name();
                // (`&&` fails when a part fails, `||` succeeds when a part succeeds.)
                if (op == "&&") == ok || !matches!(op, "&&" | "||") {
                    return None;
                }
            }
            "pipeline" => {
                let mut c = parent.walk();
                let last = parent.named_children(&mut c).filter(|k| is_statement(*k)).last()?;
                // (Without pipefail the last command's status is the pipeline's; with it, a
                // failing command fails it.)
                let decided = if pipefail { !ok } else { last == at };
                if !decided {
                    return None;
                }
            }
            "compound_statement" | "subshell" if last_statement(at, parent) => {}
            _ => return None,
        }
        at = parent;
    }
    Some(ok)
}

/// Whether an `exit` at `construct` ends the script itself: not in a function's body (its caller
/// may run it in a subshell), a subshell, a substitution, a pipeline or the background.
pub(super) fn in_script_shell(construct: Node<'_>, rules: &Rules) -> bool {
    if rules.in_function || rules.called {
        return false;
    }
    let mut at = construct;
    while let Some(parent) = at.parent() {
        if matches!(
            parent.kind_name(),
            "subshell" | "command_substitution" | "process_substitution" | "pipeline"
        ) || at.next_sibling().is_some_and(|s| s.kind_name() == "&")
        {
            return false;
        }
        at = parent;
    }
    true
}

/// Whether `construct`, a statement of the script's top level (its own shell, not a function's
/// body), is followed only by statements that read no state ([`last_or_inert_after`]) and the
/// last of them is `exit 0`.
fn exits_zero_after(construct: Node<'_>, walk: &Walk<'_>, rules: &Rules) -> bool {
    let Some(program) = construct.parent().filter(|p| p.kind_name() == "program") else {
        return false;
    };
    let last = super::siblings_after(construct, program).filter(|k| is_statement(*k)).last();
    !rules.in_function
        && !rules.called
        && last.is_some_and(|k| text(k, walk).split_whitespace().eq(["exit", "0"]))
        && last_or_inert_after(construct, program, walk)
}

/// Whether the status of `construct` is replaced by the statement after it: it is not the last
/// of its list of statements, errexit is off where it runs, it is not in the background and the
/// next statement does not read its status (`$?`). A branch that may fail only by writing a file
/// nothing reads then fails nothing (s26's new user: `if ! pg_isready -h db; then log down; fi;
/// check_http || exit 1`, `log` appending to a log file, exits 0 / 0 in bash 5.2 and dash 0.5.12).
fn status_replaced_after(construct: Node<'_>, walk: &Walk<'_>, rules: &Rules) -> bool {
    let Some(parent) = construct.parent().filter(|p| super::is_list_of_statements(p.kind_name())) else {
        return false;
    };
    let root = super::tree_root(construct, walk);
    !last_statement(construct, parent)
        && construct.next_sibling().is_none_or(|s| s.kind_name() != "&")
        && !super::option_on_at(construct, root, walk, super::Opt::Errexit, rules.errexit)
        && !super::next_reads_status(construct, parent, walk, rules)
}

/// Whether `at` is the last statement of `parent`, or only statements that read no state follow
/// it: `exit N` (a number), `true`, `:` (s24's new user: `if ! pg_isready -h db; then echo
/// down >> /tmp/probe.log; fi; exit 0` after a local check that may `exit 1` exits 0 / 0 in bash
/// 5.2 and dash 0.5.12, and was denied).
fn last_or_inert_after(at: Node<'_>, parent: Node<'_>, walk: &Walk<'_>) -> bool {
    last_statement(at, parent)
        || super::siblings_after(at, parent).filter(|k| is_statement(*k)).all(|k| {
            let words: Vec<&str> = text(k, walk).split_whitespace().collect();
            k.kind_name() == "command"
                && match words.as_slice() {
                    ["exit", n] => n.bytes().all(|b| b.is_ascii_digit()),
                    ["true"] | [":"] => true,
                    _ => false,
                }
        })
}

/// Whether nothing runs after `construct` in the script's shell: it is the last statement of the
/// script, or of a `{ }`, `( )`, branch or `case` item that is itself in such a place (not a loop's
/// body, which runs again, nor a function's, whose caller goes on).
fn nothing_after(construct: Node<'_>, walk: &Walk<'_>, rules: &Rules) -> bool {
    if rules.in_function || rules.called {
        return false;
    }
    let mut at = construct;
    while let Some(parent) = at.parent() {
        work(walk, 1);
        if at.next_sibling().is_some_and(|s| s.kind_name() == "&") {
            return false;
        }
        let last = match parent.kind_name() {
            "program" => return last_or_inert_after(at, parent, walk),
            "compound_statement" | "subshell" | "else_clause" => last_or_inert_after(at, parent, walk),
            "if_statement" | "elif_clause" => !in_condition(at, parent) && last_statement(at, parent),
            "case_item" => in_case_body(at, parent) && last_statement(at, parent),
            "case_statement" | "redirected_statement" => true,
            _ => false,
        };
        if !last {
            return false;
        }
        at = parent;
    }
    true
}
