//! Traps that change no status whatever their action does (s24 false denials), beside
//! `traps::harmless_traps`'s actions that only write output or remove files:
//! - a trap on signals a probe's run never sends its shell (`trap 'exit 1' INT TERM`): the
//!   action runs on that signal only (bash manual, `trap`; POSIX `trap`), never at the script's
//!   end ([`never_sent`]);
//! - an EXIT trap whose action runs no `exit` with a status (a bare `exit` keeps the status the
//!   shell was exiting with), no `exec`, `kill`, `eval`, `source`, `set`, `trap`, ..., in a shell
//!   without errexit: the shell exits with the status it had when the action began, whatever the
//!   action's own commands return (POSIX `trap`: "The value of `$?` after the trap action
//!   completes shall be the value it had before the trap action was executed"; bash manual,
//!   `exit`) ([`keeps_exit_status`]).
//!
//! Checked with bash 5.2.15 and dash 0.5.12 and stub clients (`redis-cli` exits 0 up, 1 down;
//! statuses up / down): `trap 'false' EXIT; C; exit 0`, `trap 'exit' EXIT; C; true`, `trap 'false;
//! exit' EXIT; C; true`, `cleanup(){ return 3; }; trap cleanup EXIT; C; true`, `trap 'st=$?; [ $st
//! -ne 0 ] && echo failed >&2' EXIT; C; exit 0` and `trap 'false' INT TERM; C; true` exit 0 / 0 in
//! both; `trap 'false' EXIT; C` and `trap 'exit' EXIT; C` 0 / 1 (the check last: judged by the
//! walk); `set -e; trap 'false' EXIT; C; true` 1 / 1 (errexit: a failing action command ends the
//! shell with its status, not taken here); `trap 'exit 1' CHLD; C; true` 0 / 1 in bash, 1 / 1 in
//! dash (SIGCHLD is sent at every child's end: not one of [`never_sent`]'s).

use super::super::flow::mentions;
use super::texts::defined_functions;

/// Whether `condition` (a word after a trap's action) names a signal no probe's run sends its
/// shell: `HUP`, `INT`, `QUIT`, `TERM`, `USR1`, `USR2` (any case) or their numbers 1, 2, 3, 15
/// (the same on every Linux architecture; USR1 and USR2 are not). With a `SIG` prefix only where
/// `errexit_free`: dash 0.5.12 rejects `SIGTERM` ("bad trap", status 1), which ends a shell under
/// errexit. (Not `CHLD`, sent whenever a child ends, nor `PIPE`, `ALRM`, `EXIT`, `ERR`, `DEBUG`,
/// `RETURN`.)
pub(super) fn never_sent(condition: &str, errexit_free: bool) -> bool {
    let upper = condition.to_ascii_uppercase();
    let (name, prefixed) = match upper.strip_prefix("SIG") {
        Some(n) => (n, true),
        None => (upper.as_str(), false),
    };
    let named = matches!(name, "HUP" | "INT" | "QUIT" | "TERM" | "USR1" | "USR2");
    if prefixed { named && errexit_free } else { named || matches!(name, "1" | "2" | "3" | "15") }
}

/// Whether `condition` is the EXIT condition (`EXIT` in any case, or `0`).
pub(super) fn is_exit(condition: &str) -> bool {
    condition.eq_ignore_ascii_case("EXIT") || condition == "0"
}

/// Whether the EXIT trap `action` (quotes removed) of script `src` leaves the status the shell
/// was exiting with, in a shell without errexit (`errexit_free`): the action runs no `exit` but a
/// bare one, and nothing that ends or replaces the shell or runs text not read here (`exec`,
/// `kill`, `eval`, `source`, `.`, `set`, `shopt`, `trap`, `return` outside a function, `break`,
/// `continue`, an alias, a command named by an expansion, a substitution), and each function of
/// the script (or `known`, defined before it) it calls has only bodies of that kind, where
/// `return` is allowed and `exit` is not, and calls no function.
pub(super) fn keeps_exit_status(
    src: &str,
    action: &str,
    known: &[(String, String)],
    errexit_free: bool,
) -> bool {
    if !errexit_free || mentions(src, &["alias"]) {
        return false;
    }
    let mut functions = defined_functions(src);
    functions.extend(known.iter().map(|(name, _)| name.clone()));
    let Some(called) = quiet(action, &functions, false) else {
        return false;
    };
    called.iter().all(|name| {
        let count = defined_functions(src).iter().filter(|f| *f == name).count();
        let bodies = super::traps::bodies_of(src, name);
        let known_bodies: Vec<&str> =
            known.iter().filter(|(n, _)| n == name).map(|(_, body)| body.as_str()).collect();
        bodies.len() == count
            && bodies
                .iter()
                .chain(known_bodies.iter())
                .all(|b| quiet(b, &functions, true).is_some_and(|calls| calls.is_empty()))
    })
}

/// The functions of `functions` that `text` calls, when it runs nothing that can set the
/// shell's status on its way out ([`keeps_exit_status`]); `None` otherwise.
fn quiet(text: &str, functions: &[String], in_function: bool) -> Option<Vec<String>> {
    if text.contains('`') || text.contains("<<") || text.replace("$((", "").contains("$(") {
        return None;
    }
    if text.contains("<(") || text.contains(">(") {
        return None;
    }
    if mentions(
        text,
        &["exec", "kill", "eval", "source", "set", "shopt", "trap", "alias", "break", "continue", "builtin"],
    ) || text.split_whitespace().any(|w| w == ".")
        || (!in_function && mentions(text, &["return"]))
    {
        return None;
    }
    // Every `exit` is bare (outside a function's body; none in one).
    for i in super::texts::whole_words(text, "exit") {
        let after = text[i + 4..].trim_start_matches([' ', '\t']);
        let bare = after.is_empty() || after.starts_with([';', '\n', '}', ')', '&', '|']);
        if in_function || !bare {
            return None;
        }
    }
    // No command is named by an expansion (`$A`, `"$CLEANUP"`: `X=exit; $X 1` runs the builtin).
    let mut called = Vec::new();
    for segment in text.split([';', '\n', '&', '|', '(', ')', '{', '}']) {
        let mut words = segment.split_whitespace().skip_while(|w| {
            matches!(*w, "!" | "if" | "then" | "else" | "elif" | "do" | "while" | "until")
                || w.split_once('=').is_some_and(|(name, _)| super::super::context::is_ident(name))
        });
        let Some(first) = words.next() else { continue };
        if first.contains(['$', '\\']) {
            return None;
        }
        let name = first.trim_matches(['\'', '"']);
        if functions.iter().any(|f| f == name) && !called.iter().any(|c| c == name) {
            called.push(name.to_string());
        }
    }
    Some(called)
}

/// Whether the EXIT trap `action` (quotes removed) keeps whether the script passes, with errexit
/// on or off: run with a status of 0 it runs nothing that can fail (so errexit ends nothing and
/// the status stays 0), and with any other status it may end the shell only with a failure (a
/// command of its own failing under errexit exits 1, still a failure), since it runs no `exit`.
/// Read statement by statement (`;`, newline), each one of: `NAME=$?` (the first only, where
/// `$?` is the status the shell was exiting with; `NAME` then holds it); an output command
/// (`echo`, `printf` without options, `logger`, `:`, `true`, to no file and without `>&-`)
/// that expands no parameter but such a `NAME`; `TEST || OUTPUT` or `TEST && OUTPUT`, TEST a
/// comparison of `NAME` (`$NAME`, `"$NAME"`, `${NAME}`; or, in the first statement, `$?`) with a
/// number that is decided for a status of 0 (`[ $rc -eq 0 ]`, `[ $rc -ne 0 ]`, `test`, `[[ ]]`:
/// [`zero_test`]), and OUTPUT an output command, which expands no other parameter when it runs
/// for a status of 0 (any, when it runs only
/// with a failing status). s26's new user (37): `set -eu; trap 'rc=$?; [ $rc -eq 0 ] || echo
/// "exiting rc=$rc" >&2' EXIT; pg_isready -h db || warn x; echo ok` exits 0 / 0 in bash 5.2 and
/// dash 0.5.12, and was denied: a trap not read under errexit kept the script from being judged.
pub(super) fn keeps_success(action: &str) -> bool {
    if action.contains(['`', '<', '(', ')', '\\'])
        || mentions(
            action,
            &[
                "exit", "return", "exec", "kill", "eval", "source", "set", "shopt", "trap", "alias", "break",
                "continue",
            ],
        )
    {
        return false;
    }
    let Some(statements) = split_statements(action) else {
        return false;
    };
    let mut saved: Vec<&str> = Vec::new();
    statements.iter().enumerate().all(|(i, st)| {
        let st = st.trim();
        if st.is_empty() {
            return true;
        }
        if let Some((name, value)) = st.split_once('=')
            && i == 0
            && super::super::context::is_ident(name)
            && matches!(value, "$?" | "${?}" | "\"$?\"")
        {
            saved.push(name);
            return true;
        }
        // (A parameter's name: the saved status, or `?` in the first statement.)
        let reads = |name: &str| (i == 0 && name == "?") || saved.contains(&name);
        for (op, runs_when) in [("||", false), ("&&", true)] {
            if let Some((test, out)) = st.split_once(op) {
                // (OUTPUT runs with a status of 0 when the test gives `runs_when` there: it may
                // then expand only the saved status.)
                return !out.contains("||")
                    && !out.contains("&&")
                    && zero_test(test, &reads).is_some_and(|holds| {
                        if holds == runs_when {
                            output_only(out, &|w| reads(w))
                        } else {
                            output_only(out, &|_| true)
                        }
                    });
            }
        }
        output_only(st, &|w| reads(w))
    })
}

/// `text` split at `;` and newlines outside quotes; `None` when a quote does not close.
fn split_statements(text: &str) -> Option<Vec<&str>> {
    let mut out = Vec::new();
    let (mut start, mut quote) = (0, None);
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, ';' | '\n') => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    quote.is_none().then_some(out)
}

/// Whether `test` (`[ X OP N ]`, `test X OP N`, `[[ X OP N ]]`, X a word `reads` takes as the
/// status, N a number) holds for a status of 0: the integer comparisons (`-eq`, `-ne`, `-lt`,
/// `-le`, `-gt`, `-ge`) and the string ones (`=`, `==`, `!=`: `0` against N as written); `None`
/// for any other test.
fn zero_test(test: &str, reads: &dyn Fn(&str) -> bool) -> Option<bool> {
    let words: Vec<&str> = test.split_whitespace().collect();
    let inner = match words.as_slice() {
        ["[", inner @ .., "]"] | ["[[", inner @ .., "]]"] | ["test", inner @ ..] => inner,
        _ => return None,
    };
    let [x, op, n] = inner else {
        return None;
    };
    let n = n.trim_matches('"');
    let x = x.trim_matches('"');
    let name = x.strip_prefix("${").and_then(|x| x.strip_suffix('}')).or_else(|| x.strip_prefix('$'));
    if !name.is_some_and(reads) || n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) || n.len() > 9 {
        return None;
    }
    let v: i64 = n.parse().ok()?;
    match *op {
        "-eq" => Some(0 == v),
        "-ne" => Some(0 != v),
        "-lt" => Some(0 < v),
        "-le" => Some(0 <= v),
        "-gt" => Some(0 > v),
        "-ge" => Some(0 >= v),
        "=" | "==" => Some(n == "0"),
        "!=" => Some(n != "0"),
        _ => None,
    }
}

/// Whether `command` is one output command (`echo`, `printf` without options, `logger`, `:`,
/// `true`) writing to no file and not to a closed descriptor (`>&-`), each parameter it expands
/// (`$NAME`, `${NAME}`, `$?`) one whose name `expands` takes.
fn output_only(command: &str, expands: &dyn Fn(&str) -> bool) -> bool {
    let words: Vec<&str> = command.split_whitespace().collect();
    let Some((first, rest)) = words.split_first() else {
        return false;
    };
    matches!(*first, "echo" | "printf" | "logger" | ":" | "true")
        && !(*first == "printf" && rest.first().is_some_and(|w| w.starts_with('-')))
        && super::harmless::file_targets(command).is_empty()
        && !command.contains("&-")
        && !command.contains('|')
        && command.match_indices('$').all(|(i, _)| {
            let after = &command[i + 1..];
            let name = match after.strip_prefix('{') {
                Some(b) => b.split_once('}').map(|(n, _)| n),
                None if after.starts_with('?') => Some("?"),
                None => {
                    Some(after.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).next().unwrap_or(""))
                }
            };
            name.is_some_and(|n| !n.is_empty() && expands(n))
        })
}

/// Whether `src` sets an EXIT trap (`EXIT` or `0` among the conditions) whose action is named by
/// an expansion (`trap "$A" EXIT`, `trap $CLEANUP 0`, ``trap "`cat f`" EXIT``): what it runs at
/// the script's end, and so the script's status, is not read here. A doubt, never a denial (s24:
/// `A='echo bye'; trap "$A" EXIT; C; echo done` exits 0 / 0 in bash 5.2 and dash 0.5.12).
pub(in crate::engine::exec) fn unread_exit_action(src: &str) -> bool {
    let src: &str = &crate::engine::exec::flow::code_view(src);
    // (A word followed by a blank: `trap` with its arguments.)
    for i in super::texts::whole_words(src, "trap") {
        let rest = &src[i + 4..];
        if !rest.starts_with([' ', '\t']) {
            continue;
        }
        let rest = rest.trim_start_matches([' ', '\t']);
        if !(rest.starts_with(['$', '`']) || rest.starts_with("\"$") || rest.starts_with("\"`")) {
            continue;
        }
        let command = rest.split([';', '\n', '&', '|']).next().unwrap_or("");
        if command.split_whitespace().skip(1).any(|w| is_exit(w.trim_matches(['"', '\'']))) {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::{keeps_exit_status, keeps_success, never_sent, unread_exit_action};

    #[test]
    fn an_exit_action_named_by_an_expansion_is_not_read() {
        for src in ["A='echo bye'; trap \"$A\" EXIT; c", "trap $CLEANUP 0", "x; trap \"`cat f`\" EXIT"] {
            assert!(unread_exit_action(src), "{src}");
        }
        for src in ["trap \"$A\" INT", "trap 'echo $A' EXIT", "trap \"rm -f $F\" EXIT", "mytrap $A EXIT"] {
            assert!(!unread_exit_action(src), "{src}");
        }
    }

    #[test]
    fn an_exit_action_without_a_status_of_its_own_keeps_the_shell_s() {
        for (src, action, kept) in [
            ("trap 'false' EXIT; c; exit 0", "false", true),
            ("trap 'exit' EXIT; c; true", "exit", true),
            ("trap 'false; exit' EXIT; c; true", "false; exit", true),
            ("cleanup(){ return 3; }; trap cleanup EXIT; c; true", "cleanup", true),
            ("trap '...' EXIT", "st=$?; [ $st -ne 0 ] && echo failed >&2", true),
            ("trap '...' EXIT", "rm -f /tmp/x; false", true),
            // A status of its own, a way out, a command not read here.
            ("trap '...' EXIT", "exit 1", false),
            ("trap '...' EXIT", "echo bye; exit 0", false),
            ("trap '...' EXIT", "exit $?", false),
            ("trap '...' EXIT", "exec true", false),
            ("trap '...' EXIT", "kill $$", false),
            ("trap '...' EXIT", "eval x", false),
            ("trap '...' EXIT", ". /x", false),
            ("trap '...' EXIT", "set -e; false", false),
            ("trap '...' EXIT", "return 3", false),
            ("trap '...' EXIT", "$A", false),
            ("trap '...' EXIT", "x=1 $A", false),
            ("trap '...' EXIT", "echo $(exit 1)", false),
            ("trap '...' EXIT", "echo `x`", false),
            ("f(){ exit 1; }; trap f EXIT", "f", false),
            ("f(){ exit; }; trap f EXIT", "f", false),
            ("g(){ :; }; f(){ g; }; trap f EXIT", "f", false),
            ("f(){ :; }; f(){ exit 1; }; trap f EXIT", "f", false),
            ("alias f='exit 1'; trap f EXIT", "f", false),
        ] {
            assert_eq!(keeps_exit_status(src, action, &[], true), kept, "{src} / {action}");
        }
        assert!(!keeps_exit_status("trap false EXIT", "false", &[], false));
        let known = [("f".to_string(), " exit 1; ".to_string())];
        assert!(!keeps_exit_status("trap f EXIT", "f", &known, true));
        let known = [("f".to_string(), " return 1; ".to_string())];
        assert!(keeps_exit_status("trap f EXIT", "f", &known, true));
    }

    #[test]
    fn an_exit_action_that_keeps_success_and_failure() {
        for action in [
            "rc=$?; [ $rc -eq 0 ] || echo \"[$PROBE] exiting rc=$rc\" >&2",
            "rc=$?; [ $rc -ne 0 ] && echo \"failed rc=$rc\" >&2",
            "[ $? -eq 0 ] || echo failed >&2",
            "rc=$?; echo \"done rc=$rc\"",
            "rc=$?; [ $rc -eq 0 ] && echo ok",
            "rc=$?; [ \"$rc\" != 0 ] && logger -t probe \"rc $rc\"",
            "st=$?; test $st -gt 0 && echo bad",
        ] {
            assert!(keeps_success(action), "{action}");
        }
        for action in [
            // A status of its own, a test that fails with 0, output that may fail with 0.
            "rc=$?; [ $rc -eq 0 ] || exit 1",
            "rc=$?; exit $rc",
            "rc=$?; [ $rc -eq 0 ]",
            "rc=$?; [ $rc -ne 0 ] || echo x > /tmp/f",
            "rc=$?; [ $rc -eq 0 ] && echo \"$NAME\"",
            "echo \"bye $NAME\"",
            "rc=$?; [ $rc -eq $LIMIT ] || echo x",
            "x=1; [ $? -eq 0 ] || echo x",
            "rc=$?; [ $rc -eq 0 ] || cleanup",
            "rc=$?; [ $rc -eq 0 ] || { echo x; false; }",
            "rc=$?; [ $rc -eq 0 ] || echo $(date)",
            "rc=$?; [ $rc -eq 0 ] && echo x >&-",
        ] {
            assert!(!keeps_success(action), "{action}");
        }
    }

    #[test]
    fn only_signals_a_probe_never_sends_are_never_sent() {
        for s in ["INT", "TERM", "hup", "QUIT", "USR1", "USR2", "1", "2", "3", "15"] {
            assert!(never_sent(s, false), "{s}");
        }
        assert!(never_sent("SIGTERM", true));
        for s in ["SIGTERM", "CHLD", "PIPE", "ALRM", "EXIT", "0", "ERR", "DEBUG", "RETURN", "9", "SIG15"] {
            assert!(!never_sent(s, false), "{s}");
        }
    }
}
