//! `probegate fix` on one multi-document file: does its time grow with the file's size, and no
//! faster? Ratios only (the machine's speed cancels out).
//!
//! Run: `cargo bench --bench fix`. It writes one file of N small Deployments (each renamed, all
//! separated by `---`) and one of 4 N, runs the release binary,
//! `probegate fix FILE > /dev/null`, three times on each, and reports the median CPU time of each
//! size (the children's user + sys from `/proc/self/stat`) and their ratio. A linear `fix` gives a
//! ratio near 4; the break-it pass s22 found 54 s for a 16 MB file, the objects of each document
//! looked up among all of the file's (quadratic: a ratio near 16). Target: at most 6.
//!
//! Without `--bench` on its command line (as under `cargo test --benches`) it runs a smoke round
//! with small files and checks nothing but that `fix` succeeds.

use std::path::Path;

#[path = "support/child.rs"]
mod child;
use child::run;

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (small, rounds) = if full { (8_000, 3) } else { (50, 1) };
    let dir = tempfile::tempdir().expect("temporary directory");
    let bin = env!("CARGO_BIN_EXE_probegate");
    let mut medians = Vec::new();
    for count in [small, 4 * small] {
        let file = dir.path().join(format!("deployments-{count}.yaml"));
        let bytes = generate(&file, count);
        let mut cpu = Vec::new();
        for _ in 0..rounds {
            let (c, wall, code) = run(bin, &["fix", file.to_str().expect("UTF-8 path")]);
            assert!(code == Some(0) || code == Some(1), "probegate fix exited {code:?}");
            println!(
                "  {count} Deployments ({:.1} MB): CPU {c:.2} s (user + sys), wall {:.2} s",
                bytes as f64 / 1e6,
                wall.as_secs_f64()
            );
            cpu.push(c);
        }
        cpu.sort_by(f64::total_cmp);
        medians.push(cpu[cpu.len() / 2]);
    }
    let ratio = medians[1] / medians[0].max(0.01);
    println!(
        "probegate fix: 4x the documents took {ratio:.1}x the CPU ({:.2} s -> {:.2} s); linear is 4, target at most {}",
        medians[0],
        medians[1],
        if full { "6" } else { "- (smoke round)" }
    );
}

/// A small Deployment with three findings `fix` patches (a liveness timeout, a startup probe, a
/// preStop sleep): many small documents are where a cost per document pair shows most.
const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-N
  labels: {app: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: nginx:1.27
          ports: [{containerPort: 8080}]
          readinessProbe:
            httpGet: {path: /ready, port: 8080}
          livenessProbe:
            httpGet: {path: /healthz, port: 8080}
";

/// Writes `count` copies of [`DEPLOYMENT`], each with its own name, into one file; returns the
/// bytes written.
fn generate(file: &Path, count: usize) -> usize {
    let mut out = String::with_capacity(count * (DEPLOYMENT.len() + 10));
    for i in 0..count {
        out.push_str("---\n");
        out.push_str(&DEPLOYMENT.replacen("web-N", &format!("web-{i}"), 1));
    }
    std::fs::write(file, &out).unwrap();
    out.len()
}
