//! Constructs the exit-status walk reads beyond lists, pipelines and conditions (issue #10, the
//! session-10 break-it pass): a declaration's own status (`export X=$(...)`), a subshell that
//! errexit or `exit` ends, a loop that tries each host until one answers, an expansion that
//! assigns or fails (`${S:=x}`, `${S:?}`), and the tree's word counts that tell whether a file
//! written is named again. Each checked against bash 5.2.15 and dash 0.5.12 (`tests/shell_flow.rs`).

use tree_sitter::Node;

use super::super::clients::find_client;
use super::super::context::basename;
use super::super::flow::mentions;
use super::super::shell::Walk;
use super::harmless::{
    call_words, harmless, harmless_substitution, harmless_text, plain_command, plain_commands,
    plain_text_commands, reads_status_text, without_harmless_substitutions,
};
use super::options::{unquoted, with_facts};
use super::{
    Funcs, Rules, each_node_pruned, is_list_of_statements, is_statement, siblings_after, text, work,
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
        match list.kind() {
            "subshell" => return Some(list),
            "compound_statement" => {
                let up = list.parent()?;
                if up.kind() == "pipeline" {
                    // An element of a pipeline runs in a subshell of its own (bash manual,
                    // "Pipelines"): `set -e; { check; true; } | cat` goes on.
                    return Some(list);
                }
                child = list;
                list = up;
                if !matches!(list.kind(), "subshell" | "compound_statement") {
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
    if construct.kind() != "if_statement" {
        return false;
    }
    let mut c = construct.walk();
    let kids: Vec<Node<'_>> = construct.children(&mut c).collect();
    if kids.iter().any(|k| matches!(k.kind(), "elif_clause" | "else_clause")) {
        return false;
    }
    let Some(then) = kids.iter().position(|k| k.kind() == "then") else {
        return false;
    };
    let branch: Vec<&Node<'_>> = kids[then + 1..].iter().filter(|k| is_statement(**k)).collect();
    if branch.len() != 1 || !matches!(text(*branch[0], walk).trim(), "break" | "continue") {
        return false;
    }
    let Some(body) = construct.parent().filter(|b| b.kind() == "do_group") else {
        return false;
    };
    let Some(looped) = body.parent().filter(|l| l.kind() == "for_statement") else {
        return false;
    };
    let mut c = body.walk();
    if body.named_children(&mut c).filter(|k| is_statement(*k)).count() != 1 {
        return false;
    }
    let Some(var) = looped.child_by_field_name("variable").map(|v| text(v, walk)) else {
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
    if !matches!(text(right, walk).trim(), "break" | "exit 0" | "exit") || at.kind() != "command" {
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
    // One of the words is this Pod (`localhost`, `127.0.0.1:5432` in a URL): the check it runs is
    // local, as libpq host lists need one (`pg_isready -h db,db2`, all remote, is denied). With
    // every word remote the loop fails whenever they are all down (bash 5.2 / dash 0.5.12 exit
    // 2 / 2 on `for h in db db2; do pg_isready -h $h && break; done`).
    if !values.iter().any(|v| local_word(v)) {
        return None;
    }
    host_is_loop_variable(at, var, walk).then_some(looped)
}

/// Whether a word of a `for` loop's list is this Pod: `localhost`, a loopback address, or one
/// of them with a port (`127.0.0.1:5432`).
pub(super) fn local_word(v: &str) -> bool {
    is_local(v)
        || v.rsplit_once(':').is_some_and(|(h, port)| port.bytes().all(|b| b.is_ascii_digit()) && is_local(h))
}

/// Whether the command `at` reaches the host held by the loop variable `var` (`-h $h`,
/// `--host=$h`, `http://$h/`), through the client's own host options or a URL.
pub(super) fn host_is_loop_variable(at: Node<'_>, var: &str, walk: &Walk<'_>) -> bool {
    let refs = [format!("${var}"), format!("${{{var}}}")];
    let is_ref = |a: &str| refs.iter().any(|r| a.trim_matches('"') == r);
    let mut c = at.walk();
    let args: Vec<&str> = at.children_by_field_name("argument", &mut c).map(|a| text(a, walk)).collect();
    // The loop variable is the host only through the client's own host options (`curl -H $h` is a
    // header) or a URL.
    let name = at.child_by_field_name("name").map(|n| basename(text(n, walk)));
    let owned: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let host_opts = name.and_then(|n| find_client(n, &owned)).map_or(&[][..], |c| c.host_opts);
    let host_opt = |o: &str| {
        let o = o.strip_prefix("--").or_else(|| o.strip_prefix('-').filter(|s| s.len() == 1));
        o.is_some_and(|o| host_opts.contains(&o))
    };
    args.windows(2).any(|w| host_opt(w[0]) && is_ref(w[1]))
        || args.iter().any(|a| {
            a.split_once('=').is_some_and(|(o, v)| o.starts_with("--") && host_opt(o) && is_ref(v))
                || refs.iter().any(|r| a.trim_matches('"').contains(&format!("://{r}")))
        })
}

/// Whether `n` is a `( )` that would be [`harmless`] but for `exit N` with a literal `N` (which
/// ends only the subshell: `( echo down; exit 1 )`).
pub(super) fn subshell_only_exits(n: Node<'_>, walk: &Walk<'_>, functions: &Funcs) -> bool {
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
    let Some(name) = assignment.child_by_field_name("name") else {
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

/// Whether `n` is a statement of a list of statements, or the first command of an `&&`/`||`
/// list that is (`export X=$(...) || exit 1`: the declaration's status, 0, decides the list's
/// first step, whatever the substitution returned; bash 5.2 and dash 0.5.12 exit 0 with the
/// database down).
fn statement_or_left_of_a_list(n: Node<'_>) -> bool {
    let mut at = n;
    while let Some(p) = at.parent() {
        if is_list_of_statements(p.kind()) {
            return true;
        }
        if p.kind() != "list" || p.named_child(0) != Some(at) {
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
        if k.kind() == "command" && !plain_command(k, walk, &[]) {
            last = last.max(Some(k.start_byte()));
        }
        !(k.kind() == "command_substitution" && harmless_substitution(text(k, walk)))
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

/// Whether the last component of file `target` (written by `own`), or its directory's, is a word
/// of the script more often than of `own`: named elsewhere ([`named_elsewhere`]'s words), found
/// from the tree's word counts (`TreeFacts::words`, made once) rather than a copy of the script
/// per write.
pub(super) fn named_by_count(target: &str, own: &str, walk: &Walk<'_>) -> bool {
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
        let harmless_alone =
            plain_text_commands(body) && !mentions(body, &["exit", "return"]) && harmless_text(body, &[]);
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
