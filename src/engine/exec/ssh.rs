//! OpenSSH's ssh(1) (https://man.openbsd.org/ssh.1, ssh_config(5)): besides its destination (the
//! client row in `clients/http.rs`), what a command line reaches: the jump hosts of `-J` or
//! `ProxyJump`, a `ProxyCommand` (a command ssh runs to connect), the `host:port` of `-W`; and
//! the remote command, which runs on the destination: when that is this Pod, it is a shell
//! command line like any other.

use super::DependencyCategory;
use super::clients::Hit;
use super::context::Ctx;
use super::hosts::{hosts_of, split_host_port};
use super::script::Overrides;
use super::{Dependency, MAX_DEPTH};

/// ssh's options that take a value (ssh(1), SYNOPSIS: `[-B bind_interface] [-b bind_address]
/// [-c cipher_spec] [-D port] [-E log_file] [-e escape_char] [-F configfile] [-I pkcs11]
/// [-i identity_file] [-J destination] [-L address] [-l login_name] [-m mac_spec] [-O ctl_cmd]
/// [-o option] [-P tag] [-p port] [-Q query_option] [-R address] [-S ctl_path] [-W host:port]
/// [-w local_tun[:remote_tun]]`).
const VALUE_LETTERS: &str = "BbcDEeFIiJLlmOoPpQRSWw";

/// An ssh command line: its options (letter, value; a flag's value is empty), the index of the
/// destination and of the remote command's first word.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct SshLine {
    pub(super) opts: Vec<(char, String)>,
    pub(super) dest: Option<usize>,
    pub(super) command: Option<usize>,
}

/// Reads `ssh [options] destination [command [argument ...]]`. ssh takes options after the
/// destination too (OpenSSH's ssh.c parses again from there), up to the first word that is not
/// one: that word starts the command, whose own options (`curl -sf`) are not ssh's.
pub(super) fn parse(words: &[String]) -> SshLine {
    let mut line = SshLine::default();
    let mut k = 0;
    while k < words.len() {
        let w = words[k].as_str();
        if w == "--" {
            k += 1;
        } else if w.len() > 1 && w.starts_with('-') {
            k += 1;
            for (at, c) in w.char_indices().skip(1) {
                if VALUE_LETTERS.contains(c) {
                    let attached = &w[at + c.len_utf8()..];
                    let value = if attached.is_empty() {
                        k += 1;
                        words.get(k - 1).cloned().unwrap_or_default()
                    } else {
                        attached.to_string()
                    };
                    line.opts.push((c, value));
                    break;
                }
                line.opts.push((c, String::new()));
            }
            continue;
        }
        if k >= words.len() {
            break;
        }
        if line.dest.is_none() {
            line.dest = Some(k);
            k += 1;
            continue;
        }
        line.command = Some(k);
        break;
    }
    line
}

/// The keyword and argument of an `-o` option, "separated by whitespace or optional whitespace and
/// exactly one `=`" (ssh_config(5)); keywords are case-insensitive (lowercased here).
fn config_option(v: &str) -> (String, &str) {
    let v = v.trim_start();
    let end = v.find(|c: char| c == '=' || c.is_whitespace()).unwrap_or(v.len());
    let (key, rest) = v.split_at(end);
    let rest = rest.trim_start();
    let rest = rest.strip_prefix('=').unwrap_or(rest).trim_start();
    (key.to_ascii_lowercase(), rest.trim_end())
}

/// How ssh connects to its destination: through jump hosts or a command, when the command line
/// says so. "Whichever is specified first will prevent later instances of the other from taking
/// effect" (ssh_config(5), `ProxyJump`), and `-J` "is a shortcut to specify a ProxyJump
/// configuration directive" (ssh(1)); `none` turns either off.
enum Proxy {
    Jump(String),
    Command(String),
}

fn proxy(opts: &[(char, String)]) -> Option<Proxy> {
    let found = opts.iter().find_map(|(c, v)| match c {
        'J' => Some(Proxy::Jump(v.clone())),
        'o' => match config_option(v) {
            (k, a) if k == "proxyjump" => Some(Proxy::Jump(a.to_string())),
            (k, a) if k == "proxycommand" => Some(Proxy::Command(a.to_string())),
            _ => None,
        },
        _ => None,
    })?;
    let value = match &found {
        Proxy::Jump(v) | Proxy::Command(v) => v,
    };
    (!value.is_empty() && !value.eq_ignore_ascii_case("none")).then_some(found)
}

/// A `ProxyCommand` with its tokens expanded (ssh_config(5), TOKENS: `%h` the remote host name,
/// `%p` the port, `%r` the remote user name, `%n` the host name as given, `%%` a `%`).
fn expand_tokens(cmd: &str, host: &str, given: &str, port: &str, user: &str) -> String {
    let mut out = String::new();
    let mut chars = cmd.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('h') => out.push_str(host),
            Some('n') => out.push_str(given),
            Some('p') => out.push_str(port),
            Some('r') => out.push_str(user),
            Some('%') => out.push('%'),
            Some(other) => {
                out.push('%');
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out
}

/// The first value of the `-o` option `keyword` (lowercase): "for each parameter, the first
/// obtained value will be used" (ssh_config(5)), the command line's `-o` options first of all.
/// (`none` is a value for `HostName`, `ssh -G -o HostName=none db` prints `hostname none`, and
/// unsets `RemoteCommand`: callers judge it.)
fn config_value<'v>(opts: &'v [(char, String)], keyword: &str) -> Option<&'v str> {
    let v =
        opts.iter().filter(|(c, _)| *c == 'o').map(|(_, v)| config_option(v)).find(|(k, _)| k == keyword)?.1;
    (!v.is_empty()).then_some(v)
}

/// `dest` with its host replaced by `host`, its port kept and its user name left out: a message
/// names the machine reached, not the account (`ssh admin@db` reaches `db`).
fn with_host(dest: &str, host: &str, port: Option<&str>) -> String {
    if dest.starts_with("ssh://") {
        let host = if host.contains(':') { format!("[{host}]") } else { host.to_string() };
        let port = port.map(|p| format!(":{p}")).unwrap_or_default();
        format!("ssh://{host}{port}")
    } else {
        host.to_string()
    }
}

/// A `-J`/`ProxyJump` list (`[user@]host[:port]` or `ssh://[user@]host[:port]`, comma-separated,
/// ssh(1) `-J`) without its user names.
fn without_users(jumps: &str) -> String {
    let hop = |j: &str| {
        let (scheme, rest) = j.strip_prefix("ssh://").map_or(("", j), |r| ("ssh://", r));
        format!("{scheme}{}", rest.rsplit_once('@').map_or(rest, |(_, h)| h))
    };
    jumps.split(',').map(hop).collect::<Vec<_>>().join(",")
}

/// `[user@]host[:port]` or `ssh://[user@]host[:port]`: (user, host, port).
fn destination_parts(dest: &str) -> (String, String, Option<String>) {
    let plain = dest.strip_prefix("ssh://").unwrap_or(dest);
    let plain = plain.split('/').next().unwrap_or(plain);
    let (user, hostport) = plain.rsplit_once('@').map_or((None, plain), |(u, h)| (Some(u), h));
    // A plain `host` may be an IPv6 address; only the URI form has a port.
    let (host, port) = if dest.starts_with("ssh://") {
        split_host_port(hostport)
    } else {
        (hostport.trim_start_matches('[').trim_end_matches(']').to_string(), None)
    };
    (user.unwrap_or_default().to_string(), host, port)
}

impl Ctx<'_> {
    /// ssh: its jump hosts, `ProxyCommand` and `-W` target, its destination, then the remote
    /// command when the destination is this Pod. `rest`: the words after `ssh`, rendered;
    /// `raw_rest`: the same words as found; `words`: the command as shown.
    pub(super) fn ssh(
        &mut self,
        rest: &[String],
        raw_rest: &[String],
        overrides: &Overrides,
        words: &[String],
        depth: usize,
    ) -> Option<Dependency> {
        if depth >= MAX_DEPTH {
            return None;
        }
        let line = parse(rest);
        let dest = line.dest.map(|d| rest[d].as_str()).unwrap_or_default();
        let (dest_user, dest_host, dest_port) = destination_parts(dest);
        let opt = |c: char| line.opts.iter().find(|(o, _)| *o == c).map(|(_, v)| v.clone());
        // "HostName: Specifies the real host name to log into ... Arguments to HostName accept
        // the tokens" `%h` and `%%` (ssh_config(5)): ssh connects there, not to the name given
        // (`ssh -G -o HostName=localhost db` prints `hostname localhost`).
        let real_host = match config_value(&line.opts, "hostname") {
            Some(h) => expand_tokens(h, &dest_host, &dest_host, "%p", "%r"),
            None => dest_host.clone(),
        };
        let mut through_command = false;
        match proxy(&line.opts) {
            // Each jump host is connected to in turn ("connecting to the target host by first
            // making an ssh connection to the jump host described by destination", ssh(1) `-J`):
            // one that is down fails ssh (exit 255).
            Some(Proxy::Jump(v)) => {
                let v = without_users(&v);
                let hit = Hit::new(DependencyCategory::Network, hosts_of(&v), format!("jump host {v}"));
                if let Some(d) = self.first_dependency("ssh", vec![hit], words) {
                    return Some(d);
                }
            }
            // "Specifies the command to use to connect to the server ... executed using the
            // user's shell `exec` directive" (ssh_config(5), `ProxyCommand`): a command line run
            // here, whose failure fails ssh. ssh itself then resolves and connects to nothing
            // (`ssh -v` prints "Executing proxy command: exec ..." and no "Connecting to"): the
            // destination is reached only as the proxy command reaches it (`%h`, the HostName).
            Some(Proxy::Command(cmd)) => {
                through_command = true;
                let port = opt('p').or(dest_port.clone()).unwrap_or_else(|| "22".to_string());
                let user = opt('l').unwrap_or(dest_user.clone());
                let cmd = expand_tokens(&cmd, &real_host, &dest_host, &port, &user);
                if let Some(d) = self.analyze_script(&cmd, depth + 1) {
                    return Some(d);
                }
            }
            None => {}
        }
        // `-W host:port`: "Requests that standard input and output on the client be forwarded to
        // host on port over the secure channel" (ssh(1)): the destination connects to it.
        if let Some(w) = opt('W') {
            let hit = Hit::new(DependencyCategory::Network, vec![split_host_port(&w).0], w.clone());
            if let Some(d) = self.first_dependency("ssh", vec![hit], words) {
                return Some(d);
            }
        }
        if !through_command {
            let mut rest = rest.to_vec();
            // The destination as shown: its host (the real one), never its user name.
            if let Some(d) = line.dest.filter(|_| real_host != dest_host || !dest_user.is_empty()) {
                rest[d] = with_host(dest, &real_host, dest_port.as_deref());
            }
            let hits = self.tool_hits("ssh", &rest, overrides);
            if let Some(d) = self.first_dependency("ssh", hits, words) {
                return Some(d);
            }
        }
        // The destination is this Pod: "If a command is specified, it will be executed on the
        // remote host instead of a login shell ... the arguments will be appended to the
        // command, separated by spaces, before it is sent to the server to be executed"
        // (ssh(1)), where sshd runs it with the user's login shell's `-c` (sshd(8), LOGIN
        // PROCESS), and "ssh exits with the exit status of the remote command" (ssh(1), EXIT
        // STATUS). It runs in the environment sshd gives the session, not the container's.
        // Without one on the command line, `-o RemoteCommand=...` is it ("Specifies a command to
        // execute on the remote machine after successfully connecting", ssh_config(5); with
        // both, ssh exits 255 "Cannot execute command-line and remote command").
        let command = match line.command {
            Some(at) => raw_rest.get(at..)?.join(" "),
            None => config_value(&parse(raw_rest).opts, "remotecommand")
                .filter(|c| !c.eq_ignore_ascii_case("none"))?
                .to_string(),
        };
        let script = self.render_lit(&command);
        self.run_shell(
            "sh",
            &["-c".to_string(), script],
            &["-c".to_string(), command],
            vec![(String::new(), String::new())],
            depth,
        )
    }
}
