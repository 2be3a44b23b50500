//! Stage 5: client matching. Where a database, cache, queue, coordination, DNS, cloud or generic
//! network client connects, from its arguments and environment.
//!
//! The knowledge of each client is a row of a [`Client`] table, one table per family
//! ([`databases`], [`caches`], [`http`], [`dns`], [`coordination`], [`cloud`]; wrapper programs
//! are in [`super::unwrap::WRAPPERS`]). A row says which options carry a host, a port or a URI,
//! which environment variables set the host, where the client connects without one, and the
//! document all of that comes from. Adding a client is adding a row; the few clients whose
//! command line needs code (a PostgreSQL conninfo string, curl's `--resolve`) name a [`Shape`].

use super::DependencyCategory;
use super::context::Ctx;
use super::hosts::{HostClass, hosts_of, split_host_port};

pub(super) mod caches;
pub(super) mod cloud;
pub(super) mod coordination;
pub(super) mod databases;
pub(super) mod dns;
pub(super) mod http;
mod index;
pub(super) mod order;
mod url_args;
mod values;

use order::{HostWins, OptionsEnd};
use values::{grpc_endpoint, sql_server_host};

/// How a client's command line is parsed.
#[derive(Debug)]
pub(super) enum Syntax {
    /// getopt_long: letters taking a value (attached or the next word), letters taking an
    /// optional attached value only (mysql `-p`), long options whose value may be the next word
    /// (`--name=value` is always read).
    Getopt { short_val: &'static str, short_opt: &'static str, long_val: &'static [&'static str] },
    /// Go's `flag` package: `-name value`, `-name=value`, `--name=value` for the names listed.
    Go(&'static [&'static str]),
    /// A PowerShell cmdlet: parameters (lowercase) taking a value, and switches; any unambiguous
    /// prefix of a name is that name (`-Uri`, `-u` is ambiguous).
    PowerShell { values: &'static [&'static str], switches: &'static [&'static str] },
}

impl Syntax {
    /// getopt_long with no optional-value letters.
    pub(super) const fn opts(short_val: &'static str, long_val: &'static [&'static str]) -> Syntax {
        Syntax::Getopt { short_val, short_opt: "", long_val }
    }

    pub(super) fn parse(&self, args: &[String]) -> Parsed {
        match self {
            Syntax::Getopt { short_val, short_opt, long_val } => getopt(args, short_val, short_opt, long_val),
            Syntax::Go(vals) => goflags(args, vals),
            Syntax::PowerShell { values, switches } => super::powershell::ps_params(args, values, switches),
        }
    }
}

/// What the positional arguments of a client are.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Positional {
    /// Not hosts (database names, commands, script files).
    Ignored,
    /// The first one is the host (`cqlsh HOST`, `ping HOST`, `grpcurl HOST:PORT`).
    Host,
    /// Those that look like a URI (`scheme://...`, `user@host`) are (`mysqlsh URI`).
    Uri,
    /// `HOST PORT` (`nc`, `telnet`).
    HostPort,
}

/// How a host option's value names its hosts.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum HostFormat {
    /// A URI or a comma-separated `[user@]host[:port]` list ([`hosts_of`]).
    List,
    /// An Erlang node name, `name@host` (RabbitMQ CLI tools).
    ErlangNode,
    /// A SQL Server server: `[tcp:]host[\instance][,port]`, `.` and `(local)` being this machine.
    SqlServer,
    /// A gRPC target, `[scheme:[//authority/]]endpoint` ([`values::grpc_endpoint`]).
    GrpcTarget,
}

/// Clients whose command line needs code beyond a row.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Shape {
    /// Everything from the row: host options, positional hosts, environment, local options.
    Standard,
    /// libpq: `-h`, conninfo strings (`host=...`, `hostaddr=...`, `postgres://...`) in `-d` and
    /// positionals, `PGHOSTADDR` (a `hostaddr` overrides the host: libpq's "Parameter Key Words"
    /// and "Environment Variables", https://www.postgresql.org/docs/current/libpq-envars.html).
    Postgres,
    /// mongosh: `--host replicaSet/h1,h2`, `mongodb://` and `mongodb+srv://` URIs, `host/db`.
    Mongo,
    /// kcat: `-b`, and `-X bootstrap.servers=...`.
    Kcat,
    /// kubectl: the API server whatever the host (`version --client` reaches nothing).
    Kubectl,
    /// A cloud CLI: the provider's API whatever the arguments.
    Cloud,
    /// consul: `members`/`info` ask the agent given; other commands need the servers.
    Consul,
    /// DNS lookups: the name asked, through the server given ([`dns`]).
    Dns,
    /// curl: URLs, proxies, `--resolve` and `--connect-to`.
    Curl,
    /// wget: URLs, and proxies set with `-e`.
    Wget,
    /// httpie/xh: `[METHOD] URL`, `:PORT/path` shorthand for localhost, `--proxy scheme:URL`.
    Httpie,
    /// socat: `TCP:host:port`-style addresses.
    Socat,
    /// httping: the row's hosts, unless `--divert-connect HOST` sends the connection to HOST.
    Httping,
    /// A check whose status on its server's outage is known only at run time ([`STATUS_UNKNOWN`]):
    /// the row's hosts (an empty value is none), else its `default` server, each a warning.
    StatusUnknown,
    /// wait-for-it and wait-for: `host:port`, `-h HOST -p PORT` ([`super::wait_for`]).
    WaitFor,
}

/// Why a [`Shape::StatusUnknown`] client's status does not say whether its server is up, by
/// program (`exec::Dependency::status_unknown`). `gitlab-runner verify`: `VerifyRunner`
/// (network/gitlab.go, v10 to v18) logs "client error" instead of "is alive" and exits 0 unless
/// GitLab answers that the runner was removed (the chart's `check-live` greps for `is
/// (alive|valid)`). Beats: [`http::BEATS_OUTPUT`].
const STATUS_UNKNOWN: &[(&str, &str)] = &[
    ("gitlab-runner", "what reads its output (it exits 0 when GitLab is unreachable)"),
    ("filebeat", http::BEATS_OUTPUT),
];

/// One client program: where it connects, from its documentation.
#[derive(Debug)]
pub(super) struct Client {
    /// Program basenames; a name ending in `*` is a prefix (`kafka-*`).
    pub names: &'static [&'static str],
    /// Basenames a prefix must not match (`kafka-server-start` runs the broker).
    pub except: &'static [&'static str],
    /// The subcommand that makes the program this client (`clickhouse client`, `openssl s_client`).
    pub subcommand: Option<&'static str>,
    /// What it reaches.
    pub category: DependencyCategory,
    pub syntax: Syntax,
    /// Options whose value is a host, `host:port` list or URI.
    pub host_opts: &'static [&'static str],
    /// Options whose value is a host of another kind of dependency (Kafka tools' `--zookeeper`).
    pub other_opts: &'static [(&'static str, DependencyCategory)],
    /// Options that make it a dependency whatever their value, with the label shown before it
    /// (cqlsh `-b BUNDLE` is a cloud database, etcdctl `--discovery-srv` asks DNS for the members).
    pub always_opts: &'static [(&'static str, &'static str)],
    /// Options whose value is a proxy the client connects through.
    pub proxy_opts: &'static [&'static str],
    pub positional: Positional,
    pub host_format: HostFormat,
    /// Options that make it connect to a local socket only: their presence, or `name=value`
    /// (value compared without case: `protocol=socket`).
    pub local_opts: &'static [&'static str],
    /// Options that make it use a local socket when no host is named (mysql `--socket`: with
    /// `-h OTHER` it connects over TCP anyway); `name=value` as in `local_opts`.
    pub socket_opts: &'static [&'static str],
    /// Options naming a configuration that gives the host (nats `--context`): the environment
    /// variables below then do not apply.
    pub config_opts: &'static [&'static str],
    /// Which of several values of the host options (`-h a -h b`, `-u URI -h b`) the client
    /// connects to ([`HostWins`]); the row's comment cites the client's docs or source.
    pub host_wins: HostWins,
    /// Where the client stops reading options ([`OptionsEnd`]).
    pub options_end: OptionsEnd,
    /// Flags that print (a version, a help text) and exit 0 without connecting, wherever they are
    /// among the options (`psql -h db --version`): the command then reaches nothing.
    pub exits_without_connecting: &'static [&'static str],
    /// Such flags that count only as the very first argument (pg_isready reads `--version` and
    /// `-V` only in `argv[1]`; elsewhere they are invalid options, exit 3).
    pub exits_without_connecting_first: &'static [&'static str],
    /// First positional arguments (subcommands) that reach nothing (`vault version`).
    pub skip_subcommands: &'static [&'static str],
    /// Environment variables that give the host when no option does, first set wins.
    pub env: &'static [&'static str],
    /// Where it connects when nothing names a host, as documented (`127.0.0.1:6379`).
    pub default: &'static str,
    /// Whether [`Client::default`] is this Pod (loopback or a local socket). Documentation, held
    /// to the code by a test (a [`Shape::Standard`] row reaches nothing without a host).
    #[allow(dead_code)]
    pub default_local: bool,
    pub shape: Shape,
    /// What the client does when the server it reaches is down: the evidence that the outage
    /// FAILS the command (a non-zero exit, or a run past the probe's `timeoutSeconds`, which the
    /// kubelet counts as a failure), which is what makes it a liveness coupling. For reviewers; a
    /// test holds every row to one.
    #[allow(dead_code)]
    pub outage: &'static str,
    /// The exit statuses an outage of the server gives, where the client's documentation or
    /// source says so (pg_isready: 1 rejecting connections, 2 no response; redis-cli: 1):
    /// `$?` tested only for another value (`[ $? -ne 3 ]`, `case $? in 3)`) tests as with the
    /// server up (`status::lost`, `status::shapes`). Empty: not known, nothing assumed.
    pub outage_status: &'static [u8],
    /// The short flags that silence the status line the client prints on standard output whether
    /// its server answers or not (pg_isready: `-q`); `None`: it prints none, or not on standard
    /// output. Its output tested only for being empty then tests nothing (`status::shapes`).
    pub status_line_quiet: Option<&'static str>,
    /// The document the row's facts come from (for reviewers; a test holds every row to one).
    #[allow(dead_code)]
    pub source: &'static str,
}

/// The defaults of a row: nothing is a host, the default is local, parsed as getopt.
pub(super) const BASE: Client = Client {
    names: &[],
    except: &[],
    subcommand: None,
    category: DependencyCategory::Network,
    syntax: Syntax::Getopt { short_val: "", short_opt: "", long_val: &[] },
    host_opts: &[],
    other_opts: &[],
    always_opts: &[],
    proxy_opts: &[],
    positional: Positional::Ignored,
    host_format: HostFormat::List,
    local_opts: &[],
    socket_opts: &[],
    config_opts: &[],
    host_wins: HostWins::Any,
    options_end: OptionsEnd::Permuted,
    exits_without_connecting: &[],
    exits_without_connecting_first: &[],
    skip_subcommands: &[],
    env: &[],
    default: "",
    default_local: true,
    shape: Shape::Standard,
    outage: "",
    outage_status: &[],
    status_line_quiet: None,
    source: "",
};

/// Every family's table, in the order clients are looked up.
pub(super) const FAMILIES: &[&[Client]] = &[
    databases::CLIENTS,
    caches::CLIENTS,
    coordination::CLIENTS,
    cloud::CLIENTS,
    dns::CLIENTS,
    http::CLIENTS,
];

impl Client {
    /// Whether `name` is one of this row's programs.
    pub(super) fn is(&self, name: &str) -> bool {
        // (A name or prefix that does not begin as `name` does cannot match: most rows are told
        // apart by their first byte, without the suffix check and the comparison; every row's
        // names and prefixes are non-empty, see `every_row_names_its_programs_and_cites_its_source`.)
        let first = name.as_bytes().first();
        self.names.iter().filter(|n| n.as_bytes().first() == first).any(|n| match n.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix) && !self.except.contains(&name),
            None => *n == name,
        })
    }
}

/// The row for program `name` run with `args` (a subcommand row needs its subcommand first).
pub(super) fn find_client(name: &str, args: &[String]) -> Option<&'static Client> {
    // Only the rows with a name or prefix beginning as `name` does can match ([`Client::is`]).
    let first = *name.as_bytes().first()?;
    index::rows_beginning_with(first)
        .find(|c| c.is(name) && c.subcommand.is_none_or(|s| args.first().is_some_and(|a| a == s)))
}

/// Options, flags and positional arguments of one command line.
#[derive(Default)]
pub(super) struct Parsed {
    /// (name without dashes, value); short options use their letter.
    pub(super) opts: Vec<(String, String)>,
    pub(super) flags: Vec<String>,
    pub(super) pos: Vec<String>,
}

impl Parsed {
    /// All values given for any of `names`.
    pub(super) fn get(&self, names: &[&str]) -> Vec<String> {
        self.opts.iter().filter(|(n, _)| names.contains(&n.as_str())).map(|(_, v)| v.clone()).collect()
    }

    pub(super) fn has(&self, names: &[&str]) -> bool {
        self.flags.iter().any(|f| names.contains(&f.as_str()))
            || self.opts.iter().any(|(n, _)| names.contains(&n.as_str()))
    }

    /// A long option `l` (dashes removed) at `args[k]`: `name=value`, a name in `vals` taking the
    /// next word, or a flag. Returns the index of the last word used.
    fn long(&mut self, l: &str, args: &[String], k: usize, vals: &[&str]) -> usize {
        if let Some((n, v)) = l.split_once('=') {
            self.opts.push((n.to_string(), v.to_string()));
        } else if vals.contains(&l) {
            self.opts.push((l.to_string(), args.get(k + 1).cloned().unwrap_or_default()));
            return k + 1;
        } else {
            self.flags.push(l.to_string());
        }
        k
    }
}

/// getopt_long-style parsing. `short_val`: letters taking a value (attached or next word);
/// `short_opt`: letters taking an optional attached value only (mysql `-p`); `long_val`:
/// long options whose value may be the next word (`--name=value` is always accepted).
pub(super) fn getopt(args: &[String], short_val: &str, short_opt: &str, long_val: &[&str]) -> Parsed {
    let mut p = Parsed::default();
    let mut k = 0;
    while k < args.len() {
        let a = &args[k];
        if a == "--" {
            p.pos.extend(args[k + 1..].iter().cloned());
            break;
        }
        if let Some(l) = a.strip_prefix("--") {
            k = p.long(l, args, k, long_val);
        } else if a.len() > 1 && a.starts_with('-') {
            let cs: Vec<char> = a.chars().skip(1).collect();
            for (ci, ch) in cs.iter().enumerate() {
                let rest: String = cs[ci + 1..].iter().collect();
                if short_val.contains(*ch) {
                    let v = if rest.is_empty() {
                        k += 1;
                        args.get(k).cloned().unwrap_or_default()
                    } else {
                        rest
                    };
                    p.opts.push((ch.to_string(), v));
                    break;
                }
                if short_opt.contains(*ch) {
                    p.opts.push((ch.to_string(), rest));
                    break;
                }
                p.flags.push(ch.to_string());
            }
        } else {
            p.pos.push(a.clone());
        }
        k += 1;
    }
    p
}

/// Go `flag`-style parsing: `-name=value`, `--name=value`, `-name value` for names in `vals`.
pub(super) fn goflags(args: &[String], vals: &[&str]) -> Parsed {
    let mut p = Parsed::default();
    let mut k = 0;
    while k < args.len() {
        let a = &args[k];
        if a == "--" {
            p.pos.extend(args[k + 1..].iter().cloned());
            break;
        }
        if a.len() > 1 && a.starts_with('-') {
            k = p.long(a.trim_start_matches('-'), args, k, vals);
        } else {
            p.pos.push(a.clone());
        }
        k += 1;
    }
    p
}

/// One place a client connects to.
pub(super) struct Hit {
    pub(super) category: DependencyCategory,
    /// Hosts to classify (markers allowed); any non-local host makes the hit a dependency.
    pub(super) hosts: Vec<String>,
    /// What to report as the target (markers allowed).
    pub(super) target: String,
    /// Where an implied target came from (`PGHOST`).
    pub(super) via: Option<String>,
    /// A dependency whatever the host (DNS, control plane, `mongodb+srv://`, ...).
    pub(super) always: bool,
    /// For an HTTP request: the path, query and fragment asked for (`/actuator/health`).
    pub(super) path: Option<String>,
    /// Whether the hosts are alternatives the client tries in turn, succeeding on the first that
    /// accepts (libpq's host lists, [`Ctx::failover_note`]), rather than all needed.
    pub(super) failover: bool,
    /// A URL curl and wget refuse before connecting ([`super::hosts::port_not_a_number`]): the
    /// request never leaves the Pod, and the client fails every time.
    pub(super) bad_url: bool,
    /// Why the server's outage may leave the client's exit status 0 (wget2 with `--tries`): what
    /// it reaches is then a warning, never a denial.
    pub(super) outage_passes: Option<&'static str>,
    /// Why the client's status on the server's outage is known only at run time (`wget` with
    /// `--tries`: GNU Wget 1.x exits 4, the wget2 that Fedora 40+ installs as `wget` exits 0):
    /// what it reaches is then a warning, never a denial.
    pub(super) status_unknown: Option<&'static str>,
}

impl Hit {
    pub(super) fn new(category: DependencyCategory, hosts: Vec<String>, target: impl Into<String>) -> Self {
        Hit {
            category,
            hosts,
            target: target.into(),
            via: None,
            always: false,
            path: None,
            failover: false,
            bad_url: false,
            outage_passes: None,
            status_unknown: None,
        }
    }

    pub(super) fn always(category: DependencyCategory, target: impl Into<String>) -> Self {
        Hit { always: true, ..Hit::new(category, Vec::new(), target) }
    }

    pub(super) fn via(mut self, var: &str) -> Self {
        self.via = Some(var.to_string());
        self
    }

    /// A proxy the client connects through.
    pub(super) fn proxy(url: &str) -> Self {
        Hit::new(DependencyCategory::Network, hosts_of(url), format!("proxy {url}"))
    }
}

/// Whether one of `opts` (a name, or `name=value`) is given.
fn has_local_opt(p: &Parsed, opts: &[&str]) -> bool {
    opts.iter().any(|o| match o.split_once('=') {
        Some((n, v)) => p.get(&[n]).iter().any(|x| x.eq_ignore_ascii_case(v)),
        None => p.has(&[o]),
    })
}

impl Ctx<'_> {
    /// Per-client parsing: where does the command connect to?
    pub(super) fn tool_hits(&mut self, name: &str, a: &[String], ov: &[(String, String)]) -> Vec<Hit> {
        let Some(c) = find_client(name, a) else {
            return Vec::new();
        };
        let a = if c.subcommand.is_some() { &a[1..] } else { a };
        let a = order::options_read(c, a);
        if order::exits_without_connecting(c, a) {
            return Vec::new();
        }
        match c.shape {
            Shape::Standard => {
                let p = c.syntax.parse(a);
                self.standard(c, &p, ov)
            }
            Shape::Postgres => self.postgres(c, a, ov),
            Shape::Mongo => databases::mongo_hits(c, name, a),
            Shape::Kcat => {
                let p = c.syntax.parse(a);
                let mut hits = self.standard(c, &p, ov);
                for x in p.get(&["X"]) {
                    if let Some((k, v)) = x.split_once('=')
                        && matches!(k, "bootstrap.servers" | "metadata.broker.list")
                    {
                        hits.push(Hit::new(c.category, hosts_of(v), v));
                    }
                }
                hits
            }
            Shape::Kubectl => {
                let p = c.syntax.parse(a);
                if p.pos.first().is_some_and(|c| c == "version") && p.has(&["client"]) {
                    return Vec::new();
                }
                // `--server URL` names the API server reached: one on this Pod (a `kubectl proxy`
                // sidecar on localhost, an API server probing itself) is local like any host
                // (break-it pass); without it, the kubeconfig's or in-cluster server is remote.
                match p.get(c.host_opts).pop() {
                    Some(server) => vec![Hit::new(c.category, hosts_of(&server), server)],
                    None => vec![Hit::always(c.category, c.default)],
                }
            }
            Shape::Cloud => {
                let p = c.syntax.parse(a);
                // An endpoint given (`aws --endpoint-url http://localhost:4566`, localstack or
                // DynamoDB local in this Pod) is classified like any host (fresh-user pass).
                if let Some(endpoint) = p.get(c.host_opts).pop() {
                    return vec![Hit::new(c.category, hosts_of(&endpoint), endpoint)];
                }
                if name == "mc" {
                    return self.minio_alias(c, &p.pos, ov);
                }
                let service = p.pos.first().map(String::as_str).unwrap_or("");
                vec![Hit::always(c.category, format!("{name} {service} API").replace("  ", " "))]
            }
            Shape::Consul => self.consul(c, a, ov),
            Shape::Dns => self.dns(name, a),
            Shape::Curl => self.curl(c, a),
            Shape::Wget => self.wget(c, a),
            Shape::Httpie => self.httpie(c, a),
            Shape::Socat => self.socat(a),
            Shape::WaitFor => self.wait_for_hits(name, a),
            Shape::StatusUnknown => {
                let p = c.syntax.parse(a);
                let mut hits = self.standard(c, &p, ov);
                // (`--url=` names none: the chart's `check-live` passes it to verify every runner.)
                hits.retain(|h| h.always || h.hosts.iter().any(|x| !x.is_empty()));
                if hits.is_empty() && !p.pos.first().is_some_and(|s| c.skip_subcommands.contains(&s.as_str()))
                {
                    hits.push(Hit::always(c.category, c.default));
                }
                let why = STATUS_UNKNOWN.iter().find(|(n, _)| c.is(n)).map(|(_, why)| *why);
                for h in &mut hits {
                    h.status_unknown = h.status_unknown.or(why);
                }
                hits
            }
            Shape::Httping => {
                let p = c.syntax.parse(a);
                match p.get(&["divert-connect"]).pop() {
                    // "Ignore the hostname in the URL and connect to 'x' instead" (httping(1)).
                    Some(to) => {
                        let mut hits: Vec<Hit> = p.get(c.proxy_opts).iter().map(|x| Hit::proxy(x)).collect();
                        hits.push(self.host_hit(c, &to));
                        hits
                    }
                    None => self.standard(c, &p, ov),
                }
            }
        }
    }

    /// The hits a row gives by itself: proxies, host options, positional hosts, then the
    /// environment variables that set the host.
    pub(super) fn standard(&mut self, c: &Client, p: &Parsed, ov: &[(String, String)]) -> Vec<Hit> {
        let mut hits: Vec<Hit> =
            p.get(c.proxy_opts).iter().filter(|x| !x.is_empty()).map(|x| Hit::proxy(x)).collect();
        if has_local_opt(p, c.local_opts)
            || p.pos.first().is_some_and(|s| c.skip_subcommands.contains(&s.as_str()))
        {
            return hits;
        }
        for (opt, label) in c.always_opts {
            if let Some(v) = p.get(&[opt]).first() {
                return vec![Hit::always(c.category, format!("{label} {v}"))];
            }
        }
        let proxies = hits.len();
        for v in order::host_values(c, p) {
            hits.push(self.host_hit(c, &v));
        }
        for (opt, cat) in c.other_opts {
            hits.extend(p.get(&[opt]).into_iter().map(|v| Hit::new(*cat, hosts_of(&v), v)));
        }
        match c.positional {
            Positional::Ignored => {}
            // A count is not a host (Windows `ping -n 1 HOST`: `-n` is a flag on Linux).
            Positional::Host => hits.extend(
                p.pos.iter().find(|h| !h.chars().all(|c| c.is_ascii_digit())).map(|h| self.host_hit(c, h)),
            ),
            Positional::Uri => {
                for u in p.pos.iter().filter(|x| x.contains("://") || x.contains('@')) {
                    hits.push(self.host_hit(c, u));
                }
            }
            Positional::HostPort => {
                if let Some(h) = p.pos.first() {
                    let port = p.pos.get(1).map(String::as_str);
                    // Shown as `host:port` (`[::1]:5432` for an IPv6 address), as the other
                    // clients' endpoints are.
                    let target = match port {
                        Some(pt) if h.contains(':') && !h.starts_with('[') => format!("[{h}]:{pt}"),
                        Some(pt) => format!("{h}:{pt}"),
                        None => h.clone(),
                    };
                    hits.push(self.endpoint_hit(c, h, port, target));
                }
            }
        }
        if hits.len() > proxies || p.has(c.config_opts) || has_local_opt(p, c.socket_opts) {
            return hits;
        }
        for var in c.env {
            if let Some(v) = self.tool_env(var, ov) {
                hits.push(self.host_hit(c, &v).via(var));
                break;
            }
        }
        hits
    }

    /// A hit for one host value of row `c`.
    fn host_hit(&self, c: &Client, v: &str) -> Hit {
        match c.host_format {
            // A URL is a request (`httping -g http://db/health`); otherwise `[user@]host[:port]`
            // (`ssh user@db`).
            HostFormat::List if c.category == DependencyCategory::Network && v.contains("://") => {
                self.request_hit(v)
            }
            HostFormat::List if c.category == DependencyCategory::Network => {
                let (h, port) = split_host_port(v.rsplit_once('@').map_or(v, |(_, h)| h));
                self.net_hit(&h, port.as_deref(), "", v.to_string())
            }
            HostFormat::List => Hit::new(c.category, hosts_of(v), v),
            HostFormat::GrpcTarget => {
                let endpoint = grpc_endpoint(v);
                let (h, port) = split_host_port(endpoint);
                // Shown as the endpoint reached (`orders:50051` of `dns:///orders:50051`), with the
                // DNS server a `dns://SERVER/` target asks (fresh-user pass s16: the scheme read as
                // part of the host); a target without a resolver scheme as written.
                let dns_server = v
                    .strip_prefix("dns://")
                    .and_then(|r| r.split_once('/'))
                    .map(|(server, _)| server)
                    .filter(|s| !s.is_empty());
                let resolver = v.starts_with("dns:") || v.starts_with("passthrough:");
                let shown = if resolver && !endpoint.is_empty() { endpoint } else { v };
                let hit = self.net_hit(&h, port.as_deref(), "", shown.to_string());
                match dns_server {
                    Some(server) => hit.via(&format!("DNS server {server}")),
                    None => hit,
                }
            }
            HostFormat::ErlangNode => {
                Hit::new(c.category, vec![v.split_once('@').map_or("", |(_, h)| h).to_string()], v)
            }
            HostFormat::SqlServer => {
                let host = sql_server_host(v);
                let local = host == "."
                    || host.eq_ignore_ascii_case("(local)")
                    || host.eq_ignore_ascii_case("(localdb)")
                    || v.get(..4).is_some_and(|p| p.eq_ignore_ascii_case("lpc:"));
                Hit::new(c.category, vec![if local { String::new() } else { host.to_string() }], v)
            }
        }
    }

    /// A hit for `host` and an optional port of row `c` (a generic client's category follows the
    /// port).
    fn endpoint_hit(&self, c: &Client, host: &str, port: Option<&str>, target: String) -> Hit {
        if c.category == DependencyCategory::Network {
            self.net_hit(host, port, "", target)
        } else {
            Hit::new(c.category, vec![host.to_string()], target)
        }
    }

    /// libpq clients: `-h`, conninfo strings, `PGHOSTADDR`, `PGHOST`. Each setting comes from the
    /// last place that gives it: the clients pass `-h` to libpq before the connection string they
    /// were given as the database name, so its `host` wins over `-h` ("Array entries appearing
    /// before an expanded dbname entry can be overridden by fields of the connection string":
    /// PostgreSQL docs, `PQconnectdbParams`), and an environment variable only fills a setting
    /// nothing gave ("Environment Variables": "used to select default connection parameter
    /// values"). Then `hostaddr`, when set, is where it connects, whatever `host` says (the
    /// "Parameter Key Words" for `hostaddr`; no DNS lookup of `host` is made), so
    /// `PGHOSTADDR=127.0.0.1 pg_isready -h db` checks this Pod.
    fn postgres(&mut self, c: &Client, a: &[String], ov: &[(String, String)]) -> Vec<Hit> {
        let p = c.syntax.parse(a);
        // (hosts, what to show) for `host` and for `hostaddr`.
        // An empty `-h ''` is unset: libpq then reads PGHOST, else the socket (`PQconnectdbParams`:
        // "If any parameter is NULL or an empty string, the corresponding environment variable ... is checked").
        let mut host: Option<(Vec<String>, String)> =
            p.get(c.host_opts).pop().filter(|v| !v.is_empty()).map(|v| (databases::libpq_hosts(&v), v));
        let mut hostaddr: Option<(Vec<String>, String)> = None;
        let mut conns = p.get(&["d", "dbname", "maintenance-db"]);
        conns.extend(p.pos.iter().cloned());
        // `target_session_attrs` other than `any` or `prefer-standby` may skip this Pod's server
        // (a standby when `read-write` is asked) and need another host (libpq, "Parameter Key
        // Words"): then the hosts are not mere alternatives.
        let mut session_attrs: Option<String> = None;
        for conn in conns {
            let info = databases::pg_conninfo(&conn);
            if info.target_session_attrs.is_some() {
                session_attrs.clone_from(&info.target_session_attrs);
            }
            // A `key=value` conninfo string is named by its hosts (it may hold a password and
            // other settings); a URI is shown whole, as a URL is.
            let shown = |hs: &[String]| if conn.contains("://") { conn.clone() } else { hs.join(",") };
            if !info.host.is_empty() {
                host = Some((info.host.clone(), shown(&info.host)));
            }
            if !info.hostaddr.is_empty() {
                hostaddr = Some((info.hostaddr.clone(), shown(&info.hostaddr)));
            }
            if info == databases::PgConninfo::default() && self.is_dependency_address_variable(&conn) {
                // `psql "$DATABASE_URL"`: a connection string known only at run time, whose
                // variable's name says it is a dependency's address (a plain `$DB_NAME` may be a
                // database name, and reaches nothing by itself).
                host = Some((vec![conn.clone()], conn));
            }
        }
        let any_host = session_attrs.or_else(|| self.tool_env("PGTARGETSESSIONATTRS", ov)).is_none_or(|v| {
            let v = v.trim();
            v.is_empty() || v == "any" || v == "prefer-standby"
        });
        let mut hits = if let Some((hosts, target)) = hostaddr {
            vec![Hit::new(c.category, hosts, target)]
        } else if let Some(v) = self.tool_env("PGHOSTADDR", ov).filter(|v| !v.is_empty()) {
            vec![Hit::new(c.category, hosts_of(&v), v).via("PGHOSTADDR")]
        } else if let Some((hosts, target)) = host {
            vec![Hit::new(c.category, hosts, target)]
        } else {
            let none = Parsed::default();
            self.standard(c, &none, ov)
        };
        for h in &mut hits {
            h.failover = any_host;
        }
        hits
    }

    /// Why a hit whose hosts are alternatives ([`Hit::failover`]) cannot fail the probe through a
    /// remote host's outage: one of them is this Pod. libpq "tries each host in the order given
    /// ... until a connection is successfully established" (PostgreSQL docs, libpq, "Specifying
    /// Multiple Hosts", 34.1.1.3), so while this Pod's server accepts, the check passes whatever
    /// the other hosts do; a remote host listed before it can still delay the attempt (a
    /// connection that hangs instead of being refused), which the warning says.
    pub(super) fn failover_note(&self, hit: &Hit) -> Option<String> {
        if !hit.failover || hit.always || hit.hosts.len() < 2 {
            return None;
        }
        let first_local = hit.hosts.iter().position(|h| self.classify(h) == HostClass::Local)?;
        let order = if first_local == 0 { "the first, this Pod, answers" } else { "one of them is this Pod" };
        Some(format!(
            "libpq tries its hosts in order until one accepts and {order}: another host's outage alone cannot fail it"
        ))
    }

    /// Whether `word` is exactly one value known only at run time whose variable's name says it
    /// is a dependency's address (`$DATABASE_URL`, `${PG_URI}`).
    fn is_dependency_address_variable(&self, word: &str) -> bool {
        let mut cs = word.chars();
        matches!((cs.next(), cs.next()), (Some(c), None)
            if self.ref_of(c).is_some_and(|r| r.kind == super::context::RefKind::Unresolved))
            && self.names_dependency_variable(word)
    }

    fn consul(&mut self, c: &Client, a: &[String], ov: &[(String, String)]) -> Vec<Hit> {
        let p = c.syntax.parse(a);
        if p.pos.first().is_some_and(|s| c.skip_subcommands.contains(&s.as_str())) {
            return Vec::new();
        }
        let addr = p.get(c.host_opts).pop().or_else(|| self.tool_env("CONSUL_HTTP_ADDR", ov));
        // `consul members` and `consul info` answer from the agent they ask (its gossip member
        // list, its own state: Consul docs, "Commands: members" and "info"), so with the local
        // agent (the default address is 127.0.0.1:8500) they check this Pod's agent, whoever else
        // is down. Other commands (catalog, kv, ...) need the servers.
        if p.pos.first().is_some_and(|s| matches!(s.as_str(), "members" | "info")) {
            return match addr {
                Some(addr) => vec![Hit::new(c.category, hosts_of(&addr), addr)],
                None => Vec::new(),
            };
        }
        let target = addr.unwrap_or_else(|| "local Consul agent (catalog)".to_string());
        vec![Hit::always(c.category, target)]
    }

    /// MinIO's `mc`: the server is the alias's URL (`mc ready ALIAS`, `mc ls ALIAS/bucket`), from
    /// `MC_HOST_<alias>` (MinIO docs, "mc" environment variables) or else the client's config
    /// file, which admission cannot read: only an alias set in the environment is judged, and its
    /// URL classified like any host (`local`, `http://localhost:9000` in the default config, is
    /// this Pod's own server: MinIO's documented health check is `mc ready local`).
    fn minio_alias(&mut self, c: &Client, positional: &[String], ov: &[(String, String)]) -> Vec<Hit> {
        for word in positional.iter().skip(1) {
            let alias = word.split('/').next().unwrap_or(word);
            if alias.is_empty()
                || !alias.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '-')
            {
                continue;
            }
            if let Some(url) = self.tool_env(&format!("MC_HOST_{alias}"), ov) {
                let hit = Hit::new(c.category, hosts_of(&url), super::redact::redact_secrets(&url));
                return vec![hit.via(&format!("MC_HOST_{alias}"))];
            }
        }
        Vec::new()
    }

    /// Whether a hit reaches a dependency: always, or through a host that is not this Pod (a host
    /// that is a script variable not followed, [`HostClass::Unknown`], is none).
    pub(super) fn is_dependency(&self, hit: &Hit) -> bool {
        hit.always
            || hit.hosts.iter().any(|h| matches!(self.classify(h), HostClass::Remote | HostClass::Unresolved))
    }
}

#[cfg(test)]
mod tests;
