//! s27: the server's memory across connections, its busy answers, and a stalled log reader, over
//! real HTTPS (s26 break-it pass).
//!
//! - What all connections together can make the server hold before it reads a byte is bounded:
//!   the HTTP/2 connection window the server grants (seen on the wire) times the connection cap,
//!   the header list an HTTP/2 or HTTP/1.1 request may carry, and what an HTTP/1.1 connection
//!   buffers. Until s27: 1 MiB a connection over 1,024 connections, and about 400 KB of HTTP/1.1
//!   buffer each (1,000 pipelining clients took the server to 387 MB).
//! - A review refused because too many wait for evaluation is told how many of those are from its
//!   own connection (it was told "the most of them from this connection" when it had none), and
//!   every busy answer says when to come back (`Retry-After`).
//! - A log reader that stops reading (stderr a pipe nobody reads) never hangs a review: lines are
//!   dropped and counted instead (every review hung while `/healthz` stayed 200).

mod common;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::wire::{h2_connection, open_post, raw_tls, upload_within_the_window};
use common::*;
use futures::FutureExt;
use futures::future::BoxFuture;
use probegate::policy::Policy;
use probegate::server;
use probegate::server::configmaps::{ConfigMapFetch, ConfigMapResolver, Fetched};
use probegate::server::metrics::LaneName;
use serde_json::{Value, json};

/// Most request data, MiB, that all connections together may make the server hold unread (the
/// HTTP/2 connection window it grants each, times the connection cap): under deploy/'s 128 MiB
/// beside the body budgets and the server's own 20 MB.
const UNREAD_BOUND_MIB: usize = 32;

/// The window a new stream is granted at once: reserves more than any window and reads what was
/// assigned (what the client may send before the server reads anything).
async fn granted(send: &mut h2::SendStream<axum::body::Bytes>) -> usize {
    send.reserve_capacity(64 * 1024 * 1024);
    match futures::future::poll_fn(|cx| send.poll_capacity(cx)).await {
        Some(Ok(n)) => n,
        other => panic!("no capacity: {other:?}"),
    }
}

/// The unread data one HTTP/2 connection may send, as a client sees it: streams that declare
/// large bodies and send nothing, each granted what is left of the connection window, until one
/// is granted nothing more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_all_connections_together_can_make_the_server_hold_unread_is_bounded() {
    let (running, ca) = start_server(Policy::default(), |_| {}).await;
    let mut client = h2_connection(running.addr, &ca).await;
    client = client.clone().ready().await.unwrap();
    let (health, _) =
        client.send_request(http::Request::get("https://localhost/healthz").body(()).unwrap(), true).unwrap();
    assert_eq!(health.await.unwrap().status(), 200);
    let mut connection_window = 0;
    let mut streams = Vec::new();
    loop {
        let (response, mut send) = open_post(&mut client, server::MAX_BODY_BYTES).await;
        send.reserve_capacity(64 * 1024 * 1024);
        // A stream granted nothing more within a second: the connection window is spent (a
        // grant is local to the client once the server's WINDOW_UPDATE arrived, at the start).
        let got = tokio::time::timeout(Duration::from_secs(1), granted(&mut send)).await;
        streams.push((response, send));
        match got {
            Ok(n) if n > 0 => connection_window += n,
            _ => break,
        }
        assert!(streams.len() <= 64, "{} bytes granted so far", connection_window);
    }
    let all = connection_window * server::conn::MAX_CONNECTIONS;
    assert!(
        all <= UNREAD_BOUND_MIB * 1024 * 1024,
        "one connection may send {connection_window} bytes unread, {} connections {} MiB",
        server::conn::MAX_CONNECTIONS,
        all / (1024 * 1024)
    );
    // Never less than a stream window: a review of one window arrives in one round trip.
    assert!(connection_window >= server::H2_STREAM_WINDOW_BYTES as usize, "{connection_window}");
}

/// An HTTP/2 request whose header list is larger than the server takes is refused before it
/// reaches a handler; a request just under it is answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http2_header_list_over_the_bound_is_refused_and_one_under_it_is_answered() {
    let (running, ca) = start_server(Policy::default(), |_| {}).await;
    let bound = server::H2_MAX_HEADER_LIST_BYTES as usize;
    let mut outcomes = Vec::new();
    for size in [bound / 2, 12 * 1024] {
        let mut client = h2_connection(running.addr, &ca).await;
        client = client.clone().ready().await.unwrap();
        let request = http::Request::get("https://localhost/healthz")
            .header("x-pad", "a".repeat(size))
            .body(())
            .unwrap();
        let outcome = match client.send_request(request, true) {
            Ok((response, _)) => match response.await {
                Ok(r) => r.status().as_u16().to_string(),
                Err(e) => format!("refused: {e}"),
            },
            Err(e) => format!("refused: {e}"),
        };
        outcomes.push(outcome);
    }
    assert_eq!(outcomes[0], "200", "{outcomes:?}");
    assert!(outcomes[1] == "431" || outcomes[1].starts_with("refused"), "{outcomes:?}");
}

/// Sends `request` on a raw TLS connection and returns the status line of the answer, or how the
/// connection ended without one.
fn http1_status(addr: std::net::SocketAddr, ca: &str, request: &[u8]) -> String {
    let mut tls = raw_tls(addr, ca);
    if let Err(e) = tls.write_all(request) {
        return format!("closed: {e}");
    }
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tls.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                answer.extend_from_slice(&buf[..n]);
                if answer.windows(4).any(|w| w == b"\r\n\r\n") {
                    break;
                }
            }
            Err(e) => return format!("closed: {e}"),
        }
    }
    String::from_utf8_lossy(&answer).lines().next().unwrap_or("closed: no answer").to_string()
}

/// What an HTTP/1.1 connection buffers is bounded by [`server::HTTP1_MAX_BUF_BYTES`]: headers
/// larger than it are refused (431, by hyper), so a client cannot make the server keep hundreds
/// of KiB of one request's headers; a request whose headers fit is answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http1_headers_over_the_read_buffer_are_refused_and_smaller_ones_answered() {
    let (running, ca) = start_server(Policy::default(), |_| {}).await;
    let addr = running.addr;
    let statuses = tokio::task::spawn_blocking(move || {
        [server::HTTP1_MAX_BUF_BYTES / 2, 64 * 1024]
            .map(|size| {
                let request = format!(
                    "GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Pad: {}\r\nConnection: close\r\n\r\n",
                    "a".repeat(size)
                );
                http1_status(addr, &ca, request.as_bytes())
            })
            .to_vec()
    })
    .await
    .unwrap();
    assert!(statuses[0].starts_with("HTTP/1.1 200"), "{statuses:?}");
    assert!(statuses[1].starts_with("HTTP/1.1 431") || statuses[1].starts_with("closed"), "{statuses:?}");
}

/// ConfigMap reads that wait for the test to let each one through, then answer "not found";
/// counts the reads started.
struct Gated {
    gate: Arc<tokio::sync::Semaphore>,
    started: Arc<AtomicUsize>,
}

impl ConfigMapFetch for Gated {
    fn fetch(&self, _namespace: &str, _name: &str) -> BoxFuture<'static, Fetched> {
        let (gate, started) = (Arc::clone(&self.gate), Arc::clone(&self.started));
        async move {
            started.fetch_add(1, Ordering::SeqCst);
            gate.acquire().await.unwrap().forget();
            Fetched::NotFound
        }
        .boxed()
    }
}

/// A Pod whose liveness probe runs a script from the ConfigMap `configmap`, padded past
/// [`server::EXPENSIVE_BODY_BYTES`]: the expensive lane, one at a time.
fn expensive_pod(configmap: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": configmap, "namespace": "shop", "annotations": {"pad": "p".repeat(20_000)}},
        "spec": {"containers": [{"name": "app", "image": "app:1", "ports": [{"containerPort": 8080}],
            "livenessProbe": {"exec": {"command": ["sh", "/health/check.sh"]}},
            "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}},
            "volumeMounts": [{"name": "health", "mountPath": "/health"}]}],
        "volumes": [{"name": "health", "configMap": {"name": configmap}}]}})
}

type Answers = Arc<Mutex<BTreeMap<String, (u16, Option<String>, Value)>>>;

/// Posts `body` on a new stream of `client`; its status, `Retry-After` and body land in
/// `answers` under `uid`.
async fn post(
    client: &mut h2::client::SendRequest<axum::body::Bytes>,
    body: Vec<u8>,
    uid: &str,
    answers: &Answers,
) {
    let (response, mut send) = open_post(client, body.len()).await;
    let (answers, uid) = (Arc::clone(answers), uid.to_string());
    tokio::spawn(async move {
        let (_, response) = tokio::join!(upload_within_the_window(&mut send, &body), response);
        let response = response.unwrap();
        let status = response.status().as_u16();
        let retry = response.headers().get("retry-after").map(|v| v.to_str().unwrap().to_string());
        let mut body = response.into_body();
        let mut text = Vec::new();
        while let Some(Ok(chunk)) = body.data().await {
            let _ = body.flow_control().release_capacity(chunk.len());
            text.extend_from_slice(&chunk);
        }
        let value = serde_json::from_slice(&text).unwrap_or(Value::Null);
        answers.lock().unwrap().insert(uid, (status, retry, value));
    });
}

/// s26 break-it pass: a review refused a place because [`server::MAX_WAITING_EXPENSIVE`] already
/// wait was told "the most of them from this connection" although its connection had none
/// waiting. Here 33 connections hold the expensive lane's place and its whole queue with one
/// review each (their ConfigMap reads wait for the test); a 34th connection's review is refused
/// and told none of them are its own, a second review on a connection that has one waiting is
/// told 1. Both carry `Retry-After`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_answer_says_how_many_of_the_waiting_reviews_are_its_connections() {
    let (running, ca) = start_server(Policy::default(), |_| {}).await;
    let state = Arc::clone(&running.state);
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let started = Arc::new(AtomicUsize::new(0));
    let fetch = Gated { gate: Arc::clone(&gate), started: Arc::clone(&started) };
    let resolver = ConfigMapResolver::with_budget(Arc::new(fetch), Duration::from_secs(30));
    state.set_configmap_resolver(Some(Arc::new(resolver)));
    let answers: Answers = Arc::new(Mutex::new(BTreeMap::new()));
    let waiting = server::MAX_WAITING_EXPENSIVE;
    let body = |uid: &str| {
        let body = serde_json::to_vec(&review("CREATE", &expensive_pod(uid), None, uid)).unwrap();
        assert!(body.len() > server::EXPENSIVE_BODY_BYTES && body.len() < server::INLINE_BODY_BYTES);
        body
    };
    let mut connections = Vec::new();
    for i in 0..=waiting {
        let mut client = h2_connection(running.addr, &ca).await;
        post(&mut client, body(&format!("hold-{i}")), &format!("hold-{i}"), &answers).await;
        connections.push(client);
        // The first holds the place (its read waits); the others wait, one a connection.
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while started.load(Ordering::SeqCst) == 0 {
            assert!(std::time::Instant::now() < deadline, "the first review's read never started");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !(started.load(Ordering::SeqCst) == 1
        && state.metrics.evaluations_waiting(LaneName::Expensive) == waiting as i64)
    {
        assert!(
            std::time::Instant::now() < deadline,
            "{} reads started, {} waiting, answers {:?}",
            started.load(Ordering::SeqCst),
            state.metrics.evaluations_waiting(LaneName::Expensive),
            answers.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut newcomer = h2_connection(running.addr, &ca).await;
    post(&mut newcomer, body("new"), "new", &answers).await;
    // The second connection's review waits (the first's holds the place): one of its own.
    post(&mut connections[1], body("second"), "second", &answers).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !(answers.lock().unwrap().contains_key("new") && answers.lock().unwrap().contains_key("second")) {
        assert!(std::time::Instant::now() < deadline, "{:?}", answers.lock().unwrap().keys());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let answers_now = answers.lock().unwrap().clone();
    for (uid, own) in [("new", "none of them"), ("second", "1 of them")] {
        let (status, retry, answer) = &answers_now[uid];
        assert_eq!(*status, 503, "{uid}: {answer}");
        let message = answer["error"].as_str().unwrap();
        assert_eq!(
            message,
            format!(
                "busy: {waiting} reviews already wait for evaluation, {own} from this connection; retry later"
            ),
        );
        assert_eq!(retry.as_deref(), Some("1"), "{uid}: a busy answer says when to come back");
    }
    // None of the 33 was refused for them.
    assert!(answers_now.keys().all(|k| k == "new" || k == "second"), "{:?}", answers_now.keys());
    gate.add_permits(1000);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while answers.lock().unwrap().len() < waiting + 3 {
        assert!(std::time::Instant::now() < deadline, "{:?}", answers.lock().unwrap().len());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let answered_200 = answers.lock().unwrap().values().filter(|(status, _, _)| *status == 200).count();
    assert_eq!(answered_200, waiting + 1);
}

/// `probegate serve` with its stderr a pipe that is read up to the "serving" line and then never
/// again (a log shipper that stalled): the pipe fills after some 64 KiB of log.
struct StalledLog {
    child: std::process::Child,
    addr: std::net::SocketAddr,
    dir: tempfile::TempDir,
    /// Dropping it ends the thread that holds the pipe's read end open.
    _release: std::sync::mpsc::Sender<()>,
}

impl StalledLog {
    fn start(env: &[(&str, &str)]) -> StalledLog {
        use std::io::BufRead;
        let dir = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_probegate"))
            .args(["serve", "--addr", "127.0.0.1:0", "--no-namespace-watch", "--write-ca"])
            .arg(dir.path().join("ca.pem"))
            .env("TMPDIR", dir.path())
            .envs(env.iter().copied())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (release, released) = std::sync::mpsc::channel::<()>();
        std::thread::spawn(move || {
            let mut reader = std::io::BufReader::new(stderr);
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                if let Some(addr) = line
                    .contains("probegate serving")
                    .then(|| line.split_whitespace().find_map(|w| w.strip_prefix("addr=")?.parse().ok()))
                    .flatten()
                {
                    let _ = addr_tx.send(addr);
                    // Never read again, the read end kept open until the test ends.
                    let _ = released.recv();
                    return;
                }
                line.clear();
            }
        });
        let Ok(addr) = addr_rx.recv_timeout(Duration::from_secs(60)) else {
            let _ = child.kill();
            panic!("no serving line");
        };
        StalledLog { child, addr, dir, _release: release }
    }
}

impl Drop for StalledLog {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// s26 break-it pass (`repro_logblock.sh`): with stderr a pipe whose reader stopped, a log line
/// written once the pipe's 64 KiB were full blocked the worker writing it, and every review hung
/// (no answer within 5 s) while `/healthz` stayed 200. Now the lines go to a writer thread through
/// a bounded queue, and past it they are dropped and counted: every review is answered, and
/// `/metrics` counts the lines dropped. (At `RUST_LOG=trace` the h2 crate logs about a hundred
/// lines a review, so the pipe and the queue fill within the run.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_log_reader_never_hangs_a_review() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let served = StalledLog::start(&[("RUST_LOG", "trace")]);
    let ca = std::fs::read_to_string(served.dir.path().join("ca.pem")).unwrap();
    // HTTP/2: at `trace` the h2 crate logs about a hundred lines a review.
    let https = https_client(&[&ca], false);
    let url = format!("https://localhost:{}/validate", served.addr.port());
    let coupled = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples/pod-liveness-checks-database-review.json"),
    )
    .unwrap();
    let (mut denied, mut failed) = (0, Vec::new());
    for i in 0..200 {
        let sent = https
            .post(&url)
            .header("content-type", "application/json")
            .body(coupled.clone())
            .timeout(Duration::from_secs(20))
            .send()
            .await;
        match sent {
            Ok(r) if r.status() == 200 => {
                let v: Value = r.json().await.unwrap();
                if v["response"]["allowed"] == false {
                    denied += 1;
                }
            }
            other => {
                failed.push(format!("review {i}: {other:?}"));
                break;
            }
        }
    }
    assert!(failed.is_empty(), "{denied} denied, then {failed:?}");
    assert_eq!(denied, 200);
    let metrics = https
        .get(format!("https://localhost:{}/metrics", served.addr.port()))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let dropped: u64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("probegate_log_lines_dropped_total "))
        .unwrap_or_else(|| panic!("no dropped-lines counter:\n{metrics}"))
        .trim()
        .parse()
        .unwrap();
    assert!(dropped > 0, "the queue never filled: nothing dropped");
}
