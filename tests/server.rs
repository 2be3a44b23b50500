//! The real server over real HTTPS: a certificate made in the test, a client that trusts only it,
//! every returned JSON Patch applied to the object and the result parsed back as a Pod.

mod common;

use std::net::SocketAddr;

use common::wire::{answer_of, h2_connection, raw_tls};
use common::*;
use probegate::admission::AdmissionReviewResponse;
use probegate::policy::Policy;
use probegate::server;
use probegate::server::metrics::{Budget, LaneName};
use serde_json::{Value, json};

struct Harness {
    addr: SocketAddr,
    client: reqwest::Client,
    h1: reqwest::Client,
    running: server::RunningServer,
    /// The CA (PEM) that signed the server's certificate.
    ca: String,
}

async fn start(policy: Policy) -> Harness {
    let (running, ca) = start_server(policy, |_| {}).await;
    Harness {
        addr: running.addr,
        client: https_client(&[&ca], false),
        h1: https_client(&[&ca], true),
        running,
        ca,
    }
}

impl Harness {
    fn url(&self, path: &str) -> String {
        format!("https://localhost:{}{path}", self.addr.port())
    }

    async fn post(&self, path: &str, body: &Value) -> (reqwest::StatusCode, Value) {
        let r = self.client.post(self.url(path)).json(body).send().await.unwrap();
        let status = r.status();
        let text = r.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or_else(|_| panic!("non-JSON answer: {text}")))
    }

    async fn review(&self, path: &str, body: &Value) -> AdmissionReviewResponse {
        let (status, v) = self.post(path, body).await;
        assert_eq!(status, 200, "{v}");
        // The wire form: patch, when present, is a base64 string (not kube-core's byte array).
        if let Some(p) = v["response"].get("patch") {
            assert!(p.is_string(), "patch must be a base64 string: {p}");
            assert_eq!(v["response"]["patchType"], "JSONPatch");
        }
        serde_json::from_value(v).unwrap()
    }

    async fn healthy(&self) {
        let r = self.client.get(self.url("/healthz")).send().await.unwrap();
        assert_eq!(r.status(), 200);
    }
}

fn endpoint_of(file: &str) -> &'static str {
    if file.contains(".mutating") { "/mutate" } else { "/validate" }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_endpoints_http2_and_keep_alive() {
    let h = start(Policy::default()).await;
    let r = h.client.get(h.url("/healthz")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.version(), reqwest::Version::HTTP_2, "ALPN h2 is negotiated");
    let r = h.h1.get(h.url("/readyz")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.version(), reqwest::Version::HTTP_11);
    // Many requests on the same keep-alive connection pool.
    for _ in 0..20 {
        assert_eq!(h.h1.get(h.url("/healthz")).send().await.unwrap().status(), 200);
    }
    h.running.state.set_ready(false);
    assert_eq!(h.client.get(h.url("/readyz")).send().await.unwrap().status(), 503);
    // Plain HTTP is not served on the TLS port.
    let plain =
        reqwest::Client::new().get(format!("http://127.0.0.1:{}/healthz", h.addr.port())).send().await;
    assert!(plain.map(|r| r.status() != 200).unwrap_or(true));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn captured_reviews_get_the_contract_answers() {
    let h = start(Policy::default()).await;
    let dir = fixtures().join("admission");
    let mut files: Vec<_> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    files.retain(|f| f.ends_with(".json"));
    files.sort();
    assert!(files.len() >= 40);
    let mut patched = 0;
    for file in &files {
        let body: Value = serde_json::from_str(&read(&format!("admission/{file}"))).unwrap();
        let request = &body["request"];
        let endpoint = endpoint_of(file);
        let review = h.review(endpoint, &body).await;
        assert_eq!(review.api_version, "admission.k8s.io/v1", "{file}");
        assert_eq!(review.kind, "AdmissionReview", "{file}");
        let r = review.response;
        assert_eq!(r.uid, request["uid"].as_str().unwrap(), "{file}");
        // One captured bare Pod runs `redis-cli -h redis ping` as its liveness probe: a dependency.
        let coupled = file.starts_with("pod-create-second-namespace-team-b");
        if coupled && endpoint == "/validate" {
            assert!(!r.allowed, "{file}: a bare Pod whose liveness pings another service is denied");
            let message = r.status.unwrap().message;
            assert!(message.contains("container worker:") && message.contains("redis"), "{message}");
            assert!(message.contains("(liveness-dependency)"), "{message}");
            continue;
        }
        assert!(r.allowed, "{file}: the other captured objects are admissible: {:?}", r.status);
        if endpoint == "/validate" || request["operation"] == "UPDATE" {
            assert!(r.patch.is_none(), "{file}: no patch on /validate or UPDATE");
            continue;
        }
        let is_pod = request["kind"]["kind"] == "Pod";
        if !is_pod {
            assert!(r.patch.is_none(), "{file}: templates are not patched by default");
            continue;
        }
        let Some(b64) = r.patch else { continue };
        patched += 1;
        let object = &request["object"];
        let after = apply(object, &decode_patch(&b64));
        let pod = parse_pod(&after);
        // Fields our typed model does not know survive, and nothing but our members changed.
        assert_eq!(after["metadata"], object["metadata"], "{file}");
        for c in pod.spec.as_ref().unwrap().containers.iter() {
            if let Some(l) = &c.liveness_probe {
                assert!(l.timeout_seconds.unwrap_or(1) >= 3, "{file}");
                // A coupled liveness handler is never copied into a startup probe.
                assert_eq!(c.startup_probe.is_some(), !coupled, "{file}");
            }
        }
        // Reinvocation with the patched object: no patch.
        let mut again = body.clone();
        again["request"]["object"] = after.clone();
        let r2 = h.review("/mutate", &again).await.response;
        assert!(r2.patch.is_none(), "{file}: second call patched again");
        // The validating call on the patched object admits it.
        let r3 = h.review("/validate", &again).await.response;
        assert_eq!(r3.allowed, !coupled, "{file}");
        assert!(r3.patch.is_none(), "{file}");
    }
    assert!(patched >= 5, "expected several captured Pods to be patched, got {patched}");
}

fn coupled_pod(owner: Option<Value>) -> Value {
    let mut metadata = json!({"name": "api-1", "namespace": "shop"});
    if let Some(o) = owner {
        metadata["ownerReferences"] = json!([o]);
    }
    json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": metadata,
        "spec": {"containers": [{
            "name": "api", "image": "api:1",
            "ports": [{"containerPort": 8080}],
            "livenessProbe": {"httpGet": {"host": "orders-db.shop.svc", "path": "/ping", "port": 5432}},
            "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}, "timeoutSeconds": 2}
        }]}
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn denials_warnings_owners_updates_and_dry_run() {
    let h = start(Policy::default()).await;
    // A bare Pod whose liveness reaches another host is denied with 403 and a message per violation.
    let pod = coupled_pod(None);
    let r = h.review("/validate", &review("CREATE", &pod, None, "d1")).await.response;
    assert!(!r.allowed);
    let status = r.status.expect("status on denial");
    assert_eq!(status.code, 403);
    assert!(status.message.contains("container api: "), "{}", status.message);
    assert!(status.message.contains("orders-db.shop.svc"), "{}", status.message);
    assert!(status.message.contains("(liveness-dependency)"), "{}", status.message);
    assert!(r.patch.is_none());
    // Dry run: the same answer.
    let mut dry = review("CREATE", &pod, None, "d2");
    dry["request"]["dryRun"] = json!(true);
    let r2 = h.review("/validate", &dry).await.response;
    assert_eq!((r2.allowed, r2.status.map(|s| s.message)), (false, Some(status.message.clone())));
    // The same Pod owned by a ReplicaSet, created by the ReplicaSet controller, is warned, not
    // denied, and the warning names the identity that made the difference.
    let owned = coupled_pod(Some(
        json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "api-6d4f", "uid": "x", "controller": true}),
    ));
    let r =
        h.review("/validate", &review_as("CREATE", &owned, None, "d3", REPLICASET_CONTROLLER)).await.response;
    assert!(r.allowed);
    let warnings = r.warnings.unwrap();
    let expected = format!(
        "probegate: not denied (ReplicaSet api-6d4f owns it, trusted controller {REPLICASET_CONTROLLER} creates it): container api:"
    );
    assert!(
        warnings.iter().any(|w| w.starts_with(&expected) && w.ends_with("(liveness-dependency)")),
        "{warnings:?}"
    );
    assert!(warnings.iter().all(|w| w.chars().count() < 256));
    assert_eq!(r.audit_annotations.unwrap()["trusted-controller"], REPLICASET_CONTROLLER);
    // The same Pod with the same ownerReference written by hand (an ordinary user) is denied like
    // a bare Pod: the API server does not check that the owner exists. The message says why.
    for user in ["alice", "system:serviceaccount:shop:deployer", ""] {
        let r = h.review("/validate", &review_as("CREATE", &owned, None, "d3f", user)).await.response;
        assert!(!r.allowed, "{user}: {r:?}");
        let message = r.status.unwrap().message;
        assert!(
            message.contains("orders-db.shop.svc") && message.contains("(liveness-dependency)"),
            "{message}"
        );
        assert!(
            message.contains("ReplicaSet api-6d4f is named as its controller")
                && message.contains("not a trusted controller"),
            "{message}"
        );
        if !user.is_empty() {
            assert!(message.contains(user), "{message}");
        }
    }
    // So is a bare Pod by the controller's identity: trust relaxes owned objects only.
    let r =
        h.review("/validate", &review_as("CREATE", &pod, None, "d3g", REPLICASET_CONTROLLER)).await.response;
    assert!(!r.allowed);
    // So is a ReplicaSet its Deployment makes, and a Job its CronJob makes: denying them would
    // silently stall a rollout (or a schedule) of a workload admitted before.
    for (api_version, kind, owner_kind) in
        [("apps/v1", "ReplicaSet", "Deployment"), ("batch/v1", "Job", "CronJob")]
    {
        let owner_api_version = api_version;
        let mut spec = pod["spec"].clone();
        if kind == "Job" {
            spec["restartPolicy"] = json!("Never");
        }
        let made = json!({"apiVersion": api_version, "kind": kind,
            "metadata": {"name": "api-7d9f", "namespace": "shop",
                "ownerReferences": [{"apiVersion": owner_api_version, "kind": owner_kind, "name": "api", "uid": "u", "controller": true}]},
            "spec": {"selector": {}, "template": {"metadata": {}, "spec": spec}}});
        let controller = if kind == "Job" { "cronjob-controller" } else { "deployment-controller" };
        let made_by = format!("system:serviceaccount:kube-system:{controller}");
        let r = h.review("/validate", &review_as("CREATE", &made, None, "d3b", &made_by)).await.response;
        assert!(r.allowed, "{kind}: {r:?}");
        let w = r.warnings.unwrap();
        assert!(
            w.iter().any(|w| w
                .contains(&format!("not denied ({owner_kind} api owns it, trusted controller {made_by}"))),
            "{w:?}"
        );
        // With one credential for every controller, the controller manager is trusted as well.
        let r = h
            .review("/validate", &review_as("CREATE", &made, None, "d3e", "system:kube-controller-manager"))
            .await
            .response;
        assert!(r.allowed, "{kind}: {r:?}");
        // Made by anyone else, it is denied.
        assert!(
            !h.review("/validate", &review("CREATE", &made, None, "d3h")).await.response.allowed,
            "{kind}"
        );
        // Without the owner it is denied.
        let mut bare = made.clone();
        bare["metadata"].as_object_mut().unwrap().remove("ownerReferences");
        assert!(
            !h.review("/validate", &review("CREATE", &bare, None, "d3c")).await.response.allowed,
            "{kind}"
        );
    }
    // An owner whose template probegate never saw (a custom resource, a Pod, a kind in the wrong
    // group) does not relax the denial: rules.md §4.2, enforce for unknown owners.
    for (api_version, owner_kind) in
        [("argoproj.io/v1alpha1", "Rollout"), ("v1", "Pod"), ("example.com/v1", "Deployment")]
    {
        let owned = coupled_pod(Some(
            json!({"apiVersion": api_version, "kind": owner_kind, "name": "x", "uid": "x", "controller": true}),
        ));
        let r = h
            .review("/validate", &review_as("CREATE", &owned, None, "d3d", REPLICASET_CONTROLLER))
            .await
            .response;
        assert!(!r.allowed, "{api_version} {owner_kind}");
    }
    // A forged owner without controller: true does not help.
    let forged =
        coupled_pod(Some(json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "x", "uid": "x"})));
    assert!(
        !h.review("/validate", &review_as("CREATE", &forged, None, "d4", REPLICASET_CONTROLLER))
            .await
            .response
            .allowed
    );
    // UPDATE of a Pod (a label change): never denied for what it already had.
    let mut relabelled = pod.clone();
    relabelled["metadata"]["labels"] = json!({"team": "b"});
    let r = h.review("/validate", &review("UPDATE", &relabelled, Some(&pod), "d5")).await.response;
    assert!(r.allowed, "{r:?}");
    // A Deployment is denied at once (so kubectl apply fails, not its ReplicaSet later)...
    let template = json!({"metadata": {"labels": {"app": "api"}}, "spec": pod["spec"].clone()});
    let deploy = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api", "namespace": "shop"},
        "spec": {"selector": {"matchLabels": {"app": "api"}}, "template": template}});
    assert!(!h.review("/validate", &review("CREATE", &deploy, None, "d6")).await.response.allowed);
    // ...but an UPDATE that only bumps the image of a Deployment that already had it is not.
    let mut bumped = deploy.clone();
    bumped["spec"]["template"]["spec"]["containers"][0]["image"] = json!("api:2");
    let r = h.review("/validate", &review("UPDATE", &bumped, Some(&deploy), "d7")).await.response;
    assert!(r.allowed, "{r:?}");
    // An UPDATE that introduces the coupling is denied.
    let mut clean = deploy.clone();
    clean["spec"]["template"]["spec"]["containers"][0]["livenessProbe"] =
        json!({"httpGet": {"path": "/livez", "port": 8080}});
    assert!(!h.review("/validate", &review("UPDATE", &deploy, Some(&clean), "d8")).await.response.allowed);
    // /mutate of a Pod on UPDATE: never a patch.
    let r = h.review("/mutate", &review("UPDATE", &relabelled, Some(&pod), "d9")).await.response;
    assert!(r.patch.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn untouched_requests_subresources_deletes_and_other_kinds() {
    let h = start(Policy::default()).await;
    let pod = coupled_pod(None);
    let mut sub = review("UPDATE", &pod, Some(&pod), "s1");
    sub["request"]["subResource"] = json!("status");
    let mut del = review("DELETE", &pod, None, "s2");
    del["request"]["object"] = Value::Null;
    del["request"]["oldObject"] = pod.clone();
    let mut connect =
        review("CONNECT", &json!({"apiVersion": "v1", "kind": "PodExecOptions", "metadata": {}}), None, "s3");
    connect["request"]["kind"] = json!({"group": "", "version": "v1", "kind": "PodExecOptions"});
    connect["request"]["subResource"] = json!("exec");
    let svc = review(
        "CREATE",
        &json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {"ports": "weird"}}),
        None,
        "s4",
    );
    let mut eph = review("UPDATE", &pod, Some(&pod), "s5");
    eph["request"]["subResource"] = json!("ephemeralcontainers");
    for body in [sub, del, connect, svc, eph] {
        for path in ["/validate", "/mutate"] {
            let r = h.review(path, &body).await.response;
            assert!(r.allowed && r.patch.is_none() && r.warnings.is_none(), "{path} {body}");
            assert_eq!(r.uid, body["request"]["uid"].as_str().unwrap());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_clear_errors_and_the_server_keeps_serving() {
    let h = start(Policy::default()).await;
    let pod = coupled_pod(None);
    let mut no_uid = review("CREATE", &pod, None, "x");
    no_uid["request"].as_object_mut().unwrap().remove("uid");
    let mut beta = review("CREATE", &pod, None, "x");
    beta["apiVersion"] = json!("admission.k8s.io/v1beta1");
    let mut not_a_pod = review("CREATE", &pod, None, "x");
    not_a_pod["request"]["object"]["spec"]["containers"] = json!("nope");
    let mut no_spec = review("CREATE", &pod, None, "x");
    no_spec["request"]["object"].as_object_mut().unwrap().remove("spec");
    // 3 bytes of body per entry, a few hundred bytes each once parsed: refused before parsing.
    let mut env_bomb = review("CREATE", &pod, None, "x");
    env_bomb["request"]["object"]["spec"]["containers"][0]["env"] = json!(vec![json!({}); 1_000_000]);
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("not JSON", b"{{{ not json".to_vec(), "invalid JSON"),
        ("empty body", Vec::new(), "empty"),
        ("not an AdmissionReview", b"{\"hello\": 1}".to_vec(), "AdmissionReview"),
        ("array", b"[1,2,3]".to_vec(), "AdmissionReview"),
        (
            "no request",
            br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#.to_vec(),
            "no request",
        ),
        ("no uid", serde_json::to_vec(&no_uid).unwrap(), "uid"),
        ("v1beta1", serde_json::to_vec(&beta).unwrap(), "admission.k8s.io/v1"),
        ("invalid Pod", serde_json::to_vec(&not_a_pod).unwrap(), "not a valid Pod"),
        ("Pod without spec", serde_json::to_vec(&no_spec).unwrap(), "no pod spec"),
        ("a million empty env entries", serde_json::to_vec(&env_bomb).unwrap(), "JSON objects and arrays"),
    ];
    for (what, body, expect) in cases {
        for path in ["/validate", "/mutate"] {
            let r = h
                .client
                .post(h.url(path))
                .header("content-type", "application/json")
                .body(body.clone())
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 400, "{what}");
            let v: Value = r.json().await.unwrap_or_else(|e| panic!("{what}: error body is not JSON: {e}"));
            let msg = v["error"].as_str().unwrap_or_default();
            assert!(msg.contains(expect), "{what}: {msg}");
            h.healthy().await;
        }
    }
    // Wrong content type.
    let r = h
        .client
        .post(h.url("/validate"))
        .header("content-type", "text/plain")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 415);
    let v: Value = r.json().await.expect("a JSON body");
    assert_eq!(v["status"], 415, "{v}");
    assert!(v["error"].as_str().unwrap().contains("application/json"), "{v}");
    // A body over the limit: 413, and the server is still up.
    let huge = vec![b' '; server::MAX_BODY_BYTES + 1024];
    let r = h
        .client
        .post(h.url("/validate"))
        .header("content-type", "application/json")
        .body(huge)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 413);
    let v: Value = r.json().await.expect("a JSON body");
    assert!(v["error"].as_str().unwrap().contains("4 MiB"), "{v}");
    h.healthy().await;
    // A large but legal UPDATE (two ~1.4 MiB objects) is handled normally.
    let mut big = pod.clone();
    big["metadata"]["annotations"] =
        json!({"kubectl.kubernetes.io/last-applied-configuration": "x".repeat(1_400_000)});
    let r = h.review("/validate", &review("UPDATE", &big, Some(&big), "big")).await.response;
    assert!(r.allowed);
    // Unknown paths: 404 with a JSON body.
    let r = h.client.get(h.url("/nope")).send().await.unwrap();
    assert_eq!(r.status(), 404);
    let v: Value = r.json().await.expect("a JSON body");
    assert_eq!(v["status"], 404, "{v}");
    h.healthy().await;
}

/// JSON is UTF-8 (RFC 8259, section 8.1): a review declared in another charset is refused with 415
/// and says why, before its body is read (break-it pass, issue 10: `charset=utf-16` was accepted
/// and its body read as UTF-8). UTF-8, US-ASCII (a subset of it) and no charset are read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_in_a_charset_other_than_utf8_is_refused_with_415() {
    let h = start(Policy::default()).await;
    let body = serde_json::to_vec(&review("CREATE", &coupled_pod(None), None, "cs1")).unwrap();
    for charset in ["utf-16", "UTF-16LE", "iso-8859-1", "\"utf-32\"", "latin1", ""] {
        for path in ["/validate", "/mutate"] {
            let content_type = format!("application/json; charset={charset}");
            let r = h
                .client
                .post(h.url(path))
                .header("content-type", &content_type)
                .body(body.clone())
                .send()
                .await;
            let r = r.unwrap();
            assert_eq!(r.status(), 415, "{content_type}");
            let v: Value = r.json().await.expect("a JSON body");
            let msg = v["error"].as_str().unwrap_or_default();
            assert!(msg.contains("UTF-8") && msg.contains("charset"), "{content_type}: {msg}");
        }
    }
    for content_type in [
        "application/json",
        "application/json; charset=utf-8",
        "application/json;charset=UTF-8",
        "application/json; charset=\"utf-8\"",
        "Application/JSON; charset=us-ascii",
        "application/json; foo=bar",
    ] {
        let r = h
            .client
            .post(h.url("/validate"))
            .header("content-type", content_type)
            .body(body.clone())
            .send()
            .await;
        let r = r.unwrap();
        assert_eq!(r.status(), 200, "{content_type}");
        let v: Value = r.json().await.unwrap();
        assert_eq!(v["response"]["allowed"], false, "{content_type}: {v}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_fields_survive_and_indexes_skip_foreign_containers() {
    let h = start(Policy::default()).await;
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"generateName": "web-", "namespace": "default", "annotations": {"a.example.com/x~y": "1"}},
        "spec": {
            "futureSpecField": {"keep": true},
            "initContainers": [
                {"name": "init", "image": "busybox", "command": ["true"]},
                {"name": "mesh", "image": "proxy", "restartPolicy": "Always", "futureField": 1,
                 "livenessProbe": {"tcpSocket": {"port": 15000}, "timeoutSeconds": 1, "futureProbeField": "k"}}
            ],
            "containers": [
                {"name": "injected", "image": "other"},
                {"name": "web", "image": "nginx", "ports": [{"containerPort": 80}], "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"}],
                 "livenessProbe": {"httpGet": {"path": "/", "port": 80}, "timeoutSeconds": 1}}
            ]
        }
    });
    let r = h.review("/mutate", &review("CREATE", &pod, None, "u")).await.response;
    let patch = decode_patch(&r.patch.unwrap());
    let text = serde_json::to_string(&patch).unwrap();
    assert!(text.contains("/spec/containers/1/"), "{text}");
    assert!(text.contains("/spec/initContainers/1/"), "{text}");
    assert!(!text.contains("/spec/containers/0/") && !text.contains("/spec/initContainers/0/"), "{text}");
    assert!(
        !text.contains("future") && !text.contains("resizePolicy") && !text.contains("restartPolicy"),
        "{text}"
    );
    let after = apply(&pod, &patch);
    assert_eq!(after["spec"]["futureSpecField"], json!({"keep": true}));
    assert_eq!(after["spec"]["initContainers"][1]["futureField"], 1);
    assert_eq!(after["spec"]["initContainers"][1]["restartPolicy"], "Always");
    assert_eq!(after["spec"]["initContainers"][1]["livenessProbe"]["futureProbeField"], "k");
    assert_eq!(after["spec"]["initContainers"][1]["livenessProbe"]["timeoutSeconds"], 3);
    assert_eq!(after["spec"]["containers"][1]["lifecycle"]["preStop"]["sleep"]["seconds"], 5);
    parse_pod(&after);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hardening_secrets_mirror_pods_ratchet_and_missing_objects() {
    let h = start(Policy::default()).await;
    // A wrong-typed env entry: the 400 names the problem, never the value.
    let mut bad = coupled_pod(None);
    bad["spec"]["containers"][0]["env"] = json!(["hunter2-SECRET"]);
    let (status, v) = h.post("/validate", &review("CREATE", &bad, None, "h1")).await;
    assert_eq!(status, 400);
    assert!(!v.to_string().contains("hunter2"), "{v}");
    assert!(v["error"].as_str().unwrap().contains("not a valid Pod"), "{v}");
    // The mirror-Pod annotation only counts when a kubelet sends the Pod.
    let mut mirror = coupled_pod(None);
    mirror["metadata"]["annotations"] = json!({"kubernetes.io/config.mirror": "x"});
    let body = review("CREATE", &mirror, None, "h2");
    assert!(!h.review("/validate", &body).await.response.allowed, "a user cannot claim to be a mirror Pod");
    let mut from_node = body.clone();
    from_node["request"]["userInfo"] =
        json!({"username": "system:node:worker-1", "groups": ["system:nodes"]});
    assert!(h.review("/validate", &from_node).await.response.allowed);
    // Ratcheting compares what the finding says: pointing at another host is a new violation.
    let mut moved = coupled_pod(None);
    moved["metadata"]["ownerReferences"] = Value::Null;
    let template = |pod: &Value| {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api", "namespace": "shop"},
        "spec": {"selector": {}, "template": {"metadata": {}, "spec": pod["spec"].clone()}}})
    };
    let old = template(&coupled_pod(None));
    moved["spec"]["containers"][0]["livenessProbe"]["httpGet"]["host"] = json!("payments-db.shop.svc");
    let new = template(&moved);
    assert!(!h.review("/validate", &review("UPDATE", &new, Some(&old), "h3")).await.response.allowed);
    assert!(h.review("/validate", &review("UPDATE", &old, Some(&old), "h4")).await.response.allowed);
    // A CREATE of a Pod without an object is malformed.
    let mut empty = review("CREATE", &coupled_pod(None), None, "h5");
    empty["request"]["object"] = Value::Null;
    let (status, v) = h.post("/validate", &empty).await;
    assert_eq!(status, 400, "{v}");
    // Metric labels stay bounded: unknown kinds are counted as "other".
    let mut weird =
        review("CREATE", &json!({"apiVersion": "v1", "kind": "Weird", "metadata": {}}), None, "h6");
    weird["request"]["kind"]["kind"] = json!("Weird\nKind");
    assert!(h.review("/validate", &weird).await.response.allowed);
    let metrics = h.client.get(h.url("/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(!metrics.contains("Weird") && metrics.contains("kind=\"other\""), "{metrics}");
}

/// Writes `request` over a raw TLS connection (HTTP/1.1, as written: a client that declares a body
/// it never sends) and returns what the server answers, up to its closing or 10 s.
fn raw_https_exchange(addr: SocketAddr, ca_pem: &str, request: &str) -> String {
    use std::io::{Read, Write};
    let mut tls = raw_tls(addr, ca_pem);
    tls.write_all(request.as_bytes()).unwrap();
    tls.flush().unwrap();
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tls.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                answer.extend_from_slice(&buf[..n]);
                if String::from_utf8_lossy(&answer).contains("\"status\"") {
                    break;
                }
            }
            Err(_) => break,
        }
    }
    String::from_utf8_lossy(&answer).into_owned()
}

/// An HTTP/1.1 keep-alive connection idle for longer than the 10 s first-request bound still
/// serves its next request (docs/server.md: idle connections close after 120 s, past the API
/// server's own 90 s). hyper's header read timeout also covers the wait between requests, and at
/// 10 s it closed the connection here (break-it finding, session 10).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_http1_keep_alive_connection_outlives_the_first_request_bound() {
    let h = start(Policy::default()).await;
    let (addr, ca) = (h.addr, h.ca.clone());
    let answers = tokio::task::spawn_blocking(move || {
        use std::io::{Read, Write};
        let mut tls = raw_tls(addr, &ca);
        tls.sock.set_read_timeout(Some(std::time::Duration::from_secs(30))).unwrap();
        let request = "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n";
        let mut answers = Vec::new();
        for round in 0..2 {
            if round == 1 {
                // The idle time under test: longer than the 10 s first-request bound.
                std::thread::sleep(std::time::Duration::from_secs(12));
            }
            if tls.write_all(request.as_bytes()).and_then(|()| tls.flush()).is_err() {
                answers.push(String::from("(write failed: closed)"));
                break;
            }
            let mut buf = [0u8; 4096];
            let n = tls.read(&mut buf).unwrap_or(0);
            answers.push(String::from_utf8_lossy(&buf[..n]).into_owned());
        }
        answers
    })
    .await
    .unwrap();
    assert_eq!(answers.len(), 2, "{answers:?}");
    for a in &answers {
        assert!(a.starts_with("HTTP/1.1 200"), "{answers:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn framework_errors_are_json_and_a_declared_oversize_body_is_refused_before_it_is_read() {
    let h = start(Policy::default()).await;
    // Wrong method: 405 with the JSON error body and the Allow header.
    let r = h.client.get(h.url("/validate")).send().await.unwrap();
    assert_eq!(r.status(), 405);
    assert!(r.headers().get("allow").is_some_and(|v| v.to_str().unwrap().contains("POST")));
    let v: Value = r.json().await.expect("a JSON body");
    assert_eq!(v["status"], 405);
    assert_eq!(v["error"], "method not allowed: /validate takes POST, not GET", "{v}");
    // A body over the limit: the same JSON shape.
    let r = h
        .client
        .post(h.url("/mutate"))
        .header("content-type", "application/json")
        .body(vec![b' '; server::MAX_BODY_BYTES + 1])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 413);
    let v: Value = r.json().await.expect("a JSON body");
    assert!(v["error"].as_str().unwrap().contains("4 MiB"), "{v}");
    // A client that declares 10 MB and sends one byte: 413 at once (waiting for the body would
    // end in the request timeout's 408).
    let (addr, ca) = (h.addr, h.ca.clone());
    let answer = tokio::task::spawn_blocking(move || {
        raw_https_exchange(
            addr,
            &ca,
            "POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n{",
        )
    })
    .await
    .unwrap();
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.to_ascii_lowercase().contains("content-type: application/json"), "{answer}");
    // A review declared as text/plain whose body never comes: 415 at once, not the 408 that
    // waiting for the body would end in.
    let (addr, ca) = (h.addr, h.ca.clone());
    let answer = tokio::task::spawn_blocking(move || {
        raw_https_exchange(
            addr,
            &ca,
            "POST /mutate HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n",
        )
    })
    .await
    .unwrap();
    assert!(answer.starts_with("HTTP/1.1 415"), "{answer}");
    assert!(answer.contains("Content-Type must be application/json"), "{answer}");
    // A body in a transfer coding the server does not decode (gzip under the chunking): 501
    // (RFC 9112 §6.1), not a review read from compressed bytes; plain chunked is read as usual.
    let body = serde_json::to_string(&review(
        "CREATE",
        &json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x"}]}}),
        None,
        "te1",
    ))
    .unwrap();
    let refused = || async {
        let metrics = h.client.get(h.url("/metrics")).send().await.unwrap().text().await.unwrap();
        metrics
            .lines()
            .filter(|l| {
                l.starts_with("probegate_admission_requests_total{") && l.contains("result=\"refused\"")
            })
            .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
            .sum::<u64>()
    };
    let refused_before = refused().await;
    for (coding, want) in [("gzip, chunked", "HTTP/1.1 501"), ("Chunked", "HTTP/1.1 200")] {
        let (addr, ca) = (h.addr, h.ca.clone());
        let request = format!(
            "POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
             Transfer-Encoding: {coding}\r\nConnection: close\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
            body.len()
        );
        let answer =
            tokio::task::spawn_blocking(move || raw_https_exchange(addr, &ca, &request)).await.unwrap();
        assert!(answer.starts_with(want), "{coding}: {answer}");
        if want.ends_with("501") {
            assert!(answer.contains(r#"transfer coding \"gzip\" is not supported"#), "{answer}");
        } else {
            assert!(answer.contains(r#""allowed":true"#), "{answer}");
        }
    }
    // The 501 is counted as refused (answered before the body was read), the 200 is not.
    assert_eq!(refused().await, refused_before + 1);
    h.healthy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_bodies_share_a_budget_and_small_reviews_never_wait_for_it() {
    use std::io::Write;
    let h = start(Policy::default()).await;
    let state = std::sync::Arc::clone(&h.running.state);
    let full = server::LARGE_BODY_BUDGET_BYTES;
    assert_eq!(state.large_body_budget_available(), full);
    let wait_for = |want: usize| {
        let state = std::sync::Arc::clone(&state);
        async move {
            for _ in 0..300 {
                if state.large_body_budget_available() == want {
                    return;
                }
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            panic!("budget {} of {full}, expected {want}", state.large_body_budget_available());
        }
    };
    // Slow uploads that declare the largest body accepted and send one byte of it take the whole
    // budget between them (each is dropped by the 4 s request timeout at the latest).
    let mut stalled = Vec::new();
    for _ in 0..full / server::MAX_BODY_BYTES {
        let (addr, ca) = (h.addr, h.ca.clone());
        let upload = tokio::task::spawn_blocking(move || {
            let mut tls = raw_tls(addr, &ca);
            let head = format!(
                "POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{{",
                server::MAX_BODY_BYTES
            );
            tls.write_all(head.as_bytes()).unwrap();
            tls.flush().unwrap();
            tls
        });
        stalled.push(upload.await.unwrap());
    }
    wait_for(0).await;
    // A small review is answered while the budget is spent.
    let r = h.review("/validate", &review("CREATE", &coupled_pod(None), None, "small")).await.response;
    assert!(!r.allowed);
    assert_eq!(state.large_body_budget_available(), 0, "the uploads still hold the budget");
    // A large one (over 64 KiB) waits for room instead of being read...
    let mut big = coupled_pod(None);
    big["metadata"]["annotations"] = json!({"example.com/notes": "x".repeat(100 * 1024)});
    let body = review("CREATE", &big, None, "large");
    let (client, url) = (h.client.clone(), h.url("/validate"));
    let large = tokio::spawn(async move { client.post(url).json(&body).send().await.unwrap() });
    poll_gauge("large bodies waiting", 1, || state.metrics.bodies_waiting(Budget::Large)).await;
    assert!(!large.is_finished(), "a large body was read while the budget was spent");
    assert_eq!(state.large_body_budget_available(), 0, "the waiting body holds no share");
    // ... and is answered once the uploads hang up.
    drop(stalled);
    let answer = large.await.unwrap();
    assert_eq!(answer.status(), 200);
    let v: Value = answer.json().await.unwrap();
    assert_eq!(v["response"]["allowed"], false, "{v}");
    wait_for(full).await;
    assert_eq!(state.metrics.bodies_waiting(Budget::Large), 0);
    h.healthy().await;
}

/// Polls `gauge` every 10 ms until it reads `want`, for up to 10 s.
async fn poll_gauge(what: &str, want: i64, gauge: impl Fn() -> i64) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while gauge() != want {
        assert!(std::time::Instant::now() < deadline, "{what}: {}, expected {want}", gauge());
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// Issue 9's costliest review: a 37 KiB Pod of 14 containers whose liveness scripts each set `V`
/// to 1000 words and run `f $V` 160 times (benches/engine.rs has the same shape).
fn expensive_review(uid: &str) -> Value {
    let words = vec!["w"; 1000].join(" ");
    let script = format!("V=\"{words}\"; {}", "f $V; ".repeat(160));
    let containers: Vec<Value> = (0..14)
        .map(|i| json!({"name": format!("c{i}"), "image": "x", "livenessProbe": {"exec": {"command": ["sh", "-c", script]}}}))
        .collect();
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "flood", "namespace": "shop"},
        "spec": {"containers": containers}});
    review("CREATE", &pod, None, uid)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_review_with_an_exec_probe_does_not_queue_behind_expensive_ones() {
    let h = start(Policy::default()).await;
    let state = std::sync::Arc::clone(&h.running.state);
    let body = serde_json::to_vec(&expensive_review("flood")).unwrap();
    assert_eq!(server::Lane::of(&body), server::Lane::Expensive, "{} bytes", body.len());
    // More expensive reviews than the blocking pool has places: one runs, the others queue.
    let n = server::MAX_BLOCKING_EVALUATIONS as i64 + 12;
    let mut flood = Vec::new();
    for _ in 0..n {
        let (client, url, body) = (h.client.clone(), h.url("/validate"), body.clone());
        flood.push(tokio::spawn(async move {
            client
                .post(url)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .map(|r| r.status())
        }));
    }
    let expensive = |f: fn(&server::metrics::Metrics, LaneName) -> i64| {
        let state = std::sync::Arc::clone(&state);
        move || f(&state.metrics, LaneName::Expensive)
    };
    poll_gauge("expensive reviews evaluated", 1, expensive(server::metrics::Metrics::evaluations_running))
        .await;
    poll_gauge("expensive reviews waiting", n - 1, expensive(server::metrics::Metrics::evaluations_waiting))
        .await;
    // A small review whose liveness probe runs a database client against another host: on the
    // blocking pool too (it has an exec handler), in the small lane.
    let mut pod = coupled_pod(None);
    pod["spec"]["containers"][0]["livenessProbe"] =
        json!({"exec": {"command": ["pg_isready", "-h", "orders-db.shop.svc"]}});
    let small = review("CREATE", &pod, None, "small");
    assert_eq!(server::Lane::of(&serde_json::to_vec(&small).unwrap()), server::Lane::Small);
    let r = h.review("/validate", &small).await.response;
    assert!(!r.allowed);
    assert_eq!(r.status.expect("status on denial").code, 403);
    // It was answered while the expensive ones were still queued: it did not wait behind them.
    let still_waiting = state.metrics.evaluations_waiting(LaneName::Expensive);
    assert!(still_waiting > 0, "the expensive queue had drained ({still_waiting} waiting)");
    assert!(
        state.metrics.evaluations_running(LaneName::Expensive) <= server::MAX_EXPENSIVE_EVALUATIONS as i64
    );
    // The expensive ones are answered or time out (408) in turn; none is refused otherwise.
    for f in flood {
        let status = f.await.unwrap().unwrap();
        assert!(status == 200 || status == 408, "{status}");
    }
    poll_gauge("expensive reviews evaluated", 0, expensive(server::metrics::Metrics::evaluations_running))
        .await;
    assert_eq!(state.metrics.evaluations_waiting(LaneName::Expensive), 0);
    h.healthy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_connection_cap_an_idle_connection_makes_room_for_a_new_one() {
    use tokio::io::AsyncReadExt;
    let (running, ca) = start_server(Policy::default(), |c| c.max_connections = 4).await;
    // Four connections that never send a byte fill the cap...
    let mut idle = Vec::new();
    for _ in 0..4 {
        idle.push(tokio::net::TcpStream::connect(running.addr).await.unwrap());
    }
    // ... and stay idle past the eviction threshold.
    tokio::time::sleep(server::conn::EVICT_AFTER + std::time::Duration::from_millis(300)).await;
    // A real client is answered: the longest-idle connection was closed to make room.
    let client = https_client(&[&ca], true);
    let url = format!("https://localhost:{}/validate", running.addr.port());
    let r = client.post(&url).json(&review("CREATE", &coupled_pod(None), None, "cap")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let mut closed = 0;
    for conn in &mut idle {
        let mut buf = [0u8; 1];
        let read = tokio::time::timeout(std::time::Duration::from_millis(200), conn.read(&mut buf)).await;
        if matches!(read, Ok(Ok(0)) | Ok(Err(_))) {
            closed += 1;
        }
    }
    assert_eq!(closed, 1, "exactly one idle connection is closed");
    // Keep-alive: the same client's connection is reused while it has requests (not evicted by
    // its own next request).
    let r = client.post(&url).json(&review("CREATE", &coupled_pod(None), None, "cap2")).send().await.unwrap();
    assert_eq!(r.status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_text_is_escaped_bounded_and_values_stay_redacted() {
    let h = start(Policy::default()).await;
    let unsafe_char = |c: char| c.is_control() || matches!(c, '\u{202E}' | '\u{2028}' | '\u{200B}');
    // A container name and a Pod name with escape sequences, a newline, a bidi override and a line
    // separator: the denial and the warnings escape them (kubectl prints both to a terminal).
    let mut pod = coupled_pod(None);
    pod["metadata"]["name"] = json!("api\u{1b}]0;owned\u{7}\u{202E}");
    pod["spec"]["containers"][0]["name"] = json!("api\n\u{1b}[31mred\u{2028}x");
    let r = h.review("/validate", &review("CREATE", &pod, None, "e1")).await.response;
    let message = r.status.unwrap().message;
    assert!(!message.chars().any(unsafe_char), "{message:?}");
    assert!(message.contains("\\u{1b}[31mred"), "{message:?}");
    let mut owned = pod.clone();
    owned["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs\u{1b}[2J", "uid": "u", "controller": true}]);
    owned["metadata"]["annotations"] = json!({"probegate.dev/skip": "nope\u{1b}[2J,liveness-dependency"});
    let r =
        h.review("/validate", &review_as("CREATE", &owned, None, "e2", REPLICASET_CONTROLLER)).await.response;
    let warnings = r.warnings.unwrap_or_default();
    assert!(warnings.len() >= 2, "{warnings:?}");
    for w in &warnings {
        assert!(!w.chars().any(unsafe_char), "{w:?}");
        assert!(w.chars().count() < 256, "{w:?}");
    }
    // A 3 MB apiVersion is not echoed whole.
    let mut long = review("CREATE", &coupled_pod(None), None, "e3");
    long["apiVersion"] = json!("v".repeat(3_000_000));
    let (status, v) = h.post("/validate", &long).await;
    assert_eq!(status, 400);
    assert!(v["error"].as_str().unwrap().contains("AdmissionReview"), "{v}");
    assert!(v.to_string().len() < 2_000, "{} bytes", v.to_string().len());
    // Values in type errors stay redacted, escaped quotes and enum values included.
    let mut bad = coupled_pod(None);
    bad["spec"]["containers"][0]["ports"] = json!([{"containerPort": "ab\"TOPSECRET"}]);
    let (status, v) = h.post("/validate", &review("CREATE", &bad, None, "e4")).await;
    assert_eq!(status, 400);
    assert!(v["error"].as_str().unwrap().contains("not a valid Pod"), "{v}");
    assert!(!v.to_string().contains("TOPSECRET"), "{v}");
    let mut op = review("CREATE", &coupled_pod(None), None, "e5");
    op["request"]["operation"] = json!("hunter2secret");
    let (status, v) = h.post("/validate", &op).await;
    assert_eq!(status, 400);
    assert!(v["error"].as_str().unwrap().contains("expected one of `CREATE`, `UPDATE`"), "{v}");
    assert!(!v.to_string().contains("hunter2secret"), "{v}");
    h.healthy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_whose_old_object_is_no_pod_is_judged_on_its_new_object() {
    let h = start(Policy::default()).await;
    // An old object that cannot be read as a Pod.
    let unreadable = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "api-1"},
        "spec": {"containers": "not a list"}});
    let mut clean = coupled_pod(None);
    clean["spec"]["containers"][0]["livenessProbe"] = json!({"httpGet": {"path": "/healthz", "port": 8080}});
    // Nothing that would be denied: the old object is not read (a large UPDATE is parsed once).
    let r = h.review("/validate", &review("UPDATE", &clean, Some(&unreadable), "o1")).await.response;
    assert!(r.allowed, "{r:?}");
    // Made by the ReplicaSet controller, a coupled probe is a warning: not read either.
    let mut owned = coupled_pod(Some(
        json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "api-6d4f", "uid": "x", "controller": true}),
    ));
    owned["metadata"]["labels"] = json!({"team": "b"});
    let body = review_as("UPDATE", &owned, Some(&unreadable), "o2", REPLICASET_CONTROLLER);
    assert!(h.review("/validate", &body).await.response.allowed);
    // A finding that would be denied: the old object is read, to see whether it was there before;
    // one that is not a Pod excuses nothing, so the denial stands (it answered 400 before, which
    // hands the verdict to `failurePolicy`; break-it pass, #9).
    let (status, v) =
        h.post("/validate", &review("UPDATE", &coupled_pod(None), Some(&unreadable), "o3")).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["response"]["allowed"], false, "{v}");
    assert!(v["response"]["status"]["message"].as_str().unwrap().contains("liveness-dependency"), "{v}");
    // /mutate patches a template on UPDATE only with templates.mutate (off by default), but an
    // unreadable object is refused there as at /validate (the old object is not read).
    let unreadable_template = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api"},
        "spec": {"template": {"spec": {"containers": "not a list"}}}});
    let body = review("UPDATE", &unreadable_template, Some(&unreadable_template), "o4");
    assert_eq!(h.post("/mutate", &body).await.0, 400);
    let readable = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api"},
        "spec": {"template": {"spec": {"containers": [{"name": "api", "image": "api:1"}]}}}});
    let body = review("UPDATE", &readable, Some(&unreadable_template), "o4b");
    let r = h.review("/mutate", &body).await.response;
    assert!(r.allowed && r.patch.is_none() && r.warnings.is_none(), "{r:?}");
    // A Pod UPDATE at /mutate is read (to restore probegate's own changes that a re-apply would
    // undo: docs/reapply.md), so an unreadable one is refused like any malformed object.
    let (status, v) = h.post("/mutate", &review("UPDATE", &unreadable, Some(&unreadable), "o5")).await;
    assert_eq!(status, 400, "{v}");
}

/// Opens a `/validate` stream declaring `declared` body bytes and queues `body` on it (ending
/// the stream when `body` is all of it).
async fn h2_post(
    client: &mut h2::client::SendRequest<axum::body::Bytes>,
    body: &[u8],
    declared: usize,
) -> (h2::client::ResponseFuture, h2::SendStream<axum::body::Bytes>) {
    let (response, mut send) = common::wire::open_post(client, declared).await;
    // A stream refused at once may be reset before its data is queued (since s24 a stream
    // refused for want of waiting room is reset after its 503, not drained).
    let _ = send.send_data(axum::body::Bytes::copy_from_slice(body), body.len() == declared);
    (response, send)
}

/// Issue 9's stall: on one HTTP/2 connection, large reviews whose bodies wait, unread, for room in
/// the large-body budget must not take the connection's flow-control window, or nothing else on
/// that connection can arrive: a small review sent beside them is answered while they are still
/// pending. Those that never complete time out (408) and are counted in
/// `probegate_admission_requests_total{result="timeout"}`. Since s24 (a 1 MiB connection window)
/// the bodies waiting on one connection hold half its window at most: past it, a review is
/// refused 503 at once (counted as `refused`) instead of waiting; until s23 every one waited,
/// with a 16 MiB connection window that held all of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_one_http2_connection_large_bodies_waiting_for_room_do_not_stall_a_small_review() {
    let h = start(Policy::default()).await;
    let state = std::sync::Arc::clone(&h.running.state);
    let mut client = h2_connection(h.addr, &h.ca).await;
    // The break-it pass's size: a 737 KB review.
    let mut big = coupled_pod(None);
    big["metadata"]["annotations"] = json!({"example.com/notes": "x".repeat(737_000)});
    let big = serde_json::to_vec(&review("CREATE", &big, None, "large")).unwrap();
    let admitted = server::LARGE_BODY_BUDGET_BYTES / big.len();
    let waits = server::WAITING_PER_CONNECTION_BYTES / server::H2_STREAM_WINDOW_BYTES as usize;
    // Every stream but the small review's: the waiting ones hold a stream window each of the
    // connection's window, which must still have room for the small review's body.
    let n = server::H2_MAX_CONCURRENT_STREAMS as usize - 1;
    assert!(n > admitted + waits + 8, "large bodies wait and more are refused");
    // Every large body but its last byte: those admitted are read and then wait for that byte,
    // holding the budget; the others wait for room, unread, or are refused.
    let mut pending = Vec::new();
    for _ in 0..n {
        pending.push(h2_post(&mut client, &big[..big.len() - 1], big.len()).await);
    }
    poll_gauge("large bodies waiting", waits as i64, || state.metrics.bodies_waiting(Budget::Large)).await;
    // A small review on the same connection is read and answered: denied, not 408.
    let small = serde_json::to_vec(&review("CREATE", &coupled_pod(None), None, "small")).unwrap();
    let (response, _send) = h2_post(&mut client, &small, small.len()).await;
    let (status, answer) = answer_of(response).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["response"]["allowed"], false, "{answer}");
    // ... while the large ones admitted or waiting were still pending: none had timed out.
    assert_eq!(state.metrics.bodies_waiting(Budget::Large), waits as i64);
    let mut statuses = Vec::new();
    for (response, _send) in pending {
        statuses.push(response.await.unwrap().status().as_u16());
    }
    // Those past the connection's share were refused at once; the others never complete: each
    // is answered 408 at the request bound, and counted.
    let refused = n - admitted - waits;
    assert_eq!(statuses.iter().filter(|s| **s == 503).count(), refused, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == 408).count(), admitted + waits, "{statuses:?}");
    // A review refused before its body is read (415) is counted too.
    let r = h.client.post(h.url("/validate")).header("content-type", "text/plain").body("{}").send().await;
    assert_eq!(r.unwrap().status(), 415);
    let metrics = h.client.get(h.url("/metrics")).send().await.unwrap().text().await.unwrap();
    let count = |result: &str| -> u64 {
        metrics
            .lines()
            .filter(|l| l.starts_with("probegate_admission_requests_total{"))
            .filter(|l| l.contains(&format!("result=\"{result}\"")))
            .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
            .sum()
    };
    assert_eq!(count("timeout"), (admitted + waits) as u64, "{metrics}");
    assert_eq!(count("refused"), 1 + refused as u64, "{metrics}");
    assert_eq!(count("denied"), 1, "the small review, counted once: {metrics}");
    h.healthy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_inconsistent_review_gets_the_same_400_from_both_endpoints() {
    // The API server decodes objects into their types before it calls a webhook, so it never sends
    // these; a client or proxy that does gets a failed webhook call (HTTP 400, resolved by the
    // configuration's failurePolicy) from /validate and /mutate alike, never a 200 from one of them.
    let h = start(Policy::default()).await;
    let pod = coupled_pod(None);
    let null_template = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api", "namespace": "shop"},
        "spec": {"selector": {"matchLabels": {"app": "api"}}, "template": null}});
    let mut pod_as_deployment = review("CREATE", &pod, None, "i2");
    pod_as_deployment["request"]["kind"] = json!({"group": "apps", "version": "v1", "kind": "Deployment"});
    let empty_job_template = json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly", "namespace": "shop"},
        "spec": {"schedule": "0 1 * * *", "jobTemplate": {}}});
    let cases = [
        ("template: null", review("CREATE", &null_template, None, "i1")),
        ("a Pod sent as a Deployment", pod_as_deployment),
        ("jobTemplate: {}", review("CREATE", &empty_job_template, None, "i3")),
        ("template: null on UPDATE", review("UPDATE", &null_template, Some(&null_template), "i4")),
        // An old object that is not an object: refused whether or not the update would be denied
        // (a denying /validate used to read it and answer 400, /mutate skipped it with 200).
        ("oldObject: \"x\" on a denied UPDATE", review("UPDATE", &pod, Some(&json!("x")), "i6")),
        ("oldObject: 42 on an allowed UPDATE", review("UPDATE", &clean_pod(), Some(&json!(42)), "i7")),
        (
            "oldObject: [] on a template UPDATE",
            review("UPDATE", &whole_deployment(&pod), Some(&json!([])), "i8"),
        ),
    ];
    for (what, body) in cases {
        let (validate, v) = h.post("/validate", &body).await;
        let (mutate, m) = h.post("/mutate", &body).await;
        assert_eq!((validate.as_u16(), mutate.as_u16()), (400, 400), "{what}: {v} / {m}");
        assert_eq!(v["error"], m["error"], "{what}: the same message");
        assert!(v["error"].as_str().is_some_and(|e| !e.is_empty()), "{what}: {v}");
    }
    // The same objects made whole are answered 200 at both.
    let whole = whole_deployment(&pod);
    for path in ["/validate", "/mutate"] {
        h.review(path, &review("CREATE", &whole, None, "i5")).await;
        h.review(path, &review("UPDATE", &whole, Some(&whole), "i9")).await;
        h.review(path, &review("UPDATE", &clean_pod(), Some(&clean_pod()), "i10")).await;
    }
    h.healthy().await;
}

/// A Deployment whose template runs `pod`'s spec.
fn whole_deployment(pod: &Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api", "namespace": "shop"},
        "spec": {"selector": {"matchLabels": {"app": "api"}},
            "template": {"metadata": {"labels": {"app": "api"}}, "spec": pod["spec"].clone()}}})
}

/// A Pod whose probes check only itself: allowed, nothing to patch but what the policy adds.
fn clean_pod() -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "api-2", "namespace": "shop"},
        "spec": {"containers": [{
            "name": "api", "image": "api:1",
            "ports": [{"containerPort": 8080}],
            "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080}},
            "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}, "timeoutSeconds": 2}
        }]}
    })
}

/// A TCP listener on 127.0.0.1 that keeps the first bytes of every connection (a proxy's CONNECT
/// request, an API server's TLS ClientHello).
fn recording_listener() -> (SocketAddr, std::sync::Arc<std::sync::Mutex<Vec<Vec<u8>>>>) {
    use std::io::Read;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = std::sync::Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(5)));
            let mut buf = vec![0u8; 4096];
            let n = stream.read(&mut buf).unwrap_or(0);
            buf.truncate(n);
            record.lock().unwrap().push(buf);
            // Dropped: the client sees the connection closed and retries with back-off.
        }
    });
    (addr, seen)
}

/// Writes a kubeconfig for a token user of the API server at `https://127.0.0.1:PORT` (TLS not
/// verified) into `dir`, and returns its path.
fn kubeconfig_for(dir: &std::path::Path, port: u16) -> std::path::PathBuf {
    let kubeconfig = dir.join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:{port}\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: c\n  context: {{cluster: c, user: u}}\ncurrent-context: c\n"
        ),
    )
    .unwrap();
    kubeconfig
}

/// Break-it pass (s14): behind a proxy, `HTTPS_PROXY=http://u:PW@proxy:3128` was logged whole
/// (twice at start, and on stderr by `--self-managed-tls`), and the Kubernetes client failed to
/// build ("requires the disabled feature kube/http-proxy") even with `NO_PROXY` covering the API
/// server. Now the client goes through the proxy (a CONNECT to the API server, with the proxy's
/// credentials), goes straight to the API server when `NO_PROXY` covers it, and no log line or
/// message shows the password.
#[test]
fn behind_a_proxy_the_client_connects_and_the_proxy_password_is_never_shown() {
    use base64::Engine;
    let secret = "S3cr3tProxyPw";
    let (api, api_seen) = recording_listener();
    let (proxy, proxy_seen) = recording_listener();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = kubeconfig_for(dir.path(), api.port());
    // The proxy by name, the API server by address: kube 5.0.0 matches NO_PROXY against the
    // proxy's host, so `NO_PROXY=127.0.0.1` must be matched against the API server's here.
    let proxy_url = format!("http://u:{secret}@localhost:{}", proxy.port());
    let kubeconfig = kubeconfig.display().to_string();
    let args: Vec<String> =
        ["--addr", "127.0.0.1:0", "--resolve-configmaps"].iter().map(|s| s.to_string()).collect();
    let env = |no_proxy: &'static str| {
        [
            ("KUBECONFIG", kubeconfig.clone()),
            ("HTTPS_PROXY", proxy_url.clone()),
            ("https_proxy", proxy_url.clone()),
            ("NO_PROXY", no_proxy.to_string()),
            ("no_proxy", no_proxy.to_string()),
        ]
    };
    let within = std::time::Duration::from_secs(30);

    // Through the proxy: a CONNECT to the API server, with the proxy's credentials.
    let vars = env("");
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let served = Served::start(&args, &vars, within);
    wait_until("a CONNECT at the proxy", within, || !proxy_seen.lock().unwrap().is_empty());
    let request = String::from_utf8_lossy(&proxy_seen.lock().unwrap()[0]).to_string();
    assert!(request.starts_with(&format!("CONNECT 127.0.0.1:{} ", api.port())), "{request}");
    let credentials = base64::engine::general_purpose::STANDARD.encode(format!("u:{secret}"));
    assert!(
        request
            .to_ascii_lowercase()
            .contains(&format!("proxy-authorization: basic {}", credentials.to_ascii_lowercase())),
        "{request}"
    );
    assert!(api_seen.lock().unwrap().is_empty(), "the API server was reached directly");
    let log = served.log();
    assert!(!log.contains(secret), "the log shows the proxy's password:\n{log}");
    drop(served);

    // NO_PROXY covers the API server: straight to it (its TLS ClientHello), never to the proxy.
    proxy_seen.lock().unwrap().clear();
    let vars = env("127.0.0.1");
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let served = Served::start(&args, &vars, within);
    wait_until("a connection at the API server", within, || !api_seen.lock().unwrap().is_empty());
    assert_eq!(api_seen.lock().unwrap()[0].first(), Some(&0x16), "a TLS handshake record");
    assert!(proxy_seen.lock().unwrap().is_empty(), "the proxy was used despite NO_PROXY");
    assert!(!served.log().contains(secret), "{}", served.log());
    drop(served);

    // A proxy the client cannot use (SOCKS5 is not built in): the error names it, password redacted.
    let socks = format!("socks5://u:{secret}@127.0.0.1:{}", proxy.port());
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_probegate"))
        .args(["serve", "--addr", "127.0.0.1:0", "--self-managed-tls"])
        .env("KUBECONFIG", &kubeconfig)
        .env("HTTPS_PROXY", &socks)
        .env("NO_PROXY", "")
        .env("no_proxy", "")
        .env("TMPDIR", dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("socks5://u:***@127.0.0.1"), "{stderr}");
    assert!(!stderr.contains(secret), "{stderr}");
}

/// Break-it pass (s15): with a proxy set, `NO_PROXY=127.0.0.1,` (an empty entry) or a bad CIDR
/// entry (`10.0.0.0/99`) made kube refuse to build the client: `serve` ran without its Namespace
/// watch and ConfigMap reads, logged at INFO. Such entries are skipped as curl and Go skip them,
/// with a warning naming them; a kubeconfig that does not load is a warning, not INFO; `audit`
/// does not say "no kubeconfig" of one that exists.
#[test]
fn no_proxy_entries_curl_skips_are_skipped_with_a_warning_and_a_broken_kubeconfig_is_a_warning() {
    let (api, api_seen) = recording_listener();
    let (proxy, proxy_seen) = recording_listener();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = kubeconfig_for(dir.path(), api.port());
    let proxy_url = format!("http://u:S3cr3t@localhost:{}", proxy.port());
    let kubeconfig = kubeconfig.display().to_string();
    let args: Vec<String> =
        ["--addr", "127.0.0.1:0", "--resolve-configmaps"].iter().map(|s| s.to_string()).collect();
    let within = std::time::Duration::from_secs(30);
    let serve = |no_proxy: &str, config: &str| {
        let vars = [
            ("KUBECONFIG", config),
            ("HTTPS_PROXY", proxy_url.as_str()),
            ("https_proxy", proxy_url.as_str()),
            ("NO_PROXY", no_proxy),
            ("no_proxy", ""),
        ];
        Served::start(&args, &vars, within)
    };

    // `127.0.0.1,`: the client is built and goes straight to the API server.
    let served = serve("127.0.0.1,", &kubeconfig);
    wait_until("a connection at the API server", within, || !api_seen.lock().unwrap().is_empty());
    assert!(proxy_seen.lock().unwrap().is_empty(), "the proxy was used despite NO_PROXY");
    let log = served.log();
    assert!(!log.contains("failed to parse NO_PROXY"), "{log}");
    let warning =
        log.lines().find(|l| l.contains("WARN") && l.contains("NO_PROXY")).unwrap_or_else(|| panic!("{log}"));
    assert!(warning.contains("skipped 1 entry"), "{warning}");
    drop(served);

    // `,10.0.0.0/99`: nothing covers the API server, so the client goes through the proxy.
    api_seen.lock().unwrap().clear();
    let served = serve(",10.0.0.0/99", &kubeconfig);
    wait_until("a CONNECT at the proxy", within, || !proxy_seen.lock().unwrap().is_empty());
    let request = String::from_utf8_lossy(&proxy_seen.lock().unwrap()[0]).to_string();
    assert!(request.starts_with(&format!("CONNECT 127.0.0.1:{} ", api.port())), "{request}");
    let log = served.log();
    let warning =
        log.lines().find(|l| l.contains("WARN") && l.contains("NO_PROXY")).unwrap_or_else(|| panic!("{log}"));
    assert!(warning.contains("skipped 2 entries") && warning.contains("10.0.0.0/99"), "{warning}");
    assert!(!log.contains("S3cr3t"), "{log}");
    drop(served);

    // A kubeconfig that does not load: a warning with the reason, not INFO.
    let broken = dir.path().join("broken");
    std::fs::write(&broken, "apiVersion: v1\nkind: Config\nclusters: [\n").unwrap();
    let broken = broken.display().to_string();
    let served = serve("", &broken);
    let log = served.log();
    let line =
        log.lines().find(|l| l.contains("Namespace labels are unknown")).unwrap_or_else(|| panic!("{log}"));
    assert!(line.contains("WARN") && line.contains("cannot build a Kubernetes client"), "{line}");
    assert!(line.contains("failed to parse kubeconfig"), "{line}");
    drop(served);
    // No kubeconfig at all, outside a cluster: INFO, as before.
    let none = dir.path().join("none").display().to_string();
    let served = serve("", &none);
    let log = served.log();
    let line =
        log.lines().find(|l| l.contains("Namespace labels are unknown")).unwrap_or_else(|| panic!("{log}"));
    assert!(line.contains("INFO") && line.contains("no Kubernetes API reachable"), "{line}");
    drop(served);
    // `audit` names what failed, not "no kubeconfig" for one that exists.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_probegate"))
        .args(["audit", "-A"])
        .env("KUBECONFIG", &broken)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot load the Kubernetes configuration"), "{stderr}");
    assert!(!stderr.contains("no kubeconfig and not in a cluster"), "{stderr}");
}

/// Break-it pass (s14): `"operation": null` was "invalid JSON" (serde_json's reading of a null
/// enum), and a huge integer (`periodSeconds: 1e30`, `99999999999999999999`) "floating point": the
/// answer names the field, and says a number must be an int32. Values are still never echoed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_review_names_the_field_and_a_number_out_of_range_must_be_an_int32() {
    let h = start(Policy::default()).await;
    let mut op = review("CREATE", &coupled_pod(None), None, "m1");
    op["request"]["operation"] = Value::Null;
    let (status, v) = h.post("/validate", &op).await;
    assert_eq!(status, 400);
    let error = v["error"].as_str().unwrap();
    assert!(error.contains("request.operation: null is not a value this field takes"), "{v}");
    assert!(!error.contains("invalid JSON"), "{v}");
    for (i, number) in
        [json!(1e30), json!(1e20), json!(3_000_000_000u64), json!(-2.5)].into_iter().enumerate()
    {
        let mut pod = coupled_pod(None);
        pod["spec"]["containers"][0]["livenessProbe"]["periodSeconds"] = number.clone();
        let (status, v) = h.post("/validate", &review("CREATE", &pod, None, &format!("m{i}"))).await;
        assert_eq!(status, 400);
        let error = v["error"].as_str().unwrap();
        assert!(
            error.contains("spec.containers[0].livenessProbe.periodSeconds: must be an int32 (a whole number from -2147483648 to 2147483647)"),
            "{number}: {v}"
        );
        assert!(!error.contains("floating point") && !error.contains(&number.to_string()), "{v}");
    }
    // The integer literal past u64 (serde_json reads it as a float), as the API server sends it,
    // and one past f64 (310 digits: serde_json's "number out of range", s15 break-it pass).
    for literal in ["99999999999999999999".to_string(), format!("1{}", "0".repeat(309))] {
        let mut pod = coupled_pod(None);
        pod["spec"]["containers"][0]["livenessProbe"]["periodSeconds"] = json!(7);
        let body = serde_json::to_string(&review("CREATE", &pod, None, "m9"))
            .unwrap()
            .replace("\"periodSeconds\":7", &format!("\"periodSeconds\":{literal}"));
        assert!(body.contains(&literal));
        let error = match probegate::admission::parse_review(body.as_bytes()) {
            Ok(request) => {
                let endpoint = probegate::admission::Endpoint::Validate;
                match probegate::admission::review(&Policy::default(), None, endpoint, &request) {
                    Ok(_) => panic!("an invalid Pod was reviewed"),
                    Err(e) => e.to_string(),
                }
            }
            Err(e) => e.to_string(),
        };
        assert!(
            error.contains("spec.containers[0].livenessProbe.periodSeconds: must be an int32"),
            "{error}"
        );
        // Over HTTPS, the same 400.
        let r = h
            .client
            .post(h.url("/validate"))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 400);
        let text = r.text().await.unwrap();
        assert!(text.contains("periodSeconds: must be an int32"), "{text}");
    }
    h.healthy().await;
}
