//! Parses kept for reuse: within one object ([`ObjectParses`], shared by its analysis budgets) and
//! across evaluations ([`ParseCache`], owned by the caller and handed in).
//!
//! Only parses are kept across evaluations: the tree-sitter trees of a script's text, keyed by
//! that exact text, and the parser that made them; and (s26) the handler summaries of exec
//! commands ([`ParseCache::handler_summary`]), a function of the command's words alone. Never a
//! verdict, a finding, a split into commands or anything that depends on a container's env, the
//! policy or the namespace: the same script under another env or policy is analysed again, from
//! the same trees.

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use std::sync::Arc;

use tree_sitter::Parser;

use super::parse::{ParseGap, Parsed, new_parser};

/// Most parsed scripts an object keeps for its other probes (the same script in a liveness,
/// readiness and startup probe, or in every replica's container, is parsed once).
const MAX_KEPT_TREES: usize = 16;

/// Default bound of a [`ParseCache`] in entries (parsed script texts): 128. Probe scripts repeat
/// across a cluster's objects (a Deployment's template, its ReplicaSet's, every Pod of it); a few
/// hundred distinct ones cover a namespace's workloads.
pub const PARSE_CACHE_ENTRIES: usize = 128;

/// Default bound of a [`ParseCache`] in bytes of script text kept (the sum of the keys' lengths):
/// 32 KiB. The trees cost about 40 to 45 bytes a byte of text (docs/server.md, "Parse cache"):
/// a full cache about 1 to 1.5 MB.
pub const PARSE_CACHE_TEXT_BYTES: usize = 32 * 1024;

/// A script longer than this fraction of a cache's text bound (1/8: 4 KiB at the default) is
/// parsed for its evaluation but not kept: one large script cannot empty the cache.
const ENTRY_SHARE: usize = 8;

/// A tree-sitter parser and a bounded cache of parses, owned by the caller (the server keeps one
/// per worker thread, `check` and `audit` one for the run) and handed to
/// [`crate::engine::evaluate_cached`] (or [`crate::admission::review_cached`]), which draws the
/// object's parses from it and adds the object's new parses to it. The engine keeps no state of its
/// own: without a cache ([`crate::engine::evaluate`]) every evaluation makes a parser and parses
/// every script (the cold path).
///
/// What is kept: for each script text parsed (the exact text, after kubelet `$(VAR)` expansion),
/// its trees and the parse allowance the parse spent ([`super::MAX_OBJECT_PARSE_AREA`]). A kept
/// parse is used only when the object's allowance left covers what the parse spent, and is
/// charged that: the object then spends and reads exactly what a fresh parse would give. A parse
/// the allowance cut short (or whose error recovery it cut short) depends on that allowance and is
/// never kept. Verdicts, findings and anything derived from env, policy or namespace are not
/// kept: the same script under another container's env gets its own verdict.
///
/// Bounds: at most `entries` parses and `text_bytes` bytes of script text (the defaults
/// [`PARSE_CACHE_ENTRIES`] and [`PARSE_CACHE_TEXT_BYTES`]); a text over an eighth of `text_bytes`
/// is not kept. Adding past a bound evicts the least recently used parses first, so a flood of
/// distinct scripts only turns the cache over: it never grows past its bounds. The trees'
/// memory follows the text's (about 40 to 45 bytes in use a byte of script: docs/server.md).
///
/// `Send`: a server may keep a few and hand one to each evaluation (probegate's keeps a pool of
/// them), or keep one per thread.
pub struct ParseCache {
    /// Made on the first parse (`None` before, or when the grammar does not load).
    parser: Option<Parser>,
    /// Script text → its parse and its last use (a tick of `clock`).
    entries: HashMap<Arc<str>, (Arc<Parsed>, u64)>,
    /// Last use → script text, oldest first (for eviction).
    order: BTreeMap<u64, Arc<str>>,
    /// Bytes of script text kept.
    text_bytes: usize,
    /// Bound in entries.
    max_entries: usize,
    /// Bound in bytes of text.
    max_text_bytes: usize,
    /// Increments on every use.
    clock: u64,
    /// Parses read from here.
    hits: u64,
    /// Parses made while this cache was handed in.
    misses: u64,
    /// Handler summaries ([`super::opaque_script_summary`]: an exec command shown by its
    /// programs only, a function of the command's words alone), by the words. At most
    /// `max_entries` of them, whose words take at most `max_text_bytes`; emptied whole when full.
    summaries: HashMap<Vec<String>, Option<String>>,
    /// Bytes of the words of `summaries`' keys.
    summary_bytes: usize,
}

impl Default for ParseCache {
    fn default() -> Self {
        ParseCache::new()
    }
}

impl std::fmt::Debug for ParseCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParseCache")
            .field("entries", &self.entries.len())
            .field("text_bytes", &self.text_bytes)
            .field("max_entries", &self.max_entries)
            .field("max_text_bytes", &self.max_text_bytes)
            .field("hits", &self.hits)
            .field("misses", &self.misses)
            .field("summaries", &self.summaries.len())
            .finish()
    }
}

impl ParseCache {
    /// An empty cache with the default bounds ([`PARSE_CACHE_ENTRIES`] entries,
    /// [`PARSE_CACHE_TEXT_BYTES`] bytes of text).
    pub fn new() -> ParseCache {
        ParseCache::with_bounds(PARSE_CACHE_ENTRIES, PARSE_CACHE_TEXT_BYTES)
    }

    /// An empty cache keeping at most `entries` parses and `text_bytes` bytes of script text
    /// (0 and 0: a parser only, nothing kept).
    pub fn with_bounds(entries: usize, text_bytes: usize) -> ParseCache {
        ParseCache {
            parser: None,
            entries: HashMap::new(),
            order: BTreeMap::new(),
            text_bytes: 0,
            max_entries: entries,
            max_text_bytes: text_bytes,
            clock: 0,
            hits: 0,
            misses: 0,
            summaries: HashMap::new(),
            summary_bytes: 0,
        }
    }

    /// The cold path's (what [`crate::engine::evaluate`] uses): a parser made on first use, no
    /// parse kept.
    pub fn cold() -> ParseCache {
        ParseCache::with_bounds(0, 0)
    }

    /// An empty cache with this one's bounds (what the caller holds while its cache is in use).
    pub(super) fn emptied(&self) -> ParseCache {
        ParseCache::with_bounds(self.max_entries, self.max_text_bytes)
    }

    /// Parses kept.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no parse is kept.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Bytes of script text kept (at most the `text_bytes` bound).
    pub fn text_bytes(&self) -> usize {
        self.text_bytes
    }

    /// The bounds: (entries, bytes of text).
    pub fn bounds(&self) -> (usize, usize) {
        (self.max_entries, self.max_text_bytes)
    }

    /// Parses read from this cache so far.
    pub fn hits(&self) -> u64 {
        self.hits
    }

    /// Parses made (not found here) while this cache was handed in.
    pub fn misses(&self) -> u64 {
        self.misses
    }

    /// Handler summaries kept (at most the `entries` bound; see [`ParseCache::handler_summary`]).
    pub fn summaries_kept(&self) -> usize {
        self.summaries.len()
    }

    /// Bytes of the exec commands whose handler summaries are kept (at most the `text_bytes` bound).
    pub fn summary_bytes(&self) -> usize {
        self.summary_bytes
    }

    /// [`super::opaque_script_summary`] of `argv` (`exec `bash … if …` (a script, shown by its
    /// programs only)` or `None`): kept from an earlier evaluation, else made, and kept within
    /// the bounds (a command over an eighth of the text bound is not kept; a full set of
    /// summaries is emptied before the next is kept). A function of `argv` alone, so a kept one
    /// is the one a fresh call makes. It redacts the whole command to find what it shows: a
    /// sixth of the MySQL primary's warm evaluation (s26, docs/benchmarks.md).
    pub(crate) fn handler_summary(&mut self, argv: &[String]) -> Option<String> {
        if let Some(summary) = self.summaries.get(argv) {
            return summary.clone();
        }
        let summary = super::opaque_script_summary(argv);
        let len: usize = argv.iter().map(String::len).sum();
        if self.max_entries > 0 && len <= self.max_text_bytes / ENTRY_SHARE {
            if self.summaries.len() >= self.max_entries || self.summary_bytes + len > self.max_text_bytes {
                self.summaries.clear();
                self.summary_bytes = 0;
            }
            self.summaries.insert(argv.to_vec(), summary.clone());
            self.summary_bytes += len;
        }
        summary
    }

    /// The kept parse of `text`, when it spent no more than `area_left` holds (charged to it).
    fn take(&mut self, text: &str, area_left: &Cell<usize>) -> Option<Arc<Parsed>> {
        if self.entries.is_empty() {
            return None;
        }
        self.clock += 1;
        let clock = self.clock;
        let (key, (parsed, used)) =
            self.entries.get_key_value(text).map(|(k, v)| (Arc::clone(k), v.clone()))?;
        let rest = area_left.get().checked_sub(parsed.area)?;
        area_left.set(rest);
        self.order.remove(&used);
        self.order.insert(clock, Arc::clone(&key));
        if let Some(entry) = self.entries.get_mut(&*key) {
            entry.1 = clock;
        }
        self.hits += 1;
        Some(parsed)
    }

    /// Keeps `parsed`, the parse of `text`, if it depends on the text alone and fits the bounds,
    /// evicting the least recently used parses as needed.
    fn keep(&mut self, text: &str, parsed: &Arc<Parsed>) {
        self.misses += 1;
        let len = text.len();
        if self.max_entries == 0
            || len > self.max_text_bytes / ENTRY_SHARE
            || !parsed.depends_on_text_alone()
            || self.entries.contains_key(text)
        {
            return;
        }
        while self.entries.len() >= self.max_entries || self.text_bytes + len > self.max_text_bytes {
            let Some((_, oldest)) = self.order.pop_first() else {
                break;
            };
            self.entries.remove(&*oldest);
            self.text_bytes -= oldest.len();
        }
        self.clock += 1;
        let key: Arc<str> = Arc::from(text);
        self.order.insert(self.clock, Arc::clone(&key));
        self.entries.insert(key, (Arc::clone(parsed), self.clock));
        self.text_bytes += len;
    }
}

/// One object's parser and the parses of its scripts, kept for its other probes: the same script
/// in a liveness, readiness and startup probe, or in every replica's container, is parsed once, by
/// one parser (making a parser and loading the grammar costs about as much as parsing a probe
/// script). Shared by the object's [`super::AnalysisBudget`]s (see
/// [`super::AnalysisBudget::sharing_parses`]), each of which has an owner number here. Draws from
/// and adds to the caller's [`ParseCache`] (`shared`; on the cold path, one that keeps nothing).
pub(crate) struct ObjectParses {
    /// The caller's cache, with the parser, for this evaluation.
    pub(super) shared: ParseCache,
    /// Script text, its parse, and the owner number of the budget it was parsed for.
    parsed: Vec<(String, Arc<Parsed>, usize)>,
    /// Owner numbers handed out so far.
    owners: usize,
    /// Scripts split into commands for the object's rules ([`super::split_commands_in`]).
    splits: Vec<(String, Rc<[Vec<String>]>)>,
}

impl Default for ObjectParses {
    fn default() -> Self {
        ObjectParses { shared: ParseCache::cold(), parsed: Vec::new(), owners: 0, splits: Vec::new() }
    }
}

impl std::fmt::Debug for ObjectParses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectParses")
            .field("parsed", &self.parsed.len())
            .field("owners", &self.owners)
            .field("shared", &self.shared)
            .finish()
    }
}

impl ObjectParses {
    /// A new owner number, for a budget that shares this cache.
    pub(super) fn new_owner(&mut self) -> usize {
        self.owners += 1;
        self.owners
    }

    /// The kept parse of `script` for the budget numbered `owner`. A parse cut short by another
    /// budget's parse allowance is not this budget's: it parses the script within its own.
    pub(super) fn get(&self, script: &str, owner: usize) -> Option<Arc<Parsed>> {
        self.parsed
            .iter()
            .find(|(s, p, o)| {
                s == script && (*o == owner || !matches!(p.gap, Some(ParseGap::OverParseBudget(_))))
            })
            .map(|(_, p, _)| Arc::clone(p))
    }

    /// The parse of `script` for the budget numbered `owner`, whose parse allowance left is
    /// `area_left`: the caller's kept parse when that allowance covers it (charged what the parse
    /// spent, so the object spends what a fresh parse would), else a fresh parse (added to the
    /// caller's cache when it depends on the text alone). `None` when the grammar does not load.
    /// The parse is kept for the object's other probes either way.
    pub(super) fn parse(
        &mut self,
        script: &str,
        owner: usize,
        area_left: &Cell<usize>,
    ) -> Option<Arc<Parsed>> {
        let parsed = match self.shared.take(script, area_left) {
            Some(parsed) => parsed,
            None => {
                if self.shared.parser.is_none() {
                    self.shared.parser = new_parser();
                }
                let parser = self.shared.parser.as_mut()?;
                let parsed = Arc::new(super::parse::parse_script(parser, script, area_left));
                self.shared.keep(script, &parsed);
                parsed
            }
        };
        self.keep(script, &parsed, owner);
        Some(parsed)
    }

    /// Keeps `parsed`, the parse of `script` for the budget numbered `owner` (at most
    /// [`MAX_KEPT_TREES`] are kept).
    fn keep(&mut self, script: &str, parsed: &Arc<Parsed>, owner: usize) {
        if self.parsed.len() < MAX_KEPT_TREES {
            self.parsed.push((script.to_string(), Arc::clone(parsed), owner));
        }
    }

    /// Whether every parse made so far is kept and none was cut short by a parse allowance (so
    /// every later parse of a script parsed so far is read from here, for any owner).
    pub(super) fn all_kept_whole(&self) -> bool {
        self.parsed.len() < MAX_KEPT_TREES
            && !self.parsed.iter().any(|(_, p, _)| matches!(p.gap, Some(ParseGap::OverParseBudget(_))))
    }

    /// The commands of `script` split earlier for the object's rules.
    pub(super) fn split(&self, script: &str) -> Option<Rc<[Vec<String>]>> {
        self.splits.iter().find(|(s, _)| s == script).map(|(_, c)| Rc::clone(c))
    }

    /// Whether the commands of `script` are kept already.
    pub(super) fn has_split(&self, script: &str) -> bool {
        self.splits.iter().any(|(s, _)| s == script)
    }

    /// Keeps the commands of `script` for the object's other rules (at most [`MAX_KEPT_TREES`]).
    pub(super) fn keep_split(&mut self, script: &str, commands: &Rc<[Vec<String>]>) {
        if self.splits.len() < MAX_KEPT_TREES {
            self.splits.push((script.to_string(), Rc::clone(commands)));
        }
    }
}

#[cfg(test)]
mod parse_cache_tests {
    #[test]
    fn a_parse_cache_can_move_between_threads() {
        fn send<T: Send>() {}
        send::<super::ParseCache>();
    }
}
