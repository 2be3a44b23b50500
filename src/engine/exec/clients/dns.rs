//! DNS lookups: cluster DNS is a shared dependency, so a lookup is one whatever the name, except
//! through a resolver on this Pod (`dig @127.0.0.1`, `nslookup NAME 127.0.0.1`,
//! `host NAME 127.0.0.1`: the name asked is data, not a host the probe reaches).

use super::super::DependencyCategory::Dns;
use super::super::context::Ctx;
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
}
