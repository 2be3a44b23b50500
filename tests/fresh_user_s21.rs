//! What a new user met in the s21 fresh-user pass of the `startup-probe` rule: a startup probe added
//! with a smaller boot budget than the liveness probe allowed (a TCP check beside Spring's
//! `/actuator/health` got 120 s where the liveness probe allowed 210 s); a liveness script from a
//! ConfigMap that was not read, copied into a startup probe at `/mutate` (kept: the startup probe
//! runs what the liveness probe already runs, with a budget at least as long; docs/rules.md) with
//! the log line's `unresolved_scripts=0` for it (fixed); and "check this container only", which
//! said nothing about what to do.

mod common;

use probegate::admission::{self, Endpoint};
use probegate::engine::{self, Evaluation, Finding, StaticConfigMaps};
use probegate::policy::{Action, Policy, RuleId};
use serde_json::{Value, json};

fn eval(doc: &Value) -> Evaluation {
    engine::evaluate(&Policy::default().rules, &common::workload(doc))
}

/// A Pod (namespace `shop`) around one container.
fn pod(container: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop"},
        "spec": {"containers": [container]}})
}

fn startup(e: &Evaluation) -> Vec<&Finding> {
    e.findings.iter().filter(|f| f.rule == RuleId::StartupProbe).collect()
}

/// The fresh user's Java app: liveness `path` on port 8080 with `initialDelaySeconds: 180`, period
/// 10, threshold 3 (a boot of up to 210 s survives today).
fn java(path: &str, delay: u32, period: u32, threshold: u32) -> Value {
    pod(json!({"name": "shop", "image": "registry.example.com/shop-java:3",
        "ports": [{"containerPort": 8080}],
        "readinessProbe": {"httpGet": {"path": "/actuator/health/readiness", "port": 8080}, "timeoutSeconds": 3},
        "livenessProbe": {"httpGet": {"path": path, "port": 8080}, "initialDelaySeconds": delay,
            "periodSeconds": period, "failureThreshold": threshold, "timeoutSeconds": 3}}))
}

/// `/mutate` on a Pod CREATE: the response, and the Pod with its patch applied (RFC 6902,
/// strictly) and parsed back as a Pod.
fn mutate(doc: &Value, cms: Option<&StaticConfigMaps>) -> (admission::Decision, Value) {
    let body = serde_json::to_vec(&common::review("CREATE", doc, None, "s21")).unwrap();
    let request = admission::parse_review(&body).unwrap();
    let policy = Policy::default();
    let decision = match cms {
        Some(cms) => admission::review_with_configmaps(&policy, None, Endpoint::Mutate, &request, cms),
        None => admission::review(&policy, None, Endpoint::Mutate, &request),
    }
    .unwrap();
    let patched = match &decision.review.response.patch {
        Some(b64) => common::apply(doc, &common::decode_patch(b64)),
        None => doc.clone(),
    };
    common::parse_pod(&patched);
    (decision, patched)
}

/// Boot time a startup probe gives: `initialDelaySeconds + periodSeconds × failureThreshold`.
fn boot_budget(s: &Value) -> u64 {
    s["initialDelaySeconds"].as_u64().unwrap_or(0)
        + s["periodSeconds"].as_u64().unwrap() * s["failureThreshold"].as_u64().unwrap()
}

// === 1. the added boot budget covers what the liveness probe allows today ===

/// Both paths: 210 s (failureThreshold 42 at period 5). For the copied handler the 180 s delay
/// leaves liveness (rules.md §2.5: over `maxInitialDelaySeconds` it is set to 0 once a startup
/// probe gates liveness); the actuator path gets a TCP check (not its aggregate path) with the same
/// budget, and keeps the delay (the port may open before the health endpoint answers).
#[test]
fn the_added_startup_probe_gives_the_boot_time_the_liveness_probe_allows_today() {
    for (path, handler) in [("/actuator/health", "tcpSocket"), ("/healthz", "httpGet")] {
        let (decision, patched) = mutate(&java(path, 180, 10, 3), None);
        assert!(decision.review.response.allowed, "{path}");
        let c = &patched["spec"]["containers"][0];
        let s = &c["startupProbe"];
        assert!(s.get(handler).is_some(), "{path}: {s}");
        assert_eq!(
            (s["periodSeconds"].clone(), s["failureThreshold"].clone()),
            (json!(5), json!(42)),
            "{path}: {s}"
        );
        assert_eq!(boot_budget(s), 210, "{path}");
        let e = eval(&java(path, 180, 10, 3));
        let m = &startup(&e)[0].message;
        if handler == "tcpSocket" {
            assert_eq!(
                c["livenessProbe"]["initialDelaySeconds"],
                json!(180),
                "{path}: {}",
                c["livenessProbe"]
            );
            assert!(m.contains("(210 s to boot); as long as the liveness probe allows a boot today"), "{m}");
        } else {
            assert!(
                c["livenessProbe"].get("initialDelaySeconds").is_none(),
                "{path}: {}",
                c["livenessProbe"]
            );
            assert!(
                m.contains("failureThreshold 42 (210 s to boot); its initialDelaySeconds 180 moves"),
                "{m}"
            );
        }
    }
}

/// Over a grid of liveness settings (copied handler, TCP stand-in, a period stretched to a client
/// deadline): the startup probe's budget is at least today's start grace, and never below the
/// policy's 120 s; a delay over 30 s leaves liveness (but beside the TCP stand-in for the aggregate
/// path), one of 30 s or less stays.
#[test]
fn no_added_startup_probe_gives_less_than_the_liveness_start_grace() {
    let handlers = [
        json!({"httpGet": {"path": "/actuator/health", "port": 8080}}),
        json!({"httpGet": {"path": "/livez", "port": 8080}}),
        json!({"exec": {"command": ["grpc_health_probe", "-addr=:50051", "-rpc-timeout=15s"]}}),
    ];
    for handler in &handlers {
        for delay in [0u64, 20, 30, 31, 180, 900] {
            for (period, threshold) in [(1u64, 1u64), (10, 3), (30, 5), (60, 10)] {
                let mut live = handler.clone();
                live["initialDelaySeconds"] = json!(delay);
                live["periodSeconds"] = json!(period);
                live["failureThreshold"] = json!(threshold);
                live["timeoutSeconds"] = json!(period.min(20));
                let doc = pod(json!({"name": "w", "image": "w", "livenessProbe": live}));
                let (_, patched) = mutate(&doc, None);
                let c = &patched["spec"]["containers"][0];
                let s = &c["startupProbe"];
                let grace = delay + period * threshold;
                let case = format!("{handler} delay {delay} period {period} threshold {threshold}: {s}");
                assert!(boot_budget(s) >= grace.max(120), "{case}");
                // Not inflated either: at most one period of the added probe over what is needed.
                let p = s["periodSeconds"].as_u64().unwrap();
                assert!(boot_budget(s) < grace.max(120) + 2 * p, "{case}");
                let stand_in = s.get("tcpSocket").is_some();
                assert_eq!(stand_in, handler.to_string().contains("actuator"), "{case}");
                assert_eq!(
                    c["livenessProbe"].get("initialDelaySeconds").is_none(),
                    delay > 30 && !stand_in,
                    "{case}"
                );
            }
        }
    }
}

/// A delay at or under the bound stays on liveness; the grace it leaves is still covered, and the
/// message says so. A small grace keeps the policy's budget, with no such words.
#[test]
fn a_kept_delay_still_gets_the_whole_grace_and_a_small_one_the_policy_budget() {
    let e = eval(&java("/livez", 20, 30, 5));
    let f = startup(&e);
    let ops = serde_json::to_value(&f[0].patch).unwrap();
    assert_eq!(ops.as_array().unwrap().len(), 1, "the delay stays: {ops}");
    assert_eq!(ops[0]["value"]["failureThreshold"], json!(34), "170 s at period 5: {ops}");
    assert!(
        f[0].message.ends_with("(170 s to boot); as long as the liveness probe allows a boot today"),
        "{}",
        f[0].message
    );
    // A grace under the policy's 120 s, or equal to it: the policy's budget, no such words.
    for (delay, period) in [(10, 10), (0, 40)] {
        let e = eval(&java("/livez", delay, period, 3));
        let f = startup(&e);
        let ops = serde_json::to_value(&f[0].patch).unwrap();
        assert_eq!(ops[0]["value"]["failureThreshold"], json!(24), "{ops}");
        assert!(f[0].message.ends_with("(120 s to boot)"), "{}", f[0].message);
    }
}

// === 2. a liveness script that was not read is copied, and counted ===

/// The fresh user's Pod: liveness runs `/probes/live.sh` from a ConfigMap volume.
fn configmap_script_pod() -> Value {
    let mut p = pod(json!({"name": "app", "image": "registry.example.com/app:1",
        "env": [{"name": "MYSQL_HOST", "value": "mysql.data.svc"}],
        "livenessProbe": {"exec": {"command": ["/probes/live.sh"]}, "initialDelaySeconds": 60, "timeoutSeconds": 5},
        "volumeMounts": [{"name": "probes", "mountPath": "/probes"}]}));
    p["spec"]["volumes"] = json!([{"name": "probes", "configMap": {"name": "probe-scripts"}}]);
    p
}

fn configmap(script: &str) -> StaticConfigMaps {
    let mut cms = StaticConfigMaps::new();
    cms.insert("shop", "probe-scripts", [("live.sh".to_string(), script.to_string())].into());
    cms
}

/// Without the ConfigMap (`serve` without `--resolve-configmaps`): the startup probe runs the
/// script as the liveness probe does (it adds no restart the liveness probe does not already make),
/// and the decision counts the script for the log line's `unresolved_scripts` at `/mutate` too.
#[test]
fn an_unread_liveness_script_is_copied_and_counted_at_mutate() {
    let doc = configmap_script_pod();
    let (decision, patched) = mutate(&doc, None);
    let c = &patched["spec"]["containers"][0];
    assert_eq!(c["startupProbe"]["exec"]["command"], json!(["/probes/live.sh"]), "{patched}");
    assert!(boot_budget(&c["startupProbe"]) >= 120, "{patched}");
    assert_eq!(decision.summary.unresolved_scripts, 1, "/mutate counts it for the log line");
    // The same through the engine: a patch, no warning of startup-probe.
    let e = eval(&doc);
    let f = startup(&e);
    assert_eq!((f.len(), f[0].action, f[0].patch.is_empty()), (1, Action::Mutate, false), "{f:?}");
}

/// Must not: a script that was read and checks only the container is copied as before (and the
/// log line counts nothing); one that reaches MySQL is denied at `/validate` and not copied; a
/// script baked into the image (no volume, nothing to read) is copied as before.
#[test]
fn a_read_local_script_and_an_image_script_are_still_copied() {
    let doc = configmap_script_pod();
    let (decision, patched) = mutate(&doc, Some(&configmap("#!/bin/sh\ntest -f /tmp/alive\n")));
    let s = &patched["spec"]["containers"][0]["startupProbe"];
    assert_eq!(s["exec"]["command"], json!(["/probes/live.sh"]), "{patched}");
    assert_eq!(decision.summary.unresolved_scripts, 0);
    let (_, patched) = mutate(&doc, Some(&configmap("#!/bin/sh\nmysqladmin ping -h \"$MYSQL_HOST\"\n")));
    assert!(patched["spec"]["containers"][0].get("startupProbe").is_none(), "{patched}");
    let image =
        pod(json!({"name": "app", "image": "a", "livenessProbe": {"exec": {"command": ["/app/health.sh"]}}}));
    let (decision, patched) = mutate(&image, None);
    assert_eq!(
        patched["spec"]["containers"][0]["startupProbe"]["exec"]["command"],
        json!(["/app/health.sh"])
    );
    assert_eq!(decision.summary.unresolved_scripts, 0);
}

// === 3. the not-copied messages say what to do ===

/// A liveness check `liveness-dependency` warns about: the note asks for a startup probe of this
/// container alone, not "check this container only".
#[test]
fn a_warned_check_is_not_copied_and_the_note_says_what_to_add() {
    let doc = pod(json!({"name": "app", "image": "a",
        "livenessProbe": {"exec": {"command": ["sh", "-c", "pg_isready -h db | tee /tmp/x"]}}}));
    let e = eval(&doc);
    let m = &startup(&e)[0].message;
    assert!(m.ends_with("what liveness-dependency flags; add one that checks only this container"), "{m}");
    assert!(!m.contains("check this container only"), "{m}");
}
