//! Where a value lives (bash manual, "Command Execution Environment"): subshells, pipelines and the background put back what they change (`flow::SCOPE`), a shell the script starts sees only exported variables, functions' `local` variables, aliases, and `for` loops whose words are known only when the analysis reaches them.

use std::collections::{HashMap, HashSet};

use super::super::context::{Ctx, RefKind, is_reserved_char};
use super::super::flow::SCOPE;
use super::super::unwrap::{errexit_flag, pipefail_flag};
use super::super::{Dependency, MAX_DEPTH};
use super::{Overrides, Run, shell_file_pos, shell_script_pos, stdin_operands};

/// What a subshell may change, saved where it opens (`flow::SCOPE`) and put back where it closes.
pub(in crate::engine::exec) struct Saved {
    vars: HashMap<String, String>,
    exported: HashSet<String>,
    unset: HashSet<String>,
    unexported: HashSet<String>,
    positional: Option<Vec<String>>,
    functions: super::super::context::Functions,
    aliases: Vec<(String, String, usize, usize)>,
    expand_aliases: bool,
    allexport: Option<bool>,
}

impl Ctx<'_> {
    /// A `for NAME in WORDS` loop whose words are known only now (`spec` is NAME, [`SCOPE`],
    /// the words' piece): the body once per word with NAME set to it, at most
    /// `flow::MAX_LOOP_WORDS` words; otherwise once, NAME a value known only at run time, in a
    /// region that may not run.
    pub(super) fn run_loop(&mut self, spec: &str, body: &[String], depth: usize, certain: bool) -> Run {
        let Some((name, words)) = spec.split_once(SCOPE) else {
            return Run::Done;
        };
        let mut values = Vec::new();
        for w in super::super::shell::piece_words(words) {
            // `"$@"`: one word per positional parameter (none when there are none).
            let all =
                w.strip_prefix(['$', super::super::context::QDOLLAR]).is_some_and(|n| n == "@" || n == "{@}");
            match (&self.positional, all) {
                (Some(p), true) => values.extend(p.iter().cloned()),
                _ => values.extend(self.resolve_word(&w, depth)),
            }
        }
        // (A value known only at run time may split into any number of words, or none.)
        let known = values.iter().all(|v| !self.render_lit(v).chars().any(is_reserved_char));
        if known && values.is_empty() {
            return Run::Done;
        }
        if known && values.len() <= super::super::flow::MAX_LOOP_WORDS && self.loop_walks_left >= values.len()
        {
            self.loop_walks_left -= values.len();
            self.allexport_mark(name);
            for v in values {
                self.shell_vars.insert(name.to_string(), v);
                if let Run::End(found) = self.run_pieces(body, depth, certain) {
                    return Run::End(found);
                }
            }
            return Run::Done;
        }
        let before = (self.shell_vars.clone(), self.unset.clone(), self.allexport, self.functions.clone());
        // A word that may name a host known only at run time (command output, an env value not
        // known here, `read -a` of unknown input) makes the variable one too: a client given it
        // is warned about, as it is given that word outside a loop (s23: `for i in "${a[@]}"`
        // reached nothing). Other words (a script variable not followed) stay unknown.
        let may_be_host = values.iter().any(|v| {
            self.render_lit(v).chars().any(|c| {
                self.ref_of(c).is_some_and(|r| matches!(r.kind, RefKind::UnresolvedCmd | RefKind::Unresolved))
            })
        });
        let kind = if may_be_host { RefKind::UnresolvedCmd } else { RefKind::Unknown };
        let unknown = self.new_ref(kind, &format!("${name}")).to_string();
        self.shell_vars.insert(name.to_string(), unknown);
        if let Run::End(found) = self.run_pieces(body, depth, false) {
            return Run::End(found);
        }
        self.mark_uncertain(&before.0, &before.1, before.2, &before.3, None);
        Run::Done
    }

    /// What a subshell may change (`flow::SCOPE`).
    pub(in crate::engine::exec) fn save_vars(&self) -> Saved {
        Saved {
            vars: self.shell_vars.clone(),
            exported: self.exported.clone(),
            unset: self.unset.clone(),
            unexported: self.unexported.clone(),
            positional: self.positional.clone(),
            functions: self.functions.clone(),
            aliases: self.aliases.clone(),
            expand_aliases: self.expand_aliases,
            allexport: self.allexport,
        }
    }

    /// Puts back what a subshell may have changed; `unknown`: it may also have run in this shell,
    /// so a variable it changed holds a value known only at run time.
    pub(in crate::engine::exec) fn restore_vars(&mut self, before: Saved, unknown: bool) {
        let changed: Vec<String> = if unknown {
            let mut changed: Vec<String> = self
                .shell_vars
                .iter()
                .filter(|(k, v)| before.vars.get(*k) != Some(*v))
                .map(|(k, _)| k.clone())
                .collect();
            changed.extend(self.unset.symmetric_difference(&before.unset).cloned());
            changed
        } else {
            Vec::new()
        };
        self.shell_vars = before.vars;
        self.exported = before.exported;
        self.unset = before.unset;
        self.unexported = before.unexported;
        self.positional = before.positional;
        self.functions = before.functions;
        self.aliases = before.aliases;
        self.expand_aliases = before.expand_aliases;
        self.allexport = if unknown && self.allexport != before.allexport { None } else { before.allexport };
        for name in changed {
            let value = self.new_ref(RefKind::Unknown, &format!("${name}")).to_string();
            self.shell_vars.insert(name.clone(), value);
            self.uncertain.insert(name);
        }
    }

    /// Runs `run` as a new shell would (a child process: `sh -c`, `bash FILE`, `... | sh`): it
    /// sees only the exported variables (bash manual, "Command Execution Environment"), none of
    /// the functions or aliases, and nothing it changes comes back.
    pub(in crate::engine::exec) fn in_child_shell<T>(
        &mut self,
        shell: Option<&'static str>,
        run: impl FnOnce(&mut Self) -> T,
    ) -> T {
        let before = self.save_vars();
        let saved = (std::mem::replace(&mut self.shell, shell), std::mem::take(&mut self.locals));
        let (exported, unset, unexported, env) = (&self.exported, &self.unset, &self.unexported, self.env);
        self.shell_vars.retain(|k, _| {
            exported.contains(k) || env.vars.contains_key(k) && !unset.contains(k) && !unexported.contains(k)
        });
        // A container variable whose export the script took away is not in the child's env.
        let hidden: Vec<String> =
            self.unexported.iter().filter(|k| self.env.vars.contains_key(*k)).cloned().collect();
        self.unset.extend(hidden);
        self.unexported.clear();
        // (`set -a` is an option of this shell, not passed to the ones it starts.)
        self.allexport = Some(false);
        self.functions = std::rc::Rc::default();
        self.aliases.clear();
        self.expand_aliases = false;
        let out = run(self);
        self.restore_vars(before, false);
        (self.shell, self.locals) = saved;
        out
    }

    /// A shell started by the script (`sh -c SCRIPT`, `bash FILE`, `sh` reading its standard
    /// input), in a child process ([`Self::in_child_shell`]); `rest` its words rendered, `raw_rest`
    /// as resolved, `overrides` the assignments before it (exported to it).
    pub(in crate::engine::exec) fn run_shell(
        &mut self,
        name: &str,
        rest: &[String],
        raw_rest: &[String],
        overrides: Overrides,
        depth: usize,
    ) -> Option<Dependency> {
        if depth >= MAX_DEPTH {
            return None;
        }
        let kind = match name {
            "bash" => "bash",
            "dash" => "dash",
            "sh" | "ash" => "sh",
            _ => "other",
        };
        let stdin = self.stdin_script.take();
        let stdin_file = self.stdin_file.take().map(|f| self.render_lit(&f));
        self.in_child_shell(Some(kind), |ctx| {
            for (n, v) in overrides {
                if n.is_empty() {
                    // `env -i sh ...`: the container's env does not reach the shell.
                    let names: Vec<String> = ctx.env.vars.keys().cloned().collect();
                    ctx.unset.extend(names);
                    continue;
                }
                ctx.exported.insert(n.clone());
                ctx.unset.remove(&n);
                ctx.shell_vars.insert(n, v);
            }
            // bash turns on the options `SHELLOPTS` lists when it is in its environment at
            // start-up (bash manual, "Bash Variables"); dash does not read it.
            let shellopts = if kind == "bash" { ctx.shellopts_from_env() } else { (false, false) };
            let Some(pos) = shell_script_pos(rest) else {
                // `sh FILE args`: the shell runs the file; without one (or with `-s`) it
                // reads its script from standard input, here a here-string.
                let Some(k) = shell_file_pos(rest) else {
                    // `sh < FILE`, `sh -s ARGS < FILE`, `cat FILE | sh`: the shell runs FILE, as
                    // `sh FILE ARGS` does (bash 5.2 and dash 0.5.12 run its commands alike; `$0`
                    // is the shell's name there, the file's path here).
                    if let (None, Some(file)) = (&stdin, stdin_file) {
                        let saved = ctx.shell_options(rest, shellopts);
                        let at = stdin_operands(rest).min(raw_rest.len());
                        let found = ctx.run_named_file(&file, &raw_rest[at..], false, depth);
                        (ctx.errexit, ctx.pipefail) = saved;
                        return found;
                    }
                    let script = stdin?;
                    ctx.positional = Some(Vec::new());
                    // `echo '...' | sh -e`: its options are all its words.
                    let saved = ctx.shell_options(rest, shellopts);
                    let found = ctx.analyze_script(&script, depth + 1);
                    (ctx.errexit, ctx.pipefail) = saved;
                    return found;
                };
                let saved = ctx.shell_options(&rest[..k], shellopts);
                let found = ctx.run_named_file(&rest[k], &raw_rest[k + 1..], false, depth);
                (ctx.errexit, ctx.pipefail) = saved;
                return found;
            };
            // `sh -c SCRIPT [NAME [ARGS...]]`: NAME is `$0`, ARGS are `$1`...
            let saved = (ctx.positional.take(), ctx.arg0.take());
            ctx.arg0 = raw_rest.get(pos + 1).cloned();
            ctx.positional = Some(raw_rest.get(pos + 2..).map(<[String]>::to_vec).unwrap_or_default());
            // The script is the word's value: `sh -c "$CHECK"` runs CHECK's text.
            let script = ctx.render_lit(&raw_rest[pos]);
            let saved_options = ctx.shell_options(&rest[..pos], shellopts);
            let found = ctx.analyze_script(&script, depth + 1);
            (ctx.errexit, ctx.pipefail) = saved_options;
            (ctx.positional, ctx.arg0) = saved;
            found
        })
    }

    /// Sets errexit and pipefail for a child shell started with the options `opts` (the words
    /// before its script or file) and `shellopts` (errexit, pipefail from its `SHELLOPTS`);
    /// returns the values to put back. errexit is the child's own; pipefail stays on if it was
    /// (a crude reading: a `pipefail` the walk sees anywhere keeps it).
    fn shell_options(&mut self, opts: &[String], shellopts: (bool, bool)) -> (bool, bool) {
        let saved = (self.errexit, self.pipefail);
        self.errexit = errexit_flag(opts) || shellopts.0;
        self.pipefail |= pipefail_flag(opts) || shellopts.1;
        saved
    }

    /// Whether `SHELLOPTS`, as the child shell's environment has it, lists errexit and pipefail:
    /// a value exported by the script or given by the container's `env` (a value not known
    /// there, from a `valueFrom`, counts as listing both).
    fn shellopts_from_env(&mut self) -> (bool, bool) {
        const NAME: &str = "SHELLOPTS";
        let exported = self.exported.contains(NAME) || self.env.vars.contains_key(NAME);
        if !exported || self.unset.contains(NAME) {
            return (false, false);
        }
        match self.lookup(NAME) {
            super::super::words::Lookup::Val(v) => {
                if !v.bytes().all(|b| b.is_ascii_lowercase() || b == b':' || b == b'_') {
                    return (true, true);
                }
                let listed = |o: &str| v.split(':').any(|w| w == o);
                (listed("errexit"), listed("pipefail"))
            }
            super::super::words::Lookup::Undef => (false, false),
            _ => (true, true),
        }
    }

    /// Makes `name` local to the function being run: its value, unset and exported state are
    /// put back when the function returns.
    pub(in crate::engine::exec) fn make_local(&mut self, name: &str) {
        let entry = (
            name.to_string(),
            self.shell_vars.get(name).cloned(),
            self.unset.contains(name),
            self.exported.contains(name),
        );
        if let Some(frame) = self.locals.last_mut()
            && !frame.iter().any(|e| e.0 == name)
        {
            frame.push(entry);
        }
    }

    /// The script an alias makes of `piece`, whose command word is `word`, with the alias's name:
    /// when the shell expands aliases (a POSIX `sh` always, bash after `shopt -s
    /// expand_aliases`) and the alias was defined on an earlier line of this script (bash manual,
    /// "Aliases": an alias takes effect on the next line read). The word must be unquoted.
    pub(in crate::engine::exec) fn alias_expansion(
        &self,
        piece: &str,
        word: &str,
    ) -> Option<(String, String)> {
        let enabled = match self.shell {
            Some("bash") => self.expand_aliases,
            Some("sh" | "dash") => true,
            _ => false,
        };
        if !enabled {
            return None;
        }
        let (name, text, _, _) = self
            .aliases
            .iter()
            .rev()
            .find(|(n, _, id, line)| n == word && *id == self.script_id && *line < self.line)?;
        let at = piece.split(char::is_whitespace).position(|w| w == name)?;
        let mut out: Vec<&str> = piece.split(char::is_whitespace).collect();
        out[at] = text;
        let script: String = out.join(" ").chars().filter(|c| *c != super::super::shell::REDIRECT).collect();
        Some((name.clone(), script))
    }
}

/// The index of the `SCOPE f` piece that closes the loop whose body starts at `at` (loops nest).
pub(super) fn loop_end(pieces: &[String], at: usize) -> usize {
    let mut level = 0usize;
    for (i, p) in pieces.iter().enumerate().skip(at) {
        match p.strip_prefix(SCOPE).and_then(|s| s.chars().next()) {
            Some('F') => level += 1,
            Some('f') if level == 0 => return i,
            Some('f') => level -= 1,
            _ => {}
        }
    }
    pieces.len()
}
