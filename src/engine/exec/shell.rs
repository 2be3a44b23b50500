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

use tree_sitter::Node;

use super::MAX_DEPTH;
use super::context::{Ctx, LDOLLAR, QDOLLAR, is_ident};
use super::parse::{ParseGap, Parsed, new_parser, parse_script};

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
fn is_piece(kind: &str) -> bool {
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
                        && !word.chars().all(|d| d.is_ascii_digit() || matches!(d, '<' | '>' | '&'))
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
    let first = script.split_whitespace().next().unwrap_or("");
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
}

impl Ctx<'_> {
    /// Split `script` into simple commands (pieces: raw text with markers), appending to `out`.
    /// Command substitutions are split too and appended before the command containing them.
    pub(super) fn split_script(&mut self, script: &str, depth: usize, out: &mut Vec<String>) {
        let text: String =
            script.chars().map(|c| if c == LDOLLAR || c == QDOLLAR { '$' } else { c }).collect();
        if let Some(piece) = plain_command(&text) {
            if !piece.is_empty() {
                out.push(piece);
            }
            return;
        }
        let Some(parsed) = self.parse(&text) else {
            return;
        };
        if let Some(gap) = parsed.gap {
            self.parse_gap.get_or_insert(gap);
        }
        let walk = Walk { src: &text, cut: parsed.cut, skips: &parsed.skips };
        for tree in &parsed.trees {
            self.statements(tree.root_node(), &walk, depth, out);
        }
    }

    /// The parse of `text`, from the object's cache or made within the parse budget.
    fn parse(&mut self, text: &str) -> Option<Parsed> {
        if let Some(budget) = self.object_budget
            && let Some(parsed) = budget.parses.borrow().get(text)
        {
            return Some(parsed);
        }
        if self.parser.is_none() {
            self.parser = new_parser();
        }
        let Some(parser) = self.parser.as_mut() else {
            self.parse_gap.get_or_insert(ParseGap::NoGrammar);
            return None;
        };
        let left = self.object_budget.map_or(&self.parse_area_left, |b| &b.parse_area_left);
        let parsed = parse_script(parser, text, left);
        if let Some(budget) = self.object_budget {
            budget.parses.borrow_mut().keep(text, &parsed);
        }
        Some(parsed)
    }

    /// Walks `node`'s subtree in order (without recursion: lists nest as deep as they are long),
    /// appending a piece for every simple command met.
    pub(super) fn statements<'t>(
        &mut self,
        node: Node<'t>,
        walk: &Walk<'_>,
        depth: usize,
        out: &mut Vec<String>,
    ) {
        let mut cursor = node.walk();
        loop {
            let n = cursor.node();
            let descend = n.start_byte() < walk.cut && self.statement(n, walk, depth, out);
            if descend && cursor.goto_first_child() {
                continue;
            }
            loop {
                if cursor.node() == node {
                    return;
                }
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return;
                }
            }
        }
    }

    /// One node of the statement walk: a piece is made of a simple command; true to walk into
    /// the node's children.
    fn statement<'t>(&mut self, n: Node<'t>, walk: &Walk<'_>, depth: usize, out: &mut Vec<String>) -> bool {
        let kind = n.kind();
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
                self.piece(&[n], walk, depth, out);
            }
            return false;
        }
        if kind == "redirected_statement" {
            let body = n.child_by_field_name("body");
            let mut segments: Vec<Node<'_>> = Vec::new();
            if let Some(b) = body.filter(|b| is_piece(b.kind())) {
                segments.push(b);
            }
            let mut cursor = n.walk();
            segments.extend(
                n.named_children(&mut cursor).filter(|c| Some(*c) != body && c.kind().ends_with("redirect")),
            );
            if n.end_byte() <= walk.cut || body.is_some_and(|b| !is_piece(b.kind())) {
                self.piece(&segments, walk, depth, out);
            }
            // A compound body (`{ ...; } >f`, `while ...; done < <(cmd)`) holds commands of its own.
            if let Some(b) = body.filter(|b| !is_piece(b.kind())) {
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
        walk: &Walk<'_>,
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
        walk: &Walk<'_>,
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
            let kind = n.kind();
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
                && n.parent().is_some_and(|p| p.kind() == "heredoc_redirect"));
            if n.start_byte() >= end {
                break;
            }
            if hole {
                push_text(&walk.src[at..n.start_byte()], &mut quote, cur);
                match kind {
                    "command_substitution" | "process_substitution" | "arithmetic_expansion" => {
                        self.substitution(n, walk, depth, cur, subs);
                    }
                    "expansion" => {
                        // `${...}` as written (its value is resolved by the word stage).
                        let text = &walk.src[n.start_byte()..n.end_byte().min(end)];
                        cur.push(if quote == Quote::Double { QDOLLAR } else { '$' });
                        cur.push_str(text.get(1..).unwrap_or(""));
                    }
                    "heredoc_body" | "heredoc_end" | "comment" => {}
                    _ => {
                        if n.end_byte() <= walk.cut {
                            self.statements(n, walk, depth, after);
                        }
                    }
                }
                at = n.end_byte().min(end);
            } else if cursor.goto_first_child() {
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
    fn substitution<'t>(
        &mut self,
        n: Node<'t>,
        walk: &Walk<'_>,
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
        } else if n.kind() == "command_substitution" {
            let inner = text.get(2..).unwrap_or("");
            let inner = inner.strip_suffix(')').unwrap_or(inner).to_string();
            let shown = format!("$({})", inner.trim());
            (inner, shown)
        } else {
            (text.to_string(), text.to_string())
        };
        let mut sub = Vec::new();
        if depth < MAX_DEPTH {
            let mut cursor = n.walk();
            let children: Vec<Node<'_>> = n.named_children(&mut cursor).collect();
            for child in children {
                self.statements(child, walk, depth + 1, &mut sub);
            }
        }
        let m = self.substitution_ref(&content, &sub, depth, &shown);
        cur.push(m);
        subs.append(&mut sub);
    }
}

/// Word-split one simple command (quotes removed); falls back to whitespace splitting on
/// malformed quoting. Leading reserved words are dropped.
pub(super) fn piece_words(piece: &str) -> Vec<String> {
    piece_words_skipped(piece).0
}

/// [`piece_words`], with how many words (leading reserved words) were dropped before them.
fn piece_words_skipped(piece: &str) -> (Vec<String>, usize) {
    let words =
        shell_words::split(piece).unwrap_or_else(|_| piece.split_whitespace().map(str::to_string).collect());
    let skip = words.iter().take_while(|w| KEYWORDS.contains(&w.as_str())).count();
    (words.into_iter().skip(skip).collect(), skip)
}

/// For each of the `count` words `shell_words` makes of `piece`, whether its text begins with a
/// quote or a backslash (up to the first character that is not a digit: `2'>'x` is quoted too).
/// All `false` when the count differs (malformed quoting: the fallback split).
fn words_begin_quoted(piece: &str, count: usize) -> Vec<bool> {
    let mut out: Vec<bool> = Vec::new();
    let (mut in_word, mut quote, mut escaped, mut lead_digits) = (false, None::<char>, false, true);
    for c in piece.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        match quote {
            Some(q) => {
                if c == q {
                    quote = None;
                } else if c == '\\' && q == '"' {
                    escaped = true;
                }
                continue;
            }
            None if matches!(c, ' ' | '\t' | '\n') => {
                in_word = false;
                continue;
            }
            None => {}
        }
        if !in_word {
            in_word = true;
            lead_digits = true;
            out.push(false);
        }
        let opens = matches!(c, '\'' | '"' | '\\');
        if lead_digits
            && opens
            && let Some(last) = out.last_mut()
        {
            *last = true;
        }
        lead_digits &= c.is_ascii_digit();
        match c {
            '\'' | '"' => quote = Some(c),
            '\\' => escaped = true,
            _ => {}
        }
    }
    if out.len() == count { out } else { vec![false; count] }
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

/// Splits a simple command's words into the command proper and the targets of its redirections
/// (`>f`, `2>/dev/null`, `>> f`, `< f`, `&>f`, `2>&1`; a bare operator takes the next word).
pub(super) fn split_redirections(piece: &str, lit: impl Fn(&String) -> String) -> (Vec<String>, Vec<String>) {
    let (args, skipped) = piece_words_skipped(piece);
    // A word whose text begins quoted (`'>/dev/tcp/db/1'`, `"<x"`, `\>`) is an argument: bash
    // reads an operator only unquoted.
    let quoted = words_begin_quoted(piece, skipped + args.len()).split_off(skipped);
    let mut words = Vec::with_capacity(args.len());
    let mut targets = Vec::new();
    let mut k = 0;
    while k < args.len() {
        let text = lit(&args[k]);
        let digits = text.chars().take_while(char::is_ascii_digit).count();
        let op_part = &text[digits..];
        let op = ["<<<", "<<-", "<<", "&>>", ">>", "&>", ">&", "<&", "<>", ">|", ">", "<"]
            .into_iter()
            .find(|op| op_part.starts_with(*op))
            .filter(|_| !quoted.get(k).copied().unwrap_or(false));
        match op {
            Some(op) => {
                // A here-string's word and a here-document's delimiter are input, not a file.
                let input = op.starts_with("<<");
                let target = &op_part[op.len()..];
                if target.is_empty() {
                    if let Some(next) = args.get(k + 1).filter(|_| !input) {
                        targets.push(next.clone());
                    }
                    k += 2;
                } else {
                    if !input {
                        targets.push(target.to_string());
                    }
                    k += 1;
                }
            }
            None => {
                words.push(args[k].clone());
                k += 1;
            }
        }
    }
    (words, targets)
}
