//! Shared test helpers: fixtures, AdmissionReview construction, strict patch application.
#![allow(dead_code)]

pub mod flow;
pub mod wire;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use base64::Engine as _;
use serde_json::{Value, json};

/// `tests/fixtures`.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Reads a fixture file as text.
pub fn read(rel: &str) -> String {
    std::fs::read_to_string(fixtures().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Parses one YAML document into JSON.
pub fn yaml(text: &str) -> Value {
    let mut docs =
        probegate::manifest::parse_documents(text).unwrap_or_else(|e| panic!("bad YAML in test: {e}"));
    assert_eq!(docs.len(), 1, "one document expected");
    docs.remove(0)
}

/// The expected verdicts of a corpus file (its `# probegate-expect:` line).
#[derive(Debug, serde::Deserialize)]
pub struct Expect {
    pub validate: String,
    pub deny: Vec<String>,
    pub warn: Vec<String>,
    pub mutate: Vec<String>,
    pub tier: String,
    #[serde(default)]
    pub note: String,
}

impl Expect {
    /// The ideal verdict a `semantic` file's note gives: `ideal: allow` or
    /// `ideal: deny RULE@CONTAINER[, RULE@CONTAINER]: why`, as (`allow`|`deny`, denials).
    pub fn ideal(&self) -> Option<(String, std::collections::BTreeSet<String>)> {
        let rest = self.note.strip_prefix("ideal: ")?;
        if rest.starts_with("allow") {
            return Some(("allow".into(), Default::default()));
        }
        let list = rest.strip_prefix("deny ")?.split(':').next()?;
        Some(("deny".into(), list.split(',').map(|s| s.trim().to_string()).collect()))
    }
}

/// Semantic corpus files whose expectation line (the evidence verdict when the corpus was written)
/// is outdated because probegate now reaches the note's ideal verdict without any ConfigMap, and
/// why. tests/corpus.rs holds these files to their ideal instead; the corpus itself is read-only.
/// Empty since the corpus took the Airflow scheduler's ideal (deny) as its expectation.
pub const SEMANTIC_NOW_IDEAL: &[(&str, &str)] = &[];

/// One corpus manifest.
pub struct CorpusCase {
    pub file: String,
    pub doc: Value,
    pub expect: Expect,
}

/// Every corpus manifest with its expectations.
pub fn corpus() -> Vec<CorpusCase> {
    let dir = fixtures().join("corpus");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 30, "corpus fixtures missing from {}", dir.display());
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let line = text
                .lines()
                .find_map(|l| l.strip_prefix("# probegate-expect: "))
                .unwrap_or_else(|| panic!("{}: no probegate-expect line", path.display()));
            let expect: Expect = serde_json::from_str(line).unwrap();
            CorpusCase {
                file: path.file_name().unwrap().to_string_lossy().into_owned(),
                doc: yaml(&text),
                expect,
            }
        })
        .collect()
}

/// The JSON Pointer of the pod template (or Pod spec parent) of a manifest.
pub fn template_pointer(kind: &str) -> Option<&'static str> {
    match kind {
        "Pod" => None,
        "CronJob" => Some("/spec/jobTemplate/spec/template"),
        _ => Some("/spec/template"),
    }
}

/// A manifest as a bare Pod: the Pod itself, or a controller's pod template wrapped as a Pod.
pub fn as_pod(doc: &Value) -> Value {
    let kind = doc["kind"].as_str().unwrap();
    match template_pointer(kind) {
        None => doc.clone(),
        Some(ptr) => {
            let template = doc.pointer(ptr).unwrap();
            let mut metadata = template.get("metadata").cloned().unwrap_or_else(|| json!({}));
            let name = doc["metadata"]["name"].as_str().unwrap_or("pod");
            metadata["name"] = json!(format!("{name}-0"));
            if let Some(ns) = doc["metadata"].get("namespace") {
                metadata["namespace"] = ns.clone();
            }
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": template["spec"].clone()})
        }
    }
}

/// Group of a manifest's apiVersion (`apps/v1` → `apps`, `v1` → ``).
pub fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

/// An `admission.k8s.io/v1` AdmissionReview for an object.
pub fn review(operation: &str, object: &Value, old: Option<&Value>, uid: &str) -> Value {
    let api_version = object["apiVersion"].as_str().unwrap_or("v1");
    let kind = object["kind"].as_str().unwrap_or("Pod");
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let resource = format!("{}s", kind.to_lowercase());
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": group, "version": version, "kind": kind},
            "resource": {"group": group, "version": version, "resource": resource},
            "requestKind": {"group": group, "version": version, "kind": kind},
            "requestResource": {"group": group, "version": version, "resource": resource},
            "name": object["metadata"]["name"].clone(),
            "namespace": object["metadata"].get("namespace").cloned().unwrap_or_else(|| json!("default")),
            "operation": operation,
            "userInfo": {"username": "test"},
            "object": object,
            "oldObject": old.cloned().unwrap_or(Value::Null),
            "dryRun": false,
            "options": null
        }
    })
}

/// As [`review`], made by `username` (the API server's `request.userInfo.username`).
pub fn review_as(operation: &str, object: &Value, old: Option<&Value>, uid: &str, username: &str) -> Value {
    let mut r = review(operation, object, old, uid);
    r["request"]["userInfo"] = json!({"username": username, "groups": ["system:authenticated"]});
    r
}

/// The ReplicaSet controller's identity, as a real API server reports it (kubeadm default).
pub const REPLICASET_CONTROLLER: &str = "system:serviceaccount:kube-system:replicaset-controller";

/// Decodes a response's base64 `patch` into a JSON Patch.
pub fn decode_patch(b64: &str) -> json_patch::Patch {
    let bytes = base64::engine::general_purpose::STANDARD.decode(b64).expect("patch is base64");
    serde_json::from_slice(&bytes).expect("patch is a JSON Patch array")
}

/// Applies a JSON Patch strictly (RFC 6902: no parent creation, replace/remove need the member).
pub fn apply(object: &Value, patch: &json_patch::Patch) -> Value {
    let mut out = object.clone();
    json_patch::patch(&mut out, patch)
        .unwrap_or_else(|e| panic!("patch does not apply: {e}\npatch: {patch:?}"));
    out
}

/// Parses a JSON object as a k8s-openapi Pod (what the API server would decode).
pub fn parse_pod(v: &Value) -> k8s_openapi::api::core::v1::Pod {
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("not a valid Pod: {e}"))
}

/// A ServeConfig on 127.0.0.1:0 with nothing optional: no policy file, no certificate files, no
/// admin port, no Namespace labels.
pub fn serve_config(
    policy: probegate::policy::Policy,
    tls: probegate::server::tls::TlsMaterial,
) -> probegate::server::ServeConfig {
    probegate::server::ServeConfig {
        addr: "127.0.0.1:0".parse().unwrap(),
        policy: probegate::server::LoadedPolicy::new(policy, "test", "test"),
        policy_path: None,
        tls,
        tls_files: None,
        admin_addr: None,
        namespaces: None,
        max_connections: probegate::server::conn::MAX_CONNECTIONS,
    }
}

/// Starts the real server with a certificate made here (`edit` adjusts the config); returns it and
/// the CA that signed its certificate.
pub async fn start_server(
    policy: probegate::policy::Policy,
    edit: impl FnOnce(&mut probegate::server::ServeConfig),
) -> (probegate::server::RunningServer, String) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let generated = probegate::server::tls::generate_localhost().unwrap();
    let mut config = serve_config(policy, generated.material);
    edit(&mut config);
    (probegate::server::start(config).await.unwrap(), generated.ca_pem)
}

/// An HTTPS client that trusts only the given CAs (HTTP/2 by ALPN unless `http1_only`).
pub fn https_client(cas: &[&str], http1_only: bool) -> reqwest::Client {
    let mut b = reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .timeout(std::time::Duration::from_secs(10));
    for ca in cas {
        b = b.add_root_certificate(reqwest::Certificate::from_pem(ca.as_bytes()).unwrap());
    }
    if http1_only {
        b = b.http1_only();
    }
    b.build().unwrap()
}

/// The workload a manifest document describes (its `apiVersion` and `kind` must be one probegate
/// handles).
pub fn workload(doc: &Value) -> probegate::engine::Workload {
    let kind = probegate::engine::WorkloadKind::from_api_version_kind(
        doc["apiVersion"].as_str().unwrap(),
        doc["kind"].as_str().unwrap(),
    )
    .expect("a kind probegate handles");
    probegate::engine::Workload::from_value(kind, doc).unwrap()
}

/// A `probegate serve` child process that bound its own ports (port 0) and reported them on its
/// log line `probegate serving ... addr=ADDR admin=ADMIN`: no test reserves a port and hands it
/// over (another test could take it in between). Killed when dropped, and its folder removed.
///
/// Nothing it writes lands outside its own temporary folder: without `--tls-cert`,
/// `--self-managed-tls` or `--write-ca` in the arguments, the generated CA goes to
/// `FOLDER/ca.pem` ([`Served::ca_pem`]), never to `$TMPDIR/probegate-ca.pem`, where the README's
/// Quick-start server keeps the CA its user's curl trusts; and the child's `TMPDIR` is the folder.
pub struct Served {
    pub child: std::process::Child,
    /// The HTTPS address the server bound.
    pub addr: std::net::SocketAddr,
    /// The admin address it bound, when `--admin-addr` was given.
    pub admin: Option<std::net::SocketAddr>,
    log: std::sync::Arc<std::sync::Mutex<String>>,
    /// The server's own folder (its `TMPDIR`, and its CA when the test named none).
    pub dir: tempfile::TempDir,
}

impl Served {
    /// Starts `probegate serve ARGS` (give `--addr 127.0.0.1:0`) with the environment `env`, and
    /// waits up to `within` for the log line naming the bound addresses; panics with the log if the
    /// process exits or stays silent.
    pub fn start(args: &[String], env: &[(&str, &str)], within: std::time::Duration) -> Served {
        Served::start_reading_log(args, env, within, true)
    }

    /// As [`Served::start`], but the server's stderr is closed once it has named its addresses:
    /// its later log lines meet a closed pipe (a log reader gone). [`Served::log`] stops there.
    pub fn start_then_close_log(
        args: &[String],
        env: &[(&str, &str)],
        within: std::time::Duration,
    ) -> Served {
        Served::start_reading_log(args, env, within, false)
    }

    fn start_reading_log(
        args: &[String],
        env: &[(&str, &str)],
        within: std::time::Duration,
        keep_reading: bool,
    ) -> Served {
        use std::io::BufRead;
        let dir = tempfile::tempdir().unwrap();
        let own_tls =
            args.iter().any(|a| ["--tls-cert", "--self-managed-tls", "--write-ca"].contains(&a.as_str()));
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_probegate"));
        command.arg("serve").args(args);
        if !own_tls {
            command.arg("--write-ca").arg(dir.path().join("ca.pem"));
        }
        let mut child = command
            .env("TMPDIR", dir.path())
            .env("RUST_LOG", "info")
            .envs(env.iter().copied())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        {
            let log = std::sync::Arc::clone(&log);
            // Drains the log for the child's whole life (a full pipe would block the server).
            std::thread::spawn(move || {
                for line in std::io::BufReader::new(stderr).lines() {
                    let Ok(line) = line else { break };
                    let bound = bound_addresses(&line);
                    {
                        let mut l = log.lock().unwrap();
                        l.push_str(&line);
                        l.push('\n');
                    }
                    if let Some(addrs) = bound {
                        let _ = tx.send(addrs);
                        if !keep_reading {
                            // Dropping the reader closes the pipe's only read end.
                            break;
                        }
                    }
                }
            });
        }
        match rx.recv_timeout(within) {
            Ok((addr, admin)) => Served { child, addr, admin, log, dir },
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("probegate serve did not report its address ({e}); log:\n{}", log.lock().unwrap());
            }
        }
    }

    /// What the server logged so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// The CA certificate (PEM) the server generated, when the test named no certificate or CA
    /// file of its own.
    pub fn ca_pem(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("ca.pem"))
            .expect("a generated CA in the server's folder")
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `addr=` and `admin=` fields of the server's "serving" log line, text or JSON format.
fn bound_addresses(line: &str) -> Option<(std::net::SocketAddr, Option<std::net::SocketAddr>)> {
    if !line.contains("probegate serving") {
        return None;
    }
    if let Ok(v) = serde_json::from_str::<Value>(line) {
        let addr = v["addr"].as_str()?.parse().ok()?;
        return Some((addr, v["admin"].as_str().and_then(|a| a.parse().ok())));
    }
    let field = |key: &str| line.split_whitespace().find_map(|w| w.strip_prefix(key));
    Some((field("addr=")?.parse().ok()?, field("admin=").and_then(|a| a.parse().ok())))
}

/// Polls `condition` every 20 ms until it holds, or panics naming `what` after `within`.
pub fn wait_until(what: &str, within: std::time::Duration, mut condition: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + within;
    while !condition() {
        assert!(std::time::Instant::now() < deadline, "{what}: not within {within:?}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Runs the binary in `dir` with `stdin`; the configuration environment is cleared so that the
/// tests do not depend on the caller's.
pub fn run_in(dir: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_probegate"))
        .args(args)
        .current_dir(dir)
        .env_remove("PROBEGATE_CONFIG")
        .env("NO_COLOR", "1")
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(text) = stdin {
        child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    }
    child.wait_with_output().unwrap()
}
