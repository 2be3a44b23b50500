//! Issue 6: liveness coupling hidden in ConfigMap scripts, env values from ConfigMaps, and commands
//! that reach a dependency without naming a host (knownCommands). Inputs are multi-document
//! manifests as Helm or kustomize print them: the workloads and their ConfigMaps together.

mod common;

use std::collections::BTreeSet;

use common::*;
use probegate::admission::{self, Endpoint, ObjectEvaluation};
use probegate::engine::{self, Finding, NoConfigMaps, StaticConfigMaps};
use probegate::policy::{self, Action, Policy, RuleId};
use serde_json::Value;

fn load(rel: &str) -> Vec<Value> {
    probegate::manifest::parse_documents(&read(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn named<'a>(docs: &'a [Value], name: &str) -> &'a Value {
    docs.iter().find(|d| d["metadata"]["name"] == name).unwrap_or_else(|| panic!("no object {name}"))
}

fn namespace(doc: &Value) -> &str {
    doc["metadata"]["namespace"].as_str().unwrap_or("default")
}

fn eval_in(policy: &Policy, doc: &Value, cms: &dyn engine::ConfigMapSource) -> ObjectEvaluation {
    admission::evaluate_object_with_configmaps(policy, &workload(doc), namespace(doc), None, cms)
}

fn denials(e: &ObjectEvaluation) -> Vec<&Finding> {
    e.evaluation.with_action(Action::Deny).collect()
}

/// The one liveness-dependency denial of a workload, as described in a response.
#[track_caller]
fn denied(e: &ObjectEvaluation) -> String {
    let d = denials(e);
    assert_eq!(d.len(), 1, "expected one denial, got {d:?}");
    assert_eq!(d[0].rule, RuleId::LivenessDependency);
    d[0].describe()
}

#[track_caller]
fn allowed(e: &ObjectEvaluation) {
    let d = denials(e);
    assert!(d.is_empty(), "expected no denial, got {:?}", d.iter().map(|f| f.describe()).collect::<Vec<_>>());
}

fn with_configmaps(docs: &[Value]) -> StaticConfigMaps {
    StaticConfigMaps::from_documents(docs, "default")
}

#[test]
fn redis_replica_is_denied_naming_the_master_and_the_master_is_allowed() {
    let docs = load("scripts/redis-replication.yaml");
    let cms = with_configmaps(&docs);
    let policy = Policy::default();
    let replica = eval_in(&policy, named(&docs, "cache-redis-replicas"), &cms);
    let text = denied(&replica);
    assert!(text.contains("cache-redis-master-0.cache-redis-headless.data.svc.cluster.local"), "{text}");
    assert!(text.contains("redis-cli -h $REDIS_MAS"), "the message quotes the command: {text}");
    assert!(
        text.contains("/health/ping_liveness_local_and_master.sh → /health/ping_liveness_master.sh"),
        "the message says which scripts ran it: {text}"
    );
    assert!(text.contains("ConfigMap data/cache-redis-health"), "{text}");
    assert!(replica.evaluation.unresolved.is_empty(), "{:?}", replica.evaluation.unresolved);

    let master = eval_in(&policy, named(&docs, "cache-redis-master"), &cms);
    allowed(&master);
    assert!(master.evaluation.unresolved.is_empty(), "{:?}", master.evaluation.unresolved);
    // The master's liveness is local, so its startup probe is patched in as usual; the replica's
    // coupled liveness is never copied into a startup probe (it already has one anyway).
    assert!(master.evaluation.findings.iter().any(|f| f.rule == RuleId::StartupProbe));
}

#[test]
fn without_the_configmap_the_replica_is_not_denied_and_the_script_is_reported_once() {
    let docs = load("scripts/redis-replication.yaml");
    let replica = eval_in(&Policy::default(), named(&docs, "cache-redis-replicas"), &NoConfigMaps);
    allowed(&replica);
    let u = &replica.evaluation.unresolved;
    assert_eq!(u.len(), 1, "{u:?}");
    assert_eq!(u[0].container, "redis");
    assert_eq!(u[0].script, "/health/ping_liveness_local_and_master.sh");
    assert_eq!(u[0].reason, "ConfigMap data/cache-redis-health is not available");
    assert!(!u[0].over_bound, "unreadable, not over a bound: a note only");
}

#[test]
fn through_the_admission_glue_the_denial_names_the_master_and_notes_are_audit_annotations() {
    let docs = load("scripts/redis-replication.yaml");
    let cms = with_configmaps(&docs);
    let policy = Policy::default();
    let replica = named(&docs, "cache-redis-replicas");
    let body = serde_json::to_vec(&review("CREATE", replica, None, "r1")).unwrap();
    let request = admission::parse_review(&body).unwrap();
    let answer =
        admission::review_with_configmaps(&policy, None, Endpoint::Validate, &request, &cms).unwrap();
    let r = answer.review.response;
    assert!(!r.allowed);
    let message = r.status.unwrap().message;
    assert!(message.contains("cache-redis-master-0.cache-redis-headless"), "{message}");
    assert!(r.audit_annotations.is_none());

    // Without the ConfigMap: allowed, no warning about it, one audit annotation.
    let answer = admission::review(&policy, None, Endpoint::Validate, &request).unwrap();
    let r = answer.review.response;
    assert!(r.allowed);
    assert!(r.warnings.iter().flatten().all(|w| !w.contains("ping_liveness")), "{:?}", r.warnings);
    let notes = r.audit_annotations.unwrap();
    let list: Value = serde_json::from_str(&notes["unresolved-scripts"]).unwrap();
    assert_eq!(
        list,
        serde_json::json!([{"container": "redis", "script": "/health/ping_liveness_local_and_master.sh",
                            "reason": "ConfigMap data/cache-redis-health is not available"}])
    );
    assert_eq!(answer.summary.unresolved_scripts, 1);
    // /mutate never carries the note (it is reported once, at /validate).
    let answer = admission::review(&policy, None, Endpoint::Mutate, &request).unwrap();
    assert!(answer.review.response.audit_annotations.is_none());
}

#[test]
fn commands_that_reach_a_dependency_without_naming_a_host_are_denied_with_the_dependency_named() {
    let docs = load("scripts/apps.yaml");
    let cms = with_configmaps(&docs);
    let policy = Policy::default();
    let cases = [
        ("celery-worker", "the Celery broker", "celery -A shop inspect ping"),
        ("celery-beat", "the Celery broker", "python -m celery --app=shop status"),
        ("search-cluster-health", "the whole Elasticsearch/OpenSearch cluster", "curl -fsS"),
    ];
    for (name, reaches, command) in cases {
        let text = denied(&eval_in(&policy, named(&docs, name), &cms));
        assert!(text.contains(&format!("reaches {reaches} (")), "{name}: {text}");
        assert!(text.contains(command), "{name}: {text}");
    }
    // `manage.py check --database` is no longer a built-in known command: only MySQL's checks query
    // the server (django/db/backends/mysql/validation.py), so on PostgreSQL or SQLite a database
    // outage passes it (exit 0) and the probe is not coupled.
    allowed(&eval_in(&policy, named(&docs, "django-web"), &cms));
    // The corpus's Airflow scheduler: `airflow jobs check` behind /entrypoint and assignments.
    let corpus = load("corpus/deployment-airflow-scheduler-liveness-jobs-check-reads-metadata-db.yaml");
    let text = denied(&eval_in(&policy, &corpus[0], &NoConfigMaps));
    assert!(text.contains("reaches the Airflow metadata database (database, via airflow)"), "{text}");
    assert!(text.contains("job heartbeat rows"), "the message says why: {text}");
}

#[test]
fn scripts_that_only_reach_the_pod_are_allowed_and_sourced_libraries_are_followed() {
    let docs = load("scripts/apps.yaml");
    let cms = with_configmaps(&docs);
    let policy = Policy::default();
    let local = eval_in(&policy, named(&docs, "web-local-script"), &cms);
    allowed(&local);
    assert!(local.evaluation.unresolved.is_empty());
    // deep.sh sources lib.sh and calls a function with its own $1: the host comes from the probe's
    // argument, two levels down.
    let text = denied(&eval_in(&policy, named(&docs, "web-sourced-library"), &cms));
    assert!(text.contains("payments.shop.svc"), "{text}");
    assert!(text.contains("/probes/deep.sh"), "{text}");
}

/// A Pod whose containers each run `script` as their liveness probe.
fn pod_with_liveness_scripts(scripts: &[String]) -> Value {
    let containers: Vec<Value> = scripts
        .iter()
        .enumerate()
        .map(|(i, script)| {
            serde_json::json!({"name": format!("c{i}"), "image": "x",
                "livenessProbe": {"exec": {"command": ["sh", "-c", script]}}})
        })
        .collect();
    serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop"},
        "spec": {"containers": containers}})
}

#[test]
fn one_objects_shell_analysis_is_bounded_and_what_is_left_is_noted_not_denied() {
    let policy = Policy::default();
    let coupled = "pg_isready -h orders-db".to_string();
    // Each filler expands to ~0.9 MiB (under the 1 MiB one command may expand to); three of them
    // spend the object's 2 MiB.
    let filler = format!("A={}; true {}", "x".repeat(3000), "$A ".repeat(300));
    let mut scripts = vec![coupled.clone(), filler.clone(), filler.clone(), filler.clone(), coupled.clone()];
    let e = eval_in(&policy, &pod_with_liveness_scripts(&scripts), &NoConfigMaps);
    // The first container is analysed (denied); the last, after the budget, is not: no denial on a
    // command that was never looked at, and a note says where the analysis stopped and another
    // names the container it skipped (never a silent allow).
    let d = denials(&e);
    assert_eq!(d.len(), 1, "{:?}", d.iter().map(|f| f.describe()).collect::<Vec<_>>());
    assert_eq!(d[0].container, "c0");
    let notes = &e.evaluation.unresolved;
    assert_eq!(notes.iter().map(|n| n.container.as_str()).collect::<Vec<_>>(), ["c3", "c4"], "{notes:?}");
    assert!(notes[0].reason.contains("2 MiB") && notes[0].reason.contains("one object"), "{notes:?}");
    assert!(notes[1].reason.starts_with("earlier exec probes spent the 2 MiB"), "{notes:?}");
    assert!(notes.iter().all(|n| n.over_bound));
    // Unlike an unreadable script, a command over a bound is also a warning at /validate (a real
    // manifest never gets one, and the deny rule did not look at it).
    let body =
        serde_json::to_vec(&review("CREATE", &pod_with_liveness_scripts(&scripts), None, "b1")).unwrap();
    let request = admission::parse_review(&body).unwrap();
    let r = admission::review(&policy, None, Endpoint::Validate, &request).unwrap().review.response;
    let warned: Vec<&String> =
        r.warnings.iter().flatten().filter(|w| w.contains("not analysed for dependencies")).collect();
    assert_eq!(warned.len(), 2, "{:?}", r.warnings);
    assert!(warned[0].starts_with("probegate: container c3:"), "where the budget ran out: {warned:?}");
    assert!(warned[1].starts_with("probegate: container c4:"), "the container it skipped: {warned:?}");
    // The budget is per object: the same container in a Pod of its own is denied.
    scripts.drain(..4);
    let alone = eval_in(&policy, &pod_with_liveness_scripts(&scripts), &NoConfigMaps);
    assert_eq!(denials(&alone).len(), 1);
    // And two fillers fit: the coupled container after them is still analysed.
    let fits = vec![filler.clone(), filler, coupled];
    let e = eval_in(&policy, &pod_with_liveness_scripts(&fits), &NoConfigMaps);
    assert_eq!(denials(&e).iter().map(|f| f.container.as_str()).collect::<Vec<_>>(), ["c2"]);
    assert!(e.evaluation.unresolved.is_empty(), "{:?}", e.evaluation.unresolved);
}

/// Break-it pass, s17: thirteen containers of `:` padding spent the object's work units and a
/// fourteenth's `pg_isready -h db` was admitted with no warning (the one warning, for the first
/// container, fell behind eleven `readiness-missing` warnings under the cap).
#[test]
fn a_coupled_probe_after_the_budget_is_spent_is_named_in_a_warning_that_the_cap_keeps() {
    let policy = Policy::default();
    let padding = ":\n".repeat(4000);
    let mut scripts = vec![padding; 13];
    scripts.push("pg_isready -h db".to_string());
    let mut pod = pod_with_liveness_scripts(&scripts);
    // Ports and no readinessProbe: a `readiness-missing` warning per container.
    for c in pod["spec"]["containers"].as_array_mut().unwrap() {
        c["ports"] = serde_json::json!([{"containerPort": 8080}]);
    }
    let e = eval_in(&policy, &pod, &NoConfigMaps);
    assert!(denials(&e).is_empty());
    let skipped: Vec<&str> = e.evaluation.unresolved.iter().map(|u| u.container.as_str()).collect();
    assert_eq!(skipped.len(), 14, "{skipped:?}");
    assert_eq!(skipped.last(), Some(&"c13"));
    // (s19 break-it) A liveness check not analysed is not copied into a startup probe: what it
    // reaches is not known (c13's `pg_isready -h db` would make each start wait on db). The
    // finding says why, and patches nothing.
    let startup: Vec<_> = e.evaluation.findings.iter().filter(|f| f.rule == RuleId::StartupProbe).collect();
    assert_eq!(startup.len(), 14, "{startup:?}");
    for f in startup {
        assert!(f.patch.is_empty(), "{}: a startupProbe patched in", f.container);
        assert!(
            f.message.contains(
                "not added: what the liveness check reaches is not known (its analysis hit a bound); add one"
            ),
            "{}",
            f.message
        );
    }
    for endpoint_audit in [false, true] {
        let body = serde_json::to_vec(&review("CREATE", &pod, None, "b2")).unwrap();
        let request = admission::parse_review(&body).unwrap();
        let policy = if endpoint_audit {
            policy::parse("apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\nmode: audit\n", "p.yaml")
                .unwrap()
        } else {
            Policy::default()
        };
        let r = admission::review(&policy, None, Endpoint::Validate, &request).unwrap().review.response;
        assert!(r.allowed);
        let warnings = r.warnings.clone().unwrap_or_default();
        assert_eq!(warnings.len(), admission::MAX_WARNINGS, "{warnings:?}");
        let prefix = if endpoint_audit { "probegate [audit]: " } else { "probegate: " };
        // Where the budget ran out, and then every container it skipped, in one warning.
        assert!(
            warnings[0].starts_with(&format!("{prefix}container c0: liveness probe not analysed")),
            "{warnings:?}"
        );
        assert!(
            warnings[1].starts_with(&format!(
                "{prefix}containers c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13: liveness probes not \
                 analysed for dependencies (earlier exec probes spent the 2 MiB"
            )),
            "{warnings:?}"
        );
        assert!(warnings[1].contains("c13: liveness probes not analysed"), "{warnings:?}");
    }
}

#[test]
fn scripts_that_cannot_be_read_are_never_denied_and_are_reported() {
    let docs = load("scripts/apps.yaml");
    let cms = with_configmaps(&docs);
    let policy = Policy::default();
    let absent = eval_in(&policy, named(&docs, "web-absent-configmap"), &cms);
    allowed(&absent);
    assert_eq!(absent.evaluation.unresolved.len(), 1);
    assert_eq!(absent.evaluation.unresolved[0].script, "/checks/alive.sh");
    assert!(absent.evaluation.unresolved[0].reason.contains("web-checks-not-in-this-input is not available"));
    // A ConfigMap the API says does not exist: the file would not exist either. Still no denial.
    let mut gone = cms.clone();
    gone.mark_absent("shop", "web-checks-not-in-this-input");
    let e = eval_in(&policy, named(&docs, "web-absent-configmap"), &gone);
    allowed(&e);
    assert!(e.evaluation.unresolved[0].reason.contains("does not exist"));
    // Secrets are never read.
    let secret = eval_in(&policy, named(&docs, "web-secret-script"), &cms);
    allowed(&secret);
    assert!(secret.evaluation.unresolved[0].reason.contains("Secrets are never read"));
}

#[test]
fn env_values_from_configmaps_carry_hosts() {
    let docs = load("scripts/apps.yaml");
    let cms = with_configmaps(&docs);
    let policy = Policy::default();
    // valueFrom.configMapKeyRef: unknown without the ConfigMap, but named like a database's
    // address (the rule catalog's `unresolved` policy, as `redis-cli -h $REDIS_HOST`); the
    // database's host with it.
    let text = denied(&eval_in(&policy, named(&docs, "web-database-url"), &NoConfigMaps));
    assert!(text.contains("$DATABASE_URL (from ConfigMap web-env key DATABASE_URL"), "{text}");
    let text = denied(&eval_in(&policy, named(&docs, "web-database-url"), &cms));
    assert!(text.contains("orders-db.prod.svc"), "{text}");
    // envFrom: without the ConfigMap the broker list is unknown (not provably local, as before);
    // with it, the brokers are named.
    let text = denied(&eval_in(&policy, named(&docs, "web-env-from"), &NoConfigMaps));
    assert!(text.contains("envFrom may set it"), "{text}");
    let text = denied(&eval_in(&policy, named(&docs, "web-env-from"), &cms));
    assert!(text.contains("kafka-0.kafka.queue.svc:9092"), "{text}");
    // A variable the resolved envFrom does not set falls back to the script's local default.
    denied(&eval_in(&policy, named(&docs, "web-env-from-default-local"), &NoConfigMaps));
    allowed(&eval_in(&policy, named(&docs, "web-env-from-default-local"), &cms));
}

#[test]
fn no_database_checking_itself_is_denied() {
    let docs = load("scripts/databases-checking-themselves.yaml");
    let cms = with_configmaps(&docs);
    let e = eval_in(&Policy::default(), named(&docs, "databases"), &cms);
    let coupled: Vec<String> = e
        .evaluation
        .findings
        .iter()
        .filter(|f| f.rule == RuleId::LivenessDependency)
        .map(Finding::describe)
        .collect();
    // Only etcd's `endpoint health` is a finding: a warning that its answer rests on the cluster's
    // quorum (a lost quorum restarts every member), never a denial.
    assert!(
        coupled.len() == 1 && coupled[0].contains("container etcd") && coupled[0].contains("lost quorum"),
        "self-checks flagged:\n{}",
        coupled.join("\n")
    );
    allowed(&e);
    assert!(e.evaluation.unresolved.is_empty(), "{:?}", e.evaluation.unresolved);
    // And every script was read: with no ConfigMaps each one is reported instead.
    let blind = eval_in(&Policy::default(), named(&docs, "databases"), &NoConfigMaps);
    assert_eq!(blind.evaluation.unresolved.len(), 10, "{:?}", blind.evaluation.unresolved);
    allowed(&blind);
}

/// Semantic corpus files whose ideal verdict is out of reach of script and command analysis, and why.
const OUT_OF_REACH: &[(&str, &str)] = &[
    (
        "deployment-grafana-api-health-same-path-initialdelay60.yaml",
        "httpGet /api/health is Grafana's own handler: its database check is code, not a script",
    ),
    (
        "deployment-microservices-demo-cartservice-grpc-probe-rpc-timeout-exceeds-kubelet-timeout.yaml",
        "grpc_health_probe -addr=:7070 is a local health RPC: its Redis ping is in the service's code",
    ),
];

#[test]
fn semantic_corpus_files_reach_their_ideal_verdict_with_their_configmaps() {
    let policy = Policy::default();
    let mut semantic = 0;
    for case in corpus().into_iter().filter(|c| c.expect.tier == "semantic") {
        semantic += 1;
        let fixture = fixtures().join("configmaps").join(&case.file);
        let text = std::fs::read_to_string(&fixture).unwrap_or_else(|e| {
            panic!("{}: every semantic corpus file has a ConfigMaps fixture: {e}", case.file)
        });
        let cm_docs = probegate::manifest::parse_documents(&text).unwrap();
        let cms = StaticConfigMaps::from_documents(&cm_docs, namespace(&case.doc));
        let e = eval_in(&policy, &case.doc, &cms);
        let deny: BTreeSet<String> =
            e.evaluation.with_action(Action::Deny).map(|f| format!("{}@{}", f.rule, f.container)).collect();
        let verdict = if deny.is_empty() { "allow" } else { "deny" };
        assert!(e.evaluation.unresolved.is_empty(), "{}: {:?}", case.file, e.evaluation.unresolved);
        match OUT_OF_REACH.iter().find(|(f, _)| *f == case.file) {
            Some((_, why)) => {
                // Still exactly the evidence verdict of the expectation line.
                assert_eq!(verdict, case.expect.validate, "{} ({why})", case.file);
                assert_eq!(deny, case.expect.deny.iter().cloned().collect(), "{} ({why})", case.file);
            }
            None => {
                // A note with `ideal: ...` names the verdict beyond the evidence; without one, the
                // expectation line already is the ideal (the Airflow scheduler since the corpus
                // took its deny).
                let (want, want_deny) = case.expect.ideal().unwrap_or_else(|| {
                    (case.expect.validate.clone(), case.expect.deny.iter().cloned().collect())
                });
                assert_eq!((verdict, &deny), (want.as_str(), &want_deny), "{}", case.file);
            }
        }
    }
    assert!(semantic >= 4, "the corpus has its semantic files");
}

#[test]
fn configmaps_needed_lists_script_volumes_and_env_sources_of_exec_liveness_probes() {
    let docs = load("scripts/apps.yaml");
    let needed = |name: &str| engine::configmaps_needed(&workload(named(&docs, name)), &NoConfigMaps);
    let shop = |n: &str| (Some("shop".to_string()), n.to_string());
    assert_eq!(needed("web-local-script"), vec![shop("web-probes")]);
    assert_eq!(needed("web-database-url"), vec![shop("web-env")]);
    assert_eq!(needed("web-env-from"), vec![shop("web-env")]);
    assert_eq!(needed("celery-worker"), vec![]);
    let redis = load("scripts/redis-replication.yaml");
    let needed = engine::configmaps_needed(&workload(named(&redis, "cache-redis-replicas")), &NoConfigMaps);
    let data = |n: &str| (Some("data".to_string()), n.to_string());
    // The probe runs /health/...: its ConfigMap only, not the start scripts mounted beside it.
    assert_eq!(needed, vec![data("cache-redis-health")]);
    // Through an AdmissionRequest: the request's namespace fills in.
    let mut pod = as_pod(named(&redis, "cache-redis-replicas"));
    pod["metadata"].as_object_mut().unwrap().remove("namespace");
    let mut body = review("CREATE", &pod, None, "n1");
    body["request"]["namespace"] = "data".into();
    let request = admission::parse_review(&serde_json::to_vec(&body).unwrap()).unwrap();
    assert_eq!(
        admission::configmaps_needed(&request, &NoConfigMaps),
        vec![("data".to_string(), "cache-redis-health".to_string())]
    );
    // A subresource request (`status`) is allowed untouched, so nothing is prefetched for it; an
    // empty `subResource` is the object itself (kills the s16 sample mutant `admission.rs:726:60`,
    // the subresource check's `!` deleted).
    for (sub, needed) in
        [("status", vec![]), ("", vec![("data".to_string(), "cache-redis-health".to_string())])]
    {
        body["request"]["subResource"] = sub.into();
        let request = admission::parse_review(&serde_json::to_vec(&body).unwrap()).unwrap();
        assert_eq!(admission::configmaps_needed(&request, &NoConfigMaps), needed, "{sub:?}");
    }
}

#[test]
fn configmaps_needed_reads_only_what_the_probe_may_run_and_follows_scripts_round_by_round() {
    let pod = serde_json::json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop"},
        "spec": {
            "containers": [{"name": "web", "image": "x",
                "livenessProbe": {"exec": {"command": ["sh", "-c", "/probes/live.sh"]}},
                "volumeMounts": [
                    {"name": "probes", "mountPath": "/probes"},
                    {"name": "lib", "mountPath": "/opt/lib/"},
                    {"name": "config", "mountPath": "/etc/app"},
                    {"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]},
                {"name": "worker", "image": "x", "workingDir": "/checks",
                "livenessProbe": {"exec": {"command": ["sh", "check.sh"]}},
                "volumeMounts": [{"name": "checks", "mountPath": "/checks"}]}],
            "volumes": [
                {"name": "probes", "configMap": {"name": "probes"}},
                {"name": "lib", "configMap": {"name": "lib"}},
                {"name": "config", "configMap": {"name": "app-config"}},
                {"name": "checks", "configMap": {"name": "checks"}},
                {"name": "kube-api-access", "projected": {"sources": [{"configMap": {"name": "kube-root-ca.crt"}}]}}]
        }
    });
    let w = workload(&pod);
    let shop = |n: &str| (Some("shop".to_string()), n.to_string());
    // Round 1: what the command names (/probes) and the worker's workingDir; not the app config,
    // not the ServiceAccount's kube-root-ca.crt, not yet the library the script runs.
    assert_eq!(engine::configmaps_needed(&w, &NoConfigMaps), vec![shop("checks"), shop("probes")]);
    // Round 2: the script names /opt/lib, so its ConfigMap is needed too.
    let mut known = StaticConfigMaps::new();
    known.insert(
        "shop",
        "probes",
        [("live.sh".to_string(), ". /opt/lib/common.sh; ping_local".to_string())].into(),
    );
    assert_eq!(engine::configmaps_needed(&w, &known), vec![shop("checks"), shop("lib"), shop("probes")]);
}

const HEAD: &str = "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\n";

#[test]
fn known_commands_are_policy_data_users_extend_or_replace() {
    let docs = load("scripts/apps.yaml");
    let cms = with_configmaps(&docs);
    // A team's own health CLI that asks the shared cache.
    let extra = "    knownCommands:\n      - name: shopctl-health\n        programs: [shopctl]\n        args: [health, --deep]\n        category: cache\n        reaches: the shared session cache\n        why: \"`shopctl health --deep` reads a key from the session cache\"\n";
    let added = policy::parse(&format!("{HEAD}rules:\n  liveness-dependency:\n{extra}"), "p.yaml").unwrap();
    let pod: Value = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop"},
        "spec": {"containers": [{"name": "c", "image": "x", "livenessProbe": {"exec": {"command": ["shopctl", "health", "--deep", "--timeout=2s"]}}}]}});
    let text = denied(&eval_in(&added, &pod, &NoConfigMaps));
    assert!(text.contains("reaches the shared session cache (cache, via shopctl)"), "{text}");
    allowed(&eval_in(&Policy::default(), &pod, &NoConfigMaps));
    // Added to the built-in list: Celery is still caught.
    denied(&eval_in(&added, named(&docs, "celery-worker"), &cms));
    // defaultKnownCommands: false keeps only the policy's own entries.
    let only = policy::parse(
        &format!("{HEAD}rules:\n  liveness-dependency:\n    defaultKnownCommands: false\n{extra}"),
        "p.yaml",
    )
    .unwrap();
    allowed(&eval_in(&only, named(&docs, "celery-worker"), &cms));
    denied(&eval_in(&only, &pod, &NoConfigMaps));
    // In a namespace override, entries add to what the policy has, for that namespace only.
    let scoped = policy::parse(
        &format!(
            "{HEAD}overrides:\n  - name: shop\n    namespaces: [shop]\n    rules:\n      liveness-dependency:\n        \
             knownCommands:\n          - name: shopctl-health\n            programs: [shopctl]\n            \
             args: [health, --deep]\n            category: cache\n            reaches: the shared session cache\n            \
             why: reads a key\n"
        ),
        "p.yaml",
    )
    .unwrap();
    denied(&eval_in(&scoped, &pod, &NoConfigMaps));
    let mut elsewhere = pod.clone();
    elsewhere["metadata"]["namespace"] = "other".into();
    allowed(&eval_in(&scoped, &elsewhere, &NoConfigMaps));
}

#[test]
fn known_command_entries_are_validated_with_locations() {
    let e = policy::parse(
        &format!("{HEAD}rules:\n  liveness-dependency:\n    knownCommands:\n      - name: x\n        programs: []\n        category: queue\n        reaches: a\n        why: b\n"),
        "p.yaml",
    )
    .unwrap_err();
    assert_eq!(e.field.as_deref(), Some("rules.liveness-dependency.knownCommands[0].programs"), "{e}");
    assert!(e.line.is_some(), "{e}");
    let e = policy::parse(
        &format!("{HEAD}rules:\n  liveness-dependency:\n    knownCommands:\n      - name: x\n        programs: [x]\n        category: broker\n        reaches: a\n        why: b\n"),
        "p.yaml",
    )
    .unwrap_err();
    assert!(e.to_string().contains("category"), "{e}");
    let e = policy::parse(&format!("{HEAD}rules:\n  liveness-dependency:\n    knownCommand: []\n"), "p.yaml")
        .unwrap_err();
    assert!(e.message.contains("did you mean `knownCommands`"), "{e}");
}

#[test]
fn scripts_calling_each_other_in_a_loop_terminate() {
    let pod: Value = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"containers": [{"name": "c", "image": "x",
            "livenessProbe": {"exec": {"command": ["/s/a.sh"]}},
            "volumeMounts": [{"name": "s", "mountPath": "/s"}]}],
            "volumes": [{"name": "s", "configMap": {"name": "loop"}}]}});
    let mut cms = StaticConfigMaps::new();
    cms.insert(
        "ns",
        "loop",
        [
            ("a.sh".to_string(), "#!/bin/sh\n. /s/a.sh\n/s/b.sh \"$1\"\n".to_string()),
            ("b.sh".to_string(), "#!/bin/sh\n/s/a.sh x\nsh /s/b.sh\n$0\n".to_string()),
        ]
        .into(),
    );
    allowed(&eval_in(&Policy::default(), &pod, &cms));
    // The same loop with a remote call at the end of the chain is still found.
    cms.insert(
        "ns",
        "loop",
        [
            ("a.sh".to_string(), "#!/bin/sh\n. /s/a.sh\n/s/b.sh db.prod.svc\n".to_string()),
            ("b.sh".to_string(), "#!/bin/sh\n/s/a.sh\npg_isready -h \"$1\"\n".to_string()),
        ]
        .into(),
    );
    let text = denied(&eval_in(&Policy::default(), &pod, &cms));
    assert!(text.contains("db.prod.svc"), "{text}");
}

#[test]
fn scripts_over_the_length_limit_are_reported_not_analysed_and_never_denied() {
    let policy = Policy::default();
    let pod = |script: String| -> Value {
        serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop"},
            "spec": {"containers": [{"name": "c", "image": "x",
                "livenessProbe": {"exec": {"command": ["sh", "-c", script]}}}]}})
    };
    // Pathological text (unclosed command substitutions) is bounded, not analysed, and reported.
    let huge = pod("a=$(".repeat(50_000));
    let e = eval_in(&policy, &huge, &NoConfigMaps);
    allowed(&e);
    assert_eq!(e.evaluation.unresolved.len(), 1, "{:?}", e.evaluation.unresolved);
    assert!(
        e.evaluation.unresolved[0].reason.contains("bytes probegate analyses"),
        "{:?}",
        e.evaluation.unresolved
    );
    // A dependency inside a long script is not denied on a guess either.
    let padded = format!("{}pg_isready -h orders-db.prod.svc", ": filler\n".repeat(2_000));
    let e = eval_in(&policy, &pod(padded), &NoConfigMaps);
    allowed(&e);
    assert!(e.evaluation.unresolved[0].reason.contains("18032-byte script"), "{:?}", e.evaluation.unresolved);
    // Just under the limit, the same script is analysed and denied.
    let short = format!("{}pg_isready -h orders-db.prod.svc", ": filler\n".repeat(1_500));
    assert!(short.len() <= probegate::engine::exec::MAX_SCRIPT_BYTES);
    let text = denied(&eval_in(&policy, &pod(short), &NoConfigMaps));
    assert!(text.contains("orders-db.prod.svc"), "{text}");
}

#[test]
fn expansions_that_multiply_are_bounded_reported_and_never_denied() {
    let policy = Policy::default();
    let pod = |command: Vec<String>, env: Value| -> Value {
        serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop"},
            "spec": {"containers": [{"name": "c", "image": "x", "env": env,
                "livenessProbe": {"exec": {"command": command}}}]}})
    };
    let sh = |script: String| vec!["sh".to_string(), "-c".to_string(), script];
    let expect_noted = |e: &ObjectEvaluation, what: &str| {
        allowed(e);
        assert_eq!(e.evaluation.unresolved.len(), 1, "{what}: {:?}", e.evaluation.unresolved);
        assert!(
            e.evaluation.unresolved[0].reason.contains("probegate analyses"),
            "{what}: {:?}",
            e.evaluation.unresolved
        );
    };
    // Shell variables: 4 KB of script that would expand to 120 MB.
    let script = format!("A={}\nB={}\nC={}\ncurl $C\n", "a".repeat(3000), "$A".repeat(200), "$B".repeat(200));
    let e = eval_in(&policy, &pod(sh(script), serde_json::json!([])), &NoConfigMaps);
    expect_noted(&e, "shell variables");
    // kubelet $(VAR) references in env values, multiplied by the command. (s27: through the
    // shell's `$V3`, which reads the container's environment, where the references are resolved;
    // a probe's own `$(V3)` gets V3's value as written, one pass: `tests/shell_flow_v20.rs`.)
    let mut env = vec![serde_json::json!({"name": "V0", "value": "x y ".repeat(25)})];
    for i in 1..4 {
        env.push(serde_json::json!({"name": format!("V{i}"), "value": format!("$(V{}) ", i - 1).repeat(40)}));
    }
    let e = eval_in(&policy, &pod(sh("$V3 ".repeat(40)), Value::from(env)), &NoConfigMaps);
    expect_noted(&e, "kubelet references");
    // A command of tens of thousands of arguments.
    let mut argv = sh("curl $1 $2 $@".into());
    argv.extend(std::iter::repeat_n("orders-db.prod.svc".to_string(), 20_000));
    let e = eval_in(&policy, &pod(argv, serde_json::json!([])), &NoConfigMaps);
    expect_noted(&e, "long argv");
    // Ordinary variable use is untouched: the same shape, small, is analysed and denied.
    let script = "A=orders-db.prod.svc\nB=$A\nC=$B\npg_isready -h $C\n".to_string();
    let text = denied(&eval_in(&policy, &pod(sh(script), serde_json::json!([])), &NoConfigMaps));
    assert!(text.contains("orders-db.prod.svc"), "{text}");
}

/// Commands with credentials in them (from a break-it pass): no message, warning or note may
/// quote the credential, whether the command is denied (remote) or only warned about (the same
/// handler for liveness and readiness).
#[test]
fn credentials_in_probe_commands_never_reach_messages() {
    let cases: &[&[&str]] = &[
        &[r#"sh"#, r#"-c"#, r#"curl --oauth2-bearer S3CR3T1 http://api.other.svc/health"#],
        &[r#"sh"#, r#"-c"#, r#"curl --user=admin:S3CR3T2 http://api.other.svc/health"#],
        &[r#"sh"#, r#"-c"#, r#"curl -uadmin:S3CR3T3 http://api.other.svc/health"#],
        &[r#"sh"#, r#"-c"#, r#"mongosh --host db.svc -u admin -p S3CR3T4 --eval 1"#],
        &[r#"sh"#, r#"-c"#, r#"cqlsh -u cassandra -p S3CR3T5 cass.svc"#],
        &[r#"sh"#, r#"-c"#, r#"curl -H 'X-Vault-Token: S3CR3T6' http://vault.svc:8200/v1/sys/health"#],
        &[r#"sh"#, r#"-c"#, r#"curl -H 'PRIVATE-TOKEN: S3CR3T7' http://gitlab.svc/api"#],
        &[r#"sh"#, r#"-c"#, r#"curl 'http://api.svc/health?key=S3CR3T8&sig=S3CR3T8b'"#],
        &[r#"sh"#, r#"-c"#, r#"redis-cli -h redis.svc --askpass <<< S3CR3T9"#],
        &[r#"sh"#, r#"-c"#, r#"redis-cli -h redis.svc AUTH S3CR3T10"#],
        &[r#"sh"#, r#"-c"#, r#"psql 'host=db.svc password=S3CR3T11' -c 'select 1'"#],
        &[r#"sh"#, r#"-c"#, r#"mysqladmin ping -h db.svc --password S3CR3T12"#],
        &[r#"sh"#, r#"-c"#, r#"mysql -h db.svc -pS3CR3T13 -e 'select 1'"#],
        &[r#"sh"#, r#"-c"#, r#"PGPASSWORD=S3CR3T14 pg_isready -h db.svc"#],
        &[r#"sh"#, r#"-c"#, r#"curl http://admin:S3CR3T15@api.svc/"#],
        &[r#"sh"#, r#"-c"#, r#"curl -H 'Authorization:Bearer S3CR3T16' http://api.svc/"#],
        &[r#"sh"#, r#"-c"#, r#"wget --header='Authorization: Bearer S3CR3T17' -qO- http://api.svc/"#],
        &[r#"sh"#, r#"-c"#, r#"wget --http-password=S3CR3T18 --http-user=a -qO- http://api.svc/"#],
        &[r#"sh"#, r#"-c"#, r#"rabbitmqctl -n rabbit@mq.svc --erlang-cookie S3CR3T19 status"#],
        &[r#"sh"#, r#"-c"#, r#"curl -d 'client_secret=S3CR3T21' http://auth.svc/token"#],
        &[r#"sh"#, r#"-c"#, r#"curl http://api.svc/ -H "Cookie: session=S3CR3T22""#],
        &[r#"sh"#, r#"-c"#, r#"export DB_PASS=S3CR3T23; mysqladmin ping -h db.svc -p$DB_PASS"#],
        &[r#"curl"#, r#"-H"#, r#"Authorization: Bearer S3CR3T24"#, r#"http://api.svc/"#],
        &[r#"sh"#, r#"-c"#, r#"mysqladmin -h db.svc -u root --password=S3CR3T25 ping"#],
        &[r#"sh"#, r#"-c"#, r#"redis-cli -h redis.svc -aS3CR3T26 ping"#],
        &[r#"sh"#, r#"-c"#, r#"redis-cli -u redis://default:S3CR3T27@redis.svc:6379 ping"#],
        &[r#"sh"#, r#"-c"#, r#"mongosh mongodb://u:S3CR3T28@db.svc/admin --eval 1"#],
        &[
            r#"sh"#,
            r#"-c"#,
            r#"kafka-topics.sh --bootstrap-server kafka.svc:9092 --command-config /x --list # S3CR3T29"#,
        ],
        &[r#"sh"#, r#"-c"#, r#"vault status -address=http://vault.svc -token=S3CR3T30"#],
        &[r#"sh"#, r#"-c"#, r#"curl -s http://api.svc/ --proxy-user u:S3CR3T31 "#],
        &[r#"sh"#, r#"-c"#, r#"curl -s "http://api.svc/?access_token=S3CR3T32""#],
        &[r#"sh"#, r#"-c"#, r#"curl -s http://api.svc/ -H"Authorization: Bearer S3CR3T33""#],
        &[r#"sh"#, r#"-c"#, r#"curl -s http://api.svc/ --header="Authorization: Bearer S3CR3T34""#],
        &[r#"sh"#, r#"-c"#, r#"grpc_health_probe -addr=grpc.svc:50051 -rpc-header=authorization:S3CR3T35"#],
        &[
            r#"sh"#,
            r#"-c"#,
            r#"etcdctl --endpoints=http://etcd.svc:2379 --password=S3CR3T36 endpoint health"#,
        ],
        &[
            r#"sh"#,
            r#"-c"#,
            r#"etcdctl --endpoints=http://etcd.svc:2379 --user=root:S3CR3T37 endpoint health"#,
        ],
        &[r#"sh"#, r#"-c"#, r#"pg_isready -d 'postgresql://u:S3CR3T38@db.svc/x'"#],
        &[r#"sh"#, r#"-c"#, r#"psql postgres://u:pS3CR3T39@@db.svc/x -c 1"#],
        &[r#"sh"#, r#"-c"#, r#"psql 'postgres://u:S3CR3T40@db.svc/x?sslpassword=S3CR3T40b'"#],
        // From a second break-it pass.
        &[r#"sh"#, r#"-c"#, r#"mysqlsh --uri root:S3CR3T41@m.svc:3306 --sql -e 'select 1'"#],
        &[r#"sh"#, r#"-c"#, r#"curl http://a.svc/h#access_token=S3CR3T42"#],
        &[r#"sh"#, r#"-c"#, r#"wget '--header=Authorization: Bearer S3CR3T43' -qO- http://a.svc/"#],
    ];
    let policy = Policy::default();
    let mut leaks = Vec::new();
    for argv in cases {
        let handler = serde_json::json!({"exec": {"command": argv}});
        for readiness in [false, true] {
            let mut container = serde_json::json!({"name": "c", "image": "x", "livenessProbe": handler});
            if readiness {
                container["readinessProbe"] = handler.clone();
            }
            let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop"},
                "spec": {"containers": [container]}});
            let e = eval_in(&policy, &pod, &NoConfigMaps);
            let mut shown: Vec<String> = e.evaluation.findings.iter().map(|f| f.describe()).collect();
            shown.extend(e.evaluation.unresolved.iter().map(|u| format!("{} {}", u.script, u.reason)));
            leaks
                .extend(shown.into_iter().filter(|t| t.contains("S3CR3T")).map(|t| format!("{argv:?}: {t}")));
        }
    }
    assert!(leaks.is_empty(), "{} leaks:\n{}", leaks.len(), leaks.join("\n"));
}

#[test]
fn kubelet_reference_chains_resolve_deep_and_too_deep_ones_are_not_analysed() {
    // (s27: the chains resolve in the container's environment, which the shell's `$V6` reads; a
    // probe's own `$(V6)` gets V6's value as written, `$(V5)`, as the kubelet's prober copies it:
    // `ExpandContainerCommandOnlyStatic`, kubernetes/kubernetes pkg/kubelet/container/helpers.go,
    // and `tests/shell_flow_v20.rs`. These rows read `$(V6)` until s26.)
    let policy = Policy::default();
    let pod = |env: Vec<Value>, host: &str| -> Value {
        let host = host.replace("$(", "$").replace(')', "");
        serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop"},
            "spec": {"containers": [{"name": "c", "image": "x", "env": env,
                "livenessProbe": {"exec": {"command": ["sh", "-c", format!("curl http://{host}:8080/")]}}}]}})
    };
    let chain = |first: &str, links: usize, link: &dyn Fn(usize) -> String| -> Vec<Value> {
        let mut env = vec![serde_json::json!({"name": "V0", "value": first})];
        env.extend((1..=links).map(|i| serde_json::json!({"name": format!("V{i}"), "value": link(i)})));
        env
    };
    // Six links to localhost: the kubelet resolves them, so it is the pod itself.
    let e =
        eval_in(&policy, &pod(chain("localhost", 6, &|i| format!("$(V{})", i - 1)), "$(V6)"), &NoConfigMaps);
    allowed(&e);
    assert!(e.evaluation.unresolved.is_empty(), "{:?}", e.evaluation.unresolved);
    // ...and to another host: denied, naming it.
    let text = denied(&eval_in(
        &policy,
        &pod(chain("orders-db.prod.svc", 6, &|i| format!("$(V{})", i - 1)), "$(V6)"),
        &NoConfigMaps,
    ));
    assert!(text.contains("orders-db.prod.svc"), "{text}");
    // A cycle, and a chain too deep to follow: not analysed, never denied.
    let cycle = vec![
        serde_json::json!({"name": "A", "value": "$(B)$(B)"}),
        serde_json::json!({"name": "B", "value": "$(A)$(A)"}),
    ];
    let e = eval_in(&policy, &pod(cycle, "$(A)"), &NoConfigMaps);
    allowed(&e);
    assert_eq!(e.evaluation.unresolved.len(), 1, "{:?}", e.evaluation.unresolved);
    let e = eval_in(
        &policy,
        &pod(chain("x", 40, &|i| format!("$(V{})$(V{})", i - 1, i - 1)), "$(V40)"),
        &NoConfigMaps,
    );
    allowed(&e);
    assert_eq!(e.evaluation.unresolved.len(), 1, "{:?}", e.evaluation.unresolved);
}

/// Evaluates a Pod whose one container runs `argv` as its liveness probe.
fn eval_liveness(argv: &[&str]) -> ObjectEvaluation {
    let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop"},
        "spec": {"containers": [{"name": "c", "image": "x", "livenessProbe": {"exec": {"command": argv}}}]}});
    eval_in(&Policy::default(), &pod, &NoConfigMaps)
}

/// Shell syntax that is not a command's arguments (issue 9): here-strings, here-documents,
/// `case` patterns, functions, arithmetic, `[[ ]]` and process substitution. Each construct has a
/// script that must be allowed (the pod checks itself, whatever the syntax around it) and one that
/// must be denied (the same syntax around a command that does reach a dependency).
#[test]
fn shell_syntax_around_a_local_check_is_not_a_dependency() {
    let allowed_scripts = [
        // The issue's case: the here-string is the client's stdin, not a URL.
        "curl -sf http://localhost:8080/healthz <<< ''",
        "curl -sf http://localhost:8080/healthz <<<''",
        "curl -sf http://localhost:8080/healthz <<< orders-db.prod.svc",
        "redis-cli -h 127.0.0.1 <<<\"PING\"",
        // A here-document's body is data (a file written, SQL fed to a local client).
        "cat <<EOF >/tmp/notes\nredis-cli -h cache.other.svc ping\nEOF\nredis-cli -h 127.0.0.1 ping",
        "cat <<-'EOF' >/tmp/notes\n\tpg_isready -h orders-db\n\tEOF\npg_isready -h localhost",
        "psql -h localhost -U app <<SQL\n\\connect other\nSELECT 1;\nSQL",
        "cat <<A <<\"B\" >/dev/null\ncurl http://a.svc\nA\ncurl http://b.svc\nB\ncurl -sf http://localhost/",
        "psql -h localhost<<SQL\nselect 1\nSQL",
        // Arithmetic: `<<` is a shift, and the rest of the script is still read.
        "n=$(( 1 << 4 )); curl -sf http://localhost:8080/healthz",
        "(( 2 << 3 > 4 )) && curl -sf http://localhost:8080/healthz",
        // case: patterns are not commands.
        "case \"$(redis-cli -h 127.0.0.1 ping)\" in PONG) exit 0;; *) exit 1;; esac",
        "case $MODE in\n  curl|http://orders.svc) curl -sf http://localhost/;;\n  (*) exit 1;;\nesac",
        "x=$(case $MODE in a) echo 1;; esac); curl -sf http://localhost:8080/$x",
        // Functions.
        "check() { curl -sf http://localhost:8080/healthz; }; check",
        "function check {\n  redis-cli -h 127.0.0.1 ping | grep -q PONG\n}\ncheck",
        // [[ ]] (its `<` is a comparison, not a redirection).
        "[[ -f /tmp/ready && $(curl -so /dev/null -w '%{http_code}' http://localhost:8080/) == 200 ]]",
        "[[ orders.svc < b ]] && curl -sf http://localhost:8080/",
        // Process substitution.
        "diff <(curl -s http://localhost:8080/a) <(echo ok)",
        "while read -r l; do :; done < <(curl -s http://localhost:8080/x)",
    ];
    for script in allowed_scripts {
        for shell in ["sh", "bash"] {
            let e = eval_liveness(&[shell, "-c", script]);
            let d = denials(&e);
            assert!(d.is_empty(), "{script:?}: {:?}", d.iter().map(|f| f.describe()).collect::<Vec<_>>());
            assert!(e.evaluation.unresolved.is_empty(), "{script:?}: {:?}", e.evaluation.unresolved);
        }
    }
    let denied_scripts = [
        ("curl -sf http://orders.svc:8080/healthz <<< ''", "orders.svc"),
        ("cat <<EOF >/tmp/notes\nhello\nEOF\nredis-cli -h cache.other.svc ping", "cache.other.svc"),
        ("psql -h orders-db <<SQL\nSELECT 1;\nSQL", "orders-db"),
        ("n=$(( 1 << 4 )); curl -sf http://orders.svc:8080/", "orders.svc"),
        ("(( 2 << 3 > 4 )) && curl -sf http://orders.svc:8080/", "orders.svc"),
        // (`in PONG) exit 0;; esac` alone is 0 with the cache down: no pattern matches, status 0.)
        (
            "case \"$(redis-cli -h cache.other.svc ping)\" in PONG) exit 0;; *) exit 1;; esac",
            "cache.other.svc",
        ),
        ("case $MODE in\n  a) redis-cli -h cache.other.svc ping;;\nesac", "cache.other.svc"),
        ("check() { curl -sf http://orders.svc:8080/healthz; }; check", "orders.svc"),
        ("[[ $(curl -s http://orders.svc/) == ok ]]", "orders.svc"),
        ("grep -q ok <(curl -s http://orders.svc/)", "orders.svc"),
        // (A `while read` loop fed by `< <(...)` has the loop's status, 0: a warning,
        // `tests/shell_flow_v2.rs`; `grep -q` reading it is denied, 1 / 0 in bash 5.2.)
        ("grep -q ok < <(curl -s http://orders.svc/x)", "orders.svc"),
    ];
    for (script, target) in denied_scripts {
        let text = denied(&eval_liveness(&["bash", "-c", script]));
        assert!(text.contains(target), "{script:?}: {text}");
    }
}

/// A password attached to its flag (`-PSECRET`) or given through any other spelling of the
/// client's credential flags never reaches a denial, a warning or a note (issue 9).
#[test]
fn attached_and_separate_password_flags_never_reach_messages() {
    let cases: &[&str] = &[
        "sqlcmd -S localhost -U sa -PS3CR3T1 -Q 'SELECT 1'",
        "sqlcmd -S db.svc -U sa -PS3CR3T2 -Q 'SELECT 1'",
        "sqlcmd -S db.svc -U sa -P S3CR3T3 -Q 'SELECT 1'",
        "bcp t out /tmp/x -S db.svc -U sa -PS3CR3T4",
        "ldapsearch -H ldap://ldap.svc -D cn=admin -wS3CR3T5 -b dc=x",
        "ldapwhoami -H ldap://ldap.svc -D cn=admin -w S3CR3T6",
        "mongosh --host db.svc -u admin -pS3CR3T7 --eval 1",
        "cqlsh -u cassandra -pS3CR3T8 cass.svc",
        "cypher-shell -a neo4j://db.svc -u neo4j -pS3CR3T9 'RETURN 1'",
        "cypher-shell -a neo4j://db.svc -u neo4j -p S3CR3T10 'RETURN 1'",
        "cypher-shell -a neo4j://db.svc -u neo4j --password=S3CR3T11 'RETURN 1'",
        "redis-cli -h redis.svc --pass S3CR3T12 ping",
        "redis-cli -h redis.svc --pass=S3CR3T13 ping",
        "nodetool -h cass.svc -u c -pw S3CR3T14 status",
        "influx -host db.svc -password S3CR3T15 -execute 'SHOW DATABASES'",
        "clickhouse-client --host ch.svc --password=S3CR3T16 -q 'SELECT 1'",
        "nats --server nats://nats.svc:4222 --password S3CR3T17 server ping",
        "rabbitmqadmin -H mq.svc -u a -pS3CR3T18 list queues",
        "mysqladmin -h db.svc -uroot -pS3CR3T19 ping",
        "mariadb -h db.svc --password=S3CR3T20 -e 'select 1'",
        "redis-cli -h redis.svc --askpass <<<S3CR3T21",
        "sshpass -pS3CR3T22 ssh db.svc true",
    ];
    let mut leaks = Vec::new();
    for script in cases {
        for argv in [vec!["sh", "-c", script], vec!["bash", "-c", &format!("exec {script}")]] {
            let handler = serde_json::json!({"exec": {"command": argv}});
            for readiness in [false, true] {
                let mut container = serde_json::json!({"name": "c", "image": "x", "livenessProbe": handler});
                if readiness {
                    container["readinessProbe"] = handler.clone();
                }
                let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop"},
                    "spec": {"containers": [container]}});
                let e = eval_in(&Policy::default(), &pod, &NoConfigMaps);
                let mut shown: Vec<String> = e.evaluation.findings.iter().map(|f| f.describe()).collect();
                shown.extend(e.evaluation.unresolved.iter().map(|u| format!("{} {}", u.script, u.reason)));
                leaks.extend(
                    shown.into_iter().filter(|t| t.contains("S3CR3T")).map(|t| format!("{script}: {t}")),
                );
            }
        }
    }
    assert!(leaks.is_empty(), "{} leaks:\n{}", leaks.len(), leaks.join("\n"));
    // The remote ones are still denied, naming the server (redaction hides only the secret).
    let text = denied(&eval_liveness(&["sh", "-c", "sqlcmd -S db.svc -U sa -PS3CR3T2 -Q 'SELECT 1'"]));
    assert!(text.contains("db.svc") && text.contains("-P***"), "{text}");
}

/// Issue 9's costly shape: 1000 words set once and expanded by 160 commands, in 14 containers.
/// Bytes alone did not bound its time (about 245 ms); work units (commands matched, words
/// expanded) do: the object is analysed up to the budget, the rest is noted, never denied.
#[test]
fn work_units_bound_words_multiplied_by_commands_and_the_rest_is_noted() {
    let policy = Policy::default();
    let words = vec!["w"; 1000].join(" ");
    let costly = format!("V=\"{words}\"; {}", "f $V; ".repeat(160));
    let coupled = "pg_isready -h orders-db".to_string();
    let mut scripts = vec![coupled.clone()];
    scripts.extend(std::iter::repeat_n(costly.clone(), 14));
    scripts.push(coupled.clone());
    let e = eval_in(&policy, &pod_with_liveness_scripts(&scripts), &NoConfigMaps);
    // The first container is analysed and denied; the last one, after the budget, is not, and is
    // noted (each container the budget stopped is, the coupled last one too).
    let d = denials(&e);
    assert_eq!(d.iter().map(|f| f.container.as_str()).collect::<Vec<_>>(), ["c0"]);
    let notes = &e.evaluation.unresolved;
    assert!(notes.iter().all(|n| n.over_bound && n.reason.contains("commands and words")), "{notes:?}");
    assert_eq!(
        notes.last().map(|n| (n.container.as_str(), n.script.as_str())),
        Some(("c15", "sh -c 'pg_isready -h orders-db'"))
    );
    // The same shape, small, is analysed as usual: a coupled command after it is denied.
    let small = format!("V=\"a b c\"; {}pg_isready -h orders-db", "f $V; ".repeat(20));
    let text = denied(&eval_in(&policy, &pod_with_liveness_scripts(&[small]), &NoConfigMaps));
    assert!(text.contains("orders-db"), "{text}");
    // Without an object budget one command is bounded the same way (find_dependency).
    let argv: Vec<String> =
        ["sh", "-c", &format!("{costly}pg_isready -h orders-db")].map(String::from).into();
    let outcome = probegate::engine::exec::analyze(
        &argv,
        &probegate::engine::exec::ExecEnv::default(),
        &probegate::engine::exec::Options::default(),
    );
    assert!(outcome.dependency.is_none());
    assert!(outcome.unresolved.iter().any(|u| u.over_bound && u.reason.contains("commands and words")));
}

/// Issue 9's cost bar, broken by the exit-status walk: the walk's work on each command (steps up
/// the tree, the `set` commands it weighs) counts against the same work units, so no shape of
/// script makes it take seconds: 200 `set +e` lines among 200 commands are 160,000 `set`s
/// weighed. The object is analysed up to the budget, the rest noted, never denied. (`date`, not
/// `echo x`: the walk skips a command that reaches nothing, `flow::uncoupled::reaches_nothing`.)
#[test]
fn the_exit_status_walk_counts_against_the_work_units() {
    let policy = Policy::default();
    let costly = format!("{}pg_isready -h orders-db", "set +e\ndate\n".repeat(200));
    let e = eval_in(&policy, &pod_with_liveness_scripts(&[costly]), &NoConfigMaps);
    assert!(denials(&e).is_empty(), "{:?}", denials(&e));
    let notes = &e.evaluation.unresolved;
    assert!(notes.iter().any(|u| u.over_bound && u.reason.contains("commands and words")), "{notes:?}");
    // The same shape, small, is analysed as usual: the check, last, is denied.
    let small = format!("{}pg_isready -h orders-db", "set +e\necho x\n".repeat(20));
    let text = denied(&eval_in(&policy, &pod_with_liveness_scripts(&[small]), &NoConfigMaps));
    assert!(text.contains("orders-db"), "{text}");
}

/// Break10 C1: nested `for ... && break` loops. Each step up the tree costs a walk down from the
/// root (tree-sitter's `Node::parent`), so the depth is charged per step, and once the units are
/// spent nothing more is walked: 150 levels (4.8 KB) took 12 s in a debug `check` without
/// reaching the 50,000 units; now it stops with the "not analysed" note (0.9 s). 25 levels are
/// analysed as before (`localhost` first: a warning).
#[test]
fn deeply_nested_loops_count_against_the_work_units() {
    let policy = Policy::default();
    let nested = |n: usize| {
        format!(
            "{}pg_isready -h $h && break; {}",
            "for h in localhost orders-db; do ".repeat(n),
            "done; ".repeat(n)
        )
    };
    let e = eval_in(&policy, &pod_with_liveness_scripts(&[nested(150)]), &NoConfigMaps);
    assert!(denials(&e).is_empty(), "{:?}", denials(&e));
    let notes = &e.evaluation.unresolved;
    assert!(notes.iter().any(|u| u.over_bound), "{notes:?}");
    // (12 deep, not 25: since s12 each check's status walk counts the loops under it, and 25
    // nested loops of two hosts spend the budget.)
    let e = eval_in(&policy, &pod_with_liveness_scripts(&[nested(12)]), &NoConfigMaps);
    assert!(denials(&e).is_empty(), "{:?}", denials(&e));
    assert!(!e.evaluation.unresolved.iter().any(|u| u.over_bound), "{:?}", e.evaluation.unresolved);
}

/// A Windows Pod whose liveness runs `powershell -File C:\probe\live.ps1` from a ConfigMap
/// (mounted at `/probe`, which a Windows container sees as `C:\probe`).
fn windows_pod(script: &str, file: &str) -> Vec<Value> {
    serde_json::from_value(serde_json::json!([
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "probe", "namespace": "shop"},
         "data": {"live.ps1": script}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "win", "namespace": "shop"},
         "spec": {"nodeSelector": {"kubernetes.io/os": "windows"},
                  "volumes": [{"name": "probe", "configMap": {"name": "probe"}}],
                  "containers": [{"name": "app", "image": "mcr.microsoft.com/windows/servercore:ltsc2022",
                    "volumeMounts": [{"name": "probe", "mountPath": "/probe"}],
                    "livenessProbe": {"exec": {"command":
                        ["powershell.exe", "-NoProfile", "-ExecutionPolicy", "Bypass", "-File", file]}}}]}}
    ]))
    .unwrap()
}

/// Issue #10: a PowerShell script file is read with the `-Command` rules of `tests/shell_flow.rs`
/// (`a_powershell_check_whose_error_the_script_goes_past_is_a_warning`): a database check whose
/// error the script catches or goes past, before the local check that sets the exit code, is a
/// warning; one whose `catch` exits 1 stays denied; a script in the image is noted, not judged by
/// its name.
#[test]
fn a_windows_script_file_is_judged_by_what_sets_its_exit_code() {
    let db = "Invoke-WebRequest http://orders-db.shop.svc:5432/ -UseBasicParsing";
    let local = "Invoke-WebRequest http://localhost:8080/healthz -UseBasicParsing";
    let policy = Policy::default();
    for script in [
        format!(
            "# database first, for the logs\r\ntry {{\r\n  {db} | Out-Null\r\n}} catch {{\r\n  Write-Warning 'db down'\r\n}}\r\n{local}\r\n"
        ),
        format!(
            "$ErrorActionPreference = 'SilentlyContinue'\n{db} *>$null\nif ($env:CHECK_CACHE) {{ Invoke-WebRequest http://cache:6379/ }}\n{local}\n"
        ),
    ] {
        let docs = windows_pod(&script, "C:\\probe\\live.ps1");
        let e = eval_in(&policy, named(&docs, "win"), &with_configmaps(&docs));
        allowed(&e);
        let warned: Vec<String> = e
            .evaluation
            .findings
            .iter()
            .filter(|f| f.rule == RuleId::LivenessDependency && f.action == Action::Warn)
            .map(|f| f.describe())
            .collect();
        assert!(
            warned.iter().any(|w| w.contains("orders-db.shop.svc") && w.contains("cannot fail the probe")),
            "{script:?}: {warned:?}"
        );
    }
    let coupled = format!("try {{\n  {db}\n}} catch {{\n  exit 1\n}}\n{local}\n");
    let docs = windows_pod(&coupled, "C:\\probe\\live.ps1");
    let text = denied(&eval_in(&policy, named(&docs, "win"), &with_configmaps(&docs)));
    assert!(text.contains("orders-db.shop.svc") && text.contains("C:\\probe\\live.ps1"), "{text}");
    // In the image: noted, no finding whatever the file is called.
    let docs = windows_pod(&coupled, "C:\\app\\check-orders-db.ps1");
    let e = eval_in(&policy, named(&docs, "win"), &with_configmaps(&docs));
    allowed(&e);
    assert!(!e.evaluation.findings.iter().any(|f| f.rule == RuleId::LivenessDependency));
    let noted: Vec<&str> = e.evaluation.unresolved.iter().map(|u| u.script.as_str()).collect();
    assert_eq!(noted, ["C:\\app\\check-orders-db.ps1"]);
}

/// A probe's command gets the kubelet's `$(NAME)` from the written `env` values only (kubelet
/// prober, `ExpandContainerCommandOnlyStatic` over `v1EnvVarsToMap`: a `valueFrom` entry maps to
/// its empty `value`; `envFrom` is not read): `pg_isready -h $(DATABASE_HOST)` runs
/// `pg_isready -h ''`, libpq's local default, whatever the ConfigMap says, and `$(DB_HOST)` set
/// only by `envFrom` stays literal text no resolver knows (s13 verdict pass: both were denied as
/// reaching orders-db). A shell's `$DATABASE_HOST` reads the run-time value and stays denied.
#[test]
fn a_probes_kubelet_reference_to_a_value_from_variable_is_empty() {
    let text = r#"
apiVersion: v1
kind: ConfigMap
metadata: {name: pg}
data: {host: orders-db.prod.svc, DB_HOST: orders-db.prod.svc}
---
apiVersion: v1
kind: Pod
metadata: {name: kubelet-ref}
spec:
  containers:
  - name: db
    image: postgres:16
    env:
    - name: DATABASE_HOST
      valueFrom: {configMapKeyRef: {name: pg, key: host}}
    livenessProbe: {exec: {command: ["pg_isready", "-U", "postgres", "-h", "$(DATABASE_HOST)"]}}
  - name: from
    image: app:1
    envFrom: [{configMapRef: {name: pg}}]
    livenessProbe: {exec: {command: ["pg_isready", "-h", "$(DB_HOST)"]}}
---
apiVersion: v1
kind: Pod
metadata: {name: shell-ref}
spec:
  containers:
  - name: app
    image: app:1
    env:
    - name: DATABASE_HOST
      valueFrom: {configMapKeyRef: {name: pg, key: host}}
    livenessProbe: {exec: {command: ["sh", "-c", "pg_isready -h $DATABASE_HOST"]}}
---
apiVersion: v1
kind: Pod
metadata: {name: static-ref}
spec:
  containers:
  - name: app
    image: app:1
    env: [{name: DATABASE_HOST, value: orders-db.prod.svc}]
    livenessProbe: {exec: {command: ["pg_isready", "-h", "$(DATABASE_HOST)"]}}
"#;
    let docs = probegate::manifest::parse_documents(text).unwrap();
    let cms = with_configmaps(&docs);
    let policy = Policy::default();
    let e = eval_in(&policy, named(&docs, "kubelet-ref"), &cms);
    allowed(&e);
    // In a `postgres` image `pg_isready -h ''` checks that server: no finding, and no note calling
    // it a script not analysed.
    assert!(
        e.evaluation.findings.iter().all(|f| f.rule != RuleId::LivenessDependency || f.container != "db"),
        "{:?}",
        e.evaluation
    );
    assert!(e.evaluation.unresolved.is_empty(), "{:?}", e.evaluation.unresolved);
    assert!(denied(&eval_in(&policy, named(&docs, "shell-ref"), &cms)).contains("orders-db.prod.svc"));
    assert!(denied(&eval_in(&policy, named(&docs, "static-ref"), &cms)).contains("orders-db.prod.svc"));
}

/// A Pod running a ConfigMap's `check.sh` mounted with `subPath` at `mount_path`, its liveness
/// probe `command`, with `extra` container fields (JSON).
fn subpath_pod(mount_path: &str, items: Value, command: &[&str], extra: Value) -> Vec<Value> {
    let mut container = serde_json::json!({"name": "app", "image": "x",
        "livenessProbe": {"exec": {"command": command}},
        "volumeMounts": [{"name": "checks", "mountPath": mount_path, "subPath": "check.sh"}]});
    for (k, v) in extra.as_object().into_iter().flatten() {
        container[k] = v.clone();
    }
    let mut volume =
        serde_json::json!({"name": "checks", "configMap": {"name": "checks", "defaultMode": 493}});
    if !items.is_null() {
        volume["configMap"]["items"] = items;
    }
    vec![
        serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "checks", "namespace": "shop"},
            "data": {"check.sh": "#!/bin/sh\npg_isready -h orders-db -t 2\n", "live.sh": "#!/bin/sh\nexit 0\n"}}),
        serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop"},
            "spec": {"containers": [container], "volumes": [volume]}}),
    ]
}

/// A ConfigMap script mounted as one file with `subPath` runs by its full path, or by its bare
/// name when its directory is on PATH (the Pod's `PATH`, else the container runtimes' default
/// one): both are read and analysed (issue 10, a miss: only directory mounts were found by name).
#[test]
fn a_configmap_script_mounted_with_subpath_is_found_by_path_and_by_bare_name() {
    let policy = Policy::default();
    let judge = |docs: &[Value]| {
        let cms = StaticConfigMaps::from_documents(docs, "default");
        let e = eval_in(&policy, &docs[1], &cms);
        let needed = engine::configmaps_needed(&workload(&docs[1]), &NoConfigMaps);
        (e, needed)
    };
    let none = Value::Null;
    let path = |p: &str| serde_json::json!({"env": [{"name": "PATH", "value": p}]});
    let shop = vec![(Some("shop".to_string()), "checks".to_string())];
    for (mount, command, extra) in [
        ("/usr/local/bin/check.sh", &["/usr/local/bin/check.sh"][..], none.clone()),
        ("/usr/local/bin/check.sh", &["check.sh"], none.clone()),
        ("/usr/local/bin/check.sh", &["sh", "-c", "check.sh"], none.clone()),
        ("/usr/bin/check.sh", &["timeout", "5", "check.sh"], none.clone()),
        ("/opt/probe/check.sh", &["check.sh"], path("/opt/probe:/usr/bin:/bin")),
        ("/opt/probe/check.sh", &["sh", "-c", "PATH=/opt/probe:$PATH; check.sh"], none.clone()),
        // A directory written with a trailing `/`.
        ("/opt/probe/check.sh", &["check.sh"], path("/opt/probe/:/bin")),
    ] {
        let (e, needed) = judge(&subpath_pod(mount, none.clone(), command, extra.clone()));
        let text = denied(&e);
        assert!(text.contains("orders-db") && text.contains(mount), "{command:?}: {text}");
        assert!(text.contains("ConfigMap shop/checks, key check.sh"), "{text}");
        if !command.iter().any(|c| c.contains("PATH=")) {
            assert_eq!(needed, shop, "{command:?}: the ConfigMap is fetched");
        }
    }
    // An empty entry of PATH is the working directory (POSIX, "Environment Variables": PATH): the
    // file is found there, and shown by the name run.
    let cwd =
        serde_json::json!({"workingDir": "/opt/probe", "env": [{"name": "PATH", "value": "/bin::/usr/bin"}]});
    let text = denied(&judge(&subpath_pod("/opt/probe/check.sh", none.clone(), &["check.sh"], cwd)).0);
    assert!(
        text.contains("orders-db") && text.contains("in check.sh (ConfigMap shop/checks, key check.sh)"),
        "{text}"
    );
    // `items` remaps a key to another file name; subPath names that file.
    let items = serde_json::json!([{"key": "check.sh", "path": "probe.sh"}]);
    let mut docs = subpath_pod("/usr/local/bin/check.sh", items, &["check.sh"], none.clone());
    docs[1]["spec"]["containers"][0]["volumeMounts"][0]["subPath"] = "probe.sh".into();
    denied(&judge(&docs).0);
    // A key the items do not map is no file: noted, never denied.
    let items = serde_json::json!([{"key": "live.sh", "path": "live.sh"}]);
    let (e, _) = judge(&subpath_pod("/usr/local/bin/check.sh", items, &["check.sh"], none.clone()));
    allowed(&e);
    assert!(
        e.evaluation.unresolved.iter().any(|u| u.script == "/usr/local/bin/check.sh"),
        "{:?}",
        e.evaluation.unresolved
    );
    // An emptyDir of binaries at /usr/local/bin (an init container copies them there): a client
    // run by its name is still judged by its name, and a script name there is noted.
    let mut docs =
        subpath_pod("/usr/local/bin/check.sh", none.clone(), &["pg_isready", "-h", "db"], none.clone());
    docs[1]["spec"]["volumes"][0] = serde_json::json!({"name": "checks", "emptyDir": {}});
    docs[1]["spec"]["containers"][0]["volumeMounts"][0] =
        serde_json::json!({"name": "checks", "mountPath": "/usr/local/bin"});
    assert!(denied(&judge(&docs).0).contains("reaches db"));
    docs[1]["spec"]["containers"][0]["livenessProbe"]["exec"]["command"] = serde_json::json!(["check.sh"]);
    let (e, _) = judge(&docs);
    allowed(&e);
    assert!(
        e.evaluation.unresolved.iter().any(|u| u.script == "/usr/local/bin/check.sh"),
        "{:?}",
        e.evaluation.unresolved
    );
    // Not on PATH (the Pod's PATH leaves /opt/probe out, or the default one has no /opt/probe),
    // another name, or a shell function of that name: not this file.
    for (mount, command, extra) in [
        ("/opt/probe/check.sh", &["check.sh"][..], none.clone()),
        ("/usr/local/bin/check.sh", &["check.sh"], path("/usr/bin:/bin")),
        ("/usr/local/bin/check.sh", &["other.sh"], none.clone()),
        ("/usr/local/bin/check.sh", &["sh", "-c", "check.sh() { exit 0; }; check.sh"], none.clone()),
    ] {
        allowed(&judge(&subpath_pod(mount, none.clone(), command, extra)).0);
    }
}

/// A probe's `$(DB_HOST)` of a `valueFrom` variable, in a container whose image is no Postgres
/// server: the kubelet runs `pg_isready -h ''` (written env values only, docs/scripts.md), the local
/// socket, not the ConfigMap's host the author meant. A warning that says what runs and what to do
/// (never a denial), no longer a note calling it a script not analysed, and no startupProbe patch
/// copying the command (s14, fresh-user pass).
#[test]
fn a_probes_kubelet_reference_emptied_by_value_from_is_a_warning_saying_what_runs() {
    let text = r#"
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
data: {DB_HOST: orders-db.prod.svc}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: app
    image: registry.example/shop/api:1.4
    env:
    - name: DB_HOST
      valueFrom: {configMapKeyRef: {name: cfg, key: DB_HOST}}
    livenessProbe: {exec: {command: ["pg_isready", "-h", "$(DB_HOST)"]}}
"#;
    let docs = probegate::manifest::parse_documents(text).unwrap();
    let cms = with_configmaps(&docs);
    let e = eval_in(&Policy::default(), named(&docs, "p"), &cms);
    allowed(&e);
    let f: Vec<&Finding> =
        e.evaluation.findings.iter().filter(|f| f.rule == RuleId::LivenessDependency).collect();
    assert_eq!(f.len(), 1, "{:?}", e.evaluation.findings);
    assert_eq!(f[0].action, Action::Warn);
    let m = &f[0].message;
    for part in [
        "runs `pg_isready -h ''`",
        "$(DB_HOST) from valueFrom",
        "a local server, likely absent",
        "$DB_HOST",
        "readinessProbe",
    ] {
        assert!(m.contains(part), "{part}: {m}");
    }
    assert!(!m.contains("not analysed"), "{m}");
    assert!(e.evaluation.unresolved.is_empty(), "{:?}", e.evaluation.unresolved);
    // Within a warning's 256 characters with a 20-character container name.
    let warning = format!("probegate: container {}: {m} (liveness-dependency)", "c".repeat(20));
    assert!(warning.chars().count() <= 256, "{} {warning}", warning.chars().count());
    // No startupProbe copies the command.
    assert!(
        e.evaluation.findings.iter().all(|f| f.rule != RuleId::StartupProbe || f.patch.is_empty()),
        "{:?}",
        e.evaluation.findings
    );
    // An HTTP client has no local default: `curl http://:8080/` has no host at all.
    let curl = text.replace(
        r#"["pg_isready", "-h", "$(DB_HOST)"]"#,
        r#"["curl", "-f", "http://$(DB_HOST):8080/health"]"#,
    );
    let docs = probegate::manifest::parse_documents(&curl).unwrap();
    let e = eval_in(&Policy::default(), named(&docs, "p"), &with_configmaps(&docs));
    allowed(&e);
    let m: Vec<&str> = e
        .evaluation
        .findings
        .iter()
        .filter(|f| f.rule == RuleId::LivenessDependency)
        .map(|f| f.message.as_str())
        .collect();
    assert!(
        m.len() == 1
            && m[0].contains("runs `curl -f http://:8080/health`")
            && m[0].contains("it gets no host"),
        "{m:?}"
    );
}

/// A probe's `$(POD_IP)` from a fieldRef inside `sh -c`: the kubelet empties it (written env values
/// only), so `redis-cli -h $(POD_IP) -p 6379 ping` runs `redis-cli -h -p 6379 ping`, whose host is
/// `-p`: the probe always fails, and reaches nothing. It was denied as reaching "-p (cache)" with
/// the advice to move the check to readiness (verdict break-it pass on a00d258). A warning that
/// says what runs and to use the shell's `$POD_IP`; a host that is no flag keeps its denial.
#[test]
fn a_kubelet_reference_emptied_before_a_flag_is_a_warning_not_a_dependency() {
    let pod = |script: &str| {
        format!(
            r#"
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  containers:
  - name: redis
    image: redis:7
    env:
    - name: POD_IP
      valueFrom: {{fieldRef: {{fieldPath: status.podIP}}}}
    livenessProbe: {{exec: {{command: ["sh", "-c", "{script}"]}}}}
"#
        )
    };
    let text = pod("redis-cli -h $(POD_IP) -p 6379 ping | grep PONG");
    let docs = probegate::manifest::parse_documents(&text).unwrap();
    let e = eval_in(&Policy::default(), named(&docs, "p"), &NoConfigMaps);
    allowed(&e);
    let f: Vec<&Finding> =
        e.evaluation.findings.iter().filter(|f| f.rule == RuleId::LivenessDependency).collect();
    assert_eq!(f.len(), 1, "{:?}", e.evaluation.findings);
    assert_eq!(f[0].action, Action::Warn);
    for part in ["redis-cli -h  -p 6379 ping", "`-p` is taken as the host", "always fails", "$POD_IP"] {
        assert!(f[0].message.contains(part), "{part}: {}", f[0].message);
    }
    // The word after the reference taken as the host (fresh-user pass on s15: "reaches ping").
    let text = pod("redis-cli -h $(POD_IP) ping | grep PONG");
    let docs = probegate::manifest::parse_documents(&text).unwrap();
    let e = eval_in(&Policy::default(), named(&docs, "p"), &NoConfigMaps);
    allowed(&e);
    let f: Vec<&Finding> =
        e.evaluation.findings.iter().filter(|f| f.rule == RuleId::LivenessDependency).collect();
    assert_eq!(f.len(), 1, "{:?}", e.evaluation.findings);
    assert_eq!(f[0].action, Action::Warn);
    for part in ["redis-cli -h  ping", "`ping` is taken as the host", "always fails"] {
        assert!(f[0].message.contains(part), "{part}: {}", f[0].message);
    }
    // A remote host after the emptied reference is still reached: denied.
    let text = pod("redis-cli -h cache -a $(POD_IP) ping | grep PONG");
    let docs = probegate::manifest::parse_documents(&text).unwrap();
    let e = eval_in(&Policy::default(), named(&docs, "p"), &NoConfigMaps);
    assert!(denied(&e).contains("cache"), "{:?}", e.evaluation.findings);
}

/// The liveness-dependency findings of the Pod `p` in `text`, after checking it is admitted.
fn liveness_warnings(text: &str) -> Vec<Finding> {
    let docs = probegate::manifest::parse_documents(text).unwrap();
    let e = eval_in(&Policy::default(), named(&docs, "p"), &NoConfigMaps);
    allowed(&e);
    e.evaluation.findings.into_iter().filter(|f| f.rule == RuleId::LivenessDependency).collect()
}

/// Break-it pass (s15): `$$(DB_HOST)` is the kubelet's escape for the text `$(DB_HOST)`
/// (Kubernetes docs, "Define a Command and Arguments for a Container"): `pg_isready` gets that
/// text as its host, and in `sh -c` bash and dash run `DB_HOST` as a command ("not found"), so
/// `pg_isready -h` gets no host. Neither reaches the database; it was denied as reaching
/// `$(DB_HOST)`. A warning that says what the kubelet and the shell make of it.
#[test]
fn an_escaped_kubelet_reference_is_text_not_a_dependency() {
    let pod = |command: &str| {
        format!(
            r#"
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  containers:
  - name: api
    image: shop/api:1
    env:
    - name: DB_HOST
      valueFrom: {{configMapKeyRef: {{name: cfg, key: host}}}}
    livenessProbe: {{exec: {{command: {command}}}}}
"#
        )
    };
    for (command, says) in [
        (r#"["pg_isready", "-h", "$$(DB_HOST)"]"#, "the text `$(DB_HOST)`, no host name"),
        (r#"["sh", "-c", "pg_isready -h $$(DB_HOST)"]"#, "runs a command named `DB_HOST` for its host"),
    ] {
        let f = liveness_warnings(&pod(command));
        assert_eq!(f.len(), 1, "{command}: {f:?}");
        assert_eq!(f[0].action, Action::Warn, "{command}");
        assert!(f[0].message.contains("`$$") && f[0].message.contains(says), "{}", f[0].message);
    }
    // The reference itself, unescaped, is still the kubelet-emptied warning (and a host named in
    // the same command still a denial).
    let f = liveness_warnings(&pod(r#"["pg_isready", "-h", "$(DB_HOST)"]"#));
    assert!(f[0].message.contains("from valueFrom is empty"), "{}", f[0].message);
    let docs =
        probegate::manifest::parse_documents(&pod(r#"["sh", "-c", "pg_isready -h db -p $$(DB_HOST)"]"#))
            .unwrap();
    let e = eval_in(&Policy::default(), named(&docs, "p"), &NoConfigMaps);
    assert!(denied(&e).contains("db"), "{:?}", e.evaluation.findings);
}

/// Break-it pass (s15): an env var with neither `value` nor `valueFrom` (`valueFrom: null`) is
/// empty in a probe's `$(R)`, as a `valueFrom` one is; it was emptied silently (no finding). Now the
/// same warning, saying it has no value (the shell's `$R` is empty too).
#[test]
fn a_variable_with_no_value_gets_the_emptied_warning() {
    let pod = |value_from: &str, script: &str| {
        format!(
            r#"
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  containers:
  - name: api
    image: shop/api:1
    env:
    - name: R
      {value_from}
    livenessProbe: {{exec: {{command: ["sh", "-c", "{script}"]}}}}
"#
        )
    };
    for value_from in ["valueFrom: null", "value: null"] {
        let f = liveness_warnings(&pod(value_from, "pg_isready -h $(R)"));
        assert_eq!(f.len(), 1, "{value_from}: {f:?}");
        assert_eq!(f[0].action, Action::Warn);
        for part in ["pg_isready -h ", "$(R) has no value", "local server", "give R a value"] {
            assert!(f[0].message.contains(part), "{part}: {}", f[0].message);
        }
        let f = liveness_warnings(&pod(value_from, "redis-cli -h $(R) -p 6379 ping"));
        assert!(f.len() == 1 && f[0].message.contains("`-p` is taken as the host"), "{f:?}");
    }
    // A valueFrom variable keeps its wording; a written empty value is what its author asked for.
    let f = liveness_warnings(&pod(
        "valueFrom: {resourceFieldRef: {resource: limits.cpu}}",
        "pg_isready -h $(R)",
    ));
    assert!(f.len() == 1 && f[0].message.contains("from valueFrom is empty, so"), "{f:?}");
    assert!(liveness_warnings(&pod("value: ''", "pg_isready -h $(R)")).is_empty());
}
