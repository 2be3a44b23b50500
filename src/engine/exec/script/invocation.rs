//! How a shell is handed its script: the position of `-c`'s script or of the file among a shell's
//! words, and whether a file executed directly runs as a shell script.

use super::super::context::basename;

/// For `sh [options] -c [options] script`, the index of the script among `vals`.
pub(in crate::engine::exec) fn shell_script_pos(vals: &[String]) -> Option<usize> {
    let mut has_c = false;
    let mut k = 0;
    while k < vals.len() {
        let v = vals[k].as_str();
        if v == "--" || v == "-" {
            k += 1;
            break;
        }
        if v.starts_with("--") {
            k += if matches!(v, "--rcfile" | "--init-file") { 2 } else { 1 };
            continue;
        }
        if v.len() > 1 && (v.starts_with('-') || v.starts_with('+')) {
            let flags = &v[1..];
            if v.starts_with('-') && flags.contains('c') {
                has_c = true;
            }
            k += 1;
            if flags.contains(['o', 'O']) {
                k += 1;
            }
            continue;
        }
        break;
    }
    (has_c && k < vals.len()).then_some(k)
}

/// For `sh [options] FILE [args]`, the index of FILE among `vals` (`None` with `-s`, or no file).
pub(in crate::engine::exec) fn shell_file_pos(vals: &[String]) -> Option<usize> {
    let mut k = 0;
    while k < vals.len() {
        let v = vals[k].as_str();
        if v == "--" {
            return (k + 1 < vals.len()).then_some(k + 1);
        }
        if v.starts_with("--") {
            k += if matches!(v, "--rcfile" | "--init-file") { 2 } else { 1 };
            continue;
        }
        if v.len() > 1 && (v.starts_with('-') || v.starts_with('+')) {
            if v.starts_with('-') && v.contains('s') {
                return None;
            }
            k += if v[1..].contains(['o', 'O']) { 2 } else { 1 };
            continue;
        }
        return Some(k);
    }
    None
}

/// Where the operands (`$1`...) start among the words of a shell that reads its script from
/// standard input (`sh -s a b`, `bash -e`): after its options (`-o NAME` takes a word) and `--`.
pub(in crate::engine::exec) fn stdin_operands(vals: &[String]) -> usize {
    let mut k = 0;
    while let Some(v) = vals.get(k).map(String::as_str) {
        if v == "--" {
            return k + 1;
        }
        if v.starts_with("--") {
            k += if matches!(v, "--rcfile" | "--init-file") { 2 } else { 1 };
        } else if v.len() > 1 && (v.starts_with('-') || v.starts_with('+')) {
            k += if v[1..].contains(['o', 'O']) { 2 } else { 1 };
        } else {
            return k;
        }
    }
    k
}

/// Does a file that is executed directly run as a shell script? A `#!` line naming a shell, or
/// none at all (a shell runs such a file itself) on a name that is not another language's.
pub(in crate::engine::exec) fn runs_as_shell(path: &str, text: &str) -> bool {
    const SHELLS: &[&str] = &["sh", "bash", "ash", "dash", "zsh", "ksh", "mksh", "yash", "busybox"];
    if let Some(line) = text.strip_prefix("#!") {
        let mut words = line.lines().next().unwrap_or("").split_whitespace();
        let mut interpreter = basename(words.next().unwrap_or(""));
        if interpreter == "env" {
            interpreter = words.find(|w| !w.starts_with('-') && !w.contains('=')).map_or("", basename);
        }
        return SHELLS.contains(&interpreter);
    }
    let ext = basename(path).rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    !matches!(ext.as_deref(), Some("py" | "rb" | "pl" | "js" | "php" | "lua" | "awk" | "jar" | "class"))
}
