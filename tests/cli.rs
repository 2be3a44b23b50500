//! The offline commands, `probegate check`, `fix` and `explain`: golden outputs on the corpus in
//! every format, exit codes, standard input, `kind: List`, a broken file among good ones, namespace
//! overrides, `fix` kept to what it changes, idempotent and re-checked clean, SARIF against its
//! schema, and `explain` on the article's scenario.
//!
//! Every command runs the real binary (`CARGO_BIN_EXE_probegate`), so its flags are clap's own.
//! Goldens are only compared here: `scripts/regen-goldens.sh` rewrites
//! `tests/fixtures/golden/`, and a person reviews the diff (docs/testing.md).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use probegate::cli::check::{self, CheckOptions, Format};
use probegate::cli::explain::{self, DependencyOverride, ExplainOptions};
use probegate::engine::simulate::DependencyCheck;
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs the binary in the crate root (so that reported paths are relative), with `stdin`
/// ([`common::run_in`]: output is never a terminal, so never coloured).
fn probegate(args: &[&str], stdin: Option<&str>) -> Output {
    common::run_in(&root(), args, stdin)
}

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).unwrap()
}

/// `probegate check -o FORMAT --fail-on LEVEL PATHS...`: exit code, standard output and error.
fn check_bin(format: &str, fail_on: &str, paths: &[&str]) -> (i32, String, String) {
    let mut args = vec!["check", "-o", format, "--fail-on", fail_on];
    args.extend_from_slice(paths);
    let o = probegate(&args, None);
    (o.status.code().expect("an exit code"), text(&o.stdout), text(&o.stderr))
}

/// Compares `actual` with `tests/fixtures/golden/NAME`. Goldens are never written by a test:
/// `scripts/regen-goldens.sh` rewrites them, and a person reviews the diff.
fn golden(name: &str, actual: &str) {
    let path = root().join("tests/fixtures/golden").join(name);
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (`scripts/regen-goldens.sh` writes it)", path.display()));
    if expected != actual {
        let diff = similar::TextDiff::from_lines(&expected, actual)
            .unified_diff()
            .header("golden", "actual")
            .to_string();
        panic!(
            "{name} differs from its golden file; if the change is intended, run \
             `scripts/regen-goldens.sh` and review the diff:\n{diff}"
        );
    }
}

#[test]
fn golden_outputs_on_the_corpus_in_every_format() {
    // The tests/rules.rs expectations decide the verdicts; these pin the presentation.
    for (format, name) in
        [("text", "check.txt"), ("json", "check.json"), ("sarif", "check.sarif"), ("junit", "check.xml")]
    {
        // One corpus file is denied: the Airflow scheduler's `airflow jobs check` liveness probe
        // reads the metadata database (a built-in knownCommands entry; the file's note calls that
        // verdict ideal).
        let (code, out, err) = check_bin(format, "deny", &["tests/fixtures/corpus"]);
        assert_eq!(code, 1, "{name}: {err}");
        assert!(err.is_empty(), "{err}");
        golden(name, &out);
    }
}

#[test]
fn json_report_is_complete_and_consistent() {
    let (code, out, _) = check_bin("json", "deny", &["tests/fixtures/corpus", "tests/fixtures/cli/app.yaml"]);
    assert_eq!(code, 1);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["apiVersion"], "probegate.dev/v1alpha1");
    assert_eq!(v["kind"], "CheckReport");
    assert_eq!(v["result"], "fail");
    let findings = v["findings"].as_array().unwrap();
    let s = &v["summary"];
    assert_eq!(s["files"], 36);
    assert_eq!(s["objects"], 37);
    assert_eq!(s["skipped"], 2);
    let count = |level: &str| findings.iter().filter(|f| f["level"] == level).count();
    assert_eq!(s["deny"], count("deny"));
    assert_eq!(s["warn"], count("warn"));
    assert_eq!(s["fix"], count("fix"));
    assert_eq!(s["failing"], 2, "app.yaml and the Airflow scheduler of the corpus");
    for f in findings {
        for field in [
            "file",
            "line",
            "kind",
            "namespace",
            "name",
            "container",
            "rule",
            "action",
            "level",
            "mode",
            "message",
        ] {
            assert!(!f[field].is_null(), "{field} missing in {f}");
        }
        assert!(f["containerLine"].as_u64().unwrap() >= f["line"].as_u64().unwrap(), "{f}");
        assert!(f["message"].as_str().unwrap().ends_with(&format!("({})", f["rule"].as_str().unwrap())));
    }
    let deny =
        findings.iter().find(|f| f["level"] == "deny" && f["file"] == "tests/fixtures/cli/app.yaml").unwrap();
    assert_eq!(
        (&deny["file"], &deny["line"], &deny["containerLine"], &deny["rule"]),
        (
            &Value::from("tests/fixtures/cli/app.yaml"),
            &Value::from(11),
            &Value::from(21),
            &Value::from("liveness-dependency")
        )
    );
    assert_eq!(v["objects"].as_array().unwrap().len(), 37);
}

#[test]
fn exit_codes() {
    // 0: nothing reaches --fail-on (deny by default); fixes and warnings alone do not fail.
    let o = probegate(
        &["check", "tests/fixtures/corpus/deployment-grafana-api-health-same-path-initialdelay60.yaml"],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // 1: a deny; or a warn with --fail-on warn; or a fix with --fail-on fix.
    let o = probegate(&["check", "tests/fixtures/cli/app.yaml"], None);
    assert_eq!(o.status.code(), Some(1));
    let warn_only =
        "tests/fixtures/corpus/daemonset-prometheus-node-exporter-identical-root-path-hostnetwork.yaml";
    let o = probegate(&["check", warn_only], None);
    assert_eq!(o.status.code(), Some(0));
    let o = probegate(&["check", "--fail-on", "warn", warn_only], None);
    assert_eq!(o.status.code(), Some(1));
    let o = probegate(&["check", "--fail-on", "fix", "tests/fixtures/cli/list.yaml"], None);
    assert_eq!(o.status.code(), Some(1));
    let o = probegate(&["check", "--fail-on", "warn", "tests/fixtures/cli/list.yaml"], None);
    assert_eq!(o.status.code(), Some(0));
    // 2: a missing file, a YAML error, an invalid policy; 2 wins over 1.
    let o = probegate(&["check", "tests/fixtures/cli/app.yaml", "no/such/file.yaml"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("no/such/file.yaml: cannot read"), "{}", text(&o.stderr));
    let o = probegate(
        &["check", "--policy", "tests/fixtures/cli/list.yaml", "tests/fixtures/cli/list.yaml"],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).starts_with("probegate: invalid policy: tests/fixtures/cli/list.yaml:"),
        "{}",
        text(&o.stderr)
    );
    // An empty directory checks nothing and passes.
    let dir = tempfile::tempdir().unwrap();
    let o = probegate(&["check", dir.path().to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(0));
    assert!(text(&o.stdout).contains("0 objects in 0 files"), "{}", text(&o.stdout));
}

#[test]
fn bad_flag_values_are_refused_with_exit_2_naming_the_choices() {
    let app = "tests/fixtures/cli/app.yaml";
    for (args, flag, choices) in [
        (vec!["check", "-o", "xml", app], "--output <OUTPUT>", "[possible values: text, json, sarif, junit]"),
        (
            vec!["check", "--output", "JSON", app],
            "--output <OUTPUT>",
            "[possible values: text, json, sarif, junit]",
        ),
        (
            vec!["check", "--fail-on", "error", app],
            "--fail-on <FAIL_ON>",
            "[possible values: info, fix, warn, deny]",
        ),
        (
            vec!["explain", "--dependency-check", "startup", app],
            "--dependency-check <DEPENDENCY_CHECK>",
            "[possible values: ",
        ),
    ] {
        let o = probegate(&args, None);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("invalid value") && err.contains(flag) && err.contains(choices),
            "{args:?}: {err}"
        );
        assert!(o.stdout.is_empty(), "{args:?}: nothing is checked");
    }
    for (args, why) in [
        (vec!["explain", "--outage=-5", app], "invalid value '-5' for '--outage <OUTAGE>'"),
        (vec!["explain", "--replicas", "many", app], "--replicas <REPLICAS>"),
        (vec!["fix", "--in-place", "--diff", app], "cannot be used with"),
        (vec!["fix"], "name the files or directories to read, or - for standard input"),
        (vec!["check", "--format", "json", app], "unexpected argument '--format'"),
    ] {
        let o = probegate(&args, None);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(why), "{args:?}: {err}");
    }
}

#[test]
fn fix_and_explain_report_unreadable_input_with_exit_2() {
    for command in ["fix", "explain"] {
        let o = probegate(&[command, "no/such/file.yaml"], None);
        assert_eq!(o.status.code(), Some(2), "{command}: {}", text(&o.stderr));
        assert!(text(&o.stderr).contains("no/such/file.yaml"), "{command}: {}", text(&o.stderr));
        let o = probegate(
            &[command, "--policy", "tests/fixtures/cli/list.yaml", "tests/fixtures/cli/app.yaml"],
            None,
        );
        assert_eq!(o.status.code(), Some(2), "{command}: {}", text(&o.stderr));
        assert!(text(&o.stderr).contains("tests/fixtures/cli/list.yaml"), "{command}: {}", text(&o.stderr));
    }
    let o = probegate(&["fix", "tests/fixtures/cli/broken.yaml"], None);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("broken.yaml:6"), "{}", text(&o.stderr));
}

/// A policy file that is not text, or past the 4 MiB a policy can be, is refused with its name
/// and where it goes wrong, never read whole (break-it pass s21: `--policy /dev/zero` grew to 1 GB).
#[test]
fn a_policy_file_too_large_or_not_utf8_is_refused_naming_the_file_and_place() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.yaml");
    std::fs::write(&big, vec![b'#'; probegate::policy::MAX_POLICY_BYTES + 1]).unwrap();
    let bin = dir.path().join("bin.yaml");
    std::fs::write(&bin, b"apiVersion: probegate.dev/v1alpha1\nkind: Pro\xffbePolicy\n").unwrap();
    let fits = dir.path().join("fits.yaml");
    let mut padded = probegate::policy::DEFAULT_POLICY_YAML.as_bytes().to_vec();
    padded.resize(probegate::policy::MAX_POLICY_BYTES, b'\n');
    std::fs::write(&fits, padded).unwrap();
    let (big, bin, fits) = (big.to_str().unwrap(), bin.to_str().unwrap(), fits.to_str().unwrap());
    for (policy, expected) in [
        ("/dev/zero", "/dev/zero: over 4 MiB: not a policy file".to_string()),
        (big, format!("{big}: over 4 MiB: not a policy file")),
        (bin, format!("{bin}: line 2, column 10 (byte 44): not UTF-8 text")),
    ] {
        for args in [
            &["policy", "validate", policy][..],
            &["check", "--policy", policy, "tests/fixtures/cli/app.yaml"],
        ] {
            let o = probegate(args, None);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o.stderr));
            assert!(text(&o.stderr).contains(&expected), "{args:?}: {}", text(&o.stderr));
        }
    }
    // Exactly at the bound: read and judged as a policy.
    let o = probegate(&["policy", "validate", fits], None);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

#[test]
fn a_broken_file_is_reported_and_the_others_are_still_checked() {
    let o = probegate(
        &[
            "check",
            "-o",
            "json",
            "tests/fixtures/cli/list.yaml",
            "tests/fixtures/cli/broken.yaml",
            "tests/fixtures/cli/app.yaml",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    let stderr = text(&o.stderr);
    assert!(stderr.contains("tests/fixtures/cli/broken.yaml:6:"), "{stderr}");
    assert!(stderr.contains("invalid YAML"), "{stderr}");
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["result"], "error");
    assert_eq!(v["errors"][0]["file"], "tests/fixtures/cli/broken.yaml");
    assert_eq!(v["errors"][0]["line"], 6);
    // The files around it are checked, and the broken file's good document is read.
    let files: Vec<&str> =
        v["findings"].as_array().unwrap().iter().map(|f| f["file"].as_str().unwrap()).collect();
    assert!(
        files.contains(&"tests/fixtures/cli/list.yaml") && files.contains(&"tests/fixtures/cli/app.yaml")
    );
    assert_eq!(
        v["summary"]["skipped"], 4,
        "ConfigMap of broken.yaml, Service and ConfigMap of app.yaml, list item"
    );
    assert_eq!(v["summary"]["deny"], 1);
}

#[test]
fn standard_input_and_lists() {
    let stream = std::fs::read_to_string(root().join("tests/fixtures/cli/app.yaml")).unwrap();
    let o = probegate(&["check", "-o", "json", "-"], Some(&stream));
    assert_eq!(o.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["summary"]["objects"], 2);
    assert!(v["findings"].as_array().unwrap().iter().all(|f| f["file"] == "<stdin>"));

    // kind: List in YAML and JSON: each item is an object, at its own line.
    for (file, name, line, container_line) in [
        ("tests/fixtures/cli/list.yaml", "listed", 4, 11),
        ("tests/fixtures/cli/list.json", "listed-json", 5, 11),
    ] {
        let (code, out, err) = check_bin("json", "deny", &[file]);
        assert_eq!(code, 0, "{err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!((v["summary"]["objects"].as_u64(), v["summary"]["skipped"].as_u64()), (Some(1), Some(1)));
        let f = &v["findings"][0];
        assert_eq!(
            (f["name"].as_str(), f["line"].as_u64(), f["containerLine"].as_u64()),
            (Some(name), Some(line), Some(container_line)),
            "{f}"
        );
    }
    // Namespace: metadata.namespace, else --namespace, else default.
    let o = probegate(
        &[
            "check",
            "-o",
            "json",
            "--namespace",
            "team-a",
            "tests/fixtures/cli/list.yaml",
            "tests/fixtures/cli/list.json",
        ],
        None,
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let ns: Vec<&str> =
        v["objects"].as_array().unwrap().iter().map(|o| o["namespace"].as_str().unwrap()).collect();
    assert_eq!(ns, ["tools", "team-a"]);
}

#[test]
fn namespace_overrides_and_audit_mode_apply_as_in_the_webhook() {
    let o = probegate(
        &[
            "check",
            "-o",
            "json",
            "--policy",
            "policies/audit-rollout.yaml",
            "tests/fixtures/cli/namespaced.yaml",
        ],
        None,
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let objects = v["objects"].as_array().unwrap();
    assert_eq!(objects[0]["mode"], "enforce");
    assert_eq!(objects[0]["overrides"], serde_json::json!(["payments"]));
    assert_eq!(objects[0]["level"], "deny");
    // billing-eu matches no override without its Namespace labels: the policy's mode audit.
    assert_eq!(objects[1]["mode"], "audit");
    assert_eq!(objects[1]["level"], "warn");
    let audited = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["namespace"] == "billing-eu" && f["action"] == "deny")
        .unwrap();
    assert_eq!(audited["level"], "warn");
    assert!(audited["note"].as_str().unwrap().contains("audit"));
    assert_eq!(o.status.code(), Some(1), "payments-eu is enforced");
}

#[test]
fn exempt_containers_skips_and_owners_are_reported_never_silent() {
    let file = "tests/fixtures/cli/exemptions.yaml";
    let (code, out, err) = check_bin("json", "deny", &[file]);
    assert_eq!(code, 1, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let objects = v["objects"].as_array().unwrap();
    // The real proxy image: exempt, and listed; the annotation skips prestop-sleep only.
    assert_eq!(
        objects[0]["exemptContainers"],
        serde_json::json!([{"container": "istio-proxy", "image": "docker.io/istio/proxyv2:1.24.0"}])
    );
    assert_eq!(objects[0]["skippedRules"], serde_json::json!(["prestop-sleep"]));
    assert!(
        objects[0]["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("cannot skip liveness-dependency"))
    );
    let findings = v["findings"].as_array().unwrap();
    let of = |name: &str| findings.iter().filter(|f| f["name"] == name).collect::<Vec<_>>();
    assert!(of("meshed").iter().all(|f| f["container"] == "app"), "{:?}", of("meshed"));
    // An app container that takes the proxy's name with another image: checked, denied.
    assert_eq!(objects[1]["exemptContainers"], serde_json::json!([]));
    assert!(of("impostor").iter().any(|f| f["container"] == "istio-proxy" && f["level"] == "deny"));
    // An owner in a file: denied as the webhook denies it for whoever applies the file, with a note.
    let forged = of("forged-owner");
    let dep = forged.iter().find(|f| f["rule"] == "liveness-dependency").unwrap();
    assert_eq!(dep["level"], "deny");
    assert!(
        dep["note"].as_str().unwrap().contains("ReplicaSet web-6d4f is named as its controller"),
        "{dep}"
    );
    // The text format says the same in notes.
    let (_, text, _) = check_bin("text", "deny", &[file]);
    assert!(
        text.contains("container istio-proxy (docker.io/istio/proxyv2:1.24.0) exempt by exemptions.containers; no rule checked it"),
        "{text}"
    );
    assert!(text.contains("rules skipped by annotation probegate.dev/skip: prestop-sleep"), "{text}");
}

#[test]
fn text_output_is_aligned_and_coloured_only_when_asked() {
    let (_, plain, _) = check_bin("text", "deny", &["tests/fixtures/cli/app.yaml"]);
    assert!(!plain.contains('\x1b'));
    let lines: Vec<&str> = plain.lines().collect();
    let level_col: Vec<usize> =
        lines[..lines.len() - 1].iter().map(|l| l.find("  deny  ").or(l.find("  fix   ")).unwrap()).collect();
    assert!(level_col.windows(2).all(|w| w[0] == w[1]), "{plain}");
    assert_eq!(
        lines.last().unwrap(),
        &"2 objects in 1 file (2 other documents skipped: not workloads): 1 deny, 0 warn, 4 fix, 0 errors; failed (--fail-on deny)"
    );
    // Colour needs a terminal, which a test cannot give the binary: the library call that `main`
    // makes on a terminal.
    let opts = CheckOptions {
        policy: None,
        namespace: None,
        format: Format::Text,
        fail_on: probegate::cli::input::Level::Deny,
        color: true,
    };
    let mut out = Vec::new();
    check::run(
        &opts,
        &[PathBuf::from("tests/fixtures/cli/app.yaml")],
        &mut std::io::empty(),
        &mut out,
        &mut Vec::new(),
    );
    assert!(text(&out).contains("\x1b[1;31mdeny\x1b[0m"));
    // The binary's stdout is a pipe here: no colour.
    assert!(!text(&probegate(&["check", "tests/fixtures/cli/app.yaml"], None).stdout).contains('\x1b'));
}

/// Fresh-user finding: one long path padded every row of the run to its width. Columns line up
/// within a file; a short path's rows are not padded to a long one's.
#[test]
fn text_columns_line_up_within_a_file_not_across_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let app = std::fs::read_to_string(root().join("tests/fixtures/cli/app.yaml")).unwrap();
    let deep = dir.path().join("a/very/long/directory/path/for/some/manifests");
    std::fs::create_dir_all(&deep).unwrap();
    let long = deep.join("deployment-with-a-rather-long-file-name.yaml");
    let short = dir.path().join("p.yaml");
    std::fs::write(&long, &app).unwrap();
    std::fs::write(&short, &app).unwrap();
    let (_, plain, _) = check_bin("text", "deny", &[long.to_str().unwrap(), short.to_str().unwrap()]);
    let rows_of = |path: &Path| -> Vec<&str> {
        let prefix = format!("{}:", path.display());
        plain.lines().filter(|l| l.starts_with(&prefix)).collect()
    };
    let (long_rows, short_rows) = (rows_of(&long), rows_of(&short));
    assert!(!long_rows.is_empty() && !short_rows.is_empty(), "{plain}");
    // Within a file the level column lines up...
    for rows in [&long_rows, &short_rows] {
        let cols: Vec<usize> =
            rows.iter().map(|l| l.find("  deny  ").or(l.find("  fix   ")).unwrap()).collect();
        assert!(cols.windows(2).all(|w| w[0] == w[1]), "{plain}");
    }
    // ... and the short file's location is followed by its longest location's width, not the
    // long file's.
    let widest_short = short_rows.iter().map(|l| l.split("  ").next().unwrap().len()).max().unwrap();
    for l in &short_rows {
        let level_at = l.find("  deny  ").or(l.find("  fix   ")).unwrap();
        assert_eq!(level_at, widest_short, "{l}");
    }
}

/// Runs `xmllint --noout --schema XSD FILE` on `xml`: whether it validates, and xmllint's message.
/// xmllint (libxml2, Debian `libxml2-utils`) is the reference XSD 1.0 validator; no maintained Rust
/// crate validates XML Schema.
fn xmllint_validates(xsd: &Path, xml: &str) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("report.xml");
    std::fs::write(&file, xml).unwrap();
    let out = Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(xsd)
        .arg(&file)
        .output()
        .unwrap_or_else(|e| panic!("xmllint: {e} (install Debian's libxml2-utils; .ci/run does)"));
    (out.status.success(), text(&out.stderr))
}

#[test]
fn junit_validates_against_the_jenkins_junit_schema() {
    let xsd = root().join("tests/fixtures/junit/jenkins-junit.xsd");
    for paths in [
        vec!["tests/fixtures/corpus", "tests/fixtures/cli/app.yaml"],
        vec!["tests/fixtures/cli/broken.yaml", "missing.yaml", "tests/fixtures/cli/list.yaml"],
        vec!["tests/fixtures/cli/namespaced.yaml"],
    ] {
        let (code, out, err) = check_bin("junit", "deny", &paths);
        assert!(code == 1 || code == 2, "{paths:?}: {code} {err}");
        let (ok, message) = xmllint_validates(&xsd, &out);
        assert!(ok, "{paths:?}: {message}\n{out}");
        assert!(message.contains("validates"), "{message}");
    }
    // The oracle can fail: a test case without its required name, or a stray element, is refused.
    let (_, out, _) = check_bin("junit", "deny", &["tests/fixtures/cli/app.yaml"]);
    let at = out.find("<testcase ").unwrap();
    let name = at + out[at..].find(" name=\"").unwrap();
    let end = name + 7 + out[name + 7..].find('"').unwrap();
    let nameless = format!("{}{}", &out[..name], &out[end + 1..]);
    assert!(!xmllint_validates(&xsd, &nameless).0, "{nameless}");
    let stray = out.replacen("</testsuites>", "<summary/></testsuites>", 1);
    assert!(!xmllint_validates(&xsd, &stray).0, "{stray}");
}

#[test]
fn sarif_validates_against_the_sarif_2_1_0_schema() {
    let text = std::fs::read_to_string(root().join("tests/fixtures/sarif/sarif-2.1.0-rtm.5.json")).unwrap();
    // The published schema's `language` patterns end in a stray `]` (`...-[a-zA-Z]{2}]?$`), which the
    // meta-schema's `format: regex` check of the jsonschema crate rejects. Read them as intended; the
    // file stays as published, and probegate does not write `language`.
    let text = text
        .replace(r#"^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$"#, r#"^[a-zA-Z]{2}$|^[a-zA-Z]{2}-[a-zA-Z]{2}$"#);
    let schema: Value = serde_json::from_str(&text).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    // The validator does reject what GitHub would: a result level SARIF does not have.
    let bad = serde_json::json!({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}},
        "results": [{"message": {"text": "m"}, "level": "fatal"}]}]});
    assert!(!validator.is_valid(&bad));
    for paths in [
        vec!["tests/fixtures/corpus", "tests/fixtures/cli/app.yaml"],
        vec!["tests/fixtures/cli/broken.yaml", "missing.yaml"],
    ] {
        let (_, out, _) = check_bin("sarif", "deny", &paths);
        let log: Value = serde_json::from_str(&out).unwrap();
        let errors: Vec<String> =
            validator.iter_errors(&log).map(|e| format!("{} at {}", e, e.instance_path())).collect();
        assert!(errors.is_empty(), "{paths:?}: {errors:#?}");
        // What GitHub code scanning needs: tool name, rules, each result's rule, message, file, line.
        let run = &log["runs"][0];
        assert_eq!(log["version"], "2.1.0");
        assert_eq!(run["tool"]["driver"]["name"], "probegate");
        assert_eq!(
            run["tool"]["driver"]["rules"].as_array().unwrap().len(),
            probegate::policy::RuleId::ALL.len()
        );
        for r in run["results"].as_array().unwrap() {
            let loc = &r["locations"][0]["physicalLocation"];
            assert!(loc["artifactLocation"]["uri"].as_str().is_some_and(|u| !u.starts_with('/')));
            assert!(loc["region"]["startLine"].as_u64().unwrap() >= 1);
            assert!(r["ruleId"].is_string() && r["message"]["text"].is_string());
            assert!(["error", "warning", "note"].contains(&r["level"].as_str().unwrap()));
        }
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn fix_is_idempotent_and_its_output_checks_clean() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&root().join("tests/fixtures/corpus"), &dir.path().join("corpus"));
    copy_dir(&root().join("tests/fixtures/cli"), &dir.path().join("cli"));
    std::fs::remove_file(dir.path().join("cli/broken.yaml")).unwrap();
    let d = dir.path().to_str().unwrap();
    let before = probegate(&["check", "-o", "json", d], None);
    let before: Value = serde_json::from_slice(&before.stdout).unwrap();
    assert!(before["summary"]["fix"].as_u64().unwrap() > 50);

    // 1: the denials `fix` cannot change are left (app.yaml's, the corpus's Airflow scheduler, ...).
    let o = probegate(&["fix", "--in-place", d], None);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stderr).trim_end().ends_with("; failed (--fail-on deny)"), "{}", text(&o.stderr));
    // Every document was edited as text: none had to be re-serialized.
    assert!(!text(&o.stderr).contains("re-serialized"), "{}", text(&o.stderr));
    // Re-checked: nothing left to fix, and the other findings are unchanged.
    let after = probegate(&["check", "-o", "json", d], None);
    let after: Value = serde_json::from_slice(&after.stdout).unwrap();
    assert_eq!(after["summary"]["fix"], 0, "{}", after["findings"]);
    for level in ["deny", "warn"] {
        assert_eq!(after["summary"][level], before["summary"][level], "{level}");
    }
    // A second run changes nothing.
    let o = probegate(&["fix", "--diff", d], None);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty(), "{}", text(&o.stdout));
    let snapshot = |dir: &Path| -> Vec<(String, String)> {
        let mut v: Vec<_> = ["corpus", "cli"]
            .iter()
            .flat_map(|sub| std::fs::read_dir(dir.join(sub)).unwrap().map(|e| e.unwrap().path()))
            .map(|p| (p.display().to_string(), std::fs::read_to_string(&p).unwrap()))
            .collect();
        v.sort();
        v
    };
    let once = snapshot(dir.path());
    probegate(&["fix", "-i", d], None);
    assert_eq!(snapshot(dir.path()), once);
}

#[test]
fn fix_changes_only_what_it_fixes_and_keeps_comments() {
    let original = std::fs::read_to_string(root().join("tests/fixtures/cli/app.yaml")).unwrap();
    let o = probegate(&["fix", "-"], Some(&original));
    assert_eq!(o.status.code(), Some(1), "its denial is left");
    let fixed = text(&o.stdout);
    golden("fix-app.yaml", &fixed);
    // Documents without a fix are unchanged byte for byte, and every comment is kept.
    let docs = |t: &str| t.split("\n---\n").map(String::from).collect::<Vec<_>>();
    let (a, b) = (docs(&original), docs(&fixed));
    assert_eq!(a.len(), b.len());
    assert_eq!(a[0], b[0], "Service");
    assert_eq!(a[2], b[2], "ConfigMap");
    // (The one on the line fix removes goes with it.)
    for comment in original
        .lines()
        .filter(|l| !l.contains("initialDelaySeconds"))
        .filter_map(|l| l.find('#').map(|i| &l[i..]))
    {
        assert!(fixed.contains(comment), "lost comment {comment:?}");
    }
    // Only additions, and the one line `fix` removes (the liveness delay moved into startup).
    let diff = similar::TextDiff::from_lines(&original, &fixed);
    let removed: Vec<String> = diff
        .iter_all_changes()
        .filter(|c| c.tag() == similar::ChangeTag::Delete)
        .map(|c| c.value().trim().to_string())
        .collect();
    assert_eq!(removed, ["initialDelaySeconds: 90   # slow JVM start"]);

    // --diff prints a unified diff of the same change.
    let o = probegate(&["fix", "--diff", "tests/fixtures/cli/app.yaml"], None);
    let d = text(&o.stdout);
    assert!(d.starts_with("--- a/tests/fixtures/cli/app.yaml\n+++ b/tests/fixtures/cli/app.yaml\n@@"), "{d}");
    // --in-place cannot write to standard input.
    assert_eq!(probegate(&["fix", "-i", "-"], Some(&original)).status.code(), Some(2));
}

#[test]
fn fix_edits_json_and_flow_style_in_place() {
    let json = std::fs::read_to_string(root().join("tests/fixtures/cli/list.json")).unwrap();
    let o = probegate(&["fix", "-"], Some(&json));
    let fixed = text(&o.stdout);
    assert!(!text(&o.stderr).contains("re-serialized"));
    // Still JSON, same key order, the untouched item byte for byte.
    let v: Value = serde_json::from_str(&fixed).unwrap();
    assert_eq!(v["items"][0]["spec"]["containers"][0]["startupProbe"]["failureThreshold"], 24);
    assert!(v["items"][0]["spec"]["containers"][0]["livenessProbe"].get("initialDelaySeconds").is_none());
    assert!(fixed.contains(r#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}"#));
    assert!(fixed.find("\"name\": \"app\"").unwrap() < fixed.find("\"startupProbe\"").unwrap());
    let flow = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: a, image: b, ports: [{containerPort: 80}], readinessProbe: {tcpSocket: {port: 80}}}  # keep\n";
    let o = probegate(&["fix", "-"], Some(flow));
    let fixed = text(&o.stdout);
    assert!(fixed.ends_with("lifecycle: {preStop: {sleep: {seconds: 5}}}}  # keep\n"), "{fixed}");
}

#[test]
fn a_document_that_cannot_be_edited_as_text_is_reserialized_in_key_order() {
    // A flow mapping spread over lines: an insertion after its last line would land inside it.
    let yaml = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - name: a\n      image: b\n      readinessProbe:\n        tcpSocket: {\n          port: 80 }\n      ports: [{containerPort: 80}]\n";
    let o = probegate(&["fix", "-"], Some(yaml));
    let fixed = text(&o.stdout);
    let out: Value = probegate::manifest::parse_documents(&fixed).unwrap().remove(0);
    assert_eq!(out["spec"]["containers"][0]["readinessProbe"]["timeoutSeconds"], 2);
    assert_eq!(out["spec"]["containers"][0]["lifecycle"]["preStop"]["sleep"]["seconds"], 5);
    let keys: Vec<usize> =
        ["apiVersion", "kind", "metadata", "spec"].iter().map(|k| fixed.find(k).unwrap()).collect();
    assert!(keys.windows(2).all(|w| w[0] < w[1]), "{fixed}");
    assert!(fixed.find("name: a").unwrap() < fixed.find("image: b").unwrap());
    let _ = o;
}

#[test]
fn located_documents_read_the_same_values_as_the_webhook_reader() {
    for e in std::fs::read_dir(root().join("tests/fixtures/corpus")).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_none_or(|x| x != "yaml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let expected = probegate::manifest::parse_documents(&text).unwrap();
        let got: Vec<Value> = probegate::manifest::located::parse_file(&text)
            .into_iter()
            .filter_map(|d| d.node.unwrap().map(|n| n.to_value()))
            .collect();
        assert_eq!(got, expected, "{}", path.display());
    }
}

fn seed(dependency: DependencyOverride) -> explain::Simulation {
    let opts = ExplainOptions { dependency, ..ExplainOptions::default() };
    let (explanations, errors) = explain::explain_all(
        &probegate::policy::Policy::default(),
        &[root().join("tests/fixtures/explain/seed-scenario.yaml")],
        &mut std::io::empty(),
        &opts,
    );
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(explanations.len(), 1);
    explanations[0].simulation.clone().expect("simulated")
}

fn assert_article_table(sim: &explain::Simulation) {
    let (a, b) = (&sim.written, &sim.fixed);
    assert_eq!(a.scenario.dependency_check, DependencyCheck::Liveness);
    assert_eq!(b.scenario.dependency_check, DependencyCheck::Readiness);
    // From the manifest: 6 replicas, 45 s warm-up (startup budget), period 10 / threshold 3, readiness
    // threshold 1, a 90 s outage from t=60.
    assert_eq!(
        (
            a.scenario.replicas,
            a.scenario.warmup_seconds,
            a.scenario.liveness_period_seconds,
            a.scenario.liveness_failure_threshold
        ),
        (6, 45, 10, 3)
    );
    assert_eq!((a.scenario.readiness_period_seconds, a.scenario.readiness_failure_threshold), (10, 1));
    assert_eq!((a.scenario.outage_start_seconds, a.scenario.outage_seconds), (60, 90));
    // The article's table.
    assert_eq!(
        (
            a.outcome.restarts,
            a.outcome.full_capacity_after_recovery_seconds,
            a.outcome.lost_pod_seconds_after_recovery
        ),
        (12, Some(39), 215)
    );
    assert_eq!(
        (
            b.outcome.restarts,
            b.outcome.full_capacity_after_recovery_seconds,
            b.outcome.lost_pod_seconds_after_recovery
        ),
        (0, Some(9), 35)
    );
    // And its "serving pods, sampled every 15s from t=45".
    let sampled = |o: &probegate::engine::simulate::Outcome| -> Vec<u32> {
        (45..300).step_by(15).map(|t| o.answering[t]).collect()
    };
    assert_eq!(sampled(&a.outcome), [6, 0, 0, 0, 0, 0, 0, 0, 0, 1, 6, 6, 6, 6, 6, 6, 6]);
    assert_eq!(sampled(&b.outcome), [6, 0, 0, 0, 0, 0, 0, 1, 6, 6, 6, 6, 6, 6, 6, 6, 6]);
    assert_eq!(sim.horizon, 300);
}

#[test]
fn explain_reproduces_the_article_from_the_seed_manifest() {
    // Told that liveness checks the database, everything else comes from the manifest.
    assert_article_table(&seed(DependencyOverride::Liveness));
    // Found from the manifest: the liveness probe runs pg_isready against db.shop.svc, which the exec
    // analysis of liveness-dependency reports, so `auto` reads "liveness checks the dependency".
    let (_, report, _) = check_bin("json", "deny", &["tests/fixtures/explain/seed-scenario.yaml"]);
    let report: Value = serde_json::from_str(&report).unwrap();
    assert!(
        report["findings"].as_array().unwrap().iter().any(|f| f["rule"] == "liveness-dependency"),
        "{report}"
    );
    assert_article_table(&seed(DependencyOverride::Auto));
}

/// The simulations of one manifest given on standard input, under `--dependency-check auto`.
fn simulations_of(manifest: &str) -> Vec<explain::Simulation> {
    let (explanations, errors) = explain::explain_all(
        &probegate::policy::Policy::default(),
        &[PathBuf::from("-")],
        &mut manifest.as_bytes(),
        &ExplainOptions::default(),
    );
    assert!(errors.is_empty(), "{errors:?}");
    explanations.into_iter().filter_map(|e| e.simulation).collect()
}

#[test]
fn explain_says_when_the_written_run_assumes_readiness_fails_with_the_dependency() {
    // The seed's readiness probe runs pg_isready against the database itself: nothing assumed.
    assert!(seed(DependencyOverride::Auto).written_assumes.is_empty());
    let pod = |readiness: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: default}}\nspec:\n  containers:\n  \
             - name: app\n    image: app:1\n    ports: [{{containerPort: 8080}}]\n    livenessProbe:\n      \
             exec: {{command: [pg_isready, -h, db.shop.svc]}}\n{readiness}"
        )
    };
    // No readiness probe: the model gives it one that fails with the dependency, and says so.
    let none = simulations_of(&pod(""));
    assert_eq!(none.len(), 1);
    assert_eq!(none[0].written.scenario.dependency_check, DependencyCheck::Liveness);
    assert_eq!(none[0].written_assumes.len(), 1, "{:?}", none[0].written_assumes);
    assert!(none[0].written_assumes[0].contains("the container has none"), "{:?}", none[0].written_assumes);
    // A readiness probe of the pod itself: assumed to fail with the dependency, as liveness does.
    let own = simulations_of(&pod("    readinessProbe: {httpGet: {path: /ready, port: 8080}}\n"));
    assert_eq!(own[0].written_assumes.len(), 1, "{:?}", own[0].written_assumes);
    assert!(own[0].written_assumes[0].starts_with("readiness fails with the dependency too"));
    // The text shows the assumption beside the run it belongs to.
    let o = probegate(&["explain", "-"], Some(&pod("")));
    assert!(
        text(&o.stdout).contains("as written assumes a readiness probe that fails with the dependency"),
        "{}",
        text(&o.stdout)
    );
}

/// `explain` simulates restarts only for a liveness coupling `check` denies: a check whose exit
/// status cannot fail the probe (`|| true`, a libpq host list holding this Pod) is a warning in
/// `check`, and explain's "as written" run must not restart the pod for it (a fresh user's
/// finding: the two contradicted each other).
#[test]
fn explain_simulates_only_the_couplings_check_denies() {
    let pod = |command: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: default}}\nspec:\n  containers:\n  \
             - name: app\n    image: app:1\n    ports: [{{containerPort: 8080}}]\n    livenessProbe:\n      \
             exec: {{command: [sh, -c, '{command}']}}\n    readinessProbe: {{httpGet: {{path: /ready, port: 8080}}}}\n"
        )
    };
    let coupled = simulations_of(&pod("pg_isready -h db.shop.svc"));
    assert_eq!(coupled[0].written.scenario.dependency_check, DependencyCheck::Liveness);
    for cannot_fail in ["pg_isready -h db.shop.svc || true", "pg_isready -h localhost,db.shop.svc"] {
        let sims = simulations_of(&pod(cannot_fail));
        assert_ne!(sims[0].written.scenario.dependency_check, DependencyCheck::Liveness, "{cannot_fail}");
        let o = probegate(&["explain", "-"], Some(&pod(cannot_fail)));
        assert!(
            !text(&o.stdout).contains("reaches outside the pod (liveness-dependency)"),
            "{}",
            text(&o.stdout)
        );
    }
}

/// Fresh-user pass (s16): `explain` said the dependency was "checked by liveness (and readiness)"
/// for a Pod with no readiness probe. It names only the probes that reach it: liveness alone here
/// (the run's assumption about readiness is its own line), both when readiness reaches it too.
#[test]
fn explain_names_only_the_probes_that_check_the_dependency() {
    let dir = tempfile::tempdir().unwrap();
    let pod = |readiness: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: ns}}\nspec:\n  containers:\n  - name: api\n    image: img\n    livenessProbe: {{exec: {{command: [grpc_health_probe, -addr=orders:50051]}}}}\n{readiness}"
        )
    };
    for (name, readiness, said) in [
        ("none.yaml", "", "as written: dependency checked by liveness: "),
        (
            "both.yaml",
            "    readinessProbe: {exec: {command: [grpc_health_probe, -addr=orders:50051]}}\n",
            "as written: dependency checked by liveness and readiness: ",
        ),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, pod(readiness)).unwrap();
        let o = probegate(&["explain", path.to_str().unwrap()], None);
        let out = text(&o.stdout);
        assert!(out.contains(said) && !out.contains("(and readiness)"), "{name}: {out}");
    }
}

#[test]
fn explain_prints_the_arithmetic_and_draws_the_chart() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("seed.svg");
    let o = probegate(
        &[
            "explain",
            "--dependency-check",
            "liveness",
            "--svg",
            svg.to_str().unwrap(),
            "tests/fixtures/explain/seed-scenario.yaml",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    golden("explain-seed.txt", &out);
    for needle in [
        "boot budget 45 s = initialDelaySeconds 0 + periodSeconds 5 x failureThreshold 9",
        "failure budget 30 s = periodSeconds 10 x failureThreshold 3; a hang is a restart after at most 31 s = the budget + timeoutSeconds 1",
        "timeoutSeconds 1 (default)",
        "as written: dependency checked by liveness and readiness: 12 restarts, full capacity 39 s after the dependency returns, 215 pod-seconds",
        "as fixed:   dependency checked by readiness only: 0 restarts, full capacity 9 s after the dependency returns, 35 pod-seconds",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
    let chart = std::fs::read_to_string(&svg).unwrap();
    assert!(chart.starts_with("<svg") && chart.contains("<polyline"), "{}", &chart[..200.min(chart.len())]);
    assert!(chart.contains("as written") && chart.contains("as fixed"));
    // Flags override the manifest.
    let o = probegate(
        &[
            "explain",
            "--dependency-check",
            "readiness",
            "--replicas",
            "3",
            "--outage",
            "30",
            "--warmup",
            "5",
            "tests/fixtures/explain/seed-scenario.yaml",
        ],
        None,
    );
    let out = text(&o.stdout);
    assert!(
        out.contains("3 replicas (--replicas), warm-up 5 s (--warmup), the dependency down for 30 s"),
        "{out}"
    );
    assert!(out.contains("as written: dependency checked by readiness only: 0 restarts"), "{out}");
}

#[test]
fn env_values_never_reach_the_output() {
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n    env:\n    - name: PASSWORD\n      value: 918273645\n    - {name: TOKEN, value: [s3cr3t-t0ken]}\n";
    for format in ["text", "json", "sarif", "junit"] {
        let o = probegate(&["check", "-o", format, "-"], Some(pod));
        assert_eq!(o.status.code(), Some(2));
        let all = text(&o.stdout) + &text(&o.stderr);
        assert!(all.contains("the object is not a valid Pod"), "{all}");
        assert!(!all.contains("918273645") && !all.contains("s3cr3t"), "{all}");
    }
}

/// `check` resolves liveness scripts through ConfigMaps in the same input (Helm or kustomize
/// output), and notes, without a finding, a script whose ConfigMap is not in it.
#[test]
fn check_reads_liveness_scripts_from_configmaps_in_the_same_input() {
    // Redis chart shape: one stream with the health ConfigMap, the master and the replicas.
    let (code, out, _) = check_bin("json", "deny", &["tests/fixtures/scripts/redis-replication.yaml"]);
    assert_eq!(code, 1, "{out}");
    let report: Value = serde_json::from_str(&out).unwrap();
    let denied: Vec<&Value> =
        report["findings"].as_array().unwrap().iter().filter(|f| f["level"] == "deny").collect();
    assert_eq!(denied.len(), 1, "{denied:?}");
    assert_eq!(denied[0]["name"], "cache-redis-replicas");
    assert!(
        denied[0]["message"].as_str().unwrap().contains("cache-redis-master"),
        "{}",
        denied[0]["message"]
    );
    // The MongoDB StatefulSet without its ConfigMap: a note, no finding; with it: analysed, clean.
    let sts = "tests/fixtures/corpus/statefulset-bitnami-mongodb-mongosh-ping-local-port.yaml";
    let (_, out, _) = check_bin("text", "deny", &[sts]);
    assert!(out.contains("note: ") && out.contains("not analysed"), "{out}");
    let both = format!(
        "{}\n---\n{}",
        std::fs::read_to_string(
            root().join("tests/fixtures/configmaps/statefulset-bitnami-mongodb-mongosh-ping-local-port.yaml")
        )
        .unwrap(),
        std::fs::read_to_string(root().join(sts)).unwrap()
    );
    let o = probegate(&["check", "-"], Some(&both));
    assert_eq!(o.status.code(), Some(0));
    let out = text(&o.stdout);
    assert!(!out.contains("not analysed") && !out.lines().any(|l| l.contains("  deny  ")), "{out}");
}

/// `explain` sees what `check` sees: a liveness script read from a ConfigMap of the same input.
#[test]
fn explain_reads_liveness_scripts_from_configmaps_in_the_same_input() {
    let o = probegate(&["explain", "tests/fixtures/scripts/redis-replication.yaml"], None);
    let out = text(&o.stdout);
    let replicas = &out[out.find("cache-redis-replicas").expect("the replicas are explained")..];
    assert!(replicas.contains("dependency checked by liveness"), "{out}");
    assert!(replicas.contains("as fixed:   dependency checked by readiness only: 0 restarts"), "{out}");
}

#[test]
fn fix_in_place_through_a_symlink_rewrites_the_target_and_keeps_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("pod.yaml");
    std::fs::copy(
        root().join("tests/fixtures/corpus/pod-k8sdocs-tcp-liveness-readiness-identical.yaml"),
        &target,
    )
    .unwrap();
    let link = dir.path().join("link.yaml");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let before = std::fs::read_to_string(&target).unwrap();
    let o = probegate(&["fix", "--in-place", link.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link stays a link");
    let after = std::fs::read_to_string(&target).unwrap();
    assert_ne!(before, after, "the file it points to was fixed");
    assert!(after.contains("preStop"), "{after}");
}

/// `fix --in-place` keeps a file's owner and group (as root, or its owner) and refuses a read-only
/// file rather than replace it through the rename (break-it pass s21: a root-owned 0444 file was
/// rewritten, and owners became the user running `fix`).
#[test]
fn fix_in_place_keeps_the_owner_and_refuses_a_read_only_file() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let corpus = root().join("tests/fixtures/corpus/pod-k8sdocs-tcp-liveness-readiness-identical.yaml");
    let ro = dir.path().join("ro.yaml");
    std::fs::copy(&corpus, &ro).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = std::fs::read_to_string(&ro).unwrap();
    let o = probegate(&["fix", "--in-place", ro.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("read-only"), "{}", text(&o.stderr));
    assert_eq!(std::fs::read_to_string(&ro).unwrap(), before, "not changed");
    // The owner and group stay: checked where the test may give the file another owner (root).
    let owned = dir.path().join("owned.yaml");
    std::fs::copy(&corpus, &owned).unwrap();
    std::fs::set_permissions(&owned, std::fs::Permissions::from_mode(0o640)).unwrap();
    let root_user = std::fs::metadata(&owned).unwrap().uid() == 0;
    if root_user {
        std::os::unix::fs::chown(&owned, Some(65534), Some(65534)).unwrap();
    }
    let o = probegate(&["fix", "--in-place", owned.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let meta = std::fs::metadata(&owned).unwrap();
    assert!(std::fs::read_to_string(&owned).unwrap().contains("preStop"));
    assert_eq!(meta.permissions().mode() & 0o7777, 0o640);
    if root_user {
        assert_eq!((meta.uid(), meta.gid()), (65534, 65534));
    }
}

/// `probe-client-deadline: mutate` through `fix`: the raised timeouts are edited into the text (one
/// edit per field, with probe-timeout's raise of the same field merged), and a re-check finds
/// nothing left for either rule.
#[test]
fn fix_raises_timeouts_above_client_deadlines() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cart.yaml");
    std::fs::copy(
        root().join(
            "tests/fixtures/corpus/deployment-microservices-demo-cartservice-grpc-probe-rpc-timeout-exceeds-kubelet-timeout.yaml",
        ),
        &file,
    )
    .unwrap();
    let policy = dir.path().join("policy.yaml");
    std::fs::write(
        &policy,
        "apiVersion: probegate.dev/v1alpha1\nkind: ProbePolicy\nrules:\n  probe-client-deadline: {action: mutate}\n",
    )
    .unwrap();
    let (f, p) = (file.to_str().unwrap(), policy.to_str().unwrap());
    let o = probegate(&["fix", "--in-place", "--policy", p, f], None);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(!text(&o.stderr).contains("re-serialized"), "{}", text(&o.stderr));
    let fixed = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        fixed.matches("timeoutSeconds: 5").count(),
        3,
        "liveness, readiness and the startup probe: {fixed}"
    );
    let after = probegate(&["check", "-o", "json", "--policy", p, f], None);
    let after: Value = serde_json::from_slice(&after.stdout).unwrap();
    let rules: Vec<&str> =
        after["findings"].as_array().unwrap().iter().filter_map(|x| x["rule"].as_str()).collect();
    assert!(!rules.contains(&"probe-client-deadline") && !rules.contains(&"probe-timeout"), "{rules:?}");
    assert_eq!(after["summary"]["fix"], 0, "{}", after["findings"]);
}

/// `explain` shows a probe's command redacted as `check` does: a password flag, URL userinfo or a
/// script variable's value never reaches its text or JSON output (break-it pass).
#[test]
fn explain_redacts_secrets_in_probe_commands() {
    let secret = "Zq9SeCrEtxK7";
    for command in [
        format!("[sh, -c, 'mysqladmin ping -h 127.0.0.1 -uroot -p{secret}']"),
        format!("[sh, -c, 'curl -sf http://u:{secret}@localhost:8080/healthz']"),
        format!("[sh, -c, 'PW={secret}; mysqladmin ping -h 127.0.0.1 -uroot -p$PW']"),
    ] {
        let pod = format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: db, namespace: shop}}\nspec:\n  containers:\n  \
             - name: db\n    image: mysql:8\n    ports: [{{containerPort: 3306}}]\n    livenessProbe:\n      \
             exec: {{command: {command}}}\n"
        );
        for extra in [&[][..], &["-o", "json"][..]] {
            let mut args = vec!["explain"];
            args.extend_from_slice(extra);
            args.push("-");
            let o = probegate(&args, Some(&pod));
            let out = format!("{}{}", text(&o.stdout), text(&o.stderr));
            assert!(out.contains("mysqladmin") || out.contains("curl"), "the command is shown: {out}");
            assert!(!out.contains(secret), "{command} {extra:?} shows the secret: {out}");
        }
    }
}

/// A liveness probe that reaches two dependencies, each of which fails it by itself
/// (`pg_isready -h db && redis-cli -h cache ping`): `explain` names both, and says the outage
/// simulation holds for either one down (break-it pass, issue 10: it named neither and spoke of
/// "the dependency"). The restarts are the same as for one dependency: the probe fails either way.
/// A second command whose failure cannot fail the probe (`|| true`, `;` without errexit, a
/// fallback after `||`) is not named.
#[test]
fn explain_names_every_dependency_a_liveness_probe_needs() {
    let pod = |command: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: default}}\nspec:\n  containers:\n  \
             - name: app\n    image: app:1\n    ports: [{{containerPort: 8080}}]\n    livenessProbe:\n      \
             exec: {{command: [sh, -c, '{command}']}}\n    readinessProbe: {{httpGet: {{path: /ready, port: 8080}}}}\n"
        )
    };
    let both = [
        "pg_isready -h db.shop.svc && redis-cli -h cache.shop.svc ping",
        "set -e; pg_isready -h db.shop.svc; redis-cli -h cache.shop.svc ping",
        "if pg_isready -h db.shop.svc; then redis-cli -h cache.shop.svc ping; else exit 1; fi",
        "pg_isready -h db.shop.svc && redis-cli -h cache.shop.svc ping && pg_isready -h db.shop.svc",
    ];
    let one = simulations_of(&pod("pg_isready -h db.shop.svc"));
    for command in both {
        let out = text(&probegate(&["explain", "-"], Some(&pod(command))).stdout);
        assert!(
            out.contains(
                "reaches 2 dependencies, each of which fails it by itself when down: db.shop.svc (database, via \
                 pg_isready); cache.shop.svc (cache, via redis-cli)"
            ),
            "{command}\n{out}"
        );
        assert!(
            out.contains("the dependency is any of db.shop.svc, cache.shop.svc: each one down fails"),
            "{out}"
        );
        // Either one down fails the probe, as the one dependency does: the same runs.
        let sims = simulations_of(&pod(command));
        assert_eq!(sims[0].written, one[0].written, "{command}");
        assert_eq!(sims[0].fixed, one[0].fixed, "{command}");
    }
    for command in [
        "pg_isready -h db.shop.svc && { redis-cli -h cache.shop.svc ping || true; }",
        "pg_isready -h db.shop.svc; redis-cli -h cache.shop.svc ping",
        "pg_isready -h db.shop.svc || redis-cli -h cache.shop.svc ping",
        "pg_isready -h db.shop.svc",
    ] {
        let out = text(&probegate(&["explain", "-"], Some(&pod(command))).stdout);
        assert!(out.contains("reaches outside the pod (liveness-dependency)"), "{command}\n{out}");
        assert!(!out.contains("dependencies, each") && !out.contains("any of"), "{command}\n{out}");
    }
}
