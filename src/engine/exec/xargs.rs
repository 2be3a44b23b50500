//! `xargs [OPTIONS] COMMAND ARGS`: a wrapper whose command takes more arguments from its standard
//! input (GNU findutils xargs(1)). When that input is a literal the script gives (`echo db |`,
//! `printf`, a here-string, a here-document), the command lines xargs runs are known and are
//! analysed as if written; otherwise the arguments are values known only at run time, never a
//! host that denies.
//!
//! Status: "xargs exits with status 123 if any invocation of the command exited with status
//! 1-125" (124 for 255, 125 for a signal, 126/127 when the command cannot run: xargs(1), "EXIT
//! STATUS"), so each invocation's failure is the probe's.

use super::context::{Ctx, basename, is_reserved_char};
use super::script::Overrides;
use super::{Dependency, MAX_DEPTH, RefKind};

/// At most this many command lines xargs would run are analysed; the rest are not (a miss, never
/// a guess).
const MAX_INVOCATIONS: usize = 16;

/// What xargs' options say about the command and how its input is read.
#[derive(Debug, Default, PartialEq, Eq)]
struct Options {
    /// Index of the command among xargs' arguments.
    command_at: usize,
    /// `-I R`, `-i[R]`, `--replace[=R]`: R in the command's words is each input line.
    replace: Option<String>,
    /// `-n N`, `--max-args=N`: at most N items per command line.
    max_args: Option<usize>,
    /// `-L N`, `-l[N]`, `--max-lines[=N]`: at most N input lines per command line.
    max_lines: Option<usize>,
    /// `-r`, `--no-run-if-empty`: no command line for empty input.
    no_run_if_empty: bool,
    /// Input read another way than the default blank-separated items of standard input (`-0`,
    /// `-d`, `-a FILE`, an end-of-file string): the command lines are not followed.
    other_input: bool,
}

/// Parses xargs' options (GNU findutils xargs(1), getopt_long: short options may be clustered,
/// a value attached or the next word).
fn options(args: &[String]) -> Options {
    // Short options whose value is required (attached or the next word), or optional (attached
    // only).
    const REQUIRED: &str = "aEdILnPs";
    const OPTIONAL: &str = "eil";
    let mut o = Options::default();
    let mut k = 0;
    let set = |o: &mut Options, opt: char, value: Option<&str>| match opt {
        'I' | 'i' => {
            o.replace = Some(value.filter(|v| !v.is_empty()).unwrap_or("{}").to_string());
            // -I implies -L 1 (xargs(1)).
            o.max_lines = Some(1);
            o.max_args = None;
        }
        'n' => {
            o.max_args = value.and_then(|v| v.parse().ok());
            o.max_lines = None;
        }
        'L' | 'l' => {
            o.max_lines = Some(value.filter(|v| !v.is_empty()).and_then(|v| v.parse().ok()).unwrap_or(1));
            o.max_args = None;
        }
        'r' => o.no_run_if_empty = true,
        '0' | 'a' | 'd' => o.other_input = true,
        'E' | 'e' => o.other_input |= value.is_some_and(|v| !v.is_empty()),
        _ => {}
    };
    while k < args.len() {
        let a = args[k].as_str();
        if a == "--" {
            k += 1;
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let short = match name {
                "replace" => 'i',
                "max-args" => 'n',
                "max-lines" => 'l',
                "no-run-if-empty" => 'r',
                "null" => '0',
                "arg-file" => 'a',
                "delimiter" => 'd',
                "eof" => 'e',
                _ => '-',
            };
            // `--max-args N`, `--arg-file F`, ... (a required value may be the next word).
            let takes_next = matches!(
                name,
                "max-args" | "arg-file" | "delimiter" | "max-procs" | "max-chars" | "process-slot-var"
            );
            let value = match value {
                None if takes_next => {
                    k += 1;
                    args.get(k).map(String::as_str)
                }
                v => v,
            };
            set(&mut o, short, value);
            k += 1;
            continue;
        }
        let Some(cluster) = a.strip_prefix('-').filter(|c| !c.is_empty()) else { break };
        for (at, c) in cluster.char_indices() {
            let attached = &cluster[at + c.len_utf8()..];
            if REQUIRED.contains(c) {
                let value = if attached.is_empty() {
                    k += 1;
                    args.get(k).map(String::as_str)
                } else {
                    Some(attached)
                };
                set(&mut o, c, value);
                break;
            }
            if OPTIONAL.contains(c) {
                set(&mut o, c, Some(attached));
                break;
            }
            set(&mut o, c, None);
        }
        k += 1;
    }
    o.command_at = k.min(args.len());
    o
}

/// The command lines xargs runs for `input` (its standard input, a literal), each the extra
/// words (with `replace`, the items that stand for its placeholder), or `None` when xargs would
/// read the input in a way not followed here (quotes and backslashes, which xargs interprets).
fn invocations(o: &Options, input: &str) -> Option<Vec<Vec<String>>> {
    if o.other_input || input.contains(['"', '\'', '\\']) {
        return None;
    }
    let blank = |c: char| c == ' ' || c == '\t';
    if o.replace.is_some() {
        // Each line is one item, its leading blanks dropped (its trailing ones kept); blank lines
        // run nothing (bash and dash with GNU xargs: `printf '  db  \n\n' | xargs -I{} ...` runs
        // once, with `db  `).
        let lines = input.lines().map(|l| l.trim_start_matches(blank)).filter(|l| !l.is_empty());
        return Some(lines.map(|l| vec![l.to_string()]).collect());
    }
    let mut runs: Vec<Vec<String>> = Vec::new();
    match (o.max_args, o.max_lines) {
        (_, Some(n)) => {
            // A line ending in a blank goes on with the next one; blank lines are ignored.
            let mut current: Vec<String> = Vec::new();
            let mut lines_in = 0;
            for line in input.lines() {
                let words: Vec<String> =
                    line.split(blank).filter(|w| !w.is_empty()).map(String::from).collect();
                if words.is_empty() {
                    continue;
                }
                current.extend(words);
                if !line.ends_with(blank) {
                    lines_in += 1;
                }
                if lines_in >= n.max(1) {
                    runs.push(std::mem::take(&mut current));
                    lines_in = 0;
                }
            }
            if !current.is_empty() {
                runs.push(current);
            }
        }
        (n, None) => {
            let items: Vec<String> =
                input.split([' ', '\t', '\n']).filter(|w| !w.is_empty()).map(String::from).collect();
            match n {
                Some(n) => runs.extend(items.chunks(n.max(1)).map(<[String]>::to_vec)),
                None if !items.is_empty() => runs.push(items),
                None => {}
            }
        }
    }
    // Empty input: GNU xargs runs the command once with no extra words, unless `-r`.
    if runs.is_empty() && !o.no_run_if_empty {
        runs.push(Vec::new());
    }
    Some(runs)
}

impl Ctx<'_> {
    /// `xargs` ([`super::unwrap`]): `rest` its arguments rendered, `raw_rest` as resolved.
    pub(super) fn xargs(
        &mut self,
        rest: &[String],
        raw_rest: &[String],
        overrides: Overrides,
        prefix_disp: &[String],
        depth: usize,
    ) -> Option<Dependency> {
        // (Each xargs is a level: `xargs xargs ... xargs curl` is bounded.)
        if depth >= MAX_DEPTH {
            return None;
        }
        let o = options(rest);
        let command = &raw_rest[o.command_at..];
        // The command's own standard input is not xargs' (GNU xargs gives it /dev/null).
        let input = self.stdin_script.take().map(|t| self.render_lit(&t));
        let known = input.filter(|t| !t.chars().any(is_reserved_char)).and_then(|t| invocations(&o, &t));
        if let Some(runs) = known {
            if command.is_empty() {
                // The default command is echo.
                return None;
            }
            for extra in runs.iter().take(MAX_INVOCATIONS) {
                let line: Vec<String> = match &o.replace {
                    Some(r) => command.iter().map(|a| a.replace(r.as_str(), &extra[0])).collect(),
                    None => command.iter().chain(extra).cloned().collect(),
                };
                if let Some(d) = self.analyze_args(&line, overrides.clone(), prefix_disp, depth + 1) {
                    return Some(d);
                }
            }
            return None;
        }
        if let Some(placeholder) = &o.replace
            && command.iter().any(|a| a.contains(placeholder.as_str()))
        {
            // The placeholder stands for a line of an input not known here: a value not
            // followed, never a host that denies (fresh-user pass: `xargs -I{} pg_isready -h {}`).
            let unknown = self.new_ref(RefKind::Unknown, placeholder).to_string();
            let command: Vec<String> =
                command.iter().map(|a| a.replace(placeholder.as_str(), &unknown)).collect();
            return self.analyze_args(&command, overrides, prefix_disp, depth + 1);
        }
        // Without a placeholder, the items of an input not known here are added to the command's
        // arguments: a client given nothing else (`... | xargs curl`) has its target there, which
        // the analysis does not see. Noted, never a finding.
        let found = self.analyze_args(command, overrides, prefix_disp, depth + 1);
        if found.is_none()
            && let Some(program) = command.first().map(|p| self.render_lit(p))
            && super::clients::find_client(basename(&program), rest.get(o.command_at + 1..).unwrap_or(&[]))
                .is_some()
        {
            self.note_unresolved(
                &format!("xargs {}", basename(&program)),
                format!(
                    "the arguments xargs adds to `{}` come from its standard input: where it connects is not analysed",
                    basename(&program)
                ),
            );
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn options_find_the_command_and_how_input_is_split() {
        let o = options(&s(&["-rn1", "-P", "4", "pg_isready", "-h"]));
        assert_eq!((o.command_at, o.max_args, o.no_run_if_empty), (3, Some(1), true));
        let o = options(&s(&["-I", "{}", "sh", "-c"]));
        assert_eq!((o.command_at, o.replace.as_deref(), o.max_lines), (2, Some("{}"), Some(1)));
        assert_eq!(options(&s(&["-IHOST", "x"])).replace.as_deref(), Some("HOST"));
        assert_eq!(options(&s(&["-i", "x"])).replace.as_deref(), Some("{}"));
        assert_eq!(options(&s(&["--replace=@", "x"])).replace.as_deref(), Some("@"));
        assert_eq!(options(&s(&["--max-args", "2", "x"])).max_args, Some(2));
        assert_eq!(options(&s(&["--", "-x"])).command_at, 1);
        assert!(options(&s(&["-0", "x"])).other_input);
        assert!(options(&s(&["-d", "\\n", "x"])).other_input);
        assert!(options(&s(&["-a", "/etc/hosts", "x"])).other_input);
        assert!(options(&s(&["-E", "END", "x"])).other_input);
        assert!(!options(&s(&["-e", "x"])).other_input);
    }

    #[test]
    fn invocations_follow_gnu_xargs() {
        let run = |args: &[&str], input: &str| invocations(&options(&s(args)), input);
        assert_eq!(run(&[], "localhost db\n"), Some(vec![s(&["localhost", "db"])]));
        assert_eq!(run(&["-n1"], "localhost db\n"), Some(vec![s(&["localhost"]), s(&["db"])]));
        assert_eq!(run(&["-L", "1"], "a b\nc\n\n"), Some(vec![s(&["a", "b"]), s(&["c"])]));
        assert_eq!(run(&["-L1"], "a \nb\nc\n"), Some(vec![s(&["a", "b"]), s(&["c"])]));
        assert_eq!(run(&["-I{}"], "  db  \n\nlocalhost\n"), Some(vec![s(&["db  "]), s(&["localhost"])]));
        assert_eq!(run(&[], ""), Some(vec![vec![]]));
        assert_eq!(run(&["-r"], ""), Some(vec![]));
        assert_eq!(run(&["-I{}"], ""), Some(vec![]));
        assert_eq!(run(&[], "'db'\n"), None);
        assert_eq!(run(&["-0"], "db"), None);
    }
}
