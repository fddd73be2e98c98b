//! pHost's receiver-driven tokens (Gao et al., CoNEXT 2015), the parts where it differs from NDP's
//! pulls, as the pHost authors' simulator (NetSys/simulator, `CapabilityFlow`/`CapabilityHost`)
//! implements them. A receiver that has heard of a flow (from any of its packets: the first
//! window doubles as pHost's RTS, and the flow's size is known from it) grants tokens, paced by
//! its pull pacer, shortest remaining flow first. Each token is numbered and names a packet: the
//! next one not yet received after the last named, wrapping to the lowest missing. Each data
//! packet echoes its token's number (first-window packets count as tokens 0..IW).
//!
//! - Token window (the authors' `capability_window`, one BDP): a flow with
//!   `token_window_packets` tokens out beyond the highest number echoed back gets no token; the pacer
//!   passes over it to the next flow (this is how pHost downgrades a source that does not answer).
//!   After `token_window_timeout_packet_times` without a token the window is presumed lost and
//!   slides (`relax_capability_gap`): one more token.
//! - Loss recovery: once a round of tokens has covered the flow's packets, the receiver waits
//!   `token_resend_timeout_packet_times` and starts a new round over the packets still missing
//!   (drop-tail switches send no NACK).
//! - The sender answers a token with the named packet unless it is ACKed already; its own timer
//!   only sends a request (pHost's RTS, a control packet) while it has heard nothing from the
//!   receiver.
//!
//! Not modelled: token expiry at the sender (tokens are answered on arrival: these runs give a
//! sender one flow) and the sender-side SRPT choice among tokens of several flows.

use super::{Ndp, NdpTimer};
use crate::net::packet::{LoadBalancing, Packet, PacketKind};
use crate::time::{from_us, Time};
use crate::transport::Ctx;

/// The pHost parts of the configuration, in the receiver pacer's packet times.
struct Limits {
    window: u64,
    window_timeout: Time,
    resend_timeout: Time,
}

impl Ndp {
    fn token_limits(&self, dst: u32) -> Limits {
        let packet_time = self.pullers[dst as usize].spacing as f64;
        Limits {
            window: self.cfg.token_window_packets,
            window_timeout: (self.cfg.token_window_timeout_packet_times * packet_time).round() as Time,
            resend_timeout: (self.cfg.token_resend_timeout_packet_times * packet_time).round() as Time,
        }
    }

    /// Receiver (pHost): a data packet or header arrived. ACKs data, notes the echoed token.
    pub(super) fn phost_arrival(&mut self, ctx: &mut Ctx, slot: u32, pkt: &Packet) {
        let c = &mut self.conns[slot];
        if pkt.seq >= c.layout.packets() {
            return;
        }
        if pkt.kind == PacketKind::Data {
            super::receiver::take_data(ctx, c, pkt);
        }
        let fb = super::receiver::feedback_for(c, pkt, self.framing.control_bytes);
        ctx.send(fb);
        self.learn(ctx, slot);
        let t = &mut self.conns[slot].rx.tokens;
        if pkt.kind == PacketKind::Data && pkt.ack < t.issued {
            t.echoed = t.echoed.max(pkt.ack + 1);
        }
        self.phost_schedule(ctx, slot);
    }

    /// When the flow may have its next token: now, a later time (a paused round or a full window
    /// waiting out its timeout), or never (unknown or done).
    fn token_time(&self, slot: u32, now: Time) -> Option<Time> {
        let c = &self.conns[slot];
        let t = &c.rx.tokens;
        if c.rx.done || !t.known {
            return None;
        }
        let lim = self.token_limits(c.dst);
        let mut at = t.resend_at.unwrap_or(now).max(now);
        if t.gap() >= lim.window {
            at = at.max(t.last_token_at + lim.window_timeout);
        }
        Some(at)
    }

    /// Whether the flow may have a token now.
    pub(super) fn owes_token(&mut self, slot: u32, now: Time) -> bool {
        self.token_time(slot, now) == Some(now)
    }

    /// Queues the flow at its receiver's pacer if it may have a token now, else sets a wake-up
    /// for when it may.
    pub(super) fn phost_schedule(&mut self, ctx: &mut Ctx, slot: u32) {
        if self.conns[slot].rx.queued_for_pull {
            return;
        }
        let now = ctx.now();
        let Some(at) = self.token_time(slot, now) else { return };
        let c = &mut self.conns[slot];
        if at == now {
            c.rx.queued_for_pull = true;
            let dst = c.dst;
            self.pullers[dst as usize].push(slot, c.rx.priority);
            self.arm_pacer(ctx, dst);
        } else if c.rx.tokens.wake_at.is_none_or(|w| w > at || w < now) {
            c.rx.tokens.wake_at = Some(at);
            ctx.set_timer(at, NdpTimer::Token, c.id);
        }
    }

    /// A token wake-up: the flow's pause or window timeout may be over.
    pub(super) fn on_token_wake(&mut self, ctx: &mut Ctx, id: u32) {
        let Some(slot) = self.conns.slot(id) else { return };
        if self.conns[slot].rx.tokens.wake_at != Some(ctx.now()) {
            return;
        }
        self.conns[slot].rx.tokens.wake_at = None;
        self.phost_schedule(ctx, slot);
    }

    /// The pacer chose this flow: one token, naming the next packet not yet received.
    pub(super) fn send_token(&mut self, ctx: &mut Ctx, slot: u32) {
        let now = ctx.now();
        let lim = self.token_limits(self.conns[slot].dst);
        let c = &mut self.conns[slot];
        let packets = c.layout.packets();
        let missing = packets - c.rx.received.count();
        let t = &mut c.rx.tokens;
        if t.resend_at.take().is_some() {
            t.goal += missing; // a new round over what is still missing
            self.counters.token_rounds += 1;
        }
        if t.gap() >= lim.window {
            t.echoed = t.issued + 1 - lim.window; // the window timed out: presume the oldest lost
            self.counters.token_window_timeouts += 1;
        }
        let seq = next_missing(&c.rx.received, t.cursor, packets);
        if t.issued >= packets {
            self.counters.reissued_tokens += 1;
        }
        t.cursor = seq + 1;
        let token = t.issued;
        t.issued += 1;
        t.last_token_at = now;
        if t.issued >= t.goal {
            t.resend_at = Some(now + lim.resend_timeout);
        }
        debug_assert!(!c.rx.received.contains(seq) && seq < packets, "token for packet {seq}");
        c.rx.pulls_sent += 1;
        let mut p = Packet::new(PacketKind::Pull, c.id, c.dst, c.src, self.framing.control_bytes);
        p.seq = seq;
        p.ack = token;
        p.prio = 0;
        p.lb = LoadBalancing::Spray;
        ctx.send(p);
        self.counters.pulls += 1;
    }

    /// Sender (pHost): token number `token` for packet `seq`: the packet, unless it is ACKed
    /// already (then the token is wasted); a packet beyond the next new one (tokens were lost)
    /// is answered with the next new one.
    pub(super) fn on_token(&mut self, ctx: &mut Ctx, slot: u32, seq: u64, token: u64) {
        let c = &mut self.conns[slot];
        if seq >= c.layout.packets() {
            return; // a stray
        }
        c.tx.heard(ctx.now());
        self.token_stamp = token;
        if let Some(path) = c.tx.outstanding_path(seq) {
            self.emit(ctx, slot, seq, Some(path), false);
        } else if c.tx.is_acked(seq) || !self.send_one(ctx, slot, false) {
            self.counters.wasted_pulls += 1;
        }
    }

    /// Sender (pHost): the request (pHost's RTS, a control packet) that tells the receiver of the
    /// flow when none of the first window's packets (each of which tells it too) got through: sent
    /// on each timeout until the receiver answers.
    pub(super) fn send_request(&mut self, ctx: &mut Ctx, slot: u32) {
        let c = &self.conns[slot];
        let mut p = Packet::new(PacketKind::CreditRequest, c.id, c.src, c.dst, self.framing.control_bytes);
        p.prio = 0;
        p.lb = LoadBalancing::Spray;
        ctx.send(p);
    }

    /// Receiver (pHost): a request; the flow is known from now on.
    pub(super) fn on_request(&mut self, ctx: &mut Ctx, slot: u32) {
        self.learn(ctx, slot);
        self.phost_schedule(ctx, slot);
    }

    /// The receiver hears of the flow: the first window counts as tokens `0..IW`, issued now.
    fn learn(&mut self, ctx: &Ctx, slot: u32) {
        let resend_timeout = self.token_limits(self.conns[slot].dst).resend_timeout;
        let c = &mut self.conns[slot];
        let packets = c.layout.packets();
        let first_window = self.cfg.initial_window_packets.min(packets);
        let t = &mut c.rx.tokens;
        if !t.known {
            t.known = true;
            t.issued = first_window;
            t.cursor = first_window;
            t.goal = packets;
            t.last_token_at = ctx.now();
            if t.issued >= t.goal {
                t.resend_at = Some(ctx.now() + resend_timeout);
            }
        }
    }

    /// Sender (pHost) timer: while nothing has come from the receiver, resend the request and back
    /// off (jittered); afterwards losses are the receiver's to recover (by new rounds of tokens).
    pub(super) fn phost_rto(&mut self, ctx: &mut Ctx, slot: u32) {
        if self.conns[slot].tx.has_heard() {
            return;
        }
        self.counters.timeouts += 1;
        self.send_request(ctx, slot);
        let c = &mut self.conns[slot];
        c.tx.rtt.back_off(from_us(super::sender::MAX_RTO_US));
        // Jittered by +-25% as htsim jitters NDP's RTO floor: an incast's requests all time out
        // together and, resent in step, would meet in the receiver's queue again every time.
        let jitter = 0.75 + 0.5 * self.rng.uniform();
        let at = ctx.now() + (c.tx.rtt.rto_ps() as f64 * jitter) as Time;
        c.tx.rto_at = Some(at);
        ctx.set_timer(at, NdpTimer::Rto, c.id);
    }
}

/// The first packet at or after `from` not yet received, wrapping to the lowest missing one (the
/// authors' `get_next_capa_seq_num`). The flow must have a packet missing.
fn next_missing(received: &crate::transport::parts::ReceivedSet, from: u64, packets: u64) -> u64 {
    let mut seq = if from >= packets { received.cumulative() } else { from };
    while received.contains(seq) {
        seq += 1;
        if seq >= packets {
            seq = received.cumulative();
        }
    }
    seq
}
