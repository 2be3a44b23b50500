//! bash-only syntax that dash runs otherwise without a syntax error (s23 fresh user): under `sh`
//! the verdict rests on which shell the image's `sh` is (dash on Debian and Ubuntu images, bash on
//! RHEL and UBI ones, busybox ash on Alpine), so a finding there is a doubt, never a denial
//! (`Ctx::status_unknown`). Each shape run in bash 5.2.15 and dash 0.5.12 with stub clients
//! exiting 0 and 1:
//! - `C &>F`: bash redirects C's output and error (1 / 0); dash reads `C &` then `>F`, C in the
//!   background (POSIX 2.9.3: its status is 0), so `C &>/dev/null; [ $? = 0 ]` is 0 / 0;
//! - `shopt -s lastpipe`: dash has no `shopt` (127, and the script goes on), so a pipeline's
//!   last element runs in a subshell there and in the script's shell in bash: a function of the
//!   script called there (`cat /dev/null | f; exit $status`: 0 / 0 in dash, 1 / 0 in bash);
//! - `[[ ]]` and `(( ))` (dash: "not found", 127) and `==` in `[ ]` (dash: "unexpected
//!   operator", 2) where their status is tested (an `if`, `while` or `until` condition, after
//!   `!`, beside `&&`/`||`): the other branch runs in dash (`C; if [[ $? -ne 0 ]]; then exit 1;
//!   fi`: 0 / 0 in dash, 1 / 0 in bash). As a script's last statement they fail every time in
//!   dash, as a syntax error does: left to the walk.
//!
//! Syntax errors in dash (`>&FILE`, `|&`, `<<<`) fail the probe whatever the dependency does, and
//! are not listed.

/// Why a script run by `sh` (text `script`) means another thing in dash than in bash, if it does:
/// the reason a finding's status rests on, short (it goes into a 256-character warning).
pub(super) fn sh_dialect_doubt(script: &str) -> Option<&'static str> {
    if script.contains("&>") {
        return Some("which shell `sh` is (dash runs `&>` as `&` then `>`)");
    }
    if super::super::flow::mentions(script, &["lastpipe"]) && pipes_into_a_function(script) {
        return Some("which shell `sh` is (dash has no `shopt`)");
    }
    if (script.contains("[[") || script.contains("((") || script.contains("==")) && tested_bash_test(script) {
        return Some("which shell `sh` is (dash has no `[[`, `((` or `==` in `[`)");
    }
    None
}

/// Whether a pipeline of `script` ends with a call of a function it defines (`... | f`), whose
/// body runs in the script's shell under bash's `lastpipe` and in a subshell in dash: what it
/// assigns, and its `exit`, reach the script in one shell and not in the other. (Another last
/// element, `| read H`, leaves a value the analysis takes as unknown after it in either.)
fn pipes_into_a_function(script: &str) -> bool {
    let functions = super::super::status::defined_functions(script);
    script.split('|').skip(1).any(|after| {
        let first = after
            .trim_start()
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .next()
            .unwrap_or("");
        functions.iter().any(|f| f == first)
    })
}

/// Whether `script` tests the status of a `[[ ]]`, a `(( ))` (not `$(( ))`) or a `[ ]`/`test`
/// holding `==`: one opens right after `if`, `elif`, `while`, `until`, `!`, `&&` or `||`, or is
/// followed by `&&` or `||`.
fn tested_bash_test(script: &str) -> bool {
    let spaced = script.replace([';', '\n'], " ; ");
    let words: Vec<&str> = spaced.split_whitespace().collect();
    for (i, w) in words.iter().enumerate() {
        let close = match *w {
            "[[" => "]]",
            "[" | "test" => "]",
            w if w.starts_with("((") => "))",
            _ => continue,
        };
        let end = words[i..]
            .iter()
            .position(|x| x.ends_with(close) || matches!(*x, ";" | "&&" | "||"))
            .map(|e| i + e)
            .or_else(|| (*w == "test").then_some(words.len()));
        if matches!(*w, "[" | "test") && !end.is_some_and(|e| words[i..e].contains(&"==")) {
            continue;
        }
        let before = i.checked_sub(1).map(|j| words[j]);
        // (A `test` ends at the operator that follows it.)
        let after = end.and_then(|e| match words.get(e) {
            Some(&x) if matches!(x, ";" | "&&" | "||") => Some(x),
            _ => words.get(e + 1).copied(),
        });
        if matches!(before, Some("if" | "elif" | "while" | "until" | "!" | "&&" | "||"))
            || matches!(after, Some("&&" | "||"))
        {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::sh_dialect_doubt;

    #[test]
    fn bash_only_syntax_dash_reads_otherwise_is_named() {
        for doubt in [
            "f &>/dev/null; [ $? = 0 ]",
            "redis-cli ping &> /tmp/x",
            "shopt -s lastpipe; f() { c || st=1; }; x | f; exit $st",
            "c; if [[ $? -ne 0 ]]; then exit 1; fi",
            "c; [[ $? -eq 0 ]] || exit 1",
            "c; ((rc)) && exit 1",
            "c; while (( $? != 0 )); do exit 1; done",
            "c; if [ $? == 0 ]; then exit 0; else exit 1; fi",
            "c; ! test $? == 0",
            "c; test $? == 0 || exit 1",
        ] {
            assert!(sh_dialect_doubt(doubt).is_some(), "{doubt}");
        }
        for plain in [
            "c >/dev/null 2>&1; [ $? = 0 ]",
            "c; rc=$?; [[ $rc -eq 0 ]]",
            "c; exit $(( $? == 3 ))",
            "c; if [ $? = 0 ]; then exit 0; fi",
            "c; echo '=='",
            "shopt -s lastpipe; echo localhost | read H; c",
        ] {
            assert_eq!(sh_dialect_doubt(plain), None, "{plain}");
        }
    }
}
