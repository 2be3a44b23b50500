//! The script replayed after a check for each exit status its outage gives (issue #10, "never
//! deny on a guess"; verdict pass vd3 on a8ec80c): where the check's status is only TESTED,
//! whatever shape the test has, the shells decide, not the shape. From the check, its status `s`
//! goes up the tree as bash 5.2 and dash 0.5.12 pass it (`!` inverts it, `A && B`/`A || B` run
//! B or not, a pipeline's is its last command's, `( )` and `{ }` and `if`/`case` bodies end with
//! their last statement's) and the statements after it run on known values only: `$?` and the
//! variables the replay assigned (`rc=$?`), compared in `[ ]`, `test`, `[[ ]]` (`-eq` ... and
//! `=`/`!=` of literals, `!`, `-a`/`-o`, `&&`/`||`), `(( ))` and `$(( ))`, `case $? in`,
//! `if`, `exit N`/`exit $rc`/`exit $(( ... ))`, `true`, `false`, `:`, `echo`.
//! A statement it cannot run stops the replay there, with `$?` and the variables it holds.
//!
//! Two replays that end alike (the same `exit` status, or the same statement reached with the
//! same `$?` and variables) run alike from there. The check's status cannot fail the probe when
//! every replay of an outage's status ends as the replay of 0 does, or exits 0 ([`verdict`]).
//! The outage statuses are the client's row's (`clients`, `outage_status`; through `timeout`,
//! 124 too): when the row has none, 1 to 255 (`representatives`); a test the replay cannot evaluate (`[ $? -ne
//! $LIMIT ]`) is a doubt, never a denial.

use crate::engine::exec::kinds::KindName;
use tree_sitter::Node;

use super::super::flow::mentions;
use super::super::shell::Walk;
use super::harmless::{reads_status_text, writes_a_named_file};
use super::{Rules, is_statement, siblings_after, text};

mod codes;
mod eval;
mod fixed;
mod gate;
mod later;
use codes::outage_codes;
use eval::representatives;
use gate::replayable;
use later::{assigned_from, status_subject_of};

/// A reason the walk gives (`discarded`).
pub(super) const REPLAYED: &str = "its status (`$?`) is only tested, and each status an outage gives makes the script run as with the server up, or exit 0";
/// A reason the walk gives (`discarded`): every outage status makes the script exit 0, so its
/// output is read only while the server is up (a fail-open check, s24: tests/lead_s24.rs).
pub(super) const REPLAYED_EXITS_ZERO: &str = "its status (`$?`) is only tested, and each status an outage gives makes the script exit 0 before its output is read";
/// A reason the walk gives (`discarded`).
pub(super) const REPLAY_DOUBT: &str = "its status (`$?`) is only tested, in a way that some status its outage may give passes (its outage statuses are not known, or the test cannot be evaluated here)";

/// A reason the walk gives (`discarded`): the script fails only on `timeout`'s own status, when
/// the check runs past its limit (s25, deny24's list: `timeout 2 pg_isready -h db; [ $? -eq 124 ]
/// && exit 1; exit 0` exits 0 / 0 in bash 5.2 and dash 0.5.12 with the database refusing, and was
/// denied; `timeout 2 pg_isready -h db` alone, 0 / 2, stays coupled).
pub(super) const REPLAYED_HANG: &str = "its status (`$?`) is only tested, and only `timeout`'s own status (124: the check hung past its limit) fails the script, as a hang past timeoutSeconds would; a refused or down server passes";

/// What the replay concludes for a check.
pub(super) enum Verdict<'t> {
    /// The check's status cannot fail the probe (or may not: a doubt): the reason, and the
    /// statement at the top of the script that holds the check (whose output is judged).
    Discarded(&'static str, Node<'t>),
    /// An outage status the client's row gives makes the script exit non-zero where the server
    /// up does not.
    Coupled,
}

/// How one replay ends.
#[derive(Clone, Debug, PartialEq, Eq)]
enum End {
    /// The script exits with this status.
    Exit(u8),
    /// The replay stopped at the statement starting at this byte, with this `$?` and these
    /// variables (a stack: one frame per subshell it is in).
    Reached(usize, u8, Vec<Vec<(String, String)>>),
}

/// The outcome of one statement run forward.
enum Flow {
    /// It ran to its end with this status.
    Next(u8),
    /// It exits the shell (or the subshell it is in) with this status.
    Exit(u8),
    /// It cannot be run here: the replay stops at the statement starting at this byte.
    Stop(usize),
}

/// Statements one replay may run at most.
const MAX_STEPS: usize = 400;

/// One replay: `$?`, the variables assigned since the check, and whether a status test could
/// not be evaluated (`doubt`).
struct Run<'w, 't> {
    walk: &'w Walk<'t>,
    rules: &'w Rules,
    status: u8,
    vars: Vec<Vec<(String, String)>>,
    doubt: bool,
    steps: usize,
    /// Where the check starts in the text.
    from: usize,
    /// The replay stopped at a top-level statement that reads neither `$?` nor a variable the
    /// replay assigned (`pg_isready -h localhost`): where it starts, and the variables it holds
    /// that the script assigns again before it reads them ([`Run::dead_at`]).
    dead: Option<(usize, Vec<String>)>,
    /// The variables the script sets before the check and never again: to a literal, or to a
    /// status (`fixed::constants`).
    fixed: &'w fixed::Fixed,
    /// This replay takes an `echo` to an unread file as failing to write (status 1: a read-only
    /// root filesystem), not succeeding (0): `fixed`.
    write_fails: bool,
    /// The replay ran such an `echo`, so the other write outcome must be replayed too.
    wrote: bool,
    /// The replay went through `NAME=$(check)` (`later::assigned_from`): only an exit 0 of every
    /// outage replay is concluded from it, as `NAME`'s value is the check's output.
    captured: bool,
}

/// The replay's verdict on the check `n` (a simple command, or one with redirections), `None`
/// when it cannot tell (the walk's then stands).
pub(super) fn verdict<'t>(n: Node<'t>, walk: &Walk<'t>, rules: &Rules) -> Option<Verdict<'t>> {
    if !replayable(n, walk, rules) {
        return None;
    }
    let cmd = if n.kind_name() == "redirected_statement" { n.child_by_field("body")? } else { n };
    // (A function named like a command the replay runs, `test`, `exit`, `echo`, stops it where
    // it is called: `Run::command`. One never called changes nothing, s19: `test() { return 1;
    // }; check; rc=$?; [ $rc -ne 3 ]` runs the builtin `[`, 0 / 0 in bash 5.2 and dash 0.5.12.)
    if cmd.kind_name() != "command" {
        return None;
    }
    let fixed = fixed::constants(n, walk);
    // Each write to an unread file succeeds, then (when the replays ran one) each fails: a
    // coupling in either stands, and a doubt in either is one.
    let (first, wrote) = verdict_with(n, cmd, walk, rules, &fixed, false)?;
    if !wrote {
        return Some(first);
    }
    let (second, _) = verdict_with(n, cmd, walk, rules, &fixed, true)?;
    Some(match (first, second) {
        (Verdict::Coupled, _) | (_, Verdict::Coupled) => Verdict::Coupled,
        (Verdict::Discarded(a, top), Verdict::Discarded(b, _)) if a == b => Verdict::Discarded(a, top),
        (Verdict::Discarded(a, top), Verdict::Discarded(b, _))
            if [a, b].iter().all(|w| [REPLAYED, REPLAYED_EXITS_ZERO].contains(w)) =>
        {
            Verdict::Discarded(REPLAYED, top)
        }
        (Verdict::Discarded(_, top), _) => Verdict::Discarded(REPLAY_DOUBT, top),
    })
}

/// [`verdict`] with each write to an unread file failing or not (`write_fails`), and whether a
/// replay ran such a write.
fn verdict_with<'t>(
    n: Node<'t>,
    cmd: Node<'t>,
    walk: &Walk<'t>,
    rules: &Rules,
    fixed: &fixed::Fixed,
    write_fails: bool,
) -> Option<(Verdict<'t>, bool)> {
    let (known, hang) = match outage_codes(cmd, walk) {
        Some((codes, hang)) => (Some(codes), hang),
        None => (None, Vec::new()),
    };
    let codes: Vec<u8> = known.clone().unwrap_or_else(|| representatives(walk.src));
    // A failure (or doubt) on a status the client gives, not only on `timeout`'s own (a hang).
    let (mut fails_refused, mut doubt_refused) = (false, false);
    let (up, _, mut wrote, mut captured) = replay(n, 0, walk, rules, fixed, write_fails)?;
    let up = (up.len() == 1).then(|| up[0].clone());
    let (mut all, mut some, mut fails, mut doubt) = (true, false, false, false);
    // Every replay of every outage status ends with `exit 0` (none stops or goes on).
    let mut exits_zero = true;
    for code in codes {
        let (ends, unsure, w, c) = replay(n, code, walk, rules, fixed, write_fails)?;
        wrote |= w;
        captured |= c;
        exits_zero &= !ends.is_empty() && ends.iter().all(|e| *e == End::Exit(0));
        let pass = ends.iter().all(|e| *e == End::Exit(0) || up.as_ref() == Some(e));
        let failed =
            !pass && ends.iter().any(|e| matches!(e, End::Exit(s) if *s != 0) && up.as_ref() != Some(e));
        fails |= failed;
        doubt |= unsure && !pass;
        fails_refused |= failed && !hang.contains(&code);
        doubt_refused |= unsure && !pass && !hang.contains(&code);
        all &= pass;
        some |= pass;
        if known.is_none() && some && !all {
            break;
        }
    }
    let mut top = n;
    while let Some(p) = top.parent().filter(|p| p.kind_name() != "program") {
        top = p;
    }
    let found = match known {
        _ if all && exits_zero => Verdict::Discarded(REPLAYED_EXITS_ZERO, top),
        // (A test of the captured output is not the status's alone: the walk decides. So is a
        // script that names again the file the check's own redirection writes, s26: `C >
        // /tmp/o.txt; rc=$?; if [ $rc -ne 0 ]; then echo down; fi; grep -q role /tmp/o.txt`
        // exits 0 / 1 in bash 5.2 and dash 0.5.12, and was warned as "cannot fail".)
        _ if captured || output_named_again(n, walk) => return None,
        _ if all => Verdict::Discarded(REPLAYED, top),
        Some(_) if fails_refused => Verdict::Coupled,
        Some(_) if doubt_refused => Verdict::Discarded(REPLAY_DOUBT, top),
        Some(_) if fails => Verdict::Discarded(REPLAYED_HANG, top),
        Some(_) if doubt => Verdict::Discarded(REPLAY_DOUBT, top),
        None if some || doubt => Verdict::Discarded(REPLAY_DOUBT, top),
        _ => return None,
    };
    Some((found, wrote))
}

/// Whether `n`, the check, is a statement with redirections that writes a file whose path (as
/// written, quotes removed) the script's text holds again outside `n`: its output may be read
/// later (`C > /tmp/o.txt; ...; grep -q role /tmp/o.txt`). A path written nowhere else (`C >
/// /tmp/o.txt; rc=$?; ...; test -d /`) is no read: the replay stands.
fn output_named_again(n: Node<'_>, walk: &Walk<'_>) -> bool {
    if n.kind_name() != "redirected_statement" {
        return false;
    }
    let (before, after) =
        (walk.src.get(..n.start_byte()).unwrap_or(""), walk.src.get(n.end_byte()..).unwrap_or(""));
    super::harmless::file_targets(text(n, walk)).iter().any(|f| {
        let path: String = f.chars().filter(|c| !matches!(c, '"' | '\'' | '\\')).collect();
        path.is_empty()
            || path.contains(['$', '`', '*', '?', '[', '{', '~'])
            || before.contains(&path)
            || after.contains(&path)
    })
}

/// How the script ends when the check `n` exits with `status` (several ends when a pipeline's
/// reader gives one of several statuses), whether a status test could not be evaluated, and
/// whether it ran a write to an unread file (`Run::wrote`). `None`: the replay cannot follow the
/// check's status up (a loop, a function, a substitution).
fn replay(
    n: Node<'_>,
    status: u8,
    walk: &Walk<'_>,
    rules: &Rules,
    fixed: &fixed::Fixed,
    write_fails: bool,
) -> Option<(Vec<End>, bool, bool, bool)> {
    let mut run = Run {
        walk,
        rules,
        status,
        vars: vec![Vec::new()],
        doubt: false,
        steps: 0,
        from: n.start_byte(),
        dead: None,
        fixed,
        write_fails,
        wrote: false,
        captured: false,
    };
    let mut ends = Vec::new();
    let found = up_from(n, &mut run, &mut ends);
    // (Each statement run is a unit of the walk's work: `Walk::status_work`.)
    super::work(walk, run.steps.max(1));
    found?;
    Some((ends, run.doubt, run.wrote, run.captured))
}

/// The replay from `at`, which has just ended with `run.status`, up to the script's end: each end
/// pushed on `ends`.
fn up_from(mut at: Node<'_>, run: &mut Run<'_, '_>, ends: &mut Vec<End>) -> Option<()> {
    loop {
        if at.next_sibling().is_some_and(|s| s.kind_name() == "&") {
            return None;
        }
        let parent = at.parent()?;
        match parent.kind_name() {
            "redirected_statement" => {
                if writes_a_named_file(parent, run.walk) {
                    return None;
                }
            }
            "negated_command" => run.status = u8::from(run.status == 0),
            "pipeline" => {
                let mut c = parent.walk();
                let parts: Vec<Node<'_>> =
                    parent.named_children(&mut c).filter(|k| is_statement(*k)).collect();
                if parts.last() != Some(&at) {
                    // `check | grep -q ok`: grep's status, 0, 1 or 2 (GNU grep, "Exit Status"),
                    // whatever the check wrote.
                    let reader = parts.last().filter(|_| parts.len() == 2)?;
                    let name = reader.child_by_field("name").map(|m| text(m, run.walk));
                    if reader.kind_name() != "command"
                        || !matches!(name, Some("grep" | "egrep" | "fgrep"))
                        || text(*reader, run.walk).contains(['$', '`', '>', '<'])
                    {
                        return None;
                    }
                    for s in [0, 1, 2] {
                        let mut each = Run {
                            walk: run.walk,
                            rules: run.rules,
                            status: s,
                            vars: run.vars.clone(),
                            doubt: false,
                            steps: run.steps,
                            from: run.from,
                            dead: None,
                            fixed: run.fixed,
                            write_fails: run.write_fails,
                            wrote: false,
                            captured: false,
                        };
                        up_from(parent, &mut each, ends)?;
                        run.doubt |= each.doubt;
                        run.wrote |= each.wrote;
                        run.captured |= each.captured;
                    }
                    return Some(());
                }
            }
            // `out=$(check)`: the assignment's status is the substitution's (bash manual, "Simple
            // Command Expansion"); its value is output the replay does not know (s24).
            "command_substitution" if let Some(assignment) = assigned_from(at, parent, run.walk) => {
                // (A value of its own per status, which no test reads: `Run::var`.)
                let name = text(assignment.child_by_field("name")?, run.walk).to_string();
                let output = format!("\0output at status {}", run.status);
                run.vars.last_mut()?.push((name, output));
                run.captured = true;
                at = assignment;
                continue;
            }
            // `case $(check >/dev/null; echo $?) in 3) exit 1;; esac`: the subject is the
            // check's status (s17).
            "command_substitution" => {
                let case = status_subject_of(at, parent, run.walk)?;
                match run.case_on(case, &run.status.to_string())? {
                    Flow::Next(s) => run.status = s,
                    Flow::Exit(s) => return end(ends, End::Exit(s)),
                    Flow::Stop(at) => return end(ends, run.reached(at)),
                }
                at = case;
                continue;
            }
            "list" => {
                let left = parent.named_child(0)?;
                let op = parent.child(1)?.kind_name();
                let right = parent.named_child(parent.named_child_count().checked_sub(1)?)?;
                let runs_right = match op {
                    "&&" => run.status == 0,
                    "||" => run.status != 0,
                    _ => return None,
                };
                if at == left && runs_right {
                    match run.stmt(right) {
                        Flow::Next(s) => run.status = s,
                        Flow::Exit(s) => return end(ends, End::Exit(s)),
                        Flow::Stop(at) => return end(ends, run.reached(at)),
                    }
                }
            }
            "program" | "compound_statement" | "subshell" | "case_item" | "else_clause" | "elif_clause"
            | "if_statement" => {
                if parent.kind_name() == "case_item" && !super::in_case_body(at, parent) {
                    return None;
                }
                let after = siblings_after(at, parent)
                    .take_while(|k| !matches!(k.kind_name(), "then" | "fi" | "elif_clause" | "else_clause"))
                    .filter(|k| is_statement(*k));
                let subshell = parent.kind_name() == "subshell";
                match run.seq(after) {
                    Flow::Next(s) => run.status = s,
                    Flow::Exit(s) if subshell => run.status = s,
                    Flow::Exit(s) => return end(ends, End::Exit(s)),
                    Flow::Stop(at) => return end(ends, run.reached(at)),
                }
                if subshell {
                    // What it assigned is gone after it.
                    run.vars.last_mut()?.clear();
                }
                match parent.kind_name() {
                    "program" => return end(ends, End::Exit(run.status)),
                    "if_statement" if super::in_condition(at, parent) => match run.branches(parent) {
                        Flow::Next(s) => run.status = s,
                        Flow::Exit(s) => return end(ends, End::Exit(s)),
                        Flow::Stop(at) => return end(ends, run.reached(at)),
                    },
                    "elif_clause" if super::in_condition(at, parent) => return None,
                    "case_item" => {
                        let mut c = parent.walk();
                        if parent.children(&mut c).any(|k| matches!(k.kind_name(), ";&" | ";;&")) {
                            return None;
                        }
                        at = parent.parent()?;
                        continue;
                    }
                    "else_clause" | "elif_clause" => {
                        at = parent.parent()?;
                        continue;
                    }
                    _ => {}
                }
            }
            _ => return None,
        }
        at = parent;
    }
}

/// Pushes `e` on `ends`.
fn end(ends: &mut Vec<End>, e: End) -> Option<()> {
    ends.push(e);
    Some(())
}

impl Run<'_, '_> {
    /// The end of a replay stopped at the statement starting at `at`, with the variables the text
    /// may still read: named from `at` on or before the check (a function defined there may be
    /// called later), or exported (`export`, `declare`, ..., the container's `env`).
    fn reached(&self, at: usize) -> End {
        let src = self.walk.src;
        let exports = mentions(src, &["export", "declare", "typeset", "readonly", "local"]);
        let (env, env_from) = &self.rules.container_env;
        // (At a statement that reads neither `$?` nor them, `$?` is its own after it, and a
        // variable assigned again before it is read is the new value: s17, `rc` of
        // `psql -h db; rc=$?; psql -h localhost; rc=$?; [ $rc -eq 0 ]`.)
        let dead = self.dead.as_ref().filter(|(b, _)| *b == at).map(|(_, d)| d);
        let read = |name: &str| {
            exports
                || *env_from
                || env.iter().any(|e| e == name)
                || !dead.is_some_and(|d| d.iter().any(|x| x == name))
                    && (mentions(src.get(at..).unwrap_or(""), &[name])
                        || mentions(src.get(..self.from).unwrap_or(""), &[name]))
        };
        let vars = self.vars.iter().map(|f| f.iter().filter(|(n, _)| read(n)).cloned().collect()).collect();
        End::Reached(at, if dead.is_some() { 0 } else { self.status }, vars)
    }

    /// The value of variable `name` the replay assigned, or the script's constant
    /// (`fixed::constants`).
    fn var(&self, name: &str) -> Option<&str> {
        match self.vars.iter().rev().flat_map(|f| f.iter().rev()).find(|(n, _)| n == name) {
            // A check's output (`\0...`, `up_from`): unknown here.
            Some((_, v)) if v.starts_with('\0') => None,
            Some((_, v)) => Some(v.as_str()),
            None => self.constant(name),
        }
    }

    /// The value of word `w` (its text): `$?`, a variable the replay assigned (`$rc`, `${rc}`),
    /// double-quoted or not, a literal without expansion or quoting, a single-quoted string.
    fn word(&self, w: &str) -> Option<String> {
        if let Some(inner) = w.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')) {
            return (!inner.contains('\'')).then(|| inner.to_string());
        }
        let inner = w.strip_prefix('"').and_then(|x| x.strip_suffix('"')).unwrap_or(w);
        if inner.contains('"') {
            return None;
        }
        if matches!(inner, "$?" | "${?}") {
            return Some(self.status.to_string());
        }
        // `$(echo rc)`: the literal it writes (no function of the script is named `echo`).
        if let Some(x) = inner.strip_prefix("$(echo ").and_then(|x| x.strip_suffix(')'))
            && !x.is_empty()
            && x.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && !self.rules.functions.iter().any(|f| f == "echo")
        {
            return Some(x.to_string());
        }
        if let Some(name) = inner.strip_prefix('$') {
            let name = name.strip_prefix('{').and_then(|x| x.strip_suffix('}')).unwrap_or(name);
            // `${rc:-0}`, `${rc-0}` of a variable the replay assigned (POSIX, 2.6.2 "Parameter
            // Expansion").
            let split = name.split_once(":-").map(|(n, d)| (n, d, true));
            if let Some((name, default, colon)) =
                split.or_else(|| name.split_once('-').map(|(n, d)| (n, d, false)))
            {
                let value = self.var(name)?;
                return if colon && value.is_empty() { self.word(default) } else { Some(value.to_string()) };
            }
            if !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                return self.var(name).map(str::to_string);
            }
            return None;
        }
        if inner.contains(['$', '`', '\\', '\'', '*', '?', '[', ']', '{', '}', '(', ')', '~'])
            || w.contains(' ')
        {
            return None;
        }
        Some(inner.to_string())
    }

    /// The statements `nodes` run one after the other.
    fn seq<'t>(&mut self, nodes: impl Iterator<Item = Node<'t>>) -> Flow {
        for s in nodes {
            match self.stmt(s) {
                Flow::Next(st) => self.status = st,
                other => return other,
            }
        }
        Flow::Next(self.status)
    }

    /// Statement `s` run forward.
    fn stmt(&mut self, s: Node<'_>) -> Flow {
        self.steps += 1;
        let stop = Flow::Stop(s.start_byte());
        if self.steps > MAX_STEPS || s.next_sibling().is_some_and(|k| k.kind_name() == "&") {
            return stop;
        }
        let t = text(s, self.walk);
        let flow = self.stmt_kind(s, t, stop);
        if matches!(flow, Flow::Stop(b) if b == s.start_byte()) && self.dead.is_none() {
            self.dead = self.dead_at(s, t).map(|d| (s.start_byte(), d));
        }
        flow
    }

    /// [`Run::stmt`] by the kind of `s` (text `t`): `stop` where it cannot be run.
    fn stmt_kind(&mut self, s: Node<'_>, t: &str, stop: Flow) -> Flow {
        let tested = |run: &mut Self| {
            run.doubt |=
                reads_status_text(t) || run.vars.iter().flatten().any(|(n, _)| mentions(t, &[n.as_str()]));
            Flow::Stop(s.start_byte())
        };
        match s.kind_name() {
            "command" => self.command(s).unwrap_or(stop),
            "test_command" => {
                let held = if let Some(e) = t.strip_prefix("((").and_then(|x| x.strip_suffix("))")) {
                    self.arith(e).map(|v| v != 0)
                } else if let Some(e) = t.strip_prefix("[[").and_then(|x| x.strip_suffix("]]")) {
                    self.test(&echo_words(e))
                } else if let Some(e) = t.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
                    self.single_test(&e.split_whitespace().collect::<Vec<_>>())
                } else {
                    None
                };
                match held {
                    Some(h) => Flow::Next(u8::from(!h)),
                    None => tested(self),
                }
            }
            "variable_assignment" => {
                let (Some(name), Some(value)) = (s.child_by_field("name"), s.child_by_field("value")) else {
                    return stop;
                };
                let v = text(value, self.walk);
                let v = match v.strip_prefix("$((").and_then(|x| x.strip_suffix("))")) {
                    Some(e) => self.arith(e).map(|x| x.to_string()),
                    None => self.word(v),
                };
                let Some(v) = v else { return stop };
                let name = text(name, self.walk).to_string();
                if let Some(frame) = self.vars.last_mut() {
                    frame.push((name, v));
                }
                Flow::Next(0)
            }
            "list" => {
                let (Some(left), Some(op), Some(right)) = (s.named_child(0), s.child(1), s.named_child(1))
                else {
                    return stop;
                };
                let l = match self.stmt(left) {
                    Flow::Next(l) => l,
                    other => return other,
                };
                self.status = l;
                match op.kind_name() {
                    "&&" if l == 0 => self.stmt(right),
                    "||" if l != 0 => self.stmt(right),
                    "&&" | "||" => Flow::Next(l),
                    _ => stop,
                }
            }
            "negated_command" => {
                let Some(inner) = s.named_child(0) else { return stop };
                match self.stmt(inner) {
                    Flow::Next(st) => Flow::Next(u8::from(st == 0)),
                    other => other,
                }
            }
            // `(( ... ))`, which the grammar reads as a compound statement.
            "compound_statement" if t.starts_with("((") => {
                match t.strip_prefix("((").and_then(|x| x.strip_suffix("))")).and_then(|e| self.arith(e)) {
                    Some(v) => Flow::Next(u8::from(v == 0)),
                    None => tested(self),
                }
            }
            "compound_statement" => {
                let mut c = s.walk();
                let inner: Vec<Node<'_>> = s.named_children(&mut c).filter(|k| is_statement(*k)).collect();
                self.seq(inner.into_iter())
            }
            "subshell" => {
                let mut c = s.walk();
                let inner: Vec<Node<'_>> = s.named_children(&mut c).filter(|k| is_statement(*k)).collect();
                self.vars.push(Vec::new());
                let flow = self.seq(inner.into_iter());
                if matches!(flow, Flow::Stop(_)) {
                    return flow;
                }
                self.vars.pop();
                match flow {
                    Flow::Next(st) | Flow::Exit(st) => Flow::Next(st),
                    other => other,
                }
            }
            "if_statement" => {
                let mut c = s.walk();
                let cond: Vec<Node<'_>> = s
                    .children(&mut c)
                    .skip(1)
                    .take_while(|k| k.kind_name() != "then")
                    .filter(|k| is_statement(*k))
                    .collect();
                match self.seq(cond.into_iter()) {
                    Flow::Next(st) => self.status = st,
                    other => return other,
                }
                self.branches(s)
            }
            "case_statement" => self.case(s).unwrap_or_else(|| tested(self)),
            "redirected_statement" => self.redirected_echo(s).unwrap_or(stop),
            _ => stop,
        }
    }

    /// The branch of `if_statement` `s` its condition's status (`self.status`) chooses, run.
    fn branches(&mut self, s: Node<'_>) -> Flow {
        let mut c = s.walk();
        let kids: Vec<Node<'_>> = s.children(&mut c).collect();
        let then = kids.iter().position(|k| k.kind_name() == "then");
        let Some(then) = then else { return Flow::Stop(s.start_byte()) };
        let body = |from: usize| {
            kids[from..]
                .iter()
                .copied()
                .take_while(|k| !matches!(k.kind_name(), "elif_clause" | "else_clause" | "fi"))
                .filter(|k| is_statement(*k))
                .collect::<Vec<_>>()
        };
        if self.status == 0 {
            return self.seq(body(then + 1).into_iter());
        }
        for k in &kids[then + 1..] {
            match k.kind_name() {
                "elif_clause" => {
                    let mut c = k.walk();
                    let parts: Vec<Node<'_>> = k.children(&mut c).collect();
                    let Some(t) = parts.iter().position(|p| p.kind_name() == "then") else {
                        return Flow::Stop(k.start_byte());
                    };
                    match self.seq(parts[..t].iter().copied().filter(|p| is_statement(*p))) {
                        Flow::Next(st) => self.status = st,
                        other => return other,
                    }
                    if self.status == 0 {
                        return self.seq(parts[t + 1..].iter().copied().filter(|p| is_statement(*p)));
                    }
                }
                "else_clause" => {
                    let mut c = k.walk();
                    let parts: Vec<Node<'_>> =
                        k.named_children(&mut c).filter(|p| is_statement(*p)).collect();
                    return self.seq(parts.into_iter());
                }
                _ => {}
            }
        }
        // No branch ran: the `if`'s status is 0 (POSIX, 2.9.4 "The if Conditional Construct").
        Flow::Next(0)
    }

    /// A simple command run: `true`, `:`, `false`, `test`/`[`, `exit`, `echo`.
    fn command(&mut self, s: Node<'_>) -> Option<Flow> {
        let name = text(s.child_by_field("name")?, self.walk);
        if self.rules.functions.iter().any(|f| f == name) {
            return None;
        }
        let mut c = s.walk();
        if s.named_children(&mut c).any(|k| k.kind_name() == "variable_assignment") {
            return None;
        }
        let mut c = s.walk();
        let args: Vec<String> =
            s.children_by_field("argument", &mut c).map(|a| text(a, self.walk).to_string()).collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let status_read = reads_status_text(text(s, self.walk));
        Some(match name {
            "true" | ":" => Flow::Next(0),
            "false" => Flow::Next(1),
            "echo" if !text(s, self.walk).contains(['`', '(']) => Flow::Next(0),
            "test" | "[" => {
                let args = if name == "[" { args.strip_suffix(&["]"])? } else { &args[..] };
                match self.single_test(args) {
                    Some(h) => Flow::Next(u8::from(!h)),
                    None => {
                        self.doubt |= status_read || self.names_a_var(text(s, self.walk));
                        return None;
                    }
                }
            }
            "exit" => match args.as_slice() {
                [] => Flow::Exit(self.status),
                [w] => {
                    let v = match w.strip_prefix("$((").and_then(|x| x.strip_suffix("))")) {
                        Some(e) => self.arith(e),
                        None => self.word(w).and_then(|v| v.parse::<i64>().ok()),
                    };
                    let Some(v) = v.filter(|v| *v >= 0) else {
                        // (A comparison not evaluated is a doubt; another status is not.)
                        self.doubt |= w.starts_with("$((") && (status_read || self.names_a_var(w));
                        return None;
                    };
                    Flow::Exit((v & 255) as u8)
                }
                _ => return None,
            },
            _ => return None,
        })
    }

    /// Whether `t` names a variable the replay assigned.
    fn names_a_var(&self, t: &str) -> bool {
        self.vars.iter().flatten().any(|(n, _)| mentions(t, &[n.as_str()]))
    }
}

/// The blank-separated words of `[[ ]]`'s text `e`, with `$(echo WORD)` (split at its blank)
/// kept as one word.
fn echo_words(e: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    let words: Vec<(usize, &str)> =
        e.split_whitespace().map(|w| (w.as_ptr() as usize - e.as_ptr() as usize, w)).collect();
    let mut i = 0;
    while i < words.len() {
        let (at, w) = words[i];
        match words.get(i + 1) {
            Some((next_at, next)) if w == "$(echo" && next.ends_with(')') && !next.contains('(') => {
                out.push(&e[at..next_at + next.len()]);
                i += 2;
            }
            _ => {
                out.push(w);
                i += 1;
            }
        }
    }
    out
}

/// `t` with each `exit $(( ... ))` whose expression holds only `$?`, decimal numbers and
/// operators written `exit $?`: for [`super::rules`], a status computed from the last command's
/// alone, which the walk judges where it is (it reads `$?`) and the replay evaluates
/// (`pg_isready -h db; exit $(( $? == 3 ))`: 0 / 0 in bash 5.2 and dash 0.5.12). One of a
/// single variable, `exit $((rc))`, is written `exit 0`, as `exit $rc` is
/// (`texts::variable_exits_as_literal`): the walk keeps a check whose status `rc` holds coupled
/// (the mention is no write), and the replay evaluates it (s22: `rc=0; pg_isready -h db; exit
/// $((rc))` exits 0 / 0).
pub(super) fn status_exits_as_read(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    let mut rest = t;
    while let Some(i) = rest.find("exit $((") {
        let from = i + "exit $((".len();
        let Some(len) = rest[from..].find("))") else { break };
        let e = &rest[from..from + len];
        out.push_str(&rest[..i]);
        if e.contains("$?")
            && e.replace("$?", "").bytes().all(|b| b.is_ascii_digit() || b" =!<>&|+-*/%()".contains(&b))
        {
            out.push_str("exit $?");
        } else if super::super::context::is_ident(e.trim()) {
            out.push_str("exit 0");
        } else {
            out.push_str(&rest[i..from + len + 2]);
        }
        rest = &rest[from + len + 2..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::status_exits_as_read;

    #[test]
    fn an_exit_computed_from_the_status_alone_reads_as_exit_status() {
        assert_eq!(status_exits_as_read("c; exit $(( $? == 3 ))"), "c; exit $?");
        assert_eq!(status_exits_as_read("c; exit $(($?!=3)); x"), "c; exit $?; x");
        assert_eq!(status_exits_as_read("c; exit $(( rc ))"), "c; exit 0");
        for kept in ["c; exit $(( rc == 3 ))", "c; exit $(( 1 ))", "exit $(( $? == $(f) ))", "exit $(( $?"] {
            assert_eq!(status_exits_as_read(kept), kept);
        }
    }
}
