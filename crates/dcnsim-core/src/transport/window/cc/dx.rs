//! DX's window control (Lee, Park, Jang, Moon and Han, "Accurate Latency-based Congestion
//! Feedback for Datacenters", USENIX ATC 2015; "DX: Latency-Based Congestion Control for
//! Datacenters", IEEE/ACM ToN 25(1), 2017), once per round trip (a window of data):
//!
//! ```text
//!   Q = mean over the round's ACKs of (RTT - base RTT)      base RTT = the smallest RTT seen
//!   cwnd <- cwnd + 1 MSS            if Q <= target (DX: Q = 0)
//!   cwnd <- cwnd (1 - Q / V)        otherwise, V = the round's mean RTT
//! ```
//!
//! V: the paper's decrease drains the measured queue in one round trip when every flow applies it:
//! N flows of window W hold N W = C x RTT bytes, and cutting each by W Q / RTT removes C x Q, the
//! bytes the queue holds; so V is the RTT (base + Q), and the cut sets the window to W x base / RTT.
//! The target is 0 in DX (increase only when no queuing is measured); a positive
//! `target_queuing_delay_us` tolerates that much.
//!
//! The ACKs of a round answer the data sent in the round before it, so the round after a cut
//! measures the queue of the window before the cut: it does not cut again (at most one cut per
//! window of data, as DCTCP's CWR; without this the same queue is answered twice or three times
//! and the window falls below the BDP).
//!
//! Slow start (Reno's, until the first round with queuing, which sets ssthresh) and loss handling
//! (NewReno fast recovery, timeouts) are Reno's window's.

use super::reno::RenoWindow;
use super::{AckInfo, CongestionControl, LossInfo, WindowSetup};
use crate::time::Time;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DxParams {
    /// Queuing delay at or below which the window grows, ps (DX: 0).
    pub target_ps: f64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DxControl {
    pub w: RenoWindow,
    target_ps: f64,
    mss: f64,
    base_rtt: Option<Time>,
    /// The round ends when snd_una passes this.
    round_end: u64,
    queuing_sum_ps: f64,
    rtt_sum_ps: f64,
    samples: u64,
    /// The last round's Q, ps (for traces).
    last_queuing_ps: f64,
    /// The previous round cut the window: this round's ACKs answer data sent before that cut.
    after_cut: bool,
}

impl DxControl {
    pub fn new(p: &DxParams, w: &WindowSetup) -> DxControl {
        DxControl {
            w: RenoWindow::new(w),
            target_ps: p.target_ps,
            mss: w.mss_bytes as f64,
            base_rtt: None,
            round_end: 0,
            queuing_sum_ps: 0.0,
            rtt_sum_ps: 0.0,
            samples: 0,
            last_queuing_ps: 0.0,
            after_cut: false,
        }
    }

    pub fn base_rtt(&self) -> Option<Time> {
        self.base_rtt
    }

    /// The end of a round: the window update. Returns true for a decrease.
    fn end_round(&mut self, snd_nxt: u64) -> bool {
        let n = self.samples as f64;
        let (q, v) = (self.queuing_sum_ps / n, self.rtt_sum_ps / n);
        (self.queuing_sum_ps, self.rtt_sum_ps, self.samples) = (0.0, 0.0, 0);
        self.round_end = snd_nxt;
        self.last_queuing_ps = q;
        debug_assert!(q >= 0.0 && v >= q);
        if q > self.target_ps {
            if std::mem::take(&mut self.after_cut) || v <= 0.0 {
                return false; // the queue of the window before the last cut: already answered
            }
            self.w.scale_down(1.0 - q / v);
            self.after_cut = true;
            return true;
        }
        self.after_cut = false;
        if self.w.cwnd() >= self.w.ssthresh() {
            self.w.grow_by(self.mss);
        }
        false
    }
}

impl CongestionControl for DxControl {
    fn on_ack(&mut self, ack: &AckInfo) -> bool {
        let rtt = ack.rtt_sample_ps;
        let base = *self.base_rtt.get_or_insert(rtt);
        let base = base.min(rtt);
        self.base_rtt = Some(base);
        self.queuing_sum_ps += (rtt - base) as f64;
        self.rtt_sum_ps += rtt as f64;
        self.samples += 1;
        if self.w.recovery_ack(ack) {
            return false;
        }
        if self.w.cwnd() < self.w.ssthresh() {
            self.w.grow(ack.acked_bytes); // slow start, until the first round with queuing
        }
        let cut = ack.snd_una >= self.round_end && self.end_round(ack.snd_nxt);
        self.w.cap();
        cut
    }
    fn on_dupack(&mut self) {
        self.w.inflate();
    }
    fn on_fast_retransmit(&mut self, loss: &LossInfo) {
        self.w.enter_recovery(loss);
    }
    fn on_rto(&mut self, loss: &LossInfo) {
        self.w.on_rto(loss);
    }
    fn window_bytes(&self) -> f64 {
        self.w.cwnd()
    }
    fn set_window(&mut self, _now: Time, bytes: f64) {
        self.w.set(bytes);
    }
    fn state(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("cwnd_bytes", self.w.cwnd()));
        out.push(("queuing_delay_us", self.last_queuing_ps / 1e6));
        out.push(("base_rtt_us", self.base_rtt.map_or(0.0, |b| b as f64 / 1e6)));
    }
    /// The round's sums hold one sample per ACK, each RTT at least the base RTT.
    fn check_invariants(&self) {
        self.w.check_invariants();
        assert!(self.queuing_sum_ps >= 0.0 && self.rtt_sum_ps >= self.queuing_sum_ps, "queuing delay over the RTT");
        assert!(self.samples > 0 || self.rtt_sum_ps == 0.0, "RTT sum without samples");
    }
}

#[cfg(test)]
mod tests {
    use super::super::AckPhase;
    use super::*;

    const MSS: u64 = 1000;
    const US: Time = 1_000_000;

    fn control(target_ps: f64, iw: u64, slow_start: bool) -> DxControl {
        let w = super::super::reno::tests::setup(iw, slow_start, None);
        DxControl::new(&DxParams { target_ps }, &w)
    }

    fn ack(rtt: Time, una: u64, nxt: u64) -> AckInfo {
        AckInfo {
            now: 0,
            acked_bytes: MSS,
            ece: false,
            rtt_sample_ps: rtt,
            snd_una: una,
            snd_nxt: nxt,
            snd_max: nxt,
            phase: AckPhase::Open,
        }
    }

    #[test]
    fn one_mss_per_round_without_queuing_and_a_drain_cut_with_it() {
        let mut c = control(0.0, 10, false);
        // Round 1 ends at the first ACK (round_end 0): no queuing, +1 MSS; the round runs to 21000.
        assert!(!c.on_ack(&ack(10 * US, 1000, 21_000)));
        assert_eq!(c.window_bytes(), 11_000.0);
        for k in 2..=20 {
            assert!(!c.on_ack(&ack(10 * US, k * 1000, 21_000)));
        }
        assert_eq!(c.window_bytes(), 11_000.0, "one increase per round, not per ACK");
        // Two ACKs with queuing (4 and 2 us); the second ends the round. Over its 21 ACKs (19 at
        // 10 us), Q / V = (6 / 21) / (216 / 21) = 6 / 216.
        assert!(!c.on_ack(&ack(14 * US, 20_500, 40_000)));
        assert!(c.on_ack(&ack(12 * US, 21_000, 40_000)));
        let expect = 11_000.0 * (1.0 - 6.0 / 216.0);
        assert!((c.window_bytes() - expect).abs() < 1e-6, "{} vs {expect}", c.window_bytes());
        assert_eq!(c.base_rtt(), Some(10 * US));
    }

    #[test]
    fn a_target_tolerates_queuing_and_slow_start_ends_at_the_first_queue() {
        let mut c = control(5e6, 10, false);
        assert!(!c.on_ack(&ack(10 * US, 1000, 1000)));
        assert!(!c.on_ack(&ack(14 * US, 2000, 2000)), "4 us of queuing is under the 5 us target");
        assert_eq!(c.window_bytes(), 12_000.0);
        let mut c = control(0.0, 2, true);
        c.on_ack(&ack(10 * US, 1000, 100_000));
        c.on_ack(&ack(10 * US, 2000, 100_000));
        assert_eq!(c.window_bytes(), 4000.0, "slow start doubles");
        assert!(c.on_ack(&ack(20 * US, 100_000, 200_000)));
        assert_eq!(c.w.ssthresh(), c.window_bytes(), "the first cut ends slow start");
    }
}
