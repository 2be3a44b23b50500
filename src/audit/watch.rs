//! `probegate audit --watch`: keeps the reports of a cluster current.
//!
//! Why a separate `audit --watch` Deployment rather than `serve --background-audit`: the webhook sits
//! on the admission path of every Pod, sized small (128 MiB limit) and scaled for requests; an audit
//! lists every workload and Pod of the cluster and needs cluster-wide read RBAC plus write access to
//! reports. Keeping them apart keeps the webhook's memory, RBAC and failure modes what they were, and
//! lets the audit have one active replica (leader election) while the webhook runs several.
//!
//! How: kube-runtime metadata watchers on the eight workload kinds and on Namespaces (metadata only:
//! cheap to hold) say what changed, and each change re-evaluates only what it affects:
//! - an object created or changed: that object, or the top of its chain of audited controllers
//!   (a Pod's ReplicaSet's Deployment), with [`super::incremental::reaudit`];
//! - an object deleted: its report is deleted, and its controller re-evaluated (its Pods changed);
//! - a Namespace's labels changed (or a new Namespace): a pass over that namespace alone;
//! - the policy file changed, this replica became the leader, a watch had to start over (it may
//!   have missed events), or `--resync-seconds` passed: a full pass, which also deletes reports
//!   whose workload is gone.
//!
//! Changes are debounced: after one, the leader waits until `--debounce-ms` pass without another
//! (at most ten times that, so a cluster that never goes quiet is still audited), then handles the
//! whole batch, each object once. Full passes are at least `--min-interval-seconds` apart. Only the
//! holder of the `coordination.k8s.io` Lease (kube-lease-manager) writes; the others watch and wait.
//!
//! Metrics (`--admin-addr`, `/metrics`, OpenMetrics): `probegate_audit_objects`,
//! `probegate_audit_findings{rule,result}`, `probegate_audit_report_writes_total{result}`,
//! `probegate_audit_report_write_retries_total`,
//! `probegate_audit_last_pass_timestamp_seconds` (age = `time() - ...`),
//! `probegate_audit_pass_duration_seconds`, `probegate_audit_passes_total{result}`,
//! `probegate_audit_leader`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
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
use super::incremental::Target;
use super::{AuditOptions, Pass};
use crate::engine::WorkloadKind;
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
    retries: Counter,
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
            "Report writes by result (written, unchanged, deleted, failed)",
            self.writes.clone(),
        );
        r.register(
            "report_write_retries",
            "Report writes and deletes tried again after a 5xx, a 429 or a timeout",
            self.retries.clone(),
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

    /// Counts report writes (of a pass or of a re-evaluation).
    pub fn record_writes(&self, w: &super::Writes) {
        for (result, n) in
            [("written", w.written), ("unchanged", w.unchanged), ("deleted", w.deleted), ("failed", w.failed)]
        {
            self.writes.get_or_create(&ResultLabels { result: result.into() }).inc_by(n as u64);
        }
        self.retries.inc_by(w.retried);
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
            self.record_writes(w);
        }
        let result = if pass.report.errors.is_empty() { "ok" } else { "error" };
        self.passes.get_or_create(&ResultLabels { result: result.into() }).inc();
        self.last_pass.set(now_seconds);
        self.duration.set(took.as_secs_f64());
    }
}

/// What changed since the last batch was handled.
#[derive(Debug, Default)]
struct Pending {
    /// A full pass is due.
    everything: bool,
    /// Namespaces to pass over (labels changed).
    namespaces: BTreeSet<String>,
    /// Objects to re-evaluate.
    objects: BTreeSet<Target>,
}

impl Pending {
    fn is_empty(&self) -> bool {
        !self.everything && self.namespaces.is_empty() && self.objects.is_empty()
    }

    fn add(&mut self, change: Change) {
        match change {
            Change::Everything => self.everything = true,
            Change::Namespace(ns) => {
                self.namespaces.insert(ns);
            }
            Change::Object(t) => {
                self.objects.insert(t);
            }
        }
    }
}

/// One change a watcher saw.
#[derive(Debug)]
enum Change {
    /// Re-evaluate everything.
    Everything,
    /// A namespace's labels changed.
    Namespace(String),
    /// An object changed, was created or deleted.
    Object(Target),
}

/// Changes queued at most before a watcher gives up detail and asks for a full pass.
const QUEUE: usize = 4096;

/// Runs the watch loop until the process is stopped.
///
/// # Errors
/// When the cluster cannot be reached or the Lease cannot be set up; a failed pass is logged and
/// retried at the next change or resync.
pub async fn run(opts: AuditOptions, watch: WatchOptions) -> anyhow::Result<()> {
    let cluster = Cluster::connect(&opts.cluster).await?;
    let api = opts.reports.unwrap_or(super::reports::ReportApi::Openreports);
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
    let (tx, mut changes) = tokio::sync::mpsc::channel::<Change>(QUEUE);
    spawn_watchers(&cluster, &opts.cluster, tx.clone());
    let mut policy = load(&opts.policy)?;
    tracing::info!(hash = %policy.hash, source = %policy.source, lease = %watch.lease, "audit watch started");
    let mut last_full: Option<Instant> = None;
    // The first full pass, once leader.
    let mut pending = Pending { everything: true, ..Default::default() };
    let mut resync = tokio::time::interval(watch.resync);
    resync.tick().await;
    let mut policy_check = tokio::time::interval(Duration::from_secs(2));
    loop {
        let is_leader = *leader.borrow_and_update();
        metrics.leader.set(i64::from(is_leader));
        if !pending.is_empty() && is_leader {
            // Debounce: wait until nothing changed for `debounce` (at most 10 of them: a cluster
            // that never goes quiet is still audited).
            let quiet_by = Instant::now() + watch.debounce * 10;
            while Instant::now() < quiet_by
                && let Ok(Some(change)) = tokio::time::timeout(watch.debounce, changes.recv()).await
            {
                pending.add(change);
            }
            let batch = std::mem::take(&mut pending);
            if batch.everything {
                if let Some(at) = last_full {
                    tokio::time::sleep(watch.min_interval.saturating_sub(at.elapsed())).await;
                }
                last_full = Some(Instant::now());
                full_pass(&cluster, &policy, &opts, &metrics).await;
                continue;
            }
            let started = Instant::now();
            let mut writes = super::Writes::default();
            for ns in &batch.namespaces {
                let scope = cluster.in_namespace(ns);
                match super::audit(&scope, &policy, &opts, &indicatif::ProgressBar::hidden()).await {
                    Ok(pass) => writes.add(pass.writes.unwrap_or_default()),
                    Err(e) => {
                        tracing::warn!(namespace = %ns, error = %format!("{e:#}"), "namespace pass failed")
                    }
                }
            }
            let objects: Vec<Target> =
                batch.objects.into_iter().filter(|t| !batch.namespaces.contains(&t.namespace)).collect();
            let outcome = super::incremental::reaudit(&cluster, &policy, api, &objects).await;
            for n in &outcome.notes {
                tracing::info!(note = %crate::server::log_safe(n), "re-evaluation note");
            }
            writes.add(outcome.writes);
            metrics.record_writes(&writes);
            tracing::info!(
                namespaces = batch.namespaces.len(),
                objects = objects.len(),
                evaluated = outcome.evaluated,
                written = writes.written,
                unchanged = writes.unchanged,
                deleted = writes.deleted,
                failed = writes.failed,
                seconds = started.elapsed().as_secs_f64(),
                "re-evaluated what changed"
            );
            if let Some(e) = &writes.first_error {
                tracing::warn!(error = %crate::server::log_safe(e), "report write failed");
            }
            continue;
        }
        tokio::select! {
            Some(change) = changes.recv() => pending.add(change),
            _ = resync.tick() => pending.everything = true,
            changed = leader.changed() => {
                if changed.is_err() {
                    anyhow::bail!("the Lease manager stopped");
                }
                // A new leader audits everything at once: it does not know what the old one wrote.
                pending.everything = true;
            }
            _ = policy_check.tick() => {
                match load(&opts.policy) {
                    Ok(p) if p.hash != policy.hash => {
                        tracing::info!(hash = %p.hash, "policy changed; re-auditing");
                        policy = p;
                        pending.everything = true;
                    }
                    Ok(_) => {}
                    Err(e) => tracing::warn!(error = %format!("{e:#}"), "invalid policy; keeping the one in force"),
                }
            }
        }
    }
}

async fn full_pass(cluster: &Cluster, policy: &LoadedPolicy, opts: &AuditOptions, metrics: &AuditMetrics) {
    let started = Instant::now();
    match super::audit(cluster, policy, opts, &indicatif::ProgressBar::hidden()).await {
        Ok(pass) => {
            metrics.record(&pass, started.elapsed(), k8s_openapi::jiff::Timestamp::now().as_second());
            let w = pass.writes.clone().unwrap_or_default();
            tracing::info!(
                objects = pass.report.summary().objects,
                written = w.written,
                unchanged = w.unchanged,
                deleted = w.deleted,
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
}

fn load(path: &Option<PathBuf>) -> anyhow::Result<LoadedPolicy> {
    let (policy, text, source) = crate::cli::load_policy(path.as_deref()).map_err(anyhow::Error::msg)?;
    Ok(LoadedPolicy::new(policy, &text, source))
}

/// Metadata watchers on the audited kinds and Namespaces; each event becomes a [`Change`] for the
/// objects and namespaces in this replica's scope.
fn spawn_watchers(cluster: &Cluster, opts: &ClusterOptions, tx: tokio::sync::mpsc::Sender<Change>) {
    use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
    use k8s_openapi::api::batch::v1::{CronJob, Job};
    use k8s_openapi::api::core::v1::{Namespace, Pod, ReplicationController};
    let client = cluster.client().clone();
    let namespace = cluster.namespace().map(str::to_string);
    // With --namespace-selector, the namespaces that match it now (kept by the Namespace watcher).
    let selected: Selected = opts.namespace_selector.as_ref().map(|_| Arc::default());
    let mut config = kube::runtime::watcher::Config::default();
    if let Some(s) = &opts.selector {
        config = config.labels(s);
    }
    macro_rules! watch {
        ($kind:ty, $workload:expr) => {{
            let api: kube::Api<kube::core::PartialObjectMeta<$kind>> = match &namespace {
                Some(ns) => kube::Api::namespaced(client.clone(), ns),
                None => kube::Api::all(client.clone()),
            };
            spawn_objects(
                $workload,
                kube::runtime::watcher(api, config.clone()),
                cluster.clone(),
                selected.clone(),
                tx.clone(),
            );
        }};
    }
    watch!(Pod, WorkloadKind::Pod);
    watch!(Deployment, WorkloadKind::Deployment);
    watch!(StatefulSet, WorkloadKind::StatefulSet);
    watch!(DaemonSet, WorkloadKind::DaemonSet);
    watch!(ReplicaSet, WorkloadKind::ReplicaSet);
    watch!(ReplicationController, WorkloadKind::ReplicationController);
    watch!(Job, WorkloadKind::Job);
    watch!(CronJob, WorkloadKind::CronJob);
    let namespaces: kube::Api<kube::core::PartialObjectMeta<Namespace>> = kube::Api::all(client);
    let mut ns_config = kube::runtime::watcher::Config::default();
    if let Some(s) = &opts.namespace_selector {
        ns_config = ns_config.labels(s);
    }
    spawn_namespaces(kube::runtime::watcher(namespaces, ns_config), cluster.clone(), selected, tx);
}

/// The namespaces a `--namespace-selector` selects now; `None` without one.
type Selected = Option<Arc<std::sync::RwLock<std::collections::HashSet<String>>>>;

/// Is the namespace in this replica's scope (`-n`, shard, namespace selector)?
fn in_scope(cluster: &Cluster, selected: &Selected, namespace: &str) -> bool {
    cluster.covers(namespace)
        && selected.as_ref().is_none_or(|s| s.read().map(|s| s.contains(namespace)).unwrap_or(true))
}

/// Sends a change; a full queue turns into a full pass (the detail is lost, not the change).
fn send(tx: &tokio::sync::mpsc::Sender<Change>, change: Change) {
    if let Err(tokio::sync::mpsc::error::TrySendError::Full(_)) = tx.try_send(change) {
        // The loop drains the queue while debouncing; this one waits for room.
        let tx = tx.clone();
        tokio::spawn(async move {
            let _ = tx.send(Change::Everything).await;
        });
    }
}

/// The controller of an object, when its kind is one probegate audits (what a Pod's deletion
/// changes: its controller's evidence).
fn audited_controller(
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
) -> Option<(WorkloadKind, String)> {
    let o = meta.owner_references.as_ref()?.iter().find(|o| o.controller == Some(true))?;
    WorkloadKind::from_api_version_kind(&o.api_version, &o.kind)
        .filter(|k| !k.is_pod())
        .map(|k| (k, o.name.clone()))
}

fn spawn_objects<S, K>(
    kind: WorkloadKind,
    stream: S,
    cluster: Cluster,
    selected: Selected,
    tx: tokio::sync::mpsc::Sender<Change>,
) where
    S: futures::Stream<
            Item = Result<
                kube::runtime::watcher::Event<kube::core::PartialObjectMeta<K>>,
                kube::runtime::watcher::Error,
            >,
        > + Send
        + 'static,
    K: Send + 'static,
{
    use kube::runtime::WatchStreamExt;
    use kube::runtime::watcher::Event;
    tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream.default_backoff());
        let mut reported = false;
        let mut started = false;
        while let Some(event) = stream.next().await {
            let (meta, deleted) = match event {
                Ok(Event::Init | Event::InitApply(_)) => continue,
                // The first listing is what the first full pass reads; a later one follows a
                // watch that started over (expired, disconnected) and may have missed events.
                Ok(Event::InitDone) => {
                    if started {
                        send(&tx, Change::Everything);
                    }
                    started = true;
                    continue;
                }
                Ok(Event::Apply(o)) => (o.metadata, false),
                Ok(Event::Delete(o)) => (o.metadata, true),
                Err(e) => {
                    if !reported {
                        tracing::warn!(kind = kind.as_str(), error = %crate::server::kube_error_text(&e), "watch failed; retrying with back-off (resync still runs)");
                        reported = true;
                    }
                    continue;
                }
            };
            reported = false;
            let (Some(namespace), Some(name)) = (meta.namespace.clone(), meta.name.clone()) else { continue };
            if !in_scope(&cluster, &selected, &namespace) {
                continue;
            }
            match (deleted, audited_controller(&meta)) {
                // A deleted object with an audited controller had no report: its controller's
                // evidence changed.
                (true, Some((owner_kind, owner))) => {
                    send(&tx, Change::Object(Target { kind: owner_kind, namespace, name: owner }));
                }
                _ => send(&tx, Change::Object(Target { kind, namespace, name })),
            }
        }
    });
}

fn spawn_namespaces<S, K>(
    stream: S,
    cluster: Cluster,
    selected: Selected,
    tx: tokio::sync::mpsc::Sender<Change>,
) where
    S: futures::Stream<
            Item = Result<
                kube::runtime::watcher::Event<kube::core::PartialObjectMeta<K>>,
                kube::runtime::watcher::Error,
            >,
        > + Send
        + 'static,
    K: Send + 'static,
{
    use kube::runtime::WatchStreamExt;
    use kube::runtime::watcher::Event;
    tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream.default_backoff());
        let mut known: HashMap<String, BTreeMap<String, String>> = HashMap::new();
        let mut started = false;
        let mut reported = false;
        let select = |name: &str, on: bool| {
            if let Some(Ok(mut s)) = selected.as_ref().map(|s| s.write()) {
                if on {
                    s.insert(name.to_string());
                } else {
                    s.remove(name);
                }
            }
        };
        while let Some(event) = stream.next().await {
            match event {
                Ok(Event::Init) => {
                    known.clear();
                    if let Some(Ok(mut s)) = selected.as_ref().map(|s| s.write()) {
                        s.clear();
                    }
                }
                Ok(Event::InitApply(o)) => {
                    if let Some(name) = o.metadata.name {
                        select(&name, true);
                        known.insert(name, o.metadata.labels.unwrap_or_default());
                    }
                }
                Ok(Event::InitDone) => {
                    if started {
                        send(&tx, Change::Everything);
                    }
                    started = true;
                }
                Ok(Event::Apply(o)) => {
                    reported = false;
                    let Some(name) = o.metadata.name else { continue };
                    select(&name, true);
                    let labels = o.metadata.labels.unwrap_or_default();
                    // Only labels select policy overrides: other updates (annotations, status,
                    // finalizers) change no verdict.
                    if known.get(&name) != Some(&labels) {
                        known.insert(name.clone(), labels);
                        if cluster.covers(&name) {
                            send(&tx, Change::Namespace(name));
                        }
                    }
                }
                // Deleted, or (with --namespace-selector) no longer selected.
                Ok(Event::Delete(o)) => {
                    if let Some(name) = o.metadata.name {
                        select(&name, false);
                        known.remove(&name);
                    }
                }
                Err(e) => {
                    if !reported {
                        tracing::warn!(kind = "namespaces", error = %crate::server::kube_error_text(&e), "watch failed; retrying with back-off (resync still runs)");
                        reported = true;
                    }
                }
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
