//! The s23 fresh user's CLI findings, through the real binary.

mod common;

use common::run_in;

const APP: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: shop}\nspec:\n  containers:\n  - name: web\n    image: x\n    env: [{name: API_KEY, value: S3cr3tValue}]\n    livenessProbe: {httpGet: {path: /healthz, port: 8080}}\n";

/// `fix --diff` shows env values as `***` and says how to get the real text: `--in-place` for a
/// file, plain `fix -` for standard input (where `--in-place` is refused).
#[test]
fn the_diff_note_names_a_command_that_works_for_its_input() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("app.yaml"), APP).unwrap();
    let o = run_in(dir.path(), &["fix", "--diff", "-"], Some(APP));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("S3cr3tValue"));
    assert!(err.contains("`probegate fix -` writes the fixed text with the real values"), "{err}");
    assert!(!err.contains("--in-place"), "{err}");
    let refused = run_in(dir.path(), &["fix", "--in-place", "-"], Some(APP));
    assert_eq!(refused.status.code(), Some(2));
    let o = run_in(dir.path(), &["fix", "--diff", "app.yaml"], None);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("`probegate fix --in-place` writes the real values"), "{err}");
    // What the note says `fix -` does: the fixed text, the real value kept.
    let o = run_in(dir.path(), &["fix", "-"], Some(APP));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("S3cr3tValue") && out.contains("startupProbe"), "{out}");
}
