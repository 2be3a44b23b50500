//! A real kube-apiserver for end-to-end tests, after controller-runtime's envtest convention.
//!
//! `KUBEBUILDER_ASSETS` names a folder holding `kube-apiserver`, `etcd` and `kubectl` (what
//! `setup-envtest use 1.36 -p path` prints; `.ci/run` builds one from `../shared/envtest`). The
//! first test that calls [`cluster`] starts etcd and the API server on free loopback ports with a
//! fresh data folder, and writes an admin kubeconfig; every later test of the same test binary
//! shares them. Nothing else runs: no scheduler, controller manager or kubelet, so Pods are never
//! scheduled and Deployments get no ReplicaSets. Each test works in its own namespace
//! ([`namespace`]), which the harness gives a `default` ServiceAccount (the controller that would
//! create it does not run).
//!
//! Clean-up: both processes are stopped by PID when the test binary exits (also after failed,
//! panicking tests: libtest exits through `exit(3)`, which runs the `atexit` hook registered
//! here), and they get `SIGKILL` when the test binary itself dies (`PR_SET_PDEATHSIG`, set from a
//! thread that lives as long as the process). [`Probegate`] processes stop when dropped (also
//! while a panicking test unwinds) and by the same two mechanisms otherwise.
//!
//! Typical use:
//! ```ignore
//! #[tokio::test]
//! async fn denies() {
//!     let ns = harness::namespace("denies").await;
//!     let pg = harness::Probegate::start(&[]);
//!     let _hooks = harness::Webhooks::register(&pg, &ns).await;
//!     let pods: Api<Pod> = Api::namespaced(harness::client().await, &ns);
//!     // ...
//! }
//! ```

use std::io::{BufRead, Read as _};
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use base64::Engine as _;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhook, MutatingWebhookConfiguration, RuleWithOperations, ValidatingWebhook,
    ValidatingWebhookConfiguration, WebhookClientConfig,
};
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};
use kube::api::{Api, DeleteParams, ObjectMeta, PostParams};

/// The environment variable naming the assets folder.
pub const ASSETS_ENV: &str = "KUBEBUILDER_ASSETS";

/// The bearer token of the API server's admin user (group `system:masters`).
const ADMIN_TOKEN: &str = "probegate-e2e-admin";

/// A running etcd + kube-apiserver pair.
pub struct Cluster {
    /// `https://127.0.0.1:PORT`.
    pub server: String,
    /// The admin kubeconfig (token auth, group `system:masters`).
    pub kubeconfig: PathBuf,
    /// The API server's audit log (JSON lines, level `Metadata` for workloads, with webhook
    /// audit annotations).
    pub audit_log: PathBuf,
    /// The folder holding everything of this run (data, certificates, logs).
    pub dir: PathBuf,
    /// The folder named by `KUBEBUILDER_ASSETS`.
    pub assets: PathBuf,
    /// PEM CA certificate of the API server's serving certificate.
    pub ca_pem: String,
}

/// PIDs to stop when the test binary exits.
static PIDS: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// The shared cluster of this test binary, started on first use (about 5 to 30 s).
///
/// # Panics
/// When `KUBEBUILDER_ASSETS` is unset or lacks a binary, or when etcd or the API server does not
/// start: the message says what to set or where the logs are.
pub fn cluster() -> &'static Cluster {
    static CLUSTER: OnceLock<Result<Cluster, String>> = OnceLock::new();
    // Started on a thread of its own: tests call this from inside a tokio runtime, and start-up
    // blocks.
    let started = CLUSTER.get_or_init(|| {
        std::thread::spawn(start_cluster)
            .join()
            .unwrap_or_else(|_| Err("the start-up thread panicked".into()))
    });
    match started {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    }
}

/// An admin client of the shared cluster. Make one per test: a client lives on the tokio runtime
/// that created it, and every `#[tokio::test]` has its own.
pub async fn client() -> kube::Client {
    client_for(&cluster().kubeconfig).await
}

/// A client from a kubeconfig file (see [`Cluster::service_account_kubeconfig`]).
pub async fn client_for(kubeconfig: &Path) -> kube::Client {
    let kc = kube::config::Kubeconfig::read_from(kubeconfig).expect("readable kubeconfig");
    let config =
        kube::Config::from_custom_kubeconfig(kc, &Default::default()).await.expect("usable kubeconfig");
    kube::Client::try_from(config).expect("a client")
}

/// A fresh namespace `e2e-PREFIX-xxxxx` with a `default` ServiceAccount; returns its name.
/// Namespaces are never deleted (no controller manager finalizes them); the cluster is thrown
/// away at the end of the run.
pub async fn namespace(prefix: &str) -> String {
    let client = client().await;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let ns = Namespace {
        metadata: ObjectMeta { generate_name: Some(format!("e2e-{prefix}-")), ..Default::default() },
        ..Default::default()
    };
    let created = namespaces.create(&PostParams::default(), &ns).await.expect("create a namespace");
    let name = created.metadata.name.expect("a generated name");
    let accounts: Api<ServiceAccount> = Api::namespaced(client, &name);
    let sa = ServiceAccount {
        metadata: ObjectMeta { name: Some("default".into()), ..Default::default() },
        ..Default::default()
    };
    accounts.create(&PostParams::default(), &sa).await.expect("create the default ServiceAccount");
    name
}

/// `kubectl --kubeconfig ADMIN ARGS...`, its output captured; panics when it cannot be run.
pub fn kubectl(args: &[&str]) -> std::process::Output {
    kubectl_with(&cluster().kubeconfig, args, None)
}

/// `kubectl --kubeconfig KUBECONFIG ARGS...` with `stdin` fed to it.
pub fn kubectl_with(kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> std::process::Output {
    use std::io::Write as _;
    let mut cmd = Command::new(cluster().assets.join("kubectl"));
    cmd.arg("--kubeconfig").arg(kubeconfig).args(args);
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("run kubectl");
    let mut input = child.stdin.take().expect("stdin");
    input.write_all(stdin.unwrap_or("").as_bytes()).expect("write kubectl's stdin");
    drop(input);
    child.wait_with_output().expect("kubectl output")
}

/// `kubectl apply` of `manifest` (YAML) from standard input, with `extra` arguments.
pub fn kubectl_apply(manifest: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["apply", "-f", "-"];
    args.extend_from_slice(extra);
    kubectl_with(&cluster().kubeconfig, &args, Some(manifest))
}

impl Cluster {
    /// A kubeconfig authenticating as ServiceAccount `namespace/name` with a token from the
    /// TokenRequest API (one hour), for tests of real RBAC. Creates the ServiceAccount when missing.
    pub async fn service_account_kubeconfig(&self, namespace: &str, name: &str) -> PathBuf {
        use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
        let accounts: Api<ServiceAccount> = Api::namespaced(client().await, namespace);
        let sa = ServiceAccount {
            metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
            ..Default::default()
        };
        match accounts.create(&PostParams::default(), &sa).await {
            Ok(_) => {}
            Err(kube::Error::Api(e)) if e.code == 409 => {}
            Err(e) => panic!("create ServiceAccount {namespace}/{name}: {e}"),
        }
        let request = TokenRequest {
            spec: Some(TokenRequestSpec { expiration_seconds: Some(3600), ..Default::default() }),
            ..Default::default()
        };
        let token = accounts
            .create_token_request(name, &PostParams::default(), &request)
            .await
            .expect("a ServiceAccount token")
            .status
            .expect("a token status")
            .token
            .expect("a token");
        let path = self.dir.join(format!("kubeconfig-{namespace}-{name}"));
        std::fs::write(&path, kubeconfig_text(&self.server, &self.ca_pem, &token))
            .expect("write a kubeconfig");
        path
    }
}

fn kubeconfig_text(server: &str, ca_pem: &str, token: &str) -> String {
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: e2e\n  cluster:\n    server: {server}\n    \
         certificate-authority-data: {ca}\nusers:\n- name: e2e\n  user:\n    token: {token}\n\
         contexts:\n- name: e2e\n  context:\n    cluster: e2e\n    user: e2e\n    namespace: default\n\
         current-context: e2e\n"
    )
}

/// The audit policy: webhook annotations on workload writes (level Metadata), nothing else.
const AUDIT_POLICY: &str = "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n\
- level: Metadata\n  resources:\n  - group: \"\"\n    resources: [pods, replicationcontrollers]\n  \
- group: apps\n  - group: batch\n- level: None\n";

fn start_cluster() -> Result<Cluster, String> {
    let Some(assets) = std::env::var_os(ASSETS_ENV) else {
        return Err(format!(
            "the e2e tests need a real API server: set {ASSETS_ENV} to a folder holding kube-apiserver, \
             etcd and kubectl (for example `export {ASSETS_ENV}=$(setup-envtest use 1.36 -p path)`; \
             see docs/e2e.md)"
        ));
    };
    let assets = PathBuf::from(assets);
    for bin in ["kube-apiserver", "etcd", "kubectl"] {
        if !assets.join(bin).is_file() {
            return Err(format!(
                "{ASSETS_ENV}={}: no {bin} in that folder (see docs/e2e.md)",
                assets.display()
            ));
        }
    }
    install_exit_hook();
    let dir = tempfile::Builder::new().prefix("probegate-e2e-").tempdir().map_err(|e| e.to_string())?.keep();
    let t0 = Instant::now();

    // etcd, on two free ports; a lost port race (another process took one) is retried.
    let mut etcd_url = String::new();
    for attempt in 0..5 {
        let (client_port, peer_port) = (free_port(), free_port());
        let url = format!("http://127.0.0.1:{client_port}");
        let peer = format!("http://127.0.0.1:{peer_port}");
        let data = dir.join(format!("etcd-{attempt}"));
        let mut cmd = Command::new(assets.join("etcd"));
        cmd.arg("--data-dir").arg(&data).args(["--name", "e2e", "--listen-client-urls", &url]);
        cmd.args(["--advertise-client-urls", &url, "--listen-peer-urls", &peer]);
        cmd.args(["--initial-advertise-peer-urls", &peer, "--initial-cluster", &format!("e2e={peer}")]);
        let log = dir.join("etcd.log");
        let ready = || http_get_ok(client_port, "/health", |body| body.contains("\"health\":\"true\""));
        match spawn_until_ready(cmd, &log, Duration::from_secs(60), ready)? {
            true => {
                etcd_url = url;
                break;
            }
            false => continue,
        }
    }
    if etcd_url.is_empty() {
        return Err(format!("etcd did not start; see {}", dir.join("etcd.log").display()));
    }

    // Certificates: a serving pair for 127.0.0.1, a ServiceAccount signing key.
    let serving = probegate::server::tls::generate(&["127.0.0.1".into(), "localhost".into()])
        .map_err(|e| e.to_string())?;
    let write = |name: &str, text: &[u8]| -> Result<PathBuf, String> {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))?;
        Ok(p)
    };
    let cert = write("apiserver.crt", &serving.material.cert_pem)?;
    let key = write("apiserver.key", &serving.material.key_pem)?;
    let sa_key = rcgen::KeyPair::generate().map_err(|e| e.to_string())?;
    let sa_private = write("sa.key", sa_key.serialize_pem().as_bytes())?;
    let sa_public = write("sa.pub", sa_key.public_key_pem().as_bytes())?;
    let tokens = write("tokens.csv", format!("{ADMIN_TOKEN},admin,admin,system:masters\n").as_bytes())?;
    let audit_policy = write("audit-policy.yaml", AUDIT_POLICY.as_bytes())?;
    let audit_log = dir.join("audit.log");

    let mut port = 0;
    for _ in 0..5 {
        let p = free_port();
        let mut cmd = Command::new(assets.join("kube-apiserver"));
        cmd.args([
            "--etcd-servers",
            &etcd_url,
            "--bind-address",
            "127.0.0.1",
            "--advertise-address",
            "127.0.0.1",
        ]);
        cmd.args(["--secure-port", &p.to_string()]);
        cmd.arg("--tls-cert-file").arg(&cert).arg("--tls-private-key-file").arg(&key);
        cmd.arg("--token-auth-file").arg(&tokens).args(["--authorization-mode", "RBAC"]);
        cmd.arg("--service-account-key-file").arg(&sa_public);
        cmd.arg("--service-account-signing-key-file").arg(&sa_private);
        cmd.args(["--service-account-issuer", "https://kubernetes.default.svc"]);
        cmd.args(["--service-cluster-ip-range", "10.0.0.0/16", "--endpoint-reconciler-type", "none"]);
        cmd.arg("--audit-policy-file").arg(&audit_policy).arg("--audit-log-path").arg(&audit_log);
        cmd.arg(format!("--cert-dir={}", dir.join("apiserver-certs").display()));
        let log = dir.join("kube-apiserver.log");
        let ready = || http_get_ok(p, "/readyz", |body| body.trim() == "ok");
        if spawn_until_ready(cmd, &log, Duration::from_secs(120), ready)? {
            port = p;
            break;
        }
    }
    if port == 0 {
        return Err(format!(
            "kube-apiserver did not start; see {}",
            dir.join("kube-apiserver.log").display()
        ));
    }
    let server = format!("https://127.0.0.1:{port}");
    let kubeconfig = write("kubeconfig", kubeconfig_text(&server, &serving.ca_pem, ADMIN_TOKEN).as_bytes())?;
    eprintln!(
        "e2e: etcd and kube-apiserver ready in {:.1} s ({server}, files in {})",
        t0.elapsed().as_secs_f64(),
        dir.display()
    );
    Ok(Cluster { server, kubeconfig, audit_log, dir, assets, ca_pem: serving.ca_pem })
}

/// A port that was free a moment ago (the process that gets it binds it itself; a lost race is
/// seen as an early exit and retried with another port).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("a free port")
}

/// Starts `cmd` (output to `log`) and waits until `ready` or `deadline`. `Ok(false)` when the
/// process exited because an address was in use (try another port); `Err` for any other failure.
fn spawn_until_ready(
    mut cmd: Command,
    log: &Path,
    deadline: Duration,
    ready: impl Fn() -> bool,
) -> Result<bool, String> {
    let name = cmd_name(&cmd);
    let file = std::fs::File::create(log).map_err(|e| e.to_string())?;
    cmd.stdout(file.try_clone().map_err(|e| e.to_string())?).stderr(file);
    let mut child = spawn_tracked(cmd)?;
    let start = Instant::now();
    while start.elapsed() < deadline {
        if ready() {
            std::mem::forget(child); // stopped by PID at exit
            return Ok(true);
        }
        if let Ok(Some(status)) = child.try_wait() {
            untrack(child.id());
            let text = std::fs::read_to_string(log).unwrap_or_default();
            if text.contains("address already in use") {
                return Ok(false);
            }
            return Err(format!("{name} exited ({status}) before it was ready; see {}", log.display()));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    untrack(child.id());
    Err(format!("{name} not ready within {} s; see {}", deadline.as_secs(), log.display()))
}

fn cmd_name(cmd: &Command) -> String {
    cmd.get_program().to_string_lossy().into_owned()
}

/// Whether `GET {http,https}://127.0.0.1:PORT/PATH` (admin token; the certificate is not checked:
/// this only asks whether the process is up) answers a body that passes `check`.
fn http_get_ok(port: u16, path: &str, check: impl Fn(&str) -> bool) -> bool {
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(_) => return false,
    };
    let _ = rustls::crypto::ring::default_provider().install_default();
    rt.block_on(async {
        let client = reqwest::Client::builder()
            .use_rustls_tls()
            .danger_accept_invalid_certs(true)
            .timeout(Duration::from_secs(2))
            .build();
        let Ok(client) = client else { return false };
        for scheme in ["http", "https"] {
            let url = format!("{scheme}://127.0.0.1:{port}{path}");
            if let Ok(r) = client.get(&url).bearer_auth(ADMIN_TOKEN).send().await
                && let Ok(body) = r.text().await
                && check(&body)
            {
                return true;
            }
        }
        false
    })
}

/// Requests to the spawner thread: a command, and where to send the child back.
type SpawnRequest = (Command, mpsc::Sender<std::io::Result<Child>>);

/// Spawns `cmd` from a thread that lives as long as the process, with `PR_SET_PDEATHSIG` set to
/// `SIGKILL` (the signal follows the death of the spawning *thread*, hence one that never ends),
/// and records its PID for the exit hook.
fn spawn_tracked(cmd: Command) -> Result<Child, String> {
    static SPAWNER: OnceLock<Mutex<mpsc::Sender<SpawnRequest>>> = OnceLock::new();
    let sender = SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnRequest>();
        std::thread::spawn(move || {
            for (mut cmd, reply) in rx {
                use std::os::unix::process::CommandExt as _;
                // SAFETY: prctl is async-signal-safe and touches no memory of the parent.
                unsafe {
                    cmd.pre_exec(|| {
                        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                        Ok(())
                    });
                }
                let _ = reply.send(cmd.spawn());
            }
        });
        Mutex::new(tx)
    });
    let name = cmd_name(&cmd);
    let (tx, rx) = mpsc::channel();
    sender.lock().unwrap_or_else(|e| e.into_inner()).send((cmd, tx)).map_err(|e| e.to_string())?;
    let child = rx.recv().map_err(|e| e.to_string())?.map_err(|e| format!("cannot start {name}: {e}"))?;
    PIDS.lock().unwrap_or_else(|e| e.into_inner()).push(child.id());
    Ok(child)
}

fn untrack(pid: u32) {
    PIDS.lock().unwrap_or_else(|e| e.into_inner()).retain(|p| *p != pid);
}

extern "C" fn stop_all() {
    // At exit: SIGTERM every process still tracked, wait briefly, then SIGKILL.
    let pids: Vec<u32> = match PIDS.try_lock() {
        Ok(p) => p.clone(),
        Err(_) => return,
    };
    for pid in &pids {
        // SAFETY: plain syscalls on PIDs this process started.
        unsafe { libc::kill(*pid as i32, libc::SIGTERM) };
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    for pid in &pids {
        loop {
            let mut status = 0;
            // SAFETY: as above; WNOHANG never blocks.
            let r = unsafe { libc::waitpid(*pid as i32, &mut status, libc::WNOHANG) };
            if r != 0 || Instant::now() > deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // SAFETY: as above.
        unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
    }
}

fn install_exit_hook() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        // SAFETY: registers a plain extern "C" function.
        unsafe { libc::atexit(stop_all) };
    });
}

/// A `probegate serve` process started by a test, on a free loopback port chosen by itself
/// (`--addr 127.0.0.1:0`), with its own generated CA (unless the arguments bring their own TLS),
/// an admin port for `/metrics`, JSON logs to a file, and the admin kubeconfig in `KUBECONFIG`.
/// Stopped (SIGKILL) when dropped.
pub struct Probegate {
    child: Child,
    /// The HTTPS address it serves `/validate` and `/mutate` on.
    pub addr: SocketAddr,
    /// Its plain-HTTP admin address (`/metrics`, `/policy`).
    pub admin: SocketAddr,
    /// The CA its serving certificate chains to (PEM): the webhooks' `caBundle`.
    pub ca_pem: String,
    /// Its log file (JSON lines).
    pub log: PathBuf,
}

impl Probegate {
    /// Starts `probegate serve ARGS` with the admin kubeconfig, and waits until it serves.
    pub fn start(args: &[&str]) -> Probegate {
        Probegate::start_with_kubeconfig(args, &cluster().kubeconfig)
    }

    /// As [`Probegate::start`], authenticating to the API server with `kubeconfig`.
    pub fn start_with_kubeconfig(args: &[&str], kubeconfig: &Path) -> Probegate {
        let c = cluster();
        let dir = tempfile::Builder::new().prefix("probegate-").tempdir_in(&c.dir).expect("a folder").keep();
        let log = dir.join("probegate.log");
        let ca = dir.join("ca.pem");
        // PROBEGATE_BIN: another build to run (a release one from a dev-profile bench).
        let binary =
            std::env::var_os("PROBEGATE_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_probegate").into());
        let mut cmd = Command::new(binary);
        cmd.arg("serve").args([
            "--addr",
            "127.0.0.1:0",
            "--admin-addr",
            "127.0.0.1:0",
            "--log-format",
            "json",
        ]);
        let own_tls = args.iter().any(|a| *a == "--self-managed-tls" || *a == "--tls-cert");
        if !own_tls {
            cmd.arg("--write-ca").arg(&ca);
        }
        cmd.args(args).env("KUBECONFIG", kubeconfig).env("RUST_LOG", "info");
        cmd.stdout(Stdio::null()).stderr(std::fs::File::create(&log).expect("a log file"));
        let mut child = spawn_tracked(cmd).expect("start probegate");
        let deadline = Instant::now() + Duration::from_secs(60);
        let (addr, admin) = loop {
            if let Some(found) = serving_line(&log) {
                break found;
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!("probegate exited ({status}):\n{}", std::fs::read_to_string(&log).unwrap_or_default());
            }
            assert!(
                Instant::now() < deadline,
                "probegate did not serve within 60 s:\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        let ca_pem = std::fs::read_to_string(&ca).unwrap_or_default();
        Probegate { child, addr, admin, ca_pem, log }
    }

    /// Its log so far, one JSON value per line.
    pub fn log_lines(&self) -> Vec<serde_json::Value> {
        let mut text = String::new();
        if let Ok(mut f) = std::fs::File::open(&self.log) {
            let _ = f.read_to_string(&mut text);
        }
        text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
    }

    /// Its `/metrics` text.
    pub async fn metrics(&self) -> String {
        reqwest::get(format!("http://{}/metrics", self.admin))
            .await
            .expect("metrics")
            .text()
            .await
            .expect("text")
    }

    /// `https://127.0.0.1:PORT/PATH` on its serving address.
    pub fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.addr.port())
    }

    /// Its PID.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Probegate {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        untrack(self.child.id());
    }
}

/// The `addr` and `admin` of probegate's "serving" log line.
fn serving_line(log: &Path) -> Option<(SocketAddr, SocketAddr)> {
    let f = std::fs::File::open(log).ok()?;
    for line in std::io::BufReader::new(f).lines().map_while(Result::ok) {
        let v: serde_json::Value = serde_json::from_str(&line).ok()?;
        if v["message"].as_str().is_some_and(|m| m.starts_with("probegate serving")) {
            let addr = v["addr"].as_str()?.parse().ok()?;
            let admin = v["admin"].as_str()?.parse().ok()?;
            return Some((addr, admin));
        }
    }
    None
}

/// A rule of a webhook configuration: `operations` on `resources` of `group`/`v1`.
pub fn rule(operations: &[&str], group: &str, resources: &[&str]) -> RuleWithOperations {
    RuleWithOperations {
        operations: Some(operations.iter().map(|s| s.to_string()).collect()),
        api_groups: Some(vec![group.into()]),
        api_versions: Some(vec!["v1".into()]),
        resources: Some(resources.iter().map(|s| s.to_string()).collect()),
        scope: Some("Namespaced".into()),
    }
}

/// deploy/'s mutating rules: Pods on CREATE.
pub fn default_mutating_rules() -> Vec<RuleWithOperations> {
    vec![rule(&["CREATE"], "", &["pods"])]
}

/// deploy/'s validating rules: Pods on CREATE; controllers on CREATE and UPDATE.
pub fn default_validating_rules() -> Vec<RuleWithOperations> {
    vec![
        rule(&["CREATE"], "", &["pods"]),
        rule(&["CREATE", "UPDATE"], "apps", &["deployments", "statefulsets", "daemonsets", "replicasets"]),
        rule(&["CREATE", "UPDATE"], "", &["replicationcontrollers"]),
        rule(&["CREATE", "UPDATE"], "batch", &["jobs", "cronjobs"]),
    ]
}

/// A MutatingWebhookConfiguration and a ValidatingWebhookConfiguration (both named after the
/// namespace) sending requests from one namespace to a test's probegate by `clientConfig.url`,
/// with `failurePolicy: Fail` (a test should see a webhook that does not answer). Deleted when
/// dropped (best effort, on a thread of its own).
pub struct Webhooks {
    /// The name of both configurations.
    pub name: String,
}

/// How [`Webhooks::register_with`] registers.
pub struct WebhookOptions {
    /// Mutating rules ([`default_mutating_rules`]); empty: no mutating configuration.
    pub mutating: Vec<RuleWithOperations>,
    /// Validating rules ([`default_validating_rules`]); empty: no validating configuration.
    pub validating: Vec<RuleWithOperations>,
    /// `Fail` or `Ignore`.
    pub failure_policy: String,
    /// `caBundle` (PEM); `None`: the probegate's generated CA.
    pub ca_bundle: Option<String>,
    /// The configurations' name; `None`: `e2e-NAMESPACE`.
    pub name: Option<String>,
    /// The mutating webhook's `matchConditions` (CEL), if any.
    pub mutating_match_conditions: Option<Vec<k8s_openapi::api::admissionregistration::v1::MatchCondition>>,
    /// Wait until the API server calls probegate (not possible when the `caBundle` does not
    /// trust it yet).
    pub wait_until_called: bool,
}

impl Default for WebhookOptions {
    fn default() -> Self {
        WebhookOptions {
            mutating: default_mutating_rules(),
            validating: default_validating_rules(),
            failure_policy: "Fail".into(),
            ca_bundle: None,
            name: None,
            mutating_match_conditions: None,
            wait_until_called: true,
        }
    }
}

impl Webhooks {
    /// Registers deploy/'s rules for namespace `ns` to `pg` and waits until the API server calls
    /// both webhooks.
    pub async fn register(pg: &Probegate, ns: &str) -> Webhooks {
        Webhooks::register_with(pg, ns, WebhookOptions::default()).await
    }

    /// Registers with `options` for namespace `ns` to `pg`, and waits until the API server calls
    /// every registered webhook (a dry-run Pod CREATE reaches probegate's `/metrics`), up to 30 s.
    pub async fn register_with(pg: &Probegate, ns: &str, options: WebhookOptions) -> Webhooks {
        let client = client().await;
        let name = options.name.clone().unwrap_or_else(|| format!("e2e-{ns}"));
        let ca = options.ca_bundle.clone().unwrap_or_else(|| pg.ca_pem.clone());
        let selector = LabelSelector {
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: "kubernetes.io/metadata.name".into(),
                operator: "In".into(),
                values: Some(vec![ns.into()]),
            }]),
            ..Default::default()
        };
        let client_config = |path: &str| WebhookClientConfig {
            url: Some(pg.url(path)),
            ca_bundle: Some(k8s_openapi::ByteString(ca.clone().into_bytes())),
            service: None,
        };
        if !options.mutating.is_empty() {
            let m = MutatingWebhookConfiguration {
                metadata: ObjectMeta { name: Some(name.clone()), ..Default::default() },
                webhooks: Some(vec![MutatingWebhook {
                    name: "pods.mutate.probegate.dev".into(),
                    admission_review_versions: vec!["v1".into()],
                    side_effects: "None".into(),
                    timeout_seconds: Some(5),
                    failure_policy: Some(options.failure_policy.clone()),
                    match_policy: Some("Equivalent".into()),
                    reinvocation_policy: Some("IfNeeded".into()),
                    client_config: client_config("/mutate"),
                    rules: Some(options.mutating.clone()),
                    match_conditions: options.mutating_match_conditions.clone(),
                    namespace_selector: Some(selector.clone()),
                    ..Default::default()
                }]),
            };
            let api: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
            api.create(&PostParams::default(), &m).await.expect("create the MutatingWebhookConfiguration");
        }
        if !options.validating.is_empty() {
            let v = ValidatingWebhookConfiguration {
                metadata: ObjectMeta { name: Some(name.clone()), ..Default::default() },
                webhooks: Some(vec![ValidatingWebhook {
                    name: "workloads.validate.probegate.dev".into(),
                    admission_review_versions: vec!["v1".into()],
                    side_effects: "None".into(),
                    timeout_seconds: Some(5),
                    failure_policy: Some(options.failure_policy.clone()),
                    match_policy: Some("Equivalent".into()),
                    client_config: client_config("/validate"),
                    rules: Some(options.validating.clone()),
                    namespace_selector: Some(selector),
                    ..Default::default()
                }]),
            };
            let api: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
            api.create(&PostParams::default(), &v).await.expect("create the ValidatingWebhookConfiguration");
        }
        let hooks = Webhooks { name };
        let pods_mutated = options
            .mutating
            .iter()
            .any(|r| r.resources.as_ref().is_some_and(|r| r.iter().any(|r| r == "pods")));
        let pods_validated = options
            .validating
            .iter()
            .any(|r| r.resources.as_ref().is_some_and(|r| r.iter().any(|r| r == "pods")));
        if options.wait_until_called {
            wait_until_called(pg, ns, pods_mutated, pods_validated).await;
        }
        hooks
    }
}

/// Sends dry-run Pod CREATEs to `ns` until probegate's `/metrics` counts a request on each
/// endpoint asked for (the API server picks up new webhook configurations within about a second).
async fn wait_until_called(pg: &Probegate, ns: &str, mutate: bool, validate: bool) {
    use k8s_openapi::api::core::v1::Pod;
    if !mutate && !validate {
        return;
    }
    let pods: Api<Pod> = Api::namespaced(client().await, ns);
    let pod: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "e2e-webhook-ready-check"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]}
    }))
    .expect("a Pod");
    let dry = PostParams { dry_run: true, ..Default::default() };
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let _ = pods.create(&dry, &pod).await;
        let m = pg.metrics().await;
        let seen = |ep: &str| {
            m.lines().any(|l| {
                l.starts_with("probegate_admission_requests_total")
                    && l.contains(&format!("endpoint=\"{ep}\""))
            })
        };
        if (!mutate || seen("mutate")) && (!validate || seen("validate")) {
            return;
        }
        assert!(Instant::now() < deadline, "the API server did not call probegate within 30 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

impl Drop for Webhooks {
    fn drop(&mut self) {
        // Best effort, on a thread of its own: Drop may run inside a runtime, or while unwinding.
        let name = self.name.clone();
        let _ = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
            rt.block_on(async {
                let client = client().await;
                let dp = DeleteParams::default();
                let _ = Api::<MutatingWebhookConfiguration>::all(client.clone()).delete(&name, &dp).await;
                let _ = Api::<ValidatingWebhookConfiguration>::all(client).delete(&name, &dp).await;
            });
        })
        .join();
    }
}

/// The API server's audit events (JSON, level `Metadata`) for `resource` `namespace/name`, oldest
/// first: their `annotations` hold the webhooks' audit annotations as `WEBHOOK-NAME/KEY`.
pub fn audit_events(resource: &str, namespace: &str, name: &str) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(&cluster().audit_log).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| {
            let r = &e["objectRef"];
            r["resource"] == resource && r["namespace"] == namespace && r["name"] == name
        })
        .collect()
}

/// Polls `check` every 50 ms until it returns `Some`, or panics with `what` after `deadline`.
pub async fn eventually<T, F, Fut>(deadline: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let start = Instant::now();
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(start.elapsed() < deadline, "{what}: not within {:.1} s", deadline.as_secs_f64());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
