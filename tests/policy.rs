//! The policy file: overrides and their precedence, exemptions, validation errors with locations,
//! the shipped examples, the JSON Schema in sync, and the `probegate policy` commands.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use probegate::policy::{self, Action, Mode, RuleId};

const HEAD: &str = "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\n";

fn parse(body: &str) -> policy::Policy {
    policy::parse(&format!("{HEAD}{body}"), "p.yaml").unwrap_or_else(|e| panic!("{e}"))
}

fn err(body: &str) -> policy::PolicyError {
    policy::parse(&format!("{HEAD}{body}"), "p.yaml").unwrap_err()
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

const ROLLOUT: &str = r#"mode: audit
overrides:
  - name: opted-in
    namespaceSelector: {matchLabels: {probegate.dev/enforce: "true"}}
    mode: enforce
  - name: payments
    namespaces: ["payments", "payments-*"]
    mode: enforce
    rules:
      readiness-missing: {action: deny}
  - name: legacy-billing
    namespaces: ["billing-*", "legacy"]
    namespaceSelector:
      matchLabels: {probegate.dev/tier: legacy}
    mode: audit
    rules:
      startup-probe: {budgetSeconds: 300}
      prestop-sleep: {action: off}
"#;

#[test]
fn overrides_match_by_every_selector_given_and_merge_in_file_order() {
    let p = parse(ROLLOUT);
    // No override: top-level audit.
    let e = p.effective("web", Some(&labels(&[])));
    assert_eq!((e.mode, e.overrides.len()), (Mode::Audit, 0));
    // Name glob.
    let e = p.effective("payments-eu", None);
    assert_eq!(e.mode, Mode::Enforce);
    assert_eq!(e.overrides, vec!["payments"]);
    assert_eq!(e.rules.readiness_missing.action, Action::Deny);
    // Label selector: needs labels.
    assert_eq!(p.effective("shop", None).mode, Mode::Audit);
    assert_eq!(p.effective("shop", Some(&labels(&[("probegate.dev/enforce", "true")]))).mode, Mode::Enforce);
    // Both selectors given: both must match.
    let legacy = labels(&[("probegate.dev/tier", "legacy"), ("probegate.dev/enforce", "true")]);
    let e = p.effective("billing-eu", Some(&legacy));
    assert_eq!(e.overrides, vec!["opted-in", "legacy-billing"]);
    assert_eq!(e.mode, Mode::Audit, "later override wins");
    assert_eq!(e.rules.startup_probe.budget_seconds, 300);
    assert_eq!(e.rules.startup_probe.period_seconds, 5, "fields not set keep the value so far");
    assert_eq!(e.rules.prestop_sleep.action, Action::Off);
    let e = p.effective("billing-eu", Some(&labels(&[("probegate.dev/enforce", "true")])));
    assert_eq!(e.overrides, vec!["opted-in"], "name matches but labels do not");
    assert_eq!(e.mode, Mode::Enforce);
    assert!(p.needs_namespace_labels());
}

#[test]
fn match_expressions_follow_label_selector_semantics() {
    let p = parse(
        r#"overrides:
  - name: x
    namespaceSelector:
      matchExpressions:
        - {key: env, operator: In, values: [prod, staging]}
        - {key: team, operator: Exists}
        - {key: frozen, operator: DoesNotExist}
        - {key: tier, operator: NotIn, values: [legacy]}
    mode: off
"#,
    );
    let m = |l: &[(&str, &str)]| p.effective("n", Some(&labels(l))).mode == Mode::Off;
    assert!(m(&[("env", "prod"), ("team", "a")]));
    assert!(m(&[("env", "staging"), ("team", "a"), ("tier", "gold")]));
    assert!(!m(&[("env", "dev"), ("team", "a")]));
    assert!(!m(&[("env", "prod")]));
    assert!(!m(&[("env", "prod"), ("team", "a"), ("frozen", "")]));
    assert!(!m(&[("env", "prod"), ("team", "a"), ("tier", "legacy")]));
}

#[test]
fn invalid_overrides_are_errors_with_locations() {
    let cases = [
        ("overrides:\n  - name: x\n    namespaces: [\"bad[\"]\n", "bad glob", 5),
        ("overrides:\n  - name: x\n    namespaces: []\n", "never match", 4),
        ("overrides:\n  - name: x\n    mode: audit\n", "neither namespaces nor namespaceSelector", 4),
        (
            "overrides:\n  - name: x\n    namespaces: [a]\n  - name: x\n    namespaces: [b]\n",
            "earlier override",
            6,
        ),
        (
            "overrides:\n  - name: x\n    namespaceSelector: {matchLabels: {a: b}, matchExpressions: [{key: a, operator: NotIn, values: [b]}]}\n",
            "never match",
            4,
        ),
        (
            "overrides:\n  - name: x\n    namespaceSelector: {matchExpressions: [{key: a, operator: In, values: []}]}\n",
            "no values",
            4,
        ),
        (
            "overrides:\n  - name: x\n    namespaceSelector: {matchExpressions: [{key: a, operator: Near}]}\n",
            "Near",
            5,
        ),
        (
            "overrides:\n  - name: x\n    namespaces: [a]\n    rules: {startup-probe: {action: mutate, budget: 3}}\n",
            "budget",
            6,
        ),
        (
            "overrides:\n  - name: x\n    namespaceSelector: {matchLabels: {\"team name\": a}}\n",
            "label key \"team name\" may only hold",
            4,
        ),
        (
            "overrides:\n  - name: x\n    namespaceSelector: {matchLabels: {Probegate.dev/tier: a}}\n",
            "not a lowercase DNS subdomain",
            4,
        ),
        (
            "overrides:\n  - name: x\n    namespaceSelector: {matchExpressions: [{key: tier, operator: In, values: [\"-legacy\"]}]}\n",
            "label value \"-legacy\" must start and end",
            4,
        ),
        ("exemptions:\n  annotationRules: [startup-probes]\n", "startup-probes", 4),
        ("exemptions:\n  containerz: [a]\n", "containerz", 4),
    ];
    for (body, expect, line) in cases {
        let e = err(body);
        assert!(e.to_string().contains(expect), "{body}: {e}");
        assert_eq!(e.line, Some(line), "{body}: {e}");
        assert!(e.to_string().starts_with(&format!("p.yaml:{line}:")), "{e}");
    }
}

#[test]
fn unknown_names_suggest_the_nearest_valid_one() {
    let e = err("rules:\n  startup-probe: {budgetSecond: 300}\n");
    assert!(e.message.contains("did you mean `budgetSeconds`"), "{e}");
    let e = err("rules:\n  prestop-slep: {seconds: 3}\n");
    assert!(e.message.contains("did you mean `prestop-sleep`"), "{e}");
    let e = err("mode: enforcing\n");
    assert!(e.message.contains("did you mean `enforce`"), "{e}");
    // The distance allowed grows with the name (a third of it, at least 3), and no further.
    let e = err("rules:\n  liveness-dependency: {knownCommandsList: []}\n");
    assert!(e.message.contains("did you mean `knownCommands`"), "{e}");
    // (An action's hints are for actions only: `mode: on` is no rule to turn on.)
    let e = err("mode: on\n");
    assert!(!e.message.contains("turn the rule on"), "{e}");
    let e = err("mode: nothing-like-any-of-them\n");
    assert!(!e.message.contains("did you mean"), "{e}");
}

/// Fresh-user pass (s16): `startup-probe: {action: info}` was answered "did you mean `off`?" (the
/// nearest spelling, the opposite of reporting). An action of other rules, or a word for on or off,
/// gets the valid actions nearest in meaning, and the message still lists them all.
#[test]
fn an_action_of_other_rules_suggests_the_nearest_in_meaning() {
    for (body, says) in [
        (
            "rules:\n  startup-probe: {action: info}\n",
            "this rule has no `info` (its findings are patches, reported as fixes); the closest: `warn` or `off`",
        ),
        ("rules:\n  prestop-sleep: {action: info}\n", "the closest: `warn` or `off`"),
        ("rules:\n  readiness-missing: {action: mutate}\n", "no `mutate`; the closest: `warn` or `info`"),
        (
            "rules:\n  startup-probe: {action: on}\n",
            "to turn the rule on, give what it does: `mutate` or `deny` or `warn`",
        ),
        ("rules:\n  worker-liveness-missing: {action: disabled}\n", "did you mean `off`?"),
        ("rules:\n  startup-probe: {action: mutat}\n", "did you mean `mutate`?"),
    ] {
        let e = err(body);
        assert!(e.message.contains(says), "{body}: {e}");
        assert!(e.message.contains("expected one of"), "{body}: {e}");
        assert!(!body.contains("info") || !e.message.contains("did you mean `off`"), "{body}: {e}");
    }
}

#[test]
fn skip_annotation_only_skips_allowed_rules() {
    let p = policy::Policy::default();
    let s = p.exemptions.parse_skip(" prestop-sleep, startup-probe ,liveness-dependency,bogus,prestop-sleep");
    assert_eq!(s.skipped, vec![RuleId::PrestopSleep, RuleId::StartupProbe]);
    assert_eq!(s.refused.len(), 2);
    assert!(s.refused.iter().any(|r| r.contains("liveness-dependency")));
    assert!(s.refused.iter().any(|r| r.contains("bogus")));
    let strict = parse("exemptions:\n  annotationRules: []\n");
    assert!(strict.exemptions.parse_skip("prestop-sleep").skipped.is_empty());
}

#[test]
fn the_skip_annotation_never_lifts_a_denial_only_the_policy_does() {
    use probegate::admission::evaluate_object;
    use probegate::engine::{Workload, WorkloadKind};
    // A policy that lets annotations skip the deny rule and probe-timeout, and denies low probe
    // timeouts; a namespace label (set by the platform team) turns the denial into a warning.
    let p = parse(
        "rules:\n  probe-timeout: {action: deny}\n\
         overrides:\n  - name: waived\n    namespaceSelector: {matchLabels: {probegate.dev/liveness-dependency: warn}}\n\
         \x20   rules:\n      liveness-dependency: {action: warn}\n\
         exemptions:\n  annotationRules: [liveness-dependency, probe-timeout, prestop-sleep]\n",
    );
    let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "annotations": {"probegate.dev/skip": "liveness-dependency,probe-timeout,prestop-sleep"}},
        "spec": {"containers": [{"name": "app", "image": "x",
            "livenessProbe": {"exec": {"command": ["pg_isready", "-h", "db.prod.svc"]}}}]}});
    let w = Workload::from_value(WorkloadKind::Pod, &pod).unwrap();
    let e = evaluate_object(&p, &w, "shop", None);
    assert_eq!(e.skip.skipped, vec![RuleId::PrestopSleep]);
    assert_eq!(e.skip.refused.len(), 2, "{:?}", e.skip.refused);
    assert!(
        e.skip.refused.iter().all(|r| r.contains("only the policy can lift a denial")),
        "{:?}",
        e.skip.refused
    );
    let rules: Vec<RuleId> = e.evaluation.findings.iter().map(|f| f.rule).collect();
    assert!(
        rules.contains(&RuleId::LivenessDependency) && rules.contains(&RuleId::ProbeTimeout),
        "{rules:?}"
    );
    // Where the policy has made the deny rule a warning, the annotation may skip it.
    let waived = labels(&[("probegate.dev/liveness-dependency", "warn")]);
    let e = evaluate_object(&p, &w, "shop", Some(&waived));
    assert_eq!(e.skip.skipped, vec![RuleId::LivenessDependency, RuleId::PrestopSleep]);
    assert!(e.evaluation.findings.iter().all(|f| f.rule != RuleId::LivenessDependency));
}

fn repo(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

#[test]
fn shipped_policies_are_valid_and_carry_the_schema_comment() {
    for name in ["default.yaml", "strict.yaml", "audit-rollout.yaml"] {
        let text = std::fs::read_to_string(repo(&format!("policies/{name}"))).unwrap();
        policy::parse(&text, name).unwrap_or_else(|e| panic!("{e}"));
        assert!(text.starts_with("# yaml-language-server: $schema=./schema.json"), "{name}");
    }
    let rollout =
        policy::parse(&std::fs::read_to_string(repo("policies/audit-rollout.yaml")).unwrap(), "r").unwrap();
    assert_eq!(rollout.mode, Mode::Audit);
    assert_eq!(rollout.effective("payments", None).mode, Mode::Enforce);
}

#[test]
fn committed_schema_is_in_sync() {
    let committed: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo("policies/schema.json")).unwrap()).unwrap();
    assert_eq!(committed, policy::json_schema(), "run `cargo run -- policy schema > policies/schema.json`");
    // The schema knows every rule id and rejects unknown top-level fields.
    let text = committed.to_string();
    for r in RuleId::ALL {
        assert!(text.contains(r.as_str()), "{r}");
    }
    assert_eq!(committed["additionalProperties"], false);
}

#[test]
fn shipped_policies_validate_against_the_committed_schema() {
    // What an editor with the yaml-language-server comment checks: policies/schema.json, as
    // committed, applied to every shipped policy read as JSON the way that editor reads YAML (1.2:
    // `off` is the string "off", not YAML 1.1's false).
    let yaml12 = |text: &str| -> serde_json::Value {
        serde_saphyr::from_str_with_options(text, serde_saphyr::options! { strict_booleans: true }).unwrap()
    };
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo("policies/schema.json")).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let mut names: Vec<String> = std::fs::read_dir(repo("policies"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".yaml"))
        .collect();
    names.sort();
    assert!(names.len() >= 3, "{names:?}");
    for name in &names {
        let text = std::fs::read_to_string(repo(&format!("policies/{name}"))).unwrap();
        let doc = yaml12(&text);
        let errors: Vec<String> =
            validator.iter_errors(&doc).map(|e| format!("{e} at {}", e.instance_path())).collect();
        assert!(errors.is_empty(), "policies/{name}: {errors:#?}");
    }
    // The schema is not vacuous: it refuses what the parser refuses.
    for bad in [
        "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\nrules:\n  liveness-dependency: {action: mutate}\n",
        "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\nrules:\n  startup-probe: {budgetSecond: 300}\n",
        "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\nmode: loud\n",
        "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\nrules:\n  probe-timeout: {livenessMinSeconds: 0}\n",
    ] {
        assert!(policy::parse(bad, "t").is_err(), "{bad}");
        assert!(!validator.is_valid(&yaml12(bad)), "the schema accepts {bad}");
    }
}

fn probegate(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_probegate")).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn policy_commands() {
    let (code, out, _) = probegate(&["policy", "default"]);
    assert_eq!(code, 0);
    assert_eq!(out, policy::DEFAULT_POLICY_YAML);
    let (code, out, _) = probegate(&["policy", "schema"]);
    assert_eq!(code, 0);
    assert_eq!(serde_json::from_str::<serde_json::Value>(&out).unwrap(), policy::json_schema());
    let files = ["policies/default.yaml", "policies/strict.yaml", "policies/audit-rollout.yaml"]
        .map(|f| repo(f).display().to_string());
    let (code, _, err) = probegate(&["policy", "validate", &files[0], &files[1], &files[2]]);
    assert_eq!(code, 0, "{err}");
    // Its own folder, removed when dropped: nothing is left in the user's temporary folder.
    let folder = tempfile::tempdir().unwrap();
    let dir = folder.path();
    let bad = dir.join("bad.yaml");
    std::fs::write(&bad, format!("{HEAD}rules:\n  liveness-dependency: {{action: mutate}}\n")).unwrap();
    let bad2 = dir.join("bad2.yaml");
    std::fs::write(&bad2, format!("{HEAD}overrides:\n  - name: a\n    namespaces: ['x[']\n")).unwrap();
    let (code, _, err) =
        probegate(&["policy", "validate", &files[0], bad.to_str().unwrap(), bad2.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains(&format!("{}:4:", bad.display())) && err.contains("mutate"), "{err}");
    assert!(err.contains(&format!("{}:5:", bad2.display())) && err.contains("bad glob"), "{err}");
    let (code, out, _) = probegate(&[
        "policy",
        "explain",
        "--policy",
        &repo("policies/audit-rollout.yaml").display().to_string(),
        "--namespace",
        "billing-eu",
        "--labels",
        "probegate.dev/tier=legacy",
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("legacy-billing") && out.contains("applied"), "{out}");
    assert!(out.contains("budgetSeconds=300"), "{out}");
    assert!(out.lines().any(|l| l.starts_with("mode:") && l.contains("audit")), "{out}");
}

#[test]
fn overrides_that_can_never_match_a_namespace_name_are_errors() {
    for (glob, expect) in [("UPPER_case!", "never match"), (&"a".repeat(70)[..], "63 characters")] {
        let e = err(&format!("overrides:\n  - name: x\n    namespaces: [\"{glob}\"]\n"));
        assert!(e.to_string().contains(expect), "{e}");
        assert_eq!(e.line, Some(5), "{e}");
    }
    let e = err(
        "overrides:\n  - name: x\n    namespaceSelector: {matchExpressions: [{key: a, operator: Exists}, {key: a, operator: DoesNotExist}]}\n",
    );
    assert!(e.to_string().contains("never match"), "{e}");
    let e = err("mode: audit\nmode: enforce\n");
    assert!(!e.to_string().contains("DuplicateKeyPolicy"), "{e}");
}

/// `policy validate` reports every error of a file, each with its file, line and field path, in
/// file order; lines and columns after a bad field stay right.
#[test]
fn policy_validate_reports_every_error_of_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("three.yaml");
    // Three mistakes: a value of the wrong type, one out of range, a misspelt rule id.
    std::fs::write(&file, include_str!("fixtures/policies/three-mistakes.yaml")).unwrap();
    let (code, out, err) = probegate(&["policy", "validate", file.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}{err}");
    let lines: Vec<&str> = err.lines().collect();
    let name = file.display().to_string();
    let expect = [
        (4, "rules.startup-probe.budgetSeconds", "invalid"),
        (6, "rules.prestop-sleep.seconds", "out of range"),
        (7, "rules.liveness-dependancy", "did you mean `liveness-dependency`"),
    ];
    assert_eq!(lines.len(), expect.len(), "{err}");
    for (line, (at, field, what)) in lines.iter().zip(expect) {
        assert!(line.starts_with(&format!("{name}:{at}:")), "{line}");
        assert!(line.contains(&format!("field `{field}`")) && line.contains(what), "{line}");
    }
    // Errors found while reading and errors of the whole-file checks come together.
    let errors = policy::parse_all(
        "apiVersion: v1\nkind: ProbePolicy\nrules:\n  probe-timeout: {livenessMinSeconds: 0}\n\
         overrides:\n  - {name: a, namespaces: [Billing]}\n",
        "f.yaml",
    )
    .unwrap_err();
    let found: Vec<(Option<u64>, Option<&str>)> =
        errors.iter().map(|e| (e.line, e.field.as_deref())).collect();
    assert_eq!(
        found,
        vec![
            (Some(1), Some("apiVersion")),
            (Some(4), Some("rules.probe-timeout.livenessMinSeconds")),
            (Some(6), Some("overrides[0].namespaces[0]")),
        ]
    );
    // The first one is what `parse` (the server's reload) reports.
    assert_eq!(
        policy::parse("apiVersion: v1\nkind: ProbePolicy\n", "f.yaml").unwrap_err().field.as_deref(),
        Some("apiVersion")
    );
    // An alias used where a string belongs: the field as the user wrote it (no wrapper's `.value`)
    // and the message whole, where the value was defined included (break-it pass s21).
    let e = policy::parse(
        "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\noverrides:\n  - name: a\n    \
         namespaces: &n [\"x\"]\n  - name: b\n    namespaces: [*n]\n",
        "f.yaml",
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "f.yaml:7:18: field `overrides[1].namespaces[0]`: expected string scalar (defined at line 5, column 20)"
    );
    // A valid file is one policy, as `parse` reads it.
    let text = std::fs::read_to_string(repo("policies/strict.yaml")).unwrap();
    assert_eq!(policy::parse_all(&text, "s").unwrap(), policy::parse(&text, "s").unwrap());
}

#[test]
fn errors_give_the_line_and_column_of_the_offending_text() {
    // A misspelt key: the error points at the key, `containerz` at column 3 of `  containerz: [a]`.
    let e = err("exemptions:\n  containerz: [a]\n");
    assert_eq!((e.line, e.column), (Some(4), Some(3)), "{e}");
    assert!(e.to_string().starts_with("p.yaml:4:3:"), "{e}");
    // A misspelt rule id, found after parsing (a spanned value): `startup-probes` starts at column 21
    // of `  annotationRules: [startup-probes]`.
    let e = err("exemptions:\n  annotationRules: [startup-probes]\n");
    assert_eq!((e.line, e.column), (Some(4), Some(21)), "{e}");
}

/// `policy explain` lists the effective known commands and known HTTP paths, built-in and the
/// policy's own, each marked by origin; `defaultKnown*: false` leaves only the policy's.
#[test]
fn policy_explain_lists_the_known_commands_and_http_paths() {
    let dir = tempfile::tempdir().unwrap();
    let entries = "    knownCommands:\n      - {name: shopctl-health, programs: [shopctl], args: [health, --deep], category: cache, reaches: the session cache, why: it reads a key}\n";
    let paths =
        "    knownHttpPaths:\n      - {path: /status/all, framework: Shop, livenessPath: /status/live}\n";
    let with = |defaults: bool| {
        let file = dir.path().join(format!("p{defaults}.yaml"));
        let text = format!(
            "{HEAD}rules:\n  liveness-dependency:\n    defaultKnownCommands: {defaults}\n{entries}  liveness-dependency-path:\n    defaultKnownHttpPaths: {defaults}\n{paths}"
        );
        std::fs::write(&file, text).unwrap();
        let (code, out, err) = probegate(&["policy", "explain", "--policy", file.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        out
    };
    let out = with(true);
    let line =
        |name: &str| out.lines().find(|l| l.trim_start().starts_with(name)).unwrap_or_default().to_string();
    assert!(out.contains("knownCommands (liveness-dependency):"), "{out}");
    assert!(line("celery-inspect").contains("built in"), "{out}");
    assert!(line("airflow-jobs-check").contains("the Airflow metadata database"), "{out}");
    let own = line("shopctl-health");
    assert!(
        own.contains("policy") && own.contains("shopctl health --deep") && own.contains("the session cache"),
        "{own}"
    );
    assert!(out.contains("knownHttpPaths (liveness-dependency-path):"), "{out}");
    let spring = line("/actuator/health ");
    assert!(
        spring.contains("Spring Boot")
            && spring.contains("/actuator/health/liveness")
            && spring.contains("built in"),
        "{out}"
    );
    assert!(line("/status/all").contains("policy") && line("/status/all").contains("/status/live"), "{out}");
    let out = with(false);
    assert!(!out.contains("celery-inspect") && !out.contains("Spring Boot"), "{out}");
    assert!(out.contains("shopctl-health") && out.contains("/status/all"), "{out}");
}

/// The `knownCommands=N` and `knownHttpPaths=N` counts of `policy explain` equal the entries
/// listed below them, one line each (break-it pass, issue 10, saw 9 against 7 lines): a policy's
/// entry with a line break in its name, programs, match or target printed as several lines. Text
/// from the policy is escaped; entries are never merged (a policy entry named like a built-in one
/// is listed, and counted, beside it).
#[test]
fn policy_explain_counts_what_it_lists_one_line_an_entry() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.yaml");
    let text = format!(
        "{HEAD}rules:\n  liveness-dependency:\n    knownCommands:\n      \
         - {{name: \"shop\\nctl\", programs: [\"shop\\nctl\"], args: [\"he\\nalth\"], category: cache, reaches: \"the\\nsession cache\", why: it reads a key}}\n      \
         - {{name: celery-inspect, programs: [celery], args: [inspect], category: queue, reaches: the broker, why: again}}\n  \
         liveness-dependency-path:\n    knownHttpPaths:\n      \
         - {{path: \"/status\\n/all\", framework: \"Sh\\nop\", livenessPath: /status/live}}\n"
    );
    std::fs::write(&file, text).unwrap();
    let (code, out, err) = probegate(&["policy", "explain", "--policy", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    for (count, header, next) in [
        ("knownCommands=", "knownCommands (liveness-dependency):", "knownHttpPaths ("),
        ("knownHttpPaths=", "knownHttpPaths (liveness-dependency-path):", "exemptions:"),
    ] {
        let n: usize = out
            .split(count)
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{count}: {out}"));
        let listed = out.split(header).nth(1).and_then(|rest| rest.split(next).next()).unwrap();
        let lines: Vec<&str> = listed.lines().filter(|l| !l.is_empty()).collect();
        assert_eq!(lines.len(), n, "{header}\n{listed}");
        assert!(lines.iter().all(|l| l.starts_with("  ")), "{listed}");
    }
    assert_eq!(out.matches("celery-inspect ").count(), 2, "{out}");
}

/// `policy explain` says on its `mode:` line what audit and off do to the actions it lists (fresh
/// user, s24: in audit mode the table read `liveness-dependency deny` with nothing saying the deny is
/// only reported); in enforce mode the line is the mode alone.
#[test]
fn policy_explain_says_what_the_mode_does_to_the_listed_actions() {
    let dir = tempfile::tempdir().unwrap();
    let mode_line = |mode: &str| {
        let file = dir.path().join(format!("{mode}.yaml"));
        std::fs::write(&file, format!("{HEAD}mode: {mode}\n")).unwrap();
        let (code, out, err) = probegate(&["policy", "explain", "--policy", file.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("liveness-dependency          deny"), "{out}");
        out.lines().find(|l| l.starts_with("mode:")).unwrap_or_default().to_string()
    };
    assert_eq!(mode_line("enforce"), "mode:      enforce");
    let audit = mode_line("audit");
    assert!(
        audit.starts_with("mode:      audit (dry run:") && audit.contains("reported, never applied"),
        "{audit}"
    );
    let off = mode_line("off");
    assert!(off.starts_with("mode:      off (") && off.contains("no rule below runs"), "{off}");
}
