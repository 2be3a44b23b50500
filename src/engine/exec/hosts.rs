//! Stage 6: host classification, URLs and `host:port` lists, and whether a host is the Pod itself.

#[allow(unused_imports)]
use super::*;

/// Where a host points, as far as the webhook can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum HostClass {
    /// Loopback, Unix socket, omitted host, the Pod's own IP/name.
    Local,
    /// Any other statically known host.
    Remote,
    /// Depends on a value unknown at admission.
    Unresolved,
}

/// A parsed `scheme://[userinfo@]host[:port][,host[:port]...][/path]` URL.
pub(super) struct Url {
    pub(super) scheme: String,
    pub(super) hosts: Vec<(String, Option<String>)>,
    /// Path, query and fragment (starting with `/`, `?` or `#`), possibly empty.
    pub(super) path: String,
}

pub(super) fn parse_url(s: &str) -> Option<Url> {
    let (scheme, rest) = s.split_once("://")?;
    if scheme.is_empty() || !scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    {
        return None;
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    let hostlist = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let hosts = hostlist.split(',').map(split_host_port).collect();
    Some(Url { scheme: scheme.to_ascii_lowercase(), hosts, path: path.to_string() })
}

/// Split `host[:port]`, `[v6]:port`, bare IPv6.
pub(super) fn split_host_port(s: &str) -> (String, Option<String>) {
    if let Some(rest) = s.strip_prefix('[')
        && let Some((h, after)) = rest.split_once(']')
    {
        let port = after.strip_prefix(':').map(str::to_string);
        return (h.to_string(), port);
    }
    if s.matches(':').count() == 1
        && let Some((h, p)) = s.split_once(':')
    {
        return (h.to_string(), Some(p.to_string()));
    }
    (s.to_string(), None)
}

/// Hosts named by an option value: a URL, or a comma-separated `[user@]host[:port]` list
/// (a `/chroot` or `/db` suffix is ignored; a leading `/` is a socket path).
pub(super) fn hosts_of(v: &str) -> Vec<String> {
    if v.starts_with('/') {
        return vec![v.to_string()];
    }
    v.split(',')
        .map(|item| {
            let item = item.trim();
            if let Some(u) = parse_url(item) {
                return u.hosts.into_iter().next().map(|h| h.0).unwrap_or_default();
            }
            let item = item.split('/').next().unwrap_or("");
            let item = item.rsplit_once('@').map_or(item, |(_, h)| h);
            split_host_port(item).0
        })
        .collect()
}

/// Well-known ports of dependency families, used to refine generic network clients.
pub(super) fn port_category(port: &str) -> Option<DependencyCategory> {
    use DependencyCategory::*;
    Some(match port {
        "5432" | "3306" | "27017" | "9042" | "26257" | "1433" | "1521" | "7687" | "8123" => Database,
        "6379" | "26379" | "11211" => Cache,
        "5672" | "5671" | "9092" | "4222" | "61616" | "1883" => Queue,
        "2181" | "2379" => Coordination,
        "9200" | "9300" => Search,
        "8500" | "8600" => ServiceDiscovery,
        "8200" => Secrets,
        _ => return None,
    })
}

impl Ctx<'_> {
    /// Classify a host (already free of `Lit` markers).
    pub(super) fn classify(&self, host: &str) -> HostClass {
        let h = host.trim();
        let h = h.strip_prefix('[').and_then(|x| x.strip_suffix(']')).unwrap_or(h);
        let lower = h.to_ascii_lowercase();
        let lower = lower.strip_suffix('.').unwrap_or(&lower);
        if lower.is_empty()
            || lower.starts_with('/')
            || lower.starts_with('@')
            || lower.starts_with("unix:")
            || lower.starts_with("%2f")
        {
            return HostClass::Local;
        }
        let mut chars = lower.chars();
        let first = chars.next();
        let rest: String = chars.collect();
        let kinds: Vec<&RefKind> = lower.chars().filter_map(|c| self.ref_of(c)).map(|r| &r.kind).collect();
        let has_marker = lower.chars().any(|c| marker_index(c).is_some());
        if kinds.iter().any(|k| matches!(k, RefKind::Unresolved | RefKind::UnresolvedCmd))
            || lower.contains(['$', '`'])
            || (has_marker && kinds.is_empty())
        {
            return HostClass::Unresolved;
        }
        if let Some(r) = first.and_then(|c| self.ref_of(c)) {
            let rest_plain = !rest.chars().any(|c| marker_index(c).is_some());
            let ok = match r.kind {
                RefKind::SelfIp => rest.is_empty(),
                RefKind::SelfHost | RefKind::SelfName => {
                    rest_plain && (rest.is_empty() || rest.starts_with('.'))
                }
                _ => false,
            };
            return if ok { HostClass::Local } else { HostClass::Unresolved };
        }
        if has_marker {
            return HostClass::Unresolved;
        }
        if matches!(lower, "localhost" | "localhost.localdomain" | "ip6-localhost" | "ip6-loopback")
            || lower.ends_with(".localhost")
        {
            return HostClass::Local;
        }
        if let Ok(ip) = lower.parse::<Ipv4Addr>() {
            return if ip.is_loopback() || ip.is_unspecified() {
                HostClass::Local
            } else {
                HostClass::Remote
            };
        }
        if let Ok(ip) = lower.parse::<Ipv6Addr>() {
            let v4_local = ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback() || v4.is_unspecified());
            return if ip.is_loopback() || ip.is_unspecified() || v4_local {
                HostClass::Local
            } else {
                HostClass::Remote
            };
        }
        // Shorthand loopback forms such as `127.1`.
        if lower.starts_with("127.") && lower.chars().all(|c| c.is_ascii_digit() || c == '.') {
            return HostClass::Local;
        }
        HostClass::Remote
    }

    /// The kind of the first unresolved reference in `s`, to explain a target.
    pub(super) fn unresolved_note(&self, s: &str) -> Option<&'static str> {
        for c in s.chars() {
            match self.ref_of(c).map(|r| &r.kind) {
                Some(RefKind::Unresolved) => return Some("not a literal env value"),
                Some(RefKind::UnresolvedCmd) => return Some("command output"),
                _ => {}
            }
        }
        if s.contains("$(") || s.contains('$') {
            return Some("not a literal env value");
        }
        None
    }
}

/// Hosts named in a PostgreSQL connection string (URI or `key=value` conninfo).
pub(super) fn pg_conninfo_hosts(c: &str) -> Vec<String> {
    if let Some(u) = parse_url(c) {
        if u.scheme != "postgres" && u.scheme != "postgresql" {
            return Vec::new();
        }
        let mut hosts: Vec<String> = u.hosts.into_iter().map(|h| h.0).collect();
        if let Some((_, query)) = u.path.split_once('?') {
            let q: Vec<String> = query
                .split('&')
                .filter_map(|kv| kv.split_once('='))
                .filter(|(k, _)| *k == "host" || *k == "hostaddr")
                .flat_map(|(_, v)| v.split(',').map(str::to_string).collect::<Vec<_>>())
                .collect();
            if !q.is_empty() {
                hosts = q;
            }
        }
        return hosts;
    }
    if !c.contains('=') {
        return Vec::new();
    }
    c.split_whitespace()
        .filter_map(|t| t.split_once('='))
        .filter(|(k, _)| *k == "host" || *k == "hostaddr")
        .flat_map(|(_, v)| v.trim_matches('\'').split(',').map(str::to_string).collect::<Vec<_>>())
        .collect()
}

/// Category of a generic network client's destination, and whether it is a dependency
/// whatever the host (a local Consul agent still answers from the catalog).
pub(super) fn net_category(host_shown: &str, port: Option<&str>, path: &str) -> (DependencyCategory, bool) {
    use DependencyCategory::*;
    let pl = path.to_ascii_lowercase();
    if pl.contains("/_cluster/health") || pl.contains("/_cat/health") {
        return (Search, false);
    }
    if port == Some("8500") && ["/v1/health", "/v1/catalog", "/v1/agent"].iter().any(|p| pl.starts_with(p)) {
        return (ServiceDiscovery, true);
    }
    let hl = host_shown.to_ascii_lowercase();
    if hl.starts_with("kubernetes.default") || hl.contains("kubernetes_service_host") {
        return (ControlPlane, false);
    }
    if hl == "169.254.169.254"
        || hl == "metadata.google.internal"
        || [".amazonaws.com", ".googleapis.com", ".azure.com", ".windows.net"].iter().any(|d| hl.ends_with(d))
    {
        return (CloudApi, false);
    }
    (port.and_then(port_category).unwrap_or(Network), false)
}

/// (host, port, path) of a curl/wget/httpie URL argument; no scheme means `http://`.
pub(super) fn url_parts(u: &str) -> (String, Option<String>, String) {
    if let Some(p) = parse_url(u) {
        let (h, port) = p.hosts.into_iter().next().unwrap_or_default();
        let port = port.or_else(|| match p.scheme.as_str() {
            "http" | "ws" => Some("80".to_string()),
            "https" | "wss" => Some("443".to_string()),
            _ => None,
        });
        return (h, port, p.path);
    }
    let end = u.find(['/', '?', '#']).unwrap_or(u.len());
    let (authority, path) = u.split_at(end);
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (h, port) = split_host_port(authority);
    (h, port.or_else(|| Some("80".to_string())), path.to_string())
}
