//! Staged prefetching for the event loop: a hop's reads form a chain of dependent cache misses on
//! large fabrics (the port, the packet on its link, the routing-table entry for the packet's
//! destination, the egress port that entry names), too long to hide by fetching one event ahead.
//! The loop fetches each link of the chain some events earlier than the next (`scenario::run`'s
//! `STAGE_*`: the port seven events ahead, its arriving packet five, the table entry three, the
//! egress port one), each stage reading only what an earlier one fetched. Hints only: no effect on
//! results.

use crate::net::network::Network;
use crate::net::packet::{FlowId, Packet};
use crate::net::port::PortId;

impl Network {
    /// The packet arriving over `port`'s link (the port was fetched a stage earlier).
    #[inline(always)]
    pub fn prefetch_arriving_packet(&self, port: PortId) {
        if let Some(pkt) = self.ports.get(port as usize).and_then(|p| p.pipe_head_packet()) {
            self.pool.prefetch(pkt);
        }
    }

    /// For a packet reaching a switch, the routing-table entry for its
    /// destination; for one reaching a host, that host's NIC port (its transport usually answers).
    #[inline(always)]
    pub fn prefetch_arrival_route(&self, port: PortId) {
        let Some(p) = self.ports.get(port as usize) else { return };
        let Some(pkt) = p.pipe_head_packet().and_then(|id| self.pool.peek(id)) else { return };
        if p.peer >= self.hosts {
            self.routes.prefetch_entry(p.peer, pkt.dst);
        } else {
            self.prefetch_port(self.routes.nic_port[p.peer as usize]);
        }
    }

    /// The flow of the packet arriving over `port`'s link if that link ends at a host (for the
    /// transport's `prefetch_flow`; the packet was fetched a stage earlier).
    #[inline(always)]
    pub fn host_arrival_flow(&self, port: PortId) -> Option<FlowId> {
        self.host_arrival_packet(port).map(|pkt| pkt.flow)
    }

    /// The packet arriving over `port`'s link if that link ends at a host.
    #[inline(always)]
    pub fn host_arrival_packet(&self, port: PortId) -> Option<&Packet> {
        let p = self.ports.get(port as usize)?;
        if p.peer >= self.hosts {
            return None;
        }
        p.pipe_head_packet().and_then(|id| self.pool.peek(id))
    }

    /// The egress port the arriving packet will take at a switch, where
    /// routing can tell before the hop.
    #[inline(always)]
    pub fn prefetch_egress(&self, port: PortId) {
        let Some(p) = self.ports.get(port as usize) else { return };
        if p.peer < self.hosts || self.deflection.is_some() {
            return;
        }
        let Some(pkt) = p.pipe_head_packet().and_then(|id| self.pool.peek(id)) else { return };
        if let Some(out) = self.routes.predict_port(p.peer, pkt) {
            self.prefetch_port(out);
        }
    }
}
