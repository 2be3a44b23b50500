//! Where an `httpGet.host` or `tcpSocket.host` of a probe points.
//!
//! The kubelet runs network probes from the node's network namespace (Kubernetes docs, "Configure
//! Liveness, Readiness and Startup Probes", `host` field): without `hostNetwork` any host, even
//! `127.0.0.1`, is the node and not the pod. With `hostNetwork: true` the pod *is* on the node's
//! network, so a local address is the pod, and an address the container itself is told to bind or
//! advertise (its flags, its env) is the container (kubeadm's kube-apiserver probes
//! `host: <its --advertise-address>`, rules.md §1.1.2). Any other IP literal may still be one of
//! the node's own addresses, so it is at most a warning there.

use std::net::IpAddr;

use k8s_openapi::api::core::v1::Container;

/// What a probe `host` is, as far as the manifest can tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ProbeHost {
    /// Empty: the pod's IP (the default).
    PodIp,
    /// A loopback or unspecified address, or a `localhost` name: the node's own stack.
    Local,
    /// An address the container is told to bind or advertise (its flags or env say so).
    OwnAddress,
    /// The Pod's own host name ([`own_host_names`]): only the Pod's `/etc/hosts` maps it to the
    /// Pod's IP; the kubelet resolves `host` on the node, where it may not resolve at all.
    OwnName,
    /// A `$(VAR)` or `${VAR}` reference: the kubelet does not expand it in `host`.
    Unexpanded,
    /// Some other IP literal.
    OtherIp,
    /// A Kubernetes Service name (`*.svc`, `*.svc.cluster.local`): the node cannot resolve it.
    ServiceName,
    /// Any other DNS name.
    OtherName,
}

/// The names `/etc/hosts` files give the loopback: the kubelet's (`localhost`, `ip6-localhost`,
/// `ip6-loopback`; pkg/kubelet/kubelet_pods.go, `managedHostsFileContent`) and those of RHEL-like
/// systems (`localhost.localdomain`, `localhost6`, `localhost6.localdomain6`). Where no hosts file
/// names one it resolves nowhere (the cluster DNS has no such name): it is never another host.
const LOOPBACK_NAMES: [&str; 6] = [
    "localhost",
    "localhost.localdomain",
    "localhost6",
    "localhost6.localdomain6",
    "ip6-localhost",
    "ip6-loopback",
];

/// Whether `name` (without the root dot, any case) is one of [`LOOPBACK_NAMES`].
pub(crate) fn is_loopback_name(name: &str) -> bool {
    LOOPBACK_NAMES.iter().any(|n| name.eq_ignore_ascii_case(n))
}

/// Loopback (127.0.0.0/8, `::1`, and their IPv4-mapped forms such as `::ffff:127.0.0.1`),
/// unspecified (`0.0.0.0`, `::`: connecting to it reaches the local host on Linux), or one of the
/// names `/etc/hosts` gives the loopback ([`LOOPBACK_NAMES`]), with or without the root dot
/// (`localhost.`).
pub(crate) fn is_local(host: &str) -> bool {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    let name = h.strip_suffix('.').unwrap_or(h);
    if is_loopback_name(name) {
        return true;
    }
    match h.parse::<IpAddr>() {
        Ok(IpAddr::V4(v4)) => v4.is_loopback() || v4.is_unspecified(),
        Ok(IpAddr::V6(v6)) => {
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback() || v4.is_unspecified())
        }
        Err(_) => false,
    }
}

/// Classifies a probe `host` of `container`, in a Pod whose own host names are `own`
/// ([`own_host_names`]).
pub(crate) fn classify(host: &str, container: &Container, own: &[String]) -> ProbeHost {
    let host = host.trim();
    if host.is_empty() {
        return ProbeHost::PodIp;
    }
    if host.contains("$(") || host.contains("${") {
        return ProbeHost::Unexpanded;
    }
    if is_local(host) {
        return ProbeHost::Local;
    }
    if own_address(host, container).is_some() {
        return ProbeHost::OwnAddress;
    }
    if own.iter().any(|n| same_host(n, host)) {
        return ProbeHost::OwnName;
    }
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if bare.parse::<IpAddr>().is_ok() {
        return ProbeHost::OtherIp;
    }
    let name = bare.strip_suffix('.').unwrap_or(bare).to_ascii_lowercase();
    if name.ends_with(".svc") || name.contains(".svc.") || name.ends_with(".cluster.local") {
        return ProbeHost::ServiceName;
    }
    ProbeHost::OtherName
}

/// The names the kubelet's `/etc/hosts` in the Pod's containers maps to the Pod's own IP
/// (lowercase), and the cluster DNS names that answer with this Pod's IP alone.
///
/// The kubelet writes `<pod IP> <hostname>`, and with `spec.subdomain`
/// `<pod IP> <hostname>.<subdomain>.<namespace>.svc.<cluster domain> <hostname>`
/// (pkg/kubelet/kubelet_pods.go, `managedHostsFileContent`). The hostname is `spec.hostname`, else
/// `metadata.name`, cut to 63 characters without a trailing `-` or `.` (`GeneratePodHostNameAndDomain`,
/// `truncatePodHostnameIfNeeded`); the cluster domain is taken to be the default `cluster.local`
/// (with another one that name is not in the file, and resolves nowhere). A resolver reads
/// `/etc/hosts` before DNS, so a command in the container reaches this Pod through these names.
/// `<hostname>.<subdomain>.<namespace>.svc` resolves through the DNS search list to the Pod's
/// A record (docs "DNS for Services and Pods", "Pod's hostname and subdomain fields"), which is
/// this Pod's alone only when the hostname is its unique name (a Pod whose hostname is its name):
/// replicas of a template share a `spec.hostname`.
///
/// None with `hostNetwork` (the containers get the node's `/etc/hosts`), for a StatefulSet
/// template (the controller names each Pod `<name>-<ordinal>` and sets its hostname and
/// subdomain over the template's, pkg/controller/statefulset `initIdentity`: the ordinal, so the
/// Pod's own name, is not known), and for another template without `spec.hostname` (the
/// workload's name is not its Pods' hostname).
pub(crate) fn own_host_names(workload: &super::Workload, namespace: &str) -> Vec<String> {
    let spec = &workload.spec;
    if spec.host_network == Some(true) || workload.kind == super::WorkloadKind::StatefulSet {
        return Vec::new();
    }
    let set = |s: &Option<String>| s.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_string);
    let name = if workload.kind.is_pod() { set(&workload.metadata.name) } else { None };
    let Some(hostname) = set(&spec.hostname).or_else(|| name.clone()) else { return Vec::new() };
    let mut hostname = hostname.to_ascii_lowercase();
    if hostname.len() > 63 {
        hostname = hostname.chars().take(63).collect::<String>().trim_end_matches(['-', '.']).to_string();
    }
    let mut names = vec![hostname.clone()];
    if let Some(sub) = set(&spec.subdomain) {
        let sub = sub.to_ascii_lowercase();
        let svc = format!("{hostname}.{sub}.{namespace}.svc");
        names.push(format!("{svc}.cluster.local"));
        if name.is_some_and(|n| n.eq_ignore_ascii_case(&hostname)) {
            names.push(svc);
        }
    }
    names
}

/// The host of an `http://` or `https://` URL (`[::1]` without brackets).
pub(crate) fn url_host(url: &str) -> Option<&str> {
    let rest = url.strip_prefix("http://").or_else(|| url.strip_prefix("https://"))?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    if let Some(v6) = authority.strip_prefix('[') {
        return v6.split(']').next();
    }
    authority.split(':').next()
}

/// A probe `host` as messages show it: user info (`u:pw@db`, which no host name holds) as URLs
/// show it, the password replaced (`u:***@db`), and user info without a `:` replaced whole
/// (`***@db`: it may be a token); `password=...`-like pairs redacted ([`super::exec::redact_secrets`]).
pub fn redact_host(host: &str) -> String {
    let host = match host.rsplit_once('@') {
        Some((userinfo, rest)) => match userinfo.split_once(':') {
            Some((user, _)) if !super::exec::token_as_user(userinfo) => format!("{user}:***@{rest}"),
            _ => format!("***@{rest}"),
        },
        None => host.to_string(),
    };
    super::exec::redact_secrets(&host)
}

/// What a probe reaches, as the readiness and startup messages name it: a URL (`scheme://...`) as
/// its host and port only (no user info, path, query or fragment: they may hold a token), a host
/// with user info (`u:pw@db`) without it, a note the analysis added in parentheses (`db (DB_HOST)`)
/// kept only when the whole fits `max` characters; the host cut between words at `max`
/// ([`super::cut_between_words`]) and what is left redacted ([`super::exec::redact_secrets`]).
/// Never cut inside the note, so parentheses stay balanced.
pub(crate) fn shown_target(target: &str, max: usize) -> String {
    let (host, note) = match target.split_once(" (") {
        Some((h, n)) if n.ends_with(')') => (h, Some(n)),
        _ => (target, None),
    };
    // Redacted first: a password with a raw `/` (`http://u:pw/x@h/`) ends the authority early.
    let redacted = super::exec::redact_secrets(host);
    let host = redacted.as_str();
    let host = match host.split_once("://") {
        Some((_, rest)) => rest.split(['/', '?', '#']).next().unwrap_or(rest),
        None => host,
    };
    let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
    let host = super::exec::redact_secrets(host);
    let shown = match note {
        Some(n) if host.chars().count() + n.chars().count() + 2 <= max => format!("{host} ({n}"),
        _ => host,
    };
    super::cut_between_words(&shown, max)
}

/// Whether a flag or variable name says its value is an address the process itself binds, listens
/// on or advertises: a part starting with `advertise`, `bind` or `listen` (`--advertise-address`,
/// `--bind-address`, `--listen-client-urls`, `BIND_ADDR`), or a whole name that is the process's own
/// address (`--address`, `-host`, `POD_IP`, `NODE_IP`, `HOST_IP`). `--db-host` or `--etcd-servers`
/// name someone else.
fn names_an_own_address(name: &str) -> bool {
    let n = name.to_ascii_lowercase().replace('_', "-");
    let n = n.trim_start_matches('-');
    let mut parts = n.split(|c: char| !c.is_ascii_alphanumeric());
    if parts.any(|p| ["advertise", "bind", "listen"].iter().any(|w| p.starts_with(w))) {
        return true;
    }
    [
        "address",
        "addr",
        "ip",
        "host",
        "hostname",
        "pod-ip",
        "node-ip",
        "host-ip",
        "node-address",
        "host-address",
        "public-ip",
        "internal-ip",
        "external-ip",
    ]
    .contains(&n)
}

/// The hosts in a flag or variable value: a comma-separated list of `host`, `host:port`,
/// `[v6]:port` or `scheme://host:port/...`.
fn hosts_in(value: &str) -> impl Iterator<Item = String> + '_ {
    value.split(',').filter_map(|item| {
        let item = item.trim();
        let rest = item.split_once("://").map_or(item, |(_, r)| r);
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
        let host = if let Some(v6) = authority.strip_prefix('[') {
            v6.split(']').next().unwrap_or("")
        } else if authority.matches(':').count() == 1 {
            authority.split(':').next().unwrap_or("")
        } else {
            authority
        };
        (!host.is_empty()).then(|| host.to_ascii_lowercase())
    })
}

fn same_host(a: &str, b: &str) -> bool {
    let norm = |h: &str| {
        let h = h.trim_start_matches('[').trim_end_matches(']');
        match h.parse::<IpAddr>() {
            Ok(ip) => ip.to_string(),
            Err(_) => h.strip_suffix('.').unwrap_or(h).to_ascii_lowercase(),
        }
    };
    norm(a) == norm(b)
}

/// The flag (`--advertise-address`) or variable (`env NODE_IP`) of `container` whose value names
/// `host` as an address it binds or advertises.
fn own_address(host: &str, container: &Container) -> Option<String> {
    // (Read in place: a container's command may be megabytes of words, s26.)
    let mut words = container
        .command
        .iter()
        .flatten()
        .chain(container.args.iter().flatten())
        .map(String::as_str)
        .peekable();
    while let Some(word) = words.next() {
        let Some(flag) = word.strip_prefix("--").or_else(|| word.strip_prefix('-')) else { continue };
        let (name, value) = match flag.split_once('=') {
            Some((n, v)) => (n, Some(v).filter(|v| !v.is_empty())),
            None => (flag, words.peek().copied().filter(|v| !v.starts_with('-'))),
        };
        if names_an_own_address(name)
            && let Some(value) = value
            && hosts_in(value).any(|h| same_host(&h, host))
        {
            return Some(format!("--{}", name.trim_start_matches('-')));
        }
    }
    for env in container.env.iter().flatten() {
        if names_an_own_address(&env.name)
            && let Some(value) = &env.value
            && hosts_in(value).any(|h| same_host(&h, host))
        {
            return Some(format!("env {}", env.name));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn container(args: &[&str], env: &[(&str, &str)]) -> Container {
        serde_json::from_value(serde_json::json!({
            "name": "c",
            "command": args,
            "env": env.iter().map(|(n, v)| serde_json::json!({"name": n, "value": v})).collect::<Vec<_>>(),
        }))
        .unwrap()
    }

    #[test]
    fn local_forms() {
        for h in [
            "127.0.0.1",
            "127.1.2.3",
            "::1",
            "[::1]",
            "0.0.0.0",
            "::",
            "localhost",
            "localhost.",
            "LOCALHOST",
        ] {
            assert!(is_local(h), "{h}");
        }
        for h in [
            "::ffff:127.0.0.1",
            "ip6-localhost",
            "localhost.localdomain.",
            "localhost6",
            "Localhost6.localdomain6",
        ] {
            assert!(is_local(h), "{h}");
        }
        for h in ["10.0.0.1", "::ffff:10.0.0.1", "localhost.example.com", "mylocalhost", "1.2.3.4"] {
            assert!(!is_local(h), "{h}");
        }
    }

    #[test]
    fn own_addresses_from_flags_and_env() {
        let c = container(&["kube-apiserver", "--advertise-address=192.168.1.10", "--secure-port=6443"], &[]);
        assert_eq!(classify("192.168.1.10", &c, &[]), ProbeHost::OwnAddress);
        assert_eq!(classify("192.168.1.11", &c, &[]), ProbeHost::OtherIp);
        let c =
            container(&["etcd", "--listen-client-urls=https://127.0.0.1:2379,https://10.1.2.3:2379"], &[]);
        assert_eq!(classify("10.1.2.3", &c, &[]), ProbeHost::OwnAddress);
        let c = container(&["agent", "--bind-address", "10.9.9.9"], &[("NODE_IP", "10.8.8.8")]);
        assert_eq!(classify("10.9.9.9", &c, &[]), ProbeHost::OwnAddress);
        assert_eq!(classify("10.8.8.8", &c, &[]), ProbeHost::OwnAddress);
        // A dependency's address in a flag is not the container's own.
        let c = container(&["api", "--db-server=10.7.7.7", "--etcd-servers=https://10.6.6.6:2379"], &[]);
        assert_eq!(classify("10.7.7.7", &c, &[]), ProbeHost::OtherIp);
        assert_eq!(classify("10.6.6.6", &c, &[]), ProbeHost::OtherIp);
        let c =
            container(&["--db-host=10.4.4.4"], &[("DB_PASSWORD", "10.5.5.5"), ("REDIS_ADDR", "10.3.3.3")]);
        assert_eq!(classify("10.5.5.5", &c, &[]), ProbeHost::OtherIp);
        assert_eq!(classify("10.4.4.4", &c, &[]), ProbeHost::OtherIp);
        assert_eq!(classify("10.3.3.3", &c, &[]), ProbeHost::OtherIp);
    }

    #[test]
    fn names() {
        let c = container(&[], &[]);
        assert_eq!(classify("", &c, &[]), ProbeHost::PodIp);
        assert_eq!(classify("$(POD_IP)", &c, &[]), ProbeHost::Unexpanded);
        assert_eq!(classify("pay.prod.svc.cluster.local", &c, &[]), ProbeHost::ServiceName);
        assert_eq!(classify("pay.prod.svc", &c, &[]), ProbeHost::ServiceName);
        assert_eq!(classify("api.example.com", &c, &[]), ProbeHost::OtherName);
        let own = ["web-1".to_string(), "web-1.web.shop.svc.cluster.local".to_string()];
        assert_eq!(classify("WEB-1.", &c, &own), ProbeHost::OwnName);
        assert_eq!(classify("web-1.web.shop.svc.cluster.local", &c, &own), ProbeHost::OwnName);
        assert_eq!(classify("web-0.web.shop.svc.cluster.local", &c, &own), ProbeHost::ServiceName);
        assert_eq!(classify("localhost", &c, &own), ProbeHost::Local);
    }

    #[test]
    fn hosts_are_shown_without_user_info_secrets() {
        assert_eq!(redact_host("u:pw@db.svc"), "u:***@db.svc");
        assert_eq!(redact_host("tok@db.svc"), "***@db.svc");
        assert_eq!(redact_host("a@b:pw@db.svc"), "a@b:***@db.svc");
        assert_eq!(redact_host("db.svc"), "db.svc");
    }
}
