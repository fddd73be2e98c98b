//! Reno's window (RFC 5681) with NewReno's fast recovery (RFC 6582), in bytes:
//! - slow start: cwnd += acked while cwnd < ssthresh; congestion avoidance: cwnd += MSS x acked / cwnd
//!   (one MSS per window of ACKs, counted per byte acknowledged)
//! - fast retransmit: ssthresh = max(FlightSize / 2, 2 MSS), cwnd = ssthresh + dupthresh x MSS;
//!   each further duplicate ACK inflates cwnd by one MSS; a partial ACK deflates it by the bytes
//!   acked and adds one MSS back (RFC 6582 3.2 step 5); the full ACK sets cwnd = ssthresh
//! - timeout: ssthresh = max(FlightSize / 2, 2 MSS), cwnd = 1 MSS (RFC 5681 3.1, loss window)
//! - a configured cap bounds cwnd after every ACK of new data
//! - a cut for a congestion signal (`scale_down`) floors at one MSS, or, with sub-packet ECN cuts,
//!   may leave less (RFC 3168 6.1.2; the sender then waits for its retransmission timer)
//!
//! The window is an f64 of bytes, as the DCTCP and NewReno senders always computed it; keeping the
//! arithmetic keeps their results bit for bit.

use super::{AckInfo, AckPhase, CongestionControl, LossInfo, WindowSetup};
use crate::time::Time;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RenoWindow {
    cwnd: f64,
    ssthresh: f64,
    max: f64,
    mss: u64,
    /// ECN cuts ([`RenoWindow::scale_down`]) may go under one MSS (`WindowSetup::sub_packet_ecn_cuts`).
    sub_packet: bool,
}

impl RenoWindow {
    pub fn new(w: &WindowSetup) -> RenoWindow {
        let max = w.max_window_packets.map_or(f64::INFINITY, |m| (m * w.mss_bytes) as f64);
        let cwnd = (w.initial_window_packets as f64 * w.mss_bytes as f64).min(max);
        let ssthresh = if w.slow_start { f64::INFINITY } else { cwnd };
        RenoWindow { cwnd, ssthresh, max, mss: w.mss_bytes, sub_packet: w.sub_packet_ecn_cuts }
    }

    #[inline]
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// Slow start ends at `bytes` (at least one MSS) instead of at the first loss.
    pub fn with_ssthresh(mut self, bytes: f64) -> RenoWindow {
        self.ssthresh = bytes.max(self.mss as f64);
        self
    }

    #[inline]
    pub fn mss(&self) -> u64 {
        self.mss
    }

    #[inline]
    pub fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    /// Slow start or congestion avoidance growth for `acked` new bytes.
    #[inline]
    pub fn grow(&mut self, acked: u64) {
        if self.cwnd < self.ssthresh {
            self.cwnd += acked as f64;
        } else {
            self.cwnd += (self.mss * acked) as f64 / self.cwnd;
        }
    }

    /// Adds `bytes` to the window (a controller's own increase, e.g. DX's one MSS per round).
    #[inline]
    pub fn grow_by(&mut self, bytes: f64) {
        self.cwnd += bytes;
    }

    /// Sets the window to `bytes` (between one MSS and the cap) and makes that the new ssthresh.
    #[inline]
    pub fn set(&mut self, bytes: f64) {
        self.cwnd = bytes.min(self.max).max(self.mss as f64);
        self.ssthresh = self.cwnd;
    }

    /// A cut for a congestion signal: multiplies the window by `factor` (at least one MSS) and makes
    /// that the new ssthresh. With sub-packet cuts the window may end under one MSS (the sender then
    /// waits for its retransmission timer) and ssthresh is at least two MSS, as ns-2's
    /// `TcpAgent::slowdown` sets them (`cwnd_ = (1 - alpha / 2) windowd()`, `ssthresh_` floored at 2).
    #[inline]
    pub fn scale_down(&mut self, factor: f64) {
        if self.sub_packet {
            self.cwnd *= factor;
            self.ssthresh = self.cwnd.max(2.0 * self.mss as f64);
        } else {
            self.cwnd = (self.cwnd * factor).max(self.mss as f64);
            self.ssthresh = self.cwnd;
        }
    }

    /// Fast retransmit: halve to ssthresh, inflated by the segments the duplicate ACKs reported.
    pub fn enter_recovery(&mut self, loss: &LossInfo) {
        self.ssthresh = self.half_flight(loss);
        self.cwnd = self.ssthresh + (loss.dupacks as u64 * self.mss) as f64;
    }

    /// A duplicate ACK in recovery: one more segment has left the network.
    #[inline]
    pub fn inflate(&mut self) {
        self.cwnd += self.mss as f64;
    }

    /// A partial ACK: deflate by what was acknowledged, plus one MSS for the resent segment.
    #[inline]
    pub fn deflate(&mut self, acked: u64) {
        self.cwnd = (self.cwnd - acked as f64 + self.mss as f64).max(self.mss as f64);
    }

    #[inline]
    pub fn exit_recovery(&mut self) {
        self.cwnd = self.ssthresh;
    }

    pub fn on_rto(&mut self, loss: &LossInfo) {
        self.ssthresh = self.half_flight(loss);
        self.cwnd = self.mss as f64;
    }

    /// Applies the configured cap.
    #[inline]
    pub fn cap(&mut self) {
        self.cwnd = self.cwnd.min(self.max);
    }

    /// The NewReno part of an ACK of new data (recovery deflation or exit); false if the ACK is
    /// outside recovery and the caller decides how to grow or cut.
    #[inline]
    pub fn recovery_ack(&mut self, ack: &AckInfo) -> bool {
        match ack.phase {
            AckPhase::Open => false,
            AckPhase::PartialAck => {
                self.deflate(ack.acked_bytes);
                true
            }
            AckPhase::RecoveryEnd => {
                self.exit_recovery();
                true
            }
        }
    }

    /// The window is a finite number of bytes, at least one MSS (above zero with sub-packet cuts),
    /// and ssthresh is at least one MSS (or infinite before the first cut); every cut and deflation
    /// floors at one MSS, bar sub-packet ECN cuts.
    pub fn check_invariants(&self) {
        let mss = self.mss as f64;
        let floor_ok = if self.sub_packet { self.cwnd > 0.0 } else { self.cwnd >= mss };
        assert!(self.cwnd.is_finite() && floor_ok, "cwnd {} under one MSS ({mss})", self.cwnd);
        assert!(self.ssthresh >= mss, "ssthresh {} under one MSS ({mss})", self.ssthresh);
        assert!(self.max >= mss, "window cap {} under one MSS", self.max);
    }

    fn half_flight(&self, loss: &LossInfo) -> f64 {
        (loss.flight_bytes() as f64 / 2.0).max(2.0 * self.mss as f64)
    }
}

/// TCP NewReno: reacts to loss only.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reno {
    pub w: RenoWindow,
}

impl Reno {
    pub fn new(w: &WindowSetup) -> Reno {
        Reno { w: RenoWindow::new(w) }
    }
}

impl CongestionControl for Reno {
    fn on_ack(&mut self, ack: &AckInfo) -> bool {
        if !self.w.recovery_ack(ack) {
            self.w.grow(ack.acked_bytes);
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
    }
    fn state(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("cwnd_bytes", self.w.cwnd()));
        out.push(("ssthresh_bytes", self.w.ssthresh()));
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) const MSS: u64 = 1000;

    pub(crate) fn setup(iw: u64, slow_start: bool, max: Option<u64>) -> WindowSetup {
        WindowSetup {
            mss_bytes: MSS,
            initial_window_packets: iw,
            max_window_packets: max,
            slow_start,
            sub_packet_ecn_cuts: false,
        }
    }

    pub(crate) fn ack(acked: u64, phase: AckPhase, ece: bool) -> AckInfo {
        AckInfo { now: 0, acked_bytes: acked, ece, rtt_sample_ps: 1, snd_una: 0, snd_nxt: 0, snd_max: 0, phase }
    }

    fn loss(flight: u64, dupacks: u32) -> LossInfo {
        LossInfo { now: 0, snd_una: 0, snd_max: flight, dupacks }
    }

    #[test]
    fn slow_start_doubles_per_window_then_grows_one_mss_per_window() {
        let mut r = Reno::new(&setup(10, true, None));
        assert_eq!(r.window_bytes(), 10_000.0);
        // One window of ACKs in slow start doubles the window.
        for _ in 0..10 {
            r.on_ack(&ack(MSS, AckPhase::Open, false));
        }
        assert_eq!(r.window_bytes(), 20_000.0);
        // Congestion avoidance from a 20-segment window: 20 ACKs add about one MSS.
        let mut r = Reno::new(&setup(20, false, None));
        for _ in 0..20 {
            r.on_ack(&ack(MSS, AckPhase::Open, false));
        }
        let w = r.window_bytes();
        assert!(w > 20_950.0 && w < 21_000.0, "{w}");
    }

    #[test]
    fn fast_recovery_halves_inflates_deflates_and_exits_at_ssthresh() {
        let mut r = Reno::new(&setup(10, true, None));
        r.on_fast_retransmit(&loss(40 * MSS, 3));
        assert_eq!(r.w.ssthresh(), 20_000.0);
        assert_eq!(r.window_bytes(), 23_000.0);
        r.on_dupack();
        assert_eq!(r.window_bytes(), 24_000.0);
        r.on_ack(&ack(5 * MSS, AckPhase::PartialAck, false));
        assert_eq!(r.window_bytes(), 20_000.0);
        r.on_ack(&ack(30 * MSS, AckPhase::RecoveryEnd, false));
        assert_eq!(r.window_bytes(), 20_000.0);
        // A tiny flight still leaves two segments of ssthresh.
        r.on_fast_retransmit(&loss(MSS, 3));
        assert_eq!(r.w.ssthresh(), 2.0 * MSS as f64);
    }

    #[test]
    fn timeout_collapses_to_one_segment_and_the_cap_holds() {
        let mut r = Reno::new(&setup(10, true, Some(12)));
        r.on_rto(&loss(10 * MSS, 0));
        assert_eq!(r.window_bytes(), MSS as f64);
        assert_eq!(r.w.ssthresh(), 5_000.0);
        for _ in 0..100 {
            r.on_ack(&ack(MSS, AckPhase::Open, false));
            assert!(r.window_bytes() <= 12_000.0);
        }
        assert_eq!(r.window_bytes(), 12_000.0);
        // The initial window obeys the cap too.
        assert_eq!(Reno::new(&setup(50, true, Some(12))).window_bytes(), 12_000.0);
    }

    #[test]
    fn ecn_echoes_do_not_move_reno() {
        let mut a = Reno::new(&setup(10, true, None));
        let mut b = a;
        for _ in 0..30 {
            assert!(!a.on_ack(&ack(MSS, AckPhase::Open, true)));
            b.on_ack(&ack(MSS, AckPhase::Open, false));
        }
        assert_eq!(a, b);
    }
}
