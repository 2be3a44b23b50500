//! Words of a script's text the status walk's [`Rules`](super::Rules) read before any tree: an
//! exit status with a literal default (`exit ${RC:-0}`), the functions a text defines (moved
//! out of `status.rs`, unchanged).

/// `text` with each variable expansion that has a literal numeric default, `${RC:-0}` or
/// `${RC-0}`, replaced by its default: as an `exit`/`return` status it is never
/// empty, so never the bare `exit` that returns the last command's status (POSIX, Shell Command
/// Language, 2.6.2 "Parameter Expansion"). Its value is the default or one set by the environment
/// or by the script, whose assignments the walk follows (`pg_isready -h db; RC=$?; exit ${RC:-0}`
/// stays denied). bash 5.2 and dash 0.5.12, with the database down: `pg_isready -h db; exit
/// ${RC:-0}` exits 0. Not a positional or special parameter (`${1:-0}`, `${?:-0}`).
pub(super) fn literal_defaults(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let default = after.split_once('}').and_then(|(inner, _)| {
            let (name, default) = inner.split_once(":-").or_else(|| inner.split_once('-'))?;
            (name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                && !default.is_empty()
                && default.bytes().all(|b| b.is_ascii_digit()))
            .then_some((default, inner.len()))
        });
        match default {
            Some((default, len)) => {
                out.push_str(default);
                rest = &after[len + 1..];
            }
            None => {
                out.push_str("${");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The names of the functions `src` defines (`name() ...`, `function name ...`), at the start of
/// a line or after `;`, `&`, `|`, `{` (as `script::defines_function` finds them).
pub(in crate::engine::exec) fn defined_functions(src: &str) -> Vec<String> {
    let mut out = Vec::new();
    // (A definition holds `()` or `function `: a script without either has none.)
    if !src.contains("()") && !src.contains("function ") {
        return out;
    }
    for segment in src.split(['\n', ';', '&', '|', '{']) {
        let seg = segment.trim_start();
        let seg = seg.strip_prefix("function ").map_or(seg, str::trim_start);
        let end =
            // (`:() { exit 1; }` is a function bash 5.2 defines and calls for `:`.)
            seg.find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ':'))).unwrap_or(seg.len());
        if end > 0
            && (segment.trim_start().starts_with("function ") || seg[end..].trim_start().starts_with("()"))
        {
            out.push(seg[..end].to_string());
        }
    }
    out
}
