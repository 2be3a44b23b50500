//! Stage 3: word and variable resolution (`$VAR`, `${VAR:-default}`, positional parameters, command substitutions whose value admission can know), and rendering.

use super::context::{
    Ctx, LDOLLAR, QDOLLAR, Ref, RefKind, basename, is_ident, is_reserved_char, marker_index,
};
use super::kubelet::env_literal;
use super::shell::{skip_parens, split_redirections};
use super::{EnvValue, MAX_DEPTH};

/// Is the trimmed content of a command substitution one that prints the container's own name
/// or address (`hostname`, `hostname -i`, `cat /etc/hostname`, ...)?
/// A pipeline that only filters such output keeps it the container's own (`hostname -I | awk
/// '{print $1}'`, `hostname -i | cut -d' ' -f1`): text filters print part of their input.
pub(super) fn is_hostname_command(content: &str) -> bool {
    if let Some((first, rest)) = content.split_once('|') {
        const FILTERS: [&str; 6] = ["awk", "cut", "head", "tail", "tr", "sed"];
        return !first.is_empty()
            && !rest.starts_with('|')
            && is_hostname_command(first.trim())
            && rest.split('|').all(|stage| {
                stage.split_whitespace().next().is_some_and(|p| FILTERS.contains(&basename(p)))
            });
    }
    let words: Vec<&str> = content.split_whitespace().collect();
    match words.as_slice() {
        [h] => basename(h) == "hostname",
        [h, flag] if basename(h) == "hostname" => matches!(
            *flag,
            "-i" | "-I"
                | "-f"
                | "-s"
                | "-A"
                | "--fqdn"
                | "--long"
                | "--short"
                | "--ip-address"
                | "--all-ip-addresses"
                | "--all-fqdns"
        ),
        [c, f] => basename(c) == "cat" && *f == "/etc/hostname",
        _ => false,
    }
}

/// `dirname`: everything before the last `/` (`/` for a file at the root, `.` without one).
pub(super) fn dirname(path: &str) -> String {
    let p = path.trim_end_matches('/');
    match p.rsplit_once('/') {
        Some(("", _)) => "/".to_string(),
        Some((dir, _)) => dir.to_string(),
        None if path.starts_with('/') => "/".to_string(),
        None => ".".to_string(),
    }
}

impl Ctx<'_> {
    /// The value of a command substitution whose output admission can know: the directory of a
    /// known path, `$(dirname "$0")` and `$(cd "$(dirname "$0")" && pwd)`, the idioms scripts use to
    /// find their siblings. `pieces` are the substitution's simple commands (innermost first).
    /// The marker standing for a command substitution (`$(...)` or backticks): the pod's own host
    /// name, a value known at admission, or an unknown command's output.
    pub(super) fn substitution_ref(
        &mut self,
        content: &str,
        pieces: &[String],
        depth: usize,
        shown: &str,
    ) -> char {
        let kind = if is_hostname_command(content.trim()) {
            RefKind::SelfHost
        } else if let Some(v) = self.eval_substitution(pieces, depth) {
            RefKind::Lit(v)
        } else {
            RefKind::UnresolvedCmd
        };
        self.new_ref(kind, shown)
    }

    pub(super) fn eval_substitution(&mut self, pieces: &[String], depth: usize) -> Option<String> {
        let words = |p: &String| split_redirections(p, Clone::clone).0;
        let last = words(pieces.last()?);
        let last: Vec<&str> = last.iter().map(String::as_str).collect();
        let word = match last.as_slice() {
            ["dirname", w] | ["dirname", "--", w] => {
                let v = self.known_text(w, depth)?;
                return Some(dirname(&v));
            }
            ["pwd"] | ["pwd", "-P" | "-L"] if pieces.len() >= 2 => {
                let cd = words(&pieces[pieces.len() - 2]);
                match cd.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
                    ["cd", w] | ["cd", "-P" | "-L" | "--", w] => w.to_string(),
                    _ => return None,
                }
            }
            _ => return None,
        };
        self.known_text(&word, depth).filter(|v| v.starts_with('/'))
    }

    /// A word's value when it is plain text known at admission (no unresolved part).
    pub(super) fn known_text(&mut self, word: &str, depth: usize) -> Option<String> {
        let (v, _) = self.resolve_text(word, depth, true);
        let v = self.render_lit(&v);
        (!v.is_empty() && !v.chars().any(is_reserved_char) && !v.contains(['$', '`'])).then_some(v)
    }
}

/// What a variable name resolves to in the current scope.
pub(super) enum Lookup {
    Val(String),
    SelfIp,
    SelfName,
    SelfHost,
    Unres,
    Undef,
}

impl Ctx<'_> {
    /// Resolve a shell variable referenced inside a script.
    pub(super) fn lookup(&mut self, name: &str) -> Lookup {
        if !name.is_empty() && name.chars().all(|c| c.is_ascii_digit()) {
            return self.positional_lookup(name);
        }
        if let Some(v) = self.shell_vars.get(name) {
            return Lookup::Val(v.clone());
        }
        match self.env.vars.get(name) {
            Some(EnvValue::Literal(v)) => {
                let v = env_literal(name, v);
                Lookup::Val(self.kubelet_expand(&v, 1))
            }
            Some(EnvValue::PodIp) => Lookup::SelfIp,
            Some(EnvValue::PodName) => Lookup::SelfName,
            Some(EnvValue::Unresolved) => Lookup::Unres,
            None if name == "HOSTNAME" => Lookup::SelfHost,
            None if self.env.has_env_from => Lookup::Unres,
            None => Lookup::Undef,
        }
    }

    /// `$0`, `$1`, ...: the script's path and arguments when known; past the last argument, unset.
    pub(super) fn positional_lookup(&self, name: &str) -> Lookup {
        let n: usize = name.parse().unwrap_or(usize::MAX);
        if n == 0 {
            return self.arg0.clone().map_or(Lookup::Unres, Lookup::Val);
        }
        match &self.positional {
            Some(v) if n <= v.len() => Lookup::Val(v[n - 1].clone()),
            // In a script that defines functions, a `$1` the script was not given may be a
            // function's argument, which the flattened analysis cannot bind: read as empty, so it
            // never makes a denial (a miss at worst).
            _ if self.defines_function => Lookup::Val(String::new()),
            Some(_) => Lookup::Undef,
            None => Lookup::Unres,
        }
    }

    /// Turn a lookup into text; returns true when the text must be field-split.
    pub(super) fn push_lookup(&mut self, l: Lookup, original: &str, quoted: bool, out: &mut String) -> bool {
        match l {
            Lookup::Val(v) => {
                if !quoted && v.chars().any(char::is_whitespace) {
                    out.push_str(&v);
                    return true;
                }
                out.push(self.new_ref(RefKind::Lit(v), original));
            }
            Lookup::SelfIp => out.push(self.new_ref(RefKind::SelfIp, original)),
            Lookup::SelfName => out.push(self.new_ref(RefKind::SelfName, original)),
            Lookup::SelfHost => out.push(self.new_ref(RefKind::SelfHost, original)),
            Lookup::Unres | Lookup::Undef => {
                out.push(self.new_ref(RefKind::Unresolved, original));
            }
        }
        false
    }

    /// Resolve `$VAR`, `${VAR}`, `${VAR:-default}` ... in one word (quotes already removed;
    /// `LDOLLAR` marks literal dollars, `QDOLLAR` double-quoted ones). Unquoted expansions
    /// containing whitespace are field-split.
    pub(super) fn resolve_word(&mut self, word: &str, depth: usize) -> Vec<String> {
        let (s, split) = self.resolve_text(word, depth, false);
        if split { s.split_whitespace().map(str::to_string).collect() } else { vec![s] }
    }

    pub(super) fn resolve_text(&mut self, word: &str, depth: usize, force_quoted: bool) -> (String, bool) {
        if self.over_budget.get() {
            return (String::new(), false);
        }
        let chars: Vec<char> = word.chars().collect();
        // The matching `}` of every `{`, found once (a stack), so that a word full of unclosed
        // `${` is read in linear time rather than rescanned to its end at each one.
        // (Most words have no `{`: nothing is allocated for them.)
        let braces = chars.contains(&'{');
        let mut close_of: Vec<Option<usize>> = if braces { vec![None; chars.len()] } else { Vec::new() };
        if braces {
            let mut open = Vec::new();
            for (k, ch) in chars.iter().enumerate() {
                match ch {
                    '{' => open.push(k),
                    '}' => {
                        if let Some(o) = open.pop() {
                            close_of[o] = Some(k);
                        }
                    }
                    _ => {}
                }
            }
        }
        let mut out = String::with_capacity(word.len());
        let mut split = false;
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c == LDOLLAR {
                out.push('$');
                i += 1;
                continue;
            }
            if c != '$' && c != QDOLLAR {
                out.push(c);
                i += 1;
                continue;
            }
            let quoted = force_quoted || c == QDOLLAR;
            match chars.get(i + 1) {
                Some('{') => {
                    let Some(close) = close_of.get(i + 1).copied().flatten() else {
                        out.push('$');
                        i += 1;
                        continue;
                    };
                    let inner: String = chars[i + 2..close].iter().collect();
                    let original: String = format!("${{{}}}", render_plain(&inner));
                    split |= self.brace_expand(&inner, &original, quoted, depth, &mut out);
                    i = close + 1;
                }
                Some(&n) if n == '_' || n.is_ascii_alphabetic() => {
                    let mut j = i + 1;
                    while j < chars.len() && (chars[j] == '_' || chars[j].is_ascii_alphanumeric()) {
                        j += 1;
                    }
                    let name: String = chars[i + 1..j].iter().collect();
                    let l = self.lookup(&name);
                    split |= self.push_lookup(l, &format!("${name}"), quoted, &mut out);
                    i = j;
                }
                Some(&n) if n.is_ascii_digit() => {
                    let l = self.lookup(&n.to_string());
                    split |= self.push_lookup(l, &format!("${n}"), quoted, &mut out);
                    i += 2;
                }
                Some(&n) if matches!(n, '@' | '*' | '#') && self.positional.is_some() => {
                    let v = self.positional.clone().unwrap_or_default();
                    let value = if n == '#' { v.len().to_string() } else { v.join(" ") };
                    // `"$@"` would keep the words apart; splitting is close enough for hosts.
                    split |= self.push_lookup(Lookup::Val(value), &format!("${n}"), n == '#', &mut out);
                    i += 2;
                }
                Some(&n) if "@*#?$!-".contains(n) => {
                    let m = self.new_ref(RefKind::Unresolved, &format!("${n}"));
                    out.push(m);
                    i += 2;
                }
                Some('(') => {
                    let end = skip_parens(&chars, i + 2);
                    let text: String = chars[i..end].iter().collect();
                    let m = self.new_ref(RefKind::UnresolvedCmd, &render_plain(&text));
                    out.push(m);
                    i = end;
                }
                _ => {
                    out.push('$');
                    i += 1;
                }
            }
        }
        if !self.spend(out.len()) {
            return (String::new(), false);
        }
        (out, split)
    }

    /// Expand the inside of `${...}`; returns true when the result must be field-split.
    pub(super) fn brace_expand(
        &mut self,
        inner: &str,
        original: &str,
        quoted: bool,
        depth: usize,
        out: &mut String,
    ) -> bool {
        let name_len = inner
            .char_indices()
            .find(|&(_, c)| !(c == '_' || c.is_ascii_alphanumeric()))
            .map_or(inner.len(), |(k, _)| k);
        let (name, op) = inner.split_at(name_len);
        let positional = !name.is_empty() && name.chars().all(|c| c.is_ascii_digit());
        if !is_ident(name) && !positional {
            out.push(self.new_ref(RefKind::Unresolved, original));
            return false;
        }
        let l = self.lookup(name);
        let (kind, arg) = if let Some(a) = op.strip_prefix(":-").or_else(|| op.strip_prefix(":=")) {
            ("default_nonempty", a)
        } else if let Some(a) = op.strip_prefix('-').or_else(|| op.strip_prefix('=')) {
            ("default_unset", a)
        } else if let Some(a) = op.strip_prefix(":+") {
            ("alt_nonempty", a)
        } else if let Some(a) = op.strip_prefix('+') {
            ("alt_unset", a)
        } else if op.is_empty() || op.starts_with(":?") || op.starts_with('?') {
            ("plain", "")
        } else {
            // Pattern removal, substrings, case changes: value not tracked.
            out.push(self.new_ref(RefKind::Unresolved, original));
            return false;
        };
        let resolve_arg = |ctx: &mut Self, out: &mut String| {
            if depth < MAX_DEPTH {
                let (t, _) = ctx.resolve_text(arg, depth + 1, true);
                out.push_str(&t);
            } else {
                out.push(ctx.new_ref(RefKind::Unresolved, original));
            }
        };
        match (kind, l) {
            ("default_nonempty", Lookup::Val(v)) if v.is_empty() => resolve_arg(self, out),
            ("default_nonempty" | "default_unset", Lookup::Undef) => resolve_arg(self, out),
            ("alt_nonempty", Lookup::Val(v)) if !v.is_empty() => resolve_arg(self, out),
            ("alt_unset", Lookup::Val(_)) => resolve_arg(self, out),
            ("alt_nonempty" | "alt_unset", Lookup::Val(_) | Lookup::Undef) => {}
            ("alt_nonempty" | "alt_unset", _) => {
                out.push(self.new_ref(RefKind::Unresolved, original));
            }
            (_, l) => return self.push_lookup(l, original, quoted, out),
        }
        false
    }
}

/// Render internal dollar markers as `$` (for text that holds no reference markers yet).
pub(super) fn render_plain(s: &str) -> String {
    s.chars().map(|c| if c == LDOLLAR || c == QDOLLAR { '$' } else { c }).collect()
}

impl Ctx<'_> {
    /// Render a string for display: every marker becomes the text as written.
    pub(super) fn render_orig(&self, s: &str) -> String {
        let mut out = String::with_capacity(s.len());
        for c in s.chars() {
            if c == LDOLLAR || c == QDOLLAR {
                out.push('$');
            } else if let Some(r) = self.ref_of(c) {
                out.push_str(&r.original);
            } else if marker_index(c).is_some() {
                out.push_str("<unresolved>");
            } else {
                out.push(c);
            }
        }
        out
    }

    /// Replace `Lit` markers by their values (recursively, bounded by depth and by the
    /// expansion budget), keeping the others.
    pub(super) fn render_lit(&self, s: &str) -> String {
        let mut cur = s.to_string();
        for _ in 0..MAX_DEPTH {
            if self.over_budget.get() {
                break;
            }
            let mut changed = false;
            let mut out = String::with_capacity(cur.len());
            for c in cur.chars() {
                match self.ref_of(c) {
                    Some(Ref { kind: RefKind::Lit(v), .. }) => {
                        if !self.spend(v.len()) {
                            break;
                        }
                        out.push_str(v);
                        changed = true;
                    }
                    _ => out.push(c),
                }
            }
            cur = out;
            if !changed {
                break;
            }
        }
        cur
    }
}
