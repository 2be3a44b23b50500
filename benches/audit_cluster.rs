//! `probegate audit` at scale against a real API server (cargo feature `e2e`, `KUBEBUILDER_ASSETS`
//! as for the e2e tests): DEPLOYMENTS (default 10,000) Deployments spread over 10 namespaces, each
//! with a ReplicaSet and a Pod whose status says the container restarted, seeded through the API
//! (no kubelet). Then the release binary runs `probegate audit -A --write-reports` twice and this
//! prints, for each pass: wall time, peak RSS (VmHWM of the audit process, polled) and the report
//! writes. Targets (issue 12): first pass within 60 s, peak RSS at most 256 MiB, zero writes on the
//! second pass. A third pass after one Deployment changes measures how long a one-object update takes
//! through a full pass.
//!
//! `KUBEBUILDER_ASSETS=... cargo bench --features e2e --bench audit_cluster` (`DEPLOYMENTS=N` for
//! fewer; `PROBEGATE_BIN=target/release/probegate` to measure that binary).

#[allow(dead_code)]
#[path = "../tests/e2e/harness.rs"]
mod harness;

use std::io::Read as _;
use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::json;

const NAMESPACES: usize = 10;
const IN_FLIGHT: usize = 32;

fn resource(group: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, "v1", kind), plural)
}

fn container(i: usize) -> serde_json::Value {
    // Every third one has a liveness probe that reaches a database: a finding with evidence.
    let liveness = if i.is_multiple_of(3) {
        json!({"exec": {"command": ["sh", "-c", format!("pg_isready -h db-{i}.data.svc")]}, "timeoutSeconds": 3})
    } else {
        json!({"httpGet": {"path": "/live", "port": 8080}, "timeoutSeconds": 3})
    };
    json!({"name": "app", "image": "example/app:1", "ports": [{"containerPort": 8080}],
        "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}, "timeoutSeconds": 2},
        "livenessProbe": liveness, "startupProbe": {"httpGet": {"path": "/live", "port": 8080}},
        "lifecycle": {"preStop": {"sleep": {"seconds": 5}}}})
}

async fn seed_one(client: kube::Client, ns: String, i: usize) {
    let name = format!("app-{i}");
    let labels = json!({"app": name});
    let template = json!({"metadata": {"labels": labels}, "spec": {"containers": [container(i)]}});
    let pp = PostParams::default();
    let deployments: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), &ns, &resource("apps", "Deployment", "deployments"));
    let d: DynamicObject = serde_json::from_value(json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": labels},
        "spec": {"selector": {"matchLabels": labels}, "template": template}}))
    .unwrap();
    let d = deployments.create(&pp, &d).await.expect("create a Deployment");
    let owner = |o: &DynamicObject, kind: &str, api_version: &str| json!([{"apiVersion": api_version, "kind": kind, "name": o.metadata.name, "uid": o.metadata.uid, "controller": true}]);
    let replicasets: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), &ns, &resource("apps", "ReplicaSet", "replicasets"));
    let rs: DynamicObject = serde_json::from_value(json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": format!("{name}-1"), "labels": labels, "ownerReferences": owner(&d, "Deployment", "apps/v1")},
        "spec": {"selector": {"matchLabels": labels}, "template": template}}))
    .unwrap();
    let rs = replicasets.create(&pp, &rs).await.expect("create a ReplicaSet");
    let pods: Api<DynamicObject> = Api::namespaced_with(client.clone(), &ns, &resource("", "Pod", "pods"));
    let mut spec = template["spec"].clone();
    spec["automountServiceAccountToken"] = json!(false);
    let pod: DynamicObject = serde_json::from_value(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": format!("{name}-1-x"), "labels": labels, "ownerReferences": owner(&rs, "ReplicaSet", "apps/v1")},
        "spec": spec}))
    .unwrap();
    pods.create(&pp, &pod).await.expect("create a Pod");
    let status = json!({"status": {"phase": "Running", "containerStatuses": [{"name": "app", "image": "example/app:1",
        "imageID": "", "ready": true, "restartCount": i % 7, "state": {"running": {"startedAt": "2026-12-01T10:00:00Z"}},
        "lastState": {"terminated": {"exitCode": 137, "reason": "Error", "startedAt": "2026-12-01T09:00:00Z", "finishedAt": "2026-12-01T09:59:00Z"}}}]}});
    pods.patch_status(&format!("{name}-1-x"), &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("set a Pod's status");
}

struct Run {
    seconds: f64,
    peak_rss_kib: u64,
    stderr: String,
}

fn audit(args: &[&str]) -> Run {
    let started = Instant::now();
    // PROBEGATE_BIN: another build of the binary to measure (a release one from a dev-profile bench).
    let binary = std::env::var_os("PROBEGATE_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_probegate").into());
    let mut child = std::process::Command::new(binary)
        .arg("audit")
        .args(args)
        .env("KUBECONFIG", &harness::cluster().kubeconfig)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run probegate audit");
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    loop {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        if let Ok(status) = std::fs::read_to_string(&status_file) {
            let hwm = status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok());
            peak = peak.max(hwm.unwrap_or(0));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    Run { seconds: started.elapsed().as_secs_f64(), peak_rss_kib: peak, stderr }
}

fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let n: usize = std::env::var("DEPLOYMENTS").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000);
    let crd = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/components/reports/crd-openreports.yaml");
    let out = harness::kubectl(&["apply", "-f", crd]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let seeded = Instant::now();
    runtime.block_on(async {
        let client = harness::client().await;
        let mut namespaces = Vec::new();
        for i in 0..NAMESPACES {
            namespaces.push(harness::namespace(&format!("bench{i}")).await);
        }
        futures::stream::iter(0..n)
            .map(|i| seed_one(client.clone(), namespaces[i % NAMESPACES].clone(), i))
            .buffer_unordered(IN_FLIGHT)
            .collect::<Vec<()>>()
            .await;
    });
    println!(
        "seeded {n} Deployments, {n} ReplicaSets, {n} Pods with statuses in {:.0} s",
        seeded.elapsed().as_secs_f64()
    );
    let args = ["-A", "--write-reports", "--exit-zero", "-o", "json", "--qps", "1000"];
    for pass in ["first pass", "second pass (nothing changed)"] {
        let r = audit(&args);
        let writes =
            r.stderr.lines().find(|l| l.contains("reports (")).unwrap_or("no report line").to_string();
        println!("{pass}: {:.1} s, peak RSS {:.1} MiB; {writes}", r.seconds, r.peak_rss_kib as f64 / 1024.0);
    }
    // One Deployment changes: a full pass rewrites its report alone.
    let ns = runtime.block_on(async {
        let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(harness::client().await);
        let list = namespaces.list(&Default::default()).await.unwrap();
        list.items.into_iter().filter_map(|n| n.metadata.name).find(|n| n.starts_with("e2e-bench0-")).unwrap()
    });
    let patch = json!([{"op": "replace", "path": "/spec/template/spec/containers/0/livenessProbe/timeoutSeconds", "value": 1}]);
    let out = harness::kubectl(&[
        "-n",
        &ns,
        "patch",
        "deployment",
        "app-0",
        "--type=json",
        "-p",
        &patch.to_string(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r = audit(&args);
    let writes = r.stderr.lines().find(|l| l.contains("reports (")).unwrap_or("no report line").to_string();
    println!(
        "one Deployment changed: {:.1} s, peak RSS {:.1} MiB; {writes}",
        r.seconds,
        r.peak_rss_kib as f64 / 1024.0
    );
}
