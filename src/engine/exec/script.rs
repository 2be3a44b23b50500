//! Stage 3b: running a script: its simple commands in turn, assignments and `export`, script files read from volumes, and building the reported [`Dependency`].

use super::clients::Hit;
use super::context::{Ctx, RefKind, basename, is_ident, is_reserved_char, sanitize, truncate_chars};
use super::flow::{COND, EXIT, FUNCTION, GUARD, MAX_CALL_DEPTH, PATTERN, PIPE, UNCOUPLED};
use super::hosts::HostClass;
use super::kubelet::env_literal;
use super::redact::{redact_bare_userinfo, redact_secrets};
use super::shell::{split_assignment, split_redirections};
use super::{
    Dependency, EnvValue, FileLookup, MAX_DEPTH, MAX_SCRIPT_BYTES, MAX_SCRIPT_FILES, MAX_SCRIPT_NESTING,
    UnresolvedScript, join_redacted,
};
use std::collections::{HashMap, HashSet};

/// A script's variables and unset names, before a region that may not run.
type VarsBefore = (HashMap<String, String>, HashSet<String>);

/// Command-level environment assignments (`PGHOST=db cmd`, `env PGHOST=db cmd`).
pub(super) type Overrides = Vec<(String, String)>;

/// For `sh [options] -c [options] script`, the index of the script among `vals`.
pub(super) fn shell_script_pos(vals: &[String]) -> Option<usize> {
    let mut has_c = false;
    let mut k = 0;
    while k < vals.len() {
        let v = vals[k].as_str();
        if v == "--" || v == "-" {
            k += 1;
            break;
        }
        if v.starts_with("--") {
            k += if matches!(v, "--rcfile" | "--init-file") { 2 } else { 1 };
            continue;
        }
        if v.len() > 1 && (v.starts_with('-') || v.starts_with('+')) {
            let flags = &v[1..];
            if v.starts_with('-') && flags.contains('c') {
                has_c = true;
            }
            k += 1;
            if flags.contains(['o', 'O']) {
                k += 1;
            }
            continue;
        }
        break;
    }
    (has_c && k < vals.len()).then_some(k)
}

/// For `sh [options] FILE [args]`, the index of FILE among `vals` (`None` with `-s`, or no file).
pub(super) fn shell_file_pos(vals: &[String]) -> Option<usize> {
    let mut k = 0;
    while k < vals.len() {
        let v = vals[k].as_str();
        if v == "--" {
            return (k + 1 < vals.len()).then_some(k + 1);
        }
        if v.starts_with("--") {
            k += if matches!(v, "--rcfile" | "--init-file") { 2 } else { 1 };
            continue;
        }
        if v.len() > 1 && (v.starts_with('-') || v.starts_with('+')) {
            if v.starts_with('-') && v.contains('s') {
                return None;
            }
            k += if v[1..].contains(['o', 'O']) { 2 } else { 1 };
            continue;
        }
        return Some(k);
    }
    None
}

/// Does a file that is executed directly run as a shell script? A `#!` line naming a shell, or
/// none at all (a shell runs such a file itself) on a name that is not another language's.
pub(super) fn runs_as_shell(path: &str, text: &str) -> bool {
    const SHELLS: &[&str] = &["sh", "bash", "ash", "dash", "zsh", "ksh", "mksh", "yash", "busybox"];
    if let Some(line) = text.strip_prefix("#!") {
        let mut words = line.lines().next().unwrap_or("").split_whitespace();
        let mut interpreter = basename(words.next().unwrap_or(""));
        if interpreter == "env" {
            interpreter = words.find(|w| !w.starts_with('-') && !w.contains('=')).map_or("", basename);
        }
        return SHELLS.contains(&interpreter);
    }
    let ext = basename(path).rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    !matches!(ext.as_deref(), Some("py" | "rb" | "pl" | "js" | "php" | "lua" | "awk" | "jar" | "class"))
}

impl Ctx<'_> {
    /// Analyse a `-c` script: each simple command in turn.
    pub(super) fn analyze_script(&mut self, script: &str, depth: usize) -> Option<Dependency> {
        if depth > MAX_DEPTH || self.over_budget.get() {
            return None;
        }
        if script.len() > MAX_SCRIPT_BYTES {
            self.too_long.get_or_insert(script.len());
            return None;
        }
        if !self.spend_object(script.len()) {
            return None;
        }
        // The shell splitter flattens function bodies, so a function's `$1` cannot be bound to
        // its call's arguments here: while a script that defines functions is analysed, a
        // positional parameter the script was not given is read as empty rather than as a remote
        // host (a miss at worst, never a denial on a guess).
        let saved_functions = self.defines_function;
        self.defines_function |= defines_function(script);
        let mut pieces = Vec::new();
        self.split_script(script, depth, &mut pieces);
        let saved_uncoupled = self.uncoupled.clone();
        if self.uncoupled.is_none()
            && !self.errexit
            && let Some(last) = always_exits_zero(script)
        {
            self.uncoupled = Some(format!("the script always exits 0 (`{last}` last)"));
        }
        let found = self.analyze_pieces(pieces, depth);
        self.uncoupled = saved_uncoupled;
        self.defines_function = saved_functions;
        found
    }

    fn analyze_pieces(&mut self, pieces: Vec<String>, depth: usize) -> Option<Dependency> {
        // A script that always exits 0 (its last command is `exit 0` or `true`, and nothing can
        // end it earlier with another status): no command in it can fail the probe.
        let saved = self.uncoupled.clone();
        // The open guard regions (`flow::GUARD`): for one whose condition is not known, the
        // variables and unset names before it, to tell what it assigned.
        let mut regions: Vec<Option<VarsBefore>> = Vec::new();
        // Nesting depth of the region being skipped (0: not skipping).
        let mut skipping = 0usize;
        for piece in pieces {
            if let Some(conds) = piece.strip_prefix(GUARD) {
                if conds.is_empty() {
                    if skipping > 0 {
                        skipping -= 1;
                    } else if let Some(Some((vars, unset))) = regions.pop() {
                        self.mark_uncertain(&vars, &unset);
                    }
                } else if skipping > 0 {
                    skipping += 1;
                } else {
                    match self.guard_holds(conds, depth) {
                        Some(false) => skipping = 1,
                        Some(true) => regions.push(None),
                        None => regions.push(Some((self.shell_vars.clone(), self.unset.clone()))),
                    }
                }
                continue;
            }
            if skipping > 0 {
                continue;
            }
            // An `exit` every open region of which certainly runs: the script ends here.
            if piece.starts_with(EXIT) {
                if regions.iter().all(Option::is_none) {
                    return None;
                }
                continue;
            }
            if piece.starts_with(PIPE) {
                self.piped = self.last_output.take();
                continue;
            }
            let (how, piece) = match piece.strip_prefix(UNCOUPLED).and_then(|p| p.split_once(UNCOUPLED)) {
                Some((how, rest)) => (Some(how.to_string()), rest.to_string()),
                None => (None, piece),
            };
            if self.uncoupled.is_none() {
                self.uncoupled = how;
            }
            let step = self.analyze_piece(piece, depth);
            self.uncoupled.clone_from(&saved);
            match step {
                Step::Next => {}
                Step::Stop => return None,
                Step::Found(d) if d.uncoupled.is_some() => {
                    self.uncoupled_found.get_or_insert(d);
                }
                Step::Found(d) => return Some(d),
            }
        }
        None
    }

    /// After a region that may not have run: every variable it assigned or unset is uncertain.
    fn mark_uncertain(&mut self, vars: &HashMap<String, String>, unset: &HashSet<String>) {
        let changed: Vec<String> = self
            .shell_vars
            .iter()
            .filter(|(k, v)| vars.get(*k) != Some(*v))
            .map(|(k, _)| k.clone())
            .chain(vars.keys().filter(|k| !self.shell_vars.contains_key(*k)).cloned())
            .chain(self.unset.symmetric_difference(unset).cloned())
            .collect();
        self.uncertain.extend(changed);
    }

    /// Whether the conditions of a `flow::GUARD` piece hold: `Some(false)` when one certainly
    /// fails, `Some(true)` when all certainly hold, `None` when that is not known.
    pub(super) fn guard_holds(&mut self, conds: &str, depth: usize) -> Option<bool> {
        let saved = (self.judging_guard, self.defines_function);
        (self.judging_guard, self.defines_function) = (true, false);
        let mut all = Some(true);
        for cond in conds.split(COND).skip(1) {
            let mut chars = cond.chars();
            let kind = chars.next();
            let rest = chars.as_str();
            let value = match kind {
                Some('T') => self.test_value(rest, depth),
                Some('F') => self.test_value(rest, depth).map(|v| !v),
                Some(k @ ('M' | 'N')) => {
                    let mut parts = rest.split(PATTERN);
                    let word = parts.next().unwrap_or("");
                    let patterns: Vec<&str> = parts.collect();
                    self.case_matches(word, &patterns, depth).map(|m| m == (k == 'M'))
                }
                _ => None,
            };
            match value {
                Some(false) => {
                    all = Some(false);
                    break;
                }
                Some(true) => {}
                None => all = None,
            }
        }
        (self.judging_guard, self.defines_function) = saved;
        all
    }

    /// The one word of `piece` as bash passes it, when known at admission: `None` if it holds a
    /// value known only at run time, or an unquoted expansion that bash would split or glob
    /// (`split`: the word is field-split, as a command's arguments are).
    fn cond_word(&mut self, raw: &str, split: bool, depth: usize) -> Option<String> {
        let (v, _) = self.resolve_text(raw, depth, true);
        let v = self.render_lit(&v);
        if v.chars().any(is_reserved_char) {
            return None;
        }
        let unquoted = raw.contains('$');
        if split && unquoted && (v.is_empty() || v.contains(|c: char| c.is_whitespace() || "*?[".contains(c)))
        {
            return None;
        }
        Some(v)
    }

    /// The status of a test piece (`[ ]`, `[[ ]]`, `test`, `true`, `false`, `:`), when certain.
    fn test_value(&mut self, piece: &str, depth: usize) -> Option<bool> {
        let (words, _) = split_redirections(piece, |w| self.render_lit(w));
        let (program, args) = words.split_first()?;
        if self.function(Some(program)).is_some() {
            return None;
        }
        let (args, double) = match program.as_str() {
            "true" | ":" => return Some(true),
            "false" => return Some(false),
            "test" => (args, false),
            "[" => (args.strip_suffix(&["]".to_string()])?, false),
            "[[" => (args.strip_suffix(&["]]".to_string()])?, true),
            _ => return None,
        };
        let mut values = Vec::with_capacity(args.len());
        for a in args {
            values.push(self.cond_word(a, !double, depth)?);
        }
        // In `[[ ]]` the right side of `==` and `!=` is a pattern: only a plain word is decided.
        if double && values.iter().any(|v| v.contains(['*', '?', '[', '(', '<', '>', '&', '|', '~'])) {
            return None;
        }
        test_expression(&values)
    }

    /// Whether a `case` word matches one of `patterns` (each a literal word or `*`), when certain.
    fn case_matches(&mut self, word: &str, patterns: &[&str], depth: usize) -> Option<bool> {
        let one = |ctx: &Self, p: &str| -> Option<String> {
            let (words, _) = split_redirections(p, |w| ctx.render_lit(w));
            match words.as_slice() {
                [w] => Some(w.clone()),
                _ => None,
            }
        };
        let value = self.cond_word(&one(self, word)?, false, depth)?;
        let mut unknown = false;
        for p in patterns {
            if p.trim() == "*" {
                return Some(true);
            }
            let pattern = one(self, p).and_then(|raw| self.cond_word(&raw, false, depth));
            match pattern {
                Some(pat) if !pat.contains(['*', '?', '[', '\\']) => {
                    if pat == value {
                        return Some(true);
                    }
                }
                _ => unknown = true,
            }
        }
        (!unknown).then_some(false)
    }

    /// The known output of the process substitution `word` is (a lone marker), if any.
    fn process_output(&self, word: &str) -> Option<String> {
        let mut chars = word.chars();
        let (Some(m), None) = (chars.next(), chars.next()) else {
            return None;
        };
        self.process_outputs.iter().find(|(k, _)| *k == m).map(|(_, t)| t.clone())
    }

    /// What `echo` or `printf` writes, with values as markers, when its text is known (`-e`
    /// escapes and `printf` formats other than `%s` are not followed).
    fn output_of(&self, args: &[String]) -> Option<String> {
        let (program, rest) = args.split_first()?;
        if !matches!(program.as_str(), "echo" | "printf" | "cat") {
            return None;
        }
        let rest: Vec<String> = rest.iter().map(|a| self.render_lit(a)).collect();
        match program.as_str() {
            "echo" => {
                let skip = rest.iter().take_while(|a| matches!(a.as_str(), "-n" | "-E")).count();
                if rest.get(skip).is_some_and(|a| a.starts_with('-') && a.len() > 1) {
                    return None;
                }
                Some(rest[skip..].join(" "))
            }
            // `cat` with no file writes its standard input (`cat <<EOF | sh`).
            "cat" if rest.is_empty() => self.stdin_script.clone(),
            "printf" => match rest.as_slice() {
                [format, values @ ..] if matches!(format.as_str(), "%s\\n" | "%s\n") => {
                    Some(values.join("\n"))
                }
                [format, values @ ..] => super::words::printf_s(format, values),
                [] => None,
            },
            _ => None,
        }
    }

    /// The builtins that assign variables from their words or input, followed when that is known
    /// (bash manual, "Bourne Shell Builtins" and "Bash Builtins"): `set -- WORDS` (or `set WORD...`)
    /// sets `$1`...; `printf -v NAME FORMAT [VALUE]` assigns the text `printf` would write (a
    /// format without `%` or `\\`, or `%s` with one value); `read NAME...` assigns the words of
    /// the first line of its standard input (a here-string, a here-document, `echo ... |`). What is
    /// not followed assigns a value known only at run time, never a stale one. True when `args` is
    /// one of these.
    fn builtin_assigns(&mut self, args: &[String]) -> bool {
        let Some((program, rest)) = args.split_first() else {
            return false;
        };
        match program.as_str() {
            "set" => {
                let words = match rest.iter().position(|a| a == "--") {
                    Some(at) => &rest[at + 1..],
                    None if rest.first().is_some_and(|a| !a.starts_with(['-', '+'])) => rest,
                    None => return false,
                };
                self.positional = Some(words.to_vec());
                true
            }
            // `shift [N]` drops the first N positional parameters (1 by default); more than there
            // are leaves them as they were (bash manual, "Bourne Shell Builtins"). An N known only
            // at run time leaves none known (break-it pass: `f() { shift; redis-cli -h "$1"; }; f x
            // 127.0.0.1` was denied as reaching `x`).
            "shift" => {
                let n = match rest.first() {
                    None => Some(1),
                    Some(n) => self.render_lit(n).parse::<usize>().ok(),
                };
                self.positional = match (self.positional.take(), n) {
                    (Some(p), Some(n)) if n <= p.len() => Some(p[n..].to_vec()),
                    (Some(p), Some(_)) => Some(p),
                    _ => None,
                };
                true
            }
            "printf" if rest.first().is_some_and(|a| a == "-v") => {
                let Some(name) = rest.get(1).map(|n| self.render_lit(n)).filter(|n| is_ident(n)) else {
                    return true;
                };
                let value = match &rest[2.min(rest.len())..] {
                    [format, values @ ..] => super::words::printf_s(&self.render_lit(format), values),
                    [] => None,
                };
                let value = value
                    .unwrap_or_else(|| self.new_ref(RefKind::UnresolvedCmd, &format!("${name}")).to_string());
                self.shell_vars.insert(name, value);
                true
            }
            "read" => {
                let mut names = Vec::new();
                let mut k = 0;
                let mut plain = true;
                while k < rest.len() {
                    let a = self.render_lit(&rest[k]);
                    if a.starts_with('-') && a.len() > 1 {
                        // `-p PROMPT`, `-t SECONDS`, `-u FD`: a value follows; `-a`, `-d`, `-n`, `-N`
                        // change what is read: not followed.
                        plain &= !a.contains(['a', 'd', 'n', 'N']);
                        k += if a.ends_with(['p', 't', 'u', 'a', 'd', 'n', 'N']) { 2 } else { 1 };
                        continue;
                    }
                    if is_ident(&a) {
                        names.push(a);
                    }
                    k += 1;
                }
                let line = self
                    .stdin_script
                    .clone()
                    .map(|w| self.render_lit(&w))
                    .filter(|t| plain && !t.contains(['$', '`', '\\']) && !t.chars().any(is_reserved_char))
                    .map(|t| t.lines().next().unwrap_or("").to_string());
                let mut fields: Vec<&str> =
                    line.as_deref().map(|l| l.split_whitespace().collect()).unwrap_or_default();
                for (i, name) in names.iter().enumerate() {
                    let value = match &line {
                        Some(_) if i + 1 == names.len() => fields.join(" "),
                        Some(_) if fields.is_empty() => String::new(),
                        Some(_) => fields.remove(0).to_string(),
                        None => self.new_ref(RefKind::UnresolvedCmd, &format!("${name}")).to_string(),
                    };
                    self.shell_vars.insert(name.clone(), value);
                }
                true
            }
            _ => false,
        }
    }

    /// One piece of [`Self::analyze_pieces`].
    fn analyze_piece(&mut self, piece: String, depth: usize) -> Step {
        {
            if let Some((name, body)) = piece.strip_prefix(FUNCTION).and_then(|p| p.split_once(FUNCTION)) {
                self.functions.retain(|(n, _)| n != name);
                self.functions.push((name.to_string(), body.to_string()));
                return Step::Next;
            }
            // Redirections are the shell's, not the command's arguments (`curl URL > /dev/null`).
            let (words, targets) = split_redirections(&piece, |w| self.render_lit(w));
            // A here-string is the command's standard input: a shell given no script reads its
            // script there (`bash -s <<< "pg_isready -h db"`).
            // (Or the output of the command piped into it: `echo "pg_isready -h db" | sh`.)
            self.stdin_script = here_string(&piece).or_else(|| self.piped.take());
            self.last_output = None;
            if let Some(d) = self.dev_tcp_dependency(&targets, &words, depth) {
                return Step::Found(d);
            }
            let mut k = 0;
            let mut assigns: Overrides = Vec::new();
            let mut prefix = Vec::new();
            while let Some((n, v)) = words.get(k).and_then(|w| split_assignment(w)) {
                let (val, _) = self.resolve_text(v, depth, true);
                assigns.push((n.to_string(), val));
                prefix.push(self.render_orig(&words[k]));
                k += 1;
            }
            if k >= words.len() {
                self.shell_vars.extend(assigns);
                return Step::Next;
            }
            if words[k] == "unset" {
                self.unset_vars(&words[k + 1..]);
                return Step::Next;
            }
            if matches!(words[k].as_str(), "export" | "local" | "declare" | "typeset" | "readonly") {
                self.declare(&words[k..], depth);
                return Step::Next;
            }
            let mut args = Vec::new();
            for w in &words[k..] {
                args.extend(self.resolve_word(w, depth));
            }
            // One unit for the command, one for each word it expanded to.
            if !self.spend_units(1 + args.len()) {
                return Step::Stop;
            }
            self.last_output = self.output_of(&args);
            if self.builtin_assigns(&args) {
                return Step::Next;
            }
            // `source <(echo '...')`, `. <(printf '...')`: the text the substitution writes.
            if let ([program, _], Some(text)) =
                (args.as_slice(), args.get(1).and_then(|p| self.process_output(p)))
                && matches!(program.as_str(), "." | "source")
            {
                return self.analyze_script(&text, depth + 1).map_or(Step::Next, Step::Found);
            }
            // `coproc CMD`: CMD runs in the background, its status is not the script's (bash
            // manual, "Coprocesses"): what it reaches is a warning.
            if args.first().is_some_and(|a| a == "coproc") && args.len() > 1 {
                let saved = self.uncoupled.clone();
                if self.uncoupled.is_none() {
                    self.uncoupled = Some(
                        "it runs as a coprocess (`coproc`), whose status is not the script's".to_string(),
                    );
                }
                let found = self.analyze_args(&args[1..], assigns, &prefix, depth);
                self.uncoupled = saved;
                return found.map_or(Step::Next, Step::Found);
            }
            if let Some(body) = self.function(args.first()) {
                return self.call_function(&body, &args[1..], depth).map_or(Step::Next, Step::Found);
            }
            self.analyze_args(&args, assigns, &prefix, depth).map_or(Step::Next, Step::Found)
        }
    }

    /// The body of the shell function `name` names, if one is defined.
    fn function(&self, name: Option<&String>) -> Option<String> {
        let name = name?;
        self.functions.iter().rev().find(|(n, _)| n == name).map(|(_, b)| b.clone())
    }

    /// A call of a shell function: its body analysed with `args` as `$1`, `$2`... (calls nested at
    /// most [`MAX_CALL_DEPTH`] deep; deeper ones are not analysed).
    fn call_function(&mut self, body: &str, args: &[String], depth: usize) -> Option<Dependency> {
        if self.calls >= MAX_CALL_DEPTH {
            return None;
        }
        self.calls += 1;
        let saved = self.positional.replace(args.to_vec());
        let found = self.analyze_script(body, depth);
        self.positional = saved;
        self.calls -= 1;
        found
    }

    /// `export A=x`, `declare -x A=x`, `local A=x`: remember script variables. `export -n A` and
    /// `declare +x A` take A out of the clients' environment.
    pub(super) fn declare(&mut self, words: &[String], depth: usize) {
        let is_export = words.first().is_some_and(|w| w == "export");
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
            if let Some((n, v)) = split_assignment(w) {
                let (val, _) = self.resolve_text(v, depth, true);
                self.shell_vars.insert(n.to_string(), val);
            }
            if !is_ident(name) {
                continue;
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
    fn unset_vars(&mut self, words: &[String]) {
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
                self.functions.retain(|(n, _)| n != w);
            } else if is_ident(w) {
                self.shell_vars.remove(w);
                self.exported.remove(w);
                self.unexported.remove(w);
                self.unset.insert(w.clone());
            }
        }
    }

    /// Records a script that could not be read (once per path).
    pub(super) fn note_unresolved(&mut self, path: &str, reason: String) {
        self.note(path, reason, false);
    }

    /// Notes a hit whose host is a script variable the analysis does not follow
    /// ([`RefKind::Unknown`]): not a finding, but not silent either.
    pub(super) fn note_unknown_host(&mut self, program: &str, hit: &Hit) {
        let unknown =
            hit.hosts.iter().flat_map(|h| h.chars()).find_map(|c| {
                self.ref_of(c).filter(|r| r.kind == RefKind::Unknown).map(|r| r.original.clone())
            });
        if let Some(original) = unknown {
            let reason =
                format!("{original} is a script variable not known at admission; its host is not checked");
            self.note_unresolved(&format!("{program} {original}"), reason);
        }
    }

    /// Notes a command left unanalysed by one of the analysis bounds.
    pub(super) fn note_over_bound(&mut self, path: &str, reason: String) {
        self.note(path, reason, true);
    }

    pub(super) fn note(&mut self, path: &str, reason: String, over_bound: bool) {
        if !self.unresolved.iter().any(|u| u.path == path) {
            self.unresolved.push(UnresolvedScript { path: path.to_string(), reason, over_bound });
        }
    }

    /// Runs the file at `path` (a shell's operand, or sourced): analysed when it can be read.
    pub(super) fn run_named_file(
        &mut self,
        path: &str,
        args: &[String],
        source: bool,
        depth: usize,
    ) -> Option<Dependency> {
        let files = self.files?;
        if path.chars().any(is_reserved_char) {
            // A path that depends on a value unknown here: which file runs is not known.
            return None;
        }
        match files.read(path) {
            FileLookup::Text { text, origin } => {
                let args = (!source || !args.is_empty()).then(|| args.to_vec());
                self.run_file(path, &text, origin, args, source, depth)
            }
            FileLookup::Unreadable(reason) => {
                self.note_unresolved(path, reason);
                None
            }
            FileLookup::NotOnVolume => None,
        }
    }

    /// Analyses a script file's text. Run as a program (`source` false), it is a new shell: only
    /// exported variables carry over, and `$0`, `$1`... are its path and `args`. Sourced, it shares
    /// the caller's variables (and its positional parameters, unless it is given arguments).
    /// Bounded: a file already being analysed is not entered again, nesting and the number of files
    /// read are limited.
    pub(super) fn run_file(
        &mut self,
        path: &str,
        text: &str,
        origin: String,
        args: Option<Vec<String>>,
        source: bool,
        depth: usize,
    ) -> Option<Dependency> {
        if depth >= MAX_DEPTH
            || self.scripts.len() >= MAX_SCRIPT_NESTING
            || self.files_read >= MAX_SCRIPT_FILES
            || self.scripts.iter().any(|(p, _)| p == path)
        {
            return None;
        }
        self.files_read += 1;
        let saved_positional = (self.positional.clone(), self.arg0.clone());
        let saved_vars = (!source).then(|| (self.shell_vars.clone(), self.exported.clone()));
        let saved_functions = (!source).then(|| std::mem::take(&mut self.functions));
        if !source {
            let exported = &self.exported;
            self.shell_vars.retain(|k, _| exported.contains(k));
            self.arg0 = Some(path.to_string());
            self.positional = Some(args.clone().unwrap_or_default());
        } else if let Some(a) = args {
            self.positional = Some(a);
        }
        self.scripts.push((path.to_string(), origin));
        let found = self.analyze_script(&sanitize(text), depth + 1);
        self.scripts.pop();
        (self.positional, self.arg0) = saved_positional;
        if let Some((vars, exported)) = saved_vars {
            self.shell_vars = vars;
            self.exported = exported;
        }
        if let Some(functions) = saved_functions {
            self.functions = functions;
        }
        found
    }

    /// The value a client sees for an environment variable, if set.
    pub(super) fn tool_env(&mut self, name: &str, ov: &[(String, String)]) -> Option<String> {
        if let Some((_, v)) = ov.iter().rev().find(|(n, _)| n == name) {
            return Some(self.render_lit(v));
        }
        // A variable of the container's env is exported, unless the script unset it (assigned
        // again, it is a plain shell variable) or took its export away.
        let env_exported =
            self.env.vars.contains_key(name) && !self.unset.contains(name) && !self.unexported.contains(name);
        if let Some(v) = self.shell_vars.get(name)
            && (self.exported.contains(name) || env_exported)
        {
            let v = v.clone();
            return Some(self.render_lit(&v));
        }
        if !env_exported {
            return None;
        }
        let original = format!("${name}");
        match self.env.vars.get(name)? {
            EnvValue::Literal(v) => {
                let v = env_literal(name, v);
                let e = self.kubelet_expand(&v, 1);
                Some(self.render_lit(&e))
            }
            EnvValue::PodIp => Some(self.new_ref(RefKind::SelfIp, &original).to_string()),
            EnvValue::PodName => Some(self.new_ref(RefKind::SelfName, &original).to_string()),
            EnvValue::Unresolved => Some(self.new_ref(RefKind::Unresolved, &original).to_string()),
        }
    }

    pub(super) fn make_dependency(
        &self,
        program: &str,
        hit: Hit,
        args: &[String],
        prefix_disp: &[String],
    ) -> Dependency {
        let shown = redact_bare_userinfo(&redact_secrets(&self.render_orig(&hit.target)));
        let note = if hit.always && hit.hosts.is_empty() { None } else { self.unresolved_note(&hit.target) };
        let target = match (note, &hit.via) {
            (Some(n), _) => format!("{shown} ({n})"),
            (None, Some(v)) => format!("{shown} ({v})"),
            (None, None) => shown,
        };
        let mut words: Vec<String> = prefix_disp.to_vec();
        words.extend(args.iter().map(|a| self.render_orig(a)));
        let script = self.scripts.last().map(|(_, origin)| {
            let chain: Vec<&str> = self.scripts.iter().map(|(p, _)| p.as_str()).collect();
            format!("{} ({origin})", chain.join(" → "))
        });
        // Known only at run time, and no variable name says it is a dependency's address.
        let unknown_host = !hit.always
            && hit.hosts.iter().all(|h| match self.classify(h) {
                HostClass::Remote => false,
                HostClass::Local | HostClass::Unknown => true,
                HostClass::Unresolved => !self.names_dependency_variable(h),
            });
        Dependency {
            program: program.to_string(),
            category: hit.category,
            unknown_host,
            target: truncate_chars(&target, 160),
            command: truncate_chars(&join_redacted(&words), 80),
            script,
            why: None,
            uncoupled: self.uncoupled.clone(),
        }
    }
}

/// Whether a script's exit status is 0 whatever its commands return (bash manual, "Exit
/// Status": a script's status is its last command's): its last statement is `exit 0`, `true`,
/// `:` or a plain `echo` (returned, `echo` without its words, for the message), and nothing can
/// end it earlier with another status (no other `exit`, no `return`, `exec`, `set -e`/`errexit`,
/// `trap`, `source` or `.`, which may run another script's `exit`, and no `while`/`until` loop, which can wait on a dependency until the probe times out).
/// A crude scan of the text: anything it does not understand keeps the script's commands coupled.
pub(super) fn always_exits_zero(script: &str) -> Option<&str> {
    let body = script.trim_end().trim_end_matches(';').trim_end();
    let last = body.rsplit(['\n', ';']).next().unwrap_or("").trim();
    // A plain `echo` (no redirection, pipe, substitution or background: nothing that can fail)
    // exits 0 too: `pg_isready -h db; echo $?`, and cmd's `curl ... & echo ok`.
    let plain_echo =
        (last == "echo" || last.starts_with("echo ")) && !last.contains(['>', '<', '|', '&', '`', '(', ')']);
    if !(matches!(last, "exit 0" | "true" | ":") || plain_echo) || body.len() == last.len() {
        return None;
    }
    // A loop whose condition is the check waits for the dependency: its outage hangs the probe
    // until it times out (`until pg_isready -h db; do sleep 1; done; exit 0`).
    if super::flow::mentions(
        script,
        &["return", "exec", "errexit", "trap", "source", "kill", "while", "until"],
    ) {
        return None;
    }
    let words: Vec<&str> = script.split_whitespace().collect();
    let exits_zero = words.windows(2).all(|w| w[0] != "exit" || w[1].trim_end_matches(';') == "0");
    let set_e = words.windows(2).any(|w| w[0] == "set" && w[1].starts_with(['-', '+']) && w[1].contains('e'));
    // `#!/bin/bash -e`
    let shebang_e = script.strip_prefix("#!").is_some_and(|l| {
        l.lines()
            .next()
            .unwrap_or("")
            .split_whitespace()
            .skip(1)
            .any(|w| w.starts_with('-') && w.contains('e'))
    });
    (exits_zero && !set_e && !shebang_e && !words.contains(&".") && !script.contains("exit;"))
        .then_some(if plain_echo { "echo" } else { last })
}

/// The word of a piece's here-string (`<<< WORD` or `<<<WORD`), quotes removed, if it has one.
fn here_string(piece: &str) -> Option<String> {
    if !piece.contains("<<<") {
        return None;
    }
    // The parser marks each redirection word ([`super::shell::REDIRECT`]); only a marked one is a
    // here-string (a quoted `'<<<'` is an argument).
    let words = super::shell::piece_words(piece);
    let at = words.iter().position(|w| {
        w.starts_with(super::shell::REDIRECT) && w[super::shell::REDIRECT.len_utf8()..].starts_with("<<<")
    })?;
    match &words[at][super::shell::REDIRECT.len_utf8() + 3..] {
        "" => words.get(at + 1).cloned(),
        attached => Some(attached.to_string()),
    }
}

/// The status of `test` (`[`) given these arguments (bash manual, "Bash Conditional
/// Expressions" and the `test` builtin's rules by number of arguments), for the string and
/// integer comparisons, `-n`, `-z` and `!`; `None` for anything else (files, `-a`, `-o`).
pub(super) fn test_expression(a: &[String]) -> Option<bool> {
    let int = |s: &str| s.trim().parse::<i64>().ok();
    match a {
        [] => Some(false),
        [x] => Some(!x.is_empty()),
        [op, x] => match op.as_str() {
            "!" => Some(x.is_empty()),
            "-n" => Some(!x.is_empty()),
            "-z" => Some(x.is_empty()),
            _ => None,
        },
        [x, op, y] => match op.as_str() {
            "=" | "==" => Some(x == y),
            "!=" => Some(x != y),
            "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge" => {
                let (x, y) = (int(x)?, int(y)?);
                Some(match op.as_str() {
                    "-eq" => x == y,
                    "-ne" => x != y,
                    "-lt" => x < y,
                    "-le" => x <= y,
                    "-gt" => x > y,
                    _ => x >= y,
                })
            }
            _ if x == "!" => test_expression(&a[1..]).map(|v| !v),
            _ => None,
        },
        [x, ..] if a.len() == 4 && x == "!" => test_expression(&a[1..]).map(|v| !v),
        _ => None,
    }
}

/// What one piece of a script gives.
enum Step {
    /// Nothing found: go on with the next piece.
    Next,
    /// An analysis bound is spent: stop.
    Stop,
    Found(Dependency),
}

/// Whether a script defines a shell function (`name() ...`, `name () ...` or `function name ...`,
/// POSIX 2.9.5 and bash's `function` keyword), at the start of a line or after `;`, `&`, `|`.
pub(super) fn defines_function(script: &str) -> bool {
    script.split(['\n', ';', '&', '|', '{']).any(|segment| {
        let seg = segment.trim_start();
        if let Some(rest) = seg.strip_prefix("function ") {
            return rest.trim_start().starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
        }
        let end =
            seg.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')).unwrap_or(seg.len());
        end > 0 && seg[end..].trim_start().starts_with("()")
    })
}

#[cfg(test)]
mod tests {
    use super::test_expression;

    /// `test_expression` gives bash 5.2's `[ ... ]` status on these (each checked with bash:
    /// `[ 07 -eq 7 ]` is 0, `[ -n ]` is 0, `[ a -ge b ]` is 2, an error, so not decided).
    #[test]
    fn test_expressions_give_what_bash_gives() {
        let cases: &[(&[&str], Option<bool>)] = &[
            (&[], Some(false)),
            (&["x"], Some(true)),
            (&[""], Some(false)),
            (&["!", ""], Some(true)),
            (&["!", "x"], Some(false)),
            (&["-n", ""], Some(false)),
            (&["-z", ""], Some(true)),
            (&["-n", "x"], Some(true)),
            (&["-n"], Some(true)),
            (&["-z"], Some(true)),
            (&["!"], Some(true)),
            (&["a", "=", "a"], Some(true)),
            (&["a", "==", "b"], Some(false)),
            (&["a", "!=", "b"], Some(true)),
            (&["3", "-lt", "5"], Some(true)),
            (&["5", "-le", "5"], Some(true)),
            (&["07", "-eq", "7"], Some(true)),
            (&["1", "-gt", "2"], Some(false)),
            (&["!", "a", "=", "b"], Some(true)),
            (&["a", "-ge", "b"], None),
            (&["-f", "/etc/passwd"], None),
            (&["a", "-a", "b"], None),
            (&["a", "=", "a", "-o", "b"], None),
        ];
        for (args, want) in cases {
            let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            assert_eq!(test_expression(&args), *want, "[ {} ]", args.join(" "));
        }
    }
}
