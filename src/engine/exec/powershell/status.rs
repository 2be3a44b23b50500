//! Which statements of a PowerShell `-Command` script can set its exit code: [`ps_split_last`]
//! reads the top-level statements of a script it can follow and parts the ones before the last
//! (whose failure cannot fail the probe) from the last one (whose status is the script's).
//! Anything it does not follow keeps every statement coupled, as before.
//!
//! Facts used (Microsoft docs):
//! - about_Pwsh / about_PowerShell_exe, `-Command`: the exit code is the last statement's status
//!   (`$?` true: 0, false: 1) unless `exit N` runs or an error terminates the script
//!   (PowerShell/PowerShell#13501 describes the mapping).
//! - about_Try_Catch_Finally: "A statement-terminating error stops the current statement from
//!   running, but PowerShell continues at the next statement unless the error is also
//!   script-terminating"; a terminating error in a `try` block runs the matching `catch` block,
//!   after which the script goes on after the `try` statement.
//! - about_Trap: "Silence the error, but continue execution of the script or function containing
//!   the trap by using continue in the trap statement" (without `break`, a trap continues too).
//! - about_Preference_Variables / about_CommonParameters: `$ErrorActionPreference` and
//!   `-ErrorAction` `Continue` (the default), `SilentlyContinue` and `Ignore` let the script go on
//!   after a non-terminating error; `Stop` makes it terminating (it then ends the script unless a
//!   `try`/`trap` takes it).
//! - about_Redirection: `>$null`, `2>$null`, `*>$null` and `2>&1` only move or drop a command's
//!   output streams; `| Out-Null` and `$null = ...` drop its output too. None changes whether the
//!   script goes on.

use super::prune::PsFunction;

/// Why a statement before a flat script's last one cannot fail the probe.
pub(super) const PS_NOT_LAST: &str = "its status is not used: a failed statement before the last one does not stop the script, whose exit code the last statement sets";

/// Why a statement in a `try` (before the script's last statement) cannot fail the probe.
pub(super) const PS_CAUGHT: &str = "it runs in a `try` whose `catch` only writes output or exits 0: its failure is caught and the script goes on to its last statement, whose exit code is the script's";

/// Words that pass something on to the statements after them or can wait: `return`, a loop
/// that can wait on the dependency until the probe times out, text run as code, a file or a
/// variable written for a later statement to read, a function defined. One list, as they mean
/// the same to [`flat`] and to [`goes_past`]; each adds its own: [`READS`], [`KEEPS_COUPLED`].
const PASSES_ON: &[&str] = &[
    "return",
    "while",
    "do",
    "until",
    "for",
    "set-variable",
    "sv",
    "new-variable",
    "nv",
    "out-file",
    "outfile",
    "set-content",
    "add-content",
    "tee-object",
    "tee",
    "export-csv",
    "export-clixml",
    "invoke-expression",
    "iex",
    "outvariable",
    "ov",
    "errorvariable",
    "ev",
    "pipelinevariable",
    "pv",
    "informationvariable",
    "warningvariable",
    "function",
    "filter",
    "param",
];

/// Words that, anywhere in a flat statement, read or change the script's flow or status in a way
/// not followed here, besides [`PASSES_ON`]: what ends the script or reads a status, a branch, a
/// `try`, an error action, a job or process started. (`Receive-Job`/`Wait-Job` are only in
/// [`KEEPS_COUPLED`].)
const READS: &[&str] = &[
    "exit",
    "throw",
    "trap",
    "try",
    "catch",
    "finally",
    "if",
    "elseif",
    "else",
    "switch",
    "foreach",
    "break",
    "continue",
    "erroractionpreference",
    "erroraction",
    "ea",
    "lastexitcode",
    "start-job",
    "start-process",
];

/// Words in a function's body that can end the script or turn an error into one that ends it.
/// (`-ErrorAction 1`, `-EA:1` is `Stop` by number, `Inquire` and `Suspend` do not go on either:
/// [`stops_by_error_action`].)
const ENDS_SCRIPT: &[&str] =
    &["exit", "throw", "break", "continue", "trap", "erroractionpreference", "stop", "lastexitcode"];

/// Whether a lowercase parameter name is `-ErrorAction`: its alias `-ea` or a prefix PowerShell
/// accepts for it (`-ErrorA`: any unambiguous prefix names a parameter; `-Error` could be
/// `-ErrorVariable`).
fn is_error_action(name: &str) -> bool {
    name == "-ea" || name.len() >= 7 && "-erroraction".starts_with(name)
}

/// The `-ErrorAction` values that let a script go on after a non-terminating error: `Continue`
/// ("displays the error message and continues executing"), `SilentlyContinue` and `Ignore`, or
/// their numbers in the ActionPreference enum (2, 0, 4) (about_CommonParameters). Not `Stop`
/// (1), `Inquire` (3: "prompts you for confirmation before continuing", which a probe cannot
/// answer), `Suspend` (5: "only available for workflows which aren't supported in PowerShell 6
/// and beyond") or `Break` (6: "Enters the debugger").
fn goes_on(value: &str) -> bool {
    matches!(value.trim_matches(['\'', '"']), "silentlycontinue" | "continue" | "ignore" | "0" | "2" | "4")
}

/// Whether a lowercase text gives `-ErrorAction` (or `-EA`, `-ErrorAction:VALUE`) a value that
/// does not let the script go on ([`goes_on`]): the error may then end the script.
fn stops_by_error_action(lower: &str) -> bool {
    let tokens: Vec<&str> = lower.split_whitespace().collect();
    tokens.iter().enumerate().any(|(k, t)| {
        let (name, attached) = t.split_once(':').map_or((*t, None), |(n, v)| (n, Some(v)));
        is_error_action(name) && attached.or(tokens.get(k + 1).copied()).is_none_or(|v| !goes_on(v))
    })
}

/// The lowercase words of a text (letters, digits, `-`, `_`; a leading `-` dropped).
fn words(lower: &str) -> impl Iterator<Item = &str> {
    lower
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .map(|w| w.trim_start_matches('-'))
}

/// The index of the `}`/`)`/`]` closing the bracket at `open`, outside quotes (`''` and `""`
/// quote themselves); `None` when it is not closed.
fn block_end(c: &[char], open: usize) -> Option<usize> {
    let (mut depth, mut quote) = (0usize, None::<char>);
    for (k, &ch) in c.iter().enumerate().skip(open) {
        match (quote, ch) {
            (Some(q), ch) if ch == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(ch),
            (None, '{' | '(' | '[') => depth += 1,
            (None, '}' | ')' | ']') => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

/// The top-level statements of a script: split at `;` and line ends outside quotes and
/// brackets, a `catch`/`finally` on its own line joined to the `try` before it. `None` when a
/// quote or bracket is not closed.
fn top_level(script: &str) -> Option<Vec<String>> {
    let c: Vec<char> = script.chars().collect();
    let mut parts: Vec<String> = vec![String::new()];
    let (mut depth, mut quote) = (0usize, None::<char>);
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        i += 1;
        // `# ...` to the line's end and `<# ... #>` (about_Comments), outside quotes: a `#`
        // that starts a word.
        let starts_word =
            i < 2 || c[i - 2].is_whitespace() || matches!(c[i - 2], ';' | '{' | '}' | '(' | ')');
        if quote.is_none() && ch == '#' && starts_word {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if quote.is_none() && ch == '<' && c.get(i) == Some(&'#') {
            i += 1;
            while i < c.len() && !(c[i - 1] == '#' && c[i] == '>') {
                i += 1;
            }
            i += 1;
            continue;
        }
        match (quote, ch) {
            (Some(q), ch) if ch == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(ch),
            (None, '{' | '(' | '[') => depth += 1,
            (None, '}' | ')' | ']') => depth = depth.checked_sub(1)?,
            (None, ';' | '\n' | '\r') if depth == 0 => {
                parts.push(String::new());
                continue;
            }
            _ => {}
        }
        parts.last_mut()?.push(ch);
    }
    if quote.is_some() || depth != 0 {
        return None;
    }
    let mut out: Vec<String> = Vec::new();
    for p in parts.into_iter().map(|p| p.trim().to_string()).filter(|p| !p.is_empty()) {
        let lower = p.to_ascii_lowercase();
        let handler = ["catch", "finally"].iter().any(|k| {
            lower
                .strip_prefix(k)
                .is_some_and(|r| r.starts_with(|c: char| c.is_whitespace() || c == '{' || c == '['))
        });
        match out.last_mut() {
            Some(prev) if handler && prev.to_ascii_lowercase().starts_with("try") => {
                prev.push(' ');
                prev.push_str(&p);
            }
            _ => out.push(p),
        }
    }
    Some(out)
}

/// A statement with its output redirections to `$null` (`>$null`, `2>$null`, `*>$null`,
/// `>> $null`) and stream merges (`2>&1`) taken out. Any other `>` is left in place.
fn drop_null_redirections(s: &str) -> String {
    let c: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let (mut i, mut quote) = (0, None::<char>);
    while i < c.len() {
        let ch = c[i];
        match (quote, ch) {
            (Some(q), ch) if ch == q => quote = None,
            (None, '\'' | '"') => quote = Some(ch),
            (None, '>') => {
                // A stream number or `*` right before the `>`.
                let stream = out.ends_with(|p: char| p.is_ascii_digit() || p == '*')
                    && out[..out.len() - 1].chars().last().is_none_or(char::is_whitespace);
                let mut j = i + 1;
                if c.get(j) == Some(&'>') {
                    j += 1;
                }
                let merge = c.get(j) == Some(&'&') && c.get(j + 1).is_some_and(char::is_ascii_digit);
                let target = if merge {
                    Some(j + 2)
                } else {
                    let mut k = j;
                    while c.get(k).is_some_and(|c| *c == ' ' || *c == '\t') {
                        k += 1;
                    }
                    let word: String = c[k..(k + 5).min(c.len())].iter().collect();
                    let ends =
                        !c.get(k + 5).is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':');
                    (word.eq_ignore_ascii_case("$null") && ends).then_some(k + 5)
                };
                if let Some(end) = target {
                    if stream {
                        out.pop();
                    }
                    out.push(' ');
                    i = end;
                    continue;
                }
            }
            _ => {}
        }
        out.push(ch);
        i += 1;
    }
    out
}

/// A flat statement made ready for the analysis: `$null =` and null redirections dropped, and
/// `-ErrorAction`/`-EA` taken out when its value lets the script go on (`SilentlyContinue`,
/// `Continue`, `Ignore`, or their numbers 0, 2, 4: the ActionPreference enum), or, in a `try`
/// (`in_try`), also `Stop` (1): the `catch` takes the error. `None` when the statement is not flat
/// (a block, a parenthesis, an assignment, a file written, a status read: [`PASSES_ON`],
/// [`READS`]) or has another error action.
fn flat(statement: &str, in_try: bool) -> Option<String> {
    let mut s = statement.trim();
    let lower = s.to_ascii_lowercase();
    if let Some(rest) = lower.strip_prefix("$null") {
        let rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix('=')
            && !r.starts_with('=')
        {
            s = s[s.len() - r.len()..].trim_start();
        }
    }
    let s = drop_null_redirections(s);
    // `-ErrorAction VALUE`, `-EA VALUE`, `-ErrorAction:VALUE`.
    let tokens: Vec<&str> = s.split_whitespace().collect();
    let mut kept: Vec<&str> = Vec::with_capacity(tokens.len());
    let mut k = 0;
    while k < tokens.len() {
        let t = tokens[k].to_ascii_lowercase();
        let (name, attached) = match t.split_once(':') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (t.clone(), None),
        };
        if is_error_action(&name) {
            let value = match attached {
                Some(v) => v,
                None => {
                    k += 1;
                    tokens.get(k)?.to_ascii_lowercase()
                }
            };
            let value = value.trim_matches(['\'', '"']);
            if !(goes_on(value) || in_try && matches!(value, "stop" | "1")) {
                return None;
            }
            k += 1;
            continue;
        }
        kept.push(tokens[k]);
        k += 1;
    }
    let s = kept.join(" ");
    let lower = s.to_ascii_lowercase();
    // A cmdlet that only writes its arguments: a string that expands nothing is text alone.
    let writes = lower.split_whitespace().next().is_some_and(|w| WRITERS.contains(&w));
    let lower = if writes { blank_literals(&lower) } else { lower };
    let not_flat = lower.contains(['{', '}', '(', ')', '=', '>', '#', '`', '@', '?', ';'])
        || lower.contains("&&")
        || lower.contains("||")
        || lower.split_whitespace().any(|w| w == ".")
        || words(&lower).any(|w| PASSES_ON.contains(&w) || READS.contains(&w));
    (!not_flat && !s.is_empty()).then_some(s)
}

/// The cmdlets (lowercase) that only write their arguments to an output stream.
const WRITERS: &[&str] = &[
    "write-host",
    "write-output",
    "write-warning",
    "write-verbose",
    "write-information",
    "write-debug",
    "echo",
];

/// `s` with the text of each string that expands nothing blanked (about_Quoting_Rules): a
/// single-quoted string (`''` is a quote in it) and a double-quoted one without `$` or a
/// backtick. A `;`, `(` or `}` in such a string is text, not code. A string left open, or one
/// that may expand (`"$(exit 1)"`), is kept as written.
fn blank_literals(s: &str) -> String {
    let c: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < c.len() {
        let q = c[i];
        if !matches!(q, '\'' | '"') {
            out.push(q);
            i += 1;
            continue;
        }
        // The closing quote: the next one not doubled.
        let mut j = i + 1;
        let mut end = None;
        while j < c.len() {
            if c[j] == q {
                if c.get(j + 1) == Some(&q) {
                    j += 2;
                    continue;
                }
                end = Some(j);
                break;
            }
            j += 1;
        }
        let Some(end) = end else {
            out.extend(&c[i..]);
            break;
        };
        let inner = &c[i + 1..end];
        out.push(q);
        if q == '"' && inner.iter().any(|ch| matches!(ch, '$' | '`')) {
            out.extend(inner);
        } else {
            out.extend(inner.iter().map(|_| ' '));
        }
        out.push(q);
        i = end + 1;
    }
    out
}

/// Words that keep a statement before the last one coupled when it is not flat, besides
/// [`PASSES_ON`] and [`ENDS_SCRIPT`] (what can end the script or read a status, with `$Error`
/// below): a job's result read back. (Not the rest of [`READS`]: an `if`, a `foreach`, a
/// `Start-Job { ... }` are what a statement that is not flat may hold and still go past.)
const KEEPS_COUPLED: &[&str] = &["receive-job", "wait-job"];

/// The variables a statement assigns (`$x = ...`, `$x += ...`, `[string]$x = ...`): their
/// names, lowercase, without a scope prefix.
fn assigned(lower: &str) -> Vec<String> {
    let c: Vec<char> = lower.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        if c[i] != '$' {
            i += 1;
            continue;
        }
        let start = i + 1;
        let mut end = start;
        while end < c.len() && (c[end].is_alphanumeric() || matches!(c[end], '_' | ':')) {
            end += 1;
        }
        let name: String = c[start..end].iter().collect();
        let mut k = end;
        while c.get(k).is_some_and(|c| *c == ' ' || *c == '\t') {
            k += 1;
        }
        let op = match (c.get(k), c.get(k + 1)) {
            (Some('='), next) => next != Some(&'='),
            (Some('+' | '-' | '*' | '/' | '%'), Some('=')) => true,
            _ => false,
        };
        if op && !name.is_empty() {
            let bare = name.rsplit(':').next().unwrap_or(&name).to_string();
            out.push(bare);
        }
        i = end.max(i + 1);
    }
    out
}

/// A statement before the last one that is not flat (an `if`, a `foreach`, a pipeline into
/// `ForEach-Object { ... }`, a script block, `Start-Job { ... }`) but cannot end the script or
/// pass anything to the statements after it (`later`): none of [`ENDS_SCRIPT`],
/// [`PASSES_ON`] or [`KEEPS_COUPLED`], no `$?`, `$Error`, `-ErrorAction 1`, no `>` other than
/// to `$null`, no dot-sourcing, and no variable it assigns read later. An error in it does not stop the script
/// (about_Try_Catch_Finally), so its checks cannot set the exit code.
fn goes_past(statement: &str, later: &str) -> bool {
    let text = drop_null_redirections(statement);
    let lower = text.to_ascii_lowercase();
    let later = later.to_ascii_lowercase();
    let ends = words(&lower)
        .any(|w| ENDS_SCRIPT.contains(&w) || PASSES_ON.contains(&w) || KEEPS_COUPLED.contains(&w))
        || stops_by_error_action(&lower)
        || lower.contains("$?")
        || lower.contains("$error")
        || lower.contains('>')
        || lower.split_whitespace().any(|w| w == ".");
    !ends
        && assigned(&lower).iter().all(|name| {
            !later.contains(&format!("${name}"))
                && !later.contains(&format!("{{{name}}}"))
                && !later.contains(&format!(":{name}"))
        })
}

/// A statement of a `catch`, `finally` or `trap` block that cannot fail the script: nothing,
/// `exit 0`, `continue` (in a `trap` only: `allow_continue`), or one writing text
/// (`Write-Host`, `Write-Output`, `Write-Warning`, `Write-Verbose`, `Write-Information`,
/// `Write-Debug`, `echo`) that is otherwise flat.
fn harmless(block: &str, allow_continue: bool) -> bool {
    let Some(statements) = top_level(block) else { return false };
    statements.iter().all(|s| {
        let lower = s.to_ascii_lowercase();
        let mut w = lower.split_whitespace();
        let first = w.next().unwrap_or("");
        if first == "exit" {
            return w.next() == Some("0") && w.next().is_none();
        }
        if first == "continue" {
            return allow_continue && w.next().is_none();
        }
        matches!(
            first,
            "write-host"
                | "write-output"
                | "write-warning"
                | "write-verbose"
                | "write-information"
                | "write-debug"
                | "echo"
        ) && flat(s, false).is_some()
    })
}

/// `try { BODY } catch [TYPES] { ... } ... [finally { ... }]` whose handlers are all
/// [`harmless`]: the flat statements of BODY. `None` for any other `try`.
fn try_body(statement: &str) -> Option<Vec<String>> {
    let c: Vec<char> = statement.chars().collect();
    let mut i = 3;
    let skip = |i: &mut usize| {
        while c.get(*i).is_some_and(|c| c.is_whitespace()) {
            *i += 1;
        }
    };
    skip(&mut i);
    if c.get(i) != Some(&'{') {
        return None;
    }
    let close = block_end(&c, i)?;
    let body: String = c[i + 1..close].iter().collect();
    i = close + 1;
    let mut catches = 0;
    loop {
        skip(&mut i);
        if i >= c.len() {
            break;
        }
        let rest: String = c[i..].iter().collect::<String>().to_ascii_lowercase();
        let keyword = ["catch", "finally"].into_iter().find(|k| rest.starts_with(k))?;
        i += keyword.len();
        skip(&mut i);
        // `catch [System.Net.WebException], [System.IO.IOException] { ... }`
        while keyword == "catch" && c.get(i) == Some(&'[') {
            i = block_end(&c, i)? + 1;
            skip(&mut i);
            if c.get(i) == Some(&',') {
                i += 1;
                skip(&mut i);
            }
        }
        if c.get(i) != Some(&'{') {
            return None;
        }
        let end = block_end(&c, i)?;
        let handler: String = c[i + 1..end].iter().collect();
        if !harmless(&handler, false) {
            return None;
        }
        catches += usize::from(keyword == "catch");
        i = end + 1;
    }
    if catches == 0 {
        return None;
    }
    top_level(&body)?.iter().map(|s| flat(s, true)).collect()
}

/// `trap [TYPE] { ... }` whose block is [`harmless`] (`continue` allowed): the script goes on
/// after a terminating error.
fn continuing_trap(statement: &str) -> bool {
    let c: Vec<char> = statement.chars().collect();
    let mut i = 4;
    while c.get(i).is_some_and(|c| c.is_whitespace()) {
        i += 1;
    }
    if c.get(i) == Some(&'[') {
        let Some(end) = block_end(&c, i) else { return false };
        i = end + 1;
        while c.get(i).is_some_and(|c| c.is_whitespace()) {
            i += 1;
        }
    }
    if c.get(i) != Some(&'{') {
        return false;
    }
    block_end(&c, i)
        .is_some_and(|end| end + 1 == c.len() && harmless(&c[i + 1..end].iter().collect::<String>(), true))
}

/// `$ErrorActionPreference = 'Continue'` or `'SilentlyContinue'` (any scope prefix, either
/// quote): `Some(true)`; another assignment of it: `Some(false)`; not one: `None`.
fn error_preference_goes_on(statement: &str) -> Option<bool> {
    let lower = statement.trim().to_ascii_lowercase();
    let name = lower.strip_prefix('$')?;
    let name = ["global:", "script:", "local:"].iter().find_map(|p| name.strip_prefix(p)).unwrap_or(name);
    let value = name.strip_prefix("erroractionpreference")?.trim_start().strip_prefix('=')?.trim();
    let value = value.strip_prefix(['\'', '"']).and_then(|v| v.strip_suffix(['\'', '"'])).unwrap_or("");
    Some(matches!(value, "continue" | "silentlycontinue"))
}

/// A `-Command` script whose top-level statements are all followed here, split into the
/// statements before the last one (each with why its status cannot be the script's) and the
/// last one. Statements before the last may be flat commands or pipelines (see [`flat`]: with
/// `-ErrorAction SilentlyContinue`/`Continue`/`Ignore`, output sent to `$null`), `try` statements
/// whose `catch` only writes output or exits 0 ([`try_body`]), `trap { continue }`
/// ([`continuing_trap`]) and `$ErrorActionPreference = 'SilentlyContinue'`/`'Continue'`; the
/// last one is flat or `exit 0`. A function the script defines (`funcs`) that can end the
/// script ([`ENDS_SCRIPT`]) keeps every statement coupled. `None` for any other script: then no
/// statement is taken as uncoupled.
pub(super) fn ps_split_last(
    script: &str,
    funcs: &[PsFunction],
) -> Option<(Vec<(String, &'static str)>, String)> {
    let parts = top_level(script)?;
    let (last, before) = parts.split_last()?;
    let ends_script = |body: &str| {
        let lower = body.to_ascii_lowercase();
        words(&lower).any(|w| ENDS_SCRIPT.contains(&w)) || stops_by_error_action(&lower)
    };
    // A job's errors read back (`Receive-Job` writes them as the caller's own, `Wait-Job`
    // waits on it) reach whatever statement reads them.
    let lower = script.to_ascii_lowercase();
    if words(&lower).any(|w| matches!(w, "receive-job" | "wait-job" | "rcjb" | "wjb")) {
        return None;
    }
    if funcs.iter().any(|f| ends_script(&f.body)) {
        return None;
    }
    let mut out: Vec<(String, &'static str)> = Vec::new();
    for (n, p) in before.iter().enumerate() {
        let lower = p.to_ascii_lowercase();
        let keyword = |k: &str| {
            lower
                .strip_prefix(k)
                .is_some_and(|r| r.starts_with(|c: char| c.is_whitespace() || c == '{' || c == '['))
        };
        if keyword("try") {
            out.extend(try_body(p)?.into_iter().map(|s| (s, PS_CAUGHT)));
        } else if keyword("trap") {
            if !continuing_trap(p) {
                return None;
            }
        } else if let Some(goes_on) = error_preference_goes_on(p) {
            if !goes_on {
                return None;
            }
        } else if let Some(f) = flat(p, false) {
            out.push((f, PS_NOT_LAST));
        } else if goes_past(p, &parts[n + 1..].join("\n")) {
            out.push((p.clone(), PS_NOT_LAST));
        } else {
            return None;
        }
    }
    let last = if last.split_whitespace().map(str::to_ascii_lowercase).eq(["exit", "0"]) {
        String::new()
    } else {
        flat(last, false)?
    };
    (!out.is_empty()).then_some((out, last))
}

/// Whether a loop waits on a connection test's result: a `while (...)`, `until (...)` or
/// `for (...)` whose condition runs `Test-NetConnection`/`Test-Connection`, or a loop with a
/// `break` in a script that runs one (`while ($true) { if (tnc db -InformationLevel Quiet) {
/// break } }`). While the dependency is down the loop does not end and the probe times out
/// (about_While, about_Do: the loop runs as long as its condition holds), which the kubelet
/// counts as a failure: the test's result decides the probe, as `until pg_isready -h db; do
/// sleep 1; done` does in sh.
pub(super) fn loop_waits_on_test(lower: &str) -> bool {
    let tests = |t: &str| words(t).any(|w| matches!(w, "test-netconnection" | "tnc" | "test-connection"));
    if !tests(lower) {
        return false;
    }
    let c: Vec<char> = lower.chars().collect();
    let all: Vec<&str> = words(lower).collect();
    if all.iter().any(|w| matches!(*w, "while" | "until" | "for")) && all.contains(&"break") {
        return true;
    }
    for keyword in ["while", "until", "for"] {
        let mut from = 0;
        while let Some(at) = lower[from..].find(keyword).map(|k| k + from) {
            from = at + keyword.len();
            let before = lower[..at].chars().next_back();
            if before.is_some_and(|b| b.is_ascii_alphanumeric() || b == '-' || b == '_') {
                continue;
            }
            let rest = lower[from..].trim_start();
            if !rest.starts_with('(') {
                continue;
            }
            let open = lower[..from].chars().count() + (lower[from..].chars().count() - rest.chars().count());
            if let Some(close) = block_end(&c, open)
                && tests(&c[open..close].iter().collect::<String>())
            {
                return true;
            }
        }
    }
    false
}

/// The script with each top-level `Invoke-Expression`/`iex` of a literal string replaced by the
/// literal's text: "runs ... a specified string as a command" in the current scope
/// (Microsoft.PowerShell.Utility, Invoke-Expression), so the statement it holds is judged in its
/// place like the same statement written out. A single-quoted string is verbatim (`''` is a
/// quote); a double-quoted one only without `$` or a backtick (about_Quoting_Rules). `None` when
/// no statement is such a call.
pub(super) fn inline_literal_iex(script: &str) -> Option<String> {
    let parts = top_level(script)?;
    let mut any = false;
    let out: Vec<String> = parts
        .into_iter()
        .map(|p| match iex_literal(&p) {
            Some(text) => {
                any = true;
                text
            }
            None => p,
        })
        .collect();
    any.then(|| out.join("\n"))
}

/// The text of `iex 'LITERAL'` (or `Invoke-Expression [-Command] "LITERAL"`), if that is all the
/// statement is.
fn iex_literal(statement: &str) -> Option<String> {
    let s = statement.trim();
    let (first, rest) = s.split_once(char::is_whitespace)?;
    if !matches!(first.to_ascii_lowercase().as_str(), "iex" | "invoke-expression") {
        return None;
    }
    let mut rest = rest.trim_start();
    if let Some((flag, after)) = rest.split_once(char::is_whitespace) {
        let flag = flag.to_ascii_lowercase();
        if flag.len() > 1 && "-command".starts_with(&flag) {
            rest = after.trim_start();
        }
    }
    let quote = rest.chars().next().filter(|q| matches!(q, '\'' | '"'))?;
    let inner = rest.strip_prefix(quote)?.strip_suffix(quote)?;
    let doubled = format!("{quote}{quote}");
    // The string ends at the first lone quote: nothing may follow it.
    if inner.replace(&doubled, "").contains(quote) {
        return None;
    }
    if quote == '"' && inner.contains(['$', '`']) {
        return None;
    }
    Some(inner.replace(&doubled, &quote.to_string()))
}
