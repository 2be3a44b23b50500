//! Running it for real: certificate rotation under load without a restart, SIGTERM during load
//! (readiness fails first, no request in flight fails, exit 0), and the liveness heartbeat.

mod common;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use probegate::server::tls;
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
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let (cert, key) = (dir.join("tls.crt"), dir.join("tls.key"));
    let old = tls::generate_localhost().unwrap();
    let new = tls::generate_localhost().unwrap();
    std::fs::write(&cert, &old.material.cert_pem).unwrap();
    std::fs::write(&key, &old.material.key_pem).unwrap();
    // The real binary, so that its log shows when it looked at the files and refused them.
    let args: Vec<String> =
        vec!["--addr".into(), "127.0.0.1:0".into(), "--no-namespace-watch".into(), "--tls-cert".into()];
    let args: Vec<String> = args
        .into_iter()
        .chain([cert.display().to_string(), "--tls-key".into(), key.display().to_string()])
        .collect();
    let served = common::Served::start(&args, &[], Duration::from_secs(20));
    let base = format!("https://localhost:{}", served.addr.port());
    let old_only = client(&[&old.ca_pem], true);
    let new_only = client(&[&new.ca_pem], true);
    validate(&old_only, &base).await.unwrap();
    // Refused by the client's certificate check (not a timeout or a refused connection).
    let e = validate(&new_only, &base).await.expect_err("the new certificate is not served yet");
    assert!(e.contains("InvalidCertificate"), "{e}");

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
    // The looping client is running before anything changes (evidence, not a count after the fact
    // that a loaded machine may not reach).
    wait_for_count("requests before the rotation", &ok, 5).await;
    // Half a rotation: the new certificate with the old key. Not a matching pair: the old one stays.
    std::fs::write(&cert, &new.material.cert_pem).unwrap();
    // Evidence that the server read the changed files and refused them, not a guess at how long
    // that takes.
    let refused = "certificate files changed but are not usable (yet); keeping the previous pair";
    let deadline = Instant::now() + Duration::from_secs(10);
    while !served.log().contains(refused) {
        assert!(Instant::now() < deadline, "the half rotation was not noticed:\n{}", served.log());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    validate(&old_only, &base).await.expect("the previous pair must keep serving until the key matches");
    // The key arrives: new connections see the new certificate, without a restart.
    std::fs::write(&key, &new.material.key_pem).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while validate(&new_only, &base).await.is_err() {
        assert!(Instant::now() < deadline, "the rotated certificate was not picked up");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let refused_old =
        validate(&old_only, &base).await.expect_err("new connections must use the new certificate");
    assert!(refused_old.contains("InvalidCertificate"), "{refused_old}");
    assert!(served.log().contains("serving certificate reloaded"), "{}", served.log());
    // The looping client goes on through the new certificate too.
    let before = ok.load(Ordering::SeqCst);
    wait_for_count("requests after the rotation", &ok, before + 5).await;
    stop.store(true, Ordering::SeqCst);
    looping.await.unwrap();
    assert_eq!(failed.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_drains_readiness_first_and_exits_zero() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    // Both ports 0: the server binds them and names them in its log.
    let args: Vec<String> = ["--addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0", "--write-ca"]
        .into_iter()
        .map(String::from)
        .chain([ca.display().to_string()])
        .chain(["--drain-seconds", "2", "--no-namespace-watch"].into_iter().map(String::from))
        .collect();
    let mut served = common::Served::start(&args, &[], Duration::from_secs(20));
    let (port, admin_port) = (served.addr.port(), served.admin.expect("an admin address").port());
    let admin = format!("http://127.0.0.1:{admin_port}");
    let plain = reqwest::Client::new();
    assert_eq!(plain.get(format!("{admin}/readyz")).send().await.unwrap().status(), 200);
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
    wait_for_count("requests before the signal", &ok, 5).await;
    let signalled = Instant::now();
    assert!(Command::new("kill").args(["-TERM", &served.child.id().to_string()]).status().unwrap().success());
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
    // The API server stops sending once endpoints drop the pod: the load goes on inside the window
    // until it has been answered a few more times (evidence of serving while draining), then stops.
    let before = ok.load(Ordering::SeqCst);
    wait_for_count("requests during the drain window", &ok, before + 3).await;
    stop.store(true, Ordering::SeqCst);
    for l in load {
        l.await.unwrap();
    }
    assert_eq!(failed.load(Ordering::SeqCst), 0, "no request may fail while draining");
    assert!(ok.load(Ordering::SeqCst) > 10);
    // Then the process exits 0 by itself, after the drain window.
    let deadline = Instant::now() + Duration::from_secs(15);
    let status = loop {
        if let Some(s) = served.child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "the server did not exit after draining");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(status.code(), Some(0));
    assert!(signalled.elapsed() >= Duration::from_secs(2), "exited before the drain window ended");
    assert!(ready_off < Duration::from_secs(1));
}

/// Polls until `counter` reaches `at_least` (10 s deadline).
async fn wait_for_count(what: &str, counter: &AtomicUsize, at_least: usize) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while counter.load(Ordering::SeqCst) < at_least {
        assert!(Instant::now() < deadline, "{what}: {} of {at_least}", counter.load(Ordering::SeqCst));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
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

/// The admin port (`--admin-addr`, where the kubelet probes `/healthz`) bounds a connection that
/// never finishes its request headers as the webhook's port does: closed after the 10 s
/// first-request bound (s19 break-it: on 511f845 it was still open after 70 s), and the port
/// still answers.
#[test]
fn the_admin_port_closes_a_connection_that_never_finishes_its_headers() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    let args: Vec<String> = ["--addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0", "--write-ca"]
        .into_iter()
        .map(String::from)
        .chain([ca.display().to_string(), "--no-namespace-watch".to_string()])
        .collect();
    let served = common::Served::start(&args, &[], Duration::from_secs(20));
    let admin = served.admin.expect("an admin address");
    let mut stalled = std::net::TcpStream::connect(admin).unwrap();
    stalled.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n").unwrap();
    // Evidence is the connection's end, read with a deadline well past the bound.
    stalled.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let started = Instant::now();
    let mut buf = [0u8; 512];
    let ended = loop {
        match stalled.read(&mut buf) {
            Ok(0) => break Ok(()),
            Ok(_) => continue,
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                break Err(e);
            }
            Err(_) => break Ok(()),
        }
    };
    let took = started.elapsed();
    assert!(ended.is_ok(), "the stalled admin connection was still open after {took:?}");
    assert!(took >= Duration::from_secs(5), "closed after {took:?}, before the 10 s bound");
    let mut fresh = std::net::TcpStream::connect(admin).unwrap();
    fresh.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
    let mut answer = String::new();
    fresh.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    fresh.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}
