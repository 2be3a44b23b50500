//! `exec-probe-replaceable`: an exec probe that only fetches a URL of the pod itself with `curl` or
//! `wget`, which an `httpGet` probe does without a process per check.

use k8s_openapi::api::core::v1::Container;

use super::super::exec;
use super::super::hosts;
use super::super::rules::Target;
use super::{probes, shell_script, simple_commands};

/// The one command of a `sh -c` script whose exit status is the script's, or is non-zero exactly
/// when it is: the script is one simple command, maybe followed by `|| exit N` (N from 1 to 255),
/// `|| exit` (the command's own status) or `|| false` (bash and dash: `curl -sf URL || exit 1`
/// exits 1 when curl fails, 0 when it succeeds, as `curl -sf URL` fails and succeeds). A probe
/// fails on any non-zero status (Kubernetes docs, exec probes), so these keep its meaning; `||
/// exit 0` and `|| true` do not, nor `!`, `&`, a pipe, a list or a subshell: `None`. Checked on
/// the text, quotes honoured: outside them, none of `;&|!(){}` `` ` `` or `$(` and no newline
/// may remain.
fn status_keeping_command(script: &str) -> Option<&str> {
    let text = script.trim().trim_end_matches(';').trim_end();
    let body = match text.rsplit_once("||") {
        Some((head, fallback)) => {
            let words: Vec<&str> = fallback.split_whitespace().collect();
            let keeps = match words.as_slice() {
                ["false"] | ["exit"] => true,
                ["exit", n] => n.parse::<u16>().is_ok_and(|n| (1..=255).contains(&n)),
                _ => false,
            };
            if !keeps {
                return None;
            }
            head.trim_end()
        }
        None => text,
    };
    // (Read in order up to the first character that ends the question: most scripts have one
    // early, a newline or `$(`.)
    let mut chars = QuoteStates::new(body);
    for (i, c, single, double) in chars.by_ref() {
        match c {
            '$' if !single && body[i + 1..].starts_with('(') => return None,
            '`' if !single => return None,
            ';' | '&' | '|' | '!' | '(' | ')' | '{' | '}' | '\n' if !single && !double => return None,
            _ => {}
        }
    }
    (!chars.open() && !body.is_empty()).then_some(body)
}

/// The characters of a text that are not quoting syntax, each with its byte offset and whether it
/// stands inside single and inside double quotes, as sh reads them (POSIX Shell Command Language
/// 2.2: a backslash outside single quotes escapes the next character, and neither is listed; a
/// quote character that opens or closes quotes is not listed), one at a time; once all are read,
/// [`QuoteStates::open`] says whether a quote is left open.
struct QuoteStates<'s> {
    chars: std::str::CharIndices<'s>,
    single: bool,
    double: bool,
    escaped: bool,
}

impl<'s> QuoteStates<'s> {
    fn new(s: &'s str) -> Self {
        QuoteStates { chars: s.char_indices(), single: false, double: false, escaped: false }
    }

    /// Whether a quote is open where the reading stopped (at the end: left open).
    fn open(&self) -> bool {
        self.single || self.double
    }
}

impl Iterator for QuoteStates<'_> {
    type Item = (usize, char, bool, bool);

    fn next(&mut self) -> Option<Self::Item> {
        for (i, c) in self.chars.by_ref() {
            if self.escaped {
                self.escaped = false;
                continue;
            }
            match c {
                '\\' if !self.single => self.escaped = true,
                '\'' if !self.double => self.single = !self.single,
                '"' if !self.single => self.double = !self.double,
                _ => return Some((i, c, self.single, self.double)),
            }
        }
        None
    }
}

/// Whether `host` (a URL's host as the split script gives it, variables as written) is `$NAME` or
/// `${NAME}` of a variable that holds this pod's IP (`fieldRef: status.podIP`, see
/// [`super::rules::exec_env`]), expanded by the shell of `script`: the script does not set the
/// variable, and it is written outside single quotes everywhere (POSIX Shell Command Language
/// 2.2.2: no expansion inside them). Without a shell nothing expands it, and the kubelet's own
/// `$(NAME)` expansion uses static `value`s only, which a `valueFrom` variable has none of.
fn pod_ip_variable(host: &str, script: Option<&str>, c: &Container) -> bool {
    let Some(name) =
        host.strip_prefix("${").and_then(|h| h.strip_suffix('}')).or_else(|| host.strip_prefix('$'))
    else {
        return false;
    };
    let Some(script) = script else { return false };
    let is_pod_ip = super::super::rules::exec_env(c).vars.get(name) == Some(&exec::EnvValue::PodIp);
    let assigned = script.contains(&format!("{name}="));
    is_pod_ip && !assigned && !single_quoted_reference(script, name)
}

/// Whether `$name` or `${name}` stands inside single quotes somewhere in `script` (a backslash
/// outside them escapes the next character; double quotes do not stop expansion).
fn single_quoted_reference(script: &str, name: &str) -> bool {
    QuoteStates::new(script).any(|(i, c, single, _)| {
        let rest = &script[i + 1..];
        c == '$' && single && rest.strip_prefix('{').unwrap_or(rest).starts_with(name)
    })
}

/// Options that keep an exec probe necessary: client certificates, credentials, Unix sockets,
/// proxies and resolve overrides (rules.md, `exec-probe-replaceable` traps).
fn needs_exec(args: &[String]) -> bool {
    args.iter().any(|a| {
        let a = a.as_str();
        let flag = a.split('=').next().unwrap_or(a);
        matches!(
            flag,
            "--unix-socket"
                | "--abstract-unix-socket"
                | "-E"
                | "--cert"
                | "--key"
                | "-u"
                | "--user"
                | "-H"
                | "--header"
                | "-x"
                | "--proxy"
                | "--resolve"
                | "--connect-to"
                | "--certificate"
                | "--private-key"
                | "--http-user"
                | "--http-password"
                | "--user-agent"
        ) || a.starts_with("-E") && a.len() > 2
    })
}

/// Whether no word of `body` (one simple command, as [`status_keeping_command`] leaves it) can
/// be `curl` or `wget` once the shell removed its quotes and expanded it: the text names neither,
/// is ASCII, and has nothing that makes a word of other text (no `$`, quote, backquote, glob,
/// `~` or `{`, and a backslash only as a line continuation after a blank, which ends a word).
/// [`local_http_only`] then needs no split of it (s26: the split of the Airflow scheduler's
/// startup script was a tenth of its evaluation; docs/benchmarks.md).
fn names_no_http_client(body: &str) -> bool {
    if !body.is_ascii() || body.contains("curl") || body.contains("wget") {
        return false;
    }
    let b = body.as_bytes();
    b.iter().enumerate().all(|(i, &c)| match c {
        b'$' | b'\'' | b'"' | b'`' | b'*' | b'?' | b'[' | b'~' | b'{' => false,
        b'\\' => b.get(i + 1) == Some(&b'\n') && i > 0 && matches!(b[i - 1], b' ' | b'\t'),
        _ => true,
    })
}

/// The one local URL the probe's commands fetch, when every command is `curl` or `wget` of a local
/// URL (loopback, or the pod's IP from its environment) with no option that needs exec. None for a
/// command over [`exec::MAX_COMMAND_BYTES`] or a script over [`exec::MAX_SCRIPT_BYTES`]: not read
/// (s26 break-it pass: a 1.5 MB script cost this rule 109 MB).
pub(super) fn local_http_only(
    argv: &[String],
    budget: &exec::AnalysisBudget,
    c: &Container,
) -> Option<(String, String)> {
    if !exec::within_command_bound(argv)
        || shell_script(argv).is_some_and(|s| s.len() > exec::MAX_SCRIPT_BYTES)
    {
        return None;
    }
    let commands = match shell_script(argv) {
        // One command whose status is the probe's: what an httpGet would do.
        Some(script) => {
            let body = status_keeping_command(script)?;
            if names_no_http_client(body) {
                return None;
            }
            let commands = exec::split_commands_in(body, budget);
            if commands.len() != 1 {
                return None;
            }
            commands
        }
        None => simple_commands(argv, budget),
    };
    let mut found = None;
    for cmd in commands.iter() {
        let (program, args) = cmd.split_first()?;
        let program = program.rsplit('/').next().unwrap_or(program);
        if !["curl", "wget"].contains(&program) || needs_exec(args) {
            return None;
        }
        let url = args.iter().find(|a| a.starts_with("http://") || a.starts_with("https://"))?;
        if !hosts::url_host(url)
            .is_some_and(|h| hosts::is_local(h) || pod_ip_variable(h, shell_script(argv), c))
        {
            return None;
        }
        found = Some((program.to_string(), url.clone()));
    }
    found
}

pub(super) fn exec_replaceable(t: &Target<'_>, liveness_denied: bool) -> Option<String> {
    for (field, probe) in probes(t.container) {
        // A denied liveness probe is to be moved or changed, not kept as an httpGet (its request
        // asks the whole cluster: `curl localhost:9200/_cluster/health`).
        if liveness_denied && field == "livenessProbe" {
            continue;
        }
        let Some(argv) = probe.and_then(|p| p.exec.as_ref()).and_then(|e| e.command.as_ref()) else {
            continue;
        };
        if let Some((program, url)) = local_http_only(argv, t.budget, t.container) {
            // httpGet asks the pod's IP: as a URL on it does, not as a loopback-only server listens.
            let how = match hosts::url_host(&url).filter(|h| hosts::is_local(h)) {
                Some(host) => format!(
                    "httpGet to the pod's IP does that with no process per check, unless the server \
                     listens only on {host}"
                ),
                None => "httpGet does that with no process per check (to the pod's IP, its default)".into(),
            };
            return Some(format!(
                "{field} only runs {program} against this pod ({}): {how}",
                exec::redact_secrets(&url)
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::names_no_http_client;
    use super::status_keeping_command as keep;

    /// The texts whose split is skipped (no word can be curl or wget), and the ones still split:
    /// every spelling the shell turns into `curl` or `wget` (quotes, a backslash inside a word, a
    /// line continuation inside a word, an expansion, a glob, `~`, braces, non-ASCII text the
    /// analysis rewrites).
    #[test]
    fn a_command_that_cannot_be_curl_or_wget_is_not_split() {
        for body in [
            "CONNECTION_CHECK_MAX_COUNT=0 AIRFLOW__LOGGING__LOGGING_LEVEL=ERROR exec /entrypoint \\\nairflow jobs check --job-type SchedulerJob --local",
            "pg_isready -h db -p 5432",
            "redis-cli ping",
            "/bin/grpc_health_probe -addr=:7000",
        ] {
            assert!(names_no_http_client(body), "{body}");
        }
        for body in [
            "curl -sf http://localhost:8080/",
            "/usr/bin/wget -q -O- http://127.0.0.1/",
            "cu''rl -sf http://localhost:8080/",
            "cu\"\"rl -sf http://localhost:8080/",
            "c\\url -sf http://localhost:8080/",
            "cu\\\nrl -sf http://localhost:8080/",
            "$C -sf http://localhost:8080/",
            "${C}rl -sf http://localhost:8080/",
            "`echo curl` -sf http://localhost:8080/",
            "/usr/bin/cur? -sf http://localhost:8080/",
            "/usr/bin/cur* -sf http://localhost:8080/",
            "/usr/bin/cur[l] -sf http://localhost:8080/",
            "~/bin/x -sf http://localhost:8080/",
            "cu{r,}l -sf http://localhost:8080/",
            "\u{ff43}url -sf http://localhost:8080/",
        ] {
            assert!(!names_no_http_client(body), "{body}");
        }
    }

    /// The fallbacks that keep a curl's status, and the text around the command read with the
    /// shell's quoting (POSIX 2.2): `;`, `&`, `|`, `$(` inside quotes are text, outside they are not.
    #[test]
    fn only_one_command_and_a_fallback_that_keeps_its_status() {
        let url = "curl -sf http://localhost:8080/";
        for tail in ["", " || exit 1", " || exit 255", " || exit", " || false", " || exit 1 ;"] {
            assert_eq!(keep(&format!("{url}{tail}")), Some(url), "{tail}");
        }
        for tail in [" || exit 0", " || exit 256", " || true", " || exit 1 2", " || :"] {
            assert_eq!(keep(&format!("{url}{tail}")), None, "{tail}");
        }
        assert_eq!(keep("|| exit 1"), None);
        assert_eq!(keep("   "), None);
        for quoted in [
            "curl -sf 'http://localhost/a;b&c|d(e)'",
            "curl -sf \"http://localhost/a;b&c|d\"",
            "curl -sf http://localhost/a\\;b",
            "curl -sf 'http://localhost/$(x)'",
            "curl -sf \"http://localhost/a\\\";b\"",
        ] {
            assert_eq!(keep(quoted), Some(quoted), "{quoted}");
        }
        for script in [
            "curl -sf \"http://$(hostname)/\"",
            "curl -sf http://`hostname`/",
            "curl -sf http://localhost/; true",
            "curl -sf 'http://localhost/",
            "curl -sf \"http://localhost/",
            "curl -sf 'http://localhost/a\\' ; b'",
            "! curl -sf http://localhost/",
            "curl -sf http://localhost/ &",
            "{ curl -sf http://localhost/; }",
            "(curl -sf http://localhost/)",
            "curl -sf http://localhost/\nexit 0",
        ] {
            assert_eq!(keep(script), None, "{script}");
        }
    }
}
