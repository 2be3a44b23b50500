//! wait-for-it (vishnubob/wait-for-it, `wait-for-it.sh`) and eficode's `wait-for`: wait until a
//! TCP `host:port` accepts a connection, then exit with the wait's status, or run a command given
//! after `--`. Their rows are in [`super::clients::http`]; what their status is, here.
//!
//! From wait-for-it.sh: the arguments are read in order, `*:*` first (`host:port`, even
//! `--host=h:p`), then `-q`, `-s`, `-h HOST`, `--host=HOST`, `-p PORT`, `--port=PORT`, `-t
//! TIMEOUT`, `--timeout=TIMEOUT`, `--` (the command follows); anything else prints "Unknown
//! argument" and the usage, exit 1. Without a command it exits with the wait's status (`timeout`
//! ends a wait past TIMEOUT with 124; `-t 0` waits for ever). With one it runs it (`exec`)
//! whatever the wait gave, unless `-s`: "strict mode, refusing to execute subprocess", exit with
//! the wait's status. eficode's wait-for (`wait-for host:port [-t timeout] [-- command args]`)
//! tries `nc -z` TIMEOUT times a second apart and runs the command only on success; otherwise
//! "Operation timed out", exit 1: always strict.

use super::clients::Hit;
use super::context::{Ctx, marker_index};
use super::script::Overrides;
use super::{Dependency, MAX_DEPTH};

/// Why the host's outage of a wait-for-it without `-s`, whose command follows, fails the probe
/// only by time (`exec::Dependency::status_unknown`): the command runs after the wait whatever
/// the wait gave, and its status is the probe's.
const NOT_STRICT: &str = "how long the wait lasts against timeoutSeconds (without -s wait-for-it runs the command after it whatever it gave)";

/// Why eficode's `wait-for -t 0` is not known to fail on an outage: its usage says "zero for no
/// timeout", but its loop (`for i in $(seq $TIMEOUT)`) then makes no attempt at all and exits 1.
const ZERO_TRIES: &str =
    "the wait-for version (`-t 0` is \"no timeout\" in its usage, but no attempt at all in its loop)";

/// What one wait's arguments (the words before `--`) say.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct WaitArgs {
    /// The `host` and `port` waited for, both non-empty (`None`: none, or the program exits 1
    /// before any wait: an unknown argument, a host that is an option).
    pub(super) target: Option<(String, String)>,
    /// `-s`/`--strict` (wait-for-it), or always (wait-for): the command runs only after a
    /// successful wait.
    pub(super) strict: bool,
    /// The timeout given, as written (`-t 1`, `--timeout=1`).
    pub(super) timeout: Option<String>,
}

/// Reads a wait's arguments as `program` (`wait-for-it` or `wait-for`) does.
pub(super) fn wait_args(program: &str, words: &[String]) -> WaitArgs {
    let it = program == "wait-for-it";
    let mut out = WaitArgs { strict: !it, ..WaitArgs::default() };
    let (mut host, mut port) = (String::new(), String::new());
    let mut k = 0;
    while let Some(w) = words.get(k) {
        let next = || words.get(k + 1).cloned().unwrap_or_default();
        if w.contains(':') {
            // (`${1//:/ }` split into words, or `cut -d : -f 1` and `-f 2`.)
            let mut parts = w.split(':');
            host = parts.next().unwrap_or_default().to_string();
            port = parts.next().unwrap_or_default().to_string();
        } else if !w.starts_with('-') && w.chars().any(|c| marker_index(c).is_some()) {
            // A value known only at run time (`wait-for-it $REDIS_QUEUE`): its `host:port`.
            host = w.clone();
            port = w.clone();
        } else if it && (w == "-s" || w == "--strict") {
            out.strict = true;
        } else if it && w == "-h" {
            host = next();
            k += 1;
        } else if it && w == "-p" {
            port = next();
            k += 1;
        } else if w == "-t" {
            out.timeout = Some(next());
            k += 1;
        } else if let Some(v) = w.strip_prefix("--timeout=") {
            out.timeout = Some(v.to_string());
        } else if let Some(v) = w.strip_prefix("--host=").filter(|_| it) {
            host = v.to_string();
        } else if let Some(v) = w.strip_prefix("--port=").filter(|_| it) {
            port = v.to_string();
        } else if !(matches!(w.as_str(), "-q" | "--quiet") || it && w == "--child") {
            // "Unknown argument" (or `--help`): the usage, and no wait.
            return WaitArgs { target: None, ..out };
        }
        k += 1;
    }
    // A host that is an option (`--host=db:5432` read as `*:*`) or a port that is a path
    // (`http://db`) is never reached: the wait fails whatever any server does.
    let reachable = !host.is_empty() && !host.starts_with('-') && !port.is_empty() && !port.contains('/');
    out.target = reachable.then_some((host, port));
    out
}

impl Ctx<'_> {
    /// The `host:port` a wait reaches, for its client row ([`super::clients::Shape::WaitFor`]).
    pub(super) fn wait_for_hits(&self, program: &str, words: &[String]) -> Vec<Hit> {
        let Some((host, port)) = wait_args(program, words).target else { return Vec::new() };
        if host == port {
            return vec![self.net_hit(&host, None, "", host.clone())];
        }
        vec![self.net_hit(&host, Some(&port), "", format!("{host}:{port}"))]
    }

    /// `args[at]` is `wait-for-it` or `wait-for` (`base`, maybe with `.sh`): the wait's
    /// dependency when its status is the probe's (no command, `-s`, wait-for, or a wait with no
    /// timeout that outlasts any probe), else the command's, or the wait's as a warning.
    pub(super) fn wait_for(
        &mut self,
        base: &str,
        args: &[String],
        at: usize,
        overrides: Overrides,
        prefix_disp: &[String],
        depth: usize,
    ) -> Option<Dependency> {
        let program = base.strip_suffix(".sh").unwrap_or(base);
        let raw_rest = &args[at + 1..];
        let rest: Vec<String> = raw_rest.iter().map(|a| self.render_lit(a)).collect();
        let dash = rest.iter().position(|a| a == "--");
        let wait = &rest[..dash.unwrap_or(rest.len())];
        let command = dash.map(|d| &raw_rest[d + 1..]).filter(|c| !c.is_empty());
        let parsed = wait_args(program, wait);
        let mut hits = self.tool_hits(program, wait, &overrides);
        let mut words = prefix_disp.to_vec();
        words.extend(args.iter().cloned());
        let zero = parsed.timeout.as_deref().is_some_and(|t| t.parse::<u64>() == Ok(0));
        if program == "wait-for" && zero {
            for h in &mut hits {
                h.status_unknown = Some(ZERO_TRIES);
            }
        }
        // wait-for-it's `-t 0` waits for ever while the host is down: past any timeoutSeconds.
        let gates = command.is_none() || parsed.strict || zero;
        if gates {
            if let Some(d) = self.first_dependency(base, hits, &words) {
                return Some(d);
            }
            let command = command.filter(|_| depth < MAX_DEPTH)?;
            return self.analyze_args(command, overrides, prefix_disp, depth + 1);
        }
        if let Some(command) = command.filter(|_| depth < MAX_DEPTH)
            && let Some(d) = self.analyze_args(command, overrides.clone(), prefix_disp, depth + 1)
        {
            return Some(d);
        }
        for h in &mut hits {
            h.status_unknown = Some(NOT_STRICT);
        }
        self.first_dependency(base, hits, &words)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    fn target(program: &str, v: &[&str]) -> Option<(String, String)> {
        wait_args(program, &s(v)).target
    }

    #[test]
    fn wait_arguments_are_read_as_the_scripts_read_them() {
        let db = Some(("db".to_string(), "5432".to_string()));
        assert_eq!(target("wait-for-it", &["db:5432", "-t", "1"]), db);
        assert_eq!(target("wait-for-it", &["-h", "db", "-p", "5432"]), db);
        assert_eq!(target("wait-for-it", &["--host=db", "--port=5432", "-q"]), db);
        assert_eq!(target("wait-for", &["db:5432", "--timeout=3"]), db);
        // wait-for has no -h/-p: "Unknown argument", usage, no wait.
        assert_eq!(target("wait-for", &["-h", "db", "-p", "5432"]), None);
        assert_eq!(target("wait-for-it", &["db:5432", "--bogus"]), None);
        // `*:*` comes first: `--host=db:5432` is the host `--host=db`, never reached.
        assert_eq!(target("wait-for-it", &["--host=db:5432"]), None);
        assert_eq!(target("wait-for-it", &["http://db/health"]), None);
        assert_eq!(target("wait-for-it", &["db"]), None);
        assert!(wait_args("wait-for-it", &s(&["-s", "db:1"])).strict);
        assert!(!wait_args("wait-for-it", &s(&["db:1"])).strict);
        assert!(wait_args("wait-for", &s(&["db:1"])).strict);
        assert_eq!(wait_args("wait-for-it", &s(&["db:1", "-t", "0"])).timeout.as_deref(), Some("0"));
    }
}
