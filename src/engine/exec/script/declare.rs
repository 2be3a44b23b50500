//! Variables a script sets and unsets: arrays `NAME=(...)`, `set -a` (allexport), the
//! declaration builtins (`export`, `readonly`, `local`, `declare`, `typeset`) and `unset`.

use super::super::context::{Ctx, RefKind, is_ident};
use super::super::shell::split_assignment;

impl Ctx<'_> {
    /// `value` of `NAME=value`: for an array `(W0 W1 ...)` (bash manual, "Arrays"), its elements
    /// after W0 are kept as the variables `NAME[1]`, ... and their count as `NAME[#]` (so that
    /// subshells, regions that may not run and child shells treat them as they treat `NAME`), and
    /// W0 is returned, the value of `$NAME`; any other value is returned as it is.
    pub(super) fn assign_array(&mut self, name: &str, value: String, depth: usize) -> String {
        let Some(inner) = value.strip_prefix('(').and_then(|v| v.strip_suffix(')')) else {
            self.drop_array(name);
            return value;
        };
        let words = super::super::shell::piece_words(inner);
        self.drop_array(name);
        // An unquoted expansion is split into fields, each an element (bash manual, "Arrays":
        // the words of the compound assignment are expanded as a command's are): one whose
        // value is known only at run time makes any number of elements (`arr=($(cat FILE))`),
        // so every element is then known only at run time, never an empty one (s24).
        let mut elements = Vec::with_capacity(words.len());
        for e in &words {
            if !e.contains('$') && !e.chars().any(|c| self.split_words.contains(&c)) {
                elements.push(self.resolve_text(e, depth, true).0);
                continue;
            }
            let fields = self.resolve_word(e, depth);
            if fields.iter().any(|f| self.holds_unknown_value(f)) {
                self.read_array(name, None);
                return self.shell_vars.get(name).cloned().unwrap_or_default();
            }
            elements.extend(fields);
        }
        let mut first = String::new();
        for (i, v) in elements.iter().cloned().enumerate() {
            if i == 0 {
                first = v;
            } else {
                self.shell_vars.insert(format!("{name}[{i}]"), v);
            }
        }
        // (With W0, so that a later assignment to NAME by other means is seen: see `brace_expand`.)
        self.shell_vars.insert(format!("{name}[#]"), format!("{}\0{first}", elements.len()));
        first
    }

    /// Whether `value` holds a value known only at run time (a variable, command output, one of
    /// several values, a script variable not followed).
    /// (Looked up marker by marker, not rendered, a few literals deep.)
    fn holds_unknown_value(&self, value: &str) -> bool {
        fn within(ctx: &Ctx<'_>, value: &str, depth: usize) -> bool {
            depth < 8
                && value.chars().any(|c| match ctx.ref_of(c).map(|r| &r.kind) {
                    Some(
                        RefKind::Unresolved | RefKind::UnresolvedCmd | RefKind::OneOf(_) | RefKind::Unknown,
                    ) => true,
                    Some(RefKind::Lit(v)) => within(ctx, v, depth + 1),
                    _ => false,
                })
        }
        within(self, value, 0)
    }

    /// Forgets the elements after 0 of the array `name` (a new value, or `unset`).
    pub(super) fn drop_array(&mut self, name: &str) {
        // (`NAME[`, compared without formatting it.)
        let element = |k: &str| k.strip_prefix(name).is_some_and(|rest| rest.starts_with('['));
        if self.shell_vars.keys().any(|k| element(k)) {
            self.shell_vars.retain(|k, _| !element(k));
        }
    }

    /// Under `set -a`, `name` (just assigned) is exported.
    pub(super) fn allexport_mark(&mut self, name: &str) {
        if self.allexport == Some(true) && is_ident(name) {
            self.exported.insert(name.to_string());
            self.unexported.remove(name);
        }
    }

    /// `export A=x`, `declare -x A=x`, `local A=x`: remember script variables. `export -n A` and
    /// `declare +x A` take A out of the clients' environment.
    pub(super) fn declare(&mut self, words: &[String], depth: usize) {
        let command = words.first().map_or("", String::as_str);
        let is_export = command == "export";
        // `local`, and `declare`/`typeset` without `-g`, make function-local variables (bash
        // manual, "Bash Builtins"); `local` outside a function is an error that assigns nothing.
        let is_local = command == "local"
            || matches!(command, "declare" | "typeset")
                && !words[1..].iter().any(|w| w.starts_with('-') && w.contains('g'));
        if command == "local" && self.locals.is_empty() {
            return;
        }
        let is_local = is_local && !self.locals.is_empty();
        let mut export = is_export;
        let mut unexport = false;
        for w in &words[1..] {
            if w.starts_with('-') {
                export |= w.contains('x');
                unexport |= is_export && w.contains('n');
                continue;
            }
            if w.starts_with('+') {
                unexport |= w.contains('x');
                continue;
            }
            let name = split_assignment(w).map_or(w.as_str(), |(n, _)| n);
            if is_local && is_ident(name) {
                self.make_local(name);
                // `local H` alone: bash leaves H unset in the function, dash keeps its value.
                if split_assignment(w).is_none() {
                    match self.shell {
                        Some("bash") => {
                            self.shell_vars.remove(name);
                            self.unset.insert(name.to_string());
                        }
                        Some("dash") => {}
                        _ => {
                            let unknown = self.new_ref(RefKind::Unknown, &format!("${name}")).to_string();
                            self.shell_vars.insert(name.to_string(), unknown);
                        }
                    }
                }
            }
            if let Some((n, v)) = split_assignment(w) {
                self.drop_array(n);
                let (val, _) = self.resolve_text(v, depth, true);
                self.shell_vars.insert(n.to_string(), val);
            }
            if !is_ident(name) {
                continue;
            }
            if split_assignment(w).is_some() && !unexport {
                self.allexport_mark(name);
            }
            if unexport {
                self.exported.remove(name);
                self.unexported.insert(name.to_string());
            } else if export {
                self.exported.insert(name.to_string());
                self.unexported.remove(name);
                self.unset.remove(name);
            }
        }
    }

    /// `unset NAME...` (`-v` variables; `-f` functions, `-n` a name reference: not followed).
    pub(super) fn unset_vars(&mut self, words: &[String]) {
        let mut functions = false;
        for w in words {
            if w.starts_with('-') {
                functions |= w.contains('f');
                if w.contains('n') {
                    return;
                }
                continue;
            }
            if functions {
                std::rc::Rc::make_mut(&mut self.functions).retain(|(n, _)| n != w);
            } else if is_ident(w) {
                self.drop_array(w);
                self.shell_vars.remove(w);
                self.exported.remove(w);
                self.unexported.remove(w);
                self.unset.insert(w.clone());
            }
        }
    }
}
