//! The receiver's half (Algorithm 1) as far as messages go: learn them, account arriving data
//! against B and the sender's bucket, ACK complete messages, ask for what is missing. Credit
//! itself is in `credit.rs`.

use super::{Sird, SirdTimer, CSN, PROBE};
use crate::net::packet::{flags, Packet, PacketKind};
use crate::transport::parts::resend::resend_requests;
use crate::transport::Ctx;

impl Sird {
    /// The receiver learns of a message (from any of its packets, which all carry its size and
    /// prefix; the model takes both from the message itself): the unscheduled prefix counts as
    /// credit already granted, charged to B and the sender's bucket.
    fn register(&mut self, ctx: &mut Ctx, slot: u32) {
        let c = &mut self.conns[slot];
        if c.rx_known {
            return;
        }
        c.rx_known = true;
        c.rx_granted = c.prefix;
        c.rx_silence.heard(ctx.now());
        let w = c.wire(0, c.prefix);
        let (dst, pi) = (c.dst, c.pair);
        if c.prefix < c.packets() {
            c.rx_listed = true;
            self.hosts[dst as usize].inbound.push(slot);
        }
        let h = &mut self.hosts[dst as usize];
        h.b += w;
        h.unscheduled += w;
        self.pairs[pi as usize].sb += w;
        if w > 0 {
            self.arm_rx(ctx, slot);
        }
    }

    pub(super) fn on_data(&mut self, ctx: &mut Ctx, slot: u32, pkt: &Packet) {
        let c = &self.conns[slot];
        let (pi, dst) = (c.pair, c.dst);
        // A packet beyond the credit frontier (or the unscheduled prefix) cannot have been sent.
        if pkt.seq >= c.rx_granted.max(c.prefix) {
            return;
        }
        self.register(ctx, slot);
        self.aimd(pi, pkt.has(flags::CE), pkt.has(CSN));
        let c = &mut self.conns[slot];
        if c.rx_done || !c.rx.insert(pkt.seq) {
            self.counters.duplicates += 1;
            return;
        }
        c.rx_silence.heard(ctx.now());
        let w = c.wire(pkt.seq, pkt.seq + 1);
        c.rx_payload += c.layout.payload(pkt.seq) as u64;
        ctx.delivered(c.id, c.layout.payload(pkt.seq) as u64);
        if c.rx.count() == c.rx_granted {
            c.rx_silence.end_back_off(); // everything credited is in: the next silence starts afresh
        }
        let done = c.rx.count() == c.packets();
        if done {
            c.rx_done = true;
            ctx.finished(c.id);
        }
        let h = &mut self.hosts[dst as usize];
        h.b -= w;
        if pkt.seq < c.prefix {
            h.unscheduled -= w;
        }
        self.pairs[pi as usize].sb -= w;
        if done {
            self.send_control(ctx, slot, PacketKind::Ack, false);
        }
        self.kick(ctx, dst);
    }

    /// CREDITREQ: a message to schedule, or (PROBE) a sender that has heard nothing for a while.
    pub(super) fn on_request(&mut self, ctx: &mut Ctx, slot: u32, pkt: &Packet) {
        let was_known = self.conns[slot].rx_known;
        let quiet_since = self.conns[slot].rx_silence.last;
        self.register(ctx, slot);
        let c = &self.conns[slot];
        let dst = c.dst;
        if pkt.has(PROBE) {
            if c.rx_done {
                self.send_control(ctx, slot, PacketKind::Ack, false);
            } else if c.rx.count() < c.rx_granted && (!was_known || ctx.now() >= quiet_since + self.cfg.timeout) {
                // The probe taught us the message (its unscheduled packets were all lost), or
                // we too have heard nothing for a while. A probe that crossed a fresh credit
                // finds recent activity and is left to the receiver's own timer.
                self.resend_missing(ctx, slot);
            }
        }
        self.kick(ctx, dst);
    }

    pub(super) fn arm_rx(&mut self, ctx: &mut Ctx, slot: u32) {
        let timeout = self.cfg.timeout;
        let c = &mut self.conns[slot];
        if c.rx_done {
            return;
        }
        if let Some(at) = c.rx_silence.arm(timeout, ctx.now()) {
            ctx.set_timer(at, SirdTimer::Rx, c.id);
        }
    }

    /// Nothing arrived for the timeout while credited packets are missing: ask for them again.
    pub(super) fn on_rx_timer(&mut self, ctx: &mut Ctx, slot: u32) {
        let c = &mut self.conns[slot];
        let silent = c.rx_silence.fired(self.cfg.timeout, ctx.now());
        if c.rx_done || c.rx.count() == c.rx_granted {
            return; // nothing outstanding; the next credit re-arms
        }
        if !silent {
            return self.arm_rx(ctx, slot);
        }
        c.rx_silence.back_off();
        self.counters.receiver_timeouts += 1;
        self.resend_missing(ctx, slot);
        self.arm_rx(ctx, slot);
    }

    /// One RESEND per run of missing credited packets; each restates the credit frontier.
    pub(super) fn resend_missing(&mut self, ctx: &mut Ctx, slot: u32) {
        let c = &mut self.conns[slot];
        c.rx_silence.heard(ctx.now());
        let runs: Vec<_> = resend_requests(&c.rx, c.rx_granted).collect();
        for (first, count) in runs {
            let c = &self.conns[slot];
            let mut p = Packet::new(PacketKind::Nack, c.id, c.dst, c.src, self.framing.control_bytes);
            p.seq = first;
            p.aux = count;
            p.ack = c.rx_granted;
            p.prio = 0;
            p.path = c.path_key;
            p.lb = self.cfg.lb;
            p.ts = ctx.now();
            ctx.send(p);
            self.counters.resend_requests += 1;
        }
    }
}
