//! Known commands whose dependency the container's own settings make the container itself
//! (`unlessEnv`, s25): a single-node Elasticsearch/OpenSearch asking its cluster's health.
//!
//! deny25 (s25) found nextcloud/all-in-one's fulltextsearch liveness script,
//! `curl -fs -u "elastic:$ELASTIC_PASSWORD" "http://127.0.0.1:9200/_cluster/health?filter_path=status"
//! | grep -qE '"status":"(green|yellow)"' || exit 1`, in a container whose env sets
//! `discovery.type: single-node`, denied as reaching "the whole Elasticsearch/OpenSearch cluster".
//! A single-node node elects itself and never joins another (Elasticsearch docs, "Discovery and
//! cluster formation settings", `discovery.type`): the cluster is this container; nothing outside
//! the Pod is reached.

mod common;

use probegate::engine::{self, Evaluation};
use probegate::policy::{self, Policy, RuleId};
use serde_json::{Value, json};

/// A Pod whose container runs `script` (`sh -c`) as its liveness probe, with `env`.
fn pod(script: &str, env: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "es", "namespace": "search"},
        "spec": {"containers": [{"name": "es", "image": "docker.elastic.co/elasticsearch/elasticsearch:8.15.0",
            "env": env,
            "livenessProbe": {"exec": {"command": ["sh", "-c", script]}}}]}})
}

fn eval_with(policy: &Policy, obj: &Value) -> Evaluation {
    engine::evaluate(&policy.rules, &common::workload(obj))
}

fn dependency(e: &Evaluation) -> Option<String> {
    e.findings.iter().find(|f| f.rule == RuleId::LivenessDependency).map(|f| f.message.clone())
}

const AIO: &str = "curl -fs -u \"elastic:$ELASTIC_PASSWORD\" \"http://127.0.0.1:9200/_cluster/health?filter_path=status\" | grep -qE '\"status\":\"(green|yellow)\"' || exit 1";

#[test]
fn a_single_node_cluster_health_check_is_no_dependency() {
    let single = json!([{"name": "discovery.type", "value": "single-node"}, {"name": "ELASTIC_PASSWORD", "value": "pw"}]);
    for script in [
        AIO,
        "curl -sf http://localhost:9200/_cluster/health",
        "wget -qO- http://127.0.0.1:9200/_cat/health | grep -q green",
    ] {
        let e = eval_with(&Policy::default(), &pod(script, single.clone()));
        assert_eq!(dependency(&e), None, "{script}");
    }
}

/// The contrasts: without the setting, with another value, with a value known only at run time
/// (a Secret), or with the setting on another name, the cluster may be many nodes: denied as before.
#[test]
fn without_single_node_discovery_cluster_health_stays_denied() {
    for env in [
        json!([]),
        json!([{"name": "discovery.type", "value": "multi-node"}]),
        json!([{"name": "discovery.type", "valueFrom": {"secretKeyRef": {"name": "es", "key": "discovery"}}}]),
        json!([{"name": "DISCOVERY_TYPE", "value": "single-node"}]),
        json!([{"name": "discovery.seed_hosts", "value": "single-node"}]),
    ] {
        for script in [AIO, "wget -qO- http://127.0.0.1:9200/_cat/health | grep -q green"] {
            let e = eval_with(&Policy::default(), &pod(script, env.clone()));
            let m = dependency(&e).unwrap_or_else(|| panic!("{script} with {env}: not denied"));
            assert!(m.contains("the whole Elasticsearch/OpenSearch cluster"), "{m}");
            assert!(!m.contains("pw"), "{m}");
        }
    }
}

/// A single-node container asking ANOTHER host's cluster health still reaches it (the host
/// analysis, not the known command, decides).
#[test]
fn single_node_does_not_excuse_another_host() {
    let single = json!([{"name": "discovery.type", "value": "single-node"}]);
    let e = eval_with(
        &Policy::default(),
        &pod("curl -sf http://es-master.search.svc:9200/_cluster/health", single),
    );
    let m = dependency(&e).expect("denied");
    assert!(m.contains("es-master.search.svc"), "{m}");
}

/// A policy's own entry takes `unlessEnv` too (wildcards in the value); the policy file's schema
/// knows the field.
#[test]
fn a_policy_entry_takes_unless_env() {
    let text = "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\nrules:\n  liveness-dependency:\n    knownCommands:\n      - name: shopctl-health\n        programs: [shopctl]\n        args: [health]\n        unlessEnv: [SHOP_MODE=embedded*]\n        category: cache\n        reaches: the session cache\n        why: it reads a key\n";
    let policy = policy::parse(text, "p.yaml").unwrap_or_else(|e| panic!("{e}"));
    let denied = |env: Value| dependency(&eval_with(&policy, &pod("shopctl health", env)));
    assert!(denied(json!([])).is_some_and(|m| m.contains("the session cache")));
    assert!(denied(json!([{"name": "SHOP_MODE", "value": "remote"}])).is_some());
    assert_eq!(denied(json!([{"name": "SHOP_MODE", "value": "embedded-v2"}])), None);
    let schema = serde_json::to_string(&policy::json_schema()).unwrap();
    assert!(schema.contains("unlessEnv"), "the schema lacks unlessEnv");
    // A pattern without `=` never matches (nothing to compare).
    let bad = text.replace("SHOP_MODE=embedded*", "SHOP_MODE");
    let policy = policy::parse(&bad, "p.yaml").unwrap_or_else(|e| panic!("{e}"));
    assert!(
        dependency(&eval_with(&policy, &pod("shopctl health", json!([{"name": "SHOP_MODE", "value": "x"}]))))
            .is_some()
    );
}
