//! Session 23 (s23-words): values the shell picks among at run time, found on public probe
//! scripts. Every row was run in bash 5.2.15 and dash 0.5.12 with stub clients (a client aimed at
//! this Pod, `hostname -i`'s address or the loopback, always answers; `redis-cli` exits 0 with its
//! server up, 1 down; `pg_isready` 0 and 2; `curl` 0 and 7, and on `_cat/health` prints `green` up
//! and `yellow` down).

use probegate::policy::Action;

mod common;
use common::flow::*;

/// The liveness-dependency finding of `script` run by `shell -c`, as (action, message).
fn finding(shell: &str, script: &str) -> Option<(Action, String)> {
    finding_of(&[shell, "-c", script])
}

/// `$(hostname -i || echo '127.0.0.1')` (docker-library/healthcheck's cassandra, mongo, mysql,
/// postgres, redis and sonarqube scripts, and public copies): each alternative is this Pod, as
/// `$(hostname -i)` alone is: no finding (0 / 0 in both shells: the target is this Pod). Warned on
/// main 2c3f567 as "known only at run time". An alternative that may be another host keeps the
/// warning, and so does `&&` (both outputs joined in one value).
#[test]
fn a_substitution_whose_every_output_is_this_pod_is_this_pod() {
    let quiet = [
        "host=\"$(hostname -i || echo '127.0.0.1')\"; redis-cli -h \"$host\" ping",
        "host=\"$(hostname --ip-address || echo '127.0.0.1')\"; pg_isready -h \"$host\"",
        "host=\"$(hostname -i || echo localhost)\"; redis-cli -h \"$host\" ping",
        "host=$(hostname -i 2>/dev/null || hostname -I); redis-cli -h \"$host\" ping",
        "host=$(hostname -I | awk '{print $1}' || printf '%s' ::1); redis-cli -h \"$host\" ping",
        "redis-cli -h \"$(hostname -i || echo 127.0.0.1)\" ping",
        "curl -fsS \"http://$(hostname -i || echo 127.0.0.1):8080/healthz\"",
    ];
    for shell in ["sh", "bash"] {
        for script in quiet {
            assert_eq!(finding(shell, script), None, "{shell} {script}");
        }
    }
    let warned = [
        "host=\"$(hostname -i || echo redis-master)\"; redis-cli -h \"$host\" ping",
        "host=\"$(hostname -i || echo $REDIS_HOST)\"; redis-cli -h \"$host\" ping",
        "host=\"$(hostname -i && echo 127.0.0.1)\"; redis-cli -h \"$host\" ping",
        "host=\"$(hostname -i; echo redis-master)\"; redis-cli -h \"$host\" ping",
    ];
    for shell in ["sh", "bash"] {
        for script in warned {
            let got = finding(shell, script);
            assert!(got.as_ref().is_some_and(|g| g.0 == Action::Warn), "{shell} {script}: {got:?}");
        }
    }
}

/// docker-library/healthcheck's elasticsearch script requires `_cat/health` green through
/// `$(hostname --ip-address || echo '127.0.0.1')`: the whole cluster, denied as with `$(hostname
/// -i)` or `localhost` (bash 0 / 1: green up, yellow down). A warning on main 2c3f567.
#[test]
fn cluster_health_through_the_pods_own_address_or_loopback_is_denied() {
    let denied = [
        "host=\"$(hostname --ip-address || echo '127.0.0.1')\"; if health=\"$(curl -fsSL \"http://$host:9200/_cat/health?h=status\")\"; then [ \"$health\" = green ] && exit 0; fi; exit 1",
        "host=\"$(hostname -i || echo 127.0.0.1)\"; health=\"$(curl -fsSL \"http://$host:9200/_cat/health?h=status\")\"; [ \"$health\" = green ]",
    ];
    for shell in ["sh", "bash"] {
        for script in denied {
            let got = finding(shell, script);
            assert!(
                got.as_ref().is_some_and(|g| g.0 == Action::Deny && g.1.contains("Elasticsearch")),
                "{shell} {script}: {got:?}"
            );
        }
    }
}

/// A variable assigned in a branch that may not run (`if`, `&&`) holds, after it, the value
/// before or the one the branch left: "one of these". Every alternative certainly another host:
/// denied (0 / 2 in both shells, condition true or false); one that may be local or is unknown
/// (unset before the `if`, where `DB_HOST` may come from a Secret): a warning naming the
/// alternatives (0 / 0 with the condition false, 0 / 2 with it true). Every alternative local:
/// nothing (0 / 0). After `if ...; else ...; fi` the value is one of the two branches' (the
/// `case` row: 0 / 2 whatever the mode, but a warning: its items are not taken as exhaustive).
/// Nothing at all on main 2c3f567: the branch's variable was dropped.
#[test]
fn a_variable_set_in_a_branch_is_one_of_its_values() {
    let c = "[ -f /etc/tls/ca.crt ]";
    let denied = [
        format!(
            "DB_HOST=orders-db.data.svc; if {c}; then DB_HOST=orders-db2.data.svc; fi; pg_isready -h $DB_HOST"
        ),
        format!("H=orders-db; {c} && H=orders-db-tls; pg_isready -h \"$H\""),
        format!("H=orders-db; if {c}; then H=\"$H.shop.svc\"; fi; pg_isready -h \"$H\""),
        // An `else`: exactly one branch runs, the value before is not one of them.
        format!("if {c}; then H=orders-db-tls; else H=orders-db; fi; pg_isready -h \"$H\""),
        format!("if ! {c}; then H=orders-db; else H=orders-db-tls; fi; pg_isready -h \"$H\""),
    ];
    let warned = [
        format!("H=localhost; if {c}; then H=orders-db; fi; pg_isready -h \"$H\""),
        format!("if {c}; then H=orders-db; fi; pg_isready -h \"$H\""),
        format!("if {c}; then H=localhost; else H=orders-db; fi; pg_isready -h \"$H\""),
        // (A `case` is not taken as exhaustive: the value before stays one of them.)
        "case \"$(cat /etc/mode)\" in tls) H=orders-db-tls;; *) H=orders-db;; esac; pg_isready -h \"$H\""
            .to_string(),
    ];
    let denied: Vec<&str> = denied.iter().map(String::as_str).collect();
    let warned: Vec<&str> = warned.iter().map(String::as_str).collect();
    expect_actions(&warned, &denied);
    let got = finding("sh", warned[0]);
    assert!(got.as_ref().is_some_and(|g| g.1.contains("one of localhost, orders-db")), "{got:?}");
    let unknown = format!("if {c}; then DB_HOST=localhost; fi; pg_isready -h \"$DB_HOST\"");
    for shell in ["sh", "bash"] {
        let got = finding(shell, &unknown);
        assert!(got.as_ref().is_some_and(|g| g.0 == Action::Warn), "{shell} {unknown}: {got:?}");
        let quiet = format!("H=localhost; if {c}; then H=127.0.0.1; fi; pg_isready -h \"$H\"");
        assert_eq!(finding(shell, &quiet), None, "{shell} {quiet}");
    }
}
