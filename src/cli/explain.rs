//! `probegate explain [--replicas N] [--outage SECONDS] [--outage-start SECONDS] [--warmup SECONDS]
//! [--dependency-check auto|liveness|readiness|none] [--svg FILE] PATH...`: what the probes of each
//! workload mean in seconds, and what a dependency outage would do to it, as written and as `fix`
//! leaves it.
//!
//! **Probe arithmetic**, per container (app containers and native sidecars; exempt ones skipped),
//! with the Kubernetes defaults filled in and marked (`periodSeconds` 10, `timeoutSeconds` 1,
//! `failureThreshold` 3, `successThreshold` 1, `initialDelaySeconds` 0,
//! `terminationGracePeriodSeconds` 30; a 0 is the default too, as the API server makes it):
//! - liveness and readiness: the failure budget `periodSeconds × failureThreshold` (the Kubernetes
//!   docs' figure, and the number `check`'s `liveness-matches-readiness` compares and shows);
//! - liveness: a hang becomes a restart after at most the budget `+ timeoutSeconds` (at least one
//!   period less: the first failed check may come at once), then the stop takes up to the grace
//!   period;
//! - readiness: a failure takes the pod out of the endpoints after at most the budget
//!   `+ timeoutSeconds`, and back in after at most `successThreshold × periodSeconds`;
//! - startup: `initialDelaySeconds + periodSeconds × failureThreshold` to boot; without a startup
//!   probe, liveness kills a boot longer than `initialDelaySeconds + periodSeconds × failureThreshold`.
//!
//! **Outage simulation** ([`crate::engine::simulate`]), one per workload, for its first container
//! whose probes check the dependency (else the first with a liveness probe, else with a readiness
//! probe). How a manifest becomes a [`Scenario`]:
//! - replicas: `--replicas`, else `spec.replicas` (default 1; Pods, DaemonSets, Jobs: 1);
//! - warm-up: `--warmup`, else the startup probe's budget as written, else the liveness probe's
//!   `initialDelaySeconds`, else 0; the same for both configurations (it is the application's boot
//!   time, not a probe setting);
//! - liveness and readiness `periodSeconds` and `failureThreshold` as written (defaults filled in); a
//!   container without a readiness probe is Ready as soon as it is warm (period 1 s, threshold 1);
//! - the dependency is down for `--outage` seconds (90) from `--outage-start` (60); probes of
//!   consecutive replicas are 1 s apart; restart back-off 10 s doubling to 300 s (the kubelet's);
//! - which probe checks the dependency (`--dependency-check auto`): liveness when the
//!   `liveness-dependency` rule finds that the liveness probe reaches something outside the pod;
//!   readiness when the same analysis finds it in the readiness probe (an exec client aimed at
//!   another host, an `httpGet`/`tcpSocket` host). An HTTP readiness endpoint of the pod itself is
//!   assumed not to check the dependency (its code is not visible): say `--dependency-check
//!   readiness` when it does.
//!
//! "As fixed" is the object after `probegate fix` (its `fix` findings applied) with the dependency
//! checked by readiness only, as the `liveness-dependency` rule asks (fix cannot rewrite a
//! command): a container without a readiness probe gets one with the liveness probe's timing.
//!
//! "Serve degraded" is the other answer to seed 004's question: no probe checks the dependency, so
//! every replica stays in the endpoints through the outage and answers without it (degraded
//! responses, errors or cached data, as the application decides); its row counts replicas in the
//! endpoints rather than replicas whose requests reach the dependency.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use k8s_openapi::api::core::v1::{Container, Probe};
use serde_json::Value;

use super::input::{self, Checked, FileAnalysis, Level};
use super::{EXIT_BAD_INPUT, EXIT_OK};
use crate::engine::simulate::{self, DependencyCheck, Outcome, Scenario};
use crate::engine::{self, ContainerKind, Workload, WorkloadKind, redact_host};

mod dependencies;
use crate::policy::{ContainerExemption, Policy, RuleId};
pub use dependencies::HangOnly;
use dependencies::{DependencyContext, probes_of};

/// Kubernetes defaults ([`engine::defaults`]) in the width used here.
const DEFAULT_PERIOD: i64 = engine::defaults::PERIOD_SECONDS as i64;
const DEFAULT_TIMEOUT: i64 = engine::defaults::TIMEOUT_SECONDS as i64;
const DEFAULT_FAILURE_THRESHOLD: i64 = engine::defaults::FAILURE_THRESHOLD as i64;
const DEFAULT_SUCCESS_THRESHOLD: i64 = engine::defaults::SUCCESS_THRESHOLD as i64;
const DEFAULT_GRACE: i64 = engine::defaults::TERMINATION_GRACE_PERIOD_SECONDS;
const BACKOFF_INITIAL: u32 = engine::defaults::RESTART_BACKOFF_INITIAL_SECONDS;
const BACKOFF_MAX: u32 = engine::defaults::RESTART_BACKOFF_MAX_SECONDS;
/// Probe phase offset between replicas, as in the article's model.
const STAGGER: u32 = 1;
/// The shortest horizon shown (the article's).
const MIN_HORIZON: u32 = 300;

/// `--dependency-check`: which probe checks the dependency that goes down.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum DependencyOverride {
    /// From the manifest: the probe the liveness-dependency analysis finds reaching outside the pod.
    #[default]
    Auto,
    /// The liveness probe (and readiness) check it.
    Liveness,
    /// Only the readiness probe checks it.
    Readiness,
    /// Neither does.
    None,
}

/// Output formats of `probegate explain`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// For people: the probe arithmetic and the simulation, per workload.
    #[default]
    Text,
    /// A JSON array with one object per workload: the same facts, numbers in seconds.
    Json,
}

/// The options of `probegate explain`.
#[derive(Clone, Debug)]
pub struct ExplainOptions {
    /// Policy file; `None` for the embedded default (what `fix` applies).
    pub policy: Option<PathBuf>,
    /// Namespace for objects without `metadata.namespace`.
    pub namespace: Option<String>,
    /// Replicas, instead of `spec.replicas`; at least 1 (`Some(0)` is taken as `None`: the command
    /// line refuses it).
    pub replicas: Option<u32>,
    /// Outage length in seconds.
    pub outage_seconds: u32,
    /// When the outage starts, in seconds.
    pub outage_start_seconds: u32,
    /// Warm-up, instead of the startup budget.
    pub warmup_seconds: Option<u32>,
    /// Which probe checks the dependency.
    pub dependency: DependencyOverride,
    /// Where to draw the chart.
    pub svg: Option<PathBuf>,
    /// Write the explanations as one JSON array instead of text (`-o json`).
    pub json: bool,
}

impl Default for ExplainOptions {
    fn default() -> Self {
        ExplainOptions {
            policy: None,
            namespace: None,
            replicas: None,
            outage_seconds: 90,
            outage_start_seconds: 60,
            warmup_seconds: None,
            dependency: DependencyOverride::Auto,
            svg: None,
            json: false,
        }
    }
}

/// A probe's timing with the defaults filled in.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Timing {
    /// What it runs, e.g. ``exec `pg_isready -h db` `` or `GET /healthz on port 8080`.
    pub handler: String,
    /// `initialDelaySeconds`.
    pub initial_delay: i64,
    /// `periodSeconds`.
    pub period: i64,
    /// `timeoutSeconds`.
    pub timeout: i64,
    /// `failureThreshold`.
    pub failure_threshold: i64,
    /// `successThreshold`.
    pub success_threshold: i64,
    /// The failure budget in seconds, `periodSeconds × failureThreshold` (see
    /// [`Timing::failure_budget`]; JSON `failureBudget`): the figure `check` and the text report give.
    #[serde(rename = "failureBudget")]
    pub failure_budget_seconds: i64,
    /// Fields the manifest leaves out, filled in with the Kubernetes default.
    pub defaulted: Vec<&'static str>,
}

impl Timing {
    fn of(probe: &Probe) -> Timing {
        let mut defaulted = Vec::new();
        // Absent or 0 is the default: the API server's `SetDefaults_Probe` replaces a 0 (as the
        // rules read it, so that `check` and `explain` give one number for one budget).
        let mut get = |v: Option<i32>, name: &'static str, default: i64| match v {
            Some(v) if v > 0 || default == 0 => i64::from(v).max(0),
            _ => {
                defaulted.push(name);
                default
            }
        };
        let initial_delay = get(probe.initial_delay_seconds, "initialDelaySeconds", 0);
        let period = get(probe.period_seconds, "periodSeconds", DEFAULT_PERIOD);
        let timeout = get(probe.timeout_seconds, "timeoutSeconds", DEFAULT_TIMEOUT);
        let failure_threshold = get(probe.failure_threshold, "failureThreshold", DEFAULT_FAILURE_THRESHOLD);
        let success_threshold = get(probe.success_threshold, "successThreshold", DEFAULT_SUCCESS_THRESHOLD);
        Timing {
            handler: handler(probe),
            initial_delay,
            period,
            timeout,
            failure_threshold,
            success_threshold,
            failure_budget_seconds: period * failure_threshold,
            defaulted,
        }
    }

    /// The failure budget, `periodSeconds × failureThreshold` (the Kubernetes docs' time a probe
    /// fails before it acts; what `check`'s `liveness-matches-readiness` compares), in seconds.
    pub fn failure_budget(&self) -> i64 {
        self.failure_budget_seconds
    }

    /// Longest time from a hang (or a failure) to the last failed check: `period × threshold + timeout`.
    pub fn detect_max(&self) -> i64 {
        self.period * self.failure_threshold + self.timeout
    }

    /// Shortest: `period × (threshold − 1) + timeout`.
    pub fn detect_min(&self) -> i64 {
        self.period * (self.failure_threshold - 1) + self.timeout
    }

    /// The startup budget: `initialDelaySeconds + periodSeconds × failureThreshold`.
    pub fn budget(&self) -> i64 {
        self.initial_delay + self.period * self.failure_threshold
    }

    fn settings(&self) -> String {
        let mark = |name: &str| if self.defaulted.contains(&name) { " (default)" } else { "" };
        format!(
            "periodSeconds {}{}, timeoutSeconds {}{}, failureThreshold {}{}, successThreshold {}{}, \
             initialDelaySeconds {}{}",
            self.period,
            mark("periodSeconds"),
            self.timeout,
            mark("timeoutSeconds"),
            self.failure_threshold,
            mark("failureThreshold"),
            self.success_threshold,
            mark("successThreshold"),
            self.initial_delay,
            mark("initialDelaySeconds"),
        )
    }
}

fn handler(probe: &Probe) -> String {
    let short =
        |s: String| if s.chars().count() > 60 { s.chars().take(57).collect::<String>() + "..." } else { s };
    let port = |p: &k8s_openapi::apimachinery::pkg::util::intstr::IntOrString| match p {
        k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(n) => n.to_string(),
        k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String(s) => s.clone(),
    };
    if let Some(h) = &probe.http_get {
        let host = h.host.as_deref().map(|h| format!(" of host {}", redact_host(h))).unwrap_or_default();
        let path = crate::engine::exec::redact_secrets(h.path.as_deref().unwrap_or("/"));
        return format!("GET {path} on port {}{host}", port(&h.port));
    }
    if let Some(t) = &probe.tcp_socket {
        let host = t.host.as_deref().map(|h| format!(" of host {}", redact_host(h))).unwrap_or_default();
        return format!("TCP connect to port {}{host}", port(&t.port));
    }
    if let Some(g) = &probe.grpc {
        return format!("gRPC health on port {}", g.port);
    }
    match probe.exec.as_ref().and_then(|e| e.command.as_ref()) {
        // The command as typed (a script's `;`, quoting and variables kept), with only its secrets
        // redacted, as the engine's messages redact them: a password flag, URL user info, a
        // variable given where a password goes (break-it pass).
        // A script's line breaks are shown as ` ⏎ ` (the output is a line per probe; the text
        // is cut at 60 characters anyway), its trailing one dropped. A script that feeds a literal
        // to a program's standard input (`echo TOKEN | vault login -`) shows its programs only.
        Some(argv) => {
            if crate::engine::exec::feeds_literal_to_stdin(argv)
                && let Some(summary) = crate::engine::exec::opaque_script_summary(argv)
            {
                return summary;
            }
            let shown = crate::engine::exec::redact_as_written(argv);
            let shown = match shown.trim_end_matches(['\n', '\r']).strip_suffix("\n'") {
                Some(body) => format!("{}'", body.trim_end_matches('\r')),
                None => shown,
            };
            let lines: Vec<&str> = shown.trim_end_matches(['\n', '\r']).lines().map(str::trim_end).collect();
            let lines: Vec<&str> =
                lines.iter().enumerate().map(|(i, l)| if i == 0 { *l } else { l.trim_start() }).collect();
            format!("exec `{}`", short(lines.join(" ⏎ ")))
        }
        None => "no handler".to_string(),
    }
}

/// The probes of one container.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerProbes {
    /// Its name.
    pub name: String,
    /// App container or native sidecar.
    pub kind: ContainerKind,
    /// Liveness, if any.
    pub liveness: Option<Timing>,
    /// Readiness, if any.
    pub readiness: Option<Timing>,
    /// Startup, if any.
    pub startup: Option<Timing>,
    /// The liveness probe reaches something outside the pod (the `liveness-dependency` analysis).
    pub liveness_reaches_dependency: bool,
    /// The readiness probe does (the same analysis applied to it).
    pub readiness_reaches_dependency: bool,
    /// The liveness probe asks the Pod's own aggregate health endpoint, which may check
    /// dependencies (a `liveness-dependency-path` finding; its code is not visible, so it is not
    /// simulated as checking one unless `--dependency-check liveness` says so).
    pub liveness_aggregate_path: bool,
    /// When the liveness probe reaches more than one dependency whose outage alone fails it
    /// (`pg_isready -h db && redis-cli -h cache ping`): each, as `HOST (CATEGORY, via PROGRAM)`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub liveness_dependencies: Vec<String>,
    /// The liveness probe reaches a dependency whose outage cannot fail it by exit status, only
    /// by a client hanging past `timeoutSeconds` (`liveness-dependency` warns).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub liveness_hang_only: Option<HangOnly>,
    /// The same for the readiness probe (`readiness-shared-dependency` warns).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub readiness_hang_only: Option<HangOnly>,
    /// `liveness-dependency`'s message when it warns without certainty (a host known only at run
    /// time, a status known only at run time, a command the kubelet runs otherwise than written).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub liveness_uncertain: Option<String>,
    /// `readiness-shared-dependency`'s message when it warns without certainty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub readiness_uncertain: Option<String>,
    /// Every finding `check` gives for this container, in its order, read from the same
    /// evaluation (never analysed again).
    pub findings: Vec<ContainerFinding>,
}

/// One finding of `check` on a container, as `explain` lists it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ContainerFinding {
    /// What it amounts to (`info`, `fix`, `warn`, `deny`), as `check` reports it.
    pub level: Level,
    /// The rule id.
    pub rule: &'static str,
    /// The message, as `check` words it (without the container name and rule id).
    pub message: String,
    /// Why the level differs from the rule's action, if it does (`check` shows it in brackets).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One run of the simulation.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Run {
    /// Its inputs.
    pub scenario: Scenario,
    /// What happened.
    pub outcome: Outcome,
}

/// The simulation of one workload, as written and as fixed.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Simulation {
    /// The container whose probes were simulated.
    pub container: String,
    /// Where the replica count came from.
    pub replicas_from: String,
    /// Where the warm-up came from.
    pub warmup_from: String,
    /// The probes as written.
    pub written: Run,
    /// As `probegate fix` leaves them, the dependency checked by readiness only.
    pub fixed: Run,
    /// As fixed, but no probe checks the dependency: replicas stay in the endpoints and serve
    /// degraded while it is down.
    pub degraded: Run,
    /// Seconds shown (the runs go on until both are back at full capacity).
    pub horizon: u32,
    /// What the "as fixed" configuration assumes beyond `fix`'s patches, if anything.
    pub fixed_assumes: Vec<String>,
    /// What the "as written" run assumes beyond the manifest, if anything: when the liveness probe
    /// checks the dependency and no readiness probe is seen reaching it, that readiness fails with
    /// it too (the article's design A).
    pub written_assumes: Vec<String>,
}

impl Simulation {
    /// Whether a probe checks the dependency in either configuration: otherwise its outage changes
    /// nothing and there is nothing to show.
    pub fn simulates_outage(&self) -> bool {
        self.written.scenario.dependency_check != DependencyCheck::None
            || self.fixed.scenario.dependency_check != DependencyCheck::None
    }
}

/// Why `--svg` draws no chart for a workload, if it draws none: the same cases where the text
/// shows no serving timeline.
pub fn no_chart_reason(e: &Explanation) -> Option<&'static str> {
    match &e.simulation {
        None => Some("no container has a liveness or readiness probe"),
        Some(s) if !s.simulates_outage() => Some(
            if e.containers.iter().any(|c| c.liveness_hang_only.is_some() || c.readiness_hang_only.is_some())
            {
                "no probe's exit status follows the dependency it reaches, so only a hang past timeoutSeconds \
                 fails one (--dependency-check liveness or readiness draws that)"
            } else if e
                .containers
                .iter()
                .any(|c| c.liveness_uncertain.is_some() || c.readiness_uncertain.is_some())
            {
                "no probe is known to check a dependency (--dependency-check liveness or readiness draws one that does)"
            } else {
                "no probe checks a dependency, so an outage changes nothing (--dependency-check liveness or readiness draws one)"
            },
        ),
        Some(_) if e.in_job => Some("a Job's Pods get no Service traffic, so nothing serves requests"),
        Some(_) if !e.serves => Some("no container declares ports, so nothing serves requests"),
        Some(_) => None,
    }
}

/// A Pod's grace period (`terminationGracePeriodSeconds`): how long the kubelet waits, preStop hook
/// included, before it kills the containers (Kubernetes docs, "Termination of Pods").
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Grace {
    /// The grace period, in seconds.
    pub seconds: i64,
    /// True when the manifest leaves it out and it is the Kubernetes default (30 s).
    pub defaulted: bool,
}

/// The startup probe `fix` adds to one container.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct FixedStartup {
    /// The container's name.
    pub container: String,
    /// The added probe's timing (its fields appear beside `container` in JSON).
    #[serde(flatten)]
    pub timing: Timing,
}

/// What `explain` says about one workload object.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Explanation {
    /// File and line.
    pub location: String,
    /// `Kind namespace/name`.
    pub object: String,
    /// `terminationGracePeriodSeconds`: JSON `{"seconds": 30, "defaulted": true}`.
    pub grace: Grace,
    /// Per container.
    pub containers: Vec<ContainerProbes>,
    /// The startup probe each container gets from `fix`, when fix adds one: JSON
    /// `{"container": "web", "handler": ..., "periodSeconds"-like fields of [`Timing`]}`.
    pub fixed_startup: Vec<FixedStartup>,
    /// The outage simulation, when a container has probes.
    pub simulation: Option<Simulation>,
    /// Whether a container in scope declares ports (serves requests).
    pub serves: bool,
    /// Whether the Pods run a Job's work ([`Workload::runs_a_job`]): no Service traffic, so no
    /// readiness is modelled (as the rules ask none). Absent from JSON when false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub in_job: bool,
}

/// Containers in scope, as the engine sees them.
fn containers(w: &Workload, exempt: &[ContainerExemption]) -> Vec<(ContainerKind, Container)> {
    let apps = w.spec.containers.iter().map(|c| (ContainerKind::App, c.clone()));
    let sidecars = w
        .spec
        .init_containers
        .iter()
        .flatten()
        .filter(|c| c.restart_policy.as_deref() == Some("Always"))
        .map(|c| (ContainerKind::Sidecar, c.clone()));
    apps.chain(sidecars)
        .filter(|(_, c)| !exempt.iter().any(|e| e.covers(&c.name, c.image.as_deref())))
        .collect()
}

/// The replicas simulated and where the number comes from. Zero is never simulated (there would be
/// nothing to restart or serve): the command line refuses `--replicas 0`, and a controller scaled
/// to zero (`spec.replicas: 0`) is simulated with one replica, saying so (break-it pass s22).
fn replicas(w: &Workload, object: &Value, opts: &ExplainOptions) -> (u32, String) {
    if let Some(n) = opts.replicas.filter(|n| *n > 0) {
        return (n, "--replicas".into());
    }
    match w.kind {
        WorkloadKind::Deployment
        | WorkloadKind::StatefulSet
        | WorkloadKind::ReplicaSet
        | WorkloadKind::ReplicationController => {
            match object.pointer("/spec/replicas").and_then(Value::as_u64) {
                Some(0) => (1, "spec.replicas 0, scaled to zero: 1 simulated; set --replicas".into()),
                Some(n) => (u32::try_from(n).unwrap_or(u32::MAX), "spec.replicas".into()),
                None => (1, "spec.replicas unset: 1".into()),
            }
        }
        k => (1, format!("a {}: 1; set --replicas", k.as_str())),
    }
}

/// Where a 0 s warm-up comes from when nothing gives one.
const WARMUP_DEFAULT: &str = "no startup probe or liveness delay: 0";

fn warmup(c: &ContainerProbes, opts: &ExplainOptions) -> (u32, String) {
    let clamp = |v: i64| u32::try_from(v.max(0)).unwrap_or(u32::MAX);
    if let Some(w) = opts.warmup_seconds {
        return (w, "--warmup".into());
    }
    if let Some(s) = &c.startup {
        return (clamp(s.budget()), "the startup probe's budget as written".into());
    }
    if let Some(l) = &c.liveness
        && l.initial_delay > 0
    {
        return (clamp(l.initial_delay), "the liveness initialDelaySeconds".into());
    }
    (0, WARMUP_DEFAULT.into())
}

fn check_of(c: &ContainerProbes, o: DependencyOverride) -> DependencyCheck {
    match o {
        DependencyOverride::Liveness => DependencyCheck::Liveness,
        DependencyOverride::Readiness => DependencyCheck::Readiness,
        DependencyOverride::None => DependencyCheck::None,
        DependencyOverride::Auto if c.liveness_reaches_dependency => DependencyCheck::Liveness,
        DependencyOverride::Auto if c.readiness_reaches_dependency => DependencyCheck::Readiness,
        DependencyOverride::Auto => DependencyCheck::None,
    }
}

fn to_u32(v: i64) -> u32 {
    u32::try_from(v.max(1)).unwrap_or(u32::MAX)
}

/// The simulation of a workload (see the module documentation for the mapping).
fn simulation(
    w: &Workload,
    object: &Value,
    probes: &[ContainerProbes],
    opts: &ExplainOptions,
) -> Option<Simulation> {
    let c = probes
        .iter()
        .find(|c| c.liveness_reaches_dependency)
        .or_else(|| probes.iter().find(|c| c.readiness_reaches_dependency))
        .or_else(|| probes.iter().find(|c| c.liveness.is_some()))
        .or_else(|| probes.iter().find(|c| c.readiness.is_some()))?;
    let (replicas, replicas_from) = replicas(w, object, opts);
    let (warmup, warmup_from) = warmup(c, opts);
    let written_check = check_of(c, opts.dependency);
    let (lp, lt) = c
        .liveness
        .as_ref()
        .map_or((DEFAULT_PERIOD, DEFAULT_FAILURE_THRESHOLD), |l| (l.period, l.failure_threshold));
    let (rp, rt) = c.readiness.as_ref().map_or((1, 1), |r| (r.period, r.failure_threshold));
    let base = Scenario {
        replicas,
        stagger_seconds: STAGGER,
        warmup_seconds: warmup,
        liveness_period_seconds: to_u32(lp),
        liveness_failure_threshold: to_u32(lt),
        readiness_period_seconds: to_u32(rp),
        readiness_failure_threshold: to_u32(rt),
        outage_start_seconds: opts.outage_start_seconds,
        outage_seconds: opts.outage_seconds,
        backoff_initial_seconds: BACKOFF_INITIAL,
        backoff_max_seconds: BACKOFF_MAX,
        horizon_seconds: 0,
        dependency_check: written_check,
    };
    // A Job's Pods get no Service traffic: readiness gates nothing there, and the liveness-dependency
    // denial asks to drop the check from liveness, not to move it to readiness (s18 fresh-user pass:
    // a CronJob was simulated with a readiness probe `fix` would add).
    let job = w.runs_a_job();
    let mut written_assumes = Vec::new();
    if written_check == DependencyCheck::Liveness && !c.readiness_reaches_dependency && !job {
        written_assumes.push(if c.readiness.is_some() {
            "readiness fails with the dependency too, as liveness does (its check does not reach it as \
             written: --dependency-check says which probe checks it)"
                .to_string()
        } else {
            "a readiness probe that fails with the dependency (the container has none: it would stay Ready \
             and get requests it cannot serve)"
                .to_string()
        });
    }
    let mut fixed_assumes = Vec::new();
    let mut fixed = base.clone();
    if job && written_check == DependencyCheck::Liveness {
        fixed.dependency_check = DependencyCheck::None;
        fixed_assumes.push(
            "the check dropped from liveness, as the liveness-dependency rule asks of a Job's Pods (no \
             readiness probe: they get no Service traffic)"
                .to_string(),
        );
    } else if written_check != DependencyCheck::None {
        fixed.dependency_check = DependencyCheck::Readiness;
        if written_check == DependencyCheck::Liveness {
            fixed_assumes.push(
                "liveness checks the process only and readiness checks the dependency, as the \
                 liveness-dependency rule asks (fix cannot rewrite a probe's command)"
                    .to_string(),
            );
        }
        if c.readiness.is_none() {
            fixed.readiness_period_seconds = to_u32(lp);
            fixed.readiness_failure_threshold = to_u32(lt);
            fixed_assumes.push(format!(
                "a readiness probe with the liveness probe's timing (periodSeconds {lp}, failureThreshold {lt})"
            ));
        }
    }
    // Long enough for the slowest recovery: the last restart waits at most the back-off cap, then
    // warms up and passes a readiness check.
    let outage_end = u64::from(opts.outage_start_seconds) + u64::from(opts.outage_seconds);
    let bound = outage_end
        + u64::from(BACKOFF_MAX)
        + u64::from(warmup)
        + u64::from(to_u32(lp)) * u64::from(to_u32(lt))
        + u64::from(to_u32(rp.max(lp))) * u64::from(to_u32(rt.max(1)))
        + 60;
    let horizon = u32::try_from(bound).unwrap_or(u32::MAX).min(simulate::MAX_HORIZON_SECONDS);
    let run = |mut s: Scenario| {
        s.horizon_seconds = horizon;
        let outcome = simulate::simulate(&s);
        Run { scenario: s, outcome }
    };
    let degraded = Scenario { dependency_check: DependencyCheck::None, ..fixed.clone() };
    let (written, fixed, degraded) = (run(base), run(fixed), run(degraded));
    let back = |r: &Run| r.outcome.full_capacity_after_recovery_seconds.map(|s| u64::from(s) + outage_end);
    let shown = match (back(&written), back(&fixed)) {
        (Some(a), Some(b)) => u64::from(MIN_HORIZON).max((a.max(b) + 30).div_ceil(15) * 15),
        _ => u64::from(horizon),
    };
    let shown = u32::try_from(shown).unwrap_or(horizon).min(horizon);
    Some(Simulation {
        container: c.name.clone(),
        replicas_from,
        warmup_from,
        written,
        fixed,
        degraded,
        horizon: shown,
        fixed_assumes,
        written_assumes,
    })
}

/// The startup probes `fix` adds, by container (read back from the fixed object).
fn fixed_startup(checked: &Checked, object: &Value) -> Vec<FixedStartup> {
    let mut value = object.clone();
    let ops: Vec<_> = checked
        .findings
        .iter()
        .filter(|r| r.level == Level::Fix && r.finding.rule == RuleId::StartupProbe)
        .flat_map(|r| r.finding.patch.iter().cloned())
        .collect();
    if ops.is_empty() || json_patch::patch(&mut value, &ops).is_err() {
        return Vec::new();
    }
    let Ok(fixed) = Workload::from_value(checked.kind, &value) else { return Vec::new() };
    let before: Vec<&str> = checked
        .findings
        .iter()
        .filter(|r| r.finding.rule == RuleId::StartupProbe)
        .map(|r| r.finding.container.as_str())
        .collect();
    fixed
        .spec
        .containers
        .iter()
        .chain(fixed.spec.init_containers.iter().flatten())
        .filter(|c| before.contains(&c.name.as_str()))
        .filter_map(|c| {
            Some(FixedStartup { container: c.name.clone(), timing: Timing::of(c.startup_probe.as_ref()?) })
        })
        .collect()
}

/// Explains one checked object.
pub fn explain_object(
    file: &FileAnalysis,
    checked: &Checked,
    policy: &Policy,
    opts: &ExplainOptions,
) -> Explanation {
    let w = &checked.workload;
    let object = file.documents[checked.document]
        .node
        .as_ref()
        .ok()
        .and_then(Option::as_ref)
        .and_then(
            |n| if checked.pointer.is_empty() { Some(n) } else { n.at(checked.pointer.split('/').skip(1)) },
        )
        .map(|n| n.to_value())
        .unwrap_or(Value::Null);
    let ctx = DependencyContext {
        rules: &checked.evaluation.effective.rules,
        exempt: &policy.exemptions.containers,
        configmaps: &file.configmaps,
        namespace: &checked.namespace,
    };
    let mut probes = probes_of(w, &ctx);
    for c in &mut probes {
        c.liveness_aggregate_path = checked
            .findings
            .iter()
            .any(|r| r.finding.rule == RuleId::LivenessDependencyPath && r.finding.container == c.name);
        c.findings = checked
            .findings
            .iter()
            .filter(|r| r.finding.container == c.name)
            .map(|r| ContainerFinding {
                level: r.level,
                rule: r.finding.rule.as_str(),
                message: engine::display_safe(&r.finding.message).into_owned(),
                note: r.note.as_deref().map(|n| engine::display_safe(n).into_owned()),
            })
            .collect();
    }
    let grace = match w.spec.termination_grace_period_seconds {
        Some(seconds) => Grace { seconds, defaulted: false },
        None => Grace { seconds: DEFAULT_GRACE, defaulted: true },
    };
    Explanation {
        location: format!("{}:{}", file.input.name(), checked.line),
        object: format!("{} {}/{}", checked.kind.as_str(), checked.namespace, checked.name),
        grace,
        simulation: simulation(w, &object, &probes, opts),
        fixed_startup: fixed_startup(checked, &object),
        containers: probes,
        serves: containers(w, &[]).iter().any(|(_, c)| c.ports.as_ref().is_some_and(|p| !p.is_empty())),
        in_job: w.runs_a_job(),
    }
}

/// Which probes check the dependency in a run, as the text and the chart say it: with
/// `readiness_too` (the simulated container's readiness probe reaches it as well) both, else the
/// liveness probe alone, what the manifest shows (the "as written assumes" line says what the run
/// assumes of readiness; fresh-user pass s16: a Pod with no readiness probe was said to check the
/// dependency "by liveness (and readiness)").
fn check_name(c: DependencyCheck, readiness_too: bool) -> &'static str {
    match c {
        DependencyCheck::Liveness if readiness_too => "liveness and readiness",
        DependencyCheck::Liveness => "liveness",
        DependencyCheck::Readiness => "readiness only",
        DependencyCheck::None => "no probe",
    }
}

/// Whether the simulated container's readiness probe reaches the dependency too.
fn readiness_too(e: &Explanation, sim: &Simulation) -> bool {
    e.containers.iter().any(|c| c.name == sim.container && c.readiness_reaches_dependency)
}

fn fmt_secs(s: Option<u32>) -> String {
    s.map_or_else(|| "never within the run".to_string(), |s| format!("{s} s"))
}

/// Writes an explanation as text.
///
/// # Errors
/// When `out` fails.
pub fn write_explanation(e: &Explanation, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "{}  {}", e.object, e.location)?;
    let Grace { seconds: grace, defaulted: grace_default } = e.grace;
    let grace_note = if grace_default { " (default)" } else { "" };
    for c in &e.containers {
        let sidecar = if c.kind == ContainerKind::Sidecar { " (native sidecar)" } else { "" };
        writeln!(out, "  container {}{sidecar}", c.name)?;
        match &c.startup {
            Some(s) => {
                writeln!(out, "    startup:   {}; {}", s.handler, s.settings())?;
                writeln!(
                    out,
                    "               boot budget {} s = initialDelaySeconds {} + periodSeconds {} x failureThreshold {}; \
                     liveness and readiness start after it succeeds",
                    s.budget(),
                    s.initial_delay,
                    s.period,
                    s.failure_threshold
                )?;
            }
            None => writeln!(out, "    startup:   none")?,
        }
        match &c.liveness {
            Some(l) => {
                let dep = if c.liveness_reaches_dependency {
                    "; reaches outside the pod (liveness-dependency)".to_string()
                } else if let Some(h) = &c.liveness_hang_only {
                    format!(
                        "; reaches {} (via {}), but its exit status cannot fail the probe (liveness-dependency)",
                        h.target, h.program
                    )
                } else if c.liveness_aggregate_path {
                    "; the Pod's aggregate health endpoint, which may check dependencies (liveness-dependency-path)"
                        .to_string()
                } else {
                    String::new()
                };
                writeln!(out, "    liveness:  {}; {}{dep}", l.handler, l.settings())?;
                if let Some(h) = &c.liveness_hang_only {
                    writeln!(
                        out,
                        "               an outage of {} that makes {} fail restarts nothing, because {}; one that \
                         makes it hang past timeoutSeconds {} fails the check, and failureThreshold {} such checks \
                         in a row restart the container",
                        h.target, h.program, h.how, l.timeout, l.failure_threshold
                    )?;
                }
                if let Some(m) = &c.liveness_uncertain {
                    writeln!(out, "               liveness-dependency warns: {m}")?;
                }
                if !c.liveness_dependencies.is_empty() {
                    writeln!(
                        out,
                        "               reaches {} dependencies, each of which fails it by itself when down: {}",
                        c.liveness_dependencies.len(),
                        c.liveness_dependencies.join("; ")
                    )?;
                }
                writeln!(
                    out,
                    "               failure budget {} s = periodSeconds {} x failureThreshold {}; a hang is a restart \
                     after at most {} s = the budget + timeoutSeconds {} (at least {} s), then up to \
                     terminationGracePeriodSeconds {grace} s{grace_note} to stop",
                    l.failure_budget(),
                    l.period,
                    l.failure_threshold,
                    l.detect_max(),
                    l.timeout,
                    l.detect_min()
                )?;
                if c.startup.is_none() {
                    writeln!(
                        out,
                        "               without a startup probe, a boot longer than {} s = initialDelaySeconds {} + \
                         periodSeconds {} x failureThreshold {} is killed",
                        l.budget(),
                        l.initial_delay,
                        l.period,
                        l.failure_threshold
                    )?;
                }
            }
            None => {
                writeln!(out, "    liveness:  none (the kubelet restarts the container only when it exits)")?
            }
        }
        match &c.readiness {
            Some(r) => {
                let dep = match &c.readiness_hang_only {
                    _ if c.readiness_reaches_dependency => "; reaches outside the pod".to_string(),
                    Some(h) => format!(
                        "; reaches {} (via {}), but its exit status cannot fail the probe \
                         (readiness-shared-dependency)",
                        h.target, h.program
                    ),
                    None => String::new(),
                };
                writeln!(out, "    readiness: {}; {}{dep}", r.handler, r.settings())?;
                if let Some(h) = &c.readiness_hang_only {
                    writeln!(
                        out,
                        "               an outage of {} that makes {} fail takes no pod out of the endpoints, \
                         because {}; one that makes it hang past timeoutSeconds {} fails the check",
                        h.target, h.program, h.how, r.timeout
                    )?;
                }
                if let Some(m) = &c.readiness_uncertain {
                    writeln!(out, "               readiness-shared-dependency warns: {m}")?;
                }
                writeln!(
                    out,
                    "               failure budget {} s = periodSeconds {} x failureThreshold {}; a failure takes the \
                     pod out of the endpoints after at most {} s = the budget + timeoutSeconds {}; back in after at \
                     most {} s = successThreshold {} x periodSeconds {}",
                    r.failure_budget(),
                    r.period,
                    r.failure_threshold,
                    r.detect_max(),
                    r.timeout,
                    r.success_threshold * r.period,
                    r.success_threshold,
                    r.period
                )?;
            }
            None if e.in_job => {
                writeln!(out, "    readiness: none (a Job's Pods get no Service traffic: none needed)")?
            }
            None => writeln!(out, "    readiness: none (Ready as soon as the container runs)")?,
        }
        if let Some(s) = e.fixed_startup.iter().find(|f| f.container == c.name).map(|f| &f.timing) {
            writeln!(
                out,
                "    after fix: a startup probe ({}) with a boot budget of {} s = periodSeconds {} x failureThreshold {}",
                s.handler,
                s.budget(),
                s.period,
                s.failure_threshold
            )?;
        }
        // What `check` reports for this container, all of it (fresh-user pass: a
        // probe-client-deadline warning was missing here).
        if c.findings.is_empty() {
            writeln!(out, "    findings:  none")?;
        }
        for (i, f) in c.findings.iter().enumerate() {
            let label = if i == 0 { "findings:" } else { "" };
            let note = f.note.as_ref().map(|n| format!(" [{n}]")).unwrap_or_default();
            writeln!(out, "    {label:<10} {:<4}  {} ({}){note}", f.level.as_str(), f.message, f.rule)?;
        }
    }
    let Some(sim) = &e.simulation else {
        writeln!(out, "  outage simulation: no container has a liveness or readiness probe")?;
        return writeln!(out);
    };
    if !sim.simulates_outage() {
        // What `check` says of these probes, said again: a hang still fails one, or whether one
        // checks a dependency is not certain.
        let hang = e.containers.iter().find_map(|c| {
            let live = (c.liveness_hang_only.as_ref()?, c.liveness.as_ref()?.timeout);
            Some((c, "liveness", live, "restarts nothing", "restarts the container"))
        });
        let hang = hang.or_else(|| {
            e.containers.iter().find_map(|c| {
                let ready = (c.readiness_hang_only.as_ref()?, c.readiness.as_ref()?.timeout);
                Some((
                    c,
                    "readiness",
                    ready,
                    "takes no pod out of the endpoints",
                    "takes the pod out of them",
                ))
            })
        });
        if let Some((c, probe, (h, timeout), fast, slow)) = hang {
            writeln!(
                out,
                "  outage simulation: none: the {probe} probe of container {} reaches {} (via {}), but its exit \
                 status cannot fail the probe, so an outage that makes {} fail {fast}; one that makes it hang \
                 past timeoutSeconds {timeout} fails the probe and {slow} (--dependency-check {probe} simulates that)",
                c.name, h.target, h.program, h.program
            )?;
            return writeln!(out);
        }
        if e.containers.iter().any(|c| c.liveness_uncertain.is_some() || c.readiness_uncertain.is_some()) {
            writeln!(
                out,
                "  outage simulation: none: no probe is known to check a dependency (see the warning above; \
                 --dependency-check liveness or readiness simulates a probe that does)"
            )?;
            return writeln!(out);
        }
        match e.containers.iter().find(|c| c.liveness_aggregate_path) {
            Some(c) => writeln!(
                out,
                "  outage simulation: none: no probe is known to reach a dependency, but the liveness probe of \
                 container {} asks the Pod's aggregate health endpoint (liveness-dependency-path), which fails \
                 when a dependency it checks is down: --dependency-check liveness simulates that outage",
                c.name
            )?,
            None => writeln!(
                out,
                "  outage simulation: none: no probe checks a dependency, so its outage restarts nothing and \
                 takes no pod out of the endpoints (--dependency-check liveness or readiness simulates a probe that does)"
            )?,
        }
        return writeln!(out);
    }
    let s = &sim.written.scenario;
    writeln!(
        out,
        "  outage simulation (container {}): {} {} ({}), warm-up {} s ({}), the dependency down for {} s from t={} s, \
         probes 1 s apart across replicas, restart back-off 10 s doubling to 300 s",
        sim.container,
        sim.written.outcome.replicas,
        if sim.written.outcome.replicas == 1 { "replica" } else { "replicas" },
        sim.replicas_from,
        s.warmup_seconds,
        sim.warmup_from,
        s.outage_seconds,
        s.outage_start_seconds
    )?;
    let several = e.containers.iter().find(|c| c.name == sim.container).map(|c| &c.liveness_dependencies);
    if let Some(deps) = several.filter(|d| !d.is_empty())
        && sim.written.scenario.dependency_check == DependencyCheck::Liveness
    {
        let hosts: Vec<&str> = deps.iter().map(|d| d.split(" (").next().unwrap_or(d)).collect();
        writeln!(
            out,
            "    the dependency is any of {}: each one down fails the liveness probe by itself, so these runs \
             hold for an outage of any one of them, or of all at once",
            hosts.join(", ")
        )?;
    }
    for a in &sim.written_assumes {
        writeln!(out, "    as written assumes {a}")?;
    }
    for a in &sim.fixed_assumes {
        writeln!(out, "    as fixed assumes {a}")?;
    }
    let rows = [("as written", &sim.written), ("as fixed", &sim.fixed)];
    for (name, r) in rows {
        let o = &r.outcome;
        writeln!(
            out,
            "    {:<11} dependency checked by {}: {} {}, full capacity {} after the dependency returns, {} \
             pod-seconds lost after it returns",
            format!("{name}:"),
            check_name(r.scenario.dependency_check, readiness_too(e, sim)),
            o.restarts,
            if o.restarts == 1 { "restart" } else { "restarts" },
            fmt_secs(o.full_capacity_after_recovery_seconds),
            o.lost_pod_seconds_after_recovery
        )?;
    }
    let d = &sim.degraded.outcome;
    let len = d.serving.len();
    let from = (s.outage_start_seconds as usize).min(len);
    let to = (s.outage_start_seconds.saturating_add(s.outage_seconds) as usize).min(len);
    let fewest = d.serving[from..to].iter().min().copied().unwrap_or(d.replicas);
    // (A Job's Pods are in no endpoints: "as fixed" is already the run where no probe checks it.)
    (!e.in_job).then(|| writeln!(
        out,
        "    serve degraded: no probe checks the dependency: {} {}, at least {fewest} of {} replicas stay in the \
         endpoints and answer without it during the outage, full capacity {} after it returns",
        d.restarts,
        if d.restarts == 1 { "restart" } else { "restarts" },
        d.replicas,
        fmt_secs(d.full_capacity_after_recovery_seconds)
    )).transpose()?;
    // With no boot time a restart costs nothing, and "as written" looks no worse than "as fixed":
    // say that this is the assumption, not the finding. Only where "as written" restarts something:
    // without restarts the warm-up changes nothing (a readiness-only Pod, fresh-user pass).
    if sim.warmup_from == WARMUP_DEFAULT
        && sim.written.outcome.restarts > 0
        && sim.written.outcome.lost_pod_seconds_after_recovery
            <= sim.fixed.outcome.lost_pod_seconds_after_recovery
    {
        writeln!(
            out,
            "    note: the warm-up is the 0 s default (the manifest gives no start time), so these restarts \
             cost nothing here; give the start time with --warmup SECONDS"
        )?;
    }
    if e.in_job {
        writeln!(
            out,
            "    (a Job's Pods get no Service traffic: nothing serves requests, so no serving timeline)"
        )?;
        return writeln!(out);
    }
    if !e.serves {
        writeln!(out, "    (no container declares ports: nothing serves requests, so no serving timeline)")?;
        return writeln!(out);
    }
    let start = s.outage_start_seconds.saturating_sub(15).min(sim.horizon);
    writeln!(out, "    replicas serving requests, every 15 s from t={start} s to t={} s:", sim.horizon)?;
    let degraded = ("serve degraded", &sim.degraded);
    for (name, r) in rows.into_iter().chain([degraded]) {
        // Serving degraded means answering without the dependency: count the replicas in the endpoints.
        let series = if name == degraded.0 { &r.outcome.serving } else { &r.outcome.answering };
        let samples: Vec<String> = (start..sim.horizon)
            .step_by(15)
            .filter_map(|t| series.get(t as usize).map(u32::to_string))
            .collect();
        writeln!(out, "      {:<14} {}", name, samples.join(" "))?;
    }
    writeln!(out)
}

/// Draws replicas serving requests over time for both configurations, the outage shaded.
///
/// # Errors
/// A message when the chart cannot be drawn or written.
pub fn draw_svg(e: &Explanation, path: &Path) -> Result<(), String> {
    use plotters::prelude::*;
    let sim = e.simulation.as_ref().ok_or("nothing simulated")?;
    let horizon = sim.horizon;
    let replicas = sim.written.outcome.replicas.max(1);
    let s = &sim.written.scenario;
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let root = SVGBackend::new(path, (900, 420)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let caption = format!(
        "{}: replicas serving requests, dependency down {}-{} s",
        e.object,
        s.outage_start_seconds,
        s.outage_start_seconds.saturating_add(s.outage_seconds)
    );
    // Headroom above full capacity for the legend.
    let y_max = f64::from(replicas) * 1.45 + 0.5;
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(48)
        .build_cartesian_2d(0f64..f64::from(horizon), 0f64..y_max)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("seconds")
        .y_desc("replicas serving requests")
        .x_label_formatter(&|v| format!("{v:.0}"))
        // Whole replicas only: a tick between two integers gets no label (otherwise 0.5 and 1.5
        // would both read as "1" or "2").
        .y_labels((y_max.floor() as usize + 1).clamp(2, 12))
        .y_label_formatter(&|v| if (v - v.round()).abs() < 1e-6 { format!("{v:.0}") } else { String::new() })
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(|e| err(&e))?;
    let x0 = f64::from(s.outage_start_seconds.min(horizon));
    let x1 = f64::from(s.outage_start_seconds.saturating_add(s.outage_seconds).min(horizon));
    chart
        .draw_series(std::iter::once(Rectangle::new(
            [(x0, 0.0), (x1, y_max)],
            RGBColor(230, 230, 230).filled(),
        )))
        .map_err(|e| err(&e))?
        .label("dependency down")
        .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 16, y + 5)], RGBColor(230, 230, 230).filled()));
    let series = |r: &Run| -> Vec<(f64, f64)> {
        r.outcome
            .answering
            .iter()
            .take(horizon as usize)
            .enumerate()
            .map(|(t, &n)| (t as f64, f64::from(n)))
            .collect()
    };
    let written_label = format!(
        "as written ({}; {} restarts)",
        check_name(sim.written.scenario.dependency_check, readiness_too(e, sim)),
        sim.written.outcome.restarts
    );
    let fixed_label = format!(
        "as fixed ({}; {} restarts)",
        check_name(sim.fixed.scenario.dependency_check, readiness_too(e, sim)),
        sim.fixed.outcome.restarts
    );
    // As written: wide and light, under the fixed line, so both show where they coincide.
    let red = RGBColor(225, 110, 110);
    let blue = RGBColor(30, 90, 200);
    chart
        .draw_series(LineSeries::new(series(&sim.written), red.stroke_width(5)))
        .map_err(|e| err(&e))?
        .label(written_label)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], red.stroke_width(5)));
    chart
        .draw_series(LineSeries::new(series(&sim.fixed), blue.stroke_width(2)))
        .map_err(|e| err(&e))?
        .label(fixed_label)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], blue.stroke_width(2)));
    // Serve degraded: replicas in the endpoints, answering without the dependency.
    let green = RGBColor(40, 150, 70);
    let degraded: Vec<(f64, f64)> = sim
        .degraded
        .outcome
        .serving
        .iter()
        .take(horizon as usize)
        .enumerate()
        .map(|(t, &n)| (t as f64, f64::from(n)))
        .collect();
    chart
        .draw_series(LineSeries::new(degraded, green.stroke_width(2)))
        .map_err(|e| err(&e))?
        .label(format!("serve degraded (no probe; {} restarts)", sim.degraded.outcome.restarts))
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], green.stroke_width(2)));
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))
}

/// The path of the `n`th chart (0-based): `FILE` for the first, `STEM-N.EXT` after it.
fn svg_path(base: &Path, n: usize) -> PathBuf {
    if n == 0 {
        return base.to_path_buf();
    }
    let stem = base.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let ext = base.extension().map(|e| e.to_string_lossy().into_owned()).unwrap_or_else(|| "svg".into());
    base.with_file_name(format!("{stem}-{}.{ext}", n + 1))
}

/// Explains every workload object of the inputs.
pub fn explain_all(
    policy: &Policy,
    paths: &[PathBuf],
    stdin: &mut dyn Read,
    opts: &ExplainOptions,
) -> (Vec<Explanation>, Vec<input::InputError>) {
    let (explanations, errors, _) = explain_all_noting(policy, paths, stdin, opts);
    (explanations, errors)
}

/// [`explain_all`], also giving the files not read (kustomize patches).
pub fn explain_all_noting(
    policy: &Policy,
    paths: &[PathBuf],
    stdin: &mut dyn Read,
    opts: &ExplainOptions,
) -> (Vec<Explanation>, Vec<input::InputError>, Vec<input::SkippedFile>) {
    let namespace = opts.namespace.as_deref().unwrap_or(super::check::DEFAULT_NAMESPACE);
    let (files, mut errors, skipped) =
        input::analyze_all(policy, paths, stdin, namespace, input::Keep::Sources);
    let mut out = Vec::new();
    for f in &files {
        errors.extend(f.errors.iter().cloned());
        for o in &f.objects {
            out.push(explain_object(f, o, policy, opts));
        }
    }
    (out, errors, skipped)
}

/// Runs `explain`; returns the exit code (0, or 2 for unreadable input, an invalid policy, a
/// chart that cannot be written, or `--svg` where no workload has a chart to draw).
pub fn run(
    opts: &ExplainOptions,
    paths: &[PathBuf],
    stdin: &mut dyn Read,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    run_skipping(opts, &[], paths, stdin, out, err)
}

/// [`run`], with `skip` rules turned off everywhere in the policy (`--skip RULE`).
pub fn run_skipping(
    opts: &ExplainOptions,
    skip: &[crate::policy::RuleId],
    paths: &[PathBuf],
    stdin: &mut dyn Read,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let (policy, _, _) = match super::load_policy_skipping(opts.policy.as_deref(), skip) {
        Ok(p) => p,
        Err(e) => {
            let _ = writeln!(err, "probegate: invalid policy: {e}");
            return EXIT_BAD_INPUT;
        }
    };
    let (explanations, errors, skipped) = explain_all_noting(&policy, paths, stdin, opts);
    for note in input::skipped_notes(&skipped) {
        let _ = writeln!(err, "probegate: note: {note}");
    }
    let mut code = EXIT_OK;
    for e in &errors {
        let _ = writeln!(err, "probegate: {e}");
        code = EXIT_BAD_INPUT;
    }
    if opts.json {
        let written = serde_json::to_writer_pretty(&mut *out, &explanations)
            .map_err(std::io::Error::from)
            .and_then(|()| writeln!(out));
        if written.is_err() {
            return EXIT_BAD_INPUT;
        }
        return draw_charts(opts, &explanations, err).max(code);
    }
    for e in &explanations {
        if write_explanation(e, out).is_err() {
            return EXIT_BAD_INPUT;
        }
    }
    if explanations.is_empty() && errors.is_empty() {
        let _ = writeln!(err, "probegate: no Pods or pod controllers in the input");
    }
    draw_charts(opts, &explanations, err).max(code)
}

/// `--svg FILE`: draws each workload's chart (`FILE`, `FILE-2.svg`, ...), saying on `err` why a
/// workload gets none. Returns 0, or 2 when a chart cannot be written or when no workload gets one
/// (asked for a chart, the command must not end as if it had written one: fresh-user pass s16).
fn draw_charts(opts: &ExplainOptions, explanations: &[Explanation], err: &mut dyn Write) -> u8 {
    let Some(base) = &opts.svg else { return EXIT_OK };
    let mut code = EXIT_OK;
    for e in explanations {
        if let Some(why) = no_chart_reason(e) {
            let _ = writeln!(err, "probegate: no chart for {}: {why}", e.object);
        }
    }
    let drawable: Vec<&Explanation> = explanations.iter().filter(|e| no_chart_reason(e).is_none()).collect();
    if drawable.is_empty() {
        let _ = writeln!(
            err,
            "probegate: --svg {}: not written: no workload has a chart to draw",
            base.display()
        );
        return EXIT_BAD_INPUT;
    }
    for (n, e) in drawable.into_iter().enumerate() {
        let path = svg_path(base, n);
        match draw_svg(e, &path) {
            Ok(()) => {
                let _ = writeln!(err, "probegate: wrote {} ({})", path.display(), e.object);
            }
            Err(m) => {
                let _ = writeln!(err, "probegate: cannot draw the chart: {m}");
                code = EXIT_BAD_INPUT;
            }
        }
    }
    code
}
