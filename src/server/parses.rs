//! The server's parse caches ([`ParseCaches`]): a few [`ParseCache`]s, one handed to each
//! evaluation (docs/server.md, "Parse cache"). The engine keeps no state; the server owns these.

use std::sync::Mutex;

use crate::engine::ParseCache;

/// Parse caches the server keeps: 8, more than evaluations run at once in the usual case
/// ([`super::MAX_BLOCKING_EVALUATIONS`] on the blocking pool, and the inline reviews on the async
/// workers, which have no exec handler and so parse nothing). An evaluation that finds none free
/// runs on the cold path (a parser of its own, nothing kept). With the default bounds a full
/// cache holds about 1 to 1.5 MB: all of them at most about 12 MB.
pub const PARSE_CACHES: usize = 8;

/// The free caches.
#[derive(Debug)]
pub struct ParseCaches {
    free: Mutex<Vec<ParseCache>>,
}

impl Default for ParseCaches {
    fn default() -> Self {
        ParseCaches { free: Mutex::new((0..PARSE_CACHES).map(|_| ParseCache::new()).collect()) }
    }
}

impl ParseCaches {
    /// Runs `f` with a free cache (a cold one when none is free), then frees it. A cache whose
    /// evaluation panicked comes back emptied (see [`crate::engine::evaluate_cached`]).
    pub fn with<R>(&self, f: impl FnOnce(&mut ParseCache) -> R) -> R {
        let taken = self.free.lock().unwrap_or_else(std::sync::PoisonError::into_inner).pop();
        let mut held = Held { cache: taken, caches: self };
        match held.cache.as_mut() {
            Some(cache) => f(cache),
            None => f(&mut ParseCache::cold()),
        }
    }

    /// Caches free now.
    pub fn free(&self) -> usize {
        self.free.lock().unwrap_or_else(std::sync::PoisonError::into_inner).len()
    }
}

/// A cache taken from `caches`, given back when dropped (after its evaluation, or when it
/// panicked).
struct Held<'a> {
    cache: Option<ParseCache>,
    caches: &'a ParseCaches,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        if let Some(cache) = self.cache.take() {
            self.caches.free.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(cache);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cache_is_given_back_after_its_evaluation_even_one_that_panicked() {
        let caches = ParseCaches::default();
        assert_eq!(caches.free(), PARSE_CACHES);
        caches.with(|c| {
            assert_eq!(caches.free(), PARSE_CACHES - 1);
            assert_ne!(c.bounds(), (0, 0));
        });
        assert_eq!(caches.free(), PARSE_CACHES);
        let panicked =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| caches.with(|_| panic!("bug"))));
        assert!(panicked.is_err());
        assert_eq!(caches.free(), PARSE_CACHES);
        // None free: the evaluation gets a cold one, and the pool does not grow.
        let all: Vec<_> = (0..PARSE_CACHES).map(|_| caches.free.lock().unwrap().pop().unwrap()).collect();
        caches.with(|c| assert_eq!(c.bounds(), (0, 0)));
        assert_eq!(caches.free(), 0);
        caches.free.lock().unwrap().extend(all);
    }
}
