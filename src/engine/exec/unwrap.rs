//! Stage 4: wrapper unwrapping (`env`, `timeout`, `sudo`, `sh -c`, ...) down to the program that runs, then client matching.

use super::DependencyCategory;
use super::clients::Hit;
use super::context::{Ctx, basename, is_reserved_char};
use super::hosts::{HostClass, port_category};
use super::powershell::Edition;
use super::script::{FileRun, Overrides, runs_as_shell};
use super::shell::split_assignment;
use super::{Dependency, FileLookup, LocalRequest, MAX_DEPTH, MAX_UNWRAP};

/// Index of the first argument that is not an option of a wrapper. `with_value` lists the
/// options whose value is the next word; `--` ends the options.
pub(super) fn skip_opts(vals: &[String], with_value: &[&str]) -> usize {
    let mut k = 0;
    while k < vals.len() {
        let v = vals[k].as_str();
        if v == "--" {
            return k + 1;
        }
        if v.len() > 1 && v.starts_with('-') {
            k += if with_value.contains(&v) { 2 } else { 1 };
        } else {
            return k;
        }
    }
    k
}

/// `env`'s split-string option at the start of `args` (`-S STRING`, `-SSTRING`,
/// `--split-string=STRING`, `--split-string STRING`): the string and how many words it took.
fn split_string_opt(args: &[String]) -> Option<(String, usize)> {
    let v = args.first()?.as_str();
    if v == "-S" || v == "--split-string" {
        return Some((args.get(1)?.clone(), 2));
    }
    let attached = v.strip_prefix("--split-string=").or_else(|| v.strip_prefix("-S"))?;
    Some((attached.to_string(), 1))
}

/// The value of the option letter `want` or the long option `long` among `options` (getopt
/// words, `vals` the letters that take a value): `-c V`, `-cV`, `-lc V`, `--command=V`,
/// `--command V`.
fn opt_value(options: &[String], vals: &str, want: char, long: &str) -> Option<String> {
    for (k, o) in options.iter().enumerate() {
        if o == long {
            return options.get(k + 1).cloned();
        }
        if let Some(v) = o.strip_prefix(long).and_then(|r| r.strip_prefix('=')) {
            return Some(v.to_string());
        }
        if o.len() < 2 || !o.starts_with('-') || o.starts_with("--") {
            continue;
        }
        for (at, letter) in o.char_indices().skip(1) {
            if vals.contains(letter) {
                let attached = &o[at + letter.len_utf8()..];
                if letter != want {
                    break;
                }
                return if attached.is_empty() {
                    options.get(k + 1).cloned()
                } else {
                    Some(attached.to_string())
                };
            }
        }
    }
    None
}

/// Whether the getopt word `o` (`-qec`) sets the flag `want` before any letter of `vals` (which
/// take a value: what follows them is that value).
fn short_flag(o: &str, vals: &str, want: char) -> bool {
    for letter in o.chars().skip(1) {
        if letter == want {
            return true;
        }
        if vals.contains(letter) {
            return false;
        }
    }
    false
}

/// `unshare`'s options that take a value as the next word (`-S 0`, `--setuid 0`).
const UNSHARE_VALUES: &[&str] = &[
    "-S",
    "--setuid",
    "-G",
    "--setgid",
    "-R",
    "--root",
    "-w",
    "--wd",
    "-l",
    "--load-interp",
    "--owner",
    "--propagation",
    "--setgroups",
    "--map-user",
    "--map-group",
    "--map-users",
    "--map-groups",
    "--monotonic",
    "--boottime",
];

/// Whether `unshare`'s options (`opts`, the words after `unshare`) ask for a new network namespace:
/// `-n`, a short group holding `n` before a letter that takes a value (`-rn`; getopt string
/// `+fhVmuinpCTUrR:w:S:G:cl:`), or `--net`, `--net=FILE` and its unique prefixes `--n`, `--ne`
/// (getopt_long; no other long option starts with `n`). The program then runs in a namespace of
/// its own, with only a loopback interface that is down ("-n, --net[=file] Create a new network
/// namespace", unshare(1); network_namespaces(7)): it reaches no other host, and no server of the
/// Pod's either, so no dependency's outage can change its status. Options end at `--` or at the
/// first word that is not one (`+`).
pub(super) fn unshare_net(opts: &[String]) -> bool {
    let mut k = 0;
    while let Some(o) = opts.get(k) {
        if o == "--" || o.len() < 2 || !o.starts_with('-') {
            return false;
        }
        if let Some(long) = o.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or_default();
            if !name.is_empty() && "net".starts_with(name) {
                return true;
            }
            k += if UNSHARE_VALUES.contains(&o.as_str()) { 2 } else { 1 };
            continue;
        }
        if short_flag(o, "RwSGl", 'n') {
            return true;
        }
        // `-rS 0`: a value letter last in its group takes the next word.
        let value_last = o.char_indices().skip(1).find(|(_, c)| "RwSGl".contains(*c));
        k += match value_last {
            Some((at, _)) if at + 1 == o.len() => 2,
            _ => 1,
        };
    }
    false
}

/// A program that runs another: its options that take a value (as separate words), how many
/// operands come before the command, and the option, if any, whose value is a shell script.
pub(super) struct Wrapper {
    pub names: &'static [&'static str],
    pub value_opts: &'static [&'static str],
    pub operands: usize,
    pub script_flag: Option<&'static str>,
}

/// Privilege, lock, chroot, scheduling and supervision wrappers found in images, unwrapped like
/// `sudo`, `gosu` and `nice` (each row's synopsis from its manual page).
pub(super) const WRAPPERS: &[Wrapper] = &[
    // util-linux setpriv(1): `setpriv [options] program [arguments]`.
    Wrapper {
        names: &["setpriv"],
        value_opts: &[
            "--reuid",
            "--regid",
            "--ruid",
            "--euid",
            "--rgid",
            "--egid",
            "--groups",
            "--securebits",
            "--pdeathsig",
            "--selinux-label",
            "--apparmor-profile",
            "--inh-caps",
            "--ambient-caps",
            "--bounding-set",
            "--landlock-access",
            "--landlock-rule",
        ],
        operands: 0,
        script_flag: None,
    },
    // runit chpst(8): `chpst [-vP012] [-u user] [-U user] [-b argv0] [-e dir] [-/ root] [-n inc]
    // [-l|-L lock] [-m bytes] [-d bytes] [-o n] [-p n] [-f bytes] [-c bytes] prog`.
    Wrapper {
        names: &["chpst"],
        value_opts: &[
            "-u", "-U", "-b", "-e", "-/", "-n", "-l", "-L", "-m", "-d", "-o", "-p", "-f", "-c", "-t",
        ],
        operands: 0,
        script_flag: None,
    },
    // util-linux flock(1): `flock [options] file|directory command [arguments]`, or `-c command`.
    Wrapper {
        names: &["flock"],
        value_opts: &["-w", "--timeout", "-E", "--conflict-exit-code"],
        operands: 1,
        script_flag: Some("-c"),
    },
    // coreutils chroot(1): `chroot [OPTION] NEWROOT [COMMAND [ARG]...]`.
    Wrapper { names: &["chroot"], value_opts: &["--userspec", "--groups"], operands: 1, script_flag: None },
    // util-linux chrt(1): `chrt [options] priority command [argument...]`.
    Wrapper { names: &["chrt"], value_opts: &["-T", "-P", "-D"], operands: 1, script_flag: None },
    // util-linux taskset(1): `taskset [options] mask command [argument...]`.
    Wrapper { names: &["taskset"], value_opts: &[], operands: 1, script_flag: None },
    // numactl(8): `numactl [options] command {arguments ...}`.
    Wrapper {
        names: &["numactl"],
        value_opts: &[
            "-C",
            "-N",
            "-m",
            "-i",
            "-p",
            "--physcpubind",
            "--cpunodebind",
            "--membind",
            "--interleave",
            "--preferred",
        ],
        operands: 0,
        script_flag: None,
    },
    // skarnet s6-setuidgid, daemontools setuidgid and envuidgid: `NAME account prog...`.
    Wrapper {
        names: &["s6-setuidgid", "setuidgid", "envuidgid"],
        value_opts: &[],
        operands: 1,
        script_flag: None,
    },
    // daemontools softlimit(8): `softlimit opts child`.
    Wrapper {
        names: &["softlimit"],
        value_opts: &["-m", "-a", "-d", "-s", "-l", "-f", "-c", "-r", "-t", "-o", "-p"],
        operands: 0,
        script_flag: None,
    },
    // OpenBSD doas(1): `doas [-u user] command [args]`; catatonit (podman's init), s6-overlay's
    // with-contenv: `NAME [options] [--] command`.
    Wrapper { names: &["doas"], value_opts: &["-u", "-C"], operands: 0, script_flag: None },
    Wrapper { names: &["catatonit", "with-contenv"], value_opts: &[], operands: 0, script_flag: None },
    // sshpass(1): `sshpass [-ffilename|-dnum|-ppassword|-e] [options] command arguments`.
    Wrapper { names: &["sshpass"], value_opts: &["-f", "-d", "-p", "-P"], operands: 0, script_flag: None },
    // util-linux prlimit(1): `prlimit [options] [--resource[=limits]] command [argument...]`; a
    // resource's limits are attached only (`--nofile=1024`), `-p/--pid` and `-o/--output` take one.
    Wrapper {
        names: &["prlimit"],
        value_opts: &["-p", "--pid", "-o", "--output"],
        operands: 0,
        script_flag: None,
    },
    // strace(1): `strace [-ACdffhikqqrtttTvVwxxyyzZ] [-a column] [-b execve] [-e expr]... [-I n]
    // [-o file] [-O overhead] [-p pid]... [-P path]... [-s strsize] [-S sortby] [-u username]
    // [-U columns] [-X format] [-E var[=val]]... command [args]`; "strace exits with the same
    // exit status" as the command (EXIT STATUS).
    Wrapper {
        names: &["strace"],
        value_opts: &["-a", "-b", "-e", "-I", "-o", "-O", "-p", "-P", "-s", "-S", "-u", "-U", "-X", "-E"],
        operands: 0,
        script_flag: None,
    },
    // util-linux unshare(1): `unshare [options] [program [arguments]]`; namespace options take an
    // optional value attached only (`--mount=FILE`); these take one as the next word (getopt
    // string `+fhVmuinpCTUrR:w:S:G:cl:`, util-linux 2.39). With `-n`/`--net` the program runs
    // without the Pod's network ([`unshare_net`]).
    Wrapper { names: &["unshare"], value_opts: UNSHARE_VALUES, operands: 0, script_flag: None },
    // valgrind(1): `valgrind [valgrind-options] [your-program] [your-program-options]`; its options
    // are `--name=value` words; it exits with the program's status unless `--error-exitcode`
    // is given and an error found.
    Wrapper { names: &["valgrind"], value_opts: &[], operands: 0, script_flag: None },
    // fakeroot(1): `fakeroot [-l|--lib library] [--faked faked-binary] [-i load-file] [-s
    // save-file] [-u|--unknown-is-real] [-b|--fd-base fd] [-h|--help] [-v|--version] [--] [command]`.
    Wrapper {
        names: &["fakeroot"],
        value_opts: &["-l", "--lib", "--faked", "-i", "-s", "-b", "--fd-base"],
        operands: 0,
        script_flag: None,
    },
    // util-linux setsid(1): `setsid [options] program [arguments]`, options `-c`, `-f`, `-w`
    // (break-it pass: `setsid -w pg_isready -h db` read `-w` as the program).
    Wrapper { names: &["setsid"], value_opts: &[], operands: 0, script_flag: None },
    // shadow sg(1): `sg [-] [group [-c ] command]`: `-c COMMAND` is given to /bin/sh.
    Wrapper { names: &["sg"], value_opts: &[], operands: 1, script_flag: Some("-c") },
];

/// `python`, `python3`, `python3.12`, ...
pub(super) fn is_python(name: &str) -> bool {
    name.strip_prefix("python").is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// For `python [options] -m MODULE ...` or `python [options] SCRIPT ...`, the index of MODULE or
/// SCRIPT among `vals`; `None` for `-c CODE`, an attached `-mMODULE` or nothing to run.
pub(super) fn python_target(vals: &[String]) -> Option<usize> {
    let mut k = 0;
    while k < vals.len() {
        let v = vals[k].as_str();
        match v {
            "-m" => return (k + 1 < vals.len()).then_some(k + 1),
            "-c" => return None,
            "-W" | "-X" | "--check-hash-based-pycs" => k += 2,
            "--" => return (k + 1 < vals.len()).then_some(k + 1),
            _ if v.starts_with("-m") || v.starts_with("-c") => return None,
            _ if v.len() > 1 && v.starts_with('-') => k += 1,
            _ => return Some(k),
        }
    }
    None
}

/// The option with which interpreter `name` runs code given inline among its options `vals`
/// (`python -c`, `node -e`/`-p`/`--eval`/`--print`, `perl -e`/`-E` and clusters such as `-le`,
/// `ruby -e`, `php -r`), if it has one: that code is another language, not analysed.
pub(super) fn inline_code_flag(name: &str, vals: &[String]) -> Option<String> {
    let options = vals.iter().take_while(|v| v.starts_with('-') && v.as_str() != "--");
    let found = |v: &&String| -> bool {
        let v = v.as_str();
        match name {
            n if is_python(n) => {
                v.starts_with("-c")
                    || (!v.starts_with("--")
                        && v.len() > 2
                        && v[1..].contains('c')
                        && v[1..].chars().all(|c| c.is_ascii_alphabetic()))
            }
            "node" | "nodejs" => {
                matches!(v, "-e" | "-p" | "--eval" | "--print" | "-pe")
                    || v.starts_with("--eval=")
                    || v.starts_with("--print=")
            }
            "perl" | "ruby" => {
                !v.starts_with("--")
                    && v[1..].chars().all(|c| c.is_ascii_alphabetic())
                    && v.ends_with(['e', 'E'])
            }
            "php" => v == "-r",
            _ => false,
        }
    };
    let mut options = options;
    options.find(found).map(|v| v.split('=').next().unwrap_or(v).to_string())
}

/// Whether a shell's options (the words before its script or file) turn on errexit: `-e`, `-ec`,
/// `-o errexit`.
pub(super) fn errexit_flag(opts: &[String]) -> bool {
    opts.iter().any(|f| f.starts_with('-') && !f.starts_with("--") && f.contains('e'))
        || opts.windows(2).any(|w| w[0] == "-o" && w[1] == "errexit")
}

/// Whether a shell's options (the words before its script or file) turn on pipefail: `-o
/// pipefail`, `-euo pipefail` (bash manual, "The Set Builtin": the invocation takes `set`'s options).
pub(super) fn pipefail_flag(opts: &[String]) -> bool {
    opts.windows(2).any(|w| {
        w[0].starts_with('-') && !w[0].starts_with("--") && w[0].ends_with('o') && w[1] == "pipefail"
    })
}

/// The program a Windows command names, lowercase (Windows file names are case-insensitive):
/// `C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe` is `powershell.exe`,
/// `CMD.EXE` is `cmd.exe`. `None` for a word that is neither a Windows path (a drive letter or a
/// backslash) nor an `.exe` name.
pub(super) fn windows_program(word: &str) -> Option<String> {
    let b = word.as_bytes();
    let drive = b.len() > 2 && b[0].is_ascii_alphabetic() && b[1] == b':' && matches!(b[2], b'\\' | b'/');
    let last = word.rsplit(['\\', '/']).next().unwrap_or(word);
    let exe = last.len() > 4
        && last.is_char_boundary(last.len() - 4)
        && last[last.len() - 4..].eq_ignore_ascii_case(".exe");
    (drive || word.contains('\\') || exe).then(|| last.to_ascii_lowercase())
}

impl Ctx<'_> {
    /// Analyse one simple command (`args` resolved, markers allowed): unwrap wrappers, then
    /// hand the client to its parser.
    pub(super) fn analyze_args(
        &mut self,
        args: &[String],
        mut overrides: Overrides,
        prefix_disp: &[String],
        depth: usize,
    ) -> Option<Dependency> {
        if self.over_budget.get() {
            return None;
        }
        let mut i = 0;
        for _ in 0..MAX_UNWRAP {
            let first = self.render_lit(args.get(i)?);
            // A path, or a bare name `PATH` finds on a volume (a ConfigMap script mounted with
            // `subPath` into `/usr/local/bin`).
            let on_volume = if first.contains('/') {
                match self.under_cwd(&first) {
                    // `cd /scripts && ./check.sh`: the file under the directory `cd` gave.
                    Ok(at) => (!first.chars().any(is_reserved_char))
                        .then(|| self.files.map(|files| (at.clone(), files.read(&at))))
                        .flatten(),
                    Err(shown) => {
                        self.note_unresolved(&shown, super::script::CWD_UNKNOWN.to_string());
                        return None;
                    }
                }
            } else {
                self.on_path(&first, &overrides)
            };
            if let Some((first, lookup)) = on_volume {
                match lookup {
                    FileLookup::Text { text, origin } if runs_as_shell(&first, &text) => {
                        let script_args = args[i + 1..].to_vec();
                        return self.run_file(
                            &first,
                            &text,
                            origin,
                            Some(script_args),
                            FileRun::Program,
                            depth,
                        );
                    }
                    FileLookup::Text { .. } | FileLookup::NotOnVolume => {}
                    // A shell script that cannot be read: reported, not guessed. (Another
                    // language's file is opaque either way: its name decides below.)
                    FileLookup::Unreadable(reason) if runs_as_shell(&first, "") => {
                        self.note_unresolved(&first, reason);
                        return None;
                    }
                    FileLookup::Unreadable(_) => {}
                }
            }
            let base = windows_program(&first).unwrap_or_else(|| basename(&first).to_string());
            let raw_rest = &args[i + 1..];
            let rest: Vec<String> = raw_rest.iter().map(|a| self.render_lit(a)).collect();
            let name = base.strip_suffix(".sh").unwrap_or(&base);
            // Windows containers: `curl.exe` is curl, `cmd.exe` is cmd.
            let name = name.strip_suffix(".exe").unwrap_or(name);
            match name {
                "sh" | "bash" | "ash" | "dash" | "zsh" | "ksh" | "mksh" | "yash" => {
                    return self.run_shell(name, &rest, raw_rest, overrides, depth);
                }
                "." | "source" => {
                    let path = rest.first()?;
                    return self.run_named_file(path, &raw_rest[1..], true, depth);
                }
                n if let Some(flag) = inline_code_flag(n, &rest) => {
                    // Another language's code given inline: not read, but not silent either.
                    self.note_unresolved(
                        &format!("{n} {flag} ..."),
                        format!(
                            "the code `{n} {flag}` runs is not shell: probegate does not analyse it for dependencies"
                        ),
                    );
                    return None;
                }
                n if is_python(n) => i += 1 + python_target(&rest)?,
                "busybox" | "toybox" | "nohup" | "entrypoint" | "docker-entrypoint" => i += 1,
                "env" => {
                    let mut k = 0;
                    // `--` ends env's options, not its assignments: `env [OPTION]... [-]
                    // [NAME=VALUE]... [COMMAND [ARG]...]` (coreutils env(1)), so `env -- PGHOST=db
                    // pg_isready` runs pg_isready with PGHOST=db (break-it pass).
                    let mut options = true;
                    while k < rest.len() {
                        let v = rest[k].as_str();
                        if !options || !v.starts_with('-') {
                            // An assignment, or the command.
                            let Some((n, _)) = split_assignment(&raw_rest[k]) else { break };
                            let val = raw_rest[k][n.len() + 1..].to_string();
                            overrides.push((n.to_string(), val));
                            k += 1;
                        } else if v == "--" {
                            options = false;
                            k += 1;
                        } else if matches!(v, "-u" | "--unset") || v.starts_with("--unset=") {
                            // `env -u NAME`: the command runs without NAME, as `NAME= cmd` reads
                            // (break-it pass: `env -u PGHOST pg_isready` was denied by PGHOST).
                            let (name, step) = match v.strip_prefix("--unset=") {
                                Some(n) => (Some(n.to_string()), 1),
                                None => (rest.get(k + 1).cloned(), 2),
                            };
                            if let Some(n) = name {
                                overrides.push((n, String::new()));
                            }
                            k += step;
                        } else if matches!(v, "-i" | "--ignore-environment" | "-") {
                            // `env -i CMD`: CMD starts with an empty environment, the container's
                            // env vars do not reach it (break-it pass: `env -i pg_isready` was
                            // denied by PGHOST). An empty name marks the point (`tool_env`).
                            overrides.push((String::new(), String::new()));
                            k += 1;
                        } else if matches!(v, "-C" | "--chdir") {
                            k += 2;
                        } else if let Some((string, step)) = split_string_opt(&raw_rest[k..]) {
                            // `env -S STRING` (`--split-string`, `-SSTRING`): STRING is split into
                            // words that env then reads as its own arguments, before the rest
                            // (coreutils manual, "env invocation", -S). Split as shell-words does
                            // (quotes and backslashes); env's `\_` and `${NAME}` escapes are not
                            // read. Break-it pass: `env -S 'pg_isready -h db'` was not analysed.
                            if depth >= MAX_DEPTH {
                                return None;
                            }
                            let rendered = self.render_lit(&string);
                            let Ok(words) = shell_words::split(&rendered) else {
                                self.note_unresolved(
                                    &format!("env -S {rendered}"),
                                    "the string `env -S` splits has an unmatched quote".to_string(),
                                );
                                return None;
                            };
                            let split = words.len();
                            let mut argv = vec!["env".to_string()];
                            argv.extend(words);
                            argv.extend(raw_rest[k + step..].iter().cloned());
                            let saved = self.env_split.replace(super::context::EnvSplit {
                                argv: argv.clone(),
                                head: raw_rest[..k].to_vec(),
                                words: split,
                            });
                            let found = self.analyze_args(&argv, overrides, prefix_disp, depth + 1);
                            self.env_split = saved;
                            return found;
                        } else {
                            k += 1;
                        }
                    }
                    i += 1 + k;
                }
                "exec" => i += 1 + skip_opts(&rest, &["-a"]),
                "timeout" => {
                    let k = skip_opts(&rest, &["-s", "--signal", "-k", "--kill-after"]);
                    i += 2 + k;
                }
                "nice" => i += 1 + skip_opts(&rest, &["-n", "--adjustment"]),
                "ionice" => i += 1 + skip_opts(&rest, &["-c", "-n", "-p", "-P", "-u"]),
                "stdbuf" => i += 1 + skip_opts(&rest, &["-i", "-o", "-e"]),
                "command" => {
                    if rest.iter().any(|r| r == "-v" || r == "-V") {
                        return None;
                    }
                    i += 1 + skip_opts(&rest, &[]);
                }
                "time" => i += 1 + skip_opts(&rest, &["-f", "--format", "-o", "--output"]),
                "dumb-init" => i += 1 + skip_opts(&rest, &["-r", "--rewrite"]),
                "tini" => i += 1 + skip_opts(&rest, &["-e", "-p"]),
                "sudo" => i += 1 + skip_opts(&rest, &["-u", "-g", "-C", "-h", "-p", "-U"]),
                "gosu" | "su-exec" => i += 2,
                // `unshare -n CMD`: CMD has no network to reach a dependency by ([`unshare_net`]).
                "unshare" if unshare_net(&rest) => return None,
                // wait-for-it, wait-for: a wait, then maybe a command ([`super::wait_for`]).
                "wait-for-it" | "wait-for" => {
                    return self.wait_for(&base, args, i, overrides, prefix_disp, depth);
                }
                n if WRAPPERS.iter().any(|w| w.names.contains(&n)) => {
                    let w = WRAPPERS.iter().find(|w| w.names.contains(&n))?;
                    // The script option is the wrapper's only before its command (`flock FILE -c
                    // SCRIPT`); a `-c` after the command, or after `--`, is the command's own.
                    let command_at = skip_opts(&rest, w.value_opts) + w.operands;
                    if let Some(c) = w.script_flag
                        && let Some(pos) = raw_rest
                            .iter()
                            .take(command_at + 1)
                            .take_while(|a| *a != "--")
                            .position(|a| a == c)
                    {
                        if depth >= MAX_DEPTH {
                            return None;
                        }
                        return self.analyze_script(raw_rest.get(pos + 1)?, depth + 1);
                    }
                    i += 1 + skip_opts(&rest, w.value_opts) + w.operands;
                }
                // `cmd /c COMMAND LINE` (Windows): the rest is one command line.
                "cmd" => {
                    let pos = raw_rest
                        .iter()
                        .position(|a| a.eq_ignore_ascii_case("/c") || a.eq_ignore_ascii_case("/k"))?;
                    if depth >= MAX_DEPTH {
                        return None;
                    }
                    return self.cmd_line(&rest[..pos], &raw_rest[pos + 1..].join(" "), depth + 1);
                }
                // Windows PowerShell and PowerShell 7 ([`super::powershell`]).
                n if n.eq_ignore_ascii_case("powershell") => {
                    return self.powershell(raw_rest, Edition::Windows, depth);
                }
                n if n.eq_ignore_ascii_case("pwsh") => {
                    return self.powershell(raw_rest, Edition::Core, depth);
                }
                // `eval WORDS`: the words joined are a script.
                "eval" => {
                    if depth >= MAX_DEPTH {
                        return None;
                    }
                    let script = self.render_lit(&raw_rest.join(" "));
                    return self.analyze_script(&script, depth + 1);
                }
                // `su [-] [USER] -c SCRIPT`, `runuser [-u USER] [-c SCRIPT | -- CMD...]`.
                "su" | "runuser" => {
                    // `--` ends their options: a `-c` after it is the command's (`runuser -u
                    // postgres -- psql -c 'select 1'`). `-c CMD`, `-cCMD`, `-lc CMD`,
                    // `--command=CMD` (util-linux su(1): `-c, --command=command`; `-g`, `-G`,
                    // `-s`, `-w` also take a value; break-it pass w79, p08).
                    let options: Vec<String> = raw_rest.iter().take_while(|a| *a != "--").cloned().collect();
                    if let Some(script) = opt_value(&options, "cgGsw", 'c', "--command") {
                        if depth >= MAX_DEPTH {
                            return None;
                        }
                        return self.analyze_script(&script, depth + 1);
                    }
                    if name == "su" {
                        return None;
                    }
                    let k = skip_opts(&rest, &["-u", "--user", "-g", "--group", "-G", "--supp-group"]);
                    i += 1 + k;
                }
                // util-linux script(1): `script [options] [file]`, `-c, --command command` run by
                // the shell; only with `-e, --return` is its status the command's (break-it pass
                // w73: `script -qec CMD /dev/null`). Without `-e` it is not read.
                "script" if base == "script" => {
                    let options: Vec<String> = raw_rest.iter().take_while(|a| *a != "--").cloned().collect();
                    let cmd = opt_value(&options, "cEIOBTmo", 'c', "--command")?;
                    let returns = options.iter().any(|o| {
                        o == "--return"
                            || (o.starts_with('-') && !o.starts_with("--") && short_flag(o, "cEIOBTmo", 'e'))
                    });
                    if !returns || depth >= MAX_DEPTH {
                        return None;
                    }
                    return self.analyze_script(&cmd, depth + 1);
                }
                // `find ... -exec|-execdir|-ok|-okdir COMMAND ... ;|+` (findutils find(1)): COMMAND
                // runs, `{}` being each file found (a value not followed). With `;` find's exit
                // status does not report the command's failure ("-exec command ;": the command's
                // status is only the action's true/false); with `+` it does.
                "find" => {
                    let at = rest
                        .iter()
                        .position(|a| matches!(a.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir"))?;
                    let len = rest[at + 1..]
                        .iter()
                        .position(|a| a == ";" || a == "+")
                        .unwrap_or(rest.len() - at - 1);
                    let plus = rest.get(at + 1 + len).is_some_and(|a| a == "+");
                    let unknown = self.new_ref(super::RefKind::Unknown, "{}").to_string();
                    let command: Vec<String> =
                        raw_rest[at + 1..at + 1 + len].iter().map(|a| a.replace("{}", &unknown)).collect();
                    if command.is_empty() || depth >= MAX_DEPTH {
                        return None;
                    }
                    let saved = self.uncoupled.clone();
                    if !plus && self.uncoupled.is_none() {
                        self.uncoupled =
                            Some("find's exit status does not report a failed `-exec COMMAND ;`".to_string());
                    }
                    let found = self.analyze_args(&command, overrides, prefix_disp, depth + 1);
                    self.uncoupled = saved;
                    return found;
                }
                // `xargs [OPTS] CMD ARGS`: the command runs with extra arguments from stdin
                // ([`super::xargs`]).
                "xargs" => return self.xargs(&rest, raw_rest, overrides, prefix_disp, depth),
                // ssh: jump hosts, a ProxyCommand, and the remote command ([`super::ssh`]).
                "ssh" => {
                    let mut words = prefix_disp.to_vec();
                    words.extend(args.iter().cloned());
                    return self.ssh(&rest, raw_rest, &overrides, &words, depth);
                }
                _ => {
                    let hits = self.tool_hits(name, &rest, &overrides);
                    let no_target = hits.is_empty();
                    let mut words = prefix_disp.to_vec();
                    words.extend(args.iter().cloned());
                    if let Some(mut d) = self.first_dependency(&base, hits, &words) {
                        // The probe's own argv, no shell (only wrappers like `timeout` unwrapped;
                        // a shell's, PowerShell's, `env -S`'s words are at depth 1 or more): a
                        // `$NAME` in its host is text nothing expands.
                        d.literal_variable = depth == 0
                            && self.texts.is_empty()
                            && super::literal_variable_in(d.target.split(" (").next().unwrap_or(""))
                                .is_some();
                        return Some(d);
                    }
                    let env = |n: &str| match self.env.vars.get(n) {
                        Some(super::EnvValue::Literal(v)) => Some(v.as_str()),
                        _ => None,
                    };
                    let known = self.known.iter().find(|k| {
                        (k.matches(&base, &rest) || (name != base && k.matches(name, &rest)))
                            && !k.excluded_by_env(env)
                    });
                    // `grep green` of a cluster health request ([`super::es_health`]).
                    if let Some(d) = self.green_of_piped_health(&base, &rest, args, prefix_disp) {
                        return Some(d);
                    }
                    if let Some(known) = known {
                        let hit = Hit::always(known.category, known.reaches.clone());
                        let mut d = self.make_dependency(&base, hit, args, prefix_disp);
                        d.why = Some(known.why.clone());
                        return Some(d);
                    }
                    // A check of this member whose answer rests on the cluster's quorum.
                    if let Some(check) = super::quorum::find(&base, name, &rest) {
                        let hit = Hit::always(check.command.category, check.command.reaches.clone());
                        let mut d = self.make_dependency(&base, hit, args, prefix_disp);
                        d.quorum = Some(format!("{} ({})", check.command.why, check.source));
                        return Some(d);
                    }
                    // A client given no host but the words of a value known only at run time
                    // (`redis-cli $ARGS ping`): not its local default, the host is unknown.
                    if no_target && let Some(hit) = self.split_word_hit(name, &rest) {
                        let target = hit.target.clone();
                        let d = self.make_dependency(&base, hit, args, prefix_disp);
                        return Some(self.split_word_dependency(d, &target));
                    }
                    // A program nothing here knows, given a URL: a warning naming its host.
                    let hits = self.url_argument_hits(name, &rest);
                    return self.first_dependency(&base, hits, &words);
                }
            }
        }
        None
    }

    /// The first of `hits` that reaches a dependency, as found in the simple command `words`; the
    /// HTTP requests before it that stay on this Pod are remembered ([`LocalRequest`]).
    pub(super) fn first_dependency(
        &mut self,
        program: &str,
        hits: Vec<Hit>,
        words: &[String],
    ) -> Option<Dependency> {
        for hit in hits {
            if self.is_dependency(&hit) {
                return Some(self.make_dependency(program, hit, words, &[]));
            }
            if hit.bad_url {
                continue;
            }
            self.note_unknown_host(program, &hit);
            if let Some(path) = &hit.path {
                let shown = self.shown_words(words);
                self.local_requests.push(LocalRequest {
                    program: program.to_string(),
                    path: self.render_orig(path),
                    command: super::redact::join_redacted_cut(&shown, 80),
                });
            }
        }
        None
    }

    /// A redirection to bash's `/dev/tcp/HOST/PORT` (or `/dev/udp/...`) opens a connection to HOST.
    /// The target is a word like any other (bash manual, "Redirections": it undergoes parameter
    /// expansion; the shell's quote removal is done by then), so `"/dev/tcp/${HOSTNAME}/6379"` is resolved before HOST is
    /// classified.
    /// The command is shown with the redirection (`</dev/tcp/db/5432` alone is a command with no
    /// words).
    pub(super) fn dev_tcp_dependency(
        &mut self,
        piece: &str,
        targets: &[String],
        words: &[String],
        depth: usize,
    ) -> Option<Dependency> {
        for (i, t) in targets.iter().enumerate() {
            let (resolved, _) = self.resolve_text(t, depth, true);
            let lit = self.render_lit(&resolved);
            let Some(rest) = lit.strip_prefix("/dev/tcp/").or_else(|| lit.strip_prefix("/dev/udp/")) else {
                continue;
            };
            let host = rest.split('/').next().unwrap_or_default().to_string();
            let port = rest.split('/').nth(1).map(str::to_string);
            match self.classify(&host) {
                HostClass::Local => continue,
                HostClass::Unknown => {
                    let hit = Hit::new(DependencyCategory::Network, vec![host.clone()], host);
                    self.note_unknown_host("/dev/tcp", &hit);
                    continue;
                }
                HostClass::Remote | HostClass::Unresolved => {}
            }
            let category = port.as_deref().and_then(port_category).unwrap_or(DependencyCategory::Network);
            let shown = match port {
                Some(p) => format!("{host}:{p}"),
                None => host.clone(),
            };
            let texts = super::shell::redirection_texts(piece, |w| self.render_lit(w));
            let mut shown_words = words.to_vec();
            shown_words.extend(texts.get(i).cloned());
            return Some(self.make_dependency(
                "/dev/tcp",
                Hit::new(category, vec![host], shown),
                &shown_words,
                &[],
            ));
        }
        None
    }
}
