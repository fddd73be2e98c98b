//! HPCC's sender reaction (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019,
//! section 3.2, Algorithm 1), in the rate form the authors' ns-3 runs (`rdma-hw.cc`, CC_MODE 3:
//! `HandleAckHp`, `UpdateRateHp`, `FastReactHp`, with MULTI_RATE 0 and SAMPLE_FEEDBACK 0 as in
//! `run.py`). The protocol and its keys are in `transport/hpcc.rs`.
//!
//! Each ACK carries the INT records its data packet collected, one per switch egress it left
//! (dequeue time ts, bytes the port had sent txBytes, its queue qlen, its rate B). Per ACK:
//! - for each hop, against the previous record of the same hop: txRate = d(txBytes) / d(ts) and
//!   u = txRate / B + min(qlen, previous qlen) x C / (B W), C the NIC rate and W the window at
//!   line rate (the max BDP); the hop with the largest u is the bottleneck, tau its d(ts)
//! - U <- (U (T - tau) + u tau) / T, tau at most T (the base RTT); U starts at 1; k = U / eta
//! - if k >= 1 or the stage reached `max_stage`: rate = Rc / k + AI and stage 0 (multiplicative);
//!   else rate = Rc + AI and stage + 1 (additive); within [min, line]
//! - the rate applies at once (fast reaction, on every ACK); Rc and the stage are committed only
//!   by the first ACK past `snd_nxt` of the last commit (once per RTT), which records `snd_nxt`
//! - the very first ACK only records its INT and `snd_nxt`
//!
//! The window is W x rate / C (at least 1 byte): HPCC's W = rate x T.
//!
//! Where the reference would compute from a record that is not newer than the stored one (an ACK
//! overtaken by a later one, under spraying), that hop is skipped here: the reference's 24-bit
//! wrap-around arithmetic would read it as a huge interval.

use super::{divided, QpRate};
use crate::net::pipeline::stages::int::IntHop;
use crate::time::{Rate, Time};
use crate::transport::rate::{RateAck, RateControl};

/// The reference's INT header holds five hops.
pub const MAX_HOPS: usize = crate::net::pipeline::stages::int::INT_MAX_HOPS;

/// One hop's INT record (the fabric's: dequeue time, bytes sent before, queue bytes, port rate).
pub type HopRecord = IntHop;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HpccLaw {
    /// Target utilization.
    pub eta: f64,
    pub max_stage: u32,
    pub ai_bps: u64,
    /// C: the NIC rate, also the highest rate.
    pub line_bps: u64,
    pub min_bps: u64,
    /// T.
    pub base_rtt: Time,
    /// W: the window at line rate (C x T).
    pub window_bytes: u64,
    /// React on every ACK (the reference's FAST_REACT 1); false = once per RTT only.
    pub fast_react: bool,
    /// Bound the bytes in flight by W x rate / C.
    pub use_window: bool,
}

#[derive(Clone, Debug)]
pub struct Hpcc {
    law: HpccLaw,
    rate: QpRate,
    /// Rc: the reference rate, committed once per RTT.
    reference_bps: u64,
    stage: u32,
    u: f64,
    /// Commits wait for an ACK past this; `None` before the first ACK.
    update_after: Option<u64>,
    prev: [HopRecord; MAX_HOPS],
}

impl Hpcc {
    pub fn new(law: HpccLaw) -> Hpcc {
        debug_assert!(law.base_rtt > 0 && law.window_bytes > 0 && law.eta > 0.0);
        Hpcc {
            law,
            rate: QpRate::new(law.line_bps),
            reference_bps: law.line_bps,
            stage: 0,
            u: 1.0,
            update_after: None,
            prev: [HopRecord::default(); MAX_HOPS],
        }
    }

    pub fn rate_bps(&self) -> u64 {
        self.rate.bps()
    }

    pub fn reference_bps(&self) -> u64 {
        self.reference_bps
    }

    pub fn utilization(&self) -> f64 {
        self.u
    }

    pub fn stage(&self) -> u32 {
        self.stage
    }

    /// An ACK (or NACK) with the INT records of the packet it answers.
    pub fn on_feedback(&mut self, ack: &RateAck<'_>, hops: &[HopRecord]) {
        let hops = &hops[..hops.len().min(MAX_HOPS)];
        let Some(after) = self.update_after else {
            self.prev[..hops.len()].copy_from_slice(hops);
            self.update_after = Some(ack.sent_total_bytes);
            return;
        };
        let commit = ack.acked_total_bytes > after;
        if !commit && !self.law.fast_react {
            return;
        }
        self.update(hops, commit);
        if commit && ack.sent_total_bytes > after {
            self.update_after = Some(ack.sent_total_bytes);
        }
    }

    /// The bottleneck hop's (u, tau) of these records, against the stored ones; stores them.
    fn bottleneck(&mut self, hops: &[HopRecord]) -> Option<(f64, Time)> {
        let (c, w) = (self.law.line_bps as f64, self.law.window_bytes as f64);
        let mut max: Option<(f64, Time)> = None;
        for (now, prev) in hops.iter().zip(self.prev.iter_mut()) {
            if now.ts <= prev.ts || now.tx_bytes < prev.tx_bytes {
                continue; // not newer than what this hop last reported
            }
            let tau = now.ts - prev.ts;
            let b = now.rate_bps as f64;
            // txRate / B, with txRate = bits / (tau ps x 1e-12)
            let tx_share = (now.tx_bytes - prev.tx_bytes) as f64 * 8.0 * 1e12 / (tau as f64 * b);
            let u = tx_share + now.qlen_bytes.min(prev.qlen_bytes) as f64 * c / b / w;
            if max.is_none_or(|(m, _)| u > m) {
                max = Some((u, tau));
            }
            *prev = *now;
        }
        max
    }

    fn update(&mut self, hops: &[HopRecord], commit: bool) {
        let Some((u, tau)) = self.bottleneck(hops) else { return };
        let l = self.law;
        let t = l.base_rtt as f64;
        let tau = tau.min(l.base_rtt) as f64;
        self.u = (self.u * (t - tau) + u * tau) / t;
        let k = self.u / l.eta;
        let (rate, stage) = if k >= 1.0 || self.stage >= l.max_stage {
            // An idle hop (U = 0) makes Rc / k infinite: `divided` saturates, the clamp caps it.
            (divided(self.reference_bps, k).saturating_add(l.ai_bps), 0)
        } else {
            (self.reference_bps + l.ai_bps, self.stage + 1)
        };
        let rate = rate.clamp(l.min_bps, l.line_bps);
        self.rate.set(rate);
        if commit {
            self.reference_bps = rate;
            self.stage = stage;
        }
    }
}

impl RateControl for Hpcc {
    fn on_ack(&mut self, ack: &RateAck<'_>) {
        self.on_feedback(ack, ack.int);
    }

    fn rate(&self) -> Rate {
        self.rate.rate()
    }

    fn set_rate(&mut self, _now: Time, bps: u64) {
        let r = bps.clamp(self.law.min_bps, self.law.line_bps);
        self.rate.set(r);
        self.reference_bps = r;
    }

    fn window_bytes(&self) -> Option<u64> {
        let w = self.law.window_bytes as u128 * self.rate.bps() as u128 / self.law.line_bps as u128;
        self.law.use_window.then_some((w as u64).max(1))
    }

    fn state(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("rate_gbps", self.rate.bps() as f64 / 1e9));
        out.push(("reference_rate_gbps", self.reference_bps as f64 / 1e9));
        out.push(("utilization", self.u));
        out.push(("increase_stage", self.stage as f64));
        if let Some(w) = self.window_bytes() {
            out.push(("window_bytes", w as f64));
        }
    }
    /// Rate and reference rate are clamped to [min, line]; the stage counts up to maxStage; U is
    /// an EWMA of non-negative utilizations.
    fn check_invariants(&self) {
        let l = &self.law;
        for bps in [self.rate.bps(), self.reference_bps] {
            assert!((l.min_bps..=l.line_bps).contains(&bps), "rate {bps} b/s outside [min, line]");
        }
        assert!(self.stage <= l.max_stage, "stage {} over maxStage {}", self.stage, l.max_stage);
        assert!(self.u.is_finite() && self.u >= 0.0, "U {}", self.u);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::from_us;

    const LINE: u64 = 100_000_000_000;
    const AI: u64 = 40_000_000;
    /// T = 10 us, W = C T = 125 KB.
    const W: u64 = 125_000;

    /// The reference's run.py "hp" at 100 Gb/s (maxStage 0), or the paper's maxStage 5.
    fn hpcc(max_stage: u32) -> Hpcc {
        Hpcc::new(HpccLaw {
            eta: 0.95,
            max_stage,
            ai_bps: AI,
            line_bps: LINE,
            min_bps: 1_000_000_000,
            base_rtt: from_us(10.0),
            window_bytes: W,
            fast_react: true,
            use_window: true,
        })
    }

    fn ack(acked: u64, sent: u64) -> RateAck<'static> {
        RateAck {
            now: 0,
            nack: false,
            acked_bytes: 1000,
            ece: false,
            rtt_sample_ps: 0,
            acked_total_bytes: acked,
            sent_total_bytes: sent,
            int: &[],
            rate_kbps: 0,
            aux: 0,
        }
    }

    /// A 100 Gb/s hop's record at `ts_us` having sent `tx` bytes, with `q` bytes queued.
    fn hop(ts_us: f64, tx: u64, q: u64) -> HopRecord {
        HopRecord { ts: from_us(ts_us), tx_bytes: tx, qlen_bytes: q, rate_bps: LINE }
    }

    #[test]
    fn utilization_and_rate_per_ack_with_a_reference_rate_per_rtt() {
        let mut h = hpcc(0);
        // First ACK: recorded only (snd_nxt 10000).
        h.on_feedback(&ack(1000, 10_000), &[hop(0.0, 0, 0)]);
        assert_eq!((h.rate_bps(), h.utilization()), (LINE, 1.0));
        // 1 us later the hop sent 12500 B (line rate: txRate / B = 1) with 25 KB queued, but the
        // queue term takes the smaller of the two queue lengths (0): u = 1, tau = 1 us,
        // U = (1 x 9 + 1 x 1) / 10 = 1, k = 1 / 0.95: rate = 100G / k + AI, not committed.
        h.on_feedback(&ack(2000, 11_000), &[hop(1.0, 12_500, 25_000)]);
        assert_eq!(h.utilization(), 1.0);
        assert_eq!(h.rate_bps(), (LINE as f64 / (1.0 / 0.95)) as u64 + AI);
        assert_eq!(h.reference_bps(), LINE, "a fast reaction does not move Rc");
        assert_eq!(h.window_bytes(), Some((W as u128 * h.rate_bps() as u128 / LINE as u128) as u64));
        // Past 10000: a full update. u = 1 + 25000 x C / (B W) = 1.2; U = (1 x 9 + 1.2 x 1) / 10.
        h.on_feedback(&ack(11_000, 12_000), &[hop(2.0, 25_000, 25_000)]);
        let u = (1.0 * (10e6 - 1e6) + 1.2 * 1e6) / 10e6;
        assert!((h.utilization() - u).abs() < 1e-12, "U {} vs {u}", h.utilization());
        let rate = (LINE as f64 / (h.utilization() / 0.95)) as u64 + AI;
        assert_eq!((h.rate_bps(), h.reference_bps()), (rate, rate));
        // The next commit waits for an ACK past 12000; a fast reaction starts from the new Rc.
        let before = h.utilization();
        h.on_feedback(&ack(12_000, 13_000), &[hop(3.0, 37_500, 0)]);
        let u3 = (before * (10e6 - 1e6) + 1.0 * 1e6) / 10e6;
        assert_eq!(h.utilization(), u3);
        assert_eq!((h.rate_bps(), h.reference_bps()), ((rate as f64 / (u3 / 0.95)) as u64 + AI, rate));
    }

    #[test]
    fn additive_increase_below_eta_until_max_stage_then_multiplicative() {
        let mut h = hpcc(5);
        h.on_feedback(&ack(1000, 2000), &[hop(0.0, 0, 125_000)]);
        // 10 us (= T) at line rate with 125 KB queued at both ends: u = 1 + 1 = 2 = U.
        h.on_feedback(&ack(3000, 4000), &[hop(10.0, 125_000, 125_000)]);
        let mut rate = (LINE as f64 / (2.0 / 0.95)) as u64 + AI;
        assert_eq!((h.utilization(), h.rate_bps(), h.stage()), (2.0, rate, 0));
        // Then the hop runs at half its rate with no queue: U = u = 0.5, k = 0.5 / 0.95 < 1.
        let (mut seq, mut tx) = (3000, 125_000);
        for i in 1..=7u32 {
            seq += 2000;
            tx += 62_500;
            h.on_feedback(&ack(seq, seq + 1000), &[hop(10.0 + 10.0 * i as f64, tx, 0)]);
            assert_eq!(h.utilization(), 0.5);
            // Stages 0..4 add AI; stage 5 reaches max_stage: multiplicative, then additive again.
            rate = if i == 6 { (rate as f64 / (0.5 / 0.95)) as u64 + AI } else { rate + AI };
            assert_eq!((h.rate_bps(), h.reference_bps()), (rate, rate), "update {i}");
            assert_eq!(h.stage(), if i <= 5 { i } else { i - 6 }, "update {i}");
        }
        // With maxStage 0 (the reference's run.py) every update is multiplicative.
        let mut h = hpcc(0);
        h.on_feedback(&ack(1000, 2000), &[hop(0.0, 0, 0)]);
        h.on_feedback(&ack(3000, 4000), &[hop(10.0, 31_250, 0)]);
        assert_eq!((h.rate_bps(), h.stage()), (LINE, 0), "U = 0.25: 100G / (0.25 / 0.95) + AI, capped");
    }

    #[test]
    fn the_most_utilized_hop_sets_u_and_tau() {
        let mut h = hpcc(0);
        let fast = |ts, tx, q| HopRecord { ts: from_us(ts), tx_bytes: tx, qlen_bytes: q, rate_bps: 4 * LINE };
        h.on_feedback(&ack(1000, 2000), &[hop(0.0, 0, 0), fast(0.5, 0, 50_000)]);
        // Hop 0: 100 Gb/s at 80% over 2 us: u = 0.8. Hop 1: 400 Gb/s at 25% over 4 us with 50 KB
        // queued at both ends: u = 0.25 + 50000 x C / (4C W) = 0.35. Hop 0 wins, tau = 2 us.
        h.on_feedback(&ack(3000, 4000), &[hop(2.0, 20_000, 0), fast(4.5, 50_000, 50_000)]);
        let u = (1.0 * 8.0 + 0.8 * 2.0) / 10.0;
        assert!((h.utilization() - u).abs() < 1e-12, "{}", h.utilization());
        let rc = (LINE as f64 / (h.utilization() / 0.95)) as u64 + AI;
        assert_eq!(h.reference_bps(), rc);
        // Hop 1 now runs at line rate over 10 us: u = 1 + 0.1 = 1.1 beats hop 0's 0.8, and its tau
        // (10 us = T) replaces U entirely; hop 0's 1 us would have given (0.96 x 9 + 1.1) / 10.
        h.on_feedback(&ack(5000, 6000), &[hop(3.0, 30_000, 0), fast(14.5, 550_000, 1_000_000)]);
        assert!((h.utilization() - 1.1).abs() < 1e-12, "{}", h.utilization());
        assert_eq!(h.rate_bps(), (rc as f64 / (h.utilization() / 0.95)) as u64 + AI);
    }

    #[test]
    fn an_idle_bottleneck_sends_the_rate_to_line_rate() {
        // U = 0 (no bytes sent and no queue between two records) with maxStage 0: Rc / (U / eta)
        // is infinite, so the rate is the line's; it once overflowed `+ AI` (a panic in debug
        // builds, a wrap to a rate near zero in release).
        let mut h = hpcc(0);
        h.on_feedback(&ack(1000, 2000), &[hop(0.0, 0, 125_000)]);
        h.on_feedback(&ack(3000, 4000), &[hop(10.0, 125_000, 125_000)]);
        assert!(h.rate_bps() < LINE);
        h.on_feedback(&ack(5000, 6000), &[hop(20.0, 125_000, 0)]);
        assert_eq!((h.utilization(), h.rate_bps(), h.reference_bps()), (0.0, LINE, LINE));
    }

    #[test]
    fn stale_records_are_skipped_and_the_rate_stays_within_bounds() {
        let mut h = hpcc(0);
        h.on_feedback(&ack(1000, 2000), &[hop(5.0, 50_000, 0)]);
        // An older record (an overtaken ACK): nothing changes.
        h.on_feedback(&ack(1500, 2000), &[hop(4.0, 40_000, 0)]);
        assert_eq!((h.rate_bps(), h.utilization()), (LINE, 1.0));
        // A huge standing queue: the rate falls to the minimum, never below.
        let mut tx = 50_000;
        for i in 1..=50u64 {
            tx += 125_000;
            h.on_feedback(&ack(2000 + 2000 * i, 3000 + 2000 * i), &[hop(5.0 + 10.0 * i as f64, tx, 10_000_000)]);
        }
        assert_eq!(h.rate_bps(), 1_000_000_000);
        assert_eq!(h.window_bytes(), Some(W / 100));
    }
}
