//! The `read` builtin: the names (or, in bash, the array of `-a NAME`) it assigns from the first line of its standard input, split on `IFS` as bash and dash split it.

use super::super::context::{Ctx, RefKind, is_ident, is_reserved_char};

/// `IFS` when unset: space, tab, newline (bash manual, "Bash Variables"; POSIX 2.5.3). Neither
/// bash nor dash takes `IFS` from the environment (checked: `env IFS=, bash -c 'echo "$IFS"'`).
const DEFAULT_IFS: &str = " \t\n";

impl Ctx<'_> {
    /// `read [OPTIONS] [NAME...]` (bash manual, "Bash Builtins"; POSIX `read`): the first line of
    /// its standard input, when known, split on `IFS` ([`ifs_split`]), each NAME a field and the
    /// last one the rest of the line ([`last_field`]); with bash's `-a ARRAY`, every field an
    /// element of ARRAY (kept as `script::assign_array` keeps an array). A line, an `IFS` or a
    /// shell known only at run time, `-d`, `-n`, `-N` (another end of input) or `-u` (another file
    /// descriptor) assign values known only at run time: a client given one is warned about, never
    /// passed over (s23: `read -a` was dropped, so a loop over its array reached nothing).
    /// `assigns`: the command's prefix assignments (`IFS=', ' read ...` splits on that IFS).
    pub(super) fn read_builtin(&mut self, rest: &[String], assigns: &[(String, String)]) {
        let mut names = Vec::new();
        let mut array = None;
        let mut plain = true;
        let mut options = true;
        let mut k = 0;
        while k < rest.len() {
            let a = self.render_lit(&rest[k]);
            k += 1;
            if options && a == "--" {
                options = false;
                continue;
            }
            if options && a.len() > 1 && a.starts_with('-') {
                // Options group as getopts groups them: one taking a value takes the rest of
                // its word, or the next word (`-ra NAME`, `-aNAME`, `-p PROMPT`).
                for (i, c) in a.char_indices().skip(1) {
                    if !matches!(c, 'a' | 'd' | 'i' | 'n' | 'N' | 'p' | 't' | 'u') {
                        continue;
                    }
                    let attached = &a[i + c.len_utf8()..];
                    let value = if attached.is_empty() {
                        k += 1;
                        rest.get(k - 1).map(|w| self.render_lit(w)).unwrap_or_default()
                    } else {
                        attached.to_string()
                    };
                    match c {
                        'a' => array = Some(value),
                        'd' | 'n' | 'N' | 'u' => plain = false,
                        _ => {}
                    }
                    break;
                }
                continue;
            }
            options = false;
            if is_ident(&a) {
                names.push(a);
            }
        }
        let ifs = self.read_ifs(assigns);
        let line = self
            .stdin_script
            .clone()
            .map(|w| self.render_lit(&w))
            .filter(|t| plain && !t.contains(['$', '`', '\\']) && !t.chars().any(is_reserved_char))
            .map(|t| t.lines().next().unwrap_or("").to_string());
        let known = line.as_deref().zip(ifs.as_deref());
        if let Some(array) = array {
            // Only bash has `-a` (dash: "Illegal option -a"; zsh and ksh read arrays with `-A`).
            let fields = known.filter(|_| self.shell == Some("bash")).map(|(l, ifs)| ifs_split(l, ifs));
            if is_ident(&array) {
                self.read_array(&array, fields);
            }
            return;
        }
        let fields = known.map(|(l, ifs)| ifs_split(l, ifs));
        for (i, name) in names.iter().enumerate() {
            let value = match (known, &fields) {
                (Some((line, ifs)), Some(fields)) if i + 1 == names.len() => {
                    let start = if i == 0 { 0 } else { fields.get(i - 1).map_or(line.len(), |f| f.1) };
                    last_field(&line[start..], ifs)
                }
                (Some(_), Some(fields)) => fields.get(i).map(|f| f.0.clone()).unwrap_or_default(),
                _ => self.new_ref(RefKind::UnresolvedCmd, &format!("${name}")).to_string(),
            };
            self.allexport_mark(name);
            self.shell_vars.insert(name.clone(), value);
        }
    }

    /// The array `name` as `read -a` fills it: `fields` when known, else elements known only at run
    /// time (`NAME[#]` holds `?`: every `${NAME[...]}` is then a value known only at run time).
    pub(super) fn read_array(&mut self, name: &str, fields: Option<Vec<(String, usize)>>) {
        self.drop_array(name);
        self.allexport_mark(name);
        let Some(fields) = fields else {
            let m = self.new_ref(RefKind::UnresolvedCmd, &format!("${{{name}[@]}}")).to_string();
            self.shell_vars.insert(format!("{name}[#]"), format!("?\0{m}"));
            self.shell_vars.insert(name.to_string(), m);
            return;
        };
        let first = fields.first().map(|f| f.0.clone()).unwrap_or_default();
        for (i, (field, _)) in fields.iter().enumerate().skip(1) {
            self.shell_vars.insert(format!("{name}[{i}]"), field.clone());
        }
        self.shell_vars.insert(format!("{name}[#]"), format!("{}\0{first}", fields.len()));
        self.shell_vars.insert(name.to_string(), first);
    }

    /// The `IFS` a `read` splits with: its prefix assignment, else the script's, else the default
    /// (also after `unset IFS`). `None` when known only at run time.
    fn read_ifs(&self, assigns: &[(String, String)]) -> Option<String> {
        let value = match assigns.iter().rev().find(|(n, _)| n == "IFS") {
            Some((_, v)) => v,
            None => match self.shell_vars.get("IFS") {
                Some(v) => v,
                None => return Some(DEFAULT_IFS.to_string()),
            },
        };
        let value = self.render_lit(value);
        (!value.contains(['$', '`']) && !value.chars().any(is_reserved_char)).then_some(value)
    }
}

/// Whether `c` is IFS white space: a space, tab or newline that `ifs` holds (POSIX 2.6.5).
fn ifs_white(c: char, ifs: &str) -> bool {
    matches!(c, ' ' | '\t' | '\n') && ifs.contains(c)
}

/// `line` split into fields as `read` splits it on `ifs` (POSIX 2.6.5 "Field Splitting"): IFS white
/// space at either end is dropped; a delimiter is a run of IFS white space around at most one
/// other IFS character; a delimiter at the end starts no field (`a,b,` is 2 fields, `a,,` 2, `,a`
/// 2). Each field with the byte offset just past its delimiter. An empty `ifs`: the line is one
/// field. Checked in bash 5.2 and dash 0.5.12 (`IFS=', '` on ` a,, b ,c` gives `a`, ``, `b`, `c`).
pub(super) fn ifs_split(line: &str, ifs: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    if ifs.is_empty() {
        if !line.is_empty() {
            out.push((line.to_string(), line.len()));
        }
        return out;
    }
    let mut chars = line.char_indices().peekable();
    while chars.next_if(|&(_, c)| ifs_white(c, ifs)).is_some() {}
    let mut field = String::new();
    while let Some((_, c)) = chars.next() {
        if !ifs.contains(c) {
            field.push(c);
            continue;
        }
        let mut hard = !ifs_white(c, ifs);
        while let Some(&(_, d)) = chars.peek() {
            if ifs_white(d, ifs) || (!hard && ifs.contains(d)) {
                hard |= !ifs_white(d, ifs);
                chars.next();
            } else {
                break;
            }
        }
        let end = chars.peek().map_or(line.len(), |&(at, _)| at);
        out.push((std::mem::take(&mut field), end));
        if end == line.len() {
            return out;
        }
    }
    if !field.is_empty() {
        out.push((field, line.len()));
    }
    out
}

/// What the last NAME of `read` gets: the rest of the line, IFS white space at either end dropped,
/// and one delimiter after a single field too (`IFS=, read a` on `x,` gives `x`, on `x,y,` gives
/// `x,y,`: bash 5.2 and dash 0.5.12 alike).
pub(super) fn last_field(rest: &str, ifs: &str) -> String {
    let rest = rest.trim_matches(|c| ifs_white(c, ifs));
    match ifs_split(rest, ifs).as_slice() {
        [(only, _)] => only.clone(),
        _ => rest.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::{ifs_split, last_field};

    fn fields(line: &str, ifs: &str) -> Vec<String> {
        ifs_split(line, ifs).into_iter().map(|f| f.0).collect()
    }

    /// Each row as bash 5.2 (`IFS=... read -ra a <<< LINE; printf '[%s]' "${a[@]}"`) splits it.
    #[test]
    fn fields_split_as_bash_reads_them() {
        let rows: [(&str, &str, &[&str]); 11] = [
            (
                "https://pypi.org/simple/, https://registry.npmjs.org/",
                ", ",
                &["https://pypi.org/simple/", "https://registry.npmjs.org/"],
            ),
            (
                "https://pypi.org/simple/, https://registry.npmjs.org/",
                " \t\n",
                &["https://pypi.org/simple/,", "https://registry.npmjs.org/"],
            ),
            (" a,, b ,c", ", ", &["a", "", "b", "c"]),
            ("a|b c|d", "|", &["a", "b c", "d"]),
            ("  a  b  ", " \t\n", &["a", "b"]),
            ("a,b,", ",", &["a", "b"]),
            ("a,b,,", ",", &["a", "b", ""]),
            (",a", ",", &["", "a"]),
            ("a , ", ", ", &["a"]),
            (" x,y  z ", "", &[" x,y  z "]),
            ("", " \t\n", &[]),
        ];
        for (line, ifs, want) in rows {
            assert_eq!(fields(line, ifs), want, "{line:?} on {ifs:?}");
        }
    }

    /// The last name's value, as bash 5.2 and dash 0.5.12 both give it (`IFS=... read a`).
    #[test]
    fn the_last_name_gets_the_rest_as_both_shells_do() {
        let rows = [
            ("x,y,", ", ", "x,y,"),
            ("x,", ", ", "x"),
            ("x,,", ", ", "x,,"),
            (" x , y , ", ", ", "x , y ,"),
            (" x , y , ", ",", " x , y , "),
            ("x, ", ", ", "x"),
            ("x ,", ",", "x "),
            (",x", ", ", ",x"),
            ("  a  b  ", " \t\n", "a  b"),
        ];
        for (rest, ifs, want) in rows {
            assert_eq!(last_field(rest, ifs), want, "{rest:?} on {ifs:?}");
        }
    }
}
