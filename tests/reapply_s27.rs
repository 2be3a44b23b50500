//! Re-applying an unchanged manifest after probegate patched it (s27; srv26's shape; docs/reapply.md).
//!
//! `kubectl apply` of the unchanged manifest sends the manifest's probe values back in an UPDATE:
//! client-side apply over the stored Pod (the fields the manifest never had, probegate's added
//! startup probe and preStop hook, are kept), server-side apply as the manifest (probegate's
//! additions dropped). A Pod's probes and hooks are immutable, so the API server refuses that
//! UPDATE unless probegate's mutating webhook patches them back to the stored values.
//!
//! srv26 found one shape without that patch: container a's liveness `initialDelaySeconds: 45` moved
//! into a startup probe probegate added, container b with a startup probe of its own. Client-side,
//! probegate took every startup probe of the old Pod for its own, dropped b's too, and then its
//! patch of the candidate added a different one to b: nothing was restored. Here the whole family:
//! one to three containers, the moved delay in each position, the other containers with or without
//! their own startup probe, init containers and native sidecars (`restartPolicy: Always`), timeouts
//! raised, preStop hooks added; each UPDATE's patch is applied to the object, the result parsed back
//! as a Pod, and its probes and hooks compared with the stored Pod's (what the API server requires).
//! Changes of the user's own (a probe path, the user's own startup probe) are never patched back.
//! Against the real API server: tests/e2e/reapply.rs.

mod common;

use probegate::admission::{self, Endpoint};
use probegate::policy::Policy;
use serde_json::{Map, Value, json};

/// How a container of the family is written in the manifest.
#[derive(Clone, Copy, Debug)]
struct Shape {
    /// Liveness `initialDelaySeconds: 45` (moved into the startup probe probegate adds), else none.
    delay: bool,
    /// A startup probe of the user's own (probegate adds none; its delay stays).
    own_startup: bool,
    /// Declares a port, so probegate adds a preStop sleep (`prestop-sleep`).
    ports: bool,
}

/// A container of `shape` named `name`, serving HTTP on `port`: liveness `timeoutSeconds: 1`
/// (raised by `probe-timeout`), readiness on another path.
fn container(name: &str, port: u16, shape: Shape) -> Value {
    let mut liveness = json!({"httpGet": {"path": "/healthz", "port": port}, "timeoutSeconds": 1});
    if shape.delay {
        liveness["initialDelaySeconds"] = json!(45);
    }
    let mut c = json!({"name": name, "image": format!("registry.example/{name}:1"),
        "livenessProbe": liveness,
        "readinessProbe": {"httpGet": {"path": "/ready", "port": port}}});
    if shape.own_startup {
        c["startupProbe"] = json!({"httpGet": {"path": "/started", "port": port}, "failureThreshold": 30, "periodSeconds": 5});
    }
    if shape.ports {
        c["ports"] = json!([{"containerPort": port}]);
    }
    c
}

/// A Pod with `containers` and `init` (init containers, native sidecars among them).
fn pod(containers: Vec<Value>, init: Vec<Value>) -> Value {
    let mut spec = json!({"containers": containers});
    if !init.is_empty() {
        spec["initContainers"] = Value::Array(init);
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "shop"}, "spec": spec})
}

/// `v` as the API server stores it: probes defaulted (timeoutSeconds 1, periodSeconds 10,
/// successThreshold 1, failureThreshold 3, httpGet scheme HTTP: Kubernetes API reference, Probe) and
/// zero numbers dropped (Go's `omitempty`).
fn stored(v: &Value) -> Value {
    let mut v = v.clone();
    for list in ["containers", "initContainers"] {
        for c in v["spec"][list].as_array_mut().into_iter().flatten() {
            for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
                let Some(p) = c.get_mut(probe).and_then(Value::as_object_mut) else { continue };
                for (k, d) in [
                    ("timeoutSeconds", 1),
                    ("periodSeconds", 10),
                    ("successThreshold", 1),
                    ("failureThreshold", 3),
                ] {
                    p.entry(k).or_insert(json!(d));
                }
                if let Some(h) = p.get_mut("httpGet").and_then(Value::as_object_mut) {
                    h.entry("scheme").or_insert(json!("HTTP"));
                }
            }
        }
    }
    omit_zero(&v)
}

fn omit_zero(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, v)| !v.is_null() && v.as_f64() != Some(0.0))
                .map(|(k, v)| (k.clone(), omit_zero(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(omit_zero).collect()),
        other => other.clone(),
    }
}

/// `over` merged into `base` map by map (what a strategic merge patch does to a probe).
fn merge(base: &Value, over: &Value) -> Value {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            let mut out: Map<String, Value> = b.clone();
            for (k, v) in o {
                let merged = out.get(k).map_or_else(|| v.clone(), |b| merge(b, v));
                out.insert(k.clone(), merged);
            }
            Value::Object(out)
        }
        (_, o) => o.clone(),
    }
}

/// Client-side apply of the unchanged `manifest` over the `stored` Pod: every probe the manifest
/// sets is merged back over the stored one; what the manifest never had is kept. A label is added,
/// the change the user meant.
fn client_side(manifest: &Value, stored_pod: &Value) -> Value {
    let mut new = stored_pod.clone();
    for list in ["containers", "initContainers"] {
        for (i, m) in manifest["spec"][list].as_array().into_iter().flatten().enumerate() {
            for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
                if m.get(probe).is_some() {
                    new["spec"][list][i][probe] = merge(&new["spec"][list][i][probe], &m[probe]);
                }
            }
        }
    }
    new["metadata"]["labels"] = json!({"team": "b"});
    stored(&new)
}

/// Server-side apply of the unchanged `manifest`: its values, probegate's additions dropped.
fn server_side(manifest: &Value) -> Value {
    let mut new = manifest.clone();
    new["metadata"]["labels"] = json!({"team": "b"});
    stored(&new)
}

fn mutate(
    policy: &Policy,
    operation: &str,
    object: &Value,
    old: Option<&Value>,
) -> admission::AdmissionResponse {
    let mut body = common::review(operation, object, old, "s27");
    body["request"]["userInfo"] = json!({"username": "alice", "groups": ["system:authenticated"]});
    let request = admission::parse_review(&serde_json::to_vec(&body).unwrap()).unwrap();
    admission::review(policy, None, Endpoint::Mutate, &request).unwrap().review.response
}

/// The object after the UPDATE's patch (if any), parsed back as a Pod, in stored form.
fn after_update(object: &Value, old: &Value) -> (Value, bool) {
    let r = mutate(&Policy::default(), "UPDATE", object, Some(old));
    let patched = match r.patch.as_deref() {
        Some(p) => common::apply(object, &common::decode_patch(p)),
        None => object.clone(),
    };
    let pod = common::parse_pod(&patched);
    (stored(&serde_json::to_value(pod).unwrap()), r.patch.is_some())
}

/// The probes and hooks of every container, as the API server compares them for a Pod UPDATE:
/// (container, field, value).
fn immutable(pod: &Value) -> Vec<(String, &'static str, Value)> {
    let mut out = Vec::new();
    for list in ["containers", "initContainers"] {
        for c in pod["spec"][list].as_array().into_iter().flatten() {
            for field in ["livenessProbe", "readinessProbe", "startupProbe", "lifecycle"] {
                out.push((c["name"].as_str().unwrap_or_default().to_string(), field, c[field].clone()));
            }
        }
    }
    out
}

/// Where `got`'s probes and hooks differ from `want`'s, one line each (empty: none).
fn differences(got: &Value, want: &Value) -> String {
    let (got, want) = (immutable(got), immutable(want));
    if got.len() != want.len() {
        return format!("\n  {} fields, want {}", got.len(), want.len());
    }
    got.iter()
        .zip(&want)
        .filter(|(g, w)| g != w)
        .map(|(g, w)| format!("\n  {}.{}: got {} want {}", g.0, g.1, g.2, w.2))
        .collect()
}

/// CREATE `manifest`, then re-apply it client-side and server-side: each UPDATE must end with the
/// stored Pod's probes and hooks (the API server accepts it), the label kept. A changed probe path
/// in any container, or a changed own startup probe, is not patched back (the API server refuses
/// the update, as without probegate). Returns what went wrong, for the family's report.
fn check_reapply(label: &str, manifest: &Value) -> Vec<String> {
    let mut wrong = Vec::new();
    let created = mutate(&Policy::default(), "CREATE", manifest, None);
    let Some(patch) = created.patch.as_deref() else {
        return vec![format!("{label}: CREATE got no patch")];
    };
    let stored_pod = stored(&common::apply(manifest, &common::decode_patch(patch)));
    for (how, object) in
        [("client-side", client_side(manifest, &stored_pod)), ("server-side", server_side(manifest))]
    {
        let (result, patched) = after_update(&object, &stored_pod);
        let diff = differences(&result, &stored_pod);
        if !diff.is_empty() {
            wrong.push(format!("{label} {how}: probes and hooks not restored (patched: {patched}):{diff}"));
        }
        if result["metadata"]["labels"] != json!({"team": "b"}) {
            wrong.push(format!("{label} {how}: the label was lost"));
        }
        // A real change of a probe in any one container is left alone.
        for list in ["containers", "initContainers"] {
            for (i, c) in manifest["spec"][list].as_array().into_iter().flatten().enumerate() {
                let mut changed = object.clone();
                changed["spec"][list][i]["readinessProbe"]["httpGet"]["path"] = json!("/other");
                if after_update(&changed, &stored_pod).1 {
                    wrong.push(format!("{label} {how}: a changed readiness path in {list}[{i}] was patched"));
                }
                if c.get("startupProbe").is_some() {
                    let mut changed = object.clone();
                    changed["spec"][list][i]["startupProbe"]["failureThreshold"] = json!(60);
                    if after_update(&changed, &stored_pod).1 {
                        wrong.push(format!(
                            "{label} {how}: a changed own startup probe in {list}[{i}] was patched"
                        ));
                    }
                }
            }
        }
    }
    // Nothing sent back (a label change of the stored Pod): no patch.
    let mut relabelled = stored_pod.clone();
    relabelled["metadata"]["labels"] = json!({"team": "b"});
    if after_update(&relabelled, &stored_pod).1 {
        wrong.push(format!("{label}: a label change was patched"));
    }
    wrong
}

/// One to three app containers, the moved delay in each position, every other container with or
/// without its own startup probe, with and without ports (preStop added).
#[test]
fn re_applying_a_pod_restores_probegates_changes_in_every_container_layout() {
    let mut wrong = Vec::new();
    let mut shapes = 0;
    for n in 1..=3usize {
        for moved in 0..n {
            for own in 0..(1u32 << n) {
                if own & (1 << moved) != 0 {
                    continue; // the moved delay's container gets probegate's startup probe
                }
                for ports in [true, false] {
                    let containers: Vec<Value> = (0..n)
                        .map(|i| {
                            let shape = Shape {
                                delay: i == moved,
                                own_startup: own & (1 << i) != 0,
                                ports: ports || i != moved,
                            };
                            container(&format!("c{i}"), 8080 + i as u16, shape)
                        })
                        .collect();
                    let label = format!(
                        "{n} containers, delay moved in c{moved}, own startup mask {own:b}, ports {ports}"
                    );
                    wrong.extend(check_reapply(&label, &pod(containers, vec![])));
                    shapes += 1;
                }
            }
        }
    }
    assert_eq!(shapes, 2 * (1 + (2 + 2) + (4 + 4 + 4)));
    assert!(wrong.is_empty(), "{} of {shapes} layouts:\n{}", wrong.len(), wrong.join("\n"));
}

/// The same with init containers: a plain one (no probes allowed), and native sidecars
/// (`restartPolicy: Always`) with the moved delay or with their own startup probe, beside app
/// containers with either.
#[test]
fn re_applying_a_pod_with_init_containers_and_native_sidecars_restores_probegates_changes() {
    let init = || json!({"name": "migrate", "image": "registry.example/migrate:1", "command": ["migrate"]});
    let sidecar = |shape: Shape| {
        let mut c = container("proxy", 9901, shape);
        c["restartPolicy"] = json!("Always");
        c
    };
    let moved = Shape { delay: true, own_startup: false, ports: true };
    let own = Shape { delay: false, own_startup: true, ports: true };
    let plain = Shape { delay: false, own_startup: false, ports: false };
    let app = |shape| container("app", 8080, shape);
    let cases = [
        ("plain init, app moved", vec![init()], vec![app(moved)]),
        ("plain init, app own + app moved", vec![init()], vec![app(own), container("b", 8081, moved)]),
        ("sidecar own, app moved (srv26's shape across the lists)", vec![sidecar(own)], vec![app(moved)]),
        ("sidecar moved, app own", vec![sidecar(moved)], vec![app(own)]),
        (
            "init + sidecar moved, app own + app plain",
            vec![init(), sidecar(moved)],
            vec![app(own), container("b", 8081, plain)],
        ),
        ("sidecar own, app moved + app own", vec![sidecar(own)], vec![app(moved), container("b", 8081, own)]),
        ("sidecar plain, app moved", vec![sidecar(plain)], vec![app(moved)]),
    ];
    let mut wrong = Vec::new();
    for (label, init, containers) in cases {
        wrong.extend(check_reapply(label, &pod(containers, init)));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A Deployment's template is mutable: with `templates.mutate` probegate patches it on UPDATE as on
/// CREATE, and docs/reapply.md promises that a re-apply of the unchanged manifest ends in the same
/// template as stored (no new generation, no rollout). The same layouts as a Pod's, client-side
/// (manifest over the stored template, probegate's additions kept) and server-side.
#[test]
fn re_applying_a_deployment_leaves_its_patched_template_as_stored() {
    let policy = probegate::policy::parse(
        "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\ntemplates:\n  mutate: true\n",
        "test",
    )
    .unwrap();
    let moved = Shape { delay: true, own_startup: false, ports: true };
    let own = Shape { delay: false, own_startup: true, ports: true };
    let plain = Shape { delay: false, own_startup: false, ports: true };
    let layouts = [
        ("one container, delay moved", vec![container("a", 8080, moved)]),
        ("one container, timeout raised", vec![container("a", 8080, plain)]),
        ("a moved, b own (srv26)", vec![container("a", 8080, moved), container("b", 8081, own)]),
        ("a own, b moved", vec![container("a", 8080, own), container("b", 8081, moved)]),
        (
            "a plain, b moved, c own",
            vec![container("a", 8080, plain), container("b", 8081, moved), container("c", 8082, own)],
        ),
    ];
    let template_of = |pod: &Value| json!({"metadata": {"labels": {"app": "web"}}, "spec": pod["spec"]});
    let deployment = |template: Value| {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template}})
    };
    // The template's pod spec as a Pod, for `stored`, `client_side` and `immutable`.
    let as_pod = |d: &Value| json!({"apiVersion": "v1", "kind": "Pod", "metadata": {}, "spec": d["spec"]["template"]["spec"]});
    let mut wrong = Vec::new();
    for (label, containers) in layouts {
        let manifest_pod = pod(containers, vec![]);
        let manifest = deployment(template_of(&manifest_pod));
        let created = mutate(&policy, "CREATE", &manifest, None);
        let created = common::apply(&manifest, &common::decode_patch(created.patch.as_deref().unwrap()));
        let stored_pod = stored(&as_pod(&created));
        let stored_deployment = deployment(template_of(&stored_pod));
        for (how, new_pod) in [
            ("client-side", client_side(&manifest_pod, &stored_pod)),
            ("server-side", server_side(&manifest_pod)),
        ] {
            let object = deployment(template_of(&new_pod));
            let r = mutate(&policy, "UPDATE", &object, Some(&stored_deployment));
            let result = match r.patch.as_deref() {
                Some(p) => common::apply(&object, &common::decode_patch(p)),
                None => object.clone(),
            };
            let result: k8s_openapi::api::apps::v1::Deployment = serde_json::from_value(result).unwrap();
            let result = stored(&as_pod(&serde_json::to_value(result).unwrap()));
            let diff = differences(&result, &stored_pod);
            if !diff.is_empty() {
                wrong.push(format!("{label} {how}: the template changed (a rollout):{diff}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
