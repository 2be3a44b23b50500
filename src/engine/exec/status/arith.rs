//! Shell arithmetic (`(( ))`, `$(( ))`) for the replay (`replay`): decimal numbers, `$?`,
//! variables, `! - + * / %`, comparisons, `&&`, `||` and parentheses, bound as bash binds them
//! (bash manual, "Shell Arithmetic"; dash alike for these).

/// The value of arithmetic expression `e` (`(( ))`, `$(( ))`): decimal numbers, `$?`, the
/// variables (`rc`, `$rc`: `var`'s values), `! - + * / %`, comparisons, `&&`, `||`,
/// parentheses. `None` for anything else (an unset variable, a division by 0, an overflow).
pub(super) fn value(e: &str, status: u8, var: impl Fn(&str) -> Option<i64>) -> Option<i64> {
    let toks = tokens(e, status, &var)?;
    let mut at = 0;
    let v = expr(&toks, &mut at, 0)?;
    (at == toks.len()).then_some(v)
}

/// The tokens of arithmetic expression `e`: numbers (variables replaced by their values) and
/// operators.
fn tokens(e: &str, status: u8, var: &impl Fn(&str) -> Option<i64>) -> Option<Vec<Tok>> {
    let b = e.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let j = (i..b.len()).find(|&j| !b[j].is_ascii_alphanumeric()).unwrap_or(b.len());
            let n = &e[i..j];
            // (A leading 0 makes a number octal: not read here.)
            if n.len() > 1 && n.starts_with('0') || !n.bytes().all(|x| x.is_ascii_digit()) {
                return None;
            }
            out.push(Tok::Num(n.parse().ok()?));
            i = j;
        } else if e[i..].starts_with("$?") {
            out.push(Tok::Num(i64::from(status)));
            i += 2;
        } else if c == b'$' || c == b'_' || c.is_ascii_alphabetic() {
            let start = if c == b'$' { i + 1 } else { i };
            let braced = b.get(start) == Some(&b'{');
            let from = if braced { start + 1 } else { start };
            let j =
                (from..b.len()).find(|&j| !(b[j].is_ascii_alphanumeric() || b[j] == b'_')).unwrap_or(b.len());
            let name = &e[from..j];
            if name.is_empty() {
                return None;
            }
            let v = var(name)?;
            out.push(Tok::Num(v));
            i = if braced {
                if b.get(j) != Some(&b'}') {
                    return None;
                }
                j + 1
            } else {
                j
            };
        } else {
            let two = e.get(i..i + 2).unwrap_or("");
            let op = ["==", "!=", "<=", ">=", "&&", "||"].into_iter().find(|o| *o == two);
            if let Some(op) = op {
                out.push(Tok::Op(op));
                i += 2;
            } else {
                let one = e.get(i..i + 1).unwrap_or("");
                let op =
                    ["<", ">", "+", "-", "*", "/", "%", "!", "(", ")"].into_iter().find(|o| *o == one)?;
                out.push(Tok::Op(op));
                i += 1;
            }
        }
    }
    Some(out)
}

/// An arithmetic token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tok {
    Num(i64),
    Op(&'static str),
}

/// The binding power of binary operator `op` (bash manual, "Shell Arithmetic").
fn power(op: &str) -> Option<u8> {
    Some(match op {
        "||" => 1,
        "&&" => 2,
        "==" | "!=" => 3,
        "<" | ">" | "<=" | ">=" => 4,
        "+" | "-" => 5,
        "*" | "/" | "%" => 6,
        _ => return None,
    })
}

/// The expression at `toks[*at..]` whose operators bind more than `min` (precedence climbing).
fn expr(toks: &[Tok], at: &mut usize, min: u8) -> Option<i64> {
    let mut left = match toks.get(*at)? {
        Tok::Num(n) => {
            *at += 1;
            *n
        }
        Tok::Op("(") => {
            *at += 1;
            let v = expr(toks, at, 0)?;
            if toks.get(*at) != Some(&Tok::Op(")")) {
                return None;
            }
            *at += 1;
            v
        }
        Tok::Op("!") => {
            *at += 1;
            i64::from(expr(toks, at, 7)? == 0)
        }
        Tok::Op("-") => {
            *at += 1;
            expr(toks, at, 7)?.checked_neg()?
        }
        Tok::Op(_) => return None,
    };
    while let Some(Tok::Op(op)) = toks.get(*at) {
        let Some(p) = power(op).filter(|p| *p > min) else { break };
        *at += 1;
        let right = expr(toks, at, p)?;
        left = match *op {
            "||" => i64::from(left != 0 || right != 0),
            "&&" => i64::from(left != 0 && right != 0),
            "==" => i64::from(left == right),
            "!=" => i64::from(left != right),
            "<" => i64::from(left < right),
            ">" => i64::from(left > right),
            "<=" => i64::from(left <= right),
            ">=" => i64::from(left >= right),
            "+" => left.checked_add(right)?,
            "-" => left.checked_sub(right)?,
            "*" => left.checked_mul(right)?,
            "/" => left.checked_div(right)?,
            "%" => left.checked_rem(right)?,
            _ => return None,
        };
    }
    Some(left)
}

#[cfg(test)]
mod tests {
    use super::value;

    /// Values bash 5.2 and dash 0.5.12 print for `echo $(( E ))` with `$?` 2 and `rc=2`.
    #[test]
    fn arithmetic_binds_and_evaluates_as_the_shells_do() {
        let var = |n: &str| (n == "rc").then_some(2);
        for (e, v) in [
            (" $? == 3 ", 0),
            ("$? != 3", 1),
            ("1 + 2 * 3", 7),
            ("(1 + 2) * 3", 9),
            ("7 - 2 - 1", 4),
            ("7 / 2 % 2", 1),
            ("rc < 3 && $rc >= 2", 1),
            ("${rc} > 2 || rc <= 1", 0),
            ("!rc", 0),
            ("-rc + 5", 3),
            ("1 == 1 == 1", 1),
            ("2 < 3 == 1", 1),
        ] {
            assert_eq!(value(e, 2, var), Some(v), "{e}");
        }
        for e in ["x == 1", "1 / 0", "08", "1 +", "(1", "1 1", "$((1))", "a ? 1 : 2"] {
            assert_eq!(value(e, 2, var), None, "{e}");
        }
    }
}
