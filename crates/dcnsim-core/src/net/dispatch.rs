//! The network's share of the event loop, in one place for every loop that moves packets (the run
//! loop, `scenario::run`, and the unit tests' testbed): a packet reaching the far end of a link, a
//! port free to send the next, a switch-stage timer. What is left for the caller to do comes back as
//! a `NetStep`: hand a packet to its host's transport, tell a host its NIC went idle, or stop a
//! deadlocked fabric. Other events are not the network's and come back untouched.

use crate::engine::events::{Event, EventQueue};
use crate::ids::{HostId, PacketId, PortId};
use crate::net::Network;
use crate::time::Time;

/// What the caller must do after the network handled an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetStep {
    /// Nothing: a switch forwarded the packet, a link consumed a PFC frame or lost a packet, a
    /// backlogged port started its next packet.
    Done,
    /// `pkt` reached `host` over its downlink `port`: hand it to the transport (and release it).
    Deliver { pkt: PacketId, host: HostId, port: PortId },
    /// The NIC of `host` went idle (for transports that pick the next packet then).
    NicIdle { host: HostId },
    /// The PFC deadlock check found a cycle of paused ports: nothing can move any more.
    Deadlocked,
    /// Not a network event: the caller's own.
    NotNetwork(Event),
}

/// Handles `ev` at `now` if it is the network's.
#[inline(always)]
pub fn step(net: &mut Network, ev: Event, now: Time, events: &mut EventQueue) -> NetStep {
    match ev {
        Event::LinkArrival(port) => match net.on_link_arrival(port, now, events) {
            Some((pkt, node)) if node >= net.hosts => {
                net.switch_arrival(port, node, pkt, now, events);
                NetStep::Done
            }
            Some((pkt, host)) => NetStep::Deliver { pkt, host, port },
            None => NetStep::Done,
        },
        Event::PortFree(port) => {
            if net.on_port_free(port, now, events) {
                NetStep::NicIdle { host: net.ports[port as usize].owner }
            } else {
                NetStep::Done
            }
        }
        Event::SwitchTimer { kind, id } => {
            if net.on_switch_timer(kind, id, now, events) {
                NetStep::Deadlocked
            } else {
                NetStep::Done
            }
        }
        other => NetStep::NotNetwork(other),
    }
}
