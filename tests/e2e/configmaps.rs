//! `--resolve-configmaps` against real ConfigMaps and real RBAC: probegate authenticates as a
//! ServiceAccount (TokenRequest token) that may `get` ConfigMaps in one namespace and not in another.

use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::api::{Api, PostParams};
use serde_json::{Value, json};

use crate::harness::{self, Probegate, WebhookOptions, Webhooks};

/// A Pod whose liveness probe runs /health/check.sh from ConfigMap `health`.
fn scripted_pod(name: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {
            "containers": [{"name": "app", "image": "redis",
                "livenessProbe": {"exec": {"command": ["sh", "-c", "/health/check.sh"]}},
                "volumeMounts": [{"name": "health", "mountPath": "/health"}]}],
            "volumes": [{"name": "health", "configMap": {"name": "health", "defaultMode": 493}}]
        }
    }))
    .unwrap()
}

fn health_configmap() -> ConfigMap {
    serde_json::from_value(json!({
        "metadata": {"name": "health"},
        "data": {"check.sh": "#!/bin/sh\nredis-cli -h redis-master.shop.svc ping\n"}
    }))
    .unwrap()
}

/// The `unresolved-scripts` audit annotation of Pod `ns/name`, from the API server's audit log.
async fn unresolved_note(ns: &str, name: &str) -> Value {
    harness::eventually(Duration::from_secs(5), "the Pod's audit event", || async {
        harness::audit_events("pods", ns, name).iter().find_map(|e| {
            let notes = e["annotations"].as_object()?;
            let (_, v) = notes.iter().find(|(k, _)| k.ends_with("/unresolved-scripts"))?;
            serde_json::from_str(v.as_str()?).ok()
        })
    })
    .await
}

/// Grants ServiceAccount `probegate` (of `sa_ns`) `get` on ConfigMaps in `ns`.
async fn grant_get_configmaps(ns: &str, sa_ns: &str) {
    let client = harness::client().await;
    let role: Role = serde_json::from_value(json!({
        "metadata": {"name": "probegate-configmaps"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]
    }))
    .unwrap();
    Api::<Role>::namespaced(client.clone(), ns).create(&PostParams::default(), &role).await.unwrap();
    let binding: RoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "probegate-configmaps"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "probegate-configmaps"},
        "subjects": [{"kind": "ServiceAccount", "name": "probegate", "namespace": sa_ns}]
    }))
    .unwrap();
    Api::<RoleBinding>::namespaced(client, ns).create(&PostParams::default(), &binding).await.unwrap();
}

#[tokio::test]
async fn configmaps_are_read_fresh_with_real_rbac_and_unresolved_scripts_say_why() {
    let allowed_ns = harness::namespace("cm-allowed").await;
    let forbidden_ns = harness::namespace("cm-forbidden").await;
    grant_get_configmaps(&allowed_ns, &allowed_ns).await;
    let kubeconfig = harness::cluster().service_account_kubeconfig(&allowed_ns, "probegate").await;
    let pg = Probegate::start_with_kubeconfig(&["--resolve-configmaps", "--no-namespace-watch"], &kubeconfig);
    let _a = Webhooks::register(&pg, &allowed_ns).await;
    let _f = Webhooks::register(&pg, &forbidden_ns).await;
    let client = harness::client().await;
    let pp = PostParams::default();

    // Before its ConfigMap exists: admitted, the script unresolved because it does not exist.
    let pods: Api<Pod> = Api::namespaced(client.clone(), &allowed_ns);
    pods.create(&pp, &scripted_pod("early")).await.expect("admitted: the script cannot be read");
    let note = unresolved_note(&allowed_ns, "early").await;
    assert!(note[0]["reason"].as_str().unwrap().ends_with("health does not exist"), "{note}");

    // The ConfigMap is created, then at once a Pod: its script is read (no remembered "not found")
    // and reaches Redis.
    Api::<ConfigMap>::namespaced(client.clone(), &allowed_ns).create(&pp, &health_configmap()).await.unwrap();
    let err = pods.create(&pp, &scripted_pod("late")).await.expect_err("the script reaches Redis");
    assert!(err.to_string().contains("redis-master.shop.svc"), "{err}");

    // Where the ServiceAccount may not read ConfigMaps: admitted, and the note says so.
    Api::<ConfigMap>::namespaced(client.clone(), &forbidden_ns)
        .create(&pp, &health_configmap())
        .await
        .unwrap();
    let pods: Api<Pod> = Api::namespaced(client.clone(), &forbidden_ns);
    pods.create(&pp, &scripted_pod("blind")).await.expect("admitted: the script cannot be read");
    let note = unresolved_note(&forbidden_ns, "blind").await;
    assert!(note[0]["reason"].as_str().unwrap().contains("forbidden"), "{note}");

    // Only the ConfigMap the probe runs was read: never the kube-root-ca.crt that the
    // ServiceAccount admission plugin mounts into every Pod (the grant covers it: a read would
    // have shown up as found in the metrics).
    let metrics = pg.metrics().await;
    let lookups: Vec<&str> =
        metrics.lines().filter(|l| l.starts_with("probegate_configmap_lookups_total{")).collect();
    // Each Pod is reviewed at /mutate and at /validate, one lookup each: early not found twice,
    // late found twice, blind forbidden once and then remembered (cached) for FAILURE_TTL.
    let mut expected = vec![
        "probegate_configmap_lookups_total{result=\"cached\"} 1",
        "probegate_configmap_lookups_total{result=\"forbidden\"} 1",
        "probegate_configmap_lookups_total{result=\"found\"} 2",
        "probegate_configmap_lookups_total{result=\"not_found\"} 2",
    ];
    let mut seen = lookups.clone();
    seen.sort();
    expected.sort();
    assert_eq!(seen, expected, "{metrics}");
    let stored = Api::<Pod>::namespaced(client, &allowed_ns).get("early").await.unwrap();
    let volumes = serde_json::to_string(&stored.spec.unwrap().volumes).unwrap();
    assert!(volumes.contains("kube-root-ca.crt"), "the API server did mount it: {volumes}");
}

#[tokio::test]
async fn without_the_flag_the_note_says_configmaps_are_not_read() {
    let ns = harness::namespace("cm-off").await;
    let pg = Probegate::start(&["--no-namespace-watch"]);
    let _hooks = Webhooks::register_with(&pg, &ns, WebhookOptions::default()).await;
    let client = harness::client().await;
    Api::<ConfigMap>::namespaced(client.clone(), &ns)
        .create(&PostParams::default(), &health_configmap())
        .await
        .unwrap();
    Api::<Pod>::namespaced(client, &ns).create(&PostParams::default(), &scripted_pod("off")).await.unwrap();
    let note = unresolved_note(&ns, "off").await;
    assert!(note[0]["reason"].as_str().unwrap().contains("without --resolve-configmaps"), "{note}");
}
