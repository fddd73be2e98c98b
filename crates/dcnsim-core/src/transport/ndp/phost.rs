//! pHost's receiver-driven tokens (Gao et al., CoNEXT 2015), the parts where it differs from NDP's
//! pulls. A receiver that has heard of a flow (from any of its packets: the first window doubles as
//! pHost's RTS, and the flow's size is known from it) owes a token to every packet it has not
//! received: new packets in order, and packets whose token went out `token_timeout_us` ago without
//! the packet arriving (pHost's loss recovery: drop-tail switches send no NACK). Tokens name the
//! packet and are paced by the receiver's pull pacer, shortest remaining flow first. The sender
//! answers a token with the named packet if it is still unacknowledged, else with its next new
//! packet. Every first-window packet tells the receiver of the flow (so a lone flow pays no
//! request); the sender's own timer only sends a request (pHost's RTS, a control packet) while it
//! has heard nothing from the receiver; once the receiver knows the flow, recovery is the
//! receiver's.
//!
//! Not modelled: token expiry at the sender (tokens here are never refused) and the downgrading of
//! unresponsive senders (an incast's senders have one flow each and always answer).

use super::{Ndp, TIMER_RTO, TIMER_TOKEN};
use crate::engine::time::{from_us, Time};
use crate::net::packet::{LoadBalancing, Packet, PacketKind};
use crate::transport::Ctx;
use std::collections::VecDeque;

/// The receiver's token state of one flow (pHost only).
#[derive(Default)]
pub(super) struct Tokens {
    /// The receiver has heard of the flow.
    pub(super) known: bool,
    /// Packets below this have had a token (the first window counts as tokened when heard of).
    next: u64,
    /// Tokens out, oldest first: (packet, when). Entries for received packets are dropped lazily.
    out: VecDeque<(u64, Time)>,
    /// A wake-up is set for this time (the oldest token's expiry).
    wake_at: Option<Time>,
}

impl Ndp {
    /// Receiver (pHost): a data packet or header arrived. ACKs data; tokens are the pacer's.
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
        self.phost_schedule(ctx, slot);
    }

    /// Whether the flow owes a token now: a new packet, or an unreceived packet whose token expired.
    pub(super) fn owes_token(&mut self, slot: u32, now: Time) -> bool {
        let timeout = from_us(self.cfg.token_timeout_us);
        let c = &mut self.conns[slot];
        if c.rx.done || !c.rx.tokens.known {
            return false;
        }
        let (received, t) = (&c.rx.received, &mut c.rx.tokens);
        while t.out.front().is_some_and(|&(s, _)| received.contains(s)) {
            t.out.pop_front();
        }
        t.next < c.layout.packets() || t.out.front().is_some_and(|&(_, at)| at + timeout <= now)
    }

    /// Queues the flow at its receiver's pacer if it owes a token, else sets a wake-up for its
    /// oldest token's expiry.
    pub(super) fn phost_schedule(&mut self, ctx: &mut Ctx, slot: u32) {
        if self.conns[slot].rx.queued_for_pull || self.conns[slot].rx.done {
            return;
        }
        if self.owes_token(slot, ctx.now()) {
            let c = &mut self.conns[slot];
            c.rx.queued_for_pull = true;
            let dst = c.dst;
            self.pullers[dst as usize].push(slot, c.rx.priority);
            self.arm_pacer(ctx, dst);
        } else {
            let timeout = from_us(self.cfg.token_timeout_us);
            let c = &mut self.conns[slot];
            let t = &mut c.rx.tokens;
            if let Some(&(_, at)) = t.out.front() {
                let wake = at + timeout;
                if t.wake_at.is_none_or(|w| w > wake || w < ctx.now()) {
                    t.wake_at = Some(wake);
                    ctx.set_timer(wake, TIMER_TOKEN, c.id);
                }
            }
        }
    }

    /// A token wake-up: the oldest token may have expired.
    pub(super) fn on_token_wake(&mut self, ctx: &mut Ctx, id: u32) {
        let Some(slot) = self.conns.slot(id) else { return };
        if self.conns[slot].rx.tokens.wake_at != Some(ctx.now()) {
            return;
        }
        self.conns[slot].rx.tokens.wake_at = None;
        self.phost_schedule(ctx, slot);
    }

    /// The pacer chose this flow: one token, for the oldest expired one's packet, else the next new.
    pub(super) fn send_token(&mut self, ctx: &mut Ctx, slot: u32) {
        let timeout = from_us(self.cfg.token_timeout_us);
        let now = ctx.now();
        let c = &mut self.conns[slot];
        let t = &mut c.rx.tokens;
        let seq = match t.out.front() {
            Some(&(s, at)) if at + timeout <= now => {
                t.out.pop_front();
                self.counters.reissued_tokens += 1;
                s
            }
            _ => {
                t.next += 1;
                t.next - 1
            }
        };
        t.out.push_back((seq, now));
        c.rx.pulls_sent += 1;
        let mut p = Packet::new(PacketKind::Pull, c.id, c.dst, c.src, self.framing.control_bytes);
        p.seq = seq;
        p.ack = c.rx.pulls_sent;
        p.prio = 0;
        p.lb = LoadBalancing::Spray;
        ctx.send(p);
        self.counters.pulls += 1;
    }

    /// Sender (pHost): a token for packet `seq`: resend it if it is still out, else send the next
    /// packet (new data, or a NACKed one on trimming switches).
    pub(super) fn on_token(&mut self, ctx: &mut Ctx, slot: u32, seq: u64) {
        let c = &mut self.conns[slot];
        if seq >= c.layout.packets() {
            return; // a stray
        }
        c.tx.heard(ctx.now());
        if let Some(path) = c.tx.outstanding_path(seq) {
            self.emit(ctx, slot, seq, Some(path), false);
        } else if !self.send_one(ctx, slot, false) {
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

    /// The receiver hears of the flow: the first window counts as tokened now.
    fn learn(&mut self, ctx: &Ctx, slot: u32) {
        let c = &mut self.conns[slot];
        let first_window = self.cfg.initial_window_packets.min(c.layout.packets());
        let t = &mut c.rx.tokens;
        if !t.known {
            t.known = true;
            t.next = first_window;
            t.out.extend((0..first_window).map(|s| (s, ctx.now())));
        }
    }

    /// Sender (pHost) timer: while nothing has come from the receiver, resend the request and back
    /// off (jittered); afterwards losses are the receiver's to recover (by re-issuing tokens).
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
        ctx.set_timer(at, TIMER_RTO, c.id);
    }
}
