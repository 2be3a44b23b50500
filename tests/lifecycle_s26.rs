//! The server's process against its surroundings (s26 break-it pass): a log reader that goes away,
//! and `SIGHUP`.
//!
//! - stderr a closed pipe: tracing-subscriber's default reports a failed log write with
//!   `eprintln!`, which panics on that same stderr; the panic hook's log line fails again, and the
//!   process aborted (SIGABRT) at its first log line after the reader left. Lines that cannot be
//!   written are now dropped, and reviews go on being answered.
//! - `SIGHUP` had no handler: its default action ended the server (exit 129), no drain, no log
//!   line. With a policy file it now reads the file again; with the embedded default it is logged
//!   and ignored.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

fn review(name: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples").join(name)).unwrap()
}

/// POSTs an example review to `/validate` and returns `response.allowed`.
async fn allowed(c: &reqwest::Client, port: u16, name: &str) -> bool {
    let r = c
        .post(format!("https://localhost:{port}/validate"))
        .header("content-type", "application/json")
        .body(review(name))
        .send()
        .await
        .expect("the server answers");
    assert_eq!(r.status(), 200);
    let v: Value = r.json().await.unwrap();
    v["response"]["allowed"].as_bool().expect("an AdmissionResponse")
}

fn args(extra: &[&str]) -> Vec<String> {
    ["--addr", "127.0.0.1:0", "--no-namespace-watch"].iter().chain(extra).map(|s| s.to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_log_pipe_does_not_stop_the_server() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut served =
        common::Served::start_then_close_log(&args(&[]), &[("RUST_LOG", "debug")], Duration::from_secs(30));
    let https = common::https_client(&[&served.ca_pem()], true);
    let port = served.addr.port();
    // Each review logs (RUST_LOG=debug): every one of these meets the closed pipe.
    for _ in 0..5 {
        assert!(allowed(&https, port, "pod-create-review.json").await);
        assert!(!allowed(&https, port, "pod-liveness-checks-database-review.json").await);
    }
    assert!(served.child.try_wait().unwrap().is_none(), "the server exited: {:?}", served.child.try_wait());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_reads_the_policy_file_again_and_never_ends_the_server() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.yaml");
    let default =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("policies/default.yaml")).unwrap();
    std::fs::write(&policy, &default).unwrap();
    let path = policy.display().to_string();
    let with_file = common::Served::start(&args(&["--policy", &path]), &[], Duration::from_secs(30));
    let embedded = common::Served::start(&args(&[]), &[], Duration::from_secs(30));
    for served in [&with_file, &embedded] {
        assert!(
            Command::new("kill").args(["-HUP", &served.child.id().to_string()]).status().unwrap().success()
        );
    }
    // Evidence: each server logs the signal (a server the signal ended logs nothing).
    let deadline = Instant::now() + Duration::from_secs(20);
    while !(with_file.log().contains("SIGHUP: reading the policy file again")
        && embedded.log().contains("SIGHUP: no policy file to read again"))
    {
        assert!(Instant::now() < deadline, "no SIGHUP line:\n{}\n{}", with_file.log(), embedded.log());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for served in [&with_file, &embedded] {
        let https = common::https_client(&[&served.ca_pem()], true);
        assert!(!allowed(&https, served.addr.port(), "pod-liveness-checks-database-review.json").await);
    }
    // A SIGHUP read is a reload: a changed file is in force after it (audit mode admits the
    // coupled Pod), whether or not the file watch saw the write first.
    std::fs::write(&policy, default.replacen("mode: enforce", "mode: audit", 1)).unwrap();
    assert!(default.contains("mode: enforce"), "the default policy names its mode");
    assert!(
        Command::new("kill").args(["-HUP", &with_file.child.id().to_string()]).status().unwrap().success()
    );
    let https = common::https_client(&[&with_file.ca_pem()], true);
    let deadline = Instant::now() + Duration::from_secs(20);
    while !allowed(&https, with_file.addr.port(), "pod-liveness-checks-database-review.json").await {
        assert!(Instant::now() < deadline, "the audit policy was not installed:\n{}", with_file.log());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
