//! Stage 5: client matching, where database, cache, queue, coordination, DNS and cloud clients connect, from their arguments and environment.

#[allow(unused_imports)]
use super::*;

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
            if let Some((n, v)) = l.split_once('=') {
                p.opts.push((n.to_string(), v.to_string()));
            } else if long_val.contains(&l) {
                p.opts.push((l.to_string(), args.get(k + 1).cloned().unwrap_or_default()));
                k += 1;
            } else {
                p.flags.push(l.to_string());
            }
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
            let l = a.trim_start_matches('-');
            if let Some((n, v)) = l.split_once('=') {
                p.opts.push((n.to_string(), v.to_string()));
            } else if vals.contains(&l) {
                p.opts.push((l.to_string(), args.get(k + 1).cloned().unwrap_or_default()));
                k += 1;
            } else {
                p.flags.push(l.to_string());
            }
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
}

impl Hit {
    pub(super) fn new(category: DependencyCategory, hosts: Vec<String>, target: impl Into<String>) -> Self {
        Hit { category, hosts, target: target.into(), via: None, always: false }
    }

    pub(super) fn always(category: DependencyCategory, target: impl Into<String>) -> Self {
        Hit { category, hosts: Vec::new(), target: target.into(), via: None, always: true }
    }

    pub(super) fn via(mut self, var: &str) -> Self {
        self.via = Some(var.to_string());
        self
    }
}

pub(super) fn is_kafka_tool(n: &str) -> bool {
    n.starts_with("kafka-")
        && !matches!(n, "kafka-server-start" | "kafka-server-stop" | "kafka-storage" | "kafka-run-class")
}

impl Ctx<'_> {
    /// Per-client parsing: where does the command connect to?
    pub(super) fn tool_hits(&mut self, name: &str, a: &[String], ov: &[(String, String)]) -> Vec<Hit> {
        use DependencyCategory::*;
        match name {
            "pg_isready" | "psql" | "pg_dump" | "pg_dumpall" | "pg_basebackup" | "pg_restore"
            | "createdb" | "dropdb" | "vacuumdb" | "reindexdb" | "clusterdb" | "pg_receivewal"
            | "pgbench" => self.postgres(name, a, ov),
            "mysql" | "mysqladmin" | "mariadb" | "mariadb-admin" | "mysqlsh" | "mysqlcheck" | "mysqldump"
            | "mariadb-dump" | "mariadb-check" | "mysqlshow" => self.mysql(name, a, ov),
            "redis-cli" | "valkey-cli" | "keydb-cli" => redis_hits(a),
            "mongosh" | "mongo" => mongo_hits(a),
            "cqlsh" => {
                let p = getopt(a, "upkfeb", "", CQLSH_LONG);
                if let Some(h) = p.pos.first() {
                    return vec![Hit::new(Database, hosts_of(h), h.clone())];
                }
                if let Some(b) = p.get(&["b", "secure-connect-bundle"]).first() {
                    return vec![Hit::always(Database, format!("cloud bundle {b}"))];
                }
                self.env_hit(Database, "CQLSH_HOST", ov)
            }
            "nodetool" => {
                let vals = ["h", "host", "p", "port", "u", "username", "pw", "password", "pwf"];
                let p = goflags(a, &vals);
                option_hits(Database, &p, &["h", "host"])
            }
            _ => self.tool_hits_more(name, a, ov),
        }
    }

    /// A hit for a client-implied environment variable, when it is set.
    pub(super) fn env_hit(
        &mut self,
        cat: DependencyCategory,
        var: &str,
        ov: &[(String, String)],
    ) -> Vec<Hit> {
        match self.tool_env(var, ov) {
            Some(v) => vec![Hit::new(cat, hosts_of(&v), v).via(var)],
            None => Vec::new(),
        }
    }

    pub(super) fn postgres(&mut self, prog: &str, a: &[String], ov: &[(String, String)]) -> Vec<Hit> {
        let sv = match prog {
            "pg_isready" => "dhptU",
            "psql" => "cdfhLopPRTUvF",
            _ => "dfFhjnNpStTUZEDl",
        };
        let p = getopt(a, sv, "", PG_LONG);
        let mut hosts = Vec::new();
        let mut target = String::new();
        for v in p.get(&["h", "host"]) {
            hosts.extend(hosts_of(&v));
            target = v;
        }
        let mut conns = p.get(&["d", "dbname", "maintenance-db"]);
        conns.extend(p.pos.iter().cloned());
        for c in conns {
            let hs = pg_conninfo_hosts(&c);
            if !hs.is_empty() {
                hosts.extend(hs);
                if target.is_empty() {
                    target = c;
                }
            }
        }
        if !hosts.is_empty() {
            return vec![Hit::new(DependencyCategory::Database, hosts, target)];
        }
        for var in ["PGHOSTADDR", "PGHOST"] {
            let h = self.env_hit(DependencyCategory::Database, var, ov);
            if !h.is_empty() {
                return h;
            }
        }
        Vec::new()
    }

    pub(super) fn mysql(&mut self, prog: &str, a: &[String], ov: &[(String, String)]) -> Vec<Hit> {
        let (sv, so) = match prog {
            "mysqladmin" | "mariadb-admin" => ("hPSuci", "pw"),
            "mysqlsh" => ("hPSuDef", "p"),
            "mysqldump" | "mariadb-dump" => ("hPSuwr", "p"),
            _ => ("hPSuDe", "p"),
        };
        let p = getopt(a, sv, so, MYSQL_LONG);
        let mut hosts = Vec::new();
        let mut target = String::new();
        for v in p.get(&["h", "host"]) {
            hosts.extend(hosts_of(&v));
            target = v;
        }
        let mut uris = p.get(&["uri"]);
        if prog == "mysqlsh" {
            uris.extend(p.pos.iter().filter(|x| x.contains("://") || x.contains('@')).cloned());
        }
        for u in uris {
            hosts.extend(hosts_of(&u));
            target = u;
        }
        if !hosts.is_empty() {
            return vec![Hit::new(DependencyCategory::Database, hosts, target)];
        }
        let socket = p.has(&["S", "socket"])
            || p.get(&["protocol"])
                .iter()
                .any(|x| matches!(x.to_ascii_lowercase().as_str(), "socket" | "pipe" | "memory"));
        if socket {
            return Vec::new();
        }
        self.env_hit(DependencyCategory::Database, "MYSQL_HOST", ov)
    }
}

impl Ctx<'_> {
    /// Queues, coordination services and clients that are dependencies whatever the host.
    pub(super) fn tool_hits_more(&mut self, name: &str, a: &[String], ov: &[(String, String)]) -> Vec<Hit> {
        use DependencyCategory::*;
        match name {
            n if is_kafka_tool(n) => {
                let vals = ["bootstrap-server", "broker-list", "zookeeper", "bootstrap-controller"];
                let p = goflags(a, &vals);
                let mut hits = option_hits(Queue, &p, &["bootstrap-server", "broker-list"]);
                hits.extend(option_hits(Queue, &p, &["bootstrap-controller"]));
                hits.extend(option_hits(Coordination, &p, &["zookeeper"]));
                hits
            }
            "kcat" | "kafkacat" => {
                let p = getopt(a, "btpocDKsrXFfGHmkzd", "", &[]);
                let mut hits = option_hits(Queue, &p, &["b"]);
                for x in p.get(&["X"]) {
                    if let Some((k, v)) = x.split_once('=')
                        && matches!(k, "bootstrap.servers" | "metadata.broker.list")
                    {
                        hits.push(Hit::new(Queue, hosts_of(v), v));
                    }
                }
                hits
            }
            "rabbitmqctl"
            | "rabbitmq-diagnostics"
            | "rabbitmq-plugins"
            | "rabbitmq-queues"
            | "rabbitmq-upgrade"
            | "rabbitmq-streams" => {
                let p = getopt(a, "ntp", "", &["node", "timeout", "vhost", "formatter"]);
                let node_host = |n: &str| n.split_once('@').map_or("", |(_, h)| h).to_string();
                let mut hits: Vec<Hit> = p
                    .get(&["n", "node"])
                    .into_iter()
                    .map(|n| Hit::new(Queue, vec![node_host(&n)], n))
                    .collect();
                if hits.is_empty()
                    && let Some(n) = self.tool_env("RABBITMQ_NODENAME", ov)
                {
                    hits.push(Hit::new(Queue, vec![node_host(&n)], n).via("RABBITMQ_NODENAME"));
                }
                hits
            }
            "nats" => {
                let p = getopt(a, "s", "", NATS_LONG);
                let hits = option_hits(Queue, &p, &["s", "server"]);
                if !hits.is_empty() || p.has(&["context"]) {
                    return hits;
                }
                self.env_hit(Queue, "NATS_URL", ov)
            }
            "zkCli" => {
                let p = goflags(a, &["server", "timeout", "client-configuration"]);
                option_hits(Coordination, &p, &["server"])
            }
            "zookeeper-shell" => {
                let p = goflags(a, &["zk-tls-config-file"]);
                p.pos
                    .first()
                    .map(|h| vec![Hit::new(Coordination, hosts_of(h), h.clone())])
                    .unwrap_or_default()
            }
            "etcdctl" => {
                let p = goflags(a, ETCD_VALS);
                if let Some(d) = p.get(&["discovery-srv"]).first() {
                    return vec![Hit::always(Coordination, format!("SRV records of {d}"))];
                }
                let hits = option_hits(Coordination, &p, &["endpoints", "endpoint", "peers", "C"]);
                if !hits.is_empty() {
                    return hits;
                }
                self.env_hit(Coordination, "ETCDCTL_ENDPOINTS", ov)
            }
            "kubectl" => {
                let long = ["server", "namespace", "context", "kubeconfig", "cluster", "user", "output"];
                let p = getopt(a, "sno", "", &long);
                if p.pos.first().is_some_and(|c| c == "version") && p.has(&["client"]) {
                    return Vec::new();
                }
                let target =
                    p.get(&["s", "server"]).pop().unwrap_or_else(|| "Kubernetes API server".to_string());
                vec![Hit::always(ControlPlane, target)]
            }
            "aws" | "gcloud" | "az" | "gsutil" | "mc" => {
                let long = ["region", "profile", "endpoint-url", "output", "project", "query"];
                let p = getopt(a, "", "", &long);
                let target = p.get(&["endpoint-url"]).pop().unwrap_or_else(|| {
                    let service = p.pos.first().map(String::as_str).unwrap_or("");
                    format!("{name} {service} API").replace("  ", " ")
                });
                vec![Hit::always(CloudApi, target)]
            }
            "nslookup" | "dig" | "host" | "getent" => self.dns(name, a),
            "consul" => {
                let p = goflags(a, CONSUL_VALS);
                if p.pos
                    .first()
                    .is_some_and(|c| matches!(c.as_str(), "version" | "validate" | "keygen" | "agent"))
                {
                    return Vec::new();
                }
                let addr = p.get(&["http-addr"]).pop().or_else(|| self.tool_env("CONSUL_HTTP_ADDR", ov));
                // `consul members` and `consul info` answer from the agent they ask (its gossip
                // member list, its own state: Consul docs, "Commands: members" and "info"), so
                // with the local agent (the default address is 127.0.0.1:8500) they check this
                // Pod's agent, whoever else is down. Other commands (catalog, kv, ...) need the
                // servers.
                if p.pos.first().is_some_and(|c| matches!(c.as_str(), "members" | "info")) {
                    return match addr {
                        Some(addr) => vec![Hit::new(ServiceDiscovery, hosts_of(&addr), addr)],
                        None => Vec::new(),
                    };
                }
                let target = addr.unwrap_or_else(|| "local Consul agent (catalog)".to_string());
                vec![Hit::always(ServiceDiscovery, target)]
            }
            "vault" => {
                let p = goflags(a, VAULT_VALS);
                if p.pos.first().is_some_and(|c| matches!(c.as_str(), "version" | "server")) {
                    return Vec::new();
                }
                if let Some(addr) = p.get(&["address"]).pop() {
                    return vec![Hit::new(Secrets, hosts_of(&addr), addr)];
                }
                let h = self.env_hit(Secrets, "VAULT_ADDR", ov);
                if !h.is_empty() {
                    return h;
                }
                // Without -address or VAULT_ADDR the CLI talks to https://127.0.0.1:8200 (Vault
                // docs, "Commands (CLI)": VAULT_ADDR defaults to that): this Pod's own Vault.
                Vec::new()
            }
            _ => self.network_hits(name, a),
        }
    }

    pub(super) fn dns(&mut self, name: &str, a: &[String]) -> Vec<Hit> {
        use DependencyCategory::Dns;
        const TYPES: &[&str] = &[
            "a", "aaaa", "srv", "txt", "mx", "ns", "cname", "soa", "ptr", "any", "caa", "in", "ch", "hs",
            "axfr",
        ];
        let target = match name {
            "nslookup" => {
                let pos: Vec<&String> = a.iter().filter(|x| !x.starts_with('-')).collect();
                match pos.as_slice() {
                    [] => return Vec::new(),
                    [n] => n.to_string(),
                    // A local server (`nslookup NAME 127.0.0.1`) is this Pod's resolver: the
                    // name asked is data, not a host the probe reaches.
                    [_, srv, ..] if self.classify(srv) == HostClass::Local => return Vec::new(),
                    [n, srv, ..] => format!("{n} (server {srv})"),
                }
            }
            "dig" => {
                let p = getopt(a, "ptcbfkqyx", "", &[]);
                let server = p.pos.iter().find(|x| x.starts_with('@')).cloned();
                let q = p.get(&["q", "x"]).pop().or_else(|| {
                    p.pos
                        .iter()
                        .find(|x| {
                            !x.starts_with('@')
                                && !x.starts_with('+')
                                && !TYPES.contains(&x.to_ascii_lowercase().as_str())
                        })
                        .cloned()
                });
                let q = q.unwrap_or_else(|| ".".to_string());
                // `dig @127.0.0.1 NAME` asks the local resolver (this Pod's own DNS server).
                if server.as_deref().is_some_and(|s| self.classify(&s[1..]) == HostClass::Local) {
                    return Vec::new();
                }
                match server {
                    Some(s) => format!("{q} ({s})"),
                    None => q,
                }
            }
            "host" => {
                let p = getopt(a, "cNRtWm", "", &[]);
                match p.pos.first() {
                    Some(n) => n.clone(),
                    None => return Vec::new(),
                }
            }
            _ => {
                // getent: only the hosts databases; /etc/hosts answers local names first.
                let is_hosts_db = a
                    .first()
                    .is_some_and(|d| matches!(d.as_str(), "hosts" | "ahosts" | "ahostsv4" | "ahostsv6"));
                match a.get(1) {
                    Some(n) if is_hosts_db && self.classify(n) != HostClass::Local => n.clone(),
                    _ => return Vec::new(),
                }
            }
        };
        vec![Hit::always(Dns, target)]
    }
}

/// Hits for the values of host options (any non-local host is a dependency).
pub(super) fn option_hits(cat: DependencyCategory, p: &Parsed, names: &[&str]) -> Vec<Hit> {
    p.get(names).into_iter().map(|v| Hit::new(cat, hosts_of(&v), v)).collect()
}

pub(super) fn redis_hits(a: &[String]) -> Vec<Hit> {
    let p = getopt(a, "hpsaunirdD", "", REDIS_LONG);
    if p.has(&["s", "socket"]) {
        return Vec::new();
    }
    option_hits(DependencyCategory::Cache, &p, &["u", "h"])
}

pub(super) fn mongo_hits(a: &[String]) -> Vec<Hit> {
    use DependencyCategory::Database;
    let p = getopt(a, "upf", "", MONGO_LONG);
    if p.has(&["nodb"]) {
        return Vec::new();
    }
    let mut hits = Vec::new();
    let uri_hit = |c: &str| -> Option<Hit> {
        let lower = c.to_ascii_lowercase();
        if lower.starts_with("mongodb+srv://") {
            let mut h = Hit::always(Database, c);
            h.hosts = hosts_of(c);
            return Some(h);
        }
        if lower.starts_with("mongodb://") {
            let hosts = parse_url(c).map(|u| u.hosts.into_iter().map(|h| h.0).collect()).unwrap_or_default();
            return Some(Hit::new(Database, hosts, c));
        }
        None
    };
    for h in p.get(&["host"]) {
        if let Some(hit) = uri_hit(&h) {
            hits.push(hit);
            continue;
        }
        // `--host replicaSet/h1:p1,h2:p2` or `--host h[:p]`.
        let list = h.split_once('/').map_or(h.as_str(), |(_, l)| l);
        hits.push(Hit::new(Database, hosts_of(list), h.clone()));
    }
    for c in &p.pos {
        if let Some(hit) = uri_hit(c) {
            hits.push(hit);
        } else if c.ends_with(".js") {
            continue;
        } else if c.contains('/') || c.contains(':') {
            // `host[:port]/db`; a bare word is a database name.
            hits.push(Hit::new(Database, hosts_of(c), c.clone()));
        }
    }
    hits
}
