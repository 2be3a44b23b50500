//! probegate behind a real API server: what `kubectl` and API clients see, and what is stored.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, PostParams};
use serde_json::{Value, json};

use crate::harness::{self, Probegate, Webhooks};

/// A Pod manifest (YAML accepted by kubectl: JSON is YAML) in `ns`.
fn pod(ns: &str, name: &str, liveness: Value) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"containers": [{"name": "web", "image": "nginx:1.27",
            "ports": [{"containerPort": 8080}],
            "livenessProbe": liveness,
            "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}}}]}
    })
}

fn coupled() -> Value {
    json!({"exec": {"command": ["sh", "-c", "pg_isready -h db.default.svc -p 5432"]}})
}

fn healthy(timeout: i32) -> Value {
    json!({"httpGet": {"path": "/healthz", "port": 8080}, "timeoutSeconds": timeout})
}

fn deployment(ns: &str, name: &str, liveness: Value) -> Value {
    let template = pod(ns, name, liveness);
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": template["spec"]}}
    })
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[tokio::test]
async fn kubectl_shows_the_denial_and_nothing_is_stored() {
    let ns = harness::namespace("deny").await;
    let pg = Probegate::start(&[]);
    let _hooks = Webhooks::register(&pg, &ns).await;
    let out = harness::kubectl_apply(&pod(&ns, "coupled", coupled()).to_string(), &[]);
    assert!(!out.status.success(), "a coupled liveness probe is refused");
    let err = stderr(&out);
    assert!(err.contains("denied the request"), "{err}");
    assert!(err.contains(&format!("probegate denied Pod {ns}/coupled")), "{err}");
    assert!(err.contains("db.default.svc") && err.contains("(liveness-dependency)"), "{err}");
    let pods: Api<Pod> = Api::namespaced(harness::client().await, &ns);
    assert!(pods.get_opt("coupled").await.unwrap().is_none(), "a denied Pod is not stored");
}

#[tokio::test]
async fn kubectl_shows_warnings_and_the_stored_pod_carries_the_patches() {
    let ns = harness::namespace("patch").await;
    let pg = Probegate::start(&[]);
    let _hooks = Webhooks::register(&pg, &ns).await;
    // Liveness = readiness: a warning; timeoutSeconds 1: raised; no startup probe: added.
    let mut manifest = pod(&ns, "web", healthy(1));
    manifest["spec"]["containers"][0]["readinessProbe"] = healthy(1);
    let out = harness::kubectl_apply(&manifest.to_string(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("Warning:") && err.contains("liveness-matches-readiness"),
        "kubectl shows the warning: {err}"
    );
    let pods: Api<Pod> = Api::namespaced(harness::client().await, &ns);
    let stored = pods.get("web").await.unwrap();
    let c = &stored.spec.unwrap().containers[0];
    assert_eq!(c.liveness_probe.as_ref().unwrap().timeout_seconds, Some(3));
    assert_eq!(c.readiness_probe.as_ref().unwrap().timeout_seconds, Some(2));
    assert!(c.startup_probe.is_some(), "a startup probe was added");
    let sleep = c.lifecycle.as_ref().and_then(|l| l.pre_stop.as_ref()).and_then(|h| h.sleep.as_ref());
    assert_eq!(sleep.map(|s| s.seconds), Some(5), "a native preStop sleep was added");
}

#[tokio::test]
async fn server_side_dry_run_shows_the_patch_and_stores_nothing() {
    let ns = harness::namespace("dryrun").await;
    let pg = Probegate::start(&[]);
    let _hooks = Webhooks::register(&pg, &ns).await;
    let out =
        harness::kubectl_apply(&pod(&ns, "web", healthy(1)).to_string(), &["--dry-run=server", "-o", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(shown["spec"]["containers"][0]["livenessProbe"]["timeoutSeconds"], 3, "{shown}");
    let pods: Api<Pod> = Api::namespaced(harness::client().await, &ns);
    assert!(pods.get_opt("web").await.unwrap().is_none());
    // A dry-run of a coupled Pod is refused like a real one.
    let out = harness::kubectl_apply(&pod(&ns, "coupled", coupled()).to_string(), &["--dry-run=server"]);
    assert!(!out.status.success() && stderr(&out).contains("liveness-dependency"), "{}", stderr(&out));
}

#[tokio::test]
async fn generate_name_pods_are_patched_and_denied() {
    let ns = harness::namespace("genname").await;
    let pg = Probegate::start(&[]);
    let _hooks = Webhooks::register(&pg, &ns).await;
    let pods: Api<Pod> = Api::namespaced(harness::client().await, &ns);
    let mut p = pod(&ns, "x", healthy(1));
    p["metadata"] = json!({"generateName": "worker-"});
    let created = pods.create(&PostParams::default(), &serde_json::from_value(p).unwrap()).await.unwrap();
    assert!(created.metadata.name.unwrap().starts_with("worker-"));
    assert_eq!(created.spec.unwrap().containers[0].liveness_probe.as_ref().unwrap().timeout_seconds, Some(3));
    let mut p = pod(&ns, "x", coupled());
    p["metadata"] = json!({"generateName": "worker-"});
    let err = pods.create(&PostParams::default(), &serde_json::from_value(p).unwrap()).await.unwrap_err();
    let kube::Error::Api(status) = err else { panic!("an API error: {err}") };
    assert_eq!(status.code, 403, "{status:?}");
    assert!(status.message.contains("liveness-dependency"), "{}", status.message);
}

#[tokio::test]
async fn a_native_sidecar_is_checked_and_patched() {
    let ns = harness::namespace("sidecar").await;
    let pg = Probegate::start(&[]);
    let _hooks = Webhooks::register(&pg, &ns).await;
    let pods: Api<Pod> = Api::namespaced(harness::client().await, &ns);
    let with_sidecar = |name: &str, liveness: Value| -> Pod {
        let mut p = pod(&ns, name, healthy(3));
        p["spec"]["initContainers"] = json!([{"name": "proxy", "image": "envoy", "restartPolicy": "Always",
            "livenessProbe": liveness}]);
        serde_json::from_value(p).unwrap()
    };
    let err = pods.create(&PostParams::default(), &with_sidecar("coupled", coupled())).await.unwrap_err();
    assert!(err.to_string().contains("liveness-dependency") && err.to_string().contains("proxy"), "{err}");
    let created = pods.create(&PostParams::default(), &with_sidecar("ok", healthy(1))).await.unwrap();
    let sidecar = &created.spec.unwrap().init_containers.unwrap()[0];
    assert_eq!(
        sidecar.liveness_probe.as_ref().unwrap().timeout_seconds,
        Some(3),
        "the sidecar's probe is patched"
    );
}

#[tokio::test]
async fn deployments_and_cronjobs_are_denied_on_create_and_update_denies_only_new_violations() {
    use k8s_openapi::api::batch::v1::CronJob;
    let ns = harness::namespace("workloads").await;
    let pg = Probegate::start(&[]);
    let hooks = Webhooks::register(&pg, &ns).await;
    let client = harness::client().await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &ns);
    let pp = PostParams::default();
    let bad: Deployment = serde_json::from_value(deployment(&ns, "bad", coupled())).unwrap();
    let err = deployments.create(&pp, &bad).await.unwrap_err();
    assert!(err.to_string().contains(&format!("probegate denied Deployment {ns}/bad")), "{err}");

    let cron: CronJob = serde_json::from_value(json!({
        "metadata": {"name": "nightly"},
        "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"template": {"spec": {
            "restartPolicy": "OnFailure",
            "containers": [{"name": "job", "image": "busybox", "livenessProbe": coupled()}]}}}}}
    }))
    .unwrap();
    let err = Api::<CronJob>::namespaced(client.clone(), &ns).create(&pp, &cron).await.unwrap_err();
    assert!(err.to_string().contains("liveness-dependency"), "{err}");

    // A good Deployment is admitted; its template is not patched (templates.mutate: false).
    let good: Deployment = serde_json::from_value(deployment(&ns, "good", healthy(1))).unwrap();
    let stored = deployments.create(&pp, &good).await.unwrap();
    let probe = stored.spec.template.spec.as_ref().unwrap().containers[0].liveness_probe.clone();
    assert_eq!(probe.unwrap().timeout_seconds, Some(1));
    // UPDATE that brings a new violation: denied.
    let mut changed = stored.clone();
    changed.spec.template.spec.as_mut().unwrap().containers[0].liveness_probe =
        Some(serde_json::from_value(coupled()).unwrap());
    let err = deployments.replace("good", &pp, &changed).await.unwrap_err();
    assert!(err.to_string().contains("liveness-dependency"), "{err}");

    // A violation admitted while probegate was not looking (no webhook) stays: an UPDATE that does
    // not add one (scaling, a label) is admitted.
    drop(hooks);
    let legacy: Deployment = serde_json::from_value(deployment(&ns, "legacy", coupled())).unwrap();
    harness::eventually(std::time::Duration::from_secs(10), "the webhook gone", || async {
        deployments.create(&pp, &legacy).await.ok()
    })
    .await;
    let _hooks = Webhooks::register(&pg, &ns).await;
    let mut scaled = deployments.get("legacy").await.unwrap();
    scaled.spec.replicas = Some(5);
    deployments.replace("legacy", &pp, &scaled).await.expect("an UPDATE without a new violation is admitted");
}
