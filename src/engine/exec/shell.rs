//! Stage 2: shell parsing, a script split into simple commands.
//!
//! A script is parsed by tree-sitter-bash (the bash grammar editors and GitHub use; error-tolerant,
//! no I/O) and its syntax tree walked in order. Each simple command, with its redirections, becomes
//! one *piece*: its text as written (quotes kept, for the word stage), every `$` marked by how it is
//! quoted ([`LDOLLAR`] literal, [`QDOLLAR`] double-quoted) and every command substitution
//! (`$(...)`, backticks), process substitution (`<(...)`) and arithmetic expansion (`$((...))`)
//! replaced by one reference marker; the substitution's own commands come before the command that
//! contains it. Here-document bodies, comments, `case` patterns, `for` word lists, function names
//! and arithmetic are not commands, by construction of the grammar. `[ ]` and `[[ ]]` are pieces
//! (their program is `[` or `[[`, no client).
//!
//! A script with a syntax error is analysed up to the line the error is on (the shell runs the
//! lines before it and stops there); the commands from that line on are reported as not analysed.
//! A script that is a single plain command (no operator, substitution, redirection, quote left
//! open or reserved word) is not parsed: it is its own piece.
//!
//! Parsing cost: tree-sitter's error recovery is quadratic in time and memory on some hostile
//! shapes (8,192 `a|` take about a second and 680 MB), so an object's scripts may use at most
//! [`MAX_OBJECT_PARSE_AREA`] (the sum of their squared lengths), and a script parsed once is not
//! parsed again for the same object.

use std::ops::Range;
use std::sync::Arc;

use crate::engine::exec::kinds::KindName;
use tree_sitter::Node;

use super::MAX_DEPTH;
use super::context::{Ctx, LDOLLAR, QDOLLAR, is_ident};
use super::parse::{ParseGap, Parsed, new_parser, parse_script};

/// Starts a word that is a redirection in the syntax tree (a `file_redirect`, `heredoc_redirect` or
/// `herestring_redirect` node: `>f`, `2>&1`, `<<EOF`, `<<< word`): [`split_redirections`] takes
/// these, and only these, as redirections, so a quoted word that reads like one (`'>/dev/tcp/db/1'`)
/// stays an argument by construction. (Input text holding it reads U+FFFD.)
pub(super) const REDIRECT: char = '\u{E004}';

#[derive(Clone, Copy, PartialEq, Eq)]
enum Quote {
    None,
    Single,
    Double,
}

/// Shell reserved words (and `!`, `{`, `}`) skipped at the start of a command.
const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "while", "until", "do", "done", "for", "in", "case", "esac", "!",
    "{", "}", "select", "function",
];

/// Node kinds that are one simple command each (a piece).
pub(super) fn is_piece(kind: &str) -> bool {
    matches!(
        kind,
        "command"
            | "declaration_command"
            | "unset_command"
            | "test_command"
            | "variable_assignment"
            | "variable_assignments"
    )
}

/// Node kinds that are one redirection each (marked with [`REDIRECT`] in a piece).
pub(super) fn is_redirect(kind: &str) -> bool {
    matches!(kind, "file_redirect" | "heredoc_redirect" | "herestring_redirect")
}

/// Appends `text` to the piece `cur`, in quote state `quote`: `$` marked as literal (single quotes,
/// a backslash) or double-quoted, backslash-newline dropped, a redirection operator glued to a word
/// (`url>/dev/null`) spaced from it, `${...}` copied as written.
fn push_text(text: &str, quote: &mut Quote, cur: &mut String) {
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match *quote {
            Quote::Single => match c {
                '\'' => {
                    *quote = Quote::None;
                    cur.push(c);
                }
                '$' => cur.push(LDOLLAR),
                _ => cur.push(c),
            },
            Quote::Double | Quote::None => match c {
                '"' if *quote == Quote::Double => {
                    *quote = Quote::None;
                    cur.push(c);
                }
                '"' => {
                    *quote = Quote::Double;
                    cur.push(c);
                }
                '\'' if *quote == Quote::None => {
                    *quote = Quote::Single;
                    cur.push(c);
                }
                '\\' => match chars.next() {
                    Some('\n') => {}
                    Some('$') => cur.push(LDOLLAR),
                    Some(n) => {
                        cur.push('\\');
                        cur.push(n);
                    }
                    None => cur.push('\\'),
                },
                // bash's ANSI-C quoting `$'...'`: the escapes decoded, the text then literal.
                '$' if *quote == Quote::None && chars.peek() == Some(&'\'') => {
                    chars.next();
                    super::words::push_ansi_c(&mut chars, cur);
                }
                '$' => {
                    cur.push(if *quote == Quote::Double { QDOLLAR } else { '$' });
                    if chars.peek() == Some(&'{') {
                        // `${...}` as written, up to its matching brace.
                        let mut level = 0usize;
                        for ch in chars.by_ref() {
                            cur.push(ch);
                            if ch == '{' {
                                level += 1;
                            } else if ch == '}' {
                                level = level.saturating_sub(1);
                                if level == 0 {
                                    break;
                                }
                            }
                        }
                    }
                }
                '<' | '>' if *quote == Quote::None => {
                    // Keep a file-descriptor number attached (`2>&1`).
                    let word = cur.rsplit(char::is_whitespace).next().unwrap_or("");
                    if !word.is_empty()
                        && !word
                            .chars()
                            .all(|d| d.is_ascii_digit() || matches!(d, '<' | '>' | '&' | REDIRECT))
                    {
                        cur.push(' ');
                    }
                    cur.push(c);
                }
                _ => cur.push(c),
            },
        }
    }
}

/// A script that is one plain simple command, as its piece: no operator, redirection,
/// substitution, comment, here-document, reserved word or unbalanced quote, so no parse is needed.
/// (Line continuations are allowed: a long command written over several lines.)
fn plain_command(script: &str) -> Option<String> {
    // (A YAML block scalar ends in a newline: blanks at the end are no command.)
    let script = script.trim_end();
    let bytes = script.as_bytes();
    // `${` opened and not closed yet (a `{` or `}` of anything else is left to the parser).
    let mut braces = 0usize;
    for (i, &b) in bytes.iter().enumerate() {
        let ok = match b {
            b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>' | b'`' | b'#' | b'\r' => false,
            b'{' if i > 0 && bytes[i - 1] == b'$' => {
                braces += 1;
                true
            }
            b'}' if braces > 0 => {
                braces -= 1;
                true
            }
            b'{' | b'}' => false,
            b'\n' => i > 0 && bytes[i - 1] == b'\\',
            _ => true,
        };
        if !ok {
            return None;
        }
    }
    if braces > 0 {
        return None;
    }
    // The program: the first word that is not an assignment (`A=1 B=x cmd`).
    let first = script.split_whitespace().find(|w| split_assignment(w).is_none()).unwrap_or("");
    if KEYWORDS.contains(&first) || matches!(first, "[" | "[[" | "time" | "coproc") || first.contains('=') {
        return None;
    }
    let mut quote = Quote::None;
    let mut piece = String::with_capacity(script.len());
    push_text(script.trim(), &mut quote, &mut piece);
    // An unbalanced quote is a syntax error: the parser reports it.
    (quote == Quote::None && !piece.ends_with('\\')).then_some(piece)
}

/// The script being walked: its text, where analysis stops (a syntax error's line) and the
/// here-document bodies the grammar misread.
pub(super) struct Walk<'s> {
    pub(super) src: &'s str,
    pub(super) cut: usize,
    skips: &'s [Range<usize>],
    /// The text has a `&` or a `|`: without one, no statement runs in the background, after `||`
    /// or in a pipeline, so none is uncoupled (`flow::uncoupled` need not look).
    pub(super) has_bars: bool,
    /// The text has a `<` or a `>`: without one it has no redirection (every redirection node,
    /// `file_redirect`, `heredoc_redirect`, `herestring_redirect`, holds one, and the parser's
    /// patches make none of other bytes), so none is regrouped onto a command
    /// ([`super::grammar::regrouped_redirects`], whose steps up the tree cost the depth each).
    has_angles: bool,
    /// A substitution nested [`MAX_DEPTH`] deep was left unwalked: the split depends on the depth
    /// it was made at, not on the text alone.
    depth_cut: std::cell::Cell<bool>,
    /// The text mentions `alias`: each command's line is written down (`flow::SCOPE`).
    pub(super) aliases: bool,
    /// What the script lets `status::discarded` conclude (`None`: nothing, the script may read a
    /// status it does not follow, or it has a syntax error).
    pub(super) status: Option<super::status::Rules>,
    /// The text, or a script that calls the function it is the body of, mentions `pipefail`.
    pub(super) pipefail: bool,
    /// Which of `parsed.trees` is being walked (an index).
    pub(super) tree: std::cell::Cell<usize>,
    /// For each of `parsed.trees`, its root and its top-level function definitions as
    /// `status::discarded` judges them (made when first asked: once per tree, not per command).
    pub(super) top_functions: Vec<(Node<'s>, std::cell::OnceCell<Vec<super::status::TopFunction>>)>,
    /// For each of `parsed.trees`, what `status::discarded` reads of the whole tree (its `set`
    /// commands, its `exec`s, its function bodies reading `$?`): made when first asked, once per
    /// tree, not per command (issue #9's cost bar).
    pub(super) tree_facts: Vec<std::cell::OnceCell<super::status::TreeFacts<'s>>>,
    /// `status::defined_functions` of the text, made when first asked.
    pub(super) defined_functions: std::cell::OnceCell<Vec<String>>,
    /// Work done by `status::discarded` on this text (steps up the tree, `set` commands and
    /// ancestors looked at): counted against the analysis's work units (`flow`).
    pub(super) status_work: std::cell::Cell<usize>,
    /// `status::discarded`'s last path and answers, so its walks cost the text's size.
    pub(super) status_cache: super::status::WalkCache<'s>,
}

impl Ctx<'_> {
    /// Split `script` into simple commands (pieces: raw text with markers), appending to `out`.
    /// Command substitutions are split too and appended before the command containing them.
    pub(super) fn split_script(&mut self, script: &str, depth: usize, out: &mut Vec<String>) {
        // (Markers are not ASCII: an ASCII script is its own text.)
        let text: String = if script.is_ascii() {
            script.to_string()
        } else {
            script
                .chars()
                .map(|c| match c {
                    LDOLLAR | QDOLLAR => '$',
                    REDIRECT => '\u{FFFD}',
                    c => c,
                })
                .collect()
        };
        // (A here-document's operator line that goes on with commands, read as the shells read
        // it: `heredoc::group_here_document_lines`.)
        let text = match super::heredoc::group_here_document_lines(&text) {
            std::borrow::Cow::Owned(grouped) => grouped,
            std::borrow::Cow::Borrowed(_) => text,
        };
        let start = out.len();
        let outside_walks = self.uncoupling.is_empty();
        let by_text = match plain_command(&text) {
            Some(piece) => {
                if !piece.is_empty() {
                    out.push(piece);
                }
                true
            }
            None => self.split_parsed(&text, depth, out),
        };
        // An exec probe's own script (not a function's body or a nested shell's): its commands are
        // what the object's rules split it into (`split_commands_in`), kept for them so they
        // need not walk its tree again.
        if by_text && outside_walks && depth == 1 && self.calls == 0 {
            self.keep_split_for_rules(script, &out[start.min(out.len())..]);
        }
    }

    /// [`Ctx::split_script`] by the parser (`text` with `$` as written). True when the pieces
    /// depend on the text alone as far as the parse goes (not cut short by the object's parse
    /// allowance, no syntax error, whose recovery spends the allowance too, no substitution left
    /// unwalked at this depth).
    fn split_parsed(&mut self, text: &str, depth: usize, out: &mut Vec<String>) -> bool {
        let is_body = std::mem::take(&mut self.splitting_body);
        // (A text walked costs its set-up and its scans: `WALK_UNITS`.)
        if !self.spend_units(
            super::WALK_UNITS + super::WALK_UNITS_PER_WEIGHT * super::parse::weight(text.as_bytes()),
        ) {
            return false;
        }
        let Some(mut parsed) = self.parse(text) else {
            return false;
        };
        // A here-document no line ends runs to the end of the script (bash 5.2 and dash): the
        // script is read with its delimiter line added, when that reads without an error.
        let closed;
        let mut text = text;
        if let Some(delimiter) = parsed.open_heredoc.as_deref() {
            let sep = if text.ends_with('\n') { "" } else { "\n" };
            let with_end = format!("{text}{sep}{delimiter}\n");
            if let Some(reparsed) = self.parse(&with_end).filter(|p| p.gap.is_none()) {
                closed = with_end;
                text = &closed;
                parsed = reparsed;
            }
        }
        // A function's `exit $1` read as its calls give it (`script::positional_exit_words`).
        let rewritten;
        let mut exits_rewritten = false;
        if parsed.gap.is_none() {
            match self.read_positional_exits(text, &parsed.trees) {
                Err(()) => return false,
                Ok(Some((new, reparsed))) => {
                    rewritten = new;
                    text = &rewritten;
                    parsed = reparsed;
                    exits_rewritten = true;
                }
                Ok(None) => {}
            }
        }
        if let Some(gap) = parsed.gap {
            self.parse_gap.get_or_insert(gap);
        }
        let has_bars = text.bytes().any(|b| b == b'&' || b == b'|');
        let has_angles = text.bytes().any(|b| b == b'<' || b == b'>');
        let aliases = text.contains("alias") && super::flow::mentions(text, &["alias"]);
        let walk = Walk {
            src: text,
            cut: parsed.cut,
            skips: &parsed.skips,
            has_bars,
            has_angles,
            depth_cut: std::cell::Cell::new(false),
            aliases,
            pipefail: self.pipefail || super::flow::mentions(text, &["pipefail"]),
            status: if parsed.gap.is_none() && !self.status_read_elsewhere {
                let set = self.function_set();
                let mut rules = super::status::rules(
                    &super::heredoc::blank_plain_bodies(text, &parsed.trees),
                    self.errexit,
                    self.pipefail,
                    &self.functions,
                    set.reads_status,
                    &self.uncertain_functions,
                    (self.env.vars.keys().cloned().collect(), self.env.has_env_from),
                    self.sh_err_trap,
                );
                if let Some(r) = &mut rules {
                    self.body_rules(r, is_body);
                    r.bash = self.shell == Some("bash");
                    r.share_known_ok(
                        &self.functions,
                        self.uncertain_functions.len(),
                        &set.known_ok,
                        &|body| self.body_facts(body).known,
                    );
                }
                rules
            } else {
                None
            },
            tree: std::cell::Cell::new(0),
            top_functions: parsed.trees.iter().map(|t| (t.root_node(), std::cell::OnceCell::new())).collect(),
            tree_facts: parsed.trees.iter().map(|_| std::cell::OnceCell::new()).collect(),
            defined_functions: std::cell::OnceCell::new(),
            status_work: std::cell::Cell::new(0),
            status_cache: Default::default(),
        };
        for (i, tree) in parsed.trees.iter().enumerate() {
            walk.tree.set(i);
            self.statements(tree.root_node(), &walk, depth, out);
        }
        // (An end of the script that nothing follows says nothing; a function's body ends its
        // caller's script there.)
        while !is_body && out.last().is_some_and(|p| p.starts_with(super::flow::EXIT)) {
            out.pop();
        }
        // (A syntax error's recovery re-parses within the allowance too: see `parse::clean_prefix`.)
        !exits_rewritten
            && !walk.depth_cut.get()
            && !matches!(parsed.gap, Some(ParseGap::OverParseBudget(_) | ParseGap::SyntaxError(_)))
    }

    /// Keeps the commands of `script` (split into `pieces` by this analysis) for the object's
    /// rules, when a split of its own would give the same: the script needs no sanitizing (the
    /// rules' split sanitizes it), and nothing this analysis did before changed how it walks
    /// (loops walked per word, a full table of substitutions). Substitution markers are this
    /// analysis's, so the words are rendered here, as `split_commands_in` renders its own.
    fn keep_split_for_rules(&self, script: &str, pieces: &[String]) {
        let Some(budget) = self.object_budget else {
            return;
        };
        if self.loop_walks_left != super::flow::MAX_LOOP_WALKS
            || self.refs.len() >= super::context::MAX_REFS
            || budget.parses.borrow().has_split(script)
            || !(script.is_ascii() || super::context::sanitize(script) == script)
            // (The rules' split lists a function's body at its definition, split on its own:
            // `with_function_bodies`. Not kept: the rules split such a script themselves.)
            || pieces.iter().any(|p| p.starts_with(super::flow::FUNCTION))
        {
            return;
        }
        let commands = super::commands_of(self, pieces).into();
        budget.parses.borrow_mut().keep_split(script, &commands);
    }

    /// The parse of `text`: from the object's cache, else from the caller's
    /// ([`super::ParseCache`]) when the parse allowance left covers it, or made by the object's
    /// parser within its parse allowance (without an object, by this analysis's own parser).
    pub(super) fn parse(&mut self, text: &str) -> Option<Arc<Parsed>> {
        let Some(budget) = self.object_budget else {
            if self.parser.is_none() {
                self.parser = new_parser();
            }
            let Some(parser) = self.parser.as_mut() else {
                self.parse_gap.get_or_insert(ParseGap::NoGrammar);
                return None;
            };
            return Some(Arc::new(parse_script(parser, text, &self.parse_area_left)));
        };
        let mut cache = budget.parses.borrow_mut();
        if let Some(parsed) = cache.get(text, budget.parse_owner) {
            return Some(parsed);
        }
        let parsed = cache.parse(text, budget.parse_owner, &budget.parse_area_left);
        if parsed.is_none() {
            self.parse_gap.get_or_insert(ParseGap::NoGrammar);
        }
        parsed
    }

    /// Walks `node`'s subtree in order (without recursion: lists nest as deep as they are long),
    /// appending a piece for every simple command met.
    pub(super) fn statements<'t>(
        &mut self,
        node: Node<'t>,
        walk: &Walk<'t>,
        depth: usize,
        out: &mut Vec<String>,
    ) {
        let mut cursor = node.walk();
        loop {
            let n = cursor.node();
            // (Once the work units are spent the analysis stops with its note: walking on would
            // only cost time, break10 C1.)
            let descend =
                n.start_byte() < walk.cut && !self.over_budget.get() && self.statement(n, walk, depth, out);
            if descend && cursor.goto_first_child() {
                continue;
            }
            // Nothing after an unconditional `exit`, `return` or `exec PROGRAM` in the same list
            // runs (break-it pass: `check; exit $?` followed by other commands).
            // (Both ask only of a command named `exit`, `return` or `exec`, whose text holds that
            // name: other nodes are not asked, which would cost their parent and field lookups.)
            let may_end = n.kind_name() == "command"
                && walk
                    .src
                    .get(n.start_byte()..n.end_byte())
                    .is_some_and(|t| t.contains("exit") || t.contains("return") || t.contains("exec"));
            let mut ended = may_end && super::flow::ends_its_list(n, walk.src);
            if may_end && n.end_byte() <= walk.cut && super::flow::ends_the_script(n, walk.src) {
                out.push(super::flow::EXIT.to_string());
            }
            loop {
                if cursor.node() == node {
                    return;
                }
                if !ended && cursor.goto_next_sibling() {
                    break;
                }
                ended = false;
                if !cursor.goto_parent() {
                    return;
                }
            }
        }
    }

    /// One node of the statement walk: a piece is made of a simple command; true to walk into
    /// the node's children.
    fn statement<'t>(&mut self, n: Node<'t>, walk: &Walk<'t>, depth: usize, out: &mut Vec<String>) -> bool {
        let kind = n.kind_name();
        if walk.skips.iter().any(|r| r.contains(&n.start_byte())) {
            return false;
        }
        if let Some(descend) = self.flow(n, walk, depth, out) {
            return descend;
        }
        if n.is_error()
            || matches!(kind, "comment" | "heredoc_body" | "heredoc_end" | "heredoc_start" | "file_redirect")
            || matches!(kind, "herestring_redirect" | "function_name" | "word")
        {
            return false;
        }
        if is_piece(kind) {
            if n.end_byte() <= walk.cut {
                if kind == "command" && self.calls_in_ignored_errexit(n, walk) {
                    out.push(format!("{}E", super::flow::SCOPE));
                }
                if kind == "command" && super::flow::inverted(n, walk) {
                    out.push(format!("{}!", super::flow::SCOPE));
                }
                let mut segments = vec![n];
                if walk.has_angles {
                    segments.extend(super::grammar::regrouped_redirects(n));
                }
                self.piece(&segments, walk, depth, out);
            }
            return false;
        }
        if kind == "redirected_statement" {
            let body = n.child_by_field("body");
            // (Its redirections are the last command's: see [`super::grammar::regrouped_redirects`].)
            if let Some(b) = body.filter(|b| super::grammar::last_piece(*b).is_some_and(|p| p != *b)) {
                self.statements(b, walk, depth, out);
                return false;
            }
            let mut segments: Vec<Node<'_>> = Vec::new();
            if let Some(b) = body.filter(|b| is_piece(b.kind_name())) {
                segments.push(b);
            }
            let mut cursor = n.walk();
            segments.extend(
                n.named_children(&mut cursor)
                    .filter(|c| Some(*c) != body && c.kind_name().ends_with("redirect")),
            );
            if n.end_byte() <= walk.cut || body.is_some_and(|b| !is_piece(b.kind_name())) {
                if body.is_some_and(|b| b.kind_name() == "command") && super::flow::inverted(n, walk) {
                    out.push(format!("{}!", super::flow::SCOPE));
                }
                self.piece(&segments, walk, depth, out);
            }
            // A compound body (`{ ...; } >f`, `while ...; done < <(cmd)`) holds commands of its own.
            if let Some(b) = body.filter(|b| !is_piece(b.kind_name())) {
                self.statements(b, walk, depth, out);
            }
            return false;
        }
        true
    }

    /// Makes one piece of `segments` (a command and its redirections), appending first the pieces
    /// of the substitutions in it, then the piece, then the commands a here-document's line holds
    /// after it (`cat <<EOF | cmd`).
    pub(super) fn piece<'t>(
        &mut self,
        segments: &[Node<'t>],
        walk: &Walk<'t>,
        depth: usize,
        out: &mut Vec<String>,
    ) {
        let mut cur = String::new();
        let mut subs = Vec::new();
        let mut after = Vec::new();
        for seg in segments {
            if seg.start_byte() >= walk.cut {
                break;
            }
            if !cur.is_empty() && !cur.ends_with(char::is_whitespace) {
                cur.push(' ');
            }
            if is_redirect(seg.kind_name()) {
                cur.push(REDIRECT);
            }
            self.emit(*seg, walk, depth, &mut cur, &mut subs, &mut after);
        }
        out.append(&mut subs);
        let piece = cur.trim();
        if !piece.is_empty() {
            out.push(piece.to_string());
        }
        out.append(&mut after);
    }

    /// Appends the text of `node` to `cur` (see [`push_text`]), with its substitutions replaced by
    /// markers (their pieces to `subs`), here-document bodies left out and the statements a
    /// here-document's line holds after its delimiter walked into `after`.
    fn emit<'t>(
        &mut self,
        node: Node<'t>,
        walk: &Walk<'t>,
        depth: usize,
        cur: &mut String,
        subs: &mut Vec<String>,
        after: &mut Vec<String>,
    ) {
        let mut quote = Quote::None;
        let mut at = node.start_byte();
        let end = node.end_byte().min(walk.cut);
        let mut cursor = node.walk();
        if !cursor.goto_first_child() {
            push_text(&walk.src[at..end], &mut quote, cur);
            return;
        }
        loop {
            let n = cursor.node();
            let kind = n.kind_name();
            let hole = matches!(
                kind,
                "command_substitution"
                    | "process_substitution"
                    | "arithmetic_expansion"
                    | "expansion"
                    | "heredoc_body"
                    | "heredoc_end"
                    | "comment"
            ) || (n.is_named()
                && matches!(kind, "pipeline" | "list" | "command" | "redirected_statement")
                && n.parent().is_some_and(|p| p.kind_name() == "heredoc_redirect"));
            if n.start_byte() >= end {
                break;
            }
            if is_redirect(kind) && n.start_byte() >= at && quote == Quote::None {
                push_text(&walk.src[at..n.start_byte()], &mut quote, cur);
                at = n.start_byte();
                if !cur.is_empty() && !cur.ends_with(char::is_whitespace) {
                    cur.push(' ');
                }
                cur.push(REDIRECT);
            }
            if hole {
                push_text(&walk.src[at..n.start_byte()], &mut quote, cur);
                match kind {
                    "command_substitution" | "process_substitution" | "arithmetic_expansion" => {
                        self.substitution(n, walk, depth, cur, subs);
                        // Unquoted, its output is split into words (`redis-cli $(cat f) ping`:
                        // `script::split_words`).
                        if quote == Quote::None
                            && kind == "command_substitution"
                            && let Some(m) = cur.chars().last()
                        {
                            self.split_words.insert(m);
                        }
                    }
                    "expansion" => {
                        // `${...}` as written (its value is resolved by the word stage).
                        let text = &walk.src[n.start_byte()..n.end_byte().min(end)];
                        cur.push(if quote == Quote::Double { QDOLLAR } else { '$' });
                        // (A quoted pattern's characters are literal: `${H%'[a-z]'}`.)
                        let literal = super::words::literal_quoted_pattern(text);
                        cur.push_str(literal.as_deref().unwrap_or(text).get(1..).unwrap_or(""));
                    }
                    "heredoc_body" => {
                        super::heredoc::here_document(n, walk, cur);
                        self.here_document_substitutions(n, walk, depth, subs);
                    }
                    "heredoc_end" | "comment" => {}
                    _ => {
                        if n.end_byte() <= walk.cut {
                            // `cat <<EOF | sh`: the here-document's command is piped into it.
                            if n.child(0).is_some_and(|c| matches!(c.kind_name(), "|" | "|&")) {
                                after.push(super::flow::PIPE.to_string());
                            }
                            self.statements(n, walk, depth, after);
                        }
                    }
                }
                at = n.end_byte().min(end);
            } else if !no_holes(&walk.src.as_bytes()[n.start_byte().min(end)..n.end_byte().min(end)])
                && cursor.goto_first_child()
            {
                continue;
            }
            loop {
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() || cursor.node() == node {
                    push_text(&walk.src[at.min(end)..end], &mut quote, cur);
                    return;
                }
            }
        }
        push_text(&walk.src[at.min(end)..end], &mut quote, cur);
    }

    /// A command substitution, process substitution or arithmetic expansion in a piece: its
    /// commands split (to `subs`, beyond [`MAX_DEPTH`] not), and a marker for its value.
    pub(super) fn substitution<'t>(
        &mut self,
        n: Node<'t>,
        walk: &Walk<'t>,
        depth: usize,
        cur: &mut String,
        subs: &mut Vec<String>,
    ) {
        let text = &walk.src[n.start_byte()..n.end_byte().min(walk.src.len())];
        let (content, shown) = if let Some(inner) = text.strip_prefix('`') {
            let inner = inner.strip_suffix('`').unwrap_or(inner);
            let content = inner.replace("\\`", "`").replace("\\$", "$").replace("\\\\", "\\");
            let shown = format!("`{}`", content.trim());
            (content, shown)
        } else if n.kind_name() == "command_substitution" {
            let inner = text.get(2..).unwrap_or("");
            let inner = inner.strip_suffix(')').unwrap_or(inner).to_string();
            let shown = format!("$({})", inner.trim());
            (inner, shown)
        } else {
            (text.to_string(), text.to_string())
        };
        let mut sub = Vec::new();
        walk.depth_cut.set(walk.depth_cut.get() || depth >= MAX_DEPTH);
        if depth < MAX_DEPTH {
            let mut cursor = n.walk();
            let children: Vec<Node<'_>> = n.named_children(&mut cursor).collect();
            for child in children {
                self.statements(child, walk, depth + 1, &mut sub);
            }
        }
        let m = self.substitution_ref(&content, &sub, depth, &shown);
        cur.push(m);
        // `$( )` and `<( )` run in a subshell: what they assign is gone after them.
        let scoped = n.kind_name() != "arithmetic_expansion" && !sub.is_empty();
        if scoped {
            subs.push(format!("{}(", super::flow::SCOPE));
        }
        subs.append(&mut sub);
        if scoped {
            subs.push(format!("{})", super::flow::SCOPE));
        }
    }
}

/// Whether a node's `text` can hold no node that [`Ctx::emit`] acts on (a substitution, an
/// expansion, a redirection, a here-document, a comment): it has no `$`, backquote, `<`, `>` or
/// `#`, the characters each of those starts with. Its children then need no visit: their text is
/// appended with the rest.
fn no_holes(text: &[u8]) -> bool {
    !text.iter().any(|b| matches!(b, b'$' | b'`' | b'<' | b'>' | b'#'))
}

/// Word-split one simple command (quotes removed); falls back to whitespace splitting on
/// malformed quoting. Leading reserved words are dropped.
pub(super) fn piece_words(piece: &str) -> Vec<String> {
    let words = split::split(piece).unwrap_or_else(|| piece.split_whitespace().map(str::to_string).collect());
    let skip = words.iter().take_while(|w| KEYWORDS.contains(&w.as_str())).count();
    words.into_iter().skip(skip).collect()
}

/// `NAME=value` assignment word: returns (name, value).
pub(super) fn split_assignment(w: &str) -> Option<(&str, &str)> {
    let (n, v) = w.split_once('=')?;
    if is_ident(n) { Some((n, v)) } else { None }
}

/// Index just past the `)` closing a `$(` whose content starts at `i`, ignoring quotes.
pub(super) fn skip_parens(chars: &[char], mut i: usize) -> usize {
    let mut level = 1usize;
    while i < chars.len() {
        match chars[i] {
            '(' => level += 1,
            ')' => {
                level -= 1;
                if level == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    chars.len()
}

/// The redirections of `piece` whose targets [`split_redirections`] returns, in the same order,
/// each as one word (`</dev/tcp/db/5432`; `> /dev/tcp/db/5432` is `>/dev/tcp/db/5432`), for messages.
pub(super) fn redirection_texts(piece: &str, lit: impl Fn(&String) -> String) -> Vec<String> {
    let mut args = piece_words(piece);
    let (_, redirections) = redirections(&mut args, lit);
    let mut out = Vec::new();
    for r in redirections.iter().filter(|r| !r.input) {
        let written = args[r.at].strip_prefix(REDIRECT).unwrap_or(&args[r.at]);
        match (&r.attached, args.get(r.at + 1)) {
            (Some(_), _) => out.push(written.to_string()),
            (None, Some(next)) => out.push(format!("{written}{next}")),
            (None, None) => {}
        }
    }
    out
}

/// Splits a simple command's words into the command proper and the targets of its redirections
/// (`>f`, `2>/dev/null`, `>> f`, `< f`, `&>f`, `2>&1`; a bare operator takes the next word). A
/// redirection is a word the parser marked ([`REDIRECT`]); any other word is an argument, however
/// it reads (bash reads an operator only unquoted, and the parser knows which are).
pub(super) fn split_redirections(piece: &str, lit: impl Fn(&String) -> String) -> (Vec<String>, Vec<String>) {
    let mut args = piece_words(piece);
    let (words, redirections) = redirections(&mut args, lit);
    // (A bare operator's target, `args[at + 1]`, is never one of the words moved out.)
    let targets = redirections
        .into_iter()
        .filter(|r| !r.input)
        .filter_map(|r| r.attached.or_else(|| args.get_mut(r.at + 1).map(std::mem::take)))
        .collect();
    (words, targets)
}

/// One redirection among a simple command's words.
struct Redirection {
    /// The index of its marked word.
    at: usize,
    /// A here-string or here-document: its word is input, not a file.
    input: bool,
    /// The target written in the same word (`>f`, `2>&1`), literal; `None` for a bare operator,
    /// whose target is the next word.
    attached: Option<String>,
}

/// A simple command's words (the marks of [`REDIRECT`] taken off the ones that are no
/// redirection after all) and its redirections, in order. The words are moved out of `args`
/// (left empty there); a redirection's marked word and a bare operator's target stay.
fn redirections(args: &mut [String], lit: impl Fn(&String) -> String) -> (Vec<String>, Vec<Redirection>) {
    let mut words = Vec::with_capacity(args.len());
    let mut found = Vec::new();
    let mut k = 0;
    while k < args.len() {
        let Some(redirect) = args[k].strip_prefix(REDIRECT) else {
            words.push(std::mem::take(&mut args[k]));
            k += 1;
            continue;
        };
        let text = lit(&redirect.to_string());
        let digits = text.chars().take_while(char::is_ascii_digit).count();
        let op_part = &text[digits..];
        let op = ["<<<", "<<-", "<<", "&>>", ">>", "&>", ">&", "<&", "<>", ">|", ">", "<"]
            .into_iter()
            .find(|op| op_part.starts_with(*op));
        let Some(op) = op else {
            words.push(redirect.to_string());
            k += 1;
            continue;
        };
        let target = &op_part[op.len()..];
        let attached = (!target.is_empty()).then(|| target.to_string());
        found.push(Redirection { at: k, input: op.starts_with("<<"), attached: attached.clone() });
        k += if attached.is_some() { 1 } else { 2 };
    }
    (words, found)
}

mod split;

#[cfg(test)]
mod tests;
