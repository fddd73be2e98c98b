//! Transports plug in here. A protocol is a type implementing [`Protocol`] in its own module or
//! folder, plus one line in [`registry`]. The simulator dispatches on a plain enum generated from
//! that list (no trait objects on the hot path).
//!
//! What a protocol sees:
//! - at construction, a [`TransportEnv`]: hosts, NIC rates, base RTTs and BDPs, paths, priority
//!   classes, the workload's flow-size distribution, named random streams;
//! - in every callback, a [`Ctx`]: the time, sending a packet from a host, timers, the flow's
//!   record, delivered bytes and finished flows, whether a NIC is idle. It cannot write network
//!   state: ports, queues and routes are the network's.
//!
//! Hooks (all but `start_flow`, `on_packet` and `on_timer` default to nothing): a flow starts; a packet
//! reaches one of the protocol's hosts; a timer fires; a host NIC goes idle (for protocols that
//! choose the next packet at transmission time, asked for with [`Ctx::set_nic_idle_notify`] or
//! [`Protocol::WANTS_NIC_IDLE`]); counters for the summary; per-flow state for traces. Each
//! protocol also declares its [`Conformance`] setup, which `tests/conformance.rs` runs.

pub mod conformance;
pub mod conns;
pub mod dart;
pub mod dcpim;
pub mod dcqcn;
pub mod dctcp;
pub mod dctcp_rate;
pub mod dx;
pub mod env;
pub mod expresspass;
pub mod homa;
pub mod hpcc;
pub mod hull;
pub mod mptcp;
pub mod ndp;
pub mod needs;
pub mod newreno;
pub mod parts;
pub mod rate;
pub mod rcp;
pub mod registry;
pub mod sird;
pub mod swift;
#[cfg(test)]
pub(crate) mod testbed;
pub mod timely;
pub mod timer;
pub mod window;

use crate::engine::events::{Event, EventQueue};
use crate::net::packet::{FlowId, HostId, LoadBalancing, Packet};
use crate::net::pipeline::stages::int::IntHop;
use crate::net::{Network, QueueConfigs, SwitchConfig};
use crate::record::flows::{FlowLog, FlowRecord};
use crate::spec_reader::{Section, SpecResult};
use crate::time::{Rate, Time};
use timer::TimerKind;

pub use conformance::{Case, Conformance, LoneFlow};
pub use env::TransportEnv;
pub use needs::{ClassUse, Needs};
pub use registry::{conformance, protocols, Transport, TransportConfig};

pub use crate::net::framing::Framing;

/// What a protocol's spec reader may check its parameters against: the rest of the run's spec.
pub struct SpecEnv<'a> {
    pub load_balancing: LoadBalancing,
    pub framing: Framing,
    pub queues: &'a QueueConfigs,
    /// The registered switch stages that are on (`net::pipeline::stages`; `stages.has::<S>()`).
    pub stages: crate::net::pipeline::stages::StageSet,
    /// Switches send PB-FS CC-postcards (`[switch] postcards`).
    pub postcards: bool,
    /// Switches run PFC on at least one class (`[switch] pfc`): a lossless fabric.
    pub pfc: bool,
}

impl<'a> SpecEnv<'a> {
    /// The run's spec as the transports' readers see it, with the switch features `switch` turns on.
    pub fn new(
        switch: &SwitchConfig,
        load_balancing: LoadBalancing,
        framing: Framing,
        queues: &'a QueueConfigs,
    ) -> SpecEnv<'a> {
        let (stages, postcards, pfc) = (switch.stages.set(), switch.pbfs(), switch.lossless != 0);
        SpecEnv { load_balancing, framing, queues, stages, postcards, pfc }
    }
}

/// A transport protocol. One type may serve several registered names (e.g. `dctcp` and
/// `newreno`); its config says which.
pub trait Protocol: Sized {
    /// Registered names with a one-line description citing the paper.
    const NAMES: &'static [(&'static str, &'static str)];
    /// Ask every host NIC to report when it goes idle (receiver- or sender-paced protocols that
    /// pick the next packet at transmission time).
    const WANTS_NIC_IDLE: bool = false;
    type Config: Clone + std::fmt::Debug + PartialEq;
    /// The protocol's timer kinds ([`timer`]).
    type Timer: TimerKind;

    /// Reads the protocol's keys of its `[transport]` table; `name` is the registered name chosen.
    /// In describe mode it documents them (the section is scoped to this protocol).
    fn read(s: &mut Section, name: &str, env: &SpecEnv) -> SpecResult<Self::Config>;
    /// The registered name this config runs as.
    fn name(cfg: &Self::Config) -> &'static str;
    /// What the config needs from the queues and topology (checked after the spec is read).
    fn needs(_cfg: &Self::Config) -> Needs {
        Needs::default()
    }
    /// The config spreads a flow over several paths whatever the routing mode (MPTCP's subflows
    /// have ECMP keys of their own): the ideal FCT is then the multipath one.
    fn multipath(_cfg: &Self::Config) -> bool {
        false
    }
    /// The config marks a flow of `size` bytes deflectable by IOFD (Dart's short flows): its ideal
    /// FCT must allow for deflected routes (`metrics/ideal_deflected.rs`).
    fn deflectable(_cfg: &Self::Config, _size: u64) -> bool {
        false
    }
    fn new(cfg: &Self::Config, env: &TransportEnv) -> Self;

    fn start_flow(&mut self, ctx: &mut Ctx, flow: FlowId);
    /// A packet of one of this protocol's flows reached `host`. Packets of finished flows, stray
    /// duplicates and kinds the protocol does not use must be ignored, never panic.
    fn on_packet(&mut self, ctx: &mut Ctx, host: HostId, pkt: &Packet);
    /// A timer the protocol set fired (`kind` decoded from the event's byte, [`timer`]).
    fn on_timer(&mut self, ctx: &mut Ctx, kind: Self::Timer, id: u32);
    fn on_nic_idle(&mut self, _ctx: &mut Ctx, _host: HostId) {}
    /// Protocol counters for the summary (retransmissions, timeouts, ...).
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
    /// The flow's current control state for traces (sender window or rate, receiver credit), as
    /// (name, value) pairs with the unit in the name; nothing once the flow is gone.
    fn flow_state(&self, _flow: FlowId, _out: &mut Vec<(&'static str, f64)>) {}
    /// A hint from the event loop on large fabrics: a packet of `flow` reaches a host a few events
    /// from now. `early`: fetch what can be found without reading cold memory (an index entry);
    /// later (`early` false, an event or two before it): the connection's state itself. Must not
    /// change anything; the default does nothing.
    #[inline(always)]
    fn prefetch_flow(&self, _flow: FlowId, _early: bool) {}
    /// A hint, a stage after `prefetch_flow`'s connection: `pkt` reaches its host next. The
    /// connection should be in cache by now, so read it and fetch what the handler will read
    /// behind it (buffers of its own). Must not change anything; the default does nothing.
    #[inline(always)]
    fn prefetch_flow_state(&self, _pkt: &Packet) {}
    /// A hint from the event loop: timer `id` fires a few events from now (`near`: the event after
    /// next; else a stage earlier), so fetch what its handler reads (`prefetch_flow`'s two stages).
    /// For protocols with a timer per flow and more flows than the cache holds (ExpressPass's
    /// credit pacing). Must not change anything; the default does nothing.
    #[inline(always)]
    fn prefetch_timer(&self, _id: u32, _near: bool) {}
    /// How the conformance suite runs registered name `name`, and what it promises there
    /// (required: every protocol is held to the suite).
    fn conformance(name: &str) -> Conformance;
}

/// The transport's view of the world during one callback.
pub struct Ctx<'a> {
    now: Time,
    net: &'a mut Network,
    events: &'a mut EventQueue,
    flows: &'a mut FlowLog,
    framing: Framing,
    /// Which of the run's transports this is (timers come back to it).
    transport: u8,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(
        now: Time,
        net: &'a mut Network,
        events: &'a mut EventQueue,
        flows: &'a mut FlowLog,
        framing: Framing,
        transport: u8,
    ) -> Ctx<'a> {
        Ctx { now, net, events, flows, framing, transport }
    }

    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    #[inline]
    pub fn framing(&self) -> Framing {
        self.framing
    }

    /// Hands a packet to its source host's NIC queue.
    #[inline]
    pub fn send(&mut self, pkt: Packet) {
        debug_assert!(pkt.src < self.net.hosts && pkt.dst < self.net.hosts, "packet between non-hosts");
        debug_assert!(pkt.src != pkt.dst, "packet from host {} to itself", pkt.src);
        let port = self.net.nic_port(pkt.src);
        let id = self.net.pool.alloc(pkt);
        self.net.enqueue(port, id, self.now, self.events);
    }

    /// Hands a packet carrying INT records to its source host's NIC (HPCC's receiver echoes the
    /// data packet's records in its ACK). Switches append only to data packets.
    pub fn send_with_int(&mut self, pkt: Packet, hops: &[IntHop]) {
        let port = self.net.nic_port(pkt.src);
        let id = self.net.pool.alloc(pkt);
        if let Some(t) = self.net.pool.int.as_deref_mut() {
            for &h in hops {
                t.stack_mut(id).push(h);
            }
        }
        self.net.enqueue(port, id, self.now, self.events);
    }

    /// The INT records of the packet being delivered in this `on_packet` callback (empty unless
    /// `[switch] int = true`).
    #[inline]
    pub fn int_hops(&self) -> &[IntHop] {
        self.net.pool.delivered_int_hops()
    }

    /// Calls `on_timer(kind, id)` at `at` (no cancellation: a protocol ignores stale timers).
    #[inline]
    pub fn set_timer(&mut self, at: Time, kind: impl TimerKind, id: u32) {
        debug_assert!(at >= self.now, "timer in the past");
        self.events.schedule(at, Event::Timer { kind: kind.encode(), transport: self.transport, id });
    }

    /// The flow's record: endpoints, size, start.
    #[inline]
    pub fn flow(&self, id: FlowId) -> &FlowRecord {
        self.flows.get(id)
    }

    /// `bytes` of application data reached the receiver for the first time.
    #[inline]
    pub fn delivered(&mut self, flow: FlowId, bytes: u64) {
        self.flows.delivered(flow, bytes, self.now);
    }

    /// The flow's sender has handed its last new byte to its NIC (once per flow; flows that wait
    /// for it start then, see `workload::dag`). Every protocol calls it when it first sends the
    /// packet carrying the last byte not sent before (a retransmission never counts); the
    /// conformance suite holds each to once per flow, between the flow's start and its finish.
    #[inline]
    pub fn sent(&mut self, flow: FlowId) {
        self.flows.sent(flow, self.now);
    }

    /// The receiver has every byte of the flow.
    #[inline]
    pub fn finished(&mut self, flow: FlowId) {
        self.flows.finish(flow, self.now);
    }

    /// Line rate of a host's NIC.
    #[inline]
    pub fn nic_rate(&self, host: HostId) -> Rate {
        self.net.nic_rate(host)
    }

    /// The host's NIC is not serializing and has nothing queued: a packet sent now starts at once.
    #[inline]
    pub fn nic_is_idle(&self, host: HostId) -> bool {
        let p = &self.net.ports[self.net.nic_port(host) as usize];
        p.busy_until <= self.now && p.packets == 0
    }

    /// Number of equal-cost paths between two hosts (for source routing).
    pub fn path_count(&self, src: HostId, dst: HostId) -> u64 {
        self.net.path_count(src, dst)
    }

    /// Switches a packet from `src` to `dst` crosses on the first equal-cost path (links - 1).
    pub fn hops(&self, src: HostId, dst: HostId) -> u32 {
        self.net.path_hops(src, dst).len().saturating_sub(1) as u32
    }

    /// Ask (or stop asking) to be told through `on_nic_idle` when the host's NIC goes idle.
    pub fn set_nic_idle_notify(&mut self, host: HostId, on: bool) {
        let port = self.net.nic_port(host) as usize;
        self.net.ports[port].notify_idle = on;
    }
}
