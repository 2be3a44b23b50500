//! Stage 5 (continued): generic HTTP and TCP clients (curl, wget, httpie, nc, socat, openssl, gRPC) and other database CLIs.

#[allow(unused_imports)]
use super::*;

impl Ctx<'_> {
    /// A hit for a generic client reaching `host[:port]` with an optional request path.
    pub(super) fn net_hit(&self, host: &str, port: Option<&str>, path: &str, target: String) -> Hit {
        let (cat, always) = net_category(&self.render_orig(host), port, path);
        let mut h = Hit::new(cat, vec![host.to_string()], target);
        h.always = always;
        h
    }

    /// Generic network clients and other database CLIs.
    pub(super) fn network_hits(&mut self, name: &str, a: &[String]) -> Vec<Hit> {
        use DependencyCategory::*;
        match name {
            "curl" => self.curl(a),
            "wget" => {
                let p = getopt(a, "OoaeitTwPUQlARDIXBY", "", WGET_LONG);
                let mut hits = Vec::new();
                for e in p.get(&["e", "execute"]) {
                    if let Some((k, v)) = e.split_once('=')
                        && (k.eq_ignore_ascii_case("http_proxy") || k.eq_ignore_ascii_case("https_proxy"))
                    {
                        hits.push(Hit::new(Network, hosts_of(v), format!("proxy {v}")));
                    }
                }
                for u in &p.pos {
                    let (h, port, path) = url_parts(u);
                    hits.push(self.net_hit(&h, port.as_deref(), &path, u.clone()));
                }
                hits
            }
            "http" | "https" | "xh" | "xhs" => {
                let p = getopt(a, "paAos", "", HTTPIE_LONG);
                let mut hits = Vec::new();
                for px in p.get(&["proxy"]) {
                    let url = px.split_once(':').map_or(px.as_str(), |(_, u)| u);
                    hits.push(Hit::new(Network, hosts_of(url), format!("proxy {url}")));
                }
                if p.has(&["unix-socket"]) {
                    return hits;
                }
                let mut pos = p.pos.iter();
                let mut url = pos.next();
                if url.is_some_and(|m| !m.is_empty() && m.chars().all(|c| c.is_ascii_uppercase())) {
                    url = pos.next();
                }
                if let Some(u) = url {
                    if u.starts_with(':') {
                        return hits; // `:8080/path` is localhost shorthand
                    }
                    let (h, port, path) = url_parts(u);
                    hits.push(self.net_hit(&h, port.as_deref(), &path, u.clone()));
                }
                hits
            }
            "nc" | "ncat" | "netcat" => {
                let p = getopt(a, "IiMmOPpqsTVWwXxceGgo", "", NC_LONG);
                if p.has(&["l", "listen"]) {
                    return Vec::new();
                }
                let mut hits = Vec::new();
                let mut proxies = p.get(&["proxy"]);
                if name != "ncat" {
                    proxies.extend(p.get(&["x"]));
                }
                for px in proxies {
                    hits.push(Hit::new(Network, hosts_of(&px), format!("proxy {px}")));
                }
                if p.has(&["U", "unixsock"]) {
                    return hits;
                }
                if let Some(h) = p.pos.first() {
                    let port = p.pos.get(1).map(String::as_str);
                    let target = match port {
                        Some(pt) => format!("{h} {pt}"),
                        None => h.clone(),
                    };
                    hits.push(self.net_hit(h, port, "", target));
                }
                hits
            }
            "telnet" => {
                let p = getopt(a, "lnebSXk", "", &[]);
                let Some(h) = p.pos.first() else {
                    return Vec::new();
                };
                let port = p.pos.get(1).map(String::as_str);
                let target = format!("{h} {}", port.unwrap_or("23")).trim().to_string();
                vec![self.net_hit(h, port, "", target)]
            }
            "socat" => self.socat(a),
            "openssl" if a.first().is_some_and(|c| c == "s_client") => {
                let p = goflags(&a[1..], OPENSSL_VALS);
                let mut hits = Vec::new();
                for px in p.get(&["proxy"]) {
                    hits.push(Hit::new(Network, hosts_of(&px), format!("proxy {px}")));
                }
                if p.has(&["unix"]) {
                    return hits;
                }
                let mut dests = p.get(&["connect", "host"]);
                dests.extend(p.pos.iter().cloned());
                for d in dests {
                    let (h, port) = split_host_port(&d);
                    hits.push(self.net_hit(&h, port.as_deref(), "", d.clone()));
                }
                hits
            }
            "grpc_health_probe" => {
                let p = goflags(a, GRPC_HP_VALS);
                p.get(&["addr"])
                    .into_iter()
                    .map(|addr| {
                        let (h, port) = split_host_port(&addr);
                        self.net_hit(&h, port.as_deref(), "", addr.clone())
                    })
                    .collect()
            }
            "grpcurl" => {
                let p = goflags(a, GRPCURL_VALS);
                if p.has(&["unix"]) {
                    return Vec::new();
                }
                match p.pos.first() {
                    Some(addr) if !matches!(addr.as_str(), "list" | "describe") => {
                        let (h, port) = split_host_port(addr);
                        vec![self.net_hit(&h, port.as_deref(), "", addr.clone())]
                    }
                    _ => Vec::new(),
                }
            }
            "ping" | "ping6" => {
                let p = getopt(a, "cWwiIlmMpQsStTF", "", &[]);
                p.pos.first().map(|h| vec![self.net_hit(h, None, "", h.clone())]).unwrap_or_default()
            }
            "clickhouse-client" | "clickhouse" => {
                let args = if name == "clickhouse" {
                    match a.split_first() {
                        Some((c, rest)) if c == "client" => rest,
                        _ => return Vec::new(),
                    }
                } else {
                    a
                };
                let long = ["host", "port", "user", "password", "query", "database", "config-file"];
                let p = getopt(args, "hudqC", "", &long);
                option_hits(Database, &p, &["h", "host"])
            }
            "cockroach" => {
                let long = ["host", "url", "certs-dir", "port", "user", "database", "execute", "format"];
                let p = getopt(a, "ed", "", &long);
                option_hits(Database, &p, &["host", "url"])
            }
            "sqlcmd" => {
                let p = getopt(a, "SUPdQqlthsWwcbiovy", "", &[]);
                p.get(&["S"])
                    .into_iter()
                    .map(|srv| {
                        let s = srv.split_once(':').map_or(srv.as_str(), |(_, r)| r);
                        let host = s.split([',', '\\']).next().unwrap_or("").to_string();
                        let host = if host == "." || host.eq_ignore_ascii_case("(local)") {
                            String::new()
                        } else {
                            host
                        };
                        Hit::new(Database, vec![host], srv.clone())
                    })
                    .collect()
            }
            "cypher-shell" => {
                let long = ["address", "uri", "username", "password", "database", "file", "format"];
                let p = getopt(a, "aupdf", "", &long);
                option_hits(Database, &p, &["a", "address", "uri"])
            }
            "influx" => {
                let vals =
                    ["host", "port", "token", "org", "username", "password", "database", "execute", "format"];
                let p = goflags(a, &vals);
                option_hits(Database, &p, &["host"])
            }
            _ => Vec::new(),
        }
    }

    pub(super) fn curl(&mut self, a: &[String]) -> Vec<Hit> {
        use DependencyCategory::Network;
        let p = getopt(a, CURL_SHORT, "", CURL_LONG);
        let mut hits = Vec::new();
        let noproxy_all = p.get(&["noproxy"]).iter().any(|v| v.trim() == "*");
        let proxies = p.get(&["x", "proxy", "preproxy", "socks4", "socks4a", "socks5", "socks5-hostname"]);
        if !noproxy_all {
            for px in proxies.into_iter().filter(|px| !px.is_empty()) {
                hits.push(Hit::new(Network, hosts_of(&px), format!("proxy {px}")));
            }
        }
        if p.has(&["unix-socket", "abstract-unix-socket"]) {
            return hits;
        }
        let mut urls = p.get(&["url"]);
        urls.extend(
            p.pos.iter().filter(|u| !u.is_empty() && !u.chars().all(|c| c.is_ascii_digit())).cloned(),
        );
        let resolves = p.get(&["resolve"]);
        let connects = p.get(&["connect-to"]);
        for u in urls {
            let (host, port, path) = url_parts(&u);
            let mut dest = host.clone();
            let mut dest_port = port.clone();
            let mut note = None;
            for r in &resolves {
                let r = r.trim_start_matches('+');
                if r.starts_with('-') {
                    continue;
                }
                let mut parts = r.splitn(3, ':');
                let (rh, rp, addr) = (parts.next(), parts.next(), parts.next());
                if let (Some(rh), Some(rp), Some(addr)) = (rh, rp, addr) {
                    let host_ok = rh == "*" || rh.eq_ignore_ascii_case(&host);
                    if host_ok && port.as_deref() == Some(rp) {
                        let first = addr.split(',').next().unwrap_or("");
                        dest = first.trim_matches(['[', ']']).to_string();
                        note = Some(format!("resolved to {first}"));
                    }
                }
            }
            for c in &connects {
                let parts: Vec<&str> = c.split(':').collect();
                if let [h1, p1, h2, p2] = parts.as_slice() {
                    let host_ok = h1.is_empty() || h1.eq_ignore_ascii_case(&host);
                    let port_ok = p1.is_empty() || port.as_deref() == Some(*p1);
                    if host_ok && port_ok {
                        if !h2.is_empty() {
                            dest = h2.to_string();
                        }
                        if !p2.is_empty() {
                            dest_port = Some(p2.to_string());
                        }
                        note = Some(format!("connects to {h2}:{p2}"));
                    }
                }
            }
            let target = match note {
                Some(n) => format!("{u} ({n})"),
                None => u.clone(),
            };
            hits.push(self.net_hit(&dest, dest_port.as_deref(), &path, target));
        }
        hits
    }

    pub(super) fn socat(&mut self, a: &[String]) -> Vec<Hit> {
        use DependencyCategory::Network;
        let mut hits = Vec::new();
        let mut k = 0;
        while k < a.len() {
            let w = &a[k];
            k += 1;
            if w.len() > 1 && w.starts_with('-') {
                if matches!(w.as_str(), "-t" | "-T" | "-lf" | "-lp") {
                    k += 1;
                }
                continue;
            }
            let spec = w.split(',').next().unwrap_or("");
            let Some((kind, rest)) = spec.split_once(':') else {
                continue;
            };
            let kind = kind.to_ascii_uppercase();
            match kind.as_str() {
                "TCP" | "TCP4" | "TCP6" | "TCP-CONNECT" | "TCP4-CONNECT" | "TCP6-CONNECT" | "OPENSSL"
                | "OPENSSL-CONNECT" | "SSL" | "UDP" | "UDP4" | "UDP6" | "UDP-CONNECT" | "UDP-SENDTO" => {
                    let (h, port) = split_host_port(rest);
                    hits.push(self.net_hit(&h, port.as_deref(), "", rest.to_string()));
                }
                "SOCKS4" | "SOCKS4A" | "SOCKS5" | "PROXY" | "PROXY-CONNECT" => {
                    let proxy = rest.split(':').next().unwrap_or("");
                    hits.push(Hit::new(Network, vec![proxy.to_string()], format!("proxy {rest}")));
                }
                _ => {}
            }
        }
        hits
    }
}
