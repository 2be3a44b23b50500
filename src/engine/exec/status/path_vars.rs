//! Files written through a variable that holds a literal path (s26's new user: `LOG=/tmp/h.log;
//! log() { echo "$*" >> "$LOG"; }` and `readonly STATUS_DIR=/tmp/health; ... echo up >
//! "$STATUS_DIR/cache"`). A target with an expansion was taken as a computed name, so as read by
//! the script, and the check that chose what was written stayed coupled (0 / 0 in bash 5.2 and
//! dash 0.5.12: nothing reads the file). Where the variable certainly holds one literal path at
//! every expansion of it ([`path_variables`]), the target is that path ([`resolve_path`]), and
//! whether the script names the file elsewhere is judged on the text with each such expansion
//! replaced by its value ([`named_elsewhere_in`]). Also here: whether the script names a file
//! elsewhere at all ([`named_elsewhere`], moved from `harmless`) and the words that may name one.

use super::super::flow::{code_view, mentions};

/// A variable that holds one literal path wherever the script expands it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::engine::exec) struct PathVar {
    /// Its name.
    pub(in crate::engine::exec) name: String,
    /// Its value, quotes removed.
    pub(in crate::engine::exec) value: String,
    /// The byte range of the statement that assigns it (start, end).
    pub(super) assignment: (usize, usize),
}

/// Words that start or end a compound command (or a function): an assignment after one of them
/// may not run, or may run after a read of the variable.
const COMPOUND: &[&str] = &[
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "while", "until", "do", "done", "select",
    "function",
];

/// The variables of the script `src` that hold a literal path at every expansion: each is assigned
/// once, by one of the simple statements the script starts with (before its first compound
/// command, group, subshell, function, list, pipeline, background job or here-document: so it has
/// certainly run before anything after it), as `NAME=VALUE`, `readonly NAME=VALUE` or `export
/// NAME=VALUE` alone, VALUE a literal path (letters, digits and `_ . / @ % + : , -`, quoted or
/// not: no expansion, glob, brace or `~`); and every other word spelling the name in the script
/// (comments and printed strings aside: `flow::code_view`) is an expansion `$NAME` or `${NAME}`
/// after it (a `read NAME`, `for NAME`, `local NAME`, `unset NAME`, `${NAME:=x}`, a second
/// assignment or the name in other text keeps it out). None in a script that runs text not read
/// here (`eval`, `source`, `.`), which may assign any name.
pub(in crate::engine::exec) fn path_variables(src: &str) -> Vec<PathVar> {
    if !src.contains('=') || !src.contains('$') {
        return Vec::new();
    }
    let code = code_view(src);
    let code: &str = &code;
    if mentions(code, &["eval", "source"]) || code.split_whitespace().any(|w| w == ".") {
        return Vec::new();
    }
    let lead = leading_simple_statements(code);
    let mut found: Vec<PathVar> = Vec::new();
    let mut start = 0;
    for piece in code[..lead].split_inclusive([';', '\n']) {
        let end = start + piece.len();
        // (A quote that does not close in the piece: a `;` or newline in a string split it.)
        if piece.matches('"').count() % 2 == 1 || piece.matches('\'').count() % 2 == 1 {
            break;
        }
        let statement = piece.trim_end_matches([';', '\n']).trim();
        let words: Vec<&str> = statement.split_whitespace().collect();
        let assignment = match words.as_slice() {
            [a] => Some(*a),
            ["readonly" | "export", a] => Some(*a),
            _ => None,
        };
        if let Some((name, value)) = assignment.and_then(|a| a.split_once('='))
            && super::super::context::is_ident(name)
            && let Some(value) = literal_path(value)
            && only_expanded_after(code, name, end)
        {
            found.push(PathVar { name: name.to_string(), value, assignment: (start, end) });
        }
        start = end;
    }
    found
}

/// Where the simple statements `code` starts with end: the first byte of a group, subshell,
/// substitution, list, pipeline, background job, redirection or quote, or of a word of
/// [`COMPOUND`] (the whole text when there is none).
fn leading_simple_statements(code: &str) -> usize {
    let b = code.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if matches!(c, b'{' | b'}' | b'(' | b')' | b'&' | b'|' | b'<' | b'>' | b'`' | b'\\') {
            return i;
        }
        if c.is_ascii_alphabetic() && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) {
            let end = b[i..]
                .iter()
                .position(|x| !(x.is_ascii_alphanumeric() || *x == b'_'))
                .map_or(b.len(), |e| i + e);
            if COMPOUND.contains(&&code[i..end]) {
                return i;
            }
            i = end;
            continue;
        }
        i += 1;
    }
    b.len()
}

/// Whether every word `name` of `code` other than its assignment (the statement ending at `after`)
/// is an expansion `$NAME` or `${NAME}` starting at or after `after`.
fn only_expanded_after(code: &str, name: &str, after: usize) -> bool {
    let b = code.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut own = 0;
    for (i, _) in code.match_indices(name) {
        let end = i + name.len();
        if (i > 0 && ident(b[i - 1])) || b.get(end).is_some_and(|c| ident(*c)) {
            continue;
        }
        let plain = i >= 1 && b[i - 1] == b'$';
        let braced = i >= 2 && b[i - 1] == b'{' && b[i - 2] == b'$' && b.get(end) == Some(&b'}');
        if (plain || braced) && i >= after {
            continue;
        }
        // (The assignment itself: `NAME=` before `after`.)
        if i < after && b.get(end) == Some(&b'=') && own == 0 {
            own += 1;
            continue;
        }
        return false;
    }
    own == 1
}

/// `value` (an assignment's value as written) without its quotes, when it is one literal path:
/// letters, digits and `_ . / @ % + : , -`, not empty, not starting with `~` (a tilde expands in
/// an assignment).
fn literal_path(value: &str) -> Option<String> {
    let v = value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
        .unwrap_or(value);
    (!v.is_empty() && v.bytes().all(|b| b.is_ascii_alphanumeric() || b"_./@%+:,-".contains(&b)))
        .then(|| v.to_string())
}

/// `word` (a file's name as written: `"$LOG"`, `"$STATUS_DIR/cache"`, `${D}/x`) with quotes
/// removed and each expansion of one of `vars` replaced by its value; `None` when it holds
/// another expansion, a substitution, a glob or a backslash.
pub(in crate::engine::exec) fn resolve_path(word: &str, vars: &[PathVar]) -> Option<String> {
    let unquoted: String = word.chars().filter(|c| !matches!(c, '"' | '\'')).collect();
    let resolved = substitute(&unquoted, vars);
    (!resolved.is_empty() && !resolved.contains(['$', '`', '\\', '*', '?', '[', '{', '~']))
        .then_some(resolved)
}

/// `t` with each `$NAME` (not followed by a letter, digit or `_`) and `${NAME}` of `vars`
/// replaced by the variable's value.
fn substitute(t: &str, vars: &[PathVar]) -> String {
    let mut out = t.to_string();
    for v in vars {
        if !out.contains(&v.name) {
            continue;
        }
        out = out.replace(&format!("${{{}}}", v.name), &v.value);
        let plain = format!("${}", v.name);
        let mut s = String::with_capacity(out.len());
        let mut rest = out.as_str();
        while let Some(i) = rest.find(&plain) {
            let after = &rest[i + plain.len()..];
            s.push_str(&rest[..i]);
            if after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
                s.push_str(&plain);
            } else {
                s.push_str(&v.value);
            }
            rest = after;
        }
        s.push_str(rest);
        out = s;
    }
    out
}

/// [`named_elsewhere`] of the file `target` written by the commands at the byte ranges `own` of
/// the script `src` (its comments and printed strings aside: `flow::code_view`), reading a
/// target through [`path_variables`]: its name is the path it
/// resolves to ([`resolve_path`]; any other expansion is a computed name, named), and the text it
/// is looked for in has each such variable's expansions replaced by its value, without the
/// statements that assign the variables the target expands (their value is no read of the file)
/// and without the `mkdir` commands none of whose words is the file's own name (creating a
/// directory reads none of its files, and a file written there leaves the directory as it was).
pub(in crate::engine::exec) fn named_elsewhere_in(target: &str, src: &str, own: &[(usize, usize)]) -> bool {
    // (Read as the shell runs it: a comment or a string `echo` only prints reads no file.)
    let code = code_view(src);
    let src: &str = &code;
    // (A shell operator ends the word: `>> /tmp/h.log;` writes `/tmp/h.log`.)
    let target = target.trim_end_matches([';', '&', '|', ')']);
    if !target.contains('$') {
        let unquoted = |t: &str| t.chars().filter(|c| !matches!(c, '"' | '\'' | '\\')).collect::<String>();
        let mut own = own.to_vec();
        own.extend(write_redirections(src, |w| unquoted(w) == unquoted(target)));
        return named_elsewhere(target, src, &own);
    }
    let vars = path_variables(src);
    let Some(path) = resolve_path(target, &vars) else {
        return true;
    };
    let mut blank: Vec<(usize, usize)> = own.to_vec();
    blank.extend(write_redirections(src, |w| resolve_path(w, &vars).as_deref() == Some(path.as_str())));
    blank.extend(
        vars.iter()
            .filter(|v| {
                target.contains(&format!("${}", v.name)) || target.contains(&format!("${{{}}}", v.name))
            })
            .map(|v| v.assignment),
    );
    let file = path.rsplit('/').find(|p| !p.is_empty() && *p != ".").unwrap_or("");
    blank.extend(
        mkdir_commands(src)
            .into_iter()
            .filter(|(s, e)| !naming_words(&substitute(&src[*s..*e], &vars)).contains(&file)),
    );
    // (Blanked byte by byte: the ranges are commands', on character boundaries.)
    let mut bytes = src.as_bytes().to_vec();
    for (start, end) in blank {
        for b in bytes.iter_mut().take(end.min(src.len())).skip(start) {
            *b = b' ';
        }
    }
    let Ok(blanked) = String::from_utf8(bytes) else {
        return true;
    };
    named_elsewhere(&path, &substitute(&blanked, &vars), &[])
}

/// Whether `src` has an output redirection to the literal file `target` (quotes aside) outside
/// the byte range `own` ([`write_redirections`]).
pub(super) fn written_elsewhere(target: &str, src: &str, own: std::ops::Range<usize>) -> bool {
    let unquoted = |t: &str| t.chars().filter(|c| !matches!(c, '"' | '\'' | '\\')).collect::<String>();
    let code = code_view(src);
    write_redirections(&code, |w| unquoted(w) == unquoted(target))
        .iter()
        .any(|(s, e)| *e <= own.start || *s >= own.end)
}

/// The byte ranges of the output redirections of `src` (`>`, `>>`, `>|`, `&>`, `&>>`, with a file
/// descriptor or not: `2>>`) whose word `same` takes for the file: each writes the file, none
/// reads it, so it is no naming of the file as data (s27: `C >> "$LOG" 2>&1 || echo down >>
/// "$LOG"; L`, LOG a literal path, exits 0 / 0 in bash 5.2 and dash 0.5.12 and was denied: the
/// second write counted as a read of the check's output). A `>&` duplicates a descriptor, a
/// `>(` is a process substitution, `<>` reads too: none is taken.
fn write_redirections(src: &str, same: impl Fn(&str) -> bool) -> Vec<(usize, usize)> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        // (`<>` opens the file for reading too.)
        if b[i] != b'>' || i > 0 && b[i - 1] == b'<' {
            i += 1;
            continue;
        }
        let start = i;
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'>' | b'|')) {
            j += 1;
        }
        if matches!(b.get(j), Some(b'&' | b'(')) {
            i = j + 1;
            continue;
        }
        while matches!(b.get(j), Some(b' ' | b'\t')) {
            j += 1;
        }
        let word_end =
            src[j..].find([' ', '\t', '\n', ';', '&', '|', ')', '<', '>']).map_or(src.len(), |e| j + e);
        let word = &src[j..word_end];
        if !word.is_empty() && same(word) {
            out.push((start, word_end));
        }
        i = word_end.max(i + 1);
    }
    out
}

/// The byte ranges of the `mkdir` commands of `src`: from the word `mkdir` where a command starts
/// to the next `;`, newline, `&`, `|`, `)` or `}` (one whose quotes do not close there is not
/// taken).
fn mkdir_commands(src: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (i, _) in src.match_indices("mkdir") {
        let before = src[..i].trim_end_matches([' ', '\t']);
        let starts = before.is_empty()
            || before.ends_with([';', '\n', '&', '|', '{', '('])
            || ["then", "do", "else"].iter().any(|k| before.ends_with(k));
        let after = src[i + 5..].chars().next();
        if !starts || !after.is_none_or(|c| c == ' ' || c == '\t') {
            continue;
        }
        let len = src[i..].find([';', '\n', '&', '|', ')', '}']).unwrap_or(src.len() - i);
        let end = i + len;
        let command = &src[i..end];
        if command.matches('"').count() % 2 == 1 || command.matches('\'').count() % 2 == 1 {
            continue;
        }
        out.push((i, end));
    }
    out
}

/// Whether the file `target` (a redirection's word, as written) may be named by the script
/// outside the byte ranges `own` (the writes themselves), conservatively (break9 A1: `"/tmp/s""9"`,
/// `/tmp/s\9`, `/tmp//s9`, `$D/s9`, `/tmp/s?`, `cd /tmp && grep -q up s9`, `grep -r up /tmp/`
/// all read `/tmp/s9` in bash 5.2 and dash 0.5.12): compared with quotes and backslashes
/// removed (`own`: byte ranges, start and end), it is named elsewhere when its name is computed or a glob, when its last component
/// or its directory's is a word elsewhere, when any other word holds a glob character (`*`, `?`,
/// `[`) or a brace expansion, or when the script changes directory (`cd`, `pushd`, `popd`).
pub(super) fn named_elsewhere(target: &str, src: &str, own: &[(usize, usize)]) -> bool {
    let unquoted = |t: &str| t.chars().filter(|c| !matches!(c, '"' | '\'' | '\\')).collect::<String>();
    let name = unquoted(target);
    if name.is_empty() || name.contains(['$', '`', '*', '?', '[', '{', '~']) {
        return true;
    }
    let mut rest = String::with_capacity(src.len());
    let mut from = 0;
    let mut ranges = own.to_vec();
    ranges.sort_unstable();
    for (start, end) in ranges {
        rest.push_str(src.get(from..start.max(from)).unwrap_or(""));
        rest.push(' ');
        from = from.max(end);
    }
    rest.push_str(src.get(from..).unwrap_or(""));
    // (`$?` is no glob: s22, `rc=$?; echo $rc > /tmp/rc`; nor a quoted `"$*"` or `"$@"`, whose
    // words are not expanded again. A `[` is one only with a `]` after it in its word: the test
    // command `[ $i -lt 3 ]` matches no file, s26.)
    let globs = rest
        .replace("$?", "")
        .replace("${?}", "")
        .replace("\"$*\"", "")
        .replace("\"$@\"", "")
        .split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '<' | '>'))
        .any(|w| w.contains(['*', '?']) || w.find('[').is_some_and(|i| w[i..].contains(']')));
    let rest = unquoted(&rest);
    if mentions(&rest, &["cd", "pushd", "popd"])
        || globs
        || (rest.contains('{') && (rest.contains(',') || rest.contains("..")))
    {
        return true;
    }
    let parts: Vec<&str> = name.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    let words = naming_words(&rest);
    // The file's own name, as any word; its directory's only where the directory itself is named
    // (`grep -r up /tmp/`, `find /tmp`), not inside another file's path (s24's new user: `test -f
    // /tmp/healthy || exit 1; pg_isready -h db || date >> /tmp/db-down; exit 0` exits 0 / 0 in
    // bash 5.2 and dash 0.5.12, and was denied because `tmp` was a word elsewhere).
    let mut from_end = parts.iter().rev();
    let (file, dir) = (from_end.next(), from_end.next());
    file.is_some_and(|f| words.contains(f)) || dir.is_some_and(|d| named_directories(&rest).contains(d))
}

/// The last path component of each word of `t` (split at blanks, shell operators and `=`): the
/// directories (or files) the text names as a whole (`/tmp/` and `/tmp` name `tmp`, `/tmp/x`
/// names `x`).
pub(super) fn named_directories(t: &str) -> Vec<&str> {
    t.split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '<' | '>' | '='))
        .filter_map(|w| w.split('/').rfind(|p| !p.is_empty() && *p != "."))
        .collect()
}

/// The words of `t` (runs of ASCII letters, digits, `_`, `.`, `-`) that may name a file: all but
/// a variable's name where it is expanded (`$rc`, `${rc`) or assigned (`rc=` at a word's start).
/// s22: `pg_isready -h db; rc=$?; echo $rc > /tmp/rc; exit` names the file `/tmp/rc` once (it
/// exits 0 / 0 in bash 5.2 and dash 0.5.12); `cat rc` after a `cd /tmp` would name it (`cd`
/// counts as naming every file: [`named_elsewhere`]).
pub(super) fn naming_words(t: &str) -> Vec<&str> {
    let b = t.as_bytes();
    let in_word = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-');
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !in_word(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && in_word(b[i]) {
            i += 1;
        }
        let word = &t[start..i];
        let before = start.checked_sub(1).map(|j| b[j]);
        let expanded = before == Some(b'$') || before == Some(b'{') && start >= 2 && b[start - 2] == b'$';
        let assigned = b.get(i) == Some(&b'=')
            && before.is_none_or(|c| c.is_ascii_whitespace() || matches!(c, b';' | b'&' | b'|' | b'('))
            && super::super::context::is_ident(word);
        if !(expanded || assigned) {
            out.push(word);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{PathVar, literal_path, named_elsewhere_in, path_variables, resolve_path, substitute};

    #[test]
    fn literal_paths_and_their_expansions() {
        assert_eq!(literal_path("/tmp/h.log").as_deref(), Some("/tmp/h.log"));
        assert_eq!(literal_path("\"/tmp/health\"").as_deref(), Some("/tmp/health"));
        assert_eq!(literal_path("'/tmp/x'").as_deref(), Some("/tmp/x"));
        for v in ["", "~/x", "/tmp/$X", "/tmp/*.log", "/tmp/{a,b}", "$(mktemp)", "\"/tmp/a b\""] {
            assert_eq!(literal_path(v), None, "{v}");
        }
        let vars = [
            PathVar { name: "D".into(), value: "/tmp/health".into(), assignment: (0, 0) },
            PathVar { name: "LOG".into(), value: "/tmp/h.log".into(), assignment: (0, 0) },
        ];
        assert_eq!(resolve_path("\"$D/cache\"", &vars).as_deref(), Some("/tmp/health/cache"));
        assert_eq!(resolve_path("${D}/cache", &vars).as_deref(), Some("/tmp/health/cache"));
        assert_eq!(resolve_path("\"$LOG\"", &vars).as_deref(), Some("/tmp/h.log"));
        // Another variable, a longer name, a substitution: computed.
        for w in ["$DX/cache", "$E", "\"$LOG$E\"", "$(echo x)", "$D/*"] {
            assert_eq!(resolve_path(w, &vars), None, "{w}");
        }
        assert_eq!(substitute("cat $D/x $DD ${LOG}", &vars), "cat /tmp/health/x $DD /tmp/h.log");
    }

    #[test]
    fn only_a_variable_certainly_holding_its_value_is_read() {
        let names = |src: &str| path_variables(src).into_iter().map(|v| v.name).collect::<Vec<_>>();
        assert_eq!(names("LOG=/tmp/h.log\nlog() { echo \"$*\" >> \"$LOG\"; }"), ["LOG"]);
        assert_eq!(names("set -eu\nreadonly D=/tmp/health\nmkdir -p \"$D\"; echo x > \"${D}/c\""), ["D"]);
        for src in [
            // In a branch, assigned twice, read, assigned by a function or a loop, before it.
            "if x; then LOG=/tmp/a; fi; echo > \"$LOG\"",
            "LOG=/tmp/a; LOG=/tmp/b; echo > $LOG",
            "LOG=/tmp/a; read LOG; echo > $LOG",
            "LOG=/tmp/a; f() { LOG=/tmp/b; }; echo > $LOG",
            "echo > $LOG; LOG=/tmp/a; echo > $LOG",
            "LOG=/tmp/a; for LOG in x; do :; done; echo > $LOG",
            "LOG=/tmp/a; : ${LOG:=x}; echo > $LOG",
            "LOG=/tmp/a; eval \"$X\"; echo > $LOG",
            "LOG=/tmp/a; . ./env; echo > $LOG",
            "LOG=$HOME/a; echo > $LOG",
            "LOG=/tmp/a cmd; echo > $LOG",
        ] {
            assert!(names(src).is_empty(), "{src}");
        }
    }

    #[test]
    fn a_file_written_through_a_variable_is_looked_for_by_its_path() {
        let src = "LOG=/tmp/h.log; C || echo down >> \"$LOG\"; L";
        let at = src.find("echo").unwrap();
        let own = [(at, at + "echo down >> \"$LOG\"".len())];
        assert!(!named_elsewhere_in("\"$LOG\"", src, &own));
        for src in [
            "LOG=/tmp/h.log; C || echo down >> \"$LOG\"; grep -q down \"$LOG\"",
            "LOG=/tmp/h.log; C || echo down >> \"$LOG\"; grep -q down /tmp/h.log",
            "LOG=/tmp/h.log; C || echo down >> \"$LOG\"; cat /tmp/*.log",
            "C || echo down >> \"$LOG\"; L",
        ] {
            let at = src.find("echo").unwrap();
            let own = [(at, at + "echo down >> \"$LOG\"".len())];
            assert!(named_elsewhere_in("\"$LOG\"", src, &own), "{src}");
        }
        // The directory made, not read; read whole, it is.
        let src = "D=/tmp/h; mkdir -p \"$D\"; C && echo up > \"$D/c\"; L";
        let at = src.find("echo").unwrap();
        let own = [(at, at + "echo up > \"$D/c\"".len())];
        assert!(!named_elsewhere_in("\"$D/c\"", src, &own));
        let src = "D=/tmp/h; mkdir -p \"$D\"; C && echo up > \"$D/c\"; grep -r up \"$D\"";
        assert!(named_elsewhere_in("\"$D/c\"", src, &own));
    }
}
