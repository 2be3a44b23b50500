//! The files an exec probe can run, as far as admission can read them: a path resolved through the
//! container's `volumeMounts` (longest `mountPath` first, `subPath`) to the Pod's `volumes`, and
//! read from a `configMap` volume (with `items` key-to-path mapping) or a `projected` volume's
//! ConfigMap sources, through a [`ConfigMapSource`]. Secrets are never read; other volumes
//! (emptyDir, PVCs, ...) cannot be read at admission.

use std::borrow::Cow;

use k8s_openapi::api::core::v1::{Container, KeyToPath, Volume};

use super::configmaps::{ConfigMapLookup, ConfigMapSource};
use super::exec::{FileLookup, ScriptFiles};

/// One container's view of the Pod's volumes.
pub(crate) struct ContainerFiles<'a> {
    pub container: &'a Container,
    pub volumes: &'a [Volume],
    pub configmaps: &'a dyn ConfigMapSource,
    pub namespace: &'a str,
}

/// A Windows path (`C:\\probe\\live.ps1`, `c:/probe`) as a `/` path: Windows containers mount
/// volumes on the system drive, where a `mountPath` of `/probe` is `C:\\probe` (Kubernetes docs,
/// "Windows containers in Kubernetes: storage"), so `C:` is dropped; another drive keeps its letter
/// (`/d:/data`). `None` for any other path.
fn windows_path(path: &str) -> Option<String> {
    let b = path.as_bytes();
    if !(b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && matches!(b[2], b'\\' | b'/')) {
        return None;
    }
    let rest = path[2..].replace('\\', "/");
    let drive = b[0].to_ascii_lowercase();
    Some(if drive == b'c' { rest } else { format!("/{}:{rest}", drive as char) })
}

/// `/a/./b/../c` → `/a/c`; a relative path is joined to `cwd` when there is one. Windows paths
/// are read as [`windows_path`] says.
pub(crate) fn normalize<'p>(path: &'p str, cwd: Option<&str>) -> Option<Cow<'p, str>> {
    // An absolute path already in normal form (no empty, `.` or `..` part) is itself, borrowed:
    // `cwd` is not read for it and it is no Windows path. (Asked per word a script may run and
    // per directory of `PATH` for a bare name, and of every `mountPath` each time: this skips
    // the split, the parts' `Vec`, the join and the copy.)
    if let Some(rest) = path.strip_prefix('/')
        && (rest.is_empty() || rest.split('/').all(|p| !matches!(p, "" | "." | "..")))
    {
        return Some(Cow::Borrowed(path));
    }
    let windows_cwd = cwd.and_then(windows_path);
    let cwd = windows_cwd.as_deref().or(cwd);
    let converted = windows_path(path)
        .or_else(|| (windows_cwd.is_some() && !path.starts_with('/')).then(|| path.replace('\\', "/")));
    let path = converted.as_deref().unwrap_or(path);
    let full = if path.starts_with('/') {
        path.to_string()
    } else {
        let cwd = cwd.filter(|c| c.starts_with('/'))?;
        format!("{cwd}/{path}")
    };
    let mut parts: Vec<&str> = Vec::new();
    for p in full.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    Some(Cow::Owned(format!("/{}", parts.join("/"))))
}

fn is_under(path: &str, dir: &str) -> bool {
    dir == "/" || path == dir || path.strip_prefix(dir).is_some_and(|r| r.starts_with('/'))
}

/// What one ConfigMap source says about a path.
enum Source {
    Text(String, String),
    /// The file would not exist (a missing key, a ConfigMap that does not exist).
    Missing(String),
    /// Cannot be known here.
    Unknown(String),
    /// This source does not provide that path.
    NotHere,
}

impl ContainerFiles<'_> {
    fn configmap(&self, name: &str, items: Option<&Vec<KeyToPath>>, rel: &str) -> Source {
        let key = match items.filter(|i| !i.is_empty()) {
            Some(items) => match items
                .iter()
                .find(|i| normalize(&i.path, Some("/")).as_deref() == Some(format!("/{rel}").as_str()))
            {
                Some(i) => i.key.as_str(),
                None => return Source::NotHere,
            },
            None if rel.is_empty() || rel.contains('/') => return Source::NotHere,
            None => rel,
        };
        let ns = self.namespace;
        match self.configmaps.get(ns, name) {
            ConfigMapLookup::Found(data) => match data.get(key) {
                Some(text) => Source::Text(text.clone(), format!("ConfigMap {ns}/{name}, key {key}")),
                None => Source::Missing(format!("ConfigMap {ns}/{name} has no key {key:?}")),
            },
            ConfigMapLookup::NotFound => Source::Missing(format!("ConfigMap {ns}/{name} does not exist")),
            ConfigMapLookup::Unresolved => Source::Unknown(format!(
                "ConfigMap {ns}/{name} {}",
                self.configmaps.unresolved_reason(ns, name)
            )),
        }
    }

    fn volume_file(&self, volume: &Volume, rel: &str) -> FileLookup {
        let name = &volume.name;
        let into = |s: Source| match s {
            Source::Text(text, origin) => FileLookup::Text { text, origin },
            Source::Missing(r) | Source::Unknown(r) => FileLookup::Unreadable(r),
            Source::NotHere => FileLookup::Unreadable(format!("volume {name} has no file {rel:?}")),
        };
        if let Some(cm) = &volume.config_map {
            return into(self.configmap(&cm.name, cm.items.as_ref(), rel));
        }
        if volume.secret.is_some() {
            return FileLookup::Unreadable(format!("on Secret volume {name} (Secrets are never read)"));
        }
        if let Some(p) = &volume.projected {
            let (mut missing, mut unknown) = (None, None);
            for s in p.sources.iter().flatten() {
                if let Some(cm) = &s.config_map {
                    match self.configmap(&cm.name, cm.items.as_ref(), rel) {
                        t @ Source::Text(..) => return into(t),
                        Source::Missing(r) => missing = missing.or(Some(r)),
                        Source::Unknown(r) => unknown = unknown.or(Some(r)),
                        Source::NotHere => {}
                    }
                } else if let Some(secret) = &s.secret {
                    let here = match secret.items.as_ref().filter(|i| !i.is_empty()) {
                        Some(items) => items.iter().any(|i| i.path.trim_start_matches("./") == rel),
                        None => !rel.contains('/'),
                    };
                    if here {
                        unknown = unknown.or(Some(format!(
                            "in Secret {} of projected volume {name} (Secrets are never read)",
                            secret.name
                        )));
                    }
                }
            }
            return into(unknown.or(missing).map_or(Source::NotHere, Source::Unknown));
        }
        let kind = if volume.empty_dir.is_some() {
            "emptyDir"
        } else if volume.persistent_volume_claim.is_some() {
            "persistentVolumeClaim"
        } else if volume.host_path.is_some() {
            "hostPath"
        } else if volume.downward_api.is_some() {
            "downwardAPI"
        } else {
            "a"
        };
        FileLookup::Unreadable(format!("on {kind} volume {name} (not readable at admission)"))
    }
}

impl ScriptFiles for ContainerFiles<'_> {
    fn read(&self, path: &str) -> FileLookup {
        if self.container.volume_mounts.as_ref().is_none_or(|m| m.is_empty()) {
            return FileLookup::NotOnVolume;
        }
        let Some(path) = normalize(path, self.container.working_dir.as_deref()) else {
            return FileLookup::NotOnVolume;
        };
        let mount = self
            .container
            .volume_mounts
            .iter()
            .flatten()
            .filter_map(|m| Some((normalize(&m.mount_path, None)?, m)))
            .filter(|(mp, _)| is_under(&path, mp))
            .max_by_key(|(mp, _)| mp.len());
        let Some((mount_path, mount)) = mount else { return FileLookup::NotOnVolume };
        let Some(volume) = self.volumes.iter().find(|v| v.name == mount.name) else {
            return FileLookup::NotOnVolume;
        };
        if mount.sub_path_expr.as_deref().is_some_and(|s| !s.is_empty()) {
            return FileLookup::Unreadable(format!("volume {} is mounted with subPathExpr", volume.name));
        }
        let below = path[mount_path.len().min(path.len())..].trim_start_matches('/');
        let joined = match mount.sub_path.as_deref().filter(|s| !s.is_empty()) {
            Some(sub) => format!("/{sub}/{below}"),
            None => format!("/{below}"),
        };
        let Some(rel) = normalize(&joined, None) else { return FileLookup::NotOnVolume };
        let mut rel = rel.trim_start_matches('/');
        // ConfigMap volumes are written atomically: files are symlinks into `..data/` (a link to a
        // `..<timestamp>/` directory), and a script that resolved its own path sees those names.
        if let Some((first, rest)) = rel.split_once('/')
            && first.starts_with("..")
            && first != ".."
        {
            rel = rest;
        }
        self.volume_file(volume, rel)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;
    use crate::engine::configmaps::StaticConfigMaps;

    #[test]
    fn normalize_reads_absolute_and_relative_paths() {
        let cases = [
            ("/", None, Some("/")),
            ("/app/run.sh", Some("/w"), Some("/app/run.sh")),
            ("/app/", None, Some("/app")),
            ("/app//run.sh", None, Some("/app/run.sh")),
            ("/app/./run.sh", None, Some("/app/run.sh")),
            ("/app/x/../run.sh", None, Some("/app/run.sh")),
            ("/..", None, Some("/")),
            ("/.", None, Some("/")),
            ("/a/.b/..c", None, Some("/a/.b/..c")),
            ("run.sh", Some("/w"), Some("/w/run.sh")),
            ("run.sh", None, None),
            ("./run.sh", Some("C:\\app"), Some("/app/run.sh")),
            ("D:\\x\\y.ps1", None, Some("/d:/x/y.ps1")),
        ];
        for (path, cwd, want) in cases {
            assert_eq!(normalize(path, cwd).as_deref(), want, "{path} in {cwd:?}");
        }
    }

    fn text(f: FileLookup) -> String {
        match f {
            FileLookup::Text { text, .. } => text,
            other => panic!("expected text, got {other:?}"),
        }
    }

    fn unreadable(f: FileLookup) -> String {
        match f {
            FileLookup::Unreadable(r) => r,
            other => panic!("expected unreadable, got {other:?}"),
        }
    }

    #[test]
    fn mounts_items_subpaths_and_projections() {
        let container: Container = serde_json::from_value(json!({
        "name": "c", "workingDir": "/work",
        "volumeMounts": [
            {"name": "health", "mountPath": "/health"},
            {"name": "nested", "mountPath": "/health/more/"},
            {"name": "health", "mountPath": "/opt/one.sh", "subPath": "ping.sh"},
            {"name": "items", "mountPath": "/items"},
            {"name": "proj", "mountPath": "/proj"},
            {"name": "sec", "mountPath": "/secret"},
            {"name": "scratch", "mountPath": "/work"}
        ]}))
        .unwrap();
        let volumes: Vec<Volume> = serde_json::from_value(json!([
            {"name": "health", "configMap": {"name": "health"}},
            {"name": "nested", "configMap": {"name": "other"}},
            {"name": "items", "configMap": {"name": "health", "items": [{"key": "ping.sh", "path": "bin/probe"}]}},
            {"name": "proj", "projected": {"sources": [
                {"secret": {"name": "s", "items": [{"key": "k", "path": "token"}]}},
                {"configMap": {"name": "missing"}},
                {"configMap": {"name": "health"}}]}},
            {"name": "sec", "secret": {"secretName": "s"}},
            {"name": "scratch", "emptyDir": {}}
        ])).unwrap();
        let mut cms = StaticConfigMaps::new();
        cms.insert("ns", "health", BTreeMap::from([("ping.sh".into(), "redis-cli ping".into())]));
        cms.mark_absent("ns", "other");
        let files =
            ContainerFiles { container: &container, volumes: &volumes, configmaps: &cms, namespace: "ns" };
        assert_eq!(text(files.read("/health/ping.sh")), "redis-cli ping");
        assert_eq!(text(files.read("/health/./x/../ping.sh")), "redis-cli ping");
        assert_eq!(text(files.read("/health/..data/ping.sh")), "redis-cli ping");
        assert_eq!(text(files.read("/opt/one.sh")), "redis-cli ping");
        assert_eq!(text(files.read("/items/bin/probe")), "redis-cli ping");
        assert_eq!(text(files.read("/proj/ping.sh")), "redis-cli ping");
        assert!(unreadable(files.read("/items/ping.sh")).contains("no file"));
        assert!(unreadable(files.read("/health/nope.sh")).contains("no key"));
        assert!(unreadable(files.read("/health/more/x.sh")).contains("does not exist"));
        assert!(unreadable(files.read("/proj/token")).contains("never read"));
        assert!(unreadable(files.read("/secret/run.sh")).contains("never read"));
        assert!(unreadable(files.read("check.sh")).contains("emptyDir"));
        assert!(matches!(files.read("/usr/bin/redis-cli"), FileLookup::NotOnVolume));
        let none = crate::engine::configmaps::NoConfigMaps;
        let files =
            ContainerFiles { container: &container, volumes: &volumes, configmaps: &none, namespace: "ns" };
        assert!(unreadable(files.read("/health/ping.sh")).contains("ConfigMap ns/health is not available"));
    }

    #[test]
    fn windows_paths_resolve_through_their_mounts() {
        let container: Container = serde_json::from_value(json!({
        "name": "c", "workingDir": "C:\\app",
        "volumeMounts": [
            {"name": "health", "mountPath": "C:\\probe"},
            {"name": "health", "mountPath": "/unix-style"},
            {"name": "health", "mountPath": "D:\\other"},
            {"name": "health", "mountPath": "C:\\app\\checks"}
        ]}))
        .unwrap();
        let volumes: Vec<Volume> =
            serde_json::from_value(json!([{"name": "health", "configMap": {"name": "health"}}])).unwrap();
        let mut cms = StaticConfigMaps::new();
        cms.insert("ns", "health", BTreeMap::from([("live.ps1".into(), "exit 0".into())]));
        let files =
            ContainerFiles { container: &container, volumes: &volumes, configmaps: &cms, namespace: "ns" };
        for path in [
            "C:\\probe\\live.ps1",
            "c:/probe/live.ps1",
            "C:\\unix-style\\live.ps1",
            "/probe/live.ps1",
            "D:\\other\\live.ps1",
            "checks\\live.ps1",
            ".\\checks\\live.ps1",
        ] {
            assert_eq!(text(files.read(path)), "exit 0", "{path}");
        }
        assert!(matches!(files.read("D:\\probe\\live.ps1"), FileLookup::NotOnVolume));
        assert!(matches!(files.read("C:\\other\\live.ps1"), FileLookup::NotOnVolume));
        // In a Linux container a backslash is part of a file name.
        let linux: Container = serde_json::from_value(json!({
        "name": "c", "workingDir": "/work", "volumeMounts": [{"name": "health", "mountPath": "/work/probe"}]}))
        .unwrap();
        let files =
            ContainerFiles { container: &linux, volumes: &volumes, configmaps: &cms, namespace: "ns" };
        assert_eq!(text(files.read("probe/live.ps1")), "exit 0");
        assert!(matches!(files.read("probe\\live.ps1"), FileLookup::NotOnVolume));
    }
}
