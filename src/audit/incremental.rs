//! Re-evaluating only what a change touched (`audit --watch` between full passes).
//!
//! A watch event names one object ([`Target`]). Its report belongs to the object probegate audits
//! for it: the object itself, or the top of its chain of controllers of audited kinds (a Pod's
//! ReplicaSet's Deployment), as a full pass decides. [`reaudit`] gets that chain by name (`get`),
//! evaluates the top object with the policy of its namespace, reads the restarts of the Pods under
//! it (listed with the controller's own label selector, then kept only when their owner chain
//! reaches it) and the namespace's liveness Events, and writes its report when the content hash
//! changed. An object that is gone has its report deleted. Nothing else is read or written, so
//! one changed Deployment costs a handful of requests, not a pass over the cluster.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::cluster::{Cluster, Listed};
use super::reports::{self, ReportApi};
use super::{Audited, PodRestarts, Writes, evidence};
use crate::engine::{StaticConfigMaps, WorkloadKind};
use crate::server::LoadedPolicy;

/// A workload object a watch event named.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Target {
    /// Its kind.
    pub kind: WorkloadKind,
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
}

impl Ord for Target {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (&self.namespace, self.kind.as_str(), &self.name).cmp(&(
            &other.namespace,
            other.kind.as_str(),
            &other.name,
        ))
    }
}

impl PartialOrd for Target {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// What a batch of re-evaluations did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Report writes and deletions.
    pub writes: Writes,
    /// Workloads evaluated (after walking up to their audited controllers and removing repeats).
    pub evaluated: usize,
    /// Notes (unreadable Namespaces, Events or ConfigMaps).
    pub notes: Vec<String>,
}

/// The controller that owns a Pod's intermediate owner, for the kinds that have one: a
/// Deployment's Pods belong to its ReplicaSets, a CronJob's to its Jobs.
fn intermediate(kind: WorkloadKind) -> Option<WorkloadKind> {
    match kind {
        WorkloadKind::Deployment => Some(WorkloadKind::ReplicaSet),
        WorkloadKind::CronJob => Some(WorkloadKind::Job),
        _ => None,
    }
}

/// Follows `target`'s controllers (of audited kinds, and only while the owner reference's uid is
/// the object found) to the object a full pass would report. `None` when `target` is gone.
async fn resolve(
    cluster: &Cluster,
    target: &Target,
) -> anyhow::Result<Option<(Target, Listed, Option<String>)>> {
    let Some((mut listed, mut selector)) =
        cluster.get_object(target.kind, &target.namespace, &target.name).await?
    else {
        return Ok(None);
    };
    let mut at = target.clone();
    // Owner chains of audited kinds are at most Pod -> ReplicaSet -> Deployment (or Job ->
    // CronJob); the bound only guards against a malformed cycle.
    for _ in 0..8 {
        let Some((kind, name)) = listed.parent_ref.clone() else { break };
        match cluster.get_object(kind, &at.namespace, &name).await? {
            Some((parent, parent_selector)) if Some(&parent.uid) == listed.parent.as_ref() => {
                at = Target { kind, namespace: at.namespace.clone(), name };
                listed = parent;
                selector = parent_selector;
            }
            // The controller is gone or another object now has its name: this object is
            // reported itself, as in a full pass.
            _ => break,
        }
    }
    Ok(Some((at, listed, selector)))
}

/// Re-evaluates the objects `targets` name (each through its audited controller), writes their
/// reports when the content changed, and deletes the reports of objects that are gone.
pub async fn reaudit(
    cluster: &Cluster,
    loaded: &LoadedPolicy,
    api: ReportApi,
    targets: &[Target],
) -> Outcome {
    let mut out = Outcome::default();
    let mut tops: BTreeMap<Target, (Listed, Option<String>)> = BTreeMap::new();
    let mut gone: BTreeSet<&Target> = BTreeSet::new();
    for t in targets {
        match resolve(cluster, t).await {
            Ok(Some((top, listed, selector))) => {
                if !listed.mirror {
                    tops.insert(top, (listed, selector));
                }
            }
            Ok(None) => {
                gone.insert(t);
            }
            Err(e) => out.writes.fail(format!("{} {}/{}: {e:#}", t.kind.as_str(), t.namespace, t.name)),
        }
    }
    let retries_before = cluster.write_retries();
    for t in gone {
        let subject = reports::Subject {
            kind: t.kind,
            namespace: t.namespace.clone(),
            name: t.name.clone(),
            uid: String::new(),
        };
        let name = reports::report_name(&subject);
        match cluster.delete_report(api, &t.namespace, &name).await {
            Ok(true) => out.writes.deleted += 1,
            Ok(false) => {}
            Err(e) => out.writes.fail(format!("delete {}/{name}: {e}", t.namespace)),
        }
    }
    out.writes.retried += cluster.write_retries() - retries_before;
    let mut labels: HashMap<String, Option<BTreeMap<String, String>>> = HashMap::new();
    let mut configmaps = StaticConfigMaps::new();
    let mut fetched: HashSet<(String, String)> = HashSet::new();
    let mut existing = HashMap::new();
    let mut audited = Vec::new();
    for (top, (listed, selector)) in tops {
        let scope = cluster.in_namespace(&top.namespace);
        if !labels.contains_key(&top.namespace) {
            let l = match scope.namespace_labels().await {
                Ok(mut l) => l.remove(&top.namespace),
                Err(e) => {
                    out.notes.push(format!(
                        "cannot read Namespace {} ({e}); namespaceSelector overrides do not match",
                        top.namespace
                    ));
                    None
                }
            };
            labels.insert(top.namespace.clone(), l);
        }
        for (ns, name) in crate::engine::configmaps_needed(&listed.workload, &configmaps) {
            let key = (ns.unwrap_or_else(|| top.namespace.clone()), name);
            if fetched.insert(key.clone()) {
                match cluster.configmap(&key.0, &key.1).await {
                    Ok(Some(data)) => configmaps.insert(&key.0, &key.1, data),
                    Ok(None) => configmaps.mark_absent(&key.0, &key.1),
                    Err(e) => out.notes.push(format!(
                        "cannot read ConfigMap {}/{} ({e}); liveness scripts from it are not analysed",
                        key.0, key.1
                    )),
                }
            }
        }
        let ns_labels = labels.get(&top.namespace).and_then(Option::as_ref);
        let checked = super::evaluate(
            &loaded.policy,
            top.kind,
            &listed.workload,
            &top.namespace,
            ns_labels,
            &configmaps,
        );
        let mut one = [Audited { checked, uid: listed.uid.clone(), parent: None }];
        if one[0].checked.findings.iter().any(|r| super::wants_evidence(r.finding.rule)) {
            match descendants(&scope, &top, &listed, selector.as_deref()).await {
                Ok((pods, parents, uids)) => {
                    super::attach_evidence(&scope, &mut one, &pods, &parents, &uids, &mut out.notes).await;
                }
                Err(e) => out.notes.push(format!(
                    "cannot list the Pods of {} {}/{} ({e:#}); its findings have no restart evidence",
                    top.kind.as_str(),
                    top.namespace,
                    top.name
                )),
            }
        }
        let [a] = one;
        let name = reports::report_name(&reports::Subject {
            kind: top.kind,
            namespace: top.namespace.clone(),
            name: top.name.clone(),
            uid: a.uid.clone(),
        });
        match cluster.report_meta(api, &top.namespace, &name).await {
            Ok(Some(meta)) => {
                existing.insert((top.namespace.clone(), name), meta);
            }
            Ok(None) => {}
            Err(e) => {
                out.notes.push(format!("cannot read report {}/{name} ({e}); writing it", top.namespace))
            }
        }
        audited.push(a);
    }
    out.evaluated = audited.len();
    let (w, _) = super::write_reports(cluster, api, &audited, &loaded.hash, &existing).await;
    out.writes.add(w);
    out
}

/// The Pods under `top` (itself for a Pod), with the owner links and uids that
/// [`super::attach_evidence`] walks.
async fn descendants(
    scope: &Cluster,
    top: &Target,
    listed: &Listed,
    selector: Option<&str>,
) -> anyhow::Result<(Vec<PodRestarts>, HashMap<String, String>, HashSet<String>)> {
    let mut pods = Vec::new();
    let mut parents = HashMap::new();
    let mut uids = HashSet::from([listed.uid.clone()]);
    if top.kind.is_pod() {
        if let Some(status) = &listed.pod_status {
            pods.push((listed.uid.clone(), listed.name.clone(), evidence::pod_restarts(status)));
        }
        return Ok((pods, parents, uids));
    }
    // The controller's selector narrows the lists; the owner chain decides.
    let mut owners = HashSet::from([listed.uid.clone()]);
    if let Some(kind) = intermediate(top.kind) {
        for o in scope.list_matching(kind, &top.namespace, selector).await? {
            if o.parent.as_ref() == Some(&listed.uid) {
                owners.insert(o.uid.clone());
                uids.insert(o.uid.clone());
                parents.insert(o.uid, listed.uid.clone());
            }
        }
    }
    for p in scope.list_matching(WorkloadKind::Pod, &top.namespace, selector).await? {
        let Some(parent) = p.parent.filter(|u| owners.contains(u)) else { continue };
        uids.insert(p.uid.clone());
        parents.insert(p.uid.clone(), parent);
        if let Some(status) = &p.pod_status {
            pods.push((p.uid, p.name, evidence::pod_restarts(status)));
        }
    }
    Ok((pods, parents, uids))
}
