//! Filters whose exit status does not depend on what they read: a check piped into one
//! (`redis-cli -h cache ping | tee -a /tmp/liveness.log`) gives its pipeline the filter's status,
//! 0 whatever the check wrote, when pipefail is off (bash manual, "Pipelines": "The return status
//! of a pipeline is the exit status of the last command, unless the pipefail option is enabled";
//! POSIX, Shell Command Language, 2.9.2 Pipelines). A verdict break-it pass (s13) found
//! `| tee`, `| head -1`, `| wc -l`, `| awk '{print}'` denied where only `| cat` was not: bash 5.2
//! and dash 0.5.12 exit 0 with the dependency down for each.

use tree_sitter::Node;

use super::super::shell::Walk;
use super::harmless::named_elsewhere;
use super::text;

/// Programs that copy or reshape their input and exit 0 whatever it holds (GNU coreutils,
/// util-linux `logger`, POSIX awk and sed), given the arguments [`plain_filter`] accepts. Not `jq`:
/// it fails on input that is not JSON (a client's error message), so its status reads the input.
const FILTERS: &[&str] = &[
    "cat", "tee", "head", "tail", "wc", "sort", "uniq", "tr", "cut", "nl", "tac", "rev", "logger", "awk",
    "gawk", "mawk", "sed",
];

/// Whether the pipeline element `k` is a [`FILTERS`] program run with plain arguments (words and
/// quoted strings that expand nothing) none of which makes its status read its input: no
/// `tail -f` (it waits), no `sort -c` (exits 1 on unsorted input), no awk program with `exit`, `getline` or `system` and no sed script with `q`/`Q`
/// (an exit status), no program read from a file (`-f`); and, for `tee`, no file it writes named
/// again by the script (`src`, [`named_elsewhere`]), whose reader would see the check's output.
/// A function of that name (`functions`) is not the program. Anything else is not a filter.
pub(super) fn plain_filter(k: Node<'_>, walk: &Walk<'_>, functions: &[String]) -> bool {
    if k.kind() != "command" {
        return false;
    }
    let Some(name) = k.child_by_field_name("name") else {
        return false;
    };
    let name = text(name, walk).trim();
    if !FILTERS.contains(&name) || functions.iter().any(|f| f == name) {
        return false;
    }
    let mut c = k.walk();
    // (Only the name and arguments: an assignment before the name or a redirection is not plain.)
    if k.named_children(&mut c)
        .any(|a| !matches!(a.kind(), "command_name" | "word" | "raw_string" | "string" | "number"))
    {
        return false;
    }
    let mut c = k.walk();
    let args: Vec<&str> = k.children_by_field_name("argument", &mut c).map(|a| text(a, walk)).collect();
    if args.iter().any(|a| a.contains(['$', '`']) && !a.starts_with('\'')) {
        return false;
    }
    let short_has = |a: &str, flags: &[char]| a.starts_with('-') && !a.starts_with("--") && a.contains(flags);
    match name {
        "tail" => {
            !args.iter().any(|a| short_has(a, &['f', 'F']) || a.starts_with("--follow") || *a == "--retry")
        }
        "sort" => !args.iter().any(|a| short_has(a, &['c', 'C']) || a.starts_with("--check")),
        "awk" | "gawk" | "mawk" => !args.iter().any(|a| {
            short_has(a, &['f'])
                || a.starts_with("--file")
                || ["exit", "getline", "system"].iter().any(|w| a.contains(w))
        }),
        "sed" => !args.iter().any(|a| {
            short_has(a, &['f']) || a.starts_with("--file") || (!a.starts_with('-') && a.contains(['q', 'Q']))
        }),
        "tee" => !args
            .iter()
            .filter(|a| !a.starts_with('-'))
            .any(|f| named_elsewhere(f, walk.src, &[(k.start_byte(), k.end_byte())])),
        _ => true,
    }
}

/// [`plain_filter`] of a pipeline's element `k`, or of the command of a redirected element
/// (`| tee -a log >/dev/null`) whose redirections write no file the script names again
/// (`harmless::writes_a_named_file`).
pub(super) fn plain_filter_element(k: Node<'_>, walk: &Walk<'_>, functions: &[String]) -> bool {
    if k.kind() == "redirected_statement" {
        return !super::writes_a_named_file(k, walk)
            && k.child_by_field_name("body").is_some_and(|body| plain_filter(body, walk, functions));
    }
    plain_filter(k, walk, functions)
}
