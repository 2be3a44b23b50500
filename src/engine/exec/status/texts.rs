//! Words of a script's text the status walk's [`Rules`](super::Rules) read before any tree: an
//! exit status with a literal default (`exit ${RC:-0}`) or of one variable (`exit $RC`), whether
//! a function's body may read its caller's status, the functions a text defines (moved out of
//! `status.rs`, unchanged).

use super::reads_status_text;

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

/// `text` with each `exit` whose status is one named variable, `$RC`, `${RC}`, `"$RC"` or
/// `"${RC}"` (a name, not a positional or special parameter), written `exit 0`: for
/// [`Rules`](super::Rules), a status the walk follows as it follows `${RC:-0}`
/// ([`literal_defaults`]). A variable holds a check's status only through what the walk already
/// judges: a `$?` read by the statement after it (`RC=$?`, followed to where `RC` is read), an
/// assignment the check's outcome selects (`|| RC=1`, an `if` branch: coupled), or its output
/// (a substitution: coupled). Unquoted and empty it is a bare `exit`, the last status: that
/// `exit` reads `$?` ([`super::reads_status_text`]). s21: `curl -sf URL; echo checked; rc=$?;
/// exit $rc` exits 0 / 0 in bash 5.2 and dash 0.5.12 and was denied.
pub(super) fn variable_exits_as_literal(text: &str) -> String {
    variable_exits_as_literal_if(text, &|_| true)
}

/// [`variable_exits_as_literal`] for the variables `fixed` takes only.
pub(super) fn variable_exits_as_literal_if(text: &str, fixed: &dyn Fn(&str) -> bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("exit") {
        let from = i + "exit".len();
        out.push_str(&rest[..from]);
        rest = &rest[from..];
        let word_start =
            i == 0 || !out[..out.len() - 4].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
        let arg = rest.trim_start_matches([' ', '\t']);
        if word_start
            && arg.len() < rest.len()
            && let Some(len) = variable_word_len(arg)
            && fixed(variable_name(&arg[..len]))
        {
            out.push_str(" 0");
            rest = &arg[len..];
        }
    }
    out.push_str(rest);
    out
}

/// Whether `w` is the word `$NAME`, `${NAME}`, `"$NAME"` or `"${NAME}"` (a name, not a
/// positional or special parameter), whole.
pub(super) fn is_variable_word(w: &str) -> bool {
    variable_word_len(w) == Some(w.len())
}

/// The name of the word `$NAME`, `${NAME}`, `"$NAME"` or `"${NAME}"` ([`variable_word_len`]).
fn variable_name(w: &str) -> &str {
    w.trim_matches(|c| matches!(c, '"' | '$' | '{' | '}'))
}

/// The length of the word `$NAME`, `${NAME}`, `"$NAME"` or `"${NAME}"` at the start of `t`, when
/// the word ends there (a blank, `;`, `&`, `|`, `)`, `}`, the `'` closing a trap's action, or the
/// end follows).
fn variable_word_len(t: &str) -> Option<usize> {
    let quoted = t.starts_with('"');
    let inner = t.get(usize::from(quoted)..)?.strip_prefix('$')?;
    let braced = inner.starts_with('{');
    let name = &inner[usize::from(braced)..];
    let n = name.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(name.len());
    if n == 0 || name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let mut len = usize::from(quoted) + 1 + usize::from(braced) + n;
    for (wanted, close) in [(braced, '}'), (quoted, '"')] {
        if wanted {
            if !t[len..].starts_with(close) {
                return None;
            }
            len += 1;
        }
    }
    t[len..]
        .chars()
        .next()
        .is_none_or(|c| c.is_whitespace() || matches!(c, ';' | '&' | '|' | ')' | '}' | '\''))
        .then_some(len)
}

/// Whether the function body `body` (its text as written: `{ ... }` or `( ... )`) may read the
/// status its caller left, the one of the command before the call: a status read
/// ([`reads_status_text`]) before the body ran a command of its own. Judged conservatively: a
/// body whose first statement is a simple command that reads none, ended by `;` or a newline
/// (no keyword, `exit`, `return`, quote other than paired `"`, substitution, redirection,
/// pipe, `&`, group or comment), reads only the statuses its own commands give after it.
/// s21: `f() { curl -sf URL; echo checked; exit $?; }; f` exits 0 / 0 in bash 5.2 and dash
/// 0.5.12, and was denied as if `$?` could be the status before `f`.
pub(in crate::engine::exec) fn reads_caller_status(body: &str) -> bool {
    if !reads_status_text(body) {
        return false;
    }
    let Some(inner) = body.trim_start().strip_prefix(['{', '(']) else {
        return true;
    };
    let inner = inner.trim_start();
    // (The left side of `&&`/`||` runs first: `f() { check || st=$?; }` reads check's, s23.)
    let Some(end) = [";", "\n", "&&", "||"].iter().filter_map(|sep| inner.find(sep)).min() else {
        return true;
    };
    let first = inner[..end].trim();
    // (A declaration's status is its own, whatever its substitution runs: `local out=$(check);
    // rc=$?` reads the declaration's; one that reads `$?` itself is refused below.)
    let declares = matches!(
        first.split_whitespace().next(),
        Some("local" | "export" | "readonly" | "declare" | "typeset")
    );
    let bare = if declares { first.replace("$(", "").replace(')', "") } else { first.to_string() };
    let plain = bare
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b" \t-_./:=,@%+$\"".contains(&b) || b == b'{' || b == b'}')
        && first.bytes().filter(|b| *b == b'"').count() % 2 == 0
        && !first.split_whitespace().any(|w| w == "{" || w == "}")
        && first.matches("$(").count() == first.matches(')').count();
    let name = first.split_whitespace().next().unwrap_or("");
    let keyword = matches!(
        name,
        "if" | "then"
            | "else"
            | "elif"
            | "fi"
            | "do"
            | "done"
            | "case"
            | "esac"
            | "while"
            | "until"
            | "for"
            | "in"
            | "function"
            | "select"
            | "time"
            | "coproc"
            | "exit"
            | "return"
            | "break"
            | "continue"
    );
    !plain || keyword || first.is_empty() || reads_status_text(first)
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

/// The byte offsets in `text` where `word` stands as a whole word: not next to an ASCII letter,
/// digit, `_` or `-` (the word characters of `flow::mentions`). Read as written: comments and quoted
/// text included.
pub(super) fn whole_words<'a>(text: &'a str, word: &'a str) -> impl Iterator<Item = usize> + 'a {
    let bytes = text.as_bytes();
    let inside = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
    text.match_indices(word).map(|(i, _)| i).filter(move |&i| {
        (i == 0 || !inside(bytes[i - 1])) && bytes.get(i + word.len()).is_none_or(|&b| !inside(b))
    })
}

#[cfg(test)]
mod tests {
    use super::{
        defined_functions, literal_defaults, reads_caller_status, shadowing_call, variable_exits_as_literal,
    };

    #[test]
    fn only_a_named_variable_s_literal_numeric_default_is_read_as_the_status() {
        for (text, read) in [
            (" ${RC:-0}", " 0"),
            ("exit ${RC:-0}", "exit 0"),
            ("exit ${_rc:-3}; return ${EXIT_CODE-1}", "exit 3; return 1"),
            ("a ${A:-10} b ${B2-2} c", "a 10 b 2 c"),
            // A special parameter (never empty: `$?` itself), no default, a default that is no number, a
            // suffix removal (`${X%-0}` is X without a `-0` suffix: empty when X is unset).
            ("exit ${?:-0}", "exit ${?:-0}"),
            (
                "exit ${RC:-}; exit ${RC:-x}; exit ${X%-0}; exit ${RC",
                "exit ${RC:-}; exit ${RC:-x}; exit ${X%-0}; exit ${RC",
            ),
        ] {
            assert_eq!(literal_defaults(text), read, "{text}");
        }
    }

    #[test]
    fn a_body_reads_its_caller_s_status_only_before_a_command_of_its_own() {
        for (body, reads) in [
            ("{ echo x; exit $?; }", false),
            ("{ curl -sf http://db:80/x; rc=$?; exit $rc; }", false),
            ("(\n  x=1\n  exit $?\n)", false),
            ("{ echo \"$HOST\"; [ $? -eq 0 ]; }", false),
            ("{ echo x; }", false),
            // s23: the left of `&&`/`||` runs first; a declaration's status is its own.
            ("{ redis-cli -h cache ping || st=$?; }", false),
            ("{ local out=$(redis-cli -h cache ping); rc=$?; return $rc; }", false),
            // Read first, or after no sure command: a `$?` in the first statement (also past a
            // `;` in quotes), a keyword, `exit`/`return`, a group, a comment, no separator.
            ("{ rc=$?; echo x; exit $rc; }", true),
            ("{ [ $? -eq 0 ] || exit 1; }", true),
            ("{ echo \"x;$?\"; }", true),
            ("{ for i in 1; do [ $? -eq 0 ]; done; }", true),
            ("{ return\n echo $?; }", true),
            ("{ { echo; }; echo $?; }", true),
            ("{ # c;\n echo $?; }", true),
            ("{ echo $(f); echo $?; }", true),
            ("{ echo $(f) || exit $?; }", true),
            ("{ f $? && x; }", true),
            ("{ exit $rc; }", true),
            ("if true; then echo $?; fi", true),
        ] {
            assert_eq!(reads_caller_status(body), reads, "{body}");
        }
    }

    #[test]
    fn an_exit_of_one_named_variable_reads_as_a_literal_status() {
        for (text, read) in [
            ("c; rc=$?; exit $rc", "c; rc=$?; exit 0"),
            ("exit ${rc}; exit \"$rc\"\nexit \"${rc}\"", "exit 0; exit 0\nexit 0"),
            ("f() { exit $RC_2; }; exit\t$rc|| x", "f() { exit 0; }; exit 0|| x"),
            ("trap 'rc=$?; exit $rc' EXIT", "trap 'rc=$?; exit 0' EXIT"),
            // Kept: a positional or special parameter, a default, a longer word, another name
            // that ends in `exit`, no blank.
            ("exit $1; exit $?; exit $#; exit ${rc:-1}", "exit $1; exit $?; exit $#; exit ${rc:-1}"),
            (
                "exit $rc$x; exit ${rc; exit \"$rc; exit $rc/2; myexit $rc; exit$rc",
                "exit $rc$x; exit ${rc; exit \"$rc; exit $rc/2; myexit $rc; exit$rc",
            ),
        ] {
            assert_eq!(variable_exits_as_literal(text), read, "{text}");
        }
    }

    #[test]
    fn a_function_named_like_a_command_counts_only_where_it_is_named_again() {
        // (bash 5.2 defines `[`, `/bin/true` and `:` as function names.)
        assert_eq!(defined_functions("[() { :; }; /bin/true() { :; }; :() { :; }"), ["[", "/bin/true", ":"]);
        assert_eq!(defined_functions("a=(x y); [ -f x ] && f () { :; }"), ["f"]);
        // No name, no function: `()` at the start of a string's segment, a quoted name (bash 5.2:
        // "not a valid identifier", dash 0.5.12: a syntax error).
        assert!(defined_functions("echo 'usage: a | () b'; function \"f\" { :; }").is_empty());
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

/// Whether `t` is `${VAR:-word}`, `${VAR-word}`, `${VAR:+word}` or `${VAR+word}` with a literal
/// `word` (no `$`, backquote, brace, quote or backslash): its value is VAR's or that text, and it
/// neither assigns (`:=`) nor ends the shell (`:?`) (POSIX 2.6.2 "Parameter Expansion"; s25: `local
/// out=$(check); echo "db says: ${out:-nothing}" >/dev/null` only writes it, 0 / 0 in bash 5.2 and
/// dash 0.5.12 under `set -e`).
pub(super) fn is_literal_default_of(t: &str, var: &str) -> bool {
    let Some(rest) = t.strip_prefix("${").and_then(|r| r.strip_suffix('}')).and_then(|r| r.strip_prefix(var))
    else {
        return false;
    };
    let word = [":-", ":+", "-", "+"].iter().find_map(|op| rest.strip_prefix(op));
    !var.is_empty() && word.is_some_and(|w| !w.contains(['$', '`', '{', '}', '"', '\'', '\\']))
}

#[cfg(test)]
mod expansion_text_tests {
    use super::{is_braced_expansion_of, is_expansion_of, is_literal_default_of};

    #[test]
    fn a_literal_default_is_read_as_its_variable() {
        for (t, ok) in [
            ("${V:-nothing}", true),
            ("${V-}", true),
            ("${V:+set}", true),
            ("${V:=x}", false),
            ("${V:?gone}", false),
            ("${V:-$X}", false),
            ("${VV:-x}", false),
            ("${V%x}", false),
            ("$V", false),
        ] {
            assert_eq!(is_literal_default_of(t, "V"), ok, "{t}");
        }
    }

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
