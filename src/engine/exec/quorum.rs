//! Self-checks whose answer rests on the cluster's quorum: the command asks only this member, but
//! the member answers "healthy" only while its peers form a quorum (a leader, a Primary Component,
//! a majority of masters). A cluster-wide outage (lost quorum) then fails every replica's liveness
//! probe at once and restarts them all, which cannot restore quorum. Such a check belongs in
//! readinessProbe: a finding on it is a warning, never a denial (the member itself may be fine).
//!
//! Each row is kept only where the tool's documentation or source shows that the command fails
//! without quorum; it is cited in the row. Left out for want of such evidence: a Galera
//! `wsrep_ready` check (its documentation says only "whether the node is ready for replication"),
//! and `curl localhost:2379/health` on etcd. Elasticsearch `_cluster/health` is not here: it is a
//! built-in known command ([`crate::engine::known`]), denied as reaching the whole cluster.

use std::sync::OnceLock;

use super::DependencyCategory;
use crate::engine::known::{self, KnownCommand};

/// One quorum-dependent check: the command it matches (as [`KnownCommand::matches`] reads
/// `programs`, `args` and `unless`), what its answer rests on, and why, from `source`.
pub(super) struct QuorumCheck {
    /// Programs, argument patterns and exclusions, with what the check rests on (`reaches`) and
    /// why (`why`), as a known command's.
    pub command: KnownCommand,
    /// The document or source file the claim comes from.
    pub source: &'static str,
}

/// A command's name, programs, argument patterns and exclusions.
type Matching<'a> = (&'a str, &'a [&'a str], &'a [&'a str], &'a [&'a str]);

fn row(
    (name, programs, args, unless): Matching<'_>,
    category: DependencyCategory,
    reaches: &str,
    why: &str,
    source: &'static str,
) -> QuorumCheck {
    QuorumCheck { command: known::entry(name, programs, args, unless, category, reaches, why), source }
}

/// The quorum-dependent checks, in the order they are tried.
pub(super) fn checks() -> &'static [QuorumCheck] {
    static LIST: OnceLock<Vec<QuorumCheck>> = OnceLock::new();
    LIST.get_or_init(|| {
        use DependencyCategory::*;
        vec![
            // etcdctl's `endpoint health` gets a key through the endpoint and reports "is healthy:
            // successfully committed proposal", or "is unhealthy: failed to commit proposal" and
            // exits ExitError ("unhealthy cluster"): the read goes through consensus (its comment:
            // "proposal goes through consensus"), which no member can serve without a leader.
            // (`--cluster` checks every member: the built-in known command `etcd-cluster-health`.)
            row(
                ("etcd-endpoint-health", &["etcdctl"], &["endpoint", "health"], &["--cluster"]),
                Coordination,
                "the etcd cluster's quorum (a leader)",
                "`etcdctl endpoint health` reads through consensus, which fails on every member while \
                 the cluster has no leader",
                "etcd etcdctl/ctlv3/command/ep_command.go, epHealthCommandFunc",
            ),
            // Redis docs, CLUSTER INFO: `cluster_state` is "ok if the node is able to receive
            // queries. fail if there is at least one hash slot which is unbound (no node
            // associated), in error state (node serving it is flagged with FAIL flag), or if the
            // majority of masters can't be reached by this node". A command that requires the `:ok`
            // line (grep exits 1 without a match) fails on every node then; `grep -v` does not.
            row(
                ("redis-cluster-state", &["*"], &["*cluster_state:ok*"], &["-v", "--invert-match"]),
                Cache,
                "the Redis Cluster's masters",
                "`cluster_state` is `fail` on every node while a hash slot's master is down or the \
                 node cannot reach the majority of masters",
                "Redis docs, CLUSTER INFO (cluster_state)",
            ),
            // MariaDB docs, wsrep_cluster_status: "Component type, primary or non-primary, to which
            // the node is connected. Node remains non-operational until it connects to the Primary
            // Component"; "Monitoring MariaDB Galera Cluster": quorum "requir[es] a majority of
            // nodes to be online and in communication to form a Primary Component".
            row(
                ("galera-cluster-status", &["*"], &["*wsrep_cluster_status*"], &[]),
                Database,
                "the Galera cluster's Primary Component (quorum)",
                "`wsrep_cluster_status` is non-Primary on every node of a cluster that lost quorum",
                "MariaDB docs, wsrep_cluster_status; Monitoring MariaDB Galera Cluster",
            ),
            // ZooKeeper bin/zkServer.sh `status`: it greps `Mode` from the server's `srvr` answer
            // and exits 1 ("Error contacting service") without it; StatCommand (`srvr`) prints only
            // "This ZooKeeper instance is not currently serving requests" while the server does not
            // run, which a quorum member does not until it has joined a quorum.
            row(
                ("zookeeper-status", &["zkServer.sh", "zkServer"], &["status"], &[]),
                Coordination,
                "the ZooKeeper ensemble's quorum",
                "`zkServer.sh status` exits 1 unless the server serves requests, which a member \
                 outside a quorum does not",
                "ZooKeeper bin/zkServer.sh (status) and server/command/StatCommand.java",
            ),
            // OVSDB's clustered (raft) databases: `ovs-appctl`/`ovn-appctl -t CTL cluster/status
            // DB` "Shows the status of the Raft cluster" this server is in: its Role (leader,
            // follower, candidate) and Status (ovsdb-server(1), "Clustered Database Commands"); a
            // member without a leader, whose election did not succeed, reports itself
            // "disconnected from the cluster" (ovsdb/raft.c, `raft_is_connected`: a candidate
            // retrying its election, or one that had no leader since the last election). So with a
            // majority of the members down, every member's status is `disconnected` and its role
            // `candidate`, which kube-ovn's ovn-healthcheck.sh (the central Deployment's liveness
            // probe, 3 replicas) exits 1 on.
            row(
                ("ovsdb-cluster-status", &["ovn-appctl", "ovs-appctl"], &["cluster/status"], &[]),
                Database,
                "the OVSDB raft cluster's quorum (a leader)",
                "`cluster/status` reports Status `disconnected from the cluster` and Role `candidate` on \
                 every member while the cluster has no leader",
                "ovsdb-server(1), cluster/status; ovsdb/raft.c, raft_is_connected",
            ),
        ]
    })
}

/// The quorum-dependent check a simple command is, if any (`program` its basename, `name` the
/// same without `.sh`/`.exe`).
pub(super) fn find(program: &str, name: &str, args: &[String]) -> Option<&'static QuorumCheck> {
    checks()
        .iter()
        .find(|q| q.command.matches(program, args) || (name != program && q.command.matches(name, args)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn rows_match_their_checks_only() {
        let name = |p: &str, a: &[&str]| find(p, p, &s(a)).map(|q| q.command.name.as_str());
        assert_eq!(name("etcdctl", &["endpoint", "health"]), Some("etcd-endpoint-health"));
        assert_eq!(
            name("etcdctl", &["--endpoints=127.0.0.1:2379", "endpoint", "health", "-w", "json"]),
            Some("etcd-endpoint-health")
        );
        assert_eq!(name("etcdctl", &["endpoint", "health", "--cluster"]), None);
        assert_eq!(name("etcdctl", &["endpoint", "status"]), None);
        assert_eq!(name("grep", &["-q", "cluster_state:ok"]), Some("redis-cluster-state"));
        assert_eq!(name("grep", &["-v", "cluster_state:ok"]), None);
        assert_eq!(name("grep", &["cluster_state"]), None);
        assert_eq!(
            name("mysql", &["-e", "SHOW STATUS LIKE 'wsrep_cluster_status'"]),
            Some("galera-cluster-status")
        );
        assert_eq!(name("zkServer.sh", &["status"]), Some("zookeeper-status"));
        assert!(find("zkServer.sh", "zkServer", &s(&["status"])).is_some());
        assert_eq!(name("zkServer.sh", &["start"]), None);
        assert_eq!(
            name("ovn-appctl", &["-t", "/var/run/ovn/ovnnb_db.ctl", "cluster/status", "OVN_Northbound"]),
            Some("ovsdb-cluster-status")
        );
        assert_eq!(
            name("ovn-appctl", &["-t", "/var/run/ovn/ovnnb_db.ctl", "ovsdb-server/sync-status"]),
            None
        );
        assert!(checks().iter().all(|q| !q.source.is_empty() && !q.command.why.is_empty()));
    }
}
