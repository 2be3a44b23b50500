//! Coordination services, service discovery and secrets stores: ZooKeeper, etcd, Consul, Vault.

use super::super::DependencyCategory::{Coordination, Secrets, ServiceDiscovery};
use super::super::flags::{CONSUL_VALS, ETCD_VALS, VAULT_VALS};
use super::{BASE, Client, Positional, Shape, Syntax};

pub(in super::super) const CLIENTS: &[Client] = &[
    // zkCli.sh: `-server host:port[,host:port]` (default localhost:2181).
    Client {
        names: &["zkCli"],
        category: Coordination,
        syntax: Syntax::Go(&["server", "timeout", "client-configuration"]),
        host_opts: &["server"],
        default: "localhost:2181",
        source: "https://zookeeper.apache.org/doc/current/zookeeperCLI.html",
        outage: "without a server the client keeps reconnecting (ConnectionLoss) and the command does not complete within a probe timeoutSeconds: a failure for the kubelet (not verified against each ZooKeeper release's exit code)",
        ..BASE
    },
    // Kafka's zookeeper-shell: `zookeeper-shell.sh host:port[/chroot] [command]`.
    Client {
        names: &["zookeeper-shell"],
        category: Coordination,
        syntax: Syntax::Go(&["zk-tls-config-file"]),
        positional: Positional::Host,
        default: "none: the server is a required argument",
        source: "https://kafka.apache.org/documentation/#zk",
        outage: "as zkCli (it runs ZooKeeperMain): the connection loss outlasts a probe timeoutSeconds (not verified against each release's exit code)",
        ..BASE
    },
    // etcdctl: `--endpoints` (default 127.0.0.1:2379), `ETCDCTL_ENDPOINTS`, or
    // `--discovery-srv DOMAIN` (the members from DNS SRV records).
    Client {
        names: &["etcdctl"],
        category: Coordination,
        syntax: Syntax::Go(ETCD_VALS),
        host_opts: &["endpoints", "endpoint", "peers", "C"],
        always_opts: &[("discovery-srv", "SRV records of")],
        env: &["ETCDCTL_ENDPOINTS"],
        default: "127.0.0.1:2379",
        source: "https://github.com/etcd-io/etcd/blob/main/etcdctl/README.md",
        outage: "no endpoint answering: \"context deadline exceeded\" and exit 1 (ExitError in etcdctl/ctlv3/command)",
        ..BASE
    },
    // consul: `-http-addr` (default 127.0.0.1:8500, the local agent), `CONSUL_HTTP_ADDR`.
    Client {
        names: &["consul"],
        category: ServiceDiscovery,
        syntax: Syntax::Go(CONSUL_VALS),
        host_opts: &["http-addr"],
        skip_subcommands: &["version", "validate", "keygen", "agent"],
        env: &["CONSUL_HTTP_ADDR"],
        default: "127.0.0.1:8500 (the local agent; catalog reads reach the servers)",
        default_local: false,
        shape: Shape::Consul,
        source: "https://developer.hashicorp.com/consul/commands",
        outage: "the HTTP API unreachable: \"Error ... connection refused\", exit 1",
        ..BASE
    },
    // vault: `-address` or `VAULT_ADDR`, which defaults to https://127.0.0.1:8200 ("Commands
    // (CLI)", environment variables): without them the CLI asks this Pod's own Vault.
    Client {
        names: &["vault"],
        category: Secrets,
        syntax: Syntax::Go(VAULT_VALS),
        host_opts: &["address"],
        skip_subcommands: &["version", "server"],
        env: &["VAULT_ADDR"],
        default: "https://127.0.0.1:8200",
        source: "https://developer.hashicorp.com/vault/docs/commands",
        outage: "vault status: \"0 - unsealed, 1 - error, 2 - sealed\" (docs, \"status\" command); other commands exit 2 on a request error",
        ..BASE
    },
];
