//! .NET network classes called from a PowerShell script (`System.Net.Sockets.TcpClient`,
//! `System.Net.WebClient`, `System.Net.Http.HttpClient`): the host and port or URL each one is
//! given, found in the script's text. [`super`] resolves those arguments and matches them like the
//! web and TCP cmdlets' targets.

/// `host` and `port` of each `System.Net.Sockets.TcpClient` the script connects: `New-Object
/// [System.]Net.Sockets.TcpClient(HOST, PORT)`, `New-Object ... -ArgumentList HOST, PORT`,
/// `[...TcpClient]::new(HOST, PORT)`, and `.Connect(HOST, PORT)` / `.ConnectAsync(HOST, PORT)`.
pub(super) fn tcp_client_targets(script: &str) -> Vec<(String, String)> {
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
pub(super) fn dotnet_web_targets(script: &str) -> Vec<(&'static str, String)> {
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
