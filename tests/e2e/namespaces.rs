//! `namespaceSelector` overrides through the real Namespace watch: relabelling a namespace changes
//! probegate's decision for the next request, without a restart, with no more RBAC than
//! deploy/base's ClusterRole grants.

use std::time::Duration;

use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::harness::{self, Probegate, Webhooks};

/// The policy: enforce, and under an override selected by the label `tier: legacy` the
/// liveness-dependency rule only warns.
const POLICY: &str = "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\nmode: enforce\noverrides:\n  \
- name: lenient\n    namespaceSelector: {matchLabels: {tier: legacy}}\n    rules:\n      \
liveness-dependency: {action: warn}\n";

/// How long a label change may take to reach probegate's watch cache.
const PROPAGATION: Duration = Duration::from_secs(10);

fn coupled_pod(name: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "app", "image": "example/app:1",
            "ports": [{"containerPort": 8080}],
            "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}},
            "livenessProbe": {"exec": {"command": ["sh", "-c", "pg_isready -h db.default.svc -p 5432"]}}}]}
    }))
    .unwrap()
}

/// deploy/base/clusterrole.yaml (renamed `e2e-NS`), bound to ServiceAccount `ns/probegate`.
async fn grant_base_clusterrole(ns: &str) {
    use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/base/clusterrole.yaml"))
        .unwrap();
    let mut role = probegate::manifest::parse_documents(&text).unwrap().remove(0);
    let name = format!("e2e-{ns}");
    role["metadata"] = json!({"name": name});
    let role: ClusterRole = serde_json::from_value(role).unwrap();
    let client = harness::client().await;
    let pp = PostParams::default();
    Api::<ClusterRole>::all(client.clone()).create(&pp, &role).await.unwrap();
    let binding: ClusterRoleBinding = serde_json::from_value(json!({"metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": "probegate", "namespace": ns}]}))
    .unwrap();
    Api::<ClusterRoleBinding>::all(client).create(&pp, &binding).await.unwrap();
}

/// Sets (`Some`) or removes (`None`) the `tier` label of namespace `ns`.
async fn label(ns: &str, tier: Option<&str>) {
    let namespaces: Api<Namespace> = Api::all(harness::client().await);
    let patch = json!({"metadata": {"labels": {"tier": tier}}});
    namespaces.patch(ns, &PatchParams::default(), &Patch::Merge(&patch)).await.expect("relabel");
}

/// Dry-run creates of a coupled Pod until the answer is `denied` (true) or admitted (false).
async fn until_decision(pods: &Api<Pod>, denied: bool, what: &str) -> Result<Pod, kube::Error> {
    let dry = PostParams { dry_run: true, ..Default::default() };
    harness::eventually(PROPAGATION, what, || async {
        let r = pods.create(&dry, &coupled_pod("probe")).await;
        (r.is_err() == denied).then_some(r)
    })
    .await
}

#[tokio::test]
async fn relabelling_a_namespace_changes_the_decision_without_a_restart() {
    let ns = harness::namespace("labels").await;
    let policy = harness::cluster().dir.join(format!("policy-{ns}.yaml"));
    std::fs::write(&policy, POLICY).unwrap();
    // As ServiceAccount probegate with deploy/base's ClusterRole and nothing else (list and watch
    // on namespaces: what namespaces.rs says the watch needs).
    grant_base_clusterrole(&ns).await;
    let kubeconfig = harness::cluster().service_account_kubeconfig(&ns, "probegate").await;
    let pg = Probegate::start_with_kubeconfig(&["--policy", policy.to_str().unwrap()], &kubeconfig);
    let _hooks = Webhooks::register(&pg, &ns).await;
    let pods: Api<Pod> = Api::namespaced(harness::client().await, &ns);

    // No label: enforced, denied.
    let err = pods.create(&PostParams::default(), &coupled_pod("before")).await.expect_err("denied");
    assert!(err.to_string().contains("(liveness-dependency)"), "{err}");

    // Labelled tier=legacy: the override applies to the next requests (a warning, admitted).
    label(&ns, Some("legacy")).await;
    until_decision(&pods, false, "admitted once the namespace is labelled").await.unwrap();
    pods.create(&PostParams::default(), &coupled_pod("during")).await.expect("admitted under the override");
    let decided =
        harness::eventually(Duration::from_secs(5), "a decision log line for Pod during", || async {
            pg.log_lines()
                .into_iter()
                .find(|l| l["name"] == "during" && l["endpoint"] == "validate" && l["dry_run"] == false)
        })
        .await;
    assert_eq!(decided["overrides"], "lenient", "{decided}");
    assert_eq!(decided["denied"], false, "{decided}");

    // Another label value, then none: enforced again.
    label(&ns, Some("current")).await;
    until_decision(&pods, true, "denied once the label no longer matches").await.unwrap_err();
    label(&ns, Some("legacy")).await;
    until_decision(&pods, false, "admitted again").await.unwrap();
    label(&ns, None).await;
    let err = until_decision(&pods, true, "denied once the label is removed").await.unwrap_err();
    assert!(err.to_string().contains("(liveness-dependency)"), "{err}");
}
