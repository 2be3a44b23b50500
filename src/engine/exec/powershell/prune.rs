//! Code of a PowerShell script that never runs, and the functions it defines: [`Ctx::ps_prune`]
//! blanks the branches of an `if` whose condition is known at admission and everything after a
//! top-level `exit`/`return`, and takes out `function`/`filter` definitions ([`PsFunction`]),
//! whose bodies [`super`] analyses where the script calls them. It runs on each script or
//! function body before its statements are read ([`super::lex`]).

use super::super::EnvValue;
use super::super::context::Ctx;
use super::lex::{closing, var_key};

/// A function the script defines (`function NAME [(PARAMS)] { BODY }`, or `filter`): its name
/// (lowercase, without a scope modifier), its parameters' keys in order, and its body. The body
/// runs only where the script calls it (about_Functions), with the arguments bound to the
/// parameters by name or position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PsFunction {
    pub(super) name: String,
    pub(super) params: Vec<String>,
    pub(super) body: String,
}

/// The script's characters with strings and comments masked: a quoted character is `x`, a
/// comment is blanks, so brackets and keywords found in the mask are code. Same length as `chars`.
fn code_mask(chars: &[char]) -> Vec<char> {
    let mut m = chars.to_vec();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\'' | '\u{2018}' | '\u{2019}' => {
                i += 1;
                while i < chars.len() {
                    if matches!(chars[i], '\'' | '\u{2018}' | '\u{2019}') {
                        if chars.get(i + 1) == Some(&'\'') {
                            m[i] = 'x';
                            m[i + 1] = 'x';
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    m[i] = 'x';
                    i += 1;
                }
            }
            '"' | '\u{201C}' | '\u{201D}' => {
                i += 1;
                while i < chars.len() && !matches!(chars[i], '"' | '\u{201C}' | '\u{201D}') {
                    if chars[i] == '`' && i + 1 < chars.len() {
                        m[i] = 'x';
                        i += 1;
                    }
                    m[i] = 'x';
                    i += 1;
                }
            }
            '`' if i + 1 < chars.len() => {
                m[i + 1] = 'x';
                i += 1;
            }
            '#' if i == 0 || chars[i - 1].is_whitespace() || matches!(chars[i - 1], ';' | '{' | '}') => {
                while i < chars.len() && chars[i] != '\n' {
                    m[i] = ' ';
                    i += 1;
                }
                continue;
            }
            '<' if chars.get(i + 1) == Some(&'#') => {
                while i < chars.len() && !(chars[i] == '#' && chars.get(i + 1) == Some(&'>')) {
                    m[i] = ' ';
                    i += 1;
                }
                for c in m.iter_mut().skip(i).take(2) {
                    *c = ' ';
                }
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    m
}

/// Whether `c` continues a keyword or a name (so a keyword must not touch it).
fn name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '$' | ':' | '.' | '\\' | '/')
}

/// The keyword (lowercase) starting at `i` in the mask, when one starts there.
fn keyword_at(m: &[char], i: usize) -> Option<String> {
    if i > 0 && name_char(m[i - 1]) {
        return None;
    }
    let len = m[i..].iter().take_while(|c| c.is_ascii_alphabetic()).count();
    if len == 0 || m.get(i + len).is_some_and(|c| name_char(*c)) {
        return None;
    }
    let word: String = m[i..i + len].iter().collect::<String>().to_ascii_lowercase();
    matches!(word.as_str(), "function" | "filter" | "if" | "elseif" | "else" | "exit" | "return" | "switch")
        .then_some(word)
}

/// Index of the first non-blank at or after `i` (newlines included).
fn skip_blank(m: &[char], mut i: usize) -> usize {
    while i < m.len() && m[i].is_whitespace() {
        i += 1;
    }
    i
}

/// The `(` ... `)` then `{` ... `}` of an `if`/`elseif` after `i` (or only the block for
/// `else`): the condition's inner range and the block's opening and closing indexes.
fn clause(m: &[char], i: usize, with_condition: bool) -> Option<(std::ops::Range<usize>, usize, usize)> {
    let mut k = skip_blank(m, i);
    let mut cond = k..k;
    if with_condition {
        if m.get(k) != Some(&'(') {
            return None;
        }
        let close = closing(m, k);
        if close >= m.len() {
            return None;
        }
        cond = k + 1..close;
        k = skip_blank(m, close + 1);
    }
    if m.get(k) != Some(&'{') {
        return None;
    }
    let close = closing(m, k);
    (close < m.len()).then_some((cond, k, close))
}

/// Parameter keys of a `param(...)` block or a function's `(...)` list: each `$name` that ends a
/// declaration (before `,`, `=`, `)` or the end), type constraints and attributes skipped.
fn param_keys(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut keys = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '$' {
            let end = chars[i + 1..]
                .iter()
                .position(|c| !(c.is_alphanumeric() || matches!(c, '_' | ':')))
                .map_or(chars.len(), |p| i + 1 + p);
            let next = skip_blank(&chars, end);
            if end > i + 1 && matches!(chars.get(next), None | Some(',') | Some('=') | Some(')')) {
                keys.push(var_key(&chars[i + 1..end].iter().collect::<String>()));
            }
            i = end;
        } else {
            i += 1;
        }
    }
    keys
}

/// A function's `param(...)` block at the start of its body (after `[CmdletBinding()]`-style
/// attributes).
fn body_params(body: &[char], mask: &[char]) -> Vec<String> {
    let mut k = skip_blank(mask, 0);
    while mask.get(k) == Some(&'[') {
        k = skip_blank(mask, closing(mask, k) + 1);
    }
    let word: String = mask[k.min(mask.len())..].iter().take(5).collect::<String>().to_ascii_lowercase();
    if word != "param" {
        return Vec::new();
    }
    let open = skip_blank(mask, k + 5);
    if mask.get(open) != Some(&'(') {
        return Vec::new();
    }
    let close = closing(mask, open).min(body.len());
    param_keys(&body[open + 1..close].iter().collect::<String>())
}

/// Whether the block `{` at `open` ... `}` at `close` has an `exit` or `return` among its own
/// statements (not nested in another block): once it runs, the script ends.
fn block_exits(m: &[char], open: usize, close: usize) -> bool {
    let mut depth = 0usize;
    for k in open + 1..close {
        match m[k] {
            '{' | '(' => depth += 1,
            '}' | ')' => depth = depth.saturating_sub(1),
            _ if depth == 0 => {
                if let Some(w) = keyword_at(m, k)
                    && (w == "exit" || w == "return")
                {
                    let before = m[open..k].iter().rev().find(|c| !matches!(c, ' ' | '\t'));
                    if matches!(before, Some('{') | Some('\n') | Some(';') | Some('}')) {
                        return true;
                    }
                }
            }
            _ => {}
        }
    }
    false
}

/// Blanks `out[range]` and `m[range]`, keeping newlines (statement ends).
fn blank(out: &mut [char], m: &mut [char], range: std::ops::Range<usize>) {
    for k in range {
        if out[k] != '\n' {
            out[k] = ' ';
            m[k] = ' ';
        }
    }
}

impl Ctx<'_> {
    /// A script with the code that never runs blanked, and the functions it defines (their
    /// definitions blanked too: a body runs where it is called, [`PsFunction`]).
    /// - `if`/`elseif`/`else` branches whose condition is known ([`Ctx::ps_condition`]): only the
    ///   branch taken stays;
    /// - everything after an `exit` or `return` that is a statement of the script's top level
    ///   (about_Language_Keywords: `exit` ends the script, `return` at script level too).
    pub(super) fn ps_prune(&mut self, script: &str) -> (String, Vec<PsFunction>) {
        let chars: Vec<char> = script.chars().collect();
        let mut m = code_mask(&chars);
        let mut out = chars.clone();
        let mut funcs = Vec::new();
        let (mut i, mut depth) = (0usize, 0usize);
        while i < m.len() {
            let Some(word) = keyword_at(&m, i) else {
                match m[i] {
                    '{' | '(' => depth += 1,
                    '}' | ')' => depth = depth.saturating_sub(1),
                    _ => {}
                }
                i += 1;
                continue;
            };
            let after = i + word.len();
            match word.as_str() {
                "function" | "filter" => {
                    let start = skip_blank(&m, after);
                    let name_end =
                        m[start..].iter().position(|c| !name_char(*c)).map_or(m.len(), |p| start + p);
                    let name: String = chars[start..name_end].iter().collect::<String>().to_ascii_lowercase();
                    let name = name.rsplit(':').next().unwrap_or_default().to_string();
                    let mut k = skip_blank(&m, name_end);
                    let mut params = None;
                    if m.get(k) == Some(&'(') {
                        let close = closing(&m, k).min(m.len());
                        params = Some(param_keys(&chars[k + 1..close].iter().collect::<String>()));
                        k = skip_blank(&m, close + 1);
                    }
                    if name.is_empty() || m.get(k) != Some(&'{') || closing(&m, k) >= m.len() {
                        i = after;
                        continue;
                    }
                    let close = closing(&m, k);
                    let params =
                        params.unwrap_or_else(|| body_params(&chars[k + 1..close], &m[k + 1..close]));
                    let body = chars[k + 1..close].iter().collect();
                    funcs.push(PsFunction { name, params, body });
                    blank(&mut out, &mut m, i..close + 1);
                    i = close + 1;
                }
                "if" => {
                    // The chain's branches in order; once one is surely taken, the rest are dead.
                    // When the branch that runs surely exits (one taken, or every branch of a
                    // chain with `else`), the code after a top-level chain never runs either.
                    let (mut at, mut kw, mut taken) = (i, word, false);
                    let (mut end, mut taken_exits, mut all_exit, mut has_else) = (None, false, true, false);
                    while let Some((cond, open, close)) = clause(&m, at + kw.len(), kw != "else") {
                        let value = if kw == "else" {
                            has_else = true;
                            Some(true)
                        } else {
                            self.ps_condition(&chars[cond].iter().collect::<String>(), script)
                        };
                        if taken || value == Some(false) {
                            blank(&mut out, &mut m, at..close + 1);
                        } else {
                            let exits = block_exits(&m, open, close);
                            all_exit &= exits;
                            if value == Some(true) {
                                taken = true;
                                taken_exits = exits;
                            }
                        }
                        end = Some(close);
                        let next = skip_blank(&m, close + 1);
                        match (next < m.len()).then(|| keyword_at(&m, next)).flatten() {
                            Some(k) if k == "elseif" || k == "else" => (at, kw) = (next, k),
                            _ => break,
                        }
                    }
                    if let Some(end) = end
                        && depth == 0
                        && (taken_exits || (has_else && all_exit))
                    {
                        let len = m.len();
                        blank(&mut out, &mut m, end + 1..len);
                        break;
                    }
                    i = after;
                }
                "switch" => {
                    self.ps_switch(&chars, &mut m, &mut out, after, script);
                    i = after;
                }
                "exit" | "return" if depth == 0 => {
                    let before = m[..i].iter().rev().find(|c| !matches!(c, ' ' | '\t'));
                    if matches!(before, None | Some('\n') | Some(';') | Some('}')) {
                        let end =
                            m[i..].iter().position(|c| matches!(c, ';' | '\n')).map_or(m.len(), |p| i + p);
                        let len = m.len();
                        blank(&mut out, &mut m, end..len);
                        // A `return` ends nothing more: the script ends here.
                        break;
                    }
                    i = after;
                }
                _ => i = after,
            }
        }
        (out.into_iter().collect(), funcs)
    }

    /// `switch [-Exact|-Wildcard|-CaseSensitive] (VALUE) { PATTERN { ... } ... default { ... } }`
    /// after the keyword (`after`): when VALUE is known ([`Ctx::ps_operand`]) and so are the
    /// patterns it meets, the clauses that do not run are blanked (about_Switch: every clause whose
    /// pattern matches runs, in order, until one runs `break` or `continue`; `default` runs when no
    /// other clause matched; comparisons ignore case unless `-CaseSensitive`; `-Wildcard` patterns
    /// use `*`, `?` and `[...]`). `-Regex`, `-File`, a script-block condition (`{ $_ -gt 1 }`), an
    /// array value or any pattern not known leaves what it may decide as it is.
    fn ps_switch(&self, chars: &[char], m: &mut [char], out: &mut [char], after: usize, script: &str) {
        let (mut k, mut wildcard, mut case) = (skip_blank(m, after), false, false);
        while m.get(k) == Some(&'-') {
            let len = m[k + 1..].iter().take_while(|c| c.is_ascii_alphabetic()).count();
            match chars[k + 1..k + 1 + len].iter().collect::<String>().to_ascii_lowercase().as_str() {
                "exact" => {}
                "wildcard" => wildcard = true,
                "casesensitive" => case = true,
                _ => return,
            }
            k = skip_blank(m, k + 1 + len);
        }
        let Some((cond, open, close)) = clause(m, k, true) else {
            return;
        };
        let Some(value) = self.ps_operand(chars[cond].iter().collect::<String>().trim(), script) else {
            return;
        };
        let fold = |s: &str| if case { s.to_string() } else { s.to_lowercase() };
        // Each clause: its range (pattern to closing brace), whether it runs (`None`: not known),
        // whether it is `default`, whether its block breaks out.
        let mut clauses: Vec<(std::ops::Range<usize>, Option<bool>, bool, bool)> = Vec::new();
        let mut at = skip_blank(m, open + 1);
        while at < close {
            if matches!(m[at], ';') {
                at = skip_blank(m, at + 1);
                continue;
            }
            let Some(brace) = (at..close).find(|&j| m[j] == '{') else {
                return;
            };
            let end = closing(m, brace);
            if end >= close {
                return;
            }
            let pattern: String = chars[at..brace].iter().collect::<String>().trim().to_string();
            let default = pattern.eq_ignore_ascii_case("default");
            // (A `break` or `continue` among the block's own statements, not nested.)
            let mut nest = 0usize;
            let breaks = (brace + 1..end).any(|j| {
                match m[j] {
                    '{' | '(' => nest += 1,
                    '}' | ')' => nest = nest.saturating_sub(1),
                    _ => {}
                }
                let word: String = m[j..].iter().take_while(|c| c.is_ascii_alphabetic()).collect();
                nest == 0
                    && !name_char(m[j - 1])
                    && matches!(word.to_ascii_lowercase().as_str(), "break" | "continue")
            });
            let bare = !pattern.is_empty()
                && pattern
                    .chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '*' | '?' | '[' | ']'));
            let pat = if bare { Some(pattern.clone()) } else { self.ps_operand(&pattern, script) };
            let runs = if default {
                None
            } else {
                pat.and_then(|p| {
                    let (p, v) = (fold(&p), fold(&value));
                    if !wildcard {
                        return Some(p == v);
                    }
                    // PowerShell's wildcards: `*`, `?`, `[abc]`, `[a-z]`; no negation, no escapes here.
                    if p.contains(['\\', '\'', '"', '`', '!', '^']) {
                        return None;
                    }
                    super::super::words::glob_matches(&p, &v)
                })
            };
            clauses.push((at..end + 1, runs, default, breaks));
            at = skip_blank(m, end + 1);
        }
        // In order: a clause after one that surely ran and broke out never runs.
        let (mut stopped, mut matched) = (false, false);
        let mut dead = Vec::new();
        for (range, runs, default, breaks) in &clauses {
            if *default {
                continue;
            }
            match (stopped, runs) {
                (true, _) | (false, Some(false)) => dead.push(range.clone()),
                (false, Some(true)) => {
                    matched = true;
                    stopped = *breaks;
                }
                (false, None) => {}
            }
        }
        for (range, _, default, _) in &clauses {
            if *default && matched {
                dead.push(range.clone());
            }
        }
        for range in dead {
            blank(out, m, range);
        }
    }

    /// The value of an `if` condition when it is known at admission: `$true`, `$false`, `$null`,
    /// `0`, `1`, `-not`/`!` of one, and `-eq`/`-ne` (`-ieq`, `-ine`, `-ceq`, `-cne`) between
    /// string literals and `$env:NAME` variables whose value is a literal of the container's env
    /// that the script never sets (about_Comparison_Operators: `-eq` ignores case, `-ceq` does not).
    fn ps_condition(&self, cond: &str, script: &str) -> Option<bool> {
        let c = cond.trim();
        if let Some(inner) = c.strip_prefix('(').and_then(|x| x.strip_suffix(')'))
            && closing(&c.chars().collect::<Vec<_>>(), 0) == c.chars().count() - 1
        {
            return self.ps_condition(inner, script);
        }
        let lower = c.to_ascii_lowercase();
        if let Some(rest) = lower.strip_prefix("-not ").or_else(|| lower.strip_prefix('!')) {
            return self.ps_condition(&c[c.len() - rest.len()..], script).map(|v| !v);
        }
        match lower.as_str() {
            "$true" | "1" => return Some(true),
            "$false" | "0" | "$null" => return Some(false),
            _ => {}
        }
        let words: Vec<&str> = c.split_whitespace().collect();
        let [a, op, b] = words.as_slice() else { return None };
        let (negate, case) = match op.to_ascii_lowercase().as_str() {
            "-eq" | "-ieq" => (false, false),
            "-ne" | "-ine" => (true, false),
            "-ceq" => (false, true),
            "-cne" => (true, true),
            _ => return None,
        };
        let (a, b) = (self.ps_operand(a, script)?, self.ps_operand(b, script)?);
        let equal = if case { a == b } else { a.to_lowercase() == b.to_lowercase() };
        Some(equal != negate)
    }

    /// A comparison operand known at admission: a quoted literal without `$`, or `$env:NAME`
    /// with a literal value in the container's env that the script does not assign.
    fn ps_operand(&self, w: &str, script: &str) -> Option<String> {
        if let Some(q) = w.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')) {
            return (!q.contains('\'')).then(|| q.to_string());
        }
        if let Some(q) = w.strip_prefix('"').and_then(|x| x.strip_suffix('"')) {
            return (!q.contains(['$', '`', '"'])).then(|| q.to_string());
        }
        let lower = w.to_ascii_lowercase();
        let name = lower
            .strip_prefix("$env:")
            .or_else(|| lower.strip_prefix("${env:").and_then(|x| x.strip_suffix('}')))?;
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return None;
        }
        // Set anywhere in the script (`$env:MODE = ...`, `Set-Item env:MODE`, .NET): not known.
        let text = script.to_ascii_lowercase();
        let drive = format!("env:{name}");
        for (at, _) in text.match_indices(&drive) {
            let rest = text[at + drive.len()..].trim_start();
            let read = text[..at].ends_with('$') || text[..at].ends_with("${");
            if !read || (rest.starts_with('=') && !rest.starts_with("==")) || rest.starts_with("+=") {
                return None;
            }
        }
        if text.contains("setenvironmentvariable") {
            return None;
        }
        match self.env.vars.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v) {
            Some(EnvValue::Literal(v)) => Some(v.clone()),
            _ => None,
        }
    }
}
