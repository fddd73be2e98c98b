//! In-band network telemetry (INT) as HPCC uses it (Li et al., SIGCOMM'19, section 4.1; the
//! authors' ns-3 switch pushes one record per hop at egress dequeue): the dequeue time, the bytes the
//! egress port had sent before this packet, the bytes waiting in that port's queues, and its line
//! rate. At most `INT_MAX_HOPS` records; a packet crossing more hops keeps the first ones.
//!
//! Modelled: exact values (no 24/20/17-bit field wrap-around or units of 128/80 bytes), stamped
//! into data packets only (HPCC's ACKs carry a copy, which the receiver's transport makes).
//! The records live in a side table indexed by `PacketId`, because a 64-byte packet cannot hold
//! them; a slot is cleared when the pool hands it out again.
//!
//! The stage (`[switch] int`) keeps each port's bytes sent and pushes the record at dequeue.

use crate::ids::PacketId;
use crate::net::network::Network;
use crate::net::packet::PacketKind;
use crate::net::pipeline::stage::Stage;
use crate::net::port::PortId;
use crate::net::QueueConfigs;
use crate::spec_reader::{Section, SpecResult};
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

/// The INT stage's state.
pub struct Int {
    /// Bytes each port has sent since the run started (never reset).
    tx_bytes: Vec<u64>,
    /// Records pushed onto data packets (whole run).
    records: u64,
}

impl Stage for Int {
    const NAME: &'static str = "int";
    const CONFORMANCE: &'static str = "[switch]\nint = true\n";
    const ON_DEQUEUE: bool = true;
    type Config = ();

    fn read(s: &mut Section, _queues: &QueueConfigs) -> SpecResult<Option<()>> {
        let on = s.bool_or(
            "int",
            false,
            "in-band telemetry (HPCC): every switch egress records time, bytes sent, queue length and rate into the data packets it sends (up to 5 hops)",
        )?;
        Ok(on.then_some(()))
    }

    fn build(_cfg: &(), net: &mut Network, _max_packet: u32) -> Int {
        net.pool.enable_int();
        Int { tx_bytes: vec![0; net.ports.len()], records: 0 }
    }

    /// Pushes this hop's INT record onto a data packet (HPCC's `IntHeader::PushHop` at dequeue):
    /// the time, the port's bytes sent before this packet, its queue as the packet leaves, its rate.
    #[inline]
    fn on_dequeue(net: &mut Network, port: PortId, pkt: PacketId, size: u32, _class: usize, now: Time) {
        let p = &net.ports[port as usize];
        if !Int::runs_at(p) {
            return;
        }
        let Some(int) = net.stages.get_mut::<Int>() else { return };
        let sent = &mut int.tx_bytes[port as usize];
        let hop = IntHop { ts: now, tx_bytes: *sent, qlen_bytes: p.bytes, rate_bps: p.rate.bps() };
        *sent += size as u64;
        if net.pool.get(pkt).kind == PacketKind::Data {
            if let Some(t) = net.pool.int.as_deref_mut() {
                t.stack_mut(pkt).push(hop);
                int.records += 1;
            }
        }
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("records", self.records)]
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
