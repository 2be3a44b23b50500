//! The JSON report of `probegate check -o json`. Its shape is stable (documented in docs/cli.md,
//! "JSON output"): fields are only ever added, under `apiVersion: probegate.dev/v1alpha1`,
//! `kind: CheckReport`.

use std::io::Write;

use serde::Serialize;

use super::check::{Report, Summary};
use super::input::{Checked, InputError, Level};

/// `apiVersion` of the JSON report.
pub const REPORT_API_VERSION: &str = "probegate.dev/v1alpha1";

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonReport<'a> {
    api_version: &'static str,
    kind: &'static str,
    policy: &'a str,
    fail_on: Level,
    result: &'static str,
    summary: Summary,
    findings: Vec<JsonFinding<'a>>,
    objects: Vec<JsonObject<'a>>,
    errors: Vec<JsonError<'a>>,
    /// Files not read (kustomize patches), with why: `{"file": ..., "message": ...}`.
    skipped_files: &'a [super::input::SkippedFile],
}

/// One finding, with its object's identity repeated so that each entry stands alone (`jq` friendly).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonFinding<'a> {
    file: String,
    line: u32,
    container_line: Option<u32>,
    kind: &'static str,
    namespace: &'a str,
    name: &'a str,
    container: &'a str,
    rule: &'static str,
    action: &'static str,
    level: Level,
    mode: &'static str,
    message: String,
    note: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    evidence: Option<&'a crate::audit::evidence::Evidence>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonObject<'a> {
    file: String,
    line: u32,
    kind: &'static str,
    namespace: &'a str,
    name: &'a str,
    mode: &'static str,
    overrides: &'a [String],
    skipped_rules: Vec<&'static str>,
    /// The line of the skip annotation read (the pod template's, a Pod's own), else of one on a
    /// controller's own metadata (not read); `null` without one.
    skip_annotation_line: Option<u32>,
    exempt_containers: Vec<JsonExempt<'a>>,
    notes: &'a [String],
    /// Scripts a probe runs that were not analysed (unreadable, or over an analysis bound): the
    /// text output's "not analysed" notes (s27: JSON had no trace of them).
    not_analysed: Vec<JsonNotAnalysed<'a>>,
    findings: usize,
    level: Option<Level>,
}

/// A container no rule looked at: an exemption covers its name and image.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonExempt<'a> {
    container: &'a str,
    image: &'a str,
}

/// A script not analysed ([`crate::engine::Unresolved`]): never a finding.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonNotAnalysed<'a> {
    container: &'a str,
    /// `liveness`, `readiness` or `startup`.
    probe: &'static str,
    /// The script or command as run (credentials redacted).
    script: &'a str,
    reason: &'a str,
    /// Over one of the analysis bounds (a script over 16 KiB, ...) rather than unreadable.
    over_bound: bool,
    /// The note as the text output prints it.
    message: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonError<'a> {
    file: &'a str,
    line: Option<u32>,
    column: Option<u32>,
    message: &'a str,
}

fn json_object<'a>(file: &str, o: &'a Checked) -> JsonObject<'a> {
    JsonObject {
        file: file.to_string(),
        line: o.line,
        kind: o.kind.as_str(),
        namespace: &o.namespace,
        name: &o.name,
        mode: o.evaluation.effective.mode.as_str(),
        overrides: &o.evaluation.effective.overrides,
        skipped_rules: o.evaluation.skip.skipped.iter().map(|r| r.as_str()).collect(),
        skip_annotation_line: o.skip_lines.read.or(o.skip_lines.ignored),
        exempt_containers: o
            .evaluation
            .evaluation
            .exempted
            .iter()
            .map(|e| JsonExempt { container: &e.container, image: &e.image })
            .collect(),
        notes: &o.evaluation.skip.refused,
        not_analysed: o
            .evaluation
            .evaluation
            .unresolved
            .iter()
            .chain(&o.evaluation.evaluation.other_unresolved)
            .map(|u| JsonNotAnalysed {
                container: &u.container,
                probe: u.probe,
                script: &u.script,
                reason: &u.reason,
                over_bound: u.over_bound,
                message: format!(
                    "{} script {} not analysed ({}); not a finding",
                    u.probe, u.script, u.reason
                ),
            })
            .collect(),
        findings: o.findings.len(),
        level: o.findings.iter().map(|r| r.level).max(),
    }
}

/// Writes the JSON report (pretty-printed, with a final newline).
///
/// # Errors
/// When `out` fails.
pub fn write_json(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    let mut findings = Vec::new();
    let mut objects = Vec::new();
    for f in &report.files {
        let file = f.input.name();
        for o in &f.objects {
            objects.push(json_object(&file, o));
            for r in &o.findings {
                findings.push(JsonFinding {
                    file: file.clone(),
                    line: o.line,
                    container_line: r.container_line,
                    kind: o.kind.as_str(),
                    namespace: &o.namespace,
                    name: &o.name,
                    container: &r.finding.container,
                    rule: r.finding.rule.as_str(),
                    action: r.finding.action.as_str(),
                    level: r.level,
                    mode: o.evaluation.effective.mode.as_str(),
                    message: r.finding.describe(),
                    note: r.note.as_deref(),
                    evidence: r.evidence.as_ref(),
                });
            }
        }
    }
    let errors = report
        .errors
        .iter()
        .map(|e: &InputError| JsonError {
            file: &e.file,
            line: e.line,
            column: e.column,
            message: &e.message,
        })
        .collect();
    let json = JsonReport {
        api_version: REPORT_API_VERSION,
        kind: "CheckReport",
        policy: &report.policy,
        fail_on: report.fail_on,
        result: report.result(),
        summary: report.summary(),
        findings,
        objects,
        errors,
        skipped_files: &report.skipped_files,
    };
    serde_json::to_writer_pretty(&mut *out, &json).map_err(std::io::Error::other)?;
    writeln!(out)
}
