//! `probegate check` on a generated tree of manifests: CPU time (user + sys) of the child process.
//!
//! Run: `cargo bench --bench check`. It copies the corpus manifests (`tests/fixtures/corpus`)
//! round-robin into 10,000 files under 100 directories of a temporary directory, then runs the
//! release binary, `probegate check -o json DIR > /dev/null`, five times, and reports the CPU time
//! of each run (the children's user + sys from `/proc/self/stat`, in clock ticks of 10 ms) and the
//! wall time. Target: at most 2 s of CPU for the 10,000 files.
//!
//! With `PROBEGATE_BENCH_CHECKOV=/path/to/checkov` it also times checkov once on the same tree
//! (`checkov -d DIR --framework kubernetes --quiet --compact -o json --skip-download`), as a
//! reference a user would recognise.
//!
//! Without `--bench` on its command line (as under `cargo test --benches`) it runs a smoke round
//! of 200 files.

use std::path::Path;

#[path = "support/child.rs"]
mod child;
use child::run;

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (files, rounds) = if full { (10_000, 5) } else { (200, 1) };
    let dir = tempfile::tempdir().expect("temporary directory");
    let bytes = generate(dir.path(), files);
    println!(
        "check: {files} manifests ({:.1} MB) under {} directories",
        bytes as f64 / 1e6,
        files.div_ceil(100)
    );
    let bin = env!("CARGO_BIN_EXE_probegate");
    let dir_arg = dir.path().to_str().expect("UTF-8 temporary path");
    let mut cpu = Vec::new();
    for round in 1..=rounds {
        let (c, wall, code) = run(bin, &["check", "-o", "json", dir_arg]);
        assert!(code == Some(0) || code == Some(1), "probegate check exited {code:?}");
        println!("  round {round}: CPU {c:.2} s (user + sys), wall {:.2} s", wall.as_secs_f64());
        cpu.push(c);
    }
    cpu.sort_by(f64::total_cmp);
    let median = cpu[cpu.len() / 2];
    println!(
        "probegate check: median CPU {median:.2} s for {files} manifests ({:.0} µs per manifest); target at most {} s",
        median * 1e6 / files as f64,
        if full { "2" } else { "-" }
    );
    if full && let Ok(checkov) = std::env::var("PROBEGATE_BENCH_CHECKOV") {
        let args = [
            "-d",
            dir_arg,
            "--framework",
            "kubernetes",
            "--quiet",
            "--compact",
            "-o",
            "json",
            "--skip-download",
        ];
        let (c, wall, code) = run(&checkov, &args);
        println!(
            "checkov (reference): CPU {c:.1} s (user + sys), wall {:.1} s, exit {code:?}, for {files} manifests",
            wall.as_secs_f64()
        );
    }
}

/// Writes `count` manifests, the corpus files in turn, 100 per directory; returns the bytes written.
fn generate(root: &Path, count: usize) -> usize {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus");
    let mut texts: Vec<(String, String)> = std::fs::read_dir(&corpus)
        .expect("corpus")
        .filter_map(|e| {
            let path = e.ok()?.path();
            (path.extension()? == "yaml").then(|| {
                let name = path.file_stem().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read_to_string(&path).unwrap())
            })
        })
        .collect();
    texts.sort();
    let mut bytes = 0;
    for i in 0..count {
        let dir = root.join(format!("team-{:03}", i / 100));
        std::fs::create_dir_all(&dir).unwrap();
        let (name, text) = &texts[i % texts.len()];
        std::fs::write(dir.join(format!("{i:05}-{name}.yaml")), text).unwrap();
        bytes += text.len();
    }
    bytes
}
