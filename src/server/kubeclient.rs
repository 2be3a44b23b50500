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

use std::net::IpAddr;

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
    use super::no_proxy_covers;

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
