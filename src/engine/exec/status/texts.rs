//! Words of a script's text the status walk's [`Rules`](super::Rules) read before any tree: an
//! exit status with a literal default (`exit ${RC:-0}`) and bare `wait`s (moved out of
//! `status.rs`, unchanged).

/// `text` with each variable expansion that has a literal numeric default, `${RC:-0}` or
/// `${RC-0}`, replaced by its default: as an `exit`/`return` status it is never
/// empty, so never the bare `exit` that returns the last command's status (POSIX, Shell Command
/// Language, 2.6.2 "Parameter Expansion"). Its value is the default or one set by the environment
/// or by the script, whose assignments the walk follows (`pg_isready -h db; RC=$?; exit ${RC:-0}`
/// stays denied). bash 5.2 and dash 0.5.12, with the database down: `pg_isready -h db; exit
/// ${RC:-0}` exits 0. Not a positional or special parameter (`${1:-0}`, `${?:-0}`).
pub(super) fn literal_defaults(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let default = after.split_once('}').and_then(|(inner, _)| {
            let (name, default) = inner.split_once(":-").or_else(|| inner.split_once('-'))?;
            (name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                && !default.is_empty()
                && default.bytes().all(|b| b.is_ascii_digit()))
            .then_some((default, inner.len()))
        });
        match default {
            Some((default, len)) => {
                out.push_str(default);
                rest = &after[len + 1..];
            }
            None => {
                out.push_str("${");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Whether every `wait` in `src` is a bare `wait` command (no operand, no option): it waits for
/// every background job and its status is 0 (POSIX, "wait": "If one or more operands were
/// specified, all of them have terminated [...] Otherwise, the exit status shall be zero"; bash 5.2
/// and dash 0.5.12: `pg_isready -h db & wait` exits 0 with the database down). `wait $!`,
/// `wait -n`, `wait %1` return a job's status; any other use of the word is not understood.
pub(super) fn only_bare_waits(src: &str) -> bool {
    src.match_indices("wait").all(|(at, _)| {
        let before = src[..at].chars().next_back();
        let word_start =
            before.is_none_or(|c| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | '{' | '`'));
        let rest = src[at + 4..].trim_start_matches([' ', '\t']);
        let word_end =
            rest.chars().next().is_none_or(|c| matches!(c, '\n' | ';' | '&' | '|' | ')' | '}' | '#' | '`'));
        // (`await`, `waiter`: another word, not a `wait` at all.)
        let other_word =
            !word_start || src[at + 4..].chars().next().is_some_and(|c| c.is_alphanumeric() || c == '_');
        other_word || word_end
    })
}
