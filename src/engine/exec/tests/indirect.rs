//! Checks run indirectly: in a new network namespace (`unshare -n`), by a wget2 whose tries are
//! bounded, from a ConfigMap script read on standard input or found after a `cd`.

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
        &["unshare", "-S70", "-n", "pg_isready", "-h", "db"],
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
/// for 190 s before it exited 0, past any real timeoutSeconds: still coupled, as with unlimited
/// tries (`0`, `inf`).
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

/// dockerize's `-wait URL` (jwilder/dockerize main.go): it retries until `-timeout` (10 s by
/// default) and then exits 1 by `log.Fatalf`; `unix://` and `file://` waits stay in the Pod.
#[test]
fn dockerize_waits_for_its_wait_urls() {
    let d = fires(&["dockerize", "-wait", "tcp://db:5432", "-timeout", "3s"]);
    assert_eq!((d.category, d.target.as_str()), (C::Database, "tcp://db:5432"));
    fires(&["dockerize", "-timeout=3s", "--wait=http://api:8080/healthz"]);
    fires(&["dockerize", "-wait", "unix:///run/app.sock", "-wait", "tcp://cache:6379"]);
    for argv in [
        &["dockerize", "-wait", "tcp://localhost:5432", "-timeout", "3s"][..],
        &["dockerize", "-wait", "unix:///run/app.sock"],
        &["dockerize", "-wait", "file:///tmp/ready"],
        &["dockerize", "-template", "a.tmpl:/etc/a.conf", "true"],
    ] {
        quiet(argv);
    }
}

fn files() -> Files {
    Files(HashMap::from([
        ("/cm/check.sh", "#!/bin/sh\npg_isready -h db\n"),
        ("/cm/local.sh", "pg_isready -h 127.0.0.1\n"),
        ("/cm/args.sh", "pg_isready -h \"$1\"\n"),
        ("/cm/py.sh", "#!/usr/bin/python3\nimport os\n"),
    ]))
}

/// A script from a ConfigMap volume given to a shell on its standard input (`bash < FILE`,
/// `sh -s ARGS < FILE`, `cat FILE | sh`) or run by a relative path after `cd DIR`: bash 5.2 and
/// dash 0.5.12 run it as `sh FILE` (a stub pg_isready exiting 2 for a remote host: each exits
/// 2; with `127.0.0.1` as `$1`, 0; `(cd DIR); ./check.sh` runs nothing there, 127).
#[test]
fn a_script_file_on_standard_input_or_after_cd_is_analysed() {
    let files = files();
    let options = Options { known_commands: vec![], files: Some(&files), budget: None, collect_all: false };
    let run = |script: &str| analyze(&s(&["sh", "-c", script]), &no_env(), &options);
    for script in [
        "bash < /cm/check.sh",
        "sh -s < /cm/check.sh",
        "cat /cm/check.sh | sh",
        "cat /cm/check.sh | bash -s",
        "sh -s db < /cm/args.sh",
        "cd /cm && ./check.sh",
        "cd /cm; sh check.sh",
        "cd -P /cm && sh ./check.sh",
        "cd /; cd cm; bash < check.sh",
        "cd /cm && cat check.sh | sh",
        "cd /tmp; (cd /cm && ./check.sh)",
        // (The grammar hangs a redirection after a list or a pipeline on the whole of it; the
        // shell gives it to the last command: bash 5.2 and dash 0.5.12 run the file.)
        "cd /cm && bash < check.sh",
        "cd /cm && sh -s < check.sh",
        "true | bash < /cm/check.sh",
        "cd /tmp || exit 1 && sh -s db < /cm/args.sh",
    ] {
        let out = run(script);
        let d = out.dependency.unwrap_or_else(|| panic!("{script}: {:?}", out.unresolved));
        let file = if script.contains("args") { "/cm/args.sh (test)" } else { "/cm/check.sh (test)" };
        assert_eq!(d.script.as_deref(), Some(file), "{script}");
        assert_eq!(d.target, "db", "{script}");
    }
    for script in [
        "bash < /cm/local.sh",
        "cat /cm/local.sh | sh",
        "sh -s 127.0.0.1 < /cm/args.sh",
        "cat /cm/check.sh | grep -q pg_isready",
        "cat /cm/check.sh > /tmp/x; sh < /cm/local.sh",
        "(cd /cm); ./check.sh",
        "cd /cm && ./local.sh",
        "sh < /cm/py.sh",
        "cd /cm && bash < local.sh",
        "bash && cat < /cm/check.sh",
        "sh | cat < /cm/check.sh",
    ] {
        let out = run(script);
        assert_eq!(out.dependency, None, "{script}");
    }
    // Not readable, or from a directory known only at run time: noted, never a finding.
    for (script, path) in [
        ("bash < /cm/missing.sh", "/cm/missing.sh"),
        ("cat /cm/missing.sh | sh", "/cm/missing.sh"),
        ("cd \"$DIR\" && ./check.sh", "$PWD/./check.sh"),
        ("cd; sh check.sh", "$PWD/check.sh"),
        ("[ -d /x ] && cd /cm; ./check.sh", "$PWD/./check.sh"),
    ] {
        let out = run(script);
        assert_eq!(out.dependency, None, "{script}");
        assert_eq!(out.unresolved.iter().map(|u| u.path.as_str()).collect::<Vec<_>>(), [path], "{script}");
    }
}
