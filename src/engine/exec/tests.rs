//! Unit tests of the exec analysis stages.

use super::*;
use DependencyCategory as C;

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

fn env(vars: &[(&str, EnvValue)]) -> ExecEnv {
    ExecEnv {
        vars: vars.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
        has_env_from: false,
        ..Default::default()
    }
}

fn lit(v: &str) -> EnvValue {
    EnvValue::Literal(v.to_string())
}

fn no_env() -> ExecEnv {
    ExecEnv::default()
}

#[track_caller]
fn fires_in(argv: &[&str], e: &ExecEnv) -> Dependency {
    match find_dependency(&s(argv), e) {
        Some(d) => d,
        None => panic!("expected a dependency for {argv:?}"),
    }
}

#[track_caller]
fn fires(argv: &[&str]) -> Dependency {
    fires_in(argv, &no_env())
}

#[track_caller]
fn quiet_in(argv: &[&str], e: &ExecEnv) {
    if let Some(d) = find_dependency(&s(argv), e) {
        panic!("expected no dependency for {argv:?}, got {d:?}");
    }
}

#[track_caller]
fn quiet(argv: &[&str]) {
    quiet_in(argv, &no_env());
}

#[test]
fn the_object_budget_is_shared_by_its_commands_and_each_command_past_it_noted() {
    let budget = AnalysisBudget::new(16 * 1024);
    let options = Options { budget: Some(&budget), ..Options::default() };
    let script = format!("true {}; pg_isready -h orders-db", "x".repeat(3000));
    let argv = s(&["sh", "-c", &script]);
    // The first command fits (~9 KB: the script expanded, analysed, its words expanded): found.
    let first = analyze(&argv, &no_env(), &options);
    assert_eq!(first.dependency.map(|d| d.target), Some("orders-db".to_string()));
    assert!(first.unresolved.is_empty());
    // The second is over: nothing found, and a note that says why.
    let second = analyze(&argv, &no_env(), &options);
    assert_eq!(second.dependency, None);
    assert_eq!(second.unresolved.len(), 1, "{:?}", second.unresolved);
    assert!(second.unresolved[0].reason.contains("one object's exec probes"), "{:?}", second.unresolved);
    // Later ones: not analysed, and each noted (its container is named in the warning: a
    // coupled probe after the budget is never admitted in silence).
    let third = analyze(&argv, &no_env(), &options);
    assert_eq!(third.dependency, None);
    assert_eq!(third.unresolved.len(), 1, "{:?}", third.unresolved);
    assert!(third.unresolved[0].over_bound);
    assert!(third.unresolved[0].reason.starts_with("earlier exec probes spent"), "{:?}", third.unresolved);
    assert_eq!(third.unresolved[0].path, second.unresolved[0].path);
    // The limit stopped it, not the command: with a budget of its own it is found again.
    let fresh = AnalysisBudget::new(16 * 1024);
    let options = Options { budget: Some(&fresh), ..Options::default() };
    assert!(analyze(&argv, &no_env(), &options).dependency.is_some());
}

#[test]
fn a_function_call_costs_a_work_unit_for_each_function_known() {
    // `n` functions, `f0` called `calls` times: each call's body is walked with the `n` (#9).
    // (Their bodies assign, so none is harmless to call: the status walk's own lists cost nothing
    // more.) A call also costs its piece and its body's walk (`PIECE_UNITS`, `WALK_UNITS`, s12).
    let spent = |n: usize, calls: usize| {
        let mut script: String = (0..n).map(|i| format!("f{i}() {{ x{i}=1; }}\n")).collect();
        script.push_str(&"f0\n".repeat(calls));
        let budget = AnalysisBudget::default();
        let options = Options { budget: Some(&budget), ..Options::default() };
        assert_eq!(analyze(&s(&["sh", "-c", &script]), &no_env(), &options).dependency, None);
        MAX_OBJECT_WORK_UNITS - budget.units.get()
    };
    let per_call = |n: usize| spent(n, 10) - spent(n, 9);
    // One unit more for each function more.
    assert_eq!(per_call(100) - per_call(50), 50);
    assert!((100 + PIECE_UNITS + WALK_UNITS..300).contains(&per_call(100)), "{} units", per_call(100));
}

#[test]
fn kubelet_references_to_long_values_count_against_the_budgets() {
    // B is long; A refers to it 100 times; the command refers to A 100 times: 10,000 copies
    // of B (200 MB) if nothing counted them.
    let b = "x".repeat(20_000);
    let a = "$(B)".repeat(100);
    let e = env(&[("B", lit(&b)), ("A", lit(&a))]);
    // (s27: through the shell's `$A`, which reads the container's environment, where A's
    // references are resolved; a probe's own `$(A)` gets A's value as written.)
    let command = format!("curl http://db:5432/{}", "$A".repeat(100));
    // One reference to A already copies B 100 times (2 MB): over the 1 MiB a command may expand to.
    let mut ctx = Ctx::new(&e);
    let _ = ctx.kubelet_expand("$(A)", 1);
    assert!(ctx.over_budget.get(), "copied values counted: {} bytes", ctx.expanded.get());
    let budget = AnalysisBudget::default();
    let options = Options { budget: Some(&budget), ..Options::default() };
    let outcome = analyze(&s(&["sh", "-c", &command]), &e, &options);
    assert_eq!(outcome.dependency, None, "text cut short by a bound is never a finding");
    assert_eq!(outcome.unresolved.len(), 1, "{:?}", outcome.unresolved);
    // The display expansion (liveness vs readiness) is bounded the same way.
    let command = format!("curl http://db:5432/{}", "$(A)".repeat(100));
    let shown = expand_kubelet_argv(&s(&["sh", "-c", &command]), &e, None);
    assert!(shown.iter().map(String::len).sum::<usize>() <= MAX_EXPANSION_BYTES + command.len());
    // A value referred to a few times is still followed.
    let e = env(&[("DB", lit("orders-db"))]);
    let d = analyze(&s(&["pg_isready", "-h", "$(DB)"]), &e, &Options::default()).dependency.unwrap();
    assert_eq!(d.target, "orders-db");
}

#[test]
fn env_values_named_like_secrets_never_reach_a_message() {
    let e = env(&[("API_TOKEN", lit("S3cr3tXyz")), ("AUTH_HOST", lit("auth-svc"))]);
    let d = fires_in(&["curl", "http://r/health/$(API_TOKEN)"], &e);
    assert!(!format!("{d:?}").contains("S3cr3tXyz"), "{d:?}");
    assert!(d.target.contains("r/health/***") || d.target == "r", "{d:?}");
    let d = fires_in(&["sh", "-c", "curl -H \"X-Token: $API_TOKEN\" http://$AUTH_HOST/"], &e);
    assert_eq!(d.target, "http://auth-svc/", "a host named AUTH_... is still a host");
    assert!(!format!("{d:?}").contains("S3cr3tXyz"), "{d:?}");
    assert_eq!(expand_kubelet_vars("/bin/check $(API_TOKEN) $(AUTH_HOST)", &e), "/bin/check *** auth-svc");
}

#[test]
fn a_trailing_backslash_inside_a_substitution_is_not_a_panic() {
    // `sh -n` accepts this and it runs pg_isready: the rest of the script is still analysed.
    let d = sh("true || sh -c '$(\\'; pg_isready -h orders-db -p 5432").expect("pg_isready still found");
    assert_eq!(d.target, "orders-db");
    for script in ["$(\\", "x $(\\", "\"$(\\", "$($(\\", "`$(\\`", "${\\", "echo \\"] {
        let _ = sh(script);
        let _ = split_commands(script);
    }
    let e = env(&[("X", lit("$(\\"))]);
    let _ = find_dependency(&s(&["sh", "-c", "$(X)"]), &e);
}

/// The notes say what was left unread, in the user's terms (issue 13): a kubelet `$(NAME)` not
/// declared in env is run by the shell as a command; a cmd line is no shell script.
#[test]
fn notes_name_the_kubelet_reference_and_the_cmd_line() {
    let left = "(HOSTNAME not in env: the kubelet leaves `$(HOSTNAME)` as written, so the shell runs a command named `HOSTNAME`)";
    let d = fires(&["sh", "-c", "curl -sf http://$(HOSTNAME):8080/healthz"]);
    assert!(d.target.ends_with(left), "{}", d.target);
    assert_eq!(d.host_command_name(), Some("HOSTNAME"), "{d:?}");
    // Only when that reference is the one the note explains (s16): an unknown variable first, or
    // command output, is no command named by the kubelet's reference.
    for script in [
        "curl -sf http://$CACHE$(HOSTNAME):8080/",
        "curl -sf http://$(dbhost):8080/",
        "curl -sf http://$(cat /x)$(HOSTNAME):8080/",
    ] {
        let d = fires(&["sh", "-c", script]);
        assert!(!d.host_command && d.host_command_name().is_none(), "{script}: {d:?}");
    }
    let d = fires(&["sh", "-c", "curl -sf http://$(Db_Host):8080/healthz"]);
    assert!(d.target.contains("the kubelet leaves `$(Db_Host)` as written"), "{}", d.target);
    // A command substitution that is no variable name with a capital letter is a command's output.
    for script in ["curl -sf http://$(dbhost):8080/", "curl -sf http://$(cat /etc/DB):8080/"] {
        let d = fires(&["sh", "-c", script]);
        assert!(d.target.ends_with("(command output)"), "{script}: {}", d.target);
    }
    // With envFrom the variable may exist at run time, but a probe's `$(NAME)` is expanded from
    // `env` alone (kubelet prober, `ExpandContainerCommandOnlyStatic`): still left as written, and
    // said so (s13; this said "may exist" before).
    let e = ExecEnv { has_env_from: true, ..no_env() };
    let d = fires_in(&["sh", "-c", "curl -sf http://$(HOSTNAME):8080/"], &e);
    assert!(d.target.contains("envFrom does not count"), "{}", d.target);
    assert!(d.target.contains("the kubelet leaves `$(HOSTNAME)` as written"), "{}", d.target);
    // A parse gap in a cmd line, and one in a shell script.
    let reason = |argv: &[&str]| {
        let out = analyze(&s(argv), &no_env(), &Options::default());
        out.unresolved.iter().map(|u| u.reason.clone()).collect::<Vec<_>>().join("; ")
    };
    let cmd = reason(&["cmd", "/c", "curl -sf \"http://localhost/ & ( if"]);
    assert!(
        cmd.starts_with("its cmd command line has a construct") && !cmd.contains("shell script"),
        "{cmd}"
    );
    let sh = reason(&["sh", "-c", "if then fi ("]);
    assert!(sh.starts_with("its shell script has a syntax error at line 1"), "{sh}");
    // A cmd line read without a gap does not make a later shell script's gap a cmd line's.
    let both = reason(&["sh", "-c", "cmd /c 'echo ok'; sh -c 'if then fi ('"]);
    assert!(both.starts_with("its shell script has a syntax error"), "{both}");
}

#[track_caller]
fn sh(script: &str) -> Option<Dependency> {
    find_dependency(&s(&["sh", "-c", script]), &no_env())
}

fn sh_args(script: &str, rest: &[&str]) -> Option<Dependency> {
    let mut argv = vec!["sh", "-c", script];
    argv.extend(rest);
    find_dependency(&s(&argv), &no_env())
}

// ----------------------------------------------------------------------------------- fire

#[test]
fn pg_isready_remote_host() {
    let d = fires(&["pg_isready", "-h", "orders-db.prod.svc", "-p", "5432"]);
    assert_eq!(d.program, "pg_isready");
    assert_eq!(d.category, C::Database);
    assert_eq!(d.target, "orders-db.prod.svc");
    assert_eq!(d.command, "pg_isready -h orders-db.prod.svc -p 5432");
}

#[test]
fn pg_isready_pghost_env() {
    let e = env(&[("PGHOST", lit("reports-db.data.svc.cluster.local"))]);
    let d = fires_in(&["pg_isready"], &e);
    assert_eq!(d.target, "reports-db.data.svc.cluster.local (PGHOST)");
    assert_eq!(d.category, C::Database);
}

#[test]
fn redis_unresolved_host_in_script() {
    let e = env(&[("REDIS_HOST", EnvValue::Unresolved)]);
    let d = fires_in(&["sh", "-c", "redis-cli -h \"$REDIS_HOST\" ping | grep -q PONG"], &e);
    assert_eq!(d.program, "redis-cli");
    assert_eq!(d.category, C::Cache);
    assert_eq!(d.target, "$REDIS_HOST (not a literal env value)");
    assert_eq!(d.command, "redis-cli -h $REDIS_HOST ping");
}

#[test]
fn command_assignment_overrides_env() {
    let d = sh("PGHOST=db pg_isready").expect("PGHOST=db is remote");
    assert_eq!(d.target, "db (PGHOST)");
    assert_eq!(d.command, "PGHOST=db pg_isready");
    // `env` wrapper assignments too.
    let d = fires(&["env", "PGHOST=db.prod", "pg_isready"]);
    assert_eq!(d.target, "db.prod (PGHOST)");
}

#[test]
fn curl_remote_service() {
    let d = fires(&["curl", "-f", "http://payments.prod.svc/health"]);
    assert_eq!(d.program, "curl");
    assert_eq!(d.category, C::Network);
    assert_eq!(d.target, "http://payments.prod.svc/health");
}

#[test]
fn wget_other_service() {
    let d = fires(&["wget", "-qO-", "http://other-svc:8080/"]);
    assert_eq!(d.program, "wget");
    assert_eq!(d.target, "http://other-svc:8080/");
    fires(&["wget", "-q", "-O-", "http://inventory-api.shop.svc:8080/healthz"]);
}

#[test]
fn netcat_to_db_port() {
    let d = fires(&["nc", "-z", "db", "5432"]);
    assert_eq!(d.category, C::Database);
    assert_eq!(d.target, "db:5432");
    let d = fires(&["nc", "-z", "-w", "2", "rabbitmq.messaging.svc", "5672"]);
    assert_eq!(d.category, C::Queue);
}

#[test]
fn grpc_health_probe_remote() {
    let d = fires(&["grpc_health_probe", "-addr=backend:50051"]);
    assert_eq!(d.target, "backend:50051");
    // A resolver scheme is not part of the host (s16); a dns://SERVER/ target names its server.
    for (addr, target) in [
        ("-addr=dns:///backend:50051", "backend:50051"),
        ("-addr=passthrough:///backend:50051", "backend:50051"),
        ("-addr=dns://10.96.0.10:53/backend:50051", "backend:50051 (DNS server 10.96.0.10:53)"),
        ("-addr=ipv4:10.0.0.1:50051,10.0.0.2:50051", "ipv4:10.0.0.1:50051,10.0.0.2:50051"),
        ("-addr=xds:///backend", "xds:///backend"),
    ] {
        assert_eq!(fires(&["grpc_health_probe", addr]).target, target, "{addr}");
    }
    fires(&["/bin/grpc_health_probe", "-addr", "backend:50051"]);
}

#[test]
fn mysqladmin_remote_forms() {
    let d = fires(&["mysqladmin", "ping", "-h", "mysql-primary"]);
    assert_eq!(d.target, "mysql-primary");
    fires(&["mysqladmin", "ping", "-hmysql-primary"]);
    fires(&["mysqladmin", "ping", "--host=shop-db.rds.example.com", "--port=3306"]);
    fires(&["mysql", "--host", "db", "-e", "SELECT 1"]);
    let e = env(&[("MYSQL_HOST", lit("mysql.data.svc"))]);
    let d = fires_in(&["mysqladmin", "ping"], &e);
    assert_eq!(d.target, "mysql.data.svc (MYSQL_HOST)");
}

#[test]
fn mongosh_srv_always_remote() {
    let d =
        fires(&["mongosh", "mongodb+srv://cluster0.example.net/test", "--eval", "db.runCommand({ping:1})"]);
    assert_eq!(d.program, "mongosh");
    assert_eq!(d.category, C::Database);
    assert!(d.target.starts_with("mongodb+srv://cluster0.example.net"));
    fires(&["mongosh", "mongodb://localhost:27017,mongo-1.mongo:27017/admin"]);
    fires(&["mongo", "--host", "rs0/mongo-0.mongo:27017,mongo-1.mongo:27017"]);
}

#[test]
fn kafka_broker_list_with_one_remote() {
    let d =
        fires(&["kafka-broker-api-versions.sh", "--bootstrap-server", "kafka-0.kafka:9092,localhost:9092"]);
    assert_eq!(d.category, C::Queue);
    assert_eq!(d.target, "kafka-0.kafka:9092,localhost:9092");
    fires(&["kafka-topics", "--bootstrap-server=kafka:9092", "--list"]);
    fires(&["kcat", "-b", "kafka:9092", "-L"]);
    let d = fires(&["kafka-topics.sh", "--zookeeper", "zk:2181", "--list"]);
    assert_eq!(d.category, C::Coordination);
}

#[test]
fn psql_uri_password_redacted() {
    let d = fires(&["psql", "postgresql://app:s3cret@db.internal:5432/app", "-c", "SELECT 1"]);
    assert_eq!(d.category, C::Database);
    assert!(!d.command.contains("s3cret"), "{}", d.command);
    assert!(!d.target.contains("s3cret"), "{}", d.target);
    assert!(d.command.contains("app:***@db.internal"), "{}", d.command);
}

#[test]
fn second_command_in_script_fires() {
    let d = fires(&[
        "bash",
        "-ec",
        "set -o pipefail; curl -sf http://localhost:8080/healthz && redis-cli -h cache ping",
    ]);
    assert_eq!(d.program, "redis-cli");
    assert_eq!(d.target, "cache");
    assert_eq!(d.command, "redis-cli -h cache ping");
}

#[test]
fn command_substitution_is_analysed() {
    let d = sh("echo $(redis-cli -h cache ping)").expect("substitution content analysed");
    assert_eq!(d.program, "redis-cli");
    let d = sh("echo `redis-cli -h cache ping`").expect("backticks analysed");
    assert_eq!(d.program, "redis-cli");
}

#[test]
fn curl_resolve_rewrites_destination() {
    let d = fires(&["curl", "--resolve", "localhost:80:10.1.2.3", "http://localhost/"]);
    assert!(d.target.contains("10.1.2.3"), "{}", d.target);
    fires(&["curl", "--connect-to", "::db.prod:5432", "http://localhost/"]);
}

#[test]
fn curl_proxy_is_remote() {
    let d = fires(&["curl", "-x", "http://proxy:3128", "http://localhost/"]);
    assert!(d.target.contains("proxy"), "{}", d.target);
    fires(&["curl", "--proxy", "http://proxy:3128", "http://localhost/"]);
}

#[test]
fn unresolved_kubelet_reference_in_argv() {
    let e = env(&[("REDIS_MASTER", EnvValue::Unresolved)]);
    let d = fires_in(&["redis-cli", "-h", "$(REDIS_MASTER)", "ping"], &e);
    assert_eq!(d.target, "$(REDIS_MASTER) (not a literal env value)");
    assert_eq!(d.command, "redis-cli -h $(REDIS_MASTER) ping");
    // Undefined: the kubelet leaves the text as written; still not local.
    fires(&["redis-cli", "-h", "$(REDIS_MASTER)", "ping"]);
}

#[test]
fn dns_and_control_plane_always() {
    let d = fires(&["nslookup", "kubernetes.default"]);
    assert_eq!(d.category, C::Dns);
    assert_eq!(d.target, "kubernetes.default");
    let d = fires(&["kubectl", "get", "--raw", "/healthz"]);
    assert_eq!(d.category, C::ControlPlane);
    let d = sh("kubectl get --raw /readyz >/dev/null").expect("kubectl in script");
    assert_eq!(d.category, C::ControlPlane);
    // `--server` names the API server: a remote one is reached, one on this Pod (a `kubectl
    // proxy` sidecar, an API server probing itself) is not.
    let d = fires(&["kubectl", "--server=https://api.prod.example:6443", "get", "--raw", "/readyz"]);
    assert_eq!((d.category, d.target.as_str()), (C::ControlPlane, "https://api.prod.example:6443"));
    assert_eq!(fires(&["kubectl", "-s", "http://10.0.0.1:8001", "get", "ns"]).category, C::ControlPlane);
    quiet(&["kubectl", "--server=http://localhost:8001", "get", "--raw", "/readyz"]);
    quiet(&["kubectl", "get", "--raw", "/healthz", "--server", "https://127.0.0.1:6443"]);
    quiet(&["kubectl", "-s", "http://[::1]:8001", "get", "--raw", "/livez"]);
    assert_eq!(fires(&["dig", "+short", "db.prod.svc"]).target, "db.prod.svc");
    assert_eq!(fires(&["host", "-t", "A", "db"]).category, C::Dns);
    assert_eq!(fires(&["aws", "sts", "get-caller-identity"]).category, C::CloudApi);
    // An endpoint given is classified like any host: localstack or DynamoDB local in this Pod is
    // not the cloud (fresh-user pass); a remote one is reached.
    quiet(&["aws", "--endpoint-url", "http://localhost:9000", "s3", "ls"]);
    quiet(&["aws", "--endpoint-url=http://127.0.0.1:4566", "sqs", "list-queues"]);
    quiet(&["aws", "dynamodb", "list-tables", "--endpoint-url", "http://localhost:8000"]);
    let d = fires(&["aws", "--endpoint-url", "https://s3.prod.example", "s3", "ls"]);
    assert_eq!((d.category, d.target.as_str()), (C::CloudApi, "https://s3.prod.example"));
    // MinIO's mc: the alias's URL from MC_HOST_<alias>; `local` (the default config's
    // http://localhost:9000) or an alias from the config file is not judged.
    quiet(&["mc", "ready", "local"]);
    quiet(&["mc", "admin", "info", "local"]);
    quiet_in(&["mc", "ready", "myminio"], &env(&[("MC_HOST_myminio", lit("http://u:p@localhost:9000"))]));
    let d = fires_in(
        &["mc", "ls", "prod/bucket"],
        &env(&[("MC_HOST_prod", lit("https://u:pw@minio.prod.svc:9000"))]),
    );
    assert_eq!(d.category, C::CloudApi);
    assert!(d.target.contains("minio.prod.svc") && !d.target.contains("pw"), "{}", d.target);
    assert_eq!(fires(&["consul", "catalog", "services"]).category, C::ServiceDiscovery);
    assert_eq!(
        fires(&["consul", "members", "-http-addr=consul-server.consul.svc:8500"]).category,
        C::ServiceDiscovery
    );
    assert_eq!(fires(&["vault", "status", "-address=https://vault.vault.svc:8200"]).category, C::Secrets);
    // A remote resolver is DNS the probe depends on.
    assert_eq!(fires(&["dig", "@10.96.0.10", "db.prod.svc"]).target, "db.prod.svc (@10.96.0.10)");
    assert_eq!(fires(&["nslookup", "db.prod.svc", "10.96.0.10"]).target, "db.prod.svc (server 10.96.0.10)");
}

#[test]
fn clients_whose_target_is_local_are_self_checks() {
    // The local resolver: the name queried is data, not a host reached.
    quiet(&["dig", "@127.0.0.1", "-p", "53", "kubernetes.default.svc.cluster.local"]);
    quiet(&["dig", "@::1", "+short", "example.com"]);
    quiet(&["nslookup", "kubernetes.default.svc.cluster.local", "127.0.0.1"]);
    // Vault's CLI default address is https://127.0.0.1:8200.
    quiet(&["vault", "status"]);
    // The local Consul agent answers `members` and `info` from its own state.
    quiet(&["consul", "members"]);
    quiet(&["consul", "members", "-http-addr=127.0.0.1:8500"]);
    quiet(&["consul", "info"]);
}

#[test]
fn sql_server_ipv6_loopback_is_this_pod() {
    // sqlcmd and Invoke-Sqlcmd: IPv6 loopback, bare, bracketed, with a protocol and a port.
    for server in ["::1", "[::1]", "tcp:[::1],1433", "[::1],1433", "::1,1433", "tcp:::1"] {
        quiet(&["sqlcmd", "-S", server, "-Q", "select 1"]);
        assert!(sh(&format!("sqlcmd -S '{server}' -Q 'select 1'")).is_none(), "{server}");
    }
    assert!(sh("sqlcmd -S ::1 -Q 'select 1'").is_none());
    for server in ["orders-db", "[fd00::5]", "tcp:[fd00::5],1433", "fd00::5", "tcp:orders-db,1433"] {
        assert_eq!(fires(&["sqlcmd", "-S", server, "-Q", "select 1"]).category, C::Database, "{server}");
    }
    let ps = |script: &str| find_dependency(&s(&["pwsh", "-Command", script]), &no_env());
    assert!(ps("Invoke-Sqlcmd -ServerInstance '::1' -Query 'SELECT 1'").is_none());
    assert!(ps("Invoke-Sqlcmd -ServerInstance 'tcp:[::1],1433' -Query 'SELECT 1'").is_none());
    assert!(ps("Invoke-Sqlcmd -ConnectionString \"Server=::1;Database=master\" -Query 'SELECT 1'").is_none());
    assert!(ps("Invoke-Sqlcmd -ServerInstance 'fd00::5' -Query 'SELECT 1'").is_some());
    assert!(
        ps("Invoke-Sqlcmd -ConnectionString \"Server=orders-db;Database=master\" -Query 'SELECT 1'")
            .is_some()
    );
}

#[test]
fn host_asks_its_server_positional() {
    // bind9 `host NAME SERVER` asks SERVER, like `nslookup NAME SERVER`.
    quiet(&["host", "localhost", "127.0.0.1"]);
    quiet(&["host", "-W", "1", "kubernetes.default.svc.cluster.local", "127.0.0.1"]);
    quiet(&["host", "-t", "SRV", "x", "localhost"]);
    quiet(&["host", "-t", "A", "db", "::1"]);
    let d = fires(&["host", "-W", "1", "db.prod.svc", "10.96.0.10"]);
    assert_eq!((d.category, d.target.as_str()), (C::Dns, "db.prod.svc (server 10.96.0.10)"));
    assert_eq!(fires(&["host", "-t", "SRV", "x"]).target, "x", "no server: the cluster resolver");
    assert_eq!(fires(&["host", "localhost"]).category, C::Dns);
}

#[test]
fn ipv6_zone_ids_do_not_hide_loopback() {
    // An IPv6 zone id names an interface; the address decides.
    quiet(&["curl", "-sf", "http://[::1%25lo]:8080/"]);
    quiet(&["curl", "-sf", "http://[::1%lo]:8080/"]);
    assert!(sh("curl -sf http://[::1%25lo]:8080/").is_none());
    fires(&["curl", "-sf", "http://[fe80::1%25eth0]:8080/"]);
    fires(&["curl", "-sf", "http://[fd00::5%25eth0]:8080/"]);
}

#[test]
fn redirections_are_not_arguments() {
    assert!(sh("curl -fsS http://localhost:8080/healthz > /dev/null 2>&1").is_none());
    assert!(sh("curl -fsS http://localhost:8080/healthz >/dev/null").is_none());
    assert!(sh("redis-cli ping 2> /tmp/err | grep -q PONG").is_none());
    assert!(sh("curl -fsS http://db.prod:5432/ > /dev/null").is_some());
}

#[test]
fn positional_parameters_of_inline_scripts() {
    let d = sh_args("pg_isready -h \"$1\"", &["probe", "db.prod.svc"]).expect("$1 is the host");
    assert_eq!(d.target, "db.prod.svc");
    assert!(sh_args("pg_isready -h \"${1:-127.0.0.1}\"", &["probe"]).is_none());
    assert!(sh_args("redis-cli -h \"$1\" ping", &[]).is_some(), "an unset $1 is not provably local");
    let d = sh_args("nc -z $@", &["probe", "cache.prod", "6379"]).expect("$@ carries the host");
    assert_eq!(d.target, "cache.prod:6379");
}

#[test]
fn python_runs_modules_and_scripts() {
    let celery = crate::engine::known::builtin().iter().find(|k| k.name == "celery-inspect").unwrap();
    // A policy's own entry for a MySQL-backed Django project (the built-in list has none: see known.rs).
    let django: crate::engine::known::KnownCommand = serde_json::from_value(serde_json::json!({
        "name": "django-check-database", "programs": ["manage.py"], "args": ["check", "--database"],
        "category": "database", "reaches": "the Django database", "why": "its MySQL checks query the server"
    }))
    .unwrap();
    let django = &django;
    let options =
        Options { known_commands: vec![celery, django], files: None, budget: None, collect_all: false };
    let run = |argv: &[&str]| analyze(&s(argv), &no_env(), &options).dependency;
    assert!(run(&["python3", "-m", "celery", "-A", "app", "inspect", "ping"]).is_some());
    assert!(
        run(&["python3.12", "-W", "ignore", "/app/manage.py", "check", "--database", "default"]).is_some()
    );
    assert!(run(&["python", "-c", "import celery"]).is_none());
    assert!(run(&["python", "manage.py", "check"]).is_none());
}

struct Files(HashMap<&'static str, &'static str>);

impl ScriptFiles for Files {
    fn read(&self, path: &str) -> FileLookup {
        match self.0.get(path) {
            Some(t) => FileLookup::Text { text: t.to_string(), origin: "test".into() },
            None if path.starts_with("/cm/") => FileLookup::Unreadable("not available".into()),
            None => FileLookup::NotOnVolume,
        }
    }
}

#[test]
fn script_files_siblings_and_sourcing() {
    let files = Files(HashMap::from([
        ("/cm/all.sh", "dir=\"$(cd \"$(dirname \"$0\")\" >/dev/null && pwd)\"\n\"$dir/one.sh\" \"$1\"\n"),
        ("/cm/one.sh", "#!/usr/bin/env bash\n. \"${0%/*}/lib.sh\"\nsource /cm/vars.sh\nping_it \"$1\"\n"),
        ("/cm/vars.sh", "TARGET=cache.prod.svc\n"),
        ("/cm/py.sh", "#!/usr/bin/python3\nimport os\n"),
        ("/cm/two.sh", "#!/bin/sh\nexec redis-cli -h \"$TARGET\" ping\n"),
    ]));
    let options = Options { known_commands: vec![], files: Some(&files), budget: None, collect_all: false };
    let run = |argv: &[&str]| analyze(&s(argv), &no_env(), &options);
    // `${0%/*}/lib.sh` is `/cm/lib.sh` (pattern removal evaluated on the known `$0`), which cannot
    // be read: reported, not guessed.
    let out = run(&["sh", "-c", "/cm/all.sh 5"]);
    assert_eq!(out.dependency, None);
    assert_eq!(out.unresolved.len(), 1, "{:?}", out.unresolved);
    assert_eq!(out.unresolved[0].path, "/cm/lib.sh");
    // Sourced variables are the caller's; a script run as a program only sees exported ones.
    let out = run(&["sh", "-c", ". /cm/vars.sh; /cm/two.sh"]);
    let d = out.dependency.expect("an unset host is not provably local");
    assert_eq!(
        d.target, "$TARGET (not in the container's env; no value known here)",
        "TARGET is not exported: unset in two.sh"
    );
    assert_eq!(d.script.as_deref(), Some("/cm/two.sh (test)"));
    let out = run(&["sh", "-c", "set -a; export TARGET=cache.prod.svc; /cm/two.sh"]);
    assert_eq!(out.dependency.expect("exported").target, "cache.prod.svc");
    let out = run(&["bash", "-c", "source /cm/vars.sh && redis-cli -h $TARGET ping"]);
    let d = out.dependency.expect("sourced into the same shell");
    assert_eq!(d.script, None, "found in the inline script, after the sourced file returned");
    // Non-shell scripts are opaque; unreadable ones are reported once.
    assert_eq!(run(&["/cm/py.sh"]).dependency, None);
    let out = run(&["sh", "-c", "/cm/missing.sh; /cm/missing.sh; sh /cm/other.sh"]);
    let paths: Vec<&str> = out.unresolved.iter().map(|u| u.path.as_str()).collect();
    assert_eq!(paths, ["/cm/missing.sh", "/cm/other.sh"]);
    assert!(run(&["python3", "/cm/missing.py"]).unresolved.is_empty(), "not a shell script: opaque");
    assert_eq!(dirname("/a/b.sh"), "/a");
    assert_eq!(dirname("/b.sh"), "/");
    assert_eq!(dirname("b.sh"), ".");
}

#[test]
fn elasticsearch_cluster_health() {
    quiet(&["curl", "-s", "http://localhost:9200/_cluster/health"]);
    let d = fires(&["curl", "http://es-master:9200/_cluster/health"]);
    assert_eq!(d.category, C::Search);
}

// ------------------------------------------------------------------------------ not fire

#[test]
fn postgres_local_forms() {
    quiet(&["pg_isready", "-U", "postgres", "-h", "127.0.0.1"]);
    quiet(&["pg_isready", "-U", "postgres"]);
    quiet(&["pg_isready", "-h", "/var/run/postgresql"]);
    quiet(&["psql", "-h", "localhost", "-c", "SELECT 1"]);
    quiet(&["psql", "postgresql:///app?host=/var/run/postgresql", "-c", "SELECT 1"]);
    quiet(&["psql", "-d", "host=127.0.0.1 dbname=app", "-c", "SELECT 1"]);
    fires(&["psql", "-d", "host=db.prod dbname=app", "-c", "SELECT 1"]);
    fires(&["psql", "-h", "warehouse.data.svc", "-c", "select 1"]);
}

#[test]
fn redis_local_forms() {
    quiet(&["redis-cli", "ping"]);
    quiet(&["redis-cli", "-h", "localhost", "-p", "6379", "ping"]);
    quiet(&["redis-cli", "-s", "/run/redis.sock", "ping"]);
    quiet(&["redis-cli", "-u", "redis://127.0.0.1:6379/0", "ping"]);
    quiet(&["redis-cli", "-a", "secret", "ping"]);
}

#[test]
fn mongo_local_forms() {
    quiet(&["mongosh", "--port", "$PORT", "--eval", "db.adminCommand('ping')"]);
    quiet(&["sh", "-c", "mongosh --port $PORT --eval \"db.adminCommand('ping')\""]);
    quiet(&["mongosh", "admin", "--quiet", "--eval", "db.runCommand({ping:1})"]);
    quiet(&["mongosh", "mongodb://localhost:27017/admin"]);
}

#[test]
fn mysql_local_forms() {
    quiet(&["mysqladmin", "ping"]);
    quiet(&["mysqladmin", "ping", "-h", "localhost"]);
    quiet(&["mysql", "-h", "127.0.0.1", "-e", "SELECT 1"]);
    quiet(&["mysqladmin", "ping", "-h", "127.0.0.1", "-u", "root", "-p$(cat /secret)"]);
    quiet(&["mysqladmin", "--socket=/run/mysqld/mysqld.sock", "ping"]);
    let e = env(&[("MYSQL_ROOT_PASSWORD", EnvValue::Unresolved)]);
    quiet_in(&["sh", "-c", "mysqladmin status -uroot -p\"${MYSQL_ROOT_PASSWORD}\""], &e);
    quiet_in(&["sh", "-c", "mysqladmin ping -h 127.0.0.1 -u root -p$(cat /secret)"], &e);
}

#[test]
fn grpc_and_http_local_forms() {
    quiet(&["grpc_health_probe", "-addr=:7070", "-rpc-timeout=5s"]);
    quiet(&["curl", "-f", "http://localhost:8080/healthz"]);
    quiet(&["curl", "--unix-socket", "/run/app.sock", "http://x/health"]);
    quiet(&["wget", "-qO-", "http://127.0.0.1:9090/-/healthy"]);
    quiet(&["curl", "-fsS", "http://[::1]:8080/livez"]);
    quiet(&[
        "curl",
        "-H",
        "Host: shop.example.com",
        "-o",
        "/dev/null",
        "-m",
        "5",
        "-w",
        "%{http_code}",
        "--max-time",
        "3",
        "-u",
        "user:pw",
        "--cacert",
        "/ca.pem",
        "-X",
        "GET",
        "-d",
        "x=1",
        "http://localhost:8080/",
    ]);
    quiet(&["http", "GET", ":8080/healthz"]);
    quiet(&["nc", "-z", "localhost", "8080"]);
    quiet(&["grpcurl", "-plaintext", "localhost:50051", "grpc.health.v1.Health/Check"]);
    quiet(&["openssl", "s_client", "-connect", "127.0.0.1:443"]);
}

#[test]
fn pod_identity_is_local() {
    let e = env(&[("POD_IP", EnvValue::PodIp), ("POD_NAME", EnvValue::PodName)]);
    quiet_in(&["curl", "http://$(POD_IP):8080/"], &e);
    quiet_in(&["sh", "-c", "curl http://$POD_IP:8080/"], &e);
    quiet_in(&["sh", "-c", "curl http://${POD_IP}:8080/"], &e);
    quiet_in(&["sh", "-c", "redis-cli -h $(hostname) ping"], &e);
    quiet_in(&["sh", "-c", "redis-cli -h `hostname -i` ping"], &e);
    quiet_in(&["sh", "-c", "redis-cli -h $HOSTNAME ping"], &e);
    quiet_in(&["sh", "-c", "mysqladmin ping -h ${POD_NAME}.mysql-headless"], &e);
    quiet_in(&["sh", "-c", "redis-cli -h $POD_NAME.redis-headless ping"], &e);
    quiet_in(&["redis-cli", "-h", "$(POD_NAME).redis-headless", "ping"], &e);
    // Another ordinal is someone else.
    let d = fires_in(&["sh", "-c", "redis-cli -h redis-0.redis-headless ping"], &e);
    assert_eq!(d.target, "redis-0.redis-headless");
}

#[test]
fn own_address_filtered_through_a_pipeline_is_local() {
    let e = env(&[]);
    quiet_in(&["sh", "-c", "curl -f http://$(hostname -I | awk '{print $1}'):8080/health"], &e);
    quiet_in(&["sh", "-c", "redis-cli -h $(hostname -i | cut -d' ' -f1) ping"], &e);
    quiet_in(&["sh", "-c", "redis-cli -h `hostname -I | tr ' ' '\\n' | head -1` ping"], &e);
    // A pipeline that runs something else on the output, or starts elsewhere, is not our address.
    fires_in(&["sh", "-c", "redis-cli -h $(hostname | xargs getent hosts | awk '{print $1}') ping"], &e);
    fires_in(&["sh", "-c", "redis-cli -h $(cat /etc/peers | head -1) ping"], &e);
}

#[test]
fn rabbitmq_local_node() {
    quiet(&["rabbitmq-diagnostics", "-q", "ping"]);
    quiet(&[
        "sh",
        "-c",
        "rabbitmq-diagnostics -q check_running && rabbitmq-diagnostics -q check_local_alarms",
    ]);
    quiet(&["sh", "-c", "rabbitmqctl -n rabbit@$(hostname) status"]);
    quiet(&["rabbitmqctl", "-n", "rabbit@localhost", "status"]);
    let d = fires(&["rabbitmqctl", "-n", "rabbit@mq-0.mq-headless", "status"]);
    assert_eq!(d.category, C::Queue);
}

/// rabbitmqadmin talks to the management HTTP API: `-H`/`--host` (default localhost:15672),
/// `-U`/`--base-uri`; `-h` is help (s23 fresh user: `--host mq.shop.svc` had no finding).
#[test]
fn rabbitmqadmin_reaches_its_host_option() {
    for argv in [
        &["rabbitmqadmin", "--host", "mq.shop.svc", "-u", "guest", "-p", "pw", "list", "queues"][..],
        &["rabbitmqadmin", "-H", "mq.shop.svc", "list", "queues"],
        &["rabbitmqadmin", "--host=mq.shop.svc", "list", "queues"],
        &["rabbitmqadmin", "-U", "http://mq.shop.svc:15672/", "list", "queues"],
    ] {
        let d = fires(argv);
        assert_eq!(d.category, C::Queue, "{argv:?}");
        assert!(d.target.contains("mq.shop.svc"), "{argv:?}: {}", d.target);
        assert!(!d.command.contains(" pw "), "{}", d.command);
    }
    quiet(&["rabbitmqadmin", "list", "queues"]);
    quiet(&["rabbitmqadmin", "-H", "localhost", "-P", "15672", "list", "queues"]);
    quiet(&["rabbitmqadmin", "-H", "127.0.0.1", "list", "queues"]);
    // `-P` is the port and `-V` the vhost: neither is a host.
    quiet(&["rabbitmqadmin", "-P", "15672", "-V", "mq.shop.svc", "list", "queues"]);
}

#[test]
fn unknown_programs_yield_nothing() {
    quiet(&["cat", "/tmp/healthy"]);
    quiet(&["/health/ping_liveness_local_and_master.sh", "5"]);
    quiet(&["sh", "-c", "/health/ping_liveness_local_and_master.sh 5"]);
    quiet(&["sh", "-c", "zookeeper-ready 2181"]);
    quiet(&[
        "sh",
        "-c",
        "CONNECTION_CHECK_MAX_COUNT=0 exec /entrypoint \\\n airflow jobs check --job-type SchedulerJob --local",
    ]);
    quiet(&["sh", "-c", "echo 'a;b' | grep -q a"]);
    quiet(&["sh", "-c", "echo 'redis-cli -h cache ping'"]);
    quiet(&["sh", "-c", "# redis-cli -h cache ping\ntrue"]);
    quiet(&["true"]);
    quiet(&[]);
    quiet(&["sh", "-c", ""]);
    quiet(&["sh"]);
    quiet(&["bash", "/scripts/check.sh"]);
    quiet(&["test", "-f", "/tmp/ready"]);
    quiet(&["celery", "inspect", "ping"]);
}

#[test]
fn wrappers_are_unwrapped() {
    fires(&["timeout", "-s", "KILL", "5", "pg_isready", "-h", "db"]);
    // Redirections, eval, su/runuser and xargs do not hide the client.
    fires(&["sh", "-c", ">/dev/null pg_isready -h db"]);
    fires(&["sh", "-c", "pg_isready -h db 2>/dev/null >&2"]);
    fires(&["sh", "-c", "2>&1 redis-cli -h cache ping > /tmp/out"]);
    fires(&["sh", "-c", "eval 'pg_isready -h db'"]);
    fires(&["su", "postgres", "-c", "pg_isready -h db"]);
    fires(&["runuser", "-u", "pg", "--", "pg_isready", "-h", "db"]);
    fires(&["xargs", "-n", "1", "pg_isready", "-h", "db"]);
    fires(&["bash", "-c", "echo > /dev/tcp/db/5432"]);
    fires(&["bash", "-c", "exec 3<>/dev/tcp/cache.svc/6379"]);
    quiet(&["bash", "-c", "echo > /dev/tcp/127.0.0.1/8080"]);
    quiet(&["sh", "-c", "pg_isready -U postgres > /dev/null 2>&1"]);
    quiet(&["sh", "-c", "eval 'redis-cli ping'"]);
    fires(&["/usr/bin/env", "-i", "PGHOST=db", "pg_isready"]);
    fires(&["nice", "-n", "10", "nohup", "redis-cli", "-h", "cache", "ping"]);
    fires(&["tini", "--", "busybox", "sh", "-c", "nc -z db 5432"]);
    fires(&["dumb-init", "/docker-entrypoint.sh", "pg_isready", "-h", "db"]);
    fires(&["/bin/bash", "-o", "pipefail", "-c", "exec timeout 3 redis-cli -h cache ping"]);
    fires(&["sh", "-xc", "command time redis-cli -h cache ping"]);
    fires(&["sh", "-c", "sh -c 'redis-cli -h cache ping'"]);
    fires(&["sh", "-c", "if redis-cli -h cache ping; then exit 0; fi"]);
    fires(&["sh", "-c", "! redis-cli -h cache ping"]);
    fires(&["sh", "-c", "{ redis-cli -h cache ping; }"]);
    fires(&["sh", "-c", "(redis-cli -h cache ping)"]);
    quiet(&["timeout", "5", "pg_isready"]);
}

#[test]
fn script_variables() {
    fires(&["sh", "-c", "H=db.prod; redis-cli -h $H ping"]);
    quiet(&["sh", "-c", "H=localhost; redis-cli -h $H ping"]);
    fires(&["sh", "-c", "export PGHOST=db.prod; pg_isready"]);
    quiet(&["sh", "-c", "redis-cli -h ${REDIS_HOST:-localhost} ping"]);
    let d = fires(&["sh", "-c", "redis-cli -h ${REDIS_HOST:-cache} ping"]);
    assert_eq!(d.target, "cache");
    // Undefined without default: not provably local.
    fires(&["sh", "-c", "redis-cli -h $REDIS_HOST ping"]);
    // Literal env values are used, not shown in the command.
    let e = env(&[("REDIS_HOST", lit("cache.prod.svc"))]);
    let d = fires_in(&["sh", "-c", "redis-cli -h $REDIS_HOST ping"], &e);
    assert_eq!(d.target, "cache.prod.svc");
    assert_eq!(d.command, "redis-cli -h $REDIS_HOST ping");
    let e = env(&[("REDIS_HOST", lit("localhost"))]);
    quiet_in(&["sh", "-c", "redis-cli -h $REDIS_HOST ping"], &e);
    quiet_in(&["redis-cli", "-h", "$(REDIS_HOST)", "ping"], &e);
    // Single quotes keep `$` literal in the outer shell: `$H` reaches redis-cli as text.
    fires(&["sh", "-c", "redis-cli -h '$H' ping"]);
}

#[test]
fn env_from_makes_absent_vars_unresolved() {
    let mut e = no_env();
    e.has_env_from = true;
    let d = fires_in(&["sh", "-c", "redis-cli -h ${REDIS_HOST:-localhost} ping"], &e);
    assert!(d.target.contains("envFrom may set it"), "{}", d.target);
    fires_in(&["redis-cli", "-h", "$(REDIS_HOST)", "ping"], &e);
    // Client-implied variables are not guessed from envFrom.
    quiet_in(&["pg_isready"], &e);
    quiet_in(&["sh", "-c", "redis-cli -h $(hostname) ping"], &e);
}

#[test]
fn consul_catalog_via_curl_is_a_dependency_even_locally() {
    let d = fires(&["curl", "-fs", "http://127.0.0.1:8500/v1/health/service/web?passing"]);
    assert_eq!(d.category, C::ServiceDiscovery);
}

#[test]
fn vault_explicit_local_address_is_a_self_check() {
    let e = env(&[("VAULT_ADDR", lit("http://127.0.0.1:8200"))]);
    quiet_in(&["/bin/sh", "-ec", "vault status -tls-skip-verify"], &e);
    fires(&["vault", "status", "-address=https://vault.vault.svc:8200"]);
}

#[test]
fn other_clients() {
    assert_eq!(
        fires(&["cqlsh", "cassandra-0.cassandra.data.svc", "9042", "-e", "SELECT now() FROM system.local"])
            .category,
        C::Database
    );
    quiet(&["cqlsh", "-e", "describe keyspaces"]);
    fires(&["nodetool", "-h", "cassandra-1.cassandra", "status"]);
    quiet(&["nodetool", "status"]);
    fires(&["etcdctl", "--endpoints=https://etcd-0.etcd:2379,https://127.0.0.1:2379", "endpoint", "health"]);
    // The local endpoint: no host, but an answer that rests on the cluster's quorum (a warning).
    let local = analyze(&s(&["etcdctl", "endpoint", "health"]), &no_env(), &Options::default()).dependency;
    assert!(local.is_some_and(|d| d.quorum.is_some()));
    fires(&["zkCli.sh", "-server", "zk-0.zk:2181", "ls", "/"]);
    fires(&["zookeeper-shell", "zk:2181/kafka", "ls", "/"]);
    fires(&["nats", "-s", "nats://nats.msg:4222", "server", "ping"]);
    fires(&["socat", "-", "TCP:db:5432,connect-timeout=2"]);
    quiet(&["socat", "-", "UNIX-CONNECT:/run/app.sock"]);
    fires(&["telnet", "db", "5432"]);
    fires(&["openssl", "s_client", "-connect", "api.example.com:443"]);
    fires(&["grpcurl", "-plaintext", "backend:50051", "grpc.health.v1.Health/Check"]);
    fires(&["ping", "-c", "1", "10.0.0.1"]);
    quiet(&["ping", "-c", "1", "127.0.0.1"]);
    fires(&["xh", "GET", "https://api.example.com/health"]);
    fires(&["getent", "hosts", "db.prod.svc"]);
    quiet(&["getent", "hosts", "localhost"]);
    quiet(&["kubectl", "version", "--client"]);
    fires(&["curl", "-fsS", "https://kubernetes.default.svc/readyz"]);
    assert_eq!(fires(&["curl", "-fsS", "https://kubernetes.default.svc/readyz"]).category, C::ControlPlane);
}

#[test]
fn redaction() {
    let d = fires(&["sh", "-c", "PGPASSWORD=hunter2 psql -h db -U app -c 'select 1'"]);
    assert!(!d.command.contains("hunter2"), "{}", d.command);
    assert!(d.command.contains("PGPASSWORD=***"), "{}", d.command);
    let d = fires(&["mysql", "-h", "db", "-uroot", "-phunter2", "-e", "select 1"]);
    assert!(!d.command.contains("hunter2"), "{}", d.command);
    let d = fires(&["mysqladmin", "-h", "db", "--password=hunter2", "ping"]);
    assert!(!d.command.contains("hunter2"), "{}", d.command);
    let d = fires(&["redis-cli", "-h", "cache", "-a", "hunter2", "ping"]);
    assert!(!d.command.contains("hunter2"), "{}", d.command);
    let d = fires(&["redis-cli", "-u", "redis://default:hunter2@cache:6379", "ping"]);
    assert!(!d.command.contains("hunter2") && !d.target.contains("hunter2"), "{d:?}");
    let d = fires(&["curl", "-u", "admin:hunter2", "http://svc/"]);
    assert!(!d.command.contains("hunter2"), "{}", d.command);
    let d = fires(&["psql", "host=db password=hunter2 dbname=x", "-c", "select 1"]);
    assert!(!d.command.contains("hunter2") && !d.target.contains("hunter2"), "{d:?}");
    let d = fires(&["curl", "-H", "Authorization: Bearer hunter2", "http://svc/"]);
    assert!(!d.command.contains("hunter2"), "{}", d.command);
    // A protocol's AUTH line written by printf or echo into nc.
    for script in [
        r"printf 'AUTH hunter2\r\nPING\r\n' | nc cache 6379",
        r"printf 'PING\r\nauth app hunter2\r\n' | nc cache 6379",
        "echo AUTH hunter2 | nc cache 6379",
        "(echo 'AUTH hunter2'; echo PING) | nc -q1 cache 6379",
    ] {
        let shown = redact_command(&s(&["sh", "-c", script]), 200);
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.to_ascii_uppercase().contains("AUTH ***") && shown.contains("nc"), "{shown}");
    }
    let shown = redact_command(&s(&["sh", "-c", r"printf 'AUTH hunter2\r\nPING\r\n' | nc cache 6379"]), 200);
    assert!(shown.contains(r"PING\r\n"), "the rest of the text stays: {shown}");
    // More shapes: query names, cookies, JSON-free clients' password options, httpie, the
    // Redis wire protocol, printf formats.
    for argv in [
        vec!["curl", "http://svc/health?pw=hunter2"],
        vec!["sqlcmd", "-S", "db", "-U", "sa", "-P", "hunter2", "-Q", "select 1"],
        vec!["curl", "-sfuadmin:hunter2", "http://svc/"],
        vec!["curl", "-E", "client.pem:hunter2", "https://svc/"],
        vec!["curl", "--cert", "client.pem:hunter2", "https://svc/"],
        vec!["rabbitmqadmin", "-H", "mq", "-u", "admin", "-p", "hunter2", "list", "queues"],
        vec!["curl", "-d", r#"{"user":"app","password":"hunter2"}"#, "http://svc/login"],
        vec!["curl", "-d", r#"{"pass": "hunter2", "n": 1}"#, "http://svc/login"],
        vec!["curl", "-d", r#"{"token":12345hunter2}"#, "http://svc/login"],
        vec!["curl", "http://svc/h?X-Amz-Signature=hunter2"],
        vec!["curl", "-b", "sid=hunter2", "http://svc/"],
        vec!["curl", "--cookie", "hunter2", "http://svc/"],
        vec!["http", "-a", "u:hunter2", "r:80/health"],
        vec!["http", "r:80/health", "Authorization:Bearer hunter2"],
        vec!["mongosh", "--host", "mongo", "-u", "admin", "-phunter2"],
        vec!["sshpass", "-p", "hunter2", "ssh", "db"],
        vec!["ldapsearch", "-H", "ldap://ldap", "-w", "hunter2"],
        vec!["zkCli.sh", "-server", "zk:2181", "addauth", "digest", "u:hunter2"],
        vec!["sh", "-c", r"printf '*2\r\n$4\r\nAUTH\r\n$7\r\nhunter2\r\n' | nc redis 6379"],
        vec!["sh", "-c", r"printf 'AUTH %s\r\nPING\r\n' hunter2 | nc redis 6379"],
    ] {
        let shown = redact_command(&s(&argv), 200);
        assert!(!shown.contains("hunter2"), "{shown}");
    }
    let shown = redact_command(&s(&["sh", "-c", r"printf 'AUTH %s\r\n' x | nc redis 6379"]), 200);
    assert!(shown.contains("nc redis 6379"), "the secret ends with its command: {shown}");
    let shown =
        redact_command(&s(&["curl", "-d", r#"{"user":"app","password":"x\"y"}"#, "http://svc/"]), 200);
    assert!(shown.contains(r#""user":"app""#) && shown.contains(r#""password":"***""#), "{shown}");
    // Words that merely contain "auth" are left alone.
    let shown = redact_command(&s(&["sh", "-c", "curl -sf http://localhost:8080/oauth/health"]), 200);
    assert!(shown.contains("/oauth/health"), "{shown}");
    // Long commands are shortened.
    let long = format!("http://svc/{}", "x".repeat(200));
    let d = fires(&["curl", &long]);
    assert!(d.command.chars().count() <= 80, "{}", d.command);
}

// ----------------------------------------------------------------------------------- corpus

/// Every exec probe command of /work/shared/corpus/*.yaml (liveness, readiness, startup),
/// copied verbatim, with the container env that matters.
#[test]
fn corpus_exec_probes_are_local() {
    let mysql_script = "password_aux=\"${MYSQL_ROOT_PASSWORD:-}\"\nif [[ -f \"${MYSQL_ROOT_PASSWORD_FILE:-}\" ]]; then\n    password_aux=$(cat \"$MYSQL_ROOT_PASSWORD_FILE\")\nfi\nmysqladmin status -uroot -p\"${password_aux}\"\n";
    let airflow = "CONNECTION_CHECK_MAX_COUNT=0 AIRFLOW__LOGGING__LOGGING_LEVEL=ERROR exec /entrypoint \\\nairflow jobs check --job-type SchedulerJob --local\n";
    let cases: Vec<(Vec<&str>, ExecEnv)> = vec![
        // daemonset-calico-node-kube-system-exec-felix-bird-prestop-shutdown.yaml
        (vec!["/bin/calico-node", "-felix-live", "-bird-live"], no_env()),
        (vec!["/bin/calico-node", "-felix-ready", "-bird-ready"], no_env()),
        // daemonset-csi-nfs-node-liveness-host-localhost-served-by-sibling.yaml
        (
            vec![
                "/csi-node-driver-registrar",
                "--kubelet-registration-path=$(DRIVER_REG_SOCK_PATH)",
                "--mode=kubelet-registration-probe",
            ],
            env(&[("DRIVER_REG_SOCK_PATH", lit("/var/lib/kubelet/plugins/csi-nfsplugin/csi.sock"))]),
        ),
        // deployment-airflow-scheduler-liveness-jobs-check-reads-metadata-db.yaml
        (vec!["sh", "-c", airflow], env(&[("AIRFLOW__DATABASE__SQL_ALCHEMY_CONN", EnvValue::Unresolved)])),
        // deployment-microservices-demo-cartservice-...yaml
        (
            vec!["/bin/grpc_health_probe", "-addr=:7070", "-rpc-timeout=5s"],
            env(&[("REDIS_ADDR", lit("redis-cart:6379"))]),
        ),
        // deployment-microservices-demo-currencyservice-...yaml
        (vec!["/bin/grpc_health_probe", "-addr=:7000"], env(&[("PORT", lit("7000"))])),
        // pod-k8sdocs-exec-liveness-cat-healthy-file.yaml
        (vec!["cat", "/tmp/healthy"], no_env()),
        // statefulset-bitnami-mongodb-mongosh-ping-local-port.yaml
        (vec!["/app/scripts/ping-mongodb.sh"], no_env()),
        (vec!["/app/scripts/readiness-probe.sh"], no_env()),
        // statefulset-bitnami-mysql-primary-mysqladmin-status-all-three-probes.yaml
        (vec!["/bin/bash", "-ec", mysql_script], env(&[("MYSQL_ROOT_PASSWORD", EnvValue::Unresolved)])),
        // statefulset-bitnami-rabbitmq-diagnostics-ping-prestop-nodeshutdown.yaml
        (
            vec!["/bin/bash", "-ec", "rabbitmq-diagnostics -q ping"],
            env(&[
                (
                    "RABBITMQ_NODE_NAME",
                    lit("rabbit@$(MY_POD_NAME).mq-rabbitmq-headless.messaging.svc.cluster.local"),
                ),
                ("MY_POD_NAME", EnvValue::PodName),
                ("RABBITMQ_PASSWORD", EnvValue::Unresolved),
            ]),
        ),
        (
            vec![
                "/bin/bash",
                "-ec",
                "rabbitmq-diagnostics -q check_running && rabbitmq-diagnostics -q check_local_alarms",
            ],
            no_env(),
        ),
        // statefulset-k8sdocs-cassandra-readiness-only-prestop-nodetool-drain.yaml
        (vec!["/bin/bash", "-c", "/ready-probe.sh"], no_env()),
        // statefulset-k8sdocs-mysql-replicated-mysqladmin-ping-readiness-loopback-query.yaml
        (vec!["mysqladmin", "ping"], no_env()),
        (vec!["mysql", "-h", "127.0.0.1", "-e", "SELECT 1"], no_env()),
        // statefulset-k8sdocs-zookeeper-identical-exec-ready-script.yaml
        (vec!["sh", "-c", "zookeeper-ready 2181"], no_env()),
        // statefulset-vault-server-readiness-exec-prestop-sleep-and-kill.yaml
        (
            vec!["/bin/sh", "-ec", "vault status -tls-skip-verify"],
            env(&[("VAULT_ADDR", lit("http://127.0.0.1:8200"))]),
        ),
    ];
    for (argv, e) in &cases {
        quiet_in(argv, e);
    }
}

// ------------------------------------------------------------------------------- expansion

#[test]
fn kubelet_expansion() {
    let e = env(&[("A", lit("alpha")), ("IP", EnvValue::PodIp), ("S", EnvValue::Unresolved)]);
    assert_eq!(expand_kubelet_vars("x-$(A)-y", &e), "x-alpha-y");
    assert_eq!(expand_kubelet_vars("$$(A)", &e), "$(A)");
    assert_eq!(expand_kubelet_vars("$(UNDEFINED)", &e), "$(UNDEFINED)");
    assert_eq!(expand_kubelet_vars("$(IP):$(S)", &e), "$(IP):$(S)");
    assert_eq!(expand_kubelet_vars("$(A", &e), "$(A");
    assert_eq!(expand_kubelet_vars("$HOME $", &e), "$HOME $");
    assert_eq!(expand_kubelet_vars("$$$(A)", &e), "$alpha");
    assert_eq!(expand_kubelet_vars("", &e), "");
    assert_eq!(expand_kubelet_vars("é$(A)ü", &e), "éalphaü");
}

#[test]
fn kubelet_literal_reaches_the_client() {
    let e = env(&[("DB", lit("orders-db.prod.svc"))]);
    let d = fires_in(&["pg_isready", "-h", "$(DB)"], &e);
    assert_eq!(d.target, "orders-db.prod.svc");
    assert_eq!(d.command, "pg_isready -h $(DB)");
    // `$$(DB)` is the literal text `$(DB)`: not a resolvable host, so not provably local; the
    // note says where the text comes from.
    let d = fires_in(&["pg_isready", "-h", "$$(DB)"], &e);
    assert_eq!(d.target, "$(DB) (the kubelet makes `$$(DB)` the text `$(DB)`, no host name)");
    let d = fires_in(&["sh", "-c", "pg_isready -h $(DB)"], &e);
    assert_eq!(d.target, "orders-db.prod.svc");
}

// ------------------------------------------------------------------------------- splitting

#[test]
fn split_basic_operators_and_quotes() {
    let c = split_commands("echo 'a;b' | grep -q a && redis-cli -h \"$H\" ping; true & x || y");
    assert_eq!(
        c,
        vec![
            s(&["echo", "a;b"]),
            s(&["grep", "-q", "a"]),
            s(&["redis-cli", "-h", "$H", "ping"]),
            s(&["true"]),
            s(&["x"]),
            s(&["y"]),
        ]
    );
}

#[test]
fn split_substitutions_comments_keywords() {
    let c = split_commands(
        "# comment\nif [ -f x ]; then echo $(redis-cli -h cache ping) `hostname`; fi\nfoo \\\n bar 2>&1 >/dev/null",
    );
    assert!(c.contains(&s(&["redis-cli", "-h", "cache", "ping"])));
    assert!(c.contains(&s(&["hostname"])));
    assert!(c.contains(&s(&["[", "-f", "x", "]"])));
    assert!(c.contains(&s(&["echo", "$(redis-cli -h cache ping)", "`hostname`"])));
    assert!(c.contains(&s(&["foo", "bar", "2>&1", ">/dev/null"])));
    assert!(!c.iter().any(|w| w.iter().any(|x| x == "comment" || x == "fi")));
    assert_eq!(split_commands("a#b 'c # d'"), vec![s(&["a#b", "c # d"])]);
    assert_eq!(split_commands("while true; do x; done"), vec![s(&["true"]), s(&["x"])]);
    assert_eq!(split_commands("curl http://x>/dev/null"), vec![s(&["curl", "http://x", ">/dev/null"])]);
    assert_eq!(split_commands("a \"b;c\" 'd|e'"), vec![s(&["a", "b;c", "d|e"])]);
    // A function's commands, at its definition; nested ones too.
    assert_eq!(
        split_commands("probe() { curl -m 10 \"$1\" >/dev/null; }; probe http://x"),
        vec![s(&["curl", "-m", "10", "$1", ">/dev/null"]), s(&["probe", "http://x"])]
    );
    assert_eq!(
        split_commands("a() { b() { wget -T 9 u; }; b; }; a"),
        vec![s(&["wget", "-T", "9", "u"]), s(&["b"]), s(&["a"])]
    );
    assert!(split_commands("").is_empty());
    assert!(split_commands(";;;\n\n&&").is_empty());
}

// ------------------------------------------------------------------------------ robustness

#[test]
fn robustness_no_panic() {
    let deep_subst = "$(".repeat(10_000) + "redis-cli -h cache ping" + &")".repeat(10_000);
    let deep_backticks = "`echo ".repeat(2_000);
    let many_semis = ";".repeat(100_000);
    let many_cmds = "redis-cli ping;".repeat(5_000);
    let scripts: Vec<String> = vec![
        "echo 'unbalanced".into(),
        "echo \"unbalanced".into(),
        "echo $(".into(),
        "echo $(redis-cli -h cache".into(),
        "echo `redis-cli".into(),
        "trailing \\".into(),
        "echo ${".into(),
        "echo ${A:-${B:-${C".into(),
        "a\0b; curl \0 http://x\0".into(),
        "$((1 + $(date +%s) - 3))".into(),
        many_semis,
        many_cmds,
        deep_subst.clone(),
        deep_backticks,
        "\u{E000}\u{E001}\u{F0000}\u{F0001}\u{FFFFD}".into(),
        "redis-cli -h \u{F0000} ping".into(),
        ")))((( }}} {{{ ]]".into(),
        "${#}${@}${!x}${x/a/b}${x%%:*}$'a\\'b'".into(),
        "case $x in a) redis-cli ping;; esac".into(),
        "cat <<EOF\nredis-cli -h cache\nEOF".into(),
    ];
    for sc in &scripts {
        let _ = split_commands(sc);
        let _ = find_dependency(&s(&["sh", "-c", sc]), &no_env());
        let _ = find_dependency(
            &s(&["bash", "-c", sc, "x"]),
            &ExecEnv { vars: HashMap::new(), has_env_from: true, ..Default::default() },
        );
        let _ = find_dependency(std::slice::from_ref(sc), &no_env());
        let _ = expand_kubelet_vars(sc, &no_env());
    }
    // Nested `sh -c` inside `sh -c` ... beyond the depth bound.
    let mut nested = "redis-cli -h cache ping".to_string();
    for _ in 0..10 {
        nested = format!("sh -c {}", shell_words::quote(&nested));
    }
    let _ = find_dependency(&s(&["sh", "-c", &nested]), &no_env());
    // Self-referencing env values do not loop.
    let e = env(&[("A", lit("$(B)")), ("B", lit("$(A)"))]);
    let _ = find_dependency(&s(&["redis-cli", "-h", "$(A)", "ping"]), &e);
    let _ = find_dependency(&s(&["sh", "-c", "redis-cli -h $A ping"]), &e);
    // Options missing their values.
    for prog in [
        "curl",
        "wget",
        "redis-cli",
        "psql",
        "mysql",
        "mongosh",
        "nc",
        "grpcurl",
        "kcat",
        "dig",
        "timeout",
        "env",
        "nice",
        "openssl",
        "socat",
        "vault",
        "consul",
    ] {
        for flag in [
            "-h",
            "-x",
            "--host",
            "-s",
            "-b",
            "-u",
            "--proxy",
            "-addr",
            "--endpoints",
            "s_client",
            "-connect",
            "-S",
            "-n",
        ] {
            let _ = find_dependency(&s(&[prog, flag]), &no_env());
        }
    }
    // The depth bound still analyses shallow substitutions.
    assert!(sh("echo $(echo $(redis-cli -h cache ping))").is_some());
}

#[test]
fn display_categories() {
    let all = [
        (C::Database, "database"),
        (C::Cache, "cache"),
        (C::Queue, "queue"),
        (C::Coordination, "coordination service"),
        (C::Search, "search cluster"),
        (C::ServiceDiscovery, "service discovery"),
        (C::Secrets, "secrets store"),
        (C::Dns, "DNS"),
        (C::ControlPlane, "Kubernetes API"),
        (C::CloudApi, "cloud API"),
        (C::Network, "network service"),
    ];
    for (c, text) in all {
        assert_eq!(c.to_string(), text);
    }
}

#[test]
fn more_edge_cases() {
    quiet(&["curl", "-sf", "localhost:8080/health"]);
    fires(&["curl", "-sf", "backend:8080/health"]);
    quiet(&["sh", "-c", "curl -sf \"http://localhost:${PORT:-8080}/health\" -o /dev/null"]);
    quiet(&["sh", "-c", "[ \"$(redis-cli -h localhost ping)\" = \"PONG\" ]"]);
    quiet(&["redis-cli", "-c", "-h", "127.0.0.1", "-p", "7000", "cluster", "info"]);
    quiet(&["mysqladmin", "ping", "-h", "localhost", "--protocol=tcp"]);
    quiet(&["nodetool", "-h", "::FFFF:127.0.0.1", "status"]);
    quiet(&["pg_isready", "-h", "0.0.0.0"]);
    quiet(&["pg_isready", "-h", "127.0.0.2"]);
    fires(&["pg_isready", "-d", "postgres://db.prod/app"]);
    fires(&["https", "api.example.com/health"]);
    fires(&["pg_isready", "-h", "10.0.0.5"]);
    fires(&["pg_isready", "-h", "localhost,db.prod"]);
    quiet(&["curl", "--noproxy", "*", "-x", "http://proxy:3128", "http://localhost/"]);
    quiet(&["nc", "-l", "-p", "8080"]);
    quiet(&["nc", "-U", "/run/app.sock"]);
    // A variable holding a whole client invocation is field-split.
    let e = env(&[("CHECK", lit("redis-cli -h cache ping"))]);
    fires_in(&["sh", "-c", "$CHECK"], &e);
    quiet_in(&["sh", "-c", "\"$CHECK\""], &e);
    // Unexported script variables do not reach a client's environment.
    quiet(&["sh", "-c", "PGHOST=db; pg_isready"]);
    // `sh -c` without a script operand, or reading a file, is opaque.
    quiet(&["sh", "-e", "/probe.sh"]);
}

#[test]
fn wrapper_programs_and_windows_command_lines_do_not_hide_the_client() {
    for args in [
        vec!["setpriv", "--reuid=1000", "--regid=1000", "--init-groups", "pg_isready", "-h", "db.prod.svc"],
        vec!["setpriv", "--reuid", "1000", "--", "pg_isready", "-h", "db.prod.svc"],
        vec!["chpst", "-u", "app:app", "pg_isready", "-h", "db.prod.svc"],
        vec!["flock", "-w", "5", "/tmp/lock", "pg_isready", "-h", "db.prod.svc"],
        vec!["flock", "/tmp/lock", "-c", "pg_isready -h db.prod.svc"],
        vec!["chroot", "--userspec=1000:1000", "/", "pg_isready", "-h", "db.prod.svc"],
        vec!["chrt", "-b", "0", "pg_isready", "-h", "db.prod.svc"],
        vec!["taskset", "-c", "0", "pg_isready", "-h", "db.prod.svc"],
        vec!["s6-setuidgid", "app", "pg_isready", "-h", "db.prod.svc"],
        vec!["doas", "-u", "app", "pg_isready", "-h", "db.prod.svc"],
        vec!["cmd", "/c", "curl.exe -f http://db.prod.svc/health"],
        vec!["cmd.exe", "/C", "C:/tools/curl.exe", "-f", "http://db.prod.svc/health"],
    ] {
        assert!(fires(&args).target.contains("db.prod.svc"), "{args:?}");
    }
    // The same wrappers around a local check stay quiet.
    quiet(&["setpriv", "--reuid=1000", "pg_isready", "-h", "127.0.0.1"]);
    quiet(&["chpst", "-u", "app", "redis-cli", "ping"]);
    quiet(&["flock", "/tmp/lock", "pg_isready", "-U", "postgres"]);
    quiet(&["cmd", "/c", "curl.exe -f http://localhost:8080/health"]);
}

#[test]
fn a_function_s_positional_parameters_are_not_a_remote_host() {
    let e = env(&[]);
    // The function is called with an argument admission does not bind: never a denial on it.
    quiet_in(&["sh", "-c", "check() { pg_isready -h \"$1\"; }; check localhost"], &e);
    quiet_in(&["bash", "-c", "function check { curl -f http://$1:8080/healthz; }\ncheck localhost"], &e);
    // A literal remote host inside a function is still read.
    fires_in(&["sh", "-c", "check() { pg_isready -h db.prod.svc; }; check"], &e);
    // Without a function, an unset positional parameter of `sh -c` stays unknown, as before.
    let d = fires_in(&["sh", "-c", "pg_isready -h \"$1\""], &e);
    assert!(d.target.contains("$1"), "{}", d.target);
    // What counts as a function definition.
    assert!(super::script::defines_function("f() { :; }"));
    assert!(super::script::defines_function("x=1; function g { :; }"));
    assert!(!super::script::defines_function("curl -f http://localhost:8080/ # f() in a comment? no: (x)"));
}

/// libpq takes `host` from the last place that sets it (a connection string after `-h`), an
/// environment variable only where nothing set it, and connects to `hostaddr` whenever it is
/// set, whatever `host` says (PostgreSQL docs, "Parameter Key Words" and "Environment
/// Variables"). Issue 10, items 1 and 2.
#[test]
fn libpq_connects_to_hostaddr_and_a_connection_string_overrides_h() {
    let local = env(&[("PGHOST", lit("localhost"))]);
    let remote = env(&[("PGHOST", lit("orders-db"))]);
    let found = |script: &str, e: &ExecEnv| find_dependency(&s(&["sh", "-c", script]), e).map(|d| d.target);
    // PGHOSTADDR is where it connects, over PGHOST and over -h.
    assert_eq!(found("PGHOSTADDR=10.0.0.5 pg_isready", &local).as_deref(), Some("10.0.0.5 (PGHOSTADDR)"));
    assert_eq!(found("PGHOSTADDR=127.0.0.1 pg_isready -h orders-db", &local), None);
    assert_eq!(found("PGHOSTADDR=127.0.0.1 pg_isready", &remote), None);
    // An empty PGHOSTADDR sets nothing: PGHOST still names the server.
    assert_eq!(found("PGHOSTADDR= pg_isready", &remote).as_deref(), Some("orders-db (PGHOST)"));
    // A connection string's hostaddr, over its host, over -h, over PGHOSTADDR.
    assert_eq!(found("pg_isready -d 'host=orders-db hostaddr=127.0.0.1'", &local), None);
    assert_eq!(found("pg_isready -h orders-db -d 'hostaddr=127.0.0.1'", &local), None);
    assert_eq!(found("PGHOSTADDR=10.0.0.5 pg_isready -d 'hostaddr=127.0.0.1'", &local), None);
    assert_eq!(found("pg_isready -h localhost -d 'hostaddr=10.0.0.5'", &local).as_deref(), Some("10.0.0.5"));
    assert_eq!(
        found("psql 'postgresql://orders-db/x?hostaddr=127.0.0.1' -c 'select 1'", &local),
        None,
        "a URI's hostaddr parameter too"
    );
    // The URI is the target, whatever -h or PGHOST say (the message named -h's localhost).
    for script in
        ["pg_isready -d 'postgres://orders-db/x'", "pg_isready -h localhost -d postgres://orders-db/x"]
    {
        assert_eq!(found(script, &local).as_deref(), Some("postgres://orders-db/x"), "{script}");
    }
    assert_eq!(found("pg_isready -h orders-db -d 'host=localhost dbname=x'", &local), None);
    // A URI without a host leaves the host to PGHOST.
    assert_eq!(found("psql postgresql:///x -c 'select 1'", &remote).as_deref(), Some("orders-db (PGHOST)"));
    assert_eq!(found("psql postgresql:///x -c 'select 1'", &local), None);
}

/// `--` ends env's options, and the assignments after it still apply (coreutils env(1)).
#[test]
fn env_assignments_after_a_double_dash_apply() {
    let remote = env(&[("PGHOST", lit("orders-db"))]);
    for argv in [
        &["env", "-i", "--", "PGHOST=db", "pg_isready"][..],
        &["env", "--", "PGHOST=db", "pg_isready"],
        &["sh", "-c", "env -i -- PGHOST=db pg_isready"],
    ] {
        assert_eq!(fires(argv).target, "db (PGHOST)", "{argv:?}");
    }
    quiet_in(&["env", "--", "PGHOST=localhost", "pg_isready"], &remote);
    quiet_in(&["env", "-i", "--", "pg_isready"], &remote);
    // After `--`, a word that is no assignment is the command.
    quiet(&["env", "--", "-i", "pg_isready", "-h", "db"]);
}

/// Commands whose target comes from input the analysis does not see are noted, never a finding.
#[test]
fn targets_read_from_stdin_or_a_file_are_noted_not_guessed() {
    let notes = |script: &str| {
        let o = analyze(&s(&["sh", "-c", script]), &no_env(), &Options::default());
        assert_eq!(o.dependency, None, "{script}");
        o.unresolved.iter().map(|u| format!("{}: {}", u.path, u.reason)).collect::<Vec<_>>()
    };
    for (script, note) in [
        ("cat /etc/urls | xargs curl -sf", "xargs curl: the arguments xargs adds to `curl`"),
        ("cat /etc/urls | xargs -n1 curl -sf", "xargs curl"),
        ("wget -q -i - < /etc/urls", "wget -i -: wget reads URLs or options from standard input"),
        ("wget -q -i /etc/urls", "wget -i /etc/urls: wget reads URLs or options from `/etc/urls`"),
        ("curl -sf -K - < /etc/c", "curl -K -: curl reads URLs or options from standard input"),
        ("curl -sf --config /etc/curl.conf", "curl -K /etc/curl.conf"),
    ] {
        let n = notes(script);
        assert!(n.iter().any(|x| x.starts_with(note)), "{script}: {n:?}");
    }
    // Not for commands that are no client, nor for a client whose target is on its line.
    assert!(notes("ls | xargs rm -f").is_empty());
    assert!(notes("wget -q -O- http://localhost:8080/health").is_empty());
    assert_eq!(fires(&["sh", "-c", "echo x | xargs curl -sf http://db/health"]).target, "http://db/health");
    // A literal input is no unknown: xargs' command line is known (`curl -sf http://db/health`).
    assert_eq!(fires(&["sh", "-c", "echo http://db/health | xargs curl -sf"]).target, "http://db/health");
    // Each xargs is a level: a long chain (under the 64 KiB command bound) is bounded, not a
    // stack overflow.
    let mut chain = vec!["xargs"; 10_000];
    chain.push("curl");
    assert_eq!(analyze(&s(&chain), &no_env(), &Options::default()).dependency, None);
    let mut chain = ["xargs", "-I{}"].repeat(5_000);
    chain.extend(["curl", "http://{}/"]);
    assert_eq!(analyze(&s(&chain), &no_env(), &Options::default()).dependency, None);
}

/// BusyBox and toybox wget are read like GNU wget; toybox's `-p` takes the POST data.
#[test]
fn busybox_and_toybox_wget_are_read_like_gnu_wget() {
    for argv in [
        &["wget", "-q", "-O-", "http://db/"][..],
        &["wget", "--spider", "http://db/"],
        &["wget", "-qO-", "http://db/"],
        &["busybox", "wget", "-q", "-O-", "http://db/"],
        &["busybox", "wget", "--spider", "-T", "2", "http://db/"],
        &["toybox", "wget", "-O-", "http://db/"],
        &["toybox", "wget", "-p", "x=1", "http://db/"],
        &["wget", "-p", "http://db/"],
    ] {
        assert_eq!(fires(argv).target, "http://db/", "{argv:?}");
    }
    // GNU's `-p` is a switch: a URL or a lone host after it is what it fetches.
    assert_eq!(fires(&["wget", "-p", "http://db/", "http://localhost/"]).target, "http://db/");
    assert_eq!(fires(&["wget", "-p", "db.svc"]).target, "db.svc");
    quiet(&["toybox", "wget", "-p", "data", "http://localhost/"]);
    quiet(&["busybox", "wget", "-q", "--spider", "http://127.0.0.1:8080/health"]);
}

/// ssh reaches its destination (port 22); what it runs there is the remote host's business.
#[test]
fn ssh_reaches_its_destination() {
    assert_eq!(fires(&["ssh", "db", "pg_isready"]).target, "db");
    // The host without the user name.
    assert_eq!(fires(&["sh", "-c", "ssh -o BatchMode=yes user@db true"]).target, "db");
    assert_eq!(fires(&["ssh", "-i", "/keys/id", "ssh://admin@db.svc:2222"]).target, "ssh://db.svc:2222");
    assert_eq!(fires(&["ssh", "-o", "HostName=db.svc", "ops@alias", "true"]).target, "db.svc");
    assert_eq!(fires(&["sshpass", "-p", "pw", "ssh", "db", "true"]).target, "db");
    quiet(&["ssh", "localhost", "pg_isready"]);
    quiet(&["ssh", "-p", "2222", "-l", "db", "127.0.0.1", "true"]);
}

/// httping (HTTPing 2.x): `-g URL`, `-h HOST`, the URL as argument, `--divert-connect`, `-x`.
#[test]
fn httping_reaches_its_url_host_or_diverted_host() {
    assert_eq!(fires(&["httping", "-c", "1", "-g", "http://db/health"]).target, "http://db/health");
    assert_eq!(fires(&["httping", "-c1", "-h", "db", "-p", "8080"]).target, "db");
    assert_eq!(fires(&["httping", "-c", "1", "http://db/health"]).target, "http://db/health");
    assert_eq!(fires(&["httping", "--divert-connect", "db", "-g", "http://localhost/"]).target, "db");
    assert!(fires(&["httping", "-x", "squid:3128", "-g", "http://localhost/"]).target.starts_with("proxy"));
    quiet(&["httping", "-c", "1", "-g", "http://localhost:8080/health"]);
    quiet(&["httping", "-c", "1", "-g", "http://localhost/health"]);
    quiet(&["httping", "-c", "1", "-h", "127.0.0.1", "-p", "8080"]);
    quiet(&["httping", "--divert-connect", "localhost", "-g", "http://db/"]);
}

/// A value the analysis cannot know is labelled by what it is: command output only for a
/// command substitution.
#[test]
fn unknown_values_are_labelled_by_their_origin() {
    let d = fires(&["sh", "-c", "read H; curl -sf http://$H:8080/"]);
    assert!(d.target.ends_with("(unknown value)"), "{}", d.target);
    assert!(d.unknown_host);
    let d = fires(&["ksh", "-c", "H=db H=x : ; curl -sf http://$H/"]);
    assert!(d.target.ends_with("(unknown value)"), "{}", d.target);
    for script in ["curl -sf http://$(cat /etc/h):8080/", "curl -sf http://`cat /etc/h`:8080/"] {
        let d = fires(&["sh", "-c", script]);
        assert!(d.target.ends_with("(command output)"), "{script}: {}", d.target);
    }
}

/// `explain` hides a script that feeds a literal to a program's standard input (a secret needs no
/// flag there) and shows any other as written: [`feeds_literal_to_stdin`] tells the two apart
/// (s13; `cli_ux` checks the output, which the mutation sample's test binaries leave out).
#[test]
fn a_literal_fed_to_standard_input_is_told_from_a_pipe_out_of_the_check() {
    for script in [
        "echo T0k | vault login -",
        "printf '%s' pw | redis-cli -x AUTH",
        "/bin/echo pw|redis-cli -x AUTH",
        "vault login - <<EOF\nT0k\nEOF",
        "redis-cli -x AUTH <<< pw",
    ] {
        assert!(feeds_literal_to_stdin(&s(&["sh", "-c", script])), "{script}");
    }
    for script in [
        "pg_isready -h db | tee -a /tmp/l",
        "pg_isready -h db || echo down",
        "echo checking || pg_isready -h db",
        "echo start; pg_isready -h db",
        "redis-cli ping | grep -q PONG",
    ] {
        assert!(!feeds_literal_to_stdin(&s(&["sh", "-c", script])), "{script}");
    }
}

mod indirect;
