//! One object's analysis budget ([`AnalysisBudget`]): the bytes of shell text
//! ([`MAX_OBJECT_ANALYSIS_BYTES`]), the work units ([`MAX_OBJECT_WORK_UNITS`]) and the parse area
//! ([`MAX_OBJECT_PARSE_AREA`]) its exec probes may spend together, and the parses they share.

use super::parse_cache::{ObjectParses, ParseCache};
use super::{MAX_OBJECT_ANALYSIS_BYTES, MAX_OBJECT_PARSE_AREA, MAX_OBJECT_WORK_UNITS};

/// What is left of [`MAX_OBJECT_ANALYSIS_BYTES`] (and [`MAX_OBJECT_WORK_UNITS`]) for one object: one per evaluation, shared by
/// the [`analyze`] calls for its containers through [`Options::budget`].
#[derive(Debug)]
pub struct AnalysisBudget {
    pub(super) left: std::cell::Cell<usize>,
    /// Work units left (see [`MAX_OBJECT_WORK_UNITS`]).
    pub(super) units: std::cell::Cell<usize>,
    /// Parse area left (see [`MAX_OBJECT_PARSE_AREA`]).
    pub(super) parse_area_left: std::cell::Cell<usize>,
    /// The object's parser and the scripts it parsed so far, for its other probes (shared with
    /// the budgets made by [`AnalysisBudget::sharing_parses`]).
    pub(super) parses: std::rc::Rc<std::cell::RefCell<ObjectParses>>,
    /// This budget's owner number in `parses`.
    pub(super) parse_owner: usize,
}

impl Default for AnalysisBudget {
    fn default() -> Self {
        AnalysisBudget::new(MAX_OBJECT_ANALYSIS_BYTES)
    }
}

impl AnalysisBudget {
    /// A budget of `bytes` of shell text.
    pub fn new(bytes: usize) -> AnalysisBudget {
        AnalysisBudget {
            left: std::cell::Cell::new(bytes),
            units: std::cell::Cell::new(MAX_OBJECT_WORK_UNITS),
            parse_area_left: std::cell::Cell::new(MAX_OBJECT_PARSE_AREA),
            parses: std::rc::Rc::default(),
            parse_owner: 0,
        }
    }

    /// A budget of [`MAX_OBJECT_ANALYSIS_BYTES`] (as [`AnalysisBudget::default`]) whose parses are
    /// drawn from and added to `cache`: its parser and parses move into the budget (the caller's
    /// `cache` is left empty, with its bounds) until [`AnalysisBudget::give_back`] returns them.
    /// A panic in between leaves the caller an empty cache, never a broken one.
    pub fn drawing_on(cache: &mut ParseCache) -> AnalysisBudget {
        let budget = AnalysisBudget::default();
        let empty = cache.emptied();
        budget.parses.borrow_mut().shared = std::mem::replace(cache, empty);
        budget
    }

    /// Returns the parser and the parses (the ones drawn, and the new ones kept) to `cache`, after
    /// the object's evaluation (see [`AnalysisBudget::drawing_on`]).
    pub fn give_back(&self, cache: &mut ParseCache) {
        let mut parses = self.parses.borrow_mut();
        let empty = parses.shared.emptied();
        *cache = std::mem::replace(&mut parses.shared, empty);
    }

    /// A budget of its own (bytes, work units and parse allowance as [`AnalysisBudget::default`])
    /// that shares this one's parser and parsed scripts: the same object's readiness commands
    /// are analysed on their own budget, but a script its liveness probe also runs is not parsed
    /// twice. (A parse this budget's allowance cut short is not reused by the other.)
    pub fn sharing_parses(&self) -> AnalysisBudget {
        let parse_owner = self.parses.borrow_mut().new_owner();
        AnalysisBudget { parses: std::rc::Rc::clone(&self.parses), parse_owner, ..AnalysisBudget::default() }
    }

    /// [`super::opaque_script_summary`] of an exec command's words, read from the caller's
    /// [`super::ParseCache`] when an earlier evaluation made it ([`super::ParseCache::handler_summary`];
    /// the cold path's cache keeps none).
    pub(crate) fn handler_summary(&self, argv: &[String]) -> Option<String> {
        self.parses.borrow_mut().shared.handler_summary(argv)
    }

    /// Takes `n` work units; false (and the whole budget spent) when fewer than `n` remain.
    pub(super) fn take_units(&self, n: usize) -> bool {
        match self.units.get().checked_sub(n) {
            Some(left) => {
                self.units.set(left);
                true
            }
            None => {
                self.units.set(0);
                self.left.set(0);
                false
            }
        }
    }

    /// Takes `n` bytes; false (and nothing left) when fewer than `n` remain.
    pub(super) fn take(&self, n: usize) -> bool {
        match self.left.get().checked_sub(n) {
            Some(left) => {
                self.left.set(left);
                true
            }
            None => {
                self.left.set(0);
                false
            }
        }
    }

    /// True once the budget is spent.
    pub fn is_spent(&self) -> bool {
        self.left.get() == 0
    }

    /// What is left now (bytes, work units), to measure one analysis with [`AnalysisBudget::spent_since`].
    pub(crate) fn mark(&self) -> BudgetMark {
        BudgetMark { bytes: self.left.get(), units: self.units.get() }
    }

    /// What the analyses since `mark` spent, when their outcome did not depend on this budget: it
    /// is not spent, and every script they parsed is kept, parsed whole by the parse allowance
    /// (so an analysis of the same command for another budget sharing the parses reads the same
    /// trees without parsing). `None` otherwise.
    pub(crate) fn spent_since(&self, mark: BudgetMark) -> Option<BudgetMark> {
        let parses = self.parses.borrow();
        if self.is_spent() || self.units.get() == 0 || !parses.all_kept_whole() {
            return None;
        }
        Some(BudgetMark {
            bytes: mark.bytes.checked_sub(self.left.get())?,
            units: mark.units.checked_sub(self.units.get())?,
        })
    }

    /// Charges this budget `spent` (from [`AnalysisBudget::spent_since`]) as the analysis that
    /// spent it would, when that cannot run it out: true if charged. An analysis of the same
    /// command in the same container, whose outcome did not depend on its budget, then has the
    /// same outcome for this budget (the analysis is a function of the command, the container and
    /// the budget, and the budget only matters once it runs out).
    pub(crate) fn charge(&self, spent: BudgetMark) -> bool {
        let (bytes, units) = (self.left.get(), self.units.get());
        if bytes <= spent.bytes || units <= spent.units || !self.parses.borrow().all_kept_whole() {
            return false;
        }
        self.left.set(bytes - spent.bytes);
        self.units.set(units - spent.units);
        true
    }
}

#[cfg(test)]
mod budget_tests {
    use super::*;

    #[test]
    fn a_budget_is_charged_what_another_spent_only_when_it_cannot_run_out() {
        let object = AnalysisBudget::new(1000);
        let mark = object.mark();
        assert!(object.take(300) && object.take_units(7));
        let spent = object.spent_since(mark).unwrap();
        assert_eq!(spent, BudgetMark { bytes: 300, units: 7 });
        let other = object.sharing_parses();
        assert!(other.charge(spent));
        assert_eq!(
            other.mark(),
            BudgetMark { bytes: MAX_OBJECT_ANALYSIS_BYTES - 300, units: MAX_OBJECT_WORK_UNITS - 7 }
        );
        // One that could run out analyses again instead (it would stop where the other did not).
        let small = AnalysisBudget::new(300);
        assert!(!small.charge(spent));
        assert_eq!(small.mark().bytes, 300);
        // Nothing is kept from an analysis that spent its budget.
        let spent_out = AnalysisBudget::new(10);
        let mark = spent_out.mark();
        assert!(!spent_out.take(11));
        assert_eq!(spent_out.spent_since(mark), None);
    }
}

/// An amount of an [`AnalysisBudget`]: bytes and work units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BudgetMark {
    bytes: usize,
    pub(super) units: usize,
}
