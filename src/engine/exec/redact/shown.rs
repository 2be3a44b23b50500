//! The one redaction entry point for a command shown to a user ([`redact_argv`]): messages,
//! warnings, audit annotations, notes, `check` and `explain` output and logs show a probe's
//! command only through it, in the display forms built on it ([`join_redacted`],
//! [`redact_command`], [`redact_as_written`], [`redact_text`]). A display form only quotes, joins
//! and cuts what [`redact_argv`] returned; none redacts on its own.

use std::collections::BTreeSet;
use std::ops::Range;

use super::super::context::basename as path_basename;
use super::display::{display_words, is_script_flag, quote_word};
use super::{
    PASSWORD_FLAGS, PasswordFlag, is_plain_name, is_secret_name, redact_auth_lines, redact_bare_userinfo,
    redact_header, redact_secrets,
};

/// What a positional parameter of `sh -c SCRIPT NAME ARG...` is shown as: the words after the
/// script are `$0`, `$1`, ... inside it, where any of them can be a password (`sh -c
/// 'mysqladmin -p"$1" ping' x PASSWORD`), so none is shown.
pub(crate) const POSITIONAL_SHOWN: &str = "<redacted>";

/// How deep quoted text inside quoted text is redacted word by word; deeper, a word with blanks
/// or shell operators is shown as `***` whole.
const MAX_NESTING: usize = 6;

/// A program's name as redaction matches it: its last path component (`/` or `\`), without a
/// Windows `.exe` (`C:\tools\curl.exe` is curl).
pub(super) fn basename(s: &str) -> &str {
    let s = bare_word(s);
    without_exe(path_basename(s).rsplit('\\').next().unwrap_or(s))
}

/// `name` without a Windows `.exe` (in any case).
fn without_exe(name: &str) -> &str {
    match name.len().checked_sub(4) {
        Some(at) if name.is_char_boundary(at) && name[at..].eq_ignore_ascii_case(".exe") => &name[..at],
        _ => name,
    }
}

/// A word without the shell punctuation around it: `(mysqladmin`, `$(redis-cli`, `` `curl ``,
/// `"mysql`, `ping;`, `-pX)`.
fn bare_word(w: &str) -> &str {
    let mut w = w;
    loop {
        let before = w.len();
        w = w.trim_start_matches(['(', '{', '`', '"', '\'', '!', ';', '&', '|']);
        w = w.strip_prefix("$(").unwrap_or(w);
        w = w.trim_end_matches([')', '}', '`', '"', '\'', ';', '&', '|']);
        if w.len() == before {
            return w;
        }
    }
}

/// A shell operator character: it ends a word wherever it stands, quoted or not, for display
/// (`-pX|grep`, `db&&-pX`, `a=$(mysqladmin`, `` x=`curl ``).
pub(super) fn is_operator(c: char) -> bool {
    matches!(c, ';' | '&' | '|' | '<' | '>' | '(' | ')' | '`' | '\n')
}

/// A POSIX shell, whose `-c SCRIPT` is followed by the script's positional parameters.
fn is_shell(w: &str) -> bool {
    // (Each of these names holds `sh`: a word without it names none of them.)
    w.contains("sh")
        && matches!(basename(w), "sh" | "bash" | "dash" | "ash" | "zsh" | "ksh" | "mksh" | "yash")
}

/// The programs of a whole command, wherever their names stand (an argument with blanks, a
/// script, a quoted string): a credential flag is known by the client it belongs to, so that
/// `["mysqladmin", "-h db -pX ping"]` and `["mysqladmin", " -pX"]` are redacted as `mysqladmin
/// -h db -pX ping` is.
struct Programs {
    /// Commands that write a protocol's lines themselves (`printf 'AUTH pw\r\nPING\r\n' | nc`).
    speaks_protocol: bool,
    /// The short password flags of the clients named (`-P` of sqlcmd, `-w` of ldapsearch).
    password_flags: Vec<&'static PasswordFlag>,
    curl_like: bool,
    /// httpie (`http`, `https`) and xh: `-a USER:PASSWORD`.
    httpie_like: bool,
    /// [`redact_in_place`]'s first steps on each text it was given ([`Prepared`]): a script is
    /// redacted again once its words named more secret variables, from the same text.
    prepared: std::cell::RefCell<std::collections::HashMap<String, std::rc::Rc<Prepared>>>,
    /// [`Pass::new`] redacts every word that uses a variable to learn the secret variables,
    /// even one whose variables are all known secret already (the tests' reference for the
    /// words it skips; never set outside tests).
    every_variable_word: bool,
    /// [`redact_secrets`] of each word [`redact_words_with`] was given: a text's words are
    /// redacted again once they named more secret variables.
    secrets_out: std::cell::RefCell<std::collections::HashMap<String, String>>,
}

/// A text with [`redact_secrets`] applied, and its [`display_words`]: neither depends on the
/// secret variables, so a text redacted twice in one [`redact_argv`] call is read once.
type Prepared = (String, Vec<(String, Range<usize>, bool)>);

impl Programs {
    /// The programs named in `texts`, split at blanks, shell operators and quotes.
    fn of(texts: &[String]) -> Programs {
        // (A list, not a set: it is only asked whether it holds a name.)
        let names = program_names(texts);
        let named = |list: &[&str]| list.iter().any(|n| names.binary_search(n).is_ok());
        let redis_like = named(&["redis-cli", "valkey-cli", "keydb-cli"]);
        Programs {
            speaks_protocol: redis_like
                || named(&["nc", "ncat", "netcat", "socat", "telnet", "printf", "echo"]),
            password_flags: PASSWORD_FLAGS.iter().filter(|f| f.names_a_client(&names)).collect(),
            curl_like: named(&["curl"]),
            httpie_like: named(&["http", "https", "xh"]),
            prepared: Default::default(),
            secrets_out: Default::default(),
            every_variable_word: false,
        }
    }
}

/// The names [`Programs::of`] looks for in `texts`, sorted, each once: each text split at
/// blanks, shell operators, quotes, `$` and `{`, each piece's [`basename`], those not empty and
/// not options. An ASCII text is split byte by byte, and a piece of letters, digits, `_`, `-`
/// and `.` only, from which [`basename`] would strip nothing but a `.exe`, is not given to it.
pub(super) fn program_names(texts: &[String]) -> Vec<&str> {
    fn add<'t>(names: &mut Vec<&'t str>, name: &'t str) {
        if !name.is_empty() && !name.starts_with('-') {
            names.push(name);
        }
    }
    let mut names: Vec<&str> = Vec::new();
    for t in texts {
        if !t.is_ascii() {
            // (An empty atom's basename is empty: not looked at.)
            let atoms =
                t.split(|c: char| c.is_whitespace() || is_operator(c) || matches!(c, '"' | '\'' | '$' | '{'));
            atoms.filter(|a| !a.is_empty()).for_each(|a| add(&mut names, basename(a)));
            continue;
        }
        let b = t.as_bytes();
        let mut start = 0;
        for at in 0..=b.len() {
            let ends = b.get(at).is_none_or(|&c| {
                let c = char::from(c);
                c.is_whitespace() || is_operator(c) || matches!(c, '"' | '\'' | '$' | '{')
            });
            if !ends {
                continue;
            }
            let atom = &t[start..at];
            start = at + 1;
            if atom.is_empty() {
                continue;
            }
            let plain = atom.bytes().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'));
            add(&mut names, if plain { without_exe(atom) } else { basename(atom) });
        }
    }
    names.sort_unstable();
    names.dedup();
    names
}

/// Shell variables whose values are secrets, by name.
type Vars = BTreeSet<String>;

/// A word to redact: its value, and whether the display lexer read it as a shell operator (a
/// command's end: `;`, `&&`, `|`, a newline, a parenthesis; never a quoted one).
struct Word<'a> {
    value: &'a str,
    operator: bool,
}

/// The start of a script cut from a longer text ([`redact_command`] cuts long scripts before it
/// redacts them), with the value of every variable assignment in it replaced (`P=pw;` shown as
/// `P=***;`, a quoted value `P="a b"` whole). Whether a variable holds a secret is known only from
/// where the script uses it, and that may be past the cut (break-it pass, s22: `P=pw; A=...; ...
/// mysql -p$P` showed `P=pw` in the `unresolved-scripts` annotation of a script whose analysis an
/// expansion bound stopped). [`redact_argv`] still redacts the result as a command's.
pub(crate) fn redact_cut_assignments(head: &str) -> String {
    let mut out = String::with_capacity(head.len());
    let mut copied = 0;
    for (value, range, operator) in display_words(head) {
        let Some((name, rest)) = value.split_once('=') else { continue };
        let variable = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if operator || rest.is_empty() || !variable {
            continue;
        }
        out.push_str(&head[copied..range.start]);
        out.push_str(name);
        out.push_str("=***");
        copied = range.end;
    }
    out.push_str(&head[copied..]);
    out
}

/// THE entry point: each argument of a command as it may be shown, with its credentials replaced
/// by `***`, one entry per argument, unquoted, as written otherwise. Redacted: the credential
/// flags of the clients the command names ([`PASSWORD_FLAGS`]; `--password=X`, `--pass X`),
/// attached or separate, `-u user:X`, credential headers, URL user info, `password=`-like pairs
/// in queries, fragments and conninfo strings, Redis `AUTH` lines, `KEY=VALUE` of a secret name,
/// a shell variable set to what reaches such a place, and every positional parameter after `sh -c
/// SCRIPT` ([`POSITIONAL_SHOWN`]). An argument with blanks or shell operators in it (a script,
/// `"-h db -pX ping"`, `" -pX"`, a script the parser rejects: `a=$(mysqladmin -pX ping`,
/// `-pX|grep`) is split into words at blanks and at `; & | < > ( )` and backquotes, inside its
/// quotes too, and each word redacted as a command's, in place.
pub(crate) fn redact_argv(argv: &[String]) -> Vec<String> {
    let programs = Programs::of(argv);
    let words: Vec<Word<'_>> = argv.iter().map(|a| Word { value: a, operator: false }).collect();
    redact_words(&words, &programs, &BTreeSet::new(), 0)
}

/// [`redact_argv`] with argument `k`, when it is a script given to a shell (`sh -c SCRIPT`),
/// shown only from its start up to where `until` holds of what is shown (the whole of it if
/// `until` never holds): what follows in a script never changes how its start is shown, so a
/// caller that reads only its first program ([`super::super::opaque_script_summary`]) needs no
/// more. Every other argument is shown whole.
pub(crate) fn redact_argv_until(argv: &[String], k: usize, until: &dyn Fn(&str) -> bool) -> Vec<String> {
    let programs = Programs::of(argv);
    let words: Vec<Word<'_>> = argv.iter().map(|a| Word { value: a, operator: false }).collect();
    let mut pass = Pass::new(&words, &programs, &BTreeSet::new(), 0);
    (0..words.len()).map(|i| pass.shown(i, (i == k).then_some(until))).collect()
}

/// [`redact_argv_until`] with [`Pass::new`] redacting every word that uses a variable, as it did
/// before it skipped the words whose variables are all secret already: the reference its tests
/// compare with.
#[cfg(test)]
pub(crate) fn redact_argv_until_every_variable_word(
    argv: &[String],
    k: usize,
    until: &dyn Fn(&str) -> bool,
) -> Vec<String> {
    let programs = Programs { every_variable_word: true, ..Programs::of(argv) };
    let words: Vec<Word<'_>> = argv.iter().map(|a| Word { value: a, operator: false }).collect();
    let mut pass = Pass::new(&words, &programs, &BTreeSet::new(), 0);
    (0..words.len()).map(|i| pass.shown(i, (i == k).then_some(until))).collect()
}

/// A text that holds a command (a note's command line, a script) as it may be shown:
/// [`redact_argv`] of the text as one argument.
pub(crate) fn redact_text(text: &str) -> String {
    redact_argv(&[text.to_string()]).pop().unwrap_or_default()
}

/// What a command gives `program` (a dependency's host or URL, as found) as it may be shown:
/// [`redact_argv`] of the two, so that a host taken from an argument with blanks (`["cqlsh",
/// "-h db -pX ping"]`) is redacted by its client's flags.
/// (Only the text is redacted: the program's word, which [`redact_argv`] would show too, is not
/// asked for; each word's result is its own, [`Pass`].)
pub(crate) fn redact_operand(program: &str, text: &str) -> String {
    let argv = [program.to_string(), text.to_string()];
    let programs = Programs::of(&argv);
    let words: Vec<Word<'_>> = argv.iter().map(|a| Word { value: a, operator: false }).collect();
    Pass::new(&words, &programs, &BTreeSet::new(), 0).shown(1, None)
}

/// Re-join display words, each redacted ([`redact_argv`]) and quoted where needed
/// ([`quote_word`]).
pub(crate) fn join_redacted(words: &[String]) -> String {
    redact_argv(words).iter().map(|w| quote_word(w)).collect::<Vec<_>>().join(" ")
}

/// [`join_redacted`] cut as [`super::super::context::truncate_chars`] cuts it to `max`
/// characters: the same text, with only the words that reach the cut redacted (the secret
/// variables and programs are still those of every word, [`Pass::new`]). A dependency's
/// command is kept at 80 characters; the words past them were redacted for nothing (s26: the
/// Airflow scheduler's).
pub(crate) fn join_redacted_cut(words: &[String], max: usize) -> String {
    let programs = Programs::of(words);
    let listed: Vec<Word<'_>> = words.iter().map(|a| Word { value: a, operator: false }).collect();
    let mut pass = Pass::new(&listed, &programs, &BTreeSet::new(), 0);
    let mut joined = String::new();
    let mut chars = 0;
    for i in 0..listed.len() {
        if i > 0 {
            joined.push(' ');
            chars += 1;
        }
        let quoted = quote_word(&pass.shown(i, None));
        chars += quoted.chars().count();
        joined.push_str(&quoted);
        if chars > max {
            // (Longer than `max` whatever follows: cut here as the whole text would be.)
            break;
        }
    }
    super::super::context::truncate_chars(&joined, max)
}

/// The shell variables a word uses (`$P`, `${P}`, `${P:-x}`), by name.
pub(super) fn variables_used(w: &str) -> impl Iterator<Item = &str> {
    w.match_indices('$').filter_map(|(at, _)| {
        let rest = w[at + 1..].strip_prefix('{').unwrap_or(&w[at + 1..]);
        let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
        let name = &rest[..end];
        name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_').then_some(name)
    })
}

/// Adds the variables `w` uses to `secret` (a name copied only when it is new).
fn add_variables_used(secret: &mut Vars, w: &str) {
    for v in variables_used(w) {
        if !secret.contains(v) {
            secret.insert(v.to_string());
        }
    }
}

/// Each word redacted, unquoted. A shell variable's value is redacted where the script sets it
/// when the variable reaches a place that is redacted (`P=pw; redis-cli -a $P`: `P=***`),
/// directly or through other variables (`A=pw; B=$A; redis-cli -a $B`); other variables keep
/// their values (`h=db; pg_isready -h $h` shows the host the finding is about).
/// `inherited`: the secret variables of the text around (a word of an argument with blanks
/// sets a variable another argument gives as a password).
fn redact_words(words: &[Word<'_>], programs: &Programs, inherited: &Vars, depth: usize) -> Vec<String> {
    let mut pass = Pass::new(words, programs, inherited, depth);
    (0..words.len()).map(|i| pass.shown(i, None)).collect()
}

/// What the words before a word left for it: the state [`Pass::redact`] reads. It depends on
/// the words only, never on the secret variables, so it is made once per list of words.
#[derive(Clone, Copy)]
struct Before<'a> {
    /// The last blank-separated piece of the word before (`-a` of `"-h db -a"`).
    prev: &'a str,
    /// A shell's `-c` script seen in this command: the word is one of its positional parameters.
    positional: bool,
    /// Arguments of a format that writes an AUTH line (`printf 'AUTH %s\r\n' PASSWORD`), up to
    /// the end of that command.
    format_secrets: bool,
    /// Inside a secret pair's command substitution split over words (`PGPASSWORD=$(echo`,
    /// `PW)`): how it closes.
    secret_open: Option<Open>,
}

/// Is a word a redirection operator (`>`, `>&`, `<<<`), past which the command goes on?
fn is_redirection(word: &Word<'_>) -> bool {
    let w = word.value;
    word.operator && w.contains(['<', '>']) && !w.contains([';', '|', '(', ')', '`', '\n'])
}

/// The [`Before`] of each word of `words`, in order.
fn befores<'a>(words: &[Word<'a>], programs: &Programs) -> Vec<Before<'a>> {
    // A shell named in this command; its `-c` script seen; the words after it (the script's
    // positional parameters), up to the command's end.
    let (mut shell, mut positional, mut format_secrets) = (false, false, false);
    let mut prev: &str = "";
    let mut secret_open: Option<Open> = None;
    let mut out = Vec::with_capacity(words.len());
    for word in words {
        out.push(Before { prev, positional, format_secrets, secret_open });
        let w = word.value;
        if let Some(open) = secret_open {
            secret_open = open.close_in(w).err();
            prev = w;
            continue;
        }
        if is_redirection(word) {
            prev = w;
            continue;
        }
        if word.operator {
            (shell, positional, format_secrets) = (false, false, false);
            prev = w;
            continue;
        }
        if positional {
            prev = w;
            continue;
        }
        let script_flag = shell
            && prev.len() > 1
            && prev.starts_with('-')
            && !prev.starts_with("--")
            && prev[1..].chars().all(|c| c.is_ascii_alphabetic())
            && prev.contains('c');
        if script_flag && !w.starts_with('-') {
            positional = true;
        }
        shell |= is_shell(w);
        if is_script_flag(prev) && w.contains(char::is_whitespace) {
            prev = w;
            continue;
        }
        if matches!(w, "|" | "||" | "&&" | ";" | "&") {
            format_secrets = false;
        }
        // A format writing an AUTH line, or Redis's `AUTH [username] password` given as a
        // client's arguments: every word after it, to the command's end, may be the password.
        if programs.speaks_protocol
            && (w.eq_ignore_ascii_case("auth") || w.to_ascii_lowercase().contains("auth %s"))
        {
            format_secrets = true;
        }
        if let Some((n, v)) = w.split_once('=')
            && !w.contains(char::is_whitespace)
            && is_plain_name(n)
            && is_secret_name(n)
        {
            secret_open = Open::after(v);
        }
        prev = w.rsplit(char::is_whitespace).find(|p| !p.is_empty()).unwrap_or(w);
    }
    out
}

/// One [`redact_words`] call, word by word: the secret variables found first (from the words
/// that use a variable, the only ones that can name one), then each word redacted on demand,
/// so that a caller that needs only the start of a text ([`redact_in_place`]'s `until`) or
/// only whether it changes ([`in_place_changes`]) redacts no more of it than that. Each word's
/// result is the one a whole pass gives: a word is redacted from what the words before it left
/// ([`Before`]) and the secret variables.
struct Pass<'w, 'a, 'p> {
    words: &'w [Word<'a>],
    programs: &'p Programs,
    depth: usize,
    befores: Vec<Before<'a>>,
    /// Each word redacted with `inherited`, where it was (the words using a variable).
    first: Vec<Option<String>>,
    /// The secret variables every word is shown with.
    secret: Vars,
    /// `secret` holds no more than the variables inherited: `first` is the answer.
    same: bool,
}

impl<'w, 'a, 'p> Pass<'w, 'a, 'p> {
    fn new(words: &'w [Word<'a>], programs: &'p Programs, inherited: &Vars, depth: usize) -> Self {
        let befores = befores(words, programs);
        let mut first: Vec<Option<String>> = vec![None; words.len()];
        let mut secret = inherited.clone();
        for (i, w) in words.iter().enumerate() {
            // (A word without `$` uses no variable: whether it changes adds none. Nor does a
            // word whose variables are all secret already (a script's words, redacted again
            // once the command around named its variables): it is redacted when it is shown,
            // with the same variables, as `first` would have held it. `Want` changes only a
            // script's answer, which `first` never holds.)
            if !w.value.contains('$') {
                continue;
            }
            // (With no secret variable yet, no word is skipped: its variables are not listed.)
            let skip = !secret.is_empty()
                && !programs.every_variable_word
                && variables_used(w.value).all(|v| secret.contains(v));
            if skip {
                continue;
            }
            let changed =
                match Self::redact_with(words, programs, depth, &befores, i, inherited, Want::Changed) {
                    Shown::Changed(c) => c,
                    Shown::Text(r) => {
                        let c = r != w.value;
                        first[i] = Some(r);
                        c
                    }
                };
            if changed {
                add_variables_used(&mut secret, w.value);
            }
        }
        loop {
            let before = secret.len();
            for w in words {
                if let Some((n, v)) = w.value.trim_start().split_once('=')
                    && secret.contains(n)
                {
                    add_variables_used(&mut secret, v);
                }
            }
            if secret.len() == before {
                break;
            }
        }
        let same = secret.len() == inherited.len();
        Pass { words, programs, depth, befores, first, secret, same }
    }

    /// Word `i` as shown; with `until`, a script given to a shell is redacted only up to where
    /// `until` holds for the start of the text shown ([`redact_in_place`]).
    fn shown(&mut self, i: usize, until: Option<&dyn Fn(&str) -> bool>) -> String {
        if self.same
            && let Some(r) = self.first[i].take()
        {
            return r;
        }
        let want = until.map_or(Want::Full, Want::Until);
        match Self::redact_with(self.words, self.programs, self.depth, &self.befores, i, &self.secret, want) {
            Shown::Text(r) => r,
            Shown::Changed(_) => unreachable!("only Want::Changed answers Changed"),
        }
    }

    /// Word `i` redacted with `secret_vars` the variables whose assignments are redacted.
    fn redact_with(
        words: &[Word<'_>],
        programs: &Programs,
        depth: usize,
        befores: &[Before<'_>],
        i: usize,
        secret_vars: &Vars,
        want: Want<'_>,
    ) -> Shown {
        let word = &words[i];
        let Before { prev, positional, format_secrets, secret_open } = befores[i];
        let Programs { speaks_protocol, ref password_flags, curl_like, httpie_like, .. } = *programs;
        let w = word.value;
        if let Some(open) = secret_open {
            // Hidden up to where the substitution closes; the rest of the word as a text.
            let rest = open.close_in(w).map_or("", |end| &w[end..]);
            if rest.trim().is_empty() {
                return Shown::Text(format!("***{rest}"));
            }
            return match redact_nested(rest, programs, secret_vars, depth, Want::Full) {
                Shown::Text(t) => Shown::Text(format!("***{t}")),
                Shown::Changed(_) => Shown::Text(format!("***{rest}")),
            };
        }
        if word.operator {
            return Shown::Text(w.to_string());
        }
        if positional {
            return Shown::Text(POSITIONAL_SHOWN.to_string());
        }
        if is_script_flag(prev) && w.contains(char::is_whitespace) {
            // A script (`sh -c`, cmd's `/c`, PowerShell's `-Command`): a command line of its own,
            // its words redacted as a command's, not as one word.
            return redact_nested(w, programs, secret_vars, depth, want);
        }
        // (Kept only for a word `redact_secrets` reads past its first look.)
        let worth_keeping = w.contains('=') || w.contains("://") || w.contains("\":");
        let kept = worth_keeping.then(|| programs.secrets_out.borrow().get(w).cloned()).flatten();
        let mut r = kept.unwrap_or_else(|| {
            let r = redact_secrets(w);
            if worth_keeping {
                programs.secrets_out.borrow_mut().insert(w.to_string(), r.clone());
            }
            r
        });
        // A whole word `--password=x` or `PGPASSWORD=x` (a script's text is left to the
        // pair-by-pair redaction above).
        let pair =
            w.split_once('=').filter(|(n, _)| !w.contains(char::is_whitespace) || n.ends_with("header"));
        if let Some((n, v)) = pair
            && is_plain_name(n)
        {
            if is_secret_name(n) {
                r = format!("{n}=***");
            } else if matches!(n, "--user" | "--proxy-user" | "-u") && v.contains(':') {
                r = format!("{n}={}:***", v.split(':').next().unwrap_or(""));
            } else if let Some(h) = redact_header(v).filter(|_| n.ends_with("header")) {
                r = format!("{n}={h}");
            } else if let Some((hn, _)) =
                v.split_once(':').filter(|(hn, _)| hn.eq_ignore_ascii_case("authorization"))
            {
                r = format!("{n}={hn}:***");
            } else if !w.contains(char::is_whitespace) && secret_vars.contains(n) {
                // A shell variable set to a value and later given where a secret goes (`P=pw;
                // redis-cli -a $P`): whatever its name, its value is the secret (break-it pass).
                // A `;` the word ends with is the script's, kept.
                let end = if v.ends_with(';') { ";" } else { "" };
                r = format!("{n}=***{end}");
            }
        }
        if speaks_protocol {
            r = redact_auth_lines(&r);
        }
        // The end of a command (the script's words are split but not parsed here).
        let separator = matches!(w, "|" | "||" | "&&" | ";" | "&");
        // A word redacted already (an AUTH line's value, cut at the line's end, in a quoted
        // string; a note's text redacted again) keeps what follows it.
        let prev_secret = !w.starts_with('-')
            && !w.starts_with("***")
            && ((prev.starts_with('-') && !prev.contains('=') && is_secret_name(prev))
                || prev == "-pw"
                || prev == "<<<"
                || (speaks_protocol && prev.eq_ignore_ascii_case("auth"))
                || password_flags.iter().any(|f| f.separate && prev == f.flag)
                || (curl_like && matches!(prev, "-b" | "--cookie"))
                || (format_secrets && !separator));
        let attached = password_flags
            .iter()
            .find(|f| f.attached && w.len() > f.flag.len() && w.starts_with(f.flag) && !w.starts_with("--"));
        if prev_secret {
            r = "***".to_string();
        } else if let Some(f) = attached {
            r = format!("{}***", f.flag);
        } else if w.starts_with("<<<") && w.len() > 3 {
            // A here-string glued to its operator: the client's stdin (`--askpass <<<PASSWORD`).
            r = "<<<***".to_string();
        } else if curl_like && matches!(prev, "-E" | "--cert") && w.contains(':') {
            // `--cert FILE:PASSPHRASE`.
            r = format!("{}:***", w.split(':').next().unwrap_or(""));
        } else if curl_like
            && let Some(flags) = w.strip_prefix('-').filter(|f| !f.starts_with('-'))
            && let Some(at) =
                flags.find('u').filter(|&at| at > 0 && flags[..at].chars().all(|c| c.is_ascii_alphabetic()))
            && flags[at + 1..].contains(':')
        {
            // Short flags run together, the last taking the credentials: `-sfuadmin:PASSWORD`.
            let cred = &flags[at + 1..];
            r = format!("-{}u{}:***", &flags[..at], cred.split(':').next().unwrap_or(""));
        } else if (matches!(prev, "-u" | "--user" | "-U" | "--proxy-user")
        || (httpie_like && matches!(prev, "-a" | "--auth"))
        // Short flags run together, the last taking the credentials as the next word: `-fsu
        // admin:PASSWORD`.
        || (curl_like
            && prev.len() > 2
            && prev.ends_with('u')
            && prev.strip_prefix('-').is_some_and(|f| f.chars().all(|c| c.is_ascii_alphabetic())))
        || prev == "digest")
            && w.contains(':')
            && !w.contains("://")
        {
            let user = w.split(':').next().unwrap_or("");
            r = format!("{user}:***");
        } else if matches!(prev, "-H" | "--header") {
            if let Some(h) = redact_header(w) {
                r = h;
            }
        } else if let Some(h) = w.strip_prefix("-H").filter(|h| !h.is_empty()).and_then(redact_header) {
            r = format!("-H{h}");
        } else if let Some(cred) = w.strip_prefix("-u").filter(|c| c.contains(':')) {
            r = format!("-u{}:***", cred.split(':').next().unwrap_or(""));
        } else if httpie_like && !w.contains("://") && !w.starts_with('-') && w.contains(':') {
            // httpie request items: `Authorization:Bearer X` is a header.
            if let Some(h) = redact_header(w) {
                r = h;
            }
        }
        if w.contains(|c: char| c.is_whitespace() || is_operator(c)) {
            // Text no parser split (`["mysqladmin -h db -pX ping"]`, `" -pX"`, a quoted string,
            // an unclosed quote, `-pX|grep`): its words redacted in place.
            r = redact_nested(&r, programs, secret_vars, depth, Want::Full).text();
        }
        Shown::Text(redact_bare_userinfo(&r))
    }
}

/// How much of a text [`redact_in_place`] is asked for.
#[derive(Clone, Copy)]
enum Want<'f> {
    /// All of it.
    Full,
    /// Only whether it differs from the text given ([`Shown::Changed`]).
    Changed,
    /// Its start, up to where the predicate holds of the text shown so far (the whole text if
    /// it never does): a caller that reads only a script's first program.
    Until(&'f dyn Fn(&str) -> bool),
}

/// What [`Pass::redact_with`] gives for a [`Want`].
enum Shown {
    Text(String),
    /// [`Want::Changed`] of a script: whether it is shown otherwise than written.
    Changed(bool),
}

impl Shown {
    /// The text shown (never asked of [`Want::Changed`]'s answer).
    fn text(self) -> String {
        match self {
            Shown::Text(t) => t,
            Shown::Changed(_) => unreachable!("only Want::Changed answers Changed"),
        }
    }
}

/// A command substitution left open at the end of a word: `$(` with `parens` parentheses still
/// open, or a backquote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Open {
    Parens(usize),
    Backquote,
}

impl Open {
    /// The substitution a secret pair's value `v` leaves open (`$(echo`, `` `printf ``), if any.
    fn after(v: &str) -> Option<Open> {
        if v.starts_with("$(") {
            Open::Parens(0).close_in(v).err()
        } else if let Some(quoted) = v.strip_prefix('`') {
            Open::Backquote.close_in(quoted).err()
        } else {
            None
        }
    }

    /// Where this substitution closes in `w`: the byte index after its closing character, or
    /// what is still open at the end of `w`.
    fn close_in(self, w: &str) -> Result<usize, Open> {
        match self {
            Open::Backquote => w.find('`').map(|k| k + 1).ok_or(Open::Backquote),
            Open::Parens(mut open) => {
                for (k, c) in w.char_indices() {
                    match c {
                        '(' => open += 1,
                        ')' if open <= 1 => return Ok(k + 1),
                        ')' => open -= 1,
                        _ => {}
                    }
                }
                Err(Open::Parens(open))
            }
        }
    }
}

/// [`redact_in_place`] one level deeper, or `***` past [`MAX_NESTING`].
fn redact_nested(text: &str, programs: &Programs, secret_vars: &Vars, depth: usize, want: Want<'_>) -> Shown {
    if depth >= MAX_NESTING {
        return match want {
            Want::Changed => Shown::Changed(text != "***"),
            _ => Shown::Text("***".to_string()),
        };
    }
    match want {
        Want::Full => Shown::Text(redact_in_place(text, programs, secret_vars, depth + 1, None)),
        Want::Until(until) => {
            Shown::Text(redact_in_place(text, programs, secret_vars, depth + 1, Some(until)))
        }
        Want::Changed => Shown::Changed(in_place_changes(text, programs, secret_vars, depth + 1)),
    }
}

/// [`redact_secrets`] of a text and its [`display_words`], kept in `programs` for the
/// [`redact_argv`] call.
fn prepared(text: &str, programs: &Programs) -> std::rc::Rc<Prepared> {
    let kept = programs.prepared.borrow().get(text).cloned();
    kept.unwrap_or_else(|| {
        let secrets_out = redact_secrets(text);
        let spans = display_words(&secrets_out);
        let p = std::rc::Rc::new((secrets_out, spans));
        programs.prepared.borrow_mut().insert(text.to_string(), p.clone());
        p
    })
}

/// `text` with `password=`-like pairs and URL user info redacted first ([`redact_secrets`], on
/// the whole text: a quoted value may hold blanks), then each of its words ([`display_words`])
/// redacted as a command's word ([`redact_words`]) and, where that changed it, replaced in place
/// (quoted anew); blanks, quoting and operators are kept as written. With `until`, only the start
/// of it: the text shown is made word by word, left to right, and returned as soon as `until`
/// holds for it (what follows never changes what is before).
fn redact_in_place(
    text: &str,
    programs: &Programs,
    secret_vars: &Vars,
    depth: usize,
    until: Option<&dyn Fn(&str) -> bool>,
) -> String {
    let prepared = prepared(text, programs);
    let (text, spans) = (&prepared.0, &prepared.1);
    let words: Vec<Word<'_>> = spans.iter().map(|(v, _, op)| Word { value: v, operator: *op }).collect();
    let mut pass = Pass::new(&words, programs, secret_vars, depth);
    let mut out = String::with_capacity(text.len());
    let mut done = 0;
    for (i, (value, range, _)) in spans.iter().enumerate() {
        let shown = pass.shown(i, None);
        if shown != *value {
            out.push_str(&text[done..range.start]);
            out.push_str(&quote_word(&shown));
            done = range.end;
        }
        if let Some(until) = until {
            // The text shown up to the next word, which no later word changes.
            let next = spans.get(i + 1).map_or(text.len(), |(_, r, _)| r.start);
            out.push_str(&text[done..next]);
            done = next;
            if until(&out) {
                return out;
            }
        }
    }
    out.push_str(&text[done..]);
    out
}

/// Whether [`redact_in_place`] shows `text` otherwise than written, made word by word and
/// answered at the first place where what it shows stops being the start of `text`.
fn in_place_changes(original: &str, programs: &Programs, secret_vars: &Vars, depth: usize) -> bool {
    // (What is shown up to a word is the start of the whole: once it is not the start of
    // `original`, the whole is not `original`.)
    let not_original = |shown: &str| !original.starts_with(shown);
    redact_in_place(original, programs, secret_vars, depth, Some(&not_original)) != original
}
