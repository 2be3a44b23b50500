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
//! the rest of the walk follows). Those keep the denial; the rest is a warning.

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

/// Why the output of the here-document whose body is `body` decides no status, or `None` when it
/// may: the command reading it, and where that command's output goes.
fn output_decides_nothing(body: Node<'_>, walk: &Walk<'_>) -> Option<String> {
    let redirect = body.parent().filter(|p| p.kind() == "heredoc_redirect")?;
    let statement = redirect.parent().filter(|p| p.kind() == "redirected_statement")?;
    let command = statement.child_by_field_name("body").filter(|b| b.kind() == "command")?;
    let name = text(command.child_by_field_name("name")?, walk);
    let program = super::context::basename(name);
    if name.contains(['$', '`', '"', '\'']) || READS_INTO_STATUS.contains(&program) {
        return None;
    }
    // Its output: piped on to a reader (`cat <<EOF | grep -q ok` hangs the pipeline on the
    // here-document's redirection), written to a file, or the value of a substitution.
    let mut c = redirect.walk();
    let kids: Vec<Node<'_>> = redirect.children(&mut c).collect();
    let piped = |n: &Node<'_>| n.child(0).is_some_and(|c| matches!(c.kind(), "|" | "|&"));
    for kid in kids.iter().filter(|k| k.kind() == "pipeline" && piped(k)) {
        let mut c = kid.walk();
        if kid.named_children(&mut c).any(|n| !trivial_reader(text(n, walk))) {
            return None;
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
        return None;
    }
    let mut child = statement;
    while let Some(parent) = child.parent() {
        match parent.kind() {
            "command_substitution" | "process_substitution" => return None,
            "pipeline" => {
                let mut c = parent.walk();
                if parent
                    .named_children(&mut c)
                    .filter(|k| k.start_byte() >= child.end_byte())
                    .any(|k| !trivial_reader(text(k, walk)))
                {
                    return None;
                }
            }
            _ => {}
        }
        child = parent;
    }
    Some(format!(
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
        let how = output_decides_nothing(body, walk);
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
}
