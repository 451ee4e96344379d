//! Per-client accounting: what one peer address holds (connections,
//! requests in progress, long-lived streams, legacy sessions), so that one
//! client cannot take every shared slot.
//!
//! The table is looked up once per connection, not per request: each
//! connection's service carries its peer's counters, and a request only
//! touches an atomic count. Entries live while a connection or a session
//! holds them; the table is bounded and swept of dead entries when full.
//! The key is the peer IP address; an authenticated principal can take its
//! place once authentication exists.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// What one client holds.
#[derive(Debug)]
pub(super) struct PeerCounts {
    /// The client's address: its rate-limit key when unauthenticated.
    pub(super) ip: IpAddr,
    connections: AtomicUsize,
    requests: AtomicUsize,
    streams: AtomicUsize,
    sessions: AtomicUsize,
}

/// Which count a [`Slot`] holds.
#[derive(Debug, Clone, Copy)]
pub(super) enum Kind {
    Connection,
    Request,
    Stream,
    Session,
}

impl PeerCounts {
    fn new(ip: IpAddr) -> Self {
        Self {
            ip,
            connections: AtomicUsize::new(0),
            requests: AtomicUsize::new(0),
            streams: AtomicUsize::new(0),
            sessions: AtomicUsize::new(0),
        }
    }

    fn count(&self, kind: Kind) -> &AtomicUsize {
        match kind {
            Kind::Connection => &self.connections,
            Kind::Request => &self.requests,
            Kind::Stream => &self.streams,
            Kind::Session => &self.sessions,
        }
    }
}

/// One unit of a client's count, given back on drop.
#[derive(Debug)]
pub(super) struct Slot {
    peer: Arc<PeerCounts>,
    kind: Kind,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.peer.count(self.kind).fetch_sub(1, Ordering::AcqRel);
    }
}

/// Takes one `kind` slot of `peer` if it holds fewer than `max`.
pub(super) fn acquire(peer: &Arc<PeerCounts>, kind: Kind, max: usize) -> Option<Slot> {
    peer.count(kind)
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < max).then_some(n + 1)
        })
        .ok()
        .map(|_| Slot {
            peer: Arc::clone(peer),
            kind,
        })
}

/// The clients of one listener, by address.
#[derive(Debug)]
pub(super) struct Peers {
    map: Mutex<HashMap<IpAddr, Weak<PeerCounts>>>,
    max_entries: usize,
}

impl Peers {
    pub(super) fn new(max_entries: usize) -> Self {
        Self {
            map: Mutex::new(HashMap::new()),
            max_entries: max_entries.max(1),
        }
    }

    /// The counters of `ip`; `None` if the table is full of live clients.
    pub(super) fn get(&self, ip: IpAddr) -> Option<Arc<PeerCounts>> {
        let mut map = self.map.lock().ok()?;
        if let Some(live) = map.get(&ip).and_then(Weak::upgrade) {
            return Some(live);
        }
        if map.len() >= self.max_entries {
            map.retain(|_, w| w.strong_count() > 0);
            if map.len() >= self.max_entries {
                return None;
            }
        }
        let counts = Arc::new(PeerCounts::new(ip));
        map.insert(ip, Arc::downgrade(&counts));
        Some(counts)
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.map.lock().map_or(0, |m| m.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_capped_and_given_back_and_the_table_is_bounded() {
        let peers = Peers::new(2);
        let a = peers.get([10, 0, 0, 1].into()).expect("a");
        let one = acquire(&a, Kind::Request, 2).expect("first");
        let _two = acquire(&a, Kind::Request, 2).expect("second");
        assert!(acquire(&a, Kind::Request, 2).is_none(), "at the cap");
        assert!(acquire(&a, Kind::Stream, 1).is_some(), "other kinds apart");
        drop(one);
        assert!(acquire(&a, Kind::Request, 2).is_some(), "given back");
        let b = peers.get([10, 0, 0, 2].into()).expect("b");
        assert!(
            peers.get([10, 0, 0, 3].into()).is_none(),
            "full of live clients"
        );
        drop(b);
        assert!(
            peers.get([10, 0, 0, 3].into()).is_some(),
            "dead entry swept"
        );
        assert!(peers.len() <= 2);
        assert!(Arc::ptr_eq(
            &a,
            &peers.get([10, 0, 0, 1].into()).expect("same")
        ));
    }
}
