//! A `trap` whose action calls a function of the script (`cleanup() { rm -f /tmp/x; }; trap
//! cleanup EXIT`): harmless, as an action that only writes output or removes files
//! (`harmless::harmless_traps`), when every definition of the function has such a body.

use super::super::flow::mentions;
use super::harmless::file_targets;
use super::texts::defined_functions;

/// Whether `command` (one command of a trap's action, `cleanup` or `log bye`) calls a function
/// `src` defines whose every definition only writes output (`echo`, `printf` without `-v`,
/// `logger`, to no file), removes files (`rm`) or runs `:`/`true`, expanding only plain
/// parameters (`"$@"`, `$1`, `$NAME`): no `exit`, `return`, test, substitution or other call.
/// Such a handler changes no status: an EXIT trap's own status is not the script's, unless the
/// handler runs `exit` (bash 5.2 and dash 0.5.12: `f() { false; }; trap f EXIT; exit 0` exits 0,
/// `trap 'exit 1' EXIT` 1). Not under errexit (`errexit`, or a script that may set it): there a
/// failing handler command ends the shell with its status (`set -e; f() { false; }; trap f EXIT;
/// exit 0` exits 1, and a function never defined 127), nor for a trap run between commands
/// (`between`: `ERR`, `DEBUG`, `RETURN`).
pub(super) fn harmless_handler(src: &str, command: &str, between: bool, errexit: bool) -> bool {
    let Some(name) = command.split_whitespace().next() else {
        return true;
    };
    if between
        || errexit
        || super::options::sets_errexit(src)
        || mentions(src, &["shopt", "SHELLOPTS"])
        || !super::super::context::is_ident(name)
    {
        return false;
    }
    let count = defined_functions(src).iter().filter(|f| *f == name).count();
    let bodies = bodies_of(src, name);
    count > 0 && bodies.len() == count && bodies.iter().all(|b| plain_body(b))
}

/// The text between `{` and the first `}` of each definition of `name` in `src` (`name() {`,
/// `function name {`, `function name() {`).
fn bodies_of<'s>(src: &'s str, name: &str) -> Vec<&'s str> {
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = src[from..].find(name).map(|i| i + from) {
        from = i + name.len();
        let before = src[..i].trim_end_matches([' ', '\t']);
        let keyword =
            before.strip_suffix("function").filter(|b| b.is_empty() || b.ends_with(char::is_whitespace));
        let starts =
            i == 0 || matches!(bytes[i - 1], b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'{' | b'(');
        let boundary = starts
            && (before.is_empty() || before.ends_with([';', '\n', '&', '|', '{', '(']) || keyword.is_some());
        let mut rest = src[from..].trim_start_matches([' ', '\t']);
        let parens = rest
            .strip_prefix('(')
            .map(|r| r.trim_start_matches([' ', '\t']))
            .and_then(|r| r.strip_prefix(')'));
        if let Some(r) = parens {
            rest = r;
        } else if keyword.is_none() {
            continue;
        }
        let rest = rest.trim_start();
        if !boundary {
            continue;
        }
        let Some(body) = rest.strip_prefix('{').and_then(|b| b.split_once('}')).map(|(b, _)| b) else {
            // (A definition of another shape, `f() ( ... )`: counted by `defined_functions`, not here.)
            continue;
        };
        out.push(body);
    }
    out
}

/// Whether a function body (the text inside its braces) only runs `echo`, `printf` (not `-v`)
/// or `logger` writing to no file, `rm`, `:` or `true`, expanding only plain parameters.
fn plain_body(body: &str) -> bool {
    let mut plain = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '$' => match chars.peek().copied() {
                Some(k) if matches!(k, '@' | '*' | '#' | '?') || k.is_ascii_digit() => {
                    chars.next();
                    plain.push('x');
                }
                Some(k) if k.is_ascii_alphabetic() || k == '_' => {
                    while chars.peek().is_some_and(|k| k.is_ascii_alphanumeric() || *k == '_') {
                        chars.next();
                    }
                    plain.push('x');
                }
                _ => return false,
            },
            '>' if chars.peek() == Some(&'&') => {
                chars.next();
                if !chars.peek().is_some_and(char::is_ascii_digit) {
                    return false;
                }
                plain.push_str(">&");
            }
            '&' | '`' | '\\' | '(' | ')' | '{' | '<' | '|' => return false,
            _ => plain.push(c),
        }
    }
    if plain.matches('"').count() % 2 == 1 || plain.matches('\'').count() % 2 == 1 {
        return false;
    }
    plain.split([';', '\n']).all(|c| {
        let words: Vec<&str> = c.split_whitespace().collect();
        match words.first() {
            None => true,
            Some(&("echo" | "printf" | "logger" | ":" | "true")) => {
                file_targets(c).is_empty()
                    && !words.get(1).is_some_and(|w| w.trim_matches(['"', '\'']).starts_with("-v"))
            }
            Some(&"rm") => !c.contains('>'),
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::harmless_handler;

    #[test]
    fn a_handler_function_is_harmless_only_when_every_body_only_writes_or_removes() {
        for (src, command, ok) in [
            ("cleanup() { rm -f /tmp/x; }; trap cleanup EXIT; c; exit 0", "cleanup", true),
            ("log() { echo \"$@\"; }; trap \"log bye\" EXIT; c; exit 0", "log bye", true),
            ("log() { echo \"$@\" >&2; }\ntrap 'log bye' EXIT", "log bye", true),
            ("function log { echo \"$1\"; }; trap log EXIT", "log", true),
            // An exit, a return, a test, another call, a substitution, a file written.
            ("f() { exit 1; }; trap f EXIT", "f", false),
            ("f() { echo x; exit $?; }; trap f EXIT", "f", false),
            ("f() { return 1; }; trap f EXIT", "f", false),
            ("f() { [ -f /tmp/ok ]; }; trap f EXIT", "f", false),
            ("g() { :; }; f() { g; }; trap f EXIT", "f", false),
            ("f() { echo $(date); }; trap f EXIT", "f", false),
            ("f() { echo ${X:?}; }; trap f EXIT", "f", false),
            ("f() { echo x > /tmp/s; }; trap f EXIT", "f", false),
            ("f() { echo x & exit 1; }; trap f EXIT", "f", false),
            ("f() { printf -v x y; }; trap f EXIT", "f", false),
            // Defined twice, once harmful; not defined; under errexit; a program.
            ("f() { :; }; f() { exit 1; }; trap f EXIT", "f", false),
            ("trap f EXIT", "f", false),
            ("set -e; f() { :; }; trap f EXIT", "f", false),
            ("f() ( exit 1 ); trap f EXIT", "f", false),
        ] {
            assert_eq!(harmless_handler(src, command, false, false), ok, "{src}");
        }
        assert!(!harmless_handler("f() { :; }; trap f EXIT", "f", false, true));
        assert!(!harmless_handler("f() { :; }; trap f ERR", "f", true, false));
    }
}
