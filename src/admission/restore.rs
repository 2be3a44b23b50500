//! The patch that keeps probegate's own changes when an UPDATE only sends back what it changed at
//! admission (a `kubectl apply` of the unchanged manifest; docs/reapply.md): a Pod's probes and
//! hooks are immutable, and a template changed back would roll the workload. Pure, as the rest of
//! the engine.

use json_patch::PatchOperation;
use serde_json::Value;

/// `v` without zero numbers and nulls (at any depth): as the API server stores it (Go's
/// `omitempty` drops a probe's `initialDelaySeconds: 0`), so equal probes compare equal.
fn stored_form(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, v)| !v.is_null() && v.as_f64() != Some(0.0))
                .map(|(k, v)| (k.clone(), stored_form(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(stored_form).collect()),
        other => other.clone(),
    }
}

/// The PodSpec of `object` at `spec` (JSON Pointer tokens from the root: `["spec"]` for a Pod,
/// `["spec", "template", "spec"]` for a Deployment); null when it has none.
fn pod_spec<'a>(object: &'a Value, spec: &[&str]) -> &'a Value {
    spec.iter().fold(object, |v, t| &v[*t])
}

/// An object holding only `pod_spec` at `spec` (for a template, whose object was read as its kind
/// and not kept as text): what [`restore_our_patch`] reads and patches.
pub(super) fn skeleton(spec: &[&str], pod_spec: Value) -> Value {
    spec.iter().rev().fold(pod_spec, |v, t| serde_json::json!({ *t: v }))
}

/// The PodSpec of a candidate `object` at `spec`, for re-evaluating it (None: not a PodSpec).
pub(super) fn candidate_spec(object: &Value, spec: &[&str]) -> Option<k8s_openapi::api::core::v1::PodSpec> {
    serde_json::from_value(pod_spec(object, spec).clone()).ok()
}

/// One probe or lifecycle field of a container: (container list, index, field, stored form).
type Field = (&'static str, usize, &'static str, Value);

/// The probe and lifecycle fields of the containers (app and init) of the PodSpec at `spec`, by
/// position, as JSON in their stored form ([`stored_form`]).
fn probe_fields(object: &Value, spec: &[&str]) -> Vec<Field> {
    const FIELDS: [&str; 4] = ["livenessProbe", "readinessProbe", "startupProbe", "lifecycle"];
    let mut out = Vec::new();
    for list in ["containers", "initContainers"] {
        for (i, c) in pod_spec(object, spec)[list].as_array().into_iter().flatten().enumerate() {
            for f in FIELDS {
                out.push((list, i, f, stored_form(&c[f])));
            }
        }
    }
    out
}

/// What [`restore_our_patch`] recognised in an UPDATE.
#[derive(Debug, PartialEq)]
pub(super) enum Restore {
    /// Not an UPDATE that only sends back probegate's changes, or nothing to restore.
    No,
    /// probegate's patch of the object as sent gives the old probes and hooks back; the patch that
    /// puts the old values back.
    ByPatch(Vec<PatchOperation>),
    /// Only with the startup probes probegate added left out (a client-side re-apply); the patch
    /// that puts the old values back.
    WithoutAdded(Vec<PatchOperation>),
}

/// For an UPDATE of `new` over `old` (whole objects, or [`skeleton`]s, with their PodSpec at
/// `spec`): when the update changes probes or lifecycle hooks only by sending back what probegate
/// changed (`kubectl apply` of the unchanged manifest: client-side, the manifest's values over the
/// stored object, probegate's added startup probes kept; server-side, the manifest's values,
/// probegate's additions dropped), a JSON patch that puts the old object's values back, so the
/// object stays as probegate made it and the rest of the update (a label, say) goes through. A
/// Pod's probes and hooks are immutable: the API server would otherwise refuse the update; a
/// template changed back would roll the workload. Recognised when probegate's patch of the object
/// (`patch`), or of the object without the startup probes probegate added (`mutate` computes
/// probegate's patch of a candidate), yields the old object's probes and hooks in every container.
/// Otherwise, or when they are already equal, [`Restore::No`].
///
/// Which of the old object's startup probes are probegate's is recorded nowhere: a container's is
/// taken for probegate's when the object as sent (startup probe kept) does not give that
/// container's old fields back, and the whole object is then checked once more. Dropping every old
/// startup probe at once (until s27) also dropped a container's own one beside another container's
/// added one, and nothing was restored (srv26: the API server refused the re-apply).
pub(super) fn restore_our_patch(
    spec: &[&str],
    new: &Value,
    old: &Value,
    patch: &[PatchOperation],
    mutate: impl Fn(&Value) -> Vec<PatchOperation>,
) -> Restore {
    let (new_fields, old_fields) = (probe_fields(new, spec), probe_fields(old, spec));
    if new_fields.len() != old_fields.len() || new_fields == old_fields {
        return Restore::No;
    }
    // The probe fields of `candidate` once `ops` is applied (None: the patch does not apply).
    let patched = |candidate: &Value, ops: &[PatchOperation]| {
        let mut c = candidate.clone();
        json_patch::patch(&mut c, ops).is_ok().then(|| probe_fields(&c, spec))
    };
    let by_patch = !patch.is_empty() && patched(new, patch).as_ref() == Some(&old_fields);
    let mut recognised = by_patch;
    if !recognised {
        // Client-side apply keeps the startup probes probegate added: try without them. A
        // container whose old fields come back with its startup probe kept has its own (or one
        // probegate only changed); the others lose theirs.
        let kept = if patch.is_empty() { Some(new_fields.clone()) } else { patched(new, patch) };
        let comes_back = |list: &str, i: usize| {
            kept.as_ref().is_some_and(|k| {
                k.iter().zip(&old_fields).filter(|(f, _)| f.0 == list && f.1 == i).all(|(f, o)| f.3 == o.3)
            })
        };
        let mut without = new.clone();
        let mut dropped = false;
        for list in ["containers", "initContainers"] {
            for (i, c) in pod_spec(old, spec)[list].as_array().into_iter().flatten().enumerate() {
                if c.get("startupProbe").is_some()
                    && !comes_back(list, i)
                    && let Some(n) = spec
                        .iter()
                        .try_fold(&mut without, |v, t| v.get_mut(*t))
                        .and_then(|s| s.get_mut(list))
                        .and_then(|l| l.get_mut(i))
                        .and_then(Value::as_object_mut)
                {
                    dropped |= n.remove("startupProbe").is_some();
                }
            }
        }
        if dropped {
            let ops = mutate(&without);
            recognised = !ops.is_empty() && patched(&without, &ops).as_ref() == Some(&old_fields);
        }
    }
    if !recognised {
        return Restore::No;
    }
    let prefix: String = spec.iter().map(|t| format!("/{t}")).collect();
    let mut restore = Vec::new();
    for ((list, i, field, now), (_, _, _, before)) in new_fields.iter().zip(&old_fields) {
        if now == before {
            continue;
        }
        let Ok(path) = jsonptr::PointerBuf::parse(format!("{prefix}/{list}/{i}/{field}")) else {
            return Restore::No;
        };
        restore.push(match (now.is_null(), before.is_null()) {
            (_, true) => PatchOperation::Remove(json_patch::RemoveOperation { path }),
            (true, false) => PatchOperation::Add(json_patch::AddOperation { path, value: before.clone() }),
            (false, false) => {
                PatchOperation::Replace(json_patch::ReplaceOperation { path, value: before.clone() })
            }
        });
    }
    if by_patch { Restore::ByPatch(restore) } else { Restore::WithoutAdded(restore) }
}
