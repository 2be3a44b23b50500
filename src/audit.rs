//! `probegate audit`: the webhook's verdicts on what already runs in a cluster, with the restarts
//! that back the liveness findings.
//!
//! A thin shell around the pure library: it lists the workload kinds the webhook admits (Pods,
//! Deployments, StatefulSets, DaemonSets, ReplicaSets, ReplicationControllers, Jobs, CronJobs) page
//! by page (`limit`/`continue`, every request through a client-side rate limit), evaluates each with
//! [`crate::admission::evaluate_object_with_configmaps`] under the policy in force for its namespace
//! (the Namespace's labels read from the cluster; ConfigMaps that liveness scripts come from read
//! with `get`; Secrets never), and reports in `check`'s formats. An object whose controller was
//! listed too (a ReplicaSet of a Deployment, a Pod of a ReplicaSet, a Job of a CronJob) is not
//! reported: its controller carries the finding, and its Pods' statuses become the controller's
//! runtime evidence (see [`evidence`]).
//!
//! With `--write-reports`, each audited workload also gets a policy report in the cluster
//! ([`reports`]), written only when its content changed.
//!
//! Pure parts: [`evidence`] (restarts and events into evidence), [`reports`] (report contents).

pub mod cluster;
pub mod evidence;
pub mod incremental;
pub mod reports;
pub mod watch;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::path::PathBuf;

use futures::StreamExt;
use k8s_openapi::jiff::Timestamp;

use crate::admission;
use crate::cli::check::{Format, Report};
use crate::cli::input::{self, Checked, FileAnalysis, Input, InputError, Level, Reported};
use crate::cli::{EXIT_BAD_INPUT, EXIT_FINDINGS, EXIT_OK};
use crate::engine::{StaticConfigMaps, Workload, WorkloadKind};
use crate::policy::{Policy, RuleId};
use cluster::Cluster;

/// How findings are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Sort {
    /// By namespace, kind and name.
    Name,
    /// Most restarts (or liveness kills) first, then by name.
    Restarts,
}

/// The options of `probegate audit`.
#[derive(Clone, Debug)]
pub struct AuditOptions {
    /// Policy file; `None` for the embedded default.
    pub policy: Option<PathBuf>,
    /// Where the cluster is and which namespaces, kinds and objects to read.
    pub cluster: cluster::ClusterOptions,
    /// Output format.
    pub format: Format,
    /// Lowest level that fails the run.
    pub fail_on: Level,
    /// Order of objects in the output.
    pub sort: Sort,
    /// Report only objects with at least this many restarts (or liveness kills) on a finding.
    pub min_restarts: Option<u64>,
    /// Colour the text output.
    pub color: bool,
    /// Draw a progress bar on standard error (the caller decides: a terminal).
    pub progress: bool,
    /// Write a policy report per audited workload in this API.
    pub reports: Option<reports::ReportApi>,
}

/// Rules whose findings get runtime evidence: they are about the liveness probe, whose failures
/// restart containers.
pub fn wants_evidence(rule: RuleId) -> bool {
    matches!(
        rule,
        RuleId::LivenessDependency
            | RuleId::LivenessMatchesReadiness
            | RuleId::StartupProbe
            | RuleId::ProbeTimeout
    )
}

/// A Pod's uid, name and container restarts.
type PodRestarts = (String, String, Vec<evidence::ContainerRestarts>);

/// One evaluated object with what the audit needs beyond `check`'s [`Checked`].
struct Audited {
    checked: Checked,
    uid: String,
    /// The controller's uid, when the controller is a kind probegate audits.
    parent: Option<String>,
}

/// Runs the audit: connects, lists, evaluates, writes the report to `out` and problems to `err`;
/// returns the exit code (0, 1 findings at `--fail-on`, 2 errors: a kind could not be listed, an
/// object could not be read, the policy is invalid, no cluster could be reached).
pub async fn run(opts: &AuditOptions, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let (policy, text, origin) = match crate::cli::load_policy(opts.policy.as_deref()) {
        Ok(p) => p,
        Err(e) => {
            let _ = writeln!(err, "probegate: invalid policy: {e}");
            return EXIT_BAD_INPUT;
        }
    };
    let cluster = match Cluster::connect(&opts.cluster).await {
        Ok(c) => c,
        Err(e) => {
            let _ = writeln!(err, "probegate: cannot reach the cluster: {}", error_chain(&e));
            return EXIT_BAD_INPUT;
        }
    };
    let progress = if opts.progress {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        bar
    } else {
        indicatif::ProgressBar::hidden()
    };
    let loaded = crate::server::LoadedPolicy::new(policy, &text, origin);
    let outcome = audit(&cluster, &loaded, opts, &progress).await;
    progress.finish_and_clear();
    let Pass { report, notes, .. } = match outcome {
        Ok(r) => r,
        Err(e) => {
            let _ = writeln!(err, "probegate: {}", error_chain(&e));
            return EXIT_BAD_INPUT;
        }
    };
    for n in &notes {
        let _ = writeln!(err, "probegate: note: {n}");
    }
    for e in &report.errors {
        let _ = writeln!(err, "probegate: {e}");
    }
    let written = match opts.format {
        Format::Text => write_text(&report, opts.color, out),
        Format::Json => crate::cli::report::write_json(&report, out),
        Format::Sarif => crate::cli::sarif::write(&report, out),
        Format::Junit => crate::cli::junit::write(&report, out),
    };
    if let Err(e) = written {
        let _ = writeln!(err, "probegate: cannot write the report: {e}");
        return EXIT_BAD_INPUT;
    }
    report.exit_code()
}

/// The name an audited namespace is reported under, where `check` names a file.
pub fn namespace_input(namespace: &str) -> Input {
    Input::Cluster(format!("namespaces/{namespace}"))
}

/// The outcome of one audit pass.
pub struct Pass {
    /// What `check`'s writers print.
    pub report: Report,
    /// Notes for standard error (unreadable Namespaces, Events or ConfigMaps; report writes).
    pub notes: Vec<String>,
    /// What report writing did, when reports were asked for and could be listed.
    pub writes: Option<Writes>,
}

/// One audit pass over a connected cluster: list, evaluate, attach evidence, write reports (when
/// `opts.reports` says so), sort and filter.
///
/// # Errors
/// Never for a kind that cannot be listed (that is an input error of the report); reserved for
/// failures that leave nothing to report.
pub async fn audit(
    cluster: &Cluster,
    loaded: &crate::server::LoadedPolicy,
    opts: &AuditOptions,
    progress: &indicatif::ProgressBar,
) -> anyhow::Result<Pass> {
    let policy = &loaded.policy;
    let mut notes = Vec::new();
    progress.set_message("reading namespaces");
    let labels = match cluster.namespace_labels().await {
        Ok(l) => Some(l),
        Err(e) => {
            notes.push(format!(
                "cannot read Namespaces ({e}); namespaceSelector overrides do not match, name overrides still do"
            ));
            None
        }
    };
    let mut configmaps = StaticConfigMaps::new();
    let mut fetched: HashSet<(String, String)> = HashSet::new();
    let mut audited: Vec<Audited> = Vec::new();
    let mut pods: Vec<PodRestarts> = Vec::new();
    let mut errors: Vec<InputError> = Vec::new();
    let mut uids: HashSet<String> = HashSet::new();
    let mut parents: HashMap<String, String> = HashMap::new();
    let mut count = 0usize;
    // A shard or a namespace selector: list namespace by namespace (the API server cannot filter a
    // cluster-wide list by namespace); else one list per kind over the whole scope.
    let scopes: Vec<Cluster> = if cluster.divided() {
        let Some(labels) = &labels else {
            anyhow::bail!("a shard or --namespace-selector needs to list Namespaces");
        };
        let mut names: Vec<&String> = labels.keys().collect();
        names.sort();
        names.into_iter().map(|n| cluster.in_namespace(n)).collect()
    } else {
        vec![cluster.clone()]
    };
    // Up to LIST_CONCURRENCY lists at once, each page by page (every request still waits its turn
    // under --qps): the kinds of a scope, and the namespaces of a divided one, are read side by
    // side, so the API server works on one list while the audit reduces another's page. Pages are
    // handled one at a time in the order they arrive; the result does not depend on it.
    let lists = futures::stream::iter(scopes.iter().flat_map(|s| cluster::KINDS.map(|k| (s, k))))
        .map(|(scope, kind)| {
            Box::pin(futures::stream::unfold(Some(scope.list(kind)), move |pages| async move {
                let mut pages = pages?;
                match pages.next_page().await {
                    Ok(Some(page)) => Some(((kind, Ok(page)), Some(pages))),
                    Ok(None) => None,
                    // The other kinds are still audited; the run ends with exit code 2.
                    Err(e) => Some(((kind, Err(e)), None)),
                }
            }))
        })
        .flatten_unordered(LIST_CONCURRENCY);
    let mut lists = std::pin::pin!(lists);
    progress.set_message("listing workloads");
    while let Some((kind, page)) = lists.next().await {
        let page = match page {
            Ok(page) => page,
            Err(e) => {
                errors.push(InputError {
                    file: "cluster".into(),
                    line: None,
                    column: None,
                    message: format!("{e:#}"),
                });
                continue;
            }
        };
        for item in page {
            count += 1;
            let listed = match item {
                Ok(l) => l,
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            };
            uids.insert(listed.uid.clone());
            if let Some(p) = &listed.parent {
                parents.insert(listed.uid.clone(), p.clone());
            }
            if let Some(status) = &listed.pod_status {
                pods.push((listed.uid.clone(), listed.name.clone(), evidence::pod_restarts(status)));
            }
            if listed.mirror {
                continue;
            }
            let namespace = listed.namespace.clone();
            for (ns, name) in crate::engine::configmaps_needed(&listed.workload, &configmaps) {
                let key = (ns.unwrap_or_else(|| namespace.clone()), name);
                if fetched.insert(key.clone()) {
                    match cluster.configmap(&key.0, &key.1).await {
                        Ok(Some(data)) => configmaps.insert(&key.0, &key.1, data),
                        Ok(None) => configmaps.mark_absent(&key.0, &key.1),
                        Err(e) => notes.push(format!(
                            "cannot read ConfigMap {}/{} ({e}); liveness scripts from it are not analysed",
                            key.0, key.1
                        )),
                    }
                }
            }
            let ns_labels =
                labels.as_ref().and_then(|l: &HashMap<String, BTreeMap<String, String>>| l.get(&namespace));
            let checked = evaluate(policy, kind, &listed.workload, &namespace, ns_labels, &configmaps);
            audited.push(Audited { checked, uid: listed.uid, parent: listed.parent });
        }
        progress.set_message(format!("listing workloads ({count} objects so far, last a {})", kind.as_str()));
    }
    // Objects whose controller was listed are reported through it.
    let owned = audited.iter().filter(|a| a.parent.as_ref().is_some_and(|p| uids.contains(p))).count();
    audited.retain(|a| !a.parent.as_ref().is_some_and(|p| uids.contains(p)));
    progress.set_message("reading restarts");
    attach_evidence(cluster, &mut audited, &pods, &parents, &uids, &mut notes).await;
    let mut writes = None;
    if let Some(api) = opts.reports {
        progress.set_message("writing reports");
        // Reports of workloads this pass did not find are removed only after a complete pass over
        // every object of the scope: not after a failed list, not under a label selector.
        let complete = errors.is_empty() && cluster.selector().is_none();
        match sync_reports(&scopes, api, &audited, &loaded.hash, complete).await {
            Ok(w) => {
                notes.push(w.describe(api));
                writes = Some(w);
            }
            Err(e) => errors.push(InputError {
                file: "cluster".into(),
                line: None,
                column: None,
                message: format!("cannot write reports: {e:#}"),
            }),
        }
    }
    let mut objects: Vec<(Checked, u64)> = audited
        .into_iter()
        .map(|a| {
            let weight =
                a.checked.findings.iter().filter_map(|r| r.evidence.as_ref()).map(|e| e.weight()).max();
            (a.checked, weight.unwrap_or(0))
        })
        .collect();
    if let Some(min) = opts.min_restarts {
        objects.retain(|(_, w)| *w >= min);
    }
    match opts.sort {
        Sort::Name => objects.sort_by(|(a, _), (b, _)| key(a).cmp(&key(b))),
        Sort::Restarts => objects.sort_by(|(a, wa), (b, wb)| wb.cmp(wa).then_with(|| key(a).cmp(&key(b)))),
    }
    // One "file" per namespace, in the order objects come (consecutive runs of a namespace).
    let mut files: Vec<FileAnalysis> = Vec::new();
    for (o, _) in objects {
        let input = namespace_input(&o.namespace);
        match files.last_mut() {
            Some(f) if f.input == input => f.objects.push(o),
            _ => files.push(FileAnalysis {
                input,
                configmaps: std::sync::Arc::new(StaticConfigMaps::new()),
                text: String::new(),
                documents: Vec::new(),
                objects: vec![o],
                skipped: 0,
                document_count: 0,
                errors: Vec::new(),
            }),
        }
    }
    for f in &mut files {
        f.document_count = f.objects.len();
    }
    if let Some(first) = files.first_mut() {
        first.skipped = owned;
    }
    Ok(Pass { report: Report::new(loaded.source.clone(), opts.fail_on, files, errors), notes, writes })
}

fn key(c: &Checked) -> (String, &'static str, String) {
    (c.namespace.clone(), c.kind.as_str(), c.name.clone())
}

/// Evaluates one listed object as `check` does one in a file.
pub fn evaluate(
    policy: &Policy,
    kind: WorkloadKind,
    workload: &Workload,
    namespace: &str,
    labels: Option<&BTreeMap<String, String>>,
    configmaps: &StaticConfigMaps,
) -> Checked {
    let evaluation = input::with_run_parse_cache(|cache| {
        admission::evaluate_object_cached(policy, workload, namespace, labels, configmaps, cache)
    });
    let owner = if kind.is_pod() { workload.metadata.validated_controller().cloned() } else { None };
    let findings = evaluation
        .evaluation
        .findings
        .iter()
        .map(|f| {
            let (level, note) = input::level_of(f, evaluation.effective.mode, owner.as_ref());
            Reported { finding: f.clone(), level, container_line: None, note, evidence: None }
        })
        .collect();
    let mut workload = workload.clone();
    workload.spec = Default::default();
    Checked {
        document: 0,
        pointer: String::new(),
        line: 0,
        kind,
        name: workload.metadata.display_name(),
        namespace: namespace.to_string(),
        evaluation,
        findings,
        workload,
        skip_lines: Default::default(),
    }
}

/// What a pass of report writing did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Writes {
    /// Reports created or updated.
    pub written: usize,
    /// Reports whose content was already in the cluster.
    pub unchanged: usize,
    /// Reports removed because their workload is gone.
    pub deleted: usize,
    /// Reports the API refused (not fatal), after retries.
    pub failed: usize,
    /// Retries of writes and deletes (a 5xx, a 429, a timeout): each write is tried at most
    /// [`cluster::ATTEMPTS`] times before it counts as failed.
    pub retried: u64,
    /// The first refusal, when there was one.
    pub first_error: Option<String>,
}

impl Writes {
    /// `reports (API): W written, U unchanged, D deleted, F failed, R retried (first: ...)`.
    pub fn describe(&self, api: reports::ReportApi) -> String {
        format!(
            "reports ({}): {} written, {} unchanged, {} deleted, {} failed, {} retried{}",
            api.api_version(),
            self.written,
            self.unchanged,
            self.deleted,
            self.failed,
            self.retried,
            self.first_error.as_ref().map(|e| format!(" (first: {e})")).unwrap_or_default()
        )
    }

    /// Adds another batch's counts.
    pub fn add(&mut self, other: Writes) {
        self.written += other.written;
        self.unchanged += other.unchanged;
        self.deleted += other.deleted;
        self.failed += other.failed;
        self.retried += other.retried;
        if self.first_error.is_none() {
            self.first_error = other.first_error;
        }
    }

    fn fail(&mut self, e: String) {
        self.failed += 1;
        self.first_error.get_or_insert(e);
    }
}

/// Lists read at once by a pass (the eight kinds of a scope, or of several namespaces when the
/// scope is divided), each one page at a time.
pub const LIST_CONCURRENCY: usize = 8;

/// Report writes in flight at once by default (`--writes-in-flight`). Each waits its turn under
/// `--qps` too; 16 keep a local API server busy (measured: 8 left it idle between round trips)
/// without queueing behind its default `--max-mutating-requests-inflight` of 200.
pub const WRITE_CONCURRENCY: u16 = 16;

/// Lists the reports of every scope (metadata only), writes those whose content changed and,
/// when the pass was `complete`, deletes the reports whose workload it did not find.
async fn sync_reports(
    scopes: &[Cluster],
    api: reports::ReportApi,
    audited: &[Audited],
    policy_hash: &str,
    complete: bool,
) -> anyhow::Result<Writes> {
    let mut existing = HashMap::new();
    for scope in scopes {
        existing.extend(scope.report_hashes(api).await.map_err(|e| {
            anyhow::anyhow!(
                "cannot list {} {}s (are the CRDs installed?): {e}",
                api.api_version(),
                api.kind()
            )
        })?);
    }
    let Some(cluster) = scopes.first() else { return Ok(Writes::default()) };
    let (mut w, produced) = write_reports(cluster, api, audited, policy_hash, &existing).await;
    let retries_before = cluster.write_retries();
    if complete {
        let stale: Vec<&(String, String)> = existing.keys().filter(|k| !produced.contains(*k)).collect();
        let outcomes = futures::stream::iter(stale)
            .map(|(ns, name)| async move {
                cluster.delete_report(api, ns, name).await.map_err(|e| format!("delete {ns}/{name}: {e}"))
            })
            .buffer_unordered(cluster.writes_in_flight());
        let mut outcomes = std::pin::pin!(outcomes);
        while let Some(outcome) = outcomes.next().await {
            match outcome {
                Ok(true) => w.deleted += 1,
                Ok(false) => {}
                Err(e) => w.fail(e),
            }
        }
    }
    w.retried += cluster.write_retries() - retries_before;
    Ok(w)
}

/// Writes one report per audited object whose content differs from `existing` (by namespace and
/// report name); returns what it did and the (namespace, name) of every report it stands for.
async fn write_reports(
    cluster: &Cluster,
    api: reports::ReportApi,
    audited: &[Audited],
    policy_hash: &str,
    existing: &HashMap<(String, String), cluster::ReportMeta>,
) -> (Writes, HashSet<(String, String)>) {
    let produced: HashSet<(String, String)> = audited
        .iter()
        .map(|a| {
            (
                a.checked.namespace.clone(),
                reports::report_name(&reports::Subject {
                    kind: a.checked.kind,
                    namespace: a.checked.namespace.clone(),
                    name: a.checked.name.clone(),
                    uid: a.uid.clone(),
                }),
            )
        })
        .collect();
    let now = Timestamp::now().as_second();
    let mut w = Writes::default();
    // Retries are counted by the cluster (all its views); a pass's writes are the only writes
    // between these two readings (the watch loop handles one batch at a time).
    let retries_before = cluster.write_retries();
    let how = cluster.report_writes();
    // Up to --writes-in-flight writes in flight (each still waits its turn under --qps); each report
    // is built only when its turn comes, so at most that many are held at once.
    let outcomes = futures::stream::iter(audited)
        .map(|a| async move {
            let subject = reports::Subject {
                kind: a.checked.kind,
                namespace: a.checked.namespace.clone(),
                name: a.checked.name.clone(),
                uid: a.uid.clone(),
            };
            let (mut report, hash) =
                reports::build_with(api, &subject, &a.checked, policy_hash, how.detail());
            let key = (subject.namespace.clone(), reports::report_name(&subject));
            if existing.get(&key).and_then(|m| m.hash.as_ref()) == Some(&hash) {
                return None;
            }
            reports::stamp(&mut report, now);
            // A report the list did not show is created: cheaper for the API server than an apply,
            // which reads the old object and merges field sets (create falls back to apply on 409).
            let written = if !existing.contains_key(&key) && how.creates() {
                cluster.create_report(api, &report).await
            } else {
                cluster.apply_report(api, &report).await
            };
            Some(written.map_err(|e| format!("{}/{}: {e}", key.0, key.1)))
        })
        .buffer_unordered(cluster.writes_in_flight());
    let mut outcomes = std::pin::pin!(outcomes);
    while let Some(outcome) = outcomes.next().await {
        match outcome {
            None => w.unchanged += 1,
            Some(Ok(())) => w.written += 1,
            Some(Err(e)) => w.fail(e),
        }
    }
    w.retried = cluster.write_retries() - retries_before;
    (w, produced)
}

/// Attaches to each finding that wants it the restarts of its container across the Pods under the
/// object (directly, or through a listed ReplicaSet or Job), and the liveness events when readable.
async fn attach_evidence(
    cluster: &Cluster,
    audited: &mut [Audited],
    pods: &[PodRestarts],
    parents: &HashMap<String, String>,
    uids: &HashSet<String>,
    notes: &mut Vec<String>,
) {
    if !audited.iter().any(|a| a.checked.findings.iter().any(|r| wants_evidence(r.finding.rule))) {
        return;
    }
    let index: HashMap<&str, usize> = audited.iter().enumerate().map(|(i, a)| (a.uid.as_str(), i)).collect();
    let mut by_object: HashMap<usize, Vec<(String, Vec<evidence::ContainerRestarts>)>> = HashMap::new();
    for (uid, name, statuses) in pods {
        // Up the chain of listed controllers (Pod -> ReplicaSet -> Deployment) to the audited one.
        let mut at = uid.as_str();
        for _ in 0..8 {
            if let Some(&i) = index.get(at) {
                by_object.entry(i).or_default().push((name.clone(), statuses.clone()));
                break;
            }
            match parents.get(at).filter(|p| uids.contains(*p)) {
                Some(p) => at = p,
                None => break,
            }
        }
    }
    let events = match cluster.liveness_events().await {
        Ok(e) => Some(e),
        Err(e) => {
            notes.push(format!("cannot read Events ({e}); restart evidence comes from Pod statuses alone"));
            None
        }
    };
    let now = Timestamp::now();
    for (i, a) in audited.iter_mut().enumerate() {
        let containers: Vec<String> = a
            .checked
            .findings
            .iter()
            .filter(|r| wants_evidence(r.finding.rule))
            .map(|r| r.finding.container.clone())
            .collect();
        if containers.is_empty() {
            continue;
        }
        let names: Vec<&str> = containers.iter().map(String::as_str).collect();
        let pods = by_object.get(&i).map(Vec::as_slice).unwrap_or_default();
        let ns_events: Option<Vec<evidence::LivenessEvent>> =
            events.as_ref().map(|e| e.get(&a.checked.namespace).cloned().unwrap_or_default());
        let found = evidence::evidence(&names, pods, ns_events.as_deref(), now, a.checked.kind.is_pod());
        for r in a.checked.findings.iter_mut().filter(|r| wants_evidence(r.finding.rule)) {
            r.evidence = found.get(&r.finding.container).cloned();
        }
    }
}

/// The text format of `audit`: first the policy judged by (`policy: FILE`, or `policy: embedded
/// default policy`: the webhook may run another, s27), then `LEVEL  KIND NAMESPACE/NAME  container
/// NAME: MESSAGE (RULE)`, columns aligned, the evidence of a liveness finding on the next line,
/// notes, then one summary line. A `fix` finding says what its patch would do ("would add"):
/// audit changes nothing (s27: it said "added" of live objects).
///
/// # Errors
/// When `out` fails.
pub fn write_text(report: &Report, color: bool, out: &mut dyn Write) -> std::io::Result<()> {
    use crate::engine::display_safe;
    let paint = |code: &str, text: &str| {
        if color { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_string() }
    };
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let mut namespaces = HashSet::new();
    if report.policy == crate::cli::EMBEDDED_POLICY_ORIGIN {
        writeln!(out, "policy: embedded default policy (--policy FILE to judge by the webhook's)")?;
    } else {
        writeln!(out, "policy: {}", display_safe(&report.policy))?;
    }
    for f in &report.files {
        for o in &f.objects {
            namespaces.insert(o.namespace.as_str());
            let object =
                display_safe(&format!("{} {}/{}", o.kind.as_str(), o.namespace, o.name)).into_owned();
            for r in &o.findings {
                let mut message = r.finding.describe_dry_run();
                if let Some(note) = &r.note {
                    message.push_str(&format!(" [{note}]"));
                }
                rows.push((r.level, object.clone(), message, r.evidence.as_ref().map(|e| e.summary.clone())));
            }
            let evaluation = &o.evaluation.evaluation;
            for u in evaluation.unresolved.iter().chain(&evaluation.other_unresolved) {
                notes.push(
                    display_safe(&format!(
                        "{object}: container {}: {} script {} not analysed ({}); not a finding",
                        u.container, u.probe, u.script, u.reason
                    ))
                    .into_owned(),
                );
            }
        }
    }
    let wo = rows.iter().map(|r| r.1.chars().count()).max().unwrap_or(0);
    for (level, object, message, evidence) in &rows {
        let code = match level {
            Level::Deny => "1;31",
            Level::Warn => "33",
            Level::Fix => "36",
            Level::Info => "2",
        };
        writeln!(out, "{}  {object:<wo$}  {message}", paint(code, &format!("{:<4}", level.as_str())))?;
        if let Some(e) = evidence {
            writeln!(out, "      {:<wo$}  runtime: {e}", "")?;
        }
    }
    for n in &notes {
        writeln!(out, "note: {n}")?;
    }
    let s = report.summary();
    let verdict = match report.exit_code() {
        EXIT_OK => paint("32", "passed"),
        EXIT_FINDINGS => paint("1;31", "failed"),
        _ => paint("1;31", "errors"),
    };
    let owned = if s.skipped > 0 {
        format!(" ({} owned by audited controllers, not repeated)", s.skipped)
    } else {
        String::new()
    };
    writeln!(
        out,
        "{} {} in {} {}{owned}: {} deny, {} warn, {} fix, {} {}; {verdict} (--fail-on {})",
        s.objects,
        if s.objects == 1 { "object" } else { "objects" },
        namespaces.len(),
        if namespaces.len() == 1 { "namespace" } else { "namespaces" },
        s.deny,
        s.warn,
        s.fix,
        s.errors,
        if s.errors == 1 { "error" } else { "errors" },
        report.fail_on.as_str()
    )
}

/// An error and its causes joined with `: `, leaving out a cause whose text the message already
/// holds (kube-rs' errors print their source inside their own message, so `{:#}` repeated it).
fn error_chain(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let part = crate::server::kube_error_text(cause);
        if text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}

#[cfg(test)]
mod error_chain_tests {
    #[derive(Debug)]
    struct Wrapping(std::io::Error);
    impl std::fmt::Display for Wrapping {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "failed to read kubeconfig: {}", self.0)
        }
    }
    impl std::error::Error for Wrapping {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn a_cause_already_in_the_message_is_not_repeated() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file or directory");
        let e = anyhow::Error::new(Wrapping(io)).context("no kubeconfig and not in a cluster");
        assert_eq!(
            super::error_chain(&e),
            "no kubeconfig and not in a cluster: failed to read kubeconfig: No such file or directory"
        );
        let e = anyhow::anyhow!("root").context("outer");
        assert_eq!(super::error_chain(&e), "outer: root");
    }
}
