//! One reliable byte stream over the window sender: the sender's and the receiver's halves of a
//! connection (each touched only by its own host), generic over the congestion controller.
//!
//! Sender: snd_una (first unacknowledged byte), snd_nxt (next byte to send; goes back after a
//! timeout), snd_max (highest byte ever sent). New data goes while the bytes in flight fit the
//! controller's window (one segment is always allowed when nothing is in flight, so a window
//! under one MSS cannot stall, unless `sub_packet_wait` makes it wait for the retransmission
//! timer) and, when the controller sets a pacing rate, no sooner than the pacing slot. Loss
//! recovery: fast retransmit on the `dupack_threshold`-th duplicate ACK, then NewReno fast
//! recovery (RFC 6582) with partial ACKs resending the next hole, until the ACK passes `recover`
//! (snd_max when recovery began); the retransmission timer (RFC 6298, via [`RttEstimator`]) backs
//! off exponentially and goes back N (snd_nxt = snd_una).
//!
//! Receiver: cumulative ACK (next byte expected), out-of-order data buffered; one ACK per data
//! packet, echoing the packet's CE mark (ECE) and its send time stamp.
//!
//! Packet fields: `seq` = byte offset of the first payload byte; `ack` = cumulative ACK; `ts` =
//! send time of the data packet, echoed by its ACK; `path` = the flow's ECMP key; `aux` = the
//! subflow index (0 unless the stream is one subflow of an MPTCP connection, `transport::mptcp`).
//!
//! As an MPTCP subflow ([`Conn::on_subflow`]) the stream's length grows as the connection's
//! scheduler hands it data ([`Conn::extend`]), and its timers carry the subflow in their kind
//! ([`WindowTimer`]).

use super::cc::{AckInfo, AckPhase, CongestionControl, LossInfo};
use super::pool::Warm;
use super::timer::WindowTimer;
use crate::engine::rng::{mix64, Rng};
use crate::net::packet::{flags, FlowId, HostId, LoadBalancing, Packet, PacketKind};
use crate::net::pipeline::postcard::PbtMark;
use crate::time::Time;
use crate::transport::parts::{ReceivedBytes, RttEstimator};
use crate::transport::rate::fast_start::PbfsFlow;
use crate::transport::{Ctx, Framing};

/// The sender's fixed parameters (the controller has its own).
#[derive(Clone, Debug, PartialEq)]
pub struct SenderConfig {
    pub framing: Framing,
    pub dupack_threshold: u32,
    pub min_rto: Time,
    pub initial_rto: Time,
    pub data_priority: u8,
    pub control_priority: u8,
    /// Data packets carry ECT (switches with ECN mark them rather than drop).
    pub ecn_capable: bool,
    pub lb: LoadBalancing,
    /// PB-FS's marking distance Delta (`fast_start = "pbfs"`, `super::pbfs`); `None` = off.
    pub pbt_distance: Option<u64>,
    /// A flow completes when its sender has the ACK of the last byte (`fct_end = "last_ack"`), not
    /// when the receiver has the byte; the window transport then records the completion.
    pub fct_at_last_ack: bool,
    /// `window_floor = "none"` (RFC 3168 6.1.2, as ns-2's TcpAgent and FullTcp do it): a window
    /// under one MSS sends nothing, not even with nothing in flight; the connection waits for its
    /// retransmission timer, which each ACK restarts, and an ECN echo answered at a window of one
    /// packet or less backs the timer off once more if the previous answer was also made there (and
    /// such echoes do not end the back-off). False = one segment may always go when nothing is in
    /// flight.
    pub sub_packet_wait: bool,
}

impl SenderConfig {
    #[inline]
    fn mss(&self) -> u64 {
        self.framing.mss() as u64
    }
}

/// Protocol-wide counters, summed over connections.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub retransmitted_packets: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
    /// Window cuts for congestion signals (ECN echoes, or delay over target for Swift), not for losses.
    pub window_cuts: u64,
    /// PB-FS: PBT-triggering data packets sent.
    pub pbt_packets_sent: u64,
    /// ECN cuts that left a window under one packet (with `sub_packet_wait`; with data left to send,
    /// each starts a wait for the retransmission timer, whose expiry is not counted as a timeout).
    pub sub_packet_waits: u64,
}

/// What an ACK left the connection in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Open,
    /// Every byte is acknowledged: the connection is done on both sides.
    Done,
}

pub struct Conn<C> {
    pub id: FlowId,
    src: HostId,
    dst: HostId,
    size: u64,
    path_key: u32,
    /// Subflow index of an MPTCP connection (0 otherwise): carried in `aux` and the timer kinds.
    subflow: u8,
    /// The stream is a whole flow, not an MPTCP subflow: it reports the flow's `Sent` milestone
    /// (`Ctx::sent`) when its last byte first goes out. A subflow's connection reports it instead.
    whole_flow: bool,
    /// Each armed RTO is scaled by a uniform factor in [1, 1 + x] drawn from this stream
    /// (desynchronises retransmissions; MPTCP's `rto_jitter`); `None` = exact RTOs.
    rto_jitter: Option<(f64, Rng)>,
    // Sender.
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    dupacks: u32,
    in_recovery: bool,
    recover: u64,
    pub cc: C,
    rtt: RttEstimator,
    backoff: u32,
    /// `sub_packet_wait`: the last ECN answer was made at a window of one packet or less (ns-2's
    /// `ecn_backoff_`); while set, ACKs with an echo keep the back-off.
    ecn_backoff: bool,
    /// When the retransmission timer expires; `None` when nothing is outstanding and no sub-packet
    /// window waits for it.
    rto_deadline: Option<Time>,
    /// One timer event per connection is pending; the deadline itself moves without events.
    rto_timer_pending: bool,
    /// Pacing: the next data packet may not leave before this.
    next_send_at: Time,
    pace_timer_pending: bool,
    /// PB-FS state of a flow that uses it (`super::pbfs`).
    pub pbfs: Option<PbfsFlow>,
    // Receiver.
    received: ReceivedBytes,
}

impl<C: CongestionControl> Conn<C> {
    pub fn new(id: FlowId, src: HostId, dst: HostId, size: u64, cfg: &SenderConfig, cc: C) -> Conn<C> {
        Conn {
            id,
            src,
            dst,
            size,
            path_key: mix64(id as u64 ^ 0x5eed) as u32,
            subflow: 0,
            whole_flow: true,
            rto_jitter: None,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            dupacks: 0,
            in_recovery: false,
            recover: 0,
            cc,
            rtt: RttEstimator::new(cfg.initial_rto, cfg.min_rto),
            backoff: 0,
            ecn_backoff: false,
            rto_deadline: None,
            rto_timer_pending: false,
            next_send_at: 0,
            pace_timer_pending: false,
            pbfs: None,
            received: ReceivedBytes::default(),
        }
    }

    /// The message runs on a pooled connection: with its ECMP path and, once it has carried a
    /// message, its RTT estimate.
    pub fn on_connection(mut self, path_key: u32, rtt: Option<RttEstimator>) -> Conn<C> {
        self.path_key = path_key;
        if let Some(r) = rtt {
            self.rtt = r;
        }
        self
    }

    /// The stream is subflow `index` of an MPTCP connection, on ECMP key (or source route) `path_key`;
    /// it starts empty and grows by [`Conn::extend`].
    pub fn on_subflow(mut self, index: u8, path_key: u32) -> Conn<C> {
        debug_assert!(index < 64 && self.snd_max == 0);
        self.subflow = index;
        self.whole_flow = false;
        self.path_key = path_key;
        self
    }

    /// Scales every RTO by a uniform factor in [1, 1 + `x`] drawn from `rng`.
    pub fn with_rto_jitter(mut self, x: f64, rng: Rng) -> Conn<C> {
        debug_assert!((0.0..=1.0).contains(&x));
        self.rto_jitter = Some((x, rng));
        self
    }

    /// Appends `bytes` to the stream (an MPTCP scheduler handing the subflow more data).
    #[inline]
    pub fn extend(&mut self, bytes: u64) {
        self.size += bytes;
    }

    /// The ECMP key (or source route) the stream's packets carry.
    #[inline]
    pub fn path_key(&self) -> u32 {
        self.path_key
    }

    /// The stream's length so far, and the bytes of it not yet sent.
    #[inline]
    pub fn size(&self) -> u64 {
        self.size
    }

    #[inline]
    pub fn unsent_bytes(&self) -> u64 {
        self.size - self.snd_nxt
    }

    /// Every byte of the stream is acknowledged.
    #[inline]
    pub fn all_acked(&self) -> bool {
        self.snd_una == self.size
    }

    /// The window admits a new segment of `len` bytes now: one segment always when nothing is in
    /// flight, none while the window is under one packet (only a sub-packet ECN cut leaves it so:
    /// the connection then waits for its retransmission timer, even for a short last segment, as
    /// ns-2 counts its window in whole packets).
    #[inline]
    pub fn has_room(&self, len: u64, mss: u64) -> bool {
        let flight = self.snd_nxt - self.snd_una;
        let window = self.cc.window_bytes();
        window >= mss as f64 && (flight == 0 || (flight + len) as f64 <= window)
    }

    /// The window is under one packet with data left to send: the connection waits for its
    /// retransmission timer (only after a sub-packet ECN cut).
    #[inline]
    fn waits_for_timer(&self, mss: u64) -> bool {
        self.snd_nxt < self.size && self.cc.window_bytes() < mss as f64
    }

    /// What the connection keeps for its next message (its window controller, RTT estimate, path).
    pub fn warm(&self) -> Warm<C>
    where
        C: Clone,
    {
        Warm { cc: self.cc.clone(), rtt: self.rtt, path_key: self.path_key }
    }

    /// (sender, receiver).
    #[inline]
    pub fn endpoints(&self) -> (HostId, HostId) {
        (self.src, self.dst)
    }

    /// Smoothed RTT in microseconds, once there is a sample.
    pub fn srtt_us(&self) -> Option<f64> {
        self.rtt.srtt_ps().map(|ps| ps / 1e6)
    }

    /// Takes an RTT sample measured outside the data stream (the connection's SYN / SYN-ACK).
    pub fn on_rtt_sample(&mut self, rtt: Time) {
        self.rtt.on_sample(rtt);
    }

    /// Bytes sent and not yet acknowledged.
    pub fn in_flight_bytes(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }

    /// Sends new data (or, after a timeout, data again) while the window and the pacer allow.
    pub fn send_window(&mut self, ctx: &mut Ctx, cfg: &SenderConfig, n: &mut Counters) {
        let mss = cfg.mss();
        let pacing = self.cc.pacing_rate();
        while self.snd_nxt < self.size {
            let len = mss.min(self.size - self.snd_nxt);
            if !self.has_room(len, mss) {
                break;
            }
            if let Some(rate) = pacing {
                if ctx.now() < self.next_send_at {
                    if !self.pace_timer_pending {
                        self.pace_timer_pending = true;
                        ctx.set_timer(self.next_send_at, WindowTimer::Pace(self.subflow), self.id);
                    }
                    break;
                }
                self.next_send_at = ctx.now() + rate.tx_time(cfg.framing.wire(len as u32));
            }
            let retx = self.snd_nxt < self.snd_max;
            let pbt = !retx && self.marks_pbt(cfg, self.snd_nxt);
            self.emit(ctx, cfg, self.snd_nxt, len as u32, retx, pbt);
            // The flow's last byte goes out for the first time (after a go-back-N it was sent
            // before: snd_max is already the size).
            if self.whole_flow && self.snd_nxt + len == self.size && self.snd_max < self.size {
                ctx.sent(self.id);
            }
            if retx {
                n.retransmitted_packets += 1;
            }
            n.pbt_packets_sent += u64::from(pbt);
            self.snd_nxt += len;
            self.snd_max = self.snd_max.max(self.snd_nxt);
        }
        self.arm_rto(ctx, mss);
    }

    /// PB-FS marking (the paper's Fig. 2): the Delta-th, 2 Delta-th, ... segments of a flow using
    /// PB-FS, until its first ACK or CC-postcard.
    #[inline]
    fn marks_pbt(&self, cfg: &SenderConfig, seq: u64) -> bool {
        let marking = self.pbfs.as_ref().is_some_and(|f| f.marking);
        marking && cfg.pbt_distance.is_some_and(|d| (seq / cfg.mss() + 1).is_multiple_of(d))
    }

    fn emit(&self, ctx: &mut Ctx, cfg: &SenderConfig, seq: u64, len: u32, retx: bool, pbt: bool) {
        let mut p = Packet::new(PacketKind::Data, self.id, self.src, self.dst, cfg.framing.wire(len));
        p.payload = len;
        p.seq = seq;
        p.ts = ctx.now();
        p.path = self.path_key;
        p.aux = self.subflow as u32;
        p.lb = cfg.lb;
        p.prio = cfg.data_priority;
        if cfg.ecn_capable {
            p.flags |= flags::ECT;
        }
        if retx {
            p.flags |= flags::RETX;
        }
        if seq + len as u64 == self.size {
            p.flags |= flags::LAST;
        }
        if pbt {
            p.stage.set_pbt(PbtMark::TRIGGERING);
        }
        ctx.send(p);
    }

    /// Resends the segment at snd_una (fast retransmit, partial ACK).
    fn resend_first(&self, ctx: &mut Ctx, cfg: &SenderConfig, n: &mut Counters) {
        let len = cfg.mss().min(self.size - self.snd_una) as u32;
        self.emit(ctx, cfg, self.snd_una, len, true, false);
        n.retransmitted_packets += 1;
    }

    /// Arms the retransmission timer while data is outstanding, or while a sub-packet window waits
    /// for it (ns-2's `set_rtx_timer` after such a cut), from now unless it already runs.
    fn arm_rto(&mut self, ctx: &mut Ctx, mss: u64) {
        if self.snd_una < self.snd_nxt || self.waits_for_timer(mss) {
            if self.rto_deadline.is_none() {
                let rto = self.rtt.backed_off_rto_ps(self.backoff);
                let rto = match &mut self.rto_jitter {
                    Some((x, rng)) => (rto as f64 * (1.0 + *x * rng.uniform())) as Time,
                    None => rto,
                };
                self.rto_deadline = Some(ctx.now() + rto);
            }
            let deadline = self.rto_deadline.expect("set above");
            if !self.rto_timer_pending {
                self.rto_timer_pending = true;
                ctx.set_timer(deadline, WindowTimer::Rto(self.subflow), self.id);
            }
        } else {
            self.rto_deadline = None;
        }
    }

    /// Receiver: a data packet arrived; deliver what is new and ACK it.
    pub fn on_data(&mut self, ctx: &mut Ctx, cfg: &SenderConfig, pkt: &Packet) {
        let end = pkt.seq.saturating_add(pkt.payload as u64).min(self.size);
        let fresh = self.received.insert(pkt.seq.min(end), end);
        if fresh > 0 {
            ctx.delivered(self.id, fresh);
            if self.received.next_expected() == self.size && !cfg.fct_at_last_ack {
                ctx.finished(self.id);
            }
        }
        let mut ack = Packet::new(PacketKind::Ack, self.id, self.dst, self.src, cfg.framing.control_bytes);
        ack.ack = self.received.next_expected();
        ack.ts = pkt.ts;
        ack.path = self.path_key;
        ack.lb = cfg.lb;
        ack.prio = cfg.control_priority;
        if pkt.has(flags::CE) {
            ack.flags |= flags::ECE;
        }
        ctx.send(ack);
    }

    /// Sender: an ACK arrived.
    pub fn on_ack(&mut self, ctx: &mut Ctx, cfg: &SenderConfig, pkt: &Packet, n: &mut Counters) -> Status {
        let ack = pkt.ack;
        if ack < self.snd_una || ack > self.snd_max {
            return Status::Open; // old, reordered ACK (or one for data never sent)
        }
        let rtt = ctx.now().saturating_sub(pkt.ts);
        self.rtt.on_sample(rtt);

        if ack == self.snd_una {
            self.on_duplicate_ack(ctx, cfg, n);
            return Status::Open;
        }

        // New data acknowledged.
        let acked = ack - self.snd_una;
        self.snd_una = ack;
        // After a go-back-N the receiver may have held data beyond snd_nxt.
        self.snd_nxt = self.snd_nxt.max(ack);
        self.dupacks = 0;
        let ece = pkt.has(flags::ECE);
        // ns-2 keeps the back-off through echoes while its last ECN answer was made at one packet.
        if !(cfg.sub_packet_wait && self.ecn_backoff && ece) {
            self.backoff = 0;
            self.ecn_backoff = false;
        }
        self.rto_deadline = None;
        let window_before = if cfg.sub_packet_wait { self.cc.window_bytes() } else { 0.0 };
        let phase = if !self.in_recovery {
            AckPhase::Open
        } else if ack >= self.recover {
            self.in_recovery = false;
            AckPhase::RecoveryEnd
        } else {
            self.resend_first(ctx, cfg, n);
            AckPhase::PartialAck
        };
        let info = AckInfo {
            now: ctx.now(),
            acked_bytes: acked,
            ece,
            rtt_sample_ps: rtt,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            snd_max: self.snd_max,
            phase,
        };
        if self.cc.on_ack(&info) {
            n.window_cuts += 1;
            if cfg.sub_packet_wait {
                self.answer_echo_at_small_window(window_before, cfg.mss(), n);
            }
        }
        if self.snd_una >= self.size {
            self.received.clear_out_of_order();
            return Status::Done;
        }
        self.send_window(ctx, cfg, n);
        Status::Open
    }

    /// An ACK that acknowledged nothing new: counted as a duplicate while data is outstanding (fast
    /// retransmit at the threshold, window inflation in recovery); the window may still admit data.
    fn on_duplicate_ack(&mut self, ctx: &mut Ctx, cfg: &SenderConfig, n: &mut Counters) {
        if self.snd_nxt > self.snd_una {
            self.dupacks += 1;
            if self.in_recovery {
                self.cc.on_dupack();
            } else if self.dupacks == cfg.dupack_threshold {
                let loss =
                    LossInfo { now: ctx.now(), snd_una: self.snd_una, snd_max: self.snd_max, dupacks: self.dupacks };
                self.cc.on_fast_retransmit(&loss);
                self.in_recovery = true;
                self.recover = self.snd_max;
                self.resend_first(ctx, cfg, n);
                n.fast_retransmits += 1;
            }
        }
        self.send_window(ctx, cfg, n);
    }

    /// After an ECN cut with `sub_packet_wait`: ns-2's `TcpAgent::ecn` backs the timer off when
    /// this answer and the one before were both made at a window of one packet or less.
    fn answer_echo_at_small_window(&mut self, window_before: f64, mss: u64, n: &mut Counters) {
        if window_before <= mss as f64 {
            if self.ecn_backoff {
                self.backoff += 1;
            }
            self.ecn_backoff = true;
        } else {
            self.ecn_backoff = false;
        }
        if self.cc.window_bytes() < mss as f64 {
            n.sub_packet_waits += 1;
        }
    }

    /// The retransmission timer event fired (the deadline may have moved since it was set).
    pub fn on_rto_timer(&mut self, ctx: &mut Ctx, cfg: &SenderConfig, n: &mut Counters) {
        self.rto_timer_pending = false;
        let Some(deadline) = self.rto_deadline else { return };
        if ctx.now() < deadline {
            self.rto_timer_pending = true;
            ctx.set_timer(deadline, WindowTimer::Rto(self.subflow), self.id);
            return;
        }
        // Timeout: the controller collapses its window; go back to the first unacknowledged byte.
        // With nothing outstanding the timer ended a sub-packet window's wait: no loss.
        if self.snd_una < self.snd_nxt {
            n.timeouts += 1;
        }
        let loss = LossInfo { now: ctx.now(), snd_una: self.snd_una, snd_max: self.snd_max, dupacks: 0 };
        self.cc.on_rto(&loss);
        self.snd_nxt = self.snd_una;
        self.in_recovery = false;
        self.dupacks = 0;
        self.backoff += 1;
        self.rto_deadline = None;
        self.send_window(ctx, cfg, n);
    }

    /// The pacing timer fired: the next packet's slot has come.
    pub fn on_pace_timer(&mut self, ctx: &mut Ctx, cfg: &SenderConfig, n: &mut Counters) {
        self.pace_timer_pending = false;
        self.send_window(ctx, cfg, n);
    }

    /// The connection's invariants; checked at the end of every handler in debug builds.
    pub fn check_invariants(&self, cfg: &SenderConfig) {
        let (una, nxt, max) = (self.snd_una, self.snd_nxt, self.snd_max);
        assert!(una <= nxt && nxt <= max && max <= self.size, "flow {}: una {una} nxt {nxt} max {max}", self.id);
        let window = self.cc.window_bytes();
        let floor_ok = if cfg.sub_packet_wait { window > 0.0 } else { window >= cfg.mss() as f64 };
        assert!(floor_ok, "flow {}: window {window} under one MSS", self.id);
        assert!(!self.in_recovery || (self.recover > una && self.recover <= max), "flow {}: recover", self.id);
        let waits = una < nxt || self.waits_for_timer(cfg.mss());
        assert_eq!(self.rto_deadline.is_some(), waits, "flow {}: RTO armed iff data outstanding or waiting", self.id);
        assert!(!self.ecn_backoff || cfg.sub_packet_wait, "flow {}: ECN back-off without sub_packet_wait", self.id);
        assert!(self.rto_deadline.is_none() || self.rto_timer_pending, "flow {}: RTO without a timer", self.id);
        assert!(self.received.next_expected() <= self.size);
        self.cc.check_invariants();
    }
}
