//! Per rule: cases that must fire and cases that must not (snippets from rules.md §5 and the issue).

mod common;

use probegate::engine::{self, Evaluation};
use probegate::policy::{self, Action, Policy, RuleId};
use serde_json::{Value, json};

/// A Pod around the given `spec` YAML.
fn pod(spec_yaml: &str) -> Value {
    let spec = common::yaml(spec_yaml);
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": spec})
}

fn eval_with(policy: &Policy, obj: &Value) -> Evaluation {
    engine::evaluate(&policy.rules, &common::workload(obj))
}

fn eval(obj: &Value) -> Evaluation {
    eval_with(&Policy::default(), obj)
}

fn fired(e: &Evaluation, rule: RuleId) -> Vec<String> {
    e.findings.iter().filter(|f| f.rule == rule).map(|f| f.container.clone()).collect()
}

fn message(e: &Evaluation, rule: RuleId) -> String {
    e.findings.iter().find(|f| f.rule == rule).map(|f| f.message.clone()).unwrap_or_default()
}

// === liveness-dependency ===

/// The message says what the outage does to this object's kind of Pods (issue 13), for a Pod
/// also by its controller's kind.
#[test]
fn dependency_message_names_the_pods_of_the_objects_kind() {
    let spec = json!({"containers": [{"name": "c", "image": "x",
        "livenessProbe": {"exec": {"command": ["pg_isready", "-h", "orders-db"]}}}]});
    let template = json!({"spec": spec});
    let owned = |kind: &str| {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default",
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": kind, "name": "o", "uid": "u", "controller": true}]},
            "spec": spec})
    };
    let workload = |api: &str, kind: &str, body: Value| json!({"apiVersion": api, "kind": kind, "metadata": {"name": "w", "namespace": "default"}, "spec": body});
    for (obj, words) in [
        (workload("apps/v1", "Deployment", json!({"template": template})), "restart every replica;"),
        (workload("apps/v1", "StatefulSet", json!({"template": template})), "restart every replica;"),
        (
            workload("apps/v1", "DaemonSet", json!({"template": template})),
            "restart the container in every node's Pod;",
        ),
        (
            workload("batch/v1", "Job", json!({"template": template})),
            "kill the container in every running Pod of the Job;",
        ),
        (
            workload(
                "batch/v1",
                "CronJob",
                json!({"schedule": "@daily", "jobTemplate": {"spec": {"template": template}}}),
            ),
            "kill the container in every running Pod of its Jobs;",
        ),
        (
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}),
            "restart this Pod's container;",
        ),
        (owned("ReplicaSet"), "restart every replica;"),
        (owned("StatefulSet"), "restart every replica;"),
        (owned("DaemonSet"), "restart the container in every node's Pod;"),
        (owned("Job"), "kill the container in every running Pod of the Job;"),
        (owned("Rollout"), "restart the container in every Pod of its controller;"),
    ] {
        let m = message(&eval(&obj), RuleId::LivenessDependency);
        assert!(m.contains(&format!("its outage would {words}")), "{}: {m}", obj["kind"]);
    }
}

#[test]
fn dependency_fires_on_remote_exec_clients_and_names_the_dependency() {
    let cases = [
        // T01: pg_isready against the DB Service.
        r#"containers:
- name: api
  image: orders-api:4.2
  livenessProbe: {exec: {command: ["pg_isready", "-h", "orders-db.prod.svc", "-p", "5432"]}}"#,
        // T04: PGHOST points away.
        r#"containers:
- name: api
  image: reports:7
  env: [{name: PGHOST, value: reports-db.data.svc.cluster.local}]
  livenessProbe: {exec: {command: ["pg_isready"]}}"#,
        // T05: host from a ConfigMap is not local.
        r#"containers:
- name: api
  image: jobs:3
  env: [{name: REDIS_HOST, valueFrom: {configMapKeyRef: {name: cfg, key: redis_host}}}]
  livenessProbe: {exec: {command: ["sh", "-c", "redis-cli -h \"$REDIS_HOST\" ping | grep -q PONG"]}}"#,
        r#"containers:
- name: api
  image: web:1
  livenessProbe: {exec: {command: ["sh", "-c", "curl -fsS http://localhost:8080/healthz && curl -fsS http://payments.prod.svc/health"]}}"#,
    ];
    for spec in cases {
        let e = eval(&pod(spec));
        assert_eq!(fired(&e, RuleId::LivenessDependency), vec!["api"], "{spec}");
        let f = e.findings.iter().find(|f| f.rule == RuleId::LivenessDependency).unwrap();
        assert_eq!(f.action, Action::Deny);
        assert!(f.message.contains("readinessProbe"), "{}", f.message);
        // Never copy a coupled handler into a startup probe.
        assert!(fired(&e, RuleId::StartupProbe).is_empty(), "{spec}");
    }
    let e = eval(&pod(cases[0]));
    assert!(message(&e, RuleId::LivenessDependency).contains("orders-db.prod.svc"));
}

#[test]
fn dependency_fires_on_probe_hosts_unless_host_network_loopback() {
    // T08: another Service; T09: loopback without hostNetwork; T12: literal variable.
    for host in ["payments.prod.svc.cluster.local", "127.0.0.1", "$(POD_IP)", "10.0.0.7"] {
        let spec = format!(
            "containers:\n- name: web\n  image: nginx\n  livenessProbe: {{httpGet: {{host: {host:?}, path: /, port: 80}}}}\n"
        );
        assert_eq!(fired(&eval(&pod(&spec)), RuleId::LivenessDependency), vec!["web"], "{host}");
        let spec = format!(
            "containers:\n- name: web\n  image: redis\n  livenessProbe: {{tcpSocket: {{host: {host:?}, port: 6379}}}}\n"
        );
        assert_eq!(fired(&eval(&pod(&spec)), RuleId::LivenessDependency), vec!["web"], "{host}");
    }
    // T10: loopback with hostNetwork is the pod itself.
    let spec = "hostNetwork: true\ncontainers:\n- name: agent\n  image: a\n  livenessProbe: {httpGet: {host: 127.0.0.1, path: /healthz, port: 9099}}\n";
    assert!(fired(&eval(&pod(spec)), RuleId::LivenessDependency).is_empty());
    let spec = "hostNetwork: true\ncontainers:\n- name: agent\n  image: a\n  livenessProbe: {httpGet: {host: localhost, path: /healthz, port: 9099}}\n";
    assert!(fired(&eval(&pod(spec)), RuleId::LivenessDependency).is_empty());
}

#[test]
fn dependency_does_not_fire_on_self_checks() {
    let cases = [
        // T02: the database checking itself.
        r#"containers:
- name: postgres
  image: postgres:16
  livenessProbe: {exec: {command: ["pg_isready", "-U", "postgres", "-h", "127.0.0.1"]}}"#,
        r#"containers:
- name: postgres
  image: postgres:16
  livenessProbe: {exec: {command: ["pg_isready", "-U", "postgres"]}}"#,
        // T06: redis-cli ping, default host.
        r#"containers:
- name: redis
  image: redis:7.2
  livenessProbe: {exec: {command: ["redis-cli", "ping"]}}"#,
        r#"containers:
- name: mysql
  image: mysql:8
  livenessProbe: {exec: {command: ["mysqladmin", "ping", "-h", "127.0.0.1"]}}"#,
        // The pod's own IP from the downward API.
        r#"containers:
- name: app
  image: app:1
  env: [{name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}]
  livenessProbe: {exec: {command: ["sh", "-c", "curl -f http://$POD_IP:8080/livez"]}}"#,
        // T11: a Host header does not change the destination.
        r#"containers:
- name: web
  image: web:1
  livenessProbe: {httpGet: {path: /livez, port: 8080, httpHeaders: [{name: Host, value: shop.internal.example.com}]}}"#,
        // Opaque scripts are not guessed at.
        r#"containers:
- name: redis
  image: redis:7.2
  livenessProbe: {exec: {command: ["sh", "-c", "/health/ping_liveness_local.sh 5"]}}"#,
        r#"containers:
- name: app
  image: app:1
  livenessProbe: {grpc: {port: 7070}}"#,
    ];
    for spec in cases {
        assert!(fired(&eval(&pod(spec)), RuleId::LivenessDependency).is_empty(), "{spec}");
    }
}

#[test]
fn ordinary_init_containers_and_readiness_are_never_checked_for_dependencies() {
    let spec = r#"initContainers:
- name: wait-for-db
  image: postgres:16
  command: ["sh", "-c", "until pg_isready -h db; do sleep 1; done"]
  livenessProbe: {exec: {command: ["pg_isready", "-h", "db"]}}
containers:
- name: api
  image: api:1
  readinessProbe: {exec: {command: ["pg_isready", "-h", "db"]}}"#;
    assert!(fired(&eval(&pod(spec)), RuleId::LivenessDependency).is_empty());
    // A native sidecar is checked.
    let spec = r#"initContainers:
- name: proxy
  image: proxy:1
  restartPolicy: Always
  livenessProbe: {exec: {command: ["pg_isready", "-h", "db.prod.svc"]}}
containers:
- name: api
  image: api:1"#;
    assert_eq!(fired(&eval(&pod(spec)), RuleId::LivenessDependency), vec!["proxy"]);
}

// === liveness-matches-readiness ===

#[test]
fn matches_readiness_fires_when_liveness_gives_up_no_later() {
    // T15: same endpoint, same thresholds.
    let spec = "containers:\n- name: web\n  image: w\n  livenessProbe: {httpGet: {path: /healthz, port: 8080}}\n  readinessProbe: {httpGet: {path: /healthz, port: 8080}}\n";
    let e = eval(&pod(spec));
    assert_eq!(fired(&e, RuleId::LivenessMatchesReadiness), vec!["web"]);
    assert_eq!(
        e.findings.iter().find(|f| f.rule == RuleId::LivenessMatchesReadiness).unwrap().action,
        Action::Warn
    );
    // T17: named port resolving to the same number.
    let spec = "containers:\n- name: web\n  image: w\n  ports: [{name: http, containerPort: 8080}]\n  livenessProbe: {httpGet: {path: /healthz, port: http}}\n  readinessProbe: {httpGet: {path: /healthz, port: 8080}}\n";
    assert_eq!(fired(&eval(&pod(spec)), RuleId::LivenessMatchesReadiness), vec!["web"]);
    // Same exec command; liveness window shorter than readiness.
    let spec = "containers:\n- name: zk\n  image: z\n  livenessProbe: {exec: {command: [zookeeper-ready, '2181']}, failureThreshold: 2}\n  readinessProbe: {exec: {command: [zookeeper-ready, '2181']}}\n";
    assert_eq!(fired(&eval(&pod(spec)), RuleId::LivenessMatchesReadiness), vec!["zk"]);
    let spec = "containers:\n- name: r\n  image: r\n  livenessProbe: {tcpSocket: {port: 6379}}\n  readinessProbe: {tcpSocket: {port: 6379}}\n";
    assert_eq!(fired(&eval(&pod(spec)), RuleId::LivenessMatchesReadiness), vec!["r"]);
    // A longer initial delay is not a longer failure budget: it only delays the first check.
    let spec = "containers:\n- name: web\n  image: w\n  livenessProbe: {httpGet: {path: /healthz, port: 8080}, initialDelaySeconds: 15}\n  readinessProbe: {httpGet: {path: /healthz, port: 8080}}\n";
    assert_eq!(fired(&eval(&pod(spec)), RuleId::LivenessMatchesReadiness), vec!["web"]);
}

/// A client's explicit loopback host (`-h 127.0.0.1`, `--host=localhost`) where its default is
/// local is the same check as none (fresh-user finding); a `sh -c` script that is one plain
/// command is that command. Not when an env default (`PGHOST`) makes "no host" another machine, nor
/// for another host, nor a flag that is no host option (curl's `-h` is help).
#[test]
fn matches_readiness_treats_an_explicit_default_loopback_host_as_none() {
    let same = |live: &str, ready: &str, env: &str| {
        let spec = format!(
            "containers:\n- name: c\n  image: c\n{env}  livenessProbe: {{exec: {{command: {live}}}}}\n  readinessProbe: {{exec: {{command: {ready}}}}}\n"
        );
        fired(&eval(&pod(&spec)), RuleId::LivenessMatchesReadiness) == vec!["c"]
    };
    for (live, ready) in [
        ("[redis-cli, -h, 127.0.0.1, ping]", "[redis-cli, ping]"),
        ("[redis-cli, -h127.0.0.1, ping]", "[redis-cli, ping]"),
        ("[pg_isready, -U, app, --host=localhost]", "[pg_isready, -U, app]"),
        ("[mysqladmin, ping, -h, localhost]", "[mysqladmin, ping]"),
        ("[sh, -c, \"redis-cli -h localhost ping\"]", "[redis-cli, ping]"),
        ("[redis-cli, -h, localhost, ping]", "[redis-cli, -h, 127.0.0.1, ping]"),
    ] {
        assert!(same(live, ready, ""), "{live} vs {ready}");
    }
    for (live, ready) in [
        ("[redis-cli, -h, cache, ping]", "[redis-cli, ping]"),
        ("[redis-cli, -a, -h, ping]", "[redis-cli, ping]"),
        ("[curl, -h, localhost]", "[curl, localhost]"),
        ("[sh, -c, \"redis-cli -h localhost ping || true\"]", "[redis-cli, ping]"),
    ] {
        assert!(!same(live, ready, ""), "{live} vs {ready}");
    }
    // PGHOST names the host when no option does: `-h localhost` is another check.
    let env = "  env: [{name: PGHOST, value: orders-db}]\n";
    assert!(!same("[pg_isready, -h, localhost]", "[pg_isready]", env));
}

/// Fresh-user finding: the advice fits the check. A shared local check can only be made more
/// patient; "make it check only this container" is for one that reaches a dependency.
#[test]
fn matches_readiness_advice_fits_whether_the_check_is_local() {
    let spec = "containers:\n- name: web\n  image: w\n  livenessProbe: {httpGet: {path: /healthz, port: 8080}}\n  readinessProbe: {httpGet: {path: /healthz, port: 8080}}\n";
    let text = message(&eval(&pod(spec)), RuleId::LivenessMatchesReadiness);
    assert!(text.contains("lengthen its failure window"), "{text}");
    assert!(!text.contains("only this container") && !text.contains("make it local"), "{text}");
    let spec = "containers:\n- name: api\n  image: a\n  livenessProbe: {exec: {command: [pg_isready, -h, orders-db]}}\n  readinessProbe: {exec: {command: [pg_isready, -h, orders-db]}}\n";
    let text = message(&eval(&pod(spec)), RuleId::LivenessMatchesReadiness);
    assert!(text.contains("make it check only this container"), "{text}");
}

#[test]
fn messages_never_carry_secrets_from_probe_commands_or_paths() {
    // The same handler twice: the message quotes it, without the token or the password.
    let spec = "containers:\n- name: web\n  image: w\n  livenessProbe: {httpGet: {path: '/health?access_token=tok-123&x=1', port: 8080}}\n  readinessProbe: {httpGet: {path: '/health?access_token=tok-123&x=1', port: 8080}}\n";
    let text = message(&eval(&pod(spec)), RuleId::LivenessMatchesReadiness);
    assert!(text.contains("/health?access_token=***&x=1"), "{text}");
    assert!(!text.contains("tok-123"), "{text}");
    let spec = "containers:\n- name: m\n  image: m\n  livenessProbe: {exec: {command: [mysqladmin, --password, pw-456, ping]}}\n  readinessProbe: {exec: {command: [mysqladmin, --password, pw-456, ping]}}\n";
    let text = message(&eval(&pod(spec)), RuleId::LivenessMatchesReadiness);
    assert!(text.contains("mysqladmin --password *** ping"), "{text}");
    assert!(!text.contains("pw-456"), "{text}");
    // A denial names the remote host but not the token in its query string.
    let spec = "containers:\n- name: c\n  image: c\n  livenessProbe: {exec: {command: [curl, -fsS, 'http://orders.shop.svc:8080/health?token=tok-789']}}\n";
    let text = message(&eval(&pod(spec)), RuleId::LivenessDependency);
    assert!(text.contains("orders.shop.svc"), "{text}");
    assert!(!text.contains("tok-789"), "{text}");
}

#[test]
fn matches_readiness_does_not_fire_on_the_documented_pattern_or_different_handlers() {
    let cases = [
        // T16: same endpoint, liveness more tolerant (the docs' common pattern).
        "containers:\n- name: web\n  image: w\n  livenessProbe: {httpGet: {path: /healthz, port: 8080}, failureThreshold: 6}\n  readinessProbe: {httpGet: {path: /healthz, port: 8080}, failureThreshold: 2}\n",
        // Query string differs.
        "containers:\n- name: web\n  image: w\n  livenessProbe: {httpGet: {path: '/healthz', port: 8080}}\n  readinessProbe: {httpGet: {path: '/healthz?full=true', port: 8080}}\n",
        // Headers differ.
        "containers:\n- name: web\n  image: w\n  livenessProbe: {httpGet: {path: /, port: 8080, httpHeaders: [{name: Cookie, value: a=1}]}}\n  readinessProbe: {httpGet: {path: /, port: 8080, httpHeaders: [{name: Cookie, value: a=2}]}}\n",
        // Different ports; different handler types; only one probe.
        "containers:\n- name: web\n  image: w\n  livenessProbe: {httpGet: {path: /healthz, port: 8080}}\n  readinessProbe: {httpGet: {path: /healthz, port: 8081}}\n",
        "containers:\n- name: web\n  image: w\n  livenessProbe: {tcpSocket: {port: 8080}}\n  readinessProbe: {httpGet: {path: /, port: 8080}}\n",
        "containers:\n- name: web\n  image: w\n  livenessProbe: {tcpSocket: {port: 8080}}\n",
    ];
    for spec in cases {
        assert!(fired(&eval(&pod(spec)), RuleId::LivenessMatchesReadiness).is_empty(), "{spec}");
    }
}

// === readiness-missing ===

#[test]
fn readiness_missing_fires_only_for_serving_app_containers_of_long_running_pods() {
    let spec = "containers:\n- name: web\n  image: w\n  ports: [{containerPort: 8080}]\n";
    assert_eq!(fired(&eval(&pod(spec)), RuleId::ReadinessMissing), vec!["web"]);
    let not = [
        "containers:\n- name: worker\n  image: w\n",
        "containers:\n- name: web\n  image: w\n  ports: [{containerPort: 8080}]\n  readinessProbe: {tcpSocket: {port: 8080}}\n",
        "restartPolicy: Never\ncontainers:\n- name: job\n  image: w\n  ports: [{containerPort: 8080}]\n",
        "initContainers:\n- name: side\n  image: s\n  restartPolicy: Always\n  ports: [{containerPort: 9000}]\ncontainers:\n- name: app\n  image: a\n",
    ];
    for spec in not {
        assert!(fired(&eval(&pod(spec)), RuleId::ReadinessMissing).is_empty(), "{spec}");
    }
}

// === probe-timeout ===

#[test]
fn probe_timeout_raises_low_timeouts_and_never_lowers_one() {
    let spec = "containers:\n- name: web\n  image: w\n  livenessProbe: {httpGet: {path: /livez, port: 8080}}\n  readinessProbe: {httpGet: {path: /readyz, port: 8080}, timeoutSeconds: 1}\n";
    let e = eval(&pod(spec));
    let f = e.findings.iter().find(|f| f.rule == RuleId::ProbeTimeout).unwrap();
    let ops = serde_json::to_value(&f.patch).unwrap();
    assert_eq!(
        ops,
        json!([
            {"op": "add", "path": "/spec/containers/0/livenessProbe/timeoutSeconds", "value": 3},
            {"op": "add", "path": "/spec/containers/0/readinessProbe/timeoutSeconds", "value": 2}
        ])
    );
    let spec = "containers:\n- name: web\n  image: w\n  livenessProbe: {httpGet: {path: /livez, port: 8080}, timeoutSeconds: 10}\n  readinessProbe: {httpGet: {path: /readyz, port: 8080}, timeoutSeconds: 2}\n";
    assert!(fired(&eval(&pod(spec)), RuleId::ProbeTimeout).is_empty());
    // Custom minimums from the policy.
    let p = policy::parse(
        "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\nrules:\n  probe-timeout: {livenessMinSeconds: 11}\n",
        "t",
    )
    .unwrap();
    assert_eq!(fired(&eval_with(&p, &pod(spec)), RuleId::ProbeTimeout), vec!["web"]);
}

// === startup-probe ===

#[test]
fn startup_probe_is_added_with_the_liveness_handler_and_the_budget() {
    // T20: a big initialDelaySeconds moves into the startup budget and leaves liveness.
    let spec = "containers:\n- name: web\n  image: w\n  livenessProbe: {httpGet: {path: /livez, port: 8080}, initialDelaySeconds: 300, timeoutSeconds: 3}\n";
    let e = eval(&pod(spec));
    let f = e.findings.iter().find(|f| f.rule == RuleId::StartupProbe).unwrap();
    assert_eq!(
        serde_json::to_value(&f.patch).unwrap(),
        json!([
            {"op": "add", "path": "/spec/containers/0/startupProbe", "value": {
                "httpGet": {"path": "/livez", "port": 8080, "scheme": "HTTP"},
                "initialDelaySeconds": 0, "periodSeconds": 5, "timeoutSeconds": 3,
                "successThreshold": 1, "failureThreshold": 66}},
            {"op": "remove", "path": "/spec/containers/0/livenessProbe/initialDelaySeconds"}
        ])
    );
    // Default budget: 120 s at period 5 = 24; a small delay stays on liveness.
    let spec = "containers:\n- name: w\n  image: w\n  livenessProbe: {exec: {command: [cat, /tmp/ok]}, initialDelaySeconds: 10}\n";
    let e = eval(&pod(spec));
    let f = e.findings.iter().find(|f| f.rule == RuleId::StartupProbe).unwrap();
    let v = serde_json::to_value(&f.patch).unwrap();
    assert_eq!(v[0]["value"]["failureThreshold"], 24);
    assert_eq!(v[0]["value"]["exec"]["command"], json!(["cat", "/tmp/ok"]));
    assert_eq!(v[0]["value"]["timeoutSeconds"], 3);
    assert_eq!(f.patch.len(), 1);
}

#[test]
fn startup_probe_is_not_added_without_liveness_or_with_one_present() {
    let not = [
        "containers:\n- name: w\n  image: w\n  readinessProbe: {tcpSocket: {port: 1}}\n",
        "containers:\n- name: w\n  image: w\n  livenessProbe: {tcpSocket: {port: 1}}\n  startupProbe: {tcpSocket: {port: 1}}\n",
    ];
    for spec in not {
        assert!(fired(&eval(&pod(spec)), RuleId::StartupProbe).is_empty(), "{spec}");
    }
}

// === prestop-sleep ===

#[test]
fn prestop_sleep_adds_a_hook_creating_parents_and_keeping_other_hooks() {
    let cases = [
        (
            "lifecycle: null",
            json!({"op": "add", "path": "/spec/containers/0/lifecycle", "value": {"preStop": {"sleep": {"seconds": 5}}}}),
        ),
        (
            "imagePullPolicy: IfNotPresent",
            json!({"op": "add", "path": "/spec/containers/0/lifecycle", "value": {"preStop": {"sleep": {"seconds": 5}}}}),
        ),
        (
            "lifecycle: {}",
            json!({"op": "add", "path": "/spec/containers/0/lifecycle/preStop", "value": {"sleep": {"seconds": 5}}}),
        ),
        (
            "lifecycle: {postStart: {exec: {command: [touch, /x]}}}",
            json!({"op": "add", "path": "/spec/containers/0/lifecycle/preStop", "value": {"sleep": {"seconds": 5}}}),
        ),
    ];
    for (extra, expected) in cases {
        let spec =
            format!("containers:\n- name: web\n  image: w\n  ports: [{{containerPort: 80}}]\n  {extra}\n");
        let obj = pod(&spec);
        let e = eval(&obj);
        let f =
            e.findings.iter().find(|f| f.rule == RuleId::PrestopSleep).unwrap_or_else(|| panic!("{spec}"));
        assert_eq!(serde_json::to_value(&f.patch).unwrap(), json!([expected]), "{spec}");
        let after = common::apply(&obj, &json_patch::Patch(f.patch.clone()));
        let pod = common::parse_pod(&after);
        let lc = pod.spec.unwrap().containers[0].lifecycle.clone().unwrap();
        assert_eq!(lc.pre_stop.unwrap().sleep.unwrap().seconds, 5);
        if extra.contains("postStart") {
            assert!(lc.post_start.is_some());
        }
    }
    // Exec style.
    let p = policy::parse("apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\nrules:\n  prestop-sleep: {style: exec, seconds: 7}\n", "t").unwrap();
    let e = eval_with(&p, &pod("containers:\n- name: web\n  image: w\n  ports: [{containerPort: 80}]\n"));
    let f = e.findings.iter().find(|f| f.rule == RuleId::PrestopSleep).unwrap();
    assert_eq!(
        serde_json::to_value(&f.patch).unwrap()[0]["value"],
        json!({"preStop": {"exec": {"command": ["sleep", "7"]}}})
    );
}

#[test]
fn prestop_sleep_does_not_patch_where_it_must_not() {
    let not = [
        // Existing preStop (including an explicit zero sleep).
        "containers:\n- name: web\n  image: w\n  ports: [{containerPort: 80}]\n  lifecycle: {preStop: {sleep: {seconds: 0}}}\n",
        // No ports.
        "containers:\n- name: worker\n  image: w\n",
        // Batch pods.
        "restartPolicy: OnFailure\ncontainers:\n- name: web\n  image: w\n  ports: [{containerPort: 80}]\n",
        // Native sidecars.
        "initContainers:\n- name: side\n  image: s\n  restartPolicy: Always\n  ports: [{containerPort: 9000}]\ncontainers:\n- name: app\n  image: a\n",
    ];
    for spec in not {
        assert!(fired(&eval(&pod(spec)), RuleId::PrestopSleep).is_empty(), "{spec}");
    }
    // Grace period not above the sleep: reported, not patched.
    for grace in [0, 3, 5] {
        let spec = format!(
            "terminationGracePeriodSeconds: {grace}\ncontainers:\n- name: web\n  image: w\n  ports: [{{containerPort: 80}}]\n"
        );
        let e = eval(&pod(&spec));
        let f = e.findings.iter().find(|f| f.rule == RuleId::PrestopSleep).unwrap();
        assert!(f.patch.is_empty(), "{grace}");
        assert!(f.message.contains("terminationGracePeriodSeconds"), "{}", f.message);
    }
    let spec = "terminationGracePeriodSeconds: 6\ncontainers:\n- name: web\n  image: w\n  ports: [{containerPort: 80}]\n";
    assert!(
        !eval(&pod(spec)).findings.iter().find(|f| f.rule == RuleId::PrestopSleep).unwrap().patch.is_empty()
    );
}

// === patch paths ===

#[test]
fn patch_paths_follow_the_kind_and_container_indexes() {
    let spec = common::yaml(
        "initContainers:\n- name: init\n  image: i\n- name: side\n  image: s\n  restartPolicy: Always\n  livenessProbe: {tcpSocket: {port: 1}, timeoutSeconds: 5}\ncontainers:\n- name: proxy\n  image: envoy\n- name: app\n  image: a\n  livenessProbe: {tcpSocket: {port: 2}, timeoutSeconds: 5}\n",
    );
    let template = json!({"metadata": {"labels": {"a": "b"}}, "spec": spec});
    let objects = [
        (json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}), "/spec"),
        (
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"selector": {}, "template": template}}),
            "/spec/template/spec",
        ),
        (
            json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s"}, "spec": {"template": template}}),
            "/spec/template/spec",
        ),
        (
            json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "s"}, "spec": {"template": template}}),
            "/spec/template/spec",
        ),
        (
            json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {"template": template}}),
            "/spec/template/spec",
        ),
        (
            json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"}, "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": template}}}}),
            "/spec/jobTemplate/spec/template/spec",
        ),
    ];
    for (obj, base) in objects {
        let e = eval(&obj);
        let paths: Vec<String> = e
            .patch()
            .0
            .iter()
            .map(|op| serde_json::to_value(op).unwrap()["path"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(
            paths,
            vec![
                format!("{base}/containers/1/startupProbe"),
                format!("{base}/initContainers/1/startupProbe")
            ],
            "{obj}"
        );
        common::apply(&obj, &e.patch());
    }
}

// === decision points a mutation pass found untested (issue 15) ===

#[test]
fn an_empty_probe_host_is_the_pod_itself_not_a_dependency() {
    // `host: ""` is what the API server defaults to nothing: the kubelet probes the pod IP
    // (core/v1 HTTPGetAction.host: "Defaults to the pod IP"). Never a denial.
    for handler in ["httpGet: {host: '', path: /healthz, port: 8080}", "tcpSocket: {host: '', port: 8080}"] {
        let spec = format!("containers:\n- name: web\n  image: w\n  livenessProbe: {{{handler}}}\n");
        let e = eval(&pod(&spec));
        assert!(fired(&e, RuleId::LivenessDependency).is_empty(), "{handler}: {:?}", e.findings);
    }
}

#[test]
fn matches_readiness_compares_header_names_and_schemes_without_case_and_an_empty_path_as_root() {
    let same = |live: &str, ready: &str| {
        let spec = format!(
            "containers:\n- name: web\n  image: w\n  livenessProbe: {{httpGet: {{{live}}}}}\n  readinessProbe: {{httpGet: {{{ready}}}}}\n"
        );
        fired(&eval(&pod(&spec)), RuleId::LivenessMatchesReadiness) == vec!["web"]
    };
    // HTTP header names are case-insensitive (RFC 9110 §5.1): the same request.
    assert!(same(
        "path: /h, port: 80, httpHeaders: [{name: X-Probe, value: a}]",
        "path: /h, port: 80, httpHeaders: [{name: x-probe, value: a}]"
    ));
    // Header values are compared as written.
    assert!(!same(
        "path: /h, port: 80, httpHeaders: [{name: X-Probe, value: a}]",
        "path: /h, port: 80, httpHeaders: [{name: X-Probe, value: A}]"
    ));
    // The scheme defaults to HTTP; a lower-case spelling is the same scheme.
    assert!(same("path: /h, port: 80, scheme: http", "path: /h, port: 80"));
    assert!(same("path: /h, port: 443, scheme: https", "path: /h, port: 443, scheme: HTTPS"));
    assert!(!same("path: /h, port: 443, scheme: HTTPS", "path: /h, port: 443"));
    // An empty path is the default `/`.
    assert!(same("path: '', port: 80", "path: /, port: 80"));
    assert!(same("port: 80", "path: '', port: 80"));
    assert!(!same("path: '', port: 80", "path: /h, port: 80"));
}

#[test]
fn startup_probe_moves_the_liveness_delay_only_above_max_initial_delay_seconds() {
    // The default maxInitialDelaySeconds is 30: a delay of 30 stays on liveness, 31 moves.
    let delayed = |delay: u32| {
        let spec = format!(
            "containers:\n- name: w\n  image: w\n  livenessProbe: {{tcpSocket: {{port: 1}}, initialDelaySeconds: {delay}}}\n"
        );
        let e = eval(&pod(&spec));
        let f =
            e.findings.iter().find(|f| f.rule == RuleId::StartupProbe).expect("startup-probe fires").clone();
        let ops = serde_json::to_value(&f.patch).unwrap();
        let removes = ops.as_array().unwrap().iter().any(|op| {
            op["op"] == "remove" && op["path"] == "/spec/containers/0/livenessProbe/initialDelaySeconds"
        });
        (removes, f.message.contains("moves into this budget"), ops[0]["value"]["failureThreshold"].clone())
    };
    assert_eq!(delayed(30), (false, false, json!(24)), "30 s is at the bound: kept");
    // 31 + 10 × 3 = 61 s of boot time allowed < the 120 s budget: 24 probes at period 5.
    assert_eq!(delayed(31), (true, true, json!(24)), "31 s is over the bound: moved");
    // The bound comes from the policy.
    let p = policy::parse(
        "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\nrules:\n  startup-probe: {maxInitialDelaySeconds: 5}\n",
        "t",
    )
    .unwrap();
    let spec = "containers:\n- name: w\n  image: w\n  livenessProbe: {tcpSocket: {port: 1}, initialDelaySeconds: 6}\n";
    assert_eq!(
        eval_with(&p, &pod(spec))
            .patch()
            .0
            .iter()
            .filter(|op| matches!(op, json_patch::PatchOperation::Remove(_)))
            .count(),
        1
    );
    let spec = "containers:\n- name: w\n  image: w\n  livenessProbe: {tcpSocket: {port: 1}, initialDelaySeconds: 5}\n";
    assert_eq!(
        eval_with(&p, &pod(spec))
            .patch()
            .0
            .iter()
            .filter(|op| matches!(op, json_patch::PatchOperation::Remove(_)))
            .count(),
        0
    );
}

#[test]
fn a_secret_fed_on_standard_input_is_not_quoted() {
    // Break-it pass: `echo PW | redis-cli -x AUTH` hands redis-cli a password no flag names.
    for script in [
        "echo S3cretPW | redis-cli -x AUTH",
        "redis-cli -x AUTH <<< S3cretPW",
        "redis-cli <<EOF\nAUTH S3cretPW\nEOF",
    ] {
        let spec = format!(
            "containers:\n- name: r\n  image: r\n  livenessProbe: {{exec: {{command: [sh, -c, {script:?}]}}}}\n  \
             readinessProbe: {{exec: {{command: [sh, -c, {script:?}]}}}}\n"
        );
        let text = message(&eval(&pod(&spec)), RuleId::LivenessMatchesReadiness);
        assert!(!text.contains("S3cretPW"), "{text}");
        assert!(text.contains("exec `sh … "), "{text}");
    }
}
