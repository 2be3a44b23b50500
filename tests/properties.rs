//! Properties over generated pods: every patch applies strictly to the object it was computed
//! from, leaves unknown fields alone, parses back as a Pod, and a second call patches nothing;
//! audit mode never denies or patches.

mod common;

use probegate::admission::{self, Endpoint};
use probegate::policy::{Mode, Policy};
use proptest::prelude::*;
use serde_json::{Value, json};

fn probe() -> impl Strategy<Value = Option<Value>> {
    let handler = prop_oneof![
        (prop::sample::select(vec!["/", "/healthz", "/livez", "/a~b/c"]), 1..65535i32)
            .prop_map(|(p, port)| json!({"httpGet": {"path": p, "port": port}})),
        Just(json!({"httpGet": {"path": "/", "port": "http"}})),
        (1..65535i32).prop_map(|port| json!({"tcpSocket": {"port": port}})),
        (1..65535i32).prop_map(|port| json!({"grpc": {"port": port}})),
        Just(json!({"exec": {"command": ["cat", "/tmp/healthy"]}})),
        Just(json!({"exec": {"command": ["sh", "-c", "redis-cli ping"]}})),
    ];
    prop::option::of(
        (handler, prop::option::of(1..12i32), prop::option::of(0..400i32), prop::option::of(1..20i32))
            .prop_map(|(mut h, timeout, delay, period)| {
                if let Some(t) = timeout {
                    h["timeoutSeconds"] = json!(t);
                }
                if let Some(d) = delay {
                    h["initialDelaySeconds"] = json!(d);
                }
                if let Some(p) = period {
                    h["periodSeconds"] = json!(p);
                }
                h["futureProbeField"] = json!("kept");
                h
            }),
    )
}

fn container(name: String, sidecar: bool) -> impl Strategy<Value = Value> {
    (
        probe(),
        probe(),
        probe(),
        any::<bool>(),
        prop::option::of(prop_oneof![
            Just(json!({})),
            Just(json!({"postStart": {"exec": {"command": ["true"]}}})),
            Just(json!({"preStop": {"sleep": {"seconds": 3}}})),
        ]),
    )
        .prop_map(move |(l, r, s, ports, lifecycle)| {
            let mut c = json!({"name": name, "image": "img:1", "futureField": {"x": 1}});
            if sidecar {
                c["restartPolicy"] = json!("Always");
            }
            if ports {
                c["ports"] = json!([{"name": "http", "containerPort": 8080}]);
            }
            for (k, v) in [("livenessProbe", l), ("readinessProbe", r), ("startupProbe", s)] {
                if let Some(v) = v {
                    c[k] = v;
                }
            }
            if let Some(lc) = lifecycle {
                c["lifecycle"] = lc;
            }
            c
        })
}

fn pod() -> impl Strategy<Value = Value> {
    (
        prop::collection::vec(any::<bool>(), 1..4),
        prop::collection::vec(any::<bool>(), 0..3),
        prop::option::of(0..60i64),
        prop::option::of(prop::sample::select(vec!["Always", "OnFailure", "Never"])),
        any::<bool>(),
    )
        .prop_flat_map(|(apps, inits, grace, restart, annotated)| {
            let apps: Vec<_> =
                apps.iter().enumerate().map(|(i, _)| container(format!("app{i}"), false).boxed()).collect();
            let inits: Vec<_> = inits
                .iter()
                .enumerate()
                .map(|(i, side)| container(format!("init{i}"), *side).boxed())
                .collect();
            (apps, inits, Just(grace), Just(restart), Just(annotated))
        })
        .prop_map(|(apps, inits, grace, restart, annotated)| {
            let mut spec = json!({"containers": apps, "futureSpecField": true});
            let inits: Vec<Value> = inits
                .into_iter()
                .map(|mut c| {
                    // Probes and lifecycle are only valid on native sidecars.
                    if c.get("restartPolicy").is_none() {
                        let o = c.as_object_mut().unwrap();
                        for k in ["livenessProbe", "readinessProbe", "startupProbe", "lifecycle"] {
                            o.remove(k);
                        }
                    }
                    c
                })
                .collect();
            if !inits.is_empty() {
                spec["initContainers"] = json!(inits);
            }
            if let Some(g) = grace {
                spec["terminationGracePeriodSeconds"] = json!(g);
            }
            if let Some(r) = restart {
                spec["restartPolicy"] = json!(r);
            }
            let mut metadata = json!({"generateName": "p-", "namespace": "ns"});
            if annotated {
                metadata["annotations"] = json!({"example.com/a~b": "c"});
            }
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec})
        })
}

fn respond(policy: &Policy, endpoint: Endpoint, object: &Value) -> admission::AdmissionResponse {
    let body = serde_json::to_vec(&common::review("CREATE", object, None, "p")).unwrap();
    let request = admission::parse_review(&body).unwrap();
    admission::review(policy, None, endpoint, &request).unwrap().review.response
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn patches_apply_keep_unknown_fields_and_are_idempotent(pod in pod()) {
        let policy = Policy::default();
        let r = respond(&policy, Endpoint::Mutate, &pod);
        prop_assert!(r.allowed);
        if let Some(b64) = r.patch {
            let after = common::apply(&pod, &common::decode_patch(&b64));
            common::parse_pod(&after);
            prop_assert_eq!(&after["metadata"], &pod["metadata"]);
            prop_assert_eq!(&after["spec"]["futureSpecField"], &json!(true));
            for (i, c) in pod["spec"]["containers"].as_array().unwrap().iter().enumerate() {
                prop_assert_eq!(&after["spec"]["containers"][i]["futureField"], &c["futureField"]);
                prop_assert_eq!(&after["spec"]["containers"][i]["name"], &c["name"]);
                if let Some(p) = c.get("livenessProbe") {
                    prop_assert_eq!(&after["spec"]["containers"][i]["livenessProbe"]["futureProbeField"], &p["futureProbeField"]);
                }
            }
            let again = respond(&policy, Endpoint::Mutate, &after);
            prop_assert!(again.patch.is_none(), "second call patched: {:?}", again.patch.map(|p| common::decode_patch(&p)));
        }
        prop_assert!(respond(&policy, Endpoint::Validate, &pod).patch.is_none());
    }

    #[test]
    fn audit_mode_never_denies_or_patches(pod in pod()) {
        let policy = Policy { mode: Mode::Audit, ..Policy::default() };
        for endpoint in [Endpoint::Validate, Endpoint::Mutate] {
            let r = respond(&policy, endpoint, &pod);
            prop_assert!(r.allowed && r.patch.is_none());
        }
    }
}

/// Shell-like text: the characters the exec analysis treats specially, words it knows, and others.
fn shell_text() -> impl Strategy<Value = String> {
    let atom = prop_oneof![
        Just("$(".to_string()),
        Just("${".to_string()),
        Just(")".to_string()),
        Just("}".to_string()),
        Just("`".to_string()),
        Just("\\".to_string()),
        Just("'".to_string()),
        Just("\"".to_string()),
        Just(";".to_string()),
        Just("|".to_string()),
        Just(" ".to_string()),
        Just("\n".to_string()),
        Just("$1".to_string()),
        Just("$A".to_string()),
        Just("$(A)".to_string()),
        Just("sh -c ".to_string()),
        Just("pg_isready -h ".to_string()),
        Just("curl http://".to_string()),
        Just("localhost".to_string()),
        Just("db".to_string()),
        Just("<<EOF".to_string()),
        "[a-z=:/.-]{0,4}",
    ];
    proptest::collection::vec(atom, 0..24).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, .. ProptestConfig::default() })]

    /// The exec analysis never panics, on a script or through a kubelet `$(A)` reference (a
    /// panic is a 500, and under `failurePolicy: Ignore` an unchecked admission).
    #[test]
    fn exec_analysis_never_panics(script in shell_text(), value in shell_text()) {
        use probegate::engine::exec::{EnvValue, ExecEnv, find_dependency};
        let env = ExecEnv {
            vars: [("A".to_string(), EnvValue::Literal(value))].into_iter().collect(),
            has_env_from: false,
            ..Default::default()
        };
        let _ = find_dependency(&["sh".to_string(), "-c".to_string(), script.clone()], &env);
        let _ = find_dependency(&["bash".to_string(), "-c".to_string(), script.clone(), "x".into(), "db".into()], &env);
        let _ = probegate::engine::exec::split_commands(&script);
    }
}
