//! Stage 2: shell parsing, a script split into simple commands (command substitutions, here-documents, `case` patterns and redirections handled).

use super::MAX_DEPTH;
use super::context::{Ctx, LDOLLAR, QDOLLAR, is_ident};

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Quote {
    None,
    Single,
    Double,
}

/// Index just past the `)` closing a `$(` whose content starts at `i`, ignoring quotes
/// (used beyond the analysed depth, without recursion).
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

/// Where the analysis is in a `case` statement: after `case WORD` (expecting `in`), or in a
/// pattern list (after `in` or `;;`, up to the `)`).
#[derive(Default)]
pub(super) struct CaseState {
    /// `case` statements open (their `esac` not met yet).
    pub(super) open: usize,
    /// `case WORD` read, `in` expected.
    pub(super) expect_in: bool,
    /// Reading a pattern list.
    pub(super) pattern: bool,
}

impl CaseState {
    /// Called when an unquoted word of the current command `cur` ends.
    pub(super) fn word_done(&mut self, cur: &mut String) {
        let trimmed = cur.trim();
        let last = trimmed.rsplit(char::is_whitespace).next().unwrap_or("");
        let first = last.len() == trimmed.len();
        if first && last == "esac" && self.open > 0 {
            self.open -= 1;
            self.pattern = false;
            self.expect_in = false;
        } else if self.pattern {
        } else if first && last == "case" {
            self.open += 1;
            self.expect_in = true;
        } else if self.expect_in && last == "in" {
            // `case WORD in`: the word is matched, not run; patterns follow.
            self.expect_in = false;
            self.pattern = true;
            cur.clear();
        }
    }
}

/// Reads a here-document's delimiter word starting at `i` (blanks first): the word with its
/// quotes and backslashes removed, and the index after it.
pub(super) fn heredoc_delimiter(chars: &[char], mut i: usize) -> (String, usize) {
    while matches!(chars.get(i), Some(' ' | '\t')) {
        i += 1;
    }
    let mut word = String::new();
    while let Some(&c) = chars.get(i) {
        match c {
            '\'' | '"' => {
                i += 1;
                while let Some(&q) = chars.get(i) {
                    i += 1;
                    if q == c {
                        break;
                    }
                    word.push(q);
                }
            }
            '\\' => {
                if let Some(&n) = chars.get(i + 1) {
                    word.push(n);
                }
                i += 2;
            }
            _ if c.is_whitespace() || matches!(c, ';' | '|' | '&' | '<' | '>' | '(' | ')') => break,
            _ => {
                word.push(c);
                i += 1;
            }
        }
    }
    (word, i.min(chars.len()))
}

/// Skips the bodies of the here-documents opened on the line that ended just before `i`, in
/// order; returns the index after the last delimiter line (the end of the text when one is
/// missing, as the shell reads to the end).
pub(super) fn skip_heredoc_bodies(chars: &[char], mut i: usize, heredocs: &mut Vec<(String, bool)>) -> usize {
    for (delimiter, strip) in heredocs.drain(..) {
        while i < chars.len() {
            let end = chars[i..].iter().position(|&c| c == '\n').map_or(chars.len(), |e| i + e);
            let mut line = &chars[i..end];
            if strip {
                while line.first() == Some(&'\t') {
                    line = &line[1..];
                }
            }
            let done = line.iter().copied().eq(delimiter.chars());
            i = (end + 1).min(chars.len());
            if done {
                break;
            }
        }
    }
    i
}

/// Position of the closing backtick for a backtick substitution opened just before `i`.
pub(super) fn find_backtick_end(chars: &[char], mut i: usize) -> Option<usize> {
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '`' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

impl Ctx<'_> {
    /// Split `script` into simple commands (raw text with markers), appending to `out`.
    /// Command substitutions are split too and appended before the command containing them.
    pub(super) fn split_script(&mut self, script: &str, depth: usize, out: &mut Vec<String>) {
        let chars: Vec<char> =
            script.chars().map(|c| if c == LDOLLAR || c == QDOLLAR { '$' } else { c }).collect();
        self.scan(&chars, 0, false, depth, out);
    }

    /// Scan from `i`; with `in_subst`, stop after the `)` closing the substitution and return
    /// the index just past it.
    pub(super) fn scan(
        &mut self,
        chars: &[char],
        mut i: usize,
        in_subst: bool,
        depth: usize,
        out: &mut Vec<String>,
    ) -> usize {
        let mut cur = String::new();
        let mut quote = Quote::None;
        let mut parens = 0usize;
        let mut word_start = true;
        // `$((`: the substitution is arithmetic from its start (level 0); `((` at a command's
        // start opens an arithmetic command at the current level. Inside, `<<` is a shift.
        let mut arith: Option<usize> = (in_subst && chars.get(i) == Some(&'(')).then_some(0);
        // Here-documents opened on the current line: (delimiter, `<<-` strips leading tabs).
        let mut heredocs: Vec<(String, bool)> = Vec::new();
        let mut case = CaseState::default();
        fn flush(cur: &mut String, out: &mut Vec<String>) {
            if !cur.trim().is_empty() {
                out.push(cur.trim().to_string());
            }
            cur.clear();
        }
        while i < chars.len() {
            let c = chars[i];
            let next = chars.get(i + 1).copied();
            if quote == Quote::None
                && (c.is_whitespace() || matches!(c, ';' | '|' | '&' | '(' | ')' | '<' | '>'))
                && !cur.is_empty()
                && !cur.ends_with(char::is_whitespace)
            {
                case.word_done(&mut cur);
            }
            if quote == Quote::None && case.pattern {
                // A `case` pattern (`a|b)`, `(*)`): not a command; dropped up to its `)`.
                match c {
                    ')' => {
                        cur.clear();
                        case.pattern = false;
                        word_start = true;
                        i += 1;
                        continue;
                    }
                    '(' | '|' => {
                        i += 1;
                        continue;
                    }
                    _ => {}
                }
            }
            match quote {
                Quote::Single => {
                    match c {
                        '\'' => {
                            quote = Quote::None;
                            cur.push(c);
                        }
                        '$' => cur.push(LDOLLAR),
                        _ => cur.push(c),
                    }
                    i += 1;
                }
                Quote::Double => match c {
                    '"' => {
                        quote = Quote::None;
                        cur.push(c);
                        i += 1;
                    }
                    '\\' => {
                        match next {
                            Some('\n') => {}
                            Some('$') => cur.push(LDOLLAR),
                            Some(n) => {
                                cur.push('\\');
                                cur.push(n);
                            }
                            None => cur.push('\\'),
                        }
                        i += 2;
                    }
                    '$' => i = self.dollar(chars, i, true, depth, &mut cur, out),
                    '`' => i = self.backtick(chars, i, depth, &mut cur, out),
                    _ => {
                        cur.push(c);
                        i += 1;
                    }
                },
                Quote::None => {
                    let was_word_start = word_start;
                    word_start = false;
                    match c {
                        '\'' => {
                            quote = Quote::Single;
                            cur.push(c);
                            i += 1;
                        }
                        '"' => {
                            quote = Quote::Double;
                            cur.push(c);
                            i += 1;
                        }
                        '\\' => {
                            match next {
                                Some('\n') => word_start = was_word_start,
                                Some('$') => cur.push(LDOLLAR),
                                Some(n) => {
                                    cur.push('\\');
                                    cur.push(n);
                                }
                                None => cur.push('\\'),
                            }
                            i += 2;
                        }
                        '#' if was_word_start => {
                            while i < chars.len() && chars[i] != '\n' {
                                i += 1;
                            }
                            word_start = true;
                        }
                        ';' if case.open > 0 && matches!(next, Some(';' | '&')) => {
                            // `;;`, `;&`, `;;&`: the end of a case item; a pattern comes next.
                            flush(&mut cur, out);
                            case.pattern = true;
                            word_start = true;
                            i += 2;
                            if chars.get(i) == Some(&'&') {
                                i += 1;
                            }
                        }
                        '\n' if !heredocs.is_empty() => {
                            flush(&mut cur, out);
                            word_start = true;
                            i = skip_heredoc_bodies(chars, i + 1, &mut heredocs);
                        }
                        '\n' | ';' | '|' => {
                            flush(&mut cur, out);
                            word_start = true;
                            i += 1;
                        }
                        '&' => {
                            if next == Some('>') || cur.ends_with('>') || cur.ends_with('<') {
                                cur.push(c);
                            } else {
                                flush(&mut cur, out);
                                word_start = true;
                            }
                            i += 1;
                        }
                        '(' => {
                            if was_word_start && next == Some('(') && arith.is_none() {
                                arith = Some(parens);
                            }
                            parens += 1;
                            flush(&mut cur, out);
                            word_start = true;
                            i += 1;
                        }
                        ')' => {
                            flush(&mut cur, out);
                            word_start = true;
                            i += 1;
                            if parens > 0 {
                                parens -= 1;
                                if arith.is_some_and(|level| parens <= level) {
                                    arith = None;
                                }
                            } else if in_subst {
                                return i;
                            }
                        }
                        '<' if next == Some('<') && arith.is_none() => {
                            // `<<<WORD` (a here-string) or `<<[-]DELIM` (a here-document): the
                            // word and the document's lines are the command's input, not its
                            // arguments. The operator is kept, spaced from its word, for
                            // split_redirections to drop both.
                            if !cur.is_empty() && !cur.ends_with(char::is_whitespace) {
                                cur.push(' ');
                            }
                            if chars.get(i + 2) == Some(&'<') {
                                cur.push_str("<<< ");
                                i += 3;
                            } else {
                                let strip = chars.get(i + 2) == Some(&'-');
                                let (delimiter, end) =
                                    heredoc_delimiter(chars, i + if strip { 3 } else { 2 });
                                cur.push_str("<< heredoc ");
                                heredocs.push((delimiter, strip));
                                i = end;
                            }
                        }
                        '<' | '>' => {
                            // Separate a redirection glued to a word (`url>/dev/null`), but
                            // keep a file-descriptor number attached (`2>&1`).
                            let word: &str = cur.rsplit(char::is_whitespace).next().unwrap_or("");
                            let glued = !word.is_empty()
                                && !word
                                    .chars()
                                    .all(|d| d.is_ascii_digit() || d == '<' || d == '>' || d == '&');
                            if glued {
                                cur.push(' ');
                            }
                            cur.push(c);
                            i += 1;
                        }
                        '$' => i = self.dollar(chars, i, false, depth, &mut cur, out),
                        '`' => i = self.backtick(chars, i, depth, &mut cur, out),
                        _ => {
                            if c.is_whitespace() {
                                word_start = true;
                            }
                            cur.push(c);
                            i += 1;
                        }
                    }
                }
            }
        }
        flush(&mut cur, out);
        // A backslash as the last character steps two past it.
        i.min(chars.len())
    }

    /// Handle a `$` at `i` (unquoted or inside double quotes); returns the next index.
    pub(super) fn dollar(
        &mut self,
        chars: &[char],
        i: usize,
        quoted: bool,
        depth: usize,
        cur: &mut String,
        out: &mut Vec<String>,
    ) -> usize {
        let dollar = if quoted { QDOLLAR } else { '$' };
        match chars.get(i + 1) {
            Some('(') => {
                let start = i + 2;
                let mut sub = Vec::new();
                let end = if depth >= MAX_DEPTH {
                    skip_parens(chars, start)
                } else {
                    self.scan(chars, start, true, depth + 1, &mut sub)
                }
                .min(chars.len());
                let content_end = if end > start && chars.get(end - 1) == Some(&')') { end - 1 } else { end };
                let content: String = chars[start..content_end.max(start)].iter().collect();
                let m = self.substitution_ref(&content, &sub, depth, &format!("$({})", content.trim()));
                cur.push(m);
                out.extend(sub);
                end
            }
            Some('{') => {
                cur.push(dollar);
                let mut level = 0usize;
                let mut j = i + 1;
                while j < chars.len() {
                    let ch = chars[j];
                    cur.push(ch);
                    j += 1;
                    if ch == '{' {
                        level += 1;
                    } else if ch == '}' {
                        level = level.saturating_sub(1);
                        if level == 0 {
                            break;
                        }
                    }
                }
                j
            }
            _ => {
                cur.push(dollar);
                i + 1
            }
        }
    }

    /// Handle a backtick substitution opening at `i`; returns the next index.
    pub(super) fn backtick(
        &mut self,
        chars: &[char],
        i: usize,
        depth: usize,
        cur: &mut String,
        out: &mut Vec<String>,
    ) -> usize {
        let end = find_backtick_end(chars, i + 1);
        let stop = end.unwrap_or(chars.len()).min(chars.len());
        let mut content = String::new();
        let mut j = i + 1;
        while j < stop {
            if chars[j] == '\\' && matches!(chars.get(j + 1), Some('`' | '\\' | '$')) {
                content.push(chars[j + 1]);
                j += 2;
            } else {
                content.push(chars[j]);
                j += 1;
            }
        }
        let mut sub = Vec::new();
        if depth < MAX_DEPTH {
            self.split_script(&content, depth + 1, &mut sub);
        }
        let m = self.substitution_ref(&content, &sub, depth, &format!("`{}`", content.trim()));
        out.extend(sub);
        cur.push(m);
        end.map_or(chars.len(), |e| e + 1)
    }
}

/// Shell reserved words (and `!`, `{`, `}`, `[[`-free) skipped at the start of a command.
pub(super) const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "while", "until", "do", "done", "for", "in", "case", "esac", "!",
    "{", "}", "select", "function",
];

/// Word-split one simple command (quotes removed); falls back to whitespace splitting on
/// malformed quoting. Leading reserved words are dropped.
pub(super) fn piece_words(piece: &str) -> Vec<String> {
    let words =
        shell_words::split(piece).unwrap_or_else(|_| piece.split_whitespace().map(str::to_string).collect());
    let skip = words.iter().take_while(|w| KEYWORDS.contains(&w.as_str())).count();
    words.into_iter().skip(skip).collect()
}

/// `NAME=value` assignment word: returns (name, value).
pub(super) fn split_assignment(w: &str) -> Option<(&str, &str)> {
    let (n, v) = w.split_once('=')?;
    if is_ident(n) { Some((n, v)) } else { None }
}

/// Splits a simple command's words into the command proper and the targets of its redirections
/// (`>f`, `2>/dev/null`, `>> f`, `< f`, `&>f`, `2>&1`; a bare operator takes the next word).
pub(super) fn split_redirections(
    args: &[String],
    lit: impl Fn(&String) -> String,
) -> (Vec<String>, Vec<String>) {
    let mut words = Vec::with_capacity(args.len());
    let mut targets = Vec::new();
    let mut k = 0;
    while k < args.len() {
        let text = lit(&args[k]);
        let digits = text.chars().take_while(char::is_ascii_digit).count();
        let op_part = &text[digits..];
        let op = ["<<<", "<<-", "<<", "&>>", ">>", "&>", ">&", "<&", "<>", ">|", ">", "<"]
            .into_iter()
            .find(|op| op_part.starts_with(*op));
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
