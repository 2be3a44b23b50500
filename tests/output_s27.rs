//! Session 27 (s27-out): what `check`, `audit` and the webhook tell the user.
//!
//! - A script over the analysis bound (a 20,816-byte ConfigMap script, the shape of OpenShift
//!   cluster-network-operator's 23,931-byte `ovnkube-lib.sh`) sourced by a liveness probe got a
//!   note in `check`'s text output and none in `-o json`, `-o sarif` or `-o junit`; sourced by a
//!   readiness probe it got no note at all, against docs/scripts.md.
//! - kubectl shows a warning cut at 256 characters: the webhook cut its end, the advice and the
//!   host, where the command it quotes is the part the user already has.
//! - `audit` named no policy (the embedded default unless `--policy`), and said "added" and
//!   "raised to the minimum" of live objects that nothing changed.

mod common;

use std::path::{Path, PathBuf};

use probegate::admission::{self, AdmissionResponse, Endpoint, MAX_WARNING_CHARS};
use probegate::cli::check::Report;
use probegate::cli::input::{self, Keep, Level};
use probegate::policy::{self, Policy};
use proptest::prelude::*;
use serde_json::{Value, json};

const FIXTURE: &str = "tests/fixtures/cli/over-bound-scripts.yaml";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `probegate check -o FORMAT FIXTURE` in the crate root: exit code and standard output.
fn check(format: &str, path: &str) -> (i32, String) {
    let o = common::run_in(&root(), &["check", "-o", format, path], None);
    assert!(o.stderr.is_empty(), "{}", String::from_utf8_lossy(&o.stderr));
    (o.status.code().unwrap(), String::from_utf8(o.stdout).unwrap())
}

/// Compares `actual` with `tests/fixtures/golden/NAME` (written by `scripts/regen-goldens.sh`).
fn golden(name: &str, actual: &str) {
    let path = root().join("tests/fixtures/golden").join(name);
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (`scripts/regen-goldens.sh` writes it)", path.display()));
    assert!(
        expected == actual,
        "{name} differs from its golden file (`scripts/regen-goldens.sh`, then review the diff):\n{actual}"
    );
}

/// The goldens pin each format on the fixture: both notes, in every one.
#[test]
fn every_format_carries_the_notes_of_scripts_over_the_bound() {
    for (format, name) in [
        ("text", "notes-s27.txt"),
        ("json", "notes-s27.json"),
        ("sarif", "notes-s27.sarif"),
        ("junit", "notes-s27.xml"),
    ] {
        let (code, out) = check(format, FIXTURE);
        assert_eq!(code, 0, "{name}: notes are never findings\n{out}");
        for probe in ["liveness", "readiness"] {
            let note = format!("{probe} script /bin/bash -c");
            assert!(out.contains(&note), "{name}: no {probe} note\n{out}");
        }
        assert!(out.contains("over the 16384 bytes probegate analyses"), "{name}\n{out}");
        golden(name, &out);
    }
}

/// JSON: a `notAnalysed` entry per script on its object; nothing else changes (no finding).
#[test]
fn json_objects_list_their_scripts_not_analysed() {
    let (_, out) = check("json", FIXTURE);
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["findings"], json!([]));
    let objects = report["objects"].as_array().unwrap();
    for (name, probe) in [("ovn-live", "liveness"), ("ovn-ready", "readiness")] {
        let o = objects.iter().find(|o| o["name"] == name).unwrap();
        let entries = o["notAnalysed"].as_array().unwrap();
        assert_eq!(entries.len(), 1, "{o:#}");
        let e = &entries[0];
        assert_eq!((e["container"].as_str(), e["probe"].as_str()), (Some("nbdb"), Some(probe)), "{e:#}");
        assert_eq!(e["overBound"], true, "{e:#}");
        assert!(e["reason"].as_str().unwrap().contains("20816-byte script"), "{e:#}");
        assert!(e["message"].as_str().unwrap().ends_with("; not a finding"), "{e:#}");
    }
    // An object with nothing unread has an empty list (the field is always there).
    let (_, out) = check("json", "tests/fixtures/cli/app.yaml");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert!(report["objects"].as_array().unwrap().iter().all(|o| o["notAnalysed"] == json!([])), "{out}");
}

/// SARIF: each note is a tool execution notification of level `note` at its file and line, not a
/// result (code scanning would open an alert per result), and the log still validates.
#[test]
fn sarif_notes_are_notifications_and_the_log_validates() {
    let (_, out) = check("sarif", FIXTURE);
    let log: Value = serde_json::from_str(&out).unwrap();
    let run = &log["runs"][0];
    assert_eq!(run["results"], json!([]));
    let notes = run["invocations"][0]["toolExecutionNotifications"].as_array().unwrap();
    assert_eq!(notes.len(), 2, "{notes:#?}");
    for (n, probe) in notes.iter().zip(["liveness", "readiness"]) {
        assert_eq!(n["level"], "note");
        assert_eq!(n["descriptor"]["id"], "probegate/note");
        let text = n["message"]["text"].as_str().unwrap();
        assert!(text.contains(&format!("container nbdb: {probe} script")), "{text}");
        let loc = &n["locations"][0]["physicalLocation"];
        assert_eq!(loc["artifactLocation"]["uri"], FIXTURE);
        assert!(loc["region"]["startLine"].as_u64().unwrap() > 1, "{n:#}");
    }
    assert_eq!(run["invocations"][0]["executionSuccessful"], true);
    let text = std::fs::read_to_string(root().join("tests/fixtures/sarif/sarif-2.1.0-rtm.5.json")).unwrap();
    // As tests/cli.rs reads the published schema's `language` patterns.
    let text = text
        .replace(r#"^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$"#, r#"^[a-zA-Z]{2}$|^[a-zA-Z]{2}-[a-zA-Z]{2}$"#);
    let validator = jsonschema::validator_for(&serde_json::from_str(&text).unwrap()).unwrap();
    let errors: Vec<String> =
        validator.iter_errors(&log).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

/// JUnit: the notes are in the test case's `<system-out>`; no test case fails for one.
#[test]
fn junit_notes_are_in_system_out() {
    let (_, out) = check("junit", FIXTURE);
    assert!(!out.contains("<failure"), "{out}");
    for name in ["ovn-live", "ovn-ready"] {
        let at = out.find(&format!("name=\"Pod ovn/{name} ")).unwrap_or_else(|| panic!("{out}"));
        let case = &out[at..at + out[at..].find("</testcase>").unwrap_or_else(|| panic!("{out}"))];
        assert!(case.contains("<system-out>note: ") && case.contains("not analysed"), "{case}");
    }
}

/// A readiness probe's script over the bound is noted once, in `check` and `audit`, never warned
/// at admission nor listed in `unresolved-scripts` (the liveness probes' scripts only); a script
/// run by both probes is noted once (as the liveness probe's).
#[test]
fn a_readiness_script_over_the_bound_is_noted_not_warned() {
    let docs: Vec<Value> =
        serde_saphyr::from_multiple(&std::fs::read_to_string(root().join(FIXTURE)).unwrap()).unwrap();
    let (configmap, ready) = (&docs[0], &docs[2]);
    assert_eq!(ready["metadata"]["name"], "ovn-ready");
    let workload =
        probegate::engine::Workload::from_value(probegate::engine::WorkloadKind::Pod, ready).unwrap();
    let mut configmaps = probegate::engine::StaticConfigMaps::new();
    let data: std::collections::BTreeMap<String, String> =
        serde_json::from_value(configmap["data"].clone()).unwrap();
    configmaps.insert("ovn", "ovnkube-lib", data);
    let checked = probegate::audit::evaluate(
        &Policy::default(),
        probegate::engine::WorkloadKind::Pod,
        &workload,
        "ovn",
        None,
        &configmaps,
    );
    let e = &checked.evaluation.evaluation;
    assert!(e.unresolved.is_empty(), "{e:?}");
    assert_eq!(e.other_unresolved.len(), 1, "{e:?}");
    assert!(e.other_unresolved[0].over_bound && e.other_unresolved[0].probe == "readiness", "{e:?}");
    // Both probes run the one script: one note.
    let mut both = ready.clone();
    let command = both["spec"]["containers"][0]["readinessProbe"]["exec"].clone();
    both["spec"]["containers"][0]["livenessProbe"] = json!({"exec": command, "timeoutSeconds": 5});
    let workload =
        probegate::engine::Workload::from_value(probegate::engine::WorkloadKind::Pod, &both).unwrap();
    let checked = probegate::audit::evaluate(
        &Policy::default(),
        probegate::engine::WorkloadKind::Pod,
        &workload,
        "ovn",
        None,
        &configmaps,
    );
    let e = &checked.evaluation.evaluation;
    assert_eq!((e.unresolved.len(), e.other_unresolved.len()), (1, 0), "{e:?}");
    assert_eq!(e.unresolved[0].probe, "liveness");
}

/// The webhook on the readiness Pod: no warning, no `unresolved-scripts` (the ConfigMap is not
/// read by a webhook without `--resolve-configmaps` anyway: the script's note is the unread one).
#[test]
fn the_webhook_does_not_warn_of_a_readiness_script() {
    let docs: Vec<Value> =
        serde_saphyr::from_multiple(&std::fs::read_to_string(root().join(FIXTURE)).unwrap()).unwrap();
    let r = respond(&Policy::default(), Endpoint::Validate, &docs[2], None);
    assert!(r.allowed, "{r:?}");
    let warnings = r.warnings.unwrap_or_default();
    assert!(warnings.iter().all(|w| !w.contains("not analysed")), "{warnings:?}");
}

fn respond(policy: &Policy, endpoint: Endpoint, object: &Value, user: Option<&str>) -> AdmissionResponse {
    try_respond(policy, endpoint, object, user).unwrap()
}

/// The webhook's response, or the review error of an object the API server would not send as
/// read here (a YAML `0550` read as a float).
fn try_respond(
    policy: &Policy,
    endpoint: Endpoint,
    object: &Value,
    user: Option<&str>,
) -> Result<AdmissionResponse, String> {
    let review = match user {
        Some(u) => common::review_as("CREATE", object, None, "u", u),
        None => common::review("CREATE", object, None, "u"),
    };
    let body = serde_json::to_vec(&review).unwrap();
    let request = admission::parse_review(&body).map_err(|e| format!("{e:?}"))?;
    Ok(admission::review(policy, None, endpoint, &request).map_err(|e| format!("{e:?}"))?.review.response)
}

/// What a user needs of a warning: its rule id (the end), and, for one that says where it
/// connects and what to do, the host after `reaches ` and the advice after the last `; `.
fn needs(full: &str) -> (String, Option<String>, Option<String>) {
    let rule = full[full.rfind(" (").unwrap()..].to_string();
    let body = &full[..full.len() - rule.len()];
    let host =
        body.split(" reaches ").nth(1).map(|rest| rest.split([' ', ':', ';']).next().unwrap().to_string());
    let advice = body.rsplit_once("; ").map(|(_, a)| a.to_string()).filter(|a| a.len() < 80);
    (rule, host, advice)
}

/// Every warning of `object` (validate and mutate, enforce and audit, made by a user and by the
/// ReplicaSet controller with an owner) fits in the bound and keeps what `needs` names of its
/// whole text (the `full-warnings` annotation keeps the whole of each shortened one).
fn assert_warnings_fit(object: &Value, what: &str) {
    let enforce = Policy::default();
    let audit =
        policy::parse("apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\nmode: audit\n", "a.yaml")
            .unwrap();
    let mut owned = object.clone();
    owned["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "api-6d4f9c7b8d", "uid": "x", "controller": true}]);
    for (policy, object, user) in [
        (&enforce, object, None),
        (&audit, object, None),
        (&enforce, &owned, Some(common::REPLICASET_CONTROLLER)),
    ] {
        for endpoint in [Endpoint::Validate, Endpoint::Mutate] {
            let Ok(r) = try_respond(policy, endpoint, object, user) else {
                return;
            };
            let warnings = r.warnings.clone().unwrap_or_default();
            for w in &warnings {
                assert!(w.chars().count() <= MAX_WARNING_CHARS, "{what}: {} chars: {w}", w.chars().count());
            }
            let Some(full) = r.audit_annotations.as_ref().and_then(|a| a.get("full-warnings")) else {
                continue;
            };
            let full: Vec<String> = serde_json::from_str(full).unwrap();
            for f in full.iter().filter(|f| f.ends_with(')') && !f.contains(" more findings")) {
                let (rule, host, advice) = needs(f);
                let kept = warnings.iter().any(|w| {
                    w.ends_with(&rule)
                        && host.as_ref().is_none_or(|h| w.contains(h.as_str()))
                        && advice.as_ref().is_none_or(|a| w.contains(a.as_str()))
                });
                assert!(
                    kept,
                    "{what}: the shortened warning lost its rule, host or advice:\n{f}\n{warnings:#?}"
                );
            }
        }
    }
}

/// The corpus: every workload of every fixture file.
#[test]
fn corpus_warnings_fit_and_keep_rule_host_and_advice() {
    let mut seen = 0;
    for dir in ["tests/fixtures/corpus", "tests/fixtures/configmaps", "tests/fixtures/cli"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .collect();
        files.sort();
        for file in files {
            let Ok(docs) = serde_saphyr::from_multiple::<Value>(&std::fs::read_to_string(&file).unwrap())
            else {
                continue;
            };
            for doc in docs.iter().filter(|d| d["kind"] == "Pod" || d["spec"]["template"]["spec"].is_object())
            {
                seen += 1;
                assert_warnings_fit(doc, &file.display().to_string());
            }
        }
    }
    assert!(seen > 30, "{seen}");
}

/// The deny-hunt shape: a liveness `sh -c` with a long command line before its host (curl's
/// headers, pg_isready's options), long container names, a long host.
fn long_pod(container: &str, pads: &[String], host: &str, curl: bool) -> Value {
    let script = if curl {
        format!(
            "curl -fsS {} https://{host}:8443/internal/health/deep",
            pads.iter().map(|p| format!("-H 'X-{p}: 1'")).collect::<Vec<_>>().join(" ")
        )
    } else {
        format!(
            "pg_isready {} -h {host} -p 5432",
            pads.iter().map(|p| format!("-d {p}")).collect::<Vec<_>>().join(" ")
        )
    };
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "api-6d4f9c7b8d-x2x9z", "namespace": "shop"},
        "spec": {"containers": [{"name": container, "image": "img",
            "livenessProbe": {"exec": {"command": ["sh", "-c", script]}, "timeoutSeconds": 5}}]}})
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Generated long liveness commands: each warning fits and keeps rule, host and advice. Names as
    /// long as most (a container of at most 16 characters, a host of at most 36): past those, with a
    /// trusted controller's prefix and a URL, rule, host and advice alone can pass 255 characters.
    #[test]
    fn long_warnings_fit_and_keep_rule_host_and_advice(
        container in "[a-z][a-z0-9-]{0,14}[a-z0-9]",
        pads in prop::collection::vec("[a-z][a-z0-9]{2,14}", 0..16),
        host in "[a-z][a-z0-9-]{3,18}[a-z]\\.[a-z]{2,10}\\.svc",
        curl in any::<bool>(),
    ) {
        assert_warnings_fit(&long_pod(&container, &pads, &host, curl), &format!("{container} {host}"));
    }
}

/// The pinned case: the trusted-controller warning kept its host and advice (it ended `-c…` and
/// `move that check to…`).
#[test]
fn a_trusted_controller_warning_keeps_its_host_and_advice() {
    let pads: Vec<String> = ["x-request-source", "accept-encoding", "x-forwarded-proto", "authorization"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut pod = long_pod("payments-gateway", &pads, "payments-gateway.payments-prod.svc", true);
    pod["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "api-6d4f9c7b8d", "uid": "x", "controller": true}]);
    let r = respond(&Policy::default(), Endpoint::Validate, &pod, Some(common::REPLICASET_CONTROLLER));
    let warnings = r.warnings.unwrap();
    let w = warnings
        .iter()
        .find(|w| w.ends_with("(liveness-dependency)"))
        .unwrap_or_else(|| panic!("{warnings:?}"));
    assert!(w.chars().count() <= MAX_WARNING_CHARS, "{w}");
    assert!(w.starts_with("probegate: not denied ("), "{w}");
    assert!(
        w.contains("replicaset-controller creates it): container payments-gateway: livenessProbe `curl -fsS"),
        "{w}"
    );
    assert!(w.contains("payments-gateway.payments-prod.svc"), "{w}");
    assert!(w.contains("; move that check to readinessProbe (liveness-dependency)"), "{w}");
}

/// The report of `check` on `paths` (embedded policy unless `policy`), as `audit` writes it.
fn audit_text(paths: &[&str], policy: Option<&Path>) -> String {
    let (policy, _, origin) = probegate::cli::load_policy(policy).unwrap();
    let paths: Vec<PathBuf> = paths.iter().map(|p| root().join(p)).collect();
    let (files, errors, _) =
        input::analyze_all(&policy, &paths, &mut std::io::empty(), "default", Keep::Findings);
    let report = Report::new(origin, Level::Deny, files, errors);
    let mut out = Vec::new();
    probegate::audit::write_text(&report, false, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// `audit` names its policy first, and says what a patch WOULD do: it changes nothing.
#[test]
fn audit_names_its_policy_and_says_would() {
    let out = audit_text(&["tests/fixtures/cli/app.yaml"], None);
    assert_eq!(
        out.lines().next(),
        Some("policy: embedded default policy (--policy FILE to judge by the webhook's)"),
        "{out}"
    );
    assert!(out.contains("would add a 5 s preStop sleep action (prestop-sleep)"), "{out}");
    for done in ["added", "raised to the minimum"] {
        assert!(!out.contains(done), "{done:?} in:\n{out}");
    }
    let file = root().join("policies/audit-rollout.yaml");
    let out = audit_text(&["tests/fixtures/cli/app.yaml"], Some(&file));
    assert_eq!(out.lines().next(), Some(format!("policy: {}", file.display()).as_str()), "{out}");
    // `check` is about files, which `fix` changes: its words stay.
    let (_, out) = check("text", "tests/fixtures/cli/app.yaml");
    assert!(out.contains("added a 5 s preStop sleep action"), "{out}");
}

/// The policy report (`audit --write-reports`) says "would add" too.
#[test]
fn a_policy_report_says_would() {
    let w = probegate::engine::Workload::from_value(
        probegate::engine::WorkloadKind::Deployment,
        &json!({"metadata": {"name": "api", "namespace": "shop"}, "spec": {"template": {"spec": {"containers": [{
            "name": "api", "image": "i", "ports": [{"containerPort": 80}],
            "livenessProbe": {"httpGet": {"path": "/healthz", "port": 80}}}]}}}}),
    )
    .unwrap();
    let checked = probegate::audit::evaluate(
        &Policy::default(),
        probegate::engine::WorkloadKind::Deployment,
        &w,
        "shop",
        None,
        &Default::default(),
    );
    let subject = probegate::audit::reports::Subject {
        kind: probegate::engine::WorkloadKind::Deployment,
        namespace: "shop".into(),
        name: "api".into(),
        uid: "u".into(),
    };
    let (report, _) = probegate::audit::reports::build(
        probegate::audit::reports::ReportApi::Openreports,
        &subject,
        &checked,
        "h",
    );
    let messages: Vec<&str> =
        report["results"].as_array().unwrap().iter().filter_map(|r| r["message"].as_str()).collect();
    assert!(messages.iter().any(|m| m.contains("would add")), "{messages:?}");
    assert!(
        messages.iter().all(|m| !m.contains("added") && !m.contains("raised to the minimum")),
        "{messages:?}"
    );
}
