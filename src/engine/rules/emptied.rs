//! A probe's `$(NAME)` of a `valueFrom` variable, which the kubelet expands to the empty string.

use super::super::exec;
use super::{Coupling, RuleSet, Target, analyze_exec_with, exec_env};

/// A liveness command whose `$(NAME)` of a `valueFrom` variable the kubelet expands to the empty
/// string (its prober expands a probe's command from the values written in `env` only:
/// `ExpandContainerCommandOnlyStatic`, `pkg/kubelet/prober/prober.go`; docs/scripts.md), where
/// the command with the variable's value would reach a dependency: `pg_isready -h $(DB_HOST)` runs
/// `pg_isready -h ''`, the client's local default, which is not the check its author meant. A
/// warning saying what the kubelet runs and what to do, never a denial; none where the image may
/// be the server the client checks by default (a `postgres` image's own `pg_isready`).
pub(super) fn kubelet_emptied(
    rules: &RuleSet,
    t: &Target<'_>,
    command: &[String],
    emptied: &[String],
) -> Option<(String, Coupling)> {
    // Analysed again only when the kubelet emptied a reference (rare): the object's budget pays.
    if emptied.is_empty() {
        return None;
    }
    let meant = analyze_exec_with(rules, t, command, t.budget, false, false).dependency?;
    // The variable the dependency's host came from, when the target names it.
    let name = emptied.iter().find(|n| meant.target.contains(n.as_str())).or(emptied.first())?;
    let servers = local_servers(&meant.program);
    let image = t.container.image.as_deref().unwrap_or("");
    if image_may_serve(servers, image) {
        return None;
    }
    // A database or cache client given an empty host uses its local default (libpq's socket,
    // redis-cli's 127.0.0.1, ...); another client (`curl http://:8080/`) has no host at all.
    let what = if servers.is_empty() { "it gets no host" } else { "it asks a local server, likely absent" };
    let env = exec_env(t.container);
    let runs = exec::redact_as_written(&exec::expand_kubelet_argv(command, &env, None));
    let runs = super::super::cut_between_words(&runs, 48);
    let (why, fix) = why_empty(&env, name);
    let fix = if fix.starts_with("use") { format!("{fix} in") } else { format!("{fix} and check it in") };
    Some((
        format!("livenessProbe runs `{runs}`: a probe's $({name}) {why}, so {what}; {fix} readinessProbe"),
        Coupling::Uncertain,
    ))
}

/// Why the kubelet emptied a probe's `$(name)`, and what to write instead: a `valueFrom` variable
/// is empty in the probe's command only (the shell's `$NAME` has the value); one with neither
/// `value` nor `valueFrom` is empty everywhere.
fn why_empty(env: &exec::ExecEnv, name: &str) -> (&'static str, String) {
    if env.probe_no_value.contains(name) {
        ("has no value (neither value nor valueFrom)", format!("give {name} a value"))
    } else {
        ("from valueFrom is empty", format!("use ${name} in sh -c"))
    }
}

/// A liveness command whose `$(NAME)` of a `valueFrom` variable the kubelet emptied, so that the
/// next word took its place: `redis-cli -h $(POD_IP) -p 6379 ping` in `sh -c` runs
/// `redis-cli -h -p 6379 ping`, whose host is `-p`, and `redis-cli -h $(DB_HOST) ping` runs
/// `redis-cli -h ping` (`dependency` is what the analysis found on the expanded command, its
/// target a flag or the word after the reference). No dependency is reached: the probe always fails
/// (no host is named `-p`). A warning saying what runs and what to write (the shell's `$NAME`),
/// never a denial as a dependency (verdict break-it pass on a00d258: "reaches -p (cache)"). So too
/// where the emptied reference began a host name (`$(POD_NAME).redis-headless.svc`): the host left,
/// `.redis-headless.svc`, resolves nowhere ([`first_label_emptied`]).
pub(super) fn shifted_by_emptied(
    t: &Target<'_>,
    command: &[String],
    emptied: &[String],
    dependency: &exec::Dependency,
) -> Option<(String, Coupling)> {
    let shifted = |name: &String| {
        dependency.target.starts_with('-')
            || follows(command, name, &dependency.target)
            || first_label_emptied(command, name, &dependency.target)
    };
    let name = emptied.iter().find(|n| shifted(n))?;
    let env = exec_env(t.container);
    let runs = exec::redact_as_written(&exec::expand_kubelet_argv(command, &env, None));
    let runs = super::super::cut_between_words(&runs, 48);
    // A URL whose host lost its first label is shown by that host (`.pg.data.svc`).
    let shown = if first_label_emptied(command, name, &dependency.target) {
        host_part(&dependency.target)
    } else {
        &dependency.target
    };
    let flag = super::super::cut_between_words(shown, 16);
    let (why, fix) = why_empty(&env, name);
    Some((
        format!(
            "livenessProbe runs `{runs}`: a probe's $({name}) {why}, so `{flag}` is taken as the host and the \
             probe always fails; {fix}"
        ),
        Coupling::Uncertain,
    ))
}

/// A liveness command that is one `curl` of one `http(s)://` URL whose host is exactly a
/// `$(NAME)` the kubelet emptied (`curl -sf http://$(POD_IP):8080/healthz`, alone or as the whole
/// `sh -c` script): curl is given `http://:8080/healthz`, which it refuses before connecting
/// (curl 7.88.1: exit 3, "URL using bad/illegal format or missing URL", whatever runs on the
/// port), so the probe fails every time. The analysis finds no dependency there (the author meant
/// this Pod); a warning showing the URL curl gets (redacted) and what to write, never a denial. Only that clear
/// shape: a script with another command, redirection or URL (`|| true`, a second URL whose
/// transfer decides curl's status) is left alone, and so is `http://$(POD_IP)/healthz`, which
/// curl reads as `http:///healthz`, the host `healthz` (curl 7.88.1 looks it up: exit 6 here).
pub(super) fn url_host_emptied(
    t: &Target<'_>,
    command: &[String],
    emptied: &[String],
) -> Option<(String, Coupling)> {
    let script = match command {
        [program, rest @ ..] if basename(program) == "curl" => rest.join(" "),
        [shell, flag, script, ..]
            if matches!(basename(shell), "sh" | "bash" | "dash" | "ash")
                && matches!(flag.as_str(), "-c" | "-ec" | "-ce") =>
        {
            script.trim().strip_prefix("curl ")?.to_string()
        }
        _ => return None,
    };
    let urls: Vec<&str> = script.split_whitespace().filter(|w| w.contains("://")).collect();
    let [url] = urls.as_slice() else {
        return None;
    };
    let url = url.trim_matches(['"', '\'']);
    let (scheme, after) = url.split_once("://")?;
    if !(scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")) {
        return None;
    }
    let name = emptied.iter().find(|name| {
        let reference = format!("$({name})");
        !script.replace(&reference, "").contains([';', '&', '|', '<', '>', '(', ')', '`', '\n'])
            && after
                .strip_prefix(reference.as_str())
                .is_some_and(|tail| tail.is_empty() || tail.starts_with([':', '?', '#']))
    })?;
    let env = exec_env(t.container);
    let runs = exec::redact_text(&url.replacen(&format!("$({name})"), "", 1));
    let runs = super::super::cut_between_words(&runs, 48);
    let (why, fix) = why_empty(&env, name);
    Some((
        format!(
            "livenessProbe's curl gets `{runs}`: a probe's $({name}) {why}, so no host: curl exits 3 every \
             time; {fix}"
        ),
        Coupling::Uncertain,
    ))
}

/// The last part of a program's path (`/usr/bin/curl` is `curl`).
fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// Whether the word right after the kubelet reference `$(NAME)` in `command` (its words split at
/// blanks, quotes dropped) is `target` or its host (`ping` of `redis-cli -h $(DB_HOST) ping`,
/// which `sh -c` runs as `redis-cli -h ping`: `ping` is taken as the host).
fn follows(command: &[String], name: &str, target: &str) -> bool {
    let reference = format!("$({name})");
    let joined = command.join(" ");
    let words: Vec<&str> = joined.split_whitespace().collect();
    let host = target.rsplit_once(':').map_or(target, |(h, _)| h);
    words.windows(2).any(|w| {
        w[0] == reference && {
            let next = w[1].trim_matches(['"', '\'']);
            !next.is_empty() && (next == target || next == host)
        }
    })
}

/// Whether the kubelet's emptying of `$(NAME)` left `target` a host name whose first label is
/// empty: `redis-cli -h $(POD_NAME).redis-headless.svc ping` runs `redis-cli -h .redis-headless.svc
/// ping` (s26 fresh user: denied as reaching `.redis-headless.svc`). No resolver answers a name
/// with an empty label (glibc: `getent hosts .redis-headless.svc` exits 2, not found), so the
/// probe fails every time, whatever the dependency does.
/// So too a URL's host (`curl http://$(POD_NAME).pg.data.svc:8008/liveness` gets
/// `http://.pg.data.svc:8008/liveness`: curl 7.88.1 "Could not resolve host: .pg.data.svc", exit
/// 6; `redis-cli -u redis://$(POD_NAME).cache.svc:6379`), read by [`host_part`].
fn first_label_emptied(command: &[String], name: &str, target: &str) -> bool {
    let reference = format!("$({name}).");
    host_part(target).starts_with('.') && command.iter().any(|w| w.contains(&reference))
}

/// The host of a `scheme://[user@]host[:port][/...]` target, else the target itself.
fn host_part(target: &str) -> &str {
    let Some((_, rest)) = target.split_once("://") else { return target };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(v6),
        None => authority.split(':').next().unwrap_or(authority),
    }
}

/// The server names of the images that serve what `program` checks when given no host (its local
/// default); empty for a client without such a default.
fn local_servers(program: &str) -> &'static [&'static str] {
    match program {
        "pg_isready" | "psql" => &["postgres", "postgis", "timescale", "spilo", "patroni"],
        "redis-cli" | "valkey-cli" | "keydb-cli" => &["redis", "valkey", "keydb"],
        "mysql" | "mysqladmin" | "mariadb" | "mariadb-admin" => &["mysql", "mariadb", "percona"],
        "mongosh" | "mongo" => &["mongo"],
        _ => &[],
    }
}

/// Whether a container's `image` may be one of `servers` (see [`local_servers`]): the image's name
/// (its last path part, tag and digest dropped) holds a server's name. A guess in the direction of
/// no finding: `pg_isready -h ''` in a `postgres` image checks that server, which a liveness probe
/// may well mean.
fn image_may_serve(servers: &[&str], image: &str) -> bool {
    let name = image.rsplit('/').next().unwrap_or(image);
    let name = name.split(['@', ':']).next().unwrap_or(name).to_ascii_lowercase();
    servers.iter().any(|s| name.contains(s))
}

#[cfg(test)]
mod tests {
    use super::{image_may_serve, local_servers};

    #[test]
    fn the_image_may_serve_what_a_client_checks_by_default() {
        for (program, image) in [
            ("pg_isready", "postgres:16"),
            ("psql", "docker.io/bitnami/postgresql@sha256:abc"),
            ("redis-cli", "registry:5000/cache/redis:7"),
            ("valkey-cli", "valkey/valkey:8"),
            ("mysqladmin", "mariadb:11"),
            ("mongosh", "mongo:7"),
        ] {
            assert!(image_may_serve(local_servers(program), image), "{program} {image}");
        }
        for (program, image) in [
            ("pg_isready", "shop/api:1"),
            ("pg_isready", "prometheuscommunity/exporter:1"),
            ("redis-cli", "postgres:16"),
            ("curl", "postgres:16"),
        ] {
            assert!(!image_may_serve(local_servers(program), image), "{program} {image}");
        }
        assert!(local_servers("curl").is_empty() && !local_servers("mongo").is_empty());
    }
}
