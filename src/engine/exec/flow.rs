//! Stage 2b: code that never runs is not analysed. A shell function's definition is a piece of
//! its own (see [`FUNCTION`]): its body is analysed where it is called, with the call's arguments
//! as `$1`, `$2`, ... (`script::run_pieces`), never when it is not called. The branches of `if`,
//! `case`, `&&` and `||` (and loop bodies) are walked inside [`GUARD`] regions that say when they
//! run; the analysis skips a region whose condition is certainly false on the values it knows
//! then (`if [ "$MODE" = cluster ]` with `MODE=standalone`), and analyses every other one, as if
//! it ran. `while false` and `until true` never run their body.
//!
//! A statement whose exit status cannot fail the script is walked as [`UNCOUPLED`]: which ones
//! is decided in the child module `uncoupled`.

mod code;
mod constant;
mod negated;
mod reach;
pub(super) use code::code_view;
mod uncoupled;
pub(super) use constant::NOT_PLAIN;

use crate::engine::exec::kinds::KindName;
use tree_sitter::Node;

use super::context::{Ctx, is_ident};
use super::shell::Walk;
pub(super) use negated::inverted;
use uncoupled::uncoupled;
pub(super) use uncoupled::{OUTPUT_IN_SUBSTITUTION, failure_ignored_by};

/// Starts a piece that defines a shell function: `FUNCTION name FUNCTION body` (the body as
/// written, `{ ...; }`). The definition takes effect where it runs, in order with the other pieces,
/// so a function defined in a sourced file is known to the script that sourced it.
pub(super) const FUNCTION: char = '\u{E002}';

/// Starts a piece whose exit status cannot fail the probe: it runs in the background (`cmd &`),
/// its failure is ignored (`cmd || true`), or its pipeline's status is another command's
/// (`cmd | true` without `pipefail`), or its status cannot reach the script's on any path the
/// shell takes (`status::discarded`: not last, left of a harmless `||`, an `if` condition choosing
/// between harmless branches). What such a piece reaches is reported as a warning, not a
/// denial (`Dependency::uncoupled`): a connection that hangs can still time the probe out.
pub(super) const UNCOUPLED: char = '\u{E003}';

/// Starts a guard piece: [`GUARD`] alone ends the region the last open guard began; [`GUARD`]
/// followed by conditions (each [`COND`], a kind letter and its text) begins a region of pieces
/// that run only if every condition holds (see [`Ctx::guard_holds`]). Regions nest as the
/// script's blocks do. The conditions are judged when the analysis reaches them, on the values
/// known then: a region whose conditions are certainly false is skipped, one whose conditions
/// are not known is analysed (and what it assigns is no longer certain after it).
pub(super) const GUARD: char = '\u{E005}';

/// Starts one condition of a [`GUARD`] piece: `T` (a test that must succeed) or `F` (fail)
/// followed by the test's piece; `M` (the word matches one of the patterns) or `N` (none)
/// followed by the word's piece and each pattern's, each after [`PATTERN`]; `U` unknown.
pub(super) const COND: char = '\u{E006}';

/// Starts a pattern in an `M`/`N` condition of a [`GUARD`] piece.
pub(super) const PATTERN: char = '\u{E007}';

/// A piece that says the output of the piece before it is the standard input of the piece after
/// it (`echo '...' | sh`): between the commands of a pipeline.
pub(super) const PIPE: char = '\u{E008}';

/// A piece that says the script ends here (an `exit` or `exec PROGRAM` that runs in the script's
/// own shell, see [`ends_the_script`]): if every region it is in is certain to run, nothing after
/// it is analysed.
pub(super) const EXIT: char = '\u{E009}';

/// Starts a piece about where a value lives (bash manual, "Command Execution Environment"):
/// - `SCOPE(` opens and `SCOPE)` closes a subshell (`( )`, `$( )`, `<( )`, `cmd &`, each element
///   of a pipeline): what it assigns, unsets, exports or defines is gone after it;
/// - `SCOPE?` opens a region that may or may not run in the script's own shell (the last element
///   of a pipeline when `lastpipe` is mentioned): what it changes is unknown after it;
/// - `SCOPE F` + name + [`SCOPE`] + words opens a `for` loop whose words are known only when the
///   analysis reaches it (`for h in "$1"`), `SCOPE f` closes it: the body is run once per word;
/// - `SCOPE !`: the next piece's status is the script's inverted (`! CMD` last: [`inverted`]);
/// - `SCOPE E`: the next piece runs where errexit is ignored (left of `&&`/`||`, after `!`, in an
///   `if` condition, or in a compound command there: `status::errexit_ignored_around`), so a
///   function it calls runs its body without errexit (bash manual, `set -e`);
/// - `SCOPE L` + a line number: the commands after it are on that line of the script (written only
///   when the script mentions `alias`: an alias applies from the next line on).
pub(super) const SCOPE: char = '\u{E00A}';

/// A piece without its [`UNCOUPLED`] prefix, if it has one.
pub(super) fn strip_uncoupled(piece: &str) -> &str {
    piece.strip_prefix(UNCOUPLED).and_then(|p| p.split_once(UNCOUPLED)).map_or(piece, |(_, rest)| rest)
}

/// Most words of a `for` loop whose body is analysed once per word.
pub(super) const MAX_LOOP_WORDS: usize = 8;

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
    let named: Vec<&Node<'_>> = nodes.iter().filter(|k| k.is_named() && k.kind_name() != "comment").collect();
    match named.as_slice() {
        [c] if c.kind_name() == "command" => match text(**c, walk) {
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
    /// The pieces of `n` whose status is lost (`how`: why), each marked uncoupled with that
    /// reason (a function's, an exit's, a guard's or a pipe's piece as it is), pushed to `out`.
    fn uncoupled_statements<'t>(
        &mut self,
        n: Node<'t>,
        walk: &Walk<'t>,
        depth: usize,
        how: &str,
        out: &mut Vec<String>,
    ) {
        let mut inner = Vec::new();
        self.uncoupling.push(n.id());
        self.statements(n, walk, depth, &mut inner);
        self.uncoupling.pop();
        for piece in inner {
            if piece.starts_with([FUNCTION, UNCOUPLED, GUARD, PIPE, EXIT, SCOPE]) {
                out.push(piece);
            } else {
                out.push(format!("{UNCOUPLED}{how}{UNCOUPLED}{piece}"));
            }
        }
    }

    /// The control-flow nodes handled here: `Some(descend)` when `n` is one (its parts that run
    /// already walked), `None` to walk it as any other node.
    pub(super) fn flow<'t>(
        &mut self,
        n: Node<'t>,
        walk: &Walk<'t>,
        depth: usize,
        out: &mut Vec<String>,
    ) -> Option<bool> {
        if !self.uncoupling.contains(&n.id())
            && !self.calls_a_function_with_effects(n, walk)
            && let Some(how) = uncoupled(n, walk)
                .or_else(|| self.status_discarded_within_budget(n, walk))
                .or_else(|| self.err_trap_exits_zero(n, walk, depth))
        {
            self.uncoupled_statements(n, walk, depth, how, out);
            return Some(false);
        }
        // A subshell, and a command run in the background (a subshell too): what it assigns is
        // gone after it (bash manual, "Command Execution Environment").
        // (Without a `&` in the text nothing runs in the background: no sibling is looked at.)
        let kind = n.kind_name();
        if (kind == "subshell"
            || walk.has_bars
                && kind != "comment"
                && n.is_named()
                && n.next_sibling().is_some_and(|s| s.kind_name() == "&"))
            && n.end_byte() <= walk.cut
            && !self.scoping.contains(&n.id())
        {
            self.scoping.push(n.id());
            out.push(format!("{SCOPE}("));
            self.statements(n, walk, depth, out);
            out.push(format!("{SCOPE})"));
            self.scoping.pop();
            return Some(false);
        }
        if walk.aliases && kind == "command" {
            out.push(format!("{SCOPE}L{}", n.start_position().row));
        }
        match kind {
            "function_definition" => {
                let name = text(n.child_by_field("name")?, walk);
                let body = n.child_by_field("body")?;
                if n.end_byte() <= walk.cut {
                    out.push(format!("{FUNCTION}{name}{FUNCTION}{}", text(body, walk)));
                }
                Some(false)
            }
            "if_statement" if n.end_byte() <= walk.cut => {
                self.guarded_if(n, walk, depth, out);
                Some(false)
            }
            "case_statement" if n.end_byte() <= walk.cut => {
                self.guarded_case(n, walk, depth, out);
                Some(false)
            }
            // `for NAME in WORDS; do BODY; done` over at most 8 literal words: the body once per
            // word, with NAME set to it (`for h in localhost 127.0.0.1` reaches only those).
            "for_statement" => {
                let name = text(n.child_by_field("variable")?, walk);
                let body = n.child_by_field("body")?;
                let mut c = n.walk();
                let values: Vec<&str> = n.children_by_field("value", &mut c).map(|v| text(v, walk)).collect();
                if n.end_byte() > walk.cut {
                    return None;
                }
                // Nested loops multiply: past the analysis' allowance the body is walked once, as
                // any other loop (its variable unknown), in a region that may not run.
                // Words known only when the analysis reaches the loop (`for h in "$1"`, `for h in
                // $HOSTS`): the body is run once per word then (`script::run_pieces`).
                if !values.is_empty()
                    && values.len() <= MAX_LOOP_WORDS
                    && is_ident(name)
                    && !values.iter().all(|v| literal(v))
                    && values.iter().all(|v| !without_subscripts(v).contains(['*', '?', '[', '(', '`']))
                {
                    let mut c = n.walk();
                    let nodes: Vec<Node<'t>> = n.children_by_field("value", &mut c).collect();
                    let mut words = Vec::new();
                    self.piece(&nodes, walk, depth, &mut words);
                    if let Some(words) = words.pop().filter(|w| !w.contains([GUARD, COND, SCOPE, FUNCTION])) {
                        out.push(format!("{SCOPE}F{name}{SCOPE}{words}"));
                        self.statements(body, walk, depth, out);
                        out.push(format!("{SCOPE}f"));
                        return Some(false);
                    }
                }
                if values.is_empty()
                    || values.len() > MAX_LOOP_WORDS
                    || !is_ident(name)
                    || !values.iter().all(|v| literal(v))
                    || self.loop_walks_left < values.len()
                {
                    let mut c = n.walk();
                    let kids: Vec<Node<'t>> = n.children(&mut c).collect();
                    for k in kids.iter().filter(|k| **k != body) {
                        self.statements(*k, walk, depth, out);
                    }
                    out.push(format!("{GUARD}{COND}U"));
                    self.statements(body, walk, depth, out);
                    out.push(GUARD.to_string());
                    return Some(false);
                }
                self.loop_walks_left -= values.len();
                for v in values {
                    out.push(format!("{name}={v}"));
                    self.statements(body, walk, depth, out);
                }
                Some(false)
            }
            // Each command's output is the next one's input (`echo '...' | sh`).
            "pipeline" if n.end_byte() <= walk.cut => {
                let mut c = n.walk();
                let kids: Vec<Node<'t>> = n.children(&mut c).collect();
                // Every element runs in a subshell (bash manual, "Pipelines"), but with `lastpipe`
                // the last one may run in the script's own shell.
                let last =
                    kids.iter().rev().find(|k| k.is_named() && k.kind_name() != "comment").map(Node::id);
                let lastpipe = mentions(walk.src, &["lastpipe"]);
                for (i, k) in kids.iter().enumerate() {
                    let element = k.is_named() && k.kind_name() != "comment";
                    if element {
                        let open = if lastpipe && Some(k.id()) == last { '?' } else { '(' };
                        out.push(format!("{SCOPE}{open}"));
                        self.scoping.push(k.id());
                    }
                    self.statements(*k, walk, depth, out);
                    if element {
                        self.scoping.pop();
                        out.push(format!("{SCOPE})"));
                    }
                    if element && i + 1 < kids.len() {
                        out.push(PIPE.to_string());
                    }
                }
                Some(false)
            }
            // `false && X` and `true || X`: X never runs (only the exact two-command form).
            "list" => {
                let mut c = n.walk();
                let kids: Vec<Node<'t>> = n.children(&mut c).filter(|k| k.kind_name() != "comment").collect();
                let [first, op, second] = kids.as_slice() else {
                    return None;
                };
                if constant_condition(&[*first], walk).is_some_and(|value| value == (op.kind_name() == "||"))
                    && !constant::redefined(walk)
                {
                    return Some(false);
                }
                if n.end_byte() > walk.cut || !matches!(op.kind_name(), "&&" | "||") {
                    return None;
                }
                // `true || R || R`, `R && false || local`: the left side's status known as written.
                if let Some(done) = self.constant_list(n, (*first, op.kind_name(), *second), walk, depth, out)
                {
                    return Some(done);
                }
                // The right side runs only if the left one succeeds (`&&`) or fails (`||`).
                self.statements(*first, walk, depth, out);
                if op.kind_name() == "||" && self.fallback(*first, *second, walk, depth, out) {
                    return Some(false);
                }
                let cond = self.condition(&[*first], op.kind_name() == "&&", walk, depth);
                out.push(format!("{GUARD}{cond}"));
                self.statements(*second, walk, depth, out);
                out.push(GUARD.to_string());
                Some(false)
            }
            "while_statement" => {
                let mut cursor = n.walk();
                let kids: Vec<Node<'t>> = n.children(&mut cursor).collect();
                let keyword = kids.first()?.kind_name();
                let body_at = kids.iter().position(|k| k.kind_name() == "do_group")?;
                // `while false` and `until true` never run their body (the condition runs: no client).
                if constant_condition(&kids[1..body_at], walk)
                    .is_some_and(|value| value == (keyword == "until"))
                    && !constant::redefined(walk)
                {
                    return Some(false);
                }
                if n.end_byte() > walk.cut {
                    return None;
                }
                // The body may run no time: what it assigns is not certain after it. A condition
                // certainly false on entry (`while [ "$M" = x ]`, `M=y`) never runs it.
                for k in &kids[..body_at] {
                    self.statements(*k, walk, depth, out);
                }
                let cond = self.condition(&kids[1..body_at], keyword != "until", walk, depth);
                out.push(format!("{GUARD}{cond}{COND}U"));
                for k in &kids[body_at..] {
                    self.statements(*k, walk, depth, out);
                }
                out.push(GUARD.to_string());
                Some(false)
            }
            _ => None,
        }
    }
}

/// Whether `n` is a statement after which nothing else in its list runs: `exit`, `return`, or
/// `exec` with a program (which replaces the shell; `exec 3<>/dev/tcp/...` alone does not), as a
/// statement of its own in a script, a `{ }` group, a subshell or a loop body (not after `&&`,
/// `||`, in a pipeline, in the background or in an `if` branch: those may not run).
pub(super) fn ends_its_list(n: Node<'_>, src: &str) -> bool {
    if n.kind_name() != "command"
        || !n.parent().is_some_and(|p| {
            matches!(p.kind_name(), "program" | "compound_statement" | "subshell" | "do_group")
        })
    {
        return false;
    }
    // `exit 0 &` ends a background subshell, not this list.
    if n.next_sibling().is_some_and(|s| s.kind_name() == "&") {
        return false;
    }
    let Some(name) = n.child_by_field("name") else {
        return false;
    };
    match src.get(name.start_byte()..name.end_byte()) {
        Some("exit" | "return") => true,
        Some("exec") => {
            let mut c = n.walk();
            n.children_by_field("argument", &mut c).next().is_some()
        }
        _ => false,
    }
}

/// Whether `n` is an `exit` or an `exec PROGRAM` that ends the script when it runs: in the
/// script's own shell (not in a subshell, a pipeline, a substitution or the background), in
/// blocks, branches and loops only (whether those run is the [`GUARD`] regions' to say).
/// (`return` is left out: at a script's top level bash reports an error and goes on.)
pub(super) fn ends_the_script(n: Node<'_>, src: &str) -> bool {
    if n.kind_name() != "command" {
        return false;
    }
    let Some(name) = n.child_by_field("name") else {
        return false;
    };
    let ends = match src.get(name.start_byte()..name.end_byte()) {
        Some("exit") => true,
        Some("exec") => {
            let mut c = n.walk();
            n.children_by_field("argument", &mut c).next().is_some()
        }
        _ => false,
    };
    if !ends {
        return false;
    }
    let mut at = n;
    loop {
        if at.next_sibling().is_some_and(|s| s.kind_name() == "&") {
            return false;
        }
        let Some(parent) = at.parent() else {
            return true;
        };
        if !matches!(
            parent.kind_name(),
            "program"
                | "compound_statement"
                | "if_statement"
                | "elif_clause"
                | "else_clause"
                | "case_statement"
                | "case_item"
                | "list"
                | "do_group"
                | "while_statement"
                | "for_statement"
        ) {
            return false;
        }
        at = parent;
    }
}

/// Whether a simple command, as written, is `true`, `:`, `/bin/true` or `exit 0`, however its
/// words are spaced (`exit  0`: the shell splits words on any run of blanks).
pub(super) fn succeeds_as_written(command: &str) -> bool {
    let mut words = command.split_whitespace();
    matches!(
        (words.next(), words.next(), words.next()),
        (Some("true" | ":" | "/bin/true"), None, _) | (Some("exit"), Some("0"), None)
    )
}

/// Whether a word of the script is one of `words` (a crude scan of the whole text, used only to
/// keep a denial: any mention counts), outside comments and the literal strings `echo` and
/// `printf` print ([`code_view`]: s25, a comment naming `pipefail` or `trap` made a denial).
pub(super) fn mentions(src: &str, words: &[&str]) -> bool {
    // (A text names a word only where it holds it: most texts hold none of the words asked for,
    // and a substring search costs less than splitting the text into words.)
    if !words.iter().any(|x| src.contains(x)) {
        return false;
    }
    let code = code_view(src);
    let src: &str = &code;
    // (By bytes: the delimiters are every byte but ASCII letters, digits, `_` and `-`, so a
    // non-ASCII character only separates words, as it would by chars.)
    src.as_bytes()
        .split(|b| !(b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-'))
        .any(|w| words.iter().any(|x| x.as_bytes() == w))
}

/// The [`GUARD`] condition that holds when `cond` (one condition) does not (`T` and `F`, `P` and
/// `Q` swapped).
fn negated(cond: &str) -> String {
    let mut out = String::with_capacity(cond.len());
    let mut chars = cond.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == COND {
            match chars.next() {
                Some('T') => out.push('F'),
                Some('F') => out.push('T'),
                Some('P') => out.push('Q'),
                Some('Q') => out.push('P'),
                Some(k) => out.push(k),
                None => {}
            }
        }
    }
    out
}

impl Ctx<'_> {
    /// `if`: each condition runs if the ones before it failed, each branch if its condition
    /// succeeded and the ones before failed, the `else` branch if all failed; each walked in a
    /// [`GUARD`] region saying so.
    fn guarded_if<'t>(&mut self, n: Node<'t>, walk: &Walk<'t>, depth: usize, out: &mut Vec<String>) {
        // A function defined alike in every branch is defined before the `if` too, so that no
        // branch's region leaves it uncertain: nothing in the `if` can call it before (no call of
        // any function in its text but those definitions).
        let (alike, _) = super::status::alike_definitions(n, walk.src);
        let defined = walk.defined_functions.get_or_init(|| super::status::defined_functions(walk.src));
        // (With no function known or defined, nothing in it is a call: its words are not split.)
        let calls = !(defined.is_empty() && self.functions.is_empty())
            && text(n, walk).split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')).any(|w| {
                !alike.iter().any(|(m, _)| text(*m, walk) == w)
                    && (defined.iter().any(|d| d == w) || self.functions.iter().any(|(f, _)| f == w))
            });
        if !calls {
            for (name, body) in &alike {
                out.push(format!("{FUNCTION}{}{FUNCTION}{}", text(*name, walk), text(*body, walk)));
            }
        }
        let mut cursor = n.walk();
        let kids: Vec<Node<'t>> = n.children(&mut cursor).collect();
        // The if's own branch, then each elif/else clause's.
        let mut branches: Vec<Vec<Node<'t>>> = vec![Vec::new()];
        for k in kids {
            if matches!(k.kind_name(), "elif_clause" | "else_clause") {
                let mut c = k.walk();
                branches.push(k.children(&mut c).collect());
            } else if let Some(last) = branches.last_mut() {
                last.push(k);
            }
        }
        let mut failed = String::new();
        for branch in &branches {
            let then_at = branch.iter().position(|k| k.kind_name() == "then");
            let body_at = then_at.map_or(1, |t| t + 1).min(branch.len());
            let mut taken = failed.clone();
            if let Some(t) = then_at {
                let cond = &branch[1.min(t)..t];
                // The first condition runs whenever the `if` does: no region of its own (a
                // [`GUARD`] with no condition would end the region around the `if`, s23: a
                // nested `if` made what its outer `if` or loop assigned or ran certain).
                let guarded = !failed.is_empty();
                if guarded {
                    out.push(format!("{GUARD}{failed}"));
                }
                for k in cond {
                    self.statements(*k, walk, depth, out);
                }
                if guarded {
                    out.push(GUARD.to_string());
                }
                let holds = self.condition(cond, true, walk, depth);
                failed.push_str(&negated(&holds));
                taken.push_str(&holds);
            }
            out.push(format!("{GUARD}{taken}"));
            for k in &branch[body_at..] {
                self.statements(*k, walk, depth, out);
            }
            out.push(GUARD.to_string());
        }
    }

    /// `case WORD in ...`: each item's body in a [`GUARD`] region (the word matches one of its
    /// patterns and none of the items' before); with a fall-through (`;&`, `;;&`), a region whose
    /// condition (`K`) is the whole statement, which decides the items that run as bash does.
    fn guarded_case<'t>(&mut self, n: Node<'t>, walk: &Walk<'t>, depth: usize, out: &mut Vec<String>) {
        let mut cursor = n.walk();
        let kids: Vec<Node<'t>> = n.children(&mut cursor).collect();
        let value = n.child_by_field("value");
        let terminator = |item: &Node<'t>| {
            let mut c = item.walk();
            let fall = item.children_by_field("fallthrough", &mut c).next();
            fall.map_or(";;", |f| if f.kind_name() == ";&" { ";&" } else { ";;&" })
        };
        let fallthrough =
            kids.iter().filter(|k| k.kind_name() == "case_item").any(|item| terminator(item) != ";;");
        let word = value.and_then(|v| self.cond_piece(&[v], walk, depth));
        // With a fall-through: every item and its patterns, for the `K` condition.
        let mut whole = word.clone().map(|w| format!("{PATTERN}{w}")).filter(|_| fallthrough);
        let mut items: Vec<(Node<'t>, usize, String, bool)> = Vec::new();
        for k in &kids {
            if k.kind_name() != "case_item" {
                continue;
            }
            let mut c = k.walk();
            let item: Vec<Node<'t>> = k.children(&mut c).collect();
            let body_at = item.iter().position(|p| p.kind_name() == ")").map_or(item.len(), |p| p + 1);
            let mut c = k.walk();
            let patterns: Vec<Node<'t>> = k.children_by_field("value", &mut c).collect();
            let mut pats = String::new();
            let mut known = word.is_some();
            for p in &patterns {
                match self.cond_piece(&[*p], walk, depth) {
                    Some(piece) => {
                        pats.push(PATTERN);
                        pats.push_str(&piece);
                    }
                    None => known = false,
                }
            }
            if let Some(w) = whole.as_mut() {
                if known {
                    w.push_str(&format!("{PATTERN};{}{pats}", terminator(k)));
                } else {
                    whole = None;
                }
            }
            items.push((*k, body_at, pats, known));
        }
        let mut before = String::new();
        let mut index = 0;
        for k in &kids {
            if k.kind_name() != "case_item" {
                self.statements(*k, walk, depth, out);
                continue;
            }
            let (_, body_at, pats, known) = &items[index];
            let (matched, unmatched) = match (&word, &whole, known) {
                (_, Some(all), _) => (format!("{COND}K{index}{all}"), String::new()),
                (Some(w), None, true) if !fallthrough => {
                    (format!("{COND}M{w}{pats}"), format!("{COND}N{w}{pats}"))
                }
                _ => (format!("{COND}U"), String::new()),
            };
            index += 1;
            // A substitution in a pattern runs when the items before did not match (`case ok in
            // $(check && echo ok))`: bash manual, "Conditional Constructs"), before the body.
            let mut c = k.walk();
            let run: Vec<Node<'t>> = k
                .children_by_field("value", &mut c)
                .filter(|p| ["$(", "`", "<(", ">("].iter().any(|s| text(*p, walk).contains(s)))
                .collect();
            if !run.is_empty() {
                let open = !before.is_empty();
                if open {
                    out.push(format!("{GUARD}{before}"));
                }
                for p in run {
                    self.statements(p, walk, depth, out);
                }
                if open {
                    out.push(GUARD.to_string());
                }
            }
            out.push(format!("{GUARD}{before}{matched}"));
            let mut c = k.walk();
            for b in k.children(&mut c).skip(*body_at) {
                self.statements(b, walk, depth, out);
            }
            out.push(GUARD.to_string());
            before.push_str(&unmatched);
        }
    }

    /// The piece of a word or a test command, for a [`GUARD`] condition (`None` if it is not one
    /// piece).
    fn cond_piece<'t>(&mut self, nodes: &[Node<'t>], walk: &Walk<'t>, depth: usize) -> Option<String> {
        let mut pieces = Vec::new();
        self.piece(nodes, walk, depth, &mut pieces);
        let piece = pieces.pop()?;
        (!piece.contains([GUARD, COND, PATTERN, FUNCTION, UNCOUPLED])).then_some(piece)
    }

    /// The [`GUARD`] condition that the statements `nodes` succeed (`success`) or fail: a test
    /// (`[ ]`, `[[ ]]`, `test`, `(( ))`, `true`, `false`, `:`, with `!`), a chain of them joined by
    /// `&&` alone or `||` alone (`P`: every part holds, `Q`: not every part holds, each part after
    /// [`PATTERN`]), or unknown. It is one condition, so [`negated`] gives its opposite.
    fn condition<'t>(&mut self, nodes: &[Node<'t>], success: bool, walk: &Walk<'t>, depth: usize) -> String {
        let named: Vec<Node<'t>> =
            nodes.iter().filter(|k| k.is_named() && k.kind_name() != "comment").copied().collect();
        let unknown = format!("{COND}U");
        let [first] = named.as_slice() else {
            return unknown;
        };
        if first.kind_name() == "list" {
            // `A && B` succeeds when both do; `A || B` fails when both fail.
            let mut parts = Vec::new();
            let Some(and) = self.chain(*first, None, &mut parts) else {
                return unknown;
            };
            let mut out = format!("{COND}{}", if success == and { 'P' } else { 'Q' });
            for part in parts {
                match self.test_part(part, and, walk, depth) {
                    Some(piece) => {
                        out.push(PATTERN);
                        out.push_str(&piece);
                    }
                    None => return unknown,
                }
            }
            return out;
        }
        match self.test_part(*first, success, walk, depth) {
            Some(piece) => format!("{COND}{piece}"),
            None => unknown,
        }
    }

    /// `[TESTS &&] CLIENT || FALLBACK`, where CLIENT is a known client (a check of its own): when
    /// the tests hold, FALLBACK runs only after CLIENT failed, so a dependency it reaches cannot fail
    /// the probe by its outage alone (the probe passes whenever CLIENT does): what it reaches is a
    /// warning (`Dependency::uncoupled`). When a test fails, FALLBACK runs whatever CLIENT gives:
    /// analysed as any other piece. False (nothing written) for any other shape.
    fn fallback<'t>(
        &mut self,
        first: Node<'t>,
        second: Node<'t>,
        walk: &Walk<'t>,
        depth: usize,
        out: &mut Vec<String>,
    ) -> bool {
        let mut parts = Vec::new();
        if first.kind_name() == "list" {
            if self.chain(first, None, &mut parts) != Some(true) {
                return false;
            }
        } else {
            parts.push(first);
        }
        let Some((client, tests)) = parts.split_last() else {
            return false;
        };
        // `hostname -i || FALLBACK`: FALLBACK runs only without `hostname` (`pod_output`).
        let own_name = tests.is_empty()
            && super::pod_output::hostname_fallback(
                client.kind_name(),
                text(*client, walk),
                second.kind_name(),
            );
        let name = client.child_by_field("name").map(|n| text(n, walk));
        let mut c = client.walk();
        let args: Vec<String> =
            client.children_by_field("argument", &mut c).map(|a| text(a, walk).to_string()).collect();
        let program = match name.filter(|_| client.kind_name() == "command").map(super::context::basename) {
            _ if own_name => "hostname",
            Some(program) => program,
            None => return false,
        };
        if !own_name
            && (super::clients::find_client(program, &args).is_none() || second.kind_name() != "command")
        {
            return false;
        }
        // CLIENT must be this Pod's own check: FALLBACK runs whenever CLIENT fails and its status
        // is then the list's, so after a remote CLIENT (`pg_isready -h db || pg_isready -h db2`, a
        // retry `curl -sf http://db/ || curl -sf http://db/`) it is judged as itself (bash 5.2 /
        // dash 0.5.12 exit 2 / 2 with the database down). Only a CLIENT written out in full is
        // read; one with a value known at run time stays a fallback (no deny on a guess).
        if args.iter().all(|a| !a.contains(['$', '`', '\\'])) {
            let plain: Vec<String> = args
                .iter()
                .map(|a| {
                    let q = |c: char| a.len() >= 2 && a.starts_with(c) && a.ends_with(c);
                    if q('"') || q('\'') { a[1..a.len() - 1].to_string() } else { a.clone() }
                })
                .collect();
            let hits = self.tool_hits(program, &plain, &[]);
            if hits.iter().any(|h| self.is_dependency(h)) {
                return false;
            }
        }
        let mut all = String::new();
        for t in tests {
            match self.test_part(*t, true, walk, depth) {
                Some(piece) => {
                    all.push(PATTERN);
                    all.push_str(&piece);
                }
                None => return false,
            }
        }
        let mut inner = Vec::new();
        self.statements(second, walk, depth, &mut inner);
        if !tests.is_empty() {
            // A test failed: FALLBACK runs whatever CLIENT gives.
            out.push(format!("{GUARD}{COND}Q{all}"));
            out.extend(inner.iter().cloned());
            out.push(GUARD.to_string());
        }
        let how = format!("it runs only after `{program}` before it failed (`||`)");
        let cond = if tests.is_empty() { format!("{COND}U") } else { format!("{COND}P{all}{COND}U") };
        out.push(format!("{GUARD}{cond}"));
        for piece in inner {
            if piece.starts_with([FUNCTION, UNCOUPLED, GUARD, PIPE, EXIT]) {
                out.push(piece);
            } else {
                out.push(format!("{UNCOUPLED}{how}{UNCOUPLED}{piece}"));
            }
        }
        out.push(GUARD.to_string());
        true
    }

    /// The parts of a chain of `&&` alone (`Some(true)`) or `||` alone (`Some(false)`), at most 8.
    fn chain<'t>(&self, n: Node<'t>, op: Option<bool>, parts: &mut Vec<Node<'t>>) -> Option<bool> {
        if n.kind_name() != "list" {
            parts.push(n);
            return (parts.len() <= 8).then_some(op?);
        }
        // (8 lists down the left are 9 parts or more: not walked down, as deep as the chain, s15.)
        let mut spine = Some(n);
        for _ in 0..8 {
            spine = spine.filter(|s| s.kind_name() == "list").and_then(|s| s.named_child(0));
        }
        if spine.is_some() {
            return None;
        }
        let mut c = n.walk();
        let kids: Vec<Node<'t>> = n.children(&mut c).filter(|k| k.kind_name() != "comment").collect();
        let [left, o, right] = kids.as_slice() else {
            return None;
        };
        let and = match o.kind_name() {
            "&&" => true,
            "||" => false,
            _ => return None,
        };
        if op.is_some_and(|op| op != and) {
            return None;
        }
        self.chain(*left, Some(and), parts)?;
        self.chain(*right, Some(and), parts)
    }

    /// One test with its kind letter, `T` (it succeeds) or `F` (it fails): `[ ]`, `[[ ]]`,
    /// `test`, `(( ))`, `true`, `false`, `:`, with `!`.
    fn test_part<'t>(
        &mut self,
        node: Node<'t>,
        success: bool,
        walk: &Walk<'t>,
        depth: usize,
    ) -> Option<String> {
        let mut node = node;
        let mut success = success;
        while node.kind_name() == "negated_command" {
            node = node.named_child(0)?;
            success = !success;
        }
        // (`(( ))` is a `compound_statement` of the grammar; `{ }` is one too, and not decided.)
        let arithmetic = node.kind_name() == "compound_statement" && text(node, walk).starts_with("((");
        if !matches!(node.kind_name(), "test_command" | "command") && !arithmetic {
            return None;
        }
        let piece = self.cond_piece(&[node], walk, depth)?;
        Some(format!("{}{piece}", if success { 'T' } else { 'F' }))
    }
}

/// `word` without the array subscripts of its expansions (`"${a[@]}"`, `${a[1]}` read as
/// `"${a}"`, `${a}`): an array's elements are words like any other for a `for` loop.
fn without_subscripts(word: &str) -> String {
    let mut out = word.to_string();
    for sub in ["[@]}", "[*]}"] {
        out = out.replace(sub, "}");
    }
    while let Some(at) = out.find('[') {
        let rest = &out[at + 1..];
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        if digits == 0 || !rest[digits..].starts_with("]}") {
            break;
        }
        out.replace_range(at..at + 1 + digits + 1, "");
    }
    out
}
