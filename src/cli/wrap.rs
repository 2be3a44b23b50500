//! Long lines of text output wrapped to the terminal's width (`check` and `explain` text, when
//! stdout is a terminal). Piped or redirected output is never wrapped, so scripts, tests and goldens
//! see one line per finding. Words are never split (a path longer than the width stays whole), and
//! colour escape sequences take no width (textwrap measures display width without them).

use std::io::{self, Write};

/// The width of the terminal on stdout in columns, when stdout is a terminal whose size is known.
pub fn terminal_width() -> Option<usize> {
    use std::io::IsTerminal;
    if !io::stdout().is_terminal() {
        return None;
    }
    terminal_size::terminal_size_of(io::stdout()).map(|(w, _)| usize::from(w.0)).filter(|w| *w >= 20)
}

/// Where a wrapped line's continuation lines start: under the text after the last gap of two or more
/// spaces in the first half of the line (a table's last column, an `explain` label's value), else 4
/// columns right of the line's own indentation.
fn hanging_indent(line: &str, width: usize) -> usize {
    let lead = line.len() - line.trim_start_matches(' ').len();
    let chars: Vec<char> = line.chars().collect();
    let mut column = None;
    let mut i = lead;
    while i < chars.len() && i <= width / 2 {
        if chars[i] == ' ' {
            let start = i;
            while i < chars.len() && chars[i] == ' ' {
                i += 1;
            }
            if i - start >= 2 && i < chars.len() && i <= width / 2 {
                column = Some(i);
            }
        } else {
            i += 1;
        }
    }
    column.unwrap_or(lead + 4).min(width / 2)
}

/// One line of output wrapped to `width` columns: the line itself when it fits, otherwise its
/// pieces, each at most `width` columns unless one word is longer.
pub fn wrap_line(line: &str, width: usize) -> Vec<String> {
    if textwrap::core::display_width(line) <= width {
        return vec![line.to_string()];
    }
    let lead = line.len() - line.trim_start_matches(' ').len();
    let indent = " ".repeat(hanging_indent(line, width));
    let options = textwrap::Options::new(width)
        .initial_indent(&line[..lead])
        .subsequent_indent(&indent)
        .break_words(false)
        // Paths and rule ids hold hyphens: a line never breaks inside a word.
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
    textwrap::wrap(&line[lead..], options).into_iter().map(|l| l.into_owned()).collect()
}

/// A writer that wraps every complete line written through it to `width` columns
/// ([`wrap_line`]); a last line without a newline is wrapped on [`Write::flush`] or drop.
pub struct WrapWriter<W: Write> {
    inner: W,
    width: usize,
    pending: Vec<u8>,
}

impl<W: Write> WrapWriter<W> {
    /// Wraps what is written to `inner` at `width` columns.
    pub fn new(inner: W, width: usize) -> Self {
        WrapWriter { inner, width, pending: Vec::new() }
    }

    fn write_line(&mut self, line: &[u8], newline: bool) -> io::Result<()> {
        let text = String::from_utf8_lossy(line);
        let pieces = wrap_line(&text, self.width);
        for (i, piece) in pieces.iter().enumerate() {
            self.inner.write_all(piece.as_bytes())?;
            if newline || i + 1 < pieces.len() {
                self.inner.write_all(b"\n")?;
            }
        }
        Ok(())
    }
}

impl<W: Write> Write for WrapWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        while let Some(end) = self.pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            self.write_line(&line[..end], true)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.pending.is_empty() {
            let line = std::mem::take(&mut self.pending);
            self.write_line(&line, false)?;
        }
        self.inner.flush()
    }
}

impl<W: Write> Drop for WrapWriter<W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_that_fits_is_kept_and_a_long_one_wraps_under_its_last_column() {
        assert_eq!(wrap_line("short line", 40), vec!["short line"]);
        let row = "a.yaml:3  warn  Pod ns/p  container app: declares ports but has no readinessProbe, so it gets traffic";
        let lines = wrap_line(row, 60);
        assert!(lines.len() > 1, "{lines:?}");
        assert!(lines.iter().all(|l| l.chars().count() <= 60), "{lines:?}");
        assert!(lines[0].starts_with("a.yaml:3  warn  Pod ns/p  container app:"), "{lines:?}");
        // Continuation lines start under the message column (after "Pod ns/p  ").
        let column = row.find("container").unwrap();
        for l in &lines[1..] {
            assert_eq!(l.len() - l.trim_start().len(), column, "{l:?}");
        }
        // Nothing is lost or reordered.
        let joined: Vec<&str> = lines.iter().flat_map(|l| l.split_whitespace()).collect();
        assert_eq!(joined, row.split_whitespace().collect::<Vec<_>>());
    }

    #[test]
    fn indented_lines_keep_their_indent_and_long_words_stay_whole() {
        let line = format!("    startup:   GET /livez on port 8080; {}", "word ".repeat(20));
        let lines = wrap_line(&line, 50);
        assert!(lines[0].starts_with("    startup:   GET"), "{lines:?}");
        assert!(lines[1..].iter().all(|l| l.starts_with(&" ".repeat(15)) && !l.starts_with(&" ".repeat(16))));
        let hyphens = "x  tests/fixtures/corpus/deployment-microservices-demo-cartservice.yaml:32  warn";
        assert!(
            wrap_line(hyphens, 40)
                .iter()
                .any(|l| l.contains("deployment-microservices-demo-cartservice.yaml:32"))
        );
        let path = format!("x  {}", "p/".repeat(40));
        let lines = wrap_line(&path, 30);
        assert!(lines.iter().any(|l| l.contains(&"p/".repeat(40))), "{lines:?}");
    }

    #[test]
    fn the_writer_wraps_each_line_and_the_last_one_on_flush() {
        let mut out = Vec::new();
        {
            let mut w = WrapWriter::new(&mut out, 20);
            write!(w, "one two three four five six\nshort\nseven eight nine ten eleven").unwrap();
            w.flush().unwrap();
        }
        let text = String::from_utf8(out).unwrap();
        assert!(text.lines().all(|l| l.chars().count() <= 20), "{text}");
        assert!(text.contains("\nshort\n"), "{text}");
        assert!(text.ends_with("eleven"), "{text}");
    }
}
