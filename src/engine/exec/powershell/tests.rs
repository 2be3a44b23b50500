//! Tests of the PowerShell analysis, through [`super::super::find_dependency`]: the command line,
//! the cmdlets and .NET clients, script variables, functions and code that never runs.

use super::super::{EnvValue, ExecEnv, find_dependency};
use super::*;

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

#[track_caller]
fn target(argv: &[&str]) -> String {
    match find_dependency(&s(argv), &ExecEnv::default()) {
        Some(d) => d.target,
        None => panic!("expected a dependency for {argv:?}"),
    }
}

/// A dependency whose result cannot fail the probe (a warning): its target.
#[track_caller]
fn warned(argv: &[&str]) -> String {
    match find_dependency(&s(argv), &ExecEnv::default()) {
        Some(d) if d.uncoupled.is_some() => d.target,
        other => panic!("expected a dependency that cannot fail the probe for {argv:?}, got {other:?}"),
    }
}

#[track_caller]
fn quiet(argv: &[&str]) {
    if let Some(d) = find_dependency(&s(argv), &ExecEnv::default()) {
        panic!("expected no dependency for {argv:?}, got {d:?}");
    }
}

#[test]
fn splatted_parameters_are_not_followed() {
    // Fresh-user pass: denied as reaching `@p`.
    quiet(&[
        "powershell",
        "-Command",
        "$p = @{Uri='http://localhost:8080/health'; UseBasicParsing=$true}; Invoke-WebRequest @p",
    ]);
    quiet(&["pwsh", "-c", "$a = @{Uri='http://127.0.0.1:8080/healthz'}; Invoke-RestMethod @a"]);
    // A host named beside the splat still counts; a quoted '@p' is a literal.
    assert_eq!(target(&["pwsh", "-c", "Invoke-WebRequest http://orders.svc/ @p"]), "http://orders.svc/");
}

#[test]
fn web_cmdlets_reaching_another_host_fire() {
    let cases: &[&[&str]] = &[
        &["powershell", "-Command", "Invoke-WebRequest -Uri http://orders.svc:8080/health -UseBasicParsing"],
        &["powershell.exe", "-NoProfile", "-Command", "iwr http://orders.svc/health"],
        &["pwsh", "-c", "Invoke-RestMethod 'https://api.example.com/ping'"],
        &["pwsh", "-NoLogo", "-c", "irm -Method GET -Uri https://api.example.com/ping"],
        &[
            "powershell",
            "-Command",
            "try { $r = iwr -UseBasicParsing http://orders.svc/health; exit 0 } catch { exit 1 }",
        ],
        &[
            "PowerShell.exe",
            "-ExecutionPolicy",
            "Bypass",
            "-c",
            "curl -UseBasicParsing http://orders.svc/health",
        ],
        &["powershell", "wget http://orders.svc/health"],
        &["pwsh", "-c", "curl.exe -f http://orders.svc/health"],
        &["pwsh", "-c", "curl -f http://orders.svc/health"],
        &["powershell", "-Command", "Invoke-WebRequest -Uri:http://orders.svc/health"],
    ];
    for argv in cases {
        assert!(target(argv).contains("svc") || target(argv).contains("example.com"), "{argv:?}");
    }
}

#[test]
fn web_cmdlets_on_this_pod_or_unknown_parameters_are_quiet() {
    quiet(&[
        "powershell",
        "-Command",
        "Invoke-WebRequest -Uri http://localhost:8080/health -UseBasicParsing",
    ]);
    quiet(&["pwsh", "-c", "iwr http://127.0.0.1:8080/healthz"]);
    quiet(&["pwsh", "-c", "iwr \"http://$($env:COMPUTERNAME):8080/healthz\""]);
    quiet(&["powershell", "-Command", "iwr http://$env:COMPUTERNAME:8080/healthz -UseBasicParsing"]);
    quiet(&["powershell", "-Command", "Invoke-WebRequest -Uri \"http://[::1]:8080/health\""]);
    // An unknown parameter may take a value: the positional is not read as the URI.
    quiet(&["powershell", "-Command", "iwr -SomeNewParameter orders.svc http://localhost/x"]);
    // A file or nothing to run: opaque.
    quiet(&["pwsh", "-File", "C:\\probe.ps1"]);
    quiet(&["pwsh", "C:\\probe.ps1"]);
    // Windows ping's count is not a host.
    quiet(&["powershell", "-Command", "ping -n 1 127.0.0.1"]);
    quiet(&["cmd", "/c", "ping -n 1 localhost"]);
    assert_eq!(target(&["cmd", "/c", "ping -n 1 orders.svc"]), "orders.svc");
    // `Write-Host` of a URL reaches nothing.
    quiet(&["pwsh", "-c", "Write-Host http://orders.svc/health"]);
}

#[test]
fn test_netconnection_fires_only_when_its_result_decides_the_exit() {
    let decided = "if (-not (Test-NetConnection orders-db -Port 5432 -InformationLevel Quiet)) { exit 1 }";
    assert_eq!(target(&["powershell", "-Command", decided]), "orders-db:5432");
    let prop = "if (!(tnc -ComputerName orders-db -Port 5432).TcpTestSucceeded) { exit 1 }";
    assert_eq!(target(&["pwsh", "-c", prop]), "orders-db:5432");
    let positional =
        "$t = Test-NetConnection orders-db -Port 1433; if (-not $t.TcpTestSucceeded) { throw 'down' }";
    assert_eq!(target(&["powershell", "-c", positional]), "orders-db:1433");
    // Its result alone never fails the probe (a warning, exit 0).
    assert_eq!(
        warned(&["powershell", "-Command", "Test-NetConnection orders-db -Port 5432"]),
        "orders-db:5432"
    );
    assert_eq!(warned(&["pwsh", "-c", "Test-NetConnection -ComputerName db -Port 5432"]), "db:5432");
    warned(&["powershell", "-Command", "(Test-NetConnection orders-db -Port 5432).TcpTestSucceeded"]);
    quiet(&["powershell", "-Command", "Test-NetConnection localhost -Port 5432"]);
    // This Pod.
    quiet(&[
        "powershell",
        "-Command",
        "if (-not (tnc localhost -Port 8080 -InformationLevel Quiet)) { exit 1 }",
    ]);
    quiet(&[
        "powershell",
        "-Command",
        "if (-not (tnc $env:COMPUTERNAME -Port 80 -InformationLevel Quiet)) { exit 1 }",
    ]);
}

#[test]
fn tcp_clients_fire_for_other_hosts_only() {
    let script = "$c = New-Object System.Net.Sockets.TcpClient('orders-db', 5432); $c.Close()";
    assert_eq!(target(&["powershell", "-Command", script]), "orders-db:5432");
    let script = "[System.Net.Sockets.TcpClient]::new(\"cache.svc\", 6379).Dispose()";
    assert_eq!(target(&["pwsh", "-c", script]), "cache.svc:6379");
    let script = "$c = New-Object Net.Sockets.TcpClient; $c.Connect('mq.svc', 5672)";
    assert_eq!(target(&["powershell", "-c", script]), "mq.svc:5672");
    let script = "New-Object System.Net.Sockets.TcpClient -ArgumentList 'orders-db', 5432";
    assert_eq!(target(&["powershell", "-c", script]), "orders-db:5432");
    quiet(&["powershell", "-Command", "$c = New-Object System.Net.Sockets.TcpClient('127.0.0.1', 8080)"]);
    quiet(&["powershell", "-Command", "$c = New-Object System.Net.Sockets.TcpClient('localhost', 8080)"]);
    quiet(&["powershell", "-Command", "New-Object System.Net.Sockets.TcpClient($env:COMPUTERNAME, 8080)"]);
}

#[track_caller]
fn target_in(argv: &[&str], env: &ExecEnv) -> String {
    match find_dependency(&s(argv), env) {
        Some(d) => d.target,
        None => panic!("expected a dependency for {argv:?}"),
    }
}

#[track_caller]
fn quiet_in(argv: &[&str], env: &ExecEnv) {
    if let Some(d) = find_dependency(&s(argv), env) {
        panic!("expected no dependency for {argv:?}, got {d:?}");
    }
}

fn env(vars: &[(&str, EnvValue)]) -> ExecEnv {
    ExecEnv {
        vars: vars.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
        has_env_from: false,
        ..Default::default()
    }
}

#[test]
fn script_variables_are_followed_in_order() {
    // The break-it pass's false deny: a URL assigned without spaces, double-quoted.
    quiet(&["powershell", "-Command", "$u=\"http://localhost:8080/healthz\"; Invoke-WebRequest $u"]);
    quiet(&["powershell", "-Command", "$u = 'http://127.0.0.1:8080/healthz'; iwr -Uri $u -UseBasicParsing"]);
    quiet(&["pwsh", "-c", "$U= \"http://[::1]:8080/healthz\"; irm $u"]);
    quiet(&["pwsh", "-c", "[string]$u = \"http://localhost:8080/healthz\"; iwr $u"]);
    quiet(&["pwsh", "-c", "$script:u =\"http://localhost:8080/\"; iwr $u"]);
    quiet(&["pwsh", "-c", "${u} = 'http://localhost:8080/'; iwr ${U}"]);
    quiet(&["pwsh", "-c", "$h = 'localhost'; $p = 8080; $u = \"http://${h}:$p/healthz\"; iwr $u"]);
    quiet(&["pwsh", "-c", "$u = 'http://' + 'localhost' + ':8080/'; iwr $u"]);
    quiet(&["pwsh", "-c", "$u = 'http://localhost'; $u += ':8080/healthz'; iwr $u"]);
    quiet(&["pwsh", "-c", "Set-Variable -Name u -Value http://localhost:8080/; iwr $u"]);
    quiet(&["pwsh", "-c", "sv u 'http://localhost:8080/'; iwr $u"]);
    // The same scripts reaching another host fire, with the value followed.
    assert_eq!(
        target(&["powershell", "-Command", "$u=\"http://orders.svc/health\"; Invoke-WebRequest $u"]),
        "http://orders.svc/health"
    );
    assert_eq!(
        target(&["pwsh", "-c", "[string]$U = 'http://orders.svc/health'; iwr $u"]),
        "http://orders.svc/health"
    );
    assert_eq!(
        target(&["pwsh", "-c", "$h = 'orders.svc'; $u = \"http://$h/health\"; iwr $u"]),
        "http://orders.svc/health"
    );
    assert_eq!(
        target(&["pwsh", "-c", "$u = 'http://' + 'orders.svc' + '/h'; iwr $u"]),
        "http://orders.svc/h"
    );
    assert_eq!(
        target(&["pwsh", "-c", "$u = 'http://orders.svc'; $u += '/h'; iwr $u"]),
        "http://orders.svc/h"
    );
    assert_eq!(
        target(&["pwsh", "-c", "Set-Variable -Name u -Value http://orders.svc/h; iwr $u"]),
        "http://orders.svc/h"
    );
    assert_eq!(
        target(&["pwsh", "-c", "New-Variable u 'http://orders.svc/h'; iwr $u"]),
        "http://orders.svc/h"
    );
    // The last assignment wins, whatever the earlier one said.
    quiet(&["pwsh", "-c", "$u = 'http://orders.svc/'; $u = 'http://localhost:8080/'; iwr $u"]);
    assert_eq!(
        target(&["pwsh", "-c", "$u = 'http://localhost/'; $u = 'http://orders.svc/'; iwr $u"]),
        "http://orders.svc/"
    );
    // A single-quoted `$h` is literal text, not the variable.
    let single = target(&["pwsh", "-c", "$h = 'localhost'; iwr 'http://orders.svc/$h'"]);
    assert!(single.starts_with("http://orders.svc/$h"), "{single}");
}

#[test]
fn script_variables_not_followed_never_deny() {
    let cases = [
        // Never assigned, or assigned from a command, an expression or a pipeline.
        "iwr $u",
        "$u = Get-Content C:\\config\\url.txt; iwr $u",
        "$u = $(Get-Content C:\\url.txt); iwr $u",
        "$u = 'http://localhost/'; $u = Get-Url; iwr $u",
        "$cfg = Get-Content c:\\c.json | ConvertFrom-Json; iwr $cfg.url",
        "$u = $cfg.Url; iwr $u",
        "$u = \"http://$($cfg.Host):8080/\"; iwr $u",
        "$u -= 'x'; iwr $u",
        "Set-Variable -Name u -Value (Get-Url); iwr $u",
        // `$h:8080` reads the drive `h:`, not `$h` (about_Variables): not what was meant.
        "$h = 'orders.svc'; iwr http://$h:8080/health",
        "$xs = @('orders.svc'); iwr \"http://$($xs[0])/\"",
    ];
    for script in cases {
        quiet(&["powershell", "-Command", script]);
    }
    // Not followed, but noted.
    let out = super::super::analyze(
        &s(&["pwsh", "-c", "iwr $u"]),
        &ExecEnv::default(),
        &super::super::Options::default(),
    );
    assert!(out.dependency.is_none());
    assert!(out.unresolved.iter().any(|u| u.reason.contains("$u is a script variable")), "{out:?}");
}

#[test]
fn env_variables_come_from_the_container() {
    let e = env(&[
        ("DB_HOST", EnvValue::Literal("orders-db".into())),
        ("LOCAL_URL", EnvValue::Literal("http://localhost:8080/healthz".into())),
        ("SECRET_HOST", EnvValue::Unresolved),
        ("POD_IP", EnvValue::PodIp),
    ]);
    let decided = |h: &str| {
        format!("if (-not (Test-NetConnection {h} -Port 5432 -InformationLevel Quiet)) {{ exit 1 }}")
    };
    assert_eq!(target_in(&["powershell", "-Command", &decided("$env:DB_HOST")], &e), "orders-db:5432");
    assert_eq!(target_in(&["powershell", "-Command", &decided("${env:db_host}")], &e), "orders-db:5432");
    quiet_in(
        &["powershell", "-Command", &decided("$env:OTHER_HOST")],
        &env(&[("OTHER_HOST", EnvValue::Literal("localhost".into()))]),
    );
    quiet_in(&["powershell", "-Command", "iwr $env:LOCAL_URL"], &e);
    quiet_in(&["powershell", "-Command", &decided("$env:POD_IP")], &e);
    // An env value from a Secret or ConfigMap is unknown at admission, as in a shell script.
    assert!(target_in(&["powershell", "-Command", &decided("$env:SECRET_HOST")], &e).contains("SECRET_HOST"));
    // The script may set an env variable itself.
    quiet_in(
        &["powershell", "-Command", &format!("$env:DB_HOST = 'localhost'; {}", decided("$env:DB_HOST"))],
        &e,
    );
    // A script variable holding an env value.
    assert_eq!(
        target_in(&["pwsh", "-c", &format!("$h = $env:DB_HOST; {}", decided("$h"))], &e),
        "orders-db:5432"
    );
}

#[test]
fn subexpressions_inside_words_and_literal_dollars() {
    for script in [
        "Invoke-WebRequest -Uri http://$($env:COMPUTERNAME):8080/healthz -UseBasicParsing",
        "try { $r = irm http://$($env:COMPUTERNAME):8080/healthz; exit 0 } catch { exit 1 }",
        "if (-not (Test-NetConnection $($env:COMPUTERNAME) -Port 8080 -InformationLevel Quiet)) { exit 1 }",
        // Single quotes do not expand: `$env:COMPUTERNAME` is literal text, no host name at all.
        "$u = 'http://$env:COMPUTERNAME:8080/healthz'; iwr -Uri $u",
    ] {
        quiet(&["powershell", "-Command", script]);
    }
    assert_eq!(
        target(&["powershell", "-Command", "iwr -Uri http://orders.svc/$($env:COMPUTERNAME)/health"]),
        "http://orders.svc/$env:COMPUTERNAME/health"
    );
    assert_eq!(
        target(&["powershell", "-Command", "$h = 'orders.svc'; iwr http://$($h):8080/"]),
        "http://orders.svc:8080/"
    );
}

#[test]
fn test_netconnection_of_a_variable_follows_it() {
    // Its result alone never fails the probe, wherever the host comes from.
    warned(&["powershell", "-Command", "$h=\"db\"; Test-NetConnection $h"]);
    quiet(&[
        "powershell",
        "-Command",
        "$h=\"localhost\"; if (-not (tnc $h -Port 80 -InformationLevel Quiet)) { exit 1 }",
    ]);
    assert_eq!(
        target(&[
            "powershell",
            "-Command",
            "$h=\"db\"; if (-not (tnc $h -Port 5432 -InformationLevel Quiet)) { exit 1 }"
        ]),
        "db:5432"
    );
    // TcpClient arguments too.
    quiet(&[
        "powershell",
        "-Command",
        "$h = 'localhost'; $c = New-Object System.Net.Sockets.TcpClient($h, 8080)",
    ]);
    quiet(&["powershell", "-Command", "$c = New-Object System.Net.Sockets.TcpClient($target, 8080)"]);
}

#[test]
fn test_connection_counts_like_test_netconnection() {
    warned(&["powershell", "-Command", "Test-Connection orders-db -Count 1"]);
    warned(&["pwsh", "-c", "Test-Connection -TargetName orders-db -TcpPort 5432"]);
    let decided = "if (-not (Test-Connection orders-db -Count 1 -Quiet)) { exit 1 }";
    assert_eq!(target(&["powershell", "-Command", decided]), "orders-db");
    let tcp = "if (!(Test-Connection -TargetName orders-db -TcpPort 5432 -Quiet)) { throw 'down' }";
    assert_eq!(target(&["pwsh", "-c", tcp]), "orders-db:5432");
    quiet(&["powershell", "-Command", "if (-not (Test-Connection localhost -Count 1 -Quiet)) { exit 1 }"]);
    quiet(&["powershell", "-Command", "if (-not (Test-Connection $env:COMPUTERNAME -Quiet)) { exit 1 }"]);
}

#[test]
fn another_command_deciding_the_exit_does_not_make_a_bare_test_count() {
    warned(&[
        "powershell",
        "-Command",
        "Test-Connection orders-db -Count 1; $r = iwr http://localhost:8080/healthz -UseBasicParsing; if ($r.StatusCode -ne 200) { exit 1 }",
    ]);
}

#[test]
fn invoke_sqlcmd_reaches_its_server_instance() {
    let cases: &[(&str, &str)] = &[
        ("Invoke-Sqlcmd -ServerInstance orders-db -Query 'SELECT 1'", "orders-db"),
        ("Invoke-Sqlcmd 'SELECT 1' -ServerInstance 'tcp:orders-db,1433'", "tcp:orders-db,1433"),
        ("Invoke-Sqlcmd -ServerInstance orders-db\\SQLEXPRESS -Query 'SELECT 1'", "orders-db\\SQLEXPRESS"),
        (
            "Invoke-Sqlcmd -ConnectionString 'Server=tcp:orders-db,1433;Database=app;Encrypt=True' -Query 'SELECT 1'",
            "tcp:orders-db,1433",
        ),
        (
            "Invoke-Sqlcmd -ConnectionString \"Data Source=orders-db;Initial Catalog=app\" 'SELECT 1'",
            "orders-db",
        ),
        ("$s = 'orders-db'; Invoke-Sqlcmd -ServerInstance $s -Query 'SELECT 1'", "orders-db"),
    ];
    for (script, expect) in cases {
        assert_eq!(target(&["powershell", "-Command", script]), *expect, "{script}");
    }
    for script in [
        "Invoke-Sqlcmd -Query 'SELECT 1'",
        "Invoke-Sqlcmd -ServerInstance . -Query 'SELECT 1'",
        "Invoke-Sqlcmd -ServerInstance '(local)' -Query 'SELECT 1'",
        "Invoke-Sqlcmd -ServerInstance 'localhost,1433' -Query 'SELECT 1'",
        "Invoke-Sqlcmd -ServerInstance '(localdb)\\MSSQLLocalDB' -Query 'SELECT 1'",
        "Invoke-Sqlcmd -ServerInstance 'lpc:orders' -Query 'SELECT 1'",
        "Invoke-Sqlcmd -ServerInstance $env:COMPUTERNAME -Query 'SELECT 1'",
        "Invoke-Sqlcmd -ConnectionString 'Server=127.0.0.1;Database=app' -Query 'SELECT 1'",
        "Invoke-Sqlcmd -ServerInstance $server -Query 'SELECT 1'",
    ] {
        quiet(&["powershell", "-Command", script]);
    }
}

struct Files(&'static [(&'static str, &'static str)]);

impl super::super::ScriptFiles for Files {
    fn read(&self, path: &str) -> FileLookup {
        match self.0.iter().find(|(p, _)| *p == path) {
            Some((_, t)) => FileLookup::Text { text: t.to_string(), origin: "ConfigMap ns/probe".into() },
            None if path.starts_with("C:\\probe") => {
                FileLookup::Unreadable("ConfigMap ns/probe has no key".into())
            }
            None => FileLookup::NotOnVolume,
        }
    }
}

#[test]
fn script_files_from_volumes_are_analysed() {
    let files = Files(&[
        (
            "C:\\probe\\live.ps1",
            "$ErrorActionPreference = 'Stop'\r\nInvoke-Sqlcmd -ServerInstance orders-db -Query 'SELECT 1'\r\n",
        ),
        (
            "C:\\probe\\self.ps1",
            "$u = 'http://localhost:8080/healthz'\nInvoke-WebRequest $u -UseBasicParsing\n",
        ),
    ]);
    let options = super::super::Options {
        known_commands: vec![],
        files: Some(&files),
        budget: None,
        collect_all: false,
    };
    let run = |argv: &[&str]| super::super::analyze(&s(argv), &ExecEnv::default(), &options);
    for argv in [
        &["powershell.exe", "-NoProfile", "-File", "C:\\probe\\live.ps1"][..],
        &["pwsh", "-f", "C:\\probe\\live.ps1"],
        &["pwsh", "C:\\probe\\live.ps1"],
    ] {
        let d = run(argv).dependency.unwrap_or_else(|| panic!("{argv:?}"));
        assert_eq!(d.target, "orders-db");
        assert_eq!(d.script.as_deref(), Some("C:\\probe\\live.ps1 (ConfigMap ns/probe)"));
    }
    assert_eq!(run(&["pwsh", "-File", "C:\\probe\\self.ps1"]).dependency, None);
    // Unreadable: noted, not guessed; in the image: opaque.
    let out = run(&["pwsh", "-File", "C:\\probe\\gone.ps1"]);
    assert_eq!(out.dependency, None);
    assert_eq!(out.unresolved.iter().map(|u| u.path.as_str()).collect::<Vec<_>>(), ["C:\\probe\\gone.ps1"]);
    // In the image: not readable either, so noted too (issue #10: say so, never guess from
    // the file's name).
    for argv in [
        &["pwsh", "-File", "C:\\app\\check-db.ps1"][..],
        &[
            "powershell.exe",
            "-NoProfile",
            "-ExecutionPolicy",
            "Bypass",
            "-File",
            "C:\\app\\check-db.ps1",
            "-Host",
            "orders-db",
        ],
        &["pwsh", "-c", "& C:\\app\\check-db.ps1 orders-db"],
    ] {
        let out = run(argv);
        assert_eq!(out.dependency, None, "{argv:?}");
        let noted: Vec<(&str, &str)> =
            out.unresolved.iter().map(|u| (u.path.as_str(), u.reason.as_str())).collect();
        assert!(
            matches!(noted.as_slice(), [("C:\\app\\check-db.ps1", reason)] if reason.contains("in the image")),
            "{argv:?}: {noted:?}"
        );
    }
    // Windows PowerShell reads a bare first argument as a command, which runs the file.
    let d = run(&["powershell", "C:\\probe\\live.ps1"]).dependency.expect("run as a command");
    assert_eq!(d.target, "orders-db");
    let d = run(&["pwsh", "-c", "& 'C:\\probe\\live.ps1'; exit $LASTEXITCODE"]).dependency.expect("called");
    assert_eq!(d.target, "orders-db");
}

#[test]
fn encoded_commands_are_decoded() {
    let script = "iwr http://orders.svc/health";
    let utf16: Vec<u8> = script.encode_utf16().flat_map(u16::to_le_bytes).collect();
    let b64 = base64::engine::general_purpose::STANDARD.encode(utf16);
    assert_eq!(target(&["powershell", "-EncodedCommand", &b64]), "http://orders.svc/health");
    assert_eq!(target(&["pwsh", "-ec", &b64]), "http://orders.svc/health");
}

#[test]
fn code_that_never_runs_is_not_analysed() {
    let db = "Invoke-WebRequest http://orders.svc/health";
    // Break-it pass: each was denied as reaching orders.svc.
    quiet(&["pwsh", "-c", &format!("function Check {{ {db} }}; exit 0")]);
    quiet(&["pwsh", "-c", &format!("filter Check {{ {db} }}\nWrite-Output ok")]);
    quiet(&["pwsh", "-c", &format!("if ($false) {{ {db} }}")]);
    quiet(&["pwsh", "-c", &format!("if (-not $true) {{ {db} }} elseif (0) {{ {db} }}")]);
    quiet(&["pwsh", "-c", &format!("if ($true) {{ exit 0 }} else {{ {db} }}")]);
    quiet(&["pwsh", "-c", &format!("if ($null) {{ {db} }} elseif (1) {{ exit 0 }} else {{ {db} }}")]);
    quiet(&["pwsh", "-c", &format!("exit 0; {db}")]);
    quiet(&["pwsh", "-c", &format!("Write-Output ok\n  exit\n{db}")]);
    quiet(&["powershell", "-Command", &format!("return; {db}")]);
    // After a branch that surely runs and exits (break-it pass), or a chain whose every
    // branch exits.
    quiet(&["pwsh", "-c", &format!("if (-not $false) {{ exit 0 }}\n{db}")]);
    quiet(&["pwsh", "-c", &format!("if ($true) {{ Write-Output ok; return }}; {db}")]);
    quiet(&["pwsh", "-c", &format!("if ($x) {{ exit 0 }} elseif ($y) {{ exit 2 }} else {{ exit 1 }}\n{db}")]);
    // A keyword inside a string or a comment is text.
    quiet(&["pwsh", "-c", &format!("Write-Output 'if ($true) {{'; # exit\nexit 0; {db}")]);
    // Code that may run still counts: an unknown condition, an exit inside a block or after
    // `||`, a called function, a branch after a dead one.
    let fires: &[String] = &[
        format!("if ($x) {{ exit 0 }}\n{db}"),
        format!("if (Test-Path C:\\ok) {{ {db} }}"),
        format!("if ($false) {{ exit 0 }} else {{ {db} }}"),
        format!("if ($false) {{ exit 0 }} elseif ($y) {{ {db} }}"),
        format!("if ($false) {{ exit 0 }}; {db}"),
        format!("try {{ exit 0 }} catch {{ }}; {db}"),
        format!("Test-Path C:\\x || exit 0; {db}"),
        format!("function Check {{ {db} }}; Check; exit 0"),
        format!("function Check {{ {db} }}\n& Check"),
        format!("Write-Output 'exit'; {db}"),
        format!("if ($x) {{ exit 0 }} elseif ($y) {{ exit 1 }}; {db}"),
        format!("if ($true) {{ if ($x) {{ exit 0 }} }}; {db}"),
        format!("if ($x) {{ exit 0 }} else {{ Write-Output no }}; {db}"),
        format!("if ($true) {{ Write-Output 'exit' }}; {db}"),
        format!("$exit = 1; {db}"),
    ];
    for script in fires {
        assert_eq!(target(&["pwsh", "-c", script]), "http://orders.svc/health", "{script}");
    }
}

#[test]
fn branches_on_a_literal_env_value_follow_it() {
    let db = "Invoke-WebRequest http://orders.svc/health";
    let e = env(&[("MODE", EnvValue::Literal("standalone".into()))]);
    let script = format!("if ($env:MODE -eq 'standalone') {{ exit 0 }} else {{ {db} }}");
    quiet_in(&["pwsh", "-c", &script], &e);
    quiet_in(&["pwsh", "-c", &format!("if ($env:mode -ne \"STANDALONE\") {{ {db} }}")], &e);
    quiet_in(&["pwsh", "-c", &format!("if ('cluster' -eq $env:MODE) {{ {db} }}")], &e);
    // The other value, `-ceq` on another case, a value the script sets or an env value
    // not known at admission: the branch may run.
    let other = env(&[("MODE", EnvValue::Literal("cluster".into()))]);
    assert_eq!(target_in(&["pwsh", "-c", &script], &other), "http://orders.svc/health");
    let c = format!("if ($env:MODE -ceq 'Standalone') {{ exit 0 }} else {{ {db} }}");
    assert_eq!(target_in(&["pwsh", "-c", &c], &e), "http://orders.svc/health");
    let set = format!("$env:MODE = 'cluster'; {script}");
    assert_eq!(target_in(&["pwsh", "-c", &set], &e), "http://orders.svc/health");
    let unknown = env(&[("MODE", EnvValue::Unresolved)]);
    assert_eq!(target_in(&["pwsh", "-c", &script], &unknown), "http://orders.svc/health");
    assert_eq!(target(&["pwsh", "-c", &script]), "http://orders.svc/health");
}

#[test]
fn function_arguments_are_bound_to_parameters() {
    let positional = "function Check($u) { Invoke-WebRequest $u }; Check http://orders.svc:8080/";
    assert_eq!(target(&["pwsh", "-c", positional]), "http://orders.svc:8080/");
    let named = "function Check { param([string]$Uri, [int]$Timeout = 5)\n Invoke-WebRequest -Uri $Uri }\nCheck -Timeout 3 -Uri http://orders.svc/";
    assert_eq!(target(&["pwsh", "-c", named]), "http://orders.svc/");
    let prefix = "function Check([string]$Uri) { iwr $Uri }; Check -U:http://orders.svc/";
    assert_eq!(target(&["pwsh", "-c", prefix]), "http://orders.svc/");
    quiet(&["pwsh", "-c", "function Check($u) { Invoke-WebRequest $u }; Check http://localhost:8080/"]);
    // A parameter given nothing is not followed.
    quiet(&["pwsh", "-c", "function Check($u) { Invoke-WebRequest $u }; Check"]);
    // Recursion stops at the nesting bound.
    quiet(&["pwsh", "-c", "function F { F }; F"]);
}

#[test]
fn dotnet_web_clients_reach_their_url() {
    // Misses before.
    let fires: &[(&str, &str)] = &[
        ("(New-Object Net.WebClient).DownloadString('http://orders.svc/health')", "http://orders.svc/health"),
        (
            "$wc = New-Object System.Net.WebClient; $wc.DownloadData(\"http://orders.svc/x\")",
            "http://orders.svc/x",
        ),
        ("$u = 'http://orders.svc/'; (New-Object Net.WebClient).OpenRead([uri]$u)", "http://orders.svc/"),
        ("[System.Net.Http.HttpClient]::new().GetAsync('http://orders.svc/').Result", "http://orders.svc/"),
        (
            "$c = New-Object System.Net.Http.HttpClient; $c.GetStringAsync('http://orders.svc/').Wait()",
            "http://orders.svc/",
        ),
    ];
    for (script, want) in fires {
        assert_eq!(target(&["pwsh", "-c", script]), *want, "{script}");
    }
    quiet(&["pwsh", "-c", "(New-Object Net.WebClient).DownloadString('http://localhost:8080/health')"]);
    quiet(&["pwsh", "-c", "(New-Object Net.WebClient).DownloadString(\"http://$env:COMPUTERNAME:8080/\")"]);
    // A task nobody waits for fails nothing; an expression is not followed; dead code.
    quiet(&["pwsh", "-c", "[System.Net.Http.HttpClient]::new().GetAsync('http://orders.svc/')"]);
    quiet(&["pwsh", "-c", "(New-Object Net.WebClient).DownloadString($base + '/x')"]);
    quiet(&["pwsh", "-c", "exit 0; (New-Object Net.WebClient).DownloadString('http://orders.svc/')"]);
    // Without the class, a method of that name is something else.
    quiet(&["pwsh", "-c", "$x.DownloadString('http://orders.svc/')"]);
}

#[test]
fn resolve_dnsname_is_a_dns_lookup() {
    assert_eq!(target(&["pwsh", "-c", "Resolve-DnsName orders.svc"]), "orders.svc");
    assert_eq!(target(&["pwsh", "-c", "Resolve-DnsName -Name orders.svc -Type A"]), "orders.svc");
    assert_eq!(
        target(&["powershell", "-Command", "Resolve-DnsName orders.svc -Server 10.96.0.10"]),
        "orders.svc (server 10.96.0.10)"
    );
    quiet(&["pwsh", "-c", "Resolve-DnsName $env:COMPUTERNAME"]);
    quiet(&["pwsh", "-c", "Resolve-DnsName localhost"]);
    quiet(&["pwsh", "-c", "Resolve-DnsName orders.svc -Server 127.0.0.1"]);
    quiet(&["pwsh", "-c", "Resolve-DnsName orders.svc -CacheOnly"]);
    quiet(&["pwsh", "-c", "Resolve-DnsName orders.svc -SomeNewParameter x"]);
}

/// A script whose variable doubles itself `doublings` times (`form` is one doubling of `$a`),
/// then reaches `http://orders.svc/` with it.
fn doubling(form: &str, doublings: usize) -> String {
    let var = if form.contains("env:") { "$env:A" } else { "$a" };
    format!(
        "{var}='x'; {} Invoke-WebRequest \"http://orders.svc/{var}\"",
        format!("{form}; ").repeat(doublings)
    )
}

/// Break-it pass: `$a += $a` 40 times made a terabyte (the process aborted on a failed
/// allocation). Values copied count against the expansion budget as a shell's do: the analysis
/// stops with a note, and nothing found in a value cut short counts.
#[test]
fn a_variable_that_doubles_itself_is_bounded_and_noted_not_denied() {
    use super::super::{MAX_EXPANSION_BYTES, Options, analyze};
    let forms = ["$a += $a", "$a = $a + $a", "$a = \"$a$a\"", "$env:A = $env:A + $env:A"];
    for form in forms {
        let script = doubling(form, 40);
        let outcome = analyze(&s(&["pwsh", "-c", &script]), &ExecEnv::default(), &Options::default());
        assert_eq!(outcome.dependency, None, "{form}: a value cut short is never a finding");
        assert_eq!(outcome.unresolved.len(), 1, "{form}: {:?}", outcome.unresolved);
        assert!(outcome.unresolved[0].over_bound, "{form}: {:?}", outcome.unresolved);
        assert!(outcome.unresolved[0].reason.contains("expand past"), "{form}: {:?}", outcome.unresolved);
        // The text made stays near the budget (the last value copied is at most its size).
        let e = ExecEnv::default();
        let mut ctx = Ctx::new(&e);
        let _ = ctx.powershell(&s(&["-c", &script]), Edition::Core, 0);
        assert!(ctx.over_budget.get(), "{form}");
        assert!(ctx.expanded.get() <= 3 * MAX_EXPANSION_BYTES, "{form}: {} bytes", ctx.expanded.get());
        // A few doublings (1 KiB) are still analysed: the request is found.
        let found = target(&["pwsh", "-c", &doubling(form, 10)]);
        assert!(found.starts_with(&format!("http://orders.svc/{}", "x".repeat(64))), "{form}: {found}");
    }
    // `+=` copies the old value: counted as the text it makes.
    let e = ExecEnv::default();
    let mut ctx = Ctx::new(&e);
    let _ = ctx.powershell(&s(&["-c", "$a = 'xxxxxxxxxx'; $a += '.'; $a += '.'"]), Edition::Core, 0);
    assert_eq!(ctx.expanded.get(), 10 + 11);
    // A plain script that builds its URL still denies.
    assert_eq!(
        target(&[
            "pwsh",
            "-c",
            "$u = 'http://orders.svc'; $u += '/health'; Invoke-WebRequest $u -UseBasicParsing"
        ]),
        "http://orders.svc/health"
    );
}

/// `Invoke-Expression` of a literal runs it as PowerShell, as `eval` of a literal in sh; any
/// other text is noted, never guessed.
#[test]
fn invoke_expression_of_a_literal_is_analysed() {
    for script in [
        "iex 'Invoke-WebRequest http://orders.svc/'",
        "Invoke-Expression \"Invoke-WebRequest http://orders.svc/\"",
        "iex -Command 'Invoke-WebRequest -UseBasicParsing http://orders.svc/'",
        "$h = 'orders.svc'; iex \"Invoke-WebRequest http://$h/\"",
        "iex 'iex ''Invoke-WebRequest http://orders.svc/'''",
    ] {
        assert_eq!(target(&["pwsh", "-Command", script]), "http://orders.svc/", "{script}");
    }
    quiet(&["pwsh", "-Command", "iex 'Invoke-WebRequest http://localhost:8080/health'"]);
    let o = super::super::analyze(
        &s(&["pwsh", "-Command", "Invoke-Expression $probe"]),
        &ExecEnv::default(),
        &super::super::Options::default(),
    );
    assert_eq!(o.dependency, None);
    assert!(o.unresolved.iter().any(|u| u.path == "Invoke-Expression ..."), "{:?}", o.unresolved);
}

/// A dependency whose result fails the probe (a denial): its target.
#[track_caller]
fn denied(argv: &[&str]) -> String {
    match find_dependency(&s(argv), &ExecEnv::default()) {
        Some(d) if d.uncoupled.is_none() => d.target,
        other => panic!("expected a dependency that fails the probe for {argv:?}, got {other:?}"),
    }
}

/// Issue #10: only the `-ErrorAction` values that go on mask an error (about_CommonParameters:
/// `Continue` "continues executing", `SilentlyContinue`, `Ignore`; by number 2, 0, 4). `Inquire`
/// (3) "prompts you for confirmation before continuing", which a probe cannot answer; `Suspend`
/// (5) "is only available for workflows which aren't supported in PowerShell 6 and beyond";
/// `Break` (6) "Enters the debugger": none lets the statement be taken as one whose failure
/// passes. (No PowerShell here: the verdicts rest on those docs.)
#[test]
fn only_error_actions_that_go_on_mask_an_error() {
    for ea in [
        "-ErrorAction Inquire",
        "-ErrorAction Suspend",
        "-EA:3",
        "-ea 5",
        "-ErrorAction Break",
        "-ErrorAct Inquire",
    ] {
        for tail in ["exit 0", "Invoke-WebRequest http://localhost:8080/"] {
            let script = format!("Invoke-WebRequest http://orders.svc/ {ea}; {tail}");
            assert_eq!(denied(&["pwsh", "-Command", &script]), "http://orders.svc/", "{script}");
        }
    }
    for ea in
        ["-ErrorAction SilentlyContinue", "-ErrorAction Continue", "-EA Ignore", "-ea:0", "-ErrorAct Ignore"]
    {
        let script = format!("Invoke-WebRequest http://orders.svc/ {ea}; exit 0");
        assert_eq!(warned(&["pwsh", "-Command", &script]), "http://orders.svc/", "{script}");
    }
}

/// Issue #10: a loop waiting on a connection test never ends while the dependency is down, and the
/// kubelet counts the probe's timeout as a failure (about_While, about_Do: the loop runs while its
/// condition holds) — as sh's `until pg_isready -h db; do sleep 1; done` is denied. A test whose
/// result decides nothing stays a warning.
#[test]
fn a_loop_waiting_on_a_dependency_is_denied() {
    for script in [
        "while (-not (Test-NetConnection orders-db -Port 5432 -InformationLevel Quiet)) { Start-Sleep 1 }",
        "do { Start-Sleep 1 } until (Test-NetConnection orders-db -Port 5432 -InformationLevel Quiet)",
        "do { Start-Sleep 1 } while (-not (tnc orders-db -Port 5432 -InformationLevel Quiet)); exit 0",
        "while ($true) { if (Test-NetConnection orders-db -Port 5432 -InformationLevel Quiet) { break }; Start-Sleep 1 }",
    ] {
        assert_eq!(denied(&["pwsh", "-Command", script]), "orders-db:5432", "{script}");
    }
    for script in [
        "while ($true) { try { Invoke-WebRequest http://orders.svc/ -UseBasicParsing; break } catch { Start-Sleep 1 } }",
        "while ($true) { try { Invoke-WebRequest http://orders.svc/ -UseBasicParsing; break } catch { Start-Sleep 1 } }; exit 0",
    ] {
        assert_eq!(denied(&["pwsh", "-Command", script]), "http://orders.svc/", "{script}");
    }
    // A loop that waits on something else: the test's result still decides nothing.
    let script = "$i = 0; while ($i -lt 3) { $i++ }; Test-NetConnection orders-db -Port 5432";
    assert_eq!(warned(&["pwsh", "-Command", script]), "orders-db:5432");
    warned(&["pwsh", "-Command", "Test-NetConnection orders-db -Port 5432 -InformationLevel Quiet"]);
}

/// Issue #10 (false deny): `Invoke-Expression` of a literal runs its text in place
/// (Microsoft.PowerShell.Utility, Invoke-Expression), so its statement is judged where it stands,
/// like the same statement written out: before `exit 0` or a local check, a warning.
#[test]
fn an_invoke_expression_literal_is_judged_in_place() {
    for script in [
        "iex 'Invoke-WebRequest http://orders.svc/'; exit 0",
        "Invoke-Expression -Command \"Invoke-WebRequest http://orders.svc/\"; exit 0",
        "iex 'Invoke-WebRequest http://orders.svc/'; Invoke-WebRequest http://localhost:8080/",
        "iex 'Invoke-WebRequest ''http://orders.svc/'''; exit 0",
    ] {
        assert_eq!(warned(&["pwsh", "-Command", script]), "http://orders.svc/", "{script}");
        let written = script.replace("iex '", "").replace("Invoke-Expression -Command \"", "");
        let written = written.replacen("'; ", "; ", 1).replacen("\"; ", "; ", 1).replace("''", "'");
        assert_eq!(warned(&["pwsh", "-Command", &written]), "http://orders.svc/", "{written}");
    }
    for script in [
        "iex 'Invoke-WebRequest http://orders.svc/'",
        "iex 'Invoke-WebRequest http://orders.svc/; exit 1'; exit 0",
        // A value known only at run time is not a literal: kept as it was.
        "$u = 'http://orders.svc/'; iex \"Invoke-WebRequest $u\"; exit 0",
    ] {
        assert_eq!(denied(&["pwsh", "-Command", script]), "http://orders.svc/", "{script}");
    }
}
