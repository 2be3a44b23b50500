//! Windows PowerShell (`powershell.exe`, 5.1) and PowerShell (`pwsh`, 7): the command line, a
//! reader of the statements of a `-Command` script, and its web and TCP cmdlets
//! (`Invoke-WebRequest`, `Invoke-RestMethod`, `Test-NetConnection`, `System.Net.Sockets.TcpClient`).
//!
//! Facts used (PowerShell docs, "about_PowerShell_exe" and "about_Pwsh"):
//! - `-Command`/`-c` takes the rest of the command line as the script; `-EncodedCommand`/`-e`/`-ec`
//!   a Base64 UTF-16LE script; `-File`/`-f` a script file. A first argument that is not a
//!   parameter is `-Command` for `powershell.exe` and `-File` for `pwsh`.
//! - With `-Command` the exit code is 1 when the last statement failed (`$?` false), else 0, unless
//!   the script calls `exit N` (PowerShell/PowerShell#13501 describes the mapping).
//! - In Windows PowerShell 5.1 `curl` and `wget` are aliases of `Invoke-WebRequest`; PowerShell 7
//!   removed them, so there `curl` is curl.exe ("about_Aliases"; PowerShell 6 release notes).
//! - `Invoke-WebRequest`/`Invoke-RestMethod` fail (an error, `$?` false) when the request fails
//!   or the status is not a success; `Test-NetConnection` only writes a warning and returns an
//!   object whose `TcpTestSucceeded`/`PingSucceeded` is false: it fails a probe only when the
//!   script turns that result into `exit`/`throw`.
//! - `$env:COMPUTERNAME` is this machine's (the container's) own name.
//!
//! This file reads the command line ([`Ctx::powershell`]) and runs a script's statements, each
//! matched like a command; beside it: [`prune`] blanks the code that never runs and collects the
//! functions, [`lex`] splits the rest into statements of words, [`dotnet`] finds the .NET
//! network clients in the script's text, [`cmdlets`] reads what each network cmdlet targets.

use base64::Engine as _;

use super::clients::Parsed;
use super::context::{Ctx, RefKind, is_reserved_char, sanitize};
use super::{
    Dependency, EnvValue, FileLookup, MAX_DEPTH, MAX_SCRIPT_BYTES, MAX_SCRIPT_FILES, MAX_SCRIPT_NESTING,
};

mod cmdlets;
mod dotnet;
mod lex;
mod prune;
mod status;

use cmdlets::find_ps;
use dotnet::{dotnet_web_targets, tcp_client_targets};
use lex::{Assignment, SCOPES, Word, closing, is_value_word, ps_assignment, statements, var_key};
use prune::PsFunction;
use status::ps_split_last;

/// Which PowerShell runs the script (their aliases differ).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Edition {
    /// `powershell.exe`: Windows PowerShell 5.1.
    Windows,
    /// `pwsh`: PowerShell 7.
    Core,
}

/// Parameters of the PowerShell CLI that take a value (names lowercase, with their documented
/// short forms).
const CLI_VALUES: &[&str] = &[
    "executionpolicy",
    "ex",
    "ep",
    "inputformat",
    "inp",
    "if",
    "outputformat",
    "o",
    "of",
    "windowstyle",
    "w",
    "version",
    "v",
    "psconsolefile",
    "configurationname",
    "config",
    "workingdirectory",
    "wd",
    "settingsfile",
    "settings",
    "custompipename",
];

/// What a PowerShell command line runs.
#[derive(Debug, PartialEq, Eq)]
enum Cli {
    /// A script given inline (`-Command`, `-EncodedCommand`, ...).
    Inline(String),
    /// A script file (`-File PATH`, or pwsh's bare first argument).
    File(String),
}

/// The script a PowerShell command line runs: given inline, or a file.
fn command_text(args: &[String], edition: Edition) -> Option<Cli> {
    let mut k = 0;
    while k < args.len() {
        let a = args[k].as_str();
        let Some(name) = a.strip_prefix("--").or_else(|| a.strip_prefix('-')).or_else(|| a.strip_prefix('/'))
        else {
            // A bare first argument: `-Command` for Windows PowerShell, a file for pwsh.
            return Some(match edition {
                Edition::Windows => Cli::Inline(args[k..].join(" ")),
                Edition::Core => Cli::File(args[k].clone()),
            });
        };
        let name = name.to_ascii_lowercase();
        let name = name.split(':').next().unwrap_or("");
        if !name.is_empty() && "command".starts_with(name) && name != "co" || name == "c" {
            return Some(Cli::Inline(args[k + 1..].join(" ")));
        }
        if matches!(name, "commandwithargs" | "cwa") {
            return args.get(k + 1).cloned().map(Cli::Inline);
        }
        if matches!(name, "encodedcommand" | "e" | "ec" | "enc") {
            return decode_utf16le_base64(args.get(k + 1)?).map(Cli::Inline);
        }
        if matches!(name, "file" | "f") {
            return args.get(k + 1).cloned().map(Cli::File);
        }
        k += if CLI_VALUES.contains(&name) { 2 } else { 1 };
    }
    None
}

/// `-EncodedCommand`: Base64 of the script's UTF-16LE bytes.
fn decode_utf16le_base64(b64: &str) -> Option<String> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(b64.trim()).ok()?;
    let units: Vec<u16> = bytes.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
    String::from_utf16(&units).ok()
}

/// One statement: its words, quotes removed (`$env:` references already resolved).
type Statement = Vec<String>;

/// PowerShell's common parameters (about_CommonParameters), with their aliases: those taking a
/// value, and the switches. Every cmdlet row takes them.
const COMMON_VALUES: &[&str] = &[
    "erroraction",
    "ea",
    "warningaction",
    "wa",
    "informationaction",
    "infa",
    "progressaction",
    "proga",
    "errorvariable",
    "ev",
    "warningvariable",
    "wv",
    "informationvariable",
    "iv",
    "outvariable",
    "ov",
    "outbuffer",
    "ob",
    "pipelinevariable",
    "pv",
];
const COMMON_SWITCHES: &[&str] = &["verbose", "vb", "debug", "db"];

/// Parameters of one cmdlet call, by unique prefix of the row's names (PowerShell accepts any
/// unambiguous prefix). A parameter the row does not know makes the positionals unreliable: then
/// `?` is among the flags.
pub(super) fn ps_params(args: &[String], values: &[&str], switches: &[&str]) -> Parsed {
    let mut p = Parsed::default();
    let mut k = 0;
    while k < args.len() {
        let a = &args[k];
        let is_param =
            a.len() > 1 && a.starts_with('-') && a[1..].starts_with(|c: char| c.is_ascii_alphabetic());
        if !is_param {
            p.pos.push(a.clone());
            k += 1;
            continue;
        }
        let (name, attached) = match a[1..].split_once(':') {
            Some((n, v)) => (n.to_ascii_lowercase(), Some(v.to_string())),
            None => (a[1..].to_ascii_lowercase(), None),
        };
        let resolve = |list: &[&str], common: &[&str]| -> Vec<String> {
            list.iter().chain(common).filter(|n| n.starts_with(&name)).map(|n| n.to_string()).collect()
        };
        let (mut vals, mut sws) = (resolve(values, COMMON_VALUES), resolve(switches, COMMON_SWITCHES));
        // An exact name wins over names it is a prefix of (`-Proxy`, `-ProxyUseDefaultCredentials`).
        if vals.contains(&name) {
            (vals, sws) = (vec![name.clone()], Vec::new());
        } else if sws.contains(&name) {
            (vals, sws) = (Vec::new(), vec![name.clone()]);
        }
        match (vals.as_slice(), sws.as_slice()) {
            ([v], []) => {
                let value = match attached {
                    Some(v) => v,
                    None => {
                        k += 1;
                        args.get(k).cloned().unwrap_or_default()
                    }
                };
                p.opts.push((v.clone(), value));
            }
            ([], [s]) => p.flags.push(s.clone()),
            _ => p.flags.push("?".to_string()),
        }
        k += 1;
    }
    p
}

/// A marker character as a string.
fn marker_text(c: char) -> String {
    c.to_string()
}

impl Ctx<'_> {
    /// `powershell`/`pwsh` with `raw_rest` as its arguments.
    pub(super) fn powershell(
        &mut self,
        raw_rest: &[String],
        edition: Edition,
        depth: usize,
    ) -> Option<Dependency> {
        if depth >= MAX_DEPTH {
            return None;
        }
        let rest: Vec<String> = raw_rest.iter().map(|a| self.render_lit(a)).collect();
        let script = match command_text(&rest, edition)? {
            Cli::Inline(script) => script,
            Cli::File(path) => return self.powershell_file(&path, edition, depth),
        };
        if !self.spend_object(script.len()) {
            return None;
        }
        self.powershell_script(&script, edition, depth + 1)
    }

    /// `-File PATH`: the script is analysed when it can be read from a volume (a ConfigMap), as a
    /// shell script is; one that cannot be read, on a volume or in the image, is noted (not
    /// analysed, never a finding).
    fn powershell_file(&mut self, path: &str, edition: Edition, depth: usize) -> Option<Dependency> {
        let files = self.files?;
        if path.chars().any(is_reserved_char) {
            return None;
        }
        match files.read(path) {
            FileLookup::Text { text, origin } => {
                if depth >= MAX_DEPTH
                    || self.scripts.len() >= MAX_SCRIPT_NESTING
                    || self.files_read >= MAX_SCRIPT_FILES
                    || self.scripts.iter().any(|(p, _)| p == path)
                {
                    return None;
                }
                if text.len() > MAX_SCRIPT_BYTES {
                    self.too_long.get_or_insert(text.len());
                    return None;
                }
                if !self.spend_object(text.len()) {
                    return None;
                }
                self.files_read += 1;
                self.scripts.push((path.to_string(), origin));
                let found = self.powershell_script(&sanitize(&text), edition, depth + 1);
                self.scripts.pop();
                found
            }
            FileLookup::Unreadable(reason) => {
                self.note_unresolved(path, reason);
                None
            }
            // Part of the image: not readable at admission. Said, never guessed from its name.
            FileLookup::NotOnVolume => {
                self.note_unresolved(
                    path,
                    "a PowerShell script in the image: probegate cannot read it, so its checks are not analysed"
                        .to_string(),
                );
                None
            }
        }
    }

    /// The statements of a PowerShell script, each matched like a command. Script variables
    /// assigned a string, a number or another variable (`$u = "http://..."`, `[int]$p = 8080`,
    /// `Set-Variable u ...`) are followed in order; any other value is unknown, and an unknown
    /// variable never makes a dependency (it is noted instead).
    fn powershell_script(&mut self, script: &str, edition: Edition, depth: usize) -> Option<Dependency> {
        let lower = script.to_ascii_lowercase();
        // Test-NetConnection and Test-Connection fail a probe only through `exit`/`throw` on
        // their result.
        // (Only the result's own names: `.StatusCode` is also an Invoke-WebRequest response's.)
        let test_decides = (lower.contains("tcptestsucceeded")
            || lower.contains("pingsucceeded")
            || lower.contains("quiet"))
            && (lower.contains("exit") || lower.contains("throw"))
            || status::loop_waits_on_test(&lower);
        self.ps_block(script, edition, test_decides, depth, Vec::new(), &[])
    }

    /// The statements of `script` (the whole script, or a function's body run with `vars`
    /// holding its arguments), code that never runs left out ([`Ctx::ps_prune`]). `outer`: the
    /// functions defined around it.
    fn ps_block(
        &mut self,
        script: &str,
        edition: Edition,
        test_decides: bool,
        depth: usize,
        mut vars: Vec<(String, String)>,
        outer: &[PsFunction],
    ) -> Option<Dependency> {
        let (pruned, defined) = self.ps_prune(script);
        let script = pruned.as_str();
        let mut funcs = outer.to_vec();
        funcs.extend(defined);
        // Statements before the last one of a script followed to its end: their status is not
        // the script's ([`ps_split_last`]).
        // (`iex 'LITERAL'` judged as the statement it holds: [`status::inline_literal_iex`].)
        let inlined = status::inline_literal_iex(script);
        if let Some((before, last)) = ps_split_last(inlined.as_deref().unwrap_or(script), &funcs) {
            for (statement, why) in before {
                let saved = self.uncoupled.clone();
                self.uncoupled.get_or_insert_with(|| why.to_string());
                let found = self.ps_block(&statement, edition, test_decides, depth, vars.clone(), &funcs);
                self.uncoupled = saved;
                match found {
                    Some(d) if d.uncoupled.is_some() => {
                        self.uncoupled_found.get_or_insert(d);
                    }
                    Some(d) => return Some(d),
                    None => {}
                }
            }
            return self.ps_block(&last, edition, test_decides, depth, vars, &funcs);
        }
        for statement in statements(script) {
            if !self.spend_units(statement.len()) {
                return None;
            }
            let mut statement = statement;
            if let Some(a) = ps_assignment(&statement) {
                match self.assigned_value(&a, &vars) {
                    Some(v) => {
                        vars.push((a.key, v));
                        continue;
                    }
                    None => {
                        let unknown = marker_text(self.new_ref(RefKind::Unknown, &a.original));
                        vars.push((a.key, unknown));
                        // `$x = COMMAND ...` runs the command.
                        statement = a.rhs;
                    }
                }
            }
            let mut words: Statement = statement.iter().map(|w| self.ps_word(w, &vars)).collect();
            while words.first().is_some_and(|w| {
                matches!(w.as_str(), "." | "&" | "if" | "elseif" | "while" | "return" | "-not" | "!")
            }) {
                words.remove(0);
            }
            let Some(first) = words.first() else { continue };
            let cmdlet = first.to_ascii_lowercase();
            let args = &words[1..];
            // A call of a function the script defines: its body, the arguments bound.
            if let Some(f) = funcs.iter().rev().find(|f| f.name == cmdlet) {
                // Each call's body counts as text analysed (the object's budget bounds calls).
                if depth >= MAX_DEPTH || !self.spend_object(f.body.len()) {
                    continue;
                }
                let mut inner = vars.clone();
                inner.extend(self.bind_arguments(&f.params, args));
                let (body, funcs_here) = (f.body.clone(), funcs.clone());
                if let Some(d) = self.ps_block(&body, edition, test_decides, depth + 1, inner, &funcs_here) {
                    return Some(d);
                }
                continue;
            }
            // `Invoke-Expression [-Command] STRING` runs STRING as PowerShell in this scope
            // (Microsoft.PowerShell.Utility, Invoke-Expression): a literal is read like the script
            // around it, as `eval` of a literal is in sh; a value known only at run time is noted.
            if matches!(cmdlet.as_str(), "invoke-expression" | "iex") {
                let text = match args {
                    [flag, text, ..]
                        if flag.len() > 1 && "-command".starts_with(&flag.to_ascii_lowercase()) =>
                    {
                        Some(text)
                    }
                    [text, ..] if !text.starts_with('-') => Some(text),
                    _ => None,
                };
                let text = text.map(|t| self.render_lit(t)).filter(|t| !t.chars().any(is_reserved_char));
                match text {
                    Some(text) if depth < MAX_DEPTH && self.spend_object(text.len()) => {
                        let found = self.ps_block(&text, edition, test_decides, depth + 1, vars.clone(), &funcs);
                        if found.is_some() {
                            return found;
                        }
                    }
                    Some(_) => {}
                    None => self.note_unresolved(
                        &format!("{first} ..."),
                        format!("the text `{first}` runs is known only at run time: it is not analysed for dependencies"),
                    ),
                }
                continue;
            }
            if matches!(cmdlet.as_str(), "set-variable" | "sv" | "new-variable" | "nv") {
                let (key, value) = self.set_variable(args);
                vars.extend(key.map(|k| (k, value)));
                continue;
            }
            if cmdlet == "resolve-dnsname" {
                let hits = self.resolve_dns_name(args);
                if let Some(d) = self.first_dependency(first, hits, &words) {
                    return Some(d);
                }
                continue;
            }
            let web_alias = edition == Edition::Windows && matches!(cmdlet.as_str(), "curl" | "wget");
            let row = if web_alias { find_ps("invoke-webrequest") } else { find_ps(&cmdlet) };
            let hits = match row {
                Some(row)
                    if row.names.contains(&"test-netconnection")
                        || row.names.contains(&"test-connection") =>
                {
                    if !test_decides {
                        // It reaches the host, but its result fails nothing: a warning at most,
                        // kept while a check that can fail the probe is looked for.
                        let hits = self.tnc_hits(row, args);
                        let saved = self.uncoupled.clone();
                        self.uncoupled.get_or_insert_with(|| {
                            format!("{first} reports a failed connection in its result, and the script does not turn that into `exit` or `throw`")
                        });
                        let found = self.first_dependency(first, hits, &words);
                        self.uncoupled = saved;
                        if let Some(d) = found {
                            self.uncoupled_found.get_or_insert(d);
                        }
                        continue;
                    }
                    self.tnc_hits(row, args)
                }
                Some(row) if row.names.contains(&"invoke-sqlcmd") => self.sqlcmd_hits(row, args),
                Some(row) => self.web_hits(row, args),
                None if cmdlet.ends_with(".ps1") => {
                    // A script file run by the script (`& C:\\probe\\live.ps1`, `.\\live.ps1`).
                    if let Some(d) = self.powershell_file(first, edition, depth) {
                        return Some(d);
                    }
                    continue;
                }
                None => {
                    // A native program (curl.exe, nc.exe, ...): matched as on Linux.
                    if let Some(d) = self.analyze_args(&words, Vec::new(), &[], depth) {
                        return Some(d);
                    }
                    continue;
                }
            };
            if let Some(d) = self.first_dependency(first, hits, &words) {
                return Some(d);
            }
        }
        if self.over_budget.get() {
            // Values cut short by a bound could read as anything.
            return None;
        }
        for (class, arg) in dotnet_web_targets(script) {
            let expandable = !arg.starts_with('\'');
            let url = self.ps_expand(arg.trim_matches(['\'', '"']), expandable, false, &vars);
            let url = self.render_lit(&url);
            let hit = self.request_hit(&url);
            let words = vec![class.to_string(), url];
            if let Some(d) = self.first_dependency(class, vec![hit], &words) {
                return Some(d);
            }
        }
        for (host, port) in tcp_client_targets(script) {
            let host = self.ps_expand(&host, true, false, &vars);
            let host = self.render_lit(&host);
            let port = self.ps_expand(&port, true, false, &vars);
            let port = self.render_lit(&port);
            let hit = self.net_hit(&host, Some(&port), "", format!("{host}:{port}"));
            let words = vec!["TcpClient".to_string(), format!("{host}:{port}")];
            if let Some(d) = self.first_dependency("TcpClient", vec![hit], &words) {
                return Some(d);
            }
        }
        None
    }

    /// A function call's arguments bound to the function's parameters (about_Functions): `-NAME
    /// VALUE` or `-NAME:VALUE` by name (any unique prefix), the others by position; a parameter
    /// given nothing is a value the analysis does not follow.
    fn bind_arguments(&mut self, params: &[String], args: &[String]) -> Vec<(String, String)> {
        let mut bound: Vec<(String, String)> = Vec::new();
        let mut positional = Vec::new();
        let mut k = 0;
        while k < args.len() {
            let a = &args[k];
            let named = a.strip_prefix('-').filter(|n| !n.is_empty()).and_then(|n| {
                let (n, inline) = match n.split_once(':') {
                    Some((n, v)) => (n, Some(v.to_string())),
                    None => (n, None),
                };
                let n = n.to_ascii_lowercase();
                let mut matching = params.iter().filter(|p| p.starts_with(&n));
                let p = matching.next()?;
                matching.next().is_none().then(|| (p.clone(), inline))
            });
            match named {
                Some((p, Some(v))) => bound.push((p, v)),
                Some((p, None)) => {
                    k += 1;
                    bound.push((p, args.get(k).cloned().unwrap_or_default()));
                }
                None => positional.push(a.clone()),
            }
            k += 1;
        }
        let mut positional = positional.into_iter();
        for p in params {
            if bound.iter().any(|(b, _)| b == p) {
                continue;
            }
            let value = match positional.next() {
                Some(v) => v,
                None => marker_text(self.new_ref(RefKind::Unknown, &format!("${p}"))),
            };
            bound.push((p.clone(), value));
        }
        bound
    }

    /// The value an assignment gives its variable, when it is known: strings, numbers and
    /// variables joined by `+` (for `=` and `+=`). `None`: unknown (a command's output, an
    /// expression, another operator).
    fn assigned_value(&mut self, a: &Assignment, vars: &[(String, String)]) -> Option<String> {
        if !matches!(a.op, "=" | "+=") || a.rhs.is_empty() {
            return None;
        }
        let mut value = String::new();
        let mut want_value = true;
        for w in &a.rhs {
            if want_value && is_value_word(w) {
                value.push_str(&self.ps_word(w, vars));
                want_value = false;
            } else if !want_value && w.text == "+" && w.quote_at.is_none() {
                want_value = true;
            } else {
                return None;
            }
        }
        if want_value {
            return None;
        }
        if a.op == "+=" {
            let old = &vars.iter().rev().find(|(n, _)| *n == a.key)?.1;
            // The old value is copied into the new one: counted as expanded text, as a shell's
            // `a+=$a` is (`$a += $a` 40 times would be a terabyte).
            if !self.spend(old.len()) {
                return None;
            }
            return Some(old.clone() + &value);
        }
        Some(value)
    }

    /// `Set-Variable [-Name] NAME [[-Value] VALUE]` (and `New-Variable`, aliases `sv`, `nv`): the
    /// variable's key and value (unknown when no value is written).
    fn set_variable(&mut self, args: &[String]) -> (Option<String>, String) {
        let p = ps_params(
            args,
            &["name", "value", "scope", "option", "visibility", "description"],
            &["force", "passthru", "confirm", "whatif"],
        );
        let mut pos = p.pos.iter();
        let name = p.get(&["name"]).pop().or_else(|| pos.next().cloned());
        let value = p.get(&["value"]).pop().or_else(|| pos.next().cloned()).filter(|v| !v.is_empty());
        let Some(name) = name.filter(|n| !n.is_empty() && !n.chars().any(is_reserved_char)) else {
            return (None, String::new());
        };
        let value = match value {
            Some(v) if !p.has(&["?"]) => v,
            _ => marker_text(self.new_ref(RefKind::Unknown, &format!("${name}"))),
        };
        (Some(var_key(&name)), value)
    }

    /// A word of the script, its variables resolved ([`Ctx::ps_expand`]).
    fn ps_word(&mut self, w: &Word, vars: &[(String, String)]) -> String {
        // Splatting (`Invoke-WebRequest @p`, about_Splatting): the parameters are in a hashtable
        // the analysis does not follow.
        let splat = w
            .text
            .strip_prefix('@')
            .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        if splat && w.quote_at.is_none() {
            return self.new_ref(RefKind::Unknown, &w.text).to_string();
        }
        let expanded = self.ps_expand(&w.text, w.expandable, w.quote_at.is_none(), vars);
        self.render_lit(&expanded)
    }

    /// A word with `$env:NAME`, `${env:NAME}` and the script's `$name` resolved (expandable words
    /// only): a value known at admission, the container's own name (`$env:COMPUTERNAME`), an
    /// env value unknown at admission ([`RefKind::Unresolved`], as in a shell script), or a script
    /// variable the analysis does not follow ([`RefKind::Unknown`]: never a dependency). A `bare`
    /// word (not quoted) that starts with a variable followed by `.` or `[` is a property or
    /// index of it: unknown.
    /// Each variable's value copied counts against the expansion budget ([`Ctx::spend`]): once it
    /// is spent the word is empty and the analysis stops (not analysed, never a finding).
    fn ps_expand(&mut self, word: &str, expandable: bool, bare: bool, vars: &[(String, String)]) -> String {
        if self.over_budget.get() {
            return String::new();
        }
        if !expandable || !word.contains('$') {
            // A literal `$` (single-quoted) is shown as written, but a host holding one is no
            // name that resolves: the request fails every time, whatever else is up.
            if !word.contains('\u{FFFD}') {
                return word.to_string();
            }
            let dollar = self.new_ref(RefKind::Unknown, "$");
            return word.replace('\u{FFFD}', &dollar.to_string());
        }
        let chars: Vec<char> = word.chars().collect();
        let mut out = String::new();
        let mut i = 0;
        let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
        while i < chars.len() {
            if chars[i] != '$' {
                out.push(chars[i]);
                i += 1;
                continue;
            }
            if chars.get(i + 1) == Some(&'(') {
                // `$(...)`: a subexpression; one variable inside is that variable.
                let end = closing(&chars, i + 1);
                let inner: String = chars[i + 2..end.min(chars.len())].iter().collect();
                let original: String = chars[i..(end + 1).min(chars.len())].iter().collect();
                i = end + 1;
                let inner = inner.trim();
                let single_var = inner.starts_with('$')
                    && inner[1..].chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':');
                if single_var {
                    let v = self.ps_expand(inner, true, false, vars);
                    out.push_str(&v);
                } else {
                    out.push(self.new_ref(RefKind::Unknown, &original));
                }
                continue;
            }
            let braced = chars.get(i + 1) == Some(&'{');
            let start = if braced { i + 2 } else { i + 1 };
            let mut end = start;
            // A drive other than `env:` (`$h:8080` reads the drive `h:`, about_Variables).
            let mut drive = false;
            if braced {
                while end < chars.len() && chars[end] != '}' {
                    end += 1;
                }
            } else {
                while end < chars.len() && ident(chars[end]) {
                    end += 1;
                }
                // A scope or drive qualifier: `$env:NAME`, `$script:name`, `$h:8080`.
                let qualifier: String = chars[start..end].iter().collect::<String>().to_ascii_lowercase();
                if end > start
                    && chars.get(end) == Some(&':')
                    && chars.get(end + 1).is_some_and(|c| ident(*c))
                {
                    drive = qualifier != "env" && !SCOPES.contains(&qualifier.as_str());
                    end += 1;
                    while end < chars.len() && ident(chars[end]) {
                        end += 1;
                    }
                }
            }
            let name: String = chars[start..end.min(chars.len())].iter().collect();
            let close = if braced { end + 1 } else { end };
            let original: String = chars[i..close.min(chars.len())].iter().collect();
            if name.is_empty() {
                out.push('$');
                i = close;
                continue;
            }
            // `$u.Host`, `$a[0]` at the start of a bare word: an expression on the variable.
            let member = bare && i == 0 && !braced && matches!(chars.get(end), Some('.') | Some('['));
            i = close;
            if drive || member {
                let whole: String = chars.iter().collect();
                let marker = self.new_ref(RefKind::Unknown, if member { &whole } else { &original });
                if member {
                    return marker_text(marker);
                }
                out.push(marker);
                continue;
            }
            let key = var_key(&name);
            if let Some((_, v)) = vars.iter().rev().find(|(n, _)| *n == key) {
                if !self.spend(v.len()) {
                    return String::new();
                }
                out.push_str(v);
            } else if let Some(var) = key.strip_prefix("env:") {
                let env_name = &name[4..];
                let value = self
                    .env
                    .vars
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(env_name))
                    .map(|(_, v)| v.clone());
                let marker = match value {
                    Some(EnvValue::Literal(v)) => self.new_ref(RefKind::Lit(v), &original),
                    Some(EnvValue::PodIp) => self.new_ref(RefKind::SelfIp, &original),
                    Some(EnvValue::PodName) => self.new_ref(RefKind::SelfName, &original),
                    None if var == "computername" => self.new_ref(RefKind::SelfHost, &original),
                    _ => self.new_ref(RefKind::Unresolved, &original),
                };
                out.push(marker);
            } else {
                out.push(self.new_ref(RefKind::Unknown, &original));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
