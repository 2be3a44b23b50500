//! What `explain` says about the dependencies a workload's probes reach: read from the engine's
//! `liveness-dependency` and `readiness-shared-dependency` findings (their [`Coupling`]), so that
//! it says what `check` says.

use super::{ContainerProbes, Timing, containers};
use crate::engine::{self, Coupling, Workload};
use crate::policy::{Action, ContainerExemption, RuleId, RuleSet};

/// The effective rules with only `liveness-dependency` (at `deny`) and `readiness-shared-dependency`
/// (at `warn`) on, the policy's knownCommands kept: the dependency analysis alone, whatever actions
/// the policy gives them (the simulation is about what the probes do, not about the policy).
fn dependency_rules(effective: &RuleSet) -> RuleSet {
    let mut rules = effective.clone();
    for r in RuleId::ALL {
        rules.set_action(r, Action::Off);
    }
    rules.set_action(RuleId::LivenessDependency, Action::Deny);
    rules.set_action(RuleId::ReadinessSharedDependency, Action::Warn);
    rules
}

/// The engine's dependency findings on one container (the `liveness-dependency` and
/// `readiness-shared-dependency` findings `check` reports, with their [`Coupling`]): what
/// `explain` says about them is read from these, never analysed again.
#[derive(Default)]
struct DependencyFindings {
    liveness: Option<engine::Finding>,
    readiness: Option<engine::Finding>,
}

/// The dependency findings of each container, by name.
fn dependency_analysis(
    w: &Workload,
    ctx: &DependencyContext<'_>,
) -> std::collections::HashMap<String, DependencyFindings> {
    let rules = dependency_rules(ctx.rules);
    let eval = engine::evaluate_with_configmaps(&rules, w, ctx.exempt, ctx.configmaps, ctx.namespace);
    let mut out: std::collections::HashMap<String, DependencyFindings> = std::collections::HashMap::new();
    for f in eval.findings {
        let entry = out.entry(f.container.clone()).or_default();
        match f.rule {
            RuleId::LivenessDependency => entry.liveness = Some(f),
            RuleId::ReadinessSharedDependency => entry.readiness = Some(f),
            _ => {}
        }
    }
    out
}

/// What the dependency analysis of one object reads: the effective rules, exempt containers, the
/// ConfigMaps of the whole run and the object's namespace.
pub(super) struct DependencyContext<'a> {
    pub(super) rules: &'a RuleSet,
    pub(super) exempt: &'a [ContainerExemption],
    pub(super) configmaps: &'a engine::StaticConfigMaps,
    pub(super) namespace: &'a str,
}

/// A liveness or readiness probe that reaches a dependency whose outage cannot fail it by exit
/// status: only a client that hangs past the probe's `timeoutSeconds` does ([`Coupling::HangOnly`]).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HangOnly {
    /// The client program (`pg_isready`).
    pub program: String,
    /// What it reaches, as `check` names it.
    pub target: String,
    /// Why its exit status cannot fail the probe, as `check` says it.
    pub how: String,
}

fn hang_only(f: Option<&engine::Finding>) -> Option<HangOnly> {
    match f?.coupling.as_ref()? {
        Coupling::HangOnly { program, target, how } => {
            Some(HangOnly { program: program.clone(), target: target.clone(), how: how.clone() })
        }
        _ => None,
    }
}

/// The message of a finding that reaches something without certainty ([`Coupling::Uncertain`]):
/// `check` warns about it, the simulation does not assume it.
fn uncertain(f: Option<&engine::Finding>) -> Option<String> {
    let f = f?;
    (f.coupling == Some(Coupling::Uncertain)).then(|| engine::display_safe(&f.message).into_owned())
}

fn fails(f: Option<&engine::Finding>) -> bool {
    f.is_some_and(|f| f.coupling == Some(Coupling::Fails))
}

pub(super) fn probes_of(w: &Workload, ctx: &DependencyContext<'_>) -> Vec<ContainerProbes> {
    let exempt = ctx.exempt;
    let found = dependency_analysis(w, ctx);
    let several = engine::liveness_dependencies(
        &dependency_rules(ctx.rules),
        w,
        ctx.exempt,
        ctx.configmaps,
        ctx.namespace,
    );
    containers(w, exempt)
        .into_iter()
        .map(|(kind, c)| {
            let none = DependencyFindings::default();
            let f = found.get(&c.name).unwrap_or(&none);
            let (live, ready) = (f.liveness.as_ref(), f.readiness.as_ref());
            let live_fails = c.liveness_probe.is_some() && fails(live);
            ContainerProbes {
                liveness: c.liveness_probe.as_ref().map(Timing::of),
                readiness: c.readiness_probe.as_ref().map(Timing::of),
                startup: c.startup_probe.as_ref().map(Timing::of),
                liveness_reaches_dependency: live_fails,
                readiness_reaches_dependency: c.readiness_probe.is_some() && fails(ready),
                liveness_aggregate_path: false,
                liveness_dependencies: if live_fails {
                    several.iter().find(|(n, _)| *n == c.name).map(|(_, d)| d.clone()).unwrap_or_default()
                } else {
                    Vec::new()
                },
                liveness_hang_only: hang_only(live),
                readiness_hang_only: hang_only(ready),
                liveness_uncertain: uncertain(live),
                readiness_uncertain: uncertain(ready),
                findings: Vec::new(),
                name: c.name,
                kind,
            }
        })
        .collect()
}
