//! Stage 2b: code that never runs is not analysed. A shell function's definition is a piece of
//! its own (see [`FUNCTION`]): its body is analysed where it is called, with the call's arguments
//! as `$1`, `$2`, ... (`script::run_pieces`), never when it is not called. A branch is
//! skipped only when the script itself makes it certain: `if false`/`if true`, `while false`,
//! `until true`, and `case` on a literal word whose patterns are literal words or `*`. Anything
//! else is analysed as before (every branch, as if it ran).

use tree_sitter::Node;

use super::context::{Ctx, is_ident};
use super::shell::Walk;

/// Starts a piece that defines a shell function: `FUNCTION name FUNCTION body` (the body as
/// written, `{ ...; }`). The definition takes effect where it runs, in order with the other pieces,
/// so a function defined in a sourced file is known to the script that sourced it.
pub(super) const FUNCTION: char = '\u{E002}';

/// Starts a piece whose exit status cannot fail the probe: it runs in the background (`cmd &`),
/// its failure is ignored (`cmd || true`), or its pipeline's status is another command's
/// (`cmd | true` without `pipefail`). What such a piece reaches is reported as a warning, not a
/// denial (`Dependency::uncoupled`): a connection that hangs can still time the probe out.
pub(super) const UNCOUPLED: char = '\u{E003}';

/// A piece without its [`UNCOUPLED`] prefix, if it has one.
pub(super) fn strip_uncoupled(piece: &str) -> &str {
    piece.strip_prefix(UNCOUPLED).and_then(|p| p.split_once(UNCOUPLED)).map_or(piece, |(_, rest)| rest)
}

/// Most words of a `for` loop whose body is analysed once per word.
const MAX_LOOP_WORDS: usize = 8;

/// Most loop bodies walked once per word in one analysis (nested loops multiply).
pub(super) const MAX_LOOP_WALKS: usize = 64;

/// Deepest nesting of function calls followed (a function calling a function ...).
pub(super) const MAX_CALL_DEPTH: usize = 8;

/// The text of `n` in the script.
fn text<'s>(n: Node<'_>, walk: &Walk<'s>) -> &'s str {
    walk.src.get(n.start_byte()..n.end_byte()).unwrap_or("")
}

/// The value of a condition that is one of `true`, `:` or `false` alone.
fn constant_condition(nodes: &[Node<'_>], walk: &Walk<'_>) -> Option<bool> {
    let named: Vec<&Node<'_>> = nodes.iter().filter(|k| k.is_named() && k.kind() != "comment").collect();
    match named.as_slice() {
        [c] if c.kind() == "command" => match text(**c, walk) {
            "true" | ":" => Some(true),
            "false" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// A `case` word or pattern that is a plain literal (no quoting, expansion or glob character).
fn literal(s: &str) -> bool {
    !s.is_empty()
        && !s
            .contains(['$', '`', '\\', '"', '\'', '*', '?', '[', ']', '{', '}', '(', ')', '@', '!', '+', '='])
}

impl Ctx<'_> {
    /// The control-flow nodes handled here: `Some(descend)` when `n` is one (its parts that run
    /// already walked), `None` to walk it as any other node.
    pub(super) fn flow<'t>(
        &mut self,
        n: Node<'t>,
        walk: &Walk<'_>,
        depth: usize,
        out: &mut Vec<String>,
    ) -> Option<bool> {
        if !self.uncoupling.contains(&n.id())
            && let Some(how) = uncoupled(n, walk)
        {
            let mut inner = Vec::new();
            self.uncoupling.push(n.id());
            self.statements(n, walk, depth, &mut inner);
            self.uncoupling.pop();
            for piece in inner {
                if piece.starts_with([FUNCTION, UNCOUPLED]) {
                    out.push(piece);
                } else {
                    out.push(format!("{UNCOUPLED}{how}{UNCOUPLED}{piece}"));
                }
            }
            return Some(false);
        }
        match n.kind() {
            "function_definition" => {
                let name = text(n.child_by_field_name("name")?, walk);
                let body = n.child_by_field_name("body")?;
                if n.end_byte() <= walk.cut {
                    out.push(format!("{FUNCTION}{name}{FUNCTION}{}", text(body, walk)));
                }
                Some(false)
            }
            "if_statement" | "case_statement" => {
                let run =
                    if n.kind() == "if_statement" { constant_if(n, walk)? } else { constant_case(n, walk)? };
                for k in run {
                    self.statements(k, walk, depth, out);
                }
                Some(false)
            }
            // `for NAME in WORDS; do BODY; done` over at most 8 literal words: the body once per
            // word, with NAME set to it (`for h in localhost 127.0.0.1` reaches only those).
            "for_statement" => {
                let name = text(n.child_by_field_name("variable")?, walk);
                let body = n.child_by_field_name("body")?;
                let mut c = n.walk();
                let values: Vec<&str> =
                    n.children_by_field_name("value", &mut c).map(|v| text(v, walk)).collect();
                if values.is_empty()
                    || values.len() > MAX_LOOP_WORDS
                    || !is_ident(name)
                    || !values.iter().all(|v| literal(v))
                {
                    return None;
                }
                // Nested loops multiply: past the analysis' allowance the body is walked once, as
                // any other loop (its variable unknown).
                if n.end_byte() > walk.cut || self.loop_walks_left < values.len() {
                    return None;
                }
                self.loop_walks_left -= values.len();
                for v in values {
                    out.push(format!("{name}={v}"));
                    self.statements(body, walk, depth, out);
                }
                Some(false)
            }
            // `false && X` and `true || X`: X never runs (only the exact two-command form).
            "list" => {
                let mut c = n.walk();
                let kids: Vec<Node<'t>> = n.children(&mut c).filter(|k| k.kind() != "comment").collect();
                let [first, op, _] = kids.as_slice() else {
                    return None;
                };
                let value = constant_condition(&[*first], walk)?;
                (value == (op.kind() == "||")).then_some(false)
            }
            "while_statement" => {
                let mut cursor = n.walk();
                let kids: Vec<Node<'t>> = n.children(&mut cursor).collect();
                let keyword = kids.first()?.kind();
                let body_at = kids.iter().position(|k| k.kind() == "do_group")?;
                let value = constant_condition(&kids[1..body_at], walk)?;
                // `while false` and `until true` never run their body (the condition runs: no client).
                (value == (keyword == "until")).then_some(false)
            }
            _ => None,
        }
    }
}

/// Whether `n` is a statement after which nothing else in its list runs: `exit`, `return`, or
/// `exec` with a program (which replaces the shell; `exec 3<>/dev/tcp/...` alone does not), as a
/// statement of its own in a script, a `{ }` group, a subshell or a loop body (not after `&&`,
/// `||`, in a pipeline or in an `if` branch: those may not run).
pub(super) fn ends_its_list(n: Node<'_>, src: &str) -> bool {
    if n.kind() != "command"
        || !n
            .parent()
            .is_some_and(|p| matches!(p.kind(), "program" | "compound_statement" | "subshell" | "do_group"))
    {
        return false;
    }
    let Some(name) = n.child_by_field_name("name") else {
        return false;
    };
    match src.get(name.start_byte()..name.end_byte()) {
        Some("exit" | "return") => true,
        Some("exec") => {
            let mut c = n.walk();
            n.children_by_field_name("argument", &mut c).next().is_some()
        }
        _ => false,
    }
}

/// A command that always succeeds and reads nothing: `true`, `:`, `exit 0`.
fn always_succeeds(n: Node<'_>, walk: &Walk<'_>) -> bool {
    n.kind() == "command" && matches!(text(n, walk).trim(), "true" | ":" | "exit 0" | "/bin/true")
}

/// Whether a word of the script is one of `words` (a crude scan of the whole text, used only to
/// keep a denial: any mention counts).
pub(super) fn mentions(src: &str, words: &[&str]) -> bool {
    src.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')).any(|w| words.contains(&w))
}

/// Why the exit status of the statement `n` cannot fail the script (bash manual, "Lists of
/// Commands" and "Pipelines"), or `None` when it may:
/// - `n &`: run in the background, the shell does not wait for it (unless a later `wait` asks
///   for its status, so a script that mentions `wait` keeps it);
/// - `n || true` (or `|| :`, `|| exit 0`): the list's status is 0 whatever `n` returns, and
///   `set -e` ignores a command that is left of `||`;
/// - `n | true`: a pipeline's status is its last command's, unless `pipefail` is set (a script
///   that mentions it keeps it).
///
/// A part that holds an `exit`, `exec` or `return` (it can end the script itself) or a
/// `while`/`until` loop (it can wait on the dependency until the probe times out) is never
/// uncoupled, except in the background.
fn uncoupled(n: Node<'_>, walk: &Walk<'_>) -> Option<&'static str> {
    if !walk.has_bars || !n.is_named() || n.kind() == "comment" || n.kind() == "function_definition" {
        return None;
    }
    // A part that can end the script itself, or wait on the dependency in a loop (a hang fails
    // the probe by its timeout, whatever the status).
    let ends_script = |k: Node<'_>| mentions(text(k, walk), &["exit", "exec", "return", "while", "until"]);
    if n.next_sibling().is_some_and(|s| s.kind() == "&")
        && !mentions(walk.src, &["wait"])
        && n.parent().is_some_and(|p| !matches!(p.kind(), "list" | "pipeline"))
    {
        return Some("it runs in the background (`&`)");
    }
    let parent = n.parent()?;
    let right = parent.named_child(parent.named_child_count().checked_sub(1)?)?;
    if right == n || !always_succeeds(right, walk) {
        return None;
    }
    if parent.kind() == "list"
        && parent.child(1).is_some_and(|op| op.kind() == "||")
        && parent.named_child(0) == Some(n)
    {
        return (!ends_script(n)).then_some("its failure is ignored (`|| true`)");
    }
    if parent.kind() == "pipeline" && !mentions(walk.src, &["pipefail"]) {
        return (!ends_script(n)).then_some("its pipeline's status is another command's (`| true`)");
    }
    None
}

/// `if` with `true`/`false` conditions: the nodes that run. The branches after one that is taken,
/// and the bodies of those whose condition is `false`, do not; from the first condition that is not
/// constant on, everything is walked, as before. `None` when the first condition is not constant.
fn constant_if<'t>(n: Node<'t>, walk: &Walk<'_>) -> Option<Vec<Node<'t>>> {
    let mut cursor = n.walk();
    let kids: Vec<Node<'t>> = n.children(&mut cursor).collect();
    let then_at = kids.iter().position(|k| k.kind() == "then")?;
    constant_condition(&kids[1..then_at], walk)?;
    // The if's own branch, then each elif/else clause's.
    let mut branches: Vec<Vec<Node<'t>>> = vec![Vec::new()];
    for k in kids {
        if matches!(k.kind(), "elif_clause" | "else_clause") {
            let mut c = k.walk();
            branches.push(k.children(&mut c).collect());
        } else if let Some(last) = branches.last_mut() {
            last.push(k);
        }
    }
    for (i, branch) in branches.iter().enumerate() {
        let then_at = branch.iter().position(|k| k.kind() == "then");
        // An else branch has no condition: it is taken.
        let value = then_at.map_or(Some(true), |t| constant_condition(&branch[1..t], walk));
        match value {
            Some(false) => {}
            Some(true) => return Some(branch[then_at.map_or(1, |t| t + 1)..].to_vec()),
            None => return Some(branches[i..].iter().flatten().copied().collect()),
        }
    }
    Some(Vec::new())
}

/// `case WORD in ...` with a literal word and literal patterns (or `*`), no fall-through: the
/// nodes of the first matching item's body. `None` when not certain.
fn constant_case<'t>(n: Node<'t>, walk: &Walk<'_>) -> Option<Vec<Node<'t>>> {
    let value = n.child_by_field_name("value")?;
    let word = text(value, walk);
    if value.kind() != "word" || !literal(word) {
        return None;
    }
    let mut cursor = n.walk();
    let items: Vec<Node<'t>> = n.children(&mut cursor).filter(|k| k.kind() == "case_item").collect();
    let mut chosen = None;
    for item in &items {
        let mut c = item.walk();
        if item.children_by_field_name("fallthrough", &mut c).next().is_some() {
            return None;
        }
        let mut c = item.walk();
        for pattern in item.children_by_field_name("value", &mut c) {
            let p = text(pattern, walk);
            if p != "*" && !literal(p) {
                return None;
            }
            if chosen.is_none() && (p == "*" || p == word) {
                chosen = Some(*item);
            }
        }
    }
    let Some(item) = chosen else {
        return Some(Vec::new());
    };
    let mut c = item.walk();
    let kids: Vec<Node<'t>> = item.children(&mut c).collect();
    let body_at = kids.iter().position(|k| k.kind() == ")")? + 1;
    Some(kids[body_at..].to_vec())
}
