//! Namespace labels for `namespaceSelector` overrides. The AdmissionReview carries only the
//! namespace's name, so the server keeps a watch cache of Namespaces (kube reflector). Lookups never
//! wait: an unknown namespace is evaluated with what is known (no labels: selector overrides do not
//! match, name overrides still do).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Namespace;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};

/// Where Namespace labels come from.
pub trait NamespaceLabels: Send + Sync + 'static {
    /// The labels of a namespace, when known. Must not block.
    fn labels(&self, namespace: &str) -> Option<BTreeMap<String, String>>;
}

/// No cluster: no labels are known.
pub struct NoNamespaceLabels;

impl NamespaceLabels for NoNamespaceLabels {
    fn labels(&self, _namespace: &str) -> Option<BTreeMap<String, String>> {
        None
    }
}

/// A fixed table of namespaces and their labels (tests, and clusters without API access).
#[derive(Default, Clone)]
pub struct StaticNamespaceLabels(pub HashMap<String, BTreeMap<String, String>>);

impl NamespaceLabels for StaticNamespaceLabels {
    fn labels(&self, namespace: &str) -> Option<BTreeMap<String, String>> {
        self.0.get(namespace).cloned()
    }
}

/// Labels from a kube reflector store of Namespaces.
pub struct WatchedNamespaceLabels {
    store: Store<Namespace>,
}

impl NamespaceLabels for WatchedNamespaceLabels {
    fn labels(&self, namespace: &str) -> Option<BTreeMap<String, String>> {
        self.store.get(&ObjectRef::new(namespace)).map(|ns| ns.metadata.labels.clone().unwrap_or_default())
    }
}

/// Connects to the cluster (in-cluster config, else kubeconfig) and starts watching Namespaces in
/// the background. Needs RBAC `list` and `watch` on `namespaces` (the reflector never gets one by
/// name; deploy/base/clusterrole.yaml grants exactly these two).
///
/// # Errors
/// When no Kubernetes client can be configured (no in-cluster environment and no kubeconfig).
pub async fn watch() -> Result<Arc<dyn NamespaceLabels>, kube::Error> {
    let client = super::kubeclient::client().await?;
    let api: kube::Api<Namespace> = kube::Api::all(client);
    let (store, writer) = reflector::store();
    let stream = reflector::reflector(writer, watcher(api, watcher::Config::default()))
        .default_backoff()
        .touched_objects();
    tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream);
        let mut reported = false;
        while let Some(event) = stream.next().await {
            match event {
                Ok(_) => reported = false,
                Err(e) if !reported => {
                    tracing::warn!(error = %super::kube_error_text(&e), "namespace watch failed; retrying with back-off (namespaceSelector overrides use the last known labels)");
                    reported = true;
                }
                Err(_) => {}
            }
        }
    });
    Ok(Arc::new(WatchedNamespaceLabels { store }))
}
