//! The sample manifests people copy from the docs (`tests/fixtures/cli/`, the README's `check`
//! example among them) are valid Kubernetes: the real API server accepts each of them in a
//! server-side dry run, so `kubectl apply -f` works on them as they are.

use crate::harness;

/// The fixtures that are meant to be invalid (a YAML syntax error), by file name.
const MEANT_BROKEN: &[&str] = &["broken.yaml"];

#[tokio::test]
async fn every_cli_sample_manifest_is_accepted_by_the_api_server() {
    // Nothing is stored (a dry run), but a namespaced object's namespace must exist (`default`,
    // for objects that name none, is the API server's own). The first call starts the API server.
    harness::namespace("fixtures").await;
    harness::kubectl(&["-n", "default", "create", "serviceaccount", "default"]);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cli");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "json"))
        .filter(|p| !MEANT_BROKEN.contains(&p.file_name().unwrap().to_str().unwrap()))
        .collect();
    files.sort();
    assert!(files.iter().any(|p| p.ends_with("app.yaml")), "the README's sample is among them: {files:?}");
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for line in text.lines() {
            // Block (`namespace: shop`) or flow style (`metadata: {name: web, namespace: shop}`).
            let ns = line.split_once("namespace:").map(|(_, rest)| {
                rest.trim_start()
                    .split(|c: char| c == ',' || c == '}' || c.is_whitespace())
                    .next()
                    .unwrap_or("")
            });
            if let Some(ns) = ns.filter(|ns| !ns.is_empty()) {
                // Already there (another file names it too) is fine. Pods need the `default`
                // ServiceAccount, which no controller manager creates here.
                harness::kubectl(&["create", "namespace", ns]);
                harness::kubectl(&["-n", ns, "create", "serviceaccount", "default"]);
            }
        }
        let out = harness::kubectl(&["apply", "--dry-run=server", "-f", file.to_str().unwrap()]);
        assert!(
            out.status.success(),
            "{}: kubectl apply --dry-run=server: {}",
            file.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
