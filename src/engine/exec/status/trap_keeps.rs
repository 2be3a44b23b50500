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
    use super::{keeps_exit_status, never_sent, unread_exit_action};

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
