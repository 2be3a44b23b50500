//! Fitting a warning into [`super::MAX_WARNING_CHARS`] by cutting its quoted commands first
//! (s27 deny-hunt pass: kubectl shows admission warnings cut at 256 characters, the API server's
//! bound, and a long `` `sh -c ...` `` pushed a `liveness-dependency` warning's advice, `move that
//! check to readinessProbe`, and a trusted-controller warning's host out of what kubectl showed).
//!
//! What a warning says is, in order: the rule's subject (`container NAME: livenessProbe`), the
//! command in backquotes, what it reaches (the host), what an outage does, the advice, and the
//! rule id. The command is the one part the user already has (it is in their manifest): it is
//! the part cut, in words (see [`crate::engine::cut_command`]), so that the host, the advice and
//! the rule id stay. Commands are redacted before they reach a message; cutting the redacted text
//! shows no more of it.

/// `s` made to fit in `max` characters where it can without losing its rule id, its host or its
/// advice. The probes' commands are cut ([`shorten_commands`], only as much as needed) after
/// dropping, in the first of these combinations that fits: nothing; the effect between the host
/// and the advice (`: its outage would restart every replica`, [`without_effect`]); that and the
/// note after the host (`(database, via pg_isready)`, [`without_host_note`]); a trusted-controller
/// warning's owner and service account prefix ([`shorter_trust`]); that and the effect; all
/// three; all three and the path of a URL the warning says it reaches (`https://HOST:PORT/…`,
/// [`without_url_path`]: the host stays). When none fits, `s` itself, for the caller's cut at a
/// blank. The audit annotation `full-warnings`
/// keeps the whole text.
pub(super) fn fit(s: &str, max: usize) -> String {
    type Step = fn(&str) -> Option<String>;
    let (e, h, t, u): (Step, Step, Step, Step) =
        (without_effect, without_host_note, shorter_trust, without_url_path);
    let plans: [&[Step]; 7] = [&[], &[e], &[e, h], &[t], &[e, t], &[e, h, t], &[e, h, t, u]];
    for plan in plans {
        let mut candidate = s.to_string();
        for step in plan {
            if let Some(shorter) = step(&candidate) {
                candidate = shorter;
            }
        }
        let shorter = shorten_commands(&candidate, max);
        if shorter.chars().count() <= max {
            return shorter;
        }
    }
    // None fits: the whole text, for the caller's cut at a blank (its head is the text's own).
    s.to_string()
}

/// `not denied (KIND NAME owns it, trusted controller CREATOR creates it): ` as `not denied
/// (trusted controller NAME creates it): `, NAME the service account's name when CREATOR is one.
fn shorter_trust(s: &str) -> Option<String> {
    const HEAD: &str = "not denied (";
    let start = s.find(HEAD)? + HEAD.len();
    let end = start + s[start..].find(" creates it): ")?;
    let creator = s[start..end].split(", trusted controller ").nth(1)?;
    let short = match creator.strip_prefix("system:serviceaccount:") {
        Some(sa) => sa.rsplit(':').next().unwrap_or(sa),
        None => creator,
    };
    Some(format!("{}trusted controller {short}{}", &s[..start], &s[end..]))
}

/// The text between what is reached and the advice dropped: `reaches HOST (...): EFFECT; ADVICE`
/// as `reaches HOST (...); ADVICE`, and `reaches the Airflow metadata database (...); WHY: EFFECT;
/// ADVICE` as `reaches the Airflow metadata database (...); ADVICE` (from the first `: ` or `; `
/// after ` reaches ` to the last `; `).
fn without_effect(s: &str) -> Option<String> {
    let reaches = s.find(" reaches ")?;
    let rest = &s[reaches..];
    let colon = reaches + [rest.find(": "), rest.find("; ")].into_iter().flatten().min()?;
    let semi = s.rfind("; ").filter(|&i| i > colon)?;
    Some(format!("{}{}", &s[..colon], &s[semi..]))
}

/// The parenthesised note right after the host (`reaches HOST (database, via pg_isready)`)
/// dropped.
fn without_host_note(s: &str) -> Option<String> {
    let after = s.find(" reaches ")? + " reaches ".len();
    let host_end = after + s[after..].find(' ')?;
    let rest = s[host_end..].strip_prefix(" (")?;
    let close = rest.find(')')?;
    let tail = &rest[close + 1..];
    // Only a note followed by more text: a message ending in the rule id has no note here.
    (!tail.is_empty()).then(|| format!("{}{tail}", &s[..host_end]))
}

/// The path of the URL after ` reaches ` cut to `/…`: `reaches https://db.svc:8443/internal/x`
/// as `reaches https://db.svc:8443/…`.
fn without_url_path(s: &str) -> Option<String> {
    let after = s.find(" reaches ")? + " reaches ".len();
    let end = after + s[after..].find([' ', ';'])?;
    let authority = after + s[after..end].find("://")? + 3;
    let slash = authority + s[authority..end].find('/')?;
    (end - slash > 2).then(|| format!("{}/…{}", &s[..slash], &s[end..]))
}

/// Fewest characters a quoted command keeps when cut: its program and first words.
const MIN_COMMAND_CHARS: usize = 16;

/// `s` with the commands of its probes (`` livenessProbe `...` ``) cut, longest first, each to no fewer than
/// [`MIN_COMMAND_CHARS`] characters (`…` included), until `s` fits in `max` characters or no
/// span can give more; `s` itself when it fits. What is outside the backquotes is never changed
/// (the caller cuts the rest, as before, when the commands alone cannot make it fit).
fn shorten_commands(s: &str, max: usize) -> String {
    let total = s.chars().count();
    if total <= max {
        return s.to_string();
    }
    // Byte ranges of the commands a probe runs: from `Probe `` to the next backquote. A command
    // may hold backquotes of its own (`echo `date``): then less of it is cut, never text outside
    // it, as pairing every backquote of the message could.
    let mut spans: Vec<(usize, usize)> = s
        .match_indices("Probe `")
        .filter_map(|(i, m)| {
            let a = i + m.len();
            s[a..].find('`').map(|len| (a, a + len))
        })
        .collect();
    spans.sort_by_key(|&(a, b)| std::cmp::Reverse(s[a..b].chars().count()));
    let mut excess = total - max;
    let mut cut: Vec<(usize, usize, String)> = Vec::new();
    for (a, b) in spans {
        if excess == 0 {
            break;
        }
        let len = s[a..b].chars().count();
        if len <= MIN_COMMAND_CHARS {
            continue;
        }
        let keep = len.saturating_sub(excess).max(MIN_COMMAND_CHARS);
        let shorter = crate::engine::cut_command(&s[a..b], keep);
        excess = excess.saturating_sub(len - shorter.chars().count().min(len));
        cut.push((a, b, shorter));
    }
    cut.sort_by_key(|c| c.0);
    let mut out = String::with_capacity(s.len());
    let mut at = 0;
    for (a, b, shorter) in cut {
        out.push_str(&s[at..a]);
        out.push_str(&shorter);
        at = b;
    }
    out.push_str(&s[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_is_cut_and_the_rest_kept() {
        let cmd = format!("sh -c curl -fsS {} http://db.prod.svc:5432/", "-H x ".repeat(40));
        let s = format!(
            "probegate: container app: livenessProbe `{cmd}` reaches db.prod.svc:5432 (database): its outage \
             would restart every replica; move that check to readinessProbe (liveness-dependency)"
        );
        let out = shorten_commands(&s, 255);
        assert!(out.chars().count() <= 255, "{out}");
        assert!(out.ends_with("reaches db.prod.svc:5432 (database): its outage would restart every replica; move that check to readinessProbe (liveness-dependency)"), "{out}");
        assert!(out.starts_with("probegate: container app: livenessProbe `sh -c curl -fsS"), "{out}");
        assert_eq!(shorten_commands("short `a b c`", 255), "short `a b c`");
        // Nothing left to cut: the spans stop at their minimum, the rest is the caller's.
        let s = format!("livenessProbe `{}` {}", "a ".repeat(30), "y".repeat(300));
        let out = shorten_commands(&s, 255);
        assert!(out.starts_with("livenessProbe `a a a a a a a a…` yyy"), "{out}");
        // Only a probe's command: other backquoted text, and text between backquotes, stays.
        let s = format!("`{}` and `x` {}", "b ".repeat(30), "z".repeat(300));
        assert_eq!(shorten_commands(&s, 255), s);
    }

    #[test]
    fn a_trusted_controller_warning_loses_its_owner_and_effect_before_its_host_and_advice() {
        let s = "probegate: not denied (ReplicaSet api-6d4f9c7b8d owns it, trusted controller \
                 system:serviceaccount:kube-system:replicaset-controller creates it): container a: livenessProbe \
                 `pg_isready -h a-00a.aa.svc -p 5432` reaches a-00a.aa.svc (database, via pg_isready): its outage \
                 would restart every replica; move that check to readinessProbe (liveness-dependency)";
        let out = fit(s, 255);
        // The owner and the effect go (the note after the host fits): rule, host and advice stay.
        assert_eq!(
            out,
            "probegate: not denied (trusted controller replicaset-controller creates it): container a: \
             livenessProbe `pg_isready -h a-00a.aa.svc -p 5432` reaches a-00a.aa.svc (database, via pg_isready); \
             move that check to readinessProbe (liveness-dependency)"
        );
        // Each step only while too long: with room, the whole text.
        assert_eq!(fit(s, 400), s);
        assert_eq!(
            without_host_note("x reaches h (db, via c); do y (r)").as_deref(),
            Some("x reaches h; do y (r)")
        );
        assert_eq!(
            without_effect("x reaches h (n): e; do y (r)").as_deref(),
            Some("x reaches h (n); do y (r)")
        );
        assert_eq!(without_effect("x reaches h; do y (r)"), None);
        assert_eq!(
            without_effect("x reaches the db (n); `c` reads rows: e; do y (r)").as_deref(),
            Some("x reaches the db (n); do y (r)")
        );
        assert_eq!(
            without_url_path("x reaches https://h.svc:8443/internal/deep (n); do y (r)").as_deref(),
            Some("x reaches https://h.svc:8443/… (n); do y (r)")
        );
        assert_eq!(without_url_path("x reaches https://h.svc:8443/ (n); y"), None);
        assert_eq!(without_url_path("x reaches h.svc:8443 (n); y"), None);
    }
}
