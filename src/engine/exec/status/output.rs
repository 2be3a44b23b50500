//! Where the output of a command whose status is not used goes: a reader further up (a command
//! substitution, a pipeline, a file the script names again) makes that output data the script
//! uses, so the command is not uncoupled.

use tree_sitter::Node;

use super::super::shell::Walk;
use super::*;

/// Whether the output of `at` (whose status is not used) is data the script uses further up: it
/// is in a command substitution, a file written and named again, or a pipeline whose later
/// commands read it (`{ remote; local; } | grep -q x`).
pub(super) fn output_used_above(at: Node<'_>, walk: &Walk<'_>) -> bool {
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
pub(in crate::engine::exec) fn output_kept(n: Node<'_>, walk: &Walk<'_>) -> bool {
    // (Another element of its own pipeline that writes a file reads its output: below.)
    if writes_a_named_file(n, walk) {
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
