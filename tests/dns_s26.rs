//! DNS lookups in a Pod whose first resolver is the Pod itself (s26, deny26).
//!
//! k8s-at-home's lancache chart runs its own bind server and sets `dnsPolicy: None` with
//! `dnsConfig.nameservers: [127.0.0.1]`; its liveness probe `dig "${LANCACHE_DNSDOMAIN}" SOA` asks
//! that server for a zone it hosts, and was denied as depending on the cluster DNS. With `dnsPolicy:
//! None` the container's `/etc/resolv.conf` lists only `dnsConfig.nameservers`, in order (Kubernetes
//! docs, "DNS for Services and Pods"): the first is asked first, and the next only when the first
//! does not answer, so a lookup through the default resolvers is `dig @127.0.0.1`, which has never
//! been a dependency. Under any other policy, or with a remote server first, the lookup still asks
//! the cluster DNS (or that server) and stays denied.

mod common;

use probegate::engine::{self, Evaluation};
use probegate::policy::{Policy, RuleId};
use serde_json::{Value, json};

/// A Pod whose container runs `command` as its liveness and readiness probes, with the Pod-level
/// `dns` settings (`dnsPolicy`, `dnsConfig`) merged into its spec.
fn pod(command: Value, dns: Value) -> Value {
    let mut spec = json!({"containers": [{"name": "dns", "image": "lancachenet/lancache-dns:latest",
        "env": [{"name": "LANCACHE_DNSDOMAIN", "value": "cache.lancache.net"}],
        "ports": [{"containerPort": 53}],
        "livenessProbe": {"exec": {"command": command.clone()}},
        "readinessProbe": {"exec": {"command": command}}}]});
    for (k, v) in dns.as_object().unwrap() {
        spec[k] = v.clone();
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "lancache", "namespace": "cache"}, "spec": spec})
}

fn eval(obj: &Value) -> Evaluation {
    engine::evaluate(&Policy::default().rules, &common::workload(obj))
}

fn finding(e: &Evaluation, rule: RuleId) -> Option<String> {
    e.findings.iter().find(|f| f.rule == rule).map(|f| f.message.clone())
}

fn sh(script: &str) -> Value {
    json!(["bash", "-c", script])
}

const LANCACHE: &str = "set -euo pipefail; dig @127.0.0.1 \"${LANCACHE_DNSDOMAIN}\" SOA | grep localhost; dig \"${LANCACHE_DNSDOMAIN}\" SOA";

fn own_resolver() -> Value {
    json!({"dnsPolicy": "None", "dnsConfig": {"nameservers": ["127.0.0.1"]}})
}

#[test]
fn a_lookup_through_the_pods_own_resolver_is_no_dependency() {
    let lookups = [
        LANCACHE,
        "dig cache.lancache.net SOA",
        "dig +short db.prod.svc",
        "nslookup cache.lancache.net",
        "host cache.lancache.net",
        "getent hosts cache.lancache.net",
    ];
    for dns in [
        own_resolver(),
        // The first server answers while it is up; a fallback is asked only when it does not.
        json!({"dnsPolicy": "None", "dnsConfig": {"nameservers": ["127.0.0.1", "8.8.8.8"]}}),
        json!({"dnsPolicy": "None", "dnsConfig": {"nameservers": ["::1"]}}),
    ] {
        for script in lookups {
            let e = eval(&pod(sh(script), dns.clone()));
            assert_eq!(finding(&e, RuleId::LivenessDependency), None, "{script} {dns}");
            assert_eq!(finding(&e, RuleId::ReadinessSharedDependency), None, "{script} {dns}");
        }
    }
    let e = eval(&pod(json!(["pwsh", "-c", "Resolve-DnsName cache.lancache.net"]), own_resolver()));
    assert_eq!(finding(&e, RuleId::LivenessDependency), None);
}

/// The contrasts: the cluster DNS first (any other policy, the default included), a remote server
/// first, no server listed, or a lookup that names a remote server: denied as before.
#[test]
fn a_lookup_through_another_resolver_stays_denied() {
    for dns in [
        json!({}),
        json!({"dnsPolicy": "ClusterFirst", "dnsConfig": {"nameservers": ["127.0.0.1"]}}),
        json!({"dnsPolicy": "Default"}),
        json!({"dnsPolicy": "None", "dnsConfig": {"nameservers": ["10.96.0.10", "127.0.0.1"]}}),
        json!({"dnsPolicy": "None", "dnsConfig": {"nameservers": []}}),
        json!({"dnsPolicy": "None"}),
    ] {
        for script in [
            "dig cache.lancache.net SOA",
            "nslookup db.prod.svc",
            "host db.prod.svc",
            "getent hosts db.prod.svc",
        ] {
            let e = eval(&pod(sh(script), dns.clone()));
            let msg = finding(&e, RuleId::LivenessDependency).unwrap_or_default();
            assert!(msg.contains("DNS"), "{script} {dns}: {msg:?}");
        }
    }
    for script in [
        "dig @10.96.0.10 cache.lancache.net",
        "nslookup db.prod.svc 10.96.0.10",
        "host db.prod.svc 10.96.0.10",
    ] {
        let e = eval(&pod(sh(script), own_resolver()));
        let msg = finding(&e, RuleId::LivenessDependency).unwrap_or_default();
        assert!(msg.contains("10.96.0.10"), "{script}: {msg:?}");
    }
    let e =
        eval(&pod(json!(["pwsh", "-c", "Resolve-DnsName db.prod.svc -Server 10.96.0.10"]), own_resolver()));
    assert!(finding(&e, RuleId::LivenessDependency).is_some());
}
