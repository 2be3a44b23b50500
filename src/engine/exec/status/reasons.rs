//! The reasons `discarded` gives for a check whose exit status cannot fail the script (moved out
//! of `status.rs`, unchanged): each is a message's "because" (`Dependency::uncoupled`).

/// A reason the walk gives (`discarded`).
pub(super) const NOT_LAST: &str = "its exit status is not used (a later command's status is the script's)";
/// A reason the walk gives (`discarded`).
pub(super) const BACKGROUND: &str = "it runs in the background (`&`)";
/// A reason the walk gives (`discarded`).
pub(super) const OR_ELSE: &str = "its failure only runs the command after `||`, which does not fail by itself and whose status is the script's";
/// A reason the walk gives (`discarded`).
pub(super) const CONDITION: &str = "its status only chooses which branch runs, and no branch fails by itself";
/// A reason the walk gives (`discarded`).
pub(super) const ECHOED: &str = "its output is only written (`echo \"$(...)\"`), its status lost";
/// A reason the walk gives (`discarded`).
pub(super) const PIPED_AWAY: &str = "its pipeline's status is another command's (`| true`)";
/// A reason the walk gives (`discarded`).
pub(super) const PIPED_THROUGH: &str =
    "piped into a filter (`| tee`, `| cat`, ...) that exits 0 whatever it reads";
/// A reason the walk gives (`discarded`).
pub(super) const NEXT_HOST: &str = "it is one of the hosts a loop tries until one answers (`&& break`): the loop fails only when every one does";
/// A reason the walk gives (`discarded`).
pub(super) const LEAVES_LOOP: &str = "its status only chooses whether its loop stops (`if ...; then break; fi`), and the loop's is 0 either way";
/// A reason the walk gives (`discarded`).
pub(super) const OR_ZERO: &str = "its failure only runs the command after `||`, which ends with status 0 (`exit 0`, `return 0`, or a `{ }`, `( )` or function ending so)";
/// A reason the walk gives (`discarded`).
pub(super) const LOOP_ENDS: &str =
    "its failure only ends the `while` loop around it, whose status is 0 then (its body cannot fail)";
/// A reason the walk gives (`discarded`): `until CHECK; do break; done` (s25).
pub(super) const LOOP_BREAKS: &str = "its failure only runs its loop's body once, which ends the loop with `break` (status 0), as its success ends it";
/// The reason the walk gives (`discarded`) for a check in a declaration's value, naming the
/// declaration used (`local X=$(...)` was told `export X=$(...)` before s24).
pub(super) fn declared(keyword: &str) -> &'static str {
    match keyword {
        "local" => "it is in a declaration (`local X=$(...)`), whose status is its own",
        "readonly" => "it is in a declaration (`readonly X=$(...)`), whose status is its own",
        "declare" => "it is in a declaration (`declare X=$(...)`), whose status is its own",
        "typeset" => "it is in a declaration (`typeset X=$(...)`), whose status is its own",
        _ => "it is in a declaration (`export X=$(...)`), whose status is its own",
    }
}
