//! One flow's two ends and the handlers: the sender (request, one data packet per credit, credit
//! stop, rewinds on NACK) and the receiver (paced credits, feedback, in-order delivery, NACKs).

use super::config::XpassConfig;
use super::feedback::RateControl;
use super::{Xpass, XpassTimer};
use crate::engine::rng::mix64;
use crate::net::packet::{flags, FlowId, HostId, Packet, PacketKind};
use crate::time::Time;
use crate::transport::parts::MessageLayout;
use crate::transport::Ctx;

/// The code's `default_credit_stop_timeout_` (2 ms): the wait after a credit stop without an RTT.
const STOP_CHECK_DEFAULT: Time = 2_000_000_000;

pub struct Conn {
    pub id: FlowId,
    pub src: HostId,
    pub dst: HostId,
    pub layout: MessageLayout,
    pub path: u32,
    // Sender.
    pub next_seq: u64,
    pub sent_max: u64,
    pub got_credit: bool,
    /// When the last CREDIT_REQUEST went, and the round trip until its first credit (the code's
    /// sender-side `rtt_`, which times the re-request after a credit stop).
    pub requested_at: Time,
    pub first_credit_rtt: Time,
    pub stop_sent_at: Option<Time>,
    /// The receiver's RTT estimate as last heard in a credit.
    pub rtt_hint: Time,
    pub ecs_window_start: Time,
    pub ecs_credits: u64,
    pub request_due: Option<Time>,
    /// After an early credit stop: when to check that the credits sufficed.
    pub stop_check_due: Option<Time>,
    // Receiver.
    pub rc: Option<RateControl>,
    pub crediting: bool,
    pub stop_received: bool,
    pub next_expected: u64,
    pub done: bool,
    pub credit_seq: u64,
    pub echo_next: u64,
    pub rtt: Time,
    pub credit_due: Option<Time>,
    pub last_progress: Time,
    pub nack_ok_at: Time,
    /// A NACK is out for a gap that in-order data has not yet filled.
    pub gap_pending: bool,
    pub rx_due: Option<Time>,
}

/// A packet of the flow, from either end, with the flow's path key, routing and class.
fn packet_of(cfg: &XpassConfig, c: &Conn, kind: PacketKind, from_receiver: bool, size: u32) -> Packet {
    let (src, dst) = if from_receiver { (c.dst, c.src) } else { (c.src, c.dst) };
    let mut p = Packet::new(kind, c.id, src, dst, size);
    p.path = c.path;
    p.lb = cfg.lb;
    p.prio = if kind == PacketKind::Data { cfg.data_priority } else { cfg.control_priority };
    p
}

impl Xpass {
    fn control(&mut self, ctx: &mut Ctx, slot: u32, kind: PacketKind, from_receiver: bool, seq: u64, ack: u64) {
        let mut p = packet_of(&self.cfg, &self.conns[slot], kind, from_receiver, self.framing.control_bytes);
        (p.seq, p.ack) = (seq, ack);
        ctx.send(p);
    }

    pub(super) fn start(&mut self, ctx: &mut Ctx, id: FlowId) {
        let r = ctx.flow(id);
        let (src, dst) = (r.src, r.dst);
        let layout = MessageLayout::new(r.size, self.framing);
        let now = ctx.now();
        let conn = Conn {
            id,
            src,
            dst,
            layout,
            path: mix64(id as u64 ^ 0x7870_6173) as u32,
            next_seq: 0,
            sent_max: 0,
            got_credit: false,
            requested_at: now,
            first_credit_rtt: 0,
            stop_sent_at: None,
            rtt_hint: 0,
            ecs_window_start: now,
            ecs_credits: 0,
            request_due: None,
            stop_check_due: None,
            rc: None,
            crediting: false,
            stop_received: false,
            next_expected: 0,
            done: false,
            credit_seq: 0,
            echo_next: 0,
            rtt: 0,
            credit_due: None,
            last_progress: now,
            nack_ok_at: 0,
            gap_pending: false,
            rx_due: None,
        };
        let slot = self.conns.insert(id, conn);
        self.request(ctx, slot);
    }

    pub(super) fn packet(&mut self, ctx: &mut Ctx, host: HostId, pkt: &Packet) {
        let Some(slot) = self.conns.slot(pkt.flow) else {
            if pkt.kind == PacketKind::Credit {
                // The flow is over at both ends: a credit still in flight is wasted.
                self.counters.credits_received += 1;
                self.counters.credits_wasted += 1;
            }
            return;
        };
        let c = &self.conns[slot];
        let at_receiver = host == c.dst && pkt.src == c.src;
        let at_sender = host == c.src && pkt.src == c.dst;
        match pkt.kind {
            PacketKind::CreditRequest if at_receiver => self.on_request(ctx, slot, pkt.ack),
            PacketKind::Credit if at_sender => self.on_credit(ctx, slot, pkt),
            PacketKind::Data if at_receiver => self.on_data(ctx, slot, pkt),
            PacketKind::Ack if at_receiver => self.on_stop(ctx, slot),
            PacketKind::Nack if at_sender => self.on_nack(slot, pkt.seq),
            _ => {}
        }
    }

    pub(super) fn timer(&mut self, ctx: &mut Ctx, kind: XpassTimer, id: u32) {
        let Some(slot) = self.conns.slot(id) else { return };
        let now = ctx.now();
        let c = &mut self.conns[slot];
        match kind {
            XpassTimer::Credit if c.credit_due == Some(now) => {
                c.credit_due = None;
                if c.crediting {
                    self.send_credit(ctx, slot);
                }
            }
            XpassTimer::Request if c.request_due == Some(now) => {
                c.request_due = None;
                if !c.got_credit {
                    self.request(ctx, slot);
                }
            }
            XpassTimer::StopCheck if c.stop_check_due == Some(now) => {
                c.stop_check_due = None;
                // Credits stopped with data left (the credits the early stop counted on were
                // lost): ask again, as the code's sender does.
                if c.stop_sent_at.is_some() && c.next_seq < c.layout.packets() {
                    self.request(ctx, slot);
                }
            }
            XpassTimer::Rx if c.rx_due == Some(now) => {
                c.rx_due = None;
                self.on_rx_timeout(ctx, slot);
            }
            _ => {} // stale
        }
    }

    /// Sends CREDIT_REQUEST and retries it every `timeout` until a credit comes.
    fn request(&mut self, ctx: &mut Ctx, slot: u32) {
        let now = ctx.now();
        let c = &mut self.conns[slot];
        // The code's `sendbuffer_` (`pkt_remaining()`): packets from the send point on, which a
        // go-back-N rewind moves back; an adaptive start scales by it.
        let left = c.layout.packets().saturating_sub(c.next_seq);
        (c.got_credit, c.stop_sent_at, c.requested_at) = (false, None, now);
        c.request_due = Some(now + self.cfg.timeout);
        ctx.set_timer(now + self.cfg.timeout, XpassTimer::Request, c.id);
        self.control(ctx, slot, PacketKind::CreditRequest, false, 0, left);
        self.counters.requests += 1;
    }

    // Receiver.

    /// A request starts credits at alpha x max and w_init (with an adaptive start, alpha x left /
    /// N for a flow with left < N packets to send); one for a flow whose credits were stopped with
    /// data missing restarts them the same way (the code's `init()`); a retried request while
    /// credits flow is ignored.
    fn on_request(&mut self, ctx: &mut Ctx, slot: u32, left: u64) {
        let now = ctx.now();
        let c = &mut self.conns[slot];
        if c.crediting || c.done {
            return;
        }
        c.rc = Some(RateControl::new(&self.cfg, self.max_rate[c.dst as usize], left, now));
        (c.crediting, c.stop_received) = (true, false);
        c.last_progress = now;
        if c.credit_due.is_none() {
            self.send_credit(ctx, slot);
        }
    }

    fn send_credit(&mut self, ctx: &mut Ctx, slot: u32) {
        let now = ctx.now();
        let (min, max) = (self.cfg.min_credit_bytes, self.cfg.max_credit_bytes);
        let size = min + self.rng.below((max - min + 1) as u64) as u32;
        let jitter = 1.0 + self.cfg.jitter * (2.0 * self.rng.uniform() - 1.0);
        let c = &mut self.conns[slot];
        let max_rate = self.max_rate[c.dst as usize];
        let rc = c.rc.as_mut().expect("a crediting receiver has a rate");
        rc.update(&self.cfg, max_rate, c.rtt, now);
        let gap = (self.cfg.avg_credit_bytes() / rc.rate * 1e12 * jitter).round().max(1.0) as Time;
        let mut p = packet_of(&self.cfg, c, PacketKind::Credit, true, size);
        (p.seq, p.ts, p.ack) = (c.credit_seq, now, c.rtt);
        c.credit_seq += 1;
        c.credit_due = Some(now + gap);
        ctx.send(p);
        ctx.set_timer(now + gap, XpassTimer::Credit, c.id);
        self.counters.credits_sent += 1;
    }

    fn on_data(&mut self, ctx: &mut Ctx, slot: u32, pkt: &Packet) {
        let now = ctx.now();
        let c = &mut self.conns[slot];
        let Some(rc) = c.rc.as_mut() else { return };
        let sample = now - pkt.ts;
        c.rtt = if c.rtt == 0 { sample } else { (0.8 * c.rtt as f64 + 0.2 * sample as f64) as Time };
        if pkt.ack >= c.echo_next {
            let skipped = pkt.ack - c.echo_next;
            rc.on_echo(skipped);
            self.counters.credits_lost += skipped;
            c.echo_next = pkt.ack + 1;
        }
        if c.done || pkt.seq < c.next_expected {
            self.counters.duplicates += 1;
            return;
        }
        if pkt.seq > c.next_expected {
            if now >= c.nack_ok_at {
                c.nack_ok_at = now + if c.rtt > 0 { 2 * c.rtt } else { self.cfg.timeout };
                c.gap_pending = true;
                let expected = c.next_expected;
                self.control(ctx, slot, PacketKind::Nack, true, expected, 0);
                self.counters.nacks += 1;
                if self.conns[slot].rx_due.is_none() {
                    self.arm_rx(ctx, slot);
                }
            }
            return;
        }
        debug_assert_eq!(pkt.payload, c.layout.payload(pkt.seq));
        c.next_expected += 1;
        (c.last_progress, c.gap_pending) = (now, false);
        ctx.delivered(c.id, pkt.payload as u64);
        if c.next_expected == c.layout.packets() {
            c.done = true;
            ctx.finished(c.id);
            self.maybe_close(slot);
        }
    }

    fn on_stop(&mut self, ctx: &mut Ctx, slot: u32) {
        let c = &mut self.conns[slot];
        c.stop_received = true;
        c.crediting = false;
        if !c.done && c.rx_due.is_none() {
            self.arm_rx(ctx, slot);
        }
        self.maybe_close(slot);
    }

    fn maybe_close(&mut self, slot: u32) {
        let c = &self.conns[slot];
        if c.done && c.stop_received {
            self.conns.remove(c.id, slot);
        }
    }

    fn arm_rx(&mut self, ctx: &mut Ctx, slot: u32) {
        let c = &mut self.conns[slot];
        let at = ctx.now() + self.cfg.timeout;
        c.rx_due = Some(at);
        ctx.set_timer(at, XpassTimer::Rx, c.id);
    }

    /// A timeout with data missing while a NACK is unanswered or credits are stopped (an early
    /// credit stop whose last credits were lost): NACK again, and resume credits if stopped. A
    /// flow that is merely slow (credits keep coming, no gap) is left alone: under a wide fan-in
    /// a flow's credits are legitimately spaced far beyond the timeout.
    fn on_rx_timeout(&mut self, ctx: &mut Ctx, slot: u32) {
        let now = ctx.now();
        let c = &mut self.conns[slot];
        if c.done || (c.crediting && !c.gap_pending) {
            return;
        }
        if now - c.last_progress >= self.cfg.timeout {
            c.last_progress = now;
            let expected = c.next_expected;
            let resume = !c.crediting;
            (c.crediting, c.stop_received) = (true, false);
            self.control(ctx, slot, PacketKind::Nack, true, expected, 0);
            self.counters.nacks += 1;
            self.counters.rx_timeouts += 1;
            if resume && self.conns[slot].credit_due.is_none() {
                self.send_credit(ctx, slot);
            }
        }
        self.arm_rx(ctx, slot);
    }

    // Sender.

    fn on_credit(&mut self, ctx: &mut Ctx, slot: u32, credit: &Packet) {
        let now = ctx.now();
        self.counters.credits_received += 1;
        let c = &mut self.conns[slot];
        if !c.got_credit {
            (c.got_credit, c.request_due, c.first_credit_rtt) = (true, None, now - c.requested_at);
        }
        if credit.ack > 0 {
            c.rtt_hint = credit.ack;
        }
        // Early credit stop looks at the credits of the last full RTT, once per RTT.
        let mut ecs_credits = None;
        if c.rtt_hint > 0 && now - c.ecs_window_start >= c.rtt_hint {
            ecs_credits = Some(c.ecs_credits);
            (c.ecs_credits, c.ecs_window_start) = (0, now);
        }
        c.ecs_credits += 1;
        let packets = c.layout.packets();
        if c.next_seq >= packets {
            self.counters.credits_wasted += 1;
            let again = 2 * c.rtt_hint.max(self.cfg.timeout / 50);
            if c.stop_sent_at.is_none_or(|t| now - t >= again) {
                self.send_stop(ctx, slot, false);
            }
            return;
        }
        self.send_data(ctx, slot, credit);
        let c = &self.conns[slot];
        let left = packets - c.next_seq;
        if c.stop_sent_at.is_none() {
            if left == 0 {
                self.send_stop(ctx, slot, false);
            } else if self.cfg.early_credit_stop && ecs_credits.is_some_and(|n| n >= left) {
                self.send_stop(ctx, slot, true);
            }
        }
    }

    fn send_data(&mut self, ctx: &mut Ctx, slot: u32, credit: &Packet) {
        let c = &mut self.conns[slot];
        let seq = c.next_seq;
        let mut p = packet_of(&self.cfg, c, PacketKind::Data, false, c.layout.wire_bytes(seq));
        (p.seq, p.ack, p.ts, p.payload) = (seq, credit.seq, credit.ts, c.layout.payload(seq));
        if c.layout.is_last(seq) {
            p.flags |= flags::LAST;
        }
        if seq < c.sent_max {
            p.flags |= flags::RETX;
            self.counters.retransmitted += 1;
        }
        // New packets go in order (a NACK only moves `next_seq` back, below `sent_max`): the
        // last one's first transmission is the flow's `Sent` milestone.
        let first_last = seq >= c.sent_max && c.layout.is_last(seq);
        c.sent_max = c.sent_max.max(seq + 1);
        c.next_seq += 1;
        self.counters.data_sent += 1;
        let id = c.id;
        ctx.send(p);
        if first_last {
            ctx.sent(id);
        }
    }

    /// CREDIT_STOP; after an early one, a check 2 first-credit RTTs later (the code's 2 ms
    /// without one) that re-requests credits if data is still left.
    fn send_stop(&mut self, ctx: &mut Ctx, slot: u32, early: bool) {
        let now = ctx.now();
        let c = &mut self.conns[slot];
        c.stop_sent_at = Some(now);
        if early {
            let at = now + if c.first_credit_rtt > 0 { 2 * c.first_credit_rtt } else { STOP_CHECK_DEFAULT };
            c.stop_check_due = Some(at);
            ctx.set_timer(at, XpassTimer::StopCheck, c.id);
        }
        self.control(ctx, slot, PacketKind::Ack, false, 0, 0);
        self.counters.stops += 1;
        self.counters.early_stops += u64::from(early);
    }

    fn on_nack(&mut self, slot: u32, seq: u64) {
        let c = &mut self.conns[slot];
        if seq < c.next_seq {
            c.next_seq = seq;
        }
        if seq < c.layout.packets() {
            c.stop_sent_at = None; // data to send again: a new stop when it is out
        }
    }
}
