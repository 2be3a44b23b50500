//! Two steps of the replay (s17, "never deny on a guess"; each shape run in bash 5.2 and dash
//! 0.5.12 with stub clients): a `case` whose subject is the check's status
//! ([`status_subject_of`], [`Run::case_on`]), and the variables a statement the replay cannot run leaves unread
//! ([`Run::dead_at`]); and an assignment whose value is the check's output, `out=$(check)`
//! ([`assigned_from`], s24).

use crate::engine::exec::kinds::KindName;
use tree_sitter::Node;

use super::super::super::flow::mentions;
use super::super::super::shell::Walk;
use super::super::super::words::glob_matches;
use super::super::harmless::reads_status_text;
use super::{Flow, Run, is_statement, siblings_after, text};

impl Run<'_, '_> {
    /// `case WORD in ...` run: the first item a pattern of which is WORD (literal patterns, `*`),
    /// each ending with `;;`. `None` for anything else.
    pub(super) fn case(&mut self, s: Node<'_>) -> Option<Flow> {
        let subject = self.word(text(s.child_by_field("value")?, self.walk))?;
        self.case_on(s, &subject)
    }

    /// [`Run::case`] of `case` statement `s` on the value `subject`.
    pub(super) fn case_on(&mut self, s: Node<'_>, subject: &str) -> Option<Flow> {
        let mut c = s.walk();
        let items: Vec<Node<'_>> =
            s.named_children(&mut c).filter(|k| k.kind_name() == "case_item").collect();
        for item in items {
            let mut c = item.walk();
            if item.children(&mut c).any(|k| matches!(k.kind_name(), ";&" | ";;&")) {
                return None;
            }
            let mut c = item.walk();
            let patterns: Vec<String> =
                item.children_by_field("value", &mut c).map(|p| text(p, self.walk).to_string()).collect();
            let mut hit = false;
            for p in &patterns {
                hit |= if p.contains('$') { self.word(p)? == subject } else { glob_matches(p, subject)? };
            }
            if hit {
                let mut c = item.walk();
                let body: Vec<Node<'_>> = item
                    .named_children(&mut c)
                    .filter(|k| is_statement(*k) && super::super::in_case_body(*k, item))
                    .collect();
                return Some(self.seq(body.into_iter()));
            }
        }
        Some(Flow::Next(0))
    }

    /// The variables the replay holds that the script assigns again, after the top-level
    /// statement `s` (text `t`) where the replay stops, before anything reads them: `None` when
    /// `s` may read `$?` or one of them (it names one, a function, `return`, `break`,
    /// `continue`, or an `exit` without a literal status), or is not at the top level.
    pub(super) fn dead_at(&self, s: Node<'_>, t: &str) -> Option<Vec<String>> {
        let parent = s.parent().filter(|p| p.kind_name() == "program" && self.vars.len() == 1)?;
        // (`exit $rc` of an `rc` set before the check, `rc=$?`: no `$?` read, s23.)
        let fixed = self.fixed_exits_as_literal(t);
        let t = fixed.as_str();
        let words =
            t.split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '{' | '}'));
        let exits_literal = words
            .clone()
            .zip(words.skip(1))
            .all(|(w, next)| w != "exit" || !next.is_empty() && next.bytes().all(|b| b.is_ascii_digit()));
        if !self.rules.functions.is_empty()
            || reads_status_text(t)
            || self.names_a_var(t)
            || mentions(t, &["return", "break", "continue"])
            || !exits_literal
        {
            return None;
        }
        let after: Vec<Node<'_>> = siblings_after(s, parent).filter(|k| is_statement(*k)).collect();
        let dead = self.vars[0]
            .iter()
            .map(|(name, _)| name)
            .filter(|name| {
                after.iter().find(|k| mentions(text(**k, self.walk), &[name.as_str()])).is_some_and(|k| {
                    k.kind_name() == "variable_assignment"
                        && k.child_by_field("value")
                            .is_some_and(|v| !mentions(text(v, self.walk), &[name.as_str()]))
                        && k.child_by_field("name").is_some_and(|m| text(m, self.walk) == name.as_str())
                })
            })
            .cloned()
            .collect();
        Some(dead)
    }
}

/// The `case` statement whose subject is the substitution `sub`, alone (or alone in double
/// quotes), when `sub` holds only the statement `at`, which writes nothing to it
/// (`subst::writes_nothing_to_it`: `check >/dev/null`), and `echo $?`: the subject is then
/// `at`'s status.
pub(super) fn status_subject_of<'t>(at: Node<'t>, sub: Node<'t>, walk: &Walk<'_>) -> Option<Node<'t>> {
    let mut c = sub.walk();
    let inner: Vec<Node<'_>> = sub.named_children(&mut c).filter(|k| is_statement(*k)).collect();
    let [first, echo] = inner.as_slice() else { return None };
    let words: Vec<&str> = text(*echo, walk).split_whitespace().collect();
    if *first != at
        || !super::super::subst::writes_nothing_to_it(at, walk)
        || !matches!(words.as_slice(), ["echo", "$?" | "\"$?\"" | "${?}" | "\"${?}\""])
    {
        return None;
    }
    let mut value = sub;
    let mut case = sub.parent()?;
    if case.kind_name() == "string" && text(case, walk).len() == text(sub, walk).len() + 2 {
        (value, case) = (case, case.parent()?);
    }
    (case.kind_name() == "case_statement" && case.child_by_field("value") == Some(value)).then_some(case)
}

/// The assignment `NAME=$(...)` (or `NAME="$(...)"`) whose whole value is the substitution `subst`,
/// when `at` is the substitution's last statement: its status is then `at`'s.
pub(super) fn assigned_from<'t>(at: Node<'t>, subst: Node<'t>, walk: &Walk<'_>) -> Option<Node<'t>> {
    let mut c = subst.walk();
    if subst.named_children(&mut c).filter(|k| is_statement(*k)).last() != Some(at) {
        return None;
    }
    let mut value = subst;
    let mut up = subst.parent()?;
    if up.kind_name() == "string" {
        if up.named_child_count() != 1 || text(up, walk) != format!("\"{}\"", text(subst, walk)) {
            return None;
        }
        value = up;
        up = up.parent()?;
    }
    (up.kind_name() == "variable_assignment" && up.child_by_field("value") == Some(value)).then_some(up)
}
