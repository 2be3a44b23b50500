//! The README's promises, checked as a new user would meet them: its run command starts the
//! webhook on the embedded default policy, which answers `/healthz` and the sample AdmissionReviews
//! from `examples/`; the policy it shows is the embedded default; bad start-up input exits 2.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn readme() -> String {
    std::fs::read_to_string(repo("README.md")).unwrap()
}

/// A reference page under `docs/`, which the README links.
fn doc(name: &str) -> String {
    let text = std::fs::read_to_string(repo("docs").join(name)).unwrap();
    assert!(readme().contains(&format!("(docs/{name})")), "the README links docs/{name}");
    text
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

#[test]
fn readme_shows_the_two_commands_and_the_embedded_default_policy() {
    let text = readme();
    assert!(text.contains("cargo run --release -- serve"));
    assert!(text.lines().any(|l| l.trim() == "cargo test"));
    // A newcomer's first hour: the README stays short, the reference lives in docs/.
    assert!(
        text.lines().count() <= 250,
        "README has {} lines; move reference text to docs/",
        text.lines().count()
    );
    let default = std::fs::read_to_string(repo("policies/default.yaml")).unwrap();
    assert!(
        doc("policy.md").contains(default.trim()),
        "docs/policy.md must show policies/default.yaml verbatim"
    );
    for rule in probegate::policy::RuleId::ALL {
        assert!(text.contains(&format!("`{rule}`")), "README rule table lacks {rule}");
    }
}

#[test]
fn readme_lists_every_built_in_known_command_and_its_example_parses() {
    let text = doc("scripts.md");
    for k in probegate::engine::known::builtin() {
        assert!(
            text.contains(&format!("| `{}` |", k.name)),
            "docs/scripts.md's knownCommands table lacks {}",
            k.name
        );
    }
    let start =
        text.find("rules:\n  liveness-dependency:\n    action: deny\n").expect("the knownCommands example");
    let example = &text[start..start + text[start..].find("```").unwrap()];
    let policy = probegate::policy::parse(
        &format!("apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\n{example}"),
        "docs/scripts.md",
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
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    let mut args = readme_serve_args();
    assert_eq!(args.first().map(String::as_str), Some("serve"));
    args.remove(0);
    // Port 0: the server binds a free port itself and names it in its log.
    args.extend(["--addr".into(), "127.0.0.1:0".into(), "--write-ca".into(), ca.display().to_string()]);
    let served = common::Served::start(&args, &[], Duration::from_secs(30));
    let port = served.addr.port();
    // The CA file is written before the server starts listening.
    let client = reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(&std::fs::read(&ca).unwrap()).unwrap())
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let base = format!("https://localhost:{port}");
    // Listening before it logged the address: /healthz answers at once.
    assert_eq!(client.get(format!("{base}/healthz")).send().await.unwrap().status(), 200);
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
    common::wait_until("the decisions are logged", Duration::from_secs(10), || {
        let log = served.log();
        log.contains("admission decision")
            && log.contains("startup-probe")
            && log.contains("liveness-dependency")
    });
    let log = served.log();
    assert!(
        !log.contains("pg_isready") && !log.contains("nginx:1.27"),
        "object content leaked into logs: {log}"
    );
}

fn run_serve(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_probegate")).arg("serve").args(args).output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn bad_start_up_input_exits_2_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
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
