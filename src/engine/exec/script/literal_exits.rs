//! A function's `return $rc` / `exit $rc` where its body set `rc` to a literal number, once, as a
//! statement of its own before (s24 false denials): `f(){ rc=0; C || return $rc; echo ok; }; f`
//! exits 0 / 0 in bash 5.2.15 and dash 0.5.12 with a stub `redis-cli` up / down, and was denied,
//! because the status walk reads `return $rc` as a status it follows only to `rc=$?`. Read as
//! `return 0` in place (blanks for the rest of the word, so every offset stays the script's), as
//! `positional::positional_exit_words` reads `exit $1`; `rc=1` gives `return 1`, 0 / 1, coupled.

use crate::engine::exec::kinds::KindName;
use tree_sitter::{Node, Tree};

/// The text of `n` in `src`.
fn text<'s>(n: Node<'_>, src: &'s str) -> &'s str {
    src.get(n.start_byte()..n.end_byte()).unwrap_or("")
}

/// The variable a word names, whole: `$NAME`, `"$NAME"`, `${NAME}` or `"${NAME}"`.
fn variable_of(word: &str) -> Option<&str> {
    let inner = word.strip_prefix('"').and_then(|w| w.strip_suffix('"')).unwrap_or(word);
    let inner = inner.strip_prefix('$')?;
    let name = inner.strip_prefix('{').and_then(|w| w.strip_suffix('}')).unwrap_or(inner);
    super::super::context::is_ident(name).then_some(name)
}

/// The name and literal number a statement of a function's body assigns: `NAME=N` or `local
/// NAME=N` (`declare`, `typeset` too), one assignment, N decimal digits (at most 3).
fn literal_assignment<'s>(s: Node<'_>, src: &'s str) -> Option<(&'s str, &'s str)> {
    let assignment = match s.kind_name() {
        "variable_assignment" => s,
        "declaration_command" => {
            let mut c = s.walk();
            let named: Vec<Node<'_>> = s.named_children(&mut c).collect();
            let keyword = s.child(0).map(|k| text(k, src));
            match (keyword, named.as_slice()) {
                (Some("local" | "declare" | "typeset"), [a]) if a.kind_name() == "variable_assignment" => *a,
                _ => return None,
            }
        }
        _ => return None,
    };
    let name = text(assignment.child_by_field("name")?, src);
    let value = text(assignment.child_by_field("value")?, src);
    (!value.is_empty() && value.len() <= 3 && value.bytes().all(|b| b.is_ascii_digit()))
        .then_some((name, value))
}

/// `src` (parsed into `trees`) with each `exit $NAME` / `return $NAME` (the command's only
/// argument) in the body of a function rewritten to the number N, where a statement of that
/// body's own list before it is `NAME=N` (or `local NAME=N`) and NAME is no other word of `src`:
/// nothing else assigns or reads it, so it holds N there. `text`: the rewritten text so far.
pub(super) fn literal_variable_exits(src: &str, trees: &[Tree], out: &mut Option<String>) {
    if !src.contains('=') {
        return;
    }
    let count = |name: &str| {
        src.as_bytes()
            .split(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
            .filter(|w| *w == name.as_bytes())
            .count()
    };
    for tree in trees {
        super::super::status::each_node(tree.root_node(), |def| {
            if def.kind_name() != "function_definition" {
                return;
            }
            let Some(body) = def.child_by_field("body").filter(|b| b.kind_name() == "compound_statement")
            else {
                return;
            };
            let mut c = body.walk();
            let statements: Vec<Node<'_>> = body.named_children(&mut c).collect();
            let assigned: Vec<(&str, &str, usize)> = statements
                .iter()
                .filter_map(|s| literal_assignment(*s, src).map(|(n, v)| (n, v, s.end_byte())))
                .collect();
            if assigned.is_empty() {
                return;
            }
            // The `exit`/`return` words of this body (not of a function defined in it).
            let mut words: Vec<(Node<'_>, &str)> = Vec::new();
            let mut stack = statements.clone();
            while let Some(k) = stack.pop() {
                if k.kind_name() == "function_definition" {
                    continue;
                }
                if k.kind_name() == "command"
                    && k.child_by_field("name").is_some_and(|m| matches!(text(m, src), "exit" | "return"))
                {
                    let mut c = k.walk();
                    let args: Vec<Node<'_>> = k.children_by_field("argument", &mut c).collect();
                    if let [arg] = args.as_slice()
                        && let Some(name) = variable_of(text(*arg, src))
                    {
                        words.push((*arg, name));
                    }
                }
                let mut c = k.walk();
                stack.extend(k.children(&mut c));
            }
            for &(name, value, end) in &assigned {
                let reads: Vec<Node<'_>> =
                    words.iter().filter(|(_, n)| *n == name).map(|(arg, _)| *arg).collect();
                let once = assigned.iter().filter(|(n, _, _)| *n == name).count() == 1;
                if reads.is_empty() || !once || count(name) != reads.len() + 1 {
                    continue;
                }
                for arg in
                    reads.into_iter().filter(|a| a.start_byte() > end && a.byte_range().len() >= value.len())
                {
                    let word = text(arg, src);
                    let t = out.get_or_insert_with(|| src.to_string());
                    let padded = format!("{value}{}", " ".repeat(word.len() - value.len()));
                    t.replace_range(arg.start_byte()..arg.end_byte(), &padded);
                }
            }
        });
    }
}
