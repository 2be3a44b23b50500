//! The server's refusals (413, 405, 415, 400, 404; 408) reach HTTP/2 and HTTP/1.1 clients whole,
//! status and JSON message, over real HTTPS (s19 break-it pass: over HTTP/2, curl 7.88 reported
//! error 92 instead of a 413 or a 405, because the stream was reset after the answer).

mod common;

use std::time::{Duration, Instant};

use axum::body::Bytes;
use common::wire::{answer_of, h2_connection, raw_tls, upload_within_the_window};
use common::*;
use probegate::policy::Policy;
use probegate::server;
use serde_json::Value;

/// A refused request and what its answer must say.
struct Refusal {
    what: &'static str,
    path: &'static str,
    content_type: &'static str,
    /// A `Content-Encoding` header, if any.
    encoding: Option<&'static str>,
    body: Vec<u8>,
    /// Sent with its `Content-Length` (else of unstated length: chunked over HTTP/1.1).
    declared: bool,
    status: u16,
    /// In the JSON answer's `error`.
    message: &'static str,
}

/// Larger than an HTTP/2 stream window (8 KiB): the refusal comes while it is still being sent.
fn upload() -> Vec<u8> {
    vec![b' '; 100_000]
}

fn refusals() -> Vec<Refusal> {
    let over = vec![b' '; server::MAX_BODY_BYTES + 1024 * 1024];
    let json = "application/json";
    let v2 = br#"{"apiVersion":"admission.k8s.io/v2","kind":"AdmissionReview","request":{"uid":"u"}}"#;
    let v1 = br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u"}}"#;
    let no_object = br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","kind":{"group":"","version":"v1","kind":"Pod"},"operation":"CREATE","userInfo":{}}}"#;
    vec![
        Refusal {
            what: "over the limit, declared",
            path: "/validate",
            content_type: json,
            encoding: None,
            body: over.clone(),
            declared: true,
            status: 413,
            message: "the body is over 4 MiB",
        },
        Refusal {
            what: "over the limit, unstated length",
            path: "/mutate",
            content_type: json,
            encoding: None,
            body: over,
            declared: false,
            status: 413,
            message: "the body is over 4 MiB",
        },
        Refusal {
            what: "POST to a GET endpoint",
            path: "/healthz",
            content_type: json,
            encoding: None,
            body: upload(),
            declared: true,
            status: 405,
            message: "method not allowed: /healthz takes GET, not POST",
        },
        Refusal {
            what: "not JSON",
            path: "/validate",
            content_type: "text/plain",
            encoding: None,
            body: upload(),
            declared: true,
            status: 415,
            message: "Content-Type must be application/json",
        },
        Refusal {
            what: "no such endpoint",
            path: "/nope",
            content_type: json,
            encoding: None,
            body: upload(),
            declared: false,
            status: 404,
            message: "no such endpoint",
        },
        // Checked in this order: path, method, content type and coding, then size (s20: a body
        // over the limit got 413 whatever its path, method or type).
        Refusal {
            what: "over the limit to no such endpoint",
            path: "/nope",
            content_type: json,
            encoding: None,
            body: vec![b' '; server::MAX_BODY_BYTES + 1],
            declared: true,
            status: 404,
            message: "no such endpoint",
        },
        Refusal {
            what: "over the limit to a GET endpoint",
            path: "/healthz",
            content_type: json,
            encoding: None,
            body: vec![b' '; server::MAX_BODY_BYTES + 1],
            declared: true,
            status: 405,
            message: "method not allowed",
        },
        Refusal {
            what: "over the limit, not JSON",
            path: "/validate",
            content_type: "text/plain",
            encoding: None,
            body: vec![b' '; server::MAX_BODY_BYTES + 1],
            declared: true,
            status: 415,
            message: "Content-Type must be application/json",
        },
        // A compressed body (s20: gzip got "not JSON", br was parsed as if plain).
        Refusal {
            what: "gzip",
            path: "/validate",
            content_type: json,
            encoding: Some("gzip"),
            body: upload(),
            declared: true,
            status: 415,
            message: r#"Content-Encoding "gzip" is not supported"#,
        },
        Refusal {
            what: "br, over the limit",
            path: "/mutate",
            content_type: json,
            encoding: Some("br"),
            body: vec![b' '; server::MAX_BODY_BYTES + 1],
            declared: true,
            status: 415,
            message: r#"Content-Encoding "br" is not supported"#,
        },
        Refusal {
            what: "another AdmissionReview version",
            path: "/validate",
            content_type: json,
            encoding: None,
            body: v2.to_vec(),
            declared: true,
            status: 400,
            message: r#"apiVersion "admission.k8s.io/v2", kind "AdmissionReview"; probegate accepts only apiVersion admission.k8s.io/v1"#,
        },
        // s21: each was answered with a message that named something else.
        Refusal {
            what: "a review without kind (was: unsupported version)",
            path: "/validate",
            content_type: json,
            encoding: None,
            body: br#"{"apiVersion":"admission.k8s.io/v1"}"#.to_vec(),
            declared: true,
            status: 400,
            message: "the body is not an AdmissionReview: no kind (expected kind AdmissionReview with apiVersion admission.k8s.io/v1)",
        },
        Refusal {
            what: "a CREATE without object (was: not an AdmissionReview)",
            path: "/validate",
            content_type: json,
            encoding: None,
            body: no_object.to_vec(),
            declared: true,
            status: 400,
            message: "request.object is missing: a CREATE request for a Pod carries the object",
        },
        Refusal {
            what: "null (was: expected struct AdmissionReviewRequest)",
            path: "/mutate",
            content_type: json,
            encoding: None,
            body: b"null".to_vec(),
            declared: true,
            status: 400,
            message: "the body is not an AdmissionReview: invalid type: null, expected an AdmissionReview object",
        },
        Refusal {
            what: "a UTF-8 byte order mark (was: invalid JSON)",
            path: "/validate",
            content_type: json,
            encoding: None,
            body: [&b"\xEF\xBB\xBF"[..], v1].concat(),
            declared: true,
            status: 400,
            message: "it starts with a UTF-8 byte order mark (BOM), which JSON does not allow",
        },
    ]
}

/// The body in 16 KiB pieces, as a stream (no `Content-Length`).
fn in_pieces(body: Vec<u8>) -> reqwest::Body {
    let pieces: Vec<Result<Bytes, std::io::Error>> =
        body.chunks(16 * 1024).map(|c| Ok(Bytes::copy_from_slice(c))).collect();
    reqwest::Body::wrap_stream(futures::stream::iter(pieces))
}

/// With reqwest (hyper's client) over HTTP/2 (ALPN) and over HTTP/1.1: every refusal's status and
/// message, and the server serves on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_refusal_reaches_http2_and_http1_clients_with_its_status_and_message() {
    let (running, ca) = start_server(Policy::default(), |_| {}).await;
    let base = format!("https://localhost:{}", running.addr.port());
    for (client, version) in [
        (https_client(&[&ca], false), reqwest::Version::HTTP_2),
        (https_client(&[&ca], true), reqwest::Version::HTTP_11),
    ] {
        for r in refusals() {
            let body = if r.declared { reqwest::Body::from(r.body) } else { in_pieces(r.body) };
            let mut request =
                client.post(format!("{base}{}", r.path)).header("content-type", r.content_type).body(body);
            if let Some(encoding) = r.encoding {
                request = request.header("content-encoding", encoding);
            }
            let answer = request.send().await.unwrap_or_else(|e| panic!("{version:?} {}: {e:?}", r.what));
            assert_eq!(answer.version(), version, "{}", r.what);
            assert_eq!(answer.status(), r.status, "{version:?} {}", r.what);
            assert_eq!(answer.headers()["content-type"], "application/json", "{version:?} {}", r.what);
            let v: Value = answer.json().await.unwrap_or_else(|e| panic!("{version:?} {}: {e:?}", r.what));
            assert_eq!(v["status"], r.status, "{version:?} {}: {v}", r.what);
            assert!(v["error"].as_str().unwrap().contains(r.message), "{version:?} {}: {v}", r.what);
        }
        let healthy = client.get(format!("{base}/healthz")).send().await.unwrap();
        assert_eq!(healthy.status(), 200);
    }
}

/// Frame by frame (the h2 crate): a refused request's client uploads its whole body within the
/// flow-control window and ends the stream itself; the server reads the rest of the body after
/// its answer instead of resetting the stream (RST_STREAM(NO_ERROR), which curl 7.88 reported as
/// error 92 and which stopped the upload here: "stream closed with ... bytes unsent"). A body
/// declared larger than the server drains still gets its whole answer, then the reset.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http2_a_refused_upload_is_read_to_its_end_not_reset() {
    let (running, ca) = start_server(Policy::default(), |_| {}).await;
    let mut client = h2_connection(running.addr, &ca).await;
    for r in refusals().into_iter().filter(|r| r.status != 400) {
        let mut request = http::Request::post(format!("https://localhost{}", r.path))
            .header("content-type", r.content_type);
        if r.declared {
            request = request.header("content-length", r.body.len());
        }
        if let Some(encoding) = r.encoding {
            request = request.header("content-encoding", encoding);
        }
        client = client.clone().ready().await.unwrap();
        let (response, mut send) = client.send_request(request.body(()).unwrap(), false).unwrap();
        let (uploaded, (status, v)) = tokio::join!(
            tokio::time::timeout(Duration::from_secs(20), upload_within_the_window(&mut send, &r.body)),
            answer_of(response)
        );
        assert_eq!(status, r.status, "{}: {v}", r.what);
        assert!(v["error"].as_str().unwrap().contains(r.message), "{}: {v}", r.what);
        uploaded
            .unwrap_or_else(|_| panic!("{}: upload stalled", r.what))
            .unwrap_or_else(|e| panic!("{}: {e}", r.what));
        // A round trip on the same connection: any reset of the stream would have come before it.
        client = client.clone().ready().await.unwrap();
        let get = http::Request::get("https://localhost/healthz").body(()).unwrap();
        let (health, _) = client.send_request(get, true).unwrap();
        assert_eq!(health.await.unwrap().status(), 200);
        let reset = futures::FutureExt::now_or_never(futures::future::poll_fn(|cx| send.poll_reset(cx)));
        assert!(reset.is_none(), "{}: reset {reset:?}", r.what);
    }
    // Declared larger than is drained: the 413 whole, then RST_STREAM(NO_ERROR) at once (RFC 9113
    // section 8.1: "stop sending, the response is complete"), the body never read.
    let declared = server::drain::DRAIN_MAX_BYTES + 1;
    let request = http::Request::post("https://localhost/validate")
        .header("content-type", "application/json")
        .header("content-length", declared)
        .body(())
        .unwrap();
    client = client.clone().ready().await.unwrap();
    let (response, mut send) = client.send_request(request, false).unwrap();
    let (status, v) = answer_of(response).await;
    assert_eq!(status, 413, "{v}");
    assert!(v["error"].as_str().unwrap().contains("4 MiB"), "{v}");
    let started = Instant::now();
    let reset = futures::future::poll_fn(|cx| send.poll_reset(cx)).await.unwrap();
    assert_eq!(reset, h2::Reason::NO_ERROR);
    assert!(started.elapsed() < server::drain::DRAIN_TIMEOUT, "reset at once, not after draining");
}

/// A stalled HTTP/1.1 upload (headers, `Content-Length: 1000`, 10 bytes, then silence) is answered
/// 408 at the request bound (4 s, docs/server.md), well under the API server's webhook timeout
/// (10 s by default), and the connection is closed. (The s19 break-it pass reported ~40 s.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_http1_upload_gets_408_at_the_request_bound() {
    use std::io::{Read, Write};
    let (running, ca) = start_server(Policy::default(), |_| {}).await;
    let addr = running.addr;
    let (elapsed, answer, then) = tokio::task::spawn_blocking(move || {
        let mut tls = raw_tls(addr, &ca);
        // The deadline: the answer must come by then, or the read fails.
        tls.sock.set_read_timeout(Some(server::REQUEST_TIMEOUT + Duration::from_secs(3))).unwrap();
        let head = "POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n";
        tls.write_all(format!("{head}{}", "{".repeat(10)).as_bytes()).unwrap();
        tls.flush().unwrap();
        let started = Instant::now();
        let mut answer = Vec::new();
        let mut buf = [0u8; 4096];
        while !String::from_utf8_lossy(&answer).contains("\"status\"") {
            match tls.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => answer.extend_from_slice(&buf[..n]),
            }
        }
        let elapsed = started.elapsed();
        // Then the connection closes, once the rest of the body has not come within the drain bound.
        let then = tls.read(&mut buf).map_err(|e| e.kind());
        let closed_after = started.elapsed() - elapsed;
        (elapsed, String::from_utf8_lossy(&answer).into_owned(), (then, closed_after))
    })
    .await
    .unwrap();
    assert!(answer.starts_with("HTTP/1.1 408"), "after {elapsed:?}: {answer}");
    assert!(answer.contains(r#""error":"the request was not read and answered within 4 s""#), "{answer}");
    let bound = server::REQUEST_TIMEOUT;
    assert!(elapsed >= bound - Duration::from_millis(200), "408 before the bound: {elapsed:?}");
    assert!(elapsed < bound + Duration::from_secs(2), "408 after {elapsed:?}");
    let (then, closed_after) = then;
    assert!(matches!(then, Ok(0)), "the connection stays open: {then:?}");
    assert!(
        closed_after < server::drain::DRAIN_TIMEOUT + Duration::from_secs(2),
        "closed after {closed_after:?}"
    );
}

/// Reads from `tls` until `done` says the text read so far is whole, or the connection ends.
fn read_until(
    tls: &mut rustls::StreamOwned<rustls::ClientConnection, std::net::TcpStream>,
    done: impl Fn(&str) -> bool,
) -> String {
    use std::io::Read;
    let mut text = String::new();
    let mut buf = [0u8; 4096];
    while !done(&text) {
        match tls.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => text.push_str(&String::from_utf8_lossy(&buf[..n])),
        }
    }
    text
}

/// Over HTTP/1.1 (raw TLS): a refused client that goes on sending its body after the answer can
/// finish it, and the connection then serves its next request. hyper closed the connection after
/// the answer, under the upload: the client's writes then failed or its data drew a TCP reset,
/// which can discard the answer before it is read (curl 7.88: "(55) Send failure: Broken pipe" in
/// 1 of 40 chunked uploads to a wrong path; reqwest: "IncompleteMessage" in this suite).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http1_a_refused_upload_is_read_to_its_end_and_the_connection_serves_on() {
    use std::io::Write;
    let (running, ca) = start_server(Policy::default(), |_| {}).await;
    let addr = running.addr;
    let upload = upload();
    let chunked = |body: &[u8]| {
        let mut out = Vec::new();
        for piece in body.chunks(16 * 1024) {
            out.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
            out.extend_from_slice(piece);
            out.extend_from_slice(b"\r\n");
        }
        out
    };
    let over = server::MAX_BODY_BYTES + 1024 * 1024;
    let mut last_chunk = chunked(&upload);
    last_chunk.extend_from_slice(b"0\r\n\r\n");
    let cases: Vec<(&str, String, Vec<u8>, u16, &str)> = vec![
        (
            "no such endpoint, chunked",
            "POST /nope HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".into(),
            last_chunk,
            404,
            "no such endpoint",
        ),
        (
            "POST to a GET endpoint",
            format!("POST /healthz HTTP/1.1\r\nHost: localhost\r\nContent-Length: {}\r\n\r\n", upload.len()),
            upload.clone(),
            405,
            "method not allowed",
        ),
        (
            "not JSON",
            format!("POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n", upload.len()),
            upload.clone(),
            415,
            "Content-Type must be application/json",
        ),
        (
            "over the limit, declared",
            format!("POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {over}\r\n\r\n"),
            vec![b' '; over],
            413,
            "the body is over 4 MiB",
        ),
    ];
    for (what, head, body, status, message) in cases {
        let ca = ca.clone();
        let (answer, next) = tokio::task::spawn_blocking(move || {
            let mut tls = raw_tls(addr, &ca);
            // The head and a first piece of the body, then the answer, which comes before the rest.
            let first = body.len().min(1000);
            tls.write_all(head.as_bytes()).unwrap();
            tls.write_all(&body[..first]).unwrap();
            tls.flush().unwrap();
            let answer = read_until(&mut tls, |t| t.contains("\"status\":") && t.ends_with('}'));
            let sent = tls
                .write_all(&body[first..])
                .and_then(|()| tls.write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"))
                .and_then(|()| tls.flush());
            let next = match sent {
                Ok(()) => read_until(&mut tls, |t| t.ends_with("ok\n")),
                Err(e) => format!("(the rest of the upload failed: {e})"),
            };
            (answer, next)
        })
        .await
        .unwrap();
        assert!(answer.starts_with(&format!("HTTP/1.1 {status} ")), "{what}: {answer}");
        assert!(answer.contains(message), "{what}: {answer}");
        assert!(next.starts_with("HTTP/1.1 200 "), "{what}: the next request got {next:?}");
    }
}

/// One WARN line per refused request (status, reason, peer address, method, path), never its
/// body, and at most `REFUSAL_LOG_BURST` a minute: a flood of refusals cannot fill a disk with
/// log lines (s20: refusals were counted in the metrics but not logged at all).
#[test]
fn refusals_are_logged_one_line_each_without_the_body_and_a_flood_is_cut_short() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let args: Vec<String> = ["--addr", "127.0.0.1:0", "--no-namespace-watch"].map(String::from).to_vec();
    let served = Served::start(&args, &[], Duration::from_secs(60));
    let (addr, ca) = (served.addr, served.ca_pem());
    let burst = server::gate::REFUSAL_LOG_BURST as usize;
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let client = https_client(&[&ca], true);
        let base = format!("https://localhost:{}", addr.port());
        let gzip = client
            .post(format!("{base}/validate"))
            .header("content-type", "application/json")
            .header("content-encoding", "gzip")
            .body("SECRET-BODY-gzip")
            .send()
            .await
            .unwrap();
        assert_eq!(gzip.status(), 415);
        for i in 0..burst + 10 {
            let r = client.post(format!("{base}/nope-{i}")).body("SECRET-BODY").send().await.unwrap();
            assert_eq!(r.status(), 404);
        }
    });
    let refused = |log: &str| log.lines().filter(|l| l.contains("refused a request")).count();
    wait_until("the refusals logged", Duration::from_secs(10), || refused(&served.log()) >= burst);
    std::thread::sleep(Duration::from_millis(300));
    let log = served.log();
    assert_eq!(refused(&log), burst, "{log}");
    assert!(!log.contains("SECRET-BODY"), "{log}");
    let lines: Vec<&str> = log.lines().filter(|l| l.contains("refused a request")).collect();
    for (line, wanted) in [
        (lines[0], ["WARN", "status=415", r#"Content-Encoding "gzip" is not supported"#, "path=/validate"]),
        (lines[1], ["WARN", "status=404", "reason=no such endpoint", "path=/nope-0"]),
    ] {
        for w in wanted.iter().chain(&["peer=127.0.0.1:", "method=POST", "suppressed=0"]) {
            assert!(line.contains(w), "{w} not in {line}");
        }
    }
}

/// s21: a review over HTTP/1 with neither `Content-Length` nor `Transfer-Encoding` (HTTP/1.0
/// streaming its body until the connection closes) had its body read as empty: 400 "truncated or
/// empty JSON". It gets 411 Length Required, whose message says what to send.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http1_review_without_a_length_gets_411() {
    use std::io::Write;
    let (running, ca) = start_server(Policy::default(), |_| {}).await;
    let addr = running.addr;
    for version in ["HTTP/1.0", "HTTP/1.1"] {
        let ca = ca.clone();
        let answer = tokio::task::spawn_blocking(move || {
            let mut tls = raw_tls(addr, &ca);
            let head = format!(
                "POST /validate {version}\r\nHost: localhost\r\nContent-Type: application/json\r\n\r\n"
            );
            tls.write_all(head.as_bytes()).unwrap();
            tls.write_all(br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#).unwrap();
            tls.flush().unwrap();
            read_until(&mut tls, |t| t.contains("\"status\":") && t.ends_with('}'))
        })
        .await
        .unwrap();
        assert!(answer.starts_with(&format!("{version} 411 ")), "{answer}");
        assert!(
            answer.contains(r#""error":"the request has no Content-Length: send the AdmissionReview with its Content-Length (or, over HTTP/1.1, chunked)","status":411"#),
            "{answer}"
        );
    }
    // With a Content-Length, HTTP/1.0 is served.
    let ca2 = ca.clone();
    let answer = tokio::task::spawn_blocking(move || {
        let mut tls = raw_tls(addr, &ca2);
        let body = br#"{"apiVersion":"admission.k8s.io/v1"}"#;
        let head = format!(
            "POST /validate HTTP/1.0\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        tls.write_all(head.as_bytes()).unwrap();
        tls.write_all(body).unwrap();
        tls.flush().unwrap();
        read_until(&mut tls, |t| t.contains("\"status\":") && t.ends_with('}'))
    })
    .await
    .unwrap();
    assert!(answer.starts_with("HTTP/1.0 400 ") && answer.contains("no kind"), "{answer}");
}

/// s21: `POST /healthz` was told "use POST /validate or POST /mutate". A 405 names the method
/// the path takes, and keeps the `Allow` header, over HTTP/2 and HTTP/1.1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_method_is_told_which_method_the_path_takes() {
    let (running, ca) = start_server(Policy::default(), |_| {}).await;
    let base = format!("https://localhost:{}", running.addr.port());
    for http1 in [false, true] {
        let client = https_client(&[&ca], http1);
        for (method, path, allow, message) in [
            (
                reqwest::Method::POST,
                "/healthz",
                "GET,HEAD",
                "method not allowed: /healthz takes GET, not POST",
            ),
            (reqwest::Method::PUT, "/metrics", "GET,HEAD", "method not allowed: /metrics takes GET, not PUT"),
            (reqwest::Method::GET, "/validate", "POST", "method not allowed: /validate takes POST, not GET"),
            (
                reqwest::Method::DELETE,
                "/mutate",
                "POST",
                "method not allowed: /mutate takes POST, not DELETE",
            ),
        ] {
            let answer = client.request(method, format!("{base}{path}")).send().await.unwrap();
            assert_eq!(answer.status(), 405, "{path}");
            assert_eq!(answer.headers()["allow"], allow, "{path}");
            let v: Value = answer.json().await.unwrap();
            assert_eq!(v["error"], message, "{v}");
            assert_eq!(v["status"], 405, "{v}");
        }
    }
}

/// s21 break-it pass: a review sent with two `Content-Type` fields (`application/json` and
/// `text/plain`) was read by its first. Which one a reader takes differs (Go's `Header.Get`, the
/// API server's, the first; others the last), so such a request is refused 415 unless every one
/// is JSON; two JSON fields are read as usual. Over HTTP/2 and HTTP/1.1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_with_several_content_types_is_read_only_when_every_one_is_json() {
    let (running, ca) = start_server(Policy::default(), |_| {}).await;
    let url = format!("https://localhost:{}/validate", running.addr.port());
    let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop"},
        "spec": {"containers": [{"name": "c", "image": "x"}]}});
    let body = serde_json::to_vec(&review("CREATE", &pod, None, "ct")).unwrap();
    for http1 in [false, true] {
        let client = https_client(&[&ca], http1);
        for (types, status) in [
            (&["application/json", "text/plain"][..], 415),
            (&["text/plain", "application/json"], 415),
            (&["application/json", "application/json; charset=latin1"], 415),
            (&["application/json", "application/json; charset=utf-8"], 200),
        ] {
            let mut request = client.post(&url).body(body.clone());
            for t in types {
                request = request.header("content-type", *t);
            }
            let answer = request.send().await.unwrap();
            assert_eq!(answer.status(), status, "http1 {http1}: {types:?}");
            let v: Value = answer.json().await.unwrap();
            if status == 415 {
                assert_eq!(
                    v["error"],
                    "Content-Type is sent more than once, and not every one is application/json: send one Content-Type: application/json (an admission.k8s.io/v1 AdmissionReview)",
                    "{v}"
                );
            } else {
                assert_eq!(v["response"]["uid"], "ct", "{v}");
            }
        }
    }
}
