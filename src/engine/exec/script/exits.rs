//! Whether a script's text always exits 0, whatever its commands return (a crude scan).

/// Whether a script's exit status is 0 whatever its commands return (bash manual, "Exit
/// Status": a script's status is its last command's): its last statement is `exit 0`, `true`,
/// `:` or a plain `echo` (returned, `echo` without its words, for the message), and nothing can
/// end it earlier with another status (no other `exit`, no `return`, `exec`, `set -e`/`errexit`,
/// `trap`, `source` or `.`, which may run another script's `exit`, and no `while`/`until` loop, which can wait on a dependency until the probe times out).
/// A crude scan of the text: anything it does not understand keeps the script's commands coupled.
pub(in crate::engine::exec) fn always_exits_zero(script: &str) -> Option<&str> {
    let body = script.trim_end().trim_end_matches(';').trim_end();
    let last = body.rsplit(['\n', ';']).next().unwrap_or("").trim();
    // A plain `echo` (no redirection, pipe, substitution or background: nothing that can fail)
    // exits 0 too: `pg_isready -h db; echo $?`, and cmd's `curl ... & echo ok`.
    let plain_echo =
        (last == "echo" || last.starts_with("echo ")) && !last.contains(['>', '<', '|', '&', '`', '(', ')']);
    // (A quote left open in it: the split on `;` was inside a quoted word, `sh -ec 'a; echo ok'`,
    // whose last command is `sh`: break-it, #10.)
    let balanced = last.matches('\'').count().is_multiple_of(2)
        && last.matches('"').count().is_multiple_of(2)
        && !last.contains('\\');
    if !(super::super::flow::succeeds_as_written(last) || plain_echo) || !balanced || body.len() == last.len()
    {
        return None;
    }
    // A loop whose condition is the check waits for the dependency: its outage hangs the probe
    // until it times out (`until pg_isready -h db; do sleep 1; done; exit 0`).
    if super::super::flow::mentions(
        script,
        &["return", "exec", "errexit", "trap", "source", "kill", "while", "until"],
    ) {
        return None;
    }
    let words: Vec<&str> = script.split_whitespace().collect();
    let exits_zero = words.windows(2).all(|w| w[0] != "exit" || w[1].trim_end_matches(';') == "0");
    // `set -e` (a script naming `errexit` was left above; a `#!` line's `-e` is the caller's
    // errexit, for a file executed directly).
    (exits_zero
        && !super::super::status::sets_errexit(script)
        && !words.contains(&".")
        && !script.contains("exit;"))
    .then_some(if plain_echo { "echo" } else { last })
}
