//! Variables a branch that may not run assigned (`if`, `case`, `&&`, `||`, a loop body): after
//! it, each is one of the values it may hold ([`RefKind::OneOf`]), the value before and the one
//! the branch left, or, after an `if`'s `then` and `else` (one of which runs), the two branches'.

use std::collections::{HashMap, HashSet};

use super::super::context::{Ctx, Ref, RefKind};
use super::super::flow::COND;
use super::VarsBefore;

/// How many values a variable set in branches that may not run is followed through
/// ([`RefKind::OneOf`]); past it, its value is unknown.
const MAX_ALTERNATIVES: usize = 8;

/// The variables and unset names a branch left.
pub(super) type Left = (HashMap<String, String>, HashSet<String>);

/// An open `GUARD` region whose conditions are not known: the state before it, its
/// conditions, and what the complementary branch before it left (`Left`: an `else`).
pub(super) struct Region {
    pub(super) before: VarsBefore,
    pub(super) conds: String,
    pub(super) other: Option<Left>,
}

/// A branch closed just before its complement opens: the state before it, and what it left.
pub(super) struct Branch {
    pub(super) before: VarsBefore,
    pub(super) left: Left,
}

/// Whether the `GUARD` conditions `second` hold exactly when `first` do not: one condition,
/// the same test, success (`T`) against failure (`F`), as `flow` writes an `if`'s `else`.
pub(super) fn complementary(first: &str, second: &str) -> bool {
    let cond = COND;
    let single = |c: &str| c.starts_with(cond) && c.matches(cond).count() == 1;
    let kind = |c: &str| c.chars().nth(1);
    single(first)
        && single(second)
        && matches!((kind(first), kind(second)), (Some('T'), Some('F')) | (Some('F'), Some('T')))
        && first.get(cond.len_utf8() + 1..) == second.get(cond.len_utf8() + 1..)
}

impl Ctx<'_> {
    /// After a region that may not have run: every variable it assigned or unset is uncertain,
    /// its value known only at run time; so is `set -a` if the region changed it (`allexport`: as
    /// it was before), and a function it (re)defined (`functions`: as they were before).
    /// `other`: the variables and unset names the complementary branch before it left (an `if`'s
    /// `then` before its `else`: exactly one of them ran, so a value is one of theirs, not the
    /// one before).
    pub(super) fn mark_uncertain(
        &mut self,
        vars: &HashMap<String, String>,
        unset: &HashSet<String>,
        allexport: Option<bool>,
        functions: &[(String, String)],
        other: Option<&Left>,
    ) {
        if self.allexport != allexport {
            self.allexport = None;
        }
        let redefined: Vec<String> =
            self.functions.iter().filter(|f| !functions.contains(f)).map(|(n, _)| n.clone()).collect();
        self.uncertain_functions.extend(redefined);
        let changed_in = |now: &HashMap<String, String>, now_unset: &HashSet<String>| -> Vec<String> {
            now.iter()
                .filter(|(k, v)| vars.get(*k) != Some(*v))
                .map(|(k, _)| k.clone())
                .chain(vars.keys().filter(|k| !now.contains_key(*k)).cloned())
                .chain(now_unset.symmetric_difference(unset).cloned())
                .collect()
        };
        let mut changed = changed_in(&self.shell_vars, &self.unset);
        if let Some((o_vars, o_unset)) = other {
            for name in changed_in(o_vars, o_unset) {
                if !changed.contains(&name) {
                    changed.push(name);
                }
            }
        }
        let (vars, unset) = other.map_or((vars, unset), |(v, u)| (v, u));
        // Its value may be the one before the region or the one after: one of them, known only
        // at run time (a denial only when every one is certainly another host).
        for name in &changed {
            let before = match vars.get(name) {
                Some(v) => v.clone(),
                None if unset.contains(name) => String::new(),
                None => self.outer_value(name),
            };
            let after = match self.shell_vars.get(name) {
                Some(v) => v.clone(),
                None if self.unset.contains(name) => String::new(),
                None => self.outer_value(name),
            };
            let alternatives = self.alternatives_of(&[before, after]);
            let value = self.new_ref(RefKind::OneOf(alternatives), &format!("${name}")).to_string();
            self.shell_vars.insert(name.clone(), value);
        }
        self.uncertain.extend(changed);
    }

    /// The value `name` has where no script assignment or `unset` holds: the container's env, the
    /// Pod's own name or address, or unknown; as text (a marker where not a literal).
    pub(super) fn outer_value(&mut self, name: &str) -> String {
        let saved = (self.shell_vars.remove(name), self.unset.remove(name));
        let judging = std::mem::replace(&mut self.judging_guard, false);
        let lookup = self.lookup(name);
        self.judging_guard = judging;
        if let Some(v) = saved.0 {
            self.shell_vars.insert(name.to_string(), v);
        }
        if saved.1 {
            self.unset.insert(name.to_string());
        }
        let mut out = String::new();
        self.push_lookup(lookup, &format!("${name}"), true, &mut out);
        out
    }

    /// The distinct alternatives of `values`, each one that is itself a [`RefKind::OneOf`] replaced
    /// by its own; none (unknown) past [`MAX_ALTERNATIVES`].
    fn alternatives_of(&self, values: &[String]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for v in values {
            let mut chars = v.chars();
            let nested = match (chars.next().and_then(|c| self.ref_of(c)), chars.next()) {
                (Some(Ref { kind: RefKind::OneOf(alts), .. }), None) => {
                    if alts.is_empty() {
                        return Vec::new();
                    }
                    alts.clone()
                }
                _ => vec![v.clone()],
            };
            for n in nested {
                if !out.contains(&n) {
                    out.push(n);
                }
            }
        }
        if out.len() > MAX_ALTERNATIVES { Vec::new() } else { out }
    }
}
