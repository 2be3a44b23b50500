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

use base64::Engine as _;

use super::clients::{Client, Hit, Parsed};
use super::context::{Ctx, RefKind};
use super::{Dependency, EnvValue, MAX_DEPTH};

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

/// The script a PowerShell command line runs, when it is given inline.
fn command_text(args: &[String], edition: Edition) -> Option<String> {
    let mut k = 0;
    while k < args.len() {
        let a = args[k].as_str();
        let Some(name) = a.strip_prefix("--").or_else(|| a.strip_prefix('-')).or_else(|| a.strip_prefix('/'))
        else {
            // A bare first argument: `-Command` for Windows PowerShell, a file for pwsh.
            return (edition == Edition::Windows).then(|| args[k..].join(" "));
        };
        let name = name.to_ascii_lowercase();
        let name = name.split(':').next().unwrap_or("");
        if !name.is_empty() && "command".starts_with(name) && name != "co" || name == "c" {
            return Some(args[k + 1..].join(" "));
        }
        if matches!(name, "commandwithargs" | "cwa") {
            return args.get(k + 1).cloned();
        }
        if matches!(name, "encodedcommand" | "e" | "ec" | "enc") {
            return decode_utf16le_base64(args.get(k + 1)?);
        }
        if matches!(name, "file" | "f") {
            return None;
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

/// Splits a script into statements: at `;`, newlines, `|`, `&&`, `||`, braces and parentheses
/// outside quotes; `#` and `<# #>` comments dropped; `@{...}` and `@(...)` kept as one word.
fn statements(script: &str) -> Vec<Vec<(String, bool)>> {
    let chars: Vec<char> = script.chars().collect();
    let mut out: Vec<Vec<(String, bool)>> = Vec::new();
    let mut cur: Vec<(String, bool)> = Vec::new();
    let mut word = String::new();
    // Whether the word had a double-quoted (expandable) part.
    let mut expandable = true;
    let mut in_word = false;
    let mut i = 0;
    let end_word =
        |word: &mut String, in_word: &mut bool, expandable: &mut bool, cur: &mut Vec<(String, bool)>| {
            if *in_word {
                cur.push((std::mem::take(word), *expandable));
            }
            *in_word = false;
            *expandable = true;
        };
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\'' | '\u{2018}' | '\u{2019}' => {
                in_word = true;
                i += 1;
                while i < chars.len() {
                    if matches!(chars[i], '\'' | '\u{2018}' | '\u{2019}') {
                        if chars.get(i + 1) == Some(&'\'') {
                            word.push('\'');
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    // A literal `$` inside single quotes is never a variable.
                    word.push(if chars[i] == '$' { '\u{FFFD}' } else { chars[i] });
                    i += 1;
                }
                expandable = false;
            }
            '"' | '\u{201C}' | '\u{201D}' => {
                in_word = true;
                i += 1;
                while i < chars.len() && !matches!(chars[i], '"' | '\u{201C}' | '\u{201D}') {
                    if chars[i] == '`' && i + 1 < chars.len() {
                        i += 1;
                    }
                    word.push(chars[i]);
                    i += 1;
                }
            }
            '`' if i + 1 < chars.len() => {
                in_word = true;
                word.push(chars[i + 1]);
                i += 1;
            }
            '#' if !in_word => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '<' if chars.get(i + 1) == Some(&'#') => {
                i += 2;
                while i + 1 < chars.len() && !(chars[i] == '#' && chars[i + 1] == '>') {
                    i += 1;
                }
                i += 1;
            }
            '@' if matches!(chars.get(i + 1), Some('{') | Some('(')) => {
                // A hashtable or array literal: one opaque word.
                let end = closing(&chars, i + 1);
                in_word = true;
                word.extend(&chars[i..(end + 1).min(chars.len())]);
                i = end;
            }
            ';' | '\n' | '\r' | '|' | '{' | '}' | '(' | ')' | '&' => {
                end_word(&mut word, &mut in_word, &mut expandable, &mut cur);
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c if c.is_whitespace() || c == ',' => {
                end_word(&mut word, &mut in_word, &mut expandable, &mut cur);
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
        i += 1;
    }
    end_word(&mut word, &mut in_word, &mut expandable, &mut cur);
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Index of the bracket closing the one at `open_at` (`chars.len()` when it is never closed).
fn closing(chars: &[char], open_at: usize) -> usize {
    let open = chars[open_at];
    let close = match open {
        '{' => '}',
        '[' => ']',
        _ => ')',
    };
    let mut level = 0usize;
    for (k, &c) in chars.iter().enumerate().skip(open_at) {
        if c == open {
            level += 1;
        } else if c == close {
            level -= 1;
            if level == 0 {
                return k;
            }
        }
    }
    chars.len()
}

/// `host` and `port` of each `System.Net.Sockets.TcpClient` the script connects: `New-Object
/// [System.]Net.Sockets.TcpClient(HOST, PORT)`, `New-Object ... -ArgumentList HOST, PORT`,
/// `[...TcpClient]::new(HOST, PORT)`, and `.Connect(HOST, PORT)` / `.ConnectAsync(HOST, PORT)`.
fn tcp_client_targets(script: &str) -> Vec<(String, String)> {
    let lower = script.to_ascii_lowercase();
    let mut out = Vec::new();
    let args_at = |from: usize| -> Option<(String, String)> {
        let rest = &script[from..];
        let open = rest.find('(')?;
        let between = rest[..open].trim().to_ascii_lowercase();
        if !(between.is_empty() || between == "::new") {
            return None;
        }
        let close = rest[open..].find(')')? + open;
        let mut parts =
            rest[open + 1..close].split(',').map(|p| p.trim().trim_matches(['\'', '"']).to_string());
        Some((parts.next()?, parts.next()?))
    };
    for (at, _) in lower.match_indices("sockets.tcpclient") {
        let after = at + "sockets.tcpclient".len();
        let after = if script[after..].starts_with(']') { after + 1 } else { after };
        if let Some(t) = args_at(after) {
            out.push(t);
        } else if let Some(list) =
            lower[after..].find("-argumentlist").map(|p| after + p + "-argumentlist".len())
        {
            let text: String =
                script[list..].chars().take_while(|c| !matches!(c, ';' | '\n' | ')' | '|')).collect();
            let mut parts = text.split(',').map(|p| p.trim().trim_matches(['\'', '"']).to_string());
            if let (Some(h), Some(p)) = (parts.next(), parts.next()) {
                out.push((h, p));
            }
        }
    }
    let methods: &[&str] = if lower.contains("tcpclient") { &[".connect(", ".connectasync("] } else { &[] };
    for method in methods {
        for (at, _) in lower.match_indices(method) {
            if let Some(t) = args_at(at + method.len() - 1) {
                out.push(t);
            }
        }
    }
    out
}

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

/// `Test-NetConnection`'s documented default target (Microsoft docs, Test-NetConnection:
/// "If you do not specify a target, the cmdlet tests internetbeacon.msedge.net").
const TNC_DEFAULT: &str = "internetbeacon.msedge.net";

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
        let script = command_text(&rest, edition)?;
        if !self.spend_object(script.len()) {
            return None;
        }
        self.powershell_script(&script, edition, depth + 1)
    }

    /// The statements of a PowerShell script, each matched like a command.
    fn powershell_script(&mut self, script: &str, edition: Edition, depth: usize) -> Option<Dependency> {
        let lower = script.to_ascii_lowercase();
        // Test-NetConnection fails a probe only through `exit`/`throw` on its result.
        let tnc_decides = (lower.contains("tcptestsucceeded")
            || lower.contains("pingsucceeded")
            || lower.contains("quiet"))
            && (lower.contains("exit") || lower.contains("throw"));
        let mut vars: Vec<(String, String)> = Vec::new();
        for statement in statements(script) {
            if !self.spend_units(statement.len()) {
                return None;
            }
            let mut words: Statement =
                statement.iter().map(|(w, expand)| self.ps_expand(w, *expand, &vars)).collect();
            // `$name = 'value'` is remembered; `$x = COMMAND ...` runs the command.
            let assigned =
                statement[0].0.strip_prefix('$').filter(|_| statement.get(1).is_some_and(|w| w.0 == "="));
            if let Some(name) = assigned {
                if words.len() == 3 {
                    vars.push((name.to_ascii_lowercase(), words[2].clone()));
                    continue;
                }
                words.drain(..2);
            }
            while words.first().is_some_and(|w| {
                matches!(w.as_str(), "." | "&" | "if" | "elseif" | "while" | "return" | "-not" | "!")
            }) {
                words.remove(0);
            }
            let Some(first) = words.first() else { continue };
            let cmdlet = first.to_ascii_lowercase();
            let args = &words[1..];
            let web_alias = edition == Edition::Windows && matches!(cmdlet.as_str(), "curl" | "wget");
            let row = if web_alias { find_ps("invoke-webrequest") } else { find_ps(&cmdlet) };
            let hits = match row {
                Some(row) if row.names.contains(&"test-netconnection") => {
                    if !tnc_decides {
                        continue;
                    }
                    self.tnc_hits(row, args)
                }
                Some(row) => self.web_hits(row, args),
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
        for (host, port) in tcp_client_targets(script) {
            let host = self.ps_expand(&host, true, &vars);
            let port = self.ps_expand(&port, true, &vars);
            let hit = self.net_hit(&host, Some(&port), "", format!("{host}:{port}"));
            let words = vec!["TcpClient".to_string(), format!("{host}:{port}")];
            if let Some(d) = self.first_dependency("TcpClient", vec![hit], &words) {
                return Some(d);
            }
        }
        None
    }

    /// A word with `$env:NAME`, `${env:NAME}` and the script's `$name` resolved (expandable words
    /// only): a value known at admission, the container's own name (`$env:COMPUTERNAME`), or an
    /// unresolved marker.
    fn ps_expand(&mut self, word: &str, expandable: bool, vars: &[(String, String)]) -> String {
        if !expandable || !word.contains('$') {
            return word.replace('\u{FFFD}', "$");
        }
        let chars: Vec<char> = word.chars().collect();
        let mut out = String::new();
        let mut i = 0;
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
                    let v = self.ps_expand(inner, true, vars);
                    out.push_str(&v);
                } else {
                    out.push(self.new_ref(RefKind::UnresolvedCmd, &original));
                }
                continue;
            }
            let braced = chars.get(i + 1) == Some(&'{');
            let start = if braced { i + 2 } else { i + 1 };
            let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
            let mut end = start;
            if braced {
                while end < chars.len() && chars[end] != '}' {
                    end += 1;
                }
            } else {
                while end < chars.len() && ident(chars[end]) {
                    end += 1;
                }
                // A scope or drive qualifier: `$env:NAME`, `$script:name`.
                let qualifier: String = chars[start..end].iter().collect::<String>().to_ascii_lowercase();
                let qualified =
                    matches!(qualifier.as_str(), "env" | "global" | "script" | "local" | "private" | "using");
                if qualified && chars.get(end) == Some(&':') && chars.get(end + 1).is_some_and(|c| ident(*c))
                {
                    end += 1;
                    while end < chars.len() && ident(chars[end]) {
                        end += 1;
                    }
                }
            }
            let name: String = chars[start..end.min(chars.len())].iter().collect();
            let original: String =
                chars[i..(if braced { end + 1 } else { end }).min(chars.len())].iter().collect();
            i = if braced { end + 1 } else { end };
            if name.is_empty() {
                out.push('$');
                continue;
            }
            let lower = name.to_ascii_lowercase();
            if let Some(var) = lower.strip_prefix("env:") {
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
            } else if let Some((_, v)) = vars.iter().rev().find(|(n, _)| *n == lower) {
                out.push_str(v);
            } else {
                out.push(self.new_ref(RefKind::Unresolved, &original));
            }
        }
        out
    }

    /// `Invoke-WebRequest`/`Invoke-RestMethod` (and the 5.1 `curl`/`wget` aliases): `-Uri` or the
    /// first positional, through `-Proxy` unless `-NoProxy`; `-UnixSocket` stays local.
    fn web_hits(&mut self, row: &Client, args: &[String]) -> Vec<Hit> {
        let p = row.syntax.parse(args);
        let mut hits: Vec<Hit> = if p.has(&["noproxy"]) {
            Vec::new()
        } else {
            p.get(row.proxy_opts).iter().map(|x| Hit::proxy(x)).collect()
        };
        if p.has(row.local_opts) {
            return hits;
        }
        let mut uris = p.get(row.host_opts);
        if uris.is_empty() && !p.has(&["?"]) {
            uris.extend(p.pos.first().cloned());
        }
        hits.extend(uris.iter().map(|u| self.request_hit(u)));
        hits
    }

    /// `Test-NetConnection [[-ComputerName] HOST] [-Port N | [-CommonTCPPort] NAME]`.
    fn tnc_hits(&mut self, row: &Client, args: &[String]) -> Vec<Hit> {
        let p = row.syntax.parse(args);
        let mut hosts = p.get(row.host_opts);
        if hosts.is_empty() && !p.has(&["?"]) {
            hosts.extend(p.pos.first().cloned());
        }
        if hosts.is_empty() {
            hosts.push(TNC_DEFAULT.to_string());
        }
        let port = p.get(&["port", "remoteport"]).pop();
        hosts
            .iter()
            .map(|h| {
                let target = match &port {
                    Some(pt) => format!("{h}:{pt}"),
                    None => h.clone(),
                };
                self.net_hit(h, port.as_deref(), "", target)
            })
            .collect()
    }
}

/// The PowerShell row of a cmdlet name (lowercase).
fn find_ps(cmdlet: &str) -> Option<&'static Client> {
    super::clients::http::POWERSHELL.iter().find(|c| c.is(cmdlet))
}

#[cfg(test)]
mod tests {
    use super::super::{ExecEnv, find_dependency};
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[track_caller]
    fn target(argv: &[&str]) -> String {
        match find_dependency(&s(argv), &ExecEnv::default()) {
            Some(d) => d.target,
            None => panic!("expected a dependency for {argv:?}"),
        }
    }

    #[track_caller]
    fn quiet(argv: &[&str]) {
        if let Some(d) = find_dependency(&s(argv), &ExecEnv::default()) {
            panic!("expected no dependency for {argv:?}, got {d:?}");
        }
    }

    #[test]
    fn web_cmdlets_reaching_another_host_fire() {
        let cases: &[&[&str]] = &[
            &[
                "powershell",
                "-Command",
                "Invoke-WebRequest -Uri http://orders.svc:8080/health -UseBasicParsing",
            ],
            &["powershell.exe", "-NoProfile", "-Command", "iwr http://orders.svc/health"],
            &["pwsh", "-c", "Invoke-RestMethod 'https://api.example.com/ping'"],
            &["pwsh", "-NoLogo", "-c", "irm -Method GET -Uri https://api.example.com/ping"],
            &[
                "powershell",
                "-Command",
                "try { $r = iwr -UseBasicParsing http://orders.svc/health; exit 0 } catch { exit 1 }",
            ],
            &[
                "PowerShell.exe",
                "-ExecutionPolicy",
                "Bypass",
                "-c",
                "curl -UseBasicParsing http://orders.svc/health",
            ],
            &["powershell", "wget http://orders.svc/health"],
            &["pwsh", "-c", "curl.exe -f http://orders.svc/health"],
            &["pwsh", "-c", "curl -f http://orders.svc/health"],
            &["powershell", "-Command", "Invoke-WebRequest -Uri:http://orders.svc/health"],
        ];
        for argv in cases {
            assert!(target(argv).contains("svc") || target(argv).contains("example.com"), "{argv:?}");
        }
    }

    #[test]
    fn web_cmdlets_on_this_pod_or_unknown_parameters_are_quiet() {
        quiet(&[
            "powershell",
            "-Command",
            "Invoke-WebRequest -Uri http://localhost:8080/health -UseBasicParsing",
        ]);
        quiet(&["pwsh", "-c", "iwr http://127.0.0.1:8080/healthz"]);
        quiet(&["pwsh", "-c", "iwr \"http://$($env:COMPUTERNAME):8080/healthz\""]);
        quiet(&["powershell", "-Command", "iwr http://$env:COMPUTERNAME:8080/healthz -UseBasicParsing"]);
        quiet(&["powershell", "-Command", "Invoke-WebRequest -Uri \"http://[::1]:8080/health\""]);
        // An unknown parameter may take a value: the positional is not read as the URI.
        quiet(&["powershell", "-Command", "iwr -SomeNewParameter orders.svc http://localhost/x"]);
        // A file or nothing to run: opaque.
        quiet(&["pwsh", "-File", "C:\\probe.ps1"]);
        quiet(&["pwsh", "C:\\probe.ps1"]);
        // Windows ping's count is not a host.
        quiet(&["powershell", "-Command", "ping -n 1 127.0.0.1"]);
        quiet(&["cmd", "/c", "ping -n 1 localhost"]);
        assert_eq!(target(&["cmd", "/c", "ping -n 1 orders.svc"]), "orders.svc");
        // `Write-Host` of a URL reaches nothing.
        quiet(&["pwsh", "-c", "Write-Host http://orders.svc/health"]);
    }

    #[test]
    fn test_netconnection_fires_only_when_its_result_decides_the_exit() {
        let decided =
            "if (-not (Test-NetConnection orders-db -Port 5432 -InformationLevel Quiet)) { exit 1 }";
        assert_eq!(target(&["powershell", "-Command", decided]), "orders-db:5432");
        let prop = "if (!(tnc -ComputerName orders-db -Port 5432).TcpTestSucceeded) { exit 1 }";
        assert_eq!(target(&["pwsh", "-c", prop]), "orders-db:5432");
        let positional =
            "$t = Test-NetConnection orders-db -Port 1433; if (-not $t.TcpTestSucceeded) { throw 'down' }";
        assert_eq!(target(&["powershell", "-c", positional]), "orders-db:1433");
        // Its result alone never fails the probe (a warning, exit 0).
        quiet(&["powershell", "-Command", "Test-NetConnection orders-db -Port 5432"]);
        quiet(&["powershell", "-Command", "(Test-NetConnection orders-db -Port 5432).TcpTestSucceeded"]);
        // This Pod.
        quiet(&[
            "powershell",
            "-Command",
            "if (-not (tnc localhost -Port 8080 -InformationLevel Quiet)) { exit 1 }",
        ]);
        quiet(&[
            "powershell",
            "-Command",
            "if (-not (tnc $env:COMPUTERNAME -Port 80 -InformationLevel Quiet)) { exit 1 }",
        ]);
    }

    #[test]
    fn tcp_clients_fire_for_other_hosts_only() {
        let script = "$c = New-Object System.Net.Sockets.TcpClient('orders-db', 5432); $c.Close()";
        assert_eq!(target(&["powershell", "-Command", script]), "orders-db:5432");
        let script = "[System.Net.Sockets.TcpClient]::new(\"cache.svc\", 6379).Dispose()";
        assert_eq!(target(&["pwsh", "-c", script]), "cache.svc:6379");
        let script = "$c = New-Object Net.Sockets.TcpClient; $c.Connect('mq.svc', 5672)";
        assert_eq!(target(&["powershell", "-c", script]), "mq.svc:5672");
        let script = "New-Object System.Net.Sockets.TcpClient -ArgumentList 'orders-db', 5432";
        assert_eq!(target(&["powershell", "-c", script]), "orders-db:5432");
        quiet(&["powershell", "-Command", "$c = New-Object System.Net.Sockets.TcpClient('127.0.0.1', 8080)"]);
        quiet(&["powershell", "-Command", "$c = New-Object System.Net.Sockets.TcpClient('localhost', 8080)"]);
        quiet(&[
            "powershell",
            "-Command",
            "New-Object System.Net.Sockets.TcpClient($env:COMPUTERNAME, 8080)",
        ]);
    }

    #[test]
    fn encoded_commands_are_decoded() {
        let script = "iwr http://orders.svc/health";
        let utf16: Vec<u8> = script.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let b64 = base64::engine::general_purpose::STANDARD.encode(utf16);
        assert_eq!(target(&["powershell", "-EncodedCommand", &b64]), "http://orders.svc/health");
        assert_eq!(target(&["pwsh", "-ec", &b64]), "http://orders.svc/health");
    }
}
