//! Manifests read with their source positions, for the offline commands: which line an object or a
//! container starts on, and byte ranges precise enough to edit a document's text in place.
//!
//! A file is split into documents at the YAML markers (`---` and `...` at the start of a line, which
//! YAML forbids inside any scalar), and each document is parsed on its own: a syntax error in one
//! document leaves the others readable, and every offset is relative to the whole file.
//!
//! Each document is read into a [`Node`] tree that keeps key order and, for every node, its line,
//! column and byte range (serde-saphyr's `Spanned`). Mappings and sequences carry only their start
//! (serde-saphyr gives no end for collections); [`Node::end`] finds the end of the last scalar below.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Map, Number, Value};
use serde_saphyr::Spanned;

/// Where a node is in the file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pos {
    /// 1-based line in the file (0: unknown, e.g. a node added by a patch).
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
    /// Byte offset in the file.
    pub offset: usize,
    /// Length in bytes (0 for mappings and sequences).
    pub len: usize,
}

/// A YAML node: a JSON-like value with positions and key order kept.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// Where the node is (for a mapping: its first key; for a sequence: its first item).
    pub pos: Pos,
    /// The value.
    pub value: NodeValue,
}

/// A mapping key and where it is.
#[derive(Clone, Debug, PartialEq)]
pub struct Key {
    /// The key as a string (YAML keys that are numbers or booleans are stringified, as Kubernetes'
    /// YAML-to-JSON conversion does).
    pub name: String,
    /// Where the key is.
    pub pos: Pos,
}

/// The value of a [`Node`].
#[derive(Clone, Debug, PartialEq)]
pub enum NodeValue {
    /// `null`, `~` or nothing.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// An integer or a float.
    Number(Number),
    /// A string.
    String(String),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, in source order.
    Map(Vec<(Key, Node)>),
}

impl Node {
    /// A node without a position, from a JSON value (for what a patch adds).
    pub fn from_value(value: &Value) -> Node {
        let value = match value {
            Value::Null => NodeValue::Null,
            Value::Bool(b) => NodeValue::Bool(*b),
            Value::Number(n) => NodeValue::Number(n.clone()),
            Value::String(s) => NodeValue::String(s.clone()),
            Value::Array(a) => NodeValue::Seq(a.iter().map(Node::from_value).collect()),
            Value::Object(o) => NodeValue::Map(
                o.iter()
                    .map(|(k, v)| (Key { name: k.clone(), pos: Pos::default() }, Node::from_value(v)))
                    .collect(),
            ),
        };
        Node { pos: Pos::default(), value }
    }

    /// The JSON value (key order is lost: `serde_json::Map` sorts).
    pub fn to_value(&self) -> Value {
        match &self.value {
            NodeValue::Null => Value::Null,
            NodeValue::Bool(b) => Value::Bool(*b),
            NodeValue::Number(n) => Value::Number(n.clone()),
            NodeValue::String(s) => Value::String(s.clone()),
            NodeValue::Seq(items) => Value::Array(items.iter().map(Node::to_value).collect()),
            NodeValue::Map(entries) => {
                let mut map = Map::new();
                for (k, v) in entries {
                    map.insert(k.name.clone(), v.to_value());
                }
                Value::Object(map)
            }
        }
    }

    /// The member `key` of a mapping.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.value {
            NodeValue::Map(entries) => entries.iter().find(|(k, _)| k.name == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The string value, if the node is a string.
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            NodeValue::String(s) => Some(s),
            _ => None,
        }
    }

    /// The items, if the node is a sequence.
    pub fn as_seq(&self) -> Option<&[Node]> {
        match &self.value {
            NodeValue::Seq(items) => Some(items),
            _ => None,
        }
    }

    /// The node at a sequence of JSON Pointer tokens (unescaped), e.g. `["spec", "containers", "0"]`.
    pub fn at<'a>(&self, tokens: impl IntoIterator<Item = &'a str>) -> Option<&Node> {
        let mut node = self;
        for t in tokens {
            node = match &node.value {
                NodeValue::Map(_) => node.get(t)?,
                NodeValue::Seq(items) => items.get(t.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(node)
    }

    /// Mutable access by JSON Pointer tokens.
    pub fn at_mut<'a>(&mut self, tokens: impl IntoIterator<Item = &'a str>) -> Option<&mut Node> {
        let mut node = self;
        for t in tokens {
            node = match &mut node.value {
                NodeValue::Map(entries) => entries.iter_mut().find(|(k, _)| k.name == t).map(|(_, v)| v)?,
                NodeValue::Seq(items) => items.get_mut(t.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(node)
    }

    /// The byte offset just past the last scalar or key at or below this node (trailing blanks of
    /// block scalars excluded); for an empty collection, its start.
    pub fn end(&self, text: &str) -> usize {
        let own = scalar_end(text, self.pos);
        match &self.value {
            NodeValue::Seq(items) => items.iter().map(|n| n.end(text)).fold(own, usize::max),
            NodeValue::Map(entries) => {
                entries.iter().map(|(k, v)| scalar_end(text, k.pos).max(v.end(text))).fold(own, usize::max)
            }
            _ => own,
        }
    }
}

/// End of a node's own span with trailing whitespace trimmed (block scalars include the blank lines
/// and indentation after them).
fn scalar_end(text: &str, pos: Pos) -> usize {
    let end = (pos.offset + pos.len).min(text.len());
    let start = pos.offset.min(end);
    match text.get(start..end) {
        Some(s) => start + s.trim_end().len(),
        None => end,
    }
}

/// Serializes in source key order (to YAML with serde-saphyr, or to JSON with serde_json).
impl Serialize for Node {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.value {
            NodeValue::Null => s.serialize_unit(),
            NodeValue::Bool(b) => s.serialize_bool(*b),
            NodeValue::Number(n) => n.serialize(s),
            NodeValue::String(v) => s.serialize_str(v),
            NodeValue::Seq(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for i in items {
                    seq.serialize_element(i)?;
                }
                seq.end()
            }
            NodeValue::Map(entries) => {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(&k.name, v)?;
                }
                map.end()
            }
        }
    }
}

fn pos_of(loc: &serde_saphyr::Location, base: Base) -> Pos {
    let span = loc.span();
    let offset = span.byte_offset().map_or(0, |o| o as usize) + base.offset;
    let line = u32::try_from(loc.line()).unwrap_or(u32::MAX);
    Pos {
        line: if line == 0 { 0 } else { line.saturating_add(base.line) },
        column: u32::try_from(loc.column()).unwrap_or(u32::MAX),
        offset,
        len: span.byte_len().map_or(0, |l| l as usize),
    }
}

/// Offsets of a document inside its file, added to every position read from it.
#[derive(Clone, Copy, Debug, Default)]
struct Base {
    offset: usize,
    line: u32,
}

/// The value of a node before its position is attached.
struct RawValue(NodeValue);

/// A key of any scalar type, stringified.
struct RawKey(String);

impl<'de> Deserialize<'de> for RawKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = RawKey;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a scalar mapping key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawKey, E> {
                Ok(RawKey(v.to_string()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<RawKey, E> {
                Ok(RawKey(v))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<RawKey, E> {
                Ok(RawKey(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawKey, E> {
                Ok(RawKey(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawKey, E> {
                Ok(RawKey(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawKey, E> {
                Ok(RawKey(v.to_string()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<RawKey, E> {
                Ok(RawKey("null".into()))
            }
            fn visit_none<E: de::Error>(self) -> Result<RawKey, E> {
                Ok(RawKey("null".into()))
            }
        }
        d.deserialize_any(V)
    }
}

/// A node as deserialized: positions relative to its document, made absolute by [`attach`].
struct RawNode(Spanned<RawValue>);

impl<'de> Deserialize<'de> for RawNode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(RawNode(Spanned::<RawValue>::deserialize(d)?))
    }
}

impl<'de> Deserialize<'de> for RawValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawValue;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any YAML value")
            }
            fn visit_unit<E: de::Error>(self) -> Result<RawValue, E> {
                Ok(RawValue(NodeValue::Null))
            }
            fn visit_none<E: de::Error>(self) -> Result<RawValue, E> {
                Ok(RawValue(NodeValue::Null))
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<RawValue, D::Error> {
                RawValue::deserialize(d)
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<RawValue, E> {
                Ok(RawValue(NodeValue::Bool(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawValue, E> {
                Ok(RawValue(NodeValue::Number(v.into())))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawValue, E> {
                Ok(RawValue(NodeValue::Number(v.into())))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawValue, E> {
                Ok(RawValue(Number::from_f64(v).map_or(NodeValue::Null, NodeValue::Number)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawValue, E> {
                Ok(RawValue(NodeValue::String(v.to_string())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<RawValue, E> {
                Ok(RawValue(NodeValue::String(v)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<RawValue, A::Error> {
                let mut items = Vec::with_capacity(a.size_hint().unwrap_or(0));
                while let Some(RawNode(item)) = a.next_element::<RawNode>()? {
                    items.push(pending(item));
                }
                Ok(RawValue(NodeValue::Seq(items)))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<RawValue, A::Error> {
                let mut entries = Vec::with_capacity(a.size_hint().unwrap_or(0));
                while let Some(key) = a.next_key::<Spanned<RawKey>>()? {
                    let RawNode(value) = a.next_value::<RawNode>()?;
                    let key_pos = pos_of(&key.referenced, Base::default());
                    entries.push((Key { name: key.value.0, pos: key_pos }, pending(value)));
                }
                Ok(RawValue(NodeValue::Map(entries)))
            }
        }
        d.deserialize_any(V)
    }
}

/// A node with positions relative to its document.
fn pending(s: Spanned<RawValue>) -> Node {
    Node { pos: pos_of(&s.referenced, Base::default()), value: s.value.0 }
}

/// Makes every position of a tree absolute.
fn attach(node: &mut Node, base: Base) {
    shift(&mut node.pos, base);
    match &mut node.value {
        NodeValue::Seq(items) => items.iter_mut().for_each(|n| attach(n, base)),
        NodeValue::Map(entries) => entries.iter_mut().for_each(|(k, v)| {
            shift(&mut k.pos, base);
            attach(v, base);
        }),
        _ => {}
    }
}

fn shift(pos: &mut Pos, base: Base) {
    pos.offset += base.offset;
    if pos.line > 0 {
        pos.line = pos.line.saturating_add(base.line);
    }
}

/// One document of a file: its text range and what it holds.
#[derive(Clone, Debug)]
pub struct Document {
    /// Byte range of the document's text in the file, its `---` line and leading comments included.
    pub range: std::ops::Range<usize>,
    /// 1-based line of the range's first line.
    pub first_line: u32,
    /// The parsed document; `Ok(None)` for an empty one (comments only, or `---` alone).
    pub node: Result<Option<Node>, YamlError>,
}

/// A YAML syntax error, placed in the file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{column}: {message}")]
pub struct YamlError {
    /// 1-based line in the file (0 when unknown).
    pub line: u32,
    /// 1-based column (0 when unknown).
    pub column: u32,
    /// What is wrong, without a snippet of the text (it could hold a secret).
    pub message: String,
    /// True for an error in a stream of JSON documents (see [`parse_file`]): the text is JSON, and
    /// reports say "invalid JSON".
    pub json: bool,
}

/// Splits a YAML stream into documents and parses each (see the module documentation).
///
/// A stream of JSON documents (concatenated objects or JSON lines, as `kubectl get -o json | jq -c
/// '.items[]'` writes) is split where each JSON value ends (serde_json's stream deserializer), one
/// document per value, each with its own first line. A JSON error in such a stream is placed at
/// its line and column; the documents after it are not read (JSON gives no safe place to start
/// again). Text that is one JSON value, or that is no JSON stream (YAML, including flow mappings
/// `{a: 1}`), is read as YAML; so is a stream whose JSON reading fails where the YAML reading does
/// not.
pub fn parse_file(text: &str) -> Vec<Document> {
    if let Some(documents) = json_stream(text) {
        return documents;
    }
    parse_yaml_file(text)
}

fn parse_yaml_file(text: &str) -> Vec<Document> {
    split_documents(text)
        .into_iter()
        .map(|(range, first_line)| {
            let node =
                parse_document(&text[range.clone()], Base { offset: range.start, line: first_line - 1 });
            Document { range, first_line, node }
        })
        .collect()
}

/// The documents of a stream of two or more JSON values (see [`parse_file`]), or `None` for text
/// that is not one. Each document's range runs from the end of the previous value (its line end
/// included) to the end of its own, the last one to the end of the text, so the ranges cover the
/// text as YAML documents' do.
fn json_stream(text: &str) -> Option<Vec<Document>> {
    let bom = if text.starts_with('\u{feff}') { '\u{feff}'.len_utf8() } else { 0 };
    if !text[bom..].trim_start().starts_with('{') {
        return None;
    }
    let line_of = |offset: usize| 1 + memchr::memchr_iter(b'\n', &text.as_bytes()[..offset]).count();
    let mut stream = serde_json::Deserializer::from_str(&text[bom..]).into_iter::<serde::de::IgnoredAny>();
    let mut ends = Vec::new();
    let mut error = None;
    while let Some(value) = stream.next() {
        match value {
            Ok(_) => {
                // The rest of the value's line (blanks and the line end) goes with it, so that the
                // next document starts on a line of its own.
                let mut end = bom + stream.byte_offset();
                let rest = &text.as_bytes()[end..];
                let blanks = rest.iter().take_while(|b| matches!(b, b' ' | b'\t' | b'\r')).count();
                if rest.get(blanks) == Some(&b'\n') {
                    end += blanks + 1;
                }
                ends.push(end);
            }
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    // One value is read as YAML (as it always was); no value at all is no JSON stream.
    if ends.len() < 2 && error.is_none() || ends.is_empty() {
        return None;
    }
    let mut documents = Vec::new();
    let mut start = 0;
    for &end in &ends {
        let first_line = u32::try_from(line_of(start)).unwrap_or(u32::MAX);
        let node = parse_document(&text[start..end], Base { offset: start, line: first_line - 1 });
        documents.push(Document { range: start..end, first_line, node });
        start = end;
    }
    if let Some(e) = error {
        // `{"kind": "Pod"}` then `---` and YAML: a valid YAML stream, read as one.
        let yaml = parse_yaml_file(text);
        if yaml.iter().all(|d| d.node.is_ok()) {
            return Some(yaml);
        }
        let first_line = u32::try_from(line_of(start)).unwrap_or(u32::MAX);
        let message = plain_yaml_message(&e.to_string());
        documents.push(Document {
            range: start..text.len(),
            first_line,
            node: Err(YamlError {
                line: u32::try_from(e.line()).unwrap_or(0),
                column: u32::try_from(e.column()).unwrap_or(0),
                message: format!(
                    "{message} (in the JSON document starting on line {first_line}; the documents after it are not read)"
                ),
                json: true,
            }),
        });
    } else if let Some(last) = documents.last_mut() {
        last.range.end = text.len();
    }
    Some(documents)
}

/// Parses one document's text (as split by [`parse_file`]) whose positions start at `offset`/`line`
/// in its file: used to re-read an edited document.
///
/// # Errors
/// The syntax error, placed in the file.
pub fn parse_document_at(text: &str, offset: usize, first_line: u32) -> Result<Option<Node>, YamlError> {
    parse_document(text, Base { offset, line: first_line.saturating_sub(1) })
}

fn parse_document(text: &str, base: Base) -> Result<Option<Node>, YamlError> {
    match fast::parse(text) {
        Some(Some(mut node)) => {
            attach(&mut node, base);
            Ok(Some(node))
        }
        Some(None) => Ok(None),
        None => parse_document_serde(text, base),
    }
}

/// The reference reader: serde-saphyr's deserializer into `Spanned` nodes. Used for documents the
/// fast path leaves to it, and to produce its error messages.
fn parse_document_serde(text: &str, base: Base) -> Result<Option<Node>, YamlError> {
    let docs: Vec<RawNode> = serde_saphyr::from_multiple_with_options(text, super::yaml_options())
        .map_err(|e| yaml_error(&e, base))?;
    let mut nodes: Vec<Node> =
        docs.into_iter().map(|RawNode(s)| pending(s)).filter(|n| n.value != NodeValue::Null).collect();
    match nodes.len() {
        0 => Ok(None),
        1 => {
            let mut node = nodes.remove(0);
            attach(&mut node, base);
            Ok(Some(node))
        }
        // Cannot happen for text split at the markers; say so rather than drop a document.
        n => Err(YamlError {
            line: base.line + 1,
            column: 1,
            message: format!("{n} documents where one was expected"),
            json: false,
        }),
    }
}

fn yaml_error(e: &serde_saphyr::Error, base: Base) -> YamlError {
    let loc = e.location();
    let line = loc.map_or(0, |l| u32::try_from(l.line()).unwrap_or(0));
    let column = loc.map_or(0, |l| u32::try_from(l.column()).unwrap_or(0));
    YamlError {
        line: if line == 0 { base.line + 1 } else { line + base.line },
        column,
        message: plain_yaml_message(&e.without_snippet().to_string()),
        json: false,
    }
}

/// A YAML library (serde-saphyr) error message as a person who writes manifests or policies reads
/// it: the first line, without the locations reported separately (a leading `line L column C: `,
/// a trailing ` (used at line L, column C)` or ` at line L, column C`; an alias's
/// `(defined at line L, column C)` is kept: it says where the value came from), without advice to
/// programmers (`set DuplicateKeyPolicy in Options`), a duplicate key and a breached reading budget
/// (an alias bomb, too deep a nesting) said in words rather than as the library's Rust values
/// (break-it pass s21: `budget breached: Nodes { nodes: 250001 } ... (used`).
pub(crate) fn plain_yaml_message(msg: &str) -> String {
    let first = msg.lines().next().unwrap_or(msg).trim();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let mut first = match first.strip_prefix("line ") {
        Some(rest) => match rest.find(": ") {
            Some(i) if rest[..i].contains("column") => &rest[i + 2..],
            _ => first,
        },
        None => first,
    };
    for (prefix, end) in [(" (used at line ", ")"), (" at line ", "")] {
        if let Some(i) = first.rfind(prefix)
            && first[i + prefix.len()..].strip_suffix(end).is_some_and(is_line_column)
        {
            first = &first[..i];
        }
    }
    let msg = first
        .replace(", set DuplicateKeyPolicy in Options if acceptable", "")
        .replace("; use from_str_multiple or from_str_multiple_with_options", "");
    if let Some(key) = msg.strip_prefix("duplicate mapping key: ") {
        return format!("duplicate key `{key}` in a mapping (each key may appear once)");
    }
    match msg.strip_prefix("budget breached: ") {
        Some(rest) => budget_words(rest).unwrap_or_else(|| format!("too much YAML to read ({rest})")),
        None => msg,
    }
}

/// `L, column C`, as serde-saphyr writes a location after ` at line `.
fn is_line_column(text: &str) -> bool {
    text.split_once(", column ").is_some_and(|(l, c)| {
        !l.is_empty() && !c.is_empty() && l.bytes().chain(c.bytes()).all(|b| b.is_ascii_digit())
    })
}

/// `Nodes { nodes: 250001 }` (serde-saphyr's `BudgetBreach`, Debug-printed) in words.
fn budget_words(breach: &str) -> Option<String> {
    let (kind, rest) = breach.split_once(" {")?;
    let count: String = rest.split('}').next()?.chars().filter(char::is_ascii_digit).collect();
    let what = match kind {
        "Nodes" => "values",
        "Aliases" => "alias uses",
        "Anchors" => "anchors",
        "Depth" | "InclusionDepth" => "levels of nesting",
        "Events" => "parser events",
        "Documents" => "documents",
        _ => return None,
    };
    Some(format!(
        "too much YAML to read: {count} {what}, past the reader's limit (aliases that expand \
         exponentially, a \"billion laughs\", do this)"
    ))
}

/// True for a line that is a document marker: `---` or `...` at column 0, alone or followed by a
/// blank (YAML 1.2, "c-forbidden": no scalar may contain such a line).
fn is_marker(line: &str, marker: &str) -> bool {
    line.strip_prefix(marker).is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t', '\r', '\n']))
}

/// True when a piece of text holds nothing but blank lines, comments and directives.
fn is_prefix_only(text: &str) -> bool {
    text.lines().all(|l| {
        let t = l.trim();
        t.is_empty() || t.starts_with('#') || l.starts_with('%')
    })
}

/// Byte ranges and first lines of the documents of a stream. A piece holding only comments,
/// blank lines or directives is joined to the document after it.
fn split_documents(text: &str) -> Vec<(std::ops::Range<usize>, u32)> {
    let mut cuts: Vec<(usize, u32)> = vec![(0, 1)]; // (offset, line) where a piece starts
    let mut offset = 0;
    let bom = text.starts_with('\u{feff}');
    for (line_no, line) in (1u32..).zip(text.split_inclusive('\n')) {
        let l = if offset == 0 && bom { &line[3..] } else { line };
        if offset > 0 && is_marker(l, "---") {
            cuts.push((offset, line_no));
        } else if is_marker(l, "...") && offset + line.len() < text.len() {
            cuts.push((offset + line.len(), line_no + 1));
        }
        offset += line.len();
    }
    let mut pieces: Vec<(std::ops::Range<usize>, u32)> = Vec::new();
    for (i, &(start, line)) in cuts.iter().enumerate() {
        let end = cuts.get(i + 1).map_or(text.len(), |c| c.0);
        if start < end || pieces.is_empty() {
            pieces.push((start..end, line));
        }
    }
    // Join comment-only pieces to the next one (a file's header comment, directives before `---`).
    let mut out: Vec<(std::ops::Range<usize>, u32)> = Vec::new();
    let mut pending: Option<(usize, u32)> = None;
    let last = pieces.len().saturating_sub(1);
    for (i, (range, line)) in pieces.into_iter().enumerate() {
        let (start, first) = pending.take().unwrap_or((range.start, line));
        if i < last && is_prefix_only(&text[range.clone()]) && !text[range.clone()].contains("...") {
            pending = Some((start, first));
            continue;
        }
        out.push((start..range.end, first));
    }
    out
}

/// The fast path: the document's tree built straight from the YAML parser's events (the parser
/// serde-saphyr uses), about twice as fast as going through serde. It reads plain documents only
/// and gives up (`None`, and serde-saphyr reads the document) on anything where serde-saphyr's
/// semantics take more than a few lines to reproduce: tags, anchors and aliases, merge keys,
/// duplicate keys, deep nesting, syntax errors. Plain scalars that are not obviously strings or
/// simple integers are resolved by serde-saphyr itself, one scalar at a time.
mod fast {
    use std::borrow::Cow;

    use serde_json::Value;
    use serde_saphyr::granit_parser::{Event, Options as ParserOptions, Parser, ScalarStyle, Span};

    use super::{Key, Node, NodeValue, Pos};

    /// Deeper than this is left to serde-saphyr (and its budget).
    const MAX_DEPTH: usize = 256;

    fn pos(span: &Span) -> Option<Pos> {
        let start = span.start.byte_offset()?;
        let len = span.end.byte_offset()?.saturating_sub(start);
        Some(Pos {
            line: u32::try_from(span.start.line()).ok()?,
            column: u32::try_from(span.start.col() + 1).ok()?,
            offset: start,
            len,
        })
    }

    /// A plain scalar's value: null, a simple integer, an obvious string, or serde-saphyr's answer.
    fn plain(text: &str) -> Option<NodeValue> {
        let b = text.as_bytes();
        if text.is_empty() || text == "~" {
            return Some(NodeValue::Null);
        }
        if b[0].is_ascii_alphabetic() {
            let lower = text.to_ascii_lowercase();
            let special =
                matches!(lower.as_str(), "true" | "false" | "yes" | "no" | "y" | "n" | "on" | "off" | "null")
                    || lower.starts_with("inf")
                    || lower.starts_with("nan");
            if !special {
                return Some(NodeValue::String(text.to_string()));
            }
        }
        let digits = text.strip_prefix('-').unwrap_or(text);
        let simple = !digits.is_empty()
            && digits.len() <= 18
            && digits.bytes().all(|c| c.is_ascii_digit())
            && (digits == "0" || !digits.starts_with('0'));
        if simple {
            let n: i64 = text.parse().ok()?;
            return Some(NodeValue::Number(if n >= 0 { (n as u64).into() } else { n.into() }));
        }
        // Everything else (booleans, floats, octal, hex, .inf, words like `on`): as serde-saphyr
        // reads it. A plain scalar's text is a valid plain scalar on its own.
        let v: Value = serde_saphyr::from_str_with_options(text, super::super::yaml_options()).ok()?;
        Some(match v {
            Value::Null => NodeValue::Null,
            Value::Bool(b) => NodeValue::Bool(b),
            Value::Number(n) => NodeValue::Number(n),
            Value::String(s) => NodeValue::String(s),
            _ => return None,
        })
    }

    /// A key as the reference reader stringifies it.
    fn key_text(value: NodeValue) -> Option<String> {
        Some(match value {
            NodeValue::String(s) => s,
            NodeValue::Null => "null".into(),
            NodeValue::Bool(b) => b.to_string(),
            NodeValue::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => u.to_string(),
                (_, Some(i), _) => i.to_string(),
                (_, _, Some(f)) => f.to_string(),
                _ => return None,
            },
            _ => return None,
        })
    }

    enum Frame {
        Seq(Pos, Vec<Node>),
        /// A mapping, and the key waiting for its value.
        Map(Pos, Vec<(Key, Node)>, Option<Key>),
    }

    /// Adds a finished node to its parent; `None` when the document is not plain.
    fn push(stack: &mut [Frame], node: Node, root: &mut Option<Node>) -> Option<()> {
        match stack.last_mut() {
            None => *root = Some(node),
            Some(Frame::Seq(_, items)) => items.push(node),
            Some(Frame::Map(_, entries, pending)) => match pending.take() {
                Some(key) => entries.push((key, node)),
                None => {
                    let name = key_text(node.value)?;
                    if name == "<<" || entries.iter().any(|(k, _)| k.name == name) {
                        return None; // merge key or duplicate: serde-saphyr decides
                    }
                    *pending = Some(Key { name, pos: node.pos });
                }
            },
        }
        Some(())
    }

    /// The document's tree, `Some(None)` for an empty document, or `None` to leave it to
    /// serde-saphyr.
    pub(super) fn parse(text: &str) -> Option<Option<Node>> {
        let mut stack: Vec<Frame> = Vec::new();
        let mut root: Option<Node> = None;
        let mut documents = 0;
        // Comments carry no data: not emitted.
        let mut options = ParserOptions::default();
        options.emit_comments = false;
        for event in Parser::new_from_str_with_options(text, options) {
            let (event, span) = event.ok()?;
            match event {
                Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => {}
                Event::DocumentStart(..) => {
                    documents += 1;
                    if documents > 1 {
                        return None;
                    }
                }
                Event::Scalar(value, style, anchor, tag) => {
                    if anchor != 0 || tag.is_some() {
                        return None;
                    }
                    let value = match style {
                        ScalarStyle::Plain => plain(&value)?,
                        _ => NodeValue::String(match value {
                            Cow::Borrowed(s) => s.to_string(),
                            Cow::Owned(s) => s,
                        }),
                    };
                    push(&mut stack, Node { pos: pos(&span)?, value }, &mut root)?;
                }
                Event::SequenceStart(_, anchor, tag) | Event::MappingStart(_, anchor, tag)
                    if anchor != 0 || tag.is_some() || stack.len() >= MAX_DEPTH =>
                {
                    return None;
                }
                Event::SequenceStart(..) => stack.push(Frame::Seq(pos(&span)?, Vec::new())),
                Event::MappingStart(..) => stack.push(Frame::Map(pos(&span)?, Vec::new(), None)),
                Event::SequenceEnd => match stack.pop()? {
                    Frame::Seq(p, items) => {
                        push(&mut stack, Node { pos: p, value: NodeValue::Seq(items) }, &mut root)?
                    }
                    Frame::Map(..) => return None,
                },
                Event::MappingEnd => match stack.pop()? {
                    Frame::Map(p, entries, None) => {
                        push(&mut stack, Node { pos: p, value: NodeValue::Map(entries) }, &mut root)?
                    }
                    _ => return None,
                },
                // Comments carry no data; aliases, anchors and anything else go to serde-saphyr.
                #[allow(unreachable_patterns)]
                Event::Comment(..) => {}
                _ => return None,
            }
        }
        if !stack.is_empty() {
            return None;
        }
        Some(root.filter(|n| n.value != NodeValue::Null))
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn yaml_messages_lose_only_the_locations_reported_beside_them() {
        use super::plain_yaml_message as p;
        assert_eq!(
            p(
                "line 7 column 18: expected string scalar (defined at line 5, column 20) (used at line 7, column 18)"
            ),
            "expected string scalar (defined at line 5, column 20)"
        );
        assert_eq!(p("error: invalid u16 at line 3, column 7\nsnippet"), "invalid u16");
        // Text that merely contains the words is kept.
        assert_eq!(p("value \"at line 2\" at line x, column y"), "value \"at line 2\" at line x, column y");
        assert_eq!(p("name (used at line 3)"), "name (used at line 3)");
        assert_eq!(
            p(
                "duplicate mapping key: name, set DuplicateKeyPolicy in Options if acceptable at line 5, column 3"
            ),
            "duplicate key `name` in a mapping (each key may appear once)"
        );
        assert_eq!(
            p(
                "budget breached: Nodes { nodes: 250001 } at line 12, column 24 (defined at line 16, column 11) (used at line 17, column 16)"
            ),
            "too much YAML to read: 250001 values, past the reader's limit (aliases that expand exponentially, a \"billion laughs\", do this)"
        );
        assert_eq!(
            p("budget breached: Depth { depth: 2001 }"),
            "too much YAML to read: 2001 levels of nesting, past the reader's limit (aliases that expand exponentially, a \"billion laughs\", do this)"
        );
        assert_eq!(p("budget breached: Other { x: 1 }"), "too much YAML to read (Other { x: 1 })");
    }

    use super::*;

    fn docs(text: &str) -> Vec<Document> {
        parse_file(text)
    }

    #[test]
    fn splits_at_markers_and_keeps_offsets_absolute() {
        let text =
            "# header\n---\napiVersion: v1\nkind: Pod\n---\n# c\nkind: List\nitems:\n- a: 1\n...\n---\n";
        let d = docs(text);
        assert_eq!(d.len(), 3);
        assert_eq!((d[0].range.start, d[0].first_line), (0, 1));
        let pod = d[0].node.as_ref().unwrap().as_ref().unwrap();
        assert_eq!(pod.pos.line, 3);
        assert_eq!(pod.get("kind").unwrap().pos.line, 4);
        let kind = pod.get("kind").unwrap();
        assert_eq!(&text[kind.pos.offset..kind.pos.offset + kind.pos.len], "Pod");
        let list = d[1].node.as_ref().unwrap().as_ref().unwrap();
        assert_eq!(list.pos.line, 7);
        assert_eq!(list.at(["items", "0"]).unwrap().pos.line, 9);
        assert!(d[2].node.as_ref().unwrap().is_none());
    }

    #[test]
    fn markers_inside_block_scalars_are_not_markers_when_indented() {
        let text = "a: |\n  ---\n  x\nb: 1\n";
        let d = docs(text);
        assert_eq!(d.len(), 1);
        let n = d[0].node.as_ref().unwrap().as_ref().unwrap();
        assert_eq!(n.get("a").unwrap().as_str(), Some("---\nx\n"));
    }

    #[test]
    fn syntax_errors_are_placed_in_the_file_and_other_documents_survive() {
        let text = "a: 1\n---\nb: [1, 2\n---\nc: 3\n";
        let d = docs(text);
        assert_eq!(d.len(), 3);
        assert!(d[0].node.is_ok() && d[2].node.is_ok());
        let e = d[1].node.as_ref().unwrap_err();
        assert!(e.line >= 3, "{e:?}");
        assert!(!e.message.contains("line "), "{e:?}");
    }

    #[test]
    fn octal_numbers_keys_and_json() {
        let text = "{\"mode\": 0644, \"n\": 1.5, \"t\": true, \"s\": \"0644\"}\n---\n1: x\n";
        let d = docs(text);
        let v = d[0].node.as_ref().unwrap().as_ref().unwrap().to_value();
        assert_eq!(v, serde_json::json!({"mode": 420, "n": 1.5, "t": true, "s": "0644"}));
        let v = d[1].node.as_ref().unwrap().as_ref().unwrap().to_value();
        assert_eq!(v, serde_json::json!({"1": "x"}));
    }

    /// The fast path and serde-saphyr agree on every node, position and value, wherever the fast
    /// path answers; returns how many documents it answered.
    fn agree(text: &str) -> usize {
        let mut fast_docs = 0;
        for (range, first_line) in split_documents(text) {
            let base = Base { offset: range.start, line: first_line - 1 };
            let segment = &text[range];
            let reference = parse_document_serde(segment, base);
            if let Some(fast) = fast::parse(segment) {
                let fast = fast.map(|mut n| {
                    attach(&mut n, base);
                    n
                });
                if Ok(&fast) != reference.as_ref() {
                    let (a, b) = (format!("{fast:#?}"), format!("{reference:#?}"));
                    let first = a.lines().zip(b.lines()).position(|(x, y)| x != y).unwrap_or(0);
                    let show = |t: &str| {
                        t.lines().skip(first.saturating_sub(8)).take(12).collect::<Vec<_>>().join("\n")
                    };
                    panic!("fast:\n{}\nserde-saphyr:\n{}", show(&a), show(&b));
                }
                fast_docs += 1;
            }
        }
        fast_docs
    }

    #[test]
    fn fast_path_agrees_with_serde_saphyr() {
        let corpus = [
            include_str!(
                "../../tests/fixtures/corpus/statefulset-bitnami-mysql-primary-mysqladmin-status-all-three-probes.yaml"
            ),
            include_str!(
                "../../tests/fixtures/corpus/daemonset-calico-node-kube-system-exec-felix-bird-prestop-shutdown.yaml"
            ),
            include_str!(
                "../../tests/fixtures/corpus/deployment-microservices-demo-frontend-healthz-differing-cookie-headers.yaml"
            ),
            include_str!("../../tests/fixtures/corpus/cronjob-airflow-cleanup-pods-no-probes.yaml"),
            include_str!("../../tests/fixtures/cli/app.yaml"),
            include_str!("../../tests/fixtures/cli/list.json"),
        ];
        for text in corpus {
            assert!(agree(text) > 0);
        }
        let scalars = "a: yes\nb: On\nc: 0644\nd: 0x1F\ne: 1.5\nf: -7\ng: +7\nh: 1_000\ni: .5\nj: 1e3\nk: ~\n\
            l: null\nm: NULL\nnn: nULL\no: inf\np: nan\nq: 007\nr: -0\ns: 0\nt: 18446744073709551615\n\
            u: 99999999999999999999\nv: '5'\nw: \"on\"\nx: |\n  text\nyy: >\n  folded\n  text\nz: 2024-01-01\n\
            aa: 1:30\nac: 0o17\nad: 0b101\nae: 1.\naf: Y\nag: n\nai: 1 2\naj: multi\n  line\n\
            1: int key\ntrue: bool key\n0755: octal key\n";
        assert_eq!(agree(scalars), 1);
        // What the fast path leaves to serde-saphyr: anchors, aliases, tags, merge keys, duplicates.
        for text in [
            "a: &x 1\nb: *x\n",
            "a: !!str 1\n",
            "base: &b {x: 1}\nc:\n  <<: *b\n  y: 2\n",
            "a: 1\na: 2\n",
            "a: [1, 2\n",
            "? [complex]\n: key\n",
        ] {
            assert_eq!(agree(text), 0, "{text}");
        }
        assert_eq!(agree("a: 1\n"), 1);
    }

    #[test]
    fn end_skips_trailing_blank_lines_of_block_scalars() {
        let text = "c:\n  args: |\n    hi\n\n  x: 1\n";
        let n = docs(text).remove(0).node.unwrap().unwrap();
        let args = n.at(["c", "args"]).unwrap();
        assert_eq!(&text[..args.end(text)], "c:\n  args: |\n    hi");
        let c = n.get("c").unwrap();
        assert_eq!(&text[..c.end(text)], "c:\n  args: |\n    hi\n\n  x: 1");
    }
}
