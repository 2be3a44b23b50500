//! The checks on `startup-probe`'s settings taken together: its `budgetSeconds` against its
//! `periodSeconds`.

use super::{PolicyError, RuleSet, RulesSpec};
use crate::manifest::located::parse_document_at;

/// The error for a `startup-probe` whose `budgetSeconds` is shorter than one `periodSeconds`, or
/// `None`. `rules` are the settings in force where `at` (`rules`, `overrides[2].rules`) applies;
/// `spec` is that section as written, to place the error on the field it sets.
///
/// The added probe's `failureThreshold` is `ceil(budgetSeconds / periodSeconds)` (rules.md §2.5),
/// so a budget that is not a multiple of the period is rounded up to the next one (docs/policy.md
/// says so); but a budget under one period would still allow a whole period: the two numbers
/// disagree, and which one was meant cannot be told (break-it pass s22).
pub(super) fn startup_budget_error(
    text: &str,
    origin: &str,
    at: &str,
    rules: &RuleSet,
    spec: Option<&RulesSpec>,
) -> Option<PolicyError> {
    let s = &rules.startup_probe;
    if s.budget_seconds >= s.period_seconds {
        return None;
    }
    let written = spec.and_then(|r| r.startup_probe.as_ref());
    // The field this section sets: the budget, else the period (the other one is inherited).
    let field = match written {
        Some(w) if w.budget_seconds.is_some() => "budgetSeconds",
        Some(w) if w.period_seconds.is_some() => "periodSeconds",
        _ => return None,
    };
    let path = format!("{at}.startup-probe.{field}");
    let (line, column) = locate(text, &path);
    Some(PolicyError {
        origin: origin.to_string(),
        line,
        column,
        field: Some(path),
        message: format!(
            "budgetSeconds {} is shorter than one periodSeconds {}: the added startup probe would still allow {} s (failureThreshold 1); give a budget of at least one period",
            s.budget_seconds, s.period_seconds, s.period_seconds
        ),
    })
}

/// The line and column of the value at a dotted path (`overrides[0].rules.startup-probe.periodSeconds`).
fn locate(text: &str, path: &str) -> (Option<u64>, Option<u64>) {
    let node = super::blank::path_tokens(path).and_then(|tokens| {
        let root = parse_document_at(text, 0, 1).ok()??;
        root.at(tokens.iter().map(String::as_str)).map(|n| n.pos)
    });
    match node {
        Some(pos) if pos.line > 0 => {
            (Some(u64::from(pos.line)), Some(u64::from(pos.column)).filter(|c| *c > 0))
        }
        _ => (None, None),
    }
}
