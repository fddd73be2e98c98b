//! The rate-based sender for the RDMA family (DCQCN, TIMELY, HPCC, ...): each queue pair (QP, one
//! flow) sends at the rate its [`RateControl`] sets, with go-back-N or selective-repeat loss
//! recovery. A protocol built on it is a [`RateProtocol`] (names, controller, its keys);
//! [`RateTransport`] makes it a [`Protocol`]. The controllers are in [`cc`]; the protocols are
//! `transport/{dcqcn,timely,hpcc,dctcp_rate}.rs`.
//!
//! Rules and their sources:
//! - pacing (HPCC authors' ns-3 NIC, `rdma-hw.cc` `UpdateNextAvail`, RATE_BOUND on): after a data
//!   packet of w wire bytes goes, the QP may send again w / rate later; the gap is evaluated at the
//!   QP's current rate, which is what the reference's `ChangeRate` does to a pending gap
//! - NIC arbitration (`qbb-net-device.cc`, `RdmaEgressQueue::GetNextQindex`): the NIC holds no data
//!   backlog; when it goes idle it takes one packet from the next QP in round robin (starting after
//!   the last one served) that has data, is not window-bound and whose pacing time has come; if
//!   none is ready it wakes at the earliest pacing time. ACKs and NACKs go into the NIC queue at
//!   once (the reference's high-priority ACK queue: they never wait behind more than one data packet)
//! - window (optional, HPCC and DCTCP runs: `IsWinBound`): no new data while the payload bytes in
//!   flight (snd_nxt - snd_una) reach the controller's window
//! - receiver, ACK/NACK generation and go-back-N: see [`receiver`] and [`sender`] (`rdma-hw.cc`
//!   `ReceiverCheckSeq`, `ReceiveAck`, `RecoverQueue`); ACK every packet by default (L2AckInterval
//!   1), NACK interval 500 us (the reference's runs); a CE-marked data packet sets the CNP flag on
//!   its ACK or NACK (ECE here; `ReceiveUdp`), at most once per [`RateProtocol::cnp_interval`]
//!   per QP (0 in the reference: every marked packet; DCQCN's notification point coalesces)
//! - selective repeat, in-flight cap and timeouts: IRN (Mittal et al., SIGCOMM 2018): a NACK per
//!   out-of-order packet with its PSN as a SACK, lost packets first, new packets capped at one BDP
//!   in flight (`in_flight_cap_bdp`, BDP-FC), timeout RTO_low = 100 us when at most N = 3 packets
//!   are outstanding, else RTO_high = 320 us. The same timeouts serve go-back-N (the reference has
//!   none: its fabric is lossless); a timeout goes back to snd_una (go-back-N) or resends every
//!   packet not SACKed (selective repeat); the timer restarts whenever the cumulative ACK advances
//! - rate header (RCP, [`RateProtocol::RATE_HEADER`]): data `aux` = the rate the switches allow,
//!   echoed in the ACK's or NACK's `aux`
//! - INT (HPCC, [`RateProtocol::INT`]): the receiver copies the data packet's records into its
//!   ACK or NACK (`ReceiveUdp`: `SetIntHeader`), and the controller reads them from the ACK.
//! - how a QP starts (`fast_start`: line rate, slow start, or PB-FS with the switches' CC-postcards):
//!   [`fast_start`] and `start.rs`; the default (line rate) takes none of its branches.
//!
//! Not modelled: PFC interaction (pauses are the fabric's), L2 chunking and go-back-to-zero, QP
//! set-up, multiple NICs per host, CNP packets separate from ACKs (the CNP rides on the ACK of the
//! marked packet, as in the reference; with `ack_every_packets` > 1 the echo of a packet that is
//! not ACKed is lost, as there).
//!
//! Packet fields: data `seq` = PSN (packet index in the message), `ts` = send time; ACK/NACK
//! `ack` = cumulative PSN (every PSN below it arrived), NACK `seq` = the PSN that arrived out of
//! order (the SACK), `ts` = echoed send time; flag ECE = CNP.

pub mod cc;
pub mod config;
pub mod control;
pub mod ext;
pub mod fast_start;
pub mod receiver;
pub mod sender;
pub mod start;
#[cfg(test)]
mod tests;

use super::conns::ConnTable;
use super::parts::MessageLayout;
use super::{ClassUse, Conformance, Ctx, Framing, LoneFlow, Needs, Protocol, SpecEnv, TransportEnv};
use crate::engine::rng::mix64;
use crate::net::packet::{flags, FlowId, HostId, Packet, PacketKind};
use crate::net::pipeline::stages::int::{IntHop, INT_MAX_HOPS};
use crate::spec_reader::{Section, SpecResult};
use crate::time::{Rate, Time};
use crate::transport::timer::timer_kinds;
pub use config::RateConfig;
pub use control::{RateAck, RateControl};
pub use ext::{AckMarks, FlowMarks, RateExt};
use receiver::{QpReceiver, ReceiverConfig, Reply};
pub use sender::Recovery;
use sender::{Next, QpSender};
use start::{Start, StartCounters};

timer_kinds! {
    /// The rate transports' timers.
    pub enum RateTimer for "rate" {
        /// A queue pair's retransmission timer (id = flow).
        Rto = 0,
        /// A host's NIC may send again (id = host).
        Nic = 1,
        /// A controller's wake-up (id = flow).
        Cc = 2,
    }
}

/// What a controller is built from.
#[derive(Clone, Copy, Debug)]
pub struct QpSetup {
    pub line_rate: Rate,
    pub framing: Framing,
    /// The run's BDP and base RTT as the sender uses them (`bdp_bytes`, or host 0 to the last host:
    /// the HPCC reference's maxBDP and maxRTT, GLOBAL_T).
    pub bdp_bytes: u64,
    pub base_rtt: Time,
}

/// A protocol made of the rate sender and a rate controller.
pub trait RateProtocol {
    const NAMES: &'static [(&'static str, &'static str)];
    /// Data packets are ECN-capable.
    const ECN: bool;
    /// The receiver echoes the data packet's INT records in its ACK/NACK, and the controller sees
    /// them (HPCC); the run must have `[switch] int = true`.
    const INT: bool = false;
    /// Data packets carry a rate header (`aux`, kb/s, written `u32::MAX` by the sender and lowered by
    /// RCP switches, `net::pipeline::stages::rcp`); the receiver echoes it in `aux` of its ACK or NACK and
    /// the controller sees it as [`RateAck::rate_kbps`].
    const RATE_HEADER: bool = false;
    /// How the conformance suite judges a lone flow (exact: it starts at line rate).
    const LONE_FLOW: LoneFlow = LoneFlow::Exact;
    /// The spec fragment the conformance suite runs the protocol with (lone flows start at line
    /// rate, so they are exact).
    const CONFORMANCE_SPEC: &'static str = "";
    type Control: RateControl;
    type Params: Clone + std::fmt::Debug + PartialEq;
    fn read_params(s: &mut Section) -> SpecResult<Self::Params>;
    fn control(params: &Self::Params, qp: &QpSetup) -> Self::Control;
    /// The receiver echoes CE (sets the CNP flag on its ACK or NACK) at most once per this
    /// interval per QP; 0 = for every marked packet (the HPCC reference). DCQCN's notification point.
    fn cnp_interval(_params: &Self::Params) -> Time {
        0
    }
    /// Classes the controller's own keys put packets in (beside `data_priority` and
    /// `control_priority`), checked against the queues like them.
    /// See `Protocol::deflectable` (Dart's short flows).
    fn deflectable(_params: &Self::Params, _size: u64) -> bool {
        false
    }
    fn extra_classes(_params: &Self::Params) -> Vec<ClassUse> {
        Vec::new()
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct RateTransportConfig<P> {
    pub params: P,
    pub sender: RateConfig,
}

/// One queue pair: both halves of a flow (each touched only by its own host).
struct Qp<C> {
    id: FlowId,
    src: HostId,
    dst: HostId,
    path_key: u32,
    tx: QpSender,
    rx: QpReceiver,
    cc: C,
    /// The last data packet: when it went and its wire size (the pacing gap follows the rate).
    last_sent: Option<(Time, u32)>,
    rto_deadline: Option<Time>,
    rto_pending: bool,
    cc_timer_at: Option<Time>,
    /// Receiver: no CE echo before this time (CNP coalescing).
    cnp_allowed_at: Time,
    /// The start layer (`fast_start`): slow start or PB-FS state.
    start: Start,
    /// The extension's marks on this flow's data packets.
    marks: FlowMarks,
}

impl<C: RateControl> Qp<C> {
    /// When the QP may send its next packet (its pacing slot).
    #[inline]
    fn pacing_slot(&self) -> Time {
        self.last_sent.map_or(0, |(at, wire)| at + self.rate().tx_time(wire))
    }
}

/// A host's round robin over its sending QPs.
#[derive(Default)]
struct HostTx {
    qps: Vec<u32>,
    last: usize,
    /// A NIC wake-up timer is pending for this time.
    timer_at: Option<Time>,
}

#[derive(Clone, Copy, Debug, Default)]
struct Counters {
    data_sent: u64,
    retransmitted: u64,
    nacks: u64,
    timeouts: u64,
    ecn_echoes: u64,
}

/// The rate sender running protocol `P`, with the optional extension `E` (`()`: none).
pub struct RateTransport<P: RateProtocol, E: RateExt<P::Params> = ()> {
    cfg: RateTransportConfig<P::Params>,
    ext: E,
    rx_cfg: ReceiverConfig,
    framing: Framing,
    bdp_bytes: u64,
    base_rtt: Time,
    cnp_interval: Time,
    cap_packets: Option<u64>,
    conns: ConnTable<Qp<P::Control>>,
    hosts: Vec<HostTx>,
    counters: Counters,
    /// PB-FS resolved for the run (`fast_start = "pbfs"`).
    pbfs: Option<fast_start::Pbfs>,
    start_counters: StartCounters,
}

impl<P: RateProtocol, E: RateExt<P::Params>> RateTransport<P, E> {
    fn rto(&self, outstanding: u64) -> Time {
        let s = &self.cfg.sender;
        if outstanding <= s.short_timeout_packets {
            s.short_timeout
        } else {
            s.timeout
        }
    }

    /// Restarts the retransmission timer (`restart`) or starts it if data is outstanding.
    fn arm_rto(&mut self, ctx: &mut Ctx, slot: u32, restart: bool) {
        let outstanding = self.conns[slot].tx.outstanding();
        let rto = self.rto(outstanding);
        let q = &mut self.conns[slot];
        if restart || outstanding == 0 {
            q.rto_deadline = None;
        }
        if outstanding > 0 && q.rto_deadline.is_none() {
            let at = ctx.now() + rto;
            q.rto_deadline = Some(at);
            if !q.rto_pending {
                q.rto_pending = true;
                ctx.set_timer(at, RateTimer::Rto, q.id);
            }
        }
    }

    /// Keeps one pending event for the controller's own deadline.
    fn arm_cc(ctx: &mut Ctx, q: &mut Qp<P::Control>) {
        if let Some(t) = q.cc.wake_at() {
            if q.cc_timer_at.is_none_or(|p| t < p) {
                let t = t.max(ctx.now());
                q.cc_timer_at = Some(t);
                ctx.set_timer(t, RateTimer::Cc, q.id);
            }
        }
    }

    /// Whether `slot` has a packet it may send now: `Ok(next)`, or `Err(Some(t))` = at `t`
    /// (pacing), `Err(None)` = not until an ACK (nothing to send, or window-bound).
    fn ready(&mut self, slot: u32, now: Time) -> Result<Next, Option<Time>> {
        let cap = self.cap_packets;
        let q = &mut self.conns[slot];
        let next = q.tx.peek().ok_or(None)?;
        if let Next::Data { .. } = next {
            if cap.is_some_and(|c| q.tx.in_flight() >= c) {
                return Err(None);
            }
            if q.cc.window_bytes().is_some_and(|w| q.tx.in_flight_bytes() >= w) {
                return Err(None);
            }
        }
        let slot_at = q.pacing_slot();
        if slot_at > now {
            return Err(Some(slot_at));
        }
        Ok(next)
    }

    /// If the host's NIC is idle, sends one packet from the next ready QP in round robin, or
    /// arms a wake-up for the earliest pacing slot.
    fn pump(&mut self, ctx: &mut Ctx, host: HostId) {
        if !ctx.nic_is_idle(host) {
            return; // the NIC reports idle when it is done
        }
        let now = ctx.now();
        let n = self.hosts[host as usize].qps.len();
        let mut wake: Option<Time> = None;
        for k in 1..=n {
            let h = &self.hosts[host as usize];
            let i = (h.last + k) % n;
            let slot = h.qps[i];
            match self.ready(slot, now) {
                Ok(next) => {
                    self.hosts[host as usize].last = i;
                    self.send_data(ctx, slot, next);
                    return;
                }
                Err(Some(t)) => wake = Some(wake.map_or(t, |w: Time| w.min(t))),
                Err(None) => {}
            }
        }
        if let Some(t) = wake {
            let h = &mut self.hosts[host as usize];
            if h.timer_at.is_none_or(|p| t < p) {
                h.timer_at = Some(t);
                ctx.set_timer(t, RateTimer::Nic, host);
            }
        }
    }

    fn send_data(&mut self, ctx: &mut Ctx, slot: u32, next: Next) {
        let cfg = &self.cfg.sender;
        let q = &mut self.conns[slot];
        let (psn, retx) = match next {
            Next::Data { psn, retx } => (psn, retx),
            Next::Lost { psn } => (psn, true),
        };
        let layout = q.tx.layout;
        let wire = layout.wire_bytes(psn);
        let mut p = Packet::new(PacketKind::Data, q.id, q.src, q.dst, wire);
        p.payload = layout.payload(psn);
        p.seq = psn;
        p.ts = ctx.now();
        p.path = q.path_key;
        p.lb = cfg.lb;
        p.prio = q.marks.data_priority.unwrap_or(cfg.data_priority);
        p.stage.set_deflect(q.marks.deflect);
        if cfg.ecn_capable {
            p.flags |= flags::ECT;
        }
        if retx {
            p.flags |= flags::RETX;
            self.counters.retransmitted += 1;
        }
        if layout.is_last(psn) {
            p.flags |= flags::LAST;
        }
        if P::RATE_HEADER {
            p.aux = u32::MAX;
        }
        self.mark_pbt(slot, &mut p, retx);
        ctx.send(p);
        self.counters.data_sent += 1;
        let q = &mut self.conns[slot];
        q.cc.on_send(ctx.now(), wire);
        if q.tx.sent(next) {
            ctx.sent(q.id);
        }
        q.last_sent = Some((ctx.now(), wire));
        self.arm_rto(ctx, slot, false);
    }

    fn on_data(&mut self, ctx: &mut Ctx, slot: u32, pkt: &Packet) {
        let q = &mut self.conns[slot];
        let packets = q.tx.layout.packets();
        if pkt.seq >= packets {
            return; // not a packet of this message
        }
        let marks = self.ext.on_data(ctx.now(), pkt);
        let (fresh, reply) = q.rx.on_data(pkt.seq, packets, ctx.now(), &self.rx_cfg);
        if fresh {
            ctx.delivered(q.id, q.tx.layout.payload(pkt.seq) as u64);
            if q.rx.count() == packets {
                ctx.finished(q.id);
                self.ext.on_finished(ctx.now(), q.id);
            }
        }
        let kind = match reply {
            Reply::None => return,
            Reply::Ack => PacketKind::Ack,
            Reply::Nack { .. } => PacketKind::Nack,
        };
        let cfg = &self.cfg.sender;
        let mut a = Packet::new(kind, q.id, q.dst, q.src, self.framing.control_bytes);
        a.ack = q.rx.cumulative();
        if let Reply::Nack { sack } = reply {
            a.seq = sack;
            self.counters.nacks += 1;
        }
        a.ts = pkt.ts;
        // `aux` carries the echoed rate header (RCP) or the extension's value (Dart), never both.
        debug_assert!(!P::RATE_HEADER || marks.aux == 0, "a rate-header protocol with an ACK extension");
        a.aux = if P::RATE_HEADER { pkt.aux } else { marks.aux };
        a.path = q.path_key;
        a.lb = cfg.lb;
        a.prio = cfg.control_priority;
        if pkt.has(flags::CE) && !marks.suppress_ece && ctx.now() >= q.cnp_allowed_at {
            a.flags |= flags::ECE;
            q.cnp_allowed_at = ctx.now() + self.cnp_interval;
        }
        if P::INT {
            // The ACK carries a copy of the data packet's records (the reference's `ReceiveUdp`).
            let mut hops = [IntHop::default(); INT_MAX_HOPS];
            let got = ctx.int_hops();
            let n = got.len().min(INT_MAX_HOPS);
            hops[..n].copy_from_slice(&got[..n]);
            ctx.send_with_int(a, &hops[..n]);
        } else {
            ctx.send(a);
        }
    }

    /// Returns whether the QP is done (every packet acknowledged).
    fn on_feedback(&mut self, ctx: &mut Ctx, slot: u32, pkt: &Packet) -> bool {
        let now = ctx.now();
        let nack = pkt.kind == PacketKind::Nack;
        self.before_feedback(slot, now, nack || pkt.has(flags::ECE));
        let q = &mut self.conns[slot];
        let rate_before = q.cc.rate();
        let acked = if nack { q.tx.on_nack(pkt.ack, pkt.seq) } else { q.tx.on_ack(pkt.ack) };
        let ece = pkt.has(flags::ECE);
        if ece {
            self.counters.ecn_echoes += 1;
            q.cc.on_cnp(now);
        }
        if nack {
            q.cc.on_nack(now);
        }
        let layout = q.tx.layout;
        let info = RateAck {
            now,
            nack,
            acked_bytes: layout.offset(q.tx.snd_una()) - layout.offset(q.tx.snd_una() - acked),
            ece,
            rtt_sample_ps: now.saturating_sub(pkt.ts),
            acked_total_bytes: layout.offset(q.tx.snd_una()),
            sent_total_bytes: layout.offset(q.tx.snd_nxt()),
            int: if P::INT { ctx.int_hops() } else { &[] },
            rate_kbps: if P::RATE_HEADER { pkt.aux } else { 0 },
            aux: if P::RATE_HEADER { 0 } else { pkt.aux },
        };
        q.cc.on_ack(&info);
        if q.tx.done() {
            return true;
        }
        if !matches!(q.start, Start::Plain) {
            let (acked_bytes, line) = (info.acked_bytes, ctx.nic_rate(q.src));
            self.after_feedback(slot, now, rate_before, acked_bytes, line);
        }
        let q = &mut self.conns[slot];
        Self::arm_cc(ctx, q);
        self.arm_rto(ctx, slot, acked > 0);
        false
    }

    fn on_rto_timer(&mut self, ctx: &mut Ctx, slot: u32) {
        let q = &mut self.conns[slot];
        q.rto_pending = false;
        let Some(deadline) = q.rto_deadline else { return };
        if ctx.now() < deadline {
            q.rto_pending = true;
            ctx.set_timer(deadline, RateTimer::Rto, q.id);
            return;
        }
        self.counters.timeouts += 1;
        self.on_start_timeout(slot, ctx.now());
        let q = &mut self.conns[slot];
        q.tx.on_timeout();
        q.cc.on_rto(ctx.now());
        Self::arm_cc(ctx, q);
        self.arm_rto(ctx, slot, true);
    }

    fn retire(&mut self, slot: u32) {
        let (id, src) = (self.conns[slot].id, self.conns[slot].src);
        let h = &mut self.hosts[src as usize];
        if let Some(i) = h.qps.iter().position(|&s| s == slot) {
            h.qps.remove(i);
            if h.last >= i {
                // Keep the turn order of the others: the QP after the removed one goes next.
                h.last = h.last.checked_sub(1).unwrap_or(h.qps.len().saturating_sub(1));
            }
        }
        self.conns.remove(id, slot);
    }

    fn check(&self, slot: u32) {
        if !cfg!(debug_assertions) {
            return;
        }
        let q = &self.conns[slot];
        q.tx.check_invariants();
        let packets = q.tx.layout.packets();
        assert!(q.rx.cumulative() <= packets && q.rx.count() <= packets);
        assert!(q.tx.snd_una() <= q.rx.cumulative(), "flow {}: acknowledged more than received", q.id);
        assert_eq!(
            q.rto_deadline.is_some(),
            q.tx.outstanding() > 0,
            "flow {}: RTO armed iff data is outstanding",
            q.id
        );
        assert!(q.rto_deadline.is_none() || q.rto_pending, "flow {}: RTO without a timer", q.id);
        assert!(self.hosts[q.src as usize].qps.contains(&slot), "flow {}: not in its host's round robin", q.id);
        q.cc.check_invariants();
    }

    /// After a handler that served host `h`'s NIC: every QP of its round robin.
    fn check_host(&self, h: HostId) {
        if cfg!(debug_assertions) {
            let qps = &self.hosts[h as usize].qps;
            for (i, &slot) in qps.iter().enumerate() {
                assert!(!qps[..i].contains(&slot), "host {h}: QP slot {slot} twice in the round robin");
                assert_eq!(self.conns[slot].src, h, "host {h}: another host's QP in its round robin");
                self.check(slot);
            }
        }
    }
}

/// Why IRN's default timeouts are suspect on a lossless fabric.
const PFC_TIMEOUT_WARNING: &str = "IRN's default timeouts (320 us, 100 us with few packets out) on a lossless (PFC) \
    fabric: behind pauses and deep queues they fire with nothing lost and resend whole windows; the HPCC reference's \
    RoCE NIC has no timer (set timeout_us and short_timeout_us above the longest queueing delay, e.g. 1e7)";

impl<P: RateProtocol, E: RateExt<P::Params>> Protocol for RateTransport<P, E> {
    const NAMES: &'static [(&'static str, &'static str)] = P::NAMES;
    const WANTS_NIC_IDLE: bool = true;
    type Config = RateTransportConfig<P::Params>;
    type Timer = RateTimer;

    fn read(s: &mut Section, name: &str, env: &SpecEnv) -> SpecResult<Self::Config> {
        let params = P::read_params(s)?;
        let sender = RateConfig::read(s, name, env, P::ECN)?;
        s.ensure(
            !P::INT || env.stages.has::<crate::net::pipeline::stages::int::Int>(),
            "protocol",
            format!("{name} reacts to in-band telemetry: set [switch] int = true (switches stamp INT records)"),
        )?;
        s.ensure(
            !P::RATE_HEADER || env.stages.has::<crate::net::pipeline::stages::rcp::Rcp>(),
            "protocol",
            format!("{name} paces at the rate its switches compute: set [switch] rcp = true"),
        )?;
        Ok(RateTransportConfig { params, sender })
    }

    fn name(_cfg: &Self::Config) -> &'static str {
        P::NAMES[0].0
    }

    fn deflectable(cfg: &Self::Config, size: u64) -> bool {
        P::deflectable(&cfg.params, size)
    }

    fn conformance(_name: &str) -> Conformance {
        Conformance { spec: P::CONFORMANCE_SPEC, lone_flow: P::LONE_FLOW, exempt: &[] }
    }

    fn needs(cfg: &Self::Config) -> Needs {
        let class = |key, class, purpose| ClassUse { key, class, explicit: true, purpose };
        let (data, control) = (cfg.sender.data_priority, cfg.sender.control_priority);
        let mut classes =
            vec![class("data_priority", data, "data"), class("control_priority", control, "ACKs and NACKs")];
        classes.extend(P::extra_classes(&cfg.params));
        let mut warnings = Vec::new();
        if cfg.sender.default_timeouts_on_pfc {
            warnings.push(("timeout_us", PFC_TIMEOUT_WARNING));
        }
        Needs { classes, warnings, rate_header: P::RATE_HEADER, ..Needs::default() }
    }

    fn new(cfg: &Self::Config, env: &TransportEnv) -> Self {
        let s = &cfg.sender;
        let hosts = env.hosts();
        let bdp_bytes = s.bdp_bytes.unwrap_or_else(|| env.bdp_bytes(0, hosts.saturating_sub(1)));
        let base_rtt = env.base_rtt(0, hosts.saturating_sub(1));
        let cap_packets =
            s.in_flight_cap_bdp.map(|c| ((c * bdp_bytes as f64) / env.framing.mtu_bytes as f64).ceil().max(1.0) as u64);
        RateTransport {
            cfg: cfg.clone(),
            ext: E::new(&cfg.params, env),
            rx_cfg: ReceiverConfig {
                mode: s.recovery,
                ack_every_packets: s.ack_every_packets,
                nack_interval: s.nack_interval,
            },
            framing: env.framing,
            bdp_bytes,
            base_rtt,
            cnp_interval: P::cnp_interval(&cfg.params),
            cap_packets,
            conns: ConnTable::default(),
            hosts: (0..hosts).map(|_| HostTx::default()).collect(),
            counters: Counters::default(),
            pbfs: match &s.fast_start {
                fast_start::FastStart::Pbfs(k) => Some(fast_start::Pbfs::new(k, base_rtt, bdp_bytes)),
                _ => None,
            },
            start_counters: StartCounters::default(),
        }
    }

    fn start_flow(&mut self, ctx: &mut Ctx, id: FlowId) {
        let rec = ctx.flow(id);
        let (src, dst, size) = (rec.src, rec.dst, rec.size);
        let setup = QpSetup {
            line_rate: ctx.nic_rate(src),
            framing: self.framing,
            bdp_bytes: self.bdp_bytes,
            base_rtt: self.base_rtt,
        };
        let layout = MessageLayout::new(size, self.framing);
        let start = self.initial_start(size, setup.line_rate);
        let marks = self.ext.on_flow_start(ctx.now(), id, ctx.flow(id));
        let mut q = Qp {
            id,
            src,
            dst,
            path_key: mix64(id as u64 ^ 0x5eed) as u32,
            tx: QpSender::new(layout, self.cfg.sender.recovery),
            rx: QpReceiver::default(),
            cc: P::control(&self.cfg.params, &setup),
            last_sent: None,
            rto_deadline: None,
            rto_pending: false,
            cc_timer_at: None,
            cnp_allowed_at: 0,
            start,
            marks,
        };
        Self::arm_cc(ctx, &mut q);
        let slot = self.conns.insert(id, q);
        self.hosts[src as usize].qps.push(slot);
        self.pump(ctx, src);
        self.check(slot);
    }

    fn on_packet(&mut self, ctx: &mut Ctx, host: HostId, pkt: &Packet) {
        if pkt.kind == PacketKind::Control && self.pbfs.is_some() {
            if self.on_postcard(ctx, host, pkt) {
                self.pump(ctx, host);
            }
            return self.check_host(host);
        }
        if matches!(pkt.kind, PacketKind::Ack | PacketKind::Nack) {
            self.ext.on_control(ctx.now(), host, pkt);
        }
        let Some(slot) = self.conns.slot(pkt.flow) else {
            return; // a straggler of a finished QP
        };
        let (src, dst) = (self.conns[slot].src, self.conns[slot].dst);
        match pkt.kind {
            PacketKind::Data if host == dst => self.on_data(ctx, slot, pkt),
            PacketKind::Ack | PacketKind::Nack if host == src => {
                if self.on_feedback(ctx, slot, pkt) {
                    self.retire(slot);
                    self.pump(ctx, src);
                    return;
                }
                self.pump(ctx, src);
            }
            _ => return, // a kind this sender does not use
        }
        self.check(slot);
    }

    fn on_timer(&mut self, ctx: &mut Ctx, kind: RateTimer, id: u32) {
        match kind {
            RateTimer::Nic => {
                let Some(h) = self.hosts.get_mut(id as usize) else { return };
                if h.timer_at == Some(ctx.now()) {
                    h.timer_at = None;
                }
                self.pump(ctx, id);
                self.check_host(id);
            }
            RateTimer::Rto | RateTimer::Cc => {
                let Some(slot) = self.conns.slot(id) else { return };
                if kind == RateTimer::Rto {
                    self.on_rto_timer(ctx, slot);
                } else {
                    let q = &mut self.conns[slot];
                    if q.cc_timer_at == Some(ctx.now()) {
                        q.cc_timer_at = None;
                    }
                    if q.cc.wake_at().is_some_and(|t| t <= ctx.now()) {
                        q.cc.on_wake(ctx.now());
                    }
                    Self::arm_cc(ctx, q);
                }
                let src = self.conns[slot].src;
                self.pump(ctx, src);
                self.check(slot);
            }
        }
    }

    fn on_nic_idle(&mut self, ctx: &mut Ctx, host: HostId) {
        if (host as usize) < self.hosts.len() {
            self.pump(ctx, host);
            self.check_host(host);
        }
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let c = &self.counters;
        let mut out = vec![
            ("data_packets_sent", c.data_sent),
            ("retransmitted_packets", c.retransmitted),
            ("nacks_sent", c.nacks),
            ("timeouts", c.timeouts),
            ("ecn_echoes_received", c.ecn_echoes),
        ];
        self.start_counters.report(&self.cfg.sender.fast_start, &mut out);
        self.ext.counters(&mut out);
        out
    }

    fn flow_state(&self, flow: FlowId, out: &mut Vec<(&'static str, f64)>) {
        if let Some(slot) = self.conns.slot(flow) {
            let q = &self.conns[slot];
            q.cc.state(out);
            out.push(("in_flight_bytes", q.tx.in_flight_bytes() as f64));
        }
    }
}
