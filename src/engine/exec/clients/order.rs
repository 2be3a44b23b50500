//! The order facts of a client row: which of several host values it connects to, where it stops
//! reading options, and the flags that make it print and exit without connecting. Each is a fact
//! of the client (its docs or source, checked against the real binary), held in its row.

use super::{Client, Parsed, Syntax};

/// Which of several values of a row's host options the client connects to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in super::super) enum HostWins {
    /// Every value is judged (the default: nothing is assumed about the order, so a remote host
    /// anywhere is reached).
    Any,
    /// The last value given in any of the host options, in command-line order: each one
    /// overwrites the same setting (redis-cli: `-h` and `-u` both set the host; MySQL clients'
    /// `-h`/`--host`).
    Last,
}

/// Where a client stops reading options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in super::super) enum OptionsEnd {
    /// getopt_long's default: options are read anywhere on the command line.
    Permuted,
    /// At the first word that is not an option or an option's value (redis-cli: the command and
    /// its arguments follow, `redis-cli -h db ping -h 127.0.0.1` reaches db).
    FirstPositional,
}

/// The words of `a` the client reads as options (all of them, or those before the first
/// positional word for [`OptionsEnd::FirstPositional`]).
pub(super) fn options_read<'a>(c: &Client, a: &'a [String]) -> &'a [String] {
    let (OptionsEnd::FirstPositional, Syntax::Getopt { short_val, long_val, .. }) =
        (c.options_end, &c.syntax)
    else {
        return a;
    };
    let mut k = 0;
    while k < a.len() {
        let w = &a[k];
        if w == "--" {
            return &a[..k];
        }
        if let Some(l) = w.strip_prefix("--") {
            if !l.contains('=') && long_val.contains(&l) {
                k += 1;
            }
        } else if w.len() > 1 && w.starts_with('-') {
            // The first value-taking letter takes the rest of the word, or the next word.
            let cs: Vec<char> = w.chars().skip(1).collect();
            if let Some(i) = cs.iter().position(|ch| short_val.contains(*ch))
                && i + 1 == cs.len()
            {
                k += 1;
            }
        } else {
            return &a[..k];
        }
        k += 1;
    }
    a
}

/// Whether the options `a` hold a flag that makes the client print and exit without connecting
/// ([`Client::exits_without_connecting`], [`Client::exits_without_connecting_first`]).
pub(super) fn exits_without_connecting(c: &Client, a: &[String]) -> bool {
    let first = a.first().map(|w| w.trim_start_matches('-'));
    if a.first().is_some_and(|w| w.starts_with('-'))
        && first.is_some_and(|f| c.exits_without_connecting_first.contains(&f))
    {
        return true;
    }
    if c.exits_without_connecting.is_empty() {
        return false;
    }
    let p = c.syntax.parse(a);
    p.flags.iter().any(|f| c.exits_without_connecting.contains(&f.as_str()))
}

/// The host option values of `p` the client connects to ([`HostWins`]).
pub(super) fn host_values(c: &Client, p: &Parsed) -> Vec<String> {
    let mut all = p.get(c.host_opts);
    match c.host_wins {
        HostWins::Any => all,
        HostWins::Last => all.pop().into_iter().collect(),
    }
}
