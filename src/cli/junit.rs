//! `probegate check -o junit`: JUnit XML as CI systems read it (Jenkins, GitLab, Azure Pipelines).
//!
//! One `<testsuite>` per input file, one `<testcase>` per workload object (`classname` the file,
//! `name` `Kind namespace/name (line N)`). A test case fails (`<failure>`) when one of its findings
//! reaches `--fail-on`; every finding is listed in the failure text or, below the level, in
//! `<system-out>`, with the object's notes (`note: ...`, as the text output prints them). An input error is a test case with `<error>`.

use std::fmt::Write as _;
use std::io::Write;

use super::check::Report;
use super::input::Level;

/// Escapes text for XML 1.0 attributes and content; drops characters XML 1.0 cannot hold.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' | '\t' => out.push(c),
            '\r' => out.push_str("&#13;"),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => {}
            c => out.push(c),
        }
    }
    out
}

/// Writes the JUnit XML.
///
/// # Errors
/// When `out` fails.
pub fn write(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    let mut suites = String::new();
    let (mut total_tests, mut total_failures, mut total_errors) = (0usize, 0usize, 0usize);
    // Errors of paths that could not be expanded belong to no file: one suite for them.
    let orphan_errors: Vec<_> =
        report.errors.iter().filter(|e| !report.files.iter().any(|f| f.input.name() == e.file)).collect();
    if !orphan_errors.is_empty() {
        let _ = writeln!(
            suites,
            "  <testsuite name=\"inputs\" tests=\"{n}\" failures=\"0\" errors=\"{n}\" skipped=\"0\">",
            n = orphan_errors.len()
        );
        for e in &orphan_errors {
            let _ = writeln!(
                suites,
                "    <testcase classname=\"{f}\" name=\"{f}\">\n      <error message=\"{m}\" type=\"input\">{t}</error>\n    </testcase>",
                f = escape(&e.file),
                m = escape(&e.message),
                t = escape(&e.to_string())
            );
        }
        let _ = writeln!(suites, "  </testsuite>");
        total_tests += orphan_errors.len();
        total_errors += orphan_errors.len();
    }
    for f in &report.files {
        let file = f.input.name();
        let mut cases = String::new();
        let (mut tests, mut failures) = (0usize, 0usize);
        for o in &f.objects {
            tests += 1;
            let name = format!("{} {}/{} (line {})", o.kind.as_str(), o.namespace, o.name, o.line);
            let lines = |pred: &dyn Fn(Level) -> bool| -> String {
                o.findings
                    .iter()
                    .filter(|r| pred(r.level))
                    .map(|r| {
                        let line = r.container_line.unwrap_or(o.line);
                        let note = r.note.as_deref().map(|n| format!(" [{n}]")).unwrap_or_default();
                        format!("{file}:{line}: {}: {}{note}\n", r.level.as_str(), r.finding.describe())
                    })
                    .collect()
            };
            let failing = lines(&|l| l >= report.fail_on);
            let mut other = lines(&|l| l < report.fail_on);
            // The text output's notes (a script not analysed, ...): never failures, but CI reads
            // them here (s27: JUnit had no trace of a liveness script that went unread).
            for n in super::check::object_notes(&file, o) {
                other.push_str(&format!("note: {}\n", n.text));
            }
            let _ = write!(cases, "    <testcase classname=\"{}\" name=\"{}\"", escape(&file), escape(&name));
            if failing.is_empty() && other.is_empty() {
                let _ = writeln!(cases, "/>");
                continue;
            }
            let _ = writeln!(cases, ">");
            if !failing.is_empty() {
                failures += 1;
                let n = failing.lines().count();
                let worst = o.findings.iter().map(|r| r.level).max().unwrap_or(Level::Fix);
                let _ = writeln!(
                    cases,
                    "      <failure message=\"{n} {} at or above --fail-on {}\" type=\"{}\">{}</failure>",
                    if n == 1 { "finding" } else { "findings" },
                    report.fail_on.as_str(),
                    worst.as_str(),
                    escape(&failing)
                );
            }
            if !other.is_empty() {
                let _ = writeln!(cases, "      <system-out>{}</system-out>", escape(&other));
            }
            let _ = writeln!(cases, "    </testcase>");
        }
        let errors: Vec<_> = f.errors.iter().collect();
        for e in &errors {
            tests += 1;
            let _ = writeln!(
                cases,
                "    <testcase classname=\"{f}\" name=\"{n}\">\n      <error message=\"{m}\" type=\"input\">{t}</error>\n    </testcase>",
                f = escape(&file),
                n = escape(&format!("{file}:{}", e.line.unwrap_or(0))),
                m = escape(&e.message),
                t = escape(&e.to_string())
            );
        }
        let _ = writeln!(
            suites,
            "  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{}\" skipped=\"0\">",
            escape(&file),
            errors.len()
        );
        suites.push_str(&cases);
        let _ = writeln!(suites, "  </testsuite>");
        total_tests += tests;
        total_failures += failures;
        total_errors += errors.len();
    }
    writeln!(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>")?;
    writeln!(
        out,
        "<testsuites name=\"probegate check\" tests=\"{total_tests}\" failures=\"{total_failures}\" errors=\"{total_errors}\">"
    )?;
    out.write_all(suites.as_bytes())?;
    writeln!(out, "</testsuites>")
}
