//! `probegate audit --watch`: keeps the reports of a cluster current.
//!
//! Why a separate `audit --watch` Deployment rather than `serve --background-audit`: the webhook sits
//! on the admission path of every Pod, sized small (128 MiB limit) and scaled for requests; an audit
//! lists every workload and Pod of the cluster and needs cluster-wide read RBAC plus write access to
//! reports. Keeping them apart keeps the webhook's memory, RBAC and failure modes what they were, and
//! lets the audit have one active replica (leader election) while the webhook runs several.
//!
//! How: kube-runtime metadata watchers on the eight workload kinds and on Namespaces (metadata only:
//! cheap to hold) signal that something changed; the policy file is re-read when its content changes;
//! a resync runs every `--resync-seconds` anyway. After a change, the leader waits `--debounce-ms`
//! for more, then runs a pass ([`super::audit`]) that re-evaluates everything and writes only the
//! reports whose content changed (a quiet cluster: list requests, no writes). Passes are at least
//! `--min-interval-seconds` apart, so a busy cluster is not listed back to back. Only the holder of
//! the `coordination.k8s.io` Lease (kube-lease-manager) writes; the others watch and wait.
//!
//! Metrics (`--admin-addr`, `/metrics`, OpenMetrics): `probegate_audit_objects`,
//! `probegate_audit_findings{rule,result}`, `probegate_audit_report_writes_total{result}`,
//! `probegate_audit_last_pass_timestamp_seconds` (age = `time() - ...`),
//! `probegate_audit_pass_duration_seconds`, `probegate_audit_passes_total{result}`,
//! `probegate_audit_leader`.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use futures::StreamExt;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use super::cluster::{Cluster, ClusterOptions};
use super::{AuditOptions, Pass};
use crate::server::LoadedPolicy;

/// Settings of the watch loop.
#[derive(Clone, Debug)]
pub struct WatchOptions {
    /// The Lease's name.
    pub lease: String,
    /// The Lease's namespace.
    pub lease_namespace: String,
    /// This replica's identity in the Lease (the Pod name).
    pub identity: String,
    /// Quiet time after a change before a pass starts.
    pub debounce: Duration,
    /// Least time between the starts of two passes.
    pub min_interval: Duration,
    /// A pass at least this often, changes or not.
    pub resync: Duration,
    /// `/metrics` and `/healthz` over plain HTTP, when set.
    pub admin_addr: Option<std::net::SocketAddr>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FindingLabels {
    rule: String,
    result: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    result: String,
}

/// The audit's metrics.
#[derive(Default)]
pub struct AuditMetrics {
    objects: Gauge,
    findings: Family<FindingLabels, Gauge>,
    writes: Family<ResultLabels, Counter>,
    passes: Family<ResultLabels, Counter>,
    last_pass: Gauge,
    duration: Gauge<f64, AtomicU64>,
    leader: Gauge,
}

impl AuditMetrics {
    /// Registers the metrics in `registry` (prefix `probegate_audit`).
    pub fn register(self: &Arc<Self>, registry: &mut Registry) {
        let r = registry.sub_registry_with_prefix("probegate_audit");
        r.register("objects", "Workloads audited in the last pass", self.objects.clone());
        r.register("findings", "Findings of the last pass by rule and level", self.findings.clone());
        r.register(
            "report_writes",
            "Report writes by result (written, unchanged, failed)",
            self.writes.clone(),
        );
        r.register("passes", "Audit passes by result (ok, error)", self.passes.clone());
        r.register(
            "last_pass_timestamp_seconds",
            "When the last complete pass ended, in seconds since the Unix epoch",
            self.last_pass.clone(),
        );
        r.register("pass_duration_seconds", "How long the last pass took, in seconds", self.duration.clone());
        r.register("leader", "1 while this replica holds the Lease and writes reports", self.leader.clone());
    }

    /// Records a finished pass.
    pub fn record(&self, pass: &Pass, took: Duration, now_seconds: i64) {
        let summary = pass.report.summary();
        self.objects.set(i64::try_from(summary.objects).unwrap_or(i64::MAX));
        self.findings.clear();
        for f in pass.report.files.iter().flat_map(|f| &f.objects).flat_map(|o| &o.findings) {
            self.findings
                .get_or_create(&FindingLabels {
                    rule: f.finding.rule.as_str().into(),
                    result: f.level.as_str().into(),
                })
                .inc();
        }
        if let Some(w) = &pass.writes {
            for (result, n) in [("written", w.written), ("unchanged", w.unchanged), ("failed", w.failed)] {
                self.writes.get_or_create(&ResultLabels { result: result.into() }).inc_by(n as u64);
            }
        }
        let result = if pass.report.errors.is_empty() { "ok" } else { "error" };
        self.passes.get_or_create(&ResultLabels { result: result.into() }).inc();
        self.last_pass.set(now_seconds);
        self.duration.set(took.as_secs_f64());
    }
}

/// Runs the watch loop until the process is stopped.
///
/// # Errors
/// When the cluster cannot be reached or the Lease cannot be set up; a failed pass is logged and
/// retried at the next change or resync.
pub async fn run(opts: AuditOptions, watch: WatchOptions) -> anyhow::Result<()> {
    let cluster = Cluster::connect(&opts.cluster).await?;
    let metrics = Arc::new(AuditMetrics::default());
    let mut registry = Registry::default();
    metrics.register(&mut registry);
    if let Some(addr) = watch.admin_addr {
        serve_admin(addr, Arc::new(registry)).await?;
    }
    let lease = kube_lease_manager::LeaseManagerBuilder::new(cluster.client().clone(), &watch.lease)
        .with_namespace(&watch.lease_namespace)
        .with_identity(&watch.identity)
        .with_duration(15)
        .with_grace(5)
        .build()
        .await
        .context("cannot set up the Lease")?;
    let (mut leader, _lease_task) = lease.watch().await;
    let (tx, mut changes) = tokio::sync::mpsc::channel::<&'static str>(1);
    spawn_watchers(&cluster, &opts.cluster, tx.clone());
    let mut policy = load(&opts.policy)?;
    tracing::info!(hash = %policy.hash, source = %policy.source, lease = %watch.lease, "audit watch started");
    let mut last_start: Option<Instant> = None;
    let mut pending = true; // the first pass, once leader
    let mut resync = tokio::time::interval(watch.resync);
    resync.tick().await;
    let mut policy_check = tokio::time::interval(Duration::from_secs(2));
    loop {
        let is_leader = *leader.borrow_and_update();
        metrics.leader.set(i64::from(is_leader));
        if pending && is_leader {
            // Debounce: wait until nothing changed for `debounce` (at most 10 of them: a cluster
            // that never goes quiet is still audited), then respect `min_interval`.
            let quiet_by = Instant::now() + watch.debounce * 10;
            while Instant::now() < quiet_by
                && let Ok(Some(_)) = tokio::time::timeout(watch.debounce, changes.recv()).await
            {}
            if let Some(at) = last_start {
                tokio::time::sleep(watch.min_interval.saturating_sub(at.elapsed())).await;
            }
            pending = false;
            let started = Instant::now();
            last_start = Some(started);
            match super::audit(&cluster, &policy, &opts, &indicatif::ProgressBar::hidden()).await {
                Ok(pass) => {
                    metrics.record(&pass, started.elapsed(), k8s_openapi::jiff::Timestamp::now().as_second());
                    let w = pass.writes.clone().unwrap_or_default();
                    tracing::info!(
                        objects = pass.report.summary().objects,
                        written = w.written,
                        unchanged = w.unchanged,
                        failed = w.failed,
                        errors = pass.report.errors.len(),
                        seconds = started.elapsed().as_secs_f64(),
                        "audit pass"
                    );
                    for e in &pass.report.errors {
                        tracing::warn!(error = %crate::server::log_safe(&e.to_string()), "audit pass error");
                    }
                }
                Err(e) => {
                    metrics.passes.get_or_create(&ResultLabels { result: "error".into() }).inc();
                    tracing::warn!(error = %format!("{e:#}"), "audit pass failed; retrying at the next change");
                }
            }
            continue;
        }
        tokio::select! {
            Some(_) = changes.recv() => pending = true,
            _ = resync.tick() => pending = true,
            changed = leader.changed() => {
                if changed.is_err() {
                    anyhow::bail!("the Lease manager stopped");
                }
                // A new leader audits at once: it does not know what the old one wrote last.
                pending = true;
            }
            _ = policy_check.tick() => {
                match load(&opts.policy) {
                    Ok(p) if p.hash != policy.hash => {
                        tracing::info!(hash = %p.hash, "policy changed; re-auditing");
                        policy = p;
                        pending = true;
                    }
                    Ok(_) => {}
                    Err(e) => tracing::warn!(error = %format!("{e:#}"), "invalid policy; keeping the one in force"),
                }
            }
        }
    }
}

fn load(path: &Option<PathBuf>) -> anyhow::Result<LoadedPolicy> {
    let (policy, text, source) = crate::cli::load_policy(path.as_deref()).map_err(anyhow::Error::msg)?;
    Ok(LoadedPolicy::new(policy, &text, source))
}

/// Metadata watchers on the audited kinds and Namespaces; each event signals a change.
fn spawn_watchers(cluster: &Cluster, opts: &ClusterOptions, tx: tokio::sync::mpsc::Sender<&'static str>) {
    use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
    use k8s_openapi::api::batch::v1::{CronJob, Job};
    use k8s_openapi::api::core::v1::{Namespace, Pod, ReplicationController};
    let client = cluster.client().clone();
    let namespace = cluster.namespace().map(str::to_string);
    let mut config = kube::runtime::watcher::Config::default();
    if let Some(s) = &opts.selector {
        config = config.labels(s);
    }
    macro_rules! watch {
        ($kind:ty, $name:literal) => {{
            let api: kube::Api<kube::core::PartialObjectMeta<$kind>> = match &namespace {
                Some(ns) => kube::Api::namespaced(client.clone(), ns),
                None => kube::Api::all(client.clone()),
            };
            spawn_one($name, kube::runtime::watcher(api, config.clone()), tx.clone());
        }};
    }
    watch!(Pod, "pods");
    watch!(Deployment, "deployments");
    watch!(StatefulSet, "statefulsets");
    watch!(DaemonSet, "daemonsets");
    watch!(ReplicaSet, "replicasets");
    watch!(ReplicationController, "replicationcontrollers");
    watch!(Job, "jobs");
    watch!(CronJob, "cronjobs");
    let namespaces: kube::Api<kube::core::PartialObjectMeta<Namespace>> = kube::Api::all(client);
    spawn_one("namespaces", kube::runtime::watcher(namespaces, Default::default()), tx);
}

fn spawn_one<S, T>(what: &'static str, stream: S, tx: tokio::sync::mpsc::Sender<&'static str>)
where
    S: futures::Stream<Item = Result<kube::runtime::watcher::Event<T>, kube::runtime::watcher::Error>>
        + Send
        + 'static,
    T: Send + 'static,
{
    use kube::runtime::WatchStreamExt;
    tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream.default_backoff());
        let mut reported = false;
        while let Some(event) = stream.next().await {
            match event {
                // The initial list replays every object: one signal at its end is enough.
                Ok(kube::runtime::watcher::Event::Init | kube::runtime::watcher::Event::InitApply(_)) => {}
                Ok(_) => {
                    reported = false;
                    // A full channel already holds a pending change.
                    let _ = tx.try_send(what);
                }
                Err(e) if !reported => {
                    tracing::warn!(kind = what, error = %e, "watch failed; retrying with back-off (resync still runs)");
                    reported = true;
                }
                Err(_) => {}
            }
        }
    });
}

async fn serve_admin(addr: std::net::SocketAddr, registry: Arc<Registry>) -> anyhow::Result<()> {
    use axum::routing::get;
    let app = axum::Router::new().route("/healthz", get(|| async { "ok" })).route(
        "/metrics",
        get(move || {
            let registry = Arc::clone(&registry);
            async move {
                let mut body = String::new();
                let _ = prometheus_client::encoding::text::encode(&mut body, &registry);
                ([("content-type", "application/openmetrics-text; version=1.0.0; charset=utf-8")], body)
            }
        }),
    );
    let listener =
        tokio::net::TcpListener::bind(addr).await.with_context(|| format!("cannot listen on {addr}"))?;
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(())
}
