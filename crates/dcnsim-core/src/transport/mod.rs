//! Transports plug in here. The simulator dispatches on a plain enum (no trait objects on the hot
//! path); each protocol lives in its own module and sees the world only through `Ctx`:
//! send a packet from a host, set a timer, report delivered bytes and finished flows.
//!
//! Hooks a protocol may implement: a flow starts; a packet reaches one of its hosts; a timer
//! fires; a host NIC goes idle (for protocols that choose the next packet at transmission time,
//! e.g. receiver-driven ones: set `Network::ports[nic].notify_idle`).

pub mod conns;
pub mod dctcp;
pub mod ndp;
pub mod sird;

use crate::engine::events::{Event, EventQueue};
use crate::engine::time::Time;
use crate::metrics::flows::FlowLog;
use crate::net::packet::{FlowId, HostId, LoadBalancing, Packet};
use crate::net::Network;
use crate::scenario::reader::{Section, SpecResult};

/// Network-wide packet format, shared by every transport.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Framing {
    /// Wire bytes of a full-sized data packet, headers included.
    pub mtu_bytes: u32,
    /// Header bytes in every data packet (on the wire, counted in `mtu_bytes`).
    pub header_bytes: u32,
    /// Wire bytes of a control packet (ACK, NACK, PULL, credit, trimmed header).
    pub control_bytes: u32,
}

impl Framing {
    /// Application payload of a full-sized packet.
    pub fn mss(&self) -> u32 {
        self.mtu_bytes - self.header_bytes
    }

    /// Wire size of the packet carrying `payload` bytes.
    pub fn wire(&self, payload: u32) -> u32 {
        payload + self.header_bytes
    }
}

/// The transport's view of the world during one callback.
pub struct Ctx<'a> {
    pub now: Time,
    pub net: &'a mut Network,
    pub events: &'a mut EventQueue,
    pub flows: &'a mut FlowLog,
    pub framing: Framing,
}

impl Ctx<'_> {
    /// Hands a packet to its source host's NIC queue.
    #[inline]
    pub fn send(&mut self, pkt: Packet) {
        let port = self.net.nic_port(pkt.src);
        let id = self.net.pool.alloc(pkt);
        self.net.enqueue(port, id, self.now, self.events);
    }

    #[inline]
    pub fn set_timer(&mut self, at: Time, kind: u8, id: u32) {
        self.events.schedule(at, Event::Timer { kind, id });
    }

    /// `bytes` of application data reached the receiver for the first time.
    #[inline]
    pub fn delivered(&mut self, flow: FlowId, bytes: u64) {
        self.flows.delivered(flow, bytes, self.now);
    }

    /// The receiver has every byte of the flow.
    #[inline]
    pub fn finished(&mut self, flow: FlowId) {
        self.flows.finish(flow, self.now);
    }
}

pub const PROTOCOLS: &[(&str, &str)] = &[
    ("dctcp", "DCTCP (Alizadeh et al., SIGCOMM'10): ECN-driven window control over NewReno"),
    ("newreno", "TCP NewReno: the same sender with ECN off (reacts to loss only)"),
    ("ndp", "NDP (Handley et al., SIGCOMM'17): zero-RTT start, receiver-paced pulls, trimming switches, sender-chosen paths"),
    ("phost", "pHost (Gao et al., CoNEXT'15) as the NDP paper runs it: receiver tokens paced at line rate, SRPT, drop-tail switches"),
    ("sird", "SIRD (Prasopoulos, Bugnion, Kogias): receiver credit with informed overcommitment (global bucket B, per-sender buckets cut by ECN and the sender's csn bit)"),
];

#[derive(Clone, Debug, PartialEq)]
pub enum TransportSpec {
    Dctcp(dctcp::DctcpConfig),
    Ndp(ndp::NdpConfig),
    Sird(sird::SirdConfig),
}

impl TransportSpec {
    /// Reads `[transport]`. In describe mode documents every protocol's parameters.
    pub fn read(s: &mut Section, lb: LoadBalancing) -> SpecResult<TransportSpec> {
        let names: Vec<&str> = PROTOCOLS.iter().map(|p| p.0).collect();
        if s.is_describe() {
            dctcp::DctcpConfig::read(s, true, lb)?;
            ndp::NdpConfig::read(s, lb, false)?;
            sird::SirdConfig::read(s, lb)?;
        }
        let protocol = s.choice("protocol", &names, "transport protocol")?;
        Ok(match protocol.as_str() {
            "dctcp" => TransportSpec::Dctcp(dctcp::DctcpConfig::read(s, true, lb)?),
            "newreno" => TransportSpec::Dctcp(dctcp::DctcpConfig::read(s, false, lb)?),
            "ndp" => TransportSpec::Ndp(ndp::NdpConfig::read(s, lb, false)?),
            "phost" => TransportSpec::Ndp(ndp::NdpConfig::read(s, lb, true)?),
            "sird" => TransportSpec::Sird(sird::SirdConfig::read(s, lb)?),
            other => unreachable!("{other}"),
        })
    }

    pub fn name(&self) -> &'static str {
        match self {
            TransportSpec::Dctcp(c) if c.ecn => "dctcp",
            TransportSpec::Dctcp(_) => "newreno",
            TransportSpec::Ndp(c) if c.phost => "phost",
            TransportSpec::Ndp(_) => "ndp",
            TransportSpec::Sird(_) => "sird",
        }
    }
}

pub enum Transport {
    Dctcp(dctcp::Dctcp),
    Ndp(ndp::Ndp),
    Sird(sird::Sird),
}

impl Transport {
    pub fn new(spec: &TransportSpec, framing: Framing, hosts: u32, seed: u64) -> Transport {
        match spec {
            TransportSpec::Dctcp(c) => Transport::Dctcp(dctcp::Dctcp::new(c.clone(), framing, hosts)),
            TransportSpec::Ndp(c) => Transport::Ndp(ndp::Ndp::new(c.clone(), framing, hosts, seed)),
            TransportSpec::Sird(c) => Transport::Sird(sird::Sird::new(c.clone(), framing, hosts, seed)),
        }
    }

    #[inline]
    pub fn start_flow(&mut self, ctx: &mut Ctx, flow: FlowId) {
        match self {
            Transport::Dctcp(t) => t.start_flow(ctx, flow),
            Transport::Ndp(t) => t.start_flow(ctx, flow),
            Transport::Sird(t) => t.start_flow(ctx, flow),
        }
    }

    #[inline]
    pub fn on_packet(&mut self, ctx: &mut Ctx, host: HostId, pkt: &Packet) {
        match self {
            Transport::Dctcp(t) => t.on_packet(ctx, host, pkt),
            Transport::Ndp(t) => t.on_packet(ctx, host, pkt),
            Transport::Sird(t) => t.on_packet(ctx, host, pkt),
        }
    }

    #[inline]
    pub fn on_timer(&mut self, ctx: &mut Ctx, kind: u8, id: u32) {
        match self {
            Transport::Dctcp(t) => t.on_timer(ctx, kind, id),
            Transport::Ndp(t) => t.on_timer(ctx, kind, id),
            Transport::Sird(t) => t.on_timer(ctx, kind, id),
        }
    }

    #[inline]
    pub fn on_nic_idle(&mut self, ctx: &mut Ctx, host: HostId) {
        match self {
            Transport::Dctcp(_) | Transport::Ndp(_) => {}
            Transport::Sird(t) => t.on_nic_idle(ctx, host),
        }
    }

    /// Protocol counters for the summary (retransmissions, timeouts, ...).
    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        match self {
            Transport::Dctcp(t) => t.counters(),
            Transport::Ndp(t) => t.counters(),
            Transport::Sird(t) => t.counters(),
        }
    }
}
