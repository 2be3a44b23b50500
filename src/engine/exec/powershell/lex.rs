//! The statement reader of a PowerShell script: [`statements`] splits it into statements of
//! [`Word`]s (quotes removed, comments dropped, subexpressions and literals kept whole), and
//! [`ps_assignment`] reads a statement that assigns a variable. The first stage of a script's
//! analysis, after the code that never runs is blanked ([`super::prune`]); the words are then
//! resolved and matched as commands in [`super`].

/// One word of a statement as written, quotes removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Word {
    pub(super) text: String,
    /// Whether `$` in it expands (false once a part of it is single-quoted).
    pub(super) expandable: bool,
    /// Byte offset in `text` where its first quoted part began: `Some(0)` is a string literal,
    /// `None` a bare word (a command name, a number, a variable or an argument-mode string).
    pub(super) quote_at: Option<usize>,
}

/// Splits a script into statements: at `;`, newlines, `|`, `&&`, `||`, braces and parentheses
/// outside quotes; `#` and `<# #>` comments dropped; `@{...}` and `@(...)` kept as one word.
pub(super) fn statements(script: &str) -> Vec<Vec<Word>> {
    let chars: Vec<char> = script.chars().collect();
    let mut out: Vec<Vec<Word>> = Vec::new();
    let mut cur: Vec<Word> = Vec::new();
    let mut word = Word { expandable: true, ..Word::default() };
    let mut in_word = false;
    let mut i = 0;
    let end_word = |word: &mut Word, in_word: &mut bool, cur: &mut Vec<Word>| {
        let done = std::mem::replace(word, Word { expandable: true, ..Word::default() });
        if *in_word {
            cur.push(done);
        }
        *in_word = false;
    };
    while i < chars.len() {
        let c = chars[i];
        if matches!(c, '\'' | '\u{2018}' | '\u{2019}' | '"' | '\u{201C}' | '\u{201D}')
            && word.quote_at.is_none()
        {
            word.quote_at = Some(word.text.len());
        }
        match c {
            '\'' | '\u{2018}' | '\u{2019}' => {
                in_word = true;
                i += 1;
                while i < chars.len() {
                    if matches!(chars[i], '\'' | '\u{2018}' | '\u{2019}') {
                        if chars.get(i + 1) == Some(&'\'') {
                            word.text.push('\'');
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    // A literal `$` inside single quotes is never a variable.
                    word.text.push(if chars[i] == '$' { '\u{FFFD}' } else { chars[i] });
                    i += 1;
                }
                word.expandable = false;
            }
            '"' | '\u{201C}' | '\u{201D}' => {
                in_word = true;
                i += 1;
                while i < chars.len() && !matches!(chars[i], '"' | '\u{201C}' | '\u{201D}') {
                    if chars[i] == '`' && i + 1 < chars.len() {
                        i += 1;
                    }
                    word.text.push(chars[i]);
                    i += 1;
                }
            }
            '`' if i + 1 < chars.len() => {
                in_word = true;
                word.text.push(chars[i + 1]);
                i += 1;
            }
            '#' if !in_word => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '<' if chars.get(i + 1) == Some(&'#') => {
                i += 2;
                while i + 1 < chars.len() && !(chars[i] == '#' && chars[i + 1] == '>') {
                    i += 1;
                }
                i += 1;
            }
            '$' if chars.get(i + 1) == Some(&'{') => {
                // `${name}`: a braced variable name, part of the word.
                let end = chars[i..].iter().position(|c| *c == '}').map_or(chars.len(), |p| i + p);
                in_word = true;
                word.text.extend(&chars[i..(end + 1).min(chars.len())]);
                i = end;
            }
            '$' if chars.get(i + 1) == Some(&'(') && (in_word || simple_subexpression(&chars, i)) => {
                // `http://$($env:COMPUTERNAME):8080/`, `tnc $($h)`: a subexpression inside a word,
                // or one of a single variable, is part of the word (others are read as statements
                // of their own, so that the commands in them are matched).
                let end = closing(&chars, i + 1);
                in_word = true;
                word.text.extend(&chars[i..(end + 1).min(chars.len())]);
                i = end;
            }
            '@' if matches!(chars.get(i + 1), Some('{') | Some('(')) => {
                // A hashtable or array literal: one opaque word.
                let end = closing(&chars, i + 1);
                in_word = true;
                word.text.extend(&chars[i..(end + 1).min(chars.len())]);
                i = end;
            }
            ';' | '\n' | '\r' | '|' | '{' | '}' | '(' | ')' | '&' => {
                end_word(&mut word, &mut in_word, &mut cur);
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c if c.is_whitespace() || c == ',' => {
                end_word(&mut word, &mut in_word, &mut cur);
            }
            c => {
                in_word = true;
                word.text.push(c);
            }
        }
        i += 1;
    }
    end_word(&mut word, &mut in_word, &mut cur);
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Whether the `$(` at `at` holds one variable (`$($env:COMPUTERNAME)`, `$($h)`).
fn simple_subexpression(chars: &[char], at: usize) -> bool {
    let end = closing(chars, at + 1);
    let inner: String = chars[at + 2..end.min(chars.len())].iter().collect();
    let inner = inner.trim();
    inner.strip_prefix('$').is_some_and(|v| {
        !v.is_empty() && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
    })
}

/// Index of the bracket closing the one at `open_at` (`chars.len()` when it is never closed).
pub(super) fn closing(chars: &[char], open_at: usize) -> usize {
    let open = chars[open_at];
    let close = match open {
        '{' => '}',
        '[' => ']',
        _ => ')',
    };
    let mut level = 0usize;
    for (k, &c) in chars.iter().enumerate().skip(open_at) {
        if c == open {
            level += 1;
        } else if c == close {
            level -= 1;
            if level == 0 {
                return k;
            }
        }
    }
    chars.len()
}

/// Scope modifiers of a variable name (about_Scopes) and the `variable:` drive: `$script:u` is `$u`.
pub(super) const SCOPES: &[&str] = &["global", "script", "local", "private", "using", "variable", "workflow"];

/// A variable's key in the script's table: lowercase (PowerShell names ignore case), without a
/// scope modifier; environment variables keep their `env:` drive.
pub(super) fn var_key(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    match lower.split_once(':') {
        Some((scope, rest)) if SCOPES.contains(&scope) => rest.to_string(),
        _ => lower,
    }
}

/// The assignment operators of about_Assignment_Operators, longest first.
const ASSIGN_OPS: &[&str] = &["??=", "+=", "-=", "*=", "/=", "%=", "="];

/// `$name = VALUE`, `$name=VALUE`, `[type]$name = VALUE`, `$scope:name += VALUE`, `${name} = ...`.
pub(super) struct Assignment {
    /// [`var_key`] of the variable.
    pub(super) key: String,
    /// The variable as written (`$u`), for notes.
    pub(super) original: String,
    /// The operator (`=`, `+=`, ...).
    pub(super) op: &'static str,
    /// The words right of the operator.
    pub(super) rhs: Vec<Word>,
}

/// The assignment a statement makes, if it is one.
pub(super) fn ps_assignment(statement: &[Word]) -> Option<Assignment> {
    let first = statement.first()?;
    if first.quote_at == Some(0) {
        return None;
    }
    let chars: Vec<char> = first.text.chars().collect();
    // Type constraints and attributes before the variable: `[string]$u`, `[ValidateNotNull()]`.
    let mut at = 0;
    while chars.get(at) == Some(&'[') {
        at = closing(&chars, at) + 1;
    }
    let text: String = chars.get(at..)?.iter().collect();
    let rest = text.strip_prefix('$')?;
    let (name, after) = match rest.strip_prefix('{') {
        Some(braced) => {
            let end = braced.find('}')?;
            (&braced[..end], &braced[end + 1..])
        }
        None => {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            (&rest[..end], &rest[end..])
        }
    };
    if name.is_empty() {
        return None;
    }
    let original = format!("${name}");
    let split = |w: &Word, value: &str| -> Word {
        let offset = w.text.len() - value.len();
        Word {
            text: value.to_string(),
            expandable: w.expandable,
            quote_at: w.quote_at.and_then(|q| q.checked_sub(offset)),
        }
    };
    let (op, mut rhs) = if after.is_empty() {
        let second = statement.get(1).filter(|w| w.quote_at.is_none())?;
        let op = ASSIGN_OPS.iter().find(|o| second.text.starts_with(**o))?;
        let value = &second.text[op.len()..];
        let rhs = if value.is_empty() { Vec::new() } else { vec![split(second, value)] };
        (*op, (rhs, 2))
    } else {
        let op = ASSIGN_OPS.iter().find(|o| after.starts_with(**o))?;
        let value = &after[op.len()..];
        let rhs = if value.is_empty() { Vec::new() } else { vec![split(first, value)] };
        (*op, (rhs, 1))
    };
    rhs.0.extend(statement.get(rhs.1..).unwrap_or_default().iter().cloned());
    Some(Assignment { key: var_key(name), original, op, rhs: rhs.0 })
}

/// Whether a word right of `=` is a value rather than a command: a quoted string, a number, or a
/// variable (`$h`, `${h}`, `$env:H`).
pub(super) fn is_value_word(w: &Word) -> bool {
    if w.quote_at == Some(0) {
        return true;
    }
    let t = w.text.as_str();
    if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return true;
    }
    t.strip_prefix('$')
        .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '{'))
}
