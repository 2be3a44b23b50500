//! The work units an analysis spends grow with the work it does (issue #9, "bounded cost by
//! construction"; s12): each shape a break-it pass found costing far more CPU than its units said
//! is charged for the work it makes. (Times are measured by `benches/engine.rs`, `cost_shape`,
//! and `scripts/cost-shapes.py`; no test here is timed.)

use super::*;

/// The units one analysis of `sh -c script` spends, with its outcome.
fn units_spent(script: &str) -> (usize, Outcome) {
    let budget = AnalysisBudget::default();
    let options = Options { budget: Some(&budget), ..Options::default() };
    let argv = vec!["sh".to_string(), "-c".to_string(), script.to_string()];
    let outcome = analyze(&argv, &ExecEnv::default(), &options);
    (MAX_OBJECT_WORK_UNITS - budget.units.get(), outcome)
}

/// `if pg_isready; then` nested `depth` deep on one line, `echo ok` inside.
fn nested_if(depth: usize) -> String {
    format!("{}echo ok;{}fi\n", "if pg_isready;then ".repeat(depth), "fi;".repeat(depth - 1))
}

/// [`units_spent`] of `script` followed by a remote check, which must still be found (the
/// analysis went through the shape within the budget).
#[track_caller]
fn units_spent_through(script: &str) -> usize {
    let (spent, outcome) = units_spent(&format!("{script}pg_isready -h db\n"));
    assert!(outcome.dependency.is_some(), "{outcome:?} after {spent} units");
    spent
}

#[test]
fn an_if_nested_deep_costs_the_branches_each_condition_looks_at() {
    // Each condition's status walk looks at every branch under it (`plain_commands`,
    // `harmless_text`): about 60²/2 levels of nodes and text, each counted (5,742 units before).
    let spent = units_spent_through(&nested_if(60));
    assert!(spent >= 15_000, "{spent} units");
    // Twice as deep: the budget runs out, and the analysis says so.
    let (spent, outcome) = units_spent(&nested_if(120));
    assert_eq!(spent, MAX_OBJECT_WORK_UNITS);
    assert_eq!(outcome.dependency, None);
    assert_eq!(outcome.unresolved.len(), 1, "{outcome:?}");
}

#[test]
fn each_piece_of_a_script_costs_its_walk() {
    // 500 `:`: each a walk, an exit-status walk and a match, about 5 µs (1,508 units before).
    let spent = units_spent_through(&":\n".repeat(500));
    assert!(spent >= 500 * PIECE_UNITS, "{spent} units");
}

#[test]
fn a_function_called_again_costs_its_body_walked_again() {
    // Redefined and called 100 times: each call walks the body anew (1,908 units before).
    let spent = units_spent_through(&"f(){ pg_isready -h db || true;}\nf\n".repeat(100));
    assert!(spent >= 100 * WALK_UNITS, "{spent} units");
}

#[test]
fn written_words_cost_their_parse_weight() {
    // 1,000 `$V` on 10 lines: each word is parsed, walked and expanded (1,038 units before).
    let script = format!("V=x\n{}", format!("echo{}\n", " $V".repeat(100)).repeat(10));
    let spent = units_spent_through(&script);
    assert!(spent >= WALK_UNITS_PER_WEIGHT * 2 * 1000 + 1000, "{spent} units");
}

#[test]
fn here_documents_cost_their_pieces() {
    // 40 here-documents read into a status, each body's `$(...)` a piece of its own (768 before).
    let spent = units_spent_through(&"grep -q ok <<EOF\n$(pg_isready -h db)\nEOF\n:\n".repeat(40));
    assert!(spent >= 40 * 2 * PIECE_UNITS, "{spent} units");
}

#[test]
fn each_parse_of_a_piece_costs_its_area() {
    // 40 here-document ends bash does not take (`EOF ` with a blank): the piece is parsed again
    // for each, up to 18 times, and each parse costs the piece's area (once before).
    let script = format!("{}pg_isready -h db\n", "cat <<EOF\nx\nEOF \nEOF\n".repeat(40));
    let w = parse::weight(script.as_bytes());
    let budget = AnalysisBudget::default();
    let options = Options { budget: Some(&budget), ..Options::default() };
    let argv = vec!["sh".to_string(), "-c".to_string(), script.clone()];
    assert!(analyze(&argv, &ExecEnv::default(), &options).dependency.is_some());
    let area = MAX_OBJECT_PARSE_AREA - budget.parse_area_left.get();
    assert!(area >= 10 * w * w, "{area} of {w}²");
}

#[test]
fn an_or_chain_costs_its_length() {
    // `||false` after a check, on one line: each element's exit-status walk stops at the list above
    // it and finds its path from the last one (`status::memo`); 320 ` || false` spent the 50,000
    // units before (s15, #9). Linear: four times the chain, about four times the units.
    let run = || {
        let chain = |n: usize| format!("pg_isready -h db&&false{}||exit 1\n", "||false".repeat(n));
        let (short, long) = (units_spent_through(&chain(250)), units_spent_through(&chain(1000)));
        assert!(long < 5 * short && long < 40 * 1000, "{short} then {long} units");
    };
    // (1,000 nested lists: more stack than a debug build's test thread has.)
    std::thread::Builder::new().stack_size(64 << 20).spawn(run).expect("thread").join().expect("no panic");
}
