//! A check in a command substitution whose status does not become the status of the command
//! around it (s16, verdict break-it pass vd3; each shape run in bash 5.2 and dash 0.5.12 with a
//! `redis-cli` stub that fails on a remote host):
//! - an assignment with no command name has the status of the LAST substitution it performs
//!   (POSIX "Simple Commands"; bash manual, "Simple Command Expansion"): `x=$(check) y=$(true)`,
//!   `x="$(check)"$(true)` exit 0 / 0 under `set -e`;
//! - a statement not last in `$(...)`, without errexit, whose output goes to `/dev/null`, gives
//!   the value nothing and its status nothing: `x=$(check >/dev/null; echo ok)`, 0 / 0;
//! - bash (not in POSIX mode, without `shopt -s inherit_errexit`) clears `-e` in a command
//!   substitution's subshell (bash manual, "The Set Builtin", `-e`; "Bash POSIX Mode"):
//!   `set -e; x=$(check; echo done)` exits 0 / 0 in bash, 1 / 0 in dash and in bash with
//!   `inherit_errexit` or `set -o posix`.
//!
//! And, alike, a pipeline element that reads nothing of the check's output ([`ignores_stdin`]).

use crate::engine::exec::kinds::KindName;
use tree_sitter::Node;

use super::super::shell::Walk;
use super::tree::{each_node_pruned, in_case_body};
use super::{Rules, is_list_of_statements, text};
use crate::engine::exec::flow::mentions;

/// A reason the walk gives (`discarded`).
pub(super) const LATER_SUBSTITUTION: &str =
    "the assignment's status is its last substitution's (`x=$(...) y=$(true)`), not this one's";

/// Whether an assignment whose parent is `p` is a statement whose status the walk follows on:
/// one of a list of statements, an `if`/`elif`/`while`/`until` condition, a part of an
/// `&&`/`||` list, or after `!` (errexit ignores the last four: bash manual, `set -e`); or the
/// `variable_assignments` of one (`x=$(a) y=$(b)`).
pub(super) fn assignment_statement_in(p: Node<'_>) -> bool {
    if p.kind_name() == "variable_assignments" {
        return p
            .parent()
            .is_some_and(|q| q.kind_name() != "variable_assignments" && assignment_statement_in(q));
    }
    is_list_of_statements(p.kind_name())
        || matches!(
            p.kind_name(),
            "if_statement" | "elif_clause" | "while_statement" | "list" | "negated_command"
        )
}

/// Whether the assignment statement `up` (a `variable_assignment`, alone or one of a
/// `variable_assignments`) performs a command substitution after `subst` ends, not inside an
/// expansion that may not run it (`${y:-$(true)}`): its status is then that one's.
pub(super) fn later_substitution(subst: Node<'_>, up: Node<'_>) -> bool {
    if up.kind_name() != "variable_assignment" {
        return false;
    }
    let statement = up.parent().filter(|p| p.kind_name() == "variable_assignments").unwrap_or(up);
    let mut later = false;
    // (A node that ends before `subst` does holds nothing that starts after it: not walked.)
    each_node_pruned(statement, |k| {
        if later || k.end_byte() < subst.end_byte() || k.kind_name() == "expansion" {
            return false;
        }
        if k.kind_name() == "command_substitution" && k.start_byte() >= subst.end_byte() {
            later = true;
            return false;
        }
        true
    });
    later
}

/// Whether the statement `at` (not the last of its substitution) writes nothing to the
/// substitution: its standard output and standard error end at `/dev/null` or the shell's
/// standard error (`check >/dev/null`, `check >/dev/null 2>&1`, `check &>/dev/null`), read in
/// order (`check 2>&1 >/dev/null` writes its errors into the value: not taken).
pub(super) fn writes_nothing_to_it(at: Node<'_>, walk: &Walk<'_>) -> bool {
    if at.kind_name() != "redirected_statement"
        || at.child_by_field("body").is_none_or(|b| b.kind_name() != "command")
    {
        return false;
    }
    // Where fds 1 and 2 go: the value (`V`), elsewhere (`E`: the shell's stderr), `/dev/null` (`N`).
    let (mut out, mut err) = ('V', 'E');
    let mut c = at.walk();
    let mut any = false;
    for r in at.children_by_field("redirect", &mut c) {
        if r.kind_name() != "file_redirect" {
            return false;
        }
        any = true;
        let t: String = text(r, walk).chars().filter(|c| !c.is_whitespace()).collect();
        match t.as_str() {
            ">/dev/null" | "1>/dev/null" | ">>/dev/null" | "1>>/dev/null" => out = 'N',
            "2>/dev/null" | "2>>/dev/null" => err = 'N',
            "&>/dev/null" | ">&/dev/null" | "&>>/dev/null" => (out, err) = ('N', 'N'),
            "2>&1" => err = out,
            ">&2" | "1>&2" => out = err,
            _ => return false,
        }
    }
    any && out != 'V' && err != 'V'
}

/// Whether bash clears errexit where `n` runs: the script's shell is bash (not `sh`, which may
/// be bash in POSIX mode, where a substitution inherits `-e`), `n` is in a command substitution
/// that runs no `set`, and nothing in the script or the container's env names
/// `inherit_errexit`, `posix` or `POSIXLY_CORRECT`.
pub(super) fn bash_clears_errexit(n: Node<'_>, walk: &Walk<'_>, rules: &Rules) -> bool {
    rules.bash && clears_errexit_in_bash(n, walk, &rules.container_env.0, rules.container_env.1)
}

/// [`bash_clears_errexit`] of the node whose ancestors, nearest first, are `ancestors` (taken
/// from a path already found, `memo::WalkCache::path_to`: each `Node::parent` walks down from
/// the root).
pub(super) fn bash_clears_errexit_below<'t>(
    ancestors: impl Iterator<Item = Node<'t>>,
    walk: &Walk<'_>,
    rules: &Rules,
) -> bool {
    rules.bash && clears_errexit_above(ancestors, walk, &rules.container_env.0, rules.container_env.1)
}

/// [`bash_clears_errexit`] for a script bash runs, whose container's `env` declares `env`
/// (and has `envFrom`: `env_from`).
pub(in crate::engine::exec) fn clears_errexit_in_bash(
    n: Node<'_>,
    walk: &Walk<'_>,
    env: &[String],
    env_from: bool,
) -> bool {
    clears_errexit_above(std::iter::successors(n.parent(), |p| p.parent()), walk, env, env_from)
}

/// [`clears_errexit_in_bash`] of the node whose ancestors, nearest first, are `ancestors`.
fn clears_errexit_above<'t>(
    mut ancestors: impl Iterator<Item = Node<'t>>,
    walk: &Walk<'_>,
    env: &[String],
    env_from: bool,
) -> bool {
    // (The cheap tests first: a text with no `$(` or backquote has no command substitution, and
    // the options' names are looked for only around a command in one.)
    if env_from
        || !(walk.src.contains("$(") || walk.src.contains('`'))
        || env.iter().any(|v| matches!(v.as_str(), "POSIXLY_CORRECT" | "SHELLOPTS" | "BASHOPTS"))
    {
        return false;
    }
    ancestors.find(|p| p.kind_name() == "command_substitution").is_some_and(|p| {
        !mentions(text(p, walk), &["set"])
            && !mentions(walk.src, &["inherit_errexit", "posix", "POSIXLY_CORRECT", "SHELLOPTS", "BASHOPTS"])
    })
}

/// The `case` statement one of whose patterns (before its item's `)`: [`in_case_body`]) holds
/// the substitution `subst`, if `up` (the first node above it that is not a string or a
/// concatenation) is that item: its output only chooses the item, as a subject's does
/// (`shapes::case_is_harmless`): `case ok in $(check && echo ok)) echo up;; esac` exits 0 / 0.
pub(super) fn case_of_pattern<'t>(subst: Node<'t>, up: Node<'t>) -> Option<Node<'t>> {
    (up.kind_name() == "case_item" && !in_case_body(subst, up)).then(|| up.parent()).flatten()
}

/// A reason the walk gives (`discarded`).
pub(super) const PROCSUB_OUT: &str = "its status is lost in an output process substitution (`> >(...)`, bash only: dash and busybox sh reject it, so the probe always fails there), and it writes where the command around it does";

/// For an output process substitution `sub` (`>(...)`) in the redirection or the arguments
/// (`parent`) of a statement, that statement: no shell reads the substitution's status, and its
/// output goes where the shell's does when the statement runs, judged there
/// (`output_used_above`): `echo hi > >(check >/dev/null)` exits 0 / 0 in bash 5.2 (s16, vd3 ps12).
pub(super) fn output_procsub<'t>(sub: Node<'t>, parent: Node<'t>) -> Option<Node<'t>> {
    if sub.kind_name() != "process_substitution" || sub.child(0).is_none_or(|k| k.kind_name() != ">(") {
        return None;
    }
    match parent.kind_name() {
        "file_redirect" => parent.parent().filter(|s| s.kind_name() == "redirected_statement"),
        "command" => Some(parent),
        _ => None,
    }
}

/// Whether the pipeline element `k` reads nothing from its standard input, so that the check
/// before it gives it nothing: `pg_isready`, `redis-cli`/`valkey-cli ... ping` (not `-x`, which
/// reads an argument from it), `curl` sending no data from it (no `@-`, `-T`/`--upload-file`,
/// `-K`/`--config`); not a function. `redis-cli -h cache ping | redis-cli ping` has the local
/// check's status: bash 5.2 and dash 0.5.12 exit 0 / 0 (s16, vd3 o26).
pub(super) fn ignores_stdin(k: Node<'_>, walk: &Walk<'_>, rules: &Rules) -> bool {
    let Some(name) = k.child_by_field("name").map(|m| text(m, walk)).filter(|_| k.kind_name() == "command")
    else {
        return false;
    };
    let t = text(k, walk);
    let words: Vec<&str> = t.split_whitespace().collect();
    if rules.functions.iter().any(|f| f == name) || t.contains(['$', '`', '<', '>', '\\', '"', '\'']) {
        return false;
    }
    match name {
        "pg_isready" => true,
        "redis-cli" | "valkey-cli" => {
            words.last().is_some_and(|w| w.eq_ignore_ascii_case("ping")) && !words.contains(&"-x")
        }
        "curl" => {
            !t.contains("@-")
                && !words.iter().any(|w| {
                    matches!(*w, "-K" | "--config" | "--upload-file")
                        || w.starts_with("-T")
                        || w.starts_with("--config=")
                })
        }
        _ => false,
    }
}

/// A reason the walk gives (`discarded`).
pub(super) const NONEMPTY_WITH_ERRORS: &str = "its output, with its errors (`2>&1`), is only tested for being empty, and in an outage it writes an error message";

/// For the statement `at`, alone in the command substitution `sub`, the test whose status stands
/// for it when that test only asks whether the substitution's value is empty
/// (`shapes::emptiness_test_of`: `test -n "$(...)"`, `[ -z "$(...)" ]`, `[ "$(...)" ]`, `[[ -n
/// $(...) ]]`) and `at` is a client writing its errors into it (`2>&1`, its only redirection) with
/// no flag that may silence them (`-s`, `-q`, `--silent`, `--quiet`, a cluster holding `s` without
/// `S` or `q`; `nc`/`ncat`/`netcat` without `-v`): a failing client writes an error message, so
/// the test's status is the same with the server up or down (s17, vd3 o20: `test -n
/// "$(redis-cli -h redis-master ping 2>&1)"` exits 0 / 0 in bash 5.2 and dash 0.5.12; without
/// `2>&1`, 1 / 0).
pub(super) fn nonempty_with_errors<'t>(
    at: Node<'t>,
    sub: Node<'t>,
    walk: &Walk<'_>,
    rules: &Rules,
) -> Option<Node<'t>> {
    let body = at
        .child_by_field("body")
        .filter(|b| b.kind_name() == "command" && at.kind_name() == "redirected_statement")?;
    let mut c = at.walk();
    let redirects: Vec<String> = at
        .children_by_field("redirect", &mut c)
        .map(|r| text(r, walk).chars().filter(|c| !c.is_whitespace()).collect())
        .collect();
    let mut c = sub.walk();
    if redirects != ["2>&1"] || sub.named_children(&mut c).filter(|k| super::is_statement(*k)).count() != 1 {
        return None;
    }
    let name = text(body.child_by_field("name")?, walk);
    let mut c = body.walk();
    let args: Vec<&str> = body.children_by_field("argument", &mut c).map(|a| text(a, walk)).collect();
    let cluster = |a: &&str| a.starts_with('-') && !a.starts_with("--");
    let silenced = args.iter().any(|a| {
        matches!(*a, "--silent" | "--quiet")
            || cluster(a) && (a.contains('q') || a.contains('s') && !a.contains('S'))
    }) || matches!(name, "nc" | "ncat" | "netcat")
        && !args.iter().any(|a| cluster(a) && a.contains('v'));
    if silenced
        || rules.functions.iter().any(|f| f == name)
        || super::super::clients::find_client(name, &[]).is_none()
    {
        return None;
    }
    // The value's word, and the test that asks only whether it is empty.
    super::shapes::emptiness_test_of(&super::shapes::operand(sub, walk), walk)
}
