//! A probe's `$(NAME)` of a `valueFrom` variable that begins a host name (s26, fresh user).
//!
//! The kubelet expands a probe command's `$(NAME)` from the values written in `env` only
//! (`ExpandContainerCommandOnlyStatic`), so a `valueFrom` variable is the empty string there:
//! `redis-cli -h $(POD_NAME).pgv-headless.shop.svc.cluster.local ping` runs with the host
//! `.pgv-headless.shop.svc.cluster.local`, which no resolver answers (an empty first label; glibc's
//! `getent hosts .x` exits 2). The probe fails every time, dependency up or down: a warning saying
//! so, never a denial of a dependency it does not reach.

mod common;

use probegate::engine::{self, Evaluation};
use probegate::policy::{Action, Policy, RuleId};
use serde_json::{Value, json};

fn pod(env: Value, command: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pgv-0", "namespace": "shop"},
        "spec": {"containers": [{"name": "app", "image": "shop/api:1", "env": env,
            "livenessProbe": {"exec": {"command": command}}}]}})
}

fn liveness(obj: &Value) -> Option<(Action, String)> {
    let e: Evaluation = engine::evaluate(&Policy::default().rules, &common::workload(obj));
    e.findings.iter().find(|f| f.rule == RuleId::LivenessDependency).map(|f| (f.action, f.message.clone()))
}

fn from_field(name: &str) -> Value {
    json!([{"name": name, "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}])
}

#[test]
fn an_emptied_first_label_is_a_probe_that_always_fails() {
    for command in [
        json!(["sh", "-c", "redis-cli -h $(POD_NAME).pgv-headless.shop.svc.cluster.local ping"]),
        json!(["redis-cli", "-h", "$(POD_NAME).pgv-headless.shop.svc.cluster.local", "ping"]),
        json!(["pg_isready", "-h", "$(POD_NAME).pg-headless", "-p", "5432"]),
    ] {
        let (action, msg) = liveness(&pod(from_field("POD_NAME"), command.clone())).expect("a finding");
        assert_eq!(action, Action::Warn, "{command}: {msg}");
        assert!(msg.contains("$(POD_NAME)") && msg.contains("always fails"), "{command}: {msg}");
    }
    let secret = json!([{"name": "SHARD", "valueFrom": {"secretKeyRef": {"name": "s", "key": "shard"}}}]);
    let (action, msg) =
        liveness(&pod(secret, json!(["redis-cli", "-h", "$(SHARD).cache.svc", "ping"]))).expect("a finding");
    assert_eq!(action, Action::Warn, "{msg}");
}

/// The contrasts: a written value expands (the host is another service: denied), and an emptied
/// reference elsewhere in the script (`echo $(POD_NAME).`) does not excuse a remote host.
#[test]
fn a_written_value_still_reaches_the_host() {
    let written = json!([{"name": "SHARD", "value": "orders"}]);
    let (action, msg) =
        liveness(&pod(written, json!(["redis-cli", "-h", "$(SHARD).cache.svc", "ping"]))).expect("a finding");
    assert_eq!(action, Action::Deny, "{msg}");
    assert!(msg.contains("orders.cache.svc"), "{msg}");
    let env = json!([{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "SHARD", "value": "orders"}]);
    let (action, msg) =
        liveness(&pod(env, json!(["sh", "-c", "redis-cli -h $(SHARD).cache.svc ping; echo $(POD_NAME)."])))
            .expect("a finding");
    assert_eq!(action, Action::Deny, "{msg}");
}
