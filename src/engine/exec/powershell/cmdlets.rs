//! What each network cmdlet a script calls targets: `Invoke-WebRequest`/`Invoke-RestMethod`
//! ([`Ctx::web_hits`]), `Resolve-DnsName`, `Test-NetConnection`/`Test-Connection` and
//! `Invoke-Sqlcmd`, from their parameters (the rows of `clients::http::POWERSHELL`, [`find_ps`]).

use super::super::clients::{Client, Hit};
use super::super::context::{Ctx, RefKind};
use super::ps_params;

/// `Test-NetConnection`'s documented default target (Microsoft docs, Test-NetConnection:
/// "If you do not specify a target, the cmdlet tests internetbeacon.msedge.net").
const TNC_DEFAULT: &str = "internetbeacon.msedge.net";

impl Ctx<'_> {
    /// `Invoke-WebRequest`/`Invoke-RestMethod` (and the 5.1 `curl`/`wget` aliases): `-Uri` or the
    /// first positional, through `-Proxy` unless `-NoProxy`; `-UnixSocket` stays local.
    pub(super) fn web_hits(&mut self, row: &Client, args: &[String]) -> Vec<Hit> {
        let p = row.syntax.parse(args);
        let mut hits: Vec<Hit> = if p.has(&["noproxy"]) {
            Vec::new()
        } else {
            p.get(row.proxy_opts).iter().map(|x| Hit::proxy(x)).collect()
        };
        if p.has(row.local_opts) {
            return hits;
        }
        let mut uris = p.get(row.host_opts);
        if uris.is_empty() && !p.has(&["?"]) {
            uris.extend(p.pos.first().cloned());
        }
        hits.extend(uris.iter().map(|u| self.request_hit(u)));
        hits
    }

    /// `Resolve-DnsName [-Name] NAME [[-Type] TYPE] [-Server ADDR...]` (DnsClient module): a DNS
    /// lookup like nslookup's; it fails (an error, `$?` false) when the name cannot be resolved.
    /// `-CacheOnly`, a local `-Server`, the Pod's own name, and an unknown parameter give nothing.
    pub(super) fn resolve_dns_name(&mut self, args: &[String]) -> Vec<Hit> {
        let p = ps_params(
            args,
            &["name", "type", "server"],
            &[
                "dnsonly",
                "cacheonly",
                "dnssecok",
                "dnsseccd",
                "nohostsfile",
                "llmnrnetbiosonly",
                "llmnrfallback",
                "llmnronly",
                "netbiosfallback",
                "noidn",
                "norecursion",
                "quicktimeout",
                "tcponly",
            ],
        );
        if p.has(&["?", "cacheonly", "llmnronly", "llmnrnetbiosonly"]) {
            return Vec::new();
        }
        let Some(name) = p.get(&["name"]).pop().or_else(|| p.pos.first().cloned()) else {
            return Vec::new();
        };
        let servers = p.get(&["server"]);
        if servers.iter().any(|s| self.classify(s) == super::super::hosts::HostClass::Local) {
            return Vec::new();
        }
        let own = name.chars().any(|c| {
            self.ref_of(c)
                .is_some_and(|r| matches!(r.kind, RefKind::SelfHost | RefKind::SelfName | RefKind::SelfIp))
        });
        let own = own && self.classify(&name) == super::super::hosts::HostClass::Local;
        if servers.is_empty() && (own || name.eq_ignore_ascii_case("localhost") || self.env.resolver_on_pod) {
            return Vec::new();
        }
        let target = match servers.first() {
            Some(srv) => format!("{name} (server {srv})"),
            None => name,
        };
        vec![Hit::always(super::super::DependencyCategory::Dns, target)]
    }

    /// `Test-NetConnection [[-ComputerName] HOST] [-Port N | [-CommonTCPPort] NAME]` and
    /// `Test-Connection [-TargetName] HOST [-TcpPort N]`.
    pub(super) fn tnc_hits(&mut self, row: &Client, args: &[String]) -> Vec<Hit> {
        let p = row.syntax.parse(args);
        let mut hosts = p.get(row.host_opts);
        if hosts.is_empty() && !p.has(&["?"]) {
            hosts.extend(p.pos.first().cloned());
        }
        if hosts.is_empty() && row.names.contains(&"test-netconnection") {
            hosts.push(TNC_DEFAULT.to_string());
        }
        let port = p.get(&["port", "remoteport", "tcpport"]).pop();
        hosts
            .iter()
            .map(|h| {
                let target = match &port {
                    Some(pt) => format!("{h}:{pt}"),
                    None => h.clone(),
                };
                self.net_hit(h, port.as_deref(), "", target)
            })
            .collect()
    }

    /// `Invoke-Sqlcmd`: `-ServerInstance`, or the server of `-ConnectionString` (`Server=`,
    /// `Data Source=`, `Address=`, `Addr=`, `Network Address=`: SqlConnection.ConnectionString);
    /// neither is the default instance on this machine.
    pub(super) fn sqlcmd_hits(&mut self, row: &Client, args: &[String]) -> Vec<Hit> {
        let mut p = row.syntax.parse(args);
        for conn in p.get(&["connectionstring"]) {
            let server = conn.split(';').find_map(|pair| {
                let (k, v) = pair.split_once('=')?;
                let k = k.trim().to_ascii_lowercase();
                matches!(k.as_str(), "server" | "data source" | "address" | "addr" | "network address")
                    .then(|| v.trim().to_string())
            });
            p.opts.extend(server.map(|s| ("serverinstance".to_string(), s)));
        }
        self.standard(row, &p, &[])
    }
}

/// The PowerShell row of a cmdlet name (lowercase).
pub(super) fn find_ps(cmdlet: &str) -> Option<&'static Client> {
    super::super::clients::http::POWERSHELL.iter().find(|c| c.is(cmdlet))
}
