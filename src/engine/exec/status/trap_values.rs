//! Traps that only clean up, with a value in their action (s25 false denials, deny24's list):
//! - a double-quoted action expands its parameters when the `trap` runs, and the shell reads the
//!   text that results as commands when the trap fires (bash manual, `trap`; POSIX `trap`):
//!   `trap "rm -f $TMPF" EXIT` removes the file `TMPF` named then. Read here with each plain
//!   parameter (`$NAME`, `${NAME}`, `$$`, `$!`) as one word ([`quoted_parameter`]); whether its
//!   value is a plain word is [`plain_value`]'s (`TMPF=$(mktemp)`, `PID=$!`, a literal path), and
//!   any other value (from the env, the image, a Secret) is a doubt, never a denial
//!   (`Ctx::analyze_script`: a value `x; exit 1` would be a command of the action);
//! - `kill` of a background child (`sleep 100 & PID=$!; trap 'kill $PID' EXIT`): its operands
//!   are `$!` or a variable only ever assigned `$!` (or a job, `%1`), so it signals no process of
//!   the script's own shell, and the trap keeps the status the shell was exiting with
//!   ([`kills_only_children`]).
//!
//! Checked with bash 5.2.15 and dash 0.5.12 and stub clients (`redis-cli` 0 up, 1 down; statuses
//! up / down): `trap "rm -f $TMPF" EXIT; C; echo ok`, `TMPF=$(mktemp); trap "rm -f $TMPF" EXIT;
//! C; echo ok` and `sleep 100 & PID=$!; trap 'kill $PID' EXIT; C; echo ok` exit 0 / 0; with the
//! check last 0 / 1 (coupled); `trap "rm -f $F; exit 1" EXIT; C; echo ok` 1 / 1 (fails every
//! time); `trap 'kill $$' EXIT; C; echo ok` 143 / 143 (the shell signals itself: not taken).

use super::super::context::is_ident;
use super::super::flow::mentions;

/// The parameter a `$` inside a double-quoted trap action starts, when it is a plain one: `$NAME`,
/// `${NAME}`, `$$` or `$!` (`rest` is the text after the `$`). Its name (`$` or `!` for those) and
/// the bytes it takes after the `$`. Anything else (`$1`, `${X:-y}`, `$(...)`, `$?`) is `None`.
pub(super) fn quoted_parameter(rest: &str) -> Option<(String, usize)> {
    if rest.starts_with(['$', '!']) {
        return Some((rest[..1].to_string(), 1));
    }
    let (inner, braced) = match rest.strip_prefix('{') {
        Some(r) => (r, true),
        None => (rest, false),
    };
    let len = inner.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_').count();
    let name = &inner[..len];
    if !is_ident(name) {
        return None;
    }
    if braced {
        return inner[len..].starts_with('}').then(|| (name.to_string(), len + 2));
    }
    Some((name.to_string(), len))
}

/// Whether a `$` inside a double-quoted trap action, followed by `rest`, is the text `$`: it
/// starts no parameter, as the closing quote, a blank or one of `/.,:=+%]}` comes next (bash
/// manual, "Double Quotes": only `$` followed by a name, a special parameter, `{`, `(` or `[`
/// expands). The kubelet turns a probe command's `$$` into `$` (its `$(VAR)` escape), so `trap
/// "rm -f /tmp/x.$$" EXIT` in the probe's own `sh -c` runs `rm -f /tmp/x.$` (s26: with the check
/// and `test -d /` after it, bash 5.2.15 and dash 0.5.12 exit 0 / 0 either way).
pub(super) fn literal_dollar(rest: &str) -> bool {
    rest.chars().next().is_none_or(|c| {
        c == '"' || c.is_whitespace() || matches!(c, '/' | '.' | ',' | ':' | '=' | '+' | '%' | ']' | '}')
    })
}

/// `src` with each `trap` command (the word `trap` where a command starts, to its first unquoted
/// `;`, newline, `&` or `|`) blanked, same length: for word searches that `traps::harmless_traps`
/// has already judged inside traps' actions (a `wait $PID` there, s26).
pub(super) fn without_trap_commands(src: &str) -> String {
    let mut out = src.as_bytes().to_vec();
    for i in super::texts::whole_words(src, "trap") {
        let before = src[..i].trim_end_matches([' ', '\t']);
        if !(before.is_empty() || before.ends_with([';', '\n', '&', '|', '{', '('])) {
            continue;
        }
        let mut quote: Option<u8> = None;
        let mut end = src.len();
        let b = src.as_bytes();
        let mut j = i;
        while j < b.len() {
            match (quote, b[j]) {
                (Some(q), c) if c == q => quote = None,
                (Some(b'"'), b'\\') => j += 1,
                (Some(_), _) => {}
                (None, b'\\') => j += 1,
                (None, c @ (b'\'' | b'"')) => quote = Some(c),
                (None, b';' | b'\n' | b'&' | b'|') => {
                    end = j;
                    break;
                }
                _ => {}
            }
            j += 1;
        }
        let end = end.min(out.len());
        out[i..end].fill(b' ');
    }
    String::from_utf8(out).unwrap_or_else(|_| src.to_string())
}

/// Whether the value `NAME` holds where a `trap` at byte `at` of `src` expands it is one word
/// with no shell syntax: `$` (the shell's process ID) and `!` (a background child's) are
/// numbers; a variable every assignment of which (at least one, before `at`) is `$!`, `$$`, a
/// literal of letters, digits and `_./:@%+-`, or `$(mktemp ...)` with such words only (mktemp
/// prints the path it made from its template, "mktemp invocation"), in a script that assigns it
/// no other way (`read`, `for`, `getopts`, `mapfile`, `printf -v`, `eval`, `declare`).
pub(in crate::engine::exec) fn plain_value(src: &str, name: &str, at: usize) -> bool {
    if matches!(name, "$" | "!") {
        return true;
    }
    if mentions(
        src,
        &["read", "for", "getopts", "mapfile", "readarray", "eval", "declare", "typeset", "source"],
    ) || src.split_whitespace().any(|w| w == "-v" || w == ".")
    {
        return false;
    }
    let values = assigned_values(src, name);
    !values.is_empty()
        && values.iter().any(|(start, _)| *start < at)
        && values.iter().all(|(_, v)| plain_word(v))
}

/// Whether an assigned value (as written) is one plain word ([`plain_value`]).
fn plain_word(value: &str) -> bool {
    let v = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')).unwrap_or(value);
    let literal =
        |w: &str| !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphanumeric() || b"_./:@%+-".contains(&b));
    if matches!(v, "$!" | "$$") || literal(v) {
        return true;
    }
    v.strip_prefix("$(")
        .and_then(|v| v.strip_suffix(')'))
        .map(|c| c.split_whitespace().collect::<Vec<_>>())
        .is_some_and(|words| words.first() == Some(&"mktemp") && words[1..].iter().all(|w| literal(w)))
}

/// Each assignment `NAME=VALUE` in `src` (at the start of a word: after a blank, `;`, `&`, `|`,
/// `(`, `{` or at the start): where it starts and its value as written (up to an unquoted blank
/// or separator; a `$( )` to its closing parenthesis).
fn assigned_values<'s>(src: &'s str, name: &str) -> Vec<(usize, &'s str)> {
    let mut out = Vec::new();
    for (at, _) in src.match_indices(name) {
        let before = src[..at].chars().next_back();
        let after = &src[at + name.len()..];
        if !before.is_none_or(|c| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | '{'))
            || !after.starts_with('=')
        {
            continue;
        }
        let value = &after[1..];
        let (mut depth, mut quote, mut end) = (0usize, false, value.len());
        for (i, c) in value.char_indices() {
            match c {
                '"' => quote = !quote,
                '(' => depth += 1,
                ')' if depth > 0 => depth -= 1,
                c if depth == 0 && !quote && (c.is_whitespace() || matches!(c, ';' | '&' | '|' | ')')) => {
                    end = i;
                    break;
                }
                _ => {}
            }
        }
        out.push((at, &value[..end]));
    }
    out
}

/// Whether every `kill` in `text` (a trap's action, or the whole script `src`) signals only
/// background children of the script: each operand is `$!`, a job (`%1`, `%%`, `%+`, `%-`) or a
/// variable every assignment of which in `src` is `$!` (`PID=$!`), quoted or braced, after
/// signal options (`-TERM`, `-9`, `-s KILL`, `--`), its output dropped or not (`2>/dev/null`). Not `kill $$`, `kill 0` or `kill -1` (the
/// shell itself, its group, every process), nor a pid known only at run time.
pub(super) fn kills_only_children(src: &str, text: &str) -> bool {
    only_children(src, text, "kill", false)
}

/// [`kills_only_children`] of the script `src` outside its `trap` commands, whose actions'
/// `kill`s `traps::harmless_traps` judges (s27: `trap 'kill 42' EXIT`); true with no `kill` there.
pub(super) fn kills_only_children_outside_traps(src: &str) -> bool {
    let outside = without_trap_commands(src);
    !mentions(&outside, &["kill"]) || kills_only_children(src, &outside)
}

/// Whether every `kill` in `text` (an EXIT trap's action) signals a target that is the same on
/// every path the script takes: a background child, as [`kills_only_children`] reads it, or a
/// literal pid above 1 (`kill 42`), or a variable the script never assigns nor names but as
/// `$NAME`/`${NAME}` (`kill $p`, `$p` from the container's env or unset). Run as the shell exits,
/// such a `kill` either signals another process, and the shell exits with the status it had
/// (POSIX `trap`: `$?` after the action is the value before it), or happens to signal the shell
/// itself, which then ends with 128 + the signal on every path alike: either way the check's
/// outcome decides nothing new (s27: `trap 'kill 42' EXIT; C; echo ok` and `trap 'rm -f /tmp/x;
/// kill $p 2>/dev/null' EXIT; C; echo ok` exit 0 / 0 in bash 5.2.15 and dash 0.5.12 with the
/// redis-cli stub up / down; `trap 'kill 42' EXIT; C` 0 / 1). Not `kill $$`, `kill 0`, `kill
/// -1` (the shell, its group, every process: `trap 'kill $$' EXIT; C` exits 143 / 143, not read
/// here) nor a variable the script sets, whose value may differ between paths.
pub(super) fn kills_steady_targets(src: &str, text: &str) -> bool {
    only_children(src, text, "kill", true)
}

/// Whether every `wait` in `text` (a command of an EXIT trap's action) waits only for background
/// children of the script, its operands read as [`kills_only_children`] reads `kill`'s: `sleep 5
/// & PID=$!; trap 'kill $PID; wait $PID' EXIT` (s26). Run as the shell exits, without errexit,
/// its status (143 for a child the `kill` ended) is the action's, not the script's (POSIX `trap`):
/// bash 5.2.15 and dash 0.5.12 exit 0 / 0 with `redis-cli` down / up on `...; C; test -d /`, and
/// 143 / 143 after `set -e` (not taken: `traps::harmless_traps` asks for no errexit). A bare
/// `wait` (every child) is not read here.
pub(super) fn waits_only_for_children(src: &str, text: &str) -> bool {
    only_children(src, text, "wait", false)
}

/// Whether `operand` (a `kill` operand, quotes removed) names a target that is the same on every
/// path ([`kills_steady_targets`]): a literal pid above 1, or `$NAME`/`${NAME}` of a variable
/// `src` names nowhere else.
fn steady_target(src: &str, operand: &str) -> bool {
    if !operand.is_empty() && operand.bytes().all(|b| b.is_ascii_digit()) {
        return operand.parse::<u64>().is_ok_and(|pid| pid > 1);
    }
    let Some(name) =
        operand.strip_prefix("${").and_then(|v| v.strip_suffix('}')).or_else(|| operand.strip_prefix('$'))
    else {
        return false;
    };
    if !super::super::context::is_ident(name) || name.starts_with(|c: char| c.is_ascii_digit()) {
        return false;
    }
    let bytes = src.as_bytes();
    super::texts::whole_words(src, name).all(|i| {
        let before = &bytes[..i];
        let next = bytes.get(i + name.len()).copied();
        (before.ends_with(b"$") && !before.ends_with(b"$$") && next != Some(b'{'))
            || before.ends_with(b"${") && next == Some(b'}')
    })
}

/// [`kills_only_children`] for the command `word` (`kill` or `wait`); with `steady`, also
/// [`steady_target`]s.
fn only_children(src: &str, text: &str, word: &str, steady: bool) -> bool {
    let mut found = false;
    for i in super::texts::whole_words(text, word) {
        let before = text[..i].trim_end_matches([' ', '\t']);
        // (Or after a keyword that starts a body, s27: `if ! C; then kill $pid; fi`.)
        let keyword = ["then", "else", "do"].iter().any(|k| {
            before.strip_suffix(k).is_some_and(|b| b.is_empty() || b.ends_with([' ', '\t', ';', '\n']))
        });
        if !(keyword || before.is_empty() || before.ends_with([';', '\n', '&', '|', '{', '(', '\'', '"'])) {
            return false;
        }
        // (Not at `}`: `${PID}`; a `}` closing a group is a word no operand is.)
        let command = text[i + word.len()..].split([';', '\n', '&', '|', '\'', ')']).next().unwrap_or("");
        let mut words = command.split_whitespace();
        let mut operands = 0;
        while let Some(word) = words.next() {
            // (A `"` left open closes a double-quoted action: `trap "kill $!" EXIT`.)
            let (w, last) = match word.matches('"').count() % 2 {
                1 => (word.trim_end_matches('"'), true),
                _ => (word, false),
            };
            if w == "-s" || w == "-n" {
                if words.next().is_none() {
                    return false;
                }
                continue;
            }
            // (Its output dropped: `kill $PID 2>/dev/null`.)
            if matches!(w, "--" | "2>/dev/null" | ">/dev/null" | "1>/dev/null") {
                continue;
            }
            if operands == 0
                && w.starts_with('-')
                && w.len() > 1
                && w[1..].bytes().all(|b| b.is_ascii_alphanumeric())
                && w != "-l"
                && w != "-L"
            {
                continue;
            }
            let inner = w.trim_matches('"');
            let child = steady && steady_target(src, inner)
                || match inner {
                    "$!" | "${!}" | "%%" | "%+" | "%-" => true,
                    j if j.starts_with('%') && j.len() > 1 && j[1..].bytes().all(|b| b.is_ascii_digit()) => {
                        true
                    }
                    v => quoted_parameter(v.strip_prefix('$').unwrap_or("")).is_some_and(|(name, len)| {
                        len + 1 == v.len() && !matches!(name.as_str(), "$" | "!") && {
                            let values = assigned_values(src, &name);
                            !values.is_empty() && values.iter().all(|(_, v)| matches!(*v, "$!" | "\"$!\""))
                        }
                    }),
                };
            if !child {
                return false;
            }
            operands += 1;
            if last {
                break;
            }
        }
        if operands == 0 {
            return false;
        }
        found = true;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::{kills_only_children, plain_value, quoted_parameter};

    #[test]
    fn a_quoted_parameter_is_plain_or_not_read() {
        assert_eq!(quoted_parameter("TMPF\" EXIT"), Some(("TMPF".to_string(), 4)));
        assert_eq!(quoted_parameter("{TMPF}.x"), Some(("TMPF".to_string(), 6)));
        assert_eq!(quoted_parameter("$ x"), Some(("$".to_string(), 1)));
        for rest in ["1", "?", "(cat f)", "{X:-y}", "{X", "@"] {
            assert_eq!(quoted_parameter(rest), None, "{rest}");
        }
    }

    #[test]
    fn a_value_is_plain_when_every_assignment_is_a_plain_word() {
        for (src, plain) in [
            ("TMPF=$(mktemp); trap \"rm -f $TMPF\" EXIT", true),
            ("TMPF=\"$(mktemp -d /tmp/probe.XXXXXX)\"; trap \"rm -rf $TMPF\" EXIT", true),
            ("TMPF=/tmp/probe.lock; trap \"rm -f $TMPF\" EXIT", true),
            ("sleep 9 & TMPF=$!; trap \"kill $TMPF\" EXIT", true),
            // Not assigned before, assigned a value with syntax or from output, read.
            ("trap \"rm -f $TMPF\" EXIT", false),
            ("trap \"rm -f $TMPF\" EXIT; TMPF=/tmp/x", false),
            ("TMPF='x; exit 1'; trap \"rm -f $TMPF\" EXIT", false),
            ("TMPF=$(cat /etc/f); trap \"rm -f $TMPF\" EXIT", false),
            ("TMPF=/tmp/x; read TMPF; trap \"rm -f $TMPF\" EXIT", false),
            ("TMPF=/tmp/x; TMPF=$Y; trap \"rm -f $TMPF\" EXIT", false),
        ] {
            let at = src.find("trap").unwrap();
            assert_eq!(plain_value(src, "TMPF", at), plain, "{src}");
        }
        assert!(plain_value("trap \"rm -f /tmp/x.$$\" EXIT", "$", 0));
    }

    #[test]
    fn only_a_kill_of_background_children_is_taken() {
        for (src, ok) in [
            ("sleep 100 & PID=$!; trap 'kill $PID' EXIT", true),
            ("sleep 100 & PID=$!; trap 'kill -TERM \"$PID\"' EXIT", true),
            ("sleep 100 & PID=$!; trap 'kill -s KILL ${PID}' EXIT", true),
            ("sleep 100 & trap 'kill %1' EXIT", true),
            ("sleep 100 & trap \"kill $!\" EXIT", true),
            ("sleep 100 & PID=$!; trap 'kill $PID 2>/dev/null' EXIT", true),
            // The shell itself, its group, everything, a pid known only at run time, none.
            ("trap 'kill $$' EXIT", false),
            ("trap 'kill 0' EXIT", false),
            ("trap 'kill -9 -1' EXIT", false),
            ("trap 'kill $PID' EXIT", false),
            ("PID=$(cat /run/p); trap 'kill $PID' EXIT", false),
            ("sleep 1 & PID=$!; PID=$$; trap 'kill $PID' EXIT", false),
            ("trap 'kill' EXIT", false),
            ("trap 'kill -l' EXIT", false),
            ("trap 'echo kill' EXIT", false),
            ("trap 'kill $$ 2>/dev/null' EXIT", false),
            // A pid written out is no child of the script's (s26: CI's surviving mutant of the
            // job-spec test, `&&` made `||`, read `42` as a job); nor `%` alone, which bash 5.2
            // reads as the current job but dash 0.5.12 refuses ("kill: No such process", the
            // child left running).
            ("sleep 100 & trap 'kill 42' EXIT", false),
            ("sleep 100 & trap 'kill %' EXIT", false),
            ("sleep 100 & trap 'kill %x' EXIT", false),
        ] {
            assert_eq!(kills_only_children(src, src), ok, "{src}");
        }
    }
}
