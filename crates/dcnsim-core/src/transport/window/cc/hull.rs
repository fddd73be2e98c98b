//! HULL's host side (Alizadeh et al., NSDI 2012, sections 3.3 and 4): DCTCP's window control with
//! a pacer. HULL's hardware pacer is a token bucket at the NIC whose rate follows the flow's own
//! sending rate (R <- (1 - eta) R + eta M / Tr + beta Q_tb / Tr): it spreads each window's packets
//! evenly instead of letting them leave back to back. Here the sender paces at the rate the window
//! gives, cwnd / srtt (srtt an EWMA of the RTT samples with gain 1/8, RFC 6298's), which is the
//! rate that pacer converges to for a window-limited flow; before the first RTT sample, no pacing.

use super::dctcp::{DctcpControl, DctcpParams};
use super::{AckInfo, CongestionControl, LossInfo, WindowSetup};
use crate::time::{Rate, Time};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HullParams {
    pub dctcp: DctcpParams,
    /// Pace data at cwnd / srtt.
    pub pace: bool,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HullControl {
    pub dctcp: DctcpControl,
    pace: bool,
    /// Smoothed RTT, ps; `None` before the first sample.
    srtt_ps: Option<f64>,
}

impl HullControl {
    pub fn new(p: &HullParams, w: &WindowSetup) -> HullControl {
        HullControl { dctcp: DctcpControl::new(&p.dctcp, w), pace: p.pace, srtt_ps: None }
    }
}

impl CongestionControl for HullControl {
    fn on_ack(&mut self, ack: &AckInfo) -> bool {
        let sample = ack.rtt_sample_ps as f64;
        self.srtt_ps = Some(self.srtt_ps.map_or(sample, |s| s + (sample - s) / 8.0));
        self.dctcp.on_ack(ack)
    }
    fn on_dupack(&mut self) {
        self.dctcp.on_dupack();
    }
    fn on_fast_retransmit(&mut self, loss: &LossInfo) {
        self.dctcp.on_fast_retransmit(loss);
    }
    fn on_rto(&mut self, loss: &LossInfo) {
        self.dctcp.on_rto(loss);
    }
    fn window_bytes(&self) -> f64 {
        self.dctcp.window_bytes()
    }
    fn set_window(&mut self, now: Time, bytes: f64) {
        self.dctcp.set_window(now, bytes);
    }
    fn pacing_rate(&self) -> Option<Rate> {
        let srtt = self.srtt_ps.filter(|&s| self.pace && s > 0.0)?;
        let bps = self.dctcp.window_bytes() * 8.0 * 1e12 / srtt;
        Some(Rate::from_bps((bps as u64).max(1)))
    }
    fn check_invariants(&self) {
        self.dctcp.check_invariants();
        assert!(self.srtt_ps.is_none_or(|s| s.is_finite() && s >= 0.0), "srtt {:?}", self.srtt_ps);
    }
    fn state(&self, out: &mut Vec<(&'static str, f64)>) {
        self.dctcp.state(out);
        if let Some(r) = self.pacing_rate() {
            out.push(("pacing_rate_gbps", r.gbps()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::AckPhase;
    use super::*;

    #[test]
    fn paces_at_the_window_over_the_smoothed_rtt() {
        let w = super::super::reno::tests::setup(10, false, None);
        let p = HullParams { dctcp: DctcpParams { g: 1.0 / 16.0, initial_alpha: 1.0 }, pace: true };
        let mut c = HullControl::new(&p, &w);
        assert_eq!(c.pacing_rate(), None, "no RTT sample yet");
        let ack = |rtt| AckInfo {
            now: 0,
            acked_bytes: 1000,
            ece: false,
            rtt_sample_ps: rtt,
            snd_una: 1000,
            snd_nxt: 10_000,
            snd_max: 10_000,
            phase: AckPhase::Open,
        };
        c.on_ack(&ack(8_000_000));
        c.on_ack(&ack(16_000_000)); // srtt = 8 + 8/8 = 9 us
        let bps = c.window_bytes() * 8.0 * 1e12 / 9e6;
        assert_eq!(c.pacing_rate().unwrap().bps(), bps as u64);
        let off = HullControl::new(&HullParams { pace: false, ..p }, &w);
        assert_eq!(off.pacing_rate(), None);
    }
}
