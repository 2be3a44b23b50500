//! `probegate fix` on one multi-document file: does its time grow with the file's size, and no
//! faster? Ratios only (the machine's speed cancels out).
//!
//! Run: `cargo bench --bench fix`. It writes one file of N Deployments (the corpus Deployments in
//! turn, each renamed, all separated by `---`) and one of 4 N, runs the release binary,
//! `probegate fix FILE > /dev/null`, three times on each, and reports the median CPU time of each
//! size (the children's user + sys from `/proc/self/stat`) and their ratio. A linear `fix` gives a
//! ratio near 4; the break-it pass s22 found 54 s for a 16 MB file, the objects of each document
//! looked up among all of the file's (quadratic: a ratio near 16). Target: at most 6.
//!
//! Without `--bench` on its command line (as under `cargo test --benches`) it runs a smoke round
//! with small files and checks nothing but that `fix` succeeds.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// Linux's USER_HZ: `/proc` times are in 1/100 s.
const TICKS_PER_SECOND: f64 = 100.0;

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (small, rounds) = if full { (4_000, 3) } else { (50, 1) };
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
                "  {count} Deployments ({:.1} MB): CPU {c:.2} s (user + sys), wall {wall:.2} s",
                bytes as f64 / 1e6
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

/// Writes `count` Deployments of the corpus in turn, each with its own name, into one file;
/// returns the bytes written.
fn generate(file: &Path, count: usize) -> usize {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus");
    let mut texts: Vec<String> = std::fs::read_dir(&corpus)
        .expect("corpus")
        .filter_map(|e| {
            let path = e.ok()?.path();
            let name = path.file_name()?.to_str()?.to_string();
            (name.starts_with("deployment-") && name.ends_with(".yaml"))
                .then(|| std::fs::read_to_string(&path).unwrap())
        })
        .collect();
    texts.sort();
    assert!(!texts.is_empty(), "no Deployment in the corpus");
    let mut out = String::new();
    for i in 0..count {
        let text = &texts[i % texts.len()];
        out.push_str("---\n");
        // Each its own name (the first `name:` of a corpus file is the Deployment's).
        out.push_str(&text.replacen("\n  name: ", &format!("\n  name: n{i}-"), 1));
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    std::fs::write(file, &out).unwrap();
    out.len()
}

/// The children's CPU time so far (user + sys of waited-for children), in seconds.
fn children_cpu() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    let rest = &stat[stat.rfind(')').expect("stat format") + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // cutime and cstime are fields 16 and 17 of the whole line: 14 and 15 after the name.
    let ticks: f64 = fields[13].parse::<f64>().unwrap() + fields[14].parse::<f64>().unwrap();
    ticks / TICKS_PER_SECOND
}

/// Runs a command with its output discarded; returns its CPU time, wall time (s) and exit code.
fn run(program: &str, args: &[&str]) -> (f64, f64, Option<i32>) {
    let before = children_cpu();
    let start = Instant::now();
    let status = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    (children_cpu() - before, start.elapsed().as_secs_f64(), status.code())
}
