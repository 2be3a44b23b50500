//! Engine and in-process AdmissionReview benchmarks (divan). Run: `cargo bench --bench engine`.
//!
//! - `evaluate_corpus_pod`: the engine alone (`engine::evaluate`) on each corpus manifest as a Pod,
//!   PodSpec already parsed. Target: median at most 10 µs for a typical Pod.
//! - `review_round_trip`: body bytes → parse → engine → response bytes, for the captured Deployment
//!   and Pod AdmissionReviews, without HTTP or TLS.
//! - `worst_case_exec_review`: the costliest review of issue 9 (a 37 KiB Pod of 14 containers whose
//!   liveness scripts each set `V` to 1000 words and run `f $V` 160 times), at the default bounds.
//!   Target: median at most 20 ms (it took about 245 ms before the work-unit budget).
//! - `many_functions_script`: the break-it pass's costliest shape for the exit-status walk (s9,
//!   issue #9): 300 functions `fI() { pg_isready -h db || log down; }`, then `log`, then a call of
//!   each (13.6 KB, inline). It took 85 s (debug build) before the walk's facts were kept per tree.
//! - `cost_shape`, `cost_shape_x14`: the s12 cost pass's shapes (`workloads::cost_shape`: an `if`
//!   nested 300 deep, functions defined and called one by one, a function redefined and called
//!   again and again, 4,000 `$V`, here-documents read into a status, here-document ends the
//!   parser reads again), in one container and in 14. Target: median at most 20 ms each
//!   (docs/benchmarks.md, "Cost shapes").
//! - `evaluate_corpus_pod_warm`, `worst_case_exec_review_warm` (s25): as their cold rows, with a
//!   caller-owned `engine::ParseCache` that already saw the object (`engine::evaluate_cached`,
//!   `admission::review_cached`): the script parses are read from the cache, the rest is done again.
//! - `admission_sequence_cold`, `admission_sequence_warm` (s25): what the webhook sees on a rollout:
//!   a Deployment made of a corpus document's pod template, its ReplicaSet, then
//!   [`SEQUENCE_PODS`] Pods of it; cold: `engine::evaluate` each; warm: one new cache for the
//!   sequence (the first object parses, the others read its parses).

#[path = "support/workloads.rs"]
mod workloads;

use std::path::Path;

use probegate::admission::{self, Endpoint};
use probegate::engine::{self, NoConfigMaps, ParseCache, Workload, WorkloadKind};
use probegate::policy::Policy;
use serde_json::{Value, json};

fn main() {
    divan::main();
}

fn fixtures() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn corpus_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(fixtures().join("corpus"))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".yaml"))
        .collect();
    names.sort();
    names
}

fn corpus_workload(name: &str) -> Workload {
    let text = std::fs::read_to_string(fixtures().join("corpus").join(name)).unwrap();
    let doc = probegate::manifest::parse_documents(&text).unwrap().remove(0);
    Workload::from_value(WorkloadKind::Pod, &workloads::as_pod(&doc)).unwrap()
}

#[divan::bench(args = corpus_names())]
fn evaluate_corpus_pod(bencher: divan::Bencher, name: &str) {
    let policy = Policy::default();
    let workload = corpus_workload(name);
    bencher.bench(|| engine::evaluate(divan::black_box(&policy.rules), divan::black_box(&workload)));
}

#[divan::bench(args = corpus_names())]
fn evaluate_corpus_pod_warm(bencher: divan::Bencher, name: &str) {
    let policy = Policy::default();
    let workload = corpus_workload(name);
    let mut cache = ParseCache::new();
    engine::evaluate_cached(&policy.rules, &workload, &[], &NoConfigMaps, "", &mut cache);
    bencher.bench_local(|| {
        engine::evaluate_cached(
            divan::black_box(&policy.rules),
            divan::black_box(&workload),
            &[],
            &NoConfigMaps,
            "",
            &mut cache,
        )
    });
}

/// Pods in an admission sequence (after the Deployment and its ReplicaSet).
const SEQUENCE_PODS: usize = 10;

/// The exec-heavy corpus documents whose pod template the admission sequence rolls out.
const SEQUENCE_DOCS: &[&str] = &[
    "statefulset-bitnami-mysql-primary-mysqladmin-status-all-three-probes.yaml",
    "deployment-airflow-scheduler-liveness-jobs-check-reads-metadata-db.yaml",
];

/// A Deployment of `name`'s pod template, its ReplicaSet and [`SEQUENCE_PODS`] Pods of it.
fn admission_sequence(name: &str) -> Vec<Workload> {
    let text = std::fs::read_to_string(fixtures().join("corpus").join(name)).unwrap();
    let doc = probegate::manifest::parse_documents(&text).unwrap().remove(0);
    let template = doc.pointer("/spec/template").unwrap().clone();
    let selector = doc.pointer("/spec/selector").cloned().unwrap_or_else(|| json!({}));
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "app", "namespace": "shop", "uid": "d1"},
        "spec": {"replicas": SEQUENCE_PODS, "selector": selector, "template": template}});
    let mut replicaset = deployment.clone();
    replicaset["kind"] = json!("ReplicaSet");
    replicaset["metadata"] = json!({"name": "app-5d4f", "namespace": "shop", "uid": "r1",
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "app", "uid": "d1", "controller": true}]});
    let mut out = vec![
        Workload::from_value(WorkloadKind::Deployment, &deployment).unwrap(),
        Workload::from_value(WorkloadKind::ReplicaSet, &replicaset).unwrap(),
    ];
    for i in 0..SEQUENCE_PODS {
        let mut pod = workloads::as_pod(&deployment);
        pod["metadata"]["name"] = json!(format!("app-5d4f-{i}"));
        pod["metadata"]["namespace"] = json!("shop");
        pod["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "name": "app-5d4f", "uid": "r1", "controller": true}]);
        out.push(Workload::from_value(WorkloadKind::Pod, &pod).unwrap());
    }
    out
}

#[divan::bench(args = SEQUENCE_DOCS)]
fn admission_sequence_cold(bencher: divan::Bencher, name: &str) {
    let policy = Policy::default();
    let sequence = admission_sequence(name);
    bencher.bench(|| {
        for w in &sequence {
            divan::black_box(engine::evaluate(divan::black_box(&policy.rules), w));
        }
    });
}

#[divan::bench(args = SEQUENCE_DOCS)]
fn admission_sequence_warm(bencher: divan::Bencher, name: &str) {
    let policy = Policy::default();
    let sequence = admission_sequence(name);
    bencher.bench(|| {
        let mut cache = ParseCache::new();
        for w in &sequence {
            divan::black_box(engine::evaluate_cached(
                divan::black_box(&policy.rules),
                w,
                &[],
                &NoConfigMaps,
                "",
                &mut cache,
            ));
        }
    });
}

#[divan::bench(args = ["deployment-create.validating.json", "pod-create-liveness-readiness.mutating.json", "pod-create-by-replicaset-controller.mutating.json"])]
fn review_round_trip(bencher: divan::Bencher, file: &str) {
    let policy = Policy::default();
    let body = std::fs::read(fixtures().join("admission").join(file)).unwrap();
    let endpoint = if file.contains("mutating") { Endpoint::Mutate } else { Endpoint::Validate };
    bencher.bench(|| {
        let request = admission::parse_review(divan::black_box(&body)).unwrap();
        let decision = admission::review(&policy, None, endpoint, &request).unwrap();
        serde_json::to_vec(&decision.review).unwrap()
    });
}

/// The floor for the round trip: parse the body as JSON and answer `allowed: true`.
#[divan::bench(args = ["deployment-create.validating.json"])]
fn floor_parse_and_allow(bencher: divan::Bencher, file: &str) {
    let body = std::fs::read(fixtures().join("admission").join(file)).unwrap();
    bencher.bench(|| {
        let v: Value = serde_json::from_slice(divan::black_box(&body)).unwrap();
        let uid = v["request"]["uid"].clone();
        serde_json::to_vec(&json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": {"uid": uid, "allowed": true}})).unwrap()
    });
}

#[divan::bench]
fn worst_case_exec_review(bencher: divan::Bencher) {
    let policy = Policy::default();
    let body = workloads::worst_case_body();
    assert!((30_000..45_000).contains(&body.len()), "{} bytes", body.len());
    bencher.bench(|| {
        let request = admission::parse_review(divan::black_box(&body)).unwrap();
        admission::review(&policy, None, Endpoint::Validate, &request).unwrap()
    });
}

#[divan::bench]
fn worst_case_exec_review_warm(bencher: divan::Bencher) {
    let policy = Policy::default();
    let body = workloads::worst_case_body();
    let mut cache = ParseCache::new();
    let request = admission::parse_review(&body).unwrap();
    admission::review_cached(&policy, None, Endpoint::Validate, &request, &NoConfigMaps, &mut cache).unwrap();
    bencher.bench_local(|| {
        let request = admission::parse_review(divan::black_box(&body)).unwrap();
        admission::review_cached(&policy, None, Endpoint::Validate, &request, &NoConfigMaps, &mut cache)
            .unwrap()
    });
}

#[divan::bench]
fn many_functions_script(bencher: divan::Bencher) {
    let policy = Policy::default();
    let mut script = String::new();
    for i in 0..300 {
        script.push_str(&format!("f{i}() {{ pg_isready -h db || log down; }}\n"));
    }
    script.push_str("log() { echo \"$@\"; }\n");
    for i in 0..300 {
        script.push_str(&format!("f{i}\n"));
    }
    script.push_str("curl -fsS http://localhost:8080/healthz\n");
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "app", "image": "app:1",
            "livenessProbe": {"exec": {"command": ["sh", "-c", script]}}}]}});
    let workload = Workload::from_value(WorkloadKind::Pod, &pod).unwrap();
    bencher.bench(|| engine::evaluate(divan::black_box(&policy.rules), divan::black_box(&workload)));
}

#[divan::bench(args = workloads::COST_SHAPES)]
fn cost_shape(bencher: divan::Bencher, name: &str) {
    let policy = Policy::default();
    let pod = workloads::script_pod(&workloads::cost_shape(name), 1);
    let workload = Workload::from_value(WorkloadKind::Pod, &pod).unwrap();
    bencher.bench(|| engine::evaluate(divan::black_box(&policy.rules), divan::black_box(&workload)));
}

#[divan::bench(args = workloads::COST_SHAPES)]
fn cost_shape_x14(bencher: divan::Bencher, name: &str) {
    let policy = Policy::default();
    let pod = workloads::script_pod(&workloads::cost_shape(name), 14);
    let workload = Workload::from_value(WorkloadKind::Pod, &pod).unwrap();
    bencher.bench(|| engine::evaluate(divan::black_box(&policy.rules), divan::black_box(&workload)));
}
