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

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_saphyr::Spanned;

pub use crate::engine::known::KnownCommand;
pub use crate::engine::paths::KnownHttpPath;

mod blank;
mod budget;
mod names;
pub use names::MAX_OVERRIDE_NAME_CHARS;
mod seconds;
use blank::blank_field;

/// The default policy as shipped in `policies/default.yaml`, compiled into the binary.
pub const DEFAULT_POLICY_YAML: &str = include_str!("../policies/default.yaml");

/// Largest policy file read: 4 MiB. The shipped policies are under 10 KiB; a file past this is not
/// a policy (`--policy /dev/zero` grew to 1 GB before, break-it pass s21).
pub const MAX_POLICY_BYTES: usize = 4 * 1024 * 1024;

/// A policy file's bytes as text: an error past [`MAX_POLICY_BYTES`] (`bytes` may hold one byte
/// more, read to tell) or at the first byte that is not UTF-8, with its line and column.
///
/// # Errors
/// `over 4 MiB: not a policy file`, or `line L, column C (byte N): not UTF-8 text`.
pub fn policy_text(bytes: Vec<u8>) -> Result<String, String> {
    if bytes.len() > MAX_POLICY_BYTES {
        return Err(format!("over {} MiB: not a policy file", MAX_POLICY_BYTES / (1024 * 1024)));
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let before = &e.as_bytes()[..at];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = at - before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1) + 1;
        format!("line {line}, column {column} (byte {at}): not UTF-8 text")
    })
}

/// The `apiVersion` a policy file must declare.
pub const API_VERSION: &str = "probegate.dev/v1alpha1";

/// The `kind` a policy file must declare.
pub const KIND: &str = "ProbePolicy";

/// Largest duration accepted anywhere in a policy, in seconds (one hour). Kubernetes itself accepts
/// larger probe values, but a policy asking for more than an hour is a typo.
pub const MAX_SECONDS: u32 = 3600;

/// How a policy (or, later, a namespace override) acts on its findings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, Default, JsonSchema)]
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
    /// Reported by `probegate check` and in audit annotations only: never a warning at admission.
    Info,
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
            Action::Info => "info",
            Action::Off => "off",
        }
    }
}

/// The stable identifiers of the rules. They appear in policy files, messages, logs and metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema)]
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
    /// A liveness `httpGet` of a framework's aggregate health endpoint (`/actuator/health`).
    LivenessDependencyPath,
    /// A readiness probe reaches a remote dependency.
    ReadinessSharedDependency,
    /// A long-running container with no ports and no liveness or readiness probe.
    WorkerLivenessMissing,
    /// An exec probe that only runs an HTTP client against the pod itself.
    ExecProbeReplaceable,
    /// A liveness probe on a container whose own `restartPolicy` is `Never`.
    LivenessNeverRestarted,
    /// A liveness probe on a path named for readiness, or the reverse.
    ProbePathsSwapped,
    /// A probe client's own deadline is longer than the probe's `timeoutSeconds`.
    ProbeClientDeadline,
    /// A startup probe reaches a remote dependency: its outage kills starting containers.
    StartupRemoteDependency,
}

impl RuleId {
    /// Every rule, in catalog order.
    pub const ALL: [RuleId; 14] = [
        RuleId::LivenessDependency,
        RuleId::LivenessMatchesReadiness,
        RuleId::ReadinessMissing,
        RuleId::ProbeTimeout,
        RuleId::StartupProbe,
        RuleId::PrestopSleep,
        RuleId::LivenessDependencyPath,
        RuleId::ReadinessSharedDependency,
        RuleId::WorkerLivenessMissing,
        RuleId::ExecProbeReplaceable,
        RuleId::LivenessNeverRestarted,
        RuleId::ProbePathsSwapped,
        RuleId::ProbeClientDeadline,
        RuleId::StartupRemoteDependency,
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
            RuleId::LivenessDependencyPath => "liveness-dependency-path",
            RuleId::ReadinessSharedDependency => "readiness-shared-dependency",
            RuleId::WorkerLivenessMissing => "worker-liveness-missing",
            RuleId::ExecProbeReplaceable => "exec-probe-replaceable",
            RuleId::LivenessNeverRestarted => "liveness-never-restarted",
            RuleId::ProbePathsSwapped => "probe-paths-swapped",
            RuleId::ProbeClientDeadline => "probe-client-deadline",
            RuleId::StartupRemoteDependency => "startup-remote-dependency",
        }
    }

    /// Parses a kebab-case id; `None` for an unknown one.
    pub fn parse(id: &str) -> Option<RuleId> {
        RuleId::ALL.into_iter().find(|r| r.as_str() == id)
    }

    /// Whether the rule can fix what it finds (and so accepts `action: mutate`).
    pub fn fixable(self) -> bool {
        matches!(
            self,
            RuleId::ProbeTimeout | RuleId::StartupProbe | RuleId::PrestopSleep | RuleId::ProbeClientDeadline
        )
    }
}

impl fmt::Display for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How `prestop-sleep` writes the hook it adds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
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

/// The resolved policy: every rule with its action and parameters, the namespace overrides and the
/// exemptions. Built by [`parse`], or [`Policy::default`] for the shipped default.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Policy {
    /// The policy-wide mode.
    pub mode: Mode,
    /// Whether pod templates of controllers are patched too.
    pub templates: Templates,
    /// The rules.
    pub rules: RuleSet,
    /// Per-namespace overrides, in file order.
    pub overrides: Vec<Override>,
    /// Containers and annotation opt-outs.
    pub exemptions: Exemptions,
}

/// Annotation on a Pod or pod template that skips rules for it: a comma-separated list of rule ids,
/// e.g. `probegate.dev/skip: "prestop-sleep,startup-probe"`. Only rules listed in
/// [`Exemptions::annotation_rules`] may be skipped this way, and never a rule whose action is `deny`
/// where the object is evaluated (only the policy lifts a denial).
pub const SKIP_ANNOTATION: &str = "probegate.dev/skip";

/// A per-namespace override: where it applies, and what it changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Override {
    /// Appears in logs, metrics and `policy explain`.
    pub name: String,
    /// Globs on the namespace name (`billing-*`); `None` when not given.
    pub namespaces: Option<Vec<glob::Pattern>>,
    /// A metav1 LabelSelector on the Namespace's labels; `None` when not given.
    pub namespace_selector: Option<LabelSelectorSpec>,
    /// The mode inside the override, when it sets one.
    pub mode: Option<Mode>,
    /// Rule settings merged field by field over the result so far.
    pub rules: RulesSpec,
}

impl Override {
    /// Whether the override applies to a namespace: every selector it gives must match. Without the
    /// namespace's labels (`None`: not known, e.g. no cluster), a `namespaceSelector` does not match.
    pub fn matches(&self, namespace: &str, labels: Option<&BTreeMap<String, String>>) -> bool {
        let by_name = self.namespaces.as_ref().is_none_or(|globs| globs.iter().any(|g| g.matches(namespace)));
        let by_labels = match &self.namespace_selector {
            None => true,
            Some(sel) => labels.is_some_and(|l| sel.matches(l)),
        };
        by_name && by_labels
    }

    /// True when the override needs Namespace labels (it has a `namespaceSelector`).
    pub fn needs_labels(&self) -> bool {
        self.namespace_selector.is_some()
    }
}

/// Who is exempt from what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exemptions {
    /// Containers skipped by every rule: a name together with the images it must run (mesh
    /// sidecars own their probes). Default: Istio's and Linkerd's injected proxies
    /// ([`ContainerExemption::defaults`]).
    pub containers: Vec<ContainerExemption>,
    /// Rules that the [`SKIP_ANNOTATION`] may skip. Default: every rule except
    /// `liveness-dependency`, so that an application team cannot opt itself out of the deny rule.
    pub annotation_rules: Vec<RuleId>,
    /// Who may create an object that names a controller owner and have a denial relaxed to a
    /// warning: globs on `request.userInfo.username`. Default: [`DEFAULT_TRUSTED_CONTROLLERS`].
    pub trusted_controllers: Vec<glob::Pattern>,
}

/// The identities of the built-in controllers that create owned objects from templates probegate
/// has already validated. With `--use-service-account-credentials` (the kubeadm default) each
/// controller of kube-controller-manager authenticates as its own service account in
/// `kube-system` (Kubernetes docs, "Using RBAC Authorization", controller roles
/// `system:controller:NAME`); without it, all of them as `system:kube-controller-manager`.
pub const DEFAULT_TRUSTED_CONTROLLERS: [&str; 8] = [
    // Pods of ReplicaSets (and so of Deployments).
    "system:serviceaccount:kube-system:replicaset-controller",
    // ReplicaSets of Deployments.
    "system:serviceaccount:kube-system:deployment-controller",
    "system:serviceaccount:kube-system:statefulset-controller",
    "system:serviceaccount:kube-system:daemon-set-controller",
    // Pods of Jobs.
    "system:serviceaccount:kube-system:job-controller",
    // Jobs of CronJobs.
    "system:serviceaccount:kube-system:cronjob-controller",
    // Pods of ReplicationControllers.
    "system:serviceaccount:kube-system:replication-controller",
    // Every controller, when kube-controller-manager runs with one credential.
    "system:kube-controller-manager",
];

/// One exempt container: its name and the images it must run to be exempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContainerExemption {
    /// The container's name, exactly.
    pub name: String,
    /// Globs on the container's image ([`image_matches`]); at least one must match.
    pub images: Vec<glob::Pattern>,
}

impl ContainerExemption {
    /// The shipped exemptions: the proxies Istio and Linkerd inject, by name and image.
    ///
    /// Istio injects `istio-proxy` running `HUB/proxyv2:TAG`, with `HUB` `docker.io/istio` or
    /// `gcr.io/istio-release` (Istio docs, "Installing the Sidecar"; `global.hub` and
    /// `global.proxy.image` in its Helm values); `*istio*/proxyv2` also covers mirrors that keep
    /// `istio` in the path. Linkerd injects `linkerd-proxy` running `cr.l5d.io/linkerd/proxy`
    /// (`proxy.image.name` in its Helm values; `gcr.io/linkerd-io/proxy` before 2.9).
    pub fn defaults() -> Vec<ContainerExemption> {
        let entry = |name: &str, images: &[&str]| ContainerExemption {
            name: name.to_string(),
            images: images.iter().filter_map(|i| glob::Pattern::new(i).ok()).collect(),
        };
        vec![
            entry(
                "istio-proxy",
                &["docker.io/istio/proxyv2", "gcr.io/istio-release/proxyv2", "*istio*/proxyv2"],
            ),
            entry(
                "linkerd-proxy",
                &["cr.l5d.io/linkerd/proxy", "gcr.io/linkerd-io/proxy", "*linkerd*/proxy"],
            ),
        ]
    }

    /// Whether a container with this name and image is exempt: the name is equal and the image
    /// matches one of the patterns. A container without an image is never exempt.
    pub fn covers(&self, name: &str, image: Option<&str>) -> bool {
        self.name == name && image.is_some_and(|i| self.images.iter().any(|p| image_matches(p, i)))
    }
}

/// Whether an image reference matches a glob: the reference as written, or without its `:tag`
/// and `@digest` (so `docker.io/istio/proxyv2` matches every tag and digest), each also in its
/// Docker Hub long form (`istio/proxyv2` is `docker.io/istio/proxyv2`, `nginx` is
/// `docker.io/library/nginx`: distribution/reference, a first path component is a registry only
/// when it holds `.` or `:` or is `localhost`).
pub fn image_matches(pattern: &glob::Pattern, image: &str) -> bool {
    let repository = image_repository(image);
    let mut candidates = vec![image.to_string(), repository.to_string()];
    let first = repository.split('/').next().unwrap_or("");
    let has_registry =
        repository.contains('/') && (first.contains('.') || first.contains(':') || first == "localhost");
    if !has_registry {
        let prefix = if repository.contains('/') { "docker.io/" } else { "docker.io/library/" };
        candidates.push(format!("{prefix}{image}"));
        candidates.push(format!("{prefix}{repository}"));
    }
    candidates.iter().any(|c| pattern.matches(c))
}

/// The repository of an image reference: without `@digest` and without a `:tag` (a `:` after the
/// last `/`; one before it is a registry port).
fn image_repository(image: &str) -> &str {
    let no_digest = image.split_once('@').map_or(image, |(r, _)| r);
    match no_digest.rfind(':') {
        Some(i) if !no_digest[i..].contains('/') => &no_digest[..i],
        _ => no_digest,
    }
}

impl Default for Exemptions {
    fn default() -> Self {
        Exemptions {
            containers: ContainerExemption::defaults(),
            annotation_rules: RuleId::ALL.into_iter().filter(|r| *r != RuleId::LivenessDependency).collect(),
            trusted_controllers: DEFAULT_TRUSTED_CONTROLLERS
                .iter()
                .filter_map(|u| glob::Pattern::new(u).ok())
                .collect(),
        }
    }
}

impl Exemptions {
    /// The exemption covering a container with this name and image, if any.
    pub fn container(&self, name: &str, image: Option<&str>) -> Option<&ContainerExemption> {
        self.containers.iter().find(|e| e.covers(name, image))
    }

    /// Whether `username` (an AdmissionRequest's `userInfo.username`) is a trusted controller.
    pub fn trusts(&self, username: &str) -> bool {
        !username.is_empty() && self.trusted_controllers.iter().any(|p| p.matches(username))
    }
}

/// What a [`SKIP_ANNOTATION`] value asks for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SkipRequest {
    /// Rules skipped (known and allowed).
    pub skipped: Vec<RuleId>,
    /// Why other entries were refused, one sentence each.
    pub refused: Vec<String>,
}

impl Exemptions {
    /// Reads a [`SKIP_ANNOTATION`] value: rule ids separated by commas (spaces ignored).
    pub fn parse_skip(&self, value: &str) -> SkipRequest {
        let mut out = SkipRequest::default();
        for id in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            match RuleId::parse(id) {
                None => {
                    // The nearest rule id, as policy files get ("did you mean"): a typo here would
                    // otherwise leave the rule on with only this note.
                    // Rule ids are under 30 characters: a longer word is no typo of one, and
                    // comparing a 250 KB word with every id cost seconds (a request-time cost).
                    let nearest = RuleId::ALL
                        .iter()
                        .filter(|_| id.len() <= 64)
                        .map(|r| (strsim::levenshtein(&id.to_ascii_lowercase(), r.as_str()), r.as_str()))
                        .min()
                        .filter(|(d, _)| *d <= 4)
                        .map(|(_, r)| format!(" (did you mean {r:?}?)"))
                        .unwrap_or_default();
                    out.refused
                        .push(format!(
                            "annotation {SKIP_ANNOTATION} names unknown rule {:?}{nearest}; ignored",
                            crate::engine::excerpt(id, 64)
                        ))
                }
                Some(r) if !self.annotation_rules.contains(&r) => out.refused.push(format!(
                    "annotation {SKIP_ANNOTATION} cannot skip {r}: this policy does not let annotations skip it; ignored"
                )),
                Some(r) => {
                    if !out.skipped.contains(&r) {
                        out.skipped.push(r);
                    }
                }
            }
        }
        out
    }
}

/// The policy in force for one namespace: the top-level settings with every matching override
/// merged over them in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Effective {
    /// The mode.
    pub mode: Mode,
    /// Pod template handling.
    pub templates: Templates,
    /// The rules after the overrides.
    pub rules: RuleSet,
    /// Names of the overrides that matched, in the order they were applied.
    pub overrides: Vec<String>,
}

impl Policy {
    /// The effective policy for a namespace. `labels` are the Namespace's labels when known;
    /// `None` makes `namespaceSelector` overrides not match (name globs still do).
    pub fn effective(&self, namespace: &str, labels: Option<&BTreeMap<String, String>>) -> Effective {
        let mut eff = Effective {
            mode: self.mode,
            templates: self.templates,
            rules: self.rules.clone(),
            overrides: vec![],
        };
        for o in self.overrides.iter().filter(|o| o.matches(namespace, labels)) {
            if let Some(m) = o.mode {
                eff.mode = m;
            }
            eff.rules.merge(&o.rules);
            eff.overrides.push(o.name.clone());
        }
        eff
    }

    /// True when some override has a `namespaceSelector` (so Namespace labels are needed).
    pub fn needs_namespace_labels(&self) -> bool {
        self.overrides.iter().any(Override::needs_labels)
    }
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
    /// `liveness-dependency` (default `deny`, with the built-in known commands).
    pub liveness_dependency: LivenessDependency,
    /// `liveness-matches-readiness` (default `warn`).
    pub liveness_matches_readiness: CheckRule<WarnDefault>,
    /// `readiness-missing` (default `warn`).
    pub readiness_missing: ReadinessMissing,
    /// `probe-timeout` (default `mutate`).
    pub probe_timeout: ProbeTimeout,
    /// `startup-probe` (default `mutate`).
    pub startup_probe: StartupProbe,
    /// `prestop-sleep` (default `mutate`).
    pub prestop_sleep: PrestopSleep,
    /// `liveness-dependency-path` (default `warn`, with the built-in known HTTP paths).
    pub liveness_dependency_path: LivenessDependencyPath,
    /// `readiness-shared-dependency` (default `warn`).
    pub readiness_shared_dependency: CheckRule<WarnDefault>,
    /// `worker-liveness-missing` (default `warn`).
    pub worker_liveness_missing: CheckRule<WarnDefault>,
    /// `exec-probe-replaceable` (default `info`).
    pub exec_probe_replaceable: CheckRule<InfoDefault>,
    /// `liveness-never-restarted` (default `warn`).
    pub liveness_never_restarted: CheckRule<WarnDefault>,
    /// `probe-paths-swapped` (default `warn`).
    pub probe_paths_swapped: CheckRule<WarnDefault>,
    /// `probe-client-deadline` (default `warn`; `mutate` raises `timeoutSeconds` above the client's
    /// deadline where the probe's `periodSeconds` leaves room).
    pub probe_client_deadline: CheckRule<WarnDefault>,
    /// `startup-remote-dependency` (default `warn`).
    pub startup_remote_dependency: CheckRule<WarnDefault>,
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
            RuleId::LivenessDependencyPath => self.liveness_dependency_path.action,
            RuleId::ReadinessSharedDependency => self.readiness_shared_dependency.action,
            RuleId::WorkerLivenessMissing => self.worker_liveness_missing.action,
            RuleId::ExecProbeReplaceable => self.exec_probe_replaceable.action,
            RuleId::LivenessNeverRestarted => self.liveness_never_restarted.action,
            RuleId::ProbePathsSwapped => self.probe_paths_swapped.action,
            RuleId::ProbeClientDeadline => self.probe_client_deadline.action,
            RuleId::StartupRemoteDependency => self.startup_remote_dependency.action,
        }
    }

    /// Sets a rule's action (used to turn rules off for an object that skips them).
    pub fn set_action(&mut self, rule: RuleId, action: Action) {
        match rule {
            RuleId::LivenessDependency => self.liveness_dependency.action = action,
            RuleId::LivenessMatchesReadiness => self.liveness_matches_readiness.action = action,
            RuleId::ReadinessMissing => self.readiness_missing.action = action,
            RuleId::ProbeTimeout => self.probe_timeout.action = action,
            RuleId::StartupProbe => self.startup_probe.action = action,
            RuleId::PrestopSleep => self.prestop_sleep.action = action,
            RuleId::LivenessDependencyPath => self.liveness_dependency_path.action = action,
            RuleId::ReadinessSharedDependency => self.readiness_shared_dependency.action = action,
            RuleId::WorkerLivenessMissing => self.worker_liveness_missing.action = action,
            RuleId::ExecProbeReplaceable => self.exec_probe_replaceable.action = action,
            RuleId::LivenessNeverRestarted => self.liveness_never_restarted.action = action,
            RuleId::ProbePathsSwapped => self.probe_paths_swapped.action = action,
            RuleId::ProbeClientDeadline => self.probe_client_deadline.action = action,
            RuleId::StartupRemoteDependency => self.startup_remote_dependency.action = action,
        }
    }

    /// Merges a partial rule section over these settings, field by field (what the section sets
    /// wins). Used for the policy file over the defaults, and for namespace overrides.
    pub fn merge(&mut self, spec: &RulesSpec) {
        if let Some(s) = &spec.liveness_dependency {
            let r = &mut self.liveness_dependency;
            merge_opt(&mut r.action, s.action.map(Action::from));
            merge_opt(&mut r.default_known_commands, s.default_known_commands);
            r.known_commands.extend(s.known_commands.iter().flatten().cloned());
        }
        if let Some(s) = &spec.liveness_matches_readiness {
            merge_opt(&mut self.liveness_matches_readiness.action, s.action.map(Action::from));
        }
        if let Some(s) = &spec.readiness_missing {
            merge_opt(&mut self.readiness_missing.action, s.action.map(Action::from));
            merge_opt(&mut self.readiness_missing.skip_metrics_only, s.skip_metrics_only);
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
            merge_opt(&mut r.skip_metrics_only, s.skip_metrics_only);
        }
        if let Some(s) = &spec.liveness_dependency_path {
            let r = &mut self.liveness_dependency_path;
            merge_opt(&mut r.action, s.action.map(Action::from));
            merge_opt(&mut r.default_known_http_paths, s.default_known_http_paths);
            r.known_http_paths.extend(s.known_http_paths.iter().flatten().cloned());
        }
        let checks = [
            (&spec.readiness_shared_dependency, &mut self.readiness_shared_dependency.action),
            (&spec.worker_liveness_missing, &mut self.worker_liveness_missing.action),
            (&spec.exec_probe_replaceable, &mut self.exec_probe_replaceable.action),
            (&spec.liveness_never_restarted, &mut self.liveness_never_restarted.action),
            (&spec.probe_paths_swapped, &mut self.probe_paths_swapped.action),
            (&spec.startup_remote_dependency, &mut self.startup_remote_dependency.action),
        ];
        for (s, action) in checks {
            if let Some(s) = s {
                merge_opt(action, s.action.map(Action::from));
            }
        }
        if let Some(s) = &spec.probe_client_deadline {
            merge_opt(&mut self.probe_client_deadline.action, s.action.map(Action::from));
        }
    }
}

fn merge_opt<T: Copy>(into: &mut T, from: Option<T>) {
    if let Some(v) = from {
        *into = v;
    }
}

/// `liveness-dependency`: its action, and the commands that reach a dependency without naming a
/// host (`knownCommands`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LivenessDependency {
    /// `deny`, `warn` or `off` (default `deny`).
    pub action: Action,
    /// Whether the built-in list ([`crate::engine::known::builtin`]) applies (default `true`).
    pub default_known_commands: bool,
    /// The policy's own entries, tried after the built-in ones. Namespace overrides add theirs.
    pub known_commands: Vec<KnownCommand>,
}

impl Default for LivenessDependency {
    fn default() -> Self {
        LivenessDependency { action: Action::Deny, default_known_commands: true, known_commands: Vec::new() }
    }
}

impl LivenessDependency {
    /// Every known command in force: the built-in list (unless turned off), then the policy's.
    pub fn known_commands(&self) -> impl Iterator<Item = &KnownCommand> {
        let builtin: &[KnownCommand] =
            if self.default_known_commands { crate::engine::known::builtin() } else { &[] };
        builtin.iter().chain(self.known_commands.iter())
    }
}

/// `readiness-missing`: its action, and whether metrics-only containers are skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadinessMissing {
    /// `deny`, `warn`, `info` or `off` (default `warn`).
    pub action: Action,
    /// Skip containers that only serve metrics (default `true`, see
    /// [`crate::engine::metrics_only`]): Prometheus scrapes a pod whether it is Ready or not, so a
    /// readiness probe there gates nothing.
    pub skip_metrics_only: bool,
}

impl Default for ReadinessMissing {
    fn default() -> Self {
        ReadinessMissing { action: Action::Warn, skip_metrics_only: true }
    }
}

/// `liveness-dependency-path`: its action, and the aggregate health paths (`knownHttpPaths`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LivenessDependencyPath {
    /// `deny`, `warn`, `info` or `off` (default `warn`: the app may have no database at all).
    pub action: Action,
    /// Whether the built-in list ([`crate::engine::paths::builtin`]) applies (default `true`).
    pub default_known_http_paths: bool,
    /// The policy's own entries, tried after the built-in ones. Namespace overrides add theirs.
    pub known_http_paths: Vec<KnownHttpPath>,
}

impl Default for LivenessDependencyPath {
    fn default() -> Self {
        LivenessDependencyPath {
            action: Action::Warn,
            default_known_http_paths: true,
            known_http_paths: Vec::new(),
        }
    }
}

impl LivenessDependencyPath {
    /// Every known HTTP path in force: the built-in list (unless turned off), then the policy's.
    pub fn known_http_paths(&self) -> impl Iterator<Item = &KnownHttpPath> {
        let builtin: &[KnownHttpPath] =
            if self.default_known_http_paths { crate::engine::paths::builtin() } else { &[] };
        builtin.iter().chain(self.known_http_paths.iter())
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
/// Default-action marker: `info`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct InfoDefault;

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
impl DefaultAction for InfoDefault {
    const ACTION: Action = Action::Info;
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
    /// Boot time the added probe allows at least, in seconds (default 120), raised to the liveness
    /// probe's start grace `initialDelaySeconds + periodSeconds × failureThreshold` when that is
    /// longer (rules.md §2.5): `failureThreshold = ceil(budget / periodSeconds)`.
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
    /// Skip containers that only serve metrics (see [`crate::engine::metrics_only`]). Default
    /// `false`: the sleep is harmless there (it delays a scrape target's exit by a few seconds), it
    /// is patched rather than reported at admission, and a metrics port may still sit behind a
    /// Service that sends traffic.
    pub skip_metrics_only: bool,
}

impl Default for PrestopSleep {
    fn default() -> Self {
        PrestopSleep {
            action: Action::Mutate,
            seconds: 5,
            style: SleepStyle::Native,
            skip_metrics_only: false,
        }
    }
}

// === The file model (every field optional, merged over the defaults) ===

/// Actions of a rule that only finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CheckAction {
    /// Reject.
    Deny,
    /// Admit with a warning.
    Warn,
    /// Report in `probegate check` and audit annotations only.
    Info,
    /// Do not evaluate.
    Off,
}

impl From<CheckAction> for Action {
    fn from(a: CheckAction) -> Action {
        match a {
            CheckAction::Deny => Action::Deny,
            CheckAction::Warn => Action::Warn,
            CheckAction::Info => Action::Info,
            CheckAction::Off => Action::Off,
        }
    }
}

/// Actions of a rule that can fix what it finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
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
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RulesSpec {
    /// `liveness-dependency`.
    pub liveness_dependency: Option<LivenessDependencySpec>,
    /// `liveness-matches-readiness`.
    pub liveness_matches_readiness: Option<CheckSpec>,
    /// `readiness-missing`.
    pub readiness_missing: Option<ReadinessMissingSpec>,
    /// `probe-timeout`.
    pub probe_timeout: Option<ProbeTimeoutSpec>,
    /// `startup-probe`.
    pub startup_probe: Option<StartupProbeSpec>,
    /// `prestop-sleep`.
    pub prestop_sleep: Option<PrestopSleepSpec>,
    /// `liveness-dependency-path`.
    pub liveness_dependency_path: Option<LivenessDependencyPathSpec>,
    /// `readiness-shared-dependency`.
    pub readiness_shared_dependency: Option<CheckSpec>,
    /// `worker-liveness-missing`.
    pub worker_liveness_missing: Option<CheckSpec>,
    /// `exec-probe-replaceable`.
    pub exec_probe_replaceable: Option<CheckSpec>,
    /// `liveness-never-restarted`.
    pub liveness_never_restarted: Option<CheckSpec>,
    /// `probe-paths-swapped`.
    pub probe_paths_swapped: Option<CheckSpec>,
    /// `probe-client-deadline`.
    pub probe_client_deadline: Option<ProbeClientDeadlineSpec>,
    /// `startup-remote-dependency`.
    pub startup_remote_dependency: Option<CheckSpec>,
}

/// `readiness-missing` settings as written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReadinessMissingSpec {
    /// `deny`, `warn`, `info` or `off`.
    pub action: Option<CheckAction>,
    /// Skip containers that only serve metrics: every declared port named for metrics
    /// (`metrics`, `http-metrics`, `*-metrics`), or a metrics proxy image (`kube-rbac-proxy`).
    /// Default true.
    pub skip_metrics_only: Option<bool>,
}

/// `liveness-dependency-path` settings as written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LivenessDependencyPathSpec {
    /// `deny`, `warn`, `info` or `off`.
    pub action: Option<CheckAction>,
    /// Use the built-in list of aggregate health paths (default true; the list is in the README).
    /// `false` keeps only `knownHttpPaths`.
    pub default_known_http_paths: Option<bool>,
    /// More aggregate health paths, added to the built-in list (and, in a namespace override, to
    /// what the policy already has).
    pub known_http_paths: Option<Vec<KnownHttpPath>>,
}

/// Settings of a rule that only has an action.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CheckSpec {
    /// `deny`, `warn` or `off`.
    pub action: Option<CheckAction>,
}

/// Actions of a rule that can fix what it finds and also takes `info` (`probe-client-deadline`,
/// an `info` rule before it could fix).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FixOrInfoAction {
    /// Patch the object at `/mutate`.
    Mutate,
    /// Reject.
    Deny,
    /// Admit with a warning.
    Warn,
    /// Report in `probegate check` and audit annotations only.
    Info,
    /// Do not evaluate.
    Off,
}

impl From<FixOrInfoAction> for Action {
    fn from(a: FixOrInfoAction) -> Action {
        match a {
            FixOrInfoAction::Mutate => Action::Mutate,
            FixOrInfoAction::Deny => Action::Deny,
            FixOrInfoAction::Warn => Action::Warn,
            FixOrInfoAction::Info => Action::Info,
            FixOrInfoAction::Off => Action::Off,
        }
    }
}

/// `probe-client-deadline` settings as written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProbeClientDeadlineSpec {
    /// `mutate` (raise `timeoutSeconds` above the client's deadline, never above `periodSeconds`),
    /// `deny`, `warn`, `info` or `off`.
    pub action: Option<FixOrInfoAction>,
}

/// `liveness-dependency` settings as written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LivenessDependencySpec {
    /// `deny`, `warn` or `off`.
    pub action: Option<CheckAction>,
    /// Use the built-in list of commands that reach a dependency without naming a host (default
    /// true; the list is in the README). `false` keeps only `knownCommands`.
    pub default_known_commands: Option<bool>,
    /// More commands that reach a dependency without naming a host, added to the built-in list
    /// (and, in a namespace override, to what the policy already has).
    pub known_commands: Option<Vec<KnownCommand>>,
}

/// `probe-timeout` settings as written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProbeTimeoutSpec {
    /// `mutate`, `deny`, `warn` or `off`.
    pub action: Option<FixAction>,
    /// Seconds, 1 to [`MAX_SECONDS`].
    #[serde(default, deserialize_with = "seconds::seconds")]
    #[schemars(range(min = 1, max = 3600))]
    pub liveness_min_seconds: Option<u32>,
    /// Seconds, 1 to [`MAX_SECONDS`].
    #[serde(default, deserialize_with = "seconds::seconds")]
    #[schemars(range(min = 1, max = 3600))]
    pub readiness_min_seconds: Option<u32>,
}

/// `startup-probe` settings as written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StartupProbeSpec {
    /// `mutate`, `deny`, `warn` or `off`.
    pub action: Option<FixAction>,
    /// Seconds, 1 to [`MAX_SECONDS`].
    #[serde(default, deserialize_with = "seconds::seconds")]
    #[schemars(range(min = 1, max = 3600))]
    pub period_seconds: Option<u32>,
    /// Seconds, 1 to [`MAX_SECONDS`].
    #[serde(default, deserialize_with = "seconds::seconds")]
    #[schemars(range(min = 1, max = 3600))]
    pub budget_seconds: Option<u32>,
    /// Seconds, 1 to [`MAX_SECONDS`].
    #[serde(default, deserialize_with = "seconds::seconds")]
    #[schemars(range(min = 1, max = 3600))]
    pub max_initial_delay_seconds: Option<u32>,
}

/// `prestop-sleep` settings as written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PrestopSleepSpec {
    /// `mutate`, `deny`, `warn` or `off`.
    pub action: Option<FixAction>,
    /// Seconds, 1 to [`MAX_SECONDS`].
    #[serde(default, deserialize_with = "seconds::seconds")]
    #[schemars(range(min = 1, max = 3600))]
    pub seconds: Option<u32>,
    /// `native` or `exec`.
    pub style: Option<SleepStyle>,
    /// Skip containers that only serve metrics (as `readiness-missing.skipMetricsOnly`). Default false.
    pub skip_metrics_only: Option<bool>,
}

/// `templates:` as written.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TemplatesSpec {
    /// Patch pod templates of controllers too (default false).
    pub mutate: Option<bool>,
}

/// A metav1 LabelSelector (Kubernetes API reference, LabelSelector): every `matchLabels` pair and
/// every `matchExpressions` requirement must hold.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LabelSelectorSpec {
    /// Labels that must be present with these values.
    #[serde(default)]
    pub match_labels: BTreeMap<String, String>,
    /// Set-based requirements.
    #[serde(default)]
    pub match_expressions: Vec<LabelSelectorRequirement>,
}

/// One set-based requirement of a LabelSelector.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LabelSelectorRequirement {
    /// The label key.
    pub key: String,
    /// `In`, `NotIn`, `Exists` or `DoesNotExist`.
    pub operator: SelectorOperator,
    /// Values for `In` and `NotIn` (must be non-empty there, empty otherwise).
    #[serde(default)]
    pub values: Vec<String>,
}

/// LabelSelector operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
pub enum SelectorOperator {
    /// The label's value is one of `values`.
    In,
    /// The label is absent or its value is not one of `values`.
    NotIn,
    /// The label is present.
    Exists,
    /// The label is absent.
    DoesNotExist,
}

impl LabelSelectorSpec {
    /// Whether a Namespace with these labels is selected.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.match_labels.iter().all(|(k, v)| labels.get(k) == Some(v))
            && self.match_expressions.iter().all(|e| {
                let value = labels.get(&e.key);
                match e.operator {
                    SelectorOperator::In => value.is_some_and(|v| e.values.contains(v)),
                    SelectorOperator::NotIn => value.is_none_or(|v| !e.values.contains(v)),
                    SelectorOperator::Exists => value.is_some(),
                    SelectorOperator::DoesNotExist => value.is_none(),
                }
            })
    }

    /// Why no Namespace can ever match, if that is so (an invalid label key or value, an
    /// operator without its values, requirements that exclude each other).
    fn contradiction(&self) -> Option<String> {
        let keys = self.match_labels.keys().chain(self.match_expressions.iter().map(|e| &e.key));
        for key in keys {
            if let Some(why) = label_key_problem(key) {
                return Some(format!("label key {key:?} {why}"));
            }
        }
        let values = self.match_labels.values().chain(self.match_expressions.iter().flat_map(|e| &e.values));
        for value in values {
            if let Some(why) = label_value_problem(value) {
                return Some(format!("label value {value:?} {why}"));
            }
        }
        for e in &self.match_expressions {
            let needs_values = matches!(e.operator, SelectorOperator::In | SelectorOperator::NotIn);
            if needs_values && e.values.is_empty() {
                return Some(format!("matchExpressions {:?} {:?} has no values", e.key, e.operator));
            }
            if !needs_values && !e.values.is_empty() {
                return Some(format!("matchExpressions {:?} {:?} must not have values", e.key, e.operator));
            }
            let fixed = self.match_labels.get(&e.key);
            let required_elsewhere = self.match_expressions.iter().any(|o| {
                o.key == e.key && matches!(o.operator, SelectorOperator::In | SelectorOperator::Exists)
            });
            let impossible = match e.operator {
                SelectorOperator::In => fixed.is_some_and(|v| !e.values.contains(v)),
                SelectorOperator::NotIn => fixed.is_some_and(|v| e.values.contains(v)),
                SelectorOperator::DoesNotExist => fixed.is_some() || required_elsewhere,
                SelectorOperator::Exists => false,
            };
            if impossible {
                return Some(format!(
                    "matchLabels and matchExpressions contradict each other on {:?}",
                    e.key
                ));
            }
        }
        None
    }
}

/// Why `name` is not a label name (the part after any `prefix/`): at most 63 characters,
/// alphanumerics, `-`, `_`, `.`, starting and ending alphanumeric (Kubernetes docs, "Labels and
/// Selectors", syntax and character set).
fn label_name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("has an empty name");
    }
    if name.len() > 63 {
        return Some("has a name over 63 characters");
    }
    let ok_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if !name.chars().all(ok_char) {
        return Some("may only hold letters, digits, '-', '_' and '.'");
    }
    if !name.starts_with(|c: char| c.is_ascii_alphanumeric())
        || !name.ends_with(|c: char| c.is_ascii_alphanumeric())
    {
        return Some("must start and end with a letter or digit");
    }
    None
}

/// Why `key` is not a label key: an optional DNS subdomain prefix (at most 253 characters,
/// lowercase) and `/`, then a label name.
fn label_key_problem(key: &str) -> Option<&'static str> {
    match key.split_once('/') {
        Some((prefix, name)) => {
            let prefix_ok = !prefix.is_empty()
                && prefix.len() <= 253
                && prefix.split('.').all(|part| {
                    !part.is_empty()
                        && part.len() <= 63
                        && part.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                        && !part.starts_with('-')
                        && !part.ends_with('-')
                });
            if !prefix_ok {
                return Some("has a prefix that is not a lowercase DNS subdomain");
            }
            label_name_problem(name)
        }
        None => label_name_problem(key),
    }
}

/// Why `value` is not a label value: empty, or a label name.
fn label_value_problem(value: &str) -> Option<&'static str> {
    if value.is_empty() { None } else { label_name_problem(value) }
}

/// One entry of `overrides:` as written.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct OverrideSpec {
    /// Appears in logs and metrics.
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    /// Globs on the namespace name.
    #[schemars(with = "Option<Vec<String>>")]
    pub namespaces: Option<Vec<Spanned<String>>>,
    /// A LabelSelector on the Namespace's labels.
    pub namespace_selector: Option<LabelSelectorSpec>,
    /// The mode inside the override.
    pub mode: Option<Mode>,
    /// Rule settings merged over the result so far.
    pub rules: Option<RulesSpec>,
}

/// `exemptions:` as written.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ExemptionsSpec {
    /// Containers every rule skips: each a name with the images it must run.
    pub containers: Option<Vec<ContainerExemptionSpec>>,
    /// Rules the `probegate.dev/skip` annotation may skip.
    pub annotation_rules: Option<Vec<RuleId>>,
    /// Globs on `request.userInfo.username`: who may create an object naming a controller owner
    /// and have its denials relaxed to warnings. Replaces the default list.
    #[schemars(with = "Option<Vec<String>>")]
    pub trusted_controllers: Option<Vec<Spanned<String>>>,
}

/// One entry of `exemptions.containers` as written: `{name: istio-proxy, images: [PATTERN, ...]}`.
/// A bare name is refused: it would exempt any app container that takes the name.
#[derive(Debug, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContainerExemptionSpec {
    /// The container's name, exactly.
    pub name: String,
    /// Globs on the container's image; a pattern without a tag or digest matches every tag and
    /// digest (`docker.io/istio/proxyv2`, `*istio*/proxyv2`).
    #[schemars(with = "Vec<String>")]
    pub images: Vec<Spanned<String>>,
}

impl<'de> Deserialize<'de> for ContainerExemptionSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Fields {
            name: String,
            images: Vec<Spanned<String>>,
        }
        struct Entry;
        impl<'de> serde::de::Visitor<'de> for Entry {
            type Value = ContainerExemptionSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map {name: CONTAINER, images: [PATTERN, ...]}")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Err(E::custom(format!(
                    "{v:?} names a container without its images, which would exempt any app container called that; write {{name: {v}, images: [PATTERN, ...]}}"
                )))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                let f = Fields::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(ContainerExemptionSpec { name: f.name, images: f.images })
            }
        }
        d.deserialize_any(Entry)
    }
}

/// The policy file as written (`apiVersion: probegate.dev/v1alpha1`, `kind: ProbePolicy`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(title = "ProbePolicy", description = "probegate policy file (probegate.dev/v1alpha1)")]
pub struct PolicyFile {
    /// Must be `probegate.dev/v1alpha1`.
    #[schemars(with = "String")]
    pub api_version: Spanned<String>,
    /// Must be `ProbePolicy`.
    #[schemars(with = "String")]
    pub kind: Spanned<String>,
    /// `enforce`, `audit` or `off` (default `enforce`).
    pub mode: Option<Mode>,
    /// Pod template handling.
    pub templates: Option<TemplatesSpec>,
    /// Rule settings; a rule left out keeps its default.
    pub rules: Option<RulesSpec>,
    /// Per-namespace overrides, applied in file order.
    #[serde(default)]
    pub overrides: Vec<OverrideSpec>,
    /// Exempt containers and annotation opt-outs.
    pub exemptions: Option<ExemptionsSpec>,
}

/// The JSON Schema of the policy file format (what `probegate policy schema` prints and
/// `policies/schema.json` holds).
pub fn json_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(PolicyFile)).unwrap_or_default()
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
/// does not support, durations outside 1..=3600 seconds, and a wrong `apiVersion` or `kind`: the
/// first one in the file ([`parse_all`] gives every one).
pub fn parse(yaml: &str, origin: &str) -> Result<Policy, PolicyError> {
    let file = deserialize(yaml, origin)?;
    resolve(file, origin, yaml).map_err(|mut errors| errors.swap_remove(0))
}

/// Most errors [`parse_all`] reports for one file.
pub const MAX_ERRORS: usize = 50;

/// As [`parse`], with every error of the file instead of the first one (at most [`MAX_ERRORS`]),
/// in file order, each with its line and field path where known.
///
/// A field that cannot be read (unknown, of the wrong type, out of range) is reported, then blanked
/// out of the text (replaced by spaces, so every later line and column stays where it was) and the
/// file read again, until it reads; the checks that need the whole file (`apiVersion`, `kind`,
/// overrides, exemptions) then report all of theirs. A YAML syntax error, or an error in a list
/// item or without a field path, ends the search: what follows it cannot be read reliably.
///
/// # Errors
/// Every [`PolicyError`] found, at least one.
pub fn parse_all(yaml: &str, origin: &str) -> Result<Policy, Vec<PolicyError>> {
    let mut text = yaml.to_string();
    let mut errors: Vec<PolicyError> = Vec::new();
    while errors.len() < MAX_ERRORS {
        match deserialize(&text, origin) {
            Ok(file) => {
                return match resolve(file, origin, &text) {
                    Ok(policy) if errors.is_empty() => Ok(policy),
                    Ok(_) => Err(errors),
                    Err(more) => {
                        errors.extend(more);
                        errors.sort_by_key(|e| (e.line.unwrap_or(u64::MAX), e.column.unwrap_or(0)));
                        errors.truncate(MAX_ERRORS);
                        Err(errors)
                    }
                };
            }
            Err(e) => {
                let blanked = e.field.as_deref().and_then(|f| blank_field(&text, f));
                errors.push(e);
                match blanked {
                    Some(t) if t != text => text = t,
                    _ => break,
                }
            }
        }
    }
    errors.sort_by_key(|e| (e.line.unwrap_or(u64::MAX), e.column.unwrap_or(0)));
    Err(errors)
}

/// Reads the file model, or the first error in it.
fn deserialize(yaml: &str, origin: &str) -> Result<PolicyFile, PolicyError> {
    let mut field_path: Option<String> = None;
    serde_saphyr::with_deserializer_from_str(yaml, |de| {
        serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            // A `Spanned` value's inner field (`namespaces[0].value`): the policy has no field
            // named `value`, so it is the wrapper's, not the user's (break-it pass s21).
            let path = path.strip_suffix(".value").map_or(path.clone(), str::to_string);
            if path != "." && !path.is_empty() && !path.contains('?') {
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
            message: suggest_nearest(&crate::manifest::located::plain_yaml_message(
                &e.without_snippet().to_string(),
            )),
        }
    })
}

/// The policy a file model makes, or every error its checks find. `text` is the file's (to place
/// the errors found on values read without their positions).
fn resolve(file: PolicyFile, origin: &str, text: &str) -> Result<Policy, Vec<PolicyError>> {
    let mut errors = Vec::new();
    let spanned_err = |s: &serde_saphyr::Spanned<String>, field: &str, message: String| PolicyError {
        origin: origin.to_string(),
        line: Some(s.referenced.line()).filter(|l| *l > 0),
        column: Some(s.referenced.column()).filter(|c| *c > 0),
        field: Some(field.to_string()),
        message,
    };
    if file.api_version.value != API_VERSION {
        errors.push(spanned_err(
            &file.api_version,
            "apiVersion",
            format!("is {:?}; this version of probegate reads {API_VERSION:?}", file.api_version.value),
        ));
    }
    if file.kind.value != KIND {
        errors.push(spanned_err(&file.kind, "kind", format!("is {:?}; expected {KIND:?}", file.kind.value)));
    }

    let mut policy = Policy { mode: file.mode.unwrap_or_default(), ..Policy::default() };
    if let Some(t) = file.templates {
        policy.templates.mutate = t.mutate.unwrap_or(false);
    }
    if let Some(rules) = &file.rules {
        policy.rules.merge(rules);
    }
    errors.extend(budget::startup_budget_error(text, origin, "rules", &policy.rules, file.rules.as_ref()));
    if let Some(e) = file.exemptions {
        if let Some(entries) = e.containers {
            match container_exemptions(entries, origin, &spanned_err) {
                Ok(list) => policy.exemptions.containers = list,
                Err(more) => errors.extend(more),
            }
        }
        if let Some(r) = e.annotation_rules {
            policy.exemptions.annotation_rules = r;
        }
        if let Some(users) = e.trusted_controllers {
            let mut patterns = Vec::new();
            for (i, u) in users.iter().enumerate() {
                let field = format!("exemptions.trustedControllers[{i}]");
                if u.value.trim().is_empty() {
                    errors.push(spanned_err(u, &field, "is empty: give a user name or a glob".into()));
                    continue;
                }
                match glob::Pattern::new(&u.value) {
                    Ok(p) => patterns.push(p),
                    Err(e) => {
                        errors.push(spanned_err(u, &field, format!("bad glob {:?}: {}", u.value, e.msg)))
                    }
                }
            }
            policy.exemptions.trusted_controllers = patterns;
        }
    }
    for (i, o) in file.overrides.into_iter().enumerate() {
        let at = |field: String, message: String| spanned_err(&o.name, &field, message);
        let field = |f: &str| format!("overrides[{i}].{f}");
        if o.name.value.trim().is_empty() {
            errors.push(at(
                field("name"),
                "is empty: every override needs a name (it appears in logs and metrics)".into(),
            ));
            continue;
        }
        if let Some(why) = names::override_name_too_long(&o.name.value) {
            errors.push(at(field("name"), why));
            continue;
        }
        if policy.overrides.iter().any(|p| p.name == o.name.value) {
            errors.push(at(field("name"), format!("{:?} is used by an earlier override", o.name.value)));
            continue;
        }
        if o.namespaces.is_none() && o.namespace_selector.is_none() {
            errors.push(at(
                field("name"),
                format!(
                    "override {:?} gives neither namespaces nor namespaceSelector; to change every namespace, edit the top-level settings",
                    o.name.value
                ),
            ));
            continue;
        }
        let namespaces = match o.namespaces {
            None => None,
            Some(globs) => {
                if globs.is_empty() {
                    errors.push(at(
                        field("namespaces"),
                        format!("override {:?} lists no namespaces, so it can never match", o.name.value),
                    ));
                    continue;
                }
                let mut patterns = Vec::new();
                for (j, g) in globs.iter().enumerate() {
                    let glob_field = field(&format!("namespaces[{j}]"));
                    // An empty glob matches only the empty name, and no namespace has it (s22
                    // break-it pass: `namespaces: [""]` was accepted and never matched).
                    if g.value.is_empty() {
                        errors.push(spanned_err(
                            g,
                            &glob_field,
                            "is empty, so it can never match a namespace: give a namespace name or a glob"
                                .into(),
                        ));
                        continue;
                    }
                    // Namespace names are DNS labels: lowercase letters, digits and '-', at most 63.
                    let literal_len =
                        g.value.chars().filter(|c| !matches!(c, '*' | '?' | '[' | ']' | '!')).count();
                    let bad_char = g
                        .value
                        .chars()
                        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || "-*?[]!".contains(*c)));
                    if let Some(c) = bad_char {
                        errors.push(spanned_err(
                            g,
                            &glob_field,
                            format!(
                                "{:?} can never match a namespace name: {c:?} is not a lowercase letter, digit or '-'",
                                g.value
                            ),
                        ));
                        continue;
                    }
                    if literal_len > 63 {
                        errors.push(spanned_err(
                            g,
                            &glob_field,
                            format!(
                                "{:?} can never match: namespace names have at most 63 characters",
                                g.value
                            ),
                        ));
                        continue;
                    }
                    match glob::Pattern::new(&g.value) {
                        Ok(p) => patterns.push(p),
                        Err(e) => errors.push(spanned_err(
                            g,
                            &glob_field,
                            format!("bad glob {:?}: {}", g.value, e.msg),
                        )),
                    }
                }
                Some(patterns)
            }
        };
        if let Some(why) = o.namespace_selector.as_ref().and_then(LabelSelectorSpec::contradiction) {
            errors.push(at(
                field("namespaceSelector"),
                format!("override {:?} can never match: {why}", o.name.value),
            ));
            continue;
        }
        if let Some(r) = &o.rules {
            let mut merged = policy.rules.clone();
            merged.merge(r);
            let at = field("rules");
            if let Some(e) = budget::startup_budget_error(text, origin, &at, &merged, Some(r)) {
                errors.push(e);
                continue;
            }
        }
        policy.overrides.push(Override {
            name: o.name.value.clone(),
            namespaces,
            namespace_selector: o.namespace_selector,
            mode: o.mode,
            rules: o.rules.unwrap_or_default(),
        });
    }
    if errors.is_empty() { Ok(policy) } else { Err(errors) }
}

/// The `exemptions.containers` entries as written, checked: a name, and at least one valid image
/// glob.
fn container_exemptions(
    entries: Vec<ContainerExemptionSpec>,
    origin: &str,
    spanned_err: &dyn Fn(&Spanned<String>, &str, String) -> PolicyError,
) -> Result<Vec<ContainerExemption>, Vec<PolicyError>> {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for (i, e) in entries.into_iter().enumerate() {
        let field = |f: &str| format!("exemptions.containers[{i}].{f}");
        if e.name.trim().is_empty() {
            errors.push(PolicyError {
                origin: origin.to_string(),
                line: None,
                column: None,
                field: Some(field("name")),
                message: "is empty: name the container".into(),
            });
            continue;
        }
        if e.images.is_empty() {
            errors.push(PolicyError {
                origin: origin.to_string(),
                line: None,
                column: None,
                field: Some(field("images")),
                message: format!(
                    "lists no images, so container {:?} could never be exempt; give its image, e.g. docker.io/istio/proxyv2",
                    e.name
                ),
            });
            continue;
        }
        let mut images = Vec::new();
        for (j, g) in e.images.iter().enumerate() {
            let f = field(&format!("images[{j}]"));
            if g.value.trim().is_empty() {
                errors.push(spanned_err(g, &f, "is empty: give an image or a glob".into()));
                continue;
            }
            match glob::Pattern::new(&g.value) {
                Ok(p) => images.push(p),
                Err(err) => errors.push(spanned_err(g, &f, format!("bad glob {:?}: {}", g.value, err.msg))),
            }
        }
        out.push(ContainerExemption { name: e.name, images });
    }
    if errors.is_empty() { Ok(out) } else { Err(errors) }
}

/// For "unknown field `x`, expected one of `a`, `b`" (and unknown variants), appends the nearest
/// valid name: "; did you mean `a`?".
fn suggest_nearest(message: &str) -> String {
    let Some(rest) =
        message.strip_prefix("unknown field `").or_else(|| message.strip_prefix("unknown variant `"))
    else {
        return message.to_string();
    };
    let Some((given, expected)) = rest.split_once('`') else { return message.to_string() };
    let list =
        expected.split_once("expected one of ").or_else(|| expected.split_once("expected ")).map(|(_, l)| l);
    let Some(list) = list else { return message.to_string() };
    let candidates: Vec<&str> =
        list.split(',').map(|c| c.trim().trim_matches('`')).filter(|c| !c.is_empty()).collect();
    if let Some(hint) = action_hint(given, &candidates) {
        return format!("{message}; {hint}");
    }
    let distance = |c: &str| strsim::damerau_levenshtein(&given.to_lowercase(), &c.to_lowercase());
    let Some(best) = candidates.iter().map(|c| distance(c)).min() else { return message.to_string() };
    if best > 3.max(given.len() / 3) {
        return message.to_string();
    }
    let closest: Vec<String> =
        candidates.iter().filter(|c| distance(c) == best).map(|c| format!("`{c}`")).collect();
    format!("{message}; did you mean {}?", closest.join(" or "))
}

/// The actions some rule takes (README, "Rules"): `deny`, `warn`, `off` everywhere, `mutate` for
/// the rules with a patch, `info` for all but `probe-timeout`, `startup-probe`, `prestop-sleep`.
const ACTIONS: [&str; 5] = ["mutate", "deny", "warn", "info", "off"];

/// For an unknown `action` value (the `expected` list is made of actions only): the valid ones
/// nearest in meaning, where spelling misleads. An action of other rules (`info` for
/// `startup-probe`, `mutate` for `readiness-missing`) named `off` by spelling (fresh-user pass
/// s16: "did you mean `off`?" for `info`); a word that turns the rule on (`on`, `true`, `enabled`)
/// or off (`false`, `no`, `disabled`). `None` for other values and other fields.
fn action_hint(given: &str, expected: &[&str]) -> Option<String> {
    if expected.is_empty() || !expected.iter().all(|c| ACTIONS.contains(c)) {
        return None;
    }
    let g = given.trim().to_ascii_lowercase();
    let quoted = |v: &[&str]| v.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(" or ");
    let takes = |v: &str| expected.contains(&v);
    let on: Vec<&str> = expected.iter().copied().filter(|c| *c != "off").collect();
    match g.as_str() {
        // (`info` or `mutate` unknown here: the rule does not take it.)
        "info" => {
            let near: Vec<&str> = ["warn", "off"].into_iter().filter(|c| takes(c)).collect();
            Some(format!(
                "this rule has no `info` (its findings are patches, reported as fixes); the closest: {} (`warn` reports it and warns at admission, `off` does neither)",
                quoted(&near)
            ))
        }
        "mutate" => Some(format!(
            "this rule has no patch to make, so no `mutate`; the closest: {}",
            quoted(&on.iter().copied().filter(|c| *c != "deny").collect::<Vec<_>>())
        )),
        "on" | "true" | "yes" | "enable" | "enabled" | "active" => {
            Some(format!("to turn the rule on, give what it does: {}", quoted(&on)))
        }
        "false" | "no" | "disable" | "disabled" | "none" | "skip" => Some("did you mean `off`?".into()),
        _ => None,
    }
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

    /// A misspelt field left without a value (`budgetSecond:`) is blanked whole, its colon
    /// included, so the search for the next error finds the file's next mistake and nothing else
    /// (the colon alone read as a null key: "cannot deserialize null into string").
    #[test]
    fn a_field_without_a_value_is_blanked_with_its_colon() {
        let cases = [
            (
                "rules:\n  liveness-dependancy:\n  startup-probe: {budgetSeconds: x}\n",
                4,
                "rules.liveness-dependancy",
                5,
                "rules.startup-probe.budgetSeconds",
            ),
            (
                "rules:\n  startup-probe:\n    budgetSecond:\n    periodSeconds: x\n",
                5,
                "rules.startup-probe.budgetSecond",
                6,
                "rules.startup-probe.periodSeconds",
            ),
            (
                "rules:\n  startup-probe: {budgetSecond: , periodSeconds: x}\n",
                4,
                "rules.startup-probe.budgetSecond",
                4,
                "rules.startup-probe.periodSeconds",
            ),
            // A flow value closing its mapping: only its own brackets go, not the next closing one
            // (the s16 sample's mutant `policy.rs:1446:22`, `open -= 1` made `+=`, blanked the
            // `}` of `startup-probe` too and moved `probe-timeout` into it).
            (
                "rules: {startup-probe: {budgetSecond: {x: 1}}, probe-timeout: {livenessMinSeconds: x}}\n",
                3,
                "rules.startup-probe.budgetSecond",
                3,
                "rules.probe-timeout.livenessMinSeconds",
            ),
        ];
        for (body, line, field, next_line, next_field) in cases {
            let errors = parse_all(&format!("{HEAD}{body}"), "bad.yaml").unwrap_err();
            let found: Vec<(Option<u64>, Option<&str>)> =
                errors.iter().map(|e| (e.line, e.field.as_deref())).collect();
            assert_eq!(
                found,
                [(Some(line), Some(field)), (Some(next_line), Some(next_field))],
                "{body}: {errors:#?}"
            );
        }
        let text = format!("{HEAD}rules:\n  startup-probe:\n    budgetSecond:\n    periodSeconds: 5\n");
        let blanked = blank_field(&text, "rules.startup-probe.budgetSecond").unwrap();
        assert_eq!(blanked, text.replace("budgetSecond:", &" ".repeat("budgetSecond:".len())));
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
    fn an_exempt_container_is_a_name_with_images() {
        let e = err(&format!("{HEAD}exemptions:\n  containers: [istio-proxy]\n"));
        assert!(e.message.contains("without its images") && e.message.contains("{name: istio-proxy"), "{e}");
        assert!(e.line.is_some(), "{e}");
        let e = err(&format!("{HEAD}exemptions:\n  containers: [{{name: istio-proxy, images: []}}]\n"));
        assert_eq!(e.field.as_deref(), Some("exemptions.containers[0].images"), "{e}");
        let e = err(&format!("{HEAD}exemptions:\n  containers: [{{name: p, images: [\"a/[b\"]}}]\n"));
        assert_eq!(e.field.as_deref(), Some("exemptions.containers[0].images[0]"), "{e}");
        assert_eq!(e.line, Some(4), "{e}");
        let e = err(&format!("{HEAD}exemptions:\n  containers: [{{name: p, image: [x]}}]\n"));
        assert!(e.message.contains("image"), "{e}");
        let p = parse(
            &format!(
                "{HEAD}exemptions:\n  containers: [{{name: envoy, images: [\"ghcr.io/acme/envoy\"]}}]\n"
            ),
            "p.yaml",
        )
        .unwrap();
        let c = &p.exemptions.containers[0];
        assert!(c.covers("envoy", Some("ghcr.io/acme/envoy:v1")));
        assert!(!c.covers("envoy", Some("ghcr.io/acme/envoy-debug:v1")));
        assert!(!c.covers("envoy", None));
        assert!(!c.covers("app", Some("ghcr.io/acme/envoy:v1")));
    }

    #[test]
    fn images_match_with_and_without_tag_digest_and_docker_hub_prefix() {
        let m = |p: &str, i: &str| image_matches(&glob::Pattern::new(p).unwrap(), i);
        assert!(m("docker.io/istio/proxyv2", "docker.io/istio/proxyv2:1.24.0"));
        assert!(m("docker.io/istio/proxyv2", "istio/proxyv2:1.24.0"));
        assert!(m("docker.io/istio/proxyv2", "docker.io/istio/proxyv2@sha256:abc"));
        assert!(m("docker.io/istio/proxyv2", "docker.io/istio/proxyv2:1.24.0@sha256:abc"));
        assert!(m("docker.io/istio/proxyv2:1.2*", "istio/proxyv2:1.24.0"));
        assert!(!m("docker.io/istio/proxyv2:1.2*", "istio/proxyv2:1.30.0"));
        assert!(m("docker.io/library/nginx", "nginx:1.27"));
        assert!(m("*istio*/proxyv2", "registry.local:5000/istio/proxyv2:1"));
        assert!(!m("*istio*/proxyv2", "docker.io/istio/proxyv2-debug:1"));
        assert!(!m("docker.io/istio/proxyv2", "evil.io/istio/proxyv2:1"));
        // A registry port is not a tag.
        assert!(m("localhost:5000/proxy", "localhost:5000/proxy"));
        assert!(!m("localhost", "localhost:5000/proxy"));
    }

    #[test]
    fn trusted_controllers_replace_the_defaults_and_take_globs() {
        let d = Policy::default();
        assert!(d.exemptions.trusts("system:serviceaccount:kube-system:replicaset-controller"));
        assert!(d.exemptions.trusts("system:kube-controller-manager"));
        assert!(!d.exemptions.trusts("system:serviceaccount:kube-system:generic-garbage-collector"));
        assert!(!d.exemptions.trusts("alice"));
        assert!(!d.exemptions.trusts(""));
        let p = parse(
            &format!("{HEAD}exemptions:\n  trustedControllers: [\"system:serviceaccount:operators:*\"]\n"),
            "p.yaml",
        )
        .unwrap();
        assert!(p.exemptions.trusts("system:serviceaccount:operators:kafka-operator"));
        assert!(!p.exemptions.trusts("system:serviceaccount:kube-system:replicaset-controller"));
        let e = err(&format!("{HEAD}exemptions:\n  trustedControllers: [\"\"]\n"));
        assert_eq!(e.field.as_deref(), Some("exemptions.trustedControllers[0]"), "{e}");
        assert_eq!(e.line, Some(4), "{e}");
    }

    #[test]
    fn rule_id_round_trip() {
        for r in RuleId::ALL {
            assert_eq!(RuleId::parse(r.as_str()), Some(r));
        }
        assert_eq!(RuleId::parse("nope"), None);
    }
}
