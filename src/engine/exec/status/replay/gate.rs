//! Whether the replay may run on a script and a check in it ([`replayable`]).

use crate::engine::exec::kinds::KindName;
use tree_sitter::Node;

use super::super::super::flow::mentions;
use super::super::super::shell::Walk;
use super::super::Rules;
use super::super::harmless::{reads_status_text, writes_a_named_file};

/// Whether the replay may run on this script: no errexit or pipefail anywhere (`set` not named),
/// one parsed piece, the whole text analysed, a script run by a shell of its own (not a function's
/// body), and no here-document; a text that reads a status (`$?`, a bare `exit`), or the check
/// `n` in the condition of a top-level `if`/`elif` ([`top_level_if`]: its status only chooses the
/// branch) of a text with no `exec`
/// (`exec >FILE` sends its output where a later command may read it), writing no file the script
/// names again (`check > f; grep -q x f`): s25, `if ! out=$(check); then exit 0; fi; echo "$out"
/// | grep -q role:` exits 0 whatever the outage (0 / 0 in bash 5.2 and dash 0.5.12 with the
/// server answering `role:master`) and was denied.
pub(super) fn replayable(n: Node<'_>, walk: &Walk<'_>, rules: &Rules) -> bool {
    // (The path from the root, one walk down: `Node::parent` costs the depth, a climb with it
    // the depth squared, for each command of a chain of `&& date` 320 deep.)
    let tested = || {
        mentions(walk.src, &["if"])
            && !mentions(walk.src, &["exec"])
            && !writes_a_named_file(n, walk)
            && super::super::tree::path_to(super::super::tree::tree_root(n, walk), n).iter().any(|p| {
                matches!(p.kind_name(), "if_statement" | "elif_clause")
                    && super::super::tree::in_condition(n, *p)
                    && top_level_if(*p)
            })
    };
    replayable_text(walk, rules) && (reads_status_text(walk.src) || tested())
}

/// Whether `p`, an `if` or one of its `elif`s, is a statement of the script's own shell at its
/// top level: an `exit` in its branches ends the script, not a subshell the replay would take
/// for the script (`( if ! C; then exit 0; fi; exit 1 ) || exit 0; exit 1` exits 0 / 1 in bash
/// 5.2 and dash 0.5.12: `tests/shell_flow_v8.rs`).
fn top_level_if(p: Node<'_>) -> bool {
    let construct = if p.kind_name() == "elif_clause" { p.parent() } else { Some(p) };
    construct.and_then(|c| c.parent()).is_some_and(|g| g.kind_name() == "program")
}

/// [`replayable`]'s conditions on the script's text.
fn replayable_text(walk: &Walk<'_>, rules: &Rules) -> bool {
    !rules.errexit
        && !rules.pipefail
        && !walk.pipefail
        && !rules.called
        && !rules.in_function
        && walk.top_functions.len() == 1
        && walk.cut >= walk.src.len()
        // (A here-document body the grammar may read as commands: `Walk::skips`.)
        && !walk.src.contains("<<")
        && !mentions(walk.src, &["set", "shopt", "trap"])
}
