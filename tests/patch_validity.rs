//! Every patch yields a Pod the API server accepts, with any policy the schema accepts and objects
//! at the int32 edges; and messages never show wrapped arithmetic.
//!
//! The oracle below is written from the API server's validation, independently of the engine:
//! - `validateProbe` (kubernetes/kubernetes pkg/apis/core/validation/validation.go):
//!   `initialDelaySeconds`, `timeoutSeconds`, `periodSeconds`, `successThreshold` and
//!   `failureThreshold` must be non-negative (`ValidateNonnegativeField`); every one of them is an
//!   `int32` in the API types (k8s.io/api core/v1 `Probe`), so a value above 2^31-1 does not even
//!   decode; exactly one handler (`validateHandler`: "may not specify more than 1 handler type",
//!   and one is required); an `httpGet` needs a non-empty `path`, a port 1-65535 or a port name,
//!   and scheme `HTTP` or `HTTPS` (`validateHTTPGetAction`); a probe-level
//!   `terminationGracePeriodSeconds` must be positive;
//! - `validateLivenessProbe` / `validateStartupProbe`: `successThreshold` must be 1;
//! - `validateSleepAction` (KEP-4818's validation diff): `0 < sleep.seconds <=
//!   terminationGracePeriodSeconds`, the grace period being defaulted to 30 (`SetDefaults_PodSpec`)
//!   before validation;
//! - probegate's own rule (rules.md §2.4): a `timeoutSeconds` the patch sets is never above that
//!   probe's `periodSeconds` (defaulted to 10), and never lower than it was;
//! - `probe-client-deadline: mutate`: an exec probe's client deadline (`grpc_health_probe
//!   -rpc-timeout=Ns`, `curl -m N`) that fits the probe's period ends up within its timeout;
//! - a patch touches each path once (`probegate fix` edits the text once per member).

mod common;

use probegate::admission::{self, Endpoint};
use probegate::policy::{self, Policy};
use proptest::prelude::*;
use serde_json::{Value, json};

const I32_MAX: i64 = i32::MAX as i64;

/// An int32 probe field at the edges, or anywhere in range.
fn int32_field() -> impl Strategy<Value = Option<i64>> {
    prop::option::of(prop_oneof![
        prop::sample::select(vec![0, 1, 2, 3, 4, 9, 10, 29, 30, 31, 3599, 3600, 3601, I32_MAX - 1, I32_MAX]),
        0..=I32_MAX,
    ])
}

/// A policy duration (1 to 3600 s, what the schema accepts) at the edges, or anywhere in range.
fn seconds() -> impl Strategy<Value = u32> {
    prop_oneof![prop::sample::select(vec![1u32, 2, 3, 5, 29, 30, 31, 60, 3599, 3600]), 1..=3600u32]
}

fn policy_yaml() -> impl Strategy<Value = String> {
    (
        (seconds(), seconds(), prop::sample::select(vec!["mutate", "warn"])),
        (seconds(), seconds(), seconds(), prop::sample::select(vec!["mutate", "warn", "off"])),
        (seconds(), prop::sample::select(vec!["native", "exec"]), prop::sample::select(vec!["mutate", "warn"])),
        prop::sample::select(vec!["mutate", "off"]),
        prop::sample::select(vec!["mutate", "warn", "off"]),
    )
        .prop_map(|((lmin, rmin, ta), (period, budget, delay, sa), (sleep, style, pa), timeout_action, da)| {
            let timeout_action = if timeout_action == "off" { "off" } else { ta };
            // A budget under one period is a policy error (docs/policy.md): at least one period.
            let budget = budget.max(period);
            format!(
                "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\nrules:\n  \
                 probe-timeout: {{action: {timeout_action}, livenessMinSeconds: {lmin}, readinessMinSeconds: {rmin}}}\n  \
                 startup-probe: {{action: {sa}, periodSeconds: {period}, budgetSeconds: {budget}, maxInitialDelaySeconds: {delay}}}\n  \
                 prestop-sleep: {{action: {pa}, seconds: {sleep}, style: {style}}}\n  \
                 probe-client-deadline: {{action: {da}}}\n"
            )
        })
}

/// A client deadline in seconds, at the edges (an hour, past int32) or anywhere small.
fn deadline() -> impl Strategy<Value = u64> {
    prop_oneof![
        prop::sample::select(vec![1u64, 2, 3, 5, 9, 10, 11, 30, 3600, 3601, 1 << 31, 1 << 40]),
        1..=120u64
    ]
}

fn probe(liveness_or_startup: bool) -> impl Strategy<Value = Option<Value>> {
    let handler = prop_oneof![
        (1..65536i64).prop_map(|port| json!({"httpGet": {"path": "/healthz", "port": port}})),
        Just(json!({"httpGet": {"path": "/", "port": "http", "scheme": "HTTPS"}})),
        (1..65536i64).prop_map(|port| json!({"tcpSocket": {"port": port}})),
        (1..65536i64).prop_map(|port| json!({"grpc": {"port": port}})),
        Just(json!({"exec": {"command": ["cat", "/tmp/healthy"]}})),
        deadline().prop_map(|n| json!({"exec": {"command": ["grpc_health_probe", "-addr=:50051", format!("-rpc-timeout={n}s")]}})),
        deadline().prop_map(|n| json!({"exec": {"command": ["curl", "-m", n.to_string(), "http://localhost:8080/"]}})),
    ];
    prop::option::of((handler, int32_field(), int32_field(), int32_field(), int32_field(), 1..4i64).prop_map(
        move |(mut h, delay, timeout, period, failure, success)| {
            for (k, v) in [
                ("initialDelaySeconds", delay),
                ("timeoutSeconds", timeout),
                ("periodSeconds", period),
                ("failureThreshold", failure),
            ] {
                if let Some(v) = v {
                    h[k] = json!(v);
                }
            }
            h["successThreshold"] = json!(if liveness_or_startup { 1 } else { success });
            h
        },
    ))
}

fn container(name: String, sidecar: bool) -> impl Strategy<Value = Value> {
    (probe(true), probe(false), probe(true), any::<bool>(), prop::option::of(1..=30i64), any::<bool>())
        .prop_map(move |(l, r, s, ports, existing_sleep, lifecycle)| {
            let mut c = json!({"name": name, "image": "img:1"});
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
            match (existing_sleep, lifecycle) {
                // Kept valid below against the pod's grace period.
                (Some(n), true) => c["lifecycle"] = json!({"preStop": {"sleep": {"seconds": n}}}),
                (None, true) => c["lifecycle"] = json!({"postStart": {"exec": {"command": ["true"]}}}),
                _ => {}
            }
            c
        })
}

fn pod() -> impl Strategy<Value = Value> {
    (
        prop::collection::vec(any::<bool>(), 1..3),
        prop::collection::vec(any::<bool>(), 0..2),
        prop::option::of(prop_oneof![
            prop::sample::select(vec![0i64, 1, 2, 5, 6, 29, 30, 31, 3600, 3601, I32_MAX, i64::MAX]),
            0..=i64::MAX,
        ]),
    )
        .prop_flat_map(|(apps, inits, grace)| {
            let apps: Vec<_> = (0..apps.len()).map(|i| container(format!("app{i}"), false).boxed()).collect();
            let inits: Vec<_> =
                inits.iter().enumerate().map(|(i, side)| container(format!("init{i}"), *side).boxed()).collect();
            (apps, inits, Just(grace))
        })
        .prop_map(|(apps, inits, grace)| {
            let effective_grace = grace.unwrap_or(30);
            let fix = |mut c: Value| {
                // An existing sleep must itself be valid: at most the grace period.
                if let Some(n) = c.pointer("/lifecycle/preStop/sleep/seconds").and_then(Value::as_i64)
                    && (effective_grace < 1 || n > effective_grace)
                {
                    c.as_object_mut().unwrap().remove("lifecycle");
                }
                c
            };
            let mut spec = json!({"containers": apps.into_iter().map(fix).collect::<Vec<_>>()});
            let inits: Vec<Value> = inits
                .into_iter()
                .map(|mut c| {
                    if c.get("restartPolicy").is_none() {
                        let o = c.as_object_mut().unwrap();
                        for k in ["livenessProbe", "readinessProbe", "startupProbe", "lifecycle"] {
                            o.remove(k);
                        }
                    }
                    fix(c)
                })
                .collect();
            if !inits.is_empty() {
                spec["initContainers"] = json!(inits);
            }
            if let Some(g) = grace {
                spec["terminationGracePeriodSeconds"] = json!(g);
            }
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}, "spec": spec})
        })
}

// === The oracle ===

fn int32_nonnegative(v: &Value, what: &str, errs: &mut Vec<String>) {
    match v.as_i64() {
        Some(n) if (0..=I32_MAX).contains(&n) => {}
        _ => errs.push(format!("{what} = {v}: not an int32 >= 0")),
    }
}

fn validate_probe(p: &Value, what: &str, kill: bool, errs: &mut Vec<String>) {
    let handlers = ["exec", "httpGet", "tcpSocket", "grpc"].iter().filter(|h| p.get(**h).is_some()).count();
    if handlers != 1 {
        errs.push(format!("{what}: {handlers} handlers, exactly one required"));
    }
    if let Some(h) = p.get("httpGet") {
        if h.get("path").and_then(Value::as_str).is_some_and(str::is_empty) {
            errs.push(format!("{what}.httpGet.path: empty"));
        }
        match &h["port"] {
            Value::Number(n) if n.as_i64().is_some_and(|n| (1..=65535).contains(&n)) => {}
            Value::String(s) if !s.is_empty() => {}
            other => errs.push(format!("{what}.httpGet.port {other}: invalid")),
        }
        if let Some(s) = h.get("scheme")
            && s != "HTTP"
            && s != "HTTPS"
        {
            errs.push(format!("{what}.httpGet.scheme {s}: unsupported"));
        }
    }
    for f in
        ["initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"]
    {
        if let Some(v) = p.get(f) {
            int32_nonnegative(v, &format!("{what}.{f}"), errs);
        }
    }
    if kill && p.get("successThreshold").is_some_and(|v| v != 1) {
        errs.push(format!("{what}.successThreshold must be 1"));
    }
    if let Some(g) = p.get("terminationGracePeriodSeconds")
        && g.as_i64().is_none_or(|g| g <= 0)
    {
        errs.push(format!("{what}.terminationGracePeriodSeconds must be positive"));
    }
}

/// The API's validation of the probes and lifecycle of a Pod, as described in the module doc.
fn api_errors(pod: &Value) -> Vec<String> {
    let mut errs = Vec::new();
    let spec = &pod["spec"];
    let grace = spec.get("terminationGracePeriodSeconds").and_then(Value::as_i64).unwrap_or(30);
    let lists = [("containers", true), ("initContainers", false)];
    for (list, app) in lists {
        for (i, c) in spec.get(list).and_then(Value::as_array).into_iter().flatten().enumerate() {
            let sidecar = c.get("restartPolicy").is_some_and(|r| r == "Always");
            let at = format!("{list}[{i}]");
            if !app && !sidecar {
                for k in ["livenessProbe", "readinessProbe", "startupProbe", "lifecycle"] {
                    if c.get(k).is_some() {
                        errs.push(format!("{at}.{k}: not allowed on an init container"));
                    }
                }
                continue;
            }
            for (k, kill) in [("livenessProbe", true), ("readinessProbe", false), ("startupProbe", true)] {
                if let Some(p) = c.get(k) {
                    validate_probe(p, &format!("{at}.{k}"), kill, &mut errs);
                }
            }
            if let Some(s) = c.pointer("/lifecycle/preStop/sleep/seconds") {
                match s.as_i64() {
                    Some(n) if n > 0 && n <= grace => {}
                    _ => errs.push(format!(
                        "{at}.lifecycle.preStop.sleep.seconds {s}: must be greater than 0 and at most \
                         terminationGracePeriodSeconds ({grace})"
                    )),
                }
            }
        }
    }
    errs
}

/// probegate's own bound: a timeout the patch wrote is at most that probe's period (default 10).
fn timeout_errors(before: &Value, after: &Value) -> Vec<String> {
    let mut errs = Vec::new();
    for list in ["containers", "initContainers"] {
        for (i, c) in after["spec"].get(list).and_then(Value::as_array).into_iter().flatten().enumerate() {
            for k in ["livenessProbe", "readinessProbe", "startupProbe"] {
                let Some(p) = c.get(k) else { continue };
                let old = before["spec"][list][i].get(k).and_then(|p| p.get("timeoutSeconds"));
                let new = p.get("timeoutSeconds");
                if new.is_none() || new == old {
                    continue;
                }
                let period = p.get("periodSeconds").and_then(Value::as_i64).filter(|p| *p > 0).unwrap_or(10);
                if new.and_then(Value::as_i64).is_none_or(|t| t > period) {
                    errs.push(format!(
                        "{list}[{i}].{k}.timeoutSeconds set to {new:?} above periodSeconds {period}"
                    ));
                }
            }
        }
    }
    errs
}

/// A patched timeout never goes down (the default is 1 s), and each path is patched once.
fn monotonic_errors(before: &Value, after: &Value, patch: &json_patch::Patch) -> Vec<String> {
    let mut errs = Vec::new();
    let mut paths = std::collections::BTreeSet::new();
    for op in &patch.0 {
        let path = match op {
            json_patch::PatchOperation::Add(a) => a.path.to_string(),
            json_patch::PatchOperation::Remove(r) => r.path.to_string(),
            json_patch::PatchOperation::Replace(r) => r.path.to_string(),
            other => format!("{other:?}"),
        };
        if !paths.insert(path.clone()) {
            errs.push(format!("{path} patched twice"));
        }
    }
    for list in ["containers", "initContainers"] {
        for (i, c) in before["spec"].get(list).and_then(Value::as_array).into_iter().flatten().enumerate() {
            for k in ["livenessProbe", "readinessProbe", "startupProbe"] {
                let Some(old) = c.get(k) else { continue };
                let timeout = |p: &Value| {
                    p.get("timeoutSeconds").and_then(Value::as_i64).filter(|t| *t > 0).unwrap_or(1)
                };
                let new = &after["spec"][list][i][k];
                if timeout(new) < timeout(old) {
                    errs.push(format!(
                        "{list}[{i}].{k}.timeoutSeconds lowered from {} to {}",
                        timeout(old),
                        timeout(new)
                    ));
                }
            }
        }
    }
    errs
}

/// The client deadline an exec probe sets, in whole seconds, read from the command as the
/// generator writes it (`-rpc-timeout=Ns`, `curl -m N`).
fn client_deadline(probe: &Value) -> Option<i64> {
    let argv: Vec<&str> =
        probe.pointer("/exec/command")?.as_array()?.iter().filter_map(Value::as_str).collect();
    match argv.as_slice() {
        ["grpc_health_probe", _, flag] => flag.strip_prefix("-rpc-timeout=")?.strip_suffix('s')?.parse().ok(),
        ["curl", "-m", n, _] => n.parse().ok(),
        _ => None,
    }
}

/// With `probe-client-deadline: mutate`, every probe of the patched Pod whose client deadline fits
/// its period has a timeout at least that long.
fn deadline_errors(after: &Value) -> Vec<String> {
    let mut errs = Vec::new();
    for list in ["containers", "initContainers"] {
        for (i, c) in after["spec"].get(list).and_then(Value::as_array).into_iter().flatten().enumerate() {
            for k in ["livenessProbe", "readinessProbe", "startupProbe"] {
                let Some(p) = c.get(k) else { continue };
                let Some(deadline) = client_deadline(p) else { continue };
                let period = p.get("periodSeconds").and_then(Value::as_i64).filter(|p| *p > 0).unwrap_or(10);
                let timeout = p.get("timeoutSeconds").and_then(Value::as_i64).filter(|t| *t > 0).unwrap_or(1);
                if deadline <= period && timeout < deadline {
                    errs.push(format!("{list}[{i}].{k}: deadline {deadline}s over timeoutSeconds {timeout} (period {period})"));
                }
            }
        }
    }
    errs
}

/// A message with a negative number, or a boot budget that is not `period × threshold`, shows
/// wrapped (or wrong) arithmetic.
fn message_errors(messages: &[String]) -> Vec<String> {
    let mut errs = Vec::new();
    for m in messages {
        let bytes = m.as_bytes();
        for (i, w) in bytes.windows(2).enumerate() {
            if w[0] == b'-' && w[1].is_ascii_digit() && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric()) {
                errs.push(format!("negative number in {m:?}"));
            }
        }
        // "periodSeconds P, failureThreshold F (B s to boot)"
        if let Some(rest) = m.split("periodSeconds ").nth(1)
            && let Some((p, rest)) = rest.split_once(", failureThreshold ")
            && let Some((f, rest)) = rest.split_once(" (")
            && let Some((b, _)) = rest.split_once(" s to boot")
        {
            let (p, f, b): (u128, u128, u128) = (p.parse().unwrap(), f.parse().unwrap(), b.parse().unwrap());
            if p * f != b {
                errs.push(format!("{p} x {f} != {b} in {m:?}"));
            }
        }
    }
    errs
}

fn respond(policy: &Policy, endpoint: Endpoint, object: &Value) -> admission::AdmissionResponse {
    let body = serde_json::to_vec(&common::review("CREATE", object, None, "p")).unwrap();
    let request = admission::parse_review(&body).unwrap();
    admission::review(policy, None, endpoint, &request).unwrap().review.response
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, .. ProptestConfig::default() })]

    #[test]
    fn every_patch_yields_a_pod_the_api_accepts(yaml in policy_yaml(), pod in pod()) {
        let policy = policy::parse(&yaml, "generated.yaml").expect("the generator writes valid policies");
        prop_assert!(api_errors(&pod).is_empty(), "generator made an invalid pod: {:?}", api_errors(&pod));
        let r = respond(&policy, Endpoint::Mutate, &pod);
        prop_assert!(r.allowed);
        let mut messages = r.warnings.clone().unwrap_or_default();
        messages.extend(respond(&policy, Endpoint::Validate, &pod).warnings.unwrap_or_default());
        let errs = message_errors(&messages);
        prop_assert!(errs.is_empty(), "{errs:?}");
        if let Some(b64) = &r.patch {
            let patch = common::decode_patch(b64);
            let after = common::apply(&pod, &patch);
            common::parse_pod(&after);
            let mut errs = api_errors(&after);
            errs.extend(timeout_errors(&pod, &after));
            errs.extend(monotonic_errors(&pod, &after, &patch));
            prop_assert!(errs.is_empty(), "patch {patch:?} makes an invalid Pod: {errs:?}");
        }
        // Pods only: every container is patched (no template is involved here). Without a patch
        // the Pod is as it was, so a deadline that fits its period was already covered.
        if yaml.contains("probe-client-deadline: {action: mutate}") {
            let after = match &r.patch {
                Some(b64) => common::apply(&pod, &common::decode_patch(b64)),
                None => pod.clone(),
            };
            let errs = deadline_errors(&after);
            prop_assert!(errs.is_empty(), "{errs:?}");
        }
    }
}

/// The two cases the issue reports, kept as plain examples.
#[test]
fn reported_overflow_and_default_grace_cases() {
    let policy = policy::parse(
        "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\nrules:\n  \
         startup-probe: {action: mutate, periodSeconds: 1}\n  prestop-sleep: {action: mutate, seconds: 60}\n",
        "p.yaml",
    )
    .unwrap();
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"containers": [{"name": "app", "image": "i", "ports": [{"containerPort": 80}],
            "livenessProbe": {"httpGet": {"path": "/", "port": 80}, "initialDelaySeconds": I32_MAX, "periodSeconds": 1}}]}});
    let r = respond(&policy, Endpoint::Mutate, &pod);
    let after = common::apply(&pod, &common::decode_patch(&r.patch.expect("a startup probe is still added")));
    assert!(api_errors(&after).is_empty(), "{:?}", api_errors(&after));
    assert_eq!(after["spec"]["containers"][0]["startupProbe"]["failureThreshold"], json!(I32_MAX));
    // No grace period written: 30 s, so a 60 s sleep is not added.
    assert!(after["spec"]["containers"][0].get("lifecycle").is_none(), "{after}");
    let warnings = r.warnings.unwrap_or_default().join("\n");
    assert!(warnings.contains("terminationGracePeriodSeconds 30 (default) leaves no room"), "{warnings}");
    assert!(message_errors(&[warnings]).is_empty());
}

/// The oracle itself catches what it must (so the property above can fail).
#[test]
fn the_oracle_rejects_invalid_pods() {
    let base = |c: Value, grace: Option<i64>| {
        let mut p = json!({"spec": {"containers": [c]}});
        if let Some(g) = grace {
            p["spec"]["terminationGracePeriodSeconds"] = json!(g);
        }
        p
    };
    let ok = json!({"name": "a", "livenessProbe": {"tcpSocket": {"port": 1}, "failureThreshold": I32_MAX}});
    assert!(api_errors(&base(ok, None)).is_empty());
    let over =
        json!({"name": "a", "startupProbe": {"tcpSocket": {"port": 1}, "failureThreshold": I32_MAX + 1}});
    assert_eq!(api_errors(&base(over, None)).len(), 1);
    let sleep = json!({"name": "a", "lifecycle": {"preStop": {"sleep": {"seconds": 60}}}});
    assert_eq!(api_errors(&base(sleep.clone(), None)).len(), 1);
    assert!(api_errors(&base(sleep, Some(60))).is_empty());
    let two = json!({"name": "a", "readinessProbe": {"tcpSocket": {"port": 1}, "exec": {"command": ["x"]}}});
    assert_eq!(api_errors(&base(two, None)).len(), 1);
    let before =
        base(json!({"name": "a", "livenessProbe": {"tcpSocket": {"port": 1}, "periodSeconds": 2}}), None);
    let after = base(
        json!({"name": "a", "livenessProbe": {"tcpSocket": {"port": 1}, "periodSeconds": 2, "timeoutSeconds": 3}}),
        None,
    );
    assert_eq!(timeout_errors(&before, &after).len(), 1);
    assert_eq!(message_errors(&["x (-3s)".into()]).len(), 1);
    let lowered =
        base(json!({"name": "a", "livenessProbe": {"tcpSocket": {"port": 1}, "timeoutSeconds": 1}}), None);
    assert_eq!(monotonic_errors(&after, &lowered, &json_patch::Patch(vec![])).len(), 1);
    let grpc = |timeout: i64, period: i64| {
        base(
            json!({"name": "a", "readinessProbe": {"exec": {"command": ["grpc_health_probe", "-addr=:1", "-rpc-timeout=5s"]},
            "timeoutSeconds": timeout, "periodSeconds": period}}),
            None,
        )
    };
    assert_eq!(deadline_errors(&grpc(3, 10)).len(), 1);
    assert!(deadline_errors(&grpc(5, 10)).is_empty());
    assert!(deadline_errors(&grpc(3, 4)).is_empty(), "no room: a warning, not a patch");
    assert_eq!(message_errors(&["periodSeconds 5, failureThreshold 3 (16 s to boot)".into()]).len(), 1);
    assert!(message_errors(&["periodSeconds 5, failureThreshold 3 (15 s to boot)".into()]).is_empty());
}

/// A liveness `initialDelaySeconds` of 2^31-1 gets the same finding as a smaller large one (break-it
/// pass, issue 10, reported no finding at the int32 maximum; not reproduced on 7f9034e, kept as a
/// test): with each handler, the added startup probe keeps the whole window (`failureThreshold`
/// `ceil((delay + 10 × 3) / 5)`, at most 2^31-1), the Pod stays valid, and the warning (startup-probe
/// at `warn`) shows the exact, unwrapped numbers.
#[test]
fn the_int32_maximum_initial_delay_gets_the_finding_a_smaller_one_gets() {
    let warn = policy::parse(
        "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\nrules:\n  startup-probe: {action: warn}\n",
        "p.yaml",
    )
    .unwrap();
    let handlers = [
        json!({"httpGet": {"path": "/live", "port": 8080}}),
        json!({"tcpSocket": {"port": 8080}}),
        json!({"grpc": {"port": 8080}}),
        json!({"exec": {"command": ["cat", "/tmp/healthy"]}}),
    ];
    for handler in handlers {
        for delay in [100_000, I32_MAX - 1, I32_MAX] {
            let mut live = handler.clone();
            live["initialDelaySeconds"] = json!(delay);
            live["timeoutSeconds"] = json!(5);
            let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
                "spec": {"containers": [{"name": "app", "image": "i", "livenessProbe": live}]}});
            let what = format!("{handler} delay {delay}");
            let r = respond(&Policy::default(), Endpoint::Mutate, &pod);
            let after =
                common::apply(&pod, &common::decode_patch(&r.patch.unwrap_or_else(|| panic!("{what}"))));
            assert!(api_errors(&after).is_empty(), "{what}: {:?}", api_errors(&after));
            let threshold = (delay + 30 + 4) / 5;
            let startup = &after["spec"]["containers"][0]["startupProbe"];
            assert_eq!(startup["failureThreshold"], json!(threshold), "{what}: {after}");
            assert!(
                after["spec"]["containers"][0]["livenessProbe"].get("initialDelaySeconds").is_none(),
                "{what}"
            );
            let warnings = respond(&warn, Endpoint::Validate, &pod).warnings.unwrap_or_default();
            let w = warnings
                .iter()
                .find(|w| w.contains("(startup-probe)"))
                .unwrap_or_else(|| panic!("{what}: {warnings:?}"));
            assert!(
                w.contains(&format!("failureThreshold {threshold} ({} s to boot)", threshold * 5)),
                "{what}: {w}"
            );
            assert!(w.contains(&format!("initialDelaySeconds {delay} moves")), "{what}: {w}");
            assert!(message_errors(&warnings).is_empty(), "{what}: {warnings:?}");
        }
    }
}

/// A liveness handler with a long client deadline (`curl -m 120`, `grpc_health_probe
/// -rpc-timeout=2m`) stretches the added startup probe's period to the deadline. A check that
/// fails at once (nothing listens yet during boot) fails at 0, P, 2P, ..., and the kubelet kills
/// at the `failureThreshold`-th: `(failureThreshold - 1) × periodSeconds` of boot time. The server
/// break-it pass on a00d258 found `failureThreshold: 1` at period 120, a kill at the first check of
/// a Pod that booted fine before the patch (and with `initialDelaySeconds: 60` moved away, ~90 s of
/// boot time became none). The default policy's budget is 120 s at period 5: a stretched period
/// must still give a fast-failing check at least `120 - 5` seconds, and the delay it moves.
#[test]
fn a_startup_probe_stretched_to_a_client_deadline_still_gives_the_budget_to_a_fast_failure() {
    for (command, delay, at_least) in [
        (vec!["curl", "-sf", "-m", "120", "http://localhost:8080/healthz"], None, 115),
        (vec!["curl", "-sf", "-m", "60", "http://localhost:8080/healthz"], None, 115),
        (vec!["grpc_health_probe", "-addr=:50051", "-rpc-timeout=2m"], None, 115),
        (vec!["curl", "-sf", "-m", "120", "http://localhost:8080/healthz"], Some(60), 115),
        (vec!["curl", "-sf", "-m", "30", "http://localhost:8080/healthz"], Some(300), 330),
    ] {
        let mut live = json!({"exec": {"command": command}, "timeoutSeconds": 5});
        if let Some(d) = delay {
            live["initialDelaySeconds"] = json!(d);
        }
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
            "spec": {"containers": [{"name": "app", "image": "i", "livenessProbe": live}]}});
        let what = format!("{command:?} delay {delay:?}");
        let r = respond(&Policy::default(), Endpoint::Mutate, &pod);
        let after = common::apply(&pod, &common::decode_patch(&r.patch.unwrap_or_else(|| panic!("{what}"))));
        assert!(api_errors(&after).is_empty(), "{what}: {:?}", api_errors(&after));
        let startup = &after["spec"]["containers"][0]["startupProbe"];
        let period = startup["periodSeconds"].as_i64().unwrap_or_else(|| panic!("{what}: {after}"));
        let threshold = startup["failureThreshold"].as_i64().unwrap_or_else(|| panic!("{what}: {after}"));
        assert!(period > 5, "{what}: the period is stretched to the deadline: {startup}");
        assert!(threshold >= 2, "{what}: one failure kills: {startup}");
        assert!(
            (threshold - 1) * period >= at_least,
            "{what}: a fast failure is killed too early: {startup}"
        );
    }
    // (Not stretched: the policy's formula, ceil(120 / 5) = 24.)
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"containers": [{"name": "app", "image": "i",
            "livenessProbe": {"exec": {"command": ["curl", "-sf", "http://localhost:8080/healthz"]}}}]}});
    let r = respond(&Policy::default(), Endpoint::Mutate, &pod);
    let after = common::apply(&pod, &common::decode_patch(&r.patch.expect("patch")));
    assert_eq!(after["spec"]["containers"][0]["startupProbe"]["failureThreshold"], json!(24));
}
