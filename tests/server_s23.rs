//! s23: the server's remaining gaps from the s22 break-it pass, over real HTTPS: small reviews from
//! one connection do not queue behind another connection's backlog (the evaluation places are
//! shared between connections in turn), policy-supplied strings cannot forge log lines, an override
//! listing an empty namespace is refused, and an UPDATE whose old object is malformed excuses
//! nothing.

mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::wire::{answer_of, h2_connection, open_post, upload_within_the_window};
use common::*;
use futures::FutureExt;
use futures::future::BoxFuture;
use probegate::policy::Policy;
use probegate::server;
use probegate::server::configmaps::{ConfigMapFetch, ConfigMapResolver, Fetched};
use probegate::server::metrics::LaneName;
use serde_json::{Value, json};

/// Polls `done` every 10 ms for up to 10 s; panics with `what` (and `figures`) past that.
async fn poll_until(what: &str, mut done: impl FnMut() -> bool, figures: impl Fn() -> String) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(std::time::Instant::now() < deadline, "{what}: {}", figures());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// ConfigMap reads that wait for the test to let each one through (one permit each), then answer
/// "not found"; counts the reads started.
struct Gated {
    gate: Arc<tokio::sync::Semaphore>,
    started: Arc<AtomicUsize>,
}

impl ConfigMapFetch for Gated {
    fn fetch(&self, _namespace: &str, _name: &str) -> BoxFuture<'static, Fetched> {
        let (gate, started) = (Arc::clone(&self.gate), Arc::clone(&self.started));
        async move {
            started.fetch_add(1, Ordering::SeqCst);
            gate.acquire().await.unwrap().forget();
            Fetched::NotFound
        }
        .boxed()
    }
}

/// A Pod whose liveness probe runs a script from the ConfigMap `configmap` (read before the
/// review, holding its evaluation place while the read waits).
fn pod_with_script_from(configmap: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": configmap, "namespace": "shop"},
        "spec": {"containers": [{"name": "app", "image": "app:1", "ports": [{"containerPort": 8080}],
            "livenessProbe": {"exec": {"command": ["sh", "/health/check.sh"]}},
            "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}},
            "volumeMounts": [{"name": "health", "mountPath": "/health"}]}],
        "volumes": [{"name": "health", "configMap": {"name": configmap}}]}})
}

/// A small Pod whose liveness probe checks its database: denied.
fn coupled_pod() -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "api", "namespace": "shop"},
        "spec": {"containers": [{"name": "api", "image": "api:1", "ports": [{"containerPort": 8080}],
            "livenessProbe": {"exec": {"command": ["pg_isready", "-h", "orders-db.shop.svc"]}},
            "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}}}]}})
}

/// Posts `body` on a new stream of `client`; the answer lands in `answers` under `uid`.
async fn post(
    client: &mut h2::client::SendRequest<axum::body::Bytes>,
    body: Vec<u8>,
    uid: String,
    answers: &Arc<Mutex<BTreeMap<String, (u16, Value)>>>,
) {
    let (response, mut send) = open_post(client, body.len()).await;
    let answers = Arc::clone(answers);
    tokio::spawn(async move {
        let (uploaded, answer) =
            tokio::join!(upload_within_the_window(&mut send, &body), answer_of(response));
        uploaded.unwrap();
        answers.lock().unwrap().insert(uid, answer);
    });
}

/// s22 break-it pass: under 4,096 HTTP/2 streams of one client, 4 of 9 small reviews sent on
/// other connections met the 4 s request bound (408; under `failurePolicy: Ignore`, admitted
/// unchecked): the evaluation places were handed out in arrival order, and the small lane's queue
/// held 2,751 reviews. Now they are handed out one connection after another. Here one connection's
/// reviews hold every place (each waits for a ConfigMap read the test lets through one at a time)
/// and 28 more of them wait (36 until s24, 64 streams a connection); a coupled small review on a second connection is evaluated as soon
/// as the second place is given back (denied), not after the 28. Without the turns it would wait
/// for all of them, past its request bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_review_from_another_connection_does_not_queue_behind_one_connections_backlog() {
    let (running, ca) = start_server(Policy::default(), |_| {}).await;
    let state = Arc::clone(&running.state);
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let started = Arc::new(AtomicUsize::new(0));
    let fetch = Gated { gate: Arc::clone(&gate), started: Arc::clone(&started) };
    // A budget longer than the test: the reads end when the test lets them.
    let resolver = ConfigMapResolver::with_budget(Arc::new(fetch), Duration::from_secs(30));
    state.set_configmap_resolver(Some(Arc::new(resolver)));
    let answers = Arc::new(Mutex::new(BTreeMap::new()));
    let figures = || {
        format!(
            "{} reads started, {} evaluations waiting, {} running, answers: {:?}",
            started.load(Ordering::SeqCst),
            state.metrics.evaluations_waiting(LaneName::Small),
            state.metrics.evaluations_running(LaneName::Small),
            answers.lock().unwrap().keys().collect::<Vec<_>>()
        )
    };
    let places = server::MAX_BLOCKING_EVALUATIONS;
    // As many as one connection carries at once (32 since s24; the backlog was 36 with 64).
    let backlog = server::H2_MAX_CONCURRENT_STREAMS as usize - places;
    let mut flood = h2_connection(running.addr, &ca).await;
    for i in 0..places + backlog {
        let name = format!("health-{i}");
        let body = serde_json::to_vec(&review("CREATE", &pod_with_script_from(&name), None, &name)).unwrap();
        assert!(body.len() < server::EXPENSIVE_BODY_BYTES, "{} bytes: the small lane", body.len());
        post(&mut flood, body, name, &answers).await;
    }
    poll_until(
        "every place is held and the backlog waits",
        || {
            started.load(Ordering::SeqCst) == places
                && state.metrics.evaluations_waiting(LaneName::Small) == backlog as i64
        },
        figures,
    )
    .await;
    let mut other = h2_connection(running.addr, &ca).await;
    let body = serde_json::to_vec(&review("CREATE", &coupled_pod(), None, "small")).unwrap();
    post(&mut other, body, "small".into(), &answers).await;
    poll_until(
        "the small review waits too",
        || state.metrics.evaluations_waiting(LaneName::Small) == backlog as i64 + 1,
        figures,
    )
    .await;
    // The first place given back goes to the backlog's connection (its turn came first), the
    // second to the other connection's small review.
    gate.add_permits(1);
    poll_until("one review of the backlog answered", || answers.lock().unwrap().len() == 1, figures).await;
    assert!(!answers.lock().unwrap().contains_key("small"), "{}", figures());
    gate.add_permits(1);
    poll_until("the small review answered", || answers.lock().unwrap().contains_key("small"), figures).await;
    let (status, answer) = answers.lock().unwrap()["small"].clone();
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["response"]["allowed"], false, "{answer}");
    assert_eq!(answer["response"]["status"]["code"], 403, "{answer}");
    // Answered while every review ahead of it was still within its bound: first come, first
    // served, it got a place only once the reviews holding them and most of the backlog had met
    // their 4 s bound (408), just before its own.
    for (uid, (status, answer)) in answers.lock().unwrap().iter() {
        assert_eq!(*status, 200, "{uid} was answered before the small review: {answer}");
    }
    gate.add_permits(places + backlog);
    poll_until("everything answered", || answers.lock().unwrap().len() == places + backlog + 1, figures)
        .await;
}

/// The override names of a policy with names that could forge a text log line: a newline, a
/// quote, a NUL, a space and `=`, a comma.
const ODD_NAMES_POLICY: &str = r#"apiVersion: probegate.dev/v1alpha1
kind: ProbePolicy
overrides:
  - name: "shop\nWARN forged line status=200"
    namespaces: [shop]
    mode: enforce
  - name: "quote\" b=\"x\0nul, two"
    namespaces: [shop]
"#;

/// s22 break-it pass: an override's `name` holding a newline, `"` or NUL was written raw into the
/// text log ("policy in force" at start, and every decision the override applied to), so a policy
/// could forge log lines. Each name is escaped Debug-style (`\"`, `\u{a}`, `\u{0}`), with spaces,
/// `=` and `,` escaped too, so that a line keeps its fields and one name cannot pass for two.
#[test]
fn override_names_cannot_forge_log_lines() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.yaml");
    std::fs::write(&policy, ODD_NAMES_POLICY).unwrap();
    let args: Vec<String> =
        ["--addr", "127.0.0.1:0", "--no-namespace-watch", "--policy", policy.to_str().unwrap()]
            .map(String::from)
            .to_vec();
    let served = Served::start(&args, &[], Duration::from_secs(60));
    let ca = served.ca_pem();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let answer: Value = rt.block_on(async {
        let client = https_client(&[&ca], false);
        let url = format!("https://localhost:{}/validate", served.addr.port());
        let r = client.post(url).json(&review("CREATE", &coupled_pod(), None, "odd")).send().await.unwrap();
        assert_eq!(r.status(), 200);
        r.json().await.unwrap()
    });
    assert_eq!(answer["response"]["allowed"], false, "{answer}");
    wait_until("the decision logged", Duration::from_secs(10), || {
        served.log().contains("admission decision")
    });
    let log = served.log();
    let escaped = r#"shop\u{a}WARN\u{20}forged\u{20}line\u{20}status\u{3d}200,quote\"\u{20}b\u{3d}\"x\u{0}nul\u{2c}\u{20}two"#;
    for message in ["policy in force", "admission decision"] {
        let line = log.lines().find(|l| l.contains(message)).unwrap_or_else(|| panic!("{log}"));
        assert!(line.contains(&format!("overrides={escaped}")), "{line}");
    }
    for line in log.lines() {
        assert!(!line.contains('\0'), "{line:?}");
        assert!(!line.trim_start().starts_with("WARN forged"), "{log}");
    }
}

/// s22 break-it pass: `namespaces: [""]` was accepted, an override that can never match. Refused
/// with the file, line and field, as other policy errors; a valid glob beside it is not.
#[test]
fn an_empty_namespace_in_an_override_is_refused_with_its_place() {
    let text = "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\noverrides:\n  - name: a\n    \
                namespaces: [shop, \"\"]\n";
    let errors = probegate::policy::parse_all(text, "p.yaml").unwrap_err();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let e = errors[0].to_string();
    assert!(e.starts_with("p.yaml:5:"), "{e}");
    assert!(
        e.contains("field `overrides[0].namespaces[1]`: is empty, so it can never match a namespace"),
        "{e}"
    );
    assert!(probegate::policy::parse_all(&text.replace(", \"\"", ", \"shop-*\""), "p.yaml").is_ok());
}

/// s22 break-it pass: an UPDATE whose `oldObject` has malformed containers (`"containers": "x"`)
/// was read as an old object without findings. Kept, and decided: an old object that is not a
/// valid Pod excuses nothing, so the denial stands (a 400 would hand the verdict to the
/// webhook's `failurePolicy`, under `Ignore` an admission), at `/validate`; the same UPDATE with a
/// well-formed old object that had the finding already is admitted (a label change is never
/// denied). `/mutate`, which reads the old object only to keep its own patch, answers 200 too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_whose_old_object_has_malformed_containers_excuses_nothing() {
    let (running, ca) = start_server(Policy::default(), |_| {}).await;
    let client = https_client(&[&ca], false);
    let send = |path: &'static str, old: Value| {
        let (client, port) = (client.clone(), running.addr.port());
        async move {
            let r = client
                .post(format!("https://localhost:{port}{path}"))
                .json(&review("UPDATE", &coupled_pod(), Some(&old), "upd"))
                .send()
                .await
                .unwrap();
            (r.status().as_u16(), r.json::<Value>().await.unwrap())
        }
    };
    let mut malformed = coupled_pod();
    malformed["spec"]["containers"] = json!("x");
    let mut no_array = coupled_pod();
    no_array["spec"]["containers"] = json!([{"name": "api", "livenessProbe": "x"}]);
    for old in [malformed, no_array] {
        let (status, answer) = send("/validate", old.clone()).await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["response"]["allowed"], false, "{old}: {answer}");
        let (status, answer) = send("/mutate", old).await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["response"]["allowed"], true, "{answer}");
    }
    // The finding was there before: a relabel is admitted, with a warning.
    let (status, answer) = send("/validate", coupled_pod()).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["response"]["allowed"], true, "{answer}");
}
