//! The script's text as the shell runs it, for word searches ([`super::mentions`]): comments and
//! the literal strings `echo` and `printf` only print are blanked, so `# we do not use pipefail`
//! or `echo "see trap"` never reads as a `pipefail` or `trap` the script runs (s25: both turned a
//! warning into a denial; bash 5.2 and dash 0.5.12 run neither word).
//!
//! Blanks are spaces of the same length (byte offsets are kept). A comment starts with `#` at the
//! beginning of a word (bash manual, "Comments"; POSIX 2.3 rule 9) and runs to the end of its
//! line. A string is blanked only when it is an argument of a command named `echo` or `printf`,
//! holds no `$` or backquote (its text is exactly what is printed), and that command neither
//! feeds a pipe nor writes a file other than `/dev/...` (the text could then run: `echo "exit 1" |
//! sh`). Text the scan does not follow with certainty (a here-document, `$'...'`, a command
//! substitution inside double quotes, an unclosed quote) is kept as written from there on: a word
//! found in it still counts, as before.
//!
//! The name of `kill -0 PID` is blanked too: signal 0 is not sent, only whether the process
//! exists is tested (kill(1) "-0", kill(2) "If sig is 0, then no signal is sent, but existence
//! and permission checks are still performed"), so it changes no state and ends nothing, as
//! `test -e /proc/PID` (s25: `C || echo down >&2; kill -0 1` was denied, 0 / 0 in bash and dash).

use std::borrow::Cow;

/// Words that do not name the command when they come where its name would (`if echo ...`).
const BEFORE_NAME: &[&str] = &["if", "then", "do", "else", "elif", "while", "until", "!", "{", "time"];

/// `src` with comments and printed literal strings blanked (see the module docs); borrowed when
/// there is nothing to blank.
pub(in crate::engine::exec) fn code_view(src: &str) -> Cow<'_, str> {
    if !src.contains(['#', '"', '\'']) && !src.contains("kill") {
        return Cow::Borrowed(src);
    }
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let mut changed = false;
    let mut scan = Scan::default();
    let mut i = 0;
    let mut whole = true;
    while i < b.len() {
        let c = b[i];
        match c {
            b'#' if i == 0 || matches!(b[i - 1], b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(') => {
                let end = memchr::memchr(b'\n', &b[i..]).map_or(b.len(), |e| i + e);
                out[i..end].fill(b' ');
                changed = true;
                i = end;
                continue;
            }
            b'\\' => {
                scan.in_word(i);
                i += 2;
                continue;
            }
            b'\'' => {
                if i > 0 && b[i - 1] == b'$' {
                    whole = false;
                    break;
                }
                let Some(len) = memchr::memchr(b'\'', &b[i + 1..]) else {
                    whole = false;
                    break;
                };
                scan.in_word(i);
                scan.string(i + 1, i + 1 + len);
                i += len + 2;
                continue;
            }
            b'"' => {
                let mut j = i + 1;
                let mut plain = true;
                let mut closed = false;
                while j < b.len() {
                    match b[j] {
                        b'\\' => j += 1,
                        b'"' => {
                            closed = true;
                            break;
                        }
                        b'`' => break,
                        b'$' if b.get(j + 1) == Some(&b'(') => break,
                        b'$' => plain = false,
                        _ => {}
                    }
                    j += 1;
                }
                if !closed {
                    whole = false;
                    break;
                }
                scan.in_word(i);
                if plain {
                    scan.string(i + 1, j);
                }
                i = j + 1;
                continue;
            }
            b'&' if b.get(i + 1) == Some(&b'>') => {
                // (`&>FILE`: a redirection, read by the next byte's arm.)
                scan.end_word(src, i);
                i += 1;
                continue;
            }
            b'<' if b.get(i + 1) == Some(&b'<') && b.get(i + 2) != Some(&b'<') => {
                whole = false;
                break;
            }
            b'<' | b'>' => {
                scan.end_word(src, i);
                let mut j = i;
                let mut dup = false;
                while j < b.len() && matches!(b[j], b'<' | b'>' | b'|' | b'&') {
                    dup |= b[j] == b'&';
                    j += 1;
                }
                while j < b.len() && matches!(b[j], b' ' | b'\t') {
                    j += 1;
                }
                if c == b'>' && !dup && !b[j..].starts_with(b"/dev/") {
                    scan.writes = true;
                }
                scan.target = true;
                i = j;
                continue;
            }
            b' ' | b'\t' => scan.end_word(src, i),
            b'|' => {
                scan.end_word(src, i);
                let piped = b.get(i + 1) != Some(&b'|');
                if piped {
                    scan.writes = true;
                } else {
                    i += 1;
                }
                changed |= scan.end_command(&mut out);
            }
            b'\n' | b';' | b'&' | b'(' | b')' => {
                scan.end_word(src, i);
                changed |= scan.end_command(&mut out);
            }
            _ => scan.in_word(i),
        }
        i += 1;
    }
    // (The last command ends with the text.)
    if whole {
        scan.end_word(src, b.len());
        changed |= scan.end_command(&mut out);
    }
    if !changed {
        return Cow::Borrowed(src);
    }
    // (Only ASCII bytes were replaced, each by a space, and only whole runs between ASCII
    // delimiters: the text stays UTF-8.)
    Cow::Owned(String::from_utf8(out).unwrap_or_else(|_| src.to_string()))
}

/// Where the scan is within the current simple command.
#[derive(Default)]
struct Scan {
    /// Where the current word began, if one is open.
    word: Option<usize>,
    /// The command's name has been read (a word after it is an argument).
    named: bool,
    /// The command's name is `echo` or `printf`.
    prints: bool,
    /// The next word is a redirection's target, not the command's name.
    target: bool,
    /// The command feeds a pipe or writes a file: its strings may run.
    writes: bool,
    /// The literal strings among its arguments (start and end of the text inside the quotes).
    strings: Vec<(usize, usize)>,
    /// Where the command's name `kill` is, until its first argument is read.
    kill: Option<usize>,
    /// A `kill -0` name to blank (it sends no signal: kill(1), kill(2)).
    probe: Option<usize>,
}

impl Scan {
    fn in_word(&mut self, at: usize) {
        if self.word.is_none() {
            self.word = Some(at);
        }
    }

    fn string(&mut self, from: usize, to: usize) {
        if self.named && !self.target {
            self.strings.push((from, to));
        }
    }

    fn end_word(&mut self, src: &str, at: usize) {
        let Some(from) = self.word.take() else {
            return;
        };
        let w = src.get(from..at).unwrap_or("");
        if self.target {
            self.target = false;
        } else if let Some(at) = self.kill.take() {
            self.probe = (w == "-0").then_some(at);
        } else if !self.named && !BEFORE_NAME.contains(&w) && !is_assignment(w) {
            self.named = true;
            self.prints = matches!(w, "echo" | "printf");
            self.kill = (w == "kill").then_some(from);
        }
    }

    /// Ends the command: blanks its strings when it only prints them; whether it blanked any.
    fn end_command(&mut self, out: &mut [u8]) -> bool {
        let mut blank = self.prints && !self.writes && !self.strings.is_empty();
        if blank {
            for (from, to) in &self.strings {
                out[*from..*to].fill(b' ');
            }
        }
        if let Some(at) = self.probe {
            out[at..at + 4].fill(b' ');
            blank = true;
        }
        *self = Scan::default();
        blank
    }
}

/// `NAME=...` (a prefix assignment, not the command's name).
fn is_assignment(w: &str) -> bool {
    w.split_once('=')
        .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_'))
}

#[cfg(test)]
mod tests {
    use super::code_view;

    #[test]
    fn comments_and_printed_strings_are_blanked() {
        assert_eq!(code_view("# pipefail\nx"), "          \nx");
        assert_eq!(code_view("echo \"pipefail\"; x"), "echo \"        \"; x");
        assert_eq!(code_view("echo 'trap' >&2; x"), "echo '    ' >&2; x");
        assert_eq!(code_view("a # trap"), "a       ");
        assert_eq!(code_view("c; kill -0 1"), "c;      -0 1");
        assert_eq!(code_view("c; echo \"trap\""), "c; echo \"    \"");
    }

    #[test]
    fn code_and_data_that_may_run_are_kept() {
        for s in [
            "echo ${#x} a#b $(x)#trap ${y}#trap",
            "echo 'set -e' &> /tmp/f; . /tmp/f",
            "trap 'exit 0' EXIT",
            "echo 'exit 1' | sh",
            "echo 'set -e' > /tmp/f; . /tmp/f",
            "echo \"$x trap\"",
            "echo \"$(trap)\" # c",
            "cat <<EOF\n# x\nEOF",
            "echo $'trap'",
            "\"echo\" 'x'",
            "kill -9 1; kill 1; kill -s 0",
        ] {
            let v = code_view(s);
            assert!(v.len() == s.len() && (v == s || s.contains("# c")), "{s:?} -> {v:?}");
        }
    }
}
