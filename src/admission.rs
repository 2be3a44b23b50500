//! The admission glue between the HTTP server and the engine: an `admission.k8s.io/v1`
//! AdmissionReview in, an AdmissionReview with the AdmissionResponse out.
//!
//! Synchronous and free of I/O: it knows AdmissionRequest and AdmissionResponse but not HTTP. It
//! holds the admission semantics (Kubernetes docs, "Dynamic Admission Control"):
//! - `/validate` ([`Endpoint::Validate`]) applies the rules whose action is `deny` (AdmissionResponse
//!   `allowed: false`, `status.code` 403) or `warn` (`warnings`), and never returns a patch (the API
//!   server answers a validating webhook's patch with a 500);
//! - `/mutate` ([`Endpoint::Mutate`]) applies the `mutate` rules and returns a base64 JSONPatch
//!   (`patchType: JSONPatch`) for Pods on CREATE, and for pod templates on CREATE and UPDATE when the
//!   policy says `templates: {mutate: true}`; a Pod UPDATE is patched only back to probegate's own
//!   earlier changes, which a re-apply of the unpatched manifest would undo (a Pod's probes and
//!   lifecycle are immutable; docs/reapply.md);
//! - an object owned by a controller is warned, not denied, when `request.userInfo` shows that a
//!   trusted controller (`exemptions.trustedControllers`) creates it; anyone else is denied as for
//!   a bare Pod. An UPDATE is denied only for findings the old object did not have;
//! - `mode: audit` never denies and never patches: findings become `probegate [audit]:` warnings
//!   (a patch as what it would do: "would add ...") and an audit annotation `violations`;
//! - `info` findings are never warnings: `/validate` lists them in the audit annotation
//!   `info-findings`, in every mode;
//! - DELETE, CONNECT, subresources and kinds without a pod template are allowed untouched.
//!
//! The same request always gets the same answer (`request.dryRun` included): no side effects.

use std::collections::BTreeMap;

use base64::Engine as _;
use kube::core::GroupVersionKind;
use kube::core::admission::Operation;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::engine::{
    self, ConfigMapSource, Evaluation, Finding, NoConfigMaps, Unresolved, Workload, WorkloadError,
    WorkloadKind,
};
use crate::policy::{Action, Effective, Mode, Policy, RuleId, SKIP_ANNOTATION, SkipRequest};

mod fit;
mod full_warnings;
mod restore;
pub use full_warnings::MAX_FULL_WARNINGS_BYTES;
use restore::Restore;

/// The only AdmissionReview API version served.
pub const ADMISSION_API_VERSION: &str = "admission.k8s.io/v1";

/// Longest warning returned, in characters. The API server may truncate warnings over 256
/// characters (Kubernetes docs, "Dynamic Admission Control", Response: warnings).
pub const MAX_WARNING_CHARS: usize = 255;

/// Most warnings returned for one object; the rest are counted in a last warning.
pub const MAX_WARNINGS: usize = 12;

/// Longest list of violations in a denial message, in characters; the rest are counted.
pub const MAX_DENIAL_CHARS: usize = 8 * 1024;

/// Joins messages with `; ` up to about `max` characters, then `; and N more`.
fn join_bounded(items: &[String], max: usize) -> String {
    let mut out = String::new();
    for (i, item) in items.iter().enumerate() {
        if !out.is_empty() && out.len() + item.len() > max {
            out.push_str(&format!("; and {} more", items.len() - i));
            break;
        }
        if !out.is_empty() {
            out.push_str("; ");
        }
        out.push_str(item);
    }
    out
}

/// Annotation that marks a mirror Pod (a static Pod's API copy): changes to it do not reach the
/// kubelet, so it is never evaluated (Kubernetes docs, "Admission Webhook Good Practices").
pub const MIRROR_POD_ANNOTATION: &str = "kubernetes.io/config.mirror";

/// The two admission endpoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// `POST /validate`: deny and warn.
    Validate,
    /// `POST /mutate`: patch.
    Mutate,
}

impl Endpoint {
    /// `validate` or `mutate`.
    pub fn as_str(self) -> &'static str {
        match self {
            Endpoint::Validate => "validate",
            Endpoint::Mutate => "mutate",
        }
    }
}

/// An incoming AdmissionReview (`apiVersion`, `kind`, `request`).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionReviewRequest {
    /// Must be `admission.k8s.io/v1`.
    #[serde(default)]
    pub api_version: Option<String>,
    /// Must be `AdmissionReview`.
    #[serde(default)]
    pub kind: Option<String>,
    /// The request; absent is an error.
    #[serde(default)]
    pub request: Option<AdmissionRequest>,
}

/// The parts of an AdmissionRequest probegate reads. The object stays raw JSON until its kind is
/// known, so it is parsed once, leanly.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionRequest {
    /// Echoed in the response; required.
    #[serde(default)]
    pub uid: String,
    /// The kind of the object (`group`, `version`, `kind`).
    pub kind: GroupVersionKind,
    /// Set for subresource requests (`status`, `scale`, `ephemeralcontainers`, ...).
    #[serde(default)]
    pub sub_resource: Option<String>,
    /// Empty for a Pod created with `generateName` (every controller-made Pod) at `/mutate`.
    #[serde(default)]
    pub name: Option<String>,
    /// The namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// CREATE, UPDATE, DELETE or CONNECT.
    pub operation: Operation,
    /// The object as JSON text (null for DELETE); `None` too when [`parse_review`] read it as its
    /// kind in the same pass as the review around it (then the review uses that reading).
    #[serde(default)]
    pub object: Option<Box<RawValue>>,
    /// The object before an UPDATE.
    #[serde(default)]
    pub old_object: Option<Box<RawValue>>,
    /// Server-side dry run: answered exactly like a real request.
    #[serde(default)]
    pub dry_run: Option<bool>,
    /// Who made the request.
    #[serde(default)]
    pub user_info: UserInfo,
    /// The object read as its kind by [`parse_review`] in the review's own pass (`object` is then
    /// `None`); the error is only ever [`WorkloadError::NoPodSpec`].
    #[serde(skip)]
    read_object: Option<Result<Workload, WorkloadError>>,
}

impl AdmissionRequest {
    /// The object as a workload of `kind`: the reading made by [`parse_review`], else `object`
    /// read now (`Ok(None)` when there is no object).
    fn workload(&self, kind: WorkloadKind) -> Result<Option<std::borrow::Cow<'_, Workload>>, WorkloadError> {
        match (&self.read_object, &self.object) {
            (Some(Ok(w)), _) => Ok(Some(std::borrow::Cow::Borrowed(w))),
            (Some(Err(e)), _) => Err(match e {
                WorkloadError::NoPodSpec { kind, path } => WorkloadError::NoPodSpec { kind, path },
                WorkloadError::Invalid { kind, field, source } => WorkloadError::Invalid {
                    kind,
                    field: field.clone(),
                    source: serde::de::Error::custom(source),
                },
            }),
            (None, Some(raw)) => {
                Workload::from_json(kind, raw.get()).map(|w| Some(std::borrow::Cow::Owned(w)))
            }
            (None, None) => Ok(None),
        }
    }
}

/// The requesting user, as far as admission needs it.
#[derive(Debug, Default, Deserialize)]
pub struct UserInfo {
    /// The user name, as authenticated by the API server (`system:node:NAME` for a kubelet,
    /// `system:serviceaccount:kube-system:replicaset-controller` for the ReplicaSet controller).
    #[serde(default)]
    pub username: String,
    /// The user's groups (`system:nodes` for a kubelet); `null` reads as none.
    #[serde(default)]
    pub groups: Option<Vec<String>>,
}

impl UserInfo {
    /// A kubelet: a user name `system:node:NAME` with a non-empty NAME *and* the group
    /// `system:nodes`, as Kubernetes' own node identifier requires both
    /// (`pkg/auth/nodeidentifier/default.go`; docs: "Using Node Authorization").
    pub fn is_node(&self) -> bool {
        let name_ok = self
            .username
            .strip_prefix("system:node:")
            .is_some_and(|n| !n.is_empty() && !n.chars().any(|c| c.is_whitespace() || c.is_control()));
        name_ok && self.groups.iter().flatten().any(|g| g == "system:nodes")
    }
}

/// The response AdmissionReview.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionReviewResponse {
    /// `admission.k8s.io/v1`.
    pub api_version: String,
    /// `AdmissionReview`.
    pub kind: String,
    /// The answer.
    pub response: AdmissionResponse,
}

/// An AdmissionResponse in its documented wire form: `patch` is the base64 of the JSON Patch array
/// (kube-core's own type would serialize it as an array of numbers, kube-rs issue 1781).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionResponse {
    /// The request's uid.
    pub uid: String,
    /// Whether the object is admitted.
    pub allowed: bool,
    /// On denial: `code` 403 and the message listing every violation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ResponseStatus>,
    /// `JSONPatch` whenever `patch` is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_type: Option<String>,
    /// Base64 of the RFC 6902 JSON Patch array.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    /// Recorded in the API server's audit log, each key prefixed with the webhook name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit_annotations: Option<BTreeMap<String, String>>,
    /// Shown by kubectl as `Warning: TEXT`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warnings: Option<Vec<String>>,
}

/// The `status` (a metav1.Status subset) of a denial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseStatus {
    /// HTTP-style code: 403 for a policy denial.
    pub code: u16,
    /// `Forbidden`.
    #[serde(default)]
    pub reason: String,
    /// The message kubectl prints after `admission webhook "NAME" denied the request:`.
    #[serde(default)]
    pub message: String,
}

/// Why a request could not be reviewed (answered with HTTP 400 and this message).
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    /// The body is not JSON or does not have the AdmissionReview shape.
    #[error("the body is not an AdmissionReview: {0}")]
    Malformed(String),
    /// `apiVersion` or `kind` is not `admission.k8s.io/v1` `AdmissionReview`. Named whatever the
    /// rest of the review looks like: another version's review may be shaped otherwise.
    #[error(
        "unsupported AdmissionReview version: apiVersion {}, kind {}; probegate accepts only apiVersion admission.k8s.io/v1, kind AdmissionReview{}",
        sent(api_version),
        sent(kind),
        version_hint(api_version, kind)
    )]
    Version {
        /// What was sent (at most 64 characters and `…`), `None` when nothing was.
        api_version: Option<String>,
        /// What was sent (at most 64 characters and `…`), `None` when nothing was.
        kind: Option<String>,
    },
    /// The review has no `request`.
    #[error("the AdmissionReview has no request")]
    NoRequest,
    /// A CREATE or UPDATE request of a kind probegate reviews has no `object`.
    #[error(
        "request.object is missing: a {operation} request for a {kind} carries the object (the API server always sends it)"
    )]
    NoObject {
        /// `CREATE` or `UPDATE`.
        operation: &'static str,
        /// The kind, as `WorkloadKind::as_str` names it (`Pod`, `Deployment`, ...).
        kind: &'static str,
    },
    /// The request has no `uid`.
    #[error("the AdmissionRequest has no uid")]
    NoUid,
    /// The object is not a valid instance of its kind.
    #[error("{0}")]
    Object(#[from] WorkloadError),
    /// The body holds more JSON objects and arrays than [`MAX_JSON_CONTAINERS`].
    #[error(
        "the AdmissionReview holds more than {MAX_JSON_CONTAINERS} JSON objects and arrays; no real Pod does, and parsing it would take far more memory than its bytes"
    )]
    TooManyValues,
}

/// Most JSON objects and arrays accepted in one AdmissionReview body: 100,000. Typed parsing
/// costs a few hundred bytes per object (an empty `env` entry becomes a full `EnvVar`), so a body
/// of millions of `{}` would take gigabytes; a real Pod (even 50 containers with 200 env entries
/// each, twice in an UPDATE) stays well under this. Counted in one pass before parsing.
pub const MAX_JSON_CONTAINERS: usize = 100_000;

/// Counts `{` and `[` outside strings, stopping once over `limit`. Linear, no allocation; the
/// body's validity is left to the JSON parser.
fn json_containers_over(body: &[u8], limit: usize) -> bool {
    // Every object or array takes at least two bytes (`{}`): a shorter body cannot hold more,
    // so ordinary reviews (kilobytes) are not scanned at all.
    if body.len() <= 2 * limit {
        return false;
    }
    let (mut count, mut in_string, mut escaped) = (0usize, false, false);
    for &b in body {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else if b == b'"' {
            in_string = true;
        } else if b == b'{' || b == b'[' {
            count += 1;
            if count > limit {
                return true;
            }
        }
    }
    false
}

/// What happened, for logs and metrics. Holds names and rule ids only, never object content.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DecisionSummary {
    /// The request's uid.
    pub uid: String,
    /// The object's kind (`Pod`, `Deployment`, ...).
    pub kind: String,
    /// The namespace, if any.
    pub namespace: String,
    /// The name, or `generateName*`.
    pub name: String,
    /// CREATE, UPDATE, DELETE or CONNECT.
    pub operation: String,
    /// The mode applied.
    pub mode: Option<Mode>,
    /// Rule ids reported (denied, warned, patched or audited), sorted, deduplicated.
    pub rules: Vec<RuleId>,
    /// Whether the request was denied.
    pub denied: bool,
    /// Number of warnings returned.
    pub warnings: usize,
    /// Whether a patch was returned.
    pub patched: bool,
    /// Why the object was not evaluated, when it was not (`subresource`, `DELETE`, ...).
    pub skipped: Option<&'static str>,
    /// Names of the namespace overrides applied.
    pub overrides: Vec<String>,
    /// Every finding reported (denied, warned, patched or audited), with the rule's action.
    pub violations: Vec<(RuleId, Action)>,
    /// Liveness scripts on volumes that could not be read (reported in the audit annotation
    /// `unresolved-scripts` at /validate).
    pub unresolved_scripts: usize,
}

impl DecisionSummary {
    /// True when the decision denied, warned or patched: those get a log line.
    pub fn acted(&self) -> bool {
        self.denied || self.warnings > 0 || self.patched
    }
}

/// A reviewed request: the response to send and its summary.
#[derive(Debug, Clone)]
pub struct Decision {
    /// The AdmissionReview to return (HTTP 200).
    pub review: AdmissionReviewResponse,
    /// For logs and metrics.
    pub summary: DecisionSummary,
}

/// A value of the request for a message: quoted and escaped (`Debug`: quotes, backslashes and
/// control characters), or `(none)`.
fn sent(value: &Option<String>) -> String {
    value.as_ref().map_or_else(|| "(none)".to_string(), |v| format!("{v:?}"))
}

/// What to change, for the mistake actually made: a `v1beta1` review (an API server asked for
/// one: `admissionReviewVersions` lists `v1beta1` first), the right `apiVersion` with another
/// `kind`, or another `apiVersion`.
fn version_hint(api_version: &Option<String>, kind: &Option<String>) -> &'static str {
    match (api_version.as_deref(), kind.as_deref()) {
        (Some("admission.k8s.io/v1beta1"), _) => {
            " (v1beta1 is not served: set admissionReviewVersions: [v1] in the webhook configuration)"
        }
        (Some("admission.k8s.io/v1"), _) => {
            " (the apiVersion is right: the kind must be AdmissionReview, as the API server sends it)"
        }
        _ => " (set admissionReviewVersions: [v1] in the webhook configuration)",
    }
}

/// The envelope of a review alone, read when the whole review does not: a wrong `apiVersion` or
/// `kind` is the error to name, not a field that version's review lacks.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Envelope {
    #[serde(default)]
    api_version: Option<String>,
    #[serde(default)]
    kind: Option<String>,
}

/// [`ReviewError::Version`] when `apiVersion` or `kind` (either given) is not
/// `admission.k8s.io/v1` `AdmissionReview`; the values cut to 64 characters (they are echoed).
fn check_envelope(api_version: Option<String>, kind: Option<String>) -> Result<(), ReviewError> {
    match (api_version.as_deref(), kind.as_deref()) {
        (Some(ADMISSION_API_VERSION), Some("AdmissionReview")) => return Ok(()),
        // One of the two is right and the other missing: the missing one is the mistake, not
        // the version.
        (Some(ADMISSION_API_VERSION), None) => {
            return Err(ReviewError::Malformed(
                "no kind (expected kind AdmissionReview with apiVersion admission.k8s.io/v1)".into(),
            ));
        }
        (None, Some("AdmissionReview")) => {
            return Err(ReviewError::Malformed(
                "no apiVersion (expected apiVersion admission.k8s.io/v1 with kind AdmissionReview)".into(),
            ));
        }
        _ => {}
    }
    // Echoed back, so bounded: a 3 MB apiVersion is not repeated in the answer or the log.
    let excerpt = |s: String| crate::engine::excerpt(&s, 64).into_owned();
    Err(ReviewError::Version { api_version: api_version.map(excerpt), kind: kind.map(excerpt) })
}

/// Parses an AdmissionReview body and checks its envelope.
///
/// # Errors
/// [`ReviewError`] for non-JSON, a non-AdmissionReview shape, another API version, no request or
/// no uid, or more than [`MAX_JSON_CONTAINERS`] objects and arrays.
pub fn parse_review(body: &[u8]) -> Result<AdmissionRequest, ReviewError> {
    // RFC 8259 section 8.1: a JSON text must not begin with a byte order mark; the API server's
    // Go `encoding/json` refuses one too ("invalid character 'ï' looking for beginning of value").
    if body.starts_with(b"\xEF\xBB\xBF") {
        return Err(ReviewError::Malformed(
            "it starts with a UTF-8 byte order mark (BOM), which JSON does not allow (RFC 8259 section 8.1): send the JSON without it".into(),
        ));
    }
    if json_containers_over(body, MAX_JSON_CONTAINERS) {
        return Err(ReviewError::TooManyValues);
    }
    // serde reads a struct from a JSON array too (its fields in order): `["AdmissionReview"]`
    // would be an AdmissionReview whose apiVersion is "AdmissionReview" (break-it pass s21).
    if body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
        return Err(ReviewError::Malformed(
            "invalid type: array, expected an AdmissionReview object (a JSON object with apiVersion, kind and request)".into(),
        ));
    }
    // One pass over the body when it can be: the object read as its kind on the way. Whatever
    // that pass does not accept is read again as before (the envelope, then the object), so
    // that every error is the one it always was.
    let one_pass = (body.len() <= ONE_PASS_MAX_BYTES)
        .then(|| std::str::from_utf8(body).ok())
        .flatten()
        .and_then(|text| serde_json::from_str::<one_pass::Review>(text).ok());
    let review = match one_pass {
        Some(review) => review.0,
        None => serde_json::from_slice::<AdmissionReviewRequest>(body).map_err(|e| {
            // Another version's review may lack what a v1 one has: its version is the error.
            serde_json::from_slice::<Envelope>(body)
                .ok()
                .filter(|v| v.api_version.is_some() || v.kind.is_some())
                .and_then(|v| check_envelope(v.api_version, v.kind).err())
                .unwrap_or_else(|| ReviewError::Malformed(describe_review_error(body, &e)))
        })?,
    };
    if review.api_version.is_none() && review.kind.is_none() {
        return Err(ReviewError::Malformed(
            "no apiVersion and no kind (expected apiVersion admission.k8s.io/v1, kind AdmissionReview)"
                .into(),
        ));
    }
    check_envelope(review.api_version, review.kind)?;
    let request = review.request.ok_or(ReviewError::NoRequest)?;
    if request.uid.is_empty() {
        return Err(ReviewError::NoUid);
    }
    Ok(request)
}

/// Largest body read in one pass by [`parse_review`]: 64 KiB. A larger object is read only when
/// the review needs it, and freed before an UPDATE's old object is read (the two typed copies of
/// a multi-MiB Pod are never in memory at once).
const ONE_PASS_MAX_BYTES: usize = 64 * 1024;

/// The AdmissionReview read in one pass: the same fields as [`AdmissionReviewRequest`] (and of the
/// same types, so that they read alike), with the object read as its kind when `request.kind`
/// comes before it (the API server writes `kind`, `operation`, then `object`). Any error here,
/// a duplicate key included, sends the body to the two-pass reading, which says what is wrong.
mod one_pass {
    use std::fmt;

    use kube::core::GroupVersionKind;
    use kube::core::admission::Operation;
    use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
    use serde::{Deserialize, Deserializer};
    use serde_json::value::RawValue;

    use super::{AdmissionRequest, AdmissionReviewRequest, UserInfo};
    use crate::engine::{Workload, WorkloadError, WorkloadKind};

    pub(super) struct Review(pub(super) AdmissionReviewRequest);

    /// Reads the value of `key` into `slot`; a key seen twice is an error (as for a derived struct).
    fn once<'de, A: MapAccess<'de>, T: Deserialize<'de>>(
        map: &mut A,
        slot: &mut Option<T>,
        key: &str,
    ) -> Result<(), A::Error> {
        if slot.is_some() {
            return Err(de::Error::custom(format_args!("duplicate field `{key}`")));
        }
        *slot = Some(map.next_value()?);
        Ok(())
    }

    impl<'de> Deserialize<'de> for Review {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Review;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("an AdmissionReview")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Review, A::Error> {
                    let (mut api_version, mut kind): (Option<Option<String>>, Option<Option<String>>) =
                        (None, None);
                    let mut request: Option<Option<Request>> = None;
                    while let Some(key) = map.next_key::<&'de str>()? {
                        match key {
                            "apiVersion" => once(&mut map, &mut api_version, key)?,
                            "kind" => once(&mut map, &mut kind, key)?,
                            "request" => once(&mut map, &mut request, key)?,
                            _ => {
                                map.next_value::<IgnoredAny>()?;
                            }
                        }
                    }
                    Ok(Review(AdmissionReviewRequest {
                        api_version: api_version.flatten(),
                        kind: kind.flatten(),
                        request: request.flatten().map(|r| r.0),
                    }))
                }
            }
            d.deserialize_map(V)
        }
    }

    struct Request(AdmissionRequest);

    impl<'de> Deserialize<'de> for Request {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Request;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("an AdmissionRequest")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Request, A::Error> {
                    let mut uid: Option<String> = None;
                    let mut kind: Option<GroupVersionKind> = None;
                    let mut sub_resource: Option<Option<String>> = None;
                    let mut name: Option<Option<String>> = None;
                    let mut namespace: Option<Option<String>> = None;
                    let mut operation: Option<Operation> = None;
                    let mut object: Option<Option<Box<RawValue>>> = None;
                    let mut read_object = None;
                    let mut old_object: Option<Option<Box<RawValue>>> = None;
                    let mut dry_run: Option<Option<bool>> = None;
                    let mut user_info: Option<UserInfo> = None;
                    // A key with an escape cannot be borrowed: an error, so the two-pass reading.
                    while let Some(key) = map.next_key::<&'de str>()? {
                        match key {
                            "uid" => once(&mut map, &mut uid, key)?,
                            "kind" => once(&mut map, &mut kind, key)?,
                            "subResource" => once(&mut map, &mut sub_resource, key)?,
                            "name" => once(&mut map, &mut name, key)?,
                            "namespace" => once(&mut map, &mut namespace, key)?,
                            "operation" => once(&mut map, &mut operation, key)?,
                            "object" => {
                                if object.is_some() || read_object.is_some() {
                                    return Err(de::Error::custom("duplicate field `object`"));
                                }
                                let as_kind = kind
                                    .as_ref()
                                    .and_then(|k| WorkloadKind::from_group_kind(&k.group, &k.kind))
                                    // A Pod UPDATE may need the object's JSON (to restore
                                    // probegate's own changes): kept as text.
                                    .filter(|k| !k.is_pod() || operation == Some(Operation::Create));
                                match as_kind {
                                    Some(k) => read_object = Some(map.next_value_seed(ObjectAs(k))?),
                                    None => object = Some(map.next_value::<Option<Box<RawValue>>>()?),
                                }
                            }
                            "oldObject" => once(&mut map, &mut old_object, key)?,
                            "dryRun" => once(&mut map, &mut dry_run, key)?,
                            "userInfo" => once(&mut map, &mut user_info, key)?,
                            _ => {
                                map.next_value::<IgnoredAny>()?;
                            }
                        }
                    }
                    Ok(Request(AdmissionRequest {
                        uid: uid.unwrap_or_default(),
                        kind: kind.ok_or_else(|| de::Error::missing_field("kind"))?,
                        sub_resource: sub_resource.flatten(),
                        name: name.flatten(),
                        namespace: namespace.flatten(),
                        operation: operation.ok_or_else(|| de::Error::missing_field("operation"))?,
                        object: object.flatten(),
                        old_object: old_object.flatten(),
                        dry_run: dry_run.flatten(),
                        user_info: user_info.unwrap_or_default(),
                        read_object: read_object.flatten(),
                    }))
                }
            }
            d.deserialize_map(V)
        }
    }

    /// The object read as a workload of this kind; `null` reads as no object.
    struct ObjectAs(WorkloadKind);

    impl<'de> DeserializeSeed<'de> for ObjectAs {
        type Value = Option<Result<Workload, WorkloadError>>;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_option(self)
        }
    }

    impl<'de> Visitor<'de> for ObjectAs {
        type Value = Option<Result<Workload, WorkloadError>>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an object")
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            Workload::deserialize_kind(self.0, d).map(Some)
        }
    }
}

/// What is wrong with an AdmissionReview that does not read, naming the field: serde_json says
/// "expected value", a syntax error, for a `null` where an enum goes (`"operation": null` was
/// reported as "invalid JSON"), and a data error names no path. Read again with path tracking (only
/// when it is wrong); the field's JSON type is said, never its value.
fn describe_review_error(body: &[u8], e: &serde_json::Error) -> String {
    let plain = describe_json_error(e);
    if matches!(e.classify(), serde_json::error::Category::Io | serde_json::error::Category::Eof) {
        return plain;
    }
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) else {
        // Not JSON after all: the syntax error stands.
        return plain;
    };
    let mut track = serde_path_to_error::Track::new();
    // From the text (the object is a `RawValue`, which only serde_json's own reader gives).
    let mut de = serde_json::Deserializer::from_slice(body);
    let _ = AdmissionReviewRequest::deserialize(serde_path_to_error::Deserializer::new(&mut de, &mut track));
    let path = track.path();
    let dotted = path.to_string();
    if dotted == "." {
        return plain;
    }
    if e.classify() == serde_json::error::Category::Syntax {
        let mut at = Some(&value);
        for segment in &path {
            at = match segment {
                serde_path_to_error::Segment::Map { key } => at.and_then(|v| v.get(key)),
                serde_path_to_error::Segment::Seq { index } => at.and_then(|v| v.get(index)),
                _ => None,
            };
        }
        let what = match at {
            Some(serde_json::Value::Null) => "null",
            Some(serde_json::Value::Bool(_)) => "a boolean",
            Some(serde_json::Value::Number(_)) => "a number",
            Some(serde_json::Value::String(_)) => "a string",
            Some(serde_json::Value::Array(_)) => "an array",
            Some(serde_json::Value::Object(_)) => "an object",
            None => "a value",
        };
        return format!(
            "{dotted}: {what} is not a value this field takes (line {} column {})",
            e.line(),
            e.column()
        );
    }
    format!("{dotted}: {plain}")
}

/// A JSON error without quoting the offending value (it could be a secret from an env var).
fn describe_json_error(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let what = match e.classify() {
        serde_json::error::Category::Io => "unreadable body",
        serde_json::error::Category::Syntax => "invalid JSON",
        serde_json::error::Category::Eof => "truncated or empty JSON",
        serde_json::error::Category::Data => {
            // Data errors name the field ("missing field `kind`"); keep that, drop quoted values,
            // and say what serde calls by its Rust type name in the review's terms.
            return in_review_terms(&crate::engine::workload::redact_quoted(&text));
        }
    };
    format!("{what} at line {} column {}", e.line(), e.column())
}

/// A serde data error with the Rust types it names (`expected struct AdmissionReviewRequest`) said
/// as what they are in an AdmissionReview.
fn in_review_terms(text: &str) -> String {
    const TERMS: [(&str, &str); 3] = [
        ("struct AdmissionReviewRequest", "an AdmissionReview object"),
        ("struct GroupVersionKind", "an object with group, version and kind"),
        ("struct UserInfo", "a userInfo object"),
    ];
    let mut out = text.to_string();
    for (rust, review) in TERMS {
        out = out.replace(rust, review);
    }
    // Any other struct (none is known to be reachable): an object.
    while let Some(at) = out.find("expected struct ") {
        let name_end = out[at + 16..]
            .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .map_or(out.len(), |n| at + 16 + n);
        out.replace_range(at + 9..name_end, "an object");
    }
    out
}

/// The policy applied to one object: the effective policy for its namespace, what its
/// `probegate.dev/skip` annotation asked for, and the rules' findings (exempt containers skipped).
#[derive(Debug, Clone)]
pub struct ObjectEvaluation {
    /// The policy after the namespace's overrides and the annotation's skips.
    pub effective: Effective,
    /// Rules skipped by annotation, and entries refused.
    pub skip: SkipRequest,
    /// The findings (empty in `mode: off`).
    pub evaluation: Evaluation,
}

/// Applies a policy to a workload in a namespace: namespace overrides (with the namespace's labels
/// when known), the pod's or pod template's skip annotation (only rules the policy lets annotations
/// skip), exempt containers, then the rules. Used by the webhook and the offline CLI alike.
pub fn evaluate_object(
    policy: &Policy,
    workload: &Workload,
    namespace: &str,
    labels: Option<&BTreeMap<String, String>>,
) -> ObjectEvaluation {
    evaluate_object_with_configmaps(policy, workload, namespace, labels, &NoConfigMaps)
}

/// As [`evaluate_object`], reading liveness scripts and env values from ConfigMaps through
/// `configmaps` (ConfigMaps found in the same input, or prefetched by the server). What it cannot
/// answer is listed in the evaluation's `unresolved`, never a finding by itself.
pub fn evaluate_object_with_configmaps(
    policy: &Policy,
    workload: &Workload,
    namespace: &str,
    labels: Option<&BTreeMap<String, String>>,
    configmaps: &dyn ConfigMapSource,
) -> ObjectEvaluation {
    evaluate_object_cached(policy, workload, namespace, labels, configmaps, &mut engine::ParseCache::cold())
}

/// As [`evaluate_object_with_configmaps`], drawing script parses from the caller's `cache` and
/// adding to it ([`engine::evaluate_cached`]): the same evaluation, without parsing again a script
/// the cache holds.
pub fn evaluate_object_cached(
    policy: &Policy,
    workload: &Workload,
    namespace: &str,
    labels: Option<&BTreeMap<String, String>>,
    configmaps: &dyn ConfigMapSource,
    cache: &mut engine::ParseCache,
) -> ObjectEvaluation {
    let mut effective = policy.effective(namespace, labels);
    let pod_meta = workload.template_metadata.as_ref().unwrap_or(&workload.metadata);
    let mut skip =
        pod_meta.annotation(SKIP_ANNOTATION).map(|v| policy.exemptions.parse_skip(v)).unwrap_or_default();
    // Whoever can create the object can write the annotation: it never lifts a denial, whatever
    // `annotationRules` lists. Only the policy can (a namespace override, by name or by a Namespace
    // label the platform team controls). Decided by the rule's action, not the mode, so that
    // audit mode reports what enforce will do.
    let refused = &mut skip.refused;
    skip.skipped.retain(|rule| {
        let denies = effective.rules.action(*rule) == Action::Deny;
        if denies {
            refused.push(format!(
                "annotation {SKIP_ANNOTATION} cannot skip {rule}: it denies here, and only the policy can lift a denial (a namespace override); ignored"
            ));
        }
        !denies
    });
    // On a controller the annotation is read from the pod template (what the pods carry); one on
    // the controller's own metadata does nothing, which its author should hear about.
    if workload.template_metadata.is_some() && workload.metadata.annotation(SKIP_ANNOTATION).is_some() {
        skip.refused.push(format!(
            "annotation {SKIP_ANNOTATION} on the {}'s own metadata is not read; put it on the pod \
             template ({}.metadata.annotations); ignored",
            workload.kind.as_str(),
            if workload.kind == crate::engine::WorkloadKind::CronJob {
                "spec.jobTemplate.spec.template"
            } else {
                "spec.template"
            }
        ));
    }
    for rule in &skip.skipped {
        effective.rules.set_action(*rule, Action::Off);
    }
    let evaluation = if effective.mode == Mode::Off {
        Evaluation::default()
    } else {
        engine::evaluate_cached(
            &effective.rules,
            workload,
            &policy.exemptions.containers,
            configmaps,
            namespace,
            cache,
        )
    };
    ObjectEvaluation { effective, skip, evaluation }
}

/// The ConfigMaps a review of this request could read (see [`engine::configmaps_needed`]), for the
/// object and, on UPDATE, the old object, as (namespace, name), given the ConfigMaps already
/// `known`: what a server prefetches before calling [`review_with_configmaps`] (again with what
/// it found, until nothing new is needed). Empty for requests that are not evaluated, or whose
/// object does not parse (the review itself reports that).
pub fn configmaps_needed(request: &AdmissionRequest, known: &dyn ConfigMapSource) -> Vec<(String, String)> {
    if !matches!(request.operation, Operation::Create | Operation::Update)
        || request.sub_resource.as_deref().is_some_and(|s| !s.is_empty())
    {
        return Vec::new();
    }
    let Some(kind) = WorkloadKind::from_group_kind(&request.kind.group, &request.kind.kind) else {
        return Vec::new();
    };
    let mut out = std::collections::BTreeSet::new();
    let object = request.workload(kind).ok().flatten();
    let old = request.old_object.as_ref().and_then(|o| Workload::from_json(kind, o.get()).ok());
    for workload in object.as_deref().into_iter().chain(old.as_ref()) {
        for (ns, name) in engine::configmaps_needed(workload, known) {
            let ns = request
                .namespace
                .clone()
                .filter(|n| !n.is_empty())
                .or(ns)
                .unwrap_or_else(|| "default".into());
            out.insert((ns, name));
        }
    }
    out.into_iter().collect()
}

/// Reviews one request at one endpoint under a policy.
///
/// # Errors
/// [`ReviewError::Object`] when the object (or old object) is not a valid instance of its kind.
pub fn review(
    policy: &Policy,
    namespace_labels: Option<&BTreeMap<String, String>>,
    endpoint: Endpoint,
    request: &AdmissionRequest,
) -> Result<Decision, ReviewError> {
    review_with_configmaps(policy, namespace_labels, endpoint, request, &NoConfigMaps)
}

/// As [`review`], reading liveness scripts and env values from ConfigMaps through `configmaps`.
/// Scripts that could not be read are listed once, at `/validate`, in the audit annotation
/// `unresolved-scripts` (a compact JSON list of `{container, script, reason}`), never as a warning.
///
/// # Errors
/// As [`review`].
pub fn review_with_configmaps(
    policy: &Policy,
    namespace_labels: Option<&BTreeMap<String, String>>,
    endpoint: Endpoint,
    request: &AdmissionRequest,
    configmaps: &dyn ConfigMapSource,
) -> Result<Decision, ReviewError> {
    // One cache for the review: an UPDATE's old object reuses the object's parses.
    review_cached(policy, namespace_labels, endpoint, request, configmaps, &mut engine::ParseCache::new())
}

/// As [`review_with_configmaps`], drawing script parses from the caller's `cache` and adding to
/// it (see [`engine::ParseCache`]): the same decision, byte for byte, without parsing again a
/// script the cache holds. The server keeps one cache per worker thread.
///
/// # Errors
/// As [`review`].
pub fn review_cached(
    policy: &Policy,
    namespace_labels: Option<&BTreeMap<String, String>>,
    endpoint: Endpoint,
    request: &AdmissionRequest,
    configmaps: &dyn ConfigMapSource,
    cache: &mut engine::ParseCache,
) -> Result<Decision, ReviewError> {
    let mut summary = DecisionSummary {
        uid: request.uid.clone(),
        kind: request.kind.kind.clone(),
        namespace: request.namespace.clone().unwrap_or_default(),
        name: request.name.clone().filter(|n| !n.is_empty()).unwrap_or_default(),
        operation: operation_name(&request.operation).to_string(),
        ..DecisionSummary::default()
    };
    let mut response = AdmissionResponse { uid: request.uid.clone(), allowed: true, ..Default::default() };

    let skip = |why: &'static str, mut summary: DecisionSummary, response: AdmissionResponse| {
        summary.skipped = Some(why);
        Ok(Decision { review: wrap(response), summary })
    };
    if !matches!(request.operation, Operation::Create | Operation::Update) {
        return skip("operation", summary, response);
    }
    if request.sub_resource.as_deref().is_some_and(|s| !s.is_empty()) {
        return skip("subresource", summary, response);
    }
    let Some(kind) = WorkloadKind::from_group_kind(&request.kind.group, &request.kind.kind) else {
        return skip("kind", summary, response);
    };
    let Some(workload) = request.workload(kind)? else {
        return Err(ReviewError::NoObject {
            operation: operation_name(&request.operation),
            kind: kind.as_str(),
        });
    };
    // `/mutate` patches Pods (on CREATE; on UPDATE only to restore probegate's own changes, which
    // a re-apply of the unpatched manifest would undo) and templates only with `templates.mutate`
    // (CREATE and UPDATE): anything else has nothing to patch and nothing to say that `/validate`
    // does not say. The object is still read, so that a malformed one (a Deployment whose
    // `template` is null, a `request.kind` that is not the object's) gets the same HTTP 400 at
    // both endpoints: a failed webhook call, which the API server resolves by the configuration's
    // `failurePolicy` (Fail rejects, Ignore admits), never a policy verdict.
    let mutable = matches!(request.operation, Operation::Create | Operation::Update)
        && (kind.is_pod() || policy.templates.mutate);
    // The old object of an UPDATE is parsed only where it is needed (a denial it may excuse, a
    // Pod patch to keep), but one that is not a JSON object at all (`"oldObject": "x"`) is refused
    // here, at both endpoints, with the same 400, whatever the verdict would have been.
    if request.operation == Operation::Update
        && let Some(old) = &request.old_object
        && !old.get().trim_start().starts_with('{')
    {
        return Err(ReviewError::Malformed(format!(
            "the UPDATE request's oldObject for a {} is not a JSON object",
            kind.as_str()
        )));
    }
    if endpoint == Endpoint::Mutate && !mutable {
        return skip("nothing to patch", summary, response);
    }
    if summary.name.is_empty() {
        summary.name = workload.metadata.display_name();
    }
    if summary.namespace.is_empty() {
        summary.namespace = workload.metadata.namespace.clone().unwrap_or_default();
    }
    if workload.metadata.deletion_timestamp.is_some() {
        return skip("being deleted", summary, response);
    }
    // Only a kubelet creates mirror Pods; anyone else setting the annotation gets no pass.
    if kind.is_pod()
        && workload.metadata.annotation(MIRROR_POD_ANNOTATION).is_some()
        && request.user_info.is_node()
    {
        return skip("mirror pod", summary, response);
    }
    let object_eval =
        evaluate_object_cached(policy, &workload, &summary.namespace, namespace_labels, configmaps, cache);
    let ObjectEvaluation { effective, skip: skip_request, evaluation } = &object_eval;
    let mode = effective.mode;
    summary.mode = Some(mode);
    summary.overrides = effective.overrides.clone();
    if mode == Mode::Off {
        return skip("mode off", summary, response);
    }
    // At both endpoints (the log line's `unresolved_scripts`): /mutate, too, decides on them (no
    // startup probe copies a liveness check whose script was not read).
    summary.unresolved_scripts = evaluation.unresolved.len();
    let mut warnings = Vec::new();
    let mut audit_annotations = BTreeMap::new();
    if !skip_request.skipped.is_empty() {
        let ids: Vec<&str> = skip_request.skipped.iter().map(|r| r.as_str()).collect();
        audit_annotations.insert("skipped-rules".to_string(), ids.join(","));
    }
    if endpoint == Endpoint::Validate {
        warnings.extend(skip_request.refused.iter().map(|r| format!("probegate: {r}")));
    }
    let exempt = &policy.exemptions.containers;
    if !evaluation.exempted.is_empty() {
        audit_annotations.insert("exempt-containers".to_string(), exempted_json(&evaluation.exempted));
    }

    let mut reported: Vec<&Finding> = Vec::new();
    let audit = mode == Mode::Audit;
    // What is still needed of the object; the rest of it (a large PodSpec) is freed before the old
    // object of an UPDATE is read, so that the two are never in memory at once.
    let owner = workload.metadata.validated_controller().cloned();
    // A template UPDATE at /mutate may be a re-apply to keep as probegate made it (see
    // `restore::restore_our_patch`): its PodSpec as JSON and the metadata a candidate is evaluated
    // with outlive the typed object (a Pod UPDATE keeps the object's text instead).
    let template_update = (endpoint == Endpoint::Mutate
        && mutable
        && !audit
        && !kind.is_pod()
        && request.operation == Operation::Update)
        .then(|| {
            let spec = serde_json::to_value(&workload.spec).ok()?;
            Some((spec, workload.metadata.clone(), workload.template_metadata.clone()))
        })
        .flatten();
    drop(workload);
    match endpoint {
        Endpoint::Validate => {
            // An object made by a controller (a Pod by its ReplicaSet, a ReplicaSet by its
            // Deployment, a Job by its CronJob) is warned, not denied: its controller was the place
            // to stop it, and denying it would only stall a rollout or a schedule, silently. Only
            // controllers whose templates probegate validates count (not custom resources), and
            // only when the API server says a trusted controller is creating it: anyone can write
            // an ownerReference, and the API server does not check that the owner exists.
            let owner = owner.as_ref();
            let creator = crate::engine::excerpt(&request.user_info.username, 253);
            let trusted = owner.is_some() && policy.exemptions.trusts(&request.user_info.username);
            // The old object of an UPDATE is read only when a finding would otherwise be denied
            // (it may have been there before): a large UPDATE is mostly parsed once.
            let would_deny = !audit && !trusted && evaluation.with_action(Action::Deny).next().is_some();
            // An old object that is not a workload of the request's kind excuses nothing: the
            // denial stands (a 400 here would hand the verdict to `failurePolicy`, and `/mutate`,
            // which reads it only to keep its own patch, answers 200 for the same request).
            let old = match (&request.operation, &request.old_object) {
                (Operation::Update, Some(old)) if would_deny => {
                    Workload::from_json(kind, old.get()).ok().map(|old| {
                        engine::evaluate_cached(
                            &effective.rules,
                            &old,
                            exempt,
                            configmaps,
                            &summary.namespace,
                            cache,
                        )
                    })
                }
                _ => None,
            };
            let mut denials = Vec::new();
            // A command over an analysis bound is also a warning (kubectl shows it): the deny rule
            // did not look at it, and only a manifest built that way gets one. These come before
            // the findings' warnings, so that the cap on warnings never drops them (break-it pass,
            // s17: eleven `readiness-missing` warnings pushed the only sign of a skipped coupled
            // probe out).
            let prefix = if audit { "probegate [audit]:" } else { "probegate:" };
            warnings.extend(not_analysed_warnings(&evaluation.unresolved, prefix));
            for f in evaluation.findings.iter().filter(|f| matches!(f.action, Action::Deny | Action::Warn)) {
                reported.push(f);
                let text = f.describe();
                if audit && f.action == Action::Deny {
                    // Said in so many words: without it a would-be denial reads like any warning,
                    // and a team rolling out in audit cannot tell from kubectl which objects enforce
                    // would refuse (fresh-user pass, s22).
                    warnings.push(format!("probegate [audit]: would deny: {text}"));
                } else if audit {
                    warnings.push(format!("probegate [audit]: {text}"));
                } else if f.action == Action::Warn {
                    warnings.push(format!("probegate: {text}"));
                } else if let Some(owner) = owner.filter(|_| trusted) {
                    // The owner's name cut to a DNS label's length: a 253-character name would push
                    // the container's name out of the warning's 255 characters.
                    warnings.push(format!(
                        "probegate: not denied ({} {} owns it, trusted controller {creator} creates it): {text}",
                        crate::engine::excerpt(&owner.kind, 63),
                        crate::engine::excerpt(&owner.name, 63)
                    ));
                    audit_annotations.insert("trusted-controller".to_string(), creator.to_string());
                } else if old.as_ref().is_some_and(|o| had_before(o, f)) {
                    warnings.push(format!("probegate: not denied (it was there before this update): {text}"));
                } else {
                    denials.push(text);
                }
            }
            // `info` findings are for the record, never a warning the user sees: the audit
            // annotation `info-findings`, in every mode.
            let info: Vec<&Finding> = evaluation.with_action(Action::Info).collect();
            if !info.is_empty() {
                audit_annotations.insert("info-findings".to_string(), info_json(&info));
            }
            if !evaluation.unresolved.is_empty() {
                audit_annotations
                    .insert("unresolved-scripts".to_string(), unresolved_json(&evaluation.unresolved));
            }
            if !denials.is_empty() {
                response.allowed = false;
                summary.denied = true;
                // Say why an owner named in the object did not help.
                let untrusted_owner = match owner {
                    Some(o) => format!(
                        " ({} {} is named as its controller, but {} is not a trusted controller (exemptions.trustedControllers): denied as if it had no owner)",
                        crate::engine::excerpt(&o.kind, 63),
                        crate::engine::excerpt(&o.name, 253),
                        if creator.is_empty() { "the requesting user".into() } else { creator.clone() }
                    ),
                    None => String::new(),
                };
                response.status = Some(ResponseStatus {
                    code: 403,
                    reason: "Forbidden".into(),
                    message: crate::engine::display_safe(&format!(
                        "probegate denied {} {}: {}{untrusted_owner}",
                        kind.as_str(),
                        qualified_name(&summary),
                        join_bounded(&denials, MAX_DENIAL_CHARS)
                    ))
                    .into_owned(),
                });
            }
        }
        Endpoint::Mutate => {
            // Pods on CREATE; on UPDATE only to keep probegate's own changes (see
            // `restore_our_patch`), never in audit mode. Templates (with templates.mutate) on CREATE
            // and UPDATE, so that a re-apply of the unpatched manifest neither undoes the patch nor
            // changes the template (no rollout).
            let mutable = mutable && !(kind.is_pod() && request.operation == Operation::Update && audit);
            if mutable {
                let mut patch = Vec::new();
                for f in evaluation.with_action(Action::Mutate) {
                    reported.push(f);
                    if audit {
                        // What enforce would patch, in the conditional ("would add ..."); a finding
                        // with no patch already says that nothing is patched.
                        warnings.push(format!("probegate [audit]: {}", f.describe_dry_run()));
                    } else if f.patch.is_empty() {
                        warnings.push(format!("probegate: {}", f.describe()));
                    } else {
                        patch.extend(f.patch.iter().cloned());
                    }
                }
                // probegate's patch of a candidate object (a re-apply's object, some startup
                // probes left out).
                let ops_of = |w: &Workload| -> Vec<json_patch::PatchOperation> {
                    let e = evaluate_object_with_configmaps(
                        policy,
                        w,
                        &summary.namespace,
                        namespace_labels,
                        configmaps,
                    );
                    e.evaluation.with_action(Action::Mutate).flat_map(|f| f.patch.iter().cloned()).collect()
                };
                let old = || {
                    request
                        .old_object
                        .as_deref()
                        .and_then(|o| serde_json::from_str::<serde_json::Value>(o.get()).ok())
                };
                if kind.is_pod() && request.operation == Operation::Update {
                    // Only an UPDATE that would undo probegate's own changes is patched, back to
                    // the old object's probes and hooks; any other change of them is not ours to
                    // touch (the API server refuses it, as it would without probegate).
                    let mutate = |candidate: &serde_json::Value| {
                        Workload::from_value(kind, candidate).map_or_else(|_| Vec::new(), |w| ops_of(&w))
                    };
                    // (A Pod UPDATE's object is always kept as text by `parse_review`; without
                    // it, nothing is restored: the safe side.)
                    let object = request
                        .object
                        .as_deref()
                        .and_then(|o| serde_json::from_str::<serde_json::Value>(o.get()).ok());
                    patch = match (object, old()) {
                        (Some(new), Some(old)) => {
                            match restore::restore_our_patch(
                                kind.pod_spec_tokens(),
                                &new,
                                &old,
                                &patch,
                                mutate,
                            ) {
                                Restore::ByPatch(ops) | Restore::WithoutAdded(ops) => ops,
                                Restore::No => Vec::new(),
                            }
                        }
                        _ => Vec::new(),
                    };
                    warnings.clear();
                } else if let Some((spec, metadata, template_metadata)) = template_update
                    && let Some(old) = old()
                {
                    // A template is patched on UPDATE as on CREATE; a re-apply that only sends
                    // back probegate's changes (client-side, the startup probe it added kept, so
                    // the liveness delay it moved would stay) is patched back to the stored
                    // template instead: no new generation, no rollout.
                    let tokens = kind.pod_spec_tokens();
                    let mutate = |candidate: &serde_json::Value| {
                        let Some(spec) = restore::candidate_spec(candidate, tokens) else {
                            return Vec::new();
                        };
                        let (metadata, template_metadata) = (metadata.clone(), template_metadata.clone());
                        ops_of(&Workload { kind, metadata, template_metadata, spec })
                    };
                    let new = restore::skeleton(tokens, spec);
                    // (When probegate's patch of the object as sent already gives the stored
                    // template back, that patch is kept as it is.)
                    if let Restore::WithoutAdded(ops) =
                        restore::restore_our_patch(tokens, &new, &old, &patch, mutate)
                    {
                        patch = ops;
                    }
                }
                if !patch.is_empty() {
                    // Serializing a Patch of Values cannot fail; an error here would be a bug, and
                    // answering without the patch is the safe side.
                    if let Ok(bytes) = serde_json::to_vec(&json_patch::Patch(patch)) {
                        response.patch_type = Some("JSONPatch".into());
                        response.patch = Some(base64::engine::general_purpose::STANDARD.encode(bytes));
                        summary.patched = true;
                    }
                }
            }
        }
    }
    if audit && !reported.is_empty() {
        audit_annotations.insert("violations".to_string(), violations_json(&reported));
    }
    // What the warnings below lose to their bounds, whole, for the audit log.
    if let Some(full) = full_warnings::full_warnings_json(&warnings) {
        audit_annotations.insert("full-warnings".to_string(), full);
    }
    if !audit_annotations.is_empty() {
        response.audit_annotations = Some(audit_annotations);
    }
    summary.violations = reported.iter().map(|f| (f.rule, f.action)).collect();
    let mut rules: Vec<RuleId> = reported.iter().map(|f| f.rule).collect();
    rules.sort();
    rules.dedup();
    summary.rules = rules;
    let warnings = bound_warnings(warnings);
    summary.warnings = warnings.len();
    if !warnings.is_empty() {
        response.warnings = Some(warnings);
    }
    Ok(Decision { review: wrap(response), summary })
}

/// The same finding (rule, container, container list and what it says, e.g. the host reached) was
/// already in the old object.
fn had_before(old: &Evaluation, f: &Finding) -> bool {
    old.findings.iter().any(|o| {
        o.rule == f.rule
            && o.container == f.container
            && o.container_kind == f.container_kind
            && o.message == f.message
    })
}

/// `namespace/name` for a message, each part cut at 253 characters (the API's longest valid
/// name; the webhook runs before the API server validates names).
fn qualified_name(s: &DecisionSummary) -> String {
    let cut = |v: &str| crate::engine::excerpt(v, 253).into_owned();
    if s.namespace.is_empty() { cut(&s.name) } else { format!("{}/{}", cut(&s.namespace), cut(&s.name)) }
}

fn operation_name(op: &Operation) -> &'static str {
    match op {
        Operation::Create => "CREATE",
        Operation::Update => "UPDATE",
        Operation::Delete => "DELETE",
        Operation::Connect => "CONNECT",
    }
}

fn wrap(response: AdmissionResponse) -> AdmissionReviewResponse {
    AdmissionReviewResponse {
        api_version: ADMISSION_API_VERSION.to_string(),
        kind: "AdmissionReview".to_string(),
        response,
    }
}

/// The audit annotation value: a compact JSON list of `{rule, container, action}`.
fn violations_json(findings: &[&Finding]) -> String {
    #[derive(Serialize)]
    struct Violation<'a> {
        rule: &'a str,
        container: &'a str,
        action: &'a str,
    }
    let list: Vec<Violation<'_>> = findings
        .iter()
        .map(|f| Violation { rule: f.rule.as_str(), container: &f.container, action: f.action.as_str() })
        .collect();
    serde_json::to_string(&list).unwrap_or_else(|_| "[]".into())
}

/// The `info-findings` audit annotation: a compact JSON list of `{rule, container, message}`, at
/// most [`MAX_WARNINGS`] entries, each message cut to [`MAX_WARNING_CHARS`] like a warning.
fn info_json(findings: &[&Finding]) -> String {
    #[derive(Serialize)]
    struct Entry<'a> {
        rule: &'a str,
        container: &'a str,
        message: String,
    }
    let list: Vec<Entry<'_>> = findings
        .iter()
        .take(MAX_WARNINGS)
        .map(|f| Entry {
            rule: f.rule.as_str(),
            container: &f.container,
            message: truncate_chars(&crate::engine::display_safe(&f.message), MAX_WARNING_CHARS),
        })
        .collect();
    serde_json::to_string(&list).unwrap_or_else(|_| "[]".into())
}

/// The `exempt-containers` audit annotation: a compact JSON list of `{container, image}`, the
/// containers no rule looked at because an exemption covers their name and image.
fn exempted_json(list: &[engine::Exempted]) -> String {
    #[derive(Serialize)]
    struct Entry<'a> {
        container: &'a str,
        image: &'a str,
    }
    let list: Vec<Entry<'_>> =
        list.iter().take(MAX_WARNINGS).map(|e| Entry { container: &e.container, image: &e.image }).collect();
    serde_json::to_string(&list).unwrap_or_else(|_| "[]".into())
}

/// Most characters of container names one "not analysed" warning lists (the rest are counted).
const MAX_NAMES_CHARS: usize = 64;

/// The warnings for liveness commands over an analysis bound (`over_bound` notes): one per
/// reason, in the order met, naming its containers (`container c0: liveness probe not analysed
/// for dependencies (REASON)`, or `containers c1, c2 and 11 more: liveness probes ...` when
/// several share it: a Pod padded past the object's budget names every container it skipped in
/// one warning). Each starts with `prefix`.
fn not_analysed_warnings(unresolved: &[Unresolved], prefix: &str) -> Vec<String> {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for u in unresolved.iter().filter(|u| u.over_bound) {
        match groups.iter_mut().find(|(reason, _)| *reason == u.reason) {
            Some((_, names)) => {
                if !names.contains(&u.container.as_str()) {
                    names.push(&u.container);
                }
            }
            None => groups.push((&u.reason, vec![&u.container])),
        }
    }
    groups
        .into_iter()
        .map(|(reason, names)| match names.as_slice() {
            [one] => {
                format!("{prefix} container {one}: liveness probe not analysed for dependencies ({reason})")
            }
            _ => {
                let mut shown = String::new();
                let mut listed = 0;
                for name in &names {
                    let name = crate::engine::excerpt(name, 63);
                    if listed > 0 && shown.chars().count() + name.chars().count() > MAX_NAMES_CHARS {
                        break;
                    }
                    if listed > 0 {
                        shown.push_str(", ");
                    }
                    shown.push_str(&name);
                    listed += 1;
                }
                if listed < names.len() {
                    shown.push_str(&format!(" and {} more", names.len() - listed));
                }
                format!(
                    "{prefix} containers {shown}: liveness probes not analysed for dependencies ({reason})"
                )
            }
        })
        .collect()
}

/// The `unresolved-scripts` audit annotation: a compact JSON list of `{container, script, reason}`.
fn unresolved_json(list: &[Unresolved]) -> String {
    #[derive(Serialize)]
    struct Entry<'a> {
        container: &'a str,
        script: &'a str,
        reason: &'a str,
    }
    // Bounded like the warnings: a pod with dozens of unreadable scripts gets the first ones.
    let list: Vec<Entry<'_>> = list
        .iter()
        .take(MAX_WARNINGS)
        .map(|u| Entry { container: &u.container, script: &u.script, reason: &u.reason })
        .collect();
    serde_json::to_string(&list).unwrap_or_else(|_| "[]".into())
}

/// Truncates each warning to [`MAX_WARNING_CHARS`] and keeps at most [`MAX_WARNINGS`] of them,
/// the last one counting exactly the warnings not shown. Only warnings equal as a whole are merged
/// (one unknown rule named twice): two that are equal only once cut (5,000 containers' findings
/// behind a long prefix) are different findings, and each counts.
fn bound_warnings(warnings: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut distinct: Vec<String> = Vec::new();
    for w in warnings {
        if seen.insert(w.clone()) {
            distinct.push(w);
        }
    }
    let (shown, more) = if distinct.len() > MAX_WARNINGS {
        (MAX_WARNINGS - 1, distinct.len() - (MAX_WARNINGS - 1))
    } else {
        (distinct.len(), 0)
    };
    // Names and annotation values from the object: escaped before kubectl prints them.
    let mut out: Vec<String> = distinct
        .iter()
        .take(shown)
        .map(|w| truncate_chars(&crate::engine::display_safe(w), MAX_WARNING_CHARS))
        .collect();
    if more > 0 {
        out.push(format!(
            "probegate: and {more} more findings; run `probegate check` on the manifest for all"
        ));
    }
    out
}

/// Shortens `s` to `max` characters: its probe commands cut first, in words, then the parts less
/// needed than the host and the advice ([`fit::fit`]); when that cannot make it fit, keeping a
/// trailing ` (rule-id)` tail intact when there is one (a lower-case word of letters, digits and
/// `-`, shorter than half of `max`), so the rule id always survives, and cutting the rest at a blank (see [`engine::cut_at_blank`]): the start
/// (`probegate: container NAME:`) stays. Another parenthesis at the end is text like the rest: a
/// message cut before it and resumed inside it would read as cut in the middle.
fn truncate_chars(s: &str, max: usize) -> String {
    // Its quoted commands and its least needed parts first, so that the host and the advice stay (s27).
    let shorter = fit::fit(s, max);
    let s = shorter.as_str();
    if s.chars().count() <= max {
        return s.to_string();
    }
    let id_like = |t: &str| {
        t.strip_prefix(" (").and_then(|t| t.strip_suffix(')')).is_some_and(|id| {
            !id.is_empty() && id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        })
    };
    let tail_start =
        s.rfind(" (").filter(|&i| s[i..].chars().count() < max / 2 && id_like(&s[i..])).unwrap_or(s.len());
    let (head, tail) = s.split_at(tail_start);
    let keep = max.saturating_sub(tail.chars().count());
    engine::cut_at_blank(head, keep) + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containers_not_analysed_for_one_reason_share_a_warning_that_names_what_fits() {
        let note = |container: &str, reason: &str, over_bound: bool| Unresolved {
            container: container.into(),
            script: "sh -c ...".into(),
            reason: reason.into(),
            over_bound,
            probe: "liveness",
        };
        // A script that could not be read is no warning; one container alone is named alone.
        let mut notes = vec![note("web", "ConfigMap x is not available", false), note("c0", "over", true)];
        // Twenty containers of 9-character names skipped for one reason: as many names as fit in 64
        // characters (six: 6 x 9 + 5 x 2 = 64), the others counted; a container twice is one.
        let names: Vec<String> = (10..30).map(|i| format!("sidecar{i}")).collect();
        for n in &names {
            notes.push(note(n, "spent", true));
        }
        notes.push(note("sidecar10", "spent", true));
        let w = not_analysed_warnings(&notes, "probegate:");
        assert_eq!(
            w,
            [
                "probegate: container c0: liveness probe not analysed for dependencies (over)",
                "probegate: containers sidecar10, sidecar11, sidecar12, sidecar13, sidecar14, sidecar15 and 14 \
                 more: liveness probes not analysed for dependencies (spent)",
            ]
        );
        assert!(not_analysed_warnings(&notes[..1], "probegate:").is_empty());
    }

    #[test]
    fn json_containers_are_counted_outside_strings_only() {
        assert!(!json_containers_over(br#"{"a": [1, {"b": 2}]}"#, 3));
        // (28 bytes, 12 containers: scanned for a limit of 9; too short to hold more than 14.)
        assert!(json_containers_over(br#"{"a":[[[[[[[[[[[]]]]]]]]]]]}"#, 9));
        assert!(!json_containers_over(br#"{"a":[[[[[[[[[[[]]]]]]]]]]]}"#, 14));
        // Braces inside strings (a last-applied-configuration annotation), escaped quotes too.
        let s = format!(r#"{{"note": "{}\" {{ ["}}"#, "{[".repeat(1000));
        assert!(!json_containers_over(s.as_bytes(), 1), "{s}");
        let many = format!("[{}]", vec!["{}"; MAX_JSON_CONTAINERS].join(","));
        assert!(matches!(parse_review(many.as_bytes()), Err(ReviewError::TooManyValues)));
    }

    #[test]
    fn a_body_that_is_not_an_admission_review_is_called_that_not_a_wrong_version() {
        let e = parse_review(br#"{"a":1}"#).unwrap_err().to_string();
        assert!(e.contains("not an AdmissionReview") && e.contains("no apiVersion and no kind"), "{e}");
        let e = parse_review(br#"{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview"}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("unsupported AdmissionReview version") && e.contains("v1beta1"), "{e}");
    }

    /// s21: a review with the right apiVersion and no kind was told its version is unsupported; a
    /// BOM was "invalid JSON"; `null` was told it is not a "struct AdmissionReviewRequest".
    #[test]
    fn a_missing_envelope_member_a_bom_and_wrong_types_are_named_in_review_terms() {
        let error = |body: &[u8]| parse_review(body).unwrap_err().to_string();
        let no_kind = "the body is not an AdmissionReview: no kind (expected kind AdmissionReview with apiVersion admission.k8s.io/v1)";
        assert_eq!(error(br#"{"apiVersion":"admission.k8s.io/v1"}"#), no_kind);
        assert_eq!(error(br#"{"apiVersion":"admission.k8s.io/v1","request":{}}"#), no_kind);
        assert_eq!(
            error(br#"{"kind":"AdmissionReview","request":{}}"#),
            "the body is not an AdmissionReview: no apiVersion (expected apiVersion admission.k8s.io/v1 with kind AdmissionReview)"
        );
        let bom = error(b"\xEF\xBB\xBF{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}");
        assert!(
            bom.contains("it starts with a UTF-8 byte order mark (BOM), which JSON does not allow"),
            "{bom}"
        );
        assert_eq!(
            error(b"null"),
            "the body is not an AdmissionReview: invalid type: null, expected an AdmissionReview object at line 1 column 4"
        );
        // An array is not read as the struct's fields in order (break-it pass s21).
        let array = "the body is not an AdmissionReview: invalid type: array, expected an AdmissionReview object (a JSON object with apiVersion, kind and request)";
        assert_eq!(error(br#"["AdmissionReview"]"#), array);
        assert_eq!(error(b" \n [1,2]"), array);
        let kind = error(
            br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","kind":"Pod","operation":"CREATE"}}"#,
        );
        assert!(kind.contains("request.kind: invalid type: string"), "{kind}");
        assert!(kind.contains("expected an object with group, version and kind at"), "{kind}");
        assert_eq!(
            in_review_terms("invalid type: map, expected struct Other_1 at line 1"),
            "invalid type: map, expected an object at line 1"
        );
    }

    /// s20: a review of kind `Foo` with the right apiVersion was told about v1beta1.
    #[test]
    fn the_version_hint_fits_the_mistake_made() {
        let error = |body: &str| parse_review(body.as_bytes()).unwrap_err().to_string();
        let beta =
            error(r#"{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{}}"#);
        assert!(
            beta.ends_with(
                "(v1beta1 is not served: set admissionReviewVersions: [v1] in the webhook configuration)"
            ),
            "{beta}"
        );
        let kind = error(r#"{"apiVersion":"admission.k8s.io/v1","kind":"Foo","request":{}}"#);
        assert!(
            kind.ends_with(
                "(the apiVersion is right: the kind must be AdmissionReview, as the API server sends it)"
            ),
            "{kind}"
        );
        assert!(!kind.contains("v1beta1"), "{kind}");
        let other = error(r#"{"apiVersion":"admission.k8s.io/v2","kind":"AdmissionReview","request":{}}"#);
        assert!(
            other.ends_with("(set admissionReviewVersions: [v1] in the webhook configuration)"),
            "{other}"
        );
        assert!(!other.contains("v1beta1"), "{other}");
    }

    /// s19 break-it pass: a review of another version whose request lacks a field a v1 request has
    /// was answered "request: missing field `kind`", naming neither the version sent nor the one
    /// accepted.
    #[test]
    fn a_wrong_version_or_kind_is_named_whatever_the_request_looks_like() {
        let accepted = "accepts only apiVersion admission.k8s.io/v1, kind AdmissionReview";
        let hostile = format!(
            r#"{{"apiVersion":"{}\n\u001b[31m","kind":"AdmissionReview","request":{{"uid":"u"}}}}"#,
            "a".repeat(61)
        );
        let hostile_named = format!(r#"apiVersion "{}\n\u{{1b}}[…", kind"#, "a".repeat(61));
        for (body, named) in [
            (
                r#"{"apiVersion":"admission.k8s.io/v2","kind":"AdmissionReview","request":{"uid":"u"}}"#,
                r#"apiVersion "admission.k8s.io/v2", kind "AdmissionReview";"#,
            ),
            (
                r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReviewX","request":{"uid":"u"}}"#,
                r#"apiVersion "admission.k8s.io/v1", kind "AdmissionReviewX";"#,
            ),
            (r#"{"kind":"AdmissionReviewX","request":{}}"#, r#"apiVersion (none), kind "AdmissionReviewX";"#),
            (r#"{"apiVersion":"admission.k8s.io/v2"}"#, r#"apiVersion "admission.k8s.io/v2", kind (none);"#),
            // Escaped (an answer and a log line carry it) and cut to 64 characters.
            (&hostile, &hostile_named),
        ] {
            let e = parse_review(body.as_bytes()).unwrap_err().to_string();
            assert!(e.contains(named) && e.contains(accepted), "{body}: {e}");
        }
        let long = format!(r#"{{"apiVersion":"{}","kind":"AdmissionReview"}}"#, "v".repeat(10_000));
        assert!(parse_review(long.as_bytes()).unwrap_err().to_string().len() < 400);
        // The right version with a broken request: the field is named, as before.
        let e = parse_review(
            br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u"}}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("missing field `kind`") && !e.contains("unsupported"), "{e}");
    }

    #[test]
    fn joined_messages_stop_at_the_bound_and_count_the_rest() {
        let items: Vec<String> = ["aaaa", "bbbb", "cccc"].map(String::from).to_vec();
        assert_eq!(join_bounded(&items, 100), "aaaa; bbbb; cccc");
        // "aaaa" + "bbbb" is 8 characters: at a bound of 8 the second still fits, at 7 it does not.
        assert_eq!(join_bounded(&items, 8), "aaaa; bbbb; and 1 more");
        assert_eq!(join_bounded(&items, 7), "aaaa; and 2 more");
        // The first message always comes, even over the bound: a denial never lists nothing.
        assert_eq!(join_bounded(&items, 2), "aaaa; and 2 more");
        assert_eq!(join_bounded(&items[..1], 2), "aaaa");
        assert_eq!(join_bounded(&[], 10), "");
    }

    #[test]
    fn warnings_are_bounded() {
        let long = "x".repeat(1000);
        let out = bound_warnings((0..30).map(|i| format!("{i}{long}")).collect());
        assert_eq!(out.len(), MAX_WARNINGS);
        assert!(out.iter().all(|w| w.chars().count() <= MAX_WARNING_CHARS));
        assert!(out.last().unwrap().contains("19 more"));
    }

    #[test]
    fn a_cut_warning_keeps_its_rule_id() {
        let long = format!("container app: {} (liveness-dependency)", "x".repeat(400));
        let cut = truncate_chars(&long, MAX_WARNING_CHARS);
        assert_eq!(cut.chars().count(), MAX_WARNING_CHARS, "{cut}");
        assert!(cut.ends_with("x… (liveness-dependency)"), "{cut}");
        // A tail of half the bound or more is not a rule id: cut like the rest.
        let tail = format!(" ({})", "y".repeat(200));
        let cut = truncate_chars(&format!("{}{tail}", "x".repeat(100)), MAX_WARNING_CHARS);
        assert!(cut.ends_with("y…") && cut.chars().count() == MAX_WARNING_CHARS, "{cut}");
        assert_eq!(truncate_chars("short (rule)", MAX_WARNING_CHARS), "short (rule)");
        // The bound: a tail shorter than half of `max` is kept, one of half is not.
        let (kept, cut) = (format!("{} (ab)", "x".repeat(20)), format!("{} (abc)", "x".repeat(20)));
        assert_eq!(truncate_chars(&kept, 12), "xxxxxx… (ab)");
        assert_eq!(truncate_chars(&cut, 12), "xxxxxxxxxxx…");
    }

    /// A warning over the bound is cut between words (never inside one, nor inside a character),
    /// keeping its `probegate: container NAME:` start and its `(rule-id)` end.
    #[test]
    fn a_cut_warning_ends_between_words() {
        let tail = " (liveness-dependency)";
        for filler in ["größere Datenbankverbindung ", "reaches orders-db.production.svc ", "x yz "] {
            let long = format!("probegate: container app: livenessProbe {}{tail}", filler.repeat(60));
            let cut = truncate_chars(&long, MAX_WARNING_CHARS);
            assert!(cut.chars().count() <= MAX_WARNING_CHARS, "{cut}");
            let head = cut.strip_suffix(&format!("…{tail}")).unwrap_or_else(|| panic!("{cut}"));
            assert!(head.starts_with("probegate: container app: ") && long.starts_with(head), "{cut}");
            // What follows the kept text in the original starts a new word (or is a separator).
            let (last, next) = (head.chars().last().unwrap(), long[head.len()..].chars().next().unwrap());
            assert!(!(last.is_alphanumeric() && next.is_alphanumeric()), "cut inside a word: {cut}");
            assert!(head.chars().count() > MAX_WARNING_CHARS / 2, "{cut}");
        }
    }

    #[test]
    fn json_errors_do_not_quote_values() {
        let e = serde_json::from_str::<AdmissionReviewRequest>(r#"{"request": {"uid": 5}}"#).unwrap_err();
        let d = describe_json_error(&e);
        assert!(!d.contains('5') || d.contains("line"), "{d}");
        let e = serde_json::from_str::<AdmissionReviewRequest>(r#"{"kind": ["hunter2"]}"#).unwrap_err();
        assert!(!describe_json_error(&e).contains("hunter2"));
    }

    /// A body that does not read says which kind of error and where, and a data error the type
    /// expected (the 400's message; kills `describe_json_error` made `"xyzzy"`, the s16 sample).
    #[test]
    fn json_errors_say_what_is_wrong_and_where() {
        let describe = |body: &str| {
            describe_json_error(&serde_json::from_str::<AdmissionReviewRequest>(body).unwrap_err())
        };
        assert_eq!(describe(r#"{"request": }"#), "invalid JSON at line 1 column 13");
        assert_eq!(describe(r#"{"request": {"#), "truncated or empty JSON at line 1 column 13");
        assert_eq!(describe(""), "truncated or empty JSON at line 1 column 0");
        // The value is redacted, the expected type kept.
        assert_eq!(
            describe(r#"{"request": {"uid": 5}}"#),
            "invalid type: integer `…`, expected a string at line 1 column 21"
        );
    }
}
