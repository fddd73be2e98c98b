//! NDP's sender: the first window at line rate, then one packet per pull (queued retransmissions
//! first, lowest sequence first), NACKed and returned packets queued for resending, the RTO for
//! true losses, return-to-sender resends.

use super::paths::{Feedback, FeedbackHistory, PathScoreboard};
use super::{Ndp, NdpTimer};
use crate::engine::prefetch;
use crate::net::packet::{flags, Packet, PacketKind};
use crate::time::{from_us, Time};
use crate::transport::parts::RttEstimator;
use crate::transport::Ctx;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Cap of the backed-off RTO.
pub(super) const MAX_RTO_US: f64 = 1e6;
const _: () = assert!(MAX_RTO_US <= crate::limits::MAX_RTO_US, "limits.rs bounds timers by its MAX_RTO_US");

/// A sent packet's state until it is ACKed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sent {
    /// On its way; sent at this time on this path.
    Out {
        at: Time,
        path: u16,
    },
    /// NACKed, returned or timed out: waiting in the retransmission queue.
    Queued {
        path: u16,
    },
    Acked,
}

/// The sending half of a connection.
pub(super) struct Sender {
    /// Packets below this have been sent at least once.
    next_new: u64,
    /// State of packets `base..next_new` (front = packet `base`); packets below are all ACKed.
    base: u64,
    window: VecDeque<Sent>,
    pub(super) acked: u64,
    /// Data packets sent, retransmissions included: a bound on the pulls the receiver can issue.
    transmissions: u64,
    /// Packets waiting for a pull to be resent (each one `Queued` in the window).
    rtx: BinaryHeap<Reverse<u64>>,
    /// Highest pull number seen (pulls are numbered 1, 2, ... per connection).
    last_pull: u64,
    /// Pulls still expected: feedback received minus pulls received.
    pub(super) pull_window: i64,
    /// The first window's size minus feedback events so far (ACKs, NACKs, returns): while
    /// positive, feedback for the first window (and so pulls) may still come.
    first_window_left: i64,
    /// The first window's size: min(initial window, packets).
    first_window: u64,
    paths: PathScoreboard,
    history: FeedbackHistory,
    pub(super) rtt: RttEstimator,
    /// When the pending RTO timer counts; a timer firing at any other time is stale (the deadline
    /// moved earlier when the RTO fell, as htsim recomputes it on every ACK).
    pub(super) rto_at: Option<Time>,
    /// Last time a pull or feedback arrived: queued retransmissions are only rescued by the timer
    /// when nothing has come for an RTO (their pulls were lost), never while pulls still arrive.
    last_heard: Time,
    /// Something (feedback or a pHost token) has come from the receiver.
    heard_from_receiver: bool,
}

impl Sender {
    pub(super) fn new(first_window: u64, paths: PathScoreboard, rtt: RttEstimator, now: Time) -> Sender {
        Sender {
            next_new: 0,
            base: 0,
            window: VecDeque::new(),
            acked: 0,
            transmissions: 0,
            rtx: BinaryHeap::new(),
            last_pull: 0,
            pull_window: 0,
            first_window_left: first_window as i64,
            first_window,
            paths,
            history: FeedbackHistory::default(),
            rtt,
            rto_at: None,
            last_heard: now,
            heard_from_receiver: false,
        }
    }

    /// The next packet to send, with its last path if it is a retransmission: the lowest queued
    /// retransmission, else new data; `None` when there is nothing to send.
    fn take_next(&mut self, packets: u64) -> Option<(u64, Option<u16>)> {
        if let Some(Reverse(seq)) = self.rtx.pop() {
            let Sent::Queued { path } = self.window[(seq - self.base) as usize] else {
                unreachable!("retransmission queue out of sync with the window")
            };
            Some((seq, Some(path)))
        } else if self.next_new < packets {
            self.next_new += 1;
            self.window.push_back(Sent::Out { at: 0, path: 0 });
            Some((self.next_new - 1, None))
        } else {
            None
        }
    }

    fn mark_sent(&mut self, seq: u64, at: Time, path: u16) {
        self.window[(seq - self.base) as usize] = Sent::Out { at, path };
        self.transmissions += 1;
    }

    /// The path of packet `seq` if it is out (feedback for anything else is stale or stray).
    pub(super) fn outstanding_path(&self, seq: u64) -> Option<u16> {
        let i = seq.checked_sub(self.base)?;
        match self.window.get(i as usize) {
            Some(&Sent::Out { path, .. }) => Some(path),
            _ => None,
        }
    }

    /// Packet `seq` has been ACKed.
    pub(super) fn is_acked(&self, seq: u64) -> bool {
        seq < self.base || self.window.get((seq - self.base) as usize) == Some(&Sent::Acked)
    }

    fn mark_acked(&mut self, seq: u64) {
        self.window[(seq - self.base) as usize] = Sent::Acked;
        self.acked += 1;
        while self.window.front() == Some(&Sent::Acked) {
            self.window.pop_front();
            self.base += 1;
        }
    }

    /// Packet `seq`, last sent on `path`, waits for a pull to be resent.
    fn requeue(&mut self, seq: u64, path: u16) {
        self.window[(seq - self.base) as usize] = Sent::Queued { path };
        self.rtx.push(Reverse(seq));
    }

    fn record(&mut self, path: u16, fb: Feedback, penalty: bool) {
        self.history.push(fb);
        self.paths.record(path, fb, penalty);
    }

    /// Queues every packet out for at least an RTO as lost. Returns how many, and the send time
    /// of the oldest packet still out.
    fn expire(&mut self, now: Time, penalty: bool) -> (usize, Option<Time>) {
        let rto = self.rtt.rto_ps();
        let (mut expired, mut oldest) = (0, None::<Time>);
        for i in 0..self.window.len() {
            let Sent::Out { at, path } = self.window[i] else { continue };
            if at + rto <= now {
                self.window[i] = Sent::Queued { path };
                self.rtx.push(Reverse(self.base + i as u64));
                self.record(path, Feedback::Loss, penalty);
                expired += 1;
            } else {
                oldest = Some(oldest.map_or(at, |o| o.min(at)));
            }
        }
        (expired, oldest)
    }

    /// How long queued retransmissions wait, with nothing out and nothing heard, before one is
    /// resent: an RTO when no pull is expected; while pulls are expected, at least the RTO cap
    /// (1 s), as a large incast's receiver may pull each sender only every few tens of ms (8,000
    /// senders of 9 KB packets: every 58 ms) and only lost pulls warrant the rescue.
    pub(super) fn orphan_wait(&self) -> Time {
        let rto = self.rtt.rto_ps();
        if self.pull_window <= 0 {
            rto
        } else {
            rto.max(from_us(MAX_RTO_US))
        }
    }

    /// Feedback or a token arrived.
    pub(super) fn heard(&mut self, now: Time) {
        self.last_heard = now;
        self.heard_from_receiver = true;
    }

    pub(super) fn has_heard(&self) -> bool {
        self.heard_from_receiver
    }

    /// Prefetch hint for feedback (or a return) for packet `seq` sent on `path`: its window
    /// entry, the window's front (ACKs pop it) and the path's score.
    #[inline(always)]
    pub(super) fn prefetch_feedback(&self, seq: u64, path: u16) {
        if let Some(e) = seq.checked_sub(self.base).and_then(|i| self.window.get(i as usize)) {
            prefetch::line(e);
        }
        if let Some(e) = self.window.front() {
            prefetch::line(e);
        }
        self.paths.prefetch_score(path);
    }

    /// Prefetch hint for a pull: the window's end (new data is pushed there; after a wrap of the
    /// ring the address is off, which a hint may be) and the next path.
    #[inline(always)]
    pub(super) fn prefetch_send(&self) {
        let (a, b) = self.window.as_slices();
        prefetch::line(if b.is_empty() { a.as_ptr_range().end } else { b.as_ptr_range().end });
        self.paths.prefetch_next();
    }

    /// Distinct packets sent so far.
    pub(super) fn sent(&self) -> u64 {
        self.next_new
    }

    pub(super) fn in_flight(&self) -> usize {
        self.window.iter().filter(|s| matches!(s, Sent::Out { .. })).count()
    }

    pub(super) fn retransmit_queue_len(&self) -> usize {
        self.rtx.len()
    }

    pub(super) fn srtt_ps(&self) -> Option<f64> {
        self.rtt.srtt_ps()
    }

    /// Frees the per-packet and per-path state of a finished sender.
    pub(super) fn release(&mut self) {
        self.window = VecDeque::new();
        self.rtx = BinaryHeap::new();
        self.paths = PathScoreboard::default();
    }

    /// Counts agree with the window, the retransmission queue holds exactly the queued packets,
    /// the pull bookkeeping is within what feedback allows, and a timer watches whatever is
    /// unacknowledged. `pulls_issued` is the receiver's pull count.
    pub(super) fn check_invariants(&self, packets: u64, pulls_issued: u64, receiver_driven: bool) {
        assert!(self.acked <= self.next_new && self.next_new <= packets, "acked {} sent {}", self.acked, self.next_new);
        assert_eq!(self.window.len() as u64, self.next_new - self.base, "window spans base..next_new");
        assert!(self.window.front() != Some(&Sent::Acked), "ACKed packets leave the window front");
        let in_window_acked = self.window.iter().filter(|s| **s == Sent::Acked).count() as u64;
        assert_eq!(self.acked, self.base + in_window_acked, "ACK count");
        let queued = self.window.iter().filter(|s| matches!(s, Sent::Queued { .. })).count();
        assert_eq!(self.rtx.len(), queued, "retransmission queue size");
        let mut rtx: Vec<u64> = self.rtx.iter().map(|r| r.0).collect();
        rtx.sort_unstable();
        rtx.dedup();
        assert_eq!(rtx.len(), queued, "retransmission queue holds no duplicates");
        for &seq in &rtx {
            assert!(
                seq >= self.base && seq < packets,
                "queued retransmission {seq} outside [{}, {packets})",
                self.base
            );
            assert!(matches!(self.window[(seq - self.base) as usize], Sent::Queued { .. }));
        }
        // The pull window is feedback events minus pulls received. Pulls are numbered 1, 2, ... so
        // at most `last_pull` have arrived; every feedback event (returns too) took one off
        // `first_window_left`.
        assert!(self.last_pull <= pulls_issued, "pull {} seen, {pulls_issued} issued", self.last_pull);
        assert!(self.last_pull <= self.transmissions, "pull {} after {} packets", self.last_pull, self.transmissions);
        let feedback_events = self.first_window as i64 - self.first_window_left;
        assert!(feedback_events >= 0, "first window {} left {}", self.first_window, self.first_window_left);
        assert!(self.pull_window >= -(self.last_pull as i64), "pull window {}", self.pull_window);
        assert!(
            self.pull_window <= feedback_events,
            "pull window {} after {feedback_events} feedback events",
            self.pull_window
        );
        let paths = self.paths.len() as u64;
        for s in &self.window {
            if let Sent::Out { path, .. } | Sent::Queued { path } = *s {
                assert!((path as u64) < paths.max(1), "path {path} of {paths}");
            }
        }
        assert!(
            self.rto_at.is_some() || (queued == 0 && self.in_flight() == 0) || (receiver_driven && self.has_heard()),
            "unacknowledged packets without an RTO"
        );
        self.paths.check_invariants();
    }
}

impl Ndp {
    /// Sends one packet: the lowest queued retransmission, else new data. Returns false if there
    /// was nothing to send.
    pub(super) fn send_one(&mut self, ctx: &mut Ctx, slot: u32, syn: bool) -> bool {
        let c = &mut self.conns[slot];
        let Some((seq, last_path)) = c.tx.take_next(c.layout.packets()) else { return false };
        self.emit(ctx, slot, seq, last_path, syn);
        true
    }

    /// Sends packet `seq` (a retransmission if it has a last path) on the next path.
    pub(super) fn emit(&mut self, ctx: &mut Ctx, slot: u32, seq: u64, last_path: Option<u16>, syn: bool) {
        let c = &mut self.conns[slot];
        let path = c.tx.paths.next(&mut self.rng, self.cfg.path_penalty, last_path);
        let mut p = Packet::new(PacketKind::Data, c.id, c.src, c.dst, c.layout.wire_bytes(seq));
        p.payload = c.layout.payload(seq);
        p.seq = seq;
        p.ts = ctx.now();
        p.aux = path;
        p.prio = 1;
        p.lb = self.cfg.lb;
        p.path = path;
        if self.cfg.phost {
            // The token this packet answers; the first window's packets are tokens 0..IW.
            p.ack = if syn { seq } else { self.token_stamp };
        }
        if syn {
            p.flags |= flags::SYN;
        }
        if c.layout.is_last(seq) {
            p.flags |= flags::LAST;
        }
        if last_path.is_some() {
            p.flags |= flags::RETX;
            self.counters.retransmitted += 1;
        }
        c.tx.mark_sent(seq, ctx.now(), path as u16);
        self.counters.data_sent += 1;
        // New packets go in order (`take_next`): the last one's first transmission is the flow's
        // `Sent` milestone; retransmissions (pHost's included) have a last path.
        let first_last = last_path.is_none() && c.layout.is_last(seq);
        let id = c.id;
        ctx.send(p);
        if first_last {
            ctx.sent(id);
        }
        self.arm_rto(ctx, slot);
    }

    /// Sender: an ACK or NACK.
    pub(super) fn on_feedback(&mut self, ctx: &mut Ctx, slot: u32, pkt: &Packet) {
        let penalty = self.cfg.path_penalty;
        let c = &mut self.conns[slot];
        // Feedback for a packet not out (ACKed, queued, never sent) is a duplicate or a stray.
        let Some(path) = c.tx.outstanding_path(pkt.seq) else { return };
        c.tx.pull_window += 1;
        c.tx.first_window_left -= 1;
        c.tx.heard(ctx.now());
        if pkt.kind == PacketKind::Ack {
            let rto_before = c.tx.rtt.rto_ps();
            c.tx.rtt.on_sample(ctx.now().saturating_sub(pkt.ts));
            c.tx.mark_acked(pkt.seq);
            // The deadline follows the RTO down (htsim recomputes it from the oldest packet out on
            // every ACK): without this the first timeout waits the initial RTO, 20 ms, long after
            // samples brought the RTO to its floor.
            let fall = rto_before.saturating_sub(c.tx.rtt.rto_ps());
            if let Some(at) = c.tx.rto_at.filter(|_| fall > 0) {
                let at = at.saturating_sub(fall).max(ctx.now());
                c.tx.rto_at = Some(at);
                ctx.set_timer(at, NdpTimer::Rto, c.id);
            }
            c.tx.record(path, Feedback::Ack, penalty);
            if c.tx.acked == c.layout.packets() {
                self.retire(slot);
            }
        } else {
            self.counters.nacks += 1;
            c.tx.requeue(pkt.seq, path);
            c.tx.record(path, Feedback::Nack, penalty);
            self.arm_rto(ctx, slot);
        }
    }

    /// The sender has every ACK: the flow is no longer found by id, and its slot is freed once no
    /// pull queue refers to it.
    fn retire(&mut self, slot: u32) {
        let id = self.conns[slot].id;
        self.conns.release(id);
        let c = &mut self.conns[slot];
        c.tx.release();
        c.rx.done = true;
        c.rx.pending_pulls = 0;
        c.retired = true;
        // A slot still in a pull queue is freed when the pacer pops it.
        if !c.rx.queued_for_pull {
            self.conns.recycle(slot);
        }
    }

    /// Sender: a PULL (or an ACK/NACK carrying one) with cumulative number `pull_no`. Each pull
    /// answers one arrival at the receiver, so a number beyond the packets sent is a stray.
    pub(super) fn on_pull(&mut self, ctx: &mut Ctx, slot: u32, pull_no: u64) {
        let tx = &mut self.conns[slot].tx;
        if pull_no == 0 || pull_no > tx.transmissions {
            return;
        }
        tx.pull_window -= 1;
        tx.last_heard = ctx.now();
        let n = pull_no.saturating_sub(tx.last_pull);
        tx.last_pull = tx.last_pull.max(pull_no);
        for i in 0..n {
            if !self.send_one(ctx, slot, false) {
                self.counters.wasted_pulls += n - i; // nothing left to send for the rest either
                break;
            }
        }
    }

    /// Sender: a header came back from a full switch queue. It is resent at once only if no more
    /// pulls are expected or the path looks bad; otherwise it waits for a pull.
    pub(super) fn on_bounce(&mut self, ctx: &mut Ctx, slot: u32, pkt: &Packet) {
        self.counters.bounces += 1;
        let penalty = self.cfg.path_penalty;
        let tx = &mut self.conns[slot].tx;
        let Some(path) = tx.outstanding_path(pkt.seq) else { return };
        tx.first_window_left -= 1;
        tx.last_heard = ctx.now();
        tx.requeue(pkt.seq, path);
        tx.record(path, Feedback::Bounce, penalty);
        let no_more_pulls = tx.pull_window <= 0 && tx.first_window_left <= 0;
        let resend = no_more_pulls || tx.history.looks_like_bad_path();
        self.arm_rto(ctx, slot);
        if self.cfg.return_to_sender_resend && resend {
            self.counters.bounce_resends += 1;
            self.send_one(ctx, slot, false);
        }
    }

    fn arm_rto(&mut self, ctx: &mut Ctx, slot: u32) {
        let c = &mut self.conns[slot];
        if c.tx.rto_at.is_none() {
            let at = ctx.now() + c.tx.rtt.rto_ps();
            c.tx.rto_at = Some(at);
            ctx.set_timer(at, NdpTimer::Rto, c.id);
        }
    }

    /// Resends packets outstanding for longer than the RTO (true losses), then re-arms. Queued
    /// retransmissions wait for pulls (htsim never times them out); only when nothing is out and
    /// neither a pull nor feedback has come for [`Sender::orphan_wait`] are they presumed orphaned
    /// (their pulls were lost) and one is sent.
    pub(super) fn on_rto(&mut self, ctx: &mut Ctx, id: u32) {
        let Some(slot) = self.conns.slot(id) else { return }; // a finished flow's stale timer
        let now = ctx.now();
        let tx = &mut self.conns[slot].tx;
        if tx.rto_at != Some(now) {
            return; // superseded by an earlier deadline
        }
        tx.rto_at = None;
        if self.cfg.phost {
            return self.phost_rto(ctx, slot);
        }
        let (expired, oldest) = tx.expire(now, self.cfg.path_penalty);
        let queued = !tx.rtx.is_empty();
        let orphaned = expired == 0 && oldest.is_none() && queued && tx.last_heard + tx.orphan_wait() <= now;
        let resends = if orphaned { 1 } else { expired };
        if resends > 0 {
            self.counters.timeouts += 1;
            tx.rtt.back_off(from_us(MAX_RTO_US));
            for _ in 0..resends {
                self.send_one(ctx, slot, false);
            }
        }
        let c = &mut self.conns[slot];
        if c.tx.rto_at.is_none() {
            let rto = c.tx.rtt.rto_ps();
            let at = match oldest {
                Some(o) => Some((o + rto).max(now)),
                None => (!c.tx.rtx.is_empty()).then(|| (c.tx.last_heard + c.tx.orphan_wait()).max(now + 1)),
            };
            if let Some(at) = at {
                c.tx.rto_at = Some(at);
                ctx.set_timer(at, NdpTimer::Rto, c.id);
            }
        }
    }
}
