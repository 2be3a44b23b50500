//! Which statements' exit status cannot fail the script, so that a check in one is walked as
//! [`UNCOUPLED`](super::UNCOUPLED) (a warning, not a denial): `uncoupled` for a check in the
//! background or left of an `|| true` / `| true`, `status_discarded` for what `status::discarded`
//! finds (not last, left of a harmless `||`, an `if` condition choosing a harmless branch, ...),
//! and never when the check sits in a call of a function whose body, or one it calls, can end
//! the script or leaves state behind (`Ctx::calls_a_function_with_effects`).

use crate::engine::exec::kinds::KindName;
use tree_sitter::Node;

use super::super::context::Ctx;
use super::super::shell::Walk;
use super::super::status;
use super::{mentions, succeeds_as_written, text};

impl Ctx<'_> {
    /// Whether `n` calls a shell function (defined before the script or in it) while a function
    /// body the call may run (`reach::reachable_bodies`; any body when that is not known) can end
    /// the script or leaves state behind (`status::leaves_state`) other than files nothing else
    /// names (`reach::only_writes_unread_files`): the call's status
    /// is then not the only way its outcome goes on (`main() { pg_isready -h db || exit 1; }; main;
    /// curl ...` exits 1 with the database down, and `f() { out=$(pg_isready -h db); }; f; [ -n
    /// "$out" ]` fails, bash 5.2 and dash 0.5.12): the body's own walk judges.
    pub(super) fn calls_a_function_with_effects(&self, n: Node<'_>, walk: &Walk<'_>) -> bool {
        let defined = walk.defined_functions.get_or_init(|| status::defined_functions(walk.src));
        if self.functions.is_empty() && defined.is_empty() {
            return false;
        }
        // (The words of `n` looked up among the names, not each name among the words; the
        // known functions' facts made once per version of the list.)
        let own = text(n, walk);
        let set = self.function_set();
        let calls = own
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .any(|w| set.names.contains(w) || defined.iter().any(|d| d == w));
        if !calls {
            return false;
        }
        // A pipeline element but the last runs in a subshell (bash manual, "Pipelines"; dash
        // always): what the body assigns, its `cd` and its `exit` end there, and its status is
        // the walk's to judge; only files it writes and what it signals outlive it (s23: `f() {
        // pg_isready -h db || exit 1; }; f | cat` exits 0 / 0 in bash 5.2 and dash 0.5.12).
        if not_last_pipeline_element(n)
            && !status::leaves_lasting_state(walk.src)
            && !self
                .functions
                .iter()
                .any(|(name, body)| mentions(own, &[name.as_str()]) && status::leaves_lasting_state(body))
        {
            return false;
        }
        let root = walk.top_functions.get(walk.tree.get()).map(|(r, _)| *r).unwrap_or_else(|| {
            let mut root = n;
            while let Some(p) = root.parent() {
                root = p;
            }
            root
        });
        let outer = self.texts.split_last().map_or(&[][..], |(_, o)| o);
        // Only the functions the call may run can end the script or leave state behind (s25).
        let defs = {
            let mut kept = self.tree_definitions.borrow_mut();
            match &*kept {
                Some((src, tree, defs)) if *tree == walk.tree.get() && src == walk.src => defs.clone(),
                _ => {
                    let defs = std::rc::Rc::new(super::reach::tree_definitions(root, walk));
                    *kept = Some((walk.src.to_string(), walk.tree.get(), defs.clone()));
                    defs
                }
            }
        };
        if let Some(bodies) = super::reach::reachable_bodies(own, &defs, defined, &self.functions, outer) {
            return bodies.iter().any(|body| {
                self.body_facts(body).leaves_state
                    && !super::reach::only_writes_unread_files(body, walk.src, outer, &self.functions)
            });
        }
        set.leaves_state || status::defines_stateful_function(root, walk)
    }

    /// Whether `n`, a simple command, calls a shell function where errexit is ignored
    /// ([`status::errexit_ignored_around`]): its body then runs without errexit (`set -e; f() {
    /// pg_isready -h db; true; }; f || y=0`: bash 5.2 and dash 0.5.12 exit 0 with the database
    /// down), or in a command substitution bash runs without it (`subst::bash_clears_errexit`).
    /// Only asked while errexit may be on.
    pub(in crate::engine::exec) fn calls_in_ignored_errexit(&self, n: Node<'_>, walk: &Walk<'_>) -> bool {
        if !self.errexit && !walk.status_cache.sets_errexit(walk.src) {
            return false;
        }
        let Some(name) = n.child_by_field("name").map(|m| text(m, walk)) else {
            return false;
        };
        let defined = walk.defined_functions.get_or_init(|| status::defined_functions(walk.src));
        (defined.iter().any(|d| d == name) || self.functions.iter().any(|(f, _)| f == name))
            && (status::errexit_ignored_around(n)
                || self.shell == Some("bash") && {
                    // bash clears errexit in a command substitution (s17, vd3 ee33: `set -e; g() {
                    // check; echo x; }; y=$(g); echo ok` exits 0 / 0 in bash 5.2, 1 / 0 in dash).
                    let env: Vec<String> = self.env.vars.keys().cloned().collect();
                    status::clears_errexit_in_bash(n, walk, &env, self.env.has_env_from)
                })
    }

    /// [`status_discarded`], its work (`Walk::status_work`) counted against the analysis's work
    /// units: once they are spent, no command is judged (each keeps its status, today's verdict)
    /// and the analysis stops with its "not analysed" note, so no script's shape makes the walk
    /// take seconds (break-it pass, issue #9).
    pub(super) fn status_discarded_within_budget<'w>(
        &self,
        n: Node<'w>,
        walk: &Walk<'w>,
    ) -> Option<&'static str> {
        if self.over_budget.get() || reaches_nothing(n, walk) {
            return None;
        }
        let before = walk.status_work.get();
        let how = status_discarded(n, walk);
        let spent = walk.status_work.get().saturating_sub(before);
        if spent > 0 && !self.spend_units(spent) {
            return None;
        }
        how
    }

    /// Why the last statement `n` of the probe's own script (a simple command at its top level,
    /// no function's) cannot fail it when an earlier top-level `trap 'ACTION; exit 0' ERR`
    /// (ACTION only writes output, `trap` named once, no `exec`, `kill`, `eval`, `source`) is
    /// set: bash runs the ERR trap when a command there fails, and its `exit 0` ends the script
    /// (bash manual, "Bourne Shell Builtins", `trap`; also under `set -e`: bash 5.2 exits 0 / 0 on
    /// `trap 'echo failed; exit 0' ERR; pg_isready -h db`). dash 0.5.12 has no ERR condition
    /// ("trap: ERR: bad trap", status 1) and runs on (0 / 2: coupled, so `sh` without `set -e`
    /// keeps the walk's verdict), but after a top-level `set -e` it exits 1 there: the probe
    /// always fails in dash and never on the check in bash, a warning that says so (s21).
    pub(super) fn err_trap_exits_zero(
        &self,
        n: Node<'_>,
        walk: &Walk<'_>,
        depth: usize,
    ) -> Option<&'static str> {
        // (Asked of every statement: only one that ends the text, the script's last, goes on.)
        let ends_text = walk
            .src
            .get(n.end_byte()..)
            .is_some_and(|t| t.trim_start_matches([' ', '\t', '\n', ';']).is_empty());
        if !ends_text || depth != 1 || self.calls != 0 || !walk.src.contains("trap") {
            return None;
        }
        let simple = match n.kind_name() {
            "command" => true,
            "redirected_statement" => n.child_by_field("body").is_some_and(|b| b.kind_name() == "command"),
            _ => false,
        };
        let program = n.parent().filter(|p| p.kind_name() == "program")?;
        let mut c = program.walk();
        let top: Vec<Node<'_>> =
            program.named_children(&mut c).filter(|k| k.kind_name() != "comment").collect();
        let (last, before) = top.split_last()?;
        let trap_at = before.iter().position(|k| err_trap_exiting_zero(*k, walk))?;
        let own = text(n, walk);
        let defined = walk.defined_functions.get_or_init(|| status::defined_functions(walk.src));
        if !simple
            || *last != n
            || n.next_sibling().is_some_and(|s| s.kind_name() == "&")
            || own.contains("$(")
            || own.contains('`')
            || walk.aliases
            || !defined.is_empty()
            || !self.functions.is_empty()
            || mentions(walk.src, &["exec", "kill", "eval", "source"])
            || super::code_view(walk.src).split_whitespace().any(|w| w == ".")
            || super::code_view(walk.src).matches("trap").count() != 1
        {
            return None;
        }
        match self.shell {
            Some("bash") => {
                Some("the script's ERR trap ends it with `exit 0` when this command fails (bash)")
            }
            None | Some("sh") if before[..trap_at].iter().any(|k| sets_errexit_plainly(*k, walk)) => Some(
                "dash rejects `trap ... ERR` and `set -e` then ends the script with 1 before this runs (bash: the ERR trap exits 0)",
            ),
            _ => None,
        }
    }
}

/// Whether the top-level statement `k` is `trap ACTION ERR` (`--` allowed, `ERR` in any case)
/// whose ACTION, quoted without expansion, ends with `exit 0` after commands that only write
/// output (`echo`, `printf`, `logger`, `:`, `true`).
fn err_trap_exiting_zero(k: Node<'_>, walk: &Walk<'_>) -> bool {
    if k.kind_name() != "command" || k.child_by_field("name").map(|m| text(m, walk)) != Some("trap") {
        return false;
    }
    let mut c = k.walk();
    let mut args: Vec<&str> = k.children_by_field("argument", &mut c).map(|a| text(a, walk)).collect();
    if args.first() == Some(&"--") {
        args.remove(0);
    }
    let [action, conditions @ ..] = args.as_slice() else { return false };
    let action = match action.strip_prefix('\'').and_then(|a| a.strip_suffix('\'')) {
        Some(a) => a,
        None => match action.strip_prefix('"').and_then(|a| a.strip_suffix('"')) {
            Some(a) => a,
            None => return false,
        },
    };
    if conditions.is_empty()
        || !conditions.iter().all(|c| c.eq_ignore_ascii_case("ERR"))
        || action.contains(['$', '`', '\\', '<', '>', '|', '&', '(', ')', '\'', '"'])
    {
        return false;
    }
    let parts: Vec<&str> = action.split([';', '\n']).map(str::trim).filter(|p| !p.is_empty()).collect();
    let Some((last, writes)) = parts.split_last() else { return false };
    last.split_whitespace().eq(["exit", "0"])
        && writes.iter().all(|p| {
            let mut words = p.split_whitespace();
            matches!(words.next(), Some("echo" | "printf" | "logger" | ":" | "true"))
                && !words.any(|w| matches!(w, "exit" | "return" | "exec" | "kill"))
        })
}

/// Whether the top-level statement `k` is `set` with an option word that turns errexit on
/// (`-e`, `-eu`, `-o errexit`).
fn sets_errexit_plainly(k: Node<'_>, walk: &Walk<'_>) -> bool {
    let words: Vec<&str> = text(k, walk).split_whitespace().collect();
    k.kind_name() == "command"
        && words.first() == Some(&"set")
        && words.iter().enumerate().any(|(i, w)| {
            (w.starts_with('-') && !w.starts_with("--") && *w != "-o" && w[1..].contains('e'))
                || (*w == "-o" && words.get(i + 1) == Some(&"errexit"))
        })
}

/// A simple command that runs no client and expands no substitution (`true`, `:`, `echo ok`,
/// `[ -f /tmp/x ]`, `sleep 1`), so that whether its status is discarded decides nothing: its
/// exit-status walk, up to the root, is skipped. A long `&&` chain of them after a check made
/// that walk quadratic in the chain (400 `&& true`, 3 KiB, spent the object's work units: server
/// break-it pass on a00d258). Not a function of that name (`true() { ...; }`).
fn reaches_nothing(n: Node<'_>, walk: &Walk<'_>) -> bool {
    if n.kind_name() != "command" {
        return false;
    }
    let Some(name) = n.child_by_field("name").map(|m| text(m, walk)) else {
        return false;
    };
    let t = text(n, walk);
    matches!(name, "true" | ":" | "echo" | "printf" | "test" | "[" | "sleep")
        && !t.contains(['$', '`', '<', '>'])
        && !walk
            .defined_functions
            .get_or_init(|| status::defined_functions(walk.src))
            .iter()
            .any(|d| d == name)
}

/// A command that always succeeds and reads nothing: `true`, `:`, `exit 0`.
fn always_succeeds(n: Node<'_>, walk: &Walk<'_>) -> bool {
    n.kind_name() == "command" && succeeds_as_written(text(n, walk))
}

/// Why the exit status of the statement `n` cannot fail the script (bash manual, "Lists of
/// Commands" and "Pipelines"), or `None` when it may:
/// - `n &`: run in the background, the shell does not wait for it (unless a later `wait` asks
///   for its status, so a script that mentions `wait` keeps it);
/// - `n || true` (or `|| :`, `|| exit 0`): the list's status is 0 whatever `n` returns, and
///   `set -e` ignores a command that is left of `||`;
/// - `n | true`: a pipeline's status is its last command's, unless `pipefail` is set (a script
///   that mentions it keeps it).
///
/// A part that holds an `exit`, `exec` or `return` (it can end the script itself) or a
/// `while`/`until` loop (it can wait on the dependency until the probe times out) is never
/// uncoupled, except in the background.
pub(super) fn uncoupled(n: Node<'_>, walk: &Walk<'_>) -> Option<&'static str> {
    if !walk.has_bars || !n.is_named() || n.kind_name() == "comment" || n.kind_name() == "function_definition"
    {
        return None;
    }
    // A part that can end the script itself, or wait on the dependency in a loop (a hang fails
    // the probe by its timeout, whatever the status).
    let ends_script = |k: Node<'_>| mentions(text(k, walk), &["exit", "exec", "return", "while", "until"]);
    // (What it writes to a file read later, or into a pipeline, still carries its outcome.)
    let output_kept = || status::output_kept(n, walk);
    if n.next_sibling().is_some_and(|s| s.kind_name() == "&")
        && !mentions(walk.src, &["wait"])
        && n.parent().is_some_and(|p| !matches!(p.kind_name(), "list" | "pipeline"))
    {
        return (!output_kept()).then_some("it runs in the background (`&`)");
    }
    let parent = n.parent()?;
    let right = parent.named_child(parent.named_child_count().checked_sub(1)?)?;
    if right == n || !always_succeeds(right, walk) {
        return None;
    }
    // `true` or `:` redefined (`true() { exit 1; }`, `alias true='exit 1'`): it may fail (break9 A9).
    if walk.aliases
        || status::defined_functions(walk.src).iter().any(|f| matches!(f.as_str(), "true" | ":" | "exit"))
    {
        return None;
    }
    if parent.kind_name() == "list"
        && parent.child(1).is_some_and(|op| op.kind_name() == "||")
        && parent.named_child(0) == Some(n)
    {
        // `R && exit 0 || exit 0`: every way out of the list ends the script with 0 (bash 5.2 and
        // dash 0.5.12 exit 0 / 0; `R && exit 0 || true; exit 1` is kept: R chooses the `exit 1`).
        let zero_either_way =
            text(right, walk).split_whitespace().eq(["exit", "0"]) && only_exits_zero(n, walk);
        // `C || exit 0; exit 1`: the script fails when the check succeeds, inverted, not
        // uncoupled (s26: 1 / 0 in bash 5.2 and dash 0.5.12): the status walk judges
        // (`status::INVERTED_OR`).
        if text(right, walk).split_whitespace().eq(["exit", "0"]) && fails_after(parent, walk) {
            return None;
        }
        // (`out=$(C 2>&1 || true); [ "$out" = PONG ]` exits 1 / 0 in bash 5.2 and dash 0.5.12:
        // the status is dropped, but the output is the substitution's value, which a test may
        // read; s22: said so, a warning, not "cannot fail".)
        return ((zero_either_way || !ends_script(n)) && !output_kept()).then(|| {
            if in_substitution(n, walk) {
                OUTPUT_IN_SUBSTITUTION
            } else {
                failure_ignored_by(text(right, walk))
            }
        });
    }
    if parent.kind_name() == "pipeline" && !walk.pipefail {
        return (!ends_script(n) && !output_kept())
            .then_some("its pipeline's status is another command's (`| true`)");
    }
    None
}

/// Whether `list` is a top-level statement of the script followed only by plain output (`echo`,
/// `printf`, `logger` with no redirection or substitution, `:`, `true`) and a last statement
/// that certainly fails: `exit N` (N digits, not 0 modulo 256) or `false`.
fn fails_after(list: Node<'_>, walk: &Walk<'_>) -> bool {
    if list.parent().is_none_or(|p| p.kind_name() != "program")
        || list.next_sibling().is_some_and(|s| s.kind_name() == "&")
    {
        return false;
    }
    let mut after = Vec::new();
    let mut at = list.next_named_sibling();
    while let Some(k) = at {
        if k.kind_name() != "comment" {
            after.push(k);
        }
        at = k.next_named_sibling();
    }
    after.split_last().is_some_and(|(last, before)| {
        let words: Vec<&str> = text(*last, walk).split_whitespace().collect();
        let fails = match words.as_slice() {
            ["false"] => true,
            ["exit", n] => {
                n.bytes().all(|b| b.is_ascii_digit()) && n.parse::<u64>().is_ok_and(|v| v % 256 != 0)
            }
            _ => false,
        };
        fails
            && last.kind_name() == "command"
            && before.iter().all(|k| {
                let t = text(*k, walk);
                k.kind_name() == "command"
                    && matches!(
                        t.split_whitespace().next(),
                        Some("echo" | "printf" | "logger" | ":" | "true")
                    )
                    && !t.contains(['>', '<', '|', '&', '`', '$', '(', ')', ';'])
            })
    })
}

/// Why a check whose failure `|| true` drops, but whose output goes into a command substitution
/// (`out=$(C || true)`, `x=$(C) || true`), is only a warning: what the script does with that
/// value (a test, `[ "$out" = PONG ]`) is not judged there.
/// (Said as "whether it fails the probe rests on ...": `script::run_pieces` makes it a doubt.)
pub(in crate::engine::exec) const OUTPUT_IN_SUBSTITUTION: &str = "what the script does with its output, read through a command substitution (`|| true` drops only its status)";

/// Whether `n` is an assignment of a command substitution's value (`x=$(C)`) or in a command
/// substitution. (Not a here-document's reader: its body's substitutions are judged there.)
fn in_substitution(n: Node<'_>, walk: &Walk<'_>) -> bool {
    let t = text(n, walk);
    n.kind_name() == "variable_assignment" && (t.contains("$(") || t.contains('`'))
        || std::iter::successors(n.parent(), |p| p.parent()).any(|p| p.kind_name() == "command_substitution")
}

/// How a list's right side that always succeeds (`|| true`, `|| :`, `|| exit 0`) makes the
/// left side's failure harmless, as the script writes it: `exit 0` ends the script with 0, the
/// others let it go on (fresh-user pass s16: `|| exit 0` was described as `|| true`).
pub(in crate::engine::exec) fn failure_ignored_by(right: &str) -> &'static str {
    match right.split_whitespace().next() {
        Some("exit") => "when it fails the script exits 0 (`|| exit 0`)",
        Some(":") => "its failure is ignored (`|| :`)",
        _ => "its failure is ignored (`|| true`)",
    }
}

/// Whether every way `n` can end the script is `exit 0`: no `exec`, `return` or loop, and each
/// `exit` is followed by `0` (and no other word).
fn only_exits_zero(n: Node<'_>, walk: &Walk<'_>) -> bool {
    let t = text(n, walk);
    let words: Vec<&str> =
        t.split(|c: char| c.is_whitespace() || ";&|(){}".contains(c)).filter(|w| !w.is_empty()).collect();
    !mentions(t, &["exec", "return", "while", "until"])
        && !t.contains(['`', '\\'])
        && words.iter().enumerate().all(|(i, w)| *w != "exit" || words.get(i + 1) == Some(&"0"))
}

/// Whether `n` (or the redirected statement it is the body of) is an element of a pipeline, not
/// its last.
fn not_last_pipeline_element(n: Node<'_>) -> bool {
    let mut el = n;
    if let Some(p) = n.parent().filter(|p| p.kind_name() == "redirected_statement") {
        el = p;
    }
    el.parent().is_some_and(|p| p.kind_name() == "pipeline")
        && el.next_named_sibling().is_some_and(|k| k.kind_name() != "comment")
}

/// Why the status of `n`, a simple command (with its redirections), cannot reach the script's
/// (`status::discarded`), or `None`. A command holding a substitution is left to the walk of its
/// parts: its output is data (`x=$(remote)`).
fn status_discarded<'t>(n: Node<'t>, walk: &Walk<'t>) -> Option<&'static str> {
    let rules = walk.status.as_ref()?;
    let simple = match n.kind_name() {
        "command" => n.parent().is_none_or(|p| p.kind_name() != "redirected_statement"),
        "redirected_statement" => n.child_by_field("body").is_some_and(|b| b.kind_name() == "command"),
        _ => false,
    };
    if !simple || n.end_byte() > walk.cut {
        return None;
    }
    let own = text(n, walk);
    if own.contains("$(") || own.contains('`') || own.contains("<(") || own.contains(">(") {
        return None;
    }
    status::discarded(n, walk, rules)
}
