//! The harness itself: the API server answers, namespaces are fresh, probegate is called.

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, PostParams};

use crate::harness::{self, Probegate, Webhooks};

#[tokio::test]
async fn a_registered_probegate_patches_a_pod_created_through_the_api() {
    let ns = harness::namespace("smoke").await;
    let pg = Probegate::start(&[]);
    let _hooks = Webhooks::register(&pg, &ns).await;
    let pods: Api<Pod> = Api::namespaced(harness::client().await, &ns);
    let pod: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web"},
        "spec": {"containers": [{"name": "web", "image": "nginx",
            "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "timeoutSeconds": 1}}]}
    }))
    .unwrap();
    let created = pods.create(&PostParams::default(), &pod).await.expect("created");
    let probe = created.spec.unwrap().containers[0].liveness_probe.clone().unwrap();
    assert!(
        probe.timeout_seconds.unwrap() > 1,
        "the stored Pod carries probegate's raised timeout: {probe:?}"
    );
}
