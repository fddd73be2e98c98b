//! The sender's half (Algorithm 2): pick a packet at each transmission opportunity, take credit,
//! resend requests and the final ACK, probe a silent receiver.

use super::state::{srpt_key, NOT_CANDIDATE};
use super::{CsnRequires, Sird, SirdTimer, CSN};
use crate::net::packet::{flags, HostId, Packet, PacketKind};
use crate::transport::parts::srpt_pick;
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

    /// SRPT key of a message at its sender: packets left to send.
    #[inline]
    fn send_key(&self, slot: u32) -> u64 {
        let c = &self.conns[slot];
        if c.tx_ready {
            srpt_key(c.left_to_send(), c.id)
        } else {
            NOT_CANDIDATE
        }
    }

    /// The sender policy: a `sender_srpt_share` of the transmissions to the receiver whose best
    /// message has the fewest packets left, the rest fair-shared over receivers that can send
    /// (smooth weighted round robin with deficits, as the reference); within a receiver, its
    /// sendable message with the fewest packets left.
    fn choose(&mut self, host: HostId) -> Option<(u32, u32)> {
        self.scratch.clear();
        for &pi in &self.hosts[host as usize].ready_pairs {
            let msgs = &self.pairs[pi as usize].msgs;
            let j = srpt_pick(msgs.iter().map(|&slot| self.send_key(slot))).expect("a ready pair has messages");
            let key = self.send_key(msgs[j]);
            debug_assert!(key != NOT_CANDIDATE, "a ready pair has a ready message");
            self.scratch.push((pi, msgs[j], key));
        }
        let srpt_i = srpt_pick(self.scratch.iter().map(|e| e.2))?;
        let share = self.cfg.sender_srpt_share;
        let fair = (1.0 - share) / self.scratch.len() as f64;
        let (mut best_i, mut best_d) = (0, f64::NEG_INFINITY);
        for (i, &(pi, _, _)) in self.scratch.iter().enumerate() {
            let p = &mut self.pairs[pi as usize];
            p.deficit += if i == srpt_i { fair + share } else { fair };
            if p.deficit > best_d {
                best_d = p.deficit;
                best_i = i;
            }
        }
        let (pi, slot, _) = self.scratch[best_i];
        self.pairs[pi as usize].deficit -= 1.0;
        Some((pi, slot))
    }

    fn send_data(&mut self, ctx: &mut Ctx, host: HostId, pi: u32, slot: u32) {
        let h = &self.hosts[host as usize];
        let spread = match self.cfg.csn_requires {
            CsnRequires::TwoMessages => h.unsent_msgs >= 2,
            CsnRequires::TwoReceivers => h.sending_receivers >= 2,
        };
        let csn = h.credit as f64 > self.p.sthr && spread;
        let (idx, retx) = self.take_packet(host, pi, slot);
        let c = &mut self.conns[slot];
        let unscheduled = idx < c.prefix;
        let mut p = Packet::new(PacketKind::Data, c.id, c.src, c.dst, c.layout.wire_bytes(idx));
        p.payload = c.layout.payload(idx);
        p.seq = idx;
        p.ack = c.layout.size_bytes();
        p.aux = c.prefix.min(u32::MAX as u64) as u32;
        p.ts = ctx.now();
        p.path = c.path_key;
        p.lb = self.cfg.lb;
        p.prio = u8::from(self.cfg.use_priorities && !unscheduled);
        p.flags = flags::ECT;
        if csn {
            p.flags |= CSN;
            self.counters.csn_marked += 1;
        }
        if c.layout.is_last(idx) {
            p.flags |= flags::LAST;
        }
        if retx {
            p.flags |= flags::RETX;
            self.counters.retransmitted += 1;
        }
        // New packets go in order (`next_new`): the last one's first transmission is `Sent`.
        let (first_last, id) = (!retx && c.layout.is_last(idx), c.id);
        c.tx_silence.heard(ctx.now());
        self.sync_ready(slot);
        self.counters.data_sent += 1;
        self.counters.unscheduled_sent += u64::from(unscheduled && !retx);
        ctx.send(p);
        if first_last {
            ctx.sent(id);
        }
        self.arm_tx(ctx, slot);
    }

    /// The packet to send next for a message (a requested resend first, else the next new one),
    /// paid for with the credit held from its receiver. Returns (index, is a resend).
    fn take_packet(&mut self, host: HostId, pi: u32, slot: u32) -> (u64, bool) {
        let h = &mut self.hosts[host as usize];
        let c = &mut self.conns[slot];
        let (idx, retx) = match c.rtx.pop_front() {
            Some(i) => (i, true),
            None => {
                c.next_new += 1;
                (c.next_new - 1, false)
            }
        };
        let pair = &mut self.pairs[pi as usize];
        let w = c.wire(idx, idx + 1);
        pair.credit -= w;
        h.credit -= w;
        debug_assert!(pair.credit >= 0 && h.credit >= 0, "sent without credit");
        if !retx && c.next_new == c.packets() {
            pair.unsent -= 1;
            h.unsent_msgs -= 1;
            if pair.unsent == 0 {
                h.sending_receivers -= 1;
            }
        }
        (idx, retx)
    }

    /// Keeps the message's `ready` bookkeeping in step with what it may send.
    pub(super) fn sync_ready(&mut self, slot: u32) {
        let c = &mut self.conns[slot];
        let now = c.sendable();
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

    /// A CREDIT or RESEND arrived: the receiver is alive (reset the probe timer) and restates its
    /// credit frontier, which the sender's moves up to. A frontier beyond what the receiver has
    /// granted cannot have been sent: the packet is a stray and `false` is returned.
    fn heard_from_receiver(&mut self, ctx: &mut Ctx, slot: u32, frontier: u64) -> bool {
        let c = &mut self.conns[slot];
        if frontier > c.rx_granted {
            return false;
        }
        c.tx_silence.progressed(ctx.now());
        if frontier > c.granted {
            debug_assert!(c.next_new <= c.granted);
            let w = c.wire(c.granted, frontier);
            c.granted = frontier;
            self.pairs[c.pair as usize].credit += w;
            self.hosts[c.src as usize].credit += w;
        }
        true
    }

    /// CREDIT: the receiver allows packets up to its frontier.
    pub(super) fn on_credit(&mut self, ctx: &mut Ctx, slot: u32, pkt: &Packet) {
        if self.heard_from_receiver(ctx, slot, pkt.ack) {
            self.sync_ready(slot);
            self.pump(ctx, self.conns[slot].src);
        }
    }

    /// RESEND: the receiver misses packets [seq, seq + aux) and restates its frontier.
    pub(super) fn on_resend(&mut self, ctx: &mut Ctx, slot: u32, pkt: &Packet) {
        if !self.heard_from_receiver(ctx, slot, pkt.ack) {
            return;
        }
        let c = &mut self.conns[slot];
        // Packets not sent yet need no resend: the frontier covers them.
        let end = pkt.seq.saturating_add(pkt.aux as u64).min(c.next_new);
        let mut added = 0;
        for i in pkt.seq..end {
            if !c.rtx.contains(&i) {
                c.rtx.push_back(i);
                added += c.wire(i, i + 1);
            }
        }
        let src = c.src;
        self.pairs[c.pair as usize].credit += added;
        self.hosts[src as usize].credit += added;
        self.sync_ready(slot);
        self.pump(ctx, src);
    }

    /// ACK: the receiver has the whole message; both halves are done. (An ACK before the
    /// receiver has every packet cannot have been sent: ignored.)
    pub(super) fn on_ack(&mut self, _ctx: &mut Ctx, slot: u32) {
        let c = &mut self.conns[slot];
        if !c.rx_done {
            return;
        }
        let (pi, src, id) = (c.pair, c.src, c.id);
        // Credit still held for it (spurious resend requests) is void.
        let left = c.credit_held();
        let never_sent = c.next_new < c.packets();
        c.rtx = Default::default();
        c.granted = c.next_new;
        self.sync_ready(slot);
        let h = &mut self.hosts[src as usize];
        let pair = &mut self.pairs[pi as usize];
        pair.credit -= left;
        h.credit -= left;
        if never_sent {
            pair.unsent -= 1;
            h.unsent_msgs -= 1;
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
        let timeout = self.cfg.timeout;
        let c = &mut self.conns[slot];
        if let Some(at) = c.tx_silence.arm(timeout, ctx.now()) {
            ctx.set_timer(at, SirdTimer::Tx, c.id);
        }
    }

    /// The sender heard nothing for a while and can send nothing: probe with a CREDITREQ.
    pub(super) fn on_tx_timer(&mut self, ctx: &mut Ctx, slot: u32) {
        let timeout = self.cfg.timeout;
        let c = &mut self.conns[slot];
        if !c.tx_silence.fired(timeout, ctx.now()) {
            return self.arm_tx(ctx, slot);
        }
        if c.sendable() {
            // Waiting for our own uplink, not for the receiver.
            c.tx_silence.heard(ctx.now());
            return self.arm_tx(ctx, slot);
        }
        c.tx_silence.back_off();
        c.tx_silence.heard(ctx.now());
        self.counters.probes += 1;
        self.counters.credit_requests += 1;
        self.send_control(ctx, slot, PacketKind::CreditRequest, true);
        self.arm_tx(ctx, slot);
    }
}
