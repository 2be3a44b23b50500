//! Flood benchmark: a small review is answered in time while expensive ones flood the server.
//!
//! Run: `cargo bench --bench flood`. The bench binary re-executes itself as the real probegate
//! server (the library's `server::start`, the router and limits of `probegate serve`) and opens
//! one HTTP/2 connection to it over HTTPS (ALPN `h2`, as the API server's client, which multiplexes
//! every webhook call on one connection). On it, 60 concurrent streams post issue 9's costliest
//! review without pause: a 37 KiB Pod of 14 containers whose liveness scripts each set `V` to
//! 1000 words and run `f $V` 160 times. Meanwhile, 10 times one second apart, a small ordinary
//! review is posted on the same connection: a Pod whose liveness probe runs `pg_isready` against
//! another host, which must be denied (403 in the response). Reported: each small review's
//! latency, against a target of under 1 s every time, and how the flood's reviews were answered
//! (200, 408 after the server's 4 s bound, or 503 at once past the queue of expensive reviews
//! waiting, `server::MAX_WAITING_EXPENSIVE`). Then the same again with that review padded to
//! 737 KB (a 700,000-character annotation): most of those bodies wait, unread, for room in the
//! large-body budget on the connection that carries the small reviews (issue 9's stall: with
//! 64 KiB stream windows they filled the connection's window and every request timed out).
//!
//! Without `--bench` on its command line (as under `cargo test --benches`) it runs a short smoke
//! round only (8 streams, 2 small reviews).

mod support;
#[path = "support/workloads.rs"]
mod workloads;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use support::Server;

const TARGET: Duration = Duration::from_secs(1);

fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    match std::env::var("PROBEGATE_BENCH_ROLE").as_deref() {
        Ok("probegate") => support::serve_role(support::start_probegate),
        _ => drive(),
    }
}

fn review(uid: &str, pod: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": uid, "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "name": pod["metadata"]["name"], "namespace": "shop", "operation": "CREATE",
            "userInfo": {"username": "u"}, "object": pod}}))
    .unwrap()
}

/// Issue 9's costliest review, about 37 KiB (benches/engine.rs `worst_case_exec_review`).
fn expensive() -> Vec<u8> {
    review(
        "flood",
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop"},
        "spec": {"containers": workloads::worst_case_containers()}}),
    )
}

/// A small Pod whose liveness probe checks a database on another host: denied.
fn small() -> Vec<u8> {
    review(
        "small",
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "api", "namespace": "shop"},
        "spec": {"containers": [{"name": "api", "image": "api:1", "ports": [{"containerPort": 8080}],
            "livenessProbe": {"exec": {"command": ["pg_isready", "-h", "orders-db.shop.svc"]}},
            "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}}}]}}),
    )
}

/// Issue 9's break-it review: the costliest review padded with a 700,000-character annotation,
/// about 737 KB, over the 64 KiB inline limit (the expensive lane, the large-body budget).
fn expensive_large() -> Vec<u8> {
    let mut v: Value = serde_json::from_slice(&expensive()).unwrap();
    v["request"]["object"]["metadata"]["annotations"] = json!({"example.com/notes": "x".repeat(700_000)});
    serde_json::to_vec(&v).unwrap()
}

fn drive() {
    let full = std::env::args().any(|a| a == "--bench");
    let (streams, runs) = if full { (60, 10) } else { (8, 2) };
    let server = Server::role("probegate");
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let flood_body = Arc::new(expensive());
    assert!((30_000..45_000).contains(&flood_body.len()), "{} bytes", flood_body.len());
    flood(&rt, &server, full, streams, runs, flood_body);
    // The same flood with 737 KB bodies: most of them wait for room in the large-body budget,
    // unread, on the connection that also carries the small reviews (issue 9's stall).
    let large_body = Arc::new(expensive_large());
    assert!((700_000..760_000).contains(&large_body.len()), "{} bytes", large_body.len());
    flood(&rt, &server, full, streams, runs, large_body);
}

/// `streams` streams post `flood_body` without pause on one HTTP/2 connection while a small review
/// is posted `runs` times on the same connection; prints the small reviews' latencies.
fn flood(
    rt: &tokio::runtime::Runtime,
    server: &Server,
    full: bool,
    streams: usize,
    runs: usize,
    flood_body: Arc<Vec<u8>>,
) {
    let small_body = Arc::new(small());
    println!(
        "flood benchmark: {streams} HTTP/2 streams posting a {:.1} KiB review without pause; a {:.1} KiB review with a coupled liveness probe, {runs} times, on the same connection",
        flood_body.len() as f64 / 1024.0,
        small_body.len() as f64 / 1024.0
    );
    let (latencies, answered, timed_out, reset) = rt.block_on(async {
        // One client: one HTTP/2 connection carries the flood and the small reviews.
        let client = support::client(&server.ca, false, Duration::from_secs(30));
        let url = server.url("/validate");
        let stop = Arc::new(AtomicBool::new(false));
        let (answered, timed_out) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let reset = Arc::new(AtomicUsize::new(0));
        let mut flood = Vec::new();
        for _ in 0..streams {
            let (client, url, body, stop) =
                (client.clone(), url.clone(), Arc::clone(&flood_body), Arc::clone(&stop));
            let (answered, timed_out, reset) =
                (Arc::clone(&answered), Arc::clone(&timed_out), Arc::clone(&reset));
            flood.push(tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    match support::try_post(&client, &url, &body).await {
                        Ok((200, _, _)) => answered.fetch_add(1, Ordering::Relaxed),
                        Ok((408 | 503, _, _)) => timed_out.fetch_add(1, Ordering::Relaxed),
                        Ok((status, v, _)) => panic!("flood review answered {status}: {v}"),
                        // A stream the server reset while the client still sent a refused body
                        // (s26: `BrokenPipe` in the 726 KiB flood): counted, not a panic.
                        Err(_) => reset.fetch_add(1, Ordering::Relaxed),
                    };
                }
            }));
        }
        // Let the flood fill the queues before the first small review.
        tokio::time::sleep(Duration::from_secs(2)).await;
        let mut latencies = Vec::new();
        for _ in 0..runs {
            let (status, v, took) = support::post(&client, &url, &small_body).await;
            assert_eq!(status, 200, "{v}");
            assert_eq!(v["response"]["allowed"], false, "{v}");
            assert_eq!(v["response"]["status"]["code"], 403, "{v}");
            latencies.push(took);
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        stop.store(true, Ordering::Relaxed);
        for f in flood {
            f.await.unwrap();
        }
        (
            latencies,
            answered.load(Ordering::Relaxed),
            timed_out.load(Ordering::Relaxed),
            reset.load(Ordering::Relaxed),
        )
    });
    let slowest = latencies.iter().max().copied().unwrap_or_default();
    let list: Vec<String> = latencies.iter().map(|d| format!("{:.0}", d.as_secs_f64() * 1e3)).collect();
    println!("  small review latencies (ms): {}", list.join(", "));
    println!(
        "  slowest {:.0} ms (target < {} ms every time){}",
        slowest.as_secs_f64() * 1e3,
        TARGET.as_millis(),
        match (full, slowest < TARGET) {
            (false, _) => "  (smoke run)",
            (true, true) => "  OK",
            (true, false) => "  OVER TARGET",
        }
    );
    println!(
        "  flood reviews: {answered} answered 200, {timed_out} answered 408 (the 4 s request bound) or 503 (too many waiting), {reset} ended by a reset stream or connection"
    );
}
