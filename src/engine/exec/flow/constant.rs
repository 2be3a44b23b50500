//! `&&`/`||` lists whose left side has a status known as written, whatever its checks return
//! (bash manual, "Lists of Commands": `A || B` runs B only when A fails, `A && B` only when A
//! succeeds, and the list's status is the last command's that ran):
//! - `true || R || R ...`, `true || exit 0 && true || R`: the left side always succeeds, so R
//!   after `||` never runs (and `false && R` never runs R): R is not analysed;
//! - `R && nc ... || pg_isready ... && false || local`: the left side always fails (it ends in
//!   `&& false`), so `local` always runs and its status is the list's: the checks left of it
//!   only choose what else runs, and they are walked as [`UNCOUPLED`] (a warning), when nothing
//!   there can end the script, change its state or write a file.
//!
//! The value of a left side is read down its chain once (`Ctx::constant_lists` keeps each list's),
//! so a chain of any length costs its length. Checked with bash 5.2 and dash 0.5.12, stub clients
//! failing on a remote host (`tests/shell_flow_v2.rs`).

use crate::engine::exec::kinds::KindName;
use tree_sitter::Node;

use super::super::context::Ctx;
use super::super::shell::Walk;
use super::text;
use crate::engine::exec::status;

/// The builtins a left side walked as uncoupled may not run: each ends the script or a loop,
/// changes the shell's state, or runs text it is given.
pub(in crate::engine::exec) const NOT_PLAIN: &[&str] = &[
    "exit",
    "return",
    "exec",
    "break",
    "continue",
    "set",
    "shopt",
    "eval",
    "source",
    ".",
    "trap",
    "kill",
    "wait",
    "cd",
    "pushd",
    "popd",
    "read",
    "mapfile",
    "readarray",
    "export",
    "unset",
    "local",
    "declare",
    "typeset",
    "readonly",
    "shift",
    "alias",
    "unalias",
    "getopts",
    "printf",
    "hash",
    "ulimit",
    "umask",
    "let",
    "command",
    "builtin",
    "enable",
    "coproc",
    "logout",
    "times",
    "fg",
    "bg",
    "disown",
    "suspend",
];

impl Ctx<'_> {
    /// The list `n` = `first OP second` (`OP` is `&&` or `||`) when `first`'s status is known as
    /// written: `Some(false)` once walked (`second` skipped when it never runs, or run after
    /// `first` walked as uncoupled when it always runs), `None` to walk it as any other list.
    pub(super) fn constant_list<'t>(
        &mut self,
        n: Node<'t>,
        (first, op, second): (Node<'t>, &str, Node<'t>),
        walk: &Walk<'t>,
        depth: usize,
        out: &mut Vec<String>,
    ) -> Option<bool> {
        let value = self.list_value(first, walk)?;
        // `true || R`, `false && R`: R never runs.
        if value == (op == "||") {
            self.statements(first, walk, depth, out);
            return Some(false);
        }
        // `... && false || R`, `... || true && R`: R always runs, and the list's status is R's.
        // Not when R fails by itself (`... && false || exit 1` always fails, 1 / 1: judged as
        // before, denied), nor down the left side of such a list (`Ctx::kept_coupled`).
        let src = walk.src.as_ptr() as usize;
        if self.kept_coupled.borrow().contains(&(src, n.id())) || fails_by_itself(second, walk) {
            self.kept_coupled.borrow_mut().insert((src, first.id()));
            return None;
        }
        let known: Vec<&str> = self.functions.iter().map(|(f, _)| f.as_str()).collect();
        if !plain_left(first, walk, &known) {
            return None;
        }
        let how = format!(
            "the commands before `{op}` always {} as written, so the one after it always runs and its status is the list's",
            if value { "succeed" } else { "fail" }
        );
        self.uncoupled_statements(first, walk, depth, &how, out);
        self.statements(second, walk, depth, out);
        Some(false)
    }

    /// The status of `n` whenever it completes, when its text decides it: `true`, `:`, `false`
    /// (with `!`), and `&&`/`||` lists of them and of any other command (`R || true` succeeds,
    /// `R && false` fails). Each list's value is kept (`Ctx::constant_lists`): down the left
    /// side of a chain once.
    fn list_value(&self, n: Node<'_>, walk: &Walk<'_>) -> Option<bool> {
        if redefined(walk) {
            return None;
        }
        let key = |k: Node<'_>| (walk.src.as_ptr() as usize, k.id(), k.start_byte());
        let mut spine = Vec::new();
        let mut at = n;
        let mut value = loop {
            if let Some(v) = self.constant_lists.borrow().get(&key(at)) {
                break *v;
            }
            match parts(at) {
                Some((left, _, _)) => {
                    spine.push(at);
                    at = left;
                }
                None => break leaf_value(at, walk),
            }
        };
        while let Some(list) = spine.pop() {
            let (_, op, right) = parts(list)?;
            let right = leaf_value(right, walk);
            value = match (value, op) {
                (Some(true), "||") | (Some(false), "&&") => value,
                (Some(_), _) => right,
                (None, "||") if right == Some(true) => right,
                (None, "&&") if right == Some(false) => right,
                _ => None,
            };
            self.constant_lists.borrow_mut().insert(key(list), value);
        }
        value
    }
}

/// `n`'s left side, operator (`&&`/`||`) and right side, when `n` is such a list.
fn parts(n: Node<'_>) -> Option<(Node<'_>, &'static str, Node<'_>)> {
    if n.kind_name() != "list" {
        return None;
    }
    let mut c = n.walk();
    let kids: Vec<Node<'_>> = n.children(&mut c).filter(|k| k.kind_name() != "comment").collect();
    let [left, op, right] = kids.as_slice() else {
        return None;
    };
    let op = match op.kind_name() {
        "&&" => "&&",
        "||" => "||",
        _ => return None,
    };
    Some((*left, op, *right))
}

/// The status of `true`, `:` or `false` (behind any number of `!`), or `None`.
fn leaf_value(n: Node<'_>, walk: &Walk<'_>) -> Option<bool> {
    match n.kind_name() {
        "negated_command" => leaf_value(n.named_child(0)?, walk).map(|v| !v),
        "command" => match text(n, walk) {
            "true" | ":" => Some(true),
            "false" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// Whether `n` fails whatever ran before it: `false` (`! true`), or `exit`/`return` with any
/// status but a literal `0` (a bare `exit` gives the last status, here a failure).
fn fails_by_itself(n: Node<'_>, walk: &Walk<'_>) -> bool {
    if leaf_value(n, walk) == Some(false) {
        return true;
    }
    let mut words = text(n, walk).split_whitespace();
    n.kind_name() == "command"
        && matches!(words.next(), Some("exit" | "return"))
        && !(words.next() == Some("0") && words.next().is_none())
}

/// `true`, `false` or `:` may mean something else: an alias, or a function of that name.
pub(super) fn redefined(walk: &Walk<'_>) -> bool {
    walk.aliases
        || walk
            .defined_functions
            .get_or_init(|| status::defined_functions(walk.src))
            .iter()
            .any(|f| matches!(f.as_str(), "true" | "false" | ":"))
}

/// Whether the left side `n` only runs commands by their literal names, none of them a builtin of
/// [`NOT_PLAIN`] or a function, with no redirection, substitution, assignment, pipeline, group or
/// subshell: what it runs can change nothing after it but its own status (and output). `known`:
/// the functions defined before the script runs.
fn plain_left(n: Node<'_>, walk: &Walk<'_>, known: &[&str]) -> bool {
    let functions = walk.defined_functions.get_or_init(|| status::defined_functions(walk.src));
    let mut plain = true;
    super::super::status::each_node(n, |k| match k.kind_name() {
        "redirected_statement"
        | "file_redirect"
        | "heredoc_redirect"
        | "herestring_redirect"
        | "command_substitution"
        | "process_substitution"
        | "subshell"
        | "compound_statement"
        | "pipeline"
        | "variable_assignment"
        | "function_definition"
        | "arithmetic_expansion"
        | "expansion"
        | "while_statement"
        | "for_statement"
        | "if_statement"
        | "case_statement" => plain = false,
        "command" => {
            let name = k.child_by_field("name").map(|m| text(m, walk)).unwrap_or("");
            if name.is_empty()
                || name.contains(['$', '`', '\\', '"', '\''])
                || NOT_PLAIN.contains(&name)
                || functions.iter().any(|f| f == name)
                || known.contains(&name)
            {
                plain = false;
            }
        }
        _ => {}
    });
    plain
}
