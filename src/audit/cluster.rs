//! The cluster side of `probegate audit`: a kube client from the usual kubeconfig (`KUBECONFIG`,
//! `--context`, else the in-cluster service account), paginated lists (`limit`/`continue`), and a
//! client-side rate limit on every request.
//!
//! Objects are read as raw JSON page by page and reduced at once to what the rules read
//! ([`Workload`]), their uid and controller, and for Pods their status: a page of full objects is
//! the most held at a time. Reads only: `list` on the eight workload kinds, `list`/`get` on
//! Namespaces, `get` on the ConfigMaps liveness scripts come from, `list` on Events (optional).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::Context as _;
use k8s_openapi::api::core::v1::{ConfigMap, Event, Namespace, PodStatus};
use kube::api::ListParams;
use kube::core::Request;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::evidence::{self, LivenessEvent};
use super::reports::{self, ReportApi};
use crate::cli::input::InputError;
use crate::engine::{Workload, WorkloadKind};

/// The kinds listed, controllers before what they own (the order does not change the result).
pub const KINDS: [WorkloadKind; 8] = [
    WorkloadKind::CronJob,
    WorkloadKind::Job,
    WorkloadKind::Deployment,
    WorkloadKind::StatefulSet,
    WorkloadKind::DaemonSet,
    WorkloadKind::ReplicationController,
    WorkloadKind::ReplicaSet,
    WorkloadKind::Pod,
];

/// The API path prefix and resource name of a kind (Kubernetes API reference).
pub fn resource(kind: WorkloadKind) -> (&'static str, &'static str) {
    match kind {
        WorkloadKind::Pod => ("/api/v1", "pods"),
        WorkloadKind::ReplicationController => ("/api/v1", "replicationcontrollers"),
        WorkloadKind::Deployment => ("/apis/apps/v1", "deployments"),
        WorkloadKind::StatefulSet => ("/apis/apps/v1", "statefulsets"),
        WorkloadKind::DaemonSet => ("/apis/apps/v1", "daemonsets"),
        WorkloadKind::ReplicaSet => ("/apis/apps/v1", "replicasets"),
        WorkloadKind::Job => ("/apis/batch/v1", "jobs"),
        WorkloadKind::CronJob => ("/apis/batch/v1", "cronjobs"),
    }
}

/// Where the cluster is and what to read from it.
#[derive(Clone, Debug)]
pub struct ClusterOptions {
    /// kubeconfig context; `None`: the current context, else in-cluster.
    pub context: Option<String>,
    /// `-n`: one namespace; `None`: the context's namespace, unless `all_namespaces`.
    pub namespace: Option<String>,
    /// `-A`: every namespace.
    pub all_namespaces: bool,
    /// `-l`: a label selector on the workload objects (kubectl syntax, passed to the API server).
    pub selector: Option<String>,
    /// Requests per second at most (list pages, ConfigMap reads, ...).
    pub qps: f64,
    /// Objects per list page (`limit`).
    pub page_size: u32,
    /// `--namespace-selector`: only namespaces whose labels match (kubectl syntax, passed to the
    /// API server's Namespace list); with `-A` only.
    pub namespace_selector: Option<String>,
    /// `--shard-index I --shard-count N`: only the namespaces [`shard_of`] puts in shard I of N.
    pub shard: Option<Shard>,
    /// `--writes-in-flight`: report writes (and deletes) sent at once, at least 1.
    pub writes_in_flight: usize,
    /// How a report missing from the metadata-only list is written (`--report-writes`).
    pub report_writes: ReportWrites,
}

/// How reports are written: the default, and the paths it is measured against (`--report-writes`,
/// a hidden benchmark knob).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportWrites {
    /// A report the metadata-only list did not show is created (POST); a 409 AlreadyExists (written
    /// meanwhile, or unlabelled) falls back to server-side apply, as does a changed report. The
    /// report is the lean one ([`reports::Detail::Lean`]).
    #[default]
    Create,
    /// Server-side apply for every write.
    Apply,
    /// As `create`, every write asking `fieldValidation=Ignore` (skips the server's strict decode
    /// for duplicate and unknown fields; the CRD's schema still prunes and validates). Measured
    /// side by side on 2026-12-02: no saving above the noise, so not the default.
    CreateIgnore,
    /// The path before 2026-12-02: `create` with the full report ([`reports::Detail::Full`]).
    Before,
}

impl ReportWrites {
    /// Whether a report missing from the list is created rather than applied.
    pub fn creates(self) -> bool {
        self != ReportWrites::Apply
    }

    /// Whether writes ask `fieldValidation=Ignore`.
    pub fn ignores_validation(self) -> bool {
        self == ReportWrites::CreateIgnore
    }

    /// Which fields a report carries.
    pub fn detail(self) -> reports::Detail {
        match self {
            ReportWrites::Before => reports::Detail::Full,
            _ => reports::Detail::Lean,
        }
    }
}

/// Attempts of one request at most: the first and up to 4 retries. A write answered with a 5xx or a
/// 429, or one that failed or timed out on the way, is retried after an exponential backoff
/// ([`retry_delays`]) or the server's `Retry-After`, whichever is longer.
pub const ATTEMPTS: usize = 5;

/// How long one attempt may take, in seconds, before it counts as timed out and is retried (the
/// API server gives up on a request after 60 s by default, answering 504).
pub const ATTEMPT_TIMEOUT_SECONDS: u64 = 30;

/// The longest `Retry-After` honoured, in seconds (a longer one is cut to this).
pub const MAX_RETRY_AFTER_SECONDS: u64 = 30;

/// The waits before retries 1 to [`ATTEMPTS`]` - 1`: exponential from 200 ms (factor 2, at most
/// 5 s) with jitter (the `backon` crate's schedule), so writers that failed together do not retry
/// together.
pub fn retry_delays() -> impl Iterator<Item = Duration> {
    use backon::BackoffBuilder as _;
    backon::ExponentialBuilder::default()
        .with_min_delay(Duration::from_millis(200))
        .with_max_delay(Duration::from_secs(5))
        .with_max_times(ATTEMPTS - 1)
        .with_jitter()
        .build()
}

/// Is an answer with this HTTP status worth another attempt? 5xx (etcd timeouts, an overloaded or
/// restarting API server) and 429 (API Priority and Fairness rejected it) are; other 4xx are not.
pub fn retryable_status(code: u16) -> bool {
    code == 429 || (500..600).contains(&code)
}

/// The server's `Retry-After` in seconds (the header, else a `Status`'s `details.retryAfterSeconds`,
/// which the API server sets with 429 and timeouts), at most [`MAX_RETRY_AFTER_SECONDS`].
pub fn retry_after(headers: &http::HeaderMap, status: Option<&kube::core::Status>) -> Option<Duration> {
    let header = headers
        .get(http::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let body =
        status.and_then(|s| s.details.as_ref()).map(|d| u64::from(d.retry_after_seconds)).filter(|&s| s > 0);
    header.or(body).map(|s| Duration::from_secs(s.min(MAX_RETRY_AFTER_SECONDS)))
}

/// One of N shards of a cluster's namespaces: each replica audits the namespaces whose name hashes
/// to its index, so N replicas with their own Leases divide the work without talking to each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// This replica's shard, `0..count`.
    pub index: u32,
    /// How many shards there are (at least 1).
    pub count: u32,
}

impl Shard {
    /// Does the namespace belong to this shard?
    pub fn owns(self, namespace: &str) -> bool {
        shard_of(namespace, self.count) == self.index
    }
}

/// The shard of a namespace among `count`: the first 4 bytes of the SHA-256 of its name, modulo
/// `count` (stable across processes, versions and platforms, unlike std's hasher).
pub fn shard_of(namespace: &str, count: u32) -> u32 {
    let digest = ring::digest::digest(&ring::digest::SHA256, namespace.as_bytes());
    let bytes: [u8; 4] = digest.as_ref()[..4].try_into().unwrap_or([0; 4]);
    u32::from_be_bytes(bytes) % count.max(1)
}

/// A token-bucket-of-one rate limit: requests are spaced at least `1/qps` apart.
///
/// Each request takes the next free slot and sleeps until it; no lock is held while it waits.
/// (A lock held across the wait deadlocked the audit: a list request polled once and then left
/// unpolled, while the loop that drives it awaited a ConfigMap read, kept the lock that read
/// needed.)
struct RateLimit {
    period: Duration,
    /// The next free slot.
    next: std::sync::Mutex<tokio::time::Instant>,
}

impl RateLimit {
    fn new(qps: f64) -> RateLimit {
        let qps = if qps.is_finite() && qps > 0.0 { qps } else { 1.0 };
        RateLimit {
            period: Duration::from_secs_f64(1.0 / qps),
            next: std::sync::Mutex::new(tokio::time::Instant::now()),
        }
    }

    async fn wait(&self) {
        let at = {
            let mut next = self.next.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let at = (*next).max(tokio::time::Instant::now());
            *next = at + self.period;
            at
        };
        tokio::time::sleep_until(at).await;
    }
}

/// A connected cluster (cheap to clone: views share the client and the rate limit).
#[derive(Clone)]
pub struct Cluster {
    client: kube::Client,
    /// `None`: all namespaces.
    namespace: Option<String>,
    selector: Option<String>,
    namespace_selector: Option<String>,
    shard: Option<Shard>,
    page_size: u32,
    limit: Arc<RateLimit>,
    writes_in_flight: usize,
    report_writes: ReportWrites,
    /// Report writes (and deletes) retried so far, over all views of this cluster.
    write_retries: Arc<AtomicU64>,
}

/// A listed report's metadata: what a pass compares and cleans up with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportMeta {
    /// The content hash annotation ([`reports::HASH_ANNOTATION`]), when set.
    pub hash: Option<String>,
}

/// One listed object, reduced.
#[derive(Debug)]
pub struct Listed {
    /// `metadata.uid`.
    pub uid: String,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace`.
    pub namespace: String,
    /// The uid of the controller owner reference, when its kind is one probegate audits.
    pub parent: Option<String>,
    /// That controller's kind and name.
    pub parent_ref: Option<(WorkloadKind, String)>,
    /// A mirror Pod (never evaluated, as at admission).
    pub mirror: bool,
    /// What the rules read.
    pub workload: Workload,
    /// A Pod's status.
    pub pod_status: Option<PodStatus>,
}

#[derive(Deserialize)]
struct Page {
    #[serde(default)]
    metadata: PageMeta,
    #[serde(default)]
    items: Vec<Box<RawValue>>,
}

#[derive(Deserialize, Default)]
struct PageMeta {
    #[serde(default, rename = "continue")]
    continue_token: Option<String>,
}

#[derive(Deserialize)]
#[serde(bound(deserialize = "T: Deserialize<'de>"))]
struct TypedPage<T> {
    #[serde(default)]
    metadata: PageMeta,
    // An empty PartialObjectMetadataList says `"items": null`.
    #[serde(default = "Vec::new", deserialize_with = "null_as_empty")]
    items: Vec<T>,
}

fn null_as_empty<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(Option::<Vec<T>>::deserialize(d)?.unwrap_or_default())
}

#[derive(Deserialize)]
struct Lean {
    #[serde(default)]
    metadata: LeanMeta,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct LeanMeta {
    #[serde(default)]
    uid: String,
    #[serde(default)]
    owner_references: Vec<LeanOwner>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LeanOwner {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    uid: String,
    #[serde(default)]
    controller: Option<bool>,
}

#[derive(Deserialize)]
struct MetaOnly {
    #[serde(default)]
    metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
}

#[derive(Deserialize)]
struct PodLean {
    #[serde(default)]
    status: Option<PodStatus>,
}

/// Is `s` a namespace name (an RFC 1123 label), safe in an API path?
fn valid_namespace(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

impl Cluster {
    /// Connects: `--context` from the kubeconfig, else the inferred configuration (`KUBECONFIG` or
    /// `~/.kube/config`, else in-cluster).
    ///
    /// # Errors
    /// No usable configuration, or an invalid `-n`.
    pub async fn connect(opts: &ClusterOptions) -> anyhow::Result<Cluster> {
        let config = match &opts.context {
            Some(context) => kube::Config::from_kubeconfig(&kube::config::KubeConfigOptions {
                context: Some(context.clone()),
                ..Default::default()
            })
            .await
            .with_context(|| format!("kubeconfig context {context}"))?,
            None => match kube::Config::infer().await.map_err(kube::Error::InferConfig) {
                Ok(config) => config,
                Err(e) if crate::server::kubeclient::is_unconfigured(&e) => {
                    return Err(anyhow::Error::new(e).context("no kubeconfig and not in a cluster"));
                }
                Err(e) => {
                    return Err(anyhow::Error::new(e).context("cannot load the Kubernetes configuration"));
                }
            },
        };
        let namespace = match (&opts.namespace, opts.all_namespaces) {
            (_, true) => None,
            (Some(ns), false) => Some(ns.clone()),
            (None, false) => Some(config.default_namespace.clone()),
        };
        if let Some(ns) = &namespace
            && !valid_namespace(ns)
        {
            anyhow::bail!("not a namespace name: {:?}", crate::engine::excerpt(ns, 64));
        }
        let mut config = crate::server::kubeclient::honour_no_proxy(config);
        // kube's own retry layer would retry 429, 503 and 504 unseen (up to 15 times, for up to
        // 1000 s each); this client retries every request itself, counted and bounded (see `send`).
        config.default_retry = false;
        let client = kube::Client::try_from(config).context("cannot build a Kubernetes client")?;
        Self::with_client(client, namespace, opts)
    }

    /// A cluster view over a client built elsewhere (connect's second half; tests point it at a
    /// local server). `namespace` is the audited one (`None`: all).
    ///
    /// # Errors
    /// An invalid shard.
    pub fn with_client(
        client: kube::Client,
        namespace: Option<String>,
        opts: &ClusterOptions,
    ) -> anyhow::Result<Cluster> {
        if opts.shard.is_some_and(|s| s.count == 0 || s.index >= s.count) {
            anyhow::bail!("--shard-index must be below --shard-count");
        }
        Ok(Cluster {
            client,
            namespace,
            selector: opts.selector.clone(),
            namespace_selector: opts.namespace_selector.clone(),
            shard: opts.shard,
            page_size: opts.page_size.max(1),
            limit: Arc::new(RateLimit::new(opts.qps)),
            writes_in_flight: opts.writes_in_flight.max(1),
            report_writes: opts.report_writes,
            write_retries: Arc::new(AtomicU64::new(0)),
        })
    }

    /// The audited namespace; `None` for all.
    pub fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// The workload label selector (`-l`).
    pub fn selector(&self) -> Option<&str> {
        self.selector.as_deref()
    }

    /// Does the scope of this cluster view include the namespace? (`-n`, the shard; the namespace
    /// selector is not checked here: it needs the labels.)
    pub fn covers(&self, namespace: &str) -> bool {
        self.namespace.as_deref().is_none_or(|n| n == namespace)
            && self.shard.is_none_or(|s| s.owns(namespace))
    }

    /// Is the scope narrowed to some namespaces (a shard or a namespace selector), so that a pass
    /// lists namespace by namespace?
    pub fn divided(&self) -> bool {
        self.namespace.is_none() && (self.shard.is_some() || self.namespace_selector.is_some())
    }

    /// The same cluster seen through one namespace (sharing the client and the rate limit).
    pub fn in_namespace(&self, namespace: &str) -> Cluster {
        Cluster { namespace: Some(namespace.to_string()), ..self.clone() }
    }

    /// The client (for writers such as reports).
    pub fn client(&self) -> &kube::Client {
        &self.client
    }

    /// Report writes (and deletes) to keep in flight at once (`--writes-in-flight`, at least 1).
    pub fn writes_in_flight(&self) -> usize {
        self.writes_in_flight
    }

    /// How a report the list did not show is written (`--report-writes`).
    pub fn report_writes(&self) -> ReportWrites {
        self.report_writes
    }

    fn path(&self, prefix: &str, plural: &str, namespace: Option<&str>) -> String {
        match namespace {
            Some(ns) => format!("{prefix}/namespaces/{ns}/{plural}"),
            None => format!("{prefix}/{plural}"),
        }
    }

    async fn get_text(
        &self,
        request: Result<http::Request<Vec<u8>>, kube::core::request::Error>,
    ) -> kube::Result<String> {
        let request = request.map_err(kube::Error::BuildRequest)?;
        self.send(request, false).await
    }

    /// Report writes (and deletes) retried so far by this cluster and its views (cumulative).
    pub fn write_retries(&self) -> u64 {
        self.write_retries.load(Ordering::Relaxed)
    }

    /// Sends a request under the rate limit, with up to [`ATTEMPTS`] attempts: an answer with a
    /// retryable status ([`retryable_status`]), a transport error or an attempt that takes longer
    /// than [`ATTEMPT_TIMEOUT_SECONDS`] is tried again after the next [`retry_delays`] wait or the
    /// server's [`retry_after`], whichever is longer. `write`: count the retries in
    /// [`Cluster::write_retries`]. Returns the body of a 2xx answer.
    ///
    /// # Errors
    /// The last attempt's error: `kube::Error::Api` with the server's `Status` for an HTTP error.
    async fn send(&self, request: http::Request<Vec<u8>>, write: bool) -> kube::Result<String> {
        let (parts, body) = request.into_parts();
        let mut delays = retry_delays();
        loop {
            let mut attempt = http::Request::new(kube::client::Body::from(body.clone()));
            *attempt.method_mut() = parts.method.clone();
            *attempt.uri_mut() = parts.uri.clone();
            *attempt.headers_mut() = parts.headers.clone();
            self.limit.wait().await;
            let sent =
                tokio::time::timeout(Duration::from_secs(ATTEMPT_TIMEOUT_SECONDS), self.client.send(attempt))
                    .await;
            let (error, server_wait) = match sent {
                Err(_) => (
                    kube::Error::Service(format!("no answer within {ATTEMPT_TIMEOUT_SECONDS} s").into()),
                    None,
                ),
                Ok(Err(e)) => (e, None),
                Ok(Ok(response)) => {
                    let code = response.status();
                    let headers = response.headers().clone();
                    let bytes = response.into_body().collect_bytes().await;
                    match bytes {
                        Err(e) => (e, None),
                        Ok(bytes) => {
                            let text = String::from_utf8(bytes.to_vec()).map_err(kube::Error::FromUtf8)?;
                            if code.is_success() {
                                return Ok(text);
                            }
                            let status = serde_json::from_str::<kube::core::Status>(&text)
                                .map(|s| if s.code == 0 { s.with_code(code.as_u16()) } else { s })
                                .unwrap_or_else(|_| {
                                    kube::core::Status::failure(text.trim(), "Failed to parse error data")
                                        .with_code(code.as_u16())
                                });
                            if !retryable_status(code.as_u16()) {
                                return Err(kube::Error::Api(status.boxed()));
                            }
                            let wait = retry_after(&headers, Some(&status));
                            (kube::Error::Api(status.boxed()), wait)
                        }
                    }
                }
            };
            let Some(backoff) = delays.next() else { return Err(error) };
            if write {
                self.write_retries.fetch_add(1, Ordering::Relaxed);
            }
            tracing::debug!(error = %crate::server::kube_error_text(&error), "retrying a request");
            tokio::time::sleep(server_wait.map_or(backoff, |w| w.max(backoff))).await;
        }
    }

    /// Sends a write (create, apply, delete): [`Cluster::send`], its retries counted, with
    /// `fieldValidation=Ignore` added when `ignore_validation`.
    async fn write(
        &self,
        request: Result<http::Request<Vec<u8>>, kube::core::request::Error>,
        ignore_validation: bool,
    ) -> kube::Result<String> {
        let mut request = request.map_err(kube::Error::BuildRequest)?;
        if ignore_validation {
            let uri = request.uri().to_string();
            let sep = if uri.contains('?') { '&' } else { '?' };
            *request.uri_mut() = format!("{uri}{sep}fieldValidation=Ignore")
                .parse()
                .map_err(|e: http::uri::InvalidUri| kube::Error::Service(e.into()))?;
        }
        self.send(request, true).await
    }

    /// The labels of the audited namespaces (one `get` with `-n`, else a paginated list).
    ///
    /// # Errors
    /// When Namespaces cannot be read (RBAC).
    pub async fn namespace_labels(&self) -> kube::Result<HashMap<String, BTreeMap<String, String>>> {
        let mut out = HashMap::new();
        if let Some(ns) = &self.namespace {
            let text = self.get_text(Request::new("/api/v1/namespaces").get(ns, &Default::default())).await?;
            let n: Namespace = serde_json::from_str(&text).map_err(kube::Error::SerdeError)?;
            out.insert(ns.clone(), n.metadata.labels.unwrap_or_default());
            return Ok(out);
        }
        let mut token: Option<String> = None;
        loop {
            let mut lp = ListParams::default().limit(self.page_size);
            if let Some(s) = &self.namespace_selector {
                lp = lp.labels(s);
            }
            if let Some(t) = &token {
                lp = lp.continue_token(t);
            }
            let text = self.get_text(Request::new("/api/v1/namespaces").list(&lp)).await?;
            let page: TypedPage<Namespace> = serde_json::from_str(&text).map_err(kube::Error::SerdeError)?;
            for n in page.items {
                if let Some(name) = n.metadata.name
                    && self.covers(&name)
                {
                    out.insert(name, n.metadata.labels.unwrap_or_default());
                }
            }
            match page.metadata.continue_token.filter(|t| !t.is_empty()) {
                Some(t) => token = Some(t),
                None => return Ok(out),
            }
        }
    }

    /// A ConfigMap's `data`; `None` when it does not exist.
    ///
    /// # Errors
    /// Any other failure (forbidden, unreachable).
    pub async fn configmap(
        &self,
        namespace: &str,
        name: &str,
    ) -> kube::Result<Option<BTreeMap<String, String>>> {
        let path = self.path("/api/v1", "configmaps", Some(namespace));
        match self.get_text(Request::new(path).get(name, &Default::default())).await {
            Ok(text) => {
                let cm: ConfigMap = serde_json::from_str(&text).map_err(kube::Error::SerdeError)?;
                Ok(Some(cm.data.unwrap_or_default()))
            }
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The pages of one kind in the audited namespaces.
    pub fn list(&self, kind: WorkloadKind) -> Pages<'_> {
        let (prefix, plural) = resource(kind);
        Pages {
            cluster: self,
            kind,
            path: self.path(prefix, plural, self.namespace.as_deref()),
            selector: self.selector.clone(),
            token: None,
            done: false,
        }
    }

    /// The objects of one kind in one namespace that match a label selector (`None`: all of them),
    /// every page read.
    ///
    /// # Errors
    /// When a list request fails.
    pub async fn list_matching(
        &self,
        kind: WorkloadKind,
        namespace: &str,
        selector: Option<&str>,
    ) -> anyhow::Result<Vec<Listed>> {
        let (prefix, plural) = resource(kind);
        let mut pages = Pages {
            cluster: self,
            kind,
            path: self.path(prefix, plural, Some(namespace)),
            selector: selector.map(str::to_string),
            token: None,
            done: false,
        };
        let mut out = Vec::new();
        while let Some(page) = pages.next_page().await? {
            out.extend(page.into_iter().filter_map(Result::ok));
        }
        Ok(out)
    }

    /// One object by kind, namespace and name, reduced, with the label selector of the Pods it
    /// controls (`spec.selector`); `None` when it does not exist.
    ///
    /// # Errors
    /// Any other failure (forbidden, unreachable), or an object that cannot be read.
    pub async fn get_object(
        &self,
        kind: WorkloadKind,
        namespace: &str,
        name: &str,
    ) -> anyhow::Result<Option<(Listed, Option<String>)>> {
        let (prefix, plural) = resource(kind);
        let path = self.path(prefix, plural, Some(namespace));
        let text = match self.get_text(Request::new(path).get(name, &Default::default())).await {
            Ok(text) => text,
            Err(kube::Error::Api(s)) if s.code == 404 => return Ok(None),
            Err(e) => {
                return Err(e).with_context(|| format!("cannot get {} {namespace}/{name}", kind.as_str()));
            }
        };
        let raw: Box<RawValue> = serde_json::from_str(&text).context("not JSON")?;
        let listed = reduce(kind, &raw).map_err(|e| anyhow::anyhow!("{}", e.message))?;
        let selector = pod_selector(kind, &raw);
        Ok(Some((listed, selector)))
    }

    /// Kubelet events that name a liveness probe (`Unhealthy`, `Killing`), by namespace.
    ///
    /// # Errors
    /// When Events cannot be listed (RBAC): the caller goes on without them.
    pub async fn liveness_events(&self) -> kube::Result<HashMap<String, Vec<LivenessEvent>>> {
        let mut out: HashMap<String, Vec<LivenessEvent>> = HashMap::new();
        let path = self.path("/api/v1", "events", self.namespace.as_deref());
        for reason in ["Killing", "Unhealthy"] {
            let mut token: Option<String> = None;
            loop {
                let mut lp = ListParams::default()
                    .limit(self.page_size)
                    .fields(&format!("involvedObject.kind=Pod,reason={reason}"));
                if let Some(t) = &token {
                    lp = lp.continue_token(t);
                }
                let text = self.get_text(Request::new(path.clone()).list(&lp)).await?;
                let page: TypedPage<Event> = serde_json::from_str(&text).map_err(kube::Error::SerdeError)?;
                for e in &page.items {
                    if let Some(ev) = evidence::liveness_event(e) {
                        let ns = e.involved_object.namespace.clone().or_else(|| e.metadata.namespace.clone());
                        out.entry(ns.unwrap_or_default()).or_default().push(ev);
                    }
                }
                match page.metadata.continue_token.filter(|t| !t.is_empty()) {
                    Some(t) => token = Some(t),
                    None => break,
                }
            }
        }
        Ok(out)
    }
}

impl Cluster {
    /// The reports probegate wrote in the audited namespaces, by (namespace, name), metadata only
    /// (a `PartialObjectMetadataList`: no results cross the wire): what a pass compares hashes
    /// against and what it cleans up.
    ///
    /// # Errors
    /// When the reports cannot be listed (the CRD is missing, RBAC).
    pub async fn report_hashes(&self, api: ReportApi) -> kube::Result<HashMap<(String, String), ReportMeta>> {
        let (prefix, plural) = match api {
            ReportApi::Openreports => ("/apis/openreports.io/v1alpha1", "reports"),
            ReportApi::Wgpolicyk8s => ("/apis/wgpolicyk8s.io/v1alpha2", "policyreports"),
        };
        let path = self.path(prefix, plural, self.namespace.as_deref());
        let mut out = HashMap::new();
        let mut token: Option<String> = None;
        loop {
            let mut lp = ListParams::default().limit(self.page_size).labels(&format!(
                "{}={}",
                reports::MANAGED_BY_LABEL,
                reports::SOURCE
            ));
            if let Some(t) = &token {
                lp = lp.continue_token(t);
            }
            let text = self.get_text(Request::new(path.clone()).list_metadata(&lp)).await?;
            let page: TypedPage<MetaOnly> = serde_json::from_str(&text).map_err(kube::Error::SerdeError)?;
            for item in page.items {
                let m = item.metadata;
                let hash = m.annotations.as_ref().and_then(|a| a.get(reports::HASH_ANNOTATION)).cloned();
                if let (Some(ns), Some(name)) = (m.namespace, m.name)
                    && self.covers(&ns)
                {
                    out.insert((ns, name), ReportMeta { hash });
                }
            }
            match page.metadata.continue_token.filter(|t| !t.is_empty()) {
                Some(t) => token = Some(t),
                None => return Ok(out),
            }
        }
    }

    /// One report's metadata; `None` when it does not exist.
    ///
    /// # Errors
    /// Any other failure.
    pub async fn report_meta(
        &self,
        api: ReportApi,
        namespace: &str,
        name: &str,
    ) -> kube::Result<Option<ReportMeta>> {
        match self.get_text(Request::new(api.path(namespace)).get_metadata(name, &Default::default())).await {
            Ok(text) => {
                let m: MetaOnly = serde_json::from_str(&text).map_err(kube::Error::SerdeError)?;
                let hash =
                    m.metadata.annotations.as_ref().and_then(|a| a.get(reports::HASH_ANNOTATION)).cloned();
                Ok(Some(ReportMeta { hash }))
            }
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Deletes a report; `false` when it was already gone.
    ///
    /// # Errors
    /// When the API refuses (RBAC).
    pub async fn delete_report(&self, api: ReportApi, namespace: &str, name: &str) -> kube::Result<bool> {
        match self.write(Request::new(api.path(namespace)).delete(name, &Default::default()), false).await {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Creates or updates a report with server-side apply (field manager `probegate`).
    ///
    /// # Errors
    /// When the API refuses it.
    pub async fn apply_report(&self, api: ReportApi, report: &serde_json::Value) -> kube::Result<()> {
        let namespace = report["metadata"]["namespace"].as_str().unwrap_or_default();
        let name = report["metadata"]["name"].as_str().unwrap_or_default();
        let params = kube::api::PatchParams::apply("probegate").force();
        let request =
            Request::new(api.path(namespace)).patch(name, &params, &kube::api::Patch::Apply(report));
        self.write(request, self.report_writes.ignores_validation()).await.map(drop)
    }

    /// Creates a report (POST), for one the metadata-only list did not show: the API server then
    /// stores it without reading an old object or merging field sets, which server-side apply does.
    /// One that exists after all (written meanwhile, or one without probegate's label) answers 409
    /// AlreadyExists and is then written with [`Cluster::apply_report`]. Both leave `probegate`
    /// as the field manager.
    ///
    /// # Errors
    /// When the API refuses it.
    pub async fn create_report(&self, api: ReportApi, report: &serde_json::Value) -> kube::Result<()> {
        let namespace = report["metadata"]["namespace"].as_str().unwrap_or_default();
        let params = kube::api::PostParams { field_manager: Some("probegate".into()), ..Default::default() };
        let body = serde_json::to_vec(report).map_err(kube::Error::SerdeError)?;
        let request = Request::new(api.path(namespace)).create(&params, body);
        match self.write(request, self.report_writes.ignores_validation()).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 409 => self.apply_report(api, report).await,
            Err(e) => Err(e),
        }
    }
}

/// The pages of a list, fetched one at a time.
pub struct Pages<'a> {
    cluster: &'a Cluster,
    kind: WorkloadKind,
    path: String,
    selector: Option<String>,
    token: Option<String>,
    done: bool,
}

impl Pages<'_> {
    /// The next page: each object reduced, or why it could not be read; `None` after the last.
    ///
    /// # Errors
    /// When the list request fails (forbidden, an expired `continue` token, unreachable).
    pub async fn next_page(&mut self) -> anyhow::Result<Option<Vec<Result<Listed, InputError>>>> {
        if self.done {
            return Ok(None);
        }
        let mut lp = ListParams::default().limit(self.cluster.page_size);
        if let Some(s) = &self.selector {
            lp = lp.labels(s);
        }
        if let Some(t) = &self.token {
            lp = lp.continue_token(t);
        }
        let kind = self.kind;
        let text = self
            .cluster
            .get_text(Request::new(self.path.clone()).list(&lp))
            .await
            .with_context(|| format!("cannot list {}s", kind.as_str()))?;
        let page: Page = serde_json::from_str(&text).map_err(|e| {
            anyhow::anyhow!(
                "cannot read the {} list: {}",
                kind.as_str(),
                crate::engine::workload::redact_quoted(&e.to_string())
            )
        })?;
        drop(text);
        self.token = page.metadata.continue_token.filter(|t| !t.is_empty());
        self.done = self.token.is_none();
        Ok(Some(page.items.iter().map(|raw| reduce(kind, raw)).collect()))
    }
}

/// Reduces one raw object.
fn reduce(kind: WorkloadKind, raw: &RawValue) -> Result<Listed, InputError> {
    let lean: Lean = serde_json::from_str(raw.get()).map_err(|e| InputError {
        file: "cluster".into(),
        line: None,
        column: None,
        message: format!(
            "a {} without readable metadata: {}",
            kind.as_str(),
            crate::engine::workload::redact_quoted(&e.to_string())
        ),
    })?;
    let workload = Workload::from_json(kind, raw.get()).map_err(|e| InputError {
        file: "cluster".into(),
        line: None,
        column: None,
        message: format!(
            "{} uid {}: {}",
            kind.as_str(),
            lean.metadata.uid,
            crate::cli::input::redact_values(&e.to_string())
        ),
    })?;
    let controller =
        lean.metadata.owner_references.iter().find(|o| o.controller == Some(true)).and_then(|o| {
            WorkloadKind::from_api_version_kind(&o.api_version, &o.kind)
                .filter(|k| !k.is_pod())
                .map(|k| (k, o))
        });
    let parent = controller.map(|(_, o)| o.uid.clone());
    let parent_ref = controller.map(|(k, o)| (k, o.name.clone()));
    let pod_status = if kind.is_pod() {
        serde_json::from_str::<PodLean>(raw.get()).ok().and_then(|p| p.status)
    } else {
        None
    };
    let mirror =
        kind.is_pod() && workload.metadata.annotation(crate::admission::MIRROR_POD_ANNOTATION).is_some();
    Ok(Listed {
        uid: lean.metadata.uid,
        name: workload.metadata.name.clone().unwrap_or_default(),
        namespace: workload.metadata.namespace.clone().unwrap_or_default(),
        parent,
        parent_ref,
        mirror,
        workload,
        pod_status,
    })
}

/// The label selector (kubectl syntax) of the Pods a controller manages: `spec.selector` as a
/// `LabelSelector` (`matchLabels`, `matchExpressions` with `In`, `NotIn`, `Exists`,
/// `DoesNotExist`: Kubernetes' label selector semantics), or a ReplicationController's map.
/// `None` for Pods, CronJobs (no selector: their Jobs have one each) and selectors it cannot
/// express, where the caller lists every object of the namespace instead.
pub fn pod_selector(kind: WorkloadKind, raw: &RawValue) -> Option<String> {
    #[derive(Deserialize)]
    struct Spec {
        #[serde(default)]
        spec: Option<SelectorSpec>,
    }
    #[derive(Deserialize)]
    struct SelectorSpec {
        #[serde(default)]
        selector: Option<serde_json::Value>,
    }
    if kind.is_pod() || kind == WorkloadKind::CronJob {
        return None;
    }
    let selector = serde_json::from_str::<Spec>(raw.get()).ok()?.spec?.selector?;
    let mut parts = Vec::new();
    let labels = if kind == WorkloadKind::ReplicationController {
        selector.as_object()?.clone()
    } else {
        selector.get("matchLabels").and_then(|m| m.as_object()).cloned().unwrap_or_default()
    };
    for (k, v) in &labels {
        parts.push(format!("{k}={}", v.as_str()?));
    }
    if kind != WorkloadKind::ReplicationController {
        for e in selector.get("matchExpressions").and_then(|m| m.as_array()).into_iter().flatten() {
            let key = e.get("key")?.as_str()?;
            let values: Vec<&str> = e
                .get("values")
                .and_then(|v| v.as_array())
                .map(|v| v.iter().filter_map(|x| x.as_str()).collect())
                .unwrap_or_default();
            parts.push(match e.get("operator")?.as_str()? {
                "In" => format!("{key} in ({})", values.join(",")),
                "NotIn" => format!("{key} notin ({})", values.join(",")),
                "Exists" => key.to_string(),
                "DoesNotExist" => format!("!{key}"),
                _ => return None,
            });
        }
    }
    // An empty selector selects nothing for a controller: list everything and filter by owner.
    (!parts.is_empty()).then(|| parts.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request that took its slot and is then never polled again (a list stream paused while its
    /// consumer awaits a ConfigMap read) blocks no other request (the audit deadlocked on it).
    #[tokio::test]
    async fn a_waiting_request_left_unpolled_blocks_no_other() {
        let limit = RateLimit::new(20.0);
        limit.wait().await;
        let mut stalled = Box::pin(limit.wait());
        std::future::poll_fn(|cx| {
            assert!(stalled.as_mut().poll(cx).is_pending(), "the second slot is 50 ms away");
            std::task::Poll::Ready(())
        })
        .await;
        tokio::time::timeout(Duration::from_secs(10), limit.wait())
            .await
            .expect("a third request waits for its own slot, not for the stalled one");
        drop(stalled);
    }

    #[tokio::test]
    async fn requests_are_spaced_by_the_period() {
        let limit = RateLimit::new(50.0);
        let start = tokio::time::Instant::now();
        for _ in 0..5 {
            limit.wait().await;
        }
        // Five slots: the first at once, then four periods of 20 ms.
        assert!(start.elapsed() >= Duration::from_millis(80), "{:?}", start.elapsed());
    }

    #[test]
    fn namespace_names_are_checked_before_they_reach_a_path() {
        assert!(valid_namespace("shop-1"));
        for bad in ["", "a/b", "A", "-a", "a-", "..", &"a".repeat(64)] {
            assert!(!valid_namespace(bad), "{bad}");
        }
    }

    #[test]
    fn an_object_is_reduced_to_its_workload_uid_and_audited_controller() {
        let raw = RawValue::from_string(
            serde_json::json!({
                "metadata": {"name": "api-1", "namespace": "shop", "uid": "u1", "ownerReferences": [
                    {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "api", "uid": "rs1", "controller": true}]},
                "spec": {"containers": [{"name": "api", "image": "i"}]},
                "status": {"containerStatuses": [{"name": "api", "restartCount": 2, "ready": true, "image": "i", "imageID": ""}]}
            })
            .to_string(),
        )
        .unwrap();
        let l = reduce(WorkloadKind::Pod, &raw).unwrap();
        assert_eq!((l.uid.as_str(), l.name.as_str(), l.namespace.as_str()), ("u1", "api-1", "shop"));
        assert_eq!(l.parent.as_deref(), Some("rs1"));
        assert_eq!(l.parent_ref, Some((WorkloadKind::ReplicaSet, "api".to_string())));
        assert_eq!(l.pod_status.unwrap().container_statuses.unwrap()[0].restart_count, 2);
        // A custom resource's controller is not audited: the object carries its own findings.
        let raw = RawValue::from_string(
            serde_json::json!({
                "metadata": {"name": "api", "namespace": "shop", "uid": "u2", "ownerReferences": [
                    {"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "name": "api", "uid": "r1", "controller": true}]},
                "spec": {"template": {"spec": {"containers": [{"name": "api", "image": "i"}]}}}
            })
            .to_string(),
        )
        .unwrap();
        let l = reduce(WorkloadKind::ReplicaSet, &raw).unwrap();
        assert_eq!(l.parent, None);
        assert!(l.pod_status.is_none());
    }
}

#[cfg(test)]
mod selector_tests {
    use super::*;

    fn raw(v: serde_json::Value) -> Box<RawValue> {
        RawValue::from_string(v.to_string()).unwrap()
    }

    #[test]
    fn a_controller_selector_becomes_a_label_selector() {
        let d = raw(serde_json::json!({"spec": {"selector": {"matchLabels": {"app": "api", "tier": "web"},
            "matchExpressions": [{"key": "env", "operator": "In", "values": ["a", "b"]},
                {"key": "canary", "operator": "DoesNotExist"}, {"key": "team", "operator": "Exists"},
                {"key": "zone", "operator": "NotIn", "values": ["z"]}]}}}));
        assert_eq!(
            pod_selector(WorkloadKind::Deployment, &d).as_deref(),
            Some("app=api,tier=web,env in (a,b),!canary,team,zone notin (z)")
        );
        let rc = raw(serde_json::json!({"spec": {"selector": {"app": "legacy"}}}));
        assert_eq!(pod_selector(WorkloadKind::ReplicationController, &rc).as_deref(), Some("app=legacy"));
        // Pods and CronJobs have none; an unknown operator or an empty selector lists everything.
        assert_eq!(pod_selector(WorkloadKind::Pod, &d), None);
        assert_eq!(pod_selector(WorkloadKind::CronJob, &d), None);
        let odd = raw(
            serde_json::json!({"spec": {"selector": {"matchExpressions": [{"key": "k", "operator": "Gt"}]}}}),
        );
        assert_eq!(pod_selector(WorkloadKind::ReplicaSet, &odd), None);
        assert_eq!(
            pod_selector(WorkloadKind::Job, &raw(serde_json::json!({"spec": {"selector": {}}}))),
            None
        );
    }

    /// The first 4 bytes of SHA-256("default") (37a8eec1...), big-endian, modulo 1000.
    const SHARD_OF_DEFAULT: u32 = 0x37a8_eec1 % 1000;

    #[test]
    fn an_empty_metadata_list_has_no_items() {
        let page: TypedPage<MetaOnly> =
            serde_json::from_str(r#"{"kind":"PartialObjectMetadataList","metadata":{},"items":null}"#)
                .unwrap();
        assert!(page.items.is_empty());
    }

    #[test]
    fn namespaces_spread_over_shards_and_each_has_one() {
        let names: Vec<String> = (0..1000).map(|i| format!("team-{i}")).collect();
        let mut counts = [0usize; 4];
        for n in &names {
            let s = shard_of(n, 4);
            counts[s as usize] += 1;
            let owners = (0..4).filter(|&i| Shard { index: i, count: 4 }.owns(n)).count();
            assert_eq!(owners, 1, "{n}");
        }
        assert!(counts.iter().all(|&c| c > 150), "{counts:?}");
        // Stable: the same name, the same shard on every build (a changed hash would move every
        // namespace to another replica).
        assert_eq!(shard_of("default", 1000), SHARD_OF_DEFAULT);
        assert_eq!(shard_of("anything", 1), 0);
    }
}

/// Retries, against a local fake of the one report endpoint: a real API server does not answer
/// 500 or 429 on demand (the normal path runs against one in the e2e tests).
#[cfg(test)]
mod retry_tests {
    use std::sync::Mutex;
    use std::time::Instant;

    use axum::http::StatusCode;
    use axum::response::IntoResponse;

    use super::*;

    /// An HTTP status and a `Retry-After`.
    type Answer = (u16, Option<&'static str>);

    /// What the fake answers, in order (then 201), and the query strings it saw.
    #[derive(Clone, Default)]
    struct Script {
        answers: Arc<Mutex<Vec<Answer>>>,
        seen: Arc<Mutex<Vec<String>>>,
    }

    async fn fake(script: Script) -> String {
        let app = axum::Router::new().route(
            "/apis/openreports.io/v1alpha1/namespaces/shop/reports",
            axum::routing::post(move |uri: axum::http::Uri| {
                let script = script.clone();
                async move {
                    script.seen.lock().unwrap().push(uri.query().unwrap_or_default().to_string());
                    let next = {
                        let mut a = script.answers.lock().unwrap();
                        (!a.is_empty()).then(|| a.remove(0))
                    };
                    let (code, retry_after) = next.unwrap_or((201, None));
                    let body = if code == 201 {
                        r#"{"apiVersion":"openreports.io/v1alpha1","kind":"Report","metadata":{"name":"r"}}"#
                            .to_string()
                    } else {
                        serde_json::json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                            "message": "etcdserver: request timed out", "code": code})
                        .to_string()
                    };
                    let mut response = (StatusCode::from_u16(code).unwrap(), body).into_response();
                    if let Some(s) = retry_after {
                        response.headers_mut().insert("retry-after", s.parse().unwrap());
                    }
                    response
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        format!("http://{addr}")
    }

    fn cluster(url: &str, report_writes: ReportWrites) -> Cluster {
        let mut config = kube::Config::new(url.parse().unwrap());
        config.default_retry = false;
        let opts = ClusterOptions {
            context: None,
            namespace: None,
            all_namespaces: true,
            selector: None,
            qps: 1000.0,
            page_size: 500,
            namespace_selector: None,
            shard: None,
            writes_in_flight: 1,
            report_writes,
        };
        Cluster::with_client(kube::Client::try_from(config).unwrap(), None, &opts).unwrap()
    }

    fn report() -> serde_json::Value {
        serde_json::json!({"apiVersion": "openreports.io/v1alpha1", "kind": "Report",
            "metadata": {"name": "r", "namespace": "shop"}})
    }

    async fn scripted(answers: Vec<Answer>) -> (Script, Cluster) {
        let script = Script::default();
        *script.answers.lock().unwrap() = answers;
        let url = fake(script.clone()).await;
        (script, cluster(&url, ReportWrites::Create))
    }

    #[tokio::test]
    async fn a_500_is_retried_and_counted() {
        let (script, c) = scripted(vec![(500, None)]).await;
        c.create_report(ReportApi::Openreports, &report()).await.unwrap();
        assert_eq!(c.write_retries(), 1);
        let seen = script.seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 2, "{seen:?}");
        assert!(
            seen.iter().all(|q| q.contains("fieldManager=probegate") && !q.contains("fieldValidation")),
            "{seen:?}"
        );
        // The benchmark's create-ignore asks the server to skip its strict field check.
        let script = Script::default();
        let c = cluster(&fake(script.clone()).await, ReportWrites::CreateIgnore);
        c.create_report(ReportApi::Openreports, &report()).await.unwrap();
        let seen = script.seen.lock().unwrap().clone();
        assert!(
            seen.len() == 1
                && seen
                    .iter()
                    .all(|q| q.contains("fieldValidation=Ignore") && q.contains("fieldManager=probegate")),
            "{seen:?}"
        );
    }

    #[tokio::test]
    async fn a_429_waits_for_its_retry_after() {
        let (script, c) = scripted(vec![(429, Some("1"))]).await;
        let started = Instant::now();
        c.create_report(ReportApi::Openreports, &report()).await.unwrap();
        // The backoff alone would have waited under 0.5 s.
        assert!(started.elapsed() >= Duration::from_secs(1), "{:?}", started.elapsed());
        assert_eq!((c.write_retries(), script.seen.lock().unwrap().len()), (1, 2));
    }

    #[tokio::test]
    async fn retries_are_bounded_and_a_4xx_is_not_retried() {
        let (script, c) = scripted(vec![(503, None); ATTEMPTS + 1]).await;
        let e = c.create_report(ReportApi::Openreports, &report()).await.unwrap_err();
        assert!(matches!(&e, kube::Error::Api(s) if s.code == 503), "{e}");
        assert_eq!((c.write_retries(), script.seen.lock().unwrap().len()), (ATTEMPTS as u64 - 1, ATTEMPTS));
        let (script, c) = scripted(vec![(422, None)]).await;
        let e = c.create_report(ReportApi::Openreports, &report()).await.unwrap_err();
        assert!(matches!(&e, kube::Error::Api(s) if s.code == 422), "{e}");
        assert_eq!((c.write_retries(), script.seen.lock().unwrap().len()), (0, 1));
    }

    #[tokio::test]
    async fn a_connection_that_fails_is_retried() {
        // A port nobody listens on (bound, then closed).
        let addr = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
        let c = cluster(&format!("http://{addr}"), ReportWrites::Create);
        assert!(c.create_report(ReportApi::Openreports, &report()).await.is_err());
        assert_eq!(c.write_retries(), ATTEMPTS as u64 - 1);
    }

    #[test]
    fn retry_after_comes_from_the_header_else_the_status_and_is_capped() {
        let mut h = http::HeaderMap::new();
        assert_eq!(retry_after(&h, None), None);
        let status: kube::core::Status = serde_json::from_value(serde_json::json!({"status": "Failure",
            "code": 429, "reason": "TooManyRequests", "details": {"retryAfterSeconds": 2}}))
        .unwrap();
        assert_eq!(retry_after(&h, Some(&status)), Some(Duration::from_secs(2)));
        h.insert(http::header::RETRY_AFTER, "3".parse().unwrap());
        assert_eq!(retry_after(&h, Some(&status)), Some(Duration::from_secs(3)));
        h.insert(http::header::RETRY_AFTER, "86400".parse().unwrap());
        assert_eq!(retry_after(&h, None), Some(Duration::from_secs(MAX_RETRY_AFTER_SECONDS)));
        assert!(retryable_status(500) && retryable_status(504) && retryable_status(429));
        assert!(!retryable_status(409) && !retryable_status(404) && !retryable_status(422));
        let delays: Vec<Duration> = retry_delays().collect();
        assert_eq!(delays.len(), ATTEMPTS - 1);
        assert!(
            delays.iter().all(|d| *d >= Duration::from_millis(200) && *d <= Duration::from_secs(10)),
            "{delays:?}"
        );
    }
}
