//! Session 23 (s23-off): the misses of the deny22 pass. Every shell row was run in bash 5.2.15 and
//! dash 0.5.12 (`/tmp/deny22/run.sh`: stub clients, a client aimed at localhost always answers):
//! - an array filled by `read -a` from a known here-string was dropped, so the public squid
//!   liveness script (`IFS=', '; read -r -a repos <<< "$LIVELINESS_REPOS"; for i in
//!   "${repos[@]}"; do curl ... "$i" || exit 1; done`, bash 0 / 1; dash refuses `<<<`: 2 / 2)
//!   got no finding;
//! - an `if` inside another `if` or a loop ended the outer region early, so what the outer body
//!   assigned became a script variable "not known" (no warning: `for h in $(cat /x); do
//!   h=$(...); if psql -h "$h" ...; then ...; fi; done`), and an `exit` after the inner `if`
//!   looked certain (`if [ -f /x ]; then if [ -f /z ]; then :; fi; exit 0; fi; redis-cli -h
//!   redis-master ping` got no finding, bash and dash 0 / 1 without /x);
//! - a loop over words known only at run time left its variable "not known": a warning now;
//! - a program no client row knows, given a `postgres://` URL: a warning naming its host;
//! - `gitlab-runner verify` reaches the GitLab server: a warning (it exits 0 while GitLab is
//!   unreachable: network/gitlab.go `VerifyRunner`);
//! - a liveness script whose EXIT trap runs a client is not copied into the added startupProbe.

use probegate::admission::{self, ObjectEvaluation};
use probegate::engine::NoConfigMaps;
use probegate::policy::{Action, Policy, RuleId};

mod common;

/// The evaluation of a Pod whose container runs `argv` as its liveness probe, with `env`
/// (literal values), and a startupProbe unless `startup` is false.
fn eval(argv: &[&str], env: &[(&str, &str)], startup: bool) -> ObjectEvaluation {
    let env: Vec<serde_json::Value> =
        env.iter().map(|(n, v)| serde_json::json!({"name": n, "value": v})).collect();
    let mut container = serde_json::json!({"name": "c", "image": "x", "env": env,
        "livenessProbe": {"exec": {"command": argv}, "timeoutSeconds": 5}});
    if startup {
        container["startupProbe"] = serde_json::json!({"tcpSocket": {"port": 8080}});
    }
    let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop"},
        "spec": {"containers": [container]}});
    admission::evaluate_object_with_configmaps(
        &Policy::default(),
        &common::workload(&pod),
        "shop",
        None,
        &NoConfigMaps,
    )
}

/// The `rule` finding of `argv` (action and message), if any.
fn finding(rule: RuleId, argv: &[&str], env: &[(&str, &str)], startup: bool) -> Option<(Action, String)> {
    eval(argv, env, startup)
        .evaluation
        .findings
        .iter()
        .find(|f| f.rule == rule)
        .map(|f| (f.action, f.describe()))
}

fn liveness(shell: &str, script: &str, env: &[(&str, &str)]) -> Option<(Action, String)> {
    finding(RuleId::LivenessDependency, &[shell, "-c", script], env, true)
}

const REPOS: (&str, &str) = ("LIVELINESS_REPOS", "https://pypi.org/simple/, https://registry.npmjs.org/");
const NODES: (&str, &str) = ("NODES", "localhost|db.prod.svc");

/// Rows of (shell, script, expected action, text the message must hold), judged with `env`.
#[track_caller]
fn expect(rows: &[(&str, &str, Option<Action>, &str)], env: &[(&str, &str)]) {
    let mut wrong = Vec::new();
    for (shell, script, action, holds) in rows {
        let got = liveness(shell, script, env);
        let ok = match (action, &got) {
            (None, None) => true,
            (Some(a), Some((b, m))) => a == b && m.contains(holds),
            _ => false,
        };
        if !ok {
            wrong.push(format!("{shell} {script:?}: expected {action:?} with {holds:?}, got {got:?}"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// `read -a NAME` of a known line fills the array as bash splits it on IFS (bash only: dash has
/// no `-a`, and no `<<<`). The squid script: bash 0 / 1, denied on its first repository.
#[test]
fn an_array_read_from_a_known_line_is_followed() {
    use Action::{Deny, Warn};
    let squid = "IFS=', '; read -r -a repos <<< \"$LIVELINESS_REPOS\"; for i in \"${repos[@]}\"; do \
                 curl -sf -x http://127.0.0.1:3128 \"$i\" || exit 1; done";
    let rows: &[(&str, &str, Option<Action>, &str)] = &[
        ("bash", squid, Some(Deny), "reaches https://pypi.org/simple/ "),
        // Default IFS: the first field keeps its comma (bash: `[https://pypi.org/simple/,]`).
        (
            "bash",
            "read -r -a repos <<< \"$LIVELINESS_REPOS\"; curl -f \"${repos[1]}\"",
            Some(Deny),
            "registry.npmjs.org",
        ),
        (
            "bash",
            "IFS=', ' read -ra r <<< \"$LIVELINESS_REPOS\"; curl -f \"${r[1]}\"",
            Some(Deny),
            "registry.npmjs.org",
        ),
        ("bash", "read -ar r <<< \"$LIVELINESS_REPOS\"; curl -f \"${r[0]}\"", Some(Deny), "pypi.org"),
        // `sh` may be dash, which has no `read -a`: known only at run time, a warning.
        ("sh", squid, Some(Warn), "known only at run time"),
    ];
    expect(rows, &[REPOS]);
    let rows: &[(&str, &str, Option<Action>, &str)] = &[
        (
            "bash",
            "IFS='|' read -ra n <<< \"$NODES\"; redis-cli -h \"${n[1]}\" ping",
            Some(Deny),
            "db.prod.svc",
        ),
        // Element 0 is localhost (bash 0 / 0).
        ("bash", "IFS='|' read -ra n <<< \"$NODES\"; redis-cli -h \"${n[0]}\" ping", None, ""),
        // Names: the last one gets the rest (bash and dash alike).
        ("bash", "IFS='|' read a b <<< \"$NODES\"; redis-cli -h \"$b\" ping", Some(Deny), "db.prod.svc"),
        ("bash", "IFS='|' read a b <<< \"$NODES\"; redis-cli -h \"$a\" ping", None, ""),
        // Input known only at run time, another delimiter, another file descriptor: a warning.
        (
            "bash",
            "read -ra n <<< \"$(cat /etc/x)\"; psql -h \"${n[1]}\" -c 'select 1'",
            Some(Warn),
            "${n[1]}",
        ),
        ("bash", "read -d '' -ra n <<< \"$NODES\"; redis-cli -h \"${n[0]}\" ping", Some(Warn), "known only"),
        ("bash", "read -u 3 -ra n <<< localhost; redis-cli -h \"${n[0]}\" ping", Some(Warn), "known only"),
        (
            "bash",
            "read -ra n <<< \"$(cat /x)\"; for i in \"${n[@]}\"; do curl -sf \"$i\" || exit 1; done",
            Some(Warn),
            "$i",
        ),
    ];
    expect(rows, &[NODES]);
}

/// An `if` nested in an `if` or a loop keeps the outer region open: what the outer body assigned
/// stays known, and an `exit` after the inner `if` is no more certain than the outer `if`
/// (both measured 0 / 1 without /x, in bash and dash).
#[test]
fn a_nested_if_keeps_its_outer_region() {
    use Action::{Deny, Warn};
    let rows: &[(&str, &str, Option<Action>, &str)] = &[
        (
            "sh",
            "if [ -f /x ]; then if [ -f /z ]; then :; fi; exit 0; fi; redis-cli -h redis-master ping",
            Some(Deny),
            "redis-master",
        ),
        (
            "sh",
            "if [ -f /x ]; then if pg_isready; then :; fi; exit 0; fi; redis-cli -h redis-master ping",
            Some(Deny),
            "redis-master",
        ),
        // deny22 v/Q1 and v/Q2: the host is command output, the `if` cannot fail the probe.
        (
            "bash",
            "for node in $(cat /x); do h=$(echo ${node} | cut -d\"|\" -f2); if psql -h \"$h\" -c \"SELECT 1\" >/dev/null; then echo attach; fi; done",
            Some(Warn),
            "(command output)",
        ),
        (
            "bash",
            "for node in $(cat /x); do h=$(echo ${node} | cut -d\"|\" -f2); if psql -h \"$h\" -c \"SELECT 1\" >/dev/null; then pcp_attach_node -n 1; fi; done",
            Some(Warn),
            "(command output)",
        ),
        (
            "sh",
            "if [ -f /x ]; then h=$(cat /y); if [ -f /z ]; then psql -h \"$h\" -c 'select 1'; fi; fi",
            Some(Warn),
            "$(cat /y)",
        ),
        // Still nothing where the outer `if` ends the script first.
        (
            "sh",
            "if true; then if [ -f /z ]; then :; fi; exit 0; fi; redis-cli -h redis-master ping",
            None,
            "",
        ),
    ];
    expect(rows, &[]);
}

/// A loop over words known only at run time: its variable may be a host (a warning); over a
/// script variable nothing follows, it stays unknown (a note).
#[test]
fn a_loop_over_run_time_words_warns() {
    let rows: &[(&str, &str, Option<Action>, &str)] = &[
        ("sh", "for i in $HOSTS; do redis-cli -h \"$i\" ping; done", Some(Action::Warn), "$i"),
        ("sh", "X=$(f); for i in $X; do redis-cli -h \"$i\" ping; done", Some(Action::Warn), "$i"),
        ("sh", "for i in \"$HOSTNAME\"; do redis-cli -h \"$i\" ping; done", None, ""),
        ("sh", "for i in localhost 127.0.0.1; do redis-cli -h \"$i\" ping; done", None, ""),
    ];
    expect(rows, &[]);
}

/// A program no client row knows, given a URL with a host: a warning naming the host and port,
/// never the password, never a denial. Text tools, local URLs, `file://` and an argv word that is
/// a whole command line (no program has that name) give none.
#[test]
fn a_url_given_to_an_unknown_program_is_a_warning() {
    let warned = [
        &["/app/healthcheck", "--db", "postgres://user:Pw0rdS3cret@db.prod.svc:5432/x"][..],
        &["/app/healthcheck", "--db=postgres://user:Pw0rdS3cret@db.prod.svc:5432/x"],
        &["sh", "-c", "exec /app/healthcheck --redis redis://:Pw0rdS3cret@cache.prod:6379/0"],
    ];
    for argv in warned {
        let got = finding(RuleId::LivenessDependency, argv, &[], true);
        let Some((action, message)) = &got else { panic!("{argv:?}: no finding") };
        assert_eq!(*action, Action::Warn, "{argv:?}: {message}");
        assert!(message.contains(".prod.svc:5432") || message.contains("cache.prod:6379"), "{message}");
        assert!(message.contains("unknown program"), "{message}");
        assert!(!message.contains("Pw0rdS3cret"), "{message}");
    }
    let quiet = [
        &["/app/healthcheck", "--url", "http://localhost:8080/health"][..],
        &["sh", "-c", "echo http://db.prod.svc:8080/health"],
        &["sh", "-c", "grep -q http://db.prod.svc:8080/ /etc/app.conf"],
        &["/app/healthcheck", "file:///var/run/app.sock"],
        &["T=1; curl -sf http://db.prod.svc/", "x"],
        // A client row's program is judged by its row alone; a PowerShell cmdlet is no program.
        &["curl", "--unix-socket", "/run/app.sock", "http://db.prod.svc/health"],
        &["pwsh", "-c", "Write-Host http://db.prod.svc/health"],
    ];
    for argv in quiet {
        let got = finding(RuleId::LivenessDependency, argv, &[], true);
        assert!(got.is_none(), "{argv:?}: {got:?}");
    }
}

/// `gitlab-runner verify` reaches the GitLab server (GitLab Runner docs, "GitLab Runner
/// commands"), and exits 0 while it is unreachable: a warning whatever the arguments, none for a
/// GitLab on this Pod or another subcommand.
#[test]
fn gitlab_runner_verify_is_a_warning() {
    for script in
        ["gitlab-runner verify", "gitlab-runner verify --url=", "gitlab-runner verify -n r1 || exit 1"]
    {
        let got = liveness("sh", script, &[]);
        assert!(
            got.as_ref().is_some_and(|g| g.0 == Action::Warn && g.1.contains("GitLab server of config.toml")),
            "{script}: {got:?}"
        );
    }
    let got = liveness("sh", "gitlab-runner verify --url https://gitlab.example.com", &[]);
    assert!(
        got.as_ref().is_some_and(|g| g.0 == Action::Warn && g.1.contains("gitlab.example.com")),
        "{got:?}"
    );
    for script in ["gitlab-runner verify --url http://localhost:8080", "gitlab-runner list"] {
        assert_eq!(liveness("sh", script, &[]), None, "{script}");
    }
}

/// A liveness script whose EXIT trap runs a client (0 / 0 in bash and dash with the dependency
/// down, but a hang in the trap still times the probe out) is not copied into the startupProbe:
/// a copy would hold every start on that dependency. A trap on another signal (it never runs in
/// a probe that ends by itself) is copied.
#[test]
fn a_trap_that_runs_a_client_is_not_copied_into_the_startup_probe() {
    let trapped = ["sh", "-c", "trap 'redis-cli -h redis-master ping' EXIT; curl -sf localhost:8080/"];
    let got = finding(RuleId::StartupProbe, &trapped, &[], false);
    assert!(got.as_ref().is_some_and(|g| g.0 == Action::Warn && g.1.contains("not added")), "{got:?}");
    let other = ["sh", "-c", "trap 'redis-cli -h redis-master ping' TERM; curl -sf localhost:8080/"];
    let got = finding(RuleId::StartupProbe, &other, &[], false);
    assert!(got.as_ref().is_some_and(|g| g.0 == Action::Mutate && g.1.contains("added one")), "{got:?}");
}
