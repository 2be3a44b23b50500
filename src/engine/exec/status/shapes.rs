//! Constructs whose exit status is a known part's, found by the v2 verdict break-it pass on
//! a00d258 (issue #10, "never deny on a guess"), each checked in bash 5.2 and dash 0.5.12 with
//! stub clients (`tests/shell_flow_v2.rs`):
//! - `(exec CMD)`: `exec` replaces the subshell, not the script (bash manual, "Command Execution
//!   Environment"), so the subshell's status is CMD's, judged where the subshell is.

use tree_sitter::Node;

use super::super::shell::Walk;
use super::{each_node, is_statement, text};

/// How many `exec` commands under `root` run a program as the last statement of a `( )`
/// subshell (`(exec pg_isready -h db); exit 0`): each replaces only the subshell, whose status is
/// the program's, walked on from the subshell like any last statement's (bash 5.2 and dash
/// 0.5.12: `(exec pg_isready -h db); exit 0` and `(exec ...) || true` exit 0 with the database
/// down; `(exec ...)` alone exits 2).
pub(super) fn subshell_last_execs(root: Node<'_>, walk: &Walk<'_>) -> usize {
    let mut found = 0;
    each_node(root, |k| {
        if k.kind() != "command" || !k.child_by_field_name("name").is_some_and(|m| text(m, walk) == "exec") {
            return;
        }
        let Some(sub) = k.parent().filter(|p| p.kind() == "subshell") else {
            return;
        };
        let mut c = k.walk();
        let runs_program = k
            .children_by_field_name("argument", &mut c)
            .next()
            .is_some_and(|a| !text(a, walk).starts_with('-'));
        let mut c = sub.walk();
        let last = sub.named_children(&mut c).filter(|s| is_statement(*s)).last();
        let background = k.next_sibling().is_some_and(|s| s.kind() == "&");
        if runs_program && last == Some(k) && !background {
            found += 1;
        }
    });
    found
}

/// Whether the command substitution `sub`, whose only statement is `at`, writes nothing whatever
/// the check `at` finds, and is an argument of the command `up` (not its name): `up` then runs
/// with the same arguments with the dependency up or down, and its status is its own (bash
/// manual, "Simple Command Expansion": "If there is a command name left after expansion, [...]
/// the exit status of the command"). bash 5.2 and dash 0.5.12: `curl -sf
/// "http://localhost:8080/healthz?db=$(pg_isready -h db -q)"` exits 0 with the database down.
/// Nothing is written when `at` is `pg_isready -q`/`--quiet` (PostgreSQL, "pg_isready": "Do not
/// display status message") or its standard output goes to `/dev/null` (and its standard error
/// is not sent to the substitution before that: `2>&1 >/dev/null` writes the errors). A function
/// of that name (`functions`) may write anything.
pub(super) fn constant_argument(
    at: Node<'_>,
    sub: Node<'_>,
    up: Node<'_>,
    walk: &Walk<'_>,
    functions: &[String],
) -> bool {
    if up.kind() != "command"
        || up.child_by_field_name("name").is_some_and(|m| m.byte_range().contains(&sub.start_byte()))
    {
        return false;
    }
    let mut c = sub.walk();
    if sub.named_children(&mut c).filter(|s| is_statement(*s)).count() != 1 {
        return false;
    }
    let (cmd, redirects) = match at.kind() {
        "command" => (at, Vec::new()),
        "redirected_statement" => {
            let Some(body) = at.child_by_field_name("body").filter(|b| b.kind() == "command") else {
                return false;
            };
            let mut c = at.walk();
            (
                body,
                at.children_by_field_name("redirect", &mut c)
                    .map(|r| text(r, walk).replace(' ', ""))
                    .collect(),
            )
        }
        _ => return false,
    };
    let Some(name) = cmd.child_by_field_name("name").map(|m| text(m, walk)) else {
        return false;
    };
    if functions.iter().any(|f| f == name) {
        return false;
    }
    // (Standard output to /dev/null, standard error kept out of the substitution.)
    let mut stdout_null = false;
    for r in &redirects {
        match r.as_str() {
            ">/dev/null" | "1>/dev/null" | "&>/dev/null" | ">&/dev/null" => stdout_null = true,
            "2>/dev/null" => {}
            "2>&1" if stdout_null => {}
            _ => return false,
        }
    }
    let mut c = cmd.walk();
    let quiet = name == "pg_isready"
        && cmd.children_by_field_name("argument", &mut c).any(|a| matches!(text(a, walk), "-q" | "--quiet"));
    stdout_null || quiet
}
