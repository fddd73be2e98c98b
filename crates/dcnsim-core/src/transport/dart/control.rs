//! The sender half of Dart: DCQCN's reaction point (the fall-back) under DASR's cap. The rate is
//! the lower of DCQCN's rate and line rate / f, where f is the factor the receiver put on the latest
//! ACK (`RateAck::aux`, in 1/[`SHARE_SCALE`] units): its sender count n, divided by the fraction of
//! its link left to data (its own flows' ACKs use the rest; 1 when it sends nothing), and exactly 1
//! in Non-Receiver Congestion, so DCQCN alone rules there. A flow starts at line rate (f = 1 until its
//! first ACK), as the paper's.

use crate::time::{Rate, Time};
use crate::transport::rate::cc::dcqcn::Dcqcn;
use crate::transport::rate::{RateAck, RateControl};

/// `RateAck::aux` carries DASR's factor in these units: n senders on a link left wholly to data is
/// `n * SHARE_SCALE`, and the rate is then exactly line rate / n.
pub const SHARE_SCALE: u32 = 1 << 16;

pub struct DartControl {
    dcqcn: Dcqcn,
    line_bps: u64,
    /// The factor of the latest ACK, in 1/SHARE_SCALE units.
    share: u32,
    share_rate: Rate,
}

impl DartControl {
    /// `fraction` of line rate is shared (1: the paper).
    pub fn new(dcqcn: Dcqcn, line: Rate, fraction: f64) -> DartControl {
        let line_bps = (line.bps() as f64 * fraction) as u64;
        DartControl { dcqcn, line_bps, share: SHARE_SCALE, share_rate: Rate::from_bps(line_bps.max(1)) }
    }

    /// The factor of the latest ACK (the sender count, over the data's fraction of the link).
    pub fn share(&self) -> f64 {
        self.share as f64 / SHARE_SCALE as f64
    }
}

impl RateControl for DartControl {
    fn on_ack(&mut self, ack: &RateAck<'_>) {
        self.dcqcn.on_ack(ack);
        if ack.aux != 0 && ack.aux != self.share {
            self.share = ack.aux;
            let bps = self.line_bps as u128 * SHARE_SCALE as u128 / ack.aux as u128;
            self.share_rate = Rate::from_bps((bps as u64).max(1));
        }
    }

    fn on_nack(&mut self, now: Time) {
        self.dcqcn.on_nack(now);
    }

    fn on_cnp(&mut self, now: Time) {
        self.dcqcn.on_cnp(now);
    }

    fn on_rto(&mut self, now: Time) {
        self.dcqcn.on_rto(now);
    }

    fn on_send(&mut self, now: Time, wire_bytes: u32) {
        self.dcqcn.on_send(now, wire_bytes);
    }

    /// A start layer's rate goes to the fall-back; DASR's cap still applies on top.
    fn set_rate(&mut self, now: Time, bps: u64) {
        self.dcqcn.set_rate(now, bps);
    }

    #[inline]
    fn rate(&self) -> Rate {
        let d = self.dcqcn.rate();
        if d.bps() < self.share_rate.bps() {
            d
        } else {
            self.share_rate
        }
    }

    fn wake_at(&self) -> Option<Time> {
        self.dcqcn.wake_at()
    }

    fn on_wake(&mut self, now: Time) {
        self.dcqcn.on_wake(now);
    }

    fn state(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("rate_gbps", self.rate().gbps()));
        out.push(("dasr_senders", self.share()));
        out.push(("dcqcn_rate_gbps", self.dcqcn.rate().gbps()));
        out.push(("alpha", self.dcqcn.alpha()));
    }
    /// DASR's factor is at least 1 and caps the rate at line / factor.
    fn check_invariants(&self) {
        self.dcqcn.check_invariants();
        assert!(self.share >= SHARE_SCALE, "DASR factor {}", self.share());
        assert!(self.rate().bps() <= self.line_bps.max(1), "rate over DASR's line rate");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::from_us;
    use crate::transport::rate::cc::dcqcn::DcqcnLaw;

    fn control() -> DartControl {
        let law = DcqcnLaw {
            g: 1.0 / 256.0,
            alpha_interval: from_us(1.0),
            decrease_interval: from_us(4.0),
            increase_interval: from_us(300.0),
            fast_recovery_steps: 1,
            line_bps: 100_000_000_000,
            ai_bps: 20_000_000,
            hai_bps: 200_000_000,
            min_bps: 1_000_000_000,
            clamp_target: false,
            first_cnp_fraction: 1.0,
            byte_counter: None,
        };
        DartControl::new(Dcqcn::new(law), Rate::from_gbps(100.0), 1.0)
    }

    fn ack(aux: u32) -> RateAck<'static> {
        RateAck {
            now: 0,
            nack: false,
            acked_bytes: 1000,
            ece: false,
            rtt_sample_ps: 0,
            acked_total_bytes: 1000,
            sent_total_bytes: 2000,
            int: &[],
            rate_kbps: 0,
            aux,
        }
    }

    #[test]
    fn the_rate_is_line_rate_over_the_acked_sender_count_at_once() {
        let mut c = control();
        assert_eq!(c.rate().bps(), 100_000_000_000, "starts at line rate");
        c.on_ack(&ack(4 * SHARE_SCALE));
        assert_eq!(c.rate().bps(), 25_000_000_000);
        c.on_ack(&ack(0)); // an ACK without a value changes nothing
        assert_eq!(c.rate().bps(), 25_000_000_000);
        c.on_ack(&ack(SHARE_SCALE));
        assert_eq!(c.rate().bps(), 100_000_000_000, "back to line rate when the others leave");
        // Two senders to a receiver whose link carries 4 % of control bytes: each gets 48 % of line rate.
        c.on_ack(&ack((2.0 * SHARE_SCALE as f64 / 0.96).round() as u32));
        assert!((c.rate().gbps() - 48.0).abs() < 0.01, "{}", c.rate().gbps());
    }

    #[test]
    fn dcqcn_rules_when_it_is_lower() {
        let mut c = control();
        c.on_cnp(0);
        c.on_wake(from_us(4.1)); // the decrease check cuts the rate
        let cut = c.dcqcn.rate().bps();
        assert!(cut < 100_000_000_000);
        c.on_ack(&ack(SHARE_SCALE));
        assert_eq!(c.rate().bps(), cut);
    }
}
