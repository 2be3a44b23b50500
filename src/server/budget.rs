//! The body budgets ([`super::SMALL_BODY_BUDGET_BYTES`], [`super::LARGE_BODY_BUDGET_BYTES`]): the
//! bytes of request bodies being received and evaluated at once, and who may take a stalled
//! body's share.
//!
//! A body holds its share from the moment it is admitted until its answer is made. A client that
//! declares a body and then sends part of it and stalls keeps its share until the request bound
//! ([`super::REQUEST_TIMEOUT`]) answers it 408: eight HTTP/2 connections of 64 such streams of
//! 64 KiB filled the small budget, and an ordinary review arriving behind them waited up to 4 s,
//! past which it was answered 408, under `failurePolicy: Ignore` an admission bypass (s21 break-it
//! pass). With a `stall_after` bound, a request that has to wait for room takes it from the body
//! that has been arriving for longest, once that one has been arriving for `stall_after`: the
//! stalled request is answered 408 at once ([`Share::evicted`]), its share goes to the requests
//! waiting. A body read to its end is never taken from: it is being evaluated.

use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::body::{Body, Bytes};
use http_body::{Frame, SizeHint};
use tokio::sync::{AcquireError, Notify, Semaphore, SemaphorePermit, TryAcquireError};
use tokio::time::Instant;

/// How long a small body (up to [`super::INLINE_BODY_BYTES`]) may go on arriving while other
/// requests wait for room in its budget: 1 s. Past it, a request that waits takes its share (the
/// stalled one is answered 408). A small body fits in one HTTP/2 stream window
/// ([`super::H2_STREAM_WINDOW_BYTES`], 256 KiB) and the API server writes a review whole with its
/// headers, so even over a 20 ms round trip it arrives within tens of milliseconds; a client
/// still sending one after a second is stalled or trickling. The bound only applies while others
/// wait: without contention a slow body keeps its share until the request bound.
pub const SMALL_BODY_STALL_AFTER: Duration = Duration::from_secs(1);

/// A request that waits for room checks again for stalled bodies no sooner than this: 20 ms.
const RECHECK_AT_LEAST: Duration = Duration::from_millis(20);

/// A body's progress: arriving, read to its end, or taken from (answered 408).
const ARRIVING: u8 = 0;
const RECEIVED: u8 = 1;
const EVICTED: u8 = 2;

/// Bytes of request bodies that may be received and evaluated at once, and the bodies holding
/// them (see the module's documentation).
pub struct BodyBudget {
    permits: Semaphore,
    /// Every body holding a share (dead entries are pruned as the list grows).
    holders: Mutex<Vec<Weak<Arrival>>>,
    /// A body still arriving after this long while others wait loses its share (`None`: never).
    stall_after: Option<Duration>,
}

/// One body holding a share.
struct Arrival {
    /// When its share was granted.
    since: Instant,
    /// Its share, bytes.
    size: usize,
    /// [`ARRIVING`], [`RECEIVED`] or [`EVICTED`]; it leaves [`ARRIVING`] once.
    state: AtomicU8,
    /// Notified once, when its share is taken.
    evicted: Notify,
}

/// A body's share of a [`BodyBudget`], given back when dropped.
pub struct Share<'a> {
    _permit: SemaphorePermit<'a>,
    arrival: Arc<Arrival>,
}

impl BodyBudget {
    /// `bytes` of bodies at once; a body still arriving `stall_after` after it got its share may
    /// lose it to a request that waits (`None`: never).
    pub fn new(bytes: usize, stall_after: Option<Duration>) -> BodyBudget {
        BodyBudget { permits: Semaphore::new(bytes), holders: Mutex::new(Vec::new()), stall_after }
    }

    /// Bytes not held by any body.
    pub fn available(&self) -> usize {
        self.permits.available_permits()
    }

    /// A share of `size` bytes if there is room now.
    pub fn try_acquire(&self, size: u32) -> Result<Share<'_>, TryAcquireError> {
        self.permits.try_acquire_many(size).map(|permit| self.share(permit, size))
    }

    /// A share of `size` bytes, waiting for room (in arrival order); while it waits, bodies that
    /// have been arriving for `stall_after` lose their shares to it. An error once closed.
    pub async fn acquire(&self, size: u32) -> Result<Share<'_>, AcquireError> {
        let acquire = self.permits.acquire_many(size);
        tokio::pin!(acquire);
        let Some(stall_after) = self.stall_after else {
            return acquire.await.map(|permit| self.share(permit, size));
        };
        let mut recheck = Duration::ZERO;
        loop {
            tokio::select! {
                biased;
                permit = &mut acquire => return permit.map(|permit| self.share(permit, size)),
                () = tokio::time::sleep(recheck) => {}
            }
            recheck = self.evict_stalled(size as usize, stall_after, Instant::now());
        }
    }

    fn share<'a>(&'a self, permit: SemaphorePermit<'a>, size: u32) -> Share<'a> {
        let arrival = Arc::new(Arrival {
            since: Instant::now(),
            size: size as usize,
            state: AtomicU8::new(ARRIVING),
            evicted: Notify::new(),
        });
        if self.stall_after.is_some() {
            let mut holders = self.holders.lock().unwrap_or_else(|e| e.into_inner());
            if holders.len() >= holders.capacity() {
                holders.retain(|w| w.strong_count() > 0);
            }
            holders.push(Arc::downgrade(&arrival));
        }
        Share { _permit: permit, arrival }
    }

    /// Takes the shares of the bodies arriving for longest, each arriving for at least
    /// `stall_after`, until `needed` bytes were taken; returns how long until the next body
    /// still arriving would be old enough (at least [`RECHECK_AT_LEAST`]).
    fn evict_stalled(&self, needed: usize, stall_after: Duration, now: Instant) -> Duration {
        let mut holders = self.holders.lock().unwrap_or_else(|e| e.into_inner());
        holders.retain(|w| w.strong_count() > 0);
        // In the order their shares were granted: oldest first.
        let arriving: Vec<Arc<Arrival>> = holders
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|a| a.state.load(Ordering::Acquire) == ARRIVING)
            .collect();
        drop(holders);
        let mut taken = 0;
        let mut next = stall_after;
        for arrival in arriving {
            if taken >= needed {
                next = RECHECK_AT_LEAST;
                break;
            }
            let age = now.saturating_duration_since(arrival.since);
            if age < stall_after {
                next = stall_after - age;
                break;
            }
            if arrival.state.compare_exchange(ARRIVING, EVICTED, Ordering::AcqRel, Ordering::Acquire).is_ok()
            {
                arrival.evicted.notify_one();
                taken += arrival.size;
            }
        }
        next.max(RECHECK_AT_LEAST)
    }
}

impl Share<'_> {
    /// `request` with its body watched: once read to its end, this share is never taken.
    pub fn watch(&self, request: axum::extract::Request) -> axum::extract::Request {
        let arrival = Arc::clone(&self.arrival);
        request.map(|inner| Body::new(Watched { inner, arrival }))
    }

    /// Completes when this share was taken by a request that waited (the body was still
    /// arriving after the budget's `stall_after`); never otherwise.
    pub async fn evicted(&self) {
        self.arrival.evicted.notified().await;
    }
}

/// A request body that marks its [`Arrival`] received at its end.
struct Watched {
    inner: Body,
    arrival: Arc<Arrival>,
}

impl http_body::Body for Watched {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let frame = ready!(Pin::new(&mut self.inner).poll_frame(cx));
        let ended = match &frame {
            None => true,
            Some(Ok(_)) => self.inner.is_end_stream(),
            Some(Err(_)) => false,
        };
        if ended {
            // Fails only when the share was taken first: the request is being answered 408.
            let _ =
                self.arrival.state.compare_exchange(ARRIVING, RECEIVED, Ordering::AcqRel, Ordering::Acquire);
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On tokio's paused clock: ages are exact whatever the machine's load.
    #[tokio::test(start_paused = true)]
    async fn a_waiting_request_takes_the_share_of_the_body_arriving_for_longest_once_it_is_stalled() {
        let budget = BodyBudget::new(300, Some(Duration::from_secs(1)));
        let old = budget.try_acquire(100).unwrap();
        tokio::time::advance(Duration::from_millis(500)).await;
        let newer = budget.try_acquire(100).unwrap();
        let received = budget.try_acquire(100).unwrap();
        // Read to its end: never taken.
        let request = received.watch(axum::extract::Request::new(Body::from("{}")));
        let _ = axum::body::to_bytes(request.into_body(), 10).await.unwrap();
        let started = Instant::now();
        let waiter = budget.acquire(100);
        tokio::pin!(waiter);
        // Nothing is old enough yet: the waiter waits until the oldest body has been arriving 1 s,
        // then takes its share (answered at once), not the newer one's.
        let got = tokio::select! {
            share = &mut waiter => share.unwrap(),
            () = old.evicted() => { drop(old); waiter.await.unwrap() }
        };
        assert_eq!(started.elapsed(), Duration::from_millis(500));
        assert_eq!(newer.arrival.state.load(Ordering::Acquire), ARRIVING);
        assert_eq!(received.arrival.state.load(Ordering::Acquire), RECEIVED);
        assert_eq!(budget.available(), 0);
        drop((got, newer, received));
        assert_eq!(budget.available(), 300);
    }

    #[tokio::test(start_paused = true)]
    async fn without_a_stall_bound_or_with_room_no_share_is_taken() {
        let budget = BodyBudget::new(100, None);
        let held = budget.try_acquire(100).unwrap();
        tokio::time::advance(Duration::from_secs(60)).await;
        let waiter = budget.acquire(1);
        tokio::pin!(waiter);
        let waited = tokio::time::timeout(Duration::from_secs(10), &mut waiter).await;
        assert!(waited.is_err(), "a share was taken without a stall bound");
        assert_eq!(held.arrival.state.load(Ordering::Acquire), ARRIVING);
        // With a bound, as long as there is room nothing is taken.
        let budget = BodyBudget::new(200, Some(Duration::from_secs(1)));
        let held = budget.try_acquire(100).unwrap();
        tokio::time::advance(Duration::from_secs(60)).await;
        let _other = budget.acquire(100).await.unwrap();
        assert_eq!(held.arrival.state.load(Ordering::Acquire), ARRIVING);
    }

    #[test]
    fn enough_shares_are_taken_for_the_waiting_body_oldest_first() {
        let budget = BodyBudget::new(1000, Some(Duration::from_secs(1)));
        let rt =
            tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build().unwrap();
        rt.block_on(async {
            let shares: Vec<_> = (0..5).map(|_| budget.try_acquire(100).unwrap()).collect();
            let now = Instant::now() + Duration::from_secs(2);
            // 250 bytes needed: the three oldest (300 bytes) are taken.
            assert_eq!(budget.evict_stalled(250, Duration::from_secs(1), now), RECHECK_AT_LEAST);
            let evicted =
                shares.iter().filter(|s| s.arrival.state.load(Ordering::Acquire) == EVICTED).count();
            assert_eq!(evicted, 3);
        });
    }
}
