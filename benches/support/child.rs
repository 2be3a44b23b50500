//! A child process's CPU time, for the benches that time the release binary as a child
//! (`#[path = "support/child.rs"] mod child;` in benches/check.rs and benches/fix.rs).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Linux's USER_HZ: `/proc` times are in 1/100 s.
const TICKS_PER_SECOND: f64 = 100.0;

/// The children's CPU time so far (user + sys of waited-for children), in seconds.
fn children_cpu() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    // Fields after the command name (which is in parentheses and may hold spaces).
    let rest = &stat[stat.rfind(')').expect("stat format") + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // cutime and cstime are fields 16 and 17 of the whole line: 14 and 15 after the name.
    let ticks: f64 = fields[13].parse::<f64>().unwrap() + fields[14].parse::<f64>().unwrap();
    ticks / TICKS_PER_SECOND
}

/// Runs a command with its output discarded; returns its CPU time, wall time and exit code.
pub fn run(program: &str, args: &[&str]) -> (f64, Duration, Option<i32>) {
    let before = children_cpu();
    let start = Instant::now();
    let status = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    let wall = start.elapsed();
    (children_cpu() - before, wall, status.code())
}
