//! Every overlay of deploy/ is accepted by a real API server: `kubectl apply --dry-run=server` of
//! `kubectl kustomize` output, once probegate's namespace exists (the API server validates every
//! object against its schema, RBAC rules, webhook configurations and their CEL matchConditions).

use crate::harness;

const TARGETS: [&str; 4] = ["base", "overlays/cert-manager", "overlays/self-managed", "overlays/strict"];

/// cert-manager's kinds: their CRDs are not installed here, so those objects are left out (the
/// API server would answer "no matches for kind").
const NOT_SERVED: [&str; 2] = ["Certificate", "Issuer"];

#[tokio::test]
async fn every_overlay_is_accepted_by_a_server_side_dry_run() {
    let root = env!("CARGO_MANIFEST_DIR");
    // The namespace must exist for a dry run of the objects in it (a dry-run Namespace is not stored).
    let ns = harness::kubectl(&["create", "namespace", "probegate-system"]);
    let err = String::from_utf8_lossy(&ns.stderr);
    assert!(ns.status.success() || err.contains("AlreadyExists"), "{err}");
    // The components, each over base, as deploy/README.md shows them used.
    // (kustomize takes only relative paths: the folders go under target/.)
    let with_components =
        tempfile::Builder::new().prefix("e2e-kustomize-").tempdir_in(format!("{root}/target")).unwrap();
    let mut dirs: Vec<(String, String)> =
        TARGETS.iter().map(|t| (t.to_string(), format!("{root}/deploy/{t}"))).collect();
    for component in ["resolve-configmaps", "fail-closed", "network-policy", "mutate-templates"] {
        let dir = with_components.path().join(component);
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(
            dir.join("kustomization.yaml"),
            format!(
                "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [../../../deploy/base]\ncomponents: [../../../deploy/components/{component}]\n"
            ),
        )
        .unwrap();
        dirs.push((format!("base + components/{component}"), dir.display().to_string()));
    }
    for (target, dir) in dirs {
        let rendered = harness::kubectl(&["kustomize", &dir]);
        assert!(rendered.status.success(), "{target}: {}", String::from_utf8_lossy(&rendered.stderr));
        let docs = probegate::manifest::parse_documents(&String::from_utf8_lossy(&rendered.stdout)).unwrap();
        let kept: Vec<serde_json::Value> =
            docs.into_iter().filter(|d| !NOT_SERVED.contains(&d["kind"].as_str().unwrap_or(""))).collect();
        let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": kept});
        let out = harness::kubectl_apply(&list.to_string(), &["--dry-run=server"]);
        assert!(
            out.status.success(),
            "deploy/{target}: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
    }
}
