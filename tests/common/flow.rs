//! Verdicts of one liveness exec probe, shared by the shell-flow suites (`tests/shell_flow.rs`,
//! `tests/shell_flow_v2.rs`, `tests/shell_flow_v3.rs`): each script is judged as `sh -c` and
//! `bash -c` in a Pod of namespace `shop` under the default policy.

use probegate::admission::{self, ObjectEvaluation};
use probegate::engine::NoConfigMaps;
use probegate::policy::{Action, Policy, RuleId};

/// The evaluation of a Pod whose one container's liveness probe is `exec: {command: argv}`.
pub fn eval_liveness(argv: &[&str]) -> ObjectEvaluation {
    let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop"},
        "spec": {"containers": [{"name": "c", "image": "x", "livenessProbe": {"exec": {"command": argv}}}]}});
    admission::evaluate_object_with_configmaps(
        &Policy::default(),
        &super::workload(&pod),
        "shop",
        None,
        &NoConfigMaps,
    )
}

/// The liveness-dependency finding of the exec probe `argv` (action and message), if any.
pub fn finding_of(argv: &[&str]) -> Option<(Action, String)> {
    let e = eval_liveness(argv);
    e.evaluation
        .findings
        .iter()
        .find(|f| f.rule == RuleId::LivenessDependency)
        .map(|f| (f.action, f.describe()))
}

/// The scripts (run by `sh -c` and `bash -c`) whose finding about orders-db (or redis-master) is
/// not `action`, each described.
pub fn wrong_actions(scripts: &[&str], action: Action) -> Vec<String> {
    let mut wrong = Vec::new();
    for shell in ["sh", "bash"] {
        for script in scripts {
            let got = finding_of(&[shell, "-c", script]);
            if !got
                .as_ref()
                .is_some_and(|g| g.0 == action && (g.1.contains("orders-db") || g.1.contains("redis-master")))
            {
                wrong.push(format!("{action:?} expected: {shell} {script:?}: {got:?}"));
            }
        }
    }
    wrong
}

/// Asserts that every script of `warned` is warned about and every one of `denied` denied.
#[track_caller]
pub fn expect_actions(warned: &[&str], denied: &[&str]) {
    let mut wrong = wrong_actions(warned, Action::Warn);
    wrong.extend(wrong_actions(denied, Action::Deny));
    assert!(wrong.is_empty(), "{wrong:#?}");
}
