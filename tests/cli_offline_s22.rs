//! The offline side's gaps found by the s22 break-it pass, through the real binary: every policy
//! error reported (inside overrides too), durations as Kubernetes writes them, a startup budget
//! that disagrees with its period, quoted Helm templates, nested Lists, symlinked directories,
//! `fix` keeping a file's ending, `explain --replicas 0`.

mod common;

use std::path::Path;
use std::process::Output;

use common::run_in;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

const HEAD: &str = "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\n";

#[test]
fn policy_validate_reports_every_error_inside_an_override_with_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let policy = format!(
        "{HEAD}rules:\n  probe-timeout: {{action: bogus}}\noverrides:\n  - name: a\n    namespaces: [x]\n    rules:\n      probe-timeout: {{livenessMinSeconds: 0}}\n      startup-probe: {{budgetSecond: 4}}\n      prestop-sleep: {{seconds: 99999}}\n  - name: b\n    namespaces: [y]\n    mode: loud\n"
    );
    write(dir.path(), "p.yaml", &policy);
    let o = run_in(dir.path(), &["policy", "validate", "p.yaml"], None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let all = format!("{}{}", stdout(&o), stderr(&o));
    for expected in [
        "p.yaml:4:27: field `rules.probe-timeout.action`",
        "p.yaml:9:43: field `overrides[0].rules.probe-timeout.livenessMinSeconds`: 0 is out of range",
        "p.yaml:10:23: field `overrides[0].rules.startup-probe.budgetSecond`: unknown field",
        "p.yaml:11:32: field `overrides[0].rules.prestop-sleep.seconds`: 99999 is out of range",
        "p.yaml:14:11: field `overrides[1].mode`: unknown variant `loud`",
    ] {
        assert!(all.contains(expected), "{expected} missing from:\n{all}");
    }
    // `serve --policy` reads policies the same way: every error, then exit 2.
    let o = run_in(dir.path(), &["check", "--policy", "p.yaml", "-"], Some(""));
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("overrides[0].rules.prestop-sleep.seconds"), "{}", stderr(&o));
}

#[test]
fn a_quoted_number_is_an_error_a_hex_integer_is_that_integer() {
    let dir = tempfile::tempdir().unwrap();
    let quoted = format!(
        "{HEAD}rules:\n  probe-timeout: {{livenessMinSeconds: \"5\"}}\noverrides:\n  - name: a\n    namespaces: [x]\n    rules:\n      prestop-sleep: {{seconds: '7'}}\n"
    );
    write(dir.path(), "q.yaml", &quoted);
    let o = run_in(dir.path(), &["policy", "validate", "q.yaml"], None);
    assert_eq!(o.status.code(), Some(2));
    let all = format!("{}{}", stdout(&o), stderr(&o));
    assert!(
        all.contains("q.yaml:4:39: field `rules.probe-timeout.livenessMinSeconds`: \"5\" is a quoted number"),
        "{all}"
    );
    assert!(
        all.contains(
            "q.yaml:9:32: field `overrides[0].rules.prestop-sleep.seconds`: \"7\" is a quoted number"
        ),
        "{all}"
    );
    assert!(all.contains("without quotes"), "{all}");
    // A YAML integer in another base is the integer (YAML 1.2 core schema; Kubernetes reads it so).
    write(dir.path(), "h.yaml", &format!("{HEAD}rules:\n  probe-timeout: {{livenessMinSeconds: 0x10}}\n"));
    let o = run_in(dir.path(), &["policy", "validate", "h.yaml"], None);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let o = run_in(dir.path(), &["policy", "explain", "--policy", "h.yaml"], None);
    assert!(stdout(&o).contains("livenessMinSeconds=16 "), "{}", stdout(&o));
    // A fraction is not a whole number of seconds.
    write(dir.path(), "f.yaml", &format!("{HEAD}rules:\n  probe-timeout: {{livenessMinSeconds: 2.5}}\n"));
    let o = run_in(dir.path(), &["policy", "validate", "f.yaml"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(format!("{}{}", stdout(&o), stderr(&o)).contains("2.5 is not a whole number"));
}

#[test]
fn a_startup_budget_shorter_than_its_period_is_an_error_a_non_multiple_is_rounded_up() {
    let dir = tempfile::tempdir().unwrap();
    let policy = format!(
        "{HEAD}rules:\n  startup-probe: {{periodSeconds: 10, budgetSeconds: 5}}\noverrides:\n  - name: a\n    namespaces: [x]\n    rules:\n      startup-probe: {{periodSeconds: 30}}\n"
    );
    write(dir.path(), "b.yaml", &policy);
    let o = run_in(dir.path(), &["policy", "validate", "b.yaml"], None);
    assert_eq!(o.status.code(), Some(2));
    let all = format!("{}{}", stdout(&o), stderr(&o));
    assert!(
        all.contains("b.yaml:4:53: field `rules.startup-probe.budgetSeconds`: budgetSeconds 5 is shorter than one periodSeconds 10"),
        "{all}"
    );
    // The override's period against the budget it inherits (5, which is also an error above).
    assert!(all.contains("b.yaml:9:38: field `overrides[0].rules.startup-probe.periodSeconds`"), "{all}");
    // The default budget (120 s) against an override's period over it.
    let policy = format!(
        "{HEAD}overrides:\n  - name: a\n    namespaces: [x]\n    rules:\n      startup-probe: {{periodSeconds: 300}}\n"
    );
    write(dir.path(), "o.yaml", &policy);
    let o = run_in(dir.path(), &["policy", "validate", "o.yaml"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        format!("{}{}", stdout(&o), stderr(&o))
            .contains("budgetSeconds 120 is shorter than one periodSeconds 300")
    );
    // Not a multiple: rounded up (100 s at 30 s gives 4 probes), as docs/policy.md says.
    write(
        dir.path(),
        "r.yaml",
        &format!("{HEAD}rules:\n  startup-probe: {{periodSeconds: 30, budgetSeconds: 100}}\n"),
    );
    let o = run_in(dir.path(), &["policy", "validate", "r.yaml"], None);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - name: c\n      image: nginx\n      livenessProbe:\n        httpGet: {path: /healthz, port: 80}\n        periodSeconds: 5\n        failureThreshold: 2\n";
    write(dir.path(), "pod.yaml", pod);
    let o = run_in(dir.path(), &["fix", "--policy", "r.yaml", "pod.yaml"], None);
    assert!(
        stdout(&o).contains("failureThreshold: 4\n") && stdout(&o).contains("periodSeconds: 30\n"),
        "{}",
        stdout(&o)
    );
}

const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  annotations:\n    note: ANNOTATION\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n        - name: web\n          image: IMAGE\n          command: [sh, -c, \"docker inspect --format '{{.Id}}' x\"]\n          livenessProbe:\n            httpGet: {path: /healthz, port: 8080}\n";

#[test]
fn a_quoted_template_where_kubernetes_takes_none_is_not_rendered_elsewhere_it_is_a_value() {
    let dir = tempfile::tempdir().unwrap();
    let deployment =
        |image: &str, annotation: &str| DEPLOYMENT.replace("IMAGE", image).replace("ANNOTATION", annotation);
    write(dir.path(), "t.yaml", &deployment("\"{{ .Values.image }}\"", "x"));
    let o = run_in(dir.path(), &["check", "t.yaml"], None);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(err.contains("t.yaml:14:18: an unrendered Helm template (`{{ ... }}`), not a manifest"), "{err}");
    assert!(err.contains("`spec.template.spec.containers[0].image`"), "{err}");
    // Unquoted in a plain scalar too (`web-{{ ... }}` is valid YAML).
    write(
        dir.path(),
        "n.yaml",
        &deployment("nginx", "x").replace("name: web\n  annot", "name: web-{{ .Release.Name }}\n  annot"),
    );
    let o = run_in(dir.path(), &["check", "n.yaml"], None);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stderr(&o).contains("n.yaml:4:9: an unrendered Helm template"), "{}", stderr(&o));
    // A Go template in an annotation and in a command is a value: checked as usual.
    write(dir.path(), "a.yaml", &deployment("nginx", "\"{{ $labels.instance }} is down\""));
    let o = run_in(dir.path(), &["check", "a.yaml"], None);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("1 object in 1 file"), "{}", stdout(&o));
    let configmap =
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: alerts}\ndata:\n  rule: \"{{ .Labels.job }}\"\n";
    write(dir.path(), "c.yaml", configmap);
    let o = run_in(dir.path(), &["check", "c.yaml"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn a_list_inside_a_list_is_evaluated() {
    let dir = tempfile::tempdir().unwrap();
    let nested = "apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: List\n    items:\n      - apiVersion: v1\n        kind: Pod\n        metadata: {name: p}\n        spec:\n          containers:\n            - name: c\n              image: nginx\n              livenessProbe:\n                exec: {command: [pg_isready, -h, db]}\n";
    write(dir.path(), "l.yaml", nested);
    let o = run_in(dir.path(), &["check", "l.yaml"], None);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("l.yaml:12  deny  Pod default/p"), "{}", stdout(&o));
    // `fix` patches it at its place in the nested list.
    let o = run_in(dir.path(), &["fix", "l.yaml"], None);
    assert!(stdout(&o).contains("                timeoutSeconds: 3\n"), "{}", stdout(&o));
}

#[cfg(unix)]
#[test]
fn symlinked_directories_are_followed_once_and_a_loop_is_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("tree");
    std::fs::create_dir_all(root.join("real")).unwrap();
    std::fs::create_dir_all(root.join("other")).unwrap();
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - name: c\n      image: nginx\n      livenessProbe:\n        exec: {command: [pg_isready, -h, db]}\n";
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    write(&outside, "pod.yaml", pod);
    std::os::unix::fs::symlink(&outside, root.join("other/link")).unwrap();
    std::os::unix::fs::symlink("..", root.join("real/up")).unwrap();
    let o = run_in(dir.path(), &["check", "-o", "json", "tree"], None);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["summary"]["objects"], 1, "{v}");
    let skipped = v["skippedFiles"].as_array().unwrap();
    assert_eq!(skipped.len(), 1, "{v}");
    assert_eq!(skipped[0]["file"], "tree/real/up");
    assert!(skipped[0]["message"].as_str().unwrap().contains("a symlink to a directory already read"), "{v}");
}

#[test]
fn fix_keeps_a_file_without_a_final_line_end_so_and_adds_no_blank_lines() {
    let dir = tempfile::tempdir().unwrap();
    let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - name: c\n      image: nginx\n      ports: [{containerPort: 80}]\n      livenessProbe:\n        httpGet: {path: /healthz, port: 80}";
    write(dir.path(), "p.yaml", text);
    let o = run_in(dir.path(), &["fix", "p.yaml"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let expected = format!(
        "{text}\n        timeoutSeconds: 3\n      startupProbe:\n        failureThreshold: 24\n        httpGet:\n          path: /healthz\n          port: 80\n        periodSeconds: 5\n        timeoutSeconds: 3\n      lifecycle:\n        preStop:\n          sleep:\n            seconds: 5"
    );
    let fixed = stdout(&o);
    assert!(!fixed.contains("\n\n"), "a blank line: {fixed:?}");
    assert_eq!(fixed, expected);
    let o = run_in(dir.path(), &["fix", "-i", "p.yaml"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(dir.path().join("p.yaml")).unwrap(), expected);
    // Two files to standard output: a line end between them, none added at the end.
    write(dir.path(), "q.yaml", text);
    let o = run_in(dir.path(), &["fix", "q.yaml", "p.yaml"], None);
    let both = stdout(&o);
    assert!(both.contains("seconds: 5\n---\napiVersion"), "{both:?}");
    assert!(both.ends_with("seconds: 5"), "{both:?}");
}

#[test]
fn explain_refuses_zero_replicas_and_says_what_spec_replicas_zero_means() {
    let dir = tempfile::tempdir().unwrap();
    let deployment = DEPLOYMENT
        .replace("IMAGE", "nginx")
        .replace("ANNOTATION", "x")
        .replace("spec:\n  selector", "spec:\n  replicas: 0\n  selector");
    write(dir.path(), "d.yaml", &deployment);
    let o = run_in(dir.path(), &["explain", "--replicas", "0", "d.yaml"], None);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stderr(&o).contains("--replicas"), "{}", stderr(&o));
    let o = run_in(dir.path(), &["explain", "--dependency-check", "liveness", "d.yaml"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("1 replica (spec.replicas 0, scaled to zero: 1 simulated; set --replicas)"),
        "{}",
        stdout(&o)
    );
}
