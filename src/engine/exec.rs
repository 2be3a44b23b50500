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

use std::collections::HashMap;
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::known::KnownCommand;

mod budget;
pub use budget::AnalysisBudget;
pub(crate) use budget::BudgetMark;
mod clients;
mod cmd;
mod context;
#[cfg(test)]
mod cost_tests;
mod es_health;
mod flags;
mod flow;
mod grammar;
mod heredoc;
mod hosts;
mod kinds;
mod kubelet;
mod net;
mod parse;
mod parse_cache;
pub use parse_cache::{PARSE_CACHE_ENTRIES, PARSE_CACHE_TEXT_BYTES, ParseCache};
mod pod_output;
mod powershell;
mod quorum;
mod redact;
mod same;
mod script;
mod shell;
mod ssh;
mod status;
#[cfg(test)]
mod tests;
mod unwrap;
mod wait_for;
mod words;
mod xargs;

#[allow(unused_imports)]
use clients::*;
#[allow(unused_imports)]
use context::*;
#[allow(unused_imports)]
use flags::*;
#[allow(unused_imports)]
use hosts::*;
#[allow(unused_imports)]
use kubelet::*;
#[allow(unused_imports)]
use net::*;
#[allow(unused_imports)]
use redact::*;
#[allow(unused_imports)]
use script::*;
#[allow(unused_imports)]
use shell::*;
#[allow(unused_imports)]
use unwrap::*;
#[allow(unused_imports)]
use words::*;

pub use kubelet::{expand_kubelet_argv, expand_kubelet_vars};
pub use parse::MAX_OBJECT_PARSE_AREA;
pub use redact::{break_it_shapes, credential_spellings, redact_secrets};
pub(crate) use redact::{
    join_redacted_cut, redact_argv, redact_as_written, redact_command, redact_text, token_as_user,
};
pub use same::same_check_argv;

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
    /// For a variable of `vars` that is [`EnvValue::Unresolved`], where its value comes from, for
    /// the note on a target: `from the Pod's status.hostIP`, `from Secret db key host`. Without an
    /// entry the note says `not a literal env value`.
    pub unresolved_from: HashMap<String, String>,
    /// Variables of `vars` that are [`EnvValue::Unresolved`] but certainly name another machine:
    /// `valueFrom.fieldRef` of `status.hostIP`/`status.hostIPs` without `hostNetwork` (the node's
    /// address, not the Pod's; API reference, PodStatus). A host from one counts as remote.
    pub node_vars: std::collections::HashSet<String>,
    /// Host names (lowercase) that the container's `/etc/hosts` maps to the Pod itself: the
    /// Pod's `hostAliases` that name only loopback or unspecified addresses (Kubernetes docs,
    /// "Adding entries to Pod /etc/hosts with HostAliases"), and the Pod's own hostname and FQDN,
    /// which the kubelet maps to the Pod's IP. A command run in the container reaches the Pod
    /// itself through them.
    pub local_names: std::collections::HashSet<String>,
    /// Whether the container's first DNS resolver is on the Pod itself: `dnsPolicy: None` with a
    /// loopback address first in `dnsConfig.nameservers` (with `None` the container's
    /// `/etc/resolv.conf` lists only those servers, in order: Kubernetes docs, "DNS for Services
    /// and Pods", Pod's DNS policy and Pod's DNS config). A lookup through the default resolvers
    /// then asks a server of this Pod first, as `dig @127.0.0.1 NAME` does: what it answers, or
    /// where it forwards, is the Pod's own doing, not the cluster DNS (s26: k8s-at-home's
    /// lancache chart, whose own bind server answers `dig cache.lancache.net SOA`).
    pub resolver_on_pod: bool,
    /// Names whose last `env` entry has a `valueFrom`: in a probe's command the kubelet expands
    /// `$(NAME)` to the empty string, whatever value the container sees at run time. Its prober
    /// expands the command with `ExpandContainerCommandOnlyStatic`, which maps each `env` name
    /// to its written `value` (empty for a `valueFrom` entry; kubernetes
    /// `pkg/kubelet/prober/prober.go`, `pkg/kubelet/container/helpers.go`). `$NAME` read by a
    /// shell is the run-time value, as in [`ExecEnv::vars`].
    pub probe_empty: std::collections::HashSet<String>,
    /// Names of [`ExecEnv::probe_empty`] whose last `env` entry has neither `value` nor
    /// `valueFrom` (`valueFrom: null`): empty in the container too ([`EnvValue::Literal`] `""`), so
    /// a shell's `$NAME` is no way round.
    pub probe_no_value: std::collections::HashSet<String>,
    /// Names set only by `envFrom`: the same expansion reads `env` only, so a probe's `$(NAME)`
    /// stays as written (a shell then runs `NAME` as a command substitution).
    pub env_from_only: std::collections::HashSet<String>,
    /// The Pod's namespace where the object names it, lowercase: `<own name>.<sub>.<other ns>.svc`
    /// is another Pod ("DNS for Services and Pods"; `Ctx::names_other_namespace`).
    pub pod_namespace: Option<String>,
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
    /// Whether the host is known only at run time (a variable set by a ConfigMap, a Secret or the
    /// image, a script argument, command output) and nothing names it a dependency's address.
    /// The rule catalog counts an unresolved host as remote only when its variable's name looks
    /// like one (`REDIS_HOST`, `DATABASE_URL`, `PGHOST`: `(DB|REDIS|...)_?(HOST|ADDR|URL|...)`);
    /// `$CACHE` or `$1` may be `localhost`, so a finding on it is a warning, never a denial.
    pub unknown_host: bool,
    /// Why the client's exit status cannot fail the probe, when it cannot: it runs in the
    /// background (`&`), its failure is ignored (`|| true`), its pipeline's status is another
    /// command's, or the script always exits 0 afterwards. A finding on it is a warning, never a
    /// denial: the dependency's outage does not fail the probe, though a hung connection can still
    /// time it out.
    pub uncoupled: Option<String>,
    /// What decides, at run time only, whether the client's exit status fails the probe: the
    /// script's status may be one a function computes from its calls' arguments (`f() { exit
    /// $1; }; pg_isready -h db; f "$CODE"`: `` `exit $1` in `f` ``). A finding on it is a warning,
    /// never a denial.
    pub status_unknown: Option<String>,
    /// For a check of this member whose answer rests on its cluster's quorum (`etcdctl endpoint
    /// health`, a Redis Cluster's `cluster_state:ok`): why, and the document that says so
    /// ([`quorum`]). A lost quorum fails every replica's probe at once; a finding on it is a
    /// warning, never a denial.
    pub quorum: Option<String>,
    /// Whether the host is the output of a command the shell runs because the kubelet left a
    /// `$(NAME)` as written or made it of a `$$(NAME)` escape (`sh -c 'pg_isready -h $$(DB_HOST)'`
    /// runs a command named `DB_HOST`, not found in most images, so `-h` gets nothing); the name is
    /// [`Self::host_command_name`]. Set with [`Self::unknown_host`]: a warning, never a denial. (A
    /// flag, not the name: a `String` more would make the analysis' result enums too large.)
    pub host_command: bool,
    /// Whether the client refuses the URL before connecting (a port that is not a number, as a
    /// password with a raw `/` makes it: `curl http://u:pw/x@h/` exits 3): it reaches nothing and
    /// fails every time. Set with [`Self::unknown_host`]: a warning, never a denial.
    pub bad_url: bool,
    /// Whether the probe's script gives the client's status inverted: `! CMD` is its last
    /// statement (bash 5.2 and dash 0.5.12 exit 1 when CMD succeeds, 0 when it fails), so the
    /// probe fails whenever the dependency is up and passes while it is down. Coupled all the
    /// same (the dependency's state alone decides the probe); only the message differs.
    pub inverted: bool,
    /// With [`Self::inverted`]: not by `!` but by an `if` whose check's success takes a branch
    /// that exits non-zero and whose failure one that exits 0 (`if CMD; then exit 1; else exit 0;
    /// fi`; bash 5.2 and dash 0.5.12 exit 1 with the server up, 0 with it down).
    pub inverted_if: bool,
    /// With [`Self::inverted_if`]: not by an `if` but by a list ([`ListInversion`]).
    pub inverted_list: Option<ListInversion>,
    /// Whether the host is text with a `$NAME` (or `${NAME}`) in it that nothing expands: the
    /// probe's argv runs the client with no shell, and the kubelet expands only `$(NAME)`
    /// (Kubernetes docs, "Define Dependent Environment Variables"), so the client gets the text
    /// `$NAME` as its host, resolves nothing and fails every time. The variable is
    /// [`Self::literal_variable_name`]. A warning, never a denial: it reaches no dependency.
    pub literal_variable: bool,
}

/// The list that inverts a check ([`Dependency::inverted_list`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListInversion {
    /// An `&&` list whose check's success runs `exit N` (N not 0) and whose failure `|| exit 0`,
    /// a check of the container, or a script's end that exits 0 (`CMD && exit 1 || exit 0`; bash
    /// 5.2 and dash 0.5.12 exit 1 with the server up, 0 with it down: s25).
    AndExit,
    /// `CMD || exit 0` at the script's top level, followed by a certain non-zero end (`CMD ||
    /// exit 0; exit 1`; bash 5.2 and dash 0.5.12 exit 1 with the server up, 0 with it down: s26).
    OrExitZero,
}

impl Dependency {
    /// For a [`Self::host_command`] dependency, the command's `NAME`: the first `$(NAME)` of the
    /// target as shown (the note on the target describes its first unresolved reference).
    pub fn host_command_name(&self) -> Option<&str> {
        if !self.host_command {
            return None;
        }
        let at = self.target.find("$(")?;
        let rest = &self.target[at + 2..];
        rest.find(')').map(|end| &rest[..end]).filter(|n| !n.is_empty())
    }

    /// For a [`Self::literal_variable`] dependency, the variable's `NAME`: the first `$NAME` or
    /// `${NAME}` of the target as shown (before its note).
    pub fn literal_variable_name(&self) -> Option<&str> {
        if !self.literal_variable {
            return None;
        }
        literal_variable_in(self.target.split(" (").next().unwrap_or(&self.target))
    }

    /// For a [`Self::host_command`] dependency, why the shell runs `NAME`, in a few words (the
    /// target's note, written by `kubelet_left_as_written` in `exec::hosts`, says it whole): the
    /// kubelet made the `$$(NAME)` escape the text `$(NAME)`, or left `$(NAME)` as written because
    /// `NAME` is not in the container's env (or only `envFrom` sets it).
    pub fn host_command_why(&self) -> &'static str {
        if self.target.contains("the kubelet makes `$$(") {
            "the kubelet reads `$$` as `$`"
        } else if self.target.contains("the kubelet copies `$(") {
            // (s27: an env value the kubelet copies into the probe's command as written.)
            "the kubelet copies an env value into a probe's command as written"
        } else if self.target.contains("(envFrom does not count") {
            "envFrom does not count for a probe's command"
        } else {
            "not in env: the kubelet leaves it"
        }
    }
}

/// The first variable written `$NAME` or `${NAME}` in `text` (not `$(NAME)`, which the kubelet
/// expands, nor `$1`), its name.
pub(crate) fn literal_variable_in(text: &str) -> Option<&str> {
    text.match_indices('$').find_map(|(at, _)| {
        let rest = &text[at + 1..];
        let (braced, rest) = match rest.strip_prefix('{') {
            Some(r) => (true, r),
            None => (false, rest),
        };
        let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
        let name = &rest[..end];
        let starts = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
        (starts && (!braced || rest[end..].starts_with('}'))).then_some(name)
    })
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
    /// Go on past the first dependency a script's exit status depends on and list each in
    /// [`Outcome::all`] (`explain` names them all; the rules need only the first).
    pub collect_all: bool,
}

/// An HTTP request an exec probe makes to the Pod itself (`curl -f http://localhost:8080/actuator/health`),
/// for the rules that look at the path asked for (`liveness-dependency-path`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalRequest {
    /// Basename of the client program: `curl`, `wget`, `Invoke-WebRequest`.
    pub program: String,
    /// The path, query and fragment requested, as written (`/actuator/health?x=1`; may be empty).
    pub path: String,
    /// The simple command, redacted, at most about 80 characters.
    pub command: String,
}

/// The result of [`analyze`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The first dependency found, if any.
    pub dependency: Option<Dependency>,
    /// Scripts on volumes that could not be read, in the order met, each once.
    pub unresolved: Vec<UnresolvedScript>,
    /// HTTP requests to this Pod met before the analysis stopped, in order.
    pub local_requests: Vec<LocalRequest>,
    /// With [`Options::collect_all`]: every dependency found whose outage alone fails the probe
    /// (none uncoupled), in the order met; empty otherwise, and when an analysis bound stopped it.
    pub all: Vec<Dependency>,
    /// `valueFrom` variables whose `$(NAME)` the probe's command uses: the kubelet expands each
    /// to the empty string ([`ExecEnv::probe_empty`]), so the command runs without their values.
    pub kubelet_emptied: Vec<String>,
}

/// The `PATH` of a container whose image and Pod set none: Docker's `DefaultPathEnv` (docker
/// `pkg/system/path_unix.go`), which the common base images also set. A bare command name is looked up there ([`ScriptFiles`] for the files
/// on volumes).
pub(crate) const DEFAULT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

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

/// Most work units spent on one object's exec probes together (and on one command analysed
/// without an object's budget): a unit is about 250 ns of work in a release build, a word a
/// command expands to, a step of the exit-status walk; a piece of a script costs `PIECE_UNITS`
/// and a script text walked `WALK_UNITS` and its weight (s12). Bytes bound memory, but not time:
/// 1000 words set once and expanded by 160 commands (`V="..."; f $V; f $V; ...`) are 160,000 words
/// from 2 KB of text, and 14 such containers took about 245 ms to analyse. This bounds an object
/// to about 12 to 16 ms (docs/benchmarks.md, "Cost shapes"); real probe scripts use a few hundred
/// to a few thousand units. Commands met after it is spent are reported as not analysed.
pub const MAX_OBJECT_WORK_UNITS: usize = 50_000;

/// Work units each piece of a script costs (a simple command, an assignment, a function
/// definition or call, a mark of the walk), on top of a unit per word it expands to: walking to
/// it, its exit-status walk and matching it cost about 5 µs in a release build (s12, issue #9:
/// 3,900 `:` lines took 37 ms at 2 units each).
const PIECE_UNITS: usize = 16;

/// Work units each script text walked costs (a probe's script, a function's body at each call, a
/// nested `sh -c`), on top of [`WALK_UNITS_PER_WEIGHT`] per unit of its parse weight
/// (`parse::weight`: its bytes that may start or end a token; a written word costs about 2 µs to
/// parse, walk, split and expand, s12: 4,000 `$V` took 10 ms at 4,000 units). The walk's set-up reads the text whole a few times (its rules,
/// its facts) and looks its parse up (s12: a function redefined and called 470 times took 19 ms at
/// 7,496 units).
const WALK_UNITS: usize = 48;

/// Work units per unit of parse weight of a script text walked (see [`WALK_UNITS`]).
const WALK_UNITS_PER_WEIGHT: usize = 2;

/// Maximum number of wrapper layers unwrapped in one simple command.
const MAX_UNWRAP: usize = 32;
/// Maximum nesting of script files (a script running or sourcing another).
const MAX_SCRIPT_NESTING: usize = 6;
/// Maximum number of script files read in one analysis.
const MAX_SCRIPT_FILES: usize = 32;

/// The bytes of an exec command as [`analyze`] counts them against [`MAX_COMMAND_BYTES`]: each
/// argument and one separator. Reads no text (lengths only).
pub fn command_bytes(argv: &[String]) -> usize {
    argv.iter().map(|a| a.len() + 1).sum()
}

/// Whether an exec command is within the bounds the rules that read its words keep to: at most
/// [`MAX_COMMAND_BYTES`] (what [`analyze`] reads at all). Past it the command is not read (no
/// finding from it; the liveness and readiness analyses note it as not analysed), so that one
/// object's review costs memory in proportion to the bounds, not to the command (s26 break-it
/// pass: a 3 MB command took the server to 433 MB).
pub fn within_command_bound(argv: &[String]) -> bool {
    command_bytes(argv) <= MAX_COMMAND_BYTES
}

/// Split a shell script into simple commands (each a Vec of words).
///
/// Splits at unquoted `;`, `&&`, `||`, `|`, `&` and newlines; the contents of `$(...)` and
/// backticks become commands of their own (listed before the command that contains them);
/// backslash-newline continues a line; `#` comments and leading reserved words are dropped; a
/// function's body's commands are listed where it is defined (whether or not it is called).
/// Words are returned with quotes removed and variable references as written. A script over
/// [`MAX_SCRIPT_BYTES`] gives no commands (see [`split_commands_in`]).
pub fn split_commands(script: &str) -> Vec<Vec<String>> {
    split_commands_in(script, &AnalysisBudget::default()).to_vec()
}

/// [`split_commands`] for one object's rules: parsed by the object's parser, and a script the
/// object's analysis (or an earlier call) already parsed is not parsed again, nor one split
/// already split again (the split depends on the text alone). The split has the bounds of an
/// analysis of its own (it spends nothing of `object`'s). Shared with the object's cache, not
/// copied.
///
/// A script over [`MAX_SCRIPT_BYTES`] is not split (no commands): [`analyze`] does not read one
/// either, and its notes say so; the rules that read the commands find nothing in it (s26 break-it
/// pass: a 1.5 MB `sh -c "a a a ..."` was split into 750,000 words per rule, 70 to 110 MB each).
pub fn split_commands_in(script: &str, object: &AnalysisBudget) -> std::rc::Rc<[Vec<String>]> {
    if script.len() > MAX_SCRIPT_BYTES {
        return std::rc::Rc::from(Vec::new());
    }
    if let Some(commands) = object.parses.borrow().split(script) {
        return commands;
    }
    let commands: std::rc::Rc<[Vec<String>]> = split_commands_uncached(script, object).into();
    object.parses.borrow_mut().keep_split(script, &commands);
    commands
}

fn split_commands_uncached(script: &str, object: &AnalysisBudget) -> Vec<Vec<String>> {
    let env = ExecEnv::default();
    let own = object.sharing_parses();
    let mut ctx = Ctx::new(&env);
    ctx.object_budget = Some(&own);
    let mut pieces = Vec::new();
    ctx.split_script(&sanitize(script), 0, &mut pieces);
    let pieces = with_function_bodies(&mut ctx, pieces, 0);
    commands_of(&ctx, &pieces)
}

/// `pieces` with each function definition's body split in front of it (to
/// [`flow::MAX_CALL_DEPTH`] definitions deep), so that the rules that read a script's commands
/// see a command written in a function: `probe() { curl -m 10 "$1"; }; probe http://localhost/`
/// runs `curl -m 10` (s20 fresh-user pass: `probe-client-deadline` did not see it).
fn with_function_bodies(ctx: &mut Ctx<'_>, pieces: Vec<String>, depth: usize) -> Vec<String> {
    let mut out = Vec::with_capacity(pieces.len());
    for piece in pieces {
        let body =
            piece.strip_prefix(flow::FUNCTION).and_then(|p| p.split_once(flow::FUNCTION)).map(|(_, b)| b);
        if let Some(body) = body.filter(|_| depth < flow::MAX_CALL_DEPTH) {
            let mut inner = Vec::new();
            ctx.split_script(body, depth + 1, &mut inner);
            out.extend(with_function_bodies(ctx, inner, depth + 1));
        }
        out.push(piece);
    }
    out
}

/// The commands of a script's `pieces` (split by `ctx`), as [`split_commands`] gives them.
fn commands_of(ctx: &Ctx<'_>, pieces: &[String]) -> Vec<Vec<String>> {
    pieces
        .iter()
        .filter(|p| !p.starts_with([flow::FUNCTION, flow::GUARD, flow::PIPE, flow::EXIT, flow::SCOPE]))
        .map(|p| {
            piece_words(flow::strip_uncoupled(p))
                .iter()
                .map(|w| ctx.render_orig(w.trim_start_matches(REDIRECT)))
                .collect::<Vec<_>>()
        })
        .filter(|ws| !ws.is_empty())
        .collect()
}

/// Analyse an exec probe's argv (`exec.command`) in the container's environment, by host only
/// (no known commands, script files opaque). First dependency found, or None.
pub fn find_dependency(argv: &[String], env: &ExecEnv) -> Option<Dependency> {
    analyze(argv, env, &Options::default()).dependency
}

/// A script that can hand a program a secret no credential flag names, shown by its programs
/// only: `Some("exec `sh … vault …` (a script, shown by its programs only)")` for an
/// argv one of whose words feeds a command's standard input (`echo PW | vault login -`, `<<<`, a
/// here-document) or sets or reads a variable (`T=pw; curl -H "Authorization: Bearer $T"`), else
/// `None` (the caller shows the command redacted, [`redact_command`]). Break-it passes found
/// such secrets in denial messages and in `explain` output.
pub fn opaque_script_summary(argv: &[String]) -> Option<String> {
    let script_with_variables =
        |a: &str| a.contains(char::is_whitespace) && (a.contains('=') || a.contains('$'));
    if !argv.iter().any(|a| a.contains('|') || a.contains("<<") || script_with_variables(a)) {
        return None;
    }
    let program = |w: &str| w.rsplit(['/', '\\']).next().unwrap_or(w).chars().take(24).collect::<String>();
    // The first program of a text, past its variable assignments and shell punctuation (`T=pw;
    // curl ...`, `a=$(mysqladmin ...`): a word with `=` is never shown (break-it pass, s14:
    // `["PGPASSWORD=pw pg_isready"]` showed it). The text is redacted first, like any command
    // shown ([`redact_argv`]).
    let delimiter = |c: char| c.is_whitespace() || "'\";&|<>()`$".contains(c);
    let lead_of = |s: &str| {
        s.split(delimiter).find(|w| !w.is_empty() && !w.contains('=')).map(program).unwrap_or_default()
    };
    // Whether the start of a text shown holds its lead whole (a delimiter after it): the rest
    // of the text, shown or not, cannot change it.
    let lead_found = |s: &str| {
        let mut start = 0;
        for (at, c) in s.char_indices().filter(|&(_, c)| delimiter(c)) {
            let w = &s[start..at];
            if !w.is_empty() && !w.contains('=') {
                return true;
            }
            start = at + c.len_utf8();
        }
        false
    };
    // Only each argument's first words are read: its first 256 characters, cut at a blank.
    let heads: Vec<String> =
        argv.iter().map(|a| redact::head_at_blank(a, 256).unwrap_or(a).to_string()).collect();
    // The script of `sh -c SCRIPT ...`, not the words after it (its `$0`, `$1`: break-it pass,
    // s15, `sh -c 'mysqladmin -p"$1" ping' x PASSWORD` showed the password).
    let script = (1..argv.len()).find(|&k| {
        let p = &argv[k - 1];
        p.starts_with('-') && !p.starts_with("--") && p.ends_with('c')
    });
    let lead_at = script.or(heads.len().checked_sub(1));
    // The script is redacted only as far as its lead (what follows it is not shown), with the
    // programs and secret variables of the whole command, as [`redact_argv`] redacts it whole.
    let shown = match lead_at {
        Some(k) => redact::redact_argv_until(&heads, k, &lead_found),
        None => redact_argv(&heads),
    };
    let lead = lead_at.map(|k| lead_of(&shown[k])).unwrap_or_default();
    if argv.len() < 2 {
        // One string: the command itself.
        return Some(format!("exec `{lead} …` (a script, shown by its programs only)"));
    }
    let first = shown.first().map(|p| lead_of(p)).unwrap_or_default();
    Some(format!("exec `{first} … {lead} …` (a script, shown by its programs only)"))
}

/// Whether a word of `argv` feeds a literal to a command's standard input, where a secret needs
/// no credential flag: a here-document or here-string (`<<`), or a pipeline element that is an
/// `echo` or `printf` (`echo TOKEN | vault login -`, `printf '%s' PW | redis-cli -x AUTH`).
/// `explain` shows such a script by its programs only ([`opaque_script_summary`]) and any other
/// as written, redacted (s13 verdict pass: the token of `echo TOKEN | vault login -` was shown).
pub fn feeds_literal_to_stdin(argv: &[String]) -> bool {
    argv.iter().any(|a| {
        a.contains("<<")
            || a.match_indices('|').any(|(i, _)| {
                let (before, after) = (&a[..i], &a[i + 1..]);
                if before.ends_with('|') || after.starts_with('|') {
                    return false;
                }
                let segment = before.rsplit([';', '&', '|', '(', '{', '\n', '`']).next().unwrap_or(before);
                let first = segment.split_whitespace().next().unwrap_or("");
                matches!(first.rsplit('/').next(), Some("echo" | "printf"))
            })
    })
}

/// A command as notes show it: redacted, on one line, at most 60 characters.
fn one_line_excerpt(argv: &[String]) -> String {
    let text = redact_command(argv, 80);
    truncate_chars(&text.split_whitespace().collect::<Vec<_>>().join(" "), 60)
}

/// The note for the command that spent the rest of the object's [`AnalysisBudget`].
fn object_budget_note() -> String {
    format!(
        "over the {} MiB of shell text or {MAX_OBJECT_WORK_UNITS} commands and words probegate analyses for one object's exec probes together",
        MAX_OBJECT_ANALYSIS_BYTES / (1024 * 1024)
    )
}

/// The note for each command met after the object's [`AnalysisBudget`] is spent: not analysed
/// at all (every one is noted, naming its container).
fn spent_before_note() -> String {
    format!(
        "earlier exec probes spent the {} MiB of shell text or {MAX_OBJECT_WORK_UNITS} commands and words probegate analyses per object",
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
    ctx.collect_all = options.collect_all;
    let command_bytes = command_bytes(argv);
    if command_bytes > MAX_COMMAND_BYTES {
        let shown = one_line_excerpt(&argv[..argv.len().min(8)]);
        ctx.note_over_bound(
            &shown,
            format!(
                "a {command_bytes}-byte command ({} arguments) is over the {MAX_COMMAND_BYTES} bytes probegate analyses",
                argv.len()
            ),
        );
        return Outcome { dependency: None, unresolved: ctx.unresolved, ..Outcome::default() };
    }
    if let Some(budget) = options.budget
        && budget.is_spent()
    {
        // Spent by the object's earlier commands: every command it stops is noted, so that its
        // container is named (break-it pass, s17: thirteen containers of `: ;` padding spent it,
        // and a fourteenth's `pg_isready -h db` was admitted with no warning).
        ctx.note_over_bound(&one_line_excerpt(argv), spent_before_note());
        return Outcome { dependency: None, unresolved: ctx.unresolved, ..Outcome::default() };
    }
    let args: Vec<String> = argv
        .iter()
        .map(|a| {
            let a = sanitize(a);
            ctx.kubelet_expand(&a, 0)
        })
        .collect();
    let mut dependency =
        if ctx.spend_units(args.len()) { ctx.analyze_args(&args, Vec::new(), &[], 0) } else { None };
    // Not analysed is not a finding (never deny on a guess): it is reported like a script that
    // could not be read.
    let shown = || one_line_excerpt(argv);
    if ctx.object_spent.get() {
        // The object's commands together are over the budget: this one and the rest are not
        // analysed, and nothing this one found counts (its text was cut short).
        dependency = None;
        let shown = shown();
        ctx.note_over_bound(&shown, object_budget_note());
    } else if ctx.units_left.get() == 0 {
        // Stopped part way by the work units: nothing found counts.
        dependency = None;
        let shown = shown();
        ctx.note_over_bound(
            &shown,
            format!("its commands expand to more than the {MAX_OBJECT_WORK_UNITS} commands and words probegate analyses"),
        );
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
    } else if dependency.is_none()
        && let Some(gap) = ctx.parse_gap
    {
        let shown = shown();
        ctx.note_over_bound(&shown, gap.reason(ctx.parse_gap_in_cmd));
    }
    // A call chain cut at the call limit: what its deeper calls run was not analysed, whatever
    // was found beside it (never a silent allow).
    if ctx.calls_cut {
        let shown = shown();
        let levels = flow::MAX_CALL_DEPTH;
        ctx.note_over_bound(
            &shown,
            format!("its function calls nest deeper than the {levels} levels probegate follows"),
        );
    }
    let bounded = ctx.over_budget.get() || ctx.units_left.get() == 0 || ctx.object_spent.get();
    // Collecting, the walk went on past the coupled dependencies it found: the first is the one
    // the rules report; all of them count only when no bound stopped the walk.
    let mut all = std::mem::take(&mut ctx.found_all);
    if bounded || !ctx.collect_all {
        all.clear();
    } else if let Some(first) = &dependency {
        if first.uncoupled.is_none() && !all.contains(first) {
            all.insert(0, first.clone());
        }
    } else {
        dependency = all.first().cloned();
    }
    // A dependency whose exit status cannot fail the probe counts only when no other was found
    // (and never after an analysis bound stopped the analysis).
    if dependency.is_none() && !bounded {
        dependency = ctx.uncoupled_found.take();
    }
    let local_requests =
        if dependency.is_some() || ctx.over_budget.get() { Vec::new() } else { ctx.local_requests };
    Outcome {
        dependency,
        unresolved: ctx.unresolved,
        local_requests,
        all,
        kubelet_emptied: ctx.kubelet_emptied,
    }
}
