//! The configuration file the offline commands find by convention, so that a CI job or a pre-commit
//! hook needs no flags: `$PROBEGATE_CONFIG` when set, else `.probegate.yaml` in the current folder
//! or the nearest parent that has one.
//!
//! ```yaml
//! policy: policies/platform.yaml   # relative to the configuration file
//! namespace: shop                  # for objects without metadata.namespace
//! failOn: warn                     # check and fix: deny | warn | fix
//! output: sarif                    # check: text | json | sarif | junit
//! skip: [prestop-sleep]            # rules turned off (with --skip: both)
//! paths: [k8s/]                    # what to read when the command line names nothing
//! ```
//!
//! A flag on the command line wins over the file.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::policy::RuleId;

/// The file name looked for in the current folder and its parents.
pub const FILE_NAME: &str = ".probegate.yaml";

/// The environment variable naming a configuration file (then no search is made).
pub const ENV_VAR: &str = "PROBEGATE_CONFIG";

/// The settings of a configuration file, paths made relative to the current folder.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Config {
    /// Where it was read from (`None`: no file).
    pub source: Option<PathBuf>,
    /// `--policy`.
    pub policy: Option<PathBuf>,
    /// `--namespace`.
    pub namespace: Option<String>,
    /// `check --fail-on`.
    pub fail_on: Option<super::input::Level>,
    /// `check -o`.
    pub output: Option<super::check::Format>,
    /// `--skip`.
    pub skip: Vec<RuleId>,
    /// The paths read when the command line gives none.
    pub paths: Vec<PathBuf>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct File {
    policy: Option<String>,
    namespace: Option<String>,
    fail_on: Option<String>,
    output: Option<String>,
    #[serde(default)]
    skip: Vec<String>,
    #[serde(default)]
    paths: Vec<String>,
}

/// Finds the configuration file: `env` (the value of [`ENV_VAR`]) when given, else [`FILE_NAME`]
/// in `cwd` or its nearest parent that has one. Returns the path to read it from, relative to
/// `cwd` when found by search (`.probegate.yaml`, `../.probegate.yaml`).
pub fn find(env: Option<PathBuf>, cwd: &Path) -> Option<PathBuf> {
    if let Some(path) = env.filter(|p| !p.as_os_str().is_empty()) {
        return Some(path);
    }
    let mut relative = PathBuf::new();
    for dir in cwd.ancestors() {
        if dir.join(FILE_NAME).is_file() {
            return Some(relative.join(FILE_NAME));
        }
        relative.push("..");
    }
    None
}

/// Parses a configuration file's text; `path` is where it was read from (relative paths in it are
/// relative to its folder).
///
/// # Errors
/// `FILE: what is wrong` for YAML errors, unknown keys, unknown rules, formats or levels.
pub fn parse(text: &str, path: &Path) -> Result<Config, String> {
    use clap::ValueEnum;
    let at = |m: String| format!("{}: {m}", path.display());
    let file: File = serde_saphyr::from_str(text).map_err(|e| {
        let message = crate::manifest::located::plain_yaml_message(&e.without_snippet().to_string());
        match e.location().filter(|l| l.line() > 0) {
            Some(l) => format!("{}:{}:{}: {message}", path.display(), l.line(), l.column()),
            None => at(message),
        }
    })?;
    let base = path.parent().unwrap_or(Path::new(""));
    let rel = |p: &str| if Path::new(p).is_absolute() { PathBuf::from(p) } else { base.join(p) };
    let fail_on = match &file.fail_on {
        Some(v) => Some(
            super::input::Level::from_str(v, true)
                .map_err(|_| at(format!("failOn {v:?}: expected deny, warn, fix or info")))?,
        ),
        None => None,
    };
    let output = match &file.output {
        Some(v) => Some(
            super::check::Format::from_str(v, true)
                .map_err(|_| at(format!("output {v:?}: expected text, json, sarif or junit")))?,
        ),
        None => None,
    };
    let skip = file.skip.iter().map(|s| parse_rule(s).map_err(at)).collect::<Result<Vec<_>, _>>()?;
    Ok(Config {
        source: Some(path.to_path_buf()),
        policy: file.policy.as_deref().map(rel),
        namespace: match file.namespace.as_deref() {
            Some(ns) => Some(parse_namespace(ns).map_err(|e| at(format!("namespace {ns:?}: {e}")))?),
            None => None,
        },
        fail_on,
        output,
        skip,
        paths: file.paths.iter().map(|p| rel(p)).collect(),
    })
}

/// A namespace name (`--namespace`, `namespace:`): a DNS label as the API server requires of a
/// Namespace's name (Kubernetes docs, "Namespaces" and "Object Names and IDs", RFC 1123 label
/// names: at most 63 characters, lowercase letters, digits and `-`, starting and ending with a
/// letter or digit).
///
/// # Errors
/// `not a valid namespace name: ...`, saying which requirement it breaks.
pub fn parse_namespace(text: &str) -> Result<String, String> {
    let why = if text.is_empty() {
        Some("it is empty")
    } else if text.len() > 63 {
        Some("it is longer than 63 characters")
    } else if !text.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
        Some("only lowercase letters, digits and '-' are allowed")
    } else if text.starts_with('-') || text.ends_with('-') {
        Some("it must start and end with a letter or digit")
    } else {
        None
    };
    match why {
        Some(why) => Err(format!("not a valid namespace name: {why}")),
        None => Ok(text.to_string()),
    }
}

/// A rule id, with the nearest one suggested for a typo.
///
/// # Errors
/// `unknown rule "x" (did you mean "y"?)`.
pub fn parse_rule(text: &str) -> Result<RuleId, String> {
    RuleId::parse(text.trim()).ok_or_else(|| {
        let nearest = RuleId::ALL
            .iter()
            .map(|r| (strsim::jaro_winkler(text, r.as_str()), r.as_str()))
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .filter(|(similarity, _)| *similarity >= 0.85)
            .map(|(_, r)| format!(" (did you mean {r:?}?)"))
            .unwrap_or_default();
        let all: Vec<&str> = RuleId::ALL.iter().map(|r| r.as_str()).collect();
        format!("unknown rule {text:?}{nearest}; the rules are {}", all.join(", "))
    })
}

/// The command-line parser of a rule id (`--skip RULE`): [`parse_rule`]'s did-you-mean errors,
/// and the rule ids as possible values, which `clap_complete` offers in every shell's completion.
#[derive(Clone, Copy, Debug, Default)]
pub struct RuleParser;

impl clap::builder::TypedValueParser for RuleParser {
    type Value = RuleId;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<RuleId, clap::Error> {
        let parse: fn(&str) -> Result<RuleId, String> = parse_rule;
        parse.parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(RuleId::ALL.iter().map(|r| clap::builder::PossibleValue::new(r.as_str()))))
    }
}

/// Finds and reads the configuration (see [`find`]); no file is an empty configuration.
///
/// # Errors
/// When the file named by the environment cannot be read, or a file found is invalid.
pub fn load(env: Option<PathBuf>, cwd: &Path) -> Result<Config, String> {
    let Some(path) = find(env, cwd) else { return Ok(Config::default()) };
    let text = std::fs::read_to_string(cwd.join(&path))
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    parse(&text, &path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_relative_to_the_file_and_values_checked() {
        let c = parse(
            "policy: p.yaml\nnamespace: shop\nfailOn: warn\noutput: sarif\nskip: [prestop-sleep]\npaths: [k8s]\n",
            Path::new("../.probegate.yaml"),
        )
        .unwrap();
        assert_eq!(c.policy, Some(PathBuf::from("../p.yaml")));
        assert_eq!(c.paths, vec![PathBuf::from("../k8s")]);
        assert_eq!(c.fail_on, Some(super::super::input::Level::Warn));
        assert_eq!(c.skip, vec![RuleId::PrestopSleep]);
        let e = parse("skip: [prestop-slep]\n", Path::new(".probegate.yaml")).unwrap_err();
        assert!(e.contains(r#"did you mean "prestop-sleep""#), "{e}");
        assert!(parse("failon: warn\n", Path::new("c.yaml")).unwrap_err().contains("unknown field"));
        assert!(parse("output: xml\n", Path::new("c.yaml")).is_err());
    }

    /// Errors of the file name its line and column, in words meant for its writer (break-it pass
    /// s21: no location, the YAML library's advice to programmers, `info` left out of the choices).
    #[test]
    fn errors_name_the_place_and_every_choice() {
        let e = parse("failOn: warn\nfailOn: deny\n", Path::new(".probegate.yaml")).unwrap_err();
        assert_eq!(e, ".probegate.yaml:2:1: duplicate key `failOn` in a mapping (each key may appear once)");
        let e = parse("failOn: sometimes\n", Path::new(".probegate.yaml")).unwrap_err();
        assert_eq!(e, r#".probegate.yaml: failOn "sometimes": expected deny, warn, fix or info"#);
        assert_eq!(
            parse("failOn: info\n", Path::new("c.yaml")).unwrap().fail_on,
            Some(super::super::input::Level::Info)
        );
        let e = parse("paths: 3\n", Path::new("c.yaml")).unwrap_err();
        assert!(e.starts_with("c.yaml:1:8: "), "{e}");
    }
}
