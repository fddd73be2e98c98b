//! Retransmission timeout from RTT samples, per RFC 6298 section 2: SRTT and RTTVAR with gains
//! 1/8 and 1/4, RTO = SRTT + 4 RTTVAR, floored at a minimum. The arithmetic is in f64 exactly as
//! the protocols did it before this part existed (so their results are unchanged); the RTO is
//! truncated to whole picoseconds.
//!
//! Differences from the RFC, deliberate: the clock granularity term G is zero (the simulator's
//! clock is exact), and there is no upper bound on the RTO here (callers cap their back-off).

use crate::time::Time;

/// Largest back-off shift [`RttEstimator::backed_off_rto_ps`] applies (2^16 x RTO): the limit
/// `limits.rs` proves a fully backed-off timeout against.
pub const MAX_BACKOFF_SHIFT: u32 = crate::limits::MAX_RTO_BACKOFF_SHIFT;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RttEstimator {
    /// Smoothed RTT; 0 = no sample yet (a real RTT is never zero: packets take time on links).
    srtt_ps: f64,
    rttvar_ps: f64,
    rto_ps: Time,
    min_rto_ps: Time,
}

impl RttEstimator {
    /// Before the first sample the RTO is `initial_rto_ps` (RFC 6298 2.1; the RFC says 1 s).
    pub fn new(initial_rto_ps: Time, min_rto_ps: Time) -> RttEstimator {
        debug_assert!(min_rto_ps > 0 && initial_rto_ps > 0);
        RttEstimator { srtt_ps: 0.0, rttvar_ps: 0.0, rto_ps: initial_rto_ps, min_rto_ps }
    }

    /// Takes one RTT measurement (RFC 6298 2.2 for the first, 2.3 after).
    #[inline]
    pub fn on_sample(&mut self, rtt_ps: Time) {
        let r = rtt_ps as f64;
        if self.srtt_ps == 0.0 {
            self.srtt_ps = r;
            self.rttvar_ps = r / 2.0;
        } else {
            self.rttvar_ps = 0.75 * self.rttvar_ps + 0.25 * (self.srtt_ps - r).abs();
            self.srtt_ps = 0.875 * self.srtt_ps + 0.125 * r;
        }
        self.rto_ps = ((self.srtt_ps + 4.0 * self.rttvar_ps) as Time).max(self.min_rto_ps);
    }

    /// The current retransmission timeout, without back-off.
    #[inline]
    pub fn rto_ps(&self) -> Time {
        self.rto_ps
    }

    /// The RTO after `backoff` consecutive timeouts: doubled each time (RFC 6298 5.5), the shift
    /// capped at [`MAX_BACKOFF_SHIFT`].
    #[inline]
    pub fn backed_off_rto_ps(&self, backoff: u32) -> Time {
        self.rto_ps << backoff.min(MAX_BACKOFF_SHIFT)
    }

    /// Doubles the stored RTO in place, up to `max_rto_ps` (for protocols that keep the backed-off
    /// value until the next sample rather than counting timeouts).
    #[inline]
    pub fn back_off(&mut self, max_rto_ps: Time) {
        self.rto_ps = (self.rto_ps * 2).min(max_rto_ps);
    }

    /// Smoothed RTT, once there is a sample.
    pub fn srtt_ps(&self) -> Option<f64> {
        (self.srtt_ps != 0.0).then_some(self.srtt_ps)
    }

    pub fn rttvar_ps(&self) -> f64 {
        self.rttvar_ps
    }

    pub fn min_rto_ps(&self) -> Time {
        self.min_rto_ps
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::US;

    #[test]
    fn first_sample_sets_srtt_and_half_variance() {
        let mut e = RttEstimator::new(1000 * US, 1);
        assert_eq!(e.rto_ps(), 1000 * US);
        assert_eq!(e.srtt_ps(), None);
        e.on_sample(10 * US);
        assert_eq!(e.srtt_ps(), Some(10e6));
        assert_eq!(e.rttvar_ps(), 5e6);
        // RTO = R + 4 R/2 = 3 R.
        assert_eq!(e.rto_ps(), 30 * US);
    }

    #[test]
    fn constant_samples_converge_to_the_rtt() {
        let mut e = RttEstimator::new(1000 * US, 1);
        for _ in 0..200 {
            e.on_sample(8 * US);
        }
        assert!((e.srtt_ps().unwrap() - 8e6).abs() < 1.0);
        assert!(e.rttvar_ps() < 1.0);
        // RTTVAR decays by 3/4 per sample: after 200 samples RTO is the RTT to the picosecond.
        assert!(e.rto_ps() >= 8 * US && e.rto_ps() <= 8 * US + 4);
    }

    #[test]
    fn second_sample_follows_rfc_6298_gains() {
        let mut e = RttEstimator::new(1000 * US, 1);
        e.on_sample(100);
        e.on_sample(200);
        // RTTVAR = 3/4 * 50 + 1/4 * |100 - 200| = 62.5; SRTT = 7/8 * 100 + 1/8 * 200 = 112.5.
        assert_eq!(e.rttvar_ps(), 62.5);
        assert_eq!(e.srtt_ps(), Some(112.5));
        assert_eq!(e.rto_ps(), 362); // 112.5 + 250, truncated
    }

    #[test]
    fn the_floor_holds() {
        let mut e = RttEstimator::new(1000 * US, 200 * US);
        e.on_sample(10 * US);
        assert_eq!(e.rto_ps(), 200 * US);
        assert_eq!(e.min_rto_ps(), 200 * US);
    }

    #[test]
    fn back_off_doubles_and_caps() {
        let mut e = RttEstimator::new(100, 1);
        assert_eq!(e.backed_off_rto_ps(0), 100);
        assert_eq!(e.backed_off_rto_ps(3), 800);
        assert_eq!(e.backed_off_rto_ps(40), 100 << MAX_BACKOFF_SHIFT);
        e.back_off(350);
        assert_eq!(e.rto_ps(), 200);
        e.back_off(350);
        assert_eq!(e.rto_ps(), 350);
        e.back_off(350);
        assert_eq!(e.rto_ps(), 350);
        // A new sample replaces the backed-off value.
        e.on_sample(10);
        assert_eq!(e.rto_ps(), 30);
    }
}
