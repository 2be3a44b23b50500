//! Blanking a field out of a policy's text, so that [`super::parse_all`] can read on past an error
//! and report the next one.

use crate::manifest::located::{NodeValue, parse_document_at};

/// The tokens of a serde path (`overrides[0].rules.probe-timeout`): `overrides`, `0`, `rules`,
/// `probe-timeout`. `None` for a path that is not of that shape (an empty segment).
pub(super) fn path_tokens(field: &str) -> Option<Vec<String>> {
    let mut tokens = Vec::new();
    for segment in field.split('.') {
        let (name, mut rest) = segment.split_once('[').map_or((segment, ""), |(n, r)| (n, r));
        if name.is_empty() {
            return None;
        }
        tokens.push(name.to_string());
        while !rest.is_empty() {
            let (index, after) = rest.split_once(']')?;
            index.parse::<usize>().ok()?;
            tokens.push(index.to_string());
            rest = after.strip_prefix('[').unwrap_or(after);
            if !after.is_empty() && !after.starts_with('[') {
                return None;
            }
        }
    }
    Some(tokens)
}

/// `text` with the mapping entry at a dotted field path (`rules.startup-probe.budgetSeconds`)
/// replaced by spaces (with its separating comma in a flow mapping); newlines are kept, so lines
/// and columns do not move. `None` when the path does not name a mapping entry of the document, or
/// names a list item or the only member of one.
pub(super) fn blank_field(text: &str, field: &str) -> Option<String> {
    let tokens = path_tokens(field)?;
    let root = parse_document_at(text, 0, 1).ok()??;
    let (last, parents) = tokens.split_last()?;
    // A list item itself (`overrides[1]`) is not blanked: the items after it would shift and the
    // next error would name the wrong index. A member inside one (`overrides[0].rules...`) is
    // (break-it pass s22: only the first error of an override was reported).
    if last.parse::<usize>().is_ok() {
        return None;
    }
    let parent = root.at(parents.iter().map(String::as_str))?;
    let NodeValue::Map(entries) = &parent.value else { return None };
    // The only member of a list item: blanked, the item would read as `null`, an error that is not
    // in the file.
    if entries.len() == 1 && parents.last().is_some_and(|p| p.parse::<usize>().is_ok()) {
        return None;
    }
    let (key, value) = entries.iter().find(|(k, _)| k.name == *last)?;
    let start = key.pos.offset;
    let mut end = value.end(text).max(key.pos.offset + key.pos.len);
    // A key without a value (`budgetSecond:`) ends at its colon: left behind, the colon alone would
    // read as an entry with a null key, a second error that is not in the file.
    if value.value == NodeValue::Null {
        let rest = &text[end..];
        let blanks = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        if rest[blanks..].starts_with(':') {
            end += blanks + 1;
        }
    }
    // A flow collection's closing brackets are past its last scalar (`{action: deny}`).
    let depth = |s: &str| {
        s.chars().fold(0i32, |d, c| d + i32::from(matches!(c, '{' | '[')) - i32::from(matches!(c, '}' | ']')))
    };
    let mut open = depth(&text[start..end]);
    while open > 0 {
        let rest = &text[end..];
        let skip = rest.len() - rest.trim_start().len();
        match rest[skip..].chars().next() {
            Some('}' | ']') => {
                end += skip + 1;
                open -= 1;
            }
            _ => break,
        }
    }
    // In a flow mapping, the comma after the entry goes too (`{a: 1, b: x}` -> `{a: 1,     }`).
    let rest = &text[end..];
    let after = rest.len() - rest.trim_start_matches([' ', '\t']).len();
    if rest[after..].starts_with(',') {
        end += after + 1;
    }
    let blanked: String =
        text[start..end].chars().map(|c| if c == '\n' || c == '\r' { c } else { ' ' }).collect();
    Some(format!("{}{blanked}{}", &text[..start], &text[end..]))
}

#[cfg(test)]
mod tests {
    use super::{blank_field, path_tokens};

    #[test]
    fn paths_split_into_tokens_with_list_indices() {
        assert_eq!(
            path_tokens("overrides[0].rules.probe-timeout").unwrap(),
            ["overrides", "0", "rules", "probe-timeout"]
        );
        assert_eq!(path_tokens("a[1][2].b").unwrap(), ["a", "1", "2", "b"]);
        assert_eq!(path_tokens("rules").unwrap(), ["rules"]);
        assert!(path_tokens("a..b").is_none());
        assert!(path_tokens("a[x]").is_none());
        assert!(path_tokens("a[1]b").is_none());
    }

    #[test]
    fn a_member_inside_a_list_item_is_blanked_the_item_itself_is_not() {
        let text = "overrides:\n  - name: a\n    bogus: 1\n  - name: b\n";
        let blanked = blank_field(text, "overrides[0].bogus").unwrap();
        assert_eq!(blanked, "overrides:\n  - name: a\n            \n  - name: b\n");
        assert!(blank_field(text, "overrides[1]").is_none());
        // The only member of an item stays: blanked, the item would read as null.
        assert!(blank_field("overrides:\n  - bogus: 1\n", "overrides[0].bogus").is_none());
    }
}
