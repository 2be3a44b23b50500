//! A `trap` whose action calls a function of the script (`cleanup() { rm -f /tmp/x; }; trap
//! cleanup EXIT`): harmless, as an action that only writes output or removes files
//! ([`harmless_traps`]), when every definition of the function has such a body; and whether
//! every `trap` of a script changes no status ([`harmless_traps`], moved here from `harmless`).

use super::super::flow::mentions;
use super::harmless::file_targets;
use super::texts::defined_functions;

/// Whether every `trap` in `src` changes no status: its action is empty, `-`, or only writes
/// output or removes files (`trap 'rm -f /tmp/x' EXIT`, `trap '' TERM`), with no expansion; an
/// `ERR`, `DEBUG` or `RETURN` trap (run between the script's commands) only writes output. An
/// EXIT trap's status is not the script's (bash manual, "Bourne Shell Builtins", `trap`; dash
/// the same), and a signal's trap runs on that signal only. Checked with bash 5.2 and dash 0.5.12
/// (`tests/shell_flow.rs`, `a_check_whose_status_is_discarded_is_a_warning`).
///
/// Also taken as changing no status: a trap on signals a probe's run never
/// sends (`trap 'exit 1' INT TERM`: `trap_keeps::never_sent`) and an EXIT trap whose action
/// leaves the status the shell was exiting with (`trap 'false' EXIT`, `trap 'exit' EXIT`,
/// `cleanup(){ return 3; }; trap cleanup EXIT`: `trap_keeps::keeps_exit_status`; `known`: the
/// functions defined before `src` runs, name and body). With `dash`, the script is read as dash
/// 0.5.12 runs it, which has no `ERR` condition ("bad trap", status 1, and the shell runs on
/// without errexit): a trap on `ERR` alone changes nothing there (s24: `trap 'exit 1' ERR; C;
/// echo ok` exits 0 / 0 in dash, 0 / 1 in bash).
pub(in crate::engine::exec) fn harmless_traps(
    src: &str,
    errexit: bool,
    known: &[(String, String)],
    dash: bool,
) -> bool {
    harmless_traps_expanding(src, errexit, known, dash, &mut Vec::new())
}

/// [`harmless_traps`], reading a plain parameter in a double-quoted action (`trap "rm -f $TMPF"
/// EXIT`: `trap_values::quoted_parameter`) as one word, and pushing on `expanded` each such
/// parameter's name and where its `trap` starts: the caller asks whether its value is that
/// (`trap_values::plain_value`), and takes the traps as changing no status only when it is.
pub(in crate::engine::exec) fn harmless_traps_expanding(
    src: &str,
    errexit: bool,
    known: &[(String, String)],
    dash: bool,
    expanded: &mut Vec<(String, usize)>,
) -> bool {
    // (Read as the shell runs it: a comment's `trap`, `# team template: set -eu, trap, ...`, is
    // no command, s26; it kept every check of the script with a real trap from being judged.)
    let code = crate::engine::exec::flow::code_view(src);
    let src: &str = &code;
    let errexit_free =
        !errexit && !super::options::sets_errexit(src) && !mentions(src, &["errexit", "shopt", "SHELLOPTS"]);
    let bytes = src.as_bytes();
    let mut from = 0;
    while let Some(i) = src[from..].find("trap").map(|i| i + from) {
        from = i + 4;
        let before = src[..i].trim_end_matches([' ', '\t']);
        let starts = before.is_empty()
            || before.ends_with([';', '\n', '&', '|', '{', '('])
            || before.ends_with("then")
            || before.ends_with("do")
            || before.ends_with("else");
        let after = bytes.get(i + 4).copied();
        let word_end = after.is_none_or(|b| !(b.is_ascii_alphanumeric() || b == b'_' || b == b'-'));
        let word_start = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if !(word_start && word_end) {
            continue;
        }
        if !starts {
            return false;
        }
        // The words of the command, up to an unquoted separator.
        let mut args: Vec<String> = Vec::new();
        let mut cur = String::new();
        let mut in_word = false;
        let mut quote: Option<char> = None;
        let mut end = src.len();
        let mut chars = src[i + 4..].char_indices();
        while let Some((j, c)) = chars.next() {
            match quote {
                Some(q) if c == q => quote = None,
                // (`$` before the closing quote or a blank is text: `"rm -f /tmp/x.$"`, s26.)
                Some('"') if c == '$' && super::trap_values::literal_dollar(&src[i + 4 + j + 1..]) => {
                    cur.push('$');
                }
                Some('"') if c == '$' => {
                    let Some((name, len)) = super::trap_values::quoted_parameter(&src[i + 4 + j + 1..])
                    else {
                        return false;
                    };
                    // (Kept as written: the action's commands are judged with it as one word.)
                    cur.push('$');
                    for _ in 0..len {
                        if let Some((_, k)) = chars.next() {
                            cur.push(k);
                        }
                    }
                    expanded.push((name, i));
                }
                Some('"') if matches!(c, '`' | '\\') => return false,
                Some(_) => cur.push(c),
                None if matches!(c, '\'' | '"') => {
                    quote = Some(c);
                    in_word = true;
                }
                None if matches!(c, '$' | '`' | '\\' | '<' | '>' | '(' | ')') => return false,
                None if matches!(c, ';' | '\n' | '&' | '|' | '}') => {
                    end = i + 4 + j;
                    break;
                }
                None if c.is_whitespace() => {
                    if in_word {
                        args.push(std::mem::take(&mut cur));
                        in_word = false;
                    }
                }
                None => {
                    cur.push(c);
                    in_word = true;
                }
            }
        }
        if quote.is_some() {
            return false;
        }
        if in_word {
            args.push(cur);
        }
        from = from.max(end);
        if args.first().is_some_and(|a| matches!(a.as_str(), "-p" | "-l")) {
            continue;
        }
        let Some((action, signals)) = args.split_first() else {
            continue;
        };
        let action = action.as_str();
        // Each condition's run changes no status: a signal never sent, or the EXIT condition
        // with an action that keeps the status; under dash, `ERR` is no condition at all.
        let quiet = |c: &String| {
            super::trap_keeps::never_sent(c, errexit_free)
                || super::trap_keeps::is_exit(c)
                    && (super::trap_keeps::keeps_exit_status(src, action, known, errexit_free)
                        || super::trap_actions::keeps_status(action, &["EXIT".to_string()])
                        || super::trap_keeps::keeps_success(action))
        };
        let dash_rejects =
            |c: &String| dash && errexit_free && c.trim_start_matches("SIG").eq_ignore_ascii_case("ERR");
        if !signals.is_empty() && signals.iter().all(quiet) {
            continue;
        }
        if !signals.is_empty() && signals.iter().all(dash_rejects) {
            continue;
        }
        let between = signals.iter().any(|s| {
            matches!(s.trim_start_matches("SIG").to_ascii_uppercase().as_str(), "ERR" | "DEBUG" | "RETURN")
        });
        let commands_ok = action.split([';', '\n']).all(|c| {
            let words: Vec<&str> = c.split_whitespace().collect();
            match words.first() {
                None => true,
                Some(&("echo" | "printf" | "logger" | ":" | "true")) => {
                    file_targets(c).is_empty()
                        && !c.contains(['<', '|'])
                        && !c.contains("&-")
                        && !words.get(1).is_some_and(|w| w.starts_with("-v"))
                }
                Some(&"rm") => !between && !c.contains(['>', '<', '|', '&']),
                // (`kill $PID` of a background child: `trap_values::kills_only_children`; its
                // error output may be dropped, `kill $PID 2>/dev/null`.)
                Some(&"kill") => {
                    !between
                        && !c.contains(['<', '|', '&'])
                        && (super::trap_values::kills_only_children(src, c)
                            // (s27: a target the same on every path, in the script's one trap, an
                            // EXIT trap without errexit: `trap 'kill 42' EXIT`.)
                            || errexit_free
                                && !signals.is_empty()
                                && signals.iter().all(|s| super::trap_keeps::is_exit(s))
                                && super::texts::whole_words(src, "trap").count() == 1
                                && super::trap_values::kills_steady_targets(src, c))
                }
                // (`wait $PID` of a background child, in an EXIT trap without errexit: its
                // status, 143 after a `kill`, is the action's, s26.)
                Some(&"wait") => {
                    !between
                        && errexit_free
                        && !signals.is_empty()
                        && signals.iter().all(|s| super::trap_keeps::is_exit(s))
                        && !c.contains(['<', '|', '&'])
                        && super::trap_values::waits_only_for_children(src, c)
                }
                _ if super::trap_actions::runs_a_client(src, c, signals, errexit) => true,
                _ => super::traps::harmless_handler(src, c, between, errexit),
            }
        });
        let err_only = !signals.is_empty()
            && signals.iter().all(|s| s.trim_start_matches("SIG").eq_ignore_ascii_case("ERR"));
        if !(action == "-"
            || commands_ok
            || (err_only && super::err_log::only_logs(src, action))
            || err_trap_exits_zero(src, action, signals, errexit)
            || super::trap_actions::keeps_status(action, signals))
        {
            return false;
        }
    }
    true
}

/// Whether `trap ACTION SIGNALS` sets only the ERR trap to an action that writes output at most
/// and ends with `exit 0`, in a script without errexit (`errexit`, a `set -e` anywhere) and
/// without `set -E`/`errtrace`: bash runs it where a command of the script's own shell fails
/// (not in a function, a subshell or a substitution: bash manual, `set -E`), and its `exit 0`
/// ends the script with 0; dash 0.5.12 rejects the ERR condition ("bad trap", status 1) and runs
/// on. Either way an outage can only end the script with 0 sooner, so the trap changes no
/// verdict (s22: `trap 'exit 0' ERR; pg_isready -h db; echo done` exits 0 / 0 in both).
fn err_trap_exits_zero(src: &str, action: &str, signals: &[String], errexit: bool) -> bool {
    let parts: Vec<&str> = action.split([';', '\n']).map(str::trim).filter(|p| !p.is_empty()).collect();
    let Some((last, writes)) = parts.split_last() else { return false };
    !signals.is_empty()
        && signals.iter().all(|s| s.trim_start_matches("SIG").eq_ignore_ascii_case("ERR"))
        && last.split_whitespace().eq(["exit", "0"])
        && writes.iter().all(|p| {
            let words: Vec<&str> = p.split_whitespace().collect();
            matches!(words.first(), Some(&("echo" | "printf" | "logger" | ":" | "true")))
                && file_targets(p).is_empty()
                && !p.contains(['<', '|', '&'])
                && !words.iter().skip(1).any(|w| w.starts_with("-v") || matches!(*w, "exit" | "return"))
        })
        && !errexit
        && !super::options::sets_errexit(src)
        && !mentions(src, &["errtrace", "shopt", "SHELLOPTS"])
        && !src.split_whitespace().any(|w| w.starts_with(['-', '+']) && w.contains('E'))
}

/// Whether `command` (one command of a trap's action, `cleanup` or `log bye`) calls a function
/// `src` defines whose every definition only writes output (`echo`, `printf` without `-v`,
/// `logger`, to no file), removes files (`rm`) or runs `:`/`true`, expanding only plain
/// parameters (`"$@"`, `$1`, `$NAME`): no `exit`, `return`, test, substitution or other call.
/// Such a handler changes no status: an EXIT trap's own status is not the script's, unless the
/// handler runs `exit` (bash 5.2 and dash 0.5.12: `f() { false; }; trap f EXIT; exit 0` exits 0,
/// `trap 'exit 1' EXIT` 1). Not under errexit (`errexit`, or a script that may set it): there a
/// failing handler command ends the shell with its status (`set -e; f() { false; }; trap f EXIT;
/// exit 0` exits 1, and a function never defined 127), nor for a trap run between commands
/// (`between`: `ERR`, `DEBUG`, `RETURN`).
pub(super) fn harmless_handler(src: &str, command: &str, between: bool, errexit: bool) -> bool {
    let Some(name) = command.split_whitespace().next() else {
        return true;
    };
    if between
        || errexit
        || super::options::sets_errexit(src)
        || mentions(src, &["shopt", "SHELLOPTS"])
        || !super::super::context::is_ident(name)
    {
        return false;
    }
    let count = defined_functions(src).iter().filter(|f| *f == name).count();
    let bodies = bodies_of(src, name);
    count > 0 && bodies.len() == count && bodies.iter().all(|b| plain_body(b))
}

/// Whether every definition of the function `name` in `src` (at least one, each with a `{ }`
/// body) ends with `exit 0` after commands that only write output (to no file) or remove files
/// (as [`harmless_handler`]'s): as the EXIT trap's action it makes the script exit 0, whatever
/// the check before returned (s22: bash 5.2 and dash 0.5.12 exit 0 / 0 on `cleanup() { rm -f
/// /tmp/probe.lock; exit 0; }; trap cleanup EXIT; pg_isready -h db`; `exit 1` gives 1 / 1, a bare
/// `exit` or `exit $?` alone the status the script was exiting with: 1 / 0). Or ends with `exit
/// $?` right after one of those commands that cannot give the check's status: `echo`, `printf`,
/// `logger`, `:`, `true` (0) or `rm -f` (0 unless a file it names cannot be removed, never the
/// check's status): s23, `cleanup(){ rm -f x; exit $?; }; trap cleanup EXIT; C` exits 0 / 0.
///
/// Also a body that ends with `exit N`, N another literal status ([`literal_status`]), after such
/// commands: the status N is returned (s24: `cleanup(){ rm -f /tmp/x; exit 1; }; trap cleanup EXIT; C; echo ok` exits
/// 1 / 1 in bash 5.2 and dash 0.5.12: the probe fails every time). Every definition must give
/// the same status.
pub(in crate::engine::exec) fn handler_exit_status(src: &str, name: &str) -> Option<u8> {
    let count = defined_functions(src).iter().filter(|f| *f == name).count();
    let bodies = bodies_of(src, name);
    let statuses: Option<Vec<u8>> = bodies
        .iter()
        .map(|b| {
            let b = b.trim().trim_end_matches(';').trim_end();
            let (before, last) = b.rsplit_once([';', '\n']).unwrap_or(("", b));
            match last.split_whitespace().collect::<Vec<_>>().as_slice() {
                ["exit", n] if plain_body(before) => literal_status(n),
                _ => None,
            }
        })
        .collect();
    let statuses = statuses?;
    if count == 0 || bodies.len() != count || statuses.windows(2).any(|w| w[0] != w[1]) {
        return None;
    }
    statuses.first().copied()
}

/// The status a literal `exit` (or `return`) operand gives: digits only, taken modulo 256 as
/// bash 5.2 and dash 0.5.12 do (`exit 0001` is 1, `exit 256` and `exit 0000` are 0; s25: these
/// were not read before, so `cleanup(){ rm -f /tmp/x; exit 256; }; trap cleanup EXIT; C; echo ok`,
/// 0 / 0, was denied). `None` for any other word: `$rc`, `-1`, `+1` (bash reads 1, dash refuses
/// it: "Illegal number", 2), nothing, and a number past 2^32 - 1 (not read here).
pub(in crate::engine::exec) fn literal_status(word: &str) -> Option<u8> {
    if !word.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    word.parse::<u32>().ok().and_then(|n| u8::try_from(n % 256).ok())
}

/// [`handler_exit_status`]'s 0, or `exit $?` after a command of its own status (above).
pub(in crate::engine::exec) fn exits_zero_handler(src: &str, name: &str) -> bool {
    let count = defined_functions(src).iter().filter(|f| *f == name).count();
    let bodies = bodies_of(src, name);
    count > 0
        && bodies.len() == count
        && bodies.iter().all(|b| {
            let b = b.trim().trim_end_matches(';').trim_end();
            let (before, last) = b.rsplit_once([';', '\n']).unwrap_or(("", b));
            let exits = last.split_whitespace().collect::<Vec<_>>();
            let own_status = || {
                let prev = before.trim().trim_end_matches(';').trim_end();
                let words: Vec<&str> =
                    prev.rsplit([';', '\n']).next().unwrap_or("").split_whitespace().collect();
                match words.first() {
                    Some(&("echo" | "printf" | "logger" | ":" | "true")) => true,
                    Some(&"rm") => words.get(1).is_some_and(|o| o.starts_with('-') && o.contains('f')),
                    _ => false,
                }
            };
            (exits == ["exit", "0"]
                || matches!(exits.as_slice(), ["exit", "$?" | "${?}" | "\"$?\""]) && own_status())
                && plain_body(before)
        })
}

/// The text between `{` and the first `}` of each definition of `name` in `src` (`name() {`,
/// `function name {`, `function name() {`).
pub(in crate::engine::exec) fn bodies_of<'s>(src: &'s str, name: &str) -> Vec<&'s str> {
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = src[from..].find(name).map(|i| i + from) {
        from = i + name.len();
        let before = src[..i].trim_end_matches([' ', '\t']);
        let keyword =
            before.strip_suffix("function").filter(|b| b.is_empty() || b.ends_with(char::is_whitespace));
        let starts =
            i == 0 || matches!(bytes[i - 1], b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'{' | b'(');
        let boundary = starts
            && (before.is_empty() || before.ends_with([';', '\n', '&', '|', '{', '(']) || keyword.is_some());
        let mut rest = src[from..].trim_start_matches([' ', '\t']);
        let parens = rest
            .strip_prefix('(')
            .map(|r| r.trim_start_matches([' ', '\t']))
            .and_then(|r| r.strip_prefix(')'));
        if let Some(r) = parens {
            rest = r;
        } else if keyword.is_none() {
            continue;
        }
        let rest = rest.trim_start();
        if !boundary {
            continue;
        }
        let Some(body) = rest.strip_prefix('{').and_then(|b| b.split_once('}')).map(|(b, _)| b) else {
            // (A definition of another shape, `f() ( ... )`: counted by `defined_functions`, not here.)
            continue;
        };
        out.push(body);
    }
    out
}

/// Whether a function body (the text inside its braces) only runs `echo`, `printf` (not `-v`)
/// or `logger` writing to no file, `rm`, `:` or `true`, expanding only plain parameters.
fn plain_body(body: &str) -> bool {
    let mut plain = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '$' => match chars.peek().copied() {
                Some(k) if matches!(k, '@' | '*' | '#' | '?') || k.is_ascii_digit() => {
                    chars.next();
                    plain.push('x');
                }
                Some(k) if k.is_ascii_alphabetic() || k == '_' => {
                    while chars.peek().is_some_and(|k| k.is_ascii_alphanumeric() || *k == '_') {
                        chars.next();
                    }
                    plain.push('x');
                }
                _ => return false,
            },
            '>' if chars.peek() == Some(&'&') => {
                chars.next();
                if !chars.peek().is_some_and(char::is_ascii_digit) {
                    return false;
                }
                plain.push_str(">&");
            }
            '&' | '`' | '\\' | '(' | ')' | '{' | '<' | '|' => return false,
            _ => plain.push(c),
        }
    }
    if plain.matches('"').count() % 2 == 1 || plain.matches('\'').count() % 2 == 1 {
        return false;
    }
    plain.split([';', '\n']).all(|c| {
        let words: Vec<&str> = c.split_whitespace().collect();
        match words.first() {
            None => true,
            Some(&("echo" | "printf" | "logger" | ":" | "true")) => {
                file_targets(c).is_empty()
                    && !words.get(1).is_some_and(|w| w.trim_matches(['"', '\'']).starts_with("-v"))
            }
            Some(&"rm") => !c.contains('>'),
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::harmless_handler;

    #[test]
    fn a_handler_function_is_harmless_only_when_every_body_only_writes_or_removes() {
        for (src, command, ok) in [
            ("cleanup() { rm -f /tmp/x; }; trap cleanup EXIT; c; exit 0", "cleanup", true),
            ("log() { echo \"$@\"; }; trap \"log bye\" EXIT; c; exit 0", "log bye", true),
            ("log() { echo \"$@\" >&2; }\ntrap 'log bye' EXIT", "log bye", true),
            ("function log { echo \"$1\"; }; trap log EXIT", "log", true),
            // An exit, a return, a test, another call, a substitution, a file written.
            ("f() { exit 1; }; trap f EXIT", "f", false),
            ("f() { echo x; exit $?; }; trap f EXIT", "f", false),
            ("f() { return 1; }; trap f EXIT", "f", false),
            ("f() { [ -f /tmp/ok ]; }; trap f EXIT", "f", false),
            ("g() { :; }; f() { g; }; trap f EXIT", "f", false),
            ("f() { echo $(date); }; trap f EXIT", "f", false),
            ("f() { echo ${X:?}; }; trap f EXIT", "f", false),
            ("f() { echo x > /tmp/s; }; trap f EXIT", "f", false),
            ("f() { echo x & exit 1; }; trap f EXIT", "f", false),
            ("f() { printf -v x y; }; trap f EXIT", "f", false),
            // Defined twice, once harmful; not defined; under errexit; a program.
            ("f() { :; }; f() { exit 1; }; trap f EXIT", "f", false),
            ("trap f EXIT", "f", false),
            ("set -e; f() { :; }; trap f EXIT", "f", false),
            ("f() ( exit 1 ); trap f EXIT", "f", false),
        ] {
            assert_eq!(harmless_handler(src, command, false, false), ok, "{src}");
        }
        assert!(!harmless_handler("f() { :; }; trap f EXIT", "f", false, true));
        assert!(!harmless_handler("f() { :; }; trap f ERR", "f", true, false));
    }
}
