//! Stage 2c: whether a command's exit status can reach the script's (an exec probe fails by its
//! exit status alone: Kubernetes docs, "Configure Liveness, Readiness and Startup Probes").
//!
//! Walked up the syntax tree from a simple command, on the paths bash 5.2 and dash take (bash
//! manual, "Exit Status", "Lists of Commands", "Pipelines", "Conditional Constructs" and `set -e`):
//! - a statement that is not the last of its list (script, `{ }`, `( )`, branch, loop body) has its
//!   status replaced by the next one's, unless errexit is on and the statement is not one of
//!   errexit's exceptions (an `if`/`elif` condition, a part of a `&&`/`||` list but the last, a
//!   command after `!`);
//! - `A && B`: A's failure is the list's status; `A || B`: A's failure only runs B, whose status is
//!   the list's: A is coupled only when B fails by itself (`exit 1`, `false`, a test, ...);
//! - an `if`/`elif` condition only chooses a branch: coupled when a branch (or, when a branch
//!   leaves the script, the code after the `if`) fails by itself or changes what runs later
//!   (an assignment, a file written);
//! - a pipeline's status is its last command's (or any command's with `pipefail`), but a command
//!   that reads the output of the one before it carries its outcome (`remote | grep -q x`);
//! - `! A` is A inverted; a command substitution's output is data the script uses (coupled), and
//!   so is a file a command writes that the script names again (`remote > f; grep x f`).
//!
//! - `$?` (and a bare `exit`) reads the status of the command just before it: only one in the
//!   statement right after the check (its `||` side, its `if`, a function body or a loop around
//!   it) reads the check's; `ret=$?` there is followed to where `ret` is read;
//! - `set -e`/`set -o pipefail` apply from where they run in the shell that runs them; a last
//!   `exec CMD` gives the script CMD's status; a `trap` that only writes output or removes files
//!   changes no status.
//!
//! Checked against bash 5.2.15 and dash 0.5.12 with stubs of `pg_isready`/`nc` exiting 1 and 0
//! (`tests/shell_flow.rs`, `a_check_whose_status_is_discarded_is_a_warning`,
//! `status_reads_options_and_harmless_fallbacks_are_judged_where_they_are`). Anything this walk
//! does not understand keeps the command coupled (today's verdict): it only ever turns a denial
//! into a warning where the status is certainly not used.

use tree_sitter::Node;

use super::flow::mentions;
use super::shell::Walk;

/// What the script's text allows the walk to conclude: `None` when something in it can read a
/// status the walk does not follow (`PIPESTATUS`, a `return` bare or with a computed status, an
/// `exit` with a computed status other than `$?`, a `trap` whose action is not [`harmless_traps`],
/// `wait`, `eval`, `source`/`.`, `kill`, a `while`/`until` loop, which can wait on the dependency
/// until the probe times out, `coproc`, `lastpipe`, a known function whose body reads `$?`).
/// `$?`, a bare `exit`, `exit $?`, `exec`, `set -e` and `set -o pipefail` are judged where they are
/// (`discarded`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Rules {
    /// errexit is on from the start: the shell's own `-e`, a `#!` line with `-e`, or the caller's
    /// (for a function's body, whose caller mentions it anywhere).
    pub(super) errexit: bool,
    /// pipefail is on from the start (the shell's options, or the caller's for a function's body).
    pub(super) pipefail: bool,
    /// The shell functions the script may call (defined in it or before it): a call of one may
    /// run anything (`f() { exit 1; }`), so it is never taken as harmless.
    pub(super) functions: Vec<String>,
    /// The functions defined before the script runs (a caller's), certainly, once: name and body.
    pub(super) known: Vec<(String, String)>,
    /// Functions were defined before the script runs: it may be a function's body, whose caller
    /// can read what it assigns. A variable is then never taken as unread ([`only_echoed`]).
    pub(super) called: bool,
    /// The names the container's `env` declares, and whether it has `envFrom` (which may declare
    /// any name): such a variable is exported, so a program run later reads a new value given
    /// to it (break9 A2).
    pub(super) container_env: (Vec<String>, bool),
}

/// The [`Rules`] of script text `src` run by a shell whose options (or whose caller, for a
/// function's body) turn errexit (`errexit`) or pipefail (`pipefail`) on, where the functions
/// `known` are defined (`uncertain`: those of them that may have been defined otherwise).
pub(super) fn rules(
    src: &str,
    errexit: bool,
    pipefail: bool,
    known: &[(String, String)],
    uncertain: &std::collections::HashSet<String>,
    container_env: (Vec<String>, bool),
) -> Option<Rules> {
    if src.contains("PIPESTATUS")
        || (mentions(src, &["trap"]) && !harmless_traps(src))
        || mentions(
            src,
            &["wait", "eval", "source", "kill", "while", "until", "coproc", "lastpipe", "select"],
        )
        || known.iter().any(|(_, body)| reads_status_text(body))
    {
        return None;
    }
    if src.split_whitespace().any(|w| w == ".") {
        return None;
    }
    // `exit`/`return` with a literal status only; `exit` bare or `exit $?` gives the last
    // command's status, judged where it is (`reads_status`).
    // (A script that does not hold the names has no such word: its tokens are not looked at.)
    let names_a_status = src.contains("exit") || src.contains("return");
    // (`echo "exit code $?"`: a word in a double-quoted string that runs nothing is no command.)
    let unquoted = if names_a_status { blank_plain_strings(src) } else { String::new() };
    let tokens = unquoted
        .split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '{' | '}' | '`'));
    let statuses_literal = !names_a_status
        || tokens.clone().zip(tokens.skip(1)).all(|(w, status)| match w {
            "exit" => {
                status.is_empty() || last_status_word(status) || status.bytes().all(|b| b.is_ascii_digit())
            }
            "return" => !status.is_empty() && status.bytes().all(|b| b.is_ascii_digit()),
            _ => true,
        });
    if !statuses_literal || src.trim_end().ends_with("return") {
        return None;
    }
    let mut functions: Vec<String> = known.iter().map(|(name, _)| name.clone()).collect();
    functions.extend(defined_functions(src));
    // An alias (`alias true='exit 1'`: sh expands aliases) or a function named like a command
    // taken as harmless (`true() { exit 1; }`) may fail where the walk sees none (break9 A9).
    if mentions(src, &["alias"]) || functions.iter().any(|f| PLAIN.contains(&f.as_str())) {
        return None;
    }
    Some(Rules {
        errexit: errexit || shebang_errexit(src),
        pipefail,
        functions,
        known: known.iter().filter(|(name, _)| !uncertain.contains(name)).cloned().collect(),
        called: !known.is_empty(),
        container_env,
    })
}

/// `src` with the text inside each double-quoted string that holds no command substitution
/// (`$(`, a backquote) replaced by blanks: no word in it runs as a command.
fn blank_plain_strings(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut chars = src.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        out.push(c);
        match c {
            '\\' => {
                if let Some((_, e)) = chars.next() {
                    out.push(e);
                }
            }
            '\'' => {
                for (_, e) in chars.by_ref() {
                    out.push(e);
                    if e == '\'' {
                        break;
                    }
                }
            }
            '"' => {
                // The closing quote: the next `"` not escaped.
                let body = &src[i + 1..];
                let mut end = None;
                let mut escaped = false;
                for (j, e) in body.char_indices() {
                    match e {
                        _ if escaped => escaped = false,
                        '\\' => escaped = true,
                        '"' => {
                            end = Some(j);
                            break;
                        }
                        _ => {}
                    }
                }
                let Some(end) = end else {
                    continue;
                };
                let inner = &body[..end];
                if inner.contains("$(") || inner.contains('`') {
                    continue;
                }
                out.extend(inner.chars().map(|_| ' '));
                out.push('"');
                while chars.peek().is_some_and(|(k, _)| *k <= i + 1 + end) {
                    chars.next();
                }
            }
            _ => {}
        }
    }
    out
}

/// `$?`, `"$?"` or `${?}`: the status of the command before.
fn last_status_word(w: &str) -> bool {
    matches!(w.trim_matches('"'), "$?" | "${?}")
}

/// Whether text reads the status of the command before it: `$?`, `${?`, or a bare `exit`.
fn reads_status_text(t: &str) -> bool {
    if t.contains("$?") || t.contains("${?") {
        return true;
    }
    let parts: Vec<&str> = t
        .split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '{' | '}' | '`'))
        .collect();
    parts.windows(2).any(|w| w[0] == "exit" && w[1].is_empty()) || parts.last() == Some(&"exit")
}

/// Whether every `trap` in `src` changes no status: its action is empty, `-`, or only writes
/// output or removes files (`trap 'rm -f /tmp/x' EXIT`, `trap '' TERM`), with no expansion; an
/// `ERR`, `DEBUG` or `RETURN` trap (run between the script's commands) only writes output. An
/// EXIT trap's status is not the script's (bash manual, "Bourne Shell Builtins", `trap`; dash
/// the same), and a signal's trap runs on that signal only. Checked with bash 5.2 and dash 0.5.12
/// (`tests/shell_flow.rs`, `a_check_whose_status_is_discarded_is_a_warning`).
pub(super) fn harmless_traps(src: &str) -> bool {
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
        for (j, c) in src[i + 4..].char_indices() {
            match quote {
                Some(q) if c == q => quote = None,
                Some('"') if matches!(c, '$' | '`' | '\\') => return false,
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
                _ => false,
            }
        });
        if !(action == "-" || commands_ok) {
            return false;
        }
    }
    true
}

/// The names of the functions `src` defines (`name() ...`, `function name ...`), at the start of
/// a line or after `;`, `&`, `|`, `{` (as `script::defines_function` finds them).
pub(super) fn defined_functions(src: &str) -> Vec<String> {
    let mut out = Vec::new();
    // (A definition holds `()` or `function `: a script without either has none.)
    if !src.contains("()") && !src.contains("function ") {
        return out;
    }
    for segment in src.split(['\n', ';', '&', '|', '{']) {
        let seg = segment.trim_start();
        let seg = seg.strip_prefix("function ").map_or(seg, str::trim_start);
        let end =
            // (`:() { exit 1; }` is a function bash 5.2 defines and calls for `:`.)
            seg.find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ':'))).unwrap_or(seg.len());
        if end > 0
            && (segment.trim_start().starts_with("function ") || seg[end..].trim_start().starts_with("()"))
        {
            out.push(seg[..end].to_string());
        }
    }
    out
}

/// Whether the script turns errexit on: `set -e`/`set -eu`/`set -o errexit` where a command
/// starts (not in a comment, not another command's argument: `echo set -e`, `redis-cli set k
/// v`; `command set -e`, `\set -e` count), a command whose name is computed in a script with the
/// word `set` (`f=set; $f -e`), or a `#!` line with `-e`.
pub(super) fn sets_errexit(script: &str) -> bool {
    let set_e = maybe_set(script) && {
        let words = command_words(script);
        let computed = words.iter().any(|(w, at_start)| *at_start && w.contains(['$', '`']));
        (computed && words.iter().any(|(w, _)| unquoted(w) == "set"))
            || words.windows(2).any(|w| {
                let flags = unquoted(&w[1].0);
                w[0].1
                    && unquoted(&w[0].0) == "set"
                    && ((flags.starts_with(['-', '+']) && flags.contains('e')) || w[1].0.contains(['$', '`']))
            })
    };
    set_e || shebang_errexit(script) || mentions(script, &["errexit"])
}

/// Whether `src` may spell `set` (quoted or with backslashes): it has the three letters.
fn maybe_set(src: &str) -> bool {
    src.contains('s') && src.contains('e') && src.contains('t')
}

/// `w` without its quotes and backslashes.
fn unquoted(w: &str) -> String {
    w.chars().filter(|c| !matches!(c, '"' | '\'' | '\\')).collect()
}

/// The words of `src` outside comments, as written, each with whether a command starts there:
/// after a control operator, a group's or subshell's parenthesis or brace, a keyword (`then`,
/// `do`, `!`, `time`, ...), an assignment, a redirection, or `command`/`builtin` and their
/// options. A crude reading (quotes and backslashes kept in a word; `${` splits one), used only
/// to count `set` commands conservatively.
fn command_words(src: &str) -> Vec<(String, bool)> {
    let mut scan =
        WordScan { out: Vec::new(), cur: String::new(), at_start: true, wrapped: false, target: false };
    let mut quote: Option<char> = None;
    let mut chars = src.chars();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                scan.cur.push(c);
                if c == '\\' && q == '"' {
                    if let Some(e) = chars.next() {
                        scan.cur.push(e);
                    }
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' => {
                    quote = Some(c);
                    scan.cur.push(c);
                }
                '\\' => {
                    scan.cur.push(c);
                    if let Some(e) = chars.next() {
                        scan.cur.push(e);
                    }
                }
                '#' if scan.cur.is_empty() => {
                    for e in chars.by_ref() {
                        if e == '\n' {
                            break;
                        }
                    }
                    scan.restart();
                }
                ';' | '&' | '|' | '(' | ')' | '{' | '}' | '\n' | '`' => {
                    scan.end_word();
                    scan.restart();
                }
                c if c.is_whitespace() => scan.end_word(),
                _ => scan.cur.push(c),
            },
        }
    }
    scan.end_word();
    scan.out
}

/// [`command_words`]' state.
struct WordScan {
    out: Vec<(String, bool)>,
    cur: String,
    /// A command starts at the next word.
    at_start: bool,
    /// After `command`/`builtin` (whose options come before the name).
    wrapped: bool,
    /// The next word is a redirection's target.
    target: bool,
}

impl WordScan {
    fn restart(&mut self) {
        self.at_start = true;
        self.wrapped = false;
        self.target = false;
    }

    fn end_word(&mut self) {
        if self.cur.is_empty() {
            return;
        }
        let w = std::mem::take(&mut self.cur);
        let bare = unquoted(&w);
        let keyword = matches!(
            bare.as_str(),
            "then" | "do" | "else" | "elif" | "if" | "while" | "until" | "!" | "time" | "command" | "builtin"
        );
        let assignment = w
            .split_once('=')
            .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'));
        let option_of_wrapper = self.wrapped && w.starts_with('-');
        // A redirection before the command's name (`2>/dev/null set -e`), its target attached
        // or the next word.
        let redirection = w.trim_start_matches(|c: char| c.is_ascii_digit()).starts_with(['<', '>']);
        let target_follows = redirection && w.ends_with(['<', '>', '&']);
        self.out.push((w, self.at_start));
        if std::mem::take(&mut self.target) {
            return;
        }
        if self.at_start && redirection {
            self.target = target_follows;
        } else if self.at_start && (keyword || assignment || option_of_wrapper) {
            self.wrapped = matches!(bare.as_str(), "command" | "builtin") || option_of_wrapper;
        } else {
            self.at_start = false;
            self.wrapped = false;
        }
    }
}

/// Whether the script's `#!` line passes `-e` (errexit from its first line).
fn shebang_errexit(script: &str) -> bool {
    script.strip_prefix("#!").is_some_and(|l| {
        l.lines()
            .next()
            .unwrap_or("")
            .split_whitespace()
            .skip(1)
            .any(|w| w.starts_with('-') && w.contains('e'))
    })
}

/// The text of `n` in the script.
fn text<'s>(n: Node<'_>, walk: &Walk<'s>) -> &'s str {
    walk.src.get(n.start_byte()..n.end_byte()).unwrap_or("")
}

/// The named children of `n` that are statements (not comments or here-document parts).
fn is_statement(k: Node<'_>) -> bool {
    k.is_named() && !matches!(k.kind(), "comment" | "heredoc_body" | "heredoc_end")
}

/// Why the exit status of `n` (a simple command, or one with redirections) cannot reach the
/// script's, or `None` when it may (or the walk cannot tell).
pub(super) fn discarded(n: Node<'_>, walk: &Walk<'_>, rules: &Rules) -> Option<&'static str> {
    let (why, at) = discarded_at(n, walk, rules)?;
    (!output_used_above(at, walk)).then_some(why)
}

/// Whether the output of `at` (whose status is not used) is data the script uses further up: it
/// is in a command substitution, a file written and named again, or a pipeline whose later
/// commands read it (`{ remote; local; } | grep -q x`).
fn output_used_above(at: Node<'_>, walk: &Walk<'_>) -> bool {
    let Some((root, _)) = walk.top_functions.get(walk.tree.get()) else {
        return output_used_above_from(at, std::iter::successors(at.parent(), |p| p.parent()), walk);
    };
    // (A tree with no substitution, pipeline or redirection has nothing to look for.)
    if !with_facts(*root, walk, |facts| facts.output_users) {
        return false;
    }
    let path = path_to(*root, at);
    work(walk, path.len());
    output_used_above_from(at, path.into_iter().rev(), walk)
}

/// Whether what `n` (a statement whose status `flow::uncoupled` drops: `|| true`, `| true`,
/// `&`) writes is read elsewhere: a file it, or the pipeline around it, writes that the script
/// names again (or whose name it computes: `> /tmp/$(echo s)`), or a pipeline or a file written
/// further up (`{ remote || true; } | grep -q x`). A substitution's value is left to the walk of
/// its assignment (bash 5.2 and dash 0.5.12 exit 1 with the database down on `pg_isready -h db
/// > /tmp/s || true; grep -q accepting /tmp/s`).
pub(super) fn output_kept(n: Node<'_>, walk: &Walk<'_>) -> bool {
    if writes_a_named_file(n, walk)
        || n.parent().is_some_and(|p| p.kind() == "pipeline" && writes_a_named_file(p, walk))
    {
        return true;
    }
    let Some((root, _)) = walk.top_functions.get(walk.tree.get()) else {
        return output_reaches(n, std::iter::successors(n.parent(), |p| p.parent()), walk, false);
    };
    if !with_facts(*root, walk, |facts| facts.output_users) {
        return false;
    }
    let path = path_to(*root, n);
    work(walk, path.len());
    output_reaches(n, path.into_iter().rev(), walk, false)
}

/// [`output_used_above`] of `child` over its ancestors `up`, nearest first.
fn output_used_above_from<'a>(child: Node<'a>, up: impl Iterator<Item = Node<'a>>, walk: &Walk<'_>) -> bool {
    output_reaches(child, up, walk, true)
}

/// [`output_used_above_from`], where a substitution counts as a reader when `substitutions`.
fn output_reaches<'a>(
    mut child: Node<'a>,
    up: impl Iterator<Item = Node<'a>>,
    walk: &Walk<'_>,
    substitutions: bool,
) -> bool {
    for parent in up {
        match parent.kind() {
            "command_substitution" | "process_substitution" if substitutions => return true,
            "redirected_statement" if writes_a_named_file(parent, walk) => return true,
            "pipeline" => {
                let mut c = parent.walk();
                let after: Vec<Node<'_>> = parent
                    .named_children(&mut c)
                    .filter(|k| is_statement(*k) && k.start_byte() >= child.end_byte())
                    .collect();
                if !after.iter().all(|k| trivial_reader(*k, walk)) {
                    return true;
                }
            }
            _ => {}
        }
        child = parent;
    }
    false
}

/// A pipeline element that reads nothing of its input into a status or a file: `true`, `:`.
fn trivial_reader(k: Node<'_>, walk: &Walk<'_>) -> bool {
    matches!(text(k, walk).trim(), "true" | ":" | "cat >/dev/null")
}

/// [`discarded`], with the node whose status is the one found discarded.
fn discarded_at<'t>(n: Node<'t>, walk: &Walk<'_>, rules: &Rules) -> Option<(&'static str, Node<'t>)> {
    // Its output is data: a file it writes that the script names again.
    if writes_a_named_file(n, walk) {
        return None;
    }
    // (The root of the tree being walked is kept: going up to it costs a walk down from the
    // root per step, the depth squared.)
    let root = match walk.top_functions.get(walk.tree.get()) {
        Some((root, _)) => *root,
        None => {
            let mut root = n;
            while let Some(p) = root.parent() {
                root = p;
            }
            root
        }
    };
    let (mut errexit, pipefail) = options_at(n, root, walk, rules)?;
    let funcs = functions_at(n, walk, rules);
    let mut at = n;
    // errexit does not apply to `at`'s failure (one of its exceptions was passed).
    let mut exempt = false;
    loop {
        work(walk, 1);
        let parent = at.parent()?;
        match parent.kind() {
            "program" | "compound_statement" | "subshell" | "do_group" | "case_item" | "else_clause"
            | "if_statement" | "elif_clause" => {
                if matches!(parent.kind(), "if_statement" | "elif_clause") && in_condition(at, parent) {
                    if !last_statement(at, parent) {
                        return (!next_reads_status(at, parent, walk, rules)).then_some((NOT_LAST, at));
                    }
                    // errexit ignores a condition; the condition only chooses a branch.
                    let construct = if parent.kind() == "elif_clause" { parent.parent()? } else { parent };
                    if reads_status_text(text(construct, walk)) {
                        return None;
                    }
                    return (selection_is_harmless(at, construct, walk, &funcs)
                        || same_writes(at, construct, walk))
                    .then_some((CONDITION, at));
                }
                if matches!(parent.kind(), "case_item") && !in_case_body(at, parent) {
                    return None;
                }
                if at.next_sibling().is_some_and(|s| s.kind() == "&") {
                    // Run in the background (only a script without `wait` gets here).
                    return Some((BACKGROUND, at));
                }
                if !last_statement(at, parent) {
                    if !errexit || exempt {
                        return (!next_reads_status(at, parent, walk, rules)).then_some((NOT_LAST, at));
                    }
                    // errexit ends the `( )` around it, not the script: the subshell's status is
                    // the failure, judged where the subshell is (bash manual, "Command Execution
                    // Environment"), when what it skips changes nothing.
                    let sub = errexit_ends_subshell(at, parent, walk, &funcs)?;
                    errexit = option_on_at(sub, root, walk, Opt::Errexit, rules.errexit);
                    at = sub;
                    continue;
                }
                match parent.kind() {
                    "program" => return None,
                    "else_clause" | "elif_clause" => at = parent.parent()?,
                    "case_item" => at = parent.parent()?,
                    "do_group" => {
                        let looped = parent.parent()?;
                        if looped.kind() != "for_statement" {
                            return None;
                        }
                        at = looped;
                    }
                    // errexit's exceptions end at a subshell: its status is a failure like any
                    // command's (bash manual, `set -e`: "a compound command other than a
                    // subshell"; break9 A5), and errexit is the one of the shell around it.
                    "subshell" => {
                        exempt = false;
                        errexit = option_on_at(parent, root, walk, Opt::Errexit, rules.errexit);
                        at = parent;
                    }
                    _ => at = parent,
                }
            }
            "list" => {
                let left = parent.named_child(0)?;
                let op = parent.child(1)?.kind();
                if left != at {
                    at = parent;
                    continue;
                }
                let right = parent.named_child(parent.named_child_count().checked_sub(1)?)?;
                exempt = true;
                // tree-sitter-bash hangs `A || B > f`'s redirection on the list, bash on B: B
                // writes the file, which can fail (a read-only root filesystem), or a closed
                // stdout (`>&-`).
                let redirected = parent.parent().is_some_and(|r| {
                    r.kind() == "redirected_statement"
                        && !harmless_text(walk.src.get(parent.end_byte()..r.end_byte()).unwrap_or(""), &[])
                });
                if op == "||" && reads_status_text(text(right, walk)) {
                    return None;
                }
                match op {
                    "||" if !redirected
                        && (harmless(right, walk, &funcs)
                            || !rules.called && unread_assignment(right, walk, rules))
                        && !leaves(right, walk) =>
                    {
                        return Some((OR_ELSE, parent));
                    }
                    // B only writes, but the write can fail (`|| echo down >> /var/log/x`, `>&-`):
                    // the list's status is B's, followed further up (`; curl ...` replaces it),
                    // and errexit applies to it.
                    "||" if may_only_fail(right, walk, &funcs) && !leaves(right, walk) => {
                        exempt = false;
                        at = parent;
                    }
                    // `|| ( echo down; exit 1 )`: the `exit` ends the subshell, whose status is
                    // the list's (bash manual, "Command Execution Environment"), followed on.
                    "||" if !redirected && subshell_only_exits(right, walk, &funcs) => {
                        exempt = false;
                        at = parent;
                    }
                    "||" => return None,
                    "&&" if let Some(looped) = tries_each_host(at, parent, right, walk) => {
                        return Some((NEXT_HOST, looped));
                    }
                    "&&" if !harmless(right, walk, &funcs) => return None,
                    "&&" if leaves(right, walk) && !harmless_after(parent, walk, &funcs) => {
                        return None;
                    }
                    "&&" => at = parent,
                    _ => return None,
                }
            }
            "negated_command" => {
                exempt = true;
                at = parent;
            }
            "pipeline" => {
                let last = {
                    let mut c = parent.walk();
                    parent.named_children(&mut c).filter(|k| is_statement(*k)).last()?
                };
                if last != at && !pipefail {
                    // Its status is gone, but the commands after it read its output.
                    let mut c = parent.walk();
                    let after: Vec<Node<'_>> =
                        parent.named_children(&mut c).filter(|k| k.start_byte() > at.start_byte()).collect();
                    if after.iter().all(|k| trivial_reader(*k, walk)) {
                        return Some((PIPED_AWAY, parent));
                    }
                    // `remote | cat`: a bare `cat` copies its input out and exits 0 whatever it
                    // is (bash manual, "Pipelines"): the pipeline's output, the check's, is judged
                    // where it goes (`output_used_above`).
                    // (Not a function named `cat`.)
                    if !rules.functions.iter().any(|f| f == "cat")
                        && after.iter().all(|k| trivial_reader(*k, walk) || text(*k, walk).trim() == "cat")
                    {
                        return Some((PIPED_THROUGH, parent));
                    }
                }
                if writes_a_named_file(parent, walk) {
                    return None;
                }
                at = parent;
            }
            "redirected_statement" => {
                if writes_a_named_file(parent, walk) {
                    return None;
                }
                at = parent;
            }
            // `echo "db: $(pg_isready -h db)"`: the substitution's status is lost (echo's is 0),
            // its output is echo's (used only if echo's output is: `output_used_above`).
            "command_substitution" if !errexit || exempt || last_statement(at, parent) => {
                let mut up = parent.parent()?;
                while matches!(up.kind(), "string" | "concatenation") {
                    up = up.parent()?;
                }
                // `out=$(remote)`: the assignment's status is the substitution's, followed on;
                // its value must only be written out (`echo "$out"`).
                if up.kind() == "variable_assignment"
                    && up.parent().is_some_and(|p| is_list_of_statements(p.kind()))
                    && !rules.called
                    && up.child_by_field_name("name").is_some_and(|name| only_echoed(name, walk))
                {
                    exempt = false;
                    at = up;
                    continue;
                }
                // `export X=$(remote)` (`local`, `readonly`, `declare`, `typeset`): the
                // declaration's status is its own, 0, the substitution's lost.
                if up.kind() == "variable_assignment"
                    && let Some(decl) = up.parent().filter(|d| d.kind() == "declaration_command")
                    && unread_declaration(up, decl, walk, rules)
                {
                    return Some((DECLARED, decl));
                }
                if reads_status_text(text(up, walk)) {
                    return None;
                }
                let name = up.child_by_field_name("name").map(|m| text(m, walk));
                if up.kind() != "command" || !matches!(name, Some("echo" | "logger")) {
                    return None;
                }
                return Some((ECHOED, up));
            }
            _ => return None,
        }
    }
}

/// Whether errexit and pipefail are on at `n`, in the tree whose root is `root`, or `None` when
/// a status may be read where the walk does not look: a function's body or a loop's that reads
/// one (`f() { echo $?; }`), or an `exec` that is not the script's last command.
fn options_at(n: Node<'_>, root: Node<'_>, walk: &Walk<'_>, rules: &Rules) -> Option<(bool, bool)> {
    if !exec_only_last(root, walk) || !status_reads_placed(n, root, walk) {
        return None;
    }
    Some((
        option_on_at(n, root, walk, Opt::Errexit, rules.errexit),
        option_on_at(n, root, walk, Opt::Pipefail, rules.pipefail),
    ))
}

/// Counts `units` of work done on `walk`'s text (`Walk::status_work`).
fn work(walk: &Walk<'_>, units: usize) {
    walk.status_work.set(walk.status_work.get().saturating_add(units));
}

/// The nodes from `root` down to `n`'s parent (`root` first): one walk down, where a chain of
/// `Node::parent` walks down from the root once per step.
fn path_to<'a>(root: Node<'a>, n: Node<'a>) -> Vec<Node<'a>> {
    let mut path = Vec::new();
    let mut at = root;
    while at != n {
        path.push(at);
        match at.child_with_descendant(n) {
            Some(c) if c != at => at = c,
            _ => break,
        }
    }
    path
}

/// The functions a command at `n` may call, split into those that may do anything and those that
/// only write output.
struct Funcs {
    risky: Vec<String>,
    ok: Vec<String>,
}

/// A function defined at the top level of a script (`Walk::top_functions`): its name, the byte
/// its definition ends at, and whether a call after that is harmless: defined once, its body
/// [`harmless`] (no function call, no `exit`/`return`: `log() { echo "$@" >&2; }`).
pub(super) struct TopFunction {
    name: String,
    end: usize,
    harmless: bool,
}

/// The top-level function definitions of the tree whose root is `root`.
fn top_functions(root: Node<'_>, walk: &Walk<'_>, rules: &Rules) -> Vec<TopFunction> {
    let all = Funcs { risky: rules.functions.clone(), ok: Vec::new() };
    let mut c = root.walk();
    root.named_children(&mut c)
        .filter(|k| k.kind() == "function_definition")
        .filter_map(|def| {
            let (name, body) = (def.child_by_field_name("name")?, def.child_by_field_name("body")?);
            let name = text(name, walk).to_string();
            let harmless = rules.functions.iter().filter(|f| **f == name).count() == 1
                && body.kind() == "compound_statement"
                && harmless(body, walk, &all)
                && !leaves(body, walk);
            Some(TopFunction { name, end: def.end_byte(), harmless })
        })
        .collect()
}

/// The script's functions at `n`: one defined once, at the script's top level before `n`, whose
/// body is [`harmless`] is harmless to call (break-it pass, #10); any other may run anything.
/// The definitions are read once per tree (`Walk::top_functions`), not once per command.
fn functions_at(n: Node<'_>, walk: &Walk<'_>, rules: &Rules) -> Funcs {
    let root_of_n = || {
        let mut root = n;
        while let Some(p) = root.parent() {
            root = p;
        }
        root
    };
    let own;
    let table = match walk.top_functions.get(walk.tree.get()) {
        Some((root, table)) => table.get_or_init(|| top_functions(*root, walk, rules)),
        None => {
            own = top_functions(root_of_n(), walk, rules);
            &own
        }
    };
    let mut ok: Vec<String> =
        table.iter().filter(|f| f.harmless && f.end <= n.start_byte()).map(|f| f.name.clone()).collect();
    // (The known functions' part is the same for every command: made once per tree.)
    let root = walk.top_functions.get(walk.tree.get()).map_or_else(root_of_n, |(r, _)| *r);
    with_facts(root, walk, |facts| {
        for name in facts.known_ok.get_or_init(|| known_ok(rules)) {
            if !ok.contains(name) {
                ok.push(name.clone());
            }
        }
    });
    let risky = if ok.is_empty() {
        rules.functions.clone()
    } else {
        let oks: std::collections::HashSet<&str> = ok.iter().map(String::as_str).collect();
        rules.functions.iter().filter(|f| !oks.contains(f.as_str())).cloned().collect()
    };
    Funcs { risky, ok }
}

/// The functions defined before the script runs (a function's body) that are harmless to call:
/// defined once and certainly, where the call runs (`main() { pg_isready -h db || log down; };
/// log() { echo "$@"; }; main`: bash 5.2 and dash 0.5.12 exit 0 with the database down).
fn known_ok(rules: &Rules) -> Vec<String> {
    let mut counts: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for f in &rules.functions {
        *counts.entry(f.as_str()).or_default() += 1;
    }
    let mut ok: Vec<String> = Vec::new();
    for (name, body) in &rules.known {
        // (Cheapest first: `harmless_text` looks for every function's name.)
        if counts.get(name.as_str()) == Some(&1)
            && plain_text_commands(body)
            && !mentions(body, &["exit", "return"])
            && !ok.contains(name)
            && harmless_text(body, &rules.functions)
        {
            ok.push(name.clone());
        }
    }
    ok
}

const NOT_LAST: &str = "its exit status is not used (a later command's status is the script's)";
const BACKGROUND: &str = "it runs in the background (`&`)";
const OR_ELSE: &str = "its failure only runs the command after `||`, which does not fail by itself and whose status is the script's";
const CONDITION: &str = "its status only chooses which branch runs, and no branch fails by itself";
const ECHOED: &str = "its output is only written (`echo \"$(...)\"`), its status lost";
const PIPED_AWAY: &str = "its pipeline's status is another command's (`| true`)";
const PIPED_THROUGH: &str = "its pipeline's status is `cat`'s, which only copies its output";
const NEXT_HOST: &str = "it is one of the hosts a loop tries until one answers (`&& break`): the loop fails only when every one does";
const DECLARED: &str = "it is in a declaration (`export X=$(...)`), whose status is its own";

/// The `( )` that errexit ends when `at`, a statement of `parent` that is not its last, fails:
/// the nearest subshell around it with only `{ }` groups between, where every statement the
/// failure skips (after `at`, to the end of the subshell) is [`harmless`] and reads no status.
fn errexit_ends_subshell<'t>(
    at: Node<'t>,
    parent: Node<'t>,
    walk: &Walk<'_>,
    funcs: &Funcs,
) -> Option<Node<'t>> {
    let (mut child, mut list) = (at, parent);
    loop {
        for s in siblings_after(child, list) {
            work(walk, 1);
            if is_statement(s) && (!harmless(s, walk, funcs) || reads_status_text(text(s, walk))) {
                return None;
            }
        }
        match list.kind() {
            "subshell" => return Some(list),
            "compound_statement" => {
                child = list;
                list = list.parent()?;
                if !matches!(list.kind(), "subshell" | "compound_statement") {
                    return None;
                }
            }
            _ => return None,
        }
    }
}

/// Whether `at` is among the statements before `then` of `parent` (an `if_statement` or an
/// `elif_clause`).
fn in_condition(at: Node<'_>, parent: Node<'_>) -> bool {
    let mut c = parent.walk();
    let then = parent.children(&mut c).find(|k| k.kind() == "then");
    then.is_some_and(|t| at.end_byte() <= t.start_byte())
}

/// Whether `at` is in a `case` item's body (after its `)`), not one of its patterns.
fn in_case_body(at: Node<'_>, item: Node<'_>) -> bool {
    let mut c = item.walk();
    let close = item.children(&mut c).find(|k| k.kind() == ")");
    close.is_some_and(|p| at.start_byte() >= p.end_byte())
}

/// Whether no statement of the same list follows `at` (the next named sibling, if any, is another
/// clause of its `if`, or a `case` item's terminator).
fn last_statement(at: Node<'_>, parent: Node<'_>) -> bool {
    for s in siblings_after(at, parent) {
        if is_statement(s) && !matches!(s.kind(), "elif_clause" | "else_clause") {
            return false;
        }
        if !s.is_named()
            && matches!(s.kind(), "then" | "fi" | "done" | "}" | ")" | ";;" | ";&" | ";;&" | "esac")
        {
            return true;
        }
    }
    true
}

/// The children of `parent` after `at` (one of them), in order: one cursor over `parent`'s
/// children, where each `Node::next_sibling` finds the parent again and walks its children.
fn siblings_after<'a>(at: Node<'a>, parent: Node<'a>) -> impl Iterator<Item = Node<'a>> {
    let mut c = parent.walk();
    let mut found = c.goto_first_child_for_byte(at.start_byte()).is_some();
    while found && c.node() != at {
        found = c.goto_next_sibling();
    }
    // (Not found among them: the siblings one by one, as before.)
    let mut fallback = if found { None } else { at.next_sibling() };
    std::iter::from_fn(move || {
        if found {
            return c.goto_next_sibling().then(|| c.node());
        }
        let s = fallback?;
        fallback = s.next_sibling();
        Some(s)
    })
}

/// Whether the status of `cond` (an `if`/`elif` condition) choosing which part of `construct`
/// runs cannot fail the script by itself: every other part is [`harmless`], and when one of them
/// leaves the script (`exit 0`), so is every command after the `if`.
fn selection_is_harmless(cond: Node<'_>, construct: Node<'_>, walk: &Walk<'_>, functions: &Funcs) -> bool {
    let mut c = construct.walk();
    let parts: Vec<Node<'_>> = construct
        .children(&mut c)
        .flat_map(|k| {
            if matches!(k.kind(), "elif_clause" | "else_clause") {
                let mut c = k.walk();
                k.children(&mut c).collect::<Vec<_>>()
            } else {
                vec![k]
            }
        })
        .filter(|k| {
            is_statement(*k)
                && *k != cond
                && !(k.start_byte() <= cond.start_byte() && cond.end_byte() <= k.end_byte())
        })
        .collect();
    parts.iter().all(|p| harmless(*p, walk, functions))
        && (!parts.iter().any(|p| leaves(*p, walk)) || harmless_after(construct, walk, functions))
}

/// Whether every command after `n` in the script (to its end) is [`harmless`].
fn harmless_after(n: Node<'_>, walk: &Walk<'_>, functions: &Funcs) -> bool {
    let mut root = n;
    while let Some(p) = root.parent() {
        root = p;
    }
    harmless_text(walk.src.get(n.end_byte()..).unwrap_or(""), &functions.risky)
        && plain_commands(root, walk, n.end_byte(), &functions.ok)
}

/// Whether `n` holds an `exit` or `return` (it leaves the script or function).
fn leaves(n: Node<'_>, walk: &Walk<'_>) -> bool {
    mentions(text(n, walk), &["exit", "return"])
}

/// Whether `n`, run or not, cannot by itself fail the script or change what runs after it:
/// no `exit` but `exit 0`, no `return`, `false`, test (`[`, `[[`, `test`, `(( ))`), `!`, no
/// assignment or builtin that changes the shell's state, no file written, no function defined.
fn harmless(n: Node<'_>, walk: &Walk<'_>, functions: &Funcs) -> bool {
    harmless_text(text(n, walk), &functions.risky) && plain_commands(n, walk, n.start_byte(), &functions.ok)
}

/// Programs that change nothing a later command or the next probe sees, and never wait: output
/// and the clients (`clients::find_client`: a check of their own, judged by themselves). Any
/// other program (`sleep`, which can time the probe out, `pkill`, `supervisorctl`, ...) may
/// make the branch that runs matter.
/// Builtins and programs that change the shell or the files a later command may read (`read`,
/// `export`, `set`, `cd`, `rm`, ...): a text naming one is neither harmless ([`harmless_text`]) nor
/// free of state its caller reads ([`leaves_state`]).
const CHANGES_STATE: &[&str] = &[
    "set",
    "shift",
    "unset",
    "export",
    "read",
    "readarray",
    "mapfile",
    "declare",
    "typeset",
    "readonly",
    "cd",
    "pushd",
    "popd",
    "touch",
    "rm",
    "mkdir",
    "mv",
    "cp",
    "tee",
    "ln",
    "alias",
    "shopt",
    "ulimit",
    "umask",
    "let",
    "getopts",
];

/// Beside [`CHANGES_STATE`], what keeps a text from being harmless: a status of its own (`false`,
/// `test`, `return`), loop control, `local`, and a `function` definition.
const NOT_HARMLESS: &[&str] = &["false", "return", "test", "local", "break", "continue", "function"];

/// Beside [`CHANGES_STATE`], what a function's body may do that ends the script or runs code the
/// walk does not follow (`exit`, `exec`, `trap`, `kill`, `eval`, `source`).
const ENDS_OR_UNFOLLOWED: &[&str] = &["exit", "exec", "trap", "kill", "eval", "source"];

const PLAIN: &[&str] = &["echo", "printf", ":", "true", "exit", "logger"];

/// Whether every simple command in `n` that starts at or after byte `from` runs a [`PLAIN`]
/// program or a client.
fn plain_commands(n: Node<'_>, walk: &Walk<'_>, from: usize, ok: &[String]) -> bool {
    let mut cursor = n.walk();
    loop {
        let k = cursor.node();
        // `$(date)`: its output is only written, its status lost ([`harmless_substitution`]).
        let skip = matches!(k.kind(), "command_substitution") && harmless_substitution(text(k, walk));
        if k.kind() == "command" && k.start_byte() >= from && !plain_command(k, walk, ok) {
            return false;
        }
        if !skip && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.node() == n {
                return true;
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return true;
            }
        }
    }
}

/// Whether the simple command `k` runs a [`PLAIN`] program, a client or one of the functions `ok`.
fn plain_command(k: Node<'_>, walk: &Walk<'_>, ok: &[String]) -> bool {
    let Some(name) = k.child_by_field_name("name").map(|m| text(m, walk)) else {
        return false;
    };
    let program = super::context::basename(name);
    let mut c = k.walk();
    let args: Vec<String> =
        k.children_by_field_name("argument", &mut c).map(|a| text(a, walk).to_string()).collect();
    let client = super::clients::find_client(program, &args).is_some()
        || program.strip_suffix(".exe").is_some_and(|p| super::clients::find_client(p, &args).is_some());
    (PLAIN.contains(&program) || client || ok.iter().any(|f| f == name))
        && !name.contains(['$', '`', '"', '\''])
}

/// Where the last command of the tree whose root is `root` that is not [`plain_command`] (no
/// function taken as harmless) starts, if one is: [`plain_commands`] from a byte for every byte at
/// once (`TreeFacts::last_unplain`, one walk of the tree).
fn last_unplain_start(root: Node<'_>, walk: &Walk<'_>) -> Option<usize> {
    let mut last = None;
    let mut cursor = root.walk();
    'walk: loop {
        let k = cursor.node();
        let skip = matches!(k.kind(), "command_substitution") && harmless_substitution(text(k, walk));
        if k.kind() == "command" && !plain_command(k, walk, &[]) {
            last = last.max(Some(k.start_byte()));
        }
        if !skip && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                continue 'walk;
            }
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    last
}

/// The `for` loop when `list` (`at && right`) is its whole body, `right` is `break`, the loop runs
/// over two or more different literal words, and `at` is a command whose host is the loop's
/// variable (`-h $h`, `--host=$h`, `http://$h/`): `for h in localhost db; do pg_isready -h $h &&
/// break; done` tries each host until one answers, its status the last one's (bash manual,
/// "Looping Constructs"): a check fails it only when every other host failed too, a fallback
/// (bash 5.2 and dash 0.5.12 exit 0 with db down and localhost up, 2 with both down).
fn tries_each_host<'t>(at: Node<'t>, list: Node<'t>, right: Node<'_>, walk: &Walk<'_>) -> Option<Node<'t>> {
    if text(right, walk).trim() != "break" || at.kind() != "command" {
        return None;
    }
    let body = list.parent().filter(|b| b.kind() == "do_group")?;
    let looped = body.parent().filter(|l| l.kind() == "for_statement")?;
    let mut c = body.walk();
    if body.named_children(&mut c).filter(|k| is_statement(*k)).count() != 1 {
        return None;
    }
    let var = text(looped.child_by_field_name("variable")?, walk);
    let mut c = looped.walk();
    let values: Vec<&str> = looped.children_by_field_name("value", &mut c).map(|v| text(v, walk)).collect();
    let plain =
        |v: &&str| v.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b':'));
    let distinct = values.iter().enumerate().all(|(i, v)| !values[..i].contains(v));
    if values.len() < 2 || !values.iter().all(plain) || !distinct || var.is_empty() {
        return None;
    }
    let refs = [format!("${var}"), format!("${{{var}}}")];
    let is_ref = |a: &str| refs.iter().any(|r| a.trim_matches('"') == r);
    let mut c = at.walk();
    let args: Vec<&str> = at.children_by_field_name("argument", &mut c).map(|a| text(a, walk)).collect();
    let host = args.windows(2).any(|w| matches!(w[0], "-h" | "-H" | "--host") && is_ref(w[1]))
        || args.iter().any(|a| {
            a.strip_prefix("--host=").is_some_and(is_ref)
                || refs.iter().any(|r| a.trim_matches('"').contains(&format!("://{r}")))
        });
    host.then_some(looped)
}

/// Whether `n` is a `( )` that would be [`harmless`] but for `exit N` with a literal `N` (which
/// ends only the subshell: `( echo down; exit 1 )`).
fn subshell_only_exits(n: Node<'_>, walk: &Walk<'_>, functions: &Funcs) -> bool {
    if n.kind() != "subshell" {
        return false;
    }
    let t = text(n, walk);
    let words: Vec<&str> = t
        .split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '{' | '}' | '(' | ')'))
        .collect();
    let exits_literal = words
        .windows(2)
        .all(|w| w[0] != "exit" || (!w[1].is_empty() && w[1].bytes().all(|b| b.is_ascii_digit())))
        && words.last() != Some(&"exit");
    // (Each `exit N` read as `exit 0`, the harmless one.)
    let as_zero: String = {
        let mut out = String::with_capacity(t.len());
        let mut rest = t;
        while let Some(i) = rest.find("exit") {
            out.push_str(&rest[..i + 4]);
            rest = &rest[i + 4..];
            let digits = rest.trim_start();
            let skipped = rest.len() - digits.len();
            let end = digits.find(|c: char| !c.is_ascii_digit()).unwrap_or(digits.len());
            if skipped > 0 && end > 0 {
                out.push_str(" 0");
                rest = &digits[end..];
            }
        }
        out.push_str(rest);
        out
    };
    exits_literal
        && harmless_text(&as_zero, &functions.risky)
        && plain_commands(n, walk, n.start_byte(), &functions.ok)
}

/// Whether `n` is [`harmless`] but for writing files or to a closed stdout (`>&-`): it changes
/// nothing the script reads later, but its status can be a failure.
fn may_only_fail(n: Node<'_>, walk: &Walk<'_>, functions: &Funcs) -> bool {
    harmless_writing(text(n, walk), &functions.risky, true)
        && plain_commands(n, walk, n.start_byte(), &functions.ok)
}

/// [`harmless`] on text.
fn harmless_text(t: &str, functions: &[String]) -> bool {
    harmless_writing(t, functions, false)
}

/// [`harmless_text`], or with `writes`, also when it writes files or to a closed stdout.
fn harmless_writing(t: &str, functions: &[String], writes: bool) -> bool {
    let t = &without_harmless_substitutions(t);
    let calls = functions.iter().any(|f| mentions(t, &[f.as_str()]));
    if calls
        || assigning_expansion(t)
        || mentions(t, CHANGES_STATE)
        || mentions(t, NOT_HARMLESS)
        || t.contains(['[', '!', '`'])
        || t.contains("((")
        || t.contains("$(")
    {
        return false;
    }
    let words: Vec<&str> = t
        .split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '{' | '}' | '(' | ')'))
        .collect();
    // `printf -v NAME` assigns (bash): only `printf FORMAT ARGS` writes output alone.
    if words.windows(2).any(|w| w[0] == "printf" && w[1].starts_with('-')) {
        return false;
    }
    // `exit 0` only.
    if words.windows(2).any(|w| w[0] == "exit" && w[1] != "0") || words.last() == Some(&"exit") {
        return false;
    }
    // An assignment (`NAME=...`), a function definition (`f()`), a file written.
    let assigns = words.iter().any(|w| {
        w.split_once('=').is_some_and(|(name, _)| {
            let name = name.trim_end_matches('+');
            !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
    });
    // `echo x >&-` fails (bash: "write error: Bad file descriptor", dash: "I/O error").
    let closes_stdout = t.split_whitespace().any(|w| {
        w.trim_end_matches([';', ')'])
            .split_once(">&-")
            .is_some_and(|(fd, rest)| rest.is_empty() && matches!(fd, "" | "1"))
    });
    !assigns && !t.contains("()") && (writes || (file_targets(t).is_empty() && !closes_stdout))
}

/// Whether text has a `${...}` that assigns (`${S:=down}`, `${S=down}`) or ends a
/// non-interactive shell when the variable is unset or empty (`${S:?}`, `${S?}`) (bash manual,
/// "Shell Parameter Expansion"; bash 5.2 and dash 0.5.12 exit 1 on `pg_isready -h db || :
/// ${S:=down}; [ "$S" != down ]` with the database down).
fn assigning_expansion(t: &str) -> bool {
    t.match_indices("${").any(|(i, _)| {
        let inner = &t[i + 2..];
        let inner = &inner[..inner.find('}').unwrap_or(inner.len())];
        inner.contains(['=', '?'])
    })
}

/// The files a command's text writes: redirections (`>`, `>>`, `&>`, not to `/dev/null` or a file
/// descriptor) and the output options of `curl -o`, `wget -O`, `psql -o`, `--output`.
fn file_targets(t: &str) -> Vec<String> {
    let mut out = Vec::new();
    let words: Vec<&str> = t.split_whitespace().collect();
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        let sink = |target: &str| {
            !(target == "/dev/null"
                || target.starts_with('&')
                || target == "/dev/stderr"
                || target == "/dev/stdout")
        };
        if let Some(pos) = w.find('>') {
            // A control operator ends the word (`>&2;`, `>/dev/null)`): not part of the target.
            let w = w.trim_end_matches([';', ')']);
            let w = if w.len() > pos { w } else { &words[i][..pos + 1] };
            let rest = w[pos..].trim_start_matches(['>', '|']);
            let rest = rest
                .strip_prefix('&')
                .map_or(rest, |r| if r.bytes().all(|b| b.is_ascii_digit() || b == b'-') { "&" } else { r });
            let target = if rest.is_empty() { words.get(i + 1).copied().unwrap_or("") } else { rest };
            if rest.is_empty() {
                i += 1;
            }
            if sink(target) {
                out.push(target.to_string());
            }
        } else if matches!(w, "-o" | "-O" | "--output" | "--output-document" | "--log-file") {
            let target = words.get(i + 1).copied().unwrap_or("");
            if sink(target) {
                out.push(target.to_string());
            }
            i += 1;
        } else if let Some(target) =
            w.strip_prefix("--output=").or_else(|| w.strip_prefix("--output-document="))
            && sink(target)
        {
            out.push(target.to_string());
        } else if w == "tee" {
            out.extend(
                words[i + 1..]
                    .iter()
                    .take_while(|a| !a.contains(['|', ';']))
                    .filter(|a| !a.starts_with('-'))
                    .map(|a| a.to_string()),
            );
        }
        i += 1;
    }
    out
}

/// Whether `n` writes a file that the script names elsewhere, or one whose name the script
/// computes (`> "$F"`): its output may be read later (`remote > f; grep x f`).
fn writes_a_named_file(n: Node<'_>, walk: &Walk<'_>) -> bool {
    let own = text(n, walk);
    file_targets(own).iter().any(|f| {
        named_by_count(f, own, walk) || named_elsewhere(f, walk.src, &[(n.start_byte(), n.end_byte())])
    })
}

/// Whether the last component of file `target` (written by `own`), or its directory's, is a word
/// of the script more often than of `own`: named elsewhere ([`named_elsewhere`]'s words), found
/// from the tree's word counts (`TreeFacts::words`, made once) rather than a copy of the script
/// per write.
fn named_by_count(target: &str, own: &str, walk: &Walk<'_>) -> bool {
    let Some((root, _)) = walk.top_functions.get(walk.tree.get()) else {
        return false;
    };
    let name = unquoted(target);
    let parts: Vec<&str> = name.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    let own = unquoted(own);
    let own_words: Vec<&str> =
        own.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))).collect();
    with_facts(*root, walk, |facts| {
        let words = facts.words.get_or_init(|| {
            let mut counts = std::collections::HashMap::new();
            for w in unquoted(walk.src)
                .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
            {
                *counts.entry(w.to_string()).or_insert(0usize) += 1;
            }
            counts
        });
        parts
            .iter()
            .rev()
            .take(2)
            .any(|p| words.get(*p).copied().unwrap_or(0) > own_words.iter().filter(|w| *w == p).count())
    })
}

/// Whether the file `target` (a redirection's word, as written) may be named by the script
/// outside the byte ranges `own` (the writes themselves), conservatively (break9 A1: `"/tmp/s""9"`,
/// `/tmp/s\9`, `/tmp//s9`, `$D/s9`, `/tmp/s?`, `cd /tmp && grep -q up s9`, `grep -r up /tmp/`
/// all read `/tmp/s9` in bash 5.2 and dash 0.5.12): compared with quotes and backslashes
/// removed (`own`: byte ranges, start and end), it is named elsewhere when its name is computed or a glob, when its last component
/// or its directory's is a word elsewhere, when any other word holds a glob character (`*`, `?`,
/// `[`) or a brace expansion, or when the script changes directory (`cd`, `pushd`, `popd`).
fn named_elsewhere(target: &str, src: &str, own: &[(usize, usize)]) -> bool {
    let unquoted = |t: &str| t.chars().filter(|c| !matches!(c, '"' | '\'' | '\\')).collect::<String>();
    let name = unquoted(target);
    if name.is_empty() || name.contains(['$', '`', '*', '?', '[', '{', '~']) {
        return true;
    }
    let mut rest = String::with_capacity(src.len());
    let mut from = 0;
    let mut ranges = own.to_vec();
    ranges.sort_unstable();
    for (start, end) in ranges {
        rest.push_str(src.get(from..start.max(from)).unwrap_or(""));
        rest.push(' ');
        from = from.max(end);
    }
    rest.push_str(src.get(from..).unwrap_or(""));
    let rest = unquoted(&rest);
    if mentions(&rest, &["cd", "pushd", "popd"])
        || rest.contains(['*', '?', '['])
        || (rest.contains('{') && (rest.contains(',') || rest.contains("..")))
    {
        return true;
    }
    let parts: Vec<&str> = name.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    let words: Vec<&str> =
        rest.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))).collect();
    parts.iter().rev().take(2).any(|p| words.contains(p))
}

/// Kinds whose named children are statements run one after the other.
fn is_list_of_statements(kind: &str) -> bool {
    matches!(kind, "program" | "compound_statement" | "subshell" | "do_group" | "else_clause" | "case_item")
}

/// Whether the statement after `at` reads `at`'s status (`$?`, `${?}`, a bare `exit`, anywhere
/// in it), unless it is `NAME=$?` and `NAME` is then only written out ([`only_echoed`]: bash 5.2
/// and dash 0.5.12 exit 0 on `pg_isready -h db; ret=$?; echo "db $ret"; curl ...` with the
/// database down).
fn next_reads_status(at: Node<'_>, parent: Node<'_>, walk: &Walk<'_>, rules: &Rules) -> bool {
    let next = siblings_after(at, parent).find(|s| is_statement(*s));
    let Some(next) = next.filter(|s| !matches!(s.kind(), "elif_clause" | "else_clause")) else {
        return false;
    };
    if !reads_status_text(text(next, walk)) || status_only_written(next, walk) {
        return false;
    }
    let followed = !rules.called
        && next.kind() == "variable_assignment"
        && next.child_by_field_name("value").is_some_and(|v| last_status_word(text(v, walk)))
        && next.child_by_field_name("name").is_some_and(|name| only_echoed(name, walk));
    !followed
}

/// Whether `next` only writes `$?` out: `echo "exit code $?"` (or `printf` without `-v`,
/// `logger`), with no substitution, no file written and output nothing reads (bash
/// 5.2 and dash 0.5.12 exit 0 on `pg_isready -h db; echo "code $?"; curl ...` with the database
/// down, as on `r=$?; echo "$r"`; break9 B3).
fn status_only_written(next: Node<'_>, walk: &Walk<'_>) -> bool {
    let cmd = match next.kind() {
        "command" => next,
        "redirected_statement" => match next.child_by_field_name("body") {
            Some(b) if b.kind() == "command" => b,
            _ => return false,
        },
        _ => return false,
    };
    let t = text(next, walk);
    let name = cmd.child_by_field_name("name").map(|m| text(m, walk));
    let mut c = cmd.walk();
    let first = cmd.children_by_field_name("argument", &mut c).next().map(|a| text(a, walk));
    let printf_option = name == Some("printf") && first.is_some_and(|a| a.starts_with('-'));
    matches!(name, Some("echo" | "printf" | "logger"))
        && !printf_option
        && !t.contains("$(")
        && !t.contains('`')
        && file_targets(t).is_empty()
        && !t.contains(">&-")
        && !output_used_above(next, walk)
}

/// Whether the variable whose assignment names it at `name` is read only by `echo`, `printf`
/// (not `-v`) or `logger` arguments, as `$NAME` or `${NAME}`, whose output nothing reads (no
/// pipeline, substitution or file named again), and otherwise only assigned again: its value
/// reaches no status.
fn only_echoed(name: Node<'_>, walk: &Walk<'_>) -> bool {
    let var = text(name, walk);
    if var.is_empty()
        || walk.src.contains("${!")
        || mentions(
            walk.src,
            &["export", "declare", "typeset", "readonly", "local", "printenv", "env", "allexport"],
        )
    {
        return false;
    }
    let mut root = name;
    while let Some(p) = root.parent() {
        root = p;
    }
    let mut seen = 0usize;
    let mut ok = true;
    let mut cursor = root.walk();
    'walk: loop {
        let k = cursor.node();
        if k.kind() == "variable_name" && text(k, walk) == var {
            seen += 1;
            ok &= k == name || reads_only_as_output(k, walk);
        }
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                continue 'walk;
            }
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    let words =
        walk.src.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|w| *w == var).count();
    ok && seen == words
}

/// Whether the `variable_name` `k` is `$NAME`/`${NAME}` in an argument of an `echo`, `printf` or
/// `logger` command whose output nothing reads, or the name of another plain assignment.
fn reads_only_as_output(k: Node<'_>, walk: &Walk<'_>) -> bool {
    let Some(exp) = k.parent() else {
        return false;
    };
    if exp.kind() == "variable_assignment" {
        return exp.child_by_field_name("name") == Some(k)
            && exp.parent().is_some_and(|p| is_list_of_statements(p.kind()))
            && exp.child_by_field_name("value").is_none_or(|v| !text(v, walk).contains(['$', '`']));
    }
    let var = text(k, walk);
    if !(exp.kind() == "simple_expansion" || exp.kind() == "expansion")
        || !matches!(text(exp, walk), t if t == format!("${var}") || t == format!("${{{var}}}"))
    {
        return false;
    }
    let mut up = exp;
    while let Some(p) = up.parent() {
        if !matches!(p.kind(), "string" | "concatenation") {
            break;
        }
        up = p;
    }
    let Some(cmd) = up.parent().filter(|c| c.kind() == "command") else {
        return false;
    };
    let name = cmd.child_by_field_name("name").map(|m| text(m, walk));
    let mut c = cmd.walk();
    let first = cmd.children_by_field_name("argument", &mut c).next().map(|a| text(a, walk));
    matches!(name, Some("echo" | "printf" | "logger"))
        && cmd.child_by_field_name("name") != Some(up)
        && !(name == Some("printf") && first.is_some_and(|a| a.starts_with('-')))
        && !output_used_above(cmd, walk)
}

/// `||`'s right side `NAME=literal` (status 0), whose `NAME` the script never names again (bash
/// 5.2 and dash 0.5.12 exit 0 on `pg_isready -h db || DB=down` with the database down; read
/// later, `[ "$DB" = down ] && exit 1`, the outcome flows on). Not a name a program run after it
/// may read from its environment (the script exports nothing: no `export`, `set -a`; the
/// container's `env` does not declare it, and it has no `envFrom`).
fn unread_assignment(right: Node<'_>, walk: &Walk<'_>, rules: &Rules) -> bool {
    if right.kind() != "variable_assignment" {
        return false;
    }
    let (Some(name), value) = (right.child_by_field_name("name"), right.child_by_field_name("value")) else {
        return false;
    };
    let var = text(name, walk);
    let env_like = env_like(var);
    let exports =
        mentions(walk.src, &["export", "declare", "typeset", "readonly", "local", "env", "allexport"])
            || walk
                .src
                .split_whitespace()
                .collect::<Vec<_>>()
                .windows(2)
                .any(|w| w[0] == "set" && w[1].starts_with(['-', '+']) && w[1].contains('a'));
    let words =
        walk.src.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|w| *w == var).count();
    let (declared, env_from) = &rules.container_env;
    !env_like
        && !env_from
        && !declared.iter().any(|d| d == var)
        && !exports
        && words == 1
        && value.is_none_or(|v| !text(v, walk).contains(['$', '`', '(', '[', '*', '?', '~']))
}

/// `export NAME=$(check)` (or `local`, `readonly`, `declare`, `typeset`; `assignment` its
/// `NAME=...`, `decl` the command): the declaration's status is its own, 0 (bash manual, "Bourne
/// Shell Builtins" and "Bash Builtins": the return status is zero unless an invalid option or
/// name is given; bash 5.2 and dash 0.5.12 exit 0 on `set -e; export X=$(pg_isready -h db);
/// pg_isready -h localhost` with the database down). Taken only when the value cannot reach a
/// status: a statement of its own outside loops, `NAME` named nowhere else and not one a client
/// reads from its environment, no indirect reference (`${!`), and every command after it in the
/// tree writes output or is a client (a program run later may read an exported `NAME`: `sh -c
/// '[ -z "${X##*ok*}" ]'` exits 1 / 0). In a function's body (its caller may read it), `local`
/// only.
fn unread_declaration(assignment: Node<'_>, decl: Node<'_>, walk: &Walk<'_>, rules: &Rules) -> bool {
    let Some(name) = assignment.child_by_field_name("name") else {
        return false;
    };
    let var = text(name, walk);
    let keyword = text(decl, walk).split_whitespace().next().unwrap_or("");
    if !matches!(keyword, "export" | "local" | "readonly" | "declare" | "typeset")
        || (rules.called && keyword != "local")
        || !decl.parent().is_some_and(|p| is_list_of_statements(p.kind()))
        || env_like(var)
    {
        return false;
    }
    // (Not in a loop: a command before it may run after it.)
    let mut up = decl.parent();
    while let Some(p) = up {
        if matches!(p.kind(), "for_statement" | "c_style_for_statement" | "while_statement") {
            return false;
        }
        up = p.parent();
    }
    let root = walk.top_functions.get(walk.tree.get()).map_or_else(
        || {
            let mut root = decl;
            while let Some(p) = root.parent() {
                root = p;
            }
            root
        },
        |(r, _)| *r,
    );
    with_facts(root, walk, |facts| {
        let names = facts.names.get_or_init(|| {
            let mut counts = std::collections::HashMap::new();
            for w in walk.src.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
                if !w.is_empty() {
                    *counts.entry(w.to_string()).or_insert(0usize) += 1;
                }
            }
            // (`${!` marked by the empty word.)
            if walk.src.contains("${!") {
                counts.insert(String::new(), 1);
            }
            counts
        });
        // (No indirect reference, `${!`, that may name it.)
        names.get(var) == Some(&1)
            && !names.contains_key("")
            && facts
                .last_unplain
                .get_or_init(|| last_unplain_start(root, walk))
                .is_none_or(|s| s < decl.end_byte())
    })
}

/// Whether a client may read variable `var` from its environment (`PGHOST`, `http_proxy`, ...),
/// by the words in its name.
fn env_like(var: &str) -> bool {
    let upper = var.to_ascii_uppercase();
    ["PG", "MYSQL", "REDIS", "LD_", "BASH", "SHELL", "PS", "ENV"].iter().any(|p| upper.starts_with(p))
        || [
            "HOST", "ADDR", "URL", "PROXY", "PORT", "PATH", "IFS", "HOME", "LANG", "LC_", "TZ", "OPT",
            "CONF", "USER", "PASS", "SERVER", "ENDPOINT",
        ]
        .iter()
        .any(|p| upper.contains(p))
}

/// `if COND; then echo A > F; else echo B > F; fi`: both branches write output to the same file
/// `F` the script names nowhere else, the same way: a write that fails (a read-only root
/// filesystem) fails either branch, so the status does not tell which ran (bash 5.2 and dash
/// 0.5.12 exit 0 with the database down). A branch that writes alone does not qualify.
fn same_writes(cond: Node<'_>, construct: Node<'_>, walk: &Walk<'_>) -> bool {
    if construct.kind() != "if_statement" {
        return false;
    }
    let mut c = construct.walk();
    let kids: Vec<Node<'_>> = construct.children(&mut c).collect();
    if kids.iter().any(|k| k.kind() == "elif_clause") {
        return false;
    }
    let Some(else_clause) = kids.iter().find(|k| k.kind() == "else_clause") else {
        return false;
    };
    let then_at = kids.iter().position(|k| k.kind() == "then");
    let then_part: Vec<Node<'_>> = then_at
        .map(|t| {
            kids[t + 1..]
                .iter()
                .filter(|k| is_statement(**k) && !matches!(k.kind(), "else_clause" | "elif_clause"))
                .copied()
                .collect()
        })
        .unwrap_or_default();
    let mut c = else_clause.walk();
    let else_part: Vec<Node<'_>> = else_clause.named_children(&mut c).filter(|k| is_statement(*k)).collect();
    let ([a], [b]) = (then_part.as_slice(), else_part.as_slice()) else {
        return false;
    };
    if cond.start_byte() >= a.start_byte() {
        return false;
    }
    let write = |k: Node<'_>| -> Option<(String, String)> {
        if k.kind() != "redirected_statement" {
            return None;
        }
        let body = k.child_by_field_name("body").filter(|b| b.kind() == "command")?;
        let name = text(body.child_by_field_name("name")?, walk);
        let mut c = body.walk();
        let args: Vec<&str> =
            body.children_by_field_name("argument", &mut c).map(|a| text(a, walk)).collect();
        if !matches!(name, "echo" | "printf")
            || args.first().is_some_and(|a| a.starts_with('-'))
            || args.iter().any(|a| a.contains(['$', '`']))
        {
            return None;
        }
        let mut c = k.walk();
        let redirects: Vec<Node<'_>> = k.children_by_field_name("redirect", &mut c).collect();
        let [r] = redirects.as_slice() else {
            return None;
        };
        let target = text(r.child_by_field_name("destination")?, walk);
        let op = text(*r, walk).strip_suffix(target)?.trim();
        (matches!(op, ">" | ">>") && !target.contains(['$', '`', '*', '?', '&', '"', '\'']))
            .then(|| (op.to_string(), target.to_string()))
    };
    let (Some(wa), Some(wb)) = (write(*a), write(*b)) else {
        return false;
    };
    wa == wb
        && !named_elsewhere(
            &wa.1,
            walk.src,
            &[(a.start_byte(), a.end_byte()), (b.start_byte(), b.end_byte())],
        )
        && !reads_status_text(text(construct, walk))
}

/// The options followed where they are set (`set -e`, `set -o pipefail`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Opt {
    Errexit,
    Pipefail,
}

/// The subshell `k` runs in, nearest first: a `( )`, a substitution, a pipeline's element or a
/// command in the background; `None`: the script's own shell.
fn shell_of(k: Node<'_>) -> Option<Node<'_>> {
    let mut at = k;
    loop {
        if at.next_sibling().is_some_and(|s| s.kind() == "&") {
            return Some(at);
        }
        let p = at.parent()?;
        if matches!(p.kind(), "subshell" | "command_substitution" | "process_substitution" | "pipeline") {
            return Some(p);
        }
        at = p;
    }
}

/// Whether `outer` is `inner` or one of its ancestors.
fn contains(outer: Node<'_>, inner: Node<'_>) -> bool {
    let mut at = Some(inner);
    while let Some(k) = at {
        if k == outer {
            return true;
        }
        at = k.parent();
    }
    false
}

/// Whether option `opt` is on when `n` runs: set by a `set` command (`set -e`, `-eu`, `-o errexit`,
/// `set -o pipefail`, `-euo pipefail`) that runs before it in its shell or a shell it inherits
/// from (not in a `( )` that `n` is not in, not after it unless a loop runs both, not in a function
/// that is never called), and not turned off since by a `set +e`/`set +o NAME` that certainly runs.
/// An option named otherwise (`shopt -o`, `SHELLOPTS`, a computed `set` word) counts as on. dash
/// 0.5.12 has no pipefail (`set -o pipefail` ends its script with status 2): on either way.
fn option_on_at(n: Node<'_>, root: Node<'_>, walk: &Walk<'_>, opt: Opt, start: bool) -> bool {
    with_facts(root, walk, |tree| {
        let facts = match opt {
            Opt::Errexit => &tree.errexit,
            Opt::Pipefail => &tree.pipefail,
        };
        // (A `set` word the walk does not read as a `set` command, `command set -e`, `\set -e`,
        // counts as on: break9 A3/A8.)
        if facts.forced || facts.words > facts.named || tree.set_words > tree.sets_read {
            return true;
        }
        work(walk, facts.sets.len());
        let mut effects: Vec<(usize, bool, bool)> = Vec::new();
        for set in &facts.sets {
            if set.shell.is_none_or(|s| contains(s, n)) {
                if set.on && set.loops.iter().any(|p| contains(*p, n)) {
                    return true;
                }
                if set.node.end_byte() <= n.start_byte() {
                    effects.push((set.node.start_byte(), set.on, set.certain));
                }
            }
        }
        // (errexit or pipefail from the shell's flags or a `#!` line: on until a `set +e` that
        // certainly runs, break9 B1.)
        let mut state = start;
        effects.sort_unstable();
        for (_, on, certain) in effects {
            if on {
                state = true;
            } else if certain {
                state = false;
            }
        }
        state
    })
}

/// What [`option_on_at`] reads of a whole tree for one option, whatever the command asked about.
#[derive(Default)]
struct OptFacts<'t> {
    /// How many times the script's text names the option (`errexit`, `pipefail`) as a word.
    words: usize,
    /// How many of those are a `set` command's argument.
    named: usize,
    /// A `set` in a function called more than once turns it on (counts as on everywhere).
    forced: bool,
    /// The other `set` commands that turn it on or off, in the tree's order.
    sets: Vec<SetFact<'t>>,
}

/// A `set` command outside functions that turns an option on or off.
struct SetFact<'t> {
    node: Node<'t>,
    on: bool,
    /// The subshell it runs in ([`shell_of`]).
    shell: Option<Node<'t>>,
    /// It certainly runs when its shell does (only lists and `{ }` around it, up to its shell).
    certain: bool,
    /// The loops around it (a command in one of them runs after it the next time round).
    loops: Vec<Node<'t>>,
}

/// What `status::discarded` reads of a whole tree, made once per tree (`Walk::tree_facts`).
pub(super) struct TreeFacts<'t> {
    errexit: OptFacts<'t>,
    pipefail: OptFacts<'t>,
    /// How many words of the text are `set` once quotes and backslashes are taken out
    /// (`\set`, `'set'`, `s\et`) where a command starts ([`command_words`]; all of them when a
    /// command's name is computed).
    set_words: usize,
    /// How many `set` commands the walk reads ([`set_command`]).
    sets_read: usize,
    /// [`exec_only_last`].
    exec_only_last: bool,
    /// A function body in the tree reads a status ([`status_reads_placed`]).
    body_reads_status: bool,
    /// The `for` loops whose text reads a status ([`status_reads_placed`]).
    status_loops: Vec<Node<'t>>,
    /// The tree has a substitution, a pipeline or a redirection ([`output_used_above`]).
    output_users: bool,
    /// A function definition in the tree [`leaves_state`] (`flow`'s
    /// `calls_a_function_with_effects`).
    defines_stateful: bool,
    /// The known functions harmless to call ([`known_ok`]; the walk's `Rules` are the same for
    /// every tree).
    known_ok: std::cell::OnceCell<Vec<String>>,
    /// How many times each word is in the script's text, quotes and backslashes taken out
    /// ([`named_by_count`]), made when first asked for.
    words: std::cell::OnceCell<std::collections::HashMap<String, usize>>,
    /// How many times each word of letters, digits and `_` is in the script's text
    /// ([`unread_declaration`]), made when first asked for.
    names: std::cell::OnceCell<std::collections::HashMap<String, usize>>,
    /// [`last_unplain_start`], made when first asked for.
    last_unplain: std::cell::OnceCell<Option<usize>>,
}

/// The [`TreeFacts`] of the tree whose root is `root`, given to `f`: kept in `Walk::tree_facts`
/// for the tree being walked.
fn with_facts<R>(root: Node<'_>, walk: &Walk<'_>, f: impl FnOnce(&TreeFacts<'_>) -> R) -> R {
    let i = walk.tree.get();
    match (walk.top_functions.get(i), walk.tree_facts.get(i)) {
        (Some((r, _)), Some(cell)) if r.id() == root.id() => f(cell.get_or_init(|| tree_facts(*r, walk))),
        _ => f(&tree_facts(root, walk)),
    }
}

/// The [`TreeFacts`] of the tree whose root is `root`: one walk of its nodes, one of its text.
fn tree_facts<'t>(root: Node<'t>, walk: &Walk<'_>) -> TreeFacts<'t> {
    let mut errexit = OptFacts::default();
    let mut pipefail = OptFacts::default();
    let mut sets_read = 0usize;
    let mut body_reads_status = false;
    let mut status_loops = Vec::new();
    let mut output_users = false;
    let mut defines_stateful = false;
    // (A text that reads no status has no function or loop that does.)
    let reads = reads_status_text(walk.src);
    // (The nodes looked for need words in the text: `set`, a definition's `(` or `function`, a
    // `|`, `<`, `>` or substitution; a text with none is not walked.)
    let src = walk.src;
    let uses_output = src.contains(['|', '<', '>', '`']) || src.contains("$(");
    let walked = reads || uses_output || src.contains("set") || src.contains('(') || src.contains("function");
    let mut cursor = root.walk();
    'walk: loop {
        if !walked {
            break;
        }
        let k = cursor.node();
        match k.kind() {
            "function_definition" => {
                if reads && !body_reads_status && reads_status_text(text(k, walk)) {
                    body_reads_status = true;
                }
                if !defines_stateful && leaves_state(text(k, walk)) {
                    defines_stateful = true;
                }
            }
            "for_statement" | "c_style_for_statement" if reads && reads_status_text(text(k, walk)) => {
                status_loops.push(k);
            }
            "command_substitution" | "process_substitution" | "pipeline" | "redirected_statement" => {
                output_users = true;
            }
            _ => {}
        }
        if set_command(k, walk) {
            sets_read += 1;
            for (opt, facts) in [(Opt::Errexit, &mut errexit), (Opt::Pipefail, &mut pipefail)] {
                set_facts(k, walk, opt, facts);
            }
        }
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                continue 'walk;
            }
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    // (One pass over the text's words for both options and `exec`, when it has one of them.)
    let mut execs = 0usize;
    let words = src.contains("errexit") || src.contains("pipefail") || src.contains("exec");
    if words {
        for w in src.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')) {
            match w {
                "errexit" => errexit.words += 1,
                "pipefail" => pipefail.words += 1,
                "exec" => execs += 1,
                _ => {}
            }
        }
    }
    // (`set` where a command starts, however it is spelt, and any word `set` when a command's name
    // is computed: `f=set; $f -e`.)
    let set_words = if maybe_set(src) {
        let words = command_words(src);
        let computed = words.iter().any(|(w, at_start)| *at_start && w.contains(['$', '`']));
        let any_set = || {
            src.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '"' | '\'' | '\\')))
                .any(|w| w.chars().filter(|c| !matches!(c, '"' | '\'' | '\\')).eq("set".chars()))
        };
        if computed && any_set() {
            usize::MAX
        } else {
            words.iter().filter(|(w, at_start)| *at_start && unquoted(w) == "set").count()
        }
    } else {
        0
    };
    TreeFacts {
        errexit,
        pipefail,
        set_words,
        sets_read,
        exec_only_last: exec_only_last_of(root, walk, execs),
        body_reads_status,
        status_loops,
        output_users,
        defines_stateful,
        known_ok: std::cell::OnceCell::new(),
        last_unplain: std::cell::OnceCell::new(),
        words: std::cell::OnceCell::new(),
        names: std::cell::OnceCell::new(),
    }
}

/// Whether a function definition in the tree being walked (whose root is `root`) leaves state
/// its caller reads ([`leaves_state`]), read once per tree.
pub(super) fn defines_stateful_function(root: Node<'_>, walk: &Walk<'_>) -> bool {
    match walk.top_functions.get(walk.tree.get()) {
        Some((r, _)) => with_facts(*r, walk, |facts| facts.defines_stateful),
        None => with_facts(root, walk, |facts| facts.defines_stateful),
    }
}

/// Whether `k` is a `set` command (looked at by [`option_on_at`]).
fn set_command(k: Node<'_>, walk: &Walk<'_>) -> bool {
    k.kind() == "command" && k.child_by_field_name("name").is_some_and(|m| text(m, walk) == "set")
}

/// Adds what the `set` command `k` does to option `opt` to `facts`.
fn set_facts<'t>(k: Node<'t>, walk: &Walk<'_>, opt: Opt, facts: &mut OptFacts<'t>) {
    let word = match opt {
        Opt::Errexit => "errexit",
        Opt::Pipefail => "pipefail",
    };
    let mut c = k.walk();
    let args: Vec<&str> = k.children_by_field_name("argument", &mut c).map(|a| text(a, walk)).collect();
    let mut sets: Option<bool> = None;
    for (i, a) in args.iter().enumerate() {
        if a.contains(['$', '`', '"', '\'', '\\']) {
            sets = Some(true);
            continue;
        }
        if *a == word {
            facts.named += 1;
        }
        let Some(letters) = a.strip_prefix('-').or_else(|| a.strip_prefix('+')) else {
            continue;
        };
        if letters.is_empty() || letters.starts_with('-') {
            break;
        }
        let on = a.starts_with('-');
        if (opt == Opt::Errexit && letters.contains('e'))
            || (letters.contains('o') && args.get(i + 1) == Some(&word))
        {
            sets = Some(on || sets == Some(true));
        }
    }
    let Some(on) = sets else {
        return;
    };
    let mut func = None;
    let mut up = k.parent();
    while let Some(p) = up {
        if p.kind() == "function_definition" {
            func = p.child_by_field_name("name").map(|m| text(m, walk));
        }
        up = p.parent();
    }
    if let Some(f) = func {
        if on && !facts.forced {
            let calls = walk
                .src
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
                .filter(|w| *w == f)
                .count();
            facts.forced = calls > 1;
        }
        return;
    }
    let shell = shell_of(k);
    let mut loops = Vec::new();
    let mut up = k.parent();
    while let Some(p) = up {
        if matches!(p.kind(), "for_statement" | "c_style_for_statement" | "while_statement") {
            loops.push(p);
        }
        up = p.parent();
    }
    let mut certain = true;
    let mut up = k.parent();
    while let Some(p) = up {
        if shell.is_some_and(|s| s == p) {
            break;
        }
        certain &= matches!(p.kind(), "program" | "compound_statement");
        up = p.parent();
    }
    facts.sets.push(SetFact { node: k, on, shell, certain, loops });
}

/// Whether the script's only `exec` is its last statement, running a program (`exec CMD`:
/// the shell is replaced and the script's status is CMD's, bash manual "Bourne Shell Builtins"),
/// or it has none.
fn exec_only_last(root: Node<'_>, walk: &Walk<'_>) -> bool {
    with_facts(root, walk, |facts| facts.exec_only_last)
}

/// [`exec_only_last`], where the script's text has `count` words `exec`.
fn exec_only_last_of(root: Node<'_>, walk: &Walk<'_>, count: usize) -> bool {
    if count == 0 {
        return true;
    }
    let count = count - redirecting_execs(root, walk);
    if count == 0 {
        return true;
    }
    let mut c = root.walk();
    let Some(last) = root.named_children(&mut c).filter(|k| is_statement(*k)).last() else {
        return false;
    };
    count == 1
        && last.kind() == "command"
        && last.child_by_field_name("name").is_some_and(|m| text(m, walk) == "exec")
        && {
            let mut c = last.walk();
            last.children_by_field_name("argument", &mut c)
                .next()
                .is_some_and(|a| !text(a, walk).starts_with('-'))
        }
}

/// How many `exec` commands in the tree run no program and only redirect to a file descriptor or
/// to `/proc/1/fd/N` (`exec 2>&1`, `exec >>/proc/1/fd/1 2>&1`): they change no status (bash 5.2
/// and dash 0.5.12 exit 0 on `exec 2>&1; pg_isready -h db || echo down; curl ...` with the
/// database down; break9 B2).
fn redirecting_execs(root: Node<'_>, walk: &Walk<'_>) -> usize {
    let to_fd = |r: Node<'_>| {
        let t = text(r, walk).trim_start_matches(|c: char| c.is_ascii_digit());
        let dest = t.trim_start_matches(['>', '<', '&', '|']).trim();
        (!dest.is_empty() && dest.bytes().all(|b| b.is_ascii_digit()))
            || dest
                .strip_prefix("/proc/1/fd/")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    let mut found = 0;
    let mut stack = vec![root];
    while let Some(k) = stack.pop() {
        let mut c = k.walk();
        if k.kind() == "command" && k.child_by_field_name("name").is_some_and(|m| text(m, walk) == "exec") {
            let mut c = k.walk();
            let args = k.children_by_field_name("argument", &mut c).count();
            let mut c = k.walk();
            let mut redirects: Vec<Node<'_>> = k.children_by_field_name("redirect", &mut c).collect();
            if let Some(p) = k.parent().filter(|p| p.kind() == "redirected_statement") {
                let mut c = p.walk();
                redirects.extend(p.children_by_field_name("redirect", &mut c));
            }
            if args == 0 && !redirects.is_empty() && redirects.iter().all(|r| to_fd(*r)) {
                found += 1;
            }
        }
        stack.extend(k.named_children(&mut c));
    }
    found
}

/// Whether no status is read where the walk does not look: no function body reads one (it may
/// run right after `n`), and no loop around `n` reads one in its body (the next time round).
fn status_reads_placed(n: Node<'_>, root: Node<'_>, walk: &Walk<'_>) -> bool {
    with_facts(root, walk, |facts| {
        !facts.body_reads_status && !facts.status_loops.iter().any(|p| contains(*p, n))
    })
}

/// A command substitution (`$(...)` or backquotes, as written) that runs one command that only
/// reads: `date` (not `-s`/`--set`), `hostname` with no argument but an option that prints,
/// `cat FILE...`, `uname`, `whoami`, `id`, `pwd`. Written out by `echo`/`printf`/`logger`, its
/// status is lost and it changes nothing (`pg_isready -h db || echo "down at $(date)"`: bash 5.2
/// and dash 0.5.12 exit 0 with the database down).
fn harmless_substitution(t: &str) -> bool {
    let inner = t
        .strip_prefix("$(")
        .and_then(|r| r.strip_suffix(')'))
        .or_else(|| t.strip_prefix('`').and_then(|r| r.strip_suffix('`')));
    let Some(inner) = inner else {
        return false;
    };
    if inner.contains(['$', '`', '(', ')', ';', '&', '|', '<', '>', '\n', '\\', '"', '\'', '*', '?', '[']) {
        return false;
    }
    let words: Vec<&str> = inner.split_whitespace().collect();
    let Some((name, args)) = words.split_first() else {
        return false;
    };
    match *name {
        "date" => args.iter().all(|a| {
            a.starts_with('+')
                || matches!(*a, "-u" | "-R" | "--utc" | "--rfc-email")
                || a.starts_with("-I")
                || a.starts_with("--iso-8601")
        }),
        "hostname" => {
            args.iter().all(|a| matches!(*a, "-f" | "-i" | "-I" | "-s" | "-d" | "-A" | "--fqdn" | "--short"))
        }
        "cat" => !args.is_empty() && args.iter().all(|a| !a.starts_with('-')),
        "uname" | "id" => args.iter().all(|a| a.starts_with('-')),
        "whoami" | "pwd" => args.is_empty(),
        _ => false,
    }
}

/// `t` with each [`harmless_substitution`] replaced by a plain word.
fn without_harmless_substitutions(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    let mut rest = t;
    loop {
        let dollar = rest.find("$(");
        let tick = rest.find('`');
        let (at, close) = match (dollar, tick) {
            (Some(d), Some(b)) if b < d => (b, rest[b + 1..].find('`').map(|e| b + 1 + e + 1)),
            (Some(d), _) => (d, rest[d..].find(')').map(|e| d + e + 1)),
            (None, Some(b)) => (b, rest[b + 1..].find('`').map(|e| b + 1 + e + 1)),
            (None, None) => break,
        };
        let Some(end) = close else {
            break;
        };
        out.push_str(&rest[..at]);
        if harmless_substitution(&rest[at..end]) {
            out.push_str("SUBST");
        } else {
            out.push_str(&rest[at..end]);
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Whether every command of a function body's text (`{ echo "$@" >&2; }`) runs a [`PLAIN`]
/// program: [`plain_commands`] on text, for a body defined outside the text being walked.
fn plain_text_commands(body: &str) -> bool {
    let inner = body.trim().strip_prefix('{').and_then(|b| b.strip_suffix('}'));
    let Some(inner) = inner else {
        return false;
    };
    if inner.contains(['(', ')', '{', '}', '`', '\\']) {
        return false;
    }
    inner
        .split([';', '\n', '&', '|'])
        .all(|segment| segment.split_whitespace().next().is_none_or(|w| PLAIN.contains(&w) && w != "exit"))
}

/// Whether a function's text can end the script (`exit`, `exec`) or leave state its caller reads:
/// an assignment, a file written, a builtin that changes the shell (`read`, `export`, `set`, `cd`,
/// `printf -v`, ...), a file changed (`rm`, `touch`, ...).
pub(super) fn leaves_state(body: &str) -> bool {
    let words: Vec<&str> = body
        .split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '{' | '}' | '(' | ')' | '`'))
        .collect();
    let assigns = words.iter().any(|w| {
        w.split_once('=').is_some_and(|(name, _)| {
            let name = name.trim_end_matches('+');
            !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
    });
    assigns
        || assigning_expansion(body)
        || mentions(body, CHANGES_STATE)
        || mentions(body, ENDS_OR_UNFOLLOWED)
        || body.contains("printf -v")
        || words.contains(&".")
        || !file_targets(body).is_empty()
}
