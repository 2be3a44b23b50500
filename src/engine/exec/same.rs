//! When two probe commands are the same check: a client's explicit loopback host where its
//! default target is local (`redis-cli -h 127.0.0.1 ping` is `redis-cli ping`: "Server hostname
//! (default: 127.0.0.1)", redis-cli `--help`), and a `sh -c` script that is one plain command is
//! that command, and one of plain commands joined by `|`, `||`, `&&` or `;` is those commands, each
//! read so (s24: `redis-cli ping | grep PONG` and `redis-cli -h 127.0.0.1 ping|grep PONG` were
//! not the same check). For `liveness-matches-readiness`.

use super::ExecEnv;
use super::clients::{Syntax, find_client};
use super::context::basename;

/// The host values that are the local default of a client whose default is local.
const LOOPBACK: [&str; 3] = ["127.0.0.1", "localhost", "::1"];

/// `argv` as a key for "the same check": a `sh -c` script made only of plain words (no quote,
/// variable, operator or redirection) is its words, and the host option of a client whose default
/// target is local (`-h`, `--host`, as its table row reads them) is dropped when its value is
/// loopback and no environment variable of the container (`PGHOST`, `MYSQL_HOST`, ... or any
/// `envFrom`) could name another default. Anything else is `argv` as is.
pub fn same_check_argv(argv: &[String], env: &ExecEnv) -> Vec<String> {
    if let Some(key) = plain_list_key(argv, env) {
        return key;
    }
    let words = plain_script_words(argv).unwrap_or_else(|| argv.to_vec());
    without_loopback_host(&words, env).unwrap_or(words)
}

/// The list operators a plain script may hold between its commands (longest first).
const LIST_OPERATORS: [&str; 4] = ["||", "&&", "|", ";"];

/// For `sh -c SCRIPT` where SCRIPT is plain commands (as [`plain_script_words`] reads one) joined
/// by `|`, `||`, `&&` or `;` (`curl -sf localhost:8080/healthz | grep ok`): each command's words
/// (its loopback host dropped as for one command), the operators between them, and a first word
/// no program can be, so that no single command's key equals it. Blanks around an operator do
/// not count (`a|b` is `a | b`, as the shell reads it). `None` for one command or anything else.
fn plain_list_key(argv: &[String], env: &ExecEnv) -> Option<Vec<String>> {
    let [shell, flag, script] = argv else { return None };
    let shell_ok = ["sh", "bash", "ash", "dash", "zsh"].contains(&basename(shell));
    let plain = |c: char| c.is_ascii_alphanumeric() || c.is_whitespace() || "-_.,/:=@+%|&;".contains(c);
    if !shell_ok || flag != "-c" || !script.chars().all(plain) {
        return None;
    }
    let mut key = vec!["\u{0}sh -c list".to_string()];
    let mut command: Vec<String> = Vec::new();
    let mut lists = 0;
    let mut rest = script.as_str();
    let end_command = |command: &mut Vec<String>, key: &mut Vec<String>| -> Option<()> {
        if command.is_empty() {
            return None;
        }
        let words = std::mem::take(command);
        key.extend(without_loopback_host(&words, env).unwrap_or(words));
        Some(())
    };
    while !rest.is_empty() {
        rest = rest.trim_start();
        if let Some(op) = LIST_OPERATORS.iter().find(|op| rest.starts_with(**op)) {
            end_command(&mut command, &mut key)?;
            key.push((*op).to_string());
            lists += 1;
            rest = &rest[op.len()..];
            continue;
        }
        let end = rest.find(|c: char| c.is_whitespace() || "|&;".contains(c)).unwrap_or(rest.len());
        if end == 0 {
            // A lone `&`: the background, not read here.
            return None;
        }
        command.push(rest[..end].to_string());
        rest = &rest[end..];
    }
    end_command(&mut command, &mut key)?;
    (lists > 0).then_some(key)
}

/// The words of `sh -c SCRIPT` (`bash`, `dash`, `ash`, `zsh`) when SCRIPT is one plain command.
fn plain_script_words(argv: &[String]) -> Option<Vec<String>> {
    let [shell, flag, script] = argv else { return None };
    let shell_ok = ["sh", "bash", "ash", "dash", "zsh"].contains(&basename(shell));
    let plain = |c: char| c.is_ascii_alphanumeric() || c.is_whitespace() || "-_.,/:=@+%".contains(c);
    (shell_ok && flag == "-c" && script.chars().all(plain))
        .then(|| script.split_whitespace().map(String::from).collect())
}

/// `words` without a loopback host option, when its program is a getopt-style client whose
/// default is local and `-h`/`--host` is its host option; `None` when nothing is dropped.
fn without_loopback_host(words: &[String], env: &ExecEnv) -> Option<Vec<String>> {
    let (program, args) = words.split_first()?;
    let client = find_client(basename(program), args)?;
    let Syntax::Getopt { short_val, long_val, .. } = client.syntax else { return None };
    let env_names_host = env.has_env_from || client.env.iter().any(|v| env.vars.contains_key(*v));
    if !client.default_local || client.default.is_empty() || env_names_host {
        return None;
    }
    let short_h = short_val.contains('h') && client.host_opts.contains(&"h");
    let long_host = client.host_opts.contains(&"host");
    let local = |v: &str| LOOPBACK.contains(&v);
    let mut out = vec![program.clone()];
    let mut dropped = false;
    let mut k = 0;
    while k < args.len() {
        let a = args[k].as_str();
        let next = args.get(k + 1).map(String::as_str);
        if a == "--" {
            out.extend(args[k..].iter().cloned());
            break;
        }
        // How many words this option takes, and whether it is a loopback host.
        let (taken, is_local_host) = if let Some(long) = a.strip_prefix("--") {
            match long.split_once('=') {
                Some((name, v)) => (1, long_host && name == "host" && local(v)),
                None if long_val.contains(&long) => {
                    (2, long_host && long == "host" && next.is_some_and(local))
                }
                None => (1, false),
            }
        } else if let Some(letters) = a.strip_prefix('-').filter(|l| !l.is_empty()) {
            // The first letter that takes a value ends the cluster: the rest, or the next word.
            match letters.char_indices().find(|(_, c)| short_val.contains(*c)) {
                Some((i, c)) => {
                    let rest = &letters[i + c.len_utf8()..];
                    let single = i == 0 && c == 'h' && short_h;
                    if rest.is_empty() {
                        (2, single && next.is_some_and(local))
                    } else {
                        (1, single && local(rest))
                    }
                }
                None => (1, false),
            }
        } else {
            (1, false)
        };
        let end = (k + taken).min(args.len());
        if is_local_host {
            dropped = true;
        } else {
            out.extend(args[k..end].iter().cloned());
        }
        k = end;
    }
    dropped.then_some(out)
}
