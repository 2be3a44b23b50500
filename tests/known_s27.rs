//! Misses of the liveness-dependency rule that real charts showed (s27), each from the program's
//! own source:
//! - `wait-for-it host:port -t 1` (frappe/helm's workers run it as a liveness probe), its
//!   `wait-for-it.sh` name, `-h H -p P`, `--host=H --port=P`, and eficode's `wait-for`
//!   (vishnubob/wait-for-it `wait-for-it.sh`, eficode/wait-for `wait-for`: their argument loops
//!   and exits; `src/engine/exec/wait_for.rs`). Measured in bash and dash with the two scripts
//!   and a TCP listener on 127.0.0.1 (up) or none (down), under `timeout 5`:
//!   `wait-for-it H:P -t 1` 0/124, `-h H -p P -t 1` 0/124, `--host=H --port=P -t 1` 0/124,
//!   `-s H:P -t 1 -- true` 0/124, `H:P -t 0 -- true` 0/124 (it waits for ever), `H:P` (15 s)
//!   0/124, but `H:P -t 1 -- true` 0/0 (the command runs whatever the wait gave), `H:P -t 1
//!   --bogus` 1/1 (usage), `--host=H:P` 124/124 (`*:*` is read first); `wait-for H:P -t 1 --
//!   true` 0/1, `wait-for -h H -p P` 1/1, `wait-for H:P -t 0 -- true` 1/1.
//! - A Beat's `test output` (libbeat `cmd/test/output.go`: it dials the output its config file
//!   names; `pkg/testing/console.go`: a failed step exits 1): a warning, never a denial (the
//!   output, and whether it is this Pod, is in the config file; Kafka, file and console outputs
//!   cannot be tested and exit 1 every time).
//! - KServe's `health_check.py registered_nodes` (kserve `python/huggingfaceserver/health_check.py`:
//!   `ray.init`, then fewer alive `ray.nodes()` than `--ray_node_count` is `sys.exit(1)`).

mod common;

use probegate::engine;
use probegate::policy::{Policy, RuleId};
use serde_json::{Value, json};

fn pod(command: Value, env: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "worker", "namespace": "apps"},
        "spec": {"containers": [{"name": "app", "image": "example.com/app:1", "env": env,
            "livenessProbe": {"exec": {"command": command}, "timeoutSeconds": 5}}]}})
}

/// The liveness-dependency finding's level (`deny`, `warn`) and message, if any.
fn finding_with_env(command: Value, env: Value) -> Option<(String, String)> {
    let e = engine::evaluate(&Policy::default().rules, &common::workload(&pod(command, env)));
    e.findings
        .iter()
        .find(|f| f.rule == RuleId::LivenessDependency)
        .map(|f| (format!("{:?}", f.action).to_ascii_lowercase(), f.message.clone()))
}

fn finding(command: Value) -> Option<(String, String)> {
    finding_with_env(command, json!([]))
}

fn sh(script: &str) -> Value {
    json!(["sh", "-c", script])
}

fn assert_denied(command: Value, reaches: &str) {
    let (level, msg) = finding(command.clone()).unwrap_or_default();
    assert_eq!(level, "deny", "{command}: {msg:?}");
    assert!(msg.contains(reaches), "{command}: {msg:?}");
}

fn assert_warned(command: Value, says: &str) {
    let (level, msg) = finding(command.clone()).unwrap_or_default();
    assert_eq!(level, "warn", "{command}: {msg:?}");
    assert!(msg.contains(says), "{command}: {msg:?}");
}

/// A wait whose status is the probe's (no command, `-s`, `-t 0`, eficode's wait-for): 0 with the
/// host up, non-zero (124, or the probe's timeout) with it down.
#[test]
fn a_wait_whose_status_is_the_probes_is_denied() {
    for script in [
        "wait-for-it db:5432 -t 1",
        "wait-for-it.sh db:5432 -t 1",
        "wait-for-it -h db -p 5432 -t 1",
        "wait-for-it --host=db --port=5432 -t 1",
        "wait-for-it -q db:5432",
        "wait-for-it -s db:5432 -t 1 -- true",
        "wait-for-it --strict db:5432 -t 1 -- echo ok",
        "wait-for-it db:5432 -t 0 -- true",
        "wait-for db:5432 -t 1 -- true",
        "wait-for db:5432 --timeout=2",
    ] {
        assert_denied(sh(script), "db:5432");
    }
    assert_denied(sh("/usr/local/bin/wait-for-it.sh redis-queue:6379 -t 1"), "redis-queue:6379");
    // No shell: the probe's own argv; frappe/helm's erpnext workers (deployment-worker-*.yaml)
    // run `["wait-for-it", "--host={{ .Values.mariadbHost }}", "--port={{ .Values.mariadbPort }}"]`.
    assert_denied(json!(["wait-for-it", "db:5432", "-t", "1"]), "db:5432");
    assert_denied(json!(["wait-for-it", "--host=erpnext-mariadb", "--port=3306"]), "erpnext-mariadb:3306");
    // The chart's shape: host and port from the environment.
    let (level, msg) = finding_with_env(
        sh("wait-for-it $REDIS_QUEUE -t 1"),
        json!([{"name": "REDIS_QUEUE", "value": "frappe-redis-queue:6379"}]),
    )
    .unwrap_or_default();
    assert_eq!(level, "deny", "{msg}");
    assert!(msg.contains("frappe-redis-queue:6379"), "{msg}");
    // Known only at run time (a Secret): a finding naming the variable, whatever its level.
    let secret = json!([{"name": "REDIS_QUEUE", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]);
    let found = finding_with_env(sh("wait-for-it $REDIS_QUEUE -t 1"), secret);
    assert!(found.as_ref().is_some_and(|(_, msg)| msg.contains("REDIS_QUEUE")), "{found:?}");
}

/// This Pod's own port, no wait at all, or a wait that cannot fail the probe: never a denial.
#[test]
fn a_local_or_broken_wait_is_not_denied() {
    for script in [
        "wait-for-it localhost:8000 -t 1",
        "wait-for-it 127.0.0.1:8000 -t 1",
        "wait-for-it -h localhost -p 8000",
        // "Unknown argument": the usage, exit 1 up or down (1/1).
        "wait-for-it db:5432 -t 1 --bogus",
        "wait-for -h db -p 5432",
        // `*:*` is read first: the host `--host=db` is never reached (124/124).
        "wait-for-it --host=db:5432 -t 1",
        "wait-for-it http://db:8080/health -t 1",
        // The probe's status does not read the wait's.
        "wait-for-it db:5432 -t 1 || true",
    ] {
        let found = finding(sh(script));
        assert!(found.as_ref().is_none_or(|(level, _)| level != "deny"), "{script}: {found:?}");
    }
    assert_eq!(finding(sh("wait-for-it localhost:8000 -t 1")), None);
    assert_eq!(finding(sh("wait-for-it db:5432 -t 1 --bogus")), None);
    assert_eq!(finding(sh("wait-for -h db -p 5432")), None);
}

/// Without `-s`, wait-for-it runs the command after the wait whatever the wait gave (0/0 with
/// `-- true`): the command is the check, and the wait only a warning (its length against
/// timeoutSeconds).
#[test]
fn a_command_after_a_wait_without_strict_is_the_check() {
    assert_warned(sh("wait-for-it db:5432 -t 1 -- true"), "timeoutSeconds");
    assert_warned(sh("wait-for-it db:5432 -t 1 -- sh -c 'exit 0'"), "without -s");
    // The command's own dependency is denied, after a local or a remote wait.
    assert_denied(sh("wait-for-it localhost:8000 -t 1 -- pg_isready -h orders-db"), "orders-db");
    assert_denied(sh("wait-for-it db:5432 -t 1 -- redis-cli -h cache ping"), "cache");
    assert_denied(sh("wait-for-it -s localhost:8000 -- redis-cli -h cache ping"), "cache");
    // A local wait and a local command: nothing.
    assert_eq!(finding(sh("wait-for-it localhost:8000 -t 1 -- curl -sf localhost:8000/healthz")), None);
    // eficode's `-t 0`: "no timeout" in its usage, no attempt in its loop (1/1): a warning.
    assert_warned(sh("wait-for db:5432 -t 0 -- true"), "wait-for version");
}

/// A Beat's `test output`: a warning naming the config file's output, never a denial.
#[test]
fn a_beats_test_output_is_a_warning() {
    for command in [
        sh("filebeat test output"),
        json!(["filebeat", "test", "output"]),
        sh("metricbeat test output -e"),
        sh("heartbeat test output -c /etc/heartbeat.yml"),
        json!(["/usr/share/filebeat/filebeat", "test", "output"]),
    ] {
        assert_warned(command, "config file");
    }
    for command in [
        sh("filebeat test config"),
        sh("filebeat test config -e"),
        sh("metricbeat test modules"),
        sh("filebeat -e"),
        sh("filebeat version"),
    ] {
        assert_eq!(finding(command.clone()), None, "{command}");
    }
    // Its status is not read: nothing to say.
    let found = finding(sh("filebeat test output || true"));
    assert!(found.as_ref().is_none_or(|(level, _)| level != "deny"), "{found:?}");
}

/// KServe's multi-node Ray check counts every node: another node's outage fails it.
#[test]
fn kserve_ray_registered_nodes_is_denied() {
    for command in [
        json!([
            "python3",
            "./huggingfaceserver/health_check.py",
            "registered_nodes",
            "--ray_node_count",
            "2"
        ]),
        sh("python3 huggingfaceserver/health_check.py registered_nodes --probe_name head_liveness"),
        sh(
            "python /workspace/health_check.py registered_node_and_runtime_health --health_check_url http://localhost:8080",
        ),
        json!(["python3", "-m", "huggingfaceserver.health_check", "registered_node_and_runtime_models"]),
    ] {
        assert_denied(command, "Ray cluster");
    }
    for command in [
        // Only the URL it is given: this Pod's server.
        json!([
            "python3",
            "./huggingfaceserver/health_check.py",
            "runtime_health",
            "--health_check_url",
            "http://localhost:8080"
        ]),
        // Another program of that name.
        json!(["python3", "/app/health_check.py", "--port", "8080"]),
    ] {
        assert_eq!(finding(command.clone()), None, "{command}");
    }
}

/// `curl ...health?local=true | grep green`: asked of this node, but the status is the cluster's
/// (Elasticsearch REST API docs, "Cluster health API": `local`, and the green/yellow/red
/// statuses; `src/engine/exec/es_health.rs`). Measured in bash and dash with curl stubbed to
/// print a green body (every node up) or a yellow one (another data node down): `| grep -q
/// green` 0/1, `| grep -q '"status":"green"'` 0/1, `| grep -qE "green|yellow"` 0/0, `| grep -qv
/// red` 0/0, the request alone 0/0, `| grep -q green || true` 0/0.
#[test]
fn a_required_green_of_local_cluster_health_is_denied() {
    for script in [
        "curl -s localhost:9200/_cluster/health?local=true | grep -q green",
        "curl -s 'http://127.0.0.1:9200/_cluster/health?local=true&timeout=5s' | grep -q '\"status\":\"green\"'",
        "wget -qO- 'localhost:9200/_cat/health?local' | grep green",
        "set -e; curl -fsS localhost:9200/_cluster/health?local | grep -q -e green",
    ] {
        assert_denied(sh(script), "other Elasticsearch/OpenSearch nodes");
    }
    for script in [
        "curl -s localhost:9200/_cluster/health?local=true | grep -qE 'green|yellow'",
        "curl -s localhost:9200/_cluster/health?local=true | grep -qv red",
        // The match inverted, or the patterns in a file, in every spelling grep takes: no
        // required `green` (a file's name is no pattern).
        "curl -s localhost:9200/_cluster/health?local=true | grep -q -v green",
        "curl -s localhost:9200/_cluster/health?local=true | grep -q --invert-match green",
        "curl -s localhost:9200/_cluster/health?local=true | grep -q -f /etc/probe/green.pat",
        "curl -s localhost:9200/_cluster/health?local=true | grep -qf /etc/probe/green.pat",
        "curl -s localhost:9200/_cluster/health?local=true | grep -q --file /etc/probe/green.pat",
        "curl -s localhost:9200/_cluster/health?local=true | grep -q --file=/etc/probe/green.pat",
        "curl -s localhost:9200/_cluster/health?local=true",
        "curl -s localhost:9200/_cluster/health?local=true | grep -q green || true",
        "echo green | grep -q green",
        "curl -s localhost:8080/status | grep -q green",
    ] {
        let found = finding(sh(script));
        assert!(found.as_ref().is_none_or(|(level, _)| level != "deny"), "{script}: {found:?}");
    }
    assert_eq!(finding(sh("curl -s localhost:9200/_cluster/health?local=true | grep -qv red")), None);
    // A single-node cluster is this container (as for the known command without `local`).
    let single = json!([{"name": "discovery.type", "value": "single-node"}]);
    let script = "curl -s localhost:9200/_cluster/health?local=true | grep -q green";
    assert_eq!(finding_with_env(sh(script), single), None);
}
