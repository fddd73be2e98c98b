//! The Linked Increases Algorithm (RFC 6356 section 3; Raiciu, Wischik, Handley, NSDI'11): each
//! subflow keeps Reno's window, slow start and NewReno cuts; only congestion avoidance is coupled.
//! An ACK of `acked` bytes on subflow i grows its window by
//! `min(alpha * acked * MSS / cwnd_total, acked * MSS / cwnd_i)`, with
//! `alpha = cwnd_total * max_i(cwnd_i / rtt_i^2) / (sum_i cwnd_i / rtt_i)^2`:
//! the connection takes no more than a single TCP on the best of its paths (goal 2) and moves
//! its traffic off the more congested ones (goal 3). The cap (the uncoupled Reno increase) keeps a
//! subflow no more aggressive than TCP on its own path (goal 1).
//!
//! The connection computes alpha and the total before each ACK ([`coupling`]) and hands it to the
//! subflow's controller ([`Lia::couple`]); the controller is otherwise a plain
//! [`CongestionControl`]. Windows are f64 bytes, so the RFC's integer rounding and htsim's random
//! rounding of fractional increases are not needed.

use crate::time::Time;
use crate::transport::window::cc::reno::RenoWindow;
use crate::transport::window::cc::{AckInfo, CongestionControl, LossInfo, WindowSetup};

/// One subflow's window under LIA.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lia {
    pub w: RenoWindow,
    /// Alpha and the connection's total window (bytes), as of the ACK being processed.
    alpha: f64,
    total: f64,
    /// False: every subflow is plain Reno (htsim's `UNCOUPLED`, the baseline LIA improves on).
    coupled: bool,
}

impl Lia {
    /// A subflow's controller; `ssthresh`: where its first slow start ends (bytes; `None` = at the
    /// first loss).
    pub fn new(w: &WindowSetup, coupled: bool, ssthresh: Option<f64>) -> Lia {
        let w = RenoWindow::new(w);
        let w = ssthresh.map_or(w, |b| w.with_ssthresh(b));
        Lia { w, alpha: 1.0, total: w.cwnd(), coupled }
    }

    /// Sets the coupling the next ACK's increase uses.
    #[inline]
    pub fn couple(&mut self, (alpha, total): (f64, f64)) {
        debug_assert!(alpha > 0.0 && alpha.is_finite() && total >= self.w.cwnd() * (1.0 - 1e-9));
        self.alpha = alpha;
        self.total = total;
    }

    /// The coupled congestion-avoidance increase for `acked` bytes (bytes; slow start is Reno's).
    #[inline]
    pub fn increase(&self, acked: u64, mss: u64) -> f64 {
        let per_byte = (acked * mss) as f64;
        let reno = per_byte / self.w.cwnd();
        if self.coupled {
            (self.alpha * per_byte / self.total).min(reno)
        } else {
            reno
        }
    }
}

/// (alpha, total window) of a connection whose subflows have windows `cwnd` (bytes) and smoothed
/// RTTs `rtt` (any unit; a subflow without a sample uses the caller's fallback). RFC 6356 eq. 2.
pub fn coupling(subflows: impl IntoIterator<Item = (f64, f64)>) -> (f64, f64) {
    let (mut total, mut best, mut sum, mut n) = (0.0, 0.0f64, 0.0, 0);
    for (cwnd, rtt) in subflows {
        debug_assert!(cwnd > 0.0 && rtt > 0.0);
        total += cwnd;
        best = best.max(cwnd / (rtt * rtt));
        sum += cwnd / rtt;
        n += 1;
    }
    // One subflow: alpha is 1 (exactly, so that the connection is NewReno bit for bit).
    let alpha = if n == 1 { 1.0 } else { total * best / (sum * sum) };
    (alpha, total)
}

impl CongestionControl for Lia {
    fn on_ack(&mut self, ack: &AckInfo) -> bool {
        if !self.w.recovery_ack(ack) {
            if self.w.cwnd() < self.w.ssthresh() {
                self.w.grow(ack.acked_bytes);
            } else {
                let mss = self.w.mss();
                self.w.grow_by(self.increase(ack.acked_bytes, mss));
            }
        }
        self.w.cap();
        false
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
    fn check_invariants(&self) {
        self.w.check_invariants();
        assert!(self.alpha > 0.0 && self.alpha.is_finite(), "LIA alpha {}", self.alpha);
    }
    fn state(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("cwnd_bytes", self.w.cwnd()));
        out.push(("ssthresh_bytes", self.w.ssthresh()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::window::cc::AckPhase;

    const MSS: u64 = 1000;

    fn ca(iw: u64) -> Lia {
        let w = crate::transport::window::cc::reno::tests::setup(iw, false, None);
        Lia::new(&w, true, None)
    }

    fn ack(acked: u64) -> AckInfo {
        AckInfo {
            now: 0,
            acked_bytes: acked,
            ece: false,
            rtt_sample_ps: 1,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            phase: AckPhase::Open,
        }
    }

    #[test]
    fn alpha_is_one_over_n_for_n_equal_subflows_so_the_total_grows_like_one_tcp() {
        // n equal subflows: alpha = n w * (w / r^2) / (n w / r)^2 = 1 / n.
        let (alpha, total) = coupling([(10_000.0, 5.0); 4]);
        assert!((alpha - 0.25).abs() < 1e-12 && total == 40_000.0);
        // An ACK grows its subflow by alpha * MSS^2 / total: a round trip of ACKs on all four grows
        // the total by MSS / 4 while a loss halves one subflow (a quarter of the total), the
        // equilibrium of one TCP with the total window (RFC 6356 section 3).
        let mut s = ca(10);
        s.couple((alpha, total));
        assert!((s.increase(MSS, MSS) - MSS as f64 * MSS as f64 * 0.25 / 40_000.0).abs() < 1e-9);
    }

    #[test]
    fn a_lone_subflow_is_reno_and_the_increase_never_beats_reno_on_its_path() {
        let (alpha, total) = coupling([(20_000.0, 3.0)]);
        assert_eq!(alpha, 1.0);
        let mut s = ca(20);
        s.couple((alpha, total));
        assert_eq!(s.increase(MSS, MSS), MSS as f64 * MSS as f64 / 20_000.0);
        // With a huge alpha the cap (Reno's increase) binds.
        s.couple((50.0, 20_000.0));
        assert_eq!(s.increase(MSS, MSS), MSS as f64 * MSS as f64 / 20_000.0);
        let w0 = s.window_bytes();
        s.on_ack(&ack(MSS));
        assert_eq!(s.window_bytes(), w0 + 50.0);
        // Uncoupled, a subflow grows as Reno whatever the coupling says.
        let mut u = Lia { coupled: false, ..ca(20) };
        u.couple((0.01, 1e9));
        assert_eq!(u.increase(MSS, MSS), MSS as f64 * MSS as f64 / 20_000.0);
    }

    #[test]
    fn the_initial_ssthresh_ends_slow_start() {
        let w = crate::transport::window::cc::reno::tests::setup(10, true, None);
        let mut s = Lia::new(&w, true, Some(15_000.0));
        s.couple((1.0, 10_000.0));
        for _ in 0..5 {
            s.on_ack(&ack(MSS));
        }
        assert_eq!(s.window_bytes(), 15_000.0, "slow start: one MSS per ACK up to ssthresh");
        s.couple((1.0, 15_000.0));
        s.on_ack(&ack(MSS));
        assert!((s.window_bytes() - (15_000.0 + MSS as f64 * MSS as f64 / 15_000.0)).abs() < 1e-9);
    }

    #[test]
    fn alpha_favours_the_short_rtt_path() {
        // Equal windows, RTTs 1 and 2: alpha = 2w * (w/1) / (w + w/2)^2 = 8/9; with the windows in
        // the ratio the RFC's goal leads to it stays positive and finite.
        let (alpha, _) = coupling([(10.0, 1.0), (10.0, 2.0)]);
        assert!((alpha - 8.0 / 9.0).abs() < 1e-12, "{alpha}");
    }
}
