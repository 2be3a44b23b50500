//! URLs given to a program no client row knows (`/app/healthcheck --db postgres://u:pw@db:5432/x`): what it reaches is a warning, never a denial.

use super::super::DependencyCategory;
use super::super::context::{Ctx, marker_index};
use super::super::hosts::{net_category, parse_url, port_category};
use super::Hit;

/// Programs that take a URL as text and connect nowhere: shell builtins, output, tests and text
/// filters (POSIX utilities; `jq`, `yq`, `logger`), in byte order. A URL given to one of them is
/// no request.
const TEXT_ONLY: &[&str] = &[
    ":",
    "[",
    "[[",
    "awk",
    "base64",
    "basename",
    "cat",
    "cp",
    "cut",
    "date",
    "dirname",
    "echo",
    "egrep",
    "exit",
    "export",
    "expr",
    "false",
    "fgrep",
    "gawk",
    "grep",
    "head",
    "jq",
    "kill",
    "ln",
    "local",
    "logger",
    "ls",
    "mawk",
    "md5sum",
    "mkdir",
    "mv",
    "printf",
    "read",
    "return",
    "rm",
    "sed",
    "set",
    "sha256sum",
    "sleep",
    "sort",
    "stat",
    "tail",
    "tee",
    "test",
    "touch",
    "tr",
    "true",
    "uniq",
    "wc",
    "yq",
];

/// Why the status of a program no client row knows is not known: a warning's reason
/// (`exec::Dependency::status_unknown`; the message reads "whether it fails the probe rests on
/// ..., known only at run time").
pub(in crate::engine::exec) const UNKNOWN_PROGRAM: &str = "what this unknown program does with the URL";

/// The dependency family a URL's scheme names (`postgres://` a database), else its port's
/// ([`port_category`]), else that of an HTTP request ([`net_category`]).
fn scheme_category(scheme: &str, port: Option<&str>, host: &str, path: &str) -> DependencyCategory {
    use DependencyCategory::*;
    match scheme {
        "postgres" | "postgresql" | "mysql" | "mariadb" | "mongodb" | "mongodb+srv" | "sqlserver"
        | "clickhouse" | "cockroachdb" | "cassandra" => Database,
        "redis" | "rediss" | "memcached" | "valkey" => Cache,
        "amqp" | "amqps" | "kafka" | "nats" | "mqtt" | "mqtts" | "stomp" => Queue,
        "etcd" | "zk" | "zookeeper" => Coordination,
        "vault" => Secrets,
        "consul" => ServiceDiscovery,
        _ => port.and_then(port_category).unwrap_or_else(|| net_category(host, port, path).0),
    }
}

impl Ctx<'_> {
    /// The hosts of the URLs among the arguments `rest` of `name`, a program no client row, known
    /// command or quorum check matched (s23 fresh user: `/app/healthcheck --db
    /// postgres://user:pw@db.prod.svc:5432/x` gave no finding). Each word holding `SCHEME://`
    /// (alone, or after `=`: `--db=URL`) with a host names it; `file://` and words of programs that
    /// only handle text ([`TEXT_ONLY`]) name none. Each hit's target is the host and port alone (a
    /// password in the URL is never shown), and its status is [`UNKNOWN_PROGRAM`]: a warning.
    pub(in crate::engine::exec) fn url_argument_hits(&self, name: &str, rest: &[String]) -> Vec<Hit> {
        // A name no file has (blanks, quotes, `=`: a whole command line given as one argv word,
        // which the kubelet cannot run) reaches nothing, and may hold a secret.
        let file_name = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+'));
        // A PowerShell cmdlet (`Write-Host URL`: Verb-Noun, capitalized) is no program either;
        // and a client row's program is judged by its row alone, whatever it gave (`curl
        // --unix-socket S http://x/`, `psql` with a URI's `hostaddr`: nothing remote).
        let cmdlet = name.starts_with(|c: char| c.is_ascii_uppercase()) && name.contains('-');
        if !file_name || cmdlet || TEXT_ONLY.contains(&name) || super::find_client(name, rest).is_some() {
            return Vec::new();
        }
        let mut hits = Vec::new();
        for word in rest {
            let Some(at) = word.find("://") else {
                continue;
            };
            // The scheme: the letters, digits, `+`, `-` and `.` before `://`.
            // (A variable's marker is part of it: `$SCHEME://db:5432`.)
            let start = word[..at]
                .char_indices()
                .rev()
                .find(|&(_, c)| {
                    !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.') || marker_index(c).is_some())
                })
                .map_or(0, |(k, c)| k + c.len_utf8());
            let Some(url) = parse_url(&word[start..]) else {
                continue;
            };
            if url.scheme == "file" {
                continue;
            }
            for (host, port) in url.hosts {
                if host.is_empty() {
                    continue;
                }
                let category = scheme_category(&url.scheme, port.as_deref(), &host, &url.path);
                let target = match &port {
                    Some(p) if host.contains(':') => format!("[{host}]:{p}"),
                    Some(p) => format!("{host}:{p}"),
                    None => host.clone(),
                };
                let mut hit = Hit::new(category, vec![host], target);
                hit.status_unknown = Some(UNKNOWN_PROGRAM);
                hits.push(hit);
            }
        }
        hits
    }
}
