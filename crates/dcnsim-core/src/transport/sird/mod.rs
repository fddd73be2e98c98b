//! SIRD: a sender-informed, receiver-driven transport.
//!
//! Paper: K. Prasopoulos, E. Bugnion, M. Kogias, "SIRD: A Sender-Informed, Receiver-Driven
//! Datacenter Transport Protocol" (EPFL and Imperial College London; the 2024 preprint in
//! shared/papers/sird.txt): Algorithms 1 and 2, sections 3-5, Table 2. Details the paper leaves
//! open follow the authors' ns-2 simulator (the "micro-hybrid" transport of their NSDI'25
//! artifact), as noted below.
//!
//! Modelled:
//! - receiver (Algorithm 1): a global credit bucket B capping credit outstanding (granted, not yet
//!   received) over all senders, and one bucket per sender whose size SB(s) is the minimum of two
//!   DCTCP-like AIMD loops fed by every arriving data packet: one on the network's CE bit, one on
//!   the sender's csn bit. Per loop (as the reference implements it): the marked fraction
//!   alpha <- (1-g) alpha + g F is refreshed every SB/MTU packets; every packet, marked or not,
//!   adds MTU^2/SB (one MTU per window; the reference's burst logic amounts to that); a marked
//!   packet cuts SB by SB alpha/2 at most once per 1.5 windows (first after one window);
//!   SB stays in [floor x SBmax, SBmax] with floors 0.03 (network) and 0.1 (sender). Credit is
//!   issued one packet at a time to the message chosen by policy (SRPT, or round robin) among
//!   those whose sender's bucket is not full, while b + credit <= B, paced at the receiver's link
//!   rate (one credit per serialization time of the data it grants); data arrival returns its
//!   credit to B and SB
//! - sender (Algorithm 2): at each transmission opportunity of its NIC (the NIC holds no data
//!   backlog; control packets go ahead of data) the sender picks a receiver by a split policy —
//!   a share (`sender_srpt_share`, 0.5) to the receiver whose message has the fewest packets left,
//!   the rest fair-shared (smooth weighted round robin, as the reference) — then that receiver's
//!   credited message with the fewest packets left. Data carries csn while the unused credit the
//!   sender holds (over all receivers, unscheduled self-credit included) exceeds SThr and it has
//!   data for at least two receivers
//! - messages <= UnschT send their first min(BDP, size) bytes (rounded up to whole packets) at
//!   once, self-credited; the receiver charges them to B and SB when it learns of the message (the
//!   reference's account_unsched = 1). Larger messages send a CREDITREQ and wait for credit; for
//!   a message <= UnschT longer than BDP the first unscheduled packet (which, like every data
//!   packet, carries the message size) requests the rest, as in the reference
//! - priorities (default on): CREDITREQ, CREDIT, RESEND, ACK and unscheduled data in class 0,
//!   scheduled data in class 1 (the run's `[queue] priorities` must be 2 for them to matter)
//! - load balancing as the run's `routing.load_balancing` (`spray` is the paper's per-packet
//!   spraying; `ecmp` hashes per message); data is ECN-capable, so switches with ECN mark it
//! - loss recovery after Homa: a receiver that hears nothing of a message for `rto_us` while
//!   credited packets are missing sends one RESEND per missing run (which also restates the
//!   credit frontier, so lost credits are recovered), doubling the wait up to 64x until all
//!   credited data is in; a sender that can send nothing of an unacknowledged message and has heard
//!   nothing for `rto_us` (doubling likewise until it hears from the receiver) re-sends the
//!   CREDITREQ as a probe, which makes the receiver learn the message (all unscheduled packets
//!   lost), resend-request what is missing, or repeat the final ACK. The receiver ACKs a message
//!   once it has every byte; the sender then frees it
//!
//! Choices the paper leaves open: credit is counted in wire bytes (payload + headers) as the
//! reference does, so B - BDP bounds the downlink queue in bytes on the wire; a CREDIT grants the
//! next packet of one message (the receiver is the primary policy enforcer, §4.5), while the
//! sender's policy and its csn sum work on the credit held per receiver; a bucket admits a credit
//! while it is not full (the reference's SB test), so neither B nor SB below one packet can stall
//! a flow; BDP defaults to the run's host rate x base RTT.
//!
//! Not modelled: host processing delays and the reference's 30 ns polling loop (hosts react
//! instantly, and the NIC never holds a data backlog); the csn condition counts receivers with
//! unsent data (the reference counts messages); the reference's cap of a sender's unscheduled
//! self-credit to SBmax per receiver (each message <= UnschT sends its whole prefix, as the
//! paper says); the reference's optional extras (HPCC-style sender loop, "priority flow",
//! bursts when idle); credit expiry; RPC replies (messages are one-way); a timeout shorter than
//! the worst queueing delay resends packets still in flight (counted as duplicates).
//!
//! Packet fields: data `seq` = packet index in the message, `ack` = message size in bytes, `aux` =
//! unscheduled packets of the message, `ts` = send time; CREDITREQ `ack` = size, `aux` =
//! unscheduled packets (flag PROTO2 = a sender's timeout probe); CREDIT `ack` = credit frontier
//! (packets the sender may have sent, cumulative, so a lost credit is made good by the next);
//! RESEND (kind `Nack`) `seq` = first missing packet, `aux` = run length, `ack` = frontier;
//! flag PROTO1 on data = csn.

mod receiver;
mod sender;

use super::conns::ConnTable;
use super::parts::ReceivedSet as Received;
use super::{Conformance, Ctx, Framing, LoneFlow, Protocol, SpecEnv, TransportEnv};
use crate::engine::rng::mix64;
use crate::engine::time::{from_us, Rate, Time};
use crate::limits::MAX_RTO_US;
use crate::net::packet::{flags, FlowId, HostId, LoadBalancing, Packet, PacketKind};
use crate::scenario::reader::{Section, SpecResult};
use std::collections::{HashMap, VecDeque};

const TIMER_PACER: u8 = 0;
const TIMER_RX: u8 = 1;
const TIMER_TX: u8 = 2;
/// Sender-congestion notification on data packets.
const CSN: u8 = flags::PROTO1;
/// On a CREDITREQ: a sender's timeout probe.
const PROBE: u8 = flags::PROTO2;
/// A loop cuts its bucket at most once per this many windows (the reference's 1.5).
const MD_SPACING_WINDOWS: f64 = 1.5;
/// RESEND packets per receiver timeout (further runs go at the next timeout).
const MAX_RESEND_RUNS: usize = 16;
/// Sender probes and receiver resend requests back off up to rto x 2^this.
const MAX_BACKOFF: u32 = 6;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReceiverPolicy {
    /// The message with the fewest packets still to credit first (the paper's evaluation).
    Srpt,
    /// Messages in turn.
    RoundRobin,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SirdConfig {
    /// `None`: host link rate x base RTT of the run.
    pub bdp_bytes: Option<u64>,
    /// B, in BDP.
    pub budget_bdp: f64,
    /// SBmax, in BDP.
    pub sb_max_bdp: f64,
    /// UnschT, in BDP.
    pub unsch_thr_bdp: f64,
    /// SThr, in BDP.
    pub sthr_bdp: f64,
    /// EWMA gain of the marked fraction in both loops.
    pub ce_gain: f64,
    /// Floor of the sender (csn) loop as a fraction of SBmax.
    pub sender_floor: f64,
    /// Floor of the network (CE) loop as a fraction of SBmax.
    pub network_floor: f64,
    /// Additive increase per window, in MTUs.
    pub additive_increase_mtu: f64,
    pub receiver_policy: ReceiverPolicy,
    /// Share of the sender's uplink given to the receiver with the shortest message.
    pub sender_srpt_share: f64,
    pub priorities: bool,
    pub pace_credits: bool,
    pub rto: Time,
    pub lb: LoadBalancing,
}

impl SirdConfig {
    pub fn read(s: &mut Section, lb: LoadBalancing) -> SpecResult<SirdConfig> {
        let bdp = s.u64_opt(
            "bdp_bytes",
            "bytes",
            "[sird] the BDP the *_bdp parameters are multiples of; unset = host link rate x base RTT of the run \
             (the summary's bdp_bytes; ~91 KB on the paper's 100 Gb/s leaf-spine, whose Table 2 rounds it to 100 KB)",
        )?;
        if let Some(b) = bdp {
            s.ensure((1..=1 << 40).contains(&b), "bdp_bytes", format!("must be in [1, 2^40] bytes, got {b}"))?;
        }
        let budget = s.f64_or("budget_bdp", 1.5, "BDP",
            "[sird] B: the receiver's global credit bucket, credit granted but not yet received over all senders (Table 2: 1.5; section 4.2: >= 1 for line rate)")?;
        s.ensure(budget > 0.0 && budget <= 1000.0, "budget_bdp", format!("must be in (0, 1000] BDP, got {budget}"))?;
        let sb_max =
            s.f64_or("sb_max_bdp", 1.0, "BDP", "[sird] SBmax: ceiling of each per-sender bucket (section 4.2: 1)")?;
        s.ensure(
            sb_max > 0.0 && sb_max <= budget,
            "sb_max_bdp",
            format!("must be in (0, budget_bdp = {budget}] BDP, got {sb_max}"),
        )?;
        let unsch = s.f64_or("unsch_thr_bdp", 1.0, "BDP",
            "[sird] UnschT: a message up to this size sends its first min(BDP, size) bytes unscheduled; a larger one asks for credit first (Table 2: 1; 0 = every message is scheduled)")?;
        s.ensure((0.0..=1e6).contains(&unsch), "unsch_thr_bdp", format!("must be in [0, 1e6] BDP, got {unsch}"))?;
        let sthr = s.f64_or("sthr_bdp", 0.5, "BDP",
            "[sird] SThr: a sender marks csn on its data while the unused credit it holds exceeds this (Table 2: 0.5); a huge value such as 1e9 disables informed overcommitment (the paper's SThr = inf)")?;
        s.ensure(sthr >= 0.0, "sthr_bdp", format!("must be >= 0 BDP, got {sthr}"))?;
        let g = s.f64_or(
            "ce_gain",
            0.08,
            "",
            "[sird] EWMA gain of the marked fraction in both bucket loops (the reference's ce_new_weight)",
        )?;
        s.ensure(g > 0.0 && g <= 1.0, "ce_gain", format!("must be in (0, 1], got {g}"))?;
        let sf = s.f64_or(
            "sender_floor",
            0.1,
            "fraction of SBmax",
            "[sird] floor of the per-sender bucket's sender-congestion (csn) loop (the reference's ecn_min_mul)",
        )?;
        s.ensure(sf > 0.0 && sf <= 1.0, "sender_floor", format!("must be in (0, 1], got {sf}"))?;
        let nf = s.f64_or(
            "network_floor",
            0.03,
            "fraction of SBmax",
            "[sird] floor of the per-sender bucket's network (ECN CE) loop (the reference's ecn_min_mul_nw)",
        )?;
        s.ensure(nf > 0.0 && nf <= 1.0, "network_floor", format!("must be in (0, 1], got {nf}"))?;
        let ai = s.f64_or(
            "additive_increase_mtu",
            1.0,
            "MTU per window",
            "[sird] additive increase of both bucket loops (the reference's additive_incr_mul)",
        )?;
        s.ensure(ai > 0.0 && ai <= 1000.0, "additive_increase_mtu", format!("must be in (0, 1000], got {ai}"))?;
        let policy = s.choice_or("receiver_policy", &["srpt", "round_robin"], "srpt",
            "[sird] which message a receiver credits next: fewest packets left to credit (the paper's evaluation), or in turn")?;
        let share = s.f64_or("sender_srpt_share", 0.5, "fraction",
            "[sird] share of a sender's uplink for the receiver with its shortest message; the rest is fair-shared over receivers (section 5.4: 0.5; 0 = fair sharing only)")?;
        s.ensure((0.0..=1.0).contains(&share), "sender_srpt_share", format!("must be in [0, 1], got {share}"))?;
        let prio = s.bool_or("priorities", true,
            "[sird] control packets and unscheduled data in priority class 0, scheduled data in class 1 (section 4.6); needs [queue] priorities = 2 to take effect")?;
        let pace = s.bool_or("pace_credits", true,
            "[sird] pace credits at the receiver's link rate (section 4.5); false = send credit as soon as the buckets allow")?;
        let rto = s.f64_or("rto_us", 100.0, "us",
            "[sird] loss recovery: silence after which a receiver asks for missing packets and a sender probes (Homa-style timeouts)")?;
        s.ensure(rto > 0.0 && rto <= MAX_RTO_US, "rto_us", format!("must be in (0, 1e7] us, got {rto}"))?;
        s.ensure(lb != LoadBalancing::Source, "protocol",
            "SIRD does not choose source routes: set routing.load_balancing = \"spray\" (the paper's packet spraying) or \"ecmp\"")?;
        Ok(SirdConfig {
            bdp_bytes: bdp,
            budget_bdp: budget,
            sb_max_bdp: sb_max,
            unsch_thr_bdp: unsch,
            sthr_bdp: sthr,
            ce_gain: g,
            sender_floor: sf,
            network_floor: nf,
            additive_increase_mtu: ai,
            receiver_policy: if policy == "srpt" { ReceiverPolicy::Srpt } else { ReceiverPolicy::RoundRobin },
            sender_srpt_share: share,
            priorities: prio,
            pace_credits: pace,
            rto: from_us(rto),
            lb,
        })
    }
}

/// The parameters in bytes, fixed once the network is known (first flow).
#[derive(Clone, Copy, Debug, Default)]
struct Derived {
    bdp: u64,
    budget: i64,
    sb_max: f64,
    unsch_thr: u64,
    sthr: f64,
    /// Loop floors in bytes: [network, sender].
    floors: [f64; 2],
}

/// One message: the sender's half and the receiver's half (each touched only by its own host).
struct Conn {
    id: FlowId,
    src: HostId,
    dst: HostId,
    size: u64,
    packets: u64,
    last_payload: u32,
    /// Unscheduled packets at the head of the message.
    prefix: u64,
    pair: u32,
    path_key: u32,
    // Sender.
    next_new: u64,
    /// Packets the sender may have sent (unscheduled prefix, then credit).
    granted: u64,
    /// Packets the receiver asked to be sent again.
    rtx: VecDeque<u64>,
    acked: bool,
    /// Last time the sender heard about this message or sent a packet of it.
    tx_last: Time,
    tx_backoff: u32,
    tx_timer: bool,
    /// Counted in its pair's and host's `ready` (cached `sendable()`).
    tx_ready: bool,
    // Receiver.
    rx_known: bool,
    /// Credit frontier: packets below it were granted (or unscheduled).
    rx_granted: u64,
    rx: Received,
    rx_done: bool,
    rx_listed: bool,
    /// Last data arrival, credit or resend request for this message.
    rx_last: Time,
    rx_timer: bool,
    /// Receiver timeouts since the message last had nothing outstanding: the next waits
    /// rto x 2^this.
    rx_backoff: u32,
}

impl Conn {
    #[inline]
    fn payload(&self, i: u64, mss: u32) -> u32 {
        if i + 1 == self.packets {
            self.last_payload
        } else {
            mss
        }
    }

    #[inline]
    fn sendable(&self) -> bool {
        !self.rtx.is_empty() || self.next_new < self.granted
    }
}

/// Wire bytes of packets [a, b) of a message.
#[inline]
fn wire_range(fr: Framing, c: &Conn, a: u64, b: u64) -> i64 {
    if a >= b {
        return 0;
    }
    let full = fr.mtu_bytes as i64;
    let mut w = (b - a) as i64 * full;
    if b == c.packets {
        w += fr.wire(c.last_payload) as i64 - full;
    }
    w
}

/// A DCTCP-like loop sizing a per-sender bucket.
#[derive(Clone, Copy, Debug)]
struct Loop {
    size: f64,
    alpha: f64,
    marked: u32,
    since_cut: u32,
    next_cut: u32,
}

/// An ordered host pair src -> dst: the sender's credit from dst, and dst's bucket for src.
struct Pair {
    // Sender side (at src).
    /// Wire bytes src may send to dst: credited or unscheduled but unsent, plus requested resends.
    credit: i64,
    /// Messages src -> dst not yet acknowledged (conn slots).
    msgs: Vec<u32>,
    /// Of those, how many still have never-sent packets.
    unsent: u32,
    deficit: f64,
    /// Of those, how many have a packet they may send now.
    ready: u32,
    // Receiver side (at dst).
    /// Credit outstanding to src (granted or unscheduled, not yet received), wire bytes.
    sb: i64,
    /// [network (CE), sender (csn)].
    loops: [Loop; 2],
    since_ratio: u32,
    next_ratio: u32,
}

impl Pair {
    /// SB(s): the most conservative of the two loops.
    #[inline]
    fn cap(&self) -> f64 {
        self.loops[0].size.min(self.loops[1].size)
    }
}

#[derive(Default)]
struct Host {
    // Sender.
    /// Pairs (receivers) this host has a packet for that it may send now.
    ready_pairs: Vec<u32>,
    /// Unused credit held over all receivers (wire bytes).
    credit: i64,
    /// Receivers this host still has never-sent data for.
    sending_receivers: u32,
    /// Messages from this host with a packet they may send now.
    ready: u32,
    // Receiver.
    /// b: credit outstanding over all senders (wire bytes); may exceed B through unscheduled data.
    b: i64,
    /// Known messages with packets still to credit (conn slots).
    inbound: Vec<u32>,
    rr: usize,
    next_credit_at: Time,
    pacer_armed: bool,
    rate: Option<Rate>,
}

#[derive(Default)]
struct Counters {
    data_sent: u64,
    unscheduled_sent: u64,
    retransmitted: u64,
    credits: u64,
    credit_requests: u64,
    probes: u64,
    resend_requests: u64,
    receiver_timeouts: u64,
    csn_marked: u64,
    cuts_network: u64,
    cuts_sender: u64,
    duplicates: u64,
}

pub struct Sird {
    cfg: SirdConfig,
    framing: Framing,
    conns: ConnTable<Conn>,
    pairs: Vec<Pair>,
    pair_of: HashMap<u64, u32>,
    hosts: Vec<Host>,
    p: Derived,
    /// Sender candidates during one choice: (pair, conn slot).
    scratch: Vec<(u32, u32)>,
    counters: Counters,
}

impl Sird {
    /// Fixes the byte parameters from the fabric (the BDP of the longest host pair, or the spec's).
    fn new(cfg: &SirdConfig, env: &TransportEnv) -> Sird {
        let n = env.hosts();
        let bdp = cfg.bdp_bytes.unwrap_or_else(|| env.bdp_bytes(0, n - 1));
        let b = bdp as f64;
        let sb_max = (cfg.sb_max_bdp * b).max(1.0);
        let p = Derived {
            bdp,
            budget: (cfg.budget_bdp * b).round() as i64,
            sb_max,
            unsch_thr: (cfg.unsch_thr_bdp * b).round() as u64,
            sthr: cfg.sthr_bdp * b,
            floors: [cfg.network_floor * sb_max, cfg.sender_floor * sb_max],
        };
        Sird {
            cfg: cfg.clone(),
            framing: env.framing,
            conns: ConnTable::default(),
            pairs: Vec::new(),
            pair_of: HashMap::new(),
            hosts: (0..n).map(|h| Host { rate: Some(env.nic_rate(h)), ..Host::default() }).collect(),
            p,
            scratch: Vec::new(),
            counters: Counters::default(),
        }
    }

    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        let c = &self.counters;
        vec![
            ("data_packets_sent", c.data_sent),
            ("unscheduled_packets_sent", c.unscheduled_sent),
            ("retransmitted_packets", c.retransmitted),
            ("credits_sent", c.credits),
            ("credit_requests_sent", c.credit_requests),
            ("sender_probes", c.probes),
            ("resend_requests", c.resend_requests),
            ("receiver_timeouts", c.receiver_timeouts),
            ("csn_marked_packets", c.csn_marked),
            ("sb_cuts_network", c.cuts_network),
            ("sb_cuts_sender", c.cuts_sender),
            ("duplicate_packets", c.duplicates),
            ("bdp_bytes", self.p.bdp),
        ]
    }

    fn pair(&mut self, src: HostId, dst: HostId) -> u32 {
        let key = (src as u64) << 32 | dst as u64;
        if let Some(&i) = self.pair_of.get(&key) {
            return i;
        }
        let mtu = self.framing.mtu_bytes as f64;
        let sb_max = self.p.sb_max;
        let l = Loop { size: sb_max, alpha: 0.0, marked: 0, since_cut: 0, next_cut: ((sb_max / mtu) as u32).max(1) };
        let i = self.pairs.len() as u32;
        self.pairs.push(Pair {
            credit: 0,
            msgs: Vec::new(),
            unsent: 0,
            deficit: 0.0,
            ready: 0,
            sb: 0,
            loops: [l, l],
            since_ratio: 0,
            next_ratio: 1,
        });
        self.pair_of.insert(key, i);
        i
    }

    pub fn start_flow(&mut self, ctx: &mut Ctx, id: FlowId) {
        let fr = self.framing;
        let mss = fr.mss() as u64;
        let rec = ctx.flow(id);
        let (src, dst, size) = (rec.src, rec.dst, rec.size);
        let packets = size.div_ceil(mss);
        let last_payload = (size - (packets - 1) * mss) as u32;
        let prefix = if size <= self.p.unsch_thr { size.min(self.p.bdp).div_ceil(mss) } else { 0 };
        let pi = self.pair(src, dst);
        let conn = Conn {
            id,
            src,
            dst,
            size,
            packets,
            last_payload,
            prefix,
            pair: pi,
            path_key: mix64(id as u64 ^ 0x51d) as u32,
            next_new: 0,
            granted: prefix,
            rtx: VecDeque::new(),
            acked: false,
            tx_last: ctx.now(),
            tx_backoff: 0,
            tx_timer: false,
            tx_ready: false,
            rx_known: false,
            rx_granted: 0,
            rx: Received::default(),
            rx_done: false,
            rx_listed: false,
            rx_last: ctx.now(),
            rx_timer: false,
            rx_backoff: 0,
        };
        let slot = self.conns.insert(id, conn);
        let self_credit = wire_range(fr, &self.conns[slot], 0, prefix);
        let h = &mut self.hosts[src as usize];
        let pair = &mut self.pairs[pi as usize];
        pair.msgs.push(slot);
        pair.unsent += 1;
        if pair.unsent == 1 {
            h.sending_receivers += 1;
        }
        pair.credit += self_credit;
        h.credit += self_credit;
        self.sync_ready(slot);
        if prefix == 0 {
            // A message with an unscheduled prefix needs no separate request: every data packet
            // carries the size, so its first packet asks for the rest (as in the reference).
            self.send_control(ctx, slot, PacketKind::CreditRequest, false);
            self.counters.credit_requests += 1;
        }
        self.arm_tx(ctx, slot);
        self.pump(ctx, src);
    }

    /// A control packet of a message: CREDITREQ from the sender (size and unscheduled packets
    /// in `ack`/`aux`), CREDIT or ACK from the receiver.
    fn send_control(&mut self, ctx: &mut Ctx, slot: u32, kind: PacketKind, probe: bool) {
        let c = &self.conns[slot];
        let (from, to) = if kind == PacketKind::CreditRequest { (c.src, c.dst) } else { (c.dst, c.src) };
        let mut p = Packet::new(kind, c.id, from, to, self.framing.control_bytes);
        match kind {
            PacketKind::CreditRequest => {
                p.ack = c.size;
                p.aux = c.prefix.min(u32::MAX as u64) as u32;
            }
            PacketKind::Credit => p.ack = c.rx_granted,
            _ => {}
        }
        if probe {
            p.flags |= PROBE;
        }
        p.prio = 0;
        p.path = c.path_key;
        p.lb = self.cfg.lb;
        p.ts = ctx.now();
        ctx.send(p);
    }

    pub fn on_packet(&mut self, ctx: &mut Ctx, host: HostId, pkt: &Packet) {
        let Some(slot) = self.conns.slot(pkt.flow) else {
            return; // a straggler of a message both ends are done with
        };
        match pkt.kind {
            PacketKind::Data => {
                debug_assert_eq!(host, pkt.dst);
                self.on_data(ctx, slot, pkt)
            }
            PacketKind::CreditRequest => self.on_request(ctx, slot, pkt),
            PacketKind::Credit => self.on_credit(ctx, slot, pkt),
            PacketKind::Nack => self.on_resend(ctx, slot, pkt),
            PacketKind::Ack => self.on_ack(ctx, slot),
            _ => {} // not a SIRD packet kind (e.g. a trimmed header): ignored
        }
    }

    pub fn on_timer(&mut self, ctx: &mut Ctx, kind: u8, id: u32) {
        match kind {
            TIMER_PACER => {
                self.hosts[id as usize].pacer_armed = false;
                self.kick(ctx, id);
            }
            TIMER_RX => self.on_rx_timer(ctx, id),
            TIMER_TX => self.on_tx_timer(ctx, id),
            other => panic!("unknown SIRD timer {other}"),
        }
    }

    pub fn on_nic_idle(&mut self, ctx: &mut Ctx, host: HostId) {
        self.pump(ctx, host);
    }
}

impl Protocol for Sird {
    const NAMES: &'static [(&'static str, &'static str)] = &[(
        "sird",
        "SIRD (Prasopoulos, Bugnion, Kogias): receiver credit with informed overcommitment (global bucket B, per-sender buckets cut by ECN and the sender's csn bit)",
    )];
    const WANTS_NIC_IDLE: bool = true;
    type Config = SirdConfig;

    fn read(s: &mut Section, _name: &str, env: &SpecEnv) -> SpecResult<SirdConfig> {
        SirdConfig::read(s, env.load_balancing)
    }
    fn name(_cfg: &SirdConfig) -> &'static str {
        "sird"
    }
    fn new(cfg: &SirdConfig, env: &TransportEnv) -> Sird {
        Sird::new(cfg, env)
    }
    fn start_flow(&mut self, ctx: &mut Ctx, flow: FlowId) {
        Sird::start_flow(self, ctx, flow)
    }
    fn on_packet(&mut self, ctx: &mut Ctx, host: HostId, pkt: &Packet) {
        Sird::on_packet(self, ctx, host, pkt)
    }
    fn on_timer(&mut self, ctx: &mut Ctx, kind: u8, id: u32) {
        Sird::on_timer(self, ctx, kind, id)
    }
    fn on_nic_idle(&mut self, ctx: &mut Ctx, host: HostId) {
        Sird::on_nic_idle(self, ctx, host)
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Sird::counters(self)
    }
    /// Receiver: the sender's bucket SB(s), credit outstanding to the sender (granted or
    /// unscheduled, not yet received) and over all senders (b). Sender: unused credit it holds
    /// from this receiver. Message: packets granted and sent so far.
    fn flow_state(&self, flow: FlowId, out: &mut Vec<(&'static str, f64)>) {
        let Some(slot) = self.conns.slot(flow) else { return };
        let c = &self.conns[slot];
        let pair = &self.pairs[c.pair as usize];
        out.push(("sb_bytes", pair.cap()));
        out.push(("credit_outstanding_bytes", pair.sb as f64));
        out.push(("receiver_outstanding_bytes", self.hosts[c.dst as usize].b as f64));
        out.push(("sender_credit_bytes", pair.credit as f64));
        out.push(("granted_packets", c.granted as f64));
        out.push(("sent_packets", c.next_new as f64));
    }
    /// The paper's setup (Table 2): two priority classes, ECN on core links at NThr = 1.25 BDP
    /// (17 KB at the suite's 10 Gb/s), per-packet spraying. Messages up to UnschT = 1 BDP start
    /// at line rate; larger ones wait for the first credit (one control round trip), then paced
    /// credit keeps the link busy.
    fn conformance(_name: &str) -> Conformance {
        Conformance {
            spec: "[queue]\npriorities = 2\n[queue.fabric]\necn = \"step\"\necn_k_bytes = 17000\n\
                   [routing]\nload_balancing = \"spray\"\n",
            lone_flow: LoneFlow::Handshake { exact_up_to_bdp: 1.0, max_extra_rtts: 1.0 },
            exempt: &[],
        }
    }
}
