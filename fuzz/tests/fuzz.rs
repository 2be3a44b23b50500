//! Fuzz targets (bolero), one per parser of untrusted text: the exec analysis (shell text and
//! kubelet `$(VAR)` values from a Pod spec), AdmissionReview bodies (anything the API server or a
//! caller posts), and the YAML locator of the offline commands.
//!
//! Under `cargo test` each target replays its corpus (`fuzz/tests/__fuzz__/TARGET/corpus/`, seeded
//! from `tests/fixtures`) and then random inputs; `cargo bolero test` runs the same targets
//! coverage-guided (libFuzzer, stable toolchain; docs/testing.md). Each asserts more than "no panic"
//! where an oracle exists (a patch applies, positions lie in the text).

use base64::Engine as _;

use probegate::admission::{self, Endpoint};
use probegate::engine::exec::{self, EnvValue, ExecEnv};
use probegate::manifest::located::{self, Node, NodeValue};
use probegate::policy::Policy;

/// Inputs larger than this are cut: the analysis bounds its own work, and long inputs only slow
/// the fuzzer down.
const MAX_INPUT: usize = 16 * 1024;

#[test]
fn exec_analysis() {
    let known: Vec<_> = probegate::engine::known::builtin().iter().collect();
    bolero::check!().for_each(|input: &[u8]| {
        let input = &input[..input.len().min(MAX_INPUT)];
        let text = String::from_utf8_lossy(input);
        // `SCRIPT \0 VALUE-OF-A \0 ARG \0 ARG ...`: a shell script, the value of an env variable
        // `A` (kubelet `$(A)` expansion and shell `$A`), and an argv run directly.
        let mut parts = text.split('\0');
        let script = parts.next().unwrap_or_default().to_string();
        let value = parts.next().unwrap_or_default().to_string();
        let argv: Vec<String> = parts.map(String::from).collect();
        let env = ExecEnv {
            vars: [("A".to_string(), EnvValue::Literal(value))].into_iter().collect(),
            has_env_from: false,
            ..Default::default()
        };
        let options = exec::Options { known_commands: known.clone(), ..exec::Options::default() };
        for command in [
            vec!["sh".to_string(), "-c".to_string(), script.clone()],
            vec!["bash".to_string(), "-c".to_string(), script.clone(), "x".into(), "$(A)".into()],
            argv.clone(),
        ] {
            let _ = exec::analyze(&command, &env, &options);
        }
        let _ = exec::split_commands(&script);
        let _ = exec::expand_kubelet_argv(&argv, &env, None);
    });
}

#[test]
fn admission_review_parsing() {
    let policies = [
        Policy::default(),
        probegate::policy::parse(include_str!("../../policies/strict.yaml"), "strict.yaml").unwrap(),
    ];
    bolero::check!().for_each(|input: &[u8]| {
        let body = &input[..input.len().min(4 * MAX_INPUT)];
        let Ok(request) = admission::parse_review(body) else {
            return;
        };
        // The review read the plain way (the envelope, the object kept as text) reads whenever
        // `parse_review` does, in one pass or not, and agrees; its object is the one sent
        // (`request.object` is `None` when `parse_review` read it in the review's own pass).
        let plain: admission::AdmissionReviewRequest =
            serde_json::from_slice(body).expect("what parse_review reads reads the plain way too");
        let plain = plain.request.expect("a request");
        assert_eq!(
            (&plain.uid, &plain.namespace, &plain.name),
            (&request.uid, &request.namespace, &request.name)
        );
        let sent = plain.object;
        for policy in &policies {
            for endpoint in [Endpoint::Validate, Endpoint::Mutate] {
                let Ok(decision) = admission::review(policy, None, endpoint, &request) else { continue };
                let response = &decision.review.response;
                assert_eq!(response.uid, request.uid);
                if !response.allowed {
                    assert_eq!(response.status.as_ref().map(|s| s.code), Some(403));
                }
                // A patch always applies, strictly, to the object it was computed from.
                if let Some(patch) = &response.patch {
                    assert_eq!(endpoint, Endpoint::Mutate);
                    let object = sent.as_ref().expect("a patch comes with an object");
                    let object: serde_json::Value = serde_json::from_str(object.get()).unwrap();
                    let bytes = base64::engine::general_purpose::STANDARD.decode(patch).unwrap();
                    let patch: json_patch::Patch = serde_json::from_slice(&bytes).unwrap();
                    // Strictly (RFC 6902): no parent creation, replace/remove need the member.
                    let mut patched = object.clone();
                    json_patch::patch(&mut patched, &patch)
                        .unwrap_or_else(|e| panic!("patch does not apply: {e}\npatch: {patch:?}"));
                }
            }
        }
    });
}

#[test]
fn yaml_locator() {
    bolero::check!().for_each(|input: &[u8]| {
        let Ok(text) = std::str::from_utf8(&input[..input.len().min(MAX_INPUT)]) else { return };
        for doc in located::parse_file(text) {
            // Documents are in the file, in order, on character boundaries.
            assert!(doc.range.end <= text.len() && text.is_char_boundary(doc.range.start));
            assert!(text.is_char_boundary(doc.range.end));
            if let Ok(Some(node)) = &doc.node {
                check_positions(node, text);
                let _ = node.to_value();
            }
        }
    });
}

/// Every scalar's byte range lies inside the file, on character boundaries, and its end is found.
fn check_positions(node: &Node, text: &str) {
    let end = node.pos.offset + node.pos.len;
    assert!(end <= text.len(), "{:?} past {}", node.pos, text.len());
    assert!(text.is_char_boundary(node.pos.offset) && text.is_char_boundary(end), "{:?}", node.pos);
    assert!(node.end(text) <= text.len());
    match &node.value {
        NodeValue::Seq(items) => items.iter().for_each(|n| check_positions(n, text)),
        NodeValue::Map(entries) => entries.iter().for_each(|(_, n)| check_positions(n, text)),
        _ => {}
    }
}
