//! What the offline commands read: paths expanded to files, files (or standard input) read and split
//! into documents, documents into objects (`kind: List` items included), and each workload object
//! evaluated with [`admission::evaluate_object`], the webhook's own policy application.

use std::io::Read;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::admission::{self, ObjectEvaluation};
use crate::engine::{Finding, OwnerReference, Workload, WorkloadKind};
use crate::manifest::located::{self, Document, Node, NodeValue};
use crate::policy::{Action, Mode, Policy};

mod template;
mod walk;
use template::unrendered_template;
pub use walk::expand;

/// The name standard input is reported under.
pub const STDIN_NAME: &str = "<stdin>";

/// Extensions read from directories.
const EXTENSIONS: [&str; 3] = ["yaml", "yml", "json"];

/// One input: a file or standard input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// A file, by the path it is reported under.
    File(PathBuf),
    /// Standard input (`-`).
    Stdin,
    /// Objects read from a cluster by `probegate audit`, reported under this name
    /// (`namespaces/NAME`).
    Cluster(String),
}

impl Input {
    /// The name reports use: the path as given (joined with the part found under a directory), or
    /// `<stdin>`.
    pub fn name(&self) -> String {
        match self {
            Input::File(p) => p.display().to_string(),
            Input::Stdin => STDIN_NAME.to_string(),
            Input::Cluster(name) => name.clone(),
        }
    }
}

/// A problem with the input: an unreadable file, a YAML error, an object that is not a valid
/// instance of its kind. Any of these makes `check` exit 2.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    /// The file (or `<stdin>`).
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<u32>,
    /// 1-based column, when known.
    pub column: Option<u32>,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.line, self.column) {
            (Some(l), Some(c)) => write!(f, "{}:{l}:{c}: {}", self.file, self.message),
            (Some(l), None) => write!(f, "{}:{l}: {}", self.file, self.message),
            _ => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// Largest input read, in bytes: 256 MiB. The rendered manifests of a whole platform are a few
/// MiB; the limit turns `/dev/zero` or a runaway generator into an error instead of exhausted
/// memory.
pub const MAX_INPUT_BYTES: u64 = 256 * 1024 * 1024;

/// Reads an input as UTF-8 text, at most [`MAX_INPUT_BYTES`].
///
/// # Errors
/// A message naming the problem (not found, permission, too large, not UTF-8).
pub fn read(input: &Input, stdin: &mut dyn Read) -> Result<String, String> {
    let mut bytes = Vec::new();
    let read = match input {
        Input::File(p) => {
            std::fs::File::open(p).and_then(|f| f.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes))
        }
        Input::Stdin => stdin.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes),
        Input::Cluster(name) => return Err(format!("{name} is not a file")),
    };
    read.map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(format!("over {} MiB; split the input", MAX_INPUT_BYTES / (1024 * 1024)));
    }
    String::from_utf8(bytes).map_err(|e| format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()))
}

/// A finding as the offline commands report it.
#[derive(Clone, Debug, PartialEq)]
pub struct Reported {
    /// The engine's finding (rule, configured action, container, message, patch).
    pub finding: Finding,
    /// What it amounts to (see [`Level`]).
    pub level: Level,
    /// 1-based line of the container in the file, when known.
    pub container_line: Option<u32>,
    /// Why the level differs from the action, if it does.
    pub note: Option<String>,
    /// What the cluster says about the container's restarts (`probegate audit` only).
    pub evidence: Option<crate::audit::evidence::Evidence>,
}

/// How serious a finding is, for `--fail-on` and the reports; ordered `info < fix < warn < deny`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// An `info` finding: reported here and in audit annotations, never a warning at admission.
    Info,
    /// A `mutate` finding with a patch: what `probegate fix` changes.
    Fix,
    /// The webhook would admit it with a warning (a `warn` rule; a `deny` rule in `mode: audit`; a
    /// `mutate` rule it cannot fix, which the webhook warns about).
    Warn,
    /// The webhook would reject it.
    Deny,
}

impl Level {
    /// `info`, `fix`, `warn` or `deny`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Info => "info",
            Level::Fix => "fix",
            Level::Warn => "warn",
            Level::Deny => "deny",
        }
    }
}

/// The level of a finding under the effective mode, as the webhook would treat it.
pub fn level_of(f: &Finding, mode: Mode, owner: Option<&OwnerReference>) -> (Level, Option<String>) {
    // An owner named in a file does not relax a denial: the webhook relaxes it only when
    // request.userInfo shows a trusted controller creating the object, and whoever applies a
    // file (a person, a pipeline, a GitOps tool) is not the controller.
    let owned = |o: &OwnerReference| {
        format!(
            "{} {} is named as its controller, but only objects a trusted controller creates are not denied",
            o.kind, o.name
        )
    };
    match f.action {
        Action::Deny if mode == Mode::Audit => {
            let note = match owner {
                Some(o) => format!("mode audit: reported, not denied (enforce would deny: {})", owned(o)),
                None => "mode audit: reported, not denied (enforce would deny)".to_string(),
            };
            (Level::Warn, Some(note))
        }
        Action::Deny => (Level::Deny, owner.map(owned)),
        Action::Mutate if f.patch.is_empty() => {
            (Level::Warn, Some("not fixable automatically; the webhook warns where it patches (Pods; templates with templates.mutate)".to_string()))
        }
        // Audit mode: the webhook reports the patch and makes none (docs/policy.md); `fix`, asked
        // for explicitly, applies it to the file whatever the mode.
        Action::Mutate if mode == Mode::Audit => (
            Level::Fix,
            Some("mode audit: reported, not patched by the webhook (enforce would patch; `fix` applies it)".to_string()),
        ),
        Action::Mutate => (Level::Fix, None),
        Action::Info => (Level::Info, None),
        Action::Warn | Action::Off => (Level::Warn, None),
    }
}

/// One workload object found in a file, and what the policy made of it.
#[derive(Clone, Debug)]
pub struct Checked {
    /// Index of its document in [`FileAnalysis::documents`].
    pub document: usize,
    /// JSON Pointer from the document to the object: empty, or `/items/N` in a `kind: List`.
    pub pointer: String,
    /// 1-based line where the object starts.
    pub line: u32,
    /// Its kind.
    pub kind: WorkloadKind,
    /// `metadata.name` (or `generateName*`, or `<unnamed>`).
    pub name: String,
    /// The namespace the policy was applied for: `metadata.namespace`, else `--namespace`, else
    /// `default`.
    pub namespace: String,
    /// The policy applied (effective mode, overrides, skipped rules) and the findings.
    pub evaluation: ObjectEvaluation,
    /// The findings with their levels and lines.
    pub findings: Vec<Reported>,
    /// The workload as the engine read it (its PodSpec emptied under [`Keep::Findings`]).
    pub workload: Workload,
    /// 1-based lines of the skip annotation ([`crate::policy::SKIP_ANNOTATION`]) the policy reads
    /// (the pod template's on a controller, the Pod's own) and of one on a controller's own
    /// metadata, which is not read; the notes about it point there. `None` when absent or with
    /// no line (a cluster object).
    pub skip_lines: SkipLines,
}

/// Where the skip annotations of an object are ([`Checked::skip_lines`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SkipLines {
    /// The annotation the policy reads: the pod template's, or a Pod's own.
    pub read: Option<u32>,
    /// One on a controller's own metadata (not read).
    pub ignored: Option<u32>,
}

/// The lines of `object`'s skip annotations ([`SkipLines`]): `metadata.annotations` of its pod
/// template (its PodSpec's parent) and of the object itself.
pub fn skip_lines(object: &Node, kind: WorkloadKind) -> SkipLines {
    let line = |tokens: &[&str]| {
        let mut at: Vec<&str> = tokens.to_vec();
        at.extend(["metadata", "annotations", crate::policy::SKIP_ANNOTATION]);
        object.at(at).map(|n| n.pos.line).filter(|l| *l > 0)
    };
    let spec = kind.pod_spec_tokens();
    let template = &spec[..spec.len().saturating_sub(1)];
    SkipLines { read: line(template), ignored: if template.is_empty() { None } else { line(&[]) } }
}

/// Everything read from one input.
#[derive(Clone, Debug)]
pub struct FileAnalysis {
    /// The input.
    pub input: Input,
    /// The ConfigMaps of the whole run (every file and standard input: one run is one view of the
    /// cluster); they resolve liveness scripts and env values, matched by namespace and name.
    pub configmaps: std::sync::Arc<crate::engine::StaticConfigMaps>,
    /// Its text (empty when unreadable, or not kept).
    pub text: String,
    /// Its documents (empty when not kept).
    pub documents: Vec<Document>,
    /// The workload objects, in file order.
    pub objects: Vec<Checked>,
    /// Non-empty documents (or `kind: List` items) that are not Pods or pod controllers.
    pub skipped: usize,
    /// Non-empty documents.
    pub document_count: usize,
    /// What could not be read.
    pub errors: Vec<InputError>,
}

/// The objects of a document: the document itself, the items of a `kind: List` (or any
/// `kind: ...List` with `items`; a List among them read in turn), or the `request.object` of an
/// `AdmissionReview` (a captured review is checked as the webhook would see it), with their
/// pointers.
pub fn objects_of(node: &Node) -> Vec<(String, &Node)> {
    let kind = node.get("kind").and_then(Node::as_str);
    if kind == Some("AdmissionReview") {
        return match node.at(["request", "object"]) {
            Some(object) if matches!(object.value, NodeValue::Map(_)) => {
                vec![("/request/object".to_string(), object)]
            }
            _ => Vec::new(),
        };
    }
    let mut out = Vec::new();
    list_items(node, String::new(), 0, &mut out);
    out
}

/// Deepest `kind: List` nesting read: a List in a List's items is read, up to this depth; a deeper
/// one is counted as a skipped document.
const LIST_DEPTH: usize = 8;

/// `node` itself, or, for a List (`kind: ...List` with `items`), its items, Lists among them read
/// in turn (break-it pass s22: a nested List was skipped in silence), at pointers from the document.
fn list_items<'a>(node: &'a Node, pointer: String, depth: usize, out: &mut Vec<(String, &'a Node)>) {
    let is_list = node.get("kind").and_then(Node::as_str).is_some_and(|k| k.ends_with("List"));
    match node.get("items").and_then(Node::as_seq) {
        Some(items) if is_list && depth < LIST_DEPTH => {
            for (i, item) in items.iter().enumerate() {
                list_items(item, format!("{pointer}/items/{i}"), depth + 1, out);
            }
        }
        _ => out.push((pointer, node)),
    }
}

/// Why an object that names a workload kind is not one the API server would take, so that it is
/// not skipped as "not a workload" in silence: no `apiVersion` (the API server refuses the object),
/// or `extensions/v1beta1` for a Deployment, DaemonSet or ReplicaSet (no longer served since
/// Kubernetes 1.16, "Deprecated API Migration Guide"). A kind of another group (a CRD's `Job`) is
/// no workload and gets `None`.
fn unserved_workload(node: &Node) -> Option<String> {
    let kind = node.get("kind")?.as_str()?;
    let workload = WorkloadKind::from_api_version_kind("v1", kind)
        .or_else(|| WorkloadKind::from_api_version_kind("apps/v1", kind))
        .or_else(|| WorkloadKind::from_api_version_kind("batch/v1", kind))?;
    match node.get("apiVersion").and_then(Node::as_str) {
        None | Some("") => {
            Some(format!("a {kind} without apiVersion (the API server refuses it): not checked"))
        }
        Some(v) if v.starts_with("extensions/") => Some(format!(
            "{kind} {v} is no longer served (removed in Kubernetes 1.16): use apiVersion {}; not checked",
            if workload == WorkloadKind::Pod { "v1" } else { "apps/v1" }
        )),
        Some(_) => None,
    }
}

/// The workload kind of an object, from its `apiVersion` and `kind`.
pub fn workload_kind(node: &Node) -> Option<WorkloadKind> {
    let api_version = node.get("apiVersion")?.as_str()?;
    let kind = node.get("kind")?.as_str()?;
    WorkloadKind::from_api_version_kind(api_version, kind)
}

/// The line of a container of a workload object, by list and name.
pub fn container_line(object: &Node, kind: WorkloadKind, finding: &Finding) -> Option<u32> {
    let list = match finding.container_kind {
        crate::engine::ContainerKind::App => "containers",
        crate::engine::ContainerKind::Sidecar => "initContainers",
    };
    let spec = object.at(kind.pod_spec_tokens().iter().copied())?;
    let containers = spec.get(list)?.as_seq()?;
    containers
        .iter()
        .find(|c| c.get("name").and_then(Node::as_str) == Some(finding.container.as_str()))
        .map(|c| c.pos.line)
        .filter(|l| *l > 0)
}

/// What [`analyze`] keeps beyond the findings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// Only what reports need: the text and documents are dropped, and the workloads' PodSpecs
    /// emptied, as soon as each file is evaluated (`check`: less memory, less time).
    Findings,
    /// Also the text, documents and workloads (`fix`, `explain`).
    Sources,
}

/// The ConfigMaps (`v1`, also inside `kind: List`) of one text, as JSON values; nothing when the
/// text does not mention `ConfigMap` (most files: they are not parsed twice).
fn configmap_values(text: &str) -> Vec<serde_json::Value> {
    if memchr::memmem::find(text.as_bytes(), b"ConfigMap").is_none() {
        return Vec::new();
    }
    located::parse_file(text)
        .iter()
        .filter_map(|d| d.node.as_ref().ok().and_then(Option::as_ref))
        .flat_map(|n| objects_of(n).into_iter().map(|(_, o)| o))
        .filter(|o| o.get("kind").and_then(Node::as_str) == Some("ConfigMap"))
        .map(Node::to_value)
        .collect()
}

/// The ConfigMaps of every text of a run, keyed by namespace (`metadata.namespace`, else
/// `default_namespace`) and name; a later one of the same key replaces an earlier one.
pub fn configmaps_of<'a>(
    texts: impl IntoParallelIterator<Item = &'a str>,
    default_namespace: &str,
) -> crate::engine::StaticConfigMaps {
    let values: Vec<Vec<serde_json::Value>> = texts.into_par_iter().map(configmap_values).collect();
    crate::engine::StaticConfigMaps::from_documents(values.iter().flatten(), default_namespace)
}

thread_local! {
    /// The run's parse cache, one per thread (`check` reads its files on rayon's threads; the
    /// engine keeps no state, so the shell owns it): a script met in several objects (a
    /// Deployment, its Pods, a Helm chart's replicas) is parsed once per thread. Bounded
    /// ([`crate::engine::ParseCache`]); it only saves parses, the findings are the same.
    static RUN_PARSES: std::cell::RefCell<crate::engine::ParseCache> =
        std::cell::RefCell::new(crate::engine::ParseCache::new());
}

/// Runs `f` with this thread's parse cache for the run (see `RUN_PARSES`).
pub fn with_run_parse_cache<R>(f: impl FnOnce(&mut crate::engine::ParseCache) -> R) -> R {
    RUN_PARSES.with_borrow_mut(f)
}

/// Reads, splits and evaluates one input under a policy, with the ConfigMaps of that input only.
/// `default_namespace` applies to objects without `metadata.namespace`.
pub fn analyze(
    policy: &Policy,
    input: Input,
    text: Result<String, String>,
    default_namespace: &str,
    keep: Keep,
) -> FileAnalysis {
    let configmaps = match &text {
        Ok(t) => configmaps_of([t.as_str()], default_namespace),
        Err(_) => Default::default(),
    };
    analyze_with(policy, input, text, default_namespace, keep, std::sync::Arc::new(configmaps))
}

/// [`analyze`] with the ConfigMaps of the whole run (see [`configmaps_of`]).
pub fn analyze_with(
    policy: &Policy,
    input: Input,
    text: Result<String, String>,
    default_namespace: &str,
    keep: Keep,
    configmaps: std::sync::Arc<crate::engine::StaticConfigMaps>,
) -> FileAnalysis {
    let file = input.name();
    let mut analysis = FileAnalysis {
        input,
        configmaps: configmaps.clone(),
        text: String::new(),
        documents: Vec::new(),
        objects: Vec::new(),
        skipped: 0,
        document_count: 0,
        errors: Vec::new(),
    };
    let text = match text {
        Ok(t) => t,
        Err(message) => {
            analysis.errors.push(InputError { file, line: None, column: None, message });
            return analysis;
        }
    };
    let documents = located::parse_file(&text);
    if let Some(error) = unrendered_template(&file, &text, &documents) {
        analysis.errors.push(error);
        return analysis;
    }
    let configmaps = &*configmaps;
    for (index, doc) in documents.iter().enumerate() {
        let node = match &doc.node {
            Ok(Some(n)) => n,
            Ok(None) => continue,
            Err(e) => {
                analysis.errors.push(InputError {
                    file: file.clone(),
                    line: Some(e.line).filter(|l| *l > 0),
                    column: Some(e.column).filter(|c| *c > 0),
                    message: format!("invalid {}: {}", if e.json { "JSON" } else { "YAML" }, e.message),
                });
                continue;
            }
        };
        analysis.document_count += 1;
        // A review's object may leave its namespace to the review's `request.namespace`.
        let review_namespace =
            node.at(["request", "namespace"]).and_then(Node::as_str).filter(|n| !n.is_empty());
        let objects = objects_of(node);
        if objects.is_empty() {
            analysis.skipped += 1;
        }
        for (pointer, object) in objects {
            if !matches!(object.value, NodeValue::Map(_)) {
                analysis.skipped += 1;
                continue;
            }
            let Some(kind) = workload_kind(object) else {
                match unserved_workload(object) {
                    Some(message) => analysis.errors.push(InputError {
                        file: file.clone(),
                        line: Some(object.pos.line).filter(|l| *l > 0),
                        column: None,
                        message,
                    }),
                    None => analysis.skipped += 1,
                }
                continue;
            };
            let value = object.to_value();
            let workload = match Workload::from_value(kind, &value) {
                Ok(w) => w,
                Err(e) => {
                    analysis.errors.push(invalid_object(&file, object, kind, &value, &e));
                    continue;
                }
            };
            let namespace = workload
                .metadata
                .namespace
                .clone()
                .filter(|n| !n.is_empty())
                .or_else(|| review_namespace.filter(|_| pointer == "/request/object").map(String::from))
                .unwrap_or(default_namespace.into());
            let evaluation = with_run_parse_cache(|cache| {
                admission::evaluate_object_cached(policy, &workload, &namespace, None, configmaps, cache)
            });
            let owner = workload.metadata.validated_controller().cloned();
            let findings = evaluation
                .evaluation
                .findings
                .iter()
                .map(|f| {
                    let (level, note) = level_of(f, evaluation.effective.mode, owner.as_ref());
                    Reported {
                        finding: f.clone(),
                        level,
                        container_line: container_line(object, kind, f),
                        note,
                        evidence: None,
                    }
                })
                .collect();
            analysis.objects.push(Checked {
                document: index,
                pointer,
                line: object.pos.line,
                kind,
                name: workload.metadata.display_name(),
                namespace,
                evaluation,
                findings,
                workload,
                skip_lines: skip_lines(object, kind),
            });
        }
    }
    if keep == Keep::Sources {
        analysis.documents = documents;
        analysis.text = text;
    } else {
        for o in &mut analysis.objects {
            o.workload.spec = Default::default();
        }
    }
    analysis
}

/// The error for an object that is not a valid instance of its kind, placed at the bad field: its
/// line and column, and its path (`the object is not a valid Pod: spec.containers[0].livenessProbe.
/// httpGet.port: invalid type: sequence, expected IntOrString`). A field that is missing is placed at the nearest parent.
fn invalid_object(
    file: &str,
    object: &Node,
    kind: WorkloadKind,
    value: &serde_json::Value,
    error: &crate::engine::workload::WorkloadError,
) -> InputError {
    let at = |node: &Node| (Some(node.pos.line).filter(|l| *l > 0), Some(node.pos.column).filter(|c| *c > 0));
    match Workload::invalid_field(kind, value) {
        Some(field) => {
            // The deepest node of the path that exists (a missing field: its parent).
            let node = (0..=field.tokens.len())
                .rev()
                .find_map(|n| object.at(field.tokens[..n].iter().map(String::as_str)))
                .unwrap_or(object);
            let (line, column) = at(node);
            let path = if field.dotted.is_empty() { String::new() } else { format!(" {}:", field.dotted) };
            // `value: true` or `value: 8080` where Kubernetes wants a string: YAML read it as a
            // boolean or a number (kubectl refuses it too).
            let unquoted = ["boolean", "integer", "floating point"]
                .iter()
                .any(|t| field.message.contains(&format!("invalid type: {t}")))
                && field.message.contains("expected a string");
            let hint = if unquoted { "; quote the value to make it a string" } else { "" };
            InputError {
                file: file.to_string(),
                line: line.or(Some(object.pos.line).filter(|l| *l > 0)),
                column,
                message: format!(
                    "the object is not a valid {}:{path} {}{hint}",
                    kind.as_str(),
                    field.message
                ),
            }
        }
        None => InputError {
            file: file.to_string(),
            line: Some(object.pos.line).filter(|l| *l > 0),
            column: None,
            message: redact_values(&error.to_string()),
        },
    }
}

/// A deserialization error without the values it quotes: see
/// [`crate::engine::workload::redact_quoted`].
pub fn redact_values(message: &str) -> String {
    crate::engine::workload::redact_quoted(message)
}

/// A file the offline commands did not read, and why.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SkippedFile {
    /// The file, as reports name it.
    pub file: String,
    /// Why it was not read, and what to do instead.
    pub message: String,
    /// The kustomization that lists it, as reports name it.
    #[serde(skip)]
    pub kustomization: PathBuf,
    /// That kustomization's folder, as reports name it.
    #[serde(skip)]
    pub folder: PathBuf,
}

/// The notes for files not read, one per kustomization: a kustomization listing one patch gets
/// the file's own message; one listing several names them (relative to its folder) in one note,
/// with the command once.
pub fn skipped_notes(skipped: &[SkippedFile]) -> Vec<String> {
    let mut groups: Vec<(&SkippedFile, Vec<&SkippedFile>)> = Vec::new();
    for s in skipped {
        match groups.iter_mut().find(|(first, _)| first.kustomization == s.kustomization) {
            Some((_, members)) => members.push(s),
            None => groups.push((s, vec![s])),
        }
    }
    groups
        .into_iter()
        .map(|(first, members)| {
            if members.len() == 1 {
                return format!("{}: {}", first.file, first.message);
            }
            let names: Vec<String> = members
                .iter()
                .map(|m| {
                    let path = Path::new(&m.file);
                    path.strip_prefix(&first.folder).unwrap_or(path).display().to_string()
                })
                .collect();
            format!(
                "{}: {} kustomize patches, parts of objects rather than whole ones, not checked: {}; check \
                 what kustomize builds instead: `kubectl kustomize {} | probegate check -`",
                first.kustomization.display(),
                members.len(),
                names.join(", "),
                first.folder.display()
            )
        })
        .collect()
}

/// The names kustomize looks for in a folder (sigs.k8s.io/kustomize, `konfig.RecognizedKustomizationFileNames`).
const KUSTOMIZATION_FILES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// How many folders up from a file a kustomization listing it as a patch is looked for (the file's
/// own folder, and `patches/` folders below the kustomization).
const KUSTOMIZATION_DEPTH: usize = 3;

/// The patch files a kustomization lists (`patches[].path`, `patchesStrategicMerge[]` entries that
/// are paths, `patchesJson6902[].path`), resolved against its folder and made canonical (files that
/// do not exist are left out). Nothing when the kustomization cannot be read.
fn kustomize_patch_paths(kustomization: &Path) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string(kustomization) else { return Vec::new() };
    let Ok(docs) = crate::manifest::parse_documents(&text) else { return Vec::new() };
    let dir = kustomization.parent().unwrap_or(Path::new("."));
    let mut paths = Vec::new();
    for doc in &docs {
        let listed = |key: &str| doc.get(key).and_then(serde_json::Value::as_array).into_iter().flatten();
        let named = listed("patches")
            .chain(listed("patchesJson6902"))
            .filter_map(|p| p.get("path").and_then(serde_json::Value::as_str))
            // An inline strategic merge patch is YAML text, not a path.
            .chain(
                listed("patchesStrategicMerge")
                    .filter_map(serde_json::Value::as_str)
                    .filter(|p| !p.contains('\n')),
            );
        paths.extend(named.filter_map(|p| dir.join(p).canonicalize().ok()));
    }
    paths
}

/// Why a file is not checked: it is a patch that a kustomization in its folder (or up to
/// [`KUSTOMIZATION_DEPTH`] folders up) lists under `patches`, `patchesStrategicMerge` or
/// `patchesJson6902`. Such a file holds part of an object (a Deployment with a name and the one
/// field it changes), and checking it as a whole object would report probes and fields that the
/// base it patches has. `cache` holds the patch lists of the kustomizations read so far.
fn kustomize_patch(
    path: &Path,
    cache: &mut std::collections::HashMap<PathBuf, Vec<PathBuf>>,
) -> Option<(String, PathBuf, PathBuf)> {
    let canonical = path.canonicalize().ok()?;
    let mut lexical = path.parent();
    for dir in canonical.ancestors().skip(1).take(KUSTOMIZATION_DEPTH) {
        let shown = match lexical {
            Some(l) if l.as_os_str().is_empty() => PathBuf::from("."),
            Some(l) => l.to_path_buf(),
            None => dir.to_path_buf(),
        };
        lexical = lexical.and_then(Path::parent);
        for name in KUSTOMIZATION_FILES {
            let file = dir.join(name);
            if !file.is_file() {
                continue;
            }
            let patches = cache.entry(file.clone()).or_insert_with(|| kustomize_patch_paths(&file));
            if patches.contains(&canonical) {
                let listing = if shown == Path::new(".") { PathBuf::from(name) } else { shown.join(name) };
                let message = format!(
                    "a kustomize patch ({} lists it), part of an object rather than a whole one: not checked; \
                     check what kustomize builds instead: `kubectl kustomize {} | probegate check -`",
                    listing.display(),
                    shown.display()
                );
                return Some((message, listing, shown));
            }
        }
    }
    None
}

/// Expands, reads (standard input first, then files in parallel) and analyzes every input, in
/// command-line order. One run is one view of the cluster: a ConfigMap in any input resolves the
/// scripts and env values of workloads in every input (Helm output split one document per file).
/// Errors of expansion come first in the returned list.
///
/// Files that a kustomization lists as patches are not read (see [`kustomize_patch`]): they are
/// returned, with the reason, as [`SkippedFile`]s.
pub fn analyze_all(
    policy: &Policy,
    paths: &[PathBuf],
    stdin: &mut dyn Read,
    default_namespace: &str,
    keep: Keep,
) -> (Vec<FileAnalysis>, Vec<InputError>, Vec<SkippedFile>) {
    let (inputs, errors, mut skipped) = expand(paths);
    let mut cache = std::collections::HashMap::new();
    let inputs: Vec<Input> = inputs
        .into_iter()
        .filter(|input| {
            let Input::File(path) = input else { return true };
            match kustomize_patch(path, &mut cache) {
                Some((message, kustomization, folder)) => {
                    skipped.push(SkippedFile { file: input.name(), message, kustomization, folder });
                    false
                }
                None => true,
            }
        })
        .collect();
    let mut stdin_text = inputs.contains(&Input::Stdin).then(|| read(&Input::Stdin, stdin));
    let texts: Vec<(Input, Result<String, String>)> = inputs
        .into_iter()
        .map(|input| {
            let text = match &input {
                Input::Stdin => stdin_text.take().unwrap_or_else(|| Ok(String::new())),
                Input::File(_) | Input::Cluster(_) => Ok(String::new()),
            };
            (input, text)
        })
        .collect::<Vec<_>>()
        .into_par_iter()
        .map(|(input, text)| match &input {
            Input::File(_) | Input::Cluster(_) => {
                let text = read(&input, &mut std::io::empty());
                (input, text)
            }
            Input::Stdin => (input, text),
        })
        .collect();
    let configmaps = std::sync::Arc::new(configmaps_of(
        texts.par_iter().filter_map(|(_, t)| t.as_deref().ok()),
        default_namespace,
    ));
    let analyses = texts
        .into_par_iter()
        .map(|(input, text)| analyze_with(policy, input, text, default_namespace, keep, configmaps.clone()))
        .collect();
    (analyses, errors, skipped)
}

#[cfg(test)]
mod tests {
    use super::{Input, read, redact_values};

    #[test]
    fn an_owned_object_in_a_file_is_denied_as_the_webhook_denies_it_for_whoever_applies_it() {
        use super::{Level, level_of};
        use crate::engine::{ContainerKind, Finding, OwnerReference};
        use crate::policy::{Action, Mode, RuleId};
        let f = Finding {
            rule: RuleId::LivenessDependency,
            action: Action::Deny,
            container: "app".into(),
            container_kind: ContainerKind::App,
            message: "m".into(),
            patch: Vec::new(),
            dry_run_message: None,
            coupling: None,
        };
        let rs = OwnerReference { kind: "ReplicaSet".into(), name: "rs".into(), ..Default::default() };
        let (level, note) = level_of(&f, Mode::Audit, Some(&rs));
        assert_eq!(level, Level::Warn);
        let note = note.unwrap();
        assert!(note.contains("enforce would deny") && note.contains("ReplicaSet rs is named"), "{note}");
        assert!(level_of(&f, Mode::Audit, None).1.unwrap().contains("enforce would deny"));
        assert_eq!(level_of(&f, Mode::Enforce, None).0, Level::Deny);
        // A file's owner does not relax the denial: whoever applies the file is not the controller.
        let (level, note) = level_of(&f, Mode::Enforce, Some(&rs));
        assert_eq!(level, Level::Deny);
        assert!(note.unwrap().contains("trusted controller"));
        // A patch in audit mode is still a fix (for --fail-on), with a note that the webhook makes
        // none (fresh user, s25: `check` showed plain fix lines under an audit override).
        let patch = vec![json_patch::PatchOperation::Remove(json_patch::RemoveOperation::default())];
        let m = Finding { action: Action::Mutate, patch, ..f.clone() };
        let (level, note) = level_of(&m, Mode::Audit, None);
        assert_eq!(level, Level::Fix);
        assert!(note.unwrap().contains("not patched by the webhook"));
        assert_eq!(level_of(&m, Mode::Enforce, None), (Level::Fix, None));
    }

    #[test]
    fn endless_input_is_an_error_not_exhausted_memory() {
        let e = read(&Input::Stdin, &mut std::io::repeat(b'a')).unwrap_err();
        assert!(e.contains("over 256 MiB"), "{e}");
        assert_eq!(read(&Input::Stdin, &mut "kind: Pod\n".as_bytes()).unwrap(), "kind: Pod\n");
    }

    #[test]
    fn values_are_redacted_names_kept() {
        assert_eq!(
            redact_values("invalid type: integer `12345`, expected a string"),
            "invalid type: integer `…`, expected a string"
        );
        assert_eq!(
            redact_values(r#"invalid type: string "hunter2", expected i32"#),
            r#"invalid type: string "…", expected i32"#
        );
        assert_eq!(
            redact_values("unknown variant `hunter2`, expected one of `A`, `B`; missing field `name`"),
            "unknown variant `…`, expected one of `A`, `B`; missing field `name`"
        );
        assert_eq!(
            redact_values("invalid type: floating point `1.5`, unterminated \"x"),
            "invalid type: floating point `…`, unterminated \"…"
        );
        // An escaped quote inside the value does not end the redaction.
        assert_eq!(
            redact_values(r#"invalid type: string "ab\"TOPSECRET", expected u16"#),
            r#"invalid type: string "…", expected u16"#
        );
    }
}
