//! Policy as code over the real HTTPS server: a matrix of mode × override × exemption × rule
//! action, a fake Namespace source for label selectors, audit annotations, metrics, the admin
//! port, and hot reload under load through symlink swaps (as a ConfigMap volume does).

mod common;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::*;
use probegate::admission::AdmissionResponse;
use probegate::server::namespaces::StaticNamespaceLabels;
use probegate::server::{self, LoadedPolicy};
use serde_json::{Value, json};

struct Harness {
    client: reqwest::Client,
    base: String,
    admin: Option<String>,
    running: server::RunningServer,
}

async fn start_with(
    policy_text: &str,
    policy_path: Option<PathBuf>,
    namespaces: Option<StaticNamespaceLabels>,
) -> Harness {
    let policy = probegate::policy::parse(policy_text, "test.yaml").unwrap();
    let source = policy_path.as_ref().map_or("test".into(), |p| p.display().to_string());
    let loaded = LoadedPolicy::new(policy.clone(), policy_text, source);
    let (running, ca) = start_server(policy, |c| {
        c.policy = loaded;
        c.policy_path = policy_path;
        c.admin_addr = Some("127.0.0.1:0".parse().unwrap());
        c.namespaces =
            namespaces.map(|n| Arc::new(n) as Arc<dyn probegate::server::namespaces::NamespaceLabels>);
    })
    .await;
    let client = https_client(&[&ca], false);
    Harness {
        client,
        base: format!("https://localhost:{}", running.addr.port()),
        admin: running.admin_addr.map(|a| format!("http://{a}")),
        running,
    }
}

impl Harness {
    async fn review(&self, path: &str, body: &Value) -> AdmissionResponse {
        let r = self.client.post(format!("{}{path}", self.base)).json(body).send().await.unwrap();
        assert_eq!(r.status(), 200);
        let v: Value = r.json().await.unwrap();
        serde_json::from_value(v["response"].clone()).unwrap()
    }
}

const HEAD: &str = "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\n";

/// A bare Pod in `namespace` with a coupled liveness probe (deny), no readiness probe though it
/// serves (warn), a low timeout and no preStop (mutate). Containers: `app`, and `istio-proxy` with
/// the same problems, running Istio's proxy image.
fn pod(namespace: &str, skip: Option<&str>) -> Value {
    pod_with_proxy_image(namespace, skip, "docker.io/istio/proxyv2:1.24.0")
}

/// As [`pod`], with the `istio-proxy` container running `proxy_image`.
fn pod_with_proxy_image(namespace: &str, skip: Option<&str>, proxy_image: &str) -> Value {
    let c = |name: &str, image: &str| {
        json!({"name": name, "image": image, "ports": [{"containerPort": 8080}],
               "livenessProbe": {"httpGet": {"host": "db.data.svc", "path": "/", "port": 5432}, "timeoutSeconds": 1}})
    };
    let mut meta = json!({"name": "p", "namespace": namespace});
    if let Some(s) = skip {
        meta["annotations"] = json!({"probegate.dev/skip": s});
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
           "spec": {"containers": [c("app", "x"), c("istio-proxy", proxy_image)]}})
}

fn rules_in(r: &AdmissionResponse) -> Vec<String> {
    let mut out: Vec<String> = r
        .warnings
        .iter()
        .flatten()
        .chain(r.status.iter().map(|s| &s.message))
        .flat_map(|t| t.split("; container ").map(String::from).collect::<Vec<_>>())
        .filter_map(|t| {
            let start = t.rfind(" (")? + 2;
            let end = t[start..].find(')')? + start;
            Some(t[start..end].to_string())
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matrix_of_mode_override_exemption_and_action() {
    let policy = format!(
        r#"{HEAD}mode: enforce
overrides:
  - name: audited
    namespaces: ["audit-*"]
    mode: audit
  - name: off
    namespaces: ["off"]
    mode: off
  - name: lenient
    namespaceSelector: {{matchLabels: {{tier: legacy}}}}
    rules:
      liveness-dependency: {{action: warn}}
      prestop-sleep: {{action: off}}
      readiness-missing: {{action: off}}
"#
    );
    let mut ns = HashMap::new();
    ns.insert("legacy-shop".to_string(), BTreeMap::from([("tier".to_string(), "legacy".to_string())]));
    let h = start_with(&policy, None, Some(StaticNamespaceLabels(ns))).await;

    // enforce, no override: denied for the app container; istio-proxy exempt.
    let r = h.review("/validate", &review("CREATE", &pod("shop", None), None, "m1")).await;
    assert!(!r.allowed);
    let msg = r.status.clone().unwrap().message;
    assert!(msg.contains("container app:") && !msg.contains("istio-proxy"), "{msg}");
    assert_eq!(rules_in(&r), vec!["liveness-dependency", "readiness-missing"]);
    let m = h.review("/mutate", &review("CREATE", &pod("shop", None), None, "m2")).await;
    let patch = serde_json::to_string(&decode_patch(m.patch.as_ref().unwrap())).unwrap();
    assert!(patch.contains("/spec/containers/0/") && !patch.contains("/spec/containers/1/"), "{patch}");

    // audit override: allowed, no patch, [audit] warnings and the violations audit annotation.
    for path in ["/validate", "/mutate"] {
        let r = h.review(path, &review("CREATE", &pod("audit-team", None), None, "m3")).await;
        assert!(r.allowed && r.patch.is_none(), "{path}");
        let w = r.warnings.clone().unwrap();
        assert!(w.iter().all(|w| w.starts_with("probegate [audit]: ")), "{w:?}");
        let v: Value = serde_json::from_str(&r.audit_annotations.unwrap()["violations"]).unwrap();
        let expected_action = if path == "/validate" { "deny" } else { "mutate" };
        assert!(
            v.as_array().unwrap().iter().any(|x| x["container"] == "app" && x["action"] == expected_action),
            "{v}"
        );
    }

    // off override: untouched.
    for path in ["/validate", "/mutate"] {
        let r = h.review(path, &review("CREATE", &pod("off", None), None, "m4")).await;
        assert!(r.allowed && r.patch.is_none() && r.warnings.is_none(), "{path}");
    }

    // label-selected override: liveness-dependency becomes a warning; prestop-sleep off. The
    // warned liveness check is not copied into a startup probe, and startup-probe says so.
    let r = h.review("/validate", &review("CREATE", &pod("legacy-shop", None), None, "m5")).await;
    assert!(r.allowed, "{r:?}");
    assert_eq!(rules_in(&r), vec!["liveness-dependency", "startup-probe"]);
    let m = h.review("/mutate", &review("CREATE", &pod("legacy-shop", None), None, "m6")).await;
    let patch = serde_json::to_string(&decode_patch(m.patch.as_ref().unwrap())).unwrap();
    assert!(patch.contains("timeoutSeconds") && !patch.contains("lifecycle"), "{patch}");
    // An unknown namespace with the same name shape but no labels is not lenient.
    assert!(!h.review("/validate", &review("CREATE", &pod("legacy-other", None), None, "m7")).await.allowed);

    // Skip annotation: allowed rules skipped (and reported), liveness-dependency not skippable.
    let r = h
        .review(
            "/validate",
            &review("CREATE", &pod("shop", Some("readiness-missing,liveness-dependency")), None, "m8"),
        )
        .await;
    assert!(!r.allowed, "the deny rule cannot be skipped by annotation");
    assert_eq!(rules_in(&r), vec!["liveness-dependency"]);
    assert!(r.warnings.unwrap().iter().any(|w| w.contains("cannot skip liveness-dependency")));
    assert_eq!(r.audit_annotations.unwrap()["skipped-rules"], "readiness-missing");
    // With prestop-sleep and probe-timeout skipped, nothing is left to patch (startup-probe never
    // copies a coupled liveness handler).
    let m = h
        .review("/mutate", &review("CREATE", &pod("shop", Some("prestop-sleep, probe-timeout")), None, "m9"))
        .await;
    assert!(m.patch.is_none(), "{:?}", m.patch.map(|p| decode_patch(&p)));
    assert_eq!(m.audit_annotations.unwrap()["skipped-rules"], "prestop-sleep,probe-timeout");

    // Metrics on the TLS port and the admin port.
    let text = h.client.get(format!("{}/metrics", h.base)).send().await.unwrap().text().await.unwrap();
    assert!(text.contains("probegate_admission_requests_total{endpoint=\"validate\",kind=\"Pod\",operation=\"CREATE\",result=\"denied\",dry_run=\"false\"}"), "{text}");
    assert!(text.contains("probegate_violations_total{rule=\"liveness-dependency\",action=\"deny\",mode=\"audit\",namespace=\"audit-team\"}"), "{text}");
    assert!(text.contains("probegate_admission_duration_seconds_bucket"), "{text}");
    assert!(text.contains("probegate_policy_info{hash="), "{text}");
    let admin = h.admin.clone().unwrap();
    let plain = reqwest::Client::new();
    assert_eq!(plain.get(format!("{admin}/healthz")).send().await.unwrap().status(), 200);
    assert_eq!(plain.get(format!("{admin}/readyz")).send().await.unwrap().status(), 200);
    assert!(
        plain
            .get(format!("{admin}/metrics"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
            .contains("probegate_admission_requests_total")
    );
    let info: Value = plain.get(format!("{admin}/policy")).send().await.unwrap().json().await.unwrap();
    assert_eq!(info["overrides"], json!(["audited", "off", "lenient"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exempt_container_needs_its_name_and_its_image_and_is_reported() {
    let h = start_with(&format!("{HEAD}mode: enforce\n"), None, None).await;
    // Istio's proxy, by its real images (tags, digests, the Docker Hub short form, the release
    // registry): exempt, and reported in the audit annotation.
    for image in [
        "docker.io/istio/proxyv2:1.24.0",
        "docker.io/istio/proxyv2:1.24.0-distroless",
        "istio/proxyv2:1.22.3",
        "gcr.io/istio-release/proxyv2:1.26.1",
        "gcr.io/istio-release/proxyv2@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "registry.example.com/mirror/istio/proxyv2:1.24.0",
    ] {
        let body = review("CREATE", &pod_with_proxy_image("shop", None, image), None, "x1");
        let r = h.review("/validate", &body).await;
        let msg = r.status.clone().unwrap().message;
        assert!(msg.contains("container app:") && !msg.contains("istio-proxy"), "{image}: {msg}");
        let exempt: Value = serde_json::from_str(&r.audit_annotations.unwrap()["exempt-containers"]).unwrap();
        assert_eq!(exempt, json!([{"container": "istio-proxy", "image": image}]), "{image}");
        let m = h.review("/mutate", &body).await;
        let patch = serde_json::to_string(&decode_patch(m.patch.as_ref().unwrap())).unwrap();
        assert!(!patch.contains("/spec/containers/1/"), "{image}: {patch}");
        assert!(m.audit_annotations.unwrap()["exempt-containers"].contains("istio-proxy"));
    }
    // An app container that only takes the name: checked like any other, and not reported exempt.
    for image in ["x", "postgres:16", "docker.io/library/istio-proxy:1", "docker.io/istio/pilot:1.24.0"] {
        let body = review("CREATE", &pod_with_proxy_image("shop", None, image), None, "x2");
        let r = h.review("/validate", &body).await;
        assert!(!r.allowed);
        let msg = r.status.clone().unwrap().message;
        assert!(msg.contains("container istio-proxy:") && msg.contains("db.data.svc"), "{image}: {msg}");
        assert!(r.audit_annotations.as_ref().is_none_or(|a| !a.contains_key("exempt-containers")), "{image}");
        let m = h.review("/mutate", &body).await;
        let patch = serde_json::to_string(&decode_patch(m.patch.as_ref().unwrap())).unwrap();
        assert!(patch.contains("/spec/containers/1/"), "{image}: {patch}");
    }
    // Linkerd's proxy as a native sidecar (an init container with restartPolicy: Always).
    let mut p = pod_with_proxy_image("shop", None, "x");
    p["spec"]["containers"].as_array_mut().unwrap().truncate(1);
    p["spec"]["initContainers"] = json!([{"name": "linkerd-proxy", "image": "cr.l5d.io/linkerd/proxy:edge-25.1.1",
        "restartPolicy": "Always", "livenessProbe": {"httpGet": {"host": "db.data.svc", "path": "/", "port": 5432}}}]);
    let r = h.review("/validate", &review("CREATE", &p, None, "x3")).await;
    assert!(!r.status.unwrap().message.contains("linkerd-proxy"));
    assert!(
        r.audit_annotations.unwrap()["exempt-containers"].contains("cr.l5d.io/linkerd/proxy:edge-25.1.1")
    );
    p["spec"]["initContainers"][0]["image"] = json!("ghcr.io/acme/worker:1");
    let r = h.review("/validate", &review("CREATE", &p, None, "x4")).await;
    assert!(r.status.unwrap().message.contains("container linkerd-proxy:"));
}

fn write_policy_version(dir: &Path, version: usize, text: &str) -> PathBuf {
    let data = dir.join(format!("..data_{version}"));
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("policy.yaml"), text).unwrap();
    data
}

/// Swaps `dir/..data` to point at `target` atomically (rename of a fresh symlink), like the kubelet.
fn swap_data(dir: &Path, target: &Path) {
    let tmp = dir.join("..data_tmp");
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(target.file_name().unwrap(), &tmp).unwrap();
    std::fs::rename(&tmp, dir.join("..data")).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_under_load_through_symlink_swaps() {
    // Its own folder, removed when dropped (also when the test fails).
    let folder = tempfile::tempdir().unwrap();
    let dir = folder.path().to_path_buf();
    // Policy A denies the coupled liveness probe; policy B only warns.
    let a = format!("{HEAD}rules:\n  liveness-dependency: {{action: deny}}\n");
    let b = format!("{HEAD}rules:\n  liveness-dependency: {{action: warn}}\n");
    let invalid = format!("{HEAD}rules:\n  liveness-dependency: {{action: mutate}}\n");
    let va = write_policy_version(&dir, 0, &a);
    swap_data(&dir, &va);
    std::os::unix::fs::symlink("..data/policy.yaml", dir.join("policy.yaml")).unwrap();
    let h = Arc::new(start_with(&a, Some(dir.join("policy.yaml")), None).await);

    let stop = Arc::new(AtomicBool::new(false));
    let (ok, failed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut clients = Vec::new();
    for i in 0..4 {
        let (h, stop, ok, failed) = (Arc::clone(&h), Arc::clone(&stop), Arc::clone(&ok), Arc::clone(&failed));
        clients.push(tokio::spawn(async move {
            let deadline = Instant::now() + Duration::from_secs(60);
            let mut n = 0;
            while !stop.load(Ordering::SeqCst) && Instant::now() < deadline {
                n += 1;
                let body = review("CREATE", &pod("shop", None), None, &format!("r{i}-{n}"));
                match h.client.post(format!("{}/validate", h.base)).json(&body).send().await {
                    Ok(r) if r.status() == 200 => {
                        let v: Value = r.json().await.unwrap();
                        let allowed = v["response"]["allowed"].as_bool().unwrap();
                        let text = v.to_string();
                        // Either policy A (denied) or policy B (allowed with the warning), nothing else.
                        let consistent = if allowed {
                            text.contains("(liveness-dependency)")
                        } else {
                            text.contains("403")
                        };
                        if consistent {
                            ok.fetch_add(1, Ordering::SeqCst)
                        } else {
                            failed.fetch_add(1, Ordering::SeqCst)
                        };
                    }
                    _ => {
                        failed.fetch_add(1, Ordering::SeqCst);
                    }
                }
            }
        }));
    }
    let current_allows = |h: Arc<Harness>| async move {
        h.review("/validate", &review("CREATE", &pod("shop", None), None, "probe")).await.allowed
    };
    let wait_for = |want: bool| {
        let h = Arc::clone(&h);
        async move {
            let deadline = Instant::now() + Duration::from_secs(10);
            while current_allows(Arc::clone(&h)).await != want {
                assert!(Instant::now() < deadline, "reload did not happen within 10 s (want allowed={want})");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    for round in 1..=6 {
        let (text, allows) = if round % 2 == 1 { (&b, true) } else { (&a, false) };
        let v = write_policy_version(&dir, round * 2, text);
        swap_data(&dir, &v);
        wait_for(allows).await;
        // An invalid version is refused: the last good policy stays, and readiness too.
        let failures_before = reload_failures(&h).await;
        let bad = write_policy_version(&dir, round * 2 + 1, &invalid);
        swap_data(&dir, &bad);
        // Evidence that the invalid version was read and refused: the failure counter moves.
        let deadline = Instant::now() + Duration::from_secs(10);
        while reload_failures(&h).await <= failures_before {
            assert!(Instant::now() < deadline, "the invalid policy was not read within 10 s");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(
            current_allows(Arc::clone(&h)).await,
            allows,
            "an invalid policy must not replace the good one"
        );
        assert!(h.running.state.is_ready());
        // Back to the good version before the next round.
        swap_data(&dir, &v);
    }
    stop.store(true, Ordering::SeqCst);
    for c in clients {
        c.await.unwrap();
    }
    assert_eq!(failed.load(Ordering::SeqCst), 0, "requests failed or were inconsistent during reloads");
    assert!(ok.load(Ordering::SeqCst) > 50, "too few requests under load: {}", ok.load(Ordering::SeqCst));
    let metrics = h.client.get(format!("{}/metrics", h.base)).send().await.unwrap().text().await.unwrap();
    assert!(metrics.contains("probegate_policy_reloads_total{result=\"success\"}"), "{metrics}");
    assert!(metrics.contains("probegate_policy_reloads_total{result=\"failure\"}"), "{metrics}");
}

/// `probegate_policy_reloads_total{result="failure"}` as the server reports it (0 before the first).
async fn reload_failures(h: &Harness) -> u64 {
    let metrics = h.client.get(format!("{}/metrics", h.base)).send().await.unwrap().text().await.unwrap();
    metrics
        .lines()
        .find_map(|l| l.strip_prefix("probegate_policy_reloads_total{result=\"failure\"} "))
        .map_or(0, |v| v.trim().parse().unwrap())
}
