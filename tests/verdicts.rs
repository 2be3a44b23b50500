//! Issue 10, "verdicts users can trust": each class of false deny, miss and noise, with cases that
//! must fire and cases that must not.

mod common;

use probegate::engine::{self, Evaluation, Finding};
use probegate::policy::{Action, Policy, RuleId};
use serde_json::{Value, json};

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

fn findings(e: &Evaluation, rule: RuleId) -> Vec<&Finding> {
    e.findings.iter().filter(|f| f.rule == rule).collect()
}

// === hostNetwork pods probing their own addresses ===

fn kubeadm(name: &str) -> Value {
    common::yaml(&common::read(&format!("kubeadm/{name}.yaml")))
}

#[test]
fn kubeadm_static_pods_are_not_denied_or_warned_for_dependencies() {
    for name in ["kube-apiserver", "etcd", "kube-controller-manager"] {
        let e = eval(&kubeadm(name));
        assert!(e.with_action(Action::Deny).next().is_none(), "{name}: {:?}", e.findings);
        assert!(findings(&e, RuleId::LivenessDependency).is_empty(), "{name}: {:?}", e.findings);
    }
}

#[test]
fn kube_apiserver_probing_another_address_is_a_warning_with_host_network_advice() {
    let mut doc = kubeadm("kube-apiserver");
    doc["spec"]["containers"][0]["livenessProbe"]["httpGet"]["host"] = json!("192.168.56.99");
    let e = eval(&doc);
    let f = findings(&e, RuleId::LivenessDependency);
    assert_eq!(f.len(), 1, "{:?}", e.findings);
    assert_eq!(f[0].action, Action::Warn);
    assert!(!f[0].message.contains("drop host"), "{}", f[0].message);
    assert!(f[0].message.contains("listens on"), "{}", f[0].message);
    // The same probe without hostNetwork reaches another machine: denied, and "drop host" is right.
    doc["spec"]["hostNetwork"] = json!(false);
    let e = eval(&doc);
    let f = findings(&e, RuleId::LivenessDependency);
    assert_eq!((f.len(), f[0].action), (1, Action::Deny), "{:?}", e.findings);
    assert!(f[0].message.contains("drop host"), "{}", f[0].message);
}

#[test]
fn host_network_local_forms_are_self() {
    for host in ["0.0.0.0", "localhost.", "::ffff:127.0.0.1", "127.0.0.1", "::1", "localhost"] {
        let spec = format!(
            "hostNetwork: true\ncontainers:\n- name: agent\n  image: a\n  \
             livenessProbe: {{httpGet: {{host: {host:?}, path: /healthz, port: 9099}}}}\n"
        );
        let e = eval(&pod(&spec));
        assert!(findings(&e, RuleId::LivenessDependency).is_empty(), "{host}: {:?}", e.findings);
        // Without hostNetwork each of them is the node, not the pod: still denied.
        let e = eval(&pod(&spec.replace("hostNetwork: true", "hostNetwork: false")));
        let f = findings(&e, RuleId::LivenessDependency);
        assert_eq!(f.len(), 1, "{host}");
        assert_eq!(f[0].action, Action::Deny, "{host}");
    }
}

#[test]
fn host_network_own_address_from_flags_or_env_is_self() {
    let cases = [
        // A node agent told to bind an address probes it.
        "hostNetwork: true\ncontainers:\n- name: agent\n  image: a\n  args: [--bind-address, 10.0.0.5]\n  \
         livenessProbe: {tcpSocket: {host: 10.0.0.5, port: 9099}}\n",
        "hostNetwork: true\ncontainers:\n- name: agent\n  image: a\n  env: [{name: NODE_IP, value: 10.0.0.6}]\n  \
         livenessProbe: {httpGet: {host: 10.0.0.6, path: /healthz, port: 9099}}\n",
    ];
    for spec in cases {
        let e = eval(&pod(spec));
        assert!(findings(&e, RuleId::LivenessDependency).is_empty(), "{spec}: {:?}", e.findings);
    }
    // A dependency's address in a flag is not its own: a warning with hostNetwork (an IP literal
    // may be the node), never a denial.
    let spec = "hostNetwork: true\ncontainers:\n- name: agent\n  image: a\n  args: [--db-host=10.0.0.7]\n  \
                livenessProbe: {tcpSocket: {host: 10.0.0.7, port: 5432}}\n";
    let e = eval(&pod(spec));
    let f = findings(&e, RuleId::LivenessDependency);
    assert_eq!((f.len(), f[0].action), (1, Action::Warn), "{:?}", e.findings);
}

#[test]
fn host_network_service_names_and_variables_are_still_denied_without_drop_host() {
    // (A variable in host is a misconfiguration that always fails, not a dependency: a warning,
    // `a_variable_in_a_probe_host_field_is_a_warning_that_it_always_fails`.)
    for (host, action) in [("postgres.db.svc.cluster.local", Action::Deny), ("$(NODE_IP)", Action::Warn)] {
        let spec = format!(
            "hostNetwork: true\ncontainers:\n- name: agent\n  image: a\n  \
             livenessProbe: {{httpGet: {{host: {host:?}, path: /, port: 80}}}}\n"
        );
        let e = eval(&pod(&spec));
        let f = findings(&e, RuleId::LivenessDependency);
        assert_eq!((f.len(), f[0].action), (1, action), "{host}");
        assert!(!f[0].message.contains("drop host"), "{}", f[0].message);
    }
}

/// s13 item 2: the kubelet expands `$(VAR)` only in an exec probe's command, never in
/// `httpGet.host` or `tcpSocket.host` (rules.md 1.1.1, kubelet `prober.go`): the probe looks up
/// the literal name `$(POD_IP)` and fails every time. That is a misconfiguration, not a
/// dependency's reach (it was denied as one): a warning that says so and advises dropping host,
/// whatever the variable is (a fieldRef, a literal value, not in env). With hostNetwork the
/// advice is an address the container listens on (dropping host would probe the node's).
#[test]
fn a_variable_in_a_probe_host_field_is_a_warning_that_it_always_fails() {
    let envs = [
        "  env: [{name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}]\n",
        "  env: [{name: POD_IP, value: 10.0.0.5}]\n",
        "",
    ];
    for env in envs {
        for (handler, extra) in [("httpGet", ", path: /healthz"), ("tcpSocket", "")] {
            for host in ["$(POD_IP)", "${POD_IP}"] {
                let spec = format!(
                    "containers:\n- name: web\n  image: nginx\n{env}  \
                     livenessProbe: {{{handler}: {{host: {host:?}, port: 8080{extra}}}}}\n"
                );
                let e = eval(&pod(&spec));
                let f = findings(&e, RuleId::LivenessDependency);
                assert_eq!((f.len(), f[0].action), (1, Action::Warn), "{spec}");
                let m = &f[0].message;
                assert!(m.contains("does not expand variables") && m.contains("always fails"), "{m}");
                assert!(m.contains("drop host") && !m.contains("readinessProbe"), "{m}");
            }
        }
    }
    // An exec probe's `$(POD_IP)` is expanded, from static values only
    // (`ExpandContainerCommandOnlyStatic`, kubelet `pkg/kubelet/container/helpers.go`): a fieldRef
    // variable is empty there, and `pg_isready -h ""` asks libpq's default, the local socket. This
    // pod either way: no finding (already so on main).
    for command in ["[pg_isready, -h, \"$(POD_IP)\"]", "[sh, -c, \"pg_isready -h $(POD_IP)\"]"] {
        let spec = format!(
            "containers:\n- name: db\n  image: postgres\n{}  livenessProbe: {{exec: {{command: {command}}}}}\n",
            envs[0]
        );
        let e = eval(&pod(&spec));
        assert!(findings(&e, RuleId::LivenessDependency).is_empty(), "{command}: {:?}", e.findings);
    }
}

#[test]
fn host_network_exec_probes_of_the_node_address_are_self_or_a_warning() {
    // kube-proxy style: the node IP from the downward API, probed by an exec curl.
    let node_ip = "hostNetwork: true\ncontainers:\n- name: agent\n  image: a\n  \
                   env: [{name: NODE_IP, valueFrom: {fieldRef: {fieldPath: status.hostIP}}}]\n  \
                   livenessProbe: {exec: {command: [sh, -c, 'curl -fsS http://$NODE_IP:10256/healthz']}}\n";
    let e = eval(&pod(node_ip));
    assert!(findings(&e, RuleId::LivenessDependency).is_empty(), "{:?}", e.findings);
    // Without hostNetwork, status.hostIP is the node, another machine as the pod sees it: denied.
    let e = eval(&pod(&node_ip.replace("hostNetwork: true", "hostNetwork: false")));
    let f = findings(&e, RuleId::LivenessDependency);
    assert_eq!((f.len(), f[0].action), (1, Action::Deny), "{:?}", e.findings);
    // A later env entry of the same name wins: a Service name is not this pod.
    let redefined =
        node_ip.replace("status.hostIP}}}]", "status.hostIP}}}, {name: NODE_IP, value: api.default.svc}]");
    let e = eval(&pod(&redefined));
    let f = findings(&e, RuleId::LivenessDependency);
    assert_eq!((f.len(), f[0].action), (1, Action::Deny), "{:?}", e.findings);

    // An IP literal in an exec probe with hostNetwork may be this node: a warning, never a deny.
    for command in
        ["curl -f http://10.0.0.5:10256/healthz", "redis-cli -h 10.0.0.9 ping", "nc -z [fd00::5] 80"]
    {
        let spec = format!(
            "hostNetwork: true\ncontainers:\n- name: agent\n  image: a\n  \
             livenessProbe: {{exec: {{command: [sh, -c, '{command}']}}}}\n"
        );
        let e = eval(&pod(&spec));
        let f = findings(&e, RuleId::LivenessDependency);
        assert_eq!((f.len(), f[0].action), (1, Action::Warn), "{command}: {:?}", e.findings);
        assert!(
            f[0].message.contains("hostNetwork") && f[0].message.contains("listens on"),
            "{}",
            f[0].message
        );
        // The same command without hostNetwork reaches another machine: denied.
        let e = eval(&pod(&spec.replace("hostNetwork: true", "hostNetwork: false")));
        let f = findings(&e, RuleId::LivenessDependency);
        assert_eq!((f.len(), f[0].action), (1, Action::Deny), "{command}: {:?}", e.findings);
    }
    // A name is not made a warning by hostNetwork.
    let spec = "hostNetwork: true\ncontainers:\n- name: agent\n  image: a\n  \
                livenessProbe: {exec: {command: [pg_isready, -h, db.prod.svc]}}\n";
    let f =
        findings(&eval(&pod(spec)), RuleId::LivenessDependency).iter().map(|f| f.action).collect::<Vec<_>>();
    assert_eq!(f, vec![Action::Deny]);
}

// === knownHttpPaths: aggregate health endpoints on liveness ===

fn with_liveness_path(image: &str, path: &str) -> Value {
    pod(&format!(
        "containers:\n- name: app\n  image: {image}\n  ports: [{{containerPort: 8080}}]\n  \
         readinessProbe: {{httpGet: {{path: /ready-check, port: 8080}}}}\n  \
         livenessProbe: {{httpGet: {{path: {path:?}, port: 8080}}}}\n"
    ))
}

#[test]
fn aggregate_health_paths_warn_and_name_the_liveness_path() {
    let cases = [
        ("acme/orders:1", "/actuator/health", "/actuator/health/liveness"),
        ("acme/orders:1", "/actuator/health/", "/actuator/health/liveness"),
        ("acme/orders:1", "/q/health", "/q/health/live"),
        ("icr.io/appcafe/open-liberty:24.0.0.1-full-java17-openj9", "/health", "/health/live"),
        ("quay.io/keycloak/keycloak:26.0", "/health", "/health/live"),
        ("acme/orders:1", "/healthcheck", "/ping"),
        ("mcr.microsoft.com/dotnet/aspnet:8.0", "/health", "/alive"),
    ];
    for (image, path, live) in cases {
        let e = eval(&with_liveness_path(image, path));
        let f = findings(&e, RuleId::LivenessDependencyPath);
        assert_eq!(f.len(), 1, "{image} {path}: {:?}", e.findings);
        assert_eq!(f[0].action, Action::Warn);
        assert!(f[0].message.contains(live), "{}", f[0].message);
        assert!(e.with_action(Action::Deny).next().is_none());
    }
}

#[test]
fn liveness_groups_and_generic_paths_are_not_flagged() {
    let cases = [
        ("acme/orders:1", "/actuator/health/liveness"),
        ("acme/orders:1", "/q/health/live"),
        ("icr.io/appcafe/open-liberty:24", "/health/live"),
        // `/health` is everyone's path: without a MicroProfile, Micronaut or Aspire image, no evidence.
        ("acme/orders:1", "/health"),
        ("acme/orders:1", "/healthz"),
        // .NET Framework's ASP.NET image has no health checks middleware (s26 fresh user).
        ("mcr.microsoft.com/dotnet/framework/aspnet:4.8", "/health"),
    ];
    for (image, path) in cases {
        let e = eval(&with_liveness_path(image, path));
        assert!(findings(&e, RuleId::LivenessDependencyPath).is_empty(), "{image} {path}: {:?}", e.findings);
    }
}

#[test]
fn known_http_paths_from_the_policy_are_added_and_builtins_can_be_dropped() {
    let policy = probegate::policy::parse(
        "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\nrules:\n  liveness-dependency-path:\n    \
         defaultKnownHttpPaths: false\n    knownHttpPaths:\n    - {path: /manage/health, framework: Spring Boot \
         (management base path /manage), livenessPath: /manage/health/liveness}\n",
        "p.yaml",
    )
    .unwrap();
    let e = eval_with(&policy, &with_liveness_path("acme/orders:1", "/manage/health"));
    let f = findings(&e, RuleId::LivenessDependencyPath);
    assert_eq!(f.len(), 1, "{:?}", e.findings);
    assert!(f[0].message.contains("/manage/health/liveness"), "{}", f[0].message);
    let e = eval_with(&policy, &with_liveness_path("acme/orders:1", "/actuator/health"));
    assert!(findings(&e, RuleId::LivenessDependencyPath).is_empty());
    // A path that is not absolute is refused with the field named.
    let err = probegate::policy::parse(
        "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\nrules:\n  liveness-dependency-path:\n    \
         knownHttpPaths: [{path: health, framework: x, livenessPath: /live}]\n",
        "p.yaml",
    )
    .unwrap_err();
    assert!(err.to_string().contains("knownHttpPaths"), "{err}");
}

fn with_liveness_command(image: &str, command: &[&str]) -> Value {
    pod(&format!(
        "containers:\n- name: app\n  image: {image}\n  ports: [{{containerPort: 8080}}]\n  \
         readinessProbe: {{httpGet: {{path: /ready-check, port: 8080}}}}\n  \
         livenessProbe: {{exec: {{command: {}}}}}\n",
        serde_json::to_string(command).unwrap()
    ))
}

#[test]
fn exec_http_clients_asking_this_pod_for_an_aggregate_path_warn_like_http_get() {
    let cases: &[(&str, &[&str], &str)] = &[
        (
            "acme/orders:1",
            &["curl", "-f", "http://localhost:8080/actuator/health"],
            "/actuator/health/liveness",
        ),
        (
            "acme/orders:1",
            &["sh", "-c", "curl -fsS http://127.0.0.1:8080/actuator/health/ || exit 1"],
            "/actuator/health/liveness",
        ),
        ("acme/orders:1", &["wget", "-q", "-O-", "localhost:8080/q/health"], "/q/health/live"),
        (
            "acme/orders:1",
            &["sh", "-c", "exec timeout 2 wget -qO- http://localhost:8080/actuator/health?x=1"],
            "/actuator/health/liveness",
        ),
        ("quay.io/keycloak/keycloak:26.0", &["curl", "-f", "http://localhost:9000/health"], "/health/live"),
        ("acme/orders:1", &["http", "--check-status", ":8080/actuator/health"], "/actuator/health/liveness"),
        (
            "acme/orders:1",
            &[
                "powershell",
                "-Command",
                "Invoke-WebRequest -Uri http://localhost:8080/actuator/health -UseBasicParsing",
            ],
            "/actuator/health/liveness",
        ),
    ];
    for (image, command, live) in cases {
        let e = eval(&with_liveness_command(image, command));
        let f = findings(&e, RuleId::LivenessDependencyPath);
        assert_eq!(f.len(), 1, "{command:?}: {:?}", e.findings);
        assert_eq!(f[0].action, Action::Warn);
        assert!(f[0].message.contains(live), "{}", f[0].message);
        // The advice survives as a warning: with its `probegate: container NAME: ` prefix and
        // ` (liveness-dependency-path)` suffix the text fits the 255 characters a warning keeps.
        let warning =
            format!("probegate: container {}: {} (liveness-dependency-path)", f[0].container, f[0].message);
        assert!(warning.chars().count() <= probegate::admission::MAX_WARNING_CHARS, "{warning}");
        assert!(e.with_action(Action::Deny).next().is_none(), "{command:?}: {:?}", e.findings);
    }
    // The same with the liveness-dependency rule off: the command is analysed for this rule alone.
    let policy = probegate::policy::parse(
        "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\nrules:\n  liveness-dependency:\n    action: off\n",
        "p.yaml",
    )
    .unwrap();
    let e = eval_with(
        &policy,
        &with_liveness_command("acme/orders:1", &["curl", "-f", "http://localhost:8080/actuator/health"]),
    );
    assert_eq!(findings(&e, RuleId::LivenessDependencyPath).len(), 1, "{:?}", e.findings);
}

#[test]
fn exec_http_clients_on_liveness_groups_other_paths_or_other_hosts_are_not_path_findings() {
    let cases: &[(&str, &[&str])] = &[
        ("acme/orders:1", &["curl", "-f", "http://localhost:8080/actuator/health/liveness"]),
        ("acme/orders:1", &["sh", "-c", "curl -fsS http://127.0.0.1:8080/q/health/live"]),
        ("acme/orders:1", &["curl", "-f", "http://localhost:8080/healthz"]),
        // `/health` without a MicroProfile, Micronaut or Aspire image: no evidence.
        ("acme/orders:1", &["curl", "-f", "http://localhost:8080/health"]),
        // Not an HTTP request to this path: a file named like it, a TCP check.
        ("acme/orders:1", &["cat", "/actuator/health"]),
        ("acme/orders:1", &["nc", "-z", "localhost", "8080"]),
    ];
    for (image, command) in cases {
        let e = eval(&with_liveness_command(image, command));
        assert!(findings(&e, RuleId::LivenessDependencyPath).is_empty(), "{command:?}: {:?}", e.findings);
    }
    // Another host's aggregate endpoint is a dependency (denied by liveness-dependency), not this rule.
    let e = eval(&with_liveness_command(
        "acme/orders:1",
        &["curl", "-f", "http://orders.svc:8080/actuator/health"],
    ));
    assert!(findings(&e, RuleId::LivenessDependencyPath).is_empty(), "{:?}", e.findings);
    assert_eq!(findings(&e, RuleId::LivenessDependency).len(), 1, "{:?}", e.findings);
    // A readiness probe on the aggregate is what the framework means it for.
    let obj = pod("containers:\n- name: app\n  image: acme/orders:1\n  ports: [{containerPort: 8080}]\n  \
         readinessProbe: {exec: {command: [curl, -f, 'http://localhost:8080/actuator/health']}}\n  \
         livenessProbe: {httpGet: {path: /actuator/health/liveness, port: 8080}}\n");
    assert!(findings(&eval(&obj), RuleId::LivenessDependencyPath).is_empty());
}

// === readiness-shared-dependency ===

#[test]
fn readiness_reaching_a_remote_dependency_warns_with_the_seed_question() {
    let cases = [
        "containers:\n- name: api\n  image: a\n  readinessProbe: {exec: {command: [pg_isready, -h, orders-db.prod.svc]}}\n",
        "containers:\n- name: api\n  image: a\n  readinessProbe: {exec: {command: [sh, -c, \"redis-cli -h cache.prod.svc ping\"]}}\n",
        "containers:\n- name: api\n  image: a\n  readinessProbe: {httpGet: {host: payments.prod.svc.cluster.local, path: /, port: 80}}\n",
    ];
    for spec in cases {
        let e = eval(&pod(spec));
        let f = findings(&e, RuleId::ReadinessSharedDependency);
        assert_eq!(f.len(), 1, "{spec}: {:?}", e.findings);
        assert_eq!(f[0].action, Action::Warn);
        assert!(f[0].message.contains("\"no traffic here\" or \"serve degraded\"?"), "{}", f[0].message);
    }
    let quiet = [
        "containers:\n- name: db\n  image: postgres:16\n  readinessProbe: {exec: {command: [pg_isready, -U, postgres]}}\n",
        "containers:\n- name: api\n  image: a\n  readinessProbe: {httpGet: {path: /ready, port: 80}}\n",
        "hostNetwork: true\ncontainers:\n- name: agent\n  image: a\n  readinessProbe: {httpGet: {host: 10.0.0.5, path: /, port: 80}}\n",
    ];
    for spec in quiet {
        let e = eval(&pod(spec));
        assert!(findings(&e, RuleId::ReadinessSharedDependency).is_empty(), "{spec}: {:?}", e.findings);
    }
}

/// `readiness-shared-dependency: deny` denies a certain coupling only: a host known only at run
/// time, or an IP literal an exec command reaches under hostNetwork (which may be this node), is a
/// warning, as `liveness-dependency` and `startup-remote-dependency` do (s23: docs/rules.md said
/// "worded as what may be"; the policy's `deny` denied it).
#[test]
fn readiness_denies_when_configured_but_never_on_a_target_that_may_be_the_pod() {
    let deny = probegate::policy::parse(
        "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\nrules:\n  readiness-shared-dependency: {action: deny}\n",
        "p.yaml",
    )
    .unwrap();
    let warned = [
        ("hostNetwork: true\n", "[sh, -c, \"redis-cli -h 10.0.0.5 ping\"]", "may be this node"),
        ("", "[sh, -c, \"pg_isready -h $PEER\"]", "known only at run time"),
    ];
    for (network, command, said) in warned {
        let spec = format!(
            "{network}containers:\n- name: api\n  image: a\n  readinessProbe: {{exec: {{command: {command}}}}}\n"
        );
        let e = eval_with(&deny, &pod(&spec));
        let f = findings(&e, RuleId::ReadinessSharedDependency);
        assert_eq!((f.len(), f[0].action), (1, Action::Warn), "{spec}: {:?}", e.findings);
        assert!(f[0].message.contains(said), "{}", f[0].message);
    }
    for command in ["[sh, -c, \"redis-cli -h 10.0.0.5 ping\"]", "[pg_isready, -h, orders-db.prod.svc]"] {
        let spec = format!(
            "containers:\n- name: api\n  image: a\n  readinessProbe: {{exec: {{command: {command}}}}}\n"
        );
        let e = eval_with(&deny, &pod(&spec));
        let f = findings(&e, RuleId::ReadinessSharedDependency);
        assert_eq!((f.len(), f[0].action), (1, Action::Deny), "{spec}: {:?}", e.findings);
    }
}

/// A readiness probe that runs the liveness command reuses that command's analysis: its verdict
/// is the one the readiness command gets analysed alone.
#[test]
fn a_readiness_probe_running_the_liveness_command_gets_its_own_verdict() {
    let commands = [
        "[sh, -c, \"redis-cli -h cache.prod.svc ping\"]",
        "[sh, -c, \"redis-cli -h 127.0.0.1 ping\"]",
        "[sh, -c, \"pg_isready -h $DB_HOST || true\"]",
        "[pg_isready, -h, orders-db.prod.svc]",
        "[/bin/bash, -ec, \"p=$(cat /x); mysqladmin status -h db.prod -p$p\"]",
    ];
    for command in commands {
        let alone = format!(
            "containers:\n- name: api\n  image: a\n  env: [{{name: DB_HOST, value: db.prod.svc}}]\n  \
             readinessProbe: {{exec: {{command: {command}}}}}\n"
        );
        let both = format!("{alone}  livenessProbe: {{exec: {{command: {command}}}}}\n");
        let message = |spec: &str| {
            let e = eval(&pod(spec));
            findings(&e, RuleId::ReadinessSharedDependency)
                .iter()
                .map(|f| f.message.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(message(&both), message(&alone), "{command}");
    }
    // The cases above are not all quiet: the first reaches a remote cache.
    let first = format!(
        "containers:\n- name: api\n  image: a\n  readinessProbe: {{exec: {{command: {c}}}}}\n  \
         livenessProbe: {{exec: {{command: {c}}}}}\n",
        c = commands[0]
    );
    assert_eq!(findings(&eval(&pod(&first)), RuleId::ReadinessSharedDependency).len(), 1);
}

// === startup-remote-dependency ===

/// A startup probe that reaches a remote dependency kills starting containers while it is down
/// (rules.md, `startup-remote-dependency`): warned by default, a denial when configured so, never
/// for a target that may be the Pod itself.
#[test]
fn a_startup_probe_reaching_a_remote_dependency_warns() {
    let cases = [
        ("[pg_isready, -h, orders-db.prod.svc]", "orders-db.prod.svc (via pg_isready)"),
        ("[sh, -c, \"redis-cli -h cache.prod.svc ping\"]", "cache.prod.svc"),
    ];
    for (command, reached) in cases {
        let spec = format!(
            "containers:\n- name: api\n  image: a\n  startupProbe: {{exec: {{command: {command}}}}}\n"
        );
        let e = eval(&pod(&spec));
        let f = findings(&e, RuleId::StartupRemoteDependency);
        assert_eq!(f.len(), 1, "{spec}: {:?}", e.findings);
        assert_eq!(f[0].action, Action::Warn);
        assert!(f[0].message.contains(reached), "{}", f[0].message);
        assert!(f[0].message.contains("each start is killed, a restart loop"), "{}", f[0].message);
        assert!(f[0].message.contains("wait in readinessProbe or the app"), "{}", f[0].message);
    }
    for (handler, host) in [("httpGet", "payments.prod.svc.cluster.local"), ("tcpSocket", "10.1.2.3")] {
        let spec = format!(
            "containers:\n- name: api\n  image: a\n  startupProbe: {{{handler}: {{host: {host}, port: 80}}}}\n"
        );
        let e = eval(&pod(&spec));
        let f = findings(&e, RuleId::StartupRemoteDependency);
        assert_eq!(f.len(), 1, "{spec}: {:?}", e.findings);
        assert!(f[0].message.starts_with(&format!("startupProbe reaches {host};")), "{}", f[0].message);
    }
    let quiet = [
        // The dependency checking itself, a local check, the pod's own address.
        "containers:\n- name: db\n  image: postgres:16\n  startupProbe: {exec: {command: [pg_isready, -U, postgres]}}\n",
        "containers:\n- name: api\n  image: a\n  startupProbe: {exec: {command: [redis-cli, -h, 127.0.0.1, ping]}}\n",
        "containers:\n- name: api\n  image: a\n  startupProbe: {httpGet: {path: /livez, port: 80}}\n",
        // hostNetwork: an IP literal or loopback may be this node, as for readiness.
        "hostNetwork: true\ncontainers:\n- name: agent\n  image: a\n  startupProbe: {httpGet: {host: 10.0.0.5, path: /, port: 80}}\n",
        "hostNetwork: true\ncontainers:\n- name: agent\n  image: a\n  startupProbe: {tcpSocket: {host: 127.0.0.1, port: 80}}\n",
        // A client whose exit status cannot fail the probe.
        "containers:\n- name: api\n  image: a\n  startupProbe: {exec: {command: [sh, -c, \"pg_isready -h db.prod.svc || true\"]}}\n",
        // Only the readiness probe reaches it.
        "containers:\n- name: api\n  image: a\n  readinessProbe: {exec: {command: [pg_isready, -h, orders-db.prod.svc]}}\n",
    ];
    for spec in quiet {
        let e = eval(&pod(spec));
        assert!(findings(&e, RuleId::StartupRemoteDependency).is_empty(), "{spec}: {:?}", e.findings);
    }
}

#[test]
fn startup_remote_dependency_denies_when_configured_but_never_a_host_that_may_be_the_pod() {
    let policy = probegate::policy::parse(
        "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\nrules:\n  startup-remote-dependency: {action: deny}\n",
        "test",
    ).unwrap();
    let e = |spec: &str| eval_with(&policy, &pod(spec));
    let remote = "containers:\n- name: api\n  image: a\n  startupProbe: {exec: {command: [pg_isready, -h, orders-db.prod.svc]}}\n";
    let ev = e(remote);
    assert_eq!(findings(&ev, RuleId::StartupRemoteDependency)[0].action, Action::Deny, "{:?}", ev.findings);
    // A host known only at run time whose variable names no dependency: a warning.
    let unknown = "containers:\n- name: api\n  image: a\n  env: [{name: TARGET, valueFrom: {secretKeyRef: {name: s, key: k}}}]\n  \
                   startupProbe: {exec: {command: [sh, -c, \"redis-cli -h $TARGET ping\"]}}\n";
    let ev = e(unknown);
    let f = findings(&ev, RuleId::StartupRemoteDependency);
    assert_eq!(f.len(), 1, "{:?}", ev.findings);
    assert_eq!(f[0].action, Action::Warn);
    // hostNetwork: an IP literal may be this node.
    let node = "hostNetwork: true\ncontainers:\n- name: agent\n  image: a\n  startupProbe: {exec: {command: [redis-cli, -h, 10.0.0.5, ping]}}\n";
    let ev = e(node);
    assert_eq!(findings(&ev, RuleId::StartupRemoteDependency)[0].action, Action::Warn, "{:?}", ev.findings);
}

// === worker-liveness-missing ===

#[test]
fn workers_without_ports_or_probes_are_warned() {
    let e = eval(&deployment(&pod("containers:\n- name: consumer\n  image: acme/consumer:1\n")));
    let f = findings(&e, RuleId::WorkerLivenessMissing);
    assert_eq!((f.len(), f[0].action), (1, Action::Warn), "{:?}", e.findings);
    // A Pod made by hand (no controller) is a demo or debug Pod, not a worker.
    let e = eval(&pod("containers:\n- name: consumer\n  image: acme/consumer:1\n"));
    assert!(findings(&e, RuleId::WorkerLivenessMissing).is_empty());
    let quiet = [
        // A liveness probe (or a readiness one) watches it.
        "containers:\n- name: consumer\n  image: a\n  livenessProbe: {exec: {command: [test, -f, /tmp/beat]}}\n",
        "containers:\n- name: consumer\n  image: a\n  readinessProbe: {exec: {command: [test, -f, /tmp/beat]}}\n",
        // It serves: readiness-missing's business.
        "containers:\n- name: web\n  image: a\n  ports: [{containerPort: 80}]\n",
        // Batch.
        "restartPolicy: OnFailure\ncontainers:\n- name: job\n  image: a\n",
        // A port-less helper beside a serving container (a log shipper, a config reloader).
        "containers:\n- name: web\n  image: a\n  ports: [{containerPort: 80}]\n- name: reloader\n  image: b\n",
        // Native sidecars.
        "containers:\n- name: web\n  image: a\n  livenessProbe: {tcpSocket: {port: 80}}\n  ports: [{containerPort: 80}]\n  \
         readinessProbe: {tcpSocket: {port: 80}}\ninitContainers:\n- name: shipper\n  image: b\n  restartPolicy: Always\n",
    ];
    for spec in quiet {
        let e = eval(&deployment(&pod(spec)));
        assert!(findings(&e, RuleId::WorkerLivenessMissing).is_empty(), "{spec}: {:?}", e.findings);
    }
    // Containers that only idle have no loop to watch.
    for cmd in [
        "[sleep, infinity]",
        "[sh, -c, \"sleep 3600\"]",
        "[tail, -f, /dev/null]",
        "[sh, -c, \"while true; do sleep 30; done\"]",
    ] {
        let e = eval(&deployment(&pod(&format!(
            "containers:\n- name: idle\n  image: busybox\n  command: {cmd}\n"
        ))));
        assert!(findings(&e, RuleId::WorkerLivenessMissing).is_empty(), "{cmd}: {:?}", e.findings);
    }
    let e = eval(&deployment(&pod(
        "containers:\n- name: w\n  image: a\n  command: [sh, -c, \"sleep 5; exec worker\"]\n",
    )));
    assert_eq!(findings(&e, RuleId::WorkerLivenessMissing).len(), 1);
    // An exempt mesh proxy beside a worker serves the mesh, not the worker: still warned.
    let policy = Policy::default();
    let meshed =
        deployment(&pod("containers:\n- name: consumer\n  image: acme/consumer:1\n- name: istio-proxy\n  \
         image: docker.io/istio/proxyv2:1.24.0\n  ports: [{containerPort: 15090, name: http-envoy-prom}]\n  \
         readinessProbe: {httpGet: {path: /healthz/ready, port: 15021}}\n"));
    let e = engine::evaluate_with(&policy.rules, &common::workload(&meshed), &policy.exemptions.containers);
    assert_eq!(e.exempted.len(), 1, "{:?}", e.exempted);
    let f = findings(&e, RuleId::WorkerLivenessMissing);
    assert_eq!(f.iter().map(|f| f.container.as_str()).collect::<Vec<_>>(), ["consumer"], "{:?}", e.findings);
    // The same neighbour with another image is an app container that serves: the consumer is its helper.
    let e = engine::evaluate_with(
        &policy.rules,
        &common::workload(
            &meshed.to_string().replace("docker.io/istio/proxyv2", "acme/web").parse().unwrap(),
        ),
        &policy.exemptions.containers,
    );
    assert!(findings(&e, RuleId::WorkerLivenessMissing).is_empty(), "{:?}", e.findings);
}

/// A Pod's spec as a Deployment's template.
/// `pod` as admission sees it: the API server fills in a probe's `timeoutSeconds` (1),
/// `periodSeconds` (10), `successThreshold` (1) and `failureThreshold` (3) before any webhook runs
/// (`SetDefaults_Probe`), so a warning never shows the `(default)` mark `check` gives a field a
/// manifest leaves out.
fn api_defaulted(mut pod: Value) -> Value {
    let defaults =
        [("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1), ("failureThreshold", 3)];
    for list in ["containers", "initContainers"] {
        for c in pod["spec"][list].as_array_mut().into_iter().flatten() {
            for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
                if let Some(p) = c.get_mut(probe).and_then(Value::as_object_mut) {
                    for (k, v) in defaults {
                        p.entry(k).or_insert(json!(v));
                    }
                }
            }
        }
    }
    pod
}

fn deployment(pod: &Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}}, "spec": pod["spec"].clone()}}})
}

// === exec-probe-replaceable ===

#[test]
fn exec_probes_that_only_curl_the_pod_are_info() {
    let fire = [
        "containers:\n- name: web\n  image: a\n  readinessProbe: {exec: {command: [curl, -fsS, \"http://localhost:8080/healthz\"]}}\n",
        "containers:\n- name: web\n  image: a\n  livenessProbe: {exec: {command: [sh, -c, \"wget -q -O /dev/null http://127.0.0.1:8080/\"]}}\n",
    ];
    for spec in fire {
        let e = eval(&pod(spec));
        let f = findings(&e, RuleId::ExecProbeReplaceable);
        assert_eq!((f.len(), f[0].action), (1, Action::Info), "{spec}: {:?}", e.findings);
        assert!(f[0].message.contains("httpGet"), "{}", f[0].message);
    }
    let quiet = [
        // Client certificates, credentials, a Unix socket: exec is needed.
        "containers:\n- name: web\n  image: a\n  readinessProbe: {exec: {command: [curl, --cert, /c.pem, \"https://localhost:8443/\"]}}\n",
        "containers:\n- name: web\n  image: a\n  readinessProbe: {exec: {command: [curl, --unix-socket, /s.sock, \"http://localhost/\"]}}\n",
        // More than an HTTP call.
        "containers:\n- name: web\n  image: a\n  readinessProbe: {exec: {command: [sh, -c, \"curl -f http://localhost/ && test -f /ready\"]}}\n",
        // Not the pod.
        "containers:\n- name: web\n  image: a\n  readinessProbe: {exec: {command: [curl, -f, \"http://api.prod.svc/\"]}}\n",
        "containers:\n- name: web\n  image: a\n  readinessProbe: {exec: {command: [cat, /tmp/healthy]}}\n",
    ];
    for spec in quiet {
        let e = eval(&pod(spec));
        assert!(findings(&e, RuleId::ExecProbeReplaceable).is_empty(), "{spec}: {:?}", e.findings);
    }
}

/// `$POD_IP` in a shell script, the variable being `fieldRef: status.podIP`, is this pod: the
/// shell expands it from the container's environment (Kubernetes docs, "Expose Pod Information to
/// Containers Through Environment Variables"). Not in single quotes (POSIX 2.2.2: no expansion),
/// not without a shell (curl gets `$POD_IP` as written), and not as `$(POD_IP)`: the kubelet
/// expands an exec probe's `$(VAR)` from static `value`s only (`ExpandContainerCommandOnlyStatic`
/// maps each env name to its `value`, which is empty for a `valueFrom` one), so that URL has no host.
#[test]
fn exec_probes_that_only_curl_the_pod_ip_from_the_environment_are_info() {
    let env = "  env: [{name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}]\n";
    let probe = |command: &str| {
        format!(
            "containers:\n- name: web\n  image: a\n{env}  readinessProbe: {{exec: {{command: {command}}}}}\n"
        )
    };
    for command in [
        "[sh, -c, \"curl -fs http://$POD_IP:8080/ready\"]",
        "[sh, -c, \"wget -q -O /dev/null \\\"http://${POD_IP}:8080/\\\"\"]",
        "[/bin/bash, -c, \"curl -f http://$POD_IP:8080/healthz\"]",
    ] {
        let e = eval(&pod(&probe(command)));
        let f = findings(&e, RuleId::ExecProbeReplaceable);
        assert_eq!(f.len(), 1, "{command}: {:?}", e.findings);
        assert!(f[0].message.contains("against this pod"), "{}", f[0].message);
    }
    for command in [
        "[sh, -c, \"curl -fs 'http://$POD_IP:8080/ready'\"]",
        "[curl, -fs, \"http://$POD_IP:8080/ready\"]",
        "[curl, -fs, \"http://$(POD_IP):8080/ready\"]",
        "[sh, -c, \"curl -fs http://$(POD_IP):8080/ready\"]",
        "[sh, -c, \"POD_IP=db; curl -fs http://$POD_IP:8080/ready\"]",
        "[sh, -c, \"curl -fs http://$NODE_IP:8080/ready\"]",
    ] {
        let e = eval(&pod(&probe(command)));
        assert!(findings(&e, RuleId::ExecProbeReplaceable).is_empty(), "{command}: {:?}", e.findings);
    }
    // Another source for the variable: not this pod's address.
    for from in ["{fieldRef: {fieldPath: status.hostIP}}", "{configMapKeyRef: {name: c, key: ip}}"] {
        let spec = format!(
            "containers:\n- name: web\n  image: a\n  env: [{{name: POD_IP, valueFrom: {from}}}]\n  \
             readinessProbe: {{exec: {{command: [sh, -c, \"curl -fs http://$POD_IP:8080/\"]}}}}\n"
        );
        let e = eval(&pod(&spec));
        assert!(findings(&e, RuleId::ExecProbeReplaceable).is_empty(), "{from}: {:?}", e.findings);
    }
}

// === liveness-never-restarted (KEP-5307) ===

#[test]
fn liveness_on_a_container_that_is_never_restarted_warns() {
    let spec = "containers:\n- name: task\n  image: a\n  restartPolicy: Never\n  livenessProbe: {exec: {command: [test, -f, /tmp/beat]}}\n";
    let e = eval(&pod(spec));
    let f = findings(&e, RuleId::LivenessNeverRestarted);
    assert_eq!((f.len(), f[0].action), (1, Action::Warn), "{:?}", e.findings);
    for spec in [
        "containers:\n- name: task\n  image: a\n  restartPolicy: Never\n",
        "containers:\n- name: task\n  image: a\n  restartPolicy: OnFailure\n  livenessProbe: {exec: {command: [test, -f, /tmp/beat]}}\n",
        "containers:\n- name: task\n  image: a\n  livenessProbe: {exec: {command: [test, -f, /tmp/beat]}}\n",
    ] {
        let e = eval(&pod(spec));
        assert!(findings(&e, RuleId::LivenessNeverRestarted).is_empty(), "{spec}: {:?}", e.findings);
    }
}

// === probe-paths-swapped ===

#[test]
fn swapped_liveness_and_readiness_paths_warn() {
    let probes = |l: &str, r: &str| {
        pod(&format!(
            "containers:\n- name: web\n  image: a\n  ports: [{{containerPort: 80}}]\n  \
             livenessProbe: {{httpGet: {{path: {l:?}, port: 80}}, failureThreshold: 6}}\n  \
             readinessProbe: {{httpGet: {{path: {r:?}, port: 80}}}}\n"
        ))
    };
    for (l, r) in
        [("/ready", "/healthz"), ("/readyz", "/livez"), ("/health/readiness", "/"), ("/healthz", "/livez")]
    {
        let e = eval(&probes(l, r));
        let f = findings(&e, RuleId::ProbePathsSwapped);
        assert_eq!((f.len(), f[0].action), (1, Action::Warn), "{l} {r}: {:?}", e.findings);
    }
    for (l, r) in [
        ("/livez", "/readyz"),
        ("/actuator/health/liveness", "/actuator/health/readiness"),
        ("/healthz", "/healthz"),
    ] {
        let e = eval(&probes(l, r));
        assert!(findings(&e, RuleId::ProbePathsSwapped).is_empty(), "{l} {r}: {:?}", e.findings);
    }
}

// === probe-client-deadline ===

#[test]
fn client_deadlines_above_the_probe_timeout_warn() {
    let fire = [
        ("[grpc_health_probe, -addr=:50051, -rpc-timeout=5s]", 3),
        ("[grpc_health_probe, -addr=:50051, \"-connect-timeout=2s\"]", 1),
        ("[curl, -m, \"10\", \"http://localhost:8080/\"]", 5),
        ("[sh, -c, \"wget -T 4 -q -O- http://localhost/\"]", 2),
        // In a function the script calls (s20 fresh-user pass: not seen).
        ("[sh, -c, 'probe() { curl -fsS -m 10 \"$1\" >/dev/null; }; probe http://localhost:8080/']", 5),
    ];
    for (cmd, timeout) in fire {
        let spec = format!(
            "containers:\n- name: api\n  image: a\n  readinessProbe: {{exec: {{command: {cmd}}}, timeoutSeconds: {timeout}}}\n"
        );
        let e = eval(&pod(&spec));
        let f = findings(&e, RuleId::ProbeClientDeadline);
        assert_eq!(f.len(), 1, "{cmd}: {:?}", e.findings);
        assert!(f[0].message.contains(&format!("timeoutSeconds {timeout}")), "{}", f[0].message);
    }
    for (cmd, timeout) in [
        ("[grpc_health_probe, -addr=:50051, -rpc-timeout=2s]", 3),
        ("[grpc_health_probe, -addr=:50051, -rpc-timeout=500ms]", 1),
        ("[grpc_health_probe, -addr=:50051]", 1),
        ("[curl, -m, \"3\", \"http://localhost/\"]", 3),
        ("[sh, -c, 'probe() { curl -fsS -m 3 \"$1\"; }; probe http://localhost:8080/']", 3),
    ] {
        let spec = format!(
            "containers:\n- name: api\n  image: a\n  readinessProbe: {{exec: {{command: {cmd}}}, timeoutSeconds: {timeout}}}\n"
        );
        let e = eval(&pod(&spec));
        assert!(findings(&e, RuleId::ProbeClientDeadline).is_empty(), "{cmd}: {:?}", e.findings);
    }
}

/// A policy with `probe-client-deadline` (and optionally `probe-timeout`) set.
fn deadline_policy(action: &str, timeout_action: &str) -> Policy {
    probegate::policy::parse(
        &format!(
            "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\nrules:\n  probe-client-deadline: {{action: {action}}}\n  \
             probe-timeout: {{action: {timeout_action}}}\n"
        ),
        "p.yaml",
    )
    .unwrap()
}

/// The `add` operations of a finding's patch, as (path, value).
fn adds(f: &Finding) -> Vec<(String, Value)> {
    let v = serde_json::to_value(&f.patch).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|op| (op["path"].as_str().unwrap().to_string(), op["value"].clone()))
        .collect()
}

#[test]
fn client_deadline_mutate_raises_the_timeout_above_the_deadline_within_the_period() {
    let policy = deadline_policy("mutate", "off");
    // Fires and patches: the deadline rounded up, one operation per probe.
    for (cmd, timeout, want) in [
        ("[grpc_health_probe, -addr=:50051, -rpc-timeout=5s]", 3, 5),
        ("[grpc_health_probe, -addr=:50051, -rpc-timeout=2500ms]", 1, 3),
        ("[curl, -m, \"8\", \"http://localhost:8080/\"]", 5, 8),
        ("[sh, -c, \"wget -T 4 -q -O- http://localhost/ && curl --max-time=6 http://localhost/x\"]", 2, 6),
    ] {
        let spec = format!(
            "containers:\n- name: api\n  image: a\n  readinessProbe: {{exec: {{command: {cmd}}}, timeoutSeconds: {timeout}}}\n"
        );
        let e = eval_with(&policy, &pod(&spec));
        let f = findings(&e, RuleId::ProbeClientDeadline);
        assert_eq!(f.len(), 1, "{cmd}: {:?}", e.findings);
        assert_eq!(f[0].action, Action::Mutate);
        assert_eq!(
            adds(f[0]),
            vec![("/spec/containers/0/readinessProbe/timeoutSeconds".into(), json!(want))],
            "{cmd}"
        );
        assert!(f[0].message.contains(&format!("raised timeoutSeconds to {want}")), "{}", f[0].message);
        let dry = f[0].dry_run_message.as_deref().unwrap();
        assert!(dry.contains(&format!("would raise timeoutSeconds to {want}")), "{dry}");
    }
    // No fire: the timeout already covers the deadline.
    for (cmd, timeout) in [
        ("[grpc_health_probe, -addr=:50051, -rpc-timeout=5s]", 5),
        ("[grpc_health_probe, -addr=:50051]", 1),
        ("[curl, -f, \"http://localhost/\"]", 1),
    ] {
        let spec = format!(
            "containers:\n- name: api\n  image: a\n  livenessProbe: {{exec: {{command: {cmd}}}, timeoutSeconds: {timeout}}}\n"
        );
        let e = eval_with(&policy, &pod(&spec));
        assert!(findings(&e, RuleId::ProbeClientDeadline).is_empty(), "{cmd}: {:?}", e.findings);
    }
    // Never above periodSeconds: no patch, and the message says to lengthen the period.
    let spec = "containers:\n- name: api\n  image: a\n  livenessProbe: {exec: {command: [grpc_health_probe, -rpc-timeout=15s]}, periodSeconds: 10}\n";
    let e = eval_with(&policy, &pod(spec));
    let f = findings(&e, RuleId::ProbeClientDeadline);
    assert_eq!(f.len(), 1, "{:?}", e.findings);
    assert!(f[0].patch.is_empty() && f[0].dry_run_message.is_none(), "{:?}", f[0]);
    assert!(f[0].message.contains("periodSeconds 10 leaves no room: lengthen it to 15"), "{}", f[0].message);
    // With warn, the same findings carry no patch and advise.
    let e = eval_with(
        &deadline_policy("warn", "off"),
        &pod(
            "containers:\n- name: api\n  image: a\n  livenessProbe: {exec: {command: [grpc_health_probe, -rpc-timeout=5s]}}\n",
        ),
    );
    let f = findings(&e, RuleId::ProbeClientDeadline);
    assert!(
        f[0].patch.is_empty() && f[0].message.contains("raise timeoutSeconds to 5 or shorten"),
        "{:?}",
        f[0]
    );
}

#[test]
fn client_deadline_and_probe_timeout_patch_a_field_once() {
    // probe-timeout raises liveness to 3; the 5 s deadline needs 5: one operation, to 5.
    let policy = deadline_policy("mutate", "mutate");
    let spec = "containers:\n- name: api\n  image: a\n  livenessProbe: {exec: {command: [grpc_health_probe, -rpc-timeout=5s]}}\n  \
                readinessProbe: {exec: {command: [grpc_health_probe, -rpc-timeout=1s]}}\n";
    let e = eval_with(&policy, &pod(spec));
    let ops: Vec<(String, Value)> =
        e.findings.iter().flat_map(adds).filter(|(p, _)| p.ends_with("timeoutSeconds")).collect();
    let live: Vec<_> =
        ops.iter().filter(|(p, _)| p == "/spec/containers/0/livenessProbe/timeoutSeconds").collect();
    assert_eq!(live.len(), 1, "{ops:?}");
    assert_eq!(live[0].1, json!(5));
    // Readiness: probe-timeout's raise to 2 already covers the 1 s deadline; no deadline finding.
    let ready: Vec<_> =
        ops.iter().filter(|(p, _)| p == "/spec/containers/0/readinessProbe/timeoutSeconds").collect();
    assert_eq!(ready.len(), 1, "{ops:?}");
    assert_eq!(ready[0].1, json!(2));
    let f = findings(&e, RuleId::ProbeClientDeadline);
    assert_eq!(f.len(), 1, "{:?}", e.findings);
    assert!(f[0].message.starts_with("livenessProbe"), "{}", f[0].message);
    // probe-timeout still reports the readiness raise it makes.
    assert_eq!(findings(&e, RuleId::ProbeTimeout).len(), 1, "{:?}", e.findings);
    // The startup probe added beside it covers the deadline too.
    let startup: Vec<Value> =
        findings(&e, RuleId::StartupProbe).iter().flat_map(|f| adds(f)).map(|(_, v)| v).collect();
    assert_eq!(startup[0]["timeoutSeconds"], json!(5), "{startup:?}");
}

// === startup-probe beside an aggregate liveness endpoint ===

#[test]
fn startup_probe_does_not_copy_an_aggregate_liveness_path() {
    let e =
        eval(&pod("containers:\n- name: api\n  image: a\n  ports: [{name: http, containerPort: 8080}]\n  \
         livenessProbe: {httpGet: {path: /actuator/health, port: http}, initialDelaySeconds: 60}\n"));
    assert_eq!(findings(&e, RuleId::LivenessDependencyPath).len(), 1, "{:?}", e.findings);
    let f = findings(&e, RuleId::StartupProbe);
    let ops = adds(f[0]);
    assert_eq!(ops.len(), 1, "the liveness delay stays: {ops:?}");
    let probe = &ops[0].1;
    assert_eq!(probe["tcpSocket"], json!({"port": "http"}), "{probe}");
    assert!(probe.get("httpGet").is_none(), "{probe}");
    assert!(f[0].message.contains("TCP connect to the liveness port"), "{}", f[0].message);
    // Not flagged (the liveness group, or the rule off): the handler is copied as before.
    for (path, policy) in [
        ("/actuator/health/liveness", Policy::default()),
        (
            "/actuator/health",
            probegate::policy::parse(
                "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\nrules:\n  liveness-dependency-path: {action: off}\n",
                "p.yaml",
            )
            .unwrap(),
        ),
    ] {
        let e = eval_with(&policy, &pod(&format!(
            "containers:\n- name: api\n  image: a\n  livenessProbe: {{httpGet: {{path: {path}, port: 8080}}}}\n"
        )));
        let ops = adds(findings(&e, RuleId::StartupProbe)[0]);
        assert_eq!(ops[0].1["httpGet"]["path"], json!(path), "{ops:?}");
    }
}

#[test]
fn startup_probe_does_not_copy_an_exec_request_for_an_aggregate_path() {
    let spec = |url: &str| {
        format!(
            "containers:\n- name: api\n  image: a\n  ports: [{{containerPort: 8080}}]\n  \
             livenessProbe: {{exec: {{command: [curl, -f, '{url}']}}}}\n"
        )
    };
    let e = eval(&pod(&spec("http://localhost:8080/actuator/health")));
    assert_eq!(findings(&e, RuleId::LivenessDependencyPath).len(), 1, "{:?}", e.findings);
    let f = findings(&e, RuleId::StartupProbe);
    assert_eq!((f.len(), f[0].action), (1, Action::Warn), "{:?}", e.findings);
    assert!(adds(f[0]).is_empty(), "nothing is added: {:?}", f[0]);
    assert!(
        f[0].message.contains("not added") && f[0].message.contains("liveness group"),
        "{}",
        f[0].message
    );
    // The liveness group: copied as before.
    let e = eval(&pod(&spec("http://localhost:8080/actuator/health/liveness")));
    let ops = adds(findings(&e, RuleId::StartupProbe)[0]);
    assert_eq!(
        ops[0].1["exec"]["command"][2],
        json!("http://localhost:8080/actuator/health/liveness"),
        "{ops:?}"
    );
}

#[test]
fn a_timeout_with_no_room_is_a_warning_of_its_own_beside_the_raise() {
    let e = eval(&pod("containers:\n- name: api\n  image: a\n  \
         livenessProbe: {httpGet: {path: /live, port: 8080}, timeoutSeconds: 1}\n  \
         readinessProbe: {httpGet: {path: /ready, port: 8080}, timeoutSeconds: 1, periodSeconds: 1}\n"));
    let f = findings(&e, RuleId::ProbeTimeout);
    assert_eq!(f.len(), 2, "{:?}", e.findings);
    let raise = f.iter().find(|f| f.action == Action::Mutate).expect("the liveness raise");
    assert_eq!(
        adds(raise).iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>(),
        ["/spec/containers/0/livenessProbe/timeoutSeconds"]
    );
    assert!(!raise.message.contains("readinessProbe"), "{}", raise.message);
    let warn = f.iter().find(|f| f.action == Action::Warn).expect("the readiness warning");
    assert!(adds(warn).is_empty());
    assert!(
        warn.message.contains("readinessProbe.timeoutSeconds 1")
            && warn.message.contains("lengthen periodSeconds"),
        "{}",
        warn.message
    );
    // With only the probe that has room, no warning.
    let e = eval(&pod("containers:\n- name: api\n  image: a\n  \
         livenessProbe: {httpGet: {path: /live, port: 8080}, timeoutSeconds: 1}\n"));
    assert!(
        findings(&e, RuleId::ProbeTimeout).iter().all(|f| f.action == Action::Mutate),
        "{:?}",
        e.findings
    );
}

// === Noise: metrics-only containers ===

#[test]
fn metrics_only_containers_get_no_readiness_missing_and_prestop_sleep_only_as_configured() {
    let specs = [
        "containers:\n- name: kube-rbac-proxy\n  image: quay.io/brancz/kube-rbac-proxy:v0.18.1\n  \
         ports: [{name: https, containerPort: 8443}]\n",
        "containers:\n- name: exporter\n  image: prom/statsd-exporter:v0.26.0\n  \
         ports: [{name: metrics, containerPort: 9102}, {name: http-metrics, containerPort: 9125}]\n",
    ];
    for spec in specs {
        let e = eval(&pod(spec));
        assert!(findings(&e, RuleId::ReadinessMissing).is_empty(), "{spec}: {:?}", e.findings);
        let policy = probegate::policy::parse(
            "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\nrules:\n  \
             readiness-missing: {skipMetricsOnly: false}\n  prestop-sleep: {skipMetricsOnly: false}\n",
            "p.yaml",
        )
        .unwrap();
        let e = eval_with(&policy, &pod(spec));
        assert_eq!(findings(&e, RuleId::ReadinessMissing).len(), 1, "{spec}");
        assert_eq!(findings(&e, RuleId::PrestopSleep).len(), 1, "{spec}");
    }
    // prestop-sleep keeps its sleep on metrics-only containers by default; skipMetricsOnly drops it.
    let policy = probegate::policy::parse(
        "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\nrules:\n  prestop-sleep: {skipMetricsOnly: true}\n",
        "p.yaml",
    )
    .unwrap();
    for spec in specs {
        assert_eq!(findings(&eval(&pod(spec)), RuleId::PrestopSleep).len(), 1, "{spec}");
        assert!(findings(&eval_with(&policy, &pod(spec)), RuleId::PrestopSleep).is_empty(), "{spec}");
    }
    // A port not named for metrics makes it a serving container.
    let e = eval(&pod(
        "containers:\n- name: app\n  image: a\n  ports: [{name: metrics, containerPort: 9090}, {name: http, containerPort: 80}]\n",
    ));
    assert_eq!(findings(&e, RuleId::ReadinessMissing).len(), 1);
    assert_eq!(findings(&e, RuleId::PrestopSleep).len(), 1);
}

/// `info` findings are reported by `check` (level `info`, counted in the summary) and never fail it
/// at the default `--fail-on deny`, nor become admission warnings.
#[test]
fn info_findings_are_reported_by_check_only() {
    use probegate::cli::check::{self, CheckOptions, Format};
    use probegate::cli::input::Level;
    let manifest = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w}\nspec:\n  selector: {matchLabels: {a: b}}\n  \
        template:\n    metadata: {labels: {a: b}}\n    spec:\n      containers:\n      - name: web\n        image: nginx\n        \
        readinessProbe: {exec: {command: [curl, -f, \"http://localhost:80/\"]}, timeoutSeconds: 2}\n";
    let run = |fail_on| {
        let opts =
            CheckOptions { policy: None, namespace: None, format: Format::Text, fail_on, color: false };
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = check::run(&opts, &["-".into()], &mut manifest.as_bytes(), &mut out, &mut err);
        (code, String::from_utf8(out).unwrap())
    };
    let (code, out) = run(Level::Deny);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("  info  ") && out.contains("(exec-probe-replaceable)"), "{out}");
    assert!(out.contains("0 fix, 1 info, 0 errors"), "{out}");
    assert_eq!(run(Level::Info).0, 1);
    // At admission: no warning.
    let doc = common::yaml(manifest);
    let body = serde_json::to_vec(&common::review("CREATE", &doc, None, "i")).unwrap();
    let request = probegate::admission::parse_review(&body).unwrap();
    let response = probegate::admission::review(
        &Policy::default(),
        None,
        probegate::admission::Endpoint::Validate,
        &request,
    )
    .unwrap()
    .review
    .response;
    assert!(response.allowed);
    assert!(response.warnings.unwrap_or_default().iter().all(|w| !w.contains("exec-probe-replaceable")));
}

/// The readiness analysis has its own per-object budget: readiness scripts that would spend the
/// whole shell-analysis budget never leave a later container's liveness probe unanalysed.
#[test]
fn readiness_analysis_never_spends_the_liveness_budget() {
    let script = "test -f /tmp/ready; ".repeat(700); // 14 KB, under the per-script bound
    let mut containers: Vec<Value> = (0..100)
        .map(|i| {
            json!({"name": format!("r{i}"), "image": "a",
                "readinessProbe": {"exec": {"command": ["sh", "-c", script]}}})
        })
        .collect();
    containers.push(json!({"name": "api", "image": "a",
        "livenessProbe": {"exec": {"command": ["pg_isready", "-h", "orders-db.prod.svc"]}}}));
    let doc = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": containers}});
    let e = eval(&doc);
    let f = findings(&e, RuleId::LivenessDependency);
    assert_eq!(f.len(), 1, "unresolved: {:?}", e.unresolved);
    assert_eq!((f[0].container.as_str(), f[0].action), ("api", Action::Deny));
}

/// Warnings over 256 characters may be truncated by the API server (Kubernetes docs, "Dynamic
/// Admission Control", warnings): every new message, with a 20-character container name and the
/// `probegate: ` prefix, fits.
#[test]
fn new_messages_fit_a_warning() {
    let name = "orders-api-consumer1";
    let specs = [
        format!(
            "hostNetwork: true\ncontainers:\n- name: {name}\n  image: a\n  livenessProbe: {{httpGet: {{host: 10.20.30.40, path: /, port: 80}}}}\n"
        ),
        format!(
            "hostNetwork: true\ncontainers:\n- name: {name}\n  image: a\n  livenessProbe: {{httpGet: {{host: node-17.example.com, path: /, port: 80}}}}\n"
        ),
        format!(
            "hostNetwork: true\ncontainers:\n- name: {name}\n  image: a\n  livenessProbe: {{httpGet: {{host: pg.db.svc.cluster.local, path: /, port: 80}}}}\n"
        ),
        format!(
            "containers:\n- name: {name}\n  image: a\n  livenessProbe: {{httpGet: {{path: /actuator/health, port: 80}}}}\n"
        ),
        format!(
            "containers:\n- name: {name}\n  image: quay.io/keycloak/keycloak:26\n  livenessProbe: {{httpGet: {{path: /health, port: 80}}}}\n"
        ),
        format!(
            "containers:\n- name: {name}\n  image: a\n  readinessProbe: {{exec: {{command: [pg_isready, -h, orders-db.production.svc.cluster.local]}}}}\n"
        ),
        format!(
            "containers:\n- name: {name}\n  image: a\n  readinessProbe: {{exec: {{command: [curl, -f, \"http://localhost:8080/healthz\"]}}, timeoutSeconds: 2}}\n"
        ),
        format!(
            "containers:\n- name: {name}\n  image: a\n  restartPolicy: Never\n  livenessProbe: {{exec: {{command: [test, -f, /x]}}}}\n"
        ),
        format!(
            "containers:\n- name: {name}\n  image: a\n  livenessProbe: {{httpGet: {{path: /health/readiness, port: 80}}}}\n  readinessProbe: {{httpGet: {{path: /health/liveness, port: 80}}}}\n"
        ),
        format!(
            "containers:\n- name: {name}\n  image: a\n  readinessProbe: {{exec: {{command: [grpc_health_probe, \"-addr=:50051\", \"-rpc-timeout=15s\"]}}}}\n"
        ),
        format!(
            "containers:\n- name: {name}\n  image: a\n  livenessProbe: {{exec: {{command: [test, -f, /x]}}, timeoutSeconds: 1, periodSeconds: 1}}\n"
        ),
        format!(
            "containers:\n- name: {name}\n  image: a\n  startupProbe: {{exec: {{command: [kafka-broker-api-versions, --bootstrap-server, orders-db.production.svc.cluster.local:9092]}}}}\n"
        ),
        // (s13: a variable in host; a status known only at run time.)
        format!(
            "containers:\n- name: {name}\n  image: a\n  livenessProbe: {{tcpSocket: {{host: \"$(POD_IP)\", port: 80}}}}\n"
        ),
        format!(
            "containers:\n- name: {name}\n  image: a\n  livenessProbe: {{exec: {{command: [sh, -c, 'f() {{ exit $1; }}; pg_isready -h orders-db; f \"$CODE\"']}}}}\n"
        ),
        // (s14: readiness checks whose status does not count, whose host or status is known only
        // at run time; a probe's $(NAME) of a valueFrom variable.)
        format!(
            "containers:\n- name: {name}\n  image: a\n  readinessProbe: {{exec: {{command: [sh, -c, 'kafka-broker-api-versions --bootstrap-server orders-db.production.svc.cluster.local:9092 || true']}}}}\n"
        ),
        format!(
            "containers:\n- name: {name}\n  image: a\n  readinessProbe: {{exec: {{command: [sh, -c, 'kafka-broker-api-versions --bootstrap-server $ORDERS_TARGET_ADDRESS_X:9092']}}}}\n"
        ),
        format!(
            "containers:\n- name: {name}\n  image: a\n  readinessProbe: {{exec: {{command: [sh, -c, 'f() {{ exit $1; }}; kafka-broker-api-versions --bootstrap-server orders-db.production.svc.cluster.local:9092; f \"$CODE\"']}}}}\n"
        ),
        format!(
            "containers:\n- name: {name}\n  image: a\n  env: [{{name: DB_HOST, valueFrom: {{configMapKeyRef: {{name: c, key: h}}}}}}]\n  livenessProbe: {{exec: {{command: [pg_isready, -U, postgres, -h, \"$(DB_HOST)\"]}}}}\n"
        ),
        // (s17: the `$$(NAME)` escape in a shell, which runs a command named NAME: the warning was
        // about 360 characters and the admission cut lost "write `$DB_HOST`".)
        format!(
            "containers:\n- name: {name}\n  image: a\n  env: [{{name: DB_HOST, value: db}}]\n  livenessProbe: {{exec: {{command: [sh, -c, 'pg_isready -h $$(DB_HOST)']}}}}\n"
        ),
        // (s18: a negated check, which fails while the dependency is up; a `$NAME` in an argv no
        // shell runs, which fails every time.)
        format!(
            "containers:\n- name: {name}\n  image: a\n  livenessProbe: {{exec: {{command: [sh, -c, '! redis-cli -h redis-master ping']}}}}\n"
        ),
        format!(
            "containers:\n- name: {name}\n  image: a\n  env: [{{name: REDIS_HOST, value: c}}]\n  livenessProbe: {{exec: {{command: [redis-cli, -h, $REDIS_HOST, ping]}}}}\n"
        ),
        // (s19: a function named like a command the analysis reads by name. Not a `wget` with
        // `--tries`: every wget message names its URL twice, and its denial is already 268
        // characters for `wget -q -O- http://orders-db:8080/health`.)
        format!(
            "containers:\n- name: {name}\n  image: a\n  livenessProbe: {{exec: {{command: [sh, -c, 'readarray() {{ :; }}; pg_isready -h orders-db | readarray']}}}}\n"
        ),
        // (s20: a curl URL whose host is a probe's `$(POD_IP)`, which the kubelet empties.)
        format!(
            "containers:\n- name: {name}\n  image: a\n  env: [{{name: POD_IP, valueFrom: {{fieldRef: {{fieldPath: status.podIP}}}}}}]\n  livenessProbe: {{exec: {{command: [sh, -c, 'curl -sf --max-time 2 http://$(POD_IP):8080/healthz/live']}}}}\n"
        ),
    ];
    let mut seen = std::collections::BTreeSet::new();
    for spec in &specs {
        let e = eval(&deployment(&api_defaulted(pod(spec))));
        for f in &e.findings {
            seen.insert(f.rule);
            let text = format!("probegate: {}", f.describe());
            assert!(text.chars().count() <= 256, "{} chars: {text}", text.chars().count());
        }
    }
    let e = eval(&deployment(&pod(&format!("containers:\n- name: {name}\n  image: a\n"))));
    for f in &e.findings {
        seen.insert(f.rule);
        let text = format!("probegate: {}", f.describe());
        assert!(text.chars().count() <= 256, "{text}");
    }
    for rule in [
        RuleId::LivenessDependency,
        RuleId::LivenessDependencyPath,
        RuleId::ReadinessSharedDependency,
        RuleId::WorkerLivenessMissing,
        RuleId::ExecProbeReplaceable,
        RuleId::LivenessNeverRestarted,
        RuleId::ProbePathsSwapped,
        RuleId::ProbeClientDeadline,
        RuleId::ProbeTimeout,
        RuleId::StartupRemoteDependency,
    ] {
        assert!(seen.contains(&rule), "no case fired {rule}");
    }
}

/// probe-timeout raises a timeout at most to the probe's periodSeconds (rules.md §2.4).
#[test]
fn probe_timeout_is_capped_at_the_period() {
    let e = eval(&pod(
        "containers:\n- name: w\n  image: a\n  livenessProbe: {exec: {command: [x]}, periodSeconds: 2}\n",
    ));
    let f = findings(&e, RuleId::ProbeTimeout);
    let patch = serde_json::to_value(&f[0].patch).unwrap();
    assert_eq!(patch[0]["value"], json!(2), "{patch}");
    assert!(f[0].message.contains("as far as periodSeconds allows"), "{}", f[0].message);
    let e = eval(&pod(
        "containers:\n- name: w\n  image: a\n  livenessProbe: {exec: {command: [x]}, periodSeconds: 1}\n",
    ));
    let f = findings(&e, RuleId::ProbeTimeout);
    assert!(f[0].patch.is_empty());
    assert!(f[0].message.contains("lengthen periodSeconds"), "{}", f[0].message);
    let e = eval(&pod("containers:\n- name: w\n  image: a\n  livenessProbe: {exec: {command: [x]}}\n"));
    let patch = serde_json::to_value(&findings(&e, RuleId::ProbeTimeout)[0].patch).unwrap();
    assert_eq!(patch[0]["value"], json!(3));
}

// === built-in known commands only where the dependency's outage fails the command ===

#[test]
fn nodetool_ring_views_of_the_local_node_are_not_denied_but_another_host_is() {
    // kubernetes/examples' Cassandra StatefulSet: `nodetool status` asks the local node's JMX for
    // the ring and exits 0 while peers are down (scylladb/scylladb#1637), so a peer's outage never
    // fails this probe.
    for command in [
        "[nodetool, status]",
        "[/bin/sh, -c, 'nodetool status | grep -E \"^UN\\s+$POD_IP\"']",
        "[nodetool, ring]",
        "[nodetool, describecluster]",
    ] {
        let e = eval(&pod(&format!(
            "containers:\n- name: cassandra\n  image: cassandra:4.1\n  livenessProbe:\n    exec:\n      command: {command}\n"
        )));
        assert!(findings(&e, RuleId::LivenessDependency).is_empty(), "{command}: {:?}", e.findings);
    }
    // Aimed at another node, it is that node's outage that fails the probe: denied.
    let e = eval(&pod(
        "containers:\n- name: cassandra\n  image: cassandra:4.1\n  livenessProbe:\n    exec:\n      command: [nodetool, -h, cassandra-1.cassandra.default.svc, status]\n",
    ));
    let f = findings(&e, RuleId::LivenessDependency);
    assert_eq!(f.len(), 1, "{:?}", e.findings);
    assert_eq!(f[0].action, Action::Deny);
    assert!(f[0].message.contains("cassandra-1.cassandra.default.svc"), "{}", f[0].message);
}

// === hosts known only at run time (rules.md, the `unresolved` policy) ===

/// The liveness-dependency finding on a container whose env is `env_yaml` (a flow list) and whose
/// liveness probe runs `script` under `sh -c`.
fn unresolved_verdict(env_yaml: &str, script: &str) -> Option<(Action, String)> {
    let spec = format!(
        "containers:\n- name: app\n  image: a\n  env: {env_yaml}\n  \
         livenessProbe: {{exec: {{command: [sh, -c, {script:?}]}}}}\n"
    );
    let e = eval(&pod(&spec));
    findings(&e, RuleId::LivenessDependency).first().map(|f| (f.action, f.message.clone()))
}

#[test]
fn a_run_time_host_named_like_a_dependency_address_is_denied() {
    let secret = "{valueFrom: {secretKeyRef: {name: s, key: k}}}";
    for (env, script) in [
        (
            format!("[{{name: REDIS_HOST, {}}}]", &secret[1..secret.len() - 1]),
            "redis-cli -h $REDIS_HOST ping",
        ),
        (
            format!("[{{name: REDIS_URL, {}}}]", &secret[1..secret.len() - 1]),
            "redis-cli -u \"$REDIS_URL\" ping",
        ),
        // libpq's PGHOST, set at run time: the tool's own variable names the database.
        (format!("[{{name: PGHOST, {}}}]", &secret[1..secret.len() - 1]), "pg_isready"),
        // Set nowhere in the manifest (the image or envFrom may): the name still says what it is.
        ("[]".to_string(), "redis-cli -h ${REDIS_MASTER_HOST} ping"),
        ("[]".to_string(), "kafka-broker-api-versions.sh --bootstrap-server $KAFKA_BROKERS"),
        // The node's address is another machine without hostNetwork, whatever its variable's name.
        (
            "[{name: NODE, valueFrom: {fieldRef: {fieldPath: status.hostIP}}}]".to_string(),
            "curl -f http://$NODE:10256/healthz",
        ),
    ] {
        let got = unresolved_verdict(&env, script);
        assert_eq!(got.as_ref().map(|g| g.0), Some(Action::Deny), "{script}: {got:?}");
    }
}

#[test]
fn a_run_time_host_that_nothing_names_a_dependency_is_a_warning_never_a_denial() {
    for (env, script) in [
        // Set nowhere: empty, or set by the image; `CACHE` alone names no address.
        ("[]", "redis-cli -h $CACHE ping"),
        (
            "[{name: TARGET, valueFrom: {secretKeyRef: {name: s, key: k}}}]",
            "curl -f http://$TARGET:8080/healthz",
        ),
        // Command output.
        ("[]", "pg_isready -h $(cat /etc/dbhost)"),
    ] {
        let got = unresolved_verdict(env, script);
        let (action, message) = got.clone().unwrap_or_else(|| panic!("{script}: no finding"));
        assert_eq!(action, Action::Warn, "{script}: {got:?}");
        assert!(message.contains("known only at run time"), "{message}");
    }
}

#[test]
fn dependency_like_names_follow_the_catalog_pattern() {
    let named = |script: &str| unresolved_verdict("[]", script).map(|g| g.0);
    // `_` between the two words is optional; case does not matter; the words may sit inside a name.
    for var in ["DBHOST", "db_host", "MONGODB_URI", "APP_POSTGRES_SERVER", "ES_ENDPOINT", "AMQP_ADDR"] {
        assert_eq!(named(&format!("redis-cli -h ${var} ping")), Some(Action::Deny), "{var}");
    }
    for var in ["DB", "HOST", "REDIS", "SERVICE", "BACKEND_HOST", "TARGET_URL"] {
        assert_eq!(named(&format!("redis-cli -h ${var} ping")), Some(Action::Warn), "{var}");
    }
}

// === values the shell computes from known ones (quoted /dev/tcp targets, parameter operators,
// `:=` assignments, hostAliases, Windows program paths, scripts held in env values) ===

/// The liveness-dependency finding of a Pod with `extra` spec lines (YAML at the spec's level,
/// e.g. `hostAliases`), a container env `env_yaml` (a flow list) and liveness `command` (argv).
fn verdict_of(extra: &str, env_yaml: &str, command: &[&str]) -> Option<(Action, String)> {
    let spec = format!(
        "{extra}containers:\n- name: app\n  image: a\n  env: {env_yaml}\n  \
         livenessProbe: {{exec: {{command: {}}}}}\n",
        serde_json::to_string(command).unwrap()
    );
    let e = eval(&pod(&spec));
    findings(&e, RuleId::LivenessDependency).first().map(|f| (f.action, f.message.clone()))
}

/// Asserts that the liveness `command` gives no liveness-dependency finding and was analysed
/// (no note of a value not followed or a script not read).
#[track_caller]
fn assert_clean(extra: &str, env_yaml: &str, command: &[&str]) {
    let spec = format!(
        "{extra}containers:\n- name: app\n  image: a\n  env: {env_yaml}\n  \
         livenessProbe: {{exec: {{command: {}}}}}\n",
        serde_json::to_string(command).unwrap()
    );
    let e = eval(&pod(&spec));
    assert!(findings(&e, RuleId::LivenessDependency).is_empty(), "{command:?}: {:?}", e.findings);
    assert!(e.unresolved.is_empty(), "{command:?}: {:?}", e.unresolved);
}

const POD_IP_ENV: &str = "[{name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}]";

#[track_caller]
fn assert_not_denied(extra: &str, env: &str, command: &[&str]) {
    let got = verdict_of(extra, env, command);
    assert!(got.as_ref().is_none_or(|g| g.0 != Action::Deny), "{command:?} ({env}): {got:?}");
}

#[track_caller]
fn assert_denied_reaching(extra: &str, env: &str, command: &[&str], host: &str) {
    let got = verdict_of(extra, env, command);
    let (action, message) = got.clone().unwrap_or_else(|| panic!("{command:?}: no finding"));
    assert_eq!(action, Action::Deny, "{command:?}: {got:?}");
    assert!(message.contains(host), "{command:?}: {message}");
}

#[test]
fn dev_tcp_targets_are_words_resolved_like_any_other() {
    for script in [
        "exec 3<>\"/dev/tcp/${HOSTNAME}/6379\"",
        "exec 3<>/dev/tcp/$HOSTNAME/6379",
        "exec 3<>'/dev/tcp/localhost/6379'",
        "timeout 1 bash -c \"</dev/tcp/${POD_IP}/6379\"",
        "timeout 1 bash -c '</dev/tcp/$POD_IP/6379'",
        "timeout 1 bash -c \"</dev/tcp/$POD_IP/6379\"",
        "echo > \"/dev/udp/${POD_IP}/514\"",
        "H=127.0.0.1; exec 3<>\"/dev/tcp/$H/6379\"",
        "exec 3<>\"/dev/tcp/$(hostname -i)/6379\"",
    ] {
        // Not even a warning or a note: these are the pod's own names.
        assert_clean("", POD_IP_ENV, &["bash", "-c", script]);
    }
    for (script, host) in [
        ("exec 3<>\"/dev/tcp/${H}/6379\"", "cache.svc"),
        ("timeout 1 bash -c \"</dev/tcp/${H}/6379\"", "cache.svc"),
        ("exec 3<>\"/dev/tcp/redis-master/6379\"", "redis-master"),
        ("echo > \"/dev/udp/${H}/514\"", "cache.svc"),
    ] {
        assert_denied_reaching("", "[{name: H, value: cache.svc}]", &["bash", "-c", script], host);
    }
    // Known only at run time and named like a dependency's address: denied as elsewhere; any other
    // unknown name is a warning.
    assert_denied_reaching(
        "",
        "[]",
        &["bash", "-c", "exec 3<>\"/dev/tcp/${REDIS_HOST}/6379\""],
        "REDIS_HOST",
    );
    let got = verdict_of("", "[]", &["bash", "-c", "exec 3<>\"/dev/tcp/${TARGET}/6379\""]);
    assert_eq!(got.map(|g| g.0), Some(Action::Warn));
}

#[test]
fn parameter_operators_are_evaluated_on_known_values() {
    let local = "[{name: DB_HOST, value: 'localhost:5432'}, {name: DB_URL, value: 'postgres://u@127.0.0.1:5432/db'}, {name: UP, value: LOCALHOST}]";
    for script in [
        "pg_isready -h \"${DB_HOST%%:*}\"",
        "pg_isready -h \"${DB_HOST%:*}\"",
        "pg_isready -h ${DB_HOST%:[0-9]*}",
        "pg_isready -h \"${DB_URL##*@}\"",
        "H=${DB_URL#*//}; H=${H#*@}; pg_isready -h \"${H%%[:/]*}\"",
        "pg_isready -h \"${UP,,}\"",
        "pg_isready -h \"${DB_HOST/:5432/}\"",
        "pg_isready -h \"${DB_HOST//:*/}\"",
        "pg_isready -h \"${DB_HOST/%:*/}\"",
        "pg_isready -h \"${DB_HOST:0:9}\"",
        "pg_isready -h \"${DB_HOST: -14:9}\"",
    ] {
        assert_clean("", local, &["bash", "-c", script]);
    }
    // The Pod's own name and address, cut where a port or a domain starts: still this Pod.
    for script in [
        "curl -sf \"http://${HOSTNAME%%.*}:8080/\"",
        "pg_isready -h \"${DB_HOST%%:*}\"",
        "X=$HOSTNAME; curl -sf \"http://${X,,}:8080/\"",
        "curl -sf \"http://${HOSTNAME:0:63}:8080/\"",
    ] {
        let env = "[{name: DB_HOST, valueFrom: {fieldRef: {fieldPath: status.podIP}}}]";
        assert_clean("", env, &["bash", "-c", script]);
    }
    // The Pod's own IP through an operator: never denied.
    let pod_ip = "[{name: DB_HOST, valueFrom: {fieldRef: {fieldPath: status.podIP}}}]";
    for script in [
        "pg_isready -h \"${DB_HOST%%:*}\"",
        "pg_isready -h \"${DB_HOST#x}\"",
        "pg_isready -h \"${DB_HOST,,}\"",
        "pg_isready -h \"${DB_HOST/a/b}\"",
    ] {
        assert_not_denied("", pod_ip, &["bash", "-c", script]);
    }
    // The same operators on another host's address: denied, naming what is left.
    let remote = "[{name: DB_HOST, value: 'orders-db:5432'}, {name: DB_URL, value: 'postgres://u@orders-db.shop:5432/db'}, {name: UP, value: ORDERS-DB}]";
    for (script, host) in [
        ("pg_isready -h \"${DB_HOST%%:*}\"", "orders-db"),
        ("pg_isready -h \"${DB_URL##*@}\"", "orders-db.shop"),
        ("pg_isready -h \"${UP,,}\"", "orders-db"),
        ("pg_isready -h \"${DB_HOST/:5432/}\"", "orders-db"),
        ("pg_isready -h \"${DB_HOST:0:9}\"", "orders-db"),
    ] {
        assert_denied_reaching("", remote, &["bash", "-c", script], host);
    }
    // Unknown at admission: a prefix or suffix removed from a dependency's address is still one.
    assert_denied_reaching("", "[]", &["bash", "-c", "pg_isready -h \"${DB_HOST%%:*}\""], "DB_HOST");
    // A value this analysis does not compute (indirection, a length, an expansion in the pattern)
    // never denies.
    for script in [
        "pg_isready -h \"${!DB_HOST}\"",
        "pg_isready -h \"${DB_HOST/${X}/y}\"",
        "pg_isready -h \"${DB_HOST:$N}\"",
    ] {
        assert_not_denied("", "[{name: DB_HOST, value: 'orders-db:5432'}]", &["bash", "-c", script]);
    }
}

#[test]
fn default_assignments_set_the_variable_for_what_follows() {
    for script in [
        ": \"${DB_HOST:=localhost}\"; pg_isready -h \"$DB_HOST\"",
        ": ${DB_HOST=127.0.0.1}; pg_isready -h $DB_HOST",
        "echo ${REDIS_HOST:=localhost} >/dev/null; redis-cli -h \"$REDIS_HOST\" ping",
    ] {
        let got = verdict_of("", "[]", &["sh", "-c", script]);
        assert!(got.is_none(), "{script}: {got:?}");
    }
    // A value set in the env wins over the default, and so does an empty one for `=` (not `:=`).
    assert_denied_reaching(
        "",
        "[{name: DB_HOST, value: orders-db}]",
        &["sh", "-c", ": \"${DB_HOST:=localhost}\"; pg_isready -h \"$DB_HOST\""],
        "orders-db",
    );
    assert_denied_reaching(
        "",
        "[]",
        &["sh", "-c", ": \"${DB_HOST:=orders-db}\"; pg_isready -h \"$DB_HOST\""],
        "orders-db",
    );
    let got = verdict_of(
        "",
        "[{name: DB_HOST, value: ''}]",
        &["sh", "-c", ": ${DB_HOST=orders-db}; pg_isready -h \"$DB_HOST\""],
    );
    assert!(got.is_none(), "empty and set: `=` keeps it empty, the local socket: {got:?}");
    assert_denied_reaching(
        "",
        "[{name: DB_HOST, value: ''}]",
        &["sh", "-c", ": ${DB_HOST:=orders-db}; pg_isready -h \"$DB_HOST\""],
        "orders-db",
    );
}

#[test]
fn host_aliases_to_loopback_are_local_for_exec_probes() {
    let aliases = "hostAliases:\n- ip: 127.0.0.1\n  hostnames: [redis, cache.local]\n- ip: '::1'\n  hostnames: [pg]\n- ip: 10.0.0.5\n  hostnames: [orders-db, both]\n- ip: 127.0.0.1\n  hostnames: [both]\n";
    for command in [
        vec!["redis-cli", "-h", "redis", "ping"],
        vec!["redis-cli", "-h", "CACHE.local.", "ping"],
        vec!["pg_isready", "-h", "pg"],
        vec!["sh", "-c", "curl -sf http://redis:8080/healthz"],
    ] {
        let got = verdict_of(aliases, "[]", &command);
        assert!(got.is_none(), "{command:?}: {got:?}");
        // Without the aliases these names are other hosts.
        assert_eq!(verdict_of("", "[]", &command).map(|g| g.0), Some(Action::Deny), "{command:?}");
    }
    // An alias to another address, or a name given two addresses, is not local.
    assert_denied_reaching(aliases, "[]", &["pg_isready", "-h", "orders-db"], "orders-db");
    assert_denied_reaching(aliases, "[]", &["pg_isready", "-h", "both"], "both");
    // The kubelet resolves an httpGet host itself, on the node: the Pod's /etc/hosts does not apply.
    let spec = format!(
        "{aliases}containers:\n- name: app\n  image: a\n  livenessProbe: {{httpGet: {{host: redis, path: /, port: 6379}}}}\n"
    );
    let e = eval(&pod(&spec));
    assert_eq!(findings(&e, RuleId::LivenessDependency).first().map(|f| f.action), Some(Action::Deny));
}

#[test]
fn windows_program_paths_are_the_programs_they_name() {
    for program in [
        "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe",
        "c:\\windows\\system32\\windowspowershell\\v1.0\\POWERSHELL",
        "PowerShell.EXE",
        "C:/Program Files/PowerShell/7/pwsh.exe",
    ] {
        assert_denied_reaching(
            "",
            "[]",
            &[program, "-Command", "Invoke-WebRequest -UseBasicParsing http://orders-api:8080/health"],
            "orders-api",
        );
        assert_not_denied(
            "",
            "[]",
            &[program, "-Command", "Invoke-WebRequest -UseBasicParsing http://localhost:8080/health"],
        );
    }
    // A drive path with forward slashes, and a backslash path without a drive, name cmd too.
    for program in [
        "C:\\Windows\\System32\\cmd.exe",
        "CMD.EXE",
        "c:\\windows\\system32\\CMD",
        "C:/Windows/System32/cmd",
        "Windows\\System32\\cmd",
    ] {
        assert_denied_reaching(
            "",
            "[]",
            &[program, "/c", "curl.exe -f http://orders-api:8080/health"],
            "orders-api",
        );
        assert_not_denied("", "[]", &[program, "/c", "curl.exe -f http://localhost:8080/health"]);
    }
    assert_denied_reaching("", "[]", &["C:\\tools\\curl.exe", "-f", "http://orders-api/"], "orders-api");
}

#[test]
fn a_script_held_in_a_literal_env_value_is_analysed() {
    let env = |v: &str| format!("[{{name: CHECK, value: {v:?}}}]");
    assert_denied_reaching("", &env("pg_isready -h orders-db"), &["sh", "-c", "$CHECK"], "orders-db");
    assert_denied_reaching(
        "",
        &env("pg_isready -h orders-db && echo ok"),
        &["sh", "-c", "$(CHECK)"],
        "orders-db",
    );
    assert_denied_reaching(
        "",
        &env("redis-cli -h cache.svc ping"),
        &["bash", "-c", "eval \"$CHECK\""],
        "cache.svc",
    );
    assert_not_denied(
        "",
        &env("pg_isready -h localhost && curl -sf localhost:8080/"),
        &["sh", "-c", "$CHECK"],
    );
}

#[test]
fn a_conninfo_known_only_at_run_time_is_judged_by_its_variable_name() {
    let secret = |name: &str| format!("[{{name: {name}, valueFrom: {{secretKeyRef: {{name: s, key: k}}}}}}]");
    assert_denied_reaching(
        "",
        &secret("DATABASE_URL"),
        &["sh", "-c", "psql \"$DATABASE_URL\" -c 'select 1'"],
        "DATABASE_URL",
    );
    assert_denied_reaching(
        "",
        &secret("PG_URI"),
        &["sh", "-c", "psql -d \"$PG_URI\" -c 'select 1'"],
        "PG_URI",
    );
    // A database name is not an address.
    let got = verdict_of("", &secret("DB_NAME"), &["sh", "-c", "psql \"$DB_NAME\" -c 'select 1'"]);
    assert!(got.is_none(), "{got:?}");
    // Literal values as before.
    assert_denied_reaching(
        "",
        "[]",
        &["psql", "postgresql://u@orders-db:5432/app", "-c", "select 1"],
        "orders-db",
    );
    assert!(verdict_of("", "[]", &["psql", "postgresql://u@localhost:5432/app", "-c", "select 1"]).is_none());
}

#[test]
fn ansi_c_quoted_words_are_decoded() {
    assert_denied_reaching("", "[]", &["bash", "-c", "pg_isready -h $'orders-db'"], "orders-db");
    assert_denied_reaching(
        "",
        "[]",
        &["bash", "-c", "curl -sf $'http://orders-api\\x3a8080/'"],
        "orders-api",
    );
    assert!(verdict_of("", "[]", &["bash", "-c", "curl -sf $'http://localhost:8080/health\\n'"]).is_none());
    assert!(verdict_of("", "[]", &["bash", "-c", "pg_isready -h $'local\\x68ost'"]).is_none());
}

// === PowerShell, cmd, wrapper programs and DNS (session 6, #10's remaining list) ===

/// The liveness-dependency findings of one container whose liveness probe runs `argv`, with `env`.
fn liveness_findings(argv: &[&str], env: Value) -> Vec<Finding> {
    let doc = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "x", "env": env,
            "livenessProbe": {"exec": {"command": argv}, "timeoutSeconds": 5}}]}});
    let e = eval(&doc);
    findings(&e, RuleId::LivenessDependency).into_iter().cloned().collect()
}

#[test]
fn windows_shells_wrappers_and_self_lookups_deny_only_what_runs() {
    let mode = json!([{"name": "MODE", "value": "standalone"}]);
    // False denies before: code that never runs, cmd's `^`, lookups of the Pod's own name.
    let allowed: &[&[&str]] = &[
        &["pwsh", "-c", "function Check { Invoke-WebRequest http://db:8080/ }; exit 0"],
        &["pwsh", "-c", "if ($false) { Invoke-WebRequest http://db:8080/ }"],
        &["powershell", "-Command", "exit 0; Invoke-WebRequest http://db:8080/"],
        &[
            "pwsh",
            "-c",
            "if ($env:MODE -eq 'standalone') { exit 0 } else { Invoke-WebRequest http://db:8080/ }",
        ],
        &["cmd", "/c", "curl.exe -f http://local^host:8080/"],
        &["cmd", "/c", "if \"%MODE%\"==\"standalone\" (exit 0) else (curl.exe -f http://db:8080/)"],
        &["sh", "-c", "nslookup $HOSTNAME"],
        &["sh", "-c", "nslookup $(hostname)"],
        &["sh", "-c", "dig $HOSTNAME"],
        &["sh", "-c", "getent hosts $HOSTNAME"],
        &["runuser", "-u", "postgres", "--", "psql", "-h", "localhost", "-c", "select 1"],
    ];
    for argv in allowed {
        let f = liveness_findings(argv, mode.clone());
        assert!(f.is_empty(), "{argv:?}: {f:?}");
    }
    // Misses before (or shapes that must stay denied), each naming its host.
    let denied: &[(&[&str], &str)] = &[
        (&["runuser", "-u", "postgres", "--", "psql", "-h", "db", "-c", "select 1"], "reaches db "),
        (&["find", "/", "-maxdepth", "0", "-exec", "pg_isready", "-h", "db", "{}", "+"], "reaches db "),
        (&["cmd", "/c", "\"curl.exe -f http://db:8080/\""], "reaches http://db:8080/ "),
        (&["cmd", "/S", "/C", "\"curl.exe -f http://db:8080/\""], "reaches http://db:8080/ "),
        (&["cmd", "/c", "if errorlevel 1 curl.exe -f http://db:8080/"], "reaches http://db:8080/ "),
        (
            &["pwsh", "-c", "function Check($u) { Invoke-WebRequest $u }; Check http://db:8080/"],
            "reaches http://db:8080/ ",
        ),
        (
            &[
                "pwsh",
                "-c",
                "if ($env:MODE -eq 'cluster') { exit 0 } else { Invoke-WebRequest http://db:8080/ }",
            ],
            "reaches http://db:8080/ ",
        ),
        (&["sh", "-c", "nslookup db"], "reaches db "),
        (
            &["pwsh", "-c", "(New-Object Net.WebClient).DownloadString('http://db:8080/')"],
            "reaches http://db:8080/ ",
        ),
        (
            &["pwsh", "-c", "[System.Net.Http.HttpClient]::new().GetAsync('http://db:8080/').Result"],
            "reaches http://db:8080/ ",
        ),
        (&["pwsh", "-c", "Resolve-DnsName db"], "reaches db "),
        // The wrapper table: the command after each wrapper's own options.
        (&["su", "postgres", "-c", "psql -h db -c 'select 1'"], "reaches db "),
        (&["setpriv", "--reuid=1000", "--init-groups", "psql", "-h", "db", "-c", "select 1"], "reaches db "),
        (&["chroot", "--userspec=1000", "/", "psql", "-h", "db", "-c", "select 1"], "reaches db "),
        (&["nice", "-n", "5", "psql", "-h", "db", "-c", "select 1"], "reaches db "),
        (&["ionice", "-c", "3", "psql", "-h", "db", "-c", "select 1"], "reaches db "),
        (&["stdbuf", "-oL", "psql", "-h", "db", "-c", "select 1"], "reaches db "),
        (&["env", "-i", "PATH=/bin", "psql", "-h", "db", "-c", "select 1"], "reaches db "),
        (&["flock", "/tmp/l", "psql", "-h", "db", "-c", "select 1"], "reaches db "),
        // A conninfo string is named by its host, its password never shown.
        (&["psql", "host=db dbname=x password=hunter2", "-c", "select 1"], "reaches db "),
    ];
    for (argv, reaches) in denied {
        let f = liveness_findings(argv, mode.clone());
        assert_eq!(f.len(), 1, "{argv:?}: {f:?}");
        assert_eq!(f[0].action, Action::Deny, "{argv:?}: {}", f[0].message);
        assert!(f[0].message.contains(reaches), "{argv:?}: {}", f[0].message);
        assert!(!f[0].message.contains("hunter2"), "{}", f[0].message);
    }
    // `find -exec COMMAND ;` (find exits 0 whatever the command did) and a bare Test-NetConnection
    // (its result is an object) cannot fail the probe: a warning.
    for argv in [
        &["find", "/", "-maxdepth", "0", "-exec", "pg_isready", "-h", "db", ";"][..],
        &["pwsh", "-c", "Test-NetConnection -ComputerName db -Port 5432"],
    ] {
        let f = liveness_findings(argv, mode.clone());
        assert_eq!((f.len(), f[0].action), (1, Action::Warn), "{argv:?}: {f:?}");
    }
}

// === MongoDB replica-set discovery (issue #10, a miss) ===

#[test]
fn a_mongo_connection_that_discovers_a_replica_set_is_a_warning_naming_the_primary() {
    let ping = "db.adminCommand(\"ping\")";
    for command in [
        vec!["mongosh", "mongodb://localhost:27017/?replicaSet=rs0", "--eval", ping],
        vec!["mongo", "mongodb://127.0.0.1:27017/admin?replicaSet=rs0&authSource=admin", "--eval", ping],
        vec!["mongosh", "--host", "rs0/localhost:27017", "--eval", ping],
        vec!["mongosh", "localhost:27017/admin?replicaSet=rs0", "--eval", ping],
        // mongosh treats several seeds as a replica set (MONGOSH-465).
        vec!["mongosh", "mongodb://localhost:27017,localhost:27018/", "--eval", ping],
    ] {
        let got = verdict_of("", "[]", &command);
        let (action, message) = got.clone().unwrap_or_else(|| panic!("{command:?}: no finding"));
        assert_eq!(action, Action::Warn, "{command:?}: {message}");
        assert!(message.contains("primary"), "{command:?}: {message}");
        assert!(message.contains("directConnection=true"), "{command:?}: {message}");
    }
    // Stays on this member: directConnection=true, no replicaSet (mongosh adds directConnection
    // itself), or the legacy shell's seed list (it connects to the first host).
    for command in [
        vec!["mongosh", "mongodb://localhost:27017/?replicaSet=rs0&directConnection=true", "--eval", ping],
        vec!["mongosh", "mongodb://localhost:27017/admin", "--eval", ping],
        vec!["mongosh", "--host", "localhost:27017", "--eval", ping],
        vec!["mongosh", "--port", "27017", "--eval", ping],
        vec!["mongo", "mongodb://localhost:27017,localhost:27018/", "--eval", ping],
    ] {
        assert_clean("", "[]", &command);
    }
    // The note says why even when the user info holds a variable from a Secret (the fresh-user
    // pass: the note named the password's Secret instead), and the password is not shown.
    let env = "[{name: PW, valueFrom: {secretKeyRef: {name: mongo, key: pw}}}]";
    let uri = "mongodb://root:$PW@localhost:27017/admin?replicaSet=rs0";
    let got = verdict_of("", env, &["sh", "-c", &format!("mongosh \"{uri}\" --eval '{ping}'")]);
    let (action, message) = got.unwrap();
    assert_eq!(action, Action::Warn, "{message}");
    // (A shown URL's query values are `***` since s26: the note names the replica set.)
    assert!(
        message.contains("mongodb://localhost:27017/admin?replicaSet=*** (replicaSet=rs0: "),
        "{message}"
    );
    assert!(!message.contains("Secret"), "{message}");
    // A remote member named in the command is still a denial.
    let got =
        verdict_of("", "[]", &["mongosh", "mongodb://mongo-1.mongo:27017/?replicaSet=rs0", "--eval", ping]);
    assert_eq!(got.map(|g| g.0), Some(Action::Deny));
}

// === names made from the Pod's own name (issue #10, a note that called HOSTNAME a script variable) ===

#[test]
fn a_name_cut_from_the_pods_own_name_is_a_peer_warning_never_a_denial() {
    for script in [
        // A StatefulSet replica asking replica 0 (HOSTNAME is the Pod's name: `mongo-2` gives `mongo-0`).
        "mongosh --host ${HOSTNAME%-*}-0.mongo:27017 --eval 'db.adminCommand(\"ping\")'",
        "redis-cli -h \"${HOSTNAME%-*}-0.redis-headless\" ping",
        "h=$(hostname); pg_isready -h ${h%-*}-0.pg",
        "curl -f http://${HOSTNAME%-*}-0:8080/healthz",
    ] {
        let got = unresolved_verdict("[]", script);
        let (action, message) = got.clone().unwrap_or_else(|| panic!("{script}: no finding"));
        assert_eq!(action, Action::Warn, "{script}: {message}");
        assert!(message.contains("made from this Pod's name"), "{script}: {message}");
        assert!(!message.contains("script variable"), "{script}: {message}");
    }
    // The Pod's own name, whole or cut at a dot, is still this Pod.
    for script in
        ["redis-cli -h $HOSTNAME ping", "redis-cli -h ${HOSTNAME%%.*} ping", "redis-cli -h $(hostname) ping"]
    {
        assert_eq!(unresolved_verdict("[]", script), None, "{script}");
    }
    // Other values (a known host, the Pod's whole name in a path) get no such note (kills the
    // mutant hosts.rs:303, the PeerName guard made true: every marker's note would be this one).
    for (env, script) in [
        ("[{name: H, value: orders-db}]", "redis-cli -h $H ping"),
        ("[]", "curl -f http://orders-db:8080/check/$HOSTNAME"),
    ] {
        let (action, message) = unresolved_verdict(env, script).unwrap();
        assert_eq!(action, Action::Deny, "{message}");
        assert!(message.contains("reaches ") && !message.contains("made from"), "{message}");
    }
    // From a metadata.name fieldRef, the same.
    let env = "[{name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]";
    let got = unresolved_verdict(env, "redis-cli -h ${POD_NAME%-*}-0.redis ping");
    assert_eq!(got.as_ref().map(|g| g.0), Some(Action::Warn), "{got:?}");
}

/// PowerShell `switch` on a known value (a literal env value the script does not set) runs only
/// the clauses that match (about_Switch): every matching clause in order until one runs `break`,
/// `default` when none matched, case ignored unless `-CaseSensitive`, `-Wildcard` patterns with
/// `*`, `?` and `[...]`. `-Regex`, a script-block condition or an unknown value leaves every clause.
#[test]
fn powershell_switch_on_a_known_value_runs_only_its_matching_clauses() {
    let mode = json!([{"name": "MODE", "value": "standalone"}]);
    let local = "Invoke-WebRequest http://localhost:8080/health";
    let remote = "Invoke-WebRequest http://db:8080/health";
    let switch = |head: &str, a: &str, a_body: &str, b: &str, b_body: &str| {
        format!("switch {head} {{\n  {a} {{ {a_body} }}\n  {b} {{ {b_body} }}\n}}")
    };
    // (head, first pattern, second pattern, which clauses run: "A", "B" or "AB").
    let cases = [
        ("($env:MODE)", "'standalone'", "default", "A"),
        ("($env:MODE)", "'cluster'", "default", "B"),
        ("($env:MODE)", "'STANDALONE'", "default", "A"),
        ("($env:MODE)", "standalone", "default", "A"),
        ("($env:MODE)", "\"standalone\"", "'cluster'", "A"),
        ("-CaseSensitive ($env:MODE)", "'STANDALONE'", "default", "B"),
        ("-Exact ($env:MODE)", "'stand*'", "default", "B"),
        ("-Wildcard ($env:MODE)", "'stand*'", "'clu*'", "A"),
        ("-Wildcard ($env:MODE)", "'s?and[a-z]lone'", "default", "A"),
        ("($env:MODE)", "'standalone'", "'standalone'", "AB"),
        ("($env:MODE)", "default", "'standalone'", "B"),
    ];
    for (head, a, b, runs) in cases {
        // Self-only: the clauses that run reach localhost, the others db.
        let body = |slot| if runs.contains(slot) { local } else { remote };
        let script = switch(head, a, body('A'), b, body('B'));
        let f = liveness_findings(&["pwsh", "-c", &script], mode.clone());
        assert!(f.is_empty(), "{script}: {f:?}");
        // Each clause that runs, reaching db: denied.
        for slot in runs.chars() {
            let body = |s| if s == slot { remote } else { local };
            let script = switch(head, a, body('A'), b, body('B'));
            let f = liveness_findings(&["pwsh", "-c", &script], mode.clone());
            assert!(f.len() == 1 && f[0].action == Action::Deny, "{script}: {f:?}");
        }
    }
    // `break` in a clause that runs ends the switch: a later matching clause never runs.
    let script =
        format!("switch ($env:MODE) {{ 'standalone' {{ {local}; break }} 'standalone' {{ {remote} }} }}");
    let f = liveness_findings(&["pwsh", "-c", &script], mode.clone());
    assert!(f.is_empty(), "{script}: {f:?}");
    // Not decided: every clause analysed.
    for head in ["-Regex ($env:MODE)", "($env:OTHER)", "(Get-Mode)"] {
        let script = switch(head, "'^standalone$'", local, "default", remote);
        let f = liveness_findings(&["pwsh", "-c", &script], mode.clone());
        assert!(f.len() == 1 && f[0].action == Action::Deny, "{script}: {f:?}");
    }
    let script = switch("($env:MODE)", "{ $_ -like 's*' }", local, "default", remote);
    let f = liveness_findings(&["pwsh", "-c", &script], mode.clone());
    assert!(f.len() == 1 && f[0].action == Action::Deny, "{script}: {f:?}");
}

// === liveness-dependency messages (issue #10) ===

fn exec_liveness(kind: &str, script: &str) -> Value {
    let container =
        json!({"name": "c", "image": "x", "livenessProbe": {"exec": {"command": ["sh", "-c", script]}}});
    let pod_spec = json!({"restartPolicy": "Never", "containers": [container]});
    let meta = json!({"name": "w", "namespace": "default"});
    match kind {
        "Pod" => json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": pod_spec}),
        "Job" => json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
            "spec": {"template": {"spec": pod_spec}}}),
        "CronJob" => json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": meta,
            "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": pod_spec}}}}}),
        _ => json!({"apiVersion": "apps/v1", "kind": kind, "metadata": meta,
            "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}},
            "spec": {"containers": [container]}}}}),
    }
}

fn liveness_message(kind: &str, script: &str) -> (Action, String) {
    let e = eval(&exec_liveness(kind, script));
    let f = findings(&e, RuleId::LivenessDependency);
    assert_eq!(f.len(), 1, "{kind} {script:?}: {:?}", e.findings);
    (f[0].action, f[0].message.clone())
}

/// Issue #10: the message names what reaches the host. A bare `/dev/tcp` redirection has no
/// command words (it was shown as ``` `` ```), and netcat's `host port` arguments are an endpoint.
#[test]
fn liveness_messages_name_the_redirection_and_the_endpoint() {
    let (action, m) = liveness_message("Pod", "timeout 3 bash -c '</dev/tcp/orders-db/5432'");
    assert_eq!(action, Action::Deny);
    assert!(m.contains("`</dev/tcp/orders-db/5432`"), "{m}");
    assert!(m.contains("reaches orders-db:5432 (database, via bash's /dev/tcp redirection)"), "{m}");
    let (_, m) = liveness_message("Pod", "bash -c 'echo PING > /dev/tcp/cache/6379'");
    assert!(m.contains("`echo PING >/dev/tcp/cache/6379`"), "{m}");
    let (_, m) = liveness_message("Pod", "nc -z orders-db 5432");
    assert!(m.contains("reaches orders-db:5432 (database, via nc)"), "{m}");
    let (_, m) = liveness_message("Pod", "nc -z fd00::5 5432");
    assert!(m.contains("reaches [fd00::5]:5432 "), "{m}");
    let (_, m) = liveness_message("Pod", "nc -z orders-db");
    assert!(m.contains("reaches orders-db ("), "{m}");
    // A client keeps its own name.
    let (_, m) = liveness_message("Pod", "pg_isready -h orders-db");
    assert!(m.contains("via pg_isready)"), "{m}");
}

/// Issue #10: a Job's Pods get no Service traffic, so "move that check to readinessProbe" is no
/// advice for them; workloads behind Services keep it.
#[test]
fn a_jobs_liveness_dependency_advice_fits_a_job() {
    for kind in ["Job", "CronJob"] {
        let (action, m) = liveness_message(kind, "pg_isready -h orders-db");
        assert_eq!(action, Action::Deny, "{kind}");
        assert!(m.contains("drop that check from livenessProbe"), "{kind}: {m}");
        assert!(!m.contains("move that check to readinessProbe"), "{kind}: {m}");
        let (action, m) = liveness_message(kind, "pg_isready -h \"$CACHE\"");
        assert_eq!(action, Action::Warn, "{kind}");
        assert!(m.contains("drop it from livenessProbe, or probe localhost"), "{kind}: {m}");
    }
    for kind in ["Pod", "Deployment", "StatefulSet"] {
        let (_, m) = liveness_message(kind, "pg_isready -h orders-db");
        assert!(m.contains("move that check to readinessProbe"), "{kind}: {m}");
        let (_, m) = liveness_message(kind, "pg_isready -h \"$CACHE\"");
        assert!(m.contains("check it in readinessProbe, or probe localhost"), "{kind}: {m}");
    }
}

/// Issue #10: `exec-probe-replaceable` ("httpGet does that") is no advice beside a denial of the
/// same liveness probe; on a liveness probe that is not denied it stays.
#[test]
fn a_denied_liveness_probe_gets_no_exec_probe_replaceable_advice() {
    let e = eval(&exec_liveness("Pod", "curl -sf http://localhost:9200/_cluster/health"));
    assert_eq!(findings(&e, RuleId::LivenessDependency)[0].action, Action::Deny);
    assert!(findings(&e, RuleId::ExecProbeReplaceable).is_empty(), "{:?}", e.findings);
    let e = eval(&exec_liveness("Pod", "curl -sf http://localhost:9200/_cluster/health?local=true"));
    assert!(findings(&e, RuleId::LivenessDependency).is_empty(), "{:?}", e.findings);
    assert_eq!(findings(&e, RuleId::ExecProbeReplaceable).len(), 1, "{:?}", e.findings);
}

// === host lists a client tries in turn (libpq failover) ===

/// Issue #10 (false deny): libpq "tries each host in the order given ... until a connection is
/// successfully established" (PostgreSQL docs, libpq, 34.1.1.3 "Specifying Multiple Hosts"), for
/// `host`, `hostaddr`, `PGHOST`, `-h` and a URI's authority alike. With this Pod in the list, a
/// remote host's outage alone cannot fail the check: a warning saying why. pg_isready 15.18 with a
/// fake server on 127.0.0.1:15432 (db, db2 unresolvable): `-h localhost,db`, `-h db,localhost`,
/// `host=localhost,db`, `PGHOST=localhost,db`, `hostaddr=127.0.0.1,10.1.2.3`,
/// `postgresql://localhost:15432,db:15432/x` exit 0; `-h db,db2`, `hostaddr=10.1.2.3,10.1.2.4`,
/// `postgresql://db:15432,db2:15432/x` exit 2 ("no response").
#[test]
fn a_libpq_host_list_holding_this_pod_is_a_warning_and_an_all_remote_one_is_denied() {
    for script in [
        "pg_isready -d 'host=localhost,db'",
        "pg_isready -h localhost,db",
        "pg_isready -h db,localhost",
        "PGHOST=localhost,db pg_isready",
        "psql postgresql://localhost,db/x -c 'select 1'",
        "psql 'postgresql://db:5432,127.0.0.1:5432/x' -c 'select 1'",
        "pg_isready -d 'host=db,db2 hostaddr=127.0.0.1,10.0.0.5'",
        "PGHOSTADDR=10.0.0.5,::1 pg_isready -h db,db2",
        "pg_isready -h /var/run/postgresql,db",
        // `prefer-standby` falls back to any server, this Pod's included (libpq, "Parameter Key Words").
        "pg_isready -d 'host=localhost,db target_session_attrs=prefer-standby'",
    ] {
        let (action, m) =
            unresolved_verdict("[]", script).unwrap_or_else(|| panic!("{script:?}: no finding"));
        assert_eq!(action, Action::Warn, "{script:?}: {m}");
        assert!(m.contains("libpq tries its hosts in order until one accepts"), "{script:?}: {m}");
    }
    // The warning says where this Pod is in the list: first (nothing before it can delay the
    // check) or after a remote host; three hosts as two.
    for (script, order) in [
        ("pg_isready -h localhost,db", "and the first, this Pod, answers"),
        ("pg_isready -h localhost,db,db2", "and the first, this Pod, answers"),
        ("pg_isready -h db,localhost", "and one of them is this Pod"),
        ("pg_isready -h db,db2,localhost", "and one of them is this Pod"),
    ] {
        let (action, m) =
            unresolved_verdict("[]", script).unwrap_or_else(|| panic!("{script:?}: no finding"));
        assert_eq!(action, Action::Warn, "{script:?}: {m}");
        assert!(m.contains(order), "{script:?}: {m}");
    }
    for (script, hosts) in [
        ("pg_isready -h db,db2", "db,db2"),
        ("pg_isready -d 'host=db,db2'", "db,db2"),
        ("PGHOST=db,db2 pg_isready", "db,db2 (PGHOST)"),
        ("psql postgresql://db,db2/x -c 'select 1'", "postgresql://db,db2/x"),
        // `hostaddr` decides where libpq connects, whatever `host` says.
        ("pg_isready -d 'host=localhost,db hostaddr=10.0.0.4,10.0.0.5'", "10.0.0.4,10.0.0.5"),
        // A `target_session_attrs` that may skip this Pod's server (a standby for `read-write`)
        // needs another host: the list is no mere alternative.
        ("pg_isready -d 'host=localhost,db target_session_attrs=read-write'", "localhost,db"),
        ("PGTARGETSESSIONATTRS=primary pg_isready -h localhost,db", "localhost,db"),
    ] {
        let (action, m) =
            unresolved_verdict("[]", script).unwrap_or_else(|| panic!("{script:?}: no finding"));
        assert_eq!(action, Action::Deny, "{script:?}: {m}");
        assert!(m.contains(&format!("reaches {hosts} ")), "{script:?}: {m}");
    }
    // A host list of another client keeps its own reading: mongosh sends a seed list's command to
    // the replica set's primary, which may be another Pod (already denied, with that note).
    let (action, m) =
        unresolved_verdict("[]", "mongosh 'mongodb://localhost,db/x' --eval 'db.runCommand({ping:1})'")
            .expect("mongosh seed list");
    assert_eq!(action, Action::Deny, "{m}");
}

/// User info in an httpGet/tcpSocket host (`u:pw@db`) is shown as URLs are, `u:***@db`, in the
/// liveness denial, the readiness and startup warnings and `explain` (break-it pass).
#[test]
fn user_info_in_a_probe_host_is_redacted_in_every_message() {
    let spec = "containers:\n- name: app\n  image: a\n  \
        livenessProbe: {httpGet: {host: 'u:S3cretA@db.shop.svc', path: /h, port: 8080}}\n  \
        readinessProbe: {tcpSocket: {host: 'u:S3cretB@db.shop.svc', port: 8080}}\n  \
        startupProbe: {tcpSocket: {host: 'S3cretC@db.shop.svc', port: 8080}}\n";
    let e = eval(&pod(spec));
    let shown: Vec<&str> = e.findings.iter().map(|f| f.message.as_str()).collect();
    assert!(shown.iter().any(|m| m.contains("u:***@db.shop.svc")), "{shown:?}");
    assert!(shown.iter().any(|m| m.contains("***@db.shop.svc")), "{shown:?}");
    assert_eq!(findings(&e, RuleId::ReadinessSharedDependency).len(), 1, "{shown:?}");
    assert_eq!(findings(&e, RuleId::StartupRemoteDependency).len(), 1, "{shown:?}");
    for m in &shown {
        assert!(!m.contains("S3cret"), "{m}");
    }
}

/// The hint of `exec-probe-replaceable` names the host the command uses: httpGet requests the
/// Pod's IP, which a server listening only on loopback does not answer; for a command that
/// already uses the Pod's IP there is no such caveat.
#[test]
fn the_exec_probe_replaceable_hint_names_the_host_written() {
    let message = |command: &str, env: &str| {
        let spec = format!(
            "containers:\n- name: web\n  image: a\n{env}  readinessProbe: {{exec: {{command: [sh, -c, {command:?}]}}}}\n"
        );
        let e = eval(&pod(&spec));
        let f = findings(&e, RuleId::ExecProbeReplaceable);
        assert_eq!(f.len(), 1, "{command}: {:?}", e.findings);
        f[0].message.clone()
    };
    for (command, host) in [
        ("curl -f http://0.0.0.0:8080/healthz", "0.0.0.0"),
        ("curl -f http://[::1]:8080/healthz", "::1"),
        ("curl -f http://localhost:8080/healthz", "localhost"),
        ("wget -q -O- http://127.0.0.1:8080/", "127.0.0.1"),
    ] {
        let m = message(command, "");
        assert!(m.contains(&format!("only on {host}")) && m.contains("pod's IP"), "{m}");
    }
    let env = "  env: [{name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}]\n";
    let m = message("curl -f http://$POD_IP:8080/healthz", env);
    assert!(!m.contains("only on") && !m.contains("127.0.0.1"), "{m}");
}

// === loopback names and the Pod's own host names (issue 10) ===

/// The liveness-dependency finding (action, message) of `obj`.
fn liveness_of(obj: &Value) -> Option<(Action, String)> {
    let e = eval(obj);
    findings(&e, RuleId::LivenessDependency).first().map(|f| (f.action, f.message.clone()))
}

/// A bare Pod `name` in namespace `shop` with `extra` spec lines and a liveness `probe` (a YAML
/// flow mapping).
fn named_pod(name: &str, extra: &str, probe: &str) -> Value {
    let spec =
        common::yaml(&format!("{extra}containers:\n- name: app\n  image: a\n  livenessProbe: {probe}\n"));
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "shop"}, "spec": spec})
}

fn exec_probe(command: &[&str]) -> String {
    format!("{{exec: {{command: {}}}}}", serde_json::to_string(command).unwrap())
}

/// The loopback names of /etc/hosts files: the kubelet's (`localhost`, `ip6-localhost`,
/// `ip6-loopback`) and RHEL's (`localhost.localdomain`, `localhost6`, `localhost6.localdomain6`).
/// Where a hosts file names them they are the loopback; where none does they resolve nowhere: no
/// dependency either way. For exec probes that is this Pod; for httpGet/tcpSocket hosts without
/// hostNetwork the node's loopback (denied as such, like `localhost`), with hostNetwork the Pod.
#[test]
fn every_loopback_name_is_local_for_exec_and_the_nodes_loopback_for_network_probes() {
    for name in ["localhost6", "localhost6.localdomain6", "ip6-localhost", "ip6-loopback", "LOCALHOST6."] {
        for command in [
            vec!["pg_isready", "-h", name],
            vec!["redis-cli", "-h", name, "ping"],
            vec!["sh", "-c", &format!("curl -sf http://{name}:8080/healthz")],
        ] {
            let got = liveness_of(&named_pod("p", "", &exec_probe(&command)));
            assert!(got.is_none(), "{command:?}: {got:?}");
        }
        for probe in [
            format!("{{httpGet: {{host: {name:?}, path: /healthz, port: 8080}}}}"),
            format!("{{tcpSocket: {{host: {name:?}, port: 8080}}}}"),
        ] {
            let got = liveness_of(&named_pod("p", "", &probe));
            let (action, message) = got.clone().unwrap_or_else(|| panic!("{probe}: no finding"));
            assert_eq!(action, Action::Deny, "{probe}");
            assert!(message.contains("the node's loopback, not this pod"), "{message}");
            assert_eq!(liveness_of(&named_pod("p", "hostNetwork: true\n", &probe)), None, "{probe}");
        }
    }
}

/// The kubelet writes the Pod's hostname (`spec.hostname`, else `metadata.name`) into the
/// container's `/etc/hosts` with the Pod's IP, and with `spec.subdomain` its
/// `<hostname>.<subdomain>.<namespace>.svc.<cluster domain>` too (pkg/kubelet/kubelet_pods.go,
/// `managedHostsFileContent`; docs "DNS for Services and Pods", "Pod's hostname and subdomain
/// fields"). An exec probe resolves it there (`/etc/hosts` before DNS): the Pod itself.
#[test]
fn an_exec_probe_of_the_pods_own_hostname_is_self() {
    let quiet = |name: &str, extra: &str, command: &[&str]| {
        let got = liveness_of(&named_pod(name, extra, &exec_probe(command)));
        assert!(got.is_none(), "{name} {extra:?} {command:?}: {got:?}");
    };
    let denied = |name: &str, extra: &str, command: &[&str], host: &str| {
        let got = liveness_of(&named_pod(name, extra, &exec_probe(command)));
        let (action, message) = got.clone().unwrap_or_else(|| panic!("{command:?}: no finding"));
        assert_eq!(action, Action::Deny, "{name} {extra:?} {command:?}: {got:?}");
        assert!(message.contains(host), "{message}");
    };
    // metadata.name is the hostname without spec.hostname.
    quiet("mypod", "", &["pg_isready", "-h", "mypod"]);
    quiet("mypod", "", &["pg_isready", "-h", "MyPod."]);
    quiet("mypod", "", &["sh", "-c", "curl -sf http://mypod:8080/healthz"]);
    quiet("mypod", "", &["redis-cli", "-h", "mypod", "ping"]);
    denied("other", "", &["pg_isready", "-h", "mypod"], "mypod");
    // spec.hostname wins over metadata.name.
    quiet("mypod", "hostname: myhost\n", &["pg_isready", "-h", "myhost"]);
    denied("mypod", "hostname: myhost\n", &["pg_isready", "-h", "mypod"], "mypod");
    // With spec.subdomain, the FQDN (in /etc/hosts with the default cluster domain).
    let sub = "hostname: myhost\nsubdomain: sub\n";
    for host in ["myhost.sub.shop.svc.cluster.local", "myhost.sub.shop.svc.cluster.local.", "myhost"] {
        quiet("mypod", sub, &["pg_isready", "-h", host]);
    }
    // Without the cluster domain it is found through the DNS search list: this Pod's alone when
    // the hostname is the Pod's (unique) name; a spec.hostname may be another Pod's too.
    quiet("myhost", "subdomain: sub\n", &["pg_isready", "-h", "myhost.sub.shop.svc"]);
    denied("mypod", sub, &["pg_isready", "-h", "myhost.sub.shop.svc"], "myhost");
    for host in [
        "myhost.sub.default.svc.cluster.local",
        "myhost.other.shop.svc.cluster.local",
        "myhost.sub.shop.svc.example.org",
        "other.sub.shop.svc.cluster.local",
    ] {
        denied("mypod", sub, &["pg_isready", "-h", host], host);
    }
    // Without a subdomain there is no FQDN entry.
    denied(
        "mypod",
        "hostname: myhost\n",
        &["pg_isready", "-h", "myhost.sub.shop.svc.cluster.local"],
        "myhost",
    );
    // With hostNetwork the container gets the node's /etc/hosts: the Pod's name is not in it.
    denied("mypod", "hostNetwork: true\n", &["pg_isready", "-h", "mypod"], "mypod");
    // A hostAlias giving the name another address: which one a resolver picks is not certain.
    denied(
        "mypod",
        "hostAliases:\n- ip: 10.0.0.9\n  hostnames: [mypod]\n",
        &["pg_isready", "-h", "mypod"],
        "mypod",
    );
    // A name over 63 characters is cut to 63 for the hostname (kubelet
    // `truncatePodHostnameIfNeeded`, which also drops a trailing `-` or `.`).
    let long = format!("{}-{}", "a".repeat(62), "b".repeat(10));
    quiet(&long, "", &["pg_isready", "-h", &"a".repeat(62)]);
}

/// A StatefulSet's Pods are `<name>-<ordinal>`, with `spec.hostname` and `spec.subdomain` set by
/// the controller over the template's (pkg/controller/statefulset, `initIdentity`): a template
/// knows no Pod's own name, and `<name>-0` is a peer (replica 0), not this Pod. Only names from
/// the Pod's environment are its own (`$HOSTNAME`, a `metadata.name` fieldRef). A Pod the
/// controller made carries its name, hostname and subdomain.
#[test]
fn a_statefulset_template_knows_no_pods_own_name_but_its_pods_do() {
    let sts = |command: &[&str], hostname: &str| {
        let env = "  env: [{name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]\n";
        let spec = common::yaml(&format!(
            "{hostname}containers:\n- name: app\n  image: a\n{env}  livenessProbe: {}\n",
            exec_probe(command)
        ));
        let obj = json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "redis", "namespace": "shop"},
            "spec": {"serviceName": "redis-headless", "selector": {"matchLabels": {"a": "b"}},
                "template": {"metadata": {"labels": {"a": "b"}}, "spec": spec}}});
        liveness_of(&obj)
    };
    for command in [
        ["redis-cli", "-h", "redis-0.redis-headless", "ping"],
        ["redis-cli", "-h", "redis-0.redis-headless.shop.svc.cluster.local", "ping"],
        ["redis-cli", "-h", "redis", "ping"],
    ] {
        assert_eq!(sts(&command, "").map(|g| g.0), Some(Action::Deny), "{command:?}");
    }
    // The template's hostname is replaced by the Pod's name.
    assert_eq!(
        sts(&["redis-cli", "-h", "myhost", "ping"], "hostname: myhost\n").map(|g| g.0),
        Some(Action::Deny)
    );
    for script in [
        "redis-cli -h $HOSTNAME ping",
        "redis-cli -h $POD_NAME.redis-headless ping",
        "redis-cli -h \"${HOSTNAME}.redis-headless.shop.svc.cluster.local\" ping",
    ] {
        assert_eq!(sts(&["sh", "-c", script], ""), None, "{script}");
    }
    // The Pod the controller made (its admission review): its own name is known, its peers are not it.
    let made = |host: &str| {
        let mut obj = named_pod(
            "redis-1",
            "hostname: redis-1\nsubdomain: redis-headless\n",
            &exec_probe(&["redis-cli", "-h", host, "ping"]),
        );
        obj["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "redis", "uid": "u", "controller": true}]);
        liveness_of(&obj)
    };
    assert_eq!(made("redis-1.redis-headless.shop.svc.cluster.local"), None);
    assert_eq!(made("redis-1"), None);
    assert_eq!(made("redis-0.redis-headless.shop.svc.cluster.local").map(|g| g.0), Some(Action::Deny));
}

/// Other templates keep their `spec.hostname` (every replica has it, each mapped to its own IP in
/// its own /etc/hosts); the workload's own name is not the Pods' hostname.
#[test]
fn a_template_hostname_is_self_but_the_workload_name_is_not() {
    let deploy = |extra: &str, command: &[&str]| {
        let spec = common::yaml(&format!(
            "{extra}containers:\n- name: app\n  image: a\n  livenessProbe: {}\n",
            exec_probe(command)
        ));
        liveness_of(&deployment(&json!({"spec": spec})))
    };
    assert_eq!(deploy("hostname: myhost\n", &["pg_isready", "-h", "myhost"]), None);
    assert_eq!(
        deploy(
            "hostname: myhost\nsubdomain: sub\n",
            &["pg_isready", "-h", "myhost.sub.default.svc.cluster.local"]
        ),
        None
    );
    // Through DNS (not in /etc/hosts) the short forms may answer with another replica's address.
    assert_eq!(
        deploy("hostname: myhost\nsubdomain: sub\n", &["pg_isready", "-h", "myhost.sub.default.svc"])
            .map(|g| g.0),
        Some(Action::Deny)
    );
    assert_eq!(deploy("", &["pg_isready", "-h", "d"]).map(|g| g.0), Some(Action::Deny));
}

/// An httpGet or tcpSocket host is resolved by the kubelet on the node, not in the Pod: the
/// Pod's own hostname (an /etc/hosts entry in the Pod) names no dependency, but the node may not
/// resolve it. A warning that says so, never a denial; another name is still denied.
#[test]
fn a_network_probe_of_the_pods_own_hostname_is_a_warning_not_a_dependency() {
    for (extra, host) in [
        ("", "mypod"),
        ("hostname: myhost\n", "myhost"),
        ("hostname: myhost\nsubdomain: sub\n", "myhost.sub.shop.svc.cluster.local"),
    ] {
        for probe in [
            format!("{{httpGet: {{host: {host}, path: /healthz, port: 8080}}}}"),
            format!("{{tcpSocket: {{host: {host}, port: 8080}}}}"),
        ] {
            let got = liveness_of(&named_pod("mypod", extra, &probe));
            let (action, message) = got.clone().unwrap_or_else(|| panic!("{probe}: no finding"));
            assert_eq!(action, Action::Warn, "{probe}: {got:?}");
            assert!(message.contains("own hostname") && message.contains("node"), "{message}");
            assert!(message.contains("drop host"), "{message}");
            // Another Pod's name is another host: denied.
            let got = liveness_of(&named_pod("other", "", &probe.replace(host, "someone")));
            assert_eq!(got.map(|g| g.0), Some(Action::Deny), "{probe}");
        }
    }
}

// === xargs fed a literal the script gives (issue 10, a miss) ===

/// xargs runs its command with words from its standard input. When that input is a literal of the
/// script (echo, printf, a here-string, a here-document), the command lines are known and judged
/// as if written: xargs exits 123 when any of them fails with 1-125 (xargs(1), "EXIT STATUS"), so
/// a remote host's outage fails the probe. Checked in bash 5.2 and dash 0.5.12 with GNU xargs and
/// a stub pg_isready (2 for a remote host, 0 for localhost): each denied script exits 123.
#[test]
fn xargs_fed_a_literal_runs_the_command_lines_it_would_build() {
    let verdict = |script: &str| {
        let f = liveness_findings(&["bash", "-c", script], json!([]));
        f.first().map(|f| (f.action, f.message.clone()))
    };
    for script in [
        "echo db | xargs -I{} pg_isready -h {}",
        "xargs -n1 pg_isready -h <<< db",
        "xargs pg_isready -h <<EOF\ndb\nEOF",
        "printf 'localhost\\ndb\\n' | xargs -I{} pg_isready -h {}",
        "echo localhost db | xargs -n1 pg_isready -h",
        "echo db | xargs -rn1 timeout 3 pg_isready -h",
        "echo db | xargs -I HOST sh -c 'pg_isready -h HOST'",
    ] {
        let (action, message) = verdict(script).unwrap_or_else(|| panic!("{script}: no finding"));
        assert_eq!(action, Action::Deny, "{script}: {message}");
        assert!(message.contains("reaches db"), "{script}: {message}");
    }
    // Local hosts only, a command that never runs, or a status dropped: no denial.
    for script in [
        "echo localhost | xargs -I{} pg_isready -h {}",
        "printf '' | xargs -I{} pg_isready -h db",
        "echo localhost 127.0.0.1 | xargs -n1 pg_isready -h",
        "echo db | xargs -I{} pg_isready -h {} || true",
    ] {
        assert_ne!(verdict(script).map(|v| v.0), Some(Action::Deny), "{script}");
    }
    // An input not known here (a file, a command's output, quotes xargs interprets, -0): the
    // words are values known only at run time, never a denial.
    for script in [
        "cat /etc/dbhost | xargs -I{} pg_isready -h {}",
        "cat /etc/dbhost | xargs pg_isready -h",
        "discover-primary | xargs -n1 pg_isready -h",
        "echo \"'db'\" | xargs pg_isready -h",
        "echo db | xargs -0 pg_isready -h",
    ] {
        assert_ne!(verdict(script).map(|v| v.0), Some(Action::Deny), "{script}");
    }
}

// === self-checks whose answer rests on the cluster's quorum (issue 10, a miss) ===

/// A member that checks only itself, but answers "healthy" only while its peers form a quorum:
/// a lost quorum fails every replica's liveness at once and restarts them all. A warning that
/// says so (never a denial: the member itself may be fine); the ruling rows cite etcd's
/// ep_command.go, Redis' CLUSTER INFO, MariaDB's wsrep_cluster_status and ZooKeeper's zkServer.sh.
#[test]
fn quorum_dependent_self_checks_are_warnings_naming_the_quorum() {
    let verdict = |script: &str| {
        let f = liveness_findings(&["sh", "-c", script], json!([]));
        f.first().map(|f| (f.action, f.message.clone()))
    };
    for (script, rests_on) in [
        ("etcdctl endpoint health", "the etcd cluster's quorum"),
        ("ETCDCTL_API=3 etcdctl --endpoints=https://127.0.0.1:2379 endpoint health -w json", "etcd"),
        ("redis-cli cluster info | grep -q cluster_state:ok", "the Redis Cluster's masters"),
        ("redis-cli -p 6379 cluster info | grep cluster_state:ok", "Redis Cluster"),
        ("mysql -Nse \"SHOW STATUS LIKE 'wsrep_cluster_status'\" | grep -q Primary", "Primary Component"),
        ("zkServer.sh status", "the ZooKeeper ensemble's quorum"),
        ("/opt/zookeeper/bin/zkServer.sh status", "ZooKeeper"),
    ] {
        let (action, message) = verdict(script).unwrap_or_else(|| panic!("{script}: no finding"));
        assert_eq!(action, Action::Warn, "{script}: {message}");
        assert!(message.contains(rests_on) && message.contains("lost quorum"), "{script}: {message}");
        assert!(message.contains("readinessProbe"), "{script}: {message}");
    }
    // Checks of the member alone, or of other members (already a denial), are not this warning.
    for script in [
        "echo ruok | nc localhost 2181 | grep -q imok",
        "redis-cli ping",
        "redis-cli cluster info | grep -v cluster_state:ok",
        "etcdctl endpoint status",
        "zkServer.sh version",
    ] {
        assert_eq!(verdict(script), None, "{script}");
    }
    let (action, _) = verdict("etcdctl endpoint health --cluster").expect("every member");
    assert_eq!(action, Action::Deny);
    // A quorum check does not hide a real dependency after it.
    let (action, message) = verdict("etcdctl endpoint health && pg_isready -h db").unwrap();
    assert_eq!(action, Action::Deny, "{message}");
    assert!(message.contains("reaches db"), "{message}");
}

/// `sh -c 'curl -sf URL || exit 1'` means what `curl -sf URL` means: bash and dash exit 1 when
/// curl fails and 0 when it succeeds (`|| exit 2`, `|| false`, `|| exit`: the same), and a probe
/// fails on any non-zero status, so `exec-probe-replaceable` gives its hint there too (s14,
/// fresh-user pass: it did only without the fallback). A fallback that changes the status (`||
/// exit 0`, `|| true`, `|| exit 256`, which is 0) or a script that does (`!`, `&`) gets none: an
/// httpGet would not do what it does.
#[test]
fn a_fallback_that_keeps_the_status_keeps_the_exec_probe_replaceable_hint() {
    let spec = |script: &str| {
        format!(
            "containers:\n- name: web\n  image: a\n  readinessProbe: {{exec: {{command: [sh, -c, {}]}}}}\n",
            serde_json::to_string(script).unwrap()
        )
    };
    let url = "curl -sf http://localhost:8080/healthz";
    for tail in ["", " || exit 1", " || exit 2", " || false", " || exit", " || exit 1;", "  ||  exit 255 "] {
        let script = format!("{url}{tail}");
        let e = eval(&pod(&spec(&script)));
        let f = findings(&e, RuleId::ExecProbeReplaceable);
        assert_eq!(f.len(), 1, "{script}: {:?}", e.findings);
        assert!(f[0].message.contains("http://localhost:8080/healthz"), "{}", f[0].message);
    }
    for script in [
        format!("{url} || exit 0"),
        format!("{url} || true"),
        format!("{url} || exit 256"),
        format!("{url} || echo down"),
        format!("! {url}"),
        format!("! {url} || exit 1"),
        format!("{url} &"),
        format!("{url} | head -1 || exit 1"),
        format!("{url}; exit 1"),
        format!("{url} && {url} || exit 1"),
        format!("({url}) || exit 1; exit 0"),
    ] {
        let e = eval(&pod(&spec(&script)));
        assert!(findings(&e, RuleId::ExecProbeReplaceable).is_empty(), "{script}: {:?}", e.findings);
    }
}

/// The readiness and startup dependency warnings name what they reach by its host and port only:
/// no URL user info, path or query (a token may be in them), no cut inside a parenthesis and no
/// quotes around a host; a check whose status cannot fail the probe, or whose host is known only
/// at run time, is not said to empty the endpoints (s14, fresh-user pass).
#[test]
fn readiness_and_startup_dependency_messages_show_a_host_and_say_only_what_is_known() {
    let spec = |probe: &str, handler: &str| {
        format!(
            "containers:\n- name: web\n  image: a\n  ports: [{{containerPort: 8080}}]\n  {probe}: {handler}\n"
        )
    };
    let exec =
        |script: &str| format!("{{exec: {{command: [sh, -c, {}]}}}}", serde_json::to_string(script).unwrap());
    let cases = [
        (
            exec("curl -sf 'http://user:s3cret@api.example.com:8443/v1/health?token=abcdef&x=1'"),
            "api.example.com:8443 (via curl)",
        ),
        (
            exec(
                "pg_isready -d 'postgresql://app:pw@orders-database.production.svc.cluster.local:5432/db?sslmode=require'",
            ),
            "orders-database.production.svc.cluster.… (via pg_isready)",
        ),
        (
            "{httpGet: {path: /ready, port: 8080, host: 'user:pw@api.example.com'}}".to_string(),
            "reaches api.example.com",
        ),
        ("{tcpSocket: {port: 5432, host: db.shop.svc}}".to_string(), "reaches db.shop.svc"),
    ];
    for (probe, rule) in [
        ("readinessProbe", RuleId::ReadinessSharedDependency),
        ("startupProbe", RuleId::StartupRemoteDependency),
    ] {
        for (handler, shown) in &cases {
            let e = eval(&pod(&spec(probe, handler)));
            let f = findings(&e, rule);
            assert_eq!(f.len(), 1, "{handler}: {:?}", e.findings);
            let m = &f[0].message;
            assert!(m.contains(shown), "{shown}: {m}");
            for secret in
                ["user", "s3cret", "token", "abcdef", "app:", "pw", "sslmode", "/v1", "\"api", "\"db"]
            {
                assert!(!m.contains(secret), "{secret}: {m}");
            }
            assert_eq!(m.matches('(').count(), m.matches(')').count(), "{m}");
            assert_eq!(m.matches('`').count() % 2, 0, "{m}");
            assert!(!m.contains("::"), "{m}");
        }
    }
    let ready = |script: &str| {
        let e = eval(&pod(&spec("readinessProbe", &exec(script))));
        let f = findings(&e, RuleId::ReadinessSharedDependency);
        assert_eq!(f.len(), 1, "{script}: {:?}", e.findings);
        f[0].message.clone()
    };
    let m = ready("redis-cli -h cache.shop.svc ping || true");
    assert!(
        m.contains("its exit status cannot fail the probe, only a hang past timeoutSeconds 1 (default) can")
            && !m.contains("empties the endpoints"),
        "{m}"
    );
    let m = ready("redis-cli -h $TARGET_X ping");
    assert!(m.contains("known only at run time: if that is another workload, its outage empties"), "{m}");
    assert_eq!(m.matches('(').count(), m.matches(')').count(), "{m}");
    // With hostNetwork an IP literal may be this node, as liveness-dependency says.
    let e = eval(&pod(&format!(
        "hostNetwork: true\n{}",
        spec("readinessProbe", &exec("curl -f http://10.0.0.5:9100/"))
    )));
    let f = findings(&e, RuleId::ReadinessSharedDependency);
    assert!(f[0].message.contains("may be this node"), "{}", f[0].message);
    assert_eq!(f[0].coupling, Some(probegate::engine::Coupling::Uncertain));
}

// === s17 clients: what a liveness exec probe reaches ===

/// The liveness-dependency action for container `c` with env `env` (a YAML flow list) and the
/// exec probe `command` (a YAML flow list), if any.
fn exec_dependency(env: &str, command: &str) -> Option<Action> {
    let spec = format!(
        "containers:\n- name: app\n  image: shop/app\n  env: {env}\n  livenessProbe: {{exec: {{command: {command}}}}}\n"
    );
    let e = eval(&pod(&spec));
    findings(&e, RuleId::LivenessDependency).first().map(|f| f.action)
}

#[test]
fn an_empty_libpq_host_option_leaves_pghost_to_name_the_server() {
    // libpq treats an empty setting as unset (`PQconnectdbParams`): `-h ''` with PGHOST=db in the
    // environment connects to db (confirmed with pg_isready and psql 15, break-it pass p01/p02/p05).
    let pghost = "[{name: PGHOST, value: db}]";
    for command in [
        "[pg_isready, -h, '']",
        "[sh, -c, 'pg_isready -h \"\"']",
        "[sh, -c, 'exec pg_isready -h \"\"']",
        "[sh, -c, 'psql -h \"\" -c \"select 1\"']",
    ] {
        assert_eq!(exec_dependency(pghost, command), Some(Action::Deny), "{command}");
    }
    assert_eq!(exec_dependency("[]", "[sh, -c, 'PGHOST=db pg_isready -h \"\"']"), Some(Action::Deny));
    // Without PGHOST, or with PGHOST naming this Pod, it is the local socket / this Pod.
    assert_eq!(exec_dependency("[]", "[pg_isready, -h, '']"), None);
    assert_eq!(exec_dependency("[{name: PGHOST, value: 127.0.0.1}]", "[pg_isready, -h, '']"), None);
    // A probe's `$(DB_HOST)` of a valueFrom variable is emptied by the kubelet: PGHOST still applies.
    let both =
        "[{name: PGHOST, value: db}, {name: DB_HOST, valueFrom: {configMapKeyRef: {name: cm, key: h}}}]";
    assert_eq!(exec_dependency(both, "[pg_isready, -h, $(DB_HOST)]"), Some(Action::Deny));
    // The last `-h` wins: a named local host after an empty one stays local.
    assert_eq!(exec_dependency(pghost, "[pg_isready, -h, '', -h, 127.0.0.1]"), None);
}

#[test]
fn env_split_string_is_split_and_its_command_analysed() {
    // `env -S STRING`: env splits STRING into its arguments (coreutils, "env invocation", -S).
    // Break-it pass w46 w47 w57 w58 w77: none was analysed.
    for command in [
        "[env, -S, 'pg_isready -h db']",
        "[env, '--split-string=pg_isready -h db']",
        "[env, --split-string, 'pg_isready -h db']",
        "[/usr/bin/env, -S, \"sh -c 'pg_isready -h db'\"]",
        "[sh, -c, \"env -S'pg_isready -h db'\"]",
        "[sh, -c, \"exec env -S 'pg_isready -h db'\"]",
        "[env, -S, 'PGHOST=db pg_isready']",
        "[env, -S, 'pg_isready -h', db]",
    ] {
        assert_eq!(exec_dependency("[]", command), Some(Action::Deny), "{command}");
    }
    // A local target stays allowed; an unmatched quote is not guessed at.
    for command in [
        "[env, -S, 'pg_isready -h 127.0.0.1']",
        "[sh, -c, \"env -S 'pg_isready -h 127.0.0.1'\"]",
        "[env, -S, 'PGHOST=localhost pg_isready']",
        "[env, -S, \"pg_isready -h 'db\"]",
    ] {
        assert_eq!(exec_dependency("[]", command), None, "{command}");
    }
}

#[test]
fn a_program_found_by_command_v_or_which_is_that_program() {
    // `$(command -v X)`, `$(which X)`, backquotes, through a variable: the program is X.
    // Break-it pass f45 f46 g01 g02 g03: none was analysed.
    for script in [
        "$(command -v pg_isready) -h db",
        "$(which pg_isready) -h db",
        "`which pg_isready` -h db",
        "PG=$(command -v pg_isready); $PG -h db",
        "\\\"$(which redis-cli)\\\" -h redis-master ping",
    ] {
        let command = format!("[sh, -c, \"{script}\"]");
        assert_eq!(exec_dependency("[]", &command), Some(Action::Deny), "{command}");
    }
    for script in
        ["$(command -v pg_isready) -h 127.0.0.1", "$(which redis-cli) ping", "$(command -v true) db"]
    {
        let command = format!("[sh, -c, \"{script}\"]");
        assert_eq!(exec_dependency("[]", &command), None, "{command}");
    }
}

#[test]
fn wrappers_from_their_manual_pages_are_unwrapped() {
    // Break-it pass w15 w19 w23 w37 w44 w40 w79 p08 w73 p18: the wrapped check was not analysed.
    let wrapped = |host: &str| {
        [
            format!("[prlimit, --nofile=1024, pg_isready, -h, {host}]"),
            "[prlimit, -p, '1', --nofile=1024]".to_string(),
            format!("[strace, -f, -o, /dev/null, pg_isready, -h, {host}]"),
            format!("[unshare, -U, pg_isready, -h, {host}]"),
            format!("[unshare, --setuid, '70', pg_isready, -h, {host}]"),
            format!("[valgrind, -q, --error-exitcode=3, pg_isready, -h, {host}]"),
            format!("[fakeroot, --, pg_isready, -h, {host}]"),
            format!("[fakeroot, -s, /tmp/x, pg_isready, -h, {host}]"),
            format!("[sg, postgres, -c, 'pg_isready -h {host}']"),
            format!("[su, '--command=pg_isready -h {host}', postgres]"),
            format!("[su, '-cpg_isready -h {host}', postgres]"),
            format!("[su, -lc, 'pg_isready -h {host}', postgres]"),
            format!("[script, -qec, 'pg_isready -h {host}', /dev/null]"),
            format!("[script, -q, --return, --command, 'pg_isready -h {host}', /dev/null]"),
            format!("[setsid, -w, pg_isready, -h, {host}]"),
            format!("[sh, -c, 'setsid -w pg_isready -h {host}']"),
        ]
    };
    for (k, command) in wrapped("db").iter().enumerate() {
        // (`prlimit -p PID` changes another process's limits and runs nothing.)
        let want = if k == 1 { None } else { Some(Action::Deny) };
        assert_eq!(exec_dependency("[]", command), want, "{command}");
    }
    for command in wrapped("127.0.0.1") {
        assert_eq!(exec_dependency("[]", &command), None, "{command}");
    }
    // script(1) without `-e` exits 0 whatever its command does; `su -s SHELL` is no command.
    for command in ["[script, -qc, 'pg_isready -h db', /dev/null]", "[su, -s, /bin/sh, postgres]"] {
        assert_eq!(exec_dependency("[]", command), None, "{command}");
    }
}

#[test]
fn debian_netcat_names_wget2_ldapsearch_and_fping_are_clients() {
    // Break-it pass (I): these reached a dependency unseen.
    for script in [
        "nc.openbsd -z db 5432",
        "nc.traditional -z db 5432",
        "wget2 -q -O- http://db:8080/health",
        "ldapsearch -x -H ldap://ldap.shop.svc -b dc=shop",
        "fping -q db",
    ] {
        let command = format!("[sh, -c, '{script}']");
        assert_eq!(exec_dependency("[]", &command), Some(Action::Deny), "{command}");
    }
    for script in [
        "nc.openbsd -z 127.0.0.1 5432",
        "nc.traditional -l -p 5432",
        "wget2 -q -O- http://localhost:8080/health",
        "ldapsearch -x -H ldap://127.0.0.1 -b dc=shop",
        "ldapsearch -x -b dc=shop",
        "fping -c 1 localhost",
    ] {
        let command = format!("[sh, -c, '{script}']");
        assert_eq!(exec_dependency("[]", &command), None, "{command}");
    }
}

/// `liveness-dependency: off` (as a namespace override sets it) must not make `startup-probe` copy
/// a liveness check that reaches another workload into a new startupProbe (s23 fresh user: the
/// copy was then denied by `startup-remote-dependency: deny`, so probegate's own patch blocked the
/// Pod). A local check is still copied; no finding names the dependency.
#[test]
fn with_liveness_dependency_off_a_coupled_liveness_check_is_still_not_copied() {
    let policy = probegate::policy::parse(
        "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\nrules:\n  liveness-dependency: {action: off}\n  \
         startup-remote-dependency: {action: deny}\n",
        "p.yaml",
    )
    .unwrap();
    let spec = |cmd: &str| {
        format!(
            "containers:\n- name: app\n  image: a\n  livenessProbe: {{exec: {{command: {cmd}}}, initialDelaySeconds: 30}}\n"
        )
    };
    for cmd in ["[pg_isready, -h, pg.batch.svc]", "[sh, -c, \"redis-cli -h $PEER ping\"]"] {
        let e = eval_with(&policy, &pod(&spec(cmd)));
        assert!(findings(&e, RuleId::LivenessDependency).is_empty(), "{:?}", e.findings);
        let f = findings(&e, RuleId::StartupProbe);
        assert_eq!(f.len(), 1, "{cmd}: {:?}", e.findings);
        assert_eq!(f[0].action, Action::Warn, "{cmd}: {:?}", f[0]);
        assert!(f[0].patch.is_empty(), "{cmd}: {:?}", f[0].patch);
        assert!(f[0].message.contains("liveness-dependency is off here"), "{}", f[0].message);
        assert!(e.with_action(Action::Deny).next().is_none(), "{cmd}: {:?}", e.findings);
    }
    let e = eval_with(&policy, &pod(&spec("[pg_isready, -h, 127.0.0.1]")));
    let f = findings(&e, RuleId::StartupProbe);
    assert_eq!((f.len(), f[0].action), (1, Action::Mutate), "{:?}", e.findings);
    assert!(!f[0].patch.is_empty());
}
