//! `curl -s localhost:9200/_cluster/health?local=true | grep -q green`: the request stays on this
//! node (`local=true`: "If true, the request retrieves information from the local node only",
//! Elasticsearch REST API docs, "Cluster health API"; the OpenSearch API keeps it), but the
//! status it returns is the cluster's, from this node's copy of the cluster state: "green: All
//! shards are assigned. yellow: All primary shards are assigned, but one or more replica shards
//! are unassigned. red: One or more primary shards are unassigned" (same page). When another data
//! node leaves, its shard copies are unassigned (Elasticsearch docs, "Delaying allocation when a
//! node leaves": the replicas are held unassigned for `index.unassigned.node_left.delayed_timeout`,
//! 1 minute by default, longer than a liveness probe's failures take), the master publishes a
//! yellow or red state to every node, and a `grep green` of it exits 1 on every node: another
//! node's outage fails this probe. (Without `local` the known command
//! `elasticsearch-cluster-health` already finds the request itself.)
//!
//! Only a `grep` that requires `green` (no `-v`, no `yellow` in the pattern: `green|yellow` still
//! passes while only replicas are missing) reading, through a pipe, a `curl`/`wget` of
//! `/_cluster/health` or `/_cat/health`; not in a container whose `env` sets
//! `discovery.type=single-node` (the cluster is this container, as for the known command).

use super::DependencyCategory;
use super::clients::Hit;
use super::context::{Ctx, basename};
use super::{Dependency, EnvValue};

/// Whether `args` (a simple command, resolved) is a `curl` or `wget` of the cluster health or
/// cat health API, whose output a pipe may carry to the next command.
pub(super) fn is_health_request(args: &[String]) -> bool {
    args.first().is_some_and(|p| matches!(basename(p), "curl" | "wget"))
        && args.iter().skip(1).any(|a| a.contains("/_cluster/health") || a.contains("/_cat/health"))
}

/// The pattern a `grep` command line searches for: `-e PATTERN` (or `--regexp=`), else its first
/// operand; `None` with `-v` (the match inverted) or `-f FILE` (patterns in a file).
fn grep_pattern(args: &[String]) -> Option<&str> {
    let mut k = 0;
    let mut operand = None;
    while let Some(a) = args.get(k) {
        if a == "--" {
            return args.get(k + 1).map(String::as_str).or(operand);
        }
        // (`-v` and `-f`, alone or in a group, are the short groups' below.)
        if a == "--invert-match" || a.starts_with("--file") {
            return None;
        }
        if a == "-e" || a == "--regexp" {
            return args.get(k + 1).map(String::as_str);
        }
        if let Some(p) = a.strip_prefix("--regexp=") {
            return Some(p);
        }
        if a.len() > 1 && a.starts_with('-') && !a.starts_with("--") {
            // A short group (`-qE`, `-iq`): `v` inverts; `e`, `f`, `m`, `A`, `B`, `C` take a value.
            let letters = &a[1..];
            if letters.contains('v') || letters.contains('f') {
                return None;
            }
            if let Some(at) = letters.find('e') {
                let rest = &letters[at + 1..];
                return if rest.is_empty() { args.get(k + 1).map(String::as_str) } else { Some(rest) };
            }
            if letters.ends_with(['m', 'A', 'B', 'C']) {
                k += 1;
            }
        } else if !a.starts_with('-') && operand.is_none() {
            operand = Some(a.as_str());
        }
        k += 1;
    }
    operand
}

impl Ctx<'_> {
    /// A `grep` (`base`, its arguments `rest`) that requires `green` of a cluster health request
    /// piped into it ([`Ctx::stdin_health`]): the other nodes of the cluster.
    pub(super) fn green_of_piped_health(
        &self,
        base: &str,
        rest: &[String],
        args: &[String],
        prefix_disp: &[String],
    ) -> Option<Dependency> {
        if !self.stdin_health || !matches!(base, "grep" | "egrep" | "fgrep") {
            return None;
        }
        let pattern = grep_pattern(rest)?.to_ascii_lowercase();
        if !pattern.contains("green") || pattern.contains("yellow") {
            return None;
        }
        if matches!(self.env.vars.get("discovery.type"), Some(EnvValue::Literal(v)) if v == "single-node") {
            return None;
        }
        let hit = Hit::always(DependencyCategory::Search, "the other Elasticsearch/OpenSearch nodes");
        let mut d = self.make_dependency(base, hit, args, prefix_disp);
        d.why = Some(
            "cluster health's status is the whole cluster's even with local=true: another data \
             node's outage leaves its shards unassigned (yellow or red), so `grep green` fails on \
             every node; check this node in liveness (`curl -f localhost:9200`)"
                .to_string(),
        );
        Some(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn the_pattern_a_grep_requires() {
        assert_eq!(grep_pattern(&s(&["-q", "green"])), Some("green"));
        assert_eq!(grep_pattern(&s(&["-qE", "\"status\":\"green\""])), Some("\"status\":\"green\""));
        assert_eq!(grep_pattern(&s(&["-q", "-e", "green"])), Some("green"));
        assert_eq!(grep_pattern(&s(&["-qegreen"])), Some("green"));
        assert_eq!(grep_pattern(&s(&["-m", "1", "green"])), Some("green"));
        assert_eq!(grep_pattern(&s(&["-qv", "green"])), None);
        assert_eq!(grep_pattern(&s(&["--invert-match", "green"])), None);
        assert_eq!(grep_pattern(&s(&["-f", "/p"])), None);
        assert_eq!(grep_pattern(&s(&["--", "-green"])), Some("-green"));
        assert!(is_health_request(&s(&["curl", "-s", "localhost:9200/_cluster/health?local=true"])));
        assert!(is_health_request(&s(&["/usr/bin/wget", "-qO-", "http://127.0.0.1:9200/_cat/health"])));
        assert!(!is_health_request(&s(&["curl", "-s", "localhost:9200/_nodes/_local"])));
        assert!(!is_health_request(&s(&["echo", "/_cluster/health"])));
    }
}
