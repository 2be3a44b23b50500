//! DNS lookups: cluster DNS is a shared dependency, so a lookup is one whatever the name, except
//! through a resolver on this Pod (`dig @127.0.0.1`, `nslookup NAME 127.0.0.1`,
//! `host NAME 127.0.0.1`: the name asked is data, not a host the probe reaches), and except a
//! lookup of the Pod's own name (`nslookup $HOSTNAME`), and except a lookup through the default
//! resolvers of a Pod whose first resolver is on the Pod itself ([`super::super::ExecEnv::resolver_on_pod`]:
//! `dnsPolicy: None`, `dnsConfig.nameservers: [127.0.0.1, ...]`), which is `dig @127.0.0.1` again.

use super::super::DependencyCategory::Dns;
use super::super::context::{Ctx, RefKind};
use super::super::hosts::HostClass;
use super::{BASE, Client, Hit, Shape, getopt};

pub(in super::super) const CLIENTS: &[Client] = &[
    // BIND 9 nslookup: `nslookup [-option] [name | -] [server]`.
    Client {
        names: &["nslookup"],
        category: Dns,
        default: "the resolvers of /etc/resolv.conf (cluster DNS)",
        default_local: false,
        shape: Shape::Dns,
        source: "https://bind9.readthedocs.io/en/latest/manpages.html#nslookup-query-internet-name-servers-interactively",
        outage: "\";; connection timed out; no servers could be reached\" and exit 1",
        ..BASE
    },
    // BIND 9 dig: `dig [@server] [-p port] [-q name] [-t type] name [type]`.
    Client {
        names: &["dig"],
        category: Dns,
        default: "the resolvers of /etc/resolv.conf (cluster DNS)",
        default_local: false,
        shape: Shape::Dns,
        source: "https://bind9.readthedocs.io/en/latest/manpages.html#dig-dns-lookup-utility",
        outage: "\"9: No reply from server\" (dig(1), RETURN CODES)",
        ..BASE
    },
    // BIND 9 host: `host [-aCdlnrsTUwv] [-c class] [-N ndots] [-R number] [-t type] [-W wait]
    // [-m flag] name [server]`.
    Client {
        names: &["host"],
        category: Dns,
        default: "the resolvers of /etc/resolv.conf (cluster DNS)",
        default_local: false,
        shape: Shape::Dns,
        source: "https://bind9.readthedocs.io/en/latest/manpages.html#host-dns-lookup-utility",
        outage: "exit 1 when the lookup fails (the server unreachable included)",
        ..BASE
    },
    // getent(1): `getent hosts NAME` asks NSS (/etc/hosts first, then DNS).
    Client {
        names: &["getent"],
        category: Dns,
        default: "NSS: /etc/hosts, then the cluster DNS",
        default_local: false,
        shape: Shape::Dns,
        source: "https://man7.org/linux/man-pages/man1/getent.1.html",
        outage: "\"2: One or more supplied key could not be found\" (getent(1), EXIT STATUS): a name the resolvers cannot answer",
        ..BASE
    },
];

/// Query types and classes `dig` takes as positional words.
const TYPES: &[&str] =
    &["a", "aaaa", "srv", "txt", "mx", "ns", "cname", "soa", "ptr", "any", "caa", "in", "ch", "hs", "axfr"];

impl Ctx<'_> {
    /// The name a lookup asks for (and the server, when one is named), or nothing when it asks a
    /// local resolver or names nothing.
    pub(in super::super) fn dns(&mut self, name: &str, a: &[String]) -> Vec<Hit> {
        let target = match name {
            "nslookup" => {
                let pos: Vec<&String> = a.iter().filter(|x| !x.starts_with('-')).collect();
                match pos.as_slice() {
                    [] => return Vec::new(),
                    [n] if self.names_this_pod(n) || self.env.resolver_on_pod => return Vec::new(),
                    [n] => n.to_string(),
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
                if server.is_none() && (self.names_this_pod(&q) || self.env.resolver_on_pod) {
                    return Vec::new();
                }
                if server.as_deref().is_some_and(|s| self.classify(&s[1..]) == HostClass::Local) {
                    return Vec::new();
                }
                match server {
                    Some(s) => format!("{q} ({s})"),
                    None => q,
                }
            }
            "host" => {
                // The second positional is the server asked, as nslookup's.
                let p = getopt(a, "cNRtWm", "", &[]);
                match p.pos.as_slice() {
                    [] => return Vec::new(),
                    [n] if self.names_this_pod(n) || self.env.resolver_on_pod => return Vec::new(),
                    [n] => n.clone(),
                    [_, srv, ..] if self.classify(srv) == HostClass::Local => return Vec::new(),
                    [n, srv, ..] => format!("{n} (server {srv})"),
                }
            }
            _ => {
                // getent: only the hosts databases; /etc/hosts answers local names first.
                let is_hosts_db = a
                    .first()
                    .is_some_and(|d| matches!(d.as_str(), "hosts" | "ahosts" | "ahostsv4" | "ahostsv6"));
                match a.get(1) {
                    Some(n)
                        if is_hosts_db
                            && !self.env.resolver_on_pod
                            && matches!(self.classify(n), HostClass::Remote | HostClass::Unresolved) =>
                    {
                        n.clone()
                    }
                    _ => return Vec::new(),
                }
            }
        };
        vec![Hit::always(Dns, target)]
    }

    /// Whether a looked-up name is this Pod's own (`$HOSTNAME`, `$(hostname)`, `%COMPUTERNAME%`, a
    /// `metadata.name` fieldRef, the Pod's IP). `nslookup` and `dig` still ask the cluster DNS
    /// for it (they skip /etc/hosts), but a lookup of the Pod itself names no other service: it
    /// is not reported, since denying it would be a guess about what the probe means.
    fn names_this_pod(&self, name: &str) -> bool {
        name.chars().any(|c| {
            self.ref_of(c)
                .is_some_and(|r| matches!(r.kind, RefKind::SelfHost | RefKind::SelfName | RefKind::SelfIp))
        }) && self.classify(name) == HostClass::Local
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::{EnvValue, ExecEnv, find_dependency};

    fn run(argv: &[&str], e: &ExecEnv) -> Option<String> {
        let argv: Vec<String> = argv.iter().map(|x| x.to_string()).collect();
        find_dependency(&argv, e).map(|d| d.target)
    }

    #[test]
    fn a_lookup_of_the_pods_own_name_is_no_dns_dependency() {
        let e = ExecEnv {
            vars: [("POD_NAME".to_string(), EnvValue::PodName), ("POD_IP".to_string(), EnvValue::PodIp)]
                .into_iter()
                .collect(),
            ..Default::default()
        };
        // Fresh-user pass: each was denied as DNS reaching the Pod's own name.
        for script in [
            "nslookup $HOSTNAME",
            "nslookup \"$(hostname)\"",
            "nslookup `hostname`",
            "dig $HOSTNAME",
            "dig +short $(hostname) A",
            "dig -q $HOSTNAME",
            "host $HOSTNAME",
            "getent hosts $HOSTNAME",
            "nslookup $POD_NAME",
            "dig -x $POD_IP",
            "nslookup ${HOSTNAME}.",
        ] {
            assert_eq!(run(&["sh", "-c", script], &e), None, "{script}");
        }
        assert_eq!(run(&["cmd", "/c", "nslookup %COMPUTERNAME%"], &e), None);
        // Another name, or the Pod's name inside another one, is still a lookup in the cluster DNS.
        for (script, want) in [
            ("nslookup db", "db"),
            ("dig kubernetes.default", "kubernetes.default"),
            ("nslookup $HOSTNAME-db", "$HOSTNAME-db"),
            ("host db.prod.svc", "db.prod.svc"),
            // A resolver named on another host is asked, whatever the name.
            ("nslookup $HOSTNAME 10.96.0.10", "$HOSTNAME (server 10.96.0.10)"),
            ("dig @10.96.0.10 $HOSTNAME", "$HOSTNAME (@10.96.0.10)"),
        ] {
            assert_eq!(run(&["sh", "-c", script], &e).as_deref(), Some(want), "{script}");
        }
    }
}
