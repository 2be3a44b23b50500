//! Stage 6: host classification, URLs and `host:port` lists, and whether a host is the Pod itself.

use std::net::{Ipv4Addr, Ipv6Addr};

use super::context::{Ctx, Ref, RefKind, is_ident, marker_index};
use super::{DependencyCategory, EnvValue};

/// Where a host points, as far as the webhook can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum HostClass {
    /// Loopback, Unix socket, omitted host, the Pod's own IP/name.
    Local,
    /// Any other statically known host.
    Remote,
    /// Depends on a value unknown at admission.
    Unresolved,
    /// Depends on a script variable the analysis cannot follow ([`RefKind::Unknown`]): never a
    /// dependency (a miss at worst), noted instead.
    Unknown,
}

/// A parsed `scheme://[userinfo@]host[:port][,host[:port]...][/path]` URL.
pub(super) struct Url {
    pub(super) scheme: String,
    pub(super) hosts: Vec<(String, Option<String>)>,
    /// Path, query and fragment (starting with `/`, `?` or `#`), possibly empty.
    pub(super) path: String,
}

impl Url {
    /// The `name=value` pairs of the query, percent-decoded (`?host=a%2Cb` gives `host`, `a,b`).
    pub(super) fn query_pairs(&self) -> Vec<(String, String)> {
        let query = self.path.split_once('?').map_or("", |(_, q)| q);
        let query = query.split('#').next().unwrap_or("");
        url::form_urlencoded::parse(query.as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned())).collect()
    }
}

/// An ASCII stand-in for a marker character inside a URL given to the `url` crate (which would
/// percent-encode or refuse it): lowercase, so that host normalisation keeps it.
fn marker_stand_in(c: char) -> Option<String> {
    marker_index(c).map(|i| format!("zzpgm{i}zz"))
}

/// Replaces marker characters with their stand-ins.
fn hide_markers(s: &str) -> (String, bool) {
    let mut out = String::with_capacity(s.len());
    let mut any = false;
    for c in s.chars() {
        match marker_stand_in(c) {
            Some(m) => {
                any = true;
                out.push_str(&m);
            }
            None => out.push(c),
        }
    }
    (out, any)
}

/// Puts the marker characters back in place of their stand-ins.
fn restore_markers(s: &str, any: bool) -> String {
    if !any || !s.contains("zzpgm") {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find("zzpgm") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 5..];
        let digits = after.chars().take_while(char::is_ascii_digit).count();
        let marker = after[digits..]
            .starts_with("zz")
            .then(|| after[..digits].parse::<u32>().ok())
            .flatten()
            .and_then(|i| char::from_u32(super::context::MARKER_BASE + i));
        match marker {
            Some(m) => {
                out.push(m);
                rest = &after[digits + 2..];
            }
            None => {
                out.push_str("zzpgm");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// One `host[:port]` of a URL's authority, read by the `url` crate (WHATWG URL Standard: host
/// normalisation, so `http://0x7f.1/` and `http://2130706433/` are 127.0.0.1 as curl reads them,
/// percent-decoding, IPv6 brackets). A host the crate refuses (a port that is a variable) is
/// split as written.
fn parse_authority_item(scheme: &str, item: &str) -> (String, Option<String>) {
    let (hidden, any) = hide_markers(item);
    // (A scheme that is a variable is read as `http`'s for the host: the URL Standard's host
    // parsing of a special scheme, as curl reads `host` whatever the scheme.)
    let scheme = if scheme.chars().any(|c| marker_index(c).is_some()) { "http" } else { scheme };
    let parsed = url::Url::parse(&format!("{scheme}://{hidden}/"));
    match parsed {
        Ok(u) if u.host_str().is_some_and(|h| !h.is_empty()) || item.is_empty() => {
            let host = u.host_str().unwrap_or("");
            let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
            // Only a port written in the URL (a scheme's default is added by the caller).
            let written = u.port().map(|p| p.to_string()).or_else(|| {
                let (_, p) = split_host_port(item);
                p.filter(|p| p.parse::<u16>().is_ok())
            });
            (restore_markers(host, any), written)
        }
        _ => split_host_port(item),
    }
}

/// Parses a URL: `scheme://[userinfo@]host[:port][,host[:port]...][/path]`. Several hosts in one
/// authority (libpq, MongoDB, etcd) are split at commas, each host read by the `url` crate; the
/// scheme is checked and lowercased as the URL Standard says.
pub(super) fn parse_url(s: &str) -> Option<Url> {
    // JDBC URLs are the driver's URL behind a `jdbc:` prefix (`jdbc:postgresql://h:5432/db`).
    let s = s.get(..5).filter(|p| p.eq_ignore_ascii_case("jdbc:")).map_or(s, |_| &s[5..]);
    let (scheme, rest) = s.split_once("://")?;
    // A scheme held by a variable (`$SCHEME://127.0.0.1:8080/`, set to `http` or `https` in a
    // branch) is still a scheme: the host is what follows `://`, never the variable (s24).
    let variable = |c: char| marker_index(c).is_some();
    let mut chars = scheme.chars();
    if !chars.next().is_some_and(|c| c.is_ascii_alphabetic() || variable(c))
        || !chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.') || variable(c))
    {
        return None;
    }
    let scheme = scheme.to_ascii_lowercase();
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    let hostlist = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let hosts = hostlist.split(',').map(|item| parse_authority_item(&scheme, item)).collect();
    Some(Url { scheme, hosts, path: path.to_string() })
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
/// (a `/chroot` or `/db` suffix is ignored; a leading `/` is a socket path, also as an item of a
/// list: libpq's `host=/var/run/postgresql,db`).
pub(super) fn hosts_of(v: &str) -> Vec<String> {
    if v.starts_with('/') && !v.contains(',') {
        return vec![v.to_string()];
    }
    // One URL with several hosts (`postgres://a:5432,b:5432/db`); a list of URLs is split first.
    if v.matches("://").count() == 1
        && let Some(u) = parse_url(v.trim())
    {
        return u.hosts.into_iter().map(|h| h.0).collect();
    }
    v.split(',')
        .map(|item| {
            let item = item.trim();
            if item.starts_with('/') {
                return item.to_string();
            }
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
    /// The class of a host that is one variable set in a branch that may not run
    /// ([`RefKind::OneOf`]): [`HostClass::Local`] if every alternative is, [`HostClass::Remote`]
    /// if every one is (a value that may not hold is never denied on), [`HostClass::Unresolved`]
    /// otherwise, also with other text around it; `None` for a host without one.
    fn classify_alternatives(&self, host: &str) -> Option<HostClass> {
        let mut one_of = host.chars().filter_map(|c| match self.ref_of(c) {
            Some(Ref { kind: RefKind::OneOf(alts), .. }) => Some(alts),
            _ => None,
        });
        let alternatives = one_of.next()?;
        if host.chars().count() != 1 || alternatives.is_empty() {
            return Some(HostClass::Unresolved);
        }
        let classes: Vec<HostClass> =
            alternatives.iter().map(|a| self.classify(&self.render_lit(a))).collect();
        Some(if classes.iter().all(|c| *c == HostClass::Local) {
            HostClass::Local
        } else if classes.iter().all(|c| *c == HostClass::Remote) {
            HostClass::Remote
        } else {
            HostClass::Unresolved
        })
    }

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
        if let Some(class) = self.classify_alternatives(lower) {
            return class;
        }
        let kinds: Vec<&RefKind> = lower.chars().filter_map(|c| self.ref_of(c)).map(|r| &r.kind).collect();
        let has_marker = lower.chars().any(|c| marker_index(c).is_some());
        if kinds.iter().any(|k| matches!(k, RefKind::Unknown)) {
            return HostClass::Unknown;
        }
        if kinds.iter().any(|k| matches!(k, RefKind::Unresolved | RefKind::UnresolvedCmd | RefKind::PeerName))
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
                    if rest_plain && self.names_other_namespace(&rest) {
                        // `$(hostname).sub.other.svc`: the same hostname in another namespace is
                        // another Pod (s27 fresh user: it was taken for this Pod).
                        return HostClass::Remote;
                    }
                    rest_plain && (rest.is_empty() || rest.starts_with('.'))
                }
                _ => false,
            };
            return if ok { HostClass::Local } else { HostClass::Unresolved };
        }
        if has_marker {
            return HostClass::Unresolved;
        }
        if crate::engine::hosts::is_loopback_name(lower)
            || lower.ends_with(".localhost")
            || self.env.local_names.contains(lower)
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
        // An IPv6 zone id (`::1%lo`, `::1%25lo` as RFC 6874 writes it in a URL) names the
        // interface, not another host: the address decides.
        let lower = match lower.split_once('%') {
            Some((addr, _)) if addr.parse::<Ipv6Addr>().is_ok() => addr,
            _ => lower,
        };
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
        // A literal that no host name or address can be (ASCII punctuation or blanks: `)`, `a b`,
        // `*`; other characters may be an IDN): the client fails on it before reaching anything,
        // so it is no dependency. Unknown: never a denial.
        if !lower.chars().all(|c| !c.is_ascii() || c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'))
        {
            return HostClass::Unknown;
        }
        HostClass::Remote
    }

    /// Whether `rest`, what follows the Pod's own name or hostname in a host name
    /// (`.redis-headless.other.svc.cluster.local`), names a namespace other than the Pod's: the
    /// Pod DNS form `.<subdomain>.<namespace>.svc[...]` ("DNS for Services and Pods"). Only with
    /// the `svc` label written and the Pod's namespace known: `.sub`, `.sub.ns` (which the search
    /// list may complete either way) and the Pod's own namespace stay this Pod.
    fn names_other_namespace(&self, rest: &str) -> bool {
        let Some(own) = self.env.pod_namespace.as_deref() else { return false };
        let labels: Vec<&str> = rest.strip_prefix('.').unwrap_or("").split('.').collect();
        matches!(labels.as_slice(), [sub, ns, "svc", ..] if !sub.is_empty() && !ns.is_empty() && *ns != own)
    }

    /// Whether `host`, unresolved, is named by a variable that looks like a dependency's address
    /// (`$REDIS_HOST`, `${DATABASE_URL}`, `$(KAFKA_BROKERS)`, `$env:DB_HOST`, libpq's `PGHOST`). Such a
    /// host counts as remote; any other unresolved host (`$CACHE`, `$1`, command output) is unknown,
    /// and a finding on it is a warning, never a denial (docs/scripts.md, "Unknown hosts"; the rule
    /// catalog's `unresolved` policy).
    /// A variable of the node's address (`status.hostIP` without hostNetwork) counts as remote too.
    pub(super) fn names_dependency_variable(&self, host: &str) -> bool {
        host.chars().filter_map(|c| self.ref_of(c)).filter(|r| r.kind == RefKind::Unresolved).any(|r| {
            dependency_like_name(&r.original) || self.env.node_vars.contains(&variable_name(&r.original))
        }) || (dependency_like_name(host) && !self.holds_reference_left_as_written(host))
    }

    /// Whether `host` holds a `$(NAME)` the kubelet left as written ([`Self::kubelet_left_as_written`]):
    /// in a command no shell runs it is literal text, a name no resolver knows, so the probe always
    /// fails; it names no dependency, whatever `NAME` says (s13: `pg_isready -h $(DB_HOST)` with
    /// `DB_HOST` only in `envFrom` was denied).
    fn holds_reference_left_as_written(&self, host: &str) -> bool {
        host.match_indices("$(").any(|(at, _)| {
            host[at..]
                .find(')')
                .is_some_and(|end| self.kubelet_left_as_written(&host[at..=at + end]).is_some())
        })
    }

    /// Why the first unresolved reference in `s` is unknown, to explain a target: where an env
    /// variable's value comes from (`from the Pod's status.hostIP, set at run time`), an argument,
    /// an unset variable, command output.
    pub(super) fn unresolved_note(&self, s: &str) -> Option<String> {
        const UNKNOWN: &str = "not a literal env value";
        if let Some(r) = self.first_unknown_ref(s) {
            return Some(match &r.kind {
                RefKind::Unresolved => self.variable_note(&r.original),
                RefKind::UnresolvedCmd => {
                    // The kind also holds values of no command: what `read` got from a stdin the
                    // analysis does not have, an assignment an unknown shell may keep, arithmetic.
                    let o = &r.original;
                    let substitution = (o.starts_with("$(") && !o.starts_with("$(("))
                        || o.starts_with('`')
                        || o.starts_with("<(")
                        || o.starts_with(">(");
                    let what = if substitution { "command output" } else { "unknown value" };
                    self.kubelet_left_as_written(o).unwrap_or_else(|| what.into())
                }
                RefKind::Unknown => "a script variable not known at admission".into(),
                RefKind::OneOf(alts) if alts.is_empty() => "set in branches that may not run".into(),
                RefKind::OneOf(alts) => {
                    let shown: Vec<String> =
                        alts.iter().map(|a| self.render_orig(&self.render_lit(a))).collect();
                    let shown: Vec<String> =
                        shown.into_iter().map(|a| if a.is_empty() { "empty".into() } else { a }).collect();
                    format!("one of {}: set in a branch that may not run", shown.join(", "))
                }
                _ => "made from this Pod's name: another Pod (`-0` is replica 0, this Pod only there)".into(),
            });
        }
        if let Some(escaped) = self.kubelet_escaped.iter().find(|e| s.contains(e.as_str())) {
            // No shell: the client gets the text itself, which no resolver knows.
            return Some(format!("the kubelet makes `${escaped}` the text `{escaped}`, no host name"));
        }
        if let Some((copied, var)) = self.kubelet_copied.iter().find(|(e, _)| s.contains(e.as_str())) {
            // (s27: the probe's `$(VAR)` gets VAR's value as written, not expanded again.)
            return Some(format!(
                "the kubelet copies {var}'s value into the probe's command as written, so `{copied}` there is text, no host name"
            ));
        }
        if s.contains("$(") || s.contains('$') {
            return Some(UNKNOWN.into());
        }
        None
    }

    /// The first reference in `s` whose value is not known here (an unresolved variable, command
    /// output, a script variable, a peer's name): the one [`Self::unresolved_note`] explains.
    fn first_unknown_ref(&self, s: &str) -> Option<&Ref> {
        s.chars().find_map(|c| {
            self.ref_of(c).filter(|r| {
                matches!(
                    r.kind,
                    RefKind::Unresolved
                        | RefKind::UnresolvedCmd
                        | RefKind::Unknown
                        | RefKind::PeerName
                        | RefKind::OneOf(_)
                )
            })
        })
    }

    /// Whether the note [`Self::unresolved_note`] gives on `s` is that of a kubelet `$(NAME)`
    /// reference left as written or made of a `$$(NAME)` escape ([`Self::kubelet_left_as_written`]):
    /// the host is then the output of a command named `NAME`, empty where the image has no such
    /// command (bash and dash: "DB_HOST: not found"), not a value known only at run time.
    pub(super) fn host_is_command_output(&self, s: &str) -> bool {
        self.first_unknown_ref(s).is_some_and(|r| {
            r.kind == RefKind::UnresolvedCmd && self.kubelet_left_as_written(&r.original).is_some()
        })
    }

    /// For a command substitution written like the kubelet's `$(NAME)` reference (`$(HOSTNAME)`,
    /// a name with a capital letter) whose variable the container's env does not declare: the
    /// kubelet leaves such a reference as written ("If a variable cannot be resolved, the
    /// reference in the input string will be unchanged": Kubernetes API, Container `command`
    /// and `args`; docs, "Define Dependent Environment Variables"), so the shell then runs `NAME`
    /// as a command substitution.
    /// Also for the text `$(NAME)` the kubelet makes of a `$$(NAME)` escape (Kubernetes docs,
    /// "Define a Command and Arguments for a Container": `$$` is a literal `$`), `NAME` in env or
    /// not: the shell runs `NAME` as a command, as bash and dash do.
    fn kubelet_left_as_written(&self, original: &str) -> Option<String> {
        let name = original.strip_prefix("$(")?.strip_suffix(')')?;
        if self.kubelet_escaped.iter().any(|e| e == original) {
            return Some(format!(
                "the kubelet makes `${original}` the text `{original}`, so the shell runs a command named `{name}`"
            ));
        }
        if let Some((_, var)) = self.kubelet_copied.iter().find(|(e, _)| e == original) {
            return Some(format!(
                "the kubelet copies `$({var})`'s value into the probe's command as written (`{original}` is not expanded there), so the shell runs a command named `{name}`"
            ));
        }
        let kubelet_like = is_ident(name) && name.chars().any(|c| c.is_ascii_uppercase());
        // (A name only `envFrom` sets is not in the kubelet's map either.)
        let in_env = self.env.vars.contains_key(name) && !self.env.env_from_only.contains(name);
        let env_from = if self.env.has_env_from || self.env.env_from_only.contains(name) {
            " (envFrom does not count for a probe's command)"
        } else {
            ""
        };
        (kubelet_like && !in_env).then(|| {
            format!(
                "{name} not in env{env_from}: the kubelet leaves `{original}` as written, so the shell runs a command named `{name}`"
            )
        })
    }

    /// Why the variable written `original` (`$X`, `${X:-d}`, `$(X)`, `$1`, `$env:X`) is unknown.
    fn variable_note(&self, original: &str) -> String {
        let name = variable_name(original);
        if name.is_empty() {
            let inner = original.strip_prefix('$').unwrap_or(original).trim_start_matches(['{', '(']);
            return match inner.chars().next() {
                Some('@' | '*' | '#') => "the script's arguments, unknown here".into(),
                Some('?' | '$' | '!' | '-') => "a shell special parameter, set at run time".into(),
                _ => "not a literal env value".into(),
            };
        }
        if name.chars().all(|c| c.is_ascii_digit()) {
            return if name == "0" {
                "the script's name, unknown here".into()
            } else {
                format!("argument {name} of the script or function, unknown here")
            };
        }
        // PowerShell reads env names in any case.
        let entry = self
            .env
            .vars
            .get_key_value(&name)
            .or_else(|| self.env.vars.iter().find(|(k, _)| k.eq_ignore_ascii_case(&name)));
        match entry {
            Some((key, EnvValue::Unresolved)) => {
                self.env.unresolved_from.get(key).cloned().unwrap_or_else(|| "not a literal env value".into())
            }
            Some(_) => "not a literal env value".into(),
            None if self.env.has_env_from => "not in env: envFrom may set it at run time".into(),
            None => "not in the container's env; no value known here".into(),
        }
    }
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

/// Whether curl and wget refuse the `http://` or `https://` URL `u` before connecting: its
/// authority (RFC 3986: up to the first `/`, `?` or `#`) holds no `@` and gives a port, after its
/// one `:`, that is written out and is not a number. So reads a password with a raw `/`, `?` or
/// `#` (`http://u:pw/x@h/`: host `u`, port `pw`): curl 7.88 exits 3 ("URL using bad/illegal
/// format or missing URL"), GNU Wget 1.21 exits 1 ("Bad port number"), whatever any server does.
/// A port holding a variable (a marker, `$`) is not known here: `false`.
pub(super) fn port_not_a_number(u: &str) -> bool {
    let Some((scheme, rest)) = u.split_once("://") else {
        return false;
    };
    if !(scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")) {
        return false;
    }
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let Some((host, port)) = authority.split_once(':') else {
        return false;
    };
    !host.is_empty()
        && !authority.contains(['@', '[', '$', '`'])
        && !port.contains(':')
        && port.chars().all(|c| c.is_ascii_graphic())
        && port.chars().any(|c| !c.is_ascii_digit())
}

/// (host, port, path) of a curl/wget/httpie URL argument; no scheme means `http://` (as curl
/// and wget read it), and a scheme's default port is given (`http`: 80, `https`: 443).
pub(super) fn url_parts(u: &str) -> (String, Option<String>, String) {
    let Some(p) = parse_url(u).or_else(|| parse_url(&format!("http://{u}"))) else {
        return (String::new(), None, String::new());
    };
    let (h, port) = p.hosts.into_iter().next().unwrap_or_default();
    let port = port.or_else(|| match p.scheme.as_str() {
        "http" | "ws" => Some("80".to_string()),
        "https" | "wss" => Some("443".to_string()),
        _ => None,
    });
    (h, port, p.path)
}

/// Whether a variable name (or a text holding one) looks like a dependency's address: a service
/// word (`DB`, `REDIS`, `KAFKA`, ...) followed, with or without `_`, by an address word (`HOST`,
/// `ADDR`, `URL`, `URI`, `SERVER`, `ENDPOINT`, `BROKER(S)`), anywhere in the name, case-insensitive.
/// This is the rule catalog's `(?i)(DB|DATABASE|PG|...)_?(HOST|ADDR|...)` test, unanchored.
pub(super) fn dependency_like_name(text: &str) -> bool {
    const SERVICES: [&str; 20] = [
        "DB",
        "DATABASE",
        "PG",
        "POSTGRES",
        "MYSQL",
        "MARIADB",
        "REDIS",
        "MONGO",
        "CASSANDRA",
        "KAFKA",
        "BROKER",
        "AMQP",
        "RABBIT",
        "NATS",
        "ES",
        "ELASTIC",
        "CACHE",
        "UPSTREAM",
        "MASTER",
        "PRIMARY",
    ];
    const ADDRESSES: [&str; 7] = ["HOST", "ADDR", "URL", "URI", "SERVER", "ENDPOINT", "BROKER"];
    let upper = text.to_ascii_uppercase();
    SERVICES.iter().any(|service| {
        upper.match_indices(service).any(|(i, _)| {
            let after = &upper[i + service.len()..];
            let after = after.strip_prefix('_').unwrap_or(after);
            ADDRESSES.iter().any(|a| after.starts_with(a))
        })
    })
}

/// The variable a reference names: `REDIS_HOST` of `$REDIS_HOST`, `${REDIS_HOST:-x}`,
/// `$(REDIS_HOST)` or PowerShell's `$env:REDIS_HOST`; `1` of `$1`; empty for `$@`, `$?`.
fn variable_name(original: &str) -> String {
    let inner = original.strip_prefix('$').unwrap_or(original).trim_start_matches(['{', '(']);
    // PowerShell's `$env:X` (any case).
    let inner = match inner.get(..4) {
        Some(p) if p.eq_ignore_ascii_case("env:") => &inner[4..],
        _ => inner,
    };
    inner.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect()
}

#[cfg(test)]
mod tests {
    use super::super::clients::databases::pg_conninfo_hosts;
    use super::super::context::MARKER_BASE;
    use super::super::{ExecEnv, find_dependency};
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn urls_with_several_hosts_user_info_and_prefixes() {
        let u = parse_url("postgres://u:p@h1:5432,h2:5433/db?sslmode=require").unwrap();
        assert_eq!(u.scheme, "postgres");
        assert_eq!(u.hosts, vec![("h1".into(), Some("5432".into())), ("h2".into(), Some("5433".into()))]);
        assert_eq!(u.path, "/db?sslmode=require");
        assert_eq!(hosts_of("redis://:secret@cache.svc:6379/0"), vec!["cache.svc"]);
        assert_eq!(hosts_of("rediss://default:pw@cache.svc"), vec!["cache.svc"]);
        assert_eq!(hosts_of("mongodb+srv://u:p@cluster0.example.net/db"), vec!["cluster0.example.net"]);
        assert_eq!(hosts_of("mongodb://a:27017,b:27017/?replicaSet=rs0"), vec!["a", "b"]);
        assert_eq!(hosts_of("jdbc:postgresql://localhost:5432/db"), vec!["localhost"]);
        assert_eq!(hosts_of("JDBC:mysql://db.svc:3306/x"), vec!["db.svc"]);
        assert_eq!(hosts_of("http://a:2379,http://b:2379"), vec!["a", "b"]);
        assert_eq!(hosts_of("a:2379,b:2379"), vec!["a", "b"]);
        assert_eq!(hosts_of("/var/run/redis.sock"), vec!["/var/run/redis.sock"]);
        // libpq's `host` query parameter wins over the authority, percent-decoded.
        assert_eq!(
            pg_conninfo_hosts("postgresql://u@/db?host=%2Fvar%2Frun%2Fpostgresql"),
            vec!["/var/run/postgresql"]
        );
        assert_eq!(pg_conninfo_hosts("postgresql://u@x/db?host=a,b&port=1"), vec!["a", "b"]);
        assert_eq!(pg_conninfo_hosts("host=a,b port=5432"), vec!["a", "b"]);
        assert!(pg_conninfo_hosts("mysql://a/b").is_empty());
        assert!(parse_url("not a url").is_none());
        assert!(parse_url("1x://h").is_none());
    }

    #[test]
    fn http_urls_are_read_as_clients_read_them() {
        let parts = |u: &str| {
            let (h, p, path) = url_parts(u);
            (h, p.unwrap_or_default(), path)
        };
        // WHATWG host normalisation: what curl connects to.
        assert_eq!(parts("http://0x7f.1:8080/health"), ("127.0.0.1".into(), "8080".into(), "/health".into()));
        assert_eq!(parts("http://2130706433/"), ("127.0.0.1".into(), "80".into(), "/".into()));
        assert_eq!(parts("http://%6c%6fcalhost/x"), ("localhost".into(), "80".into(), "/x".into()));
        assert_eq!(parts("HTTP://LOCALHOST:80/x"), ("localhost".into(), "80".into(), "/x".into()));
        assert_eq!(parts("https://[::1]/x?y#z"), ("::1".into(), "443".into(), "/x?y#z".into()));
        assert_eq!(
            parts("https://u:p@api.example.com:8443"),
            ("api.example.com".into(), "8443".into(), String::new())
        );
        // No scheme: http.
        assert_eq!(
            parts("localhost:8080/actuator/health"),
            ("localhost".into(), "8080".into(), "/actuator/health".into())
        );
        assert_eq!(parts("db.svc/x"), ("db.svc".into(), "80".into(), "/x".into()));
        // A value the webhook does not know stays the marker that stands for it.
        let m = char::from_u32(MARKER_BASE + 5).unwrap();
        assert_eq!(parts(&format!("http://{m}:8080/x")), (m.to_string(), "8080".into(), "/x".into()));
        assert_eq!(parts(&format!("http://{m}.ns.svc/x")).0, format!("{m}.ns.svc"));
        assert_eq!(parts(&format!("http://db:{m}/x")), ("db".into(), m.to_string(), "/x".into()));
    }

    /// A URL curl and wget refuse: http(s), one `:` in an authority without `@`, `[` or a
    /// variable, a written port that is not a number (curl 7.88.1: exit 3 for each `true` row).
    #[test]
    fn a_port_that_is_not_a_number_is_refused() {
        for (url, refused) in [
            ("http://u:pw/x@h/", true),
            ("HTTPS://u:pw?x@h/", true),
            ("http://db:abc", true),
            ("ftp://u:pw/x@h/", false),
            ("u:pw/x@h/", false),
            ("http://u:80/x@h/", false),
            ("http://u:/x@h/", false),
            ("http://:pw/x", false),
            ("http://u:p@w/", false),
            ("http://[::1]:pw/", false),
            ("http://u:$PORT/", false),
            ("http://a:b:c/", false),
            ("http://u:p\u{E000}w/", false),
        ] {
            assert_eq!(port_not_a_number(url), refused, "{url}");
        }
    }

    #[test]
    fn url_forms_fire_and_stay_quiet_as_their_hosts_say() {
        let fires = |argv: &[&str]| find_dependency(&s(argv), &ExecEnv::default()).is_some();
        assert!(fires(&["psql", "postgresql://u@localhost,orders-db/db", "-c", "select 1"]));
        assert!(!fires(&["psql", "postgresql://u@localhost,127.0.0.1:5433/db", "-c", "select 1"]));
        assert!(fires(&["redis-cli", "-u", "redis://:pw@cache.svc:6379/0", "ping"]));
        assert!(!fires(&["redis-cli", "-u", "redis://:pw@127.0.0.1:6379/0", "ping"]));
        assert!(fires(&["mongosh", "mongodb+srv://cluster0.example.net/", "--eval", "1"]));
        assert!(
            fires(&["mongosh", "mongodb+srv://localhost/", "--eval", "1"]),
            "SRV asks DNS whatever the name"
        );
        // Local seeds of a replica set: the shell discovers the set and runs the command on its
        // primary, known only at run time (issue #10): a warning, never a denial.
        let set = ["mongosh", "mongodb://localhost:27017,127.0.0.1:27018/?replicaSet=rs", "--eval", "1"];
        let d = find_dependency(&s(&set), &ExecEnv::default());
        assert!(d.is_some_and(|d| d.unknown_host), "{set:?}");
        assert!(!fires(&["mongosh", "mongodb://localhost:27017/?directConnection=true", "--eval", "1"]));
        assert!(fires(&[
            "mongosh",
            "mongodb://localhost:27017,mongo-1.mongo:27017/?replicaSet=rs",
            "--eval",
            "1"
        ]));
        assert!(!fires(&["curl", "-f", "http://0x7f.1:8080/healthz"]));
        assert!(!fires(&["curl", "-f", "http://2130706433:8080/healthz"]));
        assert!(fires(&["curl", "-f", "http://orders.svc:8080/healthz"]));
        assert!(fires(&["cockroach", "sql", "--url", "postgresql://root@crdb-public:26257/db"]));
        assert!(!fires(&["cockroach", "sql", "--url", "postgresql://root@localhost:26257/db"]));
    }
}
