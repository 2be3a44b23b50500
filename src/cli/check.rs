//! `probegate check [--policy FILE] [--namespace NS] [-o text|json|sarif|junit] [--fail-on deny|warn|fix|info]
//! PATH...`: the webhook's verdicts on manifest files, before anything reaches a cluster.
//!
//! Every workload object (Pods and the pod templates of controllers, also inside `kind: List`) is
//! evaluated with [`crate::admission::evaluate_object`], as the webhook does: namespace overrides
//! (by the object's `metadata.namespace`, else `--namespace`, else `default`; `namespaceSelector`
//! overrides never match, as no Namespace labels are known offline), the skip annotation and
//! exempt containers. Each finding gets a [`Level`] as the webhook would treat it: `deny` rules
//! are `warn` in `mode: audit`; an owner named in the file does not relax them (the webhook
//! relaxes a denial only for an object a trusted controller creates, and whoever applies a file
//! is not that controller), it only adds a note; `mutate` findings with a patch
//! are `fix` (pod templates included, whatever `templates.mutate` says: in files, templates are
//! what users own); `mutate` findings without one (a grace period too short for the sleep) are
//! `warn`, as the webhook warns.
//!
//! Exit codes: 0 when no finding reaches `--fail-on`, 1 when one does, 2 when an input could not
//! be read (missing file, YAML error, object not valid for its kind) or the policy is invalid;
//! 2 wins over 1. A bad file is reported and the others are still checked.

use std::io::{Read, Write};
use std::path::PathBuf;

use super::input::{self, FileAnalysis, InputError, Level};
use super::{EXIT_BAD_INPUT, EXIT_FINDINGS, EXIT_OK};

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// For people: one aligned line per finding and a summary line.
    Text,
    /// The stable JSON report (see docs/cli.md, "JSON output").
    Json,
    /// SARIF 2.1.0, for GitHub code scanning and other SARIF viewers.
    Sarif,
    /// JUnit XML: one test case per object.
    Junit,
}

/// The options of `probegate check`.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// Policy file; `None` for the embedded default.
    pub policy: Option<PathBuf>,
    /// Namespace for objects without `metadata.namespace` (default `default`).
    pub namespace: Option<String>,
    /// Output format.
    pub format: Format,
    /// Lowest level that fails the run.
    pub fail_on: Level,
    /// Colour the text output (the caller decides: a terminal, and `NO_COLOR` unset).
    pub color: bool,
}

/// The namespace objects without one are checked in when `--namespace` is not given.
pub const DEFAULT_NAMESPACE: &str = "default";

/// Everything `check` found.
#[derive(Debug)]
pub struct Report {
    /// Where the policy came from.
    pub policy: String,
    /// The `--fail-on` level.
    pub fail_on: Level,
    /// Per input, in command-line order.
    pub files: Vec<FileAnalysis>,
    /// Every input error: paths that could not be expanded, then each file's, in order.
    pub errors: Vec<InputError>,
    /// Files not read, and why (kustomize patches): notes, not errors.
    pub skipped_files: Vec<input::SkippedFile>,
}

/// Counts for the summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Summary {
    /// Inputs read.
    pub files: usize,
    /// Non-empty YAML documents.
    pub documents: usize,
    /// Workload objects checked.
    pub objects: usize,
    /// Documents or list items skipped: not Pods or pod controllers.
    pub skipped: usize,
    /// Findings at level `deny`.
    pub deny: usize,
    /// Findings at level `warn`.
    pub warn: usize,
    /// Findings at level `fix`.
    pub fix: usize,
    /// Findings at level `info`.
    pub info: usize,
    /// Input errors.
    pub errors: usize,
    /// Findings at or above `--fail-on`.
    pub failing: usize,
}

impl Report {
    /// Builds the report of a run.
    pub fn new(
        policy: String,
        fail_on: Level,
        files: Vec<FileAnalysis>,
        mut errors: Vec<InputError>,
    ) -> Report {
        errors.extend(files.iter().flat_map(|f| f.errors.iter().cloned()));
        Report { policy, fail_on, files, errors, skipped_files: Vec::new() }
    }

    /// The counts.
    pub fn summary(&self) -> Summary {
        let mut s = Summary { files: self.files.len(), errors: self.errors.len(), ..Summary::default() };
        for f in &self.files {
            s.documents += f.document_count;
            s.skipped += f.skipped;
            s.objects += f.objects.len();
            for r in f.objects.iter().flat_map(|o| &o.findings) {
                match r.level {
                    Level::Deny => s.deny += 1,
                    Level::Warn => s.warn += 1,
                    Level::Fix => s.fix += 1,
                    Level::Info => s.info += 1,
                }
                if r.level >= self.fail_on {
                    s.failing += 1;
                }
            }
        }
        s
    }

    /// `pass`, `fail` (a finding reaches `--fail-on`) or `error` (an input error).
    pub fn result(&self) -> &'static str {
        match self.exit_code() {
            EXIT_OK => "pass",
            EXIT_FINDINGS => "fail",
            _ => "error",
        }
    }

    /// The process exit code: 2 for input errors, else 1 when a finding reaches `--fail-on`, else 0.
    pub fn exit_code(&self) -> u8 {
        if !self.errors.is_empty() {
            EXIT_BAD_INPUT
        } else if self.summary().failing > 0 {
            EXIT_FINDINGS
        } else {
            EXIT_OK
        }
    }
}

/// Runs `check`: loads the policy, reads and evaluates every input, writes the report in the
/// chosen format to `out` and input errors to `err`; returns the exit code.
pub fn run(
    opts: &CheckOptions,
    paths: &[PathBuf],
    stdin: &mut dyn Read,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    run_skipping(opts, &[], paths, stdin, out, err)
}

/// [`run`], with `skip` rules turned off everywhere in the policy (`--skip RULE`).
pub fn run_skipping(
    opts: &CheckOptions,
    skip: &[crate::policy::RuleId],
    paths: &[PathBuf],
    stdin: &mut dyn Read,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let (policy, _, origin) = match super::load_policy_skipping(opts.policy.as_deref(), skip) {
        Ok(p) => p,
        Err(e) => {
            let _ = writeln!(err, "probegate: invalid policy: {e}");
            return EXIT_BAD_INPUT;
        }
    };
    let namespace = opts.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE);
    let (files, errors, skipped_files) =
        input::analyze_all(&policy, paths, stdin, namespace, input::Keep::Findings);
    let mut report = Report::new(origin, opts.fail_on, files, errors);
    report.skipped_files = skipped_files;
    for e in &report.errors {
        let _ = writeln!(err, "probegate: {e}");
    }
    // `helm template . | probegate check -` where helm failed: nothing was checked, and passing in
    // silence would read as a clean chart.
    for f in &report.files {
        if f.input == input::Input::Stdin && f.document_count == 0 && f.errors.is_empty() {
            let _ = writeln!(err, "probegate: note: standard input is empty: nothing was checked there");
        }
    }
    // The text, JSON and SARIF reports carry these notes; JUnit has no place for them (its
    // suites are files checked, and these files were not).
    if matches!(opts.format, Format::Sarif | Format::Junit) {
        for note in input::skipped_notes(&report.skipped_files) {
            let _ = writeln!(err, "probegate: note: {note}");
        }
    }
    let written = match opts.format {
        Format::Text => write_text(&report, opts.color, out),
        Format::Json => super::report::write_json(&report, out),
        Format::Sarif => super::sarif::write(&report, out),
        Format::Junit => super::junit::write(&report, out),
    };
    match written {
        // A reader that stopped early (`| head`) wanted no more: the verdict stands.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => {
            let _ = writeln!(err, "probegate: cannot write the report: {e}");
            return EXIT_BAD_INPUT;
        }
        Ok(()) => {}
    }
    report.exit_code()
}

/// ANSI colours for the text format.
struct Paint(bool);

impl Paint {
    fn level(&self, level: Level, text: &str) -> String {
        let code = match level {
            Level::Deny => "1;31",
            Level::Warn => "33",
            Level::Fix => "36",
            Level::Info => "2",
        };
        self.wrap(code, text)
    }

    fn wrap(&self, code: &str, text: &str) -> String {
        if self.0 { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_string() }
    }
}

/// The text format: `FILE:LINE  LEVEL  KIND NAMESPACE/NAME  container NAME: MESSAGE (RULE)`, columns
/// aligned, then notes, then one summary line.
///
/// # Errors
/// When `out` fails.
pub fn write_text(report: &Report, color: bool, out: &mut dyn Write) -> std::io::Result<()> {
    use crate::engine::display_safe;
    let paint = Paint(color);
    struct Row {
        /// Index of the file the row is from: columns line up within a file.
        file: usize,
        location: String,
        level: Level,
        object: String,
        message: String,
    }
    let mut rows = Vec::new();
    let mut notes: Vec<String> = super::input::skipped_notes(&report.skipped_files)
        .iter()
        .map(|n| display_safe(n).into_owned())
        .collect();
    for (file_index, file) in report.files.iter().enumerate() {
        let name = file.input.name();
        for o in &file.objects {
            // Names come from the files: escaped, so a newline or an escape sequence in one
            // cannot split a row or drive the terminal.
            let object =
                display_safe(&format!("{} {}/{}", o.kind.as_str(), o.namespace, o.name)).into_owned();
            for r in &o.findings {
                let line = r.container_line.unwrap_or(o.line);
                let mut message = r.finding.describe();
                if let Some(note) = &r.note {
                    message.push_str(&format!(" [{note}]"));
                }
                rows.push(Row {
                    file: file_index,
                    location: display_safe(&format!("{name}:{line}")).into_owned(),
                    level: r.level,
                    object: object.clone(),
                    message,
                });
            }
            notes.extend(object_notes(&name, o).into_iter().map(|n| n.text));
        }
    }
    // Columns line up within each file, not across the run: one long path no longer pads every
    // other file's rows to its width (fresh-user pass).
    for group in rows.chunk_by(|a, b| a.file == b.file) {
        let wl = group.iter().map(|r| r.location.chars().count()).max().unwrap_or(0);
        let wo = group.iter().map(|r| r.object.chars().count()).max().unwrap_or(0);
        for r in group {
            let level = paint.level(r.level, &format!("{:<4}", r.level.as_str()));
            writeln!(out, "{:<wl$}  {level}  {:<wo$}  {}", r.location, r.object, r.message)?;
        }
    }
    for n in &notes {
        writeln!(out, "note: {n}")?;
    }
    let s = report.summary();
    let skipped = if s.skipped > 0 {
        format!(
            " ({} other {} skipped: not workloads)",
            s.skipped,
            plural(s.skipped, "document", "documents")
        )
    } else {
        String::new()
    };
    let verdict = match report.exit_code() {
        EXIT_OK => paint.wrap("32", "passed"),
        EXIT_FINDINGS => paint.wrap("1;31", "failed"),
        _ => paint.wrap("1;31", "input errors"),
    };
    // Shown only when there are some, so the line reads as before for policies without info rules.
    let info = if s.info > 0 { format!(", {} info", s.info) } else { String::new() };
    writeln!(
        out,
        "{} {} in {} {}{skipped}: {} deny, {} warn, {} fix{info}, {} {}; {verdict} (--fail-on {})",
        s.objects,
        plural(s.objects, "object", "objects"),
        s.files,
        plural(s.files, "file", "files"),
        s.deny,
        s.warn,
        s.fix,
        s.errors,
        plural(s.errors, "error", "errors"),
        report.fail_on.as_str()
    )
}

/// One note of `check` about an object: what no rule looked at or could read, never a finding.
/// Every output format carries each (text: a `note:` line; JSON: the object's fields; SARIF: a
/// tool execution notification; JUnit: the test case's `<system-out>`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectNote {
    /// 1-based line the note points at (the object's, or its skip annotation's).
    pub line: u32,
    /// The note as the text output prints it after `note: ` (`FILE:LINE: KIND NS/NAME: ...`),
    /// made display safe.
    pub text: String,
}

/// The notes about one object `o` of the file named `name`, in the text output's order: exempt
/// containers, rules skipped by annotation, skip annotations refused, scripts not analysed.
pub fn object_notes(name: &str, o: &input::Checked) -> Vec<ObjectNote> {
    use crate::engine::display_safe;
    let object = display_safe(&format!("{} {}/{}", o.kind.as_str(), o.namespace, o.name)).into_owned();
    let mut notes = Vec::new();
    let mut push = |line: u32, text: String| {
        // Names and commands come from the files: escaped, so that a newline or an escape
        // sequence in one cannot split a line or drive the terminal.
        let text = display_safe(&format!("{name}:{line}: {object}: {text}")).into_owned();
        notes.push(ObjectNote { line, text });
    };
    for e in &o.evaluation.evaluation.exempted {
        push(
            o.line,
            format!(
                "container {} ({}) exempt by exemptions.containers; no rule checked it",
                e.container, e.image
            ),
        );
    }
    if !o.evaluation.skip.skipped.is_empty() {
        let ids: Vec<&str> = o.evaluation.skip.skipped.iter().map(|r| r.as_str()).collect();
        push(
            o.skip_lines.read.unwrap_or(o.line),
            format!("rules skipped by annotation {}: {}", crate::policy::SKIP_ANNOTATION, ids.join(",")),
        );
    }
    for refused in &o.evaluation.skip.refused {
        // At the annotation it is about (s23: the object's first line).
        let at = if refused.contains("own metadata is not read") {
            o.skip_lines.ignored
        } else {
            o.skip_lines.read
        };
        push(at.unwrap_or(o.line), refused.clone());
    }
    let evaluation = &o.evaluation.evaluation;
    for u in evaluation.unresolved.iter().chain(&evaluation.other_unresolved) {
        push(
            o.line,
            format!(
                "container {}: {} script {} not analysed ({}); not a finding",
                u.container, u.probe, u.script, u.reason
            ),
        );
    }
    notes
}

fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 { one } else { many }
}
