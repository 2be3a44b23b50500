//! Tests of the cmd.exe analysis, through [`super::super::find_dependency`]: `%VAR%` and
//! delayed expansion, `for` variables, `set` and separators, carets and quoted command lines.

use super::super::{EnvValue, ExecEnv, find_dependency};
use super::*;

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

fn env(vars: &[(&str, EnvValue)], has_env_from: bool) -> ExecEnv {
    ExecEnv {
        vars: vars.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
        has_env_from,
        ..Default::default()
    }
}

#[track_caller]
fn target(argv: &[&str], e: &ExecEnv) -> String {
    match find_dependency(&s(argv), e) {
        Some(d) => d.target,
        None => panic!("expected a dependency for {argv:?}"),
    }
}

#[track_caller]
fn quiet(argv: &[&str], e: &ExecEnv) {
    if let Some(d) = find_dependency(&s(argv), e) {
        panic!("expected no dependency for {argv:?}, got {d:?}");
    }
}

#[test]
fn percent_variables_are_read_before_the_line_runs() {
    let none = ExecEnv::default();
    // The break-it pass's false deny: `%URL%` is expanded before `set` runs; nothing names a
    // host the analysis knows, so no dependency.
    quiet(&["cmd", "/c", "set URL=http://localhost:8080/ && curl -f %URL%"], &none);
    quiet(&["cmd.exe", "/C", "curl -f %HEALTH_URL%"], &none);
    quiet(&["cmd", "/c", "curl -f %URL:~0,30%"], &none);
    // Even with envFrom, a variable the line sets itself is not guessed from a ConfigMap.
    quiet(&["cmd", "/c", "set URL=http://localhost/ && curl -f %URL%"], &env(&[], true));
    // From the container's env: known.
    let e = env(&[("API_URL", EnvValue::Literal("http://orders.svc:8080/health".into()))], false);
    assert_eq!(target(&["cmd", "/c", "curl -f %api_url%"], &e), "http://orders.svc:8080/health");
    // cmd reads %URL% before `set` runs: the container's value is what curl gets.
    let e = env(&[("URL", EnvValue::Literal("http://orders.svc/health".into()))], false);
    assert_eq!(
        target(&["cmd", "/c", "set URL=http://localhost/ && curl -f %URL%"], &e),
        "http://orders.svc/health"
    );
    let e = env(&[("URL", EnvValue::Literal("http://localhost:8080/health".into()))], false);
    quiet(&["cmd", "/c", "curl -f %URL%"], &e);
    // Env values unknown at admission are treated as in a shell script.
    let e = env(&[("DB_HOST", EnvValue::Unresolved)], false);
    assert!(target(&["cmd", "/c", "ping -n 1 %DB_HOST%"], &e).contains("%DB_HOST%"));
    assert!(target(&["cmd", "/c", "ping -n 1 %DB_HOST%"], &env(&[], true)).contains("%DB_HOST%"));
    // This Pod.
    quiet(&["cmd", "/c", "curl -f http://%COMPUTERNAME%:8080/healthz"], &none);
    quiet(
        &["cmd", "/c", "curl -f http://%POD_IP%:8080/healthz"],
        &env(&[("POD_IP", EnvValue::PodIp)], false),
    );
    // Literal hosts still count.
    assert_eq!(
        target(&["cmd", "/c", "set X=1 && curl -f http://orders.svc/health"], &none),
        "http://orders.svc/health"
    );
}

#[test]
fn for_loop_variables_are_not_followed() {
    let none = ExecEnv::default();
    // Fresh-user pass: each was denied as reaching `http://%i:8080/healthz`.
    quiet(&["cmd", "/c", "for /f %i in ('hostname') do curl.exe -f http://%i:8080/healthz"], &none);
    quiet(&["cmd", "/c", "for /f %%h in ('hostname') do curl.exe -f http://%%h:8080/healthz"], &none);
    quiet(&["cmd", "/c", "for %h in (localhost 127.0.0.1) do curl.exe -f http://%h:8080/"], &none);
    // Without `for`, `%i` is text (in a host it is no name at all: not a dependency).
    assert_eq!(target(&["cmd", "/c", "curl.exe -f http://db:8080/%i"], &none), "http://db:8080/%i");
    quiet(&["cmd", "/c", "curl.exe -f http://%i:8080/"], &none);
}

/// `set A=!A!!A!` doubles A at each command: 40 of them made a terabyte. Values copied count
/// against the expansion budget: not analysed, noted, never a finding.
#[test]
fn a_variable_that_doubles_itself_is_bounded_and_noted_not_denied() {
    use super::super::{Options, analyze};
    let none = ExecEnv::default();
    let line = |n: usize| format!("set A=x& {}curl -f http://orders.svc/!A!", "set A=!A!!A!& ".repeat(n));
    let outcome = analyze(&s(&["cmd", "/v:on", "/c", &line(40)]), &none, &Options::default());
    assert_eq!(outcome.dependency, None);
    assert_eq!(outcome.unresolved.len(), 1, "{:?}", outcome.unresolved);
    assert!(outcome.unresolved[0].reason.contains("expand past"), "{:?}", outcome.unresolved);
    // A few doublings are still analysed.
    let found = target(&["cmd", "/v:on", "/c", &line(10)], &none);
    assert!(found.starts_with(&format!("http://orders.svc/{}", "x".repeat(64))), "{found}");
}

#[test]
fn delayed_expansion_sees_earlier_sets() {
    let none = ExecEnv::default();
    quiet(&["cmd", "/v:on", "/c", "set URL=http://localhost:8080/ && curl -f !URL!"], &none);
    assert_eq!(
        target(&["cmd", "/V:ON", "/c", "set URL=http://orders.svc/health&& curl -f !URL!"], &none),
        "http://orders.svc/health"
    );
    assert_eq!(
        target(&["cmd", "/v:on", "/c", "set \"U=http://orders.svc/health\" & curl -f !U!"], &none),
        "http://orders.svc/health"
    );
    quiet(&["cmd", "/v:on", "/c", "set /p U=<C:\\url.txt & curl -f !U!"], &none);
    quiet(&["cmd", "/v:on", "/c", "curl -f !UNSET!"], &none);
    // Without /v:on, `!` is literal.
    quiet(&["cmd", "/c", "set URL=http://orders.svc/ && curl -f !URL!"], &none);
}

#[test]
fn set_commands_and_separators_are_read() {
    assert_eq!(set_command("set URL=http://x/ "), Some(("url".into(), Some("http://x/".into()))));
    assert_eq!(set_command(" (SET \"U=a b\" "), Some(("u".into(), Some("a b".into()))));
    assert_eq!(set_command("set /a N=1+2"), Some(("n".into(), None)));
    assert_eq!(set_command("setx U 1"), None);
    assert_eq!(set_command("set"), None);
    assert_eq!(set_command("set A B=x"), None);
    assert_eq!(set_command("set =x"), None);
    let c = commands("a && b ^& c | \"d & e\" || f");
    let seps: Vec<&str> = c.iter().map(|(_, s)| s.as_str()).collect();
    assert_eq!(seps, ["&&", "|", "||", ""]);
    assert_eq!(c[1].0, " b ^& c ");
    // Inside double quotes `^` is an ordinary character.
    assert_eq!(commands("curl \"x^\" & y").len(), 2);
}

#[test]
fn caret_escapes_and_continues_lines() {
    let none = ExecEnv::default();
    // Break-it pass: denied as reaching `http://local^host:8080/`.
    quiet(&["cmd", "/c", "curl.exe -f http://local^host:8080/"], &none);
    quiet(&["cmd", "/c", "curl.exe -f http://localhost:8080/ ^\n  --max-time 3"], &none);
    quiet(&["cmd", "/c", "curl.exe -f http://localhost:8080/ ^\r\n  --max-time 3"], &none);
    // `^&` is a character of the word, not a separator (the `&b` after it is still the URL's: a
    // shown target masks query values since s26); `^^` is `^`.
    assert_eq!(
        target(&["cmd", "/c", "curl.exe -f http://orders.svc/?a=1^&b=2"], &none),
        "http://orders.svc/?a=***&b=***"
    );
    assert_eq!(target(&["cmd", "/c", "curl.exe -f http://orders.svc/^^x"], &none), "http://orders.svc/^x");
    // Inside double quotes `^` is an ordinary character.
    assert_eq!(target(&["cmd", "/c", "curl.exe -f \"http://orders.svc/^x\""], &none), "http://orders.svc/^x");
    // A continued line still reaches what it names.
    assert_eq!(target(&["cmd", "/c", "curl.exe -f ^\n http://orders.svc/"], &none), "http://orders.svc/");
}

#[test]
fn quoted_command_lines_lose_their_outer_quotes() {
    let none = ExecEnv::default();
    // `cmd /?`: the first and the last quote are removed (misses before).
    for argv in [
        &["cmd", "/c", "\"curl.exe -f http://orders.svc:8080/\""][..],
        &["cmd", "/S", "/C", "\"curl.exe -f http://orders.svc:8080/\""],
        &["cmd.exe", "/s", "/c", "\"\"C:\\Program Files\\curl\\curl.exe\" -f http://orders.svc:8080/\""],
    ] {
        assert_eq!(target(argv, &none), "http://orders.svc:8080/", "{argv:?}");
    }
    quiet(&["cmd", "/c", "\"curl.exe -f http://localhost:8080/\""], &none);
    assert_eq!(strip_cmd_quotes("\"a b\" c", false), "a b c");
    assert_eq!(strip_cmd_quotes("\"a\" \"b\" c", true), "a\" \"b c");
    // Rule 1: one quoted program name (with whitespace, no specials) keeps its quotes.
    assert_eq!(strip_cmd_quotes("\"C:\\Program Files\\x.exe\"", false), "\"C:\\Program Files\\x.exe\"");
    assert_eq!(strip_cmd_quotes("\"C:\\Program Files\\x.exe\"", true), "C:\\Program Files\\x.exe");
    assert_eq!(strip_cmd_quotes("curl \"x\"", false), "curl \"x\"");
}

#[test]
fn cmd_syntax_is_read_as_cmd() {
    let none = ExecEnv::default();
    // `if` and `for` were syntax errors for the shell reader: not analysed (misses).
    let fires: &[&[&str]] = &[
        &["cmd", "/c", "if errorlevel 1 curl.exe -f http://orders.svc/"],
        &["cmd", "/c", "if not exist C:\\ready curl.exe -f http://orders.svc/"],
        &["cmd", "/c", "if exist C:\\ready (curl.exe -f http://orders.svc/) else (exit 1)"],
        &["cmd", "/c", "if defined X (exit 0) else (curl.exe -f http://orders.svc/)"],
        &["cmd", "/c", "for /f %i in ('hostname') do curl.exe -f http://orders.svc/"],
        &["cmd", "/c", "for /l %n in (1,1,3) do (curl.exe -f http://orders.svc/ && exit 0)"],
        &["cmd", "/c", "@call curl.exe -f http://orders.svc/"],
        &["cmd", "/c", "curl.exe -f http://orders.svc/ >nul 2>&1 || exit /b 1"],
        &["cmd", "/c", "C:\\tools\\curl.exe -f http://orders.svc/"],
        &["cmd", "/c", "echo it's & curl.exe -f http://orders.svc/"],
        // `;`, `,` and `=` separate words like a blank (cmd's line parser, phase 2: "token
        // delimiters are <space>,;=", dostips.com, "How does the Windows Command Interpreter
        // (CMD.EXE) parse scripts?"), so a command after `@` or after an `if` condition may
        // start behind one (kills the mutant `cmd.rs:152:89`, `||` made `&&`).
        &["cmd", "/c", "@;curl.exe -f http://orders.svc/"],
        &["cmd", "/c", "@=curl.exe -f http://orders.svc/"],
        &["cmd", "/c", "if not exist C:\\ready ;curl.exe -f http://orders.svc/"],
        &["cmd", "/c", "if not exist C:\\ready =curl.exe -f http://orders.svc/"],
        &["cmd", "/c", "@,curl.exe -f http://orders.svc/"],
    ];
    for argv in fires {
        assert_eq!(target(argv, &none), "http://orders.svc/", "{argv:?}");
    }
    quiet(&["cmd", "/c", "if errorlevel 1 curl.exe -f http://localhost:8080/"], &none);
    quiet(&["cmd", "/c", "@echo off & rem curl.exe -f http://orders.svc/ & echo ok"], &none);
    // Break-it pass: denied as reaching `;`.
    quiet(&["cmd", "/c", "curl.exe -f http://localhost/ ; echo done"], &none);
    quiet(&["cmd", "/c", "if 1==2 curl.exe -f http://orders.svc/ & curl.exe http://orders.svc/"], &none);
    quiet(&["cmd", "/c", "if \"a\"==\"a\" (exit 0) else (curl.exe -f http://orders.svc/)"], &none);
    quiet(&["cmd", "/c", "if /i a EQU A (exit 0) else curl.exe -f http://orders.svc/"], &none);
    // `&` runs the next command after the first: the last one decides the exit.
    let d = find_dependency(&s(&["cmd", "/c", "curl.exe -f http://orders.svc/ & exit 0"]), &none);
    assert!(d.is_some_and(|d| d.uncoupled.is_some()));
    // A branch decided by a literal env value.
    let e = env(&[("MODE", EnvValue::Literal("standalone".into()))], false);
    let line = "if \"%MODE%\"==\"standalone\" (exit 0) else (curl.exe -f http://orders.svc/)";
    quiet(&["cmd", "/c", line], &e);
    let other = env(&[("MODE", EnvValue::Literal("cluster".into()))], false);
    assert_eq!(target(&["cmd", "/c", line], &other), "http://orders.svc/");
    assert_eq!(target(&["cmd", "/c", line], &none), "http://orders.svc/");
}
