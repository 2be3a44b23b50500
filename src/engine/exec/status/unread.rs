//! State a check's outcome leaves that the script itself never reads (s25's new user and
//! verdict hunt): a variable only assigned (`x=$(check || echo down)`, `x` never read), a marker
//! file only written (`check && touch /tmp/ok || rm -f /tmp/ok`). Another process may read it (a
//! readiness probe), but nothing after it in the script does, so it cannot make the script's
//! status follow the check's.

use crate::engine::exec::kinds::KindName;
use tree_sitter::Node;

use super::super::shell::Walk;
use super::harmless::{assignments_of, named_elsewhere};
use super::{Funcs, is_list_of_statements, text, work};

/// Whether every word `var` of `src` is an assignment of it ([`assignments_of`]): its value is
/// never read.
pub(super) fn only_assigned(var: &str, src: &str) -> bool {
    let words = src.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|w| *w == var).count();
    words == assignments_of(var, src)
}

/// Whether `n` is `touch FILE...` (options `-a`, `-c`, `-m`) or `rm FILE...` (options of `-f`,
/// `-r`, `-R`, `-v`), each file a literal path, that no other command of the script reads:
/// every other word naming one is in such a `touch` or `rm` too ([`named_elsewhere`] outside
/// them). It marks state for another process (a readiness probe reading `/tmp/ok`) and may
/// fail (a read-only filesystem), but changes nothing the script reads later: s25's new user,
/// `redis-cli -h cache ping && touch /tmp/ok || rm -f /tmp/ok; test -d /` exits 0 / 0 in bash
/// 5.2 and dash 0.5.12, while `...; [ -f /tmp/ok ]` (0 / 1) names the file again.
pub(super) fn writes_only_unread_files(n: Node<'_>, walk: &Walk<'_>, functions: &Funcs) -> bool {
    let files = |k: Node<'_>| -> Option<Vec<String>> {
        if k.kind_name() != "command" {
            return None;
        }
        let name = k.child_by_field("name").map(|m| text(m, walk))?;
        let options: &[char] = match name {
            "touch" => &['a', 'c', 'm'],
            "rm" => &['f', 'r', 'R', 'v'],
            _ => return None,
        };
        if functions.risky.iter().chain(functions.ok.iter()).any(|f| f == name) {
            return None;
        }
        let mut c = k.walk();
        let mut out = Vec::new();
        for a in k.named_children(&mut c).filter(|a| a.kind_name() != "command_name") {
            let t = text(a, walk);
            if a.kind_name() != "word" || t.contains(['$', '`', '\\', '*', '?', '[', '{', '~', '=']) {
                return None;
            }
            match t.strip_prefix('-') {
                Some(flags) if out.is_empty() => {
                    if flags.is_empty() || !flags.chars().all(|f| options.contains(&f)) {
                        return None;
                    }
                }
                _ if t.starts_with('/') => out.push(t.to_string()),
                _ => return None,
            }
        }
        (!out.is_empty()).then_some(out)
    };
    let Some(own) = files(n) else {
        return false;
    };
    let root = super::tree::tree_root(n, walk);
    let (mut writers, mut visited) = (Vec::new(), 0usize);
    super::tree::each_node(root, |k| {
        visited += 1;
        if files(k).is_some() {
            writers.push((k.start_byte(), k.end_byte()));
        }
    });
    // (A look at every node and, for each file, the text: counted as the walk's work, so a
    // script of many such commands spends the analysis's units, never seconds: issue #9.)
    work(walk, visited);
    for _ in &own {
        super::work_text(walk, walk.src);
    }
    own.iter().all(|f| !named_elsewhere(f, walk.src, &writers))
}

/// [`writes_only_unread_files`] or [`writes_only_unread_output`]: `&&`'s right side B that only
/// writes where the script reads nothing, and may fail: the list's status, the check's or B's,
/// is followed on (`status::discarded_at`).
pub(super) fn writes_only_unread(n: Node<'_>, walk: &Walk<'_>, functions: &Funcs) -> bool {
    writes_only_unread_files(n, walk, functions) || writes_only_unread_output(n, walk, functions)
}

/// Whether `n` only writes output ([`super::harmless::may_only_fail`]: `echo up >> /tmp/h.log`,
/// a call of a function whose body does no more, `Funcs::writers`) to files the script names
/// nowhere else but in other writes (`path_vars::named_elsewhere_in`: a redirection to the file
/// is no read of it), and leaves nothing: what it writes, or whether it ran, changes nothing the
/// script reads later, and only its status, a write's failure, can be the list's. s27: `log(){
/// echo "$(date) $*" >> /tmp/h.log; }; C && log up || log down; L` and `C && echo up >> /tmp/h.log
/// || echo down >> /tmp/h.log; L` exit 0 / 0 in bash 5.2 and dash 0.5.12 and were denied; `...;
/// grep -q up /tmp/h.log` names the file (coupled).
fn writes_only_unread_output(n: Node<'_>, walk: &Walk<'_>, functions: &Funcs) -> bool {
    super::harmless::may_only_fail(n, walk, functions)
        && !super::leaves(n, walk)
        && super::harmless::file_targets(text(n, walk))
            .iter()
            .all(|f| !super::path_vars::named_elsewhere_in(f, walk.src, &[(n.start_byte(), n.end_byte())]))
}

/// Whether `exp`, an assignment whose name is `k`, is a statement of its own or a part of an
/// `&&`/`||` list (`RES=$(check) || RES=down`, s25; not a prefix of a command, whose environment
/// it is) whose value reads no variable indirectly (`${!ref}`). Where the value names the variable
/// (`RES=${RES}x`), that mention is judged as every other one is, by the caller's
/// `tree::every_mention`: a test of the value's text for the name, here, refused mentions every
/// other rule takes as no read (s26: `log() { :; }; pg_isready -h db; rc=$?; rc=$(log "$rc");
/// echo "$rc"; test -d /` exits 0 / 0 in bash 5.2 and dash 0.5.12 and was denied).
pub(super) fn plain_assignment(exp: Node<'_>, k: Node<'_>, walk: &Walk<'_>) -> bool {
    let mut statement = exp.parent();
    while let Some(p) = statement.filter(|p| p.kind_name() == "list") {
        statement = p.parent();
    }
    exp.child_by_field("name") == Some(k)
        && statement.is_some_and(|p| is_list_of_statements(p.kind_name()))
        && exp.child_by_field("value").is_none_or(|v| !text(v, walk).contains("${!"))
}

/// Whether every other mention of the variable assigned at `name` is written out
/// ([`super::harmless::reads_only_as_output`]) or read by a test whose outcome changes nothing
/// ([`unused_test`]), in a script without errexit that no caller's shell runs after: the value
/// reaches no status (s26: `up=1; redis-cli -h cache ping || up=0; [ $up -eq 1 ] || echo warn;
/// test -d /` exits 0 / 0 in bash 5.2.15 and dash 0.5.12; `[ $up -eq 1 ] || exit 1` there, or
/// the test last, 0 / 1).
pub(super) fn read_only_by_unused_tests(name: Node<'_>, walk: &Walk<'_>, rules: &super::Rules) -> bool {
    !rules.called
        && !rules.errexit
        && !super::options::sets_errexit(walk.src)
        && !super::super::flow::mentions(walk.src, &["shopt", "SHELLOPTS"])
        && super::tree::every_mention(name, walk, |k| {
            super::harmless::reads_only_as_output(k, walk) || unused_test(k, walk, rules)
        })
}

/// Whether the variable mention `k` is an operand of a test (`[ ]`, `test`, `[[ ]]`:
/// `zero::only_tests`, no substitution) whose status only chooses between commands that change
/// nothing (`T || echo warn`, `T && echo ok`, `if T; then echo a; else echo b; fi`, each
/// [`super::harmless::harmless`]), in a top-level statement whose status the next one's replaces
/// (not the script's last, and no `$?` read after it).
fn unused_test(k: Node<'_>, walk: &Walk<'_>, rules: &super::Rules) -> bool {
    let mut up = k;
    let test = loop {
        let Some(p) = up.parent() else { return false };
        match p.kind_name() {
            "simple_expansion"
            | "expansion"
            | "string"
            | "concatenation"
            | "binary_expression"
            | "unary_expression"
            | "parenthesized_expression" => up = p,
            "test_command" => break p,
            "command" if p.child_by_field("name").is_some_and(|m| matches!(text(m, walk), "[" | "test")) => {
                break p;
            }
            _ => return false,
        }
    };
    if !super::zero::only_tests(test, walk, rules) {
        return false;
    }
    let Some(parent) = test.parent() else { return false };
    let funcs = super::functions_at(test, walk, rules);
    let quiet = |n: Node<'_>| super::harmless::harmless(n, walk, &funcs) && !super::tree::leaves(n, walk);
    let statement = match parent.kind_name() {
        "list" if parent.named_child(0) == Some(test) => {
            let right = parent.named_child(parent.named_child_count().saturating_sub(1));
            if !right.is_some_and(|r| r != test && quiet(r)) {
                return false;
            }
            parent
        }
        "if_statement" if super::tree::in_condition(test, parent) => {
            let parts = super::harmless::other_parts(test, parent);
            if !parts.iter().all(|p| quiet(*p)) {
                return false;
            }
            parent
        }
        _ => return false,
    };
    let Some(list) = statement.parent().filter(|p| p.kind_name() == "program") else {
        return false;
    };
    if statement.next_sibling().is_some_and(|s| s.kind_name() == "&") {
        return false;
    }
    // Its status is 0 either way when the test's failure only runs output (`T || echo degraded
    // >&2`; an `if` whose branches only write, none taken giving 0): last, or read by `$?`, too.
    // (`echo degraded >&2`: its redirection writes no file, `quiet`.)
    let writes = |n: Node<'_>| {
        let n = match n.child_by_field("body") {
            Some(body) if n.kind_name() == "redirected_statement" && quiet(n) => body,
            _ => n,
        };
        n.kind_name() == "command"
            && n.child_by_field("name")
                .is_some_and(|m| matches!(text(m, walk), "echo" | "printf" | "logger" | ":" | "true"))
            && quiet(n)
    };
    let zero = match statement.kind_name() {
        "list" => {
            statement.child(1).is_some_and(|op| op.kind_name() == "||")
                && statement.named_child(statement.named_child_count().saturating_sub(1)).is_some_and(writes)
        }
        _ => super::harmless::other_parts(test, statement).iter().all(|p| writes(*p)),
    };
    zero || !super::tree::last_statement(statement, list)
        && !super::harmless::next_reads_status(statement, list, walk, rules)
}
