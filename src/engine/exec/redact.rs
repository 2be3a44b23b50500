//! Stage 7: redaction of credentials in everything shown (messages, warnings, notes, logs).

use super::context::basename as path_basename;

/// Does an option or variable name look like it carries a secret?
pub(super) fn is_secret_name(n: &str) -> bool {
    let l = n.trim_start_matches('-').to_ascii_lowercase();
    [
        "pass",
        "secret",
        "token",
        "pwd",
        "auth",
        "credential",
        "apikey",
        "api_key",
        "api-key",
        "access_key",
        "access-key",
        "private",
        "bearer",
        "cookie",
        "session",
        "signature",
    ]
    .iter()
    .any(|k| l.contains(k))
        || matches!(l.as_str(), "key" | "sig" | "pw")
}

/// Is `n` a plain option or variable name (`--password`, `PGPASSWORD`, `db.password`), not a URL
/// or other text that happens to hold `=`?
pub(super) fn is_plain_name(n: &str) -> bool {
    !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// `Name: value` of an HTTP header with a credential (`Authorization`, `X-Vault-Token`,
/// `PRIVATE-TOKEN`, `Cookie`, ...), value redacted; `None` for other headers.
pub(super) fn redact_header(h: &str) -> Option<String> {
    let (name, _) = h.split_once(':')?;
    let lower = name.trim().to_ascii_lowercase();
    let secret = is_secret_name(&lower) || ["authorization", "x-api-key"].iter().any(|k| lower == *k);
    secret.then(|| format!("{}: ***", name.trim()))
}

/// `user:password@host` without a scheme (mysqlsh `--uri`, some clients' DSNs) with the password
/// redacted; other words unchanged.
pub(super) fn redact_bare_userinfo(w: &str) -> String {
    if let Some((userinfo, host)) = w.split_once('@')
        && let Some((user, _)) = userinfo.split_once(':')
        && !userinfo.contains("://")
        && !userinfo.contains(['/', ' '])
        && !host.is_empty()
    {
        return format!("{user}:***@{host}");
    }
    w.to_string()
}

/// Redact `user:password@` in URIs and `password=value`, `token=value`-like pairs inside a
/// string, for messages and logs (`https://u:***@h/x?token=***`).
pub fn redact_secrets(s: &str) -> String {
    if !s.contains('=') && !s.contains("://") && !s.contains("\":") {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(pos) = rest.find("://") {
        let (before, after) = rest.split_at(pos + 3);
        out.push_str(before);
        let end = after.find(['/', '?', '#', ' ', '\'', '"']).unwrap_or(after.len());
        let authority = &after[..end];
        match authority.rsplit_once('@') {
            Some((userinfo, host)) if userinfo.contains(':') => {
                let user = userinfo.split(':').next().unwrap_or("");
                out.push_str(user);
                out.push_str(":***@");
                out.push_str(host);
            }
            _ => out.push_str(authority),
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    redact_kv(&out)
}

/// Redact the values of `password=...`-like pairs (conninfo strings, query strings): any
/// `key=value` at a word or parameter boundary whose key looks secret ([`is_secret_name`]:
/// `password`, `token`, `access_token`, `api_key`, ...).
pub(super) fn redact_kv(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let at_boundary = i == 0
            || matches!(
                chars[i - 1],
                ' ' | '\n' | '\t' | '?' | '#' | '&' | ';' | '\'' | '"' | '{' | '(' | '`'
            );
        if at_boundary {
            let mut k = i;
            while k < chars.len()
                && k - i < 64
                && (chars[k].is_ascii_alphanumeric() || matches!(chars[k], '_' | '-' | '.'))
            {
                k += 1;
            }
            // A JSON member `"password": "value"` (a request body given to curl -d).
            if k > i
                && i > 0
                && chars[i - 1] == '"'
                && chars.get(k) == Some(&'"')
                && chars.get(k + 1) == Some(&':')
            {
                let key: String = chars[i..k].iter().collect();
                if is_secret_name(&key) {
                    out.push_str(&key);
                    out.push_str("\":");
                    i = k + 2;
                    while i < chars.len() && chars[i] == ' ' {
                        out.push(' ');
                        i += 1;
                    }
                    if chars.get(i) == Some(&'"') {
                        i += 1;
                        while i < chars.len() && chars[i] != '"' {
                            i += if chars[i] == '\\' { 2 } else { 1 };
                        }
                        i = (i + 1).min(chars.len());
                        out.push_str("\"***\"");
                    } else {
                        while i < chars.len() && !matches!(chars[i], ',' | '}' | ' ') {
                            i += 1;
                        }
                        out.push_str("***");
                    }
                    continue;
                }
            }
            // libpq conninfo allows blanks around `=` (`password = x`).
            let eq = k + chars[k..].iter().take_while(|c| **c == ' ').count();
            if k > i && chars.get(eq) == Some(&'=') {
                let key: String = chars[i..k].iter().collect();
                if is_secret_name(&key) {
                    out.push_str(&key);
                    out.push_str("=***");
                    i = eq + 1;
                    while chars.get(i) == Some(&' ') {
                        i += 1;
                    }
                    if let Some(&q) = chars.get(i).filter(|c| matches!(c, '\'' | '"')) {
                        // A quoted value: up to and including its closing quote.
                        i += 1;
                        while i < chars.len() && chars[i] != q {
                            i += 1;
                        }
                        i = (i + 1).min(chars.len());
                        continue;
                    }
                    while i < chars.len() && !matches!(chars[i], ' ' | '\n' | '&' | ';' | '\'' | '"') {
                        i += 1;
                    }
                    continue;
                }
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// `AUTH <credentials>` lines inside one word (Redis `AUTH [user] password`, as written by
/// `printf` or `echo` into `nc`) with the credentials replaced by `***`, up to the line's end
/// (a newline, or a backslash escape such as `\r\n`).
pub(super) fn redact_auth_lines(w: &str) -> String {
    let lower = w.to_ascii_lowercase();
    let mut out = String::with_capacity(w.len());
    // `lower` has the same byte offsets as `w`; `done` is where `out` has copied up to.
    let mut done = 0;
    for (i, _) in lower.match_indices("auth ") {
        let before = &w[..i];
        let at_line_start =
            before.is_empty() || before.ends_with(['\n', '\r', '\'', '"', ' ']) || before.ends_with("\\n");
        if i < done || !at_line_start {
            continue;
        }
        let start = i + "auth ".len();
        let end = w[start..].find(['\\', '\r', '\n', '\'', '"']).map_or(w.len(), |e| start + e);
        out.push_str(&w[done..start]);
        out.push_str(if w[start..end].trim().is_empty() { &w[start..end] } else { "***" });
        done = end;
    }
    out.push_str(&w[done..]);
    // The wire form, `*2\r\n$4\r\nAUTH\r\n$9\r\nPASSWORD\r\n`: everything after the AUTH line.
    let lower = out.to_ascii_lowercase();
    for marker in ["auth\\r\\n$", "auth\r\n$"] {
        if let Some(i) = lower.find(marker) {
            out.truncate(i + marker.len() - 1);
            out.push_str("***");
            break;
        }
    }
    out
}

/// A client's short option whose value is a password (`--password=X` and `--pass X` are found by
/// their names, [`is_secret_name`]).
pub(super) struct PasswordFlag {
    /// Client basenames; a name ending in `*` is a prefix (`ldap*`).
    pub(super) clients: &'static [&'static str],
    /// The option as written: `-p`, `-P`, `-pw`.
    pub(super) flag: &'static str,
    /// `-pSECRET` is the password.
    pub(super) attached: bool,
    /// `-p SECRET` is the password (for mysql it is not: a bare `-p` prompts, and the next word is
    /// the database).
    pub(super) separate: bool,
}

impl PasswordFlag {
    pub(super) fn is_client(&self, name: &str) -> bool {
        self.clients.iter().any(|c| match c.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == *c,
        })
    }
}

/// The short password options of the clients probegate knows, from each client's manual.
pub(super) const PASSWORD_FLAGS: &[PasswordFlag] = &[
    // MySQL "Command Options for Connecting to the Server": `--password[=password], -p[password]`,
    // the value only attached.
    PasswordFlag {
        clients: &[
            "mysql",
            "mysqladmin",
            "mariadb",
            "mariadb-admin",
            "mysqlsh",
            "mysqlcheck",
            "mysqldump",
            "mariadb-dump",
            "mariadb-check",
            "mysqlshow",
        ],
        flag: "-p",
        attached: true,
        separate: false,
    },
    // mongosh `-p, --password`; cqlsh `-p, --password`; sshpass `-p password`; rabbitmqadmin
    // `-p PASSWORD`; cypher-shell `-p, --password`; mongostat `-p`.
    PasswordFlag {
        clients: &["mongosh", "mongo", "mongostat", "cqlsh", "sshpass", "rabbitmqadmin", "cypher-shell"],
        flag: "-p",
        attached: true,
        separate: true,
    },
    // sqlcmd and bcp (SQL Server utilities): `-P password`.
    PasswordFlag { clients: &["sqlcmd", "bcp"], flag: "-P", attached: true, separate: true },
    // OpenLDAP ldapsearch(1) and friends: `-w passwd`.
    PasswordFlag { clients: &["ldap*"], flag: "-w", attached: true, separate: true },
    // redis-cli `-a <password>` (valkey-cli, keydb-cli alike).
    PasswordFlag {
        clients: &["redis-cli", "valkey-cli", "keydb-cli"],
        flag: "-a",
        attached: true,
        separate: true,
    },
    // nodetool `-pw, --password`.
    PasswordFlag { clients: &["nodetool"], flag: "-pw", attached: false, separate: true },
];

/// A program's name as redaction matches it: its last path component (`/` or `\`), without a
/// Windows `.exe` (`C:\tools\curl.exe` is curl).
fn basename(s: &str) -> &str {
    let s = bare_word(s);
    let name = path_basename(s).rsplit('\\').next().unwrap_or(s);
    match name.len().checked_sub(4) {
        Some(at) if name.is_char_boundary(at) && name[at..].eq_ignore_ascii_case(".exe") => &name[..at],
        _ => name,
    }
}

/// A word without the shell punctuation around it that a script no parser read leaves on it:
/// `(mysqladmin`, `$(redis-cli`, `` `curl ``, `"mysql`, `ping;`, `-pX)`. A client's name or a flag
/// is then matched as a command's ([`redact_by_words`]).
fn bare_word(w: &str) -> &str {
    let mut w = w;
    loop {
        let before = w.len();
        w = w.trim_start_matches(['(', '{', '`', '"', '\'', '!', ';', '&', '|']);
        w = w.strip_prefix("$(").unwrap_or(w);
        w = w.trim_end_matches([')', '}', '`', '"', '\'', ';', '&', '|']);
        if w.len() == before {
            return w;
        }
    }
}

/// Text that holds a command but is read by no parser (a script with a syntax error, a command
/// line given as one argument, a quoted string inside a command) redacted word by word:
/// `user:password@` and `password=`-like pairs first ([`redact_secrets`], on the whole text, so a
/// quoted value with blanks goes whole), then its blank-separated words as a command's words
/// ([`redact_words`]: the credential flags of the clients it names, `KEY=VALUE` of a secret
/// name, `-u user:password`), each word's shell punctuation ([`bare_word`]) set aside. Blanks and
/// punctuation are kept as written; only what is redacted changes (`(mysqladmin -h db -p*** ping`).
pub(crate) fn redact_by_words(text: &str) -> String {
    let text = redact_secrets(text);
    let mut spans: Vec<std::ops::Range<usize>> = Vec::new();
    let mut start = None;
    for (at, c) in text.char_indices().chain(std::iter::once((text.len(), ' '))) {
        match (c.is_whitespace(), start) {
            (true, Some(s)) => {
                let word = &text[s..at];
                let bare = bare_word(word);
                // `bare` is a slice of `word`: its offset is where its first byte is.
                let from = s + (bare.as_ptr() as usize - word.as_ptr() as usize);
                spans.push(from..from + bare.len());
                start = None;
            }
            (false, None) => start = Some(at),
            _ => {}
        }
    }
    let values: Vec<String> = spans.iter().map(|r| text[r.clone()].to_string()).collect();
    let shown = redact_words(&values);
    let mut out = String::with_capacity(text.len());
    let mut done = 0;
    for ((value, range), shown) in values.iter().zip(&spans).zip(&shown) {
        if *shown != quote_word(value) {
            out.push_str(&text[done..range.start]);
            out.push_str(shown);
            done = range.end;
        }
    }
    out.push_str(&text[done..]);
    out
}

/// Re-join display words, quoting where needed and redacting secrets (`--password X`,
/// `-a X` of redis-cli, `user:pass@`, `token=...`).
pub(crate) fn join_redacted(words: &[String]) -> String {
    redact_words(words).join(" ")
}

/// The shell variables a word uses (`$P`, `${P}`, `${P:-x}`), by name.
fn variables_used(w: &str) -> Vec<&str> {
    w.match_indices('$')
        .filter_map(|(at, _)| {
            let rest = w[at + 1..].strip_prefix('{').unwrap_or(&w[at + 1..]);
            let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
            let name = &rest[..end];
            name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_').then_some(name)
        })
        .collect()
}

/// Each word of a command for display, quoted where needed ([`quote_word`]), secrets redacted: one
/// entry per word of `words`. A shell variable's value is redacted where the script sets it when
/// the variable reaches a place that is redacted (`P=pw; redis-cli -a $P`: `P=***`), directly or
/// through other variables (`A=pw; B=$A; redis-cli -a $B`); other variables keep their values
/// (`h=db; pg_isready -h $h` shows the host the finding is about).
pub(crate) fn redact_words(words: &[String]) -> Vec<String> {
    let first = redact_words_with(words, &std::collections::BTreeSet::new());
    let mut secret: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
    for (w, shown) in words.iter().zip(&first) {
        if *shown != quote_word(w) {
            secret.extend(variables_used(w));
        }
    }
    loop {
        let before = secret.len();
        for w in words {
            if let Some((n, v)) = w.split_once('=')
                && secret.contains(n)
            {
                secret.extend(variables_used(v));
            }
        }
        if secret.len() == before {
            break;
        }
    }
    if secret.is_empty() { first } else { redact_words_with(words, &secret) }
}

/// [`redact_words`] with `secret_vars` the variables whose assignments are redacted.
fn redact_words_with(words: &[String], secret_vars: &std::collections::BTreeSet<&str>) -> Vec<String> {
    let redis_like = words.iter().any(|w| matches!(basename(w), "redis-cli" | "valkey-cli" | "keydb-cli"));
    // Commands that write a protocol's lines themselves (`printf 'AUTH pw\r\nPING\r\n' | nc`).
    let speaks_protocol = redis_like
        || words.iter().any(|w| {
            matches!(basename(w), "nc" | "ncat" | "netcat" | "socat" | "telnet" | "printf" | "echo")
        });
    // The short password flags of the clients in the command (`-P` of sqlcmd, `-w` of ldapsearch).
    let password_flags: Vec<&PasswordFlag> =
        PASSWORD_FLAGS.iter().filter(|f| words.iter().any(|w| f.is_client(basename(w)))).collect();
    let curl_like = words.iter().any(|w| basename(w) == "curl");
    // httpie (`http`, `https`) and xh: `-a USER:PASSWORD`.
    let httpie_like = words.iter().any(|w| matches!(basename(w), "http" | "https" | "xh"));
    // Arguments of a format that writes an AUTH line (`printf 'AUTH %s\r\n' PASSWORD`), up to
    // the end of that command.
    let mut format_secrets = false;
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    let mut prev: &str = "";
    for w in words {
        // The command line after cmd's `/c` or `/k`, or a PowerShell `-Command`, is a command of
        // its own: its words are redacted as a command's (`cmd /c 'curl.exe -u admin:*** ...'`).
        if w.contains(char::is_whitespace)
            && ["/c", "/k", "-command", "-c"].iter().any(|f| prev.eq_ignore_ascii_case(f))
        {
            // Pairs first, on the whole text (`Authorization='Bearer X'` spans two words).
            let whole = redact_secrets(w);
            out.push(match shell_words::split(&whole) {
                Ok(inner) => format!("'{}'", join_redacted(&inner).replace('\'', "'\\''")),
                // Not split by sh's rules: word by word, as written.
                Err(_) => format!("'{}'", redact_by_words(&whole).replace('\'', "'\\''")),
            });
            prev = w.as_str();
            continue;
        }
        let mut r = redact_secrets(w);
        // A whole word `--password=x` or `PGPASSWORD=x` (a script's text is left to the
        // pair-by-pair redaction above).
        let pair =
            w.split_once('=').filter(|(n, _)| !w.contains(char::is_whitespace) || n.ends_with("header"));
        if let Some((n, v)) = pair
            && is_plain_name(n)
        {
            if is_secret_name(n) {
                r = format!("{n}=***");
            } else if matches!(n, "--user" | "--proxy-user" | "-u") && v.contains(':') {
                r = format!("{n}={}:***", v.split(':').next().unwrap_or(""));
            } else if let Some(h) = redact_header(v).filter(|_| n.ends_with("header")) {
                r = format!("{n}={h}");
            } else if let Some((hn, _)) =
                v.split_once(':').filter(|(hn, _)| hn.eq_ignore_ascii_case("authorization"))
            {
                r = format!("{n}={hn}:***");
            } else if !w.contains(char::is_whitespace) && secret_vars.contains(n) {
                // A shell variable set to a value and later given where a secret goes (`P=pw;
                // redis-cli -a $P`): whatever its name, its value is the secret (break-it pass).
                // A `;` the word ends with is the script's, kept.
                let end = if v.ends_with(';') { ";" } else { "" };
                r = format!("{n}=***{end}");
            }
        }
        if speaks_protocol {
            r = redact_auth_lines(&r);
        }
        // The end of a command (the script's words are split but not parsed here).
        let separator = matches!(w.as_str(), "|" | "||" | "&&" | ";" | "&");
        if separator {
            format_secrets = false;
        }
        let prev_secret = !w.starts_with('-')
            && ((prev.starts_with('-') && !prev.contains('=') && is_secret_name(prev))
                || prev == "-pw"
                || prev == "<<<"
                || (speaks_protocol && prev.eq_ignore_ascii_case("auth"))
                || password_flags.iter().any(|f| f.separate && prev == f.flag)
                || (curl_like && matches!(prev, "-b" | "--cookie"))
                || (format_secrets && !separator));
        if speaks_protocol && w.to_ascii_lowercase().contains("auth %s") {
            format_secrets = true;
        }
        let attached = password_flags
            .iter()
            .find(|f| f.attached && w.len() > f.flag.len() && w.starts_with(f.flag) && !w.starts_with("--"));
        if prev_secret {
            r = "***".to_string();
        } else if let Some(f) = attached {
            r = format!("{}***", f.flag);
        } else if w.starts_with("<<<") && w.len() > 3 {
            // A here-string glued to its operator: the client's stdin (`--askpass <<<PASSWORD`).
            r = "<<<***".to_string();
        } else if curl_like && matches!(prev, "-E" | "--cert") && w.contains(':') {
            // `--cert FILE:PASSPHRASE`.
            r = format!("{}:***", w.split(':').next().unwrap_or(""));
        } else if curl_like
            && let Some(flags) = w.strip_prefix('-').filter(|f| !f.starts_with('-'))
            && let Some(at) =
                flags.find('u').filter(|&at| at > 0 && flags[..at].chars().all(|c| c.is_ascii_alphabetic()))
            && flags[at + 1..].contains(':')
        {
            // Short flags run together, the last taking the credentials: `-sfuadmin:PASSWORD`.
            let cred = &flags[at + 1..];
            r = format!("-{}u{}:***", &flags[..at], cred.split(':').next().unwrap_or(""));
        } else if (matches!(prev, "-u" | "--user" | "-U" | "--proxy-user")
            || (httpie_like && matches!(prev, "-a" | "--auth"))
            // Short flags run together, the last taking the credentials as the next word: `-fsu
            // admin:PASSWORD`.
            || (curl_like
                && prev.len() > 2
                && prev.ends_with('u')
                && prev.strip_prefix('-').is_some_and(|f| f.chars().all(|c| c.is_ascii_alphabetic())))
            || prev == "digest")
            && w.contains(':')
            && !w.contains("://")
        {
            let user = w.split(':').next().unwrap_or("");
            r = format!("{user}:***");
        } else if matches!(prev, "-H" | "--header") {
            if let Some(h) = redact_header(w) {
                r = h;
            }
        } else if let Some(h) = w.strip_prefix("-H").filter(|h| !h.is_empty()).and_then(redact_header) {
            r = format!("-H{h}");
        } else if let Some(cred) = w.strip_prefix("-u").filter(|c| c.contains(':')) {
            r = format!("-u{}:***", cred.split(':').next().unwrap_or(""));
        } else if httpie_like && !w.contains("://") && !w.starts_with('-') && w.contains(':') {
            // httpie request items: `Authorization:Bearer X` is a header.
            if let Some(h) = redact_header(w) {
                r = h;
            }
        }
        if w.contains(char::is_whitespace) {
            // A word with blanks is a string no parser split (`["mysqladmin -h db -pX ping"]`,
            // a script's unclosed quote): redacted word by word (its words have no blanks, so
            // this goes one level deep).
            r = redact_by_words(&r);
        }
        r = redact_bare_userinfo(&r);
        out.push(quote_word(&r));
        prev = w.as_str();
    }
    out
}

/// Quote a word for display when it contains whitespace or quotes (or is empty).
pub(super) fn quote_word(w: &str) -> String {
    let substitution =
        (w.starts_with("$(") && w.ends_with(')')) || (w.len() > 1 && w.starts_with('`') && w.ends_with('`'));
    if w.is_empty() {
        "''".to_string()
    } else if !substitution && w.chars().any(|c| c.is_whitespace() || c == '\'' || c == '"') {
        format!("'{}'", w.replace('\'', "'\\''"))
    } else {
        w.to_string()
    }
}

/// An exec command for display, secrets redacted: the text of a `sh -c` script is split into
/// its words and redacted like any other command (`sh -c 'redis-cli -a *** ping'`); other
/// arguments as in [`join_redacted`].
pub(crate) fn redact_command(argv: &[String], max_chars: usize) -> String {
    let mut out = Vec::new();
    let mut run: Vec<String> = Vec::new();
    for (k, a) in argv.iter().enumerate() {
        let after_c = k > 0 && {
            let p = &argv[k - 1];
            p.starts_with('-') && !p.starts_with("--") && p.ends_with('c')
        };
        if after_c {
            if !run.is_empty() {
                out.push(join_redacted(&run));
                run.clear();
            }
            // Messages show the start of a script: its first `2 * max_chars` characters are
            // enough (the whole text of a long script costs more to split than the rest of the
            // evaluation).
            // A cut inside quotes is closed with the quote it needs (the last word is cut
            // anyway); failing that the whole text is split, and a script that cannot be split
            // at all is redacted word by word, as written ([`redact_by_words`], on the head cut
            // after its last whole word).
            let head: String = a.chars().take(2 * max_chars).collect();
            let words = shell_words::split(&head)
                .or_else(|_| shell_words::split(&format!("{head}\"")))
                .or_else(|_| shell_words::split(&format!("{head}'")))
                .or_else(|_| shell_words::split(a));
            out.push(match words {
                Ok(words) => {
                    // Only as many words as can be shown (redaction reads them in order, so a
                    // cut after the shown part changes nothing before it).
                    let mut length = 0;
                    let shown = words.iter().take_while(|w| {
                        let keep = length <= max_chars;
                        length += w.len() + 1;
                        keep
                    });
                    format!("'{}'", join_redacted(&shown.cloned().collect::<Vec<_>>()))
                }
                Err(_) => {
                    let whole = head.len() == a.len();
                    let cut = if whole {
                        &head[..]
                    } else {
                        head.rsplit_once(char::is_whitespace).map_or("", |(h, _)| h)
                    };
                    format!("'{}{}'", redact_by_words(cut), if whole { "" } else { " …" })
                }
            });
            continue;
        }
        run.push(a.clone());
    }
    if !run.is_empty() {
        out.push(join_redacted(&run));
    }
    out.join(" ")
}

/// The words of a script as the display reads them, each with its byte range in `text`: blanks
/// separate words; a run of `;`, `&`, `|`, `<`, `>`, `(`, `)` or a newline is a word of its own;
/// single quotes, double quotes (`\` escaping inside) and a backslash outside quotes quote as in
/// sh and are not part of the word's value. Not a shell parser: only for showing a script with its
/// secrets replaced in place ([`redact_as_written`]).
fn script_words(text: &str) -> Vec<(String, std::ops::Range<usize>)> {
    let is_op = |c: char| matches!(c, ';' | '&' | '|' | '<' | '>' | '(' | ')' | '\n');
    let mut words = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some(&(start, c)) = chars.peek() {
        if c.is_whitespace() && c != '\n' {
            chars.next();
            continue;
        }
        let mut value = String::new();
        let mut end = start;
        if is_op(c) {
            while let Some(&(at, c)) = chars.peek().filter(|(_, c)| is_op(*c)) {
                value.push(c);
                end = at + c.len_utf8();
                chars.next();
            }
            words.push((value, start..end));
            continue;
        }
        let mut quote: Option<char> = None;
        while let Some(&(at, c)) = chars.peek() {
            match quote {
                None if c.is_whitespace() || is_op(c) => break,
                None if c == '\'' || c == '"' => quote = Some(c),
                None if c == '\\' => {
                    chars.next();
                    end = at + 1;
                    if let Some(&(at, c)) = chars.peek() {
                        value.push(c);
                        end = at + c.len_utf8();
                        chars.next();
                    }
                    continue;
                }
                Some(q) if c == q => quote = None,
                Some('"') if c == '\\' => {
                    chars.next();
                    end = at + 1;
                    if let Some(&(at, c)) = chars.peek() {
                        if !matches!(c, '"' | '\\' | '$' | '`') {
                            value.push('\\');
                        }
                        value.push(c);
                        end = at + c.len_utf8();
                        chars.next();
                    }
                    continue;
                }
                _ => value.push(c),
            }
            end = at + c.len_utf8();
            chars.next();
        }
        words.push((value, start..end));
    }
    words
}

/// A script's text as written, with the secrets [`redact_words`] finds in its words replaced in
/// place (the word quoted anew), and `password=...`-like pairs and URL user info first
/// ([`redact_secrets`] on the whole text: a quoted value may hold blanks).
fn redact_script_as_written(text: &str) -> String {
    let text = redact_secrets(text);
    let words = script_words(&text);
    let values: Vec<String> = words.iter().map(|(v, _)| v.clone()).collect();
    let shown = redact_words(&values);
    let mut out = String::with_capacity(text.len());
    let mut done = 0;
    for ((value, range), shown) in words.iter().zip(&shown) {
        if *shown != quote_word(value) {
            out.push_str(&text[done..range.start]);
            out.push_str(shown);
            done = range.end;
        }
    }
    out.push_str(&text[done..]);
    out
}

/// An exec command for `explain`: as written (its arguments joined with shell quoting, a script
/// given to `-c`, cmd's `/c`/`/k` or PowerShell's `-Command` as typed, its `;`, quoting and
/// variables kept), with only the secrets the redaction finds replaced by `***` (`sh -c 'h=db;
/// pg_isready -h $h'` stays as it is; `sh -c 'P=***; redis-cli -a $P ping'`).
pub(crate) fn redact_as_written(argv: &[String]) -> String {
    let shown = redact_words(argv);
    let mut out = Vec::with_capacity(argv.len());
    for (k, (a, d)) in argv.iter().zip(&shown).enumerate() {
        let prev = if k > 0 { argv[k - 1].as_str() } else { "" };
        let script_flag = (prev.starts_with('-') && !prev.starts_with("--") && prev.ends_with('c'))
            || ["/c", "/k", "-command"].iter().any(|f| prev.eq_ignore_ascii_case(f));
        if script_flag && a.contains(char::is_whitespace) {
            out.push(shell_words::quote(&redact_script_as_written(a)).into_owned());
        } else if *d == quote_word(a) {
            out.push(shell_words::quote(a).into_owned());
        } else {
            out.push(d.clone());
        }
    }
    out.join(" ")
}

/// Scripts that give `secret` to a client through each spelling of a credential, for the
/// redaction property tests (the engine's here, the server's and the CLI's in tests/redaction.rs):
/// for every client of [`PASSWORD_FLAGS`], its short option attached (`-PSECRET`) and separate
/// (`-P SECRET`) as the row allows, `--password=SECRET`, `--password SECRET`, URL user info,
/// query and fragment parameters, and a Redis `AUTH` line; libpq conninfo `password=`; and a PowerShell `Authorization`
/// header. Every script reaches `db.svc`, so that it is denied (and shown).
#[doc(hidden)]
pub fn credential_spellings(secret: &str) -> Vec<String> {
    let mut out = Vec::new();
    for row in PASSWORD_FLAGS {
        for client in row.clients {
            let client = client.replace('*', "search");
            if row.attached {
                out.push(format!("{client} -h db.svc {}{secret} ping", row.flag));
            }
            if row.separate {
                out.push(format!("{client} -h db.svc {} {secret} ping", row.flag));
            }
            out.push(format!("{client} -h db.svc --password={secret} ping"));
            out.push(format!("{client} -h db.svc --password {secret} ping"));
            out.push(format!("{client} 'mongodb://u:{secret}@db.svc:27017/x' ping"));
            out.push(format!("{client} 'http://db.svc/x?password={secret}&a=1#token={secret}'"));
            out.push(format!("printf 'AUTH {secret}\\r\\nPING\\r\\n' | {client} db.svc 6379"));
        }
    }
    out.push(format!("curl -fsu admin:{secret} http://db.svc/health"));
    out.push(format!("redis-cli -h db.svc -a {secret} ping"));
    out.push(format!("mysqladmin -h db.svc -uroot -p{secret} ping"));
    // libpq `key=value` conninfo strings (PostgreSQL docs, 34.1.1.1: spaces around `=` allowed).
    out.push(format!("psql 'host=db.svc port=5432 password={secret} dbname=x' -c 'select 1'"));
    out.push(format!("psql 'dbname=x password={secret} host=db.svc'"));
    out.push(format!("pg_isready -d \"host=db.svc password={secret}\""));
    out.push(format!("psql \"host=db.svc password = {secret}\" -c 'select 1'"));
    // Through a script variable (break-it pass: the liveness-matches-readiness warning quoted it).
    out.push(format!("P={secret}; redis-cli -h db.svc -a $P ping"));
    out.push(format!("T='{secret}'; curl -sf -H \"Authorization: Bearer $T\" http://db.svc/health"));
    out.push(format!(
        "powershell -Command \"Invoke-WebRequest -Headers @{{Authorization='Bearer {secret}'}} -Uri http://db.svc/health\""
    ));
    // cmd's command line (break-it pass: shown whole in the liveness-matches-readiness warning).
    out.push(format!("cmd /c \"curl.exe -u admin:{secret} http://db.svc/health\""));
    out.push(format!("cmd /S /C \"mysqladmin ping -h db.svc -p{secret}\""));
    // Through two variables, and a variable quoted.
    out.push(format!("A={secret}; B=$A; redis-cli -h db.svc -a \"$B\" ping"));
    out
}

#[cfg(test)]
mod tests;
