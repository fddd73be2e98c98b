//! The receiver: learning of flows (an RTS, or a short flow's first data), data arrival and the
//! final ACK, and the tokens it sends on each matched link (the simulator's `PIM_Vlink::send_token`):
//! one per packet time x k / channels, to its sender's flow with the fewest packets left, while that
//! flow's token window (window x channels / k) has room; a full window reopens after
//! `token_window_timeout` without a token.

use super::{Dcpim, DcpimTimer};
use crate::net::packet::{HostId, Packet, PacketKind};
use crate::time::Time;
use crate::transport::Ctx;

impl Dcpim {
    /// The receiver hears of a flow for the first time. A short flow's packets are all on their
    /// way: they count as tokened, and the flow is matched only if some are still missing after
    /// they had time to arrive plus the resend timeout (the simulator's `receive_short_flow`).
    fn learn(&mut self, ctx: &mut Ctx, slot: u32) {
        let p = self.p;
        let c = &mut self.conns[slot];
        if c.rx_known {
            return;
        }
        c.rx_known = true;
        if c.short {
            let n = c.layout.packets();
            c.tokens = n;
            c.last_tokened = Some(n - 1);
            c.resend_until = ctx.now() + n * p.pkt_time + p.resend_timeout;
        }
        let dst = c.dst;
        self.hosts[dst as usize].inbound.push(slot);
        self.pending_rx += 1;
        self.ensure_clock(ctx);
    }

    /// An RTS (or a sender's probe): learn the flow, wake the link to its sender, or repeat the
    /// final ACK the sender missed.
    pub(super) fn on_rts(&mut self, ctx: &mut Ctx, slot: u32) {
        if self.conns[slot].rx_done {
            self.send_ack(ctx, slot);
            return;
        }
        self.learn(ctx, slot);
        self.wake_link_for(ctx, slot);
    }

    pub(super) fn on_data(&mut self, ctx: &mut Ctx, slot: u32, pkt: &Packet) {
        let c = &self.conns[slot];
        if pkt.seq >= c.layout.packets() || pkt.payload != c.layout.payload(pkt.seq) {
            return; // not a packet of this flow
        }
        if c.rx_done {
            self.counters.duplicates += 1;
            self.send_ack(ctx, slot);
            return;
        }
        self.learn(ctx, slot);
        let c = &mut self.conns[slot];
        if pkt.aux != u32::MAX && (pkt.aux as u64) < c.tokens {
            c.token_seen = c.token_seen.max(pkt.aux as i64);
        }
        if !c.rx.insert(pkt.seq) {
            self.counters.duplicates += 1;
            return;
        }
        ctx.delivered(c.id, pkt.payload as u64);
        if c.rx.count() == c.layout.packets() {
            c.rx_done = true;
            let (id, dst) = (c.id, c.dst);
            ctx.finished(id);
            let inbound = &mut self.hosts[dst as usize].inbound;
            let i = inbound.iter().position(|&s| s == slot).expect("a known flow is listed");
            inbound.swap_remove(i);
            self.pending_rx -= 1;
            self.send_ack(ctx, slot);
            return;
        }
        if (self.conns[slot].token_gap() as f64) <= self.p.window_pkts {
            self.wake_link_for(ctx, slot);
        }
    }

    /// The final ACK: the receiver has every packet.
    fn send_ack(&mut self, ctx: &mut Ctx, slot: u32) {
        let c = &self.conns[slot];
        let p = Packet::new(PacketKind::Ack, c.id, c.dst, c.src, self.framing.control_bytes);
        self.send_control(ctx, p);
    }

    /// The receiver's smallest flow from `peer` that may have tokens now (not waiting out its
    /// resend timeout); a flow whose resend timeout has passed stops waiting.
    fn top_flow(&mut self, now: Time, r: HostId, peer: HostId) -> Option<u32> {
        let mut best: Option<u32> = None;
        for &slot in &self.hosts[r as usize].inbound {
            let c = &self.conns[slot];
            if c.src != peer || c.rx_done || c.resend_until > now {
                continue;
            }
            if best.is_none_or(|b| self.better_rx(slot, b)) {
                best = Some(slot);
            }
        }
        if let Some(slot) = best {
            self.conns[slot].resend_until = 0;
        }
        best
    }

    /// Data or an RTS of this flow arrived: if it is the top flow of a matched link whose timer is
    /// idle or only waiting for a full window to time out, the link sends now (or when paced).
    fn wake_link_for(&mut self, ctx: &mut Ctx, slot: u32) {
        let (src, dst) = (self.conns[slot].src, self.conns[slot].dst);
        let Some(i) = self.hosts[dst as usize].links.iter().position(|l| l.peer == src) else { return };
        let top = self.peek_top(ctx.now(), dst, src);
        if top != Some(slot) {
            return;
        }
        let l = &self.hosts[dst as usize].links[i];
        if l.timer_at.is_none() || l.timer_is_timeout {
            self.kick_link(ctx, dst, i);
        }
    }

    /// `top_flow` without its side effect.
    fn peek_top(&self, now: Time, r: HostId, peer: HostId) -> Option<u32> {
        let mut best: Option<u32> = None;
        for &slot in &self.hosts[r as usize].inbound {
            let c = &self.conns[slot];
            if c.src == peer && !c.rx_done && c.resend_until <= now && best.is_none_or(|b| self.better_rx(slot, b)) {
                best = Some(slot);
            }
        }
        best
    }

    /// Fires link `i` of receiver `r` now.
    pub(super) fn kick_link(&mut self, ctx: &mut Ctx, r: HostId, i: usize) {
        let now = ctx.now();
        let l = &mut self.hosts[r as usize].links[i];
        l.timer_at = Some(now);
        l.timer_is_timeout = false;
        ctx.set_timer(now, DcpimTimer::Link, Self::link_timer_id(r, i));
    }

    /// Link timers name the receiver and the link's index (at most k links per receiver).
    pub(super) fn link_timer_id(r: HostId, i: usize) -> u32 {
        r * super::config::MAX_CHANNELS as u32 + i as u32
    }

    pub(super) fn on_link_timer(&mut self, ctx: &mut Ctx, id: u32) {
        let k = super::config::MAX_CHANNELS as u32;
        let (r, i) = (id / k, (id % k) as usize);
        let now = ctx.now();
        let Some(l) = self.hosts.get(r as usize).and_then(|h| h.links.get(i)) else { return };
        if l.timer_at != Some(now) {
            return; // stale: the link was re-installed or re-armed
        }
        let (peer, channels) = (l.peer, l.channels);
        self.hosts[r as usize].links[i].timer_at = None;
        if channels == 0 {
            return;
        }
        let Some(slot) = self.top_flow(now, r, peer) else { return };
        let window = self.p.window_pkts * channels as f64 / self.cfg.channels as f64;
        let c = &mut self.conns[slot];
        let mut wait = None;
        if c.token_gap() as f64 > window {
            if now >= c.last_token_at + self.p.window_timeout {
                c.token_seen = c.tokens as i64 - window.floor().max(1.0) as i64;
            } else {
                wait = Some(c.last_token_at + self.p.window_timeout);
            }
        }
        let next = if (self.conns[slot].token_gap() as f64) <= window {
            self.send_token(ctx, slot, r);
            Some((now + self.p.pkt_time * self.cfg.channels as u64 / channels as u64, false))
        } else {
            wait.map(|t| (t, true))
        };
        if let Some((at, is_timeout)) = next {
            let l = &mut self.hosts[r as usize].links[i];
            l.timer_at = Some(at);
            l.timer_is_timeout = is_timeout;
            ctx.set_timer(at, DcpimTimer::Link, id);
        }
    }

    /// A token for the next missing packet; once every missing packet has had one, the flow waits
    /// out the resend timeout. Tokens expire at the end of the data phase, plus half a control
    /// RTT and k packet times (the simulator's token TTL).
    fn send_token(&mut self, ctx: &mut Ctx, slot: u32, r: HostId) {
        let now = ctx.now();
        let expiry = self.hosts[r as usize].phase_end + self.p.crtt / 2 + self.cfg.channels as u64 * self.p.pkt_time;
        let c = &mut self.conns[slot];
        let seq = c.next_to_token();
        let mut p = Packet::new(PacketKind::Credit, c.id, c.dst, c.src, self.framing.control_bytes);
        p.seq = seq;
        p.ack = c.tokens;
        p.aux = c.rx_remaining().min(u32::MAX as u64) as u32;
        p.ts = expiry;
        c.tokens += 1;
        c.last_tokened = Some(seq);
        c.last_token_at = now;
        if c.next_to_token() <= seq {
            c.resend_until = now + self.p.resend_timeout;
        }
        self.counters.tokens += 1;
        self.send_control(ctx, p);
    }
}
