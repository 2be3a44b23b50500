//! Policy reports for audited workloads (pure: the shell writes them and adds the timestamps).
//!
//! One report per audited workload, in its namespace, in one of two APIs whose result shape is the
//! same (checked against the published CRDs: openreports/reports-api
//! `apis/openreports.io/v1alpha1/report_types.go`, and kubernetes-sigs/wg-policy-prototypes
//! `policy-report/crd/v1alpha2/wgpolicyk8s.io_*policyreports.yaml`):
//! - `openreports.io/v1alpha1` `Report` (the default), with a top-level `source`;
//! - `wgpolicyk8s.io/v1alpha2` `PolicyReport`, which Kyverno and Kubewarden write too and which
//!   has no top-level `source` (each result carries it).
//!
//! Every report has `scope` (the workload), an `ownerReference` to it (the garbage collector
//! deletes the report with the workload), `source: probegate` on each result, and one result per
//! rule and container finding: `fail` (a finding the webhook would deny), `warn` (one it would warn
//! about or patch), plus one `pass` per rule in force that found nothing and one `skip` per rule
//! the object's `probegate.dev/skip` annotation skipped; `summary` counts them. `properties` are
//! strings (the CRDs say `additionalProperties: {type: string}`): on a finding, the container, the
//! runtime evidence and the policy hash ([`Detail::Lean`], what the issue asks for; every field
//! the API server decodes, validates and tracks in `managedFields` costs it CPU on each write).
//!
//! Severity uses only `high`, `medium` and `low`, the values both CRDs accept (v1alpha2 has no
//! `critical` or `info`).
//!
//! A report's content hash (annotation [`HASH_ANNOTATION`]) covers everything but timestamps, so a
//! writer can skip a report whose content did not change.

use serde_json::{Value, json};

use crate::cli::input::{Checked, Level};
use crate::engine::WorkloadKind;
use crate::policy::{Action, RuleId};

/// Which report API to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportApi {
    /// `openreports.io/v1alpha1` `Report`.
    Openreports,
    /// `wgpolicyk8s.io/v1alpha2` `PolicyReport`.
    Wgpolicyk8s,
}

impl ReportApi {
    /// The `apiVersion`.
    pub fn api_version(self) -> &'static str {
        match self {
            ReportApi::Openreports => "openreports.io/v1alpha1",
            ReportApi::Wgpolicyk8s => "wgpolicyk8s.io/v1alpha2",
        }
    }

    /// The `kind`.
    pub fn kind(self) -> &'static str {
        match self {
            ReportApi::Openreports => "Report",
            ReportApi::Wgpolicyk8s => "PolicyReport",
        }
    }

    /// The API path of the reports in a namespace.
    pub fn path(self, namespace: &str) -> String {
        match self {
            ReportApi::Openreports => format!("/apis/openreports.io/v1alpha1/namespaces/{namespace}/reports"),
            ReportApi::Wgpolicyk8s => {
                format!("/apis/wgpolicyk8s.io/v1alpha2/namespaces/{namespace}/policyreports")
            }
        }
    }
}

/// The `source` of every report and result.
pub const SOURCE: &str = "probegate";
/// The `policy` of every result.
pub const POLICY: &str = "probegate";
/// The `category` of every result (Policy Reporter groups results by it).
pub const CATEGORY: &str = "Health probes";
/// Label on every report probegate writes (value `probegate`).
pub const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";
/// Annotation with the hash of a report's content (timestamps excluded).
pub const HASH_ANNOTATION: &str = "probegate.dev/report-hash";
/// Annotation with the hash of the policy in force (findings carry it in `properties` too; a
/// report of `pass` results alone has it only here), so that every report says which policy
/// produced it and is rewritten when the policy changes.
pub const POLICY_HASH_ANNOTATION: &str = "probegate.dev/policy-hash";

/// The `apiVersion` of a workload kind (Kubernetes API reference).
pub fn workload_api_version(kind: WorkloadKind) -> &'static str {
    match kind {
        WorkloadKind::Pod | WorkloadKind::ReplicationController => "v1",
        WorkloadKind::Job | WorkloadKind::CronJob => "batch/v1",
        _ => "apps/v1",
    }
}

/// The audited workload a report is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subject {
    /// Its kind.
    pub kind: WorkloadKind,
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.uid` (for the ownerReference and `scope`).
    pub uid: String,
}

/// The report's name: `probegate-KIND-NAME` in lower case, at most 253 characters (a longer one is
/// cut and ends with 8 hex digits of the uid, so it stays unique).
pub fn report_name(subject: &Subject) -> String {
    let name = format!("probegate-{}-{}", subject.kind.as_str().to_ascii_lowercase(), subject.name);
    if name.len() <= 253 {
        return name;
    }
    let digest = ring::digest::digest(&ring::digest::SHA256, subject.uid.as_bytes());
    let suffix: String = digest.as_ref().iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("{}-{suffix}", name[..244].trim_end_matches(['-', '.']))
}

/// Which fields a report carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Detail {
    /// Results with `source`, `policy`, `rule`, `category` (Policy Reporter groups by it),
    /// `result`, `message`, a finding's `severity` and `properties` (`container`, the evidence,
    /// `policyHash`, a `note` when there is one); a `pass` or `skip` has no properties.
    #[default]
    Lean,
    /// As before 2026-12-02, kept to measure against: also `scored` and properties `mode` and
    /// `action` on every finding, `mode` and `policyHash` on every `pass` and `skip`.
    Full,
}

/// `fail` for a finding the webhook would deny, else `warn`.
fn result_of(level: Level) -> &'static str {
    match level {
        Level::Deny => "fail",
        Level::Warn | Level::Fix | Level::Info => "warn",
    }
}

/// `high` for deny, `medium` for warn, `low` for what the webhook would fix and for `info` advice.
fn severity_of(level: Level) -> &'static str {
    match level {
        Level::Deny => "high",
        Level::Warn => "medium",
        // The v1alpha2 PolicyReport CRD has no `info` severity: advice ranks with fixes.
        Level::Fix | Level::Info => "low",
    }
}

/// Builds the report of one audited object (without timestamps, [`Detail::Lean`]) and its content
/// hash. `policy_hash` identifies the policy in force (see [`crate::server::policy_hash`]).
pub fn build(api: ReportApi, subject: &Subject, checked: &Checked, policy_hash: &str) -> (Value, String) {
    build_with(api, subject, checked, policy_hash, Detail::Lean)
}

/// [`build`] with the given [`Detail`].
pub fn build_with(
    api: ReportApi,
    subject: &Subject,
    checked: &Checked,
    policy_hash: &str,
    detail: Detail,
) -> (Value, String) {
    let full = detail == Detail::Full;
    let scope = json!({
        "apiVersion": workload_api_version(subject.kind),
        "kind": subject.kind.as_str(),
        "namespace": subject.namespace,
        "name": subject.name,
        "uid": subject.uid,
    });
    let mut results = Vec::new();
    let (mut pass, mut fail, mut warn, mut skip) = (0, 0, 0, 0);
    let mode = checked.evaluation.effective.mode.as_str();
    for r in &checked.findings {
        let mut properties = serde_json::Map::new();
        properties.insert("container".into(), json!(r.finding.container));
        if full {
            properties.insert("action".into(), json!(r.finding.action.as_str()));
            properties.insert("mode".into(), json!(mode));
        }
        properties.insert("policyHash".into(), json!(policy_hash));
        if let Some(note) = &r.note {
            properties.insert("note".into(), json!(note));
        }
        if let Some(e) = &r.evidence {
            properties.insert("evidence".into(), json!(e.summary));
            properties.insert("restarts".into(), json!(e.restarts.to_string()));
            if let Some(k) = e.liveness_kills {
                properties.insert("livenessKills".into(), json!(k.to_string()));
            }
        }
        let result = result_of(r.level);
        match result {
            "fail" => fail += 1,
            _ => warn += 1,
        }
        let mut one = json!({
            "source": SOURCE,
            "policy": POLICY,
            "rule": r.finding.rule.as_str(),
            "category": CATEGORY,
            "result": result,
            "severity": severity_of(r.level),
            // What the patch would do ("would add"): the report is about a live object that
            // nothing changed (s27: it said "added").
            "message": r.finding.describe_dry_run(),
            "properties": properties,
        });
        if full {
            one["scored"] = json!(true);
        }
        results.push(one);
    }
    for rule in RuleId::ALL {
        if checked.findings.iter().any(|r| r.finding.rule == rule) {
            continue;
        }
        let skipped = checked.evaluation.skip.skipped.contains(&rule);
        let off = checked.evaluation.effective.rules.action(rule) == Action::Off
            || checked.evaluation.effective.mode == crate::policy::Mode::Off;
        let (result, message) = match (skipped, off) {
            (true, _) => ("skip", "skipped by the probegate.dev/skip annotation".to_string()),
            (false, true) => continue,
            (false, false) => ("pass", format!("no container breaks {rule}")),
        };
        match result {
            "skip" => skip += 1,
            _ => pass += 1,
        }
        let mut one = json!({
            "source": SOURCE,
            "policy": POLICY,
            "rule": rule.as_str(),
            "category": CATEGORY,
            "result": result,
            "message": message,
        });
        if full {
            one["scored"] = json!(true);
            one["properties"] = json!({"mode": mode, "policyHash": policy_hash});
        }
        results.push(one);
    }
    let mut report = json!({
        "apiVersion": api.api_version(),
        "kind": api.kind(),
        "metadata": {
            "name": report_name(subject),
            "namespace": subject.namespace,
            "labels": {MANAGED_BY_LABEL: SOURCE},
            "ownerReferences": [{
                "apiVersion": workload_api_version(subject.kind),
                "kind": subject.kind.as_str(),
                "name": subject.name,
                "uid": subject.uid,
            }],
        },
        "scope": scope,
        "summary": {"pass": pass, "fail": fail, "warn": warn, "error": 0, "skip": skip},
        "results": results,
    });
    if api == ReportApi::Openreports {
        report["source"] = json!(SOURCE);
    }
    if !full {
        report["metadata"]["annotations"] = json!({POLICY_HASH_ANNOTATION: policy_hash});
    }
    let hash = content_hash(&report);
    if full {
        report["metadata"]["annotations"] = json!({HASH_ANNOTATION: hash});
    } else {
        report["metadata"]["annotations"][HASH_ANNOTATION] = json!(hash);
    }
    (report, hash)
}

/// 16 hex digits of the SHA-256 of the report's JSON (as built, before the hash annotation and
/// timestamps are added).
fn content_hash(report: &Value) -> String {
    let bytes = serde_json::to_vec(report).unwrap_or_default();
    let digest = ring::digest::digest(&ring::digest::SHA256, &bytes);
    digest.as_ref().iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// Sets every result's `timestamp` (`{seconds, nanos}`, as both CRDs define it) to `seconds`
/// since the Unix epoch: when the content was written.
pub fn stamp(report: &mut Value, seconds: i64) {
    if let Some(results) = report.get_mut("results").and_then(Value::as_array_mut) {
        for r in results {
            r["timestamp"] = json!({"seconds": seconds, "nanos": 0});
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::evidence::Evidence;
    use crate::engine::Workload;
    use crate::policy::Policy;

    fn checked(policy: &Policy, annotations: serde_json::Value) -> Checked {
        let w = Workload::from_value(
            WorkloadKind::Deployment,
            &json!({
                "metadata": {"name": "api", "namespace": "shop"},
                "spec": {"template": {"metadata": {"annotations": annotations}, "spec": {"containers": [{
                    "name": "api", "image": "i", "ports": [{"containerPort": 8080}],
                    "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}, "timeoutSeconds": 3},
                    "livenessProbe": {"exec": {"command": ["sh", "-c", "pg_isready -h db.shop.svc"]}, "timeoutSeconds": 3},
                    "startupProbe": {"httpGet": {"path": "/live", "port": 8080}},
                }]}}}
            }),
        )
        .unwrap();
        crate::audit::evaluate(policy, WorkloadKind::Deployment, &w, "shop", None, &Default::default())
    }

    fn subject() -> Subject {
        Subject {
            kind: WorkloadKind::Deployment,
            namespace: "shop".into(),
            name: "api".into(),
            uid: "u-1".into(),
        }
    }

    #[test]
    fn a_report_has_scope_owner_results_and_summary() {
        let policy = Policy::default();
        let mut c = checked(&policy, json!({}));
        let dep = c.findings.iter_mut().find(|r| r.finding.rule == RuleId::LivenessDependency).unwrap();
        dep.evidence = Some(Evidence {
            container: "api".into(),
            pods: 2,
            restarts: 7,
            summary: "7 restarts".into(),
            ..Default::default()
        });
        let (r, hash) = build(ReportApi::Openreports, &subject(), &c, "abc");
        assert_eq!(r["apiVersion"], "openreports.io/v1alpha1");
        assert_eq!(r["kind"], "Report");
        assert_eq!(r["source"], "probegate");
        assert_eq!(r["metadata"]["name"], "probegate-deployment-api");
        assert_eq!(
            r["metadata"]["ownerReferences"][0],
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "api", "uid": "u-1"})
        );
        assert_eq!(r["scope"]["uid"], "u-1");
        assert_eq!(r["metadata"]["annotations"][HASH_ANNOTATION], hash);
        let results = r["results"].as_array().unwrap();
        let dep = results.iter().find(|x| x["rule"] == "liveness-dependency").unwrap();
        assert_eq!((dep["result"].as_str(), dep["severity"].as_str()), (Some("fail"), Some("high")));
        assert_eq!(dep["properties"]["evidence"], "7 restarts");
        assert_eq!(dep["properties"]["restarts"], "7");
        assert_eq!(dep["properties"]["policyHash"], "abc");
        assert_eq!(dep["properties"]["container"], "api");
        // Every property is a string, as the CRDs require.
        for x in results {
            let properties = x.get("properties").and_then(Value::as_object);
            assert!(properties.into_iter().flat_map(|p| p.values()).all(Value::is_string), "{x}");
        }
        let fails = results.iter().filter(|x| x["result"] == "fail").count();
        let passes = results.iter().filter(|x| x["result"] == "pass").count();
        assert_eq!(r["summary"]["fail"], fails);
        assert_eq!(r["summary"]["pass"], passes);
        assert!(passes > 0 && fails == 1, "{r}");
        assert_eq!(results.len(), 6.max(results.len()));
        // wgpolicyk8s: no top-level source.
        let (w, _) = build(ReportApi::Wgpolicyk8s, &subject(), &c, "abc");
        assert_eq!(
            (w["apiVersion"].as_str(), w["kind"].as_str()),
            (Some("wgpolicyk8s.io/v1alpha2"), Some("PolicyReport"))
        );
        assert!(w.get("source").is_none());
    }

    #[test]
    fn a_lean_report_carries_what_the_issue_lists_and_a_full_one_more() {
        let policy = Policy::default();
        let c = checked(&policy, json!({}));
        let (lean, lean_hash) = build(ReportApi::Openreports, &subject(), &c, "abc");
        let results = lean["results"].as_array().unwrap();
        let dep = results.iter().find(|x| x["rule"] == "liveness-dependency").unwrap();
        let keys = |v: &Value| {
            let mut k = v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
            k.sort();
            k
        };
        assert_eq!(
            keys(dep),
            ["category", "message", "policy", "properties", "result", "rule", "severity", "source"],
            "{dep}"
        );
        assert_eq!(keys(&dep["properties"]), ["container", "policyHash"], "{dep}");
        let pass = results.iter().find(|x| x["result"] == "pass").unwrap();
        assert_eq!(keys(pass), ["category", "message", "policy", "result", "rule", "source"], "{pass}");
        assert_eq!(lean["metadata"]["annotations"][POLICY_HASH_ANNOTATION], "abc");
        let (full, full_hash) = build_with(ReportApi::Openreports, &subject(), &c, "abc", Detail::Full);
        let dep =
            full["results"].as_array().unwrap().iter().find(|x| x["rule"] == "liveness-dependency").unwrap();
        assert_eq!(dep["scored"].as_bool(), Some(true));
        assert_eq!(
            (dep["properties"]["action"].as_str(), dep["properties"]["mode"].as_str()),
            (Some("deny"), Some("enforce"))
        );
        let pass = full["results"].as_array().unwrap().iter().find(|x| x["result"] == "pass").unwrap();
        assert_eq!(pass["properties"]["policyHash"], "abc");
        // Same verdicts, same counts; different content, so a different hash.
        assert_eq!(lean["summary"], full["summary"]);
        assert_eq!(lean["results"].as_array().unwrap().len(), full["results"].as_array().unwrap().len());
        assert_ne!(lean_hash, full_hash);
        assert!(serde_json::to_vec(&lean).unwrap().len() < serde_json::to_vec(&full).unwrap().len());
    }

    #[test]
    fn the_hash_follows_content_not_time() {
        let policy = Policy::default();
        let c = checked(&policy, json!({}));
        let (mut a, ha) = build(ReportApi::Openreports, &subject(), &c, "abc");
        stamp(&mut a, 1_700_000_000);
        assert_eq!(a["results"][0]["timestamp"], json!({"seconds": 1_700_000_000, "nanos": 0}));
        let (_, hb) = build(ReportApi::Openreports, &subject(), &c, "abc");
        assert_eq!(ha, hb);
        let (_, hc) = build(ReportApi::Openreports, &subject(), &c, "other-policy");
        assert_ne!(ha, hc);
    }

    #[test]
    fn skipped_rules_are_skip_results() {
        let mut policy = Policy::default();
        policy.exemptions.annotation_rules = vec![RuleId::PrestopSleep];
        let c = checked(&policy, json!({"probegate.dev/skip": "prestop-sleep"}));
        let (r, _) = build(ReportApi::Openreports, &subject(), &c, "abc");
        let skip: Vec<&Value> =
            r["results"].as_array().unwrap().iter().filter(|x| x["result"] == "skip").collect();
        assert_eq!(skip.len(), 1, "{r}");
        assert_eq!(skip[0]["rule"], "prestop-sleep");
        assert_eq!(r["summary"]["skip"], 1);
    }

    #[test]
    fn long_names_are_cut_and_stay_unique() {
        let mut s = subject();
        s.name = "a".repeat(253);
        let n = report_name(&s);
        assert!(n.len() <= 253, "{}", n.len());
        s.uid = "u-2".into();
        assert_ne!(report_name(&s), n);
    }
}
