//! Conditions of `if`, `elif`, `case`, `&&` and `||`: decided when their values are known at admission (bash manual, "Conditional Constructs" and "Bash Conditional Expressions").

use super::super::context::{Ctx, is_reserved_char};
use super::super::flow::{COND, PATTERN};
use super::super::shell::split_redirections;

impl Ctx<'_> {
    /// Whether the conditions of a `flow::GUARD` piece hold: `Some(false)` when one certainly
    /// fails, `Some(true)` when all certainly hold, `None` when that is not known.
    pub(in crate::engine::exec) fn guard_holds(&mut self, conds: &str, depth: usize) -> Option<bool> {
        let saved = (self.judging_guard, self.defines_function);
        (self.judging_guard, self.defines_function) = (true, false);
        let mut all = Some(true);
        for cond in conds.split(COND).skip(1) {
            let mut chars = cond.chars();
            let kind = chars.next();
            let rest = chars.as_str();
            let value = match kind {
                Some('T') => self.test_value(rest, depth),
                Some('F') => self.test_value(rest, depth).map(|v| !v),
                Some(k @ ('M' | 'N')) => {
                    let mut parts = rest.split(PATTERN);
                    let word = parts.next().unwrap_or("");
                    let patterns: Vec<&str> = parts.collect();
                    self.case_matches(word, &patterns, depth).map(|m| m == (k == 'M'))
                }
                _ => None,
            };
            match value {
                Some(false) => {
                    all = Some(false);
                    break;
                }
                Some(true) => {}
                None => all = None,
            }
        }
        (self.judging_guard, self.defines_function) = saved;
        all
    }

    /// The one word of `piece` as bash passes it, when known at admission: `None` if it holds a
    /// value known only at run time, or an unquoted expansion that bash would split or glob
    /// (`split`: the word is field-split, as a command's arguments are).
    pub(super) fn cond_word(&mut self, raw: &str, split: bool, depth: usize) -> Option<String> {
        let (v, _) = self.resolve_text(raw, depth, true);
        let v = self.render_lit(&v);
        if v.chars().any(is_reserved_char) {
            return None;
        }
        let unquoted = raw.contains('$');
        if split && unquoted && (v.is_empty() || v.contains(|c: char| c.is_whitespace() || "*?[".contains(c)))
        {
            return None;
        }
        Some(v)
    }

    /// The status of a test piece (`[ ]`, `[[ ]]`, `test`, `true`, `false`, `:`), when certain.
    pub(super) fn test_value(&mut self, piece: &str, depth: usize) -> Option<bool> {
        let (words, _) = split_redirections(piece, |w| self.render_lit(w));
        let (program, args) = words.split_first()?;
        if self.function(Some(program)).is_some() {
            return None;
        }
        let (args, double) = match program.as_str() {
            "true" | ":" => return Some(true),
            "false" => return Some(false),
            "test" => (args, false),
            "[" => (args.strip_suffix(&["]".to_string()])?, false),
            "[[" => (args.strip_suffix(&["]]".to_string()])?, true),
            _ => return None,
        };
        let mut values = Vec::with_capacity(args.len());
        for a in args {
            values.push(self.cond_word(a, !double, depth)?);
        }
        // In `[[ ]]` the right side of `==` and `!=` is a pattern: only a plain word is decided.
        if double && values.iter().any(|v| v.contains(['*', '?', '[', '(', '<', '>', '&', '|', '~'])) {
            return None;
        }
        test_expression(&values)
    }

    /// Whether a `case` word matches one of `patterns` (each a literal word or `*`), when certain.
    pub(super) fn case_matches(&mut self, word: &str, patterns: &[&str], depth: usize) -> Option<bool> {
        let one = |ctx: &Self, p: &str| -> Option<String> {
            let (words, _) = split_redirections(p, |w| ctx.render_lit(w));
            match words.as_slice() {
                [w] => Some(w.clone()),
                _ => None,
            }
        };
        let value = self.cond_word(&one(self, word)?, false, depth)?;
        let mut unknown = false;
        for p in patterns {
            if p.trim() == "*" {
                return Some(true);
            }
            let pattern = one(self, p).and_then(|raw| self.cond_word(&raw, false, depth));
            match pattern {
                Some(pat) if !pat.contains(['*', '?', '[', '\\']) => {
                    if pat == value {
                        return Some(true);
                    }
                }
                _ => unknown = true,
            }
        }
        (!unknown).then_some(false)
    }
}

/// The status of `test` (`[`) given these arguments (bash manual, "Bash Conditional
/// Expressions" and the `test` builtin's rules by number of arguments), for the string and
/// integer comparisons, `-n`, `-z` and `!`; `None` for anything else (files, `-a`, `-o`).
pub(in crate::engine::exec) fn test_expression(a: &[String]) -> Option<bool> {
    let int = |s: &str| s.trim().parse::<i64>().ok();
    match a {
        [] => Some(false),
        [x] => Some(!x.is_empty()),
        [op, x] => match op.as_str() {
            "!" => Some(x.is_empty()),
            "-n" => Some(!x.is_empty()),
            "-z" => Some(x.is_empty()),
            _ => None,
        },
        [x, op, y] => match op.as_str() {
            "=" | "==" => Some(x == y),
            "!=" => Some(x != y),
            "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge" => {
                let (x, y) = (int(x)?, int(y)?);
                Some(match op.as_str() {
                    "-eq" => x == y,
                    "-ne" => x != y,
                    "-lt" => x < y,
                    "-le" => x <= y,
                    "-gt" => x > y,
                    _ => x >= y,
                })
            }
            _ if x == "!" => test_expression(&a[1..]).map(|v| !v),
            _ => None,
        },
        [x, ..] if a.len() == 4 && x == "!" => test_expression(&a[1..]).map(|v| !v),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::test_expression;

    /// `test_expression` gives bash 5.2's `[ ... ]` status on these (each checked with bash:
    /// `[ 07 -eq 7 ]` is 0, `[ -n ]` is 0, `[ a -ge b ]` is 2, an error, so not decided).
    #[test]
    fn test_expressions_give_what_bash_gives() {
        let cases: &[(&[&str], Option<bool>)] = &[
            (&[], Some(false)),
            (&["x"], Some(true)),
            (&[""], Some(false)),
            (&["!", ""], Some(true)),
            (&["!", "x"], Some(false)),
            (&["-n", ""], Some(false)),
            (&["-z", ""], Some(true)),
            (&["-n", "x"], Some(true)),
            (&["-n"], Some(true)),
            (&["-z"], Some(true)),
            (&["!"], Some(true)),
            (&["a", "=", "a"], Some(true)),
            (&["a", "==", "b"], Some(false)),
            (&["a", "!=", "b"], Some(true)),
            (&["3", "-lt", "5"], Some(true)),
            (&["5", "-le", "5"], Some(true)),
            (&["07", "-eq", "7"], Some(true)),
            (&["1", "-gt", "2"], Some(false)),
            (&["!", "a", "=", "b"], Some(true)),
            (&["a", "-ge", "b"], None),
            (&["-f", "/etc/passwd"], None),
            (&["a", "-a", "b"], None),
            (&["a", "=", "a", "-o", "b"], None),
        ];
        for (args, want) in cases {
            let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            assert_eq!(test_expression(&args), *want, "[ {} ]", args.join(" "));
        }
    }
}
