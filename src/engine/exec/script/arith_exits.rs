//! An `exit` or `return` whose status is a constant arithmetic expansion: `exit $((0))`, `exit
//! "$(( 1 - 1 ))"`, `return $((0))` (s26, a new user's false denials: `redis-cli -h cache ping;
//! exit $((0))` exits 0 / 0 in bash 5.2 and dash 0.5.12 with a stub client up / down, and was
//! denied, because the status walk (`status::rules`) reads only literal statuses and gave up on a
//! computed one, which kept every check of the script coupled).
//!
//! An expansion of integer constants only (decimal numbers, `+ - * / %`, unary `+ -`,
//! parentheses) has one value (bash manual, "Shell Arithmetic"; POSIX 2.6.4), the same in both
//! shells, so the word is read as that number in place (blanks for the rest of the word, so every
//! offset stays the script's), as `positional::positional_exit_words` reads `exit $1`: `exit
//! $((1))` is then `exit 1` (1 / 1: the probe fails every time, a warning), `C || exit $((1))` is
//! coupled (0 / 1). Not read (left computed, as before): a variable or `$` in the expression
//! (`$((n+1))`), a number written with a leading `0` (octal), `0x` or `BASE#`, any other operator,
//! a division by zero, a value below 0 (`exit $((-1))`: bash 255, dash "Illegal number", 2) or
//! past 2^32 - 1 (`exit $((4294967296))`: bash 0, dash 2), and an unquoted expansion in a script
//! that names `IFS` (its digits could be split away: `IFS=0; exit $((0))` exits 2).

use crate::engine::exec::kinds::KindName;
use tree_sitter::{Node, Tree};

/// The text of `n` in `src`.
fn text<'s>(n: Node<'_>, src: &'s str) -> &'s str {
    src.get(n.start_byte()..n.end_byte()).unwrap_or("")
}

/// `src` (parsed into `trees`) with each `exit`/`return` whose only argument is `$((EXPR))` or
/// `"$((EXPR))"`, EXPR a constant ([`constant`]), rewritten to the number (module docs).
/// `out`: the rewritten text so far.
pub(super) fn constant_arithmetic_exits(src: &str, trees: &[Tree], out: &mut Option<String>) {
    if !src.contains("$((") {
        return;
    }
    let ifs = super::super::flow::mentions(src, &["IFS"]) || src.contains("IFS=");
    for tree in trees {
        super::super::status::each_node(tree.root_node(), |k| {
            if k.kind_name() != "command"
                || !k.child_by_field("name").is_some_and(|m| matches!(text(m, src), "exit" | "return"))
            {
                return;
            }
            let mut c = k.walk();
            let args: Vec<Node<'_>> = k.children_by_field("argument", &mut c).collect();
            let [arg] = args.as_slice() else {
                return;
            };
            let word = text(*arg, src);
            let quoted = word.strip_prefix('"').and_then(|w| w.strip_suffix('"'));
            if quoted.is_none() && ifs {
                return;
            }
            let Some(expr) = quoted.unwrap_or(word).strip_prefix("$((").and_then(|w| w.strip_suffix("))"))
            else {
                return;
            };
            let Some(value) = constant(expr).filter(|v| (0..=i64::from(u32::MAX)).contains(v)) else {
                return;
            };
            let value = value.to_string();
            if value.len() > word.len() {
                return;
            }
            let t = out.get_or_insert_with(|| src.to_string());
            let padded = format!("{value}{}", " ".repeat(word.len() - value.len()));
            t.replace_range(arg.start_byte()..arg.end_byte(), &padded);
        });
    }
}

/// The value of `expr`, an arithmetic expression of decimal integer constants (no leading `0`
/// but `0` itself), binary `+ - * / %`, unary `+ -` and parentheses, as bash 5.2 and dash 0.5.12
/// compute it (64-bit, division truncating toward zero); `None` for anything else, an overflow
/// or a division by zero.
pub(in crate::engine::exec) fn constant(expr: &str) -> Option<i64> {
    let tokens = tokens(expr)?;
    let mut at = 0;
    let value = sum(&tokens, &mut at, 0)?;
    (at == tokens.len()).then_some(value)
}

/// A token of a constant arithmetic expression: a number or an operator character.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    Number(i64),
    Op(u8),
}

/// `expr` split into [`Token`]s, or `None` for a character or number form not read.
fn tokens(expr: &str) -> Option<Vec<Token>> {
    let b = expr.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b' ' | b'\t' | b'\n' => i += 1,
            b'(' | b')' => {
                out.push(Token::Op(b[i]));
                i += 1;
            }
            b'+' | b'-' | b'*' | b'/' | b'%' => {
                // (`**`, `++`, `--`, `*=`, `-=`... are other operators.)
                let next = b.get(i + 1).copied();
                if matches!(next, Some(b'*' | b'=')) || (matches!(b[i], b'+' | b'-') && next == Some(b[i])) {
                    return None;
                }
                out.push(Token::Op(b[i]));
                i += 1;
            }
            b'0'..=b'9' => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'#') {
                    i += 1;
                }
                let digits = &expr[start..i];
                if !digits.bytes().all(|d| d.is_ascii_digit()) || digits.len() > 1 && digits.starts_with('0')
                {
                    return None;
                }
                out.push(Token::Number(digits.parse().ok()?));
            }
            _ => return None,
        }
    }
    Some(out)
}

/// Deepest nesting of parentheses and unary operators read.
const MAX_NESTING: usize = 32;

/// `term (('+' | '-') term)*`.
fn sum(t: &[Token], at: &mut usize, depth: usize) -> Option<i64> {
    let mut value = product(t, at, depth)?;
    while let Some(Token::Op(op @ (b'+' | b'-'))) = t.get(*at) {
        *at += 1;
        let rhs = product(t, at, depth)?;
        value = if *op == b'+' { value.checked_add(rhs)? } else { value.checked_sub(rhs)? };
    }
    Some(value)
}

/// `unary (('*' | '/' | '%') unary)*`.
fn product(t: &[Token], at: &mut usize, depth: usize) -> Option<i64> {
    let mut value = unary(t, at, depth)?;
    while let Some(Token::Op(op @ (b'*' | b'/' | b'%'))) = t.get(*at) {
        *at += 1;
        let rhs = unary(t, at, depth)?;
        value = match op {
            b'*' => value.checked_mul(rhs)?,
            b'/' => value.checked_div(rhs)?,
            _ => value.checked_rem(rhs)?,
        };
    }
    Some(value)
}

/// `('+' | '-') unary | '(' sum ')' | number`.
fn unary(t: &[Token], at: &mut usize, depth: usize) -> Option<i64> {
    if depth > MAX_NESTING {
        return None;
    }
    let token = *t.get(*at)?;
    *at += 1;
    match token {
        Token::Number(n) => Some(n),
        Token::Op(b'+') => unary(t, at, depth + 1),
        Token::Op(b'-') => unary(t, at, depth + 1)?.checked_neg(),
        Token::Op(b'(') => {
            let value = sum(t, at, depth + 1)?;
            if t.get(*at) != Some(&Token::Op(b')')) {
                return None;
            }
            *at += 1;
            Some(value)
        }
        Token::Op(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::constant;

    #[test]
    fn constant_expressions_are_computed_as_the_shells_do() {
        // (bash 5.2 and dash 0.5.12: `exit $((EXPR))`, each value mod 256 as its status.)
        assert_eq!(constant("0"), Some(0));
        assert_eq!(constant(" 0 "), Some(0));
        assert_eq!(constant("1-1"), Some(0));
        assert_eq!(constant("7/2"), Some(3));
        assert_eq!(constant(" -7 % 3 + 2"), Some(1));
        assert_eq!(constant("2*(3+4)"), Some(14));
        assert_eq!(constant("-(-1)"), Some(1));
        assert_eq!(constant("(1)*2"), Some(2));
        for other in [
            "", "n", "n+1", "010", "0x1", "2#1", "1/0", "1%0", "2**3", "1++", "(1", "1)", "x=1", "1,2", "1<2",
        ] {
            assert_eq!(constant(other), None, "{other}");
        }
        assert_eq!(constant("9223372036854775807+1"), None);
    }
}
