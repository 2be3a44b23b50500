//! Script files: a shell's operand or a sourced file, read from the container's volumes and analysed in turn.

use super::super::context::{Ctx, is_reserved_char, sanitize};
use super::super::{Dependency, FileLookup, MAX_DEPTH, MAX_SCRIPT_FILES, MAX_SCRIPT_NESTING};

impl Ctx<'_> {
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
    pub(in crate::engine::exec) fn run_file(
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
}
