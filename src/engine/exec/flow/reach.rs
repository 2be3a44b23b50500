//! The functions a call may run: those it names, and those their bodies name, on to the end
//! ([`reachable_bodies`]), so that only their effects keep the call from being judged where it is
//! (`Ctx::calls_a_function_with_effects`).

use crate::engine::exec::kinds::KindName;
use tree_sitter::Node;

use super::super::context::TreeDefinitions;
use super::super::shell::Walk;
use super::super::status;
use super::{mentions, text};

/// The bodies of the functions a command whose text is `own` may run: those it runs, and those
/// their bodies run ([`command_names`]; every word of them when a function of the script runs its
/// arguments, [`runs_a_positional_parameter`]), on to the end, among the tree's definitions
/// (`defs`, [`tree_definitions`]) and the functions `known` defined before it (a caller's); a
/// function name given as an argument (`warn fail`, `echo fail`) runs nothing (s26: `fail() {
/// ...; exit 1; }; soft() { pg_isready -h db || warn "fail"; }; soft; echo ok` was denied, 0 / 0
/// in bash 5.2 and dash 0.5.12). The words of the tree's `trap`
/// commands and of the `trap` lines of the texts `outer` it runs in count as named (a trap may run
/// at any time). A function never named there cannot run: its `exit 1` fails nothing (s25: `fail()
/// { echo "F $*" >&2; exit 1; }` never called made `warn() { echo "W $*" >&2; }; soft() {
/// pg_isready -h db || warn x; }; soft; echo ok` a denial, 0 / 0 in bash 5.2 and dash 0.5.12).
///
/// `None` when that is not known from the text: a name the script's text `defined` defines that
/// is not in the tree, a name defined more than once (in the tree and before it, or twice in
/// either), a body or the script that runs a command named by an expansion other than a
/// positional parameter (`$cmd`, `eval`, `source`, `.`), or an outer `trap` line whose quotes do
/// not close on it.
pub(super) fn reachable_bodies(
    own: &str,
    defs: &TreeDefinitions,
    defined: &[String],
    known: &[(String, String)],
    outer: &[std::rc::Rc<str>],
) -> Option<Vec<String>> {
    if defs.2 {
        return None;
    }
    let mut all: Vec<(String, String)> = known.to_vec();
    all.extend(defs.0.iter().cloned());
    // (An outer text's `trap` line, whole: one whose quotes do not close there is not read.)
    let mut traps = defs.1.clone();
    for t in outer {
        for line in super::code_view(t).lines().filter(|l| mentions(l, &["trap"])) {
            if line.matches('\'').count() % 2 == 1 || line.matches('"').count() % 2 == 1 {
                return None;
            }
            traps.push(' ');
            traps.push_str(line);
        }
    }
    let count = |name: &str| all.iter().filter(|(f, _)| f == name).count();
    // (A name the text defines that this tree does not: defined in another part of it.)
    if all.iter().any(|(f, _)| count(f) != 1) || defined.iter().any(|d| count(d) == 0) {
        return None;
    }
    let words = |t: &str| -> Vec<String> {
        t.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')).map(str::to_string).collect()
    };
    // (A body's argument words run nothing, unless a function runs its arguments: `"$@"`.)
    let runs_arguments = all.iter().any(|(_, b)| runs_a_positional_parameter(b));
    let mut seen: Vec<usize> = Vec::new();
    let named = |t: &str| -> Vec<String> {
        if runs_arguments { words(t) } else { command_names(t).iter().flat_map(|n| words(n)).collect() }
    };
    let mut todo = named(own);
    todo.extend(words(&traps));
    while let Some(w) = todo.pop() {
        let Some(i) = all.iter().position(|(f, _)| *f == w) else {
            continue;
        };
        if seen.contains(&i) {
            continue;
        }
        if runs_a_named_command(&all[i].1) {
            return None;
        }
        seen.push(i);
        todo.extend(named(&all[i].1));
    }
    Some(seen.into_iter().map(|i| all[i].1.clone()).collect())
}

/// The function definitions (name, body) and the `trap` commands' text of the tree whose root is
/// `root`, and whether the script runs a command named by an expansion ([`runs_a_named_command`]).
pub(super) fn tree_definitions(root: Node<'_>, walk: &Walk<'_>) -> TreeDefinitions {
    let mut all: Vec<(String, String)> = Vec::new();
    let mut traps = String::new();
    status::each_node(root, |k| match k.kind_name() {
        "function_definition" => {
            if let (Some(m), Some(b)) = (k.child_by_field("name"), k.child_by_field("body")) {
                all.push((text(m, walk).to_string(), text(b, walk).to_string()));
            }
        }
        "command" if k.child_by_field("name").is_some_and(|m| text(m, walk) == "trap") => {
            traps.push(' ');
            traps.push_str(text(k, walk));
        }
        _ => {}
    });
    (all, traps, runs_a_named_command(&super::code_view(walk.src)))
}

/// The segments of `body` between separators (`;`, newline, `&`, `|`, brackets, a backquote),
/// each one's first word but the keywords before a command (`if`, `then`, `do`, `!`, ...), its
/// assignments (`X=1 f`) and its redirections (`>/dev/null f`): the words that may name a
/// command. A separator inside quotes splits there too, so a word of a string may be taken for a
/// name, never a name missed.
fn command_names(body: &str) -> Vec<String> {
    body.split([';', '\n', '&', '|', '{', '(', ')', '}', '`'])
        .filter_map(|segment| {
            segment.split_whitespace().find(|w| {
                !matches!(*w, "if" | "then" | "do" | "else" | "elif" | "while" | "until" | "!")
                    && !w.contains('=')
                    && !w.trim_start_matches(|c: char| c.is_ascii_digit()).starts_with(['<', '>'])
            })
        })
        .map(str::to_string)
        .collect()
}

/// Whether a command of `body` is named by a positional parameter (`"$@"`, `$1`, `${2}`): the
/// function runs what its callers pass (`retry() { "$@"; }; retry fail`), so an argument word may
/// name a function that runs.
fn runs_a_positional_parameter(body: &str) -> bool {
    command_names(body).iter().any(|w| {
        let w = w.trim_matches(['"', '\'']);
        let w = w.strip_prefix("${").or_else(|| w.strip_prefix('$')).unwrap_or("");
        w.starts_with(|c: char| c.is_ascii_digit() || c == '@' || c == '*')
    })
}

/// Whether a command of `body` (the first word after a separator) is named by an expansion other
/// than a positional parameter (`$cmd`, `${F}`, `$(x)`), or the body holds `eval`, `source` or `.`:
/// it could then run any function. The text of an arithmetic expansion or command (`$(( ... ))`,
/// `(( ... ))`) names no command, only the command substitutions in it do
/// ([`without_arithmetic`]; s27: `[ $(( $(date +%s) - $(stat -c %Y "$F") )) -lt 120 ]` was read as
/// running a command named by `$`, so fresh25's 51, 0 / 0 in bash 5.2, was denied).
fn runs_a_named_command(body: &str) -> bool {
    let body = &without_arithmetic(body);
    let positional = |w: &str| {
        let w = w.trim_matches('"');
        matches!(w, "$@" | "$*" | "${@}" | "${*}")
            || w.strip_prefix('$').is_some_and(|d| d.len() == 1 && d.as_bytes()[0].is_ascii_digit())
    };
    mentions(body, &["eval", "source", "command", "builtin", "xargs", "env", "exec", "time", "nohup"])
        || body.split_whitespace().any(|w| w == ".")
        || body
            .split([';', '\n', '&', '|', '{', '(', ')', '}'])
            .filter_map(|segment| {
                segment.split_whitespace().find(|w| {
                    !matches!(*w, "if" | "then" | "do" | "else" | "elif" | "while" | "until" | "!")
                        && !w.contains('=')
                })
            })
            .any(|w| w.contains(['$', '`']) && !positional(w))
}

/// Whether all `body` (a function's) leaves behind is files it writes that nothing else names:
/// each target a literal path (no expansion or pattern), named in the script `src`, in each text
/// `outer` around it and in the other bodies `others` no more than in `body` itself, and the body
/// with those writes sent to `/dev/null` leaves no state ([`status::leaves_state`]). No command
/// of the script reads such a file, so writing it changes nothing that runs later (s25:
/// `check_cache() { if redis-cli -h cache ping; then :; else echo down >> /tmp/h.log; fi; };
/// check_cache || true` exits 0 / 0 in bash 5.2 and dash 0.5.12).
pub(super) fn only_writes_unread_files(
    body: &str,
    src: &str,
    outer: &[std::rc::Rc<str>],
    others: &[(String, String)],
) -> bool {
    let targets = status::file_targets(body);
    let mut rest = body.to_string();
    for written in &targets {
        // A name through a variable holding a literal path (`"$LOG"`, s26): its path is looked
        // for in the script (`status::named_elsewhere_in`, the body its one place there), in the
        // texts around it and in the known bodies.
        if written.contains('$') {
            let vars = status::path_variables(src);
            let at: Vec<(usize, usize)> = src.match_indices(body).map(|(i, _)| (i, i + body.len())).collect();
            let unread = status::resolve_path(written, &vars).is_some_and(|path| {
                let names = |x: &str| {
                    x.contains(&path) || vars.iter().any(|v| written.contains(&v.name) && x.contains(&v.name))
                };
                at.len() == 1
                    && !status::named_elsewhere_in(written, src, &at)
                    && !outer.iter().any(|x| **x != *src && names(x))
                    && others.iter().all(|(_, b)| b == body || src.contains(b.as_str()) || !names(b))
            });
            if !unread {
                return false;
            }
            rest = rest.replace(written.as_str(), "/dev/null");
            continue;
        }
        let t = written.trim_matches(['"', '\'']);
        let own = body.matches(t).count();
        let elsewhere = |x: &str| {
            let n = x.matches(t).count();
            n != 0 && n != own
        };
        let unread = !t.is_empty()
            && !t.contains(['$', '`', '*', '?', '[', '~', '&'])
            && !elsewhere(src)
            && !outer.iter().any(|x| elsewhere(x))
            && others.iter().all(|(_, b)| b == body || !b.contains(t));
        if !unread {
            return false;
        }
        rest = rest.replace(t, "/dev/null");
    }
    !targets.is_empty() && !status::leaves_state(&rest)
}

/// `body` with the text of each arithmetic expansion or command (`$((` or `((` to its matching
/// `))`) blanked, delimiters included, but for the command substitutions in it (`$(cmd)`, whose
/// `$` alone is blanked): arithmetic evaluates words, it runs none, and a substitution's body is
/// a command's place (`$(( $(date +%s) - 5 ))` keeps ` (date +%s)`). An arithmetic opening with no
/// matching close, or a substitution with none, leaves the rest of the text as it is.
fn without_arithmetic(body: &str) -> String {
    let b = body.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    while i + 1 < b.len() {
        if !(b[i] == b'(' && b[i + 1] == b'(') {
            i += 1;
            continue;
        }
        let open = if i > 0 && b[i - 1] == b'$' { i - 1 } else { i };
        // (The matching `))`: parentheses counted, each nested `$(` a substitution kept as text.)
        let mut depth = 0usize;
        let mut subs: Vec<(usize, usize)> = Vec::new();
        let mut stack: Vec<Option<usize>> = Vec::new();
        let mut j = i + 2;
        let mut close = None;
        while j < b.len() {
            match b[j] {
                b'(' => {
                    let sub = j > 0 && b[j - 1] == b'$' && b.get(j + 1) != Some(&b'(');
                    stack.push(sub.then_some(j - 1));
                    depth += 1;
                }
                b')' if depth == 0 => {
                    if b.get(j + 1) == Some(&b')') {
                        close = Some(j + 1);
                    }
                    break;
                }
                b')' => {
                    depth -= 1;
                    if let Some(Some(start)) = stack.pop() {
                        subs.push((start, j));
                    }
                }
                _ => {}
            }
            j += 1;
        }
        let Some(close) = close else {
            i += 2;
            continue;
        };
        // (Inner substitutions of inner ones are inside the outermost: keep the outermost.)
        for (k, c) in out.iter_mut().enumerate().take(close + 1).skip(open) {
            let kept = subs.iter().any(|&(s, e)| k > s && k <= e);
            if !kept && !c.is_ascii_whitespace() {
                *c = b' ';
            }
        }
        i = close + 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| body.to_string())
}
