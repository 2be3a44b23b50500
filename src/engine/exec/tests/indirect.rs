//! Checks run indirectly: in a new network namespace (`unshare -n`), by a wget2 whose tries are
//! bounded.

use super::*;

/// `unshare -n CMD` runs CMD in a network namespace of its own, whose only interface is a
/// loopback that is down: util-linux 2.38.1's `unshare -n curl -sS http://127.0.0.1:PORT/` (a
/// server listening there), `-rn` and `--ne` all exit 7, "Couldn't connect to server". Another
/// host's outage cannot change CMD's status.
#[test]
fn a_check_in_a_new_network_namespace_reaches_nothing() {
    for argv in [
        &["unshare", "-n", "pg_isready", "-h", "db"][..],
        &["unshare", "-rn", "pg_isready", "-h", "db"],
        &["unshare", "-Urnf", "pg_isready", "-h", "db"],
        &["unshare", "-U", "-n", "pg_isready", "-h", "db"],
        &["unshare", "--net", "pg_isready", "-h", "db"],
        &["unshare", "--net=/run/netns/probe", "pg_isready", "-h", "db"],
        &["unshare", "--ne", "pg_isready", "-h", "db"],
        &["unshare", "-S", "70", "-n", "pg_isready", "-h", "db"],
        &["unshare", "-rS", "70", "--net", "pg_isready", "-h", "db"],
        &["unshare", "--map-user", "70", "-n", "redis-cli", "-h", "cache", "ping"],
        &["sh", "-c", "unshare -n sh -c 'pg_isready -h db && curl -sf http://api/'"],
        &["timeout", "3", "unshare", "-n", "pg_isready", "-h", "db"],
    ] {
        quiet(argv);
    }
    // Other namespaces keep the Pod's network; `-n` as a value or after the command is not
    // unshare's.
    for argv in [
        &["unshare", "-U", "pg_isready", "-h", "db"][..],
        &["unshare", "-rm", "--mount-proc", "pg_isready", "-h", "db"],
        &["unshare", "-Sn", "pg_isready", "-h", "db"],
        &["unshare", "-w", "-n", "pg_isready", "-h", "db"],
        &["unshare", "-r", "--", "pg_isready", "-h", "db", "-n"],
        &["unshare", "-U", "sh", "-c", "unshare -p pg_isready -h db"],
    ] {
        fires(argv);
    }
}

/// wget2 exits 0 when it cannot connect: Debian 12's wget2 1.99.1 with `-t 1` or `--tries=2`
/// on a refused port or a name that does not resolve, 0 (at once), in bash 5.2 and dash 0.5.12
/// alike (rockdaboot/wget2#309 for 2.1.0). With the default 20 tries it retried a refused port
/// for over 400 s, past any timeoutSeconds: still coupled, as with unlimited tries (`0`, `inf`).
#[test]
fn a_wget2_with_bounded_tries_is_a_warning() {
    for argv in [
        &["wget2", "-q", "-t", "1", "-O-", "http://db:8080/"][..],
        &["wget2", "-q", "-t1", "-O-", "http://db:8080/"],
        &["wget2", "--tries=2", "-O-", "http://db:8080/"],
        &["wget2", "--tries", "3", "http://db:8080/"],
        &["wget2", "-e", "tries=1", "http://db:8080/"],
    ] {
        let d = fires(argv);
        assert!(d.uncoupled.as_deref().is_some_and(|u| u.contains("wget2#309")), "{argv:?}: {d:?}");
    }
    for argv in [
        &["wget2", "-q", "-O-", "http://db:8080/"][..],
        &["wget2", "--tries=0", "http://db:8080/"],
        &["wget2", "-t", "inf", "http://db:8080/"],
        &["wget", "-t", "1", "-q", "-O-", "http://db:8080/"],
    ] {
        assert_eq!(fires(argv).uncoupled, None, "{argv:?}");
    }
}
