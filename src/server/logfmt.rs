//! Request- and policy-supplied strings in text log fields: logfmt-style quoting, so that a value
//! can neither add a field nor forge a line.

use super::log_safe;

/// Whether log lines are JSON (`serve --log-format json`), set once at start
/// ([`set_json_fields`]).
static JSON_FIELDS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Says that log lines are written as JSON objects (`serve --log-format json`, whose formatter
/// quotes and escapes every value): [`log_field`] then only cuts a value and escapes its control
/// characters, and adds no quotes. Called once, before the first line is logged.
pub fn set_json_fields(json: bool) {
    JSON_FIELDS.store(json, std::sync::atomic::Ordering::Relaxed);
}

/// A request- or policy-supplied string (uid, namespace, kind, name, path, a file path, the
/// policy's source) for one text log field, logfmt-style: as it is when it holds nothing to
/// escape (`namespace=shop`), else in double quotes with `"` and `\` escaped with a backslash and
/// control characters (newlines, NUL, escapes, bidi controls) as `\u{..}` ([`log_safe`]):
/// `source="<embedded default>"`, `name="a\"b\u{a}c"`. Cut at 253 characters first (the longest
/// valid name). Inside the quotes a crafted value can neither end the value (its `"` are escaped)
/// nor start a line, so it cannot add `key=value` fields or forge a line (s22 break-it pass: an
/// override named `a\nforged line` was written raw). Until s24 spaces and `=` were escaped as
/// `\u{20}` and `\u{3d}` instead of quoting: `source=<embedded\u{20}default>`.
pub(crate) fn log_field(s: &str) -> std::borrow::Cow<'_, str> {
    let cut = crate::engine::excerpt(s, 253);
    // A JSON log quotes and escapes each value itself: quotes of ours would be part of the value
    // (`"source":"\"<embedded default>\""`, s24).
    if JSON_FIELDS.load(std::sync::atomic::Ordering::Relaxed) {
        return match cut {
            std::borrow::Cow::Borrowed(c) => log_safe(c),
            std::borrow::Cow::Owned(c) => log_safe(&c).into_owned().into(),
        };
    }
    let plain = |c: &str| !c.contains(['"', '\\', ' ', '=']);
    // The usual case, a short name with nothing to escape, is logged as it is (no allocation).
    if let std::borrow::Cow::Borrowed(cut) = cut
        && matches!(log_safe(cut), std::borrow::Cow::Borrowed(_))
        && plain(cut)
    {
        return std::borrow::Cow::Borrowed(cut);
    }
    // Backslashes first: the `\u{..}` escapes added after them stay single.
    let escaped = cut.replace('\\', "\\\\").replace('"', "\\\"");
    format!("\"{}\"", log_safe(&escaped)).into()
}

/// One item of a list field ([`log_list`]), Debug-style and unquoted: as [`log_field`]'s quoted
/// form, with spaces, `=` and `,` escaped too (`\u{20}`, `\u{3d}`, `\u{2c}`) instead of quotes, so
/// that one item cannot pass for two nor add a field (valid names contain none of them).
fn log_list_item(s: &str) -> std::borrow::Cow<'_, str> {
    let cut = crate::engine::excerpt(s, 253);
    let plain = |c: &str| !c.contains(['"', '\\', ' ', '=', ',']);
    if let std::borrow::Cow::Borrowed(cut) = cut
        && matches!(log_safe(cut), std::borrow::Cow::Borrowed(_))
        && plain(cut)
    {
        return std::borrow::Cow::Borrowed(cut);
    }
    let quoted = cut.replace('\\', "\\\\").replace('"', "\\\"");
    log_safe(&quoted).replace(' ', "\\u{20}").replace('=', "\\u{3d}").replace(',', "\\u{2c}").into()
}

/// Names for one log field (the overrides applied), each as [`log_list_item`], joined with `,`.
pub(crate) fn log_list<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    names.into_iter().map(log_list_item).collect::<Vec<_>>().join(",")
}
