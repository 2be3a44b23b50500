//! Prometheus metrics (prometheus-client, OpenMetrics text at `GET /metrics`).
//!
//! - `probegate_admission_requests_total{endpoint,kind,operation,result,dry_run}`: result
//!   `allowed`, `warned`, `patched`, `denied`, `error` (a malformed review's 400, a failed
//!   evaluation), `timeout` (408: not read and answered within the request timeout), `stalled`
//!   (408: a body still arriving lost its share of its budget to a request that waited, see
//!   [`crate::server::budget`]) or `refused`
//!   (413, 415 or 503 before the body was read; `kind` and `operation` empty); `dry_run` `true` for dry-run requests
//!   (`kubectl apply --dry-run=server`, `kubectl diff`: nothing was admitted), `false` otherwise
//!   (and for requests that could not be read);
//! - `probegate_admission_duration_seconds{endpoint}`: histogram of handling time;
//! - `probegate_violations_total{rule,action,mode,namespace}`: every finding reported (denied,
//!   warned, patched, audited); dry-run requests are not counted here (they admit nothing);
//!   `namespace` is the namespace for the first 1000 seen, then `other` (`invalid` for a name
//!   that is not a valid namespace name);
//! - `probegate_policy_reloads_total{result}`: `success` or `failure`;
//! - `probegate_policy_info{hash,source}`: 1 for the policy in force;
//! - `probegate_configmap_lookups_total{result}` (`--resolve-configmaps`): `found`, `not_found`,
//!   `forbidden`, `failed`, `timeout` (the request's budget ran out first) or `cached` (a failure
//!   remembered);
//! - `probegate_requests_in_flight`: requests on the HTTPS endpoints being handled now (from their
//!   headers to their answer);
//! - `probegate_request_bodies_waiting{budget}`: requests whose body waits, unread, for room in its
//!   budget: `small` (bodies up to 64 KiB) or `large` (see `LARGE_BODY_BUDGET_BYTES`);
//! - `probegate_evaluations_waiting{lane}` and `probegate_evaluations_running{lane}`: reviews
//!   waiting for, or holding, a place on the blocking pool, by lane: `small` (bodies up to 16 KiB
//!   with exec handlers) or `expensive` (larger bodies with exec handlers, and every body over
//!   64 KiB; one at a time). Reviews evaluated inline on the async workers are not counted.
//! - `probegate_log_lines_dropped_total`: log lines dropped because stderr was not read fast
//!   enough (a stalled log reader; see [`crate::server::logsink`]): reviews never wait for the log.

use std::collections::HashSet;
use std::sync::Mutex;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
// Label values are static strings where the set of values is fixed (counting a request then
// allocates nothing); only the namespace is the request's own (bounded: see MAX_NAMESPACES).
struct RequestLabels {
    endpoint: &'static str,
    kind: &'static str,
    operation: &'static str,
    result: &'static str,
    dry_run: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EndpointLabels {
    endpoint: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ViolationLabels {
    rule: &'static str,
    action: &'static str,
    mode: &'static str,
    namespace: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    result: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BudgetLabels {
    budget: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LaneLabels {
    lane: &'static str,
}

/// Which of the two body budgets a body draws on (`SMALL_BODY_BUDGET_BYTES`,
/// `LARGE_BODY_BUDGET_BYTES` in [`crate::server`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Budget {
    /// Bodies up to 64 KiB.
    Small,
    /// Bodies over 64 KiB.
    Large,
}

/// Where a review is evaluated on the blocking pool (see [`crate::server::Lane`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneName {
    /// Bodies up to 16 KiB with exec handlers.
    Small,
    /// Larger bodies with exec handlers and every body over 64 KiB.
    Expensive,
}

/// A gauge raised while this value lives (a request waiting or running), lowered when it is
/// dropped, whether the request was answered, cancelled by its timeout or ended on the blocking
/// pool.
#[derive(Debug)]
pub struct Raised(Gauge);

impl Raised {
    fn new(gauge: &Gauge) -> Raised {
        gauge.inc();
        Raised(gauge.clone())
    }
}

impl Drop for Raised {
    fn drop(&mut self) {
        self.0.dec();
    }
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
    /// Namespaces given their own `namespace` label value so far (at most [`MAX_NAMESPACES`]).
    namespaces: Mutex<HashSet<String>>,
    in_flight: Gauge,
    /// Bodies waiting for room: small budget, large budget.
    bodies_waiting: [Gauge; 2],
    /// Evaluations waiting for a place: small lane, expensive lane.
    evaluations_waiting: [Gauge; 2],
    /// Evaluations holding a place: small lane, expensive lane.
    evaluations_running: [Gauge; 2],
    /// Set from [`crate::server::logsink::dropped_lines`] when encoded.
    log_lines_dropped: Counter,
}

/// Most distinct namespaces that get their own `namespace` label value; findings in further
/// namespaces are counted under `other`, so a client sending made-up namespaces cannot grow the
/// exposition without bound.
pub const MAX_NAMESPACES: usize = 1000;

/// True for a valid namespace name: an RFC 1123 label (lowercase alphanumerics and `-`, starting
/// and ending alphanumeric, at most 63 characters; Kubernetes docs, "Object Names and IDs").
fn is_namespace_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
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
        let in_flight = Gauge::default();
        registry.register(
            "requests_in_flight",
            "Requests on the HTTPS endpoints being handled now",
            in_flight.clone(),
        );
        let bodies = Family::<BudgetLabels, Gauge>::default();
        registry.register(
            "request_bodies_waiting",
            "Requests whose body waits, unread, for room in its budget (small or large)",
            bodies.clone(),
        );
        let bodies_waiting =
            ["small", "large"].map(|budget| bodies.get_or_create(&BudgetLabels { budget }).clone());
        let lanes = |family: &Family<LaneLabels, Gauge>| {
            ["small", "expensive"].map(|lane| family.get_or_create(&LaneLabels { lane }).clone())
        };
        let waiting = Family::<LaneLabels, Gauge>::default();
        registry.register(
            "evaluations_waiting",
            "Reviews waiting for a place on the blocking pool, by lane (small or expensive)",
            waiting.clone(),
        );
        let running = Family::<LaneLabels, Gauge>::default();
        registry.register(
            "evaluations_running",
            "Reviews holding a place on the blocking pool, by lane (small or expensive)",
            running.clone(),
        );
        let (evaluations_waiting, evaluations_running) = (lanes(&waiting), lanes(&running));
        let log_lines_dropped = Counter::default();
        registry.register(
            "log_lines_dropped",
            "Log lines dropped because stderr was not read fast enough (reviews never wait for the log)",
            log_lines_dropped.clone(),
        );
        Metrics {
            log_lines_dropped,
            in_flight,
            bodies_waiting,
            evaluations_waiting,
            evaluations_running,
            registry,
            requests,
            duration,
            violations,
            reloads,
            policy,
            policy_lock: Mutex::new(()),
            configmap_lookups,
            namespaces: Mutex::new(HashSet::new()),
        }
    }

    /// The `namespace` label value for a finding: the name itself for the first
    /// [`MAX_NAMESPACES`] valid names seen, `other` after that, `invalid` for a name Kubernetes
    /// would not accept, `""` for cluster-scoped objects.
    fn namespace_label(&self, namespace: &str) -> String {
        if namespace.is_empty() {
            return String::new();
        }
        if !is_namespace_name(namespace) {
            return "invalid".into();
        }
        let mut seen = self.namespaces.lock().unwrap_or_else(|e| e.into_inner());
        if seen.contains(namespace) {
            return namespace.into();
        }
        if seen.len() < MAX_NAMESPACES {
            seen.insert(namespace.into());
            return namespace.into();
        }
        "other".into()
    }

    /// Counts one answered request (`dry_run`: the request's `dryRun`) and its handling time in
    /// seconds.
    pub fn request(
        &self,
        endpoint: &'static str,
        kind: &'static str,
        operation: &'static str,
        result: &'static str,
        dry_run: bool,
        seconds: f64,
    ) {
        self.requests
            .get_or_create(&RequestLabels {
                endpoint,
                kind,
                operation,
                result,
                dry_run: if dry_run { "true" } else { "false" },
            })
            .inc();
        self.duration.get_or_create(&EndpointLabels { endpoint }).observe(seconds);
    }

    /// Counts one finding (the namespace label is bounded: see [`MAX_NAMESPACES`]).
    pub fn violation(&self, rule: &'static str, action: &'static str, mode: &'static str, namespace: &str) {
        self.violations
            .get_or_create(&ViolationLabels {
                rule,
                action,
                mode,
                namespace: self.namespace_label(namespace),
            })
            .inc();
    }

    /// A request being handled, until the value is dropped (`probegate_requests_in_flight`).
    pub fn in_flight(&self) -> Raised {
        Raised::new(&self.in_flight)
    }

    /// A body waiting for room in `budget`, until the value is dropped.
    pub fn body_waiting(&self, budget: Budget) -> Raised {
        Raised::new(&self.bodies_waiting[budget as usize])
    }

    /// A review waiting for a place in `lane`, until the value is dropped.
    pub fn evaluation_waiting(&self, lane: LaneName) -> Raised {
        Raised::new(&self.evaluations_waiting[lane as usize])
    }

    /// A review holding a place in `lane`, until the value is dropped.
    pub fn evaluation_running(&self, lane: LaneName) -> Raised {
        Raised::new(&self.evaluations_running[lane as usize])
    }

    /// Requests being handled now.
    pub fn requests_in_flight(&self) -> i64 {
        self.in_flight.get()
    }

    /// Bodies waiting for room in `budget` now.
    pub fn bodies_waiting(&self, budget: Budget) -> i64 {
        self.bodies_waiting[budget as usize].get()
    }

    /// Reviews waiting for a place in `lane` now.
    pub fn evaluations_waiting(&self, lane: LaneName) -> i64 {
        self.evaluations_waiting[lane as usize].get()
    }

    /// Reviews holding a place in `lane` now.
    pub fn evaluations_running(&self, lane: LaneName) -> i64 {
        self.evaluations_running[lane as usize].get()
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
        self.log_lines_dropped
            .inner()
            .store(super::logsink::dropped_lines(), std::sync::atomic::Ordering::Relaxed);
        let mut out = String::new();
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn namespaces_in(m: &Metrics) -> HashSet<String> {
        m.encode()
            .lines()
            .filter(|l| l.starts_with("probegate_violations_total{"))
            .filter_map(|l| l.split("namespace=\"").nth(1)?.split('"').next().map(str::to_string))
            .collect()
    }

    #[test]
    fn the_namespace_label_is_bounded_and_never_takes_invalid_names() {
        let m = Metrics::new();
        m.violation("startup-probe", "mutate", "enforce", "shop");
        m.violation("startup-probe", "mutate", "enforce", "Not_A\"Namespace\n");
        m.violation("startup-probe", "mutate", "enforce", &"a".repeat(64));
        let seen = namespaces_in(&m);
        assert!(seen.contains("shop") && seen.contains("invalid"), "{seen:?}");
        assert_eq!(seen.len(), 2, "{seen:?}");
        for i in 0..MAX_NAMESPACES + 50 {
            m.violation("startup-probe", "mutate", "enforce", &format!("ns-{i}"));
        }
        let seen = namespaces_in(&m);
        // `shop` took one of the places; the rest went to `other`.
        assert!(seen.contains("other") && seen.contains("shop"), "{}", seen.len());
        assert_eq!(seen.len(), MAX_NAMESPACES + 2, "shop..ns-998, invalid and other");
        m.violation("startup-probe", "mutate", "enforce", "shop");
        assert!(m.encode().contains("namespace=\"shop\"} 2"), "a known namespace keeps its label");
    }

    #[test]
    fn namespace_names_follow_rfc_1123_labels() {
        for ok in ["a", "shop", "team-7", &"a".repeat(63)] {
            assert!(is_namespace_name(ok), "{ok}");
        }
        for bad in ["", "-a", "a-", "A", "a_b", "a.b", &"a".repeat(64)] {
            assert!(!is_namespace_name(bad), "{bad}");
        }
    }
}
