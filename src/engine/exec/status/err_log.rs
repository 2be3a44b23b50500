//! An `ERR` trap that only logs (s26's new user, 51: `set -Eeuo pipefail; log() { printf '%s
//! %s\n' "$(date -u +%FT%TZ)" "$*" >> "$LOG_FILE"; }; on_err() { log "failed at line $1"; };
//! trap 'on_err $LINENO' ERR`). bash runs the action where a command fails and errexit would
//! apply; then, with errexit on, the shell exits with a failure whatever the action does (a
//! command of the action failing under errexit gives 1, still a failure), and without it the
//! script goes on with `$?` as the failing command left it (bash 5.2: `trap 'false; echo x' ERR;
//! (exit 3); echo $?` prints x and 3). An action that ends nothing, assigns nothing and writes
//! only output or files the script names nowhere else therefore changes no status and nothing a
//! later command reads. dash 0.5.12 has no `ERR` condition ("bad trap", status 1): under errexit
//! it exits there, failing every time, and otherwise runs on as without the trap; neither is
//! coupled to a dependency. bash 5.2 and dash 0.5.12 with stub clients: the fixture
//! `tests/fixtures/scripts/s26_51_err_trap.sh` exits 0 / 0 in bash (2 / 2 in dash: no `-E`).

use super::super::flow::mentions;
use super::harmless::{file_targets, without_harmless_substitutions};
use super::path_vars::named_elsewhere_in;
use super::texts::defined_functions;

/// Commands an action may run besides the script's functions: output and no-ops.
const OUTPUT: &[&str] = &["echo", "printf", "logger", ":", "true"];

/// Whether the `ERR` trap `action` (quotes removed) of script `src` only writes: its commands and
/// those of the functions of `src` it calls (each defined once in `src`, followed to the end) are
/// output commands (`echo`, `printf` without options, `logger`, `:`, `true`) or calls of such
/// functions, with no assignment, no `exit`/`return`/`exec`/`set`/`cd`/`read`/... (module docs),
/// no substitution but a harmless one (`$(date ...)`: `harmless::harmless_substitution`), files
/// written only from a function's body and named nowhere else in `src` (`path_vars`), and
/// expansions only of `$*`, `$@`, `$#`, `$?`, `$LINENO`, a variable holding a literal path
/// (`path_vars::path_variables`) or a positional parameter every call of the function passes
/// (never unset, also under `set -u`).
pub(super) fn only_logs(src: &str, action: &str) -> bool {
    let functions = defined_functions(src);
    let vars = super::path_vars::path_variables(src);
    // (Each function reached: its name and the fewest words a call of it passes.)
    let mut reached: Vec<(String, usize)> = Vec::new();
    let mut todo: Vec<(String, usize)> = Vec::new();
    if !plain_text(action, &functions, &vars, None, &mut todo) || !file_targets(action).is_empty() {
        return false;
    }
    while let Some((name, args)) = todo.pop() {
        match reached.iter_mut().find(|(n, _)| *n == name) {
            Some(r) if r.1 <= args => continue,
            Some(r) => r.1 = args,
            None => reached.push((name.clone(), args)),
        }
        let bodies = super::traps::bodies_of(src, &name);
        if bodies.len() != 1 || functions.iter().filter(|f| **f == name).count() != 1 {
            return false;
        }
        let body = bodies[0];
        let at = body.as_ptr() as usize - src.as_ptr() as usize;
        let own = [(at, at + body.len())];
        if !plain_text(body, &functions, &vars, Some(args), &mut todo)
            || file_targets(body).iter().any(|f| named_elsewhere_in(f, src, &own))
        {
            return false;
        }
    }
    true
}

/// Whether `text` (an action, or a body given `args` words) runs only [`OUTPUT`] commands and
/// calls of `functions` (pushed on `todo` with the words they pass), expanding only what
/// [`only_logs`] allows.
fn plain_text(
    text: &str,
    functions: &[String],
    vars: &[super::path_vars::PathVar],
    args: Option<usize>,
    todo: &mut Vec<(String, usize)>,
) -> bool {
    // (A single-quoted string is literal: `printf '%s\n'`.)
    let t = single_quoted_blanked(&without_harmless_substitutions(text));
    if t.contains(['`', '(', ')', '<', '\\'])
        || mentions(
            &t,
            &[
                "exit", "return", "exec", "kill", "eval", "source", "set", "shopt", "trap", "alias", "break",
                "continue", "cd", "pushd", "popd", "read", "export", "unset", "local", "declare", "typeset",
                "readonly", "wait", "shift", "getopts",
            ],
        )
        || t.split_whitespace().any(|w| w == ".")
        || !expansions_allowed(&t, vars, args)
    {
        return false;
    }
    let inner = t.trim();
    let inner = inner.strip_prefix('{').and_then(|b| b.strip_suffix('}')).unwrap_or(inner);
    // (`>&2` duplicates a descriptor: its `&` ends no command.)
    let inner = (0..10).fold(inner.to_string(), |s, d| s.replace(&format!(">&{d}"), &format!(">{d}")));
    if inner.contains("&-") {
        return false;
    }
    for segment in inner.split([';', '\n', '&', '|']) {
        let words: Vec<&str> = segment.split_whitespace().collect();
        let Some((first, rest)) = words.split_first() else {
            continue;
        };
        if first.contains('=') {
            return false;
        }
        if functions.iter().any(|f| f == first) {
            // (Words after a redirection are not arguments: `log x >&2`.)
            let given = words_given(segment[segment.find(first).unwrap_or(0) + first.len()..].trim());
            todo.push((first.to_string(), given));
            continue;
        }
        if !OUTPUT.contains(first) || (*first == "printf" && rest.first().is_some_and(|w| w.starts_with('-')))
        {
            return false;
        }
    }
    true
}

/// Whether every `$` expansion of `t` is `$*`, `$@`, `$#`, `$?`, `$LINENO` (braced or not), one
/// of `vars`, or a positional parameter up to `args` (in a body whose calls all pass that many
/// words).
fn expansions_allowed(t: &str, vars: &[super::path_vars::PathVar], args: Option<usize>) -> bool {
    let mut i = 0;
    while let Some(at) = t[i..].find('$').map(|k| i + k) {
        let rest = &t[at + 1..];
        let (name, len) = match rest.strip_prefix('{') {
            Some(r) => match r.find('}') {
                Some(e) => (&r[..e], e + 2),
                None => return false,
            },
            None => {
                let first = rest.chars().next();
                match first {
                    Some('*' | '@' | '#' | '?') => (&rest[..1], 1),
                    Some(c) if c.is_ascii_digit() => (&rest[..1], 1),
                    Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                        let e = rest
                            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                            .unwrap_or(rest.len());
                        (&rest[..e], e)
                    }
                    _ => return false,
                }
            }
        };
        let ok = matches!(name, "*" | "@" | "#" | "?" | "LINENO")
            || vars.iter().any(|v| v.name == name)
            || name.parse::<usize>().is_ok_and(|n| n >= 1 && args.is_some_and(|a| n <= a));
        if !ok {
            return false;
        }
        i = at + 1 + len;
    }
    true
}

/// How many words `args` (a call's text after its name) passes: blanks outside double quotes
/// separate them, up to a redirection.
fn words_given(args: &str) -> usize {
    let (mut n, mut in_word, mut quoted) = (0, false, false);
    for c in args.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                if !in_word {
                    n += 1;
                    in_word = true;
                }
            }
            '>' if !quoted => break,
            c if c.is_whitespace() && !quoted => in_word = false,
            _ if !in_word => {
                n += 1;
                in_word = true;
            }
            _ => {}
        }
    }
    n
}

/// `t` with the text of each single-quoted string replaced by `x`s (the quotes kept).
fn single_quoted_blanked(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    let mut quoted = false;
    let mut double = false;
    for c in t.chars() {
        match c {
            '\'' if !double => {
                quoted = !quoted;
                out.push(c);
            }
            '"' if !quoted => {
                double = !double;
                out.push(c);
            }
            _ if quoted => out.push('x'),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::only_logs;

    #[test]
    fn an_err_trap_that_only_logs_to_an_unread_file() {
        let log = "readonly LOG_FILE=/tmp/hc.log\nlog() { printf '%s %s\\n' \"$(date -u +%FT%TZ)\" \"$*\" >> \"$LOG_FILE\"; }\non_err() { log \"failed at line $1\"; }\n";
        assert!(only_logs(log, "on_err $LINENO"));
        assert!(only_logs("f() { echo \"failed: $*\" >&2; }\n", "f x"));
        assert!(only_logs("", "echo failed >&2"));
        for (src, action) in [
            // The log read again, a positional not given, an assignment, an exit, a program.
            (format!("{log}grep -q failed /tmp/hc.log"), "on_err $LINENO"),
            (log.to_string(), "on_err"),
            (format!("{log}g() {{ x=1; }}"), "g"),
            (format!("{log}g() {{ exit 0; }}"), "g"),
            (format!("{log}g() {{ touch /tmp/m; }}"), "g"),
            (log.to_string(), "echo x > /tmp/y"),
            (log.to_string(), "echo $UNSET"),
            (format!("{log}log() {{ :; }}"), "log x"),
        ] {
            assert!(!only_logs(&src, action), "{src} / {action}");
        }
    }
}
