//! Constructs whose exit status is a known part's, found by the v2 verdict break-it pass on
//! a00d258 (issue #10, "never deny on a guess"), each checked in bash 5.2 and dash 0.5.12 with
//! stub clients (`tests/shell_flow_v2.rs`):
//! - `(exec CMD)`: `exec` replaces the subshell, not the script (bash manual, "Command Execution
//!   Environment"), so the subshell's status is CMD's, judged where the subshell is.

use tree_sitter::Node;

use super::super::shell::Walk;
use super::{each_node, is_statement, text};

/// How many `exec` commands under `root` run a program as the last statement of a `( )`
/// subshell (`(exec pg_isready -h db); exit 0`): each replaces only the subshell, whose status is
/// the program's, walked on from the subshell like any last statement's (bash 5.2 and dash
/// 0.5.12: `(exec pg_isready -h db); exit 0` and `(exec ...) || true` exit 0 with the database
/// down; `(exec ...)` alone exits 2).
pub(super) fn subshell_last_execs(root: Node<'_>, walk: &Walk<'_>) -> usize {
    let mut found = 0;
    each_node(root, |k| {
        if k.kind() != "command" || !k.child_by_field_name("name").is_some_and(|m| text(m, walk) == "exec") {
            return;
        }
        let Some(sub) = k.parent().filter(|p| p.kind() == "subshell") else {
            return;
        };
        let mut c = k.walk();
        let runs_program =
            k.children_by_field_name("argument", &mut c).next().is_some_and(|a| !text(a, walk).starts_with('-'));
        let mut c = sub.walk();
        let last = sub.named_children(&mut c).filter(|s| is_statement(*s)).last();
        let background = k.next_sibling().is_some_and(|s| s.kind() == "&");
        if runs_program && last == Some(k) && !background {
            found += 1;
        }
    });
    found
}
