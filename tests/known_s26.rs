//! Known commands added at s26 (deny26): `dagster-daemon liveness-check` (and its old name
//! `health-check`), which read the daemons' heartbeat rows from the Dagster instance's storage
//! database (dagster/daemon/cli/__init__.py `liveness_check_command`), as dagster-io/dagster's Helm
//! chart runs it as the daemon's liveness probe.

mod common;

use probegate::engine;
use probegate::policy::{Policy, RuleId};
use serde_json::{Value, json};

fn pod(command: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "dagster-daemon", "namespace": "dagster"},
        "spec": {"containers": [{"name": "dagster", "image": "docker.io/dagster/dagster-celery-k8s:1.9.0",
            "livenessProbe": {"exec": {"command": command}}}]}})
}

fn liveness_dependency(command: Value) -> Option<(String, String)> {
    let e = engine::evaluate(&Policy::default().rules, &common::workload(&pod(command)));
    e.findings
        .iter()
        .find(|f| f.rule == RuleId::LivenessDependency)
        .map(|f| (format!("{:?}", f.action), f.message.clone()))
}

#[test]
fn dagster_daemon_liveness_check_reaches_the_instance_storage() {
    for command in [
        json!(["dagster-daemon", "liveness-check"]),
        json!(["dagster-daemon", "health-check"]),
        json!(["/bin/bash", "-c", "dagster-daemon liveness-check"]),
    ] {
        let (level, msg) = liveness_dependency(command.clone()).unwrap_or_default();
        assert!(msg.contains("Dagster instance storage"), "{command}: {msg:?}");
        assert!(level.to_ascii_lowercase().contains("deny"), "{command}: {level}");
    }
}

/// The contrasts: another subcommand, or a check whose status cannot fail the probe.
#[test]
fn other_dagster_commands_are_not_the_known_check() {
    for command in [
        json!(["dagster-daemon", "run"]),
        json!(["dagster-daemon", "heartbeat-dump"]),
        json!(["sh", "-c", "echo liveness-check"]),
    ] {
        assert_eq!(liveness_dependency(command.clone()), None, "{command}");
    }
    let (level, _) =
        liveness_dependency(json!(["sh", "-c", "dagster-daemon liveness-check || true"])).unwrap_or_default();
    assert!(!level.to_ascii_lowercase().contains("deny"), "{level}");
}
