//! Server benchmark: CPU time per request of probegate's HTTPS server against a floor webhook.
//!
//! Run: `cargo bench --bench server`. The bench binary re-executes itself twice: once as the real
//! probegate server (the library's `server::start`, the same router as `probegate serve`), once as
//! the *floor*, a minimal webhook on the same crates (axum, axum-server, rustls with ring) that only
//! parses the body as JSON and answers `allowed: true`. Both get the captured Deployment
//! AdmissionReview at `/validate` from 16 keep-alive HTTPS clients; their CPU time (user + sys from
//! `/proc/PID/stat`) is read before and after, in alternating rounds, so the two are measured side by
//! side in one run on the same machine. Reported: CPU µs per request for each, the ratio (target at
//! most 1.25), and probegate's peak RSS (`VmHWM`, target at most 64 MiB).
//!
//! Without `--bench` on its command line (as under `cargo test --benches`) it runs a short smoke
//! round only.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

const CLIENTS: usize = 16;

fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    match std::env::var("PROBEGATE_BENCH_ROLE").as_deref() {
        Ok("probegate") => serve(true),
        Ok("floor") => serve(false),
        _ => drive(),
    }
}

// === the two servers ===

fn serve(probegate: bool) {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    rt.block_on(async move {
        let generated = probegate::server::tls::generate_localhost().unwrap();
        let ca_path = std::env::var("PROBEGATE_BENCH_CA").unwrap();
        std::fs::write(&ca_path, &generated.ca_pem).unwrap();
        let port = if probegate {
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
            let port = running.addr.port();
            tokio::spawn(running.task);
            port
        } else {
            floor::start(&generated.material).await
        };
        println!("PORT {port}");
        // Serve until the driver closes stdin.
        tokio::task::spawn_blocking(|| {
            let mut s = String::new();
            while std::io::stdin().read_line(&mut s).map(|n| n > 0).unwrap_or(false) {}
        })
        .await
        .unwrap();
    });
}

/// The floor: a webhook that parses the body as JSON and allows everything.
mod floor {
    use axum::body::Bytes;
    use axum::http::header;
    use axum::response::IntoResponse;
    use serde_json::{Value, json};

    async fn allow(body: Bytes) -> impl IntoResponse {
        let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let uid = v["request"]["uid"].clone();
        let out = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": {"uid": uid, "allowed": true}});
        ([(header::CONTENT_TYPE, "application/json")], serde_json::to_vec(&out).unwrap())
    }

    pub async fn start(material: &probegate::server::tls::TlsMaterial) -> u16 {
        let config = probegate::server::tls::rustls_config(material).unwrap();
        let app = axum::Router::new().route("/validate", axum::routing::post(allow));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = axum_server::from_tcp_rustls(listener, config).unwrap();
        tokio::spawn(async move { server.serve(app.into_make_service()).await });
        port
    }
}

// === the driver ===

struct Server {
    name: &'static str,
    child: Child,
    port: u16,
    ca: Vec<u8>,
    cpu_ticks: u64,
    requests: u64,
}

fn spawn(role: &'static str) -> Server {
    let ca_path = std::env::temp_dir().join(format!("probegate-bench-{role}-{}.pem", std::process::id()));
    let mut child = Command::new(std::env::current_exe().unwrap())
        .env("PROBEGATE_BENCH_ROLE", role)
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
    Server { name: role, child, port, ca, cpu_ticks: 0, requests: 0 }
}

/// user + sys CPU time of a process, in clock ticks (`/proc/PID/stat` fields 14 and 15).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after_comm = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after_comm.split_whitespace().collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

fn clock_ticks_per_second() -> u64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok()?.trim().parse().ok())
        .unwrap_or(100)
}

fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

async fn load(server: &Server, body: Arc<Vec<u8>>, requests: usize) {
    let per_client = requests / CLIENTS;
    let mut tasks = Vec::new();
    for _ in 0..CLIENTS {
        let client = reqwest::Client::builder()
            .use_rustls_tls()
            .tls_built_in_root_certs(false)
            .add_root_certificate(reqwest::Certificate::from_pem(&server.ca).unwrap())
            .http1_only()
            .pool_max_idle_per_host(1)
            .build()
            .unwrap();
        let url = format!("https://localhost:{}/validate", server.port);
        let body = Arc::clone(&body);
        tasks.push(tokio::spawn(async move {
            for _ in 0..per_client {
                let r = client
                    .post(&url)
                    .header("content-type", "application/json")
                    .body(body.as_ref().clone())
                    .send()
                    .await
                    .unwrap();
                assert_eq!(r.status(), 200);
                let v: serde_json::Value = r.json().await.unwrap();
                assert_eq!(v["response"]["allowed"], true);
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
}

fn drive() {
    let full = std::env::args().any(|a| a == "--bench");
    let (rounds, per_round) = if full { (3, 12_000) } else { (1, 320) };
    let body = Arc::new(
        std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/admission/deployment-create.validating.json"),
        )
        .unwrap(),
    );
    let mut servers = [spawn("floor"), spawn("probegate")];
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let started = Instant::now();
    rt.block_on(async {
        for s in &servers {
            load(s, Arc::clone(&body), CLIENTS * 20).await; // warm-up: connections, allocator
        }
        for _ in 0..rounds {
            for s in servers.iter_mut() {
                let before = cpu_ticks(s.child.id());
                load(s, Arc::clone(&body), per_round).await;
                s.cpu_ticks += cpu_ticks(s.child.id()) - before;
                s.requests += (per_round / CLIENTS * CLIENTS) as u64;
            }
        }
    });
    let hz = clock_ticks_per_second() as f64;
    let per_request_us: Vec<f64> =
        servers.iter().map(|s| s.cpu_ticks as f64 / hz * 1e6 / s.requests.max(1) as f64).collect();
    let rss_mib = peak_rss_kib(servers[1].child.id()) as f64 / 1024.0;
    println!(
        "server benchmark: {} rounds x {per_round} requests per server, {CLIENTS} keep-alive HTTPS clients, captured Deployment AdmissionReview at /validate ({:.1}s)",
        rounds,
        started.elapsed().as_secs_f64()
    );
    for (s, us) in servers.iter().zip(&per_request_us) {
        println!(
            "  {:<10} {:>8.1} µs CPU per request ({} requests, {} ticks)",
            s.name, us, s.requests, s.cpu_ticks
        );
    }
    let ratio = per_request_us[1] / per_request_us[0];
    println!(
        "  ratio probegate/floor: {ratio:.2}x (target <= 1.25x){}",
        if full {
            if ratio <= 1.25 { "  OK" } else { "  OVER TARGET" }
        } else {
            "  (smoke run: not meaningful)"
        }
    );
    println!(
        "  probegate peak RSS: {rss_mib:.1} MiB (target <= 64 MiB){}",
        if rss_mib <= 64.0 { "  OK" } else { "  OVER TARGET" }
    );
    for s in servers.iter_mut() {
        drop(s.child.stdin.take());
        let _ = s.child.kill();
        let _ = s.child.wait();
    }
}
