//! NDP's receiver: an ACK per data packet, a NACK per trimmed header, and one pull per arrival,
//! queued at the receiving host's pull pacer (the [`Puller`]) or carried by the ACK/NACK itself
//! when the pacer is idle. The last packet purges the connection's pulls.

use super::config::PullOrder;
use super::tokens::Tokens;
use super::{Conn, Ndp, NdpTimer, PULL_BIT};
use crate::engine::rng::mix64;
use crate::net::packet::{FlowId, HostId, LoadBalancing, Packet, PacketKind};
use crate::time::Time;
use crate::transport::parts::{srpt_pick, ReceivedSet, ReceiverPacer};
use crate::transport::Ctx;
use std::collections::VecDeque;

/// The receiving half of a connection.
pub(super) struct Receiver {
    pub(super) received: ReceivedSet,
    /// Pulls issued so far (the last one's number).
    pub(super) pulls_sent: u64,
    /// Pulls owed to the sender, waiting at the pacer.
    pub(super) pending_pulls: u64,
    /// The connection is in its host's pull queue.
    pub(super) queued_for_pull: bool,
    /// Pulls for this connection go ahead of the rest (`prioritize_senders`).
    pub(super) priority: bool,
    /// Every packet is in (or the sender has retired): no more pulls.
    pub(super) done: bool,
    /// pHost's token state (unused by NDP).
    pub(super) tokens: Tokens,
}

impl Receiver {
    pub(super) fn new(priority: bool) -> Receiver {
        Receiver {
            received: ReceivedSet::default(),
            pulls_sent: 0,
            pending_pulls: 0,
            queued_for_pull: false,
            priority,
            done: false,
            tokens: Tokens::default(),
        }
    }

    /// Distinct packets received.
    pub(super) fn received_count(&self) -> u64 {
        self.received.count()
    }

    fn packets_left(&self, packets: u64) -> u64 {
        packets.saturating_sub(self.received.count())
    }

    /// Done exactly when every packet is in; a done receiver owes no pulls; owed pulls are queued.
    pub(super) fn check_invariants(&self, packets: u64) {
        let got = self.received.count();
        assert!(got <= packets, "{got} of {packets} packets received");
        assert_eq!(self.done, got == packets, "done with {got} of {packets} packets");
        assert!(!self.done || self.pending_pulls == 0, "a finished receiver owes pulls");
        assert!(self.pending_pulls == 0 || self.queued_for_pull, "owed pulls outside the pull queue");
    }
}

/// A receiving host's pull queue and pacer.
#[derive(Default)]
pub(super) struct Puller {
    /// Connections owed pulls: prioritized senders' first (strict priority), then the rest.
    high: VecDeque<u32>,
    fair: VecDeque<u32>,
    pacer: ReceiverPacer,
    /// Time between pulls: an MTU plus a control packet on the receiver's link, over the pull rate.
    pub(super) spacing: Time,
}

impl Puller {
    pub(super) fn new(spacing: Time) -> Puller {
        Puller { spacing, ..Puller::default() }
    }

    fn is_empty(&self) -> bool {
        self.high.is_empty() && self.fair.is_empty()
    }

    pub(super) fn push(&mut self, slot: u32, priority: bool) {
        if priority {
            self.high.push_back(slot);
        } else {
            self.fair.push_back(slot);
        }
    }

    /// The next connection to pull: priority ones in turn, then the rest in turn or fewest
    /// packets left first (ties to the longest waiting).
    fn pop(&mut self, order: PullOrder, packets_left: impl Fn(u32) -> u64) -> Option<u32> {
        self.high.pop_front().or_else(|| match order {
            PullOrder::Fair => self.fair.pop_front(),
            PullOrder::Srpt => {
                let best = srpt_pick(self.fair.iter().map(|&slot| packets_left(slot)))?;
                self.fair.remove(best)
            }
        })
    }
}

impl Ndp {
    /// Receiver: a data packet or a trimmed header arrived.
    pub(super) fn on_arrival(&mut self, ctx: &mut Ctx, slot: u32, pkt: &Packet) {
        let c = &mut self.conns[slot];
        if pkt.seq >= c.layout.packets() {
            return; // not a packet of this flow
        }
        if pkt.kind == PacketKind::Data {
            take_data(ctx, c, pkt);
        }
        let mut fb = feedback_for(c, pkt, self.framing.control_bytes);
        if self.cfg.pull_follows_feedback {
            // The pull this arrival owes is number pulls_sent + pending_pulls + 1 (one per
            // arrival, released in order): its path is derived from that number.
            fb.lb = LoadBalancing::Ecmp;
            fb.path = pull_path_key(c.id, c.rx.pulls_sent + c.rx.pending_pulls + 1);
        }
        let wants_pull = !c.rx.done;
        let carried = wants_pull && self.piggyback_pull(ctx, slot, &mut fb);
        ctx.send(fb);
        if wants_pull && !carried {
            self.queue_pull(ctx, slot);
        }
    }

    /// The ACK or NACK carries the pull itself when nothing is queued ahead of it and the pacer
    /// would send it now (section 3.2's footnote; htsim's pacer does this).
    fn piggyback_pull(&mut self, ctx: &Ctx, slot: u32, fb: &mut Packet) -> bool {
        let c = &mut self.conns[slot];
        let pl = &mut self.pullers[c.dst as usize];
        if !pl.is_empty() || !pl.pacer.idle(ctx.now()) {
            return false;
        }
        c.rx.pulls_sent += 1;
        fb.flags |= PULL_BIT;
        fb.ack = c.rx.pulls_sent;
        pl.pacer.sent(ctx.now(), pl.spacing);
        self.counters.pulls += 1;
        true
    }

    fn queue_pull(&mut self, ctx: &mut Ctx, slot: u32) {
        let c = &mut self.conns[slot];
        c.rx.pending_pulls += 1;
        if !c.rx.queued_for_pull {
            c.rx.queued_for_pull = true;
            self.pullers[c.dst as usize].push(slot, c.rx.priority);
        }
        let dst = c.dst;
        self.arm_pacer(ctx, dst);
    }

    pub(super) fn arm_pacer(&mut self, ctx: &mut Ctx, host: HostId) {
        if let Some(at) = self.pullers[host as usize].pacer.arm(ctx.now()) {
            ctx.set_timer(at, NdpTimer::Pull, host);
        }
    }

    /// The pacer's timer: release one pull, and come back one spacing later if more are queued.
    /// Returns the flow pulled.
    pub(super) fn pace(&mut self, ctx: &mut Ctx, host: HostId) -> Option<FlowId> {
        self.pullers[host as usize].pacer.disarm();
        let slot = self.next_to_pull(ctx, host)?;
        if self.cfg.phost {
            self.send_token(ctx, slot);
        } else {
            self.send_pull(ctx, slot);
        }
        let pl = &mut self.pullers[host as usize];
        pl.pacer.sent(ctx.now(), pl.spacing);
        if self.cfg.phost {
            self.phost_schedule(ctx, slot);
        } else if self.conns[slot].rx.pending_pulls > 0 {
            let c = &mut self.conns[slot];
            c.rx.queued_for_pull = true;
            self.pullers[host as usize].push(slot, c.rx.priority);
        }
        if !self.pullers[host as usize].is_empty() {
            self.arm_pacer(ctx, host);
        }
        Some(self.conns[slot].id)
    }

    /// Pops connections off the host's pull queue until one is owed a pull; frees the slots of
    /// retired senders on the way.
    fn next_to_pull(&mut self, ctx: &mut Ctx, host: HostId) -> Option<u32> {
        loop {
            let conns = &self.conns;
            let left = |slot: u32| conns[slot].rx.packets_left(conns[slot].layout.packets());
            let slot = self.pullers[host as usize].pop(self.cfg.pull_order, left)?;
            let c = &mut self.conns[slot];
            c.rx.queued_for_pull = false;
            if c.retired {
                self.conns.recycle(slot);
            } else if self.cfg.phost {
                if self.owes_token(slot, ctx.now()) {
                    return Some(slot);
                }
                self.phost_schedule(ctx, slot); // its wake-up, for its oldest token's expiry
            } else if c.rx.pending_pulls > 0 && !c.rx.done {
                return Some(slot);
            } // else its pulls were purged by the last packet
        }
    }

    fn send_pull(&mut self, ctx: &mut Ctx, slot: u32) {
        let c = &mut self.conns[slot];
        c.rx.pending_pulls -= 1;
        c.rx.pulls_sent += 1;
        let mut p = Packet::new(PacketKind::Pull, c.id, c.dst, c.src, self.framing.control_bytes);
        p.ack = c.rx.pulls_sent;
        p.prio = 0;
        if self.cfg.pull_follows_feedback {
            p.lb = LoadBalancing::Ecmp;
            p.path = pull_path_key(c.id, c.rx.pulls_sent);
        } else {
            p.lb = LoadBalancing::Spray;
        }
        ctx.send(p);
        self.counters.pulls += 1;
    }

    /// Every queued slot is marked queued, appears once, belongs to this host (or is retired) and
    /// sits in the queue of its class; a non-empty queue has a pacer timer pending.
    pub(super) fn check_puller(&self, host: HostId) {
        let pl = &self.pullers[host as usize];
        let mut slots: Vec<u32> = pl.high.iter().chain(&pl.fair).copied().collect();
        for (queue, priority) in [(&pl.high, true), (&pl.fair, false)] {
            for &slot in queue {
                let c = &self.conns[slot];
                assert!(c.rx.queued_for_pull, "slot {slot} in host {host}'s pull queue unmarked");
                assert!(c.retired || (c.dst == host && c.rx.priority == priority), "slot {slot} in the wrong queue");
            }
        }
        let n = slots.len();
        slots.sort_unstable();
        slots.dedup();
        assert_eq!(slots.len(), n, "a connection queued twice at host {host}");
        assert!(pl.is_empty() || pl.pacer.is_armed(), "host {host}'s pulls queued without a pacer timer");
    }
}

/// Records a data packet; the flow finishes with its last new packet.
pub(super) fn take_data(ctx: &mut Ctx, c: &mut Conn, pkt: &Packet) {
    if c.rx.received.insert(pkt.seq) {
        ctx.delivered(c.id, pkt.payload as u64);
        if c.rx.received.count() == c.layout.packets() {
            ctx.finished(c.id);
            c.rx.done = true;
            c.rx.pending_pulls = 0; // the last packet purges this sender's pulls
        }
    }
}

/// The ECMP key shared by pull number `pull_no` of a flow and the ACK or NACK that owes it: a
/// fresh hash per pull spreads feedback over the paths as spraying does.
fn pull_path_key(flow: FlowId, pull_no: u64) -> u32 {
    mix64(((flow as u64) << 32) ^ pull_no) as u32
}

/// The ACK (for data) or NACK (for a trimmed header), echoing the packet's number, path and
/// send time.
pub(super) fn feedback_for(c: &Conn, pkt: &Packet, control_bytes: u32) -> Packet {
    let kind = if pkt.kind == PacketKind::Data { PacketKind::Ack } else { PacketKind::Nack };
    let mut fb = Packet::new(kind, c.id, c.dst, c.src, control_bytes);
    fb.seq = pkt.seq;
    fb.aux = pkt.aux;
    fb.ts = pkt.ts;
    fb.prio = 0;
    fb.lb = LoadBalancing::Spray;
    fb
}
