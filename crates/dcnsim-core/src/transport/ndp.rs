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
//!   packet is marked
//! - receiver: ACK per data packet, NACK per trimmed header, one PULL queued per arrival; one pull
//!   queue per receiving host, served round robin over connections (strict priority for chosen
//!   senders as an option), paced at one pull per (MTU + control packet) time of the receiver's link;
//!   pulls carry a per-connection cumulative pull number; the last packet purges that sender's pulls
//! - path selection with `routing.load_balancing = "source"`: the sender permutes the equal-cost
//!   paths, sends one packet per path, re-permutes; a per-path scoreboard of ACKs and NACKs (a
//!   return or an RTO loss counts as three NACKs) marks outlier paths, which are left out of the
//!   rotation until feedback from their packets still in flight looks normal again (htsim's
//!   behaviour); a retransmission always takes a different path than the packet's last one
//! - return-to-sender: a bounced header is resent at once only if no more pulls are expected
//!   (nothing ACKed or NACKed but not yet pulled, and the first window is used up) or if recent
//!   feedback was at least a quarter ACKs (a bad path, not an incast); otherwise it waits for a pull
//! - RTO for true losses: floor `min_rto_us`, SRTT/RTTVAR from ACK time stamps
//!
//! - combined PULLACK/PULL-NACK: when the receiver's pull queue is empty and a pull spacing has passed
//!   since its last pull, the ACK or NACK itself carries the pull (section 3.2 footnote; htsim's
//!   pacer does this), otherwise a separate PULL is queued
//!
//! Not modelled: the connection-establishment state machine and time-wait (flows are known to both
//! ends from their first packet), NIC/host processing delays, receiver-side congestion control for
//! oversubscribed fabrics.
//!
//! pHost (Gao et al., CoNEXT 2015), as the NDP paper evaluates it (section 6.2, "Who needs packet
//! trimming?"), is this module with `phost = true`: the same receiver-driven pulls (tokens), one per
//! arriving packet and paced at the receiver's link rate, granted shortest-remaining-first, with the
//! first BDP sent unscheduled at line rate and per-packet spraying — but on plain drop-tail
//! switches, so a lost packet is only recovered by the sender's timeout. Not modelled for pHost:
//! token expiry and the RTS handshake (the first window doubles as the request).
//!
//! Packet fields: `seq` = packet index within the flow; `aux` = the path id the data packet took
//! (echoed in ACK/NACK for the scoreboard); `ts` = send time (echoed); `ack` = pull number on PULLs
//! and on ACKs/NACKs that carry a pull (flag `PULL_BIT`).

use super::conns::ConnTable;
use super::{Conformance, Ctx, Framing, LoneFlow, Protocol, SpecEnv, TransportEnv};
use crate::engine::rng::Rng;
use crate::engine::time::{from_us, Rate, Time};
use crate::net::packet::{flags, FlowId, HostId, LoadBalancing, Packet, PacketKind};
use crate::scenario::reader::{Section, SpecResult};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

const TIMER_PULL: u8 = 1;
const TIMER_RTO: u8 = 2;
/// An ACK or NACK with this flag also carries a pull (number in `ack`).
const PULL_BIT: u8 = flags::PROTO1;
/// Feedback events remembered per connection for the return-to-sender decision (htsim: 12).
const HISTORY: usize = 12;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PullOrder {
    /// Round robin over connections (NDP's default).
    Fair,
    /// The connection with the fewest packets left first (pHost's default).
    Srpt,
}

#[derive(Clone, Debug, PartialEq)]
pub struct NdpConfig {
    /// pHost rather than NDP (only changes defaults and the protocol name).
    pub phost: bool,
    pub initial_window_packets: u64,
    pub pull_order: PullOrder,
    /// Pull rate as a fraction of the receiver's link rate.
    pub pull_rate: f64,
    pub min_rto: Time,
    pub initial_rto: Time,
    pub path_penalty: bool,
    pub return_to_sender_resend: bool,
    pub prioritize_senders: Vec<u32>,
    pub lb: LoadBalancing,
}

impl NdpConfig {
    pub fn read(s: &mut Section, lb: LoadBalancing, phost: bool) -> SpecResult<NdpConfig> {
        let (iw_default, order_default, rto_default) = if phost { (8, "srpt", 1000.0) } else { (30, "fair", 5000.0) };
        let iw = s.u64_or(
            "initial_window_packets",
            iw_default,
            "packets",
            "[ndp: 30 (the paper's simulations), phost: 8 (1 BDP)] packets sent at line rate before the first pull",
        )?;
        s.ensure((1..=100_000).contains(&iw), "initial_window_packets", "must be in [1, 100000]")?;
        let order = s.choice_or(
            "pull_order",
            &["fair", "srpt"],
            order_default,
            "[ndp: fair, phost: srpt] which connection a receiver pulls next: round robin, or fewest packets left",
        )?;
        let pull_rate = s.f64_or(
            "pull_rate",
            1.0,
            "fraction",
            "[ndp, phost] pulls are paced at this fraction of the receiver's link rate (one per MTU + control packet)",
        )?;
        s.ensure(pull_rate > 0.0 && pull_rate <= 10.0, "pull_rate", "must be in (0, 10]")?;
        let min_rto = s.f64_or(
            "min_rto_us",
            rto_default,
            "us",
            "[ndp: 5000 (htsim), phost: 1000] floor of the retransmission timeout",
        )?;
        s.ensure(min_rto > 0.0 && min_rto <= crate::limits::MAX_RTO_US, "min_rto_us", "must be in (0, 1e7] us")?;
        let init_rto = s.f64_or(
            "initial_rto_us",
            20000.0,
            "us",
            "[ndp, phost] retransmission timeout before an RTT sample (htsim: 20 ms)",
        )?;
        s.ensure(init_rto > 0.0 && init_rto <= crate::limits::MAX_RTO_US, "initial_rto_us", "must be in (0, 1e7] us")?;
        let path_penalty = s.bool_or("path_penalty", !phost,
            "[ndp: true, phost: false] leave paths whose NACK ratio (returns and RTO losses weigh 3) is an outlier out of use (section 3.2.3); needs source routing")?;
        let rts = s.bool_or(
            "return_to_sender_resend",
            true,
            "[ndp] resend a returned header at once when no more pulls are expected or the path looks bad",
        )?;
        let prio: Vec<f64> = s.f64_list_or(
            "prioritize_senders",
            &[],
            "hosts",
            "[ndp] receivers serve pulls for flows from these senders first (strict priority)",
        )?;
        s.ensure(prio.iter().all(|&h| h >= 0.0 && h.fract() == 0.0), "prioritize_senders", "must be host ids")?;
        s.ensure(
            lb != LoadBalancing::Ecmp || s.is_describe(),
            "protocol",
            "NDP and pHost spray every packet: set routing.load_balancing = \"source\" or \"spray\"",
        )?;
        Ok(NdpConfig {
            phost,
            initial_window_packets: iw,
            pull_order: if order == "srpt" { PullOrder::Srpt } else { PullOrder::Fair },
            pull_rate,
            min_rto: from_us(min_rto),
            initial_rto: from_us(init_rto),
            path_penalty,
            return_to_sender_resend: rts,
            prioritize_senders: prio.iter().map(|&h| h as u32).collect(),
            lb,
        })
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Sent {
    /// On its way; sent at this time on this path.
    Out {
        at: Time,
        path: u16,
    },
    /// NACKed, returned or timed out: waiting in the retransmission queue.
    Queued {
        path: u16,
    },
    Acked,
}

#[derive(Clone, Copy, Default)]
struct PathScore {
    acks: u32,
    nacks: u32,
    /// Penalty count (htsim's avoid ratio): +1 per feedback that finds the path an outlier, -1 per
    /// feedback that does not; the path is skipped while it is positive.
    avoid: u32,
}

struct Conn {
    id: FlowId,
    src: HostId,
    dst: HostId,
    packets: u64,
    last_payload: u32,
    // Sender.
    next_new: u64,
    /// State of packets base.. (front = packet `base`); packets below base are all ACKed.
    base: u64,
    window: VecDeque<Sent>,
    acked: u64,
    rtx: BinaryHeap<Reverse<u64>>,
    last_pull: u64,
    pull_window: i64,
    first_window_left: i64,
    paths: Vec<u32>,
    cursor: usize,
    scores: Vec<PathScore>,
    /// Sums of ACKs and NACKs over all paths (for the outlier test's means).
    total_acks: u64,
    total_nacks: u64,
    history: [u8; HISTORY],
    history_at: usize,
    srtt: f64,
    rttvar: f64,
    rto: Time,
    rto_armed: bool,
    // Receiver.
    received: Vec<u64>,
    received_count: u64,
    pulls_sent: u64,
    pending_pulls: u64,
    queued_for_pull: bool,
    priority: bool,
    done_rx: bool,
    /// The sender has every ACK; the slot is freed once no pull queue refers to it.
    retired: bool,
}

/// A receiving host's pull queue and pacer.
#[derive(Default)]
struct Puller {
    high: VecDeque<u32>,
    fair: VecDeque<u32>,
    /// The pacer's next free slot, and whether a pacer timer is pending.
    next_at: Time,
    armed: bool,
    spacing: Time,
}

pub struct Ndp {
    cfg: NdpConfig,
    framing: Framing,
    conns: ConnTable<Conn>,
    pullers: Vec<Puller>,
    rng: Rng,
    counters: Counters,
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
}

const FB_ACK: u8 = 1;
const FB_NACK: u8 = 2;
const FB_BOUNCE: u8 = 3;
/// A packet the RTO declared lost (section 3.2.3's per-path loss counter; htsim has none).
const FB_LOSS: u8 = 4;

impl Ndp {
    fn new(cfg: &NdpConfig, env: &TransportEnv) -> Ndp {
        let bytes = env.framing.mtu_bytes + env.framing.control_bytes;
        let puller = |h: u32| {
            let link: Rate = env.nic_rate(h);
            Puller { spacing: ((link.tx_time(bytes) as f64) / cfg.pull_rate).round() as Time, ..Puller::default() }
        };
        Ndp {
            cfg: cfg.clone(),
            framing: env.framing,
            conns: ConnTable::default(),
            pullers: (0..env.hosts()).map(puller).collect(),
            rng: env.rng("ndp"),
            counters: Counters::default(),
        }
    }

    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        let c = &self.counters;
        vec![
            ("data_packets_sent", c.data_sent),
            ("retransmitted_packets", c.retransmitted),
            ("nacks", c.nacks),
            ("bounces", c.bounces),
            ("bounce_resends", c.bounce_resends),
            ("timeouts", c.timeouts),
            ("pulls_sent", c.pulls),
            ("wasted_pulls", c.wasted_pulls),
        ]
    }

    pub fn start_flow(&mut self, ctx: &mut Ctx, id: FlowId) {
        let rec = ctx.flow(id);
        let mss = self.framing.mss() as u64;
        let packets = rec.size.div_ceil(mss);
        let last_payload = (rec.size - (packets - 1) * mss) as u32;
        let n_paths = match self.cfg.lb {
            LoadBalancing::Source => ctx.path_count(rec.src, rec.dst).min(u16::MAX as u64) as u32,
            _ => 1,
        };
        let mut paths: Vec<u32> = (0..n_paths).collect();
        self.rng.shuffle(&mut paths);
        let conn = Conn {
            id,
            src: rec.src,
            dst: rec.dst,
            packets,
            last_payload,
            next_new: 0,
            base: 0,
            window: VecDeque::new(),
            acked: 0,
            rtx: BinaryHeap::new(),
            last_pull: 0,
            pull_window: 0,
            first_window_left: 0,
            scores: vec![PathScore::default(); n_paths as usize],
            total_acks: 0,
            total_nacks: 0,
            paths,
            cursor: 0,
            history: [0; HISTORY],
            history_at: 0,
            srtt: 0.0,
            rttvar: 0.0,
            rto: self.cfg.initial_rto,
            rto_armed: false,
            received: vec![0; packets.div_ceil(64) as usize],
            received_count: 0,
            pulls_sent: 0,
            pending_pulls: 0,
            queued_for_pull: false,
            priority: self.cfg.prioritize_senders.contains(&rec.src),
            done_rx: false,
            retired: false,
        };
        let slot = self.conns.insert(id, conn);
        let iw = self.cfg.initial_window_packets.min(packets);
        self.conns[slot].first_window_left = iw as i64;
        for _ in 0..iw {
            self.send_one(ctx, slot, true);
        }
    }

    /// The next path in the permuted list, skipping penalized paths (section 3.2.3).
    fn choose_path(&mut self, slot: u32, avoid: Option<u16>) -> u32 {
        let c = &mut self.conns[slot];
        let n = c.paths.len();
        if n <= 1 {
            return 0;
        }
        for _ in 0..4 * n {
            c.cursor += 1;
            if c.cursor >= n {
                self.rng.shuffle(&mut c.paths);
                c.cursor = 0;
            }
            let p = c.paths[c.cursor];
            // As in htsim, a penalized path stays out of the rotation until feedback from packets
            // still in flight on it brings its count back to zero.
            if self.cfg.path_penalty && c.scores[p as usize].avoid > 0 {
                continue;
            }
            if avoid == Some(p as u16) {
                continue;
            }
            return p;
        }
        c.paths[c.cursor]
    }

    /// Sends one packet: the lowest queued retransmission, else new data. Returns false if there
    /// was nothing to send.
    fn send_one(&mut self, ctx: &mut Ctx, slot: u32, syn: bool) -> bool {
        let c = &mut self.conns[slot];
        let (seq, retx, last_path) = if let Some(Reverse(seq)) = c.rtx.pop() {
            let Sent::Queued { path } = c.window[(seq - c.base) as usize] else {
                unreachable!("rtx queue out of sync")
            };
            (seq, true, Some(path))
        } else if c.next_new < c.packets {
            let s = c.next_new;
            c.next_new += 1;
            c.window.push_back(Sent::Out { at: 0, path: 0 });
            (s, false, None)
        } else {
            return false;
        };
        let path = self.choose_path(slot, last_path);
        let fr = self.framing;
        let cfg_lb = self.cfg.lb;
        let c = &mut self.conns[slot];
        let payload = if seq + 1 == c.packets { c.last_payload } else { fr.mss() };
        let mut p = Packet::new(PacketKind::Data, c.id, c.src, c.dst, fr.wire(payload));
        p.payload = payload;
        p.seq = seq;
        p.ts = ctx.now();
        p.aux = path;
        p.prio = 1;
        p.lb = cfg_lb;
        p.path = path;
        if syn {
            p.flags |= flags::SYN;
        }
        if seq + 1 == c.packets {
            p.flags |= flags::LAST;
        }
        if retx {
            p.flags |= flags::RETX;
            self.counters.retransmitted += 1;
        }
        let i = (seq - c.base) as usize;
        c.window[i] = Sent::Out { at: ctx.now(), path: path as u16 };
        self.counters.data_sent += 1;
        ctx.send(p);
        if !c.rto_armed {
            c.rto_armed = true;
            let at = ctx.now() + c.rto;
            ctx.set_timer(at, TIMER_RTO, c.id);
        }
        true
    }

    pub fn on_packet(&mut self, ctx: &mut Ctx, host: HostId, pkt: &Packet) {
        let Some(slot) = self.conns.slot(pkt.flow) else { return };
        match pkt.kind {
            PacketKind::Data | PacketKind::Header => {
                debug_assert_eq!(host, pkt.dst);
                self.on_arrival(ctx, slot, pkt)
            }
            PacketKind::Ack | PacketKind::Nack => {
                self.on_feedback(ctx, slot, pkt);
                if pkt.has(PULL_BIT) && self.conns.slot(pkt.flow) == Some(slot) {
                    self.on_pull(ctx, slot, pkt.ack);
                }
            }
            PacketKind::Pull => self.on_pull(ctx, slot, pkt.ack),
            PacketKind::Bounced => self.on_bounce(ctx, slot, pkt),
            _ => {} // not an NDP packet kind: ignored
        }
    }

    /// Receiver: a data packet or a trimmed header arrived.
    fn on_arrival(&mut self, ctx: &mut Ctx, slot: u32, pkt: &Packet) {
        let ctl = self.framing.control_bytes;
        let c = &mut self.conns[slot];
        let is_data = pkt.kind == PacketKind::Data;
        if is_data {
            let (w, b) = ((pkt.seq / 64) as usize, pkt.seq % 64);
            if c.received[w] & (1 << b) == 0 {
                c.received[w] |= 1 << b;
                c.received_count += 1;
                ctx.delivered(c.id, pkt.payload as u64);
                if c.received_count == c.packets {
                    ctx.finished(c.id);
                    c.done_rx = true;
                    c.pending_pulls = 0; // the last packet purges this sender's pulls
                }
            }
        }
        let kind = if is_data { PacketKind::Ack } else { PacketKind::Nack };
        let mut fb = Packet::new(kind, c.id, c.dst, c.src, ctl);
        fb.seq = pkt.seq;
        fb.aux = pkt.aux;
        fb.ts = pkt.ts;
        fb.prio = 0;
        fb.lb = LoadBalancing::Spray;
        let wants_pull = !c.done_rx;
        let pl = &mut self.pullers[c.dst as usize];
        // Piggyback the pull when nothing is queued ahead of it and the pacer would send it now.
        let carry = wants_pull && pl.high.is_empty() && pl.fair.is_empty() && !pl.armed && ctx.now() >= pl.next_at;
        if carry {
            c.pulls_sent += 1;
            fb.flags |= PULL_BIT;
            fb.ack = c.pulls_sent;
            pl.next_at = ctx.now() + pl.spacing;
            self.counters.pulls += 1;
        }
        ctx.send(fb);
        if !wants_pull || carry {
            return;
        }
        c.pending_pulls += 1;
        let (dst, priority, queued) = (c.dst, c.priority, c.queued_for_pull);
        if !queued {
            c.queued_for_pull = true;
            let pl = &mut self.pullers[dst as usize];
            if priority {
                pl.high.push_back(slot);
            } else {
                pl.fair.push_back(slot);
            }
        }
        self.arm_pacer(ctx, dst);
    }

    fn arm_pacer(&mut self, ctx: &mut Ctx, host: HostId) {
        let pl = &mut self.pullers[host as usize];
        if !pl.armed {
            pl.armed = true;
            let at = pl.next_at.max(ctx.now());
            ctx.set_timer(at, TIMER_PULL, host);
        }
    }

    /// The pacer releases one pull: priority connections first, then round robin.
    fn pace(&mut self, ctx: &mut Ctx, host: HostId) {
        let ctl = self.framing.control_bytes;
        self.pullers[host as usize].armed = false;
        loop {
            let pl = &mut self.pullers[host as usize];
            let next = match self.cfg.pull_order {
                PullOrder::Fair => pl.high.pop_front().or_else(|| pl.fair.pop_front()),
                PullOrder::Srpt => pl.high.pop_front().or_else(|| {
                    // Fewest packets left first; ties to the longest-waiting connection.
                    let conns = &self.conns;
                    let left = |slot: u32| {
                        let c = &conns[slot];
                        c.packets.saturating_sub(c.received_count)
                    };
                    let best = (0..pl.fair.len()).min_by_key(|&i| (left(pl.fair[i]), i))?;
                    pl.fair.remove(best)
                }),
            };
            let Some(slot) = next else { return };
            let c = &mut self.conns[slot];
            c.queued_for_pull = false;
            if c.retired {
                self.conns.recycle(slot);
                continue;
            }
            if c.pending_pulls == 0 || c.done_rx {
                continue; // purged by the last packet
            }
            c.pending_pulls -= 1;
            c.pulls_sent += 1;
            let mut p = Packet::new(PacketKind::Pull, c.id, c.dst, c.src, ctl);
            p.ack = c.pulls_sent;
            p.prio = 0;
            p.lb = LoadBalancing::Spray;
            ctx.send(p);
            self.counters.pulls += 1;
            if c.pending_pulls > 0 {
                c.queued_for_pull = true;
                let pl = &mut self.pullers[host as usize];
                if c.priority {
                    pl.high.push_back(slot);
                } else {
                    pl.fair.push_back(slot);
                }
            }
            let pl = &mut self.pullers[host as usize];
            pl.next_at = ctx.now() + pl.spacing;
            if !pl.high.is_empty() || !pl.fair.is_empty() {
                pl.armed = true;
                ctx.set_timer(pl.next_at, TIMER_PULL, host);
            }
            return;
        }
    }

    fn record(&mut self, slot: u32, path: u16, fb: u8) {
        let penalty = self.cfg.path_penalty;
        let c = &mut self.conns[slot];
        c.history[c.history_at] = fb;
        c.history_at = (c.history_at + 1) % HISTORY;
        if c.scores.len() <= 1 {
            return;
        }
        let n = c.scores.len() as u64;
        let s = &mut c.scores[path as usize];
        match fb {
            FB_ACK => {
                s.acks += 1;
                c.total_acks += 1;
            }
            FB_NACK => {
                s.nacks += 1;
                c.total_nacks += 1;
            }
            _ => {
                // A return or a loss is a more severe NACK (htsim weighs returns so).
                s.nacks += 3;
                c.total_nacks += 3;
            }
        }
        if !penalty {
            return;
        }
        // htsim's outlier test: enough samples, NACK ratio above 30% and 1.25x the mean ratio.
        let (ma, mn) = (c.total_acks / n, c.total_nacks / n);
        let ratio = if s.acks > 10 { s.nacks as u64 * 100 / s.acks as u64 } else { 0 };
        let mean_ratio = (mn * 100).checked_div(ma).unwrap_or(100);
        if s.acks + s.nacks > 100 && ratio * 4 > mean_ratio * 5 && ratio > 30 {
            s.avoid += 1;
        } else if s.avoid > 0 {
            s.avoid -= 1;
        }
    }

    /// Sender: an ACK or NACK.
    fn on_feedback(&mut self, ctx: &mut Ctx, slot: u32, pkt: &Packet) {
        let c = &mut self.conns[slot];
        if pkt.seq < c.base {
            return; // already acknowledged
        }
        let i = (pkt.seq - c.base) as usize;
        let Sent::Out { path, .. } = c.window[i] else { return }; // duplicate feedback
        c.pull_window += 1;
        c.first_window_left -= 1;
        if pkt.kind == PacketKind::Ack {
            let r = (ctx.now() - pkt.ts) as f64;
            if c.srtt == 0.0 {
                c.srtt = r;
                c.rttvar = r / 2.0;
            } else {
                c.rttvar = 0.75 * c.rttvar + 0.25 * (c.srtt - r).abs();
                c.srtt = 0.875 * c.srtt + 0.125 * r;
            }
            c.rto = ((c.srtt + 4.0 * c.rttvar) as Time).max(self.cfg.min_rto);
            c.window[i] = Sent::Acked;
            c.acked += 1;
            while c.window.front() == Some(&Sent::Acked) {
                c.window.pop_front();
                c.base += 1;
            }
            self.record(slot, path, FB_ACK);
            let c = &self.conns[slot];
            if c.acked == c.packets {
                self.retire(slot);
            }
        } else {
            self.counters.nacks += 1;
            c.window[i] = Sent::Queued { path };
            c.rtx.push(Reverse(pkt.seq));
            self.record(slot, path, FB_NACK);
            self.arm_rto(ctx, slot);
        }
    }

    fn retire(&mut self, slot: u32) {
        let id = self.conns[slot].id;
        self.conns.release(id);
        let c = &mut self.conns[slot];
        c.window = VecDeque::new();
        c.rtx = BinaryHeap::new();
        c.received = Vec::new();
        c.scores = Vec::new();
        c.paths = Vec::new();
        c.done_rx = true;
        c.retired = true;
        c.pending_pulls = 0;
        // A slot still in a pull queue is freed when the pacer pops it.
        if !c.queued_for_pull {
            self.conns.recycle(slot);
        }
    }

    /// Sender: a PULL with cumulative number `pull_no`.
    fn on_pull(&mut self, ctx: &mut Ctx, slot: u32, pull_no: u64) {
        let c = &mut self.conns[slot];
        c.pull_window -= 1;
        let n = pull_no.saturating_sub(c.last_pull);
        c.last_pull = c.last_pull.max(pull_no);
        for _ in 0..n {
            if !self.send_one(ctx, slot, false) {
                self.counters.wasted_pulls += 1;
            }
        }
    }

    /// Sender: a header came back from a full switch queue.
    fn on_bounce(&mut self, ctx: &mut Ctx, slot: u32, pkt: &Packet) {
        self.counters.bounces += 1;
        let c = &mut self.conns[slot];
        if pkt.seq < c.base {
            return;
        }
        let i = (pkt.seq - c.base) as usize;
        let Sent::Out { path, .. } = c.window[i] else { return };
        c.first_window_left -= 1;
        c.window[i] = Sent::Queued { path };
        c.rtx.push(Reverse(pkt.seq));
        self.record(slot, path, FB_BOUNCE);
        self.arm_rto(ctx, slot);
        let c = &self.conns[slot];
        let (mut acks, mut total) = (0, 0);
        for &h in &c.history {
            if h != 0 {
                total += 1;
                acks += u32::from(h == FB_ACK);
            }
        }
        let bad_path = acks > 0 && total / acks <= 3;
        let no_more_pulls = c.pull_window <= 0 && c.first_window_left <= 0;
        if self.cfg.return_to_sender_resend && (no_more_pulls || bad_path) {
            self.counters.bounce_resends += 1;
            self.send_one(ctx, slot, false);
        }
    }

    pub fn on_timer(&mut self, ctx: &mut Ctx, kind: u8, id: u32) {
        match kind {
            TIMER_PULL => self.pace(ctx, id),
            TIMER_RTO => self.on_rto(ctx, id),
            other => panic!("unknown NDP timer {other}"),
        }
    }

    fn arm_rto(&mut self, ctx: &mut Ctx, slot: u32) {
        let c = &mut self.conns[slot];
        if !c.rto_armed {
            c.rto_armed = true;
            ctx.set_timer(ctx.now() + c.rto, TIMER_RTO, c.id);
        }
    }

    /// Resends packets outstanding for longer than the RTO (true losses), then re-arms. A queued
    /// retransmission that no pull has come for within an RTO is also sent (its pulls were lost).
    fn on_rto(&mut self, ctx: &mut Ctx, id: u32) {
        let Some(slot) = self.conns.slot(id) else { return };
        let c = &mut self.conns[slot];
        c.rto_armed = false;
        let mut oldest: Option<Time> = None;
        let mut expired = Vec::new();
        for (i, s) in c.window.iter().enumerate() {
            if let Sent::Out { at, path } = *s {
                if at + c.rto <= ctx.now() {
                    expired.push((c.base + i as u64, path));
                } else {
                    oldest = Some(oldest.map_or(at, |o: Time| o.min(at)));
                }
            }
        }
        for &(seq, path) in &expired {
            c.window[(seq - c.base) as usize] = Sent::Queued { path };
            c.rtx.push(Reverse(seq));
        }
        for &(_, path) in &expired {
            self.record(slot, path, FB_LOSS);
        }
        let c = &self.conns[slot];
        let mut n = expired.len();
        if n == 0 && oldest.is_none() && !c.rtx.is_empty() {
            n = 1;
        }
        if n > 0 {
            self.counters.timeouts += 1;
            let c = &mut self.conns[slot];
            c.rto = (c.rto * 2).min(from_us(1e6));
            for _ in 0..n {
                self.send_one(ctx, slot, false);
            }
        }
        let c = &mut self.conns[slot];
        if !c.rto_armed {
            if let Some(o) = oldest {
                c.rto_armed = true;
                let at = (o + c.rto).max(ctx.now());
                ctx.set_timer(at, TIMER_RTO, c.id);
            } else if !c.rtx.is_empty() {
                c.rto_armed = true;
                ctx.set_timer(ctx.now() + c.rto, TIMER_RTO, c.id);
            }
        }
    }
}

impl Protocol for Ndp {
    const NAMES: &'static [(&'static str, &'static str)] = &[
        ("ndp", "NDP (Handley et al., SIGCOMM'17): zero-RTT start, receiver-paced pulls, trimming switches, sender-chosen paths"),
        ("phost", "pHost (Gao et al., CoNEXT'15) as the NDP paper runs it: receiver tokens paced at line rate, SRPT, drop-tail switches"),
    ];
    type Config = NdpConfig;

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
    fn new(cfg: &NdpConfig, env: &TransportEnv) -> Ndp {
        Ndp::new(cfg, env)
    }
    fn start_flow(&mut self, ctx: &mut Ctx, flow: FlowId) {
        Ndp::start_flow(self, ctx, flow)
    }
    fn on_packet(&mut self, ctx: &mut Ctx, host: HostId, pkt: &Packet) {
        Ndp::on_packet(self, ctx, host, pkt)
    }
    fn on_timer(&mut self, ctx: &mut Ctx, kind: u8, id: u32) {
        Ndp::on_timer(self, ctx, kind, id)
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Ndp::counters(self)
    }
    /// Sender: packets in flight, pulls still expected (feedback received but not yet pulled),
    /// retransmissions waiting for a pull, srtt once measured. Receiver: pulls queued at its pacer
    /// and pulls sent so far.
    fn flow_state(&self, flow: FlowId, out: &mut Vec<(&'static str, f64)>) {
        let Some(slot) = self.conns.slot(flow) else { return };
        let c = &self.conns[slot];
        let in_flight = c.window.iter().filter(|s| matches!(s, Sent::Out { .. })).count();
        out.push(("in_flight_packets", in_flight as f64));
        out.push(("pulls_expected", c.pull_window as f64));
        out.push(("retransmit_queue_packets", c.rtx.len() as f64));
        if c.srtt > 0.0 {
            out.push(("srtt_us", c.srtt / 1e6));
        }
        out.push(("receiver_pulls_queued", c.pending_pulls as f64));
        out.push(("receiver_pulls_sent", c.pulls_sent as f64));
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
}
