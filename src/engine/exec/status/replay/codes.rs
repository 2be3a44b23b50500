//! The exit statuses an outage of a check gives, for the replay (moved from `replay.rs`, s25):
//! its client row's, and `timeout`'s own, which stand for a hang, not a refused server.

use crate::engine::exec::kinds::KindName;
use tree_sitter::Node;

use super::super::super::clients::find_client;
use super::super::super::shell::Walk;
use super::text;

/// The exit statuses an outage of the check `cmd` gives: its client row's `outage_status`, and
/// through `timeout [-k T] [--foreground] [-v] DURATION` 124 (and 137 with `-k`) too (coreutils,
/// "timeout invocation": "If the command times out, and --preserve-status is not set, then exit
/// with status 124"; otherwise its status is the command's). `None`: not known.
/// Also, second, those of them only `timeout` gives (124, 137 with `-k`) when it kills a check
/// that ran past its limit: a hang, not a refused or down server (s25).
pub(super) fn outage_codes(cmd: Node<'_>, walk: &Walk<'_>) -> Option<(Vec<u8>, Vec<u8>)> {
    let name = cmd.child_by_field("name").map(|m| text(m, walk))?;
    let mut c = cmd.walk();
    let args: Vec<String> =
        cmd.children_by_field("argument", &mut c).map(|a| text(a, walk).to_string()).collect();
    let mut words: Vec<&str> = std::iter::once(name).chain(args.iter().map(String::as_str)).collect();
    let mut extra: Vec<u8> = Vec::new();
    if name == "timeout" {
        let mut i = 1;
        extra.push(124);
        while let Some(w) = words.get(i) {
            match *w {
                "--foreground" | "-v" | "--verbose" => i += 1,
                "-k" => {
                    extra.push(137);
                    i += 2;
                }
                w if w.starts_with("--kill-after=") => {
                    extra.push(137);
                    i += 1;
                }
                w if w.starts_with('-') => return None,
                _ => break,
            }
        }
        // The duration, then the command.
        words = words.get(i + 1..)?.to_vec();
    }
    let (first, rest) = words.split_first()?;
    let rest: Vec<String> = rest.iter().map(|s| s.to_string()).collect();
    let client = find_client(first, &rest).filter(|c| !c.outage_status.is_empty())?;
    let mut codes = client.outage_status.to_vec();
    extra.retain(|c| !codes.contains(c));
    codes.extend(extra.iter().copied());
    codes.sort_unstable();
    codes.dedup();
    Some((codes, extra))
}
