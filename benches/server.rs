//! Server benchmark: CPU time per request of `probegate serve` against a floor webhook.
//!
//! Run: `cargo bench --bench server` (with `h2load` on the PATH: Debian's `nghttp2-client`). Two
//! servers run as child processes: the real `probegate serve` (the release binary, logging at
//! `info` as shipped, the embedded default policy), and the *floor*, this bench binary
//! re-executed as a minimal webhook on the same crates (axum, axum-server, rustls with ring) that
//! only parses the body as JSON and answers `allowed: true`. Both get the captured Deployment
//! AdmissionReview at `/validate` from 16 keep-alive HTTPS clients of each load generator in turn:
//! `h2load --h1` (HTTP/1.1), `h2load` (HTTP/2, one stream at a time per connection) and the
//! bench's own reqwest clients (HTTP/1.1). Their CPU time (user + sys from `/proc/PID/stat`) is
//! read before and after each load, in alternating rounds, so the two are measured side by side
//! in one run on the same machine. Reported per generator: CPU µs per request for each server and
//! the ratio (target at most 1.1), and probegate's peak RSS (`VmHWM`, target at most 64 MiB). A
//! third server, the floor's with probegate's review in its handler (the engine alone, no
//! middleware, metrics, limits or logging), says how much of the difference is the review itself.
//!
//! Without `--bench` on its command line (as under `cargo test --benches`) it runs a short smoke
//! round only. With `PROBEGATE_BENCH_ABLATE` set it runs the ablation instead (see [`ablation`]:
//! which layer of probegate's server costs what over the engine alone). Without `h2load` it runs the reqwest load only and says so.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use support::{Load, Server};

const CLIENTS: usize = 16;
const TARGET_RATIO: f64 = 1.1;

fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    match std::env::var("PROBEGATE_BENCH_ROLE").as_deref() {
        Ok("floor") => support::serve_role(|material| async move { floor::start(&material, false).await }),
        Ok("engine") => support::serve_role(|material| async move { floor::start(&material, true).await }),
        // Not measured by the bench: probegate's library server (`server::start`, its router and
        // limits, no logging) in this binary, for `scripts/server-callgrind.sh` and by hand.
        Ok("library") => {
            support::serve_role(|material| async move { support::start_probegate(material).await })
        }
        // The ablation variants (`PROBEGATE_BENCH_ABLATE=1`, see [`ablation`]).
        Ok(role) if role.starts_with("ablate-") => {
            let role = role.to_string();
            support::serve_role(|material| async move { ablation::start(&material, &role).await })
        }
        _ if std::env::var_os("PROBEGATE_BENCH_ABLATE").is_some() => ablation::drive(),
        _ => drive(),
    }
}

/// The floor: a webhook that parses the body as JSON and allows everything; and, with the same
/// server, the engine alone: probegate's review of the body in a bare handler.
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

    /// `admission::parse_review` and `admission::review` under the default policy, the answer
    /// serialized: what `probegate serve` does for the review, without its server around it. The
    /// policy is built once, as `probegate serve` does (building it for every request cost more
    /// than the whole review: callgrind, scripts/server-callgrind.sh).
    pub async fn engine(body: Bytes) -> impl IntoResponse {
        use probegate::admission::{self, Endpoint};
        static POLICY: std::sync::OnceLock<probegate::policy::Policy> = std::sync::OnceLock::new();
        let policy = POLICY.get_or_init(probegate::policy::Policy::default);
        let request = admission::parse_review(&body).unwrap();
        let decision = admission::review(policy, None, Endpoint::Validate, &request).unwrap();
        ([(header::CONTENT_TYPE, "application/json")], serde_json::to_vec(&decision.review).unwrap())
    }

    pub async fn start(material: &probegate::server::tls::TlsMaterial, engine_alone: bool) -> u16 {
        let config = probegate::server::tls::rustls_config(material).unwrap();
        let app = if engine_alone {
            axum::Router::new().route("/validate", axum::routing::post(engine))
        } else {
            axum::Router::new().route("/validate", axum::routing::post(allow))
        };
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let mut server = axum_server::from_tcp_rustls(listener, config).unwrap();
        // `PROBEGATE_BENCH_FLOOR_H2_WINDOWS=probegate` (used by scripts/server-callgrind.sh):
        // the floor with probegate's HTTP/2 stream and connection windows instead of hyper's
        // defaults, to measure what the small windows of the stall fix cost per request.
        if std::env::var("PROBEGATE_BENCH_FLOOR_H2_WINDOWS").as_deref() == Ok("probegate") {
            use probegate::server::{H2_CONNECTION_WINDOW_BYTES, H2_STREAM_WINDOW_BYTES};
            server
                .http_builder()
                .http2()
                .initial_stream_window_size(H2_STREAM_WINDOW_BYTES)
                .initial_connection_window_size(H2_CONNECTION_WINDOW_BYTES);
        }
        tokio::spawn(async move { server.serve(app.into_make_service()).await });
        port
    }
}

/// Ablation (`PROBEGATE_BENCH_ABLATE=1 cargo bench --bench server`): which layer of probegate's
/// server costs the CPU time that the library server spends over the engine alone. Each variant
/// takes one layer away from the library server, or puts one onto the engine alone, all built
/// here from the library's public parts (nothing in `probegate serve` reads these switches). They
/// get HTTP/2 load from h2load in alternating rounds (the order rotating each round); reported:
/// each variant's median over rounds of its CPU time per request over the engine alone's in the
/// same round. `PROBEGATE_BENCH_ABLATE_ROUNDS` (default 10) and `PROBEGATE_BENCH_ABLATE_REQUESTS`
/// (per round and server, default 6000) size the run; `PROBEGATE_BENCH_ABLATE=library,ablate-x`
/// picks variants (the engine alone is always measured).
mod ablation {
    use std::sync::Arc;
    use std::time::Duration;

    use axum::routing::post;
    use probegate::server::{self, AppState, LoadedPolicy, conn, namespaces::NoNamespaceLabels};

    use super::{Generator, Server};

    /// Variants: role and what it is.
    pub const VARIANTS: &[(&str, &str)] = &[
        ("library", "probegate's server::start (router, shell middleware, connection layer)"),
        (
            "ablate-router-plain",
            "probegate's router on the floor's plain server (no LimitAcceptor, first-request timeout, HTTP/2 settings)",
        ),
        (
            "ablate-engine-conn",
            "the engine handler behind probegate's connection layer (LimitAcceptor, first-request timeout, HTTP/2 settings)",
        ),
        ("ablate-engine-acceptor", "the engine handler behind LimitAcceptor only"),
        (
            "ablate-engine-settings",
            "the engine handler with the first-request timeout and HTTP/2 settings only",
        ),
        ("ablate-engine-mw", "the engine handler in a from_fn middleware (no timer)"),
        (
            "ablate-engine-timeout",
            "the engine handler in a from_fn middleware with tokio::time::timeout(4 s)",
        ),
        (
            "ablate-engine-appstate",
            "the engine handler reading the policy through AppState's ArcSwap and recording probegate's metrics",
        ),
        (
            "ablate-engine+budget",
            "the engine handler taking a share of a body budget and the in-flight gauge",
        ),
        ("ablate-engine+lane", "the engine handler with Lane::of's two scans of the body"),
        (
            "ablate-engine+violations",
            "the engine handler counting the decision's findings in the violation metrics",
        ),
        ("ablate-engine+configmaps", "the engine handler reviewing through review_with_configmaps"),
    ];

    fn state() -> Arc<AppState> {
        let policy = LoadedPolicy::new(probegate::policy::Policy::default(), "bench", "bench");
        AppState::new(policy, Arc::new(NoNamespaceLabels))
    }

    fn engine_router() -> axum::Router {
        axum::Router::new().route("/validate", post(super::floor::engine))
    }

    async fn plain(material: &probegate::server::tls::TlsMaterial, app: axum::Router) -> u16 {
        let config = server::tls::rustls_config(material).unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = axum_server::from_tcp_rustls(listener, config).unwrap();
        tokio::spawn(async move { server.serve(app.into_make_service()).await });
        port
    }

    /// `server::start`'s connection setup: its acceptor, first-request timeout and HTTP/2
    /// settings, each when asked.
    async fn conn_layer(
        material: &probegate::server::tls::TlsMaterial,
        app: axum::Router,
        acceptor: bool,
        settings: bool,
    ) -> u16 {
        let config = server::tls::rustls_config(material).unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let rustls = axum_server::tls_rustls::RustlsAcceptor::new(config);
        macro_rules! configure_and_serve {
            ($server:expr) => {{
                let mut server = $server.handle(axum_server::Handle::new());
                if settings {
                    server = server.first_request_timeout(Duration::from_secs(10));
                    server.http_builder().http1().header_read_timeout(Duration::from_secs(10));
                    server
                        .http_builder()
                        .http2()
                        .max_concurrent_streams(server::H2_MAX_CONCURRENT_STREAMS)
                        .initial_stream_window_size(server::H2_STREAM_WINDOW_BYTES)
                        .initial_connection_window_size(server::H2_CONNECTION_WINDOW_BYTES);
                }
                tokio::spawn(async move { server.serve(app.into_make_service()).await });
            }};
        }
        let server = axum_server::from_tcp(listener).unwrap();
        if acceptor {
            let limits =
                conn::LimitAcceptor::new(conn::MAX_CONNECTIONS, conn::IDLE_TIMEOUT, conn::EVICT_AFTER);
            configure_and_serve!(server.acceptor(rustls.acceptor(limits)));
        } else {
            configure_and_serve!(server.acceptor(rustls));
        }
        port
    }

    async fn passthrough(
        request: axum::extract::Request,
        next: axum::middleware::Next,
    ) -> axum::response::Response {
        next.run(request).await
    }

    async fn timed(
        request: axum::extract::Request,
        next: axum::middleware::Next,
    ) -> axum::response::Response {
        use axum::body::HttpBody;
        use axum::response::IntoResponse;
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| {
            eprintln!(
                "  (the load's first request: {:?}, Content-Length {:?}, body size hint {:?})",
                request.version(),
                request.headers().get("content-length"),
                request.body().size_hint().exact()
            );
        });
        match tokio::time::timeout(server::REQUEST_TIMEOUT, next.run(request)).await {
            Ok(r) => r,
            Err(_) => axum::http::StatusCode::REQUEST_TIMEOUT.into_response(),
        }
    }

    /// The engine handler with AppState's policy guard and probegate's metrics recorded per
    /// request (as `admit` does), no middleware.
    async fn engine_with_state(
        axum::extract::State(state): axum::extract::State<Arc<AppState>>,
        headers: axum::http::HeaderMap,
        body: axum::body::Bytes,
    ) -> axum::response::Response {
        use axum::response::IntoResponse;
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| {
            eprintln!("  (the load's first request has Content-Length: {:?})", headers.get("content-length"));
        });
        use probegate::admission::{self, Endpoint};
        let started = std::time::Instant::now();
        let request = admission::parse_review(&body).unwrap();
        let policy = state.current();
        let decision = admission::review(&policy.policy, None, Endpoint::Validate, &request).unwrap();
        state.metrics.request(
            "validate",
            "Deployment",
            "CREATE",
            "allowed",
            false,
            started.elapsed().as_secs_f64(),
        );
        let _in_flight = state.metrics.in_flight();
        (
            [(axum::http::header::CONTENT_TYPE, "application/json")],
            serde_json::to_vec(&decision.review).unwrap(),
        )
            .into_response()
    }

    /// Which part `engine_plus` adds to the engine handler.
    static ADDED: std::sync::OnceLock<String> = std::sync::OnceLock::new();

    /// The engine handler with one part of probegate's request path added ([`ADDED`]).
    async fn engine_plus(
        axum::extract::State(state): axum::extract::State<Arc<AppState>>,
        body: axum::body::Bytes,
    ) -> axum::response::Response {
        use axum::response::IntoResponse;
        use probegate::admission::{self, Endpoint};
        static BUDGET: tokio::sync::Semaphore =
            tokio::sync::Semaphore::const_new(server::SMALL_BODY_BUDGET_BYTES);
        static POLICY: std::sync::OnceLock<probegate::policy::Policy> = std::sync::OnceLock::new();
        let policy = POLICY.get_or_init(probegate::policy::Policy::default);
        let added = ADDED.get().map(String::as_str).unwrap_or("");
        let _share = (added == "budget")
            .then(|| (BUDGET.try_acquire_many(body.len() as u32).ok(), state.metrics.in_flight()));
        if added == "lane" {
            std::hint::black_box(server::Lane::of(&body));
        }
        let request = admission::parse_review(&body).unwrap();
        let decision = if added == "configmaps" {
            struct Nothing;
            impl probegate::engine::ConfigMapSource for Nothing {
                fn get(&self, _: &str, _: &str) -> probegate::engine::ConfigMapLookup<'_> {
                    probegate::engine::ConfigMapLookup::Unresolved
                }
                fn unresolved_reason(&self, _: &str, _: &str) -> String {
                    "not resolving".to_string()
                }
            }
            admission::review_with_configmaps(policy, None, Endpoint::Validate, &request, &Nothing).unwrap()
        } else {
            admission::review(policy, None, Endpoint::Validate, &request).unwrap()
        };
        if added == "violations" {
            let s = &decision.summary;
            let mode = s.mode.map(|m| m.as_str()).unwrap_or("");
            for (rule, action) in &s.violations {
                state.metrics.violation(rule.as_str(), action.as_str(), mode, &s.namespace);
            }
        }
        (
            [(axum::http::header::CONTENT_TYPE, "application/json")],
            serde_json::to_vec(&decision.review).unwrap(),
        )
            .into_response()
    }

    pub async fn start(material: &probegate::server::tls::TlsMaterial, role: &str) -> u16 {
        match role {
            "ablate-router-plain" => plain(material, server::router(state())).await,
            "ablate-engine-conn" => conn_layer(material, engine_router(), true, true).await,
            "ablate-engine-acceptor" => conn_layer(material, engine_router(), true, false).await,
            "ablate-engine-settings" => conn_layer(material, engine_router(), false, true).await,
            "ablate-engine-mw" => {
                plain(material, engine_router().layer(axum::middleware::from_fn(passthrough))).await
            }
            "ablate-engine-timeout" => {
                plain(material, engine_router().layer(axum::middleware::from_fn(timed))).await
            }
            "ablate-engine-appstate" => {
                let app = axum::Router::new().route("/validate", post(engine_with_state)).with_state(state());
                plain(material, app).await
            }
            "ablate-engine+budget"
            | "ablate-engine+lane"
            | "ablate-engine+violations"
            | "ablate-engine+configmaps" => {
                let _ = ADDED.set(role.trim_start_matches("ablate-engine+").to_string());
                let app = axum::Router::new().route("/validate", post(engine_plus)).with_state(state());
                plain(material, app).await
            }
            other => panic!("unknown ablation role {other}"),
        }
    }

    fn median(mut v: Vec<f64>) -> f64 {
        v.sort_by(|a, b| a.total_cmp(b));
        let n = v.len();
        if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
    }

    pub fn drive() {
        let env_usize = |k: &str, d: usize| std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d);
        let rounds = env_usize("PROBEGATE_BENCH_ABLATE_ROUNDS", 10);
        let per_round = env_usize("PROBEGATE_BENCH_ABLATE_REQUESTS", 6000);
        let picked = std::env::var("PROBEGATE_BENCH_ABLATE").unwrap_or_default();
        let chosen: Vec<&(&str, &str)> = VARIANTS
            .iter()
            .filter(|(role, _)| picked == "1" || picked.split(',').any(|p| p == *role))
            .collect();
        assert!(super::h2load_available(), "the ablation needs h2load (Debian: nghttp2-client)");
        let body = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/admission/deployment-create.validating.json");
        let mut servers = vec![Server::role("engine")];
        servers.extend(chosen.iter().map(|v| Server::role(v.0)));
        let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
        for s in &servers {
            Generator::H2loadH2.run(&rt, s, &body, 1600); // warm-up
        }
        println!(
            "server ablation: {rounds} rounds x {per_round} HTTP/2 requests (h2load, 16 clients) per server, order rotating"
        );
        let n = servers.len();
        let mut us = vec![Vec::new(); n];
        for round in 0..rounds {
            let mut this_round = vec![0.0; n];
            for k in 0..n {
                let i = (k + round) % n;
                let s = &servers[i];
                let before = s.cpu_seconds();
                Generator::H2loadH2.run(&rt, s, &body, per_round);
                this_round[i] = (s.cpu_seconds() - before) * 1e6 / per_round as f64;
            }
            for i in 0..n {
                us[i].push(this_round[i]);
            }
        }
        println!("  {:<24} median {:>6.1} µs per request", "engine (baseline)", median(us[0].clone()));
        for (i, (role, what)) in chosen.iter().enumerate() {
            let ratios: Vec<f64> = us[i + 1].iter().zip(&us[0]).map(|(a, b)| a / b).collect();
            let mut sorted = ratios.clone();
            sorted.sort_by(|a, b| a.total_cmp(b));
            println!(
                "  {role:<24} median {:>6.1} µs, ratio to engine: median {:.2} (range {:.2} to {:.2})  {what}",
                median(us[i + 1].clone()),
                median(ratios),
                sorted[0],
                sorted[sorted.len() - 1]
            );
        }
    }
}

/// A load generator: how it sends `requests` reviews to a server.
#[derive(Clone, Copy)]
enum Generator {
    /// `h2load --h1`: HTTP/1.1 keep-alive.
    H2loadH1,
    /// `h2load`: HTTP/2 by ALPN, one stream at a time on each connection.
    H2loadH2,
    /// reqwest clients in this process, HTTP/1.1 keep-alive.
    Reqwest,
}

impl Generator {
    fn name(self) -> &'static str {
        match self {
            Generator::H2loadH1 => "h2load --h1 (HTTP/1.1)",
            Generator::H2loadH2 => "h2load (HTTP/2)",
            Generator::Reqwest => "reqwest (HTTP/1.1)",
        }
    }

    fn run(self, rt: &tokio::runtime::Runtime, server: &Server, body: &Path, requests: usize) {
        match self {
            Generator::Reqwest => {
                let bytes = Arc::new(std::fs::read(body).unwrap());
                let load = Load { clients: CLIENTS, per_client: requests / CLIENTS, http1: true };
                rt.block_on(support::run_load(server, bytes, &load));
            }
            Generator::H2loadH1 | Generator::H2loadH2 => {
                let mut cmd = Command::new("h2load");
                if matches!(self, Generator::H2loadH1) {
                    cmd.arg("--h1");
                }
                let out = cmd
                    .args(["-n", &requests.to_string(), "-c", &CLIENTS.to_string(), "-m", "1", "-d"])
                    .arg(body)
                    .args(["-H", "content-type: application/json"])
                    .arg(format!("https://127.0.0.1:{}/validate", server.port))
                    .output()
                    .expect("h2load runs");
                let text = String::from_utf8_lossy(&out.stdout);
                let ok = format!("{requests} succeeded, 0 failed");
                let all_2xx = format!("status codes: {requests} 2xx");
                assert!(out.status.success() && text.contains(&ok) && text.contains(&all_2xx), "{text}");
            }
        }
    }
}

fn h2load_available() -> bool {
    Command::new("h2load").arg("--version").output().is_ok_and(|o| o.status.success())
}

fn drive() {
    let full = std::env::args().any(|a| a == "--bench");
    let (rounds, per_round) = if full { (3, 12_000) } else { (1, 320) };
    let body = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/admission/deployment-create.validating.json");
    // The engine alone says how much of the difference is the review itself rather than the
    // server around it.
    let servers = [Server::role("floor"), Server::probegate(), Server::role("engine")];
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let generators: Vec<Generator> = if h2load_available() {
        vec![Generator::H2loadH1, Generator::H2loadH2, Generator::Reqwest]
    } else {
        println!("h2load not found (Debian: apt-get install nghttp2-client): reqwest load only");
        vec![Generator::Reqwest]
    };
    let started = Instant::now();
    for s in &servers {
        Generator::Reqwest.run(&rt, s, &body, CLIENTS * 20); // warm-up: connections, allocator
    }
    println!(
        "server benchmark: {rounds} rounds x {per_round} requests per server and generator, {CLIENTS} keep-alive HTTPS clients, captured Deployment AdmissionReview at /validate"
    );
    for generator in generators {
        let mut cpu = [0.0f64; 3];
        // User and system time apart, and context switches: where a difference lies (the
        // server's own code, or the kernel's sockets and wake-ups).
        let mut sys = [0.0f64; 3];
        let mut switches = [0u64; 3];
        for _ in 0..rounds {
            for (i, s) in servers.iter().enumerate() {
                let (user0, sys0) = s.cpu_user_sys_seconds();
                let switches0 = s.context_switches();
                generator.run(&rt, s, &body, per_round);
                let (user1, sys1) = s.cpu_user_sys_seconds();
                cpu[i] += (user1 - user0) + (sys1 - sys0);
                sys[i] += sys1 - sys0;
                switches[i] += s.context_switches().saturating_sub(switches0);
            }
        }
        let requests = (rounds * per_round) as f64;
        let us: Vec<f64> = cpu.iter().map(|c| c * 1e6 / requests).collect();
        let ratio = us[1] / us[0];
        let verdict = match (full, ratio <= TARGET_RATIO) {
            (false, _) => "  (smoke run: not meaningful)",
            (true, true) => "  OK",
            (true, false) => "  OVER TARGET",
        };
        println!(
            "  {:<24} floor {:>6.1} µs, probegate {:>6.1} µs CPU per request: ratio {ratio:.2}x (target <= {TARGET_RATIO}x){verdict}",
            generator.name(),
            us[0],
            us[1]
        );
        println!(
            "  {:<24} the engine alone in the floor's server: {:.1} µs, {:.2}x",
            "",
            us[2],
            us[2] / us[0]
        );
        let sys_us: Vec<f64> = sys.iter().map(|c| c * 1e6 / requests).collect();
        let per_request: Vec<f64> = switches.iter().map(|&n| n as f64 / requests).collect();
        println!(
            "  {:<24} of which sys: floor {:.1}, probegate {:.1}, engine {:.1} µs; context switches per request: {:.2}, {:.2}, {:.2}",
            "", sys_us[0], sys_us[1], sys_us[2], per_request[0], per_request[1], per_request[2]
        );
    }
    let rss_mib = servers[1].status_kib("VmHWM:") as f64 / 1024.0;
    println!(
        "  probegate peak RSS: {rss_mib:.1} MiB (target <= 64 MiB){}  ({:.1}s in all)",
        if rss_mib <= 64.0 { "  OK" } else { "  OVER TARGET" },
        started.elapsed().as_secs_f64()
    );
}
