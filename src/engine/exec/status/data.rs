//! The command-name lists the status walk judges a text by (`harmless`'s `harmless_text`,
//! `plain_commands` and `leaves_state`; `rules`, which gives up on a function named like a
//! [`PLAIN`] command). A word of [`CHANGES_STATE`], [`NOT_HARMLESS`] or [`ENDS_OR_UNFOLLOWED`]
//! only ever keeps a command coupled; [`PLAIN`] lists the programs taken as changing nothing.

/// Builtins and programs that change the shell or the files a later command may read (`read`,
/// `export`, `set`, `cd`, `rm`, ...): a text naming one is neither harmless
/// ([`harmless_text`](super::harmless::harmless_text)) nor free of state its caller reads
/// ([`leaves_state`](super::harmless::leaves_state)). The builtins change the shell's variables,
/// options, directory or limits (bash manual, "Bourne Shell Builtins" and "Bash Builtin
/// Commands"); `touch`, `rm`, `mkdir`, `mv`, `cp`, `tee`, `ln` write files (POSIX utilities).
pub(super) const CHANGES_STATE: &[&str] = &[
    "set",
    "shift",
    "unset",
    "export",
    "read",
    "readarray",
    "mapfile",
    "declare",
    "typeset",
    "readonly",
    "cd",
    "pushd",
    "popd",
    "touch",
    "rm",
    "mkdir",
    "mv",
    "cp",
    "tee",
    "ln",
    "alias",
    "shopt",
    "ulimit",
    "umask",
    "let",
    "getopts",
];

/// Beside [`CHANGES_STATE`], what keeps a text from being harmless: a status of its own (`false`,
/// `test`, `return`), loop control, `local`, a `function` definition, and a `while`/`until` loop
/// (it can wait on the dependency until the probe times out: `check || while :; do sleep 1;
/// done`).
pub(super) const NOT_HARMLESS: &[&str] =
    &["false", "return", "test", "local", "break", "continue", "function", "while", "until"];

/// Beside [`CHANGES_STATE`], what a function's body may do that ends the script or runs code the
/// walk does not follow (`exit`, `exec`, `trap`, `kill`, `eval`, `source`).
pub(super) const ENDS_OR_UNFOLLOWED: &[&str] = &["exit", "exec", "trap", "kill", "eval", "source"];

/// Programs that change nothing a later command or the next probe sees, and never wait: output
/// and the clients (`clients::find_client`: a check of their own, judged by themselves). Any
/// other program (`sleep`, which can time the probe out, `pkill`, `supervisorctl`, ...) may
/// make the branch that runs matter.
/// (`echo`, `printf`, `true`, `logger`: POSIX utilities; `:`: a POSIX special built-in; `exit`
/// is judged by its status elsewhere: only `exit 0` is harmless, `harmless_writing`.)
pub(super) const PLAIN: &[&str] = &["echo", "printf", ":", "true", "exit", "logger"];

/// Beside the lists above, [`super::filters`]' filters and `flow::constant`'s `NOT_PLAIN`, the
/// commands the status walk and its replay read by name: `test`/`[` and `false` (evaluated),
/// the `grep` family (its statuses 0, 1 and 2), `jq`, `sleep`, the programs of a harmless
/// substitution (`$(date +%s)`, `$(hostname)`) and `/bin/true`.
const READ_ALSO: &[&str] = &[
    "test",
    "[",
    "false",
    "grep",
    "egrep",
    "fgrep",
    "jq",
    "sleep",
    "date",
    "hostname",
    "uname",
    "id",
    "whoami",
    "pwd",
    "/bin/true",
];

/// Whether the status walk, its replay or the flow read a command named `name` by what that
/// command does (`true` succeeds, `[ $? -ne 3 ]` compares, `exit $?` exits, `cat` copies): a
/// function of that name makes the script run something else (bash 5.2 and dash 0.5.12 call a
/// function before a builtin or a program of its name; bash also before `exit`), so what the
/// walk concludes from the name is a guess ([`super::texts::shadowing_call`]).
pub(in crate::engine::exec) fn read_by_name(name: &str) -> bool {
    [
        PLAIN,
        CHANGES_STATE,
        NOT_HARMLESS,
        ENDS_OR_UNFOLLOWED,
        READ_ALSO,
        super::filters::FILTERS,
        super::super::flow::NOT_PLAIN,
    ]
    .iter()
    .any(|list| list.contains(&name))
}
