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
//! Checked against bash 5.2.15 and dash 0.5.12 with stubs of `pg_isready`/`nc` exiting 1 and 0
//! (`tests/shell_flow.rs`, `a_check_whose_status_is_discarded_is_a_warning`). Anything this walk
//! does not understand keeps the command coupled (today's verdict): it only ever turns a denial
//! into a warning where the status is certainly not used.

use tree_sitter::Node;

use super::flow::mentions;
use super::shell::Walk;

/// What the script's text allows the walk to conclude: `None` when something in it can read a
/// status the walk does not follow (`$?`, `PIPESTATUS`, a bare `exit`/`return` or one with a
/// computed status, `trap`, `wait`, `eval`, `exec`, `source`/`.`, `kill`, a `while`/`until` loop,
/// which can wait on the dependency until the probe times out, `coproc`, `lastpipe`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Rules {
    /// `set -e`, `set -o errexit`, `#!/bin/sh -e` or the shell's own `-e` (anywhere: a crude scan
    /// that can only keep a command coupled).
    pub(super) errexit: bool,
    /// The script mentions `pipefail`: every command of a pipeline may give its status.
    pub(super) pipefail: bool,
    /// The shell functions the script may call (defined in it or before it): a call of one may
    /// run anything (`f() { exit 1; }`), so it is never taken as harmless.
    pub(super) functions: Vec<String>,
}

/// The [`Rules`] of script text `src` run by a shell whose options (or whose caller, for a
/// function's body) turn errexit (`errexit`) or pipefail (`pipefail`) on, where the functions
/// `known` are defined.
pub(super) fn rules(src: &str, errexit: bool, pipefail: bool, known: &[(String, String)]) -> Option<Rules> {
    if src.contains("$?")
        || src.contains("${?")
        || src.contains("PIPESTATUS")
        || mentions(
            src,
            &[
                "trap", "wait", "eval", "exec", "source", "kill", "while", "until", "coproc", "lastpipe",
                "select",
            ],
        )
    {
        return None;
    }
    if src.split_whitespace().any(|w| w == ".") {
        return None;
    }
    // `exit`/`return` with a literal status only (a bare one gives the last command's status).
    let tokens =
        src.split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '{' | '}' | '`'));
    // (A script that does not hold the names has no such word: its tokens are not looked at.)
    let names_a_status = src.contains("exit") || src.contains("return");
    let statuses_literal = !names_a_status
        || tokens.clone().zip(tokens.skip(1)).all(|(w, status)| {
            !matches!(w, "exit" | "return")
                || (!status.is_empty() && status.bytes().all(|b| b.is_ascii_digit()))
        });
    let ends_with_exit = src.trim_end().ends_with("exit") || src.trim_end().ends_with("return");
    if !statuses_literal || ends_with_exit {
        return None;
    }
    let mut functions: Vec<String> = known.iter().map(|(name, _)| name.clone()).collect();
    functions.extend(defined_functions(src));
    Some(Rules {
        errexit: errexit || sets_errexit(src),
        pipefail: pipefail || mentions(src, &["pipefail"]),
        functions,
    })
}

/// The names of the functions `src` defines (`name() ...`, `function name ...`), at the start of
/// a line or after `;`, `&`, `|`, `{` (as `script::defines_function` finds them).
fn defined_functions(src: &str) -> Vec<String> {
    let mut out = Vec::new();
    // (A definition holds `()` or `function `: a script without either has none.)
    if !src.contains("()") && !src.contains("function ") {
        return out;
    }
    for segment in src.split(['\n', ';', '&', '|', '{']) {
        let seg = segment.trim_start();
        let seg = seg.strip_prefix("function ").map_or(seg, str::trim_start);
        let end =
            seg.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')).unwrap_or(seg.len());
        if end > 0
            && (segment.trim_start().starts_with("function ") || seg[end..].trim_start().starts_with("()"))
        {
            out.push(seg[..end].to_string());
        }
    }
    out
}

/// Whether the script turns errexit on: `set -e`/`set -eu`/`set -o errexit`, or a `#!` line with
/// `-e`.
pub(super) fn sets_errexit(script: &str) -> bool {
    let words = script.split_whitespace();
    let set_e = script.contains("set")
        && words
            .clone()
            .zip(words.skip(1))
            .any(|(set, flags)| set == "set" && flags.starts_with(['-', '+']) && flags.contains('e'));
    let shebang_e = script.strip_prefix("#!").is_some_and(|l| {
        l.lines()
            .next()
            .unwrap_or("")
            .split_whitespace()
            .skip(1)
            .any(|w| w.starts_with('-') && w.contains('e'))
    });
    set_e || shebang_e || mentions(script, &["errexit"])
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
    let mut child = at;
    while let Some(parent) = child.parent() {
        match parent.kind() {
            "command_substitution" | "process_substitution" => return true,
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
    let funcs = functions_at(n, walk, rules);
    let mut at = n;
    // errexit does not apply to `at`'s failure (one of its exceptions was passed).
    let mut exempt = false;
    loop {
        let parent = at.parent()?;
        match parent.kind() {
            "program" | "compound_statement" | "subshell" | "do_group" | "case_item" | "else_clause"
            | "if_statement" | "elif_clause" => {
                if matches!(parent.kind(), "if_statement" | "elif_clause") && in_condition(at, parent) {
                    if !last_statement(at) {
                        return Some((NOT_LAST, at));
                    }
                    // errexit ignores a condition; the condition only chooses a branch.
                    let construct = if parent.kind() == "elif_clause" { parent.parent()? } else { parent };
                    return selection_is_harmless(at, construct, walk, &funcs).then_some((CONDITION, at));
                }
                if matches!(parent.kind(), "case_item") && !in_case_body(at, parent) {
                    return None;
                }
                if at.next_sibling().is_some_and(|s| s.kind() == "&") {
                    // Run in the background (only a script without `wait` gets here).
                    return Some((BACKGROUND, at));
                }
                if !last_statement(at) {
                    return (!rules.errexit || exempt).then_some((NOT_LAST, at));
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
                match op {
                    "||" if !redirected && harmless(right, walk, &funcs) && !leaves(right, walk) => {
                        return Some((OR_ELSE, parent));
                    }
                    // B only writes, but the write can fail (`|| echo down >> /var/log/x`, `>&-`):
                    // the list's status is B's, followed further up (`; curl ...` replaces it),
                    // and errexit applies to it.
                    "||" if may_only_fail(right, walk, &funcs) && !leaves(right, walk) => {
                        exempt = false;
                        at = parent;
                    }
                    "||" => return None,
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
                if last != at && !rules.pipefail {
                    // Its status is gone, but the commands after it read its output.
                    let mut c = parent.walk();
                    let after: Vec<Node<'_>> =
                        parent.named_children(&mut c).filter(|k| k.start_byte() > at.start_byte()).collect();
                    if after.iter().all(|k| trivial_reader(*k, walk)) {
                        return Some((PIPED_AWAY, parent));
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
            "command_substitution" if !rules.errexit || exempt || last_statement(at) => {
                let mut up = parent.parent()?;
                while matches!(up.kind(), "string" | "concatenation") {
                    up = up.parent()?;
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
        Some((root, table)) => {
            debug_assert_eq!(root.id(), root_of_n().id(), "a command of the tree being walked");
            table.get_or_init(|| top_functions(*root, walk, rules))
        }
        None => {
            own = top_functions(root_of_n(), walk, rules);
            &own
        }
    };
    let ok: Vec<String> =
        table.iter().filter(|f| f.harmless && f.end <= n.start_byte()).map(|f| f.name.clone()).collect();
    Funcs { risky: rules.functions.iter().filter(|f| !ok.contains(f)).cloned().collect(), ok }
}

const NOT_LAST: &str = "its exit status is not used (a later command's status is the script's)";
const BACKGROUND: &str = "it runs in the background (`&`)";
const OR_ELSE: &str = "its failure only runs the command after `||`, which does not fail by itself and whose status is the script's";
const CONDITION: &str = "its status only chooses which branch runs, and no branch fails by itself";
const ECHOED: &str = "its output is only written (`echo \"$(...)\"`), its status lost";
const PIPED_AWAY: &str = "its pipeline's status is another command's (`| true`)";

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
fn last_statement(at: Node<'_>) -> bool {
    let mut next = at.next_sibling();
    while let Some(s) = next {
        if is_statement(s) && !matches!(s.kind(), "elif_clause" | "else_clause") {
            return false;
        }
        if !s.is_named()
            && matches!(s.kind(), "then" | "fi" | "done" | "}" | ")" | ";;" | ";&" | ";;&" | "esac")
        {
            return true;
        }
        next = s.next_sibling();
    }
    true
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
const PLAIN: &[&str] = &["echo", "printf", ":", "true", "exit", "logger"];

/// Whether every simple command in `n` that starts at or after byte `from` runs a [`PLAIN`]
/// program or a client.
fn plain_commands(n: Node<'_>, walk: &Walk<'_>, from: usize, ok: &[String]) -> bool {
    let mut cursor = n.walk();
    loop {
        let k = cursor.node();
        if k.kind() == "command" && k.start_byte() >= from {
            let Some(name) = k.child_by_field_name("name").map(|m| text(m, walk)) else {
                return false;
            };
            let program = super::context::basename(name);
            let mut c = k.walk();
            let args: Vec<String> =
                k.children_by_field_name("argument", &mut c).map(|a| text(a, walk).to_string()).collect();
            let client = super::clients::find_client(program, &args).is_some()
                || program
                    .strip_suffix(".exe")
                    .is_some_and(|p| super::clients::find_client(p, &args).is_some());
            if !(PLAIN.contains(&program) || client || ok.iter().any(|f| f == name))
                || name.contains(['$', '`', '"', '\''])
            {
                return false;
            }
        }
        if cursor.goto_first_child() {
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
    const STATEFUL: &[&str] = &[
        "false",
        "return",
        "test",
        "set",
        "shift",
        "unset",
        "export",
        "read",
        "readarray",
        "mapfile",
        "declare",
        "typeset",
        "local",
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
        "break",
        "continue",
        "function",
    ];
    let calls = functions.iter().any(|f| mentions(t, &[f.as_str()]));
    if calls || mentions(t, STATEFUL) || t.contains(['[', '!', '`']) || t.contains("((") || t.contains("$(") {
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
        let name = f.trim_matches(['"', '\'']);
        name.is_empty()
            || name.contains(['$', '`', '*', '?'])
            || walk.src.matches(name).count() > own.matches(name).count()
    })
}
