//! The sender's half (Algorithm 2): pick a packet at each transmission opportunity, take credit,
//! resend requests and the final ACK, probe a silent receiver.

use super::{wire_range, Sird, CSN, MAX_BACKOFF, TIMER_TX};
use crate::net::packet::{flags, HostId, Packet, PacketKind};
use crate::transport::Ctx;

impl Sird {
    /// Sends one data packet if the host's NIC is idle and something may be sent. Called when the
    /// NIC goes idle and whenever credit or a new message arrives.
    pub(super) fn pump(&mut self, ctx: &mut Ctx, host: HostId) {
        if self.hosts[host as usize].ready == 0 {
            return;
        }
        if !ctx.nic_is_idle(host) {
            return; // the NIC will report when it is idle again
        }
        if let Some((pi, slot)) = self.choose(host) {
            self.send_data(ctx, host, pi, slot);
        }
    }

    /// The sender policy: a `sender_srpt_share` of the transmissions to the receiver whose best
    /// message has the fewest packets left, the rest fair-shared over receivers that can send
    /// (smooth weighted round robin with deficits, as the reference); within a receiver, its
    /// sendable message with the fewest packets left.
    fn choose(&mut self, host: HostId) -> Option<(u32, u32)> {
        self.scratch.clear();
        let mut srpt: Option<(u64, u32, usize)> = None;
        for &pi in &self.hosts[host as usize].ready_pairs {
            let pair = &self.pairs[pi as usize];
            let mut best: Option<(u64, u32, u32)> = None;
            for &slot in &pair.msgs {
                let c = &self.conns[slot];
                if !c.tx_ready {
                    continue;
                }
                let key = (c.packets - c.next_new + c.rtx.len() as u64, c.id);
                if best.is_none_or(|b| key < (b.0, b.1)) {
                    best = Some((key.0, key.1, slot));
                }
            }
            let (left, id, slot) = best.expect("a ready pair has a ready message");
            let i = self.scratch.len();
            self.scratch.push((pi, slot));
            if srpt.is_none_or(|s| (left, id) < (s.0, s.1)) {
                srpt = Some((left, id, i));
            }
        }
        let n = self.scratch.len();
        let (_, _, srpt_i) = srpt?;
        let share = self.cfg.sender_srpt_share;
        let fair = (1.0 - share) / n as f64;
        let (mut best_i, mut best_d) = (0, f64::NEG_INFINITY);
        for (i, &(pi, _)) in self.scratch.iter().enumerate() {
            let p = &mut self.pairs[pi as usize];
            p.deficit += if i == srpt_i { fair + share } else { fair };
            if p.deficit > best_d {
                best_d = p.deficit;
                best_i = i;
            }
        }
        let (pi, slot) = self.scratch[best_i];
        self.pairs[pi as usize].deficit -= 1.0;
        Some((pi, slot))
    }

    fn send_data(&mut self, ctx: &mut Ctx, host: HostId, pi: u32, slot: u32) {
        let fr = self.framing;
        let h = &mut self.hosts[host as usize];
        let csn = h.credit as f64 > self.p.sthr && h.sending_receivers >= 2;
        let c = &mut self.conns[slot];
        let (idx, retx) = match c.rtx.pop_front() {
            Some(i) => (i, true),
            None => {
                c.next_new += 1;
                (c.next_new - 1, false)
            }
        };
        let pair = &mut self.pairs[pi as usize];
        let w = wire_range(fr, c, idx, idx + 1);
        pair.credit -= w;
        h.credit -= w;
        debug_assert!(pair.credit >= 0 && h.credit >= 0, "sent without credit");
        if !retx && c.next_new == c.packets {
            pair.unsent -= 1;
            if pair.unsent == 0 {
                h.sending_receivers -= 1;
            }
        }
        let payload = c.payload(idx, fr.mss());
        let mut p = Packet::new(PacketKind::Data, c.id, c.src, c.dst, fr.wire(payload));
        p.payload = payload;
        p.seq = idx;
        p.ack = c.size;
        p.aux = c.prefix.min(u32::MAX as u64) as u32;
        p.ts = ctx.now();
        p.path = c.path_key;
        p.lb = self.cfg.lb;
        let unscheduled = idx < c.prefix;
        p.prio = u8::from(self.cfg.priorities && !unscheduled);
        p.flags = flags::ECT;
        if csn {
            p.flags |= CSN;
            self.counters.csn_marked += 1;
        }
        if idx + 1 == c.packets {
            p.flags |= flags::LAST;
        }
        if retx {
            p.flags |= flags::RETX;
            self.counters.retransmitted += 1;
        }
        c.tx_last = ctx.now();
        self.sync_ready(slot);
        self.counters.data_sent += 1;
        self.counters.unscheduled_sent += u64::from(unscheduled && !retx);
        ctx.send(p);
        self.arm_tx(ctx, slot);
    }

    /// Keeps the message's `ready` bookkeeping in step with what it may send.
    pub(super) fn sync_ready(&mut self, slot: u32) {
        let c = &mut self.conns[slot];
        let now = c.sendable() && !c.acked;
        if now == c.tx_ready {
            return;
        }
        c.tx_ready = now;
        let pi = c.pair;
        let (pair, host) = (&mut self.pairs[pi as usize], &mut self.hosts[c.src as usize]);
        if now {
            pair.ready += 1;
            host.ready += 1;
            if pair.ready == 1 {
                host.ready_pairs.push(pi);
            }
        } else {
            pair.ready -= 1;
            host.ready -= 1;
            if pair.ready == 0 {
                // Out of the sender's policy: a receiver that cannot send keeps no deficit.
                pair.deficit = 0.0;
                let k = host.ready_pairs.iter().position(|&p| p == pi).expect("a ready pair is listed");
                host.ready_pairs.swap_remove(k);
            }
        }
    }

    /// Moves the sender's credit frontier of a message forward.
    fn take_frontier(&mut self, slot: u32, frontier: u64) {
        let fr = self.framing;
        let c = &mut self.conns[slot];
        let frontier = frontier.min(c.packets);
        if frontier <= c.granted {
            return;
        }
        debug_assert!(c.next_new <= c.granted);
        let w = wire_range(fr, c, c.granted, frontier);
        c.granted = frontier;
        self.pairs[c.pair as usize].credit += w;
        self.hosts[c.src as usize].credit += w;
    }

    /// CREDIT: the receiver allows packets up to its frontier.
    pub(super) fn on_credit(&mut self, ctx: &mut Ctx, slot: u32, pkt: &crate::net::packet::Packet) {
        let Some(src) = self.heard_from_receiver(ctx, slot, pkt.ack) else { return };
        self.sync_ready(slot);
        self.pump(ctx, src);
    }

    /// A CREDIT or RESEND arrived: the receiver is alive (reset the probe timer) and restates its
    /// credit frontier. Returns the sender, or `None` if the message is already acknowledged.
    fn heard_from_receiver(&mut self, ctx: &mut Ctx, slot: u32, frontier: u64) -> Option<HostId> {
        let c = &mut self.conns[slot];
        if c.acked {
            return None;
        }
        c.tx_last = ctx.now();
        c.tx_backoff = 0;
        let src = c.src;
        self.take_frontier(slot, frontier);
        Some(src)
    }

    /// RESEND: the receiver misses packets [seq, seq + aux) and restates its frontier.
    pub(super) fn on_resend(&mut self, ctx: &mut Ctx, slot: u32, pkt: &crate::net::packet::Packet) {
        let fr = self.framing;
        let Some(src) = self.heard_from_receiver(ctx, slot, pkt.ack) else { return };
        let c = &mut self.conns[slot];
        // Packets not sent yet need no resend: the frontier covers them.
        let end = (pkt.seq + pkt.aux as u64).min(c.next_new);
        let mut added = 0;
        for i in pkt.seq..end {
            if !c.rtx.contains(&i) {
                c.rtx.push_back(i);
                added += wire_range(fr, c, i, i + 1);
            }
        }
        self.pairs[c.pair as usize].credit += added;
        self.hosts[src as usize].credit += added;
        self.sync_ready(slot);
        self.pump(ctx, src);
    }

    /// ACK: the receiver has the whole message; both halves are done.
    pub(super) fn on_ack(&mut self, _ctx: &mut Ctx, slot: u32) {
        let fr = self.framing;
        let c = &mut self.conns[slot];
        if c.acked {
            return;
        }
        debug_assert!(c.rx_done);
        c.acked = true;
        let (pi, src, id) = (c.pair, c.src, c.id);
        // Credit still held for it (spurious resend requests) is void.
        let left: i64 =
            wire_range(fr, c, c.next_new, c.granted) + c.rtx.iter().map(|&i| wire_range(fr, c, i, i + 1)).sum::<i64>();
        let never_sent = c.next_new < c.packets;
        c.rtx = Default::default();
        self.sync_ready(slot);
        let h = &mut self.hosts[src as usize];
        let pair = &mut self.pairs[pi as usize];
        pair.credit -= left;
        h.credit -= left;
        if never_sent {
            pair.unsent -= 1;
            if pair.unsent == 0 {
                h.sending_receivers -= 1;
            }
        }
        let pos = pair.msgs.iter().position(|&s| s == slot).expect("an unacked message is listed");
        pair.msgs.swap_remove(pos);
        debug_assert!(!self.conns[slot].rx_listed);
        self.conns.remove(id, slot);
    }

    pub(super) fn arm_tx(&mut self, ctx: &mut Ctx, slot: u32) {
        let rto = self.cfg.rto;
        let c = &mut self.conns[slot];
        if !c.tx_timer && !c.acked {
            c.tx_timer = true;
            let at = (c.tx_last + (rto << c.tx_backoff)).max(ctx.now());
            ctx.set_timer(at, TIMER_TX, c.id);
        }
    }

    /// The sender heard nothing for a while and can send nothing: probe with a CREDITREQ.
    pub(super) fn on_tx_timer(&mut self, ctx: &mut Ctx, id: u32) {
        let Some(slot) = self.conns.slot(id) else { return };
        let rto = self.cfg.rto;
        let c = &mut self.conns[slot];
        c.tx_timer = false;
        if c.acked {
            return;
        }
        let deadline = c.tx_last + (rto << c.tx_backoff);
        if ctx.now() < deadline {
            return self.arm_tx(ctx, slot);
        }
        if c.sendable() {
            // Waiting for our own uplink, not for the receiver.
            c.tx_last = ctx.now();
            return self.arm_tx(ctx, slot);
        }
        c.tx_backoff = (c.tx_backoff + 1).min(MAX_BACKOFF);
        c.tx_last = ctx.now();
        self.counters.probes += 1;
        self.counters.credit_requests += 1;
        self.send_control(ctx, slot, PacketKind::CreditRequest, true);
        self.arm_tx(ctx, slot);
    }
}
