//! Unit tests of the parent module.

use super::*;

#[test]
fn every_row_names_its_programs_and_cites_its_source() {
    let mut seen = std::collections::BTreeSet::new();
    for c in FAMILIES.iter().flat_map(|f| f.iter()).chain(http::POWERSHELL) {
        assert!(!c.names.is_empty(), "{c:?}");
        assert!(c.source.starts_with("http"), "{:?} cites no document", c.names);
        assert!(!c.default.is_empty(), "{:?} says nothing of its default", c.names);
        assert!(!c.outage.is_empty(), "{:?} cites no evidence that an outage fails it", c.names);
        for n in c.names {
            // (`Client::is` tells rows apart by their names' first byte.)
            assert!(!n.is_empty() && !n.starts_with('*'), "{:?}: an empty name or prefix", c.names);
            assert!(seen.insert((*n, c.subcommand)), "{n} is in two rows");
        }
        // A standard row's default is what the code assumes: no host named, nothing reached.
        // (PowerShell's cmdlet rows are read by powershell.rs, which knows their defaults.)
        let cmdlet = http::POWERSHELL.iter().any(|p| std::ptr::eq(p, c));
        if c.shape == Shape::Standard && !cmdlet {
            assert!(c.default_local, "{:?}: a standard row reaches nothing without a host", c.names);
        }
    }
}

#[test]
fn rows_are_found_by_name_prefix_and_subcommand() {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert!(find_client("kafka-topics", &[]).is_some());
    assert!(find_client("kafka-server-start", &[]).is_none());
    assert!(find_client("clickhouse", &s(&["client"])).is_some());
    assert!(find_client("clickhouse", &s(&["server"])).is_none());
    assert!(find_client("openssl", &s(&["s_client"])).is_some());
    assert!(find_client("openssl", &s(&["req"])).is_none());
    assert!(find_client("true", &[]).is_none());
    assert!(find_client("", &[]).is_none());
    assert!(find_client("kafka-", &[]).is_some());
    assert!(find_client("kafka", &[]).is_none());
}

#[test]
fn socket_options_keep_a_client_local_as_its_manual_says() {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let env = super::super::ExecEnv {
        vars: [("MYSQL_HOST".to_string(), super::super::EnvValue::Literal("db.svc".into()))].into(),
        has_env_from: false,
        ..Default::default()
    };
    let fires = |argv: &[&str]| super::super::find_dependency(&s(argv), &env).is_some();
    // mysql: the socket is used when no host is named (MYSQL_HOST included)...
    assert!(!fires(&["mysqladmin", "-S", "/run/mysqld/mysqld.sock", "ping"]));
    assert!(!fires(&["mysql", "--protocol=SOCKET", "-e", "select 1"]));
    assert!(fires(&["mysql", "-e", "select 1"]), "MYSQL_HOST names the server");
    // ... and ignored for another host.
    assert!(fires(&["mysqladmin", "-h", "db.svc", "-S", "/run/mysqld/mysqld.sock", "ping"]));
    // redis-cli: `-s` overrides the host and port.
    assert!(!fires(&["redis-cli", "-h", "cache.svc", "-s", "/run/redis.sock", "ping"]));
    assert!(fires(&["redis-cli", "-h", "cache.svc", "ping"]));
}

#[test]
fn getopt_and_go_flags_read_values_the_same_way() {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let p = getopt(&s(&["-h", "db", "--port", "1", "--x=y", "--flag", "pos"]), "h", "", &["port"]);
    assert_eq!(p.get(&["h"]), vec!["db"]);
    assert_eq!(p.get(&["port"]), vec!["1"]);
    assert_eq!(p.get(&["x"]), vec!["y"]);
    assert!(p.has(&["flag"]));
    assert_eq!(p.pos, vec!["pos"]);
    let g = goflags(&s(&["-addr", "db:1", "--x=y", "-v", "pos"]), &["addr"]);
    assert_eq!(g.get(&["addr"]), vec!["db:1"]);
    assert_eq!(g.get(&["x"]), vec!["y"]);
    assert!(g.has(&["v"]));
    assert_eq!(g.pos, vec!["pos"]);
}
