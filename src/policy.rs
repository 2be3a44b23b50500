//! The policy file: its YAML model, its defaults and its loading.
//!
//! Pure: parsing works on a `&str` and an origin name (a file path, `<embedded default>`); reading the
//! file is the caller's job. A policy file looks like this (every duration is in whole seconds):
//!
//! ```yaml
//! apiVersion: probegate.dev/v1alpha1
//! kind: ProbePolicy
//! mode: enforce            # enforce | audit | off
//! templates:
//!   mutate: false          # also patch the pod templates of Deployments, StatefulSets, ...
//! rules:
//!   liveness-dependency: {action: deny}
//!   startup-probe: {action: mutate, periodSeconds: 5, budgetSeconds: 120, maxInitialDelaySeconds: 30}
//! ```
//!
//! A rule left out keeps its default ([`RuleSet::default`], which `policies/default.yaml` mirrors).
//! Unknown fields, unknown rule ids and actions a rule does not support are errors that name the
//! file, line, column and field ([`PolicyError`]).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};

/// The default policy as shipped in `policies/default.yaml`, compiled into the binary.
pub const DEFAULT_POLICY_YAML: &str = include_str!("../policies/default.yaml");

/// The `apiVersion` a policy file must declare.
pub const API_VERSION: &str = "probegate.dev/v1alpha1";

/// The `kind` a policy file must declare.
pub const KIND: &str = "ProbePolicy";

/// Largest duration accepted anywhere in a policy, in seconds (one hour). Kubernetes itself accepts
/// larger probe values, but a policy asking for more than an hour is a typo.
pub const MAX_SECONDS: u32 = 3600;

/// How a policy (or, later, a namespace override) acts on its findings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Deny, warn and patch as each rule's action says.
    #[default]
    Enforce,
    /// Dry run: never deny and never patch; report what enforce would have done.
    Audit,
    /// Allow everything untouched.
    Off,
}

impl Mode {
    /// The lowercase name used in policy files, logs and metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Enforce => "enforce",
            Mode::Audit => "audit",
            Mode::Off => "off",
        }
    }
}

/// What a rule does with a finding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// `/validate` rejects the object (AdmissionResponse `allowed: false`).
    Deny,
    /// `/validate` admits the object with an AdmissionResponse warning.
    Warn,
    /// `/mutate` fixes the object with a JSONPatch (fixable rules only).
    Mutate,
    /// The rule is not evaluated.
    Off,
}

impl Action {
    /// The lowercase name used in policy files, messages and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Deny => "deny",
            Action::Warn => "warn",
            Action::Mutate => "mutate",
            Action::Off => "off",
        }
    }
}

/// The stable identifiers of the rules. They appear in policy files, messages, logs and metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RuleId {
    /// The liveness probe reaches something other than its own pod.
    LivenessDependency,
    /// Liveness and readiness run the same check and liveness gives up no later than readiness.
    LivenessMatchesReadiness,
    /// A container that declares ports has no readiness probe.
    ReadinessMissing,
    /// A liveness or readiness `timeoutSeconds` below the policy minimum.
    ProbeTimeout,
    /// A container with a liveness probe has no startup probe.
    StartupProbe,
    /// A serving container has no `lifecycle.preStop` hook.
    PrestopSleep,
}

impl RuleId {
    /// Every rule, in catalog order.
    pub const ALL: [RuleId; 6] = [
        RuleId::LivenessDependency,
        RuleId::LivenessMatchesReadiness,
        RuleId::ReadinessMissing,
        RuleId::ProbeTimeout,
        RuleId::StartupProbe,
        RuleId::PrestopSleep,
    ];

    /// The kebab-case id, e.g. `liveness-dependency`.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleId::LivenessDependency => "liveness-dependency",
            RuleId::LivenessMatchesReadiness => "liveness-matches-readiness",
            RuleId::ReadinessMissing => "readiness-missing",
            RuleId::ProbeTimeout => "probe-timeout",
            RuleId::StartupProbe => "startup-probe",
            RuleId::PrestopSleep => "prestop-sleep",
        }
    }

    /// Parses a kebab-case id; `None` for an unknown one.
    pub fn parse(id: &str) -> Option<RuleId> {
        RuleId::ALL.into_iter().find(|r| r.as_str() == id)
    }

    /// Whether the rule can fix what it finds (and so accepts `action: mutate`).
    pub fn fixable(self) -> bool {
        matches!(self, RuleId::ProbeTimeout | RuleId::StartupProbe | RuleId::PrestopSleep)
    }
}

impl fmt::Display for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How `prestop-sleep` writes the hook it adds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SleepStyle {
    /// `lifecycle.preStop.sleep.seconds`: the native sleep action (beta and on by default in
    /// Kubernetes 1.30, GA in 1.34; feature gate `PodLifecycleSleepAction`, Kubernetes docs
    /// "Container Lifecycle Hooks"). Needs nothing in the image.
    Native,
    /// `lifecycle.preStop.exec.command: ["sleep", "N"]`, for older clusters. Needs a `sleep`
    /// binary in the image, which distroless images lack.
    Exec,
}

/// The resolved policy: every rule with its action and parameters. Built by [`parse`], or
/// [`Policy::default`] for the shipped default.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Policy {
    /// The policy-wide mode.
    pub mode: Mode,
    /// Whether pod templates of controllers are patched too.
    pub templates: Templates,
    /// The rules.
    pub rules: RuleSet,
}

/// Pod template handling.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Templates {
    /// Patch pod templates (Deployment, StatefulSet, ...) at admission, not only Pods. Default
    /// `false`: a patched template makes GitOps tools report drift and rolls the workload.
    pub mutate: bool,
}

/// Every rule's resolved settings.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct RuleSet {
    /// `liveness-dependency` (default `deny`).
    pub liveness_dependency: CheckRule<DenyDefault>,
    /// `liveness-matches-readiness` (default `warn`).
    pub liveness_matches_readiness: CheckRule<WarnDefault>,
    /// `readiness-missing` (default `warn`).
    pub readiness_missing: CheckRule<WarnDefault>,
    /// `probe-timeout` (default `mutate`).
    pub probe_timeout: ProbeTimeout,
    /// `startup-probe` (default `mutate`).
    pub startup_probe: StartupProbe,
    /// `prestop-sleep` (default `mutate`).
    pub prestop_sleep: PrestopSleep,
}

impl RuleSet {
    /// The action configured for a rule.
    pub fn action(&self, rule: RuleId) -> Action {
        match rule {
            RuleId::LivenessDependency => self.liveness_dependency.action,
            RuleId::LivenessMatchesReadiness => self.liveness_matches_readiness.action,
            RuleId::ReadinessMissing => self.readiness_missing.action,
            RuleId::ProbeTimeout => self.probe_timeout.action,
            RuleId::StartupProbe => self.startup_probe.action,
            RuleId::PrestopSleep => self.prestop_sleep.action,
        }
    }

    /// Merges a partial rule section over these settings, field by field (what the section sets
    /// wins). Used for the policy file over the defaults, and for namespace overrides.
    pub fn merge(&mut self, spec: &RulesSpec) {
        if let Some(s) = &spec.liveness_dependency {
            merge_opt(&mut self.liveness_dependency.action, s.action.map(Action::from));
        }
        if let Some(s) = &spec.liveness_matches_readiness {
            merge_opt(&mut self.liveness_matches_readiness.action, s.action.map(Action::from));
        }
        if let Some(s) = &spec.readiness_missing {
            merge_opt(&mut self.readiness_missing.action, s.action.map(Action::from));
        }
        if let Some(s) = &spec.probe_timeout {
            let r = &mut self.probe_timeout;
            merge_opt(&mut r.action, s.action.map(Action::from));
            merge_opt(&mut r.liveness_min_seconds, s.liveness_min_seconds);
            merge_opt(&mut r.readiness_min_seconds, s.readiness_min_seconds);
        }
        if let Some(s) = &spec.startup_probe {
            let r = &mut self.startup_probe;
            merge_opt(&mut r.action, s.action.map(Action::from));
            merge_opt(&mut r.period_seconds, s.period_seconds);
            merge_opt(&mut r.budget_seconds, s.budget_seconds);
            merge_opt(&mut r.max_initial_delay_seconds, s.max_initial_delay_seconds);
        }
        if let Some(s) = &spec.prestop_sleep {
            let r = &mut self.prestop_sleep;
            merge_opt(&mut r.action, s.action.map(Action::from));
            merge_opt(&mut r.seconds, s.seconds);
            merge_opt(&mut r.style, s.style);
        }
    }
}

fn merge_opt<T: Copy>(into: &mut T, from: Option<T>) {
    if let Some(v) = from {
        *into = v;
    }
}

/// A rule that only finds (deny, warn or off), with its default action as a type parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckRule<D> {
    /// `deny`, `warn` or `off`.
    pub action: Action,
    _default: std::marker::PhantomData<D>,
}

/// Default-action marker: `deny`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct DenyDefault;
/// Default-action marker: `warn`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct WarnDefault;

/// A marker type that names a default [`Action`].
pub trait DefaultAction {
    /// The default action.
    const ACTION: Action;
}
impl DefaultAction for DenyDefault {
    const ACTION: Action = Action::Deny;
}
impl DefaultAction for WarnDefault {
    const ACTION: Action = Action::Warn;
}

impl<D: DefaultAction> Default for CheckRule<D> {
    fn default() -> Self {
        CheckRule { action: D::ACTION, _default: std::marker::PhantomData }
    }
}

impl<D> CheckRule<D> {
    /// A rule with the given action.
    pub fn with_action(action: Action) -> Self {
        CheckRule { action, _default: std::marker::PhantomData }
    }
}

/// `probe-timeout`: raise `timeoutSeconds` (default 1 s, Kubernetes API reference, Probe) that is
/// below the minimum. Never lowers one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProbeTimeout {
    /// `mutate`, `deny`, `warn` or `off`.
    pub action: Action,
    /// Minimum liveness `timeoutSeconds`, in seconds (default 3).
    pub liveness_min_seconds: u32,
    /// Minimum readiness `timeoutSeconds`, in seconds (default 2).
    pub readiness_min_seconds: u32,
}

impl Default for ProbeTimeout {
    fn default() -> Self {
        ProbeTimeout { action: Action::Mutate, liveness_min_seconds: 3, readiness_min_seconds: 2 }
    }
}

/// `startup-probe`: add a startup probe that reuses the liveness handler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StartupProbe {
    /// `mutate`, `deny`, `warn` or `off`.
    pub action: Action,
    /// `periodSeconds` of the added probe, in seconds (default 5).
    pub period_seconds: u32,
    /// Boot time the added probe allows at least, in seconds (default 120):
    /// `failureThreshold = ceil(budget / periodSeconds)`.
    pub budget_seconds: u32,
    /// A liveness `initialDelaySeconds` above this (default 30 s) moves into the startup budget and
    /// is removed from the liveness probe.
    pub max_initial_delay_seconds: u32,
}

impl Default for StartupProbe {
    fn default() -> Self {
        StartupProbe {
            action: Action::Mutate,
            period_seconds: 5,
            budget_seconds: 120,
            max_initial_delay_seconds: 30,
        }
    }
}

/// `prestop-sleep`: add a `preStop` sleep to serving containers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrestopSleep {
    /// `mutate`, `deny`, `warn` or `off`.
    pub action: Action,
    /// Length of the sleep, in seconds (default 5).
    pub seconds: u32,
    /// Native sleep action or `exec sleep`.
    pub style: SleepStyle,
}

impl Default for PrestopSleep {
    fn default() -> Self {
        PrestopSleep { action: Action::Mutate, seconds: 5, style: SleepStyle::Native }
    }
}

// === The file model (every field optional, merged over the defaults) ===

/// Actions of a rule that only finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckAction {
    /// Reject.
    Deny,
    /// Admit with a warning.
    Warn,
    /// Do not evaluate.
    Off,
}

impl From<CheckAction> for Action {
    fn from(a: CheckAction) -> Action {
        match a {
            CheckAction::Deny => Action::Deny,
            CheckAction::Warn => Action::Warn,
            CheckAction::Off => Action::Off,
        }
    }
}

/// Actions of a rule that can fix what it finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FixAction {
    /// Patch the object at `/mutate`.
    Mutate,
    /// Reject.
    Deny,
    /// Admit with a warning.
    Warn,
    /// Do not evaluate.
    Off,
}

impl From<FixAction> for Action {
    fn from(a: FixAction) -> Action {
        match a {
            FixAction::Mutate => Action::Mutate,
            FixAction::Deny => Action::Deny,
            FixAction::Warn => Action::Warn,
            FixAction::Off => Action::Off,
        }
    }
}

/// The `rules:` section of a policy file (or of a namespace override): every rule optional.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RulesSpec {
    /// `liveness-dependency`.
    pub liveness_dependency: Option<CheckSpec>,
    /// `liveness-matches-readiness`.
    pub liveness_matches_readiness: Option<CheckSpec>,
    /// `readiness-missing`.
    pub readiness_missing: Option<CheckSpec>,
    /// `probe-timeout`.
    pub probe_timeout: Option<ProbeTimeoutSpec>,
    /// `startup-probe`.
    pub startup_probe: Option<StartupProbeSpec>,
    /// `prestop-sleep`.
    pub prestop_sleep: Option<PrestopSleepSpec>,
}

/// Settings of a rule that only has an action.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CheckSpec {
    /// `deny`, `warn` or `off`.
    pub action: Option<CheckAction>,
}

/// `probe-timeout` settings as written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProbeTimeoutSpec {
    /// `mutate`, `deny`, `warn` or `off`.
    pub action: Option<FixAction>,
    /// Seconds, 1 to [`MAX_SECONDS`].
    #[serde(default, deserialize_with = "seconds")]
    pub liveness_min_seconds: Option<u32>,
    /// Seconds, 1 to [`MAX_SECONDS`].
    #[serde(default, deserialize_with = "seconds")]
    pub readiness_min_seconds: Option<u32>,
}

/// `startup-probe` settings as written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StartupProbeSpec {
    /// `mutate`, `deny`, `warn` or `off`.
    pub action: Option<FixAction>,
    /// Seconds, 1 to [`MAX_SECONDS`].
    #[serde(default, deserialize_with = "seconds")]
    pub period_seconds: Option<u32>,
    /// Seconds, 1 to [`MAX_SECONDS`].
    #[serde(default, deserialize_with = "seconds")]
    pub budget_seconds: Option<u32>,
    /// Seconds, 1 to [`MAX_SECONDS`].
    #[serde(default, deserialize_with = "seconds")]
    pub max_initial_delay_seconds: Option<u32>,
}

/// `prestop-sleep` settings as written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PrestopSleepSpec {
    /// `mutate`, `deny`, `warn` or `off`.
    pub action: Option<FixAction>,
    /// Seconds, 1 to [`MAX_SECONDS`].
    #[serde(default, deserialize_with = "seconds")]
    pub seconds: Option<u32>,
    /// `native` or `exec`.
    pub style: Option<SleepStyle>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct TemplatesSpec {
    mutate: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct PolicyFile {
    api_version: serde_saphyr::Spanned<String>,
    kind: serde_saphyr::Spanned<String>,
    mode: Option<Mode>,
    templates: Option<TemplatesSpec>,
    rules: Option<RulesSpec>,
}

/// Deserializes an optional whole number of seconds in `1..=MAX_SECONDS`.
fn seconds<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    let v = i64::deserialize(d)?;
    if !(1..=i64::from(MAX_SECONDS)).contains(&v) {
        return Err(serde::de::Error::custom(format!(
            "{v} is out of range: a duration here is a whole number of seconds from 1 to {MAX_SECONDS}"
        )));
    }
    Ok(Some(v as u32))
}

/// A policy file that cannot be used, with where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render_line())]
pub struct PolicyError {
    /// Where the policy came from: a file path, or `<embedded default>`.
    pub origin: String,
    /// 1-based line of the offending text, when known.
    pub line: Option<u64>,
    /// 1-based column of the offending text, when known.
    pub column: Option<u64>,
    /// The dotted path of the offending field (`rules.startup-probe.budgetSeconds`), when known.
    pub field: Option<String>,
    /// What is wrong, in words.
    pub message: String,
}

impl PolicyError {
    /// `FILE:LINE:COL: field FIELD: MESSAGE`, leaving out what is unknown.
    fn render_line(&self) -> String {
        let mut s = self.origin.clone();
        if let Some(l) = self.line {
            s.push_str(&format!(":{l}"));
            if let Some(c) = self.column {
                s.push_str(&format!(":{c}"));
            }
        }
        s.push_str(": ");
        if let Some(f) = &self.field {
            s.push_str(&format!("field `{f}`: "));
        }
        s.push_str(&self.message);
        s
    }
}

/// Parses and validates a policy file.
///
/// `origin` names the source in errors (a path, or `<embedded default>`). Returns the resolved
/// policy, every rule left out at its default.
///
/// # Errors
/// [`PolicyError`] for YAML syntax errors, unknown fields or rule ids, wrong types, actions a rule
/// does not support, durations outside 1..=3600 seconds, and a wrong `apiVersion` or `kind`.
pub fn parse(yaml: &str, origin: &str) -> Result<Policy, PolicyError> {
    let mut field_path: Option<String> = None;
    let file: PolicyFile = serde_saphyr::with_deserializer_from_str(yaml, |de| {
        serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            if path != "." && !path.is_empty() {
                field_path = Some(path);
            }
            e.into_inner()
        })
    })
    .map_err(|e| {
        let loc = e.location();
        PolicyError {
            origin: origin.to_string(),
            line: loc.map(|l| l.line()).filter(|l| *l > 0),
            column: loc.map(|l| l.column()).filter(|c| *c > 0),
            field: field_path.clone(),
            message: strip_location(&e.without_snippet().to_string()),
        }
    })?;

    let spanned_err = |s: &serde_saphyr::Spanned<String>, field: &str, message: String| PolicyError {
        origin: origin.to_string(),
        line: Some(s.referenced.line()).filter(|l| *l > 0),
        column: Some(s.referenced.column()).filter(|c| *c > 0),
        field: Some(field.to_string()),
        message,
    };
    if file.api_version.value != API_VERSION {
        return Err(spanned_err(
            &file.api_version,
            "apiVersion",
            format!("is {:?}; this version of probegate reads {API_VERSION:?}", file.api_version.value),
        ));
    }
    if file.kind.value != KIND {
        return Err(spanned_err(&file.kind, "kind", format!("is {:?}; expected {KIND:?}", file.kind.value)));
    }

    let mut policy = Policy { mode: file.mode.unwrap_or_default(), ..Policy::default() };
    if let Some(t) = file.templates {
        policy.templates.mutate = t.mutate.unwrap_or(false);
    }
    if let Some(rules) = &file.rules {
        policy.rules.merge(rules);
    }
    Ok(policy)
}

/// serde-saphyr prefixes messages with `line L column C: `; we report the location separately.
fn strip_location(msg: &str) -> String {
    let first = msg.lines().next().unwrap_or(msg).trim();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    if let Some(rest) = first.strip_prefix("line ")
        && let Some(idx) = rest.find(": ")
        && rest[..idx].contains("column")
    {
        return rest[idx + 2..].to_string();
    }
    first.to_string()
}

impl Policy {
    /// The embedded default policy, parsed. Equal to [`Policy::default`] (a test keeps
    /// `policies/default.yaml` and the code in step).
    ///
    /// # Errors
    /// Only if the embedded file were invalid, which the test suite rules out.
    pub fn embedded() -> Result<Policy, PolicyError> {
        parse(DEFAULT_POLICY_YAML, "<embedded default>")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_default_equals_code_defaults() {
        assert_eq!(Policy::embedded().unwrap(), Policy::default());
    }

    #[test]
    fn rule_left_out_keeps_default_and_fields_merge() {
        let p = parse(
            "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\nrules:\n  startup-probe: {budgetSeconds: 300}\n",
            "p.yaml",
        )
        .unwrap();
        assert_eq!(p.rules.startup_probe.budget_seconds, 300);
        assert_eq!(p.rules.startup_probe.period_seconds, 5);
        assert_eq!(p.rules.startup_probe.action, Action::Mutate);
        assert_eq!(p.rules.liveness_dependency.action, Action::Deny);
        assert_eq!(p.mode, Mode::Enforce);
        assert!(!p.templates.mutate);
    }

    fn err(yaml: &str) -> PolicyError {
        parse(yaml, "bad.yaml").unwrap_err()
    }

    const HEAD: &str = "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\n";

    #[test]
    fn unknown_rule_id_names_file_line_and_field() {
        let e = err(&format!("{HEAD}rules:\n  liveness-dependancy: {{action: deny}}\n"));
        assert_eq!(e.line, Some(4), "{e}");
        assert!(e.message.contains("liveness-dependancy"), "{e}");
        assert!(e.to_string().starts_with("bad.yaml:4:"), "{e}");
    }

    #[test]
    fn unknown_top_level_field_is_an_error() {
        let e = err(&format!("{HEAD}mdoe: audit\n"));
        assert_eq!(e.line, Some(3), "{e}");
        assert!(e.message.contains("mdoe"), "{e}");
    }

    #[test]
    fn mutate_not_allowed_on_check_rule() {
        let e = err(&format!("{HEAD}rules:\n  liveness-dependency: {{action: mutate}}\n"));
        assert_eq!(e.line, Some(4), "{e}");
        assert!(e.message.contains("mutate"), "{e}");
        assert_eq!(e.field.as_deref(), Some("rules.liveness-dependency.action"), "{e}");
    }

    #[test]
    fn wrong_type_and_range_name_the_field() {
        let e = err(&format!("{HEAD}rules:\n  startup-probe:\n    budgetSeconds: soon\n"));
        assert_eq!(e.line, Some(5), "{e}");
        assert_eq!(e.field.as_deref(), Some("rules.startup-probe.budgetSeconds"), "{e}");
        let e = err(&format!("{HEAD}rules:\n  prestop-sleep:\n    seconds: 0\n"));
        assert_eq!(e.field.as_deref(), Some("rules.prestop-sleep.seconds"), "{e}");
        assert!(e.message.contains("out of range"), "{e}");
        let e = err(&format!("{HEAD}rules:\n  prestop-sleep:\n    seconds: -5\n"));
        assert!(e.message.contains("out of range"), "{e}");
    }

    #[test]
    fn wrong_api_version_and_kind() {
        let e = err("apiVersion: v1\nkind: ProbePolicy\n");
        assert_eq!((e.line, e.field.as_deref()), (Some(1), Some("apiVersion")), "{e}");
        let e = err("apiVersion: probegate.dev/v1alpha1\nkind: Policy\n");
        assert_eq!((e.line, e.field.as_deref()), (Some(2), Some("kind")), "{e}");
    }

    #[test]
    fn syntax_error_and_empty_file() {
        let e = err(&format!("{HEAD}rules: [unclosed\n"));
        assert!(e.line.is_some(), "{e}");
        let e = err("");
        assert!(!e.message.is_empty(), "{e}");
        let e = err("- a\n- b\n");
        assert!(!e.message.is_empty(), "{e}");
    }

    #[test]
    fn rule_id_round_trip() {
        for r in RuleId::ALL {
            assert_eq!(RuleId::parse(r.as_str()), Some(r));
        }
        assert_eq!(RuleId::parse("nope"), None);
    }
}
