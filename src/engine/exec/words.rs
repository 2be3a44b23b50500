//! Stage 3: word and variable resolution (`$VAR`, `${VAR:-default}`, positional parameters, command substitutions whose value admission can know), and rendering.

use super::context::{
    Ctx, LDOLLAR, MAX_HIDDEN_FIELDS, QDOLLAR, Ref, RefKind, basename, is_ident, is_reserved_char,
    marker_index,
};
use super::kubelet::env_literal;
use super::shell::{skip_parens, split_redirections};
use super::{EnvValue, MAX_DEPTH};

mod operators;

use operators::apply_operator;
pub(super) use operators::{glob_matches, literal_quoted_pattern};

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
        // (A process substitution's value is a path, `/dev/fd/63`, whatever its commands write.)
        let process = content.starts_with(['<', '>']);
        let kind = if super::pod_output::prints_this_pod(content.trim()) {
            RefKind::SelfHost
        } else if process {
            // What `<(...)` writes is kept for a shell that sources it (`source <(echo '...')`).
            let output = if content.starts_with('<') { self.eval_substitution(pieces, depth) } else { None };
            let m = self.new_ref(RefKind::UnresolvedCmd, shown);
            if let Some(text) = output {
                self.process_outputs.push((m, text));
            }
            return m;
        } else if let Some(v) = self.eval_substitution(pieces, depth) {
            RefKind::Lit(v)
        } else {
            RefKind::UnresolvedCmd
        };
        self.new_ref(kind, shown)
    }

    /// What the command substitution `marker` stands for writes, when it calls a shell function
    /// with no arguments whose body is one `echo` or `printf` of literal text (`f() { echo
    /// localhost; }; curl $(f):8080`). Substitutions are split before the script runs, when its
    /// functions are not defined yet: the call is looked up when its value is used.
    fn function_output(&mut self, marker: char, depth: usize) -> Option<String> {
        let r = self.ref_of(marker).filter(|r| r.kind == RefKind::UnresolvedCmd)?;
        let inner = r.original.strip_prefix("$(").and_then(|o| o.strip_suffix(')'));
        let inner = inner.or_else(|| r.original.strip_prefix('`').and_then(|o| o.strip_suffix('`')))?;
        let name = inner.trim().to_string();
        if !is_ident(&name) || depth >= MAX_DEPTH || self.uncertain_functions.contains(&name) {
            return None;
        }
        let body = self.function(Some(&name))?;
        if body.contains(['$', '`', '<', '>', '|', '&', '\\']) {
            return None;
        }
        let mut pieces = Vec::new();
        self.split_script(&body, depth + 1, &mut pieces);
        let commands = pieces.iter().filter(|p| {
            !p.starts_with([super::flow::GUARD, super::flow::PIPE, super::flow::EXIT, super::flow::SCOPE])
        });
        if commands.count() != 1 {
            return None;
        }
        self.eval_substitution(&pieces, depth + 1)
    }

    pub(super) fn eval_substitution(&mut self, pieces: &[String], depth: usize) -> Option<String> {
        // (Commands only: not the pieces that mark regions and pipes.)
        let pieces: Vec<String> = pieces
            .iter()
            .filter(|p| {
                !p.starts_with([super::flow::GUARD, super::flow::PIPE, super::flow::EXIT, super::flow::SCOPE])
            })
            .cloned()
            .collect();
        let words = |p: &String| split_redirections(p, Clone::clone).0;
        let last = words(pieces.last()?);
        let last: Vec<&str> = last.iter().map(String::as_str).collect();
        let word = match last.as_slice() {
            ["dirname", w] | ["dirname", "--", w] => {
                let v = self.known_text(w, depth)?;
                return Some(dirname(&v));
            }
            // `$(command -v NAME)`, `$(which NAME)`: the path of the program NAME, run as NAME
            // (POSIX `command -v`: "the absolute pathname"; debianutils which(1)). Break-it pass:
            // `$(command -v pg_isready) -h db` was not known to run pg_isready. (Its basename is
            // what names a client; a program not installed leaves the probe failing anyway.)
            ["command", "-v", w] | ["which", w] if pieces.len() == 1 => {
                return self.known_text(w, depth).filter(|v| !v.starts_with('-'));
            }
            // `$(echo WORDS)`: the words, when known (a substitution drops the trailing newline).
            // (dash's `echo` reads backslash escapes, bash's does not: not followed.)
            ["echo", words @ ..]
                if pieces.len() == 1 && words.first().is_none_or(|w| !w.starts_with('-')) =>
            {
                let mut out = Vec::with_capacity(words.len());
                for w in words {
                    // (A value of a known kind, such as `$HOSTNAME`, stays a marker.)
                    let (v, _) = self.resolve_text(w, depth, true);
                    let v = self.render_lit(&v);
                    if v.contains(['$', '`', '\\']) {
                        return None;
                    }
                    out.push(v);
                }
                return Some(out.join(" "));
            }
            ["printf", format, values @ ..] if pieces.len() == 1 => {
                let format = self.known_text(format, depth)?;
                let mut known = Vec::with_capacity(values.len());
                for v in values {
                    known.push(self.known_text(v, depth)?);
                }
                return super::script::printf_output(&format, &known);
            }
            // `$(cat <<EOF ... EOF)`: the here-document's text (`eval "$(cat <<EOF ...)"`).
            ["cat"] if pieces.len() == 1 => {
                return super::script::here_string_text(&pieces[0]);
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

/// What `printf FORMAT VALUES...` writes when FORMAT has no escapes and its only conversions are
/// one `%s` per value (`printf 'http://localhost:%s/' 8080`); `None` otherwise.
pub(super) fn printf_s(format: &str, values: &[String]) -> Option<String> {
    let parts: Vec<&str> = format.split("%s").collect();
    if parts.len() != values.len() + 1 || parts.iter().any(|p| p.contains(['%', '\\'])) {
        return None;
    }
    let mut out = parts[0].to_string();
    for (v, p) in values.iter().zip(&parts[1..]) {
        out.push_str(v);
        out.push_str(p);
    }
    Some(out)
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
        if self.judging_guard && self.uncertain.contains(name) {
            return Lookup::Unres;
        }
        if let Some(v) = self.shell_vars.get(name) {
            return Lookup::Val(v.clone());
        }
        if self.unset.contains(name) {
            return Lookup::Val(String::new());
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
            // The API server's Service, in every container (`kubelet`): shown as written.
            None if super::kubelet::KUBERNETES_SERVICE_ADDRESS.contains(&name) => {
                Lookup::Val("kubernetes.default.svc".into())
            }
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
                    let digits = original.trim_start_matches(['$', '{']);
                    if digits.starts_with(|c: char| c.is_ascii_digit() || c == '@' || c == '*') {
                        // A positional parameter's words, split: nothing marks them in what is
                        // shown, so they are hidden by their text.
                        let room = MAX_HIDDEN_FIELDS.saturating_sub(self.hidden_fields.len());
                        let fields =
                            v.split_whitespace().map(|f| self.render_orig(f)).take(room).collect::<Vec<_>>();
                        self.hidden_fields.extend(fields);
                    }
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
        if !word.contains(|c: char| c == '$' || is_reserved_char(c)) {
            // Nothing to expand (every character is copied as it is, below): the word itself,
            // without the copy into a `Vec<char>` and the pass over it.
            if !self.spend(word.len()) {
                return (String::new(), false);
            }
            return (word.to_string(), false);
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
                match is_reserved_char(c).then(|| self.function_output(c, depth)).flatten() {
                    Some(v) => out.push_str(&v),
                    None => out.push(c),
                }
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
            // `${#X}` (a length), `${!X}` (indirection): a value nothing here follows, which never
            // makes a dependency by itself (even when X names one).
            let kind = if inner.starts_with(['#', '!']) && inner.len() > 1 {
                RefKind::Unknown
            } else {
                RefKind::Unresolved
            };
            out.push(self.new_ref(kind, original));
            return false;
        }
        // `${NAME[N]}`, `${NAME[@]}`, `${NAME[*]}` of an array the script assigned (see
        // `assign_array`); element 0 is `$NAME`. (`[@]` is field-split: close enough for hosts.)
        // An array whose elements are known only at run time (`read -a` of unknown input: count
        // `?`): any element is such a value, never an empty one.
        if let Some(index) = op.strip_prefix('[').and_then(|o| o.strip_suffix(']'))
            && let Some(("?", first)) =
                self.shell_vars.get(&format!("{name}[#]")).and_then(|c| c.split_once('\0'))
            && self.shell_vars.get(name).map(String::as_str) == Some(first)
        {
            out.push(self.new_ref(RefKind::UnresolvedCmd, original));
            return matches!(index, "@" | "*") || !quoted;
        }
        if let Some(index) = op.strip_prefix('[').and_then(|o| o.strip_suffix(']'))
            && self.shell_vars.contains_key(name)
            && let Some(count) = self.shell_vars.get(&format!("{name}[#]")).and_then(|c| {
                // (Only while `$NAME` is still the W0 the array was assigned with: `read`,
                // `printf -v` or a loop may have assigned NAME since.)
                let (count, first) = c.split_once('\0')?;
                (self.shell_vars.get(name).map(String::as_str) == Some(first))
                    .then(|| count.parse::<usize>().ok())?
            })
        {
            let element = |ctx: &Self, i: usize| -> Option<String> {
                if i == 0 {
                    ctx.shell_vars.get(name).cloned()
                } else {
                    ctx.shell_vars.get(&format!("{name}[{i}]")).cloned()
                }
            };
            let value = match index {
                "@" | "*" => {
                    (0..count).map(|i| element(self, i)).collect::<Option<Vec<_>>>().map(|v| v.join(" "))
                }
                n => match n.parse::<usize>() {
                    Ok(i) if i < count => element(self, i),
                    Ok(_) => Some(String::new()),
                    Err(_) => None,
                },
            };
            if let Some(v) = value {
                out.push_str(&v);
                return matches!(index, "@" | "*") || !quoted;
            }
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
            // Pattern removal, substrings, case changes, replacement.
            return self.operator_expand(l, op, original, quoted, out);
        };
        let resolve_arg = |ctx: &mut Self, out: &mut String| {
            if depth < MAX_DEPTH {
                let (t, _) = ctx.resolve_text(arg, depth + 1, true);
                out.push_str(&t);
            } else {
                out.push(ctx.new_ref(RefKind::Unresolved, original));
            }
        };
        // `${X:=word}` / `${X=word}` also assign the default to X (bash manual, "Shell Parameter
        // Expansion"; POSIX 2.6.2), so later `$X` is that value.
        let assigns = !positional && (op.starts_with(":=") || op.starts_with('='));
        let assign = |ctx: &mut Self, out: &mut String, from: usize| {
            if assigns && depth < MAX_DEPTH {
                let value = out[from..].to_string();
                ctx.shell_vars.insert(name.to_string(), value);
            }
        };
        match (kind, l) {
            ("default_nonempty", Lookup::Val(v)) if v.is_empty() => {
                let from = out.len();
                resolve_arg(self, out);
                assign(self, out, from);
            }
            ("default_nonempty" | "default_unset", Lookup::Undef) => {
                let from = out.len();
                resolve_arg(self, out);
                assign(self, out, from);
            }
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

impl Ctx<'_> {
    /// `${X%pat}`, `${X%%pat}`, `${X#pat}`, `${X##pat}`, `${X/pat/rep}` (and `//`, `/#`, `/%`),
    /// `${X^^}`, `${X^}`, `${X,,}`, `${X,}` and `${X:offset[:length]}` (bash manual, "Shell
    /// Parameter Expansion"): evaluated exactly when X's value is plain text known here. When it is
    /// not, removing a prefix or suffix or changing case keeps an unknown dependency address what it
    /// was (`${DB_HOST%%:*}` of an unknown `DB_HOST` is still its host); any other result is a value
    /// nothing here follows ([`RefKind::Unknown`]), which never makes a dependency by itself.
    /// Returns true when the result must be field-split.
    fn operator_expand(
        &mut self,
        l: Lookup,
        op: &str,
        original: &str,
        quoted: bool,
        out: &mut String,
    ) -> bool {
        let keeps_host = op.starts_with(['%', '#', '^', ',']);
        // A script variable holding only the pod's own name or address (`X=$HOSTNAME`) is that.
        let l = match l {
            Lookup::Val(v) => {
                let v = self.render_lit(&v);
                let mut cs = v.chars();
                match (cs.next().and_then(|c| self.ref_of(c)).map(|r| &r.kind), cs.next()) {
                    (Some(RefKind::SelfHost), None) => Lookup::SelfHost,
                    (Some(RefKind::SelfName), None) => Lookup::SelfName,
                    (Some(RefKind::SelfIp), None) => Lookup::SelfIp,
                    _ => Lookup::Val(v),
                }
            }
            l => l,
        };
        // A Pod's host name is at most 63 characters (its name cut there: Kubernetes API, PodSpec
        // `hostname`), so `${HOSTNAME:0:63}` is all of it.
        let whole_name =
            op.strip_prefix(":0:").and_then(|n| n.trim().parse::<u32>().ok()).is_some_and(|n| n >= 63);
        let value = match l {
            Lookup::Val(v) => {
                let v = self.render_lit(&v);
                (!v.chars().any(is_reserved_char)).then_some(v)
            }
            Lookup::Unres | Lookup::Undef if keeps_host => {
                out.push(self.new_ref(RefKind::Unresolved, original));
                return false;
            }
            // The pod's own name, case changed or cut at its first or last dot (`${HOSTNAME%%.*}`,
            // the short name), is still this pod; so is its IPv4 address without a `:port` or
            // `/prefix` suffix (an IPv6 one cut at `:` is no address at all).
            l @ (Lookup::SelfHost | Lookup::SelfName)
                if op.starts_with(['^', ',']) || matches!(op, "%.*" | "%%.*") || whole_name =>
            {
                return self.push_lookup(l, original, quoted, out);
            }
            l @ Lookup::SelfIp if matches!(op, "%:*" | "%%:*" | "%/*" | "%%/*") => {
                return self.push_lookup(l, original, quoted, out);
            }
            // Cut otherwise, it names another Pod: a peer, known only at run time.
            Lookup::SelfHost | Lookup::SelfName => {
                out.push(self.new_ref(RefKind::PeerName, original));
                return false;
            }
            _ => None,
        };
        match value.and_then(|v| apply_operator(&v, op)) {
            Some(v) => self.push_lookup(Lookup::Val(v), original, quoted, out),
            None => {
                out.push(self.new_ref(RefKind::Unknown, original));
                false
            }
        }
    }
}

/// The body of an ANSI-C quoted word `$'...'` (bash manual, "ANSI-C Quoting"), read from `chars`
/// after its opening `'` up to the closing one, its escapes decoded (`\n`, `\t`, `\\`, `\'`,
/// `\"`, `\xHH`, `\NNN` octal, `\e`, `\a`, `\b`, `\f`, `\r`, `\v`; any other escape kept as
/// written), appended to the piece `cur` as a single-quoted word (a `'` in it as `'\''`, every `$`
/// literal).
pub(super) fn push_ansi_c(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, cur: &mut String) {
    let mut text = String::new();
    while let Some(c) = chars.next() {
        match c {
            '\'' => break,
            '\\' => match chars.next() {
                Some('n') => text.push('\n'),
                Some('t') => text.push('\t'),
                Some('r') => text.push('\r'),
                Some('a') => text.push('\u{7}'),
                Some('b') => text.push('\u{8}'),
                Some('e' | 'E') => text.push('\u{1b}'),
                Some('f') => text.push('\u{c}'),
                Some('v') => text.push('\u{b}'),
                Some(q @ ('\\' | '\'' | '"' | '?')) => text.push(q),
                Some('x') => {
                    let mut v = 0u32;
                    let mut n = 0;
                    while n < 2
                        && let Some(d) = chars.peek().and_then(|d| d.to_digit(16))
                    {
                        v = v * 16 + d;
                        chars.next();
                        n += 1;
                    }
                    match char::from_u32(v).filter(|_| n > 0) {
                        Some(ch) => text.push(ch),
                        None => text.push_str("\\x"),
                    }
                }
                Some(d @ '0'..='7') => {
                    let mut v = d.to_digit(8).unwrap_or(0);
                    let mut n = 1;
                    while n < 3
                        && let Some(d) = chars.peek().and_then(|d| d.to_digit(8))
                    {
                        v = v * 8 + d;
                        chars.next();
                        n += 1;
                    }
                    text.extend(char::from_u32(v & 0xFF));
                }
                Some(other) => {
                    text.push('\\');
                    text.push(other);
                }
                None => text.push('\\'),
            },
            _ => text.push(c),
        }
    }
    cur.push('\'');
    for c in text.chars() {
        match c {
            '\'' => cur.push_str("'\\''"),
            '$' => cur.push(LDOLLAR),
            c if is_reserved_char(c) => cur.push('\u{FFFD}'),
            c => cur.push(c),
        }
    }
    cur.push('\'');
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

#[cfg(test)]
mod tests {
    use super::{apply_operator, printf_s};

    /// `printf_s` writes what bash's `printf` writes for `%s` formats, and declines others.
    #[test]
    fn printf_s_fills_each_percent_s_with_its_value() {
        let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(printf_s("localhost", &[]).as_deref(), Some("localhost"));
        assert_eq!(printf_s("http://%s:%s/", &v(&["db", "80"])).as_deref(), Some("http://db:80/"));
        assert_eq!(printf_s("%s", &v(&["x"])).as_deref(), Some("x"));
        for (format, values) in
            [("%d", v(&["5"])), ("%s", v(&["a", "b"])), ("a\\n", v(&[])), ("%s %s", v(&["a"]))]
        {
            assert_eq!(printf_s(format, &values), None, "{format}");
        }
    }

    #[test]
    fn parameter_operators_give_what_bash_gives() {
        // Each expected value printed by bash 5.2 for the same expansion.
        let x = "postgres://u@db.ns:5432/app";
        let y = "a.b.c";
        let cases = [
            (x, "%%:*", "postgres"),
            (x, "%:*", "postgres://u@db.ns"),
            (x, "#*:", "//u@db.ns:5432/app"),
            (x, "##*:", "5432/app"),
            (x, "#*@", "db.ns:5432/app"),
            (x, "##*/", "app"),
            (x, "%/*", "postgres://u@db.ns:5432"),
            (x, "/:/_", "postgres_//u@db.ns:5432/app"),
            (x, "//:/_", "postgres_//u@db.ns_5432/app"),
            (x, "/#p*:/Z", "Z5432/app"),
            (x, "/%app/Z", "postgres://u@db.ns:5432/Z"),
            (x, ":3:4", "tgre"),
            (x, ": -3", "app"),
            (x, ": -8:-4", "5432"),
            (y, "%.*", "a.b"),
            (y, "%%.*", "a"),
            (y, "#*.", "b.c"),
            (y, "##*.", "c"),
            (x, "^^", "POSTGRES://U@DB.NS:5432/APP"),
            (y, "^", "A.b.c"),
            (x, "%%[:/]*", "postgres"),
            (x, "#[a-p]", "ostgres://u@db.ns:5432/app"),
            (x, "#[!a-z]", x),
            (x, "/?/Z", "Zostgres://u@db.ns:5432/app"),
            (y, "//./", "abc"),
            (x, ":100", ""),
            (x, "/]/x", x),
            (x, "%%\":\"*", "postgres"),
            (x, "%%\\:*", "postgres"),
        ];
        for (value, op, want) in cases {
            assert_eq!(apply_operator(value, op).as_deref(), Some(want), "${{X{op}}} of {value}");
        }
        // Not evaluated here: expansions in the pattern, `&` in a replacement, a character class.
        for op in ["%%$Y*", "/a/&", "#[[:alpha:]]", ":$N", "@Q", "^^[a]", ": -8:-30"] {
            assert_eq!(apply_operator(x, op), None, "{op}");
        }
        // Past the bounds: not evaluated (matching a long value is quadratic or cubic).
        let long = "a".repeat(2000);
        assert_eq!(apply_operator(&long, "%%*b*c*d"), None);
        assert_eq!(apply_operator(&"a".repeat(200), "//a*b/x"), None);
        assert_eq!(apply_operator(&"a".repeat(1000), "%%*b*c*d").as_deref(), Some("a".repeat(1000).as_str()));
    }
}
