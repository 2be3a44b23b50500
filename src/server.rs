//! The HTTPS admission webhook server: a thin shell around [`crate::admission`].
//!
//! Endpoints (TLS only; plain HTTP is not served):
//! - `POST /validate`, `POST /mutate`: `admission.k8s.io/v1` AdmissionReview in and out;
//! - `GET /healthz`: liveness, the process answers;
//! - `GET /readyz`: readiness, the policy and the certificate are loaded.
//!
//! HTTP/1.1 keep-alive and HTTP/2 (ALPN `h2`) are both served. Bodies over [`MAX_BODY_BYTES`] get
//! 413; every request is bounded by [`REQUEST_TIMEOUT`].

pub mod tls;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Serialize;
use tower_http::timeout::TimeoutLayer;

use crate::admission::{self, Decision, Endpoint, ReviewError};
use crate::policy::Policy;

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
/// move to the blocking pool so that parsing them does not stall other connections.
pub const INLINE_BODY_BYTES: usize = 64 * 1024;

/// Shared state of the server.
pub struct AppState {
    policy: Arc<Policy>,
    /// Where the policy came from (a path, or `<embedded default>`), for logs.
    pub policy_source: String,
    ready: AtomicBool,
}

impl AppState {
    /// State serving `policy`, ready at once.
    pub fn new(policy: Policy, policy_source: impl Into<String>) -> Arc<AppState> {
        Arc::new(AppState {
            policy: Arc::new(policy),
            policy_source: policy_source.into(),
            ready: AtomicBool::new(true),
        })
    }

    /// The policy in force.
    pub fn policy(&self) -> Arc<Policy> {
        Arc::clone(&self.policy)
    }

    /// Sets readiness (false while draining, or while the policy or certificate is missing).
    pub fn set_ready(&self, ready: bool) {
        self.ready.store(ready, Ordering::SeqCst);
    }
}

/// The router: admission endpoints and health endpoints.
pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/validate", post(validate_handler))
        .route("/mutate", post(mutate_handler))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz_handler))
        .fallback(|| async {
            error_response(StatusCode::NOT_FOUND, "no such endpoint: use POST /validate or POST /mutate")
        })
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(TimeoutLayer::with_status_code(StatusCode::REQUEST_TIMEOUT, REQUEST_TIMEOUT))
        .with_state(state)
}

async fn readyz_handler(State(state): State<Arc<AppState>>) -> Response {
    if state.ready.load(Ordering::SeqCst) {
        (StatusCode::OK, "ok\n").into_response()
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "not ready\n").into_response()
    }
}

async fn validate_handler(State(state): State<Arc<AppState>>, headers: HeaderMap, body: Bytes) -> Response {
    admit(state, Endpoint::Validate, headers, body).await
}

async fn mutate_handler(State(state): State<Arc<AppState>>, headers: HeaderMap, body: Bytes) -> Response {
    admit(state, Endpoint::Mutate, headers, body).await
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
    status: u16,
}

fn error_response(status: StatusCode, message: &str) -> Response {
    let body = serde_json::to_vec(&ErrorBody { error: message, status: status.as_u16() }).unwrap_or_default();
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"))
}

async fn admit(state: Arc<AppState>, endpoint: Endpoint, headers: HeaderMap, body: Bytes) -> Response {
    let started = Instant::now();
    if !is_json(&headers) {
        return error_response(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Type must be application/json (an admission.k8s.io/v1 AdmissionReview)",
        );
    }
    let policy = state.policy();
    let outcome = if body.len() <= INLINE_BODY_BYTES {
        decide(&policy, endpoint, &body)
    } else {
        match tokio::task::spawn_blocking(move || decide(&policy, endpoint, &body)).await {
            Ok(outcome) => outcome,
            Err(_) => return error_response(StatusCode::INTERNAL_SERVER_ERROR, "evaluation failed"),
        }
    };
    match outcome {
        Ok(decision) => {
            log_decision(endpoint, &decision, started.elapsed());
            match serde_json::to_vec(&decision.review) {
                Ok(bytes) => ([(header::CONTENT_TYPE, "application/json")], bytes).into_response(),
                Err(_) => error_response(StatusCode::INTERNAL_SERVER_ERROR, "could not encode the response"),
            }
        }
        Err(e) => {
            tracing::warn!(endpoint = endpoint.as_str(), error = %e, "rejected a malformed admission request");
            error_response(StatusCode::BAD_REQUEST, &e.to_string())
        }
    }
}

fn decide(policy: &Policy, endpoint: Endpoint, body: &[u8]) -> Result<Decision, ReviewError> {
    let request = admission::parse_review(body)?;
    admission::review(policy, endpoint, &request)
}

/// One structured line per decision that denied, warned or patched: names and rule ids only,
/// never the object (env values can hold secrets).
fn log_decision(endpoint: Endpoint, decision: &Decision, latency: Duration) {
    let s = &decision.summary;
    if !s.acted() {
        tracing::debug!(endpoint = endpoint.as_str(), uid = %s.uid, kind = %s.kind, skipped = ?s.skipped, "admitted");
        return;
    }
    let rules: Vec<&str> = s.rules.iter().map(|r| r.as_str()).collect();
    tracing::info!(
        endpoint = endpoint.as_str(),
        uid = %s.uid,
        namespace = %s.namespace,
        kind = %s.kind,
        name = %s.name,
        operation = %s.operation,
        mode = s.mode.map(|m| m.as_str()).unwrap_or(""),
        rules = %rules.join(","),
        denied = s.denied,
        warnings = s.warnings,
        patched = s.patched,
        latency_us = latency.as_micros() as u64,
        "admission decision"
    );
}

/// Everything `probegate serve` needs.
pub struct ServeConfig {
    /// Where to listen.
    pub addr: SocketAddr,
    /// The policy to enforce.
    pub policy: Policy,
    /// Where the policy came from, for logs.
    pub policy_source: String,
    /// The serving certificate.
    pub tls: tls::TlsMaterial,
}

/// A started server.
pub struct RunningServer {
    /// The address actually bound (useful with port 0).
    pub addr: SocketAddr,
    /// Stops the server: `handle.graceful_shutdown(Some(duration))`.
    pub handle: axum_server::Handle<SocketAddr>,
    /// Shared state (readiness).
    pub state: Arc<AppState>,
    /// Completes when the server has stopped.
    pub task: tokio::task::JoinHandle<std::io::Result<()>>,
}

/// Binds and starts serving in the background.
///
/// # Errors
/// When the certificate cannot be used or the address cannot be bound.
pub async fn start(config: ServeConfig) -> anyhow::Result<RunningServer> {
    let rustls = tls::rustls_config(&config.tls)?;
    let state = AppState::new(config.policy, config.policy_source);
    let app = router(Arc::clone(&state));
    let handle = axum_server::Handle::new();
    let listener = std::net::TcpListener::bind(config.addr)
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", config.addr))?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let mut server = axum_server::from_tcp_rustls(listener, rustls)?.handle(handle.clone());
    // A connection must send its first request promptly (slow-loris bound); keep-alive after that.
    server = server.first_request_timeout(Duration::from_secs(10));
    server.http_builder().http1().header_read_timeout(Duration::from_secs(10));
    let task = tokio::spawn(async move { server.serve(app.into_make_service()).await });
    Ok(RunningServer { addr, handle, state, task })
}

/// Runs `probegate serve` until SIGTERM or Ctrl-C, then drains.
///
/// # Errors
/// As [`start`], or when serving fails.
pub async fn run(config: ServeConfig) -> anyhow::Result<()> {
    let source = config.policy_source.clone();
    let running = start(config).await?;
    tracing::info!(addr = %running.addr, policy = %source, "probegate serving /validate and /mutate over HTTPS");
    let handle = running.handle.clone();
    let state = Arc::clone(&running.state);
    tokio::spawn(async move {
        shutdown_signal().await;
        tracing::info!("shutting down: readiness off, finishing in-flight requests");
        state.set_ready(false);
        handle.graceful_shutdown(Some(Duration::from_secs(10)));
    });
    running.task.await??;
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
