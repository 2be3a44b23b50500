//! What may follow or surround a check without making its failure the script's: whether a
//! command (or the rest of the script) is harmless, running only output and clients, writing no
//! file named again, changing no shell state (`harmless`, `harmless_after`, `plain_commands`,
//! `harmless_text`); whether a `trap` only prints or removes files (`traps::harmless_traps`); whether a
//! status read (`$?`, `ret=$?`) or a variable assigned from the check only reaches output
//! (`next_reads_status`, `only_echoed`, `unread_assignment`); whether an `if`'s branches do the
//! same (`selection_is_harmless`, `blind::same_writes`); and whether a function's body leaves state
//! its caller reads (`leaves_state`). Anything not understood is not harmless.

use crate::engine::exec::kinds::KindName;
use tree_sitter::Node;

use super::super::flow::mentions;
use super::super::shell::Walk;
use super::super::{clients, context};
use super::constructs::{assigning_expansion, env_like, named_by_count};
use super::data::{CHANGES_STATE, ENDS_OR_UNFOLLOWED, NOT_HARMLESS, PLAIN};
use super::path_vars::named_elsewhere_in;
pub(super) use super::path_vars::{named_directories, named_elsewhere, naming_words};
use super::{Funcs, Rules, is_statement, leaves, output_used_above, siblings_after, text, work, work_text};

/// `src` with the text inside each double-quoted string that holds no command substitution
/// (`$(`, a backquote) replaced by blanks: no word in it runs as a command.
pub(super) fn blank_plain_strings(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut chars = src.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        out.push(c);
        match c {
            '\\' => {
                if let Some((_, e)) = chars.next() {
                    out.push(e);
                }
            }
            '\'' => {
                for (_, e) in chars.by_ref() {
                    out.push(e);
                    if e == '\'' {
                        break;
                    }
                }
            }
            '"' => {
                // The closing quote: the next `"` not escaped.
                let body = &src[i + 1..];
                let mut end = None;
                let mut escaped = false;
                for (j, e) in body.char_indices() {
                    match e {
                        _ if escaped => escaped = false,
                        '\\' => escaped = true,
                        '"' => {
                            end = Some(j);
                            break;
                        }
                        _ => {}
                    }
                }
                let Some(end) = end else {
                    continue;
                };
                let inner = &body[..end];
                if inner.contains("$(") || inner.contains('`') {
                    continue;
                }
                out.extend(inner.chars().map(|_| ' '));
                out.push('"');
                while chars.peek().is_some_and(|(k, _)| *k <= i + 1 + end) {
                    chars.next();
                }
            }
            _ => {}
        }
    }
    out
}

/// `$?`, `"$?"` or `${?}`: the status of the command before.
pub(super) fn last_status_word(w: &str) -> bool {
    matches!(w.trim_matches('"'), "$?" | "${?}")
}

/// Whether text reads the status of the command before it: `$?`, `${?`, a bare `exit` or
/// `return`, or one of an unquoted variable (`exit $rc`, `return ${rc}`), bare when the variable
/// is empty or unset (bash 5.2 and dash 0.5.12: `false; exit $rc` exits 1; `exit "$rc"` exits 2;
/// `return` as `exit`, from a function's body).
pub(in crate::engine::exec) fn reads_status_text(t: &str) -> bool {
    if t.contains("$?") || t.contains("${?") {
        return true;
    }
    // (A bare `exit` is a part `exit`: a text without the word has none, and is not split.)
    if !t.contains("exit") && !t.contains("return") {
        return false;
    }
    let parts: Vec<&str> = t
        .split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '{' | '}' | '`'))
        .collect();
    parts.iter().enumerate().any(|(i, w)| {
        matches!(*w, "exit" | "return")
            && parts.get(i + 1).is_none_or(|a| {
                a.is_empty() || a.starts_with('$') && !never_empty(a, parts.get(i + 2).copied().unwrap_or(""))
            })
    })
}

/// Whether the expansion split as `first` and `next` (`$` and `RC:-0` of `${RC:-0}`) has a
/// literal numeric default (`${RC:-0}`, `${RC-0}`), so is never empty (`texts::literal_defaults`).
fn never_empty(first: &str, next: &str) -> bool {
    first == "$"
        && next.split_once('-').is_some_and(|(_, d)| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether the status of `cond` (an `if`/`elif` condition) choosing which part of `construct`
/// runs cannot fail the script by itself: every other part is [`harmless`], and when one of them
/// leaves the script (`exit 0`), so is every command after the `if`.
pub(super) fn selection_is_harmless(
    cond: Node<'_>,
    construct: Node<'_>,
    walk: &Walk<'_>,
    functions: &Funcs,
) -> bool {
    let parts = other_parts(cond, construct);
    parts.iter().all(|p| harmless(*p, walk, functions))
        && (!parts.iter().any(|p| leaves(*p, walk)) || harmless_after(construct, walk, functions))
}

/// The statements of the `if` `construct` (its own and its `elif`/`else` clauses', conditions
/// and bodies) but the condition statement `cond` and any that holds it.
pub(super) fn other_parts<'t>(cond: Node<'t>, construct: Node<'t>) -> Vec<Node<'t>> {
    let mut c = construct.walk();
    construct
        .children(&mut c)
        .flat_map(|k| {
            if matches!(k.kind_name(), "elif_clause" | "else_clause") {
                let mut c = k.walk();
                k.children(&mut c).collect::<Vec<_>>()
            } else {
                vec![k]
            }
        })
        .filter(|k| {
            is_statement(*k)
                && *k != cond
                && !(k.start_byte() <= cond.start_byte() && cond.end_byte() <= k.end_byte())
        })
        .collect()
}

/// Whether every command after `n` in the script (to its end) is [`harmless`].
pub(super) fn harmless_after(n: Node<'_>, walk: &Walk<'_>, functions: &Funcs) -> bool {
    let mut root = n;
    while let Some(p) = root.parent() {
        root = p;
    }
    let after = walk.src.get(n.end_byte()..).unwrap_or("");
    work_text(walk, after);
    harmless_text(after, &functions.risky) && plain_commands(root, walk, n.end_byte(), &functions.ok)
}

/// Whether `n`, run or not, cannot by itself fail the script or change what runs after it:
/// no `exit` but `exit 0`, no `return`, `false`, test (`[`, `[[`, `test`, `(( ))`), `!`, no
/// assignment or builtin that changes the shell's state, no file written, no function defined.
pub(super) fn harmless(n: Node<'_>, walk: &Walk<'_>, functions: &Funcs) -> bool {
    work_text(walk, text(n, walk));
    harmless_text(text(n, walk), &functions.risky) && plain_commands(n, walk, n.start_byte(), &functions.ok)
}

/// Whether every simple command in `n` that starts at or after byte `from` runs a [`PLAIN`]
/// program or a client. Each node looked at costs a unit of work (`status::work`): an `if`
/// nested 300 deep has each condition's walk look at every branch under it (s12, issue #9).
pub(super) fn plain_commands(n: Node<'_>, walk: &Walk<'_>, from: usize, ok: &[String]) -> bool {
    let mut visited = 0usize;
    let plain = plain_commands_counted(n, walk, from, ok, &mut visited);
    work(walk, visited);
    plain
}

/// [`plain_commands`], counting the nodes it looks at in `visited`.
fn plain_commands_counted(
    n: Node<'_>,
    walk: &Walk<'_>,
    from: usize,
    ok: &[String],
    visited: &mut usize,
) -> bool {
    let mut cursor = n.walk();
    loop {
        *visited += 1;
        let k = cursor.node();
        // `$(date)`: its output is only written, its status lost ([`harmless_substitution`]).
        let skip = matches!(k.kind_name(), "command_substitution") && harmless_substitution(text(k, walk));
        if k.kind_name() == "command" && k.start_byte() >= from && !plain_command(k, walk, ok) {
            return false;
        }
        if !skip && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.node() == n {
                return true;
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return true;
            }
        }
    }
}

/// Whether the simple command `k` runs a [`PLAIN`] program, a client or one of the functions `ok`.
pub(super) fn plain_command(k: Node<'_>, walk: &Walk<'_>, ok: &[String]) -> bool {
    let Some(name) = k.child_by_field("name").map(|m| text(m, walk)) else {
        return false;
    };
    let program = context::basename(name);
    let mut c = k.walk();
    let args: Vec<String> =
        k.children_by_field("argument", &mut c).map(|a| text(a, walk).to_string()).collect();
    let client = clients::find_client(program, &args).is_some()
        || program.strip_suffix(".exe").is_some_and(|p| clients::find_client(p, &args).is_some());
    (PLAIN.contains(&program)
        || client
        || ok.iter().any(|f| f == name)
        || prints_the_date(program, &args)
        || true_expr(program, &args))
        && !name.contains(['$', '`', '"', '\''])
}

/// `expr N` or `expr N OP M` of decimal constants (OP `+ - * / %`) whose value is not 0: it prints
/// the value and exits 0 (POSIX `expr`, "Exit Status": 0 "if the expression evaluates to neither
/// null nor zero"), whatever ran before, like `true` (s26: `C || expr 1 > /dev/null` exits 0 / 0
/// in bash 5.2 and dash 0.5.12 with coreutils 9.1 `expr`; `expr 0` exits 1, `expr 1 / 0` 2).
fn true_expr(program: &str, args: &[String]) -> bool {
    let constant = |a: &str| a.bytes().all(|b| b.is_ascii_digit()) && !a.is_empty();
    program == "expr"
        && match args {
            [n] => constant(n.as_str()),
            [a, op, b] => {
                constant(a.as_str())
                    && matches!(op.as_str(), "+" | "-" | "*" | "/" | "%")
                    && constant(b.as_str())
            }
            _ => false,
        }
        && crate::engine::exec::script::constant(&args.join(" ")).is_some_and(|v| v != 0)
}

/// `date` that only prints the time (POSIX `date [-u] [+format]`; GNU's `-R`, `-I`/`--iso-8601`,
/// `--rfc-*`, `--utc`): it changes nothing, like `echo`. Not `date -s`/`--set` (sets the clock) nor
/// `-d`/`-f` (may fail on their input). s24's new user: `test -f /tmp/healthy || exit 1;
/// pg_isready -h db || date >> /tmp/db-down; exit 0` exits 0 / 0 in bash 5.2 and dash 0.5.12.
fn prints_the_date(program: &str, args: &[String]) -> bool {
    program == "date"
        && args.iter().all(|a| {
            a.starts_with('+')
                || matches!(a.as_str(), "-u" | "-R" | "--utc" | "--universal" | "--rfc-email")
                || a.starts_with("-I")
                || a.starts_with("--iso-8601")
                || a.starts_with("--rfc-3339")
        })
}

/// Whether `n` is [`harmless`] but for writing files or to a closed stdout (`>&-`): it changes
/// nothing the script reads later, but its status can be a failure.
/// So is a `touch` or `rm` of files the script reads nowhere (`unread::writes_only_unread_files`).
/// So is a call of a function whose body does no more (`Funcs::writers`, s26).
pub(super) fn may_only_fail(n: Node<'_>, walk: &Walk<'_>, functions: &Funcs) -> bool {
    work_text(walk, text(n, walk));
    let (risky, ok) = if functions.writers.is_empty() {
        (functions.risky.clone(), functions.ok.clone())
    } else {
        let risky: Vec<String> =
            functions.risky.iter().filter(|f| !functions.writers.contains(f)).cloned().collect();
        let ok: Vec<String> = functions.ok.iter().chain(functions.writers.iter()).cloned().collect();
        (std::rc::Rc::new(risky), std::rc::Rc::new(ok))
    };
    (harmless_writing(text(n, walk), &risky, true) && plain_commands(n, walk, n.start_byte(), &ok))
        || super::unread::writes_only_unread_files(n, walk, functions)
        || kills_a_child(n, walk)
}

/// Whether `n` is one `kill` of background children of the script only
/// (`trap_values::kills_only_children`: `$!`, a job `%1`, a variable only ever assigned `$!`), its
/// error output dropped or not: it signals nothing of the script's own shell, so it changes
/// nothing the script reads later, and its own status (1 when the child is gone) is all it gives
/// (s27: `sleep 100 & C || kill %1; echo ok` and `sleep 100 & p=$!; C || kill $p; echo ok` exit
/// 0 / 0 in bash 5.2.15 and dash 0.5.12 with the redis-cli stub up / down, and were denied).
fn kills_a_child(n: Node<'_>, walk: &Walk<'_>) -> bool {
    let t = text(n, walk);
    matches!(n.kind_name(), "command" | "redirected_statement")
        && t.starts_with("kill ")
        && !t.contains(['<', '|', '&', ';', '\n', '`', '(', '\''])
        && t.split_whitespace().filter(|w| w.contains('>')).all(|w| w == "2>/dev/null")
        && super::trap_values::kills_only_children(walk.src, t)
}

/// [`harmless`] on text.
pub(super) fn harmless_text(t: &str, functions: &[String]) -> bool {
    harmless_writing(t, functions, false)
}

/// [`harmless_text`], or with `writes`, also when it writes files or to a closed stdout.
fn harmless_writing(t: &str, functions: &[String], writes: bool) -> bool {
    let t = &without_harmless_substitutions(t);
    // (One split of the text, each word looked up among the names.)
    let calls = call_words(t).any(|w| functions.iter().any(|f| f.as_bytes() == w));
    !calls && harmless_writing_but_calls(t, writes)
}

/// The words of `t` (without its harmless substitutions) that [`harmless_text`] looks up among
/// the functions' names. A path's `.` and `/` join its parts: `/tmp/h.log` calls no `log()` (s26:
/// `log() { echo "$*" >> /tmp/h.log; }` was read as calling itself, so never harmless to call).
pub(super) fn call_words(t: &str) -> impl Iterator<Item = &[u8]> {
    t.as_bytes().split(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/')))
}

/// [`harmless_writing`] of `t` (without its harmless substitutions) but for the functions it calls.
fn harmless_writing_but_calls(t: &str, writes: bool) -> bool {
    // (A `[` or `!` in a double-quoted string without a substitution tests nothing: `echo
    // "$(date +%s) [health] $*"`, its harmless `$(date ...)` taken out, s26.)
    if assigning_expansion(t)
        || mentions(t, CHANGES_STATE)
        || mentions(t, NOT_HARMLESS)
        || blank_plain_strings(t).contains(['[', '!', '`'])
        || t.contains("((")
        || t.contains("$(")
    {
        return false;
    }
    let words: Vec<&str> = t
        .split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '{' | '}' | '(' | ')'))
        .collect();
    // `printf -v NAME` assigns (bash): only `printf FORMAT ARGS` writes output alone.
    if words.windows(2).any(|w| w[0] == "printf" && w[1].starts_with('-')) {
        return false;
    }
    // `exit 0` only.
    if words.windows(2).any(|w| w[0] == "exit" && w[1] != "0") || words.last() == Some(&"exit") {
        return false;
    }
    // An assignment (`NAME=...`), a function definition (`f()`), a file written.
    let assigns = words.iter().any(|w| {
        w.split_once('=').is_some_and(|(name, _)| {
            let name = name.trim_end_matches('+');
            !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
    });
    // `echo x >&-` fails (bash: "write error: Bad file descriptor", dash: "I/O error").
    let closes_stdout = t.split_whitespace().any(|w| {
        w.trim_end_matches([';', ')'])
            .split_once(">&-")
            .is_some_and(|(fd, rest)| rest.is_empty() && matches!(fd, "" | "1"))
    });
    !assigns && !t.contains("()") && (writes || (file_targets(t).is_empty() && !closes_stdout))
}

/// The files a command's text writes: redirections (`>`, `>>`, `&>`, not to `/dev/null` or a file
/// descriptor) and the output options of `curl -o`, `wget -O`, `psql -o`, `--output`.
pub(in crate::engine::exec) fn file_targets(t: &str) -> Vec<String> {
    let mut out = Vec::new();
    let words: Vec<&str> = t.split_whitespace().collect();
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        let sink = |target: &str| {
            !(target == "/dev/null"
                || target.starts_with('&')
                || target == "/dev/stderr"
                || target == "/dev/stdout")
        };
        if let Some(pos) = w.find('>') {
            // A control operator ends the word (`>&2;`, `>/dev/null)`): not part of the target.
            let w = w.trim_end_matches([';', ')']);
            let w = if w.len() > pos { w } else { &words[i][..pos + 1] };
            let rest = w[pos..].trim_start_matches(['>', '|']);
            let rest = rest
                .strip_prefix('&')
                .map_or(rest, |r| if r.bytes().all(|b| b.is_ascii_digit() || b == b'-') { "&" } else { r });
            let target = if rest.is_empty() { words.get(i + 1).copied().unwrap_or("") } else { rest };
            if rest.is_empty() {
                i += 1;
            }
            if sink(target) {
                out.push(target.to_string());
            }
        } else if matches!(w, "-o" | "-O" | "--output" | "--output-document" | "--log-file") {
            let target = words.get(i + 1).copied().unwrap_or("");
            if sink(target) {
                out.push(target.to_string());
            }
            i += 1;
        } else if let Some(target) =
            w.strip_prefix("--output=").or_else(|| w.strip_prefix("--output-document="))
            && sink(target)
        {
            out.push(target.to_string());
        } else if w == "tee" {
            out.extend(
                words[i + 1..]
                    .iter()
                    .take_while(|a| !a.contains(['|', ';']))
                    .filter(|a| !a.starts_with('-'))
                    .map(|a| a.to_string()),
            );
        }
        i += 1;
    }
    out
}

/// Whether `n` writes a file that the script names elsewhere, or one whose name the script
/// computes (`> "$F"`): its output may be read later (`remote > f; grep x f`).
pub(super) fn writes_a_named_file(n: Node<'_>, walk: &Walk<'_>) -> bool {
    let own = text(n, walk);
    // (A name through a variable is counted by its path, `path_vars`: the words of `$D/db` are
    // not the file's.)
    // (Written again elsewhere, `|| echo down >> F`: the count would take that write for a read;
    // `named_elsewhere_in` reads redirections as writes, s27.)
    file_targets(own).iter().any(|f| {
        (!f.contains('$')
            && named_by_count(f, own, walk)
            && !super::path_vars::written_elsewhere(f, walk.src, n.byte_range()))
            || named_elsewhere_in(f, walk.src, &[(n.start_byte(), n.end_byte())])
    })
}

/// Whether the statement after `at` reads `at`'s status (`$?`, `${?}`, a bare `exit`, anywhere
/// in it), unless it is `NAME=$?` and `NAME` is then only written out ([`only_echoed`]: bash 5.2
/// and dash 0.5.12 exit 0 on `pg_isready -h db; ret=$?; echo "db $ret"; curl ...` with the
/// database down).
pub(super) fn next_reads_status(at: Node<'_>, parent: Node<'_>, walk: &Walk<'_>, rules: &Rules) -> bool {
    let next = siblings_after(at, parent).find(|s| is_statement(*s));
    let Some(next) = next.filter(|s| !matches!(s.kind_name(), "elif_clause" | "else_clause")) else {
        return false;
    };
    if !reads_status_text(text(next, walk))
        || status_only_written(next, walk) && !super::functions::output_read_by_caller(rules)
        || super::calls::call_ignores_status(next, walk, &rules.known)
    {
        return false;
    }
    // (`rc=$? <<EOF` too: a here-document without a substitution is no read.)
    let followed = !rules.called
        && super::tree::assignment_under_heredocs(next, walk, &rules.functions).is_some_and(|a| {
            a.child_by_field("value").is_some_and(|v| last_status_word(text(v, walk)))
                && a.child_by_field("name").is_some_and(|name| only_echoed(name, walk))
        });
    !followed
}

/// Whether `next` only writes `$?` out: `echo "exit code $?"` (or `printf` without `-v`,
/// `logger`), with no substitution, no file written and output nothing reads (bash
/// 5.2 and dash 0.5.12 exit 0 on `pg_isready -h db; echo "code $?"; curl ...` with the database
/// down, as on `r=$?; echo "$r"`; break9 B3).
fn status_only_written(next: Node<'_>, walk: &Walk<'_>) -> bool {
    let cmd = match next.kind_name() {
        "command" => next,
        "redirected_statement" => match next.child_by_field("body") {
            Some(b) if b.kind_name() == "command" => b,
            _ => return false,
        },
        _ => return false,
    };
    let t = text(next, walk);
    let name = cmd.child_by_field("name").map(|m| text(m, walk));
    let mut c = cmd.walk();
    let first = cmd.children_by_field("argument", &mut c).next().map(|a| text(a, walk));
    let printf_option = name == Some("printf") && first.is_some_and(|a| a.starts_with('-'));
    matches!(name, Some("echo" | "printf" | "logger"))
        && !printf_option
        && !t.contains("$(")
        && !t.contains('`')
        && file_targets(t).is_empty()
        && !t.contains(">&-")
        && !output_used_above(next, walk)
}

/// Whether the variable assigned at `name` may be read where the script does not name it: it has
/// no name, or the script exports variables or prints them (`export`, `readonly`, `env`, `set
/// -a`'s `allexport`, ...), declares them other than plainly ([`plain_declarations_only`]:
/// `local -n ref=x`, `declare -x`, `declare -p`) or reads one indirectly (`${!x}`).
pub(super) fn may_be_read_elsewhere(name: Node<'_>, walk: &Walk<'_>) -> bool {
    text(name, walk).is_empty()
        || walk.src.contains("${!")
        || mentions(walk.src, &["export", "readonly", "printenv", "env", "allexport"])
        || !plain_declarations_only(walk.src)
}

/// Whether each word `local`, `declare` or `typeset` of `src` (as [`mentions`] finds words, in
/// comments and printed strings blanked) begins a command (after a separator: `;`, newline, `&`,
/// `|`, a bracket, a backquote, or `{`/`!`/`then`/`do`...) that gives one or more operands and no
/// option (no word starting with `-` or `+`): `local out`, `local a b=1`, `local out=$(C)`. Such a
/// declaration gives its names a scope and a value and reads, exports and prints none (bash
/// manual, "Bash Builtins"); an option may (`-n` a name reference reading another variable, `-x`
/// an export, `-p` or no operand a listing, `-i` an arithmetic evaluation). s27: `check_redis(){
/// local out; out=$(C 2>&1) || return 0; [ "$out" = PONG ] || echo unexpected >&2; }; check_redis;
/// L` exits 0 / 0 in bash 5.2 and dash 0.5.12 and was denied: any `local` made the variable one
/// that "may be read elsewhere".
fn plain_declarations_only(src: &str) -> bool {
    const KEYWORDS: [&str; 3] = ["local", "declare", "typeset"];
    if !mentions(src, &KEYWORDS) {
        return true;
    }
    let code = super::super::flow::code_view(src);
    // (Every mention, as `mentions` splits words; each must be a plain declaration found below.)
    let mentioned = code
        .as_bytes()
        .split(|b| !(b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-'))
        .filter(|w| KEYWORDS.iter().any(|k| k.as_bytes() == *w))
        .count();
    let before = ["if", "then", "do", "else", "elif", "while", "until", "!"];
    let plain = code
        .split([';', '\n', '&', '|', '{', '(', ')', '}', '`'])
        .filter(|segment| {
            let mut words = segment.split_whitespace().skip_while(|w| before.contains(w));
            words.next().is_some_and(|w| KEYWORDS.contains(&w)) && {
                let operands: Vec<&str> = words.collect();
                !operands.is_empty() && operands.iter().all(|w| !w.starts_with(['-', '+']))
            }
        })
        .count();
    plain == mentioned
}

/// Whether the variable whose assignment names it at `name` is read only by `echo`, `printf`
/// (not `-v`) or `logger` arguments, as `$NAME` or `${NAME}`, whose output nothing reads (no
/// pipeline, substitution or file named again), and otherwise only assigned again: its value
/// reaches no status.
pub(super) fn only_echoed(name: Node<'_>, walk: &Walk<'_>) -> bool {
    !may_be_read_elsewhere(name, walk) && reads_only_output(name, walk)
}

/// Whether every other mention of the variable assigned at `name` is [`reads_only_as_output`]
/// (and each is a variable's name in the tree: none hides in a word the parser reads as text).
pub(super) fn reads_only_output(name: Node<'_>, walk: &Walk<'_>) -> bool {
    super::tree::every_mention(name, walk, |k| reads_only_as_output(k, walk))
}

/// Whether the `variable_name` `k` is `$NAME`/`${NAME}` (or `${NAME:-text}`, `${NAME:+text}` with
/// literal text: `texts::is_literal_default_of`) in an argument of an `echo`, `printf` or
/// `logger` command whose output nothing reads, or the name of another plain assignment.
pub(super) fn reads_only_as_output(k: Node<'_>, walk: &Walk<'_>) -> bool {
    let Some(exp) = k.parent() else {
        return false;
    };
    if exp.kind_name() == "variable_assignment" {
        return super::unread::plain_assignment(exp, k, walk);
    }
    // (`local out`: a name declared, not read; s27.)
    if exp.kind_name() == "declaration_command" {
        return plain_declaration(exp, walk);
    }
    let var = text(k, walk);
    if !(exp.kind_name() == "simple_expansion" || exp.kind_name() == "expansion")
        || !(super::texts::is_expansion_of(text(exp, walk), var)
            || super::texts::is_literal_default_of(text(exp, walk), var))
    {
        return false;
    }
    let mut up = exp;
    while let Some(p) = up.parent() {
        if !matches!(p.kind_name(), "string" | "concatenation") {
            break;
        }
        up = p;
    }
    let Some(cmd) = up.parent().filter(|c| c.kind_name() == "command") else {
        return false;
    };
    cmd.child_by_field("name") != Some(up) && super::calls::only_prints_arguments(cmd, walk)
}

/// Whether the `declaration_command` `decl` is `local`, `declare` or `typeset` of names and
/// assignments only, no option word: it reads none of its names ([`plain_declarations_only`]).
fn plain_declaration(decl: Node<'_>, walk: &Walk<'_>) -> bool {
    let keyword = text(decl, walk).split_whitespace().next().unwrap_or("");
    let mut c = decl.walk();
    matches!(keyword, "local" | "declare" | "typeset")
        && decl
            .named_children(&mut c)
            .all(|k| matches!(k.kind_name(), "variable_name" | "variable_assignment"))
}

/// `||`'s (or `&&`'s) right side `NAME=literal` (status 0), whose `NAME` the script only assigns (bash
/// 5.2 and dash 0.5.12 exit 0 on `pg_isready -h db || DB=down` with the database down; read
/// later, `[ "$DB" = down ] && exit 1`, the outcome flows on), or only writes out
/// ([`reads_only_output`]: `ok=0; redis-cli -h cache ping || ok=1; echo $ok > /tmp/dbstate;
/// test -d /` exits 0 / 0, s25). Not a name a program run after it
/// may read from its environment (the script exports nothing: no `export`, `set -a`; the
/// container's `env` does not declare it, and it has no `envFrom`).
pub(super) fn unread_assignment(right: Node<'_>, walk: &Walk<'_>, rules: &Rules) -> bool {
    if right.kind_name() != "variable_assignment" {
        return false;
    }
    let (Some(name), value) = (right.child_by_field("name"), right.child_by_field("value")) else {
        return false;
    };
    let var = text(name, walk);
    let env_like = env_like(var);
    let exports =
        mentions(walk.src, &["export", "declare", "typeset", "readonly", "local", "env", "allexport"])
            || walk
                .src
                .split_whitespace()
                .collect::<Vec<_>>()
                .windows(2)
                .any(|w| w[0] == "set" && w[1].starts_with(['-', '+']) && w[1].contains('a'));
    let words =
        walk.src.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|w| *w == var).count();
    let (declared, env_from) = &rules.container_env;
    !env_like
        && !env_from
        && !declared.iter().any(|d| d == var)
        && !exports
        && (words == assignments_of(var, walk.src)
            || reads_only_output(name, walk)
            || super::unread::read_only_by_unused_tests(name, walk, rules))
        && value.is_none_or(|v| !text(v, walk).contains(['$', '`', '(', '[', '*', '?', '~']))
}

/// How many times `src` assigns `var` at the start of a word (`var=...` after a blank, `;`, `&`,
/// `|`, `(`, `{`, `!` or at the start): a variable every mention of which is one is never read
/// (s24's new user: `state=down; pg_isready -h db && state=up; exit 0`, 0 / 0 in bash 5.2 and
/// dash 0.5.12, was denied because `state` was named twice).
pub(super) fn assignments_of(var: &str, src: &str) -> usize {
    src.match_indices(var)
        .filter(|(at, _)| {
            let before = src[..*at].chars().next_back();
            let after = &src[at + var.len()..];
            before.is_none_or(|c| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | '{' | '!'))
                && after.starts_with('=')
                && !after.starts_with("==")
        })
        .count()
}

/// A command substitution (`$(...)` or backquotes, as written) that runs one command that only
/// reads: `date` (not `-s`/`--set`), `hostname` with no argument but an option that prints,
/// `cat FILE...`, `uname`, `whoami`, `id`, `pwd`. Written out by `echo`/`printf`/`logger`, its
/// status is lost and it changes nothing (`pg_isready -h db || echo "down at $(date)"`: bash 5.2
/// and dash 0.5.12 exit 0 with the database down).
pub(super) fn harmless_substitution(t: &str) -> bool {
    let inner = t
        .strip_prefix("$(")
        .and_then(|r| r.strip_suffix(')'))
        .or_else(|| t.strip_prefix('`').and_then(|r| r.strip_suffix('`')));
    let Some(inner) = inner else {
        return false;
    };
    if inner.contains(['$', '`', '(', ')', ';', '&', '|', '<', '>', '\n', '\\', '"', '\'', '*', '?', '[']) {
        return false;
    }
    let words: Vec<&str> = inner.split_whitespace().collect();
    let Some((name, args)) = words.split_first() else {
        return false;
    };
    match *name {
        "date" => args.iter().all(|a| {
            a.starts_with('+')
                || matches!(*a, "-u" | "-R" | "--utc" | "--rfc-email")
                || a.starts_with("-I")
                || a.starts_with("--iso-8601")
        }),
        "hostname" => {
            args.iter().all(|a| matches!(*a, "-f" | "-i" | "-I" | "-s" | "-d" | "-A" | "--fqdn" | "--short"))
        }
        "cat" => !args.is_empty() && args.iter().all(|a| !a.starts_with('-')),
        "uname" | "id" => args.iter().all(|a| a.starts_with('-')),
        "whoami" | "pwd" => args.is_empty(),
        _ => false,
    }
}

/// `t` with each [`harmless_substitution`] replaced by a plain word.
pub(super) fn without_harmless_substitutions(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    let mut rest = t;
    loop {
        let dollar = rest.find("$(");
        let tick = rest.find('`');
        let (at, close) = match (dollar, tick) {
            (Some(d), Some(b)) if b < d => (b, rest[b + 1..].find('`').map(|e| b + 1 + e + 1)),
            (Some(d), _) => (d, rest[d..].find(')').map(|e| d + e + 1)),
            (None, Some(b)) => (b, rest[b + 1..].find('`').map(|e| b + 1 + e + 1)),
            (None, None) => break,
        };
        let Some(end) = close else {
            break;
        };
        out.push_str(&rest[..at]);
        if harmless_substitution(&rest[at..end]) {
            out.push_str("SUBST");
        } else {
            out.push_str(&rest[at..end]);
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Whether every command of a function body's text (`{ echo "$@" >&2; }`) runs a [`PLAIN`]
/// program: [`plain_commands`] on text, for a body defined outside the text being walked.
pub(super) fn plain_text_commands(body: &str) -> bool {
    let inner = body.trim().strip_prefix('{').and_then(|b| b.strip_suffix('}'));
    let Some(inner) = inner else {
        return false;
    };
    if inner.contains(['(', ')', '{', '}', '`', '\\']) {
        return false;
    }
    // (`>&2` duplicates a descriptor: its `&` ends no command, s25: `warn() { echo "$*" >&2; }`
    // was not plain, so `set -e; soft() { pg_isready -h db || warn x; }; soft` was denied, 0 / 0
    // in bash 5.2 and dash 0.5.12. `>&-` closes one, which `harmless_text` judges.)
    let inner = (0..10).fold(inner.to_string(), |t, d| t.replace(&format!(">&{d}"), &format!(">{d}")));
    inner
        .split([';', '\n', '&', '|'])
        .all(|segment| segment.split_whitespace().next().is_none_or(|w| PLAIN.contains(&w) && w != "exit"))
}

/// Whether a function's text (or a script's) can change what outlives the subshell it runs in:
/// a file written or changed ([`file_targets`], `rm`, `touch`, ...), a process signalled
/// (`kill`), or code the walk does not follow (`eval`, `source`, `.`). Its variables, options,
/// directory and `exit` do not (bash manual, "Command Execution Environment").
pub(in crate::engine::exec) fn leaves_lasting_state(body: &str) -> bool {
    mentions(body, &["touch", "rm", "mkdir", "mv", "cp", "tee", "ln", "kill", "eval", "source", "exec"])
        || body.split_whitespace().any(|w| w == ".")
        || !file_targets(body).is_empty()
}

/// Whether a function's text can end the script (`exit`, `exec`) or leave state its caller reads:
/// an assignment, a file written, a builtin that changes the shell (`read`, `export`, `set`, `cd`,
/// `printf -v`, ...), a file changed (`rm`, `touch`, ...).
pub(in crate::engine::exec) fn leaves_state(body: &str) -> bool {
    let words: Vec<&str> = body
        .split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '{' | '}' | '(' | ')' | '`'))
        .collect();
    let assigns = words.iter().any(|w| {
        w.split_once('=').is_some_and(|(name, _)| {
            let name = name.trim_end_matches('+');
            !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
    });
    assigns
        || assigning_expansion(body)
        || mentions(body, CHANGES_STATE)
        || mentions(body, ENDS_OR_UNFOLLOWED)
        || body.contains("printf -v")
        || words.contains(&".")
        || !file_targets(body).is_empty()
}
