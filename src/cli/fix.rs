//! `probegate fix [--policy FILE] [--namespace NS] [--in-place | --diff] [--fail-on LEVEL] PATH...`: applies the
//! `mutate` rules' patches (the findings `check` reports at level `fix`) to Pods and to the pod
//! templates of controllers in manifest files.
//!
//! How the files are changed, in order of preference, per YAML document:
//! 1. **Documents without a fix come out byte for byte as they were**, comments and all.
//! 2. **Text edits**: each patch operation becomes an edit of the document's text at the positions
//!    the YAML parser reported: a member added at the end of its mapping with the mapping's
//!    indentation (block style) or after its last entry (flow style and JSON), a scalar replaced in
//!    place, a `key: value` line removed. Comments, key order, quoting and layout of everything else
//!    are kept. The edited document is parsed again and must equal the original with the patch
//!    applied (RFC 6902, `json-patch`); otherwise:
//! 3. **Re-serialization** of that one document from its parsed tree, in its original key order
//!    (YAML through serde-saphyr, JSON through serde_json): its comments (but those above it),
//!    quoting style, flow style and anchors are lost. Reported on standard error.
//!
//! Added members are written in block style (YAML) or compact JSON, with their keys sorted; in a
//! flow mapping the added member is plain YAML or JSON as the mapping's last key is.

use std::io::{Read, Write};
use std::path::PathBuf;

use json_patch::PatchOperation;
use serde_json::Value;

use super::input::{self, FileAnalysis, Input, InputError, Level};
use super::{EXIT_BAD_INPUT, EXIT_FINDINGS, EXIT_OK};
use crate::manifest::located::{self, Document, Key, Node, NodeValue, Pos};

mod shown;
use shown::{left_to_you, not_fixed};

/// Where `fix` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FixOutput {
    /// The fixed files to standard output, one after the other (separated by `---` lines when there
    /// are several).
    Stdout,
    /// Back to each file that changed.
    InPlace,
    /// A unified diff of each file that changed.
    Diff,
}

/// The options of `probegate fix`.
#[derive(Clone, Debug)]
pub struct FixOptions {
    /// Policy file; `None` for the embedded default.
    pub policy: Option<PathBuf>,
    /// Namespace for objects without `metadata.namespace`.
    pub namespace: Option<String>,
    /// Where the result goes.
    pub output: FixOutput,
    /// Lowest level of a finding left after the fix (one `fix` cannot change, at the level `check`
    /// gives it) that makes the exit code 1, as `check --fail-on` (default `deny`).
    pub fail_on: Level,
}

/// One input, fixed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FixedFile {
    /// The new text (the original when nothing changed).
    pub text: String,
    /// Objects changed.
    pub objects: usize,
    /// Patch operations applied.
    pub operations: usize,
    /// Lines of the documents that had to be re-serialized (their comments are lost).
    pub reserialized: Vec<u32>,
}

/// Fixes one analyzed input.
///
/// # Errors
/// An [`InputError`] when a patch does not apply to its document (a bug: patches are built against
/// the object as read) or an edited document cannot be re-read.
pub fn fix_file(analysis: &FileAnalysis) -> Result<FixedFile, InputError> {
    let text = &analysis.text;
    let file = analysis.input.name();
    let mut fixed = FixedFile { text: String::new(), objects: 0, operations: 0, reserialized: Vec::new() };
    let mut out = String::with_capacity(text.len() + 256);
    let mut cursor = 0;
    // The objects of each document, found in one pass: filtering every object for each document
    // made a file of many documents quadratic (16 MB of Deployments: 54 s, break-it pass s22).
    let mut by_document: Vec<Vec<&input::Checked>> = vec![Vec::new(); analysis.documents.len()];
    for o in &analysis.objects {
        if let Some(list) = by_document.get_mut(o.document) {
            list.push(o);
        }
    }
    for (index, doc) in analysis.documents.iter().enumerate() {
        let Ok(Some(root)) = &doc.node else { continue };
        let mut ops: Vec<PatchOperation> = Vec::new();
        for o in by_document[index].iter().copied() {
            let before = ops.len();
            for r in o.findings.iter().filter(|r| r.level == Level::Fix) {
                for op in &r.finding.patch {
                    ops.push(prefixed(op, &o.pointer));
                }
            }
            if ops.len() > before {
                fixed.objects += 1;
            }
        }
        if ops.is_empty() {
            continue;
        }
        let ops: Vec<PatchOperation> = ops.into_iter().map(without_probe_defaults).collect();
        let error = |message: String| InputError {
            file: file.clone(),
            line: Some(root.pos.line),
            column: None,
            message,
        };
        let mut expected = root.to_value();
        json_patch::patch(&mut expected, &ops).map_err(|e| error(format!("patch does not apply: {e}")))?;
        let new_doc = match edit_document(text, doc, root, &ops) {
            Some(t) if reparses_to(&t, doc, &expected) => t,
            _ => {
                let t = reserialize(text, doc, root, &ops)
                    .ok_or_else(|| error("cannot apply the patch to the document".into()))?;
                if !reparses_to(&t, doc, &expected) {
                    return Err(error("the re-serialized document does not read back as patched".into()));
                }
                fixed.reserialized.push(root.pos.line);
                t
            }
        };
        // A file without a final line end keeps it so (break-it pass s22: `fix` added one).
        let new_doc = if doc.range.end == text.len() && !text.ends_with('\n') {
            let trimmed =
                new_doc.strip_suffix('\n').map_or(new_doc.as_str(), |t| t.strip_suffix('\r').unwrap_or(t));
            trimmed.to_string()
        } else {
            new_doc
        };
        fixed.operations += ops.len();
        out.push_str(&text[cursor..doc.range.start]);
        out.push_str(&new_doc);
        cursor = doc.range.end;
    }
    out.push_str(&text[cursor..]);
    fixed.text = out;
    Ok(fixed)
}

/// A probe added by a patch (`startupProbe`) without the members that only spell out the
/// Kubernetes defaults (`initialDelaySeconds: 0`, `successThreshold: 1`, `httpGet.scheme: HTTP`;
/// API reference, Probe and HTTPGetAction): the file says what differs from them. The webhook's
/// own patches are unchanged.
fn without_probe_defaults(op: PatchOperation) -> PatchOperation {
    let PatchOperation::Add(mut add) = op else { return op };
    let is_probe = add.path.to_string().ends_with("Probe");
    if let (true, Value::Object(probe)) = (is_probe, &mut add.value) {
        if probe.get("initialDelaySeconds") == Some(&Value::from(0)) {
            probe.remove("initialDelaySeconds");
        }
        if probe.get("successThreshold") == Some(&Value::from(1)) {
            probe.remove("successThreshold");
        }
        if let Some(Value::Object(get)) = probe.get_mut("httpGet")
            && get.get("scheme") == Some(&Value::from("HTTP"))
        {
            get.remove("scheme");
        }
    }
    PatchOperation::Add(add)
}

/// An operation with `pointer` (the object's place in its document) put before its path.
fn prefixed(op: &PatchOperation, pointer: &str) -> PatchOperation {
    if pointer.is_empty() {
        return op.clone();
    }
    let mut value = serde_json::to_value(op).unwrap_or(Value::Null);
    for field in ["path", "from"] {
        if let Some(Value::String(p)) = value.get_mut(field) {
            *p = format!("{pointer}{p}");
        }
    }
    serde_json::from_value(value).unwrap_or_else(|_| op.clone())
}

fn reparses_to(new_doc: &str, doc: &Document, expected: &Value) -> bool {
    matches!(
        located::parse_document_at(new_doc, doc.range.start, doc.first_line),
        Ok(Some(n)) if n.to_value() == *expected
    )
}

/// The decoded tokens of an operation's path, and the operation's kind and value.
enum Op<'a> {
    Add(Vec<String>, &'a Value),
    Remove(Vec<String>),
}

fn decode(op: &PatchOperation) -> Option<Op<'_>> {
    let tokens = |p: &jsonptr::Pointer| p.tokens().map(|t| t.decoded().into_owned()).collect::<Vec<_>>();
    match op {
        PatchOperation::Add(a) => Some(Op::Add(tokens(&a.path), &a.value)),
        PatchOperation::Replace(r) => Some(Op::Add(tokens(&r.path), &r.value)),
        PatchOperation::Remove(r) => Some(Op::Remove(tokens(&r.path))),
        _ => None,
    }
}

// === text edits ===

struct Edit {
    start: usize,
    end: usize,
    text: String,
}

fn line_start(text: &str, offset: usize) -> usize {
    text[..offset].rfind('\n').map_or(0, |i| i + 1)
}

/// Offset just past the end of the line holding `offset` (its newline included).
fn line_end(text: &str, offset: usize) -> usize {
    text[offset..].find('\n').map_or(text.len(), |i| offset + i + 1)
}

fn is_flow(text: &str, node: &Node) -> bool {
    text.get(node.pos.offset..).is_some_and(|t| t.starts_with('{') || t.starts_with('['))
}

/// A scalar as YAML/JSON text on one line (numbers and booleans as JSON; strings JSON-quoted, which
/// YAML reads the same).
fn inline(value: &Value) -> Option<String> {
    match value {
        Value::Object(_) | Value::Array(_) => None,
        v => serde_json::to_string(v).ok(),
    }
}

/// A key as plain YAML when that is safe, else JSON-quoted.
fn yaml_key(key: &str) -> String {
    let plain = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c));
    if plain { key.to_string() } else { serde_json::to_string(key).unwrap_or_default() }
}

/// `value` as a YAML flow node on one line, keys plain where [`yaml_key`] allows (`{preStop: {sleep:
/// {seconds: 5}}}`), scalars as JSON (which YAML reads the same).
fn flow_yaml(value: &Value) -> Option<String> {
    match value {
        Value::Object(o) => {
            let members: Option<Vec<String>> =
                o.iter().map(|(k, v)| Some(format!("{}: {}", yaml_key(k), flow_yaml(v)?))).collect();
            Some(format!("{{{}}}", members?.join(", ")))
        }
        Value::Array(a) => {
            let items: Option<Vec<String>> = a.iter().map(flow_yaml).collect();
            Some(format!("[{}]", items?.join(", ")))
        }
        v => inline(v),
    }
}

/// `key: value` in block style at `indent`, ending with a newline.
fn block_member(key: &str, value: &Value, indent: &str) -> Option<String> {
    let key = yaml_key(key);
    if let Some(scalar) = inline(value) {
        return Some(format!("{indent}{key}: {scalar}\n"));
    }
    let empty =
        matches!(value, Value::Object(o) if o.is_empty()) || matches!(value, Value::Array(a) if a.is_empty());
    if empty {
        return Some(format!("{indent}{key}: {}\n", serde_json::to_string(value).ok()?));
    }
    let body = serde_saphyr::to_string(value).ok()?;
    let mut s = format!("{indent}{key}:\n");
    for line in body.lines() {
        if line.is_empty() {
            s.push('\n');
        } else {
            s.push_str(&format!("{indent}  {line}\n"));
        }
    }
    Some(s)
}

/// Skips blanks, newlines and comments from `offset`.
fn skip_blank(text: &str, mut offset: usize) -> usize {
    let bytes = text.as_bytes();
    while offset < bytes.len() {
        match bytes[offset] {
            b' ' | b'\t' | b'\r' | b'\n' => offset += 1,
            b'#' => offset = line_end(text, offset),
            _ => break,
        }
    }
    offset
}

/// The offset just past a node's text: its last scalar or key, and the closing brackets of the flow
/// collections it is in (a trailing comma allowed), or `None` when the text is not as expected.
fn text_end(text: &str, node: &Node) -> Option<usize> {
    let flow = is_flow(text, node);
    let inner = match &node.value {
        NodeValue::Map(entries) => match entries.last() {
            Some((k, v)) => Some(text_end(text, v)?.max(k.pos.offset + k.pos.len)),
            None => None,
        },
        NodeValue::Seq(items) => match items.last() {
            Some(v) => Some(text_end(text, v)?),
            None => None,
        },
        _ => return Some(node.end(text)),
    };
    if !flow {
        return inner;
    }
    let mut offset = skip_blank(text, inner.unwrap_or(node.pos.offset + 1));
    if inner.is_some() && text.as_bytes().get(offset) == Some(&b',') {
        offset = skip_blank(text, offset + 1);
    }
    match text.as_bytes().get(offset) {
        Some(b'}' | b']') => Some(offset + 1),
        _ => None,
    }
}

fn add_member(text: &str, map: &Node, entries: &[(Key, Node)], key: &str, value: &Value) -> Option<Edit> {
    if is_flow(text, map) {
        let json = serde_json::to_string(value).ok()?;
        // The key in the style of the mapping's own: JSON-quoted when its last key is quoted (JSON,
        // or YAML written so), else plain where plain YAML reads it the same
        // (`livenessProbe: {exec: ..., periodSeconds: 10, timeoutSeconds: 3}`).
        let quoted_keys = match entries.last() {
            Some((k, _)) => matches!(text.as_bytes().get(k.pos.offset), Some(b'"' | b'\'')),
            None => true,
        };
        let quoted = if quoted_keys { serde_json::to_string(key).ok()? } else { yaml_key(key) };
        let json = if quoted_keys { json } else { flow_yaml(value)? };
        let Some((last_key, last_value)) = entries.last() else {
            let at = map.pos.offset + 1;
            return Some(Edit { start: at, end: at, text: format!("{quoted}: {json}") });
        };
        let at = text_end(text, last_value)?;
        let multiline = line_start(text, last_key.pos.offset) != line_start(text, map.pos.offset);
        let sep = if multiline {
            let ls = line_start(text, last_key.pos.offset);
            format!(",\n{}", &text[ls..last_key.pos.offset])
        } else {
            ", ".to_string()
        };
        return Some(Edit { start: at, end: at, text: format!("{sep}{quoted}: {json}") });
    }
    // Block style: after the line where the mapping's last value ends, at the column of its keys.
    if entries.is_empty() || map.pos.column == 0 {
        return None;
    }
    let indent = " ".repeat(map.pos.column as usize - 1);
    let ls = line_start(text, map.pos.offset);
    // The mapping's first key must sit at its column after spaces or `- ` sequence markers.
    if !text[ls..map.pos.offset].chars().all(|c| c == ' ' || c == '-') {
        return None;
    }
    let mut at = text_end(text, map)?;
    let bytes = text.as_bytes();
    while at < bytes.len() && matches!(bytes[at], b' ' | b'\t' | b'\r') {
        at += 1;
    }
    if at < bytes.len() && bytes[at] == b'#' {
        at = line_end(text, at);
    } else if at < bytes.len() && bytes[at] == b'\n' {
        at += 1;
    } else if at < bytes.len() {
        return None;
    }
    let mut member = block_member(key, value, &indent)?;
    if at == text.len() && !text.ends_with('\n') {
        member.insert(0, '\n');
    }
    Some(Edit { start: at, end: at, text: member })
}

fn remove_member(text: &str, map: &Node, key: &Key, value: &Node) -> Option<Edit> {
    if !matches!(
        value.value,
        NodeValue::Null | NodeValue::Bool(_) | NodeValue::Number(_) | NodeValue::String(_)
    ) {
        return None;
    }
    let value_end = value.end(text);
    if is_flow(text, map) {
        let mut end = skip_blank(text, value_end);
        if text.as_bytes().get(end) == Some(&b',') {
            end = skip_blank(text, end + 1);
            return Some(Edit { start: key.pos.offset, end, text: String::new() });
        }
        // The last entry: remove the comma before it.
        let before = text[..key.pos.offset].trim_end();
        let start = before.strip_suffix(',').map(str::len)?;
        return Some(Edit { start, end: value_end, text: String::new() });
    }
    let ls = line_start(text, key.pos.offset);
    if !text[ls..key.pos.offset].chars().all(|c| c == ' ') || line_start(text, value_end) != ls {
        return None;
    }
    let rest = text[value_end..line_end(text, value_end)].trim();
    if !(rest.is_empty() || rest.starts_with('#')) {
        return None;
    }
    Some(Edit { start: ls, end: line_end(text, value_end), text: String::new() })
}

/// The document's new text from edits at parser positions, or `None` when an operation has no
/// safe text edit.
fn edit_document(text: &str, doc: &Document, root: &Node, ops: &[PatchOperation]) -> Option<String> {
    let mut edits = Vec::new();
    for op in ops {
        let edit = match decode(op)? {
            Op::Add(tokens, value) => {
                let (last, parent) = tokens.split_last()?;
                let map = root.at(parent.iter().map(String::as_str))?;
                let NodeValue::Map(entries) = &map.value else { return None };
                match entries.iter().find(|(k, _)| k.name == *last) {
                    Some((_, existing)) => {
                        let scalar = inline(value)?;
                        if matches!(existing.value, NodeValue::Map(_) | NodeValue::Seq(_))
                            || existing.pos.len == 0
                        {
                            return None;
                        }
                        Edit {
                            start: existing.pos.offset,
                            end: existing.pos.offset + existing.pos.len,
                            text: scalar,
                        }
                    }
                    None => add_member(text, map, entries, last, value)?,
                }
            }
            Op::Remove(tokens) => {
                let (last, parent) = tokens.split_last()?;
                let map = root.at(parent.iter().map(String::as_str))?;
                let NodeValue::Map(entries) = &map.value else { return None };
                let (key, value) = entries.iter().find(|(k, _)| k.name == *last)?;
                remove_member(text, map, key, value)?
            }
        };
        edits.push(edit);
    }
    // Stable by position: insertions at one place keep the operations' order, except that a
    // deeper-indented block member goes first (a preStop added to a container's last member,
    // `lifecycle:`, belongs before a member added to the container itself, e.g. `startupProbe:`).
    let indent =
        |e: &Edit| if e.start == e.end { e.text.len() - e.text.trim_start_matches(' ').len() } else { 0 };
    edits.sort_by_key(|e| (e.start, std::cmp::Reverse(indent(e))));
    // Members added at the end of a text without a final line end each start with one (see
    // [`add_member`]): only the first may, or a blank line would part them (break-it pass s22).
    if !text.ends_with('\n') {
        let mut first = true;
        for e in edits.iter_mut().filter(|e| e.start == text.len() && e.end == text.len()) {
            if !first && let Some(rest) = e.text.strip_prefix('\n') {
                e.text = rest.to_string();
            }
            first = false;
        }
    }
    // A CRLF document gets CRLF lines.
    if text[doc.range.clone()].contains("\r\n") {
        for e in &mut edits {
            e.text = e.text.replace("\r\n", "\n").replace('\n', "\r\n");
        }
    }
    let mut out = String::new();
    let mut cursor = doc.range.start;
    for e in &edits {
        if e.start < cursor || e.end > doc.range.end {
            return None;
        }
        out.push_str(&text[cursor..e.start]);
        out.push_str(&e.text);
        cursor = e.end;
    }
    out.push_str(&text[cursor..doc.range.end]);
    Some(out)
}

// === re-serialization ===

fn apply_to_tree(root: &mut Node, op: &PatchOperation) -> Option<()> {
    match decode(op)? {
        Op::Add(tokens, value) => {
            let (last, parent) = tokens.split_last()?;
            let parent = root.at_mut(parent.iter().map(String::as_str))?;
            match &mut parent.value {
                NodeValue::Map(entries) => match entries.iter_mut().find(|(k, _)| k.name == *last) {
                    Some((_, v)) => *v = Node::from_value(value),
                    None => entries
                        .push((Key { name: last.clone(), pos: Pos::default() }, Node::from_value(value))),
                },
                NodeValue::Seq(items) => {
                    let index = if last == "-" { items.len() } else { last.parse().ok()? };
                    if index > items.len() {
                        return None;
                    }
                    items.insert(index, Node::from_value(value));
                }
                _ => return None,
            }
        }
        Op::Remove(tokens) => {
            let (last, parent) = tokens.split_last()?;
            let parent = root.at_mut(parent.iter().map(String::as_str))?;
            match &mut parent.value {
                NodeValue::Map(entries) => {
                    let i = entries.iter().position(|(k, _)| k.name == *last)?;
                    entries.remove(i);
                }
                NodeValue::Seq(items) => {
                    let i: usize = last.parse().ok()?;
                    (i < items.len()).then(|| items.remove(i))?;
                }
                _ => return None,
            }
        }
    }
    Some(())
}

/// The document written anew from its tree with the operations applied, after the comments and
/// `---` line above it.
fn reserialize(text: &str, doc: &Document, root: &Node, ops: &[PatchOperation]) -> Option<String> {
    let mut tree = root.clone();
    for op in ops {
        apply_to_tree(&mut tree, op)?;
    }
    let start = line_start(text, root.pos.offset).max(doc.range.start);
    let mut prefix = text[doc.range.start..start].to_string();
    let on_marker_line = text[start..root.pos.offset].trim_start().starts_with("---");
    if on_marker_line {
        prefix.push_str("---\n");
    }
    let body = if is_flow(text, root) {
        serde_json::to_string_pretty(&tree).ok()? + "\n"
    } else {
        serde_saphyr::to_string(&tree).ok()?
    };
    Some(prefix + &body)
}

// === the command ===

/// Runs `fix`; returns the exit code: 0; 1 when a finding `fix` cannot change is left at or
/// above `opts.fail_on` (a denial, by default); 2 when an input could not be read or fixed (2
/// wins over 1).
pub fn run(
    opts: &FixOptions,
    paths: &[PathBuf],
    stdin: &mut dyn Read,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    run_skipping(opts, &[], paths, stdin, out, err)
}

/// [`run`], with `skip` rules turned off everywhere in the policy (`--skip RULE`).
pub fn run_skipping(
    opts: &FixOptions,
    skip: &[crate::policy::RuleId],
    paths: &[PathBuf],
    stdin: &mut dyn Read,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let (policy, _, _) = match super::load_policy_skipping(opts.policy.as_deref(), skip) {
        Ok(p) => p,
        Err(e) => {
            let _ = writeln!(err, "probegate: invalid policy: {e}");
            return EXIT_BAD_INPUT;
        }
    };
    if opts.output == FixOutput::InPlace && paths.iter().any(|p| p.as_os_str() == "-") {
        let _ = writeln!(err, "probegate: --in-place cannot write back to standard input");
        return EXIT_BAD_INPUT;
    }
    let namespace = opts.namespace.as_deref().unwrap_or(super::check::DEFAULT_NAMESPACE);
    let (files, mut errors, skipped) =
        input::analyze_all(&policy, paths, stdin, namespace, input::Keep::Sources);
    for note in input::skipped_notes(&skipped) {
        let _ = writeln!(err, "probegate: note: {note}");
    }
    let mut code = EXIT_OK;
    let (mut changed_files, mut changed_objects, mut redacted) = (0, 0, 0);
    let (mut first, mut open_line) = (true, false);
    for analysis in &files {
        let name = analysis.input.name();
        errors.extend(analysis.errors.iter().cloned());
        // A file with a YAML error is left alone: fixing around a broken document would hide it.
        let fixed = if analysis.errors.is_empty() {
            match fix_file(analysis) {
                Ok(f) => Some(f),
                Err(e) => {
                    errors.push(e);
                    None
                }
            }
        } else {
            None
        };
        let new_text = fixed.as_ref().map_or(analysis.text.as_str(), |f| f.text.as_str());
        if let Some(f) = &fixed {
            for line in &f.reserialized {
                let _ = writeln!(
                    err,
                    "probegate: {name}:{line}: document re-serialized (its comments and formatting are not kept)"
                );
            }
            if f.objects > 0 {
                changed_files += 1;
                changed_objects += f.objects;
            }
        }
        let changed = new_text != analysis.text;
        let written = match opts.output {
            FixOutput::Stdout => {
                // A file's own ending is kept; a line end goes between it and the next file only.
                let mut w = Ok(());
                if !first && !analysis.text.is_empty() {
                    if open_line {
                        w = out.write_all(b"\n");
                    }
                    if !new_text.starts_with("---") {
                        w = w.and_then(|()| out.write_all(b"---\n"));
                    }
                }
                if !new_text.is_empty() {
                    open_line = !new_text.ends_with('\n');
                }
                first = false;
                w.and_then(|()| out.write_all(new_text.as_bytes()))
            }
            // A diff is for reading (a terminal, a CI log): env values and credentials are shown
            // as `***` (s19 fresh-user pass: the added startup probe showed the liveness
            // command's password); the files `fix` writes keep them.
            FixOutput::Diff if changed => {
                let (old_shown, _) = shown::redact_for_display(&analysis.text);
                let (new_shown, hidden) = shown::redact_for_display(new_text);
                redacted += hidden;
                write_diff(&name, &old_shown, &new_shown, out)
            }
            // Never rewrite someone's file without its comments and layout: a document that
            // could not be edited as text leaves the whole file as it is.
            FixOutput::InPlace if changed && fixed.as_ref().is_some_and(|f| !f.reserialized.is_empty()) => {
                for line in fixed.iter().flat_map(|f| &f.reserialized) {
                    errors.push(InputError {
                        file: name.clone(),
                        line: Some(*line),
                        column: None,
                        message: "not written: this document can only be fixed by re-serializing it, which \
                                  would lose its comments and layout; see `probegate fix --diff` and edit it by hand"
                            .to_string(),
                    });
                }
                Ok(())
            }
            FixOutput::InPlace if changed => match &analysis.input {
                Input::File(path) => write_in_place(path, new_text),
                Input::Stdin | Input::Cluster(_) => Ok(()),
            },
            _ => Ok(()),
        };
        // A reader that stopped early (`| head`) wanted no more output: not an error.
        let stopped_reading = matches!(opts.output, FixOutput::Stdout | FixOutput::Diff);
        let written = match written {
            Err(e) if stopped_reading && e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            other => other,
        };
        if let Err(e) = written {
            errors.push(InputError {
                file: name,
                line: None,
                column: None,
                message: format!("cannot write: {e}"),
            });
        }
    }
    if redacted > 0 {
        // `--in-place` cannot write standard input back (s23 fresh user: the note offered it for
        // `fix --diff -`): there, plain `fix` writes the fixed text with its real values.
        let writer = if paths.iter().any(|p| p.as_os_str() == "-") {
            "`probegate fix -` writes the fixed text with the real values to standard output"
        } else {
            "`probegate fix --in-place` writes the real values"
        };
        let _ = writeln!(
            err,
            "probegate: note: the diff shows env values and credentials as *** ({redacted} in the files it shows): \
             it is for reading, not for `git apply`; {writer}"
        );
    }
    for note in not_fixed(&files) {
        let _ = writeln!(err, "probegate: note: {note}");
    }
    // What still needs a person: every finding `check` reports that is not a fix (s19 fresh-user
    // pass: `fix --diff` said "fixed" and exited 0 with a denial left), one line each.
    let left = left_to_you(&files);
    for (level, line) in &left {
        if *level >= Level::Warn && !line.is_empty() {
            let _ = writeln!(err, "probegate: left to you: {line}");
        }
    }
    if left.iter().any(|(level, _)| *level >= opts.fail_on) {
        code = EXIT_FINDINGS;
    }
    for e in &errors {
        let _ = writeln!(err, "probegate: {e}");
        code = EXIT_BAD_INPUT;
    }
    let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let checked_objects: usize = files.iter().map(|f| f.objects.len()).sum();
    let checked = format!(
        "{} in {} checked",
        plural(checked_objects, "object", "objects"),
        plural(files.len(), "file", "files")
    );
    let count = |l: Level| left.iter().filter(|(level, _)| *level == l).count();
    let (deny, warn) = (count(Level::Deny), count(Level::Warn));
    let verdict = if code == EXIT_FINDINGS {
        format!("; failed (--fail-on {})", opts.fail_on.as_str())
    } else {
        String::new()
    };
    let people =
        if deny + warn > 0 { format!("; left to you: {deny} deny, {warn} warn{verdict}") } else { verdict };
    let _ = if changed_objects == 0 {
        writeln!(err, "probegate fix: nothing to fix ({checked}){people}")
    } else {
        // A diff changes no file: say so, "fixed" alone reads as if it had.
        let written = if opts.output == FixOutput::Diff { "; a diff only, no file written" } else { "" };
        writeln!(
            err,
            "probegate fix: {} fixed in {} ({checked}{written}){people}",
            plural(changed_objects, "object", "objects"),
            plural(changed_files, "file", "files")
        )
    };
    code
}

/// A unified diff (`--- a/FILE`, `+++ b/FILE`, 3 lines of context). An absolute path loses its
/// leading `/` after the prefix, as `git diff --no-index` writes it (`a/tmp/app.yaml`).
///
/// # Errors
/// When `out` fails.
pub fn write_diff(name: &str, old: &str, new: &str, out: &mut dyn Write) -> std::io::Result<()> {
    let diff = similar::TextDiff::from_lines(old, new);
    let name = name.trim_start_matches('/');
    let text =
        diff.unified_diff().context_radius(3).header(&format!("a/{name}"), &format!("b/{name}")).to_string();
    out.write_all(text.as_bytes())
}

/// Replaces a file's content through a temporary file in the same directory and a rename, keeping
/// its permissions and, where the user may set them (root, or the file's own owner and one of
/// their groups), its owner and group. A symlink is followed: the file it points to is rewritten
/// and the link stays a link (as `sed -i --follow-symlinks` does).
///
/// # Errors
/// A read-only file (no write permission bit) is refused with `PermissionDenied`: the rename would
/// replace it even so, as the directory allows it (break-it pass s21); I/O errors as they come.
fn write_in_place(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let resolved = std::fs::canonicalize(path)?;
    let path = resolved.as_path();
    let meta = std::fs::metadata(path)?;
    if meta.permissions().readonly() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            "the file is read-only (no write permission): not changed",
        ));
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.probegate-fix-{}", std::process::id()));
    std::fs::write(&tmp, text)?;
    // Owner first: a chown may clear set-id bits, which the permissions then restore.
    let _ = std::os::unix::fs::chown(&tmp, Some(meta.uid()), Some(meta.gid()));
    let _ = std::fs::set_permissions(&tmp, meta.permissions());
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::write_diff;

    #[test]
    fn diff_headers_name_absolute_and_relative_paths_once_prefixed() {
        let mut out = Vec::new();
        write_diff("/tmp/k8s/app.yaml", "a: 1\n", "a: 2\n", &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("--- a/tmp/k8s/app.yaml\n+++ b/tmp/k8s/app.yaml\n"), "{text}");
        let mut out = Vec::new();
        write_diff("k8s/app.yaml", "a: 1\n", "a: 2\n", &mut out).unwrap();
        assert!(String::from_utf8(out).unwrap().starts_with("--- a/k8s/app.yaml\n"));
    }
}
