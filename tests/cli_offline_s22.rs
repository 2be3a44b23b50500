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
