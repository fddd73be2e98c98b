//! The dequeue stage: what happens as a packet leaves its egress queue for the wire (also when it
//! found the port idle and never waited). In order: ECN marking at dequeue, HULL's phantom queue (`phantom`), RCP's rate stamp (`rcp`), an INT record, and the
//! release of its bytes from the switch's shared buffer (which may resume a PFC pause).
//!
//! Ports without any of these skip the stage with one test of `Port::dequeue_stage`.

use crate::engine::events::EventQueue;
use crate::net::network::Network;
use crate::net::packet::{PacketId, PacketKind};
use crate::net::pipeline::int::IntHop;
use crate::net::port::PortId;
use crate::net::queue::EcnAt;
use crate::time::Time;

impl Network {
    /// Runs the dequeue stage for a packet of `size` wire bytes taken from `class` of `port`.
    #[inline(never)]
    pub(crate) fn on_dequeue(
        &mut self,
        port: PortId,
        pkt: PacketId,
        size: u32,
        class: usize,
        now: Time,
        ev: &mut EventQueue,
    ) {
        let cfg = &self.cfgs[self.ports[port as usize].cfg as usize];
        let (mark, int, shared) = (cfg.ecn_at == EcnAt::Dequeue, cfg.int, cfg.shared_buffer);
        let (rcp, phantom) = (cfg.rcp, cfg.phantom);
        if mark {
            self.mark_on_dequeue(port, pkt, class, now);
        }
        if phantom {
            self.phantom_departure(port, pkt, size, now);
        }
        if rcp {
            self.rcp_stamp(port, pkt);
        }
        if int {
            self.stamp_int(port, pkt, size, now);
        }
        if shared {
            self.release_shared(port, pkt, class, size, now, ev);
        }
    }

    /// Pushes this hop's INT record onto a data packet (HPCC's `IntHeader::PushHop` at dequeue):
    /// the time, the port's bytes sent before this packet, its queue as the packet leaves, its rate.
    fn stamp_int(&mut self, port: PortId, pkt: PacketId, size: u32, now: Time) {
        let p = &self.ports[port as usize];
        let sent = &mut self.int_tx_bytes[port as usize];
        let hop = IntHop { ts: now, tx_bytes: *sent, qlen_bytes: p.bytes, rate_bps: p.rate.bps() };
        *sent += size as u64;
        if self.pool.get(pkt).kind == PacketKind::Data {
            if let Some(t) = self.pool.int.as_deref_mut() {
                t.stack_mut(pkt).push(hop);
            }
        }
    }
}
