//! What errexit (`set -e`) and pipefail (`set -o pipefail`) are at a command: from the shell's
//! options (a `#!` line's for a file executed directly), then each `set` the shell that runs the command has run before it
//! (bash manual, "The Set Builtin"; a `( )` subshell inherits them, a change in it does not
//! reach its parent: `option_on_at`, `set_facts`). Also what one scan of
//! a tree gives every command of it (`TreeFacts`): where a status is read, whether an `exec` is
//! only the script's last command (`exec_only_last`), and whether a function leaves state.

use crate::engine::exec::kinds::KindName;
use tree_sitter::Node;

use super::super::flow::mentions;
use super::super::shell::Walk;
use super::harmless::{leaves_state, reads_status_text};
use super::texts::reads_caller_status;
use super::{Rules, is_statement, text, work};

/// Whether the script turns errexit on: `set -e`/`set -eu`/`set -o errexit` where a command
/// starts (not in a comment, not another command's argument: `echo set -e`, `redis-cli set k
/// v`; `command set -e`, `\set -e` count), a command whose name is computed in a script with the
/// word `set` (`f=set; $f -e`). (A `#!` line with `-e` counts only for a file executed
/// directly: `script::files`; handed to a shell, the line is a comment.)
pub(in crate::engine::exec) fn sets_errexit(script: &str) -> bool {
    let set_e = maybe_set(script) && {
        let words = command_words(script);
        let computed = words.iter().any(|(w, at_start)| computed_name(w, *at_start));
        (computed && words.iter().any(|(w, _)| unquoted(w) == "set"))
            || words.iter().enumerate().any(|(i, (w, at_start))| {
                *at_start && unquoted(w) == "set" && {
                    let args: Vec<&str> = words[i + 1..]
                        .iter()
                        .take_while(|(_, start)| !start)
                        .map(|(a, _)| a.as_str())
                        .collect();
                    set_turns_on(&args, Opt::Errexit) == Some(true)
                }
            })
    };
    set_e || mentions(script, &["errexit"])
}

/// Whether the word `w` of [`command_words`] may be a computed command name (`$f -e`): at a
/// command's start and holding `$` or a backquote, and not an assignment (`x=$(check)`: bash
/// manual, "Simple Command Expansion", the words before the name that look like `NAME=` are
/// assignments, not the name).
fn computed_name(w: &str, at_start: bool) -> bool {
    at_start && w.contains(['$', '`']) && !is_assignment_word(w)
}

/// Whether `w` starts with `NAME=` (`NAME+=`), `NAME` letters, digits and `_`.
fn is_assignment_word(w: &str) -> bool {
    w.split_once('=').is_some_and(|(n, _)| {
        let n = n.strip_suffix('+').unwrap_or(n);
        !n.is_empty()
            && !n.starts_with(|c: char| c.is_ascii_digit())
            && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    })
}

/// Whether `src` may spell `set` (quoted or with backslashes): without its quotes and
/// backslashes it holds `set`. A word whose unquoted form is `set` is a piece of `src`, so its
/// unquoted form is a piece of `src`'s: when this is false, no word of `src` is `set`.
fn maybe_set(src: &str) -> bool {
    src.contains("set") || (src.contains(['"', '\'', '\\']) && holds_set_unquoted(src))
}

/// Whether `unquoted(src)` holds `set`, read without making it: from each `s` of `src` (found
/// with `memchr`, not byte by byte), the bytes after it but quotes and backslashes are `e` then
/// `t` (a multi-byte character holds no ASCII byte, so reading bytes is reading characters here).
fn holds_set_unquoted(src: &str) -> bool {
    let bytes = src.as_bytes();
    let mut from = 0;
    while let Some(i) = memchr::memchr(b's', &bytes[from..]).map(|i| i + from) {
        let mut rest = bytes[i + 1..].iter().filter(|b| !matches!(b, b'"' | b'\'' | b'\\'));
        if rest.next() == Some(&b'e') && rest.next() == Some(&b't') {
            return true;
        }
        from = i + 1;
    }
    false
}

/// `w` without its quotes and backslashes (borrowed when it has none, as most words do).
pub(super) fn unquoted(w: &str) -> std::borrow::Cow<'_, str> {
    if w.contains(['"', '\'', '\\']) {
        std::borrow::Cow::Owned(w.chars().filter(|c| !matches!(c, '"' | '\'' | '\\')).collect())
    } else {
        std::borrow::Cow::Borrowed(w)
    }
}

/// The words of `src` outside comments, as written, each with whether a command starts there:
/// after a control operator, a group's or subshell's parenthesis or brace, a keyword (`then`,
/// `do`, `!`, `time`, ...), an assignment, a redirection, or `command`/`builtin` and their
/// options. A crude reading (quotes and backslashes kept in a word; `${` splits one), used only
/// to count `set` commands conservatively.
fn command_words(src: &str) -> Vec<(String, bool)> {
    let mut scan =
        WordScan { out: Vec::new(), cur: String::new(), at_start: true, wrapped: false, target: false };
    let mut quote: Option<char> = None;
    let mut chars = src.chars();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                scan.cur.push(c);
                if c == '\\' && q == '"' {
                    if let Some(e) = chars.next() {
                        scan.cur.push(e);
                    }
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' => {
                    quote = Some(c);
                    scan.cur.push(c);
                }
                '\\' => {
                    scan.cur.push(c);
                    if let Some(e) = chars.next() {
                        scan.cur.push(e);
                    }
                }
                '#' if scan.cur.is_empty() => {
                    for e in chars.by_ref() {
                        if e == '\n' {
                            break;
                        }
                    }
                    scan.restart();
                }
                ';' | '&' | '|' | '(' | ')' | '{' | '}' | '\n' | '`' => {
                    scan.end_word();
                    scan.restart();
                }
                c if c.is_whitespace() => scan.end_word(),
                _ => scan.cur.push(c),
            },
        }
    }
    scan.end_word();
    scan.out
}

/// [`command_words`]' state.
struct WordScan {
    out: Vec<(String, bool)>,
    cur: String,
    /// A command starts at the next word.
    at_start: bool,
    /// After `command`/`builtin` (whose options come before the name).
    wrapped: bool,
    /// The next word is a redirection's target.
    target: bool,
}

impl WordScan {
    fn restart(&mut self) {
        self.at_start = true;
        self.wrapped = false;
        self.target = false;
    }

    fn end_word(&mut self) {
        if self.cur.is_empty() {
            return;
        }
        let w = std::mem::take(&mut self.cur);
        let bare = unquoted(&w);
        let keyword = matches!(
            &*bare,
            "then" | "do" | "else" | "elif" | "if" | "while" | "until" | "!" | "time" | "command" | "builtin"
        );
        let wrapper = matches!(&*bare, "command" | "builtin");
        drop(bare);
        let assignment = w
            .split_once('=')
            .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'));
        let option_of_wrapper = self.wrapped && w.starts_with('-');
        // A redirection before the command's name (`2>/dev/null set -e`), its target attached
        // or the next word.
        let redirection = w.trim_start_matches(|c: char| c.is_ascii_digit()).starts_with(['<', '>']);
        let target_follows = redirection && w.ends_with(['<', '>', '&']);
        self.out.push((w, self.at_start));
        if std::mem::take(&mut self.target) {
            return;
        }
        if self.at_start && redirection {
            self.target = target_follows;
        } else if self.at_start && (keyword || assignment || option_of_wrapper) {
            self.wrapped = wrapper || option_of_wrapper;
        } else {
            self.at_start = false;
            self.wrapped = false;
        }
    }
}

/// What the arguments `args` of a `set` command (as written) do to option `opt`: `Some(true)` it
/// is on after them, `Some(false)` off, `None` unchanged. The options apply in order, so the last
/// word that names `opt` decides (`set -e +e`: off; bash 5.2 and dash 0.5.12), a quoted word
/// is its unquoted text (`set -e "+e"`: off), and a computed word (`$X`, a backquote) may turn it
/// on: on from there, whatever follows. Options end at `--`, `-` or the first word that is not
/// one (the positional parameters).
fn set_turns_on(args: &[&str], opt: Opt) -> Option<bool> {
    let name = match opt {
        Opt::Errexit => "errexit",
        Opt::Pipefail => "pipefail",
    };
    let mut state = None;
    for (i, a) in args.iter().enumerate() {
        if a.contains(['$', '`']) {
            return Some(true);
        }
        let a = unquoted(a);
        let Some(letters) = a.strip_prefix('-').or_else(|| a.strip_prefix('+')) else {
            // (An option's name after `-o`, or the positional parameters.)
            if i > 0 && args[i - 1].contains('o') && args[i - 1].starts_with(['-', '+']) {
                continue;
            }
            break;
        };
        if letters.is_empty() || letters.starts_with('-') {
            break;
        }
        let on = a.starts_with('-');
        let next = args.get(i + 1).map(|n| unquoted(n));
        if (opt == Opt::Errexit && letters.contains('e'))
            || (letters.contains('o') && next.as_deref() == Some(name))
        {
            state = Some(on);
        }
    }
    state
}

/// Whether the script's `#!` line passes `-e` (errexit from its first line).
pub(in crate::engine::exec) fn shebang_errexit(script: &str) -> bool {
    script.strip_prefix("#!").is_some_and(|l| {
        l.lines()
            .next()
            .unwrap_or("")
            .split_whitespace()
            .skip(1)
            .any(|w| w.starts_with('-') && w.contains('e'))
    })
}

/// Whether errexit and pipefail are on at `n`, in the tree whose root is `root`, or `None` when
/// a status may be read where the walk does not look: a function's body or a loop's that reads
/// one (`f() { echo $?; }`), or an `exec` that is not the script's last command.
pub(super) fn options_at(
    n: Node<'_>,
    root: Node<'_>,
    walk: &Walk<'_>,
    rules: &Rules,
) -> Option<(bool, bool)> {
    if !exec_only_last(root, walk) || !status_reads_placed(n, root, walk) {
        return None;
    }
    Some((
        option_on_at(n, root, walk, Opt::Errexit, rules.errexit),
        option_on_at(n, root, walk, Opt::Pipefail, rules.pipefail),
    ))
}

/// The options followed where they are set (`set -e`, `set -o pipefail`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Opt {
    Errexit,
    Pipefail,
}

/// The subshell `k` runs in, nearest first: a `( )`, a substitution, a pipeline's element or a
/// command in the background; `None`: the script's own shell.
fn shell_of(k: Node<'_>) -> Option<Node<'_>> {
    let mut at = k;
    loop {
        if at.next_sibling().is_some_and(|s| s.kind_name() == "&") {
            return Some(at);
        }
        let p = at.parent()?;
        if matches!(p.kind_name(), "subshell" | "command_substitution" | "process_substitution" | "pipeline")
        {
            return Some(p);
        }
        at = p;
    }
}

/// Whether `outer` is `inner` or one of its ancestors.
pub(super) fn contains(outer: Node<'_>, inner: Node<'_>) -> bool {
    let mut at = Some(inner);
    while let Some(k) = at {
        if k == outer {
            return true;
        }
        at = k.parent();
    }
    false
}

/// Whether option `opt` is on when `n` runs: set by a `set` command (`set -e`, `-eu`, `-o errexit`,
/// `set -o pipefail`, `-euo pipefail`) that runs before it in its shell or a shell it inherits
/// from (not in a `( )` that `n` is not in, not after it unless a loop runs both, not in a function
/// that is never called), and not turned off since by a `set +e`/`set +o NAME` that certainly runs.
/// An option named otherwise (`shopt -o`, `SHELLOPTS`, a computed `set` word) counts as on. dash
/// 0.5.12 has no pipefail (`set -o pipefail` ends its script with status 2): on either way.
pub(super) fn option_on_at(n: Node<'_>, root: Node<'_>, walk: &Walk<'_>, opt: Opt, start: bool) -> bool {
    with_facts(root, walk, |tree| {
        let facts = match opt {
            Opt::Errexit => &tree.errexit,
            Opt::Pipefail => &tree.pipefail,
        };
        // (A `set` word the walk does not read as a `set` command, `command set -e`, `\set -e`,
        // counts as on: break9 A3/A8.)
        if facts.forced || facts.words > facts.named || tree.set_words > tree.sets_read {
            return true;
        }
        work(walk, facts.sets.len());
        let mut effects: Vec<(usize, bool, bool)> = Vec::new();
        for set in &facts.sets {
            if set.shell.is_none_or(|s| contains(s, n)) {
                if set.on && set.loops.iter().any(|p| contains(*p, n)) {
                    return true;
                }
                if set.node.end_byte() <= n.start_byte() {
                    effects.push((set.node.start_byte(), set.on, set.certain));
                }
            }
        }
        // (errexit or pipefail from the shell's flags or a `#!` line: on until a `set +e` that
        // certainly runs, break9 B1.)
        let mut state = start;
        effects.sort_unstable();
        for (_, on, certain) in effects {
            if on {
                state = true;
            } else if certain {
                state = false;
            }
        }
        state
    })
}

/// What [`option_on_at`] reads of a whole tree for one option, whatever the command asked about.
#[derive(Default)]
struct OptFacts<'t> {
    /// How many times the script's text names the option (`errexit`, `pipefail`) as a word.
    words: usize,
    /// How many of those are a `set` command's argument.
    named: usize,
    /// A `set` in a function called more than once turns it on (counts as on everywhere).
    forced: bool,
    /// The other `set` commands that turn it on or off, in the tree's order.
    sets: Vec<SetFact<'t>>,
}

/// A `set` command outside functions that turns an option on or off.
struct SetFact<'t> {
    node: Node<'t>,
    on: bool,
    /// The subshell it runs in ([`shell_of`]).
    shell: Option<Node<'t>>,
    /// It certainly runs when its shell does (only lists and `{ }` around it, up to its shell).
    certain: bool,
    /// The loops around it (a command in one of them runs after it the next time round).
    loops: Vec<Node<'t>>,
}

/// What `status::discarded` reads of a whole tree, made once per tree (`Walk::tree_facts`).
pub(in crate::engine::exec) struct TreeFacts<'t> {
    errexit: OptFacts<'t>,
    pipefail: OptFacts<'t>,
    /// How many words of the text are `set` once quotes and backslashes are taken out
    /// (`\set`, `'set'`, `s\et`) where a command starts ([`command_words`]; all of them when a
    /// command's name is computed).
    set_words: usize,
    /// How many `set` commands the walk reads ([`set_command`]).
    sets_read: usize,
    /// [`exec_only_last`].
    exec_only_last: bool,
    /// A function body in the tree may read the status its caller left ([`status_reads_placed`]).
    body_reads_status: bool,
    /// The `for` loops whose text reads a status ([`status_reads_placed`]).
    status_loops: Vec<Node<'t>>,
    /// The tree has a substitution, a pipeline or a redirection ([`output_used_above`](super::output_used_above)).
    pub(super) output_users: bool,
    /// A function definition in the tree [`leaves_state`] (`flow`'s
    /// `calls_a_function_with_effects`).
    defines_stateful: bool,
    /// How many times each word is in the script's text, quotes and backslashes taken out
    /// ([`named_by_count`]), made when first asked for.
    pub(super) words: std::cell::OnceCell<std::collections::HashMap<String, usize>>,
    /// How many times each path's last component is in the script's text, quotes and backslashes
    /// taken out (`harmless::named_directories`: the directories it names whole), made when first
    /// asked for.
    pub(super) named_dirs: std::cell::OnceCell<std::collections::HashMap<String, usize>>,
    /// How many times each word of letters, digits and `_` is in the script's text
    /// ([`unread_declaration`]), made when first asked for.
    pub(super) names: std::cell::OnceCell<std::collections::HashMap<String, usize>>,
    /// [`last_unplain_start`], made when first asked for.
    pub(super) last_unplain: std::cell::OnceCell<Option<usize>>,
}

/// The [`TreeFacts`] of the tree whose root is `root`, given to `f`: kept in `Walk::tree_facts`
/// for the tree being walked.
pub(super) fn with_facts<R>(root: Node<'_>, walk: &Walk<'_>, f: impl FnOnce(&TreeFacts<'_>) -> R) -> R {
    let i = walk.tree.get();
    match (walk.top_functions.get(i), walk.tree_facts.get(i)) {
        (Some((r, _)), Some(cell)) if r.id() == root.id() => f(cell.get_or_init(|| tree_facts(*r, walk))),
        _ => f(&tree_facts(root, walk)),
    }
}

/// The [`TreeFacts`] of the tree whose root is `root`: one walk of its nodes, one of its text.
fn tree_facts<'t>(root: Node<'t>, walk: &Walk<'_>) -> TreeFacts<'t> {
    let mut errexit = OptFacts::default();
    let mut pipefail = OptFacts::default();
    let mut sets_read = 0usize;
    let mut body_reads_status = false;
    let mut status_loops = Vec::new();
    let mut output_users = false;
    let mut defines_stateful = false;
    // (A text that reads no status has no function or loop that does.)
    let reads = reads_status_text(walk.src);
    // (The nodes looked for need words in the text: `set`, a definition's `(` or `function`, a
    // `|`, `<`, `>` or substitution; a text with none is not walked.)
    let src = walk.src;
    let uses_output = src.contains(['|', '<', '>', '`']) || src.contains("$(");
    let walked = reads || uses_output || src.contains("set") || src.contains('(') || src.contains("function");
    // (`holds_set`: the node's text holds `set`, as a `set` command's does: its name.)
    let visit = |k: Node<'t>, holds_set: bool| {
        match k.kind_name() {
            "function_definition" => {
                if reads
                    && !body_reads_status
                    && k.child_by_field("body").is_none_or(|b| reads_caller_status(text(b, walk)))
                {
                    body_reads_status = true;
                }
                if !defines_stateful && leaves_state(text(k, walk)) {
                    defines_stateful = true;
                }
            }
            "for_statement" | "c_style_for_statement" if reads && reads_status_text(text(k, walk)) => {
                status_loops.push(k);
            }
            "command_substitution" | "process_substitution" | "pipeline" | "redirected_statement" => {
                output_users = true;
            }
            _ => {}
        }
        if holds_set && set_command(k, walk) {
            sets_read += 1;
            for (opt, facts) in [(Opt::Errexit, &mut errexit), (Opt::Pipefail, &mut pipefail)] {
                set_facts(k, walk, opt, facts);
            }
        }
    };
    if walked {
        // (A node whose text has none of those words holds none of the nodes looked for: its
        // children are skipped, unless the parser recovered from an error there.)
        let mut visit = visit;
        // (The text is read once a node: `set`, then the five bytes with `memchr`.)
        super::tree::each_node_pruned(root, |k| {
            let t = text(k, walk);
            let holds_set = t.contains("set");
            visit(k, holds_set);
            k.has_error()
                || holds_set
                || memchr::memchr3(b'|', b'<', b'>', t.as_bytes()).is_some()
                || memchr::memchr2(b'`', b'(', t.as_bytes()).is_some()
                || t.contains("function")
                || (reads && t.contains("for"))
        });
    }
    // (One pass over the text's words for both options and `exec`, when it has one of them.)
    let mut execs = 0usize;
    let words = src.contains("errexit") || src.contains("pipefail") || src.contains("exec");
    if words {
        // (Comments and printed strings name no option: `flow::code_view`.)
        for w in super::super::flow::code_view(src)
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        {
            match w {
                "errexit" => errexit.words += 1,
                "pipefail" => pipefail.words += 1,
                "exec" => execs += 1,
                _ => {}
            }
        }
    }
    // (`set` where a command starts, however it is spelt, and any word `set` when a command's name
    // is computed: `f=set; $f -e`.)
    let set_words = if maybe_set(src) {
        let words = command_words(src);
        let computed = words.iter().any(|(w, at_start)| computed_name(w, *at_start));
        let any_set = || {
            src.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '"' | '\'' | '\\')))
                .any(|w| w.chars().filter(|c| !matches!(c, '"' | '\'' | '\\')).eq("set".chars()))
        };
        if computed && any_set() {
            usize::MAX
        } else {
            words.iter().filter(|(w, at_start)| *at_start && unquoted(w) == "set").count()
        }
    } else {
        0
    };
    TreeFacts {
        errexit,
        pipefail,
        set_words,
        sets_read,
        exec_only_last: exec_only_last_of(root, walk, execs),
        body_reads_status,
        status_loops,
        output_users,
        defines_stateful,
        last_unplain: std::cell::OnceCell::new(),
        words: std::cell::OnceCell::new(),
        named_dirs: std::cell::OnceCell::new(),
        names: std::cell::OnceCell::new(),
    }
}

/// Whether a function definition in the tree being walked (whose root is `root`) leaves state
/// its caller reads ([`leaves_state`]), read once per tree.
pub(in crate::engine::exec) fn defines_stateful_function(root: Node<'_>, walk: &Walk<'_>) -> bool {
    match walk.top_functions.get(walk.tree.get()) {
        Some((r, _)) => with_facts(*r, walk, |facts| facts.defines_stateful),
        None => with_facts(root, walk, |facts| facts.defines_stateful),
    }
}

/// Whether `k` is a `set` command (looked at by [`option_on_at`]).
fn set_command(k: Node<'_>, walk: &Walk<'_>) -> bool {
    k.kind_name() == "command" && k.child_by_field("name").is_some_and(|m| text(m, walk) == "set")
}

/// Adds what the `set` command `k` does to option `opt` to `facts`.
fn set_facts<'t>(k: Node<'t>, walk: &Walk<'_>, opt: Opt, facts: &mut OptFacts<'t>) {
    let word = match opt {
        Opt::Errexit => "errexit",
        Opt::Pipefail => "pipefail",
    };
    let mut c = k.walk();
    let args: Vec<&str> = k.children_by_field("argument", &mut c).map(|a| text(a, walk)).collect();
    facts.named += args.iter().filter(|a| !a.contains(['$', '`']) && unquoted(a) == word).count();
    let Some(on) = set_turns_on(&args, opt) else {
        return;
    };
    let mut func = None;
    let mut up = k.parent();
    while let Some(p) = up {
        if p.kind_name() == "function_definition" {
            func = p.child_by_field("name").map(|m| text(m, walk));
        }
        up = p.parent();
    }
    if let Some(f) = func {
        if on && !facts.forced {
            let calls = walk
                .src
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
                .filter(|w| *w == f)
                .count();
            facts.forced = calls > 1;
        }
        return;
    }
    let shell = shell_of(k);
    let mut loops = Vec::new();
    let mut up = k.parent();
    while let Some(p) = up {
        if matches!(p.kind_name(), "for_statement" | "c_style_for_statement" | "while_statement") {
            loops.push(p);
        }
        up = p.parent();
    }
    let mut certain = true;
    let mut up = k.parent();
    while let Some(p) = up {
        if shell.is_some_and(|s| s == p) {
            break;
        }
        certain &= matches!(p.kind_name(), "program" | "compound_statement");
        up = p.parent();
    }
    facts.sets.push(SetFact { node: k, on, shell, certain, loops });
}

/// Whether the script's only `exec` is its last statement, running a program (`exec CMD`:
/// the shell is replaced and the script's status is CMD's, bash manual "Bourne Shell Builtins"),
/// or it has none.
fn exec_only_last(root: Node<'_>, walk: &Walk<'_>) -> bool {
    with_facts(root, walk, |facts| facts.exec_only_last)
}

/// [`exec_only_last`], where the script's text has `count` words `exec`.
fn exec_only_last_of(root: Node<'_>, walk: &Walk<'_>, count: usize) -> bool {
    if count == 0 {
        return true;
    }
    let count =
        count.saturating_sub(redirecting_execs(root, walk) + super::shapes::subshell_last_execs(root, walk));
    if count == 0 {
        return true;
    }
    let mut c = root.walk();
    let Some(last) = root.named_children(&mut c).filter(|k| is_statement(*k)).last() else {
        return false;
    };
    count == 1
        && last.kind_name() == "command"
        && last.child_by_field("name").is_some_and(|m| text(m, walk) == "exec")
        && {
            let mut c = last.walk();
            last.children_by_field("argument", &mut c).next().is_some_and(|a| !text(a, walk).starts_with('-'))
        }
}

/// How many `exec` commands in the tree run no program and only redirect: to a file descriptor
/// or to `/proc/1/fd/N` (`exec 2>&1`, `exec >>/proc/1/fd/1 2>&1`), closing one (`exec 3>&-`), to
/// `/dev/null`, `/dev/stdout`, `/dev/stderr` (`exec 2>/dev/null`), or writing a file the script
/// names nowhere else (`exec >>/tmp/probe.log 2>&1`). An `exec` without a program replaces no
/// shell and changes no status (bash manual, "Bourne Shell Builtins", `exec`: "If command is not
/// specified, any redirections take effect in the current shell, and the return status is 0"):
/// bash 5.2 and dash 0.5.12 exit 0 on `exec 2>&1; pg_isready -h db || echo down; curl ...` with
/// the database down (break9 B2), and 0 / 0 on `exec 2>/dev/null; redis-cli -h cache ping; true`
/// (s25). A file named again may be read (`exec >/tmp/o; check; grep -q PONG /tmp/o`): kept.
fn redirecting_execs(root: Node<'_>, walk: &Walk<'_>) -> usize {
    let to_fd = |r: Node<'_>, exec: Node<'_>| {
        let t = text(r, walk).trim_start_matches(|c: char| c.is_ascii_digit());
        let writes = t.starts_with('>') || t.starts_with("&>");
        let dest = t.trim_start_matches(['>', '<', '&', '|']).trim();
        let fd_number = |n: &str| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit());
        fd_number(dest)
            || dest == "-"
            || matches!(dest, "/dev/null" | "/dev/stdout" | "/dev/stderr")
            || ["/proc/1/fd/", "/proc/self/fd/", "/dev/fd/"]
                .iter()
                .any(|p| dest.strip_prefix(p).is_some_and(fd_number))
            || (writes
                && dest.starts_with('/')
                && !super::harmless::named_elsewhere(dest, walk.src, &[(exec.start_byte(), exec.end_byte())]))
    };
    let mut found = 0;
    let mut stack = vec![root];
    while let Some(k) = stack.pop() {
        let mut c = k.walk();
        if k.kind_name() == "command" && k.child_by_field("name").is_some_and(|m| text(m, walk) == "exec") {
            let mut c = k.walk();
            let args = k.children_by_field("argument", &mut c).count();
            let mut c = k.walk();
            let mut redirects: Vec<Node<'_>> = k.children_by_field("redirect", &mut c).collect();
            let mut whole = k;
            if let Some(p) = k.parent().filter(|p| p.kind_name() == "redirected_statement") {
                let mut c = p.walk();
                redirects.extend(p.children_by_field("redirect", &mut c));
                whole = p;
            }
            if args == 0 && !redirects.is_empty() && redirects.iter().all(|r| to_fd(*r, whole)) {
                found += 1;
            }
        }
        stack.extend(k.named_children(&mut c));
    }
    found
}

/// Whether no status is read where the walk does not look: no function body reads one (it may
/// run right after `n`), and no loop around `n` reads one in its body (the next time round).
fn status_reads_placed(n: Node<'_>, root: Node<'_>, walk: &Walk<'_>) -> bool {
    with_facts(root, walk, |facts| {
        !facts.body_reads_status && !facts.status_loops.iter().any(|p| contains(*p, n))
    })
}

#[cfg(test)]
mod set_text_tests {
    use super::{holds_set_unquoted, unquoted};
    use proptest::prelude::*;

    proptest! {
        /// The scan answers as making the unquoted text and searching it did.
        #[test]
        fn set_is_found_through_quotes_as_in_the_unquoted_text(src in "[set\"'\\\\ xé]{0,24}") {
            prop_assert_eq!(holds_set_unquoted(&src), unquoted(&src).contains("set"));
        }
    }

    #[test]
    fn set_is_found_through_quotes_and_backslashes() {
        for (src, holds) in [
            ("s\"et", true),
            ("'s'e't'", true),
            ("sset", true),
            ("se\\t", true),
            ("ses et", false),
            ("sé't", false),
        ] {
            assert_eq!(holds_set_unquoted(src), holds, "{src}");
            assert_eq!(unquoted(src).contains("set"), holds, "{src}");
        }
    }
}
