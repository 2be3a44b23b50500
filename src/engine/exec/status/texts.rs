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
        // (`:() { exit 1; }`, `[() { ...; }` and `/bin/true() { ...; }` are functions bash 5.2
        // defines and calls for `:`, `[` and `/bin/true`: a name ends at a blank or an operator.)
        let end =
            seg.find(|c: char| c.is_whitespace() || "()<>;&|{}'\"`$=\\".contains(c)).unwrap_or(seg.len());
        if end > 0
            && (segment.trim_start().starts_with("function ") || seg[end..].trim_start().starts_with("()"))
        {
            out.push(seg[..end].to_string());
        }
    }
    out
}

/// The first name of a function `src` defines, or of `known` (the caller's functions), that the
/// analysis reads by name ([`super::data::read_by_name`]: `test`, `[`, `echo`, `exit`, `true`,
/// `cat`, `grep`, `read`, ...) and that `src` names besides its definitions: the script runs
/// the function there, where the walk and its replay would run the command (s19: `echo() { :;
/// }; case $(pg_isready -h db; echo $?) in 2) exit 1;; esac` exits 0 / 0 in bash 5.2 and dash
/// 0.5.12, and was denied). A name counts wherever it is a word, quotes and backslashes removed
/// (`\echo`, `"test"`, an argument too): a function never named again changes nothing.
pub(in crate::engine::exec) fn shadowing_call(src: &str, known: &[&str]) -> Option<String> {
    let defined = defined_functions(src);
    let candidates = known.iter().copied().chain(defined.iter().map(String::as_str));
    let mut words: Option<Vec<String>> = None;
    for name in candidates.filter(|n| super::data::read_by_name(n)) {
        let words = words.get_or_insert_with(|| {
            let bare: String = src.chars().filter(|c| !matches!(c, '\\' | '\'' | '"')).collect();
            bare.split(|c: char| c.is_whitespace() || "()<>;&|{}`=".contains(c))
                .filter(|w| !w.is_empty())
                .map(str::to_string)
                .collect()
        });
        let named = words.iter().filter(|w| *w == name).count();
        if named > defined.iter().filter(|d| *d == name).count() {
            return Some(name.to_string());
        }
    }
    None
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

#[cfg(test)]
mod tests {
    use super::{defined_functions, shadowing_call};

    #[test]
    fn a_function_named_like_a_command_counts_only_where_it_is_named_again() {
        // (bash 5.2 defines `[`, `/bin/true` and `:` as function names.)
        assert_eq!(defined_functions("[() { :; }; /bin/true() { :; }; :() { :; }"), ["[", "/bin/true", ":"]);
        assert_eq!(defined_functions("a=(x y); [ -f x ] && f () { :; }"), ["f"]);
        for (src, known, found) in [
            ("test() { return 1; }; c; rc=$?; [ $rc -ne 3 ]", &[][..], None),
            ("test() { return 1; }; c; rc=$?; test $rc -ne 3", &[], Some("test")),
            ("echo() { :; }; x=$(c; \\echo $?)", &[], Some("echo")),
            ("function exit { :; }; c; 'exit' $?", &[], Some("exit")),
            ("f() { :; }; c | cat", &[], None),
            ("log() { echo; }; c | grep -q x", &[], None),
            ("c | grep -q x", &["grep"], Some("grep")),
            ("c | grep -q x", &["f"], None),
            ("f() { echo \"test\"; }; f", &[], None),
            ("echo() { echo x; }; c", &[], Some("echo")),
        ] {
            assert_eq!(shadowing_call(src, known).as_deref(), found, "{src}");
        }
    }
}

/// Whether `t` is `${var}`, without a `format!` to compare with.
pub(super) fn is_braced_expansion_of(t: &str, var: &str) -> bool {
    t.strip_prefix("${").and_then(|t| t.strip_suffix('}')) == Some(var)
}

/// Whether `t` is `$var` or `${var}`, without a `format!` to compare with.
pub(super) fn is_expansion_of(t: &str, var: &str) -> bool {
    t.strip_prefix('$') == Some(var) || is_braced_expansion_of(t, var)
}

#[cfg(test)]
mod expansion_text_tests {
    use super::{is_braced_expansion_of, is_expansion_of};

    /// The two spellings compare as the `format!`s they replace did (`t == format!("${var}")`,
    /// `t == format!("${{{var}}}")`).
    #[test]
    fn an_expansion_is_its_variable_written_plain_or_braced() {
        for (t, plain, braced) in [
            ("$V", true, false),
            ("${V}", true, true),
            ("${V:-x}", false, false),
            ("$VV", false, false),
            ("${V", false, false),
            ("$", false, false),
            ("V", false, false),
            ("${V}}", false, false),
        ] {
            assert_eq!(is_expansion_of(t, "V"), t == "$V" || t == "${V}", "{t}");
            assert_eq!(is_expansion_of(t, "V"), plain, "{t}");
            assert_eq!(is_braced_expansion_of(t, "V"), braced, "{t}");
        }
    }
}
