//! The script's functions as the status walk reads them: the top-level definitions
//! ([`top_functions`]), those in force at a node ([`functions_at`]), and the names of functions
//! whose every call leaves the status as it found it ([`known_ok`]).

use super::*;

/// The functions a command at `n` may call, split into those that may do anything and those that
/// only write output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Funcs {
    pub(super) risky: std::rc::Rc<Vec<String>>,
    pub(super) ok: std::rc::Rc<Vec<String>>,
    /// Those of `risky` whose call may only fail by writing files the script names nowhere else
    /// ([`TopFunction::writes_only`]): `harmless::may_only_fail` takes a call of one as it takes
    /// the write itself.
    pub(super) writers: std::rc::Rc<Vec<String>>,
}

/// A function defined at the top level of a script (`Walk::top_functions`): its name, the byte
/// its definition ends at, and whether a call after that is harmless: defined once, its body
/// [`harmless`](fn@harmless) (no function call, no `exit`/`return`: `log() { echo "$@" >&2; }`).
pub(in crate::engine::exec) struct TopFunction {
    pub(super) name: String,
    pub(super) end: usize,
    pub(super) harmless: bool,
    /// Not `harmless`, but only for writing files that the script names nowhere else (their
    /// names read through `path_vars`): the body is `harmless::may_only_fail` and leaves nothing
    /// (no `exit`/`return`). A call changes nothing the script reads later and may fail only as
    /// the write does (a read-only root filesystem). s26's new user: `LOG=/tmp/health.log; log()
    /// { echo "$(date +%s) [health] $*" >> "$LOG" 2>/dev/null; }; if ! pg_isready -h db; then log
    /// down; fi; curl -fsS localhost:8080/healthz` exits 0 / 0 in bash 5.2 and dash 0.5.12.
    pub(super) writes_only: bool,
    /// Its body ends with `exit 0` (`Some(true)`) or `return 0` (`Some(false)`) after commands
    /// that cannot fail (`constructs::zero_end`).
    pub(super) zero: Option<bool>,
    /// Where the next top-level definition of the name starts, when every definition of it is
    /// one at the top level: this one holds for a call at the top level between the two.
    pub(super) until: Option<usize>,
}

/// The top-level function definitions of the tree whose root is `root`.
fn top_functions(root: Node<'_>, walk: &Walk<'_>, rules: &Rules) -> Vec<TopFunction> {
    let all = Funcs {
        risky: std::rc::Rc::new(rules.functions.clone()),
        ok: std::rc::Rc::default(),
        writers: std::rc::Rc::default(),
    };
    // Each definition's name, body, where it takes effect and how many definitions it is: one
    // alike in every branch of an `if` with an `else` defines it at the `if`'s end, as many
    // times as there are branches (`constructs::alike_definitions`).
    let mut defs: Vec<(Node<'_>, Node<'_>, usize, usize)> = Vec::new();
    let mut c = root.walk();
    for k in root.named_children(&mut c) {
        match k.kind_name() {
            "function_definition" => {
                if let (Some(m), Some(b)) = (k.child_by_field("name"), k.child_by_field("body")) {
                    defs.push((m, b, k.end_byte(), 1));
                }
            }
            "if_statement" => {
                let (alike, branches) = constructs::alike_definitions(k, walk.src);
                defs.extend(alike.into_iter().map(|(m, b)| (m, b, k.end_byte(), branches)));
            }
            _ => {}
        }
    }
    // (The start of each plain top-level definition, by name: a name defined only so holds
    // each definition from its end to the next one's start.)
    let starts: Vec<(&str, usize)> = defs
        .iter()
        .filter(|d| d.3 == 1)
        .filter_map(|d| Some((text(d.0, walk), d.0.parent()?.start_byte())))
        .collect();
    defs.iter()
        .map(|&(name, body, end, count)| {
            let name = text(name, walk).to_string();
            // (The text's scan, `defined_functions`, may miss a definition after `then` or
            // `else`: for those, the tree's definitions of the name are counted.)
            let defined = if count == 1 {
                rules.functions.iter().filter(|f| **f == name).count()
            } else {
                let (mut n, mut visited) = (0, 0);
                each_node(root, |k| {
                    visited += 1;
                    n += usize::from(
                        k.kind_name() == "function_definition"
                            && k.child_by_field("name").is_some_and(|m| text(m, walk) == name),
                    );
                });
                work(walk, visited);
                n
            };
            // (Defined only at the top level, more than once: `log() { echo "$@"; }; c; log $?;
            // log() { [ "$1" = 0 ]; }` runs the first one at `log $?`, 0 / 0 in bash 5.2 and dash
            // 0.5.12 with the database down.)
            let tops = starts.iter().filter(|(m, _)| *m == name).count();
            let several = count == 1 && tops > 1 && defined == tops;
            let once = (defined == count || several) && body.kind_name() == "compound_statement";
            let harmless = once && harmless(body, walk, &all) && !leaves(body, walk);
            let writes_only =
                once && !harmless && may_only_fail(body, walk, &all) && !leaves(body, walk) && {
                    let own = [(body.start_byte(), body.end_byte())];
                    let targets = file_targets(text(body, walk));
                    !targets.is_empty() && !targets.iter().any(|f| named_elsewhere_in(f, walk.src, &own))
                };
            let until = several.then(|| {
                starts.iter().find(|(m, at)| *m == name && *at >= end).map_or(usize::MAX, |(_, at)| *at)
            });
            let zero = constructs::zero_end(text(body, walk));
            TopFunction { name, end, harmless, writes_only, zero, until }
        })
        .collect()
}

/// The script's functions at `n`: one defined once, at the script's top level before `n`, whose
/// body is [`harmless`](fn@harmless) is harmless to call (break-it pass, #10); any other may run anything.
/// The definitions are read once per tree (`Walk::top_functions`), not once per command.
pub(super) fn functions_at(n: Node<'_>, walk: &Walk<'_>, rules: &Rules) -> Funcs {
    let root_of_n = || {
        let mut root = n;
        while let Some(p) = root.parent() {
            root = p;
        }
        root
    };
    let own;
    let table = match walk.top_functions.get(walk.tree.get()) {
        Some((root, table)) => table.get_or_init(|| top_functions(*root, walk, rules)),
        None => {
            own = top_functions(root_of_n(), walk, rules);
            &own
        }
    };
    let base = rules.base.get_or_init(|| {
        let ok = rules.known_ok().clone();
        let oks: std::collections::HashSet<&str> = ok.iter().map(String::as_str).collect();
        let risky = rules.functions.iter().filter(|f| !oks.contains(f.as_str())).cloned().collect();
        Funcs { risky: std::rc::Rc::new(risky), ok, writers: std::rc::Rc::default() }
    });
    // (One of several top-level definitions holds at a call at the top level before the next:
    // not in a function's body, which may run after it.)
    let held = |f: &TopFunction| {
        f.until.is_none_or(|u| {
            n.end_byte() <= u && {
                let mut up = n.parent();
                while let Some(p) = up.filter(|p| p.kind_name() != "function_definition") {
                    up = p.parent();
                }
                up.is_none()
            }
        })
    };
    let mut ok: Vec<String> = table
        .iter()
        .filter(|f| f.harmless && f.end <= n.start_byte() && held(f))
        .map(|f| f.name.clone())
        .collect();
    let writers: Vec<String> = table
        .iter()
        .filter(|f| f.writes_only && f.end <= n.start_byte() && held(f))
        .map(|f| f.name.clone())
        .collect();
    if ok.is_empty() && writers.is_empty() {
        // (The same for every command of a tree that defines no harmless function: made once.)
        return base.clone();
    }
    // (A list per command: its cost counted, one unit a function.)
    work(walk, rules.functions.len());
    for name in base.ok.iter() {
        if !ok.contains(name) {
            ok.push(name.clone());
        }
    }
    let oks: std::collections::HashSet<&str> = ok.iter().map(String::as_str).collect();
    let risky = rules.functions.iter().filter(|f| !oks.contains(f.as_str())).cloned().collect();
    Funcs { risky: std::rc::Rc::new(risky), ok: std::rc::Rc::new(ok), writers: std::rc::Rc::new(writers) }
}

/// The functions defined before the script runs (a function's body) that are harmless to call:
/// defined once and certainly, where the call runs (`main() { pg_isready -h db || log down; };
/// log() { echo "$@"; }; main`: bash 5.2 and dash 0.5.12 exit 0 with the database down).
pub(super) fn known_ok(rules: &Rules) -> Vec<String> {
    known_ok_with(rules, &|body| std::rc::Rc::new(KnownBody::of(body)))
}

/// [`known_ok`], the facts of each body given by `body` (`Ctx::body_facts` keeps them per
/// body): a walk of the names, each body's facts read, not made (s12, issue #9).
pub(in crate::engine::exec) fn known_ok_with(
    rules: &Rules,
    body: &dyn Fn(&str) -> std::rc::Rc<KnownBody>,
) -> Vec<String> {
    let mut counts: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for f in &rules.functions {
        *counts.entry(f.as_str()).or_default() += 1;
    }
    let mut ok: Vec<String> = Vec::new();
    let mut taken = std::collections::HashSet::new();
    for (name, text) in &rules.known {
        if counts.get(name.as_str()) != Some(&1) || taken.contains(name.as_str()) {
            continue;
        }
        let facts = body(text);
        // (`harmless_text` of the body among the functions: harmless alone, and no word of it a
        // function's name.)
        if facts.harmless_alone && !facts.words.iter().any(|w| counts.contains_key(w.as_str())) {
            taken.insert(name.as_str());
            ok.push(name.clone());
        }
    }
    ok
}

/// Whether the function whose body is being walked (`rules.callers`) may have its output read by
/// code it returns to: a caller's text or a function's body holds `$(NAME` or `` `NAME `` for a
/// name defined with this body. What the body writes (`echo $?`) is then data (s22: `g() { C;
/// echo $?; }; exit $(g)` exits 1 / 0 with `>/dev/null` on C, 1 / 2 without, in bash 5.2 and
/// dash 0.5.12, and was warned as a status not used).
pub(super) fn output_read_by_caller(rules: &Rules) -> bool {
    let Some(callers) = &rules.callers else {
        return false;
    };
    let own = callers.own.trim();
    let texts =
        || callers.scripts.iter().map(|s| &**s).chain(callers.functions.iter().map(|(_, b)| b.as_str()));
    callers.functions.iter().filter(|(_, body)| body.trim() == own).any(|(name, _)| {
        texts().any(|t| {
            ["$(", "`"].iter().any(|open| {
                let pattern = format!("{open}{name}");
                t.match_indices(&pattern).any(|(i, _)| {
                    t[i + pattern.len()..]
                        .chars()
                        .next()
                        .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'))
                })
            })
        })
    })
}
