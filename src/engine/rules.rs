//! The six rules, per container. Kubernetes facts used here (Kubernetes API reference, Probe and
//! Lifecycle; docs "Configure Liveness, Readiness and Startup Probes"):
//! - probe defaults: `timeoutSeconds` 1, `periodSeconds` 10, `failureThreshold` 3,
//!   `successThreshold` 1, `initialDelaySeconds` 0; `httpGet.path` `/`, `httpGet.scheme` `HTTP`;
//! - `httpGet.host` and `tcpSocket.host` are resolved and probed by the kubelet from the node
//!   network namespace, so any host, even `127.0.0.1`, is not the pod unless it uses `hostNetwork`;
//! - a named probe port resolves against the same container's `ports[].name`;
//! - `restartPolicy` defaults to `Always`; `terminationGracePeriodSeconds` to 30.

use std::collections::{HashMap, HashSet};

use json_patch::{AddOperation, PatchOperation, RemoveOperation};
use jsonptr::PointerBuf;
use k8s_openapi::api::core::v1::{Container, EnvVar, EnvVarSource, PodSpec, Probe};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::{Value, json};

use super::configmaps::{ConfigMapLookup, ConfigMapSource, NoConfigMaps};
use super::exec::{self, EnvValue, ExecEnv};
use super::hosts::{self, ProbeHost};
use super::scripts::ContainerFiles;
use super::{ContainerKind, Coupling, Finding, Unresolved};
use crate::policy::{Action, MAX_SECONDS, RuleId, RuleSet, SleepStyle};

mod emptied;
use emptied::{kubelet_emptied, shifted_by_emptied, url_host_emptied};

use super::defaults::{
    FAILURE_THRESHOLD as DEFAULT_FAILURE_THRESHOLD, PERIOD_SECONDS as DEFAULT_PERIOD_SECONDS,
    TERMINATION_GRACE_PERIOD_SECONDS, TIMEOUT_SECONDS as DEFAULT_TIMEOUT_SECONDS,
};

/// What a liveness failure of one container does across the object of `kind` (a Pod's controller
/// kind from its owner reference, `None` for a bare Pod), for "its outage would ...": the kubelet
/// restarts a container whose liveness probe fails (Kubernetes docs, "Container probes"), in each
/// replica of a Deployment, StatefulSet, ReplicaSet or ReplicationController, in each node's Pod
/// of a DaemonSet; in a Job's Pod (`restartPolicy` `OnFailure` or `Never`) it is a restart or a
/// failed Pod, hence "kill".
pub(super) fn outage_kills(kind: super::WorkloadKind, controller: Option<&str>) -> &'static str {
    use super::WorkloadKind as K;
    let kind = match (kind, controller) {
        (K::Pod, None) => return "restart this Pod's container",
        (K::Pod, Some("ReplicaSet" | "ReplicationController" | "StatefulSet")) => K::ReplicaSet,
        (K::Pod, Some("DaemonSet")) => K::DaemonSet,
        (K::Pod, Some("Job")) => K::Job,
        (K::Pod, Some(_)) => return "restart the container in every Pod of its controller",
        (k, _) => k,
    };
    match kind {
        K::DaemonSet => "restart the container in every node's Pod",
        K::Job => "kill the container in every running Pod of the Job",
        K::CronJob => "kill the container in every running Pod of its Jobs",
        _ => "restart every replica",
    }
}

/// Whether the object's Pods run a Job's work (a Job, a CronJob, or a Pod a Job owns): they get
/// no Service traffic (a Job's Pods are not behind a Service; readiness only gates endpoints,
/// Kubernetes docs, "Container probes"), so a dependency check moved to readinessProbe guards
/// nothing there.
pub(super) fn in_job(kind: super::WorkloadKind, controller: Option<&str>) -> bool {
    use super::WorkloadKind as K;
    matches!((kind, controller), (K::Job | K::CronJob, _) | (K::Pod, Some("Job")))
}

/// Largest value of an int32 API field (`failureThreshold`, `timeoutSeconds`, ...).
const MAX_INT32: u64 = i32::MAX as u64;

/// One container and where it sits in the object.
pub(super) struct Target<'a> {
    pub spec: &'a PodSpec,
    pub container: &'a Container,
    pub kind: ContainerKind,
    /// Pointer tokens from the object root to the PodSpec.
    pub base: &'static [&'static str],
    /// Index in `containers` or `initContainers`.
    pub index: usize,
    /// Where ConfigMaps (liveness scripts, env values) come from.
    pub configmaps: &'a dyn ConfigMapSource,
    /// The Pod's namespace, for ConfigMap lookups.
    pub namespace: &'a str,
    /// The object's shell-analysis budget, shared by its containers.
    pub budget: &'a exec::AnalysisBudget,
    /// The object's budget for analysing readiness commands (`readiness-shared-dependency`).
    pub readiness_budget: &'a exec::AnalysisBudget,
    /// A Pod with no controller: made by hand (a debug or demo Pod), not by a workload.
    pub bare_pod: bool,
    /// What a dependency's outage does to this container across the workload, for the liveness
    /// messages: see [`outage_kills`].
    pub outage_kills: &'static str,
    /// The Pods run a Job's work (see [`in_job`]): the advice is not "move it to readinessProbe".
    pub in_job: bool,
    /// The policy's container exemptions: covered neighbours (a mesh proxy) are not the pod's app.
    pub exempt_containers: &'a [crate::policy::ContainerExemption],
    /// The Pod's own host names ([`hosts::own_host_names`]): an exec probe reaches the Pod itself
    /// through them.
    pub own_names: &'a [String],
    /// The Pod's namespace where the object names it (`metadata.namespace`; the API server sets
    /// it before admission): [`exec::ExecEnv::pod_namespace`]. `None` where [`Target::namespace`]
    /// is only the `check` default.
    pub own_namespace: Option<&'a str>,
}

impl Target<'_> {
    /// The advice for a Job's Pods (`job`: they get no Service traffic, so a readiness probe
    /// guards nothing) or for a serving workload's (`serving`).
    fn advice(&self, job: &'static str, serving: &'static str) -> &'static str {
        if self.in_job { job } else { serving }
    }

    /// JSON Pointer to a member of this container, e.g. `["livenessProbe", "timeoutSeconds"]`.
    pub(super) fn pointer(&self, rest: &[&str]) -> PointerBuf {
        let list = match self.kind {
            ContainerKind::App => "containers",
            ContainerKind::Sidecar => "initContainers",
        };
        let index = self.index.to_string();
        let tokens = self.base.iter().copied().chain([list, index.as_str()]).chain(rest.iter().copied());
        // Written in one buffer (RFC 6901 escapes: `~` is `~0`, `/` is `~1`): `from_tokens` grows
        // its string token by token, and this runs for every patch of every container.
        let mut text = String::with_capacity(64);
        for token in tokens.clone() {
            text.push('/');
            if !token.contains(['~', '/']) {
                text.push_str(token);
                continue;
            }
            for c in token.chars() {
                match c {
                    '~' => text.push_str("~0"),
                    '/' => text.push_str("~1"),
                    c => text.push(c),
                }
            }
        }
        PointerBuf::parse(text).unwrap_or_else(|_| PointerBuf::from_tokens(tokens))
    }

    /// True when the pod restarts its containers (`restartPolicy` `Always`, the default): a
    /// long-running workload rather than a batch one.
    fn long_running(&self) -> bool {
        self.spec.restart_policy.as_deref().is_none_or(|p| p == "Always")
    }

    fn declares_ports(&self) -> bool {
        self.container.ports.as_ref().is_some_and(|p| !p.is_empty())
    }

    pub(super) fn finding(
        &self,
        rule: RuleId,
        action: Action,
        message: String,
        patch: Vec<PatchOperation>,
    ) -> Finding {
        Finding {
            rule,
            action,
            container: self.container.name.clone(),
            container_kind: self.kind,
            message,
            patch,
            dry_run_message: None,
            coupling: None,
        }
    }

    /// A `mutate` finding: `message(verb)` with the verb for a patch applied (`done`, e.g.
    /// "added") and, as its dry-run message, for one not applied ("would add"). Without a patch
    /// (the fix is not possible, or the action is not `mutate`) the message takes `advice` ("add")
    /// and has no dry-run form.
    pub(super) fn fix_finding(
        &self,
        rule: RuleId,
        action: Action,
        patch: Vec<PatchOperation>,
        [done, would, advice]: [&str; 3],
        message: impl Fn(&str) -> String,
    ) -> Finding {
        if patch.is_empty() {
            return self.finding(rule, action, message(advice), patch);
        }
        let mut f = self.finding(rule, action, message(done), patch);
        f.dry_run_message = Some(message(would));
        f
    }
}

fn add(path: PointerBuf, value: Value) -> PatchOperation {
    PatchOperation::Add(AddOperation { path, value })
}

/// Runs every enabled rule on one container, appending findings.
pub(super) fn evaluate_container(
    rules: &RuleSet,
    t: &Target<'_>,
    out: &mut Vec<Finding>,
    unresolved: &mut Vec<Unresolved>,
) {
    let mut coupled = false;
    // The liveness probe is denied by `liveness-dependency`.
    let mut liveness_denied = false;
    // The HTTP requests the liveness exec command makes to this Pod, when it was analysed.
    let mut local_requests = None;
    // The liveness exec command's analysis, for a readiness probe that runs the same command.
    let mut liveness_exec = None;
    let notes_before = unresolved.len();
    let found = if rules.liveness_dependency.action != Action::Off {
        liveness_dependency(rules, t, unresolved, &mut local_requests, &mut liveness_exec)
    } else {
        None
    };
    // `liveness-dependency` off (a namespace override) says nothing of the liveness check, but
    // `startup-probe` must still not copy a coupled one (s23 fresh user: /mutate copied a remote
    // `pg_isready -h pg.batch.svc` into a new startupProbe, which the policy's
    // `startup-remote-dependency: deny` then denied at /validate). Analysed for that only: no
    // finding, no note.
    let silent = rules.liveness_dependency.action == Action::Off
        && rules.startup_probe.action != Action::Off
        && t.container.liveness_probe.is_some()
        && t.container.startup_probe.is_none();
    let mut silent_notes = Vec::new();
    let silently_coupled = silent
        && liveness_dependency(rules, t, &mut silent_notes, &mut local_requests, &mut liveness_exec)
            .is_some();
    // The liveness exec command was cut short by an analysis bound: what it reaches is not known,
    // so it is not copied into a startup probe either (s19 break-it: /mutate copied an unanalysed
    // `pg_isready -h orders-db` into a new startupProbe). A script the analysis could not read (a
    // ConfigMap not resolved) is copied: the startup probe runs what the liveness probe already
    // runs, with a longer budget, so it adds no restart the liveness probe does not already make
    // (s21: the corpus's Bitnami MongoDB `ping-mongodb.sh` gets its startup probe).
    let cut_short = unresolved[notes_before..]
        .iter()
        .chain(&silent_notes)
        .any(|u| u.over_bound && u.container == t.container.name);
    let unanalysed = if cut_short { Reach::OverBound } else { Reach::Known };
    if let Some((message, coupling)) = found {
        coupled = true;
        // A host that may be the node itself (hostNetwork), or one known only at run time that
        // nothing names a dependency, is never a reason to deny.
        let action = match rules.liveness_dependency.action {
            Action::Deny if coupling != Coupling::Fails => Action::Warn,
            a => a,
        };
        liveness_denied = action == Action::Deny;
        let mut f = t.finding(RuleId::LivenessDependency, action, message, vec![]);
        f.coupling = Some(coupling);
        out.push(f);
    }
    if rules.liveness_matches_readiness.action != Action::Off
        && let Some(message) = liveness_matches_readiness(t, coupled)
    {
        out.push(t.finding(
            RuleId::LivenessMatchesReadiness,
            rules.liveness_matches_readiness.action,
            message,
            vec![],
        ));
    }
    if rules.readiness_missing.action != Action::Off
        && t.kind == ContainerKind::App
        && t.long_running()
        && t.declares_ports()
        && t.container.readiness_probe.is_none()
        && !(rules.readiness_missing.skip_metrics_only && super::checklist::metrics_only(t.container))
    {
        out.push(
            t.finding(
                RuleId::ReadinessMissing,
                rules.readiness_missing.action,
                "declares ports but has no readinessProbe, so it gets traffic before it can serve and \
             keeps it while it cannot; add a readinessProbe"
                    .to_string(),
                vec![],
            ),
        );
    }
    if rules.probe_timeout.action != Action::Off {
        probe_timeout(rules, t, out);
    }
    // Analysed once for the object's budget: `startup-probe` and the checklist both read them.
    if local_requests.is_none() && rules.liveness_dependency_path.action != Action::Off {
        local_requests = super::checklist::local_exec_requests(rules, t);
    }
    if rules.startup_probe.action != Action::Off && silently_coupled {
        not_copied(rules, t, Reach::Dependency, out);
    } else if rules.startup_probe.action != Action::Off && !coupled {
        startup_probe(rules, t, out, local_requests.as_deref(), unanalysed);
    } else if rules.startup_probe.action != Action::Off && !liveness_denied {
        not_copied(rules, t, unanalysed, out);
    }
    if rules.prestop_sleep.action != Action::Off
        && !(rules.prestop_sleep.skip_metrics_only && super::checklist::metrics_only(t.container))
    {
        prestop_sleep(rules, t, out);
    }
    super::checklist::evaluate(
        rules,
        t,
        out,
        local_requests.as_deref(),
        liveness_exec.as_ref(),
        liveness_denied,
        unresolved,
    );
}

/// The analysis of a container's liveness exec command, kept for its readiness probe when that
/// runs the same command (the usual case): the same command in the same container analyses the
/// same, so the readiness budget is charged what the liveness analysis spent instead of analysing
/// again (see [`exec::AnalysisBudget::charge`]).
pub(super) struct ExecAnalysis<'a> {
    /// The command analysed.
    pub command: &'a [String],
    /// What it found.
    pub dependency: Option<exec::Dependency>,
    /// What the analysis spent of the object's budget, when its outcome did not depend on it.
    pub spent: exec::BudgetMark,
}

// === liveness-dependency ===

/// Why a `$(VAR)` or `${VAR}` in `httpGet.host` / `tcpSocket.host` is a misconfiguration, not a
/// dependency: the kubelet expands variables only in an exec probe's command (rules.md 1.1.1;
/// kubelet `pkg/kubelet/prober/prober.go` calls the expansion in the exec branch alone), so the
/// probe dials that literal name, whose lookup fails (`pkg/probe/tcp` and `pkg/probe/http` report
/// a failed dial as a probe failure): it fails every time, whatever any dependency does. A
/// warning, not a denial (s13 item 2: it was denied as a dependency's reach).
const UNEXPANDED_HOST: &str =
    "the kubelet does not expand variables in host, so the probe looks up that literal name and always fails";

/// The liveness probe's dependency, if any: the message, and whether the target may be the pod
/// itself after all (an IP literal of a hostNetwork pod, which can be the node's own address; an
/// exec host known only at run time whose variable does not name a dependency, see
/// [`exec::Dependency::unknown_host`]; a script whose status is known only at run time, see
/// [`exec::Dependency::status_unknown`]; a variable in a probe's host field, a misconfiguration:
/// [`UNEXPANDED_HOST`]), in which case the finding is never a denial.
fn liveness_dependency<'a>(
    rules: &RuleSet,
    t: &Target<'a>,
    unresolved: &mut Vec<Unresolved>,
    local_requests: &mut Option<Vec<exec::LocalRequest>>,
    analysis: &mut Option<ExecAnalysis<'a>>,
) -> Option<(String, Coupling)> {
    let probe = t.container.liveness_probe.as_ref()?;
    let host_network = t.spec.host_network == Some(true);
    let network_host =
        probe.http_get.as_ref().and_then(|h| h.host.as_deref().map(|host| ("httpGet", host))).or_else(|| {
            probe.tcp_socket.as_ref().and_then(|s| s.host.as_deref().map(|host| ("tcpSocket", host)))
        });
    if let Some((handler, host)) = network_host {
        let class = hosts::classify(host, t.container, t.own_names);
        let lead = format!("livenessProbe.{handler}.host is {:?}", hosts::redact_host(host));
        if host_network {
            // The pod shares the node's network: "drop host" would probe the node's address, which
            // a server bound to 127.0.0.1 does not answer. Say what is right here instead.
            let advice = "probe an address this container listens on (127.0.0.1 if it binds loopback)";
            return match class {
                ProbeHost::PodIp | ProbeHost::Local | ProbeHost::OwnAddress => None,
                ProbeHost::OtherIp => Some((
                    format!("{lead}: with hostNetwork it may be this node or another machine; {advice}"),
                    Coupling::Uncertain,
                )),
                ProbeHost::OtherName | ProbeHost::OwnName => Some((
                    format!("{lead}: resolved from the node, it may be this node or another; {advice}"),
                    Coupling::Uncertain,
                )),
                ProbeHost::Unexpanded => {
                    Some((format!("{lead}: {UNEXPANDED_HOST}; {advice}"), Coupling::Uncertain))
                }
                ProbeHost::ServiceName => {
                    Some((format!("{lead}: a Service name is another workload; {advice}"), Coupling::Fails))
                }
            };
        }
        if class == ProbeHost::Unexpanded {
            return Some((
                format!("{lead}: {UNEXPANDED_HOST}; drop host (the pod's IP is the default)"),
                Coupling::Uncertain,
            ));
        }
        if class == ProbeHost::OwnName {
            // Not a dependency: where the node resolves it (through the cluster DNS) it is this
            // pod; elsewhere it resolves nowhere and the probe fails. Which, admission cannot know.
            return Some((
                format!(
                    "{lead}: this pod's own hostname, but only the pod's /etc/hosts maps it and the \
                     kubelet resolves host on the node, where it may not resolve; drop host (the pod's \
                     IP is the default)"
                ),
                Coupling::Uncertain,
            ));
        }
        let why = match class {
            ProbeHost::PodIp => None,
            ProbeHost::Local => Some("without hostNetwork that is the node's loopback, not this pod"),
            _ => Some("the kubelet probes that host from the node, not this pod"),
        };
        if let Some(why) = why {
            return Some((
                format!(
                    "{lead}: {why}; drop host (the pod's IP is the default) and check dependencies in \
                     readinessProbe"
                ),
                Coupling::Fails,
            ));
        }
    }
    let command = probe.exec.as_ref()?.command.as_ref()?;
    let mark = t.budget.mark();
    let mut outcome = analyze_exec(rules, t, command, t.budget);
    *local_requests = Some(std::mem::take(&mut outcome.local_requests));
    if outcome.unresolved.iter().all(|u| !u.over_bound)
        && let Some(spent) = t.budget.spent_since(mark)
    {
        *analysis = Some(ExecAnalysis { command, dependency: outcome.dependency.clone(), spent });
    }
    for u in outcome.unresolved {
        let entry = Unresolved {
            container: t.container.name.clone(),
            // Every note's command text passes here on its way to warnings, the audit annotation
            // and `check`: redacted here (the excerpts of commands are redacted before they are
            // cut, where they are made; redacting again changes nothing).
            script: exec::redact_text(&u.path),
            reason: u.reason,
            over_bound: u.over_bound,
            probe: "liveness",
        };
        if !unresolved.contains(&entry) {
            unresolved.push(entry);
        }
    }
    let Some(dep) = outcome.dependency else {
        return kubelet_emptied(rules, t, command, &outcome.kubelet_emptied)
            .or_else(|| url_host_emptied(t, command, &outcome.kubelet_emptied));
    };
    if let Some(shifted) = shifted_by_emptied(t, command, &outcome.kubelet_emptied, &dep) {
        return Some(shifted);
    }
    let place = dep.script.as_ref().map(|s| format!(" (in {s})")).unwrap_or_default();
    if host_network && target_is_ip_literal(&dep.target) {
        // rules.md, hostNetwork: the pod has the node's addresses, so an IP literal may be this
        // node itself (an agent probing the address it binds): at most a warning.
        return Some((
            format!(
                "livenessProbe `{}`{place} reaches {} (via {}): with hostNetwork that address may be this \
                 node or another machine; probe an address this container listens on (127.0.0.1 if it \
                 binds loopback)",
                super::cut_command(&dep.command, SHOWN_COMMAND_CHARS),
                dep.target,
                via(&dep.program)
            ),
            Coupling::Uncertain,
        ));
    }
    let why = dep.why.as_ref().map(|w| format!("; {w}")).unwrap_or_default();
    let command = super::cut_command(&dep.command, SHOWN_COMMAND_CHARS);
    if dep.bad_url {
        // The client refuses the URL before connecting (`exec::Dependency::bad_url`): not a
        // dependency check, but a probe that fails every time (s17: it was denied as reaching
        // the host after the `@`). A warning; nothing at all when its status cannot fail the probe.
        return dep
            .uncoupled
            .is_none()
            .then(|| (refused_url(&format!("livenessProbe `{command}`{place}"), &dep), Coupling::Uncertain));
    }
    if let Some(name) = dep.literal_variable_name() {
        // No shell runs the command and the kubelet expands only `$(NAME)` (Kubernetes docs,
        // "Define Dependent Environment Variables"): the client is given the text `$NAME` as its
        // host and fails every time, whatever the dependency does. Broken, not coupled: a
        // warning that names the fix (s18 fresh-user pass: it was denied as reaching `$NAME`).
        return Some((
            format!(
                "livenessProbe `{command}`{place} fails every time: no shell expands `${name}`, the \
                 kubelet only `$({name})`; write that or use sh -c, then {}",
                t.advice("drop it from livenessProbe", "check it in readinessProbe")
            ),
            Coupling::Uncertain,
        ));
    }
    if let Some(how) = &dep.uncoupled {
        // A probe fails by the command's exit status (Kubernetes docs, exec probes: "If the
        // command succeeds, it returns 0"); this client's status cannot change it. Only a client
        // that hangs past timeoutSeconds still fails the probe: a warning, never a denial.
        return Some((
            // The reason first: an admission warning over 256 characters is cut at its end
            // (fresh-user pass s16: the reason was cut off).
            format!(
                "livenessProbe `{command}`{place} cannot fail the probe: {how}; it reaches {}, \
                 so only a hang past timeoutSeconds can; drop that check from livenessProbe",
                reached(&dep)
            ),
            Coupling::HangOnly {
                program: via(&dep.program).to_string(),
                target: dep.target.clone(),
                how: how.clone(),
            },
        ));
    }
    if let Some(why) = &dep.status_unknown {
        // Never deny on a guess: whether the client's status reaches the probe's is known only at
        // run time (`exec::Dependency::status_unknown`).
        return Some((
            format!(
                "livenessProbe `{command}`{place} reaches {}; whether it fails the probe \
                 rests on {why}, known only at run time; {}",
                reached(&dep),
                t.advice("drop it from livenessProbe", "check it in readinessProbe")
            ),
            Coupling::Uncertain,
        ));
    }
    if let Some(why) = &dep.quorum {
        // The check asks this member only, but its answer rests on the peers' quorum
        // (`exec::Dependency::quorum`): the member may be fine, so a warning, never a denial.
        return Some((
            // The advice first, the evidence last: a warning over 256 characters is cut in its
            // middle, and the cited source made this one about 600 (s18 fresh-user pass: the
            // advice was cut off).
            format!(
                "livenessProbe `{command}`{place}: {}; it checks this member, but its answer rests \
                 on {}: a lost quorum fails every replica's liveness at once, and restarts cannot \
                 restore it; {why}",
                t.advice(
                    "drop it from livenessProbe",
                    "check quorum in readinessProbe and keep liveness on this process"
                ),
                reached(&dep),
            ),
            Coupling::Uncertain,
        ));
    }
    if let Some(name) = dep.host_command_name().filter(|_| dep.unknown_host) {
        // The kubelet left `$(NAME)` as written (or made it of `$$(NAME)`), so the shell runs a
        // command named NAME for the host (bash and dash: "NAME: not found", an empty host). Not a
        // value known only at run time: say what runs (fresh-user pass s16). A warning: the image
        // may have such a command. Short, the advice before the advice on the check: it was about
        // 360 characters, and the 256-character admission warning lost "write `$NAME`" (s17).
        return Some((
            format!(
                "livenessProbe `{command}`{place} runs a command named `{name}` for its host; for the \
                 variable write `${name}` ({}); {}",
                dep.host_command_why(),
                t.advice("drop a dependency from livenessProbe", "check a dependency in readinessProbe")
            ),
            Coupling::Uncertain,
        ));
    }
    // `! CMD` as the script's last statement (`exec::Dependency::inverted`): the probe fails
    // whenever the dependency is UP, and passes while it is down; "its outage would restart ..."
    // was the wrong reason (s18 fresh-user pass). Checked with bash 5.2 and dash 0.5.12:
    // `sh -c '! redis-cli -h cache ping'` exits 1 with the server up, 0 with it down.
    let construct = match dep.inverted_list {
        Some(exec::ListInversion::AndExit) => "`&&` list",
        Some(exec::ListInversion::OrExitZero) => "script after `|| exit 0`",
        None => "`if`",
    };
    let (shown, effect) = if dep.inverted_if {
        (
            command.clone(),
            format!(
                "it fails while that is up (its {construct} exits non-zero when it succeeds), so it \
                 would {} all the time",
                t.outage_kills
            ),
        )
    } else if dep.inverted {
        (
            format!("! {command}"),
            format!(
                "it fails while that is up (`!` inverts it), so it would {} all the time",
                t.outage_kills
            ),
        )
    } else {
        (command.clone(), format!("its outage would {}", t.outage_kills))
    };
    if dep.unknown_host {
        // rules.md, the `unresolved` policy: a host known only at run time whose variable does not
        // name a dependency (`$CACHE`, `$1`) may be this Pod: a warning, never a denial.
        return Some((
            format!(
                "livenessProbe `{shown}`{place} reaches {}, known only at run time: if that \
                 is another workload, {effect}; {}, or probe localhost",
                reached(&dep),
                t.advice("drop it from livenessProbe", "check it in readinessProbe")
            ),
            Coupling::Uncertain,
        ));
    }
    if dep.inverted {
        let how = match (dep.inverted_if, dep.inverted_list) {
            (true, Some(exec::ListInversion::AndExit)) => "its `&&` list exits non-zero when it succeeds",
            (true, Some(exec::ListInversion::OrExitZero)) => {
                "the script after its `|| exit 0` exits non-zero when it succeeds"
            }
            (true, None) => "its `if` exits non-zero when it succeeds",
            _ => "`!` inverts it",
        };
        return Some((
            format!(
                "livenessProbe `{shown}`{place} fails while {} is up ({how}), so it would \
                 {} all the time{why}; {}",
                dep.target,
                t.outage_kills,
                t.advice(
                    "drop it from livenessProbe",
                    if dep.inverted_if {
                        "check it in readinessProbe"
                    } else {
                        "drop `!`, check it in readinessProbe"
                    }
                )
            ),
            Coupling::Fails,
        ));
    }
    Some((
        format!(
            "livenessProbe `{shown}`{place} reaches {}{why}: {effect}; {}",
            reached(&dep),
            t.advice(
                "drop that check from livenessProbe (a Job's Pods get no Service traffic, so a \
                 readinessProbe guards nothing: let the job retry the dependency itself)",
                "move that check to readinessProbe"
            )
        ),
        Coupling::Fails,
    ))
}

/// How many characters of an exec dependency's command a liveness message shows, `…` included
/// ([`super::cut_command`]): a short command whole (`grpc_health_probe -addr=dns:///orders:50051`,
/// 44, was cut at 40 in its port, s16 fresh-user pass), a long one between words.
const SHOWN_COMMAND_CHARS: usize = 56;

/// The message on a probe (`what`: "livenessProbe `curl ...`") whose client refuses its URL
/// ([`exec::Dependency::bad_url`]); the URL as the dependency's target shows it, user info hidden.
pub(super) fn refused_url(what: &str, dep: &exec::Dependency) -> String {
    format!(
        "{what}: {} refuses the URL {} (its port is not a number), so the probe fails every time; \
         in a password write `/`, `?`, `#` as %2F, %3F, %23",
        via(&dep.program),
        dep.target
    )
}

/// An exec dependency as the liveness messages name it: `orders-db (database, via pg_isready)`.
fn reached(dep: &exec::Dependency) -> String {
    format!("{} ({}, via {})", dep.target, dep.category, via(&dep.program))
}

/// How a message names the client `program` of an exec dependency: its name, or for the
/// `/dev/tcp/HOST/PORT` redirection (no program: bash opens the connection itself, bash manual,
/// "Redirections") what it is.
fn via(program: &str) -> &str {
    match program {
        "/dev/tcp" => "bash's /dev/tcp redirection",
        p => p,
    }
}

/// Whether an exec dependency's target (`http://10.0.0.5:10256/healthz`, `10.0.0.5:6379`,
/// `[fd00::1]:80 (REDIS_HOST)`) names its host by an IP address rather than a name.
pub(super) fn target_is_ip_literal(target: &str) -> bool {
    let shown = target.split(" (").next().unwrap_or(target).trim();
    let host = match url::Url::parse(shown) {
        Ok(u) if shown.contains("://") => {
            return matches!(u.host(), Some(url::Host::Ipv4(_) | url::Host::Ipv6(_)));
        }
        _ => shown,
    };
    let bare = host.trim_start_matches('[').split(']').next().unwrap_or(host);
    bare.parse::<std::net::IpAddr>().is_ok()
        || host.rsplit_once(':').is_some_and(|(h, _)| h.parse::<std::net::Ipv4Addr>().is_ok())
}

/// Analyses an exec probe `command` of the target's container: its environment (ConfigMaps
/// resolved), its script files, the policy's known commands, spending `budget`. (`as_run` false,
/// in `analyze_exec_with`: with a probe's `$(NAME)` of a `valueFrom` variable read as its value
/// rather than the empty string the kubelet gives it.)
pub(super) fn analyze_exec(
    rules: &RuleSet,
    t: &Target<'_>,
    command: &[String],
    budget: &exec::AnalysisBudget,
) -> exec::Outcome {
    analyze_exec_with(rules, t, command, budget, false, true)
}

/// The coupled dependencies the target's liveness exec command reaches, in the order met: each
/// one's outage alone fails the probe (`explain` names them all; the rule reports the first).
/// Empty for another handler, and when an analysis bound stopped the analysis.
pub(super) fn liveness_dependencies(rules: &RuleSet, t: &Target<'_>) -> Vec<exec::Dependency> {
    let probe = t.container.liveness_probe.as_ref();
    let Some(command) = probe.and_then(|p| p.exec.as_ref()).and_then(|e| e.command.as_ref()) else {
        return Vec::new();
    };
    analyze_exec_with(rules, t, command, t.budget, true, true).all
}

fn analyze_exec_with(
    rules: &RuleSet,
    t: &Target<'_>,
    command: &[String],
    budget: &exec::AnalysisBudget,
    collect_all: bool,
    as_run: bool,
) -> exec::Outcome {
    let mut env = exec_env_resolved(t.container, t.configmaps, t.namespace);
    if !as_run {
        // As the command's author meant it: a probe's `$(NAME)` of a `valueFrom` variable read as
        // the container's value (see `kubelet_emptied`).
        env.probe_empty.clear();
        // A variable with no value at all: what it was meant to hold is unknown.
        for name in std::mem::take(&mut env.probe_no_value) {
            env.vars.insert(name, exec::EnvValue::Unresolved);
        }
    }
    if t.spec.host_network == Some(true) {
        // With hostNetwork the pod's IP is the node's IP (API reference, PodStatus: "hostIP ... podIP
        // ... the same as hostIP when hostNetwork"), so `status.hostIP` names this pod too. Later
        // `env` entries win, so only a name whose last entry is that fieldRef is the pod's own.
        let mut host_ip = HashMap::new();
        for e in t.container.env.iter().flatten() {
            let is_host_ip = e
                .value_from
                .as_ref()
                .and_then(|f| f.field_ref.as_ref())
                .is_some_and(|f| matches!(f.field_path.as_str(), "status.hostIP" | "status.hostIPs"));
            host_ip.insert(e.name.as_str(), is_host_ip);
        }
        for (name, is_host_ip) in host_ip {
            if is_host_ip {
                env.vars.insert(name.to_string(), EnvValue::PodIp);
            }
        }
    }
    let (local, other) = host_alias_names(t.spec);
    // The kubelet writes the Pod's own names before the aliases; a name an alias also gives
    // another address may resolve to either.
    env.local_names = local;
    env.local_names.extend(t.own_names.iter().filter(|n| !other.contains(*n)).cloned());
    env.resolver_on_pod = resolver_on_pod(t.spec);
    env.pod_namespace = t.own_namespace.map(str::to_ascii_lowercase);
    let files = ContainerFiles {
        container: t.container,
        volumes: t.spec.volumes.as_deref().unwrap_or(&[]),
        configmaps: t.configmaps,
        namespace: t.namespace,
    };
    let options = exec::Options {
        known_commands: rules.liveness_dependency.known_commands().collect(),
        files: Some(&files),
        budget: Some(budget),
        collect_all,
    };
    exec::analyze(command, &env, &options)
}

/// Whether the Pod's first DNS resolver is the Pod itself: `dnsPolicy: None` and a loopback
/// address first in `dnsConfig.nameservers` ([`exec::ExecEnv::resolver_on_pod`]). Under any other
/// policy the cluster DNS (`ClusterFirst`) or the node's resolvers (`Default`) come first.
fn resolver_on_pod(spec: &PodSpec) -> bool {
    spec.dns_policy.as_deref() == Some("None")
        && spec
            .dns_config
            .as_ref()
            .and_then(|c| c.nameservers.as_ref())
            .and_then(|n| n.first())
            .is_some_and(|first| hosts::is_local(first.trim()))
}

/// The names the Pod's `hostAliases` map to loopback or unspecified addresses only, and the names
/// they map to another address (lowercase). The kubelet appends these entries to every
/// container's `/etc/hosts`; a name that is also given another address is not local (which entry
/// a resolver picks is not certain). Only exec probes see them: the kubelet resolves
/// `httpGet`/`tcpSocket` hosts itself, on the node.
fn host_alias_names(spec: &PodSpec) -> (HashSet<String>, HashSet<String>) {
    let mut local = HashSet::new();
    let mut other = HashSet::new();
    for alias in spec.host_aliases.iter().flatten() {
        let is_local = hosts::is_local(alias.ip.trim());
        for name in alias.hostnames.iter().flatten() {
            let name = name.trim().trim_end_matches('.').to_ascii_lowercase();
            if is_local {
                local.insert(name)
            } else {
                other.insert(name)
            };
        }
    }
    local.retain(|n| !other.contains(n));
    (local, other)
}

/// The container's environment as far as admission can know it (Kubernetes API reference,
/// EnvVar and EnvVarSource: only `value` is known before the pod runs; `fieldRef` of
/// `status.podIP`/`metadata.name` are the pod's own identity).
pub(crate) fn exec_env(container: &Container) -> ExecEnv {
    exec_env_resolved(container, &NoConfigMaps, "")
}

/// As [`exec_env`], with `valueFrom.configMapKeyRef` and `envFrom.configMapRef` resolved through a
/// ConfigMap source (Kubernetes API reference, EnvFromSource: every key becomes a variable, with
/// `prefix`; the last source wins, and `env` entries win over `envFrom`). A Secret, or a ConfigMap
/// the source cannot answer, leaves its variables unknown.
pub(crate) fn exec_env_resolved(
    container: &Container,
    configmaps: &dyn ConfigMapSource,
    namespace: &str,
) -> ExecEnv {
    let mut vars = HashMap::new();
    let mut unresolved_from = HashMap::new();
    let mut unknown_from = false;
    for from in container.env_from.iter().flatten() {
        let prefix = from.prefix.as_deref().unwrap_or("");
        match &from.config_map_ref {
            Some(r) => match configmaps.get(namespace, &r.name) {
                ConfigMapLookup::Found(data) => {
                    for (k, v) in data {
                        vars.insert(format!("{prefix}{k}"), EnvValue::Literal(v.clone()));
                    }
                }
                // An optional ConfigMap that does not exist adds nothing.
                ConfigMapLookup::NotFound if r.optional == Some(true) => {}
                _ => unknown_from = true,
            },
            None => unknown_from = true,
        }
    }
    for EnvVar { name, value, value_from } in container.env.iter().flatten() {
        if let Some(from) = value_from {
            unresolved_from.insert(name.clone(), value_from_note(from, configmaps, namespace));
        }
        let v = match (value, value_from) {
            (_, Some(from)) => match (from.config_map_key_ref.as_ref(), from.field_ref.as_ref()) {
                (Some(r), _) => match configmaps.get(namespace, &r.name) {
                    ConfigMapLookup::Found(data) => {
                        data.get(&r.key).map_or(EnvValue::Unresolved, |v| EnvValue::Literal(v.clone()))
                    }
                    _ => EnvValue::Unresolved,
                },
                (None, Some(f)) => match f.field_path.as_str() {
                    "status.podIP" | "status.podIPs" => EnvValue::PodIp,
                    "metadata.name" => EnvValue::PodName,
                    _ => EnvValue::Unresolved,
                },
                (None, None) => EnvValue::Unresolved,
            },
            (Some(v), None) => EnvValue::Literal(v.clone()),
            (None, None) => EnvValue::Literal(String::new()),
        };
        vars.insert(name.clone(), v);
    }
    unresolved_from.retain(|name, _| vars.get(name) == Some(&EnvValue::Unresolved));
    // What a probe's `$(NAME)` becomes (kubelet `ExpandContainerCommandOnlyStatic`: `env` only,
    // written values only): the last entry of a name decides.
    let mut probe_empty = std::collections::HashSet::new();
    let mut probe_no_value = std::collections::HashSet::new();
    for e in container.env.iter().flatten() {
        probe_no_value.remove(&e.name);
        if e.value_from.is_some() {
            probe_empty.insert(e.name.clone());
        } else if e.value.is_none() {
            // Neither value nor valueFrom (`valueFrom: null`): the kubelet expands it to "" too.
            probe_empty.insert(e.name.clone());
            probe_no_value.insert(e.name.clone());
        } else {
            probe_empty.remove(&e.name);
        }
    }
    let declared: std::collections::HashSet<&str> =
        container.env.iter().flatten().map(|e| e.name.as_str()).collect();
    let env_from_only = vars.keys().filter(|k| !declared.contains(k.as_str())).cloned().collect();
    // The last entry of a name wins; a hostIP fieldRef is the node (analyze_exec makes it the
    // pod's own address under hostNetwork).
    let mut node_vars = std::collections::HashSet::new();
    for e in container.env.iter().flatten() {
        let node = e
            .value_from
            .as_ref()
            .and_then(|f| f.field_ref.as_ref())
            .is_some_and(|f| matches!(f.field_path.as_str(), "status.hostIP" | "status.hostIPs"));
        if node {
            node_vars.insert(e.name.clone());
        } else {
            node_vars.remove(&e.name);
        }
    }
    ExecEnv {
        vars,
        has_env_from: unknown_from,
        unresolved_from,
        node_vars,
        probe_empty,
        probe_no_value,
        env_from_only,
        ..Default::default()
    }
}

/// Where a `valueFrom` variable's value comes from, for the note on a target the analysis cannot
/// resolve (names only: never a value).
fn value_from_note(from: &EnvVarSource, configmaps: &dyn ConfigMapSource, namespace: &str) -> String {
    if let Some(r) = &from.config_map_key_ref {
        return match configmaps.get(namespace, &r.name) {
            ConfigMapLookup::Found(_) => format!("ConfigMap {} has no key {}", r.name, r.key),
            ConfigMapLookup::NotFound => {
                format!("from ConfigMap {} key {}, which does not exist", r.name, r.key)
            }
            ConfigMapLookup::Unresolved => {
                format!("from ConfigMap {} key {}, which is not available", r.name, r.key)
            }
        };
    }
    if let Some(f) = &from.field_ref {
        return format!("from the Pod's {}, set at run time", f.field_path);
    }
    if let Some(r) = &from.secret_key_ref {
        return format!("from Secret {} key {}", r.name, r.key);
    }
    if let Some(r) = &from.resource_field_ref {
        return format!("from the container's {}", r.resource);
    }
    "set at run time (valueFrom)".to_string()
}

// === liveness-matches-readiness ===

/// A probe's handler identity: what it asks, not how often.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Handler {
    Http { scheme: String, host: String, port: Port, path: String, headers: Vec<(String, String)> },
    Tcp { host: String, port: Port },
    Grpc { port: i32, service: String },
    Exec(Vec<String>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Port {
    Number(i32),
    Name(String),
}

fn resolve_port(port: &IntOrString, container: &Container) -> Port {
    match port {
        IntOrString::Int(n) => Port::Number(*n),
        IntOrString::String(name) => {
            let declared = container.ports.iter().flatten().find(|p| p.name.as_deref() == Some(name));
            match (declared, name.parse::<i32>()) {
                (Some(p), _) => Port::Number(p.container_port),
                (None, Ok(n)) => Port::Number(n),
                (None, Err(_)) => Port::Name(name.clone()),
            }
        }
    }
}

/// `env`: the container's [`exec_env`], made here if not yet. None for an exec command over
/// [`exec::MAX_COMMAND_BYTES`] (not read, as the liveness analysis does not read it).
fn handler(
    probe: &Probe,
    container: &Container,
    budget: &exec::AnalysisBudget,
    env: &std::cell::OnceCell<ExecEnv>,
) -> Option<Handler> {
    if let Some(h) = &probe.http_get {
        let mut headers: Vec<(String, String)> = h
            .http_headers
            .iter()
            .flatten()
            .map(|hd| (hd.name.to_ascii_lowercase(), hd.value.clone()))
            .collect();
        headers.sort();
        return Some(Handler::Http {
            scheme: h.scheme.clone().unwrap_or_else(|| "HTTP".into()).to_ascii_uppercase(),
            host: h.host.clone().unwrap_or_default(),
            port: resolve_port(&h.port, container),
            path: h.path.clone().filter(|p| !p.is_empty()).unwrap_or_else(|| "/".into()),
            headers,
        });
    }
    if let Some(s) = &probe.tcp_socket {
        return Some(Handler::Tcp {
            host: s.host.clone().unwrap_or_default(),
            port: resolve_port(&s.port, container),
        });
    }
    if let Some(g) = &probe.grpc {
        return Some(Handler::Grpc { port: g.port, service: g.service.clone().unwrap_or_default() });
    }
    let command = probe.exec.as_ref()?.command.as_ref()?;
    // A command over the analysis's bound is not read (no copy of it, no claim that two such
    // commands are the same check): s26 break-it pass, a 1.5 MB script cost this rule 70 MB.
    if !exec::within_command_bound(command) {
        return None;
    }
    let env = env.get_or_init(|| exec_env(container));
    Some(Handler::Exec(exec::expand_kubelet_argv(command, env, Some(budget))))
}

/// A probe's `periodSeconds` as the kubelet uses it: absent or 0 is defaulted to 10 (Kubernetes
/// `SetDefaults_Probe`), in seconds.
pub(crate) fn effective_period(p: &Probe) -> i32 {
    match p.period_seconds {
        Some(n) if n > 0 => n,
        _ => DEFAULT_PERIOD_SECONDS,
    }
}

/// A probe's `failureThreshold` as the kubelet uses it: absent or 0 is defaulted to 3 (Kubernetes
/// `SetDefaults_Probe`).
pub(crate) fn effective_failure_threshold(p: &Probe) -> i32 {
    match p.failure_threshold {
        Some(n) if n > 0 => n,
        _ => DEFAULT_FAILURE_THRESHOLD,
    }
}

/// A running probe's failure budget, in seconds: `periodSeconds × failureThreshold` (rules.md §0
/// `FB(p)`; the Kubernetes docs give a probe "failureThreshold × periodSeconds" before it acts).
/// Without `initialDelaySeconds`, which only delays the first check after a start: two probes with
/// the same budget give up together whatever their delays (a delay `fix` moves into a startup
/// probe changes nothing here).
pub(crate) fn failure_budget_seconds(p: &Probe) -> i64 {
    i64::from(effective_period(p)) * i64::from(effective_failure_threshold(p))
}

/// How long a probe takes to give up on a container that stopped answering since it started, in
/// seconds: `initialDelaySeconds + periodSeconds × failureThreshold` (the boot time it allows).
pub(crate) fn failure_window_seconds(p: &Probe) -> i64 {
    i64::from(p.initial_delay_seconds.unwrap_or(0)) + failure_budget_seconds(p)
}

/// `budget`: the object's, whose caller's cache may hold the exec command's summary already.
fn describe_handler(h: &Handler, budget: &exec::AnalysisBudget) -> String {
    match h {
        Handler::Http { path, port, .. } => {
            format!("GET {} on port {}", exec::redact_secrets(path), describe_port(port))
        }
        Handler::Tcp { port, .. } => format!("TCP connect to port {}", describe_port(port)),
        Handler::Grpc { port, service } if service.is_empty() => format!("gRPC health on port {port}"),
        Handler::Grpc { port, service } => format!("gRPC health of {service:?} on port {port}"),
        Handler::Exec(argv) => {
            // A script that feeds a command's standard input (`echo PW | redis-cli -x AUTH`,
            // `<<<`, a here-document) or sets a variable can hand it a secret no credential flag
            // names (break-it passes): only its programs are shown.
            if let Some(summary) = budget.handler_summary(argv) {
                return summary;
            }
            // One line: a script's newlines and indentation become single spaces.
            let mut s = exec::redact_command(argv, 64).split_whitespace().collect::<Vec<_>>().join(" ");
            if s.chars().count() > 48 {
                s = s.chars().take(45).collect::<String>() + "...";
            }
            format!("exec `{s}`")
        }
    }
}

fn describe_port(p: &Port) -> String {
    match p {
        Port::Number(n) => n.to_string(),
        Port::Name(n) => n.clone(),
    }
}

/// `coupled`: the liveness probe reaches a dependency (`liveness-dependency` found one), so
/// making it check only this container is advice that fits; a check that is already local can
/// only be made more patient than readiness.
fn liveness_matches_readiness(t: &Target<'_>, coupled: bool) -> Option<String> {
    let live = t.container.liveness_probe.as_ref()?;
    let ready = t.container.readiness_probe.as_ref()?;
    // (The container's env is made once, for the two handlers and their comparison.)
    let env = std::cell::OnceCell::new();
    let lh = handler(live, t.container, t.budget, &env)?;
    // An exec command is compared as the check it makes (`redis-cli -h 127.0.0.1 ping` is
    // `redis-cli ping`, see [`exec::same_check_argv`]); the message shows the liveness one.
    let same_check = |h: Option<Handler>| match h {
        Some(Handler::Exec(argv)) => {
            Some(Handler::Exec(exec::same_check_argv(&argv, env.get_or_init(|| exec_env(t.container)))))
        }
        h => h,
    };
    let rh = handler(ready, t.container, t.budget, &env);
    if same_check(Some(lh.clone())) != same_check(rh) {
        return None;
    }
    // The rule is about the two probes failing at the same moment in a running container, so
    // their failure budgets are compared, not their delays after a start (s19 fresh-user pass: a
    // liveness `initialDelaySeconds: 60` hid the warning, and `fix`, moving that delay into a
    // startup probe, brought it back on its own output).
    let (wl, wr) = (failure_budget_seconds(live), failure_budget_seconds(ready));
    if wl > wr {
        // The documented pattern: same cheap endpoint, liveness more patient than readiness.
        return None;
    }
    let advice = if coupled {
        "lengthen liveness or make it check only this container"
    } else {
        "lengthen its failure window"
    };
    // The advice before the handler, and short: a warning over 256 characters is cut in its
    // middle, and a long handler (`exec `bash … if …` (a script, shown by its programs only)`) cut the advice
    // off (s18 fresh-user pass: 10 of the corpus's 11 such warnings lost it); the handler, last,
    // is what is cut now, and an exec one of 48 characters still fits (tests/redaction.rs shows it).
    // "gives up" is the failure budget, in `explain`'s words and unit style (s19 fresh-user pass:
    // "30s" here, "31 s" there). Its cost, a restart where readiness only sheds traffic, is in
    // the rule's description: the message keeps within the 256 characters of a warning.
    Some(format!(
        "liveness gives up no later than readiness (failure budget {wl} s vs {wr} s): {advice} \
         (both: {})",
        describe_handler(&lh, t.budget)
    ))
}

// === probe-timeout ===

fn probe_timeout(rules: &RuleSet, t: &Target<'_>, out: &mut Vec<Finding>) {
    let cfg = &rules.probe_timeout;
    let mut parts = Vec::new();
    let mut no_room = Vec::new();
    let mut patch = Vec::new();
    let checks = [
        ("livenessProbe", t.container.liveness_probe.as_ref(), cfg.liveness_min_seconds),
        ("readinessProbe", t.container.readiness_probe.as_ref(), cfg.readiness_min_seconds),
    ];
    // `capped`: some timeout can only go up to its period; `raised`: some timeout can go up at all.
    let (mut capped, mut raised) = (false, false);
    for (field, probe, min) in checks {
        let Some(probe) = probe else { continue };
        // Absent or 0 is 1 (`SetDefaults_Probe`), shown as `1 (default)`.
        let current = probe.timeout_seconds.filter(|t| *t > 0).unwrap_or(DEFAULT_TIMEOUT_SECONDS);
        if i64::from(current) >= i64::from(min) {
            continue;
        }
        let shown = super::defaults::shown(probe.timeout_seconds, DEFAULT_TIMEOUT_SECONDS);
        let shown_period = super::defaults::shown(probe.period_seconds, DEFAULT_PERIOD_SECONDS);
        // Never above the probe's own period (rules.md §2.4): a check that may run longer than the
        // interval between checks overlaps the next one.
        let period = effective_period(probe);
        let target = i64::from(min).min(i64::from(period));
        if target <= i64::from(current) {
            no_room.push(format!(
                "{field}.timeoutSeconds {shown} is under {min} s and its periodSeconds {shown_period} leaves no room"
            ));
            continue;
        }
        raised = true;
        let target = target as i32;
        if i64::from(target) < i64::from(min) {
            capped = true;
            parts.push(format!(
                "{field}.timeoutSeconds {shown} is under {min} s (periodSeconds {shown_period})"
            ));
        } else {
            parts.push(format!("{field}.timeoutSeconds {shown} is under {min} s"));
        }
        if cfg.action == Action::Mutate {
            patch.push(add(t.pointer(&[field, "timeoutSeconds"]), json!(target)));
        }
    }
    // A timeout its period leaves no room to raise is a finding of its own, never patched: a
    // warning where the rule mutates, so `check --fail-on warn` sees what `fix` cannot do.
    if !no_room.is_empty() {
        let action = if cfg.action == Action::Mutate { Action::Warn } else { cfg.action };
        let message = format!(
            "{}: a GC pause or a slow disk fails such a probe; lengthen periodSeconds, then raise it",
            no_room.join(", ")
        );
        out.push(t.finding(RuleId::ProbeTimeout, action, message, vec![]));
    }
    if parts.is_empty() {
        return;
    }
    let verbs = match (raised, capped) {
        (false, _) => ["", "", "lengthen periodSeconds, then raise it"],
        (true, false) => {
            ["raised to the minimum", "would raise it to the minimum", "raise it to the minimum"]
        }
        (true, true) => [
            "raised as far as periodSeconds allows",
            "would raise it as far as periodSeconds allows",
            "raise it as far as periodSeconds allows",
        ],
    };
    let parts = parts.join(", ");
    out.push(t.fix_finding(RuleId::ProbeTimeout, cfg.action, patch, verbs, |verb| {
        format!("{parts}: a GC pause or a slow disk fails such a probe; {verb}")
    }));
}

// === startup-probe ===

/// A handler of hundreds of KiB (a liveness script too large to analyse) copied into the patch
/// would double the object: over the analysis's script bound, nothing is added, and the finding
/// (unpatched, so a warning at /mutate) says why. `bytes`: the handler's, as JSON.
fn handler_not_copied(t: &Target<'_>, action: Action, bytes: usize, out: &mut Vec<Finding>) {
    let message = format!(
        "no startupProbe, so a slow start is killed before it finishes; not added: the liveness handler is \
         {bytes} bytes, over the {} bytes probegate copies; add one with a short check",
        exec::MAX_SCRIPT_BYTES
    );
    out.push(t.finding(RuleId::StartupProbe, action, message, vec![]));
}

/// The liveness handler as a complete JSON object, for the startup probe. Defaults the API server
/// would fill in (`path` `/`, `scheme` `HTTP`) are written out, so the added probe is complete.
fn handler_json(probe: &Probe) -> Option<(&'static str, Value)> {
    if let Some(h) = &probe.http_get {
        let mut h = h.clone();
        h.path.get_or_insert_with(|| "/".into());
        h.scheme.get_or_insert_with(|| "HTTP".into());
        return Some(("httpGet", serde_json::to_value(h).ok()?));
    }
    if let Some(s) = &probe.tcp_socket {
        return Some(("tcpSocket", serde_json::to_value(s).ok()?));
    }
    if let Some(g) = &probe.grpc {
        return Some(("grpc", serde_json::to_value(g).ok()?));
    }
    Some(("exec", serde_json::to_value(probe.exec.as_ref()?).ok()?))
}

/// Whether the liveness exec command's analysis finished, from the notes it left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reach {
    /// The analysis was not cut short (or there was no exec command).
    Known,
    /// It was cut short by one of the analysis bounds (script, command, expansion, the object's
    /// budget).
    OverBound,
    /// It found a dependency while `liveness-dependency` is off (no finding names it).
    Dependency,
}

/// Adds a startup probe copying the liveness handler (`startup-probe`), unless it is over the
/// copy bound or the liveness exec command's analysis was cut short (`unanalysed`:
/// [`not_copied`]).
fn startup_probe(
    rules: &RuleSet,
    t: &Target<'_>,
    out: &mut Vec<Finding>,
    local_requests: Option<&[exec::LocalRequest]>,
    unanalysed: Reach,
) {
    let cfg = &rules.startup_probe;
    let Some(live) = t.container.liveness_probe.as_ref() else { return };
    if t.container.startup_probe.is_some() {
        return;
    }
    // A liveness GET of an aggregate health endpoint (`liveness-dependency-path`) is not copied: a
    // startup probe on it would make every starting pod wait on the database, and kill it after the
    // budget (CrashLoopBackOff, and the back-off delays recovery) while the database is down. The
    // liveness group path may not exist (Spring Boot serves it only on Kubernetes or with
    // `management.endpoint.health.probes.enabled`; older versions not at all), and a startup probe
    // on a 404 never passes. A TCP connect to the same port checks that the server listens, which
    // is what startup waits for.
    // Only an `httpGet` handler is replaced below, so only its path is looked up (no exec analysis).
    let aggregate = live.http_get.is_some()
        && rules.liveness_dependency_path.action != Action::Off
        && super::checklist::aggregate_path(rules, t, None).is_some();
    // An exec liveness command that asks this pod for an aggregate health path (`curl -f
    // http://localhost:8080/actuator/health`): copying it has the same cost, and the command does
    // not say which port a TCP check would take. Nothing is added; the finding says what to add.
    if live.exec.is_some()
        && rules.liveness_dependency_path.action != Action::Off
        && super::checklist::aggregate_path(rules, t, local_requests).is_some()
    {
        let message = "no startupProbe, so a slow start is killed before it finishes; not added: the \
                       liveness command asks an aggregate health endpoint, and a copy would make every \
                       starting pod wait on its dependencies; add one with a TCP check of the app's port \
                       or its liveness group path";
        out.push(t.finding(RuleId::StartupProbe, Action::Warn, message.to_string(), vec![]));
        return;
    }
    let (handler_field, handler_value, handler_text) = match (&live.http_get, aggregate) {
        (Some(h), true) => {
            let mut tcp = serde_json::Map::new();
            if let Some(host) = &h.host {
                tcp.insert("host".into(), json!(host));
            }
            let Ok(port) = serde_json::to_value(&h.port) else { return };
            tcp.insert("port".into(), port);
            ("tcpSocket", Value::Object(tcp), "a TCP connect to the liveness port (not its aggregate path)")
        }
        _ => {
            // (An exec handler is measured before it is copied: s26, a 3 MB one.)
            let bytes = live.exec.as_ref().map_or(0, super::json_len);
            if bytes > exec::MAX_SCRIPT_BYTES {
                return handler_not_copied(t, cfg.action, bytes, out);
            }
            let Some((field, value)) = handler_json(live) else { return };
            (field, value, "the liveness handler")
        }
    };
    let handler_bytes = super::json_len(&handler_value);
    if handler_bytes > exec::MAX_SCRIPT_BYTES {
        return handler_not_copied(t, cfg.action, handler_bytes, out);
    }
    if unanalysed != Reach::Known {
        not_copied(rules, t, unanalysed, out);
        return;
    }
    let delay = live.initial_delay_seconds.unwrap_or(0);
    // A delay over the policy's bound leaves liveness once a startup probe gates it (rules.md §2.5:
    // with a startup probe the delay only postpones deadlock detection). Not beside a TCP check in
    // place of the liveness handler: the port may open before the app is ready for its own health
    // endpoint, so the delay still guards the first liveness checks.
    let move_delay = !aggregate && i64::from(delay) > i64::from(cfg.max_initial_delay_seconds);
    // The added probe never gives less boot time than the liveness probe gives today, its start
    // grace `initialDelaySeconds + periodSeconds × failureThreshold` (rules.md §2.5: `grace =
    // max(defaultStartupBudgetSeconds, G(L))`), moved delay or not: the startup probe kills a boot
    // it has not seen succeed, so a boot the liveness probe allowed must fit in its budget (s21
    // fresh-user pass: a TCP startup probe of 120 s beside a 210 s liveness grace killed 150 s boots).
    let allowed = u64::try_from(failure_window_seconds(live)).unwrap_or(0);
    let budget = u64::from(cfg.budget_seconds).max(allowed);
    let kept_grace = !move_delay && allowed > u64::from(cfg.budget_seconds);
    // A client deadline in the handler (`grpc_health_probe -rpc-timeout=5s`): the added probe's
    // timeout covers it, and its period leaves room for that timeout (never above an hour), so that
    // the probe it adds is not itself a `probe-client-deadline` finding.
    let deadline =
        super::checklist::longest_deadline(live, t.budget).map_or(0, |(_, s)| s).min(u64::from(MAX_SECONDS));
    let base_period = u64::from(cfg.period_seconds.max(1));
    let period = base_period.max(deadline);
    // A check that fails at once (nothing listens yet) fails at 0, P, 2P, ...: the kubelet kills
    // the container at the `failureThreshold`-th, `(failureThreshold - 1) × periodSeconds` after it
    // started (Kubernetes docs, "Configure Liveness, Readiness and Startup Probes": a startup probe
    // is given `failureThreshold × periodSeconds`, which holds for a check that takes its whole
    // period). `ceil(budget / period)` loses at most one period of boot time, one policy period;
    // a period stretched to a client's deadline (`curl -m 120`: 120 s, failureThreshold 1) would
    // lose the whole budget, killing at the first check. So a stretched period gets one more
    // failure: `(failureThreshold - 1) × periodSeconds` is at least `budget - policy period`, what
    // the policy's own period gives.
    // `failureThreshold` is an int32 (Kubernetes API reference, Probe): a budget past
    // `periodSeconds × (2^31 - 1)` is cut there rather than written as a number the API rejects.
    let wanted_threshold = if period > base_period {
        budget.saturating_sub(base_period).div_ceil(period) + 1
    } else {
        budget.div_ceil(period)
    };
    let failure_threshold = wanted_threshold.min(MAX_INT32);
    let cut = wanted_threshold > failure_threshold;
    let live_timeout =
        u64::try_from(live.timeout_seconds.unwrap_or(DEFAULT_TIMEOUT_SECONDS).max(1)).unwrap_or(1);
    let timeout = if rules.probe_timeout.action == Action::Off {
        live_timeout
    } else {
        live_timeout.max(u64::from(rules.probe_timeout.liveness_min_seconds))
    };
    // Never longer than the probe's own period (rules.md §2.4).
    let timeout = timeout.max(deadline).min(period);
    let cut_text = if cut { ", cut to the largest failureThreshold the API accepts" } else { "" };
    let moved = if move_delay {
        format!("; its initialDelaySeconds {delay} moves into this budget{cut_text}")
    } else if kept_grace {
        format!("; as long as the liveness probe allows a boot today{cut_text}")
    } else if cut {
        "; cut to the largest failureThreshold the API accepts".to_string()
    } else {
        String::new()
    };
    let message = |verb: &str| {
        format!(
            "no startupProbe, so a slow start is killed before it finishes; {verb} one with {handler_text}, \
             periodSeconds {period}, failureThreshold {failure_threshold} ({} s to boot){moved}",
            period * failure_threshold
        )
    };
    let mut patch = Vec::new();
    if cfg.action == Action::Mutate {
        let mut probe = serde_json::Map::new();
        probe.insert(handler_field.to_string(), handler_value);
        probe.insert("initialDelaySeconds".into(), json!(0));
        probe.insert("periodSeconds".into(), json!(period));
        probe.insert("timeoutSeconds".into(), json!(timeout));
        probe.insert("successThreshold".into(), json!(1));
        probe.insert("failureThreshold".into(), json!(failure_threshold));
        patch.push(add(t.pointer(&["startupProbe"]), Value::Object(probe)));
        if move_delay {
            patch.push(PatchOperation::Remove(RemoveOperation {
                path: t.pointer(&["livenessProbe", "initialDelaySeconds"]),
            }));
        }
    }
    out.push(t.fix_finding(RuleId::StartupProbe, cfg.action, patch, ["added", "would add", "add"], message));
}

/// A liveness probe `liveness-dependency` warns about (its exit status cannot fail it, or what it
/// reaches is known only at run time) is never copied into a startup probe: the copy would make
/// each start wait on what it reaches, and kill the container while that is down. Nothing is
/// added, and the finding says why (fresh-user pass: a warned `pg_isready -h db | tee` check got
/// no startup probe and nothing said why). A denied one gets no note: the denial asks to change
/// the probe first. Nor is one whose analysis was cut short by a bound (`unanalysed`), whose
/// finding says so.
fn not_copied(rules: &RuleSet, t: &Target<'_>, unanalysed: Reach, out: &mut Vec<Finding>) {
    if t.container.liveness_probe.is_none() || t.container.startup_probe.is_some() {
        return;
    }
    let cfg = &rules.startup_probe;
    // Nothing is patched: a warning where the rule mutates, so the webhook and `check` show it.
    let action = if cfg.action == Action::Mutate { Action::Warn } else { cfg.action };
    // Each says what to do: a startup probe of the user's own that checks only this container
    // (s21 fresh-user pass: "check this container only" said nothing about what to do).
    let message = match unanalysed {
        Reach::OverBound => {
            "no startupProbe, so a slow start is killed before it finishes; not added: what the liveness \
             check reaches is not known (its analysis hit a bound); add one that checks only this container"
        }
        Reach::Known => {
            "no startupProbe, so a slow start is killed before it finishes; not added: a copy of the \
             liveness check would wait on what liveness-dependency flags; add one that checks only this \
             container"
        }
        Reach::Dependency => {
            "no startupProbe, so a slow start is killed before it finishes; not added: the liveness check \
             may reach another workload (liveness-dependency is off here), a copy would wait on it; add one \
             that checks only this container, or set startup-probe off here to accept none"
        }
    };
    out.push(t.finding(RuleId::StartupProbe, action, message.to_string(), vec![]));
}

// === prestop-sleep ===

fn prestop_sleep(rules: &RuleSet, t: &Target<'_>, out: &mut Vec<Finding>) {
    let cfg = &rules.prestop_sleep;
    // Native sidecars get SIGTERM only after the app containers exited, so a sleep there only
    // delays the pod's end (Kubernetes docs, "Sidecar Containers").
    if t.kind != ContainerKind::App || !t.long_running() || !t.declares_ports() {
        return;
    }
    let lifecycle = t.container.lifecycle.as_ref();
    if lifecycle.is_some_and(|l| l.pre_stop.is_some()) {
        return;
    }
    let seconds = cfg.seconds;
    // The API accepts a sleep of at most the grace period (validateSleepAction: `0 < seconds <=
    // terminationGracePeriodSeconds`, which is 30 when left out); a sleep that long leaves the app no
    // time for its own SIGTERM handling, so it must be shorter.
    let grace = t.spec.termination_grace_period_seconds.unwrap_or(TERMINATION_GRACE_PERIOD_SECONDS);
    if grace <= i64::from(seconds) {
        let default = if t.spec.termination_grace_period_seconds.is_none() { " (default)" } else { "" };
        // Reported, never patched: the sleep would eat the whole grace period.
        out.push(t.finding(
            RuleId::PrestopSleep,
            cfg.action,
            format!(
                "terminationGracePeriodSeconds {grace}{default} leaves no room for a {seconds} s preStop sleep, so \
                 none was added; raise it above {seconds} s so endpoint removal propagates before SIGTERM"
            ),
            vec![],
        ));
        return;
    }
    let hook = match cfg.style {
        SleepStyle::Native => json!({"sleep": {"seconds": seconds}}),
        SleepStyle::Exec => json!({"exec": {"command": ["sleep", seconds.to_string()]}}),
    };
    let mut patch = Vec::new();
    if cfg.action == Action::Mutate {
        patch.push(match lifecycle {
            None => add(t.pointer(&["lifecycle"]), json!({ "preStop": hook })),
            Some(_) => add(t.pointer(&["lifecycle", "preStop"]), hook),
        });
    }
    let style = match cfg.style {
        SleepStyle::Native => "sleep action",
        SleepStyle::Exec => "exec sleep",
    };
    out.push(t.fix_finding(RuleId::PrestopSleep, cfg.action, patch, ["added", "would add", "add"], |verb| {
        format!(
            "declares ports but has no preStop hook, so SIGTERM can close its socket while endpoints still \
             send it traffic; {verb} a {seconds} s preStop {style}"
        )
    }));
}
