//! A check whose output only a test compares, and whose test's result cannot fail the script (s26,
//! a new user's false denials): `[ "$(redis-cli -h cache ping)" = PONG ] || echo bad` and `out=$(C);
//! [ "$out" = PONG ] || echo "unexpected: $out"` exit 0 / 0 in bash 5.2 and dash 0.5.12 with a
//! stub client up / down, and were denied: a command substitution's output was data the script
//! uses, whatever used it.
//!
//! The test (`[ ... ]`, `[[ ... ]]`, `test ...`) carries the check's outcome in its status, which
//! may be either way round (`=` or `!=`): so it is taken only where the walk from the test finds
//! its status lost whichever it is ([`test_discarded`]): a later statement's status replaces it
//! (`NOT_LAST`), its failure only runs a `||` side that cannot fail by itself and leaves nothing
//! (`OR_ELSE`: `|| echo bad`), or it chooses between branches that cannot fail and change nothing
//! (`CONDITION`). A test that does anything else (another substitution, an arithmetic or assigning
//! expansion, a redirection, a `test` or `[` function) is not taken, nor a test that is the
//! script's last statement (`[ "$(C)" = PONG ]`: 0 / 1, coupled), followed by `|| exit 1` (0 / 1)
//! or whose value is read by anything but such tests and output (`echo "$out"`).

use crate::engine::exec::kinds::KindName;
use tree_sitter::Node;

use super::super::shell::Walk;
use super::constructs::assigning_expansion;
use super::harmless::{may_be_read_elsewhere, reads_only_as_output};
use super::{CONDITION, NOT_LAST, OR_ELSE, Rules, text};

/// A reason the walk gives (`discarded`).
pub(super) const TESTED_OUTPUT: &str = "its output is only compared by a test whose result cannot fail the script (a later command's status replaces it, or its failure only writes output)";

/// The test statement that `from` (a command substitution, or a variable's expansion) is an
/// operand of, climbing quotes, concatenations and the test's own expressions: a `[ ]`/`[[ ]]`
/// (`test_command`) or a command named `test` or `[` (not its name), with no redirection. `None`
/// for anything else.
fn test_around<'t>(from: Node<'t>, walk: &Walk<'_>) -> Option<Node<'t>> {
    let mut up = from.parent()?;
    while matches!(
        up.kind_name(),
        "string" | "concatenation" | "binary_expression" | "unary_expression" | "parenthesized_expression"
    ) {
        up = up.parent()?;
    }
    match up.kind_name() {
        "test_command" => Some(up),
        "command"
            if up.child_by_field("name").is_some_and(|m| matches!(text(m, walk), "test" | "["))
                && up.child_by_field("redirect").is_none() =>
        {
            Some(up)
        }
        _ => None,
    }
}

/// Whether the text of `test`, with the bytes `own` (the operand under judgement) left out, runs
/// nothing and changes nothing: no substitution, arithmetic, redirection or assigning expansion,
/// and `[[ ]]` without arithmetic comparisons (which evaluate, and may assign, their operands).
fn plain_test(test: Node<'_>, own: (usize, usize), walk: &Walk<'_>, rules: &Rules) -> bool {
    let before = walk.src.get(test.start_byte()..own.0).unwrap_or("");
    let after = walk.src.get(own.1..test.end_byte()).unwrap_or("");
    let rest = format!("{before} {after}");
    let t = text(test, walk);
    let runs = rest.contains(['`', '<', '>'])
        || ["$(", "$[", "(("].iter().any(|s| rest.contains(s))
        || assigning_expansion(&rest);
    let shadowed = rules.functions.iter().any(|f| f == "test" || f == "[");
    let arithmetic = t.starts_with("[[")
        && t.split_whitespace().any(|w| matches!(w, "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge"));
    !runs && !shadowed && !arithmetic
}

/// Whether the status of `test` is lost whichever way the test goes (module docs).
fn test_discarded<'t>(test: Node<'t>, walk: &Walk<'t>, rules: &Rules) -> bool {
    matches!(super::discarded_at(test, walk, rules), Some((why, _)) if [NOT_LAST, OR_ELSE, CONDITION].contains(&why))
}

/// For the check's command substitution `sub`, an operand of a plain test whose status is lost
/// (module docs): that test.
pub(super) fn tested_substitution<'t>(sub: Node<'t>, walk: &Walk<'t>, rules: &Rules) -> Option<Node<'t>> {
    let test = test_around(sub, walk)?;
    (plain_test(test, (sub.start_byte(), sub.end_byte()), walk, rules) && test_discarded(test, walk, rules))
        .then_some(test)
}

/// Whether the variable assigned at `name` (the check's output) is read only as output
/// (`echo "$out"`: `harmless::reads_only_as_output`) or as an operand, `$NAME` or `${NAME}`, of
/// a plain test whose status is lost (module docs), in a script that reads no variable it does
/// not name (`harmless::may_be_read_elsewhere`).
pub(super) fn value_only_tested<'t>(name: Node<'t>, walk: &Walk<'t>, rules: &Rules) -> bool {
    if may_be_read_elsewhere(name, walk) {
        return false;
    }
    let var = text(name, walk);
    // (The tests found, by their bytes: each is judged once the mentions are all read.)
    let mut tests: Vec<(usize, usize)> = Vec::new();
    let read = super::tree::every_mention(name, walk, |k| {
        if reads_only_as_output(k, walk) {
            return true;
        }
        let Some(exp) = k.parent().filter(|e| {
            matches!(e.kind_name(), "simple_expansion" | "expansion")
                && super::texts::is_expansion_of(text(*e, walk), var)
        }) else {
            return false;
        };
        match test_around(exp, walk) {
            Some(test) if plain_test(test, (exp.start_byte(), exp.end_byte()), walk, rules) => {
                tests.push((test.start_byte(), test.end_byte()));
                true
            }
            _ => false,
        }
    });
    let root = super::tree::tree_root(name, walk);
    read && tests.iter().all(|&(start, end)| {
        root.descendant_for_byte_range(start, end)
            .filter(|t| t.start_byte() == start && t.end_byte() == end)
            .is_some_and(|t| test_discarded(t, walk, rules))
    })
}

/// [`super::shapes::value_reaches_no_status`], or [`value_only_tested`].
pub(super) fn value_unused<'t>(
    name: Node<'t>,
    prints: &super::shapes::Prints<'_>,
    walk: &Walk<'t>,
    rules: &Rules,
) -> bool {
    super::shapes::value_reaches_no_status(name, prints, walk) || value_only_tested(name, walk, rules)
}
