//! What `fix` shows rather than writes: the `--diff` view, with env values and credentials
//! redacted, and the lines on standard error about what it did not change and what is left to a
//! person. The fixed files themselves (standard output, `--in-place`) keep every value.

use std::ops::Range;

use super::input::{self, Level};
use crate::engine::exec::{redact_argv, redact_secrets};
use crate::engine::redact_host;
use crate::manifest::located::{self, Node, NodeValue};

/// What replaces a value shown redacted (as the engine's messages write it).
const REDACTED: &str = "***";

/// `text` as `--diff` shows it: every env entry's `value` and every `httpHeaders` value as `***`,
/// and in `command` and `args` lists (exec probes and hooks, container commands) the credentials
/// the engine's messages redact ([`redact_argv`]: `-pS3cret` is `-p***`), an `httpGet.path` as
/// [`redact_secrets`] shows it (`?token=***`), a probe `host`'s user info as [`redact_host`] shows it
/// (`u:***@db`). Everything else, and the number of lines, is kept,
/// so that the diff's line numbers are the file's. A document that does not parse is shown as it
/// is (`fix` leaves such a file alone, so it is never diffed).
pub(super) fn redact_for_display(text: &str) -> (String, usize) {
    let mut edits = Vec::new();
    for doc in located::parse_file(text) {
        if let Ok(Some(root)) = &doc.node {
            stored_values(text, root, &mut edits);
            collect(text, root, &mut edits);
        }
    }
    edits.sort_by_key(|(r, _)| r.start);
    let mut out = String::with_capacity(text.len());
    let (mut at, mut count) = (0, 0);
    for (range, replacement) in edits {
        // Nested or overlapping spans (never expected): the first one wins.
        if range.start < at || range.end > text.len() {
            continue;
        }
        out.push_str(&text[at..range.start]);
        out.push_str(&replacement);
        at = range.end;
        count += 1;
    }
    out.push_str(&text[at..]);
    (out, count)
}

/// A Secret's or a ConfigMap's stored values (`data`, `stringData`, `binaryData`), masked: `fix`
/// never changes them, but a diff's context lines can reach them from the workload beside them in
/// the same file (stop 33 fresh-user pass), and either can hold a credential.
fn stored_values(text: &str, root: &Node, edits: &mut Vec<(Range<usize>, String)>) {
    let kind = root.get("kind").and_then(scalar_text);
    if !matches!(kind.as_deref(), Some("Secret" | "ConfigMap")) {
        return;
    }
    for field in ["data", "stringData", "binaryData"] {
        if let Some(NodeValue::Map(entries)) = root.get(field).map(|n| &n.value) {
            for (_, value) in entries.iter().filter(|(_, v)| scalar_text(v).is_some()) {
                edits.extend(span(text, value).map(|r| (r.clone(), masked(&text[r]))));
            }
        }
    }
}

/// A scalar's span in `text`, trailing blanks and line ends excluded.
fn span(text: &str, node: &Node) -> Option<Range<usize>> {
    let start = node.pos.offset;
    let end = (start + node.pos.len).min(text.len());
    let raw = text.get(start..end)?;
    (node.pos.line > 0 && !raw.trim().is_empty()).then(|| start..start + raw.trim_end().len())
}

/// `***` in place of a whole value, one per line it spans (its line ends and each line's
/// indentation kept, so a block scalar still reads as one).
fn masked(raw: &str) -> String {
    raw.split('\n')
        .map(|line| match line.trim() {
            "" => String::new(),
            _ => format!("{}{REDACTED}", &line[..line.len() - line.trim_start().len()]),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The edit that shows `node` (whose value is `value`) as `shown`: each word that differs replaced
/// in the text as written; the whole value masked when a word is not found as written (an escape
/// in a quoted scalar).
fn reword(text: &str, node: &Node, value: &str, shown: &str) -> Option<(Range<usize>, String)> {
    let range = span(text, node)?;
    let raw = &text[range.clone()];
    let (old, new): (Vec<&str>, Vec<&str>) =
        (value.split_whitespace().collect(), shown.split_whitespace().collect());
    if old.len() == new.len() {
        let mut out = raw.to_string();
        let mut ok = true;
        for (o, n) in old.iter().zip(&new).filter(|(o, n)| o != n) {
            if out.contains(o) {
                out = out.replace(o, n);
            } else {
                ok = false;
            }
        }
        if ok {
            return Some((range, out));
        }
    }
    Some((range.clone(), masked(raw)))
}

fn scalar_text(node: &Node) -> Option<String> {
    match &node.value {
        NodeValue::String(s) => Some(s.clone()),
        NodeValue::Number(n) => Some(n.to_string()),
        NodeValue::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The redactions under `node`.
fn collect(text: &str, node: &Node, edits: &mut Vec<(Range<usize>, String)>) {
    match &node.value {
        NodeValue::Seq(items) => items.iter().for_each(|n| collect(text, n, edits)),
        NodeValue::Map(entries) => {
            for (key, value) in entries {
                match (key.name.as_str(), &value.value) {
                    // Env entries and HTTP headers: every `value`, whatever its name says.
                    ("env" | "httpHeaders", NodeValue::Seq(items)) => {
                        for item in items {
                            if let Some(v) = item.get("value").filter(|v| scalar_text(v).is_some()) {
                                edits.extend(span(text, v).map(|r| (r.clone(), masked(&text[r]))));
                            }
                        }
                    }
                    ("command" | "args", NodeValue::Seq(items)) => {
                        let argv: Vec<String> =
                            items.iter().map(|n| scalar_text(n).unwrap_or_default()).collect();
                        for ((item, word), shown) in items.iter().zip(&argv).zip(redact_argv(&argv)) {
                            if *word != shown {
                                edits.extend(reword(text, item, word, &shown));
                            }
                        }
                    }
                    ("path", NodeValue::String(path)) => {
                        let shown = redact_secrets(path);
                        if shown != *path {
                            edits.extend(reword(text, value, path, &shown));
                        }
                    }
                    // A probe's `httpGet.host` or `tcpSocket.host` with user info (`u:pw@db`), as
                    // `check` names it (break-it pass, s21: the password was in `--diff` only).
                    ("host", NodeValue::String(host)) => {
                        let shown = redact_host(host);
                        if shown != *host {
                            edits.extend(reword(text, value, host, &shown));
                        }
                    }
                    _ => collect(text, value, edits),
                }
            }
        }
        _ => {}
    }
}

/// What `fix` leaves as it is although the policy has the rule mutate: the findings of a
/// `mutate` rule with no patch (a timeout its period leaves no room to raise, a startup probe that
/// would copy a liveness check `liveness-dependency` flags, ...), each as
/// `FILE:LINE: KIND NS/NAME: not changed: container NAME: MESSAGE (RULE-ID)`, so that the diff's
/// silence is explained (fresh-user pass).
pub(super) fn not_fixed(files: &[input::FileAnalysis]) -> Vec<String> {
    let mut out = Vec::new();
    for f in files {
        let name = f.input.name();
        for o in &f.objects {
            for r in o.findings.iter().filter(|r| not_changed(o, r)) {
                out.push(
                    crate::engine::display_safe(&format!(
                        "{name}:{}: {} {}/{}: not changed: {}",
                        r.container_line.unwrap_or(o.line),
                        o.kind.as_str(),
                        o.namespace,
                        o.name,
                        r.finding.describe()
                    ))
                    .into_owned(),
                );
            }
        }
    }
    out
}

/// A finding of a rule the policy has mutate that comes without a patch: [`not_fixed`] notes it.
fn not_changed(o: &input::Checked, r: &input::Reported) -> bool {
    let rule = r.finding.rule;
    rule.fixable()
        && r.finding.patch.is_empty()
        && o.evaluation.effective.rules.action(rule) == crate::policy::Action::Mutate
}

/// The findings `fix` leaves as they are, at the level `check` gives them (every level but
/// `fix`), each with `FILE:LINE: LEVEL KIND NS/NAME: container NAME: MESSAGE (RULE-ID)`; the line
/// is empty for one [`not_fixed`] already notes.
pub(super) fn left_to_you(files: &[input::FileAnalysis]) -> Vec<(Level, String)> {
    let mut out = Vec::new();
    for f in files {
        let name = f.input.name();
        for o in &f.objects {
            for r in o.findings.iter().filter(|r| r.level != Level::Fix) {
                if not_changed(o, r) {
                    out.push((r.level, String::new()));
                    continue;
                }
                let line = format!(
                    "{name}:{}: {} {} {}/{}: {}",
                    r.container_line.unwrap_or(o.line),
                    r.level.as_str(),
                    o.kind.as_str(),
                    o.namespace,
                    o.name,
                    r.finding.describe()
                );
                out.push((r.level, crate::engine::display_safe(&line).into_owned()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::redact_for_display;

    #[test]
    fn env_values_and_credentials_are_shown_redacted_on_the_same_lines() {
        let text = "spec:\n  containers:\n  - name: m\n    env:\n    - name: MYSQL_ROOT_PASSWORD\n      value: S3cret\n    - {name: B, value: \"two\\nlines\"}\n    - name: C\n      value: |\n        x\n        y\n    livenessProbe:\n      exec:\n        command: [mysqladmin, -uroot, -pS3cret, ping]\n    startupProbe:\n      exec:\n        command:\n        - sh\n        - -c\n        - |\n          mysqladmin -uroot -pS3cret ping\n      httpGet: {path: '/h?token=tok-1', port: 80, httpHeaders: [{name: Authorization, value: Bearer t0k}]}\n";
        let (shown, n) = redact_for_display(text);
        for secret in ["S3cret", "two", "lines", "tok-1", "t0k", "\n        x", "y\n"] {
            assert!(!shown.contains(secret), "{secret}: {shown}");
        }
        assert_eq!(shown.lines().count(), text.lines().count(), "{shown}");
        assert!(shown.contains("command: [mysqladmin, -uroot, -p***, ping]"), "{shown}");
        assert!(shown.contains("          mysqladmin -uroot -p*** ping\n"), "{shown}");
        assert!(shown.contains("value: ***\n"), "{shown}");
        assert!(shown.contains("- name: MYSQL_ROOT_PASSWORD\n"), "{shown}");
        assert!(shown.contains("path: '/h?token=***'"), "{shown}");
        assert_eq!(n, 7, "{shown}");
        // Nothing to redact: the text as it is.
        let plain =
            "spec:\n  containers:\n  - name: w\n    livenessProbe: {httpGet: {path: /healthz, port: 8080}}\n";
        assert_eq!(redact_for_display(plain), (plain.to_string(), 0));
    }

    #[test]
    fn stored_values_of_secrets_and_config_maps_are_masked_and_other_kinds_kept() {
        let text = "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\nstringData:\n  password: S3cret\n  url: \"postgres://u:pw1@db/x\"\ndata:\n  token: dG9rZW4=\n---\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  check.sh: |\n    mysqladmin -uroot -ppw2 ping\n    exit 0\n  plain: pw3\nbinaryData:\n  blob: YmxvYg==\n---\nkind: Deployment\nmetadata: {name: data}\ndata:\n  kept: visible\n";
        let (shown, n) = redact_for_display(text);
        for secret in ["S3cret", "pw1", "dG9rZW4=", "pw2", "exit 0", "pw3", "YmxvYg=="] {
            assert!(!shown.contains(secret), "{secret}: {shown}");
        }
        assert_eq!(shown.lines().count(), text.lines().count(), "{shown}");
        assert!(shown.contains("  password: ***\n"), "{shown}");
        assert!(shown.contains("  check.sh: |\n    ***\n    ***\n"), "{shown}");
        // Keys stay, so the reader knows what is there; another kind's `data` is its own business.
        assert!(shown.contains("  kept: visible\n"), "{shown}");
        assert_eq!(n, 6, "{shown}");
    }

    #[test]
    fn a_probe_host_with_user_info_is_shown_without_its_password() {
        let text = "spec:\n  containers:\n  - name: app\n    readinessProbe:\n      httpGet: {path: /ready, port: 8080, host: \"user:S3KRETb7@other.svc\"}\n    livenessProbe:\n      tcpSocket:\n        host: tok3n@db.svc\n        port: 5432\n    startupProbe: {httpGet: {host: other.svc, port: 80}}\n";
        let (shown, n) = redact_for_display(text);
        for secret in ["S3KRETb7", "tok3n"] {
            assert!(!shown.contains(secret), "{secret}: {shown}");
        }
        assert!(shown.contains("host: \"user:***@other.svc\"}"), "{shown}");
        assert!(shown.contains("        host: ***@db.svc\n"), "{shown}");
        // A host without user info is the file's.
        assert!(shown.contains("{httpGet: {host: other.svc, port: 80}}"), "{shown}");
        assert_eq!(n, 2, "{shown}");
    }
}
