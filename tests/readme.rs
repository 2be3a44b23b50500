//! The README's promises, checked as a new user would meet them: its run command starts the
//! webhook on the embedded default policy, which answers `/healthz` and the sample AdmissionReviews
//! from `examples/`; the policy it shows is the embedded default; bad start-up input exits 2.

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn readme() -> String {
    std::fs::read_to_string(repo("README.md")).unwrap()
}

/// The arguments after `--` of the README's `cargo run --release -- serve` line.
fn readme_serve_args() -> Vec<String> {
    let text = readme();
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("cargo run --release -- serve"))
        .expect("README shows `cargo run --release -- serve`");
    line.split_once(" -- ").unwrap().1.split_whitespace().map(String::from).collect()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

struct Killed(Child);
impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn readme_shows_the_two_commands_and_the_embedded_default_policy() {
    let text = readme();
    assert!(text.contains("cargo run --release -- serve"));
    assert!(text.lines().any(|l| l.trim() == "cargo test"));
    let default = std::fs::read_to_string(repo("policies/default.yaml")).unwrap();
    assert!(text.contains(default.trim()), "README must show policies/default.yaml verbatim");
    for rule in probegate::policy::RuleId::ALL {
        assert!(text.contains(&format!("`{rule}`")), "README rule table lacks {rule}");
    }
}

#[test]
fn readme_lists_every_built_in_known_command_and_its_example_parses() {
    let text = readme();
    for k in probegate::engine::known::builtin() {
        assert!(text.contains(&format!("| `{}` |", k.name)), "README's knownCommands table lacks {}", k.name);
    }
    let start =
        text.find("rules:\n  liveness-dependency:\n    action: deny\n").expect("the knownCommands example");
    let example = &text[start..start + text[start..].find("```").unwrap()];
    let policy = probegate::policy::parse(
        &format!("apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\n{example}"),
        "README.md",
    )
    .unwrap();
    let names: Vec<&str> =
        policy.rules.liveness_dependency.known_commands().map(|k| k.name.as_str()).collect();
    assert_eq!(names.len(), probegate::engine::known::builtin().len() + 1);
    assert_eq!(names.last(), Some(&"shopctl-health"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_run_command_serves_the_examples() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let port = free_port();
    let dir = tempdir();
    let ca = dir.join("ca.pem");
    let mut args = readme_serve_args();
    args.extend([
        "--addr".into(),
        format!("127.0.0.1:{port}"),
        "--write-ca".into(),
        ca.display().to_string(),
    ]);
    let child = Command::new(env!("CARGO_BIN_EXE_probegate"))
        .args(&args)
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = Killed(child);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !ca.exists() {
        assert!(Instant::now() < deadline, "the CA file never appeared");
        std::thread::sleep(Duration::from_millis(50));
    }
    let client = reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(&std::fs::read(&ca).unwrap()).unwrap())
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let base = format!("https://localhost:{port}");
    loop {
        match client.get(format!("{base}/healthz")).send().await {
            Ok(r) if r.status() == 200 => break,
            _ if Instant::now() < deadline => tokio::time::sleep(Duration::from_millis(100)).await,
            other => panic!("healthz never answered: {other:?}"),
        }
    }
    assert_eq!(client.get(format!("{base}/readyz")).send().await.unwrap().status(), 200);

    let post = |path: &'static str, file: &'static str| {
        let client = client.clone();
        let base = base.clone();
        async move {
            let body = std::fs::read(repo(&format!("examples/{file}"))).unwrap();
            let r = client
                .post(format!("{base}{path}"))
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200);
            r.json::<Value>().await.unwrap()
        }
    };
    let mutated = post("/mutate", "pod-create-review.json").await;
    assert_eq!(mutated["response"]["allowed"], true);
    let patch = common::decode_patch(mutated["response"]["patch"].as_str().expect("a patch"));
    let example: Value =
        serde_json::from_slice(&std::fs::read(repo("examples/pod-create-review.json")).unwrap()).unwrap();
    common::parse_pod(&common::apply(&example["request"]["object"], &patch));
    let denied = post("/validate", "pod-liveness-checks-database-review.json").await;
    assert_eq!(denied["response"]["allowed"], false);
    assert_eq!(denied["response"]["status"]["code"], 403);
    assert!(denied["response"]["status"]["message"].as_str().unwrap().contains("(liveness-dependency)"));

    // One log line per decision that acted, naming the rules, never the object's content.
    child.0.kill().unwrap();
    let mut log = String::new();
    child.0.stderr.take().unwrap().read_to_string(&mut log).unwrap();
    assert!(log.contains("admission decision") && log.contains("startup-probe"), "{log}");
    assert!(
        !log.contains("pg_isready") && !log.contains("nginx:1.27"),
        "object content leaked into logs: {log}"
    );
}

fn tempdir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("probegate-test-{}-{}", std::process::id(), free_port()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run_serve(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_probegate")).arg("serve").args(args).output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn bad_start_up_input_exits_2_naming_the_file() {
    let dir = tempdir();
    let bad = dir.join("policy.yaml");
    std::fs::write(&bad, "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\nrules:\n  startup-probe:\n    budgetSecond: 300\n").unwrap();
    let (code, err) = run_serve(&["--addr", "127.0.0.1:0", "--policy", bad.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains(&format!("{}:5:", bad.display())), "{err}");
    assert!(err.contains("budgetSecond"), "{err}");
    let (code, err) = run_serve(&["--addr", "127.0.0.1:0", "--policy", "/nonexistent/policy.yaml"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("/nonexistent/policy.yaml"), "{err}");
    let junk = dir.join("cert.pem");
    std::fs::write(&junk, "not a certificate").unwrap();
    let (code, err) = run_serve(&[
        "--addr",
        "127.0.0.1:0",
        "--tls-cert",
        junk.to_str().unwrap(),
        "--tls-key",
        junk.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("cert.pem"), "{err}");
    let (code, err) = run_serve(&[
        "--addr",
        "127.0.0.1:0",
        "--tls-cert",
        "/nonexistent/tls.crt",
        "--tls-key",
        "/nonexistent/tls.key",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("/nonexistent/tls.crt"), "{err}");
}
