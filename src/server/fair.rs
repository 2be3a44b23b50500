//! Places shared fairly between connections: the requests waiting for a place are served one
//! connection after another (round robin), each connection's own in arrival order.
//!
//! A plain semaphore serves its waiters in arrival order: one client that keeps thousands of
//! reviews waiting (64 HTTP/2 connections of 64 streams) puts every review that arrives after them
//! at the back of its queue. In the s22 break-it pass, 4 of 9 small reviews sent on another
//! connection during such a flood met the 4 s request bound (408: under `failurePolicy: Ignore`,
//! admitted unchecked) while 2,751 reviews waited ahead of them. Here a review waits for at most
//! one place per connection that has reviews waiting, however many each of them has.
//!
//! Connections are told apart by the peer's address and port ([`super::Peer`]): the API server's
//! requests come from a few addresses, over connections of their own.
//!
//! At most `max_waiting` requests wait (all connections together). One more refuses the newest
//! waiting request of the connection with the most waiting, when that connection has more
//! waiting than the new request's own; else the new request itself is refused ([`Busy`], answered
//! 503 at once). A waiting review holds its body in memory until it is evaluated, and those past
//! what the places can evaluate within the request bound would only be answered 408 later; a
//! client with a backlog loses its own newest reviews first, never another connection's turn.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

/// Who a waiting request belongs to: its connection (the peer's address and port), or `None` for
/// a request whose connection is unknown (they share one turn).
pub type Key = Option<SocketAddr>;

/// `permits` places, handed to waiting requests one connection at a time (see the module's
/// documentation).
pub struct FairPlaces {
    state: Mutex<State>,
}

struct State {
    /// Places not held and not promised to a waiter.
    free: usize,
    /// Connections with requests waiting, in the order of their next turn.
    turns: VecDeque<Key>,
    /// Each connection's waiting requests, oldest first, each told `Ok` when given its place
    /// and [`Busy`] when refused; a sender whose request gave up is skipped (and pruned when that
    /// request goes).
    waiting: HashMap<Key, VecDeque<oneshot::Sender<Result<(), Busy>>>>,
    /// Requests waiting, all connections together.
    count: usize,
    /// Most requests waiting.
    max_waiting: usize,
}

/// A request refused a place: `max_waiting` requests already wait, and its connection has as
/// many waiting as any other (less one), or it was the newest of the connection with the most.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub struct Busy {
    /// Requests of the refused request's connection still waiting when it was refused (not
    /// counting itself): what its answer says (until s27 it said "the most of them from this
    /// connection" to a connection that had none waiting).
    pub from_its_connection: usize,
}

/// A place, given back (to the next connection's oldest waiting request) when dropped.
pub struct Place {
    places: Arc<FairPlaces>,
}

impl FairPlaces {
    /// `permits` places, with at most `max_waiting` requests waiting for one.
    pub fn new(permits: usize, max_waiting: usize) -> Arc<FairPlaces> {
        Arc::new(FairPlaces {
            state: Mutex::new(State {
                free: permits,
                turns: VecDeque::new(),
                waiting: HashMap::new(),
                count: 0,
                max_waiting,
            }),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Places neither held nor promised.
    pub fn available(&self) -> usize {
        self.lock().free
    }

    /// Requests waiting for a place, all connections together (those that gave up included until
    /// they are pruned).
    pub fn waiting(&self) -> usize {
        self.lock().count
    }

    /// A place for a request of connection `key`: at once when one is free and nobody waits,
    /// else when the turns come round to `key` and its older requests have had theirs.
    ///
    /// # Errors
    /// [`Busy`] when `max_waiting` requests wait and none can be refused for it (see the
    /// module's documentation), at once or later (refused for a connection with fewer waiting).
    pub async fn acquire(self: &Arc<Self>, key: Key) -> Result<Place, Busy> {
        let receiver = {
            let mut guard = self.lock();
            let state = &mut *guard;
            if state.free > 0 && state.turns.is_empty() {
                state.free -= 1;
                return Ok(Place { places: Arc::clone(self) });
            }
            if state.count >= state.max_waiting && !state.refuse_for(key) {
                let own = state.waiting.get(&key).map_or(0, VecDeque::len);
                return Err(Busy { from_its_connection: own });
            }
            let (sender, receiver) = oneshot::channel();
            let queue = state.waiting.entry(key).or_default();
            if queue.is_empty() {
                state.turns.push_back(key);
            }
            queue.push_back(sender);
            state.count += 1;
            receiver
        };
        let mut waiter = Waiter { places: Arc::clone(self), key, receiver: Some(receiver) };
        let promised = match waiter.receiver.as_mut() {
            // The sender is kept until it is used (or its entry pruned, which only this waiter
            // does): this completes with a place or a refusal.
            Some(receiver) => receiver.await.unwrap_or(Err(Busy { from_its_connection: 0 })),
            None => Err(Busy { from_its_connection: 0 }),
        };
        // Answered: nothing for `Waiter` to give back or prune.
        waiter.receiver = None;
        promised.map(|()| Place { places: Arc::clone(self) })
    }

    /// Gives a place back: to the oldest request of the connection whose turn is next, else to
    /// the free places.
    fn release(&self) {
        let mut guard = self.lock();
        let state = &mut *guard;
        loop {
            let Some(key) = state.turns.pop_front() else {
                state.free += 1;
                return;
            };
            let Some(queue) = state.waiting.get_mut(&key) else { continue };
            let next = queue.pop_front();
            if queue.is_empty() {
                state.waiting.remove(&key);
            } else {
                state.turns.push_back(key);
            }
            if next.is_some() {
                state.count -= 1;
            }
            if next.is_some_and(|sender| sender.send(Ok(())).is_ok()) {
                return;
            }
        }
    }
}

impl State {
    /// Makes room for one request of `key` at the cap: refuses the newest waiting request of the
    /// connection with the most waiting, if it has more than `key`'s own (+1 for the newcomer).
    /// Whether room was made.
    fn refuse_for(&mut self, key: Key) -> bool {
        let own = self.waiting.get(&key).map_or(0, VecDeque::len);
        let Some((&longest, queue)) = self.waiting.iter_mut().max_by_key(|(_, q)| q.len()) else {
            return false;
        };
        if queue.len() <= own + 1 {
            return false;
        }
        if let Some(newest) = queue.pop_back() {
            // A request that gave up already is refused all the same: one fewer waits.
            let _ = newest.send(Err(Busy { from_its_connection: queue.len() }));
            self.count -= 1;
        }
        if queue.is_empty() {
            self.waiting.remove(&longest);
            self.turns.retain(|k| *k != longest);
        }
        true
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        self.places.release();
    }
}

/// A request waiting for a place; if it gives up (its future is dropped: the request bound, a
/// reset stream), a place promised to it in the meantime is given back, and its entry pruned.
struct Waiter {
    places: Arc<FairPlaces>,
    key: Key,
    receiver: Option<oneshot::Receiver<Result<(), Busy>>>,
}

impl Drop for Waiter {
    fn drop(&mut self) {
        let Some(mut receiver) = self.receiver.take() else { return };
        receiver.close();
        if receiver.try_recv() == Ok(Ok(())) {
            // Promised after all: pass it on.
            self.places.release();
            return;
        }
        let mut guard = self.places.lock();
        let state = &mut *guard;
        if let Some(queue) = state.waiting.get_mut(&self.key) {
            let before = queue.len();
            queue.retain(|sender| !sender.is_closed());
            state.count -= before - queue.len();
            if queue.is_empty() {
                state.waiting.remove(&self.key);
                let key = self.key;
                state.turns.retain(|k| *k != key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn peer(port: u16) -> Key {
        Some(SocketAddr::from(([127, 0, 0, 1], port)))
    }

    /// Waits until `n` requests are queued.
    async fn queued(places: &FairPlaces, n: usize) {
        while places.waiting() < n {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn waiting_requests_are_served_one_connection_after_another() {
        let places = FairPlaces::new(1, 100);
        let held = places.acquire(peer(1)).await.unwrap();
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        // Connection 1 queues five requests, then connections 2 and 3 one each.
        for (i, port) in [1, 1, 1, 1, 1, 2, 3].into_iter().enumerate() {
            let (shared, order) = (Arc::clone(&places), Arc::clone(&order));
            tasks.push(tokio::spawn(async move {
                let _place = shared.acquire(peer(port)).await.unwrap();
                order.lock().unwrap().push((port, i));
            }));
            queued(&places, i + 1).await;
        }
        drop(held);
        for t in tasks {
            t.await.unwrap();
        }
        // Round robin between the connections, each connection's own in arrival order.
        assert_eq!(*order.lock().unwrap(), vec![(1, 0), (2, 5), (3, 6), (1, 1), (1, 2), (1, 3), (1, 4)]);
        assert_eq!(places.available(), 1);
        assert_eq!(places.waiting(), 0);
    }

    #[tokio::test]
    async fn a_request_that_gives_up_neither_keeps_nor_loses_a_place() {
        let places = FairPlaces::new(1, 100);
        let held = places.acquire(peer(1)).await.unwrap();
        // Gives up while waiting: its entry is pruned.
        let gave_up = tokio::time::timeout(Duration::from_millis(10), places.acquire(peer(2))).await;
        assert!(gave_up.is_err());
        assert_eq!(places.waiting(), 0);
        // Promised a place, then dropped before it ran: the place goes on to the next one.
        let waiting = {
            let places = Arc::clone(&places);
            tokio::spawn(async move { drop(places.acquire(peer(3)).await) })
        };
        queued(&places, 1).await;
        let next = {
            let places = Arc::clone(&places);
            tokio::spawn(async move { places.acquire(peer(4)).await })
        };
        queued(&places, 2).await;
        waiting.abort();
        drop(held);
        let place = next.await.unwrap().unwrap();
        let _ = waiting.await;
        assert_eq!(places.available(), 0);
        drop(place);
        assert_eq!((places.available(), places.waiting()), (1, 0));
    }

    #[tokio::test]
    async fn past_the_cap_the_connection_with_the_most_waiting_loses_its_newest() {
        let places = FairPlaces::new(1, 4);
        let held = places.acquire(peer(1)).await.unwrap();
        let spawn = |port: u16| {
            let places = Arc::clone(&places);
            tokio::spawn(async move { places.acquire(peer(port)).await.map(drop) })
        };
        // Connection 1 fills the cap.
        let backlog: Vec<_> = (0..4).map(|_| spawn(1)).collect();
        queued(&places, 4).await;
        // Its own fifth is refused at once; connection 2's first takes the place of its newest.
        assert_eq!(places.acquire(peer(1)).await.err(), Some(Busy { from_its_connection: 4 }));
        let other = spawn(2);
        let mut backlog = backlog.into_iter();
        let newest = backlog.next_back().unwrap();
        assert_eq!(newest.await.unwrap(), Err(Busy { from_its_connection: 3 }));
        assert_eq!(places.waiting(), 4);
        // Connection 2 (one waiting) refuses connection 1 (three waiting) once more, but then
        // neither has more than the other plus one: refused.
        let second = spawn(2);
        assert_eq!(backlog.next_back().unwrap().await.unwrap(), Err(Busy { from_its_connection: 2 }));
        assert_eq!(places.acquire(peer(2)).await.err(), Some(Busy { from_its_connection: 2 }));
        // Every one waiting is served.
        drop(held);
        for task in backlog.chain([other, second]) {
            assert_eq!(task.await.unwrap(), Ok(()));
        }
        assert_eq!((places.available(), places.waiting()), (1, 0));
    }
}
