//! Workloads the engine benchmarks, the flood benchmark and `examples/evalcount.rs` share
//! (`#[path]`-included by each): a corpus document as the Pod it runs, and issue 9's costliest
//! review.

#![allow(dead_code)] // Each includer uses its own part.

use serde_json::{Value, json};

/// The Pod a corpus document runs: a Pod as it is, a workload's pod template (a CronJob's job
/// template's) with the template's metadata.
pub fn as_pod(doc: &Value) -> Value {
    let kind = doc["kind"].as_str().unwrap_or("Pod");
    let ptr = match kind {
        "Pod" => return doc.clone(),
        "CronJob" => "/spec/jobTemplate/spec/template",
        _ => "/spec/template",
    };
    let t = doc.pointer(ptr).unwrap();
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": t["metadata"].clone(), "spec": t["spec"].clone()})
}

/// Issue 9's worst case: 14 containers, each with a liveness
/// `sh -c 'V="<1000 words>"; f $V; f $V; ...'` (160 calls).
pub fn worst_case_containers() -> Vec<Value> {
    let words = vec!["w"; 1000].join(" ");
    let script = format!("V=\"{words}\"; {}", "f $V; ".repeat(160));
    (0..14)
        .map(|i| {
            json!({"name": format!("c{i}"), "image": "x",
            "livenessProbe": {"exec": {"command": ["sh", "-c", script]}}})
        })
        .collect()
}

/// The AdmissionReview of a Pod `shop/p` with [`worst_case_containers`], about 37 KiB.
pub fn worst_case_body() -> Vec<u8> {
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop"},
        "spec": {"containers": worst_case_containers()}});
    serde_json::to_vec(&json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": "u1", "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "name": "p", "namespace": "shop", "operation": "CREATE",
            "userInfo": {"username": "u"}, "object": pod}}))
    .unwrap()
}
