//! What probegate costs a cluster: Pod CREATE latency through a real API server (cargo feature
//! `e2e`, `KUBEBUILDER_ASSETS` as for the e2e tests), side by side in one run, for three
//! configurations, each in its own namespace:
//!
//! - **none**: no admission webhook or policy selects the namespace;
//! - **probegate**: deploy/base's MutatingWebhookConfiguration and ValidatingWebhookConfiguration as
//!   shipped (rules, `matchConditions`, `objectSelector`, timeouts, `failurePolicy`), with
//!   `clientConfig.url` pointed at a local `probegate serve` (default policy, namespace watch on,
//!   JSON logs) and a `namespaceSelector` for that namespace only;
//! - **vap**: a ValidatingAdmissionPolicy (CEL, `admissionregistration.k8s.io/v1`, in-process in the
//!   API server) denying a liveness probe that runs a command, bound to that namespace.
//!
//! The Pod is a typical one that all three admit: an HTTP liveness probe with `timeoutSeconds: 1`
//! and a readiness probe (probegate patches it: a raised timeout and a preStop sleep). CLIENTS
//! (default 4) concurrent kube clients per configuration (each its own connection, kept across
//! rounds) create CREATES (default 300) Pods per round between them; ROUNDS (default 6, so that
//! each configuration runs first, second and third equally often) rounds, the configurations'
//! order rotated each round so that drift (other load, etcd growth) is shared
//! out, after one warm-up round that is not counted. Pods are deleted between rounds (not timed; no
//! kubelet runs, so an unscheduled Pod goes at once). Prints p50, p90, p99 and mean of the create
//! round trip per configuration, and what probegate and the policy add to the p50 and p99. It
//! checks that every counted create reached probegate at both endpoints (the shipped
//! `failurePolicy: Ignore` would otherwise hide a webhook that failed open) and that the policy
//! denies what it should.
//!
//! `KUBEBUILDER_ASSETS=... cargo bench --features e2e --bench cluster_cost`
//! (`PROBEGATE_BIN=target/release/probegate` with `--profile dev` to measure a release binary from
//! a quicker build of the bench itself).

#[allow(dead_code)]
#[path = "../tests/e2e/harness.rs"]
mod harness;

use std::time::{Duration, Instant};

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
    ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use serde_json::{Value, json};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Config {
    None,
    Probegate,
    Vap,
}

const CONFIGS: [Config; 3] = [Config::None, Config::Probegate, Config::Vap];

impl Config {
    fn label(self) -> &'static str {
        match self {
            Config::None => "no webhook",
            Config::Probegate => "probegate (2 webhooks)",
            Config::Vap => "ValidatingAdmissionPolicy (CEL)",
        }
    }
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).filter(|&n| n > 0).unwrap_or(default)
}

/// The Pod every configuration admits: probegate patches it (timeout, preStop), the policy passes it.
fn pod(name: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {"app": "bench"}},
        "spec": {"containers": [{"name": "app", "image": "example/app:1",
            "ports": [{"containerPort": 8080}],
            "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}},
            "livenessProbe": {"httpGet": {"path": "/live", "port": 8080}, "timeoutSeconds": 1}}]}
    }))
    .expect("a Pod")
}

/// deploy/base's webhook configuration `file`, named `name`, sent to `url` trusting `ca_pem`, for
/// namespace `ns` only; everything else as shipped.
fn shipped_configuration(file: &str, name: &str, url: &str, ca_pem: &str, ns: &str) -> Value {
    let path = format!("{}/deploy/base/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("deploy/base");
    let mut config = probegate::manifest::parse_documents(&text).expect("YAML").remove(0);
    config["metadata"] = json!({"name": name});
    use base64::Engine as _;
    let bundle = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    for webhook in config["webhooks"].as_array_mut().expect("webhooks") {
        webhook["clientConfig"] = json!({"url": url, "caBundle": bundle});
        webhook["namespaceSelector"] = json!({"matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "In", "values": [ns]}]});
    }
    config
}

/// The ValidatingAdmissionPolicy and its binding to namespace `ns`: no liveness probe that runs a
/// command (a check of the kind probegate's validating webhook makes, in CEL).
async fn install_policy(client: &kube::Client, ns: &str) {
    let policy: ValidatingAdmissionPolicy = serde_json::from_value(json!({
        "metadata": {"name": "bench-no-exec-liveness"},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                "operations": ["CREATE"], "resources": ["pods"]}]},
            "validations": [{
                "expression": "object.spec.containers.all(c, !has(c.livenessProbe) || !has(c.livenessProbe.exec))",
                "message": "a liveness probe must not run a command"}]
        }
    }))
    .expect("a policy");
    let binding: ValidatingAdmissionPolicyBinding = serde_json::from_value(json!({
        "metadata": {"name": "bench-no-exec-liveness"},
        "spec": {"policyName": "bench-no-exec-liveness", "validationActions": ["Deny"],
            "matchResources": {"namespaceSelector": {"matchExpressions": [
                {"key": "kubernetes.io/metadata.name", "operator": "In", "values": [ns]}]}}}
    }))
    .expect("a binding");
    let pp = PostParams::default();
    Api::<ValidatingAdmissionPolicy>::all(client.clone())
        .create(&pp, &policy)
        .await
        .expect("create the policy");
    Api::<ValidatingAdmissionPolicyBinding>::all(client.clone())
        .create(&pp, &binding)
        .await
        .expect("create the binding");
}

/// Sum of `probegate_admission_requests_total` samples of `endpoint` that were not dry runs.
fn requests(metrics: &str, endpoint: &str) -> u64 {
    metrics
        .lines()
        .filter(|l| l.starts_with("probegate_admission_requests_total{"))
        .filter(|l| l.contains(&format!("endpoint=\"{endpoint}\"")) && l.contains("dry_run=\"false\""))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as u64
}

/// Polls `ready` every 100 ms for up to 30 s (the API server picks up new admission
/// configurations within about a second).
async fn wait_for(what: &str, mut ready: impl AsyncFnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !ready().await {
        assert!(Instant::now() < deadline, "{what}: not within 30 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Nearest-rank percentile of sorted `v`, in milliseconds.
fn percentile(v: &[Duration], p: f64) -> f64 {
    let rank = ((p * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1].as_secs_f64() * 1e3
}

fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let creates = env_usize("CREATES", 300);
    let rounds = env_usize("ROUNDS", 6);
    let clients = env_usize("CLIENTS", 4);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(run(creates, rounds, clients));
}

async fn run(creates: usize, rounds: usize, clients: usize) {
    let admin = harness::client().await;
    let mut namespaces = Vec::new();
    for prefix in ["cost-none", "cost-probegate", "cost-vap"] {
        namespaces.push(harness::namespace(prefix).await);
    }
    let ns_of = |c: Config| namespaces[CONFIGS.iter().position(|x| *x == c).unwrap()].clone();

    // probegate with deploy/base's two configurations.
    let pg = harness::Probegate::start(&[]);
    let pg_ns = ns_of(Config::Probegate);
    let m = shipped_configuration(
        "mutatingwebhookconfiguration.yaml",
        "bench-cost",
        &pg.url("/mutate"),
        &pg.ca_pem,
        &pg_ns,
    );
    let v = shipped_configuration(
        "validatingwebhookconfiguration.yaml",
        "bench-cost",
        &pg.url("/validate"),
        &pg.ca_pem,
        &pg_ns,
    );
    let pp = PostParams::default();
    let m: MutatingWebhookConfiguration = serde_json::from_value(m).expect("the mutating configuration");
    let v: ValidatingWebhookConfiguration = serde_json::from_value(v).expect("the validating configuration");
    Api::<MutatingWebhookConfiguration>::all(admin.clone()).create(&pp, &m).await.expect("create it");
    Api::<ValidatingWebhookConfiguration>::all(admin.clone()).create(&pp, &v).await.expect("create it");
    let dry = PostParams { dry_run: true, ..Default::default() };
    let pods = Api::<Pod>::namespaced(admin.clone(), &pg_ns);
    wait_for("the API server calls probegate", async || {
        let _ = pods.create(&dry, &pod("ready-check")).await;
        let m = pg.metrics().await;
        m.contains("endpoint=\"mutate\"") && m.contains("endpoint=\"validate\"")
    })
    .await;
    // The policy, enforced once a Pod with an exec liveness probe is refused.
    let vap_ns = ns_of(Config::Vap);
    install_policy(&admin, &vap_ns).await;
    let pods = Api::<Pod>::namespaced(admin.clone(), &vap_ns);
    let mut exec = pod("exec-check");
    exec.spec.as_mut().unwrap().containers[0].liveness_probe =
        Some(serde_json::from_value(json!({"exec": {"command": ["pg_isready"]}})).expect("a probe"));
    wait_for("the policy denies", async || {
        pods.create(&dry, &exec).await.is_err_and(|e| e.to_string().contains("must not run a command"))
    })
    .await;

    // One kube client per (configuration, client): its own connection, warm after round 0.
    let mut apis: Vec<Vec<Api<Pod>>> = Vec::new();
    for c in CONFIGS {
        let mut v = Vec::new();
        for _ in 0..clients {
            v.push(Api::namespaced(harness::client().await, &ns_of(c)));
        }
        apis.push(v);
    }
    let before = pg.metrics().await;
    let (mutate_before, validate_before) = (requests(&before, "mutate"), requests(&before, "validate"));
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); CONFIGS.len()];
    let mut errors = [0usize; 3];
    let mut wall = [Duration::ZERO; 3];
    let started = Instant::now();
    for round in 0..=rounds {
        for k in 0..CONFIGS.len() {
            let idx = (k + round) % CONFIGS.len();
            let t0 = Instant::now();
            let tasks: Vec<_> = apis[idx]
                .iter()
                .enumerate()
                .map(|(client, api)| {
                    let api = api.clone();
                    let share = creates / clients + usize::from(client < creates % clients);
                    tokio::spawn(async move {
                        let mut out = Vec::with_capacity(share);
                        let mut failed = 0;
                        for i in 0..share {
                            let p = pod(&format!("r{round}-c{client}-{i}"));
                            let t = Instant::now();
                            match api.create(&PostParams::default(), &p).await {
                                Ok(_) => out.push(t.elapsed()),
                                Err(e) => {
                                    if failed == 0 {
                                        eprintln!("create failed: {e}");
                                    }
                                    failed += 1;
                                }
                            }
                        }
                        (out, failed)
                    })
                })
                .collect();
            for t in tasks {
                let (out, failed) = t.await.expect("a client task");
                if round > 0 {
                    samples[idx].extend(out);
                    errors[idx] += failed;
                }
            }
            if round > 0 {
                wall[idx] += t0.elapsed();
            }
        }
        // Keep etcd the same size from round to round (not timed).
        for ns in &namespaces {
            let api = Api::<Pod>::namespaced(admin.clone(), ns);
            let _ = api.delete_collection(&DeleteParams::default(), &ListParams::default()).await;
        }
        eprintln!(
            "round {round} of {rounds} done{}",
            if round == 0 { " (warm-up, not counted)" } else { "" }
        );
    }
    let elapsed = started.elapsed();

    // Every create in the probegate namespace (warm-up included) went through both webhooks.
    let after = pg.metrics().await;
    let expected = (creates * (rounds + 1)) as u64;
    let (mutated, validated) =
        (requests(&after, "mutate") - mutate_before, requests(&after, "validate") - validate_before);
    assert!(
        mutated >= expected && validated >= expected,
        "probegate saw {mutated} /mutate and {validated} /validate requests for {expected} creates: \
         the webhooks failed open"
    );

    println!(
        "Pod CREATE through kube-apiserver: {creates} creates x {rounds} rounds per configuration \
         (+1 warm-up round), {clients} concurrent clients, configurations interleaved; {:.0} s",
        elapsed.as_secs_f64()
    );
    println!();
    println!("| configuration | creates | p50 | p90 | p99 | mean | creates/s | added p50 | added p99 |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut stats = Vec::new();
    for s in samples.iter_mut() {
        s.sort();
        let mean = s.iter().map(Duration::as_secs_f64).sum::<f64>() / s.len().max(1) as f64 * 1e3;
        stats.push((percentile(s, 0.5), percentile(s, 0.9), percentile(s, 0.99), mean));
    }
    let (base50, base99) = (stats[0].0, stats[0].2);
    for (i, c) in CONFIGS.iter().enumerate() {
        let (p50, p90, p99, mean) = stats[i];
        let added = |v: f64, base: f64| if i == 0 { "".to_string() } else { format!("{:+.1} ms", v - base) };
        println!(
            "| {} | {}{} | {p50:.1} ms | {p90:.1} ms | {p99:.1} ms | {mean:.1} ms | {:.0} | {} | {} |",
            c.label(),
            samples[i].len(),
            if errors[i] > 0 { format!(" ({} failed)", errors[i]) } else { String::new() },
            samples[i].len() as f64 / wall[i].as_secs_f64(),
            added(p50, base50),
            added(p99, base99),
        );
    }
}
