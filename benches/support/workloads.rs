//! Workloads the engine benchmarks, the flood benchmark and `examples/evalcount.rs` share
//! (`#[path]`-included by each): a corpus document as the Pod it runs, and issue 9's costliest
//! review.

#![allow(dead_code)] // Each includer uses its own part.

use serde_json::{Value, json};

/// The Pod a corpus document runs: a Pod as it is, a workload's pod template (a CronJob's job
/// template's) with the template's metadata.
pub fn as_pod(doc: &Value) -> Value {
    let kind = doc["kind"].as_str().unwrap_or("Pod");
    let ptr = match kind {
        "Pod" => return doc.clone(),
        "CronJob" => "/spec/jobTemplate/spec/template",
        _ => "/spec/template",
    };
    let t = doc.pointer(ptr).unwrap();
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": t["metadata"].clone(), "spec": t["spec"].clone()})
}

/// Issue 9's worst case: 14 containers, each with a liveness
/// `sh -c 'V="<1000 words>"; f $V; f $V; ...'` (160 calls).
pub fn worst_case_containers() -> Vec<Value> {
    let words = vec!["w"; 1000].join(" ");
    let script = format!("V=\"{words}\"; {}", "f $V; ".repeat(160));
    (0..14)
        .map(|i| {
            json!({"name": format!("c{i}"), "image": "x",
            "livenessProbe": {"exec": {"command": ["sh", "-c", script]}}})
        })
        .collect()
}

/// The AdmissionReview of a Pod `shop/p` with [`worst_case_containers`], about 37 KiB.
pub fn worst_case_body() -> Vec<u8> {
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop"},
        "spec": {"containers": worst_case_containers()}});
    serde_json::to_vec(&json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": "u1", "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "name": "p", "namespace": "shop", "operation": "CREATE",
            "userInfo": {"username": "u"}, "object": pod}}))
    .unwrap()
}

/// The scripts of issue 9's cost pass (s12; `scripts/cost-shapes.py` writes the same as Pod
/// files): small scripts, under the byte and parse bounds, whose analysis once cost far more
/// CPU than their work units said. Each ends with a remote check, so that it is analysed whole.
pub fn cost_shape(name: &str) -> String {
    const TAIL: &str = "pg_isready -h db\n";
    // As many `unit(i)` as fit 16 KiB less 256 bytes and a parse weight of 8 pieces of 1024
    // less 40 each (`src/engine/exec/parse.rs`).
    let fill = |head: &str, unit: &dyn Fn(usize) -> String, max_weight: usize| {
        let weight = |t: &str| t.bytes().filter(|b| !(b.is_ascii_alphanumeric() || *b == b'_')).count();
        let mut out = head.to_string();
        let (mut size, mut w) = (head.len() + TAIL.len(), weight(head) + weight(TAIL));
        for i in 0.. {
            let u = unit(i);
            if size + u.len() > 16 * 1024 - 256 || w + weight(&u) > max_weight {
                break;
            }
            (size, w) = (size + u.len(), w + weight(&u));
            out.push_str(&u);
        }
        out.push_str(TAIL);
        out
    };
    let max = 8 * 1024 - 8 * 40;
    match name {
        "nested-if" => {
            format!("{}echo ok;{}fi\n{TAIL}", "if pg_isready;then ".repeat(300), "fi;".repeat(299))
        }
        "functions-one-by-one" => fill("", &|i| format!("f{i}(){{ :;}}\nf{i}\n"), max),
        "redefinition" => fill("", &|_| "f(){ pg_isready -h db || true;}\nf\n".to_string(), max),
        "var-refs" => fill("V=x\n", &|_| format!("echo{}\n", " $V".repeat(100)), max),
        "heredocs" => fill("", &|_| "grep -q ok <<EOF\n$(pg_isready -h db)\nEOF\n:\n".to_string(), 1000),
        "heredoc-ends" => fill("", &|_| "cat <<EOF\nx\nEOF \nEOF\n".to_string(), max),
        // (One line of at most 2048 weight: `||false` is 2.)
        "or-chain" => format!("pg_isready -h db&&false{}||exit 1\n{TAIL}", "||false".repeat(1000)),
        _ => panic!("no cost shape {name}"),
    }
}

/// The names of [`cost_shape`]'s scripts.
pub const COST_SHAPES: &[&str] = &[
    "nested-if",
    "functions-one-by-one",
    "redefinition",
    "var-refs",
    "heredocs",
    "heredoc-ends",
    "or-chain",
];

/// A Pod of `containers` containers whose liveness probe runs `sh -c script`.
pub fn script_pod(script: &str, containers: usize) -> Value {
    let containers: Vec<Value> = (0..containers)
        .map(|i| {
            json!({"name": format!("c{i}"), "image": "app:1",
                "livenessProbe": {"exec": {"command": ["sh", "-c", script]}}})
        })
        .collect();
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": containers}})
}
