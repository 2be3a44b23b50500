//! What the HTTPS benchmarks share (`mod support;` in benches/server.rs, memory.rs, flood.rs):
//! servers as child processes, their CPU time and memory from `/proc`, and a load of concurrent
//! HTTPS clients posting one AdmissionReview.
//!
//! A server child is either the real `probegate serve` binary ([`Server::probegate`]) or the
//! bench binary itself re-executed with `PROBEGATE_BENCH_ROLE` set ([`Server::role`], served by
//! [`serve_role`]); either way it binds port 0 on loopback and the bench reads the port it chose.

#![allow(dead_code)] // Each bench uses its own part.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

/// A server under load, killed when dropped.
pub struct Server {
    pub name: &'static str,
    pub child: Child,
    pub port: u16,
    /// The CA certificate (PEM) that signed the server's certificate.
    pub ca: Vec<u8>,
}

impl Server {
    /// The bench binary re-executed as `role`: it must call [`serve_role`] when
    /// `PROBEGATE_BENCH_ROLE` is set.
    pub fn role(role: &'static str) -> Server {
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
        Server { name: role, child, port, ca }
    }

    /// The real `probegate serve` (release binary, its logging at `info` as shipped, the log read
    /// and discarded by a thread of the bench), with the embedded default policy and a generated
    /// certificate.
    pub fn probegate() -> Server {
        let ca_path = std::env::temp_dir().join(format!("probegate-bench-serve-{}.pem", std::process::id()));
        let mut child = Command::new(env!("CARGO_BIN_EXE_probegate"))
            .args(["serve", "--addr", "127.0.0.1:0", "--write-ca"])
            .arg(&ca_path)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if line.contains("probegate serving") {
                    let addr = line.split_whitespace().find_map(|w| w.strip_prefix("addr="));
                    let port = addr.and_then(|a| a.parse::<std::net::SocketAddr>().ok()).map(|a| a.port());
                    let _ = tx.send(port);
                }
            }
        });
        let port = rx
            .recv_timeout(Duration::from_secs(30))
            .ok()
            .flatten()
            .expect("probegate serve reports its address");
        let ca = std::fs::read(&ca_path).unwrap();
        let _ = std::fs::remove_file(&ca_path);
        Server { name: "probegate", child, port, ca }
    }

    /// `https://localhost:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("https://localhost:{}{path}", self.port)
    }

    /// User + system CPU time of the server so far, in seconds.
    pub fn cpu_seconds(&self) -> f64 {
        cpu_ticks(self.child.id()) as f64 / clock_ticks_per_second() as f64
    }

    /// User and system CPU time of the server so far, in seconds, apart.
    pub fn cpu_user_sys_seconds(&self) -> (f64, f64) {
        let (user, sys) = cpu_user_sys_ticks(self.child.id());
        let hz = clock_ticks_per_second() as f64;
        (user as f64 / hz, sys as f64 / hz)
    }

    /// Context switches of every thread of the server so far (voluntary and not).
    pub fn context_switches(&self) -> u64 {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{}/task", self.child.id())) else { return 0 };
        tasks
            .flatten()
            .filter_map(|t| std::fs::read_to_string(t.path().join("status")).ok())
            .flat_map(|status| {
                status
                    .lines()
                    .filter(|l| {
                        l.starts_with("voluntary_ctxt_switches:")
                            || l.starts_with("nonvoluntary_ctxt_switches:")
                    })
                    .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                    .collect::<Vec<_>>()
            })
            .sum()
    }

    /// A field of `/proc/PID/status` in KiB (`VmHWM:` peak RSS, `VmRSS:`).
    pub fn status_kib(&self, field: &str) -> u64 {
        status_kib(self.child.id(), field)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Serves `start`'s server in a bench child: prints `PORT N` and serves until the bench closes
/// stdin. `start` gets a generated localhost certificate and writes nothing: its CA is written to
/// `PROBEGATE_BENCH_CA` here.
pub fn serve_role<F, Fut>(start: F)
where
    F: FnOnce(probegate::server::tls::TlsMaterial) -> Fut,
    Fut: std::future::Future<Output = u16>,
{
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    rt.block_on(async move {
        let generated = probegate::server::tls::generate_localhost().unwrap();
        std::fs::write(std::env::var("PROBEGATE_BENCH_CA").unwrap(), &generated.ca_pem).unwrap();
        let port = start(generated.material).await;
        println!("PORT {port}");
        tokio::task::spawn_blocking(|| {
            let mut s = String::new();
            while std::io::stdin().read_line(&mut s).map(|n| n > 0).unwrap_or(false) {}
        })
        .await
        .unwrap();
    });
}

/// The library's server (`server::start`, the router and limits of `probegate serve`) with the
/// default policy, started on loopback; returns its port.
pub async fn start_probegate(material: probegate::server::tls::TlsMaterial) -> u16 {
    let running = probegate::server::start(probegate::server::ServeConfig {
        addr: "127.0.0.1:0".parse().unwrap(),
        policy: probegate::server::LoadedPolicy::new(probegate::policy::Policy::default(), "bench", "bench"),
        policy_path: None,
        tls: material,
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
}

/// user + sys CPU time of a process, in clock ticks (`/proc/PID/stat` fields 14 and 15).
pub fn cpu_ticks(pid: u32) -> u64 {
    let (user, sys) = cpu_user_sys_ticks(pid);
    user + sys
}

/// user and sys CPU time of a process apart, in clock ticks (`/proc/PID/stat` fields 14 and 15).
pub fn cpu_user_sys_ticks(pid: u32) -> (u64, u64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after_comm = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after_comm.split_whitespace().collect();
    (fields[11].parse::<u64>().unwrap(), fields[12].parse::<u64>().unwrap())
}

/// `getconf CLK_TCK` (100 when it cannot be read).
pub fn clock_ticks_per_second() -> u64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok()?.trim().parse().ok())
        .unwrap_or(100)
}

/// A field of `/proc/PID/status` in KiB (0 when absent).
pub fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// An HTTPS client trusting only `ca`: HTTP/1.1 keep-alive on one connection when `http1`, else
/// HTTP/2 by ALPN (as the API server's client), multiplexing its requests on one connection.
pub fn client(ca: &[u8], http1: bool, timeout: Duration) -> reqwest::Client {
    let builder = reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(ca).unwrap())
        .pool_max_idle_per_host(1)
        .timeout(timeout);
    let builder = if http1 { builder.http1_only() } else { builder };
    builder.build().unwrap()
}

/// Posts `body` as JSON; the answer's status, its body as JSON (`Null` if not JSON), and how long
/// it took. Panics on a transport error ([`try_post`] returns it).
pub async fn post(client: &reqwest::Client, url: &str, body: &Arc<Vec<u8>>) -> (u16, Value, Duration) {
    try_post(client, url, body).await.unwrap()
}

/// [`post`], with a transport error (a connection or stream the server closed or reset, say a
/// refused large body whose rest it does not read) returned rather than a panic.
pub async fn try_post(
    client: &reqwest::Client,
    url: &str,
    body: &Arc<Vec<u8>>,
) -> Result<(u16, Value, Duration), reqwest::Error> {
    let started = Instant::now();
    let r = client
        .post(url)
        .header("content-type", "application/json")
        .body(body.as_ref().clone())
        .send()
        .await?;
    let status = r.status().as_u16();
    let text = r.text().await?;
    Ok((status, serde_json::from_str(&text).unwrap_or(Value::Null), started.elapsed()))
}

/// A load: `clients` concurrent clients (each its own HTTPS connection) each posting `body` to
/// `/validate` `per_client` times in a row.
pub struct Load {
    pub clients: usize,
    pub per_client: usize,
    /// HTTP/1.1 keep-alive rather than HTTP/2.
    pub http1: bool,
}

/// Runs `load` against `server`, asserting that every answer is 200 with `allowed: true`;
/// returns the slowest request's latency.
pub async fn run_load(server: &Server, body: Arc<Vec<u8>>, load: &Load) -> Duration {
    let mut tasks = Vec::new();
    for _ in 0..load.clients {
        let client = client(&server.ca, load.http1, Duration::from_secs(30));
        let url = server.url("/validate");
        let body = Arc::clone(&body);
        let per_client = load.per_client;
        tasks.push(tokio::spawn(async move {
            let mut slowest = Duration::ZERO;
            for _ in 0..per_client {
                let (status, v, took) = post(&client, &url, &body).await;
                assert_eq!(status, 200, "{v}");
                assert_eq!(v["response"]["allowed"], true, "{v}");
                slowest = slowest.max(took);
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
