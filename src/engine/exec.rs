//! Static analysis of `exec` probe commands: does the command reach an external dependency?
//!
//! The analysis is purely syntactic and conservative in both directions:
//!
//! * it only reports a [`Dependency`] when a *known* client program (database, cache, queue,
//!   coordination, DNS, control-plane, cloud or generic network client) is pointed at a target
//!   that is not provably the Pod itself (a remote host, or a host that depends on a value the
//!   webhook cannot know at admission time);
//! * unknown programs and opaque scripts yield nothing: the webhook never denies on a guess.
//!
//! Processing order, mirroring what happens at run time:
//!
//! 1. kubelet `$(VAR)` expansion of every argv element (only values known at admission are
//!    substituted; Pod-identity fieldRefs are tracked as "self");
//! 2. wrapper unwrapping (`sh -c`, `env`, `timeout`, `exec`, `tini`, ...);
//! 3. for `-c` scripts: a small POSIX-ish lexer splits the script into simple commands
//!    (including the contents of `$(...)` and backticks) and resolves `$VAR`, `${VAR}`,
//!    `${VAR:-default}` in each word;
//! 4. per-client argument parsing (host flags, URIs, positional hosts, implied env vars such as
//!    `PGHOST`) and host classification (loopback, Unix socket, Pod identity, remote,
//!    unresolved).
//!
//! Internally, values that are not plain text (a Pod-identity variable, an unresolvable
//! variable, a command substitution, an env value the webhook knows) are carried through the
//! pipeline as single private-use marker characters indexing a side table, so that host/port
//! splitting never has to care about them and the original spelling can be shown in reports.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::known::KnownCommand;

/// The value of one container environment variable, as far as the webhook can know it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvValue {
    /// `env[].value`: a literal known at admission.
    Literal(String),
    /// `valueFrom.fieldRef` of `status.podIP` / `status.podIPs`: the pod's own IP.
    PodIp,
    /// `valueFrom.fieldRef` of `metadata.name`: the pod's own name (StatefulSet self-FQDN `$(POD_NAME).svc`).
    PodName,
    /// `valueFrom` of a ConfigMap, Secret, resourceFieldRef or another fieldRef: set at run time, unknown here.
    Unresolved,
}

/// The container's environment: explicit `env` entries (later entries win) and whether `envFrom` is present.
#[derive(Debug, Clone, Default)]
pub struct ExecEnv {
    /// Explicit `env` entries by name (later entries win).
    pub vars: HashMap<String, EnvValue>,
    /// Whether the container has `envFrom`: any variable absent from `vars` may then be set at run time.
    pub has_env_from: bool,
}

/// What kind of thing a probe command reaches. In policy files (`knownCommands[].category`):
/// `database`, `cache`, `queue`, `coordination`, `search`, `service-discovery`, `secrets`, `dns`,
/// `control-plane`, `cloud-api`, `network`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DependencyCategory {
    /// A database (PostgreSQL, MySQL/MariaDB, MongoDB, Cassandra, ...).
    Database,
    /// A cache (Redis, Valkey, KeyDB, Memcached).
    Cache,
    /// A message queue or broker (Kafka, RabbitMQ, NATS).
    Queue,
    /// A coordination service (ZooKeeper, etcd).
    Coordination,
    /// A search cluster (Elasticsearch / OpenSearch cluster health).
    Search,
    /// Service discovery (Consul).
    ServiceDiscovery,
    /// A secrets store (Vault).
    Secrets,
    /// DNS resolution (cluster DNS is a shared dependency).
    Dns,
    /// The Kubernetes API server.
    ControlPlane,
    /// A cloud provider API.
    CloudApi,
    /// Any other network service reached by a generic client.
    Network,
}

impl fmt::Display for DependencyCategory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            DependencyCategory::Database => "database",
            DependencyCategory::Cache => "cache",
            DependencyCategory::Queue => "queue",
            DependencyCategory::Coordination => "coordination service",
            DependencyCategory::Search => "search cluster",
            DependencyCategory::ServiceDiscovery => "service discovery",
            DependencyCategory::Secrets => "secrets store",
            DependencyCategory::Dns => "DNS",
            DependencyCategory::ControlPlane => "Kubernetes API",
            DependencyCategory::CloudApi => "cloud API",
            DependencyCategory::Network => "network service",
        };
        f.write_str(s)
    }
}

/// A dependency found in an exec probe's command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependency {
    /// Basename of the client program: `"pg_isready"`, `"redis-cli"`, `"curl"`.
    pub program: String,
    /// What kind of dependency the client reaches.
    pub category: DependencyCategory,
    /// The host/URL as reached, after env resolution: `"orders-db.prod.svc"`,
    /// `"$REDIS_HOST (not a literal env value)"`, `"reports-db.data.svc (PGHOST)"`.
    pub target: String,
    /// The simple command the client was found in, re-joined, at most about 80 characters,
    /// with secrets (password flags, password assignments, URI user info) redacted as `***`.
    pub command: String,
    /// When the command is in a script file read from a volume: the chain of scripts that ran it
    /// and where the last one came from (`/health/a.sh → /health/b.sh (ConfigMap ns/x, key b.sh)`).
    pub script: Option<String>,
    /// For a command matched by a `knownCommands` entry: why it reaches the dependency.
    pub why: Option<String>,
}

/// A script file as admission can see it (see [`ScriptFiles`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileLookup {
    /// Its text, and where it came from (`ConfigMap ns/name, key k`).
    Text {
        /// The file's content.
        text: String,
        /// Where it came from, for messages.
        origin: String,
    },
    /// On a volume, but not readable here (ConfigMap unavailable, a Secret, an emptyDir, ...): why.
    Unreadable(String),
    /// Not on a volume: part of the image, opaque.
    NotOnVolume,
}

/// The files an exec probe can run: paths resolved through the container's volume mounts.
pub trait ScriptFiles {
    /// The file at `path` (absolute, or relative to the container's working directory).
    fn read(&self, path: &str) -> FileLookup;
}

/// A script on a volume that could not be read, so its commands were not analysed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnresolvedScript {
    /// The path as run.
    pub path: String,
    /// Why it could not be read (`ConfigMap data/health is not available`).
    pub reason: String,
    /// Not analysed because it is over one of the analysis bounds (script, command, expansion or
    /// per-object size), rather than unreadable: rare in real manifests, so also warned about.
    pub over_bound: bool,
}

/// What the analysis may use beyond the command and its environment.
#[derive(Default)]
pub struct Options<'a> {
    /// Commands that reach a dependency without naming a host, tried in order.
    pub known_commands: Vec<&'a KnownCommand>,
    /// Script files run by the command (`None`: every file is opaque).
    pub files: Option<&'a dyn ScriptFiles>,
    /// The object's [`AnalysisBudget`], shared by all its commands (`None`: only the
    /// per-command limits apply).
    pub budget: Option<&'a AnalysisBudget>,
}

/// The result of [`analyze`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The first dependency found, if any.
    pub dependency: Option<Dependency>,
    /// Scripts on volumes that could not be read, in the order met, each once.
    pub unresolved: Vec<UnresolvedScript>,
}

// ---------------------------------------------------------------------------------------------
// Markers
// ---------------------------------------------------------------------------------------------

/// `$` that must stay literal (single-quoted or backslash-escaped in a script).
const LDOLLAR: char = '\u{E000}';
/// `$` inside double quotes: expanded, but the result is not field-split.
const QDOLLAR: char = '\u{E001}';
/// First code point of the reference markers (supplementary private use area A).
const MARKER_BASE: u32 = 0xF_0000;
/// Maximum number of reference markers per analysis (the rest share the generic entry 0).
const MAX_REFS: usize = 60_000;
/// Maximum nesting of scripts and command substitutions that is analysed.
const MAX_DEPTH: usize = 8;
/// Longest shell script analysed, in bytes (real probe scripts are a few hundred bytes; the
/// limit bounds the time and memory any one script can take).
pub const MAX_SCRIPT_BYTES: usize = 16 * 1024;
/// Most text, in bytes, that variable expansion may produce in one analysis (kubelet `$(VAR)`,
/// shell `$VAR` and their rendering). A few kilobytes of `B=$A$A...; C=$B$B...` expand to
/// gigabytes; past this budget the analysis stops and the command is reported as not analysed.
pub const MAX_EXPANSION_BYTES: usize = 1024 * 1024;
/// Deepest chain of kubelet `$(VAR)` references (a variable whose value refers to another) that is
/// followed; deeper (or cyclic) chains leave the command not analysed.
const MAX_KUBELET_DEPTH: usize = 16;
/// Longest exec command analysed, in bytes over all its arguments.
pub const MAX_COMMAND_BYTES: usize = 64 * 1024;
/// Most shell text, in bytes, analysed for one object's exec probes together: 2 MiB of expanded
/// commands and of scripts each time one is analysed (an inline `sh -c` script counts twice). The limits above bound one command; this
/// bounds a Pod with hundreds of containers each at those limits (120 containers whose 13 KB
/// scripts each expand to 1 MiB took 3.6 s, near the webhook's 4 s request bound). Real probes
/// use a few kilobytes. Commands met after it is spent are reported as not analysed.
pub const MAX_OBJECT_ANALYSIS_BYTES: usize = 2 * 1024 * 1024;

/// What is left of [`MAX_OBJECT_ANALYSIS_BYTES`] for one object: one per evaluation, shared by
/// the [`analyze`] calls for its containers through [`Options::budget`].
#[derive(Debug)]
pub struct AnalysisBudget {
    left: std::cell::Cell<usize>,
    /// The note saying the budget ran out has been given (it is given once per object).
    noted: std::cell::Cell<bool>,
}

impl Default for AnalysisBudget {
    fn default() -> Self {
        AnalysisBudget::new(MAX_OBJECT_ANALYSIS_BYTES)
    }
}

impl AnalysisBudget {
    /// A budget of `bytes` of shell text.
    pub fn new(bytes: usize) -> AnalysisBudget {
        AnalysisBudget { left: std::cell::Cell::new(bytes), noted: std::cell::Cell::new(false) }
    }

    /// Takes `n` bytes; false (and nothing left) when fewer than `n` remain.
    fn take(&self, n: usize) -> bool {
        match self.left.get().checked_sub(n) {
            Some(left) => {
                self.left.set(left);
                true
            }
            None => {
                self.left.set(0);
                false
            }
        }
    }

    /// True once the budget is spent.
    pub fn is_spent(&self) -> bool {
        self.left.get() == 0
    }
}
/// Maximum number of wrapper layers unwrapped in one simple command.
const MAX_UNWRAP: usize = 32;
/// Maximum nesting of script files (a script running or sourcing another).
const MAX_SCRIPT_NESTING: usize = 6;
/// Maximum number of script files read in one analysis.
const MAX_SCRIPT_FILES: usize = 32;

/// What a reference marker stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum RefKind {
    /// A value known at admission (env literal or script assignment); may contain markers.
    Lit(String),
    /// The Pod's own IP.
    SelfIp,
    /// The Pod's own name (may be followed by `.<headless service>...`).
    SelfName,
    /// The container's host name (`$HOSTNAME`, `$(hostname)`).
    SelfHost,
    /// A variable whose value is unknown at admission.
    Unresolved,
    /// The output of a command substitution.
    UnresolvedCmd,
}

/// One entry of the marker side table.
#[derive(Debug, Clone)]
struct Ref {
    kind: RefKind,
    /// The text as written (`$REDIS_HOST`, `$(POD_IP)`, `$(cat /secret)`).
    original: String,
}

fn marker_index(c: char) -> Option<usize> {
    let v = c as u32;
    if (MARKER_BASE..MARKER_BASE + 0xFFFE).contains(&v) { Some((v - MARKER_BASE) as usize) } else { None }
}

fn is_reserved_char(c: char) -> bool {
    c == LDOLLAR || c == QDOLLAR || (0xF_0000..=0xF_FFFF).contains(&(c as u32))
}

/// Replace characters the analysis uses internally, so input cannot forge markers.
fn sanitize(s: &str) -> String {
    s.chars().map(|c| if is_reserved_char(c) { '\u{FFFD}' } else { c }).collect()
}

fn is_ident(s: &str) -> bool {
    let mut cs = s.chars();
    match cs.next() {
        Some(c) if c == '_' || c.is_ascii_alphabetic() => {}
        _ => return false,
    }
    cs.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// Analysis state: the environment, the marker table and script-level shell variables.
struct Ctx<'e> {
    env: &'e ExecEnv,
    refs: Vec<Ref>,
    shell_vars: HashMap<String, String>,
    exported: HashSet<String>,
    known: &'e [&'e KnownCommand],
    files: Option<&'e dyn ScriptFiles>,
    /// `$1`, `$2`, ... of the script being analysed, when known (values may hold markers).
    positional: Option<Vec<String>>,
    /// `$0` of the script being analysed, when known.
    arg0: Option<String>,
    /// The script files being analysed, outermost first, with where each came from.
    scripts: Vec<(String, String)>,
    files_read: usize,
    unresolved: Vec<UnresolvedScript>,
    /// The length of a script too long to analyse, when one was met.
    too_long: Option<usize>,
    /// Bytes produced by expansions so far (see [`MAX_EXPANSION_BYTES`]).
    expanded: std::cell::Cell<usize>,
    /// The expansion budget ran out: the analysis stops and finds nothing.
    over_budget: std::cell::Cell<bool>,
    /// The object's budget, shared with the other commands of the object.
    object_budget: Option<&'e AnalysisBudget>,
    /// It was the object's budget that ran out.
    object_spent: std::cell::Cell<bool>,
}

impl<'e> Ctx<'e> {
    fn new(env: &'e ExecEnv) -> Self {
        Ctx {
            env,
            refs: vec![Ref { kind: RefKind::Unresolved, original: "<unresolved>".to_string() }],
            shell_vars: HashMap::new(),
            exported: HashSet::new(),
            known: &[],
            files: None,
            positional: None,
            arg0: None,
            scripts: Vec::new(),
            files_read: 0,
            unresolved: Vec::new(),
            too_long: None,
            expanded: std::cell::Cell::new(0),
            over_budget: std::cell::Cell::new(false),
            object_budget: None,
            object_spent: std::cell::Cell::new(false),
        }
    }

    /// Counts `n` bytes of expanded text against [`MAX_EXPANSION_BYTES`] and the object's
    /// budget; false once either is spent.
    fn spend(&self, n: usize) -> bool {
        let total = self.expanded.get().saturating_add(n);
        self.expanded.set(total);
        if total > MAX_EXPANSION_BYTES {
            self.over_budget.set(true);
        }
        self.spend_object(n)
    }

    /// Counts `n` bytes of analysed text against the object's budget only.
    fn spend_object(&self, n: usize) -> bool {
        if let Some(budget) = self.object_budget
            && !budget.take(n)
        {
            self.object_spent.set(true);
            self.over_budget.set(true);
        }
        !self.over_budget.get()
    }

    /// Allocate a marker character for a reference.
    fn new_ref(&mut self, kind: RefKind, original: &str) -> char {
        let idx = if self.refs.len() < MAX_REFS {
            self.refs.push(Ref { kind, original: truncate_chars(original, 60) });
            self.refs.len() - 1
        } else {
            0
        };
        char::from_u32(MARKER_BASE + idx as u32).unwrap_or('\u{FFFD}')
    }

    fn ref_of(&self, c: char) -> Option<&Ref> {
        marker_index(c).and_then(|i| self.refs.get(i))
    }
}

fn truncate_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(3)).collect();
        t.push_str("...");
        t
    }
}

// ---------------------------------------------------------------------------------------------
// kubelet $(VAR) expansion
// ---------------------------------------------------------------------------------------------

/// The kubelet's expansion algorithm (`third_party/forked/golang/expansion`): `$$` is an
/// escaped `$`, `$(NAME)` is looked up (`None` keeps the reference as written), an unclosed
/// `$(` and any other `$x` are copied.
fn kubelet_expand_with(arg: &str, lookup: &mut dyn FnMut(&str) -> Option<String>) -> String {
    if !arg.contains('$') {
        return arg.to_string();
    }
    let chars: Vec<char> = arg.chars().collect();
    // Once a search for `)` from some position fails, none after it can succeed: remembered, so
    // that text full of unclosed `$(` is read in linear time.
    let mut no_close_from = usize::MAX;
    let mut out = String::with_capacity(arg.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '$' && i + 1 < chars.len() {
            let n = chars[i + 1];
            if n == '$' {
                out.push('$');
                i += 2;
                continue;
            }
            if n == '(' {
                let found = if i + 2 >= no_close_from {
                    None
                } else {
                    let found = chars[i + 2..].iter().position(|&x| x == ')');
                    if found.is_none() {
                        no_close_from = i + 2;
                    }
                    found
                };
                if let Some(close) = found {
                    let name: String = chars[i + 2..i + 2 + close].iter().collect();
                    match lookup(&name) {
                        Some(v) => out.push_str(&v),
                        None => {
                            out.push_str("$(");
                            out.push_str(&name);
                            out.push(')');
                        }
                    }
                    i += 3 + close;
                    continue;
                }
                out.push_str("$(");
                i += 2;
                continue;
            }
            out.push('$');
            out.push(n);
            i += 2;
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

/// kubelet `$(VAR)` expansion: only Literal values substituted; `$$(VAR)` → literal `$(VAR)`; unresolvable references stay as written.
/// Values of variables named like secrets (`API_TOKEN`) are substituted as `***`.
pub fn expand_kubelet_vars(arg: &str, env: &ExecEnv) -> String {
    expand_kubelet_argv(std::slice::from_ref(&arg.to_string()), env, None).pop().unwrap_or_default()
}

/// [`expand_kubelet_vars`] over a whole command, bounded: at most [`MAX_EXPANSION_BYTES`] of
/// values substituted over all its arguments, each also taken from `budget` (the object's, when
/// given); references past either bound stay as written.
pub fn expand_kubelet_argv(argv: &[String], env: &ExecEnv, budget: Option<&AnalysisBudget>) -> Vec<String> {
    let mut total = 0usize;
    let mut lookup = |name: &str| match env.vars.get(name) {
        Some(EnvValue::Literal(v)) => {
            total = total.saturating_add(v.len());
            let within = total <= MAX_EXPANSION_BYTES && budget.is_none_or(|b| b.take(v.len()));
            within.then(|| if is_secret_env_name(name) { "***".to_string() } else { v.clone() })
        }
        _ => None,
    };
    argv.iter().map(|a| kubelet_expand_with(a, &mut lookup)).collect()
}

/// An env variable's literal value as the analysis uses it: sanitized, and `***` for a variable
/// whose name says it holds a secret (`API_TOKEN`, `DB_PASSWORD`), so that the value never reaches
/// a message. Such values are credentials, not hosts, so no verdict depends on them.
fn env_literal(name: &str, value: &str) -> String {
    if is_secret_env_name(name) { "***".to_string() } else { sanitize(value) }
}

/// Does an environment variable's name say it holds a secret? Narrower than option names
/// (`AUTH_SERVICE_HOST` holds a host).
fn is_secret_env_name(name: &str) -> bool {
    let l = name.to_ascii_lowercase();
    ["pass", "secret", "token", "pwd", "credential", "apikey", "api_key", "private_key", "bearer"]
        .iter()
        .any(|k| l.contains(k))
}

/// True when a value can be carried as one opaque token (no whitespace or shell syntax).
fn is_simple_value(v: &str) -> bool {
    !v.chars().any(|c| {
        c.is_whitespace()
            || matches!(c, '\'' | '"' | '\\' | '`' | '$' | ';' | '&' | '|' | '<' | '>' | '(' | ')' | '#')
    })
}

impl Ctx<'_> {
    /// kubelet expansion producing markers: literal values become `Lit` markers (or plain text
    /// when they contain shell syntax), Pod-identity fieldRefs become self markers, values
    /// unknown at admission become `Unresolved` markers.
    fn kubelet_expand(&mut self, arg: &str, depth: usize) -> String {
        if self.over_budget.get() {
            return String::new();
        }
        let mut lookup = |name: &str| -> Option<String> { self.kubelet_var(name, depth) };
        let out = kubelet_expand_with(arg, &mut lookup);
        if self.spend(out.len()) { out } else { String::new() }
    }

    fn kubelet_var(&mut self, name: &str, depth: usize) -> Option<String> {
        let original = format!("$({name})");
        match self.env.vars.get(name) {
            Some(EnvValue::Literal(v)) => {
                // The value is copied and scanned for every reference (and kept in the marker
                // table): it counts against the budgets like expanded text.
                if !self.spend(v.len()) {
                    return None;
                }
                let v = env_literal(name, v);
                // The kubelet resolves references to earlier variables all the way down; past
                // MAX_KUBELET_DEPTH (a cycle, or a chain built to be expensive) the command is
                // not analysed rather than left with an unresolved reference that reads as a host.
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

// ---------------------------------------------------------------------------------------------
// Script splitting
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq)]
enum Quote {
    None,
    Single,
    Double,
}

/// Is the trimmed content of a command substitution one that prints the container's own name
/// or address (`hostname`, `hostname -i`, `cat /etc/hostname`, ...)?
fn is_hostname_command(content: &str) -> bool {
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

/// The last path component of a program name.
fn basename(s: &str) -> &str {
    s.rsplit('/').next().unwrap_or(s)
}

/// Index just past the `)` closing a `$(` whose content starts at `i`, ignoring quotes
/// (used beyond the analysed depth, without recursion).
fn skip_parens(chars: &[char], mut i: usize) -> usize {
    let mut level = 1usize;
    while i < chars.len() {
        match chars[i] {
            '(' => level += 1,
            ')' => {
                level -= 1;
                if level == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    chars.len()
}

/// Where the analysis is in a `case` statement: after `case WORD` (expecting `in`), or in a
/// pattern list (after `in` or `;;`, up to the `)`).
#[derive(Default)]
struct CaseState {
    /// `case` statements open (their `esac` not met yet).
    open: usize,
    /// `case WORD` read, `in` expected.
    expect_in: bool,
    /// Reading a pattern list.
    pattern: bool,
}

impl CaseState {
    /// Called when an unquoted word of the current command `cur` ends.
    fn word_done(&mut self, cur: &mut String) {
        let trimmed = cur.trim();
        let last = trimmed.rsplit(char::is_whitespace).next().unwrap_or("");
        let first = last.len() == trimmed.len();
        if first && last == "esac" && self.open > 0 {
            self.open -= 1;
            self.pattern = false;
            self.expect_in = false;
        } else if self.pattern {
        } else if first && last == "case" {
            self.open += 1;
            self.expect_in = true;
        } else if self.expect_in && last == "in" {
            // `case WORD in`: the word is matched, not run; patterns follow.
            self.expect_in = false;
            self.pattern = true;
            cur.clear();
        }
    }
}

/// Reads a here-document's delimiter word starting at `i` (blanks first): the word with its
/// quotes and backslashes removed, and the index after it.
fn heredoc_delimiter(chars: &[char], mut i: usize) -> (String, usize) {
    while matches!(chars.get(i), Some(' ' | '\t')) {
        i += 1;
    }
    let mut word = String::new();
    while let Some(&c) = chars.get(i) {
        match c {
            '\'' | '"' => {
                i += 1;
                while let Some(&q) = chars.get(i) {
                    i += 1;
                    if q == c {
                        break;
                    }
                    word.push(q);
                }
            }
            '\\' => {
                if let Some(&n) = chars.get(i + 1) {
                    word.push(n);
                }
                i += 2;
            }
            _ if c.is_whitespace() || matches!(c, ';' | '|' | '&' | '<' | '>' | '(' | ')') => break,
            _ => {
                word.push(c);
                i += 1;
            }
        }
    }
    (word, i.min(chars.len()))
}

/// Skips the bodies of the here-documents opened on the line that ended just before `i`, in
/// order; returns the index after the last delimiter line (the end of the text when one is
/// missing, as the shell reads to the end).
fn skip_heredoc_bodies(chars: &[char], mut i: usize, heredocs: &mut Vec<(String, bool)>) -> usize {
    for (delimiter, strip) in heredocs.drain(..) {
        while i < chars.len() {
            let end = chars[i..].iter().position(|&c| c == '\n').map_or(chars.len(), |e| i + e);
            let mut line = &chars[i..end];
            if strip {
                while line.first() == Some(&'\t') {
                    line = &line[1..];
                }
            }
            let done = line.iter().copied().eq(delimiter.chars());
            i = (end + 1).min(chars.len());
            if done {
                break;
            }
        }
    }
    i
}

/// Position of the closing backtick for a backtick substitution opened just before `i`.
fn find_backtick_end(chars: &[char], mut i: usize) -> Option<usize> {
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '`' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

impl Ctx<'_> {
    /// Split `script` into simple commands (raw text with markers), appending to `out`.
    /// Command substitutions are split too and appended before the command containing them.
    fn split_script(&mut self, script: &str, depth: usize, out: &mut Vec<String>) {
        let chars: Vec<char> =
            script.chars().map(|c| if c == LDOLLAR || c == QDOLLAR { '$' } else { c }).collect();
        self.scan(&chars, 0, false, depth, out);
    }

    /// Scan from `i`; with `in_subst`, stop after the `)` closing the substitution and return
    /// the index just past it.
    fn scan(
        &mut self,
        chars: &[char],
        mut i: usize,
        in_subst: bool,
        depth: usize,
        out: &mut Vec<String>,
    ) -> usize {
        let mut cur = String::new();
        let mut quote = Quote::None;
        let mut parens = 0usize;
        let mut word_start = true;
        // `$((`: the substitution is arithmetic from its start (level 0); `((` at a command's
        // start opens an arithmetic command at the current level. Inside, `<<` is a shift.
        let mut arith: Option<usize> = (in_subst && chars.get(i) == Some(&'(')).then_some(0);
        // Here-documents opened on the current line: (delimiter, `<<-` strips leading tabs).
        let mut heredocs: Vec<(String, bool)> = Vec::new();
        let mut case = CaseState::default();
        fn flush(cur: &mut String, out: &mut Vec<String>) {
            if !cur.trim().is_empty() {
                out.push(cur.trim().to_string());
            }
            cur.clear();
        }
        while i < chars.len() {
            let c = chars[i];
            let next = chars.get(i + 1).copied();
            if quote == Quote::None
                && (c.is_whitespace() || matches!(c, ';' | '|' | '&' | '(' | ')' | '<' | '>'))
                && !cur.is_empty()
                && !cur.ends_with(char::is_whitespace)
            {
                case.word_done(&mut cur);
            }
            if quote == Quote::None && case.pattern {
                // A `case` pattern (`a|b)`, `(*)`): not a command; dropped up to its `)`.
                match c {
                    ')' => {
                        cur.clear();
                        case.pattern = false;
                        word_start = true;
                        i += 1;
                        continue;
                    }
                    '(' | '|' => {
                        i += 1;
                        continue;
                    }
                    _ => {}
                }
            }
            match quote {
                Quote::Single => {
                    match c {
                        '\'' => {
                            quote = Quote::None;
                            cur.push(c);
                        }
                        '$' => cur.push(LDOLLAR),
                        _ => cur.push(c),
                    }
                    i += 1;
                }
                Quote::Double => match c {
                    '"' => {
                        quote = Quote::None;
                        cur.push(c);
                        i += 1;
                    }
                    '\\' => {
                        match next {
                            Some('\n') => {}
                            Some('$') => cur.push(LDOLLAR),
                            Some(n) => {
                                cur.push('\\');
                                cur.push(n);
                            }
                            None => cur.push('\\'),
                        }
                        i += 2;
                    }
                    '$' => i = self.dollar(chars, i, true, depth, &mut cur, out),
                    '`' => i = self.backtick(chars, i, depth, &mut cur, out),
                    _ => {
                        cur.push(c);
                        i += 1;
                    }
                },
                Quote::None => {
                    let was_word_start = word_start;
                    word_start = false;
                    match c {
                        '\'' => {
                            quote = Quote::Single;
                            cur.push(c);
                            i += 1;
                        }
                        '"' => {
                            quote = Quote::Double;
                            cur.push(c);
                            i += 1;
                        }
                        '\\' => {
                            match next {
                                Some('\n') => word_start = was_word_start,
                                Some('$') => cur.push(LDOLLAR),
                                Some(n) => {
                                    cur.push('\\');
                                    cur.push(n);
                                }
                                None => cur.push('\\'),
                            }
                            i += 2;
                        }
                        '#' if was_word_start => {
                            while i < chars.len() && chars[i] != '\n' {
                                i += 1;
                            }
                            word_start = true;
                        }
                        ';' if case.open > 0 && matches!(next, Some(';' | '&')) => {
                            // `;;`, `;&`, `;;&`: the end of a case item; a pattern comes next.
                            flush(&mut cur, out);
                            case.pattern = true;
                            word_start = true;
                            i += 2;
                            if chars.get(i) == Some(&'&') {
                                i += 1;
                            }
                        }
                        '\n' if !heredocs.is_empty() => {
                            flush(&mut cur, out);
                            word_start = true;
                            i = skip_heredoc_bodies(chars, i + 1, &mut heredocs);
                        }
                        '\n' | ';' | '|' => {
                            flush(&mut cur, out);
                            word_start = true;
                            i += 1;
                        }
                        '&' => {
                            if next == Some('>') || cur.ends_with('>') || cur.ends_with('<') {
                                cur.push(c);
                            } else {
                                flush(&mut cur, out);
                                word_start = true;
                            }
                            i += 1;
                        }
                        '(' => {
                            if was_word_start && next == Some('(') && arith.is_none() {
                                arith = Some(parens);
                            }
                            parens += 1;
                            flush(&mut cur, out);
                            word_start = true;
                            i += 1;
                        }
                        ')' => {
                            flush(&mut cur, out);
                            word_start = true;
                            i += 1;
                            if parens > 0 {
                                parens -= 1;
                                if arith.is_some_and(|level| parens <= level) {
                                    arith = None;
                                }
                            } else if in_subst {
                                return i;
                            }
                        }
                        '<' if next == Some('<') && arith.is_none() => {
                            // `<<<WORD` (a here-string) or `<<[-]DELIM` (a here-document): the
                            // word and the document's lines are the command's input, not its
                            // arguments. The operator is kept, spaced from its word, for
                            // split_redirections to drop both.
                            if !cur.is_empty() && !cur.ends_with(char::is_whitespace) {
                                cur.push(' ');
                            }
                            if chars.get(i + 2) == Some(&'<') {
                                cur.push_str("<<< ");
                                i += 3;
                            } else {
                                let strip = chars.get(i + 2) == Some(&'-');
                                let (delimiter, end) =
                                    heredoc_delimiter(chars, i + if strip { 3 } else { 2 });
                                cur.push_str("<< heredoc ");
                                heredocs.push((delimiter, strip));
                                i = end;
                            }
                        }
                        '<' | '>' => {
                            // Separate a redirection glued to a word (`url>/dev/null`), but
                            // keep a file-descriptor number attached (`2>&1`).
                            let word: &str = cur.rsplit(char::is_whitespace).next().unwrap_or("");
                            let glued = !word.is_empty()
                                && !word
                                    .chars()
                                    .all(|d| d.is_ascii_digit() || d == '<' || d == '>' || d == '&');
                            if glued {
                                cur.push(' ');
                            }
                            cur.push(c);
                            i += 1;
                        }
                        '$' => i = self.dollar(chars, i, false, depth, &mut cur, out),
                        '`' => i = self.backtick(chars, i, depth, &mut cur, out),
                        _ => {
                            if c.is_whitespace() {
                                word_start = true;
                            }
                            cur.push(c);
                            i += 1;
                        }
                    }
                }
            }
        }
        flush(&mut cur, out);
        // A backslash as the last character steps two past it.
        i.min(chars.len())
    }

    /// Handle a `$` at `i` (unquoted or inside double quotes); returns the next index.
    fn dollar(
        &mut self,
        chars: &[char],
        i: usize,
        quoted: bool,
        depth: usize,
        cur: &mut String,
        out: &mut Vec<String>,
    ) -> usize {
        let dollar = if quoted { QDOLLAR } else { '$' };
        match chars.get(i + 1) {
            Some('(') => {
                let start = i + 2;
                let mut sub = Vec::new();
                let end = if depth >= MAX_DEPTH {
                    skip_parens(chars, start)
                } else {
                    self.scan(chars, start, true, depth + 1, &mut sub)
                }
                .min(chars.len());
                let content_end = if end > start && chars.get(end - 1) == Some(&')') { end - 1 } else { end };
                let content: String = chars[start..content_end.max(start)].iter().collect();
                let m = self.substitution_ref(&content, &sub, depth, &format!("$({})", content.trim()));
                cur.push(m);
                out.extend(sub);
                end
            }
            Some('{') => {
                cur.push(dollar);
                let mut level = 0usize;
                let mut j = i + 1;
                while j < chars.len() {
                    let ch = chars[j];
                    cur.push(ch);
                    j += 1;
                    if ch == '{' {
                        level += 1;
                    } else if ch == '}' {
                        level = level.saturating_sub(1);
                        if level == 0 {
                            break;
                        }
                    }
                }
                j
            }
            _ => {
                cur.push(dollar);
                i + 1
            }
        }
    }

    /// Handle a backtick substitution opening at `i`; returns the next index.
    fn backtick(
        &mut self,
        chars: &[char],
        i: usize,
        depth: usize,
        cur: &mut String,
        out: &mut Vec<String>,
    ) -> usize {
        let end = find_backtick_end(chars, i + 1);
        let stop = end.unwrap_or(chars.len()).min(chars.len());
        let mut content = String::new();
        let mut j = i + 1;
        while j < stop {
            if chars[j] == '\\' && matches!(chars.get(j + 1), Some('`' | '\\' | '$')) {
                content.push(chars[j + 1]);
                j += 2;
            } else {
                content.push(chars[j]);
                j += 1;
            }
        }
        let mut sub = Vec::new();
        if depth < MAX_DEPTH {
            self.split_script(&content, depth + 1, &mut sub);
        }
        let m = self.substitution_ref(&content, &sub, depth, &format!("`{}`", content.trim()));
        out.extend(sub);
        cur.push(m);
        end.map_or(chars.len(), |e| e + 1)
    }
}

/// `dirname`: everything before the last `/` (`/` for a file at the root, `.` without one).
fn dirname(path: &str) -> String {
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
    fn substitution_ref(&mut self, content: &str, pieces: &[String], depth: usize, shown: &str) -> char {
        let kind = if is_hostname_command(content.trim()) {
            RefKind::SelfHost
        } else if let Some(v) = self.eval_substitution(pieces, depth) {
            RefKind::Lit(v)
        } else {
            RefKind::UnresolvedCmd
        };
        self.new_ref(kind, shown)
    }

    fn eval_substitution(&mut self, pieces: &[String], depth: usize) -> Option<String> {
        let words = |p: &String| split_redirections(&piece_words(p), Clone::clone).0;
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
    fn known_text(&mut self, word: &str, depth: usize) -> Option<String> {
        let (v, _) = self.resolve_text(word, depth, true);
        let v = self.render_lit(&v);
        (!v.is_empty() && !v.chars().any(is_reserved_char) && !v.contains(['$', '`'])).then_some(v)
    }
}

/// Shell reserved words (and `!`, `{`, `}`, `[[`-free) skipped at the start of a command.
const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "while", "until", "do", "done", "for", "in", "case", "esac", "!",
    "{", "}", "select", "function",
];

/// Word-split one simple command (quotes removed); falls back to whitespace splitting on
/// malformed quoting. Leading reserved words are dropped.
fn piece_words(piece: &str) -> Vec<String> {
    let words =
        shell_words::split(piece).unwrap_or_else(|_| piece.split_whitespace().map(str::to_string).collect());
    let skip = words.iter().take_while(|w| KEYWORDS.contains(&w.as_str())).count();
    words.into_iter().skip(skip).collect()
}

/// `NAME=value` assignment word: returns (name, value).
fn split_assignment(w: &str) -> Option<(&str, &str)> {
    let (n, v) = w.split_once('=')?;
    if is_ident(n) { Some((n, v)) } else { None }
}

/// What a variable name resolves to in the current scope.
enum Lookup {
    Val(String),
    SelfIp,
    SelfName,
    SelfHost,
    Unres,
    Undef,
}

impl Ctx<'_> {
    /// Resolve a shell variable referenced inside a script.
    fn lookup(&mut self, name: &str) -> Lookup {
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
    fn positional_lookup(&self, name: &str) -> Lookup {
        let n: usize = name.parse().unwrap_or(usize::MAX);
        if n == 0 {
            return self.arg0.clone().map_or(Lookup::Unres, Lookup::Val);
        }
        match &self.positional {
            Some(v) => v.get(n - 1).cloned().map_or(Lookup::Undef, Lookup::Val),
            None => Lookup::Unres,
        }
    }

    /// Turn a lookup into text; returns true when the text must be field-split.
    fn push_lookup(&mut self, l: Lookup, original: &str, quoted: bool, out: &mut String) -> bool {
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
    fn resolve_word(&mut self, word: &str, depth: usize) -> Vec<String> {
        let (s, split) = self.resolve_text(word, depth, false);
        if split { s.split_whitespace().map(str::to_string).collect() } else { vec![s] }
    }

    fn resolve_text(&mut self, word: &str, depth: usize, force_quoted: bool) -> (String, bool) {
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
    fn brace_expand(
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
fn render_plain(s: &str) -> String {
    s.chars().map(|c| if c == LDOLLAR || c == QDOLLAR { '$' } else { c }).collect()
}

/// Split a shell script into simple commands (each a Vec of words).
///
/// Splits at unquoted `;`, `&&`, `||`, `|`, `&` and newlines; the contents of `$(...)` and
/// backticks become commands of their own (listed before the command that contains them);
/// backslash-newline continues a line; `#` comments and leading reserved words are dropped.
/// Words are returned with quotes removed and variable references as written.
pub fn split_commands(script: &str) -> Vec<Vec<String>> {
    let env = ExecEnv::default();
    let mut ctx = Ctx::new(&env);
    let mut pieces = Vec::new();
    ctx.split_script(&sanitize(script), 0, &mut pieces);
    pieces
        .iter()
        .map(|p| piece_words(p).iter().map(|w| ctx.render_orig(w)).collect::<Vec<_>>())
        .filter(|ws| !ws.is_empty())
        .collect()
}

impl Ctx<'_> {
    /// Render a string for display: every marker becomes the text as written.
    fn render_orig(&self, s: &str) -> String {
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
    fn render_lit(&self, s: &str) -> String {
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

// ---------------------------------------------------------------------------------------------
// Hosts, URLs, classification
// ---------------------------------------------------------------------------------------------

/// Where a host points, as far as the webhook can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HostClass {
    /// Loopback, Unix socket, omitted host, the Pod's own IP/name.
    Local,
    /// Any other statically known host.
    Remote,
    /// Depends on a value unknown at admission.
    Unresolved,
}

/// A parsed `scheme://[userinfo@]host[:port][,host[:port]...][/path]` URL.
struct Url {
    scheme: String,
    hosts: Vec<(String, Option<String>)>,
    /// Path, query and fragment (starting with `/`, `?` or `#`), possibly empty.
    path: String,
}

fn parse_url(s: &str) -> Option<Url> {
    let (scheme, rest) = s.split_once("://")?;
    if scheme.is_empty() || !scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    {
        return None;
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    let hostlist = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let hosts = hostlist.split(',').map(split_host_port).collect();
    Some(Url { scheme: scheme.to_ascii_lowercase(), hosts, path: path.to_string() })
}

/// Split `host[:port]`, `[v6]:port`, bare IPv6.
fn split_host_port(s: &str) -> (String, Option<String>) {
    if let Some(rest) = s.strip_prefix('[')
        && let Some((h, after)) = rest.split_once(']')
    {
        let port = after.strip_prefix(':').map(str::to_string);
        return (h.to_string(), port);
    }
    if s.matches(':').count() == 1
        && let Some((h, p)) = s.split_once(':')
    {
        return (h.to_string(), Some(p.to_string()));
    }
    (s.to_string(), None)
}

/// Hosts named by an option value: a URL, or a comma-separated `[user@]host[:port]` list
/// (a `/chroot` or `/db` suffix is ignored; a leading `/` is a socket path).
fn hosts_of(v: &str) -> Vec<String> {
    if v.starts_with('/') {
        return vec![v.to_string()];
    }
    v.split(',')
        .map(|item| {
            let item = item.trim();
            if let Some(u) = parse_url(item) {
                return u.hosts.into_iter().next().map(|h| h.0).unwrap_or_default();
            }
            let item = item.split('/').next().unwrap_or("");
            let item = item.rsplit_once('@').map_or(item, |(_, h)| h);
            split_host_port(item).0
        })
        .collect()
}

/// Well-known ports of dependency families, used to refine generic network clients.
fn port_category(port: &str) -> Option<DependencyCategory> {
    use DependencyCategory::*;
    Some(match port {
        "5432" | "3306" | "27017" | "9042" | "26257" | "1433" | "1521" | "7687" | "8123" => Database,
        "6379" | "26379" | "11211" => Cache,
        "5672" | "5671" | "9092" | "4222" | "61616" | "1883" => Queue,
        "2181" | "2379" => Coordination,
        "9200" | "9300" => Search,
        "8500" | "8600" => ServiceDiscovery,
        "8200" => Secrets,
        _ => return None,
    })
}

impl Ctx<'_> {
    /// Classify a host (already free of `Lit` markers).
    fn classify(&self, host: &str) -> HostClass {
        let h = host.trim();
        let h = h.strip_prefix('[').and_then(|x| x.strip_suffix(']')).unwrap_or(h);
        let lower = h.to_ascii_lowercase();
        let lower = lower.strip_suffix('.').unwrap_or(&lower);
        if lower.is_empty()
            || lower.starts_with('/')
            || lower.starts_with('@')
            || lower.starts_with("unix:")
            || lower.starts_with("%2f")
        {
            return HostClass::Local;
        }
        let mut chars = lower.chars();
        let first = chars.next();
        let rest: String = chars.collect();
        let kinds: Vec<&RefKind> = lower.chars().filter_map(|c| self.ref_of(c)).map(|r| &r.kind).collect();
        let has_marker = lower.chars().any(|c| marker_index(c).is_some());
        if kinds.iter().any(|k| matches!(k, RefKind::Unresolved | RefKind::UnresolvedCmd))
            || lower.contains(['$', '`'])
            || (has_marker && kinds.is_empty())
        {
            return HostClass::Unresolved;
        }
        if let Some(r) = first.and_then(|c| self.ref_of(c)) {
            let rest_plain = !rest.chars().any(|c| marker_index(c).is_some());
            let ok = match r.kind {
                RefKind::SelfIp => rest.is_empty(),
                RefKind::SelfHost | RefKind::SelfName => {
                    rest_plain && (rest.is_empty() || rest.starts_with('.'))
                }
                _ => false,
            };
            return if ok { HostClass::Local } else { HostClass::Unresolved };
        }
        if has_marker {
            return HostClass::Unresolved;
        }
        if matches!(lower, "localhost" | "localhost.localdomain" | "ip6-localhost" | "ip6-loopback")
            || lower.ends_with(".localhost")
        {
            return HostClass::Local;
        }
        if let Ok(ip) = lower.parse::<Ipv4Addr>() {
            return if ip.is_loopback() || ip.is_unspecified() {
                HostClass::Local
            } else {
                HostClass::Remote
            };
        }
        if let Ok(ip) = lower.parse::<Ipv6Addr>() {
            let v4_local = ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback() || v4.is_unspecified());
            return if ip.is_loopback() || ip.is_unspecified() || v4_local {
                HostClass::Local
            } else {
                HostClass::Remote
            };
        }
        // Shorthand loopback forms such as `127.1`.
        if lower.starts_with("127.") && lower.chars().all(|c| c.is_ascii_digit() || c == '.') {
            return HostClass::Local;
        }
        HostClass::Remote
    }

    /// The kind of the first unresolved reference in `s`, to explain a target.
    fn unresolved_note(&self, s: &str) -> Option<&'static str> {
        for c in s.chars() {
            match self.ref_of(c).map(|r| &r.kind) {
                Some(RefKind::Unresolved) => return Some("not a literal env value"),
                Some(RefKind::UnresolvedCmd) => return Some("command output"),
                _ => {}
            }
        }
        if s.contains("$(") || s.contains('$') {
            return Some("not a literal env value");
        }
        None
    }
}

// ---------------------------------------------------------------------------------------------
// Option parsing
// ---------------------------------------------------------------------------------------------

/// Options, flags and positional arguments of one command line.
#[derive(Default)]
struct Parsed {
    /// (name without dashes, value); short options use their letter.
    opts: Vec<(String, String)>,
    flags: Vec<String>,
    pos: Vec<String>,
}

impl Parsed {
    /// All values given for any of `names`.
    fn get(&self, names: &[&str]) -> Vec<String> {
        self.opts.iter().filter(|(n, _)| names.contains(&n.as_str())).map(|(_, v)| v.clone()).collect()
    }

    fn has(&self, names: &[&str]) -> bool {
        self.flags.iter().any(|f| names.contains(&f.as_str()))
            || self.opts.iter().any(|(n, _)| names.contains(&n.as_str()))
    }
}

/// getopt_long-style parsing. `short_val`: letters taking a value (attached or next word);
/// `short_opt`: letters taking an optional attached value only (mysql `-p`); `long_val`:
/// long options whose value may be the next word (`--name=value` is always accepted).
fn getopt(args: &[String], short_val: &str, short_opt: &str, long_val: &[&str]) -> Parsed {
    let mut p = Parsed::default();
    let mut k = 0;
    while k < args.len() {
        let a = &args[k];
        if a == "--" {
            p.pos.extend(args[k + 1..].iter().cloned());
            break;
        }
        if let Some(l) = a.strip_prefix("--") {
            if let Some((n, v)) = l.split_once('=') {
                p.opts.push((n.to_string(), v.to_string()));
            } else if long_val.contains(&l) {
                p.opts.push((l.to_string(), args.get(k + 1).cloned().unwrap_or_default()));
                k += 1;
            } else {
                p.flags.push(l.to_string());
            }
        } else if a.len() > 1 && a.starts_with('-') {
            let cs: Vec<char> = a.chars().skip(1).collect();
            for (ci, ch) in cs.iter().enumerate() {
                let rest: String = cs[ci + 1..].iter().collect();
                if short_val.contains(*ch) {
                    let v = if rest.is_empty() {
                        k += 1;
                        args.get(k).cloned().unwrap_or_default()
                    } else {
                        rest
                    };
                    p.opts.push((ch.to_string(), v));
                    break;
                }
                if short_opt.contains(*ch) {
                    p.opts.push((ch.to_string(), rest));
                    break;
                }
                p.flags.push(ch.to_string());
            }
        } else {
            p.pos.push(a.clone());
        }
        k += 1;
    }
    p
}

/// Go `flag`-style parsing: `-name=value`, `--name=value`, `-name value` for names in `vals`.
fn goflags(args: &[String], vals: &[&str]) -> Parsed {
    let mut p = Parsed::default();
    let mut k = 0;
    while k < args.len() {
        let a = &args[k];
        if a == "--" {
            p.pos.extend(args[k + 1..].iter().cloned());
            break;
        }
        if a.len() > 1 && a.starts_with('-') {
            let l = a.trim_start_matches('-');
            if let Some((n, v)) = l.split_once('=') {
                p.opts.push((n.to_string(), v.to_string()));
            } else if vals.contains(&l) {
                p.opts.push((l.to_string(), args.get(k + 1).cloned().unwrap_or_default()));
                k += 1;
            } else {
                p.flags.push(l.to_string());
            }
        } else {
            p.pos.push(a.clone());
        }
        k += 1;
    }
    p
}

/// One place a client connects to.
struct Hit {
    category: DependencyCategory,
    /// Hosts to classify (markers allowed); any non-local host makes the hit a dependency.
    hosts: Vec<String>,
    /// What to report as the target (markers allowed).
    target: String,
    /// Where an implied target came from (`PGHOST`).
    via: Option<String>,
    /// A dependency whatever the host (DNS, control plane, `mongodb+srv://`, ...).
    always: bool,
}

impl Hit {
    fn new(category: DependencyCategory, hosts: Vec<String>, target: impl Into<String>) -> Self {
        Hit { category, hosts, target: target.into(), via: None, always: false }
    }

    fn always(category: DependencyCategory, target: impl Into<String>) -> Self {
        Hit { category, hosts: Vec::new(), target: target.into(), via: None, always: true }
    }

    fn via(mut self, var: &str) -> Self {
        self.via = Some(var.to_string());
        self
    }
}

// ---------------------------------------------------------------------------------------------
// Engine: scripts, wrappers, dispatch
// ---------------------------------------------------------------------------------------------

/// Splits a simple command's words into the command proper and the targets of its redirections
/// (`>f`, `2>/dev/null`, `>> f`, `< f`, `&>f`, `2>&1`; a bare operator takes the next word).
fn split_redirections(args: &[String], lit: impl Fn(&String) -> String) -> (Vec<String>, Vec<String>) {
    let mut words = Vec::with_capacity(args.len());
    let mut targets = Vec::new();
    let mut k = 0;
    while k < args.len() {
        let text = lit(&args[k]);
        let digits = text.chars().take_while(char::is_ascii_digit).count();
        let op_part = &text[digits..];
        let op = ["<<<", "<<-", "<<", "&>>", ">>", "&>", ">&", "<&", "<>", ">|", ">", "<"]
            .into_iter()
            .find(|op| op_part.starts_with(*op));
        match op {
            Some(op) => {
                // A here-string's word and a here-document's delimiter are input, not a file.
                let input = op.starts_with("<<");
                let target = &op_part[op.len()..];
                if target.is_empty() {
                    if let Some(next) = args.get(k + 1).filter(|_| !input) {
                        targets.push(next.clone());
                    }
                    k += 2;
                } else {
                    if !input {
                        targets.push(target.to_string());
                    }
                    k += 1;
                }
            }
            None => {
                words.push(args[k].clone());
                k += 1;
            }
        }
    }
    (words, targets)
}

/// Command-level environment assignments (`PGHOST=db cmd`, `env PGHOST=db cmd`).
type Overrides = Vec<(String, String)>;

/// Index of the first argument that is not an option of a wrapper. `with_value` lists the
/// options whose value is the next word; `--` ends the options.
fn skip_opts(vals: &[String], with_value: &[&str]) -> usize {
    let mut k = 0;
    while k < vals.len() {
        let v = vals[k].as_str();
        if v == "--" {
            return k + 1;
        }
        if v.len() > 1 && v.starts_with('-') {
            k += if with_value.contains(&v) { 2 } else { 1 };
        } else {
            return k;
        }
    }
    k
}

/// For `sh [options] -c [options] script`, the index of the script among `vals`.
fn shell_script_pos(vals: &[String]) -> Option<usize> {
    let mut has_c = false;
    let mut k = 0;
    while k < vals.len() {
        let v = vals[k].as_str();
        if v == "--" || v == "-" {
            k += 1;
            break;
        }
        if v.starts_with("--") {
            k += if matches!(v, "--rcfile" | "--init-file") { 2 } else { 1 };
            continue;
        }
        if v.len() > 1 && (v.starts_with('-') || v.starts_with('+')) {
            let flags = &v[1..];
            if v.starts_with('-') && flags.contains('c') {
                has_c = true;
            }
            k += 1;
            if flags.contains(['o', 'O']) {
                k += 1;
            }
            continue;
        }
        break;
    }
    (has_c && k < vals.len()).then_some(k)
}

/// For `sh [options] FILE [args]`, the index of FILE among `vals` (`None` with `-s`, or no file).
fn shell_file_pos(vals: &[String]) -> Option<usize> {
    let mut k = 0;
    while k < vals.len() {
        let v = vals[k].as_str();
        if v == "--" {
            return (k + 1 < vals.len()).then_some(k + 1);
        }
        if v.starts_with("--") {
            k += if matches!(v, "--rcfile" | "--init-file") { 2 } else { 1 };
            continue;
        }
        if v.len() > 1 && (v.starts_with('-') || v.starts_with('+')) {
            if v.starts_with('-') && v.contains('s') {
                return None;
            }
            k += if v[1..].contains(['o', 'O']) { 2 } else { 1 };
            continue;
        }
        return Some(k);
    }
    None
}

/// `python`, `python3`, `python3.12`, ...
fn is_python(name: &str) -> bool {
    name.strip_prefix("python").is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// For `python [options] -m MODULE ...` or `python [options] SCRIPT ...`, the index of MODULE or
/// SCRIPT among `vals`; `None` for `-c CODE`, an attached `-mMODULE` or nothing to run.
fn python_target(vals: &[String]) -> Option<usize> {
    let mut k = 0;
    while k < vals.len() {
        let v = vals[k].as_str();
        match v {
            "-m" => return (k + 1 < vals.len()).then_some(k + 1),
            "-c" => return None,
            "-W" | "-X" | "--check-hash-based-pycs" => k += 2,
            "--" => return (k + 1 < vals.len()).then_some(k + 1),
            _ if v.starts_with("-m") || v.starts_with("-c") => return None,
            _ if v.len() > 1 && v.starts_with('-') => k += 1,
            _ => return Some(k),
        }
    }
    None
}

/// Does a file that is executed directly run as a shell script? A `#!` line naming a shell, or
/// none at all (a shell runs such a file itself) on a name that is not another language's.
fn runs_as_shell(path: &str, text: &str) -> bool {
    const SHELLS: &[&str] = &["sh", "bash", "ash", "dash", "zsh", "ksh", "mksh", "yash", "busybox"];
    if let Some(line) = text.strip_prefix("#!") {
        let mut words = line.lines().next().unwrap_or("").split_whitespace();
        let mut interpreter = basename(words.next().unwrap_or(""));
        if interpreter == "env" {
            interpreter = words.find(|w| !w.starts_with('-') && !w.contains('=')).map_or("", basename);
        }
        return SHELLS.contains(&interpreter);
    }
    let ext = basename(path).rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    !matches!(ext.as_deref(), Some("py" | "rb" | "pl" | "js" | "php" | "lua" | "awk" | "jar" | "class"))
}

impl Ctx<'_> {
    /// Analyse a `-c` script: each simple command in turn.
    fn analyze_script(&mut self, script: &str, depth: usize) -> Option<Dependency> {
        if depth > MAX_DEPTH || self.over_budget.get() {
            return None;
        }
        if script.len() > MAX_SCRIPT_BYTES {
            self.too_long.get_or_insert(script.len());
            return None;
        }
        if !self.spend_object(script.len()) {
            return None;
        }
        let mut pieces = Vec::new();
        self.split_script(script, depth, &mut pieces);
        for piece in pieces {
            // Redirections are the shell's, not the command's arguments (`curl URL > /dev/null`).
            let (words, targets) = split_redirections(&piece_words(&piece), |w| self.render_lit(w));
            if let Some(d) = self.dev_tcp_dependency(&targets, &words) {
                return Some(d);
            }
            let mut k = 0;
            let mut assigns: Overrides = Vec::new();
            let mut prefix = Vec::new();
            while let Some((n, v)) = words.get(k).and_then(|w| split_assignment(w)) {
                let (val, _) = self.resolve_text(v, depth, true);
                assigns.push((n.to_string(), val));
                prefix.push(self.render_orig(&words[k]));
                k += 1;
            }
            if k >= words.len() {
                self.shell_vars.extend(assigns);
                continue;
            }
            if matches!(words[k].as_str(), "export" | "local" | "declare" | "typeset" | "readonly") {
                self.declare(&words[k..], depth);
                continue;
            }
            let mut args = Vec::new();
            for w in &words[k..] {
                args.extend(self.resolve_word(w, depth));
            }
            if let Some(d) = self.analyze_args(&args, assigns, &prefix, depth) {
                return Some(d);
            }
        }
        None
    }

    /// `export A=x`, `declare -x A=x`, `local A=x`: remember script variables.
    fn declare(&mut self, words: &[String], depth: usize) {
        let mut export = words.first().is_some_and(|w| w == "export");
        for w in &words[1..] {
            if w.starts_with('-') {
                export |= w.contains('x');
                continue;
            }
            if let Some((n, v)) = split_assignment(w) {
                let (val, _) = self.resolve_text(v, depth, true);
                self.shell_vars.insert(n.to_string(), val);
                if export {
                    self.exported.insert(n.to_string());
                }
            } else if export && is_ident(w) {
                self.exported.insert(w.clone());
            }
        }
    }

    /// Analyse one simple command (`args` resolved, markers allowed): unwrap wrappers, then
    /// hand the client to its parser.
    fn analyze_args(
        &mut self,
        args: &[String],
        mut overrides: Overrides,
        prefix_disp: &[String],
        depth: usize,
    ) -> Option<Dependency> {
        if self.over_budget.get() {
            return None;
        }
        let mut i = 0;
        for _ in 0..MAX_UNWRAP {
            let first = self.render_lit(args.get(i)?);
            if first.contains('/')
                && !first.chars().any(is_reserved_char)
                && let Some(files) = self.files
            {
                match files.read(&first) {
                    FileLookup::Text { text, origin } if runs_as_shell(&first, &text) => {
                        let script_args = args[i + 1..].to_vec();
                        return self.run_file(&first, &text, origin, Some(script_args), false, depth);
                    }
                    FileLookup::Text { .. } | FileLookup::NotOnVolume => {}
                    // A shell script that cannot be read: reported, not guessed. (Another
                    // language's file is opaque either way: its name decides below.)
                    FileLookup::Unreadable(reason) if runs_as_shell(&first, "") => {
                        self.note_unresolved(&first, reason);
                        return None;
                    }
                    FileLookup::Unreadable(_) => {}
                }
            }
            let base = basename(&first).to_string();
            let raw_rest = &args[i + 1..];
            let rest: Vec<String> = raw_rest.iter().map(|a| self.render_lit(a)).collect();
            let name = base.strip_suffix(".sh").unwrap_or(&base);
            match name {
                "sh" | "bash" | "ash" | "dash" | "zsh" | "ksh" | "mksh" | "yash" => {
                    if depth >= MAX_DEPTH {
                        return None;
                    }
                    for (n, v) in overrides {
                        self.exported.insert(n.clone());
                        self.shell_vars.insert(n, v);
                    }
                    let Some(pos) = shell_script_pos(&rest) else {
                        // `sh FILE args`: the shell runs the file.
                        let k = shell_file_pos(&rest)?;
                        return self.run_named_file(&rest[k], &raw_rest[k + 1..], false, depth);
                    };
                    // `sh -c SCRIPT [NAME [ARGS...]]`: NAME is `$0`, ARGS are `$1`...
                    let saved = (self.positional.take(), self.arg0.take());
                    self.arg0 = raw_rest.get(pos + 1).cloned();
                    self.positional =
                        Some(raw_rest.get(pos + 2..).map(<[String]>::to_vec).unwrap_or_default());
                    let found = self.analyze_script(&raw_rest[pos], depth + 1);
                    (self.positional, self.arg0) = saved;
                    return found;
                }
                "." | "source" => {
                    let path = rest.first()?;
                    return self.run_named_file(path, &raw_rest[1..], true, depth);
                }
                n if is_python(n) => i += 1 + python_target(&rest)?,
                "busybox" | "nohup" | "setsid" | "entrypoint" | "docker-entrypoint" => i += 1,
                "env" => {
                    let mut k = 0;
                    while k < rest.len() {
                        let v = rest[k].as_str();
                        if v == "--" {
                            k += 1;
                            break;
                        } else if matches!(v, "-u" | "--unset" | "-C" | "--chdir") {
                            k += 2;
                        } else if v.len() > 1 && v.starts_with('-') {
                            k += 1;
                        } else if let Some((n, _)) = split_assignment(&raw_rest[k]) {
                            let val = raw_rest[k][n.len() + 1..].to_string();
                            overrides.push((n.to_string(), val));
                            k += 1;
                        } else {
                            break;
                        }
                    }
                    i += 1 + k;
                }
                "exec" => i += 1 + skip_opts(&rest, &["-a"]),
                "timeout" => {
                    let k = skip_opts(&rest, &["-s", "--signal", "-k", "--kill-after"]);
                    i += 2 + k;
                }
                "nice" => i += 1 + skip_opts(&rest, &["-n", "--adjustment"]),
                "ionice" => i += 1 + skip_opts(&rest, &["-c", "-n", "-p", "-P", "-u"]),
                "stdbuf" => i += 1 + skip_opts(&rest, &["-i", "-o", "-e"]),
                "command" => {
                    if rest.iter().any(|r| r == "-v" || r == "-V") {
                        return None;
                    }
                    i += 1 + skip_opts(&rest, &[]);
                }
                "time" => i += 1 + skip_opts(&rest, &["-f", "--format", "-o", "--output"]),
                "dumb-init" => i += 1 + skip_opts(&rest, &["-r", "--rewrite"]),
                "tini" => i += 1 + skip_opts(&rest, &["-e", "-p"]),
                "sudo" => i += 1 + skip_opts(&rest, &["-u", "-g", "-C", "-h", "-p", "-U"]),
                "gosu" | "su-exec" => i += 2,
                // `eval WORDS`: the words joined are a script.
                "eval" => {
                    if depth >= MAX_DEPTH {
                        return None;
                    }
                    return self.analyze_script(&raw_rest.join(" "), depth + 1);
                }
                // `su [-] [USER] -c SCRIPT`, `runuser [-u USER] [-c SCRIPT | -- CMD...]`.
                "su" | "runuser" => {
                    if let Some(pos) = raw_rest.iter().position(|a| a == "-c" || a == "--command") {
                        if depth >= MAX_DEPTH {
                            return None;
                        }
                        return self.analyze_script(raw_rest.get(pos + 1)?, depth + 1);
                    }
                    if name == "su" {
                        return None;
                    }
                    let k = skip_opts(&rest, &["-u", "--user", "-g", "--group", "-G", "--supp-group"]);
                    i += 1 + k;
                }
                // `xargs [OPTS] CMD ARGS`: the command runs with extra arguments from stdin.
                "xargs" => {
                    i += 1 + skip_opts(
                        &rest,
                        &[
                            "-n",
                            "-I",
                            "-i",
                            "-L",
                            "-P",
                            "-d",
                            "-s",
                            "-E",
                            "-a",
                            "--max-args",
                            "--max-procs",
                            "--delimiter",
                        ],
                    );
                }
                _ => {
                    let hits = self.tool_hits(name, &rest, &overrides);
                    for hit in hits {
                        let dependency =
                            hit.always || hit.hosts.iter().any(|h| self.classify(h) != HostClass::Local);
                        if dependency {
                            return Some(self.make_dependency(&base, hit, args, prefix_disp));
                        }
                    }
                    let known = self
                        .known
                        .iter()
                        .find(|k| k.matches(&base, &rest) || (name != base && k.matches(name, &rest)));
                    if let Some(known) = known {
                        let hit = Hit::always(known.category, known.reaches.clone());
                        let mut d = self.make_dependency(&base, hit, args, prefix_disp);
                        d.why = Some(known.why.clone());
                        return Some(d);
                    }
                    return None;
                }
            }
        }
        None
    }

    /// A redirection to bash's `/dev/tcp/HOST/PORT` (or `/dev/udp/...`) opens a connection to HOST.
    fn dev_tcp_dependency(&self, targets: &[String], words: &[String]) -> Option<Dependency> {
        for t in targets {
            let lit = self.render_lit(t);
            let Some(rest) = lit.strip_prefix("/dev/tcp/").or_else(|| lit.strip_prefix("/dev/udp/")) else {
                continue;
            };
            let host = rest.split('/').next().unwrap_or_default().to_string();
            let port = rest.split('/').nth(1).map(str::to_string);
            if self.classify(&host) == HostClass::Local {
                continue;
            }
            let category = port.as_deref().and_then(port_category).unwrap_or(DependencyCategory::Network);
            let shown = match port {
                Some(p) => format!("{host}:{p}"),
                None => host.clone(),
            };
            return Some(self.make_dependency("/dev/tcp", Hit::new(category, vec![host], shown), words, &[]));
        }
        None
    }

    /// Records a script that could not be read (once per path).
    fn note_unresolved(&mut self, path: &str, reason: String) {
        self.note(path, reason, false);
    }

    /// Notes a command left unanalysed by one of the analysis bounds.
    fn note_over_bound(&mut self, path: &str, reason: String) {
        self.note(path, reason, true);
    }

    fn note(&mut self, path: &str, reason: String, over_bound: bool) {
        if !self.unresolved.iter().any(|u| u.path == path) {
            self.unresolved.push(UnresolvedScript { path: path.to_string(), reason, over_bound });
        }
    }

    /// Runs the file at `path` (a shell's operand, or sourced): analysed when it can be read.
    fn run_named_file(
        &mut self,
        path: &str,
        args: &[String],
        source: bool,
        depth: usize,
    ) -> Option<Dependency> {
        let files = self.files?;
        if path.chars().any(is_reserved_char) {
            // A path that depends on a value unknown here: which file runs is not known.
            return None;
        }
        match files.read(path) {
            FileLookup::Text { text, origin } => {
                let args = (!source || !args.is_empty()).then(|| args.to_vec());
                self.run_file(path, &text, origin, args, source, depth)
            }
            FileLookup::Unreadable(reason) => {
                self.note_unresolved(path, reason);
                None
            }
            FileLookup::NotOnVolume => None,
        }
    }

    /// Analyses a script file's text. Run as a program (`source` false), it is a new shell: only
    /// exported variables carry over, and `$0`, `$1`... are its path and `args`. Sourced, it shares
    /// the caller's variables (and its positional parameters, unless it is given arguments).
    /// Bounded: a file already being analysed is not entered again, nesting and the number of files
    /// read are limited.
    fn run_file(
        &mut self,
        path: &str,
        text: &str,
        origin: String,
        args: Option<Vec<String>>,
        source: bool,
        depth: usize,
    ) -> Option<Dependency> {
        if depth >= MAX_DEPTH
            || self.scripts.len() >= MAX_SCRIPT_NESTING
            || self.files_read >= MAX_SCRIPT_FILES
            || self.scripts.iter().any(|(p, _)| p == path)
        {
            return None;
        }
        self.files_read += 1;
        let saved_positional = (self.positional.clone(), self.arg0.clone());
        let saved_vars = (!source).then(|| (self.shell_vars.clone(), self.exported.clone()));
        if !source {
            let exported = &self.exported;
            self.shell_vars.retain(|k, _| exported.contains(k));
            self.arg0 = Some(path.to_string());
            self.positional = Some(args.clone().unwrap_or_default());
        } else if let Some(a) = args {
            self.positional = Some(a);
        }
        self.scripts.push((path.to_string(), origin));
        let found = self.analyze_script(&sanitize(text), depth + 1);
        self.scripts.pop();
        (self.positional, self.arg0) = saved_positional;
        if let Some((vars, exported)) = saved_vars {
            self.shell_vars = vars;
            self.exported = exported;
        }
        found
    }

    /// The value a client sees for an environment variable, if set.
    fn tool_env(&mut self, name: &str, ov: &[(String, String)]) -> Option<String> {
        if let Some((_, v)) = ov.iter().rev().find(|(n, _)| n == name) {
            return Some(self.render_lit(v));
        }
        if let Some(v) = self.shell_vars.get(name)
            && (self.exported.contains(name) || self.env.vars.contains_key(name))
        {
            let v = v.clone();
            return Some(self.render_lit(&v));
        }
        let original = format!("${name}");
        match self.env.vars.get(name)? {
            EnvValue::Literal(v) => {
                let v = env_literal(name, v);
                let e = self.kubelet_expand(&v, 1);
                Some(self.render_lit(&e))
            }
            EnvValue::PodIp => Some(self.new_ref(RefKind::SelfIp, &original).to_string()),
            EnvValue::PodName => Some(self.new_ref(RefKind::SelfName, &original).to_string()),
            EnvValue::Unresolved => Some(self.new_ref(RefKind::Unresolved, &original).to_string()),
        }
    }

    fn make_dependency(
        &self,
        program: &str,
        hit: Hit,
        args: &[String],
        prefix_disp: &[String],
    ) -> Dependency {
        let shown = redact_bare_userinfo(&redact_secrets(&self.render_orig(&hit.target)));
        let note = if hit.always && hit.hosts.is_empty() { None } else { self.unresolved_note(&hit.target) };
        let target = match (note, &hit.via) {
            (Some(n), _) => format!("{shown} ({n})"),
            (None, Some(v)) => format!("{shown} ({v})"),
            (None, None) => shown,
        };
        let mut words: Vec<String> = prefix_disp.to_vec();
        words.extend(args.iter().map(|a| self.render_orig(a)));
        let script = self.scripts.last().map(|(_, origin)| {
            let chain: Vec<&str> = self.scripts.iter().map(|(p, _)| p.as_str()).collect();
            format!("{} ({origin})", chain.join(" → "))
        });
        Dependency {
            program: program.to_string(),
            category: hit.category,
            target: truncate_chars(&target, 160),
            command: truncate_chars(&join_redacted(&words), 80),
            script,
            why: None,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Clients
// ---------------------------------------------------------------------------------------------

const PG_LONG: &[&str] = &[
    "host",
    "port",
    "username",
    "dbname",
    "command",
    "file",
    "timeout",
    "output",
    "set",
    "variable",
    "pset",
    "log-file",
    "format",
    "jobs",
    "schema",
    "table",
    "exclude-schema",
    "exclude-table",
    "encoding",
    "role",
    "superuser",
    "compress",
    "maintenance-db",
    "field-separator",
    "record-separator",
    "table-attr",
    "pgdata",
    "label",
    "checkpoint",
];
const MYSQL_LONG: &[&str] = &[
    "host",
    "port",
    "socket",
    "user",
    "database",
    "execute",
    "protocol",
    "uri",
    "connect-timeout",
    "count",
    "sleep",
    "result-file",
    "default-character-set",
    "ssl-ca",
    "ssl-cert",
    "ssl-key",
    "ssl-mode",
    "plugin-dir",
    "default-auth",
    "init-command",
    "login-path",
    "tls-version",
    "bind-address",
    "where",
    "file",
    "sql",
    "js",
    "py",
    "dbuser",
    "user",
];
const REDIS_LONG: &[&str] = &[
    "user",
    "pass",
    "cacert",
    "cacertdir",
    "cert",
    "key",
    "sni",
    "tls-ciphers",
    "tls-ciphersuites",
    "pattern",
    "quoted-pattern",
    "count",
    "eval",
    "rdb",
    "functions-rdb",
    "memkeys-samples",
    "intrinsic-latency",
    "pipe-timeout",
    "cluster-only-primary",
];
const MONGO_LONG: &[&str] = &[
    "host",
    "port",
    "eval",
    "file",
    "username",
    "password",
    "authenticationDatabase",
    "authenticationMechanism",
    "tlsCAFile",
    "tlsCertificateKeyFile",
    "tlsCertificateKeyFilePassword",
    "tlsCRLFile",
    "sslCAFile",
    "sslPEMKeyFile",
    "sslPEMKeyPassword",
    "apiVersion",
    "gssapiServiceName",
    "awsAccessKeyId",
    "awsSecretAccessKey",
    "awsSessionToken",
    "keyVaultNamespace",
    "kmsURL",
    "cryptSharedLibPath",
];
const CQLSH_LONG: &[&str] = &[
    "username",
    "password",
    "keyspace",
    "file",
    "execute",
    "encoding",
    "cqlshrc",
    "cqlversion",
    "protocol-version",
    "connect-timeout",
    "request-timeout",
    "browser",
    "credentials",
    "secure-connect-bundle",
];

/// Hosts named in a PostgreSQL connection string (URI or `key=value` conninfo).
fn pg_conninfo_hosts(c: &str) -> Vec<String> {
    if let Some(u) = parse_url(c) {
        if u.scheme != "postgres" && u.scheme != "postgresql" {
            return Vec::new();
        }
        let mut hosts: Vec<String> = u.hosts.into_iter().map(|h| h.0).collect();
        if let Some((_, query)) = u.path.split_once('?') {
            let q: Vec<String> = query
                .split('&')
                .filter_map(|kv| kv.split_once('='))
                .filter(|(k, _)| *k == "host" || *k == "hostaddr")
                .flat_map(|(_, v)| v.split(',').map(str::to_string).collect::<Vec<_>>())
                .collect();
            if !q.is_empty() {
                hosts = q;
            }
        }
        return hosts;
    }
    if !c.contains('=') {
        return Vec::new();
    }
    c.split_whitespace()
        .filter_map(|t| t.split_once('='))
        .filter(|(k, _)| *k == "host" || *k == "hostaddr")
        .flat_map(|(_, v)| v.trim_matches('\'').split(',').map(str::to_string).collect::<Vec<_>>())
        .collect()
}

fn is_kafka_tool(n: &str) -> bool {
    n.starts_with("kafka-")
        && !matches!(n, "kafka-server-start" | "kafka-server-stop" | "kafka-storage" | "kafka-run-class")
}

impl Ctx<'_> {
    /// Per-client parsing: where does the command connect to?
    fn tool_hits(&mut self, name: &str, a: &[String], ov: &[(String, String)]) -> Vec<Hit> {
        use DependencyCategory::*;
        match name {
            "pg_isready" | "psql" | "pg_dump" | "pg_dumpall" | "pg_basebackup" | "pg_restore"
            | "createdb" | "dropdb" | "vacuumdb" | "reindexdb" | "clusterdb" | "pg_receivewal"
            | "pgbench" => self.postgres(name, a, ov),
            "mysql" | "mysqladmin" | "mariadb" | "mariadb-admin" | "mysqlsh" | "mysqlcheck" | "mysqldump"
            | "mariadb-dump" | "mariadb-check" | "mysqlshow" => self.mysql(name, a, ov),
            "redis-cli" | "valkey-cli" | "keydb-cli" => redis_hits(a),
            "mongosh" | "mongo" => mongo_hits(a),
            "cqlsh" => {
                let p = getopt(a, "upkfeb", "", CQLSH_LONG);
                if let Some(h) = p.pos.first() {
                    return vec![Hit::new(Database, hosts_of(h), h.clone())];
                }
                if let Some(b) = p.get(&["b", "secure-connect-bundle"]).first() {
                    return vec![Hit::always(Database, format!("cloud bundle {b}"))];
                }
                self.env_hit(Database, "CQLSH_HOST", ov)
            }
            "nodetool" => {
                let vals = ["h", "host", "p", "port", "u", "username", "pw", "password", "pwf"];
                let p = goflags(a, &vals);
                option_hits(Database, &p, &["h", "host"])
            }
            _ => self.tool_hits_more(name, a, ov),
        }
    }

    /// A hit for a client-implied environment variable, when it is set.
    fn env_hit(&mut self, cat: DependencyCategory, var: &str, ov: &[(String, String)]) -> Vec<Hit> {
        match self.tool_env(var, ov) {
            Some(v) => vec![Hit::new(cat, hosts_of(&v), v).via(var)],
            None => Vec::new(),
        }
    }

    fn postgres(&mut self, prog: &str, a: &[String], ov: &[(String, String)]) -> Vec<Hit> {
        let sv = match prog {
            "pg_isready" => "dhptU",
            "psql" => "cdfhLopPRTUvF",
            _ => "dfFhjnNpStTUZEDl",
        };
        let p = getopt(a, sv, "", PG_LONG);
        let mut hosts = Vec::new();
        let mut target = String::new();
        for v in p.get(&["h", "host"]) {
            hosts.extend(hosts_of(&v));
            target = v;
        }
        let mut conns = p.get(&["d", "dbname", "maintenance-db"]);
        conns.extend(p.pos.iter().cloned());
        for c in conns {
            let hs = pg_conninfo_hosts(&c);
            if !hs.is_empty() {
                hosts.extend(hs);
                if target.is_empty() {
                    target = c;
                }
            }
        }
        if !hosts.is_empty() {
            return vec![Hit::new(DependencyCategory::Database, hosts, target)];
        }
        for var in ["PGHOSTADDR", "PGHOST"] {
            let h = self.env_hit(DependencyCategory::Database, var, ov);
            if !h.is_empty() {
                return h;
            }
        }
        Vec::new()
    }

    fn mysql(&mut self, prog: &str, a: &[String], ov: &[(String, String)]) -> Vec<Hit> {
        let (sv, so) = match prog {
            "mysqladmin" | "mariadb-admin" => ("hPSuci", "pw"),
            "mysqlsh" => ("hPSuDef", "p"),
            "mysqldump" | "mariadb-dump" => ("hPSuwr", "p"),
            _ => ("hPSuDe", "p"),
        };
        let p = getopt(a, sv, so, MYSQL_LONG);
        let mut hosts = Vec::new();
        let mut target = String::new();
        for v in p.get(&["h", "host"]) {
            hosts.extend(hosts_of(&v));
            target = v;
        }
        let mut uris = p.get(&["uri"]);
        if prog == "mysqlsh" {
            uris.extend(p.pos.iter().filter(|x| x.contains("://") || x.contains('@')).cloned());
        }
        for u in uris {
            hosts.extend(hosts_of(&u));
            target = u;
        }
        if !hosts.is_empty() {
            return vec![Hit::new(DependencyCategory::Database, hosts, target)];
        }
        let socket = p.has(&["S", "socket"])
            || p.get(&["protocol"])
                .iter()
                .any(|x| matches!(x.to_ascii_lowercase().as_str(), "socket" | "pipe" | "memory"));
        if socket {
            return Vec::new();
        }
        self.env_hit(DependencyCategory::Database, "MYSQL_HOST", ov)
    }
}

const ETCD_VALS: &[&str] = &[
    "endpoints",
    "endpoint",
    "peers",
    "C",
    "cacert",
    "cert",
    "key",
    "user",
    "password",
    "command-timeout",
    "dial-timeout",
    "keepalive-time",
    "keepalive-timeout",
    "discovery-srv",
    "write-out",
    "w",
];
const CONSUL_VALS: &[&str] = &[
    "http-addr",
    "token",
    "token-file",
    "ca-file",
    "ca-path",
    "client-cert",
    "client-key",
    "tls-server-name",
    "datacenter",
    "namespace",
    "partition",
    "format",
    "service",
    "node",
];
const VAULT_VALS: &[&str] = &[
    "address",
    "agent-address",
    "ca-cert",
    "ca-path",
    "client-cert",
    "client-key",
    "namespace",
    "tls-server-name",
    "format",
    "field",
    "mount",
    "wrap-ttl",
    "policy",
    "header",
];
const NATS_LONG: &[&str] = &[
    "server",
    "user",
    "password",
    "creds",
    "nkey",
    "tlscert",
    "tlskey",
    "tlsca",
    "timeout",
    "context",
    "connection-name",
    "jwt",
    "inbox-prefix",
    "socks-proxy",
    "domain",
    "js-domain",
];

impl Ctx<'_> {
    /// Queues, coordination services and clients that are dependencies whatever the host.
    fn tool_hits_more(&mut self, name: &str, a: &[String], ov: &[(String, String)]) -> Vec<Hit> {
        use DependencyCategory::*;
        match name {
            n if is_kafka_tool(n) => {
                let vals = ["bootstrap-server", "broker-list", "zookeeper", "bootstrap-controller"];
                let p = goflags(a, &vals);
                let mut hits = option_hits(Queue, &p, &["bootstrap-server", "broker-list"]);
                hits.extend(option_hits(Queue, &p, &["bootstrap-controller"]));
                hits.extend(option_hits(Coordination, &p, &["zookeeper"]));
                hits
            }
            "kcat" | "kafkacat" => {
                let p = getopt(a, "btpocDKsrXFfGHmkzd", "", &[]);
                let mut hits = option_hits(Queue, &p, &["b"]);
                for x in p.get(&["X"]) {
                    if let Some((k, v)) = x.split_once('=')
                        && matches!(k, "bootstrap.servers" | "metadata.broker.list")
                    {
                        hits.push(Hit::new(Queue, hosts_of(v), v));
                    }
                }
                hits
            }
            "rabbitmqctl"
            | "rabbitmq-diagnostics"
            | "rabbitmq-plugins"
            | "rabbitmq-queues"
            | "rabbitmq-upgrade"
            | "rabbitmq-streams" => {
                let p = getopt(a, "ntp", "", &["node", "timeout", "vhost", "formatter"]);
                let node_host = |n: &str| n.split_once('@').map_or("", |(_, h)| h).to_string();
                let mut hits: Vec<Hit> = p
                    .get(&["n", "node"])
                    .into_iter()
                    .map(|n| Hit::new(Queue, vec![node_host(&n)], n))
                    .collect();
                if hits.is_empty()
                    && let Some(n) = self.tool_env("RABBITMQ_NODENAME", ov)
                {
                    hits.push(Hit::new(Queue, vec![node_host(&n)], n).via("RABBITMQ_NODENAME"));
                }
                hits
            }
            "nats" => {
                let p = getopt(a, "s", "", NATS_LONG);
                let hits = option_hits(Queue, &p, &["s", "server"]);
                if !hits.is_empty() || p.has(&["context"]) {
                    return hits;
                }
                self.env_hit(Queue, "NATS_URL", ov)
            }
            "zkCli" => {
                let p = goflags(a, &["server", "timeout", "client-configuration"]);
                option_hits(Coordination, &p, &["server"])
            }
            "zookeeper-shell" => {
                let p = goflags(a, &["zk-tls-config-file"]);
                p.pos
                    .first()
                    .map(|h| vec![Hit::new(Coordination, hosts_of(h), h.clone())])
                    .unwrap_or_default()
            }
            "etcdctl" => {
                let p = goflags(a, ETCD_VALS);
                if let Some(d) = p.get(&["discovery-srv"]).first() {
                    return vec![Hit::always(Coordination, format!("SRV records of {d}"))];
                }
                let hits = option_hits(Coordination, &p, &["endpoints", "endpoint", "peers", "C"]);
                if !hits.is_empty() {
                    return hits;
                }
                self.env_hit(Coordination, "ETCDCTL_ENDPOINTS", ov)
            }
            "kubectl" => {
                let long = ["server", "namespace", "context", "kubeconfig", "cluster", "user", "output"];
                let p = getopt(a, "sno", "", &long);
                if p.pos.first().is_some_and(|c| c == "version") && p.has(&["client"]) {
                    return Vec::new();
                }
                let target =
                    p.get(&["s", "server"]).pop().unwrap_or_else(|| "Kubernetes API server".to_string());
                vec![Hit::always(ControlPlane, target)]
            }
            "aws" | "gcloud" | "az" | "gsutil" | "mc" => {
                let long = ["region", "profile", "endpoint-url", "output", "project", "query"];
                let p = getopt(a, "", "", &long);
                let target = p.get(&["endpoint-url"]).pop().unwrap_or_else(|| {
                    let service = p.pos.first().map(String::as_str).unwrap_or("");
                    format!("{name} {service} API").replace("  ", " ")
                });
                vec![Hit::always(CloudApi, target)]
            }
            "nslookup" | "dig" | "host" | "getent" => self.dns(name, a),
            "consul" => {
                let p = goflags(a, CONSUL_VALS);
                if p.pos
                    .first()
                    .is_some_and(|c| matches!(c.as_str(), "version" | "validate" | "keygen" | "agent"))
                {
                    return Vec::new();
                }
                let target = p
                    .get(&["http-addr"])
                    .pop()
                    .or_else(|| self.tool_env("CONSUL_HTTP_ADDR", ov))
                    .unwrap_or_else(|| "local Consul agent (catalog)".to_string());
                vec![Hit::always(ServiceDiscovery, target)]
            }
            "vault" => {
                let p = goflags(a, VAULT_VALS);
                if p.pos.first().is_some_and(|c| matches!(c.as_str(), "version" | "server")) {
                    return Vec::new();
                }
                if let Some(addr) = p.get(&["address"]).pop() {
                    return vec![Hit::new(Secrets, hosts_of(&addr), addr)];
                }
                let h = self.env_hit(Secrets, "VAULT_ADDR", ov);
                if !h.is_empty() {
                    return h;
                }
                vec![Hit::always(Secrets, "Vault (default address)")]
            }
            _ => self.network_hits(name, a),
        }
    }

    fn dns(&mut self, name: &str, a: &[String]) -> Vec<Hit> {
        use DependencyCategory::Dns;
        const TYPES: &[&str] = &[
            "a", "aaaa", "srv", "txt", "mx", "ns", "cname", "soa", "ptr", "any", "caa", "in", "ch", "hs",
            "axfr",
        ];
        let target = match name {
            "nslookup" => {
                let pos: Vec<&String> = a.iter().filter(|x| !x.starts_with('-')).collect();
                match pos.as_slice() {
                    [] => return Vec::new(),
                    [n] => n.to_string(),
                    [n, srv, ..] => format!("{n} (server {srv})"),
                }
            }
            "dig" => {
                let p = getopt(a, "ptcbfkqyx", "", &[]);
                let server = p.pos.iter().find(|x| x.starts_with('@')).cloned();
                let q = p.get(&["q", "x"]).pop().or_else(|| {
                    p.pos
                        .iter()
                        .find(|x| {
                            !x.starts_with('@')
                                && !x.starts_with('+')
                                && !TYPES.contains(&x.to_ascii_lowercase().as_str())
                        })
                        .cloned()
                });
                let q = q.unwrap_or_else(|| ".".to_string());
                match server {
                    Some(s) => format!("{q} ({s})"),
                    None => q,
                }
            }
            "host" => {
                let p = getopt(a, "cNRtWm", "", &[]);
                match p.pos.first() {
                    Some(n) => n.clone(),
                    None => return Vec::new(),
                }
            }
            _ => {
                // getent: only the hosts databases; /etc/hosts answers local names first.
                let is_hosts_db = a
                    .first()
                    .is_some_and(|d| matches!(d.as_str(), "hosts" | "ahosts" | "ahostsv4" | "ahostsv6"));
                match a.get(1) {
                    Some(n) if is_hosts_db && self.classify(n) != HostClass::Local => n.clone(),
                    _ => return Vec::new(),
                }
            }
        };
        vec![Hit::always(Dns, target)]
    }
}

const CURL_SHORT: &str = "AbcCdDeEFHKmoPQrTtuUwxXyYz";
const CURL_LONG: &[&str] = &[
    "abstract-unix-socket",
    "alt-svc",
    "aws-sigv4",
    "cacert",
    "capath",
    "cert",
    "cert-type",
    "ciphers",
    "config",
    "connect-timeout",
    "connect-to",
    "continue-at",
    "cookie",
    "cookie-jar",
    "create-file-mode",
    "crlfile",
    "curves",
    "data",
    "data-ascii",
    "data-binary",
    "data-raw",
    "data-urlencode",
    "delegation",
    "dns-interface",
    "dns-ipv4-addr",
    "dns-ipv6-addr",
    "dns-servers",
    "doh-url",
    "dump-header",
    "ech",
    "egd-file",
    "engine",
    "etag-compare",
    "etag-save",
    "expect100-timeout",
    "form",
    "form-string",
    "ftp-account",
    "ftp-alternative-to-user",
    "ftp-method",
    "ftp-port",
    "ftp-ssl-ccc-mode",
    "happy-eyeballs-timeout-ms",
    "haproxy-clientip",
    "header",
    "hostpubmd5",
    "hostpubsha256",
    "hsts",
    "interface",
    "ip-tos",
    "ipfs-gateway",
    "json",
    "keepalive-cnt",
    "keepalive-time",
    "key",
    "key-type",
    "krb",
    "libcurl",
    "limit-rate",
    "local-port",
    "login-options",
    "mail-auth",
    "mail-from",
    "mail-rcpt",
    "max-filesize",
    "max-redirs",
    "max-time",
    "netrc-file",
    "noproxy",
    "oauth2-bearer",
    "output",
    "output-dir",
    "pass",
    "pinnedpubkey",
    "preproxy",
    "proto",
    "proto-default",
    "proto-redir",
    "proxy",
    "proxy-cacert",
    "proxy-capath",
    "proxy-cert",
    "proxy-cert-type",
    "proxy-ciphers",
    "proxy-crlfile",
    "proxy-header",
    "proxy-key",
    "proxy-key-type",
    "proxy-pass",
    "proxy-pinnedpubkey",
    "proxy-service-name",
    "proxy-tls13-ciphers",
    "proxy-tlsauthtype",
    "proxy-tlspassword",
    "proxy-tlsuser",
    "proxy-user",
    "proxy1.0",
    "pubkey",
    "quote",
    "random-file",
    "range",
    "rate",
    "referer",
    "request",
    "request-target",
    "resolve",
    "retry",
    "retry-delay",
    "retry-max-time",
    "sasl-authzid",
    "service-name",
    "socks4",
    "socks4a",
    "socks5",
    "socks5-gssapi-service",
    "socks5-hostname",
    "speed-limit",
    "speed-time",
    "stderr",
    "telnet-option",
    "tftp-blksize",
    "time-cond",
    "tls-max",
    "tls13-ciphers",
    "tlsauthtype",
    "tlspassword",
    "tlsuser",
    "trace",
    "trace-ascii",
    "trace-config",
    "unix-socket",
    "upload-file",
    "url",
    "url-query",
    "user",
    "user-agent",
    "variable",
    "vlan-priority",
    "write-out",
];
const WGET_LONG: &[&str] = &[
    "output-document",
    "output-file",
    "append-output",
    "execute",
    "input-file",
    "tries",
    "timeout",
    "connect-timeout",
    "read-timeout",
    "dns-timeout",
    "wait",
    "waitretry",
    "directory-prefix",
    "user-agent",
    "header",
    "post-data",
    "post-file",
    "body-data",
    "body-file",
    "method",
    "user",
    "password",
    "http-user",
    "http-password",
    "ca-certificate",
    "certificate",
    "private-key",
    "ca-directory",
    "bind-address",
    "limit-rate",
    "quota",
    "level",
    "accept",
    "reject",
    "domains",
    "exclude-domains",
    "load-cookies",
    "save-cookies",
    "referer",
    "proxy-user",
    "proxy-password",
    "base",
    "config",
    "max-redirect",
];
const HTTPIE_LONG: &[&str] = &[
    "auth",
    "auth-type",
    "output",
    "session",
    "session-read-only",
    "timeout",
    "proxy",
    "verify",
    "cert",
    "cert-key",
    "cert-key-pass",
    "print",
    "style",
    "format-options",
    "pretty",
    "max-redirects",
    "max-headers",
    "ssl",
    "ciphers",
    "response-charset",
    "response-mime",
    "boundary",
    "default-scheme",
    "unix-socket",
];
const NC_LONG: &[&str] = &[
    "proxy",
    "proxy-type",
    "proxy-auth",
    "sh-exec",
    "exec",
    "lua-exec",
    "output",
    "hex-output",
    "source",
    "source-port",
    "wait",
    "idle-timeout",
    "delay",
    "max-conns",
    "allow",
    "allowfile",
    "deny",
    "denyfile",
    "ssl-cert",
    "ssl-key",
    "ssl-trustfile",
    "ssl-ciphers",
    "ssl-servername",
    "ssl-alpn",
];
const GRPCURL_VALS: &[&str] = &[
    "d",
    "H",
    "rpc-header",
    "reflect-header",
    "import-path",
    "proto",
    "protoset",
    "protoset-out",
    "cacert",
    "cert",
    "key",
    "servername",
    "authority",
    "connect-timeout",
    "keepalive-time",
    "max-time",
    "max-msg-sz",
    "format",
    "user-agent",
    "alts-handshaker-service",
    "alts-target-service-account",
];
const GRPC_HP_VALS: &[&str] = &[
    "addr",
    "connect-timeout",
    "rpc-timeout",
    "service",
    "tls-ca-cert",
    "tls-client-cert",
    "tls-client-key",
    "tls-server-name",
    "rpc-header",
    "user-agent",
    "alts-target-service-account",
];
const OPENSSL_VALS: &[&str] = &[
    "connect",
    "host",
    "port",
    "proxy",
    "proxy_user",
    "proxy_pass",
    "unix",
    "servername",
    "CAfile",
    "CApath",
    "cert",
    "key",
    "pass",
    "verify",
    "starttls",
    "alpn",
    "sess_out",
    "sess_in",
    "keylogfile",
    "name",
    "xmpphost",
    "bind",
    "cipher",
    "ciphersuites",
    "groups",
];

/// Category of a generic network client's destination, and whether it is a dependency
/// whatever the host (a local Consul agent still answers from the catalog).
fn net_category(host_shown: &str, port: Option<&str>, path: &str) -> (DependencyCategory, bool) {
    use DependencyCategory::*;
    let pl = path.to_ascii_lowercase();
    if pl.contains("/_cluster/health") || pl.contains("/_cat/health") {
        return (Search, false);
    }
    if port == Some("8500") && ["/v1/health", "/v1/catalog", "/v1/agent"].iter().any(|p| pl.starts_with(p)) {
        return (ServiceDiscovery, true);
    }
    let hl = host_shown.to_ascii_lowercase();
    if hl.starts_with("kubernetes.default") || hl.contains("kubernetes_service_host") {
        return (ControlPlane, false);
    }
    if hl == "169.254.169.254"
        || hl == "metadata.google.internal"
        || [".amazonaws.com", ".googleapis.com", ".azure.com", ".windows.net"].iter().any(|d| hl.ends_with(d))
    {
        return (CloudApi, false);
    }
    (port.and_then(port_category).unwrap_or(Network), false)
}

/// (host, port, path) of a curl/wget/httpie URL argument; no scheme means `http://`.
fn url_parts(u: &str) -> (String, Option<String>, String) {
    if let Some(p) = parse_url(u) {
        let (h, port) = p.hosts.into_iter().next().unwrap_or_default();
        let port = port.or_else(|| match p.scheme.as_str() {
            "http" | "ws" => Some("80".to_string()),
            "https" | "wss" => Some("443".to_string()),
            _ => None,
        });
        return (h, port, p.path);
    }
    let end = u.find(['/', '?', '#']).unwrap_or(u.len());
    let (authority, path) = u.split_at(end);
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (h, port) = split_host_port(authority);
    (h, port.or_else(|| Some("80".to_string())), path.to_string())
}

impl Ctx<'_> {
    /// A hit for a generic client reaching `host[:port]` with an optional request path.
    fn net_hit(&self, host: &str, port: Option<&str>, path: &str, target: String) -> Hit {
        let (cat, always) = net_category(&self.render_orig(host), port, path);
        let mut h = Hit::new(cat, vec![host.to_string()], target);
        h.always = always;
        h
    }

    /// Generic network clients and other database CLIs.
    fn network_hits(&mut self, name: &str, a: &[String]) -> Vec<Hit> {
        use DependencyCategory::*;
        match name {
            "curl" => self.curl(a),
            "wget" => {
                let p = getopt(a, "OoaeitTwPUQlARDIXBY", "", WGET_LONG);
                let mut hits = Vec::new();
                for e in p.get(&["e", "execute"]) {
                    if let Some((k, v)) = e.split_once('=')
                        && (k.eq_ignore_ascii_case("http_proxy") || k.eq_ignore_ascii_case("https_proxy"))
                    {
                        hits.push(Hit::new(Network, hosts_of(v), format!("proxy {v}")));
                    }
                }
                for u in &p.pos {
                    let (h, port, path) = url_parts(u);
                    hits.push(self.net_hit(&h, port.as_deref(), &path, u.clone()));
                }
                hits
            }
            "http" | "https" | "xh" | "xhs" => {
                let p = getopt(a, "paAos", "", HTTPIE_LONG);
                let mut hits = Vec::new();
                for px in p.get(&["proxy"]) {
                    let url = px.split_once(':').map_or(px.as_str(), |(_, u)| u);
                    hits.push(Hit::new(Network, hosts_of(url), format!("proxy {url}")));
                }
                if p.has(&["unix-socket"]) {
                    return hits;
                }
                let mut pos = p.pos.iter();
                let mut url = pos.next();
                if url.is_some_and(|m| !m.is_empty() && m.chars().all(|c| c.is_ascii_uppercase())) {
                    url = pos.next();
                }
                if let Some(u) = url {
                    if u.starts_with(':') {
                        return hits; // `:8080/path` is localhost shorthand
                    }
                    let (h, port, path) = url_parts(u);
                    hits.push(self.net_hit(&h, port.as_deref(), &path, u.clone()));
                }
                hits
            }
            "nc" | "ncat" | "netcat" => {
                let p = getopt(a, "IiMmOPpqsTVWwXxceGgo", "", NC_LONG);
                if p.has(&["l", "listen"]) {
                    return Vec::new();
                }
                let mut hits = Vec::new();
                let mut proxies = p.get(&["proxy"]);
                if name != "ncat" {
                    proxies.extend(p.get(&["x"]));
                }
                for px in proxies {
                    hits.push(Hit::new(Network, hosts_of(&px), format!("proxy {px}")));
                }
                if p.has(&["U", "unixsock"]) {
                    return hits;
                }
                if let Some(h) = p.pos.first() {
                    let port = p.pos.get(1).map(String::as_str);
                    let target = match port {
                        Some(pt) => format!("{h} {pt}"),
                        None => h.clone(),
                    };
                    hits.push(self.net_hit(h, port, "", target));
                }
                hits
            }
            "telnet" => {
                let p = getopt(a, "lnebSXk", "", &[]);
                let Some(h) = p.pos.first() else {
                    return Vec::new();
                };
                let port = p.pos.get(1).map(String::as_str);
                let target = format!("{h} {}", port.unwrap_or("23")).trim().to_string();
                vec![self.net_hit(h, port, "", target)]
            }
            "socat" => self.socat(a),
            "openssl" if a.first().is_some_and(|c| c == "s_client") => {
                let p = goflags(&a[1..], OPENSSL_VALS);
                let mut hits = Vec::new();
                for px in p.get(&["proxy"]) {
                    hits.push(Hit::new(Network, hosts_of(&px), format!("proxy {px}")));
                }
                if p.has(&["unix"]) {
                    return hits;
                }
                let mut dests = p.get(&["connect", "host"]);
                dests.extend(p.pos.iter().cloned());
                for d in dests {
                    let (h, port) = split_host_port(&d);
                    hits.push(self.net_hit(&h, port.as_deref(), "", d.clone()));
                }
                hits
            }
            "grpc_health_probe" => {
                let p = goflags(a, GRPC_HP_VALS);
                p.get(&["addr"])
                    .into_iter()
                    .map(|addr| {
                        let (h, port) = split_host_port(&addr);
                        self.net_hit(&h, port.as_deref(), "", addr.clone())
                    })
                    .collect()
            }
            "grpcurl" => {
                let p = goflags(a, GRPCURL_VALS);
                if p.has(&["unix"]) {
                    return Vec::new();
                }
                match p.pos.first() {
                    Some(addr) if !matches!(addr.as_str(), "list" | "describe") => {
                        let (h, port) = split_host_port(addr);
                        vec![self.net_hit(&h, port.as_deref(), "", addr.clone())]
                    }
                    _ => Vec::new(),
                }
            }
            "ping" | "ping6" => {
                let p = getopt(a, "cWwiIlmMpQsStTF", "", &[]);
                p.pos.first().map(|h| vec![self.net_hit(h, None, "", h.clone())]).unwrap_or_default()
            }
            "clickhouse-client" | "clickhouse" => {
                let args = if name == "clickhouse" {
                    match a.split_first() {
                        Some((c, rest)) if c == "client" => rest,
                        _ => return Vec::new(),
                    }
                } else {
                    a
                };
                let long = ["host", "port", "user", "password", "query", "database", "config-file"];
                let p = getopt(args, "hudqC", "", &long);
                option_hits(Database, &p, &["h", "host"])
            }
            "cockroach" => {
                let long = ["host", "url", "certs-dir", "port", "user", "database", "execute", "format"];
                let p = getopt(a, "ed", "", &long);
                option_hits(Database, &p, &["host", "url"])
            }
            "sqlcmd" => {
                let p = getopt(a, "SUPdQqlthsWwcbiovy", "", &[]);
                p.get(&["S"])
                    .into_iter()
                    .map(|srv| {
                        let s = srv.split_once(':').map_or(srv.as_str(), |(_, r)| r);
                        let host = s.split([',', '\\']).next().unwrap_or("").to_string();
                        let host = if host == "." || host.eq_ignore_ascii_case("(local)") {
                            String::new()
                        } else {
                            host
                        };
                        Hit::new(Database, vec![host], srv.clone())
                    })
                    .collect()
            }
            "cypher-shell" => {
                let long = ["address", "uri", "username", "password", "database", "file", "format"];
                let p = getopt(a, "aupdf", "", &long);
                option_hits(Database, &p, &["a", "address", "uri"])
            }
            "influx" => {
                let vals =
                    ["host", "port", "token", "org", "username", "password", "database", "execute", "format"];
                let p = goflags(a, &vals);
                option_hits(Database, &p, &["host"])
            }
            _ => Vec::new(),
        }
    }

    fn curl(&mut self, a: &[String]) -> Vec<Hit> {
        use DependencyCategory::Network;
        let p = getopt(a, CURL_SHORT, "", CURL_LONG);
        let mut hits = Vec::new();
        let noproxy_all = p.get(&["noproxy"]).iter().any(|v| v.trim() == "*");
        let proxies = p.get(&["x", "proxy", "preproxy", "socks4", "socks4a", "socks5", "socks5-hostname"]);
        if !noproxy_all {
            for px in proxies.into_iter().filter(|px| !px.is_empty()) {
                hits.push(Hit::new(Network, hosts_of(&px), format!("proxy {px}")));
            }
        }
        if p.has(&["unix-socket", "abstract-unix-socket"]) {
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
            hits.push(self.net_hit(&dest, dest_port.as_deref(), &path, target));
        }
        hits
    }

    fn socat(&mut self, a: &[String]) -> Vec<Hit> {
        use DependencyCategory::Network;
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

/// Hits for the values of host options (any non-local host is a dependency).
fn option_hits(cat: DependencyCategory, p: &Parsed, names: &[&str]) -> Vec<Hit> {
    p.get(names).into_iter().map(|v| Hit::new(cat, hosts_of(&v), v)).collect()
}

fn redis_hits(a: &[String]) -> Vec<Hit> {
    let p = getopt(a, "hpsaunirdD", "", REDIS_LONG);
    if p.has(&["s", "socket"]) {
        return Vec::new();
    }
    option_hits(DependencyCategory::Cache, &p, &["u", "h"])
}

fn mongo_hits(a: &[String]) -> Vec<Hit> {
    use DependencyCategory::Database;
    let p = getopt(a, "upf", "", MONGO_LONG);
    if p.has(&["nodb"]) {
        return Vec::new();
    }
    let mut hits = Vec::new();
    let uri_hit = |c: &str| -> Option<Hit> {
        let lower = c.to_ascii_lowercase();
        if lower.starts_with("mongodb+srv://") {
            let mut h = Hit::always(Database, c);
            h.hosts = hosts_of(c);
            return Some(h);
        }
        if lower.starts_with("mongodb://") {
            let hosts = parse_url(c).map(|u| u.hosts.into_iter().map(|h| h.0).collect()).unwrap_or_default();
            return Some(Hit::new(Database, hosts, c));
        }
        None
    };
    for h in p.get(&["host"]) {
        if let Some(hit) = uri_hit(&h) {
            hits.push(hit);
            continue;
        }
        // `--host replicaSet/h1:p1,h2:p2` or `--host h[:p]`.
        let list = h.split_once('/').map_or(h.as_str(), |(_, l)| l);
        hits.push(Hit::new(Database, hosts_of(list), h.clone()));
    }
    for c in &p.pos {
        if let Some(hit) = uri_hit(c) {
            hits.push(hit);
        } else if c.ends_with(".js") {
            continue;
        } else if c.contains('/') || c.contains(':') {
            // `host[:port]/db`; a bare word is a database name.
            hits.push(Hit::new(Database, hosts_of(c), c.clone()));
        }
    }
    hits
}

// ---------------------------------------------------------------------------------------------
// Display and redaction
// ---------------------------------------------------------------------------------------------

/// Does an option or variable name look like it carries a secret?
fn is_secret_name(n: &str) -> bool {
    let l = n.trim_start_matches('-').to_ascii_lowercase();
    [
        "pass",
        "secret",
        "token",
        "pwd",
        "auth",
        "credential",
        "apikey",
        "api_key",
        "api-key",
        "access_key",
        "access-key",
        "private",
        "bearer",
        "cookie",
        "session",
        "signature",
    ]
    .iter()
    .any(|k| l.contains(k))
        || matches!(l.as_str(), "key" | "sig" | "pw")
}

/// Is `n` a plain option or variable name (`--password`, `PGPASSWORD`, `db.password`), not a URL
/// or other text that happens to hold `=`?
fn is_plain_name(n: &str) -> bool {
    !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// `Name: value` of an HTTP header with a credential (`Authorization`, `X-Vault-Token`,
/// `PRIVATE-TOKEN`, `Cookie`, ...), value redacted; `None` for other headers.
fn redact_header(h: &str) -> Option<String> {
    let (name, _) = h.split_once(':')?;
    let lower = name.trim().to_ascii_lowercase();
    let secret = is_secret_name(&lower) || ["authorization", "x-api-key"].iter().any(|k| lower == *k);
    secret.then(|| format!("{}: ***", name.trim()))
}

/// `user:password@host` without a scheme (mysqlsh `--uri`, some clients' DSNs) with the password
/// redacted; other words unchanged.
fn redact_bare_userinfo(w: &str) -> String {
    if let Some((userinfo, host)) = w.split_once('@')
        && let Some((user, _)) = userinfo.split_once(':')
        && !userinfo.contains("://")
        && !userinfo.contains(['/', ' '])
        && !host.is_empty()
    {
        return format!("{user}:***@{host}");
    }
    w.to_string()
}

/// Redact `user:password@` in URIs and `password=value`, `token=value`-like pairs inside a
/// string, for messages and logs (`https://u:***@h/x?token=***`).
pub fn redact_secrets(s: &str) -> String {
    if !s.contains('=') && !s.contains("://") && !s.contains("\":") {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(pos) = rest.find("://") {
        let (before, after) = rest.split_at(pos + 3);
        out.push_str(before);
        let end = after.find(['/', '?', '#', ' ', '\'', '"']).unwrap_or(after.len());
        let authority = &after[..end];
        match authority.rsplit_once('@') {
            Some((userinfo, host)) if userinfo.contains(':') => {
                let user = userinfo.split(':').next().unwrap_or("");
                out.push_str(user);
                out.push_str(":***@");
                out.push_str(host);
            }
            _ => out.push_str(authority),
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    redact_kv(&out)
}

/// Redact the values of `password=...`-like pairs (conninfo strings, query strings): any
/// `key=value` at a word or parameter boundary whose key looks secret ([`is_secret_name`]:
/// `password`, `token`, `access_token`, `api_key`, ...).
fn redact_kv(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let at_boundary =
            i == 0 || matches!(chars[i - 1], ' ' | '\n' | '\t' | '?' | '#' | '&' | ';' | '\'' | '"');
        if at_boundary {
            let mut k = i;
            while k < chars.len()
                && k - i < 64
                && (chars[k].is_ascii_alphanumeric() || matches!(chars[k], '_' | '-' | '.'))
            {
                k += 1;
            }
            // A JSON member `"password": "value"` (a request body given to curl -d).
            if k > i
                && i > 0
                && chars[i - 1] == '"'
                && chars.get(k) == Some(&'"')
                && chars.get(k + 1) == Some(&':')
            {
                let key: String = chars[i..k].iter().collect();
                if is_secret_name(&key) {
                    out.push_str(&key);
                    out.push_str("\":");
                    i = k + 2;
                    while i < chars.len() && chars[i] == ' ' {
                        out.push(' ');
                        i += 1;
                    }
                    if chars.get(i) == Some(&'"') {
                        i += 1;
                        while i < chars.len() && chars[i] != '"' {
                            i += if chars[i] == '\\' { 2 } else { 1 };
                        }
                        i = (i + 1).min(chars.len());
                        out.push_str("\"***\"");
                    } else {
                        while i < chars.len() && !matches!(chars[i], ',' | '}' | ' ') {
                            i += 1;
                        }
                        out.push_str("***");
                    }
                    continue;
                }
            }
            if k > i && chars.get(k) == Some(&'=') {
                let key: String = chars[i..k].iter().collect();
                if is_secret_name(&key) {
                    out.push_str(&key);
                    out.push_str("=***");
                    i = k + 1;
                    if let Some(&q) = chars.get(i).filter(|c| matches!(c, '\'' | '"')) {
                        // A quoted value: up to and including its closing quote.
                        i += 1;
                        while i < chars.len() && chars[i] != q {
                            i += 1;
                        }
                        i = (i + 1).min(chars.len());
                        continue;
                    }
                    while i < chars.len() && !matches!(chars[i], ' ' | '\n' | '&' | ';' | '\'' | '"') {
                        i += 1;
                    }
                    continue;
                }
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// `AUTH <credentials>` lines inside one word (Redis `AUTH [user] password`, as written by
/// `printf` or `echo` into `nc`) with the credentials replaced by `***`, up to the line's end
/// (a newline, or a backslash escape such as `\r\n`).
fn redact_auth_lines(w: &str) -> String {
    let lower = w.to_ascii_lowercase();
    let mut out = String::with_capacity(w.len());
    // `lower` has the same byte offsets as `w`; `done` is where `out` has copied up to.
    let mut done = 0;
    for (i, _) in lower.match_indices("auth ") {
        let before = &w[..i];
        let at_line_start =
            before.is_empty() || before.ends_with(['\n', '\r', '\'', '"', ' ']) || before.ends_with("\\n");
        if i < done || !at_line_start {
            continue;
        }
        let start = i + "auth ".len();
        let end = w[start..].find(['\\', '\r', '\n', '\'', '"']).map_or(w.len(), |e| start + e);
        out.push_str(&w[done..start]);
        out.push_str(if w[start..end].trim().is_empty() { &w[start..end] } else { "***" });
        done = end;
    }
    out.push_str(&w[done..]);
    // The wire form, `*2\r\n$4\r\nAUTH\r\n$9\r\nPASSWORD\r\n`: everything after the AUTH line.
    let lower = out.to_ascii_lowercase();
    for marker in ["auth\\r\\n$", "auth\r\n$"] {
        if let Some(i) = lower.find(marker) {
            out.truncate(i + marker.len() - 1);
            out.push_str("***");
            break;
        }
    }
    out
}

/// A client's short option whose value is a password (`--password=X` and `--pass X` are found by
/// their names, [`is_secret_name`]).
struct PasswordFlag {
    /// Client basenames; a name ending in `*` is a prefix (`ldap*`).
    clients: &'static [&'static str],
    /// The option as written: `-p`, `-P`, `-pw`.
    flag: &'static str,
    /// `-pSECRET` is the password.
    attached: bool,
    /// `-p SECRET` is the password (for mysql it is not: a bare `-p` prompts, and the next word is
    /// the database).
    separate: bool,
}

impl PasswordFlag {
    fn is_client(&self, name: &str) -> bool {
        self.clients.iter().any(|c| match c.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == *c,
        })
    }
}

/// The short password options of the clients probegate knows, from each client's manual.
const PASSWORD_FLAGS: &[PasswordFlag] = &[
    // MySQL "Command Options for Connecting to the Server": `--password[=password], -p[password]`,
    // the value only attached.
    PasswordFlag {
        clients: &[
            "mysql",
            "mysqladmin",
            "mariadb",
            "mariadb-admin",
            "mysqlsh",
            "mysqlcheck",
            "mysqldump",
            "mariadb-dump",
            "mariadb-check",
            "mysqlshow",
        ],
        flag: "-p",
        attached: true,
        separate: false,
    },
    // mongosh `-p, --password`; cqlsh `-p, --password`; sshpass `-p password`; rabbitmqadmin
    // `-p PASSWORD`; cypher-shell `-p, --password`; mongostat `-p`.
    PasswordFlag {
        clients: &["mongosh", "mongo", "mongostat", "cqlsh", "sshpass", "rabbitmqadmin", "cypher-shell"],
        flag: "-p",
        attached: true,
        separate: true,
    },
    // sqlcmd and bcp (SQL Server utilities): `-P password`.
    PasswordFlag { clients: &["sqlcmd", "bcp"], flag: "-P", attached: true, separate: true },
    // OpenLDAP ldapsearch(1) and friends: `-w passwd`.
    PasswordFlag { clients: &["ldap*"], flag: "-w", attached: true, separate: true },
    // redis-cli `-a <password>` (valkey-cli, keydb-cli alike).
    PasswordFlag {
        clients: &["redis-cli", "valkey-cli", "keydb-cli"],
        flag: "-a",
        attached: true,
        separate: true,
    },
    // nodetool `-pw, --password`.
    PasswordFlag { clients: &["nodetool"], flag: "-pw", attached: false, separate: true },
];

/// Re-join display words, quoting where needed and redacting secrets (`--password X`,
/// `-a X` of redis-cli, `user:pass@`, `token=...`).
pub(crate) fn join_redacted(words: &[String]) -> String {
    let redis_like = words.iter().any(|w| matches!(basename(w), "redis-cli" | "valkey-cli" | "keydb-cli"));
    // Commands that write a protocol's lines themselves (`printf 'AUTH pw\r\nPING\r\n' | nc`).
    let speaks_protocol = redis_like
        || words.iter().any(|w| {
            matches!(basename(w), "nc" | "ncat" | "netcat" | "socat" | "telnet" | "printf" | "echo")
        });
    // The short password flags of the clients in the command (`-P` of sqlcmd, `-w` of ldapsearch).
    let password_flags: Vec<&PasswordFlag> =
        PASSWORD_FLAGS.iter().filter(|f| words.iter().any(|w| f.is_client(basename(w)))).collect();
    let curl_like = words.iter().any(|w| basename(w) == "curl");
    // httpie (`http`, `https`) and xh: `-a USER:PASSWORD`.
    let httpie_like = words.iter().any(|w| matches!(basename(w), "http" | "https" | "xh"));
    // Arguments of a format that writes an AUTH line (`printf 'AUTH %s\r\n' PASSWORD`), up to
    // the end of that command.
    let mut format_secrets = false;
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    let mut prev: &str = "";
    for w in words {
        let mut r = redact_secrets(w);
        // A whole word `--password=x` or `PGPASSWORD=x` (a script's text is left to the
        // pair-by-pair redaction above).
        let pair =
            w.split_once('=').filter(|(n, _)| !w.contains(char::is_whitespace) || n.ends_with("header"));
        if let Some((n, v)) = pair
            && is_plain_name(n)
        {
            if is_secret_name(n) {
                r = format!("{n}=***");
            } else if matches!(n, "--user" | "--proxy-user" | "-u") && v.contains(':') {
                r = format!("{n}={}:***", v.split(':').next().unwrap_or(""));
            } else if let Some(h) = redact_header(v).filter(|_| n.ends_with("header")) {
                r = format!("{n}={h}");
            } else if let Some((hn, _)) =
                v.split_once(':').filter(|(hn, _)| hn.eq_ignore_ascii_case("authorization"))
            {
                r = format!("{n}={hn}:***");
            }
        }
        if speaks_protocol {
            r = redact_auth_lines(&r);
        }
        // The end of a command (the script's words are split but not parsed here).
        let separator = matches!(w.as_str(), "|" | "||" | "&&" | ";" | "&");
        if separator {
            format_secrets = false;
        }
        let prev_secret = !w.starts_with('-')
            && ((prev.starts_with('-') && !prev.contains('=') && is_secret_name(prev))
                || prev == "-pw"
                || prev == "<<<"
                || (speaks_protocol && prev.eq_ignore_ascii_case("auth"))
                || password_flags.iter().any(|f| f.separate && prev == f.flag)
                || (curl_like && matches!(prev, "-b" | "--cookie"))
                || (format_secrets && !separator));
        if speaks_protocol && w.to_ascii_lowercase().contains("auth %s") {
            format_secrets = true;
        }
        let attached = password_flags
            .iter()
            .find(|f| f.attached && w.len() > f.flag.len() && w.starts_with(f.flag) && !w.starts_with("--"));
        if prev_secret {
            r = "***".to_string();
        } else if let Some(f) = attached {
            r = format!("{}***", f.flag);
        } else if w.starts_with("<<<") && w.len() > 3 {
            // A here-string glued to its operator: the client's stdin (`--askpass <<<PASSWORD`).
            r = "<<<***".to_string();
        } else if curl_like && matches!(prev, "-E" | "--cert") && w.contains(':') {
            // `--cert FILE:PASSPHRASE`.
            r = format!("{}:***", w.split(':').next().unwrap_or(""));
        } else if curl_like
            && let Some(flags) = w.strip_prefix('-').filter(|f| !f.starts_with('-'))
            && let Some(at) =
                flags.find('u').filter(|&at| at > 0 && flags[..at].chars().all(|c| c.is_ascii_alphabetic()))
            && flags[at + 1..].contains(':')
        {
            // Short flags run together, the last taking the credentials: `-sfuadmin:PASSWORD`.
            let cred = &flags[at + 1..];
            r = format!("-{}u{}:***", &flags[..at], cred.split(':').next().unwrap_or(""));
        } else if (matches!(prev, "-u" | "--user" | "-U" | "--proxy-user")
            || (httpie_like && matches!(prev, "-a" | "--auth"))
            || prev == "digest")
            && w.contains(':')
            && !w.contains("://")
        {
            let user = w.split(':').next().unwrap_or("");
            r = format!("{user}:***");
        } else if matches!(prev, "-H" | "--header") {
            if let Some(h) = redact_header(w) {
                r = h;
            }
        } else if let Some(h) = w.strip_prefix("-H").filter(|h| !h.is_empty()).and_then(redact_header) {
            r = format!("-H{h}");
        } else if let Some(cred) = w.strip_prefix("-u").filter(|c| c.contains(':')) {
            r = format!("-u{}:***", cred.split(':').next().unwrap_or(""));
        } else if httpie_like && !w.contains("://") && !w.starts_with('-') && w.contains(':') {
            // httpie request items: `Authorization:Bearer X` is a header.
            if let Some(h) = redact_header(w) {
                r = h;
            }
        }
        r = redact_bare_userinfo(&r);
        out.push(quote_word(&r));
        prev = w.as_str();
    }
    out.join(" ")
}

/// Quote a word for display when it contains whitespace or quotes (or is empty).
fn quote_word(w: &str) -> String {
    let substitution =
        (w.starts_with("$(") && w.ends_with(')')) || (w.len() > 1 && w.starts_with('`') && w.ends_with('`'));
    if w.is_empty() {
        "''".to_string()
    } else if !substitution && w.chars().any(|c| c.is_whitespace() || c == '\'' || c == '"') {
        format!("'{}'", w.replace('\'', "'\\''"))
    } else {
        w.to_string()
    }
}

/// Analyse an exec probe's argv (`exec.command`) in the container's environment, by host only
/// (no known commands, script files opaque). First dependency found, or None.
pub fn find_dependency(argv: &[String], env: &ExecEnv) -> Option<Dependency> {
    analyze(argv, env, &Options::default()).dependency
}

/// An exec command for display, secrets redacted: the text of a `sh -c` script is split into
/// its words and redacted like any other command (`sh -c 'redis-cli -a *** ping'`); other
/// arguments as in [`join_redacted`].
pub(crate) fn redact_command(argv: &[String], max_chars: usize) -> String {
    let mut out = Vec::new();
    let mut run: Vec<String> = Vec::new();
    for (k, a) in argv.iter().enumerate() {
        let after_c = k > 0 && {
            let p = &argv[k - 1];
            p.starts_with('-') && !p.starts_with("--") && p.ends_with('c')
        };
        if after_c {
            if !run.is_empty() {
                out.push(join_redacted(&run));
                run.clear();
            }
            // Messages show the start of a script: its first `2 * max_chars` characters are
            // enough (the whole text of a long script costs more to split than the rest of the
            // evaluation).
            // A cut inside quotes is closed with the quote it needs (the last word is cut
            // anyway); failing that the whole text is split, and a script that cannot be split
            // at all is not shown.
            let head: String = a.chars().take(2 * max_chars).collect();
            let words = shell_words::split(&head)
                .or_else(|_| shell_words::split(&format!("{head}\"")))
                .or_else(|_| shell_words::split(&format!("{head}'")))
                .or_else(|_| shell_words::split(a));
            out.push(match words {
                Ok(words) => {
                    // Only as many words as can be shown (redaction reads them in order, so a
                    // cut after the shown part changes nothing before it).
                    let mut length = 0;
                    let shown = words.iter().take_while(|w| {
                        let keep = length <= max_chars;
                        length += w.len() + 1;
                        keep
                    });
                    format!("'{}'", join_redacted(&shown.cloned().collect::<Vec<_>>()))
                }
                Err(_) => "'…'".to_string(),
            });
            continue;
        }
        run.push(a.clone());
    }
    if !run.is_empty() {
        out.push(join_redacted(&run));
    }
    out.join(" ")
}

/// A command as notes show it: redacted, on one line, at most 60 characters.
fn one_line_excerpt(argv: &[String]) -> String {
    let text = redact_command(argv, 80);
    truncate_chars(&text.split_whitespace().collect::<Vec<_>>().join(" "), 60)
}

/// The note for a command left unanalysed by the object's [`AnalysisBudget`].
fn object_budget_note() -> String {
    format!(
        "over the {} MiB of shell text probegate analyses for one object's exec probes together; the commands after this one were not analysed either",
        MAX_OBJECT_ANALYSIS_BYTES / (1024 * 1024)
    )
}

/// Analyse an exec probe's argv in the container's environment, with known commands and the
/// script files the command runs: the first dependency found, and the scripts that could not be
/// read on the way.
pub fn analyze(argv: &[String], env: &ExecEnv, options: &Options<'_>) -> Outcome {
    let mut ctx = Ctx::new(env);
    ctx.known = &options.known_commands;
    ctx.files = options.files;
    ctx.object_budget = options.budget;
    let command_bytes: usize = argv.iter().map(|a| a.len() + 1).sum();
    if command_bytes > MAX_COMMAND_BYTES {
        let shown = one_line_excerpt(&argv[..argv.len().min(8)]);
        ctx.note_over_bound(
            &shown,
            format!(
                "a {command_bytes}-byte command ({} arguments) is over the {MAX_COMMAND_BYTES} bytes probegate analyses",
                argv.len()
            ),
        );
        return Outcome { dependency: None, unresolved: ctx.unresolved };
    }
    if let Some(budget) = options.budget
        && budget.is_spent()
    {
        // Spent by the object's earlier commands: said once, on the first command it stops.
        if !budget.noted.replace(true) {
            ctx.note_over_bound(&one_line_excerpt(argv), object_budget_note());
        }
        return Outcome { dependency: None, unresolved: ctx.unresolved };
    }
    let args: Vec<String> = argv
        .iter()
        .map(|a| {
            let a = sanitize(a);
            ctx.kubelet_expand(&a, 0)
        })
        .collect();
    let mut dependency = ctx.analyze_args(&args, Vec::new(), &[], 0);
    // Not analysed is not a finding (never deny on a guess): it is reported like a script that
    // could not be read.
    let shown = || one_line_excerpt(argv);
    if ctx.object_spent.get() {
        // The object's commands together are over the budget: this one and the rest are not
        // analysed, and nothing this one found counts (its text was cut short).
        dependency = None;
        let shown = shown();
        if let Some(budget) = options.budget {
            budget.noted.set(true);
        }
        ctx.note_over_bound(&shown, object_budget_note());
    } else if ctx.over_budget.get() {
        // Text cut short by the budget could read as anything: nothing found counts.
        dependency = None;
        let shown = shown();
        ctx.note_over_bound(
            &shown,
            format!(
                "its variables expand past the {MAX_EXPANSION_BYTES} bytes or {MAX_KUBELET_DEPTH} levels of references probegate analyses"
            ),
        );
    } else if dependency.is_none()
        && let Some(len) = ctx.too_long
    {
        let shown = shown();
        ctx.note_over_bound(
            &shown,
            format!("a {len}-byte script is over the {MAX_SCRIPT_BYTES} bytes probegate analyses"),
        );
    }
    Outcome { dependency, unresolved: ctx.unresolved }
}

#[cfg(test)]
mod tests {
    use super::*;
    use DependencyCategory as C;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    fn env(vars: &[(&str, EnvValue)]) -> ExecEnv {
        ExecEnv { vars: vars.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(), has_env_from: false }
    }

    fn lit(v: &str) -> EnvValue {
        EnvValue::Literal(v.to_string())
    }

    fn no_env() -> ExecEnv {
        ExecEnv::default()
    }

    #[track_caller]
    fn fires_in(argv: &[&str], e: &ExecEnv) -> Dependency {
        match find_dependency(&s(argv), e) {
            Some(d) => d,
            None => panic!("expected a dependency for {argv:?}"),
        }
    }

    #[track_caller]
    fn fires(argv: &[&str]) -> Dependency {
        fires_in(argv, &no_env())
    }

    #[track_caller]
    fn quiet_in(argv: &[&str], e: &ExecEnv) {
        if let Some(d) = find_dependency(&s(argv), e) {
            panic!("expected no dependency for {argv:?}, got {d:?}");
        }
    }

    #[track_caller]
    fn quiet(argv: &[&str]) {
        quiet_in(argv, &no_env());
    }

    #[test]
    fn the_object_budget_is_shared_by_its_commands_and_its_end_said_once() {
        let budget = AnalysisBudget::new(16 * 1024);
        let options = Options { budget: Some(&budget), ..Options::default() };
        let script = format!("true {}; pg_isready -h orders-db", "x".repeat(3000));
        let argv = s(&["sh", "-c", &script]);
        // The first command fits (~9 KB: the script expanded, analysed, its words expanded): found.
        let first = analyze(&argv, &no_env(), &options);
        assert_eq!(first.dependency.map(|d| d.target), Some("orders-db".to_string()));
        assert!(first.unresolved.is_empty());
        // The second is over: nothing found, and a note that says why.
        let second = analyze(&argv, &no_env(), &options);
        assert_eq!(second.dependency, None);
        assert_eq!(second.unresolved.len(), 1, "{:?}", second.unresolved);
        assert!(second.unresolved[0].reason.contains("one object's exec probes"), "{:?}", second.unresolved);
        // Later ones: not analysed, not noted again.
        let third = analyze(&argv, &no_env(), &options);
        assert_eq!(third, Outcome::default());
        // The limit stopped it, not the command: with a budget of its own it is found again.
        let fresh = AnalysisBudget::new(16 * 1024);
        let options = Options { budget: Some(&fresh), ..Options::default() };
        assert!(analyze(&argv, &no_env(), &options).dependency.is_some());
    }

    #[test]
    fn kubelet_references_to_long_values_count_against_the_budgets() {
        // B is long; A refers to it 100 times; the command refers to A 100 times: 10,000 copies
        // of B (200 MB) if nothing counted them.
        let b = "x".repeat(20_000);
        let a = "$(B)".repeat(100);
        let e = env(&[("B", lit(&b)), ("A", lit(&a))]);
        let command = format!("curl http://db:5432/{}", "$(A)".repeat(100));
        // One reference to A already copies B 100 times (2 MB): over the 1 MiB a command may expand to.
        let mut ctx = Ctx::new(&e);
        let _ = ctx.kubelet_expand("$(A)", 0);
        assert!(ctx.over_budget.get(), "copied values counted: {} bytes", ctx.expanded.get());
        let budget = AnalysisBudget::default();
        let options = Options { budget: Some(&budget), ..Options::default() };
        let outcome = analyze(&s(&["sh", "-c", &command]), &e, &options);
        assert_eq!(outcome.dependency, None, "text cut short by a bound is never a finding");
        assert_eq!(outcome.unresolved.len(), 1, "{:?}", outcome.unresolved);
        // The display expansion (liveness vs readiness) is bounded the same way.
        let shown = expand_kubelet_argv(&s(&["sh", "-c", &command]), &e, None);
        assert!(shown.iter().map(String::len).sum::<usize>() <= MAX_EXPANSION_BYTES + command.len());
        // A value referred to a few times is still followed.
        let e = env(&[("DB", lit("orders-db"))]);
        let d = analyze(&s(&["pg_isready", "-h", "$(DB)"]), &e, &Options::default()).dependency.unwrap();
        assert_eq!(d.target, "orders-db");
    }

    #[test]
    fn env_values_named_like_secrets_never_reach_a_message() {
        let e = env(&[("API_TOKEN", lit("S3cr3tXyz")), ("AUTH_HOST", lit("auth-svc"))]);
        let d = fires_in(&["curl", "http://r/health/$(API_TOKEN)"], &e);
        assert!(!format!("{d:?}").contains("S3cr3tXyz"), "{d:?}");
        assert!(d.target.contains("r/health/***") || d.target == "r", "{d:?}");
        let d = fires_in(&["sh", "-c", "curl -H \"X-Token: $API_TOKEN\" http://$AUTH_HOST/"], &e);
        assert_eq!(d.target, "http://auth-svc/", "a host named AUTH_... is still a host");
        assert!(!format!("{d:?}").contains("S3cr3tXyz"), "{d:?}");
        assert_eq!(
            expand_kubelet_vars("/bin/check $(API_TOKEN) $(AUTH_HOST)", &e),
            "/bin/check *** auth-svc"
        );
    }

    #[test]
    fn a_trailing_backslash_inside_a_substitution_is_not_a_panic() {
        // `sh -n` accepts this and it runs pg_isready: the rest of the script is still analysed.
        let d = sh("true || sh -c '$(\\'; pg_isready -h orders-db -p 5432").expect("pg_isready still found");
        assert_eq!(d.target, "orders-db");
        for script in ["$(\\", "x $(\\", "\"$(\\", "$($(\\", "`$(\\`", "${\\", "echo \\"] {
            let _ = sh(script);
            let _ = split_commands(script);
        }
        let e = env(&[("X", lit("$(\\"))]);
        let _ = find_dependency(&s(&["sh", "-c", "$(X)"]), &e);
    }

    #[track_caller]
    fn sh(script: &str) -> Option<Dependency> {
        find_dependency(&s(&["sh", "-c", script]), &no_env())
    }

    fn sh_args(script: &str, rest: &[&str]) -> Option<Dependency> {
        let mut argv = vec!["sh", "-c", script];
        argv.extend(rest);
        find_dependency(&s(&argv), &no_env())
    }

    // ----------------------------------------------------------------------------------- fire

    #[test]
    fn pg_isready_remote_host() {
        let d = fires(&["pg_isready", "-h", "orders-db.prod.svc", "-p", "5432"]);
        assert_eq!(d.program, "pg_isready");
        assert_eq!(d.category, C::Database);
        assert_eq!(d.target, "orders-db.prod.svc");
        assert_eq!(d.command, "pg_isready -h orders-db.prod.svc -p 5432");
    }

    #[test]
    fn pg_isready_pghost_env() {
        let e = env(&[("PGHOST", lit("reports-db.data.svc.cluster.local"))]);
        let d = fires_in(&["pg_isready"], &e);
        assert_eq!(d.target, "reports-db.data.svc.cluster.local (PGHOST)");
        assert_eq!(d.category, C::Database);
    }

    #[test]
    fn redis_unresolved_host_in_script() {
        let e = env(&[("REDIS_HOST", EnvValue::Unresolved)]);
        let d = fires_in(&["sh", "-c", "redis-cli -h \"$REDIS_HOST\" ping | grep -q PONG"], &e);
        assert_eq!(d.program, "redis-cli");
        assert_eq!(d.category, C::Cache);
        assert_eq!(d.target, "$REDIS_HOST (not a literal env value)");
        assert_eq!(d.command, "redis-cli -h $REDIS_HOST ping");
    }

    #[test]
    fn command_assignment_overrides_env() {
        let d = sh("PGHOST=db pg_isready").expect("PGHOST=db is remote");
        assert_eq!(d.target, "db (PGHOST)");
        assert_eq!(d.command, "PGHOST=db pg_isready");
        // `env` wrapper assignments too.
        let d = fires(&["env", "PGHOST=db.prod", "pg_isready"]);
        assert_eq!(d.target, "db.prod (PGHOST)");
    }

    #[test]
    fn curl_remote_service() {
        let d = fires(&["curl", "-f", "http://payments.prod.svc/health"]);
        assert_eq!(d.program, "curl");
        assert_eq!(d.category, C::Network);
        assert_eq!(d.target, "http://payments.prod.svc/health");
    }

    #[test]
    fn wget_other_service() {
        let d = fires(&["wget", "-qO-", "http://other-svc:8080/"]);
        assert_eq!(d.program, "wget");
        assert_eq!(d.target, "http://other-svc:8080/");
        fires(&["wget", "-q", "-O-", "http://inventory-api.shop.svc:8080/healthz"]);
    }

    #[test]
    fn netcat_to_db_port() {
        let d = fires(&["nc", "-z", "db", "5432"]);
        assert_eq!(d.category, C::Database);
        assert_eq!(d.target, "db 5432");
        let d = fires(&["nc", "-z", "-w", "2", "rabbitmq.messaging.svc", "5672"]);
        assert_eq!(d.category, C::Queue);
    }

    #[test]
    fn grpc_health_probe_remote() {
        let d = fires(&["grpc_health_probe", "-addr=backend:50051"]);
        assert_eq!(d.target, "backend:50051");
        fires(&["/bin/grpc_health_probe", "-addr", "backend:50051"]);
    }

    #[test]
    fn mysqladmin_remote_forms() {
        let d = fires(&["mysqladmin", "ping", "-h", "mysql-primary"]);
        assert_eq!(d.target, "mysql-primary");
        fires(&["mysqladmin", "ping", "-hmysql-primary"]);
        fires(&["mysqladmin", "ping", "--host=shop-db.rds.example.com", "--port=3306"]);
        fires(&["mysql", "--host", "db", "-e", "SELECT 1"]);
        let e = env(&[("MYSQL_HOST", lit("mysql.data.svc"))]);
        let d = fires_in(&["mysqladmin", "ping"], &e);
        assert_eq!(d.target, "mysql.data.svc (MYSQL_HOST)");
    }

    #[test]
    fn mongosh_srv_always_remote() {
        let d = fires(&[
            "mongosh",
            "mongodb+srv://cluster0.example.net/test",
            "--eval",
            "db.runCommand({ping:1})",
        ]);
        assert_eq!(d.program, "mongosh");
        assert_eq!(d.category, C::Database);
        assert!(d.target.starts_with("mongodb+srv://cluster0.example.net"));
        fires(&["mongosh", "mongodb://localhost:27017,mongo-1.mongo:27017/admin"]);
        fires(&["mongo", "--host", "rs0/mongo-0.mongo:27017,mongo-1.mongo:27017"]);
    }

    #[test]
    fn kafka_broker_list_with_one_remote() {
        let d = fires(&[
            "kafka-broker-api-versions.sh",
            "--bootstrap-server",
            "kafka-0.kafka:9092,localhost:9092",
        ]);
        assert_eq!(d.category, C::Queue);
        assert_eq!(d.target, "kafka-0.kafka:9092,localhost:9092");
        fires(&["kafka-topics", "--bootstrap-server=kafka:9092", "--list"]);
        fires(&["kcat", "-b", "kafka:9092", "-L"]);
        let d = fires(&["kafka-topics.sh", "--zookeeper", "zk:2181", "--list"]);
        assert_eq!(d.category, C::Coordination);
    }

    #[test]
    fn psql_uri_password_redacted() {
        let d = fires(&["psql", "postgresql://app:s3cret@db.internal:5432/app", "-c", "SELECT 1"]);
        assert_eq!(d.category, C::Database);
        assert!(!d.command.contains("s3cret"), "{}", d.command);
        assert!(!d.target.contains("s3cret"), "{}", d.target);
        assert!(d.command.contains("app:***@db.internal"), "{}", d.command);
    }

    #[test]
    fn second_command_in_script_fires() {
        let d = fires(&[
            "bash",
            "-ec",
            "set -o pipefail; curl -sf http://localhost:8080/healthz && redis-cli -h cache ping",
        ]);
        assert_eq!(d.program, "redis-cli");
        assert_eq!(d.target, "cache");
        assert_eq!(d.command, "redis-cli -h cache ping");
    }

    #[test]
    fn command_substitution_is_analysed() {
        let d = sh("echo $(redis-cli -h cache ping)").expect("substitution content analysed");
        assert_eq!(d.program, "redis-cli");
        let d = sh("echo `redis-cli -h cache ping`").expect("backticks analysed");
        assert_eq!(d.program, "redis-cli");
    }

    #[test]
    fn curl_resolve_rewrites_destination() {
        let d = fires(&["curl", "--resolve", "localhost:80:10.1.2.3", "http://localhost/"]);
        assert!(d.target.contains("10.1.2.3"), "{}", d.target);
        fires(&["curl", "--connect-to", "::db.prod:5432", "http://localhost/"]);
    }

    #[test]
    fn curl_proxy_is_remote() {
        let d = fires(&["curl", "-x", "http://proxy:3128", "http://localhost/"]);
        assert!(d.target.contains("proxy"), "{}", d.target);
        fires(&["curl", "--proxy", "http://proxy:3128", "http://localhost/"]);
    }

    #[test]
    fn unresolved_kubelet_reference_in_argv() {
        let e = env(&[("REDIS_MASTER", EnvValue::Unresolved)]);
        let d = fires_in(&["redis-cli", "-h", "$(REDIS_MASTER)", "ping"], &e);
        assert_eq!(d.target, "$(REDIS_MASTER) (not a literal env value)");
        assert_eq!(d.command, "redis-cli -h $(REDIS_MASTER) ping");
        // Undefined: the kubelet leaves the text as written; still not local.
        fires(&["redis-cli", "-h", "$(REDIS_MASTER)", "ping"]);
    }

    #[test]
    fn dns_and_control_plane_always() {
        let d = fires(&["nslookup", "kubernetes.default"]);
        assert_eq!(d.category, C::Dns);
        assert_eq!(d.target, "kubernetes.default");
        let d = fires(&["kubectl", "get", "--raw", "/healthz"]);
        assert_eq!(d.category, C::ControlPlane);
        let d = sh("kubectl get --raw /readyz >/dev/null").expect("kubectl in script");
        assert_eq!(d.category, C::ControlPlane);
        assert_eq!(fires(&["dig", "+short", "db.prod.svc"]).target, "db.prod.svc");
        assert_eq!(fires(&["host", "-t", "A", "db"]).category, C::Dns);
        assert_eq!(fires(&["aws", "sts", "get-caller-identity"]).category, C::CloudApi);
        assert_eq!(fires(&["consul", "members"]).category, C::ServiceDiscovery);
        assert_eq!(fires(&["vault", "status"]).category, C::Secrets);
    }

    #[test]
    fn redirections_are_not_arguments() {
        assert!(sh("curl -fsS http://localhost:8080/healthz > /dev/null 2>&1").is_none());
        assert!(sh("curl -fsS http://localhost:8080/healthz >/dev/null").is_none());
        assert!(sh("redis-cli ping 2> /tmp/err | grep -q PONG").is_none());
        assert!(sh("curl -fsS http://db.prod:5432/ > /dev/null").is_some());
    }

    #[test]
    fn positional_parameters_of_inline_scripts() {
        let d = sh_args("pg_isready -h \"$1\"", &["probe", "db.prod.svc"]).expect("$1 is the host");
        assert_eq!(d.target, "db.prod.svc");
        assert!(sh_args("pg_isready -h \"${1:-127.0.0.1}\"", &["probe"]).is_none());
        assert!(sh_args("redis-cli -h \"$1\" ping", &[]).is_some(), "an unset $1 is not provably local");
        let d = sh_args("nc -z $@", &["probe", "cache.prod", "6379"]).expect("$@ carries the host");
        assert_eq!(d.target, "cache.prod 6379");
    }

    #[test]
    fn python_runs_modules_and_scripts() {
        let celery = crate::engine::known::builtin().iter().find(|k| k.name == "celery-inspect").unwrap();
        let django =
            crate::engine::known::builtin().iter().find(|k| k.name == "django-check-database").unwrap();
        let options = Options { known_commands: vec![celery, django], files: None, budget: None };
        let run = |argv: &[&str]| analyze(&s(argv), &no_env(), &options).dependency;
        assert!(run(&["python3", "-m", "celery", "-A", "app", "inspect", "ping"]).is_some());
        assert!(
            run(&["python3.12", "-W", "ignore", "/app/manage.py", "check", "--database", "default"])
                .is_some()
        );
        assert!(run(&["python", "-c", "import celery"]).is_none());
        assert!(run(&["python", "manage.py", "check"]).is_none());
    }

    struct Files(HashMap<&'static str, &'static str>);

    impl ScriptFiles for Files {
        fn read(&self, path: &str) -> FileLookup {
            match self.0.get(path) {
                Some(t) => FileLookup::Text { text: t.to_string(), origin: "test".into() },
                None if path.starts_with("/cm/") => FileLookup::Unreadable("not available".into()),
                None => FileLookup::NotOnVolume,
            }
        }
    }

    #[test]
    fn script_files_siblings_and_sourcing() {
        let files = Files(HashMap::from([
            ("/cm/all.sh", "dir=\"$(cd \"$(dirname \"$0\")\" >/dev/null && pwd)\"\n\"$dir/one.sh\" \"$1\"\n"),
            ("/cm/one.sh", "#!/usr/bin/env bash\n. \"${0%/*}/lib.sh\"\nsource /cm/vars.sh\nping_it \"$1\"\n"),
            ("/cm/vars.sh", "TARGET=cache.prod.svc\n"),
            ("/cm/py.sh", "#!/usr/bin/python3\nimport os\n"),
            ("/cm/two.sh", "#!/bin/sh\nexec redis-cli -h \"$TARGET\" ping\n"),
        ]));
        let options = Options { known_commands: vec![], files: Some(&files), budget: None };
        let run = |argv: &[&str]| analyze(&s(argv), &no_env(), &options);
        // `${0%/*}/lib.sh` is not followed (pattern removal is not evaluated): reported, not guessed.
        let out = run(&["sh", "-c", "/cm/all.sh 5"]);
        assert_eq!(out.dependency, None);
        assert_eq!(out.unresolved.len(), 0, "{:?}", out.unresolved);
        // Sourced variables are the caller's; a script run as a program only sees exported ones.
        let out = run(&["sh", "-c", ". /cm/vars.sh; /cm/two.sh"]);
        let d = out.dependency.expect("an unset host is not provably local");
        assert_eq!(d.target, "$TARGET (not a literal env value)", "TARGET is not exported: unset in two.sh");
        assert_eq!(d.script.as_deref(), Some("/cm/two.sh (test)"));
        let out = run(&["sh", "-c", "set -a; export TARGET=cache.prod.svc; /cm/two.sh"]);
        assert_eq!(out.dependency.expect("exported").target, "cache.prod.svc");
        let out = run(&["bash", "-c", "source /cm/vars.sh && redis-cli -h $TARGET ping"]);
        let d = out.dependency.expect("sourced into the same shell");
        assert_eq!(d.script, None, "found in the inline script, after the sourced file returned");
        // Non-shell scripts are opaque; unreadable ones are reported once.
        assert_eq!(run(&["/cm/py.sh"]).dependency, None);
        let out = run(&["sh", "-c", "/cm/missing.sh; /cm/missing.sh; sh /cm/other.sh"]);
        let paths: Vec<&str> = out.unresolved.iter().map(|u| u.path.as_str()).collect();
        assert_eq!(paths, ["/cm/missing.sh", "/cm/other.sh"]);
        assert!(run(&["python3", "/cm/missing.py"]).unresolved.is_empty(), "not a shell script: opaque");
        assert_eq!(dirname("/a/b.sh"), "/a");
        assert_eq!(dirname("/b.sh"), "/");
        assert_eq!(dirname("b.sh"), ".");
    }

    #[test]
    fn elasticsearch_cluster_health() {
        quiet(&["curl", "-s", "http://localhost:9200/_cluster/health"]);
        let d = fires(&["curl", "http://es-master:9200/_cluster/health"]);
        assert_eq!(d.category, C::Search);
    }

    // ------------------------------------------------------------------------------ not fire

    #[test]
    fn postgres_local_forms() {
        quiet(&["pg_isready", "-U", "postgres", "-h", "127.0.0.1"]);
        quiet(&["pg_isready", "-U", "postgres"]);
        quiet(&["pg_isready", "-h", "/var/run/postgresql"]);
        quiet(&["psql", "-h", "localhost", "-c", "SELECT 1"]);
        quiet(&["psql", "postgresql:///app?host=/var/run/postgresql", "-c", "SELECT 1"]);
        quiet(&["psql", "-d", "host=127.0.0.1 dbname=app", "-c", "SELECT 1"]);
        fires(&["psql", "-d", "host=db.prod dbname=app", "-c", "SELECT 1"]);
        fires(&["psql", "-h", "warehouse.data.svc", "-c", "select 1"]);
    }

    #[test]
    fn redis_local_forms() {
        quiet(&["redis-cli", "ping"]);
        quiet(&["redis-cli", "-h", "localhost", "-p", "6379", "ping"]);
        quiet(&["redis-cli", "-s", "/run/redis.sock", "ping"]);
        quiet(&["redis-cli", "-u", "redis://127.0.0.1:6379/0", "ping"]);
        quiet(&["redis-cli", "-a", "secret", "ping"]);
    }

    #[test]
    fn mongo_local_forms() {
        quiet(&["mongosh", "--port", "$PORT", "--eval", "db.adminCommand('ping')"]);
        quiet(&["sh", "-c", "mongosh --port $PORT --eval \"db.adminCommand('ping')\""]);
        quiet(&["mongosh", "admin", "--quiet", "--eval", "db.runCommand({ping:1})"]);
        quiet(&["mongosh", "mongodb://localhost:27017/admin"]);
    }

    #[test]
    fn mysql_local_forms() {
        quiet(&["mysqladmin", "ping"]);
        quiet(&["mysqladmin", "ping", "-h", "localhost"]);
        quiet(&["mysql", "-h", "127.0.0.1", "-e", "SELECT 1"]);
        quiet(&["mysqladmin", "ping", "-h", "127.0.0.1", "-u", "root", "-p$(cat /secret)"]);
        quiet(&["mysqladmin", "--socket=/run/mysqld/mysqld.sock", "ping"]);
        let e = env(&[("MYSQL_ROOT_PASSWORD", EnvValue::Unresolved)]);
        quiet_in(&["sh", "-c", "mysqladmin status -uroot -p\"${MYSQL_ROOT_PASSWORD}\""], &e);
        quiet_in(&["sh", "-c", "mysqladmin ping -h 127.0.0.1 -u root -p$(cat /secret)"], &e);
    }

    #[test]
    fn grpc_and_http_local_forms() {
        quiet(&["grpc_health_probe", "-addr=:7070", "-rpc-timeout=5s"]);
        quiet(&["curl", "-f", "http://localhost:8080/healthz"]);
        quiet(&["curl", "--unix-socket", "/run/app.sock", "http://x/health"]);
        quiet(&["wget", "-qO-", "http://127.0.0.1:9090/-/healthy"]);
        quiet(&["curl", "-fsS", "http://[::1]:8080/livez"]);
        quiet(&[
            "curl",
            "-H",
            "Host: shop.example.com",
            "-o",
            "/dev/null",
            "-m",
            "5",
            "-w",
            "%{http_code}",
            "--max-time",
            "3",
            "-u",
            "user:pw",
            "--cacert",
            "/ca.pem",
            "-X",
            "GET",
            "-d",
            "x=1",
            "http://localhost:8080/",
        ]);
        quiet(&["http", "GET", ":8080/healthz"]);
        quiet(&["nc", "-z", "localhost", "8080"]);
        quiet(&["grpcurl", "-plaintext", "localhost:50051", "grpc.health.v1.Health/Check"]);
        quiet(&["openssl", "s_client", "-connect", "127.0.0.1:443"]);
    }

    #[test]
    fn pod_identity_is_local() {
        let e = env(&[("POD_IP", EnvValue::PodIp), ("POD_NAME", EnvValue::PodName)]);
        quiet_in(&["curl", "http://$(POD_IP):8080/"], &e);
        quiet_in(&["sh", "-c", "curl http://$POD_IP:8080/"], &e);
        quiet_in(&["sh", "-c", "curl http://${POD_IP}:8080/"], &e);
        quiet_in(&["sh", "-c", "redis-cli -h $(hostname) ping"], &e);
        quiet_in(&["sh", "-c", "redis-cli -h `hostname -i` ping"], &e);
        quiet_in(&["sh", "-c", "redis-cli -h $HOSTNAME ping"], &e);
        quiet_in(&["sh", "-c", "mysqladmin ping -h ${POD_NAME}.mysql-headless"], &e);
        quiet_in(&["sh", "-c", "redis-cli -h $POD_NAME.redis-headless ping"], &e);
        quiet_in(&["redis-cli", "-h", "$(POD_NAME).redis-headless", "ping"], &e);
        // Another ordinal is someone else.
        let d = fires_in(&["sh", "-c", "redis-cli -h redis-0.redis-headless ping"], &e);
        assert_eq!(d.target, "redis-0.redis-headless");
    }

    #[test]
    fn rabbitmq_local_node() {
        quiet(&["rabbitmq-diagnostics", "-q", "ping"]);
        quiet(&[
            "sh",
            "-c",
            "rabbitmq-diagnostics -q check_running && rabbitmq-diagnostics -q check_local_alarms",
        ]);
        quiet(&["sh", "-c", "rabbitmqctl -n rabbit@$(hostname) status"]);
        quiet(&["rabbitmqctl", "-n", "rabbit@localhost", "status"]);
        let d = fires(&["rabbitmqctl", "-n", "rabbit@mq-0.mq-headless", "status"]);
        assert_eq!(d.category, C::Queue);
    }

    #[test]
    fn unknown_programs_yield_nothing() {
        quiet(&["cat", "/tmp/healthy"]);
        quiet(&["/health/ping_liveness_local_and_master.sh", "5"]);
        quiet(&["sh", "-c", "/health/ping_liveness_local_and_master.sh 5"]);
        quiet(&["sh", "-c", "zookeeper-ready 2181"]);
        quiet(&[
            "sh",
            "-c",
            "CONNECTION_CHECK_MAX_COUNT=0 exec /entrypoint \\\n airflow jobs check --job-type SchedulerJob --local",
        ]);
        quiet(&["sh", "-c", "echo 'a;b' | grep -q a"]);
        quiet(&["sh", "-c", "echo 'redis-cli -h cache ping'"]);
        quiet(&["sh", "-c", "# redis-cli -h cache ping\ntrue"]);
        quiet(&["true"]);
        quiet(&[]);
        quiet(&["sh", "-c", ""]);
        quiet(&["sh"]);
        quiet(&["bash", "/scripts/check.sh"]);
        quiet(&["test", "-f", "/tmp/ready"]);
        quiet(&["celery", "inspect", "ping"]);
    }

    #[test]
    fn wrappers_are_unwrapped() {
        fires(&["timeout", "-s", "KILL", "5", "pg_isready", "-h", "db"]);
        // Redirections, eval, su/runuser and xargs do not hide the client.
        fires(&["sh", "-c", ">/dev/null pg_isready -h db"]);
        fires(&["sh", "-c", "pg_isready -h db 2>/dev/null >&2"]);
        fires(&["sh", "-c", "2>&1 redis-cli -h cache ping > /tmp/out"]);
        fires(&["sh", "-c", "eval 'pg_isready -h db'"]);
        fires(&["su", "postgres", "-c", "pg_isready -h db"]);
        fires(&["runuser", "-u", "pg", "--", "pg_isready", "-h", "db"]);
        fires(&["xargs", "-n", "1", "pg_isready", "-h", "db"]);
        fires(&["bash", "-c", "echo > /dev/tcp/db/5432"]);
        fires(&["bash", "-c", "exec 3<>/dev/tcp/cache.svc/6379"]);
        quiet(&["bash", "-c", "echo > /dev/tcp/127.0.0.1/8080"]);
        quiet(&["sh", "-c", "pg_isready -U postgres > /dev/null 2>&1"]);
        quiet(&["sh", "-c", "eval 'redis-cli ping'"]);
        fires(&["/usr/bin/env", "-i", "PGHOST=db", "pg_isready"]);
        fires(&["nice", "-n", "10", "nohup", "redis-cli", "-h", "cache", "ping"]);
        fires(&["tini", "--", "busybox", "sh", "-c", "nc -z db 5432"]);
        fires(&["dumb-init", "/docker-entrypoint.sh", "pg_isready", "-h", "db"]);
        fires(&["/bin/bash", "-o", "pipefail", "-c", "exec timeout 3 redis-cli -h cache ping"]);
        fires(&["sh", "-xc", "command time redis-cli -h cache ping"]);
        fires(&["sh", "-c", "sh -c 'redis-cli -h cache ping'"]);
        fires(&["sh", "-c", "if redis-cli -h cache ping; then exit 0; fi"]);
        fires(&["sh", "-c", "! redis-cli -h cache ping"]);
        fires(&["sh", "-c", "{ redis-cli -h cache ping; }"]);
        fires(&["sh", "-c", "(redis-cli -h cache ping)"]);
        quiet(&["timeout", "5", "pg_isready"]);
    }

    #[test]
    fn script_variables() {
        fires(&["sh", "-c", "H=db.prod; redis-cli -h $H ping"]);
        quiet(&["sh", "-c", "H=localhost; redis-cli -h $H ping"]);
        fires(&["sh", "-c", "export PGHOST=db.prod; pg_isready"]);
        quiet(&["sh", "-c", "redis-cli -h ${REDIS_HOST:-localhost} ping"]);
        let d = fires(&["sh", "-c", "redis-cli -h ${REDIS_HOST:-cache} ping"]);
        assert_eq!(d.target, "cache");
        // Undefined without default: not provably local.
        fires(&["sh", "-c", "redis-cli -h $REDIS_HOST ping"]);
        // Literal env values are used, not shown in the command.
        let e = env(&[("REDIS_HOST", lit("cache.prod.svc"))]);
        let d = fires_in(&["sh", "-c", "redis-cli -h $REDIS_HOST ping"], &e);
        assert_eq!(d.target, "cache.prod.svc");
        assert_eq!(d.command, "redis-cli -h $REDIS_HOST ping");
        let e = env(&[("REDIS_HOST", lit("localhost"))]);
        quiet_in(&["sh", "-c", "redis-cli -h $REDIS_HOST ping"], &e);
        quiet_in(&["redis-cli", "-h", "$(REDIS_HOST)", "ping"], &e);
        // Single quotes keep `$` literal in the outer shell: `$H` reaches redis-cli as text.
        fires(&["sh", "-c", "redis-cli -h '$H' ping"]);
    }

    #[test]
    fn env_from_makes_absent_vars_unresolved() {
        let mut e = no_env();
        e.has_env_from = true;
        let d = fires_in(&["sh", "-c", "redis-cli -h ${REDIS_HOST:-localhost} ping"], &e);
        assert!(d.target.contains("not a literal env value"), "{}", d.target);
        fires_in(&["redis-cli", "-h", "$(REDIS_HOST)", "ping"], &e);
        // Client-implied variables are not guessed from envFrom.
        quiet_in(&["pg_isready"], &e);
        quiet_in(&["sh", "-c", "redis-cli -h $(hostname) ping"], &e);
    }

    #[test]
    fn consul_catalog_via_curl_is_a_dependency_even_locally() {
        let d = fires(&["curl", "-fs", "http://127.0.0.1:8500/v1/health/service/web?passing"]);
        assert_eq!(d.category, C::ServiceDiscovery);
    }

    #[test]
    fn vault_explicit_local_address_is_a_self_check() {
        let e = env(&[("VAULT_ADDR", lit("http://127.0.0.1:8200"))]);
        quiet_in(&["/bin/sh", "-ec", "vault status -tls-skip-verify"], &e);
        fires(&["vault", "status", "-address=https://vault.vault.svc:8200"]);
    }

    #[test]
    fn other_clients() {
        assert_eq!(
            fires(&[
                "cqlsh",
                "cassandra-0.cassandra.data.svc",
                "9042",
                "-e",
                "SELECT now() FROM system.local"
            ])
            .category,
            C::Database
        );
        quiet(&["cqlsh", "-e", "describe keyspaces"]);
        fires(&["nodetool", "-h", "cassandra-1.cassandra", "status"]);
        quiet(&["nodetool", "status"]);
        fires(&[
            "etcdctl",
            "--endpoints=https://etcd-0.etcd:2379,https://127.0.0.1:2379",
            "endpoint",
            "health",
        ]);
        quiet(&["etcdctl", "endpoint", "health"]);
        fires(&["zkCli.sh", "-server", "zk-0.zk:2181", "ls", "/"]);
        fires(&["zookeeper-shell", "zk:2181/kafka", "ls", "/"]);
        fires(&["nats", "-s", "nats://nats.msg:4222", "server", "ping"]);
        fires(&["socat", "-", "TCP:db:5432,connect-timeout=2"]);
        quiet(&["socat", "-", "UNIX-CONNECT:/run/app.sock"]);
        fires(&["telnet", "db", "5432"]);
        fires(&["openssl", "s_client", "-connect", "api.example.com:443"]);
        fires(&["grpcurl", "-plaintext", "backend:50051", "grpc.health.v1.Health/Check"]);
        fires(&["ping", "-c", "1", "10.0.0.1"]);
        quiet(&["ping", "-c", "1", "127.0.0.1"]);
        fires(&["xh", "GET", "https://api.example.com/health"]);
        fires(&["getent", "hosts", "db.prod.svc"]);
        quiet(&["getent", "hosts", "localhost"]);
        quiet(&["kubectl", "version", "--client"]);
        fires(&["curl", "-fsS", "https://kubernetes.default.svc/readyz"]);
        assert_eq!(
            fires(&["curl", "-fsS", "https://kubernetes.default.svc/readyz"]).category,
            C::ControlPlane
        );
    }

    #[test]
    fn redaction() {
        let d = fires(&["sh", "-c", "PGPASSWORD=hunter2 psql -h db -U app -c 'select 1'"]);
        assert!(!d.command.contains("hunter2"), "{}", d.command);
        assert!(d.command.contains("PGPASSWORD=***"), "{}", d.command);
        let d = fires(&["mysql", "-h", "db", "-uroot", "-phunter2", "-e", "select 1"]);
        assert!(!d.command.contains("hunter2"), "{}", d.command);
        let d = fires(&["mysqladmin", "-h", "db", "--password=hunter2", "ping"]);
        assert!(!d.command.contains("hunter2"), "{}", d.command);
        let d = fires(&["redis-cli", "-h", "cache", "-a", "hunter2", "ping"]);
        assert!(!d.command.contains("hunter2"), "{}", d.command);
        let d = fires(&["redis-cli", "-u", "redis://default:hunter2@cache:6379", "ping"]);
        assert!(!d.command.contains("hunter2") && !d.target.contains("hunter2"), "{d:?}");
        let d = fires(&["curl", "-u", "admin:hunter2", "http://svc/"]);
        assert!(!d.command.contains("hunter2"), "{}", d.command);
        let d = fires(&["psql", "host=db password=hunter2 dbname=x", "-c", "select 1"]);
        assert!(!d.command.contains("hunter2") && !d.target.contains("hunter2"), "{d:?}");
        let d = fires(&["curl", "-H", "Authorization: Bearer hunter2", "http://svc/"]);
        assert!(!d.command.contains("hunter2"), "{}", d.command);
        // A protocol's AUTH line written by printf or echo into nc.
        for script in [
            r"printf 'AUTH hunter2\r\nPING\r\n' | nc cache 6379",
            r"printf 'PING\r\nauth app hunter2\r\n' | nc cache 6379",
            "echo AUTH hunter2 | nc cache 6379",
            "(echo 'AUTH hunter2'; echo PING) | nc -q1 cache 6379",
        ] {
            let shown = redact_command(&s(&["sh", "-c", script]), 200);
            assert!(!shown.contains("hunter2"), "{shown}");
            assert!(shown.to_ascii_uppercase().contains("AUTH ***") && shown.contains("nc"), "{shown}");
        }
        let shown =
            redact_command(&s(&["sh", "-c", r"printf 'AUTH hunter2\r\nPING\r\n' | nc cache 6379"]), 200);
        assert!(shown.contains(r"PING\r\n"), "the rest of the text stays: {shown}");
        // More shapes: query names, cookies, JSON-free clients' password options, httpie, the
        // Redis wire protocol, printf formats.
        for argv in [
            vec!["curl", "http://svc/health?pw=hunter2"],
            vec!["sqlcmd", "-S", "db", "-U", "sa", "-P", "hunter2", "-Q", "select 1"],
            vec!["curl", "-sfuadmin:hunter2", "http://svc/"],
            vec!["curl", "-E", "client.pem:hunter2", "https://svc/"],
            vec!["curl", "--cert", "client.pem:hunter2", "https://svc/"],
            vec!["rabbitmqadmin", "-H", "mq", "-u", "admin", "-p", "hunter2", "list", "queues"],
            vec!["curl", "-d", r#"{"user":"app","password":"hunter2"}"#, "http://svc/login"],
            vec!["curl", "-d", r#"{"pass": "hunter2", "n": 1}"#, "http://svc/login"],
            vec!["curl", "-d", r#"{"token":12345hunter2}"#, "http://svc/login"],
            vec!["curl", "http://svc/h?X-Amz-Signature=hunter2"],
            vec!["curl", "-b", "sid=hunter2", "http://svc/"],
            vec!["curl", "--cookie", "hunter2", "http://svc/"],
            vec!["http", "-a", "u:hunter2", "r:80/health"],
            vec!["http", "r:80/health", "Authorization:Bearer hunter2"],
            vec!["mongosh", "--host", "mongo", "-u", "admin", "-phunter2"],
            vec!["sshpass", "-p", "hunter2", "ssh", "db"],
            vec!["ldapsearch", "-H", "ldap://ldap", "-w", "hunter2"],
            vec!["zkCli.sh", "-server", "zk:2181", "addauth", "digest", "u:hunter2"],
            vec!["sh", "-c", r"printf '*2\r\n$4\r\nAUTH\r\n$7\r\nhunter2\r\n' | nc redis 6379"],
            vec!["sh", "-c", r"printf 'AUTH %s\r\nPING\r\n' hunter2 | nc redis 6379"],
        ] {
            let shown = redact_command(&s(&argv), 200);
            assert!(!shown.contains("hunter2"), "{shown}");
        }
        let shown = redact_command(&s(&["sh", "-c", r"printf 'AUTH %s\r\n' x | nc redis 6379"]), 200);
        assert!(shown.contains("nc redis 6379"), "the secret ends with its command: {shown}");
        let shown =
            redact_command(&s(&["curl", "-d", r#"{"user":"app","password":"x\"y"}"#, "http://svc/"]), 200);
        assert!(shown.contains(r#""user":"app""#) && shown.contains(r#""password":"***""#), "{shown}");
        // Words that merely contain "auth" are left alone.
        let shown = redact_command(&s(&["sh", "-c", "curl -sf http://localhost:8080/oauth/health"]), 200);
        assert!(shown.contains("/oauth/health"), "{shown}");
        // Long commands are shortened.
        let long = format!("http://svc/{}", "x".repeat(200));
        let d = fires(&["curl", &long]);
        assert!(d.command.chars().count() <= 80, "{}", d.command);
    }

    // ----------------------------------------------------------------------------------- corpus

    /// Every exec probe command of /work/shared/corpus/*.yaml (liveness, readiness, startup),
    /// copied verbatim, with the container env that matters.
    #[test]
    fn corpus_exec_probes_are_local() {
        let mysql_script = "password_aux=\"${MYSQL_ROOT_PASSWORD:-}\"\nif [[ -f \"${MYSQL_ROOT_PASSWORD_FILE:-}\" ]]; then\n    password_aux=$(cat \"$MYSQL_ROOT_PASSWORD_FILE\")\nfi\nmysqladmin status -uroot -p\"${password_aux}\"\n";
        let airflow = "CONNECTION_CHECK_MAX_COUNT=0 AIRFLOW__LOGGING__LOGGING_LEVEL=ERROR exec /entrypoint \\\nairflow jobs check --job-type SchedulerJob --local\n";
        let cases: Vec<(Vec<&str>, ExecEnv)> = vec![
            // daemonset-calico-node-kube-system-exec-felix-bird-prestop-shutdown.yaml
            (vec!["/bin/calico-node", "-felix-live", "-bird-live"], no_env()),
            (vec!["/bin/calico-node", "-felix-ready", "-bird-ready"], no_env()),
            // daemonset-csi-nfs-node-liveness-host-localhost-served-by-sibling.yaml
            (
                vec![
                    "/csi-node-driver-registrar",
                    "--kubelet-registration-path=$(DRIVER_REG_SOCK_PATH)",
                    "--mode=kubelet-registration-probe",
                ],
                env(&[("DRIVER_REG_SOCK_PATH", lit("/var/lib/kubelet/plugins/csi-nfsplugin/csi.sock"))]),
            ),
            // deployment-airflow-scheduler-liveness-jobs-check-reads-metadata-db.yaml
            (
                vec!["sh", "-c", airflow],
                env(&[("AIRFLOW__DATABASE__SQL_ALCHEMY_CONN", EnvValue::Unresolved)]),
            ),
            // deployment-microservices-demo-cartservice-...yaml
            (
                vec!["/bin/grpc_health_probe", "-addr=:7070", "-rpc-timeout=5s"],
                env(&[("REDIS_ADDR", lit("redis-cart:6379"))]),
            ),
            // deployment-microservices-demo-currencyservice-...yaml
            (vec!["/bin/grpc_health_probe", "-addr=:7000"], env(&[("PORT", lit("7000"))])),
            // pod-k8sdocs-exec-liveness-cat-healthy-file.yaml
            (vec!["cat", "/tmp/healthy"], no_env()),
            // statefulset-bitnami-mongodb-mongosh-ping-local-port.yaml
            (vec!["/app/scripts/ping-mongodb.sh"], no_env()),
            (vec!["/app/scripts/readiness-probe.sh"], no_env()),
            // statefulset-bitnami-mysql-primary-mysqladmin-status-all-three-probes.yaml
            (vec!["/bin/bash", "-ec", mysql_script], env(&[("MYSQL_ROOT_PASSWORD", EnvValue::Unresolved)])),
            // statefulset-bitnami-rabbitmq-diagnostics-ping-prestop-nodeshutdown.yaml
            (
                vec!["/bin/bash", "-ec", "rabbitmq-diagnostics -q ping"],
                env(&[
                    (
                        "RABBITMQ_NODE_NAME",
                        lit("rabbit@$(MY_POD_NAME).mq-rabbitmq-headless.messaging.svc.cluster.local"),
                    ),
                    ("MY_POD_NAME", EnvValue::PodName),
                    ("RABBITMQ_PASSWORD", EnvValue::Unresolved),
                ]),
            ),
            (
                vec![
                    "/bin/bash",
                    "-ec",
                    "rabbitmq-diagnostics -q check_running && rabbitmq-diagnostics -q check_local_alarms",
                ],
                no_env(),
            ),
            // statefulset-k8sdocs-cassandra-readiness-only-prestop-nodetool-drain.yaml
            (vec!["/bin/bash", "-c", "/ready-probe.sh"], no_env()),
            // statefulset-k8sdocs-mysql-replicated-mysqladmin-ping-readiness-loopback-query.yaml
            (vec!["mysqladmin", "ping"], no_env()),
            (vec!["mysql", "-h", "127.0.0.1", "-e", "SELECT 1"], no_env()),
            // statefulset-k8sdocs-zookeeper-identical-exec-ready-script.yaml
            (vec!["sh", "-c", "zookeeper-ready 2181"], no_env()),
            // statefulset-vault-server-readiness-exec-prestop-sleep-and-kill.yaml
            (
                vec!["/bin/sh", "-ec", "vault status -tls-skip-verify"],
                env(&[("VAULT_ADDR", lit("http://127.0.0.1:8200"))]),
            ),
        ];
        for (argv, e) in &cases {
            quiet_in(argv, e);
        }
    }

    // ------------------------------------------------------------------------------- expansion

    #[test]
    fn kubelet_expansion() {
        let e = env(&[("A", lit("alpha")), ("IP", EnvValue::PodIp), ("S", EnvValue::Unresolved)]);
        assert_eq!(expand_kubelet_vars("x-$(A)-y", &e), "x-alpha-y");
        assert_eq!(expand_kubelet_vars("$$(A)", &e), "$(A)");
        assert_eq!(expand_kubelet_vars("$(UNDEFINED)", &e), "$(UNDEFINED)");
        assert_eq!(expand_kubelet_vars("$(IP):$(S)", &e), "$(IP):$(S)");
        assert_eq!(expand_kubelet_vars("$(A", &e), "$(A");
        assert_eq!(expand_kubelet_vars("$HOME $", &e), "$HOME $");
        assert_eq!(expand_kubelet_vars("$$$(A)", &e), "$alpha");
        assert_eq!(expand_kubelet_vars("", &e), "");
        assert_eq!(expand_kubelet_vars("é$(A)ü", &e), "éalphaü");
    }

    #[test]
    fn kubelet_literal_reaches_the_client() {
        let e = env(&[("DB", lit("orders-db.prod.svc"))]);
        let d = fires_in(&["pg_isready", "-h", "$(DB)"], &e);
        assert_eq!(d.target, "orders-db.prod.svc");
        assert_eq!(d.command, "pg_isready -h $(DB)");
        // `$$(DB)` is the literal text `$(DB)`: not a resolvable host, so not provably local.
        let d = fires_in(&["pg_isready", "-h", "$$(DB)"], &e);
        assert_eq!(d.target, "$(DB) (not a literal env value)");
        let d = fires_in(&["sh", "-c", "pg_isready -h $(DB)"], &e);
        assert_eq!(d.target, "orders-db.prod.svc");
    }

    // ------------------------------------------------------------------------------- splitting

    #[test]
    fn split_basic_operators_and_quotes() {
        let c = split_commands("echo 'a;b' | grep -q a && redis-cli -h \"$H\" ping; true & x || y");
        assert_eq!(
            c,
            vec![
                s(&["echo", "a;b"]),
                s(&["grep", "-q", "a"]),
                s(&["redis-cli", "-h", "$H", "ping"]),
                s(&["true"]),
                s(&["x"]),
                s(&["y"]),
            ]
        );
    }

    #[test]
    fn split_substitutions_comments_keywords() {
        let c = split_commands(
            "# comment\nif [ -f x ]; then echo $(redis-cli -h cache ping) `hostname`; fi\nfoo \\\n bar 2>&1 >/dev/null",
        );
        assert!(c.contains(&s(&["redis-cli", "-h", "cache", "ping"])));
        assert!(c.contains(&s(&["hostname"])));
        assert!(c.contains(&s(&["[", "-f", "x", "]"])));
        assert!(c.contains(&s(&["echo", "$(redis-cli -h cache ping)", "`hostname`"])));
        assert!(c.contains(&s(&["foo", "bar", "2>&1", ">/dev/null"])));
        assert!(!c.iter().any(|w| w.iter().any(|x| x == "comment" || x == "fi")));
        assert_eq!(split_commands("a#b 'c # d'"), vec![s(&["a#b", "c # d"])]);
        assert_eq!(split_commands("while true; do x; done"), vec![s(&["true"]), s(&["x"])]);
        assert_eq!(split_commands("curl http://x>/dev/null"), vec![s(&["curl", "http://x", ">/dev/null"])]);
        assert_eq!(split_commands("a \"b;c\" 'd|e'"), vec![s(&["a", "b;c", "d|e"])]);
        assert!(split_commands("").is_empty());
        assert!(split_commands(";;;\n\n&&").is_empty());
    }

    // ------------------------------------------------------------------------------ robustness

    #[test]
    fn robustness_no_panic() {
        let deep_subst = "$(".repeat(10_000) + "redis-cli -h cache ping" + &")".repeat(10_000);
        let deep_backticks = "`echo ".repeat(2_000);
        let many_semis = ";".repeat(100_000);
        let many_cmds = "redis-cli ping;".repeat(5_000);
        let scripts: Vec<String> = vec![
            "echo 'unbalanced".into(),
            "echo \"unbalanced".into(),
            "echo $(".into(),
            "echo $(redis-cli -h cache".into(),
            "echo `redis-cli".into(),
            "trailing \\".into(),
            "echo ${".into(),
            "echo ${A:-${B:-${C".into(),
            "a\0b; curl \0 http://x\0".into(),
            "$((1 + $(date +%s) - 3))".into(),
            many_semis,
            many_cmds,
            deep_subst.clone(),
            deep_backticks,
            "\u{E000}\u{E001}\u{F0000}\u{F0001}\u{FFFFD}".into(),
            "redis-cli -h \u{F0000} ping".into(),
            ")))((( }}} {{{ ]]".into(),
            "${#}${@}${!x}${x/a/b}${x%%:*}$'a\\'b'".into(),
            "case $x in a) redis-cli ping;; esac".into(),
            "cat <<EOF\nredis-cli -h cache\nEOF".into(),
        ];
        for sc in &scripts {
            let _ = split_commands(sc);
            let _ = find_dependency(&s(&["sh", "-c", sc]), &no_env());
            let _ = find_dependency(
                &s(&["bash", "-c", sc, "x"]),
                &ExecEnv { vars: HashMap::new(), has_env_from: true },
            );
            let _ = find_dependency(std::slice::from_ref(sc), &no_env());
            let _ = expand_kubelet_vars(sc, &no_env());
        }
        // Nested `sh -c` inside `sh -c` ... beyond the depth bound.
        let mut nested = "redis-cli -h cache ping".to_string();
        for _ in 0..10 {
            nested = format!("sh -c {}", shell_words::quote(&nested));
        }
        let _ = find_dependency(&s(&["sh", "-c", &nested]), &no_env());
        // Self-referencing env values do not loop.
        let e = env(&[("A", lit("$(B)")), ("B", lit("$(A)"))]);
        let _ = find_dependency(&s(&["redis-cli", "-h", "$(A)", "ping"]), &e);
        let _ = find_dependency(&s(&["sh", "-c", "redis-cli -h $A ping"]), &e);
        // Options missing their values.
        for prog in [
            "curl",
            "wget",
            "redis-cli",
            "psql",
            "mysql",
            "mongosh",
            "nc",
            "grpcurl",
            "kcat",
            "dig",
            "timeout",
            "env",
            "nice",
            "openssl",
            "socat",
            "vault",
            "consul",
        ] {
            for flag in [
                "-h",
                "-x",
                "--host",
                "-s",
                "-b",
                "-u",
                "--proxy",
                "-addr",
                "--endpoints",
                "s_client",
                "-connect",
                "-S",
                "-n",
            ] {
                let _ = find_dependency(&s(&[prog, flag]), &no_env());
            }
        }
        // The depth bound still analyses shallow substitutions.
        assert!(sh("echo $(echo $(redis-cli -h cache ping))").is_some());
    }

    #[test]
    fn display_categories() {
        let all = [
            (C::Database, "database"),
            (C::Cache, "cache"),
            (C::Queue, "queue"),
            (C::Coordination, "coordination service"),
            (C::Search, "search cluster"),
            (C::ServiceDiscovery, "service discovery"),
            (C::Secrets, "secrets store"),
            (C::Dns, "DNS"),
            (C::ControlPlane, "Kubernetes API"),
            (C::CloudApi, "cloud API"),
            (C::Network, "network service"),
        ];
        for (c, text) in all {
            assert_eq!(c.to_string(), text);
        }
    }

    #[test]
    fn more_edge_cases() {
        quiet(&["curl", "-sf", "localhost:8080/health"]);
        fires(&["curl", "-sf", "backend:8080/health"]);
        quiet(&["sh", "-c", "curl -sf \"http://localhost:${PORT:-8080}/health\" -o /dev/null"]);
        quiet(&["sh", "-c", "[ \"$(redis-cli -h localhost ping)\" = \"PONG\" ]"]);
        quiet(&["redis-cli", "-c", "-h", "127.0.0.1", "-p", "7000", "cluster", "info"]);
        quiet(&["mysqladmin", "ping", "-h", "localhost", "--protocol=tcp"]);
        quiet(&["nodetool", "-h", "::FFFF:127.0.0.1", "status"]);
        quiet(&["pg_isready", "-h", "0.0.0.0"]);
        quiet(&["pg_isready", "-h", "127.0.0.2"]);
        fires(&["pg_isready", "-d", "postgres://db.prod/app"]);
        fires(&["https", "api.example.com/health"]);
        fires(&["pg_isready", "-h", "10.0.0.5"]);
        fires(&["pg_isready", "-h", "localhost,db.prod"]);
        quiet(&["curl", "--noproxy", "*", "-x", "http://proxy:3128", "http://localhost/"]);
        quiet(&["nc", "-l", "-p", "8080"]);
        quiet(&["nc", "-U", "/run/app.sock"]);
        // A variable holding a whole client invocation is field-split.
        let e = env(&[("CHECK", lit("redis-cli -h cache ping"))]);
        fires_in(&["sh", "-c", "$CHECK"], &e);
        quiet_in(&["sh", "-c", "\"$CHECK\""], &e);
        // Unexported script variables do not reach a client's environment.
        quiet(&["sh", "-c", "PGHOST=db; pg_isready"]);
        // `sh -c` without a script operand, or reading a file, is opaque.
        quiet(&["sh", "-e", "/probe.sh"]);
    }
}
