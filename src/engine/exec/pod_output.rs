//! Command substitutions whose every possible output names this Pod: the container's own name or
//! address, or a fallback to the loopback (`$(hostname -i || echo '127.0.0.1')`, the idiom of the
//! docker-library healthcheck scripts).

use super::context::basename;
use super::words::is_hostname_command;

/// Whether every output of the command substitution whose trimmed text is `content` names this
/// Pod: a command [`is_hostname_command`] accepts, or an `||` list of at least one such command
/// and `echo`/`printf` of a local address (`127.0.0.1`, `localhost`, `::1`, as
/// [`crate::engine::hosts::is_local`] reads it), each alternative optionally with `2>/dev/null`.
/// In `A || B` the shell runs B only when A fails, and the substitution is what they wrote: a
/// failed `hostname -i` writes nothing to its standard output, so the value is one alternative's
/// (bash and dash alike: `$(hostname -i || echo 127.0.0.1)` is the Pod's address or
/// `127.0.0.1`). `&&` is not taken: both sides' outputs are joined, two addresses in one word.
pub(super) fn prints_this_pod(content: &str) -> bool {
    let alternatives = match split_or_list(content) {
        Some(a) if a.len() > 1 => a,
        _ => return is_hostname_command(content),
    };
    let alternatives: Vec<String> = alternatives.iter().map(|a| without_stderr_to_null(a)).collect();
    alternatives.iter().any(|a| is_hostname_command(a))
        && alternatives.iter().all(|a| is_hostname_command(a) || echoes_local_address(a))
}

/// Whether `client || second` (node kinds and `client`'s text) is `hostname -i || FALLBACK`
/// (`hostname`, `hostname -f`, ..., `2>/dev/null` allowed: [`is_hostname_command`]), FALLBACK a
/// command or a pipeline: the container's own name or address, which a Pod always has (its
/// `/etc/hosts` maps its host name to its IP: Kubernetes docs, "Adding entries to Pod /etc/hosts"),
/// so FALLBACK runs only where the image has no `hostname` (`flow`'s fallbacks; s24:
/// `host="$(hostname -i || getent hosts redis-master)"; redis-cli -h "$host" ping` was denied on
/// the `getent`).
pub(super) fn hostname_fallback(client_kind: &str, client: &str, second_kind: &str) -> bool {
    matches!(client_kind, "command" | "redirected_statement")
        && is_hostname_command(&without_stderr_to_null(client))
        && matches!(second_kind, "command" | "pipeline")
}

/// The alternatives of `text` split at each `||` outside quotes and parentheses; `None` when it
/// holds another list operator there (`;`, `&`, `&&`, a newline), or unbalanced quotes.
fn split_or_list(text: &str) -> Option<Vec<&str>> {
    let bytes = text.as_bytes();
    let (mut single, mut double, mut depth) = (false, false, 0usize);
    let (mut parts, mut start, mut i) = (Vec::new(), 0usize, 0usize);
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'\\' if !single => i += 1,
            b'\'' if !double => single = !single,
            b'"' if !single => double = !double,
            _ if single || double => {}
            b'(' => depth += 1,
            b')' => depth = depth.checked_sub(1)?,
            _ if depth > 0 => {}
            b'|' if bytes.get(i + 1) == Some(&b'|') => {
                parts.push(text[start..i].trim());
                i += 1;
                start = i + 1;
            }
            b';' | b'&' | b'\n' => return None,
            _ => {}
        }
        i += 1;
    }
    if single || double || depth != 0 {
        return None;
    }
    parts.push(text[start..].trim());
    parts.iter().all(|p| !p.is_empty()).then_some(parts)
}

/// `alternative` without `2>/dev/null` (or `2> /dev/null`): what the command writes to its
/// standard output, the substitution's value, is the same.
fn without_stderr_to_null(alternative: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let mut words = alternative.split_whitespace().peekable();
    while let Some(w) = words.next() {
        if w == "2>/dev/null" {
            continue;
        }
        if w == "2>" && words.peek() == Some(&"/dev/null") {
            words.next();
            continue;
        }
        out.push(w);
    }
    out.join(" ")
}

/// Whether `command` is `echo [-n] ADDRESS`, `printf ADDRESS`, `printf 'ADDRESS\n'` or
/// `printf '%s' ADDRESS` (`'%s\n'` too), ADDRESS one local address, quoted or not.
fn echoes_local_address(command: &str) -> bool {
    let Some(words) = command.split_whitespace().map(unquoted).collect::<Option<Vec<&str>>>() else {
        return false;
    };
    let local = |w: &str| !w.contains('%') && crate::engine::hosts::is_local(w);
    match words.as_slice() {
        [echo, address] | [echo, "-n", address] if basename(echo) == "echo" => local(address),
        [printf, format] if basename(printf) == "printf" => {
            local(format.strip_suffix("\\n").unwrap_or(format))
        }
        [printf, "%s" | "%s\\n", address] if basename(printf) == "printf" => local(address),
        _ => false,
    }
}

/// A word's text when it is plain or wholly inside one pair of quotes, and holds no expansion
/// (`$`, a backquote) and no backslash but a final `\n`; `None` otherwise.
fn unquoted(word: &str) -> Option<&str> {
    let inner = ['\'', '"']
        .iter()
        .find_map(|q| word.strip_prefix(*q).and_then(|w| w.strip_suffix(*q)))
        .unwrap_or(word);
    let body = inner.strip_suffix("\\n").unwrap_or(inner);
    let plain = !body.is_empty() && !body.contains(['\'', '"', '$', '`', '\\']);
    // (A bare `\n` outside quotes is the letter n to the shell: only quoted.)
    (plain && (inner.len() == body.len() || inner.len() != word.len())).then_some(inner)
}

#[cfg(test)]
mod tests {
    use super::prints_this_pod;

    #[test]
    fn an_or_list_of_the_pods_address_and_loopback_is_this_pod() {
        for content in [
            "hostname -i",
            "hostname -i || echo '127.0.0.1'",
            "hostname --ip-address || echo 127.0.0.1",
            "hostname -i || echo localhost",
            "hostname -i 2>/dev/null || hostname -I",
            "hostname -i 2> /dev/null || echo \"::1\"",
            "hostname -I | awk '{print $1}' || printf '%s' 127.0.0.1",
            "hostname -i || printf '127.0.0.1\\n'",
            "hostname -i || echo -n localhost",
            "echo 127.0.0.1 || hostname -i",
        ] {
            assert!(prints_this_pod(content), "{content}");
        }
    }

    #[test]
    fn another_output_is_not_this_pod() {
        for content in [
            "hostname -i || echo db.data.svc",
            "hostname -i || echo $HOST",
            "hostname -i || echo 127.0.0.1 db",
            "hostname -i && echo 127.0.0.1",
            "hostname -i; echo 127.0.0.1",
            "hostname -i || getent hosts db",
            "echo 127.0.0.1 || echo localhost",
            "hostname -i 2>&1 || echo 127.0.0.1",
            "hostname -i || printf '%s:%s' 127.0.0.1 80",
            "hostname -i || printf 127.0.0.1\\n",
            "hostname -i || echo '127.0.0.1",
            "hostname -i ||",
        ] {
            assert!(!prints_this_pod(content), "{content}");
        }
    }
}
