//! Epochs and matching rounds (section 3 of the paper; `PimEpoch` in the authors' simulator).
//!
//! Time is cut into half rounds ("ticks") from time 0, so every host runs the same clock (the
//! paper's loose synchronization, here exact). An epoch starts every `epoch_ticks` ticks (the data
//! phase, alpha x r rounds); its matching takes the first 2r ticks: at the start of round i each
//! receiver first accepts the grants of round i-1, then sends requests; half a round later each
//! sender grants. After round r's grants are accepted the matching is installed: it is the data
//! phase's set of links (the previous epoch's links end). The clock only runs while some receiver
//! knows of a flow it lacks packets of; it stops at an epoch start with nothing to match and
//! restarts at the next epoch boundary once there is.

use super::state::{Link, Offer};
use super::{Dcpim, DcpimTimer, ACCEPT};
use crate::net::packet::{HostId, Packet, PacketKind};
use crate::transport::Ctx;

/// Round ids carried by matching messages: epoch x 16 + round (1-based).
const ROUND_ID_SHIFT: u64 = 16;

impl Dcpim {
    /// Some receiver has something to match: make sure the clock runs (from the next epoch start).
    pub(super) fn ensure_clock(&mut self, ctx: &mut Ctx) {
        if self.clock_on {
            return;
        }
        self.clock_on = true;
        let epoch = self.p.data_phase();
        let at = ctx.now().div_ceil(epoch) * epoch;
        ctx.set_timer(at, DcpimTimer::Tick, 0);
    }

    /// One tick: finish the round of the epoch being matched, start a new epoch, or play the
    /// receivers' or senders' half of a round.
    pub(super) fn on_tick(&mut self, ctx: &mut Ctx) {
        debug_assert!(self.clock_on);
        let n = ctx.now() / self.p.half_round;
        debug_assert_eq!(n * self.p.half_round, ctx.now(), "ticks fall on half rounds");
        let r2 = 2 * self.cfg.rounds as u64;
        if let Some(n0) = self.matching_start {
            let k = n - n0;
            if k >= 2 && k.is_multiple_of(2) {
                self.accept_all(ctx, self.round_id(n0, k / 2));
            }
            if k == r2 {
                self.install_all(ctx, n0 / self.p.epoch_ticks);
                self.matching_start = None;
            }
        }
        if n.is_multiple_of(self.p.epoch_ticks) {
            if self.pending_rx == 0 {
                self.stop_clock();
                return;
            }
            self.start_epoch(n);
        }
        if let Some(n0) = self.matching_start {
            let k = n - n0;
            if k < r2 {
                let id = self.round_id(n0, k / 2 + 1);
                if k.is_multiple_of(2) {
                    self.request_all(ctx, id);
                } else {
                    self.grant_all(ctx, id, (k / 2 + 1) as u32);
                }
            }
        }
        let next = match self.matching_start {
            Some(_) => n + 1,
            None => (n / self.p.epoch_ticks + 1) * self.p.epoch_ticks,
        };
        ctx.set_timer(next * self.p.half_round, DcpimTimer::Tick, 0);
    }

    fn round_id(&self, n0: u64, round: u64) -> u64 {
        (n0 / self.p.epoch_ticks) * ROUND_ID_SHIFT + round
    }

    /// The round (1-based) of a round id.
    pub(super) fn round_of(id: u64) -> u32 {
        (id % ROUND_ID_SHIFT) as u32
    }

    /// The epoch of a round id.
    pub(super) fn epoch_of(id: u64) -> u64 {
        id / ROUND_ID_SHIFT
    }

    /// The epoch being matched, if any.
    pub(super) fn matching_epoch(&self) -> Option<u64> {
        self.matching_start.map(|n0| n0 / self.p.epoch_ticks)
    }

    fn start_epoch(&mut self, n: u64) {
        self.matching_start = Some(n);
        self.counters.epochs += 1;
        for h in &mut self.hosts {
            h.tx_matched = 0;
            h.rx_matched = 0;
            h.pending.clear();
            h.requests.clear();
            h.grants.clear();
        }
    }

    /// Nothing to match: the clock stops and the links end with it.
    fn stop_clock(&mut self) {
        self.clock_on = false;
        self.matching_start = None;
        for h in &mut self.hosts {
            h.links.clear();
            h.pending.clear();
            h.requests.clear();
            h.grants.clear();
        }
    }

    /// Receivers ask each sender they lack packets from for the channels their smallest flow from
    /// it needs beyond those already matched (the simulator's `send_all_req`).
    fn request_all(&mut self, ctx: &mut Ctx, round_id: u64) {
        let k = self.cfg.channels;
        for r in 0..self.hosts.len() {
            let h = &self.hosts[r];
            if h.inbound.is_empty() || h.rx_matched >= k {
                continue;
            }
            let avail = k - h.rx_matched;
            let mut best = std::mem::take(&mut self.scratch);
            best.clear();
            for &slot in &h.inbound {
                let c = &self.conns[slot];
                if c.rx_done || c.resend_until > ctx.now() {
                    continue;
                }
                match best.iter_mut().find(|(s, _)| *s == c.src) {
                    Some(b) if self.better_rx(slot, b.1) => b.1 = slot,
                    Some(_) => {}
                    None => best.push((c.src, slot)),
                }
            }
            for &(peer, slot) in &best {
                let h = &self.hosts[r];
                let matched: u32 =
                    h.links.iter().chain(&h.pending).filter(|l| l.peer == peer).map(|l| l.channels).sum();
                let remaining = self.conns[slot].rx_remaining();
                if (matched as u64) * self.p.link_pkts >= remaining {
                    continue;
                }
                let need = (remaining.div_ceil(self.p.link_pkts) - matched as u64).min(avail as u64) as u32;
                self.send_matching(ctx, slot, PacketKind::CreditRequest, round_id, need, remaining);
                self.counters.requests += 1;
            }
            self.scratch = best;
        }
    }

    /// The receiver's order among its flows: fewest packets left, then earliest start, then id.
    pub(super) fn better_rx(&self, a: u32, b: u32) -> bool {
        let (x, y) = (&self.conns[a], &self.conns[b]);
        (x.rx_remaining(), x.start, x.id) < (y.rx_remaining(), y.start, y.id)
    }

    /// Senders grant requests of this round, up to their free channels: smallest flow first in
    /// the first `srpt_rounds` rounds, at random after (the simulator's `handle_all_req`).
    fn grant_all(&mut self, ctx: &mut Ctx, round_id: u64, round: u32) {
        let k = self.cfg.channels;
        for s in 0..self.hosts.len() {
            if self.hosts[s].requests.is_empty() {
                continue;
            }
            let mut offers = std::mem::take(&mut self.hosts[s].requests);
            offers.retain(|o| o.round == round_id);
            self.order(&mut offers, round);
            let mut avail = k.saturating_sub(self.hosts[s].tx_matched);
            for o in offers {
                if avail == 0 {
                    break;
                }
                let Some(slot) = self.live(o) else { continue };
                let g = o.channels.min(avail);
                avail -= g;
                self.send_matching(ctx, slot, PacketKind::Pull, round_id, g, o.remaining);
                self.counters.grants += 1;
            }
        }
    }

    /// Receivers accept grants of this round up to their free channels, in the same order as
    /// grants (the simulator's `handle_all_grants`).
    fn accept_all(&mut self, ctx: &mut Ctx, round_id: u64) {
        let k = self.cfg.channels;
        let round = Self::round_of(round_id);
        for r in 0..self.hosts.len() {
            if self.hosts[r].grants.is_empty() {
                continue;
            }
            let mut offers = std::mem::take(&mut self.hosts[r].grants);
            offers.retain(|o| o.round == round_id);
            self.order(&mut offers, round);
            for o in offers {
                let h = &mut self.hosts[r];
                let avail = k.saturating_sub(h.rx_matched);
                if avail == 0 {
                    break;
                }
                let Some(slot) = self.live(o) else { continue };
                let h = &mut self.hosts[r];
                let a = o.channels.min(avail);
                h.rx_matched += a;
                match h.pending.iter_mut().find(|l| l.peer == o.peer) {
                    Some(l) => {
                        l.channels += a;
                        l.shortest = l.shortest.min(o.remaining);
                    }
                    None => h.pending.push(Link {
                        peer: o.peer,
                        channels: a,
                        shortest: o.remaining,
                        timer_at: None,
                        timer_is_timeout: false,
                    }),
                }
                self.send_matching(ctx, slot, PacketKind::Ack, round_id, a, o.remaining);
                self.counters.accepts += 1;
                self.counters.matched_channels += a as u64;
            }
        }
    }

    /// Smallest flow first (then earliest start, then id) in SRPT rounds, else a random order.
    fn order(&mut self, offers: &mut [Offer], round: u32) {
        if round <= self.cfg.srpt_rounds {
            offers.sort_by_key(|o| (o.remaining, o.start, o.id));
        } else {
            self.rng.shuffle(offers);
        }
    }

    /// The flow an offer names, if it is still the one in that slot.
    fn live(&self, o: Offer) -> Option<u32> {
        self.conns.slot(o.id).filter(|&s| s == o.slot)
    }

    /// The matching of `epoch` becomes every receiver's links for the data phase starting now;
    /// links are served shortest flow first (the simulator sorts them so).
    fn install_all(&mut self, ctx: &mut Ctx, epoch: u64) {
        let end = ctx.now() + self.p.data_phase();
        for r in 0..self.hosts.len() {
            let h = &mut self.hosts[r];
            let mut links = std::mem::take(&mut h.pending);
            links.retain(|l| l.channels > 0);
            links.sort_by_key(|l| (l.shortest, l.peer));
            let old = std::mem::replace(&mut h.links, links);
            h.links_epoch = epoch;
            h.phase_end = end;
            for i in 0..self.hosts[r].links.len() {
                // A sender matched again keeps its token pacing across the epoch boundary (a
                // token now and another at the paced time would outrun its link).
                let peer = self.hosts[r].links[i].peer;
                let paced = old.iter().find(|l| l.peer == peer && !l.timer_is_timeout).and_then(|l| l.timer_at);
                match paced {
                    Some(at) if at > ctx.now() => {
                        self.hosts[r].links[i].timer_at = Some(at);
                        ctx.set_timer(at, DcpimTimer::Link, Self::link_timer_id(r as HostId, i));
                    }
                    _ => self.kick_link(ctx, r as HostId, i),
                }
            }
        }
    }

    /// A request (receiver to sender), grant (sender to receiver) or accept (receiver to sender).
    fn send_matching(&mut self, ctx: &mut Ctx, slot: u32, kind: PacketKind, round_id: u64, channels: u32, rem: u64) {
        let c = &self.conns[slot];
        let (from, to) = if kind == PacketKind::Pull { (c.src, c.dst) } else { (c.dst, c.src) };
        let mut p = Packet::new(kind, c.id, from, to, self.framing.control_bytes);
        p.seq = round_id;
        p.aux = channels;
        p.ack = rem;
        if kind == PacketKind::Ack {
            p.flags |= ACCEPT;
        }
        self.send_control(ctx, p);
    }

    /// A request reached the flow's sender: held for its grant step.
    pub(super) fn on_request(&mut self, slot: u32, pkt: &Packet) {
        self.hold(slot, pkt, false);
    }

    /// A grant reached the flow's receiver: held for its accept step.
    pub(super) fn on_grant(&mut self, slot: u32, pkt: &Packet) {
        self.hold(slot, pkt, true);
    }

    fn hold(&mut self, slot: u32, pkt: &Packet, grant: bool) {
        let Some(epoch) = self.matching_epoch() else { return };
        let round = Self::round_of(pkt.seq);
        if Self::epoch_of(pkt.seq) != epoch || round == 0 || round > self.cfg.rounds || pkt.aux == 0 {
            return; // late, or not a round of this epoch's matching
        }
        let c = &self.conns[slot];
        let (host, peer) = if grant { (c.dst, c.src) } else { (c.src, c.dst) };
        let o = Offer {
            slot,
            peer,
            channels: pkt.aux.min(self.cfg.channels),
            remaining: pkt.ack,
            start: c.start,
            id: c.id,
            round: pkt.seq,
        };
        let h = &mut self.hosts[host as usize];
        if grant {
            h.grants.push(o);
        } else {
            h.requests.push(o);
        }
    }

    /// An accept reached the sender: its channels are taken; beyond k, the excess is rejected.
    pub(super) fn on_accept(&mut self, ctx: &mut Ctx, slot: u32, pkt: &Packet) {
        if self.matching_epoch() != Some(Self::epoch_of(pkt.seq)) || pkt.aux == 0 {
            return;
        }
        let k = self.cfg.channels;
        let src = self.conns[slot].src;
        let h = &mut self.hosts[src as usize];
        let total = h.tx_matched + pkt.aux.min(k);
        h.tx_matched = total.min(k);
        if total > k {
            let mut p = Packet::new(
                PacketKind::Nack,
                self.conns[slot].id,
                src,
                self.conns[slot].dst,
                self.framing.control_bytes,
            );
            p.seq = pkt.seq;
            p.aux = total - k;
            self.send_control(ctx, p);
            self.counters.rejects += 1;
        }
    }

    /// A reject reached the receiver: the link to that sender loses the channels, in the epoch
    /// being matched or the data phase it named.
    pub(super) fn on_reject(&mut self, slot: u32, pkt: &Packet) {
        let (dst, src) = (self.conns[slot].dst, self.conns[slot].src);
        let epoch = Self::epoch_of(pkt.seq);
        let matching = self.matching_epoch() == Some(epoch);
        let h = &mut self.hosts[dst as usize];
        let links = if matching {
            &mut h.pending
        } else if h.links_epoch == epoch {
            &mut h.links
        } else {
            return;
        };
        if let Some(l) = links.iter_mut().find(|l| l.peer == src) {
            let cut = l.channels.min(pkt.aux);
            l.channels -= cut;
            if matching {
                h.rx_matched -= cut;
            }
        }
    }
}
