//! The command line as people run it (the real binary): one run is one view of the cluster
//! (ConfigMaps across files), errors placed where the problem is, `fix` keeping files as written,
//! and the conveniences other linters have (`rules`, completions, a config file, `--skip`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs the binary in `dir` with `stdin`; the configuration environment is cleared so that the
/// tests do not depend on the caller's.
fn run_in(dir: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_probegate"))
        .args(args)
        .current_dir(dir)
        .env_remove("PROBEGATE_CONFIG")
        .env("NO_COLOR", "1")
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(text) = stdin {
        child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    }
    child.wait_with_output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The Redis replication fixture split as Helm output often is: the health ConfigMap in one file,
/// the two StatefulSets in another.
fn split_redis(dir: &Path) -> (String, String) {
    let text = std::fs::read_to_string(root().join("tests/fixtures/scripts/redis-replication.yaml")).unwrap();
    let (configmap, workloads) = text.split_once("\n---\n").unwrap();
    assert!(configmap.contains("kind: ConfigMap") && !workloads.contains("kind: ConfigMap"));
    std::fs::write(dir.join("health.yaml"), configmap).unwrap();
    std::fs::write(dir.join("redis.yaml"), workloads).unwrap();
    (configmap.to_string(), workloads.to_string())
}

#[test]
fn a_configmap_in_one_file_resolves_the_script_of_a_workload_in_another() {
    let dir = tempfile::tempdir().unwrap();
    let (configmap, workloads) = split_redis(dir.path());
    // Alone, the script is unknown: a note, never a denial.
    let alone = run_in(dir.path(), &["check", "redis.yaml"], None);
    assert_eq!(alone.status.code(), Some(0), "{}", stdout(&alone));
    assert!(stdout(&alone).contains("not analysed (ConfigMap data/cache-redis-health is not available)"));
    // Two files, either order, and a file plus standard input: one view, the replica denied.
    for args in [
        vec!["check", "health.yaml", "redis.yaml"],
        vec!["check", "redis.yaml", "health.yaml"],
        vec!["check", "health.yaml", "-"],
    ] {
        let stdin = args.contains(&"-").then_some(workloads.as_str());
        let o = run_in(dir.path(), &args, stdin);
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {out}");
        let deny: Vec<&str> = out.lines().filter(|l| l.contains(" deny ")).collect();
        assert_eq!(deny.len(), 1, "{out}");
        assert!(deny[0].contains("cache-redis-replicas") && deny[0].contains("liveness-dependency"), "{out}");
    }
    // The ConfigMap on standard input, the workloads in a file.
    let o = run_in(dir.path(), &["check", "-", "redis.yaml"], Some(&configmap));
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    // explain sees it too: the replica's liveness reaches outside the pod only with the ConfigMap.
    let with = stdout(&run_in(dir.path(), &["explain", "health.yaml", "redis.yaml"], None));
    let without = stdout(&run_in(dir.path(), &["explain", "redis.yaml"], None));
    let marker = "reaches outside the pod (liveness-dependency)";
    assert!(with.contains(marker), "{with}");
    assert!(!without.contains(marker), "{without}");
}
