//! Where a check's status is lost or cannot change the outcome, found by the v2 verdict break-it
//! pass on a00d258 (issue #10, "never deny on a guess"; `tests/shell_flow_v2.rs`), each run in
//! bash 5.2.15 and dash 0.5.12 with stub clients (`pg_isready` exiting 2 for a remote host):
//! - a process substitution (`while read l; do ...; done < <(check)`): no shell keeps its status
//!   (bash manual, "Process Substitution"; `$?`, errexit and pipefail never see it), its output is
//!   the reader's input, as in `check | reader` ([`procsub_reader`]);
//! - `until check; do n=$((n+1)); [ $n -ge 3 ] && break; sleep 1; done`: the check's failure keeps
//!   the loop retrying until a counter's test ends it, `break`'s status (0) the loop's (bash
//!   manual, "Bourne Shell Builtins": break "The return status is zero unless n is not greater
//!   than or equal to 1"), and `until check || [ $n -ge 3 ]` alike: the loop's status is then its
//!   body's last command's (POSIX, 2.9.4 "The until Loop") ([`bounded_retry`], [`bounded_condition`]);
//! - `check; [ $? -ne 3 ]`: `$?` tested for values no outage of that client gives (its row's
//!   `outage_status`, `clients`), so the test's result is the one it has with the server up
//!   ([`status_test`]).

use crate::engine::exec::kinds::KindName;
use tree_sitter::Node;

use super::super::clients::find_client;
use super::super::shell::Walk;
use super::data::{CHANGES_STATE, ENDS_OR_UNFOLLOWED, NOT_HARMLESS};
use super::filters::plain_filter_element;
use super::harmless::{harmless, may_be_read_elsewhere};
use super::shapes::harmless_read_loop;
use super::{Funcs, Rules, each_node, is_statement, leaves, text, trivial_reader};

/// A reason the walk gives (`discarded`).
pub(super) const PROCSUB: &str = "its status is lost in a process substitution (`< <(...)`, bash only: dash and busybox sh reject it, so the probe always fails there), read by a command that exits 0 whatever it reads";
/// A reason the walk gives (`discarded`).
pub(super) const PROCSUB_UNREAD: &str = "its status is lost in a process substitution (`3< <(...)`, bash only: dash and busybox sh reject it, so the probe always fails there), opened on a descriptor nothing reads";
/// A reason the walk gives (`discarded`).
pub(super) const RETRIES: &str =
    "its failure only makes its `until` loop retry until a counter's test ends the loop, with status 0";
/// A reason the walk gives (`discarded`): [`for_retry`].
pub(super) const FOR_RETRIES: &str = "its failure only makes its `for` loop try again; the loop ends with `break` or its last quiet step, status 0";
/// A reason the walk gives (`discarded`).
pub(super) const STATUS_DOUBT: &str =
    "its status (`$?`) is only tested for one value, which its outage may not give";
/// A reason the walk gives (`discarded`).
pub(super) const STATUS_TEST: &str = "its status (`$?`) is only tested for a value its outage does not give, which tests as with the server up";

/// What reads the output of the process substitution `sub` (`<(...)`), whose parent is `parent`
/// (the `<` redirection of a statement, or a command naming it as a file): `Ok((why, node))` when
/// the reader is `true`/`:`, a filter that exits 0 whatever it reads (`filters::plain_filter`), a
/// `while read` loop whose body cannot fail (`shapes::harmless_read_loop`) ([`PROCSUB`]), or
/// nothing reads the descriptor it is opened on (`3< <(check)`, [`unread_descriptor`],
/// [`PROCSUB_UNREAD`]), `node` being the statement whose output is judged further up
/// (`output_used_above`); `Err(node)` when the
/// reader's status may follow what it reads (`grep -q ok < <(check)`), `node` being where the
/// walk goes on, the check's status lost but its outcome carried (as for `check | grep -q ok`).
/// `None` for anything else (`>(...)`, another redirection, a descriptor read, a file the
/// statement writes that the script names again).
pub(super) fn procsub_reader<'t>(
    sub: Node<'t>,
    parent: Node<'t>,
    walk: &Walk<'_>,
    rules: &Rules,
    funcs: &Funcs,
) -> Option<Result<(&'static str, Node<'t>), Node<'t>>> {
    if !text(sub, walk).starts_with("<(") {
        return None;
    }
    let reads_all = |reader: Node<'_>| {
        trivial_reader(reader, walk)
            || plain_filter_element(reader, walk, &rules.functions)
            // (The loop runs in the script's shell: an `exit 0` in it ends the script.)
            || harmless_read_loop(reader, walk, funcs) && !leaves(reader, walk)
    };
    match parent.kind_name() {
        "file_redirect" => {
            let mut c = parent.walk();
            let from_stdin = parent.children(&mut c).any(|k| !k.is_named() && k.kind_name() == "<")
                && parent.child_by_field("descriptor").is_none_or(|d| text(d, walk) == "0");
            let statement = parent.parent().filter(|s| s.kind_name() == "redirected_statement")?;
            if !from_stdin && super::writes_a_named_file(statement, walk) {
                return None;
            }
            if !from_stdin {
                return unread_descriptor(parent, statement, walk, rules)
                    .then_some(Ok((PROCSUB_UNREAD, statement)));
            }
            if super::writes_a_named_file(statement, walk) {
                return None;
            }
            let reader = statement.child_by_field("body")?;
            if reads_all(reader) {
                return Some(Ok((PROCSUB, statement)));
            }
            plain_reader(reader, walk, rules).then_some(Err(statement))
        }
        "command" if reads_all(parent) => Some(Ok((PROCSUB, parent))),
        "command" => plain_reader(parent, walk, rules).then_some(Err(parent)),
        _ => None,
    }
}

/// Whether the `N< <(...)` redirection `redirect` of `statement` (N from 1 to 9) opens a
/// descriptor nothing reads: no word of the script names it (`<&3`, `read -u 3`, `/dev/fd/3`),
/// and the statement is no `exec` (which keeps it open for the rest of the script) or function
/// call. The substitution's output then goes nowhere, its status nowhere either (bash 5.2:
/// `while read -r l; do echo "$l"; done 3< <(pg_isready -h db)`, `cat 3< <(...)` exit 0 / 0
/// with the database down / up; with `read -u 3` or `<&3` in the loop, 1 / 0).
fn unread_descriptor(redirect: Node<'_>, statement: Node<'_>, walk: &Walk<'_>, rules: &Rules) -> bool {
    let Some(fd) = redirect.child_by_field("descriptor").map(|d| text(d, walk)) else {
        return false;
    };
    let body = statement.child_by_field("body");
    let name = body.and_then(|b| b.child_by_field("name")).map(|m| text(m, walk));
    let src = walk.src;
    fd.len() == 1
        && fd != "0"
        && fd.bytes().all(|b| b.is_ascii_digit())
        && !name.is_some_and(|n| n == "exec" || rules.functions.iter().any(|f| f == n))
        && !rules.called
        && !src.contains(&format!("&{fd}"))
        && !src.contains(&format!("-u {fd}"))
        && !src.contains(&format!("-u{fd}"))
        && !src.contains("/dev/fd/")
        && !src.contains("/proc/")
}

/// Whether `reader`, which reads a process substitution's output in the script's own shell, is a
/// program whose only effect is its status (`grep -q ok`): not a function, a compound command
/// (a loop's `exit` or assignment lasts: `while read l; do last=$l; done < <(remote)`) or a
/// builtin that changes the shell (`mapfile`, `read`).
fn plain_reader(reader: Node<'_>, walk: &Walk<'_>, rules: &Rules) -> bool {
    let Some(name) = reader.child_by_field("name").map(|m| text(m, walk)) else {
        return false;
    };
    reader.kind_name() == "command"
        && !rules.functions.iter().any(|f| f == name)
        && !CHANGES_STATE.contains(&name)
        && !ENDS_OR_UNFOLLOWED.contains(&name)
        && !NOT_HARMLESS.contains(&name)
        && !leaves(reader, walk)
}

/// Whether `cond` is `[ ... ]`/`test ...` (or `[[ ... ]]`) naming one of the variables `counters`.
fn tests_a_counter(cond: Node<'_>, walk: &Walk<'_>, counters: &[String]) -> bool {
    let is_test = cond.kind_name() == "test_command"
        || cond.kind_name() == "command"
            && cond.child_by_field("name").is_some_and(|m| text(m, walk) == "test");
    let mut named = false;
    each_node(cond, |k| {
        named |= k.kind_name() == "variable_name" && counters.iter().any(|c| c == text(k, walk));
    });
    is_test && named && !text(cond, walk).contains(['`', '(']) && !text(cond, walk).contains("$(")
}

/// The variables the statements `body` assign with an arithmetic expansion alone (`n=$((n+1))`),
/// named nowhere else in the script but in assignments (`n=0`) and tests, and not exported: a
/// counter only the loop reads.
fn counters(body: &[Node<'_>], looped: Node<'_>, walk: &Walk<'_>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in body {
        let Some((name, value)) = s
            .child_by_field("name")
            .zip(s.child_by_field("value"))
            .filter(|_| s.kind_name() == "variable_assignment")
        else {
            continue;
        };
        let t = text(value, walk);
        if value.kind_name() == "arithmetic_expansion"
            && !t.contains('`')
            && !t[1..].contains("$(")
            && !may_be_read_elsewhere(name, walk)
        {
            out.push(text(name, walk).to_string());
        }
    }
    // Outside the loop, the name only assigned (`n=0`).
    let mut root = looped;
    while let Some(p) = root.parent() {
        root = p;
    }
    out.retain(|var| {
        let mut read_outside = false;
        each_node(root, |k| {
            if k.kind_name() == "variable_name"
                && text(k, walk) == var
                && (k.start_byte() < looped.start_byte() || k.end_byte() > looped.end_byte())
            {
                read_outside |= k.parent().is_none_or(|p| p.kind_name() != "variable_assignment");
            }
        });
        !read_outside
    });
    out
}

/// A statement of a retry loop's body that always succeeds and changes nothing but a counter:
/// harmless (output), `sleep` with a literal duration, or an arithmetic assignment of `counters`.
fn quiet_step(s: Node<'_>, walk: &Walk<'_>, funcs: &Funcs, counters: &[String]) -> bool {
    if s.kind_name() == "variable_assignment" {
        return s.child_by_field("name").is_some_and(|m| counters.iter().any(|c| c == text(m, walk)));
    }
    let sleeps = s.kind_name() == "command"
        && s.child_by_field("name").is_some_and(|m| text(m, walk) == "sleep")
        && text(s, walk)
            .split_whitespace()
            .skip(1)
            .all(|w| w.bytes().all(|b| b.is_ascii_digit() || b == b'.'));
    sleeps || harmless(s, walk, funcs)
}

/// Whether `k` is `break` or `break 1`.
fn is_break(k: Node<'_>, walk: &Walk<'_>) -> bool {
    k.kind_name() == "command"
        && matches!(
            text(k, walk).split_whitespace().collect::<Vec<_>>().as_slice(),
            ["break"] | ["break", "1"]
        )
}

/// A statement before a `break` whose status `break`'s (0) replaces: harmless, or `false`, `true`,
/// `:` (`then false; break; fi`: bash 5.2 and dash 0.5.12 exit 0 / 0, s16 vd3 un05).
fn before_break(k: Node<'_>, walk: &Walk<'_>, funcs: &Funcs) -> bool {
    matches!(text(k, walk), "false" | "true" | ":") && k.kind_name() == "command" || harmless(k, walk, funcs)
}

/// Whether `s` ends the loop on a counter's test: `TEST && break` or `if TEST; then break; fi`
/// (`break` or `break 1`, after harmless commands, `false` or `true` at most), or instead of
/// `break` a statement `leave` accepts (`{ echo ignoring; exit 0; }`: `loop_exits::leaves_zero`).
fn breaks_on_counter(
    s: Node<'_>,
    walk: &Walk<'_>,
    funcs: &Funcs,
    counters: &[String],
    leave: &dyn Fn(Node<'_>) -> bool,
) -> bool {
    let is_break = |k: Node<'_>| is_break(k, walk) || leave(k);
    let before_break =
        |k: Node<'_>, walk: &Walk<'_>, funcs: &Funcs| before_break(k, walk, funcs) && !leaves(k, walk);
    let ends = |k: Node<'_>| {
        if is_break(k) {
            return true;
        }
        let mut c = k.walk();
        let inner: Vec<Node<'_>> = k.named_children(&mut c).filter(|x| is_statement(*x)).collect();
        k.kind_name() == "compound_statement"
            && inner.last().is_some_and(|x| is_break(*x))
            && inner[..inner.len() - 1].iter().all(|x| before_break(*x, walk, funcs))
    };
    match s.kind_name() {
        "list" => {
            let (Some(left), Some(op), Some(right)) = (s.named_child(0), s.child(1), s.named_child(1)) else {
                return false;
            };
            s.named_child_count() == 2
                && op.kind_name() == "&&"
                && tests_a_counter(left, walk, counters)
                && ends(right)
        }
        "if_statement" => {
            let mut c = s.walk();
            let parts: Vec<Node<'_>> = s.named_children(&mut c).filter(|x| is_statement(*x)).collect();
            let Some(cond) = s.child_by_field("condition") else {
                return false;
            };
            let mut c = s.walk();
            let branches =
                s.named_children(&mut c).any(|x| matches!(x.kind_name(), "elif_clause" | "else_clause"));
            !branches
                && tests_a_counter(cond, walk, counters)
                && parts.len() >= 2
                && parts.last().is_some_and(|x| is_break(*x))
                && parts[1..parts.len() - 1].iter().all(|x| before_break(*x, walk, funcs))
        }
        _ => false,
    }
}

/// The statements of the `do_group` of `looped`.
fn body_statements<'t>(looped: Node<'t>) -> Option<Vec<Node<'t>>> {
    let mut c = looped.walk();
    let body = looped.named_children(&mut c).find(|k| k.kind_name() == "do_group")?;
    let mut c = body.walk();
    Some(body.named_children(&mut c).filter(|s| is_statement(*s)).collect())
}

/// Whether the loop `looped`, which the check's failure keeps going (`until check`), is a bounded
/// retry: its body counts rounds (`n=$((n+1))`), ends the loop with `break` on a test of that
/// count, and otherwise only writes output or sleeps, its last statement always succeeding. Its
/// status is then 0 when the check keeps failing (`break`'s), or the last statement's, 0, once
/// it succeeds; the counter is named nowhere outside the loop but in assignments (bash 5.2 and
/// dash 0.5.12: `n=0; until pg_isready -h db; do n=$((n+1)); [ $n -ge 3 ] && break; sleep 1;
/// done` exits 0 with the database down; with `exit 1` for `break`, 1). A loop with no such
/// `break` waits on the check until the probe times out: not claimed.
pub(super) fn bounded_retry(looped: Node<'_>, walk: &Walk<'_>, rules: &Rules, funcs: &Funcs) -> bool {
    let Some(body) = body_statements(looped) else {
        return false;
    };
    let counted = counters(&body, looped, walk);
    // (`[ $n -ge 3 ] && { echo ignoring; exit 0; }` ends it as `break` would, s26.)
    let leave = |k: Node<'_>| super::loop_exits::leaves_zero(k, looped, walk, rules, funcs);
    let ends = |s: Node<'_>| breaks_on_counter(s, walk, funcs, &counted, &leave);
    if counted.is_empty() || rules.called || body.iter().any(|s| leaves(*s, walk) && !ends(*s)) {
        return false;
    }
    let breaks = body.iter().filter(|s| ends(**s)).count();
    // (An `if TEST; then ...; break; fi` last: 0 when it does not break, s16 vd3 un05.)
    breaks > 0
        && body.last().is_some_and(|s| {
            quiet_step(*s, walk, funcs, &counted) || s.kind_name() == "if_statement" && ends(*s)
        })
        && body.iter().all(|s| quiet_step(*s, walk, funcs, &counted) || ends(*s))
}

/// For `list` (`check || TEST`, `right` its `TEST`), the `until` loop whose whole condition it is,
/// when `TEST` tests a counter its body counts and the body is a bounded retry but for the
/// `break` ([`bounded_retry`]'s other conditions): the loop ends when the counter's test
/// succeeds, with its body's last status, 0 (bash 5.2 and dash 0.5.12: `n=0; until pg_isready -h
/// db || [ $n -ge 2 ]; do n=$((n+1)); sleep 1; done` exits 0 with the database down).
pub(super) fn bounded_condition<'t>(
    list: Node<'t>,
    right: Node<'t>,
    walk: &Walk<'_>,
    rules: &Rules,
    funcs: &Funcs,
) -> Option<Node<'t>> {
    let looped = list.parent().filter(|l| l.kind_name() == "while_statement")?;
    if looped.child(0).is_none_or(|k| k.kind_name() != "until")
        || looped.child_by_field("condition") != Some(list)
        || rules.called
    {
        return None;
    }
    let mut c = looped.walk();
    let conditions = looped
        .named_children(&mut c)
        .take_while(|k| k.kind_name() != "do_group")
        .filter(|k| is_statement(*k))
        .count();
    let body = body_statements(looped)?;
    let counted = counters(&body, looped, walk);
    (conditions == 1
        && !counted.is_empty()
        && tests_a_counter(right, walk, &counted)
        && !body.iter().any(|s| leaves(*s, walk))
        && body.last().is_some_and(|s| quiet_step(*s, walk, funcs, &counted))
        && body.iter().all(|s| quiet_step(*s, walk, funcs, &counted)))
    .then_some(looped)
}

/// A loop whose condition tests a counter its body counts (`until [ $n -ge 3 ]`, `while [ $n -lt
/// 3 ]`, `until [ $i -eq 3 ] || check`) and whose body is otherwise a bounded retry's (quiet steps,
/// the last one too; `check && break` allowed): it ends when the counter says so, with its body's
/// last status (0), or at a `break` (0). The condition's parts and the body's checks only choose
/// when it stops (bash 5.2 and dash 0.5.12: `n=0; until [ $n -ge 3 ]; do check && break;
/// n=$((n+1)); done` and `i=0; until [ $i -eq 3 ] || check; do i=$((i+1)); done` exit 0 / 0 with
/// the dependency down; with `n=$((n+1))` before `check && break`, last, 1 / 0). s16, vd3 un04, un09.
pub(super) fn counted_loop(looped: Node<'_>, walk: &Walk<'_>, rules: &Rules, funcs: &Funcs) -> bool {
    if looped.kind_name() != "while_statement" || rules.called {
        return false;
    }
    let Some(body) = body_statements(looped) else {
        return false;
    };
    let counted = counters(&body, looped, walk);
    let mut c = looped.walk();
    let conditions: Vec<Node<'_>> = looped
        .named_children(&mut c)
        .take_while(|k| k.kind_name() != "do_group")
        .filter(|k| is_statement(*k))
        .collect();
    let [cond] = conditions.as_slice() else {
        return false;
    };
    let until = looped.child(0).is_some_and(|k| k.kind_name() == "until");
    // `until TEST`, `while TEST`, or `until TEST || check` (`until check || TEST`: bounded_condition).
    let counter_ends = tests_a_counter(*cond, walk, &counted)
        || until
            && cond.kind_name() == "list"
            && cond.named_child_count() == 2
            && cond.child(1).is_some_and(|op| op.kind_name() == "||")
            && cond.named_child(0).is_some_and(|t| tests_a_counter(t, walk, &counted));
    let check_and_break = |s: Node<'_>| {
        s.kind_name() == "list"
            && s.named_child_count() == 2
            && s.child(1).is_some_and(|op| op.kind_name() == "&&")
            && s.named_child(0).is_some_and(|l| matches!(l.kind_name(), "command" | "redirected_statement"))
            && s.named_child(1).is_some_and(|r| is_break(r, walk))
    };
    !counted.is_empty()
        && counter_ends
        && !body.iter().any(|s| leaves(*s, walk))
        && body.last().is_some_and(|s| quiet_step(*s, walk, funcs, &counted))
        && body.iter().all(|s| {
            quiet_step(*s, walk, funcs, &counted)
                || check_and_break(*s)
                || breaks_on_counter(*s, walk, funcs, &counted, &|_: Node<'_>| false)
        })
}

/// The loop around `list` (`check && break`, a statement of its body) when it is a
/// [`counted_loop`].
pub(super) fn counted_break<'t>(
    list: Node<'t>,
    walk: &Walk<'_>,
    rules: &Rules,
    funcs: &Funcs,
) -> Option<Node<'t>> {
    let looped = list.parent().filter(|b| b.kind_name() == "do_group")?.parent()?;
    (list.named_child(1).is_some_and(|r| is_break(r, walk)) && counted_loop(looped, walk, rules, funcs))
        .then_some(looped)
}

/// The `for` loop around `statement` (`check && break`, or `if check; then break; fi`, a
/// statement of its body) when it is a retry over its words: every statement of the body is such
/// a check, or a quiet step (`sleep 1`, output; [`quiet_step`]), the last one a quiet step, and
/// none leaves state behind. Each round either breaks (status 0) or runs on to its last step (0),
/// so the loop's status is 0 whatever the checks give and however many words it has (bash manual,
/// "Looping Constructs", `break`; bash 5.2 and dash 0.5.12: `for i in 1 2 3; do pg_isready -h db
/// && break; sleep 1; done; test -d /` and the `$(seq 1 3)` / `if ...; then break; fi` forms exit
/// 0 / 0, s25, as the counted `while` form already was: [`counted_loop`]).
pub(super) fn for_retry<'t>(
    statement: Node<'t>,
    walk: &Walk<'_>,
    rules: &Rules,
    funcs: &Funcs,
) -> Option<Node<'t>> {
    let looped = statement.parent().filter(|b| b.kind_name() == "do_group")?.parent()?;
    if looped.kind_name() != "for_statement" || rules.called {
        return None;
    }
    let check = |k: Node<'_>| matches!(k.kind_name(), "command" | "redirected_statement");
    let check_and_break = |s: Node<'_>| {
        s.kind_name() == "list"
            && s.named_child_count() == 2
            && s.child(1).is_some_and(|op| op.kind_name() == "&&")
            && s.named_child(0).is_some_and(check)
            && s.named_child(1).is_some_and(|r| is_break(r, walk))
    };
    let if_break = |s: Node<'_>| {
        let mut c = s.walk();
        let kids: Vec<Node<'_>> = s.children(&mut c).collect();
        let Some(then) = kids.iter().position(|k| k.kind_name() == "then") else {
            return false;
        };
        let conditions: Vec<&Node<'_>> = kids[..then].iter().filter(|k| is_statement(**k)).collect();
        let branch: Vec<&Node<'_>> = kids[then + 1..].iter().filter(|k| k.is_named()).collect();
        s.kind_name() == "if_statement"
            && matches!(conditions.as_slice(), [c] if check(**c))
            && matches!(branch.as_slice(), [b] if is_break(**b, walk))
    };
    let body = body_statements(looped)?;
    (!body.iter().any(|s| leaves(*s, walk))
        && body.last().is_some_and(|s| quiet_step(*s, walk, funcs, &[]))
        && body.contains(&statement)
        && (check_and_break(statement) || if_break(statement))
        && body.iter().all(|s| quiet_step(*s, walk, funcs, &[]) || check_and_break(*s) || if_break(*s)))
    .then_some(looped)
}

/// The result of `[ $? OP N ]` for status `status`, for the operators of `test` (POSIX, "test":
/// `-eq` ... compare integers, `=`/`!=` strings), `None` for any other or an `N` that is no integer.
fn test_holds(op: &str, status: u8, n: &str) -> Option<bool> {
    if matches!(op, "=" | "==" | "!=") {
        return Some((status.to_string() == n) == (op != "!="));
    }
    let (status, n) = (i64::from(status), n.parse::<i64>().ok()?);
    Some(match op {
        "-eq" => status == n,
        "-ne" => status != n,
        "-lt" => status < n,
        "-le" => status <= n,
        "-gt" => status > n,
        "-ge" => status >= n,
        _ => return None,
    })
}

/// The first command `next` runs: itself, the left of an `&&`/`||` list, an `if`'s condition.
fn first_command(next: Node<'_>) -> Option<Node<'_>> {
    match next.kind_name() {
        "list" => first_command(next.named_child(0)?),
        "if_statement" => first_command(next.child_by_field("condition")?),
        "test_command" | "command" => Some(next),
        _ => None,
    }
}

/// Why the status of the check `at` (a command, or one with redirections) cannot fail the script
/// through `next`, the statement after it, when `next` first runs `[ $? OP N ]` (`"$?"`, `test`,
/// `[[ ]]`, N a literal) whose result is the same for 0 as for every status an outage of that
/// client gives (its row's `outage_status`, `clients`): the script then runs as with the server
/// up (bash 5.2 and dash 0.5.12: `pg_isready -h db; [ $? -ne 3 ]` exits 0 with the database
/// down, `[ $? -eq 0 ]` or `[ $? -ne 2 ]` 1). For a command whose outage statuses are not known,
/// a test that some failure status (1 to 255) passes as 0 does (`nc -z db 5432; [ $? -ne 3 ]`)
/// may be one the outage gives: in doubt, not a denial ([`STATUS_DOUBT`]); one no failure passes
/// as 0 does (`-eq 0`, `-ne 0`, `-gt 0`) keeps the check's status.
pub(super) fn status_test(
    at: Node<'_>,
    next: Node<'_>,
    walk: &Walk<'_>,
    rules: &Rules,
) -> Option<&'static str> {
    let cmd = if at.kind_name() == "redirected_statement" { at.child_by_field("body")? } else { at };
    let name = cmd.child_by_field("name").map(|m| text(m, walk)).filter(|_| cmd.kind_name() == "command")?;
    if rules.shadowed || rules.functions.iter().any(|f| f == name) {
        return None;
    }
    let words: Vec<&str> = text(first_command(next)?, walk).split_whitespace().collect();
    let (op, n) = match words.as_slice() {
        ["[", s, op, n, "]"] | ["[[", s, op, n, "]]"] | ["test", s, op, n]
            if matches!(*s, "$?" | "\"$?\"") =>
        {
            (*op, n.trim_matches('"'))
        }
        _ => return None,
    };
    let up = test_holds(op, 0, n)?;
    let mut c = cmd.walk();
    let args: Vec<String> =
        cmd.children_by_field("argument", &mut c).map(|a| text(a, walk).to_string()).collect();
    match find_client(name, &args).filter(|c| !c.outage_status.is_empty()) {
        Some(client) => {
            client.outage_status.iter().all(|s| test_holds(op, *s, n) == Some(up)).then_some(STATUS_TEST)
        }
        None => (1..=255).any(|s| test_holds(op, s, n) == Some(up)).then_some(STATUS_DOUBT),
    }
}
