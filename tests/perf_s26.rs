//! s26 (issue 9's speed bar): per-evaluation work cut without changing a verdict.
//!
//! - The handler summary of an exec command (`exec `bash … if …` (a script, shown by its
//!   programs only)`, in the `liveness-matches-readiness` warning) is kept in the caller's
//!   `engine::ParseCache` by the command's words: a warm evaluation reads it, and says what the
//!   cold one says, byte for byte; the cache keeps none on the cold path and stays within its
//!   bounds under thousands of distinct commands.
//! - `exec-probe-replaceable` no longer splits a `sh -c` command that cannot run curl or wget: it
//!   still finds every spelling the shell turns into `curl` (`cu''rl`, `c\url`, a line
//!   continuation inside the word) and stays quiet for the Airflow scheduler's probe.
//! - A dependency's command, kept at 80 characters, has only the words that reach the cut
//!   redacted: the same text, secrets still hidden.

use probegate::engine::{
    self, Evaluation, NoConfigMaps, PARSE_CACHE_ENTRIES, PARSE_CACHE_TEXT_BYTES, ParseCache, Workload,
    WorkloadKind,
};
use probegate::policy::{Policy, RuleId};
use serde_json::json;

/// A Pod whose one container runs `argv` as both its liveness and readiness exec probe (the same
/// handler and windows: `liveness-matches-readiness` warns, showing the handler).
fn same_probes_pod(argv: &[&str]) -> Workload {
    let probe = json!({"exec": {"command": argv}, "periodSeconds": 10, "failureThreshold": 3});
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop"},
        "spec": {"containers": [{"name": "db", "image": "mysql:8",
            "env": [{"name": "MYSQL_ROOT_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}],
            "livenessProbe": probe, "readinessProbe": probe}]}});
    Workload::from_value(WorkloadKind::Pod, &pod).unwrap()
}

/// A Pod whose liveness probe runs `sh -c script`.
fn liveness_pod(script: &str) -> Workload {
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop"},
        "spec": {"containers": [{"name": "web", "image": "app:1",
            "livenessProbe": {"exec": {"command": ["sh", "-c", script]}}}]}});
    Workload::from_value(WorkloadKind::Pod, &pod).unwrap()
}

fn warm(w: &Workload, cache: &mut ParseCache) -> Evaluation {
    engine::evaluate_cached(&Policy::default().rules, w, &[], &NoConfigMaps, "", cache)
}

fn cold(w: &Workload) -> Evaluation {
    engine::evaluate(&Policy::default().rules, w)
}

fn message(e: &Evaluation, rule: RuleId) -> String {
    let found: Vec<_> = e.findings.iter().filter(|f| f.rule == rule).collect();
    assert_eq!(found.len(), 1, "{:?}", e.findings);
    found[0].message.clone()
}

/// The MySQL primary's script (bitnami chart), its password through a variable.
const MYSQL_SCRIPT: &str = "password_aux=\"${MYSQL_ROOT_PASSWORD:-}\"\nif [[ -f \"${MYSQL_ROOT_PASSWORD_FILE:-}\" ]]; then\n    password_aux=$(cat \"$MYSQL_ROOT_PASSWORD_FILE\")\nfi\nmysqladmin status -uroot -p\"${password_aux}\"\n";

#[test]
fn a_warm_evaluation_reads_the_handler_summary_the_cold_one_makes() {
    let w = same_probes_pod(&["/bin/bash", "-ec", MYSQL_SCRIPT]);
    let expected = format!("{:?}", cold(&w));
    let shown = message(&cold(&w), RuleId::LivenessMatchesReadiness);
    assert!(shown.ends_with("(both: exec `bash … if …` (a script, shown by its programs only))"), "{shown}");
    let mut cache = ParseCache::new();
    assert_eq!(cache.summaries_kept(), 0);
    for round in 0..3 {
        assert_eq!(format!("{:?}", warm(&w, &mut cache)), expected, "round {round}");
        assert_eq!(cache.summaries_kept(), 1, "round {round}");
    }
    // The cold path's cache keeps none.
    let mut cold_cache = ParseCache::cold();
    assert_eq!(format!("{:?}", warm(&w, &mut cold_cache)), expected);
    assert_eq!(cold_cache.summaries_kept(), 0);
}

/// The summary is the command's alone: two commands that differ only in a secret or in the
/// word after `-c` get their own, each what a cold evaluation shows, and no secret is shown.
#[test]
fn each_command_gets_its_own_summary_and_no_secret_is_shown() {
    let commands: Vec<Vec<String>> = vec![
        vec!["sh".into(), "-c".into(), "P=S3cr3tPw1; redis-cli -a $P ping | grep -q PONG".into()],
        vec!["sh".into(), "-c".into(), "P=S3cr3tPw2; redis-cli -a $P ping | grep -q PONG".into()],
        vec!["sh".into(), "-ec".into(), "P=S3cr3tPw3; mysqladmin -p$P status".into()],
        vec![
            "bash".into(),
            "-c".into(),
            "T=S3cr3tPw4; curl -H \"Authorization: Bearer $T\" localhost".into(),
        ],
        vec!["sh".into(), "-c".into(), "redis-cli -a S3cr3tPw5 ping".into()],
    ];
    let mut cache = ParseCache::new();
    for round in 0..2 {
        for argv in &commands {
            let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
            let w = same_probes_pod(&argv);
            let e = warm(&w, &mut cache);
            assert_eq!(format!("{e:?}"), format!("{:?}", cold(&w)), "{argv:?} round {round}");
            let shown = message(&e, RuleId::LivenessMatchesReadiness);
            assert!(!shown.contains("S3cr3tPw"), "{shown}");
        }
    }
    assert_eq!(cache.summaries_kept(), commands.len());
}

#[test]
fn kept_summaries_stay_within_the_cache_bounds() {
    let mut cache = ParseCache::new();
    for i in 0..3000 {
        let script =
            format!("P=pw{i}; redis-cli -h 127.0.0.1 -a $P ping | grep -q PONG # {}", "x".repeat(i % 300));
        let w = same_probes_pod(&["sh", "-c", &script]);
        warm(&w, &mut cache);
        assert!(cache.summaries_kept() <= PARSE_CACHE_ENTRIES, "{i}: {}", cache.summaries_kept());
        assert!(cache.summary_bytes() <= PARSE_CACHE_TEXT_BYTES, "{i}: {}", cache.summary_bytes());
    }
    assert!(cache.summaries_kept() > 0);
    // A command over an eighth of the text bound is not kept.
    let mut cache = ParseCache::new();
    let long =
        format!("P=pw; redis-cli -a $P ping | grep -q PONG # {}", "y".repeat(PARSE_CACHE_TEXT_BYTES / 8));
    warm(&same_probes_pod(&["sh", "-c", &long]), &mut cache);
    assert_eq!(cache.summaries_kept(), 0);
}

/// The spellings the shell turns into `curl` are still found (bash and dash run `cu''rl`, `c\url`
/// and `cu\<newline>rl` as `curl`); a command that names no HTTP client is not suggested.
#[test]
fn exec_probe_replaceable_still_finds_curl_however_it_is_spelt() {
    for script in [
        "curl -fsS http://localhost:8080/healthz",
        "cu''rl -fsS http://localhost:8080/healthz",
        "cu\"\"rl -fsS http://localhost:8080/healthz",
        "c\\url -fsS http://localhost:8080/healthz",
        "cu\\\nrl -fsS http://localhost:8080/healthz",
        "wget -q -O /dev/null http://127.0.0.1:8080/ || exit 1",
    ] {
        let e = cold(&liveness_pod(script));
        assert!(message(&e, RuleId::ExecProbeReplaceable).contains("httpGet"), "{script}: {:?}", e.findings);
        let mut cache = ParseCache::new();
        assert_eq!(format!("{:?}", warm(&liveness_pod(script), &mut cache)), format!("{e:?}"));
    }
    for script in [
        "CONNECTION_CHECK_MAX_COUNT=0 AIRFLOW__LOGGING__LOGGING_LEVEL=ERROR exec /entrypoint \\\nairflow jobs check --job-type SchedulerJob --local",
        "/bin/grpc_health_probe -addr=:7000",
        "cat /tmp/healthy",
    ] {
        let e = cold(&liveness_pod(script));
        assert!(
            e.findings.iter().all(|f| f.rule != RuleId::ExecProbeReplaceable),
            "{script}: {:?}",
            e.findings
        );
    }
}

/// A dependency's command is cut at 80 characters as before: the words past the cut are not
/// shown, a password within it is redacted, and a short command is shown whole.
#[test]
fn a_dependency_command_is_cut_at_80_characters_with_its_secrets_redacted() {
    let long = "redis-cli -h redis.cache.svc -a S3cr3tPw9 --no-auth-warning ping | grep -q PONG && echo this-is-past-the-cut-and-more-words-here";
    let e = cold(&liveness_pod(long));
    let m = message(&e, RuleId::LivenessDependency);
    assert!(!m.contains("S3cr3tPw9"), "{m}");
    assert!(!m.contains("past-the-cut"), "{m}");
    let deps =
        engine::liveness_dependencies(&Policy::default().rules, &liveness_pod(long), &[], &NoConfigMaps, "");
    assert!(deps.is_empty() || deps.iter().all(|(_, d)| d.iter().all(|t| !t.contains("S3cr3tPw9"))));
    let short = "redis-cli -h redis.cache.svc -a S3cr3tPw8 ping";
    let m = message(&cold(&liveness_pod(short)), RuleId::LivenessDependency);
    assert!(m.contains("redis-cli -h redis.cache.svc -a *** ping"), "{m}");
    assert!(!m.contains("S3cr3tPw8"), "{m}");
}
