//! The receiver's credit feedback control (section 3.2): once per RTT, from the fraction of its
//! credits that did not come back as data, the receiver moves its credit rate towards the maximum
//! or cuts it. Rates are in credit bytes per second.

use super::config::{Feedback, XpassConfig};
use crate::time::Time;

/// One receiver-side flow's controller state.
#[derive(Clone, Debug, PartialEq)]
pub struct RateControl {
    pub rate: f64,
    pub w: f64,
    increasing: bool,
    /// Credits accounted since the last update (echoed or found missing), and the missing ones.
    pub total: u64,
    pub dropped: u64,
    last_update: Time,
}

impl RateControl {
    /// `left`: the packets the request said are still to send.
    pub fn new(cfg: &XpassConfig, max_rate: f64, left: u64, now: Time) -> RateControl {
        RateControl {
            rate: cfg.initial_fraction(left) * max_rate,
            w: cfg.w_init,
            increasing: false,
            total: 0,
            dropped: 0,
            last_update: now,
        }
    }

    /// Accounts the credit echoed by a data packet, `skipped` earlier credits being lost.
    pub fn on_echo(&mut self, skipped: u64) {
        self.total += skipped + 1;
        self.dropped += skipped;
    }

    /// Runs before each credit: at most once per `rtt`, and only with feedback since the last.
    pub fn update(&mut self, cfg: &XpassConfig, max_rate: f64, rtt: Time, now: Time) {
        if rtt == 0 || now - self.last_update < rtt || self.total == 0 {
            return;
        }
        let avg = cfg.avg_credit_bytes();
        let rtt_s = rtt as f64 * 1e-12;
        let min_rate = avg / rtt_s;
        let loss = self.dropped as f64 / self.total as f64;
        match cfg.feedback {
            Feedback::Code => {
                let target = (1.0 - self.rate / max_rate) * cfg.target_loss;
                if loss > target {
                    let old = self.rate;
                    self.rate = if loss >= 1.0 {
                        min_rate
                    } else {
                        let elapsed = (now - self.last_update) as f64 * 1e-12;
                        avg * (self.total - self.dropped) as f64 / elapsed * (1.0 + target)
                    };
                    self.rate = self.rate.min(old);
                    self.w = (self.w / 2.0).max(cfg.w_min);
                    self.increasing = false;
                } else {
                    if self.increasing {
                        self.w = (self.w + 0.05).min(cfg.w_max);
                    } else {
                        self.increasing = true;
                    }
                    if self.rate < max_rate {
                        self.rate = self.w * max_rate + (1.0 - self.w) * self.rate;
                    }
                }
            }
            Feedback::Paper => {
                let target = cfg.target_loss;
                if loss <= target {
                    if self.increasing {
                        self.w = (self.w + cfg.w_max) / 2.0;
                    }
                    self.increasing = true;
                    self.rate = (1.0 - self.w) * self.rate + self.w * max_rate * (1.0 + target);
                } else {
                    self.rate *= (1.0 - loss) * (1.0 + target);
                    self.w = (self.w / 2.0).max(cfg.w_min);
                    self.increasing = false;
                }
            }
        }
        self.rate = self.rate.clamp(min_rate.min(max_rate), max_rate);
        debug_assert!(self.rate > 0.0 && self.w >= cfg.w_min && self.w <= cfg.w_max);
        (self.total, self.dropped, self.last_update) = (0, 0, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::LoadBalancing;

    fn cfg(feedback: Feedback) -> XpassConfig {
        XpassConfig {
            alpha: 0.5,
            w_init: 0.5,
            w_min: 0.01,
            w_max: 0.5,
            feedback,
            target_loss: if feedback == Feedback::Code { 0.125 } else { 0.1 },
            min_credit_bytes: 84,
            max_credit_bytes: 84,
            jitter: 0.0,
            early_credit_stop: true,
            credit_queue_credits: 8,
            credit_bucket_credits: 2,
            timeout: 1,
            control_priority: 0,
            data_priority: 0,
            lb: LoadBalancing::Symmetric,
            max_frame_bytes: 1538,
            adaptive_start_packets: 0,
        }
    }

    /// AIR: a flow with n < 40 packets left starts at alpha x n / 40 (the code's
    /// `lalpha = alpha_ * sendbuffer_ / 40.0`), a larger one at alpha; off, every flow at alpha.
    #[test]
    fn an_adaptive_start_scales_small_flows_by_their_packets_left() {
        let mut c = cfg(Feedback::Code);
        let max = 1e9;
        for left in [1, 10, 39, 40, 1000] {
            assert_eq!(RateControl::new(&c, max, left, 0).rate, 0.5 * max, "off: {left}");
        }
        c.adaptive_start_packets = 40;
        for (left, want) in [(1, 0.5 / 40.0), (10, 0.5 * 10.0 / 40.0), (39, 0.5 * 39.0 / 40.0), (40, 0.5), (1000, 0.5)]
        {
            let rate = RateControl::new(&c, max, left, 0).rate;
            assert!((rate - want * max).abs() < 1e-6, "{left}: {rate} vs {}", want * max);
        }
    }

    const RTT: Time = 10_000_000; // 10 us

    /// Without loss the rate climbs to the maximum; with all credits lost it falls to one per RTT.
    #[test]
    fn rate_rises_without_loss_and_floors_with_total_loss() {
        for fb in [Feedback::Code, Feedback::Paper] {
            let c = cfg(fb);
            let max = 1e9;
            let mut rc = RateControl::new(&c, max, u64::MAX, 0);
            for k in 1..40 {
                rc.on_echo(0);
                rc.update(&c, max, RTT, k * RTT);
            }
            assert!((rc.rate - max).abs() / max < 1e-3, "{fb:?}: {}", rc.rate);
            rc.on_echo(1000); // a thousand lost, one echoed: loss just under 1
            rc.total = 10;
            rc.dropped = 10;
            rc.update(&c, max, RTT, 41 * RTT);
            let floor = 84.0 / 10e-6;
            assert!(rc.rate <= max * 0.5 && rc.rate >= floor, "{fb:?}: {}", rc.rate);
            assert!(rc.w < c.w_init);
        }
    }

    /// The code's decrease sets the rate to the credits that came back per second, plus the target.
    #[test]
    fn code_decrease_is_the_measured_rate() {
        let c = cfg(Feedback::Code);
        let max = 1e9;
        let mut rc = RateControl::new(&c, max, u64::MAX, 0);
        rc.rate = max;
        rc.total = 100;
        rc.dropped = 50;
        rc.update(&c, max, RTT, 2 * RTT);
        // 50 credits of 84 B in 20 us, target 0 at the maximum rate.
        assert!((rc.rate - 50.0 * 84.0 / 20e-6).abs() < 1.0, "{}", rc.rate);
        // No update within one RTT of the last.
        let before = rc.clone();
        rc.on_echo(5);
        rc.update(&c, max, RTT, 2 * RTT + RTT / 2);
        assert_eq!((rc.rate, rc.w), (before.rate, before.w));
    }
}
