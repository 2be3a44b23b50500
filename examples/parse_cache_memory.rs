//! What a full `engine::ParseCache` costs in memory (docs/server.md, "Parse cache"). Fills a cache
//! with the default bounds with distinct variants of a script (each variant one comment line
//! longer: a tree the same size as the script's own), evaluating a Pod whose exec probes run it,
//! and reports glibc's bytes in use (`mallinfo2().uordblks`: Rust's allocations and tree-sitter's
//! alike) with the full cache less with an empty one that made its parser.
//! Usage: `cargo run --release --example parse_cache_memory [short|mysql|long]...` (default: all).
#[path = "../benches/support/workloads.rs"]
mod workloads;

use probegate::engine::{self, NoConfigMaps, ParseCache, Workload, WorkloadKind};
use probegate::policy::Policy;
use serde_json::{Value, json};

/// glibc's `struct mallinfo2` (malloc.h): every field a `size_t`.
#[repr(C)]
#[derive(Default)]
struct MallInfo2 {
    arena: usize,
    ordblks: usize,
    smblks: usize,
    hblks: usize,
    hblkhd: usize,
    usmblks: usize,
    fsmblks: usize,
    uordblks: usize,
    fordblks: usize,
    keepcost: usize,
}

unsafe extern "C" {
    fn mallinfo2() -> MallInfo2;
}

/// Bytes allocated and not freed (small and mmapped blocks).
fn in_use() -> usize {
    // SAFETY: mallinfo2 only reads the allocator's counters.
    let m = unsafe { mallinfo2() };
    m.uordblks + m.hblkhd
}

/// The Pod of `doc` (a corpus document) with every exec probe's last argument followed by
/// `\n# variant N`.
fn variant(doc: &Value, n: usize) -> Workload {
    let mut pod = workloads::as_pod(doc);
    for c in pod["spec"]["containers"].as_array_mut().unwrap() {
        for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
            if let Some(Value::Array(cmd)) = c.pointer_mut(&format!("/{probe}/exec/command"))
                && let Some(Value::String(last)) = cmd.last_mut()
            {
                last.push_str(&format!("\n# variant {n}"));
            }
        }
    }
    Workload::from_value(WorkloadKind::Pod, &pod).unwrap()
}

fn script_doc(script: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop"},
        "spec": {"containers": [{"name": "app", "image": "app:1",
            "livenessProbe": {"exec": {"command": ["sh", "-c", script]}}}]}})
}

fn main() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus");
    let mysql = std::fs::read_to_string(
        fixtures.join("statefulset-bitnami-mysql-primary-mysqladmin-status-all-three-probes.yaml"),
    )
    .unwrap();
    let mysql = probegate::manifest::parse_documents(&mysql).unwrap().remove(0);
    let long_script: String = (0..40)
        .map(|i| format!("if pg_isready -h db{i}.shop.svc -t 2; then echo \"ok {i}\"; else exit 1; fi\n"))
        .collect();
    let shapes: Vec<(&str, Value)> = vec![
        ("short", script_doc("if pg_isready -h db.shop.svc; then exit 0; else exit 1; fi")),
        ("mysql", mysql),
        ("long", script_doc(&long_script)),
    ];
    let wanted: Vec<String> = std::env::args().skip(1).collect();
    let policy = Policy::default();
    for (name, doc) in shapes {
        if !wanted.is_empty() && !wanted.iter().any(|w| w == name) {
            continue;
        }
        let mut cache = ParseCache::new();
        // The parser, made and kept (evaluated twice so that every one-time allocation is made).
        for _ in 0..2 {
            engine::evaluate_cached(&policy.rules, &variant(&doc, 0), &[], &NoConfigMaps, "", &mut cache);
        }
        let (max_entries, max_bytes) = cache.bounds();
        let base = in_use();
        let base_entries = cache.len();
        let base_text = cache.text_bytes();
        let mut n = 1;
        // Until the cache has turned over once: full, at one bound or the other.
        while n < 4 * max_entries {
            engine::evaluate_cached(&policy.rules, &variant(&doc, n), &[], &NoConfigMaps, "", &mut cache);
            n += 1;
        }
        let full = in_use();
        let entries = cache.len() - base_entries;
        let text = cache.text_bytes() - base_text;
        let bytes = full.saturating_sub(base);
        println!(
            "{name}: {} entries ({max_entries} max), {} bytes of text ({max_bytes} max), {bytes} bytes in use more \
             than with {base_entries} entries: {} bytes an entry, {:.0} bytes a byte of text",
            cache.len(),
            cache.text_bytes(),
            bytes / entries.max(1),
            bytes as f64 / text.max(1) as f64
        );
    }
}
