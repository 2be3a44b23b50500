//! `serve --resolve-configmaps`: the ConfigMaps that liveness scripts and env values come from, read
//! from the API before a review, so that the pure engine can see through them.
//!
//! For each request the server lists what the review could read ([`crate::admission::configmaps_needed`]:
//! only the ConfigMaps whose files the liveness probe may run, and those its env refers to), looks
//! each one up here, asks again with what it found (a script may run another from a second
//! ConfigMap), and evaluates with a [`StaticConfigMaps`] of what it got. Bounds:
//! - a **budget** per request ([`BUDGET`], 500 ms for all lookups together, well under the 4 s
//!   request bound and the webhook's 5 s timeout): whatever has not answered by then is unresolved
//!   for this request;
//! - **no stale answers**: what the API said (found, not found) is used for the request that asked
//!   and never reused, so a ConfigMap created just before its Pod is found; concurrent requests
//!   share one read in flight per ConfigMap; a failed read (forbidden, timed out after
//!   [`FETCH_TIMEOUT`], ...) is remembered for [`FAILURE_TTL`] so that a broken API or a missing
//!   RBAC grant costs one budget, not one per request.
//!
//! A ConfigMap that cannot be read in time, or at all, is unresolved: never a denial, never a failed
//! request, and the `unresolved-scripts` note says why (not read by this server, forbidden, no
//! answer in time, does not exist). Secrets are never read (the engine never asks for one).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use k8s_openapi::api::core::v1::ConfigMap;

use crate::engine::StaticConfigMaps;

/// Time allowed for all the ConfigMap lookups of one request.
pub const BUDGET: Duration = Duration::from_millis(500);
/// How long a failed read (forbidden, no answer) is remembered before the API is asked again.
/// Answers (found, not found) are never reused.
pub const FAILURE_TTL: Duration = Duration::from_secs(5);
/// A read still running after this is abandoned (it has long been unresolved for its request).
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// Most ConfigMaps cached; past it, expired entries go, then everything.
const MAX_ENTRIES: usize = 4096;

/// The answer to one ConfigMap read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fetched {
    /// Its `data`.
    Found(BTreeMap<String, String>),
    /// The API answered 404.
    NotFound,
    /// The API answered 403: probegate's identity may not `get` it.
    Forbidden,
    /// Anything else (unreachable, timed out, a 500): why.
    Failed(String),
}

/// Reads one ConfigMap. The kube implementation is [`KubeConfigMaps`]; tests plug in fakes.
pub trait ConfigMapFetch: Send + Sync + 'static {
    /// Reads `name` in `namespace`.
    fn fetch(&self, namespace: &str, name: &str) -> BoxFuture<'static, Fetched>;
}

/// ConfigMaps from the Kubernetes API (`Api<ConfigMap>::get`; RBAC `get` on `configmaps`).
pub struct KubeConfigMaps {
    client: kube::Client,
}

impl KubeConfigMaps {
    /// Reads through `client`.
    pub fn new(client: kube::Client) -> KubeConfigMaps {
        KubeConfigMaps { client }
    }
}

impl ConfigMapFetch for KubeConfigMaps {
    fn fetch(&self, namespace: &str, name: &str) -> BoxFuture<'static, Fetched> {
        let api: kube::Api<ConfigMap> = kube::Api::namespaced(self.client.clone(), namespace);
        let name = name.to_string();
        async move {
            match api.get_opt(&name).await {
                Ok(Some(cm)) => Fetched::Found(cm.data.unwrap_or_default()),
                Ok(None) => Fetched::NotFound,
                Err(kube::Error::Api(status)) if status.code == 403 => Fetched::Forbidden,
                Err(e) => Fetched::Failed(e.to_string()),
            }
        }
        .boxed()
    }
}

type Key = (String, String);

#[derive(Default)]
struct Cache {
    /// Failed reads, remembered for [`FAILURE_TTL`].
    failures: HashMap<Key, (Instant, Fetched)>,
    pending: HashMap<Key, Shared<BoxFuture<'static, Fetched>>>,
}

/// How one lookup of a prefetch went, for metrics: `cached` (a failure remembered), `found`,
/// `not_found`, `forbidden`, `failed` or `timeout` (the budget ran out first).
pub type LookupResult = &'static str;

/// Budgeted ConfigMap lookups for the webhook, sharing reads in flight and remembering failures.
pub struct ConfigMapResolver {
    fetch: Arc<dyn ConfigMapFetch>,
    budget: Duration,
    cache: Arc<Mutex<Cache>>,
}

impl ConfigMapResolver {
    /// A resolver with the default [`BUDGET`].
    pub fn new(fetch: Arc<dyn ConfigMapFetch>) -> ConfigMapResolver {
        ConfigMapResolver::with_budget(fetch, BUDGET)
    }

    /// A resolver with a given budget per request.
    pub fn with_budget(fetch: Arc<dyn ConfigMapFetch>, budget: Duration) -> ConfigMapResolver {
        ConfigMapResolver { fetch, budget, cache: Arc::default() }
    }

    /// The time allowed per request.
    pub fn budget(&self) -> Duration {
        self.budget
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts a read in the background; its answer lands in the cache whoever waits for it.
    fn spawn(&self, key: &Key) -> Shared<BoxFuture<'static, Fetched>> {
        let read = self.fetch.fetch(&key.0, &key.1);
        let cache = Arc::clone(&self.cache);
        let key = key.clone();
        let task = tokio::spawn(async move {
            let fetched = match tokio::time::timeout(FETCH_TIMEOUT, read).await {
                Ok(f) => f,
                Err(_) => Fetched::Failed(format!("no answer in {} s", FETCH_TIMEOUT.as_secs())),
            };
            let why = match &fetched {
                Fetched::Failed(why) => Some(why.as_str()),
                Fetched::Forbidden => Some("forbidden (RBAC get on configmaps)"),
                _ => None,
            };
            if let Some(why) = why {
                tracing::warn!(namespace = %crate::server::log_field(&key.0), name = %crate::server::log_field(&key.1),
                    error = %crate::server::log_safe(why),
                    "cannot read a ConfigMap for liveness script analysis; scripts from it are unresolved");
            }
            let mut c = cache.lock().unwrap_or_else(|e| e.into_inner());
            c.pending.remove(&key);
            if matches!(fetched, Fetched::Failed(_) | Fetched::Forbidden) {
                if c.failures.len() >= MAX_ENTRIES {
                    let now = Instant::now();
                    c.failures.retain(|_, (at, _)| now.saturating_duration_since(*at) < FAILURE_TTL);
                    if c.failures.len() >= MAX_ENTRIES {
                        c.failures.clear();
                    }
                }
                c.failures.insert(key, (Instant::now(), fetched.clone()));
            }
            fetched
        });
        async move { task.await.unwrap_or_else(|e| Fetched::Failed(e.to_string())) }.boxed().shared()
    }

    /// Looks up every (namespace, name) in `needed` until `deadline` (see [`ConfigMapResolver::budget`]),
    /// into `out`: what answered is found or absent there, the rest is marked unresolved with why.
    pub async fn prefetch(
        &self,
        needed: &[(String, String)],
        deadline: tokio::time::Instant,
        out: &mut StaticConfigMaps,
    ) -> Vec<LookupResult> {
        let mut results = Vec::new();
        let mut waits = Vec::new();
        {
            let now = Instant::now();
            let mut cache = self.lock();
            for key in needed {
                if let Some((at, f)) = cache.failures.get(key)
                    && now.saturating_duration_since(*at) < FAILURE_TTL
                {
                    apply(out, key, f);
                    results.push("cached");
                    continue;
                }
                let pending = match cache.pending.get(key) {
                    Some(p) => p.clone(),
                    None => {
                        let p = self.spawn(key);
                        cache.pending.insert(key.clone(), p.clone());
                        p
                    }
                };
                waits.push((key.clone(), pending));
            }
        }
        let answers = futures::future::join_all(
            waits
                .into_iter()
                .map(|(key, p)| async move { (key, tokio::time::timeout_at(deadline, p).await.ok()) }),
        )
        .await;
        for (key, answer) in answers {
            match answer {
                Some(f) => {
                    apply(out, &key, &f);
                    results.push(match f {
                        Fetched::Found(_) => "found",
                        Fetched::NotFound => "not_found",
                        Fetched::Forbidden => "forbidden",
                        Fetched::Failed(_) => "failed",
                    });
                }
                None => {
                    let ms = self.budget.as_millis();
                    out.mark_unresolved(&key.0, &key.1, format!("did not answer within the {ms} ms budget"));
                    results.push("timeout");
                }
            }
        }
        results
    }
}

/// Why a ConfigMap is unresolved when it was never read: no liveness command names a path on it.
pub const NOT_NEEDED: &str = "was not read (no liveness command names a path on it)";

/// Why a ConfigMap is unresolved without `--resolve-configmaps`.
pub const NOT_RESOLVING: &str = "was not read (probegate serve runs without --resolve-configmaps)";

fn apply(out: &mut StaticConfigMaps, (ns, name): &Key, f: &Fetched) {
    match f {
        Fetched::Found(data) => out.insert(ns, name, data.clone()),
        Fetched::NotFound => out.mark_absent(ns, name),
        Fetched::Forbidden => {
            out.mark_unresolved(ns, name, "may not be read by probegate (forbidden: RBAC get on configmaps)")
        }
        Fetched::Failed(why) => {
            out.mark_unresolved(ns, name, format!("could not be read ({})", crate::engine::excerpt(why, 200)))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::engine::{ConfigMapLookup, ConfigMapSource};

    /// Answers from a table after a delay; names starting with `hang` never answer.
    struct Fake {
        data: BTreeMap<String, BTreeMap<String, String>>,
        delay: Duration,
        calls: AtomicUsize,
    }

    impl ConfigMapFetch for Fake {
        fn fetch(&self, _namespace: &str, name: &str) -> BoxFuture<'static, Fetched> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            let answer = self.data.get(name).cloned();
            let (delay, hang) = (self.delay, name.starts_with("hang"));
            async move {
                if hang {
                    futures::future::pending::<()>().await;
                }
                tokio::time::sleep(delay).await;
                answer.map_or(Fetched::NotFound, Fetched::Found)
            }
            .boxed()
        }
    }

    fn key(name: &str) -> (String, String) {
        ("ns".to_string(), name.to_string())
    }

    /// On tokio's paused clock: time moves only when every task waits, so the 20 ms read, the
    /// 200 ms budget and the concurrency check do not depend on the machine's load.
    #[tokio::test(start_paused = true)]
    async fn reads_are_shared_bounded_by_the_budget_and_answers_never_reused() {
        let fake = Arc::new(Fake {
            data: BTreeMap::from([("health".to_string(), BTreeMap::from([("a.sh".into(), "true".into())]))]),
            delay: Duration::from_millis(20),
            calls: AtomicUsize::new(0),
        });
        let resolver = ConfigMapResolver::with_budget(fake.clone(), Duration::from_millis(200));
        let needed = [key("health"), key("gone"), key("hang-forever")];
        let prefetch = || async {
            let mut out = StaticConfigMaps::new();
            let deadline = tokio::time::Instant::now() + resolver.budget();
            let results = resolver.prefetch(&needed, deadline, &mut out).await;
            (out, results)
        };
        let started = tokio::time::Instant::now();
        let (a, b) = tokio::join!(prefetch(), prefetch());
        // Both requests wait out one budget together (the hanging read), not one after the other.
        assert_eq!(started.elapsed(), resolver.budget());
        for (cms, results) in [&a, &b] {
            assert!(matches!(cms.get("ns", "health"), ConfigMapLookup::Found(d) if d["a.sh"] == "true"));
            assert_eq!(cms.get("ns", "gone"), ConfigMapLookup::NotFound);
            assert_eq!(cms.get("ns", "hang-forever"), ConfigMapLookup::Unresolved);
            assert_eq!(
                cms.unresolved_reason("ns", "hang-forever"),
                "did not answer within the 200 ms budget"
            );
            assert_eq!(results, &vec!["found", "not_found", "timeout"]);
        }
        assert_eq!(fake.calls.load(Ordering::SeqCst), 3, "one read per ConfigMap for both requests");
        // The next request asks again (a ConfigMap created meanwhile is found); the hanging read is
        // still in flight and shared.
        let (cms, results) = prefetch().await;
        assert_eq!(results, vec!["found", "not_found", "timeout"]);
        assert_eq!(cms.get("ns", "gone"), ConfigMapLookup::NotFound);
        assert_eq!(fake.calls.load(Ordering::SeqCst), 5);
    }
}
