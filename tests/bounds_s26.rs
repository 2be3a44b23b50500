//! Session 26 (s26-mem): every rule that reads an exec command keeps to the bounds of the liveness
//! analysis. A break-it pass took the webhook past its 128 MiB memory limit with one Pod whose
//! liveness probe was `sh -c "a a a ..."` (1.5 MB of one-letter words): `liveness-matches-readiness`,
//! `exec-probe-replaceable` and `probe-client-deadline` each split or copied the whole command
//! (70 to 111 MB each), while the liveness analysis reads no command over `MAX_COMMAND_BYTES`
//! (64 KiB) and no `sh -c` script over `MAX_SCRIPT_BYTES` (16 KiB). Past those bounds the rules
//! now read nothing: no finding, and the analyses' existing "not analysed" note for the liveness
//! and readiness commands.
//!
//! Script rows were run in bash 5.2.15 and dash 0.5.12 with stub clients (`/tmp/emstub/run.sh`,
//! statuses "up / down"): `pg_isready -h orders-db` then lines `# a a a ...` is 0 / 2 in both (coupled);
//! `a a a ...` is 127 / 127 (command not found, no dependency); `curl -m 10
//! http://localhost:8080/healthz a a a` is 6 / 6 with no server (only its deadline matters here).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use probegate::admission::{self, ObjectEvaluation};
use probegate::engine::NoConfigMaps;
use probegate::engine::exec::{MAX_COMMAND_BYTES, MAX_SCRIPT_BYTES};
use probegate::policy::{Action, Policy, RuleId};
use serde_json::{Value, json};

mod common;

// === Counting the bytes a review allocates (in this thread, while asked) ===

/// The system allocator, counting the bytes live and their peak on a thread while it counts.
struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn count(delta: isize) {
    let _ = COUNTING.try_with(|on| {
        if on.get() {
            let live = LIVE.with(|l| {
                l.set(l.get() + delta);
                l.get()
            });
            PEAK.with(|p| p.set(p.get().max(live)));
        }
    });
}

// SAFETY: every call is passed on to `System` unchanged; only sizes are counted.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        count(-(layout.size() as isize));
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            count(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// `f()`, and the most bytes it had allocated at once (on this thread, beyond what it freed).
fn peak_bytes<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LIVE.with(|l| l.set(0));
    PEAK.with(|p| p.set(0));
    COUNTING.with(|c| c.set(true));
    let out = f();
    COUNTING.with(|c| c.set(false));
    (out, usize::try_from(PEAK.with(Cell::get)).unwrap_or(0))
}

// === Objects ===

/// `sh -c "a a a ..."`: a script of `bytes` bytes of one-letter words (the break-it reproducer).
fn words_script(bytes: usize) -> String {
    "a ".repeat(bytes / 2)
}

/// Comment lines of one-letter words, `bytes` bytes in all (a line of 50 words: under the
/// parser's 2,048 tokens a line).
fn comment_lines(bytes: usize) -> String {
    let line = format!("# {}\n", "a ".repeat(50));
    line.repeat(bytes.div_ceil(line.len()))
}

/// A Deployment (so that no rule skips a hand-made Pod) of one container `c` with `fields`.
fn deployment(fields: Value) -> Value {
    let mut container = json!({"name": "c", "image": "registry.example/app:1"});
    for (k, v) in fields.as_object().unwrap() {
        container[k] = v.clone();
    }
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "shop"},
        "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": {"metadata": {"labels": {"app": "d"}},
        "spec": {"containers": [container]}}}})
}

fn evaluate(policy: &Policy, doc: &Value) -> ObjectEvaluation {
    admission::evaluate_object_with_configmaps(policy, &common::workload(doc), "shop", None, &NoConfigMaps)
}

/// The rules that found something, each with its action.
fn rules_found(e: &ObjectEvaluation) -> Vec<(RuleId, Action)> {
    e.evaluation.findings.iter().map(|f| (f.rule, f.action)).collect()
}

fn finding(e: &ObjectEvaluation, rule: RuleId) -> Option<String> {
    e.evaluation.findings.iter().find(|f| f.rule == rule).map(|f| f.describe())
}

/// An exec probe of `argv`.
fn exec(argv: &[String]) -> Value {
    json!({"exec": {"command": argv}, "periodSeconds": 10})
}

fn sh(script: &str) -> Vec<String> {
    vec!["sh".into(), "-c".into(), script.into()]
}

/// `program` with `args`, then `n` one-letter arguments.
fn argv_with_padding(program: &[&str], n: usize) -> Vec<String> {
    program.iter().map(|s| s.to_string()).chain(std::iter::repeat_n("a".to_string(), n)).collect()
}

// === Findings past the bounds are what the bounded analysis gives ===

/// The coupled check first, then lines of comments (0 / 2 in bash and dash): within the script
/// bound the liveness analysis finds it and denies; past it, it is not analysed (a note naming
/// the bound, never a deny). Unchanged by this session: it pins what the bounded analysis gives.
#[test]
fn a_coupled_check_is_found_within_the_script_bound_and_noted_past_it() {
    let policy = Policy::default();
    let within = format!("pg_isready -h orders-db\n{}", comment_lines(MAX_SCRIPT_BYTES - 200));
    let e = evaluate(&policy, &deployment(json!({"livenessProbe": exec(&sh(&within))})));
    let f = finding(&e, RuleId::LivenessDependency).expect("found within the bound");
    assert!(f.contains("orders-db"), "{f}");
    assert!(rules_found(&e).contains(&(RuleId::LivenessDependency, Action::Deny)), "{:?}", rules_found(&e));
    for bytes in [MAX_SCRIPT_BYTES + 100, 1_500_000] {
        let over = format!("pg_isready -h orders-db\n{}", comment_lines(bytes));
        let e = evaluate(&policy, &deployment(json!({"livenessProbe": exec(&sh(&over))})));
        assert_eq!(finding(&e, RuleId::LivenessDependency), None, "{bytes}");
        let notes = &e.evaluation.unresolved;
        assert!(
            notes.iter().any(|u| u.over_bound
                && u.probe == "liveness"
                && u.reason.contains("bytes probegate analyses")),
            "{bytes}: {notes:?}"
        );
    }
}

/// `liveness-matches-readiness` on the same exec command in both probes (same failure budget):
/// a warning within the command bound; past it the commands are not read, so the rule does not
/// claim they are the same check (it compared nothing): no finding. Before s26 it warned, after
/// copying and splitting both 1.5 MB commands.
#[test]
fn identical_commands_past_the_bound_are_not_claimed_the_same_check() {
    let policy = Policy::default();
    for (script, same) in [
        (format!("redis-cli ping # {}", words_script(MAX_COMMAND_BYTES - 1000)), true),
        (words_script(MAX_COMMAND_BYTES + 10), false),
        (words_script(1_500_000), false),
    ] {
        let argv = sh(&script);
        let doc = deployment(json!({"livenessProbe": exec(&argv), "readinessProbe": exec(&argv)}));
        let got = finding(&evaluate(&policy, &doc), RuleId::LivenessMatchesReadiness);
        assert_eq!(got.is_some(), same, "{} bytes: {got:?}", script.len());
    }
    // An argv of one-character arguments past the bound: the same.
    let argv = argv_with_padding(&["redis-cli", "ping"], MAX_COMMAND_BYTES);
    let doc = deployment(json!({"livenessProbe": exec(&argv), "readinessProbe": exec(&argv)}));
    assert_eq!(finding(&evaluate(&policy, &doc), RuleId::LivenessMatchesReadiness), None);
    let argv = argv_with_padding(&["redis-cli", "ping"], 10);
    let doc = deployment(json!({"livenessProbe": exec(&argv), "readinessProbe": exec(&argv)}));
    assert!(finding(&evaluate(&policy, &doc), RuleId::LivenessMatchesReadiness).is_some());
}

/// `probe-client-deadline`: `curl -m 10` under timeoutSeconds 1 is found in a script within the
/// script bound and in an argv within the command bound; past them nothing is read, so nothing is
/// found (the liveness analysis notes the command as not analysed).
#[test]
fn a_client_deadline_is_read_within_the_bounds_only() {
    let policy = Policy::default();
    let curl = "curl -m 10 http://localhost:8080/healthz";
    let cases = [
        (sh(&format!("{curl} {}", words_script(MAX_SCRIPT_BYTES - 100))), true),
        (sh(&format!("{curl} {}", words_script(MAX_SCRIPT_BYTES + 100))), false),
        (sh(&format!("{curl} {}", words_script(3_000_000))), false),
        (argv_with_padding(&["curl", "-m", "10", "http://localhost:8080/healthz"], 1000), true),
        (argv_with_padding(&["curl", "-m", "10", "http://localhost:8080/healthz"], 500_000), false),
    ];
    for (argv, found) in cases {
        let bytes: usize = argv.iter().map(|a| a.len() + 1).sum();
        let e = evaluate(&policy, &deployment(json!({"livenessProbe": exec(&argv)})));
        let got = finding(&e, RuleId::ProbeClientDeadline);
        assert_eq!(got.is_some(), found, "{bytes} bytes: {got:?}");
        if let Some(message) = got {
            assert!(message.contains("curl -m 10"), "{message}");
        }
    }
}

/// `exec-probe-replaceable`: a curl of this Pod alone is replaceable within the bounds; past them
/// it is not read (no finding).
#[test]
fn a_replaceable_curl_is_read_within_the_bounds_only() {
    let mut policy = Policy::default();
    policy.rules.set_action(RuleId::ExecProbeReplaceable, Action::Warn);
    let url = "http://localhost:8080/healthz";
    let cases = [
        (sh(&format!("curl -sf {url} {}", words_script(MAX_SCRIPT_BYTES - 100))), true),
        (sh(&format!("curl -sf {url} {}", words_script(1_500_000))), false),
        (argv_with_padding(&["curl", "-sf", url], 1000), true),
        (argv_with_padding(&["curl", "-sf", url], 500_000), false),
    ];
    for (argv, found) in cases {
        let bytes: usize = argv.iter().map(|a| a.len() + 1).sum();
        // (A readiness probe: a liveness one is analysed for its dependency as well.)
        let e = evaluate(&policy, &deployment(json!({"readinessProbe": exec(&argv)})));
        let got = finding(&e, RuleId::ExecProbeReplaceable);
        assert_eq!(got.is_some(), found, "{bytes} bytes: {got:?}");
    }
}

/// `worker-liveness-missing` reads the container's own command for `sleep infinity`: past the
/// command or script bound it is not read and the rule says nothing (what it runs is not known);
/// within them, a loop that does work is a worker and one that sleeps is not.
#[test]
fn a_workers_command_is_read_within_the_bounds_only() {
    let policy = Policy::default();
    let worker = |args: Vec<String>| {
        finding(&evaluate(&policy, &deployment(json!({"args": args}))), RuleId::WorkerLivenessMissing)
    };
    assert!(worker(sh("while true; do work; done")).is_some());
    assert_eq!(worker(sh("sleep infinity")), None);
    assert!(worker(sh(&format!("run {}", words_script(MAX_SCRIPT_BYTES - 100)))).is_some());
    assert_eq!(worker(sh(&format!("run {}", words_script(MAX_SCRIPT_BYTES + 100)))), None);
    assert_eq!(worker(sh(&format!("run {}", words_script(3_000_000)))), None);
    assert_eq!(worker(argv_with_padding(&["run"], 500_000)), None);
}

/// `startup-probe` still says why a handler over the bound is not copied, with its size, and
/// patches nothing (unchanged; the handler is now measured before any copy of it).
#[test]
fn a_huge_liveness_handler_is_measured_not_copied() {
    let mut policy = Policy::default();
    policy.rules.set_action(RuleId::StartupProbe, Action::Mutate);
    let argv = sh(&words_script(1_500_000));
    let json_bytes = serde_json::to_string(&json!({"command": argv})).unwrap().len();
    let e = evaluate(&policy, &deployment(json!({"livenessProbe": exec(&argv)})));
    let f = e.evaluation.findings.iter().find(|f| f.rule == RuleId::StartupProbe).expect("a finding");
    assert!(f.patch.is_empty(), "{:?}", f.patch.len());
    assert!(f.message.contains(&format!("the liveness handler is {json_bytes} bytes")), "{}", f.message);
}

// === Memory per review is O(bound), not O(input) ===

/// The peak bytes one review allocates past the bounds, with every rule on (each at its default
/// action, `exec-probe-replaceable` and the other `info` rules included): a 1 MB, 1.5 MB and 3 MB
/// `sh -c "a a a ..."` in the liveness and readiness probes, and a liveness argv of 500,000
/// one-character arguments. Each is under `MAX_COMMAND_BYTES` (about 18 to 23 KB at s26), far
/// under the command itself (no rule copies, joins or splits it whole), and no more for 3 MB than
/// for 1 MB. Before s26 the 1 MB script's review allocated 43.6 MB at its peak (debug build).
#[test]
fn a_review_past_the_bounds_allocates_in_proportion_to_the_bounds() {
    let mut policy = Policy::default();
    policy.rules.set_action(RuleId::ExecProbeReplaceable, Action::Warn);
    policy.rules.set_action(RuleId::StartupProbe, Action::Mutate);
    let mut peaks = Vec::new();
    for bytes in [1_000_000, 1_500_000, 3_000_000] {
        let argv = sh(&words_script(bytes));
        let workload = common::workload(&deployment(
            json!({"livenessProbe": exec(&argv), "readinessProbe": exec(&argv)}),
        ));
        let (e, peak) = peak_bytes(|| {
            admission::evaluate_object_with_configmaps(&policy, &workload, "shop", None, &NoConfigMaps)
        });
        // (The review did run: the liveness command is noted as not analysed.)
        assert!(e.evaluation.unresolved.iter().any(|u| u.over_bound && u.probe == "liveness"), "{bytes}");
        peaks.push(peak);
        assert!(peak < MAX_COMMAND_BYTES, "{bytes}-byte script: {peak} bytes at the peak");
    }
    assert!(peaks[2] <= peaks[0] + 16 * 1024, "{peaks:?}");
    let argv = argv_with_padding(&["sh"], 500_000);
    let workload = common::workload(&deployment(json!({"livenessProbe": exec(&argv)})));
    let (_, peak) = peak_bytes(|| {
        admission::evaluate_object_with_configmaps(&policy, &workload, "shop", None, &NoConfigMaps)
    });
    assert!(peak < MAX_COMMAND_BYTES, "500,000 arguments: {peak} bytes at the peak");
    eprintln!("peak bytes: scripts of 1, 1.5 and 3 MB {peaks:?}, 500,000 arguments {peak}");
}

/// The server asks `configmaps_needed` before the review: a liveness argv over the command bound
/// runs no script the analysis reads, and its 500,000 words are not listed (8 MB of them before
/// s26), so the question allocates in proportion to the bounds too.
#[test]
fn the_configmaps_a_huge_command_needs_are_found_without_listing_its_words() {
    let argv = argv_with_padding(&["sh", "/scripts/check.sh"], 500_000);
    let mut doc = deployment(json!({"livenessProbe": exec(&argv),
        "volumeMounts": [{"name": "scripts", "mountPath": "/scripts"}]}));
    doc["spec"]["template"]["spec"]["volumes"] =
        json!([{"name": "scripts", "configMap": {"name": "checks"}}]);
    let workload = common::workload(&doc);
    let (needed, peak) = peak_bytes(|| probegate::engine::configmaps_needed(&workload, &NoConfigMaps));
    assert!(needed.is_empty(), "{needed:?}");
    assert!(peak < MAX_COMMAND_BYTES, "{peak} bytes at the peak");
    // Within the bound the same command names its script's ConfigMap.
    let argv = argv_with_padding(&["sh", "/scripts/check.sh"], 10);
    doc["spec"]["template"]["spec"]["containers"][0]["livenessProbe"] = exec(&argv);
    let needed = probegate::engine::configmaps_needed(&common::workload(&doc), &NoConfigMaps);
    assert_eq!(needed, vec![(Some("shop".to_string()), "checks".to_string())]);
}
