//! The sender: a new flow (short: every packet at once; long: an RTS), the NIC's next data packet
//! (unsent packets of short flows first, smallest first; then tokens, for the flow with the fewest
//! packets left, dropping expired ones), the final ACK, and the probe timer for lost packets.

use super::config::DataPriorities;
use super::state::Token;
use super::{Dcpim, DcpimTimer, RTS};
use crate::net::packet::{flags, HostId, Packet, PacketKind};
use crate::transport::Ctx;

/// The simulator's `packet_priority`: class 1 for flows of at most 7 packets, 2 up to 49, ... 6.
pub(super) fn size_class(packets: u64) -> u8 {
    let (mut class, mut bound) = (1, 7);
    while packets > bound && class < 6 {
        bound *= 7;
        class += 1;
    }
    class
}

impl Dcpim {
    /// A long flow asks its receiver to be matched; a short one goes out whole, its data carrying
    /// the size, so that it needs no RTS (the simulator sends one ahead of the data; here the
    /// first data packet serves, so a lone short flow meets the exact ideal).
    pub(super) fn start_sending(&mut self, ctx: &mut Ctx, slot: u32) {
        let c = &self.conns[slot];
        let src = c.src;
        self.hosts[src as usize].out.push(slot);
        if !c.short {
            self.send_rts(ctx, slot);
            self.counters.rts += 1;
        }
        self.arm_probe(ctx, slot);
        self.pump(ctx, src);
    }

    pub(super) fn send_rts(&mut self, ctx: &mut Ctx, slot: u32) {
        let c = &self.conns[slot];
        let mut p = Packet::new(PacketKind::CreditRequest, c.id, c.src, c.dst, self.framing.control_bytes);
        p.ack = c.layout.size_bytes();
        p.flags |= RTS;
        self.send_control(ctx, p);
    }

    /// Sends the next data packet if the NIC is idle.
    pub(super) fn pump(&mut self, ctx: &mut Ctx, host: HostId) {
        if !ctx.nic_is_idle(host) {
            return; // it will report when it is idle again
        }
        if let Some(slot) = self.next_unscheduled(host) {
            let seq = self.conns[slot].next_new;
            self.conns[slot].next_new += 1;
            self.send_data(ctx, slot, seq, seq, true);
            return;
        }
        let now = ctx.now();
        let h = &mut self.hosts[host as usize];
        let before = h.tokens.len();
        let conns = &self.conns;
        h.tokens.retain(|t| t.expiry >= now && conns.slot(t.id) == Some(t.slot));
        self.counters.tokens_expired += (before - h.tokens.len()) as u64;
        let h = &self.hosts[host as usize];
        let key = |t: &Token| (self.conns[t.slot].tx_remaining, self.conns[t.slot].start, t.id);
        let Some(i) = (0..h.tokens.len()).min_by_key(|&i| key(&h.tokens[i])) else { return };
        let t = self.hosts[host as usize].tokens.remove(i);
        self.send_data(ctx, t.slot, t.seq, t.token_seq, false);
    }

    /// The short flow with unsent packets and the fewest packets left to send.
    fn next_unscheduled(&self, host: HostId) -> Option<u32> {
        let h = &self.hosts[host as usize];
        let key = |s: u32| {
            let c = &self.conns[s];
            (c.layout.packets() - c.next_new, c.start, c.id)
        };
        h.out
            .iter()
            .copied()
            .filter(|&s| self.conns[s].short && self.conns[s].next_new < self.conns[s].layout.packets())
            .min_by_key(|&s| key(s))
    }

    fn send_data(&mut self, ctx: &mut Ctx, slot: u32, seq: u64, token_seq: u64, unscheduled: bool) {
        let c = &mut self.conns[slot];
        let mut p = Packet::new(PacketKind::Data, c.id, c.src, c.dst, c.layout.wire_bytes(seq));
        p.payload = c.layout.payload(seq);
        p.seq = seq;
        p.ack = c.layout.size_bytes();
        p.aux = token_seq.min(u32::MAX as u64 - 1) as u32;
        p.ts = ctx.now();
        p.lb = self.cfg.lb;
        p.path = c.id.wrapping_mul(0x9e37_79b9);
        p.prio = match (self.cfg.use_priorities, self.cfg.data_priorities) {
            (false, _) => 0,
            (true, DataPriorities::ShortLong) => 1 + u8::from(!c.short),
            (true, DataPriorities::BySize) => size_class(c.layout.packets()),
        };
        if c.layout.is_last(seq) {
            p.flags |= flags::LAST;
        }
        let fresh = c.tx_sent.insert(seq);
        if !fresh {
            p.flags |= flags::RETX;
            self.counters.retransmitted += 1;
        }
        // Tokens name packets, which need not come in order: the flow is `Sent` when its last
        // not-yet-sent packet goes, i.e. when every packet has gone at least once.
        let all_sent = fresh && c.tx_sent.count() == c.layout.packets();
        let id = c.id;
        self.counters.unscheduled_sent += u64::from(unscheduled);
        c.tx_silence.heard(ctx.now());
        self.counters.data_sent += 1;
        ctx.send(p);
        if all_sent {
            ctx.sent(id);
        }
    }

    /// A token: the sender may send the packet it names until it expires.
    pub(super) fn on_token(&mut self, ctx: &mut Ctx, slot: u32, pkt: &Packet) {
        let c = &mut self.conns[slot];
        if pkt.seq >= c.layout.packets() || pkt.ts < ctx.now() {
            return;
        }
        c.tx_remaining = pkt.aux as u64;
        c.tx_silence.progressed(ctx.now());
        let t = Token { slot, id: c.id, seq: pkt.seq, token_seq: pkt.ack, expiry: pkt.ts };
        let src = c.src;
        self.hosts[src as usize].tokens.push(t);
        self.pump(ctx, src);
    }

    /// The receiver has everything: the flow is done at both ends and its state is freed.
    pub(super) fn on_final_ack(&mut self, slot: u32) {
        let c = &self.conns[slot];
        if !c.rx_done {
            return; // a stray: the receiver has not got every packet
        }
        let (id, src) = (c.id, c.src);
        let h = &mut self.hosts[src as usize];
        let i = h.out.iter().position(|&s| s == slot).expect("an unacknowledged flow is listed");
        h.out.swap_remove(i);
        h.tokens.retain(|t| t.slot != slot);
        self.conns.remove(id, slot);
    }

    fn arm_probe(&mut self, ctx: &mut Ctx, slot: u32) {
        let c = &mut self.conns[slot];
        if let Some(at) = c.tx_silence.arm(self.p.timeout, ctx.now()) {
            ctx.set_timer(at, DcpimTimer::Probe, c.id);
        }
    }

    /// Silence for a whole timeout: the RTS again (the receiver learns the flow if everything
    /// was lost, or repeats a lost final ACK).
    pub(super) fn on_probe_timer(&mut self, ctx: &mut Ctx, id: u32) {
        let Some(slot) = self.conns.slot(id) else { return };
        let c = &mut self.conns[slot];
        if c.tx_silence.fired(self.p.timeout, ctx.now()) {
            c.tx_silence.back_off();
            c.tx_silence.heard(ctx.now());
            self.send_rts(ctx, slot);
            self.counters.probes += 1;
        }
        self.arm_probe(ctx, slot);
    }
}
