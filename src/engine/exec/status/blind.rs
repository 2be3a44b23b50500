//! Files the script reads only in ways blind to what they hold (s26, fresh25's new user: 07, 39,
//! 44). A check's outcome written to a file (`if C; then echo up > F; else echo down > F; fi`, or
//! a here-document holding `$(C && echo up || echo down)` given to `cat > F`) changes only the
//! file's contents: when every other command naming `F` tests only that it exists or is not empty
//! (`test -s F`, `[ -f F ]`), removes it (`rm -f F`, a trap's cleanup) or copies it to a file
//! nothing reads (`cp F /tmp/last || :`), the script's status cannot follow the outcome.
//! `grep -q up F`, `cat F`, `[ "$(cat F)" = up ]` read the contents: coupled.
//!
//! Checked with bash 5.2.15 and dash 0.5.12 and stub clients (`redis-cli` 0 up, 1 down; up /
//! down): `if C; then echo up > /tmp/s; else echo down > /tmp/s; fi; test -s /tmp/s` and the
//! `tmp=$(mktemp); trap 'rm -f "$tmp"' EXIT; ...; cp "$tmp" /tmp/last 2>/dev/null || :; kill -0
//! 1` form exit 0 / 0; `...; grep -q up /tmp/s` 0 / 1.
//!
//! A text scan, conservative as `harmless::named_elsewhere`: a name computed or globbed, a `cd`,
//! a brace expansion, a relative path, or any other command naming the file (or its directory)
//! keeps it read.

use crate::engine::exec::kinds::KindName;
use tree_sitter::Node;

use super::super::flow::mentions;
use super::super::shell::Walk;
use super::harmless::{assignments_of, named_directories, named_elsewhere, reads_status_text};
use super::{is_statement, text};

/// Words before a command's name that are no part of it.
const KEYWORDS: &[&str] = &["if", "then", "elif", "else", "do", "while", "until", "!"];

/// The variable a redirection target names as a whole (`$F`, `${F}`, `"$F"`, `"${F}"`).
pub(super) fn variable_of(target: &str) -> Option<&str> {
    let t = target.strip_prefix('"').and_then(|t| t.strip_suffix('"')).unwrap_or(target);
    let t = t.strip_prefix('$')?;
    let name = t.strip_prefix('{').and_then(|t| t.strip_suffix('}')).unwrap_or(t);
    super::super::context::is_ident(name).then_some(name)
}

/// Whether a write of `args` by `program` (`echo` or `printf`, arguments as written) puts at least
/// one byte in its file: `echo` always writes its newline (no option: the caller's), `printf` a
/// literal format with no `%` or `\c`.
pub(super) fn writes_something(program: &str, args: &[&str]) -> bool {
    match program {
        "echo" => true,
        "printf" => args.first().is_some_and(|f| {
            let f = f.trim_matches(['\'', '"']);
            !f.is_empty() && !f.contains('%') && !f.contains("\\c")
        }),
        _ => false,
    }
}

/// Whether every naming of the file `target` (a redirection's word as written: an absolute
/// literal path, or a variable [`variable_of`] assigned once a plain value before `at`,
/// `trap_values::plain_value`) in `src` outside the byte ranges `own` (the writes) is a command
/// blind to its contents (see the module docs; `-s` only when `nonempty`: every write puts
/// something in it).
pub(in crate::engine::exec) fn blind_readers_only(
    target: &str,
    src: &str,
    own: &[(usize, usize)],
    at: usize,
    nonempty: bool,
) -> bool {
    blind(target, src, own, at, nonempty, 0)
}

/// [`blind_readers_only`], `depth` copies deep (`cp F G`, then `G`'s readers).
fn blind(target: &str, src: &str, own: &[(usize, usize)], at: usize, nonempty: bool, depth: usize) -> bool {
    if depth > 2 {
        return false;
    }
    // (Read as the shell runs it: a comment names no file, s25's `flow::code_view`.)
    let code = super::super::flow::code_view(src);
    let src: &str = &code;
    let mut rest = src.as_bytes().to_vec();
    for (start, end) in own {
        if let Some(r) = rest.get_mut(*start..*end) {
            r.fill(b' ');
        }
    }
    let Ok(rest) = String::from_utf8(rest) else {
        return false;
    };
    let unquoted: String = rest.chars().filter(|c| !matches!(c, '"' | '\'' | '\\')).collect();
    // (A `[` or `]` standing alone is the test command, no glob; `$?` no glob either.)
    let globbing = unquoted
        .replace("$?", "")
        .replace("${?}", "")
        .split_whitespace()
        .filter(|w| !matches!(*w, "[" | "]" | "[[" | "]]"))
        .any(|w| w.contains(['*', '?', '[']));
    if mentions(&unquoted, &["cd", "pushd", "popd"])
        || globbing
        || (unquoted.contains('{') && (unquoted.contains(',') || unquoted.contains("..")))
        || mentions(&unquoted, &["eval", "source", "alias"])
        || unquoted.split_whitespace().any(|w| w == ".")
    {
        return false;
    }
    if let Some(var) = variable_of(target) {
        if assignments_of(var, src) != 1
            || !super::trap_values::plain_value(src, var, at)
            || src.contains("${!")
            || mentions(
                src,
                &["export", "declare", "typeset", "readonly", "local", "env", "printenv", "allexport"],
            )
        {
            return false;
        }
        // (A literal value is that file, named as itself too, but in its assignment.)
        let assignment = occurrences(src, var).into_iter().find(|&i| src[i + var.len()..].starts_with('='));
        let value = assignment.map_or("", |i| &src[i + var.len() + 1..]);
        let value = value.split([' ', '\t', '\n', ';', '&', '|']).next().unwrap_or("");
        if let Some(i) = assignment
            && value.trim_matches('"').starts_with('/')
        {
            let mut own = own.to_vec();
            own.push((i, i + var.len() + 1 + value.len()));
            if !blind(value.trim_matches('"'), src, &own, at, nonempty, depth + 1) {
                return false;
            }
        }
        // (A name spelt with quotes or backslashes, `"t"mp`, is one the scan below would miss.)
        if occurrences(&rest, var).len() != occurrences(&unquoted, var).len() {
            return false;
        }
        // (`/tmp/last` holds the word `tmp`, a path's part, no variable.)
        return occurrences(&rest, var).iter().filter(|&&i| !rest[..i].ends_with('/')).all(|&i| {
            let assigned = rest[i + var.len()..].starts_with('=');
            let expanded = rest[..i].ends_with('$') || rest[..i].ends_with("${");
            assigned || expanded && blind_command(&rest, i, target, src, own, at, nonempty, depth)
        });
    }
    let name: String = target.chars().filter(|c| !matches!(c, '"' | '\'' | '\\')).collect();
    if !name.starts_with('/') || name.contains(['$', '`', '*', '?', '[', '{', '~']) {
        return false;
    }
    let parts: Vec<&str> = name.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    let mut from_end = parts.iter().rev();
    let (Some(file), dir) = (from_end.next(), from_end.next()) else {
        return false;
    };
    // (A variable's name where it is assigned, `tmp=$(mktemp)`, names no directory.)
    let values: String = unquoted
        .split_inclusive(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')'))
        .map(|w| match w.split_once('=') {
            Some((name, value)) if super::super::context::is_ident(name) => value,
            _ => w,
        })
        .collect::<Vec<_>>()
        .join(" ");
    // (Its directory named as a whole, `test -d /tmp`, only by commands as blind: s27.)
    if let Some(d) = dir {
        let named = named_directories(&values).iter().filter(|w| *w == d).count();
        let path = format!("/{}", parts[..parts.len() - 1].join("/"));
        let whole = |t: &str| -> Vec<usize> {
            let b = t.as_bytes();
            let in_path = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-' | b'/');
            t.match_indices(path.as_str())
                .map(|(i, _)| i)
                .filter(|&i| {
                    (i == 0 || !in_path(b[i - 1])) && b.get(i + path.len()).is_none_or(|c| !in_path(*c))
                })
                .collect()
        };
        let found = whole(&rest);
        if named != 0
            && (found.len() != named
                || whole(&unquoted).len() != named
                || !found.iter().all(|&i| blind_command(&rest, i, &path, src, own, at, nonempty, depth)))
        {
            return false;
        }
    }
    // (`"/tmp/s""9"` and `/tmp/s\9` name `/tmp/s9`: a spelling the scan below would miss.)
    let found = occurrences(&rest, file);
    if found.len() != occurrences(&unquoted, file).len() {
        return false;
    }
    found.iter().all(|&i| blind_command(&rest, i, &name, src, own, at, nonempty, depth))
}

/// Where `word` is found in `t` as a whole word (not inside a longer run of letters, digits,
/// `_`, `.`, `-`).
fn occurrences(t: &str, word: &str) -> Vec<usize> {
    let b = t.as_bytes();
    let inside = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-');
    t.match_indices(word)
        .map(|(i, _)| i)
        .filter(|&i| (i == 0 || !inside(b[i - 1])) && b.get(i + word.len()).is_none_or(|c| !inside(*c)))
        .collect()
}

/// Whether the naming of the file at byte `i` of `rest` is the operand `target` (as a whole word,
/// quotes removed) of a command blind to the file's contents: `test`/`[`/`[[` of `-e`, `-f`, `-r`,
/// `-w` (and `-s` when `nonempty`), `rm` with options of `-f`, `-r`, `-R`, `-v`, or `cp F G` (options
/// of `-f`, `-p`, `-v`) where `G` (an absolute literal path) is read only so in turn; its errors
/// may go to `/dev/null`.
#[allow(clippy::too_many_arguments)]
fn blind_command(
    rest: &str,
    i: usize,
    target: &str,
    src: &str,
    own: &[(usize, usize)],
    at: usize,
    nonempty: bool,
    depth: usize,
) -> bool {
    let stop = |c: char| matches!(c, ';' | '\n' | '&' | '|' | '(' | ')' | '{' | '}' | '\'' | '`');
    let start = rest[..i].rfind(stop).map_or(0, |s| s + 1);
    let end = rest[i..].find(stop).map_or(rest.len(), |e| i + e);
    let unquote = |w: &str| w.chars().filter(|c| !matches!(c, '"' | '\\')).collect::<String>();
    let target = unquote(target);
    let words: Vec<String> = rest[start..end]
        .split_whitespace()
        .skip_while(|w| KEYWORDS.contains(w))
        .filter(|w| !matches!(*w, "2>/dev/null" | ">/dev/null" | "1>/dev/null" | "2>&1"))
        .map(unquote)
        .collect();
    // (The operand holding byte `i` is the target as a whole.)
    if words.iter().filter(|w| **w == target).count() != 1 {
        return false;
    }
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let size_or_kind =
        |op: &str| matches!(op, "-e" | "-f" | "-d" | "-r" | "-w" | "-x") || (nonempty && op == "-s");
    // (`cat F` alone: it writes the contents where nothing reads them, its status is whether it
    // could read the file; piped, substituted or redirected its output is read. s27.)
    let before = rest[..start].trim_end_matches([' ', '\t']);
    let after = rest[end..].trim_start_matches([' ', '\t']);
    let output_unread = (before.is_empty()
        || before.ends_with([';', '\n'])
        || before.ends_with("&&")
        || before.ends_with("||"))
        && (after.is_empty()
            || after.starts_with([';', '\n'])
            || after.starts_with("&&")
            || after.starts_with("||"))
        && top_level(before)
        && !mentions(src, &["exec"]);
    let flags = |w: &str, allowed: &str| {
        w.strip_prefix('-').is_some_and(|f| !f.is_empty() && f.chars().all(|c| allowed.contains(c)))
    };
    match words.as_slice() {
        ["test", op, w] | ["test", "!", op, w] | ["[", op, w, "]"] | ["[", "!", op, w, "]"] => {
            size_or_kind(op) && *w == target
        }
        ["[[", op, w, "]]"] | ["[[", "!", op, w, "]]"] => size_or_kind(op) && *w == target,
        ["cat", w] => *w == target && output_unread,
        ["rm", operands @ ..] => {
            let (opts, files): (Vec<&str>, Vec<&str>) = operands.iter().partition(|w| w.starts_with('-'));
            opts.iter().all(|o| flags(o, "frRv"))
                && !files.is_empty()
                && files.iter().all(|f| !f.contains('$') || *f == target)
        }
        ["cp", operands @ ..] => {
            let (opts, files): (Vec<&str>, Vec<&str>) = operands.iter().partition(|w| w.starts_with('-'));
            let [from, to] = files.as_slice() else {
                return false;
            };
            opts.iter().all(|o| flags(o, "fpv"))
                && *from == target
                && to.starts_with('/')
                && !to.contains('$')
                && {
                    let mut own = own.to_vec();
                    own.push((start, end));
                    blind(to, src, &own, at, nonempty, depth + 1)
                }
        }
        _ => false,
    }
}

/// Whether `statement`, the check `at` with its redirections, writes a file the script names
/// again (`harmless::writes_a_named_file`) in a command that may see what it holds: not only
/// [`redirected_to_blind_files`] (`test -s F` after pg_isready's status line, s27).
pub(super) fn writes_a_read_file(at: Node<'_>, statement: Node<'_>, walk: &Walk<'_>) -> bool {
    super::harmless::writes_a_named_file(statement, walk) && !redirected_to_blind_files(at, statement, walk)
}

/// [`writes_a_read_file`] of `n`, a check as the walk starts from it: a `redirected_statement`
/// with its body, or a command (`harmless::writes_a_named_file` alone).
pub(super) fn check_writes_a_read_file(n: Node<'_>, walk: &Walk<'_>) -> bool {
    match n.child_by_field("body").filter(|_| n.kind_name() == "redirected_statement") {
        Some(body) => writes_a_read_file(body, n, walk),
        None => super::harmless::writes_a_named_file(n, walk),
    }
}

/// Whether each file the redirections of `statement` (a `redirected_statement` whose body is the
/// check `at`) write, where the script names it elsewhere, is named there only by commands blind
/// to its contents ([`blind_readers_only`]), `-s` (not empty) counting as blind when standard
/// output goes to it and the check prints a status line up or down
/// (`shapes::prints_status_line`). s27: `pg_isready -h db > /tmp/pg.log 2>&1; test -s
/// /tmp/pg.log` exits 0 / 0 with the real client (its line "db:5432 - accepting connections" or
/// "db:5432 - no response", PostgreSQL docs, pg_isready) and was denied; `grep -q accepting
/// /tmp/pg.log` there, or `-s` after `pg_isready -q`, reads what the outage changes.
fn redirected_to_blind_files(at: Node<'_>, statement: Node<'_>, walk: &Walk<'_>) -> bool {
    // (The check itself, a simple command: the shell opens its files before it runs, whatever
    // it finds. A list's redirection, as tree-sitter-bash hangs `C && echo up >> F`'s, is the
    // last command's in bash, which may not run: `rm -f F; C && echo up >> F; test -e F` 0 / 1.)
    if statement.kind_name() != "redirected_statement"
        || at.kind_name() != "command"
        || statement.child_by_field("body") != Some(at)
    {
        return false;
    }
    let prints = super::shapes::prints_status_line(at, walk);
    let own = [(statement.start_byte(), statement.end_byte())];
    let mut c = statement.walk();
    let redirects: Vec<Node<'_>> = statement.children_by_field("redirect", &mut c).collect();
    !redirects.is_empty()
        && redirects.iter().all(|r| {
            let Some(target) = r.child_by_field("destination").map(|d| text(d, walk)) else {
                return false;
            };
            let Some(written) = text(*r, walk).strip_suffix(target).map(str::trim) else {
                return false;
            };
            // (`2>&1`: a descriptor and an operator.)
            let op = written.trim_start_matches(|c: char| c.is_ascii_digit());
            let fd = &written[..written.len() - op.len()];
            if matches!(op, ">&" | "<&") || target == "/dev/null" {
                return true;
            }
            let stdout = matches!((fd, op), ("" | "1", ">" | ">>" | ">|") | ("", "&>" | "&>>"));
            if !stdout && !matches!((fd, op), ("2", ">" | ">>")) {
                return false;
            }
            !super::path_vars::named_elsewhere_in(target, walk.src, &own)
                || blind_readers_only(target, walk.src, &own, statement.start_byte(), stdout && prints)
        })
}

/// Whether a statement after `prefix` (a script's text up to it) is at the script's top level: in
/// `prefix` the words `if`, `case`, `do` are as many as `fi`, `esac`, `done`, and the brackets
/// `{`/`}` and `(`/`)` as many opened as closed, so no compound command, group, subshell or
/// substitution holds it whose output could be piped or redirected (`{ cat F; } | grep -q up`).
/// A `case` item's lone `)` or a quoted bracket makes it unsure: no.
fn top_level(prefix: &str) -> bool {
    let count = |w: &str| {
        prefix.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|x| *x == w).count()
    };
    let chars = |c: char| prefix.matches(c).count();
    count("if") == count("fi")
        && count("case") == count("esac")
        && count("do") == count("done")
        && chars('{') == chars('}')
        && chars('(') == chars(')')
}

/// `if COND; then echo A > F; else echo B > F; fi`: both branches write output to the same file
/// `F` the script names nowhere else, the same way: a write that fails (a read-only root
/// filesystem) fails either branch, so the status does not tell which ran (bash 5.2 and dash
/// 0.5.12 exit 0 with the database down). A branch that writes alone does not qualify. Since s26
/// also a file the script names elsewhere only in commands blind to its contents, and a variable
/// naming it ([`blind_readers_only`]: `if C; then echo up > /tmp/s; else echo down > /tmp/s; fi;
/// test -s /tmp/s` exits 0 / 0).
pub(super) fn same_writes(cond: Node<'_>, construct: Node<'_>, walk: &Walk<'_>) -> bool {
    if construct.kind_name() != "if_statement" {
        return false;
    }
    let mut c = construct.walk();
    let kids: Vec<Node<'_>> = construct.children(&mut c).collect();
    if kids.iter().any(|k| k.kind_name() == "elif_clause") {
        return false;
    }
    let Some(else_clause) = kids.iter().find(|k| k.kind_name() == "else_clause") else {
        return false;
    };
    let then_at = kids.iter().position(|k| k.kind_name() == "then");
    let then_part: Vec<Node<'_>> = then_at
        .map(|t| {
            kids[t + 1..]
                .iter()
                .filter(|k| is_statement(**k) && !matches!(k.kind_name(), "else_clause" | "elif_clause"))
                .copied()
                .collect()
        })
        .unwrap_or_default();
    let mut c = else_clause.walk();
    let else_part: Vec<Node<'_>> = else_clause.named_children(&mut c).filter(|k| is_statement(*k)).collect();
    let ([a], [b]) = (then_part.as_slice(), else_part.as_slice()) else {
        return false;
    };
    if cond.start_byte() >= a.start_byte() {
        return false;
    }
    let write = |k: Node<'_>| -> Option<(String, String, bool)> {
        if k.kind_name() != "redirected_statement" {
            return None;
        }
        let body = k.child_by_field("body").filter(|b| b.kind_name() == "command")?;
        let name = text(body.child_by_field("name")?, walk);
        let mut c = body.walk();
        let args: Vec<&str> = body.children_by_field("argument", &mut c).map(|a| text(a, walk)).collect();
        if !matches!(name, "echo" | "printf")
            || args.first().is_some_and(|a| a.starts_with('-'))
            || args.iter().any(|a| a.contains(['$', '`']))
        {
            return None;
        }
        let mut c = k.walk();
        let redirects: Vec<Node<'_>> = k.children_by_field("redirect", &mut c).collect();
        let [r] = redirects.as_slice() else {
            return None;
        };
        let target = text(r.child_by_field("destination")?, walk);
        let op = text(*r, walk).strip_suffix(target)?.trim();
        // (A variable naming it, `> "$tmp"`, is judged with its readers: `blind`, s26.)
        let plain = !target.contains(['$', '`', '*', '?', '&', '"', '\'']) || variable_of(target).is_some();
        (matches!(op, ">" | ">>") && plain)
            .then(|| (op.to_string(), target.to_string(), writes_something(name, &args)))
    };
    let (Some(wa), Some(wb)) = (write(*a), write(*b)) else {
        return false;
    };
    let own = [(a.start_byte(), a.end_byte()), (b.start_byte(), b.end_byte())];
    // Named elsewhere only by commands blind to what it holds (`test -s F`, s26), it is not read.
    (wa.0, &wa.1) == (wb.0, &wb.1)
        && (!named_elsewhere(&wa.1, walk.src, &own)
            || blind_readers_only(&wa.1, walk.src, &own, construct.start_byte(), wa.2 && wb.2))
        && !reads_status_text(text(construct, walk))
}

#[cfg(test)]
mod tests {
    use super::{blind_readers_only, variable_of, writes_something};

    #[test]
    fn a_file_read_only_for_its_size_or_kind_is_not_read() {
        let w1 = "echo up > /tmp/s";
        for (rest, nonempty, blind) in [
            ("test -s /tmp/s", true, true),
            ("[ -f /tmp/s ] || echo none", false, true),
            ("if [ -s /tmp/s ]; then echo ok; fi", true, true),
            ("rm -f /tmp/s", false, true),
            ("cp /tmp/s /tmp/last 2>/dev/null || :", false, true),
            // `cat F` alone: its contents go to the probe's output, which the kubelet does not
            // read; its status is only whether it could read F (s27-fda, 5fbd94f).
            ("cat /tmp/s", true, true),
            // Its contents read, `-s` of a write that may be empty, another file's name.
            ("grep -q up /tmp/s", true, false),
            ("test -s /tmp/s", false, false),
            ("cat /tmp/s | grep -q up", true, false),
            ("cat /tmp/s > /tmp/t; grep -q up /tmp/t", true, false),
            ("x=$(cat /tmp/s); [ \"$x\" = up ]", true, false),
            ("cp /tmp/s /tmp/last; grep up /tmp/last", true, false),
            ("test -s /tmp/s/x", true, false),
            ("cd /tmp; test -s s", true, false),
            ("grep -r up /tmp", true, false),
            ("[ \"$(cat /tmp/s)\" = up ]", true, false),
            ("test -s /tmp/s*", true, false),
        ] {
            let src = format!("{w1}; {rest}");
            assert_eq!(blind_readers_only("/tmp/s", &src, &[(0, w1.len())], 0, nonempty), blind, "{src}");
        }
    }

    #[test]
    fn a_name_spelt_otherwise_is_read() {
        // (`tests/shell_flow.rs`: bash 5.2 and dash 0.5.12 read `/tmp/s9` in each.)
        let w = "echo up > /tmp/s9";
        for rest in ["grep -q up \"/tmp/s\"\"9\"", "grep -q up /tmp/s\\9"] {
            let src = format!("{w}; test -s /tmp/s9; {rest}");
            assert!(!blind_readers_only("/tmp/s9", &src, &[(0, w.len())], 0, true), "{src}");
        }
    }

    #[test]
    fn a_variable_names_the_file_when_assigned_once_a_plain_value() {
        let ok = "tmp=$(mktemp); trap 'rm -f \"$tmp\"' EXIT; echo up > \"$tmp\"; cp \"$tmp\" /tmp/last || :";
        let at = ok.find("echo").unwrap();
        let w = (at, at + "echo up > \"$tmp\"".len());
        assert!(blind_readers_only("\"$tmp\"", ok, &[w], at, true));
        for src in [
            "tmp=$(mktemp); echo up > \"$tmp\"; grep -q up \"$tmp\"",
            "tmp=$(mktemp); echo up > \"$tmp\"; tmp=/x; test -s \"$tmp\"",
            "tmp=$X; echo up > \"$tmp\"; test -s \"$tmp\"",
            "export tmp=$(mktemp); echo up > \"$tmp\"; test -s \"$tmp\"",
        ] {
            let at = src.find("echo").unwrap();
            let w = (at, at + "echo up > \"$tmp\"".len());
            assert!(!blind_readers_only("\"$tmp\"", src, &[w], at, true), "{src}");
        }
    }

    #[test]
    fn targets_and_writes_are_read_as_written() {
        assert_eq!(variable_of("\"${tmp}\""), Some("tmp"));
        assert_eq!(variable_of("$tmp"), Some("tmp"));
        assert_eq!(variable_of("$tmp/x"), None);
        assert!(writes_something("echo", &[]));
        assert!(writes_something("printf", &["'up\\n'"]));
        assert!(!writes_something("printf", &["'%s'", "''"]));
        assert!(!writes_something("printf", &["''"]));
    }
}
