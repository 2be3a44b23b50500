//! What probegate records about the requests a real API server sends it: dry runs are told apart.

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, PostParams};
use serde_json::json;

use crate::harness::{self, Probegate, Webhooks};

#[tokio::test]
async fn dry_run_requests_are_logged_and_counted_as_dry_runs() {
    let ns = harness::namespace("dryrun-log").await;
    let pg = Probegate::start(&[]);
    let _hooks = Webhooks::register(&pg, &ns).await;
    let pods: Api<Pod> = Api::namespaced(harness::client().await, &ns);
    let pod = |name: &str| -> Pod {
        serde_json::from_value(json!({"metadata": {"name": name}, "spec": {"containers": [{"name": "web",
            "image": "nginx", "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080}}}]}}))
        .unwrap()
    };
    pods.create(&PostParams { dry_run: true, ..Default::default() }, &pod("rehearsal")).await.unwrap();
    pods.create(&PostParams::default(), &pod("real")).await.unwrap();
    let lines = harness::eventually(std::time::Duration::from_secs(5), "both decisions logged", || async {
        let lines: Vec<_> = pg
            .log_lines()
            .into_iter()
            .filter(|l| l["message"] == "admission decision" && l["endpoint"] == "mutate")
            .collect();
        let named = |n: &str| lines.iter().find(|l| l["name"] == n).cloned();
        Some((named("rehearsal")?, named("real")?))
    })
    .await;
    assert_eq!(lines.0["dry_run"], true, "{}", lines.0);
    assert_eq!(lines.1["dry_run"], false, "{}", lines.1);
    let metrics = pg.metrics().await;
    let count = |dry: &str| -> f64 {
        metrics
            .lines()
            .filter(|l| {
                l.starts_with("probegate_admission_requests_total{endpoint=\"mutate\"")
                    && l.contains("result=\"patched\"")
                    && l.contains(&format!("dry_run=\"{dry}\""))
            })
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    };
    assert_eq!(count("false"), 1.0, "one real patched Pod: {metrics}");
    assert!(count("true") >= 1.0, "the dry run is counted as one: {metrics}");
}
