//! The display forms of a redacted command ([`redact_command`], [`redact_as_written`]) and the
//! word reading the redaction shows a text by ([`display_words`], [`quote_word`]): they quote,
//! join and cut what [`redact_argv`] returned, and never redact on their own (a script's start cut
//! from a longer one is first passed through [`redact_cut_assignments`]).

use std::ops::Range;

use super::shown::{POSITIONAL_SHOWN, is_operator, redact_argv, redact_cut_assignments};

/// Quote a word for display when it contains whitespace or quotes (or is empty).
pub(super) fn quote_word(w: &str) -> String {
    let substitution =
        (w.starts_with("$(") && w.ends_with(')')) || (w.len() > 1 && w.starts_with('`') && w.ends_with('`'));
    if w.is_empty() {
        "''".to_string()
    } else if !substitution && w.chars().any(|c| c.is_whitespace() || c == '\'' || c == '"') {
        format!("'{}'", w.replace('\'', "'\\''"))
    } else {
        w.to_string()
    }
}

/// The words of a text as the display reads them, each with its byte range in `text` and
/// whether it is an operator: blanks separate words; a run of operator characters
/// ([`is_operator`]) outside quotes is a word of its own; single quotes, double quotes (`\`
/// escaping inside) and a backslash outside quotes quote as in sh and are not part of the word's
/// value; an unclosed quote runs to the end; [`POSITIONAL_SHOWN`] is one word. Not a shell
/// parser: only for showing a text with its secrets replaced in place.
pub(super) fn display_words(text: &str) -> Vec<(String, Range<usize>, bool)> {
    // Blanks as sh reads them (`-p\u{a0}X` is one word, the password `\u{a0}X`); a text with none
    // and no operator, but other white space (a word sh did not split), at any white space.
    let shell_split = text.contains([' ', '\t']) || text.contains(is_operator);
    let is_blank = |c: char| if shell_split { matches!(c, ' ' | '\t') } else { c.is_whitespace() };
    let mut words = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some(&(start, c)) = chars.peek() {
        if is_blank(c) && c != '\n' {
            chars.next();
            continue;
        }
        let mut value = String::new();
        let mut end = start;
        if text[start..].starts_with(POSITIONAL_SHOWN) {
            // Shown already (a note's command line redacted again).
            for _ in 0..POSITIONAL_SHOWN.len() {
                chars.next();
            }
            words.push((POSITIONAL_SHOWN.to_string(), start..start + POSITIONAL_SHOWN.len(), false));
            continue;
        }
        if is_operator(c) {
            while let Some(&(at, c)) = chars.peek().filter(|(_, c)| is_operator(*c)) {
                value.push(c);
                end = at + c.len_utf8();
                chars.next();
            }
            words.push((value, start..end, true));
            continue;
        }
        let mut quote: Option<char> = None;
        // The value is the text from `run` on, up to a character left out of it (a quote, a
        // backslash that escapes): copied a run at a time, not a character at a time.
        let mut run = start;
        while let Some(&(at, c)) = chars.peek() {
            match quote {
                None if is_blank(c) || is_operator(c) => break,
                None if c == '\'' || c == '"' => {
                    value.push_str(&text[run..at]);
                    run = at + 1;
                    quote = Some(c);
                }
                None if c == '\\' => {
                    value.push_str(&text[run..at]);
                    chars.next();
                    end = at + 1;
                    run = end;
                    if let Some(&(at, c)) = chars.peek() {
                        end = at + c.len_utf8();
                        chars.next();
                    }
                    continue;
                }
                Some(q) if c == q => {
                    value.push_str(&text[run..at]);
                    run = at + 1;
                    quote = None;
                }
                Some('"') if c == '\\' => {
                    chars.next();
                    end = at + 1;
                    match chars.peek() {
                        Some(&(next, c)) => {
                            // Kept, unless it escapes one of these.
                            if matches!(c, '"' | '\\' | '$' | '`') {
                                value.push_str(&text[run..at]);
                                run = next;
                            }
                            end = next + c.len_utf8();
                            chars.next();
                        }
                        None => {
                            value.push_str(&text[run..at]);
                            run = end;
                        }
                    }
                    continue;
                }
                _ => {}
            }
            end = at + c.len_utf8();
            chars.next();
        }
        value.push_str(&text[run..end]);
        words.push((value, start..end, false));
    }
    words
}

/// Does `prev` (the argument before `k`) hand a script to a shell, cmd or PowerShell (`-c`,
/// `-ec`, `/c`, `/k`, `-Command`)?
pub(super) fn is_script_flag(prev: &str) -> bool {
    (prev.starts_with('-') && !prev.starts_with("--") && prev.ends_with('c'))
        || ["/c", "/k", "-command"].iter().any(|f| prev.eq_ignore_ascii_case(f))
}

/// The start of `text` when it is longer than `chars` characters: its first `chars`, cut at
/// the last white space (the word cut dropped, so that no part of a secret is left to show and
/// redact); `None` for a shorter text.
pub(crate) fn head_at_blank(text: &str, chars: usize) -> Option<&str> {
    let (at, _) = text.char_indices().nth(chars)?;
    Some(text[..at].rsplit_once(char::is_whitespace).map_or("", |(head, _)| head))
}

/// An exec command for messages, redacted ([`redact_argv`]): a `sh -c` script shown as its
/// words re-joined (`sh -c 'redis-cli -a *** ping'`), about `max_chars` of it; other arguments
/// quoted where needed. A script longer than `2 * max_chars` characters is cut at a blank before
/// it is redacted (the whole text of a long script costs more to split than the rest of the
/// evaluation), the cut word dropped, so that no part of a secret is left to show, and the values
/// of the variables it sets are all shown as `***` (where they are used is past the cut).
pub(crate) fn redact_command(argv: &[String], max_chars: usize) -> String {
    let after_c = |k: usize| k > 0 && is_script_flag(&argv[k - 1]) && !argv[k - 1].starts_with('/');
    let mut cut = vec![false; argv.len()];
    let heads: Vec<String> = argv
        .iter()
        .enumerate()
        .map(|(k, a)| match head_at_blank(a, 2 * max_chars) {
            Some(head) if after_c(k) => {
                cut[k] = true;
                redact_cut_assignments(head)
            }
            _ => a.clone(),
        })
        .collect();
    let shown = redact_argv(&heads);
    let mut out = Vec::with_capacity(argv.len());
    for (k, s) in shown.iter().enumerate() {
        if !after_c(k) {
            out.push(quote_word(s));
            continue;
        }
        // A cut inside quotes is closed with the quote it needs; a script that cannot be split
        // at all is shown as written.
        let words = shell_words::split(s)
            .or_else(|_| shell_words::split(&format!("{s}\"")))
            .or_else(|_| shell_words::split(&format!("{s}'")));
        out.push(match words {
            Ok(words) => {
                // Only as many words as can be shown.
                let mut length = 0;
                let shown: Vec<String> = words
                    .iter()
                    .take_while(|w| {
                        let keep = length <= max_chars;
                        length += w.len() + 1;
                        keep
                    })
                    .map(|w| quote_word(w))
                    .collect();
                format!("'{}'", shown.join(" "))
            }
            Err(_) => format!("'{s}{}'", if cut[k] { " …" } else { "" }),
        });
    }
    out.join(" ")
}

/// An exec command for `explain`: as written (its arguments joined with shell quoting, a script
/// given to `-c`, cmd's `/c`/`/k` or PowerShell's `-Command` as typed, its `;`, quoting and
/// variables kept), with only the secrets [`redact_argv`] finds replaced (`sh -c 'h=db;
/// pg_isready -h $h'` stays as it is; `sh -c 'P=***; redis-cli -a $P ping'`).
pub(crate) fn redact_as_written(argv: &[String]) -> String {
    let shown = redact_argv(argv);
    let mut out = Vec::with_capacity(argv.len());
    for (k, (a, s)) in argv.iter().zip(&shown).enumerate() {
        let script = k > 0 && is_script_flag(&argv[k - 1]) && a.contains(char::is_whitespace);
        if script {
            out.push(shell_words::quote(s).into_owned());
        } else if s == a {
            out.push(shell_words::quote(a).into_owned());
        } else {
            out.push(quote_word(s));
        }
    }
    out.join(" ")
}
