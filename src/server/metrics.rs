//! Prometheus metrics (prometheus-client, OpenMetrics text at `GET /metrics`).
//!
//! - `probegate_admission_requests_total{endpoint,kind,operation,result}`: result `allowed`,
//!   `warned`, `patched`, `denied` or `error`;
//! - `probegate_admission_duration_seconds{endpoint}`: histogram of handling time;
//! - `probegate_violations_total{rule,action,mode,namespace}`: every finding reported (denied,
//!   warned, patched, audited); dry-run requests are not counted here (they admit nothing);
//! - `probegate_policy_reloads_total{result}`: `success` or `failure`;
//! - `probegate_policy_info{hash,source}`: 1 for the policy in force;
//! - `probegate_configmap_lookups_total{result}` (`--resolve-configmaps`): `cached`, `found`,
//!   `not_found`, `failed` or `timeout` (the request's budget ran out first).

use std::sync::Mutex;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    endpoint: String,
    kind: String,
    operation: String,
    result: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EndpointLabels {
    endpoint: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ViolationLabels {
    rule: String,
    action: String,
    mode: String,
    namespace: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    result: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PolicyLabels {
    hash: String,
    source: String,
}

/// The server's metrics and their registry.
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    duration: Family<EndpointLabels, Histogram>,
    violations: Family<ViolationLabels, Counter>,
    reloads: Family<ResultLabels, Counter>,
    policy: Family<PolicyLabels, Gauge>,
    policy_lock: Mutex<()>,
    configmap_lookups: Family<ResultLabels, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// A fresh registry with every family registered.
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("probegate");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register("admission_requests", "Admission requests answered", requests.clone());
        let duration = Family::<EndpointLabels, Histogram>::new_with_constructor(|| {
            // 100 µs to about 3.3 s.
            Histogram::new(exponential_buckets(0.0001, 2.0, 16))
        });
        registry.register(
            "admission_duration_seconds",
            "Time to answer an admission request",
            duration.clone(),
        );
        let violations = Family::<ViolationLabels, Counter>::default();
        registry.register(
            "violations",
            "Findings reported (denied, warned, patched or audited)",
            violations.clone(),
        );
        let reloads = Family::<ResultLabels, Counter>::default();
        registry.register("policy_reloads", "Policy file reloads", reloads.clone());
        let policy = Family::<PolicyLabels, Gauge>::default();
        registry.register("policy_info", "The policy in force (value 1), by hash and source", policy.clone());
        let configmap_lookups = Family::<ResultLabels, Counter>::default();
        registry.register(
            "configmap_lookups",
            "ConfigMap lookups for liveness script analysis (--resolve-configmaps), by result",
            configmap_lookups.clone(),
        );
        Metrics {
            registry,
            requests,
            duration,
            violations,
            reloads,
            policy,
            policy_lock: Mutex::new(()),
            configmap_lookups,
        }
    }

    /// Counts one answered request and its handling time in seconds.
    pub fn request(&self, endpoint: &str, kind: &str, operation: &str, result: &str, seconds: f64) {
        self.requests
            .get_or_create(&RequestLabels {
                endpoint: endpoint.into(),
                kind: kind.into(),
                operation: operation.into(),
                result: result.into(),
            })
            .inc();
        self.duration.get_or_create(&EndpointLabels { endpoint: endpoint.into() }).observe(seconds);
    }

    /// Counts one finding.
    pub fn violation(&self, rule: &str, action: &str, mode: &str, namespace: &str) {
        self.violations
            .get_or_create(&ViolationLabels {
                rule: rule.into(),
                action: action.into(),
                mode: mode.into(),
                namespace: namespace.into(),
            })
            .inc();
    }

    /// Counts one ConfigMap lookup of a request.
    pub fn configmap_lookup(&self, result: &str) {
        self.configmap_lookups.get_or_create(&ResultLabels { result: result.into() }).inc();
    }

    /// Counts a reload attempt.
    pub fn reload(&self, success: bool) {
        let result = if success { "success" } else { "failure" };
        self.reloads.get_or_create(&ResultLabels { result: result.into() }).inc();
    }

    /// Marks the policy in force.
    pub fn policy_in_force(&self, hash: &str, source: &str) {
        let _guard = self.policy_lock.lock().unwrap_or_else(|e| e.into_inner());
        self.policy.clear();
        self.policy.get_or_create(&PolicyLabels { hash: hash.into(), source: source.into() }).set(1);
    }

    /// The OpenMetrics text exposition.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}
