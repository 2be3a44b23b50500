//! What the exit-status walk (`discarded_at`) keeps between the commands of one script text, so
//! that its cost is linear in the text (issue #9, "bounded cost by construction"):
//! - the path from the root to the last command walked: the next command's path is found from
//!   it (up to the nearest node holding both, down to the command), not from the root again;
//! - what the walk concluded from each node it passed and the state it passed it in: a later
//!   command whose walk reaches that node in the same state stops there with the same answer.
//!
//! A long `a && b && c ...` or `a || b || c ...` is a left-nested `list` per operator: each
//! element's walk went up through the lists above it, judging each right side again, and each
//! path was found from the root; 320 `|| false` (2.9 KB) spent the object's work units and left
//! the check unjudged, admitted (s15 break-it, #9). Each element's walk now stops at the second
//! list above it, and each path costs the nodes it leaves and enters.

use std::cell::RefCell;
use std::collections::HashMap;

use tree_sitter::Node;

use super::super::shell::Walk;
use super::Funcs;

/// What the walk found from a node: why the status is discarded and whose status it is.
pub(super) type Found<'t> = Option<(&'static str, Node<'t>)>;

/// The walk's state at a node: the node's id, and errexit, pipefail, `exempt`, `negated`,
/// `sense_lost` (`discarded_at`'s variables), one bit each.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct State {
    tree: usize,
    node: usize,
    flags: u8,
}

impl State {
    /// The state at `at` (in the walk's current tree) with these flags.
    pub(super) fn new(walk: &Walk<'_>, at: Node<'_>, flags: [bool; 5]) -> State {
        let flags = flags.iter().enumerate().fold(0u8, |acc, (i, on)| acc | (u8::from(*on) << i));
        State { tree: walk.tree.get(), node: at.id(), flags }
    }
}

/// One script text's path and answers (`Walk::status_cache`).
#[derive(Default)]
pub(in crate::engine::exec) struct WalkCache<'t> {
    /// The current tree's index and the nodes from its root down to the last command walked.
    path: RefCell<(usize, Vec<Node<'t>>)>,
    /// What the walk found from each state, with the functions it judged by (`functions_at`,
    /// the same for every command of a top-level statement).
    found: RefCell<HashMap<State, Vec<(Funcs, Found<'t>)>>>,
    /// [`super::sets_errexit`] of the text, made when first asked (once, not once per command).
    sets_errexit: std::cell::OnceCell<bool>,
}

impl<'t> WalkCache<'t> {
    /// Whether the walk's text `src` may turn errexit on ([`super::sets_errexit`]), read once.
    pub(in crate::engine::exec) fn sets_errexit(&self, src: &str) -> bool {
        *self.sets_errexit.get_or_init(|| super::sets_errexit(src))
    }

    /// What a walk found from `state` with the functions `funcs`, if one passed it.
    pub(super) fn found(&self, state: &State, funcs: &Funcs) -> Option<Found<'t>> {
        let found = self.found.borrow();
        found.get(state)?.iter().find(|(f, _)| f == funcs).map(|(_, found)| *found)
    }

    /// Keeps `found` as what the walk finds from each of `states` with `funcs`.
    pub(super) fn keep(&self, states: Vec<State>, funcs: &Funcs, found: Found<'t>) {
        let mut map = self.found.borrow_mut();
        for state in states {
            let row = map.entry(state).or_default();
            if !row.iter().any(|(f, _)| f == funcs) {
                row.push((funcs.clone(), found));
            }
        }
    }

    /// The nodes from `root` (the walk's current tree's) down to `n`'s parent, found from the
    /// last path, and how many nodes were left and entered to find it (the work done). Give it
    /// back with [`WalkCache::put_path`].
    pub(super) fn path_to(&self, walk: &Walk<'_>, root: Node<'t>, n: Node<'t>) -> (Vec<Node<'t>>, usize) {
        let (tree, mut path) = std::mem::take(&mut *self.path.borrow_mut());
        if tree != walk.tree.get() || path.first() != Some(&root) {
            path.clear();
        }
        let mut steps = 0;
        // Up to the nearest node on it that holds `n` (by its bytes, then asked of the tree).
        while let Some(last) = path.last() {
            let holds = *last != n
                && last.start_byte() <= n.start_byte()
                && n.end_byte() <= last.end_byte()
                && last.child_with_descendant(n).is_some();
            if holds {
                break;
            }
            path.pop();
            steps += 1;
        }
        let mut at = match path.pop() {
            Some(last) => last,
            None => root,
        };
        // Down from it, as `tree::path_to` goes down from the root.
        while at != n {
            path.push(at);
            steps += 1;
            match at.child_with_descendant(n) {
                Some(c) if c != at => at = c,
                _ => break,
            }
        }
        (path, steps)
    }

    /// Keeps `path` (from [`WalkCache::path_to`]) for the next command's.
    pub(super) fn put_path(&self, walk: &Walk<'_>, path: Vec<Node<'t>>) {
        *self.path.borrow_mut() = (walk.tree.get(), path);
    }
}
