//! Constructs the exit-status walk reads beyond lists, pipelines and conditions (issue #10, the
//! session-10 break-it pass): a declaration's own status (`export X=$(...)`), a subshell that
//! errexit or `exit` ends, a loop that tries each host until one answers, a `while` loop the check
//! ends, bare `wait`s, an expansion that
//! assigns or fails (`${S:=x}`, `${S:?}`), and the tree's word counts that tell whether a file
//! written is named again. Each checked against bash 5.2.15 and dash 0.5.12 (`tests/shell_flow.rs`).

use crate::engine::exec::kinds::KindName;
use tree_sitter::Node;

use super::super::clients::{Positional, find_client};
use super::super::context::basename;
use super::super::flow::mentions;
use super::super::shell::Walk;
use super::harmless::{
    call_words, harmless, harmless_after, harmless_substitution, harmless_text, named_directories,
    naming_words, next_reads_status, plain_command, plain_commands, plain_text_commands, reads_only_output,
    reads_status_text, without_harmless_substitutions,
};
use super::options::{unquoted, with_facts};
use super::{
    Funcs, Rules, each_node_pruned, in_condition, is_list_of_statements, is_statement, siblings_after, text,
    work, work_text,
};
use crate::engine::hosts::is_local;

/// The `( )` that errexit ends when `at`, a statement of `parent` that is not its last, fails:
/// the nearest subshell around it with only `{ }` groups between (a group that is a pipeline's
/// element is a subshell), where every statement the
/// failure skips (after `at`, to the end of the subshell) is [`harmless`] and reads no status.
pub(super) fn errexit_ends_subshell<'t>(
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
        match list.kind_name() {
            "subshell" => return Some(list),
            "compound_statement" => {
                let up = list.parent()?;
                if up.kind_name() == "pipeline" {
                    // An element of a pipeline runs in a subshell of its own (bash manual,
                    // "Pipelines"): `set -e; { check; true; } | cat` goes on.
                    return Some(list);
                }
                child = list;
                list = up;
                if !matches!(list.kind_name(), "subshell" | "compound_statement") {
                    return None;
                }
            }
            _ => return None,
        }
    }
}

/// Whether `construct`, an `if` whose condition the check ends, is the whole body of a `for` loop
/// and only leaves it: no `elif`/`else`, its branch `break` or `continue` alone, and the loop's
/// variable named nowhere outside the loop. The `if`'s status is 0 whether its condition fails (no
/// branch runs) or succeeds (the loop ends or goes on, 0), so each round's is, and the loop's
/// (bash 5.2 and dash 0.5.12 exit 0 on `for h in db db2; do if pg_isready -h $h; then break; fi;
/// done` with both down); which round it stops at is seen only in the variable.
pub(super) fn only_leaves_its_loop(construct: Node<'_>, walk: &Walk<'_>) -> bool {
    if construct.kind_name() != "if_statement" {
        return false;
    }
    let mut c = construct.walk();
    let kids: Vec<Node<'_>> = construct.children(&mut c).collect();
    if kids.iter().any(|k| matches!(k.kind_name(), "elif_clause" | "else_clause")) {
        return false;
    }
    let Some(then) = kids.iter().position(|k| k.kind_name() == "then") else {
        return false;
    };
    let branch: Vec<&Node<'_>> = kids[then + 1..].iter().filter(|k| is_statement(**k)).collect();
    if branch.len() != 1 || !matches!(text(*branch[0], walk).trim(), "break" | "continue") {
        return false;
    }
    let Some(body) = construct.parent().filter(|b| b.kind_name() == "do_group") else {
        return false;
    };
    let Some(looped) = body.parent().filter(|l| l.kind_name() == "for_statement") else {
        return false;
    };
    let mut c = body.walk();
    if body.named_children(&mut c).filter(|k| is_statement(*k)).count() != 1 {
        return false;
    }
    let Some(var) = looped.child_by_field("variable").map(|v| text(v, walk)) else {
        return false;
    };
    let (before, after) =
        (walk.src.get(..looped.start_byte()).unwrap_or(""), walk.src.get(looped.end_byte()..).unwrap_or(""));
    !var.is_empty() && !mentions(before, &[var]) && !mentions(after, &[var])
}

/// The `for` loop when `list` (`at && right`) is its whole body, `right` is `break` (or `exit 0`,
/// `exit`: the script ends with 0 at the first host that answers), the loop runs
/// over two or more different literal words, and `at` is a command whose host is the loop's
/// variable (`-h $h`, `--host=$h`, `http://$h/`): `for h in localhost db; do pg_isready -h $h &&
/// break; done` tries each host until one answers, its status the last one's (bash manual,
/// "Looping Constructs"): a check fails it only when every other host failed too, a fallback
/// (bash 5.2 and dash 0.5.12 exit 0 with db down and localhost up, 2 with both down).
pub(super) fn tries_each_host<'t>(
    at: Node<'t>,
    list: Node<'t>,
    right: Node<'_>,
    walk: &Walk<'_>,
) -> Option<Node<'t>> {
    if !matches!(text(right, walk).trim(), "break" | "exit 0" | "exit") || at.kind_name() != "command" {
        return None;
    }
    let (looped, var, values) = one_statement_for_loop(list, walk)?;
    let distinct = values.iter().enumerate().all(|(i, v)| !values[..i].contains(v));
    if values.len() < 2 || !values.iter().all(|v| plain_word(v)) || !distinct || var.is_empty() {
        return None;
    }
    // One of the words is this Pod (`localhost`, `127.0.0.1:5432` in a URL): the check it runs is
    // local, as libpq host lists need one (`pg_isready -h db,db2`, all remote, is denied). With
    // every word remote the loop fails whenever they are all down (bash 5.2 / dash 0.5.12 exit
    // 2 / 2 on `for h in db db2; do pg_isready -h $h && break; done`).
    if !values.iter().any(|v| local_word(v)) {
        return None;
    }
    host_is_loop_variable(at, var, walk).then_some(looped)
}

/// The `for` loop whose body is `statement` alone (a `do_group` of one statement), its variable
/// and the words of its list, as written.
pub(super) fn one_statement_for_loop<'t, 's>(
    statement: Node<'t>,
    walk: &Walk<'s>,
) -> Option<(Node<'t>, &'s str, Vec<&'s str>)> {
    let body = statement.parent().filter(|b| b.kind_name() == "do_group")?;
    let looped = body.parent().filter(|l| l.kind_name() == "for_statement")?;
    let mut c = body.walk();
    if body.named_children(&mut c).filter(|k| is_statement(*k)).count() != 1 {
        return None;
    }
    let var = text(looped.child_by_field("variable")?, walk);
    let mut c = looped.walk();
    let values = looped.children_by_field("value", &mut c).map(|v| text(v, walk)).collect();
    Some((looped, var, values))
}

/// A word of a `for` loop's list that expands nothing: letters, digits, `.`, `-`, `_`, `:`.
pub(super) fn plain_word(v: &str) -> bool {
    v.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b':'))
}

/// Whether a word of a `for` loop's list is this Pod: `localhost`, a loopback address, or one
/// of them with a port (`127.0.0.1:5432`).
pub(super) fn local_word(v: &str) -> bool {
    is_local(v)
        || v.rsplit_once(':').is_some_and(|(h, port)| port.bytes().all(|b| b.is_ascii_digit()) && is_local(h))
}

/// Whether the command `at` reaches the host held by the loop variable `var` (`-h $h`,
/// `--host=$h`, `http://$h/`, `nc -z $h 9092`), through the client's own host options, a URL or
/// its host argument.
pub(super) fn host_is_loop_variable(at: Node<'_>, var: &str, walk: &Walk<'_>) -> bool {
    let refs = [format!("${var}"), format!("${{{var}}}")];
    let is_ref = |a: &str| refs.iter().any(|r| a.trim_matches('"') == r);
    let mut c = at.walk();
    let args: Vec<&str> = at.children_by_field("argument", &mut c).map(|a| text(a, walk)).collect();
    // The loop variable is the host only through the client's own host options (`curl -H $h` is a
    // header) or a URL.
    let name = at.child_by_field("name").map(|n| basename(text(n, walk)));
    let owned: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let host_opts = name.and_then(|n| find_client(n, &owned)).map_or(&[][..], |c| c.host_opts);
    let host_opt = |o: &str| {
        let o = o.strip_prefix("--").or_else(|| o.strip_prefix('-').filter(|s| s.len() == 1));
        o.is_some_and(|o| host_opts.contains(&o))
    };
    // `nc -z -w 2 $h 9092`, `telnet $h 23`: the first positional argument, with no proxy or
    // local-socket option (the client's row: `Positional::Host`/`HostPort`).
    let positional = name.and_then(|n| find_client(n, &owned)).is_some_and(|c| {
        let p = c.syntax.parse(&owned);
        matches!(c.positional, Positional::Host | Positional::HostPort)
            && !p.has(c.proxy_opts)
            && !p.has(c.local_opts)
            && p.pos.first().is_some_and(|h| is_ref(h))
    });
    positional
        || args.windows(2).any(|w| host_opt(w[0]) && is_ref(w[1]))
        || args.iter().any(|a| {
            a.split_once('=').is_some_and(|(o, v)| o.starts_with("--") && host_opt(o) && is_ref(v))
                || refs.iter().any(|r| a.trim_matches('"').contains(&format!("://{r}")))
        })
}

/// Whether `n` is a `( )` that would be [`harmless`] but for `exit N` with a literal `N` (which
/// ends only the subshell: `( echo down; exit 1 )`).
pub(super) fn subshell_only_exits(n: Node<'_>, walk: &Walk<'_>, functions: &Funcs) -> bool {
    if n.kind_name() != "subshell" {
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
pub(super) fn unread_declaration(
    assignment: Node<'_>,
    decl: Node<'_>,
    walk: &Walk<'_>,
    rules: &Rules,
) -> bool {
    let Some(name) = assignment.child_by_field("name") else {
        return false;
    };
    let var = text(name, walk);
    let keyword = text(decl, walk).split_whitespace().next().unwrap_or("");
    if !matches!(keyword, "export" | "local" | "readonly" | "declare" | "typeset")
        || (rules.called && keyword != "local")
        || !statement_or_left_of_a_list(decl)
        || env_like(var)
    {
        return false;
    }
    // (Not in a loop: a command before it may run after it.)
    let mut up = decl.parent();
    while let Some(p) = up {
        if matches!(p.kind_name(), "for_statement" | "c_style_for_statement" | "while_statement") {
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
        // (No indirect reference, `${!`, that may name it; any other mention only writes it out:
        // `local st=$(check); echo $st`, bash 5.2 and dash 0.5.12 0 / 0.)
        (names.get(var) == Some(&1) || reads_only_output(name, walk))
            && !names.contains_key("")
            && if exports(keyword, decl, walk) {
                facts
                    .last_unplain
                    .get_or_init(|| last_unplain_start(root, walk))
                    .is_none_or(|s| s < decl.end_byte())
            } else {
                // Not exported, only a function called after it may read it (bash's functions see
                // their caller's `local`s): s23, `f() { local out=$(check); rc=$?; return $rc; }`
                // with `rc=$?` after it exits 0 / 0 in bash 5.2 and dash 0.5.12.
                let after = walk.src.get(decl.end_byte()..).unwrap_or("");
                let names: Vec<&str> = rules.functions.iter().map(String::as_str).collect();
                !mentions(after, &names)
            }
    })
}

/// Whether the declaration `decl` (its first word `keyword`) exports what it assigns: `export`, an
/// option holding `x` (`declare -x`, `local -x`), or `set -a` (`allexport`) named in the script.
fn exports(keyword: &str, decl: Node<'_>, walk: &Walk<'_>) -> bool {
    keyword == "export"
        || text(decl, walk).split_whitespace().any(|w| w.starts_with('-') && w.contains('x'))
        || walk.src.contains("allexport")
        || walk.src.split("set -").skip(1).any(|rest| {
            rest.starts_with(|c: char| c.is_ascii_alphabetic())
                && rest.split_whitespace().next().is_some_and(|f| f.contains('a'))
        })
}

/// Whether `n` is a statement of a list of statements, or the first command of an `&&`/`||`
/// list that is (`export X=$(...) || exit 1`: the declaration's status, 0, decides the list's
/// first step, whatever the substitution returned; bash 5.2 and dash 0.5.12 exit 0 with the
/// database down).
fn statement_or_left_of_a_list(n: Node<'_>) -> bool {
    let mut at = n;
    while let Some(p) = at.parent() {
        if is_list_of_statements(p.kind_name()) {
            return true;
        }
        if p.kind_name() != "list" || p.named_child(0) != Some(at) {
            return false;
        }
        at = p;
    }
    false
}

/// Whether a client may read variable `var` from its environment (`PGHOST`, `http_proxy`, ...),
/// by the words in its name.
pub(super) fn env_like(var: &str) -> bool {
    let upper = var.to_ascii_uppercase();
    ["PG", "MYSQL", "REDIS", "LD_", "BASH", "SHELL", "PS", "ENV"].iter().any(|p| upper.starts_with(p))
        || [
            "HOST", "ADDR", "URL", "PROXY", "PORT", "PATH", "IFS", "HOME", "LANG", "LC_", "TZ", "OPT",
            "CONF", "USER", "PASS", "SERVER", "ENDPOINT",
        ]
        .iter()
        .any(|p| upper.contains(p))
}

/// Where the last command of the tree whose root is `root` that is not [`plain_command`] (no
/// function taken as harmless) starts, if one is: [`plain_commands`] from a byte for every byte at
/// once (`TreeFacts::last_unplain`, one walk of the tree).
pub(super) fn last_unplain_start(root: Node<'_>, walk: &Walk<'_>) -> Option<usize> {
    let mut last = None;
    each_node_pruned(root, |k| {
        if k.kind_name() == "command" && !plain_command(k, walk, &[]) {
            last = last.max(Some(k.start_byte()));
        }
        !(k.kind_name() == "command_substitution" && harmless_substitution(text(k, walk)))
    });
    last
}

/// Whether text has a `${...}` that assigns (`${S:=down}`, `${S=down}`) or ends a
/// non-interactive shell when the variable is unset or empty (`${S:?}`, `${S?}`) (bash manual,
/// "Shell Parameter Expansion"; bash 5.2 and dash 0.5.12 exit 1 on `pg_isready -h db || :
/// ${S:=down}; [ "$S" != down ]` with the database down).
pub(super) fn assigning_expansion(t: &str) -> bool {
    t.match_indices("${").any(|(i, _)| {
        let inner = &t[i + 2..];
        let inner = &inner[..inner.find('}').unwrap_or(inner.len())];
        inner.contains(['=', '?'])
    })
}

/// Whether the last component of file `target` (written by `own`) is a word of the script more
/// often than of `own`, or its directory is named whole more often (`/tmp/`, not `/tmp/x`): named elsewhere ([`named_elsewhere`]'s words), found
/// from the tree's word counts (`TreeFacts::words`, made once) rather than a copy of the script
/// per write.
pub(super) fn named_by_count(target: &str, own: &str, walk: &Walk<'_>) -> bool {
    let Some((root, _)) = walk.top_functions.get(walk.tree.get()) else {
        return false;
    };
    let name = unquoted(target);
    let parts: Vec<&str> = name.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    let own = unquoted(own);
    let own_words = naming_words(&own);
    with_facts(*root, walk, |facts| {
        let words = facts.words.get_or_init(|| {
            let mut counts = std::collections::HashMap::new();
            for w in naming_words(&unquoted(walk.src)) {
                *counts.entry(w.to_string()).or_insert(0usize) += 1;
            }
            counts
        });
        let mut from_end = parts.iter().rev();
        let (file, dir) = (from_end.next(), from_end.next());
        if file.is_some_and(|f| {
            words.get(*f).copied().unwrap_or(0) > own_words.iter().filter(|w| *w == f).count()
        }) {
            return true;
        }
        // The directory only where it is named whole (`named_elsewhere`, s24).
        let dirs = facts.named_dirs.get_or_init(|| {
            let mut counts = std::collections::HashMap::new();
            for w in named_directories(&unquoted(walk.src)) {
                *counts.entry(w.to_string()).or_insert(0usize) += 1;
            }
            counts
        });
        let own_dirs = named_directories(&own);
        dir.is_some_and(|d| dirs.get(*d).copied().unwrap_or(0) > own_dirs.iter().filter(|w| *w == d).count())
    })
}

/// What [`known_ok`](super::known_ok) reads of a known function's body, the same whatever other
/// functions are known: made once per body (`Ctx::body_facts`), not once per version of the list
/// of functions (s12, issue #9: 300 functions defined and called one by one remade it for each).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::engine::exec) struct KnownBody {
    /// [`harmless_text`](super::harmless::harmless_text) of the body with no function known, and its commands [`PLAIN`](super::data::PLAIN)
    /// ([`plain_text_commands`](super::harmless::plain_text_commands)), with no `exit` or `return`.
    pub(in crate::engine::exec) harmless_alone: bool,
    /// The body's words that would call a function of the same name ([`call_words`](super::harmless::call_words)).
    pub(in crate::engine::exec) words: Vec<String>,
}

impl KnownBody {
    /// The facts of `body`.
    pub(in crate::engine::exec) fn of(body: &str) -> KnownBody {
        // (A `[` or `!` in a double-quoted string tests nothing: `echo "[$PROBE] WARN $*" >&2`,
        // s25's team template, whose `set -eu; ...; soft() { C || warn x; }; soft` exits 0 / 0 in
        // bash 5.2 and dash 0.5.12.)
        let quoted = super::harmless::blank_plain_strings(body);
        let unquoted: String = body
            .chars()
            .zip(quoted.chars())
            .map(|(c, q)| if c != q && matches!(c, '[' | ']' | '!') { ' ' } else { c })
            .collect();
        let unquoted = if quoted.chars().count() == body.chars().count() { unquoted.as_str() } else { body };
        let harmless_alone =
            plain_text_commands(body) && !mentions(body, &["exit", "return"]) && harmless_text(unquoted, &[]);
        let mut words: Vec<String> = Vec::new();
        if harmless_alone {
            let t = without_harmless_substitutions(body);
            for w in call_words(&t).filter(|w| !w.is_empty()) {
                if let Ok(w) = std::str::from_utf8(w)
                    && !words.iter().any(|k| k == w)
                {
                    words.push(w.to_string());
                }
            }
        }
        KnownBody { harmless_alone, words }
    }
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

/// Why `at`, a statement of the condition of `looped` (a `while`/`until` loop), cannot fail the
/// script, or `None`: not the condition's last, its status is the next one's; the last, when the
/// check's failure ends the loop (`while CHECK`, `until ! CHECK`: `sense` is whether `at` succeeds
/// when the check fails, and whether its status no longer follows the check's) the loop's status
/// is 0 if its body never ran, else the body's last (POSIX "The while Loop"), 0 for a body that
/// cannot fail and changes nothing (output, clients, `sleep`). Bash 5.2 and dash 0.5.12 exit 0 on
/// `while pg_isready -h db; do sleep 1; done` with the database down. A loop the check's failure
/// keeps going (`until CHECK`, `while ! CHECK`) waits on it until the probe times out: `None`,
/// unless its body ends at once with `break` ([`super::LOOP_BREAKS`]) or its retries are counted.
pub(super) fn loop_condition<'t>(
    at: Node<'t>,
    looped: Node<'t>,
    walk: &Walk<'_>,
    rules: &Rules,
    funcs: &Funcs,
    (negated, sense_lost, errexit): (bool, bool, bool),
) -> Option<(&'static str, Node<'t>)> {
    let body = {
        let mut c = looped.walk();
        looped.named_children(&mut c).find(|k| k.kind_name() == "do_group")?
    };
    if at.start_byte() >= body.start_byte() {
        return None;
    }
    if siblings_after(at, looped).take_while(|s| *s != body).any(is_statement) {
        return (!next_reads_status(at, looped, walk, rules)).then_some((super::NOT_LAST, at));
    }
    let until = looped.child(0).is_some_and(|k| k.kind_name() == "until");
    work_text(walk, text(looped, walk));
    if sense_lost || reads_status_text(text(looped, walk)) {
        return None;
    }
    let mut ok = funcs.ok.to_vec();
    ok.push("sleep".to_string());
    // (`while check; do break; done`: a `break` alone ends the loop with status 0, as the
    // condition's failure does: bash 5.2 and dash 0.5.12 exit 0 / 0, s16.)
    let quiet = |k: Node<'_>| {
        harmless_text(text(k, walk), &funcs.risky)
            && plain_commands(k, walk, k.start_byte(), &ok)
            && !mentions(text(k, walk), &["exit", "return"])
    };
    let plain_break =
        |k: Node<'_>| k.kind_name() == "command" && matches!(text(k, walk), "break" | "break 1");
    if until != negated {
        // `until check; do break; done`, `while ! check; do echo down; break; done`: the check's
        // failure runs the body once, which ends the loop with `break` (status 0) after commands
        // that cannot fail or change anything; its success ends the loop before the body, with
        // status 0 (POSIX "The until Loop": "zero if none was executed"). Bash 5.2 and dash 0.5.12
        // exit 0 / 0 on `while ! redis-cli -h cache ping; do break; done; exit 0` (s25).
        let mut c = body.walk();
        let statements: Vec<Node<'_>> = body.named_children(&mut c).filter(|k| is_statement(*k)).collect();
        // (Without errexit, a command there may fail, its status replaced by the `break`'s: `until
        // C; do false; break; done` exits 0 / 0 in bash 5.2.15 and dash 0.5.12, s26; after `set
        // -e`, 0 / 1.)
        let quiet_failures = !errexit
            && !rules.errexit
            && !super::options::sets_errexit(walk.src)
            && !mentions(walk.src, &["shopt", "SHELLOPTS"]);
        let breaks_at_once = statements.iter().position(|k| plain_break(*k)).is_some_and(|at| {
            statements[..at]
                .iter()
                .all(|k| quiet(*k) || quiet_failures && super::zero::only_fails(*k, walk, rules))
        });
        if breaks_at_once {
            return Some((super::LOOP_BREAKS, looped));
        }
        // `until check; do exit 0; done`, `f() { until check; do return 0; done; }` (s26).
        if super::loop_exits::body_leaves_zero(looped, walk, rules, funcs, &quiet) {
            return Some((super::loop_exits::LOOP_LEAVES_ZERO, looped));
        }
        return (super::lost::bounded_retry(looped, walk, rules, funcs)
            || super::lost::counted_loop(looped, walk, rules, funcs))
        .then_some((super::lost::RETRIES, looped));
    }
    // `while check; do exit 0; done` (s27): the check's success runs the body, which leaves with
    // status 0 at once; its failure ends the loop with status 0 (`loop_exits`).
    if super::loop_exits::body_leaves_zero(looped, walk, rules, funcs, &quiet) {
        return Some((super::loop_exits::LOOP_SUCCESS_LEAVES_ZERO, looped));
    }
    let mut c = body.walk();
    let quiet = quiet(body)
        || body
            .named_children(&mut c)
            .filter(|k| is_statement(*k))
            .all(|k| (k.kind_name() == "command" && text(k, walk) == "break") || quiet(k));
    quiet.then_some((super::LOOP_ENDS, looped))
}

/// Whether `right`, the command after `||` in `list`, ends with status 0 whatever happens, so
/// that the check left of it cannot fail the script through it (bash 5.2 and dash 0.5.12 exit 0
/// with the database down on each): `return 0` in a called function's body, when what it skips
/// (the rest of the body) cannot fail or change anything; or a call, with plain arguments, of a
/// function defined once, before (at this text's top level, or certainly before it runs), whose
/// body ends with `return 0` or `exit 0` after commands that only write output ([`zero_end`]).
/// `exit 0` ends the shell: taken only outside a function's body (whose caller's rest it skips)
/// when the rest of this text is harmless too. `return 0` outside a function is an error in bash
/// (2), and `return 1`, a bare `return` (the check's status) or `exit 1` are kept.
pub(super) fn forces_zero(
    list: Node<'_>,
    right: Node<'_>,
    walk: &Walk<'_>,
    rules: &Rules,
    funcs: &Funcs,
) -> bool {
    let t = text(right, walk);
    if right.kind_name() != "command" {
        return false;
    }
    if t.split_whitespace().eq(["return", "0"]) {
        return rules.in_function
            && (harmless_after(list, walk, funcs)
                || super::zero::returns_zero_after(list, walk, rules, funcs));
    }
    if !harmless_text(t, &[]) {
        return false;
    }
    let Some(name) = right.child_by_field("name").map(|m| text(m, walk)) else {
        return false;
    };
    if rules.functions.iter().filter(|f| *f == name).count() != 1 {
        return false;
    }
    let top = walk.top_functions.get(walk.tree.get()).and_then(|(_, table)| table.get());
    let zero = match top.and_then(|t| t.iter().find(|f| f.name == name)) {
        Some(f) if f.end <= list.start_byte() => f.zero,
        Some(_) => None,
        None => rules.known.iter().find(|(n, _)| n == name).and_then(|(_, body)| zero_end(body)),
    };
    match zero {
        Some(true) => !rules.called && !rules.in_function && harmless_after(list, walk, funcs),
        Some(false) => true,
        None => false,
    }
}

/// A function's body (`{ ...; }`) that ends with `exit 0` (`Some(true)`) or `return 0`
/// (`Some(false)`), every command before it writing output only ([`KnownBody`]'s
/// `harmless_alone`: `{ echo down; exit 0; }`).
pub(super) fn zero_end(body: &str) -> Option<bool> {
    let inner = body.trim().strip_prefix('{')?.strip_suffix('}')?.trim().trim_end_matches(';').trim_end();
    let (rest, last) = match inner.rfind([';', '\n']) {
        Some(i) => (&inner[..i], inner[i + 1..].trim()),
        None => ("", inner),
    };
    let exits = match last.split_whitespace().collect::<Vec<_>>().as_slice() {
        ["exit", "0"] => true,
        ["return", "0"] => false,
        _ => return None,
    };
    (rest.trim().is_empty() || KnownBody::of(&format!("{{ {rest}; }}")).harmless_alone).then_some(exits)
}

/// What runs in a called function's shell besides its body (`Ctx::body_rules`): the texts of the
/// scripts it returns to (outermost first) and every function's body. The body's own text,
/// `own`, is blanked in them before they are read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::engine::exec) struct Callers {
    pub(in crate::engine::exec) own: std::rc::Rc<str>,
    pub(in crate::engine::exec) scripts: Vec<std::rc::Rc<str>>,
    pub(in crate::engine::exec) functions: std::rc::Rc<Vec<(String, String)>>,
}

/// Whether no code a called function's body returns to can read the variable named at `name`
/// (assigned in the body): no other script text or function body names it (the body's own text
/// blanked), none reads variables it does not name (`eval`, `source`, `.`, `${!`, `declare`,
/// `typeset`, `printenv`, `env`) or exports them (`export`, `readonly`, `set -a`, `allexport`),
/// and the container's `env` does not declare it (nor may `envFrom`): an exported variable is
/// read by any program run later. (bash 5.2 and dash 0.5.12: `f() { r=$(pg_isready -h db);
/// echo "$r"; }; f` exits 0 with the database down, `...; f; [ -z "$r" ]` 1.)
pub(super) fn callers_never_name(name: Node<'_>, walk: &Walk<'_>, rules: &Rules) -> bool {
    let var = text(name, walk);
    let Some(callers) = &rules.callers else {
        return false;
    };
    let (declared, env_from) = &rules.container_env;
    if var.is_empty() || *env_from || declared.iter().any(|d| d == var) || callers.own.is_empty() {
        return false;
    }
    let own = &*callers.own;
    let texts = callers.scripts.iter().map(|s| &**s).chain(callers.functions.iter().map(|(_, b)| b.as_str()));
    for t in texts.filter(|t| *t != own) {
        work_text(walk, t);
        let rest = t.replace(own, " ");
        let names = rest.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).any(|w| w == var);
        if names
            || rest.contains("${!")
            || rest.split_whitespace().any(|w| w == ".")
            || rest
                .split_whitespace()
                .collect::<Vec<_>>()
                .windows(2)
                .any(|w| w[0] == "set" && w[1].starts_with('-') && w[1].contains('a'))
            || mentions(
                &rest,
                &[
                    "eval",
                    "source",
                    "declare",
                    "typeset",
                    "printenv",
                    "env",
                    "export",
                    "readonly",
                    "allexport",
                ],
            )
        {
            return false;
        }
    }
    true
}

/// Whether errexit is ignored in the compound command `n` (a `{ }`, `( )`, loop body or branch)
/// because a construct around it ignores it (bash manual, `set -e`: "If a compound command or
/// shell function executes in a context where -e is being ignored, none of the commands executed
/// within the compound command or function body will be affected"): it is left of `&&`/`||`,
/// after `!`, or in an `if`/`elif` condition (`set -e; { pg_isready -h db; true; } && echo up`:
/// bash 5.2 and dash 0.5.12 exit 0 with the database down). A substitution, a pipeline or a
/// function's definition around it ends the search (not claimed).
pub(in crate::engine::exec) fn errexit_ignored_around(n: Node<'_>) -> bool {
    let mut child = n;
    while let Some(p) = child.parent() {
        match p.kind_name() {
            "list" => {
                let last = p.named_child(p.named_child_count().saturating_sub(1));
                if last != Some(child) {
                    return true;
                }
            }
            "negated_command" => return true,
            "if_statement" | "elif_clause" if in_condition(child, p) => return true,
            "compound_statement"
            | "subshell"
            | "redirected_statement"
            | "do_group"
            | "if_statement"
            | "elif_clause"
            | "else_clause"
            | "case_item"
            | "case_statement"
            | "for_statement" => {}
            _ => return false,
        }
        child = p;
    }
    false
}

/// The functions `n`, an `if` with an `else`, defines alike in every branch, and how many branches
/// it has: each branch defines the name once among its own statements, with the same body text,
/// the `if` names it nowhere else, and no `break`, `continue` or `return` may skip a definition.
/// Whichever branch runs, the function is defined after the `if` with that body (bash 5.2 and
/// dash 0.5.12: `if [ -e /x ]; then f() { echo a; }; else f() { echo a; }; fi; pg_isready -h db
/// || f` exits 0 with the database down). Each as its name's node and its body's.
pub(in crate::engine::exec) fn alike_definitions<'t>(
    n: Node<'t>,
    src: &str,
) -> (Vec<(Node<'t>, Node<'t>)>, usize) {
    let t = |k: Node<'_>| src.get(k.start_byte()..k.end_byte()).unwrap_or("");
    // (An `else` clause starts with the word `else`: an `if` whose text lacks it has none, unless
    // the parser recovered from an error in it. Its children are then not collected.)
    if n.kind_name() != "if_statement" || (!n.has_error() && !t(n).contains("else")) {
        return (Vec::new(), 0);
    }
    let mut c = n.walk();
    let kids: Vec<Node<'t>> = n.children(&mut c).collect();
    if n.kind_name() != "if_statement"
        || !kids.iter().any(|k| k.kind_name() == "else_clause")
        || mentions(t(n), &["break", "continue", "return"])
    {
        return (Vec::new(), 0);
    }
    // Each branch's own statements: after `then` (or in the `else`), up to the next clause.
    let after_then = |kids: &[Node<'t>]| -> Vec<Node<'t>> {
        let from = kids.iter().position(|k| k.kind_name() == "then").map_or(0, |p| p + 1);
        kids[from..]
            .iter()
            .filter(|k| is_statement(**k) && !matches!(k.kind_name(), "elif_clause" | "else_clause"))
            .copied()
            .collect()
    };
    let mut branches = vec![after_then(&kids)];
    for k in kids.iter().filter(|k| matches!(k.kind_name(), "elif_clause" | "else_clause")) {
        let mut c = k.walk();
        let clause: Vec<Node<'t>> = k.children(&mut c).collect();
        branches.push(after_then(&clause));
    }
    let name_of = |d: &Node<'t>| d.child_by_field("name").map(t);
    let mut out = Vec::new();
    for def in branches[0].iter().filter(|d| d.kind_name() == "function_definition") {
        let (Some(name), Some(body)) = (def.child_by_field("name"), def.child_by_field("body")) else {
            continue;
        };
        let alike = branches.iter().all(|b| {
            let defs: Vec<&Node<'t>> = b
                .iter()
                .filter(|d| d.kind_name() == "function_definition" && name_of(d) == Some(t(name)))
                .collect();
            defs.len() == 1 && defs[0].child_by_field("body").map(t) == Some(t(body))
        });
        let words = |s: &str| {
            s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|w| *w == t(name)).count()
        };
        if alike && words(t(n)) == branches.len() * words(t(*def)) {
            out.push((name, body));
        }
    }
    (out, branches.len())
}
