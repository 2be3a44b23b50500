//! Database clients: PostgreSQL, MySQL/MariaDB, MongoDB, Cassandra, ClickHouse, CockroachDB,
//! SQL Server, Neo4j, InfluxDB. One row per client (or per group sharing a manual page).

use super::super::DependencyCategory::Database;
use super::super::flags::{CQLSH_LONG, MONGO_LONG, MYSQL_LONG, PG_LONG};
use super::super::hosts::{hosts_of, parse_url};
use super::order::HostWins;
use super::{BASE, Client, Hit, HostFormat, Positional, Shape, Syntax};

/// libpq: without `-h`, `host=` or `PGHOST` a client connects to the Unix-domain socket
/// (PostgreSQL docs, "Connection Strings", `host`: "The default behavior when host is not
/// specified, or is empty, is to connect to a Unix-domain socket").
const LIBPQ_DEFAULT: &str = "the local Unix-domain socket";
/// A libpq client row: `-h`/`--host`, conninfo strings, `PGHOSTADDR` (read by
/// [`Shape::Postgres`]: `hostaddr` overrides the host wherever that comes from), `PGHOST`;
/// `short_val` are its letters that take a value.
const fn libpq(names: &'static [&'static str], short_val: &'static str, source: &'static str) -> Client {
    Client {
        names,
        category: Database,
        syntax: Syntax::Getopt { short_val, short_opt: "", long_val: PG_LONG },
        host_opts: &["h", "host"],
        env: &["PGHOST"],
        default: LIBPQ_DEFAULT,
        shape: Shape::Postgres,
        outage: "pg_isready: \"2 if there was no response to the connection attempt\" (docs, Exit Status); \
                 psql: \"2 if the connection to the server went bad\" (docs, Exit Status); the other \
                 tools exit 1 when they cannot connect",
        source,
        ..BASE
    }
}

/// The hosts of libpq's `host` setting (`-h`, `--host`): a comma-separated list of host names,
/// or directories of a Unix-domain socket (an item starting with `/`), never a URL (PostgreSQL
/// docs, "Parameter Key Words", `host`; URIs go in `dbname`). An item holding `://`
/// (`https://pypi.org/simple/`) is kept whole: a name no resolver knows (psql 16: `could not
/// translate host name "https://pypi.org/simple/" to address`), so the client never reaches a
/// host there and the item is no dependency (`Ctx::classify`: punctuation no host name has; s24:
/// `pg_isready -h "https://pypi.org/simple/," -p 5432` was denied as reaching pypi.org). An empty
/// item is the default, the socket. Other items as [`hosts_of`] reads them (`db:5432` as `db`).
pub(in super::super) fn libpq_hosts(v: &str) -> Vec<String> {
    if !v.contains("://") {
        return hosts_of(v);
    }
    v.split(',')
        .map(str::trim)
        .flat_map(|item| if item.contains("://") { vec![item.to_string()] } else { hosts_of(item) })
        .collect()
}

/// MySQL clients: "the default host name is localhost", a Unix socket file on Unix (MySQL
/// Reference Manual, "Connecting to the MySQL Server Using Command Options").
const MYSQL_DEFAULT: &str = "localhost (the Unix socket file)";
const MYSQL_SOURCE: &str = "https://dev.mysql.com/doc/refman/8.4/en/connecting.html";
/// The MySQL clients' flags that print and exit 0 (`-V, --version`: "Display version
/// information and exit"; `-?, --help`: "Display a help message and exit": MySQL Reference
/// Manual, each client's options), read wherever they are by `handle_options` (mysys
/// my_getopt.c), which also lets a later `-h`/`--host` overwrite an earlier one. Checked (s27,
/// MariaDB 10.11 clients): `mysql -h db.shop.invalid -h 127.0.0.1 -P 16391` -> "Can't connect to
/// server on '127.0.0.1'", the reverse order -> "Unknown server host 'db.shop.invalid'" (so too
/// mysqladmin, mysqlcheck, mysqlshow, mysqldump); `mysql -h db.shop.invalid -V` (and
/// `--version`, `-e 'select 1' --version`) -> the version, exit 0.
const MYSQL_EXITS: &[&str] = &["V", "version", "?", "help"];
/// What every MySQL client shares: `-h`, `--uri`, `MYSQL_HOST`; without a host, `--socket` or a
/// `--protocol` that is not TCP keeps it on this machine (with `-h` naming another host, the
/// socket options are ignored: "--socket ... for connections to localhost").
/// `short_val`/`short_opt` are its letters that take a value (`-p` takes one only attached).
const fn mysql(
    names: &'static [&'static str],
    short_val: &'static str,
    short_opt: &'static str,
    source: &'static str,
) -> Client {
    Client {
        names,
        category: Database,
        syntax: Syntax::Getopt { short_val, short_opt, long_val: MYSQL_LONG },
        host_opts: &["h", "host", "uri"],
        socket_opts: &["S", "socket", "protocol=socket", "protocol=pipe", "protocol=memory"],
        env: &["MYSQL_HOST"],
        host_wins: HostWins::Last,
        exits_without_connecting: MYSQL_EXITS,
        default: MYSQL_DEFAULT,
        outage: "mysqladmin: \"The return status from mysqladmin is 0 if the server is running, 1 if it \
                 is not\" (0 also on Access denied: the server answered; docs, mysqladmin); the other \
                 clients exit 1 on ERROR 2002/2003 (cannot connect)",
        outage_status: &[1],
        source,
        ..BASE
    }
}

pub(in super::super) const CLIENTS: &[Client] = &[
    // "pg_isready returns 0 to the shell if the server is accepting connections normally, 1 if
    // the server is rejecting connections (for example during startup), 2 if there was no
    // response to the connection attempt, and 3 if no attempt was made (for example due to
    // invalid parameters)" (docs, Exit Status).
    // It prints `HOST:PORT - accepting connections`, `- rejecting connections`, `- no response` or
    // `- no attempt` on stdout, up or down; "-q, --quiet: Do not display status message" (docs,
    // Options; break-it pass, s17: real pg_isready 15 with the database down).
    // pg_isready reads `--help`/`-?` and `--version`/`-V` only as `argv[1]` (pg_isready.c, before
    // getopt_long); elsewhere they are invalid options. Checked (s27, pg_isready 15.18):
    // `pg_isready --version -h db.shop.invalid` -> the version, exit 0; `pg_isready -h
    // db.shop.invalid --version` -> "unrecognized option '--version'", exit 3.
    Client {
        outage_status: &[1, 2],
        status_line_quiet: Some("q"),
        exits_without_connecting_first: &["V", "version", "?", "help"],
        ..libpq(&["pg_isready"], "dhptU", "https://www.postgresql.org/docs/current/app-pg-isready.html")
    },
    // psql: "-V, --version: Print the psql version and exit"; "-?, --help: Show help about psql
    // command line arguments, and exit" (docs, Options), read wherever they are (startup.c,
    // `parse_psql_options`: `case 'V'`/`case '?'` exit before any connection). Checked (s27, psql
    // 15.18): `psql -h db.shop.invalid --version`, `-V`, `--help`, `-c 'select 1' --version` ->
    // exit 0 without a lookup; `psql -h db.shop.invalid -X -c --version` (a value) connects.
    Client {
        exits_without_connecting: &["V", "version", "?", "help"],
        ..libpq(&["psql"], "cdfhLopPRTUvF", "https://www.postgresql.org/docs/current/app-psql.html")
    },
    libpq(
        &[
            "pg_dump",
            "pg_dumpall",
            "pg_basebackup",
            "pg_restore",
            "createdb",
            "dropdb",
            "vacuumdb",
            "reindexdb",
            "clusterdb",
            "pg_receivewal",
            "pgbench",
        ],
        "dfFhjnNpStTUZEDl",
        "https://www.postgresql.org/docs/current/reference-client.html",
    ),
    mysql(
        &["mysqladmin", "mariadb-admin"],
        "hPSuci",
        "pw",
        "https://dev.mysql.com/doc/refman/8.4/en/mysqladmin.html",
    ),
    // (Not checked against mysqlsh, whose own parser reads URIs too: every host is judged.)
    Client {
        positional: Positional::Uri,
        host_wins: HostWins::Any,
        exits_without_connecting: &[],
        ..mysql(&["mysqlsh"], "hPSuDef", "p", "https://dev.mysql.com/doc/mysql-shell/8.4/en/mysqlsh.html")
    },
    mysql(
        &["mysqldump", "mariadb-dump"],
        "hPSuwr",
        "p",
        "https://dev.mysql.com/doc/refman/8.4/en/mysqldump.html",
    ),
    mysql(&["mysql", "mariadb", "mysqlcheck", "mariadb-check", "mysqlshow"], "hPSuDe", "p", MYSQL_SOURCE),
    Client {
        names: &["mongosh", "mongo"],
        category: Database,
        syntax: Syntax::opts("upf", MONGO_LONG),
        local_opts: &["nodb"],
        default: "mongodb://127.0.0.1:27017",
        shape: Shape::Mongo,
        source: "https://www.mongodb.com/docs/mongodb-shell/reference/options/",
        outage: "\"MongoServerSelectionError\" after serverSelectionTimeoutMS, exit 1",
        ..BASE
    },
    Client {
        names: &["cqlsh"],
        category: Database,
        syntax: Syntax::opts("upkfeb", CQLSH_LONG),
        always_opts: &[("b", "cloud bundle"), ("secure-connect-bundle", "cloud bundle")],
        positional: Positional::Host,
        env: &["CQLSH_HOST"],
        default: "127.0.0.1:9042",
        source: "https://cassandra.apache.org/doc/latest/cassandra/managing/tools/cqlsh.html",
        outage: "\"Connection error: ... Unable to connect to any servers\" and exit 1",
        ..BASE
    },
    // nodetool asks the local node over JMX unless `-h` names another: it is a dependency only
    // then (see known.rs: `nodetool status` exits 0 while peers are down).
    Client {
        names: &["nodetool"],
        category: Database,
        syntax: Syntax::Go(&["h", "host", "p", "port", "u", "username", "pw", "password", "pwf"]),
        host_opts: &["h", "host"],
        default: "127.0.0.1:7199 (JMX of the local node)",
        source: "https://cassandra.apache.org/doc/latest/cassandra/managing/tools/nodetool/nodetool.html",
        outage: "-h OTHER unreachable: \"Failed to connect to 'HOST:7199'\", exit 1 (with the local node, peers down exit 0: known.rs)",
        ..BASE
    },
    CLICKHOUSE,
    Client { names: &["clickhouse"], subcommand: Some("client"), ..CLICKHOUSE },
    Client {
        names: &["cockroach"],
        category: Database,
        syntax: Syntax::opts(
            "ed",
            &["host", "url", "certs-dir", "port", "user", "database", "execute", "format"],
        ),
        host_opts: &["host", "url"],
        default: "localhost:26257",
        source: "https://www.cockroachlabs.com/docs/stable/cockroach-sql",
        outage: "\"ERROR: cannot dial server\", exit 1",
        ..BASE
    },
    Client {
        names: &["sqlcmd"],
        category: Database,
        syntax: Syntax::opts("SUPdQqlthsWwcbiovy", &[]),
        host_opts: &["S"],
        host_format: HostFormat::SqlServer,
        default: "the default instance on this machine",
        source: "https://learn.microsoft.com/en-us/sql/tools/sqlcmd/sqlcmd-utility",
        outage: "a login failure or timeout (\"Login timeout expired\") exits 1",
        ..BASE
    },
    Client {
        names: &["cypher-shell"],
        category: Database,
        syntax: Syntax::opts(
            "aupdf",
            &["address", "uri", "username", "password", "database", "file", "format"],
        ),
        host_opts: &["a", "address", "uri"],
        default: "neo4j://localhost:7687",
        source: "https://neo4j.com/docs/operations-manual/current/cypher-shell/",
        outage: "\"Unable to establish connection\", exit 1",
        ..BASE
    },
    Client {
        names: &["influx"],
        category: Database,
        syntax: Syntax::Go(&[
            "host", "port", "token", "org", "username", "password", "database", "execute", "format",
        ]),
        host_opts: &["host"],
        default: "localhost:8086",
        source: "https://docs.influxdata.com/influxdb/v1/tools/influx-cli/",
        outage: "\"Failed to connect to http://HOST:8086\", exit 1",
        ..BASE
    },
];

/// clickhouse-client, also run as `clickhouse client`.
const CLICKHOUSE: Client = Client {
    names: &["clickhouse-client"],
    category: Database,
    syntax: Syntax::opts("hudqC", &["host", "port", "user", "password", "query", "database", "config-file"]),
    host_opts: &["h", "host"],
    default: "localhost:9000",
    source: "https://clickhouse.com/docs/interfaces/cli",
    outage: "exit with the exception code, 210 (NETWORK_ERROR) when the server cannot be reached",
    ..BASE
};

/// A host standing for the members of a replica set, which the shell learns from the set's
/// configuration at run time (not from the command): it holds `$`, so it classifies as known
/// only at run time, and a finding on it is a warning, never a denial.
const SET_MEMBERS: &str = "$replica-set-members";

/// Why a MongoDB connection string makes the shell discover a replica set and send the command
/// to its primary, which may be another Pod: `replicaSet=NAME` in the query, or (mongosh) a seed
/// list of several hosts, unless `directConnection=true` asks for the one host named. mongosh
/// adds `directConnection=true` itself otherwise (MONGOSH-465: "except if ... the replicaSet
/// query parameter is present ... the connection string contains a seed list with multiple
/// hosts"); the MongoDB connection string docs, `replicaSet` and `directConnection`. A
/// `db.adminCommand("ping")` then runs on the primary (mongosh's default read preference), so
/// the primary's outage (or an election) fails it: `MongoServerSelectionError`.
fn discovers_set(program: &str, uri: &str) -> Option<String> {
    let u = parse_url(uri).or_else(|| parse_url(&format!("mongodb://{uri}")))?;
    let pairs = u.query_pairs();
    let value =
        |k: &str| pairs.iter().rev().find(|(n, _)| n.eq_ignore_ascii_case(k)).map(|(_, v)| v.as_str());
    if value("directConnection").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
        return None;
    }
    match value("replicaSet").filter(|v| !v.is_empty()) {
        Some(set) => Some(format!("replicaSet={set}")),
        None if program.starts_with("mongosh") && u.hosts.len() > 1 => {
            Some("a seed list of several hosts".to_string())
        }
        None => None,
    }
}

/// A `mongodb://` URI without its user info, the target of a replica-set hit: its note says why it
/// is a finding, and a note about a variable in the user info (`root:$PASSWORD@`, from a Secret)
/// would take its place and say nothing about the host.
fn without_userinfo(uri: &str) -> String {
    let Some((scheme, rest)) = uri.split_once("://") else { return uri.to_string() };
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    match rest[..end].rsplit_once('@') {
        Some((_, hosts)) => format!("{scheme}://{hosts}{}", &rest[end..]),
        None => uri.to_string(),
    }
}

/// The explanation a replica-set hit carries (shown after its target).
fn set_note(why: &str) -> String {
    format!("{why}: sent to the set's primary, maybe another Pod (directConnection=true: this member)")
}

/// mongosh: `--host replicaSet/h1:p1,h2:p2`, `--host h[:p]`, and `mongodb://` or
/// `mongodb+srv://` URIs (an SRV URI asks DNS for the hosts: a dependency whatever the name).
/// A connection that discovers a replica set ([`discovers_set`]) also reaches the set's members,
/// known only at run time ([`SET_MEMBERS`]).
pub(in super::super) fn mongo_hits(c: &Client, program: &str, a: &[String]) -> Vec<Hit> {
    let p = c.syntax.parse(a);
    if p.has(c.local_opts) {
        return Vec::new();
    }
    let mut hits = Vec::new();
    let uri_hit = |u: &str| -> Option<Hit> {
        let lower = u.to_ascii_lowercase();
        if lower.starts_with("mongodb+srv://") {
            let mut h = Hit::always(c.category, u);
            h.hosts = hosts_of(u);
            return Some(h);
        }
        if lower.starts_with("mongodb://") {
            let mut hosts: Vec<String> =
                parse_url(u).map(|u| u.hosts.into_iter().map(|h| h.0).collect()).unwrap_or_default();
            let set = discovers_set(program, u);
            if set.is_some() {
                hosts.push(SET_MEMBERS.to_string());
            }
            return Some(match set {
                Some(why) => Hit::new(c.category, hosts, without_userinfo(u)).via(&set_note(&why)),
                None => Hit::new(c.category, hosts, u),
            });
        }
        None
    };
    for h in p.get(&["host"]) {
        if let Some(hit) = uri_hit(&h) {
            hits.push(hit);
            continue;
        }
        // `--host SET/h1:p1,h2:p2` names the set: the shell discovers it (mongosh docs, `--host`).
        let set = h
            .split_once('/')
            .filter(|(set, _)| !set.is_empty() && !set.contains(':'))
            .map(|(set, _)| set.to_string());
        let list = h.split_once('/').map_or(h.as_str(), |(_, l)| l);
        let mut hosts = hosts_of(list);
        let hit = match set {
            Some(set) => {
                hosts.push(SET_MEMBERS.to_string());
                Hit::new(c.category, hosts, h.clone()).via(&set_note(&format!("replica set {set}")))
            }
            None => Hit::new(c.category, hosts, h.clone()),
        };
        hits.push(hit);
    }
    for u in &p.pos {
        if let Some(hit) = uri_hit(u) {
            hits.push(hit);
        } else if u.ends_with(".js") {
            continue;
        } else if u.contains('/') || u.contains(':') {
            // `host[:port]/db`; a bare word is a database name.
            let mut hosts = hosts_of(u.split('?').next().unwrap_or(u));
            let hit = match discovers_set(program, u) {
                Some(why) => {
                    hosts.push(SET_MEMBERS.to_string());
                    Hit::new(c.category, hosts, u.clone()).via(&set_note(&why))
                }
                None => Hit::new(c.category, hosts, u.clone()),
            };
            hits.push(hit);
        }
    }
    hits
}

/// The `host` and `hostaddr` settings of a PostgreSQL connection string (URI or `key=value`
/// conninfo: PostgreSQL docs, "Connection Strings"; each may list several, comma-separated; in
/// a URI the `host` query parameter wins over the authority).
pub(in super::super) fn pg_conninfo(c: &str) -> PgConninfo {
    let split = |v: &str| v.split(',').map(str::to_string).collect::<Vec<_>>();
    let mut out = PgConninfo::default();
    if let Some(u) = parse_url(c) {
        if u.scheme != "postgres" && u.scheme != "postgresql" {
            return out;
        }
        for (k, v) in u.query_pairs() {
            match k.as_str() {
                "host" => out.host.extend(split(&v)),
                "hostaddr" => out.hostaddr.extend(split(&v)),
                "target_session_attrs" => out.target_session_attrs = Some(v.clone()),
                _ => {}
            }
        }
        if out.host.is_empty() {
            out.host = u.hosts.into_iter().map(|h| h.0).filter(|h| !h.is_empty()).collect();
        }
        return out;
    }
    for (k, v) in c.split_whitespace().filter_map(|t| t.split_once('=')) {
        let v = v.trim_matches('\'');
        match k {
            "host" if !v.is_empty() => out.host = split(v),
            "hostaddr" if !v.is_empty() => out.hostaddr = split(v),
            "target_session_attrs" => out.target_session_attrs = Some(v.to_string()),
            _ => {}
        }
    }
    out
}

/// What a PostgreSQL connection string says of the server's address ([`pg_conninfo`]).
#[derive(Debug, Default, PartialEq, Eq)]
pub(in super::super) struct PgConninfo {
    /// `host`: names (or socket directories).
    pub host: Vec<String>,
    /// `hostaddr`: numeric addresses. When set, libpq connects to them and uses `host` only for
    /// authentication and TLS checks, without a DNS lookup (PostgreSQL docs, "Parameter Key
    /// Words", `hostaddr`: "If hostaddr is specified without host, the value for hostaddr gives
    /// the server network address ... If both host and hostaddr are specified, the value for
    /// hostaddr gives the server network address. The value for host is ignored unless the
    /// authentication method requires it").
    pub hostaddr: Vec<String>,
    /// `target_session_attrs`, when given: which server of a host list will do (`any` by default).
    pub target_session_attrs: Option<String>,
}

/// The addresses a PostgreSQL connection string connects to: `hostaddr` when given, else `host`.
#[cfg(test)]
pub(in super::super) fn pg_conninfo_hosts(c: &str) -> Vec<String> {
    let info = pg_conninfo(c);
    if info.hostaddr.is_empty() { info.host } else { info.hostaddr }
}
