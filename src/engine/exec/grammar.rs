//! Where tree-sitter-bash's tree differs from the shell's reading of a script, and how the walk
//! reads it as the shell does.

use tree_sitter::Node;

use crate::engine::exec::kinds::KindName;

use super::shell::{is_piece, is_redirect};

/// The simple command that ends `n`, a list or a pipeline (its last element, recursively), when
/// that element is a piece; `n` itself when it is one.
pub(super) fn last_piece(n: Node<'_>) -> Option<Node<'_>> {
    let mut at = n;
    while matches!(at.kind_name(), "list" | "pipeline") {
        at = at.named_child(at.named_child_count().checked_sub(1)?)?;
    }
    is_piece(at.kind_name()).then_some(at)
}

/// The redirections that belong to the command `n` although the grammar hangs them on the list or
/// pipeline it ends. tree-sitter-bash 0.25 reads `cd /scripts && bash < check.sh` and `true | bash
/// < f` as one `redirected_statement` around the whole list or pipeline; the shell gives them to
/// the last simple command (POSIX Shell Command Language 2.9.2 and 2.9.3: a pipeline and an AND-OR
/// list are made of commands, and a redirection is part of a simple command, 2.9.1). bash 5.2 and
/// dash 0.5.12 with `check.sh` holding `exit 3`: `cd /tmp && sh < check.sh` exits 3.
pub(super) fn regrouped_redirects(n: Node<'_>) -> Vec<Node<'_>> {
    // (Each `Node::parent` walks down from the root: each parent is asked for once.)
    let mut at = n;
    let mut parent = at.parent();
    while let Some(p) = parent.filter(|p| matches!(p.kind_name(), "list" | "pipeline")) {
        if p.named_child(p.named_child_count().saturating_sub(1)) != Some(at) {
            return Vec::new();
        }
        at = p;
        parent = at.parent();
    }
    let Some(statement) = parent.filter(|p| {
        p.kind_name() == "redirected_statement" && at != n && p.child_by_field("body") == Some(at)
    }) else {
        return Vec::new();
    };
    let mut cursor = statement.walk();
    statement.named_children(&mut cursor).filter(|c| *c != at && is_redirect(c.kind_name())).collect()
}
