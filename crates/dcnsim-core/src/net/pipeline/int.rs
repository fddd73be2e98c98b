//! In-band network telemetry (INT) as HPCC uses it (Li et al., SIGCOMM'19, section 4.1; the
//! authors' ns-3 switch pushes one record per hop at egress dequeue): the dequeue time, the bytes the
//! egress port had sent before this packet, the bytes waiting in that port's queues, and its line
//! rate. At most `INT_MAX_HOPS` records; a packet crossing more hops keeps the first ones.
//!
//! Modelled: exact values (no 24/20/17-bit field wrap-around or units of 128/80 bytes), stamped
//! into data packets only (HPCC's ACKs carry a copy, which the receiver's transport makes).
//! The records live in a side table indexed by `PacketId`, because a 64-byte packet cannot hold
//! them; a slot is cleared when the pool hands it out again.

use crate::net::packet::PacketId;
use crate::time::Time;

/// HPCC's ns-3 INT header holds five hops.
pub const INT_MAX_HOPS: usize = 5;

/// One switch hop's record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntHop {
    /// When the packet left the egress queue (picoseconds).
    pub ts: Time,
    /// Bytes the egress port had put on the wire before this packet, since the run started.
    pub tx_bytes: u64,
    /// Bytes waiting in the egress port's queues as the packet left (all classes).
    pub qlen_bytes: u64,
    /// The egress link's rate in bits per second.
    pub rate_bps: u64,
}

/// The records one packet carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntStack {
    hops: [IntHop; INT_MAX_HOPS],
    n: u8,
}

impl IntStack {
    pub fn hops(&self) -> &[IntHop] {
        &self.hops[..self.n as usize]
    }

    /// Appends a hop; returns false (and records nothing) when the stack is full.
    pub fn push(&mut self, hop: IntHop) -> bool {
        if (self.n as usize) < INT_MAX_HOPS {
            self.hops[self.n as usize] = hop;
            self.n += 1;
            true
        } else {
            false
        }
    }
}

/// INT stacks by packet slot, plus a copy of the last delivered packet's.
#[derive(Default)]
pub struct IntTable {
    stacks: Vec<IntStack>,
    delivered: IntStack,
}

impl IntTable {
    /// Clears a slot the pool is handing out.
    #[inline]
    pub fn reset(&mut self, id: PacketId) {
        let i = id as usize;
        if i >= self.stacks.len() {
            self.stacks.resize(i + 1, IntStack::default());
        }
        self.stacks[i].n = 0;
    }

    pub fn hops(&self, id: PacketId) -> &[IntHop] {
        self.stacks[id as usize].hops()
    }

    pub fn stack(&self, id: PacketId) -> &IntStack {
        &self.stacks[id as usize]
    }

    pub fn stack_mut(&mut self, id: PacketId) -> &mut IntStack {
        &mut self.stacks[id as usize]
    }

    /// Keeps a copy of a packet's records as it is handed to its destination host.
    #[inline]
    pub fn keep_delivered(&mut self, id: PacketId) {
        self.delivered = self.stacks[id as usize];
    }

    pub fn delivered(&self) -> &[IntHop] {
        self.delivered.hops()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stack_keeps_the_first_five_hops() {
        let mut s = IntStack::default();
        for i in 0..7 {
            let pushed = s.push(IntHop { ts: i, ..Default::default() });
            assert_eq!(pushed, i < 5);
        }
        assert_eq!(s.hops().iter().map(|h| h.ts).collect::<Vec<_>>(), vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn reused_slots_start_empty() {
        let mut t = IntTable::default();
        t.reset(3);
        t.stack_mut(3).push(IntHop::default());
        t.keep_delivered(3);
        t.reset(3);
        assert!(t.hops(3).is_empty());
        assert_eq!(t.delivered().len(), 1);
    }
}
