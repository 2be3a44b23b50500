//! Reading Kubernetes manifests (YAML or JSON text) into JSON values. Pure: text in, values out.

use serde_json::Value;

/// YAML options matching how Kubernetes tooling reads manifests (sigs.k8s.io/yaml, YAML 1.1
/// numbers): a leading-zero integer such as `defaultMode: 0644` is octal.
pub fn yaml_options() -> serde_saphyr::Options {
    serde_saphyr::options! { legacy_octal_numbers: true }
}

/// Parses every document of a YAML (or JSON) stream. Empty documents are dropped.
///
/// # Errors
/// The YAML error, with line and column.
pub fn parse_documents(text: &str) -> Result<Vec<Value>, serde_saphyr::Error> {
    let docs: Vec<Value> = serde_saphyr::from_multiple_with_options(text, yaml_options())?;
    Ok(docs.into_iter().filter(|d| !d.is_null()).collect())
}

pub mod located;
