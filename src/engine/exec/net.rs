//! Stage 5 (continued): the generic HTTP and TCP clients whose command line needs code (curl,
//! wget, httpie, socat); their rows are in [`super::clients::http`].

use super::DependencyCategory::Network;
use super::clients::{Client, Hit, Parsed};
use super::context::Ctx;
use super::hosts::{net_category, port_not_a_number, split_host_port, url_parts};

/// The hits of a client given URLs it may refuse ([`Hit::bad_url`]): when `fatal` says a refused
/// URL decides its status (it then fails every time, whatever it reaches), only the refused ones,
/// so the probe is reported as failing every time; else the others (a refused URL reaches nothing
/// and does not decide the status).
fn refused_urls_decide(mut hits: Vec<Hit>, fatal: impl Fn(&[Hit]) -> bool) -> Vec<Hit> {
    let keep_refused = fatal(&hits);
    hits.retain(|h| h.bad_url == keep_refused);
    hits
}

impl Ctx<'_> {
    /// A hit for a generic client reaching `host[:port]` with an optional request path.
    pub(super) fn net_hit(&self, host: &str, port: Option<&str>, path: &str, target: String) -> Hit {
        let (cat, always) = net_category(&self.render_orig(host), port, path);
        let mut h = Hit::new(cat, vec![host.to_string()], target);
        h.always = always;
        h
    }

    /// A hit for an HTTP request to URL `u` (its path kept, for the aggregate health paths).
    pub(super) fn request_hit(&self, u: &str) -> Hit {
        let (h, port, path) = url_parts(u);
        let mut hit = self.net_hit(&h, port.as_deref(), &path, u.to_string());
        hit.path = Some(path);
        hit
    }

    /// Proxies of row `c` given in `p` (none when empty).
    fn proxy_hits(c: &Client, p: &Parsed) -> Vec<Hit> {
        p.get(c.proxy_opts).iter().filter(|x| !x.is_empty()).map(|x| Hit::proxy(x)).collect()
    }

    /// GNU Wget, BusyBox and toybox wget (their options are GNU's names, but toybox's `-p` is
    /// `--post-data=DATA` where GNU's is the `--page-requisites` switch: a word after `-p` that
    /// is no URL, followed by one that is, is toybox's data, not a host).
    pub(super) fn wget(&mut self, c: &Client, a: &[String]) -> Vec<Hit> {
        let mut a = a.to_vec();
        if let Some(k) = a.iter().position(|w| w == "-p")
            && a.get(k + 1).is_some_and(|w| !w.contains("://"))
            && a[k + 2..].iter().any(|w| w.contains("://"))
        {
            a.remove(k + 1);
        }
        let p = c.syntax.parse(&a);
        self.note_input_file("wget", &p, &["i", "input-file"]);
        let mut hits = Vec::new();
        for e in p.get(&["e", "execute"]) {
            if let Some((k, v)) = e.split_once('=')
                && (k.eq_ignore_ascii_case("http_proxy") || k.eq_ignore_ascii_case("https_proxy"))
            {
                hits.push(Hit::proxy(v));
            }
        }
        let bounded = wget2_tries_bounded(&p);
        let outage_passes = (c.names.contains(&"wget2") && bounded).then_some(WGET2_EXITS_0);
        let status_unknown = (c.names.contains(&"wget") && bounded).then_some(WGET_MAY_BE_WGET2);
        hits.extend(p.pos.iter().map(|u| Hit {
            bad_url: port_not_a_number(u),
            outage_passes,
            status_unknown,
            ..self.request_hit(u)
        }));
        // Wget exits 1 when any URL failed (GNU Wget 1.21: a refused URL, then a served one: 1).
        refused_urls_decide(hits, |h| h.iter().any(|h| h.bad_url))
    }

    pub(super) fn httpie(&mut self, c: &Client, a: &[String]) -> Vec<Hit> {
        let p = c.syntax.parse(a);
        let mut hits: Vec<Hit> = p
            .get(&["proxy"])
            .iter()
            .map(|px| Hit::proxy(px.split_once(':').map_or(px.as_str(), |(_, u)| u)))
            .collect();
        if p.has(c.local_opts) {
            return hits;
        }
        let mut pos = p.pos.iter();
        let mut url = pos.next();
        if url.is_some_and(|m| !m.is_empty() && m.chars().all(|c| c.is_ascii_uppercase())) {
            url = pos.next();
        }
        if let Some(u) = url {
            if let Some(local) = u.strip_prefix(':') {
                // `:8080/path` is localhost shorthand.
                let path = local.find('/').map_or("", |i| &local[i..]);
                let mut hit = Hit::new(Network, vec![String::new()], u.clone());
                hit.path = Some(path.to_string());
                hits.push(hit);
                return hits;
            }
            hits.push(self.request_hit(u));
        }
        hits
    }

    /// A client told to read its URLs or options from a file or standard input (`wget -i FILE`,
    /// `curl -K FILE`): what it reaches from there is not analysed, and said so (never a finding).
    fn note_input_file(&mut self, program: &str, p: &Parsed, opts: &[&str]) {
        if let Some(file) = p.get(opts).first() {
            let file = self.render_orig(file);
            let from = if file == "-" { "standard input".to_string() } else { format!("`{file}`") };
            self.note_unresolved(
                &format!("{program} -{} {file}", opts[0]),
                format!("{program} reads URLs or options from {from}: where it connects from there is not analysed"),
            );
        }
    }

    pub(super) fn curl(&mut self, c: &Client, a: &[String]) -> Vec<Hit> {
        let p = c.syntax.parse(a);
        self.note_input_file("curl", &p, &["K", "config"]);
        let noproxy_all = p.get(&["noproxy"]).iter().any(|v| v.trim() == "*");
        let mut hits = if noproxy_all { Vec::new() } else { Self::proxy_hits(c, &p) };
        if p.has(c.local_opts) {
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
            let mut hit = self.net_hit(&dest, dest_port.as_deref(), &path, target);
            hit.path = Some(path);
            hit.bad_url = port_not_a_number(&u);
            hits.push(hit);
        }
        // curl 7.88's status is its last transfer's (a refused URL, then a served one: 0; the
        // other way round: 3), or the first failure's with `--fail-early`.
        let fail_early = p.has(&["fail-early"]);
        refused_urls_decide(hits, |h| {
            h.last().is_some_and(|l| l.bad_url) || fail_early && h.iter().any(|h| h.bad_url)
        })
    }

    pub(super) fn socat(&mut self, a: &[String]) -> Vec<Hit> {
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

/// Why a wget2 whose tries are bounded is a warning. Measured on Debian 12's wget2 1.99.1 (a
/// refused connection or a name that does not resolve, `-t 1` or `--tries=2`: exit 0 at once) and
/// reported for 2.1.0 (rockdaboot/wget2#309, "Exit status is 0 even when there is an error"). With
/// its default 20 tries (waiting up to `--waitretry`, 10 s, between them) a refused connection
/// kept it running 190 s before it exited 0, past any real `timeoutSeconds`: still a denial.
const WGET2_EXITS_0: &str =
    "wget2 exits 0 when it cannot connect once its --tries are spent (1.99.1, 2.1.0: rockdaboot/wget2#309)";

/// Why a `wget` whose tries are bounded is a warning: the program named `wget` is GNU Wget 1.x on
/// Debian, Ubuntu and Alpine's wget package, but wget2 on Fedora 40 and later (Fedora change
/// "Wget2 as wget"; its `wget2-wget` package). Measured here with a refused port, a name that does
/// not resolve and an HTTP 500, each with `-t 1`: GNU Wget 1.21.3 exits 4, 4 and 8, wget2 1.99.1
/// exits 0 each time ([`WGET2_EXITS_0`]). Which one the image holds is known only at run time.
/// Without `--tries` both fail the probe (GNU Wget at once, wget2 by retrying past it): a denial.
const WGET_MAY_BE_WGET2: &str = "the image's wget (Fedora 40+'s, wget2, exits 0)";

/// Whether wget2's `-t N`/`--tries=N` (or `-e tries=N`) bounds its tries: any value but `0` or
/// `inf` (unlimited, wget2.md "--tries").
fn wget2_tries_bounded(p: &Parsed) -> bool {
    let mut tries = p.get(&["t", "tries"]);
    tries.extend(p.get(&["e", "execute"]).into_iter().filter_map(|e| {
        let (k, v) = e.split_once('=')?;
        k.trim().eq_ignore_ascii_case("tries").then(|| v.trim().to_string())
    }));
    tries.last().is_some_and(|t| t != "0" && !t.eq_ignore_ascii_case("inf"))
}
