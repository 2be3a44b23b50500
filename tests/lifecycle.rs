//! Running it for real: certificate rotation under load without a restart, SIGTERM during load
//! (readiness fails first, no request in flight fails, exit 0), and the liveness heartbeat.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use probegate::policy::Policy;
use probegate::server::{self, LoadedPolicy, ServeConfig, tls};
use serde_json::Value;

/// A client trusting `cas`; with `fresh_connections`, a new TLS connection for every request.
fn client(cas: &[&str], fresh_connections: bool) -> reqwest::Client {
    if !fresh_connections {
        return common::https_client(cas, false);
    }
    let mut b =
        reqwest::Client::builder().use_rustls_tls().tls_built_in_root_certs(false).pool_max_idle_per_host(0);
    for ca in cas {
        b = b.add_root_certificate(reqwest::Certificate::from_pem(ca.as_bytes()).unwrap());
    }
    b.timeout(Duration::from_secs(5)).build().unwrap()
}

fn sample() -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/pod-create-review.json")).unwrap()
}

async fn validate(c: &reqwest::Client, base: &str) -> Result<(), String> {
    let r = c
        .post(format!("{base}/validate"))
        .header("content-type", "application/json")
        .body(sample())
        .send()
        .await
        .map_err(|e| format!("{e:?}"))?;
    if r.status() != 200 {
        return Err(format!("status {}", r.status()));
    }
    let v: Value = r.json().await.map_err(|e| e.to_string())?;
    if v["response"]["allowed"] != true {
        return Err(v.to_string());
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certificate_rotation_under_load() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = std::env::temp_dir().join(format!("probegate-certs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (cert, key) = (dir.join("tls.crt"), dir.join("tls.key"));
    let old = tls::generate_localhost().unwrap();
    let new = tls::generate_localhost().unwrap();
    std::fs::write(&cert, &old.material.cert_pem).unwrap();
    std::fs::write(&key, &old.material.key_pem).unwrap();
    let running = server::start(ServeConfig {
        addr: "127.0.0.1:0".parse().unwrap(),
        policy: LoadedPolicy::new(Policy::default(), "", "test"),
        policy_path: None,
        tls: tls::TlsMaterial::from_files(&cert, &key).unwrap(),
        tls_files: Some((cert.clone(), key.clone())),
        admin_addr: None,
        namespaces: None,
        max_connections: server::conn::MAX_CONNECTIONS,
    })
    .await
    .unwrap();
    let base = format!("https://localhost:{}", running.addr.port());
    let old_only = client(&[&old.ca_pem], true);
    let new_only = client(&[&new.ca_pem], true);
    validate(&old_only, &base).await.unwrap();
    assert!(validate(&new_only, &base).await.is_err(), "the new certificate is not served yet");

    // A client that trusts both loops on fresh connections the whole time.
    let stop = Arc::new(AtomicBool::new(false));
    let (ok, failed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let looping = {
        let (stop, ok, failed, base) =
            (Arc::clone(&stop), Arc::clone(&ok), Arc::clone(&failed), base.clone());
        let both = client(&[&old.ca_pem, &new.ca_pem], true);
        tokio::spawn(async move {
            while !stop.load(Ordering::SeqCst) {
                match validate(&both, &base).await {
                    Ok(()) => ok.fetch_add(1, Ordering::SeqCst),
                    Err(e) => {
                        eprintln!("request failed during rotation: {e}");
                        failed.fetch_add(1, Ordering::SeqCst)
                    }
                };
            }
        })
    };
    // Half a rotation: the new certificate with the old key. Not a matching pair: the old one stays.
    std::fs::write(&cert, &new.material.cert_pem).unwrap();
    tokio::time::sleep(Duration::from_millis(2500)).await;
    validate(&old_only, &base).await.expect("the previous pair must keep serving until the key matches");
    // The key arrives: new connections see the new certificate, without a restart.
    std::fs::write(&key, &new.material.key_pem).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while validate(&new_only, &base).await.is_err() {
        assert!(Instant::now() < deadline, "the rotated certificate was not picked up");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(validate(&old_only, &base).await.is_err(), "new connections must use the new certificate");
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.store(true, Ordering::SeqCst);
    looping.await.unwrap();
    assert_eq!(failed.load(Ordering::SeqCst), 0);
    assert!(ok.load(Ordering::SeqCst) > 20, "too few requests: {}", ok.load(Ordering::SeqCst));
    let _ = std::fs::remove_dir_all(&dir);
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_drains_readiness_first_and_exits_zero() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = std::env::temp_dir().join(format!("probegate-sigterm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca = dir.join("ca.pem");
    let (port, admin_port) = (free_port(), free_port());
    let mut child = Command::new(env!("CARGO_BIN_EXE_probegate"))
        .args([
            "serve",
            "--addr",
            &format!("127.0.0.1:{port}"),
            "--admin-addr",
            &format!("127.0.0.1:{admin_port}"),
        ])
        .args(["--write-ca", ca.to_str().unwrap(), "--drain-seconds", "2", "--no-namespace-watch"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let admin = format!("http://127.0.0.1:{admin_port}");
    let plain = reqwest::Client::new();
    loop {
        if ca.exists() && plain.get(format!("{admin}/readyz")).send().await.is_ok_and(|r| r.status() == 200) {
            break;
        }
        assert!(Instant::now() < deadline, "server did not start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(plain.get(format!("{admin}/healthz")).send().await.unwrap().status(), 200);
    let https = client(&[&std::fs::read_to_string(&ca).unwrap()], false);
    let base = format!("https://localhost:{port}");

    // Load: requests keep flowing while the signal arrives and through the drain window.
    let stop = Arc::new(AtomicBool::new(false));
    let (ok, failed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut load = Vec::new();
    for _ in 0..3 {
        let (stop, ok, failed, base, https) =
            (Arc::clone(&stop), Arc::clone(&ok), Arc::clone(&failed), base.clone(), https.clone());
        load.push(tokio::spawn(async move {
            while !stop.load(Ordering::SeqCst) {
                match validate(&https, &base).await {
                    Ok(()) => ok.fetch_add(1, Ordering::SeqCst),
                    Err(e) => {
                        eprintln!("request failed during drain: {e}");
                        failed.fetch_add(1, Ordering::SeqCst)
                    }
                };
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let signalled = Instant::now();
    assert!(Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap().success());
    // Readiness goes false at once, while the webhook still answers.
    loop {
        let r = plain.get(format!("{admin}/readyz")).send().await.unwrap();
        if r.status() == 503 {
            break;
        }
        assert!(signalled.elapsed() < Duration::from_secs(1), "readiness did not fail promptly");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let ready_off = signalled.elapsed();
    validate(&https, &base).await.expect("still serving during the drain window");
    // The API server stops sending once endpoints drop the pod; stop the load within the window.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    stop.store(true, Ordering::SeqCst);
    for l in load {
        l.await.unwrap();
    }
    assert_eq!(failed.load(Ordering::SeqCst), 0, "no request may fail while draining");
    assert!(ok.load(Ordering::SeqCst) > 10);
    // Then the process exits 0 by itself, after the drain window.
    let deadline = Instant::now() + Duration::from_secs(15);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "the server did not exit after draining");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(status.code(), Some(0));
    assert!(signalled.elapsed() >= Duration::from_secs(2), "exited before the drain window ended");
    assert!(ready_off < Duration::from_secs(1));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_second_serve_on_a_busy_port_fails_without_replacing_the_ca_file() {
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, "the CA the first server's clients trust").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_probegate"))
        .args(["serve", "--addr", &busy.local_addr().unwrap().to_string(), "--write-ca"])
        .arg(&ca)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot listen on"));
    assert_eq!(std::fs::read_to_string(&ca).unwrap(), "the CA the first server's clients trust");
}
