//! Bash parameter operators on a value known at admission (bash manual, "Shell Parameter
//! Expansion"): `${X%pat}`, `${X%%pat}`, `${X#pat}`, `${X##pat}` with shell patterns, `${X/pat/rep}`,
//! `${X:offset:length}` and the case operators, each within a size bound. Part of stage 3, word and
//! variable resolution ([`super`]), which applies [`apply_operator`] to a variable's value.

use super::super::context::{LDOLLAR, is_reserved_char};

/// Longest value (characters) a parameter operator is evaluated on.
const MAX_OPERATOR_VALUE: usize = 1024;
/// Longest value (characters) a `${X/pat/rep}` replacement is evaluated on.
const MAX_REPLACE_VALUE: usize = 128;
/// Longest operator text (pattern and replacement, bytes) evaluated.
const MAX_OPERATOR_PATTERN: usize = 64;

/// One element of a shell pattern (bash manual, "Pattern Matching").
#[derive(Debug, Clone, PartialEq)]
enum PatTok {
    Char(char),
    /// `?`
    Any,
    /// `*`
    Star,
    /// `[...]`: ranges (a single character is `(c, c)`), negated with `!` or `^`.
    Class(Vec<(char, char)>, bool),
}

/// A pattern as written inside `${...}`: quoted and backslash-escaped characters are literal.
/// `None` for what is not followed here (an expansion inside it, an extended glob, a character
/// class such as `[[:digit:]]`).
fn parse_pattern(p: &str) -> Option<Vec<PatTok>> {
    let cs: Vec<char> = p.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        if c == '$' || c == '`' || is_reserved_char(c) {
            return None;
        }
        match c {
            '\\' => {
                toks.push(PatTok::Char(*cs.get(i + 1)?));
                i += 2;
            }
            '\'' => {
                let end = cs[i + 1..].iter().position(|&x| x == '\'')? + i + 1;
                toks.extend(cs[i + 1..end].iter().map(|&x| PatTok::Char(x)));
                i = end + 1;
            }
            '"' => {
                let end = cs[i + 1..].iter().position(|&x| x == '"')? + i + 1;
                if cs[i + 1..end].iter().any(|&x| matches!(x, '$' | '`' | '\\')) {
                    return None;
                }
                toks.extend(cs[i + 1..end].iter().map(|&x| PatTok::Char(x)));
                i = end + 1;
            }
            '*' => {
                toks.push(PatTok::Star);
                i += 1;
            }
            '?' => {
                toks.push(PatTok::Any);
                i += 1;
            }
            '[' => {
                let mut j = i + 1;
                let negated = matches!(cs.get(j), Some('!' | '^'));
                if negated {
                    j += 1;
                }
                let start = j;
                let mut ranges = Vec::new();
                // A `]` first in the class is one of its characters.
                while j < cs.len() && (cs[j] != ']' || j == start) {
                    if cs[j] == '[' && matches!(cs.get(j + 1), Some(':' | '=' | '.')) {
                        return None;
                    }
                    if cs[j] == '\\' || cs[j] == '\'' || cs[j] == '"' {
                        return None;
                    }
                    if cs.get(j + 1) == Some(&'-') && cs.get(j + 2).is_some_and(|&e| e != ']') {
                        ranges.push((cs[j], cs[j + 2]));
                        j += 3;
                    } else {
                        ranges.push((cs[j], cs[j]));
                        j += 1;
                    }
                }
                if j >= cs.len() {
                    // No closing `]`: a literal `[`.
                    toks.push(PatTok::Char('['));
                    i += 1;
                } else {
                    toks.push(PatTok::Class(ranges, negated));
                    i = j + 1;
                }
            }
            // `?(...)`, `*(...)`, `+(...)`, `@(...)`, `!(...)` under extglob.
            '(' if i > 0 && matches!(cs[i - 1], '?' | '*' | '+' | '@' | '!') => return None,
            _ => {
                toks.push(PatTok::Char(c));
                i += 1;
            }
        }
    }
    Some(toks)
}

/// Whether the whole of `s` matches `pat`.
fn pattern_matches(pat: &[PatTok], s: &[char]) -> bool {
    // Iterative matching with one backtrack point for the last `*` (linear in practice).
    let (mut p, mut i) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while i < s.len() {
        let step = match pat.get(p) {
            Some(PatTok::Star) => {
                star = Some((p, i));
                p += 1;
                continue;
            }
            Some(PatTok::Any) => true,
            Some(PatTok::Char(c)) => *c == s[i],
            Some(PatTok::Class(ranges, negated)) => {
                ranges.iter().any(|&(a, b)| a <= s[i] && s[i] <= b) != *negated
            }
            None => false,
        };
        if step {
            p += 1;
            i += 1;
        } else if let Some((sp, si)) = star {
            p = sp + 1;
            i = si + 1;
            star = Some((sp, si + 1));
        } else {
            return false;
        }
    }
    pat[p..].iter().all(|t| *t == PatTok::Star)
}

/// `${NAME OP PATTERN...}` as written (`text`, from `$` to `}`) with the quoted characters of the
/// pattern of a `%`, `%%`, `#`, `##`, `/`, `//`, `/#` or `/%` operator escaped (`\\`, then the
/// character), its quotes and escaping backslashes removed: the piece's words lose their quotes (`shell_words`) before the
/// operator is applied, and a quoted pattern character is literal in bash (`${H%'[a-z]'}` removes
/// the text `[a-z]`, not a letter). `None` when there is nothing to change, or what is quoted is
/// not followed here (an expansion, a blank, a quote inside a quote); a pattern that cannot be
/// evaluated (a quote inside a `[...]` class) when the quotes cannot be removed.
pub(in crate::engine::exec) fn literal_quoted_pattern(text: &str) -> Option<String> {
    let inner = text.strip_prefix("${")?.strip_suffix('}')?;
    let name_len = inner.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
    let (name, rest) = inner.split_at(name_len);
    let op_len =
        ["%%", "##", "//", "/#", "/%", "%", "#", "/"].into_iter().find(|o| rest.starts_with(o))?.len();
    let (op, pattern) = rest.split_at(op_len);
    if name.is_empty() || !pattern.contains(['\'', '"', '\\']) || pattern.contains(['$', '`']) {
        return None;
    }
    let replacing = op.starts_with('/');
    let mut out = format!("${{{name}{op}");
    let mut quote: Option<char> = None;
    // Inside an unquoted `[...]` class (a quoted `-` there is no range: not followed).
    let mut class = false;
    let mut cs = pattern.chars();
    while let Some(c) = cs.next() {
        match (quote, c) {
            (None, '\'' | '"') if class => return Some(format!("${{{name}{op}{LDOLLAR}}}")),
            (None, '\'' | '"') => quote = Some(c),
            (None, '[') => {
                class = true;
                out.push(c);
            }
            (None, ']') => {
                class = false;
                out.push(c);
            }
            (Some(q), c) if c == q => quote = None,
            (Some(_), '\'' | '"') => return None,
            (Some('"'), '\\') => return None,
            (Some(_), c) if c.is_whitespace() => return None,
            (Some(_), '*' | '?' | '[' | ']' | '\\' | '/') => {
                out.push_str("\\\\");
                out.push(c);
            }
            (None, '/') if replacing => {
                // The replacement, as written.
                out.push('/');
                out.push_str(cs.as_str());
                break;
            }
            (None, '\\') => match cs.next()? {
                c if c.is_whitespace() => return None,
                c => {
                    out.push_str("\\\\");
                    out.push(c);
                }
            },
            _ => out.push(c),
        }
    }
    if quote.is_some() {
        return None;
    }
    out.push('}');
    Some(out)
}

/// Whether the whole of `s` matches the shell pattern `pattern` as written (quoted and
/// backslash-escaped characters literal: bash manual, "Pattern Matching"), as `case` and `[[ == ]]`
/// match; `None` when the pattern holds what is not followed here (an expansion, an extended glob,
/// a character class such as `[[:digit:]]`).
pub(in crate::engine::exec) fn glob_matches(pattern: &str, s: &str) -> Option<bool> {
    if pattern.len() > MAX_OPERATOR_PATTERN || s.len() > MAX_OPERATOR_VALUE {
        return None;
    }
    let pat = parse_pattern(pattern)?;
    let s: Vec<char> = s.chars().collect();
    Some(pattern_matches(&pat, &s))
}

/// The result of a parameter operator `op` (the text after the name in `${NAME...}`) applied to
/// the known `value`, with bash's semantics; `None` when not evaluated here.
pub(super) fn apply_operator(value: &str, op: &str) -> Option<String> {
    let v: Vec<char> = value.chars().collect();
    let n = v.len();
    // Matching is quadratic in the value for removals and cubic for replacements (times the
    // pattern): longer values are not evaluated (a value not followed, which never denies).
    if n > MAX_OPERATOR_VALUE || op.len() > MAX_OPERATOR_PATTERN {
        return None;
    }
    let text = |r: std::ops::Range<usize>| v[r].iter().collect::<String>();
    if let Some(p) = op.strip_prefix("%%") {
        let pat = parse_pattern(p)?;
        return Some(
            (0..=n).find(|&k| pattern_matches(&pat, &v[k..])).map_or(value.to_string(), |k| text(0..k)),
        );
    }
    if let Some(p) = op.strip_prefix('%') {
        let pat = parse_pattern(p)?;
        return Some(
            (0..=n).rev().find(|&k| pattern_matches(&pat, &v[k..])).map_or(value.to_string(), |k| text(0..k)),
        );
    }
    if let Some(p) = op.strip_prefix("##") {
        let pat = parse_pattern(p)?;
        return Some(
            (0..=n).rev().find(|&k| pattern_matches(&pat, &v[..k])).map_or(value.to_string(), |k| text(k..n)),
        );
    }
    if let Some(p) = op.strip_prefix('#') {
        let pat = parse_pattern(p)?;
        return Some(
            (0..=n).find(|&k| pattern_matches(&pat, &v[..k])).map_or(value.to_string(), |k| text(k..n)),
        );
    }
    match op {
        "^^" => return Some(value.to_uppercase()),
        ",," => return Some(value.to_lowercase()),
        "^" | "," => {
            let mut cs = value.chars();
            let first = cs.next().map(|c| {
                if op == "^" { c.to_uppercase().collect() } else { c.to_lowercase().collect::<String>() }
            });
            return Some(first.unwrap_or_default() + cs.as_str());
        }
        _ => {}
    }
    if let Some(rest) = op.strip_prefix('/') {
        return replace(value, rest);
    }
    if let Some(rest) = op.strip_prefix(':') {
        return substring(&v, rest);
    }
    None
}

/// `${X/pat/rep}` with `rest` the text after the first `/`: `/pat/rep` replaces every match,
/// `#pat/rep` a match at the start, `%pat/rep` one at the end, `pat/rep` the first (longest) match.
fn replace(value: &str, rest: &str) -> Option<String> {
    let (mode, rest) = match rest.chars().next() {
        Some(m @ ('/' | '#' | '%')) => (m, &rest[1..]),
        _ => (' ', rest),
    };
    // The pattern ends at the first unescaped, unquoted `/`.
    let cs: Vec<char> = rest.chars().collect();
    let mut k = 0;
    let mut quote: Option<char> = None;
    while k < cs.len() {
        match (quote, cs[k]) {
            (None, '\\') => k += 1,
            (None, '/') => break,
            (None, q @ ('\'' | '"')) => quote = Some(q),
            (Some(q), c) if c == q => quote = None,
            _ => {}
        }
        k += 1;
    }
    let pat: String = cs[..k.min(cs.len())].iter().collect();
    let rep: String = cs.get(k + 1..).map_or(String::new(), |r| r.iter().collect());
    // bash 5.2 replaces `&` in the replacement by the match (patsub_replacement); quoting and
    // expansions there are not followed.
    if rep.contains(['&', '\\', '\'', '"', '$', '`']) || rep.chars().any(is_reserved_char) {
        return None;
    }
    let pat = parse_pattern(&pat)?;
    if pat.is_empty() {
        return Some(value.to_string());
    }
    let v: Vec<char> = value.chars().collect();
    let n = v.len();
    if n > MAX_REPLACE_VALUE {
        return None;
    }
    let longest_at = |start: usize| (start..=n).rev().find(|&e| pattern_matches(&pat, &v[start..e]));
    let joined =
        |a: &[char], b: &str, c: &[char]| a.iter().collect::<String>() + b + &c.iter().collect::<String>();
    match mode {
        '#' => Some(longest_at(0).map_or(value.to_string(), |e| joined(&[], &rep, &v[e..]))),
        '%' => Some(
            (0..=n)
                .find(|&s| pattern_matches(&pat, &v[s..]))
                .map_or(value.to_string(), |s| joined(&v[..s], &rep, &[])),
        ),
        _ => {
            let mut out = String::new();
            let mut i = 0;
            while i <= n {
                match longest_at(i).filter(|&e| e > i) {
                    Some(e) => {
                        out.push_str(&rep);
                        i = e;
                        if mode != '/' {
                            out.extend(&v[i..]);
                            return Some(out);
                        }
                    }
                    None => {
                        if i < n {
                            out.push(v[i]);
                        }
                        i += 1;
                    }
                }
            }
            Some(out)
        }
    }
}

/// `${X:offset}` and `${X:offset:length}` with `rest` the text after the `:`: plain integers only
/// (a negative offset counts from the end; a negative length is an end counted from the end).
fn substring(v: &[char], rest: &str) -> Option<String> {
    if rest.starts_with(['-', '=', '+', '?']) {
        return None;
    }
    let int = |t: &str| -> Option<i64> {
        let t = t.trim();
        let t = t.strip_prefix('(').and_then(|x| x.strip_suffix(')')).map_or(t, str::trim);
        if t.is_empty() { Some(0) } else { t.parse::<i64>().ok() }
    };
    let (off, len) = match rest.split_once(':') {
        Some((o, l)) => (int(o)?, Some(int(l)?)),
        None => (int(rest)?, None),
    };
    let n = v.len() as i64;
    let start = if off < 0 { n + off } else { off };
    if start < 0 || start > n {
        return Some(String::new());
    }
    let end = match len {
        None => n,
        Some(l) if l < 0 => {
            let e = n + l;
            if e < start {
                // bash: "substring expression < 0", an error.
                return None;
            }
            e
        }
        Some(l) => (start + l).min(n),
    };
    Some(v[start as usize..end as usize].iter().collect())
}
