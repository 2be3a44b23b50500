//! `probegate rules [-o text|json]`: the rule catalog as the embedded default policy sets it: id,
//! default action, what the rule finds, and the link to its section of the documentation (the same
//! link SARIF gives as `helpUri`).

use std::io::Write;

use super::EXIT_OK;
use crate::policy::{Policy, RuleId};

/// Where the rule documentation lives: `docs/rules.md` of the repository, one section per rule id.
/// The base is Cargo.toml's `repository` field (its one source), e.g.
/// `https://github.com/probegate/probegate/blob/main/docs/rules.md`.
pub const RULES_DOC: &str = concat!(env!("CARGO_PKG_REPOSITORY"), "/blob/main/docs/rules.md");

/// The link to a rule's section of the documentation: [`RULES_DOC`]`#RULE-ID`.
pub fn doc_url(rule: RuleId) -> String {
    format!("{RULES_DOC}#{}", rule.as_str())
}

/// Output formats of `probegate rules`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// An aligned table: id, default action, what it finds, the link.
    Text,
    /// A JSON array of `{id, defaultAction, fixable, summary, description, helpUri}`.
    Json,
}

/// Writes the catalog; the default actions are those of the embedded default policy.
pub fn run(format: Format, out: &mut dyn Write) -> u8 {
    let policy = crate::policy::parse(crate::policy::DEFAULT_POLICY_YAML, "<embedded default>")
        .unwrap_or_else(|_| Policy::default());
    let rows: Vec<(RuleId, &str, &str, &str)> = RuleId::ALL
        .iter()
        .map(|&r| {
            let (short, full) = super::sarif::rule_text(r);
            (r, policy.rules.action(r).as_str(), short, full)
        })
        .collect();
    let written = match format {
        Format::Json => {
            let rules: Vec<serde_json::Value> = rows
                .iter()
                .map(|(r, action, short, full)| {
                    serde_json::json!({
                        "id": r.as_str(),
                        "defaultAction": action,
                        "fixable": r.fixable(),
                        "summary": short,
                        "description": full,
                        "helpUri": doc_url(*r),
                    })
                })
                .collect();
            writeln!(out, "{}", serde_json::to_string_pretty(&rules).unwrap_or_default())
        }
        Format::Text => {
            let wi = rows.iter().map(|r| r.0.as_str().len()).max().unwrap_or(0);
            let wa = rows.iter().map(|r| r.1.len()).max().unwrap_or(0).max("DEFAULT".len());
            let ws = rows.iter().map(|r| r.2.len()).max().unwrap_or(0);
            let mut text = format!("{:<wi$}  {:<wa$}  {:<ws$}  DOCS\n", "RULE", "DEFAULT", "FINDS");
            for (r, action, short, _) in &rows {
                text.push_str(&format!(
                    "{:<wi$}  {action:<wa$}  {short:<ws$}  {}\n",
                    r.as_str(),
                    doc_url(*r)
                ));
            }
            out.write_all(text.as_bytes())
        }
    };
    match written {
        Ok(()) => EXIT_OK,
        Err(_) => super::EXIT_BAD_INPUT,
    }
}
