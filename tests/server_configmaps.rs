//! `serve --resolve-configmaps` over real HTTPS: ConfigMaps read before each review from a fake
//! source, and a read that never answers from a mocked Kubernetes API (a `tower::service_fn` behind
//! `kube::Client::new`: a real API server cannot be made to hang on demand): the request is still
//! answered in time, allowed, with the script reported as unresolved. Reads from a real API server
//! with real RBAC (found, not found, forbidden) are in tests/e2e/configmaps.rs.

mod common;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::{Request, Response};
use common::*;
use futures::FutureExt;
use futures::future::BoxFuture;
use kube::client::Body;
use probegate::admission::AdmissionReviewResponse;
use probegate::policy::Policy;
use probegate::server;
use probegate::server::configmaps::{ConfigMapFetch, ConfigMapResolver, Fetched, KubeConfigMaps};
use serde_json::{Value, json};

/// The webhook's timeout in deploy/ (timeoutSeconds: 5): every answer must come well before it.
const WEBHOOK_TIMEOUT: Duration = Duration::from_secs(5);

struct Harness {
    addr: SocketAddr,
    client: reqwest::Client,
    running: server::RunningServer,
}

async fn start(resolver: Option<ConfigMapResolver>) -> Harness {
    let (running, ca) = start_server(Policy::default(), |_| {}).await;
    running.state.set_configmap_resolver(resolver.map(Arc::new));
    Harness { addr: running.addr, client: https_client(&[&ca], false), running }
}

impl Harness {
    /// POSTs a review to /validate: the response and how long it took.
    async fn validate(&self, object: &Value) -> (AdmissionReviewResponse, Duration) {
        let started = Instant::now();
        let r = self
            .client
            .post(format!("https://localhost:{}/validate", self.addr.port()))
            .json(&review("CREATE", object, None, "cm-1"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let answer = r.json().await.unwrap();
        (answer, started.elapsed())
    }

    async fn metrics(&self) -> String {
        let url = format!("https://localhost:{}/metrics", self.addr.port());
        self.client.get(url).send().await.unwrap().text().await.unwrap()
    }
}

fn redis_docs() -> Vec<Value> {
    probegate::manifest::parse_documents(&read("scripts/redis-replication.yaml")).unwrap()
}

fn doc<'a>(docs: &'a [Value], name: &str) -> &'a Value {
    docs.iter().find(|d| d["metadata"]["name"] == name).unwrap()
}

fn health_data(docs: &[Value]) -> BTreeMap<String, String> {
    serde_json::from_value(doc(docs, "cache-redis-health")["data"].clone()).unwrap()
}

fn unresolved_note(answer: &AdmissionReviewResponse) -> Value {
    let notes = answer.response.audit_annotations.as_ref().expect("audit annotations");
    serde_json::from_str(&notes["unresolved-scripts"]).unwrap()
}

/// An in-process source: a table of ConfigMaps, the rest absent.
struct Table(BTreeMap<(String, String), BTreeMap<String, String>>);

impl ConfigMapFetch for Table {
    fn fetch(&self, namespace: &str, name: &str) -> BoxFuture<'static, Fetched> {
        let answer = self.0.get(&(namespace.to_string(), name.to_string())).cloned();
        async move { answer.map_or(Fetched::NotFound, Fetched::Found) }.boxed()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_configmap_source_the_replica_is_denied_and_the_master_allowed() {
    let docs = redis_docs();
    let table =
        Table(BTreeMap::from([(("data".to_string(), "cache-redis-health".to_string()), health_data(&docs))]));
    let h = start(Some(ConfigMapResolver::new(Arc::new(table)))).await;
    let (answer, elapsed) = h.validate(doc(&docs, "cache-redis-replicas")).await;
    assert!(!answer.response.allowed);
    let message = answer.response.status.unwrap().message;
    assert!(
        message.contains("cache-redis-master-0.cache-redis-headless.data.svc.cluster.local"),
        "{message}"
    );
    assert!(elapsed < WEBHOOK_TIMEOUT);
    let (answer, _) = h.validate(doc(&docs, "cache-redis-master")).await;
    assert!(answer.response.allowed, "{:?}", answer.response.status);
    assert!(answer.response.audit_annotations.is_none(), "every script was read");
    let metrics = h.metrics().await;
    // Read for each request (answers are never reused), and only the ConfigMap the probes run.
    assert!(metrics.contains("probegate_configmap_lookups_total{result=\"found\"} 2"), "{metrics}");
    assert!(!metrics.contains("result=\"not_found\""), "{metrics}");
    h.running.handle.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_resolution_or_without_the_configmap_the_script_is_unresolved_not_denied() {
    let docs = redis_docs();
    for resolver in [None, Some(ConfigMapResolver::new(Arc::new(Table(BTreeMap::new()))))] {
        let resolving = resolver.is_some();
        let h = start(resolver).await;
        let (answer, _) = h.validate(doc(&docs, "cache-redis-replicas")).await;
        assert!(answer.response.allowed, "{:?}", answer.response.status);
        let reason = if resolving {
            "ConfigMap data/cache-redis-health does not exist"
        } else {
            "ConfigMap data/cache-redis-health was not read (probegate serve runs without --resolve-configmaps)"
        };
        assert_eq!(
            unresolved_note(&answer),
            json!([{"container": "redis", "script": "/health/ping_liveness_local_and_master.sh", "reason": reason}])
        );
        assert!(answer.response.warnings.iter().flatten().all(|w| !w.contains("/health/")));
        h.running.handle.shutdown();
    }
}

/// A fake Kubernetes API answering ConfigMap GETs: `configmaps` by (namespace, name), 404 for the
/// others, and never for the names in `hang`.
#[derive(Default)]
struct FakeApi {
    configmaps: BTreeMap<(String, String), Value>,
    hang: Vec<String>,
    log: Vec<String>,
}

fn mocked_client(api: Arc<Mutex<FakeApi>>) -> kube::Client {
    let service = tower::service_fn(move |req: Request<Body>| {
        let api = Arc::clone(&api);
        async move {
            let path = req.uri().path().to_string();
            let segments: Vec<String> = path.trim_start_matches('/').split('/').map(str::to_string).collect();
            let (hang, answer) = {
                let mut api = api.lock().unwrap();
                api.log.push(format!("{} {path}", req.method()));
                match segments.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
                    ["api", "v1", "namespaces", ns, "configmaps", name] if req.method() == "GET" => {
                        let hang = api.hang.iter().any(|h| h == name);
                        let found = api.configmaps.get(&(ns.to_string(), name.to_string())).cloned();
                        let answer = found.map(|cm| (200, cm)).unwrap_or_else(|| {
                            (404, json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                         "reason": "NotFound", "code": 404,
                                         "message": format!("configmaps \"{name}\" not found")}))
                        });
                        (hang, answer)
                    }
                    _ => (
                        false,
                        (
                            404,
                            json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404}),
                        ),
                    ),
                }
            };
            if hang {
                futures::future::pending::<()>().await;
            }
            let (status, body) = answer;
            Response::builder()
                .status(status)
                .header("content-type", "application/json")
                .body(Body::from(serde_json::to_vec(&body).unwrap()))
        }
    });
    kube::Client::new(service, "default")
}

fn fake_api(docs: &[Value], hang: &[&str]) -> Arc<Mutex<FakeApi>> {
    let mut cm = doc(docs, "cache-redis-health").clone();
    cm["metadata"]["resourceVersion"] = json!("7");
    Arc::new(Mutex::new(FakeApi {
        configmaps: BTreeMap::from([(("data".to_string(), "cache-redis-health".to_string()), cm)]),
        hang: hang.iter().map(|s| s.to_string()).collect(),
        log: Vec::new(),
    }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configmap_read_that_hangs_is_unresolved_and_the_request_answered_in_time() {
    let docs = redis_docs();
    let api = fake_api(&docs, &["cache-redis-health"]);
    let resolver = ConfigMapResolver::new(Arc::new(KubeConfigMaps::new(mocked_client(Arc::clone(&api)))));
    let budget = resolver.budget();
    let h = start(Some(resolver)).await;
    let (answer, elapsed) = h.validate(doc(&docs, "cache-redis-replicas")).await;
    assert!(elapsed < WEBHOOK_TIMEOUT, "answered after {elapsed:?}");
    assert!(elapsed >= budget, "it waited for the read, up to the budget ({elapsed:?})");
    assert!(elapsed < budget + Duration::from_secs(1), "and not much longer ({elapsed:?})");
    assert!(answer.response.allowed, "{:?}", answer.response.status);
    assert_eq!(
        unresolved_note(&answer),
        json!([{"container": "redis", "script": "/health/ping_liveness_local_and_master.sh",
                "reason": "ConfigMap data/cache-redis-health did not answer within the 500 ms budget"}])
    );
    // Concurrent requests share the read still in flight: still answered in time, one GET.
    let replica = doc(&docs, "cache-redis-replicas");
    let (a, b) = tokio::join!(h.validate(replica), h.validate(replica));
    for (answer, elapsed) in [a, b] {
        assert!(answer.response.allowed && elapsed < WEBHOOK_TIMEOUT, "{elapsed:?}");
    }
    let gets = api.lock().unwrap().log.iter().filter(|l| l.ends_with("/cache-redis-health")).count();
    assert_eq!(gets, 1, "one read in flight per ConfigMap");
    let metrics = h.metrics().await;
    assert!(metrics.contains("probegate_configmap_lookups_total{result=\"timeout\"}"), "{metrics}");
    h.running.handle.shutdown();
}
