//! Where the PodSpec lives in each admitted kind, and reading it out of an object.
//!
//! Pod template paths: Kubernetes API reference (Deployment, StatefulSet, DaemonSet, ReplicaSet and
//! ReplicationController `spec.template`; Job `spec.template`; CronJob `spec.jobTemplate.spec.template`).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::PodSpec;
use serde::Deserialize;

/// The kinds whose PodSpec probegate evaluates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WorkloadKind {
    /// `v1` Pod: `spec`.
    Pod,
    /// `apps/v1` Deployment: `spec.template.spec`.
    Deployment,
    /// `apps/v1` StatefulSet: `spec.template.spec`.
    StatefulSet,
    /// `apps/v1` DaemonSet: `spec.template.spec`.
    DaemonSet,
    /// `apps/v1` ReplicaSet: `spec.template.spec`.
    ReplicaSet,
    /// `v1` ReplicationController: `spec.template.spec`.
    ReplicationController,
    /// `batch/v1` Job: `spec.template.spec`.
    Job,
    /// `batch/v1` CronJob: `spec.jobTemplate.spec.template.spec`.
    CronJob,
}

impl WorkloadKind {
    /// Recognises a kind by API group and kind name (`""`/`Pod`, `apps`/`Deployment`, ...). The
    /// version is not checked: `matchPolicy: Equivalent` converts requests to the version the
    /// webhook registered for, and every served version keeps the template at the same path.
    pub fn from_group_kind(group: &str, kind: &str) -> Option<WorkloadKind> {
        Some(match (group, kind) {
            ("", "Pod") => WorkloadKind::Pod,
            ("apps", "Deployment") => WorkloadKind::Deployment,
            ("apps", "StatefulSet") => WorkloadKind::StatefulSet,
            ("apps", "DaemonSet") => WorkloadKind::DaemonSet,
            ("apps", "ReplicaSet") => WorkloadKind::ReplicaSet,
            ("", "ReplicationController") => WorkloadKind::ReplicationController,
            ("batch", "Job") => WorkloadKind::Job,
            ("batch", "CronJob") => WorkloadKind::CronJob,
            _ => return None,
        })
    }

    /// Recognises a kind by its name alone (`Deployment`), whatever its API group.
    pub fn from_kind_name(kind: &str) -> Option<WorkloadKind> {
        ["", "apps", "batch"].into_iter().find_map(|g| WorkloadKind::from_group_kind(g, kind))
    }

    /// Recognises a kind from a manifest's `apiVersion` (`apps/v1`, `v1`) and `kind`.
    pub fn from_api_version_kind(api_version: &str, kind: &str) -> Option<WorkloadKind> {
        let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
        WorkloadKind::from_group_kind(group, kind)
    }

    /// The kind's name, e.g. `Deployment`.
    pub fn as_str(self) -> &'static str {
        match self {
            WorkloadKind::Pod => "Pod",
            WorkloadKind::Deployment => "Deployment",
            WorkloadKind::StatefulSet => "StatefulSet",
            WorkloadKind::DaemonSet => "DaemonSet",
            WorkloadKind::ReplicaSet => "ReplicaSet",
            WorkloadKind::ReplicationController => "ReplicationController",
            WorkloadKind::Job => "Job",
            WorkloadKind::CronJob => "CronJob",
        }
    }

    /// JSON Pointer tokens from the object root to its PodSpec.
    pub fn pod_spec_tokens(self) -> &'static [&'static str] {
        match self {
            WorkloadKind::Pod => &["spec"],
            WorkloadKind::CronJob => &["spec", "jobTemplate", "spec", "template", "spec"],
            _ => &["spec", "template", "spec"],
        }
    }

    /// True for a Pod; false for a controller with a pod template.
    pub fn is_pod(self) -> bool {
        self == WorkloadKind::Pod
    }
}

/// The owner of an object (`metadata.ownerReferences[]`), as far as admission needs it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OwnerReference {
    /// API version of the owner, e.g. `apps/v1`.
    #[serde(default)]
    pub api_version: String,
    /// Kind of the owner, e.g. `ReplicaSet`.
    #[serde(default)]
    pub kind: String,
    /// Name of the owner.
    #[serde(default)]
    pub name: String,
    /// True when the owner is the managing controller.
    #[serde(default)]
    pub controller: Option<bool>,
}

/// The object metadata probegate reads. Everything else (managedFields, ...) is skipped unread,
/// and nothing of it is ever logged.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMeta {
    /// `metadata.name`; empty for a Pod made by a controller before the API server names it.
    #[serde(default)]
    pub name: Option<String>,
    /// `metadata.generateName`.
    #[serde(default)]
    pub generate_name: Option<String>,
    /// `metadata.namespace`.
    #[serde(default)]
    pub namespace: Option<String>,
    /// `metadata.labels`.
    #[serde(default)]
    pub labels: Option<BTreeMap<String, String>>,
    /// `metadata.annotations`, without [`LAST_APPLIED_ANNOTATION`] (skipped unread: nothing
    /// reads it, and it is a copy of the whole manifest, often most of a review's metadata).
    #[serde(default, deserialize_with = "annotations_but_last_applied")]
    pub annotations: Option<BTreeMap<String, String>>,
    /// `metadata.ownerReferences`.
    #[serde(default)]
    pub owner_references: Option<Vec<OwnerReference>>,
    /// `metadata.deletionTimestamp`, when the object is being deleted.
    #[serde(default)]
    pub deletion_timestamp: Option<String>,
}

impl ObjectMeta {
    /// The controller owner reference (`controller: true`), if any.
    pub fn controller(&self) -> Option<&OwnerReference> {
        self.owner_references.as_ref()?.iter().find(|o| o.controller == Some(true))
    }

    /// The controller owner reference when its kind is one whose pod template probegate
    /// validates (ReplicaSet, Deployment, StatefulSet, DaemonSet, ReplicationController, Job,
    /// CronJob): the object's template was checked at that controller's admission. An owner of
    /// another kind (a custom resource, or a Pod) is not: rules.md §4.2, "enforce for bare Pods
    /// and unknown owners".
    pub fn validated_controller(&self) -> Option<&OwnerReference> {
        let owner = self.controller()?;
        let kind = if owner.api_version.is_empty() {
            WorkloadKind::from_kind_name(&owner.kind)
        } else {
            WorkloadKind::from_api_version_kind(&owner.api_version, &owner.kind)
        };
        kind.filter(|k| !k.is_pod()).map(|_| owner)
    }

    /// The name, else the `generateName` prefix followed by `*`, else `<unnamed>`: what messages and
    /// logs call the object.
    pub fn display_name(&self) -> String {
        match (&self.name, &self.generate_name) {
            (Some(n), _) if !n.is_empty() => n.clone(),
            (_, Some(g)) if !g.is_empty() => format!("{g}*"),
            _ => "<unnamed>".to_string(),
        }
    }

    /// An annotation's value.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.annotations.as_ref()?.get(key).map(String::as_str)
    }
}

/// An admitted object reduced to what the rules read: its kind, metadata, the pod template's
/// metadata (controllers only) and the PodSpec.
#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    /// What the object is.
    pub kind: WorkloadKind,
    /// The object's own metadata.
    pub metadata: ObjectMeta,
    /// The pod template's metadata (`spec.template.metadata`); `None` for a Pod.
    pub template_metadata: Option<ObjectMeta>,
    /// The PodSpec the rules evaluate.
    pub spec: PodSpec,
}

/// Why an object could not be read as a workload.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// The JSON does not have the shape of the kind (a field of the wrong type, say).
    #[error(
        "the object is not a valid {kind}: {}{}",
        if field.is_empty() { String::new() } else { format!("{field}: ") },
        describe_value_error(&source.to_string())
    )]
    Invalid {
        /// The kind it was read as.
        kind: &'static str,
        /// Where in the object, dotted (`spec.containers[0].livenessProbe.periodSeconds`); empty
        /// when not known.
        field: String,
        /// The deserialization error (names the field and position, never a value).
        #[source]
        source: serde_json::Error,
    },
    /// The object has no PodSpec where its kind keeps one.
    #[error("the {kind} has no pod spec at {path}")]
    NoPodSpec {
        /// The kind it was read as.
        kind: &'static str,
        /// The dotted path where the spec was expected.
        path: &'static str,
    },
}

/// Where a workload object is invalid: see [`Workload::invalid_field`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidField {
    /// JSON Pointer tokens (unescaped) from the object to the field.
    pub tokens: Vec<String>,
    /// The same path dotted, `spec.containers[0].name` (empty for the object itself).
    pub dotted: String,
    /// What is wrong, values redacted: `invalid type: sequence, expected IntOrString`.
    pub message: String,
}

/// `kubectl apply`'s copy of the applied manifest, as a JSON string in an annotation (Kubernetes
/// docs, "Declarative Management of Kubernetes Objects Using Configuration Files").
pub const LAST_APPLIED_ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Annotations as a map of strings, [`LAST_APPLIED_ANNOTATION`] skipped without being unescaped
/// or copied; `null` reads as none.
fn annotations_but_last_applied<'de, D>(d: D) -> Result<Option<BTreeMap<String, String>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    struct Annotations;
    impl<'de> serde::de::Visitor<'de> for Annotations {
        type Value = Option<BTreeMap<String, String>>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a map of strings")
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_map(self)
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = BTreeMap::new();
            while let Some(key) = map.next_key::<String>()? {
                if key == LAST_APPLIED_ANNOTATION {
                    map.next_value::<serde::de::IgnoredAny>()?;
                } else {
                    out.insert(key, map.next_value::<String>()?);
                }
            }
            Ok(Some(out))
        }
    }
    d.deserialize_option(Annotations)
}

/// `metadata: null` reads as empty metadata, like a missing member.
fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

#[derive(Deserialize)]
#[serde(expecting = "a Pod (an object with metadata and spec)")]
struct PodShape {
    /// The object's own `kind`, when it says: it must be the kind it is read as.
    #[serde(default)]
    kind: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    metadata: ObjectMeta,
    spec: Option<PodSpec>,
}

#[derive(Deserialize)]
#[serde(expecting = "a workload object (with metadata and spec)")]
struct TemplateShape {
    /// The object's own `kind`, when it says (a CronJob's `jobTemplate` has none).
    #[serde(default)]
    kind: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    metadata: ObjectMeta,
    spec: Option<TemplateHolder>,
}

#[derive(Deserialize)]
#[serde(expecting = "a workload spec (an object with a pod template)")]
struct TemplateHolder {
    template: Option<LeanTemplate>,
}

/// A pod template whose metadata is read leanly (k8s-openapi's `PodTemplateSpec` reads all of it).
#[derive(Deserialize)]
#[serde(expecting = "a PodTemplateSpec (an object with metadata and spec)")]
struct LeanTemplate {
    #[serde(default, deserialize_with = "null_as_default")]
    metadata: ObjectMeta,
    spec: Option<PodSpec>,
}

#[derive(Deserialize)]
#[serde(expecting = "a CronJob (an object with metadata and spec)")]
struct CronJobShape {
    /// The object's own `kind`, when it says: it must be the kind it is read as.
    #[serde(default)]
    kind: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    metadata: ObjectMeta,
    spec: Option<CronJobSpecShape>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", expecting = "a CronJobSpec (an object with a jobTemplate)")]
struct CronJobSpecShape {
    job_template: Option<TemplateShape>,
}

impl Workload {
    /// Whether its Pods run a Job's work (a Job, a CronJob, or a Pod a Job owns): no Service
    /// sends them traffic, so a readiness probe gates nothing there (Kubernetes docs, "Container
    /// probes": readiness decides the endpoints); the rules ask no readiness of them, and advise
    /// dropping a dependency check from liveness rather than moving it to readiness.
    pub fn runs_a_job(&self) -> bool {
        super::rules::in_job(self.kind, self.metadata.controller().map(|c| c.kind.as_str()))
    }

    /// Reads a workload of the given kind from JSON text (an AdmissionReview's `request.object`).
    ///
    /// # Errors
    /// [`WorkloadError`] when the JSON does not have the kind's shape or lacks the PodSpec.
    pub fn from_json(kind: WorkloadKind, json: &str) -> Result<Workload, WorkloadError> {
        let mut de = serde_json::Deserializer::from_str(json);
        Workload::deserialize_kind(kind, &mut de).map_err(|source| {
            // A literal past f64 (`1` and 309 zeros) stops serde_json's reading with "number out of
            // range", naming no field: read again with `1e300` in its place, which names the field
            // and says what it takes, as a smaller huge number does.
            if let Some(in_range) = number_in_range(json, &source)
                && let Err(e) = Workload::from_json(kind, &in_range)
            {
                return e;
            }
            // Read again with path tracking, for the field's name (only when it is wrong).
            let mut track = serde_path_to_error::Track::new();
            let mut de = serde_json::Deserializer::from_str(json);
            let _ =
                Workload::deserialize_kind(kind, serde_path_to_error::Deserializer::new(&mut de, &mut track));
            let field = track.path().to_string();
            let field = if field == "." { String::new() } else { field };
            WorkloadError::Invalid { kind: kind.as_str(), field, source }
        })?
    }

    /// Reads a workload of the given kind from a parsed JSON value (a manifest document).
    ///
    /// # Errors
    /// As [`Workload::from_json`].
    pub fn from_value(kind: WorkloadKind, value: &serde_json::Value) -> Result<Workload, WorkloadError> {
        Workload::deserialize_kind(kind, value).map_err(|source| WorkloadError::Invalid {
            kind: kind.as_str(),
            field: String::new(),
            source,
        })?
    }

    /// Where the error of [`Workload::from_value`] on the same value is: the field's path as JSON
    /// Pointer tokens from the object (`["spec", "containers", "0", "livenessProbe", "httpGet",
    /// "port"]`), dotted (`spec.containers[0].livenessProbe.httpGet.port`), and the error message
    /// without values (see [`redact_quoted`]). `None` when the value reads, or has no PodSpec.
    /// Reads the value a second time with path tracking (serde_path_to_error): for error reports,
    /// not the hot path.
    pub fn invalid_field(kind: WorkloadKind, value: &serde_json::Value) -> Option<InvalidField> {
        let mut track = serde_path_to_error::Track::new();
        let de = serde_path_to_error::Deserializer::new(value, &mut track);
        let error = match Workload::deserialize_kind(kind, de) {
            Ok(_) => return None,
            Err(e) => e,
        };
        let path = track.path();
        let mut tokens = Vec::new();
        for segment in &path {
            match segment {
                serde_path_to_error::Segment::Seq { index } => tokens.push(index.to_string()),
                serde_path_to_error::Segment::Map { key } => tokens.push(key.clone()),
                serde_path_to_error::Segment::Enum { variant } => tokens.push(variant.clone()),
                serde_path_to_error::Segment::Unknown => break,
            }
        }
        let dotted = path.to_string();
        Some(InvalidField {
            tokens,
            dotted: if dotted == "." { String::new() } else { dotted },
            message: describe_value_error(&error.to_string()),
        })
    }

    /// Reads a workload of `kind` from any deserializer (the outer error is the deserializer's,
    /// the inner one [`WorkloadError::NoPodSpec`]): also used by `admission::parse_review` to read
    /// the object in the same pass as the AdmissionReview around it.
    pub(crate) fn deserialize_kind<'de, D>(
        kind: WorkloadKind,
        de: D,
    ) -> Result<Result<Workload, WorkloadError>, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        let no_spec = |path| Err(WorkloadError::NoPodSpec { kind: kind.as_str(), path });
        // An object whose own `kind` is another one (`request.kind` Pod with a Deployment in
        // `object`: break-it pass, s22, it read as a Pod with no containers and was admitted
        // untouched) is not read as this kind. Its value is not repeated.
        let other_kind = |own: &Option<String>| {
            own.as_deref().is_some_and(|k| k != kind.as_str()).then(|| WorkloadError::Invalid {
                kind: kind.as_str(),
                field: "kind".to_string(),
                source: <serde_json::Error as serde::de::Error>::custom(format!(
                    "the object's own kind is not {}",
                    kind.as_str()
                )),
            })
        };
        Ok(match kind {
            WorkloadKind::Pod => {
                let shape = PodShape::deserialize(de)?;
                if let Some(e) = other_kind(&shape.kind) {
                    return Ok(Err(e));
                }
                match shape.spec {
                    Some(spec) => {
                        Ok(Workload { kind, metadata: shape.metadata, template_metadata: None, spec })
                    }
                    None => no_spec("spec"),
                }
            }
            WorkloadKind::CronJob => {
                let shape = CronJobShape::deserialize(de)?;
                if let Some(e) = other_kind(&shape.kind) {
                    return Ok(Err(e));
                }
                let template =
                    shape.spec.and_then(|s| s.job_template).and_then(|j| j.spec).and_then(|s| s.template);
                match template {
                    Some(LeanTemplate { metadata, spec: Some(spec) }) => Ok(Workload {
                        kind,
                        metadata: shape.metadata,
                        template_metadata: Some(metadata),
                        spec,
                    }),
                    _ => no_spec("spec.jobTemplate.spec.template.spec"),
                }
            }
            _ => {
                let shape = TemplateShape::deserialize(de)?;
                if let Some(e) = other_kind(&shape.kind) {
                    return Ok(Err(e));
                }
                match shape.spec.and_then(|s| s.template) {
                    Some(LeanTemplate { metadata, spec: Some(spec) }) => Ok(Workload {
                        kind,
                        metadata: shape.metadata,
                        template_metadata: Some(metadata),
                        spec,
                    }),
                    _ => no_spec("spec.template.spec"),
                }
            }
        })
    }
}

/// `json` with the number literal serde_json found out of range (`source`, "number out of range"
/// at its line and column) as `1e300` (`-1e300` when negative): a number serde_json reads, as far
/// out of an integer's range. `None` for any other error, or no number there.
fn number_in_range(json: &str, source: &serde_json::Error) -> Option<String> {
    if source.classify() != serde_json::error::Category::Syntax
        || !source.to_string().starts_with("number out of range")
    {
        return None;
    }
    // serde_json's line is 1-based, its column the 1-based byte offset in that line.
    let line_start =
        if source.line() <= 1 { 0 } else { json.match_indices('\n').nth(source.line() - 2)?.0 + 1 };
    let at = (line_start + source.column()).min(json.len());
    let bytes = json.as_bytes();
    let numeric = |b: u8| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E');
    let start = bytes[..at].iter().rposition(|&b| !numeric(b)).map_or(0, |i| i + 1);
    let end = at + bytes[at..].iter().position(|&b| !numeric(b)).unwrap_or(bytes.len() - at);
    let literal = &json[start..end];
    if !literal.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    let stand_in = if literal.starts_with('-') { "-1e300" } else { "1e300" };
    Some(format!("{}{stand_in}{}", &json[..start], &json[end..]))
}

/// A deserialization error as a message says it: values redacted ([`redact_quoted`]), and a number
/// an integer field cannot hold said so (`periodSeconds: 1e30` and `99999999999999999999` read as
/// floating point, `3000000000` as an integer out of range: each "must be an int32", as the
/// Kubernetes API has it).
pub fn describe_value_error(message: &str) -> String {
    let text = redact_quoted(message);
    for (bits, range) in
        [("32", "-2147483648 to 2147483647"), ("64", "-9223372036854775808 to 9223372036854775807")]
    {
        for wrong in ["invalid type: floating point `…`", "invalid value: integer `…`"] {
            let said = format!("{wrong}, expected i{bits}");
            if text.contains(&said) {
                return text.replace(&said, &format!("must be an int{bits} (a whole number from {range})"));
            }
        }
    }
    text
}

/// A deserialization error without the values it quotes (an env value can be a secret): the
/// contents of every `"..."` span (escaped quotes included), and the backticked value after
/// `integer`, `floating point`, `boolean`, `character` or `unknown variant`, become `…`; field
/// names, expected variants and positions are kept.
pub fn redact_quoted(message: &str) -> String {
    let chars: Vec<char> = message.chars().collect();
    let mut out = String::with_capacity(message.len().min(1024));
    let mut i = 0;
    while i < chars.len() {
        let quote = chars[i];
        if quote != '"' && quote != '`' {
            out.push(quote);
            i += 1;
            continue;
        }
        // The closing quote; inside "...", a backslash escapes the next character (`\"`).
        let mut j = i + 1;
        let mut end = None;
        while j < chars.len() {
            if quote == '"' && chars[j] == '\\' {
                j += 2;
                continue;
            }
            if chars[j] == quote {
                end = Some(j);
                break;
            }
            j += 1;
        }
        let value_like = quote == '"'
            || ["integer ", "point ", "boolean ", "character ", "variant "].iter().any(|w| out.ends_with(w));
        match end {
            Some(end) if value_like => {
                out.push(quote);
                out.push('…');
                out.push(quote);
                i = end + 1;
            }
            Some(end) => {
                out.extend(&chars[i..=end]);
                i = end + 1;
            }
            // Unterminated: whatever follows may be the value.
            None => {
                out.push(quote);
                out.push('…');
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {

    /// s20: a wrong shape named the parser's own types (`expected struct PodShape`,
    /// `LeanTemplate`); the message names the Kubernetes object expected instead.
    /// Break-it pass (s22): `request.kind` Pod carrying a Deployment was read as a Pod with no
    /// containers (admitted untouched); the reverse was already refused. An object without a
    /// `kind` is read as the kind asked for.
    #[test]
    fn an_object_of_another_kind_is_not_read_as_this_one() {
        let deployment = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"template":{"spec":{"containers":[]}}}}"#;
        let pod = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[]}}"#;
        let cronjob =
            r#"{"kind":"CronJob","spec":{"jobTemplate":{"spec":{"template":{"spec":{"containers":[]}}}}}}"#;
        for (kind, json) in [
            (WorkloadKind::Pod, deployment),
            (WorkloadKind::Deployment, pod),
            (WorkloadKind::StatefulSet, deployment),
            (WorkloadKind::CronJob, deployment),
            (WorkloadKind::Job, cronjob),
        ] {
            let e = Workload::from_json(kind, json).unwrap_err().to_string();
            assert_eq!(
                e,
                format!(
                    "the object is not a valid {}: kind: the object's own kind is not {}",
                    kind.as_str(),
                    kind.as_str()
                )
            );
        }
        for (kind, json) in [
            (WorkloadKind::Pod, pod),
            (WorkloadKind::Deployment, deployment),
            (WorkloadKind::CronJob, cronjob),
        ] {
            assert!(Workload::from_json(kind, json).is_ok(), "{json}");
        }
        let no_kind = r#"{"spec":{"containers":[]}}"#;
        assert!(Workload::from_json(WorkloadKind::Pod, no_kind).is_ok());
    }

    #[test]
    fn a_wrong_shape_is_named_in_kubernetes_terms() {
        for (kind, json, expected) in [
            (WorkloadKind::Pod, r#""x""#, "expected a Pod (an object with metadata and spec)"),
            (WorkloadKind::Deployment, r#""x""#, "expected a workload object"),
            (
                WorkloadKind::Deployment,
                r#"{"spec":"x"}"#,
                "expected a workload spec (an object with a pod template)",
            ),
            (WorkloadKind::Deployment, r#"{"spec":{"template":"x"}}"#, "expected a PodTemplateSpec"),
            (WorkloadKind::CronJob, r#""x""#, "expected a CronJob"),
            (
                WorkloadKind::CronJob,
                r#"{"spec":"x"}"#,
                "expected a CronJobSpec (an object with a jobTemplate)",
            ),
        ] {
            let e = Workload::from_json(kind, json).unwrap_err().to_string();
            assert!(e.contains(expected), "{json}: {e}");
            assert!(!e.contains("struct") && !e.contains("Shape") && !e.contains("Lean"), "{json}: {e}");
        }
    }

    use super::*;

    #[test]
    fn the_last_applied_annotation_is_skipped_and_other_annotations_are_kept() {
        let json = r#"{"metadata": {"name": "api", "annotations": {
            "kubectl.kubernetes.io/last-applied-configuration": "{\"kind\":\"Pod\"}\n",
            "probegate.dev/skip": "probe-timeout"}},
            "spec": {"containers": [{"name": "api", "image": "x"}]}}"#;
        let w = Workload::from_json(WorkloadKind::Pod, json).unwrap();
        assert_eq!(w.metadata.annotation("probegate.dev/skip"), Some("probe-timeout"));
        assert_eq!(w.metadata.annotation(LAST_APPLIED_ANNOTATION), None);
        assert_eq!(w.metadata.annotations.as_ref().map(BTreeMap::len), Some(1));
        // The same through a parsed value (manifests), and `null` or a missing map reads as none.
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        assert_eq!(Workload::from_value(WorkloadKind::Pod, &v).unwrap().metadata, w.metadata);
        for annotations in [r#""annotations": null,"#, ""] {
            let json =
                format!(r#"{{"metadata": {{{annotations} "name": "api"}}, "spec": {{"containers": []}}}}"#);
            assert_eq!(Workload::from_json(WorkloadKind::Pod, &json).unwrap().metadata.annotations, None);
        }
        // Other annotations must still be strings.
        let bad = r#"{"metadata": {"annotations": {"a": 1}}, "spec": {"containers": []}}"#;
        assert!(Workload::from_json(WorkloadKind::Pod, bad).is_err());
    }

    /// An owner reference without `apiVersion` is read by its kind alone: a ReplicaSet is a
    /// controller whose template was validated, a Pod or an unknown kind is not (kills
    /// `WorkloadKind::from_kind_name` made `None`, the s16 sample, which made every such owner
    /// unknown).
    #[test]
    fn an_owner_without_api_version_is_read_by_its_kind() {
        let owned = |kind: &str| {
            let json = format!(
                r#"{{"metadata": {{"name": "p", "ownerReferences": [{{"kind": "{kind}", "name": "o", "controller": true}}]}}, "spec": {{"containers": []}}}}"#
            );
            let w = Workload::from_json(WorkloadKind::Pod, &json).unwrap();
            w.metadata.validated_controller().map(|o| o.kind.clone())
        };
        for kind in ["ReplicaSet", "Deployment", "StatefulSet", "DaemonSet", "Job"] {
            assert_eq!(owned(kind).as_deref(), Some(kind));
        }
        for kind in ["Pod", "Rollout", ""] {
            assert_eq!(owned(kind), None, "{kind}");
        }
    }

    /// Break-it pass (s15): an integer of 310 digits (past f64) said "number out of range",
    /// naming neither the field nor int32, where `99999999999999999999` names both.
    #[test]
    fn an_integer_past_f64_names_the_field_and_int32_as_a_smaller_huge_one_does() {
        let pod = |n: &str| {
            format!(
                "{{\"metadata\": {{\"name\": \"api\"}},\n \"spec\": {{\"containers\": [{{\"name\": \"api\", \"image\": \"x\",\n \"livenessProbe\": {{\"exec\": {{\"command\": [\"true\"]}}, \"periodSeconds\": {n}}}}}]}}}}"
            )
        };
        let expected = "the object is not a valid Pod: spec.containers[0].livenessProbe.periodSeconds: must be an int32 (a whole number from -2147483648 to 2147483647)";
        let huge = format!("1{}", "0".repeat(309));
        for n in ["99999999999999999999".to_string(), huge.clone(), format!("-{huge}"), format!("{huge}.5e3")]
        {
            let e = Workload::from_json(WorkloadKind::Pod, &pod(&n)).unwrap_err().to_string();
            assert!(e.starts_with(expected), "{n}: {e}");
            assert!(!e.contains("out of range") && !e.contains("0000"), "{e}");
        }
    }
}
