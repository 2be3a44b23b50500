//! s24: the server over real HTTPS: a small review on an HTTP/2 connection whose other streams
//! stalled mid-upload is still answered, the request data HTTP/2 clients can make the server hold
//! is bounded, an override's `name` has a length limit, and text log fields are quoted
//! (logfmt) instead of `\u{20}`-escaped.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::wire::{answer_of, h2_connection, open_post};
use common::*;
use probegate::policy::Policy;
use probegate::server;
use serde_json::Value;

/// The sample review whose Pod's liveness probe checks its database (`pg_isready`): denied.
fn coupled_review() -> Vec<u8> {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples/pod-liveness-checks-database-review.json"),
    )
    .unwrap();
    text.into_bytes()
}

/// Polls `done` every 10 ms for up to 10 s; panics with `what` and `figures()` past that.
async fn poll_until(what: &str, mut done: impl FnMut() -> bool, figures: impl Fn() -> String) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(std::time::Instant::now() < deadline, "{what}: {}", figures());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Sends `part` bytes of a body on `send` within the flow-control window the server grants, and
/// does not end the stream (a stalled upload).
async fn send_part(send: &mut h2::SendStream<axum::body::Bytes>, part: usize) {
    let mut left = part;
    while left > 0 {
        send.reserve_capacity(left.min(64 * 1024));
        let granted = match futures::future::poll_fn(|cx| send.poll_capacity(cx)).await {
            Some(Ok(n)) => n,
            other => panic!("no capacity with {left} bytes of the part unsent: {other:?}"),
        };
        let n = granted.min(left);
        if n > 0 {
            send.send_data(axum::body::Bytes::from(vec![b' '; n]), false).unwrap();
            left -= n;
        }
    }
}

/// The brief's head-of-line case: on ONE HTTP/2 connection, three streams declare a body of
/// nearly 4 MiB, send 1 MiB of it and stall (never finish); a small review with a coupled
/// liveness probe on a fourth stream of the same connection is answered (denied) while the three
/// are still unanswered, not after they met the 4 s request bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_review_is_denied_beside_three_stalled_4_mib_uploads_on_its_connection() {
    let (running, ca) = start_server(Policy::default(), |_| {}).await;
    let mut client = h2_connection(running.addr, &ca).await;
    let declared = server::MAX_BODY_BYTES - 4096;
    let stalled_answers = Arc::new(Mutex::new(Vec::new()));
    let mut sends = Vec::new();
    for _ in 0..3 {
        let (response, mut send) = open_post(&mut client, declared).await;
        send_part(&mut send, 1024 * 1024).await;
        let answers = Arc::clone(&stalled_answers);
        tokio::spawn(async move {
            if let Ok(response) = response.await {
                answers.lock().unwrap().push(response.status().as_u16());
            }
        });
        sends.push(send);
    }
    let state = Arc::clone(&running.state);
    // The three uploads were admitted, and their first MiB read: they hold the large budget.
    poll_until(
        "the three uploads hold the large-body budget",
        || state.large_body_budget_available() + 3 * declared <= server::LARGE_BODY_BUDGET_BYTES,
        || format!("{} bytes of the large budget free", state.large_body_budget_available()),
    )
    .await;
    let body = coupled_review();
    let (response, mut send) = open_post(&mut client, body.len()).await;
    send.send_data(axum::body::Bytes::from(body), true).unwrap();
    let (status, answer) = answer_of(response).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["response"]["allowed"], false, "{answer}");
    assert_eq!(answer["response"]["status"]["code"], 403, "{answer}");
    // Answered before any of the stalled uploads met its bound.
    assert!(stalled_answers.lock().unwrap().is_empty(), "{:?}", stalled_answers.lock().unwrap());
    drop(sends);
}

/// The status and body of an HTTP/2 answer, `None` when the stream was reset first.
async fn answer_or_reset(response: h2::client::ResponseFuture) -> Option<(u16, String)> {
    let response = response.await.ok()?;
    let status = response.status().as_u16();
    let mut body = response.into_body();
    let mut answer = Vec::new();
    while let Some(chunk) = body.data().await {
        let chunk = chunk.ok()?;
        let _ = body.flow_control().release_capacity(chunk.len());
        answer.extend_from_slice(&chunk);
    }
    Some((status, String::from_utf8_lossy(&answer).into_owned()))
}

/// The head-of-line case with the s24 windows (1 MiB a connection, four stream windows): the
/// large-body budget is taken (three uploads on another connection), and on ONE connection
/// streams of nearly 4 MiB each send a whole stream window and stall, waiting unread for room.
/// Four of them would hold the whole connection window, and a small review on a fifth stream of
/// that connection could not send its body: 408 at the 4 s bound instead of its denial. The
/// waiting bodies of one connection may hold half its window
/// (`WAITING_PER_CONNECTION_BYTES`): two wait, the others are refused 503 at once (their
/// streams reset), and the small review is denied.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_uploads_cannot_fill_their_connections_window_and_stall_a_small_review() {
    use probegate::server::metrics::Budget;
    let (running, ca) = start_server(Policy::default(), |_| {}).await;
    let state = Arc::clone(&running.state);
    let figures = || {
        format!(
            "large budget {} free, {} large bodies waiting",
            state.large_body_budget_available(),
            state.metrics.bodies_waiting(Budget::Large)
        )
    };
    let declared = server::MAX_BODY_BYTES - 4096;
    let mut filler = h2_connection(running.addr, &ca).await;
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(open_post(&mut filler, declared).await);
    }
    poll_until("the large budget is taken", || state.large_body_budget_available() < declared, figures).await;
    let window = server::H2_STREAM_WINDOW_BYTES as usize;
    let fill = server::H2_CONNECTION_WINDOW_BYTES as usize / window;
    let mut client = h2_connection(running.addr, &ca).await;
    let refused = Arc::new(Mutex::new(Vec::new()));
    let mut stalled = Vec::new();
    for _ in 0..fill {
        let (response, mut send) = open_post(&mut client, declared).await;
        // Queued whole: the client sends it as the windows allow.
        send.send_data(axum::body::Bytes::from(vec![b' '; window]), false).unwrap();
        let refused = Arc::clone(&refused);
        tokio::spawn(async move {
            if let Some(answer) = answer_or_reset(response).await {
                refused.lock().unwrap().push(answer);
            }
        });
        stalled.push(send);
    }
    let waits = server::WAITING_PER_CONNECTION_BYTES / window;
    poll_until(
        "the bodies past the connection's share are refused",
        || refused.lock().unwrap().len() == fill - waits,
        figures,
    )
    .await;
    assert_eq!(state.metrics.bodies_waiting(Budget::Large), waits as i64, "{}", figures());
    for (status, answer) in refused.lock().unwrap().iter() {
        assert_eq!(*status, 503, "{answer}");
        assert!(answer.contains("already wait to be read on this connection"), "{answer}");
    }
    let body = coupled_review();
    let (response, mut send) = open_post(&mut client, body.len()).await;
    send.send_data(axum::body::Bytes::from(body), true).unwrap();
    let (status, answer) = answer_of(response).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["response"]["allowed"], false, "{answer}");
    // The waiting ones are still waiting: answered within their bound, not after it.
    assert_eq!(state.metrics.bodies_waiting(Budget::Large), waits as i64, "{}", figures());
    drop((held, stalled));
}

/// s24 flood (64 HTTP/2 connections of 64 streams of 2.8 MB reviews, h2load): nearly every
/// stream was refused 503 because the waiting room was full, and then its body drained: the
/// clients went on uploading 2.8 MB for each refused stream, and what the server held of those
/// uploads between their arrival and their draining took it past deploy/'s 128 MiB. Now the
/// stream of an HTTP/2 request refused that way is reset after its answer (RST_STREAM(NO_ERROR),
/// the answer whole before it): its client cannot send it any further. Here the large budget is
/// taken, the waiting room filled, and one more upload is refused: 503, then no more of its body
/// is taken than the window it had.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http2_upload_refused_for_the_waiting_room_is_reset_not_drained() {
    let (running, ca) = start_server(Policy::default(), |_| {}).await;
    let state = Arc::clone(&running.state);
    let figures = || {
        format!(
            "large budget {} free, waiting room {} free",
            state.large_body_budget_available(),
            state.waiting_room_available()
        )
    };
    let declared = server::MAX_BODY_BYTES;
    let mut filler = h2_connection(running.addr, &ca).await;
    let mut held = Vec::new();
    for _ in 0..server::LARGE_BODY_BUDGET_BYTES / declared {
        held.push(open_post(&mut filler, declared).await);
    }
    poll_until("the large budget is taken", || state.large_body_budget_available() == 0, figures).await;
    let room = server::WAITING_BODY_BYTES / server::H2_STREAM_WINDOW_BYTES as usize;
    // As many on each connection as may wait on one (WAITING_PER_CONNECTION_BYTES).
    let per_connection = server::WAITING_PER_CONNECTION_BYTES / server::H2_STREAM_WINDOW_BYTES as usize;
    let mut waiting = Vec::new();
    let mut clients = Vec::new();
    for _ in 0..room.div_ceil(per_connection) {
        let mut client = h2_connection(running.addr, &ca).await;
        for _ in 0..per_connection.min(room - waiting.len()) {
            waiting.push(open_post(&mut client, declared).await);
        }
        clients.push(client);
    }
    poll_until("the waiting room is full", || state.waiting_room_available() == 0, figures).await;
    let mut client = h2_connection(running.addr, &ca).await;
    let (response, mut send) = open_post(&mut client, declared).await;
    let answer = tokio::spawn(answer_of(response));
    // The body is refused whole: the client may send its first window, and nothing more.
    let uploaded = common::wire::upload_within_the_window(&mut send, &vec![b' '; declared]).await;
    let (status, answer) = answer.await.unwrap();
    assert_eq!(status, 503, "{answer}");
    assert!(answer["error"].as_str().unwrap().contains("already wait to be read"), "{answer}");
    // Reset (or closed) after its answer, before the client could send it all: drained, the
    // whole upload was taken (and the client kept sending it).
    let error = uploaded.expect_err("the refused upload was taken to its end");
    assert!(error.contains("bytes unsent"), "{error}");
    drop((held, waiting, clients));
}

/// An override `name` of 254 characters is refused with the file, line and field (it appears in
/// every decision's log line and in `GET /policy`; until s24 it had no limit); one of 253, a
/// Kubernetes name's limit, is accepted.
#[test]
fn an_override_name_over_253_characters_is_refused_with_its_place() {
    let policy = |name: &str| {
        format!(
            "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\noverrides:\n  - name: a\n    namespaces: [a]\n  - name: {name}\n    namespaces: [shop]\n"
        )
    };
    assert_eq!(probegate::policy::MAX_OVERRIDE_NAME_CHARS, 253);
    let errors = probegate::policy::parse_all(&policy(&"n".repeat(254)), "p.yaml").unwrap_err();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let e = errors[0].to_string();
    assert!(e.starts_with("p.yaml:6:"), "{e}");
    assert!(e.contains("field `overrides[1].name`: is 254 characters long"), "{e}");
    assert!(e.contains("over the 253 a name may have"), "{e}");
    // The message shows the name's start, not all of it.
    assert!(!e.contains(&"n".repeat(60)), "{e}");
    let accepted = probegate::policy::parse_all(&policy(&"n".repeat(253)), "p.yaml").unwrap();
    assert_eq!(accepted.overrides[1].name, "n".repeat(253));
}

/// The lines of `log` that contain `message`.
fn lines_with<'a>(log: &'a str, message: &str) -> Vec<&'a str> {
    log.lines().filter(|l| l.contains(message)).collect()
}

/// Text log fields holding a space or `=` were written with `\u{20}` and `\u{3d}` escapes
/// (`source=<embedded\u{20}default>`): unforgeable but hard to read. Now such a value is quoted,
/// logfmt-style, with `"` and `\` escaped with a backslash and control characters as `\u{..}`:
/// `source="<embedded default>"`. A request's namespace, name and uid crafted to end the quotes,
/// add a field or start a line do none of it: each stays one quoted value on the decision's line.
#[test]
fn log_fields_are_quoted_readably_and_cannot_be_forged() {
    let args: Vec<String> = ["--addr", "127.0.0.1:0", "--no-namespace-watch"].map(String::from).to_vec();
    let served = Served::start(&args, &[], Duration::from_secs(60));
    let ca = served.ca_pem();
    let forged_namespace = "shop\" denied=false x=\"y";
    let forged_name = "api\nWARN forged line status=200 \\u{a}";
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let answer: Value = rt.block_on(async {
        let mut review: Value = serde_json::from_slice(&coupled_review()).unwrap();
        review["request"]["namespace"] = forged_namespace.into();
        review["request"]["name"] = forged_name.into();
        review["request"]["uid"] = "uid with spaces".into();
        review["request"]["object"]["metadata"]["namespace"] = forged_namespace.into();
        review["request"]["object"]["metadata"]["name"] = forged_name.into();
        let client = https_client(&[&ca], false);
        let url = format!("https://localhost:{}/validate", served.addr.port());
        let r = client.post(url).json(&review).send().await.unwrap();
        assert_eq!(r.status(), 200);
        r.json().await.unwrap()
    });
    assert_eq!(answer["response"]["allowed"], false, "{answer}");
    wait_until("the decision logged", Duration::from_secs(10), || {
        served.log().contains("admission decision")
    });
    let log = served.log();
    let policy_line = lines_with(&log, "policy in force");
    assert_eq!(policy_line.len(), 1, "{log}");
    assert!(policy_line[0].contains(r#"source="<embedded default>""#), "{}", policy_line[0]);
    let decision = lines_with(&log, "admission decision");
    assert_eq!(decision.len(), 1, "{log}");
    let line = decision[0];
    assert!(line.contains(r#" namespace="shop\" denied=false x=\"y" "#), "{line}");
    assert!(line.contains(r#" name="api\u{a}WARN forged line status=200 \\u{a}" "#), "{line}");
    assert!(line.contains(r#" uid="uid with spaces" "#), "{line}");
    // Read as logfmt, the line has each field once, the forged ones only inside their values.
    let fields = logfmt(line.split_once("admission decision ").unwrap().1);
    let keys: Vec<&str> = fields.iter().map(|(k, _)| k.as_str()).collect();
    let unique: std::collections::BTreeSet<&str> = keys.iter().copied().collect();
    assert_eq!(keys.len(), unique.len(), "{keys:?}");
    assert!(!unique.contains("x"), "{keys:?}");
    let field = |k: &str| fields.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str()).unwrap();
    assert_eq!(field("denied"), "true", "{line}");
    assert_eq!(field("namespace"), forged_namespace, "{line}");
    assert_eq!(field("name"), r"api\u{a}WARN forged line status=200 \u{a}", "{line}");
    for l in log.lines() {
        assert!(!l.trim_start().starts_with("WARN forged"), "{log}");
    }
    // A plain value is written as it is.
    assert!(line.contains(" kind=Pod "), "{line}");
}

/// The `key=value` fields of a logfmt text, a quoted value unquoted (`\"` and `\\` read as `"`
/// and `\`; other escapes kept as written).
fn logfmt(text: &str) -> Vec<(String, String)> {
    let mut fields = Vec::new();
    let mut chars = text.trim().chars().peekable();
    while chars.peek().is_some() {
        let key: String = chars.by_ref().take_while(|c| *c != '=').collect();
        let mut value = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            while let Some(c) = chars.next() {
                match c {
                    '"' => break,
                    '\\' => match chars.next() {
                        Some(e @ ('"' | '\\')) => value.push(e),
                        Some(e) => {
                            value.push('\\');
                            value.push(e);
                        }
                        None => break,
                    },
                    c => value.push(c),
                }
            }
            chars.next_if_eq(&' ');
        } else {
            value = chars.by_ref().take_while(|c| *c != ' ').collect();
        }
        fields.push((key.trim().to_string(), value));
    }
    fields
}

/// With `--log-format json` (the shipped Deployment's) the formatter quotes and escapes each value
/// itself: the values carry no quotes of ours (s24 had `"source":"\"<embedded default>\""`), and
/// a crafted namespace is one JSON string, read back as sent.
#[test]
fn json_log_fields_are_the_values_themselves() {
    let args: Vec<String> =
        ["--addr", "127.0.0.1:0", "--no-namespace-watch", "--log-format", "json"].map(String::from).to_vec();
    let served = Served::start(&args, &[], Duration::from_secs(60));
    let ca = served.ca_pem();
    let forged_namespace = "shop\" denied=false x=\"y";
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let mut review: Value = serde_json::from_slice(&coupled_review()).unwrap();
        review["request"]["namespace"] = forged_namespace.into();
        review["request"]["object"]["metadata"]["namespace"] = forged_namespace.into();
        let client = https_client(&[&ca], false);
        let url = format!("https://localhost:{}/validate", served.addr.port());
        let r = client.post(url).json(&review).send().await.unwrap();
        assert_eq!(r.status(), 200);
    });
    wait_until("the decision logged", Duration::from_secs(10), || {
        served.log().contains("admission decision")
    });
    let log = served.log();
    let object = |message: &str| -> Value {
        let line = lines_with(&log, message);
        assert_eq!(line.len(), 1, "{log}");
        serde_json::from_str(line[0]).unwrap_or_else(|e| panic!("{e}: {}", line[0]))
    };
    assert_eq!(object("policy in force")["source"], "<embedded default>", "{log}");
    let decision = object("admission decision");
    assert_eq!(decision["namespace"], forged_namespace, "{decision}");
    assert_eq!(decision["kind"], "Pod", "{decision}");
}
