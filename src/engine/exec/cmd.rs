//! cmd.exe: `cmd [/v:on] /c LINE` (and `/k`). The line is expanded as cmd expands it, then its
//! commands are matched like a shell script's.
//!
//! Facts used (Microsoft docs, "cmd" and "set"; `set /?`):
//! - `%NAME%` is expanded when cmd reads the line, before any command of it runs: in
//!   `set U=x && curl %U%` the `%U%` is U's value from before the `set`. On a command line (not in
//!   a batch file) an undefined `%NAME%` stays as written. Names ignore case.
//! - With delayed expansion (`/v:on`), `!NAME!` is expanded when each command runs, so it sees a
//!   `set` earlier on the line.
//! - `%COMPUTERNAME%` is this machine's (the container's) own name.

use super::context::{Ctx, RefKind, is_reserved_char, marker_index};
use super::{Dependency, EnvValue};

/// A `set NAME=VALUE` command (`set "NAME=VALUE"`): the name and value. `set /a` (arithmetic) and
/// `set /p` (a prompt) give no value known here.
fn set_command(command: &str) -> Option<(String, Option<String>)> {
    let c = command.trim_start().trim_start_matches('(').trim_start().trim_start_matches('@');
    let rest = c.get(..4).filter(|p| p.eq_ignore_ascii_case("set "))?;
    let rest = c[rest.len()..].trim_start();
    if rest.starts_with('/') {
        let (_, pair) = rest.split_once(char::is_whitespace)?;
        let name = pair.trim().trim_matches('"').split('=').next()?.trim();
        return (!name.is_empty()).then(|| (name.to_ascii_lowercase(), None));
    }
    let pair = rest.trim_end();
    let pair = pair.strip_prefix('"').map_or(pair, |p| p.rsplit_once('"').map_or(p, |(inner, _)| inner));
    let (name, value) = pair.split_once('=')?;
    (!name.is_empty() && !name.contains(char::is_whitespace))
        .then(|| (name.to_ascii_lowercase(), Some(value.to_string())))
}

/// The commands of a line with the separators after each (`&`, `&&`, `||`, `|`), split outside
/// double quotes; `^` escapes the next character.
fn commands(line: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let (mut cur, mut quoted) = (String::new(), false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                quoted = !quoted;
                cur.push(c);
            }
            '^' if !quoted => {
                cur.push(c);
                cur.extend(chars.next());
            }
            '&' | '|' if !quoted => {
                let mut sep = c.to_string();
                if chars.peek() == Some(&c) {
                    sep.push(c);
                    chars.next();
                }
                out.push((std::mem::take(&mut cur), sep));
            }
            c => cur.push(c),
        }
    }
    out.push((cur, String::new()));
    out
}

/// `cmd /?` on the text after `/c`: unless `/S` is given and the text is exactly one quoted
/// program name (two quotes, whitespace and none of `&<>()@^|` between them, naming an
/// executable), a leading quote and the last quote of the line are removed, the text after the
/// last quote kept.
fn strip_cmd_quotes(line: &str, s_switch: bool) -> String {
    let t = line.trim_start();
    if !t.starts_with('"') {
        return line.to_string();
    }
    let inner = &t[1..];
    let quotes = t.matches('"').count();
    let keeps = !s_switch
        && quotes == 2
        && t.trim_end().ends_with('"')
        && !inner.contains(['&', '<', '>', '(', ')', '@', '^', '|'])
        && inner.contains(char::is_whitespace)
        && [".exe\"", ".com\"", ".bat\"", ".cmd\""]
            .iter()
            .any(|e| inner.to_ascii_lowercase().trim_end().ends_with(e));
    if keeps {
        return line.to_string();
    }
    match inner.rfind('"') {
        Some(last) => format!("{}{}", &inner[..last], &inner[last + 1..]),
        None => inner.to_string(),
    }
}

/// Characters a cmd word may hold that the shell reader would take as syntax: written escaped.
fn sh_special(c: char) -> bool {
    matches!(
        c,
        '\\' | '$'
            | '`'
            | '\''
            | '"'
            | '&'
            | '|'
            | ';'
            | '<'
            | '>'
            | '('
            | ')'
            | '{'
            | '}'
            | '#'
            | '~'
            | '*'
            | '?'
            | '['
            | ']'
            | '!'
            | '^'
            | '%'
    ) || c.is_whitespace()
}

/// A cmd line rewritten as the shell script that has its meaning, for the shell analysis
/// (Microsoft docs "cmd", "if", "for", "rem", "exit"; cmd's parser as `cmd /?` and `help if`
/// describe it):
/// - `&` runs the next command after this one (the shell's `;`); `&&`, `||`, `|` as in sh;
/// - `^` escapes the next character, and a `^` ending a line joins the next line to it;
/// - `\`, `$`, `` ` `` and `'` are ordinary characters;
/// - `if [/i] [not] errorlevel N|exist PATH|defined NAME|A==B|A OP B CMD [else CMD]`: the rest of
///   the line (or the parenthesised block) runs when the condition holds; a comparison of two
///   values known here is decided, any other condition is unknown;
/// - `for ... do CMD`: CMD runs (its loop variable is not followed);
/// - `@`, `call` run the command; `rem` is a comment; `exit /b N` is `exit N` (`exit /?`: outside
///   a batch file `/b` quits cmd.exe, and the process exit code is N);
/// - `ver` with its output discarded (`ver>nul`) is `true`: it sets ERRORLEVEL to 0 (the
///   idiom that clears it; `ver` is among the internal commands that "always clear the
///   ERRORLEVEL to 0 upon success", dbenham's experiments under Windows 10, Stack Overflow
///   question 34968009 "Which cmd.exe internal commands clear the ERRORLEVEL to 0 upon success?");
/// - `A & if errorlevel 1 exit /b 0` is `A || exit 0`: `if errorlevel 1` holds when ERRORLEVEL
///   (A's exit code) is 1 or more (`help if`: "ERRORLEVEL number: specifies a true condition
///   if the last program run returned an exit code equal to or greater than the number
///   specified"), and then cmd exits 0; otherwise A succeeded. The rest of the line after a bare
///   `exit /b 0` is the `if`'s body too, so it runs in neither case.
struct CmdToSh<'a> {
    c: &'a [char],
    i: usize,
    /// Set by an `if errorlevel 1` whose body exits 0 (read and cleared by [`CmdToSh::sequence`]).
    exits_zero_on_error: bool,
    /// How many such `if errorlevel 1 exit /b 0` were read as `|| exit 0`: the `errorlevel` they
    /// name is not a status read elsewhere.
    errorlevel_exits: usize,
}

/// How a condition of `if` turned out: known, or not known at admission.
fn sh_condition(known: Option<bool>) -> &'static str {
    match known {
        Some(true) => "true",
        Some(false) => "false",
        None => "[ -e /probegate/cmd-if-condition ]",
    }
}

impl CmdToSh<'_> {
    fn peek(&self) -> Option<char> {
        self.c.get(self.i).copied()
    }

    fn skip_blanks(&mut self) {
        while self.peek().is_some_and(|c| c == ' ' || c == '\t' || c == ',' || c == '=' || c == ';') {
            self.i += 1;
        }
    }

    /// The next word (up to a blank, a separator or a parenthesis), lowercase, not consumed.
    fn word(&self) -> String {
        self.c[self.i..]
            .iter()
            .take_while(|c| !c.is_whitespace() && !matches!(c, '&' | '|' | '(' | ')' | '<' | '>'))
            .collect::<String>()
            .to_ascii_lowercase()
    }

    /// Commands up to the end, or up to an unmatched `)` when `in_block`.
    fn sequence(&mut self, in_block: bool, is_known: &dyn Fn(&str, &str, bool) -> Option<bool>) -> String {
        let mut out = String::new();
        loop {
            while self.peek().is_some_and(|c| c.is_whitespace()) {
                self.i += 1;
            }
            match self.peek() {
                None => return out,
                Some(')') if in_block => return out,
                _ => {}
            }
            let start = out.len();
            self.exits_zero_on_error = false;
            let command = self.command(in_block, is_known);
            if std::mem::take(&mut self.exits_zero_on_error) && out[..start].ends_with(" ; ") {
                // `A & if errorlevel 1 exit /b 0`: `A || exit 0`.
                out.truncate(start - 3);
                out.push_str(" || exit 0");
                self.errorlevel_exits += 1;
            } else {
                out.push_str(&command);
            }
            // Blanks after a block (`(a) & b`, `if ... (a) & b`) before its separator.
            while self.peek().is_some_and(|c| c == ' ' || c == '\t') {
                self.i += 1;
            }
            match (self.peek(), self.c.get(self.i + 1)) {
                (Some('&'), Some('&')) | (Some('|'), Some('|')) => {
                    out.push_str(if self.peek() == Some('&') { " && " } else { " || " });
                    self.i += 2;
                }
                (Some('&'), _) | (Some('\n'), _) => {
                    out.push_str(" ; ");
                    self.i += 1;
                }
                (Some('|'), _) => {
                    out.push_str(" | ");
                    self.i += 1;
                }
                _ => return out,
            }
        }
    }

    /// A block: `( ... )` or the rest of the commands.
    fn body(&mut self, in_block: bool, is_known: &dyn Fn(&str, &str, bool) -> Option<bool>) -> String {
        self.skip_blanks();
        let text = if self.peek() == Some('(') {
            self.i += 1;
            let t = self.sequence(true, is_known);
            if self.peek() == Some(')') {
                self.i += 1;
            }
            t
        } else {
            self.sequence(in_block, is_known)
        };
        if text.trim().is_empty() { ":".to_string() } else { text }
    }

    /// One operand of an `if` comparison, as written (quotes kept).
    fn operand(&mut self) -> String {
        let mut w = String::new();
        let mut quoted = false;
        while let Some(c) = self.peek() {
            if !quoted
                && (c.is_whitespace()
                    || matches!(c, '&' | '|' | '(' | ')')
                    || self.c[self.i..].starts_with(&['=', '=']))
            {
                break;
            }
            if c == '"' {
                quoted = !quoted;
            }
            w.push(c);
            self.i += 1;
        }
        w
    }

    fn command(&mut self, in_block: bool, is_known: &dyn Fn(&str, &str, bool) -> Option<bool>) -> String {
        while self.peek() == Some('@') {
            self.i += 1;
            self.skip_blanks();
        }
        if self.peek() == Some('(') {
            self.i += 1;
            let inner = self.sequence(true, is_known);
            if self.peek() == Some(')') {
                self.i += 1;
            }
            return format!("{{ {} ; }}", if inner.trim().is_empty() { ":" } else { &inner });
        }
        let w = self.word();
        match w.as_str() {
            "if" => {
                self.i += 2;
                let (mut negate, mut nocase) = (false, false);
                loop {
                    self.skip_blanks();
                    match self.word().as_str() {
                        "/i" => (nocase, self.i) = (true, self.i + 2),
                        "not" => (negate, self.i) = (!negate, self.i + 3),
                        _ => break,
                    }
                }
                let kind = self.word();
                let mut errorlevel_one = false;
                let known = match kind.as_str() {
                    "errorlevel" | "exist" | "defined" | "cmdextversion" => {
                        self.i += kind.len();
                        self.skip_blanks();
                        let operand = self.operand();
                        errorlevel_one = kind == "errorlevel" && operand == "1" && !negate;
                        None
                    }
                    _ => {
                        let a = self.operand();
                        while self.peek().is_some_and(|c| c == ' ' || c == '\t') {
                            self.i += 1;
                        }
                        let op = if self.c[self.i..].starts_with(&['=', '=']) {
                            self.i += 2;
                            "==".to_string()
                        } else {
                            let op = self.word();
                            self.i += op.len();
                            op
                        };
                        while self.peek().is_some_and(|c| c == ' ' || c == '\t') {
                            self.i += 1;
                        }
                        let b = self.operand();
                        match op.as_str() {
                            "==" | "equ" => is_known(&a, &b, nocase),
                            "neq" => is_known(&a, &b, nocase).map(|v| !v),
                            _ => None,
                        }
                    }
                };
                let known = known.map(|v| v != negate);
                let then = self.body(in_block, is_known);
                let save = self.i;
                self.skip_blanks();
                let otherwise = if self.word() == "else" {
                    self.i += 4;
                    Some(self.body(in_block, is_known))
                } else {
                    self.i = save;
                    None
                };
                // (What follows the `exit` in the body never runs; a pipe would run it in a child.)
                let exits_first = then.split(" ; ").next().is_some_and(|first| first.trim() == "exit 0");
                if errorlevel_one && otherwise.is_none() && exits_first {
                    self.exits_zero_on_error = true;
                }
                let cond = sh_condition(known);
                match otherwise {
                    Some(e) => format!("if {cond}; then {then} ; else {e} ; fi"),
                    None => format!("if {cond}; then {then} ; fi"),
                }
            }
            "for" => {
                // Up to the word `do`, outside quotes and parentheses.
                let (mut depth, mut quoted) = (0usize, false);
                while let Some(c) = self.peek() {
                    match c {
                        '"' => quoted = !quoted,
                        '(' if !quoted => depth += 1,
                        ')' if !quoted => depth = depth.saturating_sub(1),
                        _ if !quoted && depth == 0 && c.is_whitespace() => {
                            let rest: String = self.c[self.i + 1..].iter().take(3).collect();
                            let rest = rest.to_ascii_lowercase();
                            if rest.starts_with("do")
                                && rest[2..].chars().next().is_none_or(|c| c.is_whitespace() || c == '(')
                            {
                                self.i += 3;
                                let body = self.body(in_block, is_known);
                                return format!("{{ {body} ; }}");
                            }
                        }
                        _ => {}
                    }
                    self.i += 1;
                }
                ":".to_string()
            }
            "rem" => {
                while self.peek().is_some_and(|c| c != '\n') {
                    self.i += 1;
                }
                ":".to_string()
            }
            "call" => {
                self.i += 4;
                self.skip_blanks();
                self.command(in_block, is_known)
            }
            _ => {
                let mut out = String::new();
                if w == "exit" {
                    self.i += 4;
                    self.skip_blanks();
                    if self.word() == "/b" {
                        self.i += 2;
                        self.skip_blanks();
                    }
                    out.push_str("exit ");
                }
                // `ver` and `verify` "always clear the ERRORLEVEL to 0 upon success" (dbenham's
                // experiments, Stack Overflow question 34968009; `verify >nul` is the common
                // idiom), and so do `cd`/`chdir`: with no argument or `.` they cannot fail.
                let clears = match w.as_str() {
                    "ver" | "verify" => Some(self.i + w.len()),
                    "cd" | "chdir" | "cd." => {
                        let mut j = self.i + w.len();
                        while self.c.get(j).is_some_and(|c| *c == ' ' || *c == '\t') {
                            j += 1;
                        }
                        let dot = w != "cd."
                            && self.c.get(j) == Some(&'.')
                            && self
                                .c
                                .get(j + 1)
                                .is_none_or(|c| c.is_whitespace() || matches!(c, '&' | '|' | '>' | ')'));
                        Some(if dot { j + 1 } else { self.i + w.len() })
                    }
                    _ => None,
                };
                if let Some(from) = clears
                    && let Some(end) = self.only_nul_redirections(from, in_block)
                {
                    self.i = end;
                    return "true".to_string();
                }
                // cmd.exe has no `true` (nor `false`): no internal command of that name (Microsoft
                // Learn, "Windows commands" and `help`), so it "is not recognized as an internal
                // or external command" and sets ERRORLEVEL to 9009; `A || true` does not hide A's
                // failure the way sh's does.
                if w == "true" {
                    self.simple(in_block, &mut out);
                    return "false".to_string();
                }
                self.simple(in_block, &mut out);
                out
            }
        }
    }

    /// Where the command ends when the text from `from` up to the next separator (`&`, `|`,
    /// a line end, `)` in a block) is only redirections to `nul` (`>nul`, `2>nul`, `>>nul`,
    /// `2>&1`), which cannot fail; `None` when it holds anything else.
    fn only_nul_redirections(&self, from: usize, in_block: bool) -> Option<usize> {
        let mut end = from;
        while let Some(&c) = self.c.get(end) {
            // (`from` is past the command's name, so `end - 1` is in the line.)
            let after_redirect = self.c[end - 1] == '>';
            if matches!(c, '|' | '\n') || c == '&' && !after_redirect || c == ')' && in_block {
                break;
            }
            end += 1;
        }
        let mut rest: String =
            self.c[from..end].iter().filter(|c| !c.is_whitespace()).collect::<String>().to_ascii_lowercase();
        while !rest.is_empty() {
            let piece = ["1>>nul", "2>>nul", ">>nul", "1>nul", "2>nul", ">nul", "2>&1", "1>&2"]
                .iter()
                .find(|p| rest.starts_with(*p))?;
            rest.drain(..piece.len());
        }
        (from == self.c.len() || !self.c[from].is_alphanumeric()).then_some(end)
    }

    /// The words of a simple command, escaped for the shell reader, up to a separator.
    fn simple(&mut self, in_block: bool, out: &mut String) {
        let mut quoted = false;
        while let Some(c) = self.peek() {
            match c {
                '"' => {
                    quoted = !quoted;
                    out.push('"');
                }
                '^' if !quoted => {
                    self.i += 1;
                    match self.peek() {
                        // A `^` ending a line joins the next line (its first character escaped).
                        Some('\r') if self.c.get(self.i + 1) == Some(&'\n') => self.i += 1,
                        Some('\n') => {}
                        Some(n) => {
                            if sh_special(n) {
                                out.push('\\');
                            }
                            out.push(n);
                        }
                        None => return,
                    }
                }
                '&' | '|' | '\n' if !(quoted || c == '&' && out.ends_with(['>', '<'])) => {
                    return;
                }
                ')' if !quoted && in_block => return,
                '\\' | '$' | '`' => {
                    out.push('\\');
                    out.push(c);
                }
                '\r' => {}
                // (`;` is left to split the line as the shell reads it: for cmd it only separates
                // arguments, and a program such as curl would take `; echo done` as more URLs,
                // none of them a host to judge.)
                c if !quoted && matches!(c, '\'' | '(' | ')' | '{' | '}' | '#' | '~' | '!') => {
                    out.push('\\');
                    out.push(c);
                }
                c => out.push(c),
            }
            self.i += 1;
        }
    }
}

impl Ctx<'_> {
    /// `cmd OPTIONS /c LINE`: `%NAME%` expanded from the container's environment, `!NAME!` in
    /// order with `/v:on`, then the line analysed. A variable that is neither in the container's
    /// environment nor may come from `envFrom` is a value the analysis does not follow
    /// ([`RefKind::Unknown`]): it never makes a dependency.
    pub(super) fn cmd_line(&mut self, options: &[String], line: &str, depth: usize) -> Option<Dependency> {
        let delayed = options.iter().any(|o| o.eq_ignore_ascii_case("/v:on") || o.eq_ignore_ascii_case("/v"));
        let line = &strip_cmd_quotes(line, options.iter().any(|o| o.eq_ignore_ascii_case("/s")));
        let set_here: Vec<String> =
            commands(line).iter().filter_map(|(c, _)| set_command(c)).map(|(n, _)| n).collect();
        let line = &self.cmd_for_variables(line);
        let expanded = self.cmd_percent(line, &set_here);
        let expanded = self.cmd_delayed(&expanded, delayed);
        let chars: Vec<char> = expanded.chars().collect();
        // `if A==B`: cmd compares the two strings as written, quotes included (`help if`).
        let known = |a: &str, b: &str, nocase: bool| {
            let (a, b) = (self.render_lit(a), self.render_lit(b));
            if a.chars().chain(b.chars()).any(|c| marker_index(c).is_some() || is_reserved_char(c)) {
                return None;
            }
            Some(if nocase { a.to_lowercase() == b.to_lowercase() } else { a == b })
        };
        let mut reader = CmdToSh { c: &chars, i: 0, exits_zero_on_error: false, errorlevel_exits: 0 };
        let script = reader.sequence(false, &known);
        let gap_before = self.parse_gap.is_some();
        // `errorlevel` (`if errorlevel 1`, `!errorlevel!`, `exit /b %errorlevel%`) reads a command's
        // status: no status on the line is taken as discarded. (Except where it was read above
        // as `|| exit 0`.)
        let saved = self.status_read_elsewhere;
        self.status_read_elsewhere |=
            line.to_ascii_lowercase().matches("errorlevel").count() > reader.errorlevel_exits;
        let found = self.analyze_script(&script, depth);
        self.status_read_elsewhere = saved;
        if !gap_before && self.parse_gap.is_some() {
            self.parse_gap_in_cmd = true;
        }
        found
    }

    /// A `for` loop's variables (`for %i in (...) do ... %i`, `%%i` in a batch file; one letter,
    /// case-sensitive: `help for`) hold values the analysis does not follow ([`RefKind::Unknown`]).
    fn cmd_for_variables(&mut self, line: &str) -> String {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let mut names = Vec::new();
        for (k, t) in tokens.iter().enumerate() {
            if t.eq_ignore_ascii_case("for") {
                let var = tokens[k + 1..].iter().find(|w| w.starts_with('%'));
                if let Some(v) = var.map(|v| v.trim_start_matches('%'))
                    && v.len() == 1
                    && v.chars().all(|c| c.is_ascii_alphabetic())
                {
                    names.extend(v.chars());
                }
            }
        }
        if names.is_empty() {
            return line.to_string();
        }
        let chars: Vec<char> = line.chars().collect();
        let mut out = String::with_capacity(line.len());
        let mut i = 0;
        while i < chars.len() {
            let percents =
                if chars[i] == '%' { if chars.get(i + 1) == Some(&'%') { 2 } else { 1 } } else { 0 };
            let name = chars.get(i + percents).copied().filter(|c| percents > 0 && names.contains(c));
            let ends = !chars.get(i + percents + 1).is_some_and(|c| c.is_ascii_alphanumeric() || *c == '%');
            match name {
                Some(n) if ends => {
                    let original: String = std::iter::repeat_n('%', percents).chain([n]).collect();
                    out.push(self.new_ref(RefKind::Unknown, &original));
                    i += percents + 1;
                }
                _ => {
                    out.push(chars[i]);
                    i += 1;
                }
            }
        }
        out
    }

    /// `%NAME%` references expanded as cmd reads the line (`set_here`: names a `set` on the
    /// line assigns, lowercase).
    fn cmd_percent(&mut self, line: &str, set_here: &[String]) -> String {
        let mut out = String::with_capacity(line.len());
        let mut rest = line;
        while let Some(at) = rest.find('%') {
            out.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            let Some(end) = after.find('%') else {
                out.push_str(&rest[at..]);
                return out;
            };
            let name = &after[..end];
            if name.is_empty() || name.contains(char::is_whitespace) {
                // `%%`, or a lone `%` before text: literal.
                out.push('%');
                rest = after;
                continue;
            }
            let original = format!("%{name}%");
            let value = self.cmd_var(name, &original, |n| set_here.iter().any(|s| s == n));
            out.push_str(&value);
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        out
    }

    /// One variable's value: the container's environment (a value known at admission, the Pod's
    /// IP or name, or unknown at admission like a shell's env value), `COMPUTERNAME`, or a value
    /// the analysis does not follow. `%NAME:~0,4%` and `%NAME:a=b%` (substrings, replacements)
    /// are not followed.
    fn cmd_var(&mut self, name: &str, original: &str, set_on_line: impl Fn(&str) -> bool) -> String {
        let lower = name.to_ascii_lowercase();
        if name.contains(':') {
            return self.new_ref(RefKind::Unknown, original).to_string();
        }
        let key = self.env.vars.keys().find(|k| k.eq_ignore_ascii_case(name)).cloned();
        if let Some(key) = key {
            return match self.env.vars.get(&key) {
                Some(EnvValue::Literal(_)) => self.tool_env(&key, &[]).unwrap_or_default(),
                Some(EnvValue::PodIp) => self.new_ref(RefKind::SelfIp, original).to_string(),
                Some(EnvValue::PodName) => self.new_ref(RefKind::SelfName, original).to_string(),
                _ => self.new_ref(RefKind::Unresolved, original).to_string(),
            };
        }
        if lower == "computername" {
            return self.new_ref(RefKind::SelfHost, original).to_string();
        }
        // A variable from `envFrom` is an env value unknown at admission, as in a shell script;
        // one the line sets itself (`set U=... && curl %U%`) or that nothing sets is not followed.
        let kind = if self.env.has_env_from && !set_on_line(&lower) {
            RefKind::Unresolved
        } else {
            RefKind::Unknown
        };
        self.new_ref(kind, original).to_string()
    }

    /// `!NAME!` (delayed expansion): each command sees the `set` commands before it on the line.
    /// Without delayed expansion `!NAME!` stays as written, a name that reaches nothing: not
    /// followed either.
    fn cmd_delayed(&mut self, line: &str, delayed: bool) -> String {
        let mut set: Vec<(String, Option<String>)> = Vec::new();
        let mut out = String::with_capacity(line.len());
        for (command, sep) in commands(line) {
            let mut expanded = String::with_capacity(command.len());
            let mut rest = command.as_str();
            while let Some(at) = rest.find('!') {
                expanded.push_str(&rest[..at]);
                let after = &rest[at + 1..];
                let Some(end) =
                    after.find('!').filter(|e| *e > 0 && !after[..*e].contains(char::is_whitespace))
                else {
                    expanded.push('!');
                    rest = after;
                    continue;
                };
                let name = &after[..end];
                let original = format!("!{name}!");
                let lower = name.to_ascii_lowercase();
                let value = match set.iter().rev().find(|(n, _)| *n == lower) {
                    _ if !delayed => self.new_ref(RefKind::Unknown, &original).to_string(),
                    // Counted as expanded text: `set A=!A!!A!` doubles A at each command.
                    Some((_, Some(v))) => {
                        if !self.spend(v.len()) {
                            return String::new();
                        }
                        v.clone()
                    }
                    Some((_, None)) => self.new_ref(RefKind::Unknown, &original).to_string(),
                    None => self.cmd_var(name, &original, |_| false),
                };
                expanded.push_str(&value);
                rest = &after[end + 1..];
            }
            expanded.push_str(rest);
            set.extend(set_command(&expanded));
            out.push_str(&expanded);
            out.push_str(&sep);
        }
        out
    }
}

#[cfg(test)]
mod tests;
