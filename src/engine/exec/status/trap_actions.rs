//! EXIT trap actions that change no status of the script (s22, fresh-user pass), beside
//! `harmless::harmless_traps`'s output and removals: an action that exits with the status the
//! script was exiting with (`trap 'exit $?' EXIT`), and a client run alone (`trap 'redis-cli -h
//! cache ping' EXIT`), whose own status an EXIT trap does not hand on (judged where the action
//! is analysed, `script::exit_traps`). Checked with
//! bash 5.2 and dash 0.5.12: `trap 'exit $?' EXIT; C; echo done` exits 0 / 0 with the client
//! down / up, `trap 'exit $?' EXIT; C` 1 / 0, `trap 'exit $?' EXIT; exit 3` 3, `trap 'C' EXIT;
//! exit 0` 0 / 0 (1 / 0 after `set -e`).

use super::super::flow::mentions;

/// Whether `conditions` (the words after a trap's action) are all the EXIT condition (`EXIT` in
/// any case, `0`): the action runs once, as the shell exits.
fn exit_only(conditions: &[String]) -> bool {
    !conditions.is_empty() && conditions.iter().all(|c| c.eq_ignore_ascii_case("EXIT") || c == "0")
}

/// Whether the EXIT trap `action` (quotes removed) is `exit $?` (`${?}`, `"$?"`) alone: it exits
/// with the status the shell was exiting with (`$?` when the action starts: POSIX `trap`).
/// (Not `echo bye; exit $?`, which exits with echo's status; `rc=$?; ...; exit $rc` is not taken:
/// `status::rules` does not follow `exit $rc` there.)
pub(super) fn keeps_status(action: &str, conditions: &[String]) -> bool {
    exit_only(conditions)
        && (matches!(
            action.split_whitespace().collect::<Vec<_>>().as_slice(),
            ["exit", "$?" | "${?}" | "\"$?\""]
        ) || saves_and_exits(action))
}

/// Whether the EXIT trap `action` is `NAME=$?`, then commands that only write output (`echo`,
/// `printf` without options, `logger`, `:`, `true`, to no file, with no substitution), then `exit
/// $NAME` (`${NAME}`, `"$NAME"`): it exits with the status the shell was exiting with, as `exit
/// $?` does (s23: bash 5.2 and dash 0.5.12 exit 0 / 0 on `trap 'rc=$?; echo bye; exit $rc' EXIT;
/// C; echo done`, 1 / 0 without the `echo done`).
fn saves_and_exits(action: &str) -> bool {
    let parts: Vec<&str> = action.split([';', '\n']).map(str::trim).filter(|p| !p.is_empty()).collect();
    let [first, between @ .., last] = parts.as_slice() else {
        return false;
    };
    let Some(name) = first
        .split_once('=')
        .filter(|(name, value)| {
            super::super::context::is_ident(name) && matches!(*value, "$?" | "${?}" | "\"$?\"")
        })
        .map(|(name, _)| name)
    else {
        return false;
    };
    let exits = last.split_whitespace().collect::<Vec<_>>();
    let read =
        [format!("${name}"), format!("${{{name}}}"), format!("\"${name}\""), format!("\"${{{name}}}\"")];
    exits.len() == 2
        && exits[0] == "exit"
        && read.contains(&exits[1].to_string())
        && between.iter().all(|p| {
            let words: Vec<&str> = p.split_whitespace().collect();
            matches!(words.first(), Some(&("echo" | "printf" | "logger" | ":" | "true")))
                && !(words[0] == "printf" && words.get(1).is_some_and(|w| w.starts_with('-')))
                && super::harmless::file_targets(p).is_empty()
                && !p.contains(['<', '|', '&', '`', '(', ')'])
        })
}

/// Whether `command`, one command of the action of a trap on `conditions` in `src`, runs a client
/// alone (`redis-cli -h cache ping`: no list, pipe, redirection or substitution) in an EXIT trap
/// without errexit (`errexit`, or a script that may set it): the action's status is not the
/// script's (bash 5.2 and dash 0.5.12: `trap 'C' EXIT; exit 0`, `; true`, or the script's end,
/// exit 0 / 0), while under errexit its failure ends the shell with its status (1 / 0).
pub(super) fn runs_a_client(src: &str, command: &str, conditions: &[String], errexit: bool) -> bool {
    let words: Vec<&str> = command.split_whitespace().collect();
    let Some((program, args)) = words.split_first() else {
        return false;
    };
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    exit_only(conditions)
        && !errexit
        && !super::options::sets_errexit(src)
        && !mentions(src, &["shopt", "SHELLOPTS"])
        && !command.contains(['`', '\\', '<', '>', '|', '&', '(', ')', '\'', '"'])
        && super::super::clients::find_client(super::super::context::basename(program), &args).is_some()
}
