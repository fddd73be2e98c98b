//! The dequeue stage: what happens as a packet leaves its egress queue for the wire (also when it
//! found the port idle and never waited). In order: ECN marking at dequeue, the dequeue hooks of
//! the registered stages that are on (`pipeline::stages`, in registry order: INT's record, RCP's
//! rate stamp, HULL's phantom queue), and the release of its bytes from the switch's shared buffer
//! (which may resume a PFC pause).
//!
//! Ports without any of these skip the stage with one test of `Port::dequeue_stage`.

use crate::engine::events::EventQueue;
use crate::net::network::Network;
use crate::net::packet::PacketId;
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
        let (mark, shared) = (cfg.ecn_at == EcnAt::Dequeue, cfg.shared_buffer);
        if mark {
            self.mark_on_dequeue(port, pkt, class, now);
        }
        self.stages_on_dequeue(port, pkt, size, class, now);
        if shared {
            self.release_shared(port, pkt, class, size, now, ev);
        }
    }
}
