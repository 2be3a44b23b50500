//! What `echo`, `printf` and `cat` write, and the builtins that assign variables (`set --`, `shift`, `printf -v`, `read`), followed when their values are known.

use super::super::context::{Ctx, RefKind, is_ident, is_reserved_char};

impl Ctx<'_> {
    /// The known output of the process substitution `word` is (a lone marker), if any.
    pub(super) fn process_output(&self, word: &str) -> Option<String> {
        let mut chars = word.chars();
        let (Some(m), None) = (chars.next(), chars.next()) else {
            return None;
        };
        self.process_outputs.iter().find(|(k, _)| *k == m).map(|(_, t)| t.clone())
    }

    /// What `echo` or `printf` writes, with values as markers, when its text is known (`-e`
    /// escapes and `printf` formats other than `%s` are not followed).
    pub(super) fn output_of(&self, args: &[String]) -> Option<String> {
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
                [format, values @ ..] => super::super::words::printf_s(format, values),
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
    pub(super) fn builtin_assigns(&mut self, args: &[String]) -> bool {
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
                    [format, values @ ..] => super::super::words::printf_s(&self.render_lit(format), values),
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
}

/// The word of a piece's here-string (`<<< WORD` or `<<<WORD`), quotes removed, if it has one.
pub(super) fn here_string(piece: &str) -> Option<String> {
    if !piece.contains("<<<") {
        return None;
    }
    // The parser marks each redirection word ([`super::super::shell::REDIRECT`]); only a marked one is a
    // here-string (a quoted `'<<<'` is an argument).
    let words = super::super::shell::piece_words(piece);
    let at = words.iter().position(|w| {
        w.starts_with(super::super::shell::REDIRECT)
            && w[super::super::shell::REDIRECT.len_utf8()..].starts_with("<<<")
    })?;
    match &words[at][super::super::shell::REDIRECT.len_utf8() + 3..] {
        "" => words.get(at + 1).cloned(),
        attached => Some(attached.to_string()),
    }
}
