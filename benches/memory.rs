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

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const CLIENTS: usize = 16;
const ARGS: usize = 355_000;
const TARGET_MIB: f64 = 100.0;

fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    match std::env::var("PROBEGATE_BENCH_ROLE").as_deref() {
        Ok("probegate") => serve(),
        _ => drive(),
    }
}

fn serve() {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    rt.block_on(async move {
        let generated = probegate::server::tls::generate_localhost().unwrap();
        std::fs::write(std::env::var("PROBEGATE_BENCH_CA").unwrap(), &generated.ca_pem).unwrap();
        let running = probegate::server::start(probegate::server::ServeConfig {
            addr: "127.0.0.1:0".parse().unwrap(),
            policy: probegate::server::LoadedPolicy::new(
                probegate::policy::Policy::default(),
                "bench",
                "bench",
            ),
            policy_path: None,
            tls: generated.material,
            tls_files: None,
            admin_addr: None,
            namespaces: None,
            max_connections: probegate::server::conn::MAX_CONNECTIONS,
        })
        .await
        .unwrap();
        println!("PORT {}", running.addr.port());
        tokio::spawn(running.task);
        tokio::task::spawn_blocking(|| {
            let mut s = String::new();
            while std::io::stdin().read_line(&mut s).map(|n| n > 0).unwrap_or(false) {}
        })
        .await
        .unwrap();
    });
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

fn spawn() -> (Child, u16, Vec<u8>) {
    let ca_path = std::env::temp_dir().join(format!("probegate-bench-memory-{}.pem", std::process::id()));
    let mut child = Command::new(std::env::current_exe().unwrap())
        .env("PROBEGATE_BENCH_ROLE", "probegate")
        .env("PROBEGATE_BENCH_CA", &ca_path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let port = line.trim().strip_prefix("PORT ").expect("server prints its port").parse().unwrap();
    let ca = std::fs::read(&ca_path).unwrap();
    let _ = std::fs::remove_file(&ca_path);
    (child, port, ca)
}

fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Sends `rounds` reviews from each of `CLIENTS` concurrent clients; returns the slowest latency.
async fn load(port: u16, ca: &[u8], body: Arc<Vec<u8>>, rounds: usize) -> Duration {
    let mut tasks = Vec::new();
    for _ in 0..CLIENTS {
        let client = reqwest::Client::builder()
            .use_rustls_tls()
            .tls_built_in_root_certs(false)
            .add_root_certificate(reqwest::Certificate::from_pem(ca).unwrap())
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap();
        let url = format!("https://localhost:{port}/validate");
        let body = Arc::clone(&body);
        tasks.push(tokio::spawn(async move {
            let mut slowest = Duration::ZERO;
            for _ in 0..rounds {
                let started = Instant::now();
                let r = client
                    .post(&url)
                    .header("content-type", "application/json")
                    .body(body.as_ref().clone())
                    .send()
                    .await
                    .unwrap();
                let status = r.status();
                let text = r.text().await.unwrap();
                assert_eq!(status, 200, "{text}");
                let v: Value = serde_json::from_str(&text).unwrap();
                assert_eq!(v["response"]["allowed"], true, "{text}");
                slowest = slowest.max(started.elapsed());
            }
            slowest
        }));
    }
    let mut slowest = Duration::ZERO;
    for t in tasks {
        slowest = slowest.max(t.await.unwrap());
    }
    slowest
}

fn drive() {
    let full = std::env::args().any(|a| a == "--bench");
    let rounds = if full { 5 } else { 1 };
    let (mut child, port, ca) = spawn();
    let pid = child.id();
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let idle = status_kib(pid, "VmHWM:") as f64 / 1024.0;
    println!(
        "memory benchmark: {CLIENTS} concurrent HTTPS clients, UPDATE reviews of a Pod with {ARGS} args in object and oldObject, {rounds} per client per load"
    );
    println!("  idle: peak RSS {idle:.1} MiB");
    for (name, coupled) in [("relabel", false), ("ratchet", true)] {
        let body = Arc::new(update_review(coupled));
        let size = body.len() as f64 / 1e6;
        let started = Instant::now();
        let slowest = rt.block_on(load(port, &ca, body, rounds));
        let peak = status_kib(pid, "VmHWM:") as f64 / 1024.0;
        let now = status_kib(pid, "VmRSS:") as f64 / 1024.0;
        println!(
            "  {name:<8} {size:.2} MB bodies, {} requests in {:.1}s, slowest {:.2}s: peak RSS {peak:.1} MiB (target < {TARGET_MIB} MiB){}, RSS after {now:.1} MiB",
            CLIENTS * rounds,
            started.elapsed().as_secs_f64(),
            slowest.as_secs_f64(),
            if peak < TARGET_MIB { "  OK" } else { "  OVER TARGET" },
        );
    }
    drop(child.stdin.take());
    let _ = child.kill();
    let _ = child.wait();
}
