//! DCTCP and TCP NewReno.
//!
//! Paper: M. Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010; loss recovery per
//! RFC 6582 (NewReno) and RFC 6298 (RTO). `newreno` is this sender with ECN off.
//!
//! Modelled:
//! - byte-counted window; slow start from `init_cwnd_packets` or a fixed initial window
//!   (`slow_start = false` starts in congestion avoidance); additive increase of one MSS per window
//! - ECN: data is ECN-capable; the receiver echoes CE on the ACK of that very packet (one ACK per
//!   data packet, so the echo is exact); the sender keeps alpha <- (1-g) alpha + g F, F = fraction of
//!   bytes acked with ECE over the last window of data, and cuts cwnd by alpha/2 at most once per window
//! - fast retransmit on `dupack_threshold` duplicate ACKs and NewReno fast recovery with partial ACKs
//! - RTO from SRTT/RTTVAR (timestamps echoed in ACKs, so no Karn ambiguity), `min_rto_us`
//!   floor, exponential back-off, go-back-N after a timeout; the receiver buffers out-of-order data
//!
//! Not modelled: connection set-up and tear-down (data flows from the first instant), delayed
//! ACKs, SACK, receive windows, Nagle, pacing, TSO/segmentation offload.
//!
//! Packet fields: `seq` = byte offset of the first payload byte; `ack` = cumulative ACK (next byte
//! expected); `ts` = send time of the data packet, echoed by its ACK; `path` = the flow's ECMP key.

use super::conns::ConnTable;
use super::parts::{ReceivedBytes, RttEstimator};
use super::{Ctx, Framing, Protocol, SpecEnv, TransportEnv};
use crate::engine::rng::mix64;
use crate::engine::time::{from_us, Time};
use crate::net::packet::{flags, FlowId, HostId, LoadBalancing, Packet, PacketKind};
use crate::scenario::reader::{Section, SpecResult};

const TIMER_RTO: u8 = 0;

#[derive(Clone, Debug, PartialEq)]
pub struct DctcpConfig {
    /// React to ECN echoes (DCTCP); false = NewReno.
    pub ecn: bool,
    /// EWMA gain for alpha.
    pub g: f64,
    /// Alpha before the first window completes.
    pub init_alpha: f64,
    pub init_cwnd_packets: u64,
    pub slow_start: bool,
    pub max_cwnd_packets: Option<u64>,
    pub min_rto: Time,
    pub initial_rto: Time,
    pub dupack_threshold: u32,
    pub data_priority: u8,
    pub ack_priority: u8,
    pub lb: LoadBalancing,
}

impl DctcpConfig {
    pub fn read(s: &mut Section, ecn: bool, lb: LoadBalancing) -> SpecResult<DctcpConfig> {
        let (g, init_alpha) = if ecn || s.is_describe() {
            let g = s.f64_or(
                "g",
                1.0 / 16.0,
                "",
                "[dctcp] alpha EWMA gain (the DCTCP paper: 1/16; SIRD's evaluation: 0.08)",
            )?;
            s.ensure(g > 0.0 && g <= 1.0, "g", format!("must be in (0, 1], got {g}"))?;
            let a = s.f64_or("init_alpha", 1.0, "", "[dctcp] alpha before the first window of ACKs (Linux: 1)")?;
            s.ensure((0.0..=1.0).contains(&a), "init_alpha", "must be in [0, 1]")?;
            (g, a)
        } else {
            (0.0, 0.0)
        };
        let iw = s.u64_or(
            "init_cwnd_packets",
            10,
            "packets",
            "[dctcp, newreno] initial congestion window (SIRD's evaluation: ~1 BDP)",
        )?;
        s.ensure((1..=1_000_000).contains(&iw), "init_cwnd_packets", "must be in [1, 1000000]")?;
        let slow_start = s.bool_or(
            "slow_start",
            true,
            "[dctcp, newreno] grow exponentially up to ssthresh; false = fixed initial window, additive increase only",
        )?;
        let max_cwnd = s.u64_opt("max_cwnd_packets", "packets", "[dctcp, newreno] cap on the window; unset = none")?;
        if let Some(m) = max_cwnd {
            s.ensure(m >= 1, "max_cwnd_packets", "must be at least 1")?;
        }
        let min_rto = s.f64_or("min_rto_us", 200.0, "us", "[dctcp, newreno] floor of the retransmission timeout")?;
        s.ensure(min_rto > 0.0 && min_rto <= 1e7, "min_rto_us", "must be in (0, 1e7] us")?;
        let init_rto = s.f64_or(
            "initial_rto_us",
            1000.0,
            "us",
            "[dctcp, newreno] retransmission timeout before the first RTT sample",
        )?;
        s.ensure(init_rto > 0.0 && init_rto <= 1e7, "initial_rto_us", "must be in (0, 1e7] us")?;
        let dupack =
            s.u64_or("dupack_threshold", 3, "ACKs", "[dctcp, newreno] duplicate ACKs that trigger fast retransmit")?;
        s.ensure((1..=100).contains(&dupack), "dupack_threshold", "must be in [1, 100]")?;
        let data_priority =
            s.u64_or("data_priority", 0, "class", "[dctcp, newreno] priority class of data packets (0 = highest)")?;
        let ack_priority =
            s.u64_or("ack_priority", 0, "class", "[dctcp, newreno] priority class of ACKs (0 = highest)")?;
        s.ensure(data_priority < 8, "data_priority", "must be in 0..7")?;
        s.ensure(ack_priority < 8, "ack_priority", "must be in 0..7")?;
        s.ensure(
            lb != LoadBalancing::Source,
            "protocol",
            "DCTCP does not choose source routes; use routing.load_balancing = \"ecmp\" or \"spray\"",
        )?;
        Ok(DctcpConfig {
            ecn,
            g,
            init_alpha,
            init_cwnd_packets: iw,
            slow_start,
            max_cwnd_packets: max_cwnd,
            min_rto: from_us(min_rto),
            initial_rto: from_us(init_rto),
            dupack_threshold: dupack as u32,
            data_priority: data_priority as u8,
            ack_priority: ack_priority as u8,
            lb,
        })
    }
}

/// One connection: both the sender's and the receiver's half (each touched only by its own host).
struct Conn {
    id: FlowId,
    src: HostId,
    dst: HostId,
    size: u64,
    path_key: u32,
    // Sender.
    snd_una: u64,
    snd_nxt: u64,
    /// Highest byte ever sent (snd_nxt goes back after a timeout).
    snd_max: u64,
    cwnd: f64,
    ssthresh: f64,
    dupacks: u32,
    in_recovery: bool,
    recover: u64,
    alpha: f64,
    /// Alpha is updated when snd_una passes this (one window of data).
    alpha_window_end: u64,
    acked_in_window: u64,
    marked_in_window: u64,
    /// No further ECN cut until snd_una passes this.
    cwr_end: u64,
    rtt: RttEstimator,
    backoff: u32,
    /// When the retransmission timer expires; `None` when nothing is outstanding.
    rto_deadline: Option<Time>,
    timer_pending: bool,
    // Receiver.
    received: ReceivedBytes,
}

pub struct Dctcp {
    cfg: DctcpConfig,
    framing: Framing,
    conns: ConnTable<Conn>,
    retransmits: u64,
    fast_retransmits: u64,
    timeouts: u64,
    ecn_cuts: u64,
}

impl Dctcp {
    fn new(cfg: &DctcpConfig, env: &TransportEnv) -> Dctcp {
        Dctcp {
            cfg: cfg.clone(),
            framing: env.framing,
            conns: ConnTable::default(),
            retransmits: 0,
            fast_retransmits: 0,
            timeouts: 0,
            ecn_cuts: 0,
        }
    }

    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("retransmitted_packets", self.retransmits),
            ("fast_retransmits", self.fast_retransmits),
            ("timeouts", self.timeouts),
            ("ecn_window_cuts", self.ecn_cuts),
        ]
    }

    fn mss(&self) -> u64 {
        self.framing.mss() as u64
    }

    fn max_cwnd(&self) -> f64 {
        self.cfg.max_cwnd_packets.map_or(f64::INFINITY, |m| (m * self.mss()) as f64)
    }

    pub fn start_flow(&mut self, ctx: &mut Ctx, id: FlowId) {
        let rec = ctx.flow(id);
        let mss = self.mss() as f64;
        let cwnd = (self.cfg.init_cwnd_packets as f64 * mss).min(self.max_cwnd());
        let conn = Conn {
            id,
            src: rec.src,
            dst: rec.dst,
            size: rec.size,
            path_key: mix64(id as u64 ^ 0x5eed) as u32,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            cwnd,
            ssthresh: if self.cfg.slow_start { f64::INFINITY } else { cwnd },
            dupacks: 0,
            in_recovery: false,
            recover: 0,
            alpha: self.cfg.init_alpha,
            alpha_window_end: 0,
            acked_in_window: 0,
            marked_in_window: 0,
            cwr_end: 0,
            rtt: RttEstimator::new(self.cfg.initial_rto, self.cfg.min_rto),
            backoff: 0,
            rto_deadline: None,
            timer_pending: false,
            received: ReceivedBytes::default(),
        };
        let slot = self.conns.insert(id, conn);
        self.send_window(ctx, slot);
    }

    /// Sends new data while the window allows.
    fn send_window(&mut self, ctx: &mut Ctx, slot: u32) {
        let mss = self.mss();
        let c = &mut self.conns[slot];
        loop {
            if c.snd_nxt >= c.size {
                break;
            }
            let len = mss.min(c.size - c.snd_nxt);
            let flight = c.snd_nxt - c.snd_una;
            // Always allow one segment when nothing is in flight, so a window under one MSS cannot stall.
            if flight > 0 && (flight + len) as f64 > c.cwnd {
                break;
            }
            let retx = c.snd_nxt < c.snd_max;
            Self::emit(&self.cfg, self.framing, ctx, c, c.snd_nxt, len as u32, retx);
            if retx {
                self.retransmits += 1;
            }
            c.snd_nxt += len;
            c.snd_max = c.snd_max.max(c.snd_nxt);
        }
        Self::arm_timer(ctx, c);
    }

    fn emit(cfg: &DctcpConfig, framing: Framing, ctx: &mut Ctx, c: &Conn, seq: u64, len: u32, retx: bool) {
        let mut p = Packet::new(PacketKind::Data, c.id, c.src, c.dst, framing.wire(len));
        p.payload = len;
        p.seq = seq;
        p.ts = ctx.now();
        p.path = c.path_key;
        p.lb = cfg.lb;
        p.prio = cfg.data_priority;
        if cfg.ecn {
            p.flags |= flags::ECT;
        }
        if retx {
            p.flags |= flags::RETX;
        }
        if seq + len as u64 == c.size {
            p.flags |= flags::LAST;
        }
        ctx.send(p);
    }

    /// Keeps one pending timer event per connection; the deadline itself moves without events.
    fn arm_timer(ctx: &mut Ctx, c: &mut Conn) {
        if c.snd_una < c.snd_nxt {
            if c.rto_deadline.is_none() {
                c.rto_deadline = Some(ctx.now() + c.rtt.backed_off_rto_ps(c.backoff));
            }
            if !c.timer_pending {
                c.timer_pending = true;
                ctx.set_timer(c.rto_deadline.unwrap(), TIMER_RTO, c.id);
            }
        } else {
            c.rto_deadline = None;
        }
    }

    pub fn on_packet(&mut self, ctx: &mut Ctx, host: HostId, pkt: &Packet) {
        let Some(slot) = self.conns.slot(pkt.flow) else {
            return; // a straggler for a connection that already finished
        };
        match pkt.kind {
            PacketKind::Data => {
                debug_assert_eq!(host, pkt.dst);
                self.on_data(ctx, slot, pkt)
            }
            PacketKind::Ack => self.on_ack(ctx, slot, pkt),
            _ => {} // not a DCTCP packet kind (e.g. a trimmed header): ignored
        }
    }

    fn on_data(&mut self, ctx: &mut Ctx, slot: u32, pkt: &Packet) {
        let c = &mut self.conns[slot];
        let fresh = c.received.insert(pkt.seq, pkt.seq + pkt.payload as u64);
        if fresh > 0 {
            ctx.delivered(c.id, fresh);
            if c.received.next_expected() == c.size {
                ctx.finished(c.id);
            }
        }
        let mut ack = Packet::new(PacketKind::Ack, c.id, c.dst, c.src, self.framing.control_bytes);
        ack.ack = c.received.next_expected();
        ack.ts = pkt.ts;
        ack.path = c.path_key;
        ack.lb = self.cfg.lb;
        ack.prio = self.cfg.ack_priority;
        if pkt.has(flags::CE) {
            ack.flags |= flags::ECE;
        }
        ctx.send(ack);
    }

    fn on_ack(&mut self, ctx: &mut Ctx, slot: u32, pkt: &Packet) {
        let mss = self.mss();
        let max_cwnd = self.max_cwnd();
        let ack = pkt.ack;
        if ack < self.conns[slot].snd_una {
            return; // old, reordered ACK
        }
        let c = &mut self.conns[slot];
        c.rtt.on_sample(ctx.now() - pkt.ts);
        let cfg = &self.cfg;
        let ece = pkt.has(flags::ECE) && cfg.ecn;

        if ack == c.snd_una {
            if c.snd_nxt > c.snd_una {
                c.dupacks += 1;
                if c.in_recovery {
                    c.cwnd += mss as f64; // window inflation: one segment left the network
                } else if c.dupacks == cfg.dupack_threshold {
                    // Fast retransmit, then NewReno fast recovery.
                    let flight = (c.snd_max - c.snd_una) as f64;
                    c.ssthresh = (flight / 2.0).max(2.0 * mss as f64);
                    c.cwnd = c.ssthresh + (cfg.dupack_threshold as u64 * mss) as f64;
                    c.in_recovery = true;
                    c.recover = c.snd_max;
                    c.cwr_end = c.snd_max; // a loss cut counts as this window's reduction
                    let len = mss.min(c.size - c.snd_una) as u32;
                    Self::emit(cfg, self.framing, ctx, c, c.snd_una, len, true);
                    self.fast_retransmits += 1;
                    self.retransmits += 1;
                }
            }
            self.send_window(ctx, slot);
            return;
        }

        // New data acknowledged.
        let acked = ack - c.snd_una;
        c.snd_una = ack;
        if c.snd_nxt < ack {
            c.snd_nxt = ack; // after a go-back-N, the receiver may have had data beyond snd_nxt
        }
        c.dupacks = 0;
        c.backoff = 0;
        c.rto_deadline = None;

        if cfg.ecn {
            c.acked_in_window += acked;
            if ece {
                c.marked_in_window += acked;
            }
            if c.snd_una >= c.alpha_window_end {
                let f = if c.acked_in_window > 0 { c.marked_in_window as f64 / c.acked_in_window as f64 } else { 0.0 };
                c.alpha = (1.0 - cfg.g) * c.alpha + cfg.g * f;
                c.acked_in_window = 0;
                c.marked_in_window = 0;
                c.alpha_window_end = c.snd_nxt;
            }
        }

        if c.in_recovery {
            if ack >= c.recover {
                c.in_recovery = false;
                c.cwnd = c.ssthresh;
            } else {
                // Partial ACK: retransmit the next hole, deflate by what was acked.
                let len = mss.min(c.size - c.snd_una) as u32;
                Self::emit(cfg, self.framing, ctx, c, c.snd_una, len, true);
                self.retransmits += 1;
                c.cwnd = (c.cwnd - acked as f64 + mss as f64).max(mss as f64);
            }
        } else if ece && c.snd_una > c.cwr_end {
            c.cwnd = (c.cwnd * (1.0 - c.alpha / 2.0)).max(mss as f64);
            c.ssthresh = c.cwnd;
            c.cwr_end = c.snd_nxt;
            self.ecn_cuts += 1;
        } else if c.cwnd < c.ssthresh {
            c.cwnd += acked as f64;
        } else {
            c.cwnd += (mss * acked) as f64 / c.cwnd;
        }
        c.cwnd = c.cwnd.min(max_cwnd);

        if c.snd_una >= c.size {
            // All data acknowledged: the connection is done on both sides.
            c.received.clear_out_of_order();
            let id = c.id;
            self.conns.remove(id, slot);
            return;
        }
        self.send_window(ctx, slot);
    }

    pub fn on_timer(&mut self, ctx: &mut Ctx, kind: u8, id: u32) {
        debug_assert_eq!(kind, TIMER_RTO);
        let Some(slot) = self.conns.slot(id) else { return };
        let mss = self.mss() as f64;
        let c = &mut self.conns[slot];
        c.timer_pending = false;
        let Some(deadline) = c.rto_deadline else { return };
        if ctx.now() < deadline {
            c.timer_pending = true;
            ctx.set_timer(deadline, TIMER_RTO, id);
            return;
        }
        // Timeout: collapse the window and go back to the first unacknowledged byte.
        self.timeouts += 1;
        let flight = (c.snd_max - c.snd_una) as f64;
        c.ssthresh = (flight / 2.0).max(2.0 * mss);
        c.cwnd = mss;
        c.snd_nxt = c.snd_una;
        c.in_recovery = false;
        c.dupacks = 0;
        c.cwr_end = c.snd_max;
        c.backoff += 1;
        c.rto_deadline = None;
        self.send_window(ctx, slot);
    }
}

impl Protocol for Dctcp {
    const NAMES: &'static [(&'static str, &'static str)] = &[
        ("dctcp", "DCTCP (Alizadeh et al., SIGCOMM'10): ECN-driven window control over NewReno"),
        ("newreno", "TCP NewReno: the same sender with ECN off (reacts to loss only)"),
    ];
    type Config = DctcpConfig;

    fn read(s: &mut Section, name: &str, env: &SpecEnv) -> SpecResult<DctcpConfig> {
        DctcpConfig::read(s, name == "dctcp", env.load_balancing)
    }
    fn name(cfg: &DctcpConfig) -> &'static str {
        if cfg.ecn {
            "dctcp"
        } else {
            "newreno"
        }
    }
    fn new(cfg: &DctcpConfig, env: &TransportEnv) -> Dctcp {
        Dctcp::new(cfg, env)
    }
    fn start_flow(&mut self, ctx: &mut Ctx, flow: FlowId) {
        Dctcp::start_flow(self, ctx, flow)
    }
    fn on_packet(&mut self, ctx: &mut Ctx, host: HostId, pkt: &Packet) {
        Dctcp::on_packet(self, ctx, host, pkt)
    }
    fn on_timer(&mut self, ctx: &mut Ctx, kind: u8, id: u32) {
        Dctcp::on_timer(self, ctx, kind, id)
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Dctcp::counters(self)
    }
    /// The sender's window state (ssthresh is infinite until the first loss or ECN cut; srtt from
    /// the first RTT sample on; alpha for DCTCP only).
    fn flow_state(&self, flow: FlowId, out: &mut Vec<(&'static str, f64)>) {
        let Some(slot) = self.conns.slot(flow) else { return };
        let c = &self.conns[slot];
        out.push(("cwnd_bytes", c.cwnd));
        out.push(("ssthresh_bytes", c.ssthresh));
        out.push(("in_flight_bytes", (c.snd_nxt - c.snd_una) as f64));
        if self.cfg.ecn {
            out.push(("alpha", c.alpha));
        }
        if let Some(srtt) = c.rtt.srtt_ps() {
            out.push(("srtt_us", srtt / 1e6));
        }
    }
}
