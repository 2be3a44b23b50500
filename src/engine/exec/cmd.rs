//! cmd.exe: `cmd [/v:on] /c LINE` (and `/k`). The line is expanded as cmd expands it, then its
//! commands are matched like a shell script's.
//!
//! Facts used (Microsoft docs, "cmd" and "set"; `set /?`):
//! - `%NAME%` is expanded when cmd reads the line, before any command of it runs: in
//!   `set U=x && curl %U%` the `%U%` is U's value from before the `set`. On a command line (not in
//!   a batch file) an undefined `%NAME%` stays as written. Names ignore case.
//! - With delayed expansion (`/v:on`), `!NAME!` is expanded when each command runs, so it sees a
//!   `set` earlier on the line.
//! - `%COMPUTERNAME%` is this machine's (the container's) own name.

use super::context::{Ctx, RefKind};
use super::{Dependency, EnvValue};

/// A `set NAME=VALUE` command (`set "NAME=VALUE"`): the name and value. `set /a` (arithmetic) and
/// `set /p` (a prompt) give no value known here.
fn set_command(command: &str) -> Option<(String, Option<String>)> {
    let c = command.trim_start().trim_start_matches('(').trim_start().trim_start_matches('@');
    let rest = c.get(..4).filter(|p| p.eq_ignore_ascii_case("set "))?;
    let rest = c[rest.len()..].trim_start();
    if rest.starts_with('/') {
        let (_, pair) = rest.split_once(char::is_whitespace)?;
        let name = pair.trim().trim_matches('"').split('=').next()?.trim();
        return (!name.is_empty()).then(|| (name.to_ascii_lowercase(), None));
    }
    let pair = rest.trim_end();
    let pair = pair.strip_prefix('"').map_or(pair, |p| p.rsplit_once('"').map_or(p, |(inner, _)| inner));
    let (name, value) = pair.split_once('=')?;
    (!name.is_empty() && !name.contains(char::is_whitespace))
        .then(|| (name.to_ascii_lowercase(), Some(value.to_string())))
}

/// The commands of a line with the separators after each (`&`, `&&`, `||`, `|`), split outside
/// double quotes; `^` escapes the next character.
fn commands(line: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let (mut cur, mut quoted) = (String::new(), false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                quoted = !quoted;
                cur.push(c);
            }
            '^' if !quoted => {
                cur.push(c);
                cur.extend(chars.next());
            }
            '&' | '|' if !quoted => {
                let mut sep = c.to_string();
                if chars.peek() == Some(&c) {
                    sep.push(c);
                    chars.next();
                }
                out.push((std::mem::take(&mut cur), sep));
            }
            c => cur.push(c),
        }
    }
    out.push((cur, String::new()));
    out
}

impl Ctx<'_> {
    /// `cmd OPTIONS /c LINE`: `%NAME%` expanded from the container's environment, `!NAME!` in
    /// order with `/v:on`, then the line analysed. A variable that is neither in the container's
    /// environment nor may come from `envFrom` is a value the analysis does not follow
    /// ([`RefKind::Unknown`]): it never makes a dependency.
    pub(super) fn cmd_line(&mut self, options: &[String], line: &str, depth: usize) -> Option<Dependency> {
        let delayed = options.iter().any(|o| o.eq_ignore_ascii_case("/v:on") || o.eq_ignore_ascii_case("/v"));
        let set_here: Vec<String> =
            commands(line).iter().filter_map(|(c, _)| set_command(c)).map(|(n, _)| n).collect();
        let line = &self.cmd_for_variables(line);
        let expanded = self.cmd_percent(line, &set_here);
        let expanded = self.cmd_delayed(&expanded, delayed);
        let gap_before = self.parse_gap.is_some();
        let found = self.analyze_script(&expanded, depth);
        if !gap_before && self.parse_gap.is_some() {
            self.parse_gap_in_cmd = true;
        }
        found
    }

    /// A `for` loop's variables (`for %i in (...) do ... %i`, `%%i` in a batch file; one letter,
    /// case-sensitive: `help for`) hold values the analysis does not follow ([`RefKind::Unknown`]).
    fn cmd_for_variables(&mut self, line: &str) -> String {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let mut names = Vec::new();
        for (k, t) in tokens.iter().enumerate() {
            if t.eq_ignore_ascii_case("for") {
                let var = tokens[k + 1..].iter().find(|w| w.starts_with('%'));
                if let Some(v) = var.map(|v| v.trim_start_matches('%'))
                    && v.len() == 1
                    && v.chars().all(|c| c.is_ascii_alphabetic())
                {
                    names.extend(v.chars());
                }
            }
        }
        if names.is_empty() {
            return line.to_string();
        }
        let chars: Vec<char> = line.chars().collect();
        let mut out = String::with_capacity(line.len());
        let mut i = 0;
        while i < chars.len() {
            let percents =
                if chars[i] == '%' { if chars.get(i + 1) == Some(&'%') { 2 } else { 1 } } else { 0 };
            let name = chars.get(i + percents).copied().filter(|c| percents > 0 && names.contains(c));
            let ends = !chars.get(i + percents + 1).is_some_and(|c| c.is_ascii_alphanumeric() || *c == '%');
            match name {
                Some(n) if ends => {
                    let original: String = std::iter::repeat_n('%', percents).chain([n]).collect();
                    out.push(self.new_ref(RefKind::Unknown, &original));
                    i += percents + 1;
                }
                _ => {
                    out.push(chars[i]);
                    i += 1;
                }
            }
        }
        out
    }

    /// `%NAME%` references expanded as cmd reads the line (`set_here`: names a `set` on the
    /// line assigns, lowercase).
    fn cmd_percent(&mut self, line: &str, set_here: &[String]) -> String {
        let mut out = String::with_capacity(line.len());
        let mut rest = line;
        while let Some(at) = rest.find('%') {
            out.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            let Some(end) = after.find('%') else {
                out.push_str(&rest[at..]);
                return out;
            };
            let name = &after[..end];
            if name.is_empty() || name.contains(char::is_whitespace) {
                // `%%`, or a lone `%` before text: literal.
                out.push('%');
                rest = after;
                continue;
            }
            let original = format!("%{name}%");
            let value = self.cmd_var(name, &original, |n| set_here.iter().any(|s| s == n));
            out.push_str(&value);
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        out
    }

    /// One variable's value: the container's environment (a value known at admission, the Pod's
    /// IP or name, or unknown at admission like a shell's env value), `COMPUTERNAME`, or a value
    /// the analysis does not follow. `%NAME:~0,4%` and `%NAME:a=b%` (substrings, replacements)
    /// are not followed.
    fn cmd_var(&mut self, name: &str, original: &str, set_on_line: impl Fn(&str) -> bool) -> String {
        let lower = name.to_ascii_lowercase();
        if name.contains(':') {
            return self.new_ref(RefKind::Unknown, original).to_string();
        }
        let key = self.env.vars.keys().find(|k| k.eq_ignore_ascii_case(name)).cloned();
        if let Some(key) = key {
            return match self.env.vars.get(&key) {
                Some(EnvValue::Literal(_)) => self.tool_env(&key, &[]).unwrap_or_default(),
                Some(EnvValue::PodIp) => self.new_ref(RefKind::SelfIp, original).to_string(),
                Some(EnvValue::PodName) => self.new_ref(RefKind::SelfName, original).to_string(),
                _ => self.new_ref(RefKind::Unresolved, original).to_string(),
            };
        }
        if lower == "computername" {
            return self.new_ref(RefKind::SelfHost, original).to_string();
        }
        // A variable from `envFrom` is an env value unknown at admission, as in a shell script;
        // one the line sets itself (`set U=... && curl %U%`) or that nothing sets is not followed.
        let kind = if self.env.has_env_from && !set_on_line(&lower) {
            RefKind::Unresolved
        } else {
            RefKind::Unknown
        };
        self.new_ref(kind, original).to_string()
    }

    /// `!NAME!` (delayed expansion): each command sees the `set` commands before it on the line.
    /// Without delayed expansion `!NAME!` stays as written, a name that reaches nothing: not
    /// followed either.
    fn cmd_delayed(&mut self, line: &str, delayed: bool) -> String {
        let mut set: Vec<(String, Option<String>)> = Vec::new();
        let mut out = String::with_capacity(line.len());
        for (command, sep) in commands(line) {
            let mut expanded = String::with_capacity(command.len());
            let mut rest = command.as_str();
            while let Some(at) = rest.find('!') {
                expanded.push_str(&rest[..at]);
                let after = &rest[at + 1..];
                let Some(end) =
                    after.find('!').filter(|e| *e > 0 && !after[..*e].contains(char::is_whitespace))
                else {
                    expanded.push('!');
                    rest = after;
                    continue;
                };
                let name = &after[..end];
                let original = format!("!{name}!");
                let lower = name.to_ascii_lowercase();
                let value = match set.iter().rev().find(|(n, _)| *n == lower) {
                    _ if !delayed => self.new_ref(RefKind::Unknown, &original).to_string(),
                    Some((_, Some(v))) => v.clone(),
                    Some((_, None)) => self.new_ref(RefKind::Unknown, &original).to_string(),
                    None => self.cmd_var(name, &original, |_| false),
                };
                expanded.push_str(&value);
                rest = &after[end + 1..];
            }
            expanded.push_str(rest);
            set.extend(set_command(&expanded));
            out.push_str(&expanded);
            out.push_str(&sep);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::{EnvValue, ExecEnv, find_dependency};
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    fn env(vars: &[(&str, EnvValue)], has_env_from: bool) -> ExecEnv {
        ExecEnv {
            vars: vars.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
            has_env_from,
            ..Default::default()
        }
    }

    #[track_caller]
    fn target(argv: &[&str], e: &ExecEnv) -> String {
        match find_dependency(&s(argv), e) {
            Some(d) => d.target,
            None => panic!("expected a dependency for {argv:?}"),
        }
    }

    #[track_caller]
    fn quiet(argv: &[&str], e: &ExecEnv) {
        if let Some(d) = find_dependency(&s(argv), e) {
            panic!("expected no dependency for {argv:?}, got {d:?}");
        }
    }

    #[test]
    fn percent_variables_are_read_before_the_line_runs() {
        let none = ExecEnv::default();
        // The break-it pass's false deny: `%URL%` is expanded before `set` runs; nothing names a
        // host the analysis knows, so no dependency.
        quiet(&["cmd", "/c", "set URL=http://localhost:8080/ && curl -f %URL%"], &none);
        quiet(&["cmd.exe", "/C", "curl -f %HEALTH_URL%"], &none);
        quiet(&["cmd", "/c", "curl -f %URL:~0,30%"], &none);
        // Even with envFrom, a variable the line sets itself is not guessed from a ConfigMap.
        quiet(&["cmd", "/c", "set URL=http://localhost/ && curl -f %URL%"], &env(&[], true));
        // From the container's env: known.
        let e = env(&[("API_URL", EnvValue::Literal("http://orders.svc:8080/health".into()))], false);
        assert_eq!(target(&["cmd", "/c", "curl -f %api_url%"], &e), "http://orders.svc:8080/health");
        // cmd reads %URL% before `set` runs: the container's value is what curl gets.
        let e = env(&[("URL", EnvValue::Literal("http://orders.svc/health".into()))], false);
        assert_eq!(
            target(&["cmd", "/c", "set URL=http://localhost/ && curl -f %URL%"], &e),
            "http://orders.svc/health"
        );
        let e = env(&[("URL", EnvValue::Literal("http://localhost:8080/health".into()))], false);
        quiet(&["cmd", "/c", "curl -f %URL%"], &e);
        // Env values unknown at admission are treated as in a shell script.
        let e = env(&[("DB_HOST", EnvValue::Unresolved)], false);
        assert!(target(&["cmd", "/c", "ping -n 1 %DB_HOST%"], &e).contains("%DB_HOST%"));
        assert!(target(&["cmd", "/c", "ping -n 1 %DB_HOST%"], &env(&[], true)).contains("%DB_HOST%"));
        // This Pod.
        quiet(&["cmd", "/c", "curl -f http://%COMPUTERNAME%:8080/healthz"], &none);
        quiet(
            &["cmd", "/c", "curl -f http://%POD_IP%:8080/healthz"],
            &env(&[("POD_IP", EnvValue::PodIp)], false),
        );
        // Literal hosts still count.
        assert_eq!(
            target(&["cmd", "/c", "set X=1 && curl -f http://orders.svc/health"], &none),
            "http://orders.svc/health"
        );
    }

    #[test]
    fn for_loop_variables_are_not_followed() {
        let none = ExecEnv::default();
        // Fresh-user pass: each was denied as reaching `http://%i:8080/healthz`.
        quiet(&["cmd", "/c", "for /f %i in ('hostname') do curl.exe -f http://%i:8080/healthz"], &none);
        quiet(&["cmd", "/c", "for /f %%h in ('hostname') do curl.exe -f http://%%h:8080/healthz"], &none);
        quiet(&["cmd", "/c", "for %h in (localhost 127.0.0.1) do curl.exe -f http://%h:8080/"], &none);
        // Without `for`, `%i` is text.
        assert_eq!(target(&["cmd", "/c", "curl.exe -f http://%i:8080/"], &none), "http://%i:8080/");
    }

    #[test]
    fn delayed_expansion_sees_earlier_sets() {
        let none = ExecEnv::default();
        quiet(&["cmd", "/v:on", "/c", "set URL=http://localhost:8080/ && curl -f !URL!"], &none);
        assert_eq!(
            target(&["cmd", "/V:ON", "/c", "set URL=http://orders.svc/health&& curl -f !URL!"], &none),
            "http://orders.svc/health"
        );
        assert_eq!(
            target(&["cmd", "/v:on", "/c", "set \"U=http://orders.svc/health\" & curl -f !U!"], &none),
            "http://orders.svc/health"
        );
        quiet(&["cmd", "/v:on", "/c", "set /p U=<C:\\url.txt & curl -f !U!"], &none);
        quiet(&["cmd", "/v:on", "/c", "curl -f !UNSET!"], &none);
        // Without /v:on, `!` is literal.
        quiet(&["cmd", "/c", "set URL=http://orders.svc/ && curl -f !URL!"], &none);
    }

    #[test]
    fn set_commands_and_separators_are_read() {
        assert_eq!(set_command("set URL=http://x/ "), Some(("url".into(), Some("http://x/".into()))));
        assert_eq!(set_command(" (SET \"U=a b\" "), Some(("u".into(), Some("a b".into()))));
        assert_eq!(set_command("set /a N=1+2"), Some(("n".into(), None)));
        assert_eq!(set_command("setx U 1"), None);
        assert_eq!(set_command("set"), None);
        assert_eq!(set_command("set A B=x"), None);
        assert_eq!(set_command("set =x"), None);
        let c = commands("a && b ^& c | \"d & e\" || f");
        let seps: Vec<&str> = c.iter().map(|(_, s)| s.as_str()).collect();
        assert_eq!(seps, ["&&", "|", "||", ""]);
        assert_eq!(c[1].0, " b ^& c ");
        // Inside double quotes `^` is an ordinary character.
        assert_eq!(commands("curl \"x^\" & y").len(), 2);
    }
}
