//! The command substitutions of a here-document's body. With an unquoted delimiter "all lines of
//! the here-document shall be expanded ... for parameter expansion, command substitution, and
//! arithmetic expansion" (POSIX Shell Command Language, 2.7.4 Here-Document): `$(...)` in the body
//! runs before the command does. With any part of the delimiter quoted nothing is expanded, and
//! nothing runs.
//!
//! Their status is lost: it is no command's status. bash 5.2.15 and dash 0.5.12, a stub `curl`
//! exiting 22 for `http://db/`: `cat <<EOF` / `$(curl -sf http://db/)` / `EOF` exits 0, under
//! `set -e` too, and so does `: <<EOF`. What they print is the command's standard input, so they
//! reach the probe only when that input decides a status: a command that reads it into one
//! (`grep -q ok <<EOF` exits 1 when curl prints nothing), or output passed on to one
//! (`cat <<EOF | grep -q ok`, a file the script reads again, `x=$(cat <<EOF ...)`, whose value
//! the rest of the walk follows). Those keep the denial; the rest is a warning. A command that
//! reads it into its status couples it only as far as that status goes: the exit-status walk
//! (`status::discarded`) judges the command (`grep -q ok <<EOF` / ... / `curl localhost` exits 0
//! in bash and dash with db down: a warning), and so does a `|| true` after it.

use tree_sitter::Node;

use super::context::Ctx;
use super::flow::{EXIT, FUNCTION, GUARD, PIPE, SCOPE, UNCOUPLED};
use super::shell::Walk;

/// Programs whose exit status says whether what they read on standard input holds a match or
/// equals a file ("exit status 1: no lines were selected", POSIX grep; diff and cmp: 1 when the
/// inputs differ): the body's output then decides a status. Other readers' status does not depend
/// on it as far as the shells show (an empty `sh <<EOF` script exits 0 in bash and dash).
const READS_INTO_STATUS: &[&str] = &["grep", "egrep", "fgrep", "zgrep", "rg", "diff", "cmp"];

/// Pipeline readers that read nothing into a status (as `status::trivial_reader`).
fn trivial_reader(t: &str) -> bool {
    matches!(t.trim(), "true" | ":" | "cat >/dev/null" | "cat > /dev/null")
}

fn text<'s>(n: Node<'_>, walk: &Walk<'s>) -> &'s str {
    walk.src.get(n.start_byte()..n.end_byte().min(walk.src.len())).unwrap_or("")
}

/// Whether a here-document's delimiter (the text from its `<<` to its body) is quoted.
pub(super) fn delimiter_quoted(redirect_text: &str) -> bool {
    let word =
        redirect_text.trim_start_matches(|c: char| c.is_ascii_digit() || matches!(c, '<' | '-')).trim_start();
    let end =
        word.find(|c: char| c.is_whitespace() || matches!(c, '|' | ';' | '&' | ')')).unwrap_or(word.len());
    word[..end].contains(['\'', '"', '\\'])
}

/// What becomes of the output of the here-document whose body is `body`.
enum Output<'t> {
    /// It decides no status: the command reading it, and where that command's output goes.
    FeedsNothing(String),
    /// It is read into the exit status of `statement` (`grep -q ok <<EOF`, `cat <<EOF | grep -q
    /// ok`), whose own status is judged by the exit-status walk like any other command's.
    ReadIntoStatus(Node<'t>),
    /// It is data the script uses (a substitution's value, a file named again), or the walk
    /// cannot tell: coupled.
    Used,
}

/// What the output of the here-document whose body is `body` becomes.
fn output_of<'t>(body: Node<'t>, walk: &Walk<'_>) -> Output<'t> {
    let used = Output::Used;
    let Some(redirect) = body.parent().filter(|p| p.kind() == "heredoc_redirect") else { return used };
    let Some(statement) = redirect.parent().filter(|p| p.kind() == "redirected_statement") else {
        return used;
    };
    let Some(command) = statement.child_by_field_name("body").filter(|b| b.kind() == "command") else {
        return used;
    };
    let Some(name) = command.child_by_field_name("name").map(|n| text(n, walk)) else { return used };
    let program = super::context::basename(name);
    if name.contains(['$', '`', '"', '\'']) {
        return used;
    }
    let mut reads = READS_INTO_STATUS.contains(&program);
    // Its output: piped on to a reader (`cat <<EOF | grep -q ok` hangs the pipeline on the
    // here-document's redirection), written to a file, or the value of a substitution.
    let mut c = redirect.walk();
    let kids: Vec<Node<'_>> = redirect.children(&mut c).collect();
    let piped = |n: &Node<'_>| n.child(0).is_some_and(|c| matches!(c.kind(), "|" | "|&"));
    for kid in kids.iter().filter(|k| k.kind() == "pipeline" && piped(k)) {
        let mut c = kid.walk();
        if kid.named_children(&mut c).any(|n| !trivial_reader(text(n, walk))) {
            reads = true;
        }
    }
    let mut c = statement.walk();
    let to_a_file =
        statement.children(&mut c).chain(kids.iter().copied()).filter(|n| n.kind() == "file_redirect").any(
            |r| {
                let t = text(r, walk);
                let target =
                    t.trim_start_matches(|c: char| c.is_ascii_digit() || matches!(c, '>' | '&' | '|')).trim();
                // A file the script names again is data it may read (as `status::discarded` holds).
                t.trim_start_matches(|c: char| c.is_ascii_digit()).starts_with('>')
                    && !target.is_empty()
                    && walk.src.matches(target).count() > 1
            },
        );
    if to_a_file {
        return used;
    }
    let mut child = statement;
    while let Some(parent) = child.parent() {
        match parent.kind() {
            "command_substitution" | "process_substitution" => return used,
            "pipeline" => {
                let mut c = parent.walk();
                if parent
                    .named_children(&mut c)
                    .filter(|k| k.start_byte() >= child.end_byte())
                    .any(|k| !trivial_reader(text(k, walk)))
                {
                    return used;
                }
            }
            _ => {}
        }
        child = parent;
    }
    if reads {
        return Output::ReadIntoStatus(statement);
    }
    Output::FeedsNothing(format!(
        "it runs in a here-document's body, where its status is lost and its output only feeds `{program}`"
    ))
}
impl Ctx<'_> {
    /// The command substitutions of a here-document's `body` (unquoted delimiter), their
    /// commands split to `subs`, marked uncoupled when their output decides no status.
    pub(super) fn here_document_substitutions(
        &mut self,
        body: Node<'_>,
        walk: &Walk<'_>,
        depth: usize,
        subs: &mut Vec<String>,
    ) {
        let quoted = body
            .parent()
            .is_none_or(|p| walk.src.get(p.start_byte()..body.start_byte()).is_none_or(delimiter_quoted));
        if quoted {
            return;
        }
        let mut found = Vec::new();
        let mut cursor = body.walk();
        let mut descend = cursor.goto_first_child();
        while descend {
            let n = cursor.node();
            let substitution = n.kind() == "command_substitution" && n.end_byte() <= walk.cut;
            if substitution {
                found.push(n);
            }
            if !substitution && cursor.goto_first_child() {
                continue;
            }
            loop {
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() || cursor.node() == body {
                    descend = false;
                    break;
                }
            }
        }
        if found.is_empty() {
            return;
        }
        let how = match output_of(body, walk) {
            Output::FeedsNothing(how) => Some(how),
            Output::Used => None,
            Output::ReadIntoStatus(statement) => self.reader_status_discarded(statement, walk),
        };
        for n in found {
            let mut value = String::new();
            let mut pieces = Vec::new();
            self.substitution(n, walk, depth, &mut value, &mut pieces);
            for piece in pieces {
                match &how {
                    Some(how) if !piece.starts_with([FUNCTION, UNCOUPLED, GUARD, PIPE, EXIT, SCOPE]) => {
                        subs.push(format!("{UNCOUPLED}{how}{UNCOUPLED}{piece}"));
                    }
                    _ => subs.push(piece),
                }
            }
        }
    }

    /// Why the exit status of `statement`, a command reading a here-document's body into its
    /// status, cannot fail the script, or `None` when it may: its failure is ignored (`grep -q ok
    /// <<EOF || true`, the `||` the grammar keeps inside the here-document's redirection) or the
    /// exit-status walk finds it discarded (a later command's status is the script's). Such a
    /// statement holds the body's `$(...)`, so `flow`'s walk never asks about it; here it is
    /// asked, its work counted as `status_discarded_within_budget` counts it.
    fn reader_status_discarded(&self, statement: Node<'_>, walk: &Walk<'_>) -> Option<String> {
        let redirect =
            statement.child_by_field_name("redirect").filter(|r| r.kind() == "heredoc_redirect")?;
        let mut c = redirect.walk();
        let kids: Vec<Node<'_>> = redirect.children(&mut c).collect();
        let ignored = kids.windows(2).any(|w| {
            w[0].kind() == "||"
                && w[1].kind() == "command"
                && matches!(text(w[1], walk).trim(), "true" | ":" | "exit 0")
        });
        let then = |why: &str| {
            format!(
                "it runs in a here-document's body, read into the status of a command whose status cannot fail the probe: {why}"
            )
        };
        if ignored && walk.status.is_some() {
            return Some(then("its failure is ignored (`|| true`)"));
        }
        // A `&&`/`||` the grammar holds inside the redirection: the walk up the tree would miss it.
        if kids.iter().any(|k| matches!(k.kind(), "&&" | "||")) {
            return None;
        }
        if self.over_budget.get() || statement.end_byte() > walk.cut {
            return None;
        }
        let rules = walk.status.as_ref()?;
        let before = walk.status_work.get();
        let why = super::status::discarded(statement, walk, rules);
        let spent = walk.status_work.get().saturating_sub(before);
        if spent > 0 && !self.spend_units(spent) {
            return None;
        }
        why.map(then)
    }
}
