//! The shell-parser comparison of docs/shell-parser.md: tree-sitter-bash and
//! brush-parser on the scripts `extract.py` writes, on those scripts cut in half, and on hostile
//! inputs (each in its own process: brush-parser can abort with a stack overflow). See run.sh.
use std::time::Instant;

fn ts_parser() -> tree_sitter::Parser {
    let mut p = tree_sitter::Parser::new();
    p.set_language(&tree_sitter_bash::LANGUAGE.into()).expect("grammar");
    p
}

/// tree-sitter: (simple commands outside error nodes, commands inside them, whether the tree has an error).
fn ts_count(p: &mut tree_sitter::Parser, s: &str) -> (usize, usize, bool) {
    let t = p.parse(s, None).expect("a tree");
    let root = t.root_node();
    let (mut ok, mut bad) = (0, 0);
    let mut stack = vec![(root, false)];
    while let Some((n, in_err)) = stack.pop() {
        let e = in_err || n.is_error() || n.is_missing();
        if n.kind() == "command" {
            if e || n.has_error() { bad += 1 } else { ok += 1 }
        }
        let mut c = n.walk();
        for ch in n.children(&mut c) {
            stack.push((ch, e));
        }
    }
    (ok, bad, root.has_error())
}

/// brush-parser: the number of simple commands of the program (outside `$( )`), or its error.
fn brush(s: &str) -> Result<usize, String> {
    let opts = brush_parser::ParserOptions::default();
    let mut p = brush_parser::Parser::new(std::io::Cursor::new(s.as_bytes()), &opts);
    match p.parse_program() {
        Ok(prog) => Ok(format!("{prog:?}").matches("SimpleCommand {").count()),
        Err(e) => Err(format!("{e}").chars().take(60).collect()),
    }
}

/// Median microseconds of 21 runs of 10 calls.
fn time<F: FnMut()>(mut f: F) -> f64 {
    let mut v = Vec::new();
    for _ in 0..21 {
        let t = Instant::now();
        for _ in 0..10 {
            f();
        }
        v.push(t.elapsed().as_secs_f64() / 10.0 * 1e6);
    }
    v.sort_by(|a, b| a.total_cmp(b));
    v[10]
}

/// A hostile input of N bytes (env N, default 16 KiB).
fn hostile(kind: &str) -> String {
    let n: usize = std::env::var("N").ok().and_then(|v| v.parse().ok()).unwrap_or(16 * 1024);
    let unit = match kind {
        "parens" => "(",
        "subst" => "$(",
        "dquote" => "\"a ",
        "braces" => "{ ",
        "pipes" => "a|",
        "heredocs" => "cat <<E$\n",
        "case" => "case x in ",
        "backticks" => "`a ",
        "arith" => "$((",
        "ifs" => "if a; then ",
        "expansions" => "${",
        _ => "x ",
    };
    unit.repeat(n / unit.len())
}

fn scripts(dir: &str) -> Vec<(String, String, String)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("the scripts directory")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "sh"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).expect("script");
            let src = std::fs::read_to_string(f.with_extension("src")).unwrap_or_default();
            (f.display().to_string(), text, src)
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("dump") => {
            let mut p = ts_parser();
            let t = p.parse(&args[2], None).expect("a tree");
            fn pr(n: tree_sitter::Node, src: &str, d: usize) {
                let txt: String = src[n.byte_range()].chars().take(50).collect();
                println!(
                    "{}{} {}{txt:?}",
                    "  ".repeat(d),
                    n.kind(),
                    if n.is_named() { "" } else { "(anon) " }
                );
                let mut c = n.walk();
                for ch in n.children(&mut c) {
                    pr(ch, src, d + 1);
                }
            }
            pr(t.root_node(), &args[2], 0);
        }
        Some("hostile") => {
            let s = hostile(&args[2]);
            let t = Instant::now();
            let r = if args[3] == "ts" {
                format!("{:?}", ts_count(&mut ts_parser(), &s))
            } else {
                format!("{:?}", brush(&s))
            };
            let r: String = r.chars().take(70).collect();
            println!(
                "{} {} bytes {}: {:.2} ms {r}",
                args[2],
                s.len(),
                args[3],
                t.elapsed().as_secs_f64() * 1e3
            );
        }
        Some("steps") => {
            // tree-sitter's progress callback (every 100 parser operations) per script.
            let mut p = ts_parser();
            let mut inputs: Vec<(String, String)> =
                scripts(&args[2]).into_iter().map(|(f, s, _)| (f, s)).collect();
            let all: String = inputs.iter().map(|(_, s)| format!("{s}\n")).collect();
            let mut legit = all.repeat(16_000 / all.len().max(1) + 1);
            legit.truncate(16_000);
            inputs.push(("all scripts, 16000 bytes".into(), legit));
            for k in [
                "parens",
                "subst",
                "dquote",
                "braces",
                "pipes",
                "case",
                "backticks",
                "arith",
                "ifs",
                "expansions",
            ] {
                inputs.push((format!("hostile {k}"), hostile(k)));
            }
            for (name, s) in inputs {
                let mut n = 0usize;
                let mut cb = |_: &tree_sitter::ParseState| {
                    n += 1;
                    false
                };
                let t = Instant::now();
                let options = tree_sitter::ParseOptions::new().progress_callback(&mut cb);
                let _ = p.parse_with_options(
                    &mut |i: usize, _| &s.as_bytes()[i.min(s.len())..],
                    None,
                    Some(options),
                );
                println!(
                    "{name}: {} bytes, {n} callbacks, {:.2} ms",
                    s.len(),
                    t.elapsed().as_secs_f64() * 1e3
                );
            }
        }
        Some("compare") => {
            let mut p = ts_parser();
            let (mut ts_rates, mut brush_rates) = (Vec::new(), Vec::new());
            let (mut total, mut half_ts_error, mut half_ts_some, mut half_brush_error) = (0, 0, 0, 0);
            for (f, s, src) in scripts(&args[2]) {
                let (ok, bad, err) = ts_count(&mut p, &s);
                let b = brush(&s);
                let t1 = time(|| {
                    let _ = p.parse(&s, None);
                });
                let t2 = time(|| {
                    let _ = brush(&s);
                });
                ts_rates.push(t1 / s.len().max(1) as f64 * 1000.0);
                brush_rates.push(t2 / s.len().max(1) as f64 * 1000.0);
                total += 1;
                let mut cut = s.len() / 2;
                while !s.is_char_boundary(cut) {
                    cut -= 1;
                }
                let (hok, hbad, herr) = ts_count(&mut p, &s[..cut]);
                let hb = brush(&s[..cut]);
                half_ts_error += usize::from(herr);
                half_ts_some += usize::from(hok > 0);
                half_brush_error += usize::from(hb.is_err());
                println!(
                    "{f} {}B | ts commands={ok} in-error={bad} error={err} {t1:.1}us | brush {b:?} {t2:.1}us | half: ts commands={hok} in-error={hbad} error={herr}, brush {hb:?} [{}]",
                    s.len(),
                    src.trim()
                );
            }
            ts_rates.sort_by(|a, b| a.total_cmp(b));
            brush_rates.sort_by(|a, b| a.total_cmp(b));
            println!(
                "{total} scripts; median parse ns/byte: tree-sitter {:.1}, brush {:.1}",
                ts_rates[total / 2],
                brush_rates[total / 2]
            );
            println!(
                "cut in half: tree-sitter {half_ts_error} with an error node, {half_ts_some} with a command outside it; brush {half_brush_error} errors"
            );
        }
        _ => eprintln!(
            "usage: parser-comparison compare DIR | steps DIR | hostile KIND ts|brush | dump SCRIPT"
        ),
    }
}
