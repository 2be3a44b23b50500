//! Request body data waiting unread, per connection ([`super::WAITING_PER_CONNECTION_BYTES`]).
//!
//! A request whose body waits for room in its body budget is not read, but over HTTP/2 its
//! client may send one stream window of it, which the h2 crate holds and counts against the
//! connection's flow-control window ([`super::H2_CONNECTION_WINDOW_BYTES`]) until it is read.
//! Waiting bodies that filled that window would stall every other body on the connection (issue
//! 9): the bodies waiting on one connection together hold at most half of it.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Mutex;

/// The bytes held by waiting bodies, per connection (the peer's address and port).
pub struct PerConnection {
    held: Mutex<HashMap<SocketAddr, usize>>,
    max: usize,
}

/// A waiting body's bytes on its connection, given back when dropped.
pub struct Held<'a> {
    owner: &'a PerConnection,
    peer: SocketAddr,
    bytes: usize,
}

impl PerConnection {
    /// At most `max` bytes per connection.
    pub fn new(max: usize) -> PerConnection {
        PerConnection { held: Mutex::new(HashMap::new()), max }
    }

    /// Holds `bytes` for a body waiting on the connection `peer`: `None` when that would take
    /// the connection past its bound. A connection whose peer is unknown is not counted (`Some`
    /// of nothing held: the global bound, [`super::WAITING_BODY_BYTES`], still applies).
    pub fn try_hold(&self, peer: Option<SocketAddr>, bytes: usize) -> Option<Option<Held<'_>>> {
        let Some(peer) = peer else { return Some(None) };
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let now = held.entry(peer).or_insert(0);
        if *now + bytes > self.max {
            if *now == 0 {
                held.remove(&peer);
            }
            return None;
        }
        *now += bytes;
        Some(Some(Held { owner: self, peer, bytes }))
    }

    /// Bytes held by waiting bodies on the connection `peer`.
    pub fn held(&self, peer: SocketAddr) -> usize {
        self.held.lock().unwrap_or_else(|e| e.into_inner()).get(&peer).copied().unwrap_or(0)
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        let mut held = self.owner.held.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(now) = held.get_mut(&self.peer) {
            *now = now.saturating_sub(self.bytes);
            if *now == 0 {
                held.remove(&self.peer);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_connection_holds_up_to_its_bound_and_gets_it_back() {
        let waiting = PerConnection::new(512);
        let (a, b): (SocketAddr, SocketAddr) =
            ("10.0.0.1:1000".parse().unwrap(), "10.0.0.1:1001".parse().unwrap());
        let first = waiting.try_hold(Some(a), 256).unwrap();
        let second = waiting.try_hold(Some(a), 256).unwrap();
        assert!(waiting.try_hold(Some(a), 1).is_none(), "past the bound");
        // Another connection has its own.
        let other = waiting.try_hold(Some(b), 512).unwrap();
        assert_eq!((waiting.held(a), waiting.held(b)), (512, 512));
        drop(first);
        assert_eq!(waiting.held(a), 256);
        assert!(waiting.try_hold(Some(a), 256).is_some());
        drop((second, other));
        assert_eq!((waiting.held(a), waiting.held(b)), (0, 0));
        assert!(waiting.held.lock().unwrap().is_empty(), "no entry left behind");
        // An unknown peer is not counted.
        assert!(matches!(waiting.try_hold(None, 10_000), Some(None)));
    }
}
