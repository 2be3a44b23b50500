//! The `full-warnings` audit annotation: the whole text of the warnings the response shortened
//! to [`MAX_WARNING_CHARS`] or left out past [`MAX_WARNINGS`] (s19 fresh-user pass: a cut warning
//! lost its end, and nothing kept it). Warnings are cut for the API server, which may truncate
//! one over 256 characters; an audit annotation has no such bound for a webhook, so the audit
//! log keeps what `kubectl` could not show.

use super::{MAX_WARNING_CHARS, MAX_WARNINGS};

/// Most bytes of the annotation's JSON: 10 KiB, the bound the API server puts on an audit
/// annotation a ValidatingAdmissionPolicy writes (Kubernetes API reference, `AuditAnnotation`
/// `valueExpression`: "truncated to 10kb"), so that a Pod of many containers cannot make the audit
/// event large. Warnings past it are counted in a last entry.
pub const MAX_FULL_WARNINGS_BYTES: usize = 10 * 1024;

/// A compact JSON list of the whole text of each warning (as given, escaped for display) that is
/// over [`MAX_WARNING_CHARS`] or past the first `MAX_WARNINGS - 1` distinct ones, in order;
/// `None` when every warning was returned whole.
pub(super) fn full_warnings_json(warnings: &[String]) -> Option<String> {
    let mut seen = std::collections::HashSet::new();
    let distinct: Vec<&String> = warnings.iter().filter(|w| seen.insert(w.as_str())).collect();
    let capped = distinct.len() > MAX_WARNINGS;
    let kept: Vec<String> = distinct
        .iter()
        .enumerate()
        .filter(|(i, w)| (capped && *i >= MAX_WARNINGS - 1) || w.chars().count() > MAX_WARNING_CHARS)
        .map(|(_, w)| crate::engine::display_safe(w).into_owned())
        .collect();
    if kept.is_empty() {
        return None;
    }
    let mut list: Vec<String> = Vec::new();
    // `[` and `]`, and room for the last entry that counts the rest.
    let mut size = 2 + 64;
    for (i, w) in kept.iter().enumerate() {
        let entry = serde_json::to_string(w).unwrap_or_default().len() + 1;
        if size + entry > MAX_FULL_WARNINGS_BYTES {
            list.push(format!("probegate: and {} more warnings", kept.len() - i));
            break;
        }
        size += entry;
        list.push(w.clone());
    }
    serde_json::to_string(&list).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_cut_or_dropped_warnings_are_kept_whole_within_the_bound() {
        let short = "probegate: container a: short (readiness-missing)".to_string();
        assert_eq!(full_warnings_json(std::slice::from_ref(&short)), None);
        // The bounds are exclusive: a warning of exactly MAX_WARNING_CHARS, and exactly
        // MAX_WARNINGS of them, are all returned whole.
        let exact: Vec<String> =
            (0..MAX_WARNINGS).map(|i| format!("{i:02}{}", "x".repeat(MAX_WARNING_CHARS - 2))).collect();
        assert_eq!(full_warnings_json(&exact), None);
        let long = format!("probegate: container a: {} (liveness-matches-readiness)", "word ".repeat(60));
        let json = full_warnings_json(&[short.clone(), long.clone(), long.clone()]).unwrap();
        assert_eq!(json, serde_json::to_string(&[&long]).unwrap());
        // Past the cap: the warnings not returned are kept, the returned ones are not.
        let many: Vec<String> = (0..15).map(|i| format!("probegate: w{i}")).collect();
        let list: Vec<String> = serde_json::from_str(&full_warnings_json(&many).unwrap()).unwrap();
        assert_eq!(list, many[MAX_WARNINGS - 1..].to_vec());
        // A Pod of many long warnings: at most the bound, the rest counted.
        let huge: Vec<String> = (0..200).map(|i| format!("{i} {long}")).collect();
        let json = full_warnings_json(&huge).unwrap();
        assert!(json.len() <= MAX_FULL_WARNINGS_BYTES, "{}", json.len());
        let list: Vec<String> = serde_json::from_str(&json).unwrap();
        assert!(list.last().unwrap().starts_with("probegate: and ") && list.len() > 10, "{list:?}");
    }

    #[test]
    fn the_list_is_filled_to_the_byte_bound_with_room_kept_for_the_count() {
        // The bound counts `[`, `]`, 64 bytes kept for the count entry, and each entry's JSON
        // string with its comma. Entries of 5,087 bytes (5,084 characters, quotes, comma): two
        // fill the bound exactly (2 + 64 + 2 * 5,087 = 10,240), which is within it.
        let at_bound: Vec<String> = (0..3).map(|i| format!("{i} {}", "x".repeat(5082))).collect();
        let json = full_warnings_json(&at_bound).unwrap();
        let list: Vec<String> = serde_json::from_str(&json).unwrap();
        assert_eq!(list, [at_bound[0].clone(), at_bound[1].clone(), "probegate: and 1 more warnings".into()]);
        assert!(json.len() <= MAX_FULL_WARNINGS_BYTES, "{}", json.len());
        // Entries of 407 bytes: 24 fit (2 + 64 + 25 * 407 = 10,241 is one byte over).
        let past: Vec<String> = (0..30).map(|i| format!("{i:02} {}", "y".repeat(401))).collect();
        let json = full_warnings_json(&past).unwrap();
        let list: Vec<String> = serde_json::from_str(&json).unwrap();
        assert_eq!(list.len(), 25, "{list:?}");
        assert_eq!(list[..24], past[..24]);
        assert_eq!(list[24], "probegate: and 6 more warnings");
        assert!(json.len() <= MAX_FULL_WARNINGS_BYTES, "{}", json.len());
    }
}
