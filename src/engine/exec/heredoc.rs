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

use crate::engine::exec::kinds::KindName;
use tree_sitter::Node;

use super::context::Ctx;
use super::flow::{EXIT, FUNCTION, GUARD, PIPE, SCOPE, UNCOUPLED};
use super::shell::Walk;

/// Programs whose exit status says whether what they read on standard input holds a match or
/// equals a file ("exit status 1: no lines were selected", POSIX grep; diff and cmp: 1 when the
/// inputs differ): the body's output then decides a status. Other readers' status does not depend
/// on it as far as the shells show (an empty `sh <<EOF` script exits 0 in bash and dash).
const READS_INTO_STATUS: &[&str] = &["grep", "egrep", "fgrep", "zgrep", "rg", "diff", "cmp"];

/// A command of [`READS_INTO_STATUS`] named as written, writing no file and running nothing else
/// (`grep -q ok`).
fn reads_into_status(k: Node<'_>, walk: &Walk<'_>) -> bool {
    let t = text(k, walk);
    k.kind_name() == "command"
        && !t.contains(['>', '`', '$'])
        && k.child_by_field("name").is_some_and(|n| READS_INTO_STATUS.contains(&text(n, walk)))
}

/// Pipeline readers that read nothing into a status (as `status::trivial_reader`).
fn trivial_reader(t: &str) -> bool {
    matches!(t.trim(), "true" | ":" | "cat >/dev/null" | "cat > /dev/null")
}

fn text<'s>(n: Node<'_>, walk: &Walk<'s>) -> &'s str {
    walk.src.get(n.start_byte()..n.end_byte().min(walk.src.len())).unwrap_or("")
}

/// A here-document's body, as the command's standard input: appended to its piece as a
/// here-string word (`<<<'...'`, single-quoted; its `$` marked double-quoted when the delimiter
/// is unquoted, else literal: a shell that reads it expands what it holds), which the analysis reads as it reads a here-string (`sh <<EOF`). With `<<-`, the
/// lines' leading tabs are stripped, as bash does.
pub(super) fn here_document(n: Node<'_>, walk: &Walk<'_>, cur: &mut String) {
    let Some(body) = walk.src.get(n.start_byte()..n.end_byte().min(walk.cut)) else {
        return;
    };
    let strip = n.parent().is_some_and(|p| {
        walk.src
            .get(p.start_byte()..n.start_byte())
            .is_some_and(|t| t.trim_start_matches(|c: char| c.is_ascii_digit()).starts_with("<<-"))
    });
    // With an unquoted delimiter the shell that reads the script expands the body's `$` itself,
    // before the command runs (bash manual, "Here Documents"): they are marked double-quoted.
    let quoted =
        n.parent().is_none_or(|p| walk.src.get(p.start_byte()..n.start_byte()).is_none_or(delimiter_quoted));
    let mut text = String::with_capacity(body.len() + 8);
    for line in body.split_inclusive('\n') {
        text.push_str(if strip { line.trim_start_matches('\t') } else { line });
    }
    if !cur.is_empty() && !cur.ends_with(char::is_whitespace) {
        cur.push(' ');
    }
    cur.push(super::shell::REDIRECT);
    cur.push_str("<<<'");
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => cur.push_str("'\\''"),
            '\\' if !quoted && chars.peek() == Some(&'$') => {
                chars.next();
                cur.push(super::context::LDOLLAR);
            }
            '$' if !quoted => cur.push(super::context::QDOLLAR),
            '$' => cur.push(super::context::LDOLLAR),
            c => cur.push(c),
        }
    }
    cur.push_str("' ");
}

/// Whether a here-document's delimiter (the text from its `<<` to its body) is quoted.
pub(super) fn delimiter_quoted(redirect_text: &str) -> bool {
    let word =
        redirect_text.trim_start_matches(|c: char| c.is_ascii_digit() || matches!(c, '<' | '-')).trim_start();
    let end =
        word.find(|c: char| c.is_whitespace() || matches!(c, '|' | ';' | '&' | ')')).unwrap_or(word.len());
    word[..end].contains(['\'', '"', '\\'])
}

/// `text` with each here-document body of `trees` (parsed from `text`) that expands nothing (no
/// `$`, no backquote: data fed to a command, never run by this shell) blanked, newlines kept: what
/// the exit-status walk's script-wide scans (`status::rules`) read. s25's new user: `psql -h db
/// -U u <<SQL` / `select 1;` / `SQL` / `curl -f localhost:8080/live` (0 / 0 in bash 5.2 and dash
/// 0.5.12 with `test -d /` last) was denied because the body's `select` was taken for bash's
/// `select` loop (`status::texts::may_select`).
pub(super) fn blank_plain_bodies<'a>(
    text: &'a str,
    trees: &[tree_sitter::Tree],
) -> std::borrow::Cow<'a, str> {
    if !text.contains("<<") {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut ranges = Vec::new();
    for tree in trees {
        super::status::each_node(tree.root_node(), |k| {
            if k.kind_name() == "heredoc_body"
                && let Some(body) = text.get(k.start_byte()..k.end_byte())
                && !body.contains(['$', '`'])
            {
                ranges.push(k.start_byte()..k.end_byte());
            }
        });
    }
    if ranges.is_empty() {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut bytes = text.as_bytes().to_vec();
    for r in ranges {
        for b in &mut bytes[r] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    }
    // (Whole characters are blanked, byte by byte: the text stays UTF-8.)
    String::from_utf8(bytes).map_or(std::borrow::Cow::Borrowed(text), std::borrow::Cow::Owned)
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
    let Some(redirect) = body.parent().filter(|p| p.kind_name() == "heredoc_redirect") else { return used };
    let Some(statement) = redirect.parent().filter(|p| p.kind_name() == "redirected_statement") else {
        return used;
    };
    let Some(command) = statement.child_by_field("body").filter(|b| b.kind_name() == "command") else {
        return used;
    };
    let Some(name) = command.child_by_field("name").map(|n| text(n, walk)) else { return used };
    let program = super::context::basename(name);
    if name.contains(['$', '`', '"', '\'']) {
        return used;
    }
    let mut reads = READS_INTO_STATUS.contains(&program);
    // Its output: piped on to a reader (`cat <<EOF | grep -q ok` hangs the pipeline on the
    // here-document's redirection), written to a file, or the value of a substitution.
    let mut c = redirect.walk();
    let kids: Vec<Node<'_>> = redirect.children(&mut c).collect();
    let piped = |n: &Node<'_>| n.child(0).is_some_and(|c| matches!(c.kind_name(), "|" | "|&"));
    for kid in kids.iter().filter(|k| k.kind_name() == "pipeline" && piped(k)) {
        let mut c = kid.walk();
        if kid.named_children(&mut c).any(|n| !trivial_reader(text(n, walk))) {
            reads = true;
        }
    }
    let mut c = statement.walk();
    let to_a_file = statement
        .children(&mut c)
        .chain(kids.iter().copied())
        .filter(|n| n.kind_name() == "file_redirect")
        .any(|r| {
            let t = text(r, walk);
            let target =
                t.trim_start_matches(|c: char| c.is_ascii_digit() || matches!(c, '>' | '&' | '|')).trim();
            // A file the script names again is data it may read (as `status::discarded` holds),
            // unless only to test that it exists or is not empty (s26: `cat > F <<EOF` / `{"db":
            // "$(C && echo up || echo down)"}` / `EOF` / `test -s F` exits 0 / 0 in bash 5.2.15
            // and dash 0.5.12; a bare `cat` of a body holding a substitution writes a line).
            let own = [(statement.start_byte(), statement.end_byte())];
            let copies_body = text(command, walk).trim() == "cat";
            t.trim_start_matches(|c: char| c.is_ascii_digit()).starts_with('>')
                && !target.is_empty()
                && walk.src.matches(target).count() > 1
                && !super::status::blind_readers_only(
                    target,
                    walk.src,
                    &own,
                    statement.start_byte(),
                    copies_body,
                )
        });
    if to_a_file {
        return used;
    }
    let mut child = statement;
    // A pipeline whose later commands read the output into their status (`{ cat <<EOF; } | grep
    // -q ok`, as the grammar's reading of `cat <<EOF | grep -q ok` is regrouped): its status is
    // judged as the reader's is.
    let mut reader = None;
    while let Some(parent) = child.parent() {
        match parent.kind_name() {
            "command_substitution" | "process_substitution" => return used,
            // (A bare `cat` after it copies its output on: where that goes is looked at further
            // up, and the status the output decides is judged by the walk, `grep ok <<EOF | cat`
            // being `cat`'s: bash 5.2 and dash 0.5.12 exit 0.)
            "pipeline" => {
                let mut c = parent.walk();
                let later: Vec<Node<'t>> =
                    parent.named_children(&mut c).filter(|k| k.start_byte() >= child.end_byte()).collect();
                let passes = |k: &Node<'_>| trivial_reader(text(*k, walk)) || text(*k, walk).trim() == "cat";
                if !later.iter().all(passes) {
                    if !later.iter().all(|k| passes(k) || reads_into_status(*k, walk)) {
                        return used;
                    }
                    reader.get_or_insert(parent);
                }
            }
            _ => {}
        }
        child = parent;
    }
    if let Some(pipeline) = reader {
        return Output::ReadIntoStatus(pipeline);
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
    pub(super) fn here_document_substitutions<'w>(
        &mut self,
        body: Node<'w>,
        walk: &Walk<'w>,
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
            let substitution = n.kind_name() == "command_substitution" && n.end_byte() <= walk.cut;
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
    fn reader_status_discarded<'t>(&self, statement: Node<'t>, walk: &Walk<'t>) -> Option<String> {
        // (A pipeline holding the command, `Output::ReadIntoStatus`, has no redirection of its own.)
        let redirect = statement.child_by_field("redirect").filter(|r| r.kind_name() == "heredoc_redirect");
        let kids: Vec<Node<'_>> = match redirect {
            Some(r) => {
                let mut c = r.walk();
                r.children(&mut c).collect()
            }
            None if statement.kind_name() == "pipeline" => Vec::new(),
            None => return None,
        };
        let ignored = kids.windows(2).find_map(|w| {
            let right = text(w[1], walk).trim();
            (w[0].kind_name() == "||"
                && w[1].kind_name() == "command"
                && matches!(right, "true" | ":" | "exit 0"))
            .then(|| super::flow::failure_ignored_by(right))
        });
        let then = |why: &str| {
            format!(
                "it runs in a here-document's body, read into the status of a command whose status cannot fail the probe: {why}"
            )
        };
        if let Some(how) = ignored.filter(|_| walk.status.is_some()) {
            return Some(then(how));
        }
        // A `&&`/`||` the grammar holds inside the redirection: the walk up the tree would miss it.
        if kids.iter().any(|k| matches!(k.kind_name(), "&&" | "||")) {
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

/// `script` with each here-document whose operator's line goes on with more commands (`cmd <<EOF
/// | grep -q ok || true`, `cmd <<EOF; exit 0`) written as a group holding the command and its
/// body, the rest of the line after the group: `{ cmd <<EOF` / body / `EOF` / `} | grep -q ok ||
/// true`. The shells read the rest of the operator's line as commands and the body from the next
/// line (POSIX 2.7.4: "the here-document starts after the next <newline>"); tree-sitter-bash
/// 0.25.1 reads a `;` there as an error and the rest as words of the redirection (`pg_isready -h
/// db <<EOF; exit 0` was the command `pg_isready -h db exit 0`), and `| ...`/`|| ...` as parts of
/// it. A `{ }` group runs in the shell that runs the command, and a pipeline or list binds it as
/// it binds the command, so the script means the same (bash 5.2 and dash 0.5.12 exit 0 on both
/// forms of each). Only a line with one `<<` (not `<<<`), no backquote or `$(`, a delimiter line
/// that ends the body, and a command that starts after an operator or `if`/`then`/`do`/`else`/
/// `elif`/`while`/`until`/`!` is rewritten; any other is left as it is.
pub(super) fn group_here_document_lines(script: &str) -> std::borrow::Cow<'_, str> {
    if !script.contains("<<") {
        return std::borrow::Cow::Borrowed(script);
    }
    let lines: Vec<&str> = script.split('\n').collect();
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    let mut changed = false;
    let mut i = 0;
    while i < lines.len() {
        match regroup(&lines, i) {
            Some((grouped, next)) => {
                out.push(grouped);
                changed = true;
                i = next;
            }
            None => {
                out.push(lines[i].to_string());
                i += 1;
            }
        }
    }
    if changed { std::borrow::Cow::Owned(out.join("\n")) } else { std::borrow::Cow::Borrowed(script) }
}

/// [`group_here_document_lines`] of the line `lines[at]`: the text that replaces it and its body,
/// and the index of the line after the body.
fn regroup(lines: &[&str], at: usize) -> Option<(String, usize)> {
    let line = lines[at];
    if line.matches("<<").count() != 1 || line.contains("<<<") || line.contains('`') || line.contains("$(") {
        return None;
    }
    // The top-level bytes of the line (outside quotes): `None` inside quotes.
    let mut quote: Option<u8> = None;
    let bytes = line.as_bytes();
    let mut top = vec![false; bytes.len()];
    let mut k = 0;
    while k < bytes.len() {
        let b = bytes[k];
        match quote {
            Some(q) if b == q => quote = None,
            Some(b'"') if b == b'\\' => k += 1,
            Some(_) => {}
            None if b == b'\\' => k += 1,
            None if b == b'\'' || b == b'"' => quote = Some(b),
            None => top[k] = true,
        }
        k += 1;
    }
    let op = line.find("<<")?;
    if !top[op] || bytes.get(op.wrapping_sub(1)) == Some(&b'<') {
        return None;
    }
    let strip = bytes.get(op + 2) == Some(&b'-');
    let word_at = op + 2 + usize::from(strip);
    let word_at = word_at + line[word_at..].len() - line[word_at..].trim_start_matches([' ', '\t']).len();
    let word_end = line[word_at..]
        .find([' ', '\t', ';', '&', '|', '<', '>', '(', ')'])
        .map_or(line.len(), |e| word_at + e);
    let delimiter: String =
        line[word_at..word_end].chars().filter(|c| !matches!(c, '"' | '\'' | '\\')).collect();
    if delimiter.is_empty() {
        return None;
    }
    // The first control operator after the word, before any comment.
    let mut rest_at = None;
    for k in word_end..bytes.len() {
        if !top[k] {
            continue;
        }
        if bytes[k] == b'#' && matches!(bytes[k - 1], b' ' | b'\t') {
            break;
        }
        if matches!(bytes[k], b';' | b'&' | b'|') {
            // (`>&2`, `2>&1`, `&>f`: a redirection, not an operator.)
            let redirect =
                bytes[k] == b'&' && (matches!(bytes[k - 1], b'>' | b'<') || bytes.get(k + 1) == Some(&b'>'));
            if !redirect {
                rest_at = Some(k);
                break;
            }
        }
    }
    let rest_at = rest_at?;
    // Where the command holding the operator starts.
    let mut start = 0;
    for k in 0..op {
        if top[k] && matches!(bytes[k], b';' | b'&' | b'|' | b'(' | b'{') {
            start = k + 1;
        }
    }
    loop {
        let from = start + line[start..op].len() - line[start..op].trim_start().len();
        let word = line[from..op].split([' ', '\t']).next().unwrap_or("");
        start = from;
        if matches!(word, "if" | "then" | "do" | "else" | "elif" | "while" | "until" | "!") {
            start += word.len();
            continue;
        }
        if word.is_empty()
            || matches!(word, "}" | ")" | "done" | "fi" | "esac" | "{" | "time")
            || word.contains('(')
        {
            return None;
        }
        break;
    }
    // The body: the lines up to the delimiter's.
    let end = (at + 1..lines.len()).find(|&j| {
        let l = lines[j].strip_suffix('\r').unwrap_or(lines[j]);
        let l = if strip { l.trim_start_matches('\t') } else { l };
        l == delimiter
    })?;
    let mut grouped = format!("{}{{ {}", &line[..start], line[start..rest_at].trim_end());
    for body in &lines[at + 1..=end] {
        grouped.push('\n');
        grouped.push_str(body);
    }
    grouped.push_str("\n} ");
    grouped.push_str(&line[rest_at..]);
    Some((grouped, end + 1))
}

#[cfg(test)]
mod tests {
    use super::group_here_document_lines as grouped;

    /// The rest of an operator's line goes after a group of the command and its body; lines the
    /// grammar reads as bash does, or that cannot be regrouped safely, are left as they are.
    #[test]
    fn an_operator_line_that_goes_on_is_regrouped() {
        assert_eq!(grouped("a <<EOF; exit 0\nx\nEOF\nb"), "{ a <<EOF\nx\nEOF\n} ; exit 0\nb");
        assert_eq!(
            grouped("cat <<EOF | grep -q ok || true\n$(c)\nEOF"),
            "{ cat <<EOF\n$(c)\nEOF\n} | grep -q ok || true"
        );
        assert_eq!(
            grouped("true && cat <<-E >&2 | cat\n\tx\n\tE"),
            "true && { cat <<-E >&2\n\tx\n\tE\n} | cat"
        );
        assert_eq!(
            grouped("if grep -q x <<EOF; then :; fi\nb\nEOF"),
            "if { grep -q x <<EOF\nb\nEOF\n} ; then :; fi"
        );
        for same in [
            "cat <<EOF\nx; y\nEOF",
            "cat <<EOF # a; b\nx\nEOF",
            "cat <<EOF; x\nno end",
            "done <<EOF; x\nb\nEOF",
            "echo '<<EOF; x'\nEOF",
            "cat <<<x; y",
            "x=$(cat <<EOF); y\nb\nEOF",
        ] {
            assert_eq!(grouped(same), same);
        }
    }
}
