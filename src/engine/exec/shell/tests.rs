//! Tests of the script split: a plain command is split as the parser splits it, the split kept
//! for the object's rules is the rules' own, and `skip_parens`.

use super::*;
use crate::engine::exec::ExecEnv;

/// A script the parser is not asked about (one plain command, assignments before it included)
/// gives the very pieces the parser gives.
#[test]
fn a_plain_command_is_split_as_the_parser_splits_it() {
    let env = ExecEnv::default();
    for script in [
        "CONNECTION_CHECK_MAX_COUNT=0 AIRFLOW__LOGGING__LOGGING_LEVEL=ERROR exec /entrypoint \\\n  airflow jobs check --job-type SchedulerJob --local\n",
        "A=1",
        "A=1 B=\"x y\"",
        "PGHOST=db pg_isready -h \"$H\" -p ${PORT:-5432}",
        "A='$x' B=\"${C}\" redis-cli -a 'p$w' ping \\$y",
        "env -i PATH=/bin cmd --x=1 \"${A}\" '\"' \"'\"",
        "  mysqladmin status -uroot -p\"${password_aux}\"  ",
    ] {
        assert!(plain_command(script).is_some(), "{script}");
        let (mut fast, mut parsed) = (Vec::new(), Vec::new());
        Ctx::new(&env).split_script(script, 0, &mut fast);
        Ctx::new(&env).split_parsed(script, 0, &mut parsed);
        assert_eq!(fast, parsed, "{script}");
        assert_eq!(fast.len(), 1, "{script}");
    }
    // Not plain: a keyword after the assignments, or an operator.
    for script in ["A=1 if true; then x; fi", "A=1 [[ -f x ]]", "A=1 x | y", "A=$(x) y"] {
        assert!(plain_command(script).is_none(), "{script}");
    }
}

/// The split an exec probe's analysis keeps for the object's rules is the split the rules
/// would make themselves, and a script whose split depends on more than its text (a loop
/// walked per word, a substitution nested past the depth walked) is not kept. A script that is
/// not ASCII but needs no sanitizing is kept too (kills the s16 sample's survivor
/// `shell.rs:384:72`, `sanitize(script) == script` made `!=`, which kept only the scripts the
/// rules' split would sanitize, and `384:36`, the `||` made `&&`, which kept no such script).
#[test]
fn the_split_kept_for_the_rules_is_the_rules_own() {
    use crate::engine::exec::{AnalysisBudget, Options, analyze, split_commands_uncached};
    let nested = format!("x=\"{}y{}\"; redis-cli -h \"$x\" ping", "$(echo ".repeat(9), ")".repeat(9));
    let kept = [
        "password_aux=\"${MYSQL_ROOT_PASSWORD:-}\"\nif [[ -f \"${MYSQL_ROOT_PASSWORD_FILE:-}\" ]]; then\n    password_aux=$(cat \"$MYSQL_ROOT_PASSWORD_FILE\")\nfi\nmysqladmin status -uroot -p\"${password_aux}\"\n",
        "H=$(hostname -f); curl -sf \"http://$H:8080/health\" > /dev/null 2>&1 || exit 1",
        "f=1; cat <<EOF | sh\nredis-cli -h cache ping\nEOF\n",
        "case \"$MODE\" in a) x `date` ;; *) nc -z db 5432 & ;; esac; exit 0",
        "mysqladmin ping -h 127.0.0.1",
        // Not ASCII, and nothing to sanitize: the text is the rules' own (`sanitize`).
        "curl -sf 'http://localhost:8080/santé' || exit 1",
        "echo '✓ up'; pg_isready -h db",
    ];
    // A function's body is split on its own for the rules (`with_function_bodies`), not kept.
    let function =
        "f() { pg_isready -h \"$1\"; }\nf db.default.svc\ncat <<EOF | sh\nredis-cli -h cache ping\nEOF\n";
    for script in kept.iter().copied().chain([nested.as_str(), "for h in a b; do nc -z $h 1; done", function])
    {
        let budget = AnalysisBudget::default();
        let argv = ["/bin/sh".to_string(), "-c".to_string(), script.to_string()];
        analyze(&argv, &ExecEnv::default(), &Options { budget: Some(&budget), ..Options::default() });
        let split = budget.parses.borrow().split(script);
        if kept.contains(&script) {
            let split = split.unwrap_or_else(|| panic!("not kept: {script}"));
            let own = split_commands_uncached(script, &AnalysisBudget::default());
            assert_eq!(&*split, own.as_slice(), "{script}");
        } else {
            assert!(split.is_none(), "{script}");
        }
    }
}

/// `skip_parens` stops at the `)` that closes the `$(` (nested pairs included), not at the first.
#[test]
fn skip_parens_stops_after_the_closing_paren() {
    let at = |s: &str, from: usize| skip_parens(&s.chars().collect::<Vec<_>>(), from);
    assert_eq!(at("$(a)b)", 2), 4);
    assert_eq!(at("$(a(b)c)d", 2), 8);
    assert_eq!(at("$(a", 2), 3);
}
