//! A check whose status the probe's script gives inverted: `! redis-cli -h cache ping` as its
//! last statement. bash 5.2 and dash 0.5.12 exit 1 when the check succeeds and 0 when it fails
//! (bash manual, "Pipelines": "If the reserved word `!` precedes a pipeline, the exit status of
//! that pipeline is the logical negation of the exit status"; POSIX 2.9.2 the same): the probe
//! fails whenever the dependency is up and passes while it is down. Still a dependency check
//! (its state alone decides the probe), but its message must say what really happens (s18
//! fresh-user pass: it said "its outage would restart ...").

use crate::engine::exec::kinds::KindName;
use tree_sitter::Node;

use super::super::shell::Walk;
use super::mentions;

/// Whether the piece `n` (a simple command, or one with redirections) is, under one `!`, the
/// last statement of a whole script the walk judges (`Walk::status`, no function
/// body), so that the script's exit status is the command's inverted. Only that shape: a `!`
/// under `&&`/`||`, in a pipeline, a subshell or a function body, or a script with a `trap`
/// (an EXIT trap's `exit` replaces the status) is `false` (the message stays the plain one).
pub(in crate::engine::exec) fn inverted(n: Node<'_>, walk: &Walk<'_>) -> bool {
    let whole = walk.status.as_ref().is_some_and(|r| !r.in_function && !r.called)
        && walk.top_functions.len() == 1
        && walk.cut >= walk.src.len()
        && !mentions(walk.src, &["trap"]);
    if !whole {
        return false;
    }
    // (`! ! CMD` is bash's CMD, but a syntax error for dash 0.5.12, which exits 2: only one `!`.)
    let (mut at, mut negations) = (n, 0);
    while let Some(parent) = at.parent() {
        match parent.kind_name() {
            // (A piece with redirections is the `redirected_statement` itself: `! CHECK >/dev/null`
            // parses as the redirections around the negated command.)
            "redirected_statement" if quiet_redirects(parent, at, walk) => at = parent,
            "negated_command" => {
                negations += 1;
                at = parent;
            }
            "program" => {
                let mut next = at.next_sibling();
                while let Some(s) = next {
                    if s.kind_name() == "&" || s.is_named() && s.kind_name() != "comment" {
                        return false;
                    }
                    next = s.next_sibling();
                }
                return negations == 1;
            }
            _ => return false,
        }
    }
    false
}

/// Whether the redirections of `statement` (around `body`) only send output to `/dev/null` or
/// to another descriptor (`>/dev/null 2>&1`): none can fail, so the status stays the body's
/// (`! CHECK >/dev/null 2>&1`, bash 5.2 and dash 0.5.12: 1 with the server up, 0 down). Not
/// `&>` (dash reads `CHECK &` and then `>/dev/null`).
fn quiet_redirects(statement: Node<'_>, body: Node<'_>, walk: &Walk<'_>) -> bool {
    let mut cursor = statement.walk();
    let redirects: Vec<Node<'_>> = statement.named_children(&mut cursor).filter(|c| *c != body).collect();
    !redirects.is_empty()
        && redirects.iter().all(|r| {
            let text: String = walk
                .src
                .get(r.start_byte()..r.end_byte())
                .unwrap_or("")
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect();
            let op = text.trim_start_matches(|c: char| c.is_ascii_digit());
            r.kind_name() == "file_redirect" && matches!(op, ">/dev/null" | ">>/dev/null" | ">&1" | ">&2")
        })
}
