//! SIRD: a sender-informed, receiver-driven transport.
//!
//! Paper: K. Prasopoulos, E. Bugnion, M. Kogias, "SIRD: A Sender-Informed, Receiver-Driven
//! Datacenter Transport Protocol" (EPFL and Imperial College London, 2024 preprint; NSDI'25):
//! Algorithms 1 and 2, sections 3-5, Table 2. Details the paper leaves
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
//!   issued one packet at a time to the message chosen by policy (SRPT on payload bytes still to
//!   receive, or round robin) among those whose sender's bucket is not full, while b + credit <= B, paced at the receiver's link
//!   rate (one credit per serialization time of the data it grants); data arrival returns its
//!   credit to B and SB
//! - sender (Algorithm 2): at each transmission opportunity of its NIC (the NIC holds no data
//!   backlog; control packets go ahead of data) the sender picks a receiver by a split policy —
//!   a share (`sender_srpt_share`, 0.5) to the receiver whose message has the fewest packets left,
//!   the rest fair-shared (smooth weighted round robin, as the reference) — then that receiver's
//!   credited message with the fewest packets left. Data carries csn while the unused credit the
//!   sender holds (over all receivers, unscheduled self-credit included) exceeds SThr and it has
//!   at least two messages with unsent data
//! - messages of at most UnschT wire bytes (payload plus headers) send an unscheduled prefix at
//!   once, self-credited: the whole message if its wire bytes fit in SBmax less the credit the
//!   sender already holds for that receiver (but at least one full packet), else as many full
//!   packets as fit there (at least one); the receiver charges them to B and SB when it learns of the message (the
//!   reference's account_unsched = 1). Larger messages send a CREDITREQ and wait for credit; for
//!   a message <= UnschT with a scheduled rest the first unscheduled packet (which, like every data
//!   packet, carries the message size) requests the rest, as in the reference
//! - priorities (`use_priorities`, default on): CREDITREQ, CREDIT, RESEND, ACK and unscheduled
//!   data in class 0, scheduled data in class 1 (the run's `[queue] priorities` must be 2 for them
//!   to matter)
//! - load balancing as the run's `routing.load_balancing` (`spray` is the paper's per-packet
//!   spraying; `ecmp` hashes per message); data is ECN-capable, so switches with ECN mark it
//! - loss recovery after Homa: a receiver that hears nothing of a message for `timeout_us` while
//!   credited packets are missing sends one RESEND per missing run (which also restates the
//!   credit frontier, so lost credits are recovered), doubling the wait up to 64x until all
//!   credited data is in; a sender that can send nothing of an unacknowledged message and has heard
//!   nothing for `timeout_us` (doubling likewise until it hears from the receiver) re-sends the
//!   CREDITREQ as a probe, which makes the receiver learn the message (all unscheduled packets
//!   lost), resend-request what is missing, or repeat the final ACK. The receiver ACKs a message
//!   once it has every byte; the sender then frees it
//!
//! Choices the paper leaves open: credit is counted in wire bytes (payload + headers) as the
//! reference does, so B - BDP bounds the downlink queue in bytes on the wire; a CREDIT grants the
//! next packet of one message (the receiver is the primary policy enforcer, §4.5), while the
//! sender's policy and its csn sum work on the credit held per receiver; a bucket admits a credit
//! while it is not full (the reference's SB test), so neither B nor SB below one packet can stall
//! a flow; SRPT ties go to the lower flow id; BDP defaults to the run's host rate x base RTT.
//!
//! Rules where the paper's text leaves a choice and we follow the authors' simulator (whose code
//! produced the paper's numbers; r2p2-cc-hybrid.cc and r2p2-hybrid-support.h), each with the
//! alternative as a key: UnschT is compared with wire bytes, `add_header_overhead(size) <=
//! unsolicited_thresh_bytes_` (`unsch_thr_counts = "payload"`: messages of 0.957-1 BDP of payload
//! become unscheduled); the unscheduled self-credit is capped by SBmax less the credit held for
//! that receiver, `available_backlog_space = max_srpb_ - avail_credit_bytes_` (`unscheduled_prefix
//! = "whole"`: the first min(BDP, size) bytes of every message <= UnschT, as the paper's §4.1
//! text; burstier under many small messages); the receiver's SRPT key is payload bytes still to
//! receive, `data_bytes_expected_ - data_bytes_received_` (`receiver_srpt_key =
//! "packets_to_credit"`); csn needs two messages with unsent data, `num_outbound() >= 2`
//! (`csn_requires = "two_receivers"`; the paper's Algorithm 2 states no such condition).
//!
//! Not modelled: host processing delays and the reference's 30 ns polling loop (hosts react
//! instantly, and the NIC never holds a data backlog); the reference's optional extras (HPCC-style sender loop, "priority flow",
//! bursts when idle); credit expiry; RPC replies (messages are one-way); a timeout shorter than
//! the worst queueing delay resends packets still in flight (counted as duplicates).
//!
//! Packet fields: data `seq` = packet index in the message, `ack` = message size in bytes, `aux` =
//! unscheduled packets of the message, `ts` = send time; CREDITREQ `ack` = size, `aux` =
//! unscheduled packets (flag PROTO2 = a sender's timeout probe); CREDIT `ack` = credit frontier
//! (packets the sender may have sent, cumulative, so a lost credit is made good by the next);
//! RESEND (kind `Nack`) `seq` = first missing packet, `aux` = run length, `ack` = frontier;
//! flag PROTO1 on data = csn. A packet that could not have been sent for its message (at the
//! wrong end, data or a credit frontier beyond what the receiver granted, an ACK before the
//! receiver has everything) is a stray and ignored, as are other kinds.
//!
//! Files: `config.rs` (keys), `state.rs` (messages, host pairs, hosts), `receiver.rs` and
//! `credit.rs` (Algorithm 1), `sender.rs` (Algorithm 2), `invariants.rs` (the bookkeeping checked
//! after every handler in debug builds). Packet arithmetic, the set of packets held, the credit
//! pacer and the SRPT choice are the shared `transport::parts`.

mod config;
mod credit;
mod invariants;
mod receiver;
mod sender;
mod state;
#[cfg(test)]
mod tests;

pub use config::{BucketConfig, CsnRequires, LoopConfig, ReceiverPolicy, SirdConfig, SrptKey, UnschCount, UnschPrefix};

use super::conns::ConnTable;
use super::parts::{MessageLayout, ReceivedSet, SilenceTimer};
use super::{ClassUse, Conformance, Ctx, Framing, LoneFlow, Needs, Protocol, SpecEnv, TransportEnv};
use crate::engine::rng::mix64;
use crate::net::packet::{flags, FlowId, HostId, Packet, PacketKind};
use crate::spec_reader::{Section, SpecResult};
use crate::transport::timer::timer_kinds;
use state::{Conn, Counters, Derived, Host, Pair};
use std::collections::{HashMap, VecDeque};

timer_kinds! {
    /// SIRD's timers.
    pub enum SirdTimer for "SIRD" {
        /// A host's credit pacer (id = host).
        Pacer = 0,
        /// A message's receiver silence timer (id = flow).
        Rx = 1,
        /// A message's sender silence timer (id = flow).
        Tx = 2,
    }
}
/// Sender-congestion notification on data packets.
const CSN: u8 = flags::PROTO1;
/// On a CREDITREQ: a sender's timeout probe.
const PROBE: u8 = flags::PROTO2;
/// A loop cuts its bucket at most once per this many windows (the reference's 1.5).
const MD_SPACING_WINDOWS: f64 = 1.5;

pub struct Sird {
    cfg: SirdConfig,
    framing: Framing,
    conns: ConnTable<Conn>,
    pairs: Vec<Pair>,
    pair_of: HashMap<u64, u32>,
    hosts: Vec<Host>,
    p: Derived,
    /// Sender candidates during one choice: (pair, conn slot, SRPT key).
    scratch: Vec<(u32, u32, u64)>,
    counters: Counters,
}

impl Sird {
    /// Fixes the byte parameters from the fabric (the BDP of the longest host pair, or the spec's).
    fn new(cfg: &SirdConfig, env: &TransportEnv) -> Sird {
        let n = env.hosts();
        let bk = &cfg.buckets;
        let bdp = bk.bdp_bytes.unwrap_or_else(|| env.bdp_bytes(0, n - 1));
        let b = bdp as f64;
        let sb_max = (bk.sb_max_bdp * b).max(1.0);
        let p = Derived {
            bdp,
            budget: (bk.budget_bdp * b).round() as i64,
            sb_max,
            unsch_thr: (bk.unsch_thr_bdp * b).round() as u64,
            sthr: bk.sthr_bdp * b,
            floors: [cfg.loops.network_floor * sb_max, cfg.loops.sender_floor * sb_max],
        };
        Sird {
            cfg: cfg.clone(),
            framing: env.framing,
            conns: ConnTable::default(),
            pairs: Vec::new(),
            pair_of: HashMap::new(),
            hosts: (0..n).map(|h| Host::new(env.nic_rate(h))).collect(),
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
        let i = self.pairs.len() as u32;
        self.pairs.push(Pair::new(self.p.sb_max, self.framing.mtu_bytes as f64));
        self.pair_of.insert(key, i);
        #[cfg(debug_assertions)]
        {
            self.hosts[src as usize].out_pairs.push(i);
            self.hosts[dst as usize].in_pairs.push(i);
        }
        i
    }

    /// A new message: its unscheduled prefix (if any) is self-credit, sent at once; a message
    /// without one asks for credit.
    pub fn start_flow(&mut self, ctx: &mut Ctx, id: FlowId) {
        let rec = ctx.flow(id);
        let (src, dst) = (rec.src, rec.dst);
        let layout = MessageLayout::new(rec.size, self.framing);
        let slot = self.insert_conn(ctx, id, src, dst, layout);
        let prefix = self.conns[slot].prefix;
        let self_credit = self.conns[slot].wire(0, prefix);
        let pi = self.conns[slot].pair;
        let h = &mut self.hosts[src as usize];
        let pair = &mut self.pairs[pi as usize];
        pair.msgs.push(slot);
        pair.unsent += 1;
        h.unsent_msgs += 1;
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
        self.check_after(Some(slot), pi, src, dst);
    }

    /// Unscheduled packets at the head of a new message from the sender of `pair`: none above
    /// UnschT (`unsch_thr_counts` says in which bytes), else per `unscheduled_prefix`.
    fn unscheduled_prefix(&self, layout: &MessageLayout, pair: u32) -> u64 {
        let size = layout.size_bytes();
        let wire = layout.wire_bytes_of(0, layout.packets());
        let counted = match self.cfg.unsch_thr_counts {
            UnschCount::Wire => wire,
            UnschCount::Payload => size,
        };
        if counted > self.p.unsch_thr {
            return 0;
        }
        match self.cfg.unscheduled_prefix {
            UnschPrefix::Whole => size.min(self.p.bdp).div_ceil(layout.mss() as u64),
            UnschPrefix::Capped => {
                // The reference's self-credit: at most SBmax less what the sender already holds
                // for this receiver, never below one full packet, in whole packets.
                let full = self.framing.mtu_bytes as f64;
                let held = self.pairs[pair as usize].credit as f64;
                let room = (self.p.sb_max.min(self.p.sb_max - held)).max(full);
                if wire as f64 <= room {
                    layout.packets()
                } else {
                    ((room / full) as u64).clamp(1, layout.packets())
                }
            }
        }
    }

    fn insert_conn(&mut self, ctx: &Ctx, id: FlowId, src: HostId, dst: HostId, layout: MessageLayout) -> u32 {
        let pair = self.pair(src, dst);
        let prefix = self.unscheduled_prefix(&layout, pair);
        let conn = Conn {
            id,
            src,
            dst,
            layout,
            prefix,
            pair,
            path_key: mix64(id as u64 ^ 0x51d) as u32,
            next_new: 0,
            granted: prefix,
            rtx: VecDeque::new(),
            tx_silence: SilenceTimer::new(ctx.now()),
            tx_ready: false,
            rx_known: false,
            rx_granted: 0,
            rx: ReceivedSet::default(),
            rx_payload: 0,
            rx_done: false,
            rx_listed: false,
            rx_silence: SilenceTimer::new(ctx.now()),
        };
        self.conns.insert(id, conn)
    }

    /// A control packet of a message: CREDITREQ from the sender (size and unscheduled packets
    /// in `ack`/`aux`), CREDIT or ACK from the receiver.
    fn send_control(&mut self, ctx: &mut Ctx, slot: u32, kind: PacketKind, probe: bool) {
        let c = &self.conns[slot];
        let (from, to) = if kind == PacketKind::CreditRequest { (c.src, c.dst) } else { (c.dst, c.src) };
        let mut p = Packet::new(kind, c.id, from, to, self.framing.control_bytes);
        match kind {
            PacketKind::CreditRequest => {
                p.ack = c.layout.size_bytes();
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
        let c = &self.conns[slot];
        let (pi, src, dst) = (c.pair, c.src, c.dst);
        // Data and requests go to the receiver, the rest to the sender.
        let to_receiver = matches!(pkt.kind, PacketKind::Data | PacketKind::CreditRequest);
        if host != if to_receiver { dst } else { src } {
            return; // a stray at the wrong end
        }
        match pkt.kind {
            PacketKind::Data => self.on_data(ctx, slot, pkt),
            PacketKind::CreditRequest => self.on_request(ctx, slot, pkt),
            PacketKind::Credit => self.on_credit(ctx, slot, pkt),
            PacketKind::Nack => self.on_resend(ctx, slot, pkt),
            PacketKind::Ack => self.on_ack(ctx, slot),
            _ => {} // not a SIRD packet kind (e.g. a trimmed header): ignored
        }
        self.check_after(self.conns.slot(pkt.flow), pi, src, dst);
    }

    pub fn on_timer(&mut self, ctx: &mut Ctx, kind: SirdTimer, id: u32) {
        match kind {
            SirdTimer::Pacer => {
                self.hosts[id as usize].pacer.disarm();
                self.kick(ctx, id);
                self.check_host(id);
            }
            SirdTimer::Rx | SirdTimer::Tx => {
                let Some(slot) = self.conns.slot(id) else { return };
                if kind == SirdTimer::Rx {
                    self.on_rx_timer(ctx, slot);
                } else {
                    self.on_tx_timer(ctx, slot);
                }
                let c = &self.conns[slot];
                self.check_after(Some(slot), c.pair, c.src, c.dst);
            }
        }
    }

    pub fn on_nic_idle(&mut self, ctx: &mut Ctx, host: HostId) {
        self.pump(ctx, host);
        self.check_host(host);
    }
}

impl Protocol for Sird {
    const NAMES: &'static [(&'static str, &'static str)] = &[(
        "sird",
        "SIRD (Prasopoulos, Bugnion, Kogias): receiver credit with informed overcommitment (global bucket B, per-sender buckets cut by ECN and the sender's csn bit)",
    )];
    const WANTS_NIC_IDLE: bool = true;
    type Config = SirdConfig;
    type Timer = SirdTimer;

    fn read(s: &mut Section, _name: &str, env: &SpecEnv) -> SpecResult<SirdConfig> {
        SirdConfig::read(s, env.load_balancing)
    }
    fn name(_cfg: &SirdConfig) -> &'static str {
        "sird"
    }
    fn needs(cfg: &SirdConfig) -> Needs {
        let purpose = "scheduled data below control packets and unscheduled data (section 4.6)";
        let classes = match cfg.use_priorities {
            true => vec![ClassUse { key: "use_priorities", class: 1, explicit: false, purpose }],
            false => Vec::new(),
        };
        Needs { classes, ..Needs::default() }
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
    fn on_timer(&mut self, ctx: &mut Ctx, kind: SirdTimer, id: u32) {
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
    /// (17 KB at the suite's 10 Gb/s), per-packet spraying. Messages up to UnschT = 1 BDP (wire) start
    /// at line rate; larger ones wait for the first credit (one control round trip), then paced
    /// credit keeps the link busy.
    fn conformance(_name: &str) -> Conformance {
        Conformance {
            spec: "[queue]\npriorities = 2\n[queue.fabric]\necn = \"step\"\necn_k_bytes = 17000\n\
                   [routing]\nload_balancing = \"spray\"\n",
            // UnschT counts wire bytes: a lone message goes unscheduled while payload plus headers
            // fit in 1 BDP, i.e. up to ~0.95 BDP of payload (0.957 with 1,500 B packets).
            lone_flow: LoneFlow::Handshake { exact_up_to_bdp: 0.95, max_extra_rtts: 1.0 },
            exempt: &[],
        }
    }
}
