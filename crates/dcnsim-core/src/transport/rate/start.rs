//! The start layer in the rate sender: per-QP state of `fast_start` ([`super::fast_start`]) and
//! the sender's hooks into it (first send, ACK, timeout, CC-postcard), with its counters. A run
//! with `fast_start = "line_rate"` takes none of these branches and reports no counters of them.

use super::cc::QpRate;
use super::ext::RateExt;
use super::fast_start::{FastStart, Pbfs, PbfsFlow};
use super::{Qp, RateControl, RateProtocol, RateTransport};
use crate::net::packet::{HostId, Packet};
use crate::net::pipeline::postcard::{PbtMark, Postcard};
use crate::time::{Rate, Time};
use crate::transport::Ctx;

/// How far a QP is in its start.
#[derive(Clone, Debug)]
pub enum Start {
    /// The controller alone sets the rate.
    Plain,
    /// Slow start at this rate, until the hand-over.
    Slow(QpRate),
    /// A PB-FS flow (eligible when it started).
    Pbfs(PbfsFlow),
}

/// Names of the postcard-distance counters (1 = the sender's ToR).
const DISTANCE: [&str; 6] = [
    "postcards_from_distance_1",
    "postcards_from_distance_2",
    "postcards_from_distance_3",
    "postcards_from_distance_4",
    "postcards_from_distance_5",
    "postcards_from_distance_6_plus",
];

#[derive(Clone, Copy, Debug, Default)]
pub struct StartCounters {
    pub pbfs_eligible_flows: u64,
    pub pbt_packets_sent: u64,
    pub postcards_received: u64,
    pub postcards_ignored: u64,
    pub pbfs_rate_reductions: u64,
    pub flows_with_postcards: u64,
    pub max_postcards_per_flow: u64,
    pub by_distance: [u64; 6],
    pub slow_start_handovers: u64,
}

impl StartCounters {
    pub fn report(&self, mode: &FastStart, out: &mut Vec<(&'static str, u64)>) {
        match mode {
            FastStart::LineRate => {}
            FastStart::SlowStart { .. } => out.push(("slow_start_handovers", self.slow_start_handovers)),
            FastStart::Pbfs(_) => {
                out.extend([
                    ("pbfs_eligible_flows", self.pbfs_eligible_flows),
                    ("pbt_packets_sent", self.pbt_packets_sent),
                    ("postcards_received", self.postcards_received),
                    ("postcards_ignored", self.postcards_ignored),
                    ("pbfs_rate_reductions", self.pbfs_rate_reductions),
                    ("flows_with_postcards", self.flows_with_postcards),
                    ("max_postcards_per_flow", self.max_postcards_per_flow),
                ]);
                out.extend(DISTANCE.iter().zip(self.by_distance).map(|(&k, v)| (k, v)));
            }
        }
    }
}

impl<C: RateControl> Qp<C> {
    /// The rate the QP paces at: the slow-start rate while it lasts, else the controller's.
    #[inline]
    pub(super) fn rate(&self) -> Rate {
        match &self.start {
            Start::Slow(r) => r.rate(),
            _ => self.cc.rate(),
        }
    }

    /// Slow start ends: the controller continues from the rate reached.
    fn hand_over(&mut self, now: Time, counters: &mut StartCounters) {
        if let Start::Slow(r) = self.start {
            self.cc.set_rate(now, r.bps());
            self.start = Start::Plain;
            counters.slow_start_handovers += 1;
        }
    }
}

impl<P: RateProtocol, E: RateExt<P::Params>> RateTransport<P, E> {
    /// The start of a new QP of `size` bytes at line rate `line`.
    pub(super) fn initial_start(&mut self, size: u64, line: Rate) -> Start {
        match self.cfg.sender.fast_start {
            FastStart::LineRate => Start::Plain,
            FastStart::SlowStart { initial_bps } if initial_bps < line.bps() => Start::Slow(QpRate::new(initial_bps)),
            FastStart::SlowStart { .. } => Start::Plain,
            FastStart::Pbfs(_) => {
                let pbfs = self.pbfs.expect("resolved with the mode");
                if pbfs.eligible(size, line) {
                    self.start_counters.pbfs_eligible_flows += 1;
                    Start::Pbfs(PbfsFlow::new())
                } else {
                    Start::Plain
                }
            }
        }
    }

    /// Marks a data packet PBT-triggering (the Delta-th, 2 Delta-th, ... of a marking QP's first sends).
    #[inline]
    pub(super) fn mark_pbt(&mut self, slot: u32, p: &mut Packet, retx: bool) {
        let Start::Pbfs(f) = &self.conns[slot].start else { return };
        let delta = self.pbfs.map_or(u64::MAX, |b| b.delta);
        if f.marking && !retx && (p.seq + 1).is_multiple_of(delta) {
            p.stage.set_pbt(PbtMark::TRIGGERING);
            self.start_counters.pbt_packets_sent += 1;
        }
    }

    /// Before the controller sees an ACK or NACK: marking stops; a congestion signal ends slow start.
    pub(super) fn before_feedback(&mut self, slot: u32, now: Time, congestion: bool) {
        let q = &mut self.conns[slot];
        match &mut q.start {
            Start::Pbfs(f) => f.marking = false,
            Start::Slow(_) if congestion => q.hand_over(now, &mut self.start_counters),
            _ => {}
        }
    }

    /// After the controller saw it: the PBT interval ends if the controller changed the rate
    /// (from `before`); slow start grows by the bytes acknowledged per DC_RTT.
    pub(super) fn after_feedback(&mut self, slot: u32, now: Time, before: Rate, acked_bytes: u64, line: Rate) {
        let dc_rtt = self.base_rtt.max(1);
        let q = &mut self.conns[slot];
        match &mut q.start {
            Start::Pbfs(f) if !f.ignore && q.cc.rate() != before => f.ignore = true,
            Start::Slow(r) => {
                let add = (acked_bytes as u128 * 8 * 1_000_000_000_000 / dc_rtt as u128) as u64;
                let bps = r.bps().saturating_add(add).min(line.bps());
                r.set(bps);
                if bps >= line.bps() {
                    q.hand_over(now, &mut self.start_counters);
                }
            }
            _ => {}
        }
    }

    /// A retransmission timeout ends slow start.
    pub(super) fn on_start_timeout(&mut self, slot: u32, now: Time) {
        self.conns[slot].hand_over(now, &mut self.start_counters);
    }

    /// A CC-postcard reached `host`: Algorithm 1 if it is its flow's sender. Returns whether a
    /// live QP of `host` took it (the caller then lets the NIC send).
    pub(super) fn on_postcard(&mut self, ctx: &mut Ctx, host: HostId, pkt: &Packet) -> bool {
        let card = Postcard::read(pkt);
        let c = &mut self.start_counters;
        c.postcards_received += 1;
        c.by_distance[(card.distance.max(1) as usize - 1).min(5)] += 1;
        let slot = self.conns.slot(pkt.flow).filter(|&s| self.conns[s].src == host);
        let (Some(pbfs), Some(slot)) = (self.pbfs, slot) else {
            c.postcards_ignored += 1;
            return false;
        };
        let line = ctx.nic_rate(self.conns[slot].src).bps();
        let q = &mut self.conns[slot];
        let Start::Pbfs(f) = &mut q.start else {
            c.postcards_ignored += 1;
            return true;
        };
        if f.ignore {
            c.postcards_ignored += 1;
            return true;
        }
        let factor = Pbfs::factor(&pbfs, &card);
        let rate = f.on_postcard(card.switch, factor, line);
        let n = f.postcards as u64;
        c.flows_with_postcards += u64::from(n == 1);
        c.max_postcards_per_flow = c.max_postcards_per_flow.max(n);
        if let Some(bps) = rate {
            q.cc.take_pbfs_rate(ctx.now(), bps);
            c.pbfs_rate_reductions += 1;
            Self::arm_cc(ctx, q);
        }
        true
    }
}
