//! s25: the caller-owned parse cache (`engine::ParseCache`, `engine::evaluate_cached`,
//! `admission::review_cached`). A warm cache must give the cold path's findings and patches byte
//! for byte (every corpus object and fixture review, in two orders, interleaved with other
//! objects), stay within its bounds under thousands of distinct scripts, keep parses only (the same
//! script under another env, policy or namespace gets its own verdict), charge the object's parse
//! allowance as a fresh parse would, and the server must answer a second review of a Pod as it
//! answered the first.

mod common;

use common::*;
use probegate::admission::{self, Endpoint};
use probegate::engine::{self, NoConfigMaps, ParseCache, Workload, WorkloadKind};
use probegate::policy::Policy;
use serde_json::{Value, json};

/// A Pod whose one container's liveness probe runs `sh -c script`, with `env`.
fn script_pod(name: &str, namespace: &str, script: &str, env: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
        "spec": {"containers": [{"name": "app", "image": "app:1", "env": env,
            "ports": [{"containerPort": 8080}],
            "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}},
            "livenessProbe": {"exec": {"command": ["sh", "-c", script]}}}]}})
}

fn pod_workload(pod: &Value) -> Workload {
    Workload::from_value(WorkloadKind::Pod, pod).unwrap()
}

/// The cold evaluation (no cache) and the one through `cache`, as text (every field: findings,
/// patches, unresolved scripts, exempt containers).
fn cold(policy: &Policy, w: &Workload) -> String {
    format!("{:?}", engine::evaluate_with(&policy.rules, w, &policy.exemptions.containers))
}

fn warm(policy: &Policy, w: &Workload, cache: &mut ParseCache) -> String {
    format!(
        "{:?}",
        engine::evaluate_cached(&policy.rules, w, &policy.exemptions.containers, &NoConfigMaps, "", cache)
    )
}

/// Every corpus document as itself and as the Pod it runs, every document of the script fixtures,
/// and the objects of the fixture reviews.
fn objects() -> Vec<(String, Workload)> {
    let mut out = Vec::new();
    for case in corpus() {
        out.push((case.file.clone(), workload(&case.doc)));
        out.push((format!("{} as a Pod", case.file), pod_workload(&as_pod(&case.doc))));
    }
    for file in ["apps.yaml", "databases-checking-themselves.yaml", "redis-replication.yaml"] {
        let text = read(&format!("scripts/{file}"));
        for (i, doc) in probegate::manifest::parse_documents(&text).unwrap().into_iter().enumerate() {
            let Some(kind) = doc["apiVersion"].as_str().zip(doc["kind"].as_str()) else { continue };
            if WorkloadKind::from_api_version_kind(kind.0, kind.1).is_some() {
                out.push((format!("{file} #{i}"), workload(&doc)));
            }
        }
    }
    assert!(out.len() > 70, "{} objects", out.len());
    out
}

#[test]
fn a_warm_cache_gives_the_cold_findings_for_every_corpus_object_in_two_orders() {
    let policy = Policy::default();
    let objects = objects();
    let expected: Vec<String> = objects.iter().map(|(_, w)| cold(&policy, w)).collect();
    let mut cache = ParseCache::new();
    // Forward, twice (the second pass reads every parse from the cache).
    for pass in 0..2 {
        for ((name, w), want) in objects.iter().zip(&expected) {
            assert_eq!(&warm(&policy, w, &mut cache), want, "{name}, forward pass {pass}");
        }
    }
    let hits = cache.hits();
    assert!(hits > 0, "the second pass read nothing from the cache: {cache:?}");
    // Backward, interleaved with the objects from the other end.
    let n = objects.len();
    for i in 0..n {
        for j in [n - 1 - i, i] {
            assert_eq!(
                &warm(&policy, &objects[j].1, &mut cache),
                &expected[j],
                "{}, interleaved",
                objects[j].0
            );
        }
    }
    assert!(cache.hits() > hits);
    // A fresh cache, backward from the start.
    let mut fresh = ParseCache::new();
    for ((name, w), want) in objects.iter().zip(&expected).rev() {
        assert_eq!(&warm(&policy, w, &mut fresh), want, "{name}, backward");
    }
}

#[test]
fn a_warm_cache_gives_the_cold_decisions_for_every_fixture_review() {
    let policy = Policy::default();
    let mut files: Vec<_> = std::fs::read_dir(fixtures().join("admission"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(files.len() > 30);
    // The fixture reviews, then each corpus document created and updated (a label changed, so the
    // old object is read where a denial is at stake) at both endpoints.
    let mut bodies: Vec<(String, Vec<u8>, Endpoint)> = files
        .iter()
        .map(|f| {
            let endpoint =
                if f.to_string_lossy().contains("mutating") { Endpoint::Mutate } else { Endpoint::Validate };
            (f.display().to_string(), std::fs::read(f).unwrap(), endpoint)
        })
        .collect();
    for case in corpus() {
        let mut old = case.doc.clone();
        old["metadata"]["labels"]["rev"] = json!("1");
        for endpoint in [Endpoint::Validate, Endpoint::Mutate] {
            for (op, old) in [("CREATE", None), ("UPDATE", Some(&old))] {
                let body = serde_json::to_vec(&review(op, &case.doc, old, "u")).unwrap();
                bodies.push((format!("{} {op} {endpoint:?}", case.file), body, endpoint));
            }
        }
    }
    let decide = |(_, body, endpoint): &(String, Vec<u8>, Endpoint), cache: Option<&mut ParseCache>| {
        let endpoint = *endpoint;
        let request = admission::parse_review(body).unwrap();
        let decision = match cache {
            None => admission::review(&policy, None, endpoint, &request),
            Some(cache) => admission::review_cached(&policy, None, endpoint, &request, &NoConfigMaps, cache),
        };
        match decision {
            Ok(d) => format!("{}\n{:?}", serde_json::to_string(&d.review).unwrap(), d.summary),
            Err(e) => format!("error {e}"),
        }
    };
    let expected: Vec<String> = bodies.iter().map(|b| decide(b, None)).collect();
    let mut cache = ParseCache::new();
    for pass in 0..2 {
        for (b, want) in bodies.iter().zip(&expected) {
            assert_eq!(&decide(b, Some(&mut cache)), want, "{}, pass {pass}", b.0);
        }
        for (b, want) in bodies.iter().zip(&expected).rev() {
            assert_eq!(&decide(b, Some(&mut cache)), want, "{}, backward, pass {pass}", b.0);
        }
    }
    assert!(cache.hits() > 0, "{cache:?}");
}

/// A script the parser reads (not a plain command, which is split without it).
fn parsed_script(i: usize) -> String {
    format!("if pg_isready -h db{i}.shop.svc; then echo ok{i}; else exit 1; fi")
}

#[test]
fn the_cache_stays_within_its_bounds_under_thousands_of_distinct_scripts() {
    let policy = Policy::default();
    let mut cache = ParseCache::new();
    let (entries, bytes) = cache.bounds();
    assert_eq!((entries, bytes), (engine::PARSE_CACHE_ENTRIES, engine::PARSE_CACHE_TEXT_BYTES));
    for i in 0..3000 {
        let pod = script_pod("p", "shop", &parsed_script(i), json!([]));
        warm(&policy, &pod_workload(&pod), &mut cache);
        assert!(cache.len() <= entries && cache.text_bytes() <= bytes, "after {i}: {cache:?}");
    }
    assert_eq!(cache.len(), entries, "{cache:?}");
    assert_eq!(cache.hits(), 0);
    // The most recent are kept, the oldest evicted.
    let recent = pod_workload(&script_pod("p", "shop", &parsed_script(2999), json!([])));
    warm(&policy, &recent, &mut cache);
    assert_eq!(cache.hits(), 1);
    let oldest = pod_workload(&script_pod("p", "shop", &parsed_script(0), json!([])));
    warm(&policy, &oldest, &mut cache);
    assert_eq!(cache.hits(), 1);

    // Long scripts: the bound in bytes holds before the bound in entries.
    let mut small = ParseCache::with_bounds(1000, 64 * 1024);
    let filler = "# ".to_string() + &"x".repeat(3000) + "\n";
    for i in 0..500 {
        let script = format!("{filler}{}", parsed_script(i));
        let pod = script_pod("p", "shop", &script, json!([]));
        warm(&policy, &pod_workload(&pod), &mut small);
        assert!(small.text_bytes() <= 64 * 1024, "after {i}: {small:?}");
    }
    assert!(small.len() >= 15 && small.len() <= 21, "{small:?}");
    // A script over an eighth of the byte bound is parsed but not kept.
    let mut tiny = ParseCache::with_bounds(10, 8 * 1024);
    let long = format!("{}{}", "# ".to_string() + &"y".repeat(1100) + "\n", parsed_script(1));
    warm(&policy, &pod_workload(&script_pod("p", "shop", &long, json!([]))), &mut tiny);
    assert_eq!(tiny.len(), 0, "{tiny:?}");
    warm(&policy, &pod_workload(&script_pod("p", "shop", &parsed_script(1), json!([]))), &mut tiny);
    assert_eq!(tiny.len(), 1, "{tiny:?}");
}

/// Whether the evaluation (as [`cold`] and [`warm`] show it) holds a finding whose action is deny.
fn denies(text: &str) -> bool {
    text.contains("action: Deny")
}

#[test]
fn the_same_script_under_another_env_gets_its_own_verdict_through_one_cache() {
    let policy = Policy::default();
    let script = "if pg_isready -h \"$DB_HOST\" -t 2; then exit 0; else exit 1; fi";
    let remote = pod_workload(&script_pod(
        "p",
        "shop",
        script,
        json!([{"name": "DB_HOST", "value": "orders-db.shop.svc"}]),
    ));
    let local =
        pod_workload(&script_pod("p", "shop", script, json!([{"name": "DB_HOST", "value": "localhost"}])));
    let (cold_remote, cold_local) = (cold(&policy, &remote), cold(&policy, &local));
    assert!(denies(&cold_remote), "{cold_remote}");
    assert!(!denies(&cold_local), "{cold_local}");
    for first_remote in [true, false] {
        let mut cache = ParseCache::new();
        let order = if first_remote { [&remote, &local] } else { [&local, &remote] };
        let got: Vec<String> = order.iter().map(|w| warm(&policy, w, &mut cache)).collect();
        assert_eq!(cache.hits(), 1, "the second read the first's parse: {cache:?}");
        let (r, l) = if first_remote { (&got[0], &got[1]) } else { (&got[1], &got[0]) };
        assert_eq!(r, &cold_remote);
        assert_eq!(l, &cold_local);
    }
}

#[test]
fn the_same_script_under_another_policy_or_namespace_gets_its_own_verdict_through_one_cache() {
    let lenient = probegate::policy::parse(
        "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\noverrides:\n  - name: legacy\n    namespaces: [legacy]\n    rules:\n      liveness-dependency: {action: warn}\n",
        "test",
    )
    .unwrap();
    let script = "if pg_isready -h orders-db.shop.svc -t 2; then exit 0; else exit 1; fi";
    let shop = pod_workload(&script_pod("p", "shop", script, json!([])));
    let legacy = pod_workload(&script_pod("p", "legacy", script, json!([])));
    let object = |policy: &Policy, w: &Workload, ns: &str, cache: &mut ParseCache| {
        format!(
            "{:?}",
            admission::evaluate_object_cached(policy, w, ns, None, &NoConfigMaps, cache).evaluation
        )
    };
    let cold_of = |policy: &Policy, w: &Workload, ns: &str| {
        format!("{:?}", admission::evaluate_object(policy, w, ns, None).evaluation)
    };
    let strict = Policy::default();
    let expected = [
        cold_of(&strict, &shop, "shop"),
        cold_of(&lenient, &shop, "shop"),
        cold_of(&lenient, &legacy, "legacy"),
        cold_of(&strict, &legacy, "legacy"),
    ];
    assert!(denies(&expected[0]) && denies(&expected[1]) && denies(&expected[3]));
    assert!(!denies(&expected[2]), "{}", expected[2]);
    let mut cache = ParseCache::new();
    for pass in 0..2 {
        let got = [
            object(&strict, &shop, "shop", &mut cache),
            object(&lenient, &shop, "shop", &mut cache),
            object(&lenient, &legacy, "legacy", &mut cache),
            object(&strict, &legacy, "legacy", &mut cache),
        ];
        assert_eq!(got, expected, "pass {pass}");
    }
    assert_eq!(cache.hits(), 7, "{cache:?}");
}

/// A script of `lines` distinct heavy lines (each about 300 of parse weight).
fn heavy_script(tag: usize, lines: usize) -> String {
    (0..lines)
        .map(|l| format!("echo {} && pg_isready -h db{tag}-{l}.shop.svc\n", "a b ".repeat(70)))
        .collect()
}

#[test]
fn a_kept_parse_is_charged_to_the_objects_parse_allowance_as_a_fresh_parse_is() {
    // Each script alone fits the allowance; ten of them in one object do not: the last ones are
    // not analysed (a note), warm or cold.
    let policy = Policy::default();
    let scripts: Vec<String> = (0..10).map(|i| heavy_script(i, 10)).collect();
    let mut cache = ParseCache::new();
    for s in &scripts {
        let alone = pod_workload(&script_pod("p", "shop", s, json!([])));
        let text = warm(&policy, &alone, &mut cache);
        assert!(!text.contains("over what probegate parses"), "{text}");
    }
    assert_eq!(cache.len(), scripts.len(), "{cache:?}");
    let containers: Vec<Value> = scripts
        .iter()
        .enumerate()
        .map(|(i, s)| {
            json!({"name": format!("c{i}"), "image": "app:1",
                "livenessProbe": {"exec": {"command": ["sh", "-c", s]}}})
        })
        .collect();
    let all = pod_workload(&json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "all", "namespace": "shop"}, "spec": {"containers": containers}}));
    let want = cold(&policy, &all);
    assert!(want.contains("over what probegate parses"), "{want}");
    let hits = cache.hits();
    assert_eq!(warm(&policy, &all, &mut cache), want);
    assert!(cache.hits() > hits, "the object read kept parses: {cache:?}");
    // The other way round: a parse the allowance cut short is not kept, so each script alone,
    // after the object, is analysed whole.
    let mut fresh = ParseCache::new();
    assert_eq!(warm(&policy, &all, &mut fresh), want);
    for s in &scripts {
        let alone = pod_workload(&script_pod("p", "shop", s, json!([])));
        assert_eq!(warm(&policy, &alone, &mut fresh), cold(&policy, &alone));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_answers_a_second_review_of_a_pod_as_it_answered_the_first() {
    let (running, ca) = start_server(Policy::default(), |_| {}).await;
    let client = https_client(&[&ca], false);
    let url = format!("https://localhost:{}/validate", running.addr.port());
    let script = "if pg_isready -h \"$DB_HOST\" -t 2; then exit 0; else exit 1; fi";
    let post = |pod: Value, uid: &str| {
        let body = review("CREATE", &pod, None, uid);
        let (client, url) = (client.clone(), url.clone());
        async move {
            let r = client.post(url).json(&body).send().await.unwrap();
            assert_eq!(r.status(), 200);
            r.json::<Value>().await.unwrap()["response"].clone()
        }
    };
    let remote =
        script_pod("api", "shop", script, json!([{"name": "DB_HOST", "value": "orders-db.shop.svc"}]));
    let local = script_pod("api", "shop", script, json!([{"name": "DB_HOST", "value": "localhost"}]));
    let first = post(remote.clone(), "u1").await;
    assert_eq!(first["allowed"], false, "{first}");
    for i in 0..4 {
        let again = post(remote.clone(), "u1").await;
        assert_eq!(again, first, "review {i}");
        let other = post(local.clone(), "u2").await;
        assert_eq!(other["allowed"], true, "{other}");
    }
}
