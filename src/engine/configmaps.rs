//! Where ConfigMaps come from, behind one trait so that the engine stays pure.
//!
//! The engine reads ConfigMaps for two things: the text of exec-probe scripts mounted from
//! ConfigMap volumes (plain `configMap` and `projected` sources), and env values from
//! `valueFrom.configMapKeyRef` and `envFrom.configMapRef`. It never reads a Secret.
//!
//! - [`NoConfigMaps`]: nothing is known (every lookup is unresolved);
//! - [`StaticConfigMaps`]: a table keyed by (namespace, name): ConfigMaps found in the same input
//!   (Helm or kustomize output), or what the server prefetched from the API within its time budget.
//!
//! [`configmaps_needed`] lists what an evaluation could read, so that a server can prefetch it.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use k8s_openapi::api::core::v1::{Container, Volume};

use super::workload::Workload;

/// The answer of a [`ConfigMapSource`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigMapLookup<'a> {
    /// The ConfigMap exists; its `data`.
    Found(&'a BTreeMap<String, String>),
    /// It is known not to exist (the API answered 404).
    NotFound,
    /// Unknown: not in the input, not fetched (disabled, forbidden, timed out, ...).
    Unresolved,
}

/// Where ConfigMaps come from. Implementations never block and never fail: what they cannot
/// answer is [`ConfigMapLookup::Unresolved`].
pub trait ConfigMapSource {
    /// The ConfigMap `name` in `namespace`.
    fn get(&self, namespace: &str, name: &str) -> ConfigMapLookup<'_>;

    /// Why `get` answered [`ConfigMapLookup::Unresolved`] for that ConfigMap, completing
    /// `ConfigMap NS/NAME ...` in an unresolved script's reason: `is not available` unless the
    /// source knows better (not read by this server, forbidden, no answer in time).
    fn unresolved_reason(&self, _namespace: &str, _name: &str) -> String {
        UNAVAILABLE.to_string()
    }
}

/// The default [`ConfigMapSource::unresolved_reason`].
pub const UNAVAILABLE: &str = "is not available";

/// No ConfigMaps at all: every lookup is unresolved.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoConfigMaps;

impl ConfigMapSource for NoConfigMaps {
    fn get(&self, _namespace: &str, _name: &str) -> ConfigMapLookup<'_> {
        ConfigMapLookup::Unresolved
    }
}

/// An in-memory table of ConfigMaps keyed by (namespace, name). What is neither inserted nor marked
/// absent is unresolved.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StaticConfigMaps {
    found: HashMap<(String, String), BTreeMap<String, String>>,
    absent: HashSet<(String, String)>,
    /// Why some unresolved ConfigMaps are unresolved.
    reasons: HashMap<(String, String), String>,
    /// Why the others are ([`UNAVAILABLE`] when `None`).
    default_reason: Option<String>,
}

impl StaticConfigMaps {
    /// An empty table (everything unresolved).
    pub fn new() -> StaticConfigMaps {
        StaticConfigMaps::default()
    }

    /// Adds (or replaces) a ConfigMap's `data`.
    pub fn insert(&mut self, namespace: &str, name: &str, data: BTreeMap<String, String>) {
        let key = (namespace.to_string(), name.to_string());
        self.absent.remove(&key);
        self.found.insert(key, data);
    }

    /// Records that a ConfigMap does not exist.
    pub fn mark_absent(&mut self, namespace: &str, name: &str) {
        let key = (namespace.to_string(), name.to_string());
        self.found.remove(&key);
        self.absent.insert(key);
    }

    /// Records why a ConfigMap is unresolved (completing `ConfigMap NS/NAME ...`).
    pub fn mark_unresolved(&mut self, namespace: &str, name: &str, reason: impl Into<String>) {
        self.reasons.insert((namespace.to_string(), name.to_string()), reason.into());
    }

    /// Sets why ConfigMaps neither found, absent nor marked unresolved are unresolved.
    pub fn set_default_reason(&mut self, reason: impl Into<String>) {
        self.default_reason = Some(reason.into());
    }

    /// Number of ConfigMaps found.
    pub fn len(&self) -> usize {
        self.found.len()
    }

    /// True when no ConfigMap is known.
    pub fn is_empty(&self) -> bool {
        self.found.is_empty()
    }

    /// The ConfigMaps among manifest documents (`kind: ConfigMap`, `apiVersion: v1`), their `data`
    /// only (`binaryData` is not text). A document without `metadata.namespace` is taken to be in
    /// `default_namespace` (as `kubectl apply -n NS` would place it).
    pub fn from_documents<'a>(
        docs: impl IntoIterator<Item = &'a serde_json::Value>,
        default_namespace: &str,
    ) -> StaticConfigMaps {
        let mut out = StaticConfigMaps::new();
        for doc in docs {
            if doc["kind"] != "ConfigMap" || doc["apiVersion"] != "v1" {
                continue;
            }
            let Some(name) = doc["metadata"]["name"].as_str() else { continue };
            let namespace = doc["metadata"]["namespace"].as_str().unwrap_or(default_namespace);
            let data = doc["data"]
                .as_object()
                .map(|m| m.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string()))).collect())
                .unwrap_or_default();
            out.insert(namespace, name, data);
        }
        out
    }
}

impl ConfigMapSource for StaticConfigMaps {
    fn get(&self, namespace: &str, name: &str) -> ConfigMapLookup<'_> {
        let key = (namespace.to_string(), name.to_string());
        match self.found.get(&key) {
            Some(data) => ConfigMapLookup::Found(data),
            None if self.absent.contains(&key) => ConfigMapLookup::NotFound,
            None => ConfigMapLookup::Unresolved,
        }
    }

    fn unresolved_reason(&self, namespace: &str, name: &str) -> String {
        let key = (namespace.to_string(), name.to_string());
        self.reasons
            .get(&key)
            .or(self.default_reason.as_ref())
            .cloned()
            .unwrap_or_else(|| UNAVAILABLE.to_string())
    }
}

/// The names of the ConfigMaps a volume reads (`configMap`, and `projected` ConfigMap sources).
pub(crate) fn volume_configmaps(volume: &Volume) -> Vec<&str> {
    let mut out = Vec::new();
    if let Some(cm) = &volume.config_map {
        out.push(cm.name.as_str());
    }
    if let Some(p) = &volume.projected {
        out.extend(p.sources.iter().flatten().filter_map(|s| s.config_map.as_ref()).map(|c| c.name.as_str()));
    }
    out
}

/// The ConfigMaps a container's env reads (`valueFrom.configMapKeyRef`, `envFrom.configMapRef`).
pub(crate) fn env_configmaps(container: &Container) -> Vec<&str> {
    let refs = container
        .env
        .iter()
        .flatten()
        .filter_map(|e| e.value_from.as_ref()?.config_map_key_ref.as_ref())
        .map(|r| r.name.as_str());
    let from = container
        .env_from
        .iter()
        .flatten()
        .filter_map(|e| e.config_map_ref.as_ref())
        .map(|r| r.name.as_str());
    refs.chain(from).collect()
}

/// The ConfigMaps an evaluation of `workload` could read: for every app container and native
/// sidecar with an exec liveness probe, the ConfigMaps its env refers to, and those of the volumes
/// it mounts whose files the probe may run: a volume whose mount path appears in the probe's
/// command, in a literal env value of the container, in a script already in `known` (a script that
/// runs another from a second ConfigMap), or is the container's `workingDir`. So a Pod's
/// `kube-root-ca.crt` (mounted at `/var/run/secrets/...`) is not read for a probe that never names
/// that folder. Each as (namespace from the object's metadata, when it has one; name), sorted and
/// deduplicated. Pure: a server prefetches these, then asks again with what it found (scripts name
/// further scripts) until nothing new is needed.
pub fn configmaps_needed(workload: &Workload, known: &dyn ConfigMapSource) -> Vec<(Option<String>, String)> {
    let spec = &workload.spec;
    let namespace = workload.metadata.namespace.clone().filter(|n| !n.is_empty());
    let sidecars =
        spec.init_containers.iter().flatten().filter(|c| c.restart_policy.as_deref() == Some("Always"));
    let mut names = BTreeSet::new();
    for c in spec.containers.iter().chain(sidecars) {
        let Some(exec) = c.liveness_probe.as_ref().and_then(|p| p.exec.as_ref()) else {
            continue;
        };
        // A command over the analysis's bound runs no file the analysis reads (s26: its words
        // are not listed either, a 500,000-argument command being 8 MB of them).
        if !super::exec::within_command_bound(exec.command.as_deref().unwrap_or(&[])) {
            continue;
        }
        let mut texts: Vec<&str> = exec.command.iter().flatten().map(String::as_str).collect();
        texts.extend(c.env.iter().flatten().filter_map(|e| e.value.as_deref()));
        let ns = namespace.as_deref().unwrap_or("");
        let mounted: Vec<(&str, Vec<&str>)> = c
            .volume_mounts
            .iter()
            .flatten()
            .filter_map(|m| {
                let volume = spec.volumes.iter().flatten().find(|v| v.name == m.name)?;
                Some((m.mount_path.as_str(), volume_configmaps(volume)))
            })
            .collect();
        let env_cms = env_configmaps(c);
        for cm in mounted.iter().flat_map(|(_, cms)| cms.iter()).chain(env_cms.iter()) {
            if let ConfigMapLookup::Found(data) = known.get(ns, cm) {
                texts.extend(data.values().map(String::as_str));
            }
        }
        let workdir = c.working_dir.as_deref().map(|w| w.trim_end_matches('/'));
        for (path, cms) in mounted {
            let path = path.trim_end_matches('/');
            let named = !path.is_empty() && texts.iter().any(|t| t.contains(path));
            // A file mounted into a directory of the default PATH (`subPath` at
            // `/usr/local/bin/check.sh`) runs by its bare name (`check.sh`).
            let (dir, file) = path.rsplit_once('/').unwrap_or(("", path));
            let env_path = c.env.iter().flatten().find(|e| e.name == "PATH").and_then(|e| e.value.as_deref());
            let on_path = !file.is_empty()
                && env_path
                    .unwrap_or(super::exec::DEFAULT_PATH)
                    .split(':')
                    .any(|d| d.trim_end_matches('/') == dir)
                && texts.iter().any(|t| t.contains(file));
            let named = named || on_path;
            if named
                || workdir.is_some_and(|w| !w.is_empty() && (w == path || w.starts_with(&format!("{path}/"))))
            {
                names.extend(cms.into_iter().map(str::to_string));
            }
        }
        names.extend(env_cms.into_iter().map(str::to_string));
    }
    names.into_iter().map(|n| (namespace.clone(), n)).collect()
}
