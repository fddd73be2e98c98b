//! dcPIM: datacenter parallel iterative matching.
//!
//! Paper: Q. Cai, M. Tahmasbi Arashloo, R. Agarwal, "dcPIM: Near-Optimal Proactive Datacenter
//! Transport", SIGCOMM 2022, sections 3-4. Parameters and the details the paper leaves open follow
//! the authors' simulator (Terabit-Ethernet/dcPIM, `simulator/ext/pim{host,flow}.cpp`,
//! `coresim/leafSpineTopology.cpp`, `py/load_100Gbps/load.py`), which produced the paper's figures
//! and the SIRD paper's dcPIM numbers ("same as Cai et al.").
//!
//! Modelled:
//! - epochs of r matching rounds ([`matching`]): in each round receivers send a request to every
//!   sender they lack packets from, for the channels their smallest flow from it still needs
//!   (remaining packets / packets a channel carries per data phase, less channels already matched);
//!   senders grant up to their free channels; receivers accept up to theirs. Grants and accepts take
//!   the smallest flow first in the first `srpt_rounds` rounds, a random order after. A sender that
//!   is accepted beyond k channels rejects the excess. Each host link is k channels of 1/k of its
//!   rate, so a host is matched to up to k peers
//! - timing from the fabric: a round lasts beta x the control-packet RTT of the longest host pair
//!   (the receivers' half at its start, the senders' half a round later), the data phase alpha x r
//!   rounds; the next epoch is matched during the current data phase (the simulator's pipelining)
//! - the data phase ([`receiver`]): for each matched sender the receiver sends tokens paced at
//!   channels/k of its link rate, each for the next missing packet of its smallest flow from that
//!   sender, within a token window of `token_window_bdp` x channels/k; tokens expire at the end of
//!   the data phase (+ half a control RTT + k packet times); the sender serves unexpired tokens
//!   smallest flow first ([`sender`])
//! - short flows (at most `short_flow_bdp` BDPs, counted in packets) go out whole at once and are
//!   matched only if packets are missing once they had time to arrive plus the resend timeout
//! - three priority classes: control packets 0, short flows' data 1, long flows' data 2; or, with
//!   `data_priorities = "by_size"`, the simulator's data classes 1-6 by flow size in powers of 7
//!   packets (its `packet_priority`)
//! - loss recovery as the simulator: a full token window reopens after `token_window_timeout_bdp`
//!   without a token; once every missing packet was tokened, they are tokened again after
//!   `token_resend_timeout_bdp`; unmatched flows are requested again in later rounds and epochs.
//!   The simulator assumes lossless control packets; here a sender that hears nothing of a flow
//!   for `timeout_us` sends its RTS again (the receiver learns the flow, or repeats a lost ACK)
//!
//! Not modelled: the simulator's "prompt links" (a channel idle in the current data phase starting
//! tokens as soon as it is matched for the next one); the simulator's pFabric queues that drop the
//! lowest-priority packet rather than the arriving one; host processing delays; clock skew (every
//! host runs the same epoch clock from time 0); RPC replies. Choices of ours: a short flow sends no RTS (its data
//! carries the size), the token window is window x channels / k without the simulator's integer
//! division, the epoch clock stops while no receiver lacks packets (no tokens are then pending
//! anyway) and restarts at the next epoch boundary.
//!
//! Packet fields: data `seq` = packet index, `ack` = flow size, `aux` = token sequence number;
//! RTS (`CreditRequest` + flag PROTO2) `ack` = size; request (`CreditRequest`), grant (`Pull`),
//! accept (`Ack` + flag PROTO1) and reject (`Nack`): `seq` = epoch x 16 + round, `aux` = channels,
//! `ack` = packets left; token (`Credit`) `seq` = packet to send, `ack` = token sequence number,
//! `aux` = packets left, `ts` = expiry; final ACK (`Ack`). Anything else, or at the wrong end, is
//! ignored.
//!
//! Files: `config.rs` (keys), `state.rs` (plain data), `matching.rs` (epochs and rounds),
//! `receiver.rs` (flows learned, data, tokens), `sender.rs` (data, tokens held, probes).

mod config;
mod invariants;
mod matching;
mod receiver;
mod sender;
mod state;
#[cfg(test)]
mod tests;

pub use config::{DataPriorities, DcpimConfig};

use super::conns::ConnTable;
use super::parts::{MessageLayout, ReceivedSet, SilenceTimer};
use super::{ClassUse, Conformance, Ctx, Framing, LoneFlow, Needs, Protocol, SpecEnv, TransportEnv};
use crate::engine::rng::Rng;
use crate::net::packet::{flags, FlowId, HostId, Packet, PacketKind};
use crate::spec_reader::{Section, SpecResult};
use crate::transport::timer::timer_kinds;
use state::{Conn, Counters, Derived, Host};

timer_kinds! {
    /// dcPIM's timers.
    pub enum DcpimTimer for "dcPIM" {
        /// The matching rounds' half-round tick (id = 0).
        Tick = 0,
        /// A matched link's channel (id = receiver and channel).
        Link = 1,
        /// A sender's probe (id = flow).
        Probe = 2,
    }
}
/// On a `CreditRequest`: an RTS (else a matching request).
const RTS: u8 = flags::PROTO2;
/// On an `Ack`: a matching accept (else the final ACK).
const ACCEPT: u8 = flags::PROTO1;

pub struct Dcpim {
    cfg: DcpimConfig,
    framing: Framing,
    p: Derived,
    conns: ConnTable<Conn>,
    hosts: Vec<Host>,
    /// The epoch clock runs (a tick is pending).
    clock_on: bool,
    /// Tick at which the epoch being matched started.
    matching_start: Option<u64>,
    /// Flows known to receivers and not complete, over all hosts.
    pending_rx: u64,
    rng: Rng,
    /// A receiver's smallest flow per sender while it builds its requests (reused, no allocation).
    scratch: Vec<(HostId, u32)>,
    counters: Counters,
}

impl Dcpim {
    /// Fixes the timing from the fabric as the simulator does (`leafSpineTopology.cpp`).
    fn new(cfg: &DcpimConfig, env: &TransportEnv) -> Dcpim {
        let n = env.hosts();
        let far = n.saturating_sub(1);
        let mtu = env.framing.mtu_bytes as u64;
        let bdp_bytes = cfg.bdp_bytes.unwrap_or_else(|| env.bdp_bytes(0, far));
        let bdp_pkts = bdp_bytes.div_ceil(mtu).max(1);
        let pkt_time = env.nic_rate(0).tx_time(mtu as u32);
        let crtt = env.control_rtt(0, far);
        let half_round = ((cfg.round_length_crtts * crtt as f64 / 2.0).round() as u64).max(1);
        let epoch_ticks = (cfg.data_phase_ratio * 2.0 * cfg.rounds as f64).round() as u64;
        debug_assert!(epoch_ticks >= 2 * cfg.rounds as u64, "alpha >= 1");
        let data_phase = epoch_ticks * half_round;
        let bdp_time = |x: f64| (x * (bdp_pkts * pkt_time) as f64).round() as u64;
        let p = Derived {
            bdp_bytes,
            bdp_pkts,
            short_pkts: (cfg.short_flow_bdp * bdp_pkts as f64).round() as u64,
            pkt_time,
            crtt,
            half_round,
            epoch_ticks,
            link_pkts: (data_phase / pkt_time / cfg.channels as u64).max(1),
            window_pkts: cfg.token_window_bdp * bdp_pkts as f64,
            window_timeout: bdp_time(cfg.token_window_timeout_bdp).max(1),
            resend_timeout: bdp_time(cfg.token_resend_timeout_bdp).max(1),
            timeout: cfg.timeout.unwrap_or(4 * (data_phase + 2 * cfg.rounds as u64 * half_round)),
        };
        Dcpim {
            cfg: cfg.clone(),
            framing: env.framing,
            p,
            conns: ConnTable::default(),
            hosts: (0..n).map(|_| Host::default()).collect(),
            clock_on: false,
            matching_start: None,
            pending_rx: 0,
            rng: env.rng("dcpim"),
            scratch: Vec::new(),
            counters: Counters::default(),
        }
    }

    pub fn start_flow(&mut self, ctx: &mut Ctx, id: FlowId) {
        let rec = ctx.flow(id);
        let layout = MessageLayout::new(rec.size, self.framing);
        let conn = Conn {
            id,
            src: rec.src,
            dst: rec.dst,
            layout,
            start: rec.start,
            short: layout.packets() <= self.p.short_pkts,
            next_new: 0,
            tx_sent: ReceivedSet::default(),
            tx_remaining: layout.packets(),
            tx_silence: SilenceTimer::new(ctx.now()),
            rx_known: false,
            rx: ReceivedSet::default(),
            rx_done: false,
            tokens: 0,
            token_seen: -1,
            last_tokened: None,
            last_token_at: 0,
            resend_until: 0,
        };
        let slot = self.conns.insert(id, conn);
        self.start_sending(ctx, slot);
    }

    pub fn on_packet(&mut self, ctx: &mut Ctx, host: HostId, pkt: &Packet) {
        let Some(slot) = self.conns.slot(pkt.flow) else {
            return; // a straggler of a flow both ends are done with, or never started
        };
        let c = &self.conns[slot];
        let (src, dst) = (c.src, c.dst);
        // Data, RTSs, grants and rejects go to the receiver; the rest to the sender.
        let rts = pkt.kind == PacketKind::CreditRequest && pkt.has(RTS);
        let to_receiver = rts || matches!(pkt.kind, PacketKind::Data | PacketKind::Pull | PacketKind::Nack);
        let (at, from) = if to_receiver { (dst, src) } else { (src, dst) };
        if host != at || pkt.src != from {
            return; // at the wrong end
        }
        match pkt.kind {
            PacketKind::Data => self.on_data(ctx, slot, pkt),
            PacketKind::CreditRequest if rts => self.on_rts(ctx, slot),
            PacketKind::CreditRequest => self.on_request(slot, pkt),
            PacketKind::Pull => self.on_grant(slot, pkt),
            PacketKind::Ack if pkt.has(ACCEPT) => self.on_accept(ctx, slot, pkt),
            PacketKind::Ack => self.on_final_ack(slot),
            PacketKind::Nack => self.on_reject(slot, pkt),
            PacketKind::Credit => self.on_token(ctx, slot, pkt),
            _ => {} // not a dcPIM packet kind (e.g. a trimmed header)
        }
    }

    pub fn on_timer(&mut self, ctx: &mut Ctx, kind: DcpimTimer, id: u32) {
        match kind {
            DcpimTimer::Tick => self.on_tick(ctx),
            DcpimTimer::Link => self.on_link_timer(ctx, id),
            DcpimTimer::Probe => self.on_probe_timer(ctx, id),
        }
    }

    /// A control packet, at the highest priority, on the network's load balancing.
    fn send_control(&mut self, ctx: &mut Ctx, mut p: Packet) {
        p.prio = 0;
        p.lb = self.cfg.lb;
        p.path = p.flow.wrapping_mul(0x9e37_79b9) ^ 0x5a5a;
        p.ts = if p.kind == PacketKind::Credit { p.ts } else { ctx.now() };
        ctx.send(p);
    }

    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        let c = &self.counters;
        vec![
            ("data_packets_sent", c.data_sent),
            ("unscheduled_packets_sent", c.unscheduled_sent),
            ("retransmitted_packets", c.retransmitted),
            ("duplicate_packets", c.duplicates),
            ("tokens_sent", c.tokens),
            ("tokens_expired", c.tokens_expired),
            ("rts_sent", c.rts),
            ("sender_probes", c.probes),
            ("requests_sent", c.requests),
            ("grants_sent", c.grants),
            ("accepts_sent", c.accepts),
            ("rejects_sent", c.rejects),
            ("epochs", c.epochs),
            ("matched_channels", c.matched_channels),
            ("bdp_bytes", self.p.bdp_bytes),
            ("bdp_packets", self.p.bdp_pkts),
            ("round_ps", 2 * self.p.half_round),
            ("data_phase_ps", self.p.data_phase()),
            ("channel_packets_per_phase", self.p.link_pkts),
        ]
    }
}

impl Protocol for Dcpim {
    const NAMES: &'static [(&'static str, &'static str)] = &[(
        "dcpim",
        "dcPIM (Cai, Tahmasbi Arashloo, Agarwal, SIGCOMM'22): epochs of request/grant/accept matching rounds between receivers and senders on k channels per link, tokens on matched channels, short flows sent at once",
    )];
    const WANTS_NIC_IDLE: bool = true;
    type Config = DcpimConfig;
    type Timer = DcpimTimer;

    fn read(s: &mut Section, _name: &str, env: &SpecEnv) -> SpecResult<DcpimConfig> {
        DcpimConfig::read(s, env.load_balancing)
    }
    fn name(_cfg: &DcpimConfig) -> &'static str {
        "dcpim"
    }
    fn needs(cfg: &DcpimConfig) -> Needs {
        let classes = match (cfg.use_priorities, cfg.data_priorities) {
            (false, _) => Vec::new(),
            (true, DataPriorities::ShortLong) => vec![ClassUse {
                key: "use_priorities",
                class: 2,
                explicit: false,
                purpose: "control packets above short flows' data above long flows' data (section 4)",
            }],
            (true, DataPriorities::BySize) => vec![ClassUse {
                key: "data_priorities",
                class: 6,
                explicit: true,
                purpose: "data in classes 1-6 by flow size, as the authors' simulator",
            }],
        };
        Needs { classes, ..Needs::default() }
    }
    fn new(cfg: &DcpimConfig, env: &TransportEnv) -> Dcpim {
        Dcpim::new(cfg, env)
    }
    fn start_flow(&mut self, ctx: &mut Ctx, flow: FlowId) {
        Dcpim::start_flow(self, ctx, flow);
        let src = ctx.flow(flow).src;
        self.check_after(Some(flow), Some(src));
    }
    fn on_packet(&mut self, ctx: &mut Ctx, host: HostId, pkt: &Packet) {
        Dcpim::on_packet(self, ctx, host, pkt);
        self.check_after(Some(pkt.flow), Some(host));
    }
    fn on_timer(&mut self, ctx: &mut Ctx, kind: DcpimTimer, id: u32) {
        Dcpim::on_timer(self, ctx, kind, id);
        match kind {
            DcpimTimer::Tick => self.check_all_hosts(),
            DcpimTimer::Link => self.check_after(None, Some(id / config::MAX_CHANNELS as u32)),
            DcpimTimer::Probe => self.check_after(Some(id), None),
        }
    }
    fn on_nic_idle(&mut self, ctx: &mut Ctx, host: HostId) {
        self.pump(ctx, host);
        self.check_after(None, Some(host));
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Dcpim::counters(self)
    }
    /// Receiver: channels matched to the flow's sender in the current data phase, tokens
    /// outstanding and packets still missing. Sender: tokens held for the flow.
    fn flow_state(&self, flow: FlowId, out: &mut Vec<(&'static str, f64)>) {
        let Some(slot) = self.conns.slot(flow) else { return };
        let c = &self.conns[slot];
        let links = &self.hosts[c.dst as usize].links;
        let matched: u32 = links.iter().filter(|l| l.peer == c.src).map(|l| l.channels).sum();
        out.push(("matched_channels", matched as f64));
        out.push(("tokens_outstanding", c.token_gap().max(0) as f64));
        out.push(("missing_packets", c.rx_remaining() as f64));
        let held = self.hosts[c.src as usize].tokens.iter().filter(|t| t.slot == slot).count();
        out.push(("tokens_held", held as f64));
    }
    /// The paper's setup: three priority classes, per-packet spraying. Flows of at most 1 BDP (in
    /// packets) start at line rate at once; larger ones wait for the next epoch's matching: the
    /// RTS, up to one data phase to the epoch start, r rounds, then a token round trip. Rounds of
    /// 2 control RTTs: on the suite's 10 Gb/s fabric a grant can wait behind a full packet on the
    /// sender's NIC (1.2 us), more than the 0.3 control RTT of slack beta = 1.3 leaves (at the
    /// paper's 100 Gb/s it is 0.12 us); a grant that misses its round loses the pair an epoch.
    fn conformance(_name: &str) -> Conformance {
        Conformance {
            spec: "[queue]\npriorities = 3\n[routing]\nload_balancing = \"spray\"\n[transport]\nround_length_crtts = 2.0\n",
            lone_flow: LoneFlow::Handshake { exact_up_to_bdp: 0.9, max_extra_rtts: 16.0 },
            exempt: &[],
        }
    }
}
