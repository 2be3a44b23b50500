//! Stage 1: the kubelet's `$(VAR)` expansion of the exec argv, done before any shell runs.

use super::context::{Ctx, RefKind, is_ident, sanitize};
use super::{AnalysisBudget, EnvValue, ExecEnv, MAX_EXPANSION_BYTES, MAX_KUBELET_DEPTH};

/// The kubelet's expansion algorithm (`third_party/forked/golang/expansion`): `$$` is an
/// escaped `$`, `$(NAME)` is looked up (`None` keeps the reference as written), an unclosed
/// `$(` and any other `$x` are copied.
pub(super) fn kubelet_expand_with(arg: &str, lookup: &mut dyn FnMut(&str) -> Option<String>) -> String {
    if !arg.contains('$') {
        return arg.to_string();
    }
    // Every character the expansion acts on is ASCII, so byte offsets found at them are
    // character boundaries; the text between them is copied in runs.
    let b = arg.as_bytes();
    // Once a search for `)` from some position fails, none after it can succeed: remembered, so
    // that text full of unclosed `$(` is read in linear time.
    let mut no_close_from = usize::MAX;
    let mut out = String::with_capacity(arg.len());
    // Start of the text not copied yet.
    let mut from = 0;
    let mut i = 0;
    while i + 1 < b.len() {
        if b[i] != b'$' {
            i += 1;
            continue;
        }
        match b[i + 1] {
            b'$' => {
                out.push_str(&arg[from..=i]);
                i += 2;
                from = i;
            }
            b'(' => {
                let found = if i + 2 >= no_close_from {
                    None
                } else {
                    let found = b[i + 2..].iter().position(|&x| x == b')');
                    if found.is_none() {
                        no_close_from = i + 2;
                    }
                    found
                };
                let Some(close) = found else {
                    // An unclosed `$(` is copied.
                    i += 2;
                    continue;
                };
                let name = &arg[i + 2..i + 2 + close];
                out.push_str(&arg[from..i]);
                match lookup(name) {
                    Some(v) => out.push_str(&v),
                    None => {
                        out.push_str("$(");
                        out.push_str(name);
                        out.push(')');
                    }
                }
                i += 3 + close;
                from = i;
            }
            // `$x` is copied, `x` included (a `$` after it starts nothing).
            _ => i += 2,
        }
    }
    out.push_str(&arg[from..]);
    out
}

/// kubelet `$(VAR)` expansion: only Literal values substituted; `$$(VAR)` → literal `$(VAR)`; unresolvable references stay as written.
/// Values of variables named like secrets (`API_TOKEN`) are substituted as `***`.
pub fn expand_kubelet_vars(arg: &str, env: &ExecEnv) -> String {
    expand_kubelet_argv(std::slice::from_ref(&arg.to_string()), env, None).pop().unwrap_or_default()
}

/// [`expand_kubelet_vars`] over a whole probe command (a `valueFrom` variable is the empty string,
/// one only `envFrom` sets stays as written: [`ExecEnv::probe_empty`]), bounded: at most [`MAX_EXPANSION_BYTES`] of
/// values substituted over all its arguments, each also taken from `budget` (the object's, when
/// given); references past either bound stay as written.
pub fn expand_kubelet_argv(argv: &[String], env: &ExecEnv, budget: Option<&AnalysisBudget>) -> Vec<String> {
    let mut total = 0usize;
    let mut lookup = |name: &str| match env.vars.get(name) {
        // (As the kubelet's prober expands a probe's command: `Ctx::kubelet_var`.)
        _ if env.probe_empty.contains(name) => Some(String::new()),
        _ if env.env_from_only.contains(name) => None,
        Some(EnvValue::Literal(v)) => {
            total = total.saturating_add(v.len());
            let within = total <= MAX_EXPANSION_BYTES && budget.is_none_or(|b| b.take(v.len()));
            within.then(|| if is_secret_env_name(name) { "***".to_string() } else { v.clone() })
        }
        _ => None,
    };
    argv.iter().map(|a| kubelet_expand_with(a, &mut lookup)).collect()
}

/// The env variables that hold the API server's Service address in every container: the kubelet's
/// service links of the `kubernetes` Service in `default`, set whatever `enableServiceLinks` says
/// (Kubernetes docs, "Accessing the Kubernetes API from a Pod"; kubelet `getServiceEnvVarMap`).
pub(super) const KUBERNETES_SERVICE_ADDRESS: [&str; 2] =
    ["KUBERNETES_SERVICE_HOST", "KUBERNETES_PORT_443_TCP_ADDR"];

/// An env variable's literal value as the analysis uses it: sanitized, and `***` for a variable
/// whose name says it holds a secret (`API_TOKEN`, `DB_PASSWORD`), so that the value never reaches
/// a message. Such values are credentials, not hosts, so no verdict depends on them.
pub(super) fn env_literal(name: &str, value: &str) -> String {
    if is_secret_env_name(name) { "***".to_string() } else { sanitize(value) }
}

/// Does an environment variable's name say it holds a secret? Narrower than option names
/// (`AUTH_SERVICE_HOST` holds a host).
pub(super) fn is_secret_env_name(name: &str) -> bool {
    let l = name.to_ascii_lowercase();
    ["pass", "secret", "token", "pwd", "credential", "apikey", "api_key", "private_key", "bearer"]
        .iter()
        .any(|k| l.contains(k))
}

/// True when a value can be carried as one opaque token (no whitespace or shell syntax).
pub(super) fn is_simple_value(v: &str) -> bool {
    !v.chars().any(|c| {
        c.is_whitespace()
            || matches!(c, '\'' | '"' | '\\' | '`' | '$' | ';' | '&' | '|' | '<' | '>' | '(' | ')' | '#')
    })
}

impl Ctx<'_> {
    /// kubelet expansion producing markers: literal values become `Lit` markers (or plain text
    /// when they contain shell syntax), Pod-identity fieldRefs become self markers, values
    /// unknown at admission become `Unresolved` markers.
    pub(super) fn kubelet_expand(&mut self, arg: &str, depth: usize) -> String {
        if self.over_budget.get() {
            return String::new();
        }
        if arg.contains("$$(") {
            self.note_escapes(arg);
        }
        let mut lookup = |name: &str| -> Option<String> { self.kubelet_var(name, depth) };
        let out = kubelet_expand_with(arg, &mut lookup);
        if self.spend(out.len()) { out } else { String::new() }
    }

    /// Records the `$(NAME)` texts `arg`'s `$$(NAME)` escapes become ([`Ctx::kubelet_escaped`]):
    /// with every reference expanded to nothing, a closed `$(NAME)` left in the text is one.
    fn note_escapes(&mut self, arg: &str) {
        let text = kubelet_expand_with(arg, &mut |_| Some(String::new()));
        for (at, _) in text.match_indices("$(") {
            let Some(end) = text[at + 2..].find(')') else { break };
            let original = &text[at..at + 3 + end];
            if is_ident(&original[2..original.len() - 1])
                && !self.kubelet_escaped.iter().any(|e| e == original)
            {
                self.kubelet_escaped.push(original.to_string());
            }
        }
    }

    /// Records the `$(NAME)` texts the value `value` of the variable `var` holds, which the
    /// kubelet copies into the probe's command as written ([`Ctx::kubelet_copied`]): literal
    /// text there, no reference.
    fn note_copied(&mut self, var: &str, value: &str) {
        for (at, _) in value.match_indices("$(") {
            let Some(end) = value[at + 2..].find(')') else { break };
            let original = &value[at..at + 3 + end];
            if is_ident(&original[2..original.len() - 1])
                && !self.kubelet_copied.iter().any(|(e, _)| e == original)
            {
                self.kubelet_copied.push((original.to_string(), var.to_string()));
            }
        }
    }

    /// The value of `$(name)`: in the probe's command itself (`depth` 0) as the kubelet's prober
    /// expands it (static `env` values only: [`ExecEnv::probe_empty`], [`ExecEnv::env_from_only`]),
    /// in an env value (`depth` 1 and more) as the container's environment has it.
    pub(super) fn kubelet_var(&mut self, name: &str, depth: usize) -> Option<String> {
        let original = format!("$({name})");
        if depth == 0 {
            if self.env.probe_empty.contains(name) {
                // Not a script left unread: the rules say what the kubelet runs instead
                // ([`super::Outcome::kubelet_emptied`]).
                if !self.kubelet_emptied.iter().any(|n| n == name) {
                    self.kubelet_emptied.push(name.to_string());
                }
                return Some(String::new());
            }
            // (Nor a name `envFrom` may set: the kubelet's map is `env`'s.)
            if self.env.env_from_only.contains(name) || !self.env.vars.contains_key(name) {
                return None;
            }
        }
        match self.env.vars.get(name) {
            Some(EnvValue::Literal(v)) => {
                // The value is copied and scanned for every reference (and kept in the marker
                // table): it counts against the budgets like expanded text.
                if !self.spend(v.len()) {
                    return None;
                }
                let v = env_literal(name, v);
                // In the probe's own command the kubelet copies the value as written, one pass:
                // its prober calls `kubecontainer.ExpandContainerCommandOnlyStatic(p.Exec.Command,
                // container.Env)` (kubernetes/kubernetes `pkg/kubelet/prober/prober.go`,
                // `runProbe`), whose map is `v1EnvVarsToMap`, `env.Name -> env.Value` as written
                // in the spec (`pkg/kubelet/container/helpers.go`), and `expansion.Expand`
                // (`third_party/forked/golang/expansion/expand.go`) writes a looked-up value into
                // its output without reading it again. So `DB_HOST: "$(SVC).shop.svc"` gives the
                // probe `pg_isready -h $(DB_HOST)` the text `$(SVC).shop.svc` (no host name; in
                // `sh -c` a substitution of a command named `SVC`), while the container's own
                // environment, which the shell's `$DB_HOST` reads, holds the expanded value (s27).
                if depth == 0 && v.contains("$(") {
                    self.note_copied(name, &v);
                    return Some(v);
                }
                // The container's environment resolves references to earlier variables all the
                // way down; past MAX_KUBELET_DEPTH (a cycle, or a chain built to be expensive) the
                // command is not analysed rather than left with an unresolved reference that
                // reads as a host.
                let v = if !v.contains("$(") {
                    v
                } else if depth < MAX_KUBELET_DEPTH {
                    self.kubelet_expand(&v, depth + 1)
                } else {
                    self.over_budget.set(true);
                    return None;
                };
                if is_simple_value(&v) {
                    Some(self.new_ref(RefKind::Lit(v), &original).to_string())
                } else {
                    Some(v)
                }
            }
            Some(EnvValue::PodIp) => Some(self.new_ref(RefKind::SelfIp, &original).to_string()),
            Some(EnvValue::PodName) => Some(self.new_ref(RefKind::SelfName, &original).to_string()),
            Some(EnvValue::Unresolved) => Some(self.new_ref(RefKind::Unresolved, &original).to_string()),
            None => {
                // With envFrom the variable may exist at run time. All-lowercase names are
                // almost certainly a shell command substitution such as `$(hostname)`.
                if self.env.has_env_from && is_ident(name) && name.chars().any(|c| c.is_ascii_uppercase()) {
                    Some(self.new_ref(RefKind::Unresolved, &original).to_string())
                } else {
                    None
                }
            }
        }
    }
}
