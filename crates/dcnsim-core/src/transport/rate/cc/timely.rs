//! TIMELY's rate computation (Mittal et al., "TIMELY: RTT-based Congestion Control for the
//! Datacenter", SIGCOMM 2015, Algorithm 1), as the HPCC authors' ns-3 runs it (`rdma-hw.cc`,
//! `HandleAckTimely`, `UpdateRateTimely`; its fast-react hook is empty). The protocol and its
//! keys are in `transport/timely.rs`.
//!
//! Once per RTT — on the first ACK whose cumulative sequence passes the `snd_nxt` recorded at
//! the previous update — with `rtt` = now - the echoed send time of the packet it answers:
//! - new_rtt_diff = rtt - prev_rtt; rtt_diff <- (1 - alpha) rtt_diff + alpha new_rtt_diff;
//!   gradient = rtt_diff / min_rtt
//! - rtt < T_low: increase; rtt > T_high: rate <- rate (1 - beta (1 - T_high / rtt));
//!   gradient <= 0: increase; else rate <- rate (1 - beta gradient) (factor at least 0)
//! - an increase adds AI, or HAI once `hai_after` increases in a row preceded it (the stage
//!   counts consecutive increases and resets at a decrease); rate within [min, line]
//!
//! The first ACK only records its RTT and `snd_nxt` (no gradient yet). ACKs in between change
//! nothing.

use super::{scaled, QpRate};
use crate::time::{Rate, Time};
use crate::transport::rate::{RateAck, RateControl};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimelyLaw {
    /// EWMA weight of the new RTT difference.
    pub alpha: f64,
    pub beta: f64,
    pub t_low: Time,
    pub t_high: Time,
    pub min_rtt: Time,
    pub ai_bps: u64,
    pub hai_bps: u64,
    /// Consecutive increases after which an increase adds HAI.
    pub hai_after: u32,
    pub line_bps: u64,
    pub min_bps: u64,
}

/// What an update decided (for tests and traces).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// The first ACK: recorded only.
    First,
    /// rtt < T_low.
    BelowTLow,
    /// rtt > T_high: multiplicative decrease by the RTT's excess over T_high.
    AboveTHigh,
    /// Between T_low and T_high with a non-positive gradient.
    GradientIncrease,
    /// Between T_low and T_high with a positive gradient.
    GradientDecrease,
}

#[derive(Clone, Debug)]
pub struct Timely {
    law: TimelyLaw,
    rate: QpRate,
    /// Consecutive increases.
    stage: u32,
    prev_rtt: Time,
    rtt_diff: f64,
    /// The next update waits for an ACK past this sequence (payload bytes); `None` before the first ACK.
    update_after: Option<u64>,
    last: Option<Decision>,
    last_rtt: Time,
}

impl Timely {
    pub fn new(law: TimelyLaw) -> Timely {
        Timely {
            law,
            rate: QpRate::new(law.line_bps),
            stage: 0,
            prev_rtt: 0,
            rtt_diff: 0.0,
            update_after: None,
            last: None,
            last_rtt: 0,
        }
    }

    pub fn rate_bps(&self) -> u64 {
        self.rate.bps()
    }

    pub fn rtt_diff(&self) -> f64 {
        self.rtt_diff
    }

    pub fn last_decision(&self) -> Option<Decision> {
        self.last
    }

    /// One per-RTT update with an RTT sample.
    fn update(&mut self, rtt: Time) -> Decision {
        let l = self.law;
        let new_diff = rtt as f64 - self.prev_rtt as f64;
        let rtt_diff = (1.0 - l.alpha) * self.rtt_diff + l.alpha * new_diff;
        let gradient = rtt_diff / l.min_rtt as f64;
        let (decision, factor) = if rtt < l.t_low {
            (Decision::BelowTLow, 0.0)
        } else if rtt > l.t_high {
            (Decision::AboveTHigh, 1.0 - l.beta * (1.0 - l.t_high as f64 / rtt as f64))
        } else if gradient <= 0.0 {
            (Decision::GradientIncrease, 0.0)
        } else {
            (Decision::GradientDecrease, (1.0 - l.beta * gradient).max(0.0))
        };
        match decision {
            Decision::BelowTLow | Decision::GradientIncrease => {
                let step = if self.stage < l.hai_after { l.ai_bps } else { l.hai_bps };
                self.rate.set((self.rate.bps() + step).min(l.line_bps));
                self.stage += 1;
            }
            _ => {
                self.rate.set(scaled(self.rate.bps(), factor).max(l.min_bps));
                self.stage = 0;
            }
        }
        self.rtt_diff = rtt_diff;
        decision
    }
}

impl RateControl for Timely {
    fn on_ack(&mut self, ack: &RateAck<'_>) {
        if self.update_after.is_some_and(|s| ack.acked_total_bytes <= s) {
            return;
        }
        let rtt = ack.rtt_sample_ps;
        self.last_rtt = rtt;
        self.last = Some(if self.update_after.is_none() { Decision::First } else { self.update(rtt) });
        if self.update_after.is_none_or(|s| ack.sent_total_bytes > s) {
            self.update_after = Some(ack.sent_total_bytes);
            self.prev_rtt = rtt;
        }
    }

    fn rate(&self) -> Rate {
        self.rate.rate()
    }

    fn set_rate(&mut self, _now: Time, bps: u64) {
        self.rate.set(bps.clamp(self.law.min_bps, self.law.line_bps));
    }

    fn state(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("rate_gbps", self.rate.bps() as f64 / 1e9));
        out.push(("rtt_us", self.last_rtt as f64 / 1e6));
        out.push(("rtt_diff_us", self.rtt_diff / 1e6));
        out.push(("increase_stage", self.stage as f64));
    }
    /// Every update clamps the rate to [min, line].
    fn check_invariants(&self) {
        let (rate, l) = (self.rate.bps(), &self.law);
        assert!(rate <= l.line_bps && rate >= l.min_bps.min(l.line_bps), "rate {rate} b/s outside [min, line]");
        assert!(self.rtt_diff.is_finite(), "rtt_diff {}", self.rtt_diff);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::from_us;

    const LINE: u64 = 100_000_000_000;
    const AI: u64 = 100_000_000;
    const HAI: u64 = 500_000_000;

    /// The reference's run.py "timely" at 100 Gb/s.
    fn law() -> TimelyLaw {
        TimelyLaw {
            alpha: 0.875,
            beta: 0.8,
            t_low: from_us(50.0),
            t_high: from_us(500.0),
            min_rtt: from_us(20.0),
            ai_bps: AI,
            hai_bps: HAI,
            hai_after: 5,
            line_bps: LINE,
            min_bps: 1_000_000_000,
        }
    }

    /// An ACK of everything sent so far (`seq` bytes), sent `seq` + 1000 bytes, with this RTT.
    fn ack(seq: u64, rtt_us: f64) -> RateAck<'static> {
        RateAck {
            now: 0,
            nack: false,
            acked_bytes: 1000,
            ece: false,
            rtt_sample_ps: from_us(rtt_us),
            acked_total_bytes: seq,
            sent_total_bytes: seq + 1000,
            int: &[],
            rate_kbps: 0,
            aux: 0,
        }
    }

    /// Feeds one update per call (each ACK passes the previous snd_nxt).
    struct Feed(Timely, u64);
    impl Feed {
        fn rtt(&mut self, us: f64) -> Decision {
            self.1 += 2000;
            self.0.on_ack(&ack(self.1, us));
            self.0.last_decision().unwrap()
        }
    }

    #[test]
    fn the_band_decides_and_the_gradient_decides_between_t_low_and_t_high() {
        let mut f = Feed(Timely::new(law()), 0);
        assert_eq!(f.rtt(100.0), Decision::First);
        assert_eq!(f.0.rate_bps(), LINE);
        // 120 us: diff = 0.875 x 20 = 17.5 us, gradient 0.875 > 0: rate x (1 - 0.8 x 0.875).
        assert_eq!(f.rtt(120.0), Decision::GradientDecrease);
        let mut r = (LINE as f64 * (1.0 - 0.8 * 0.875)) as u64;
        assert_eq!(f.0.rate_bps(), r);
        // 110 us: diff = 0.125 x 17.5 + 0.875 x (-10) us < 0: increase by AI.
        assert_eq!(f.rtt(110.0), Decision::GradientIncrease);
        r += AI;
        assert_eq!(f.0.rate_bps(), r);
        let expect_ps = 0.125 * 17.5e6 + 0.875 * -10e6;
        assert!((f.0.rtt_diff() - expect_ps).abs() < 1.0, "{} ps", f.0.rtt_diff());
        // 600 us: above T_high: rate x (1 - 0.8 (1 - 500/600)), whatever the gradient.
        assert_eq!(f.rtt(600.0), Decision::AboveTHigh);
        r = (r as f64 * (1.0 - 0.8 * (1.0 - 500.0 / 600.0))) as u64;
        assert_eq!(f.0.rate_bps(), r);
        // 40 us: below T_low: increase, even though the RTT jumped.
        assert_eq!(f.rtt(40.0), Decision::BelowTLow);
        assert_eq!(f.0.rate_bps(), r + AI);
        // A huge positive gradient: the factor floors at 0 and the rate at the minimum.
        f.rtt(60.0);
        assert_eq!(f.rtt(499.0), Decision::GradientDecrease);
        assert_eq!(f.0.rate_bps(), 1_000_000_000);
    }

    #[test]
    fn hyper_increase_after_five_increases_in_a_row() {
        let mut f = Feed(Timely::new(law()), 0);
        f.rtt(100.0);
        f.rtt(200.0); // a decrease: the stage is 0
        let mut r = f.0.rate_bps();
        for k in 0..8 {
            assert_eq!(f.rtt(30.0), Decision::BelowTLow);
            r += if k < 5 { AI } else { HAI };
            assert_eq!(f.0.rate_bps(), r, "increase {k}");
        }
        // A decrease resets the count.
        f.rtt(1000.0);
        let r = f.0.rate_bps();
        f.rtt(30.0);
        assert_eq!(f.0.rate_bps(), r + AI);
    }

    #[test]
    fn one_update_per_rtt() {
        let mut t = Timely::new(law());
        t.on_ack(&ack(1000, 100.0)); // first: snd_nxt recorded = 2000
        t.on_ack(&ack(1500, 900.0));
        t.on_ack(&ack(2000, 900.0));
        assert_eq!((t.rate_bps(), t.last_decision()), (LINE, Some(Decision::First)), "no update before 2000 is passed");
        t.on_ack(&ack(2001, 900.0));
        assert_eq!(t.last_decision(), Some(Decision::AboveTHigh));
        assert!(t.rate_bps() < LINE);
    }
}
