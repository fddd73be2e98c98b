//! Swift's window control (Kumar et al., SIGCOMM 2020, Algorithm 1 and section 3.5): the window is
//! in packets (a float, allowed below one); an ACK whose delay is under the target grows it by
//! `ai` per RTT (ai/cwnd per packet acked, or ai per packet below one packet); an ACK over the
//! target cuts it by beta (delay - target) / delay, at most `max_mdf`, at most once per RTT; a
//! fast retransmit cuts by `max_mdf` (once per RTT); a timeout cuts by `max_mdf`, or drops to
//! `min_cwnd` after `retx_reset_threshold` consecutive timeouts. Below one packet the sender
//! paces one packet every rtt / cwnd. The target is base + hops x per_hop + the flow-scaling term
//! clamp(alpha / sqrt(cwnd) + beta_fs, 0, fs_range), alpha and beta_fs set so that the term is
//! fs_range at fs_min_cwnd and 0 at fs_max_cwnd.

use super::{AckInfo, CongestionControl, LossInfo, WindowSetup};
use crate::time::{Rate, Time};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SwiftParams {
    /// Additive increment per RTT, packets.
    pub ai_packets: f64,
    /// Multiplicative-decrease gain.
    pub beta: f64,
    /// Largest fraction one decrease removes.
    pub max_mdf: f64,
    /// Target delay of a path with no switches and a large window, ps.
    pub base_target_ps: f64,
    /// Target added per switch on the path, ps.
    pub per_hop_ps: f64,
    /// Largest flow-scaling addition to the target, ps (0 = no flow scaling).
    pub fs_range_ps: f64,
    /// Window (packets) at which the flow-scaling term reaches `fs_range`.
    pub fs_min_window_packets: f64,
    /// Window (packets) at and above which the flow-scaling term is 0.
    pub fs_max_window_packets: f64,
    /// Floor of the window, packets.
    pub min_window_packets: f64,
    /// Consecutive timeouts after which the window drops to `min_cwnd`.
    pub retx_reset_threshold: u32,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SwiftControl {
    p: SwiftParams,
    mss: f64,
    /// Window in packets.
    cwnd: f64,
    max_cwnd: f64,
    /// The flow's target without flow scaling (base + hops x per_hop), ps.
    path_target_ps: f64,
    fs_alpha: f64,
    fs_beta: f64,
    /// Latest RTT sample, ps; `None` before the first ACK.
    rtt_ps: Option<Time>,
    last_decrease: Option<Time>,
    retransmits: u32,
    /// Target and delay of the latest ACK, ps (for traces).
    last_target_ps: f64,
    last_delay_ps: f64,
}

impl SwiftControl {
    pub fn new(p: &SwiftParams, w: &WindowSetup, hops: u32) -> SwiftControl {
        let (lo, hi) = (p.fs_min_window_packets, p.fs_max_window_packets);
        debug_assert!(0.0 < lo && lo < hi);
        let fs_alpha = p.fs_range_ps / (1.0 / lo.sqrt() - 1.0 / hi.sqrt());
        let max_cwnd = w.max_window_packets.map_or(f64::INFINITY, |m| m as f64);
        let cwnd = (w.initial_window_packets as f64).clamp(p.min_window_packets, max_cwnd);
        let path_target_ps = p.base_target_ps + hops as f64 * p.per_hop_ps;
        SwiftControl {
            p: *p,
            mss: w.mss_bytes as f64,
            cwnd,
            max_cwnd,
            path_target_ps,
            fs_alpha,
            fs_beta: -fs_alpha / hi.sqrt(),
            rtt_ps: None,
            last_decrease: None,
            retransmits: 0,
            last_target_ps: path_target_ps,
            last_delay_ps: 0.0,
        }
    }

    /// Window in packets (may be below one).
    pub fn cwnd_packets(&self) -> f64 {
        self.cwnd
    }

    /// The target delay at the current window, ps.
    pub fn target_ps(&self) -> f64 {
        let fs = (self.fs_alpha / self.cwnd.sqrt() + self.fs_beta).clamp(0.0, self.p.fs_range_ps);
        self.path_target_ps + fs
    }

    /// At most one decrease per RTT (the latest sample); always before the first sample.
    fn can_decrease(&self, now: Time) -> bool {
        match (self.last_decrease, self.rtt_ps) {
            (Some(t), Some(rtt)) => now.saturating_sub(t) >= rtt,
            _ => true,
        }
    }

    /// Clamps the window and records the time of a decrease.
    fn settle(&mut self, now: Time, before: f64) {
        self.cwnd = self.cwnd.clamp(self.p.min_window_packets, self.max_cwnd);
        if self.cwnd < before {
            self.last_decrease = Some(now);
        }
        debug_assert!(self.cwnd.is_finite() && self.cwnd >= self.p.min_window_packets);
    }

    fn loss_cut(&mut self, now: Time) {
        if self.can_decrease(now) {
            self.cwnd *= 1.0 - self.p.max_mdf;
        }
    }
}

impl CongestionControl for SwiftControl {
    fn on_ack(&mut self, ack: &AckInfo) -> bool {
        let before = self.cwnd;
        self.retransmits = 0;
        let delay = ack.rtt_sample_ps as f64;
        let target = self.target_ps();
        self.last_target_ps = target;
        self.last_delay_ps = delay;
        let can_decrease = self.can_decrease(ack.now);
        self.rtt_ps = Some(ack.rtt_sample_ps);
        let acked = ack.acked_bytes as f64 / self.mss;
        let mut cut = false;
        if delay < target {
            self.cwnd +=
                if self.cwnd >= 1.0 { self.p.ai_packets / self.cwnd * acked } else { self.p.ai_packets * acked };
        } else if can_decrease {
            self.cwnd *= (1.0 - self.p.beta * (delay - target) / delay).max(1.0 - self.p.max_mdf);
            cut = true;
        }
        self.settle(ack.now, before);
        cut
    }
    fn on_dupack(&mut self) {}
    fn on_fast_retransmit(&mut self, loss: &LossInfo) {
        let before = self.cwnd;
        self.retransmits = 0;
        self.loss_cut(loss.now);
        self.settle(loss.now, before);
    }
    fn on_rto(&mut self, loss: &LossInfo) {
        let before = self.cwnd;
        self.retransmits += 1;
        if self.retransmits >= self.p.retx_reset_threshold {
            self.cwnd = self.p.min_window_packets;
        } else {
            self.loss_cut(loss.now);
        }
        self.settle(loss.now, before);
    }
    fn window_bytes(&self) -> f64 {
        (self.cwnd * self.mss).max(self.mss)
    }
    fn set_window(&mut self, now: Time, bytes: f64) {
        let before = self.cwnd;
        self.cwnd = bytes / self.mss;
        self.settle(now, before);
    }
    /// Below one packet: one packet per rtt / cwnd (the gap is computed over the packet's wire
    /// size, so it is that much longer than rtt / cwnd for the headers).
    fn pacing_rate(&self) -> Option<Rate> {
        let rtt = self.rtt_ps?;
        if self.cwnd >= 1.0 || rtt == 0 {
            return None;
        }
        let bps = self.cwnd * self.mss * 8.0 * 1e12 / rtt as f64;
        Some(Rate::from_bps((bps as u64).max(1)))
    }
    fn state(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("cwnd_bytes", self.cwnd * self.mss));
        out.push(("target_delay_us", self.last_target_ps / 1e6));
        out.push(("delay_us", self.last_delay_ps / 1e6));
    }
    /// Every update ends clamped to [min, max] (`settle`); a reset sets the floor itself.
    fn check_invariants(&self) {
        let (min, max) = (self.p.min_window_packets, self.max_cwnd);
        assert!(
            self.cwnd.is_finite() && (min..=max).contains(&self.cwnd),
            "cwnd {} outside [{min}, {max}] packets",
            self.cwnd
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::AckPhase;
    use super::*;

    const MSS: u64 = 1000;
    const US: Time = 1_000_000;

    /// The SIRD evaluation's settings.
    fn params() -> SwiftParams {
        SwiftParams {
            ai_packets: 1.0,
            beta: 0.8,
            max_mdf: 0.5,
            base_target_ps: 15e6,
            per_hop_ps: 1e6,
            fs_range_ps: 75e6,
            fs_min_window_packets: 0.1,
            fs_max_window_packets: 100.0,
            min_window_packets: 0.001,
            retx_reset_threshold: 5,
        }
    }

    fn control(p: &SwiftParams, cwnd: u64, hops: u32) -> SwiftControl {
        let w = super::super::reno::tests::setup(cwnd, false, None);
        SwiftControl::new(p, &w, hops)
    }

    fn ack(now: Time, acked: u64, rtt: Time) -> AckInfo {
        AckInfo {
            now,
            acked_bytes: acked,
            ece: false,
            rtt_sample_ps: rtt,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            phase: AckPhase::Open,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn additive_increase_is_ai_per_rtt() {
        let mut p = params();
        p.fs_range_ps = 0.0;
        let mut c = control(&p, 10, 2);
        // Ten ACKs of one packet each at 10 us (< 17 us target): ai/cwnd each, ~ +1 packet.
        let mut expect = 10.0;
        for i in 0..10 {
            c.on_ack(&ack(i * US, MSS, 10 * US));
            expect += 1.0 / expect;
            assert!(close(c.cwnd_packets(), expect), "{} vs {expect}", c.cwnd_packets());
        }
        assert!((c.cwnd_packets() - 11.0).abs() < 0.05);
        // Below one packet: ai per packet acked.
        let mut c = control(&p, 1, 2);
        c.cwnd = 0.25;
        c.on_ack(&ack(0, MSS / 2, 10 * US));
        assert!(close(c.cwnd_packets(), 0.75));
    }

    #[test]
    fn decrease_is_proportional_clamped_and_once_per_rtt() {
        let mut p = params();
        p.fs_range_ps = 0.0;
        let mut c = control(&p, 10, 2); // target 17 us
        assert!(close(c.target_ps(), 17e6));
        // Delay 20 us: factor 1 - 0.8 * 3/20 = 0.88.
        assert!(c.on_ack(&ack(100 * US, MSS, 20 * US)));
        assert!(close(c.cwnd_packets(), 8.8));
        // Within one RTT (20 us) of that cut: no further decrease, and no increase either.
        assert!(!c.on_ack(&ack(119 * US, MSS, 200 * US)));
        assert!(close(c.cwnd_packets(), 8.8));
        // One RTT later (the latest sample, 200 us, is now the RTT): not yet at 299 us...
        assert!(!c.on_ack(&ack(299 * US, MSS, 200 * US)));
        // ...at 320 us a huge delay cuts by at most max_mdf: 8.8 * 0.5, not 8.8 * (1 - 0.8 * 183/200).
        assert!(c.on_ack(&ack(320 * US, MSS, 200 * US)));
        assert!(close(c.cwnd_packets(), 4.4));
    }

    #[test]
    fn flow_scaling_target_at_several_windows() {
        let p = params();
        // alpha = 75 / (1/sqrt(0.1) - 1/sqrt(100)) us, beta_fs = -alpha / 10.
        let alpha = 75.0 / (1.0 / 0.1f64.sqrt() - 0.1);
        for (cwnd, hops) in [(0.1, 2u32), (1.0, 2), (4.0, 3), (25.0, 1), (100.0, 2), (400.0, 2), (0.01, 0)] {
            let mut c = control(&p, 1, hops);
            c.cwnd = cwnd;
            let fs = (alpha / f64::sqrt(cwnd) - alpha / 10.0).clamp(0.0, 75.0);
            let expect = (15.0 + hops as f64 + fs) * 1e6;
            assert!((c.target_ps() - expect).abs() < 1.0, "cwnd {cwnd}: {} vs {expect}", c.target_ps());
        }
        // Hand values: cwnd 1 -> alpha - alpha/10 = 0.9 alpha; cwnd 0.1 -> the full range; 100 -> none.
        let mut c = control(&p, 1, 2);
        assert!((c.target_ps() - (17.0 + 0.9 * alpha) * 1e6).abs() < 1.0);
        assert!((0.9 * alpha - 22.04).abs() < 0.01, "0.9 alpha = {}", 0.9 * alpha);
        c.cwnd = 0.1;
        assert!((c.target_ps() - 92e6).abs() < 1.0);
        c.cwnd = 100.0;
        assert!((c.target_ps() - 17e6).abs() < 1.0);
    }

    #[test]
    fn paces_one_packet_per_rtt_over_cwnd_below_one_packet() {
        let p = params();
        let mut c = control(&p, 1, 2);
        assert_eq!(c.pacing_rate(), None, "no RTT sample yet");
        c.on_ack(&ack(0, MSS, 1000 * US)); // far over target: halved (max_mdf) to 0.5
        assert!(close(c.cwnd_packets(), 0.5));
        assert_eq!(c.window_bytes(), MSS as f64, "the sender's window never drops below one packet");
        // One MSS every 1000 us / 0.5 = 2 ms: 1000 B * 8 / 2 ms = 4 Mb/s.
        let r = c.pacing_rate().expect("paced below one packet");
        assert_eq!(r.bps(), 4_000_000);
        assert_eq!(r.tx_time(MSS as u32), 2000 * US);
        c.cwnd = 1.0;
        assert_eq!(c.pacing_rate(), None);
    }

    #[test]
    fn loss_reactions() {
        let p = params();
        let mut c = control(&p, 16, 2);
        let loss = |now| LossInfo { now, snd_una: 0, snd_max: 0, dupacks: 3 };
        c.on_ack(&ack(0, MSS, 10 * US)); // RTT 10 us
        c.on_fast_retransmit(&loss(100 * US));
        let w = c.cwnd_packets();
        assert!(w < 16.0 && close(w, (16.0 + 1.0 / 16.0) * 0.5));
        c.on_fast_retransmit(&loss(105 * US)); // within an RTT: no second cut
        assert!(close(c.cwnd_packets(), w));
        // Timeouts: max_mdf cuts (once per RTT), then min_cwnd at the 5th in a row.
        for k in 1..5u64 {
            c.on_rto(&loss(1000 * US * k));
            assert!(close(c.cwnd_packets(), w * 0.5f64.powi(k as i32)));
        }
        c.on_rto(&loss(9000 * US));
        assert_eq!(c.cwnd_packets(), 0.001);
        // An ACK resets the count.
        c.on_ack(&ack(10_000 * US, MSS, 10 * US));
        c.on_rto(&loss(20_000 * US));
        assert!(c.cwnd_packets() > 0.001);
    }
}
