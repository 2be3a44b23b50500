//! HTTP/2 flow control over real HTTPS: the windows the server grants let a large review arrive
//! in a few round trips, and every stream of a connection can hold its whole window at once (so
//! that bodies left unread while they wait for room never stall the others: issue 9).

mod common;

use std::time::Duration;

use common::wire::{answer_of, h2_connection, latency_proxy, open_post, upload_within_the_window};
use common::*;
use probegate::policy::Policy;
use probegate::server;
use serde_json::json;

/// A Pod with `args` one-character arguments: about `4 * args` bytes of JSON.
fn pod_with_args(args: usize, label: &str) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "big", "namespace": "shop", "labels": {"rev": label}},
        "spec": {"containers": [{"name": "app", "image": "registry.example.com/app:1", "args": vec!["a"; args],
            "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}}}]}})
}

/// The window a new stream is granted at once (what the client may send before any
/// WINDOW_UPDATE): reserves more than any window and reads what was assigned.
async fn granted(send: &mut h2::SendStream<axum::body::Bytes>) -> usize {
    send.reserve_capacity(64 * 1024 * 1024);
    match futures::future::poll_fn(|cx| send.poll_capacity(cx)).await {
        Some(Ok(n)) => n,
        other => panic!("no capacity: {other:?}"),
    }
}

/// The server's SETTINGS and connection WINDOW_UPDATE, seen by a client: a stream may send
/// [`server::H2_STREAM_WINDOW_BYTES`] at once, and all [`server::H2_MAX_CONCURRENT_STREAMS`]
/// streams of one connection may each do so together (the connection window holds them all).
/// With 8 KiB stream windows a 3 MB review took hundreds of round trips (408 at 20 ms).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_stream_of_a_connection_is_granted_its_whole_window_at_once() {
    let (running, ca) = start_server(Policy::default(), |_| {}).await;
    let mut client = h2_connection(running.addr, &ca).await;
    // One round trip: the server's SETTINGS and its connection WINDOW_UPDATE have arrived.
    client = client.clone().ready().await.unwrap();
    let (health, _) =
        client.send_request(http::Request::get("https://localhost/healthz").body(()).unwrap(), true).unwrap();
    assert_eq!(health.await.unwrap().status(), 200);
    let window = server::H2_STREAM_WINDOW_BYTES as usize;
    let mut streams = Vec::new();
    for i in 0..server::H2_MAX_CONCURRENT_STREAMS {
        // Declared larger than the window and never sent: each waits for the whole window.
        let (response, mut send) = open_post(&mut client, server::MAX_BODY_BYTES).await;
        let got = granted(&mut send).await;
        assert_eq!(got, window, "stream {i} of one connection was granted {got} bytes");
        streams.push((response, send));
    }
}

/// A 3 MB UPDATE review (two 1.5 MB Pods, etcd's default request limit) over HTTP/2 through a
/// 20 ms round trip is read and answered, not cut off at the 4 s request bound: with 8 KiB
/// stream windows it needed about 370 round trips (7 s, answered 408; under `failurePolicy:
/// Ignore` the object was admitted unchecked).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_3_mb_review_over_http2_through_a_20_ms_round_trip_is_answered() {
    let (running, ca) = start_server(Policy::default(), |_| {}).await;
    let proxy = latency_proxy(running.addr, Duration::from_millis(10)).await;
    let mut client = h2_connection(proxy, &ca).await;
    let body = review("UPDATE", &pod_with_args(375_000, "2"), Some(&pod_with_args(375_000, "1")), "big");
    let body = serde_json::to_vec(&body).unwrap();
    assert!((2_900_000..3_100_000).contains(&body.len()), "{} bytes", body.len());
    let (response, mut send) = open_post(&mut client, body.len()).await;
    let (uploaded, (status, answer)) =
        tokio::join!(upload_within_the_window(&mut send, &body), answer_of(response));
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["response"]["allowed"], true, "{answer}");
    uploaded.unwrap();
}
