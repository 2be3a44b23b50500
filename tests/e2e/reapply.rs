//! Re-applying an unchanged manifest after probegate patched it: `kubectl apply` client-side and
//! server-side, twice each. Pods' probes and lifecycle are immutable, so an UPDATE that sends back
//! the manifest's values would be refused; probegate's mutating webhook, called on UPDATE, keeps
//! its own changes when that is all the UPDATE would undo. Templates (with `templates.mutate`)
//! keep the patch and do not change (no new generation, no rollout).

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;
use serde_json::{Value, json};

use crate::harness::{self, Probegate, WebhookOptions, Webhooks, rule};

fn apply_ok(manifest: &Value, extra: &[&str]) {
    let out = harness::kubectl_apply(&manifest.to_string(), extra);
    assert!(out.status.success(), "kubectl apply {extra:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// Pods go to /mutate with deploy/base's rules and matchConditions (read from there).
fn pod_update_options() -> WebhookOptions {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/deploy/base/mutatingwebhookconfiguration.yaml"
    ))
    .unwrap();
    let config = probegate::manifest::parse_documents(&text).unwrap().remove(0);
    let hook = &config["webhooks"][0];
    WebhookOptions {
        mutating: serde_json::from_value(hook["rules"].clone()).unwrap(),
        mutating_match_conditions: Some(serde_json::from_value(hook["matchConditions"].clone()).unwrap()),
        ..Default::default()
    }
}

#[tokio::test]
async fn re_applying_an_unchanged_pod_succeeds_client_and_server_side() {
    let ns = harness::namespace("reapply-pod").await;
    let pg = Probegate::start(&[]);
    let _hooks = Webhooks::register_with(&pg, &ns, pod_update_options()).await;
    let pods: Api<Pod> = Api::namespaced(harness::client().await, &ns);
    for (name, mode) in [("csa", None), ("ssa", Some("--server-side"))] {
        // timeoutSeconds 1 (raised to 3) and initialDelaySeconds 45 (moved into a startup probe).
        let manifest = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
            "spec": {"containers": [{"name": "web", "image": "nginx", "ports": [{"containerPort": 8080}],
                "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "timeoutSeconds": 1,
                                  "initialDelaySeconds": 45},
                "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}}}]}});
        let extra: Vec<&str> = mode.into_iter().collect();
        apply_ok(&manifest, &extra);
        let first = pods.get(name).await.unwrap();
        for _ in 0..2 {
            apply_ok(&manifest, &extra);
        }
        let again = pods.get(name).await.unwrap();
        let c = |p: &Pod| serde_json::to_value(&p.spec.as_ref().unwrap().containers[0]).unwrap();
        assert_eq!(c(&again), c(&first), "{name}: the Pod stays as probegate made it");
        assert_eq!(c(&again)["livenessProbe"]["timeoutSeconds"], 3, "{name}");
        assert!(c(&again)["startupProbe"].is_object(), "{name}");
    }
    // A label change does not reach probegate at all (deploy/'s matchConditions).
    let updates = |m: String| -> usize {
        m.lines()
            .filter(|l| {
                l.starts_with("probegate_admission_requests_total{endpoint=\"mutate\"")
                    && l.contains("operation=\"UPDATE\"")
            })
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum::<f64>() as usize
    };
    let before = updates(pg.metrics().await);
    assert!(before > 0, "the re-applies were sent to probegate");
    let out = harness::kubectl(&["label", "pod", "csa", "-n", &ns, "team=web"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(updates(pg.metrics().await), before, "a label change is not sent to probegate");
    // A real change of a probe is still refused by the API server, as without probegate.
    let changed = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "csa", "namespace": ns},
        "spec": {"containers": [{"name": "web", "image": "nginx", "ports": [{"containerPort": 8080}],
            "livenessProbe": {"httpGet": {"path": "/other", "port": 8080}, "timeoutSeconds": 1,
                              "initialDelaySeconds": 45},
            "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}}}]}});
    let out = harness::kubectl_apply(&changed.to_string(), &[]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("may not change fields"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test]
async fn re_applying_an_unchanged_deployment_keeps_the_patch_and_the_generation() {
    let ns = harness::namespace("reapply-deploy").await;
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.yaml");
    std::fs::write(
        &policy,
        "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\ntemplates:\n  mutate: true\n",
    )
    .unwrap();
    let pg = Probegate::start(&["--policy", policy.to_str().unwrap()]);
    let options = WebhookOptions {
        mutating: vec![
            rule(&["CREATE"], "", &["pods"]),
            rule(&["CREATE", "UPDATE"], "apps", &["deployments"]),
        ],
        ..Default::default()
    };
    let _hooks = Webhooks::register_with(&pg, &ns, options).await;
    let deployments: Api<Deployment> = Api::namespaced(harness::client().await, &ns);
    for (name, mode) in [("csa", None), ("ssa", Some("--server-side"))] {
        let manifest = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": ns},
            "spec": {"selector": {"matchLabels": {"app": name}}, "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "web", "image": "nginx", "ports": [{"containerPort": 8080}],
                    "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "timeoutSeconds": 1},
                    "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}}}]}}}});
        let extra: Vec<&str> = mode.into_iter().collect();
        apply_ok(&manifest, &extra);
        let first = deployments.get(name).await.unwrap();
        assert_eq!(first.metadata.generation, Some(1));
        for _ in 0..2 {
            apply_ok(&manifest, &extra);
        }
        let again = deployments.get(name).await.unwrap();
        assert_eq!(again.metadata.generation, Some(1), "{name}: the template did not change (no rollout)");
        let c = serde_json::to_value(&again.spec.template.spec.as_ref().unwrap().containers[0]).unwrap();
        assert_eq!(c["livenessProbe"]["timeoutSeconds"], 3, "{name}: the patch stays: {c}");
    }
}

/// A container for the layouts below: HTTP on `port`, liveness `timeoutSeconds: 1` (raised),
/// `initialDelaySeconds: 45` when `delay` (moved into the startup probe probegate adds), a startup
/// probe of its own when `own_startup`.
fn serving(name: &str, port: u16, delay: bool, own_startup: bool) -> Value {
    let mut c = json!({"name": name, "image": "nginx", "ports": [{"containerPort": port}],
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": port}, "timeoutSeconds": 1},
        "readinessProbe": {"httpGet": {"path": "/ready", "port": port}}});
    if delay {
        c["livenessProbe"]["initialDelaySeconds"] = json!(45);
    }
    if own_startup {
        c["startupProbe"] = json!({"httpGet": {"path": "/started", "port": port}, "failureThreshold": 30});
    }
    c
}

/// s27 (srv26's shape): the delay moved in one container while another has its own startup probe.
/// Client-side, probegate took every startup probe of the stored Pod for its own, its patch of the
/// object without them gave another container a startup probe it never had, and nothing was
/// restored: the API server refused the re-apply (`pod updates may not change fields`). Also in a
/// native sidecar, and across three containers (tests/reapply_s27.rs has the whole family).
#[tokio::test]
async fn re_applying_a_pod_whose_other_container_has_its_own_startup_probe_succeeds() {
    let ns = harness::namespace("reapply-s27").await;
    let pg = Probegate::start(&[]);
    let _hooks = Webhooks::register_with(&pg, &ns, pod_update_options()).await;
    let pods: Api<Pod> = Api::namespaced(harness::client().await, &ns);
    let mut sidecar = serving("proxy", 9901, false, true);
    sidecar["restartPolicy"] = json!("Always");
    let layouts = [
        ("two", vec![serving("a", 8080, true, false), serving("b", 8081, false, true)], vec![]),
        (
            "three",
            vec![
                serving("a", 8080, false, true),
                serving("b", 8081, true, false),
                serving("c", 8082, false, false),
            ],
            vec![],
        ),
        ("sidecar", vec![serving("app", 8080, true, false)], vec![sidecar]),
    ];
    for (layout, containers, init) in layouts {
        for (mode, extra) in [("csa", vec![]), ("ssa", vec!["--server-side"])] {
            let name = format!("{layout}-{mode}");
            let mut manifest = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
                "spec": {"containers": containers}});
            if !init.is_empty() {
                manifest["spec"]["initContainers"] = json!(init);
            }
            apply_ok(&manifest, &extra);
            let first = pods.get(&name).await.unwrap();
            let spec = |p: &Pod| serde_json::to_value(p.spec.as_ref().unwrap()).unwrap();
            let moved = spec(&first)["containers"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|c| {
                    c["livenessProbe"].get("initialDelaySeconds").is_none()
                        && c["startupProbe"]["httpGet"]["path"] == "/healthz"
                })
                .count();
            assert!(moved >= 1, "{name}: probegate moved a delay at CREATE: {}", spec(&first));
            for _ in 0..2 {
                apply_ok(&manifest, &extra);
            }
            let again = pods.get(&name).await.unwrap();
            assert_eq!(spec(&again), spec(&first), "{name}: the Pod stays as probegate made it");
        }
    }
}

/// The same layouts in a Deployment's template (`templates.mutate`): client-side, the delay came
/// back beside probegate's startup probe (kept), which then moved nothing: the template changed, a
/// new generation (a rollout), although docs/reapply.md promises none. One container is enough.
#[tokio::test]
async fn re_applying_a_deployment_with_a_moved_delay_keeps_the_generation() {
    let ns = harness::namespace("reapply-s27-deploy").await;
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.yaml");
    std::fs::write(
        &policy,
        "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\ntemplates:\n  mutate: true\n",
    )
    .unwrap();
    let pg = Probegate::start(&["--policy", policy.to_str().unwrap()]);
    let options = WebhookOptions {
        mutating: vec![
            rule(&["CREATE"], "", &["pods"]),
            rule(&["CREATE", "UPDATE"], "apps", &["deployments"]),
        ],
        ..Default::default()
    };
    let _hooks = Webhooks::register_with(&pg, &ns, options).await;
    let deployments: Api<Deployment> = Api::namespaced(harness::client().await, &ns);
    let layouts = [
        ("one", vec![serving("a", 8080, true, false)]),
        ("two", vec![serving("a", 8080, true, false), serving("b", 8081, false, true)]),
    ];
    for (layout, containers) in layouts {
        for (mode, extra) in [("csa", vec![]), ("ssa", vec!["--server-side"])] {
            let name = format!("{layout}-{mode}");
            let manifest = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": ns},
                "spec": {"selector": {"matchLabels": {"app": name}}, "template": {"metadata": {"labels": {"app": name}},
                    "spec": {"containers": containers}}}});
            apply_ok(&manifest, &extra);
            let first = deployments.get(&name).await.unwrap();
            assert_eq!(first.metadata.generation, Some(1));
            for _ in 0..2 {
                apply_ok(&manifest, &extra);
            }
            let again = deployments.get(&name).await.unwrap();
            let template = |d: &Deployment| serde_json::to_value(&d.spec.template).unwrap();
            let delays = |d: &Deployment| -> Vec<Value> {
                let t = template(d);
                t["spec"]["containers"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c["livenessProbe"]["initialDelaySeconds"].clone())
                    .collect()
            };
            assert_eq!(
                again.metadata.generation,
                Some(1),
                "{name}: no new generation (no rollout); liveness delays {:?}, stored {:?}",
                delays(&again),
                delays(&first)
            );
            assert_eq!(template(&again), template(&first), "{name}: the template stays as probegate made it");
        }
    }
}
