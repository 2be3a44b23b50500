//! A call of a function the script defines, handed the status of the command before it (`f $?`,
//! or `rc=$?` and then `f "$rc"`): whether the function can read that status. It cannot when
//! its body reads neither `$?` nor its arguments (`f() { :; }`), or only writes them out
//! (`log() { echo "$@"; }`): the call's status is then the body's own, as with any other
//! command after the check. bash 5.2 and dash 0.5.12, a stub pg_isready exiting 2 with the
//! database down: `f() { :; }; pg_isready -h db; f $?` and `f() { echo "$1"; }; pg_isready -h
//! db; f $?` exit 0 / 0 (up / down); `f() { return $1; }; pg_isready -h db; f $?` exits 0 / 2
//! (s19 fd pass: the first two were denied). Such a call, or an `echo`, only writes out the
//! text of its arguments, so a word there spelling the saved status's name (`log "rc $rc"`) is
//! no read of it (`printed_literal_mentions`, s20).

use tree_sitter::Node;

use crate::engine::exec::kinds::KindName;

use super::super::shell::Walk;
use super::{output_used_above, text};

/// Whether `cmd`, a simple command calling a function the script defines, cannot read the status
/// of the command before it, nor the arguments it is given. Only a plain name defined at the top
/// of the script, before the call, by every definition of that name, with none known from a
/// caller (`known`) and none named like a command the walk reads by name (`exit() { :; }` is
/// `texts::shadowing_call`'s); each body passes [`reads_nothing_given`] or [`only_writes`] (then the
/// call's output must be read by nothing, as `echo`'s in `status_only_written`).
pub(super) fn call_ignores_status(cmd: Node<'_>, walk: &Walk<'_>, known: &[(String, String)]) -> bool {
    if cmd.kind_name() != "command" {
        return false;
    }
    let Some(name) = cmd.child_by_field("name").map(|n| text(n, walk)) else {
        return false;
    };
    if name.is_empty()
        || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        || known.iter().any(|(n, _)| n == name)
        || super::data::read_by_name(name)
    {
        return false;
    }
    let mut root = cmd;
    while let Some(p) = root.parent() {
        root = p;
    }
    // Every definition of the name: those among the top-level statements before the call, with
    // a `{ }` or `( )` body (its status is its last command's, as `{ }`'s), are the bodies; any other (later, nested in a statement or a body, another
    // kind of body) leaves the call to the walk. Only statements whose text holds the name are
    // looked into (a definition's text holds its name), not every node of the tree.
    let (mut bodies, mut elsewhere) = (Vec::new(), false);
    let is_definition = |k: Node<'_>| {
        k.kind_name() == "function_definition"
            && k.child_by_field("name").is_some_and(|n| text(n, walk) == name)
    };
    let top_level = root.kind_name() == "program";
    // A call in no function's body runs before every top-level statement after its own: a
    // definition there does not apply to it (`log $?; log() { [ "$1" = 0 ]; }`: 0 / 0).
    let mut up = cmd;
    while let Some(p) = up.parent().filter(|p| *p != root) {
        up = p;
    }
    let mut in_body = false;
    super::tree::each_node_pruned(up, |k| {
        in_body |= k.kind_name() == "function_definition"
            && k.start_byte() <= cmd.start_byte()
            && cmd.end_byte() <= k.end_byte();
        !in_body && k.start_byte() <= cmd.start_byte() && cmd.end_byte() <= k.end_byte()
    });
    let runs_before = |statement: Node<'_>| top_level && !in_body && statement.start_byte() >= up.end_byte();
    let mut c = root.walk();
    for statement in root.named_children(&mut c) {
        if elsewhere || runs_before(statement) {
            break;
        }
        if !text(statement, walk).contains(name) {
            continue;
        }
        let inner = if top_level && is_definition(statement) {
            match statement
                .child_by_field("body")
                .filter(|b| matches!(b.kind_name(), "compound_statement" | "subshell"))
            {
                Some(b) if statement.end_byte() <= cmd.start_byte() => bodies.push(b),
                _ => elsewhere = true,
            }
            statement.child_by_field("body")
        } else {
            Some(statement)
        };
        if let Some(inner) = inner {
            super::tree::each_node_pruned(inner, |k| {
                elsewhere |= is_definition(k);
                !elsewhere && text(k, walk).contains(name)
            });
        }
    }
    if bodies.is_empty() || elsewhere {
        return false;
    }
    let defined = walk.defined_functions.get_or_init(|| super::texts::defined_functions(walk.src));
    bodies.iter().all(|b| reads_nothing_given(text(*b, walk), defined))
        || bodies.iter().all(|b| only_writes(*b, walk)) && !output_used_above(cmd, walk)
}

/// Whether the simple command `cmd` only writes its arguments out, or ignores them, and its
/// status is not theirs: `echo`, `printf` (no option: `-v` assigns) or `logger` whose output
/// nothing reads, or a call of a function of the script that [`call_ignores_status`].
pub(super) fn only_prints_arguments(cmd: Node<'_>, walk: &Walk<'_>) -> bool {
    let name = cmd.child_by_field("name").map(|m| text(m, walk));
    let mut c = cmd.walk();
    let first = cmd.children_by_field("argument", &mut c).next().map(|a| text(a, walk));
    let written = matches!(name, Some("echo" | "printf" | "logger"))
        && !(name == Some("printf") && first.is_some_and(|a| a.starts_with('-')))
        && !output_used_above(cmd, walk);
    written || call_ignores_status(cmd, walk, &[])
}

/// How many words spelling `var` the literal text of `cmd`'s arguments holds (`rc` in `log "rc
/// $rc"` or `log rc=$rc`: a plain word, a single-quoted string or a double-quoted string's text,
/// alone or joined to others; not inside an expansion or substitution), when `cmd`
/// [`only_prints_arguments`]: that text is only written out or ignored, never read as a variable,
/// so it is no mention of `var` (s20: `log() { echo "$@"; }; pg_isready -h db; rc=$?; log "rc
/// $rc"` exits 0 / 0 in bash 5.2 and dash 0.5.12 and was denied: the word `rc` in the string
/// was counted as a mention the tree did not show). Elsewhere such text may be one: `[[ "rc"
/// -eq 0 ]]` and `${a[rc]}` read `rc` in bash (arithmetic), so 0 there.
pub(super) fn printed_literal_mentions(cmd: Node<'_>, var: &str, walk: &Walk<'_>) -> usize {
    fn literal(k: Node<'_>, var: &str, walk: &Walk<'_>) -> usize {
        match k.kind_name() {
            "word" | "raw_string" | "string_content" | "ansi_c_string" | "number" => text(k, walk)
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .filter(|w| *w == var)
                .count(),
            "string" | "concatenation" => {
                let mut c = k.walk();
                k.named_children(&mut c).map(|p| literal(p, var, walk)).sum()
            }
            _ => 0,
        }
    }
    if cmd.kind_name() != "command" {
        return 0;
    }
    let mut c = cmd.walk();
    let found: usize = cmd.children_by_field("argument", &mut c).map(|a| literal(a, var, walk)).sum();
    if found == 0 || !only_prints_arguments(cmd, walk) {
        return 0;
    }
    found
}

/// Whether a function body (its text, `{ ...; }`) reads neither the status it starts with nor
/// its arguments: no `$?`, no positional parameter (`$1`, `${2}`, `$@`, `$*`, `$#`,
/// `BASH_ARGV`), no bare `return` or `exit` (whose status may be the one before the call), and
/// nothing that reads them another way: `shift`, `getopts`, `eval`, `source`/`.` (a sourced
/// file sees the function's arguments), `trap`, `alias`, a nested definition, or a call of a
/// function of the script (`defined`), which starts with the same `$?`.
fn reads_nothing_given(body: &str, defined: &[String]) -> bool {
    let bytes = body.as_bytes();
    let dollar_reads = bytes.windows(2).enumerate().any(|(i, w)| {
        w[0] == b'$'
            && (matches!(w[1], b'?' | b'@' | b'*' | b'#' | b'!')
                || w[1].is_ascii_digit()
                || w[1] == b'{'
                    && bytes
                        .get(i + 2)
                        .is_some_and(|c| matches!(c, b'?' | b'@' | b'*' | b'#' | b'!') || c.is_ascii_digit()))
    });
    if dollar_reads || body.contains('`') || body.contains("()") || body.contains("BASH_ARG") {
        return false;
    }
    let tokens: Vec<&str> = body
        .split(|c: char| {
            c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '{' | '}' | '"' | '\'')
        })
        .collect();
    let ends_bare = |i: usize| tokens.get(i + 1).is_none_or(|t| t.is_empty());
    !tokens.iter().enumerate().any(|(i, t)| {
        matches!(*t, "shift" | "getopts" | "eval" | "source" | "." | "trap" | "alias")
            || matches!(*t, "return" | "exit") && ends_bare(i)
            || defined.iter().any(|d| d == t)
    })
}

/// Whether every statement of the function body `body` is `echo`, `printf` (no option: `-v`
/// assigns) or `logger` with no substitution, redirection or pipe: whatever it is given is only
/// written out, and its status is 0.
fn only_writes(body: Node<'_>, walk: &Walk<'_>) -> bool {
    let t = text(body, walk);
    if t.contains(['`', '>', '<', '|', '&']) || t.contains("$(") {
        return false;
    }
    let mut c = body.walk();
    let statements: Vec<Node<'_>> =
        body.named_children(&mut c).filter(|s| s.kind_name() != "comment").collect();
    !statements.is_empty()
        && statements.iter().all(|s| {
            let name = s.child_by_field("name").map(|m| text(m, walk));
            let mut c = s.walk();
            let first = s.children_by_field("argument", &mut c).next().map(|a| text(a, walk));
            s.kind_name() == "command"
                && matches!(name, Some("echo" | "printf" | "logger"))
                && !(name == Some("printf") && first.is_some_and(|a| a.starts_with('-')))
        })
}
