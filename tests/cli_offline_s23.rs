//! The offline side's gaps of session 23, through the real binary: `--fail-on`'s help names every
//! level the flag accepts (`fix --help` said "deny, warn or info" and took `fix` too), and the
//! notes about a `probegate.dev/skip` annotation point at its line, not at the object's first.

mod common;

use std::process::Output;

use common::run_in;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The paragraph of `--fail-on` in `probegate COMMAND --help`, joined into one line.
fn fail_on_help(command: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let o = run_in(dir.path(), &[command, "--help"], None);
    assert_eq!(o.status.code(), Some(0));
    let text = stdout(&o);
    let at = text.find("--fail-on <").unwrap_or_else(|| panic!("no --fail-on in {command} --help:\n{text}"));
    let rest = &text[at..];
    let end = rest.find("\n\n").unwrap_or(rest.len());
    rest[..end].split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every level `--fail-on` accepts (a value it refuses exits 2 naming the possible values) is
/// named in the help of each command that has the flag.
#[test]
fn fail_on_help_names_every_level_the_flag_accepts() {
    let dir = tempfile::tempdir().unwrap();
    let manifest =
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: c, image: x}\n";
    std::fs::write(dir.path().join("p.yaml"), manifest).unwrap();
    let levels = ["deny", "warn", "fix", "info"];
    for command in ["check", "fix"] {
        for level in levels {
            let o = run_in(dir.path(), &[command, "--fail-on", level, "p.yaml"], None);
            assert_ne!(o.status.code(), Some(2), "{command} --fail-on {level}: {:?}", o);
        }
        let o = run_in(dir.path(), &[command, "--fail-on", "bogus", "p.yaml"], None);
        assert_eq!(o.status.code(), Some(2));
        let said = String::from_utf8_lossy(&o.stderr).into_owned();
        for level in levels {
            assert!(said.contains(level), "{said}");
        }
    }
    for command in ["check", "fix", "audit"] {
        let help = fail_on_help(command);
        for level in levels {
            assert!(help.contains(level), "{command} --help does not name {level}: {help}");
        }
    }
}

const DEPLOYMENT: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  annotations:
    probegate.dev/skip: prestop-sleep
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}
      annotations:
        team: web
        probegate.dev/skip: prestop-sleep,liveness-dependency
    spec:
      containers:
      - name: web
        image: registry.example.com/web:1
        ports: [{containerPort: 8080}]
        livenessProbe: {exec: {command: [pg_isready, -h, db.shop.svc]}, timeoutSeconds: 3}
";

/// The skip annotation read (the pod template's, line 15), the denial it cannot lift and the one
/// on the Deployment's own metadata (line 7, not read) are each noted at their annotation's line,
/// in text and in JSON (`skipAnnotationLine`); the object stays at line 1.
#[test]
fn skip_annotation_notes_point_at_the_annotation() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("d.yaml"), DEPLOYMENT).unwrap();
    let o = run_in(dir.path(), &["check", "d.yaml"], None);
    let text = stdout(&o);
    for expected in [
        "note: d.yaml:15: Deployment shop/web: rules skipped by annotation probegate.dev/skip: prestop-sleep",
        "note: d.yaml:15: Deployment shop/web: annotation probegate.dev/skip cannot skip liveness-dependency",
        "note: d.yaml:7: Deployment shop/web: annotation probegate.dev/skip on the Deployment's own metadata is not read",
    ] {
        assert!(text.contains(expected), "{expected} missing from:\n{text}");
    }
    let o = run_in(dir.path(), &["check", "-o", "json", "d.yaml"], None);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let object = &v["objects"][0];
    assert_eq!(
        (object["line"].as_u64(), object["skipAnnotationLine"].as_u64()),
        (Some(1), Some(15)),
        "{object}"
    );
    // Without the template's annotation, the ignored one is the line given.
    let own_only = DEPLOYMENT.replace("        probegate.dev/skip: prestop-sleep,liveness-dependency\n", "");
    std::fs::write(dir.path().join("d.yaml"), own_only).unwrap();
    let o = run_in(dir.path(), &["check", "-o", "json", "d.yaml"], None);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["objects"][0]["skipAnnotationLine"].as_u64(), Some(7), "{}", v["objects"][0]);
    // A Pod's own annotation is the one read.
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n    probegate.dev/skip: prestop-sleep\nspec:\n  containers:\n  - {name: c, image: x, ports: [{containerPort: 80}]}\n";
    std::fs::write(dir.path().join("p.yaml"), pod).unwrap();
    let o = run_in(dir.path(), &["check", "p.yaml"], None);
    assert!(
        stdout(&o).contains("note: p.yaml:6: Pod default/p: rules skipped by annotation"),
        "{}",
        stdout(&o)
    );
    // No annotation: null.
    std::fs::write(
        dir.path().join("p.yaml"),
        pod.replace("  annotations:\n    probegate.dev/skip: prestop-sleep\n", ""),
    )
    .unwrap();
    let o = run_in(dir.path(), &["check", "-o", "json", "p.yaml"], None);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(v["objects"][0]["skipAnnotationLine"].is_null(), "{}", v["objects"][0]);
}
