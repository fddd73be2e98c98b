//! Connection pools: messages between a host pair reuse a fixed set of persistent connections, as
//! the SIRD paper runs DCTCP and Swift (40 pre-established connections per host pair, Table 2), so
//! a message starts with the congestion window, RTT estimate and ECMP path its connection was
//! left with instead of a new connection's. A message takes the most recently used idle
//! connection (its window is the freshest); while fewer than the pool's size are open a new one
//! opens; when all are busy the message waits (its FCT counts the wait) and takes the first
//! connection to come free, in arrival order.
//!
//! Connection set-up: by default the pool is pre-established (a connection's first message starts as
//! a new connection would); with `connection_setup = "handshake"` ([`super::handshake`]) a pool
//! connection's first message pays the SYN round trip and later ones do not. Not modelled: a window restart after idle (RFC 2861; the window is kept
//! however long the connection idles), and sequence numbers running on across messages (each
//! message is its own byte stream on the connection; stragglers of the previous one are ignored).

use crate::engine::rng::mix64;
use crate::net::packet::{FlowId, HostId};
use crate::transport::parts::RttEstimator;
use std::collections::{HashMap, VecDeque};

/// What a connection keeps between messages.
#[derive(Clone, Debug)]
pub struct Warm<C> {
    pub cc: C,
    pub rtt: RttEstimator,
    pub path_key: u32,
}

/// What a new message gets.
pub enum Take<C> {
    /// An idle connection, warm from its last message.
    Warm(Warm<C>),
    /// A connection not used before, with its ECMP key.
    Fresh(u32),
    /// None: every connection of the pair is busy; the message waits.
    Wait,
}

struct Pool<C> {
    idle: Vec<Warm<C>>,
    opened: u32,
    waiting: VecDeque<FlowId>,
}

pub struct Pools<C> {
    size: u32,
    pairs: HashMap<u64, Pool<C>>,
}

impl<C> Pools<C> {
    /// Pools of `size` connections per host pair (at least 1).
    pub fn new(size: u32) -> Pools<C> {
        assert!(size >= 1);
        Pools { size, pairs: HashMap::new() }
    }

    fn pool(&mut self, src: HostId, dst: HostId) -> &mut Pool<C> {
        let key = (src as u64) << 32 | dst as u64;
        self.pairs.entry(key).or_insert_with(|| Pool { idle: Vec::new(), opened: 0, waiting: VecDeque::new() })
    }

    /// A connection for message `id` from `src` to `dst`.
    pub fn take(&mut self, id: FlowId, src: HostId, dst: HostId) -> Take<C> {
        let size = self.size;
        let pool = self.pool(src, dst);
        if let Some(w) = pool.idle.pop() {
            return Take::Warm(w);
        }
        if pool.opened < size {
            pool.opened += 1;
            let key = mix64(((src as u64) << 32 | dst as u64) ^ (pool.opened as u64) << 52 ^ 0xc0ee);
            return Take::Fresh(key as u32);
        }
        pool.waiting.push_back(id);
        Take::Wait
    }

    /// A connection's message is done: the first waiting message takes the connection, else it
    /// goes idle.
    pub fn give_back(&mut self, src: HostId, dst: HostId, warm: Warm<C>) -> Option<(FlowId, Warm<C>)> {
        let pool = self.pool(src, dst);
        match pool.waiting.pop_front() {
            Some(next) => Some((next, warm)),
            None => {
                pool.idle.push(warm);
                None
            }
        }
    }

    /// Idle connections of a pair, most recently used last (for tests).
    pub fn idle(&self, src: HostId, dst: HostId) -> &[Warm<C>] {
        self.pairs.get(&((src as u64) << 32 | dst as u64)).map_or(&[], |p| &p.idle)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warm(tag: u32) -> Warm<u32> {
        Warm { cc: tag, rtt: RttEstimator::new(1000, 10), path_key: tag }
    }

    #[test]
    fn messages_open_up_to_the_pool_size_then_wait_in_order_for_a_free_connection() {
        let mut p: Pools<u32> = Pools::new(2);
        let Take::Fresh(a) = p.take(0, 1, 2) else { panic!() };
        let Take::Fresh(b) = p.take(1, 1, 2) else { panic!() };
        assert_ne!(a, b, "connections of a pair have their own paths");
        assert!(matches!(p.take(2, 1, 2), Take::Wait));
        assert!(matches!(p.take(3, 1, 2), Take::Wait));
        // Another pair has its own pool.
        assert!(matches!(p.take(4, 2, 1), Take::Fresh(_)));
        // Freed connections go to the waiting messages in arrival order, then idle.
        assert_eq!(p.give_back(1, 2, warm(7)).map(|(id, w)| (id, w.cc)), Some((2, 7)));
        assert_eq!(p.give_back(1, 2, warm(8)).map(|(id, w)| (id, w.cc)), Some((3, 8)));
        assert!(p.give_back(1, 2, warm(9)).is_none());
        assert!(p.give_back(1, 2, warm(10)).is_none());
        // The most recently used idle connection is taken first.
        let Take::Warm(w) = p.take(5, 1, 2) else { panic!() };
        assert_eq!(w.cc, 10);
        assert_eq!(p.idle(1, 2).len(), 1);
    }
}
