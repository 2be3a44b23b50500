//! Caches and message queues: Redis and its forks, Kafka's tools and kcat, RabbitMQ's CLI tools
//! and rabbitmqadmin, NATS.

use super::super::DependencyCategory::{Cache, Coordination, Queue};
use super::super::flags::{NATS_LONG, REDIS_LONG};
use super::order::{HostWins, OptionsEnd};
use super::{BASE, Client, HostFormat, Shape, Syntax};

pub(in super::super) const CLIENTS: &[Client] = &[
    // redis-cli: `-h <hostname>` (default 127.0.0.1), `-u <uri>`, `-s <socket>` ("overrides
    // hostname and port"). Its `parseOptions` (src/redis-cli.c) reads the options in order, each
    // `-h` and each `-u` overwriting `config.conn_info.hostip`, so the last of them wins; it stops
    // at the first word that is not an option (the command: `ping -h x` are PING's arguments);
    // `-v`/`--version` print the version and `--help` the usage, each `exit(0)` there. Checked
    // (s27, redis-cli 7.0.15, a PONG listener on 127.0.0.1:16379): `-h cache.shop.invalid -p 16379
    // -h 127.0.0.1 ping` -> PONG; `-u redis://cache.shop.invalid:16379 -h 127.0.0.1 ping` -> PONG;
    // `-h 127.0.0.1 -p 16379 -u redis://cache.shop.invalid:16379 ping` and `-h cache.shop.invalid
    // ping -h 127.0.0.1` -> "Could not connect to Redis at cache.shop.invalid..."; `-h
    // cache.shop.invalid --version` -> "redis-cli 7.0.15", exit 0.
    Client {
        names: &["redis-cli", "valkey-cli", "keydb-cli"],
        category: Cache,
        syntax: Syntax::opts("hpsaunirdD", REDIS_LONG),
        host_opts: &["u", "h"],
        host_wins: HostWins::Last,
        options_end: OptionsEnd::FirstPositional,
        exits_without_connecting: &["v", "version", "help"],
        local_opts: &["s", "socket"],
        default: "127.0.0.1:6379",
        source: "https://redis.io/docs/latest/develop/tools/cli/",
        outage: "redis-cli without a server: \"Could not connect to Redis at HOST:PORT\" and exit 1 (src/redis-cli.c exits 1 when the connection fails in non-interactive mode)",
        outage_status: &[1],
        ..BASE
    },
    // Kafka's command-line tools: `--bootstrap-server` (required), the older `--broker-list` and
    // `--zookeeper`, and `--bootstrap-controller` (KRaft). The broker's own scripts are not clients.
    Client {
        names: &["kafka-*"],
        except: &["kafka-server-start", "kafka-server-stop", "kafka-storage", "kafka-run-class"],
        category: Queue,
        syntax: Syntax::Go(&["bootstrap-server", "broker-list", "zookeeper", "bootstrap-controller"]),
        host_opts: &["bootstrap-server", "broker-list", "bootstrap-controller"],
        other_opts: &[("zookeeper", Coordination)],
        default: "none: the broker is a required option",
        source: "https://kafka.apache.org/documentation/#basic_ops",
        outage: "the admin client retries until its timeout (default.api.timeout.ms, 60 s) and the tool exits 1 with a TimeoutException: past the probe timeoutSeconds, a failure for the kubelet either way",
        ..BASE
    },
    // kcat: `-b <brokers>`, or `-X bootstrap.servers=...` / `metadata.broker.list`.
    Client {
        names: &["kcat", "kafkacat"],
        category: Queue,
        syntax: Syntax::opts("btpocDKsrXFfGHmkzd", &[]),
        host_opts: &["b"],
        default: "the brokers of kcat.conf, if any",
        shape: Shape::Kcat,
        source: "https://github.com/edenhill/kcat#readme",
        outage: "\"ERROR: Failed to acquire metadata: Local: Broker transport failure\", exit 1",
        ..BASE
    },
    // RabbitMQ CLI tools: `-n <node>` (default `rabbit@<this host>`), `RABBITMQ_NODENAME`.
    Client {
        names: &[
            "rabbitmqctl",
            "rabbitmq-diagnostics",
            "rabbitmq-plugins",
            "rabbitmq-queues",
            "rabbitmq-upgrade",
            "rabbitmq-streams",
        ],
        category: Queue,
        syntax: Syntax::opts("ntp", &["node", "timeout", "vhost", "formatter"]),
        host_opts: &["n", "node"],
        host_format: HostFormat::ErlangNode,
        env: &["RABBITMQ_NODENAME"],
        default: "rabbit@<this host>",
        source: "https://www.rabbitmq.com/docs/cli",
        outage: "\"unable to perform an operation on node\" and exit 69 (EX_UNAVAILABLE: RabbitMQ docs, \"CLI Tools\", exit codes)",
        ..BASE
    },
    // rabbitmqadmin, the management HTTP API's CLI (v1, Python optparse, and v2): `-H, --host`
    // (default localhost), `-P, --port` (default 15672), `-U, --base-uri` (v2; `--uri` in late
    // v1); `-c, --config` and `-N, --node` take the host from a configuration file. `-h` is help.
    Client {
        names: &["rabbitmqadmin"],
        category: Queue,
        syntax: Syntax::opts(
            "cNHPVupUfSd",
            &[
                "config",
                "node",
                "host",
                "port",
                "path-prefix",
                "vhost",
                "username",
                "password",
                "base-uri",
                "uri",
                "format",
                "sort",
                "depth",
                "ssl-key-file",
                "ssl-cert-file",
                "ssl-ca-cert-file",
            ],
        ),
        host_opts: &["H", "host", "U", "base-uri", "uri"],
        config_opts: &["c", "config", "N", "node"],
        default: "localhost:15672",
        source: "https://www.rabbitmq.com/docs/management-cli",
        outage: "\"*** Could not connect: [Errno 111] Connection refused\", exit 1 (v1)",
        ..BASE
    },
    // nats CLI: `-s, --server` (default nats://127.0.0.1:4222), `NATS_URL`, or a `--context`.
    Client {
        names: &["nats"],
        category: Queue,
        syntax: Syntax::opts("s", NATS_LONG),
        host_opts: &["s", "server"],
        config_opts: &["context"],
        env: &["NATS_URL"],
        default: "nats://127.0.0.1:4222",
        source: "https://docs.nats.io/using-nats/nats-tools/nats_cli",
        outage: "\"nats: error: ... no servers available for connection\", exit 1",
        ..BASE
    },
];
