//! The HTTPS admission webhook server: a thin shell around [`crate::admission`].
//!
//! Endpoints (TLS only; plain HTTP is not served):
//! - `POST /validate`, `POST /mutate`: `admission.k8s.io/v1` AdmissionReview in and out;
//! - `GET /healthz`: liveness, the process answers;
//! - `GET /readyz`: readiness, the policy and the certificate are loaded.
//!
//! HTTP/1.1 keep-alive and HTTP/2 (ALPN `h2`) are both served. Bodies over [`MAX_BODY_BYTES`] get
//! 413; every request is bounded by [`REQUEST_TIMEOUT`].

pub mod budget;
pub mod configmaps;
pub mod conn;
pub mod drain;
pub mod fair;
pub mod gate;
pub mod kubeclient;
mod logfmt;
pub mod logsink;
pub mod metrics;
pub mod namespaces;
pub mod parses;
pub mod reload;
pub mod selfmanaged;
pub mod tls;
pub mod waiting;
pub use logfmt::set_json_fields;
pub(crate) use logfmt::{log_field, log_list};
pub mod watch;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use arc_swap::{ArcSwap, ArcSwapOption};
use axum::Extension;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Serialize;

use crate::admission::{self, AdmissionRequest, Decision, Endpoint, ReviewError};
use crate::engine::{ConfigMapSource, StaticConfigMaps};
use crate::policy::{Action, Policy};
use configmaps::ConfigMapResolver;
use gate::{Counted, error_response};
use metrics::Metrics;
use namespaces::NamespaceLabels;

/// Largest AdmissionReview body accepted: 4 MiB. etcd stores objects of up to 1.5 MiB by default
/// (etcd `--max-request-bytes`), and an UPDATE review carries the object and the old object, so a
/// legitimate review stays under 3 MiB plus its envelope. Anything larger is refused with 413
/// before it is buffered whole.
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// Bound on one request's handling: 4 s, under the API server's webhook `timeoutSeconds`
/// (deploy/ sets 5 s; the default is 10 s), so a stuck request answers 408 before the API server
/// gives up on the webhook.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(4);

/// Bodies up to this size are evaluated on the async worker (tens of microseconds); larger ones
/// move to the blocking pool so that parsing them does not stall other connections. So do small
/// ones with exec handlers (see [`off_the_async_workers`]).
pub const INLINE_BODY_BYTES: usize = 64 * 1024;

/// A request's places in the expensive lane and among the blocking evaluations, with the gauge
/// that counts it as running, shared with its blocking tasks: released when the last of them ends.
type Held = Arc<Places>;

/// What a request evaluated on the blocking pool holds (see [`Held`]).
struct Places {
    _expensive: Option<fair::Place>,
    _blocking: Option<fair::Place>,
    _running: Option<metrics::Raised>,
}

/// Bodies over this size that go to the blocking pool are *expensive*: 16 KiB. The size only sorts
/// reviews: an evaluation's cost is bounded by the shell analysis's work units
/// (`engine::exec::MAX_OBJECT_WORK_UNITS` per object, at most about 20 ms in a release build), not
/// by its script bytes, and a few KiB of script can spend them all (s12, docs/benchmarks.md, "Cost
/// shapes"). An ordinary Pod or template review is 3 to 11 KiB with its managed fields
/// (tests/fixtures/admission); the costliest known reviews (14 liveness scripts expanding 1000 words
/// 160 times, issue 9, 37 KiB) are larger.
pub const EXPENSIVE_BODY_BYTES: usize = 16 * 1024;

/// Most expensive reviews evaluated at once: 1 (see [`Lane`]).
pub const MAX_EXPENSIVE_EVALUATIONS: usize = 1;

/// Where a review is evaluated, from its cost estimated before it is parsed (its body's size and
/// whether it may hold exec handlers, see [`off_the_async_workers`]):
/// - no exec handler, body up to [`INLINE_BODY_BYTES`]: inline on the async worker that read it
///   (tens of microseconds), never waiting;
/// - [`Lane::Small`]: exec handlers, body up to [`EXPENSIVE_BODY_BYTES`]: on the blocking pool,
///   one of [`MAX_BLOCKING_EVALUATIONS`] places;
/// - [`Lane::Expensive`]: exec handlers and a larger body, or any body over
///   [`INLINE_BODY_BYTES`]: first a place among [`MAX_EXPENSIVE_EVALUATIONS`] (in arrival order),
///   then one on the blocking pool. However many expensive reviews arrive, they hold at most one
///   of the pool's places and wait in their own queue, so a small review never queues behind them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    /// On the async worker.
    Inline,
    /// On the blocking pool, not waiting behind expensive reviews.
    Small,
    /// On the blocking pool, one at a time.
    Expensive,
}

impl Lane {
    /// The lane of a review with this body.
    pub fn of(body: &[u8]) -> Lane {
        if !off_the_async_workers(body) {
            Lane::Inline
        } else if body.len() > EXPENSIVE_BODY_BYTES {
            Lane::Expensive
        } else {
            Lane::Small
        }
    }
}

/// A place in `limit` for a request of connection `peer` when `needed` (`None` when not), in
/// the connection's turn; [`fair::Busy`] when too many wait already ([`fair`]).
async fn place(
    limit: &Arc<fair::FairPlaces>,
    needed: bool,
    peer: fair::Key,
) -> Result<Option<fair::Place>, fair::Busy> {
    if needed { limit.acquire(peer).await.map(Some) } else { Ok(None) }
}

/// Most reviews waiting for a place on the blocking pool ([`MAX_BLOCKING_EVALUATIONS`]), all
/// connections together: 256. A small review's evaluation takes a few milliseconds (at most about
/// 20 ms of shell analysis), so four places serve a few hundred to a few thousand within the 4 s
/// request bound; past this, a review from the connection with the most waiting is answered 503
/// at once ([`fair`]) instead of holding its body (and its share of the body budget) until its
/// 408. s22 break-it pass: 2,751 waited, and the bodies waiting for them took the server past
/// deploy/'s 128 MiB.
pub const MAX_WAITING_EVALUATIONS: usize = 256;

/// Most expensive reviews waiting for their turn ([`MAX_EXPENSIVE_EVALUATIONS`]), all connections
/// together: 32. They are evaluated one at a time, each up to tens of milliseconds (a 3 MB review
/// is parsed in about as long again), so not many more than this can be evaluated within the 4 s
/// request bound; the others are answered 503 at once, as above.
pub const MAX_WAITING_EXPENSIVE: usize = 32;

/// The connection a request came on (the peer's address and port; `None` when unknown), put in
/// the request's extensions by [`gate::shell`]: the evaluation places are shared fairly between
/// connections ([`fair`]).
#[derive(Clone, Copy, Debug)]
pub struct Peer(pub fair::Key);

/// Whether a body is evaluated on the blocking pool rather than inline on an async worker: a body
/// over [`INLINE_BODY_BYTES`], or one that may hold an exec handler (an `"exec"` key, or any
/// `\u` escape that could spell one), whose shell analysis can take up to tens of milliseconds
/// (bounded by `exec::MAX_OBJECT_ANALYSIS_BYTES`). The async workers (one per core) then stay
/// free for every other request and for `/healthz`.
fn off_the_async_workers(body: &[u8]) -> bool {
    // Built once: `memmem::find` builds its searcher on every call (about a tenth of the
    // server's own work per request around the review, perf under h2load).
    static EXEC: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"exec\""));
    static ESCAPE: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\\u"));
    body.len() > INLINE_BODY_BYTES || EXEC.find(body).is_some() || ESCAPE.find(body).is_some()
}

/// Most bytes of small bodies (up to [`INLINE_BODY_BYTES`], by their `Content-Length`) being
/// received and evaluated at once, all connections together: 16 MiB, 256 bodies of the largest
/// small size, some 1,500 ordinary reviews (3 to 11 KiB; the API server has tens in flight), more
/// than the evaluation queues take ([`MAX_WAITING_EVALUATIONS`]: 256 waiting). HTTP/2
/// multiplexes up to [`H2_MAX_CONCURRENT_STREAMS`] requests on one connection; this bounds what
/// they can hold. It was 64 MiB (a body on each of [`conn::MAX_CONNECTIONS`] HTTP/1.1
/// connections) until s21: with [`WAITING_BODY_BYTES`] beside it, 32 HTTP/2 connections of 64
/// streams that each sent 64 KiB less a byte of a 64 KiB body and stalled took the server to
/// 118 MB, near deploy/'s 128 MiB limit (docs/server.md has the measurements). A body still
/// arriving [`budget::SMALL_BODY_STALL_AFTER`] after it was admitted loses its share to a request
/// that waits for room (s21 break-it pass: stalled streams filled it and held small reviews for
/// up to 4 s; see [`budget`]). 32 MiB from s21 to s26: with the other budgets and the unread data
/// of every connection's window ([`H2_CONNECTION_WINDOW_BYTES`]) the bytes a flood can make the
/// server buffer are 16 + 12 + 32 MiB, under deploy/'s 128 MiB beside the server's own 20 MB
/// (docs/server.md, "Memory across connections").
pub const SMALL_BODY_BUDGET_BYTES: usize = 16 * 1024 * 1024;

/// Most requests in flight on one HTTP/2 connection (`SETTINGS_MAX_CONCURRENT_STREAMS`; hyper's
/// default is 200): 32. Go's HTTP/2 client, the API server's, opens another connection when a
/// server's limit is reached. It was 64 until s24: with the 1 MiB connection window, halving it
/// brought the peak of the s24 flood (64 connections of 64 streams of 2.8 MB reviews) from 72 to
/// 95 MB down to 43 to 55 MB (docs/server.md). Each request in flight costs a few KiB (its
/// headers, its future): s26 break-it pass, 1,024 connections of 32 streams that only sent
/// HEADERS held 115 to 147 MB; since s27 the connection cap ([`conn::MAX_CONNECTIONS`]) bounds
/// that (docs/server.md, "Memory across connections").
pub const H2_MAX_CONCURRENT_STREAMS: u32 = 32;

/// Largest HTTP/2 header list accepted (`SETTINGS_MAX_HEADER_LIST_SIZE`, the decoded headers of
/// one request): 8 KiB. An API server's webhook request has a few hundred bytes of headers.
pub const H2_MAX_HEADER_LIST_BYTES: u32 = 8 * 1024;

/// Largest read buffer of an HTTP/1.1 connection (hyper's `max_buf_size`; its default is about
/// 400 KB): 16 KiB. It bounds a request's headers (past it, 431) and what a client that pipelines
/// requests without reading the answers makes the server buffer: s26 break-it pass, 1,000 such
/// connections took the server to 387 MB. A body is read through it in pieces.
pub const HTTP1_MAX_BUF_BYTES: usize = 16 * 1024;

/// HTTP/2 flow-control window of one stream: 128 KiB. A body arrives one window per round trip
/// at most (h2 grants more once half of it is read), so this sets how long a large review takes
/// to arrive over a slow path: a 3 MB review over a 20 ms round trip took about 0.5 s (curl
/// through a delay proxy; HTTP/1.1, not flow-controlled, 0.2 s), where the 8 KiB window of s9
/// to s19 needed hundreds of round trips and hit the 4 s request bound (408: under
/// `failurePolicy: Ignore`, admitted unchecked). docs/server.md has the measurements.
///
/// A stream whose body waits, unread, for its share of a body budget holds up to one stream
/// window of its connection's window until it is read: the bodies waiting on one connection may
/// hold at most [`WAITING_PER_CONNECTION_BYTES`], half the connection window (checked at compile
/// time), so that they never fill it and stall the other bodies on their connection (issue 9:
/// with 64 KiB stream windows in a 512 KiB connection window, eight waiting 737 KB bodies
/// stalled every other stream until the request timeout).
///
/// 128 KiB since s27 (256 KiB from s20): the connection window is two of them, see
/// [`H2_CONNECTION_WINDOW_BYTES`]. A 3 MB review then arrives in a few dozen round trips (h2
/// grants more once half a window is read), within the 4 s bound over a 20 ms round trip; with
/// 64 KiB, tests/server_http2.rs's 3 MB review through a 20 ms round trip met the bound (408) in
/// a debug build on the loaded 2-core machine.
pub const H2_STREAM_WINDOW_BYTES: u32 = 128 * 1024;

/// HTTP/2 flow-control window of one connection: 256 KiB, two stream windows (hyper's default is
/// 1 MiB). It bounds the request data one connection can make the server hold before the
/// server reads it (data of streams not yet read, refused or waiting); bodies being read count
/// against the body budgets instead. It was 16 MiB (a window for each of 64 streams) from s20 to
/// s23: under the s24 flood (64 connections of 64 streams of 2.8 MB reviews, h2load) the data the
/// clients sent for streams opened faster than they were refused took the server to 95 to
/// 154 MB, over deploy/'s 128 MiB; with 1 MiB (and [`H2_MAX_CONCURRENT_STREAMS`] at 32) the peak
/// was 43 to 55 MB (docs/server.md). 256 KiB since s27, two stream windows: every connection
/// together ([`conn::MAX_CONNECTIONS`]) can make the server hold at most 32 MiB of request data
/// it has not read, where 1,024 connections of 1 MiB could hold 1 GiB (s26 break-it pass: 1,000
/// HTTP/2 connections of 32 streams of 10 KB reviews took the server to 325 to 345 MB, over
/// deploy/'s 128 MiB limit). Only the API server should reach the webhook's port (docs/server.md,
/// NetworkPolicy).
pub const H2_CONNECTION_WINDOW_BYTES: u32 = 256 * 1024;

/// Most bytes of request body data that requests waiting for room in a body budget may make the
/// server hold unread on one connection (counted as for [`WAITING_BODY_BYTES`]): 128 KiB (512 KiB
/// until s27), half of [`H2_CONNECTION_WINDOW_BYTES`] (one stream window: one waiting large body,
/// or two small ones, each counted at least [`INLINE_BODY_BYTES`]). A request that would take its
/// connection past it is answered 503 at once, its stream reset after the answer; the other
/// half of the window stays for the bodies being read beside them (a small review's, say), which
/// waiting streams could otherwise stall until the 4 s request bound (issue 9, s24 item 1).
pub const WAITING_PER_CONNECTION_BYTES: usize = H2_CONNECTION_WINDOW_BYTES as usize / 2;

// Waiting bodies leave half of their connection's window to the others, and one waiting body
// (one stream window at most) always fits.
const _: () = assert!(2 * WAITING_PER_CONNECTION_BYTES <= H2_CONNECTION_WINDOW_BYTES as usize);
const _: () = assert!(WAITING_PER_CONNECTION_BYTES >= H2_STREAM_WINDOW_BYTES as usize);

// The largest body accepted arrives in at most 32 stream windows (about 64 round trips with h2's
// half-window updates), inside the request bound over a 20 ms round trip.
const _: () = assert!(H2_STREAM_WINDOW_BYTES as usize * 32 >= MAX_BODY_BYTES);

// What all connections can make the server hold unread: at most 32 MiB.
const _: () = assert!(H2_CONNECTION_WINDOW_BYTES as usize * conn::MAX_CONNECTIONS <= 32 * 1024 * 1024);

/// Most requests evaluated on the blocking pool at once (large bodies and bodies with exec
/// handlers); more wait, within [`REQUEST_TIMEOUT`]. Each is bounded in time by the exec
/// analysis budget; this bounds how many compete with the async workers for the 2 cores. At most
/// [`MAX_EXPENSIVE_EVALUATIONS`] of them are expensive (see [`Lane`]).
pub const MAX_BLOCKING_EVALUATIONS: usize = 4;

/// Most bytes of large bodies (over [`INLINE_BODY_BYTES`]) being received or evaluated at once,
/// all connections together: 12 MiB, three bodies of the largest size accepted (four UPDATE
/// reviews of 2.8 MB, a Pod at etcd's limit twice). Bodies over [`INLINE_BODY_BYTES`] are
/// evaluated one at a time, so more room only buffers more bodies that wait: with 32 MiB, sixteen
/// concurrent 2.8 MB UPDATE reviews peaked at 121 to 137 MiB, over deploy/'s 128 MiB limit
/// (`benches/memory.rs`). A request whose body
/// is larger than [`INLINE_BODY_BYTES`] by its `Content-Length` (or of unknown length, counted as
/// [`MAX_BODY_BYTES`]) waits for room before its body is read, within [`REQUEST_TIMEOUT`]; the
/// small reviews that are nearly all of an API server's traffic draw on their own budget
/// ([`SMALL_BODY_BUDGET_BYTES`]) and never wait for this one. Without it, many
/// slow uploads of 4 MiB each hold that much memory apiece (100 of them held 510 MB).
pub const LARGE_BODY_BUDGET_BYTES: usize = 12 * 1024 * 1024;

/// Most bytes of request body data that requests waiting for room in a body budget
/// ([`LARGE_BODY_BUDGET_BYTES`], [`SMALL_BODY_BUDGET_BYTES`]) can make the server hold unread, all
/// connections together: 8 MiB, 64 stream windows (16 MiB, also 64 stream windows, until s27,
/// when the stream window was 256 KiB; the 128 connections' own bound,
/// [`WAITING_PER_CONNECTION_BYTES`] each, is 16 MiB). A waiting HTTP/2
/// request's body is unread, but the h2 crate keeps what its client sends within the stream
/// window: each waiting request counts its stream window, or its declared length when that is
/// smaller (the h2 crate refuses data past it), and at least [`INLINE_BODY_BYTES`]: the DATA frames
/// h2 holds are slices of the connection's read buffer and keep all of it alive, however few bytes
/// they carry (s23). A request that would take the total past this
/// bound is answered 503 at once, before its body is read (its unread body is then drained and
/// discarded, see [`drain`]), instead of waiting.
///
/// Without it the waiting bodies were bounded per connection only ([`H2_CONNECTION_WINDOW_BYTES`]):
/// 32 HTTP/2 connections of 64 streams, each sending one stream window of a 4 MiB body and then
/// nothing, took the server to 533 MB (s20 break-it pass; eight such connections passed deploy/'s
/// 128 MiB limit). Now large bodies can hold [`LARGE_BODY_BUDGET_BYTES`] being read plus this
/// much waiting. Refusing costs nothing the API server would have had: bodies over
/// [`INLINE_BODY_BYTES`] are evaluated one at a time, so of 64 large reviews waiting, the last
/// ones would have met the 4 s request bound (408) anyway. HTTP/1.1 requests are counted the
/// same way (hyper reads their body only when asked, leaving the rest in the kernel's socket
/// buffer; one rule for both keeps the count simple and errs on the safe side).
pub const WAITING_BODY_BYTES: usize = 8 * 1024 * 1024;

/// A policy with where it came from and the hash of its text.
#[derive(Debug, Clone)]
pub struct LoadedPolicy {
    /// The parsed policy.
    pub policy: Policy,
    /// First 16 hex digits of the SHA-256 of the policy text.
    pub hash: String,
    /// A file path, or `<embedded default>`.
    pub source: String,
}

impl LoadedPolicy {
    /// Wraps a parsed policy and its text.
    pub fn new(policy: Policy, text: &str, source: impl Into<String>) -> LoadedPolicy {
        LoadedPolicy { policy, hash: policy_hash(text), source: source.into() }
    }
}

/// First 16 hex digits of the SHA-256 of a policy text.
pub fn policy_hash(text: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    digest.as_ref().iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// Shared state of the server.
pub struct AppState {
    policy: ArcSwap<LoadedPolicy>,
    namespaces: Arc<dyn NamespaceLabels>,
    /// The metrics registry.
    pub metrics: Metrics,
    ready: AtomicBool,
    started: Instant,
    /// Milliseconds since `started` at the serving loop's last heartbeat.
    heartbeat_ms: AtomicU64,
    /// Admits [`MAX_EXPENSIVE_EVALUATIONS`] expensive reviews (see [`Lane`]) into evaluation at
    /// a time, bodies over [`INLINE_BODY_BYTES`] among them, one connection after another.
    expensive: Arc<fair::FairPlaces>,
    /// Bytes of large bodies that may be received at once (see [`LARGE_BODY_BUDGET_BYTES`]).
    large_body_budget: budget::BodyBudget,
    /// Bytes of small bodies that may be received at once (see [`SMALL_BODY_BUDGET_BYTES`]); a
    /// body stalled for [`budget::SMALL_BODY_STALL_AFTER`] loses its share to one that waits.
    small_body_budget: budget::BodyBudget,
    /// Unread bytes that bodies waiting for their budget may hold (see [`WAITING_BODY_BYTES`]).
    waiting_room: tokio::sync::Semaphore,
    /// The same, per connection (see [`WAITING_PER_CONNECTION_BYTES`]).
    waiting_per_connection: waiting::PerConnection,
    /// Evaluations on the blocking pool (see [`MAX_BLOCKING_EVALUATIONS`]), one connection after
    /// another ([`fair`]).
    blocking_evaluations: Arc<fair::FairPlaces>,
    /// `--resolve-configmaps`: where liveness scripts' ConfigMaps are read from (`None`: nowhere).
    configmaps: ArcSwapOption<ConfigMapResolver>,
    /// One rate-limited line per refused request.
    refusal_log: gate::RefusalLog,
    /// The parse caches handed to evaluations ([`parses::PARSE_CACHES`]).
    pub parses: parses::ParseCaches,
}

impl AppState {
    /// State serving `policy`, ready at once.
    pub fn new(policy: LoadedPolicy, namespaces: Arc<dyn NamespaceLabels>) -> Arc<AppState> {
        let metrics = Metrics::new();
        metrics.policy_in_force(&policy.hash, &policy.source);
        log_policy(&policy);
        Arc::new(AppState {
            policy: ArcSwap::from_pointee(policy),
            namespaces,
            metrics,
            ready: AtomicBool::new(true),
            started: Instant::now(),
            heartbeat_ms: AtomicU64::new(0),
            expensive: fair::FairPlaces::new(MAX_EXPENSIVE_EVALUATIONS, MAX_WAITING_EXPENSIVE),
            large_body_budget: budget::BodyBudget::new(LARGE_BODY_BUDGET_BYTES, None),
            small_body_budget: budget::BodyBudget::new(
                SMALL_BODY_BUDGET_BYTES,
                Some(budget::SMALL_BODY_STALL_AFTER),
            ),
            waiting_room: tokio::sync::Semaphore::new(WAITING_BODY_BYTES),
            waiting_per_connection: waiting::PerConnection::new(WAITING_PER_CONNECTION_BYTES),
            blocking_evaluations: fair::FairPlaces::new(MAX_BLOCKING_EVALUATIONS, MAX_WAITING_EVALUATIONS),
            configmaps: ArcSwapOption::empty(),
            refusal_log: gate::RefusalLog::default(),
            parses: parses::ParseCaches::default(),
        })
    }

    /// Reads the ConfigMaps of liveness scripts and env values through `resolver` before each
    /// review (`None`: never; scripts on ConfigMap volumes are then unresolved).
    pub fn set_configmap_resolver(&self, resolver: Option<Arc<ConfigMapResolver>>) {
        self.configmaps.store(resolver);
    }

    /// Bytes of [`LARGE_BODY_BUDGET_BYTES`] not held by a large body being received or evaluated.
    pub fn large_body_budget_available(&self) -> usize {
        self.large_body_budget.available()
    }

    /// Bytes of [`SMALL_BODY_BUDGET_BYTES`] not held by a small body being received or evaluated.
    pub fn small_body_budget_available(&self) -> usize {
        self.small_body_budget.available()
    }

    /// Bytes of [`WAITING_BODY_BYTES`] not held by a body waiting for its budget.
    pub fn waiting_room_available(&self) -> usize {
        self.waiting_room.available_permits()
    }

    /// The policy in force. Each request takes one snapshot and finishes under it.
    pub fn current(&self) -> Arc<LoadedPolicy> {
        self.policy.load_full()
    }

    /// Puts a (validated) policy in force.
    pub fn install(&self, policy: LoadedPolicy) {
        self.metrics.policy_in_force(&policy.hash, &policy.source);
        log_policy(&policy);
        self.policy.store(Arc::new(policy));
    }

    /// Sets readiness (false while draining, or while the policy or certificate is missing).
    pub fn set_ready(&self, ready: bool) {
        self.ready.store(ready, Ordering::SeqCst);
    }

    /// Records a heartbeat of the serving loop.
    fn beat(&self) {
        self.heartbeat_ms.store(self.started.elapsed().as_millis() as u64, Ordering::SeqCst);
    }

    /// Time since the serving loop's last heartbeat.
    pub fn since_heartbeat(&self) -> Duration {
        let last = Duration::from_millis(self.heartbeat_ms.load(Ordering::SeqCst));
        self.started.elapsed().saturating_sub(last)
    }

    /// Whether `/readyz` answers 200.
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::SeqCst)
    }
}

fn log_policy(p: &LoadedPolicy) {
    let overrides = log_list(p.policy.overrides.iter().map(|o| o.name.as_str()));
    tracing::info!(hash = %p.hash, source = %log_field(&p.source), mode = p.policy.mode.as_str(), overrides = %overrides, "policy in force");
}

/// The router: admission endpoints and health endpoints.
pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/validate", post(validate_handler))
        .route("/mutate", post(mutate_handler))
        .route("/healthz", get(healthz_handler))
        .route("/readyz", get(readyz_handler))
        .route("/metrics", get(metrics_handler))
        .route("/policy", get(policy_handler))
        .fallback(|| async {
            error_response(StatusCode::NOT_FOUND, "no such endpoint: use POST /validate or POST /mutate")
        })
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn_with_state(Arc::clone(&state), gate::shell))
        .with_state(state)
}

/// The plain-HTTP admin router (`--admin-addr`): `/metrics`, `/healthz`, `/readyz`, `/policy`.
pub fn admin_router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/healthz", get(healthz_handler))
        .route("/readyz", get(readyz_handler))
        .route("/metrics", get(metrics_handler))
        .route("/policy", get(policy_handler))
        .with_state(state)
}

/// A heartbeat older than this fails `/healthz`.
pub const HEARTBEAT_STALE: Duration = Duration::from_secs(10);

/// Liveness: the serving loop's heartbeat is recent. Depends on nothing else (not the policy, not
/// the certificate, not the cluster), so a restart is only asked for when a restart can help.
async fn healthz_handler(State(state): State<Arc<AppState>>) -> Response {
    let since = state.since_heartbeat();
    if since <= HEARTBEAT_STALE {
        (StatusCode::OK, "ok\n").into_response()
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("serving loop stalled: no heartbeat for {}s\n", since.as_secs()),
        )
            .into_response()
    }
}

/// Ticks the heartbeat every second from the serving runtime.
fn spawn_heartbeat(state: Arc<AppState>) {
    state.beat();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        loop {
            tick.tick().await;
            state.beat();
        }
    });
}

async fn metrics_handler(State(state): State<Arc<AppState>>) -> Response {
    (
        [(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")],
        state.metrics.encode(),
    )
        .into_response()
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PolicyInfo<'a> {
    source: &'a str,
    hash: &'a str,
    mode: &'a str,
    overrides: Vec<&'a str>,
}

async fn policy_handler(State(state): State<Arc<AppState>>) -> Response {
    let p = state.current();
    let info = PolicyInfo {
        source: &p.source,
        hash: &p.hash,
        mode: p.policy.mode.as_str(),
        overrides: p.policy.overrides.iter().map(|o| o.name.as_str()).collect(),
    };
    ([(header::CONTENT_TYPE, "application/json")], serde_json::to_vec(&info).unwrap_or_default())
        .into_response()
}

async fn readyz_handler(State(state): State<Arc<AppState>>) -> Response {
    if state.is_ready() {
        (StatusCode::OK, "ok\n").into_response()
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "not ready\n").into_response()
    }
}

async fn validate_handler(
    State(state): State<Arc<AppState>>,
    Extension(peer): Extension<Peer>,
    body: Bytes,
) -> Response {
    admit(state, Endpoint::Validate, peer, body).await
}

async fn mutate_handler(
    State(state): State<Arc<AppState>>,
    Extension(peer): Extension<Peer>,
    body: Bytes,
) -> Response {
    admit(state, Endpoint::Mutate, peer, body).await
}

async fn admit(state: Arc<AppState>, endpoint: Endpoint, peer: Peer, body: Bytes) -> Response {
    let started = Instant::now();
    // The content type was checked before the body was read (admit_body).
    let lane = Lane::of(&body);
    let off_async = lane != Lane::Inline;
    let gauge = if lane == Lane::Expensive { metrics::LaneName::Expensive } else { metrics::LaneName::Small };
    let waiting = off_async.then(|| state.metrics.evaluation_waiting(gauge));
    // A body that arrived in one HTTP/2 DATA frame is a slice of the connection's read buffer, and
    // keeps all of that buffer (up to tens of KiB, shared with other streams' frames) alive while
    // it waits: a review that may wait for a place gets a copy of its own, so that the memory a
    // waiting review holds is its body's size, as the body budgets count it.
    // (A body of several frames was copied whole when it was read.)
    let body =
        if off_async && body.len() <= INLINE_BODY_BYTES { Bytes::copy_from_slice(&body) } else { body };
    // Expensive reviews, one at a time: their analysis can take a core for long, and parsing a
    // multi-MiB object into typed structs takes far more memory than its bytes, so they queue
    // here instead of taking the pool's places or multiplying the memory peak. Both queues
    // serve one connection after another: one client's backlog does not hold up the others'.
    let expensive = match place(&state.expensive, lane == Lane::Expensive, peer.0).await {
        Ok(place) => place,
        Err(busy) => {
            return error_response(
                StatusCode::SERVICE_UNAVAILABLE,
                &busy_message(MAX_WAITING_EXPENSIVE, busy),
            );
        }
    };
    // Then a place on the blocking pool (expensive reviews first queue above, one at a time).
    let blocking = match place(&state.blocking_evaluations, off_async, peer.0).await {
        Ok(place) => place,
        Err(busy) => {
            return error_response(
                StatusCode::SERVICE_UNAVAILABLE,
                &busy_message(MAX_WAITING_EVALUATIONS, busy),
            );
        }
    };
    drop(waiting);
    // The places are held by the blocking work too, not only by this request: a request that
    // times out (408) drops this future, but its blocking task runs on to the end, and must keep
    // its place until then, or the limits would not bound the work actually running.
    let running = off_async.then(|| state.metrics.evaluation_running(gauge));
    let held: Held = Arc::new(Places { _expensive: expensive, _blocking: blocking, _running: running });
    let resolver = state.configmaps.load_full();
    let outcome = match resolver {
        None if !off_async => match unpanicked(|| decide(&state, endpoint, &body)) {
            Some(outcome) => outcome,
            None => return error_response(StatusCode::INTERNAL_SERVER_ERROR, "evaluation failed"),
        },
        None => {
            let st = Arc::clone(&state);
            let places = Arc::clone(&held);
            match tokio::task::spawn_blocking(move || {
                let _places = places;
                decide(&st, endpoint, &body)
            })
            .await
            {
                Ok(outcome) => outcome,
                Err(_) => return error_response(StatusCode::INTERNAL_SERVER_ERROR, "evaluation failed"),
            }
        }
        // Boxed: its state (the parsed request, the ConfigMaps found, the reads in flight: 4.8 KB
        // in a release build) would otherwise make every request's future that large, with a
        // resolver or without.
        Some(resolver) => match Box::pin(decide_resolving(&state, &resolver, endpoint, body, &held)).await {
            Some(outcome) => outcome,
            None => return error_response(StatusCode::INTERNAL_SERVER_ERROR, "evaluation failed"),
        },
    };
    match outcome {
        Ok((decision, dry_run)) => {
            let elapsed = started.elapsed();
            log_decision(endpoint, &decision, dry_run, elapsed);
            record_metrics(&state.metrics, endpoint, &decision, dry_run, elapsed);
            match serde_json::to_vec(&decision.review) {
                Ok(bytes) => {
                    ([(header::CONTENT_TYPE, "application/json")], Extension(Counted), bytes).into_response()
                }
                Err(_) => error_response(StatusCode::INTERNAL_SERVER_ERROR, "could not encode the response"),
            }
        }
        Err(e) => {
            state.metrics.request(endpoint.as_str(), "", "", "error", false, started.elapsed().as_secs_f64());
            let mut answer = error_response(
                StatusCode::BAD_REQUEST,
                &crate::engine::excerpt(&e.to_string(), MAX_ERROR_CHARS),
            );
            answer.extensions_mut().insert(Counted);
            answer
        }
    }
}

/// The 503 of a review refused a place in a queue of `max` ([`fair`]), saying how many of those
/// waiting came from its connection (until s27: "the most of them from this connection", also
/// to a connection that had none waiting).
fn busy_message(max: usize, busy: fair::Busy) -> String {
    let own = match busy.from_its_connection {
        0 => "none of them from this connection".to_string(),
        1 => "1 of them from this connection".to_string(),
        n => format!("{n} of them from this connection"),
    };
    format!("busy: {max} reviews already wait for evaluation, {own}; retry later")
}

/// Parses, looks up the namespace's labels (never waiting) and reviews under one policy snapshot.
fn decide(state: &AppState, endpoint: Endpoint, body: &[u8]) -> Result<(Decision, bool), ReviewError> {
    let request = admission::parse_review(body)?;
    review_parsed(state, endpoint, &request, &NotResolving)
}

/// Reviews a parsed request under one policy snapshot, with the namespace's labels (never waiting)
/// and the ConfigMaps at hand.
fn review_parsed(
    state: &AppState,
    endpoint: Endpoint,
    request: &AdmissionRequest,
    configmaps: &dyn ConfigMapSource,
) -> Result<(Decision, bool), ReviewError> {
    // A guard, not `current()`'s Arc: no write to the policy's shared reference count, which both
    // workers would otherwise pass back and forth on every review.
    let loaded = state.policy.load();
    let labels = match (&request.namespace, loaded.policy.needs_namespace_labels()) {
        (Some(ns), true) => state.namespaces.labels(ns),
        _ => None,
    };
    // A parse cache of the server's few ([`parses::ParseCaches`]: bounded, parses only, never a
    // verdict), whichever thread evaluates.
    let decision = state.parses.with(|cache| {
        admission::review_cached(&loaded.policy, labels.as_ref(), endpoint, request, configmaps, cache)
    })?;
    Ok((decision, request.dry_run == Some(true)))
}

/// `--resolve-configmaps`: parse, read the ConfigMaps the review could use (within the resolver's
/// budget; what does not answer in time is unresolved), asking again with what was found (a script
/// may run another from a second ConfigMap, up to [`CONFIGMAP_ROUNDS`] rounds), then review. Large
/// bodies are parsed and reviewed on the blocking pool. `None` when a blocking task failed.
async fn decide_resolving(
    state: &Arc<AppState>,
    resolver: &ConfigMapResolver,
    endpoint: Endpoint,
    body: Bytes,
    held: &Held,
) -> Option<Result<(Decision, bool), ReviewError>> {
    let large = off_the_async_workers(&body);
    let places = Arc::clone(held);
    let parse = move || {
        let _places = places;
        admission::parse_review(&body)
    };
    let parsed = if large { tokio::task::spawn_blocking(parse).await.ok()? } else { unpanicked(parse)? };
    let request = match parsed {
        Ok(p) => p,
        Err(e) => return Some(Err(e)),
    };
    let mut found = StaticConfigMaps::new();
    found.set_default_reason(configmaps::NOT_NEEDED);
    let mut asked = std::collections::BTreeSet::new();
    let deadline = tokio::time::Instant::now() + resolver.budget();
    for _ in 0..CONFIGMAP_ROUNDS {
        let needed: Vec<(String, String)> = admission::configmaps_needed(&request, &found)
            .into_iter()
            .filter(|k| asked.insert(k.clone()))
            .collect();
        if needed.is_empty() || tokio::time::Instant::now() >= deadline {
            break;
        }
        for result in resolver.prefetch(&needed, deadline, &mut found).await {
            state.metrics.configmap_lookup(result);
        }
    }
    if large {
        let st = Arc::clone(state);
        let places = Arc::clone(held);
        tokio::task::spawn_blocking(move || {
            let _places = places;
            review_parsed(&st, endpoint, &request, &found)
        })
        .await
        .ok()
    } else {
        unpanicked(|| review_parsed(state, endpoint, &request, &found))
    }
}

/// `f`'s value, or `None` when it panicked (a bug): the request is answered 500 "evaluation
/// failed" and the connection lives on, as a blocking task's panic is (its `JoinError`). The
/// panic's message is not logged ([`log_panics_without_their_message`]): it may quote the object.
fn unpanicked<T>(f: impl FnOnce() -> T) -> Option<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).ok()
}

/// Replaces the default panic hook, which prints the panic's message to stderr, with one that logs
/// only where it happened: a message may quote the text it failed on (an env value, a probe's
/// command line with a password; s24: a slice inside a non-ASCII character of a probe's URL
/// printed the word). Installed by `serve` only; `check` and the other commands keep the default.
pub fn log_panics_without_their_message() {
    std::panic::set_hook(Box::new(|info| {
        let at = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
        tracing::error!(location = %at, "internal error (a panic; its message is not logged: it may quote the request)");
    }));
}

/// Most rounds of ConfigMap reads per request: the probe's own scripts, then scripts they name on
/// other ConfigMaps, and so on.
pub const CONFIGMAP_ROUNDS: usize = 3;

/// Without `--resolve-configmaps`: nothing is read, and unresolved scripts say so.
struct NotResolving;

impl ConfigMapSource for NotResolving {
    fn get(&self, _namespace: &str, _name: &str) -> crate::engine::ConfigMapLookup<'_> {
        crate::engine::ConfigMapLookup::Unresolved
    }

    fn unresolved_reason(&self, _namespace: &str, _name: &str) -> String {
        configmaps::NOT_RESOLVING.to_string()
    }
}

fn record_metrics(m: &Metrics, endpoint: Endpoint, d: &Decision, dry_run: bool, elapsed: Duration) {
    let s = &d.summary;
    let result = if s.denied {
        "denied"
    } else if s.patched {
        "patched"
    } else if s.warnings > 0 {
        "warned"
    } else {
        "allowed"
    };
    // Only kinds probegate handles become label values (metric cardinality stays bounded).
    let kind = crate::engine::WorkloadKind::from_kind_name(&s.kind).map_or("other", |k| k.as_str());
    // The operations admission.k8s.io/v1 defines (the request's is parsed into one of them).
    let operation = match s.operation.as_str() {
        "CREATE" => "CREATE",
        "UPDATE" => "UPDATE",
        "DELETE" => "DELETE",
        "CONNECT" => "CONNECT",
        _ => "",
    };
    m.request(endpoint.as_str(), kind, operation, result, dry_run, elapsed.as_secs_f64());
    if dry_run {
        return;
    }
    let mode = s.mode.map(|m| m.as_str()).unwrap_or("");
    for (rule, action) in &s.violations {
        let action = if *action == Action::Off { "off" } else { action.as_str() };
        m.violation(rule.as_str(), action, mode, &s.namespace);
    }
}

/// One structured line per decision that denied, warned or patched: names and rule ids only,
/// never the object (env values can hold secrets). `dry_run=true` marks a dry-run request (nothing
/// was admitted: `kubectl apply --dry-run=server`, `kubectl diff`).
fn log_decision(endpoint: Endpoint, decision: &Decision, dry_run: bool, latency: Duration) {
    let s = &decision.summary;
    if !s.acted() {
        tracing::debug!(
            endpoint = endpoint.as_str(),
            uid = %log_field(&s.uid),
            kind = %log_field(&s.kind),
            dry_run,
            skipped = ?s.skipped,
            "admitted"
        );
        return;
    }
    let rules: Vec<&str> = s.rules.iter().map(|r| r.as_str()).collect();
    // Request-supplied strings have their control characters escaped: a crafted namespace or name
    // cannot forge log lines (text format); JSON logs get plain strings.
    tracing::info!(
        endpoint = endpoint.as_str(),
        uid = %log_field(&s.uid),
        namespace = %log_field(&s.namespace),
        kind = %log_field(&s.kind),
        name = %log_field(&s.name),
        operation = %s.operation,
        dry_run,
        mode = s.mode.map(|m| m.as_str()).unwrap_or(""),
        overrides = %log_list(s.overrides.iter().map(String::as_str)),
        rules = %rules.join(","),
        denied = s.denied,
        warnings = s.warnings,
        patched = s.patched,
        unresolved_scripts = s.unresolved_scripts,
        latency_us = latency.as_micros() as u64,
        "admission decision"
    );
}

/// Longest error message answered or logged for a bad request, in characters.
const MAX_ERROR_CHARS: usize = 1024;

/// A request-supplied string for a log line: control characters (newlines, escapes) are written as
/// `\u{..}` so that they cannot start a new line or repaint a terminal.
pub fn log_safe(s: &str) -> std::borrow::Cow<'_, str> {
    crate::engine::display_safe(s)
}

/// The text of a kube-rs error for a log line or a message: kube-rs quotes a path it failed to
/// read with its `Debug` form inside quotes (`failed to read kubeconfig from '"/root/.kube/config"'`,
/// kube-client's `KubeconfigError::ReadConfig`), which printed doubled quotes; the path is shown
/// once, in single quotes.
pub fn kube_error_text(e: &dyn std::fmt::Display) -> String {
    // A URL's user info is redacted: kube's errors name the proxy (`configured proxy
    // http://u:PW@proxy:3128/ ...`) and the API server as configured (s14 break-it pass).
    let text = crate::engine::exec::redact_secrets(&e.to_string().replace("'\"", "'").replace("\"'", "'"));
    redact_schemeless_userinfo(&text)
}

/// `text` with the user info of each word written without a scheme (`u:PW@proxy:3128`, which
/// curl and Go take as an `http://` proxy and kube refuses as "an unsupported protocol") replaced
/// by `***`: everything before the word's last `@`, after any quote or `(` it starts with.
/// Words with `://` are left to [`crate::engine::exec::redact_secrets`] (s16 break-it pass: the
/// password of `HTTPS_PROXY=u:PW@host:3128` was logged).
fn redact_schemeless_userinfo(text: &str) -> String {
    if !text.contains('@') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    for (i, word) in text.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let lead = word.len() - word.trim_start_matches(['\'', '"', '(', '`', '<']).len();
        match word[lead..].rsplit_once('@') {
            Some((userinfo, host))
                if !userinfo.is_empty() && !userinfo.contains("://") && userinfo != "***" =>
            {
                out.push_str(&word[..lead]);
                out.push_str("***@");
                out.push_str(host);
            }
            _ => out.push_str(word),
        }
    }
    out
}

/// Everything `probegate serve` needs.
pub struct ServeConfig {
    /// Where to listen (HTTPS).
    pub addr: SocketAddr,
    /// The policy to enforce first.
    pub policy: LoadedPolicy,
    /// The policy file to watch for changes (`None`: the embedded default, never reloaded).
    pub policy_path: Option<PathBuf>,
    /// The serving certificate.
    pub tls: tls::TlsMaterial,
    /// The certificate and key files to watch for rotation (`None`: generated or fixed material).
    pub tls_files: Option<(PathBuf, PathBuf)>,
    /// Plain-HTTP admin address for `/metrics`, `/healthz`, `/readyz`, `/policy`.
    pub admin_addr: Option<SocketAddr>,
    /// Where Namespace labels come from (`None`: no labels; `namespaceSelector` overrides do not match).
    pub namespaces: Option<Arc<dyn NamespaceLabels>>,
    /// Most connections served at once ([`conn::MAX_CONNECTIONS`] in `probegate serve`).
    pub max_connections: usize,
}

/// A started server.
pub struct RunningServer {
    /// The HTTPS address actually bound (useful with port 0).
    pub addr: SocketAddr,
    /// The admin address actually bound, when one was asked for.
    pub admin_addr: Option<SocketAddr>,
    /// Stops the server: `handle.graceful_shutdown(Some(duration))`.
    pub handle: axum_server::Handle<SocketAddr>,
    /// Shared state (policy, readiness, metrics).
    pub state: Arc<AppState>,
    /// Completes when the server has stopped.
    pub task: tokio::task::JoinHandle<std::io::Result<()>>,
    /// Keeps the policy file watcher alive.
    pub watcher: Option<notify::RecommendedWatcher>,
    /// Keeps the certificate file watcher alive.
    pub cert_watcher: Option<notify::RecommendedWatcher>,
    /// The live TLS configuration (reload it to rotate the certificate).
    pub tls: axum_server::tls_rustls::RustlsConfig,
}

/// How long a new connection has to send its whole first request: 10 s (slow-loris bound).
pub const FIRST_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// At most `max` connections at once, each closed after [`conn::IDLE_TIMEOUT`] without a read; at
/// the cap, one idle for [`conn::EVICT_AFTER`] makes room (the same for both ports, each its own).
fn connection_limits(max: usize) -> conn::LimitAcceptor {
    conn::LimitAcceptor::new(max, conn::IDLE_TIMEOUT, conn::EVICT_AFTER)
}

/// The bounds both ports (HTTPS and admin) put on a connection's requests: its first request
/// within [`FIRST_REQUEST_TIMEOUT`], and later ones' headers within [`conn::IDLE_TIMEOUT`].
/// hyper's HTTP/1.1 header read timeout also runs while a keep-alive connection waits for its
/// next request (hyper PR #3828, "start header_read_timeout when waiting for subsequent
/// requests"): at 10 s it closed idle keep-alive connections after 10 s, before the API server's
/// own 90 s, bringing back the race of a request written onto a closing connection. It is the
/// idle bound, as for HTTP/2 (`conn::IDLE_TIMEOUT`); the first request keeps its own bound.
fn with_connection_bounds<Acc>(
    server: axum_server::Server<SocketAddr, Acc>,
) -> axum_server::Server<SocketAddr, Acc> {
    let mut server = server.first_request_timeout(FIRST_REQUEST_TIMEOUT);
    server.http_builder().http1().header_read_timeout(conn::IDLE_TIMEOUT);
    server
}

/// Binds and starts serving in the background.
///
/// # Errors
/// When the certificate cannot be used, an address cannot be bound, or the policy file's directory
/// cannot be watched.
pub async fn start(config: ServeConfig) -> anyhow::Result<RunningServer> {
    let rustls = tls::rustls_config(&config.tls)?;
    let namespaces = config.namespaces.unwrap_or_else(|| Arc::new(namespaces::NoNamespaceLabels));
    let state = AppState::new(config.policy, namespaces);
    let app = router(Arc::clone(&state));
    let handle = axum_server::Handle::new();
    let listener = std::net::TcpListener::bind(config.addr)
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", config.addr))?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let acceptor = axum_server::tls_rustls::RustlsAcceptor::new(rustls.clone())
        .acceptor(connection_limits(config.max_connections));
    let mut server =
        with_connection_bounds(axum_server::from_tcp(listener)?.acceptor(acceptor).handle(handle.clone()));
    // What one connection can make the server hold before it reads anything: its HTTP/2 windows
    // and header lists, its HTTP/1.1 read buffer (docs/server.md, "Memory across connections").
    server
        .http_builder()
        .http2()
        .max_concurrent_streams(H2_MAX_CONCURRENT_STREAMS)
        .initial_stream_window_size(H2_STREAM_WINDOW_BYTES)
        .initial_connection_window_size(H2_CONNECTION_WINDOW_BYTES)
        .max_header_list_size(H2_MAX_HEADER_LIST_BYTES);
    server.http_builder().http1().max_buf_size(HTTP1_MAX_BUF_BYTES);
    // The peer's address reaches each request, for the log line of a refusal (gate::RefusalLog).
    let task =
        tokio::spawn(
            async move { server.serve(app.into_make_service_with_connect_info::<SocketAddr>()).await },
        );

    let admin_addr = match config.admin_addr {
        None => None,
        Some(a) => {
            let listener = std::net::TcpListener::bind(a)
                .map_err(|e| anyhow::anyhow!("cannot listen on admin address {a}: {e}"))?;
            listener.set_nonblocking(true)?;
            let bound = listener.local_addr()?;
            let admin = admin_router(Arc::clone(&state));
            // The same bounds as the webhook's port (s19 break-it: a client that never finished
            // its headers held an admin connection for good), with a cap of its own.
            let admin_server = with_connection_bounds(
                axum_server::from_tcp(listener)?.acceptor(connection_limits(config.max_connections)),
            );
            tokio::spawn(async move { admin_server.serve(admin.into_make_service()).await });
            Some(bound)
        }
    };
    let watcher = match config.policy_path {
        None => {
            reload::ignore_hangups();
            None
        }
        Some(path) => Some(
            reload::spawn(path.clone(), Arc::clone(&state))
                .map_err(|e| anyhow::anyhow!("{}: cannot watch for changes: {e}", path.display()))?,
        ),
    };
    let cert_watcher = match config.tls_files {
        None => None,
        Some((cert, key)) => Some(
            tls::spawn_reloader(cert.clone(), key, rustls.clone())
                .map_err(|e| anyhow::anyhow!("{}: cannot watch for changes: {e}", cert.display()))?,
        ),
    };
    spawn_heartbeat(Arc::clone(&state));
    Ok(RunningServer { addr, admin_addr, handle, state, task, watcher, cert_watcher, tls: rustls })
}

/// After the drain window, how long in-flight requests get before connections are closed.
pub const IN_FLIGHT_GRACE: Duration = Duration::from_secs(5);

/// How `probegate serve` runs beyond what [`ServeConfig`] says.
pub struct RunOptions {
    /// Watch Namespaces with kube for `namespaceSelector` overrides.
    pub watch_namespaces: bool,
    /// On SIGTERM, how long to keep serving after readiness turns false.
    pub drain: Duration,
    /// Keep the self-managed certificate current (the serving material was read from its Secret).
    pub self_managed: Option<selfmanaged::SelfManagedTls>,
    /// `--resolve-configmaps`: read the ConfigMaps of liveness scripts from the API (RBAC `get` on
    /// configmaps), each request within [`configmaps::BUDGET`].
    pub resolve_configmaps: bool,
}

/// How often the self-managed certificate's Secret is checked (renewal, other replicas' renewals).
pub const SELF_MANAGED_CHECK_INTERVAL: Duration = Duration::from_secs(300);

/// Runs `probegate serve` until SIGTERM or Ctrl-C, then drains: `/readyz` fails at once, requests
/// are served for `drain`, then the listener closes and in-flight requests finish (up to
/// [`IN_FLIGHT_GRACE`]).
///
/// # Errors
/// As [`start`], or when serving fails.
pub async fn run(mut config: ServeConfig, options: RunOptions) -> anyhow::Result<()> {
    let RunOptions { watch_namespaces, drain, self_managed, resolve_configmaps } = options;
    let initial_tls = config.tls.clone();
    if config.namespaces.is_none() && watch_namespaces {
        match namespaces::watch().await {
            Ok(source) => {
                tracing::info!("watching Namespaces for namespaceSelector overrides");
                config.namespaces = Some(source);
            }
            Err(e) if config.policy.policy.needs_namespace_labels() => tracing::warn!(
                error = %kube_error_text(&e),
                "no Kubernetes API reachable: overrides with a namespaceSelector will not match; overrides by namespace name keep working"
            ),
            Err(e) if !kubeclient::is_unconfigured(&e) => tracing::warn!(
                error = %kube_error_text(&e),
                "cannot build a Kubernetes client: Namespace labels are unknown (no override of this policy needs them)"
            ),
            Err(e) => tracing::info!(
                error = %kube_error_text(&e),
                "no Kubernetes API reachable: Namespace labels are unknown (no override of this policy needs them)"
            ),
        }
    }
    let running = start(config).await?;
    logsink::spawn_dropped_lines_report();
    let admin = running.admin_addr.map(|a| a.to_string()).unwrap_or_else(|| "none".into());
    tracing::info!(addr = %running.addr, admin = %admin, "probegate serving /validate and /mutate over HTTPS");
    if resolve_configmaps {
        match kubeclient::client().await {
            Ok(client) => {
                let fetch = Arc::new(configmaps::KubeConfigMaps::new(client));
                running.state.set_configmap_resolver(Some(Arc::new(ConfigMapResolver::new(fetch))));
                tracing::info!(
                    budget_ms = configmaps::BUDGET.as_millis() as u64,
                    "--resolve-configmaps: reading the ConfigMaps of liveness scripts from the API"
                );
            }
            Err(e) => tracing::warn!(
                error = %kube_error_text(&e),
                "--resolve-configmaps: no Kubernetes API reachable; scripts on ConfigMap volumes stay unresolved"
            ),
        }
    }
    if let Some(cfg) = self_managed {
        let client = kubeclient::client().await?;
        let rustls = running.tls.clone();
        let wake = Arc::new(tokio::sync::Notify::new());
        tokio::spawn(selfmanaged::watch_webhook_configurations(
            client.clone(),
            cfg.clone(),
            Arc::clone(&wake),
        ));
        tokio::spawn(selfmanaged::maintain(
            client,
            cfg,
            initial_tls,
            SELF_MANAGED_CHECK_INTERVAL,
            wake,
            move |material| match tls::server_config(&material) {
                Ok(cfg) => rustls.reload_from_config(Arc::new(cfg)),
                Err(e) => {
                    tracing::warn!(error = %e, "renewed certificate is unusable; keeping the current one")
                }
            },
        ));
    }
    let handle = running.handle.clone();
    let state = Arc::clone(&running.state);
    let state_at_exit = Arc::clone(&running.state);
    tokio::spawn(async move {
        shutdown_signal().await;
        // Readiness fails at once so endpoints stop routing here; keep serving through the drain
        // window while that propagates, then stop accepting and let in-flight requests finish.
        tracing::info!(drain_seconds = drain.as_secs(), "SIGTERM: readiness off, draining");
        state.set_ready(false);
        tokio::time::sleep(drain).await;
        tracing::info!("drain window over: closing the listener, finishing in-flight requests");
        handle.graceful_shutdown(Some(IN_FLIGHT_GRACE));
    });
    let _watcher = running.watcher;
    let served = running.task.await;
    // Refusal lines left out since the last one logged, not yet reported by their window's end.
    state_at_exit.refusal_log.report_left_out();
    served??;
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => {
                let _ = ctrl_c.await;
                return;
            }
        };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_in_an_evaluation_is_caught_and_its_value_is_none() {
        assert_eq!(unpanicked(|| 7), Some(7));
        // (The default hook prints this panic to the test's output.)
        assert_eq!(unpanicked(|| -> u8 { panic!("a deliberate panic") }), None);
    }

    #[test]
    fn bodies_that_may_hold_exec_handlers_are_evaluated_off_the_async_workers() {
        let exec = br#"{"livenessProbe":{"exec":{"command":["pg_isready"]}}}"#;
        assert!(off_the_async_workers(exec));
        // The same key spelled with a JSON escape.
        assert!(off_the_async_workers(br#"{"livenessProbe":{"\u0065xec":{"command":["x"]}}}"#));
        assert!(!off_the_async_workers(br#"{"livenessProbe":{"httpGet":{"path":"/healthz","port":8080}}}"#));
        // A container or env value named "exec" is not a key, but is moved as well: harmless.
        assert!(off_the_async_workers(br#"{"name":"exec"}"#));
        assert!(off_the_async_workers(&vec![b' '; INLINE_BODY_BYTES + 1]));
    }

    /// The size in bytes of the future an async fn returns (without calling it).
    fn future_size<A, B, C, F: FnOnce(A, B, C) -> Fut, Fut>(_: &F) -> usize {
        std::mem::size_of::<Fut>()
    }

    #[test]
    fn an_admission_request_future_does_not_hold_the_configmap_resolving_state() {
        // `decide_resolving`'s state (the parsed request, the ConfigMaps found, the reads in
        // flight) is kilobytes; held inline, it made every request's future 5,024 bytes in a
        // release build (the same size whether or not a resolver is configured), allocated and
        // copied for every request. Boxed, the handler's future is a few hundred bytes.
        fn five<A, B, C, D, E, F: FnOnce(A, B, C, D, E) -> Fut, Fut>(_: &F) -> usize {
            std::mem::size_of::<Fut>()
        }
        let resolving =
            five::<&Arc<AppState>, &ConfigMapResolver, Endpoint, Bytes, &Held, _, _>(&decide_resolving);
        let validate = future_size::<State<Arc<AppState>>, Extension<Peer>, Bytes, _, _>(&validate_handler);
        let mutate = future_size::<State<Arc<AppState>>, Extension<Peer>, Bytes, _, _>(&mutate_handler);
        assert!(resolving > 2048, "decide_resolving's future is {resolving} bytes");
        assert!(validate < 1024 && mutate < 1024, "handler futures: {validate} and {mutate} bytes");
    }
}

#[cfg(test)]
mod kube_error_text_tests {
    #[test]
    fn a_path_kube_rs_quotes_twice_is_shown_once() {
        let e = "kubeconfig: (failed to read kubeconfig from '\"/root/.kube/config\"': No such file or directory)";
        assert_eq!(
            super::kube_error_text(&e),
            "kubeconfig: (failed to read kubeconfig from '/root/.kube/config': No such file or directory)"
        );
        assert_eq!(super::kube_error_text(&"connection refused"), "connection refused");
    }

    /// s16 break-it pass: `HTTPS_PROXY=u:PW@host:3128` (no scheme) is refused by kube as "an
    /// unsupported protocol", and the error named it with its password.
    #[test]
    fn a_proxy_without_a_scheme_is_shown_without_its_user_info() {
        for (error, shown) in [
            (
                "configured proxy u:Pr0xyE@127.0.0.1:1 uses an unsupported protocol",
                "configured proxy ***@127.0.0.1:1 uses an unsupported protocol",
            ),
            ("proxy 'TOKEN@proxy:3128': refused", "proxy '***@proxy:3128': refused"),
            ("proxy (a@b:c@proxy) refused", "proxy (***@proxy) refused"),
            ("proxy http://u:pw@proxy:3128/ refused", "proxy http://u:***@proxy:3128/ refused"),
            ("no user info @ all", "no user info @ all"),
        ] {
            assert_eq!(super::kube_error_text(&error), shown);
        }
    }
}
