//! The tests and arithmetic the replay evaluates (`[ ]`, `test`, `[[ ]]`, `(( ))`, `$(( ))`) on
//! the values it holds: moved from `replay.rs` by stage (s22); and the statuses that stand for an
//! outage whose statuses are not known ([`representatives`], s24).

use super::super::super::script::{arithmetic, test_expression};
use super::Run;

impl Run<'_, '_> {
    /// `test`'s (`[`'s) words `w` (without `[`/`]`), expanded (an unquoted empty value is no
    /// word) and evaluated as bash's `test` builtin does (`script::test_expression`).
    pub(super) fn single_test(&self, w: &[&str]) -> Option<bool> {
        let mut args = Vec::with_capacity(w.len());
        for raw in w {
            let v = match *raw {
                "(" | "\\(" => "(".to_string(),
                ")" | "\\)" => ")".to_string(),
                _ => self.word(raw)?,
            };
            if !v.is_empty() || raw.starts_with(['"', '\'']) {
                args.push(v);
            }
        }
        test_expression(&args)
    }

    /// `[[ ]]`'s words `w` evaluated: `!`, `&&`, `||`, `( )`, `A OP B` for `-eq -ne -lt -le -gt
    /// -ge = == !=` (a pattern only as a literal), `-n A`, `-z A`, `A`.
    pub(super) fn test(&self, w: &[&str]) -> Option<bool> {
        let (or, and) = ("||", "&&");
        // Split at the lowest-binding operator outside parentheses.
        for op in [or, and] {
            let mut depth = 0i32;
            for (i, x) in w.iter().enumerate().rev() {
                match *x {
                    ")" => depth += 1,
                    "(" => depth -= 1,
                    x if x == op && depth == 0 && i > 0 => {
                        let (l, r) = (self.test(&w[..i])?, self.test(&w[i + 1..])?);
                        return Some(if op == or { l || r } else { l && r });
                    }
                    _ => {}
                }
            }
        }
        match w {
            ["!", rest @ ..] if !rest.is_empty() => self.test(rest).map(|b| !b),
            ["(", inner @ .., ")"] if !inner.is_empty() => self.test(inner),
            [a, op, b] => {
                let (a, b) = (self.word(a)?, self.word(b)?);
                // An operand of `-eq` ... is an arithmetic expression in `[[ ]]` (bash manual,
                // "Bash Conditional Expressions": "evaluated as arithmetic expressions"), so a
                // name is its variable's value (s22: `rc=$?; [[ rc -eq 0 ]]` and `[[ $(echo rc)
                // -eq 0 ]]` exit 0 / 1 in bash 5.2); a name the replay does not hold is a doubt.
                let int = |x: &str| {
                    x.parse::<i64>().ok().or_else(|| {
                        super::super::super::context::is_ident(x).then(|| self.arith(x)).flatten()
                    })
                };
                Some(match *op {
                    "=" | "==" => a == b,
                    "!=" => a != b,
                    "-eq" => int(&a)? == int(&b)?,
                    "-ne" => int(&a)? != int(&b)?,
                    "-lt" => int(&a)? < int(&b)?,
                    "-le" => int(&a)? <= int(&b)?,
                    "-gt" => int(&a)? > int(&b)?,
                    "-ge" => int(&a)? >= int(&b)?,
                    _ => return None,
                })
            }
            ["-n", a] => Some(!self.word(a)?.is_empty()),
            ["-z", a] => Some(self.word(a)?.is_empty()),
            [a] if !a.starts_with('-') && *a != "!" => Some(!self.word(a)?.is_empty()),
            _ => None,
        }
    }

    /// The value of arithmetic expression `e` (`(( ))`, `$(( ))`): `$?`, `$rc` and `${rc}`
    /// replaced by their values, then bash's arithmetic (`script::arithmetic`), names read from
    /// the variables the replay assigned (`None` for any other, or a substitution).
    pub(super) fn arith(&self, e: &str) -> Option<i64> {
        let mut out = String::with_capacity(e.len());
        let mut rest = e;
        while let Some(i) = rest.find('$') {
            out.push_str(&rest[..i]);
            let after = &rest[i + 1..];
            let (name, len) = if let Some(x) = after.strip_prefix('{') {
                let end = x.find('}')?;
                (&x[..end], end + 2)
            } else if after.starts_with('?') {
                ("?", 1)
            } else {
                let end =
                    after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
                (&after[..end], end)
            };
            let value = if name == "?" { self.status.to_string() } else { self.var(name)?.to_string() };
            if name.is_empty() || value.is_empty() {
                return None;
            }
            out.push_str(&value);
            rest = &after[len..];
        }
        out.push_str(rest);
        arithmetic(&out, &mut |name| self.var(name).map(str::to_string))
    }
}

/// The failure statuses that stand for all of 1 to 255 when a client's are not known: each number
/// of the script's text up to 255, one less and one more (a comparison with a literal splits the
/// statuses at it; both parities for `%`), and 1, 2, 126 to 128, 255.
pub(super) fn representatives(src: &str) -> Vec<u8> {
    let mut out: Vec<u8> = vec![1, 2, 126, 127, 128, 255];
    for w in src.split(|c: char| !c.is_ascii_digit()).filter(|w| !w.is_empty() && w.len() <= 3) {
        if let Ok(n) = w.parse::<u16>().map(i32::from) {
            out.extend((n - 1..=n + 1).filter_map(|x| u8::try_from(x).ok()).filter(|x| *x > 0));
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}
