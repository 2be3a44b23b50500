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
            "echo" => echo_output(&rest, self.shell),
            // `cat` with no file writes its standard input (`cat <<EOF | sh`).
            "cat" if rest.is_empty() => self.stdin_script.clone(),
            "printf" => match rest.as_slice() {
                [format, values @ ..] if !format.starts_with('-') => printf_output(format, values),
                _ => None,
            },
            _ => None,
        }
    }

    /// The builtins that assign variables from their words or input, followed when that is known
    /// (bash manual, "Bourne Shell Builtins" and "Bash Builtins"): `set -- WORDS` (or `set WORD...`)
    /// sets `$1`...; `printf -v NAME FORMAT [VALUE]` assigns the text `printf` would write (a
    /// format without `%` or `\\`, or `%s` with one value); `read NAME...` assigns the words of
    /// the first line of its standard input (a here-string, a here-document, `echo ... |`: see
    /// `read.rs`). What is not followed assigns a value known only at run time, never a stale one.
    /// `assigns`: the command's prefix assignments (`IFS=, read ...`). True when `args` is one of
    /// these.
    pub(super) fn builtin_assigns(&mut self, args: &[String], assigns: &[(String, String)]) -> bool {
        let Some((program, rest)) = args.split_first() else {
            return false;
        };
        match program.as_str() {
            "set" => {
                // `-a`/`+a` (in any group of options, `-ea`) and `-o allexport`/`+o allexport`
                // turn allexport on and off; options stop at `--` or the first word that is none.
                let opts: Vec<String> =
                    rest.iter().map(|a| self.render_lit(a)).take_while(|a| a != "--").collect();
                let mut opts = opts.into_iter().peekable();
                while let Some(o) = opts.next() {
                    let on = o.starts_with('-');
                    if !(on || o.starts_with('+')) || o.len() < 2 {
                        break;
                    }
                    if o[1..] == *"o" {
                        if opts.next_if(|n| n == "allexport").is_some() {
                            self.allexport = Some(on);
                        }
                    } else if o[1..].chars().all(|c| c.is_ascii_alphabetic()) && o[1..].contains('a') {
                        self.allexport = Some(on);
                    }
                }
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
            // `cd [-L|-P [-e]] [-@] DIR` (bash manual, "Bourne Shell Builtins"; dash: `cd [-LP]
            // DIR`): relative paths run after it are under DIR ([`Ctx::under_cwd`]). `cd` alone
            // (`$HOME`), `cd -`, a DIR known only at run time or searched through `CDPATH`: the
            // directory is known only at run time.
            "cd" => {
                let words: Vec<String> = rest.iter().map(|a| self.render_lit(a)).collect();
                let at = words
                    .iter()
                    .position(|w| w == "--" || !(w.len() > 1 && w.starts_with('-')))
                    .map_or(words.len(), |k| k + usize::from(words[k] == "--"));
                let cdpath = self.shell_vars.contains_key("CDPATH") || self.env.vars.contains_key("CDPATH");
                let dir = match &words[at..] {
                    [dir] if !dir.is_empty() && dir != "-" && !dir.chars().any(is_reserved_char) => {
                        match self.under_cwd(dir) {
                            Ok(d) if dir.starts_with('/') || !cdpath => Some(d),
                            _ => None,
                        }
                    }
                    _ => None,
                };
                let dir = dir.unwrap_or_else(|| self.new_ref(RefKind::Unknown, "$PWD").to_string());
                self.shell_vars.insert(CWD.to_string(), dir);
                self.exported.insert(CWD.to_string());
                true
            }
            // `alias NAME=TEXT...`, `unalias NAME...|-a`, `shopt -s|-u expand_aliases`.
            "alias" => {
                for a in rest {
                    let a = self.render_lit(a);
                    if let Some((name, text)) = a.split_once('=')
                        && !name.is_empty()
                        && !name.contains(['/', '$', '`', '='])
                        && !name.chars().any(is_reserved_char)
                    {
                        self.aliases.push((name.to_string(), text.to_string(), self.script_id, self.line));
                    }
                }
                true
            }
            "unalias" => {
                if rest.iter().any(|a| a == "-a") {
                    self.aliases.clear();
                }
                for a in rest {
                    self.aliases.retain(|(n, ..)| n != a);
                }
                true
            }
            "shopt" if rest.iter().any(|a| a == "expand_aliases") => {
                if let Some(flag) = rest.iter().rev().find(|a| matches!(a.as_str(), "-s" | "-u")) {
                    self.expand_aliases = flag == "-s";
                }
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
                self.allexport_mark(&name);
                self.shell_vars.insert(name, value);
                true
            }
            "read" => {
                self.read_builtin(rest, assigns);
                true
            }
            // `mapfile [-d DELIM] [-n COUNT] [-O ORIGIN] [-s COUNT] [-t] [-u FD] [-C CALLBACK] [-c
            // QUANTUM] [ARRAY]` (`readarray` the same; bash manual, "Bash Builtins"): the lines
            // of its input, known only at run time, fill ARRAY (`MAPFILE` by default). Each
            // element is then a value known only at run time (s24: the array was not followed,
            // and a client given an element was only noted).
            "mapfile" | "readarray" => {
                let mut name = "MAPFILE".to_string();
                let mut words = rest.iter().map(|a| self.render_lit(a));
                while let Some(w) = words.next() {
                    if w.len() == 2 && w.starts_with('-') && "dnOsuCc".contains(&w[1..]) {
                        words.next();
                    } else if is_ident(&w) {
                        name = w;
                    }
                }
                self.read_array(&name, None);
                true
            }
            _ => false,
        }
    }
}

/// The script's working directory once a `cd` ran, kept as a shell variable no script can name
/// (a child shell and a subshell inherit it, a branch that may not run makes it unknown).
pub(in crate::engine::exec) const CWD: &str = " cwd";

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

/// The word a piece's standard input is read from (`< FILE`, `0< FILE`), if it has one: the
/// last such redirection (a here-string or here-document is [`here_string`]'s).
pub(super) fn input_redirect(piece: &str) -> Option<String> {
    if !piece.contains('<') {
        return None;
    }
    let words = super::super::shell::piece_words(piece);
    let mut found = None;
    for (k, w) in words.iter().enumerate() {
        let Some(r) = w.strip_prefix(super::super::shell::REDIRECT) else {
            continue;
        };
        let Some(target) = r.strip_prefix('0').unwrap_or(r).strip_prefix('<') else {
            continue;
        };
        if target.starts_with(['<', '&', '>']) {
            continue;
        }
        found = if target.is_empty() { words.get(k + 1).cloned() } else { Some(target.to_string()) };
    }
    found
}

/// The text of backslash escapes as `printf` writes them in its format and `echo -e` (bash) or
/// dash's `echo` write them: `\\`, `\a`, `\b`, `\f`, `\n`, `\r`, `\t`, `\v` (POSIX printf(1),
/// bash manual "Bash Builtins"). `None` for any other escape (octal, `\x`, `\c`...), whose
/// reading differs between shells: the text is then not followed.
pub(super) fn unescape(text: &str) -> Option<String> {
    if !text.contains('\\') {
        return Some(text.to_string());
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        out.push(match chars.next()? {
            '\\' => '\\',
            'a' => '\u{7}',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\u{b}',
            _ => return None,
        });
    }
    Some(out)
}

/// What `echo WORDS` writes, as the shell running the script reads its options and escapes:
/// bash's `echo` takes `-n`, `-e`, `-E` (together too) and reads escapes only with `-e`; dash's
/// takes only `-n` and always reads escapes (so `-e` is written). Another shell (`sh`, which may
/// be either): the text only when both read it alike. `None` when not known.
pub(super) fn echo_output(words: &[String], shell: Option<&str>) -> Option<String> {
    let bash = || {
        let options = words
            .iter()
            .take_while(|w| {
                w.len() > 1 && w.starts_with('-') && w[1..].chars().all(|c| matches!(c, 'n' | 'e' | 'E'))
            })
            .collect::<Vec<_>>();
        let escapes = options.iter().flat_map(|o| o.chars()).rfind(|c| matches!(c, 'e' | 'E')) == Some('e');
        let text = words[options.len()..].join(" ");
        if escapes { unescape(&text) } else { Some(text) }
    };
    let dash = || {
        let skip = usize::from(words.first().is_some_and(|w| w == "-n"));
        unescape(&words[skip..].join(" "))
    };
    match shell {
        Some("bash") => bash(),
        Some("dash") => dash(),
        _ => {
            let text = bash()?;
            (dash()? == text).then_some(text)
        }
    }
}

/// What `printf FORMAT VALUES...` writes (POSIX printf(1)): the format's escapes ([`unescape`]),
/// `%%`, `%s` and `%b` (a value's escapes read) filled in turn, the format used again while
/// values are left. `None` for any other conversion or escape.
pub(in crate::engine::exec) fn printf_output(format: &str, values: &[String]) -> Option<String> {
    let mut out = String::new();
    let mut next = 0;
    loop {
        let mut used = false;
        let mut chars = format.chars();
        let mut literal = String::new();
        while let Some(c) = chars.next() {
            if c != '%' {
                literal.push(c);
                if c == '\\' {
                    literal.push(chars.next()?);
                }
                continue;
            }
            out.push_str(&unescape(&std::mem::take(&mut literal))?);
            match chars.next()? {
                '%' => out.push('%'),
                conv @ ('s' | 'b') => {
                    let value = values.get(next).map_or("", String::as_str);
                    next += 1;
                    used = true;
                    if conv == 'b' {
                        out.push_str(&unescape(value)?);
                    } else {
                        out.push_str(value);
                    }
                }
                _ => return None,
            }
        }
        out.push_str(&unescape(&literal)?);
        if !used || next >= values.len() {
            return Some(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    /// Pinned against bash 5.2's and dash's `printf` and `echo` (the same words run in each).
    #[test]
    fn printf_and_echo_write_what_each_shell_writes() {
        assert_eq!(printf_output("a\\tb\\n", &[]).as_deref(), Some("a\tb\n"));
        assert_eq!(printf_output("%s\\n", &s(&["x", "y"])).as_deref(), Some("x\ny\n"));
        assert_eq!(printf_output("%s=%s;", &s(&["a", "1", "b"])).as_deref(), Some("a=1;b=;"));
        assert_eq!(printf_output("100%%", &s(&["ignored"])).as_deref(), Some("100%"));
        assert_eq!(printf_output("%b", &s(&["x\\ny"])).as_deref(), Some("x\ny"));
        assert_eq!(printf_output("%s", &s(&["x\\ny"])).as_deref(), Some("x\\ny"));
        for unknown in ["%d\\n", "\\101", "\\x41", "%5s", "a\\c"] {
            assert_eq!(printf_output(unknown, &s(&["1"])), None, "{unknown}");
        }
        let words = s(&["-e", "a\\nb"]);
        assert_eq!(echo_output(&words, Some("bash")).as_deref(), Some("a\nb"));
        assert_eq!(echo_output(&words, Some("dash")).as_deref(), Some("-e a\nb"));
        assert_eq!(echo_output(&words, Some("sh")), None);
        let words = s(&["a\\nb"]);
        assert_eq!(echo_output(&words, Some("bash")).as_deref(), Some("a\\nb"));
        assert_eq!(echo_output(&words, Some("dash")).as_deref(), Some("a\nb"));
        assert_eq!(echo_output(&words, None), None);
        assert_eq!(echo_output(&s(&["-n", "x", "y"]), None).as_deref(), Some("x y"));
        assert_eq!(echo_output(&s(&["-neE", "a\\tb"]), Some("bash")).as_deref(), Some("a\\tb"));
        assert_eq!(echo_output(&s(&["-x", "a"]), None).as_deref(), Some("-x a"));
    }
}
