//! A piece's words, quotes removed: [`shell_words::split`]'s reading, made with fewer
//! allocations ([`super::piece_words`] splits every piece of every script analysed).

/// The words of `s` as [`shell_words::split`] reads them (blanks, tabs and newlines between
/// words; single and double quotes, backslash escapes and `#` comments as it reads them), or
/// `None` where it gives an error (a quote left open, a backslash ending a double-quoted text).
/// A word's value is copied from `s` a run at a time, not a character at a time: every byte
/// the reading stops at is ASCII, so each run starts and ends at a character's boundary.
pub(in super::super) fn split(s: &str) -> Option<Vec<String>> {
    #[derive(Clone, Copy)]
    enum State {
        Delimiter,
        Unquoted,
        Single,
        Double,
    }
    let b = s.as_bytes();
    let mut words = Vec::new();
    let mut word = String::new();
    let mut state = State::Delimiter;
    // `s[run..i]` is the current word's value as written, not yet copied into `word`.
    let mut run = 0;
    let mut i = 0;
    while i < b.len() {
        match (state, b[i]) {
            (State::Delimiter, b'\t' | b' ' | b'\n') => {}
            (State::Delimiter, b'#') => match b[i..].iter().position(|&c| c == b'\n') {
                // A comment, up to and including the newline that ends it.
                Some(k) => i += k,
                None => break,
            },
            (State::Delimiter, b'\\') => match b.get(i + 1) {
                // A line continuation between words.
                Some(b'\n') => i += 1,
                // The escaped character begins the word (a backslash last is kept).
                Some(_) => {
                    (state, run) = (State::Unquoted, i + 1);
                    i += 1;
                }
                None => (state, run) = (State::Unquoted, i),
            },
            (State::Delimiter | State::Unquoted, quote @ (b'\'' | b'"')) => {
                if let State::Unquoted = state {
                    word.push_str(&s[run..i]);
                }
                state = if quote == b'\'' { State::Single } else { State::Double };
                run = i + 1;
            }
            (State::Delimiter, _) => (state, run) = (State::Unquoted, i),
            (State::Unquoted, b'\\') => {
                word.push_str(&s[run..i]);
                match b.get(i + 1) {
                    Some(b'\n') => {
                        run = i + 2;
                        i += 1;
                    }
                    Some(_) => {
                        run = i + 1;
                        i += 1;
                    }
                    // A backslash last is kept.
                    None => run = i,
                }
            }
            (State::Unquoted, b'\t' | b' ' | b'\n') => {
                word.push_str(&s[run..i]);
                words.push(std::mem::take(&mut word));
                state = State::Delimiter;
            }
            (State::Single, b'\'') | (State::Double, b'"') => {
                word.push_str(&s[run..i]);
                state = State::Unquoted;
                run = i + 1;
            }
            (State::Double, b'\\') => match b.get(i + 1) {
                None => return None,
                // Dropped with its newline; the backslash alone before these.
                Some(b'\n' | b'$' | b'`' | b'"' | b'\\') => {
                    word.push_str(&s[run..i]);
                    run = if b[i + 1] == b'\n' { i + 2 } else { i + 1 };
                    i += 1;
                }
                // Kept, with the character it stands before.
                Some(_) => i += 1,
            },
            _ => {}
        }
        i += 1;
    }
    match state {
        State::Delimiter => {}
        State::Unquoted => {
            word.push_str(&s[run..]);
            words.push(word);
        }
        State::Single | State::Double => return None,
    }
    Some(words)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        /// `split` reads every text as `shell_words::split` does: the same words, or an error
        /// where it gives one (quotes, escapes inside and outside double quotes, line
        /// continuations, comments, non-ASCII characters, a backslash last).
        #[test]
        fn split_reads_texts_as_shell_words_does(
            pieces in proptest::collection::vec(proptest::sample::select(vec![
                "a", "pw", "x=", " ", "\t", "\n", "'", "\"", "\\", "$", "`", "#", "é", "\u{a0}", "日本",
                "\\\n", "\\\"", "\\$", "\\é", "''", "\"\"", "-p",
            ]), 0..16)
        ) {
            let text = pieces.concat();
            prop_assert_eq!(super::split(&text), shell_words::split(&text).ok(), "{:?}", text);
        }
    }

    #[test]
    fn split_removes_quotes_and_keeps_what_they_quote() {
        assert_eq!(
            super::split("mysqladmin status -uroot -p\"${password_aux}\" 'a b'\\ c # x").unwrap(),
            ["mysqladmin", "status", "-uroot", "-p${password_aux}", "a b c"]
        );
        assert_eq!(super::split("a \"b"), None);
    }
}
