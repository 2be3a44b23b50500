//! `probegate audit` against a real API server: workloads of every kind seeded through the API
//! (no controllers run, so ReplicaSets, Jobs and Pods are created by hand with the owner references
//! their controllers would set, and Pod statuses through the status subresource), audited in
//! namespaces with different overrides; reports written, left alone when nothing changed, and
//! updated when the policy changes a verdict; the shipped RBAC is enough, and Events are optional.

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use crate::harness;

const POLICY: &str = r#"apiVersion: probegate.dev/v1alpha1
kind: ProbePolicy
mode: enforce
overrides:
  - name: relaxed
    namespaceSelector:
      matchLabels: {probegate-e2e/tier: relaxed}
    rules:
      liveness-dependency: {action: warn}
"#;

const DEPENDENT_CONTAINER: &str = r#"{"name": "api", "image": "example/api:1", "ports": [{"containerPort": 8080}],
  "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}, "timeoutSeconds": 2},
  "livenessProbe": {"exec": {"command": ["sh", "-c", "pg_isready -h postgres.db.svc"]}, "timeoutSeconds": 3},
  "startupProbe": {"httpGet": {"path": "/live", "port": 8080}},
  "lifecycle": {"preStop": {"sleep": {"seconds": 5}}}}"#;

const CLEAN_CONTAINER: &str = r#"{"name": "job", "image": "example/job:1"}"#;

fn container(dependent: bool) -> Value {
    serde_json::from_str(if dependent { DEPENDENT_CONTAINER } else { CLEAN_CONTAINER }).unwrap()
}

fn apply(manifest: &Value) -> Value {
    let out = harness::kubectl_apply(&manifest.to_string(), &["-o", "json"]);
    assert!(out.status.success(), "kubectl apply: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn owner(obj: &Value) -> Value {
    json!([{"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": obj["metadata"]["name"],
        "uid": obj["metadata"]["uid"], "controller": true}])
}

fn template(dependent: bool) -> Value {
    json!({"metadata": {"labels": {"app": "x"}}, "spec": {"restartPolicy": "Always", "containers": [container(dependent)]}})
}

/// Seeds every kind in `ns`; returns the uid of the Deployment `api`.
fn seed(ns: &str) -> String {
    let selector = json!({"matchLabels": {"app": "x"}});
    let api = apply(&json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "api", "namespace": ns, "labels": {"app": "x"}}, "spec": {"replicas": 2, "selector": selector, "template": template(true)}}));
    let rs = apply(&json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": "api-5d8f", "namespace": ns, "labels": {"app": "x"}, "ownerReferences": owner(&api)},
        "spec": {"replicas": 2, "selector": selector, "template": template(true)}}));
    for (i, restarts) in [(1, 9), (2, 5)] {
        let mut spec = template(true)["spec"].clone();
        spec["automountServiceAccountToken"] = json!(false);
        apply(&json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("api-5d8f-{i}"), "namespace": ns, "labels": {"app": "x"}, "ownerReferences": owner(&rs)},
            "spec": spec}));
        let mut status = json!({"status": {"phase": "Running", "containerStatuses": [{"name": "api", "image": "example/api:1",
            "imageID": "", "ready": true, "restartCount": restarts, "state": {"running": {"startedAt": "2026-12-01T10:00:00Z"}}}]}});
        if i == 1 {
            status["status"]["containerStatuses"][0]["lastState"] = json!({"terminated":
                {"exitCode": 137, "reason": "Error", "startedAt": "2026-12-01T09:00:00Z", "finishedAt": "2026-12-01T09:59:00Z"}});
        }
        let out = harness::kubectl(&[
            "-n",
            ns,
            "patch",
            "pod",
            &format!("api-5d8f-{i}"),
            "--subresource=status",
            "--type=merge",
            "-p",
            &status.to_string(),
        ]);
        assert!(out.status.success(), "status: {}", String::from_utf8_lossy(&out.stderr));
    }
    let now = k8s_openapi::jiff::Timestamp::now();
    apply(
        &json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "api-5d8f-1.kill", "namespace": ns},
        "involvedObject": {"kind": "Pod", "name": "api-5d8f-1", "namespace": ns, "fieldPath": "spec.containers{api}"},
        "reason": "Killing", "message": "Container api failed liveness probe, will be restarted", "count": 4,
        "firstTimestamp": now.to_string(), "lastTimestamp": now.to_string(), "type": "Normal", "source": {"component": "kubelet"}}),
    );
    let mut sts_template = template(true);
    sts_template["spec"]["containers"][0]["name"] = json!("db");
    apply(
        &json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": ns},
        "spec": {"serviceName": "db", "selector": selector, "template": sts_template}}),
    );
    apply(
        &json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": ns},
        "spec": {"selector": selector, "template": template(false)}}),
    );
    apply(
        &json!({"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "legacy", "namespace": ns},
        "spec": {"selector": {"app": "x"}, "template": template(false)}}),
    );
    let job_template = json!({"spec": {"restartPolicy": "Never", "containers": [container(false)]}});
    let cron = apply(
        &json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly", "namespace": ns},
        "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"template": job_template}}}}),
    );
    let mut owned_job_spec = json!({"template": job_template});
    owned_job_spec["template"]["spec"]["containers"][0] = container(true);
    owned_job_spec["template"]["spec"]["restartPolicy"] = json!("Never");
    // The CronJob's Job carries a finding its CronJob does not: it is reported through the CronJob,
    // so it must not show up on its own.
    apply(&json!({"apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "nightly-1", "namespace": ns, "ownerReferences": owner(&cron)}, "spec": owned_job_spec}));
    apply(&json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "once", "namespace": ns},
        "spec": {"template": job_template}}));
    let mut bare = template(true)["spec"].clone();
    bare["automountServiceAccountToken"] = json!(false);
    bare["containers"][0]["name"] = json!("bare");
    apply(
        &json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bare", "namespace": ns}, "spec": bare}),
    );
    api["metadata"]["uid"].as_str().unwrap().to_string()
}

fn audit(kubeconfig: &Path, args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_probegate"))
        .arg("audit")
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .output()
        .expect("run probegate audit")
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
    })
}

fn policy_file(dir: &Path, text: &str) -> String {
    let path = dir.join("policy.yaml");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn finding<'a>(report: &'a Value, kind: &str, name: &str, rule: &str) -> Option<&'a Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == kind && f["name"] == name && f["rule"] == rule)
}

#[tokio::test]
async fn audit_reports_each_workload_once_with_its_namespace_policy_and_restart_evidence() {
    let strict = harness::namespace("audit-strict").await;
    let relaxed = harness::namespace("audit-relaxed").await;
    let out = harness::kubectl(&["label", "namespace", &relaxed, "probegate-e2e/tier=relaxed"]);
    assert!(out.status.success());
    seed(&strict);
    seed(&relaxed);
    let dir = tempfile::tempdir().unwrap();
    let policy = policy_file(dir.path(), POLICY);
    let kubeconfig = &harness::cluster().kubeconfig;

    let out = audit(kubeconfig, &["-n", &strict, "-o", "json", "--policy", &policy, "--page-size", "2"]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let report = json_of(&out);
    let mut objects: Vec<String> = report["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| format!("{}/{}", o["kind"].as_str().unwrap(), o["name"].as_str().unwrap()))
        .collect();
    objects.sort();
    // The ReplicaSet, its Pods and the CronJob's Job are reported through their controllers.
    assert_eq!(
        objects,
        [
            "CronJob/nightly",
            "DaemonSet/agent",
            "Deployment/api",
            "Job/once",
            "Pod/bare",
            "ReplicationController/legacy",
            "StatefulSet/db"
        ]
    );
    assert_eq!(report["summary"]["skipped"], 4, "RS, two Pods and the CronJob's Job");
    let dep = finding(&report, "Deployment", "api", "liveness-dependency").expect("the Deployment's finding");
    assert_eq!(dep["level"], "deny");
    assert_eq!(dep["file"], format!("namespaces/{strict}"));
    let e = &dep["evidence"];
    assert_eq!(
        (e["pods"].as_u64(), e["podsRestarted"].as_u64(), e["restarts"].as_u64()),
        (Some(2), Some(2), Some(14))
    );
    assert_eq!(e["livenessKills"], 4);
    assert_eq!(e["lastRestart"], json!({"at": "2026-12-01T09:59:00Z", "reason": "Error", "exitCode": 137}));
    // A workload without Pods has no restarts to show, and the StatefulSet's finding still stands.
    let sts =
        finding(&report, "StatefulSet", "db", "liveness-dependency").expect("the StatefulSet's finding");
    assert_eq!(sts["evidence"]["pods"], 0);
    assert!(finding(&report, "Pod", "bare", "liveness-dependency").is_some());

    // The relaxed namespace's labels (read from the cluster) select the override: warn, not deny.
    let out = audit(kubeconfig, &["-n", &relaxed, "-o", "json", "--policy", &policy]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let report = json_of(&out);
    let dep = finding(&report, "Deployment", "api", "liveness-dependency").unwrap();
    assert_eq!(dep["level"], "warn");
    assert_eq!(
        report["objects"].as_array().unwrap().iter().find(|o| o["name"] == "api").unwrap()["overrides"],
        json!(["relaxed"])
    );

    // Text, most restarts first, with the evidence line; a label selector narrows the objects.
    let out = audit(kubeconfig, &["-n", &strict, "--policy", &policy, "--sort", "restarts"]);
    let text = String::from_utf8(out.stdout).unwrap();
    // (The text names its policy first, s27: the webhook may run another.)
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(format!("policy: {policy}").as_str()), "{text}");
    let first = lines.next().unwrap();
    assert!(first.contains("Deployment") && first.contains("/api "), "{text}");
    assert!(text.contains("runtime: 14 restarts across 2 of 2 Pods"), "{text}");
    let out = audit(kubeconfig, &["-n", &strict, "-o", "json", "-l", "app=x", "--min-restarts", "1"]);
    let report = json_of(&out);
    let names: Vec<&str> =
        report["objects"].as_array().unwrap().iter().filter_map(|o| o["name"].as_str()).collect();
    assert_eq!(names, ["api"], "{report}");
}

async fn reports_in(ns: &str) -> Vec<Value> {
    let out = harness::kubectl(&["-n", ns, "get", "reports.openreports.io", "-o", "json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    list["items"].as_array().unwrap().clone()
}

/// Installs the Report CRD once per test process (two tests applying it at once on a fresh server
/// race: one create answers AlreadyExists).
fn install_crd() {
    static INSTALLED: std::sync::Mutex<bool> = std::sync::Mutex::new(false);
    let mut installed = INSTALLED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if *installed {
        return;
    }
    let crd = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/components/reports/crd-openreports.yaml");
    let out = harness::kubectl(&["apply", "-f", crd.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    *installed = true;
}

fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[tokio::test]
async fn reports_are_written_once_and_updated_when_the_policy_changes_a_verdict() {
    install_crd();
    let ns = harness::namespace("audit-reports").await;
    let api_uid = seed(&ns);
    let dir = tempfile::tempdir().unwrap();
    let policy = policy_file(dir.path(), POLICY);
    let kubeconfig = &harness::cluster().kubeconfig;
    // The CRD is established within moments; retry the first write until it is.
    let out = harness::eventually(std::time::Duration::from_secs(20), "the Report CRD serves", || async {
        let out = audit(
            kubeconfig,
            &["-n", &ns, "--policy", &policy, "--write-reports", "--exit-zero", "-o", "json"],
        );
        (out.status.code() == Some(0)).then_some(out)
    })
    .await;
    assert!(
        stderr_of(&out).contains("7 written, 0 unchanged, 0 deleted, 0 failed, 0 retried"),
        "{}",
        stderr_of(&out)
    );
    let reports = reports_in(&ns).await;
    assert_eq!(reports.len(), 7);
    let api =
        reports.iter().find(|r| r["metadata"]["name"] == "probegate-deployment-api").expect("the api report");
    // The garbage collector deletes a report with its workload on a real cluster (this API server
    // runs no controller manager, so the audit's own clean-up is tested below): one owner
    // reference naming the workload exactly.
    assert_eq!(
        api["metadata"]["ownerReferences"],
        json!([{"apiVersion": "apps/v1", "kind": "Deployment", "name": "api", "uid": api_uid}])
    );
    assert_eq!(
        api["scope"],
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "api", "namespace": ns, "uid": api_uid})
    );
    assert_eq!(api["source"], "probegate");
    let dep = api["results"].as_array().unwrap().iter().find(|r| r["rule"] == "liveness-dependency").unwrap();
    assert_eq!((dep["result"].as_str(), dep["severity"].as_str()), (Some("fail"), Some("high")));
    assert_eq!(dep["properties"]["restarts"], "14");
    assert_eq!(dep["properties"]["container"], "api");
    assert!(dep["properties"]["evidence"].as_str().unwrap().starts_with("14 restarts across 2 of 2 Pods"));
    assert_eq!(api["summary"]["fail"], 1);
    let versions: Vec<(String, String)> = reports
        .iter()
        .map(|r| {
            (
                r["metadata"]["name"].as_str().unwrap().into(),
                r["metadata"]["resourceVersion"].as_str().unwrap().into(),
            )
        })
        .collect();

    // Nothing changed: nothing written, every resourceVersion as it was.
    let out =
        audit(kubeconfig, &["-n", &ns, "--policy", &policy, "--write-reports", "--exit-zero", "-o", "json"]);
    assert!(stderr_of(&out).contains("0 written, 7 unchanged, 0 deleted, 0 failed"), "{}", stderr_of(&out));
    let again: Vec<(String, String)> = reports_in(&ns)
        .await
        .iter()
        .map(|r| {
            (
                r["metadata"]["name"].as_str().unwrap().into(),
                r["metadata"]["resourceVersion"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(again, versions);

    // A policy that turns liveness-dependency into a warning everywhere: the three reports with
    // that finding (Deployment, StatefulSet, bare Pod) change, and every report's policy hash does.
    let policy = policy_file(
        dir.path(),
        &POLICY.replace("mode: enforce", "mode: enforce\nrules:\n  liveness-dependency: {action: warn}"),
    );
    let out =
        audit(kubeconfig, &["-n", &ns, "--policy", &policy, "--write-reports", "--exit-zero", "-o", "json"]);
    assert!(stderr_of(&out).contains("7 written, 0 unchanged"), "{}", stderr_of(&out));
    let reports = reports_in(&ns).await;
    let api = reports.iter().find(|r| r["metadata"]["name"] == "probegate-deployment-api").unwrap();
    let dep = api["results"].as_array().unwrap().iter().find(|r| r["rule"] == "liveness-dependency").unwrap();
    assert_eq!((dep["result"].as_str(), dep["severity"].as_str()), (Some("warn"), Some("medium")));
    assert_eq!(api["summary"]["fail"], 0);

    // A workload is deleted: the next pass deletes its report and leaves the others alone.
    let before = report_versions(&ns).await;
    let out = harness::kubectl(&["-n", &ns, "delete", "job", "once", "--wait=false"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let out =
        audit(kubeconfig, &["-n", &ns, "--policy", &policy, "--write-reports", "--exit-zero", "-o", "json"]);
    assert!(stderr_of(&out).contains("0 written, 6 unchanged, 1 deleted, 0 failed"), "{}", stderr_of(&out));
    let mut expected = before.clone();
    expected.remove("probegate-job-once");
    assert_eq!(report_versions(&ns).await, expected);
    // A pass narrowed by a label selector sees only some workloads: it deletes nothing.
    let out = audit(
        kubeconfig,
        &["-n", &ns, "--policy", &policy, "--write-reports", "--exit-zero", "-o", "json", "-l", "app=x"],
    );
    assert!(stderr_of(&out).contains(" 0 deleted"), "{}", stderr_of(&out));
    assert_eq!(report_versions(&ns).await.len(), 6);

    // A report that exists but that the metadata list does not show (its label removed by hand):
    // the audit creates it, gets 409 AlreadyExists, and applies it instead; the label is back.
    let out = harness::kubectl(&[
        "-n",
        &ns,
        "label",
        "reports.openreports.io",
        "probegate-deployment-api",
        "app.kubernetes.io/managed-by-",
    ]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let args = ["-n", &ns, "--policy", &policy, "--write-reports", "--exit-zero", "-o", "json"];
    let out = audit(kubeconfig, &args);
    assert!(stderr_of(&out).contains("1 written, 5 unchanged, 0 deleted, 0 failed"), "{}", stderr_of(&out));
    let out = audit(kubeconfig, &args);
    assert!(stderr_of(&out).contains("0 written, 6 unchanged, 0 deleted, 0 failed"), "{}", stderr_of(&out));
}

/// Each report's name and resourceVersion (a write changes the version).
async fn report_versions(ns: &str) -> std::collections::BTreeMap<String, String> {
    reports_in(ns)
        .await
        .iter()
        .map(|r| {
            (
                r["metadata"]["name"].as_str().unwrap().to_string(),
                r["metadata"]["resourceVersion"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn wgpolicyk8s_policy_reports_are_written_to_the_published_crd() {
    let crd =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/crds/wgpolicyk8s.io_policyreports.yaml");
    let out = harness::kubectl(&["apply", "-f", crd.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let ns = harness::namespace("audit-wgpolicy").await;
    let api_uid = seed(&ns);
    let kubeconfig = &harness::cluster().kubeconfig;
    let args = ["-n", &ns, "--write-reports", "--report-api", "wgpolicyk8s", "--exit-zero", "-o", "json"];
    let out =
        harness::eventually(std::time::Duration::from_secs(20), "the PolicyReport CRD serves", || async {
            let out = audit(kubeconfig, &args);
            (out.status.code() == Some(0) && stderr_of(&out).contains("7 written")).then_some(out)
        })
        .await;
    assert!(stderr_of(&out).contains("reports (wgpolicyk8s.io/v1alpha2): 7 written"), "{}", stderr_of(&out));
    let list = harness::kubectl(&["-n", &ns, "get", "policyreports.wgpolicyk8s.io", "-o", "json"]);
    assert!(list.status.success(), "{}", stderr_of(&list));
    let list: Value = serde_json::from_slice(&list.stdout).unwrap();
    let items = list["items"].as_array().unwrap();
    assert_eq!(items.len(), 7);
    let api = items.iter().find(|r| r["metadata"]["name"] == "probegate-deployment-api").unwrap();
    assert_eq!(api["apiVersion"], "wgpolicyk8s.io/v1alpha2");
    assert_eq!(api["kind"], "PolicyReport");
    assert_eq!(api["scope"]["uid"], api_uid);
    assert_eq!(api["metadata"]["ownerReferences"][0]["uid"], api_uid);
    let dep = api["results"].as_array().unwrap().iter().find(|r| r["rule"] == "liveness-dependency").unwrap();
    assert_eq!((dep["result"].as_str(), dep["source"].as_str()), (Some("fail"), Some("probegate")));
    assert_eq!(dep["properties"]["restarts"], "14");
    assert_eq!(api["summary"]["fail"], 1);
    // The hash survives the round trip through this CRD too: nothing to write the second time.
    let out = audit(kubeconfig, &args);
    assert!(stderr_of(&out).contains("0 written, 7 unchanged, 0 deleted, 0 failed"), "{}", stderr_of(&out));
}

#[tokio::test]
async fn shards_divide_the_namespaces_between_them() {
    install_crd();
    let run = format!("r{}", std::process::id());
    let mut namespaces = Vec::new();
    for _ in 0..2 {
        let ns = harness::namespace("audit-shard").await;
        let out = harness::kubectl(&["label", "namespace", &ns, &format!("probegate-e2e/shard-run={run}")]);
        assert!(out.status.success());
        seed(&ns);
        namespaces.push(ns);
    }
    let kubeconfig = &harness::cluster().kubeconfig;
    let selector = format!("probegate-e2e/shard-run={run}");
    let mut seen: Vec<(u32, String)> = Vec::new();
    let mut written = 0;
    for index in [0u32, 1] {
        let index_arg = index.to_string();
        let args = [
            "-A",
            "--namespace-selector",
            &selector,
            "--shard-count",
            "2",
            "--shard-index",
            &index_arg,
            "--write-reports",
            "--exit-zero",
            "-o",
            "json",
        ];
        let out =
            harness::eventually(std::time::Duration::from_secs(20), "the Report CRD serves", || async {
                let out = audit(kubeconfig, &args);
                (out.status.code() == Some(0)).then_some(out)
            })
            .await;
        let report = json_of(&out);
        let mut mine: Vec<String> = report["objects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["namespace"].as_str().unwrap().to_string())
            .collect();
        mine.sort();
        mine.dedup();
        for ns in mine {
            assert_eq!(probegate::audit::cluster::shard_of(&ns, 2), index, "{ns}");
            seen.push((index, ns));
        }
        let line = stderr_of(&out);
        let n: usize = line
            .split("reports (openreports.io/v1alpha1): ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{line}"));
        written += n;
    }
    // Each selected namespace was audited by exactly one shard, and only those were.
    let mut all: Vec<&String> = seen.iter().map(|(_, ns)| ns).collect();
    all.sort();
    let mut expected: Vec<&String> = namespaces.iter().collect();
    expected.sort();
    assert_eq!(all, expected, "{seen:?}");
    assert_eq!(written, 14);
    for ns in &namespaces {
        assert_eq!(reports_in(ns).await.len(), 7, "{ns}");
    }
}

#[tokio::test]
async fn the_shipped_rbac_is_enough_and_events_are_optional() {
    install_crd();
    let ns = harness::namespace("audit-rbac").await;
    seed(&ns);
    let cluster = harness::cluster();
    let role_file = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/components/reports/clusterrole.yaml");
    let role: Value = serde_saphyr::from_str(&std::fs::read_to_string(role_file).unwrap()).unwrap();
    let mut without_events = role.clone();
    without_events["metadata"]["name"] = json!(format!("{ns}-no-events"));
    for rule in without_events["rules"].as_array_mut().unwrap() {
        let kept: Vec<Value> =
            rule["resources"].as_array().unwrap().iter().filter(|r| *r != "events").cloned().collect();
        rule["resources"] = json!(kept);
    }
    without_events["rules"]
        .as_array_mut()
        .unwrap()
        .retain(|r| !r["resources"].as_array().unwrap().is_empty());
    let mut with_events = role;
    with_events["metadata"]["name"] = json!(format!("{ns}-audit"));
    for (account, role) in [("auditor", &with_events), ("blind", &without_events)] {
        apply(role);
        apply(&json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": format!("{ns}-{account}")},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role["metadata"]["name"]},
            "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": ns}]}));
    }
    let auditor = cluster.service_account_kubeconfig(&ns, "auditor").await;
    let blind = cluster.service_account_kubeconfig(&ns, "blind").await;
    let out =
        harness::eventually(std::time::Duration::from_secs(20), "RBAC and the CRD in force", || async {
            let out = audit(&auditor, &["-n", &ns, "-o", "json", "--write-reports", "--exit-zero"]);
            (out.status.code() == Some(0)).then_some(out)
        })
        .await;
    assert!(stderr_of(&out).contains("7 written"), "{}", stderr_of(&out));
    let report = json_of(&out);
    let dep = finding(&report, "Deployment", "api", "liveness-dependency").unwrap();
    assert_eq!(dep["evidence"]["livenessKills"], 4);
    // The role may delete the report of a workload that is gone.
    let out = harness::kubectl(&["-n", &ns, "delete", "job", "once", "--wait=false"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let out = audit(&auditor, &["-n", &ns, "-o", "json", "--write-reports", "--exit-zero"]);
    assert!(stderr_of(&out).contains("1 deleted, 0 failed"), "{}", stderr_of(&out));

    let out = audit(&blind, &["-n", &ns, "-o", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    assert!(stderr_of(&out).contains("cannot read Events"), "{}", stderr_of(&out));
    let report = json_of(&out);
    let dep = finding(&report, "Deployment", "api", "liveness-dependency").expect("the finding stands");
    assert_eq!(dep["level"], "deny");
    assert_eq!(dep["evidence"]["restarts"], 14);
    assert!(dep["evidence"].get("livenessKills").is_none());
    assert!(dep["evidence"]["summary"].as_str().unwrap().ends_with("events not readable"));
}

/// A `probegate audit --watch` process, stopped when dropped.
struct Watcher {
    child: std::process::Child,
    admin: String,
}

impl Watcher {
    fn start(ns: &str, policy: &str, identity: &str) -> Watcher {
        Watcher::start_in(&["-n", ns], ns, policy, identity)
    }

    /// `scope`: `-n NS`, or `-A` with its filters; the Lease lives in `lease_ns`.
    fn start_in(scope: &[&str], lease_ns: &str, policy: &str, identity: &str) -> Watcher {
        let port = harness::free_port();
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_probegate"))
            .args(["audit", "--watch"])
            .args(scope)
            .args(["--policy", policy, "--lease-namespace", lease_ns, "--identity", identity])
            .args([
                "--debounce-ms",
                "200",
                "--min-interval-seconds",
                "1",
                "--admin-addr",
                &format!("127.0.0.1:{port}"),
            ])
            .env("KUBECONFIG", &harness::cluster().kubeconfig)
            .env_remove("KUBERNETES_SERVICE_HOST")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start probegate audit --watch");
        Watcher { child, admin: format!("http://127.0.0.1:{port}") }
    }

    async fn metric(&self, name: &str) -> Option<f64> {
        let body = reqwest::get(format!("{}/metrics", self.admin)).await.ok()?.text().await.ok()?;
        body.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn rule_result(report: &Value, rule: &str) -> Option<String> {
    report["results"].as_array()?.iter().find(|r| r["rule"] == rule)?["result"].as_str().map(String::from)
}

#[tokio::test]
async fn watch_mode_elects_one_writer_and_follows_workload_and_policy_changes() {
    use std::time::Duration;
    install_crd();
    let ns = harness::namespace("audit-watch").await;
    seed(&ns);
    let dir = tempfile::tempdir().unwrap();
    let policy = policy_file(dir.path(), POLICY);
    let first = Watcher::start(&ns, &policy, "first");
    harness::eventually(Duration::from_secs(30), "the first replica leads and writes 7 reports", || async {
        (first.metric("probegate_audit_leader").await == Some(1.0)
            && first.metric("probegate_audit_report_writes_total{result=\"written\"}").await == Some(7.0))
        .then_some(())
    })
    .await;
    let second = Watcher::start(&ns, &policy, "second");
    harness::eventually(Duration::from_secs(10), "the second replica serves metrics", || async {
        second.metric("probegate_audit_leader").await.map(|_| ())
    })
    .await;

    // A workload changes: its report follows. The Deployment's liveness probe stops reaching the
    // database.
    let patch = json!([{"op": "replace", "path": "/spec/template/spec/containers/0/livenessProbe",
        "value": {"httpGet": {"path": "/live", "port": 8080}, "timeoutSeconds": 3}}]);
    let out =
        harness::kubectl(&["-n", &ns, "patch", "deployment", "api", "--type=json", "-p", &patch.to_string()]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    harness::eventually(Duration::from_secs(15), "the api report passes liveness-dependency", || async {
        let reports = reports_in(&ns).await;
        let api = reports.iter().find(|r| r["metadata"]["name"] == "probegate-deployment-api")?;
        (rule_result(api, "liveness-dependency").as_deref() == Some("pass")).then_some(())
    })
    .await;

    // The policy file changes a verdict: the StatefulSet's finding becomes a warning.
    policy_file(
        dir.path(),
        &POLICY.replace("mode: enforce", "mode: enforce\nrules:\n  liveness-dependency: {action: warn}"),
    );
    harness::eventually(Duration::from_secs(15), "the db report follows the new policy", || async {
        let reports = reports_in(&ns).await;
        let db = reports.iter().find(|r| r["metadata"]["name"] == "probegate-statefulset-db")?;
        (rule_result(db, "liveness-dependency").as_deref() == Some("warn")).then_some(())
    })
    .await;

    // Only the leader wrote: the second replica never held the Lease.
    assert_eq!(second.metric("probegate_audit_leader").await, Some(0.0));
    assert_eq!(second.metric("probegate_audit_passes_total{result=\"ok\"}").await, None);
    let lease = harness::kubectl(&[
        "-n",
        &ns,
        "get",
        "lease",
        "probegate-audit",
        "-o",
        "jsonpath={.spec.holderIdentity}",
    ]);
    assert_eq!(String::from_utf8_lossy(&lease.stdout), "first");

    // The leader goes away: the second takes over and audits.
    drop(first);
    harness::eventually(Duration::from_secs(40), "the second replica takes the Lease and audits", || async {
        (second.metric("probegate_audit_leader").await == Some(1.0)
            && second.metric("probegate_audit_passes_total{result=\"ok\"}").await.is_some())
        .then_some(())
    })
    .await;
}

#[tokio::test]
async fn watch_mode_re_evaluates_only_what_a_change_touches() {
    use std::time::Duration;
    install_crd();
    let ns = harness::namespace("audit-incr").await;
    seed(&ns);
    let dir = tempfile::tempdir().unwrap();
    let policy = policy_file(dir.path(), POLICY);
    let watcher = Watcher::start(&ns, &policy, "only");
    harness::eventually(Duration::from_secs(30), "the first pass writes 7 reports", || async {
        (watcher.metric("probegate_audit_report_writes_total{result=\"written\"}").await == Some(7.0))
            .then_some(())
    })
    .await;
    let passes = || async { watcher.metric("probegate_audit_passes_total{result=\"ok\"}").await };
    assert_eq!(passes().await, Some(1.0));
    let before = report_versions(&ns).await;
    assert_eq!(before.len(), 7);
    let report = |name: &'static str| {
        let ns = ns.clone();
        async move { reports_in(&ns).await.into_iter().find(|r| r["metadata"]["name"] == name) }
    };
    let unchanged_but = |changed: &[&str], now: &std::collections::BTreeMap<String, String>| {
        for (name, version) in &before {
            if !changed.contains(&name.as_str()) && now.contains_key(name) {
                assert_eq!(now.get(name), Some(version), "{name} was rewritten");
            }
        }
    };

    // One Deployment changes: its report follows, no other report is rewritten, no full pass ran.
    let patch = json!([{"op": "replace", "path": "/spec/template/spec/containers/0/livenessProbe",
        "value": {"httpGet": {"path": "/live", "port": 8080}, "timeoutSeconds": 3}}]);
    let out =
        harness::kubectl(&["-n", &ns, "patch", "deployment", "api", "--type=json", "-p", &patch.to_string()]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    harness::eventually(Duration::from_secs(15), "the api report passes liveness-dependency", || async {
        let api = report("probegate-deployment-api").await?;
        (rule_result(&api, "liveness-dependency").as_deref() == Some("pass")).then_some(())
    })
    .await;
    unchanged_but(&["probegate-deployment-api"], &report_versions(&ns).await);

    // A Pod's status says it restarted: the evidence in its report follows.
    let status = json!({"status": {"phase": "Running", "containerStatuses": [{"name": "bare", "image": "example/api:1",
        "imageID": "", "ready": true, "restartCount": 3, "state": {"running": {"startedAt": "2026-12-01T10:00:00Z"}}}]}});
    let out = harness::kubectl(&[
        "-n",
        &ns,
        "patch",
        "pod",
        "bare",
        "--subresource=status",
        "--type=merge",
        "-p",
        &status.to_string(),
    ]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    harness::eventually(Duration::from_secs(15), "the bare Pod's report shows 3 restarts", || async {
        let bare = report("probegate-pod-bare").await?;
        let dep = bare["results"].as_array()?.iter().find(|r| r["rule"] == "liveness-dependency")?.clone();
        (dep["properties"]["restarts"] == "3").then_some(())
    })
    .await;

    // A workload is deleted: its report goes (no garbage collector runs here).
    let out = harness::kubectl(&["-n", &ns, "delete", "statefulset", "db", "--wait=false"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    harness::eventually(Duration::from_secs(15), "the db report is deleted", || async {
        report("probegate-statefulset-db").await.is_none().then_some(())
    })
    .await;

    // The namespace is relabelled into the relaxed override: its workloads are re-evaluated.
    let out = harness::kubectl(&["label", "namespace", &ns, "probegate-e2e/tier=relaxed"]);
    assert!(out.status.success());
    harness::eventually(Duration::from_secs(15), "the bare Pod's finding becomes a warning", || async {
        let bare = report("probegate-pod-bare").await?;
        (rule_result(&bare, "liveness-dependency").as_deref() == Some("warn")).then_some(())
    })
    .await;
    let now = report_versions(&ns).await;
    unchanged_but(&["probegate-deployment-api", "probegate-pod-bare"], &now);
    assert!(!now.contains_key("probegate-statefulset-db"));
    // All of it without a full pass.
    assert_eq!(passes().await, Some(1.0));
}

#[tokio::test]
async fn watch_mode_follows_namespaces_into_and_out_of_its_namespace_selector() {
    use std::time::Duration;
    install_crd();
    let run = format!("probegate-e2e/watch-run=r{}", std::process::id());
    let inside = harness::namespace("audit-sel-in").await;
    let outside = harness::namespace("audit-sel-out").await;
    let out = harness::kubectl(&["label", "namespace", &inside, &run]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    seed(&inside);
    seed(&outside);
    let dir = tempfile::tempdir().unwrap();
    let policy = policy_file(dir.path(), POLICY);
    let watcher = Watcher::start_in(&["-A", "--namespace-selector", &run], &inside, &policy, "selector");
    harness::eventually(
        Duration::from_secs(30),
        "a full pass writes the selected namespace's 7 reports",
        || async {
            (watcher.metric("probegate_audit_passes_total{result=\"ok\"}").await == Some(1.0)
                && watcher.metric("probegate_audit_report_writes_total{result=\"written\"}").await
                    == Some(7.0))
            .then_some(())
        },
    )
    .await;
    assert_eq!(reports_in(&inside).await.len(), 7);
    assert!(reports_in(&outside).await.is_empty(), "a namespace outside the selector got reports");

    // Relabelled into the selector: its workloads are audited and their reports written.
    let out = harness::kubectl(&["label", "namespace", &outside, &run]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    harness::eventually(Duration::from_secs(15), "the relabelled namespace gets its 7 reports", || async {
        (reports_in(&outside).await.len() == 7).then_some(())
    })
    .await;
    let api_of = |ns: String| async move {
        reports_in(&ns).await.into_iter().find(|r| r["metadata"]["name"] == "probegate-deployment-api")
    };
    let api = api_of(outside.clone()).await.unwrap();
    assert_eq!(rule_result(&api, "liveness-dependency").as_deref(), Some("fail"));

    // Relabelled out of it: it is no longer audited, and its reports stay (docs/audit.md: a
    // replica whose selector takes the namespace finds them current). The Namespace watch
    // delivers events in order: once a later relabel of the selected namespace (into the relaxed
    // override) shows in its reports, the watcher has seen the other one leave. Then the same
    // change is made in both namespaces, the one that left first: once the selected one's report
    // follows, the other's event has been handled too, and ignored.
    let key = run.split('=').next().unwrap();
    let out = harness::kubectl(&["label", "namespace", &inside, &format!("{key}-")]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let out = harness::kubectl(&["label", "namespace", &outside, "probegate-e2e/tier=relaxed"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    harness::eventually(
        Duration::from_secs(15),
        "the relaxed override reaches the selected namespace",
        || async {
            let api = api_of(outside.clone()).await?;
            (rule_result(&api, "liveness-dependency").as_deref() == Some("warn")).then_some(())
        },
    )
    .await;
    let patch = json!([{"op": "replace", "path": "/spec/template/spec/containers/0/livenessProbe",
        "value": {"httpGet": {"path": "/live", "port": 8080}, "timeoutSeconds": 3}}]);
    for ns in [&inside, &outside] {
        let out = harness::kubectl(&[
            "-n",
            ns,
            "patch",
            "deployment",
            "api",
            "--type=json",
            "-p",
            &patch.to_string(),
        ]);
        assert!(out.status.success(), "{}", stderr_of(&out));
    }
    harness::eventually(Duration::from_secs(15), "the selected namespace's api report passes", || async {
        let api = api_of(outside.clone()).await?;
        (rule_result(&api, "liveness-dependency").as_deref() == Some("pass")).then_some(())
    })
    .await;
    let left = api_of(inside.clone()).await.expect("the report of a namespace that left the selector stays");
    assert_eq!(
        rule_result(&left, "liveness-dependency").as_deref(),
        Some("fail"),
        "a namespace outside the selector was audited"
    );
    assert_eq!(reports_in(&inside).await.len(), 7);
    // Namespace passes, not full ones.
    assert_eq!(watcher.metric("probegate_audit_passes_total{result=\"ok\"}").await, Some(1.0));
}

/// A Deployment whose liveness host comes from a ConfigMap (`configMapKeyRef`) makes the audit
/// read that ConfigMap while the other kinds are still being listed. With a rate limit that held
/// its lock while waiting, that read deadlocked against a paused list request and `audit` never
/// returned (fresh-user pass). At the default `--qps`, with and without the ConfigMap.
#[tokio::test]
async fn audit_reads_a_configmap_while_other_kinds_are_listed() {
    let ns = harness::namespace("audit-cm-env").await;
    let container = json!({"name": "app", "image": "redis:7", "ports": [{"containerPort": 6379}],
        "env": [{"name": "REDIS_HOST", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "redis"}}}],
        "livenessProbe": {"exec": {"command": ["sh", "-c", "redis-cli -h $REDIS_HOST ping"]}}});
    apply(&json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "cache-client", "namespace": ns},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "c"}},
            "template": {"metadata": {"labels": {"app": "c"}}, "spec": {"containers": [container]}}}}));
    let kubeconfig = harness::cluster().kubeconfig.clone();
    for with_configmap in [false, true] {
        if with_configmap {
            apply(
                &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": ns},
                "data": {"redis": "cache.shop.svc"}}),
            );
        }
        // The child is killed at the deadline, so a regression fails here instead of hanging.
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_probegate"))
            .args(["audit", "-n", &ns, "-o", "json"])
            .env("KUBECONFIG", &kubeconfig)
            .env_remove("KUBERNETES_SERVICE_HOST")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while child.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > deadline {
                child.kill().unwrap();
                panic!("audit did not return within 60 s (ConfigMap present: {with_configmap})");
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        let report = json_of(&child.wait_with_output().unwrap());
        assert!(
            finding(&report, "Deployment", "cache-client", "liveness-dependency").is_some(),
            "ConfigMap present: {with_configmap}: {report}"
        );
    }
}
