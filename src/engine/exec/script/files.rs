//! Script files: a shell's operand or a sourced file, read from the container's volumes and analysed in turn.

use super::super::context::{Ctx, is_reserved_char, sanitize};
use super::super::{DEFAULT_PATH, Dependency, FileLookup, MAX_DEPTH, MAX_SCRIPT_FILES, MAX_SCRIPT_NESTING};

impl Ctx<'_> {
    /// `path` as the shell opens it from its working directory: unchanged when absolute or when
    /// no `cd` ran (the container's `workingDir` then resolves it: [`super::super::ScriptFiles`]),
    /// else under the directory `cd` gave. `Err` with the path shown when that directory is known
    /// only at run time.
    pub(in crate::engine::exec) fn under_cwd(&self, path: &str) -> Result<String, String> {
        let cwd = match self.shell_vars.get(super::builtins::CWD) {
            Some(cwd) if !path.starts_with('/') && !path.contains('\\') => self.render_lit(cwd),
            _ => return Ok(path.to_string()),
        };
        if cwd.chars().any(is_reserved_char) {
            return Err(format!("$PWD/{path}"));
        }
        let joined = format!("{}/{path}", cwd.trim_end_matches('/'));
        // (`/cm/./check.sh` is `/cm/check.sh`; a relative `cd` is joined to `workingDir` later.)
        Ok(crate::engine::scripts::normalize(&joined, None).map(|p| p.into_owned()).unwrap_or(joined))
    }

    /// Runs the file at `path` (a shell's operand, or sourced): analysed when it can be read.
    pub(in crate::engine::exec) fn run_named_file(
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
        let path = match self.under_cwd(path) {
            Ok(p) => p,
            Err(shown) => {
                self.note_unresolved(&shown, CWD_UNKNOWN.to_string());
                return None;
            }
        };
        let path = path.as_str();
        match files.read(path) {
            FileLookup::Text { text, origin } => {
                let args = (!source || !args.is_empty()).then(|| args.to_vec());
                let how = if source { FileRun::Source } else { FileRun::Shell };
                self.run_file(path, &text, origin, args, how, depth)
            }
            FileLookup::Unreadable(reason) => {
                self.note_unresolved(path, reason);
                None
            }
            FileLookup::NotOnVolume => None,
        }
    }

    /// Where a command named without a `/` runs from, when that is a file on a volume: the first
    /// directory of `PATH` (the one the command sees; without one, [`DEFAULT_PATH`]) that has the
    /// name on a volume, with what admission can read of it (a ConfigMap script mounted with
    /// `subPath` at `/usr/local/bin/check.sh` and run as `check.sh`). `None` when no volume has
    /// it: the file is the image's, opaque.
    pub(in crate::engine::exec) fn on_path(
        &mut self,
        name: &str,
        overrides: &[(String, String)],
    ) -> Option<(String, FileLookup)> {
        let files = self.files?;
        if name.is_empty()
            || name.contains(['/', '\\'])
            || name.chars().any(is_reserved_char)
            || SHELL_BUILTINS.contains(&name)
        {
            return None;
        }
        // The shell searches its own `PATH` variable, exported or not, or the one a prefix
        // assignment gives the command; a program started without a shell, its environment's.
        let path = match overrides.iter().rev().find(|(n, _)| n == "PATH") {
            Some((_, v)) => Some(self.render_lit(v)),
            None => self.shell_vars.get("PATH").cloned().map(|v| self.render_lit(&v)),
        };
        let path =
            path.or_else(|| self.tool_env("PATH", overrides)).unwrap_or_else(|| DEFAULT_PATH.to_string());
        // An empty entry is the working directory (POSIX, "Environment Variables": PATH). An entry
        // known only at run time ends the search: what follows it may never be reached.
        // (One buffer for each directory's `DIR/NAME`: most are on no volume.)
        let mut full = String::with_capacity(path.len() + name.len() + 1);
        for dir in path.split(':').take(MAX_PATH_DIRS) {
            if dir.chars().any(is_reserved_char) {
                return None;
            }
            full.clear();
            if !dir.is_empty() {
                full.push_str(dir.trim_end_matches('/'));
                full.push('/');
            }
            full.push_str(name);
            match files.read(&full) {
                FileLookup::NotOnVolume => {}
                // A volume that cannot be read in a PATH directory (an emptyDir an init container
                // fills with binaries at /usr/local/bin): the program is judged by its name, as
                // before; only a name that is a shell script's is noted as not analysed.
                FileLookup::Unreadable(_) if !name.ends_with(".sh") && !name.ends_with(".bash") => {
                    return None;
                }
                found => return Some((full, found)),
            }
        }
        None
    }

    /// Analyses a script file's text. Run as a program or by a shell (`how`), it is a new shell:
    /// only exported variables carry over, and `$0`, `$1`... are its path and `args`. Sourced, it shares
    /// the caller's variables (and its positional parameters, unless it is given arguments).
    /// Bounded: a file already being analysed is not entered again, nesting and the number of files
    /// read are limited.
    pub(in crate::engine::exec) fn run_file(
        &mut self,
        path: &str,
        text: &str,
        origin: String,
        args: Option<Vec<String>>,
        how: FileRun,
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
        if how == FileRun::Source {
            let saved_positional = self.positional.clone();
            if let Some(a) = args {
                self.positional = Some(a);
            }
            self.scripts.push((path.to_string(), origin));
            let found = self.analyze_script(&sanitize(text), depth + 1);
            self.scripts.pop();
            self.positional = saved_positional;
            return found;
        }
        // Run as a program: the shell its `#!` line names (without one, the caller's), with the
        // options the line gives (`#!/bin/sh -e`). Handed to a shell (`sh FILE`), the line is a
        // comment: that shell runs it, with its own options (bash 5.2 and dash 0.5.12 exit 0 on
        // `sh check.sh` whose `#!/bin/sh -e` script checks a database that is down and ends in
        // `echo ok`, 2 on `./check.sh`).
        let shell = match text.strip_prefix("#!").and_then(|l| l.lines().next()) {
            _ if how == FileRun::Shell => self.shell,
            Some(line) => {
                match line.split_whitespace().map(super::super::context::basename).collect::<Vec<_>>()[..] {
                    ["env", name, ..] | [name, ..] if name == "bash" => Some("bash"),
                    ["env", name, ..] | [name, ..] if name == "dash" => Some("dash"),
                    ["env", name, ..] | [name, ..] if matches!(name, "sh" | "ash" | "busybox") => Some("sh"),
                    _ => Some("other"),
                }
            }
            None => self.shell,
        };
        let shebang_errexit = how == FileRun::Program && super::super::status::shebang_errexit(text);
        self.in_child_shell(shell, |ctx| {
            let saved_positional = (ctx.positional.clone(), ctx.arg0.clone());
            ctx.arg0 = Some(path.to_string());
            ctx.positional = Some(args.unwrap_or_default());
            ctx.scripts.push((path.to_string(), origin));
            let saved_errexit = ctx.errexit;
            ctx.errexit |= shebang_errexit;
            let found = ctx.analyze_script(&sanitize(text), depth + 1);
            ctx.errexit = saved_errexit;
            ctx.scripts.pop();
            (ctx.positional, ctx.arg0) = saved_positional;
            found
        })
    }
}

/// Why a relative path run after a `cd` to a directory known only at run time is not analysed.
pub(in crate::engine::exec) const CWD_UNKNOWN: &str =
    "run from a directory known only at run time (`cd`): which file runs is not known, so it is not analysed";

/// How a script file is run ([`Ctx::run_file`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(in crate::engine::exec) enum FileRun {
    /// Read into the calling shell (`. FILE`, `source FILE`).
    Source,
    /// Handed to a shell (`sh FILE`): its `#!` line is a comment.
    Shell,
    /// Executed directly: the program and options of its `#!` line run it.
    Program,
}

/// At most this many `PATH` directories are searched.
const MAX_PATH_DIRS: usize = 32;

/// Shell builtins, which a shell runs before it searches `PATH` (POSIX 2.9.1.1; the common ones).
const SHELL_BUILTINS: &[&str] = &[
    "echo", "printf", "test", "[", "true", "false", ":", "cd", "read", "pwd", "kill", "type", "command",
    "exit", "return", "set", "export", "wait", "trap", "eval", "exec", "shift", "unset", "local",
];
