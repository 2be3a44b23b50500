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
//! Reported: the server's peak RSS (`VmHWM` from `/proc/PID/status`) after each load, against a
//! target of 100 MiB (the container limit in `deploy/` is 128 MiB), and the latency of the slowest
//! request (every one must be answered 200 within the server's 4 s request bound).
//!
//! Without `--bench` on its command line (as under `cargo test --benches`) it runs a short smoke
//! round only.

mod support;

use std::sync::Arc;
use std::time::Instant;

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
}
