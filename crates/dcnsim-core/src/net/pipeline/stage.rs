//! The switch stage interface: what a pipeline stage of the registry (`pipeline::stages`) may do.
//! A stage is one type that holds all its state (per port, per switch, per run) and implements
//! [`Stage`]; every hook has a default that does nothing, so a stage writes only the hooks it uses
//! and says which through the `ON_*` constants. The registry calls the hooks directly, in the
//! order its list declares, and a hook whose constant is false costs nothing (the test is on a
//! constant), so the packet path has no trait objects.
//!
//! Hooks are associated functions over the whole `Network` (the stage finds its own state with
//! `net.stages.get::<Self>()`), because a stage reads and writes the ports, the packet pool and
//! the tracer beside its own state; the registry owns the state, the stage owns its layout.
//!
//! Where the hooks run, for a packet offered to egress `port`:
//!
//! ```text
//!  on_arrival ─► admission (built in) ─► on_admit ─► class queue ─► ... ─► on_dequeue ─► wire
//!  (every offered      drop-tail, trim,     (accepted,                      (leaving for the
//!   packet, dropped     shared buffer        class known)                    wire; marking,
//!   ones included)                                                           stamping)
//! ```
//!
//! and off the packet path: `on_timer` (an `Event::SwitchTimer` of the stage's own kind),
//! `reset_stats` (the measurement window opens), `counters` (the run's summary, `stages.NAME`).

use crate::engine::events::EventQueue;
use crate::net::network::Network;
use crate::net::packet::PacketId;
use crate::net::port::{Port, PortId, PortRole};
use crate::net::QueueConfigs;
use crate::spec_reader::{Section, SpecResult};
use crate::time::Time;

/// What a protocol's packets carry that a stage may rewrite: the run loop fills it in from each
/// protocol's declared needs (`transport::Needs`), so stages ask without knowing transports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketUse {
    /// Data packets carry a rate header in `aux` that switches may lower (RCP's).
    pub rate_header: bool,
}

/// A switch pipeline stage. See the module documentation for where each hook runs.
pub trait Stage: Sized {
    /// The stage's name in the summary (`stages.NAME`) and in reports.
    const NAME: &'static str;
    /// A spec fragment (TOML) that switches the stage on with its defaults; the stage conformance
    /// suite merges it over every protocol's conformance spec.
    const CONFORMANCE: &'static str;
    /// Which hooks the stage has: the registry calls only these.
    const ON_ARRIVAL: bool = false;
    const ON_ADMIT: bool = false;
    const ON_DEQUEUE: bool = false;
    /// The stage's `[switch]` keys, read (and, in describe mode, documented) by the stage.
    type Config: Clone + std::fmt::Debug + PartialEq;

    /// Reads the stage's keys of `[switch]`; `None` when the stage is off.
    fn read(s: &mut Section, queues: &QueueConfigs) -> SpecResult<Option<Self::Config>>;

    /// Builds the stage's state for a network; `max_packet` is the largest wire size.
    fn build(cfg: &Self::Config, net: &mut Network, max_packet: u32) -> Self;

    /// Whether the stage runs at this egress port (default: switch ports, not host NICs).
    fn runs_at(port: &Port) -> bool {
        port.role != PortRole::HostNic
    }

    /// Checks the run's protocols, as (name, what their packets carry), against what the stage does
    /// to packets.
    fn check_protocols(_cfg: &Self::Config, _top: &Section, _protocols: &[(&str, PacketUse)]) -> SpecResult<()> {
        Ok(())
    }

    /// A packet is offered to `port` (before admission: dropped packets are seen too).
    #[inline(always)]
    fn on_arrival(_net: &mut Network, _port: PortId, _pkt: PacketId, _now: Time, _ev: &mut EventQueue) {}

    /// Admission accepted a packet into `class` of `port` (before it queues or starts sending).
    #[inline(always)]
    fn on_admit(_net: &mut Network, _port: PortId, _pkt: PacketId, _class: usize, _now: Time) {}

    /// A packet of `size` wire bytes from `class` leaves `port` for the wire.
    #[inline(always)]
    fn on_dequeue(_net: &mut Network, _port: PortId, _pkt: PacketId, _size: u32, _class: usize, _now: Time) {}

    /// The stage's switch timer fired (scheduled as `Event::SwitchTimer { kind:
    /// <Self as Slot>::TIMER_KIND, id }`).
    fn on_timer(_net: &mut Network, _id: u32, _now: Time, _ev: &mut EventQueue) {}

    /// The measurement window opens: counters restart.
    fn reset_stats(&mut self, _now: Time) {}

    /// The stage's counters for the summary (`stages.NAME.key`), present whenever it is on.
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
}
