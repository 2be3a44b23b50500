//! Session 27 (s27-fdc): wrong verdicts a new user found, each checked against the real client
//! (redis-cli 7.0.15, psql and pg_isready 15.18, MariaDB 10.11's mysql, mysqladmin) with an
//! unreachable `*.invalid` host and a listener on 127.0.0.1, or run in bash 5.2.15 and dash
//! 0.5.12 with stub clients (`/tmp/emstub/run.sh`: up 0, down 1; pg_isready down 2).
//!
//! 1. A repeated host option: which one the client connects to is a fact of its row (redis-cli
//!    and the MySQL clients: the last; redis-cli stops reading options at its command).
//! 2. Flags that print and exit without connecting (`--version`, `-V`, `--help`).
//! 3. A URL whose host began with a probe's `$(NAME)` the kubelet empties: a warning.
//! 4. The Pod's own name or hostname under ANOTHER namespace is another Pod.
//! 5. OVSDB's `cluster/status` rests on the raft cluster's quorum: a warning.

mod common;

use probegate::engine::{self, Evaluation};
use probegate::policy::{Action, Policy, RuleId};
use serde_json::{Value, json};

/// A Pod `pgv-0` in namespace `ns` (none when empty) with `env` and a liveness `command`.
fn pod_in(ns: &str, env: Value, command: Value) -> Value {
    let mut metadata = json!({"name": "pgv-0"});
    if !ns.is_empty() {
        metadata["namespace"] = json!(ns);
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
        "spec": {"containers": [{"name": "app", "image": "shop/api:1", "env": env,
            "livenessProbe": {"exec": {"command": command}}}]}})
}

fn liveness(obj: &Value) -> Option<(Action, String)> {
    let e: Evaluation = engine::evaluate(&Policy::default().rules, &common::workload(obj));
    e.findings.iter().find(|f| f.rule == RuleId::LivenessDependency).map(|f| (f.action, f.message.clone()))
}

/// The liveness-dependency finding of `sh -c SCRIPT` in a Pod of namespace `shop` with `env`.
fn sh(env: Value, script: &str) -> Option<(Action, String)> {
    liveness(&pod_in("shop", env, json!(["sh", "-c", script])))
}

fn no_env() -> Value {
    json!([])
}

fn pod_name_env() -> Value {
    json!([{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}])
}

fn assert_none(env: &Value, scripts: &[&str]) {
    for s in scripts {
        let got = sh(env.clone(), s);
        assert!(got.as_ref().is_none_or(|g| g.0 != Action::Deny), "must not deny: {s}: {got:?}");
        assert!(got.is_none(), "no finding expected: {s}: {got:?}");
    }
}

fn assert_action(env: &Value, scripts: &[&str], action: Action) -> Vec<String> {
    scripts
        .iter()
        .map(|s| {
            let got = sh(env.clone(), s);
            assert!(got.as_ref().is_some_and(|g| g.0 == action), "{action:?} expected: {s}: {got:?}");
            got.unwrap().1
        })
        .collect()
}

/// The last host option wins for redis-cli (`-h` and `-u` alike) and the MySQL clients, as for
/// libpq's. Evidence (real binaries, s27): `redis-cli -h cache.shop.invalid -p 16379 -h 127.0.0.1
/// ping` -> PONG from the 127.0.0.1:16379 listener; `redis-cli -u redis://cache.shop.invalid:6379
/// -h 127.0.0.1 -p 16390 ping` -> "Could not connect to Redis at 127.0.0.1:16390"; `mysql -h
/// db.shop.invalid -h 127.0.0.1 -P 16391` -> "Can't connect to server on '127.0.0.1'" (mysqladmin:
/// "connect to server at '127.0.0.1' failed"); `pg_isready -h db.shop.invalid -h localhost -p 5`
/// -> "localhost:5 - no response". Denied on main a40aae2 as reaching the first host.
#[test]
fn the_last_host_option_is_the_one_reached() {
    let env = json!([{"name": "REDIS_HOST", "value": "cache.shop.svc"}]);
    assert_none(
        &env,
        &[
            "redis-cli -h \"$REDIS_HOST\" -p 6379 -h 127.0.0.1 ping | grep -q PONG",
            "redis-cli -u redis://cache.shop.svc:6379 -h 127.0.0.1 ping",
            "mysqladmin -h db.shop.svc -h 127.0.0.1 ping",
            "mysql -h db.shop.svc -h 127.0.0.1 -e 'select 1'",
            "mysql --host=db.shop.svc -h 127.0.0.1 -e 'select 1'",
            "pg_isready -h db.shop.svc -h localhost",
        ],
    );
}

/// The contrasts: the remote host last. Real binaries (s27): `redis-cli -h 127.0.0.1 -p 16379 -h
/// cache.shop.invalid ping` and `-h 127.0.0.1 -p 16379 -u redis://cache.shop.invalid:16379 ping`
/// -> "Could not connect to Redis at cache.shop.invalid:16379"; redis-cli reads no option after
/// its command: `redis-cli -h cache.shop.invalid ping -h 127.0.0.1` -> "Could not connect to
/// Redis at cache.shop.invalid:6379"; `mysql -h 127.0.0.1 -P 16391 -h db.shop.invalid` ->
/// "Unknown server host 'db.shop.invalid'". Stubs: `redis-cli -h 127.0.0.1 -h cache.shop.svc
/// ping` bash 0/1 dash 0/1 (so each row: a client status the probe returns).
#[test]
fn the_remote_host_last_is_still_denied() {
    let msgs = assert_action(
        &no_env(),
        &[
            "redis-cli -h 127.0.0.1 -h cache.shop.svc ping",
            "redis-cli -h 127.0.0.1 -u redis://cache.shop.svc:6379 ping",
            "redis-cli -h cache.shop.svc ping -h 127.0.0.1",
            "redis-cli -h cache.shop.svc -p 6379 -n 0 ping -h 127.0.0.1",
            "mysql -h 127.0.0.1 -h db.shop.svc -e 'select 1'",
            "mysqladmin -h 127.0.0.1 --host=db.shop.svc ping",
            "pg_isready -h localhost -h db.shop.svc",
        ],
        Action::Deny,
    );
    assert!(msgs.iter().all(|m| m.contains("shop.svc")), "{msgs:?}");
}

/// Flags that print and exit 0 without connecting. Real binaries (s27), each exit 0 with its
/// version or help and no lookup of the `.invalid` host: `psql -h db.shop.invalid --version`,
/// `-V`, `--help`, `-c 'select 1' --version`; `redis-cli -h cache.shop.invalid --version`, `-v`,
/// `--help`; `mysql -h db.shop.invalid -V`, `mysqladmin -h db.shop.invalid --version`;
/// `pg_isready --version -h db.shop.invalid` (first argument only). Denied on main a40aae2 as
/// reaching the host.
#[test]
fn a_version_or_help_flag_reaches_nothing() {
    assert_none(
        &no_env(),
        &[
            "psql -h db.shop.svc --version >/dev/null && curl -fsS localhost:8080/healthz",
            "redis-cli -h cache.shop.svc --version >/dev/null && curl -fsS localhost:8080/healthz",
            "psql -h db.shop.svc -V",
            "psql -h db.shop.svc --help >/dev/null",
            "psql -h db.shop.svc -c 'select 1' --version",
            "redis-cli -h cache.shop.svc -v",
            "redis-cli -h cache.shop.svc --help",
            "mysql -h db.shop.svc -V",
            "mysqladmin -h db.shop.svc --version",
            "pg_isready --version -h db.shop.svc",
            "pg_isready -V -h db.shop.svc",
        ],
    );
}

/// The contrasts: the flag is a value or comes where the client does not read it as one. Real
/// binaries (s27): `psql -h db.shop.invalid -X -c --version` -> "could not translate host name",
/// exit 2 (a connection); `redis-cli -h cache.shop.invalid ping --version` -> "Could not connect
/// to Redis at cache.shop.invalid:6379" (PING's argument). Stubs: `psql -h db.shop.svc -X -c
/// --version` bash 0/1 dash 0/1.
#[test]
fn a_version_flag_that_is_not_one_is_still_denied() {
    assert_action(
        &no_env(),
        &[
            "psql -h db.shop.svc -X -c --version",
            "redis-cli -h cache.shop.svc ping --version",
            "mysql -h db.shop.svc -e --version",
        ],
        Action::Deny,
    );
}

/// A URL whose host began with a probe's `$(POD_NAME)` of a fieldRef: the kubelet empties it, so
/// the host `.pg.data.svc` has an empty label and resolves nowhere. Real clients (s27): `curl -fsS
/// http://.pg.data.svc:8008/liveness` -> "Could not resolve host: .pg.data.svc", exit 6; `wget -q
/// -O- http://.pg.data.svc:8008/liveness` exit 4; `redis-cli -u redis://.cache.shop.svc:6379 ping`
/// -> "Name or service not known", exit 1; `getent hosts .pg.data.svc` exit 2: 1 / 1, never
/// coupled. Denied on main a40aae2 as reaching `http://.pg.data.svc:8008/liveness`.
#[test]
fn a_url_host_the_kubelet_emptied_is_a_warning() {
    let msgs = assert_action(
        &pod_name_env(),
        &[
            "curl -fsS http://$(POD_NAME).pg.data.svc:8008/liveness",
            "wget -q -O- http://$(POD_NAME).pg.data.svc:8008/liveness",
            "redis-cli -u redis://$(POD_NAME).cache.shop.svc:6379 ping",
            "curl -fsS https://user@$(POD_NAME).pg.data.svc/liveness",
        ],
        Action::Warn,
    );
    for m in &msgs {
        assert!(m.contains("$(POD_NAME)") && m.contains("always fails"), "{m}");
    }
    assert!(msgs[0].contains("`.pg.data.svc`"), "{}", msgs[0]);
    let exec = liveness(&pod_in(
        "shop",
        pod_name_env(),
        json!(["curl", "-fsS", "http://$(POD_NAME).pg.data.svc:8008/liveness"]),
    ));
    assert!(exec.as_ref().is_some_and(|g| g.0 == Action::Warn), "{exec:?}");
}

/// The contrast: a written value expands, and the URL reaches that host (stubs as for any
/// remote curl: 0 / 7).
#[test]
fn a_url_host_of_a_written_value_is_denied() {
    let env = json!([{"name": "SHARD", "value": "orders"}]);
    let msgs = assert_action(&env, &["curl -fsS http://$(SHARD).pg.data.svc:8008/liveness"], Action::Deny);
    assert!(msgs[0].contains("orders.pg.data.svc"), "{}", msgs[0]);
}

/// The Pod's own hostname or name under ANOTHER namespace is another Pod (a Pod's DNS name is
/// `hostname.subdomain.<its namespace>.svc...`: Kubernetes docs, "DNS for Services and Pods"):
/// judged as any remote host. Stubs (s27): `redis-cli -h
/// $(hostname).redis-headless.other.svc.cluster.local ping` bash 0/1 dash 0/1. Nothing on main
/// a40aae2 (taken for this Pod).
#[test]
fn the_own_name_in_another_namespace_is_another_pod() {
    let msgs = assert_action(
        &pod_name_env(),
        &[
            "redis-cli -h $(hostname).redis-headless.other.svc.cluster.local ping",
            "redis-cli -h ${POD_NAME}.pg.data.svc.cluster.local ping",
            "pg_isready -h \"$HOSTNAME.pg.data.svc\"",
        ],
        Action::Deny,
    );
    assert!(msgs[0].contains("other.svc"), "{}", msgs[0]);
}

/// The contrasts: no namespace part, or the Pod's own namespace, stay this Pod (0 / 0: the stub
/// target is this Pod's server); so does any form where the object names no namespace (the Pod's
/// namespace is then not known: `check`'s `default` is only a default).
#[test]
fn the_own_name_in_its_own_or_no_namespace_is_this_pod() {
    assert_none(
        &pod_name_env(),
        &[
            "redis-cli -h $(hostname).redis-headless.shop.svc.cluster.local ping",
            "redis-cli -h $(hostname).redis-headless ping",
            "redis-cli -h ${POD_NAME}.pg ping",
            "redis-cli -h ${POD_NAME}.pg.shop.svc ping",
            "redis-cli -h $(hostname) ping",
        ],
    );
    let obj = pod_in(
        "",
        pod_name_env(),
        json!(["sh", "-c", "redis-cli -h $(hostname).redis-headless.other.svc.cluster.local ping"]),
    );
    assert_eq!(liveness(&obj), None);
}

/// kube-ovn's ovn-healthcheck.sh (the liveness probe of its 3-replica central Deployment): fails
/// when `cluster/status` says `disconnected` and `candidate`, which every member says while the
/// raft cluster has no leader (ovsdb-server(1), cluster/status; ovsdb/raft.c raft_is_connected).
/// With a stub ovn-appctl printing "Role: leader / Status: cluster member" (up) or "Role:
/// candidate / Status: disconnected from the cluster (election timeout)" (down): bash 0/1, dash
/// 0/1. A quorum warning as for `etcdctl endpoint health`; nothing on main a40aae2.
#[test]
fn ovsdb_cluster_status_rests_on_the_raft_quorum() {
    let script = "nb_status=$(ovn-appctl -t /var/run/ovn/ovnnb_db.ctl cluster/status OVN_Northbound | grep Status)\n\
                  nb_role=$(ovn-appctl -t /var/run/ovn/ovnnb_db.ctl cluster/status OVN_Northbound | grep Role)\n\
                  if echo $nb_status | grep disconnected && echo $nb_role | grep candidate; then exit 1; fi";
    let msgs = assert_action(&no_env(), &[script], Action::Warn);
    assert!(msgs[0].contains("OVSDB"), "{}", msgs[0]);
    assert_none(&no_env(), &["ovn-appctl -t /var/run/ovn/ovnnb_db.ctl ovsdb-server/sync-status"]);
}
