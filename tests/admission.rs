//! The admission glue, in process: who may pass a Pod as a mirror Pod, where refused skip
//! annotations are reported, and the warning bound. Each case was a surviving mutation (issue 15).

mod common;

use probegate::admission::{self, Decision, Endpoint, MAX_DENIAL_CHARS, MAX_WARNINGS};
use probegate::policy::{Policy, SKIP_ANNOTATION};
use serde_json::{Value, json};

/// A Pod whose liveness probe checks a database on another host (denied at /validate).
fn coupled_pod() -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "api", "namespace": "shop"}, "spec": {
        "containers": [{"name": "api", "image": "api:1",
            "livenessProbe": {"exec": {"command": ["pg_isready", "-h", "orders-db.prod.svc"]}}}]}})
}

/// A Pod no rule fires on: a run-to-completion Pod (`restartPolicy: Never`, so not a long-running
/// worker that `worker-liveness-missing` asks a liveness probe of), one container, no ports, no probes.
fn clean_pod() -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "worker", "namespace": "shop"},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "worker", "image": "w:1"}]}})
}

fn decide(endpoint: Endpoint, object: &Value, username: &str) -> Decision {
    let groups = if username.starts_with("system:node:") { json!(["system:nodes"]) } else { json!([]) };
    decide_as(endpoint, object, json!({"username": username, "groups": groups}))
}

fn decide_as(endpoint: Endpoint, object: &Value, user_info: Value) -> Decision {
    let mut body = common::review("CREATE", object, None, "u1");
    body["request"]["userInfo"] = user_info;
    let request = admission::parse_review(&serde_json::to_vec(&body).unwrap()).unwrap();
    admission::review(&Policy::default(), None, endpoint, &request).unwrap()
}

#[test]
fn only_a_node_identity_passes_a_pod_as_a_mirror_pod() {
    let mut mirror = coupled_pod();
    mirror["metadata"]["annotations"] = json!({"kubernetes.io/config.mirror": "hash"});
    // The kubelet's identity is `system:node:NODENAME` (Kubernetes docs, "Using Node Authorization").
    for user in ["system:node:worker-1", "system:node:ip-10-0-0-1.ec2.internal"] {
        let d = decide(Endpoint::Validate, &mirror, user);
        assert!(d.review.response.allowed, "{user}");
        assert_eq!(d.summary.skipped, Some("mirror pod"), "{user}");
    }
    // Every other identity, system ones included, is evaluated (and this Pod is denied).
    for user in [
        "system:admin",
        "system:kube-scheduler",
        "system:serviceaccount:kube-system:replicaset-controller",
        "system:nodes",
        "system:node",
        "alice",
        "",
    ] {
        let d = decide(Endpoint::Validate, &mirror, user);
        assert!(!d.review.response.allowed, "{user:?} must not pass a Pod as a mirror Pod");
        assert_eq!(d.summary.skipped, None, "{user:?}");
        assert_eq!(d.review.response.status.as_ref().unwrap().code, 403, "{user:?}");
    }
    // A node's name without the group, an empty or padded node name, the group without the name:
    // not a kubelet (Kubernetes' node identifier needs both).
    for user_info in [
        json!({"username": "system:node:worker-1"}),
        json!({"username": "system:node:worker-1", "groups": null}),
        json!({"username": "system:node:", "groups": ["system:nodes"]}),
        json!({"username": "system:node:worker-1 ", "groups": ["system:nodes"]}),
        json!({"username": "system:serviceaccount:x:y", "groups": ["system:nodes"]}),
    ] {
        let d = decide_as(Endpoint::Validate, &mirror, user_info.clone());
        assert!(!d.review.response.allowed, "{user_info} must not pass a Pod as a mirror Pod");
    }
    // Without the annotation a node identity gets no pass either.
    assert!(!decide(Endpoint::Validate, &coupled_pod(), "system:node:worker-1").review.response.allowed);
}

#[test]
fn refused_skip_entries_are_warned_at_validate_only() {
    let mut pod = clean_pod();
    pod["metadata"]["annotations"] = json!({SKIP_ANNOTATION: "liveness-dependency,no-such-rule"});
    let v = decide(Endpoint::Validate, &pod, "alice").review.response;
    let warnings = v.warnings.unwrap_or_default();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].contains("cannot skip liveness-dependency"), "{warnings:?}");
    assert!(warnings[1].contains("unknown rule \"no-such-rule\""), "{warnings:?}");
    // The same request at /mutate: the API server calls both; warning twice would repeat it.
    let m = decide(Endpoint::Mutate, &pod, "alice");
    assert_eq!(m.review.response.warnings, None, "{:?}", m.review.response);
    assert_eq!(m.summary.warnings, 0);
}

#[test]
fn at_most_twelve_warnings_the_last_counting_the_rest() {
    // Every unknown rule in the skip annotation is one warning at /validate, on a Pod with no
    // other finding: exactly `n` warnings go into the bound.
    let warnings_for = |n: usize| {
        let mut pod = clean_pod();
        let ids: Vec<String> = (1..=n).map(|i| format!("rule-{i}")).collect();
        pod["metadata"]["annotations"] = json!({SKIP_ANNOTATION: ids.join(",")});
        decide(Endpoint::Validate, &pod, "alice").review.response.warnings.unwrap_or_default()
    };
    assert_eq!(MAX_WARNINGS, 12);
    let twelve = warnings_for(12);
    assert_eq!(twelve.len(), 12, "{twelve:#?}");
    assert!(twelve[11].contains("\"rule-12\""), "the twelfth warning is kept: {twelve:#?}");
    assert!(twelve.iter().all(|w| !w.contains("more findings")), "{twelve:#?}");
    let thirteen = warnings_for(13);
    assert_eq!(thirteen.len(), 12, "{thirteen:#?}");
    assert!(thirteen[10].contains("\"rule-11\""), "{thirteen:#?}");
    assert_eq!(thirteen[11], "probegate: and 2 more findings; run `probegate check` on the manifest for all");
    assert_eq!(warnings_for(11).len(), 11);
}

#[test]
fn a_huge_skip_annotation_is_cheap_and_echoed_only_in_part() {
    // About the API server's whole annotation budget (256 KiB) in one unknown word: no did-you-mean
    // comparison with every rule id (it cost seconds per request), and the warning quotes an excerpt.
    let mut pod = clean_pod();
    pod["metadata"]["annotations"] = json!({SKIP_ANNOTATION: "x".repeat(250_000)});
    let warnings = decide(Endpoint::Validate, &pod, "alice").review.response.warnings.unwrap_or_default();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("names unknown rule") && warnings[0].len() < 300,
        "{}",
        &warnings[0][..300.min(warnings[0].len())]
    );
    assert!(!warnings[0].contains("did you mean"));
    // A short typo still gets its suggestion.
    pod["metadata"]["annotations"] = json!({SKIP_ANNOTATION: "prestop-slep"});
    let warnings = decide(Endpoint::Validate, &pod, "alice").review.response.warnings.unwrap_or_default();
    assert!(warnings[0].contains("did you mean \"prestop-sleep\""), "{warnings:?}");
}

#[test]
fn a_denial_lists_violations_up_to_8_kib_and_counts_the_rest() {
    // One coupled liveness probe per container, each naming its own database host.
    let pod_with = |n: usize| {
        let containers: Vec<Value> = (0..n)
            .map(|i| {
                let host = format!("orders-db-{i:03}-{}.prod.svc", "x".repeat(100));
                json!({"name": format!("api-{i:03}"), "image": "api:1",
                    "livenessProbe": {"exec": {"command": ["pg_isready", "-h", host]}}})
            })
            .collect();
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "api", "namespace": "shop"},
            "spec": {"containers": containers}})
    };
    let message = |n: usize| {
        let d = decide(Endpoint::Validate, &pod_with(n), "alice");
        assert!(!d.review.response.allowed);
        let status = d.review.response.status.unwrap();
        assert_eq!(status.code, 403);
        status.message.strip_prefix("probegate denied Pod shop/api: ").unwrap().to_string()
    };
    assert_eq!(MAX_DENIAL_CHARS, 8 * 1024);
    // A few: every one listed, in container order, separated by "; ", nothing counted. (A
    // violation's text has a "; " of its own: split where the next container's starts.)
    let few = message(3);
    let listed: Vec<&str> = few.split("; container ").collect();
    assert_eq!(listed.len(), 3, "{few}");
    for (i, text) in listed.iter().enumerate() {
        assert!(text.contains(&format!("orders-db-{i:03}-")), "{text}");
    }
    // Many (about 200 characters each, 25 KiB in all): listed while they fit in 8 KiB, the rest
    // counted, and the list is filled (the next one would not have fit).
    let many = message(120);
    let (list, rest) = many.rsplit_once("; and ").expect("the rest is counted");
    let counted: usize = rest.strip_suffix(" more").unwrap().parse().unwrap();
    let listed: Vec<&str> = list.split("; container ").collect();
    assert_eq!(listed.len() + counted, 120, "{many}");
    let longest = listed.iter().map(|t| t.len()).max().unwrap();
    assert!(longest > 150 && longest < 400, "{longest}");
    // (8 KiB written out: the constant is what is under test.)
    assert!(list.len() <= 8 * 1024 + 2, "{}", list.len());
    assert!(list.len() + longest > 8 * 1024, "only {} characters listed", list.len());
    assert!(listed[listed.len() - 1].contains(&format!("orders-db-{:03}-", listed.len() - 1)));
}

#[test]
fn the_summary_names_the_request_for_logs_and_metrics() {
    // What the server logs and counts for a decision: the request's uid, kind, namespace, name and
    // operation (five fields whose deletion no other in-process test noticed).
    let d = decide(Endpoint::Validate, &coupled_pod(), "alice");
    let s = &d.summary;
    assert_eq!(
        (s.uid.as_str(), s.kind.as_str(), s.namespace.as_str(), s.name.as_str(), s.operation.as_str()),
        ("u1", "Pod", "shop", "api", "CREATE")
    );
    assert!(s.denied && !d.review.response.allowed);
    assert_eq!(d.review.response.uid, "u1");
    // A request skipped before the object is read (a DELETE) is named from the request itself.
    let mut body = common::review("DELETE", &coupled_pod(), None, "u2");
    body["request"]["oldObject"] = body["request"]["object"].take();
    let request = admission::parse_review(&serde_json::to_vec(&body).unwrap()).unwrap();
    let d = admission::review(&Policy::default(), None, Endpoint::Validate, &request).unwrap();
    let s = &d.summary;
    assert_eq!(s.skipped, Some("operation"));
    assert_eq!((s.namespace.as_str(), s.name.as_str(), s.operation.as_str()), ("shop", "api", "DELETE"));
}

/// `parse_review` reads the object of a small review in the same pass as the review around it
/// (the API server writes `request.kind` and `operation` before `object`); every captured review
/// gets the same answer, at both endpoints, as when it is read the plain way (the envelope, then
/// the object from its text), and a Pod UPDATE keeps its object's text (a restore patch needs it).
#[test]
fn a_review_read_in_one_pass_is_answered_as_when_read_in_two() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/admission");
    let (mut one_pass, mut all) = (0, 0);
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let body = std::fs::read(&path).unwrap();
        let fast = admission::parse_review(&body).unwrap();
        let plain: admission::AdmissionReviewRequest = serde_json::from_slice(&body).unwrap();
        let plain = plain.request.unwrap();
        assert!(plain.object.is_some(), "{}", path.display());
        all += 1;
        one_pass += usize::from(fast.object.is_none());
        if fast.kind.kind == "Pod" && fast.operation == kube::core::admission::Operation::Update {
            assert!(fast.object.is_some(), "{}", path.display());
        }
        for endpoint in [Endpoint::Validate, Endpoint::Mutate] {
            let a = admission::review(&Policy::default(), None, endpoint, &fast).unwrap();
            let b = admission::review(&Policy::default(), None, endpoint, &plain).unwrap();
            assert_eq!((a.review.response, a.summary), (b.review.response, b.summary), "{}", path.display());
        }
    }
    // Deployments, StatefulSets, Jobs, Pod CREATEs: most captured reviews are read in one pass.
    assert!(all >= 40 && one_pass >= all / 2, "{one_pass} of {all}");
}

/// Any review of `object` (with `old` on UPDATE) under `policy`, made by "alice".
fn answer(
    policy: &Policy,
    endpoint: Endpoint,
    operation: &str,
    object: &Value,
    old: Option<&Value>,
) -> Result<Decision, admission::ReviewError> {
    let mut body = common::review(operation, object, old, "u9");
    body["request"]["userInfo"] = json!({"username": "alice", "groups": ["system:authenticated"]});
    let request = admission::parse_review(&serde_json::to_vec(&body).unwrap()).unwrap();
    admission::review(policy, None, endpoint, &request)
}

fn audit_policy() -> Policy {
    Policy { mode: probegate::policy::Mode::Audit, ..Policy::default() }
}

#[test]
fn endpoint_names_and_whether_a_decision_acted_are_what_logs_and_metrics_read() {
    assert_eq!((Endpoint::Validate.as_str(), Endpoint::Mutate.as_str()), ("validate", "mutate"));
    let decided =
        |endpoint, object: &Value| answer(&Policy::default(), endpoint, "CREATE", object, None).unwrap();
    // A clean Pod: nothing denied, warned or patched, so no log line.
    let d = decided(Endpoint::Validate, &clean_pod());
    assert!(d.review.response.allowed && d.review.response.warnings.is_none(), "{:?}", d.review.response);
    assert!(!d.summary.acted(), "{:?}", d.summary);
    // Denied; warned only (a refused skip entry on a clean Pod); patched only.
    let d = decided(Endpoint::Validate, &coupled_pod());
    assert!(d.summary.denied && d.summary.warnings == 0 && !d.summary.patched && d.summary.acted());
    let mut warned = clean_pod();
    warned["metadata"]["annotations"] = json!({SKIP_ANNOTATION: "no-such-rule"});
    let d = decided(Endpoint::Validate, &warned);
    assert!(!d.summary.denied && d.summary.warnings == 1 && !d.summary.patched && d.summary.acted());
    let mut patched = clean_pod();
    patched["spec"]["restartPolicy"] = json!("Always");
    patched["spec"]["containers"][0]["livenessProbe"] =
        json!({"httpGet": {"path": "/healthz", "port": 8080}});
    let d = decided(Endpoint::Mutate, &patched);
    assert!(
        !d.summary.denied && d.summary.warnings == 0 && d.summary.patched && d.summary.acted(),
        "{:?}",
        d.summary
    );
}

#[test]
fn an_update_is_denied_only_for_a_finding_the_old_object_did_not_have() {
    let update = |object: &Value, old: &Value| {
        answer(&Policy::default(), Endpoint::Validate, "UPDATE", object, Some(old)).unwrap().review.response
    };
    // The same coupled probe before and after (a label change): a warning, not a denial.
    let mut relabelled = coupled_pod();
    relabelled["metadata"]["labels"] = json!({"team": "b"});
    let r = update(&relabelled, &coupled_pod());
    assert!(r.allowed, "{r:?}");
    let warnings = r.warnings.unwrap_or_default();
    assert!(
        warnings.iter().any(|w| w.starts_with("probegate: not denied (it was there before this update)")),
        "{warnings:?}"
    );
    // Introduced by the update: denied.
    assert!(!update(&coupled_pod(), &clean_pod()).allowed);
    // The old object had a finding of that rule, but not this one: another host, another
    // container, or the same name as an init container. Each is new, so denied.
    let mut other_host = coupled_pod();
    other_host["spec"]["containers"][0]["livenessProbe"]["exec"]["command"][2] = json!("billing-db.prod.svc");
    let mut other_container = coupled_pod();
    other_container["spec"]["containers"][0]["name"] = json!("api-2");
    let mut init = coupled_pod();
    init["spec"]["initContainers"] = json!([{"name": "api", "image": "api:1", "restartPolicy": "Always",
        "livenessProbe": {"exec": {"command": ["pg_isready", "-h", "orders-db.prod.svc"]}}}]);
    init["spec"]["containers"][0]["name"] = json!("other");
    init["spec"]["containers"][0]["livenessProbe"]["exec"]["command"][2] = json!("billing-db.prod.svc");
    for (what, old) in
        [("another host", other_host), ("another container", other_container), ("an init container", init)]
    {
        let r = update(&coupled_pod(), &old);
        assert!(!r.allowed, "{what}: {r:?}");
    }
}

#[test]
fn audit_annotations_are_written_only_for_something_to_record() {
    // A clean Pod: no annotation at all, in enforce and in audit mode, at both endpoints.
    for policy in [Policy::default(), audit_policy()] {
        for endpoint in [Endpoint::Validate, Endpoint::Mutate] {
            let r = answer(&policy, endpoint, "CREATE", &clean_pod(), None).unwrap().review.response;
            assert_eq!(r.audit_annotations, None, "{:?} {endpoint:?}", policy.mode);
        }
    }
    // A skipped rule is recorded; audit mode records what it reported.
    let mut skipping = clean_pod();
    skipping["metadata"]["annotations"] = json!({SKIP_ANNOTATION: "readiness-missing"});
    let r =
        answer(&Policy::default(), Endpoint::Validate, "CREATE", &skipping, None).unwrap().review.response;
    assert_eq!(
        r.audit_annotations.unwrap_or_default().get("skipped-rules").map(String::as_str),
        Some("readiness-missing")
    );
    let r =
        answer(&audit_policy(), Endpoint::Validate, "CREATE", &coupled_pod(), None).unwrap().review.response;
    assert!(r.allowed);
    let annotations = r.audit_annotations.unwrap_or_default();
    let violations: Value = serde_json::from_str(&annotations["violations"]).unwrap();
    assert!(
        violations
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v["rule"] == "liveness-dependency" && v["action"] == "deny"),
        "{violations}"
    );
}

#[test]
fn an_update_whose_old_object_is_no_pod_is_judged_on_its_new_object() {
    // An old object that cannot be read as a Pod. Audit mode denies nothing, so there is nothing
    // the old object could excuse.
    let unreadable = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "api", "namespace": "shop"},
        "spec": {"containers": "not a list"}});
    let d = answer(&audit_policy(), Endpoint::Validate, "UPDATE", &coupled_pod(), Some(&unreadable)).unwrap();
    assert!(d.review.response.allowed);
    assert!(
        d.review.response.warnings.unwrap_or_default().iter().any(|w| w.starts_with("probegate [audit]: "))
    );
    // Enforcing, the same UPDATE reads it (the finding might have been there before), and an
    // old object that is not a Pod excuses nothing: denied, as without an old object (break-it
    // pass, #9: it answered 400, which hands the verdict to `failurePolicy`, while `/mutate`
    // answered 200).
    let d =
        answer(&Policy::default(), Endpoint::Validate, "UPDATE", &coupled_pod(), Some(&unreadable)).unwrap();
    assert!(!d.review.response.allowed);
    let status = d.review.response.status.expect("a denial's status");
    assert!(status.message.contains("liveness-dependency"), "{}", status.message);
    // Nor when nothing would be denied.
    let d =
        answer(&Policy::default(), Endpoint::Validate, "UPDATE", &clean_pod(), Some(&unreadable)).unwrap();
    assert!(d.review.response.allowed);
}

#[test]
fn a_subresource_request_is_allowed_untouched() {
    for (sub, skipped) in [(json!("status"), Some("subresource")), (json!(""), None), (Value::Null, None)] {
        let mut body = common::review("UPDATE", &coupled_pod(), Some(&clean_pod()), "s1");
        body["request"]["subResource"] = sub.clone();
        let request = admission::parse_review(&serde_json::to_vec(&body).unwrap()).unwrap();
        let d = admission::review(&Policy::default(), None, Endpoint::Validate, &request).unwrap();
        assert_eq!(d.summary.skipped, skipped, "{sub}");
        assert_eq!(d.review.response.allowed, skipped.is_some(), "{sub}");
    }
}

#[test]
fn a_small_review_is_read_in_one_pass_except_a_pod_update() {
    // `object` is left `None` when parse_review read it as its kind on the way (one pass); a Pod
    // UPDATE keeps its text (a restore patch needs it). The API server writes `kind` and
    // `operation` before `object` (serde_json's `json!` would sort them: written out here).
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api", "namespace": "shop"},
        "spec": {"selector": {"matchLabels": {"app": "api"}},
            "template": {"metadata": {"labels": {"app": "api"}}, "spec": coupled_pod()["spec"].clone()}}});
    for (operation, object, one_pass) in [
        ("CREATE", coupled_pod(), true),
        ("UPDATE", coupled_pod(), false),
        ("CREATE", deployment.clone(), true),
        ("UPDATE", deployment, true),
    ] {
        let (group, kind) = if object["kind"] == "Pod" { ("", "Pod") } else { ("apps", "Deployment") };
        let old = if operation == "UPDATE" { object.to_string() } else { "null".into() };
        let body = format!(
            r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{{"uid":"p1",
            "kind":{{"group":"{group}","version":"v1","kind":"{kind}"}},"namespace":"shop",
            "operation":"{operation}","object":{object},"oldObject":{old}}}}}"#
        );
        let request = admission::parse_review(body.as_bytes()).unwrap();
        assert_eq!(request.object.is_none(), one_pass, "{operation} {kind}");
        let d = admission::review(&Policy::default(), None, Endpoint::Validate, &request).unwrap();
        assert_eq!(d.review.response.allowed, operation == "UPDATE", "{operation} {kind}");
    }
}

/// docs/reapply.md: a Pod UPDATE that sends back the manifest's values over what probegate patched
/// at CREATE (a re-apply of the unchanged manifest) is patched back to the stored Pod's probes and
/// hooks; any other change of a probe is left alone, and audit mode never patches.
#[test]
fn a_pod_update_that_only_undoes_probegates_patch_is_patched_back() {
    // timeoutSeconds 1 (raised) and initialDelaySeconds 45 (moved into a startup probe), as in
    // tests/e2e/reapply.rs; and one with its own startup probe (only the timeout raised).
    let liveness = json!({"httpGet": {"path": "/healthz", "port": 8080}, "timeoutSeconds": 1, "initialDelaySeconds": 45});
    let own_startup =
        json!({"httpGet": {"path": "/healthz", "port": 8080}, "failureThreshold": 30, "periodSeconds": 10});
    for startup in [None, Some(own_startup)] {
        let mut manifest = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"containers": [{"name": "web", "image": "nginx", "ports": [{"containerPort": 8080}],
                "livenessProbe": liveness.clone(),
                "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}}}]}});
        if let Some(s) = &startup {
            manifest["spec"]["containers"][0]["startupProbe"] = s.clone();
        }
        let mutate = |policy: &Policy, op: &str, object: &Value, old: Option<&Value>| {
            answer(policy, Endpoint::Mutate, op, object, old).unwrap().review.response
        };
        let created = mutate(&Policy::default(), "CREATE", &manifest, None);
        let mut stored = common::apply(&manifest, &common::decode_patch(created.patch.as_deref().unwrap()));
        // As the API server stores it: a zero `initialDelaySeconds` is dropped (Go's `omitempty`).
        let startup_probe = stored["spec"]["containers"][0]["startupProbe"].as_object_mut().unwrap();
        if startup_probe.get("initialDelaySeconds") == Some(&json!(0)) {
            startup_probe.remove("initialDelaySeconds");
        }
        let c = &stored["spec"]["containers"][0];
        assert_eq!(c["livenessProbe"]["timeoutSeconds"], 3, "{stored}");
        assert!(c["startupProbe"].is_object(), "{stored}");
        let label = |mut v: Value| {
            v["metadata"]["labels"] = json!({"team": "b"});
            v
        };
        // Server-side apply: the manifest's values, probegate's additions dropped. Client-side:
        // the manifest's fields over the stored Pod, probegate's additions kept.
        let ssa = label(manifest.clone());
        let mut csa = label(stored.clone());
        csa["spec"]["containers"][0]["livenessProbe"] = liveness.clone();
        for (how, object) in [("server-side", &ssa), ("client-side", &csa)] {
            let r = mutate(&Policy::default(), "UPDATE", object, Some(&stored));
            let patch = r.patch.as_deref().unwrap_or_else(|| panic!("{how} {startup:?}: {r:?}"));
            let restored = common::apply(object, &common::decode_patch(patch));
            assert_eq!(restored["spec"], stored["spec"], "{how} {startup:?}");
            assert_eq!(restored["metadata"]["labels"], json!({"team": "b"}), "{how}");
            assert_eq!(r.warnings, None, "{how}: {r:?}");
            // Audit mode never patches, and /validate never does.
            let r = mutate(&audit_policy(), "UPDATE", object, Some(&stored));
            assert!(r.patch.is_none() && r.warnings.is_none(), "{how} in audit mode: {r:?}");
            let v = answer(&Policy::default(), Endpoint::Validate, "UPDATE", object, Some(&stored)).unwrap();
            assert!(v.review.response.patch.is_none(), "{how} at /validate");
        }
        // Nothing undone (a label change of the stored Pod): no patch.
        assert!(mutate(&Policy::default(), "UPDATE", &label(stored.clone()), Some(&stored)).patch.is_none());
        // A real change of a probe (another path): left alone, with or without probegate's values.
        let mut changed = ssa.clone();
        changed["spec"]["containers"][0]["livenessProbe"]["httpGet"]["path"] = json!("/other");
        assert!(mutate(&Policy::default(), "UPDATE", &changed, Some(&stored)).patch.is_none(), "{startup:?}");
        let mut changed = stored.clone();
        changed["spec"]["containers"][0]["readinessProbe"]["httpGet"]["path"] = json!("/other");
        assert!(mutate(&Policy::default(), "UPDATE", &changed, Some(&stored)).patch.is_none(), "{startup:?}");
    }
}

/// 5,000 containers, each with its own finding, in a Pod that a trusted controller creates for a
/// ReplicaSet with a long name: every warning is over the length bound, and cut they used to look
/// alike, so they were merged and counted as one (break-it pass, issue 10: "and 2,072 more" for
/// 4,989 left out; here no count at all). Warnings are merged only when their whole texts are
/// equal, and the last one counts exactly the warnings not shown.
#[test]
fn the_count_of_warnings_left_out_is_exact_for_thousands_of_findings() {
    let n = 5_000;
    let containers: Vec<Value> = (0..n)
        .map(|i| {
            json!({"name": format!("c{i:04}"), "image": "api:1",
                "livenessProbe": {"exec": {"command": ["pg_isready", "-h", "orders-db.prod.svc"]}}})
        })
        .collect();
    let mut pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "api", "namespace": "shop",
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "r".repeat(253),
            "uid": "u", "controller": true}]},
        "spec": {"containers": containers}});
    let user = json!({"username": "system:serviceaccount:kube-system:replicaset-controller", "groups": []});
    let d = decide_as(Endpoint::Validate, &pod, user.clone());
    assert!(d.review.response.allowed);
    let warnings = d.review.response.warnings.unwrap_or_default();
    assert_eq!(warnings.len(), MAX_WARNINGS, "{warnings:#?}");
    assert_eq!(
        warnings[MAX_WARNINGS - 1],
        format!("probegate: and {} more findings; run `probegate check` on the manifest for all", n - 11)
    );
    // Each shown warning names its own container: they are 11 findings, not one.
    for (i, w) in warnings[..MAX_WARNINGS - 1].iter().enumerate() {
        assert!(w.contains(&format!("container c{i:04}:")), "{w}");
    }
    // Warnings equal as a whole are one: the same unknown rule named 5,000 times in the skip
    // annotation is one warning, beside the 5,000 findings.
    pod["metadata"]["annotations"] = json!({SKIP_ANNOTATION: vec!["no-such-rule"; n].join(",")});
    let warnings = decide_as(Endpoint::Validate, &pod, user).review.response.warnings.unwrap_or_default();
    assert_eq!(warnings.len(), MAX_WARNINGS, "{warnings:#?}");
    assert!(
        warnings[MAX_WARNINGS - 1].contains(&format!("and {} more findings", n + 1 - 11)),
        "{warnings:#?}"
    );
}

/// /mutate copies the liveness handler into the startup probe it adds. A liveness command of
/// hundreds of KiB (a script too large to analyse) doubled the object (break-it pass, issue 10):
/// a handler over `MAX_SCRIPT_BYTES` (16 KiB, the analysis's script bound) as JSON is not copied,
/// and a warning at /mutate says why; one at the bound still is.
#[test]
fn a_huge_liveness_command_is_not_copied_into_a_startup_probe() {
    let pod_with = |script: String| {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "api", "namespace": "shop"},
            "spec": {"restartPolicy": "Always", "containers": [{"name": "api", "image": "api:1",
                "livenessProbe": {"exec": {"command": ["sh", "-c", script]}, "timeoutSeconds": 5}}]}})
    };
    let startup_ops = |d: &Decision| -> Vec<String> {
        let Some(p) = &d.review.response.patch else { return vec![] };
        let patch = common::decode_patch(p);
        serde_json::to_value(&patch)
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .filter(|op| op["path"].as_str().unwrap_or_default().contains("startupProbe"))
            .map(|op| op.to_string())
            .collect()
    };
    // `{"command":["sh","-c","…"]}` is 26 bytes around the script.
    let bound = probegate::engine::exec::MAX_SCRIPT_BYTES;
    let at_bound = pod_with(format!("test -f /tmp/healthy #{}", "x".repeat(bound - 26 - 22)));
    let d = decide(Endpoint::Mutate, &at_bound, "alice");
    assert_eq!(startup_ops(&d).len(), 1, "a handler of exactly the bound is copied");
    for size in [bound - 26 + 1, 300 * 1024] {
        let pod = pod_with(format!("test -f /tmp/healthy #{}", "x".repeat(size - 22)));
        let d = decide(Endpoint::Mutate, &pod, "alice");
        assert!(
            startup_ops(&d).is_empty(),
            "{size}: {:?}",
            startup_ops(&d).iter().map(|s| s.len()).collect::<Vec<_>>()
        );
        let patch_len = d.review.response.patch.as_ref().map_or(0, String::len);
        assert!(patch_len < 4096, "{size}: a {patch_len}-byte patch");
        let warnings = d.review.response.warnings.unwrap_or_default();
        let w =
            warnings.iter().find(|w| w.contains("(startup-probe)")).unwrap_or_else(|| panic!("{warnings:?}"));
        assert!(w.contains("not added") && w.contains(&format!("over the {bound} bytes")), "{w}");
    }
}
