//! `probegate check -o sarif`: SARIF 2.1.0 (OASIS), as GitHub code scanning reads it.
//!
//! One run; the driver lists the six rules (their default level from the policy's default action);
//! one result per finding with `level` `error` (deny), `warning` (warn) or `note` (fix), the file and
//! line of the container (else of the object), the object and container as a logical location, and
//! a `partialFingerprints` entry that does not depend on line numbers, so that a finding keeps its
//! identity when lines move. Input errors are `toolExecutionNotifications` of the invocation, and
//! so are the text output's notes, at level `note` (a script not analysed is not a finding).
//! Relative paths are given relative to `%SRCROOT%` (run `check` from the repository root for code
//! scanning); absolute paths become `file://` URIs.

use std::io::Write;

use serde_json::{Value, json};

use super::check::Report;
use super::input::{Level, STDIN_NAME};
use crate::policy::{Action, Policy, RuleId};

/// The `$schema` written into the log.
pub const SARIF_SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

fn sarif_level(level: Level) -> &'static str {
    match level {
        Level::Deny => "error",
        Level::Warn => "warning",
        Level::Fix | Level::Info => "note",
    }
}

/// A one-line and a longer description of each rule.
pub fn rule_text(rule: RuleId) -> (&'static str, &'static str) {
    match rule {
        RuleId::LivenessDependency => (
            "Liveness probe reaches an external dependency",
            "The liveness probe reaches something other than its own pod (a database, cache, queue or \
             another host). An outage there fails liveness on every replica at once and restarts the \
             fleet; a fresh process finds the dependency as down as the old one did. Check dependencies \
             in the readiness probe and keep liveness on the process itself.",
        ),
        RuleId::LivenessMatchesReadiness => (
            "Liveness and readiness run the same check",
            "Liveness and readiness use the same handler and liveness gives up no later than readiness, \
             so a slow spell restarts the container instead of taking it out of rotation. Give liveness \
             a local check or a longer failure window.",
        ),
        RuleId::ReadinessMissing => (
            "Serving container without a readiness probe",
            "A container that declares ports in a long-running pod has no readiness probe, so it gets \
             traffic before it can serve and keeps it while it cannot.",
        ),
        RuleId::ProbeTimeout => (
            "Probe timeout below the minimum",
            "A liveness or readiness timeoutSeconds under the policy's minimum (the Kubernetes default is \
             1 s, which a GC pause or a slow disk exceeds). probegate fix raises it.",
        ),
        RuleId::StartupProbe => (
            "Liveness probe without a startup probe",
            "A container with a liveness probe has no startup probe, so a slow start is killed before it \
             finishes; a long initialDelaySeconds delays failure detection for the container's whole \
             life. probegate fix adds a startup probe with the liveness handler and a boot budget.",
        ),
        RuleId::PrestopSleep => (
            "Serving container without a preStop hook",
            "A container that declares ports has no preStop hook, so SIGTERM can close its socket while \
             endpoints still send it traffic. probegate fix adds a short preStop sleep.",
        ),
        RuleId::LivenessDependencyPath => (
            "Liveness probe on an aggregate health endpoint",
            "The liveness probe gets a framework's aggregate health endpoint (Spring Boot's \
             /actuator/health, Quarkus' /q/health, ...), which runs every health check, a database's \
             included. Probe the framework's liveness group instead.",
        ),
        RuleId::ReadinessSharedDependency => (
            "Readiness probe reaches a shared dependency",
            "The readiness probe reaches a remote dependency: when it is down, every replica leaves the \
             endpoints at once. Decide whether that outage should mean no traffic or degraded service.",
        ),
        RuleId::WorkerLivenessMissing => (
            "Background worker without probes",
            "A long-running container with no ports has no liveness or readiness probe: a wedged loop goes \
             unnoticed. Add a liveness probe on a progress signal.",
        ),
        RuleId::ExecProbeReplaceable => (
            "Exec probe that an httpGet probe would do",
            "An exec probe only runs curl or wget against the pod itself: an httpGet probe does the same \
             without forking a process per check.",
        ),
        RuleId::LivenessNeverRestarted => (
            "Liveness probe on a container that is never restarted",
            "The container's own restartPolicy is Never (container restart rules): a failing liveness \
             probe only kills it.",
        ),
        RuleId::ProbePathsSwapped => (
            "Liveness and readiness paths swapped",
            "A liveness probe on a path named for readiness (/ready, /readyz) or a readiness probe on one \
             named for liveness (/livez, /health/live).",
        ),
        RuleId::ProbeClientDeadline => (
            "Probe client deadline above the probe timeout",
            "An exec probe's client (grpc_health_probe -rpc-timeout, curl --max-time, wget --timeout) may \
             run longer than the probe's timeoutSeconds, so the kubelet counts a failure first.",
        ),
        RuleId::StartupRemoteDependency => (
            "Startup probe reaches a remote dependency",
            "The startup probe reaches a remote dependency: a failing startup probe kills the container, \
             so the dependency's outage becomes a restart loop. Wait for it in readiness or in the app.",
        ),
    }
}

fn pascal(rule: RuleId) -> String {
    rule.as_str()
        .split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
        })
        .collect()
}

/// The artifact location of a file as reported.
fn artifact(file: &str) -> Value {
    if file == STDIN_NAME {
        return json!({"uri": "stdin"});
    }
    let path = std::path::Path::new(file);
    if path.is_absolute() {
        json!({"uri": format!("file://{}", encode_path(file))})
    } else {
        let rel = file.strip_prefix("./").unwrap_or(file);
        json!({"uri": encode_path(rel), "uriBaseId": "%SRCROOT%"})
    }
}

/// Percent-encodes what a URI path cannot hold as is.
fn encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~!$&'()*+,;=:@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// FNV-1a, 64 bits: a stable fingerprint without a dependency.
fn fnv1a(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The SARIF log as a JSON value.
pub fn log(report: &Report) -> Value {
    let defaults = Policy::default();
    let rules: Vec<Value> = RuleId::ALL
        .iter()
        .map(|&rule| {
            let (short, full) = rule_text(rule);
            let level = match defaults.rules.action(rule) {
                Action::Deny => "error",
                Action::Warn => "warning",
                Action::Mutate | Action::Info => "note",
                Action::Off => "none",
            };
            json!({
                "id": rule.as_str(),
                "name": pascal(rule),
                "shortDescription": {"text": short},
                "fullDescription": {"text": full},
                "help": {"text": full},
                "helpUri": super::rules::doc_url(rule),
                "defaultConfiguration": {"level": level},
                "properties": {"tags": ["kubernetes", "probes", "reliability"], "fixable": rule.fixable()},
            })
        })
        .collect();
    let mut results = Vec::new();
    for f in &report.files {
        let file = f.input.name();
        for o in &f.objects {
            for r in &o.findings {
                let rule = r.finding.rule;
                let index = RuleId::ALL.iter().position(|x| *x == rule).unwrap_or(0);
                let line = r.container_line.unwrap_or(o.line).max(1);
                let mut message = r.finding.describe();
                if let Some(note) = &r.note {
                    message.push_str(&format!(" [{note}]"));
                }
                let identity = format!(
                    "{}|{}|{}|{}|{}|{}",
                    rule.as_str(),
                    o.kind.as_str(),
                    o.namespace,
                    o.name,
                    r.finding.container,
                    file
                );
                let mut result = json!({
                    "ruleId": rule.as_str(),
                    "ruleIndex": index,
                    "level": sarif_level(r.level),
                    "message": {"text": message},
                    "locations": [{
                        "physicalLocation": {
                            "artifactLocation": artifact(&file),
                            "region": {"startLine": line},
                        },
                        "logicalLocations": [{
                            "name": r.finding.container,
                            "fullyQualifiedName": format!(
                                "{}/{}/{}/{}", o.kind.as_str(), o.namespace, o.name, r.finding.container
                            ),
                            "kind": "object",
                        }],
                    }],
                    "partialFingerprints": {"probegateFinding/v1": fnv1a(&identity)},
                    "properties": {
                        "action": r.finding.action.as_str(),
                        "probegateLevel": r.level.as_str(),
                        "mode": o.evaluation.effective.mode.as_str(),
                        "kind": o.kind.as_str(),
                        "namespace": o.namespace,
                        "name": o.name,
                        "container": r.finding.container,
                    },
                });
                if let Some(e) = &r.evidence {
                    result["properties"]["evidence"] = json!(e);
                }
                results.push(result);
            }
        }
    }
    let mut notifications: Vec<Value> = report
        .errors
        .iter()
        .map(|e| {
            let mut n = json!({
                "level": "error",
                "message": {"text": e.to_string()},
                "locations": [{"physicalLocation": {"artifactLocation": artifact(&e.file)}}],
            });
            if let Some(line) = e.line {
                let mut region = json!({"startLine": line});
                if let Some(c) = e.column {
                    region["startColumn"] = json!(c);
                }
                n["locations"][0]["physicalLocation"]["region"] = region;
            }
            n
        })
        .collect();
    notifications.extend(notes(report));
    json!({
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "probegate",
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "invocations": [{
                "executionSuccessful": report.errors.is_empty(),
                "toolExecutionNotifications": notifications,
            }],
            "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": "The directory probegate check ran in."}}},
            "results": results,
            "columnKind": "unicodeCodePoints",
        }],
    })
}

/// The notes of the text output (files not read, containers exempt, rules skipped, scripts not
/// analysed) as tool execution notifications of level `note` (SARIF 2.1.0 §3.58: a notification
/// reports "a condition encountered during tool execution"; §3.58.6 allows level "note"), each with
/// `descriptor.id` `probegate/note`: none is a finding, and as results code scanning would open
/// an alert for each; as notifications CI reads them and no alert is made (s27: SARIF had no
/// trace of a liveness script that went unread).
fn notes(report: &Report) -> Vec<Value> {
    let note = |text: &str, at: Option<(&str, u32)>| {
        let mut n = json!({
            "level": "note",
            "message": {"text": text},
            "descriptor": {"id": "probegate/note"},
        });
        if let Some((file, line)) = at {
            n["locations"] = json!([{"physicalLocation": {
                "artifactLocation": artifact(file),
                "region": {"startLine": line.max(1)},
            }}]);
        }
        n
    };
    // Files not read: one note per kustomization, which names them (no single location).
    let mut out: Vec<Value> =
        super::input::skipped_notes(&report.skipped_files).iter().map(|text| note(text, None)).collect();
    for f in &report.files {
        let file = f.input.name();
        for o in &f.objects {
            for n in super::check::object_notes(&file, o) {
                out.push(note(&n.text, Some((&file, n.line))));
            }
        }
    }
    out
}

/// Writes the SARIF log (pretty-printed, with a final newline).
///
/// # Errors
/// When `out` fails.
pub fn write(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &log(report)).map_err(std::io::Error::other)?;
    writeln!(out)
}
