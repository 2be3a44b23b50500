//! Unrendered Helm templates given as manifests: one clear error instead of YAML errors, or of
//! template text checked as if it were a value.

use super::{InputError, objects_of, workload_kind};
use crate::manifest::located::{Document, Node, NodeValue, Pos};

/// What every unrendered-template error says.
const MESSAGE: &str = "an unrendered Helm template (`{{ ... }}`), not a manifest: render the chart first, \
                       e.g. `helm template RELEASE CHART | probegate check -`";

/// One error for a Helm chart template given as a manifest, or `None`:
///
/// - a file with a document that does not parse and a `{{` action anywhere (the template would give
///   one YAML error per action, and no hint), placed at the first line with `{{`;
/// - a file that parses, with `{{` in a value where Kubernetes cannot take one (see
///   [`constrained_template`]: quoted, `"{{ .Values.image }}"` reads as a string; break-it pass
///   s22), placed at that value.
///
/// `{{` elsewhere is left alone: an annotation, a ConfigMap value, an env value or a command can
/// legitimately hold a Go template (Prometheus alert texts, `docker inspect --format '{{.Id}}'`).
pub(super) fn unrendered_template(file: &str, text: &str, documents: &[Document]) -> Option<InputError> {
    if !text.contains("{{") {
        return None;
    }
    let error = |line: usize, column: Option<usize>, detail: String| InputError {
        file: file.to_string(),
        line: u32::try_from(line).ok(),
        column: column.and_then(|c| u32::try_from(c).ok()),
        message: format!("{MESSAGE}{detail}"),
    };
    if documents.iter().any(|d| d.node.is_err()) {
        let (index, line) = text.lines().enumerate().find(|(_, l)| l.contains("{{"))?;
        let column = line.find("{{").map(|c| line[..c].chars().count() + 1);
        return Some(error(index + 1, column, String::new()));
    }
    documents.iter().filter_map(|d| d.node.as_ref().ok().and_then(Option::as_ref)).find_map(|root| {
        let (field, pos) = constrained_template(root)?;
        Some(error(
            pos.line as usize,
            Some(pos.column as usize).filter(|c| *c > 0),
            format!(" (`{field}` holds `{{{{`, which Kubernetes cannot take there)"),
        ))
    })
}

/// Fields of a container whose values are names, numbers or enumerations: a `{{` there cannot be
/// valid (an image reference, a DNS label, an IANA port name, an integer have no `{`).
const CONTAINER_FIELDS: [&str; 3] = ["name", "image", "imagePullPolicy"];

/// Fields of a container port.
const PORT_FIELDS: [&str; 4] = ["name", "containerPort", "hostPort", "protocol"];

/// Fields of a probe whose values are numbers.
const PROBE_FIELDS: [&str; 6] = [
    "initialDelaySeconds",
    "periodSeconds",
    "timeoutSeconds",
    "failureThreshold",
    "successThreshold",
    "terminationGracePeriodSeconds",
];

/// Fields of a pod spec whose values are names, numbers or enumerations.
const POD_FIELDS: [&str; 4] =
    ["serviceAccountName", "restartPolicy", "terminationGracePeriodSeconds", "priorityClassName"];

/// The first value (or label key) holding `{{` where Kubernetes cannot take it, with its field path
/// and position, in a document or its `kind: List` items: `apiVersion`, `kind`, `metadata.name`,
/// `generateName`, `namespace`, label keys and values (of the object and of its pod template); in
/// a workload's pod spec, [`POD_FIELDS`], and per container [`CONTAINER_FIELDS`], [`PORT_FIELDS`],
/// and per probe [`PROBE_FIELDS`] and its handler's `port` and `scheme`. Annotations, env values,
/// commands, arguments and every field of other kinds are not looked at.
fn constrained_template(root: &Node) -> Option<(String, Pos)> {
    let mut objects = objects_of(root);
    if objects.is_empty() {
        objects.push((String::new(), root));
    }
    for (pointer, object) in objects {
        let base = pointer.trim_start_matches('/').replace('/', ".");
        let mut c = Collect { found: None };
        let at = |p: &str| if base.is_empty() { p.to_string() } else { format!("{base}.{p}") };
        for field in ["apiVersion", "kind"] {
            c.value(&at(field), object.get(field));
        }
        c.metadata(object.get("metadata"), &at("metadata"));
        if let Some(kind) = workload_kind(object) {
            let tokens = kind.pod_spec_tokens();
            if let Some((_, template)) = tokens.split_last().filter(|_| !kind.is_pod()) {
                let meta = object.at(template.iter().copied()).and_then(|t| t.get("metadata"));
                c.metadata(meta, &at(&format!("{}.metadata", template.join("."))));
                c.value(&at("spec.replicas"), object.at(["spec", "replicas"]));
            }
            if let Some(spec) = object.at(tokens.iter().copied()) {
                c.pod_spec(spec, &at(&tokens.join(".")));
            }
        }
        if c.found.is_some() {
            return c.found;
        }
    }
    None
}

/// The first hit, in the order the fields are looked at.
struct Collect {
    found: Option<(String, Pos)>,
}

impl Collect {
    fn value(&mut self, field: &str, node: Option<&Node>) {
        if self.found.is_none()
            && let Some(n) = node
            && matches!(&n.value, NodeValue::String(s) if s.contains("{{"))
        {
            self.found = Some((field.to_string(), n.pos));
        }
    }

    fn fields(&mut self, node: &Node, path: &str, fields: &[&str]) {
        for f in fields {
            self.value(&format!("{path}.{f}"), node.get(f));
        }
    }

    fn metadata(&mut self, metadata: Option<&Node>, path: &str) {
        let Some(m) = metadata else { return };
        self.fields(m, path, &["name", "generateName", "namespace"]);
        if let Some(NodeValue::Map(labels)) = m.get("labels").map(|l| &l.value) {
            for (key, value) in labels {
                let field = format!("{path}.labels.{}", key.name);
                if self.found.is_none() && key.name.contains("{{") {
                    self.found = Some((field.clone(), key.pos));
                }
                self.value(&field, Some(value));
            }
        }
    }

    fn pod_spec(&mut self, spec: &Node, path: &str) {
        self.fields(spec, path, &POD_FIELDS);
        for list in ["initContainers", "containers", "ephemeralContainers"] {
            let Some(containers) = spec.get(list).and_then(Node::as_seq) else { continue };
            for (i, container) in containers.iter().enumerate() {
                let at = format!("{path}.{list}[{i}]");
                self.fields(container, &at, &CONTAINER_FIELDS);
                for (j, port) in
                    container.get("ports").and_then(Node::as_seq).unwrap_or_default().iter().enumerate()
                {
                    self.fields(port, &format!("{at}.ports[{j}]"), &PORT_FIELDS);
                }
                for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
                    let Some(p) = container.get(probe) else { continue };
                    let at = format!("{at}.{probe}");
                    self.fields(p, &at, &PROBE_FIELDS);
                    for handler in ["httpGet", "tcpSocket", "grpc"] {
                        if let Some(h) = p.get(handler) {
                            self.fields(h, &format!("{at}.{handler}"), &["port", "scheme"]);
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::unrendered_template;
    use crate::manifest::located::parse_file;

    fn error_of(text: &str) -> Option<(u32, String)> {
        unrendered_template("f.yaml", text, &parse_file(text)).map(|e| (e.line.unwrap_or(0), e.message))
    }

    #[test]
    fn a_quoted_template_where_kubernetes_takes_none_is_unrendered() {
        let deployment = |image: &str, annotation: &str| {
            format!(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  annotations:\n    note: {annotation}\nspec:\n  template:\n    spec:\n      containers:\n        - name: web\n          image: {image}\n          command: [sh, -c, \"docker inspect --format '{{{{.Id}}}}' x\"]\n"
            )
        };
        let (line, message) = error_of(&deployment("\"{{ .Values.image }}\"", "x")).unwrap();
        assert_eq!(line, 12);
        assert!(message.contains("spec.template.spec.containers[0].image"), "{message}");
        assert!(message.starts_with("an unrendered Helm template"), "{message}");
        // A template in an annotation or a command is a value: not refused.
        assert!(error_of(&deployment("nginx", "\"{{ $labels.instance }}\"")).is_none());
    }

    #[test]
    fn templates_in_names_labels_ports_and_list_items_are_found() {
        let pod = |field: &str| {
            format!(
                "apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: Pod\n    metadata:\n      name: p\n      labels: {{app: x}}\n    spec:\n      containers:\n        - name: c\n          image: x\n          livenessProbe:\n            httpGet: {{path: /, port: {field}}}\n"
            )
        };
        let (line, message) = error_of(&pod("\"{{ .Values.port }}\"")).unwrap();
        assert_eq!(line, 14);
        assert!(message.contains("items.0.spec.containers[0].livenessProbe.httpGet.port"), "{message}");
        assert!(error_of(&pod("8080")).is_none());
        let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels: {\"{{ .k }}\": v}\ndata:\n  t: \"{{ .x }}\"\n";
        let (line, message) = error_of(cm).unwrap();
        assert_eq!(line, 5);
        assert!(message.contains("metadata.labels.{{ .k }}"), "{message}");
        assert!(error_of(&cm.replace("\"{{ .k }}\"", "k")).is_none(), "a ConfigMap value is a value");
    }
}
