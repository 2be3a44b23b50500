//! Two things the replay knows without running them (s22, "never deny on a guess"; each shape
//! run in bash 5.2 and dash 0.5.12 with stub clients exiting 0 / 1 / 2):
//! - a variable the script sets once, to a literal, at its top level before the check, and
//!   otherwise only reads (`rc=0; pg_isready -h db; exit $rc` and `exit $((rc))` exit 0 / 0:
//!   [`constants`]);
//! - `echo` writing a file the script never names again (`pg_isready -h db; rc=$?; echo $rc >
//!   /tmp/rc; exit` and `pg_isready -h db; echo $? > /tmp/rc` exit 0 / 0: the status written
//!   is read by nothing in the probe; [`Run::redirected_echo`]). Its own status is 0, or 1 when
//!   the write fails (a read-only root filesystem), whatever the check gave: the replay is
//!   run for both (`Run::write_fails`), and a coupling in either stands.

use crate::engine::exec::kinds::KindName;
use tree_sitter::Node;

use super::super::super::shell::Walk;
use super::super::harmless::writes_a_named_file;
use super::super::texts::is_expansion_of;
use super::super::tree::{every_mention, tree_root};
use super::{Flow, Run, text};

/// The variables the script sets once, at its top level, before the check, and only reads after
/// it ([`constants`]).
#[derive(Default)]
pub(super) struct Fixed {
    /// Those set to a literal: name and value.
    values: Vec<(String, String)>,
    /// Those set to a status, never empty and the same whatever the check gives, but not known
    /// here: `$?`, `${?}` (the status before the check), `$(( ... ))` (s23: `x=$?; redis-cli -h
    /// cache ping; exit $x` exits 0 / 0 in bash 5.2 and dash 0.5.12, and was denied).
    settled: Vec<String>,
}

/// The variables assigned a literal value (letters, digits, `_`, `.`, `-`), or a status
/// (`$?`, `"$?"`, `${?}`, `$(( ... ))`), by a top-level statement `NAME=VALUE` that ends before
/// the top-level statement holding the check `n`, and nowhere else: every other mention is a
/// read, `$NAME`, `${NAME}` or `$((NAME))`, and the name is no other word of the script (not
/// `read NAME`, `unset NAME`, `export NAME`, `for NAME in`, `${NAME:=x}`, `(( NAME++ ))`:
/// `tree::every_mention`). At the check and after it, such a variable holds that value.
pub(super) fn constants(n: Node<'_>, walk: &Walk<'_>) -> Fixed {
    let root = tree_root(n, walk);
    if root.kind_name() != "program" {
        return Fixed::default();
    }
    let mut out = Fixed::default();
    let mut c = root.walk();
    for s in root.named_children(&mut c) {
        if s.end_byte() > n.start_byte() {
            break;
        }
        if s.kind_name() != "variable_assignment" {
            continue;
        }
        let (Some(name), Some(value)) = (s.child_by_field("name"), s.child_by_field("value")) else {
            continue;
        };
        let v = text(value, walk);
        let literal =
            !v.is_empty() && v.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
        // (No substitution inside: `$(( $(f) ))` runs a command.)
        let status = matches!(v, "$?" | "\"$?\"" | "${?}")
            || v.starts_with("$((") && v.ends_with("))") && !v.contains('`') && !v[3..].contains("$(");
        if !literal && !status {
            continue;
        }
        let var = text(name, walk);
        if every_mention(name, walk, |k| plain_read(k, var, walk)) {
            if literal {
                out.values.push((var.to_string(), v.to_string()));
            } else {
                out.settled.push(var.to_string());
            }
        }
    }
    out
}

/// Whether the `variable_name` `k` (of `var`) is read as `$var`, `${var}` or `$((var))`.
fn plain_read(k: Node<'_>, var: &str, walk: &Walk<'_>) -> bool {
    let Some(p) = k.parent() else { return false };
    match p.kind_name() {
        "simple_expansion" | "expansion" => is_expansion_of(text(p, walk), var),
        "arithmetic_expansion" => {
            let t: String = text(p, walk).chars().filter(|c| !c.is_whitespace()).collect();
            t == format!("$(({var}))")
        }
        _ => false,
    }
}

impl Run<'_, '_> {
    /// `echo ARGS > FILE` (redirections only, no substitution), a file the script names nowhere
    /// else ([`writes_a_named_file`]): its status is 0, or 1 where the write fails
    /// (`Run::write_fails`). `None` for anything else.
    pub(super) fn redirected_echo(&mut self, s: Node<'_>) -> Option<Flow> {
        let body = s.child_by_field("body").filter(|b| b.kind_name() == "command")?;
        let t = text(s, self.walk);
        let name = body.child_by_field("name").map(|m| text(m, self.walk));
        let mut c = s.walk();
        let only_files = s
            .children_by_field("redirect", &mut c)
            .all(|r| r.kind_name() == "file_redirect" && !text(r, self.walk).starts_with('<'));
        if name != Some("echo")
            || t.contains(['`', '(', '<'])
            || !only_files
            || writes_a_named_file(s, self.walk)
        {
            return None;
        }
        self.wrote = true;
        Some(Flow::Next(u8::from(self.write_fails)))
    }

    /// A variable's value in [`constants`].
    pub(super) fn constant(&self, name: &str) -> Option<&str> {
        self.fixed.values.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// `t` (a statement's text) with each `exit` of a variable [`constants`] holds, literal or
    /// a status, written `exit 0`: such an `exit` reads no `$?` (the value is never empty) and
    /// exits alike in every replay.
    pub(super) fn fixed_exits_as_literal(&self, t: &str) -> String {
        let fixed = |name: &str| {
            self.fixed.settled.iter().any(|s| s == name) || self.fixed.values.iter().any(|(n, _)| n == name)
        };
        super::super::texts::variable_exits_as_literal_if(t, &fixed)
    }
}
