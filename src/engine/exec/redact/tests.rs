use super::super::{ExecEnv, Options, analyze};
use super::shown::{is_operator, redact_cut_assignments};
use super::*;
use proptest::prelude::*;
use std::ops::Range;

/// Break-it pass: a cmd or PowerShell command line given as one argument (not through
/// `sh -c`) was shown whole in the liveness-matches-readiness warning and by `explain`.
#[test]
fn a_cmd_or_powershell_command_line_is_redacted_word_by_word() {
    let argvs: [&[&str]; 4] = [
        &["cmd", "/c", "curl.exe -u admin:S3cr3tPw http://db.prod.svc/"],
        &["cmd.exe", "/S", "/C", "mysqladmin ping -h db.prod.svc -pS3cr3tPw"],
        &["cmd", "/K", "curl.exe -fsu admin:S3cr3tPw http://db.prod.svc/"],
        &["pwsh", "-Command", "curl.exe -u admin:S3cr3tPw http://db.prod.svc/"],
    ];
    for argv in argvs {
        let argv: Vec<String> = argv.iter().map(|a| a.to_string()).collect();
        let shown = redact_command(&argv, 200);
        assert!(!shown.contains("S3cr3tPw"), "{shown}");
        assert!(shown.contains("db.prod.svc") && shown.contains("***"), "{shown}");
    }
}

fn argv(v: &[&str]) -> Vec<String> {
    v.iter().map(|a| a.to_string()).collect()
}

/// `explain`'s display (issue #10's leftover): the script as written, `;`, quoting, blanks
/// and variables kept, only secrets replaced.
#[test]
fn a_command_is_shown_as_written_with_only_its_secrets_replaced() {
    for (command, shown) in [
        (&["sh", "-c", "h=db; pg_isready -h $h"][..], "sh -c 'h=db; pg_isready -h $h'"),
        (&["sh", "-c", "h=db;pg_isready  -h \"$h\" # x"], "sh -c 'h=db;pg_isready  -h \"$h\" # x'"),
        (&["sh", "-c", "P=pw1; redis-cli -a \"$P\" ping"], "sh -c 'P=***; redis-cli -a *** ping'"),
        (
            &["bash", "-ec", "A=pw1\nB=${A}\nredis-cli -a $B ping"],
            "bash -ec 'A=***\nB=***\nredis-cli -a *** ping'",
        ),
        (
            &["sh", "-c", "curl -H 'Authorization: Bearer pw1' http://x/"],
            "sh -c 'curl -H '\\''Authorization: ***'\\'' http://x/'",
        ),
        (
            &["sh", "-c", "echo 'a;b' | redis-cli -h db --pass=pw1"],
            "sh -c 'echo '\\''a;b'\\'' | redis-cli -h db --pass=***'",
        ),
        (
            &["sh", "-c", "psql 'host=db password=pw1' -c 'select 1'"],
            "sh -c 'psql '\\''host=db password=***'\\'' -c '\\''select 1'\\'''",
        ),
        (&["mysqladmin", "ping", "-ppw1", "-h", "db host"], "mysqladmin ping -p*** -h 'db host'"),
        (&["redis-cli", "-a", "pw1", "ping"], "redis-cli -a *** ping"),
        (&["cmd", "/c", "curl.exe -u admin:pw1 http://db/"], "cmd /c 'curl.exe -u admin:*** http://db/'"),
    ] {
        assert_eq!(redact_as_written(&argv(command)), shown, "{command:?}");
    }
}

#[test]
fn script_words_split_operators_and_unquote_values_with_their_spans() {
    let text = "a='x y';b\\ c \"d\\\"e\\n\" &&f\ng";
    let words = display_words(text);
    let values: Vec<&str> = words.iter().map(|(v, _, _)| v.as_str()).collect();
    assert_eq!(values, ["a=x y", ";", "b c", "d\"e\\n", "&&", "f", "\n", "g"]);
    let spans: Vec<&str> = words.iter().map(|(_, r, _)| &text[r.clone()]).collect();
    assert_eq!(spans, ["a='x y'", ";", "b\\ c", "\"d\\\"e\\n\"", "&&", "f", "\n", "g"]);
}

/// Only variables that reach a redacted place are masked where they are set; the rest keep
/// their values (the host a message names stays visible).
#[test]
fn only_variables_that_carry_a_secret_are_masked() {
    let words = |s: &str| shell_words::split(s).unwrap();
    assert_eq!(join_redacted(&words("h=db; pg_isready -h $h")), "h=db; pg_isready -h $h");
    assert_eq!(join_redacted(&words("P=pw1; redis-cli -a $P ping")), "P=***; redis-cli -a *** ping");
    assert_eq!(join_redacted(&words("P=pw1 mysql -p$P -h db")), "P=*** mysql -p*** -h db");
    assert_eq!(
        join_redacted(&words("A=pw1; B=x$A; C=$B; H=db; redis-cli -h $H -a $C")),
        "A=***; B=***; C=***; H=db; redis-cli -h $H -a ***"
    );
    assert_eq!(variables_used("${A:-x}$B_1/$9$ $").collect::<Vec<_>>(), ["A", "B_1"]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    /// For every client row that carries a credential, a random secret given through any of its
    /// spellings never appears in the dependency found (target, command) or the command as
    /// warnings and notes show it; and every spelling is found (so that it is shown at all).
    #[test]
    fn a_secret_in_any_spelling_never_reaches_what_is_shown(secret in "S3c[A-Za-z0-9]{6,12}") {
        let env = ExecEnv::default();
        for script in credential_spellings(&secret) {
            let argv = vec!["sh".to_string(), "-c".to_string(), script.clone()];
            let mut shown = vec![redact_command(&argv, 80), redact_command(&argv, 400)];
            if let Some(d) = analyze(&argv, &env, &Options::default()).dependency {
                shown.push(d.target);
                shown.push(d.command);
            }
            if let Ok(words) = shell_words::split(&script) {
                shown.push(join_redacted(&words));
            }
            shown.push(redact_as_written(&argv));
            for text in shown {
                prop_assert!(!text.contains(&secret), "{script:?} shows {text:?}");
            }
        }
    }
}

/// Break-it pass (s14): a script the shell parser rejects (an unbalanced `(`, an unclosed quote, a
/// trailing backslash) and a command given as one string were shown with their secrets in the
/// `unresolved-scripts` note and the liveness-matches-readiness warning. Text no parser reads is
/// redacted word by word: the credential flags, URL user info, `KEY=VALUE` of a secret name.
#[test]
fn a_command_no_parser_reads_is_redacted_word_by_word() {
    let secret = "S3cr3tPw";
    let commands = [
        "mysqladmin -h 127.0.0.1 -pS3cr3tPw ping",
        "mysqladmin -h db --password=S3cr3tPw ping",
        "PGPASSWORD=S3cr3tPw pg_isready -h db",
        "curl -fsS https://u:S3cr3tPw@db/healthz",
        "curl -fsS https://db/healthz?token=S3cr3tPw",
        "redis-cli -h db -a S3cr3tPw ping",
    ];
    for command in commands {
        let scripts = [
            format!("({command}"),
            format!("\"{command}"),
            format!("{command} '"),
            format!("{command} \\"),
            format!("{command} $("),
            format!("`{command}"),
            format!("if {command}; then"),
        ];
        let mut argvs: Vec<Vec<String>> = scripts.iter().map(|s| argv(&["sh", "-c", s])).collect();
        argvs.push(argv(&[command]));
        argvs.push(argv(&["bash", "-lc", &format!("({command}")]));
        for argv in argvs {
            let mut shown =
                vec![redact_command(&argv, 80), redact_command(&argv, 400), redact_as_written(&argv)];
            let outcome = analyze(&argv, &ExecEnv::default(), &Options::default());
            shown.extend(outcome.unresolved.iter().map(|u| u.path.clone()));
            if let Some(d) = outcome.dependency {
                shown.extend([d.target, d.command]);
            }
            for text in shown {
                assert!(!text.contains(secret), "{argv:?} shows {text:?}");
            }
            // Only the secret goes: the command is still recognisable.
            let one = redact_command(&argv, 400);
            assert!(
                one.contains("***") && one.contains(command.split(' ').find(|w| !w.contains('=')).unwrap()),
                "{argv:?}: {one}"
            );
        }
    }
    assert_eq!(redact_text("(mysqladmin  -h db -pX ping\";"), "(mysqladmin  -h db -p*** ping\";");
    assert_eq!(redact_text("(PGPASSWORD=x pg_isready"), "(PGPASSWORD=*** pg_isready");
}

/// Break-it pass (s15): the four shapes [`break_it_shapes`] (a script the parser rejects with
/// `$(`, a backquote or an operator stuck to the secret; an argument with blanks inside; a
/// positional parameter after `sh -c SCRIPT`; an argument with a leading blank) of every
/// credential spelling show no secret in any display form, in the notes of scripts not analysed
/// nor in the dependency found; a positional parameter is shown as `<redacted>`.
#[test]
fn the_break_it_shapes_of_every_spelling_show_no_secret() {
    let secret = "S3cr3tPw9";
    let mut positional_shown = 0;
    for script in credential_spellings(secret) {
        for argv in break_it_shapes(&script, secret) {
            let mut shown = vec![
                redact_command(&argv, 64),
                redact_command(&argv, 400),
                redact_as_written(&argv),
                join_redacted(&argv),
                super::super::opaque_script_summary(&argv).unwrap_or_default(),
            ];
            let outcome = analyze(&argv, &ExecEnv::default(), &Options::default());
            shown.extend(outcome.unresolved.iter().map(|u| redact_text(&u.path)));
            if let Some(d) = outcome.dependency {
                shown.extend([d.target, d.command]);
            }
            for text in shown {
                assert!(!text.contains(secret), "{argv:?} shows {text:?}");
            }
            positional_shown += usize::from(redact_command(&argv, 400).contains(POSITIONAL_SHOWN));
        }
    }
    assert!(positional_shown > 0);
    let command = argv(&["sh", "-c", "mysqladmin -h db -p\"$1\" ping", "x", "pw1"]);
    assert_eq!(redact_as_written(&command), "sh -c 'mysqladmin -h db -p*** ping' <redacted> <redacted>");
    // A positional parameter's redaction ends with its command; redacting again changes nothing.
    let text = "sh -c 'redis-cli -a \"$1\"' x pw1; a=$(mysqladmin -pPw2|grep -q alive";
    let once = redact_text(text);
    assert_eq!(once, "sh -c 'redis-cli -a ***' <redacted> <redacted>; a=$(mysqladmin -p***|grep -q alive");
    assert_eq!(redact_text(&once), once);
    assert_eq!(join_redacted(&argv(&["redis-cli", "-h db -a", "pw1"])), "redis-cli '-h db -a' ***");
    assert_eq!(redact_text("mysqladmin -h db -pPw2>/dev/null ))"), "mysqladmin -h db -p***>/dev/null ))");
    // sh splits at blanks only: a no-break space is part of the word (the password's first
    // character); a word sh did not split is still read at its other white space.
    assert_eq!(redact_text("mysqladmin -h db -p\u{a0}Pw2 ping"), "mysqladmin -h db -p*** ping");
    assert_eq!(redact_text("mysql -h db --password\u{a0}Pw2 (("), "mysql -h db '--password\u{a0}***' ((");
}

/// s16 break-it pass: `PGPASSWORD=$(echo S3cr3tSUB) pg_isready -h db` showed `PGPASSWORD=***
/// S3cr3tSUB)`: a secret pair's value that is a command substitution is hidden whole.
#[test]
fn a_secret_pair_given_by_a_substitution_is_hidden_whole() {
    for (text, shown) in [
        ("PGPASSWORD=$(echo S3cr3tSUB) pg_isready -h db", "PGPASSWORD=*** pg_isready -h db"),
        ("PGPASSWORD=$(cat $(ls /s) | tr -d x) psql", "PGPASSWORD=*** psql"),
        ("PGPASSWORD=`echo S3cr3tSUB x` psql", "PGPASSWORD=*** psql"),
        ("PGPASSWORD=$(echo S3cr3tSUB", "PGPASSWORD=***"),
        ("PGPASSWORD=`echo S3cr3tSUB", "PGPASSWORD=***"),
        ("HOST=$(echo db) pg_isready", "HOST=$(echo db) pg_isready"),
    ] {
        assert_eq!(super::redact_secrets(text), shown, "{text}");
    }
    let argv = argv(&["sh", "-c", "PGPASSWORD=$(echo S3cr3tSUB) pg_isready -h db"]);
    let shown = super::shown::redact_argv(&argv).join(" ");
    assert!(!shown.contains("S3cr3tSUB") && shown.contains("PGPASSWORD=***"), "{shown}");
}

/// A URL password holding a raw `/`, `?` or `#` (s16): whether it is userinfo (a last-`@` parser)
/// or a bad port (curl, RFC 3986), what lies between the `:` and the `@` is hidden; a port, an IPv6
/// literal and an `@` in a path stay as written.
#[test]
fn a_url_password_past_the_authority_is_hidden() {
    for (url, shown) in [
        ("http://u:pw/x@h/", "http://u:***@h/"),
        ("curl -f http://u:p?w@db:80/a b", "curl -f http://u:***@db:80/a b"),
        ("http://u:#w@h/ http://v:2/3@k/", "http://u:***@h/ http://v:2/3@k/"),
        ("http://u:/w@h/", "http://u:***@h/"),
        ("http://db:8080/users/@me", "http://db:8080/users/@me"),
        ("http://[::1]:80/@x", "http://[::1]:80/@x"),
        ("http://u:pw/x 'y@h'", "http://u:pw/x 'y@h'"),
        ("http://u:pw/x", "http://u:pw/x"),
    ] {
        assert_eq!(redact_secrets(url), shown, "{url}");
    }
}

/// A script's lead as `opaque_script_summary` reads it: the first word, past assignments and
/// shell punctuation.
fn lead_of(s: &str) -> &str {
    s.split(|c: char| c.is_whitespace() || "'\";&|<>()`$".contains(c))
        .find(|w| !w.is_empty() && !w.contains('='))
        .unwrap_or_default()
}

/// Whether the start of a text holds its lead whole, as `opaque_script_summary` asks it.
fn lead_found(s: &str) -> bool {
    let lead = lead_of(s);
    !lead.is_empty() && {
        let end = lead.as_ptr() as usize - s.as_ptr() as usize + lead.len();
        end < s.len()
    }
}

proptest! {
    /// `redact_argv_until` shows a `sh -c` script's start as `redact_argv` shows it whole: the
    /// lead read from it is the same, and with a predicate that never holds the whole text is
    /// the same (scripts of secret-bearing pieces: variables set and given as passwords,
    /// quoted values with blanks, clients' attached and separate flags, operators).
    #[test]
    fn a_script_redacted_up_to_its_lead_shows_the_lead_redact_argv_shows(
        pieces in proptest::collection::vec(proptest::sample::select(vec![
            "P=pw;", "P=\"a b\";", "T=$P;", "h=db;", "X=1", "redis-cli -a $P ping", "mysqladmin -p\"$T\" status",
            "mysql -pS3cr3t", "-pS3cr3t;", "curl -u admin:$P http://h/", "echo $P |", "vault login -", "&&",
            "if [ -f x ]; then", "fi", "\"$P\"", "'q r'", "a=$(cat f)", "PGPASSWORD=pw pg_isready", "\n",
            "https://u:pw@h/x", "password=\"s t\"", "exec", "|", "(", ")",
        ]), 1..8)
    ) {
        let script = pieces.join(" ");
        let argv: Vec<String> = ["/bin/bash", "-ec", script.as_str()].iter().map(|a| a.to_string()).collect();
        let whole = redact_argv(&argv);
        let start = redact_argv_until(&argv, 2, &lead_found);
        prop_assert_eq!(lead_of(&start[2]), lead_of(&whole[2]), "{:?} / {:?}", start[2], whole[2]);
        prop_assert_eq!(&start[..2], &whole[..2]);
        prop_assert_eq!(redact_argv_until(&argv, 2, &|_| false), whole);
    }
}

proptest! {
    /// `Pass::new` skips the words whose variables are all secret already (a script redacted
    /// again once the command around named its variables secret) and redacts them when shown:
    /// every text is shown as when it redacted every word that uses a variable, whole and up to
    /// a script's lead, as a `sh -c` script, as one string and as a command's words.
    #[test]
    fn a_pass_that_skips_words_with_known_secret_variables_shows_the_same(
        pieces in proptest::collection::vec(proptest::sample::select(vec![
            "P=pw;", "P=\"a b\";", "T=$P;", "h=db;", "X=$h", "redis-cli -a $P ping", "mysqladmin -p\"$T\" status",
            "password_aux=\"${MYSQL_ROOT_PASSWORD:-}\"", "password_aux=$(cat \"$F\")", "-p\"${password_aux}\"",
            "if [[ -f \"${F:-}\" ]]; then", "fi", "\n", "mysql -pS3cr3t", "-p$X", "curl -u admin:$P http://$h/",
            "echo $P |", "printf 'AUTH %s' $P | nc $h 6379", "sh -c 'redis-cli -a $P ping'", "\"-h db -a $T\"",
            "B=x$A;", "A=$T;", "redis-cli -h $h -a $B", "redis-cli -a $P$h ping", "PGPASSWORD=$P pg_isready -h $h", "&&", "|", "(", ")",
            "https://u:$P@h/x", "password=\"$P\"", "$1", "\"$@\"",
        ]), 1..10)
    ) {
        let script = pieces.join(" ");
        let argv: Vec<String> = ["/bin/bash", "-ec", script.as_str()].iter().map(|a| a.to_string()).collect();
        let never = |_: &str| false;
        prop_assert_eq!(redact_argv(&argv), redact_argv_until_every_variable_word(&argv, usize::MAX, &never));
        prop_assert_eq!(
            redact_argv_until(&argv, 2, &lead_found),
            redact_argv_until_every_variable_word(&argv, 2, &lead_found)
        );
        let one = vec![script.clone()];
        prop_assert_eq!(redact_argv(&one), redact_argv_until_every_variable_word(&one, usize::MAX, &never));
        if let Ok(words) = shell_words::split(&script) {
            prop_assert_eq!(
                redact_argv(&words),
                redact_argv_until_every_variable_word(&words, usize::MAX, &never)
            );
        }
    }
}

proptest! {
    /// `is_secret_name` compares without a lowercase copy and answers as the copy did.
    #[test]
    fn is_secret_name_answers_as_a_lowercase_copy_does(n in "-{0,2}[a-zA-Z_.ÄéPpWwDdAaSsTtKkEeYy-]{0,16}") {
        let l = n.trim_start_matches('-').to_ascii_lowercase();
        let copy = [
            "pass", "secret", "token", "pwd", "auth", "credential", "apikey", "api_key", "api-key",
            "access_key", "access-key", "private", "bearer", "cookie", "session", "signature",
        ]
        .iter()
        .any(|k| l.contains(k))
            || matches!(l.as_str(), "key" | "sig" | "pw");
        prop_assert_eq!(is_secret_name(&n), copy);
    }
}

/// s16 break-it pass: a URL whose user info is a token alone (`https://TOKEN@db/`), or a token
/// with GitHub's `x-oauth-basic` password, showed the token; docs/scripts.md says URL user info is
/// never shown. Hidden whole; a user name with a password keeps the name.
#[test]
fn a_token_given_as_a_url_user_name_is_hidden() {
    for (url, shown) in [
        ("curl -f https://S3cr3tTOK@db.default.svc/health", "curl -f https://***@db.default.svc/health"),
        ("https://S3cr3tTOK:x-oauth-basic@github.com/o/r", "https://***@github.com/o/r"),
        ("https://S3cr3tTOK:@github.com/o/r", "https://***@github.com/o/r"),
        ("postgresql://S3cr3tTOK@db:5432/x", "postgresql://***@db:5432/x"),
        ("https://x-access-token:S3cr3tTOK@github.com/", "https://x-access-token:***@github.com/"),
        ("http://u:pw@db/", "http://u:***@db/"),
        ("http://@db/", "http://@db/"),
        ("http://db:8080/users/@me", "http://db:8080/users/@me"),
    ] {
        assert_eq!(redact_secrets(url), shown, "{url}");
    }
    assert_eq!(crate::engine::redact_host("S3cr3tTOK:x-oauth-basic@db"), "***@db");
    assert_eq!(crate::engine::redact_host("u:pw@db"), "u:***@db");
}

proptest! {
    /// `PasswordFlag::names_a_client` (binary search over the sorted names, a prefix at the
    /// first name not below it) answers as comparing every client with every name does.
    #[test]
    fn names_a_client_answers_as_every_name_compared_does(
        mut names in proptest::collection::vec(proptest::sample::select(vec![
            "mysql", "mysqladmin", "mysqlx", "mariadb", "ldap", "ldapsearch", "ldaq", "lda", "ldapwhoami",
            "sqlcmd", "bcp", "redis-cli", "redis", "nodetool", "mongosh", "mongo", "cat", "if", "zz", "a",
            "sshpass", "cypher-shell", "",
        ]), 0..8)
    ) {
        names.sort_unstable();
        names.dedup();
        for row in PASSWORD_FLAGS {
            prop_assert_eq!(row.names_a_client(&names), names.iter().any(|n| row.is_client(n)), "{:?}", names);
        }
    }
}

/// [`redact_kv`] as it was written before it read bytes (over a `Vec<char>`), the reference
/// its test compares with. Redact the values of `password=...`-like pairs (conninfo strings, query strings): any
/// `key=value` at a word or parameter boundary whose key looks secret ([`is_secret_name`]:
/// `password`, `token`, `access_token`, `api_key`, ...).
fn redact_kv_by_chars(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let at_boundary = i == 0
            || matches!(
                chars[i - 1],
                ' ' | '\n' | '\t' | '?' | '#' | '&' | ';' | '\'' | '"' | '{' | '(' | '`'
            );
        if at_boundary {
            let mut k = i;
            while k < chars.len()
                && k - i < 64
                && (chars[k].is_ascii_alphanumeric() || matches!(chars[k], '_' | '-' | '.'))
            {
                k += 1;
            }
            // A JSON member `"password": "value"` (a request body given to curl -d).
            if k > i
                && i > 0
                && chars[i - 1] == '"'
                && chars.get(k) == Some(&'"')
                && chars.get(k + 1) == Some(&':')
            {
                let key: String = chars[i..k].iter().collect();
                if is_secret_name(&key) {
                    out.push_str(&key);
                    out.push_str("\":");
                    i = k + 2;
                    while i < chars.len() && chars[i] == ' ' {
                        out.push(' ');
                        i += 1;
                    }
                    if chars.get(i) == Some(&'"') {
                        i += 1;
                        while i < chars.len() && chars[i] != '"' {
                            i += if chars[i] == '\\' { 2 } else { 1 };
                        }
                        i = (i + 1).min(chars.len());
                        out.push_str("\"***\"");
                    } else {
                        while i < chars.len() && !matches!(chars[i], ',' | '}' | ' ') {
                            i += 1;
                        }
                        out.push_str("***");
                    }
                    continue;
                }
            }
            // libpq conninfo allows blanks around `=` (`password = x`).
            let eq = k + chars[k..].iter().take_while(|c| **c == ' ').count();
            if k > i && chars.get(eq) == Some(&'=') {
                let key: String = chars[i..k].iter().collect();
                if is_secret_name(&key) {
                    out.push_str(&key);
                    out.push_str("=***");
                    i = eq + 1;
                    while chars.get(i) == Some(&' ') {
                        i += 1;
                    }
                    if let Some(&q) = chars.get(i).filter(|c| matches!(c, '\'' | '"')) {
                        // A quoted value: up to and including its closing quote.
                        i += 1;
                        while i < chars.len() && chars[i] != q {
                            i += 1;
                        }
                        i = (i + 1).min(chars.len());
                        continue;
                    }
                    if let Some(end) = substitution_end_by_chars(&chars, i) {
                        // A command substitution (`PGPASSWORD=$(echo pw)`, `` `cat f` ``): the
                        // whole of it, blanks inside included (s16 break-it pass: only its first
                        // word was hidden).
                        i = end;
                        continue;
                    }
                    while i < chars.len() && !matches!(chars[i], ' ' | '\n' | '&' | ';' | '\'' | '"') {
                        i += 1;
                    }
                    continue;
                }
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// Where the command substitution starting at `chars[i]` (`$(...)`, nested parentheses counted,
/// or `` `...` ``) ends: the index after its closing character, or the end of the text when it is
/// unclosed. `None` when none starts there.
fn substitution_end_by_chars(chars: &[char], i: usize) -> Option<usize> {
    match (chars.get(i), chars.get(i + 1)) {
        (Some('$'), Some('(')) => {
            let mut depth = 0usize;
            for (k, c) in chars.iter().enumerate().skip(i + 1) {
                match c {
                    '(' => depth += 1,
                    ')' if depth == 1 => return Some(k + 1),
                    ')' => depth -= 1,
                    _ => {}
                }
            }
            Some(chars.len())
        }
        (Some('`'), _) => {
            Some(chars[i + 1..].iter().position(|c| *c == '`').map_or(chars.len(), |k| i + k + 2))
        }
        _ => None,
    }
}

proptest! {
    /// `redact_kv` reads bytes and copies the text between values whole; it answers as the
    /// version over a `Vec<char>` did, for texts of keys, values, quotes, substitutions, JSON
    /// members and non-ASCII characters.
    #[test]
    fn redact_kv_answers_as_the_version_over_chars_does(
        pieces in proptest::collection::vec(proptest::sample::select(vec![
            "password", "PGPASSWORD", "token", "host", "x", "=", " = ", " ", "\n", "\t", "'", "\"", "\\",
            "$(", ")", "`", "(", "{", "}", ",", ":", "\":", "&", ";", "?", "#", "é", "ß", "\u{a0}", "日本",
            "pw", "a b", "-", "_", ".", "$", "echo", "key",
        ]), 0..16)
    ) {
        let text = pieces.concat();
        prop_assert_eq!(redact_kv(&text), redact_kv_by_chars(&text), "{:?}", text);
    }
}

/// [`display_words`] as it was written before it copied runs of a word's value (character by
/// character), the reference its test compares with. The words of a text as the display reads them, each with its byte range in `text` and
/// whether it is an operator: blanks separate words; a run of operator characters
/// ([`is_operator`]) outside quotes is a word of its own; single quotes, double quotes (`\`
/// escaping inside) and a backslash outside quotes quote as in sh and are not part of the word's
/// value; an unclosed quote runs to the end; [`POSITIONAL_SHOWN`] is one word. Not a shell
/// parser: only for showing a text with its secrets replaced in place.
fn display_words_by_chars(text: &str) -> Vec<(String, Range<usize>, bool)> {
    // Blanks as sh reads them (`-p\u{a0}X` is one word, the password `\u{a0}X`); a text with none
    // and no operator, but other white space (a word sh did not split), at any white space.
    let shell_split = text.contains([' ', '\t']) || text.contains(is_operator);
    let is_blank = |c: char| if shell_split { matches!(c, ' ' | '\t') } else { c.is_whitespace() };
    let mut words = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some(&(start, c)) = chars.peek() {
        if is_blank(c) && c != '\n' {
            chars.next();
            continue;
        }
        let mut value = String::new();
        let mut end = start;
        if text[start..].starts_with(POSITIONAL_SHOWN) {
            // Shown already (a note's command line redacted again).
            for _ in 0..POSITIONAL_SHOWN.len() {
                chars.next();
            }
            words.push((POSITIONAL_SHOWN.to_string(), start..start + POSITIONAL_SHOWN.len(), false));
            continue;
        }
        if is_operator(c) {
            while let Some(&(at, c)) = chars.peek().filter(|(_, c)| is_operator(*c)) {
                value.push(c);
                end = at + c.len_utf8();
                chars.next();
            }
            words.push((value, start..end, true));
            continue;
        }
        let mut quote: Option<char> = None;
        while let Some(&(at, c)) = chars.peek() {
            match quote {
                None if is_blank(c) || is_operator(c) => break,
                None if c == '\'' || c == '"' => quote = Some(c),
                None if c == '\\' => {
                    chars.next();
                    end = at + 1;
                    if let Some(&(at, c)) = chars.peek() {
                        value.push(c);
                        end = at + c.len_utf8();
                        chars.next();
                    }
                    continue;
                }
                Some(q) if c == q => quote = None,
                Some('"') if c == '\\' => {
                    chars.next();
                    end = at + 1;
                    if let Some(&(at, c)) = chars.peek() {
                        if !matches!(c, '"' | '\\' | '$' | '`') {
                            value.push('\\');
                        }
                        value.push(c);
                        end = at + c.len_utf8();
                        chars.next();
                    }
                    continue;
                }
                _ => value.push(c),
            }
            end = at + c.len_utf8();
            chars.next();
        }
        words.push((value, start..end, false));
    }
    words
}

proptest! {
    /// `display_words` copies a word's value a run at a time; it reads every text as the
    /// version that pushed it a character at a time did (quotes, escapes inside and outside
    /// double quotes, operators, non-ASCII blanks and characters, a backslash at the end).
    #[test]
    fn display_words_reads_texts_as_the_version_by_characters_does(
        pieces in proptest::collection::vec(proptest::sample::select(vec![
            "a", "pw", "x=", " ", "\t", "\n", "'", "\"", "\\", "$", "`", ";", "&&", "|", "(", ")", "<", ">",
            "é", "\u{a0}", "日本", "<redacted>", "-p", "\\\"", "\\$",
        ]), 0..16)
    ) {
        let text = pieces.concat();
        prop_assert_eq!(display_words(&text), display_words_by_chars(&text), "{:?}", text);
    }
}

/// [`program_names`] as it was before it split ASCII texts by bytes: the reference its test
/// compares with.
fn program_names_by_chars(texts: &[String]) -> Vec<&str> {
    let mut names: Vec<&str> = Vec::new();
    for t in texts {
        let atoms =
            t.split(|c: char| c.is_whitespace() || is_operator(c) || matches!(c, '"' | '\'' | '$' | '{'));
        names.extend(
            atoms
                .filter(|a| !a.is_empty())
                .map(super::shown::basename)
                .filter(|a| !a.is_empty() && !a.starts_with('-')),
        );
    }
    names.sort_unstable();
    names.dedup();
    names
}

proptest! {
    /// `program_names` splits ASCII texts by bytes and skips `basename` for plain pieces; it
    /// names the programs the version over characters named (paths, `.exe` in any case, shell
    /// punctuation around names, options, non-ASCII blanks and characters).
    #[test]
    fn program_names_are_the_names_the_version_over_chars_gives(
        texts in proptest::collection::vec(
            proptest::collection::vec(proptest::sample::select(vec![
                "mysql", "curl.EXE", ".exe", "/usr/bin/", "C:\\tools\\", "redis-cli", "-p", "--x", " ", "\t",
                "\n", "\u{b}", "\u{a0}", "é", "(", ")", "$(", "`", "\"", "'", "{", "}", ";", "&", "|", "!", "=", "_", ".",
            ]), 0..10).prop_map(|p| p.concat()),
            0..4,
        )
    ) {
        prop_assert_eq!(super::shown::program_names(&texts), program_names_by_chars(&texts), "{:?}", texts);
    }
}

/// Break-it pass (s22): a password set in a variable at a long script's start and used past the
/// cut `redact_command` makes (`-p$P` at its end) was shown in the `unresolved-scripts` note when
/// an expansion bound stopped the analysis. Every value set in a cut start is shown as `***`; a
/// short script is still redacted only where its secrets are.
#[test]
fn a_variable_set_before_the_cut_of_a_long_script_is_never_shown() {
    let secret = "S3cr3tPW";
    let expanding = "A=xxxxxxxxxxxxxxxx; B=$A$A$A$A$A$A$A$A; C=$B$B$B$B$B$B$B$B; D=$C$C$C$C$C$C$C$C; \
                     E=$D$D$D$D$D$D$D$D; F=$E$E$E$E$E$E$E$E; G=$F$F$F$F$F$F$F$F";
    for set in [format!("P={secret}"), format!("P=\"{secret} x\""), format!("export P='{secret}'")] {
        let script = format!("{set}; {expanding}; mysql -p$P -h db.prod.svc $G");
        let argv = argv(&["sh", "-c", &script]);
        let outcome = analyze(&argv, &ExecEnv::default(), &Options::default());
        assert!(outcome.dependency.is_none(), "{script}");
        assert!(outcome.unresolved.iter().any(|u| u.over_bound), "{script}: {:?}", outcome.unresolved);
        let mut shown = vec![redact_command(&argv, 80), redact_command(&argv, 30)];
        shown.extend(outcome.unresolved.iter().map(|u| u.path.clone()));
        for text in shown {
            assert!(!text.contains(secret), "{script} shows {text:?}");
            assert!(text.contains("P=***"), "{script} shows {text:?}");
        }
    }
    // Short: the whole script is read, and only the secret goes.
    let shown = redact_command(&argv(&["sh", "-c", "H=db; pg_isready -h $H"]), 80);
    assert_eq!(shown, "sh -c 'H=db; pg_isready -h $H'");
    assert_eq!(
        redact_cut_assignments("a=1 b=\"x y\"; c= ; echo d=e|f=g"),
        "a=*** b=***; c= ; echo d=***|f=***"
    );
}

#[test]
fn a_shown_urls_query_values_and_fragment_are_masked() {
    use super::mask_url_query;
    for (text, want) in [
        ("http://api.shop.svc/h?k=SECRETenv7", "http://api.shop.svc/h?k=***"),
        ("http://api.svc/h?a=1&verbose&b=two#frag", "http://api.svc/h?a=***&verbose&b=***#***"),
        ("https://api.svc:8443/x#token=abc (MISC)", "https://api.svc:8443/x#*** (MISC)"),
        ("http://a.svc/?x=1 and http://b.svc/?y=2", "http://a.svc/?x=*** and http://b.svc/?y=***"),
        // No query: as written.
        ("http://api.svc/healthz", "http://api.svc/healthz"),
        ("db.prod.svc:5432", "db.prod.svc:5432"),
        ("orders?x=1", "orders?x=1"),
        ("http://api.svc/h?=&k=", "http://api.svc/h?=&k="),
    ] {
        assert_eq!(mask_url_query(text), want, "{text}");
    }
}

/// s26: `join_redacted_cut` is `join_redacted` cut by `truncate_chars`, and `redact_operand` the
/// text's word of `redact_argv` of the two, for every cut from 0 to 160 characters, on the
/// credential spellings of every client row, the break-it shapes and scripts that set and use
/// secret variables (whose assignments, before the cut, are redacted from what follows it).
#[test]
fn the_cut_join_and_the_operand_are_the_whole_redactions_cut() {
    let split = |s: &str| s.split(' ').map(str::to_string).collect::<Vec<String>>();
    let mut argvs: Vec<Vec<String>> = credential_spellings("S3cr3tPw").iter().map(|s| split(s)).collect();
    argvs.extend(break_it_shapes("mysqladmin -h db.svc -pS3cr3tPw ping", "S3cr3tPw"));
    argvs.extend(break_it_shapes("redis-cli -h cache.svc -a S3cr3tPw ping", "S3cr3tPw"));
    for script in [
        "P=S3cr3tPw; A=b; C=d; E=f; G=h; I=j; K=l; M=n; O=p; Q=r; redis-cli -h cache.svc -a $P ping",
        "A=S3cr3tPw; B=x$A; C=$B; H=db.svc; redis-cli -h $H -a $C ping | grep -q PONG && echo ok",
        "CONNECTION_CHECK_MAX_COUNT=0 AIRFLOW__LOGGING__LOGGING_LEVEL=ERROR exec /entrypoint airflow jobs check --job-type SchedulerJob --local",
    ] {
        argvs.push(split(script));
        argvs.push(vec!["sh".into(), "-c".into(), script.into()]);
    }
    assert!(argvs.len() > 50, "{}", argvs.len());
    for argv in &argvs {
        let whole = join_redacted(argv);
        for max in 0..=160 {
            assert_eq!(
                join_redacted_cut(argv, max),
                super::super::context::truncate_chars(&whole, max),
                "{argv:?} cut at {max}"
            );
        }
        for text in argv {
            let expected = redact_argv(&[argv[0].clone(), text.clone()]).pop().unwrap();
            assert_eq!(redact_operand(&argv[0], text), expected, "{argv:?}: {text}");
        }
    }
}
