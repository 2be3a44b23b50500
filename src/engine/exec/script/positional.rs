//! A function's `exit $1` / `return $1`: the status its calls' arguments give it (issue 10).
//!
//! The status walk (`status::rules`) follows only literal statuses, and gave up on a computed
//! one, which kept every check of the script coupled: `f() { exit $1; }; pg_isready -h db; f 0`
//! was denied, though bash 5.2 and dash 0.5.12 exit 0 with the database down. Here each such word
//! is read as the value every call of its function in the script passes it, rewritten in place
//! (blanks for the rest of the word, so every offset stays the script's), and when the calls
//! leave it unknown the script's status is said to be known only at run time: a warning, never a
//! denial on a guess.

use std::collections::HashMap;

use crate::engine::exec::kinds::KindName;
use tree_sitter::{Node, Tree};

use super::super::context::Ctx;
use super::super::flow::mentions;
use super::super::parse::{Parsed, weight};
use super::super::status::each_node;
use super::super::{WALK_UNITS, WALK_UNITS_PER_WEIGHT};

impl Ctx<'_> {
    /// [`positional_exit_words`] of `text` (parsed into `trees`, with no syntax error), and its
    /// constant arithmetic statuses (`arith_exits`: `exit $((0))`), for the split of a script: notes a status it leaves unknown (`Ctx::status_unknown_split`), and
    /// returns the rewritten text parsed again (the same shape: every offset kept), if any.
    /// `Err` when the work units are spent (the split stops, as it does on its own parse).
    pub(in crate::engine::exec) fn read_positional_exits(
        &mut self,
        text: &str,
        trees: &[Tree],
    ) -> Result<Option<(String, std::sync::Arc<Parsed>)>, ()> {
        if !(text.contains("exit") || text.contains("return")) {
            return Ok(None);
        }
        let mut exits = if text.contains("()") || text.contains("function ") {
            positional_exit_words(text, trees)
        } else {
            PositionalExits::default()
        };
        // `exit $((0))`: a constant status (`arith_exits`, s26).
        super::arith_exits::constant_arithmetic_exits(text, trees, &mut exits.text);
        if let Some(why) = exits.unknown {
            self.status_unknown_split.get_or_insert(why);
        }
        let Some(new) = exits.text else {
            return Ok(None);
        };
        if !self.spend_units(WALK_UNITS + WALK_UNITS_PER_WEIGHT * weight(new.as_bytes())) {
            return Err(());
        }
        Ok(self.parse(&new).filter(|p| p.gap.is_none()).map(|p| (new, p)))
    }
}

/// What [`positional_exit_words`] found in a script.
#[derive(Debug, Default, PartialEq, Eq)]
pub(in crate::engine::exec) struct PositionalExits {
    /// The script with each `exit`/`return` word it could read rewritten, when there was one.
    pub(in crate::engine::exec) text: Option<String>,
    /// The first it could not read, as messages name it (`` `exit $1` in `f` ``): its status is
    /// known only at run time.
    pub(in crate::engine::exec) unknown: Option<String>,
}

/// Most function bodies [`positional_exit_words`] reads in one script (each is scanned once): real
/// probe scripts define a few; past them a status is said to be known only at run time, so no
/// script's shape makes the pass cost more than a few walks of its text.
const MAX_FUNCTIONS_READ: usize = 16;

/// What one call of a function passes as its positional parameter N.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Passed {
    /// A literal decimal number, as a status (modulo 256: bash 5.2 and dash 0.5.12 exit 0 on
    /// `exit 256`, 10 on `exit 010`).
    Status(u8),
    /// Fewer arguments than N: the parameter is unset.
    Nothing,
    /// Anything else (an expansion, a word that is no number, arguments an expansion may shift).
    Unknown,
}

/// The text of `n` in `src`.
fn text<'s>(n: Node<'_>, src: &'s str) -> &'s str {
    src.get(n.start_byte()..n.end_byte()).unwrap_or("")
}

/// The positional parameter (1 to 9) a word names: `$1`, `"$1"`, `${1}` or `"${1}"`, and whether
/// it is quoted; 0 for their count, `$#`.
fn positional_word(w: &str) -> Option<(usize, bool)> {
    let (inner, quoted) = match w.strip_prefix('"').and_then(|w| w.strip_suffix('"')) {
        Some(inner) => (inner, true),
        None => (w, false),
    };
    let name =
        inner.strip_prefix("${").and_then(|n| n.strip_suffix('}')).or_else(|| inner.strip_prefix('$'))?;
    if name == "#" {
        return Some((0, quoted));
    }
    let n = name.parse::<usize>().ok().filter(|n| (1..=9).contains(n) && name.len() == 1)?;
    Some((n, quoted))
}

/// A word that is one argument whatever the shell's state: no expansion, glob or brace.
fn single_literal(w: &str) -> bool {
    !w.is_empty() && !w.contains(['$', '`', '*', '?', '[', '{', '\\'])
}

/// What the call `call` (a `command` node) passes as positional parameter `n` (0: their count).
fn passed(call: Node<'_>, src: &str, n: usize) -> Passed {
    let mut c = call.walk();
    let args: Vec<&str> = call.children_by_field("argument", &mut c).map(|a| text(a, src)).collect();
    if n == 0 {
        return match args.iter().all(|a| single_literal(a)) {
            true => Passed::Status((args.len() % 256) as u8),
            false => Passed::Unknown,
        };
    }
    // (An expansion before it may be no word, or several, and shift it.)
    if !args.iter().take(n - 1).all(|a| single_literal(a)) {
        return Passed::Unknown;
    }
    // (An empty word, `f ""`, sets it to nothing: an unquoted `$1` is no word either.)
    let Some(word) = args.get(n - 1).filter(|w| !matches!(**w, "\"\"" | "''")) else {
        return Passed::Nothing;
    };
    let digits = [('"', '"'), ('\'', '\'')]
        .iter()
        .find_map(|(open, close)| word.strip_prefix(*open).and_then(|w| w.strip_suffix(*close)))
        .unwrap_or(word);
    match digits.parse::<u64>() {
        Ok(v) if digits.bytes().all(|b| b.is_ascii_digit()) => Passed::Status((v % 256) as u8),
        _ => Passed::Unknown,
    }
}

/// Whether the `set` commands under `body` only change options (`set -e`, `set -o pipefail`,
/// `set +x`): any other argument (`set -- 0`, `set -e x`) sets the positional parameters.
fn sets_only_options(body: Node<'_>, src: &str) -> bool {
    let mut ok = true;
    each_node(body, |k| {
        if k.kind_name() != "command" || k.child_by_field("name").is_none_or(|m| text(m, src) != "set") {
            return;
        }
        let mut c = k.walk();
        let args: Vec<&str> = k.children_by_field("argument", &mut c).map(|a| text(a, src)).collect();
        let mut i = 0;
        while i < args.len() {
            let a = args[i];
            let flags = a.strip_prefix(['-', '+']).unwrap_or("");
            if flags.is_empty() || !flags.bytes().all(|b| b.is_ascii_alphabetic()) {
                ok = false;
                return;
            }
            // `-o NAME`: the option's name.
            i += if flags.ends_with('o') { 2 } else { 1 };
        }
    });
    ok
}

/// `src` (parsed into `trees`, with no syntax error) with each `exit $N` / `return $N` (`$N`,
/// `"$N"`, `${N}`, `"${N}"`, N from 1 to 9, the command's only argument) in the body of a function
/// defined once in it read as the shells read it when every call of that function in `src` passes
/// the same thing as parameter N (bash manual, "Shell Functions": the positional parameters are
/// the call's arguments during it; "Exit Status"):
/// - a literal number: that status (`f 0` makes `exit $1` an `exit 0`);
/// - no argument there: the parameter is unset, so an unquoted word is no word, a bare `exit` or
///   `return` (the last command's status); quoted, `exit ""` is an error both shells exit 2 with.
///
/// The function's name must be a word of `src` only where it is defined or called (not in a
/// string, `eval`, `command f`, `xargs f`), and its body must not move the parameters (`shift`,
/// `getopts`, `set` with other than options). A call that passes anything else (an expansion,
/// `$?`, a word that is no number) or calls that disagree leave the word as it is, and say in
/// [`PositionalExits::unknown`] that its status is known only at run time; except `$?` passed
/// on by every call (`f $?`), which reads the check's status and is left to the walk's verdict
/// (coupled), as the shells have it. A function no call of which is in `src` is left as it is.
/// Checked with bash 5.2 and dash 0.5.12 and a `pg_isready` stub (`tests/shell_flow.rs`,
/// `a_function_s_computed_exit_status_is_the_one_its_calls_give_it`).
pub(in crate::engine::exec) fn positional_exit_words(src: &str, trees: &[Tree]) -> PositionalExits {
    let mut out = PositionalExits::default();
    // One pass over the trees (a stack of nodes, each with the function definition it is in):
    // every definition by name, every command by name, and the `exit`/`return` words of each
    // definition's own body (not of a function defined in it).
    let mut defs: Vec<(&str, Node<'_>)> = Vec::new();
    let mut calls: HashMap<&str, Vec<Node<'_>>> = HashMap::new();
    let mut exits: Vec<Vec<(Node<'_>, &str, usize, bool)>> = Vec::new();
    for tree in trees {
        let mut stack: Vec<(Node<'_>, Option<usize>)> = vec![(tree.root_node(), None)];
        while let Some((k, mut within)) = stack.pop() {
            match k.kind_name() {
                "function_definition" => {
                    if let Some(name) = k.child_by_field("name") {
                        defs.push((text(name, src), k));
                        exits.push(Vec::new());
                        within = Some(defs.len() - 1);
                    }
                }
                "command" => {
                    if let Some(name) = k.child_by_field("name").map(|m| text(m, src)) {
                        calls.entry(name).or_default().push(k);
                        let mut c = k.walk();
                        let args: Vec<Node<'_>> = k.children_by_field("argument", &mut c).collect();
                        if let (Some(def), "exit" | "return", [arg]) = (within, name, args.as_slice())
                            && let Some((n, quoted)) = positional_word(text(*arg, src))
                        {
                            exits[def].push((*arg, name, n, quoted));
                        }
                    }
                }
                _ => {}
            }
            let mut c = k.walk();
            stack.extend(k.children(&mut c).map(|child| (child, within)));
        }
    }
    // (How many times each word is in the text, made once when a definition needs it.)
    let mut words_of_src: Option<HashMap<&[u8], usize>> = None;
    let mut read = 0usize;
    for (i, &(name, def)) in defs.iter().enumerate() {
        let words = std::mem::take(&mut exits[i]);
        let Some(body) = def.child_by_field("body") else {
            continue;
        };
        if words.is_empty() {
            continue;
        }
        let its_calls: &[Node<'_>] = calls.get(name).map_or(&[], Vec::as_slice);
        if its_calls.is_empty() {
            continue;
        }
        // (At most `MAX_FUNCTIONS_READ` bodies are read: past them, a status is said unknown.)
        read += 1;
        let counts = words_of_src.get_or_insert_with(|| {
            let mut counts = HashMap::new();
            for w in src.as_bytes().split(|b| !(b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-')) {
                *counts.entry(w).or_insert(0usize) += 1;
            }
            counts
        });
        let readable = read <= MAX_FUNCTIONS_READ
            && defs.iter().filter(|(d, _)| *d == name).count() == 1
            && counts.get(name.as_bytes()) == Some(&(its_calls.len() + 1))
            && !mentions(text(body, src), &["shift", "getopts"])
            && sets_only_options(body, src);
        for (arg, verb, n, quoted) in words {
            let word = text(arg, src);
            let mut given = its_calls.iter().map(|call| passed(*call, src, n));
            let first = given.next().unwrap_or(Passed::Unknown);
            let same = given.all(|g| g == first);
            let forwards_status = its_calls.iter().all(|call| {
                let mut c = call.walk();
                let args: Vec<&str> =
                    call.children_by_field("argument", &mut c).map(|a| text(a, src)).collect();
                n > 0 && args.get(n - 1).is_some_and(|a| matches!(a.trim_matches('"'), "$?" | "${?}"))
            });
            let replacement = match (readable && same, first) {
                (true, Passed::Status(v)) => Some(v.to_string()),
                (true, Passed::Nothing) if !quoted => Some(String::new()),
                (true, Passed::Nothing) if verb == "exit" => Some("2".to_string()),
                _ => None,
            };
            match replacement.filter(|r| r.len() <= word.len()) {
                Some(r) => {
                    let t = out.text.get_or_insert_with(|| src.to_string());
                    let padded = format!("{r}{}", " ".repeat(word.len() - r.len()));
                    t.replace_range(arg.start_byte()..arg.end_byte(), &padded);
                }
                None if forwards_status => {}
                None => {
                    out.unknown.get_or_insert_with(|| format!("`{verb} {word}` in `{name}`"));
                }
            }
        }
    }
    super::literal_exits::literal_variable_exits(src, trees, &mut out.text);
    out
}
