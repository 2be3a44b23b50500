//! Session 24, the verdict hunt's false denials (s24-lead): a URL whose scheme is a variable set
//! in a branch, and a fail-open check whose output is read only while the server answers.
//! Every row was run in bash 5.2.15 and dash 0.5.12 with stub clients on PATH (`redis-cli` prints
//! `role:master` and exits 0 up, exits 1 down; `curl` to a loopback port nobody listens on exits
//! 7): statuses up / down in each row's comment.

use probegate::policy::Action;

mod common;
use common::flow::*;

/// The scripts (run by `sh -c` and `bash -c`) that are denied, each described.
fn denied(scripts: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for shell in ["sh", "bash"] {
        for script in scripts {
            let got = finding_of(&[shell, "-c", script]);
            if got.as_ref().is_some_and(|g| g.0 == Action::Deny) {
                out.push(format!("{shell} {script:?}: {got:?}"));
            }
        }
    }
    out
}

/// `$SCHEME://127.0.0.1:8080/` with `SCHEME` set to `http` or `https` in a branch reaches the
/// loopback address whatever the branch: the scheme is no host (denied at c1ae9f2 as "reaches
/// $SCHEME://127.0.0.1:8080/healthz (one of https, http ...)": the two scheme names were read
/// as remote host names). Real scripts: strimzi's cruise_control_healthcheck.sh, a `PROTO=https;
/// if [ -z $TLS_KEY ]; then PROTO=http; fi; curl -k -s $PROTO://127.0.0.1:8009/api/healthz`.
#[test]
fn a_url_scheme_set_in_a_branch_is_not_a_host() {
    let local = [
        // 0 / 7 (the container's own server down) in bash and dash.
        "if [ -f /etc/tls/tls.crt ]; then S=https; else S=http; fi; curl -fsk \"$S://127.0.0.1:8080/healthz\"",
        "SCHEME=http; if [ -n \"$TLS\" ]; then SCHEME=https; fi; curl -fsk \"$SCHEME://127.0.0.1:8080/healthz\"",
        "if [ \"$TLS\" = true ]; then SCHEME=https; else SCHEME=http; fi; curl -f \"${SCHEME}://127.0.0.1:9090/state\"",
        "S=http; if [ -n \"$TLS\" ]; then S=https; fi; URL=\"$S://localhost:8080/health\"; curl -fs \"$URL\"",
        "SCHEME=http; [ -f /x ] && SCHEME=https; wget -q --spider $SCHEME://127.0.0.1:8080/",
        // 0 / 1.
        "if [ -n \"$TLS\" ]; then S=rediss; else S=redis; fi; redis-cli -u \"$S://localhost:6379\" ping",
        "if [ -f /certs/ca.crt ]; then S=https; else S=http; fi; etcdctl --endpoints=$S://127.0.0.1:2379 endpoint health",
    ];
    assert_eq!(denied(&local), Vec::<String>::new());
    for shell in ["sh", "bash"] {
        for script in local {
            if let Some((_, message)) = finding_of(&[shell, "-c", script]) {
                assert!(!message.contains("one of https") && !message.contains("one of http,"), "{message}");
            }
        }
    }
    // The same with a remote host: every alternative reaches redis-master or orders-db (0 / 7,
    // 0 / 1), and the message names the host, not the scheme's values.
    let remote = [
        "if [ -f /etc/tls/tls.crt ]; then S=https; else S=http; fi; curl -fsk \"$S://orders-db:8080/healthz\"",
        "if [ -n \"$TLS\" ]; then S=rediss; else S=redis; fi; redis-cli -u \"$S://redis-master:6379\" ping",
    ];
    let wrong = wrong_actions(&remote, Action::Deny);
    assert!(wrong.is_empty(), "{wrong:#?}");
    for script in remote {
        let (_, message) = finding_of(&["sh", "-c", script]).unwrap();
        assert!(!message.contains("one of https") && !message.contains("one of rediss"), "{message}");
    }
}

/// An unknown program given a URL whose scheme is a variable, or a URL after a non-ASCII
/// character, is judged without a panic (c1ae9f2 panicked slicing inside the character:
/// `start byte index 1 is not a char boundary`) and warned about with its host, as any URL an
/// unknown program is given.
#[test]
fn a_url_after_a_variable_or_a_non_ascii_character_is_read_without_a_panic() {
    for script in [
        "/app/healthcheck --db $S://orders-db:5432/x",
        "/app/healthcheck --db é://orders-db:5432/x",
        "/app/healthcheck --db ${SCHEME}s://orders-db:5432/x",
        "/app/healthcheck --db ü$S://orders-db:5432/x",
    ] {
        for shell in ["sh", "bash"] {
            let got = finding_of(&[shell, "-c", script]);
            assert!(got.as_ref().is_none_or(|g| g.0 != Action::Deny), "{shell} {script}: {got:?}");
        }
    }
    let (action, message) = finding_of(&["sh", "-c", "/app/healthcheck --db $S://orders-db:5432/x"]).unwrap();
    assert_eq!(action, Action::Warn, "{message}");
    assert!(message.contains("orders-db:5432"), "{message}");
}

/// A check whose failure makes the script exit 0 before its output is read cannot fail the probe
/// by an outage (0 / 0 each, with `redis-cli` printing `role:master` up; denied at c1ae9f2 because
/// the substitution's output is read later). Real shape: rook's MDS liveness script (`ceph`).
/// Still denied where the outage's branch fails (`exit 1`, 0 / 1) or goes on to read the empty
/// output (0 / 1). `if ! out=$(check); then exit 0; fi; echo "$out" | grep -q role:` (0 / 0, no
/// `$?`) was left denied here; s25 replays it (tests/shell_flow_v12.rs).
#[test]
fn a_fail_open_check_whose_output_is_read_only_while_up_is_not_denied() {
    let fail_open = [
        "out=$(redis-cli -h redis-master info replication); rc=$?; if [ $rc -ne 0 ]; then echo cannot; exit 0; fi; echo \"$out\" | grep -q role:",
        "out=$(redis-cli -h redis-master info replication); rc=$?; if [ $rc -ne 0 ]; then exit 0; fi; test -f /tmp/healthy",
        "out=$(redis-cli -h redis-master info replication); if [ $? -ne 0 ]; then exit 0; fi; [ -n \"$out\" ]",
    ];
    assert_eq!(denied(&fail_open), Vec::<String>::new());
    let coupled = [
        "out=$(redis-cli -h redis-master info replication); rc=$?; if [ $rc -ne 0 ]; then exit 1; fi; echo \"$out\" | grep -q role:",
        "out=$(redis-cli -h redis-master info replication); rc=$?; if [ $rc -ne 0 ]; then echo down; fi; echo \"$out\" | grep -q role:",
        "out=$(redis-cli -h redis-master info replication); rc=$?; if [ $rc -eq 0 ]; then exit 0; fi; echo \"$out\" | grep -q role:",
    ];
    let wrong = wrong_actions(&coupled, Action::Deny);
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// A client named by a variable set in a branch is shown as written, never as the marker
/// character the analysis uses for it (c1ae9f2 showed "(database, via \u{f001f})": percona's
/// liveness-check.sh shape). bash 1 / 1 with a stub `mysql` printing nothing: a warning.
#[test]
fn a_client_named_by_a_variable_is_shown_without_a_private_use_character() {
    let scripts = [
        "if [[ -r /etc/my.cnf ]]; then C=\"timeout 4 mysql --defaults-extra-file=/etc/my.cnf -nNE -h127.0.0.1\"; else C=\"timeout 4 mysql -nNE -h127.0.0.1\"; fi; S=$($C -e \"SHOW GLOBAL STATUS LIKE 'wsrep_cluster_status';\" | sed -n 3p); [[ $S == Primary ]]",
        "if [ -n \"$P\" ]; then C=\"redis-cli -h redis-master -a $P\"; else C=\"redis-cli -h redis-master\"; fi; $C ping",
    ];
    let private_use =
        |c: char| (0xF_0000..=0x10_FFFF).contains(&(c as u32)) || (0xE000..=0xF8FF).contains(&(c as u32));
    for script in scripts {
        let evaluation = eval_liveness(&["bash", "-c", script]);
        assert!(!evaluation.evaluation.findings.is_empty(), "{script}");
        for f in &evaluation.evaluation.findings {
            let message = f.describe();
            assert!(!message.chars().any(private_use), "{script}: {message:?}");
        }
    }
}

/// `$KUBERNETES_SERVICE_HOST` is the API server's Service address in every container (the kubelet
/// sets it whatever `enableServiceLinks` says; Kubernetes docs, "Accessing the Kubernetes API from
/// a Pod"): a liveness probe that fails when a request to it fails is coupled to the API server
/// (0 / 7 in bash and dash with curl to an address that refuses), as `kubectl get` and
/// `https://kubernetes.default.svc` already were (a warning "not in the container's env" at
/// c1ae9f2; sapcc's mariadb-galera liveness.sh). A script that sets it itself is read as set.
#[test]
fn the_api_server_s_service_address_is_another_host() {
    for shell in ["sh", "bash"] {
        for script in [
            "if ! curl -sf --cacert /var/run/secrets/kubernetes.io/serviceaccount/ca.crt https://${KUBERNETES_SERVICE_HOST}:${KUBERNETES_PORT_443_TCP_PORT}/api/v1/namespaces/db/configmaps/galera; then exit 1; fi",
            "curl -sfk \"https://$KUBERNETES_PORT_443_TCP_ADDR/healthz\"",
        ] {
            let (action, message) = finding_of(&[shell, "-c", script]).unwrap();
            assert_eq!(action, Action::Deny, "{shell} {script}: {message}");
            assert!(message.contains("KUBERNETES_"), "{message}");
        }
        let own =
            "KUBERNETES_SERVICE_HOST=127.0.0.1; curl -sfk https://$KUBERNETES_SERVICE_HOST:8443/healthz";
        let got = finding_of(&[shell, "-c", own]);
        assert!(got.as_ref().is_none_or(|g| g.0 != Action::Deny), "{shell} {own}: {got:?}");
    }
}

/// s24's new user: a local guard that may `exit 1`, then the check whose failure only writes a
/// file or a variable nothing reads, then `exit 0` (or a local check). Each exits 0 / 0 in bash
/// and dash with the database down, and was denied at c1ae9f2: `tmp` of `/tmp/healthy` was taken
/// as naming the directory of `/tmp/db-down`; a variable assigned twice was taken as read; state
/// left by the outage's `if` branch was judged with `exit 0` after it as if a reader ran there.
/// A `date` that only prints (no `-s`, `-d`, `-f`) is read as `echo` is.
#[test]
fn state_the_outage_leaves_that_nothing_reads_is_not_a_denial() {
    let not_denied = [
        "test -f /tmp/healthy || exit 1; pg_isready -h orders-db || echo \"$(date) down\" >> /tmp/db-down; exit 0",
        "test -f /tmp/healthy || exit 1; pg_isready -h orders-db || date >> /tmp/db-down; exit 0",
        "test -f /tmp/healthy || exit 1; pg_isready -h orders-db || date -u +%s >> /tmp/db-down; exit 0",
        "test -f /tmp/healthy || exit 1; pg_isready -h orders-db > /tmp/pg.out 2>&1; exit 0",
        "test -f /tmp/healthy || exit 1; state=down; pg_isready -h orders-db && state=up; exit 0",
        "pg_isready -h orders-db -t 1 >/dev/null 2>&1 && echo db-ok > /tmp/s; test -f /tmp/healthy",
        "test -f /tmp/healthy || exit 1\nif ! pg_isready -q -h orders-db -t 1; then echo \"warn: database not ready\" >> /tmp/probe.log; fi\nexit 0",
    ];
    assert_eq!(denied(&not_denied), Vec::<String>::new());
    // Where the state is read, the outcome flows on (0 / 1 in both shells on a first run).
    let coupled = [
        "test -f /tmp/healthy || exit 1; pg_isready -h orders-db || touch /tmp/db-down; [ -f /tmp/db-down ] && exit 1; exit 0",
        "test -f /tmp/healthy || exit 1; state=down; pg_isready -h orders-db && state=up; [ $state = up ]",
        "test -f /tmp/healthy || exit 1; pg_isready -h orders-db || date >> /tmp/db-down; [ -s /tmp/db-down ] && exit 1; exit 0",
        "test -f /tmp/healthy || exit 1; pg_isready -h orders-db || touch /tmp/db-down; if ls /tmp/ | grep -q db-down; then exit 1; fi; exit 0",
    ];
    let wrong = wrong_actions(&coupled, Action::Deny);
    assert!(wrong.is_empty(), "{wrong:#?}");
}
