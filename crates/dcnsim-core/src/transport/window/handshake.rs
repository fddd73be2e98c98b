//! Connection set-up (`connection_setup = "handshake"`): a new connection first sends a SYN, the
//! receiver answers with a SYN-ACK, and data starts when the SYN-ACK arrives, as in the reference
//! simulators' TCPs (ns-2's FullTcp, which the ExpressPass authors ran DCTCP, DX and HULL on, has
//! `data_on_syn_ false` by default: no data before the handshake completes). A lone message's
//! completion time is then its ideal plus exactly one round trip of header-only packets.
//!
//! SYN and SYN-ACK are header-only ACK-kind packets (`control_bytes` on the wire, the
//! `control_priority` class) flagged `SYN`; which one a packet is follows from the host it reaches.
//! A lost SYN or SYN-ACK is recovered by the sender's timer: the SYN goes again after the initial
//! RTO (`initial_rto_us`), doubled per retry (RFC 6298 5.5; ns-2's `rtt_timeout` likewise
//! multiplies by `t_backoff_`); the receiver answers every SYN, so a lost SYN-ACK costs the same.
//! ns-2's SYN timeout is max(rtxcur_init_, minrto_) x backoff (tcp.cc rtt_timeout; defaults 3.0 s
//! and 0.2 s in tcl/lib/ns-default.tcl; the ExpressPass authors' scripts set `rtxcur_init_ 0.001`,
//! so 0.2 s, which their setups set as `initial_rto_us`); htsim's TcpSrc (the NDP paper's TCP) likewise sends a SYN and waits for the
//! SYN/ACK, with a 3 s initial `_rto`.
//! The SYN-ACK's round trip is the connection's first RTT sample unless the SYN was sent again
//! (Karn's rule). With a connection pool only a pool connection's first message opens it; later
//! messages on it start at once.
//!
//! Not modelled: the third ACK of the handshake (its information rides on the first data packet;
//! ns-2's FullTcp sends it as a pure ACK just ahead of the data, one header serialization), SYN
//! cookies, refused connections, and connection tear-down (FIN), which costs no completion time.

use super::timer::WindowTimer;
use super::{WindowProtocol, WindowTransport};
use crate::net::packet::{flags, FlowId, HostId, Packet, PacketKind};
use crate::spec_reader::{Section, SpecResult};
use crate::time::Time;
use crate::transport::parts::rtt::MAX_BACKOFF_SHIFT;
use crate::transport::Ctx;
use std::collections::HashMap;

/// How a connection opens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnectionSetup {
    /// Data leaves at the first instant.
    None,
    /// A SYN / SYN-ACK round trip first.
    Handshake,
}

/// Reads `connection_setup`.
pub fn read(s: &mut Section) -> SpecResult<ConnectionSetup> {
    let mode = s.choice_or(
        "connection_setup",
        &["none", "handshake"],
        "none",
        "how a new connection opens: none = data at once; handshake = a SYN / SYN-ACK round trip of header-only \
         packets first, SYN resent after initial_rto_us, doubling (ns-2 FullTcp, the ExpressPass evaluation's TCPs); \
         with connection_pool only a pool connection's first message pays it",
    )?;
    Ok(if mode == "handshake" { ConnectionSetup::Handshake } else { ConnectionSetup::None })
}

/// A connection waiting for its SYN-ACK.
#[derive(Clone, Copy, Debug)]
struct Opening {
    /// When the first SYN left (the RTT sample's start).
    first_sent: Time,
    /// SYNs sent again so far.
    retries: u32,
}

/// The handshakes under way, and their counters.
#[derive(Default)]
pub struct Handshakes {
    opening: HashMap<FlowId, Opening>,
    /// Connections whose SYN-ACK arrived.
    pub completed: u64,
    pub syn_retransmits: u64,
}

impl Handshakes {
    /// Connection `id` waits for its SYN-ACK (no data may leave).
    #[inline]
    pub fn is_opening(&self, id: FlowId) -> bool {
        self.opening.contains_key(&id)
    }
}

impl<P: WindowProtocol> WindowTransport<P> {
    /// Opens the new connection on `slot`: its first SYN and the timer that resends it.
    pub(super) fn open_connection(&mut self, ctx: &mut Ctx, slot: u32) {
        let hs = self.handshakes.as_mut().expect("handshake on");
        let id = self.conns[slot].id;
        debug_assert!(self.conns[slot].in_flight_bytes() == 0 && !hs.is_opening(id));
        hs.opening.insert(id, Opening { first_sent: ctx.now(), retries: 0 });
        self.send_syn(ctx, slot, 0);
    }

    /// Sends the SYN of the connection on `slot`, with the timer that resends it after the initial
    /// RTO doubled `retries` times.
    fn send_syn(&self, ctx: &mut Ctx, slot: u32, retries: u32) {
        let c = &self.conns[slot];
        let (src, dst) = c.endpoints();
        ctx.send(self.syn_packet(c.id, src, dst, c.path_key(), ctx.now()));
        let rto = self.cfg.sender.initial_rto << retries.min(MAX_BACKOFF_SHIFT);
        ctx.set_timer(ctx.now() + rto, WindowTimer::Syn, c.id);
    }

    /// A header-only SYN-flagged packet of connection `id` (a SYN or a SYN-ACK).
    fn syn_packet(&self, id: FlowId, from: HostId, to: HostId, path: u32, ts: Time) -> Packet {
        let cfg = &self.cfg.sender;
        let mut p = Packet::new(PacketKind::Ack, id, from, to, cfg.framing.control_bytes);
        p.flags |= flags::SYN;
        p.ts = ts;
        p.path = path;
        p.lb = cfg.lb;
        p.prio = cfg.control_priority;
        p
    }

    /// A SYN-flagged packet reached `host`: the receiver answers a SYN (every one, so a lost
    /// SYN-ACK is recovered by the SYN's timer); the sender's connection opens on its first SYN-ACK
    /// and sends its first window.
    pub(super) fn on_syn(&mut self, ctx: &mut Ctx, host: HostId, slot: u32, pkt: &Packet) {
        let c = &self.conns[slot];
        let ((src, dst), path) = (c.endpoints(), c.path_key());
        if host == dst && pkt.src == src {
            return ctx.send(self.syn_packet(pkt.flow, dst, src, path, pkt.ts));
        }
        let Some(hs) = self.handshakes.as_mut() else { return };
        if host != src {
            return;
        }
        let Some(o) = hs.opening.remove(&pkt.flow) else {
            return; // a duplicate SYN-ACK, or a stray
        };
        hs.completed += 1;
        let c = &mut self.conns[slot];
        if o.retries == 0 {
            c.on_rtt_sample(ctx.now() - o.first_sent);
        }
        c.send_window(ctx, &self.cfg.sender, &mut self.counters);
    }

    /// The SYN timer of connection `id` fired: the SYN goes again unless the SYN-ACK came.
    pub(super) fn on_syn_timer(&mut self, ctx: &mut Ctx, id: FlowId) {
        let Some(hs) = self.handshakes.as_mut() else { return };
        let Some(o) = hs.opening.get_mut(&id) else { return };
        o.retries += 1;
        hs.syn_retransmits += 1;
        let retries = o.retries;
        let slot = self.conns.slot(id).expect("an opening connection is in the table");
        self.send_syn(ctx, slot, retries);
    }

    /// The handshake counters, when the handshake is on (so the default's counters stay as they were).
    pub(super) fn handshake_counters(&self, out: &mut Vec<(&'static str, u64)>) {
        if let Some(hs) = &self.handshakes {
            out.push(("handshakes", hs.completed));
            out.push(("syn_retransmits", hs.syn_retransmits));
        }
    }
}
