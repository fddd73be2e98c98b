//! Homa: a receiver-driven low-latency transport using network priorities.
//!
//! Paper: B. Montazeri, Y. Li, M. Alizadeh, J. Ousterhout, "Homa: A Receiver-Driven Low-Latency
//! Transport Protocol Using Network Priorities", SIGCOMM 2018 (sections 3.1-3.8). Parameters and
//! details the paper leaves open follow the authors' OMNeT++ simulator (PlatformLab/HomaSimulation,
//! homaTransportConfig.ini, PriorityResolver, the receiver scheduler), as the SIRD paper's port of
//! it runs at 100 Gb/s (8 levels, 7 scheduled, overcommitment 7, RTTbytes 100 KB).
//!
//! Modelled:
//! - unscheduled data: every message sends its first RTTbytes (`rtt_bytes` of wire bytes rounded up
//!   to whole packets) at once, at an unscheduled level chosen by message size from
//!   cut-offs that give each unscheduled level an equal share of unscheduled bytes, computed from
//!   the workload's size distribution ([`prio`]); every data packet carries the message size
//! - the receiver's scheduler: of its known messages with packets still to grant, the
//!   `overcommitment` (k) with the fewest bytes left to receive are active (SRPT, ties to the lower
//!   flow id); each active message is kept at RTTbytes (whole packets, rounded up) granted but not
//!   received,
//!   one packet per GRANT, the shortest first; grants are paced at the receiver's link rate (one
//!   per packet time of the data granted) and go at the highest level
//! - 8 priority levels split into unscheduled (highest) and scheduled (lowest) levels in proportion
//!   to the share of the workload's bytes sent unscheduled (section 3.4; at least one each); a GRANT
//!   names the level of the data it grants: the active messages take the scheduled levels in SRPT
//!   order, the lowest ones when fewer are active; once the bytes left to grant fit in RTTbytes,
//!   the grant uses the unscheduled level of that remainder (the simulator's boostTailBytesPrio)
//! - the sender transmits, whenever its NIC goes idle, one packet of its message with the fewest
//!   packets left to send among those it may send (SRBF); control packets go ahead of data
//! - loss recovery (section 3.7): a receiver that hears nothing of a message for `timeout_us` while
//!   granted packets are missing sends a RESEND per missing run (restating the grant frontier, so
//!   lost grants are made good); a sender answers a RESEND for packets it has not sent yet
//!   because it is sending other messages with BUSY, which holds off the receiver's next RESEND;
//!   a sender that has heard nothing and can send nothing for `timeout_us` re-sends its first packet
//!   as a probe (the receiver learns the message, asks for what is missing, or repeats its ACK).
//!   Waits double up to 64x
//! - the receiver ACKs a complete message (messages are one-way here, so the sender needs it to
//!   free its state; in Homa the RPC's response plays this part)
//!
//! Not modelled: RPCs (request/response pairs) and hence the incast optimization of section 3.8
//! (the simulator and the SIRD paper's port lack it too); host software delays (the simulator's
//! 0.5 us turnaround and NIC think time); the sender's priority queueing at its own NIC (the SIRD
//! port disables it; here the NIC holds at most one data packet); adaptive priority cut-offs from
//! measured traffic (cut-offs are static, from the workload's distribution or the spec); grants
//! for several packets at once; the Linux module's later refinements (FIFO grants, GSO).
//!
//! Packet fields: data `seq` = packet index, `ack` = message size, `aux` = unscheduled packets,
//! `ts` = send time; GRANT (kind `Credit`) `ack` = grant frontier (packets, cumulative), `aux` =
//! level for the granted data; RESEND (kind `Nack`) `seq` = first missing packet, `aux` = run
//! length, `ack` = frontier; ACK (kind `Ack`) from the receiver; BUSY = kind `Ack` with flag PROTO1,
//! from the sender. Packets that could not have been sent for their message are strays, ignored.

mod config;
mod prio;
mod receiver;
mod sender;
mod state;
#[cfg(test)]
mod tests;

pub use config::HomaConfig;
pub use prio::Levels;

use super::conns::ConnTable;
use super::parts::{MessageLayout, ReceivedSet, SilenceTimer};
use super::{ClassUse, Conformance, Ctx, Framing, LoneFlow, Needs, Protocol, SpecEnv, TransportEnv};
use crate::engine::rng::mix64;
use crate::net::packet::{flags, FlowId, HostId, Packet, PacketKind};
use crate::spec_reader::{Section, SpecResult};
use crate::transport::timer::timer_kinds;
use state::{Counters, Host, Msg};

timer_kinds! {
    /// Homa's timers.
    pub enum HomaTimer for "Homa" {
        /// A host's grant pacer (id = host).
        Pacer = 0,
        /// A message's receiver silence timer (id = flow).
        Rx = 1,
        /// A message's sender silence timer (id = flow).
        Tx = 2,
    }
}
/// On an `Ack`-kind packet from the sender: BUSY.
const BUSY: u8 = flags::PROTO1;

pub struct Homa {
    cfg: HomaConfig,
    framing: Framing,
    levels: Levels,
    rtt_bytes: u64,
    /// RTTbytes in full packets, rounded up: the unscheduled packets of a message, and the granted
    /// but not received packets a scheduled message is kept at.
    rtt_packets: u64,
    msgs: ConnTable<Msg>,
    hosts: Vec<Host>,
    /// Receiver candidates during one choice: (SRPT key, slot).
    scratch: Vec<(u64, u32)>,
    counters: Counters,
}

impl Homa {
    fn new(cfg: &HomaConfig, env: &TransportEnv) -> Homa {
        let n = env.hosts();
        let rtt_bytes = cfg.rtt_bytes.unwrap_or_else(|| env.bdp_bytes(0, n - 1));
        let share = env.size_cdf.map(|cdf| prio::unscheduled_share(cdf, rtt_bytes));
        let (unsched, sched) = config::split_levels(cfg.levels, cfg.scheduled_levels, cfg.overcommitment, share);
        let levels = match (&cfg.cutoffs_bytes, env.size_cdf) {
            (Some(c), _) => Levels::new(unsched, sched, c),
            (None, Some(cdf)) => Levels::from_cdf(unsched, sched, cdf, rtt_bytes),
            // No size distribution (incasts, flow lists): every message at the highest level.
            (None, None) => Levels::new(unsched, sched, &[]),
        };
        Homa {
            cfg: cfg.clone(),
            framing: env.framing,
            levels,
            rtt_bytes,
            rtt_packets: rtt_bytes.div_ceil(env.framing.mtu_bytes as u64),
            msgs: ConnTable::default(),
            hosts: (0..n).map(|h| Host::new(env.nic_rate(h))).collect(),
            scratch: Vec::new(),
            counters: Counters::default(),
        }
    }

    /// Packets of a message sent unscheduled: RTTbytes rounded up to whole packets (so that the
    /// unscheduled data and then the granted data cover a round trip), or the whole message.
    fn unscheduled_packets(&self, layout: &MessageLayout) -> u64 {
        self.rtt_packets.min(layout.packets())
    }

    fn start_flow(&mut self, ctx: &mut Ctx, id: FlowId) {
        let rec = ctx.flow(id);
        let (src, dst) = (rec.src, rec.dst);
        let layout = MessageLayout::new(rec.size, self.framing);
        let unsched = self.unscheduled_packets(&layout);
        let msg = Msg {
            id,
            src,
            dst,
            layout,
            unsched,
            unsched_prio: self.levels.unscheduled(rec.size),
            path_key: mix64(id as u64 ^ 0x40aa) as u32,
            next_new: 0,
            granted: unsched,
            sched_prio: self.levels.lowest(),
            rtx: Default::default(),
            tx_ready: false,
            tx_silence: SilenceTimer::new(ctx.now()),
            rx_known: false,
            rx_granted: 0,
            rx: ReceivedSet::default(),
            rx_payload: 0,
            rx_done: false,
            rx_listed: false,
            rx_silence: SilenceTimer::new(ctx.now()),
        };
        let slot = self.msgs.insert(id, msg);
        self.sync_ready(slot);
        self.arm_tx(ctx, slot);
        self.pump(ctx, src);
        self.check(slot);
    }

    fn on_packet(&mut self, ctx: &mut Ctx, host: HostId, pkt: &Packet) {
        let Some(slot) = self.msgs.slot(pkt.flow) else { return };
        let m = &self.msgs[slot];
        let (at_src, at_dst) = (host == m.src && pkt.src == m.dst, host == m.dst && pkt.src == m.src);
        match pkt.kind {
            PacketKind::Data if at_dst => self.on_data(ctx, slot, pkt),
            PacketKind::Ack if at_dst && pkt.has(BUSY) => self.on_busy(ctx, slot),
            PacketKind::Credit if at_src => self.on_grant(ctx, slot, pkt),
            PacketKind::Nack if at_src => self.on_resend(ctx, slot, pkt),
            PacketKind::Ack if at_src && !pkt.has(BUSY) => {
                if self.on_ack(slot) {
                    return; // the message is gone
                }
            }
            _ => return,
        }
        if self.msgs.slot(pkt.flow).is_some() {
            self.check(slot);
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx, kind: HomaTimer, id: u32) {
        match kind {
            HomaTimer::Pacer => {
                self.hosts[id as usize].pacer.disarm();
                self.kick(ctx, id);
                self.check_host(id);
            }
            HomaTimer::Rx | HomaTimer::Tx => {
                let Some(slot) = self.msgs.slot(id) else { return };
                if kind == HomaTimer::Rx {
                    self.on_rx_timer(ctx, slot);
                } else {
                    self.on_tx_timer(ctx, slot);
                }
                self.check(slot);
            }
        }
    }

    /// A control packet of a message (GRANT, RESEND, ACK from the receiver; BUSY from the sender),
    /// at the highest level.
    fn control(&self, ctx: &Ctx, slot: u32, kind: PacketKind, from_receiver: bool) -> Packet {
        let m = &self.msgs[slot];
        let (a, b) = if from_receiver { (m.dst, m.src) } else { (m.src, m.dst) };
        let mut p = Packet::new(kind, m.id, a, b, self.framing.control_bytes);
        p.path = m.path_key;
        p.lb = self.cfg.lb;
        p.ts = ctx.now();
        p.prio = 0;
        p
    }

    /// The message's bookkeeping invariants (debug builds, after every handler).
    fn check(&self, slot: u32) {
        if !cfg!(debug_assertions) {
            return;
        }
        let m = &self.msgs[slot];
        assert!(m.next_new <= m.granted && m.granted <= m.packets(), "flow {}: sent past the grants", m.id);
        assert!(!m.rx_known || m.granted <= m.rx_granted, "flow {}: sender ahead of the receiver's grants", m.id);
        assert!(m.rx.count() <= m.rx_granted.max(m.unsched), "flow {}: received more than granted", m.id);
        if m.rx_known && m.unsched < m.packets() && m.rx_granted > m.unsched {
            assert!(m.outstanding() <= self.rtt_packets, "flow {}: more than RTTbytes granted", m.id);
        }
        assert_eq!(m.tx_ready, m.sendable(), "flow {}: ready list out of step", m.id);
    }

    /// After a handler that served host `h` (its pacer or its NIC): its ready and inbound lists
    /// hold each of its live messages once, and every message on them holds its invariants.
    fn check_host(&self, h: HostId) {
        if !cfg!(debug_assertions) {
            return;
        }
        let host = &self.hosts[h as usize];
        for (i, &slot) in host.ready.iter().enumerate() {
            assert!(!host.ready[..i].contains(&slot), "host {h}: slot {slot} twice in the ready list");
            assert!(self.msgs[slot].src == h && self.msgs[slot].tx_ready, "host {h}: a ready slot it does not send");
            self.check(slot);
        }
        for (i, &slot) in host.inbound.iter().enumerate() {
            assert!(!host.inbound[..i].contains(&slot), "host {h}: slot {slot} twice in the inbound list");
            assert!(self.msgs[slot].dst == h && self.msgs[slot].rx_listed, "host {h}: an inbound slot not listed");
            self.check(slot);
        }
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let c = &self.counters;
        vec![
            ("data_packets_sent", c.data_sent),
            ("unscheduled_packets_sent", c.unscheduled_sent),
            ("retransmitted_packets", c.retransmitted),
            ("grants_sent", c.grants),
            ("resend_requests", c.resend_requests),
            ("busy_sent", c.busy_sent),
            ("receiver_timeouts", c.receiver_timeouts),
            ("sender_probes", c.probes),
            ("duplicate_packets", c.duplicates),
            ("rtt_bytes", self.rtt_bytes),
            ("scheduled_levels", self.levels.scheduled_count() as u64),
        ]
    }
}

impl Protocol for Homa {
    const NAMES: &'static [(&'static str, &'static str)] = &[(
        "homa",
        "Homa (Montazeri et al., SIGCOMM'18): unscheduled RTTbytes at size-based priorities, receiver grants to the k shortest messages at scheduled priorities",
    )];
    const WANTS_NIC_IDLE: bool = true;
    type Config = HomaConfig;
    type Timer = HomaTimer;

    fn read(s: &mut Section, _name: &str, env: &SpecEnv) -> SpecResult<HomaConfig> {
        HomaConfig::read(s, env.load_balancing)
    }
    fn name(_cfg: &HomaConfig) -> &'static str {
        "homa"
    }
    fn needs(cfg: &HomaConfig) -> Needs {
        let purpose = "Homa's priority levels (short messages bypass long ones through them)";
        Needs {
            classes: vec![ClassUse { key: "priority_levels", class: cfg.levels - 1, explicit: false, purpose }],
            ..Needs::default()
        }
    }
    fn new(cfg: &HomaConfig, env: &TransportEnv) -> Homa {
        Homa::new(cfg, env)
    }
    fn start_flow(&mut self, ctx: &mut Ctx, flow: FlowId) {
        Homa::start_flow(self, ctx, flow)
    }
    fn on_packet(&mut self, ctx: &mut Ctx, host: HostId, pkt: &Packet) {
        Homa::on_packet(self, ctx, host, pkt)
    }
    fn on_timer(&mut self, ctx: &mut Ctx, kind: HomaTimer, id: u32) {
        Homa::on_timer(self, ctx, kind, id)
    }
    fn on_nic_idle(&mut self, ctx: &mut Ctx, host: HostId) {
        self.pump(ctx, host);
        self.check_host(host);
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Homa::counters(self)
    }
    /// Sender: packets granted and sent; receiver: its grant frontier and packets received.
    fn flow_state(&self, flow: FlowId, out: &mut Vec<(&'static str, f64)>) {
        let Some(slot) = self.msgs.slot(flow) else { return };
        let m = &self.msgs[slot];
        out.push(("granted_packets", m.granted as f64));
        out.push(("sent_packets", m.next_new as f64));
        out.push(("receiver_granted_packets", m.rx_granted as f64));
        out.push(("received_packets", m.rx.count() as f64));
        out.push(("scheduled_priority", m.sched_prio as f64));
    }
    /// Eight priority classes and per-packet spraying (the SIRD paper's runs). A lone message is
    /// exact at every size: its unscheduled packets (RTTbytes rounded up to whole packets, the
    /// run's BDP by default) last until the first grant, triggered by the first packet's arrival,
    /// is back, and each later arrival triggers the next grant.
    fn conformance(_name: &str) -> Conformance {
        Conformance {
            spec: "[queue]\npriorities = 8\n[routing]\nload_balancing = \"spray\"\n",
            lone_flow: LoneFlow::Exact,
            exempt: &[],
        }
    }
}
