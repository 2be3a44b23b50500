//! Analysis state: the marker characters standing for values that are not plain text, their side table, and the [`Ctx`] every stage works on.

use std::collections::{HashMap, HashSet};

use super::parse::{MAX_OBJECT_PARSE_AREA, ParseGap};
use super::{
    AnalysisBudget, ExecEnv, KnownCommand, MAX_EXPANSION_BYTES, MAX_OBJECT_WORK_UNITS, ScriptFiles,
    UnresolvedScript,
};

/// `$` that must stay literal (single-quoted or backslash-escaped in a script).
pub(super) const LDOLLAR: char = '\u{E000}';

/// `$` inside double quotes: expanded, but the result is not field-split.
pub(super) const QDOLLAR: char = '\u{E001}';

/// First code point of the reference markers (supplementary private use area A).
pub(super) const MARKER_BASE: u32 = 0xF_0000;

/// Maximum number of reference markers per analysis (the rest share the generic entry 0).
pub(super) const MAX_REFS: usize = 60_000;

/// What a reference marker stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum RefKind {
    /// A value known at admission (env literal or script assignment); may contain markers.
    Lit(String),
    /// The Pod's own IP.
    SelfIp,
    /// The Pod's own name (may be followed by `.<headless service>...`).
    SelfName,
    /// The container's host name (`$HOSTNAME`, `$(hostname)`).
    SelfHost,
    /// A variable whose value is unknown at admission.
    Unresolved,
    /// A name made from the Pod's own name by a parameter operator (`${HOSTNAME%-*}`: `HOSTNAME`
    /// is the Pod's name, Kubernetes docs "Container Environment"): another Pod, a peer
    /// (`${HOSTNAME%-*}-0` is replica 0 of a StatefulSet, this Pod only on replica 0), known only
    /// at run time.
    PeerName,
    /// The output of a command substitution.
    UnresolvedCmd,
    /// A variable assigned in a branch that may not run (`if`, `case`, `&&`, `||`): after it, its
    /// value is one of these (each may hold markers: the value before the branch and the one the
    /// branch leaves); empty when there were too many to follow. Classified alternative by
    /// alternative (`Ctx::classify`): local only if every one is, remote only if every one is
    /// certainly remote, known only at run time otherwise.
    OneOf(Vec<String>),
    /// A PowerShell or cmd.exe script variable the analysis cannot follow (assigned from a
    /// command, a property, a pipeline, or never assigned): unlike an env value from a ConfigMap or
    /// Secret, nothing says it names another host, so it never makes a dependency by itself.
    Unknown,
}

/// One entry of the marker side table.
#[derive(Debug, Clone)]
pub(super) struct Ref {
    pub(super) kind: RefKind,
    /// The text as written (`$REDIS_HOST`, `$(POD_IP)`, `$(cat /secret)`).
    pub(super) original: String,
}

pub(super) fn marker_index(c: char) -> Option<usize> {
    let v = c as u32;
    if (MARKER_BASE..MARKER_BASE + 0xFFFE).contains(&v) { Some((v - MARKER_BASE) as usize) } else { None }
}

pub(super) fn is_reserved_char(c: char) -> bool {
    c == LDOLLAR || c == QDOLLAR || (0xF_0000..=0xF_FFFF).contains(&(c as u32))
}

/// Replace characters the analysis uses internally, so input cannot forge markers.
pub(super) fn sanitize(s: &str) -> String {
    // The piece prefixes of `flow.rs` (`FUNCTION`, `UNCOUPLED`) and the redirection mark of
    // `shell.rs` (`REDIRECT`) too.
    s.chars()
        .map(|c| {
            if is_reserved_char(c)
                || matches!(
                    c,
                    super::flow::FUNCTION
                        | super::flow::UNCOUPLED
                        | super::flow::GUARD
                        | super::flow::COND
                        | super::flow::PATTERN
                        | super::flow::PIPE
                        | super::flow::EXIT
                        | super::flow::SCOPE
                        | super::shell::REDIRECT
                )
            {
                '\u{FFFD}'
            } else {
                c
            }
        })
        .collect()
}

pub(super) fn is_ident(s: &str) -> bool {
    let mut cs = s.chars();
    match cs.next() {
        Some(c) if c == '_' || c.is_ascii_alphabetic() => {}
        _ => return false,
    }
    cs.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// A function-local variable: its name, and the value, unset and exported state it had before.
pub(super) type LocalVar = (String, Option<String>, bool, bool);

/// Analysis state: the environment, the marker table and script-level shell variables.
pub(super) struct Ctx<'e> {
    pub(super) env: &'e ExecEnv,
    pub(super) refs: Vec<Ref>,
    pub(super) shell_vars: HashMap<String, String>,
    pub(super) exported: HashSet<String>,
    /// Variables the script unset (`unset NAME`): empty, and no longer in the clients'
    /// environment, whatever the container's env says (until assigned again).
    pub(super) unset: HashSet<String>,
    /// Variables whose export the script removed (`export -n NAME`, `declare +x NAME`): the
    /// clients the script starts do not see them.
    pub(super) unexported: HashSet<String>,
    /// Variables assigned in a region that may not have run (a branch whose condition is not
    /// known, a loop body): their value is not certain, so no branch is decided by it.
    pub(super) uncertain: HashSet<String>,
    /// A `flow::GUARD` condition is being judged: a variable whose value is not certain reads as
    /// unknown, and so does a positional parameter the script was not given.
    pub(super) judging_guard: bool,
    pub(super) known: &'e [&'e KnownCommand],
    pub(super) files: Option<&'e dyn ScriptFiles>,
    /// `$1`, `$2`, ... of the script being analysed, when known (values may hold markers).
    pub(super) positional: Option<Vec<String>>,
    /// The words of positional parameters expanded unquoted and split (`-p$1` of `sh -c SCRIPT
    /// x 'a b'`), which leave no marker to show them by: a command shown hides them
    /// ([`redact::POSITIONAL_SHOWN`]), at most [`MAX_HIDDEN_FIELDS`].
    pub(super) hidden_fields: Vec<String>,
    /// The script being analysed defines shell functions (see `script::defines_function`).
    pub(super) defines_function: bool,
    /// Shell functions defined so far (name, body as written), the latest last. Shared (`Rc`)
    /// so that a saved copy costs nothing and [`Ctx::function_set`] knows a version it has seen:
    /// every change goes through `Rc::make_mut`, which copies a list another holder still shares.
    pub(super) functions: Functions,
    /// [`Ctx::function_set`] of the `functions` list it holds (kept alive, so its address is not
    /// reused while the facts are kept).
    pub(super) function_set: std::cell::RefCell<Option<(Functions, std::rc::Rc<FunctionSet>)>>,
    /// The function definitions (name, body) and the `trap` commands' text of the script text
    /// last walked (`flow::reach::tree_definitions`), kept with that text: read once per text, not
    /// once per call.
    pub(super) tree_definitions: std::cell::RefCell<Option<(String, usize, std::rc::Rc<TreeDefinitions>)>>,
    /// Shell function calls being analysed, nested.
    pub(super) calls: usize,
    /// A call nested deeper than `flow::MAX_CALL_DEPTH` was met and not analysed (noted).
    pub(super) calls_cut: bool,
    /// `$0` of the script being analysed, when known.
    pub(super) arg0: Option<String>,
    /// The script files being analysed, outermost first, with where each came from.
    pub(super) scripts: Vec<(String, String)>,
    pub(super) files_read: usize,
    pub(super) unresolved: Vec<UnresolvedScript>,
    /// `valueFrom` variables whose `$(NAME)` in the probe's command the kubelet expands to the
    /// empty string ([`super::ExecEnv::probe_empty`]), in the order met, each once.
    pub(super) kubelet_emptied: Vec<String>,
    /// The `$(NAME)` texts the kubelet made from a `$$(NAME)` escape (in the probe's command or an
    /// env value it expands), each once: literal text, no reference to `NAME`.
    pub(super) kubelet_escaped: Vec<String>,
    /// The `$(NAME)` texts of env values the kubelet copied as written into the probe's command
    /// (`$(DB_HOST)` of `DB_HOST: "$(SVC).shop.svc"`: `kubelet::Ctx::note_copied`), each once,
    /// with the variable whose value held it: literal text, no reference to `NAME` (s27).
    pub(super) kubelet_copied: Vec<(String, String)>,
    /// The length of a script too long to analyse, when one was met.
    pub(super) too_long: Option<usize>,
    /// Bytes produced by expansions so far (see [`MAX_EXPANSION_BYTES`]).
    pub(super) expanded: std::cell::Cell<usize>,
    /// The expansion budget ran out: the analysis stops and finds nothing.
    pub(super) over_budget: std::cell::Cell<bool>,
    /// The object's budget, shared with the other commands of the object.
    pub(super) object_budget: Option<&'e AnalysisBudget>,
    /// It was the object's budget that ran out.
    pub(super) object_spent: std::cell::Cell<bool>,
    /// Work units left without an object's budget (see [`MAX_OBJECT_WORK_UNITS`]); 0 once spent.
    pub(super) units_left: std::cell::Cell<usize>,
    /// HTTP requests to this Pod met so far ([`super::Outcome::local_requests`]).
    pub(super) local_requests: Vec<super::LocalRequest>,
    /// The shell parser, made when the first script is parsed.
    pub(super) parser: Option<tree_sitter::Parser>,
    /// Parse area left without an object's budget (see [`MAX_OBJECT_PARSE_AREA`]).
    pub(super) parse_area_left: std::cell::Cell<usize>,
    /// A script, or its end, that was not analysed because of a syntax error or the parse budget.
    pub(super) parse_gap: Option<ParseGap>,
    /// True when [`Self::parse_gap`] is in a cmd command line rather than a shell script (the
    /// note names what was not analysed).
    pub(super) parse_gap_in_cmd: bool,
    /// Syntax nodes (ids) being walked as subshells (`flow::SCOPE`).
    pub(super) scoping: Vec<usize>,
    /// The line of the script the commands being analysed are on (`flow::SCOPE`, for aliases).
    pub(super) line: usize,
    /// Aliases defined so far: name, text, and the script and line of the definition (bash
    /// manual, "Aliases").
    pub(super) aliases: Vec<(String, String, usize, usize)>,
    /// The script text being analysed (a number each), and the last number given.
    pub(super) script_id: usize,
    pub(super) next_script_id: usize,
    /// The function calls being analysed, innermost last: each one's local variables, with the
    /// value, unset and exported state each had before.
    pub(super) locals: Vec<Vec<LocalVar>>,
    /// `shopt -s expand_aliases` ran: bash expands aliases in a script.
    pub(super) expand_aliases: bool,
    /// The shell running the script, when its name says (`bash`, `dash`...); `None` for `sh` and
    /// others, which may be any of them.
    pub(super) shell: Option<&'static str>,
    /// Syntax nodes (ids) being walked as uncoupled statements (`flow::UNCOUPLED`).
    pub(super) uncoupling: Vec<usize>,
    /// The status known as written of each `&&`/`||` list asked about (`flow::constant`), by
    /// text, node id and start byte: a chain's left side is read once.
    pub(super) constant_lists:
        std::cell::RefCell<std::collections::HashMap<(usize, usize, usize), Option<bool>>>,
    /// The left sides (text, node id) of lists whose right side fails by itself (`... || exit 1`),
    /// and down their chains: their checks are not walked as uncoupled (`flow::constant`).
    pub(super) kept_coupled: std::cell::RefCell<std::collections::HashSet<(usize, usize)>>,
    /// Why the exit status of the commands being analysed cannot fail the probe, when it cannot
    /// (see `flow::UNCOUPLED`).
    pub(super) uncoupled: Option<String>,
    /// Why the script's exit status, which may be the check's, is known only at run time (a
    /// function's `exit $1` whose calls pass what admission cannot know:
    /// `script::positional_exit_words`): a dependency found then is a warning, never a denial.
    pub(super) status_unknown: Option<String>,
    /// [`Ctx::status_unknown`] as the split of the script being analysed found it, taken by
    /// `analyze_script` once the split is done.
    pub(super) status_unknown_split: Option<String>,
    /// The first dependency found in an uncoupled command, kept while a coupled one is looked for.
    pub(super) uncoupled_found: Option<super::Dependency>,
    /// Go on past the first coupled dependency, collecting each in `found_all` ([`super::Options::collect_all`]).
    pub(super) collect_all: bool,
    /// The coupled dependencies found, in order, when `collect_all`.
    pub(super) found_all: Vec<super::Dependency>,
    /// The shell running the script was started with `-e` (errexit): a failing command ends it.
    pub(super) errexit: bool,
    /// The next piece runs where errexit is ignored (`flow::SCOPE` `E`): a function it calls runs
    /// its body without errexit.
    pub(super) errexit_ignored: bool,
    /// The next piece's status is the probe's script's inverted (`flow::SCOPE` `!`).
    pub(super) inverted_next: bool,
    /// The piece being analysed is `! CMD`, the last statement of the probe's own script
    /// (`flow::inverted`): a dependency found in it directly makes the probe fail whenever it is
    /// up ([`super::Dependency::inverted`]).
    pub(super) inverted: bool,
    /// The piece being run is the condition of an `if` that exits non-zero when it succeeds and 0
    /// when it fails, in the probe's own script (`status::INVERTED_IF`), or a function's body it
    /// calls: a dependency found there directly makes the probe fail whenever it is up.
    pub(super) inverted_if: bool,
    /// With [`Self::inverted_if`]: the check's `&&` list, not an `if`, exits non-zero when it
    /// succeeds (`status::INVERTED_LIST`).
    pub(super) inverted_list: bool,
    /// With [`Self::inverted_if`]: the check's `|| exit 0` before a script's end that exits
    /// non-zero (`status::INVERTED_OR`).
    pub(super) inverted_or: bool,
    /// The last run of pieces ended at an `exit` (or `exec PROGRAM`) certain to run in its
    /// script's own shell (`flow::EXIT`): a called function's body that exits ends its caller's
    /// script too, where the call itself is certain to run in the caller's shell.
    pub(super) exited: bool,
    /// The next script analysed (`analyze_script`) is a called function's body.
    pub(super) next_is_body: bool,
    /// The script being split is a called function's body (taken by `split_parsed`): an `exit`
    /// at its end ends the caller's script, and `return` returns from it.
    pub(super) splitting_body: bool,
    /// The probe's own script sets an EXIT trap whose action ends with `exit 0`, certainly and
    /// before the piece analysed now (`script::exits::exit_trap_status`): the script exits 0
    /// whatever its commands return. The reason said for what a later command reaches.
    pub(super) exit_trap: Option<String>,
    /// The `env -S STRING` being analysed, innermost: the argv it was rebuilt as (`env`, STRING's
    /// words, the rest), env's words before `-S` as written, and how many words STRING gave. A
    /// dependency found in that argv is shown as written, `env -S 'redis-cli -h cache ping'`,
    /// not as the split words (`env redis-cli -h cache ping`; s18 fresh-user pass).
    pub(super) env_split: Option<EnvSplit>,
    /// A `trap` command was analysed: the status N when it sets such an EXIT trap, one whose
    /// action ends with `exit N` (`script::exits::exit_trap_status`; taken by `run_pieces`).
    pub(super) trap_seen: Option<Option<u8>>,
    /// The probe's own script could keep such a trap: its only `trap`, and no `exec`, `kill`,
    /// `source`, `.` or `eval` (`script::exits::trap_may_hold`).
    pub(super) trap_may_hold: bool,
    /// The script is run by `sh` and sets an ERR trap that bash runs and dash rejects: the walk
    /// reads it as dash does, and what it finds uncoupled is a doubt (`exit_traps::SH_ERR_TRAP`).
    pub(super) sh_err_trap: bool,
    /// The piece being analysed runs in the probe's own shell: its own script (no function's
    /// body), outside any subshell (set by `run_pieces`): an EXIT trap set there ends the probe's
    /// script with its action's `exit` (`script::exit_traps`).
    pub(super) in_top_shell: bool,
    /// The texts of the scripts being analysed, outermost first (`analyze_script`): the code a
    /// called function's body returns to.
    pub(super) texts: Vec<std::rc::Rc<str>>,
    /// `set -a` (allexport) is on: every variable assigned from now on is exported (bash manual,
    /// "The Set Builtin"; POSIX `set -a`); `None` when a `set` that may not have run changed it.
    pub(super) allexport: Option<bool>,
    /// Shell functions (re)defined in a region that may not have run: which body a call runs is
    /// known only at run time (their output is not used as a value).
    pub(super) uncertain_functions: HashSet<String>,
    /// The script reads a status in a way its shell text does not show (a `cmd` line that names
    /// `errorlevel`): no command's status is taken as discarded (`status::discarded`).
    pub(super) status_read_elsewhere: bool,
    /// A script being run (the caller of the function analysed now) mentions `pipefail`: it may
    /// hold in the function's body too.
    pub(super) pipefail: bool,
    /// Loop bodies that may still be walked once per word (see `flow::MAX_LOOP_WALKS`).
    pub(super) loop_walks_left: usize,
    /// The here-string of the simple command being analysed (its standard input), if any.
    pub(super) stdin_script: Option<String>,
    /// What the last simple command wrote, when known (`echo`, `printf` of known text).
    pub(super) last_output: Option<String>,
    /// The standard input of the next simple command, piped from the one before (`flow::PIPE`).
    pub(super) piped: Option<String>,
    /// The file the last simple command wrote whole (`cat FILE`), as written.
    pub(super) last_output_file: Option<String>,
    /// The last simple command was a cluster health request (`es_health::is_health_request`).
    pub(super) last_health: bool,
    /// A pipe carries [`Ctx::last_health`]'s output to the next simple command.
    pub(super) piped_health: bool,
    /// The simple command being analysed reads a cluster health request's output through a pipe.
    pub(super) stdin_health: bool,
    /// The file piped whole into the next simple command (`cat FILE | sh`).
    pub(super) piped_file: Option<String>,
    /// The file the simple command being analysed reads as its standard input (`sh < FILE`,
    /// `cat FILE | sh`): a shell given no script runs it.
    pub(super) stdin_file: Option<String>,
    /// Process substitutions (`<(echo '...')`) whose output is known: their marker and the text.
    pub(super) process_outputs: Vec<(char, String)>,
    /// What the status walk reads of each function body asked about so far ([`BodyFacts`]):
    /// every version of the list of functions asks about every known body (`flow`'s
    /// `calls_a_function_with_effects` and [`Ctx::function_set`]).
    pub(super) body_memo: std::cell::RefCell<HashMap<String, BodyFacts>>,
    /// Markers of values known only at run time, or one of several, that a command was given as
    /// a whole unquoted word (`redis-cli $ARGS ping`): field splitting makes them any number of
    /// words, its options and host among them (`script::split_words`).
    pub(super) split_words: HashSet<char>,
    /// The piece about to be analysed is followed, in its script's own run, by commands that
    /// certainly fail (`exit 1`, `false`, after output only): `script::continuation_fails`.
    pub(super) caller_fails_next: bool,
    /// The function body being analysed was called where [`Ctx::caller_fails_next`] held.
    pub(super) caller_fails_after: bool,
}

/// What the status walk reads of a function's body, whatever else is defined: made once per body
/// text in an analysis ([`Ctx::body_facts`]).
#[derive(Clone)]
pub(super) struct BodyFacts {
    /// `status::leaves_state`.
    pub(super) leaves_state: bool,
    /// `status::reads_caller_status`.
    pub(super) reads_status: bool,
    /// What `status::known_ok` reads of it.
    pub(super) known: std::rc::Rc<super::status::KnownBody>,
}

/// Shell functions (name, body as written), the latest last, shared (see [`Ctx::functions`]).
pub(super) type Functions = std::rc::Rc<Vec<(String, String)>>;

/// A script text's function definitions, each name and body, its `trap` commands' text, and
/// whether it runs a command named by an expansion (`$cmd`, `eval`): `flow::reach`.
pub(super) type TreeDefinitions = (Vec<(String, String)>, String, bool);

/// Facts about the shell functions defined so far ([`Ctx::functions`]), which every command of
/// every function body asks about: made once per version of the list, not once per command
/// (break-it pass, #9: a 12 KiB script of 250 functions calling each other cost 0.8 s).
pub(super) struct FunctionSet {
    /// The functions' names.
    pub(super) names: HashSet<String>,
    /// Some body ends the script or leaves state behind (`status::leaves_state`).
    pub(super) leaves_state: bool,
    /// Some body may read the status its caller left (`status::reads_caller_status`).
    pub(super) reads_status: bool,
    /// The known functions harmless to call, for a script that defines none
    /// (`status::Rules::share_known_ok`).
    pub(super) known_ok: super::status::KnownOkCache,
}

impl<'e> Ctx<'e> {
    /// The [`FunctionSet`] of [`Ctx::functions`] as it is now.
    pub(super) fn function_set(&self) -> std::rc::Rc<FunctionSet> {
        if let Some((list, set)) = &*self.function_set.borrow()
            && std::rc::Rc::ptr_eq(list, &self.functions)
        {
            return set.clone();
        }
        // (Each body's facts read from `body_memo`: a version costs a look-up per function, not
        // a scan of every body, s12.)
        let (mut leaves_state, mut reads_status) = (false, false);
        for (_, body) in self.functions.iter() {
            let facts = self.body_facts(body);
            leaves_state |= facts.leaves_state;
            reads_status |= facts.reads_status;
        }
        let set = std::rc::Rc::new(FunctionSet {
            names: self.functions.iter().map(|(name, _)| name.clone()).collect(),
            leaves_state,
            reads_status,
            known_ok: std::cell::RefCell::new(None),
        });
        *self.function_set.borrow_mut() = Some((self.functions.clone(), set.clone()));
        set
    }

    /// Tells the status walk's `rules` of the text split now whether it is a called function's
    /// body (`is_body`), and then what else runs in its shell: the scripts it returns to and the
    /// functions' bodies, which may read what it assigns (`status::Callers`).
    pub(super) fn body_rules(&self, rules: &mut super::status::Rules, is_body: bool) {
        rules.in_function = is_body;
        rules.caller_fails_after = is_body && self.caller_fails_after;
        if let Some((own, outer)) = self.texts.split_last().filter(|_| is_body) {
            rules.callers = Some(super::status::Callers {
                own: own.clone(),
                scripts: outer.to_vec(),
                functions: self.functions.clone(),
            });
        }
    }

    /// The [`BodyFacts`] of the function body `body`, made once per analysis.
    pub(super) fn body_facts(&self, body: &str) -> BodyFacts {
        if let Some(facts) = self.body_memo.borrow().get(body) {
            return facts.clone();
        }
        let facts = BodyFacts {
            leaves_state: super::status::leaves_state(body),
            reads_status: super::status::reads_caller_status(body),
            known: std::rc::Rc::new(super::status::KnownBody::of(body)),
        };
        self.body_memo.borrow_mut().insert(body.to_string(), facts.clone());
        facts
    }

    pub(super) fn new(env: &'e ExecEnv) -> Self {
        Ctx {
            env,
            refs: vec![Ref { kind: RefKind::Unresolved, original: "<unresolved>".to_string() }],
            shell_vars: HashMap::new(),
            exported: HashSet::new(),
            unset: HashSet::new(),
            unexported: HashSet::new(),
            uncertain: HashSet::new(),
            judging_guard: false,
            known: &[],
            files: None,
            positional: None,
            hidden_fields: Vec::new(),
            defines_function: false,
            functions: std::rc::Rc::default(),
            function_set: std::cell::RefCell::new(None),
            tree_definitions: std::cell::RefCell::new(None),
            calls: 0,
            calls_cut: false,
            arg0: None,
            scripts: Vec::new(),
            files_read: 0,
            unresolved: Vec::new(),
            kubelet_emptied: Vec::new(),
            kubelet_escaped: Vec::new(),
            kubelet_copied: Vec::new(),
            too_long: None,
            expanded: std::cell::Cell::new(0),
            over_budget: std::cell::Cell::new(false),
            object_budget: None,
            object_spent: std::cell::Cell::new(false),
            units_left: std::cell::Cell::new(MAX_OBJECT_WORK_UNITS),
            local_requests: Vec::new(),
            parser: None,
            parse_area_left: std::cell::Cell::new(MAX_OBJECT_PARSE_AREA),
            parse_gap: None,
            parse_gap_in_cmd: false,
            uncoupling: Vec::new(),
            constant_lists: Default::default(),
            kept_coupled: Default::default(),
            scoping: Vec::new(),
            line: 0,
            aliases: Vec::new(),
            script_id: 0,
            next_script_id: 0,
            locals: Vec::new(),
            expand_aliases: false,
            shell: None,
            uncoupled: None,
            status_unknown: None,
            status_unknown_split: None,
            uncoupled_found: None,
            collect_all: false,
            found_all: Vec::new(),
            errexit: false,
            errexit_ignored: false,
            inverted_next: false,
            inverted: false,
            inverted_if: false,
            inverted_list: false,
            inverted_or: false,
            exited: false,
            next_is_body: false,
            splitting_body: false,
            exit_trap: None,
            env_split: None,
            trap_seen: None,
            trap_may_hold: false,
            sh_err_trap: false,
            in_top_shell: false,
            texts: Vec::new(),
            allexport: Some(false),
            uncertain_functions: HashSet::new(),
            status_read_elsewhere: false,
            pipefail: false,
            loop_walks_left: super::flow::MAX_LOOP_WALKS,
            stdin_script: None,
            last_output: None,
            piped: None,
            last_output_file: None,
            last_health: false,
            piped_health: false,
            stdin_health: false,
            piped_file: None,
            stdin_file: None,
            process_outputs: Vec::new(),
            body_memo: std::cell::RefCell::new(HashMap::new()),
            split_words: HashSet::new(),
            caller_fails_next: false,
            caller_fails_after: false,
        }
    }

    /// Counts `n` bytes of expanded text against [`MAX_EXPANSION_BYTES`] and the object's
    /// budget; false once either is spent.
    pub(super) fn spend(&self, n: usize) -> bool {
        let total = self.expanded.get().saturating_add(n);
        self.expanded.set(total);
        if total > MAX_EXPANSION_BYTES {
            self.over_budget.set(true);
        }
        self.spend_object(n)
    }

    /// Counts `n` bytes of analysed text against the object's budget only.
    pub(super) fn spend_object(&self, n: usize) -> bool {
        if let Some(budget) = self.object_budget
            && !budget.take(n)
        {
            self.object_spent.set(true);
            self.over_budget.set(true);
        }
        !self.over_budget.get()
    }

    /// Counts `n` work units (commands matched, words expanded) against the object's budget, or
    /// without one against [`MAX_OBJECT_WORK_UNITS`] for this analysis; false once spent (the
    /// analysis then stops).
    pub(super) fn spend_units(&self, n: usize) -> bool {
        let within = match self.object_budget {
            Some(budget) => {
                let ok = budget.take_units(n);
                if !ok {
                    self.object_spent.set(true);
                }
                ok
            }
            None => match self.units_left.get().checked_sub(n) {
                Some(left) => {
                    self.units_left.set(left);
                    true
                }
                None => {
                    self.units_left.set(0);
                    false
                }
            },
        };
        if !within {
            self.over_budget.set(true);
        }
        !self.over_budget.get()
    }

    /// Allocate a marker character for a reference.
    pub(super) fn new_ref(&mut self, kind: RefKind, original: &str) -> char {
        let idx = if self.refs.len() < MAX_REFS {
            self.refs.push(Ref { kind, original: truncate_chars(original, 60) });
            self.refs.len() - 1
        } else {
            0
        };
        char::from_u32(MARKER_BASE + idx as u32).unwrap_or('\u{FFFD}')
    }

    pub(super) fn ref_of(&self, c: char) -> Option<&Ref> {
        marker_index(c).and_then(|i| self.refs.get(i))
    }
}

/// How many words of positional parameters a command shown hides ([`Ctx::hidden_fields`]).
pub(super) const MAX_HIDDEN_FIELDS: usize = 64;

impl Ctx<'_> {
    /// The words of a command as shown: rendered as written ([`Ctx::render_orig`]), each word
    /// that holds a split positional parameter's word ([`Ctx::hidden_fields`]) shown as
    /// [`redact::POSITIONAL_SHOWN`] (the display then redacts the rest, [`redact::redact_argv`]).
    pub(super) fn shown_words(&self, words: &[String]) -> Vec<String> {
        words
            .iter()
            .map(|w| {
                let shown = self.render_orig(w);
                let hidden = self
                    .hidden_fields
                    .iter()
                    .any(|f| shown == *f || (f.len() > 2 && shown.contains(f.as_str())));
                if hidden { super::redact::POSITIONAL_SHOWN.to_string() } else { shown }
            })
            .collect()
    }
}

/// See [`Ctx::env_split`].
#[derive(Clone, Debug)]
pub(super) struct EnvSplit {
    /// The argv analysed: `env`, the split words, the words after STRING.
    pub argv: Vec<String>,
    /// env's words between `env` and `-S`, as written (`-i`, `FOO=1`).
    pub head: Vec<String>,
    /// How many words STRING split into.
    pub words: usize,
}

impl Ctx<'_> {
    /// `shown` (the words of `args` as [`Ctx::shown_words`] shows them, `args` ending with the
    /// argv of [`Ctx::env_split`]) with STRING's words put back as one word after `-S`, redacted
    /// as a command of their own: `env -S 'redis-cli -a *** ping'`. Other words as they are.
    pub(super) fn shown_env_split(&self, args: &[String], shown: Vec<String>) -> Vec<String> {
        let Some(split) = &self.env_split else { return shown };
        let Some(start) = args.len().checked_sub(split.argv.len()) else { return shown };
        if args[start..] != split.argv[..] || shown.len() != args.len() {
            return shown;
        }
        let inner = &shown[start + 1..start + 1 + split.words];
        let mut out: Vec<String> = shown[..=start].to_vec();
        out.extend(self.shown_words(&split.head));
        out.push("-S".to_string());
        out.push(super::redact::join_redacted(inner));
        out.extend(shown[start + 1 + split.words..].iter().cloned());
        out
    }
}

pub(super) fn truncate_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(3)).collect();
        t.push_str("...");
        t
    }
}

/// The last path component of a program name.
pub(super) fn basename(s: &str) -> &str {
    s.rsplit('/').next().unwrap_or(s)
}
