//! Stage 2a: a script parsed by tree-sitter-bash, within a cost bound and around the grammar's
//! known gaps (see `docs/shell-parser.md`).
//!
//! - **Cost.** tree-sitter's error recovery is quadratic in time and memory on some shapes (16 KiB
//!   of `a|`: about a second and 680 MB), and it happens at the end of the input, where no progress
//!   callback runs, and grows with the tokens parsed together. So a script is parsed in pieces of
//!   whole lines (cut after a newline that does not continue a line) of a bounded [`weight`], each
//!   piece parsed as an included range of the whole text, so node offsets stay the script's. A piece that ends inside a construct (an `if` block,
//!   a quote, a here-document) has a syntax error there, and the analysis stops at that line. An
//!   object's pieces may cost at most [`MAX_OBJECT_PARSE_AREA`] (the sum of their squared weights).
//! - **Grammar gaps.** A copy of the script is parsed in which `<>` (read-write redirection) reads
//!   `> ` and a `#` inside a word (bash starts a comment only at a word's start) reads `_`: the same
//!   length, so every node's text is taken from the original script by its byte range. Two
//!   here-documents on one line (`cat <<A <<B`): the second body is found by its delimiter and left
//!   out, as the first is.

use std::ops::Range;

use crate::engine::exec::kinds::KindName;
use tree_sitter::{Node, Parser, Point, Tree};

/// Heaviest piece of a script parsed at once (see [`weight`]; probe scripts weigh a few dozen to a
/// few hundred).
pub(super) const PARSE_CHUNK: usize = 1024;

/// Heaviest single line parsed (see [`weight`]); a longer line ends the analysis.
pub(super) const MAX_LINE_WEIGHT: usize = 2 * PARSE_CHUNK;

/// Most parsing one object's exec probes may do together, as the sum of the squares of the parsed
/// pieces' [`weight`]s: eight full pieces, or two lines of [`MAX_LINE_WEIGHT`].
pub const MAX_OBJECT_PARSE_AREA: usize = 8 * PARSE_CHUNK * PARSE_CHUNK;

/// Why a script (or its end) was not analysed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ParseGap {
    /// A syntax error on this line (1-based): the commands from it on were not analysed.
    SyntaxError(usize),
    /// A line heavier than [`MAX_LINE_WEIGHT`] on this line (1-based): from it on, not analysed.
    LongLine(usize),
    /// Over [`MAX_OBJECT_PARSE_AREA`]: the script (from this line on) was not parsed.
    OverParseBudget(usize),
    /// The grammar could not be loaded (a tree-sitter version mismatch): nothing parsed.
    NoGrammar,
}

impl ParseGap {
    /// The note's reason, for [`super::analyze`]; `cmd_line` when the gap is in a cmd `/c` command
    /// line (parsed like a shell script, but it is no shell script to the user).
    pub(super) fn reason(self, cmd_line: bool) -> String {
        let (its, lines) = if cmd_line {
            ("its cmd command line", "its cmd command lines")
        } else {
            ("its shell script", "its shell scripts")
        };
        match self {
            ParseGap::SyntaxError(line) if cmd_line => format!(
                "its cmd command line has a construct probegate does not read (probegate reads cmd lines with the shell grammar after applying cmd's own rules; an unclosed quote, for one): probegate did not analyse the commands from line {line} on"
            ),
            ParseGap::SyntaxError(line) => format!(
                "{its} has a syntax error at line {line} (or a construct probegate's parser misreads, or a block longer than probegate parses at once): probegate did not analyse the commands from that line on"
            ),
            ParseGap::LongLine(line) => format!(
                "line {line} of {its} has more than {MAX_LINE_WEIGHT} operators, blanks and quotes, more than probegate parses at once: the commands from that line on were not analysed"
            ),
            ParseGap::OverParseBudget(line) => format!(
                "{lines} are over what probegate parses for one object's exec probes together (as much as eight pieces of {PARSE_CHUNK} operators, blanks and quotes): the commands from line {line} on were not analysed"
            ),
            ParseGap::NoGrammar => "the shell grammar could not be loaded".to_string(),
        }
    }
}

/// A parsed script: one tree per piece, in order, with where the analysis stops.
#[derive(Debug, Clone)]
pub(super) struct Parsed {
    /// The pieces' trees (byte offsets are the script's).
    pub(super) trees: Vec<Tree>,
    /// Byte offset where the analysis stops (the script's length when it all is analysed).
    pub(super) cut: usize,
    /// Byte ranges that are here-document bodies the grammar read as commands.
    pub(super) skips: Vec<Range<usize>>,
    /// Why the analysis stops before the end.
    pub(super) gap: Option<ParseGap>,
    /// The delimiter of a here-document in the last piece that no line ends (see
    /// [`open_heredoc`]), when the piece has a syntax error.
    pub(super) open_heredoc: Option<String>,
    /// The parse allowance this parse spent (the sum of its pieces' squared weights, reparses
    /// included: see [`MAX_OBJECT_PARSE_AREA`]).
    pub(super) area: usize,
    /// Whether the allowance fell short anywhere in this parse (an [`ParseGap::OverParseBudget`]
    /// gap, or a syntax error's recovery that could not re-read a clean prefix): such a parse
    /// depends on the allowance it was made with, not on the text alone, and is never shared
    /// across evaluations (see [`super::ParseCache`]).
    pub(super) area_short: bool,
}

impl Parsed {
    /// Whether this parse is what any parse of its text with at least [`Parsed::area`] of
    /// allowance left gives: the allowance never fell short, so every step that checked it found
    /// enough, and would with more.
    pub(super) fn depends_on_text_alone(&self) -> bool {
        !self.area_short
            && !matches!(self.gap, Some(ParseGap::OverParseBudget(_)) | Some(ParseGap::NoGrammar))
    }
}

/// The parser for the bash grammar (`None` if the grammar does not load).
pub(super) fn new_parser() -> Option<Parser> {
    let mut parser = Parser::new();
    parser.set_language(&tree_sitter_bash::LANGUAGE.into()).ok()?;
    Some(parser)
}

/// The text the parser reads: `text` with the grammar's gaps patched, byte for byte the same length.
/// `<>` (read and write) reads `> `; a `#` that bash reads as part of a word (after a character
/// that is not a blank, an operator, `$`, `{` or a backquote) reads `_`; a lone `$` right before an
/// operator other than `(` reads `_`: bash and dash read it as the text `$`, tree-sitter-bash
/// 0.25.1 as an error (`echo $; pg_isready -h db`, what the kubelet makes of a probe's `echo $$;
/// ...`: s21); every byte of a non-ASCII
/// character reads `.`. tree-sitter-bash 0.25.1's external scanner reads out of bounds on some
/// (`echo ${` followed by any character from U+E0000 up crashes the process with SIGSEGV, found by
/// `tests/properties.rs`); to bash they are word characters, never blanks, operators or part of a
/// variable name, as `.` is, so the tree keeps its shape.
pub(super) fn patch_gaps(text: &str) -> Vec<u8> {
    let mut b = text.as_bytes().to_vec();
    // Inside `${...}` a `#` is an operator the grammar reads (`${X#*/}`, `${X##*@}`), left as is.
    let mut braces = 0usize;
    for i in 0..b.len() {
        let prev = if i > 0 { b[i - 1] } else { b'\n' };
        if b[i] == b'{' && prev == b'$' {
            braces += 1;
        } else if (b[i] == b'}' && braces > 0) || b[i] == b'\n' {
            // (An unclosed `${` in quotes ends with its line.)
            braces = if b[i] == b'\n' { 0 } else { braces - 1 };
        }
        if !b[i].is_ascii() {
            b[i] = b'.';
        } else if b[i] == b'<' && b.get(i + 1) == Some(&b'>') && prev != b'<' {
            b[i + 1] = b' ';
            b[i] = b'>';
        } else if b[i] == b'#' && braces == 0 && !b" \t\n\r;&|()<>${`".contains(&prev) {
            b[i] = b'_';
        } else if b[i] == b'$' && b.get(i + 1).is_some_and(|c| b";&|)<>".contains(c)) {
            // (A run of `$` before an operator: pairs are `$$`, an odd one out is the lone `$`.)
            let run = b[..i].iter().rev().take_while(|&&c| c == b'$').count();
            let escaped = i > run && b[i - run - 1] == b'\\';
            if run % 2 == 0 && !escaped {
                b[i] = b'_';
            }
        }
    }
    patch_heredoc_first_lines(&mut b);
    b
}

/// The first line of an unquoted here-document's body that starts with blanks and then `$`
/// reads its first blank as `.`: tree-sitter-bash 0.25.1 then finds no `$(...)` in the whole
/// body (`grep -q ok <<-EOF` / TAB `$(pg_isready -h db)` / TAB `EOF` parses to an empty
/// `heredoc_body`), while bash and dash run it (with `<<-` the tabs are stripped: bash manual,
/// "Here Documents"; break10 M4). Only when a later line is the delimiter (after its leading
/// tabs, with `<<-`), so a line that is not a body is left alone. The walk reads the body from
/// the text as written.
fn patch_heredoc_first_lines(b: &mut [u8]) {
    let mut at = 0;
    while let Some(nl) = b[at..].iter().position(|&c| c == b'\n').map(|n| at + n) {
        let line = &b[at..nl];
        let next = nl + 1;
        let op = line
            .windows(2)
            .enumerate()
            .find(|&(i, w)| w == b"<<" && (i == 0 || line[i - 1] != b'<') && line.get(i + 2) != Some(&b'<'));
        if let Some((i, _)) = op {
            let rest = &line[i + 2..];
            let strip = rest.first() == Some(&b'-');
            let rest = if strip { &rest[1..] } else { rest };
            let word_start = rest.iter().position(|c| !matches!(c, b' ' | b'\t')).unwrap_or(rest.len());
            let word: Vec<u8> = rest[word_start..]
                .iter()
                .copied()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_')
                .collect();
            let blanks = b[next..].iter().take_while(|c| matches!(c, b' ' | b'\t')).count();
            let dollar = b.get(next + blanks) == Some(&b'$');
            if !word.is_empty() && blanks > 0 && dollar {
                let ends = b[next..].split(|&c| c == b'\n').skip(1).any(|l| {
                    let l = l.strip_suffix(b"\r").unwrap_or(l);
                    let l = if strip { &l[l.iter().take_while(|&&c| c == b'\t').count()..] } else { l };
                    l == word.as_slice()
                });
                if ends {
                    b[next] = b'.';
                }
            }
        }
        at = next;
    }
}

/// A piece's parse cost measure: its bytes that may start or end a token (all but ASCII letters,
/// digits and `_`). tree-sitter's cost grows with the tokens, and a long word is one token.
pub(super) fn weight(text: &[u8]) -> usize {
    text.iter().filter(|b| !(b.is_ascii_alphanumeric() || **b == b'_')).count()
}

/// The pieces `text` is parsed in: whole lines (cut after a newline not preceded by a backslash),
/// as many as fit in a [`weight`] of [`PARSE_CHUNK`], or one line of at most [`MAX_LINE_WEIGHT`];
/// with where a line over that begins (the pieces stop before it).
pub(super) fn chunk_ranges(text: &[u8]) -> (Vec<Range<usize>>, Option<usize>) {
    let mut out = Vec::new();
    let (mut start, mut at, mut w) = (0, 0, 0);
    while at < text.len() {
        let mut end = at;
        while end < text.len() && !(text[end] == b'\n' && (end == 0 || text[end - 1] != b'\\')) {
            end += 1;
        }
        let end = (end + 1).min(text.len());
        let line = weight(&text[at..end]);
        if w > 0 && w + line > PARSE_CHUNK {
            out.push(start..at);
            (start, w) = (at, 0);
        }
        if line > MAX_LINE_WEIGHT {
            return (out, Some(at));
        }
        w += line;
        at = end;
    }
    if start < text.len() {
        out.push(start..text.len());
    }
    (out, None)
}

/// Line (1-based) and start of the line holding byte `at`.
pub(super) fn line_of(src: &[u8], at: usize) -> (usize, usize) {
    let at = at.min(src.len());
    let start = src[..at].iter().rposition(|&c| c == b'\n').map_or(0, |n| n + 1);
    (src[..start].iter().filter(|&&c| c == b'\n').count() + 1, start)
}

fn point(src: &[u8], at: usize) -> Point {
    let (line, start) = line_of(src, at);
    Point { row: line - 1, column: at - start }
}

/// Parses `text` in pieces, charging each piece's squared length to `area_left`.
pub(super) fn parse_script(parser: &mut Parser, text: &str, area_left: &std::cell::Cell<usize>) -> Parsed {
    let before = area_left.get();
    let mut parsed = parse_script_within(parser, text, area_left);
    parsed.area = before - area_left.get();
    parsed
}

/// [`parse_script`] without the allowance it spent (`area`).
fn parse_script_within(parser: &mut Parser, text: &str, area_left: &std::cell::Cell<usize>) -> Parsed {
    let mut patched = patch_gaps(text);
    let mut parsed = Parsed {
        trees: Vec::new(),
        cut: text.len(),
        skips: Vec::new(),
        gap: None,
        open_heredoc: None,
        area: 0,
        area_short: false,
    };
    let (ranges, long_line) = chunk_ranges(&patched);
    let last = ranges.len().saturating_sub(1);
    for (i, range) in ranges.into_iter().enumerate() {
        let w = weight(&patched[range.clone()]);
        let area = w.saturating_mul(w);
        let Some(rest) = area_left.get().checked_sub(area) else {
            parsed.cut = line_of(&patched, range.start).1;
            parsed.gap = Some(ParseGap::OverParseBudget(line_of(&patched, range.start).0));
            return parsed;
        };
        area_left.set(rest);
        let included = tree_sitter::Range {
            start_byte: range.start,
            end_byte: range.end,
            start_point: point(&patched, range.start),
            end_point: point(&patched, range.end),
        };
        // A here-document ended where bash does not end it is re-read with that line patched (a
        // few times at most: each pass patches one more line).
        // (A piece without `<<` holds no here-document: its tree is not walked for one.)
        let heredoc = patched[range.start..range.end].windows(2).any(|w| w == b"<<");
        // A piece with a syntax error is re-read once with its `[` tests read as commands (see
        // [`patch_test_brackets`]).
        let mut tree = None;
        let mut brackets_patched = false;
        for pass in 0..=MAX_HEREDOC_REPARSES + 1 {
            // Each pass after the first parses the piece again: it costs the piece's area too
            // (s12, issue #9: 16 KiB of `cat <<EOF`/`EOF ` re-read each piece 18 times, 69 ms).
            if pass > 0 {
                let Some(rest) = area_left.get().checked_sub(area) else {
                    parsed.cut = line_of(&patched, range.start).1;
                    parsed.gap = Some(ParseGap::OverParseBudget(line_of(&patched, range.start).0));
                    return parsed;
                };
                area_left.set(rest);
            }
            parser.reset();
            tree = parser.set_included_ranges(&[included]).ok().and_then(|()| parser.parse(&patched, None));
            if let Some(line) =
                tree.as_ref().filter(|_| heredoc).and_then(|t| misread_heredoc_end(t.root_node(), &patched))
            {
                patch_line_start(&mut patched, line);
            } else if !brackets_patched
                && tree.as_ref().is_some_and(|t| t.root_node().has_error())
                && patch_test_brackets(&mut patched[range.clone()])
            {
                brackets_patched = true;
            } else {
                break;
            }
        }
        let Some(tree) = tree else {
            parsed.cut = range.start;
            parsed.gap = Some(ParseGap::SyntaxError(line_of(&patched, range.start).0));
            return parsed;
        };
        let error =
            first_error(tree.root_node(), &patched, &mut parsed.skips, i < last || long_line.is_some());
        if let Some(at) = error {
            if i == last && long_line.is_none() {
                parsed.open_heredoc = open_heredoc(tree.root_node(), &patched);
            }
            // Bash reads a whole command before running it: the top-level command holding the
            // error does not run, from its first line on.
            let root = tree.root_node();
            let mut c = root.walk();
            // (A command the error follows with no `;`, `&` or newline between is that command:
            // `a |` then nothing.)
            let holding = root
                .children(&mut c)
                .filter(|k| {
                    k.start_byte() <= at
                        && (at < k.end_byte()
                            || !patched[k.end_byte()..at].iter().any(|b| b"\n;&".contains(b)))
                })
                .map(|k| k.start_byte());
            let (line, start) = line_of(&patched, holding.min().unwrap_or(at).min(at));
            drop(c);
            // The grammar's recovery may hold whole lines bash runs before the error (`check\nif
            // true; then` with no `fi`): the last line start before the error's line up to which
            // the text parses without error is where bash stops.
            let (_, error_line) = line_of(&patched, error_end(root, at));
            let clean = (start < error_line)
                .then(|| {
                    clean_prefix(
                        parser,
                        &patched,
                        range.start,
                        start,
                        error_line,
                        area_left,
                        &mut parsed.area_short,
                    )
                })
                .flatten();
            parsed.gap = Some(ParseGap::SyntaxError(line));
            match clean {
                Some((end, clean_tree, skips)) => {
                    parsed.cut = end;
                    parsed.gap = Some(ParseGap::SyntaxError(line_of(&patched, end).0));
                    parsed.skips.extend(skips);
                    parsed.trees.push(clean_tree);
                }
                None => {
                    parsed.cut = start;
                    parsed.trees.push(tree);
                }
            }
            return parsed;
        }
        parsed.trees.push(tree);
    }
    if let Some(at) = long_line {
        parsed.cut = at;
        parsed.gap = Some(ParseGap::LongLine(line_of(&patched, at).0));
    }
    parsed
}

/// Where the syntax error starting at `at` ends: the end of the error node that starts there (a
/// construct left open reaches the end of the text), else `at`.
fn error_end(root: Node<'_>, at: usize) -> usize {
    let mut node = root.descendant_for_byte_range(at, at);
    while let Some(n) = node {
        if n.start_byte() != at {
            break;
        }
        if n.is_error() || n.is_missing() {
            return n.end_byte().max(at);
        }
        node = n.parent();
    }
    at
}

/// Most line starts tried by [`clean_prefix`].
const MAX_PREFIX_TRIES: usize = 8;

/// The last line start `end` in `(start, before]` such that `src[from..end]` parses without an
/// error (bash has run every command before it when it meets the error), with its tree; at most
/// [`MAX_PREFIX_TRIES`] line starts are tried, from `before` back, within the parse allowance
/// (`short` set when it runs out).
fn clean_prefix(
    parser: &mut Parser,
    src: &[u8],
    from: usize,
    start: usize,
    before: usize,
    area_left: &std::cell::Cell<usize>,
    short: &mut bool,
) -> Option<(usize, tree_sitter::Tree, Vec<Range<usize>>)> {
    let mut end = before;
    for _ in 0..MAX_PREFIX_TRIES {
        if end <= start.max(from) {
            return None;
        }
        // (A line after a backslash-newline continues the one before: not a command boundary.)
        if !src[..end].ends_with(b"\\\n") {
            let w = weight(&src[from..end]);
            let Some(rest) = area_left.get().checked_sub(w.saturating_mul(w)) else {
                *short = true;
                return None;
            };
            area_left.set(rest);
            let included = tree_sitter::Range {
                start_byte: from,
                end_byte: end,
                start_point: point(src, from),
                end_point: point(src, end),
            };
            parser.reset();
            let tree = parser.set_included_ranges(&[included]).ok().and_then(|()| parser.parse(src, None))?;
            let mut skips = Vec::new();
            if first_error(tree.root_node(), src, &mut skips, true).is_none() {
                return Some((end, tree, skips));
            }
        }
        end = line_of(src, end - 1).1;
    }
    None
}

/// The start of the first syntax error under `root` (an error node or a missing token), here-document
/// bodies the grammar misread added to `skips`; with `cut_piece`, a here-document whose body does not
/// end in the piece is an error too.
fn first_error(root: Node<'_>, src: &[u8], skips: &mut Vec<Range<usize>>, cut_piece: bool) -> Option<usize> {
    let mut first: Option<usize> = None;
    let mut cursor = root.walk();
    let mut explained: Vec<usize> = Vec::new();
    loop {
        let node = cursor.node();
        if node.kind_name() == "heredoc_redirect" {
            explain_heredocs(node, src, skips, &mut explained);
            let mut c = node.walk();
            if cut_piece && !node.children(&mut c).any(|k| k.kind_name() == "heredoc_end") {
                first = Some(first.map_or(node.start_byte(), |f| f.min(node.start_byte())));
            }
        }
        let error = (node.is_error() && !explained.contains(&node.start_byte())) || node.is_missing();
        if error {
            first = Some(first.map_or(node.start_byte(), |f| f.min(node.start_byte())));
        }
        let descend = node.has_error() && !node.is_missing() || node.kind_name() == "heredoc_redirect";
        if !error && descend && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                // A statement that starts in a skipped body and runs past it: the body was misread.
                let mut c = root.walk();
                for n in root.children(&mut c) {
                    if skips.iter().any(|s| s.contains(&n.start_byte()) && n.end_byte() > s.end) {
                        first = Some(first.map_or(n.start_byte(), |f| f.min(n.start_byte())));
                    }
                }
                return first;
            }
        }
    }
}

/// Makes every `[` that may start a test command (a `[` alone as a word: after a line start, a
/// blank or one of `;&|(`, and before a blank) read as the word `_`, so that `[ ... ]` is parsed as
/// a simple command named `[` (its text is still taken from the script), as `test ...` is; returns
/// whether it patched one.
///
/// tree-sitter-bash 0.25 reads the words of `[ ]` with its own expression grammar, which knows the
/// test operators only unquoted: an operator or parenthesis that is escaped or quoted (`[ \( -f /x
/// \) ]`, `[ "(" ... ")" ]`, `[ a \< b ]`, `[ a \= b ]`, `[ "$a" "=" b ]`, `-a \( ... \)`), as
/// POSIX scripts must write `(`, `)`, `<` and `>`, is a syntax error, and the grammar's recovery
/// then swallows the commands around it (`[ \( -f /x \) ] && pg_isready -h db` was not analysed at
/// all). `test` and `[` take plain words in bash and dash, so the analysis reads them the same way
/// either way (`script::cond`). Used only on a piece with a syntax error: a `[ ]` in a `case`
/// pattern (`[ ])`) would read differently. (A `[` inside a word, after `\ `, read as `_` is
/// still a word character: the word and its text are unchanged.)
fn patch_test_brackets(piece: &mut [u8]) -> bool {
    let mut patched = false;
    for i in 0..piece.len() {
        let prev = if i > 0 { piece[i - 1] } else { b'\n' };
        if piece[i] == b'[' && matches!(piece.get(i + 1), Some(b' ' | b'\t')) && b" \t\n;&|(".contains(&prev)
        {
            piece[i] = b'_';
            patched = true;
        }
    }
    patched
}

/// The delimiter of the first here-document under `root` that has no end line, its quotes
/// removed. Bash 5.2 and dash end such a here-document at the end of the script ("here-document
/// at line 1 delimited by end-of-file" is a warning): its body, up to there, is the command's
/// input (`sh <<EOF` then commands and a last line `EOF ` with a trailing blank runs them all).
fn open_heredoc(root: Node<'_>, src: &[u8]) -> Option<String> {
    let mut stack = vec![root];
    let mut open: Option<Node<'_>> = None;
    while let Some(n) = stack.pop() {
        if n.kind_name() == "heredoc_start" {
            let parent = n.parent()?;
            let mut c = parent.walk();
            let ended = parent.children(&mut c).any(|k| k.kind_name() == "heredoc_end" && !k.is_missing());
            if !ended && open.is_none_or(|o| n.start_byte() < o.start_byte()) {
                open = Some(n);
            }
        }
        let mut c = n.walk();
        stack.extend(n.children(&mut c));
    }
    let word = &src[open?.start_byte()..open?.end_byte()];
    let delimiter: Vec<u8> = word.iter().copied().filter(|b| !matches!(b, b'"' | b'\'' | b'\\')).collect();
    String::from_utf8(delimiter).ok().filter(|d| !d.is_empty() && !d.contains('\n'))
}

/// Most times one piece is parsed again for here-document ends the grammar misread.
const MAX_HEREDOC_REPARSES: usize = 16;

/// The line range of a here-document end the grammar accepts and bash does not, if there is one.
/// Bash ends a here-document only at a line that is exactly its delimiter (after the leading tabs,
/// only tabs, with `<<-`): `EOF ` with a trailing blank, ` EOF` indented, or `<<-` with a
/// space-indented delimiter are lines of the body (bash manual, "Here Documents"; checked on bash
/// 5.2). The grammar trims blanks around it.
fn misread_heredoc_end(root: Node<'_>, src: &[u8]) -> Option<Range<usize>> {
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        if node.kind_name() == "heredoc_redirect" {
            let mut c = node.walk();
            let kids: Vec<Node<'_>> = node.children(&mut c).collect();
            let start = kids.iter().find(|k| k.kind_name() == "heredoc_start");
            let end = kids.iter().find(|k| k.kind_name() == "heredoc_end");
            if let (Some(start), Some(end)) = (start, end) {
                let op = &src[node.start_byte()..start.start_byte()];
                let strip_tabs = op.windows(3).any(|w| w == b"<<-");
                let mut delimiter: Vec<u8> = src[start.start_byte()..start.end_byte()]
                    .iter()
                    .copied()
                    .filter(|b| !matches!(b, b'"' | b'\'' | b'\\'))
                    .collect();
                // A carriage return ending the word is part of it for bash (a script with CRLF
                // line ends: `<<EOF\r` ends at `EOF\r`); the grammar leaves it out.
                if src.get(start.end_byte()) == Some(&b'\r') {
                    delimiter.push(b'\r');
                }
                let (_, line_start) = line_of(src, end.start_byte());
                let line_end =
                    src[line_start..].iter().position(|&b| b == b'\n').map_or(src.len(), |p| line_start + p);
                let mut line = &src[line_start..line_end];
                while strip_tabs && line.first() == Some(&b'\t') {
                    line = &line[1..];
                }
                if line != delimiter.as_slice() {
                    return Some(line_end - line.len()..line_end);
                }
            }
        }
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return None;
            }
        }
    }
}

/// Makes `line` in `src` read as a line of the here-document's body: its first character (after
/// the tabs `<<-` strips) becomes a word character. (The grammar ends a here-document at a line
/// that starts with its delimiter after blanks, so blanks alone are not enough: `EOF_` still ends
/// it.) The body's text is not analysed as commands, and the original text is what is read.
fn patch_line_start(src: &mut [u8], line: Range<usize>) {
    if let Some(b) = src.get_mut(line.start) {
        *b = if *b == b'_' { b'.' } else { b'_' };
    }
}

/// `cat <<A <<B`: the grammar reads the second `<<` as an error and `<B` as a file redirection,
/// then B's body as commands. Each such error is explained (its start added to `explained`) and
/// the body it opens, from the line after the previous body to its delimiter line, added to `skips`.
fn explain_heredocs(node: Node<'_>, src: &[u8], skips: &mut Vec<Range<usize>>, explained: &mut Vec<usize>) {
    let mut c = node.walk();
    let children: Vec<Node<'_>> = node.children(&mut c).collect();
    let Some(end) = children.iter().find(|k| k.kind_name() == "heredoc_end") else {
        return;
    };
    let mut at =
        src[end.end_byte()..].iter().position(|&b| b == b'\n').map_or(src.len(), |p| end.end_byte() + p + 1);
    for pair in children.windows(2) {
        let (err, redirect) = (pair[0], pair[1]);
        if !(err.is_error()
            && &src[err.start_byte()..err.end_byte()] == b"<"
            && redirect.kind_name() == "file_redirect")
        {
            continue;
        }
        let word = &src[redirect.start_byte()..redirect.end_byte()];
        let Some(word) = word.strip_prefix(b"<") else {
            continue;
        };
        let strip = word.starts_with(b"-");
        let delimiter: Vec<u8> = word
            .iter()
            .skip(usize::from(strip))
            .copied()
            .filter(|b| !matches!(b, b'"' | b'\'' | b'\\'))
            .collect();
        let body_start = at;
        while at < src.len() {
            let line_end = src[at..].iter().position(|&b| b == b'\n').map_or(src.len(), |p| at + p);
            let mut line = &src[at..line_end];
            while strip && line.first() == Some(&b'\t') {
                line = &line[1..];
            }
            at = (line_end + 1).min(src.len());
            if line == delimiter.as_slice() {
                break;
            }
        }
        skips.push(body_start..at);
        explained.push(err.start_byte());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lone `$` before an operator is the text `$` to bash and dash, and reads as a word: not
    /// one of `$$`, escaped, or starting `$(`.
    #[test]
    fn a_lone_dollar_before_an_operator_reads_as_a_word() {
        let mut parser = new_parser().expect("grammar");
        for (script, patched) in [
            ("echo $; x", "echo _; x"),
            ("echo x$|x", "echo x_|x"),
            ("(echo $)", "(echo _)"),
            ("echo $$; x", "echo $$; x"),
            ("echo $$$; x", "echo $$_; x"),
            ("echo \\$; x", "echo \\$; x"),
            ("echo $(x); y", "echo $(x); y"),
        ] {
            assert_eq!(String::from_utf8_lossy(&patch_gaps(script)), patched, "{script:?}");
            let parsed = parse_script(&mut parser, script, &std::cell::Cell::new(MAX_OBJECT_PARSE_AREA));
            assert_eq!(parsed.gap, None, "{script:?}");
        }
    }

    /// The here-document end the tree holds is the line bash ends it at (bash 5.2: a line exactly
    /// the delimiter, after leading tabs with `<<-`), however the grammar would have read it.
    #[test]
    fn a_here_document_ends_where_bash_ends_it() {
        let mut parser = new_parser().expect("grammar");
        for (script, end_line) in [
            ("cat <<EOF\nx\nEOF \nEOF\n", 4),
            ("cat <<EOF\nx\n EOF\nEOFX\nEOF\n", 5),
            ("cat <<-EOF\nx\n  EOF\n\t\tEOF\n", 4),
            ("cat <<'EOF'\nx\nEOF\t\nEOF\n", 4),
            ("cat <<EOF\nx\nEOF\n", 3),
        ] {
            let parsed = parse_script(&mut parser, script, &std::cell::Cell::new(MAX_OBJECT_PARSE_AREA));
            assert_eq!(parsed.gap, None, "{script:?}");
            let root = parsed.trees[0].root_node();
            assert_eq!(misread_heredoc_end(root, script.as_bytes()), None, "{script:?}");
            let mut ends = Vec::new();
            let mut stack = vec![root];
            while let Some(n) = stack.pop() {
                if n.kind_name() == "heredoc_end" {
                    ends.push(n.start_position().row + 1);
                }
                let mut c = n.walk();
                stack.extend(n.children(&mut c));
            }
            assert_eq!(ends, vec![end_line], "{script:?}");
        }
    }
}
