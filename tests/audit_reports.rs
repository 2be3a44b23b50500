//! Reports as `probegate audit --write-reports` builds them, checked against the Report CRD that
//! deploy/components/reports ships (written from the published openreports.io/v1alpha1 API), and
//! the component's RBAC checked against what the audit does.

use std::path::Path;

use probegate::audit::reports::{self, ReportApi, Subject};
use probegate::engine::{Workload, WorkloadKind};
use probegate::policy::Policy;
use serde_json::{Value, json};

fn component(file: &str) -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/components/reports").join(file);
    let text = std::fs::read_to_string(path).unwrap();
    serde_saphyr::from_multiple::<Value>(&text).unwrap()
}

fn schema() -> Value {
    let crd = component("crd-openreports.yaml").remove(0);
    assert_eq!(crd["spec"]["group"], "openreports.io");
    assert_eq!(crd["spec"]["names"]["kind"], "Report");
    assert_eq!(crd["spec"]["versions"][0]["name"], "v1alpha1");
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"].clone()
}

fn audited(spec: Value) -> probegate::cli::input::Checked {
    let w = Workload::from_value(
        WorkloadKind::Deployment,
        &json!({"metadata": {"name": "api", "namespace": "shop"}, "spec": {"template": {"spec": spec}}}),
    )
    .unwrap();
    probegate::audit::evaluate(
        &Policy::default(),
        WorkloadKind::Deployment,
        &w,
        "shop",
        None,
        &Default::default(),
    )
}

#[test]
fn reports_validate_against_the_shipped_crd_schema() {
    let validator = jsonschema::validator_for(&schema()).unwrap();
    let subject = Subject {
        kind: WorkloadKind::Deployment,
        namespace: "shop".into(),
        name: "api".into(),
        uid: "u".into(),
    };
    let dirty =
        audited(json!({"containers": [{"name": "api", "image": "i", "ports": [{"containerPort": 80}],
        "livenessProbe": {"exec": {"command": ["pg_isready", "-h", "db.shop.svc"]}}}]}));
    // No ports, no probes, and it only idles (a toolbox): no rule has anything to say.
    let clean =
        audited(json!({"containers": [{"name": "toolbox", "image": "i", "command": ["sleep", "infinity"]}]}));
    assert!(!dirty.findings.is_empty() && clean.findings.is_empty());
    for c in [&dirty, &clean] {
        for api in [ReportApi::Openreports, ReportApi::Wgpolicyk8s] {
            let (mut report, _) = reports::build(api, &subject, c, "0123456789abcdef");
            reports::stamp(&mut report, 1_800_000_000);
            let errors: Vec<String> = validator.iter_errors(&report).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "{api:?}: {errors:?}\n{report:#}");
        }
    }
    // The schema is not vacuous: a result without `policy` or with an unknown result is refused.
    let (mut bad, _) = reports::build(ReportApi::Openreports, &subject, &dirty, "h");
    bad["results"][0]["result"] = json!("failed");
    assert!(!validator.is_valid(&bad));
    let (mut bad, _) = reports::build(ReportApi::Openreports, &subject, &dirty, "h");
    bad["results"][0].as_object_mut().unwrap().remove("policy");
    assert!(!validator.is_valid(&bad));
    let (mut bad, _) = reports::build(ReportApi::Openreports, &subject, &dirty, "h");
    bad["results"][0]["properties"]["restarts"] = json!(3);
    assert!(!validator.is_valid(&bad));
}

#[test]
fn the_component_rbac_reads_what_the_audit_reads_and_writes_only_reports() {
    let role = component("clusterrole.yaml").remove(0);
    let rules = role["rules"].as_array().unwrap();
    let allowed = |group: &str, resource: &str, verb: &str| {
        rules.iter().any(|r| {
            r["apiGroups"].as_array().unwrap().iter().any(|g| g == group)
                && r["resources"].as_array().unwrap().iter().any(|x| x == resource)
                && r["verbs"].as_array().unwrap().iter().any(|v| v == verb)
        })
    };
    for kind in probegate::audit::cluster::KINDS {
        let (prefix, plural) = probegate::audit::cluster::resource(kind);
        let group = prefix.strip_prefix("/apis/").map_or("", |g| g.split('/').next().unwrap());
        // list for passes, watch for --watch, get for the one object a change names.
        for verb in ["list", "watch", "get"] {
            assert!(allowed(group, plural, verb), "{plural} {verb}");
        }
    }
    assert!(
        allowed("", "events", "list")
            && allowed("", "namespaces", "list")
            && allowed("", "namespaces", "watch")
            && allowed("", "configmaps", "get")
    );
    for (group, plural) in [("openreports.io", "reports"), ("wgpolicyk8s.io", "policyreports")] {
        for verb in ["get", "list", "patch", "delete"] {
            assert!(allowed(group, plural, verb), "{plural} {verb}");
        }
    }
    for r in rules {
        let resources: Vec<&str> =
            r["resources"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        let verbs: Vec<&str> = r["verbs"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        assert!(!resources.contains(&"secrets") && !resources.contains(&"*"), "{r}");
        assert!(
            verbs.iter().all(|v| ["get", "list", "watch", "create", "patch", "delete"].contains(v)),
            "{r}"
        );
        if verbs.contains(&"patch") || verbs.contains(&"create") || verbs.contains(&"delete") {
            assert!(resources.iter().all(|x| x.ends_with("reports")), "{r}");
        }
    }
    let deployment = component("deployment.yaml").remove(0);
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["command"], json!(["/probegate", "audit"]));
    let args: Vec<&str> = container["args"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    for a in ["--watch", "--all-namespaces", "--admin-addr=0.0.0.0:8080"] {
        assert!(args.contains(&a), "{args:?}");
    }
    // The audit's own Pod passes probegate's default policy.
    let w = Workload::from_value(WorkloadKind::Deployment, &deployment).unwrap();
    let e = probegate::admission::evaluate_object(&Policy::default(), &w, "probegate-system", None);
    assert!(e.evaluation.findings.is_empty(), "{:?}", e.evaluation.findings);
    // The Lease Role: its one Lease, nothing else.
    let lease = component("role.yaml").remove(0);
    for r in lease["rules"].as_array().unwrap() {
        assert_eq!(r["resources"], json!(["leases"]), "{r}");
    }
}

#[test]
fn audit_without_a_cluster_is_a_clear_error_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_probegate"))
        .args(["audit", "-A"])
        .env("KUBECONFIG", dir.path().join("missing"))
        .env("HOME", dir.path())
        .env_remove("KUBERNETES_SERVICE_HOST")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot reach the cluster"), "{err}");
    assert!(out.stdout.is_empty());
}
