//! DCTCP's window control (Alizadeh et al., SIGCOMM 2010, section 3.1) over Reno's window:
//! alpha <- (1 - g) alpha + g F once per window of data, F = fraction of bytes acknowledged with
//! an ECN echo in that window; an ECN echo outside recovery cuts cwnd to cwnd (1 - alpha / 2), at
//! most once per window (until snd_una passes the snd_nxt of the last cut, or of the last loss);
//! loss handling is NewReno's.

use super::reno::RenoWindow;
use super::{AckInfo, CongestionControl, LossInfo, WindowSetup};
use crate::time::Time;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DctcpParams {
    /// EWMA gain for alpha.
    pub g: f64,
    /// Alpha before the first window completes.
    pub initial_alpha: f64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DctcpControl {
    pub w: RenoWindow,
    g: f64,
    alpha: f64,
    /// Alpha is updated when snd_una passes this (one window of data).
    alpha_window_end: u64,
    acked_in_window: u64,
    marked_in_window: u64,
    /// No further ECN cut until snd_una passes this.
    cwr_end: u64,
}

impl DctcpControl {
    pub fn new(p: &DctcpParams, w: &WindowSetup) -> DctcpControl {
        DctcpControl {
            w: RenoWindow::new(w),
            g: p.g,
            alpha: p.initial_alpha,
            alpha_window_end: 0,
            acked_in_window: 0,
            marked_in_window: 0,
            cwr_end: 0,
        }
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }
}

impl CongestionControl for DctcpControl {
    fn on_ack(&mut self, ack: &AckInfo) -> bool {
        self.acked_in_window += ack.acked_bytes;
        if ack.ece {
            self.marked_in_window += ack.acked_bytes;
        }
        if ack.snd_una >= self.alpha_window_end {
            let f =
                if self.acked_in_window > 0 { self.marked_in_window as f64 / self.acked_in_window as f64 } else { 0.0 };
            self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
            self.acked_in_window = 0;
            self.marked_in_window = 0;
            self.alpha_window_end = ack.snd_nxt;
        }
        let mut cut = false;
        if self.w.recovery_ack(ack) {
        } else if ack.ece && ack.snd_una > self.cwr_end {
            self.w.scale_down(1.0 - self.alpha / 2.0);
            self.cwr_end = ack.snd_nxt;
            cut = true;
        } else {
            self.w.grow(ack.acked_bytes);
        }
        self.w.cap();
        cut
    }
    fn on_dupack(&mut self) {
        self.w.inflate();
    }
    fn on_fast_retransmit(&mut self, loss: &LossInfo) {
        self.w.enter_recovery(loss);
        self.cwr_end = loss.snd_max; // a loss cut counts as this window's reduction
    }
    fn on_rto(&mut self, loss: &LossInfo) {
        self.w.on_rto(loss);
        self.cwr_end = loss.snd_max;
    }
    fn window_bytes(&self) -> f64 {
        self.w.cwnd()
    }
    fn set_window(&mut self, _now: Time, bytes: f64) {
        self.w.set(bytes);
    }
    fn state(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("cwnd_bytes", self.w.cwnd()));
        out.push(("ssthresh_bytes", self.w.ssthresh()));
        out.push(("alpha", self.alpha));
    }
    /// alpha is an EWMA of marked fractions, so it stays in [0, 1]; marked bytes are acked bytes.
    fn check_invariants(&self) {
        self.w.check_invariants();
        assert!((0.0..=1.0).contains(&self.alpha), "alpha {} outside [0, 1]", self.alpha);
        assert!(self.marked_in_window <= self.acked_in_window, "more bytes marked than acknowledged");
    }
}

#[cfg(test)]
mod tests {
    use super::super::reno::tests::{ack, setup, MSS};
    use super::super::AckPhase;
    use super::*;

    fn at(mut a: AckInfo, una: u64, nxt: u64) -> AckInfo {
        a.snd_una = una;
        a.snd_nxt = nxt;
        a.snd_max = nxt;
        a
    }

    #[test]
    fn alpha_tracks_the_marked_fraction_once_per_window() {
        let p = DctcpParams { g: 1.0 / 16.0, initial_alpha: 0.0 };
        let mut d = DctcpControl::new(&p, &setup(10, false, Some(10)));
        // Window after window with half the bytes marked: alpha -> 1/2 geometrically.
        let mut una = 0;
        for w in 0..200 {
            let end = una + 10 * MSS;
            for i in 0..10 {
                una += MSS;
                d.on_ack(&at(ack(MSS, AckPhase::Open, i % 2 == 0), una, end + 10 * MSS));
            }
            let expect = 0.5 * (1.0 - (15.0f64 / 16.0).powi(w + 1));
            assert!((d.alpha() - expect).abs() < 0.07, "window {w}: alpha {} vs {expect}", d.alpha());
        }
        assert!((d.alpha() - 0.5).abs() < 0.05);
    }

    #[test]
    fn cuts_by_half_alpha_at_most_once_per_window() {
        let p = DctcpParams { g: 1.0 / 16.0, initial_alpha: 1.0 };
        let mut d = DctcpControl::new(&p, &setup(20, false, None));
        // The first ACK closes the first (empty) alpha window: alpha = 15/16 + 1/16 * 1.
        assert!(d.on_ack(&at(ack(MSS, AckPhase::Open, true), MSS, 21 * MSS)));
        assert_eq!(d.alpha(), 1.0);
        assert_eq!(d.window_bytes(), 10_000.0, "alpha = 1 halves the window");
        // More echoes within the same window: no further cut.
        for k in 2..21 {
            assert!(!d.on_ack(&at(ack(MSS, AckPhase::Open, true), k * MSS, 21 * MSS)));
        }
        assert!(d.window_bytes() >= 10_000.0);
        // Past the window's end, the next echo cuts again.
        assert!(d.on_ack(&at(ack(MSS, AckPhase::Open, true), 22 * MSS, 30 * MSS)));
    }

    #[test]
    fn a_loss_counts_as_the_windows_cut() {
        let p = DctcpParams { g: 1.0 / 16.0, initial_alpha: 1.0 };
        let mut d = DctcpControl::new(&p, &setup(20, false, None));
        d.on_fast_retransmit(&LossInfo { now: 0, snd_una: 0, snd_max: 20 * MSS, dupacks: 3 });
        d.on_ack(&at(ack(20 * MSS, AckPhase::RecoveryEnd, false), 20 * MSS, 20 * MSS));
        let w = d.window_bytes();
        assert_eq!(w, 10_000.0);
        // An echo for data sent before the loss: snd_una has not passed cwr_end yet.
        assert!(!d.on_ack(&at(ack(0, AckPhase::Open, true), 20 * MSS, 25 * MSS)));
    }
}
