//! `probegate policy validate | default | schema | explain`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use super::{EXIT_BAD_INPUT, EXIT_OK};
use crate::policy::{self, Action, RuleId};

/// `policy validate FILE...`: 0 when every file is valid; 2 with `FILE:LINE:COL: what is wrong` for
/// each invalid one.
pub fn validate(files: &[PathBuf], out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let mut code = EXIT_OK;
    for file in files {
        match super::load_policy(Some(file)) {
            Ok(_) => {
                let _ = writeln!(out, "{}: ok", file.display());
            }
            Err(e) => {
                let _ = writeln!(err, "{e}");
                code = EXIT_BAD_INPUT;
            }
        }
    }
    code
}

/// `policy default`: the embedded default policy.
pub fn default(out: &mut dyn Write) -> u8 {
    let _ = out.write_all(policy::DEFAULT_POLICY_YAML.as_bytes());
    EXIT_OK
}

/// `policy schema`: the JSON Schema of the policy file format.
pub fn schema(out: &mut dyn Write) -> u8 {
    let text = serde_json::to_string_pretty(&policy::json_schema()).unwrap_or_default();
    let _ = writeln!(out, "{text}");
    EXIT_OK
}

/// Parses `k=v,k2=v2` into labels.
///
/// # Errors
/// When an entry has no `=` or an empty key.
pub fn parse_labels(text: &str) -> Result<BTreeMap<String, String>, String> {
    let mut labels = BTreeMap::new();
    for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').ok_or_else(|| format!("label {pair:?} is not KEY=VALUE"))?;
        if k.trim().is_empty() {
            return Err(format!("label {pair:?} has an empty key"));
        }
        labels.insert(k.trim().to_string(), v.trim().to_string());
    }
    Ok(labels)
}

/// `policy explain --namespace NS [--labels k=v,...] [--policy FILE]`: the effective policy for a
/// namespace and which overrides made it.
pub fn explain(
    policy_file: Option<&std::path::Path>,
    namespace: &str,
    labels: Option<&str>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let (policy, _, origin) = match super::load_policy(policy_file) {
        Ok(p) => p,
        Err(e) => {
            let _ = writeln!(err, "{e}");
            return EXIT_BAD_INPUT;
        }
    };
    let labels = match labels.map(parse_labels).transpose() {
        Ok(l) => l,
        Err(e) => {
            let _ = writeln!(err, "--labels: {e}");
            return EXIT_BAD_INPUT;
        }
    };
    let eff = policy.effective(namespace, labels.as_ref());
    let _ = writeln!(out, "policy:    {origin}");
    let _ = writeln!(out, "namespace: {namespace}");
    match &labels {
        Some(l) => {
            let text: Vec<String> = l.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let _ = writeln!(out, "labels:    {}", text.join(","));
        }
        None => {
            let _ = writeln!(out, "labels:    (not given: namespaceSelector overrides do not match)");
        }
    }
    let _ = writeln!(out, "overrides:");
    for o in &policy.overrides {
        let state = if eff.overrides.contains(&o.name) { "applied" } else { "not matching" };
        let _ = writeln!(out, "  {:<24} {state}", o.name);
    }
    if policy.overrides.is_empty() {
        let _ = writeln!(out, "  (none in this policy)");
    }
    // The rule table shows each rule's configured action; the mode decides whether it is applied.
    let applied = match eff.mode {
        policy::Mode::Enforce => "",
        policy::Mode::Audit => " (dry run: the deny and mutate actions below are reported, never applied)",
        policy::Mode::Off => " (every object is allowed untouched: no rule below runs)",
    };
    let _ = writeln!(out, "mode:      {}{applied}", eff.mode.as_str());
    let _ = writeln!(out, "templates: mutate={}", eff.templates.mutate);
    let _ = writeln!(out, "rules:");
    let r = &eff.rules;
    for rule in RuleId::ALL {
        let action = r.action(rule);
        let params = match rule {
            RuleId::ProbeTimeout => format!(
                "livenessMinSeconds={} readinessMinSeconds={}",
                r.probe_timeout.liveness_min_seconds, r.probe_timeout.readiness_min_seconds
            ),
            RuleId::StartupProbe => format!(
                "periodSeconds={} budgetSeconds={} maxInitialDelaySeconds={}",
                r.startup_probe.period_seconds,
                r.startup_probe.budget_seconds,
                r.startup_probe.max_initial_delay_seconds
            ),
            RuleId::PrestopSleep => format!(
                "seconds={} style={} skipMetricsOnly={}",
                r.prestop_sleep.seconds,
                match r.prestop_sleep.style {
                    policy::SleepStyle::Native => "native",
                    policy::SleepStyle::Exec => "exec",
                },
                r.prestop_sleep.skip_metrics_only
            ),
            RuleId::ReadinessMissing => format!("skipMetricsOnly={}", r.readiness_missing.skip_metrics_only),
            RuleId::LivenessDependency => {
                format!("knownCommands={}", r.liveness_dependency.known_commands().count())
            }
            RuleId::LivenessDependencyPath => {
                format!("knownHttpPaths={}", r.liveness_dependency_path.known_http_paths().count())
            }
            _ => String::new(),
        };
        let action = if action == Action::Off { "off" } else { action.as_str() };
        let _ = writeln!(out, "  {:<28} {:<7} {params}", rule.as_str(), action);
    }
    write_known(r, out);
    let _ = writeln!(out, "exemptions:");
    for c in &policy.exemptions.containers {
        let images: Vec<&str> = c.images.iter().map(|p| p.as_str()).collect();
        let _ = writeln!(out, "  container {} with image {}", c.name, images.join(" | "));
    }
    let ids: Vec<&str> = policy.exemptions.annotation_rules.iter().map(|r| r.as_str()).collect();
    let _ = writeln!(out, "  annotationRules: {}", ids.join(", "));
    let users: Vec<&str> = policy.exemptions.trusted_controllers.iter().map(|p| p.as_str()).collect();
    let _ = writeln!(out, "  trustedControllers: {}", users.join(", "));
    EXIT_OK
}

/// The effective `knownCommands` and `knownHttpPaths` of `explain`, one entry a line, each marked
/// `built in` or `policy` (the built-in lists come first, see `known_commands`/`known_http_paths`).
/// Entries are never merged, so each list has as many lines as the count above it; text from the
/// policy is escaped (`display_safe`), so a line break in it cannot make two lines of one entry.
fn write_known(r: &policy::RuleSet, out: &mut dyn Write) {
    use crate::engine::display_safe as safe;
    let origin = |i: usize, builtin: usize| if i < builtin { "built in" } else { "policy" };
    let l = &r.liveness_dependency;
    let builtin = if l.default_known_commands { crate::engine::known::builtin().len() } else { 0 };
    let _ = writeln!(out, "knownCommands (liveness-dependency):");
    for (i, k) in l.known_commands().enumerate() {
        let matches: Vec<&str> = k.args.iter().map(String::as_str).collect();
        let _ = writeln!(
            out,
            "  {:<30} {:<8} {} {} -> {} ({})",
            safe(&k.name),
            origin(i, builtin),
            safe(&k.programs.join("|")),
            safe(&matches.join(" ")),
            safe(&k.reaches),
            k.category
        );
    }
    let p = &r.liveness_dependency_path;
    let builtin = if p.default_known_http_paths { crate::engine::paths::builtin().len() } else { 0 };
    let _ = writeln!(out, "knownHttpPaths (liveness-dependency-path):");
    for (i, k) in p.known_http_paths().enumerate() {
        let images =
            if k.images.is_empty() { String::new() } else { format!(" on {}", safe(&k.images.join(" | "))) };
        let _ = writeln!(
            out,
            "  {:<30} {:<8} {} -> {}{images}",
            safe(&k.path),
            origin(i, builtin),
            safe(&k.framework),
            safe(&k.liveness_path)
        );
    }
}
