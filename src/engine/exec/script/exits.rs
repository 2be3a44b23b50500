//! Whether a script's text always exits 0, whatever its commands return (a crude scan).

use crate::engine::exec::kinds::KindName;

/// Whether a script's exit status is 0 whatever its commands return (bash manual, "Exit
/// Status": a script's status is its last command's): its last statement is `exit 0`, `true`,
/// `:` or a plain `echo` (returned, `echo` without its words, for the message), and nothing can
/// end it earlier with another status (no other `exit`, no `return`, `exec`, `set -e`/`errexit`,
/// `trap`, `source` or `.`, which may run another script's `exit`, and no `while`/`until` loop, which can wait on a dependency until the probe times out).
/// A crude scan of the text: anything it does not understand keeps the script's commands coupled.
pub(in crate::engine::exec) fn always_exits_zero(script: &str) -> Option<&str> {
    let body = script.trim_end().trim_end_matches(';').trim_end();
    let last = body.rsplit(['\n', ';']).next().unwrap_or("").trim();
    // A plain `echo` (no redirection, pipe, substitution or background: nothing that can fail)
    // exits 0 too: `pg_isready -h db; echo $?`, and cmd's `curl ... & echo ok`.
    let plain_echo =
        (last == "echo" || last.starts_with("echo ")) && !last.contains(['>', '<', '|', '&', '`', '(', ')']);
    // (A quote left open in it: the split on `;` was inside a quoted word, `sh -ec 'a; echo ok'`,
    // whose last command is `sh`: break-it, #10.)
    let balanced = last.matches('\'').count().is_multiple_of(2)
        && last.matches('"').count().is_multiple_of(2)
        && !last.contains('\\');
    if !(super::super::flow::succeeds_as_written(last) || plain_echo) || !balanced || body.len() == last.len()
    {
        return None;
    }
    // A loop whose condition is the check waits for the dependency: its outage hangs the probe
    // until it times out (`until pg_isready -h db; do sleep 1; done; exit 0`).
    if super::super::flow::mentions(
        script,
        &["return", "exec", "errexit", "trap", "source", "kill", "while", "until"],
    ) {
        return None;
    }
    let words: Vec<&str> = script.split_whitespace().collect();
    let exits_zero = words.windows(2).all(|w| w[0] != "exit" || w[1].trim_end_matches(';') == "0");
    // `set -e` (a script naming `errexit` was left above; a `#!` line's `-e` is the caller's
    // errexit, for a file executed directly).
    (exits_zero
        && !super::super::status::sets_errexit(script)
        && !words.contains(&".")
        && !script.contains("exit;"))
    .then_some(if plain_echo { "echo" } else { last })
}

/// When the probe's script fails every time, whatever its commands return (s25, deny24's list:
/// `if C; then exit 1; fi; exit 1`, `f(){ C && return 1; return 1; }; f` and `f(){ if C; then
/// return 1; fi; return 1; }; f` exit 1 / 1 in bash 5.2 and dash 0.5.12, and were denied as
/// coupled): every `exit` and `return` in it has a literal non-zero status, and its last
/// statement is `exit N` (N not 0), a list that ends so ([`list_fails`]: `C && exit 1`, `C &&
/// exit 1 || exit 1`, 1 / 1), or a call of a function the script defines once, whose body
/// (with no `{ }` group in it) ends with `return N`. The last statement then runs unless an
/// earlier `exit` (non-zero) ends the script, and the function can only return non-zero. Nothing
/// else may set the status on the way out or run text not read here (`trap`, `exec`, `source`,
/// `.`, `eval`, `kill`, an alias, a loop that may wait, a here-document, a comment, a
/// backslash). The last statement, for the message. A crude scan, as [`always_exits_zero`].
pub(in crate::engine::exec) fn always_fails(script: &str) -> Option<String> {
    if !only_failing_exits(script) {
        return None;
    }
    let nonzero =
        |w: Option<&&str>| w.and_then(|w| super::super::status::literal_status(w)).is_some_and(|n| n != 0);
    let body = script.trim_end().trim_end_matches(';').trim_end();
    let last = body.rsplit(['\n', ';']).next().unwrap_or("").trim();
    let words: Vec<&str> = last.split_whitespace().collect();
    match words.as_slice() {
        ["exit", n] if body.len() > last.len() && nonzero(Some(n)) => Some(format!("`{last}` last")),
        // `A && exit N` (A's failure is non-zero too) and `A && exit N || exit M` last (s25).
        [.., "&&" | "||", "exit", _] if list_fails(&words, &nonzero) => Some(format!("`{last}` last")),
        // s27: `C && exit 1 || false`, `C && exit 1 && echo ok` last (1 / 1).
        [_, ..] if list_fails(&words, &nonzero) => Some(format!("`{last}` last")),
        // s27: `false` last, after statements whose every `exit` is non-zero (`C && exit 1 ||
        // true; false`, 1 / 1), where no function of the script is named `false`.
        ["false"]
            if body.len() > last.len()
                && !super::super::status::defined_functions(script).iter().any(|f| f == "false") =>
        {
            Some("`false` last".to_string())
        }
        [name] if super::super::context::is_ident(name) => {
            let defined = super::super::status::defined_functions(script);
            let bodies = super::super::status::bodies_of(script, name);
            let [one] = bodies.as_slice() else { return None };
            let inner = one.trim().trim_end_matches(';').trim_end();
            let ends = inner.rsplit(['\n', ';']).next().unwrap_or("").split_whitespace().collect::<Vec<_>>();
            (defined.iter().filter(|f| f == name).count() == 1
                && !one.contains('{')
                && matches!(ends.as_slice(), ["return", n] if nonzero(Some(n))))
            .then(|| format!("`{name}` last, whose body ends with `{}`", ends.join(" ")))
        }
        _ => None,
    }
}

/// [`always_fails`]'s text conditions (no word that may end the script another way or run text
/// not read here, every `exit` and `return` with a literal non-zero status), for a script whose
/// last statement is read from its tree ([`super::Ctx::case_always_fails`]).
fn only_failing_exits(script: &str) -> bool {
    if super::super::flow::mentions(
        script,
        &["exec", "trap", "source", "eval", "kill", "alias", "while", "until", "select"],
    ) || script.contains(['#', '\\', '`'])
        || script.contains("<<")
        || script.split_whitespace().any(|w| w == ".")
    {
        return false;
    }
    let tokens: Vec<&str> = script
        .split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '{' | '}'))
        .filter(|t| !t.is_empty())
        .collect();
    tokens.iter().enumerate().all(|(i, t)| {
        !matches!(*t, "exit" | "return")
            || tokens.get(i + 1).and_then(|w| super::super::status::literal_status(w)).is_some_and(|n| n != 0)
    })
}

impl super::Ctx<'_> {
    /// When the probe's script fails every time because it ends with a `case` that has a `*)`
    /// item and whose every item ends with `exit N`, N not 0, in a script whose every `exit` and
    /// `return` is non-zero ([`only_failing_exits`]): whichever item the subject (a check's output)
    /// selects, the script exits non-zero (s26: `case $(redis-cli -h cache ping) in PONG) exit
    /// 1;; *) exit 1;; esac` exits 1 / 1 in bash 5.2.15 and dash 0.5.12, and was denied; with
    /// `PONG) exit 0;;` it is 0 / 1, still coupled). The last statement, for the message.
    pub(super) fn case_always_fails(&mut self, script: &str) -> Option<String> {
        if !script.contains("esac") || !only_failing_exits(script) {
            return None;
        }
        let parsed = self.parse(script).filter(|p| p.gap.is_none() && p.trees.len() == 1)?;
        let root = parsed.trees[0].root_node();
        let mut c = root.walk();
        let last = root.named_children(&mut c).filter(|k| k.kind_name() != "comment").last()?;
        if last.kind_name() != "case_statement" {
            return None;
        }
        let text = |n: tree_sitter::Node<'_>| script.get(n.byte_range()).unwrap_or("");
        let mut c = last.walk();
        let items: Vec<tree_sitter::Node<'_>> =
            last.named_children(&mut c).filter(|k| k.kind_name() == "case_item").collect();
        let mut catch_all = false;
        for item in &items {
            let mut c = item.walk();
            let kids: Vec<tree_sitter::Node<'_>> = item.children(&mut c).collect();
            let close = kids.iter().position(|k| k.kind_name() == ")")?;
            catch_all |= kids[..close].iter().any(|k| k.is_named() && text(*k) == "*");
            let body: Vec<&tree_sitter::Node<'_>> =
                kids[close + 1..].iter().filter(|k| k.is_named() && k.kind_name() != "comment").collect();
            let words: Vec<&str> = body.last().map(|k| text(**k)).unwrap_or("").split_whitespace().collect();
            let fails = body.last().is_some_and(|k| k.kind_name() == "command")
                && matches!(words.as_slice(), ["exit", n] if super::super::status::literal_status(n).is_some_and(|n| n != 0));
            if !fails {
                return None;
            }
        }
        (catch_all && !items.is_empty())
            .then(|| "a last `case` whose every item ends with a non-zero `exit`".to_string())
    }
}

/// Whether the list `words` (a script's last statement, split at blanks) ends with `&& exit N`,
/// N not 0 (what comes before either fails, a non-zero status, or runs the `exit`), or with `||
/// exit M`, M not 0, after a list that does so.
///
/// s27: also `|| false` after such a list, and `&& ANYTHING` after one (its left side ends the
/// script or gives a non-zero status, so what follows `&&` never runs): `C && exit 1 || false`
/// and `C && exit 1 && echo ok` exit 1 / 1 in bash 5.2.15 and dash 0.5.12 (redis-cli stub up /
/// down), and were denied.
fn list_fails(words: &[&str], nonzero: &dyn Fn(Option<&&str>) -> bool) -> bool {
    match words {
        [rest @ .., "&&", "exit", n] if nonzero(Some(n)) && !rest.is_empty() => true,
        [rest @ .., "||", "exit", m] => nonzero(Some(m)) && list_fails(rest, nonzero),
        [rest @ .., "||", "false"] => list_fails(rest, nonzero),
        _ => {
            // `A && TAIL`, TAIL holding no operator: skipped whenever A fails.
            let Some(op) = words.iter().rposition(|w| matches!(*w, "&&" | "||")) else { return false };
            words[op] == "&&" && op + 1 < words.len() && list_fails(&words[..op], nonzero)
        }
    }
}

/// Why a check in a script that fails every time ([`always_fails`]) cannot fail the probe by
/// its outage.
pub(super) fn always_fails_reason(last: &str) -> String {
    format!(
        "every `exit` and `return` of the script is non-zero, with {last} (the probe fails every \
         time)"
    )
}

/// Why a check after `trap 'exit 0' EXIT` cannot fail the probe.
pub(super) const EXIT_TRAP: &str = "the script's EXIT trap ends it with `exit 0` (`trap 'exit 0' EXIT`) or its own command's status, whatever this command returns";

/// Why a check after `trap 'exit N' EXIT`, N not 0, cannot fail the probe by its outage: the
/// probe fails every time (s24: `trap 'echo bye; exit 1' EXIT; C; echo done` exits 1 / 1 in
/// bash 5.2 and dash 0.5.12).
pub(super) fn exit_trap_fails(status: u8) -> String {
    format!(
        "the script's EXIT trap ends it with `exit {status}` whatever this command returns (the probe \
         fails every time)"
    )
}

/// The status N when the words after `trap` (quotes removed) set the EXIT trap (`EXIT`, `exit`
/// or `0` among the conditions) to an action that ends with `exit N` (a literal, 0 to 255) after
/// commands that only write output or remove files: the shell runs it when the script ends, by
/// its end, an `exit` or errexit, and its `exit N` sets the script's status (POSIX `trap` and
/// `exit`: "the exit status shall be n"; bash 5.2 and dash 0.5.12 exit 0 on `trap 'exit 0' EXIT;
/// pg_isready -h db` with the database down, also under `set -e`; s24: `trap 'echo bye; exit 1'
/// EXIT; C; echo done` exits 1 / 1). `SIGEXIT` is no condition bash 5.2 takes (2).
pub(super) fn exit_trap_status(args: &[String]) -> Option<u8> {
    let args = match args.first() {
        Some(a) if a == "--" => &args[1..],
        _ => args,
    };
    let (action, conditions) = args.split_first()?;
    // (`rc=$?` changes no status: s22, `trap 'rc=$?; exit 0' EXIT` exits 0 / 0.)
    let parts: Vec<&str> = action
        .split([';', '\n'])
        .map(str::trim)
        .filter(|p| !p.is_empty() && !super::exit_traps::status_assignment(p))
        .collect();
    if !conditions.iter().any(|c| c.eq_ignore_ascii_case("exit") || c == "0")
        || parts.iter().any(|p| p.contains(['$', '`', '\\', '<', '>', '|', '&', '(', ')']))
    {
        return None;
    }
    let (last, before) = parts.split_last()?;
    let status = match last.split_whitespace().collect::<Vec<_>>().as_slice() {
        ["exit", n] => super::super::status::literal_status(n)?,
        _ => return None,
    };
    before
        .iter()
        .all(|p| {
            let mut words = p.split_whitespace();
            matches!(words.next(), Some("echo" | "printf" | "logger" | ":" | "true" | "rm"))
                && !words.any(|w| matches!(w, "exit" | "return" | "exec" | "kill"))
        })
        .then_some(status)
}

impl super::Ctx<'_> {
    /// Whether the words after `trap` set the EXIT trap to a call of a function of the script,
    /// defined for certain where the `trap` runs (not in a region that may not have run), every
    /// definition of which ends with `exit 0` (`status::exits_zero_handler`), in a script that
    /// never names `unset` (`unset -f` would leave the call to fail): as [`exit_trap_status`]'s 0;
    /// or each ends with another literal `exit N` (`status::handler_exit_status`): N.
    pub(super) fn exit_zero_handler(&self, args: &[String]) -> Option<u8> {
        let args = match args.first() {
            Some(a) if a == "--" => &args[1..],
            _ => args,
        };
        let (Some(script), Some((name, conditions))) = (self.texts.last(), args.split_first()) else {
            return None;
        };
        let certain = conditions.iter().any(|c| c.eq_ignore_ascii_case("exit") || c == "0")
            && super::super::context::is_ident(name)
            && self.functions.iter().any(|(f, _)| f == name)
            && !self.uncertain_functions.contains(name)
            && !super::super::flow::mentions(script, &["unset"]);
        if !certain {
            return None;
        }
        if super::super::status::exits_zero_handler(script, name) {
            return Some(0);
        }
        super::super::status::handler_exit_status(script, name)
    }
}

/// Whether an EXIT trap set in `script` (the probe's own script) holds to its end: `trap` is
/// named once (no other trap resets it), and nothing ends the shell without running it or runs
/// code not seen here (`exec PROGRAM` replaces the shell, `kill` may end it by a signal,
/// `source`, `.` and `eval` run text the walk does not follow).
pub(super) fn trap_may_hold(script: &str) -> bool {
    let script: &str = &super::super::flow::code_view(script);
    let words = script.as_bytes().split(|b| !(b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-'));
    words.filter(|w| *w == b"trap").count() == 1
        && !super::super::flow::mentions(script, &["exec", "kill", "source", "eval"])
        && !script.split_whitespace().any(|w| w == ".")
}

/// Variables a shell sets itself (bash manual, "Shell Variables"; POSIX 2.5.3): never taken as
/// unset.
const SHELL_SET: &[&str] = &[
    "PATH",
    "HOME",
    "PWD",
    "OLDPWD",
    "IFS",
    "PPID",
    "UID",
    "EUID",
    "RANDOM",
    "SRANDOM",
    "SECONDS",
    "LINENO",
    "OPTIND",
    "OPTARG",
    "REPLY",
    "SHLVL",
    "HOSTNAME",
    "HOSTTYPE",
    "OSTYPE",
    "MACHTYPE",
    "PS1",
    "PS2",
    "PS4",
    "SHELL",
    "USER",
    "LOGNAME",
    "TERM",
    "GROUPS",
    "FUNCNAME",
    "EPOCHSECONDS",
    "EPOCHREALTIME",
    "COLUMNS",
    "LINES",
];

impl super::Ctx<'_> {
    /// `script` with each `exit $NAME` whose NAME is certainly unset where it runs read as the
    /// shell reads it (bash 5.2 and dash 0.5.12): an unquoted empty expansion is no word, so it is
    /// a bare `exit` (the last command's status), and a quoted one is `exit ""`, an error both
    /// shells end with 2, written `exit 2`. Each is rewritten in place, blanks for the rest of
    /// the word, so every offset stays the script's. NAME is unset when the script never names
    /// it otherwise (no assignment, `read`, `for`, `export`, default expansion: every mention is
    /// `$NAME` or `${NAME}`), no function known here names it, and neither the script's variables
    /// so far nor the container's `env` (nor an `envFrom`) hold it; `$1`...`$9` when the shell
    /// was given fewer arguments, in a text that defines no function and runs no `set` (and
    /// `${1:-0}`, `${1-0}` there is its default: `exit 0`). A value
    /// the image's environment may give it is a constant, whose status does not depend on any
    /// dependency: reading it as unset (the last command's status) only keeps a check coupled.
    pub(in crate::engine::exec) fn unset_exit_words<'s>(&self, script: &'s str) -> std::borrow::Cow<'s, str> {
        if !script.contains("exit") || !script.contains('$') {
            return std::borrow::Cow::Borrowed(script);
        }
        let mut out: Option<String> = None;
        let bytes = script.as_bytes();
        let mut from = 0;
        while let Some(i) = script[from..].find("exit").map(|i| i + from) {
            from = i + 4;
            let starts =
                i == 0 || matches!(bytes[i - 1], b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b'{');
            let after = &script[i + 4..];
            if !starts || !after.starts_with([' ', '\t']) {
                continue;
            }
            let rest = after.trim_start_matches([' ', '\t']);
            let word_at = script.len() - rest.len();
            let end = rest.find([' ', '\t', '\n', ';', '&', '|', ')']).unwrap_or(rest.len());
            let word = &rest[..end];
            let (inner, quoted) = match word.strip_prefix('"').and_then(|w| w.strip_suffix('"')) {
                Some(w) => (w, true),
                None => (word, false),
            };
            let name = inner
                .strip_prefix("${")
                .and_then(|n| n.strip_suffix('}'))
                .or_else(|| inner.strip_prefix('$'))
                .unwrap_or("");
            // `${1:-0}`, `${1-0}`: a positional parameter's literal numeric default, its value when
            // unset (`exit ${1:-0}` of `sh -c SCRIPT` exits 0; a named variable's default is
            // `status::texts::literal_defaults`'s).
            let colon = name.contains(":-");
            let (name, default) = match name.split_once(":-").or_else(|| name.split_once('-')) {
                Some((n, d))
                    if n.len() == 1
                        && n.bytes().all(|b| b.is_ascii_digit())
                        && !d.is_empty()
                        && d.bytes().all(|b| b.is_ascii_digit()) =>
                {
                    (n, Some(d))
                }
                _ => (name, None),
            };
            // (`${1:-0}` of a `$1` given empty, `sh -c '...; exit ${1:-0}' name ''`, is its
            // default too: s22, bash 5.2 and dash 0.5.12 exit 0 / 0.)
            let empty = colon && default.is_some() && self.certainly_empty(name, script);
            if name.is_empty() || !(empty || self.certainly_unset(name, script)) {
                continue;
            }
            let text = out.get_or_insert_with(|| script.to_string());
            let replacement = match default {
                Some(d) => format!("{d}{}", " ".repeat(word.len() - d.len())),
                None if quoted => format!("2{}", " ".repeat(word.len() - 1)),
                None => " ".repeat(word.len()),
            };
            text.replace_range(word_at..word_at + word.len(), &replacement);
        }
        out.map_or(std::borrow::Cow::Borrowed(script), std::borrow::Cow::Owned)
    }

    /// Whether positional parameter `name` (`1` to `9`) was given to the shell as the empty
    /// string, in a `script` that defines no function and runs no `set` (either may change it).
    fn certainly_empty(&self, name: &str, script: &str) -> bool {
        let Ok(n) = name.parse::<usize>() else { return false };
        n > 0
            && self.positional.as_ref().and_then(|p| p.get(n - 1)).is_some_and(String::is_empty)
            && !super::defines_function(script)
            && !super::super::flow::mentions(script, &["set", "shift"])
    }

    /// Whether variable or positional parameter `name` is certainly unset in `script`
    /// ([`Self::unset_exit_words`]).
    fn certainly_unset(&self, name: &str, script: &str) -> bool {
        if let Ok(n) = name.parse::<usize>() {
            return name.len() == 1
                && n > 0
                && self.positional.as_ref().is_some_and(|p| p.len() < n)
                && !super::defines_function(script)
                && !super::super::flow::mentions(script, &["set"]);
        }
        if !super::super::context::is_ident(name)
            || SHELL_SET.contains(&name)
            || name.starts_with("BASH")
            || self.shell_vars.contains_key(name)
            || self.env.vars.contains_key(name)
            || self.env.has_env_from
            || self.functions.iter().any(|(_, body)| super::super::flow::mentions(body, &[name]))
        {
            return false;
        }
        // Every mention of the name is `$NAME` or `${NAME}`.
        let bytes = script.as_bytes();
        let mut from = 0;
        while let Some(i) = script[from..].find(name).map(|i| i + from) {
            from = i + name.len();
            let after = bytes.get(from).copied();
            let before = if i > 0 { Some(bytes[i - 1]) } else { None };
            let word_end = after.is_none_or(|b| !(b.is_ascii_alphanumeric() || b == b'_'));
            let word_start = before.is_none_or(|b| !(b.is_ascii_alphanumeric() || b == b'_'));
            if !(word_start && word_end) {
                continue;
            }
            let plain = before == Some(b'$');
            let braced = before == Some(b'{') && i >= 2 && bytes[i - 2] == b'$' && after == Some(b'}');
            if !(plain || braced) {
                return false;
            }
        }
        true
    }
}

/// Whether the pieces after a function call, in its script's own run, certainly fail: output
/// only (`echo`, `printf` of plain text), then `exit N` with N not 0, or `false`. A branch, a
/// subshell, a pipe or anything else between: not known.
pub(super) fn continuation_fails(rest: &[String]) -> bool {
    use super::super::flow::{EXIT, FUNCTION, GUARD, PIPE, SCOPE, UNCOUPLED};
    for piece in rest {
        if let Some(scope) = piece.strip_prefix(SCOPE) {
            if scope.starts_with('L') {
                continue;
            }
            return false;
        }
        if piece.starts_with([FUNCTION, GUARD, PIPE, UNCOUPLED, EXIT]) {
            return false;
        }
        let words: Vec<&str> = piece.split_whitespace().collect();
        match words.as_slice() {
            ["false"] => return true,
            ["exit", n] => return n.parse::<u8>().is_ok_and(|n| n != 0),
            [program, ..]
                if matches!(*program, "echo" | "printf")
                    && !piece.contains(['>', '<', '$', '`'])
                    && !piece.chars().any(super::super::context::is_reserved_char) =>
            {
                continue;
            }
            _ => return false,
        }
    }
    false
}
