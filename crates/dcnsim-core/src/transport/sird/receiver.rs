//! The receiver's half (Algorithm 1): learn messages, account data against B and the per-sender
//! buckets, run the two AIMD loops, issue paced credit by policy, ask for what is missing.

use super::{
    wire_range, ReceiverPolicy, Sird, CSN, MAX_BACKOFF, MAX_RESEND_RUNS, MD_SPACING_WINDOWS, PROBE, TIMER_PACER,
    TIMER_RX,
};
use crate::net::packet::{flags, HostId, Packet, PacketKind};
use crate::transport::Ctx;

impl Sird {
    /// The receiver learns of a message (from any of its packets): the unscheduled prefix counts
    /// as credit already granted, charged to B and the sender's bucket.
    fn register(&mut self, ctx: &mut Ctx, slot: u32, size: u64, prefix: u64) {
        let fr = self.framing;
        let c = &mut self.conns[slot];
        if c.rx_known {
            return;
        }
        debug_assert_eq!((size, prefix), (c.size, c.prefix), "packets carry the message's size and prefix");
        c.rx_known = true;
        c.rx_granted = c.prefix;
        c.rx_last = ctx.now();
        let w = wire_range(fr, c, 0, c.prefix);
        let (dst, pi) = (c.dst, c.pair);
        if c.prefix < c.packets {
            c.rx_listed = true;
            self.hosts[dst as usize].inbound.push(slot);
        }
        self.hosts[dst as usize].b += w;
        self.pairs[pi as usize].sb += w;
        if w > 0 {
            self.arm_rx(ctx, slot);
        }
    }

    pub(super) fn on_data(&mut self, ctx: &mut Ctx, slot: u32, pkt: &Packet) {
        let fr = self.framing;
        self.register(ctx, slot, pkt.ack, pkt.aux as u64);
        let c = &self.conns[slot];
        let (pi, dst) = (c.pair, c.dst);
        self.aimd(pi, pkt.has(flags::CE), pkt.has(CSN));
        let c = &mut self.conns[slot];
        if c.rx_done || !c.rx.insert(pkt.seq) {
            self.counters.duplicates += 1;
            return;
        }
        debug_assert!(
            pkt.seq < c.rx_granted,
            "packet {} of flow {} beyond the credit frontier {}",
            pkt.seq,
            c.id,
            c.rx_granted
        );
        c.rx_last = ctx.now();
        let w = wire_range(fr, c, pkt.seq, pkt.seq + 1);
        ctx.delivered(c.id, pkt.payload as u64);
        if c.rx.count() == c.rx_granted {
            c.rx_backoff = 0; // everything credited is in: the next silence starts afresh
        }
        let done = c.rx.count() == c.packets;
        if done {
            c.rx_done = true;
            ctx.finished(c.id);
        }
        self.hosts[dst as usize].b -= w;
        self.pairs[pi as usize].sb -= w;
        debug_assert!(self.hosts[dst as usize].b >= 0 && self.pairs[pi as usize].sb >= 0, "credit returned twice");
        if done {
            self.send_control(ctx, slot, PacketKind::Ack, false);
        }
        self.kick(ctx, dst);
    }

    /// CREDITREQ: a message to schedule, or (PROBE) a sender that has heard nothing for a while.
    pub(super) fn on_request(&mut self, ctx: &mut Ctx, slot: u32, pkt: &Packet) {
        let was_known = self.conns[slot].rx_known;
        let quiet_since = self.conns[slot].rx_last;
        self.register(ctx, slot, pkt.ack, pkt.aux as u64);
        let c = &self.conns[slot];
        let dst = c.dst;
        if pkt.has(PROBE) {
            if c.rx_done {
                self.send_control(ctx, slot, PacketKind::Ack, false);
            } else if c.rx.count() < c.rx_granted && (!was_known || ctx.now() >= quiet_since + self.cfg.rto) {
                // The probe taught us the message (its unscheduled packets were all lost), or
                // we too have heard nothing for a while. A probe that crossed a fresh credit
                // finds recent activity and is left to the receiver's own timer.
                self.resend_missing(ctx, slot);
            }
        }
        self.kick(ctx, dst);
    }

    /// Updates SB(s) from one data packet: the network loop on CE, the sender loop on csn
    /// (DCTCP's AIMD as the reference runs it, see the module header).
    fn aimd(&mut self, pi: u32, ce: bool, csn: bool) {
        let mtu = self.framing.mtu_bytes as f64;
        let g = self.cfg.ce_gain;
        let ai = self.cfg.additive_increase_mtu * mtu * mtu;
        let (sb_max, floors) = (self.p.sb_max, self.p.floors);
        let p = &mut self.pairs[pi as usize];
        p.since_ratio += 1;
        let update = p.since_ratio >= p.next_ratio;
        let window = p.cap();
        for (k, marked) in [ce, csn].into_iter().enumerate() {
            let l = &mut p.loops[k];
            l.since_cut += 1;
            l.marked += u32::from(marked);
            if update {
                l.alpha = (1.0 - g) * l.alpha + g * l.marked as f64 / p.since_ratio as f64;
                l.marked = 0;
            }
            let mut change = ai / window;
            if marked && l.since_cut >= l.next_cut {
                change -= l.size * l.alpha / 2.0;
                l.since_cut = 0;
                l.next_cut = ((MD_SPACING_WINDOWS * window / mtu) as u32).max(1);
                if k == 0 {
                    self.counters.cuts_network += 1;
                } else {
                    self.counters.cuts_sender += 1;
                }
            }
            l.size = (l.size + change).clamp(floors[k], sb_max);
        }
        if update {
            p.since_ratio = 0;
            p.next_ratio = ((p.cap() / mtu) as u32).max(1);
        }
    }

    /// Issues credit now, or arms the pacer for the next credit slot.
    pub(super) fn kick(&mut self, ctx: &mut Ctx, host: HostId) {
        if !self.cfg.pace_credits {
            while self.try_credit(ctx, host).is_some() {}
            return;
        }
        let h = &mut self.hosts[host as usize];
        if h.pacer_armed || h.inbound.is_empty() {
            return;
        }
        if ctx.now() < h.next_credit_at {
            h.pacer_armed = true;
            ctx.set_timer(h.next_credit_at, TIMER_PACER, host);
            return;
        }
        if let Some(w) = self.try_credit(ctx, host) {
            let h = &mut self.hosts[host as usize];
            let rate = h.rate.expect("rates are set before the first flow");
            h.next_credit_at = ctx.now() + rate.tx_time(w as u32);
            if !h.inbound.is_empty() {
                h.pacer_armed = true;
                ctx.set_timer(h.next_credit_at, TIMER_PACER, host);
            }
        }
        // Nothing creditable: the next data arrival or new message kicks again.
    }

    /// Algorithm 1, sendCredit: credits the next packet of the message chosen by policy among
    /// those whose sender's bucket is not full, if B allows. Returns the credited wire bytes.
    fn try_credit(&mut self, ctx: &mut Ctx, host: HostId) -> Option<i64> {
        let fr = self.framing;
        let budget = self.p.budget;
        let h = &self.hosts[host as usize];
        let n = h.inbound.len();
        if n == 0 {
            return None;
        }
        let eligible = |slot: u32| -> Option<i64> {
            let c = &self.conns[slot];
            let w = wire_range(fr, c, c.rx_granted, c.rx_granted + 1);
            let pair = &self.pairs[c.pair as usize];
            // A bucket admits credit while it is not full; one smaller than a packet still
            // admits a packet at a time.
            let global = h.b + w <= budget || h.b <= 0;
            let sender = (pair.sb as f64) < pair.cap() || pair.sb <= 0;
            (global && sender).then_some(w)
        };
        let mut pick: Option<(usize, i64)> = None;
        match self.cfg.receiver_policy {
            ReceiverPolicy::Srpt => {
                let mut best_key = (u64::MAX, u32::MAX);
                for (k, &slot) in h.inbound.iter().enumerate() {
                    let c = &self.conns[slot];
                    let key = (c.packets - c.rx_granted, c.id);
                    if key < best_key {
                        if let Some(w) = eligible(slot) {
                            best_key = key;
                            pick = Some((k, w));
                        }
                    }
                }
            }
            ReceiverPolicy::RoundRobin => {
                for j in 0..n {
                    let k = (h.rr + j) % n;
                    if let Some(w) = eligible(h.inbound[k]) {
                        pick = Some((k, w));
                        break;
                    }
                }
            }
        }
        let (k, w) = pick?;
        let h = &mut self.hosts[host as usize];
        let slot = h.inbound[k];
        h.rr = k + 1;
        h.b += w;
        let c = &mut self.conns[slot];
        c.rx_granted += 1;
        c.rx_last = ctx.now();
        self.pairs[c.pair as usize].sb += w;
        if c.rx_granted == c.packets {
            c.rx_listed = false;
            h.inbound.swap_remove(k);
        }
        self.counters.credits += 1;
        self.send_control(ctx, slot, PacketKind::Credit, false);
        self.arm_rx(ctx, slot);
        Some(w)
    }

    pub(super) fn arm_rx(&mut self, ctx: &mut Ctx, slot: u32) {
        let rto = self.cfg.rto;
        let c = &mut self.conns[slot];
        if !c.rx_timer && !c.rx_done {
            c.rx_timer = true;
            ctx.set_timer((c.rx_last + (rto << c.rx_backoff)).max(ctx.now()), TIMER_RX, c.id);
        }
    }

    /// Nothing arrived for `rto` while credited packets are missing: ask for them again.
    pub(super) fn on_rx_timer(&mut self, ctx: &mut Ctx, id: u32) {
        let Some(slot) = self.conns.slot(id) else { return };
        let c = &mut self.conns[slot];
        c.rx_timer = false;
        if c.rx_done || c.rx.count() == c.rx_granted {
            return; // nothing outstanding; the next credit re-arms
        }
        if ctx.now() < c.rx_last + (self.cfg.rto << c.rx_backoff) {
            return self.arm_rx(ctx, slot);
        }
        c.rx_backoff = (c.rx_backoff + 1).min(MAX_BACKOFF);
        self.counters.receiver_timeouts += 1;
        self.resend_missing(ctx, slot);
        self.arm_rx(ctx, slot);
    }

    /// One RESEND per run of missing credited packets; each restates the credit frontier.
    fn resend_missing(&mut self, ctx: &mut Ctx, slot: u32) {
        let c = &mut self.conns[slot];
        c.rx_last = ctx.now();
        let runs = c.rx.missing_runs(c.rx_granted, MAX_RESEND_RUNS);
        for (a, b) in runs {
            let c = &self.conns[slot];
            let mut p = Packet::new(PacketKind::Nack, c.id, c.dst, c.src, self.framing.control_bytes);
            p.seq = a;
            p.aux = (b - a).min(u32::MAX as u64) as u32;
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
