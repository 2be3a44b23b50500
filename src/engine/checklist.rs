//! The seeds' review checklist beyond the six original rules (rules.md §1.2; issue 10):
//! aggregate health paths on liveness, readiness on a shared dependency, workers nobody watches,
//! exec probes that an `httpGet` would do, liveness on a container that is never restarted,
//! liveness and readiness paths swapped, and probe clients whose own deadline outlives the probe.
//!
//! Kubernetes facts used here:
//! - a failing readiness probe removes the pod from the Service's endpoints; every replica whose
//!   readiness checks one shared dependency leaves at once when it is down (docs "Pod Lifecycle";
//!   seed 004);
//! - the kubelet gives an exec probe `timeoutSeconds` (default 1) and counts it as failed when it
//!   runs longer (docs "Configure Liveness, Readiness and Startup Probes", exec probe timeouts,
//!   enforced since 1.20);
//! - a container's own `restartPolicy` (`Never`, `OnFailure`, `Always`) and `restartPolicyRules`
//!   override the pod's for that container (KEP-5307 ContainerRestartRules, alpha 1.34, beta 1.35).

use json_patch::{AddOperation, PatchOperation};
use k8s_openapi::api::core::v1::{Container, Probe};
use serde_json::json;

use super::exec;
use super::hosts::{self, ProbeHost};
use super::paths;
use super::rules::Target;
use super::{ContainerKind, Coupling, Finding};
use crate::policy::{Action, RuleId, RuleSet};

mod replaceable;
use replaceable::exec_replaceable;

/// Whether a container only serves metrics: it declares ports and every one of them is named for
/// metrics (`metrics`, `http-metrics`, `https-metrics`, `prometheus`, ...), or its image is a
/// metrics auth proxy (`kube-rbac-proxy`, which kube-prometheus puts in front of every exporter).
/// Such a container is scraped, not sent traffic: Prometheus scrapes a pod whether or not it is
/// Ready, and a scrape missed at shutdown loses one sample.
pub fn metrics_only(c: &Container) -> bool {
    let ports = c.ports.as_deref().unwrap_or(&[]);
    if ports.is_empty() {
        return false;
    }
    let image = c.image.as_deref().unwrap_or("");
    let image = image.split('@').next().unwrap_or("");
    let repo = image.rsplit('/').next().unwrap_or("");
    let repo = repo.split(':').next().unwrap_or("");
    if repo == "kube-rbac-proxy" {
        return true;
    }
    ports.iter().all(|p| {
        p.name.as_deref().is_some_and(|n| {
            let n = n.to_ascii_lowercase();
            n.contains("metrics") || n == "prom" || n == "prometheus"
        })
    })
}

/// Probe kinds with their field names.
fn probes(c: &Container) -> [(&'static str, Option<&Probe>); 3] {
    [
        ("livenessProbe", c.liveness_probe.as_ref()),
        ("readinessProbe", c.readiness_probe.as_ref()),
        ("startupProbe", c.startup_probe.as_ref()),
    ]
}

/// Runs the checklist rules on one container, appending findings. `local_requests`: the HTTP
/// requests its liveness exec command makes to the Pod, when `liveness-dependency` analysed it;
/// `liveness_denied`: `liveness-dependency` denied the liveness probe.
pub(super) fn evaluate(
    rules: &RuleSet,
    t: &Target<'_>,
    out: &mut Vec<Finding>,
    local_requests: Option<&[exec::LocalRequest]>,
    liveness_exec: Option<&super::rules::ExecAnalysis<'_>>,
    liveness_denied: bool,
    unresolved: &mut Vec<super::Unresolved>,
) {
    fn push(out: &mut Vec<Finding>, t: &Target<'_>, rule: RuleId, action: Action, message: Option<String>) {
        if let Some(message) = message {
            out.push(t.finding(rule, action, message, vec![]));
        }
    }
    let r = &rules.liveness_dependency_path;
    if r.action != Action::Off {
        push(out, t, RuleId::LivenessDependencyPath, r.action, aggregate_path(rules, t, local_requests));
    }
    let a = rules.readiness_shared_dependency.action;
    if a != Action::Off
        && let Some((message, coupling)) = readiness_dependency(rules, t, liveness_exec, unresolved)
    {
        // As for `liveness-dependency`: only a certain coupling is a reason to deny; a target
        // that may be this Pod, or a status known only at run time, is at most a warning.
        let a = match a {
            Action::Deny if !matches!(coupling, Coupling::Fails) => Action::Warn,
            a => a,
        };
        let mut f = t.finding(RuleId::ReadinessSharedDependency, a, message, vec![]);
        f.coupling = Some(coupling);
        out.push(f);
    }
    let a = rules.startup_remote_dependency.action;
    if a != Action::Off
        && let Some((message, maybe_self)) = startup_dependency(rules, t, liveness_exec, unresolved)
    {
        // As for `liveness-dependency`: a target that may be this Pod is never a reason to deny.
        let a = match a {
            Action::Deny if maybe_self => Action::Warn,
            a => a,
        };
        push(out, t, RuleId::StartupRemoteDependency, a, Some(message));
    }
    let a = rules.worker_liveness_missing.action;
    if a != Action::Off {
        push(out, t, RuleId::WorkerLivenessMissing, a, worker(t));
    }
    let a = rules.exec_probe_replaceable.action;
    if a != Action::Off {
        push(out, t, RuleId::ExecProbeReplaceable, a, exec_replaceable(t, liveness_denied));
    }
    let a = rules.liveness_never_restarted.action;
    if a != Action::Off {
        push(out, t, RuleId::LivenessNeverRestarted, a, never_restarted(t));
    }
    let a = rules.probe_paths_swapped.action;
    if a != Action::Off {
        push(out, t, RuleId::ProbePathsSwapped, a, swapped(t));
    }
    if rules.probe_client_deadline.action != Action::Off {
        client_deadline(rules, t, out);
    }
}

// === liveness-dependency-path ===

/// The liveness probe's aggregate health path: its `httpGet.path`, or the path an exec command
/// fetches from this Pod with an HTTP client (`curl -f http://localhost:8080/actuator/health`
/// asks the same endpoint the kubelet would).
pub(super) fn aggregate_path(
    rules: &RuleSet,
    t: &Target<'_>,
    local_requests: Option<&[exec::LocalRequest]>,
) -> Option<String> {
    let probe = t.container.liveness_probe.as_ref()?;
    let image = t.container.image.as_deref().unwrap_or("");
    let known = |path: &str| -> Vec<&crate::policy::KnownHttpPath> {
        rules
            .liveness_dependency_path
            .known_http_paths()
            .filter(|k| k.matches(path) && k.applies_to_image(image))
            .collect()
    };
    let (what, path, hits) = match &probe.http_get {
        Some(get) => {
            let path = get.path.as_deref().unwrap_or("/");
            ("GET".to_string(), path.to_string(), known(path))
        }
        None => {
            let analysed;
            let requests = match local_requests {
                Some(r) => r,
                None => {
                    analysed = local_exec_requests(rules, t)?;
                    &analysed
                }
            };
            let (request, hits) =
                requests.iter().map(|r| (r, known(&r.path))).find(|(_, hits)| !hits.is_empty())?;
            // The program, not the whole command: the message must keep its advice within the
            // 256 characters a warning may have (Kubernetes API reference, AdmissionResponse
            // `warnings`: longer ones may be truncated).
            (format!("`{}` GET", request.program), request.path.clone(), hits)
        }
    };
    if hits.is_empty() {
        return None;
    }
    let alternatives =
        hits.iter().map(|k| format!("{}: {}", k.framework, k.liveness_path)).collect::<Vec<_>>();
    Some(format!(
        "livenessProbe {what} {} is an aggregate health endpoint (every check, a database's included); \
         probe the liveness group instead ({})",
        exec::redact_secrets(paths::normalize(&path)),
        alternatives.join("; ")
    ))
}

/// The HTTP requests a liveness exec command makes to this Pod, analysed here when the
/// `liveness-dependency` rule is off (it analyses them otherwise).
pub(super) fn local_exec_requests(rules: &RuleSet, t: &Target<'_>) -> Option<Vec<exec::LocalRequest>> {
    let command = t.container.liveness_probe.as_ref()?.exec.as_ref()?.command.as_ref()?;
    Some(super::rules::analyze_exec(rules, t, command, t.budget).local_requests)
}

// === readiness-shared-dependency ===

/// The question seed 004 asks of every readiness dependency.
const SEED_QUESTION: &str = "should that mean \"no traffic here\" or \"serve degraded\"?";

/// A target as the readiness and startup messages show it, in at most 40 characters
/// ([`hosts::shown_target`]: a URL's host and port only, no user info; cut between words).
fn short(target: &str) -> String {
    hosts::shown_target(target, 40)
}

/// What a readiness or startup probe reaches of another workload: a remote `httpGet`/`tcpSocket`
/// host as messages show it ([`hosts::redact_host`]; a loopback host, or an IP literal with
/// hostNetwork, may be the Pod itself: not remote), or the dependency its exec command reaches
/// (the liveness analysis, reused when the command is the liveness probe's own and the budget
/// allows it).
enum Reached {
    Host(String),
    Exec(exec::Dependency),
}

fn remote_dependency(
    rules: &RuleSet,
    t: &Target<'_>,
    (probe, name): (&Probe, &'static str),
    liveness_exec: Option<&super::rules::ExecAnalysis<'_>>,
    unresolved: &mut Vec<super::Unresolved>,
) -> Option<Reached> {
    let host_network = t.spec.host_network == Some(true);
    let host = probe
        .http_get
        .as_ref()
        .and_then(|h| h.host.as_deref())
        .or_else(|| probe.tcp_socket.as_ref().and_then(|s| s.host.as_deref()));
    if let Some(host) = host {
        let remote = match hosts::classify(host, t.container, t.own_names) {
            ProbeHost::ServiceName | ProbeHost::OtherName => true,
            ProbeHost::OtherIp => !host_network,
            _ => false,
        };
        return remote.then(|| Reached::Host(hosts::redact_host(host)));
    }
    let command = probe.exec.as_ref()?.command.as_ref()?;
    let dep = match liveness_exec {
        Some(l) if l.command == command.as_slice() && t.readiness_budget.charge(l.spent) => {
            l.dependency.clone()?
        }
        _ => {
            let outcome = super::rules::analyze_exec(rules, t, command, t.readiness_budget);
            // A script it runs that could not be read (its ConfigMap not in the input, not read
            // by the webhook): a note, as for a liveness probe's, once per container and script
            // (s24: a readiness or startup probe's got none). Over a bound too (s27: OpenShift's
            // ovnkube-lib.sh, 23,931 bytes, sourced by a readiness probe got no note, against
            // docs/scripts.md): the liveness analysis warns only of its own command, and a
            // script over a bound may hide the shared dependency this rule looks for. A script
            // the liveness probe runs as well is noted once (the check below).
            for u in outcome.unresolved {
                let script = exec::redact_text(&u.path);
                if !unresolved.iter().any(|e| e.container == t.container.name && e.script == script) {
                    unresolved.push(super::Unresolved {
                        container: t.container.name.clone(),
                        script,
                        reason: u.reason,
                        over_bound: u.over_bound,
                        probe: name,
                    });
                }
            }
            outcome.dependency?
        }
    };
    Some(Reached::Exec(dep))
}

fn readiness_dependency(
    rules: &RuleSet,
    t: &Target<'_>,
    liveness_exec: Option<&super::rules::ExecAnalysis<'_>>,
    unresolved: &mut Vec<super::Unresolved>,
) -> Option<(String, Coupling)> {
    let probe = t.container.readiness_probe.as_ref()?;
    const EMPTIES: &str = "its outage empties the endpoints";
    Some(match remote_dependency(rules, t, (probe, "readiness"), liveness_exec, unresolved)? {
        Reached::Host(host) => {
            (format!("readinessProbe reaches {}: {EMPTIES}; {SEED_QUESTION}", short(&host)), Coupling::Fails)
        }
        Reached::Exec(dep) => {
            let reaches = format!("readinessProbe reaches {} (via {})", short(&dep.target), dep.program);
            if dep.bad_url {
                // As for `liveness-dependency`: a URL the client refuses fails every time (no
                // finding when its status cannot fail the probe).
                if dep.uncoupled.is_some() {
                    return None;
                }
                (super::rules::refused_url("readinessProbe", &dep), Coupling::Uncertain)
            } else if let Some(how) = dep.uncoupled {
                // Its status cannot take the pod out of the endpoints; a client that hangs past
                // timeoutSeconds still does (Kubernetes docs, exec probes).
                let timeout = super::defaults::shown(probe.timeout_seconds, super::defaults::TIMEOUT_SECONDS);
                (
                    format!(
                        "{reaches}: its exit status cannot fail the probe, only a hang past \
                         timeoutSeconds {timeout} can"
                    ),
                    Coupling::HangOnly { program: dep.program, target: short(&dep.target), how },
                )
            } else if dep.status_unknown.is_some() {
                (
                    format!("{reaches}; if its status fails the probe (known at run time), {EMPTIES}"),
                    Coupling::Uncertain,
                )
            } else if t.spec.host_network == Some(true) && super::rules::target_is_ip_literal(&dep.target) {
                // As for `liveness-dependency`: with hostNetwork an IP literal may be this node.
                (
                    format!("{reaches}: with hostNetwork that address may be this node; if not, {EMPTIES}"),
                    Coupling::Uncertain,
                )
            } else if let Some(name) = dep.host_command_name().filter(|_| dep.unknown_host) {
                // As for `liveness-dependency`: the shell runs a command named NAME for the host.
                (
                    format!(
                        "{reaches}: the shell runs a command named `{name}` for the host (none if the \
                         image lacks it); for the variable write `${name}`"
                    ),
                    Coupling::Uncertain,
                )
            } else if dep.unknown_host {
                (
                    format!("{reaches}, known only at run time: if that is another workload, {EMPTIES}"),
                    Coupling::Uncertain,
                )
            } else {
                (format!("{reaches}: {EMPTIES}; {SEED_QUESTION}"), Coupling::Fails)
            }
        }
    })
}

// === startup-remote-dependency ===

/// The startup probe's remote dependency (rules.md, `startup-remote-dependency`): the message, and
/// whether the target may be this Pod after all (a host known only at run time whose variable
/// names no dependency, an IP literal with hostNetwork), in which case it is never a denial. A
/// failing startup probe kills the container (Kubernetes docs, "Container probes": "If the startup
/// probe fails, the kubelet kills the container"), so the dependency's outage during a rollout or
/// a node drain is a restart loop. A client whose exit status cannot fail the probe is no coupling.
fn startup_dependency(
    rules: &RuleSet,
    t: &Target<'_>,
    liveness_exec: Option<&super::rules::ExecAnalysis<'_>>,
    unresolved: &mut Vec<super::Unresolved>,
) -> Option<(String, bool)> {
    let probe = t.container.startup_probe.as_ref()?;
    // The message names the target and the program: kept within a 256-character warning.
    const KILLS: &str =
        "while it is down each start is killed, a restart loop; wait in readinessProbe or the app";
    Some(match remote_dependency(rules, t, (probe, "startup"), liveness_exec, unresolved)? {
        Reached::Host(host) => (format!("startupProbe reaches {}; {KILLS}", short(&host)), false),
        Reached::Exec(dep) if dep.uncoupled.is_some() => return None,
        Reached::Exec(dep) if dep.bad_url => (super::rules::refused_url("startupProbe", &dep), true),
        Reached::Exec(dep) => {
            let maybe_self = dep.unknown_host
                || dep.status_unknown.is_some()
                || dep.quorum.is_some()
                || t.spec.host_network == Some(true) && super::rules::target_is_ip_literal(&dep.target);
            (
                format!("startupProbe reaches {} (via {}); {KILLS}", short(&dep.target), dep.program),
                maybe_self,
            )
        }
    })
}

// === worker-liveness-missing ===

/// Whether a container's command only idles (`sleep infinity`, `sleep 3600`, `tail -f /dev/null`):
/// there is no loop to wedge, so nothing for a liveness probe to watch. A command over the bounds
/// of an exec command's analysis ([`exec::MAX_COMMAND_BYTES`], a `sh -c` script over
/// [`exec::MAX_SCRIPT_BYTES`]) is not read, and counts as idling: no finding on what was not read.
fn idles(c: &Container, budget: &exec::AnalysisBudget) -> bool {
    let bytes: usize = c.command.iter().flatten().chain(c.args.iter().flatten()).map(|a| a.len() + 1).sum();
    if bytes > exec::MAX_COMMAND_BYTES {
        return true;
    }
    let argv: Vec<&str> =
        c.command.iter().flatten().chain(c.args.iter().flatten()).map(String::as_str).collect();
    let script = match argv.as_slice() {
        [shell, flag, script, ..]
            if shell.ends_with("sh") && flag.starts_with('-') && flag.ends_with('c') =>
        {
            if script.len() > exec::MAX_SCRIPT_BYTES {
                return true;
            }
            exec::split_commands_in(script, budget)
        }
        _ => vec![argv.iter().map(|s| s.to_string()).collect()].into(),
    };
    let idle = |cmd: &Vec<String>| {
        let words: Vec<&str> = cmd.iter().map(String::as_str).collect();
        let program = words.first().map(|p| p.rsplit('/').next().unwrap_or(p));
        matches!(
            (program, &words[1.min(words.len())..]),
            (Some("sleep"), [_])
                | (Some("tail"), ["-f", "/dev/null"])
                | (Some("while" | "do" | "done" | "true" | ":"), _)
        )
    };
    !script.is_empty() && script.iter().all(|cmd| !cmd.is_empty() && idle(cmd))
}

/// A worker is an app container with no ports in a pod where no other app container serves or is
/// probed: beside such a container, a port-less one is a helper (log shipper, config reloader, the
/// CSI `livenessprobe` adapter) that the main container's probes stand for (rules.md,
/// `worker-liveness-missing`: "not sidecar/proxy"). Pods without a controller (made by hand: demo,
/// debug and test Pods) and containers that only idle (`sleep infinity`) are not workers.
fn worker(t: &Target<'_>) -> Option<String> {
    let c = t.container;
    if t.bare_pod {
        return None;
    }
    // An exempt neighbour (a mesh proxy injected beside every app) serves for the mesh, not for
    // this container: it stands for nothing here.
    let watched_neighbour = t.spec.containers.iter().any(|o| {
        o.name != c.name
            && !t.exempt_containers.iter().any(|e| e.covers(&o.name, o.image.as_deref()))
            && (o.ports.as_ref().is_some_and(|p| !p.is_empty())
                || o.liveness_probe.is_some()
                || o.readiness_probe.is_some())
    });
    if watched_neighbour {
        return None;
    }
    let long_running = t.spec.restart_policy.as_deref().is_none_or(|p| p == "Always");
    let no_ports = c.ports.as_ref().is_none_or(|p| p.is_empty());
    let never = c.restart_policy.as_deref().is_some_and(|p| p != "Always");
    if t.kind != ContainerKind::App
        || !long_running
        || never
        || !no_ports
        || c.liveness_probe.is_some()
        || c.readiness_probe.is_some()
        || idles(c, t.budget)
    {
        return None;
    }
    Some(
        "has no ports and no liveness or readiness probe: a wedged loop (a poisoned message, a lost \
         connection) goes unnoticed; add a livenessProbe on a progress signal, e.g. a heartbeat file"
            .to_string(),
    )
}

// === exec-probe-replaceable (in `replaceable`) ===

/// The script of a `sh -c SCRIPT` argv (`bash`, `ash`, `dash`, `zsh`; combined flags such as `-ec`).
fn shell_script(argv: &[String]) -> Option<&str> {
    match argv {
        [shell, flag, script, ..]
            if ["sh", "bash", "ash", "dash", "zsh"].contains(&shell.rsplit('/').next().unwrap_or(shell))
                && flag.starts_with('-')
                && flag.ends_with('c') =>
        {
            Some(script)
        }
        _ => None,
    }
}

/// The simple commands an exec probe runs: the argv itself, or the commands of a `sh -c` script.
/// None for a command over [`exec::MAX_COMMAND_BYTES`] or a script over [`exec::MAX_SCRIPT_BYTES`]
/// (not read, as [`exec::analyze`] reads neither): the rules that read them find nothing there.
fn simple_commands(argv: &[String], budget: &exec::AnalysisBudget) -> std::rc::Rc<[Vec<String>]> {
    if !exec::within_command_bound(argv) {
        return std::rc::Rc::from(Vec::new());
    }
    match shell_script(argv) {
        Some(script) => exec::split_commands_in(script, budget),
        None => vec![argv.to_vec()].into(),
    }
}

// === liveness-never-restarted ===

fn never_restarted(t: &Target<'_>) -> Option<String> {
    let c = t.container;
    c.liveness_probe.as_ref()?;
    if c.restart_policy.as_deref() != Some("Never") || t.kind != ContainerKind::App {
        return None;
    }
    let rules = if c.restart_policy_rules.as_ref().is_some_and(|r| !r.is_empty()) {
        " (unless its restartPolicyRules restart it on the kill's exit code)"
    } else {
        ""
    };
    Some(format!(
        "has a livenessProbe but its own restartPolicy is Never: a failing check kills it and nothing \
         restarts it{rules}; drop the probe or let it restart"
    ))
}

// === probe-paths-swapped ===

fn swapped(t: &Target<'_>) -> Option<String> {
    let path = |p: Option<&Probe>| p?.http_get.as_ref().map(|h| h.path.clone().unwrap_or_else(|| "/".into()));
    let live =
        path(t.container.liveness_probe.as_ref()).filter(|p| paths::named_for_readiness(p) == Some(true));
    let ready =
        path(t.container.readiness_probe.as_ref()).filter(|p| paths::named_for_readiness(p) == Some(false));
    const WHY: &str = "a busy spell would restart it instead of shedding traffic";
    let show = |p: &str| short(&exec::redact_secrets(p));
    match (live, ready) {
        (Some(l), Some(r)) => Some(format!(
            "livenessProbe and readinessProbe paths look swapped ({}, {}): {WHY}; swap them",
            show(&l),
            show(&r)
        )),
        (Some(l), None) => Some(format!(
            "livenessProbe uses {}, named for readiness: {WHY}; give liveness its own endpoint",
            show(&l)
        )),
        (None, Some(r)) => Some(format!(
            "readinessProbe uses {}, named for liveness: it answers \"alive\", not \"can take traffic\"; give \
             readiness its own endpoint",
            show(&r)
        )),
        (None, None) => None,
    }
}

// === probe-client-deadline ===

/// A Go duration (`5s`, `500ms`, `1m30s`, `1.5s`) or a number of seconds, in milliseconds.
fn duration_ms(s: &str) -> Option<u64> {
    if let Ok(n) = s.parse::<f64>() {
        return (n.is_finite() && n >= 0.0).then(|| (n * 1000.0).round() as u64);
    }
    let mut total = 0f64;
    let mut rest = s;
    while !rest.is_empty() {
        let num_end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
        let n: f64 = rest[..num_end].parse().ok()?;
        rest = &rest[num_end..];
        let unit_end = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let factor = match &rest[..unit_end] {
            "ms" => 1.0,
            "s" => 1000.0,
            "m" => 60_000.0,
            "h" => 3_600_000.0,
            _ => return None,
        };
        total += n * factor;
        rest = &rest[unit_end..];
    }
    (total.is_finite() && total < 1e15).then(|| total.round() as u64)
}

/// The client deadlines set in one simple command: (flag as written, milliseconds).
fn deadlines(cmd: &[String]) -> Vec<(String, u64)> {
    let Some((program, args)) = cmd.split_first() else { return vec![] };
    let program = program.rsplit('/').next().unwrap_or(program);
    let flags: &[&str] = match program {
        "grpc_health_probe" | "grpc-health-probe" => {
            &["-rpc-timeout", "--rpc-timeout", "-connect-timeout", "--connect-timeout"]
        }
        "curl" => &["-m", "--max-time"],
        "wget" => &["-T", "--timeout"],
        _ => return vec![],
    };
    let mut out = Vec::new();
    for (i, a) in args.iter().enumerate() {
        let (flag, value) = match a.split_once('=') {
            Some((f, v)) => (f, Some(v.to_string())),
            None => (a.as_str(), args.get(i + 1).cloned()),
        };
        if flags.contains(&flag)
            && let Some(ms) = value.as_deref().and_then(duration_ms)
        {
            out.push((format!("{program} {flag} {}", value.unwrap_or_default()), ms));
        }
    }
    out
}

/// A probe's `timeoutSeconds` as the kubelet uses it: absent or 0 is 1 (`SetDefaults_Probe`).
fn effective_timeout(probe: &Probe) -> i32 {
    probe.timeout_seconds.filter(|t| *t > 0).unwrap_or(super::defaults::TIMEOUT_SECONDS)
}

/// The longest client deadline an exec probe's commands set: the flag as written and the whole
/// seconds it needs (the deadline rounded up).
pub(super) fn longest_deadline(probe: &Probe, budget: &exec::AnalysisBudget) -> Option<(String, u64)> {
    let argv = probe.exec.as_ref()?.command.as_ref()?;
    simple_commands(argv, budget)
        .iter()
        .flat_map(|cmd| deadlines(cmd))
        .max_by_key(|(_, ms)| *ms)
        .map(|(what, ms)| (what, ms.div_ceil(1000)))
}

/// [`longest_deadline`], when it is above the probe's `timeoutSeconds`.
fn deadline_over_timeout(probe: &Probe, budget: &exec::AnalysisBudget) -> Option<(String, u64)> {
    let limit = u64::try_from(effective_timeout(probe)).unwrap_or(0);
    longest_deadline(probe, budget).filter(|(_, seconds)| *seconds > limit)
}

/// The `timeoutSeconds` that `probe-timeout` (when it mutates) writes into a liveness or readiness
/// probe, if it raises it: its minimum, never above the probe's period.
fn probe_timeout_target(rules: &RuleSet, field: &str, probe: &Probe) -> Option<u64> {
    let cfg = &rules.probe_timeout;
    let min = match field {
        _ if cfg.action != Action::Mutate => return None,
        "livenessProbe" => cfg.liveness_min_seconds,
        "readinessProbe" => cfg.readiness_min_seconds,
        _ => return None,
    };
    let current =
        u64::try_from(probe.timeout_seconds.unwrap_or(super::defaults::TIMEOUT_SECONDS)).unwrap_or(0);
    let period = u64::try_from(super::rules::effective_period(probe)).unwrap_or(0);
    let target = u64::from(min).min(period);
    (target > current).then_some(target)
}

/// One finding per probe whose client deadline outlives its `timeoutSeconds`. With `mutate`, the
/// timeout is raised to the deadline (whole seconds, rounded up) when the probe's `periodSeconds`
/// leaves room (rules.md §2.4: never above the period); otherwise the message says to lengthen the
/// period first. A raise replaces `probe-timeout`'s patch of the same field (one operation per
/// field), and a field `probe-timeout` already raises far enough gets no finding.
fn client_deadline(rules: &RuleSet, t: &Target<'_>, out: &mut Vec<Finding>) {
    let action = rules.probe_client_deadline.action;
    for (field, probe) in probes(t.container) {
        let Some(probe) = probe else { continue };
        let Some((what, seconds)) = deadline_over_timeout(probe, t.budget) else { continue };
        let timeout = super::defaults::shown(probe.timeout_seconds, super::defaults::TIMEOUT_SECONDS);
        let period = u64::try_from(super::rules::effective_period(probe)).unwrap_or(0);
        let shown_period = super::defaults::shown(probe.period_seconds, super::defaults::PERIOD_SECONDS);
        let raised_by_timeout_rule = probe_timeout_target(rules, field, probe);
        if action == Action::Mutate && raised_by_timeout_rule.is_some_and(|r| r >= seconds) {
            continue;
        }
        let lead =
            format!("{field} runs `{what}` under timeoutSeconds {timeout}: the kubelet gives up first");
        if seconds > period {
            out.push(t.finding(
                RuleId::ProbeClientDeadline,
                action,
                format!("{lead}; periodSeconds {shown_period} leaves no room: lengthen it to {seconds}, then raise the timeout"),
                vec![],
            ));
            continue;
        }
        let mut patch = Vec::new();
        if action == Action::Mutate {
            let path = t.pointer(&[field, "timeoutSeconds"]);
            // `probe-timeout` ran first: its lower raise of this field gives way to this one, and a
            // finding of its left with nothing to patch is dropped (this raise covers its minimum).
            for f in
                out.iter_mut().filter(|f| f.rule == RuleId::ProbeTimeout && f.container == t.container.name)
            {
                f.patch.retain(|op| !matches!(op, PatchOperation::Add(a) if a.path == path));
            }
            out.retain(|f| {
                !(f.rule == RuleId::ProbeTimeout
                    && f.container == t.container.name
                    && f.action == Action::Mutate
                    && f.patch.is_empty()
                    && raised_by_timeout_rule.is_some())
            });
            patch.push(PatchOperation::Add(AddOperation { path, value: json!(seconds) }));
        }
        out.push(t.fix_finding(
            RuleId::ProbeClientDeadline,
            action,
            patch,
            ["raised", "would raise", "raise"],
            |verb| {
                let alternative = if verb == "raise" { " or shorten the client's deadline" } else { "" };
                format!("{lead}; {verb} timeoutSeconds to {seconds}{alternative}")
            },
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(duration_ms("5s"), Some(5000));
        assert_eq!(duration_ms("500ms"), Some(500));
        assert_eq!(duration_ms("1m30s"), Some(90_000));
        assert_eq!(duration_ms("1.5s"), Some(1500));
        assert_eq!(duration_ms("3"), Some(3000));
        assert_eq!(duration_ms("5x"), None);
        assert_eq!(duration_ms("-1"), None);
    }

    /// `probe_timeout_target` answers only for a raise: a timeout already at its target (the
    /// minimum, or a shorter period) is no raise (`>`, not `>=`; cargo-mutants' survivor
    /// `checklist.rs:503`). Through the engine that mutant changes nothing today: `probe-timeout`
    /// never leaves a `mutate` finding without a patch (no room is a `warn` finding), so the
    /// `client_deadline` clean-up it feeds finds nothing more to drop; the engine half below holds
    /// that outcome (the readiness no-room warning stays beside the liveness raise).
    #[test]
    fn a_timeout_at_its_target_is_no_raise() {
        let mut rules = crate::policy::parse(crate::policy::DEFAULT_POLICY_YAML, "default").unwrap().rules;
        let probe = |timeout: i32, period: i32| Probe {
            timeout_seconds: Some(timeout),
            period_seconds: Some(period),
            ..Probe::default()
        };
        let min = u64::from(rules.probe_timeout.liveness_min_seconds);
        let at_min = i32::try_from(min).unwrap();
        // Through the engine: liveness at its minimum with a client deadline over it (raised by
        // probe-client-deadline), readiness at a period too short to raise into.
        rules.probe_client_deadline.action = Action::Mutate;
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{
            "name": "app", "image": "a", "ports": [{"containerPort": 8080}],
            "livenessProbe": {"exec": {"command": ["curl", "-f", "-m", "5", "http://localhost:8080/"]},
                              "timeoutSeconds": at_min, "periodSeconds": 10},
            "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}, "timeoutSeconds": 1, "periodSeconds": 1}
        }]}});
        let workload = super::super::Workload::from_value(super::super::WorkloadKind::Pod, &pod).unwrap();
        let findings = super::super::evaluate(&rules, &workload).findings;
        let timeout: Vec<&Finding> = findings.iter().filter(|f| f.rule == RuleId::ProbeTimeout).collect();
        assert_eq!(timeout.len(), 1, "{findings:#?}");
        assert!(timeout[0].message.contains("readinessProbe"), "{findings:#?}");
        assert!(findings.iter().any(|f| f.rule == RuleId::ProbeClientDeadline), "{findings:#?}");
        // The function itself.
        assert_eq!(probe_timeout_target(&rules, "livenessProbe", &probe(at_min, 10)), None);
        assert_eq!(probe_timeout_target(&rules, "livenessProbe", &probe(at_min - 1, 10)), Some(min));
        // Never above the period: a timeout equal to a shorter period is no raise either.
        assert_eq!(probe_timeout_target(&rules, "livenessProbe", &probe(2, 2)), None);
        assert_eq!(probe_timeout_target(&rules, "livenessProbe", &probe(1, 2)), Some(2));
    }

    #[test]
    fn local_http_clients() {
        let argv = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let budget = exec::AnalysisBudget::default();
        let c = Container::default();
        let local_http_only = |argv: &[String]| super::replaceable::local_http_only(argv, &budget, &c);
        assert!(local_http_only(&argv(&["curl", "-f", "http://localhost:8080/healthz"])).is_some());
        assert!(local_http_only(&argv(&["sh", "-c", "wget -q -O- http://127.0.0.1:80/"])).is_some());
        assert!(local_http_only(&argv(&["curl", "-f", "http://db:8080/"])).is_none());
        assert!(local_http_only(&argv(&["curl", "--unix-socket", "/s", "http://localhost/"])).is_none());
        assert!(
            local_http_only(&argv(&["sh", "-c", "curl -f http://localhost/ && test -f /tmp/x"])).is_none()
        );
        assert!(local_http_only(&argv(&["cat", "/tmp/healthy"])).is_none());
    }

    #[test]
    fn a_long_target_is_cut_between_words() {
        assert_eq!(super::short("orders-db.prod.svc"), "orders-db.prod.svc");
        // A URL is its host and port: no path, query or user info.
        let t = "http://orders-database.production.svc.cluster.local:5432/health";
        assert_eq!(super::short(t), "orders-database.production.svc.cluster.…");
        let t = "https://u:pw@api.example.com:8443/v1?token=abc";
        assert_eq!(super::short(t), "api.example.com:8443");
        // The cut falls on a separator already: nothing is taken back.
        assert_eq!(
            super::short(&format!("{}.{}", "a".repeat(38), "b".repeat(10))),
            format!("{}.…", "a".repeat(38))
        );
        // One long word: cut at the limit (no separator in the second half).
        let word = "x".repeat(60);
        assert_eq!(super::short(&word), format!("{}…", "x".repeat(39)));
        // A separator in the first half is too early to cut at: the long word is cut instead.
        let early = format!("db.{}", "x".repeat(60));
        assert_eq!(super::short(&early), format!("db.{}…", "x".repeat(36)));
        // A note the analysis added is kept whole or left out, never cut.
        assert_eq!(super::short("db.svc (DB_HOST)"), "db.svc (DB_HOST)");
        let t = "$CACHE_X (not in the container's env; set at run time)";
        assert_eq!(super::short(t), "$CACHE_X");
        assert!(super::short(t).chars().count() <= 40);
    }
}
