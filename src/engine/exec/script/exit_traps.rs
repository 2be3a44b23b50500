//! The EXIT trap beyond `exits::exit_trap_status` (s22, fresh-user pass): its action analysed as
//! the script it is (`trap 'redis-cli -h cache ping' EXIT` reached the cache unseen), and an
//! `exit 0` trap set after the check but before the script can end (`f; ret=$?; trap 'exit 0'
//! EXIT; exit $ret`). Checked with bash 5.2 and dash 0.5.12 and stub clients (down / up): `trap
//! 'C' EXIT; exit 0` and `f() { C; }; trap f EXIT; exit 0` exit 0 / 0, `set -e; trap 'C' EXIT;
//! exit 0` and `trap 'C || exit 1' EXIT; exit 0` 1 / 0; `C; trap 'exit 0' EXIT; exit 1` 0 / 0,
//! `C || exit 1; trap 'exit 0' EXIT` and `set -e; C; trap 'exit 0' EXIT` 1 / 0.

use crate::engine::exec::kinds::KindName;

use super::super::Dependency;
use super::super::context::{Ctx, is_ident};
use super::super::flow::mentions;
use super::exits;

/// Why a check in an EXIT trap's action cannot fail the probe.
pub(super) const EXIT_ACTION: &str =
    "it runs in the script's EXIT trap, whose status is not the script's (no `exit` there, no errexit)";

/// Why a check in the action of an EXIT trap set in a subshell or a function's body, an action
/// that can end the shell, is not judged.
pub(super) const EXIT_ACTION_ELSEWHERE: &str =
    "it runs in an EXIT trap set in a subshell or a function, where its `exit` ends is not followed";

/// Why a check in a script whose EXIT trap's action is an expansion's value (`trap "$A" EXIT`,
/// `status::unread_exit_action`) is a doubt: that action may end the script with any status.
pub(super) const UNREAD_EXIT_ACTION: &str =
    "what its EXIT trap runs (the action is a variable's value, not read here)";

/// Why a check in a script whose trap's double-quoted action holds `$NAME`, a value not known to
/// be one plain word (`trap "rm -f $TMPF" EXIT` with `TMPF` from the env or the image), is a
/// doubt: the shell reads the action's text, value included, as commands when the trap runs
/// (s25; `status::plain_value`).
fn trap_value_doubt(name: &str) -> String {
    format!("the value of `${name}` in its trap's action, which the shell runs as commands")
}

/// Why a check the walk finds uncoupled in a script run by `sh` with an ERR trap whose action
/// can fail the script is a doubt: dash 0.5.12 has no ERR condition ("bad trap") and runs on,
/// bash runs the action where a command fails (s24: `trap 'exit 1' ERR; C; echo ok` exits 0 / 0
/// in dash, 0 / 1 in bash).
pub(super) const SH_ERR_TRAP: &str = "which shell `sh` is (bash runs the ERR trap, dash has none)";

/// Why a check before a top-level `trap 'exit 0' EXIT` that nothing before it can skip cannot
/// fail the probe.
pub(super) const EXIT_TRAP_LATER: &str =
    "the script sets `trap 'exit 0' EXIT` before it can end, so it exits 0 whatever this command returns";

/// Whether `part`, a command of a trap's action, is `NAME=$?` (`${?}`, `"$?"`): it assigns, and
/// changes no status.
pub(super) fn status_assignment(part: &str) -> bool {
    part.split_once('=')
        .is_some_and(|(name, value)| is_ident(name) && matches!(value, "$?" | "${?}" | "\"$?\""))
}

/// The action of `trap ARGS` (quotes removed) when the trap is set on EXIT (`EXIT`, `exit` or `0`
/// among the conditions) to run commands: not `-` or an empty action, which reset or ignore it.
fn exit_action(args: &[String]) -> Option<&str> {
    let args = match args.first() {
        Some(a) if a == "--" => &args[1..],
        _ => args,
    };
    let (action, conditions) = args.split_first()?;
    (conditions.iter().any(|c| c.eq_ignore_ascii_case("exit") || c == "0")
        && !matches!(action.trim(), "" | "-"))
    .then_some(action.as_str())
}

impl Ctx<'_> {
    /// Whether every `trap` of `script` changes no status (`status::harmless_traps`, or no `trap`
    /// at all), reading a plain parameter of a double-quoted action as one word; when one such
    /// parameter's value is not known to be one (`status::plain_value`), the script's checks are a
    /// doubt ([`trap_value_doubt`], unless another doubt is already said).
    pub(super) fn traps_harmless_or_doubt(&mut self, script: &str) -> bool {
        if !mentions(script, &["trap"]) {
            return true;
        }
        let mut expanded = Vec::new();
        let harmless = super::super::status::harmless_traps_expanding(
            script,
            self.errexit,
            &self.functions,
            false,
            &mut expanded,
        );
        if harmless
            && self.status_unknown.is_none()
            && let Some((name, _)) =
                expanded.iter().find(|(name, at)| !super::super::status::plain_value(script, name, *at))
        {
            self.status_unknown = Some(trap_value_doubt(name));
        }
        harmless
    }

    /// What the action of `trap ARGS` reaches, when it is an EXIT trap: its text analysed as a
    /// script that ends with `exit 0` (the shell exits with the status it had when the action
    /// began, unless the action runs `exit`, POSIX `trap`; a constant here). A check in it is a
    /// warning ([`EXIT_ACTION`]) unless the action or a function known here names `exit` or
    /// `exec`, or errexit may be on (a failing command ends the shell with its status): then the
    /// walk of that text judges it (`C || exit 1` coupled, `C; exit 0` not). A function the
    /// action calls that is defined after the `trap` is not known here (not analysed).
    pub(super) fn exit_trap_action(&mut self, args: &[String], depth: usize) -> Option<Dependency> {
        let action = self.render_lit(exit_action(args)?);
        if depth >= super::MAX_DEPTH {
            return None;
        }
        let ends = |t: &str| mentions(t, &["exit", "exec", "set", "shopt", "eval", "source", "trap"]);
        let can_end = self.errexit || ends(&action) || self.functions.iter().any(|(_, body)| ends(body));
        let saved = (self.uncoupled.clone(), self.status_read_elsewhere, self.exited);
        // What the walk said of the `trap` command's own status is not the action's: set in the
        // probe's own shell, the action's `exit` is the script's status. Set elsewhere (a
        // subshell, a function's body), where that `exit` ends is not followed: a warning.
        self.uncoupled = match (can_end, self.in_top_shell) {
            (false, _) => Some(EXIT_ACTION.to_string()),
            (true, true) => None,
            (true, false) => Some(EXIT_ACTION_ELSEWHERE.to_string()),
        };
        // The script's only `trap` is this one: the action's own statuses are walked as a
        // script's (a trap elsewhere may read any status: `status::rules`).
        let traps: usize =
            self.texts.iter().map(|t| super::super::flow::code_view(t).matches("trap").count()).sum();
        self.status_read_elsewhere &= traps != 1;
        // (The comment keeps `always_exits_zero` from reading the text alone: a function it calls
        // may `exit 1`.)
        let found = self.analyze_script(&format!("{action}\nexit 0 # the status it had"), depth + 1);
        (self.uncoupled, self.status_read_elsewhere, self.exited) = saved;
        found
    }

    /// Whether `script`, the probe's own script, sets a top-level `trap 'exit 0' EXIT`
    /// ([`exits::exit_trap_status`], the script's only `trap`: [`exits::trap_may_hold`]) that it
    /// certainly reaches: a statement of its own (not in a list, a branch or a pipeline), after
    /// text that names nothing that can end the script or wait on a dependency first (`exit`,
    /// `return`, `exec`, `set`, errexit, `while`/`until`, `source`, `.`, `eval`, `kill`, `${X:?}`)
    /// in a shell started without `-e`. Every way out of the script then runs the trap, whose
    /// `exit 0` is the script's status. Also a trap ending with another literal status
    /// (`exits::exit_trap_status`): its status N is returned, and the probe fails every time.
    pub(super) fn exit_zero_trap_ahead(&mut self, script: &str) -> Option<u8> {
        if !script.contains("trap")
            || self.errexit
            || !self.functions.is_empty()
            || !script.is_ascii()
            || script.contains("<<")
            || self.env.vars.contains_key("SHELLOPTS")
            || !exits::trap_may_hold(script)
        {
            return None;
        }
        let parsed = self.parse(script).filter(|p| p.gap.is_none() && p.trees.len() == 1)?;
        let root = parsed.trees[0].root_node();
        let mut c = root.walk();
        let trap = root.named_children(&mut c).find(|k| {
            k.kind_name() == "command"
                && k.child_by_field("name").is_some_and(|m| script.get(m.byte_range()) == Some("trap"))
        })?;
        if trap.next_sibling().is_some_and(|s| s.kind_name() == "&") {
            return None;
        }
        let mut c = trap.walk();
        let args: Option<Vec<String>> = trap
            .children_by_field("argument", &mut c)
            .map(|a| {
                let t = script.get(a.byte_range())?;
                match a.kind_name() {
                    "raw_string" => t.strip_prefix('\'')?.strip_suffix('\'').map(str::to_string),
                    "string" if !t.contains(['$', '`', '\\']) => {
                        t.strip_prefix('"')?.strip_suffix('"').map(str::to_string)
                    }
                    "word" if !t.contains(['$', '`', '\\', '\'', '"']) => Some(t.to_string()),
                    _ => None,
                }
            })
            .collect();
        let before = &script[..trap.start_byte()];
        let status = args.and_then(|a| exits::exit_trap_status(&a))?;
        (!mentions(
            before,
            &[
                "exit", "return", "exec", "set", "shopt", "errexit", "while", "until", "source", "eval",
                "kill",
            ],
        ) && !before.split_whitespace().any(|w| w == ".")
            && !{
                // (`${X:?}`, `${X?}` end the shell when X is unset; `$?` reads a status.)
                let rest = before.replace("${?}", "").replace("$?", "");
                rest.contains("${") && rest.contains('?')
            })
        .then_some(status)
    }
}
