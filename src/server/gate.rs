//! The gate every request passes through before (or instead of) a review, in one middleware
//! ([`shell`]): the request bound, the checks made before a body is read (path and method by the
//! router, then content type, content coding, transfer coding and size), the body budgets, the
//! framework's errors as JSON, the counting of requests answered without a review, and one
//! rate-limited log line per refusal ([`RefusalLog`]).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use tokio::time::Instant;

use super::{
    AppState, Endpoint, H2_STREAM_WINDOW_BYTES, INLINE_BODY_BYTES, MAX_BODY_BYTES, REQUEST_TIMEOUT,
    WAITING_BODY_BYTES, drain, log_field, log_safe, metrics,
};

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
    status: u16,
}

/// An error answer: the JSON body `{"error": message, "status": N}`, marked [`Refused`] so that
/// [`shell`] logs it.
/// A 503 or 429 (busy: a budget or a queue is full, or shutting down) carries `Retry-After:`
/// [`RETRY_AFTER_SECONDS`].
pub(super) fn error_response(status: StatusCode, message: &str) -> Response {
    let body = serde_json::to_vec(&ErrorBody { error: message, status: status.as_u16() }).unwrap_or_default();
    let mut answer = (status, [(header::CONTENT_TYPE, "application/json")], body).into_response();
    if status == StatusCode::SERVICE_UNAVAILABLE || status == StatusCode::TOO_MANY_REQUESTS {
        answer.headers_mut().insert(header::RETRY_AFTER, header::HeaderValue::from(RETRY_AFTER_SECONDS));
    }
    answer.extensions_mut().insert(Refused(message.to_string()));
    answer
}

/// The `Retry-After` of a busy answer (503), seconds: 1. A review is bounded to 4 s and the
/// budgets it met are freed as the reviews ahead of it are answered (milliseconds each); the API
/// server does not retry a webhook call itself (its `failurePolicy` decides), other clients may.
pub const RETRY_AFTER_SECONDS: u16 = 1;

/// Marks an error answer (see [`error_response`]) with its message, for [`RefusalLog`].
#[derive(Clone)]
struct Refused(String);

/// Most refusal lines logged in one [`REFUSAL_LOG_WINDOW`]: 30. A flood of bad requests (a
/// connection-level attack, a misconfigured client in a loop) then writes at most 30 lines a
/// minute, about 10 KB (each line is bounded: the reason at 1,024 characters, the path at 253,
/// no body, no object), some 14 MB a day at worst; the refusals past it are counted in
/// `probegate_admission_requests_total` as before, and how many were left out is logged when the
/// window ends (`refusal lines left out`, `suppressed`), or by the next line logged if that comes
/// first, and at shutdown.
pub const REFUSAL_LOG_BURST: u32 = 30;

/// The window of [`REFUSAL_LOG_BURST`]: 60 s.
pub const REFUSAL_LOG_WINDOW: Duration = Duration::from_secs(60);

/// Logs refused requests, one WARN line each (status, reason, peer address, method, path; never
/// the body or the object), at most [`REFUSAL_LOG_BURST`] per [`REFUSAL_LOG_WINDOW`].
pub struct RefusalLog {
    /// The current window's start, the lines logged in it, the refusals not logged since the last
    /// line that was (shared with the task that reports them when the window ends).
    state: Arc<Mutex<(Instant, u32, u64)>>,
}

impl Default for RefusalLog {
    fn default() -> Self {
        RefusalLog { state: Arc::new(Mutex::new((Instant::now(), 0, 0))) }
    }
}

/// Whether a refusal's line is logged (see [`RefusalLog::admit`]).
#[derive(Debug, PartialEq, Eq)]
enum Admitted {
    /// Logged, with the refusals left out since the last line logged.
    Log(u64),
    /// Left out, the first in its window: those left out are reported at the window's end.
    FirstLeftOut(Instant),
    /// Left out.
    LeftOut,
}

impl RefusalLog {
    /// Whether a line may be logged now, counting it against the window.
    fn admit(&self, now: Instant) -> Admitted {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (start, logged, suppressed) = &mut *state;
        if now.duration_since(*start) >= REFUSAL_LOG_WINDOW {
            (*start, *logged) = (now, 0);
        }
        if *logged >= REFUSAL_LOG_BURST {
            *suppressed += 1;
            return if *suppressed == 1 {
                Admitted::FirstLeftOut(*start + REFUSAL_LOG_WINDOW)
            } else {
                Admitted::LeftOut
            };
        }
        *logged += 1;
        Admitted::Log(std::mem::take(suppressed))
    }

    fn log(
        &self,
        status: StatusCode,
        reason: &str,
        peer: Option<SocketAddr>,
        method: &axum::http::Method,
        path: &str,
    ) {
        let suppressed = match self.admit(Instant::now()) {
            Admitted::Log(suppressed) => suppressed,
            Admitted::FirstLeftOut(window_end) => {
                // Reported when the window ends, unless a line logged before then does it.
                if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                    let state = Arc::clone(&self.state);
                    runtime.spawn(async move {
                        tokio::time::sleep_until(window_end).await;
                        report_left_out(&state);
                    });
                }
                return;
            }
            Admitted::LeftOut => return,
        };
        let peer = peer.map_or_else(|| "unknown".to_string(), |p| p.to_string());
        tracing::warn!(
            status = status.as_u16(),
            reason = %log_safe(reason),
            peer = %peer,
            method = %log_field(method.as_str()),
            path = %log_field(path),
            suppressed,
            "refused a request"
        );
    }

    /// Logs how many refusals were left out since the last line logged, if any (at shutdown;
    /// otherwise when their window ends).
    pub fn report_left_out(&self) {
        report_left_out(&self.state);
    }
}

/// See [`RefusalLog::report_left_out`].
fn report_left_out(state: &Mutex<(Instant, u32, u64)>) {
    let suppressed = std::mem::take(&mut state.lock().unwrap_or_else(|e| e.into_inner()).2);
    if suppressed > 0 {
        tracing::warn!(
            suppressed,
            window_seconds = REFUSAL_LOG_WINDOW.as_secs(),
            "refusal lines left out (all refusals are counted in probegate_admission_requests_total)"
        );
    }
}

const NOT_JSON_MESSAGE: &str =
    "Content-Type must be application/json (an admission.k8s.io/v1 AdmissionReview)";

const NOT_UTF8_MESSAGE: &str = "Content-Type names a charset other than UTF-8: an AdmissionReview is JSON, which is UTF-8 (RFC 8259, section 8.1); send it as application/json or application/json; charset=utf-8";

const SEVERAL_TYPES_MESSAGE: &str = "Content-Type is sent more than once, and not every one is application/json: send one Content-Type: application/json (an admission.k8s.io/v1 AdmissionReview)";

/// Why a review's `Content-Type` is refused (415), or `None` when it is `application/json` with
/// no charset, `charset=utf-8` or `charset=us-ascii` (a subset of UTF-8), in any case, quoted or
/// not. A request with several `Content-Type` fields (RFC 9110 §8.3 allows one) is accepted only
/// when every one of them is: which one a reader takes differs (Go's `Header.Get`, the API
/// server's, takes the first; others the last), so a request that is JSON to one reader and
/// text to another is refused, not guessed at.
fn unsupported_media_type(headers: &HeaderMap) -> Option<&'static str> {
    let mut values = headers.get_all(header::CONTENT_TYPE).iter();
    let first = unsupported_json_type(values.next().and_then(|v| v.to_str().ok()));
    let mut others = values.map(|v| unsupported_json_type(v.to_str().ok())).peekable();
    if others.peek().is_none() {
        return first;
    }
    (first.is_some() || others.any(|refused| refused.is_some())).then_some(SEVERAL_TYPES_MESSAGE)
}

/// Why one `Content-Type` value is not JSON in UTF-8 (see [`unsupported_media_type`]).
fn unsupported_json_type(value: Option<&str>) -> Option<&'static str> {
    let mut parts = value.unwrap_or_default().split(';');
    if !parts.next().is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json")) {
        return Some(NOT_JSON_MESSAGE);
    }
    for parameter in parts {
        let (name, charset) = parameter.split_once('=').unwrap_or((parameter, ""));
        if !name.trim().eq_ignore_ascii_case("charset") {
            continue;
        }
        let charset = charset.trim();
        let charset = charset.strip_prefix('"').and_then(|c| c.strip_suffix('"')).unwrap_or(charset);
        if !["utf-8", "utf8", "us-ascii"].iter().any(|ok| charset.eq_ignore_ascii_case(ok)) {
            return Some(NOT_UTF8_MESSAGE);
        }
    }
    None
}

/// Around every request, in one middleware: the request bound ([`REQUEST_TIMEOUT`], then 408),
/// the body's admission ([`admit_body`]), the framework's errors as JSON ([`json_errors`]) and
/// the counting of admission requests answered without a review ([`count_unreviewed`]). As
/// separate layers each boxed the request's future once more, and tower-http's timeout armed a
/// timer for every request, even one answered at its first poll (here the timer is armed only
/// when the request has to wait).
pub(super) async fn shell(
    State(state): State<Arc<AppState>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let endpoint = match (request.method() == axum::http::Method::POST, request.uri().path()) {
        (true, "/validate") => Some(Endpoint::Validate),
        (true, "/mutate") => Some(Endpoint::Mutate),
        _ => None,
    };
    let started = Instant::now();
    // For the refusal's log line (a refusal is rare; this is a few reference counts).
    let peer = request.extensions().get::<axum::extract::ConnectInfo<SocketAddr>>().map(|c| c.0);
    let (method, uri) = (request.method().clone(), request.uri().clone());
    // The connection, for a fair share of the evaluation places (server::fair).
    let mut request = request;
    request.extensions_mut().insert(super::Peer(peer));
    // A body left unread by a refusal is read after the answer: over HTTP/2 instead of the stream
    // being reset, over HTTP/1.1 instead of the connection being closed under the upload; some
    // clients take either for a failed request and lose the answer ([`drain`]).
    let request = drain::on_drop(request);
    let response = match tokio::time::timeout(
        REQUEST_TIMEOUT,
        admit_body(&state, endpoint, peer, request, next),
    )
    .await
    {
        Ok(response) => response,
        Err(_) => StatusCode::REQUEST_TIMEOUT.into_response(),
    };
    let response = json_errors(response, &method, uri.path());
    if let Some(endpoint) = endpoint {
        count_unreviewed(&state, endpoint, &response, started);
    }
    if let Some(Refused(reason)) = response.extensions().get::<Refused>() {
        state.refusal_log.log(response.status(), reason, peer, &method, uri.path());
    }
    response
}

/// Marks an admission answer already counted in `probegate_admission_requests_total` by its
/// handler (a decision, or a malformed review's 400).
#[derive(Clone, Copy)]
pub(super) struct Counted;

/// Counts in `probegate_admission_requests_total` an admission request answered without a
/// review: `timeout` for 408 (not read and answered within [`REQUEST_TIMEOUT`]), `stalled` for a
/// 408 whose body stalled while others waited for room ([`Stalled`]), `refused` for
/// 411, 413, 415, 501 and 503 (refused before or instead of being read), `error` for any other (an
/// unreadable body's 400, a failed evaluation's 500). Reviews (and malformed reviews' 400) are
/// counted by their handler, which marks its answer [`Counted`]. Without this, a flood of
/// timeouts would leave the counter flat.
fn count_unreviewed(state: &AppState, endpoint: Endpoint, response: &Response, started: Instant) {
    if response.extensions().get::<Counted>().is_some() {
        return;
    }
    let result = match response.status() {
        StatusCode::REQUEST_TIMEOUT if response.extensions().get::<Stalled>().is_some() => "stalled",
        StatusCode::REQUEST_TIMEOUT => "timeout",
        StatusCode::PAYLOAD_TOO_LARGE
        | StatusCode::LENGTH_REQUIRED
        | StatusCode::UNSUPPORTED_MEDIA_TYPE
        | StatusCode::NOT_IMPLEMENTED
        | StatusCode::SERVICE_UNAVAILABLE => "refused",
        _ => "error",
    };
    state.metrics.request(endpoint.as_str(), "", "", result, false, started.elapsed().as_secs_f64());
}

/// Before the body of a review (`POST /validate`, `POST /mutate`; any other request goes to the
/// router as it is, for its 404 or 405 first) is read, in this order: 415 for a `Content-Type`
/// other than `application/json`, 415 for a `Content-Encoding` other than `identity`, 501 for a
/// `Transfer-Encoding` other than `chunked`, 411 for an HTTP/1 request with neither
/// `Content-Length` nor `Transfer-Encoding` (read as bodiless), and 413 at once for a `Content-Length` over
/// [`MAX_BODY_BYTES`] (otherwise a client that declares a huge body and sends none waits for the
/// timeout). Then the body waits for its share of [`super::LARGE_BODY_BUDGET_BYTES`] or
/// [`super::SMALL_BODY_BUDGET_BYTES`], held until its answer is made; one that would have to wait
/// while [`WAITING_BODY_BYTES`] of waiting bodies are already held unread, or
/// [`super::WAITING_PER_CONNECTION_BYTES`] on its connection, gets 503 at once (over HTTP/2 its
/// stream is then reset, not drained).
async fn admit_body(
    state: &AppState,
    endpoint: Option<Endpoint>,
    peer: Option<SocketAddr>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    use axum::body::HttpBody;
    if endpoint.is_none() {
        return next.run(request).await;
    }
    let headers = request.headers();
    if let Some(refused) = unsupported_media_type(headers) {
        return error_response(StatusCode::UNSUPPORTED_MEDIA_TYPE, refused);
    }
    if let Some(coding) = unsupported_content_coding(headers) {
        return error_response(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            &format!(
                "Content-Encoding {coding:?} is not supported: send the AdmissionReview uncompressed (the API server never compresses webhook requests)"
            ),
        );
    }
    // A body in a transfer coding other than `chunked` (`gzip, chunked`): hyper removes the
    // chunking only, and the rest would be read as JSON. RFC 9112 §6.1: a server that receives a
    // transfer coding it does not understand should answer 501.
    if let Some(coding) = unsupported_transfer_coding(headers) {
        return error_response(
            StatusCode::NOT_IMPLEMENTED,
            &format!("transfer coding {coding:?} is not supported: send the body as is or chunked"),
        );
    }
    // HTTP/1 reads a request without `Content-Length` or `Transfer-Encoding` as having no body
    // (RFC 9112 §6.3): an HTTP/1.0 client that streams its body until it closes the connection
    // would have it read as empty, or as the next request. RFC 9110 §15.5.12: 411.
    if request.version() < axum::http::Version::HTTP_2
        && !headers.contains_key(header::CONTENT_LENGTH)
        && !headers.contains_key(header::TRANSFER_ENCODING)
    {
        return error_response(
            StatusCode::LENGTH_REQUIRED,
            "the request has no Content-Length: send the AdmissionReview with its Content-Length (or, over HTTP/1.1, chunked)",
        );
    }
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        return error_response(StatusCode::PAYLOAD_TOO_LARGE, &too_large_message());
    }
    // hyper's exact size hint: the Content-Length, or 0 for an HTTP/1.1 request without a body;
    // none for a chunked or HTTP/2 body of unstated length, which may be as large as is accepted.
    let size = request.body().size_hint().exact().or(declared).unwrap_or(MAX_BODY_BYTES as u64);
    let size = usize::try_from(size).unwrap_or(MAX_BODY_BYTES).min(MAX_BODY_BYTES);
    let (budget, which) = if size > INLINE_BODY_BYTES {
        (&state.large_body_budget, metrics::Budget::Large)
    } else {
        (&state.small_body_budget, metrics::Budget::Small)
    };
    let _in_flight = state.metrics.in_flight();
    if size == 0 {
        return next.run(request).await;
    }
    // `size` is at most MAX_BODY_BYTES (4 MiB): it fits the semaphore's u32.
    let share = match budget.try_acquire(size as u32) {
        Ok(share) => Ok(share),
        Err(tokio::sync::TryAcquireError::Closed) => Err(()),
        Err(tokio::sync::TryAcquireError::NoPermits) => {
            // What the client may send while the body waits unread: its stream window (at most
            // `size`, which fits a u32 as above), and at least 64 KiB: the DATA frames h2 keeps
            // unread are slices of the connection's read buffer, and keep that buffer alive
            // (tens of KiB) however few bytes they hold, so that tiny bodies cannot wait by the
            // thousand.
            let unread = size.min(H2_STREAM_WINDOW_BYTES as usize).max(INLINE_BODY_BYTES) as u32;
            // Refused unread: over HTTP/2 the stream is reset after the answer instead of its
            // body being drained, so the client stops sending a body already refused
            // (drain::NoDrain).
            let refuse = |message: &str| {
                if request.version() == axum::http::Version::HTTP_2
                    && let Some(no_drain) = request.extensions().get::<drain::NoDrain>()
                {
                    no_drain.set();
                }
                error_response(StatusCode::SERVICE_UNAVAILABLE, message)
            };
            // On its connection first: waiting bodies may hold half its window at most.
            let Some(_on_connection) = state.waiting_per_connection.try_hold(peer, unread as usize) else {
                return refuse(&waiting_on_connection_message());
            };
            let Ok(_room) = state.waiting_room.try_acquire_many(unread) else {
                return refuse(&waiting_room_full_message());
            };
            let _waiting = state.metrics.body_waiting(which);
            budget.acquire(size as u32).await.map_err(|_| ())
        }
    };
    let Ok(share) = share else {
        return error_response(StatusCode::SERVICE_UNAVAILABLE, "shutting down");
    };
    // A body still arriving after its budget's stall bound loses its share to a request that
    // waits for room (budget::BodyBudget): it is answered at once.
    let request = share.watch(request);
    tokio::select! {
        // The answer first: a request answered at its first poll never registers for eviction.
        biased;
        answer = next.run(request) => answer,
        () = share.evicted() => {
            let mut answer = error_response(StatusCode::REQUEST_TIMEOUT, &stalled_message());
            answer.extensions_mut().insert(Stalled);
            answer
        }
    }
}

/// Marks the 408 of a request whose body stalled and lost its share (see [`admit_body`]).
#[derive(Clone, Copy)]
struct Stalled;

fn stalled_message() -> String {
    format!(
        "the request body was still arriving {} s after it was admitted while other requests waited for room: send the body with its headers",
        super::budget::SMALL_BODY_STALL_AFTER.as_secs()
    )
}

/// The first transfer coding of a request's `Transfer-Encoding` headers other than `chunked`
/// (RFC 9112 §7), cut to 40 characters; `None` when there is none.
fn unsupported_transfer_coding(headers: &HeaderMap) -> Option<String> {
    first_coding_but(headers, &header::TRANSFER_ENCODING, "chunked")
}

/// The first content coding of a request's `Content-Encoding` headers other than `identity`
/// (RFC 9110 §8.4), cut to 40 characters; `None` when there is none. A compressed body (`gzip`,
/// `br`) would otherwise be parsed as JSON: the API server never compresses a webhook request,
/// so the answer is 415 naming the coding.
fn unsupported_content_coding(headers: &HeaderMap) -> Option<String> {
    first_coding_but(headers, &header::CONTENT_ENCODING, "identity")
}

/// The first non-empty element of the comma-separated lists in the `name` headers that is not
/// `accepted` (compared without case), cut to 40 characters.
fn first_coding_but(headers: &HeaderMap, name: &header::HeaderName, accepted: &str) -> Option<String> {
    headers
        .get_all(name)
        .iter()
        .flat_map(|v| {
            String::from_utf8_lossy(v.as_bytes()).split(',').map(|c| c.trim().to_string()).collect::<Vec<_>>()
        })
        .find(|c| !c.is_empty() && !c.eq_ignore_ascii_case(accepted))
        .map(|c| crate::engine::excerpt(&c, 40).into_owned())
}

/// A 405's message: `method not allowed: /healthz takes GET, not POST`. The router adds its
/// `Allow` header only after this middleware has run (axum's method router sets it on the
/// fallback's answer), so the methods are [`server::router`](super::router)'s, named here; the
/// method is echoed cut to 20 characters.
fn method_not_allowed_message(method: &axum::http::Method, path: &str) -> String {
    let takes = match path {
        "/validate" | "/mutate" => "POST",
        _ => "GET",
    };
    format!("method not allowed: {path} takes {takes}, not {}", crate::engine::excerpt(method.as_str(), 20))
}

fn waiting_on_connection_message() -> String {
    format!(
        "busy: {} KiB of request bodies already wait to be read on this connection; this one was refused unread, retry later",
        super::WAITING_PER_CONNECTION_BYTES / 1024
    )
}

fn waiting_room_full_message() -> String {
    format!(
        "busy: {} MiB of request bodies already wait to be read; this one was refused unread, retry later",
        WAITING_BODY_BYTES / (1024 * 1024)
    )
}

fn too_large_message() -> String {
    format!("the body is over {} MiB, the largest AdmissionReview accepted", MAX_BODY_BYTES / (1024 * 1024))
}

/// The framework's own error answers (405, 408, 413 in plain text or empty) as the same JSON
/// `{"error", "status"}` body as every other error; a 405 names the method the path takes.
fn json_errors(response: Response, method: &axum::http::Method, path: &str) -> Response {
    let status = response.status();
    let message = match status {
        StatusCode::METHOD_NOT_ALLOWED => method_not_allowed_message(method, path),
        StatusCode::REQUEST_TIMEOUT => {
            format!("the request was not read and answered within {} s", REQUEST_TIMEOUT.as_secs())
        }
        StatusCode::PAYLOAD_TOO_LARGE => too_large_message(),
        // The framework's own 400 (a malformed chunked body, say); ours are JSON already.
        StatusCode::BAD_REQUEST => "the request body could not be read".to_string(),
        _ => return response,
    };
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if is_json {
        return response;
    }
    let allow = response.headers().get(header::ALLOW).cloned();
    let mut answer = error_response(status, &message);
    if let Some(allow) = allow {
        answer.headers_mut().insert(header::ALLOW, allow);
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_identity_is_an_accepted_content_coding() {
        let coding = |values: &[&str]| {
            let mut headers = HeaderMap::new();
            for v in values {
                headers.append(header::CONTENT_ENCODING, v.parse().unwrap());
            }
            unsupported_content_coding(&headers)
        };
        assert_eq!(coding(&[]), None);
        assert_eq!(coding(&["identity"]), None);
        assert_eq!(coding(&["IDENTITY", ""]), None);
        assert_eq!(coding(&["gzip"]).as_deref(), Some("gzip"));
        assert_eq!(coding(&["br"]).as_deref(), Some("br"));
        assert_eq!(coding(&["identity, deflate"]).as_deref(), Some("deflate"));
        assert_eq!(coding(&["identity", "zstd"]).as_deref(), Some("zstd"));
    }

    #[test]
    fn several_content_types_are_accepted_only_when_every_one_is_json() {
        let refused = |values: &[&str]| {
            let mut headers = HeaderMap::new();
            for v in values {
                headers.append(header::CONTENT_TYPE, v.parse().unwrap());
            }
            unsupported_media_type(&headers)
        };
        assert_eq!(refused(&[]), Some(NOT_JSON_MESSAGE));
        assert_eq!(refused(&["application/json"]), None);
        assert_eq!(refused(&["text/plain"]), Some(NOT_JSON_MESSAGE));
        assert_eq!(refused(&["application/json; charset=latin1"]), Some(NOT_UTF8_MESSAGE));
        assert_eq!(refused(&["application/json", "application/json; charset=utf-8"]), None);
        for several in [
            &["application/json", "text/plain"][..],
            &["text/plain", "application/json"],
            &["application/json", "application/json", "application/json; charset=latin1"],
        ] {
            assert_eq!(refused(several), Some(SEVERAL_TYPES_MESSAGE), "{several:?}");
        }
    }

    #[test]
    fn refusal_lines_are_limited_per_window_and_the_next_one_counts_those_left_out() {
        let log = RefusalLog::default();
        let start = Instant::now();
        for _ in 0..REFUSAL_LOG_BURST {
            assert_eq!(log.admit(start), Admitted::Log(0));
        }
        // The window's first left out says when to report them.
        let first = log.admit(start + Duration::from_secs(1));
        assert!(
            matches!(first, Admitted::FirstLeftOut(end) if end <= start + REFUSAL_LOG_WINDOW && end + Duration::from_secs(1) > start + REFUSAL_LOG_WINDOW),
            "{first:?}"
        );
        for _ in 0..4 {
            assert_eq!(log.admit(start + Duration::from_secs(1)), Admitted::LeftOut);
        }
        // Still the same window.
        assert_eq!(log.admit(start + REFUSAL_LOG_WINDOW - Duration::from_millis(1)), Admitted::LeftOut);
        // A new window: logged again, saying how many were left out.
        let next = start + REFUSAL_LOG_WINDOW;
        assert_eq!(log.admit(next), Admitted::Log(6));
        assert_eq!(log.admit(next), Admitted::Log(0));
    }

    /// A `tracing` writer into a shared buffer.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// s21: the count of lines left out was only logged with the next refusal; when none came, it
    /// was never reported. On tokio's paused clock (current thread, so the capturing subscriber
    /// sees the reporting task's line too).
    #[tokio::test(start_paused = true)]
    async fn lines_left_out_are_reported_when_their_window_ends_without_another_refusal() {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber =
            tracing_subscriber::fmt().with_writer(move || writer.clone()).with_ansi(false).finish();
        let _guard = tracing::subscriber::set_default(subscriber);
        let log = RefusalLog::default();
        let refuse =
            || log.log(StatusCode::NOT_FOUND, "no such endpoint", None, &axum::http::Method::GET, "/x");
        for _ in 0..REFUSAL_LOG_BURST + 7 {
            refuse();
        }
        let text = || String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
        assert_eq!(text().matches("refused a request").count(), REFUSAL_LOG_BURST as usize);
        assert!(!text().contains("left out"), "{}", text());
        tokio::time::sleep(REFUSAL_LOG_WINDOW).await;
        // Let the reporting task run.
        for _ in 0..100 {
            if text().contains("left out") {
                break;
            }
            tokio::task::yield_now().await;
        }
        assert!(text().contains("refusal lines left out") && text().contains("suppressed=7"), "{}", text());
        // Reported once: the next line logged counts none, nor does shutdown.
        refuse();
        log.report_left_out();
        assert!(text().trim_end().ends_with("suppressed=0"), "{}", text());
        assert_eq!(text().matches("suppressed=7").count(), 1, "{}", text());
    }
}
