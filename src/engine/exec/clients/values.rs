//! How the host options of some formats name their host: gRPC targets and SQL Server servers.

/// The `host[:port]` a gRPC target names (gRPC docs, "gRPC Name Resolution", naming.md): `dns:`
/// with an optional `//AUTHORITY/` (the DNS server asked, not the one reached: `dns:///svc:50051`
/// and `dns://10.0.0.10:53/svc:50051` reach svc), `passthrough:///`, the first of an `ipv4:` or
/// `ipv6:` address list; `""` (this machine) for `unix:`, `unix-abstract:` and `vsock:`; the
/// value itself without one of those schemes (grpc-go dials an unregistered scheme's whole target
/// with its default resolver).
pub(super) fn grpc_endpoint(v: &str) -> &str {
    let Some((scheme, rest)) = v.split_once(':') else {
        return v;
    };
    let rest = match rest.strip_prefix("//") {
        Some(r) => r.split_once('/').map_or("", |(_, endpoint)| endpoint),
        None => rest,
    };
    match scheme {
        "dns" | "passthrough" => rest,
        "ipv4" | "ipv6" => rest.split(',').next().unwrap_or(""),
        "unix" | "unix-abstract" | "vsock" => "",
        _ => v,
    }
}

/// The host of a SQL Server server value, `[protocol:]host[\\instance][,port]` (sqlcmd `-S`,
/// Invoke-Sqlcmd `-ServerInstance`, a connection string's `Server=`): the protocol prefix is
/// `tcp:`, `np:`, `lpc:` or `admin:` (sqlcmd-utility, "-S"), an IPv6 host is bare (`::1`) or
/// bracketed (`[::1],1433`), and `np:\\\\HOST\\pipe\\...` is a named pipe on HOST.
pub(super) fn sql_server_host(v: &str) -> &str {
    let s = match v.split_once(':') {
        Some((proto, rest))
            if ["tcp", "np", "lpc", "admin"].iter().any(|p| proto.eq_ignore_ascii_case(p)) =>
        {
            rest
        }
        _ => v,
    };
    let s = s.trim_start_matches('\\');
    if let Some(inner) = s.strip_prefix('[')
        && let Some((h, _)) = inner.split_once(']')
    {
        return h;
    }
    s.split([',', '\\']).next().unwrap_or("")
}
