//! NDP: receiver-driven, pull-paced transport over trimming switches.
//!
//! Paper: M. Handley, C. Raiciu, A. Agache, A. Voinescu, A. W. Moore, G. Antichi, M. Wojcik,
//! "Re-architecting datacenter networks and stacks for low latency and high performance",
//! SIGCOMM 2017, section 3. Details the paper leaves open follow htsim, the simulator NDP was
//! evaluated in (path scoreboard thresholds, bounce handling, pull spacing, RTO floor).
//!
//! Modelled:
//! - zero-RTT start: the first `initial_window_packets` go out at line rate, every one with SYN;
//!   afterwards the sender sends only when pulled, retransmissions first, then new data; the last
//!   packet is marked ([`sender`])
//! - receiver: ACK per data packet, NACK per trimmed header, one PULL queued per arrival; one pull
//!   queue per receiving host, served round robin over connections (strict priority for chosen
//!   senders as an option), paced at one pull per (MTU + control packet) time of the receiver's
//!   link; pulls carry a per-connection cumulative pull number; the last packet purges that
//!   sender's pulls ([`receiver`])
//! - combined PULLACK/PULL-NACK: when the receiver's pull queue is empty and a pull spacing has
//!   passed since its last pull, the ACK or NACK itself carries the pull (section 3.2 footnote;
//!   htsim's pacer does this), otherwise a separate PULL is queued; it later takes the path of the
//!   ACK or NACK that owed it (an ECMP key from its pull number), as htsim's pull is a copy of that
//!   packet, so it cannot overtake it and be spent before the NACK it answers arrives
//! - path selection with `routing.load_balancing = "source"`: the sender permutes the equal-cost
//!   paths, sends one packet per path, re-permutes; a per-path scoreboard of ACKs and NACKs (a
//!   return or an RTO loss counts as three NACKs) marks outlier paths, which are left out of the
//!   rotation until feedback from their packets still in flight looks normal again (htsim's
//!   behaviour); a retransmission always takes a different path than the packet's last one
//!   ([`paths`])
//! - return-to-sender: a bounced header is resent at once only if no more pulls are expected
//!   (nothing ACKed or NACKed but not yet pulled, and the first window is used up) or if recent
//!   feedback was more than a quarter ACKs (a bad path, not an incast); otherwise it waits for a pull
//! - RTO for true losses: floor `min_rto_us`, SRTT/RTTVAR from ACK time stamps (RFC 6298, the
//!   shared [`RttEstimator`]), doubled per timeout up to 1 s; the deadline (oldest packet out plus
//!   the RTO) follows the RTO down as samples arrive, as htsim recomputes it per ACK. NACKed and
//!   returned packets wait for pulls and never time out while pulls or feedback still arrive
//!   (htsim never times them out); after an RTO of silence one is resent (its pulls were lost)
//!
//! Not modelled: the connection-establishment state machine and time-wait (flows are known to both
//! ends from their first packet), NIC/host processing delays, receiver-side congestion control for
//! oversubscribed fabrics, MPTCP.
//!
//! pHost (Gao et al., CoNEXT 2015), as the NDP paper evaluates it (section 6.2, "Who needs packet
//! trimming?"), is this module with `phost = true` on plain drop-tail switches: the first BDP goes
//! out unscheduled at line rate, sprayed per packet; then the receiver grants tokens, paced at its
//! link rate, shortest-remaining-first, as the pHost authors' simulator does: each token names the
//! next packet not yet received, a flow gets none while a window of its tokens is unanswered (the
//! pacer serves the next flow; the window slides after a timeout), and a round of tokens that has
//! covered the flow is followed, after a pause, by one over the packets still missing (recovery
//! from drops, at the receiver). The sender answers with the named packet, and its own timer only
//! sends a request (pHost's RTS) while the receiver has not heard of the flow ([`phost`]). Not
//! modelled for pHost: token expiry at the sender.
//!
//! Packet fields: `seq` = packet index within the flow; `aux` = the path id the data packet took
//! (echoed in ACK/NACK); `ts` = send time (echoed); `ack` = pull number on PULLs and on ACKs/NACKs
//! that carry a pull (flag `PULL_BIT`); pHost's tokens are PULLs whose `seq` names the packet and
//! `ack` numbers the token, which pHost's data packets echo in `ack`.
//!
//! Files: [`config`] (keys and defaults of both protocols), [`sender`], [`receiver`] (and the
//! per-host pull pacer), [`phost`] (pHost's tokens), [`paths`] (path scoreboard). Both halves of a
//! connection live in one [`Conn`], each touched only by its own host's events.

mod config;
mod paths;
mod phost;
mod receiver;
mod sender;
#[cfg(test)]
mod tests;
mod tokens;

pub use config::{NdpConfig, PullOrder};

use super::conns::ConnTable;
use super::parts::{MessageLayout, RttEstimator};
use super::{ClassUse, Conformance, Ctx, Framing, LoneFlow, Needs, Protocol, SpecEnv, TransportEnv};
use crate::engine::rng::Rng;
use crate::net::packet::{flags, FlowId, HostId, LoadBalancing, Packet, PacketKind};
use crate::spec_reader::{Section, SpecResult};
use crate::transport::timer::timer_kinds;
use paths::PathScoreboard;
use receiver::{Puller, Receiver};
use sender::Sender;

timer_kinds! {
    /// NDP's timers.
    pub enum NdpTimer for "NDP" {
        /// A host's pull pacer (id = host).
        Pull = 1,
        /// A flow's retransmission timer (id = flow).
        Rto = 2,
        /// pHost: a flow's token wake-up (id = flow).
        Token = 3,
    }
}
/// An ACK or NACK with this flag also carries a pull (number in `ack`).
const PULL_BIT: u8 = flags::PROTO1;

/// One connection: the sender's half and the receiver's.
struct Conn {
    id: FlowId,
    src: HostId,
    dst: HostId,
    layout: MessageLayout,
    tx: Sender,
    rx: Receiver,
    /// The sender has every ACK; the slot is freed once no pull queue refers to it.
    retired: bool,
}

pub struct Ndp {
    cfg: NdpConfig,
    framing: Framing,
    conns: ConnTable<Conn>,
    /// One per host.
    pullers: Vec<Puller>,
    rng: Rng,
    counters: Counters,
    /// pHost: the number of the token a data packet about to be emitted answers (echoed in `ack`).
    token_stamp: u64,
}

#[derive(Default)]
struct Counters {
    data_sent: u64,
    retransmitted: u64,
    nacks: u64,
    bounces: u64,
    bounce_resends: u64,
    timeouts: u64,
    pulls: u64,
    wasted_pulls: u64,
    reissued_tokens: u64,
    token_rounds: u64,
    token_window_timeouts: u64,
}

impl Ndp {
    fn new(cfg: &NdpConfig, env: &TransportEnv) -> Ndp {
        let bytes = env.framing.mtu_bytes + env.framing.control_bytes;
        let puller = |h: u32| {
            let gap = env.nic_rate(h).tx_time(bytes) as f64 / cfg.pull_rate_fraction;
            Puller::new(gap.round() as _)
        };
        Ndp {
            cfg: cfg.clone(),
            framing: env.framing,
            conns: ConnTable::default(),
            pullers: (0..env.hosts()).map(puller).collect(),
            rng: env.rng("ndp"),
            counters: Counters::default(),
            token_stamp: 0,
        }
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let c = &self.counters;
        let mut v = vec![
            ("data_packets_sent", c.data_sent),
            ("retransmitted_packets", c.retransmitted),
            ("nacks", c.nacks),
            ("bounces", c.bounces),
            ("bounce_resends", c.bounce_resends),
            ("timeouts", c.timeouts),
            ("pulls_sent", c.pulls),
            ("wasted_pulls", c.wasted_pulls),
        ];
        if self.cfg.phost {
            v.push(("reissued_tokens", c.reissued_tokens));
            v.push(("token_rounds", c.token_rounds));
            v.push(("token_window_timeouts", c.token_window_timeouts));
        }
        v
    }

    /// Opens the connection and sends the first window at line rate.
    fn start_flow(&mut self, ctx: &mut Ctx, id: FlowId) {
        let rec = ctx.flow(id);
        let (src, dst) = (rec.src, rec.dst);
        let layout = MessageLayout::new(rec.size, self.framing);
        let n_paths = match self.cfg.lb {
            LoadBalancing::Source => ctx.path_count(src, dst).min(u16::MAX as u64) as u32,
            _ => 1,
        };
        let paths = PathScoreboard::new(n_paths, &mut self.rng);
        let first_window = self.cfg.initial_window_packets.min(layout.packets());
        let rtt = RttEstimator::new(self.cfg.initial_rto, self.cfg.min_rto);
        let priority = self.cfg.prioritize_senders.contains(&src);
        let conn = Conn {
            id,
            src,
            dst,
            layout,
            tx: Sender::new(first_window, paths, rtt, ctx.now()),
            rx: Receiver::new(priority),
            retired: false,
        };
        let slot = self.conns.insert(id, conn);
        for _ in 0..first_window {
            self.send_one(ctx, slot, true);
        }
        self.debug_check(id, None);
    }

    /// Packets of finished flows, strays at the wrong end and kinds NDP does not use are ignored.
    fn on_packet(&mut self, ctx: &mut Ctx, host: HostId, pkt: &Packet) {
        let Some(slot) = self.conns.slot(pkt.flow) else { return };
        let (at_receiver, at_sender) = (host == self.conns[slot].dst, host == self.conns[slot].src);
        match pkt.kind {
            PacketKind::Data | PacketKind::Header if at_receiver && self.cfg.phost => {
                self.phost_arrival(ctx, slot, pkt)
            }
            PacketKind::Data | PacketKind::Header if at_receiver => self.on_arrival(ctx, slot, pkt),
            PacketKind::CreditRequest if at_receiver && self.cfg.phost => self.on_request(ctx, slot),
            PacketKind::Pull if at_sender && self.cfg.phost => self.on_token(ctx, slot, pkt.seq, pkt.ack),
            PacketKind::Ack | PacketKind::Nack if at_sender => {
                self.on_feedback(ctx, slot, pkt);
                // The feedback may have retired the connection.
                if pkt.has(PULL_BIT) && self.conns.slot(pkt.flow) == Some(slot) {
                    self.on_pull(ctx, slot, pkt.ack);
                }
            }
            PacketKind::Pull if at_sender => self.on_pull(ctx, slot, pkt.ack),
            PacketKind::Bounced if at_sender => self.on_bounce(ctx, slot, pkt),
            _ => {}
        }
        self.debug_check(pkt.flow, Some(host));
    }

    fn on_timer(&mut self, ctx: &mut Ctx, kind: NdpTimer, id: u32) {
        match kind {
            NdpTimer::Pull => {
                let pulled = self.pace(ctx, id);
                self.debug_check(pulled.unwrap_or(FlowId::MAX), Some(id));
            }
            NdpTimer::Rto => {
                self.on_rto(ctx, id);
                self.debug_check(id, None);
            }
            NdpTimer::Token => {
                self.on_token_wake(ctx, id);
                self.debug_check(id, None);
            }
        }
    }

    /// In debug builds: the invariants of the flow's connection if it is still open, and of the
    /// pull queue of `host` and the flow's receiver.
    #[inline]
    fn debug_check(&self, flow: FlowId, host: Option<HostId>) {
        if cfg!(debug_assertions) {
            if let Some(slot) = self.conns.slot(flow) {
                self.check_conn(slot);
                self.check_puller(self.conns[slot].dst);
            }
            if let Some(h) = host {
                self.check_puller(h);
            }
        }
    }

    /// Each half's invariants, and what ties them: the receiver holds at least what was ACKed and
    /// at most what was sent.
    fn check_conn(&self, slot: u32) {
        let c = &self.conns[slot];
        assert!(!c.retired, "a retired connection is still found by id");
        let packets = c.layout.packets();
        c.tx.check_invariants(packets, c.rx.pulls_sent, self.cfg.phost);
        c.rx.check_invariants(packets);
        if self.cfg.phost {
            c.rx.tokens.check_invariants(self.cfg.token_window_packets.max(self.cfg.initial_window_packets));
        }
        let got = c.rx.received_count();
        assert!(c.tx.acked <= got && got <= c.tx.sent(), "{} ACKed, {got} received, {} sent", c.tx.acked, c.tx.sent());
    }
}

impl Protocol for Ndp {
    const NAMES: &'static [(&'static str, &'static str)] = &[
        ("ndp", "NDP (Handley et al., SIGCOMM'17): zero-RTT start, receiver-paced pulls, trimming switches, sender-chosen paths"),
        ("phost", "pHost (Gao et al., CoNEXT'15) as the NDP paper runs it: receiver tokens paced at line rate, SRPT, drop-tail switches"),
    ];
    type Config = NdpConfig;
    type Timer = NdpTimer;

    fn read(s: &mut Section, name: &str, env: &SpecEnv) -> SpecResult<NdpConfig> {
        NdpConfig::read(s, env.load_balancing, name == "phost")
    }
    fn name(cfg: &NdpConfig) -> &'static str {
        if cfg.phost {
            "phost"
        } else {
            "ndp"
        }
    }
    fn needs(cfg: &NdpConfig) -> Needs {
        Needs {
            classes: vec![ClassUse {
                key: "protocol",
                class: 1,
                explicit: false,
                purpose: "data below control packets (pulls, ACKs, NACKs, headers)",
            }],
            trimming: (!cfg.phost).then_some(
                "NDP needs trimming switches: set [queue] trim = true (protocol = \"phost\" runs its pulls on drop-tail switches)",
            ),
            hosts: cfg.prioritize_senders.iter().map(|&h| ("prioritize_senders", h as u64)).collect(),
            ..Needs::default()
        }
    }
    /// As the NDP paper simulates them, with 9 KB packets. NDP: trimming switches with headers
    /// and control in their own class (served 10:1 over data), 8-packet data queues, sender-chosen
    /// paths. pHost: the same classes on drop-tail switches, per-packet spraying. Both send the
    /// first window at line rate; a lone flow is then exactly ideal while that window's headroom
    /// over the BDP absorbs the pull pacer's lag (one pull per MTU + control packet time, htsim's
    /// pacing: 64 B per 9064 B packet, under a packet per MB), i.e. for flows up to tens of MB.
    /// (With 1500 B packets the lag is 64 B per 1564 B and a lone 1 MB flow ends 5-10 us late.)
    fn conformance(name: &str) -> Conformance {
        let spec = if name == "ndp" {
            "[net]\nmtu_bytes = 9000\n[queue]\npriorities = 2\nlimit_packets = 8\ntrim = true\nscheduling = \"wrr\"\n\
             wrr_weights = [10, 1]\n[routing]\nload_balancing = \"source\"\n"
        } else {
            "[net]\nmtu_bytes = 9000\n[queue]\npriorities = 2\n[routing]\nload_balancing = \"spray\"\n"
        };
        Conformance { spec, lone_flow: LoneFlow::Exact, exempt: &[] }
    }
    fn new(cfg: &NdpConfig, env: &TransportEnv) -> Ndp {
        Ndp::new(cfg, env)
    }
    fn start_flow(&mut self, ctx: &mut Ctx, flow: FlowId) {
        Ndp::start_flow(self, ctx, flow)
    }
    fn on_packet(&mut self, ctx: &mut Ctx, host: HostId, pkt: &Packet) {
        Ndp::on_packet(self, ctx, host, pkt)
    }
    fn on_timer(&mut self, ctx: &mut Ctx, kind: NdpTimer, id: u32) {
        Ndp::on_timer(self, ctx, kind, id)
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Ndp::counters(self)
    }
    /// The whole connection (472 bytes: either half may be the one the packet reaches).
    #[inline(always)]
    fn prefetch_flow(&self, flow: FlowId, early: bool) {
        self.conns.prefetch(flow, early, 16);
    }
    /// What the packet's handler reads behind the connection (fetched a stage earlier).
    #[inline(always)]
    fn prefetch_flow_state(&self, pkt: &Packet) {
        let Some(slot) = self.conns.slot(pkt.flow) else { return };
        let c = &self.conns[slot];
        match pkt.kind {
            PacketKind::Data | PacketKind::Header => {
                c.rx.received.prefetch();
                if let Some(pl) = self.pullers.get(c.dst as usize) {
                    crate::engine::prefetch::line(pl);
                }
            }
            PacketKind::Ack | PacketKind::Nack | PacketKind::Bounced => {
                c.tx.prefetch_feedback(pkt.seq, pkt.aux as u16);
                if pkt.has(PULL_BIT) {
                    c.tx.prefetch_send();
                }
            }
            PacketKind::Pull => c.tx.prefetch_send(),
            _ => {}
        }
    }
    /// Sender: packets in flight, pulls still expected (feedback received but not yet pulled),
    /// retransmissions waiting for a pull, srtt once measured. Receiver: pulls queued at its pacer
    /// and pulls sent so far.
    fn flow_state(&self, flow: FlowId, out: &mut Vec<(&'static str, f64)>) {
        let Some(slot) = self.conns.slot(flow) else { return };
        let c = &self.conns[slot];
        out.push(("in_flight_packets", c.tx.in_flight() as f64));
        out.push(("pulls_expected", c.tx.pull_window as f64));
        out.push(("retransmit_queue_packets", c.tx.retransmit_queue_len() as f64));
        if let Some(srtt) = c.tx.srtt_ps() {
            out.push(("srtt_us", srtt / 1e6));
        }
        out.push(("receiver_pulls_queued", c.rx.pending_pulls as f64));
        out.push(("receiver_pulls_sent", c.rx.pulls_sent as f64));
    }
}
