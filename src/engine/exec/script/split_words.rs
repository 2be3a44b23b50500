//! Unquoted words whose value is known only at run time, or is one of several, given to a
//! command whole (`redis-cli $ARGS ping`): the shell splits them into fields (bash manual, "Word
//! Splitting"; POSIX 2.6.5), so they may be any number of words, a client's options and host
//! among them.
//!
//! * A value that is one of several ([`RefKind::OneOf`]: set in a branch that may not run, as a
//!   public Redis healthcheck builds `ARGS="-h HOST -p PORT"` and adds `-a $REDIS_PASSWORD` when
//!   a password is set) runs the command once per value, each split into its words: when every
//!   one reaches a dependency, certainly another host each time, the command is judged as the
//!   first ([`Ctx::analyze_alternatives`]); when only some do, or may, it is a warning.
//! * A value known only at run time (`$ARGS` not in the container's env, `$(cat /etc/args)`)
//!   given to a known client that names no host otherwise is not read as the client's local
//!   default (`redis-cli` alone is 127.0.0.1): the host is known only at run time, a warning,
//!   never a denial ([`Ctx::split_word_hit`]).

use super::super::Dependency;
use super::super::clients::{Hit, find_client};
use super::super::context::{Ctx, Ref, RefKind, truncate_chars};
use super::Overrides;

/// What a finding on a host the words of an unquoted value may set says about it.
pub(in crate::engine::exec) const SPLIT_WORDS_NOTE: &str =
    "its words are known only at run time and may set the host";

/// Words of a variable's name that say its words are options of another kind than the target
/// (TLS, credentials): `mongosh $TLS_OPTIONS --port $MONGODB_PORT_NUMBER` (Bitnami's MongoDB
/// ping script) stays on this Pod, as before.
const NOT_A_TARGET: [&str; 9] = ["TLS", "SSL", "AUTH", "PASS", "CERT", "CRED", "USER", "TOKEN", "SECRET"];

/// Whether the variable written `original` (`$TLS_OPTIONS`, `${REDIS_AUTH}`) is named for options
/// that set no target ([`NOT_A_TARGET`], a part of its name between `_` starting with one).
fn names_other_options(original: &str) -> bool {
    let name = original.trim_start_matches('$').trim_start_matches('{').trim_end_matches('}');
    name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric())
        && name.split('_').any(|part| {
            let part = part.to_ascii_uppercase();
            NOT_A_TARGET.iter().any(|w| part.starts_with(w))
        })
}

/// Whether `word` (quotes removed, `$` of a double-quoted expansion marked) is one unquoted
/// expansion and nothing else: `$NAME`, `${NAME}`, `$(...)`.
fn unquoted_whole_expansion(word: &str) -> bool {
    let Some(rest) = word.strip_prefix('$') else {
        return false;
    };
    if let Some(inner) = rest.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
        return !inner.is_empty() && inner.chars().all(|c| c == '_' || c.is_ascii_alphanumeric());
    }
    if let Some(inner) = rest.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
        return !inner.starts_with('(') && !inner.contains('$');
    }
    !rest.is_empty() && rest.chars().all(|c| c == '_' || c.is_ascii_alphanumeric())
}

impl Ctx<'_> {
    /// The marker `arg` is, when it is one marker of a value known only at run time or one of
    /// several (a `Lit` marker holding one is looked through).
    /// (Looked up marker by marker, not rendered: a long literal value costs nothing here.)
    fn unknown_marker(&self, arg: &str) -> Option<char> {
        let single = |s: &str| {
            let mut chars = s.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => Some(c),
                _ => None,
            }
        };
        let mut c = single(arg)?;
        for _ in 0..8 {
            match &self.ref_of(c)?.kind {
                RefKind::Lit(v) => c = single(v)?,
                RefKind::Unresolved | RefKind::UnresolvedCmd | RefKind::OneOf(_) => return Some(c),
                _ => return None,
            }
        }
        None
    }

    /// Remembers what the word `word` of a command expanded to (`resolved`), when it is a whole
    /// unquoted expansion of a value known only at run time or one of several.
    pub(super) fn keep_split_word(&mut self, word: &str, resolved: &[String]) {
        if let [one] = resolved
            && unquoted_whole_expansion(word)
            && let Some(c) = self.unknown_marker(one)
        {
            self.split_words.insert(c);
        }
    }

    /// For a command given, as a whole unquoted word, a value that is one of several: what the
    /// command reaches with each value split into its words. `None` when it has no such word;
    /// else the first dependency when every value gives one whose host is certainly another
    /// workload, the first one found as a warning when only some do, nothing when none does.
    pub(super) fn analyze_alternatives(
        &mut self,
        args: &[String],
        assigns: &Overrides,
        prefix: &[String],
        depth: usize,
    ) -> Option<Option<Dependency>> {
        let (at, alternatives, original) = args.iter().enumerate().find_map(|(i, a)| {
            let c = self.unknown_marker(a).filter(|c| self.split_words.contains(c))?;
            match self.ref_of(c)? {
                Ref { kind: RefKind::OneOf(alts), original } if !alts.is_empty() => {
                    Some((i, alts.clone(), original.clone()))
                }
                _ => None,
            }
        })?;
        let mut found: Vec<Option<Dependency>> = Vec::new();
        for alternative in &alternatives {
            let text = self.render_lit(alternative);
            let words: Vec<String> = text.split_whitespace().map(str::to_string).collect();
            for w in &words {
                if let Some(c) = self.unknown_marker(w) {
                    self.split_words.insert(c);
                }
            }
            let mut variant = args[..at].to_vec();
            variant.extend(words);
            variant.extend_from_slice(&args[at + 1..]);
            found.push(self.analyze_args(&variant, assigns.clone(), prefix, depth));
            if self.over_budget.get() {
                return Some(None);
            }
        }
        let every = found.iter().all(|d| d.as_ref().is_some_and(|d| !d.unknown_host));
        let Some(mut first) = found.into_iter().flatten().next() else {
            return Some(None);
        };
        if !every {
            first.unknown_host = true;
            let shown = self.render_orig(&original);
            first.target = truncate_chars(
                &format!(
                    "{} (with only some of the values of {shown}, set in a branch that may not run)",
                    first.target
                ),
                160,
            );
        }
        Some(Some(first))
    }

    /// For a known client given no host (it would use its default, `redis-cli` alone the
    /// loopback) but a whole unquoted word of a value known only at run time where a host may be
    /// (a positional argument, not an option's value): a hit on that value, whose words may set
    /// the host (`redis-cli $ARGS ping`). `name` is the program, `rest` its arguments.
    pub(in crate::engine::exec) fn split_word_hit(&self, name: &str, rest: &[String]) -> Option<Hit> {
        if self.split_words.is_empty() {
            return None;
        }
        let client = find_client(name, rest)?;
        let args = if client.subcommand.is_some() { rest.get(1..)? } else { rest };
        let parsed = client.syntax.parse(args);
        // (Not a value that is one of several: `analyze_alternatives` judged each, and its note
        // would list them, a password among them.)
        // (Nor one named for TLS or credential options: `names_other_options`.)
        let skipped = |c: char| {
            let r = self.ref_of(c);
            r.is_some_and(|r| names_other_options(&r.original))
                || matches!(r, Some(Ref { kind: RefKind::OneOf(alts), .. }) if !alts.is_empty())
        };
        let c = parsed
            .pos
            .iter()
            .filter_map(|p| self.unknown_marker(p))
            .find(|c| self.split_words.contains(c) && !skipped(*c))?;
        Some(Hit::new(client.category, vec![c.to_string()], c.to_string()))
    }

    /// A dependency found by [`Self::split_word_hit`]: a warning whose target says the value's
    /// words may set the host.
    pub(in crate::engine::exec) fn split_word_dependency(
        &self,
        mut d: Dependency,
        hit_target: &str,
    ) -> Dependency {
        d.unknown_host = true;
        let shown = self.render_orig(hit_target);
        let note = self.unresolved_note(hit_target).unwrap_or_default();
        d.target = truncate_chars(&format!("{shown} ({SPLIT_WORDS_NOTE}: {note})"), 160);
        d
    }
}

#[cfg(test)]
mod tests {
    use super::unquoted_whole_expansion;

    /// A name for TLS or credential options sets no target.
    #[test]
    fn a_name_for_tls_or_credentials_sets_no_target() {
        for v in ["$TLS_OPTIONS", "${REDIS_AUTH}", "$PASSWORD_ARGS", "$MONGO_SSL_OPTS", "$CERTS"] {
            assert!(super::names_other_options(v), "{v}");
        }
        for v in ["$ARGS", "$REDIS_HOST", "$PG_OPTS", "$(cat /etc/args)", "$MASTER"] {
            assert!(!super::names_other_options(v), "{v}");
        }
    }

    /// Only a whole unquoted expansion is split into an unknown number of words.
    #[test]
    fn a_whole_unquoted_expansion_is_told_from_other_words() {
        for word in ["$ARGS", "${ARGS}", "$(cat /etc/args)", "$1"] {
            assert!(unquoted_whole_expansion(word), "{word}");
        }
        for word in ["ARGS", "-h$H", "$H:6379", "$((1+2))", "${A:-x}", "\u{E001}ARGS", "$"] {
            assert!(!unquoted_whole_expansion(word), "{word}");
        }
    }
}
