//! Admission stage: whether an arriving packet may join its egress port's queues. One of
//!
//! - drop-tail: a limit in bytes or packets on the port's total occupancy (none = infinite);
//! - NDP trimming (`pipeline::trim`): a full data queue cuts packets to headers;
//! - the switch's shared buffer (`pipeline::shared_buffer`): per (ingress port, class) reserve,
//!   dynamic thresholds, PFC headroom.
//!
//! Admitted packets go on to marking on enqueue and their class queue (`Network::admit`).

use crate::engine::events::EventQueue;
use crate::net::network::Network;
use crate::net::packet::{Fate, PacketId, PacketKind};
use crate::net::pipeline::marking::mark_on_enqueue;
use crate::net::port::PortId;
use crate::net::queue::{Amount, QueueConfig};
use crate::record::trace::TraceEvent;
use crate::time::Time;

impl QueueConfig {
    /// Would a packet of `size` bytes overflow the limit, given the occupancy it would join?
    #[inline]
    pub fn overflows(&self, bytes: u64, packets: u64, size: u32) -> bool {
        match self.limit {
            None => false,
            Some(Amount::Bytes(l)) => bytes + size as u64 > l,
            Some(Amount::Packets(l)) => packets + 1 > l,
        }
    }
}

impl Network {
    /// Offers a packet to an egress port: admission (drop, trim, or the shared buffer), marking,
    /// then its class queue, or the wire at once if the port is idle.
    pub fn enqueue(&mut self, port: PortId, pkt: PacketId, now: Time, ev: &mut EventQueue) {
        self.stages_on_arrival(port, pkt, now, ev);
        let p = &mut self.ports[port as usize];
        if p.shaper.is_some() && self.pool.get(pkt).kind == PacketKind::Credit {
            return self.enqueue_credit(port, pkt, now, ev);
        }
        let cfg = &self.cfgs[p.cfg as usize];
        if let Some(trim) = cfg.trim {
            return self.enqueue_trimming(port, pkt, trim, now, ev);
        }
        if cfg.shared_buffer {
            return self.enqueue_shared(port, pkt, now, ev);
        }
        let packet = self.pool.get_mut(pkt);
        if cfg.overflows(p.bytes, p.packets, packet.size) {
            p.counters.drops += 1;
            if self.tracer.is_some() {
                self.trace(now, pkt, port, TraceEvent::Drop);
            }
            self.pool.release(pkt, Fate::Dropped);
            return;
        }
        let class = p.class_of(packet.prio);
        if mark_on_enqueue(cfg, p, packet, &mut self.rng) && self.tracer.is_some() {
            self.trace_in_class(now, pkt, port, TraceEvent::Mark, class);
        }
        self.admit(port, pkt, class, now, ev);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits() {
        let q = QueueConfig { limit: Some(Amount::Bytes(3000)), ..QueueConfig::infinite() };
        assert!(!q.overflows(1500, 1, 1500));
        assert!(q.overflows(1501, 1, 1500));
        let q = QueueConfig { limit: Some(Amount::Packets(2)), ..QueueConfig::infinite() };
        assert!(!q.overflows(0, 1, 9000));
        assert!(q.overflows(0, 2, 64));
    }
}
