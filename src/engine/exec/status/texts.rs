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

/// Whether `src` may hold a `select` loop: it names `select` outside single-quoted strings and
/// double-quoted ones that run nothing (`psql -h db -c 'select 1'` holds none: s17).
pub(super) fn may_select(src: &str) -> bool {
    super::mentions(src, &["select"])
        && super::mentions(&blank_single_quoted(&super::harmless::blank_plain_strings(src)), &["select"])
}

/// `src` with the text inside each single-quoted string (outside double quotes) replaced by
/// blanks: no word in it is a keyword of this shell.
fn blank_single_quoted(src: &str) -> String {
    let (mut out, mut chars) = (String::with_capacity(src.len()), src.chars());
    let mut double = false;
    while let Some(c) = chars.next() {
        out.push(c);
        match c {
            '\\' => out.extend(chars.next()),
            '"' => double = !double,
            '\'' if !double => {
                for e in chars.by_ref() {
                    out.push(if e == '\'' { e } else { ' ' });
                    if e == '\'' {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}
