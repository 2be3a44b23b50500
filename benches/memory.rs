//! Memory benchmark: probegate's peak RSS under the largest legal reviews, over HTTPS.
//!
//! Run: `cargo bench --bench memory`. The bench binary re-executes itself as the real probegate
//! server (the library's `server::start`, the same router and limits as `probegate serve`) and
//! drives it with 16 concurrent clients, each on its own HTTPS connection (HTTP/2 by ALPN, as the
//! API server's client), each sending UPDATE AdmissionReviews of about 2.8 MB to `/validate`: a Pod
//! with 355,000 one-character `args`, in `object` and again in `oldObject` (each copy about 1.4 MB,
//! within etcd's default 1.5 MiB request limit). Two loads, one after the other:
//! - *relabel*: an UPDATE that changes a label; the Pod has no finding;
//! - *ratchet*: the Pod's liveness probe runs `pg_isready -h db.prod.svc` in both copies, so the
//!   old object must be read too (the finding was there before: admitted with a warning).
//!
//! Then a third load, *flood* (the s22 break-it pass's, s23): 64 HTTPS connections (HTTP/2), each
//! keeping 64 streams busy with a mix of issue 9's costliest review (37 KiB of liveness scripts),
//! the same padded to 737 KB, a malformed body of 99,999 `[`, and a small review with a coupled
//! liveness probe; answers of any status count (200, 400, 408, 503). Meanwhile a small review
//! with a coupled liveness probe is posted every 0.5 s on a connection of its own: each must be
//! denied (its latency is reported).
//!
//! Reported: the server's peak RSS (`VmHWM` from `/proc/PID/status`) after each load, against a
//! target of 100 MiB (the container limit in `deploy/` is 128 MiB), and the latency of the slowest
//! request (every one must be answered 200 within the server's 4 s request bound).
//!
//! Without `--bench` on its command line (as under `cargo test --benches`) it runs a short smoke
//! round only.

mod support;
#[path = "support/workloads.rs"]
mod workloads;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Load, Server};

const CLIENTS: usize = 16;
const ARGS: usize = 355_000;
const TARGET_MIB: f64 = 100.0;

fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    match std::env::var("PROBEGATE_BENCH_ROLE").as_deref() {
        Ok("probegate") => support::serve_role(support::start_probegate),
        _ => drive(),
    }
}

/// A Pod with `ARGS` one-character args; `coupled` adds a liveness probe reaching a database.
fn pod(coupled: bool, label: &str) -> Value {
    let mut container = json!({"name": "app", "image": "registry.example.com/app:1", "args": vec!["a"; ARGS],
        "ports": [{"containerPort": 8080}],
        "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}, "timeoutSeconds": 2}});
    if coupled {
        container["livenessProbe"] =
            json!({"exec": {"command": ["pg_isready", "-h", "db.prod.svc"]}, "timeoutSeconds": 3});
    }
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "big", "namespace": "shop", "uid": "9d1c", "labels": {"rev": label}},
        "spec": {"containers": [container]}})
}

fn update_review(coupled: bool) -> Vec<u8> {
    let body = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": "mem-1", "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "name": "big", "namespace": "shop", "operation": "UPDATE",
        "userInfo": {"username": "alice", "groups": ["system:authenticated"]},
        "object": pod(coupled, "2"), "oldObject": pod(coupled, "1"), "dryRun": false}});
    serde_json::to_vec(&body).unwrap()
}

fn drive() {
    let full = std::env::args().any(|a| a == "--bench");
    let rounds = if full { 5 } else { 1 };
    let server = Server::role("probegate");
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let idle = server.status_kib("VmHWM:") as f64 / 1024.0;
    println!(
        "memory benchmark: {CLIENTS} concurrent HTTPS clients, UPDATE reviews of a Pod with {ARGS} args in object and oldObject, {rounds} per client per load"
    );
    println!("  idle: peak RSS {idle:.1} MiB");
    for (name, coupled) in [("relabel", false), ("ratchet", true)] {
        let body = Arc::new(update_review(coupled));
        let size = body.len() as f64 / 1e6;
        let started = Instant::now();
        let load = Load { clients: CLIENTS, per_client: rounds, http1: false };
        let slowest = rt.block_on(support::run_load(&server, body, &load));
        let peak = server.status_kib("VmHWM:") as f64 / 1024.0;
        let now = server.status_kib("VmRSS:") as f64 / 1024.0;
        println!(
            "  {name:<8} {size:.2} MB bodies, {} requests in {:.1}s, slowest {:.2}s: peak RSS {peak:.1} MiB (target < {TARGET_MIB} MiB){}, RSS after {now:.1} MiB",
            CLIENTS * rounds,
            started.elapsed().as_secs_f64(),
            slowest.as_secs_f64(),
            if peak < TARGET_MIB { "  OK" } else { "  OVER TARGET" },
        );
    }
    flood(&rt, &server, full);
}

/// A CREATE review of `pod` in namespace `shop`.
fn create_review(uid: &str, pod: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": uid, "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "name": "p", "namespace": "shop", "operation": "CREATE",
            "userInfo": {"username": "u"}, "object": pod}}))
    .unwrap()
}

/// A small Pod whose liveness probe checks a database on another host: denied.
fn coupled() -> Vec<u8> {
    create_review(
        "small",
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "api", "namespace": "shop"},
        "spec": {"containers": [{"name": "api", "image": "api:1",
            "livenessProbe": {"exec": {"command": ["pg_isready", "-h", "orders-db.prod.svc"]}}}]}}),
    )
}

/// The flood's bodies: issue 9's costliest review, the same padded to 737 KB, 99,999 `[`, and
/// the small coupled review.
fn flood_bodies() -> Vec<Arc<Vec<u8>>> {
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop"},
        "spec": {"containers": workloads::worst_case_containers()}});
    let mut padded = pod.clone();
    padded["metadata"]["annotations"] = json!({"example.com/notes": "x".repeat(700_000)});
    let mut bad =
        br#"{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"1","object":"#
            .to_vec();
    bad.extend(vec![b'['; 99_999]);
    [create_review("flood", pod), create_review("padded", padded), bad, coupled()]
        .into_iter()
        .map(Arc::new)
        .collect()
}

/// The s22 break-it pass's flood (see the module's documentation).
fn flood(rt: &tokio::runtime::Runtime, server: &Server, full: bool) {
    let (connections, streams, seconds) = if full { (64, 64, 20) } else { (4, 8, 2) };
    println!(
        "  flood: {connections} HTTP/2 connections x {streams} streams for {seconds}s (issue 9's review, padded to 737 KB, 99,999 '[', a small coupled review); a coupled review every 0.5 s on its own connection"
    );
    let bodies = Arc::new(flood_bodies());
    let statuses = Arc::new(Mutex::new(BTreeMap::<String, usize>::new()));
    let (probes, refused) = rt.block_on(async {
        let stop = Arc::new(AtomicBool::new(false));
        let url = server.url("/validate");
        let mut tasks = Vec::new();
        for c in 0..connections {
            let client = support::client(&server.ca, false, Duration::from_secs(30));
            for s in 0..streams {
                let (client, url, bodies, stop, statuses) = (
                    client.clone(),
                    url.clone(),
                    Arc::clone(&bodies),
                    Arc::clone(&stop),
                    Arc::clone(&statuses),
                );
                tasks.push(tokio::spawn(async move {
                    let mut i = c + s;
                    while !stop.load(Ordering::Relaxed) {
                        let body = bodies[i % bodies.len()].as_ref().clone();
                        i += 1;
                        let sent =
                            client.post(&url).header("content-type", "application/json").body(body).send();
                        let status = match sent.await {
                            Ok(r) => {
                                let status = r.status().as_u16().to_string();
                                let _ = r.bytes().await;
                                status
                            }
                            Err(_) => "error".to_string(),
                        };
                        *statuses.lock().unwrap().entry(status).or_default() += 1;
                    }
                }));
            }
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
        let probe = support::client(&server.ca, false, Duration::from_secs(30));
        let small = Arc::new(coupled());
        let (mut probes, mut refused) = (Vec::new(), 0);
        let end = Instant::now() + Duration::from_secs(seconds);
        while Instant::now() < end {
            let (status, v, took) = support::post(&probe, &url, &small).await;
            if status == 200 {
                assert_eq!(v["response"]["allowed"], false, "{v}");
                probes.push(took);
            } else {
                refused += 1;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        stop.store(true, Ordering::Relaxed);
        for t in tasks {
            t.await.unwrap();
        }
        (probes, refused)
    });
    let peak = server.status_kib("VmHWM:") as f64 / 1024.0;
    let slowest = probes.iter().max().copied().unwrap_or_default();
    println!(
        "  flood    peak RSS {peak:.1} MiB (target < {TARGET_MIB} MiB){}; coupled review: {} denied, slowest {:.2}s, {refused} not answered 200; flood answers: {:?}",
        if peak < TARGET_MIB { "  OK" } else { "  OVER TARGET" },
        probes.len(),
        slowest.as_secs_f64(),
        statuses.lock().unwrap()
    );
}
