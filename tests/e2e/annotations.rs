//! probegate's audit annotations as the API server records them: read back from its audit log
//! (level `Metadata`, where the API server writes each webhook's annotations as
//! `WEBHOOK-NAME/KEY`). `src/admission.rs` sets five keys: `violations` (audit mode) and
//! `skipped-rules` are read back here, `exempt-containers` and `trusted-controller` in
//! tests/e2e/bypasses.rs, `unresolved-scripts` in tests/e2e/configmaps.rs. Here too: the API
//! server's own `mutation.webhook.admission.k8s.io/*` record of whether probegate patched (probegate
//! adds no key of its own for that), and the annotations of a dry-run request.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, PostParams};
use serde_json::{Value, json};

use crate::harness::{self, Probegate, Webhooks};

const MUTATE: &str = "pods.mutate.probegate.dev";
const VALIDATE: &str = "workloads.validate.probegate.dev";

/// The annotations of the `create` of Pod `ns/name` in the audit log (the last such event,
/// `ResponseComplete`), once it is there.
async fn create_annotations(ns: &str, name: &str) -> serde_json::Map<String, Value> {
    harness::eventually(Duration::from_secs(5), &format!("the audit event of Pod {ns}/{name}"), || async {
        harness::audit_events("pods", ns, name)
            .into_iter()
            .rev()
            .find(|e| e["verb"] == "create" && e["stage"] == "ResponseComplete")
            .map(|e| e["annotations"].as_object().cloned().unwrap_or_default())
    })
    .await
}

/// The value of `webhook/key`, parsed as JSON when it is JSON.
fn note(annotations: &serde_json::Map<String, Value>, webhook: &str, key: &str) -> Option<Value> {
    let v = annotations.get(&format!("{webhook}/{key}"))?.as_str()?;
    Some(serde_json::from_str(v).unwrap_or_else(|_| Value::String(v.into())))
}

/// probegate's own keys (either webhook) among `annotations`.
fn probegate_keys(annotations: &serde_json::Map<String, Value>) -> Vec<String> {
    let mut keys: Vec<String> =
        annotations.keys().filter(|k| k.starts_with(MUTATE) || k.starts_with(VALIDATE)).cloned().collect();
    keys.sort();
    keys
}

/// Whether the API server recorded probegate's mutating webhook as having patched the request.
fn mutated(annotations: &serde_json::Map<String, Value>) -> Option<bool> {
    annotations.iter().filter(|(k, _)| k.starts_with("mutation.webhook.admission.k8s.io/")).find_map(
        |(_, v)| {
            let v: Value = serde_json::from_str(v.as_str()?).ok()?;
            (v["webhook"] == MUTATE).then(|| v["mutated"].as_bool()).flatten()
        },
    )
}

fn pod(name: &str, containers: Value, annotations: Value, owners: Value) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": name, "annotations": annotations, "ownerReferences": owners},
        "spec": {"containers": containers}
    }))
    .unwrap()
}

fn app(liveness: Value) -> Value {
    json!({"name": "app", "image": "example/app:1", "ports": [{"containerPort": 8080}],
        "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}}, "livenessProbe": liveness})
}

fn coupled() -> Value {
    json!({"exec": {"command": ["sh", "-c", "pg_isready -h db.default.svc -p 5432"]}})
}

fn healthy() -> Value {
    json!({"httpGet": {"path": "/live", "port": 8080}, "timeoutSeconds": 1})
}

#[tokio::test]
async fn every_audit_annotation_reaches_the_api_servers_audit_log() {
    let ns = harness::namespace("annot").await;
    let audited = harness::namespace("annot-audit").await;
    // The default policy, with the audit-mode namespace by name.
    let policy_file = harness::cluster().dir.join(format!("policy-{ns}.yaml"));
    let policy = format!(
        "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\nmode: enforce\noverrides:\n  \
         - name: audited\n    namespaces: [{audited}]\n    mode: audit\n"
    );
    std::fs::write(&policy_file, policy).unwrap();
    let pg = Probegate::start(&["--policy", policy_file.to_str().unwrap(), "--no-namespace-watch"]);
    let _hooks = Webhooks::register(&pg, &ns).await;
    let _audit_hooks = Webhooks::register(&pg, &audited).await;
    let client = harness::client().await;
    let pp = PostParams::default();
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);

    // Patched, no annotation of probegate's own: the API server records mutated=true.
    pods.create(&pp, &pod("patched", json!([app(healthy())]), json!({}), json!([]))).await.unwrap();
    let a = create_annotations(&ns, "patched").await;
    assert_eq!(mutated(&a), Some(true), "{a:?}");
    assert_eq!(probegate_keys(&a), Vec::<String>::new(), "{a:?}");

    // skipped-rules: the skip annotation lifts every patch (mutated=false) and is recorded.
    let skip = json!({"probegate.dev/skip": "probe-timeout,startup-probe,prestop-sleep"});
    pods.create(&pp, &pod("skipped", json!([app(healthy())]), skip, json!([]))).await.unwrap();
    let a = create_annotations(&ns, "skipped").await;
    assert_eq!(mutated(&a), Some(false), "{a:?}");
    let skipped = json!("probe-timeout,startup-probe,prestop-sleep"); // in the rule catalog's order
    assert_eq!(note(&a, MUTATE, "skipped-rules"), Some(skipped.clone()), "{a:?}");
    assert_eq!(note(&a, VALIDATE, "skipped-rules"), Some(skipped), "{a:?}");

    // violations (audit mode): admitted and unpatched; each endpoint records its findings.
    let audit_pods: Api<Pod> = Api::namespaced(client.clone(), &audited);
    let coupled_pod = || pod("coupled", json!([app(coupled())]), json!({}), json!([]));
    audit_pods.create(&pp, &coupled_pod()).await.expect("audit mode admits");
    let a = create_annotations(&audited, "coupled").await;
    assert_eq!(mutated(&a), Some(false), "audit mode does not patch: {a:?}");
    let v = note(&a, VALIDATE, "violations").expect("violations at /validate");
    assert!(
        v.as_array()
            .unwrap()
            .contains(&json!({"rule": "liveness-dependency", "container": "app", "action": "deny"})),
        "{v}"
    );
    let m = note(&a, MUTATE, "violations").expect("violations at /mutate");
    assert!(
        m.as_array().unwrap().iter().all(|x| x["action"] == "mutate") && !m.as_array().unwrap().is_empty(),
        "{m}"
    );

    // A dry run (kubectl apply --dry-run=server) is recorded with the same annotations.
    let dry = PostParams { dry_run: true, ..Default::default() };
    let mut p = coupled_pod();
    p.metadata.name = Some("coupled-dry".into());
    audit_pods.create(&dry, &p).await.expect("audit mode admits a dry run");
    let events = harness::eventually(Duration::from_secs(5), "the dry run's audit event", || async {
        let e = harness::audit_events("pods", &audited, "coupled-dry");
        e.into_iter().find(|e| e["stage"] == "ResponseComplete")
    })
    .await;
    assert!(events["requestURI"].as_str().unwrap().contains("dryRun=All"), "{events}");
    let a = events["annotations"].as_object().cloned().unwrap_or_default();
    assert_eq!(note(&a, VALIDATE, "violations"), Some(v), "{a:?}");
    assert_eq!(note(&a, MUTATE, "violations"), Some(m), "{a:?}");
    let stored = audit_pods.get_opt("coupled-dry").await.unwrap();
    assert!(stored.is_none(), "a dry run stores nothing");
}
