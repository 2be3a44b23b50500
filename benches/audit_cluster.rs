//! `probegate audit` at scale against a real API server (cargo feature `e2e`, `KUBEBUILDER_ASSETS`
//! as for the e2e tests): DEPLOYMENTS (default 10,000) Deployments spread over 10 namespaces, each
//! with a ReplicaSet and a Pod whose status says the container restarted, seeded through the API
//! (no kubelet). Every object carries a label `bench-slice` (0 to 3, the Deployment's number modulo
//! 4). Then the binary runs, with its default limits (`--qps`, `--writes-in-flight`):
//! 1. How reports are written, side by side (skip with `COMPARE=0`): one first pass per slice
//!    (`-l bench-slice=K`, a quarter of the Deployments each, no reports yet), 16 writes in flight,
//!    with one write path each (`--report-writes`): `before` (the path before 2026-12-02: create,
//!    the full report), `create` (the lean report: the default), `create-ignore` (the lean report
//!    with `fieldValidation=Ignore`), then `before` again, which brackets the drift of a growing
//!    etcd and of the machine's load. The list and evaluation cost is the same in each, so the
//!    times and the API server's CPU per report written compare the write paths. Then their
//!    Reports are deleted.
//! 2. `probegate audit -A --write-reports` twice: wall time, peak RSS (VmHWM of the audit process,
//!    polled) and report writes of a first pass (every report new) and of a second one over an
//!    unchanged cluster. Targets (issue 12): first pass within 60 s, peak RSS at most 256 MiB, zero
//!    writes on the second pass.
//! 3. Two shards (`--shard-count 2 --shard-index 0|1`) at the same time, each a first pass writing
//!    `wgpolicyk8s.io/v1alpha2` PolicyReports (a second CRD, so they are new again): the time of
//!    each, and of both, against the one-replica first pass of 2.
//! 4. `probegate audit --watch -A`: after its first pass, one Deployment at a time changes; the time
//!    from the update's response to its report's new content (polled every 20 ms). Target: 2 s.
//!
//! Each pass also prints the CPU seconds the audit, kube-apiserver and etcd spent meanwhile (from
//! `/proc`), which says where the time went.
//!
//! `KUBEBUILDER_ASSETS=... cargo bench --features e2e --bench audit_cluster` (`DEPLOYMENTS=N` for
//! fewer; `PROBEGATE_BIN=target/release/probegate` to measure that binary; `CHANGES=N` changed
//! Deployments in 4, default 5; `COMPARE=0` skips 1; `BASELINE_BIN=path` adds a read-only pass of
//! that binary and of this one after 2, to compare how they list).

#[allow(dead_code)]
#[path = "../tests/e2e/harness.rs"]
mod harness;

use std::io::Read as _;
use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::json;

const NAMESPACES: usize = 10;
const IN_FLIGHT: usize = 32;
/// The `bench-slice` label's values: section 1 compares write paths on one slice each.
const SLICES: usize = 4;

fn resource(group: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, "v1", kind), plural)
}

fn container(i: usize) -> serde_json::Value {
    // Every third one has a liveness probe that reaches a database: a finding with evidence.
    let liveness = if i.is_multiple_of(3) {
        json!({"exec": {"command": ["sh", "-c", format!("pg_isready -h db-{i}.data.svc")]}, "timeoutSeconds": 3})
    } else {
        json!({"httpGet": {"path": "/live", "port": 8080}, "timeoutSeconds": 3})
    };
    json!({"name": "app", "image": "example/app:1", "ports": [{"containerPort": 8080}],
        "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}, "timeoutSeconds": 2},
        "livenessProbe": liveness, "startupProbe": {"httpGet": {"path": "/live", "port": 8080}},
        "lifecycle": {"preStop": {"sleep": {"seconds": 5}}}})
}

async fn seed_one(client: kube::Client, ns: String, i: usize) {
    let name = format!("app-{i}");
    let labels = json!({"app": name});
    let sliced = json!({"app": name, "bench-slice": (i % SLICES).to_string()});
    let template = json!({"metadata": {"labels": sliced}, "spec": {"containers": [container(i)]}});
    let pp = PostParams::default();
    let deployments: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), &ns, &resource("apps", "Deployment", "deployments"));
    let d: DynamicObject = serde_json::from_value(json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": sliced},
        "spec": {"selector": {"matchLabels": labels}, "template": template}}))
    .unwrap();
    let d = deployments.create(&pp, &d).await.expect("create a Deployment");
    let owner = |o: &DynamicObject, kind: &str, api_version: &str| json!([{"apiVersion": api_version, "kind": kind, "name": o.metadata.name, "uid": o.metadata.uid, "controller": true}]);
    let replicasets: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), &ns, &resource("apps", "ReplicaSet", "replicasets"));
    let rs: DynamicObject = serde_json::from_value(json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": format!("{name}-1"), "labels": sliced, "ownerReferences": owner(&d, "Deployment", "apps/v1")},
        "spec": {"selector": {"matchLabels": labels}, "template": template}}))
    .unwrap();
    let rs = replicasets.create(&pp, &rs).await.expect("create a ReplicaSet");
    let pods: Api<DynamicObject> = Api::namespaced_with(client.clone(), &ns, &resource("", "Pod", "pods"));
    let mut spec = template["spec"].clone();
    spec["automountServiceAccountToken"] = json!(false);
    let pod: DynamicObject = serde_json::from_value(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": format!("{name}-1-x"), "labels": sliced, "ownerReferences": owner(&rs, "ReplicaSet", "apps/v1")},
        "spec": spec}))
    .unwrap();
    pods.create(&pp, &pod).await.expect("create a Pod");
    let status = json!({"status": {"phase": "Running", "containerStatuses": [{"name": "app", "image": "example/app:1",
        "imageID": "", "ready": true, "restartCount": i % 7, "state": {"running": {"startedAt": "2026-12-01T10:00:00Z"}},
        "lastState": {"terminated": {"exitCode": 137, "reason": "Error", "startedAt": "2026-12-01T09:00:00Z", "finishedAt": "2026-12-01T09:59:00Z"}}}]}});
    pods.patch_status(&format!("{name}-1-x"), &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("set a Pod's status");
}

struct Run {
    seconds: f64,
    peak_rss_kib: u64,
    /// CPU seconds (user + system) of the audit process, its last sample before it exited.
    cpu_seconds: f64,
    stderr: String,
}

/// User + system CPU seconds of a process from `/proc/PID/stat` (clock ticks of 1/100 s).
fn cpu_of(pid: &str) -> Option<(String, f64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (comm, rest) = stat.split_once(" (")?.1.rsplit_once(") ")?;
    let fields: Vec<&str> = rest.split(' ').collect();
    // After the command: state(0) ppid(1) ... utime(11) stime(12).
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    (fields.get(1)? == &std::process::id().to_string()).then(|| (comm.to_string(), ticks / 100.0))
}

/// CPU seconds so far of this bench's kube-apiserver and etcd (its child processes).
fn server_cpu() -> (f64, f64) {
    let (mut api, mut etcd) = (0.0, 0.0);
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        if let Some((comm, cpu)) = cpu_of(&entry.file_name().to_string_lossy()) {
            match comm.as_str() {
                "kube-apiserver" => api += cpu,
                "etcd" => etcd += cpu,
                _ => {}
            }
        }
    }
    (api, etcd)
}

/// Runs `f` and says how much CPU the API server and etcd spent meanwhile.
fn with_server_cpu<T>(f: impl FnOnce() -> T) -> (T, String) {
    let ((out, _), text) = with_server_cpu_seconds(f);
    (out, text)
}

/// [`with_server_cpu`], also giving the API server's CPU seconds.
fn with_server_cpu_seconds<T>(f: impl FnOnce() -> T) -> ((T, f64), String) {
    let (api0, etcd0) = server_cpu();
    let out = f();
    let (api1, etcd1) = server_cpu();
    ((out, api1 - api0), format!("CPU: kube-apiserver {:.1} s, etcd {:.1} s", api1 - api0, etcd1 - etcd0))
}

/// The `W` of the report line's "W written".
fn written(r: &Run) -> Option<f64> {
    writes_line(r)
        .split_once("): ")
        .and_then(|(_, rest)| rest.split_once(" written"))
        .and_then(|(w, _)| w.trim().parse().ok())
}

fn audit(args: &[&str]) -> Run {
    // PROBEGATE_BIN: another build of the binary to measure (a release one from a dev-profile bench).
    let binary = std::env::var_os("PROBEGATE_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_probegate").into());
    audit_with(&binary, args)
}

fn audit_with(binary: &std::ffi::OsStr, args: &[&str]) -> Run {
    let started = Instant::now();
    let mut child = std::process::Command::new(binary)
        .arg("audit")
        .args(args)
        .env("KUBECONFIG", &harness::cluster().kubeconfig)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run probegate audit");
    let status_file = format!("/proc/{}/status", child.id());
    let pid = child.id().to_string();
    let mut peak = 0;
    let mut cpu_seconds = 0.0;
    loop {
        if let Some((_, cpu)) = cpu_of(&pid) {
            cpu_seconds = cpu;
        }
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        if let Ok(status) = std::fs::read_to_string(&status_file) {
            let hwm = status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok());
            peak = peak.max(hwm.unwrap_or(0));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    Run { seconds: started.elapsed().as_secs_f64(), peak_rss_kib: peak, cpu_seconds, stderr }
}

fn writes_line(r: &Run) -> String {
    r.stderr.lines().find(|l| l.contains("reports (")).unwrap_or("no report line").to_string()
}

fn print_run(what: &str, r: &Run, server: &str) {
    let line = writes_line(r);
    // "reports (API): W written, ...": W over the whole pass's time.
    let rate =
        written(r).map(|w| format!(" ({:.0} writes/s over the pass)", w / r.seconds)).unwrap_or_default();
    println!(
        "{what}: {:.1} s, peak RSS {:.1} MiB; {line}{rate}; {server}, audit {:.1} s",
        r.seconds,
        r.peak_rss_kib as f64 / 1024.0,
        r.cpu_seconds
    );
}

/// Runs one audit and prints its figures with the server's CPU meanwhile (and per report written,
/// which includes the pass's lists: compare it between passes over the same objects).
fn measure(what: &str, args: &[&str]) {
    let ((run, api_cpu), server) = with_server_cpu_seconds(|| audit(args));
    let per_write = written(&run)
        .filter(|&w| w > 0.0)
        .map(|w| format!(", {:.2} ms of kube-apiserver CPU per report written", api_cpu * 1000.0 / w))
        .unwrap_or_default();
    print_run(what, &run, &format!("{server}{per_write}"));
}

fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let n: usize = std::env::var("DEPLOYMENTS").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000);
    let changes: usize = std::env::var("CHANGES").ok().and_then(|v| v.parse().ok()).unwrap_or(5);
    for crd in [
        concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/components/reports/crd-openreports.yaml"),
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/crds/wgpolicyk8s.io_policyreports.yaml"),
    ] {
        let out = harness::kubectl(&["apply", "-f", crd]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let seeded = Instant::now();
    let namespaces = runtime.block_on(async {
        let client = harness::client().await;
        let mut namespaces = Vec::new();
        for i in 0..NAMESPACES {
            namespaces.push(harness::namespace(&format!("bench{i}")).await);
        }
        futures::stream::iter(0..n)
            .map(|i| seed_one(client.clone(), namespaces[i % NAMESPACES].clone(), i))
            .buffer_unordered(IN_FLIGHT)
            .collect::<Vec<()>>()
            .await;
        namespaces
    });
    println!(
        "seeded {n} Deployments, {n} ReplicaSets, {n} Pods with statuses in {:.0} s",
        seeded.elapsed().as_secs_f64()
    );
    // Write paths side by side, first: each on a fresh quarter of the Deployments; then their
    // Reports are deleted so that the first pass below writes every one.
    if std::env::var("COMPARE").as_deref() != Ok("0") {
        for (slice, (how, in_flight)) in
            [("before", "16"), ("create", "16"), ("create-ignore", "16"), ("before", "16")]
                .into_iter()
                .enumerate()
        {
            let selector = format!("bench-slice={slice}");
            let args = [
                "-A",
                "--write-reports",
                "-l",
                &selector,
                "--report-writes",
                how,
                "--writes-in-flight",
                in_flight,
                "--exit-zero",
                "-o",
                "json",
            ];
            measure(
                &format!(
                    "slice {slice} (about {} Deployments), {how} with {in_flight} in flight",
                    n / SLICES
                ),
                &args,
            );
        }
        let deleted = Instant::now();
        runtime.block_on(async {
            let client = harness::client().await;
            let report_resource = ApiResource::from_gvk_with_plural(
                &GroupVersionKind::gvk("openreports.io", "v1alpha1", "Report"),
                "reports",
            );
            for ns in &namespaces {
                let reports: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns, &report_resource);
                reports
                    .delete_collection(&Default::default(), &Default::default())
                    .await
                    .expect("delete the Reports");
                let deadline = Instant::now() + Duration::from_secs(900);
                while !reports
                    .list_metadata(&Default::default())
                    .await
                    .expect("list Reports")
                    .items
                    .is_empty()
                {
                    assert!(Instant::now() < deadline, "the Reports in {ns} were not deleted");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
        });
        println!("write paths: their Reports deleted in {:.0} s", deleted.elapsed().as_secs_f64());
    }

    let args = ["-A", "--write-reports", "--exit-zero", "-o", "json"];
    measure("first pass", &args);
    measure("second pass (nothing changed)", &args);
    // BASELINE_BIN: an older build, to compare a read-only pass (lists and evaluation, no reports)
    // side by side with this one.
    if let Some(baseline) = std::env::var_os("BASELINE_BIN") {
        let read_only = ["-A", "--exit-zero", "-o", "json"];
        for (what, binary) in [
            ("read-only pass, BASELINE_BIN", baseline.clone()),
            (
                "read-only pass, this build",
                std::env::var_os("PROBEGATE_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_probegate").into()),
            ),
        ] {
            let (run, server) = with_server_cpu(|| audit_with(&binary, &read_only));
            print_run(what, &run, &server);
        }
    }

    // Two shards at the same time, each a first pass (PolicyReports: none written yet).
    let started = Instant::now();
    let (shards, server) = with_server_cpu(|| {
        std::thread::scope(|scope| {
            let handles: Vec<_> = ["0", "1"]
                .into_iter()
                .map(|index| {
                    scope.spawn(move || {
                        let shard = [
                            "-A",
                            "--write-reports",
                            "--report-api",
                            "wgpolicyk8s",
                            "--shard-count",
                            "2",
                            "--shard-index",
                            index,
                            "--exit-zero",
                            "-o",
                            "json",
                        ];
                        (index.to_string(), audit(&shard))
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().expect("a shard's thread")).collect::<Vec<(String, Run)>>()
        })
    });
    for (index, run) in &shards {
        print_run(&format!("shard {index} of 2, first pass, side by side"), run, "server CPU: below");
    }
    println!("both shards done in {:.1} s; {server}", started.elapsed().as_secs_f64());

    // --watch: one changed Deployment at a time, from the update to its report's new content.
    let port = harness::free_port();
    let log = std::env::temp_dir().join(format!("probegate-bench-watch-{}.log", std::process::id()));
    let binary = std::env::var_os("PROBEGATE_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_probegate").into());
    let mut watcher = std::process::Command::new(binary)
        .args(["audit", "--watch", "-A", "--lease-namespace", &namespaces[0], "--identity", "bench"])
        .args(["--admin-addr", &format!("127.0.0.1:{port}"), "--log-format", "json"])
        .env("KUBECONFIG", &harness::cluster().kubeconfig)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("start probegate audit --watch");
    let started = Instant::now();
    let latencies = runtime.block_on(async {
        let metrics = format!("http://127.0.0.1:{port}/metrics");
        loop {
            let body = match reqwest::get(&metrics).await {
                Ok(r) => r.text().await.unwrap_or_default(),
                Err(_) => String::new(),
            };
            if body.lines().any(|l| l.starts_with("probegate_audit_passes_total{result=\"ok\"}")) {
                break;
            }
            assert!(started.elapsed() < Duration::from_secs(900), "no full pass from --watch; see {}", log.display());
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        println!("--watch: first full pass done after {:.1} s", started.elapsed().as_secs_f64());
        let client = harness::client().await;
        let report_resource = ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("openreports.io", "v1alpha1", "Report"),
            "reports",
        );
        let mut latencies = Vec::new();
        for k in 0..changes.min(n) {
            // Deployment app-i lives in namespace i % 10; 3 -> 1 s adds a probe-timeout finding.
            let i = k * 7 + 1;
            let ns = &namespaces[i % NAMESPACES];
            let reports: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns, &report_resource);
            let name = format!("probegate-deployment-app-{i}");
            let hash = |r: &DynamicObject| {
                r.metadata.annotations.as_ref().and_then(|a| a.get("probegate.dev/report-hash")).cloned()
            };
            let before = hash(&reports.get(&name).await.expect("the report of a seeded Deployment"));
            let deployments: Api<DynamicObject> =
                Api::namespaced_with(client.clone(), ns, &resource("apps", "Deployment", "deployments"));
            let patch = json!([{"op": "replace", "path": "/spec/template/spec/containers/0/livenessProbe/timeoutSeconds", "value": 1}]);
            deployments
                .patch(&format!("app-{i}"), &PatchParams::default(), &Patch::<()>::Json(serde_json::from_value(patch).unwrap()))
                .await
                .expect("change a Deployment");
            let t0 = Instant::now();
            loop {
                if let Ok(r) = reports.get(&name).await
                    && hash(&r) != before
                {
                    break;
                }
                assert!(t0.elapsed() < Duration::from_secs(120), "{name} never changed; see {}", log.display());
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            let took = t0.elapsed().as_secs_f64();
            println!("--watch: app-{i} changed, its report followed in {took:.2} s");
            latencies.push(took);
            // Changes one at a time: the next starts after this one is written.
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        latencies
    });
    let hwm = std::fs::read_to_string(format!("/proc/{}/status", watcher.id()))
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("VmHWM:")).map(|v| v.trim().to_string()));
    let _ = watcher.kill();
    let _ = watcher.wait();
    let mut sorted = latencies.clone();
    sorted.sort_by(f64::total_cmp);
    if let (Some(median), Some(max)) = (sorted.get(sorted.len() / 2), sorted.last()) {
        println!(
            "--watch: {} changes, report updated in median {median:.2} s, max {max:.2} s; watcher peak RSS {}",
            sorted.len(),
            hwm.unwrap_or_else(|| "?".into())
        );
    }
    let _ = std::fs::remove_file(&log);
}
