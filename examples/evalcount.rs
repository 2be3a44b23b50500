//! Evaluates one workload N times, for exact instruction counts under callgrind (docs/benchmarks.md,
//! "the per-Pod evaluation made cheaper"). Usage: evalcount WHAT N
//! WHAT: a corpus file name, "warm:FILE" (a corpus file evaluated through one `engine::ParseCache`
//! that already saw it, as `evaluate_corpus_pod_warm` does), "review:FILE" (deployment review's
//! evaluate via admission::review), or "worst".
#[path = "../benches/support/workloads.rs"]
mod workloads;

use probegate::admission::{self, Endpoint};
use probegate::engine::{self, NoConfigMaps, ParseCache, Workload, WorkloadKind};
use probegate::policy::Policy;
use std::path::Path;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let what = &a[1];
    let n: usize = a[2].parse().unwrap();
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let policy = Policy::default();
    if let Some(file) = what.strip_prefix("review:") {
        let body = std::fs::read(fx.join("admission").join(file)).unwrap();
        let request = admission::parse_review(&body).unwrap();
        let endpoint = if file.contains("mutating") { Endpoint::Mutate } else { Endpoint::Validate };
        for _ in 0..n {
            let d = admission::review(&policy, None, endpoint, std::hint::black_box(&request)).unwrap();
            std::hint::black_box(d);
        }
    } else if what == "worst" {
        let body = workloads::worst_case_body();
        let request = admission::parse_review(&body).unwrap();
        for _ in 0..n {
            let d =
                admission::review(&policy, None, Endpoint::Validate, std::hint::black_box(&request)).unwrap();
            std::hint::black_box(d);
        }
    } else if let Some(file) = what.strip_prefix("warm:") {
        let text = std::fs::read_to_string(fx.join("corpus").join(file)).unwrap();
        let doc = probegate::manifest::parse_documents(&text).unwrap().remove(0);
        let w = Workload::from_value(WorkloadKind::Pod, &workloads::as_pod(&doc)).unwrap();
        let mut cache = ParseCache::new();
        // The cache is filled before the counted evaluations, so N = 0 and N = 300 differ by N warm ones.
        engine::evaluate_cached(&policy.rules, &w, &[], &NoConfigMaps, "", &mut cache);
        for _ in 0..n {
            std::hint::black_box(engine::evaluate_cached(
                std::hint::black_box(&policy.rules),
                std::hint::black_box(&w),
                &[],
                &NoConfigMaps,
                "",
                &mut cache,
            ));
        }
    } else {
        let text = std::fs::read_to_string(fx.join("corpus").join(what)).unwrap();
        let doc = probegate::manifest::parse_documents(&text).unwrap().remove(0);
        let w = Workload::from_value(WorkloadKind::Pod, &workloads::as_pod(&doc)).unwrap();
        for _ in 0..n {
            std::hint::black_box(engine::evaluate(
                std::hint::black_box(&policy.rules),
                std::hint::black_box(&w),
            ));
        }
    }
}
