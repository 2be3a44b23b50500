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
use super::context::{Ctx, RefKind, is_reserved_char, sanitize};
use super::{
    Dependency, EnvValue, FileLookup, MAX_DEPTH, MAX_SCRIPT_BYTES, MAX_SCRIPT_FILES, MAX_SCRIPT_NESTING,
};

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

/// One word of a statement as written, quotes removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Word {
    text: String,
    /// Whether `$` in it expands (false once a part of it is single-quoted).
    expandable: bool,
    /// Byte offset in `text` where its first quoted part began: `Some(0)` is a string literal,
    /// `None` a bare word (a command name, a number, a variable or an argument-mode string).
    quote_at: Option<usize>,
}

/// Splits a script into statements: at `;`, newlines, `|`, `&&`, `||`, braces and parentheses
/// outside quotes; `#` and `<# #>` comments dropped; `@{...}` and `@(...)` kept as one word.
fn statements(script: &str) -> Vec<Vec<Word>> {
    let chars: Vec<char> = script.chars().collect();
    let mut out: Vec<Vec<Word>> = Vec::new();
    let mut cur: Vec<Word> = Vec::new();
    let mut word = Word { expandable: true, ..Word::default() };
    let mut in_word = false;
    let mut i = 0;
    let end_word = |word: &mut Word, in_word: &mut bool, cur: &mut Vec<Word>| {
        let done = std::mem::replace(word, Word { expandable: true, ..Word::default() });
        if *in_word {
            cur.push(done);
        }
        *in_word = false;
    };
    while i < chars.len() {
        let c = chars[i];
        if matches!(c, '\'' | '\u{2018}' | '\u{2019}' | '"' | '\u{201C}' | '\u{201D}')
            && word.quote_at.is_none()
        {
            word.quote_at = Some(word.text.len());
        }
        match c {
            '\'' | '\u{2018}' | '\u{2019}' => {
                in_word = true;
                i += 1;
                while i < chars.len() {
                    if matches!(chars[i], '\'' | '\u{2018}' | '\u{2019}') {
                        if chars.get(i + 1) == Some(&'\'') {
                            word.text.push('\'');
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    // A literal `$` inside single quotes is never a variable.
                    word.text.push(if chars[i] == '$' { '\u{FFFD}' } else { chars[i] });
                    i += 1;
                }
                word.expandable = false;
            }
            '"' | '\u{201C}' | '\u{201D}' => {
                in_word = true;
                i += 1;
                while i < chars.len() && !matches!(chars[i], '"' | '\u{201C}' | '\u{201D}') {
                    if chars[i] == '`' && i + 1 < chars.len() {
                        i += 1;
                    }
                    word.text.push(chars[i]);
                    i += 1;
                }
            }
            '`' if i + 1 < chars.len() => {
                in_word = true;
                word.text.push(chars[i + 1]);
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
            '$' if chars.get(i + 1) == Some(&'{') => {
                // `${name}`: a braced variable name, part of the word.
                let end = chars[i..].iter().position(|c| *c == '}').map_or(chars.len(), |p| i + p);
                in_word = true;
                word.text.extend(&chars[i..(end + 1).min(chars.len())]);
                i = end;
            }
            '$' if chars.get(i + 1) == Some(&'(') && (in_word || simple_subexpression(&chars, i)) => {
                // `http://$($env:COMPUTERNAME):8080/`, `tnc $($h)`: a subexpression inside a word,
                // or one of a single variable, is part of the word (others are read as statements
                // of their own, so that the commands in them are matched).
                let end = closing(&chars, i + 1);
                in_word = true;
                word.text.extend(&chars[i..(end + 1).min(chars.len())]);
                i = end;
            }
            '@' if matches!(chars.get(i + 1), Some('{') | Some('(')) => {
                // A hashtable or array literal: one opaque word.
                let end = closing(&chars, i + 1);
                in_word = true;
                word.text.extend(&chars[i..(end + 1).min(chars.len())]);
                i = end;
            }
            ';' | '\n' | '\r' | '|' | '{' | '}' | '(' | ')' | '&' => {
                end_word(&mut word, &mut in_word, &mut cur);
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c if c.is_whitespace() || c == ',' => {
                end_word(&mut word, &mut in_word, &mut cur);
            }
            c => {
                in_word = true;
                word.text.push(c);
            }
        }
        i += 1;
    }
    end_word(&mut word, &mut in_word, &mut cur);
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Whether the `$(` at `at` holds one variable (`$($env:COMPUTERNAME)`, `$($h)`).
fn simple_subexpression(chars: &[char], at: usize) -> bool {
    let end = closing(chars, at + 1);
    let inner: String = chars[at + 2..end.min(chars.len())].iter().collect();
    let inner = inner.trim();
    inner.strip_prefix('$').is_some_and(|v| {
        !v.is_empty() && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
    })
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

/// The URL argument of each .NET web request the script makes: `System.Net.WebClient`'s
/// `DownloadString`/`DownloadData`/`DownloadFile`/`OpenRead`/`Upload*` (they throw a
/// `WebException` when the request fails), and `System.Net.Http.HttpClient`'s `GetAsync`/
/// `Get*Async`/`PostAsync`/`PutAsync`/`DeleteAsync`/`SendAsync`... waited for (`.Result`,
/// `.Wait()`, `.GetAwaiter()`: an unwaited task fails nothing). Each with the class's name; the
/// argument as written (one quoted string or one variable, else nothing).
fn dotnet_web_targets(script: &str) -> Vec<(&'static str, String)> {
    let lower = script.to_ascii_lowercase();
    let mut out = Vec::new();
    let waited = lower.contains(".result") || lower.contains(".wait(") || lower.contains(".getawaiter(");
    let classes: [(&str, &str, bool, &[&str]); 2] = [
        (
            "WebClient",
            "webclient",
            true,
            &[
                ".downloadstring(",
                ".downloaddata(",
                ".downloadfile(",
                ".openread(",
                ".uploadstring(",
                ".uploaddata(",
                ".uploadvalues(",
                ".uploadfile(",
            ],
        ),
        (
            "HttpClient",
            "httpclient",
            waited,
            &[
                ".getasync(",
                ".getstringasync(",
                ".getbytearrayasync(",
                ".getstreamasync(",
                ".postasync(",
                ".putasync(",
                ".patchasync(",
                ".deleteasync(",
            ],
        ),
    ];
    for (class, needle, applies, methods) in classes {
        if !applies || !lower.contains(needle) {
            continue;
        }
        for method in methods {
            for (at, _) in lower.match_indices(method) {
                let from = at + method.len();
                let arg: String = script[from..].chars().take_while(|c| !matches!(c, ',' | ')')).collect();
                let arg = arg.trim();
                let arg = if arg.to_ascii_lowercase().starts_with("[uri]") { arg[5..].trim() } else { arg };
                let one_string = |q: char| {
                    arg.len() >= 2
                        && arg.starts_with(q)
                        && arg.ends_with(q)
                        && !arg[1..arg.len() - 1].contains(q)
                };
                let one_variable = arg.strip_prefix('$').is_some_and(|v| {
                    !v.is_empty()
                        && v.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '{' | '}'))
                });
                if one_string('\'') || one_string('"') || one_variable {
                    out.push((class, arg.to_string()));
                }
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

/// Scope modifiers of a variable name (about_Scopes) and the `variable:` drive: `$script:u` is `$u`.
const SCOPES: &[&str] = &["global", "script", "local", "private", "using", "variable", "workflow"];

/// A variable's key in the script's table: lowercase (PowerShell names ignore case), without a
/// scope modifier; environment variables keep their `env:` drive.
fn var_key(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    match lower.split_once(':') {
        Some((scope, rest)) if SCOPES.contains(&scope) => rest.to_string(),
        _ => lower,
    }
}

/// The assignment operators of about_Assignment_Operators, longest first.
const ASSIGN_OPS: &[&str] = &["??=", "+=", "-=", "*=", "/=", "%=", "="];

/// `$name = VALUE`, `$name=VALUE`, `[type]$name = VALUE`, `$scope:name += VALUE`, `${name} = ...`.
struct Assignment {
    /// [`var_key`] of the variable.
    key: String,
    /// The variable as written (`$u`), for notes.
    original: String,
    /// The operator (`=`, `+=`, ...).
    op: &'static str,
    /// The words right of the operator.
    rhs: Vec<Word>,
}

/// The assignment a statement makes, if it is one.
fn ps_assignment(statement: &[Word]) -> Option<Assignment> {
    let first = statement.first()?;
    if first.quote_at == Some(0) {
        return None;
    }
    let chars: Vec<char> = first.text.chars().collect();
    // Type constraints and attributes before the variable: `[string]$u`, `[ValidateNotNull()]`.
    let mut at = 0;
    while chars.get(at) == Some(&'[') {
        at = closing(&chars, at) + 1;
    }
    let text: String = chars.get(at..)?.iter().collect();
    let rest = text.strip_prefix('$')?;
    let (name, after) = match rest.strip_prefix('{') {
        Some(braced) => {
            let end = braced.find('}')?;
            (&braced[..end], &braced[end + 1..])
        }
        None => {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            (&rest[..end], &rest[end..])
        }
    };
    if name.is_empty() {
        return None;
    }
    let original = format!("${name}");
    let split = |w: &Word, value: &str| -> Word {
        let offset = w.text.len() - value.len();
        Word {
            text: value.to_string(),
            expandable: w.expandable,
            quote_at: w.quote_at.and_then(|q| q.checked_sub(offset)),
        }
    };
    let (op, mut rhs) = if after.is_empty() {
        let second = statement.get(1).filter(|w| w.quote_at.is_none())?;
        let op = ASSIGN_OPS.iter().find(|o| second.text.starts_with(**o))?;
        let value = &second.text[op.len()..];
        let rhs = if value.is_empty() { Vec::new() } else { vec![split(second, value)] };
        (*op, (rhs, 2))
    } else {
        let op = ASSIGN_OPS.iter().find(|o| after.starts_with(**o))?;
        let value = &after[op.len()..];
        let rhs = if value.is_empty() { Vec::new() } else { vec![split(first, value)] };
        (*op, (rhs, 1))
    };
    rhs.0.extend(statement.get(rhs.1..).unwrap_or_default().iter().cloned());
    Some(Assignment { key: var_key(name), original, op, rhs: rhs.0 })
}

/// Whether a word right of `=` is a value rather than a command: a quoted string, a number, or a
/// variable (`$h`, `${h}`, `$env:H`).
fn is_value_word(w: &Word) -> bool {
    if w.quote_at == Some(0) {
        return true;
    }
    let t = w.text.as_str();
    if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return true;
    }
    t.strip_prefix('$')
        .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '{'))
}

/// A marker character as a string.
fn marker_text(c: char) -> String {
    c.to_string()
}

/// A function the script defines (`function NAME [(PARAMS)] { BODY }`, or `filter`): its name
/// (lowercase, without a scope modifier), its parameters' keys in order, and its body. The body
/// runs only where the script calls it (about_Functions), with the arguments bound to the
/// parameters by name or position.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PsFunction {
    name: String,
    params: Vec<String>,
    body: String,
}

/// The script's characters with strings and comments masked: a quoted character is `x`, a
/// comment is blanks, so brackets and keywords found in the mask are code. Same length as `chars`.
fn code_mask(chars: &[char]) -> Vec<char> {
    let mut m = chars.to_vec();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\'' | '\u{2018}' | '\u{2019}' => {
                i += 1;
                while i < chars.len() {
                    if matches!(chars[i], '\'' | '\u{2018}' | '\u{2019}') {
                        if chars.get(i + 1) == Some(&'\'') {
                            m[i] = 'x';
                            m[i + 1] = 'x';
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    m[i] = 'x';
                    i += 1;
                }
            }
            '"' | '\u{201C}' | '\u{201D}' => {
                i += 1;
                while i < chars.len() && !matches!(chars[i], '"' | '\u{201C}' | '\u{201D}') {
                    if chars[i] == '`' && i + 1 < chars.len() {
                        m[i] = 'x';
                        i += 1;
                    }
                    m[i] = 'x';
                    i += 1;
                }
            }
            '`' if i + 1 < chars.len() => {
                m[i + 1] = 'x';
                i += 1;
            }
            '#' if i == 0 || chars[i - 1].is_whitespace() || matches!(chars[i - 1], ';' | '{' | '}') => {
                while i < chars.len() && chars[i] != '\n' {
                    m[i] = ' ';
                    i += 1;
                }
                continue;
            }
            '<' if chars.get(i + 1) == Some(&'#') => {
                while i < chars.len() && !(chars[i] == '#' && chars.get(i + 1) == Some(&'>')) {
                    m[i] = ' ';
                    i += 1;
                }
                for c in m.iter_mut().skip(i).take(2) {
                    *c = ' ';
                }
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    m
}

/// Whether `c` continues a keyword or a name (so a keyword must not touch it).
fn name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '$' | ':' | '.' | '\\' | '/')
}

/// The keyword (lowercase) starting at `i` in the mask, when one starts there.
fn keyword_at(m: &[char], i: usize) -> Option<String> {
    if i > 0 && name_char(m[i - 1]) {
        return None;
    }
    let len = m[i..].iter().take_while(|c| c.is_ascii_alphabetic()).count();
    if len == 0 || m.get(i + len).is_some_and(|c| name_char(*c)) {
        return None;
    }
    let word: String = m[i..i + len].iter().collect::<String>().to_ascii_lowercase();
    matches!(word.as_str(), "function" | "filter" | "if" | "elseif" | "else" | "exit" | "return")
        .then_some(word)
}

/// Index of the first non-blank at or after `i` (newlines included).
fn skip_blank(m: &[char], mut i: usize) -> usize {
    while i < m.len() && m[i].is_whitespace() {
        i += 1;
    }
    i
}

/// The `(` ... `)` then `{` ... `}` of an `if`/`elseif` after `i` (or only the block for
/// `else`): the condition's inner range and the block's opening and closing indexes.
fn clause(m: &[char], i: usize, with_condition: bool) -> Option<(std::ops::Range<usize>, usize, usize)> {
    let mut k = skip_blank(m, i);
    let mut cond = k..k;
    if with_condition {
        if m.get(k) != Some(&'(') {
            return None;
        }
        let close = closing(m, k);
        if close >= m.len() {
            return None;
        }
        cond = k + 1..close;
        k = skip_blank(m, close + 1);
    }
    if m.get(k) != Some(&'{') {
        return None;
    }
    let close = closing(m, k);
    (close < m.len()).then_some((cond, k, close))
}

/// Parameter keys of a `param(...)` block or a function's `(...)` list: each `$name` that ends a
/// declaration (before `,`, `=`, `)` or the end), type constraints and attributes skipped.
fn param_keys(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut keys = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '$' {
            let end = chars[i + 1..]
                .iter()
                .position(|c| !(c.is_alphanumeric() || matches!(c, '_' | ':')))
                .map_or(chars.len(), |p| i + 1 + p);
            let next = skip_blank(&chars, end);
            if end > i + 1 && matches!(chars.get(next), None | Some(',') | Some('=') | Some(')')) {
                keys.push(var_key(&chars[i + 1..end].iter().collect::<String>()));
            }
            i = end;
        } else {
            i += 1;
        }
    }
    keys
}

/// A function's `param(...)` block at the start of its body (after `[CmdletBinding()]`-style
/// attributes).
fn body_params(body: &[char], mask: &[char]) -> Vec<String> {
    let mut k = skip_blank(mask, 0);
    while mask.get(k) == Some(&'[') {
        k = skip_blank(mask, closing(mask, k) + 1);
    }
    let word: String = mask[k.min(mask.len())..].iter().take(5).collect::<String>().to_ascii_lowercase();
    if word != "param" {
        return Vec::new();
    }
    let open = skip_blank(mask, k + 5);
    if mask.get(open) != Some(&'(') {
        return Vec::new();
    }
    let close = closing(mask, open).min(body.len());
    param_keys(&body[open + 1..close].iter().collect::<String>())
}

/// Whether the block `{` at `open` ... `}` at `close` has an `exit` or `return` among its own
/// statements (not nested in another block): once it runs, the script ends.
fn block_exits(m: &[char], open: usize, close: usize) -> bool {
    let mut depth = 0usize;
    for k in open + 1..close {
        match m[k] {
            '{' | '(' => depth += 1,
            '}' | ')' => depth = depth.saturating_sub(1),
            _ if depth == 0 => {
                if let Some(w) = keyword_at(m, k)
                    && (w == "exit" || w == "return")
                {
                    let before = m[open..k].iter().rev().find(|c| !matches!(c, ' ' | '\t'));
                    if matches!(before, Some('{') | Some('\n') | Some(';') | Some('}')) {
                        return true;
                    }
                }
            }
            _ => {}
        }
    }
    false
}

/// Blanks `out[range]` and `m[range]`, keeping newlines (statement ends).
fn blank(out: &mut [char], m: &mut [char], range: std::ops::Range<usize>) {
    for k in range {
        if out[k] != '\n' {
            out[k] = ' ';
            m[k] = ' ';
        }
    }
}

impl Ctx<'_> {
    /// A script with the code that never runs blanked, and the functions it defines (their
    /// definitions blanked too: a body runs where it is called, [`PsFunction`]).
    /// - `if`/`elseif`/`else` branches whose condition is known ([`Ctx::ps_condition`]): only the
    ///   branch taken stays;
    /// - everything after an `exit` or `return` that is a statement of the script's top level
    ///   (about_Language_Keywords: `exit` ends the script, `return` at script level too).
    fn ps_prune(&mut self, script: &str) -> (String, Vec<PsFunction>) {
        let chars: Vec<char> = script.chars().collect();
        let mut m = code_mask(&chars);
        let mut out = chars.clone();
        let mut funcs = Vec::new();
        let (mut i, mut depth) = (0usize, 0usize);
        while i < m.len() {
            let Some(word) = keyword_at(&m, i) else {
                match m[i] {
                    '{' | '(' => depth += 1,
                    '}' | ')' => depth = depth.saturating_sub(1),
                    _ => {}
                }
                i += 1;
                continue;
            };
            let after = i + word.len();
            match word.as_str() {
                "function" | "filter" => {
                    let start = skip_blank(&m, after);
                    let name_end =
                        m[start..].iter().position(|c| !name_char(*c)).map_or(m.len(), |p| start + p);
                    let name: String = chars[start..name_end].iter().collect::<String>().to_ascii_lowercase();
                    let name = name.rsplit(':').next().unwrap_or_default().to_string();
                    let mut k = skip_blank(&m, name_end);
                    let mut params = None;
                    if m.get(k) == Some(&'(') {
                        let close = closing(&m, k).min(m.len());
                        params = Some(param_keys(&chars[k + 1..close].iter().collect::<String>()));
                        k = skip_blank(&m, close + 1);
                    }
                    if name.is_empty() || m.get(k) != Some(&'{') || closing(&m, k) >= m.len() {
                        i = after;
                        continue;
                    }
                    let close = closing(&m, k);
                    let params =
                        params.unwrap_or_else(|| body_params(&chars[k + 1..close], &m[k + 1..close]));
                    let body = chars[k + 1..close].iter().collect();
                    funcs.push(PsFunction { name, params, body });
                    blank(&mut out, &mut m, i..close + 1);
                    i = close + 1;
                }
                "if" => {
                    // The chain's branches in order; once one is surely taken, the rest are dead.
                    // When the branch that runs surely exits (one taken, or every branch of a
                    // chain with `else`), the code after a top-level chain never runs either.
                    let (mut at, mut kw, mut taken) = (i, word, false);
                    let (mut end, mut taken_exits, mut all_exit, mut has_else) = (None, false, true, false);
                    while let Some((cond, open, close)) = clause(&m, at + kw.len(), kw != "else") {
                        let value = if kw == "else" {
                            has_else = true;
                            Some(true)
                        } else {
                            self.ps_condition(&chars[cond].iter().collect::<String>(), script)
                        };
                        if taken || value == Some(false) {
                            blank(&mut out, &mut m, at..close + 1);
                        } else {
                            let exits = block_exits(&m, open, close);
                            all_exit &= exits;
                            if value == Some(true) {
                                taken = true;
                                taken_exits = exits;
                            }
                        }
                        end = Some(close);
                        let next = skip_blank(&m, close + 1);
                        match (next < m.len()).then(|| keyword_at(&m, next)).flatten() {
                            Some(k) if k == "elseif" || k == "else" => (at, kw) = (next, k),
                            _ => break,
                        }
                    }
                    if let Some(end) = end
                        && depth == 0
                        && (taken_exits || (has_else && all_exit))
                    {
                        let len = m.len();
                        blank(&mut out, &mut m, end + 1..len);
                        break;
                    }
                    i = after;
                }
                "exit" | "return" if depth == 0 => {
                    let before = m[..i].iter().rev().find(|c| !matches!(c, ' ' | '\t'));
                    if matches!(before, None | Some('\n') | Some(';') | Some('}')) {
                        let end =
                            m[i..].iter().position(|c| matches!(c, ';' | '\n')).map_or(m.len(), |p| i + p);
                        let len = m.len();
                        blank(&mut out, &mut m, end..len);
                        // A `return` ends nothing more: the script ends here.
                        break;
                    }
                    i = after;
                }
                _ => i = after,
            }
        }
        (out.into_iter().collect(), funcs)
    }

    /// The value of an `if` condition when it is known at admission: `$true`, `$false`, `$null`,
    /// `0`, `1`, `-not`/`!` of one, and `-eq`/`-ne` (`-ieq`, `-ine`, `-ceq`, `-cne`) between
    /// string literals and `$env:NAME` variables whose value is a literal of the container's env
    /// that the script never sets (about_Comparison_Operators: `-eq` ignores case, `-ceq` does not).
    fn ps_condition(&self, cond: &str, script: &str) -> Option<bool> {
        let c = cond.trim();
        if let Some(inner) = c.strip_prefix('(').and_then(|x| x.strip_suffix(')'))
            && closing(&c.chars().collect::<Vec<_>>(), 0) == c.chars().count() - 1
        {
            return self.ps_condition(inner, script);
        }
        let lower = c.to_ascii_lowercase();
        if let Some(rest) = lower.strip_prefix("-not ").or_else(|| lower.strip_prefix('!')) {
            return self.ps_condition(&c[c.len() - rest.len()..], script).map(|v| !v);
        }
        match lower.as_str() {
            "$true" | "1" => return Some(true),
            "$false" | "0" | "$null" => return Some(false),
            _ => {}
        }
        let words: Vec<&str> = c.split_whitespace().collect();
        let [a, op, b] = words.as_slice() else { return None };
        let (negate, case) = match op.to_ascii_lowercase().as_str() {
            "-eq" | "-ieq" => (false, false),
            "-ne" | "-ine" => (true, false),
            "-ceq" => (false, true),
            "-cne" => (true, true),
            _ => return None,
        };
        let (a, b) = (self.ps_operand(a, script)?, self.ps_operand(b, script)?);
        let equal = if case { a == b } else { a.to_lowercase() == b.to_lowercase() };
        Some(equal != negate)
    }

    /// A comparison operand known at admission: a quoted literal without `$`, or `$env:NAME`
    /// with a literal value in the container's env that the script does not assign.
    fn ps_operand(&self, w: &str, script: &str) -> Option<String> {
        if let Some(q) = w.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')) {
            return (!q.contains('\'')).then(|| q.to_string());
        }
        if let Some(q) = w.strip_prefix('"').and_then(|x| x.strip_suffix('"')) {
            return (!q.contains(['$', '`', '"'])).then(|| q.to_string());
        }
        let lower = w.to_ascii_lowercase();
        let name = lower
            .strip_prefix("$env:")
            .or_else(|| lower.strip_prefix("${env:").and_then(|x| x.strip_suffix('}')))?;
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return None;
        }
        // Set anywhere in the script (`$env:MODE = ...`, `Set-Item env:MODE`, .NET): not known.
        let text = script.to_ascii_lowercase();
        let drive = format!("env:{name}");
        for (at, _) in text.match_indices(&drive) {
            let rest = text[at + drive.len()..].trim_start();
            let read = text[..at].ends_with('$') || text[..at].ends_with("${");
            if !read || (rest.starts_with('=') && !rest.starts_with("==")) || rest.starts_with("+=") {
                return None;
            }
        }
        if text.contains("setenvironmentvariable") {
            return None;
        }
        match self.env.vars.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v) {
            Some(EnvValue::Literal(v)) => Some(v.clone()),
            _ => None,
        }
    }
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
    /// shell script is; one that cannot be read is noted, one in the image is opaque.
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
            FileLookup::NotOnVolume => None,
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
            && (lower.contains("exit") || lower.contains("throw"));
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
            let old = vars.iter().rev().find(|(n, _)| *n == a.key)?.1.clone();
            return Some(old + &value);
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
    fn ps_expand(&mut self, word: &str, expandable: bool, bare: bool, vars: &[(String, String)]) -> String {
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

    /// `Resolve-DnsName [-Name] NAME [[-Type] TYPE] [-Server ADDR...]` (DnsClient module): a DNS
    /// lookup like nslookup's; it fails (an error, `$?` false) when the name cannot be resolved.
    /// `-CacheOnly`, a local `-Server`, the Pod's own name, and an unknown parameter give nothing.
    fn resolve_dns_name(&mut self, args: &[String]) -> Vec<Hit> {
        let p = ps_params(
            args,
            &["name", "type", "server"],
            &[
                "dnsonly",
                "cacheonly",
                "dnssecok",
                "dnsseccd",
                "nohostsfile",
                "llmnrnetbiosonly",
                "llmnrfallback",
                "llmnronly",
                "netbiosfallback",
                "noidn",
                "norecursion",
                "quicktimeout",
                "tcponly",
            ],
        );
        if p.has(&["?", "cacheonly", "llmnronly", "llmnrnetbiosonly"]) {
            return Vec::new();
        }
        let Some(name) = p.get(&["name"]).pop().or_else(|| p.pos.first().cloned()) else {
            return Vec::new();
        };
        let servers = p.get(&["server"]);
        if servers.iter().any(|s| self.classify(s) == super::hosts::HostClass::Local) {
            return Vec::new();
        }
        let own = name.chars().any(|c| {
            self.ref_of(c)
                .is_some_and(|r| matches!(r.kind, RefKind::SelfHost | RefKind::SelfName | RefKind::SelfIp))
        });
        let own = own && self.classify(&name) == super::hosts::HostClass::Local;
        if servers.is_empty() && (own || name.eq_ignore_ascii_case("localhost")) {
            return Vec::new();
        }
        let target = match servers.first() {
            Some(srv) => format!("{name} (server {srv})"),
            None => name,
        };
        vec![Hit::always(super::DependencyCategory::Dns, target)]
    }

    /// `Test-NetConnection [[-ComputerName] HOST] [-Port N | [-CommonTCPPort] NAME]` and
    /// `Test-Connection [-TargetName] HOST [-TcpPort N]`.
    fn tnc_hits(&mut self, row: &Client, args: &[String]) -> Vec<Hit> {
        let p = row.syntax.parse(args);
        let mut hosts = p.get(row.host_opts);
        if hosts.is_empty() && !p.has(&["?"]) {
            hosts.extend(p.pos.first().cloned());
        }
        if hosts.is_empty() && row.names.contains(&"test-netconnection") {
            hosts.push(TNC_DEFAULT.to_string());
        }
        let port = p.get(&["port", "remoteport", "tcpport"]).pop();
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

    /// `Invoke-Sqlcmd`: `-ServerInstance`, or the server of `-ConnectionString` (`Server=`,
    /// `Data Source=`, `Address=`, `Addr=`, `Network Address=`: SqlConnection.ConnectionString);
    /// neither is the default instance on this machine.
    fn sqlcmd_hits(&mut self, row: &Client, args: &[String]) -> Vec<Hit> {
        let mut p = row.syntax.parse(args);
        for conn in p.get(&["connectionstring"]) {
            let server = conn.split(';').find_map(|pair| {
                let (k, v) = pair.split_once('=')?;
                let k = k.trim().to_ascii_lowercase();
                matches!(k.as_str(), "server" | "data source" | "address" | "addr" | "network address")
                    .then(|| v.trim().to_string())
            });
            p.opts.extend(server.map(|s| ("serverinstance".to_string(), s)));
        }
        self.standard(row, &p, &[])
    }
}

/// The PowerShell row of a cmdlet name (lowercase).
fn find_ps(cmdlet: &str) -> Option<&'static Client> {
    super::clients::http::POWERSHELL.iter().find(|c| c.is(cmdlet))
}

#[cfg(test)]
mod tests {
    use super::super::{EnvValue, ExecEnv, find_dependency};
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

    /// A dependency whose result cannot fail the probe (a warning): its target.
    #[track_caller]
    fn warned(argv: &[&str]) -> String {
        match find_dependency(&s(argv), &ExecEnv::default()) {
            Some(d) if d.uncoupled.is_some() => d.target,
            other => panic!("expected a dependency that cannot fail the probe for {argv:?}, got {other:?}"),
        }
    }

    #[track_caller]
    fn quiet(argv: &[&str]) {
        if let Some(d) = find_dependency(&s(argv), &ExecEnv::default()) {
            panic!("expected no dependency for {argv:?}, got {d:?}");
        }
    }

    #[test]
    fn splatted_parameters_are_not_followed() {
        // Fresh-user pass: denied as reaching `@p`.
        quiet(&[
            "powershell",
            "-Command",
            "$p = @{Uri='http://localhost:8080/health'; UseBasicParsing=$true}; Invoke-WebRequest @p",
        ]);
        quiet(&["pwsh", "-c", "$a = @{Uri='http://127.0.0.1:8080/healthz'}; Invoke-RestMethod @a"]);
        // A host named beside the splat still counts; a quoted '@p' is a literal.
        assert_eq!(target(&["pwsh", "-c", "Invoke-WebRequest http://orders.svc/ @p"]), "http://orders.svc/");
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
        assert_eq!(
            warned(&["powershell", "-Command", "Test-NetConnection orders-db -Port 5432"]),
            "orders-db:5432"
        );
        assert_eq!(warned(&["pwsh", "-c", "Test-NetConnection -ComputerName db -Port 5432"]), "db:5432");
        warned(&["powershell", "-Command", "(Test-NetConnection orders-db -Port 5432).TcpTestSucceeded"]);
        quiet(&["powershell", "-Command", "Test-NetConnection localhost -Port 5432"]);
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

    #[track_caller]
    fn target_in(argv: &[&str], env: &ExecEnv) -> String {
        match find_dependency(&s(argv), env) {
            Some(d) => d.target,
            None => panic!("expected a dependency for {argv:?}"),
        }
    }

    #[track_caller]
    fn quiet_in(argv: &[&str], env: &ExecEnv) {
        if let Some(d) = find_dependency(&s(argv), env) {
            panic!("expected no dependency for {argv:?}, got {d:?}");
        }
    }

    fn env(vars: &[(&str, EnvValue)]) -> ExecEnv {
        ExecEnv {
            vars: vars.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
            has_env_from: false,
            ..Default::default()
        }
    }

    #[test]
    fn script_variables_are_followed_in_order() {
        // The break-it pass's false deny: a URL assigned without spaces, double-quoted.
        quiet(&["powershell", "-Command", "$u=\"http://localhost:8080/healthz\"; Invoke-WebRequest $u"]);
        quiet(&[
            "powershell",
            "-Command",
            "$u = 'http://127.0.0.1:8080/healthz'; iwr -Uri $u -UseBasicParsing",
        ]);
        quiet(&["pwsh", "-c", "$U= \"http://[::1]:8080/healthz\"; irm $u"]);
        quiet(&["pwsh", "-c", "[string]$u = \"http://localhost:8080/healthz\"; iwr $u"]);
        quiet(&["pwsh", "-c", "$script:u =\"http://localhost:8080/\"; iwr $u"]);
        quiet(&["pwsh", "-c", "${u} = 'http://localhost:8080/'; iwr ${U}"]);
        quiet(&["pwsh", "-c", "$h = 'localhost'; $p = 8080; $u = \"http://${h}:$p/healthz\"; iwr $u"]);
        quiet(&["pwsh", "-c", "$u = 'http://' + 'localhost' + ':8080/'; iwr $u"]);
        quiet(&["pwsh", "-c", "$u = 'http://localhost'; $u += ':8080/healthz'; iwr $u"]);
        quiet(&["pwsh", "-c", "Set-Variable -Name u -Value http://localhost:8080/; iwr $u"]);
        quiet(&["pwsh", "-c", "sv u 'http://localhost:8080/'; iwr $u"]);
        // The same scripts reaching another host fire, with the value followed.
        assert_eq!(
            target(&["powershell", "-Command", "$u=\"http://orders.svc/health\"; Invoke-WebRequest $u"]),
            "http://orders.svc/health"
        );
        assert_eq!(
            target(&["pwsh", "-c", "[string]$U = 'http://orders.svc/health'; iwr $u"]),
            "http://orders.svc/health"
        );
        assert_eq!(
            target(&["pwsh", "-c", "$h = 'orders.svc'; $u = \"http://$h/health\"; iwr $u"]),
            "http://orders.svc/health"
        );
        assert_eq!(
            target(&["pwsh", "-c", "$u = 'http://' + 'orders.svc' + '/h'; iwr $u"]),
            "http://orders.svc/h"
        );
        assert_eq!(
            target(&["pwsh", "-c", "$u = 'http://orders.svc'; $u += '/h'; iwr $u"]),
            "http://orders.svc/h"
        );
        assert_eq!(
            target(&["pwsh", "-c", "Set-Variable -Name u -Value http://orders.svc/h; iwr $u"]),
            "http://orders.svc/h"
        );
        assert_eq!(
            target(&["pwsh", "-c", "New-Variable u 'http://orders.svc/h'; iwr $u"]),
            "http://orders.svc/h"
        );
        // The last assignment wins, whatever the earlier one said.
        quiet(&["pwsh", "-c", "$u = 'http://orders.svc/'; $u = 'http://localhost:8080/'; iwr $u"]);
        assert_eq!(
            target(&["pwsh", "-c", "$u = 'http://localhost/'; $u = 'http://orders.svc/'; iwr $u"]),
            "http://orders.svc/"
        );
        // A single-quoted `$h` is literal text, not the variable.
        let single = target(&["pwsh", "-c", "$h = 'localhost'; iwr 'http://orders.svc/$h'"]);
        assert!(single.starts_with("http://orders.svc/$h"), "{single}");
    }

    #[test]
    fn script_variables_not_followed_never_deny() {
        let cases = [
            // Never assigned, or assigned from a command, an expression or a pipeline.
            "iwr $u",
            "$u = Get-Content C:\\config\\url.txt; iwr $u",
            "$u = $(Get-Content C:\\url.txt); iwr $u",
            "$u = 'http://localhost/'; $u = Get-Url; iwr $u",
            "$cfg = Get-Content c:\\c.json | ConvertFrom-Json; iwr $cfg.url",
            "$u = $cfg.Url; iwr $u",
            "$u = \"http://$($cfg.Host):8080/\"; iwr $u",
            "$u -= 'x'; iwr $u",
            "Set-Variable -Name u -Value (Get-Url); iwr $u",
            // `$h:8080` reads the drive `h:`, not `$h` (about_Variables): not what was meant.
            "$h = 'orders.svc'; iwr http://$h:8080/health",
            "$xs = @('orders.svc'); iwr \"http://$($xs[0])/\"",
        ];
        for script in cases {
            quiet(&["powershell", "-Command", script]);
        }
        // Not followed, but noted.
        let out = super::super::analyze(
            &s(&["pwsh", "-c", "iwr $u"]),
            &ExecEnv::default(),
            &super::super::Options::default(),
        );
        assert!(out.dependency.is_none());
        assert!(out.unresolved.iter().any(|u| u.reason.contains("$u is a script variable")), "{out:?}");
    }

    #[test]
    fn env_variables_come_from_the_container() {
        let e = env(&[
            ("DB_HOST", EnvValue::Literal("orders-db".into())),
            ("LOCAL_URL", EnvValue::Literal("http://localhost:8080/healthz".into())),
            ("SECRET_HOST", EnvValue::Unresolved),
            ("POD_IP", EnvValue::PodIp),
        ]);
        let decided = |h: &str| {
            format!("if (-not (Test-NetConnection {h} -Port 5432 -InformationLevel Quiet)) {{ exit 1 }}")
        };
        assert_eq!(target_in(&["powershell", "-Command", &decided("$env:DB_HOST")], &e), "orders-db:5432");
        assert_eq!(target_in(&["powershell", "-Command", &decided("${env:db_host}")], &e), "orders-db:5432");
        quiet_in(
            &["powershell", "-Command", &decided("$env:OTHER_HOST")],
            &env(&[("OTHER_HOST", EnvValue::Literal("localhost".into()))]),
        );
        quiet_in(&["powershell", "-Command", "iwr $env:LOCAL_URL"], &e);
        quiet_in(&["powershell", "-Command", &decided("$env:POD_IP")], &e);
        // An env value from a Secret or ConfigMap is unknown at admission, as in a shell script.
        assert!(
            target_in(&["powershell", "-Command", &decided("$env:SECRET_HOST")], &e).contains("SECRET_HOST")
        );
        // The script may set an env variable itself.
        quiet_in(
            &["powershell", "-Command", &format!("$env:DB_HOST = 'localhost'; {}", decided("$env:DB_HOST"))],
            &e,
        );
        // A script variable holding an env value.
        assert_eq!(
            target_in(&["pwsh", "-c", &format!("$h = $env:DB_HOST; {}", decided("$h"))], &e),
            "orders-db:5432"
        );
    }

    #[test]
    fn subexpressions_inside_words_and_literal_dollars() {
        for script in [
            "Invoke-WebRequest -Uri http://$($env:COMPUTERNAME):8080/healthz -UseBasicParsing",
            "try { $r = irm http://$($env:COMPUTERNAME):8080/healthz; exit 0 } catch { exit 1 }",
            "if (-not (Test-NetConnection $($env:COMPUTERNAME) -Port 8080 -InformationLevel Quiet)) { exit 1 }",
            // Single quotes do not expand: `$env:COMPUTERNAME` is literal text, no host name at all.
            "$u = 'http://$env:COMPUTERNAME:8080/healthz'; iwr -Uri $u",
        ] {
            quiet(&["powershell", "-Command", script]);
        }
        assert_eq!(
            target(&["powershell", "-Command", "iwr -Uri http://orders.svc/$($env:COMPUTERNAME)/health"]),
            "http://orders.svc/$env:COMPUTERNAME/health"
        );
        assert_eq!(
            target(&["powershell", "-Command", "$h = 'orders.svc'; iwr http://$($h):8080/"]),
            "http://orders.svc:8080/"
        );
    }

    #[test]
    fn test_netconnection_of_a_variable_follows_it() {
        // Its result alone never fails the probe, wherever the host comes from.
        warned(&["powershell", "-Command", "$h=\"db\"; Test-NetConnection $h"]);
        quiet(&[
            "powershell",
            "-Command",
            "$h=\"localhost\"; if (-not (tnc $h -Port 80 -InformationLevel Quiet)) { exit 1 }",
        ]);
        assert_eq!(
            target(&[
                "powershell",
                "-Command",
                "$h=\"db\"; if (-not (tnc $h -Port 5432 -InformationLevel Quiet)) { exit 1 }"
            ]),
            "db:5432"
        );
        // TcpClient arguments too.
        quiet(&[
            "powershell",
            "-Command",
            "$h = 'localhost'; $c = New-Object System.Net.Sockets.TcpClient($h, 8080)",
        ]);
        quiet(&["powershell", "-Command", "$c = New-Object System.Net.Sockets.TcpClient($target, 8080)"]);
    }

    #[test]
    fn test_connection_counts_like_test_netconnection() {
        warned(&["powershell", "-Command", "Test-Connection orders-db -Count 1"]);
        warned(&["pwsh", "-c", "Test-Connection -TargetName orders-db -TcpPort 5432"]);
        let decided = "if (-not (Test-Connection orders-db -Count 1 -Quiet)) { exit 1 }";
        assert_eq!(target(&["powershell", "-Command", decided]), "orders-db");
        let tcp = "if (!(Test-Connection -TargetName orders-db -TcpPort 5432 -Quiet)) { throw 'down' }";
        assert_eq!(target(&["pwsh", "-c", tcp]), "orders-db:5432");
        quiet(&[
            "powershell",
            "-Command",
            "if (-not (Test-Connection localhost -Count 1 -Quiet)) { exit 1 }",
        ]);
        quiet(&["powershell", "-Command", "if (-not (Test-Connection $env:COMPUTERNAME -Quiet)) { exit 1 }"]);
    }

    #[test]
    fn another_command_deciding_the_exit_does_not_make_a_bare_test_count() {
        warned(&[
            "powershell",
            "-Command",
            "Test-Connection orders-db -Count 1; $r = iwr http://localhost:8080/healthz -UseBasicParsing; if ($r.StatusCode -ne 200) { exit 1 }",
        ]);
    }

    #[test]
    fn invoke_sqlcmd_reaches_its_server_instance() {
        let cases: &[(&str, &str)] = &[
            ("Invoke-Sqlcmd -ServerInstance orders-db -Query 'SELECT 1'", "orders-db"),
            ("Invoke-Sqlcmd 'SELECT 1' -ServerInstance 'tcp:orders-db,1433'", "tcp:orders-db,1433"),
            (
                "Invoke-Sqlcmd -ServerInstance orders-db\\SQLEXPRESS -Query 'SELECT 1'",
                "orders-db\\SQLEXPRESS",
            ),
            (
                "Invoke-Sqlcmd -ConnectionString 'Server=tcp:orders-db,1433;Database=app;Encrypt=True' -Query 'SELECT 1'",
                "tcp:orders-db,1433",
            ),
            (
                "Invoke-Sqlcmd -ConnectionString \"Data Source=orders-db;Initial Catalog=app\" 'SELECT 1'",
                "orders-db",
            ),
            ("$s = 'orders-db'; Invoke-Sqlcmd -ServerInstance $s -Query 'SELECT 1'", "orders-db"),
        ];
        for (script, expect) in cases {
            assert_eq!(target(&["powershell", "-Command", script]), *expect, "{script}");
        }
        for script in [
            "Invoke-Sqlcmd -Query 'SELECT 1'",
            "Invoke-Sqlcmd -ServerInstance . -Query 'SELECT 1'",
            "Invoke-Sqlcmd -ServerInstance '(local)' -Query 'SELECT 1'",
            "Invoke-Sqlcmd -ServerInstance 'localhost,1433' -Query 'SELECT 1'",
            "Invoke-Sqlcmd -ServerInstance '(localdb)\\MSSQLLocalDB' -Query 'SELECT 1'",
            "Invoke-Sqlcmd -ServerInstance 'lpc:orders' -Query 'SELECT 1'",
            "Invoke-Sqlcmd -ServerInstance $env:COMPUTERNAME -Query 'SELECT 1'",
            "Invoke-Sqlcmd -ConnectionString 'Server=127.0.0.1;Database=app' -Query 'SELECT 1'",
            "Invoke-Sqlcmd -ServerInstance $server -Query 'SELECT 1'",
        ] {
            quiet(&["powershell", "-Command", script]);
        }
    }

    struct Files(&'static [(&'static str, &'static str)]);

    impl super::super::ScriptFiles for Files {
        fn read(&self, path: &str) -> FileLookup {
            match self.0.iter().find(|(p, _)| *p == path) {
                Some((_, t)) => FileLookup::Text { text: t.to_string(), origin: "ConfigMap ns/probe".into() },
                None if path.starts_with("C:\\probe") => {
                    FileLookup::Unreadable("ConfigMap ns/probe has no key".into())
                }
                None => FileLookup::NotOnVolume,
            }
        }
    }

    #[test]
    fn script_files_from_volumes_are_analysed() {
        let files = Files(&[
            (
                "C:\\probe\\live.ps1",
                "$ErrorActionPreference = 'Stop'\r\nInvoke-Sqlcmd -ServerInstance orders-db -Query 'SELECT 1'\r\n",
            ),
            (
                "C:\\probe\\self.ps1",
                "$u = 'http://localhost:8080/healthz'\nInvoke-WebRequest $u -UseBasicParsing\n",
            ),
        ]);
        let options = super::super::Options { known_commands: vec![], files: Some(&files), budget: None };
        let run = |argv: &[&str]| super::super::analyze(&s(argv), &ExecEnv::default(), &options);
        for argv in [
            &["powershell.exe", "-NoProfile", "-File", "C:\\probe\\live.ps1"][..],
            &["pwsh", "-f", "C:\\probe\\live.ps1"],
            &["pwsh", "C:\\probe\\live.ps1"],
        ] {
            let d = run(argv).dependency.unwrap_or_else(|| panic!("{argv:?}"));
            assert_eq!(d.target, "orders-db");
            assert_eq!(d.script.as_deref(), Some("C:\\probe\\live.ps1 (ConfigMap ns/probe)"));
        }
        assert_eq!(run(&["pwsh", "-File", "C:\\probe\\self.ps1"]).dependency, None);
        // Unreadable: noted, not guessed; in the image: opaque.
        let out = run(&["pwsh", "-File", "C:\\probe\\gone.ps1"]);
        assert_eq!(out.dependency, None);
        assert_eq!(
            out.unresolved.iter().map(|u| u.path.as_str()).collect::<Vec<_>>(),
            ["C:\\probe\\gone.ps1"]
        );
        let out = run(&["pwsh", "-File", "C:\\app\\check.ps1"]);
        assert!(out.dependency.is_none() && out.unresolved.is_empty(), "{out:?}");
        // Windows PowerShell reads a bare first argument as a command, which runs the file.
        let d = run(&["powershell", "C:\\probe\\live.ps1"]).dependency.expect("run as a command");
        assert_eq!(d.target, "orders-db");
        let d =
            run(&["pwsh", "-c", "& 'C:\\probe\\live.ps1'; exit $LASTEXITCODE"]).dependency.expect("called");
        assert_eq!(d.target, "orders-db");
    }

    #[test]
    fn encoded_commands_are_decoded() {
        let script = "iwr http://orders.svc/health";
        let utf16: Vec<u8> = script.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let b64 = base64::engine::general_purpose::STANDARD.encode(utf16);
        assert_eq!(target(&["powershell", "-EncodedCommand", &b64]), "http://orders.svc/health");
        assert_eq!(target(&["pwsh", "-ec", &b64]), "http://orders.svc/health");
    }

    #[test]
    fn code_that_never_runs_is_not_analysed() {
        let db = "Invoke-WebRequest http://orders.svc/health";
        // Break-it pass: each was denied as reaching orders.svc.
        quiet(&["pwsh", "-c", &format!("function Check {{ {db} }}; exit 0")]);
        quiet(&["pwsh", "-c", &format!("filter Check {{ {db} }}\nWrite-Output ok")]);
        quiet(&["pwsh", "-c", &format!("if ($false) {{ {db} }}")]);
        quiet(&["pwsh", "-c", &format!("if (-not $true) {{ {db} }} elseif (0) {{ {db} }}")]);
        quiet(&["pwsh", "-c", &format!("if ($true) {{ exit 0 }} else {{ {db} }}")]);
        quiet(&["pwsh", "-c", &format!("if ($null) {{ {db} }} elseif (1) {{ exit 0 }} else {{ {db} }}")]);
        quiet(&["pwsh", "-c", &format!("exit 0; {db}")]);
        quiet(&["pwsh", "-c", &format!("Write-Output ok\n  exit\n{db}")]);
        quiet(&["powershell", "-Command", &format!("return; {db}")]);
        // After a branch that surely runs and exits (break-it pass), or a chain whose every
        // branch exits.
        quiet(&["pwsh", "-c", &format!("if (-not $false) {{ exit 0 }}\n{db}")]);
        quiet(&["pwsh", "-c", &format!("if ($true) {{ Write-Output ok; return }}; {db}")]);
        quiet(&[
            "pwsh",
            "-c",
            &format!("if ($x) {{ exit 0 }} elseif ($y) {{ exit 2 }} else {{ exit 1 }}\n{db}"),
        ]);
        // A keyword inside a string or a comment is text.
        quiet(&["pwsh", "-c", &format!("Write-Output 'if ($true) {{'; # exit\nexit 0; {db}")]);
        // Code that may run still counts: an unknown condition, an exit inside a block or after
        // `||`, a called function, a branch after a dead one.
        let fires: &[String] = &[
            format!("if ($x) {{ exit 0 }}\n{db}"),
            format!("if (Test-Path C:\\ok) {{ {db} }}"),
            format!("if ($false) {{ exit 0 }} else {{ {db} }}"),
            format!("if ($false) {{ exit 0 }} elseif ($y) {{ {db} }}"),
            format!("if ($false) {{ exit 0 }}; {db}"),
            format!("try {{ exit 0 }} catch {{ }}; {db}"),
            format!("Test-Path C:\\x || exit 0; {db}"),
            format!("function Check {{ {db} }}; Check; exit 0"),
            format!("function Check {{ {db} }}\n& Check"),
            format!("Write-Output 'exit'; {db}"),
            format!("if ($x) {{ exit 0 }} elseif ($y) {{ exit 1 }}; {db}"),
            format!("if ($true) {{ if ($x) {{ exit 0 }} }}; {db}"),
            format!("if ($x) {{ exit 0 }} else {{ Write-Output no }}; {db}"),
            format!("if ($true) {{ Write-Output 'exit' }}; {db}"),
            format!("$exit = 1; {db}"),
        ];
        for script in fires {
            assert_eq!(target(&["pwsh", "-c", script]), "http://orders.svc/health", "{script}");
        }
    }

    #[test]
    fn branches_on_a_literal_env_value_follow_it() {
        let db = "Invoke-WebRequest http://orders.svc/health";
        let e = env(&[("MODE", EnvValue::Literal("standalone".into()))]);
        let script = format!("if ($env:MODE -eq 'standalone') {{ exit 0 }} else {{ {db} }}");
        quiet_in(&["pwsh", "-c", &script], &e);
        quiet_in(&["pwsh", "-c", &format!("if ($env:mode -ne \"STANDALONE\") {{ {db} }}")], &e);
        quiet_in(&["pwsh", "-c", &format!("if ('cluster' -eq $env:MODE) {{ {db} }}")], &e);
        // The other value, `-ceq` on another case, a value the script sets or an env value
        // not known at admission: the branch may run.
        let other = env(&[("MODE", EnvValue::Literal("cluster".into()))]);
        assert_eq!(target_in(&["pwsh", "-c", &script], &other), "http://orders.svc/health");
        let c = format!("if ($env:MODE -ceq 'Standalone') {{ exit 0 }} else {{ {db} }}");
        assert_eq!(target_in(&["pwsh", "-c", &c], &e), "http://orders.svc/health");
        let set = format!("$env:MODE = 'cluster'; {script}");
        assert_eq!(target_in(&["pwsh", "-c", &set], &e), "http://orders.svc/health");
        let unknown = env(&[("MODE", EnvValue::Unresolved)]);
        assert_eq!(target_in(&["pwsh", "-c", &script], &unknown), "http://orders.svc/health");
        assert_eq!(target(&["pwsh", "-c", &script]), "http://orders.svc/health");
    }

    #[test]
    fn function_arguments_are_bound_to_parameters() {
        let positional = "function Check($u) { Invoke-WebRequest $u }; Check http://orders.svc:8080/";
        assert_eq!(target(&["pwsh", "-c", positional]), "http://orders.svc:8080/");
        let named = "function Check { param([string]$Uri, [int]$Timeout = 5)\n Invoke-WebRequest -Uri $Uri }\nCheck -Timeout 3 -Uri http://orders.svc/";
        assert_eq!(target(&["pwsh", "-c", named]), "http://orders.svc/");
        let prefix = "function Check([string]$Uri) { iwr $Uri }; Check -U:http://orders.svc/";
        assert_eq!(target(&["pwsh", "-c", prefix]), "http://orders.svc/");
        quiet(&["pwsh", "-c", "function Check($u) { Invoke-WebRequest $u }; Check http://localhost:8080/"]);
        // A parameter given nothing is not followed.
        quiet(&["pwsh", "-c", "function Check($u) { Invoke-WebRequest $u }; Check"]);
        // Recursion stops at the nesting bound.
        quiet(&["pwsh", "-c", "function F { F }; F"]);
    }

    #[test]
    fn dotnet_web_clients_reach_their_url() {
        // Misses before.
        let fires: &[(&str, &str)] = &[
            (
                "(New-Object Net.WebClient).DownloadString('http://orders.svc/health')",
                "http://orders.svc/health",
            ),
            (
                "$wc = New-Object System.Net.WebClient; $wc.DownloadData(\"http://orders.svc/x\")",
                "http://orders.svc/x",
            ),
            ("$u = 'http://orders.svc/'; (New-Object Net.WebClient).OpenRead([uri]$u)", "http://orders.svc/"),
            (
                "[System.Net.Http.HttpClient]::new().GetAsync('http://orders.svc/').Result",
                "http://orders.svc/",
            ),
            (
                "$c = New-Object System.Net.Http.HttpClient; $c.GetStringAsync('http://orders.svc/').Wait()",
                "http://orders.svc/",
            ),
        ];
        for (script, want) in fires {
            assert_eq!(target(&["pwsh", "-c", script]), *want, "{script}");
        }
        quiet(&["pwsh", "-c", "(New-Object Net.WebClient).DownloadString('http://localhost:8080/health')"]);
        quiet(&[
            "pwsh",
            "-c",
            "(New-Object Net.WebClient).DownloadString(\"http://$env:COMPUTERNAME:8080/\")",
        ]);
        // A task nobody waits for fails nothing; an expression is not followed; dead code.
        quiet(&["pwsh", "-c", "[System.Net.Http.HttpClient]::new().GetAsync('http://orders.svc/')"]);
        quiet(&["pwsh", "-c", "(New-Object Net.WebClient).DownloadString($base + '/x')"]);
        quiet(&["pwsh", "-c", "exit 0; (New-Object Net.WebClient).DownloadString('http://orders.svc/')"]);
        // Without the class, a method of that name is something else.
        quiet(&["pwsh", "-c", "$x.DownloadString('http://orders.svc/')"]);
    }

    #[test]
    fn resolve_dnsname_is_a_dns_lookup() {
        assert_eq!(target(&["pwsh", "-c", "Resolve-DnsName orders.svc"]), "orders.svc");
        assert_eq!(target(&["pwsh", "-c", "Resolve-DnsName -Name orders.svc -Type A"]), "orders.svc");
        assert_eq!(
            target(&["powershell", "-Command", "Resolve-DnsName orders.svc -Server 10.96.0.10"]),
            "orders.svc (server 10.96.0.10)"
        );
        quiet(&["pwsh", "-c", "Resolve-DnsName $env:COMPUTERNAME"]);
        quiet(&["pwsh", "-c", "Resolve-DnsName localhost"]);
        quiet(&["pwsh", "-c", "Resolve-DnsName orders.svc -Server 127.0.0.1"]);
        quiet(&["pwsh", "-c", "Resolve-DnsName orders.svc -CacheOnly"]);
        quiet(&["pwsh", "-c", "Resolve-DnsName orders.svc -SomeNewParameter x"]);
    }
}
