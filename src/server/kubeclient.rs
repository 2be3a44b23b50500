//! The Kubernetes client of `serve` (Namespace watch, `--resolve-configmaps`, `--self-managed-tls`)
//! and `audit`: kube's inferred configuration (in-cluster, else `KUBECONFIG` or `~/.kube/config`)
//! with `NO_PROXY` honoured for the API server.
//!
//! kube 5.0.0 takes a kubeconfig's `proxy-url`, else `HTTPS_PROXY`, and matches `NO_PROXY` against
//! the proxy's own address, not the API server's (kube-client `config/file_loader.rs`,
//! `ConfigLoader::proxy_url`): a platform engineer with `NO_PROXY` covering the cluster still had
//! every request sent to the proxy. Here `NO_PROXY` (else `no_proxy`) is matched against the API
//! server's host as curl and Go's `httpproxy` do: `*`, a host name and its subdomains (`example.com`,
//! `.example.com`, `*.example.com`), an IP address, a CIDR range, each optionally with `:port`.
//!
//! kube 5.0.0 also refuses to build a client at all when a proxy is set and one `NO_PROXY` entry
//! does not parse (kube-client `config/no_proxy.rs`): an empty one (`localhost,`) or a bad CIDR
//! range (`10.0.0.0/99`). curl and Go skip empty entries, and Go reads an entry that is not a CIDR
//! range as a host name (which no host matches). `probegate` rewrites `NO_PROXY` before any client
//! is built ([`no_proxy_env_fix`], applied by `main` while the process has one thread) and warns
//! what it skipped.

use std::net::IpAddr;
use std::str::FromStr;

/// A client for the inferred configuration, with [`honour_no_proxy`] applied.
///
/// # Errors
/// No configuration can be inferred, or the client cannot be built from it.
pub async fn client() -> Result<kube::Client, kube::Error> {
    let config = kube::Config::infer().await.map_err(kube::Error::InferConfig)?;
    kube::Client::try_from(honour_no_proxy(config))
}

/// `config` without its proxy when `NO_PROXY` (else `no_proxy`) covers the API server's host.
pub fn honour_no_proxy(mut config: kube::Config) -> kube::Config {
    if config.proxy_url.is_some() {
        let no_proxy = ["NO_PROXY", "no_proxy"]
            .iter()
            .filter_map(|name| std::env::var(name).ok())
            .find(|v| !v.trim().is_empty());
        if let Some(no_proxy) = no_proxy
            && let Some(host) = config.cluster_url.host()
        {
            let port = config.cluster_url.port_u16().unwrap_or(443);
            if no_proxy_covers(&no_proxy, host, port) {
                config.proxy_url = None;
            }
        }
    }
    config
}

/// Whether `e` says only that there is nothing to connect to: not in a cluster
/// (`KUBERNETES_SERVICE_HOST` unset) and no kubeconfig file (`KUBECONFIG`, else `~/.kube/config`,
/// absent). Any other failure (a kubeconfig that does not load, an unusable proxy, a missing
/// service-account token) is a configuration to fix, worth a warning.
pub fn is_unconfigured(e: &kube::Error) -> bool {
    use kube::config::KubeconfigError;
    let kube::Error::InferConfig(e) = e else { return false };
    let kubeconfig = std::error::Error::source(e).and_then(|s| s.downcast_ref::<KubeconfigError>());
    std::env::var_os("KUBERNETES_SERVICE_HOST").is_none()
        && match kubeconfig {
            Some(KubeconfigError::FindPath) => true,
            Some(KubeconfigError::ReadConfig(io, _)) => io.kind() == std::io::ErrorKind::NotFound,
            _ => false,
        }
}

/// The `NO_PROXY` rewrite [`no_proxy_env_fix`] asks for: the variables to set, and the warning
/// naming what was skipped.
#[derive(Debug, PartialEq, Eq)]
pub struct NoProxyFix {
    /// `(name, value)` pairs to set in the environment.
    pub set: Vec<(&'static str, String)>,
    /// The warning to log (entries shown without any `user:password@`).
    pub warning: String,
}

/// The rewrite of `NO_PROXY` (else `no_proxy`, the first that is not blank, as kube and Go read
/// them) that lets kube 5.0.0 build its client: entries it cannot parse are left out, as curl and
/// Go leave them out or never match them (empty entries; entries that are neither an IP address, a
/// CIDR range nor a host name, such as `10.0.0.0/99`); a `*` among other entries becomes `*` alone
/// (Go's reading; kube refuses it). `None` when nothing needs changing. `var` reads a variable.
pub fn no_proxy_env_fix(var: impl Fn(&str) -> Option<String>) -> Option<NoProxyFix> {
    let (name, raw) = ["NO_PROXY", "no_proxy"]
        .into_iter()
        .find_map(|name| var(name).filter(|v| !v.trim().is_empty()).map(|v| (name, v)))?;
    let entries: Vec<&str> = raw.split(',').map(str::trim).collect();
    let value = if entries.contains(&"*") {
        "*".to_string()
    } else {
        entries.iter().copied().filter(|e| kube_reads(e)).collect::<Vec<_>>().join(",")
    };
    let skipped: Vec<&str> = entries.iter().copied().filter(|e| !kube_reads(e) && *e != "*").collect();
    if value == raw.trim() || (skipped.is_empty() && value != "*") {
        return None;
    }
    let mut set = vec![(name, value.clone())];
    if name == "NO_PROXY" && value.is_empty() {
        // kube would fall back to no_proxy; Go reads only the first variable that is not empty.
        set.push(("no_proxy", String::new()));
    }
    let shown: Vec<String> = skipped
        .iter()
        .map(|e| match e.rsplit_once('@') {
            Some((_, host)) => format!("{:?}", format!("***@{host}")),
            None => format!("{e:?}"),
        })
        .collect();
    let warning = if skipped.is_empty() {
        format!("{name}: a \"*\" entry covers every host; reading {name} as \"*\"")
    } else {
        format!(
            "{name}: skipped {} {} that curl and Go skip or never match (empty, or not a host name, an IP address or a CIDR range): {}",
            skipped.len(),
            if skipped.len() == 1 { "entry" } else { "entries" },
            shown.join(", ")
        )
    };
    Some(NoProxyFix { set, warning })
}

/// Whether kube 5.0.0 parses `entry` as a `NO_PROXY` matcher (kube-client `config/no_proxy.rs`,
/// `NoProxyMatcher::from_str`): a CIDR range, an IP address, or a URI with a host.
fn kube_reads(entry: &str) -> bool {
    !entry.is_empty()
        && (ipnet::IpNet::from_str(entry).is_ok()
            || IpAddr::from_str(entry).is_ok()
            || (!entry.contains('@')
                && http::Uri::from_str(entry).is_ok_and(|u| {
                    // Not a host name: user info (`u:pw@host`, which Go compares as written and
                    // never matches) or a port that is not a number (`.example.com:abc`, which
                    // `Uri` reads as having no port).
                    let authority = u.authority().map_or("", |a| a.as_str());
                    let port = authority.rsplit_once(']').map_or(authority, |(_, p)| p).rsplit_once(':');
                    u.host().is_some() && port.is_none_or(|(_, p)| p.parse::<u16>().is_ok())
                })))
}

/// Whether a `NO_PROXY` value covers `host` (a name, an IP address, or a bracketed IPv6 address)
/// at `port`: comma-separated entries, blanks around them ignored.
pub fn no_proxy_covers(no_proxy: &str, host: &str, port: u16) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']').trim_end_matches('.').to_ascii_lowercase();
    let ip: Option<IpAddr> = host.parse().ok();
    no_proxy.split(',').map(str::trim).filter(|e| !e.is_empty()).any(|entry| {
        if entry == "*" {
            return true;
        }
        // A CIDR range or an address (IPv6 ones bracketed when they carry a port).
        if let Some((net, bits)) = entry.split_once('/') {
            return match (ip, net.parse::<IpAddr>(), bits.parse::<u32>()) {
                (Some(ip), Ok(net), Ok(bits)) => in_range(ip, net, bits),
                _ => false,
            };
        }
        let (name, entry_port) = split_port(entry);
        if entry_port.is_some_and(|p| p != port) {
            return false;
        }
        let name = name.trim_start_matches('[').trim_end_matches(']');
        if let (Some(ip), Ok(entry_ip)) = (ip, name.parse::<IpAddr>()) {
            return ip == entry_ip;
        }
        let name =
            name.trim_start_matches('*').trim_start_matches('.').trim_end_matches('.').to_ascii_lowercase();
        !name.is_empty() && (host == name || host.ends_with(&format!(".{name}")))
    })
}

/// `name:port` split at a port that is all digits (`[::1]:6443`, `api.example.com:6443`); an
/// unbracketed IPv6 address has no port.
fn split_port(entry: &str) -> (&str, Option<u16>) {
    if entry.matches(':').count() > 1 && !entry.starts_with('[') {
        return (entry, None);
    }
    match entry.rsplit_once(':') {
        Some((name, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => {
            (name, port.parse().ok())
        }
        _ => (entry, None),
    }
}

/// Whether `ip` is in `net/bits` (same family only).
fn in_range(ip: IpAddr, net: IpAddr, bits: u32) -> bool {
    match (ip, net) {
        (IpAddr::V4(ip), IpAddr::V4(net)) if bits <= 32 => {
            let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
            u32::from(ip) & mask == u32::from(net) & mask
        }
        (IpAddr::V6(ip), IpAddr::V6(net)) if bits <= 128 => {
            let mask = u128::MAX.checked_shl(128 - bits).unwrap_or(0);
            u128::from(ip) & mask == u128::from(net) & mask
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::{NoProxyFix, no_proxy_covers, no_proxy_env_fix};

    fn fix(no_proxy: Option<&str>, lower: Option<&str>) -> Option<NoProxyFix> {
        no_proxy_env_fix(|name| match name {
            "NO_PROXY" => no_proxy.map(str::to_string),
            "no_proxy" => lower.map(str::to_string),
            _ => None,
        })
    }

    /// Break-it pass (s15): `NO_PROXY=localhost,`, `,127.0.0.1` or `10.0.0.0/99` made kube 5.0.0
    /// refuse to build the client; the entries curl and Go skip are left out, and named.
    #[test]
    fn no_proxy_entries_kube_refuses_are_left_out_and_named() {
        for untouched in
            [None, Some(""), Some("  "), Some("localhost,10.0.0.0/8"), Some("*"), Some(" a.example , b ")]
        {
            assert_eq!(fix(untouched, None), None, "{untouched:?}");
        }
        let f = fix(Some("localhost,"), None).unwrap();
        assert_eq!(f.set, vec![("NO_PROXY", "localhost".to_string())]);
        assert!(f.warning.contains("skipped 1 entry") && f.warning.contains("\"\""), "{}", f.warning);
        let f = fix(Some(",127.0.0.1, 10.0.0.0/99 ,.svc"), Some("x")).unwrap();
        assert_eq!(f.set, vec![("NO_PROXY", "127.0.0.1,.svc".to_string())]);
        assert!(
            f.warning.contains("skipped 2 entries") && f.warning.contains("\"10.0.0.0/99\""),
            "{}",
            f.warning
        );
        // no_proxy when NO_PROXY is empty, as kube and Go read them.
        let f = fix(Some(""), Some("10.0.0.1/33,10.0.0.1")).unwrap();
        assert_eq!(f.set, vec![("no_proxy", "10.0.0.1".to_string())]);
        // Nothing left: NO_PROXY empty, and no_proxy not read in its place.
        let f = fix(Some(","), Some("10.0.0.1")).unwrap();
        assert_eq!(f.set, vec![("NO_PROXY", String::new()), ("no_proxy", String::new())]);
        // `*` among entries covers everything (Go); kube refuses it unless alone.
        let f = fix(Some("localhost,*"), None).unwrap();
        assert_eq!(f.set, vec![("NO_PROXY", "*".to_string())]);
        // s16 break-it pass: user info and a port that is not a number are skipped and named too.
        let f = fix(Some("localhost,u:S3cr3t@db.svc,.example.com:abc,api.example.com:6443"), None).unwrap();
        assert_eq!(f.set, vec![("NO_PROXY", "localhost,api.example.com:6443".to_string())]);
        assert!(
            f.warning.contains("skipped 2 entries") && f.warning.contains("\".example.com:abc\""),
            "{}",
            f.warning
        );
        assert!(f.warning.contains("\"***@db.svc\"") && !f.warning.contains("S3cr3t"), "{}", f.warning);
        // A skipped entry's user info is never shown.
        let f = fix(Some("http://u:S3cr3t@proxy:3128/x y,localhost"), None).unwrap();
        assert!(!f.warning.contains("S3cr3t"), "{}", f.warning);
        assert!(f.warning.contains("***@proxy:3128/x y"), "{}", f.warning);
    }

    #[test]
    fn no_proxy_entries_match_as_curl_and_go_read_them() {
        for (no_proxy, host, port, covered) in [
            ("*", "10.0.0.1", 6443, true),
            ("10.0.0.1", "10.0.0.1", 6443, true),
            ("10.0.0.2", "10.0.0.1", 6443, false),
            ("localhost, 10.0.0.0/8", "10.96.0.1", 443, true),
            ("10.0.0.0/8", "11.0.0.1", 443, false),
            ("example.com", "api.example.com", 6443, true),
            (".example.com", "api.example.com", 6443, true),
            ("*.example.com", "api.example.com", 6443, true),
            ("example.com", "notexample.com", 6443, false),
            ("api.example.com:6443", "api.example.com", 6443, true),
            ("api.example.com:443", "api.example.com", 6443, false),
            ("::1", "[::1]", 6443, true),
            ("[::1]:6443", "[::1]", 6443, true),
            ("fd00::/8", "[fd12::1]", 6443, true),
            ("", "10.0.0.1", 6443, false),
            ("10.0.0.1/33", "10.0.0.1", 6443, false),
        ] {
            assert_eq!(no_proxy_covers(no_proxy, host, port), covered, "{no_proxy:?} {host}:{port}");
        }
    }
}
