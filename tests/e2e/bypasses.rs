//! The deny rule's bypasses, closed, through a real API server: who creates an owned object comes
//! from the API server's authentication (impersonated here with `kubectl --as`), and an exempt
//! container needs the mesh proxy's image, not only its name.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;
use serde_json::{Value, json};

use crate::harness::{self, Probegate, Webhooks};

const REPLICASET_CONTROLLER: &str = "system:serviceaccount:kube-system:replicaset-controller";

fn coupled() -> Value {
    json!({"exec": {"command": ["pg_isready", "-h", "db.prod.svc"]}})
}

/// A bare Pod whose container `web` runs a coupled liveness probe, with an ownerReference to a
/// ReplicaSet that does not exist (written by hand: the API server does not check it).
fn forged_owner_pod(ns: &str, name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "ownerReferences": [{"apiVersion": "apps/v1",
            "kind": "ReplicaSet", "name": "web-6d4f", "uid": "0b3d6f2e-1c1e-4f43-9a57-3a1d5a9c2f10",
            "controller": true}]},
        "spec": {"containers": [{"name": "web", "image": "registry.example.com/web:3",
            "livenessProbe": coupled()}]}
    })
}

/// A Pod with a healthy app container and a container named `istio-proxy` running `image`, whose
/// liveness probe reaches a database.
fn proxy_named_pod(ns: &str, name: &str, image: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"containers": [
            {"name": "app", "image": "registry.example.com/app:1", "ports": [{"containerPort": 8080}],
             "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}, "timeoutSeconds": 2}},
            {"name": "istio-proxy", "image": image, "livenessProbe": coupled()}]}
    })
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `kubectl create -f -` of `manifest` as `user` (impersonated by the admin).
fn create_as(user: &str, manifest: &Value) -> std::process::Output {
    let kubeconfig = &harness::cluster().kubeconfig;
    harness::kubectl_with(
        kubeconfig,
        &["create", "-f", "-", &format!("--as={user}")],
        Some(&manifest.to_string()),
    )
}

#[tokio::test]
async fn a_forged_owner_is_denied_and_the_replicaset_controller_is_trusted() {
    let ns = harness::namespace("owner").await;
    let pg = Probegate::start(&[]);
    let _hooks = Webhooks::register(&pg, &ns).await;
    // An ordinary user who may create Pods here. (A Role of its own: the aggregated ClusterRole
    // `edit` gets its rules from the controller manager, which does not run here.)
    for args in [
        vec!["create", "role", "pod-creator", "-n", &ns, "--verb=create,get", "--resource=pods"],
        vec!["create", "rolebinding", "alice-pods", "-n", &ns, "--role=pod-creator", "--user=alice"],
    ] {
        let out = harness::kubectl(&args);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let pods: Api<Pod> = Api::namespaced(harness::client().await, &ns);

    // The forged owner does not turn alice's denial into a warning; the message says why.
    let out = create_as("alice", &forged_owner_pod(&ns, "forged"));
    assert!(!out.status.success(), "a forged owner is denied");
    let err = stderr(&out);
    assert!(err.contains(&format!("probegate denied Pod {ns}/forged")), "{err}");
    assert!(err.contains("db.prod.svc") && err.contains("(liveness-dependency)"), "{err}");
    assert!(
        err.contains("ReplicaSet web-6d4f is named as its controller, but alice is not a trusted controller"),
        "{err}"
    );
    assert!(pods.get_opt("forged").await.unwrap().is_none(), "nothing is stored");

    // The same Pod created as the ReplicaSet controller: admitted, with a warning naming it.
    let out = create_as(REPLICASET_CONTROLLER, &forged_owner_pod(&ns, "made-by-rs"));
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    // The whole warning is over the 255 characters a warning gets (s27, src/admission/fit.rs): it
    // keeps the trusted controller (its service account's name), the rule, the host and the
    // advice, and drops the owner and the effect, which the audit annotation keeps (below).
    let warning = err.lines().find(|l| l.starts_with("Warning: probegate: not denied")).unwrap_or_default();
    assert_eq!(
        warning,
        "Warning: probegate: not denied (trusted controller replicaset-controller creates it): container web: \
         livenessProbe `pg_isready -h db.prod.svc` reaches db.prod.svc (database, via pg_isready); move that check \
         to readinessProbe (liveness-dependency)",
        "{err}"
    );
    assert!(warning.trim_start_matches("Warning: ").chars().count() <= 255, "{warning}");
    assert!(pods.get_opt("made-by-rs").await.unwrap().is_some());
    // The audit log records the identity that made the difference, and the whole warning.
    let event = harness::eventually(Duration::from_secs(10), "the audit event of made-by-rs", || async {
        harness::audit_events("pods", &ns, "made-by-rs").into_iter().find(|e| {
            e["annotations"].as_object().is_some_and(|a| a.keys().any(|k| k.ends_with("/trusted-controller")))
        })
    })
    .await;
    // (The admin impersonated the controller: the audit event names both.)
    assert_eq!(event["impersonatedUser"]["username"], REPLICASET_CONTROLLER, "{event}");
    let annotations = event["annotations"].as_object().unwrap();
    let annotation = |suffix: &str| {
        annotations
            .iter()
            .find(|(k, _)| k.ends_with(suffix))
            .and_then(|(_, v)| v.as_str())
            .unwrap_or_default()
    };
    assert_eq!(annotation("/trusted-controller"), REPLICASET_CONTROLLER, "{event}");
    assert!(
        annotation("/full-warnings").contains(&format!(
            "not denied (ReplicaSet web-6d4f owns it, trusted controller {REPLICASET_CONTROLLER} creates it)"
        )),
        "{event}"
    );
}

#[tokio::test]
async fn a_container_named_like_the_proxy_is_checked_and_the_real_proxy_is_exempt_and_reported() {
    let ns = harness::namespace("exempt").await;
    let pg = Probegate::start(&[]);
    let _hooks = Webhooks::register(&pg, &ns).await;
    // An app container that only takes the name istio-proxy: checked, and denied for its probe.
    let out = harness::kubectl_apply(
        &proxy_named_pod(&ns, "impostor", "registry.example.com/worker:2").to_string(),
        &[],
    );
    assert!(!out.status.success(), "an app container named istio-proxy is checked");
    let err = stderr(&out);
    assert!(err.contains("container istio-proxy:") && err.contains("(liveness-dependency)"), "{err}");

    // Istio's proxy image: exempt (admitted), and reported in the audit annotation.
    let image = "docker.io/istio/proxyv2:1.24.0";
    let out = harness::kubectl_apply(&proxy_named_pod(&ns, "meshed", image).to_string(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let pods: Api<Pod> = Api::namespaced(harness::client().await, &ns);
    let stored = pods.get("meshed").await.unwrap();
    let proxy = &stored.spec.unwrap().containers[1];
    // Not patched either (its liveness timeout would have been raised to 3 s).
    assert_eq!(proxy.liveness_probe.as_ref().unwrap().timeout_seconds, Some(1), "the proxy is not patched");
    let reported =
        harness::eventually(Duration::from_secs(10), "the exempt-containers audit annotation", || async {
            harness::audit_events("pods", &ns, "meshed").into_iter().find_map(|e| {
                let annotations = e["annotations"].as_object()?.clone();
                annotations.into_iter().find(|(k, _)| k.ends_with("/exempt-containers")).map(|(_, v)| v)
            })
        })
        .await;
    let list: Value = serde_json::from_str(reported.as_str().unwrap()).unwrap();
    assert_eq!(list, json!([{"container": "istio-proxy", "image": image}]));
}
