//! Bash arithmetic (`(( ))`, `$(( ))`, the operands of `-eq` inside `[[ ]]`) on values known at
//! admission (bash manual, "Shell Arithmetic"): 64-bit integers, C's operators and precedence.
//! Anything with a side effect (`=`, `+=`, `++`, `--`), an overflow, a division by zero, or a
//! name whose value is not known gives `None`: the condition is left undecided.

/// Deepest nesting of a variable whose value is itself an expression (bash evaluates it).
const MAX_NESTING: usize = 8;

/// Most tokens of one expression evaluated.
const MAX_TOKENS: usize = 256;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(i64),
    Name(String),
    Op(&'static str),
}

/// The operators, longest first (so `<=` is read before `<`).
const OPS: [&str; 31] = [
    ",", "**", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++", "--", "+=", "-=", "*=", "/=", "%=", "+",
    "-", "*", "/", "%", "<", ">", "&", "|", "^", "!", "~", "?", ":",
];

/// A number as bash reads it: decimal, `0x` hex, `0` octal or `BASE#DIGITS` (base 2 to 64).
fn number(word: &str) -> Option<i64> {
    let (base, digits) = if let Some((b, d)) = word.split_once('#') {
        (b.parse::<u32>().ok().filter(|b| (2..=64).contains(b))?, d)
    } else if let Some(h) = word.strip_prefix("0x").or_else(|| word.strip_prefix("0X")) {
        (16, h)
    } else if word.len() > 1 && word.starts_with('0') {
        (8, &word[1..])
    } else {
        (10, word)
    };
    if digits.is_empty() {
        return None;
    }
    let mut v: i64 = 0;
    for c in digits.chars() {
        let d = match c {
            '0'..='9' => c as u32 - '0' as u32,
            'a'..='z' => c as u32 - 'a' as u32 + 10,
            // Above base 36 the capitals are 36 to 61; below it they read as lower case.
            'A'..='Z' if base > 36 => c as u32 - 'A' as u32 + 36,
            'A'..='Z' => c as u32 - 'A' as u32 + 10,
            '@' => 62,
            '_' => 63,
            _ => return None,
        };
        if d >= base {
            return None;
        }
        v = v.checked_mul(i64::from(base))?.checked_add(i64::from(d))?;
    }
    Some(v)
}

fn tokens(s: &str) -> Option<Vec<Tok>> {
    let cs: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if out.len() >= MAX_TOKENS {
            return None;
        }
        if c.is_ascii_alphanumeric() || c == '_' {
            let start = i;
            let digit = c.is_ascii_digit();
            while i < cs.len()
                && (cs[i].is_ascii_alphanumeric() || cs[i] == '_' || digit && matches!(cs[i], '#' | '@'))
            {
                i += 1;
            }
            let w: String = cs[start..i].iter().collect();
            out.push(if c.is_ascii_digit() { Tok::Num(number(&w)?) } else { Tok::Name(w) });
            continue;
        }
        if c == '(' || c == ')' {
            out.push(Tok::Op(if c == '(' { "(" } else { ")" }));
            i += 1;
            continue;
        }
        let rest: String = cs[i..cs.len().min(i + 2)].iter().collect();
        // (An assignment, `=`, `+=`, `<<=`, ..., is a side effect: `=` is no token, so it is
        // not evaluated here; nor are `++` and `--`, which no rule below reads.)
        let op = OPS.into_iter().find(|op| rest.starts_with(op))?;
        out.push(Tok::Op(op));
        i += op.len();
    }
    Some(out)
}

/// The value of the bash arithmetic expression `expr`, where `value` gives a variable's value
/// (`None`: not known; an empty value is 0, as in bash).
pub(in crate::engine::exec) fn evaluate(
    expr: &str,
    value: &mut dyn FnMut(&str) -> Option<String>,
) -> Option<i64> {
    eval_nested(expr, value, 0)
}

fn eval_nested(expr: &str, value: &mut dyn FnMut(&str) -> Option<String>, nesting: usize) -> Option<i64> {
    let toks = tokens(expr)?;
    if toks.is_empty() {
        // `(( ))` is 0 (status 1); a variable holding nothing is 0.
        return Some(0);
    }
    let mut p = Parser { toks, at: 0, value, nesting };
    let v = p.comma()?;
    (p.at == p.toks.len()).then_some(v)
}

struct Parser<'v> {
    toks: Vec<Tok>,
    at: usize,
    value: &'v mut dyn FnMut(&str) -> Option<String>,
    nesting: usize,
}

/// Binary operators by precedence level, lowest first (bash manual, "Shell Arithmetic").
const LEVELS: [&[&str]; 10] = [
    &["||"],
    &["&&"],
    &["|"],
    &["^"],
    &["&"],
    &["==", "!="],
    &["<", "<=", ">", ">="],
    &["<<", ">>"],
    &["+", "-"],
    &["*", "/", "%"],
];

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at)
    }

    fn eat(&mut self, op: &'static str) -> bool {
        if self.peek() == Some(&Tok::Op(op)) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn comma(&mut self) -> Option<i64> {
        let mut v = self.ternary()?;
        while self.eat(",") {
            v = self.ternary()?;
        }
        Some(v)
    }

    fn ternary(&mut self) -> Option<i64> {
        let c = self.binary(0)?;
        if !self.eat("?") {
            return Some(c);
        }
        let a = self.comma()?;
        if !self.eat(":") {
            return None;
        }
        let b = self.ternary()?;
        Some(if c != 0 { a } else { b })
    }

    fn binary(&mut self, level: usize) -> Option<i64> {
        if level == LEVELS.len() {
            return self.power();
        }
        let mut v = self.binary(level + 1)?;
        loop {
            let Some(Tok::Op(op)) = self.peek() else {
                return Some(v);
            };
            let op = *op;
            if !LEVELS[level].contains(&op) {
                return Some(v);
            }
            self.at += 1;
            let r = self.binary(level + 1)?;
            v = match op {
                "||" => i64::from(v != 0 || r != 0),
                "&&" => i64::from(v != 0 && r != 0),
                "|" => v | r,
                "^" => v ^ r,
                "&" => v & r,
                "==" => i64::from(v == r),
                "!=" => i64::from(v != r),
                "<" => i64::from(v < r),
                "<=" => i64::from(v <= r),
                ">" => i64::from(v > r),
                ">=" => i64::from(v >= r),
                "<<" => v.checked_shl(u32::try_from(r).ok()?)?,
                ">>" => v.checked_shr(u32::try_from(r).ok()?)?,
                "+" => v.checked_add(r)?,
                "-" => v.checked_sub(r)?,
                "*" => v.checked_mul(r)?,
                "/" => v.checked_div(r)?,
                _ => v.checked_rem(r)?,
            };
        }
    }

    /// `**` (right-associative, above `*` and below the unary operators: `-2**2` is 4).
    fn power(&mut self) -> Option<i64> {
        let base = self.unary()?;
        if !self.eat("**") {
            return Some(base);
        }
        let exp = self.power()?;
        base.checked_pow(u32::try_from(exp).ok()?)
    }

    fn unary(&mut self) -> Option<i64> {
        match self.peek()?.clone() {
            Tok::Op("-") => {
                self.at += 1;
                self.unary()?.checked_neg()
            }
            Tok::Op("+") => {
                self.at += 1;
                self.unary()
            }
            Tok::Op("!") => {
                self.at += 1;
                Some(i64::from(self.unary()? == 0))
            }
            Tok::Op("~") => {
                self.at += 1;
                Some(!self.unary()?)
            }
            Tok::Op("(") => {
                self.at += 1;
                let v = self.comma()?;
                self.eat(")").then_some(v)
            }
            Tok::Num(n) => {
                self.at += 1;
                Some(n)
            }
            Tok::Name(name) => {
                self.at += 1;
                if self.nesting >= MAX_NESTING {
                    return None;
                }
                let v = (self.value)(&name)?;
                eval_nested(&v, self.value, self.nesting + 1)
            }
            // `++`, `--` (side effects) and anything else.
            Tok::Op(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::evaluate;

    /// `evaluate` gives what bash 5.2 prints for `N=1; E=; X="N+1"; echo $(( EXPR ))`; `None`
    /// where bash reports an error, or wraps around (`None` by choice: not decided), or where the
    /// expression assigns (a side effect) or reads a variable not known here (`U`).
    #[test]
    fn arithmetic_gives_what_bash_gives() {
        let cases: &[(&str, Option<i64>)] = &[
            ("1 + 2 * 3", Some(7)),
            ("(1 + 2) * 3", Some(9)),
            ("-2 ** 2", Some(4)),
            ("2 ** 3 ** 2", Some(512)),
            ("7 / 2", Some(3)),
            ("-7 / 2", Some(-3)),
            ("-7 % 3", Some(-1)),
            ("7 % -3", Some(1)),
            ("1 << 3", Some(8)),
            ("-16 >> 2", Some(-4)),
            ("5 & 3", Some(1)),
            ("5 | 3", Some(7)),
            ("5 ^ 3", Some(6)),
            ("~5", Some(-6)),
            ("!5", Some(0)),
            ("!0", Some(1)),
            ("1 < 2", Some(1)),
            ("2 <= 1", Some(0)),
            ("3 > 2 == 1", Some(1)),
            ("1 == 1 && 0", Some(0)),
            ("0 || 2", Some(1)),
            ("1 ? 10 : 20", Some(10)),
            ("0 ? 10 : 1 ? 30 : 40", Some(30)),
            ("0x1F", Some(31)),
            ("0X10", Some(16)),
            ("010", Some(8)),
            ("2#1010", Some(10)),
            ("16#ff", Some(255)),
            ("36#z", Some(35)),
            ("64#_", Some(63)),
            ("1, 2", Some(2)),
            ("N", Some(1)),
            ("N + 1", Some(2)),
            ("E", Some(0)),
            ("E + 5", Some(5)),
            ("X", Some(2)),
            ("X * 2", Some(4)),
            ("N > 1", Some(0)),
            ("N == 1", Some(1)),
            ("9223372036854775807", Some(i64::MAX)),
            ("-9223372036854775807 - 1", Some(i64::MIN)),
            ("", Some(0)),
            ("  3  ", Some(3)),
            // bash: errors.
            ("1 / 0", None),
            ("5 % 0", None),
            ("08", None),
            ("2#12", None),
            ("1 +", None),
            ("(1", None),
            ("a b", None),
            ("1.5", None),
            ("2 ** -1", None),
            // bash wraps to the minimum: not decided here.
            ("9223372036854775807 + 1", None),
            ("-9223372036854775807 - 2", None),
            ("3 * 4611686018427387904", None),
            // Side effects, and a variable not known (bash: 2, 1, 2, 0).
            ("N = 2", None),
            ("N++", None),
            ("N += 1", None),
            ("U > 1", None),
        ];
        for (expr, want) in cases {
            let mut value = |name: &str| match name {
                "N" => Some("1".to_string()),
                "E" => Some(String::new()),
                "X" => Some("N+1".to_string()),
                _ => None,
            };
            assert_eq!(evaluate(expr, &mut value), *want, "$(( {expr} ))");
        }
        // A variable whose value names itself is cut at the nesting bound, never a stack overflow.
        let mut selfish = |_: &str| Some("Y + 1".to_string());
        assert_eq!(evaluate("Y", &mut selfish), None);
    }
}
