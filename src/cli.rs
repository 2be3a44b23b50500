//! The offline commands (`probegate policy ...`, `check`, `fix`, `explain`): shells around the pure
//! library. Each returns the process exit code: 0 fine, 1 findings, 2 bad input.

pub mod check;
pub mod config;
pub mod explain;
pub mod fix;
pub mod input;
pub mod junit;
pub mod policy;
pub mod report;
pub mod rules;
pub mod sarif;
pub mod wrap;

/// Exit code: success.
pub const EXIT_OK: u8 = 0;
/// Exit code: findings at or above the failure level.
pub const EXIT_FINDINGS: u8 = 1;
/// Exit code: unreadable input, invalid YAML or an invalid policy.
pub const EXIT_BAD_INPUT: u8 = 2;

/// The origin [`load_policy`] gives the embedded default policy (no `--policy`): reports name it.
pub const EMBEDDED_POLICY_ORIGIN: &str = "<embedded default>";

/// Reads and parses a policy file, or the embedded default when `path` is `None`. Returns the policy,
/// its text and where it came from.
///
/// # Errors
/// A message naming the file (and, for YAML, line, column and field): every error of the file
/// ([`crate::policy::parse_all`]), one per line.
pub fn load_policy(
    path: Option<&std::path::Path>,
) -> Result<(crate::policy::Policy, String, String), String> {
    match path {
        None => {
            let origin = EMBEDDED_POLICY_ORIGIN.to_string();
            crate::policy::parse(crate::policy::DEFAULT_POLICY_YAML, &origin)
                .map(|p| (p, crate::policy::DEFAULT_POLICY_YAML.to_string(), origin))
                .map_err(|e| e.to_string())
        }
        Some(path) => {
            let origin = path.display().to_string();
            let mut bytes = Vec::new();
            std::fs::File::open(path)
                .and_then(|f| {
                    use std::io::Read;
                    f.take(crate::policy::MAX_POLICY_BYTES as u64 + 1).read_to_end(&mut bytes)
                })
                .map_err(|e| format!("{origin}: cannot read: {e}"))?;
            let text = crate::policy::policy_text(bytes).map_err(|e| format!("{origin}: {e}"))?;
            crate::policy::parse_all(&text, &origin)
                .map(|p| (p, text, origin))
                .map_err(|errors| errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))
        }
    }
}

/// [`load_policy`], with `skip` rules turned off everywhere in it ([`skip_rules`]): what `check`,
/// `fix` and `explain` load for `--policy FILE --skip RULE`.
pub fn load_policy_skipping(
    path: Option<&std::path::Path>,
    skip: &[crate::policy::RuleId],
) -> Result<(crate::policy::Policy, String, String), String> {
    load_policy(path).map(|(mut p, text, origin)| {
        skip_rules(&mut p, skip);
        (p, text, origin)
    })
}

/// Turns `rules` off everywhere in a policy: the top-level settings and every override (an override
/// setting their action no longer turns them back on). What `--skip RULE` does.
pub fn skip_rules(policy: &mut crate::policy::Policy, rules: &[crate::policy::RuleId]) {
    use crate::policy::{Action, RuleId};
    for &rule in rules {
        policy.rules.set_action(rule, Action::Off);
        for o in &mut policy.overrides {
            let r = &mut o.rules;
            match rule {
                RuleId::LivenessDependency => r.liveness_dependency.iter_mut().for_each(|s| s.action = None),
                RuleId::LivenessMatchesReadiness => {
                    r.liveness_matches_readiness.iter_mut().for_each(|s| s.action = None)
                }
                RuleId::ReadinessMissing => r.readiness_missing.iter_mut().for_each(|s| s.action = None),
                RuleId::ProbeTimeout => r.probe_timeout.iter_mut().for_each(|s| s.action = None),
                RuleId::StartupProbe => r.startup_probe.iter_mut().for_each(|s| s.action = None),
                RuleId::PrestopSleep => r.prestop_sleep.iter_mut().for_each(|s| s.action = None),
                RuleId::LivenessDependencyPath => {
                    r.liveness_dependency_path.iter_mut().for_each(|s| s.action = None)
                }
                RuleId::ReadinessSharedDependency => {
                    r.readiness_shared_dependency.iter_mut().for_each(|s| s.action = None)
                }
                RuleId::WorkerLivenessMissing => {
                    r.worker_liveness_missing.iter_mut().for_each(|s| s.action = None)
                }
                RuleId::ExecProbeReplaceable => {
                    r.exec_probe_replaceable.iter_mut().for_each(|s| s.action = None)
                }
                RuleId::LivenessNeverRestarted => {
                    r.liveness_never_restarted.iter_mut().for_each(|s| s.action = None)
                }
                RuleId::ProbePathsSwapped => r.probe_paths_swapped.iter_mut().for_each(|s| s.action = None),
                RuleId::ProbeClientDeadline => {
                    r.probe_client_deadline.iter_mut().for_each(|s| s.action = None)
                }
                RuleId::StartupRemoteDependency => {
                    r.startup_remote_dependency.iter_mut().for_each(|s| s.action = None)
                }
            }
        }
    }
}
