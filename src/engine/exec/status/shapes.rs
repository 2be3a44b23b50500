//! Constructs whose exit status is a known part's, found by the v2 verdict break-it pass on
//! a00d258 (issue #10, "never deny on a guess"), each checked in bash 5.2 and dash 0.5.12 with
//! stub clients (`tests/shell_flow_v2.rs`):
//! - `(exec CMD)`: `exec` replaces the subshell, not the script (bash manual, "Command Execution
//!   Environment"), so the subshell's status is CMD's, judged where the subshell is.

use crate::engine::exec::kinds::KindName;
use tree_sitter::Node;

use super::super::clients::find_client;
use super::super::shell::Walk;
use super::constructs::{host_is_loop_variable, local_word, one_statement_for_loop, plain_word};
use super::harmless::{harmless, harmless_after, may_be_read_elsewhere, reads_only_as_output};
use super::{Funcs, each_node, is_statement, leaves, text};

/// How many `exec` commands under `root` run a program as the last statement of a `( )`
/// subshell (`(exec pg_isready -h db); exit 0`): each replaces only the subshell, whose status is
/// the program's, walked on from the subshell like any last statement's (bash 5.2 and dash
/// 0.5.12: `(exec pg_isready -h db); exit 0` and `(exec ...) || true` exit 0 with the database
/// down; `(exec ...)` alone exits 2).
pub(super) fn subshell_last_execs(root: Node<'_>, walk: &Walk<'_>) -> usize {
    let mut found = 0;
    each_node(root, |k| {
        if k.kind_name() != "command" || k.child_by_field("name").is_none_or(|m| text(m, walk) != "exec") {
            return;
        }
        let Some(sub) = k.parent().filter(|p| p.kind_name() == "subshell") else {
            return;
        };
        let mut c = k.walk();
        let runs_program =
            k.children_by_field("argument", &mut c).next().is_some_and(|a| !text(a, walk).starts_with('-'));
        let mut c = sub.walk();
        let last = sub.named_children(&mut c).filter(|s| is_statement(*s)).last();
        let background = k.next_sibling().is_some_and(|s| s.kind_name() == "&");
        if runs_program && last == Some(k) && !background {
            found += 1;
        }
    });
    found
}

/// Whether the command substitution `sub`, whose only statement is `at`, writes nothing whatever
/// the check `at` finds, and is an argument of the command `up` (not its name): `up` then runs
/// with the same arguments with the dependency up or down, and its status is its own (bash
/// manual, "Simple Command Expansion": "If there is a command name left after expansion, [...]
/// the exit status of the command"). bash 5.2 and dash 0.5.12: `curl -sf
/// "http://localhost:8080/healthz?db=$(pg_isready -h db -q)"` exits 0 with the database down.
/// Nothing is written when `at` is `pg_isready -q`/`--quiet` (PostgreSQL, "pg_isready": "Do not
/// display status message") or its standard output goes to `/dev/null` (and its standard error
/// is not sent to the substitution before that: `2>&1 >/dev/null` writes the errors). A function
/// of that name (`functions`) may write anything.
pub(super) fn constant_argument(
    at: Node<'_>,
    sub: Node<'_>,
    up: Node<'_>,
    walk: &Walk<'_>,
    functions: &[String],
) -> bool {
    if up.kind_name() != "command"
        || up.child_by_field("name").is_some_and(|m| m.byte_range().contains(&sub.start_byte()))
    {
        return false;
    }
    let mut c = sub.walk();
    if sub.named_children(&mut c).filter(|s| is_statement(*s)).count() != 1 {
        return false;
    }
    let (cmd, redirects) = match at.kind_name() {
        "command" => (at, Vec::new()),
        "redirected_statement" => {
            let Some(body) = at.child_by_field("body").filter(|b| b.kind_name() == "command") else {
                return false;
            };
            let mut c = at.walk();
            (body, at.children_by_field("redirect", &mut c).map(|r| text(r, walk).replace(' ', "")).collect())
        }
        _ => return false,
    };
    let Some(name) = cmd.child_by_field("name").map(|m| text(m, walk)) else {
        return false;
    };
    if functions.iter().any(|f| f == name) {
        return false;
    }
    // (Standard output to /dev/null, standard error kept out of the substitution.)
    let mut stdout_null = false;
    for r in &redirects {
        match r.as_str() {
            ">/dev/null" | "1>/dev/null" | "&>/dev/null" | ">&/dev/null" => stdout_null = true,
            "2>/dev/null" => {}
            "2>&1" if stdout_null => {}
            _ => return false,
        }
    }
    let mut c = cmd.walk();
    let quiet = name == "pg_isready"
        && cmd.children_by_field("argument", &mut c).any(|a| matches!(text(a, walk), "-q" | "--quiet"));
    stdout_null || quiet
}

/// The `case` statement whose subject (`case WORD in`) holds `n`, if `up` (the first node above
/// `n` that is not a string or a concatenation) is one.
pub(super) fn case_of_subject<'t>(n: Node<'t>, up: Node<'t>) -> Option<Node<'t>> {
    (up.kind_name() == "case_statement"
        && up.child_by_field("value").is_some_and(|v| v.byte_range().contains(&n.start_byte())))
    .then_some(up)
}

/// Whether a `case` whose subject carries a check's output (or status) cannot fail the script by
/// itself: every item `selectable` says the check's outcome may choose runs only [`harmless`]
/// commands, and when one of them leaves the script (`exit 0`) so is every command after the
/// `case`. Its status is then that item's (0), or 0 when no pattern matches (POSIX, Shell Command
/// Language, 2.9.4 "Case Conditional Construct": "The exit status of case shall be zero if no
/// patterns are matched. Otherwise, the exit status shall be the exit status of the last command
/// executed in the compound-list"). bash 5.2 and dash 0.5.12 with redis down: `case
/// "$(redis-cli -h cache ping)" in PONG) echo ok;; *) echo bad;; esac` exits 0.
pub(super) fn case_is_harmless(
    case: Node<'_>,
    walk: &Walk<'_>,
    funcs: &Funcs,
    selectable: impl Fn(Node<'_>) -> bool,
) -> bool {
    let mut c = case.walk();
    let items: Vec<Node<'_>> = case
        .named_children(&mut c)
        .filter(|k| k.kind_name() == "case_item")
        .filter(|k| selectable(*k))
        .collect();
    let bodies: Vec<Node<'_>> = items
        .iter()
        .flat_map(|item| {
            let close = {
                let mut c = item.walk();
                item.children(&mut c)
                    .find(|k| k.kind_name() == ")")
                    .map_or(item.start_byte(), |p| p.end_byte())
            };
            let mut c = item.walk();
            item.named_children(&mut c)
                .filter(|k| is_statement(*k) && k.start_byte() >= close)
                .collect::<Vec<_>>()
        })
        .collect();
    bodies.iter().all(|b| harmless(*b, walk, funcs))
        && (!bodies.iter().any(|b| leaves(*b, walk)) || harmless_after(case, walk, funcs))
}

/// Whether `next`, the statement after the check `at`, is `case $? in` (or `"$?"`) where every
/// item an outage's status can select is harmless ([`case_is_harmless`]). A client's row tells
/// its outage's statuses (`outage_status`: `pg_isready` 1, the server rejects connections, or 2,
/// no response, 3 meaning no attempt was made: PostgreSQL, "pg_isready", Exit Status). An item
/// whose patterns are all literal numbers other than those cannot be selected by an outage
/// (`pg_isready -h db; case $? in 3) exit 1;; esac`: bash/dash 0 / 0 with the database down);
/// any other pattern can.
pub(super) fn case_on_outage_status_is_harmless(
    at: Node<'_>,
    next: Node<'_>,
    walk: &Walk<'_>,
    funcs: &Funcs,
) -> bool {
    let cmd = if at.kind_name() == "redirected_statement" { at.child_by_field("body") } else { Some(at) };
    let Some(cmd) = cmd.filter(|c| c.kind_name() == "command") else {
        return false;
    };
    let Some(name) = cmd.child_by_field("name").map(|m| text(m, walk)) else {
        return false;
    };
    let mut c = cmd.walk();
    let args: Vec<String> =
        cmd.children_by_field("argument", &mut c).map(|a| text(a, walk).to_string()).collect();
    let Some(client) = find_client(name, &args).filter(|c| !c.outage_status.is_empty()) else {
        return false;
    };
    if next.kind_name() != "case_statement"
        || !next.child_by_field("value").is_some_and(|v| matches!(text(v, walk), "$?" | "\"$?\""))
    {
        return false;
    }
    case_is_harmless(next, walk, funcs, |item| {
        let mut c = item.walk();
        item.children_by_field("value", &mut c).any(|p| {
            let p = text(p, walk);
            p.is_empty()
                || !p.bytes().all(|b| b.is_ascii_digit())
                || p.trim_start_matches('0').parse::<u8>().is_ok_and(|n| client.outage_status.contains(&n))
                || p.bytes().all(|b| b == b'0') && client.outage_status.contains(&0)
        })
    })
}

/// Whether the variable assigned at `name` (`r=$(redis-cli -h cache ping)`) is read only as the
/// subject of `case` statements, or written out (`echo "$r"`: `harmless::reads_only_as_output`), ([`case_of_subject`], `case "$r" in` or `case $r in`) that are
/// [`case_is_harmless`] whatever it holds, and named nowhere else: its value then only chooses a
/// harmless branch (bash 5.2 and dash 0.5.12 with redis down: `r=$(redis-cli -h cache ping);
/// case "$r" in PONG) echo ok;; *) echo bad;; esac` exits 0). An export, `declare`, indirection
/// or `env` could read it elsewhere: not claimed.
pub(super) fn only_case_subject(name: Node<'_>, walk: &Walk<'_>, funcs: &Funcs) -> bool {
    if may_be_read_elsewhere(name, walk) {
        return false;
    }
    let var = text(name, walk);
    super::tree::every_mention(name, walk, |k| {
        if reads_only_as_output(k, walk) {
            return true;
        }
        let Some(exp) = k.parent().filter(|e| {
            e.kind_name() == "simple_expansion"
                || (e.kind_name() == "expansion" && super::texts::is_braced_expansion_of(text(*e, walk), var))
        }) else {
            return false;
        };
        let mut up = exp.parent();
        while let Some(u) = up.filter(|u| matches!(u.kind_name(), "string" | "concatenation")) {
            up = u.parent();
        }
        up.and_then(|u| case_of_subject(exp, u))
            .is_some_and(|case| case_is_harmless(case, walk, funcs, |_| true))
    })
}

/// The `for` loop whose body is only the check `at`, when the loop's last word is this Pod
/// (`constructs::local_word`) and `at`'s host is the loop variable: the loop's status is its last
/// round's (POSIX, 2.9.4 "The for Loop": "the exit status of the last command that executes"),
/// the local check's, each earlier round's replaced by the next (bash 5.2 and dash 0.5.12: `for h
/// in orders-db localhost; do pg_isready -h $h; done` exits 0 with the database down; `for h in
/// localhost orders-db; ...` exits 2). The list's words must be plain (no expansion, no glob).
pub(super) fn last_round_is_local<'t>(at: Node<'t>, walk: &Walk<'_>) -> Option<Node<'t>> {
    if at.kind_name() != "command" {
        return None;
    }
    let (looped, var, values) = one_statement_for_loop(at, walk)?;
    let plain = |v: &&str| !v.is_empty() && plain_word(v);
    if var.is_empty() || !values.iter().all(plain) || !values.last().is_some_and(|v| local_word(v)) {
        return None;
    }
    host_is_loop_variable(at, var, walk).then_some(looped)
}

/// Whether `right`, the right side of `at || right`, is a bare `continue` and the list is the
/// last statement of a `for` loop's body: a failure of `at` gives the round `continue`'s status,
/// 0 (bash manual, "Bourne Shell Builtins", `continue`: "The return status is zero unless n is
/// not greater than or equal to 1"), and the loop's is its last round's (bash 5.2 and dash
/// 0.5.12: `for h in orders-db pg-0; do pg_isready -h $h -q || continue; done` exits 0 with both
/// down).
pub(super) fn continues_its_loop(list: Node<'_>, right: Node<'_>, walk: &Walk<'_>) -> bool {
    if text(right, walk).trim() != "continue" {
        return false;
    }
    let Some(body) = list.parent().filter(|b| b.kind_name() == "do_group") else {
        return false;
    };
    let mut c = body.walk();
    body.parent().is_some_and(|l| l.kind_name() == "for_statement")
        && body.named_children(&mut c).filter(|k| is_statement(*k)).last() == Some(list)
}

/// Whether the pipeline element `k` is `while read ...; do BODY; done` whose condition is a
/// bare `read` (options and names, nothing expanded, `IFS=` before it at most) and whose body is [`harmless`]: it reads
/// the lines before it until they end, and its status is the body's last command's, 0, or 0
/// when no line came (POSIX, 2.9.4 "The while Loop"; bash 5.2 and dash 0.5.12: `pg_isready -h
/// db | while read -r l; do echo "$l"; done` exits 0 with the database down).
pub(super) fn harmless_read_loop(k: Node<'_>, walk: &Walk<'_>, funcs: &Funcs) -> bool {
    if k.kind_name() != "while_statement" {
        return false;
    }
    let (Some(cond), Some(body)) = (k.child_by_field("condition"), k.child_by_field("body")) else {
        return false;
    };
    let cond = match cond.kind_name() {
        "command" => cond,
        _ => return false,
    };
    let read = cond.child_by_field("name").is_some_and(|m| text(m, walk) == "read");
    let mut c = cond.walk();
    let plain = cond.named_children(&mut c).all(|a| {
        matches!(a.kind_name(), "command_name" | "word")
            || (a.kind_name() == "variable_assignment"
                && matches!(text(a, walk), "IFS=" | "IFS=''" | "IFS=\"\""))
    }) && !text(cond, walk).contains(['$', '`']);
    let mut c = body.walk();
    let statements: Vec<Node<'_>> = body.named_children(&mut c).filter(|s| is_statement(*s)).collect();
    read && plain && !statements.is_empty() && statements.iter().all(|s| harmless(*s, walk, funcs))
}

/// A reason the walk gives (`discarded`).
pub(super) const CONSTANT_ARGUMENT: &str =
    "its output, always empty (`-q`, `>/dev/null`), is an argument of a command whose status is its own";
/// A reason the walk gives (`discarded`).
pub(super) const CASE_SELECTS: &str =
    "it only chooses which item of a `case` runs, and no item it can choose fails by itself";
/// A reason the walk gives (`discarded`): a check in a `case` pattern (`case ok in $(check && echo
/// ok))`). Which item runs depends on what the check prints in an outage, which is a guess, so
/// never a denial (s16 fresh-user pass: `case ok in $(check >/dev/null || echo down)) exit 1;;
/// esac` exits 0 / 0 in bash and dash, and was denied).
pub(super) const CASE_PATTERN: &str =
    "it only prints a `case` pattern, and whether its output in an outage matches is not known";
/// A reason the walk gives (`discarded`).
pub(super) const LAST_ROUND: &str = "its loop's status is its last round's, whose host is this Pod";

/// Whether errexit, ending the command substitution `sub` at `at` (one of its statements, not
/// its last), skips only statements that are [`harmless`]: they write no file and change nothing
/// later, so only the substitution's output and status differ, and each is judged where it goes
/// (`echo "$(check; echo x)"`: bash 5.2 and dash 0.5.12 exit 0 with the database down, `set -e`
/// or not). (Its output then depends on the check: a [`constant_argument`] holds one statement.)
pub(super) fn errexit_skips_only_output(at: Node<'_>, sub: Node<'_>, walk: &Walk<'_>, funcs: &Funcs) -> bool {
    super::siblings_after(at, sub).filter(|s| is_statement(*s)).all(|s| harmless(s, walk, funcs))
}

/// Whether `at`, the one statement of the command substitution `parent`, is a client that prints a
/// status line up or down (its row's `status_line_quiet`: pg_isready) run without its quiet flag
/// (`-q`, in a group of short flags too, or a `--q...` long option) or a redirection: its output is
/// never empty, up or down.
fn always_prints(at: Node<'_>, parent: Node<'_>, walk: &Walk<'_>) -> bool {
    if parent.kind_name() != "command_substitution" || at.kind_name() != "command" {
        return false;
    }
    let mut c = parent.walk();
    if parent.named_children(&mut c).filter(|s| is_statement(*s)).count() != 1 {
        return false;
    }
    // (The checks that need no client row first: an expansion or a redirection is cheaper to
    // find than a program among every family's rows.)
    let mut c = at.walk();
    if at.children_by_field("argument", &mut c).any(|a| text(a, walk).contains(['$', '`', '>', '<']))
        || at.children_by_field("redirect", &mut c).next().is_some()
    {
        return false;
    }
    prints_status_line(at, walk)
}

/// Whether the simple command `at` runs a client whose row says it prints a status line on
/// standard output up or down (`status_line_quiet`: pg_isready, "db:5432 - accepting connections"
/// or "db:5432 - no response"; PostgreSQL docs, pg_isready) without its quiet flag (`-q`, in a
/// group of short flags too, or a `--q...` long option), its arguments written out (no expansion
/// or substitution, which could hold the flag). Its redirections are not looked at.
pub(super) fn prints_status_line(at: Node<'_>, walk: &Walk<'_>) -> bool {
    if at.kind_name() != "command" {
        return false;
    }
    let Some(program) = at.child_by_field("name").map(|m| text(m, walk)) else {
        return false;
    };
    let program = program.rsplit('/').next().unwrap_or(program);
    let mut c = at.walk();
    if at.children_by_field("argument", &mut c).any(|a| text(a, walk).contains(['$', '`'])) {
        return false;
    }
    let Some(quiet) = find_client(program, &[]).and_then(|c| c.status_line_quiet) else {
        return false;
    };
    at.children_by_field("argument", &mut c).all(|a| {
        let a = text(a, walk);
        !(a.starts_with("--q") || a.starts_with('-') && !a.starts_with("--") && a.contains(quiet))
    })
}

/// Whether `k`, a mention of a variable, only tests whether its value is empty: `[ -n "$V" ]`,
/// `[ -z "$V" ]`, `[ "$V" ]`, `test -n "$V"`, `test -z "$V"` (quoted), or the same in `[[ ]]`,
/// each the test's only operand ([`emptiness_test_of`]).
fn emptiness_test(k: Node<'_>, walk: &Walk<'_>) -> bool {
    let Some(exp) = k.parent().filter(|e| matches!(e.kind_name(), "simple_expansion" | "expansion")) else {
        return false;
    };
    let var = text(k, walk);
    super::texts::is_expansion_of(text(exp, walk), var)
        && emptiness_test_of(&operand(exp, walk), walk).is_some()
}

/// The reason [`substitution_tested_for_emptiness`] gives.
pub(super) const STATUS_LINE: &str =
    "its output is only tested for being empty, and it prints a status line up or down";

/// Whether the command substitution of `prints`, whose one statement always prints
/// ([`always_prints`]), is only tested for being empty (`[ -n "$(pg_isready -h db)" ]`: 0 / 0).
pub(super) fn substitution_tested_for_emptiness(prints: &Prints<'_>, walk: &Walk<'_>) -> bool {
    prints.get(walk) && emptiness_test_of(&operand(prints.sub, walk), walk).is_some()
}

/// [`always_prints`] of a command substitution and its statement, made when first asked: the
/// walk asks it up to three times for the same pair (`value_reaches_no_status` twice, and
/// [`substitution_tested_for_emptiness`]), each a few cursor walks.
pub(super) struct Prints<'t> {
    /// The statement in the substitution (the check).
    at: Node<'t>,
    /// The command substitution.
    sub: Node<'t>,
    known: std::cell::OnceCell<bool>,
}

impl<'t> Prints<'t> {
    /// For the statement `at` of the command substitution `sub`.
    pub(super) fn new(at: Node<'t>, sub: Node<'t>) -> Self {
        Prints { at, sub, known: std::cell::OnceCell::new() }
    }

    /// [`always_prints`] of the pair.
    fn get(&self, walk: &Walk<'_>) -> bool {
        *self.known.get_or_init(|| always_prints(self.at, self.sub, walk))
    }
}

/// The reason [`never_empty_tested`] gives.
pub(super) const NEVER_EMPTY: &str =
    "its output is only tested for being empty, beside literal text that is never empty";

/// The emptiness test ([`emptiness_test_of`]) of the word holding the command substitution `sub`
/// beside literal text ([`Operand::literal`]): the word is never empty whatever the check writes,
/// so the test's status is the same up or down (`[[ -n $(redis-cli -h cache ping 2>&1)xy ]]`,
/// `[ -n "$(redis-cli -h cache ping)x" ]`: bash 5.2 and dash 0.5.12 exit 0 / 0; s18).
pub(super) fn never_empty_tested<'t>(sub: Node<'t>, walk: &Walk<'_>) -> Option<Node<'t>> {
    let word = operand(sub, walk);
    if word.literal { emptiness_test_of(&word, walk) } else { None }
}

/// The word a test reads where an expansion or a command substitution `exp` stands: `exp`
/// itself, the double-quoted string around it, or the concatenation joining that to other parts
/// (`"$(check)"x`).
pub(super) struct Operand<'t> {
    /// The word's node.
    pub(super) node: Node<'t>,
    /// Whether the word is one field whatever its expansions hold: each is inside double quotes,
    /// and no unquoted part holds a glob character (POSIX, 2.6.5 "Field Splitting" and 2.6.6
    /// "Pathname Expansion" apply to unquoted parts only).
    pub(super) one_field: bool,
    /// Whether it holds literal text outside every expansion (`"$(check)x"`, `x"$(check)"`,
    /// `$(check)'x'`): its value is then never empty. (Not `$'...'`: `$'\0'` is empty in bash.)
    pub(super) literal: bool,
}

/// The [`Operand`] where `exp` (an expansion or a command substitution) stands.
pub(super) fn operand<'t>(exp: Node<'t>, walk: &Walk<'_>) -> Operand<'t> {
    let mut node = exp;
    if let Some(s) = node.parent().filter(|s| s.kind_name() == "string") {
        node = s;
    }
    if let Some(c) = node.parent().filter(|c| c.kind_name() == "concatenation") {
        node = c;
    }
    // (A backslash-newline is removed before anything else: `"$(check)\<newline>"` adds nothing.)
    let literal_text = |n: Node<'_>| !text(n, walk).replace("\\\n", "").is_empty();
    let (mut one_field, mut literal) = (true, false);
    let mut part = |p: Node<'_>| match p.kind_name() {
        "string" => {
            let mut c = p.walk();
            literal |= p.named_children(&mut c).any(|k| k.kind_name() == "string_content" && literal_text(k));
        }
        "raw_string" => literal |= text(p, walk).len() > 2,
        "word" => {
            literal |= literal_text(p);
            one_field &= !text(p, walk).contains(['*', '?', '[']);
        }
        _ => one_field = false,
    };
    if node.kind_name() == "concatenation" {
        let mut c = node.walk();
        node.named_children(&mut c).for_each(&mut part);
    } else {
        part(node);
    }
    Operand { node, one_field, literal }
}

/// The test whose only operand is the word `w`, when it asks only whether that word is empty:
/// `[ -n W ]`, `[ -z W ]`, `[ W ]`, `test -n W`, `test -z W`, `test W` with `W` one field
/// ([`Operand::one_field`]), or the same in `[[ ]]` (no field splitting or pathname expansion
/// there: bash manual, "Conditional Constructs"). Unquoted in `[`, a value of several words is
/// an error, status 2 (`test -n a b`).
pub(super) fn emptiness_test_of<'t>(w: &Operand<'t>, walk: &Walk<'_>) -> Option<Node<'t>> {
    let only_child = |p: Node<'_>, child: Node<'_>| {
        let mut c = p.walk();
        p.named_children(&mut c).map(|n| n.id()).eq([child.id()])
    };
    let emptiness_operator =
        |n: Node<'_>| n.kind_name() == "test_operator" && matches!(text(n, walk), "-n" | "-z");
    let p = w.node.parent()?;
    let test = match p.kind_name() {
        "unary_expression" => {
            let op = p.child_by_field("operator");
            if !op.is_some_and(emptiness_operator) || p.named_child(1) != Some(w.node) {
                return None;
            }
            p.parent()?
        }
        "test_command" if only_child(p, w.node) => p,
        "command" => {
            let mut c = p.walk();
            let args: Vec<Node<'_>> = p.children_by_field("argument", &mut c).collect();
            let operand_only = match args.as_slice() {
                [v] => *v == w.node,
                [op, v] => matches!(text(*op, walk), "-n" | "-z") && *v == w.node,
                _ => false,
            };
            let test = p.child_by_field("name").is_some_and(|m| text(m, walk) == "test");
            return (w.one_field && test && operand_only).then_some(p);
        }
        _ => return None,
    };
    let unary_or_operand = if p.kind_name() == "unary_expression" { p } else { w.node };
    (test.kind_name() == "test_command"
        && only_child(test, unary_or_operand)
        && (w.one_field || text(test, walk).starts_with("[[")))
    .then_some(test)
}

/// Whether the value of the variable assigned at `name` from the substitution of `prints` (whose
/// one statement is the check) reaches no status: it is only written out ([`only_echoed`]), or the
/// check always prints ([`always_prints`]) and every other mention only tests whether the value is empty
/// (`out=$(pg_isready -h db); [ -n "$out" ]` exits 0 with the database up and down: break-it pass,
/// s17, real pg_isready 15).
pub(super) fn value_reaches_no_status(name: Node<'_>, prints: &Prints<'_>, walk: &Walk<'_>) -> bool {
    if super::harmless::only_echoed(name, walk) {
        return true;
    }
    if !prints.get(walk) || may_be_read_elsewhere(name, walk) {
        return false;
    }
    super::tree::every_mention(name, walk, |k| emptiness_test(k, walk))
}
