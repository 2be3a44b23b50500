//! Walking a syntax tree: every node in text order (with or without pruning) and the path from
//! the root down to a node. One cursor each, nothing collected but the path.

use crate::engine::exec::kinds::KindName;
use tree_sitter::Node;

use super::super::flow::mentions;
use super::super::shell::Walk;
use super::{is_statement, text};

/// Calls `visit` on every node under `root` (`root` first), each before its children and in the
/// order of the text: one cursor, nothing collected.
pub(in crate::engine::exec) fn each_node<'t>(root: Node<'t>, mut visit: impl FnMut(Node<'t>)) {
    each_node_pruned(root, |k| {
        visit(k);
        true
    });
}

/// [`each_node`], where `visit` returning false skips the node's children.
pub(super) fn each_node_pruned<'t>(root: Node<'t>, mut visit: impl FnMut(Node<'t>) -> bool) {
    let mut cursor = root.walk();
    'walk: loop {
        if visit(cursor.node()) && cursor.goto_first_child() {
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
}

/// Whether every mention of the variable named at `name` (a `variable_name` node) in its tree
/// passes `read` (`name` itself excepted), and the tree holds as many mentions as the source has
/// words spelling the name: one in text the parser did not read as a name is not claimed, but
/// for the literal text of arguments a command only writes out or ignores
/// (`calls::printed_literal_mentions`: `rc` in `log "rc $rc"`). Subtrees whose text cannot hold the name are skipped (unless the parser recovered from an
/// error there), and the walk stops at the first mention `read` refuses.
pub(super) fn every_mention(name: Node<'_>, walk: &Walk<'_>, mut read: impl FnMut(Node<'_>) -> bool) -> bool {
    let var = text(name, walk);
    // (The root of the tree being walked, as `discarded_at` takes it.)
    let root = tree_root(name, walk);
    // (`printed`: words spelling the name in text an `echo` or a function call only writes out.)
    let (mut seen, mut printed, mut ok) = (0usize, 0usize, true);
    each_node_pruned(root, |k| {
        if !ok {
            return false;
        }
        if k.kind_name() == "variable_name" && text(k, walk) == var {
            seen += 1;
            ok &= k.id() == name.id() || read(k);
        }
        let holds = var.is_empty() || k.has_error() || text(k, walk).contains(var);
        if holds && !var.is_empty() && k.kind_name() == "command" {
            printed += super::calls::printed_literal_mentions(k, var, walk);
        }
        holds
    });
    ok && seen + printed == word_count(walk.src, var)
}

/// How many of the words of `src` (split at every character but ASCII letters, digits and `_`)
/// are `var`: for a `var` of those characters, each place `var` is found with neither before
/// nor after it (`memmem`, not a split of the whole text; two such places cannot overlap, so
/// the search's non-overlapping matches find every one).
fn word_count(src: &str, var: &str) -> usize {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    if var.is_empty() || !var.bytes().all(word) {
        return src.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|w| *w == var).count();
    }
    let bytes = src.as_bytes();
    memchr::memmem::find_iter(bytes, var)
        .filter(|&i| (i == 0 || !word(bytes[i - 1])) && bytes.get(i + var.len()).is_none_or(|b| !word(*b)))
        .count()
}

/// The root of the tree being walked (`Walk::top_functions`), which holds `n` (the nodes the walk
/// asks about are that tree's), or the root climbed to from `n` when the walk keeps none. Each
/// `Node::parent` walks down from the root: a climb costs the depth squared.
pub(super) fn tree_root<'a, 'w: 'a>(n: Node<'a>, walk: &Walk<'w>) -> Node<'a> {
    match walk.top_functions.get(walk.tree.get()) {
        Some((root, _)) => *root,
        None => {
            let mut root = n;
            while let Some(p) = root.parent() {
                root = p;
            }
            root
        }
    }
}

/// The nodes from `root` down to `n`'s parent (`root` first): one walk down, where a chain of
/// `Node::parent` walks down from the root once per step.
pub(super) fn path_to<'a>(root: Node<'a>, n: Node<'a>) -> Vec<Node<'a>> {
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

/// The parent of `at` from `path` (the nodes from the root down to the parent of `n`), when `at`
/// is `n` or on the path; `on` is `at`'s index in it (the length for `n`), which only goes down
/// as the walk goes up, so a step costs one comparison or a few. `None` when `at` is not there
/// (the caller asks the tree).
pub(super) fn parent_on<'t>(
    path: &[Node<'t>],
    on: &mut usize,
    n: Node<'t>,
    at: Node<'t>,
) -> Option<Node<'t>> {
    let i =
        if at == n { path.len() } else { path[..(*on).min(path.len())].iter().rposition(|p| *p == at)? };
    *on = i;
    path.get(i.checked_sub(1)?).copied()
}

/// Whether `at` is among the statements before `then` of `parent` (an `if_statement` or an
/// `elif_clause`).
pub(super) fn in_condition(at: Node<'_>, parent: Node<'_>) -> bool {
    let mut c = parent.walk();
    let then = parent.children(&mut c).find(|k| k.kind_name() == "then");
    then.is_some_and(|t| at.end_byte() <= t.start_byte())
}

/// Whether `at` is in a `case` item's body (after its `)`), not one of its patterns.
pub(super) fn in_case_body(at: Node<'_>, item: Node<'_>) -> bool {
    let mut c = item.walk();
    let close = item.children(&mut c).find(|k| k.kind_name() == ")");
    close.is_some_and(|p| at.start_byte() >= p.end_byte())
}

/// Whether no statement of the same list follows `at` (the next named sibling, if any, is another
/// clause of its `if`, or a `case` item's terminator).
pub(super) fn last_statement(at: Node<'_>, parent: Node<'_>) -> bool {
    for s in siblings_after(at, parent) {
        if is_statement(s) && !matches!(s.kind_name(), "elif_clause" | "else_clause") {
            return false;
        }
        if !s.is_named()
            && matches!(s.kind_name(), "then" | "fi" | "done" | "}" | ")" | ";;" | ";&" | ";;&" | "esac")
        {
            return true;
        }
    }
    true
}

/// The children of `parent` after `at` (one of them), in order: one cursor over `parent`'s
/// children, where each `Node::next_sibling` finds the parent again and walks its children.
pub(super) fn siblings_after<'a>(at: Node<'a>, parent: Node<'a>) -> impl Iterator<Item = Node<'a>> {
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

/// Whether `n` holds an `exit` or `return` (it leaves the script or function).
pub(super) fn leaves(n: Node<'_>, walk: &Walk<'_>) -> bool {
    mentions(text(n, walk), &["exit", "return"])
}

/// Kinds whose named children are statements run one after the other.
pub(super) fn is_list_of_statements(kind: &str) -> bool {
    matches!(kind, "program" | "compound_statement" | "subshell" | "do_group" | "else_clause" | "case_item")
}

/// The assignment `s` is, or that `s` holds under here-documents only (`rc=$? <<EOF`): a
/// here-document gives an assignment's status nothing, but a command substitution in its body
/// does (POSIX 2.9.1: the status of the last command substitution performed; bash 5.2 and dash
/// 0.5.12: `false; rc=$? <<EOF` with `$(exit 3)` in the body exits 3, with plain text 0, and
/// with `<<'EOF'` 0). That status is the check's only through a read of `$?` (or a bare `exit`)
/// in the body, or a call of a function of the script (`functions`), whose body may read it: a
/// body without either (`$(echo hello)`) gives a status of its own (s22: `pg_isready -h db;
/// rc=$? <<EOF` with `$(echo hello)` in the body exits 0 / 0 in bash 5.2 and dash 0.5.12).
pub(super) fn assignment_under_heredocs<'t>(
    s: Node<'t>,
    walk: &Walk<'_>,
    functions: &[String],
) -> Option<Node<'t>> {
    if s.kind_name() == "variable_assignment" {
        return Some(s);
    }
    let body = s
        .child_by_field("body")
        .filter(|b| s.kind_name() == "redirected_statement" && b.kind_name() == "variable_assignment")?;
    let mut c = s.walk();
    // (A quoted delimiter, `<<'EOF'`, leaves the body as written: POSIX 2.7.4.)
    let only_plain_heredocs = s.named_children(&mut c).filter(|k| *k != body).all(|k| {
        let t = text(k, walk);
        k.kind_name() == "heredoc_redirect"
            && (t.split('\n').next().is_some_and(|head| head.contains(['\'', '"', '\\']))
                || !(t.contains("$(") || t.contains('`'))
                || !super::reads_status_text(t) && !functions.iter().any(|f| mentions(t, &[f.as_str()])))
    });
    only_plain_heredocs.then_some(body)
}

#[cfg(test)]
mod word_count_tests {
    use super::word_count;
    use proptest::prelude::*;

    proptest! {
        /// The search counts what splitting the text into words and comparing each counted.
        #[test]
        fn words_are_counted_as_by_a_split(src in "[ab_1 $\"{}é-]{0,24}", var in "[ab_1$é]{0,3}") {
            let split =
                src.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|w| *w == var).count();
            prop_assert_eq!(word_count(&src, &var), split);
        }
    }

    #[test]
    fn a_word_is_counted_only_between_separators() {
        for (src, var, n) in [
            ("rc=$?; echo $rc ${rc}", "rc", 3),
            ("src rcx _rc rc_ rc", "rc", 1),
            ("aaa aa", "aa", 1),
            ("é rc-é", "rc", 1),
            ("", "rc", 0),
        ] {
            assert_eq!(word_count(src, var), n, "{src}");
        }
    }
}
