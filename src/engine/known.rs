//! Commands that reach a dependency without naming a host: `celery inspect ping` goes through the
//! broker, `airflow jobs check` reads the metadata database, `curl localhost:9200/_cluster/health`
//! asks the whole search cluster. The host analysis in [`super::exec`] cannot see these: the
//! dependency is in what the command does, not in where it connects.
//!
//! The list is data (`rules.liveness-dependency.knownCommands` in the policy file): each entry
//! matches a simple command by program and argument patterns, and says which dependency it reaches
//! and why, for the message. probegate ships a curated list ([`builtin`]); a policy adds entries to
//! it, and `defaultKnownCommands: false` drops the built-in ones.

use std::sync::OnceLock;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

use super::exec::DependencyCategory;

/// One command that reaches a dependency whatever host it names (or without naming one).
///
/// Matching, on one simple command after wrappers (`sh -c`, `env`, `timeout`, `exec`, `python -m`,
/// `python script.py`, ...) are unwrapped and variables resolved:
/// - `programs`: the program's basename is one of these (`*` wildcards allowed; `*` alone is any
///   program);
/// - `args`: every pattern matches some argument, in this order (other arguments may come between,
///   so options such as `-A app` do not get in the way). `*` matches any run of characters; a
///   pattern that starts with `-` and has no `*` also matches `PATTERN=value` (`--database` matches
///   `--database=default`);
/// - `unless`: no argument matches any of these patterns (`*local=true*`);
/// - `unlessEnv`: no `NAME=VALUE` pattern names an `env` entry of the container whose literal value
///   matches VALUE (`discovery.type=single-node`: the cluster the command asks about is this
///   container alone).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct KnownCommand {
    /// A short id, shown in `policy explain`-style listings and tests (`celery-inspect`).
    #[serde(deserialize_with = "non_empty_string")]
    pub name: String,
    /// Program basenames (`celery`, `manage.py`, `kafka-*`); `*` alone matches any program.
    #[serde(deserialize_with = "non_empty_list")]
    #[schemars(length(min = 1))]
    pub programs: Vec<String>,
    /// Argument patterns that must all match, in order.
    #[serde(default)]
    pub args: Vec<String>,
    /// Argument patterns any of which makes the entry not match.
    #[serde(default)]
    pub unless: Vec<String>,
    /// `NAME=VALUE` patterns (`*` wildcards in VALUE) any of which, met by a literal `env` value of
    /// the container, makes the entry not match: the container's own settings say the dependency
    /// is the container itself (`discovery.type=single-node`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unless_env: Vec<String>,
    /// What kind of dependency it reaches.
    pub category: DependencyCategory,
    /// What it reaches, for the message: `the Celery broker`.
    #[serde(deserialize_with = "non_empty_string")]
    pub reaches: String,
    /// Why, for the message: `celery inspect sends its request through the broker`.
    #[serde(deserialize_with = "non_empty_string")]
    pub why: String,
}

fn non_empty_string<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let s = String::deserialize(d)?;
    if s.trim().is_empty() {
        return Err(serde::de::Error::custom("must not be empty"));
    }
    Ok(s)
}

fn non_empty_list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let v = Vec::<String>::deserialize(d)?;
    if v.is_empty() || v.iter().any(|p| p.trim().is_empty()) {
        return Err(serde::de::Error::custom("must list at least one program, none of them empty"));
    }
    Ok(v)
}

/// `*`-wildcard match of the whole of `s` (no other metacharacters: URLs keep their `?`).
/// Allocation-free: it runs on every simple command of every exec liveness probe.
pub fn wildcard(pattern: &str, s: &str) -> bool {
    // The pattern's literal parts match parts of `s` that do not overlap: a shorter `s` cannot
    // match (most arguments are shorter than `*master_link_status:up*`; searching each for it
    // cost a substring searcher's set-up, about 700 instructions).
    if s.len() < pattern.len() - pattern.bytes().filter(|&b| b == b'*').count() {
        return false;
    }
    let Some((first, rest_pattern)) = pattern.split_once('*') else { return pattern == s };
    let Some(rest) = s.strip_prefix(first) else { return false };
    let (middle, last) = rest_pattern.rsplit_once('*').unwrap_or(("", rest_pattern));
    let Some(mut rest) = rest.strip_suffix(last) else { return false };
    for part in middle.split('*').filter(|p| !p.is_empty()) {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

fn arg_matches(pattern: &str, arg: &str) -> bool {
    wildcard(pattern, arg)
        || (pattern.starts_with('-')
            && !pattern.contains('*')
            && arg.strip_prefix(pattern).is_some_and(|rest| rest.starts_with('=')))
}

impl KnownCommand {
    /// Whether a simple command (program basename, arguments after it) is this entry's command.
    pub fn matches(&self, program: &str, args: &[String]) -> bool {
        let program_ok = self.programs.iter().any(|p| p == "*" || wildcard(p, program));
        if !program_ok {
            return false;
        }
        let mut want = self.args.iter().peekable();
        for a in args {
            match want.peek() {
                Some(p) if arg_matches(p, a) => {
                    want.next();
                }
                Some(_) => {}
                None => break,
            }
        }
        want.peek().is_none() && !args.iter().any(|a| self.unless.iter().any(|u| arg_matches(u, a)))
    }

    /// Whether one of the entry's `unlessEnv` patterns is met: `env` gives the literal value of a
    /// container `env` entry by name (`None` when it has none, or one known only at run time,
    /// which never meets a pattern).
    pub fn excluded_by_env<'v>(&self, env: impl Fn(&str) -> Option<&'v str>) -> bool {
        self.unless_env.iter().any(|p| {
            p.split_once('=').is_some_and(|(name, value)| env(name).is_some_and(|v| wildcard(value, v)))
        })
    }
}

/// A [`KnownCommand`] from string slices: the built-in list's rows and `exec::quorum`'s.
pub(super) fn entry(
    name: &str,
    programs: &[&str],
    args: &[&str],
    unless: &[&str],
    category: DependencyCategory,
    reaches: &str,
    why: &str,
) -> KnownCommand {
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
    KnownCommand {
        name: name.into(),
        programs: strings(programs),
        args: strings(args),
        unless: strings(unless),
        unless_env: Vec::new(),
        category,
        reaches: reaches.into(),
        why: why.into(),
    }
}

/// `entry` that does not match in a single-node Elasticsearch/OpenSearch container.
fn single_node(mut e: KnownCommand) -> KnownCommand {
    e.unless_env = vec!["discovery.type=single-node".into()];
    e
}

/// Forms of the Elasticsearch/OpenSearch `local` parameter that make cluster health answer from
/// the local node's cluster state (`?local`, `?local=true`, `&local=true`, ...).
const ES_LOCAL: &[&str] = &["*local=true*", "*?local", "*&local", "*?local&*", "*&local&*"];

/// The built-in list, in the order it is tried (after the user's entries are appended).
pub fn builtin() -> &'static [KnownCommand] {
    static LIST: OnceLock<Vec<KnownCommand>> = OnceLock::new();
    LIST.get_or_init(|| {
        use DependencyCategory::*;
        vec![
            // Each entry is kept because the dependency's outage FAILS the command (a non-zero
            // exit, or a run longer than the probe's timeoutSeconds, which the kubelet counts as a
            // failure: Kubernetes docs, "Configure Liveness, Readiness and Startup Probes"). The
            // evidence is cited in the entry.
            //
            // Celery docs, User Guide "Workers", section "Remote control": inspect and control
            // commands are broadcast messages sent through the broker, and the replies come back
            // through it (docs.celeryq.dev/en/stable/userguide/workers.html#remote-control).
            // Outage: with no reply the command exits EX_UNAVAILABLE (69) saying "No nodes replied
            // within time constraint" (celery/bin/control.py; t/unit/bin/test_control.py asserts
            // `res.exit_code == EX_UNAVAILABLE` for inspect and control), and a broker that cannot be
            // reached raises kombu's OperationalError (exit 1).
            entry(
                "celery-inspect",
                &["celery"],
                &["inspect"],
                &[],
                Queue,
                "the Celery broker",
                "`celery inspect` broadcasts its request through the broker and waits for replies, so a \
                 broker outage fails every worker's probe at once",
            ),
            entry(
                "celery-control",
                &["celery"],
                &["control"],
                &[],
                Queue,
                "the Celery broker",
                "`celery control` sends its command through the broker",
            ),
            // Celery docs, User Guide "Monitoring and Management Guide", command-line `status`:
            // "List active nodes in this cluster" (a broadcast ping through the broker). Outage:
            // celery/bin/control.py `status`: `if not replies: raise CeleryCommandException(message='No
            // nodes replied within time constraint', exit_code=EX_UNAVAILABLE)`.
            entry(
                "celery-status",
                &["celery"],
                &["status"],
                &[],
                Queue,
                "the Celery broker",
                "`celery status` pings every node through the broker",
            ),
            // Airflow docs, Command Line Interface reference, `jobs check` ("Checks if job(s) are
            // still alive"): it queries the job table of the metadata database; apache/airflow
            // #26574 and #19001 on the restarts this causes during database incidents. Outage:
            // airflow/cli/commands/jobs_command.py runs the query through a database session (an
            // unreachable database raises SQLAlchemy's OperationalError, exit 1) and
            // `raise SystemExit("No alive jobs found.")` when no heartbeat row is recent.
            entry(
                "airflow-jobs-check",
                &["airflow"],
                &["jobs", "check"],
                &[],
                Database,
                "the Airflow metadata database",
                "`airflow jobs check` answers from the job heartbeat rows in the metadata database, not \
                 from this process",
            ),
            // Airflow docs, Command Line Interface reference, `db check`: "Check if the database can
            // be reached". Outage: airflow/utils/db.py `check()` executes `select 1 as is_alive;`
            // and lets the connection error raise (exit 1).
            entry(
                "airflow-db-check",
                &["airflow"],
                &["db", "check"],
                &[],
                Database,
                "the Airflow metadata database",
                "`airflow db check` connects to the metadata database",
            ),
            // Dagster docs, "dagster-daemon" CLI reference, `liveness-check` ("Check for recent
            // heartbeats from the daemon"; `health-check` is its deprecated name): it reads the
            // daemons' heartbeat rows from the instance storage (dagster/daemon/cli/__init__.py
            // `liveness_check_command` -> `all_daemons_live(instance)`), which the Dagster Helm chart
            // puts in PostgreSQL (a daemon and a webserver in different Pods share it: SQLite
            // storage cannot be shared). Outage: the storage query raises (exit 1), and with the
            // database down no daemon writes a heartbeat, so the check prints "Daemon(s) not
            // running" and exits 1 (deny26, s26: dagster-io/dagster helm values
            // `dagsterDaemon.livenessProbe`).
            entry(
                "dagster-daemon-liveness-check",
                &["dagster-daemon"],
                &["liveness-check"],
                &[],
                Database,
                "the Dagster instance storage (its database)",
                "`dagster-daemon liveness-check` reads the daemons' heartbeat rows from the instance's \
                 storage database, not from this process",
            ),
            entry(
                "dagster-daemon-health-check",
                &["dagster-daemon"],
                &["health-check"],
                &[],
                Database,
                "the Dagster instance storage (its database)",
                "`dagster-daemon health-check` (liveness-check's old name) reads heartbeat rows from the \
                 instance's storage database",
            ),
            // No Django entry: `manage.py check --database` runs the backend's validation
            // (django/core/checks/database.py `check_database_backends`), which queries the server
            // only on MySQL/MariaDB (django/db/backends/mysql/validation.py: `SELECT @@sql_mode`);
            // the base validation (django/db/backends/base/validation.py) used by PostgreSQL, SQLite
            // and Oracle reads model fields without connecting, so there a database outage passes
            // the check (exit 0). Which backend a command uses cannot be seen in the probe: a MySQL
            // project adds its own entry.
            //
            // Elasticsearch REST API docs, "Cluster health API": the status is the cluster's (any
            // unassigned primary shard anywhere turns it red), and the request goes to the elected
            // master unless `local=true` (the OpenSearch API keeps both). Outage: without an elected
            // master the request waits `master_timeout` (30 s by default) and then answers 503
            // `master_not_discovered_exception`, past any usual probe timeout (a failure), and at
            // once with `curl -f`; `wait_for_status=...&timeout=...` answers 408 when the cluster
            // does not reach the status (docs, "Response codes").
            // Not with `discovery.type=single-node` in the container's env (Elasticsearch docs,
            // "Discovery and cluster formation settings", and the Docker image's env-to-setting
            // mapping; OpenSearch the same): the node elects itself and never joins another, so
            // the cluster, its master and every shard are this container (deny25, s25: nextcloud
            // all-in-one's fulltextsearch liveness script was denied).
            single_node(entry(
                "elasticsearch-cluster-health",
                &["curl", "wget"],
                &["*/_cluster/health*"],
                ES_LOCAL,
                Search,
                "the whole Elasticsearch/OpenSearch cluster",
                "cluster health asks the elected master about every shard in the cluster; a liveness \
                 probe on it restarts healthy nodes when another node fails (add ?local=true)",
            )),
            // Elasticsearch REST API docs, "cat health API": the same cluster-wide status, through
            // the same master request (it also takes `local`). Outage: as cluster health.
            single_node(entry(
                "elasticsearch-cat-health",
                &["curl", "wget"],
                &["*/_cat/health*"],
                ES_LOCAL,
                Search,
                "the whole Elasticsearch/OpenSearch cluster",
                "`_cat/health` is the cluster-wide status, not this node's",
            )),
            // No nodetool entry: `nodetool status`, `ring` and `describecluster` ask the local
            // node (JMX on localhost:7199 by default) for its view of the ring and print other
            // nodes as DN or UNREACHABLE, exiting 0 while they are down (scylladb/scylladb#1637
            // shows `nodetool status` with a DN node and exit status 0). Another node's outage
            // never fails such a probe, so it is a check of this node, not a coupling; a
            // `nodetool -h OTHER` is still found by the host analysis.
            //
            // etcd docs, etcdctl `endpoint health`: with `--cluster` it checks every endpoint of the
            // cluster's member list, not the one given. Outage: etcdctl/ctlv3/command/ep_command.go
            // ends `if errs { ExitWithError(ExitError, fmt.Errorf("unhealthy cluster")) }` when any
            // member does not answer (and `endpoint status --cluster` exits ExitError likewise).
            entry(
                "etcd-cluster-health",
                &["etcdctl"],
                &["endpoint", "--cluster"],
                &[],
                Coordination,
                "every etcd member",
                "`endpoint ... --cluster` reads the member list and checks every member",
            ),
            // KServe's multi-node (Ray) huggingfaceserver, python/huggingfaceserver/health_check.py:
            // `registered_nodes` (also `registered_node_and_runtime_health` and
            // `registered_node_and_runtime_models`) joins the Ray cluster (`ray.init(address=...)`,
            // `--ray_address`, else RAY_ADDRESS, else "auto") and counts the nodes `ray.nodes()`
            // reports `Alive`. Outage: fewer than `--ray_node_count` (RAY_NODE_COUNT, 2 by default)
            // is "Unhealthy" and `verify_status` calls `sys.exit(1)`; a failed `ray.init` is
            // `sys.exit(1)` too. So one worker Pod's outage fails the check on every node.
            // (`runtime_health --health_check_url URL` only GETs URL: not an entry.)
            entry(
                "kserve-ray-registered-nodes",
                &["health_check.py", "huggingfaceserver.health_check"],
                &["registered_node*"],
                &[],
                Network,
                "every node of the Ray cluster",
                "`health_check.py registered_nodes` counts the Ray cluster's alive nodes and exits 1 \
                 when one is missing, so another node's outage fails every node's probe",
            ),
            // Redis docs, INFO command, replication section: `master_link_status` is the replica's
            // link to its master (up/down). Outage: a command that requires `master_link_status:up`
            // (`grep -q master_link_status:up`: grep(1) exits 1 when no line matches) fails whenever
            // the master is down; one that only prints the field (`grep master_link_status`) exits 0
            // either way, so only the `:up` form is a coupling.
            entry(
                "redis-replication-link",
                &["*"],
                &["*master_link_status:up*"],
                &[],
                Cache,
                "the Redis master (the replica's replication link)",
                "`master_link_status` is down whenever the master is",
            ),
        ]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    fn find(name: &str) -> &'static KnownCommand {
        builtin().iter().find(|k| k.name == name).unwrap()
    }

    #[test]
    fn wildcards() {
        assert!(wildcard("*", ""));
        assert!(wildcard("a*c", "abbc"));
        assert!(wildcard("*/_cluster/health*", "http://localhost:9200/_cluster/health?pretty"));
        assert!(!wildcard("*/_cluster/health*", "http://localhost:9200/_cat/health"));
        assert!(wildcard("kafka-*", "kafka-topics"));
        assert!(!wildcard("a*a", "a"));
        assert!(wildcard("?x", "?x"));
        assert!(wildcard("a*b*c", "abc"));
        assert!(wildcard("a*b*c", "a-b-b-c"));
        assert!(!wildcard("a*b*c", "a-c"));
        assert!(!wildcard("ab*ba", "aba"), "prefix and suffix must not overlap");
        assert!(wildcard("**", "x"));
        assert!(!wildcard("?x", "ax"));
    }

    #[test]
    fn builtin_entries_match_their_commands_only() {
        let celery = find("celery-inspect");
        assert!(celery.matches("celery", &s(&["-A", "app", "inspect", "ping", "-d", "celery@x"])));
        assert!(!celery.matches("celery", &s(&["-A", "app", "worker"])));
        // A pattern starting with `-` also matches `PATTERN=value`.
        let etcd = find("etcd-cluster-health");
        assert!(etcd.matches("etcdctl", &s(&["endpoint", "health", "--cluster"])));
        assert!(etcd.matches("etcdctl", &s(&["endpoint", "health", "--cluster=true"])));
        assert!(!etcd.matches("etcdctl", &s(&["endpoint", "health"])));
        let es = find("elasticsearch-cluster-health");
        assert!(es.matches("curl", &s(&["-s", "http://localhost:9200/_cluster/health?timeout=1s"])));
        assert!(!es.matches("curl", &s(&["-s", "http://localhost:9200/_cluster/health?local=true"])));
        assert!(!es.matches("curl", &s(&["http://127.0.0.1:9200/_cluster/health?local"])));
        assert!(!es.matches("curl", &s(&["http://127.0.0.1:9200/_cluster/health?pretty&local"])));
        let airflow = find("airflow-jobs-check");
        assert!(airflow.matches("airflow", &s(&["jobs", "check", "--job-type", "SchedulerJob", "--local"])));
        assert!(!airflow.matches("airflow", &s(&["check", "jobs"])));
        let dagster = find("dagster-daemon-liveness-check");
        assert!(dagster.matches("dagster-daemon", &s(&["liveness-check"])));
        assert!(!dagster.matches("dagster-daemon", &s(&["run"])));
        assert!(find("dagster-daemon-health-check").matches("dagster-daemon", &s(&["health-check"])));
        let redis = find("redis-replication-link");
        assert!(redis.matches("grep", &s(&["-q", "master_link_status:up"])));
        // Printing the field exits 0 whatever it says: not a coupling.
        assert!(!redis.matches("grep", &s(&["master_link_status"])));
        // Every built-in entry is kept for evidence that the outage fails the command: no Django
        // (only MySQL's checks connect) and no nodetool (it exits 0 with peers down).
        assert!(builtin().iter().all(|k| !k.programs.iter().any(|p| p == "manage.py" || p == "nodetool")));
        let names: std::collections::BTreeSet<&str> = builtin().iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names.len(), builtin().len(), "names are unique");
    }
}
