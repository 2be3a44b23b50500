//! Stage 7: redaction of credentials in everything shown (messages, warnings, notes, logs).

/// Does an option or variable name look like it carries a secret?
pub(super) fn is_secret_name(n: &str) -> bool {
    // "pass", "secret", "token", "pwd", "auth", "credential", "apikey", "api_key", "api-key",
    // "access_key", "access-key", "private", "bearer", "cookie", "session" or "signature"
    // anywhere in it, or the whole of it "key", "sig" or "pw", in any case. Compared byte by byte
    // without case (the words are ASCII), each place tried only for the words its letter
    // begins: no lowercase copy is made.
    let l = n.trim_start_matches('-').as_bytes();
    let at =
        |rest: &[u8], k: &str| rest.len() >= k.len() && rest[..k.len()].eq_ignore_ascii_case(k.as_bytes());
    let holds = (0..l.len()).any(|i| {
        let rest = &l[i..];
        let words: &[&str] = match rest[0].to_ascii_lowercase() {
            b'p' => &["pass", "pwd", "private"],
            b's' => &["secret", "session", "signature"],
            b't' => &["token"],
            b'a' => &["auth", "apikey", "api_key", "api-key", "access_key", "access-key"],
            b'c' => &["credential", "cookie"],
            b'b' => &["bearer"],
            _ => &[],
        };
        words.iter().any(|k| at(rest, k))
    });
    holds || ["key", "sig", "pw"].iter().any(|k| l.eq_ignore_ascii_case(k.as_bytes()))
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
            Some((userinfo, host)) if userinfo.contains(':') && !token_as_user(userinfo) => {
                let user = userinfo.split(':').next().unwrap_or("");
                out.push_str(user);
                out.push_str(":***@");
                out.push_str(host);
            }
            Some((userinfo, host)) if !userinfo.is_empty() => {
                // User info that is a token (`https://TOKEN@host`, `TOKEN:x-oauth-basic@`), or
                // may be one: hidden whole, as hosts are ([`crate::engine::redact_host`]).
                out.push_str("***@");
                out.push_str(host);
            }
            _ => match password_past_authority(authority, &after[end..]) {
                Some((user, resume)) => {
                    out.push_str(user);
                    out.push_str(":***@");
                    rest = &after[end + resume..];
                    continue;
                }
                None => out.push_str(authority),
            },
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    redact_kv(&out)
}

/// Whether URL user info `user:password` gives a token as its user name: GitHub's
/// `TOKEN:x-oauth-basic` ("Authenticating with a personal access token" over HTTPS), or an empty
/// password (`TOKEN:@`).
pub(crate) fn token_as_user(userinfo: &str) -> bool {
    userinfo.split_once(':').is_some_and(|(_, pw)| pw.is_empty() || pw.eq_ignore_ascii_case("x-oauth-basic"))
}

/// For a URL whose password holds a raw `/`, `?` or `#` (`http://u:pw/x@h/`): RFC 3986 ends the
/// authority there, so curl reads host `u` with the port `pw` (and fails: "URL using bad/illegal
/// format"), while a parser that looks for the last `@` reads user `u`, password `pw/x`. Either way
/// `pw/x` may be a password: for an `authority` of `user:NOT-A-PORT` (no `@`, not a bracketed IPv6
/// address, the text after its `:` not a port's digits) followed in the same word (`after`, up to a
/// blank or a quote) by an `@`, the user and the offset in `after` just past that `@`.
fn password_past_authority<'a>(authority: &'a str, after: &str) -> Option<(&'a str, usize)> {
    let (user, port) = authority.split_once(':')?;
    if authority.starts_with('[') || (!port.is_empty() && port.chars().all(|c| c.is_ascii_digit())) {
        return None;
    }
    let word = &after[..after.find([' ', '\'', '"']).unwrap_or(after.len())];
    word.find('@').map(|at| (user, at + 1))
}

/// Redact the values of `password=...`-like pairs (conninfo strings, query strings): any
/// `key=value` at a word or parameter boundary whose key looks secret ([`is_secret_name`]:
/// `password`, `token`, `access_token`, `api_key`, ...).
pub(super) fn redact_kv(s: &str) -> String {
    // Read byte by byte: every byte it looks for is ASCII, so a place it cuts at (a key's start,
    // the byte after a value) starts a character. `out` holds `s` up to `done` with the values
    // before it redacted; the text after a value is copied as written.
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut done = 0;
    let mut i = 0;
    while i < b.len() {
        let at_boundary = i == 0
            || matches!(
                b[i - 1],
                b' ' | b'\n' | b'\t' | b'?' | b'#' | b'&' | b';' | b'\'' | b'"' | b'{' | b'(' | b'`'
            );
        if at_boundary {
            let mut k = i;
            while k < b.len()
                && k - i < 64
                && (b[k].is_ascii_alphanumeric() || matches!(b[k], b'_' | b'-' | b'.'))
            {
                k += 1;
            }
            // A JSON member `"password": "value"` (a request body given to curl -d).
            if k > i
                && i > 0
                && b[i - 1] == b'"'
                && b.get(k) == Some(&b'"')
                && b.get(k + 1) == Some(&b':')
                && is_secret_name(&s[i..k])
            {
                out.push_str(&s[done..k]);
                out.push_str("\":");
                i = k + 2;
                while i < b.len() && b[i] == b' ' {
                    out.push(' ');
                    i += 1;
                }
                if b.get(i) == Some(&b'"') {
                    i += 1;
                    while i < b.len() && b[i] != b'"' {
                        i += if b[i] == b'\\' { 2 } else { 1 };
                    }
                    i = (i + 1).min(b.len());
                    out.push_str("\"***\"");
                } else {
                    while i < b.len() && !matches!(b[i], b',' | b'}' | b' ') {
                        i += 1;
                    }
                    out.push_str("***");
                }
                done = i;
                continue;
            }
            // libpq conninfo allows blanks around `=` (`password = x`).
            let eq = k + b[k..].iter().take_while(|c| **c == b' ').count();
            if k > i && b.get(eq) == Some(&b'=') && is_secret_name(&s[i..k]) {
                out.push_str(&s[done..k]);
                out.push_str("=***");
                i = eq + 1;
                while b.get(i) == Some(&b' ') {
                    i += 1;
                }
                if let Some(&q) = b.get(i).filter(|c| matches!(c, b'\'' | b'"')) {
                    // A quoted value: up to and including its closing quote.
                    i += 1;
                    while i < b.len() && b[i] != q {
                        i += 1;
                    }
                    i = (i + 1).min(b.len());
                } else if let Some(end) = substitution_end(b, i) {
                    // A command substitution (`PGPASSWORD=$(echo pw)`, `` `cat f` ``): the
                    // whole of it, blanks inside included (s16 break-it pass: only its first
                    // word was hidden).
                    i = end;
                } else {
                    while i < b.len() && !matches!(b[i], b' ' | b'\n' | b'&' | b';' | b'\'' | b'"') {
                        i += 1;
                    }
                }
                done = i;
                continue;
            }
        }
        i += 1;
    }
    out.push_str(&s[done..]);
    out
}

/// Where the command substitution starting at byte `i` of `b` (`$(...)`, nested parentheses
/// counted, or `` `...` ``) ends: the index after its closing character, or the end of the text
/// when it is unclosed. `None` when none starts there.
fn substitution_end(b: &[u8], i: usize) -> Option<usize> {
    match (b.get(i), b.get(i + 1)) {
        (Some(b'$'), Some(b'(')) => {
            let mut depth = 0usize;
            for (k, c) in b.iter().enumerate().skip(i + 1) {
                match c {
                    b'(' => depth += 1,
                    b')' if depth == 1 => return Some(k + 1),
                    b')' => depth -= 1,
                    _ => {}
                }
            }
            Some(b.len())
        }
        (Some(b'`'), _) => Some(b[i + 1..].iter().position(|c| *c == b'`').map_or(b.len(), |k| i + k + 2)),
        _ => None,
    }
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
    /// Whether `name` is one of its clients (the reference [`Self::names_a_client`] is tested
    /// against).
    #[cfg(test)]
    pub(super) fn is_client(&self, name: &str) -> bool {
        self.clients.iter().any(|c| match c.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == *c,
        })
    }

    /// Whether a name of `sorted` (sorted, as [`str`] orders) is one of its clients
    /// ([`Self::is_client`] of any): each client looked up by binary search, a prefix (`ldap*`)
    /// at the first name not below it (the names it begins are together from there), instead of
    /// every client compared with every name.
    pub(super) fn names_a_client(&self, sorted: &[&str]) -> bool {
        self.clients.iter().any(|c| match c.strip_suffix('*') {
            Some(prefix) => {
                sorted.get(sorted.partition_point(|n| *n < prefix)).is_some_and(|n| n.starts_with(prefix))
            }
            None => sorted.binary_search(c).is_ok(),
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
    // Redis `AUTH [username] password` and `HELLO 3 AUTH username password` as redis-cli's own
    // arguments (https://redis.io/docs/latest/commands/auth/, .../hello/; s23 fresh user: the
    // password after a user name was shown).
    out.push(format!("redis-cli -h db.svc AUTH {secret}"));
    out.push(format!("redis-cli -h db.svc AUTH app {secret}"));
    out.push(format!("redis-cli -h db.svc auth app {secret} && echo ok"));
    out.push(format!("redis-cli -h db.svc HELLO 3 AUTH app {secret}"));
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
    // A token as a URL's user name (s16 break-it pass: shown whole).
    out.push(format!("curl -f https://{secret}@db.svc/health"));
    out.push(format!("wget -q -O- https://{secret}:x-oauth-basic@db.svc/health"));
    // A secret pair given by a command substitution (s16 break-it pass: only its first word hidden).
    out.push(format!("PGPASSWORD=$(echo {secret}) pg_isready -h db.svc"));
    out.push(format!("PGPASSWORD=`printf %s {secret}` psql -h db.svc -c 'select 1'"));
    // Through two variables, and a variable quoted.
    out.push(format!("A={secret}; B=$A; redis-cli -h db.svc -a \"$B\" ping"));
    out
}

/// The shapes of an exec command that a break-it pass (s15) found shown with their secrets, for
/// the redaction tests (the engine's here, the server's and the CLI's in tests/redaction.rs), for
/// a `script` of [`credential_spellings`] holding `secret`: a script the parser rejects with a
/// `$(` or a backquote, or with `|`, `&&` or `>` stuck to the secret; the command as two
/// arguments, the second with blanks inside (`["mysqladmin", "-h db -pX ping"]`); the secret as
/// a positional parameter after `sh -c SCRIPT` (`$1`), plain or as a text with blanks; and each
/// argument holding the secret with a leading blank (`" -pX"`).
#[doc(hidden)]
pub fn break_it_shapes(script: &str, secret: &str) -> Vec<Vec<String>> {
    let v = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<Vec<String>>();
    let mut out = vec![v(&["sh", "-c", &format!("a=$({script}")]), v(&["sh", "-c", &format!("x=`{script}")])];
    // (`>&2`, not `>/dev/null`: a `/` would end a URL's authority before its `@`, so that the
    // password stuck to it is no longer user info, in a URL that could not be written so.)
    for stuck in ["|grep", "&&true", ">&2"] {
        let glued = script.replace(secret, &format!("{secret}{stuck}"));
        out.push(v(&["sh", "-c", &format!("{glued} ))")]));
    }
    if let Some((program, rest)) = script.split_once(' ') {
        out.push(v(&[program, rest]));
    }
    let by_parameter = script.replace(secret, "$1");
    out.push(v(&["sh", "-c", &by_parameter, "x", secret]));
    out.push(v(&["sh", "-c", &by_parameter, "x", &format!("x -p{secret} ((")]));
    if let Ok(words) = shell_words::split(script) {
        out.push(
            words.iter().map(|w| if w.contains(secret) { format!(" {w}") } else { w.clone() }).collect(),
        );
    }
    out
}

mod display;
mod shown;
pub(crate) use display::*;
pub(crate) use shown::*;

/// A URL as a dependency's target shows it: each query parameter's value, and the fragment, as
/// `***` (`http://api.svc/h?k=***&full=***`). A query value never says where a probe connects, and it
/// may hold a credential under any name or a container's env value (s26 break-it pass:
/// `curl -fs http://api.shop.svc/h?k=$MISC` showed MISC's value in the denial). Only the text after
/// `?` or `#` in a word holding `://` changes; a parameter without a value stays as written.
pub(crate) fn mask_url_query(text: &str) -> String {
    if !text.contains("://") {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find("://") {
        let end = rest[pos..].find([' ', '\'', '"']).map_or(rest.len(), |e| pos + e);
        let (url, after) = rest.split_at(end);
        let (before_fragment, fragment) = match url.split_once('#') {
            Some((b, f)) => (b, Some(f)),
            None => (url, None),
        };
        match before_fragment.split_once('?') {
            Some((base, query)) => {
                out.push_str(base);
                out.push('?');
                let masked: Vec<String> = query
                    .split('&')
                    .map(|p| match p.split_once('=') {
                        Some((k, v)) if !v.is_empty() => format!("{k}=***"),
                        _ => p.to_string(),
                    })
                    .collect();
                out.push_str(&masked.join("&"));
            }
            None => out.push_str(before_fragment),
        }
        if let Some(f) = fragment {
            out.push('#');
            if !f.is_empty() {
                out.push_str("***");
            }
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests;
