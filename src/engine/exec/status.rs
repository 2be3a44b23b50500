//! Stage 2c: whether a command's exit status can reach the script's (an exec probe fails by its
//! exit status alone: Kubernetes docs, "Configure Liveness, Readiness and Startup Probes").
//!
//! Walked up the syntax tree from a simple command, on the paths bash 5.2 and dash take (bash
//! manual, "Exit Status", "Lists of Commands", "Pipelines", "Conditional Constructs" and `set -e`):
//! - a statement that is not the last of its list (script, `{ }`, `( )`, branch, loop body) has its
//!   status replaced by the next one's, unless errexit is on and the statement is not one of
//!   errexit's exceptions (an `if`/`elif` condition, a part of a `&&`/`||` list but the last, a
//!   command after `!`);
//! - `A && B`: A's failure is the list's status; `A || B`: A's failure only runs B, whose status is
//!   the list's: A is coupled only when B fails by itself (`exit 1`, `false`, a test, ...);
//! - an `if`/`elif` condition only chooses a branch: coupled when a branch (or, when a branch
//!   leaves the script, the code after the `if`) fails by itself or changes what runs later
//!   (an assignment, a file written);
//! - a pipeline's status is its last command's (or any command's with `pipefail`), but a command
//!   that reads the output of the one before it carries its outcome (`remote | grep -q x`);
//! - `! A` is A inverted; a command substitution's output is data the script uses (coupled), and
//!   so is a file a command writes that the script names again (`remote > f; grep x f`).
//!
//! - `$?` (and a bare `exit`) reads the status of the command just before it: only one in the
//!   statement right after the check (its `||` side, its `if`, a function body or a loop around
//!   it) reads the check's; `ret=$?` there is followed to where `ret` is read;
//! - `set -e`/`set -o pipefail` apply from where they run in the shell that runs them; a last
//!   `exec CMD` gives the script CMD's status; a `trap` that only writes output or removes files
//!   changes no status.
//!
//! Checked against bash 5.2.15 and dash 0.5.12 with stubs of `pg_isready`/`nc` exiting 1 and 0
//! (`tests/shell_flow.rs`, `a_check_whose_status_is_discarded_is_a_warning`,
//! `status_reads_options_and_harmless_fallbacks_are_judged_where_they_are`). Anything this walk
//! does not understand keeps the command coupled (today's verdict): it only ever turns a denial
//! into a warning where the status is certainly not used.
//!
//! Here: the walk up the tree (`discarded`, `discarded_at`), the script-wide [`Rules`], the
//! statement helpers and the table of the script's functions (`top_functions`, `functions_at`).
//! Its children:
//! - `options`: whether errexit and pipefail are on at a command, and the facts one scan of a
//!   tree gives every command of it (`TreeFacts`);
//! - `harmless`: what a command after (or beside) the check may do without failing the script
//!   or changing what runs later, and where a status or an assigned variable is only written;
//! - `data`: the command-name lists those judgements use;
//! - `lost`: process substitutions, counted `until` retries and `$?` tests an outage passes.

mod blind;
mod calls;
mod constructs;
mod data;
mod err_log;
mod filters;
use filters::trivial_reader;
mod functions;
use functions::{Funcs, functions_at, known_ok};
pub(super) use functions::{TopFunction, known_ok_with};
mod harmless;
mod memo;
pub(super) use memo::WalkCache;
mod inverted_list;
pub(super) use inverted_list::{INVERTED_LIST, INVERTED_OR};
mod loop_exits;
mod lost;
mod options;
mod outage;
mod tested;
pub(super) use outage::INVERTED_IF;
mod output;
mod path_vars;
pub(super) use path_vars::{named_elsewhere_in, path_variables, resolve_path};
mod reasons;
mod replay;
pub(super) use output::output_kept;
use output::output_used_above;
use reasons::*;
mod shapes;
mod subst;
pub(super) use subst::clears_errexit_in_bash;
mod texts;
mod trap_actions;
mod trap_keeps;
pub(super) use trap_keeps::unread_exit_action;
mod trap_values;
mod traps;
mod tree;
mod unread;
mod zero;

use crate::engine::exec::kinds::KindName;
use tree_sitter::Node;

use super::flow::mentions;
use super::shell::Walk;
pub(super) use blind::blind_readers_only;
use constructs::{
    callers_never_name, errexit_ends_subshell, forces_zero, loop_condition, only_bare_waits,
    only_leaves_its_loop, subshell_only_exits, tries_each_host, unread_declaration,
};
use data::PLAIN;
pub(super) use harmless::file_targets;
pub(super) use harmless::reads_status_text;
use harmless::{
    blank_plain_strings, harmless, harmless_after, harmless_text, last_status_word, may_only_fail,
    next_reads_status, selection_is_harmless, unread_assignment, writes_a_named_file,
};
pub(super) use options::shebang_errexit;
use options::{Opt, option_on_at, options_at, with_facts};

pub(super) use constructs::{Callers, KnownBody, alike_definitions, errexit_ignored_around};
pub(super) use harmless::{leaves_lasting_state, leaves_state};
pub(super) use options::{TreeFacts, defines_stateful_function, sets_errexit};
pub(super) use texts::{defined_functions, reads_caller_status, shadowing_call};
use texts::{literal_defaults, variable_exits_as_literal};
pub(super) use trap_values::plain_value;
pub(super) use traps::{
    bodies_of, exits_zero_handler, handler_exit_status, harmless_traps, harmless_traps_expanding,
    literal_status,
};
pub(super) use tree::each_node;
use tree::{
    each_node_pruned, in_case_body, in_condition, is_list_of_statements, last_statement, leaves, parent_on,
    path_to, siblings_after, tree_root,
};

/// What the script's text allows the walk to conclude: `None` when something in it can read a
/// status the walk does not follow (`PIPESTATUS`, a `return` bare or with a computed status, an
/// `exit` with a computed status other than `$?` or one variable's, `$RC`, a `trap` whose action is not [`harmless_traps`],
/// `wait` with an operand or option, `eval`, `source`/`.`, `kill`, `coproc`, `lastpipe`, a known
/// function whose body may read its caller's `$?`, [`reads_caller_status`]). A `while`/`until` loop, which can wait on the dependency until
/// the probe times out, is never harmless (`data::NOT_HARMLESS`); one the check ends is judged
/// where it is (`discarded`).
/// `$?`, a bare `exit`, `exit $?`, `exec`, `set -e` and `set -o pipefail` are judged where they are
/// (`discarded`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Rules {
    /// errexit is on from the start: the shell's own `-e` (a `#!` line's for a file executed
    /// directly, `script::files`), or the caller's
    /// (for a function's body, whose caller mentions it anywhere).
    pub(super) errexit: bool,
    /// pipefail is on from the start (the shell's options, or the caller's for a function's body).
    pub(super) pipefail: bool,
    /// The shell is bash by name (`bash -c`, `#!/bin/bash`), not `sh`: errexit is cleared in its
    /// command substitutions (`subst::bash_clears_errexit`).
    pub(super) bash: bool,
    /// The shell functions the script may call (defined in it or before it): a call of one may
    /// run anything (`f() { exit 1; }`), so it is never taken as harmless.
    pub(super) functions: Vec<String>,
    /// A function named like a command the walk reads by name is called (`texts::shadowing_call`):
    /// a `$?` test is not read as the builtin's (`lost::status_test`).
    pub(super) shadowed: bool,
    /// The functions defined before the script runs (a caller's), certainly, once: name and body.
    pub(super) known: Vec<(String, String)>,
    /// Functions were defined before the script runs: it may be a function's body, whose caller
    /// can read what it assigns. A variable is then never taken as unread ([`only_echoed`]).
    pub(super) called: bool,
    /// The names the container's `env` declares, and whether it has `envFrom` (which may declare
    /// any name): such a variable is exported, so a program run later reads a new value given
    /// to it (break9 A2).
    pub(super) container_env: (Vec<String>, bool),
    /// The text is a called function's body (`Ctx::splitting_body`): `return` returns from it.
    pub(super) in_function: bool,
    /// For a called function's body, the code besides it that runs in its shell and may read
    /// what it assigns ([`Callers`]).
    pub(super) callers: Option<Callers>,
    /// For a called function's body: what the caller runs next after the call certainly fails
    /// (`f; exit 1`, `f; echo down; false`), so an `exit 0` the body may take decides the
    /// script's status (`zero::exits_past_body`).
    pub(super) caller_fails_after: bool,
    /// The known functions harmless to call ([`known_ok`]), made when first asked, or given by
    /// [`Rules::share_known_ok`].
    known_ok: std::cell::OnceCell<std::rc::Rc<Vec<String>>>,
    /// [`functions_at`] where no function the tree defines is harmless yet: made once.
    base: std::cell::OnceCell<Funcs>,
}

/// The [`known_ok`] of the last [`Rules`] whose functions were a version of the calling shell's
/// functions (`Ctx::function_set`), and how many of them were uncertain then.
pub(super) type KnownOkCache = std::cell::RefCell<Option<(usize, std::rc::Rc<Vec<String>>)>>;

impl Rules {
    /// [`known_ok`] of these rules, made once.
    fn known_ok(&self) -> &std::rc::Rc<Vec<String>> {
        self.known_ok.get_or_init(|| std::rc::Rc::new(known_ok(self)))
    }

    /// For rules whose text defines no function, so that their functions and known bodies are the
    /// calling shell's list (`known`, as given to [`rules`]) less its `uncertain` ones: takes
    /// [`known_ok`] from `cache` when it was made for the same list (`cache` belongs to one version
    /// of the list) with as many uncertain names (a set that only grows), or makes it and keeps it
    /// there. Each call of a function analyses its body anew; this makes the known functions'
    /// part once per version of the list, not once per call (break-it pass, #9).
    /// `body` gives each known body's facts ([`known_ok_with`]).
    pub(super) fn share_known_ok(
        &self,
        known: &[(String, String)],
        uncertain: usize,
        cache: &KnownOkCache,
        body: &dyn Fn(&str) -> std::rc::Rc<KnownBody>,
    ) {
        if self.functions.len() != known.len() {
            return;
        }
        if let Some((n, ok)) = &*cache.borrow()
            && *n == uncertain
        {
            let _ = self.known_ok.set(ok.clone());
            return;
        }
        let ok = self.known_ok.get_or_init(|| std::rc::Rc::new(known_ok_with(self, body)));
        *cache.borrow_mut() = Some((uncertain, ok.clone()));
    }
}

/// The [`Rules`] of script text `src` run by a shell whose options (or whose caller, for a
/// function's body) turn errexit (`errexit`) or pipefail (`pipefail`) on, where the functions
/// `known` are defined (`uncertain`: those of them that may have been defined otherwise;
/// `known_reads_status`: a body of one of them may read the status its caller left,
/// [`reads_caller_status`]; `dash`: the script is read as dash runs it, `harmless_traps`).
#[allow(clippy::too_many_arguments)]
pub(super) fn rules(
    src: &str,
    errexit: bool,
    pipefail: bool,
    known: &[(String, String)],
    known_reads_status: bool,
    uncertain: &std::collections::HashSet<String>,
    container_env: (Vec<String>, bool),
    dash: bool,
) -> Option<Rules> {
    // (Read as the shell runs it: a comment or a printed string names no command, s25.)
    let code = super::flow::code_view(src);
    let src: &str = &code;
    if src.contains("PIPESTATUS")
        || (mentions(src, &["trap"]) && !harmless_traps(src, errexit, known, dash))
        || mentions(src, &["eval", "source", "coproc", "lastpipe"])
        // (`kill $PID` of a background child signals nothing of this shell, s25.)
        || (mentions(src, &["kill"]) && !trap_values::kills_only_children_outside_traps(src))
        || texts::may_select(src)
        // (A `wait $PID` in a trap's action was judged with the trap, s26.)
        || (mentions(src, &["wait"]) && !only_bare_waits(&trap_values::without_trap_commands(src)))
        || known_reads_status
    {
        return None;
    }
    // (A word `.` needs a `.` in the text: one without is not split.)
    if src.contains('.') && src.split_whitespace().any(|w| w == ".") {
        return None;
    }
    // `exit`/`return` with a literal status only; `exit` bare or `exit $?` gives the last
    // command's status, judged where it is (`reads_status`); `exit $RC`, RC's value, is followed
    // where RC is assigned (`texts::variable_exits_as_literal`).
    // (A script that does not hold the names has no such word: its tokens are not looked at.)
    let names_a_status = src.contains("exit") || src.contains("return");
    // (`echo "exit code $?"`: a word in a double-quoted string that runs nothing is no command.)
    let unquoted = if names_a_status {
        replay::status_exits_as_read(&literal_defaults(&blank_plain_strings(&variable_exits_as_literal(src))))
    } else {
        String::new()
    };
    let tokens = unquoted
        .split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '{' | '}' | '`'));
    let statuses_literal = !names_a_status
        // (`trap 'echo failed; exit 0' ERR`: a quote closing after the status, s22.)
        || tokens.clone().zip(tokens.skip(1)).all(|(w, status)| match w {
            "exit" => {
                let status = status.strip_suffix(['\'', '"']).unwrap_or(status);
                status.is_empty() || last_status_word(status) || status.bytes().all(|b| b.is_ascii_digit())
            }
            // `return $?` and `return $rc` as `exit $?` and `exit $rc`: the walk reads them as
            // status reads ([`reads_status_text`]) and follows `rc=$?` to them (s23: `f() { local
            // out=$(check); rc=$?; return $rc; }; f` exits 0 / 0 in bash 5.2 and dash 0.5.12).
            "return" => {
                !status.is_empty()
                    && (status.bytes().all(|b| b.is_ascii_digit())
                        || last_status_word(status)
                        || texts::is_variable_word(status))
            }
            _ => true,
        });
    if !statuses_literal || src.trim_end().ends_with("return") {
        return None;
    }
    let mut functions: Vec<String> = known.iter().map(|(name, _)| name.clone()).collect();
    functions.extend(defined_functions(src));
    // A function named like a command the walk reads by name, and called (`echo() { :; }; ...;
    // echo $?`), runs where the walk would run the command: a doubt (`Ctx::analyze_script` warns
    // instead of denying). One named like no command, or never called, changes nothing (s19:
    // `test() { return 1; }; pg_isready -h db; rc=$?; [ $rc -ne 3 ]` runs the builtin `[`).
    let names: Vec<&str> = known.iter().map(|(name, _)| name.as_str()).collect();
    let shadow = texts::shadowing_call(src, &names);
    // An alias (`alias true='exit 1'`: sh expands aliases) or a function named like a command
    // taken as harmless (`true() { exit 1; }`) may fail where the walk sees none (break9 A9).
    if mentions(src, &["alias"]) || shadow.as_deref().is_some_and(|f| PLAIN.contains(&f)) {
        return None;
    }
    Some(Rules {
        errexit,
        pipefail,
        bash: false,
        shadowed: shadow.is_some(),
        functions,
        known: known.iter().filter(|(name, _)| !uncertain.contains(name)).cloned().collect(),
        called: !known.is_empty(),
        container_env,
        in_function: false,
        callers: None,
        caller_fails_after: false,
        known_ok: std::cell::OnceCell::new(),
        base: std::cell::OnceCell::new(),
    })
}

/// The text of `n` in the script.
fn text<'s>(n: Node<'_>, walk: &Walk<'s>) -> &'s str {
    walk.src.get(n.start_byte()..n.end_byte()).unwrap_or("")
}

/// The named children of `n` that are statements (not comments or here-document parts).
fn is_statement(k: Node<'_>) -> bool {
    k.is_named() && !matches!(k.kind_name(), "comment" | "heredoc_body" | "heredoc_end")
}

/// Why the exit status of `n` (a simple command, or one with redirections) cannot reach the
/// script's, or `None` when it may (or the walk cannot tell). Where the walk finds no reason, or
/// a doubt about a `$?` test, the script replayed for each outage status decides (`replay`).
pub(super) fn discarded<'t>(n: Node<'t>, walk: &Walk<'t>, rules: &Rules) -> Option<&'static str> {
    let walked = discarded_at(n, walk, rules);
    let found = walked.filter(|(why, _)| *why != lost::STATUS_DOUBT);
    let replayed = found.is_none();
    let (why, at) = match replayed.then(|| replay::verdict(n, walk, rules)).flatten() {
        Some(replay::Verdict::Discarded(why, at)) => (why, at),
        Some(replay::Verdict::Coupled) => return None,
        None => walked?,
    };
    // An outage that makes the script exit 0 leaves the check's output unread (s24's verdict
    // hunt: `out=$(check); rc=$?; if [ $rc -ne 0 ]; then exit 0; fi; echo "$out" | grep -q x`,
    // `if ! out=$(check); then exit 0; fi; ...`, 0 / 0 in bash 5.2 and dash 0.5.12): it is read
    // only while the server answers, which no outage can turn into a failure.
    let exits_zero = |why: &str| why == replay::REPLAYED_EXITS_ZERO || why == outage::OUTAGE_EXITS_ZERO;
    if !exits_zero(why) && output_used_above(at, walk) {
        let replay_exits_zero = !replayed
            && matches!(
                replay::verdict(n, walk, rules),
                Some(replay::Verdict::Discarded(replay::REPLAYED_EXITS_ZERO, _))
            );
        if replay_exits_zero {
            return Some(replay::REPLAYED_EXITS_ZERO);
        }
        return output::doubt_where_read(n, walk);
    }
    // (The plain replay's words where no output is captured: `rc=$?; [ $rc -ne 3 ]`.)
    let captured = text(at, walk).contains("$(") || text(at, walk).contains('`');
    if why == replay::REPLAYED_EXITS_ZERO && !captured {
        return Some(replay::REPLAYED);
    }
    Some(why)
}

/// [`discarded`], with the node whose status is the one found discarded.
fn discarded_at<'t>(n: Node<'t>, walk: &Walk<'t>, rules: &Rules) -> Option<(&'static str, Node<'t>)> {
    // Its output is data: a file it writes that the script names again (not blind to it, s27).
    if blind::check_writes_a_read_file(n, walk) {
        return None;
    }
    // (The root of the tree being walked is kept: going up to it costs a walk down from the
    // root per step, the depth squared.)
    let root = tree_root(n, walk);
    let (mut errexit, pipefail) = options_at(n, root, walk, rules)?;
    let funcs = functions_at(n, walk, rules);
    let mut at = n;
    // errexit does not apply to `at`'s failure (one of its exceptions was passed).
    let mut exempt = false;
    // `at` succeeds when the check fails (a `!` passed an odd number of times), and whether
    // `at`'s status still follows the check's at all (not once a `||` whose right side only
    // writes, or a later pipeline element, gives it): for a loop the check ends.
    let (mut negated, mut sense_lost) = (false, false);
    // `Node::parent` walks down from the root: a step up with it costs the depth, which nested
    // loops (break10 C1: `for h in ...; do ` 150 deep took 12 s in a debug build) make large.
    // The path from the root is found from the last command's (`memo`), each step up a step
    // along it. A step out of an `&&`/`||` list costs a unit (49 `&& true`, each charged the
    // depth, spent the object's units: a00d258), any other the depth (the constructs' checks).
    // A walk reaching a node in a state an earlier one passed stops with its answer (`memo`).
    let (path, steps) = walk.status_cache.path_to(walk, root, n);
    work(walk, steps.max(1));
    // (`n`'s ancestors are the path, read from its end.)
    let cleared = errexit && subst::bash_clears_errexit_below(path.iter().rev().copied(), walk, rules);
    errexit &= !cleared;
    let depth = path.len().max(1);
    let mut on_path = path.len();
    let mut parent_of = |x: Node<'t>| parent_on(&path, &mut on_path, n, x).or_else(|| x.parent());
    let mut passed = Vec::new();
    let found = (|| loop {
        let state = memo::State::new(walk, at, [errexit, pipefail, exempt, negated, sense_lost]);
        if let Some(found) = walk.status_cache.found(&state, &funcs) {
            return found;
        }
        passed.push(state);
        let parent = parent_of(at)?;
        work(walk, if parent.kind_name() == "list" { 1 } else { depth });
        match parent.kind_name() {
            kind if is_list_of_statements(kind)
                || matches!(kind, "if_statement" | "elif_clause" | "process_substitution") =>
            {
                if matches!(parent.kind_name(), "if_statement" | "elif_clause") && in_condition(at, parent) {
                    if !last_statement(at, parent) {
                        return (!next_reads_status(at, parent, walk, rules)).then_some((NOT_LAST, at));
                    }
                    // errexit ignores a condition; the condition only chooses a branch.
                    let construct =
                        if parent.kind_name() == "elif_clause" { parent_of(parent)? } else { parent };
                    work_text(walk, text(construct, walk));
                    if reads_status_text(text(construct, walk)) {
                        return None;
                    }
                    if only_leaves_its_loop(construct, walk) {
                        return Some((LEAVES_LOOP, at));
                    }
                    if let Some(looped) = lost::for_retry(construct, walk, rules, &funcs) {
                        return Some((lost::FOR_RETRIES, looped));
                    }
                    if (selection_is_harmless(at, construct, walk, &funcs)
                        && !zero::exits_past_body(at, construct, walk, rules))
                        || blind::same_writes(at, construct, walk)
                        || zero::branches_end_zero(at, construct, walk, rules, &funcs)
                    {
                        return Some((CONDITION, at));
                    }
                    // Branches that differ: the one the outage takes decides (`outage`).
                    if sense_lost {
                        return None;
                    }
                    return outage::outage_branch(n, at, parent, construct, pipefail, walk, rules, &funcs)
                        .map(|why| (why, at));
                }
                // No shell reads a process substitution's status: every statement in it, last
                // or not, only writes to its reader (s16, vd3 ps08: `< <(check; echo done)`).
                if parent.kind_name() == "process_substitution" {
                    (exempt, at) = (false, parent);
                    errexit = option_on_at(parent, root, walk, Opt::Errexit, rules.errexit);
                    continue;
                }
                if matches!(parent.kind_name(), "case_item") && !in_case_body(at, parent) {
                    return None;
                }
                if at.next_sibling().is_some_and(|s| s.kind_name() == "&") {
                    // Run in the background (only a script whose `wait`s are bare gets here: their status is 0).
                    return Some((BACKGROUND, at));
                }
                if !last_statement(at, parent) {
                    if !errexit || exempt || errexit_ignored_around(parent) {
                        // `pg_isready -h db; case $? in 3) exit 1;; esac`: no item an outage
                        // selects fails (`shapes::case_on_outage_status_is_harmless`).
                        let next = siblings_after(at, parent).find(|s| is_statement(*s));
                        if next.is_some_and(|next| {
                            shapes::case_on_outage_status_is_harmless(at, next, walk, &funcs)
                        }) {
                            return Some((shapes::CASE_SELECTS, at));
                        }
                        if let Some(why) = next.and_then(|next| lost::status_test(at, next, walk, rules)) {
                            return Some((why, at));
                        }
                        return (!next_reads_status(at, parent, walk, rules)).then_some((NOT_LAST, at));
                    }
                    // errexit ends the `( )` around it, not the script: the subshell's status is
                    // the failure, judged where the subshell is (bash manual, "Command Execution
                    // Environment"), when what it skips changes nothing.
                    let sub = errexit_ends_subshell(at, parent, walk, &funcs)?;
                    errexit = option_on_at(sub, root, walk, Opt::Errexit, rules.errexit);
                    at = sub;
                    continue;
                }
                match parent.kind_name() {
                    "program" => return None,
                    "else_clause" | "elif_clause" => at = parent_of(parent)?,
                    "case_item" => at = parent_of(parent)?,
                    "do_group" => {
                        // `for h in db localhost; do pg_isready -h $h; done`: the last round's
                        // status, the local check's, is the loop's (errexit would end the
                        // script at the first).
                        if !errexit && let Some(looped) = shapes::last_round_is_local(at, walk) {
                            return Some((shapes::LAST_ROUND, looped));
                        }
                        let looped = parent_of(parent)?;
                        if looped.kind_name() != "for_statement" {
                            return None;
                        }
                        at = looped;
                    }
                    // errexit's exceptions end at a subshell: its status is a failure like any
                    // command's (bash manual, `set -e`: "a compound command other than a
                    // subshell"; break9 A5), and errexit is the one of the shell around it.
                    "subshell" | "process_substitution" => {
                        exempt = false;
                        errexit = option_on_at(parent, root, walk, Opt::Errexit, rules.errexit);
                        at = parent;
                    }
                    _ => at = parent,
                }
            }
            "list" => {
                let left = parent.named_child(0)?;
                let op = parent.child(1)?.kind_name();
                if left != at {
                    at = parent;
                    continue;
                }
                let right = parent.named_child(parent.named_child_count().checked_sub(1)?)?;
                exempt = true;
                // tree-sitter-bash hangs `A || B > f`'s redirection on the list, bash on B: B
                // writes the file, which can fail (a read-only root filesystem), or a closed
                // stdout (`>&-`).
                let redirected = parent_of(parent).is_some_and(|r| {
                    r.kind_name() == "redirected_statement"
                        && !harmless_text(walk.src.get(parent.end_byte()..r.end_byte()).unwrap_or(""), &[])
                });
                if op == "||" && reads_status_text(text(right, walk)) {
                    return None;
                }
                match op {
                    // `C || exit 0; exit 1`: inverted, not discarded (s26).
                    "||" if !redirected && inverted_list::inverted_or(parent, right, walk, rules, &funcs) => {
                        return Some((INVERTED_OR, parent));
                    }
                    "||" if !redirected
                        && (harmless(right, walk, &funcs)
                            || !rules.called && unread_assignment(right, walk, rules)
                            || zero::same_value_assignment(parent, right, walk, &funcs))
                        && !leaves(right, walk) =>
                    {
                        return Some((OR_ELSE, parent));
                    }
                    // B only writes, but the write can fail (`|| echo down >> /var/log/x`, `>&-`):
                    // the list's status is B's, followed further up (`; curl ...` replaces it),
                    // and errexit applies to it.
                    "||" if may_only_fail(right, walk, &funcs) && !leaves(right, walk) => {
                        exempt = false;
                        sense_lost = true;
                        at = parent;
                    }
                    // `|| ( echo down; exit 1 )`: the `exit` ends the subshell, whose status is
                    // the list's (bash manual, "Command Execution Environment"), followed on.
                    "||" if !redirected && shapes::continues_its_loop(parent, right, walk) => {
                        return Some((OR_ELSE, parent));
                    }
                    // `|| { echo down; exit 0; }`, `|| ( echo down; exit 0 )`, and in a function's
                    // body `|| { echo down; return 0; }`: as `|| exit 0` (s22).
                    "||" if !redirected && zero::or_ends_zero(parent, walk, rules, &funcs) => {
                        return Some((OR_ZERO, parent));
                    }
                    "||" if !redirected && subshell_only_exits(right, walk, &funcs) => {
                        exempt = false;
                        sense_lost = true;
                        at = parent;
                    }
                    "||" if !redirected && forces_zero(parent, right, walk, rules, &funcs) => {
                        return Some((OR_ZERO, parent));
                    }
                    "||" if !redirected
                        && let Some(looped) = lost::bounded_condition(parent, right, walk, rules, &funcs) =>
                    {
                        return Some((lost::RETRIES, looped));
                    }
                    "||" => return None,
                    "&&" if let Some(looped) = tries_each_host(at, parent, right, walk) => {
                        return Some((NEXT_HOST, looped));
                    }
                    "&&" if let Some(looped) = lost::counted_break(parent, walk, rules, &funcs) => {
                        return Some((lost::RETRIES, looped));
                    }
                    // `C && exit 1 || exit 0`: inverted, not discarded (s25).
                    "&&" if inverted_list::inverted_list(parent, right, walk, rules, &funcs) => {
                        return Some((INVERTED_LIST, parent));
                    }
                    // In a function's body, `C && return 0` before harmless statements and a last
                    // `return 0`: 0 either way (s25), the list's status replaced by the rest.
                    "&&" if rules.in_function
                        && text(right, walk).split_whitespace().eq(["return", "0"])
                        && zero::returns_zero_after(parent, walk, rules, &funcs) =>
                    {
                        at = parent;
                    }
                    "&&" if let Some(looped) = lost::for_retry(parent, walk, rules, &funcs) => {
                        return Some((lost::FOR_RETRIES, looped));
                    }
                    // `check && touch /tmp/ok`: B only writes a file the script never reads, and
                    // may fail: the list's status, the check's or B's, is followed on (s25). (Only
                    // that write: a chain of `&& date` would be walked up from each `date`, its
                    // length squared.)
                    "&&" if !harmless(right, walk, &funcs)
                        && !zero::only_tests(right, walk, rules)
                        && (rules.called || !unread_assignment(right, walk, rules))
                        && (redirected || !unread::writes_only_unread(right, walk, &funcs)) =>
                    {
                        return None;
                    }
                    "&&" if leaves(right, walk) && !harmless_after(parent, walk, &funcs) => {
                        return None;
                    }
                    "&&" => at = parent,
                    _ => return None,
                }
            }
            "negated_command" => {
                exempt = true;
                negated = !negated;
                at = parent;
            }
            "while_statement" => {
                let found = loop_condition(at, parent, walk, rules, &funcs, (negated, sense_lost, errexit));
                if found.is_some() || pipefail || !loop_exits::piped_loop_ends(at, parent, walk, &funcs) {
                    return found;
                }
                (exempt, sense_lost, at) = (false, true, parent);
            }
            "pipeline" => {
                let last = {
                    let mut c = parent.walk();
                    parent.named_children(&mut c).filter(|k| is_statement(*k)).last()?
                };
                if last != at && !pipefail {
                    // Its status is gone, but the commands after it read its output.
                    let mut c = parent.walk();
                    let after: Vec<Node<'_>> =
                        parent.named_children(&mut c).filter(|k| k.start_byte() > at.start_byte()).collect();
                    if after.iter().all(|k| trivial_reader(*k, walk) || subst::ignores_stdin(*k, walk, rules))
                    {
                        return Some((PIPED_AWAY, parent));
                    }
                    // `remote | cat`, `remote | tee -a log`: a filter exits 0 whatever it reads
                    // (bash manual, "Pipelines"; `filters::plain_filter`): the pipeline's output,
                    // the check's, is judged where it goes (`output_used_above`).
                    if after.iter().all(|k| {
                        trivial_reader(*k, walk)
                            || filters::plain_filter_element(*k, walk, &rules.functions)
                            || shapes::harmless_read_loop(*k, walk, &funcs)
                    }) {
                        return Some((PIPED_THROUGH, parent));
                    }
                }
                if writes_a_named_file(parent, walk) {
                    return None;
                }
                sense_lost |= last != at;
                at = parent;
            }
            // `while read l; do ...; done < <(remote)`, `cat <(remote)`: as for a pipeline.
            "file_redirect" | "command" if at.kind_name() == "process_substitution" => {
                if let Some(statement) = subst::output_procsub(at, parent) {
                    return Some((subst::PROCSUB_OUT, statement));
                }
                match lost::procsub_reader(at, parent, walk, rules, &funcs)? {
                    Ok((why, read)) => return Some((why, read)),
                    Err(read) => (exempt, sense_lost, at) = (false, true, read),
                }
            }
            "redirected_statement" => {
                if blind::writes_a_read_file(at, parent, walk) {
                    return None;
                }
                at = parent;
            }
            // `x=$(check >/dev/null; echo ok)`: neither its status nor its output is the value's.
            "command_substitution"
                if (!errexit || exempt)
                    && !last_statement(at, parent)
                    && subst::writes_nothing_to_it(at, walk)
                    && !next_reads_status(at, parent, walk, rules) =>
            {
                return Some((NOT_LAST, parent));
            }
            // `echo "db: $(pg_isready -h db)"`: the substitution's status is lost (echo's is 0),
            // its output is echo's (used only if echo's output is: `output_used_above`). errexit
            // ends it at a check not last: only when what that skips is harmless (s15).
            "command_substitution"
                if !errexit
                    || exempt
                    || last_statement(at, parent)
                    || shapes::errexit_skips_only_output(at, parent, walk, &funcs) =>
            {
                let prints = shapes::Prints::new(at, parent);
                let mut up = parent_of(parent)?;
                while matches!(up.kind_name(), "string" | "concatenation") {
                    up = parent_of(up)?;
                }
                // `x=$(remote) y=$(true)`: the status is the last substitution's (`subst`);
                // `x=$(remote; echo done)` without errexit there: echo's is the value's.
                // (errexit inside the substitution, then where it is: `subst::bash_clears_errexit`.)
                let inside = errexit;
                if cleared {
                    // (`up`'s ancestors from the path when it is on it.)
                    errexit = option_on_at(up, root, walk, Opt::Errexit, rules.errexit)
                        && !match path.iter().rposition(|p| *p == up) {
                            Some(i) => {
                                subst::bash_clears_errexit_below(path[..i].iter().rev().copied(), walk, rules)
                            }
                            None => subst::bash_clears_errexit(up, walk, rules),
                        };
                }
                let not_last = (!inside || exempt) && !last_statement(at, parent);
                let later = subst::later_substitution(parent, up);
                if up.kind_name() == "variable_assignment"
                    && (later || not_last && !next_reads_status(at, parent, walk, rules))
                    && parent_of(up).is_some_and(subst::assignment_statement_in)
                    && up.child_by_field("name").is_some_and(|name| {
                        tested::value_unused(name, &prints, walk, rules)
                            && (!rules.called || callers_never_name(name, walk, rules))
                    })
                {
                    return Some((if later { subst::LATER_SUBSTITUTION } else { NOT_LAST }, up));
                }
                // `r=$(remote); case "$r" in ...`: as below, `r` read only by harmless cases
                // (`shapes::only_case_subject`).
                if up.kind_name() == "variable_assignment"
                    && up.parent().is_some_and(|p| is_list_of_statements(p.kind_name()))
                    && !rules.called
                    && up
                        .child_by_field("name")
                        .is_some_and(|name| shapes::only_case_subject(name, walk, &funcs))
                {
                    exempt = false;
                    at = up;
                    continue;
                }

                // `out=$(remote)`: the assignment's status is the substitution's (the last one's:
                // `subst::later_substitution`), followed on (a statement, a condition, a part of
                // `&&`/`||`, after `!`); its value must only be written out (`echo "$out"`).
                if up.kind_name() == "variable_assignment"
                    && parent_of(up).is_some_and(subst::assignment_statement_in)
                    && up.child_by_field("name").is_some_and(|name| {
                        tested::value_unused(name, &prints, walk, rules)
                            && (!rules.called || callers_never_name(name, walk, rules))
                    })
                {
                    exempt = false;
                    at = up;
                    continue;
                }
                // `export X=$(remote)` (`local`, `readonly`, `declare`, `typeset`): the
                // declaration's status is its own, 0, the substitution's lost.
                if up.kind_name() == "variable_assignment"
                    && let Some(decl) = parent_of(up).filter(|d| d.kind_name() == "declaration_command")
                    && unread_declaration(up, decl, walk, rules)
                {
                    let keyword = text(decl, walk).split_whitespace().next().unwrap_or("");
                    return Some((declared(keyword), decl));
                }
                // `case "$(redis-cli -h cache ping)" in PONG) ...`: the output only chooses
                // the item, whose status is the case's (`shapes::case_is_harmless`).
                if let Some(case) = shapes::case_of_subject(parent, up) {
                    return shapes::case_is_harmless(case, walk, &funcs, |_| true)
                        .then_some((shapes::CASE_SELECTS, case));
                }
                if let Some(case) = subst::case_of_pattern(parent, up) {
                    let harmless = shapes::case_is_harmless(case, walk, &funcs, |_| true);
                    return Some((if harmless { shapes::CASE_SELECTS } else { shapes::CASE_PATTERN }, case));
                }
                let name = up.child_by_field("name").map(|m| text(m, walk));
                // `echo "$(check; echo $?)"`: echo's status is 0 whatever it writes, the `$?`
                // included (v2 pass 11, 13: bash/dash 0 / 0); what it writes is judged where it
                // goes (`output_used_above`).
                if up.kind_name() == "command" && name == Some("echo") {
                    return Some((ECHOED, up));
                }
                if let Some(test) = shapes::never_empty_tested(parent, walk) {
                    return Some((shapes::NEVER_EMPTY, test));
                }
                if let Some(test) = subst::nonempty_with_errors(at, parent, walk, rules) {
                    return Some((subst::NONEMPTY_WITH_ERRORS, test));
                }
                if reads_status_text(text(up, walk)) {
                    return None;
                }
                if shapes::substitution_tested_for_emptiness(&prints, walk) {
                    return Some((shapes::STATUS_LINE, up));
                }
                // `curl -sf "http://localhost/?db=$(pg_isready -h db -q)"`: the argument is the
                // same whatever the check finds, the command's status its own.
                if shapes::constant_argument(at, parent, up, walk, &rules.functions) {
                    return Some((shapes::CONSTANT_ARGUMENT, up));
                }
                if let Some(test) = tested::tested_substitution(parent, walk, rules) {
                    return Some((tested::TESTED_OUTPUT, test));
                }
                if up.kind_name() != "command" || name != Some("logger") {
                    return None;
                }
                return Some((ECHOED, up));
            }
            _ => return None,
        }
    })();
    walk.status_cache.keep(passed, &funcs, found);
    walk.status_cache.put_path(walk, path);
    found
}

/// Counts `units` of work done on `walk`'s text (`Walk::status_work`).
fn work(walk: &Walk<'_>, units: usize) {
    walk.status_work.set(walk.status_work.get().saturating_add(units));
}

/// Bytes of text a scan of it (`harmless_text`, `reads_status_text`, `mentions`: a few passes
/// each) reads for one unit of work: about as long as a simple command's unit (s12, issue #9).
const TEXT_BYTES_PER_UNIT: usize = 32;

/// Counts the work of scanning `t` (a part of `walk`'s text): a unit per [`TEXT_BYTES_PER_UNIT`].
fn work_text(walk: &Walk<'_>, t: &str) {
    work(walk, t.len().div_ceil(TEXT_BYTES_PER_UNIT));
}
