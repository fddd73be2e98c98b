//! DCQCN's reaction point (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments",
//! SIGCOMM 2015, section 3), in the form the HPCC authors' ns-3 runs it (`rdma-hw.cc`, "Mellanox's
//! version of DCQCN": `cnp_received_mlx`, `UpdateAlphaMlx`, `CheckRateDecreaseMlx`,
//! `RateIncEventTimerMlx` and the three increase functions). The protocol, its keys and their
//! sources are in `transport/dcqcn.rs`.
//!
//! - The first CNP sets alpha = 1, the rate and target rate to `first_cnp_fraction` x the rate,
//!   and starts two timers that run until the QP ends: the alpha update every
//!   `alpha_interval` (alpha <- (1 - g) alpha + g if a CNP came since the last update, else
//!   (1 - g) alpha) and the rate-decrease check every `decrease_interval`, the first one 1 ns after
//!   a whole interval (the reference's offset: a check never coincides with an alpha update).
//! - A check that finds a CNP since the last check cuts: target <- rate (only if an increase
//!   happened since the last cut, or always with `clamp_target`), rate <- max(min, rate (1 -
//!   alpha / 2)), the increase stage resets and the increase timer restarts (`increase_interval`).
//! - Each increase event: fast recovery (rate <- (rate + target) / 2) while the stage is below F,
//!   additive increase (target += AI) at stage F, hyper increase (target += HAI) above; target
//!   capped at line rate, rate <- (rate + target) / 2 in both.
//! - Byte counter (an option; the reference has none): every `byte_counter` bytes sent after a cut
//!   is an increase event too, with its own stage BC. Stages then follow the paper's QCN rule:
//!   fast recovery while both stages are below F, hyper increase once both are above F, additive
//!   otherwise. Without a byte counter BC is taken equal to the timer stage, which is the rule above.
//!
//! Events at one instant run as alpha update, increase, decrease check (the reference's order for
//! the increase timer and the check, which coincide when the increase interval is a multiple of
//! the check interval; a CNP arriving at that instant comes after them). The timers are evaluated
//! lazily: at any call, the due ticks run first, in time order; a real wake-up is needed only when
//! the rate can change (a pending cut, an increase).

use super::{scaled, QpRate};
use crate::time::Time;
use crate::transport::rate::{RateAck, RateControl};

/// The reference's offset of the first rate-decrease check (1 ns).
const DECREASE_OFFSET: Time = 1000;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DcqcnLaw {
    pub g: f64,
    pub alpha_interval: Time,
    pub decrease_interval: Time,
    pub increase_interval: Time,
    /// F: fast-recovery steps before additive increase.
    pub fast_recovery_steps: u32,
    pub line_bps: u64,
    pub ai_bps: u64,
    pub hai_bps: u64,
    pub min_bps: u64,
    pub clamp_target: bool,
    pub first_cnp_fraction: f64,
    pub byte_counter: Option<u64>,
}

#[derive(Clone, Debug)]
pub struct Dcqcn {
    law: DcqcnLaw,
    rate: QpRate,
    target_bps: u64,
    alpha: f64,
    /// A CNP came since the last alpha update / decrease check.
    alpha_cnp: bool,
    decrease_cnp: bool,
    /// The first CNP came: the alpha and decrease timers run.
    started: bool,
    next_alpha: Time,
    /// The first decrease check; the others follow every `decrease_interval`.
    decrease_phase: Time,
    next_decrease: Time,
    next_increase: Option<Time>,
    time_stage: u32,
    byte_stage: u32,
    bytes_since_cut: u64,
    cuts: u64,
}

impl Dcqcn {
    pub fn new(law: DcqcnLaw) -> Dcqcn {
        debug_assert!(law.alpha_interval > 0 && law.decrease_interval > 0 && law.increase_interval > 0);
        Dcqcn {
            law,
            rate: QpRate::new(law.line_bps),
            target_bps: law.line_bps,
            alpha: 1.0,
            alpha_cnp: false,
            decrease_cnp: false,
            started: false,
            next_alpha: 0,
            decrease_phase: 0,
            next_decrease: 0,
            next_increase: None,
            time_stage: 0,
            byte_stage: 0,
            bytes_since_cut: 0,
            cuts: 0,
        }
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    pub fn rate_bps(&self) -> u64 {
        self.rate.bps()
    }

    pub fn target_bps(&self) -> u64 {
        self.target_bps
    }

    /// Rate cuts so far.
    pub fn cuts(&self) -> u64 {
        self.cuts
    }

    /// The first decrease check after `now`.
    fn next_check_after(&self, now: Time) -> Time {
        let (phase, step) = (self.decrease_phase, self.law.decrease_interval);
        if now < phase {
            phase
        } else {
            phase + ((now - phase) / step + 1) * step
        }
    }

    /// Runs every timer tick due at or before `now`, in time order.
    fn catch_up(&mut self, now: Time) {
        loop {
            // Before the first CNP only an increase timer started by `set_rate` can be due.
            let ta = if self.started { self.next_alpha } else { Time::MAX };
            let ti = self.next_increase.unwrap_or(Time::MAX);
            let td = if self.decrease_cnp { self.next_decrease } else { Time::MAX };
            let t = ta.min(ti).min(td);
            if t > now {
                break;
            }
            if ta == t {
                self.update_alpha();
                self.next_alpha += self.law.alpha_interval;
            } else if ti == t {
                self.next_increase = Some(t + self.law.increase_interval);
                self.increase();
                self.time_stage += 1;
            } else {
                self.cut(t);
            }
        }
    }

    fn update_alpha(&mut self) {
        let g = self.law.g;
        self.alpha = if self.alpha_cnp { (1.0 - g) * self.alpha + g } else { (1.0 - g) * self.alpha };
        self.alpha_cnp = false;
    }

    /// A decrease check that found a CNP, at `t`.
    fn cut(&mut self, t: Time) {
        debug_assert!(self.decrease_cnp);
        let increased = self.time_stage != 0 || self.byte_stage != 0;
        if self.law.clamp_target || increased {
            self.target_bps = self.rate.bps();
        }
        self.rate.set(scaled(self.rate.bps(), 1.0 - self.alpha / 2.0).max(self.law.min_bps));
        self.time_stage = 0;
        self.byte_stage = 0;
        self.bytes_since_cut = 0;
        self.decrease_cnp = false;
        self.next_increase = Some(t + self.law.increase_interval);
        self.cuts += 1;
    }

    /// One increase event (timer or byte counter), chosen by the stages before it counts.
    fn increase(&mut self) {
        let f = self.law.fast_recovery_steps;
        let t = self.time_stage;
        let b = if self.law.byte_counter.is_some() { self.byte_stage } else { t };
        if t.max(b) >= f {
            let step = if t.min(b) > f { self.law.hai_bps } else { self.law.ai_bps };
            self.target_bps = (self.target_bps + step).min(self.law.line_bps);
        }
        self.rate.set(self.rate.bps() / 2 + self.target_bps / 2);
    }
}

impl RateControl for Dcqcn {
    fn on_ack(&mut self, _ack: &RateAck<'_>) {}

    fn on_cnp(&mut self, now: Time) {
        self.catch_up(now);
        self.alpha_cnp = true;
        if !self.started {
            self.started = true;
            self.alpha = 1.0;
            self.alpha_cnp = false;
            self.next_alpha = now + self.law.alpha_interval;
            self.decrease_phase = now + self.law.decrease_interval + DECREASE_OFFSET;
            let r = scaled(self.rate.bps(), self.law.first_cnp_fraction);
            self.rate.set(r);
            self.target_bps = r;
        }
        if !self.decrease_cnp {
            self.decrease_cnp = true;
            self.next_decrease = self.next_check_after(now);
        }
    }

    fn on_send(&mut self, now: Time, wire_bytes: u32) {
        let Some(bc) = self.law.byte_counter else { return };
        if self.next_increase.is_none() {
            return; // counts from the first cut on
        }
        self.catch_up(now);
        self.bytes_since_cut += wire_bytes as u64;
        while self.bytes_since_cut >= bc {
            self.bytes_since_cut -= bc;
            self.increase();
            self.byte_stage += 1;
        }
    }

    fn rate(&self) -> crate::time::Rate {
        self.rate.rate()
    }

    /// The slow-start hand-over: as a cut without alpha: the rate becomes `bps`, the target stays,
    /// and the increase timer runs (fast recovery towards the target) without a CNP.
    fn set_rate(&mut self, now: Time, bps: u64) {
        self.catch_up(now);
        self.rate.set(bps.clamp(self.law.min_bps, self.law.line_bps));
        self.target_bps = self.target_bps.max(self.rate.bps());
        self.time_stage = 0;
        self.byte_stage = 0;
        self.bytes_since_cut = 0;
        self.next_increase = Some(now + self.law.increase_interval);
    }

    /// Algorithm 1's "CurRate = NewRate" and nothing else, as PB-FS over the reference's QP: the
    /// target stays (line rate until the first CNP, which makes the rate then the target, the
    /// reference's `rateOnFirstCNP`) and no timer starts (the reference's increase timer runs only
    /// after a cut). A flow PB-FS slowed that is never marked keeps its rate; one that is marked
    /// recovers towards that rate, not towards line rate. (`set_rate`, the slow-start hand-over,
    /// starts the increase timer: the Fig. 5 DCQCN p95 gain was 1.76x with it, 1.92x without.)
    fn take_pbfs_rate(&mut self, now: Time, bps: u64) {
        self.catch_up(now);
        self.rate.set(bps.clamp(self.law.min_bps, self.law.line_bps));
        self.target_bps = self.target_bps.max(self.rate.bps());
    }

    fn wake_at(&self) -> Option<Time> {
        let check = self.decrease_cnp.then_some(self.next_decrease);
        match (self.next_increase, check) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn on_wake(&mut self, now: Time) {
        self.catch_up(now);
    }

    fn state(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("rate_gbps", self.rate.bps() as f64 / 1e9));
        out.push(("target_rate_gbps", self.target_bps as f64 / 1e9));
        out.push(("alpha", self.alpha));
    }
    /// alpha is an EWMA of 0s and 1s; the rate never passes the target (a cut lowers the rate
    /// under it, an increase moves the rate halfway to it, a start layer's rate raises it), and the
    /// target never passes line rate.
    fn check_invariants(&self) {
        assert!((0.0..=1.0).contains(&self.alpha), "alpha {} outside [0, 1]", self.alpha);
        let (rate, target, line) = (self.rate.bps(), self.target_bps, self.law.line_bps);
        assert!(rate <= target && target <= line, "rate {rate} <= target {target} <= line {line} b/s broken");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::from_us;

    const G: f64 = 1.0 / 256.0;
    const LINE: u64 = 100_000_000_000;

    /// The reference's run.py "dcqcn" at 100 Gb/s.
    fn law() -> DcqcnLaw {
        DcqcnLaw {
            g: G,
            alpha_interval: from_us(1.0),
            decrease_interval: from_us(4.0),
            increase_interval: from_us(300.0),
            fast_recovery_steps: 1,
            line_bps: LINE,
            ai_bps: 20_000_000,
            hai_bps: 200_000_000,
            min_bps: 1_000_000_000,
            clamp_target: false,
            first_cnp_fraction: 1.0,
            byte_counter: None,
        }
    }

    fn us(x: f64) -> Time {
        from_us(x)
    }

    #[test]
    fn alpha_is_an_ewma_of_cnp_arrivals_per_interval() {
        let mut d = Dcqcn::new(law());
        d.on_cnp(us(10.0));
        assert_eq!(d.alpha(), 1.0, "the first CNP sets alpha to 1");
        // Ticks at 11, 12, 13 us; a CNP at 11.5 us counts in the tick at 12.
        d.on_cnp(us(11.5));
        d.on_wake(us(13.0));
        let a1 = 1.0 - G; // 11: no CNP since the first one (its flag is cleared)
        let a2 = (1.0 - G) * a1 + G; // 12: the CNP at 11.5
        let a3 = (1.0 - G) * a2; // 13
        assert_eq!(d.alpha(), a3);
        // A CNP exactly at a tick counts in the next one (ticks at an instant run first).
        d.on_cnp(us(14.0));
        d.on_wake(us(15.0));
        assert_eq!(d.alpha(), (1.0 - G) * ((1.0 - G) * a3) + G);
    }

    #[test]
    fn a_check_after_a_cnp_cuts_by_half_alpha_and_keeps_the_target() {
        let mut d = Dcqcn::new(law());
        d.on_cnp(0);
        assert_eq!((d.rate_bps(), d.target_bps()), (LINE, LINE), "rate on the first CNP: 1.0 x rate");
        // The check runs at 4 us + 1 ns, after the alpha updates at 1, 2, 3 and 4 us.
        let check = us(4.0) + 1000;
        assert_eq!(d.wake_at(), Some(check));
        d.on_wake(check - 1);
        assert_eq!(d.rate_bps(), LINE);
        d.on_wake(check);
        let alpha = (1.0 - G) * (1.0 - G) * (1.0 - G) * (1.0 - G);
        assert_eq!(d.alpha(), alpha);
        assert_eq!(d.rate_bps(), (LINE as f64 * (1.0 - alpha / 2.0)) as u64);
        assert_eq!(d.target_bps(), LINE, "no increase since the last cut: the target is not clamped");
        assert_eq!(d.cuts(), 1);
        // No CNP since: the next checks do nothing, and the next wake-up is the increase timer.
        assert_eq!(d.wake_at(), Some(check + us(300.0)));
    }

    #[test]
    fn fast_recovery_then_additive_then_hyper_increase() {
        let mut l = law();
        l.fast_recovery_steps = 2;
        let mut d = Dcqcn::new(l);
        d.on_cnp(0);
        let t0 = us(4.0) + 1000;
        d.on_wake(t0);
        let mut rate = d.rate_bps();
        let mut target = LINE;
        // A second cut after one increase clamps the target to the rate at that moment.
        d.on_wake(t0 + us(300.0));
        rate = rate / 2 + target / 2;
        assert_eq!(d.rate_bps(), rate, "fast recovery: halfway to the target");
        d.on_cnp(t0 + us(301.5));
        let t1 = t0 + us(304.0); // the check after the CNP (checks every 4 us from t0)
        assert_eq!(d.wake_at(), Some(t1));
        d.on_wake(t1);
        let alpha = d.alpha();
        target = rate;
        rate = (rate as f64 * (1.0 - alpha / 2.0)) as u64;
        assert_eq!((d.rate_bps(), d.target_bps()), (rate, target));
        // F = 2: stages 0 and 1 recover, 2 adds AI, 3 and 4 add HAI.
        let steps = [0, 0, 20_000_000, 200_000_000, 200_000_000];
        for (k, step) in steps.into_iter().enumerate() {
            let at = t1 + (k as u64 + 1) * us(300.0);
            assert_eq!(d.wake_at(), Some(at), "increase {k}");
            d.on_wake(at);
            target = (target + step).min(LINE);
            rate = rate / 2 + target / 2;
            assert_eq!((d.rate_bps(), d.target_bps()), (rate, target), "increase {k}");
        }
        assert!(rate < target && target < LINE);
    }

    #[test]
    fn the_target_never_exceeds_line_rate_and_the_rate_never_falls_below_the_minimum() {
        let mut l = law();
        l.min_bps = 60_000_000_000;
        l.clamp_target = true;
        let mut d = Dcqcn::new(l);
        // A CNP in every check interval for 1 ms: cut after cut, floored at the minimum.
        for k in 0..250 {
            d.on_cnp(us(4.0 * k as f64));
        }
        d.on_wake(us(1000.0));
        assert_eq!(d.rate_bps(), 60_000_000_000);
        assert!(d.cuts() > 200);
        // Then none: recovery to line rate, never above.
        for k in 1..=400 {
            d.on_wake(us(1000.0 + 300.0 * k as f64));
            assert!(d.target_bps() <= LINE && d.rate_bps() <= d.target_bps(), "{} {}", d.rate_bps(), d.target_bps());
        }
        assert!(d.rate_bps() > LINE - 1_000_000, "recovered to {}", d.rate_bps());
    }

    #[test]
    fn the_byte_counter_adds_increase_events() {
        let mut l = law();
        l.byte_counter = Some(10_000);
        let mut d = Dcqcn::new(l);
        d.on_send(0, 50_000); // before any cut: not counted
        d.on_cnp(0);
        let t0 = us(4.0) + 1000;
        d.on_wake(t0);
        let mut rate = d.rate_bps();
        // 25 KB after the cut: two byte-counter events (BC 0 and 1, T 0) — fast recovery, then
        // additive increase (one stage reached F = 1).
        d.on_send(t0 + 10, 25_000);
        rate = rate / 2 + LINE / 2;
        rate = rate / 2 + LINE / 2;
        assert_eq!(d.rate_bps(), rate);
        assert_eq!(d.target_bps(), LINE, "AI is capped at line rate");
        // The timer event at +300 us (T 0, BC 2), a byte event then (T 1, BC 2) and the next timer
        // event (T 1, BC 3): additive (hyper needs both stages above F). All capped at line rate;
        // each halves the gap to the target.
        d.on_wake(t0 + us(300.0));
        d.on_send(t0 + us(300.0), 10_000);
        d.on_wake(t0 + us(600.0));
        for _ in 0..3 {
            rate = rate / 2 + LINE / 2;
        }
        assert_eq!(d.rate_bps(), rate);
    }

    #[test]
    fn a_pbfs_rate_changes_only_the_rate_until_the_first_cnp_makes_it_the_target() {
        let mut d = Dcqcn::new(law());
        d.take_pbfs_rate(us(5.0), 10_000_000_000);
        assert_eq!((d.rate_bps(), d.target_bps(), d.alpha()), (10_000_000_000, LINE, 1.0));
        assert_eq!(d.wake_at(), None, "no increase timer: the rate stays without a CNP");
        d.on_wake(us(5000.0));
        assert_eq!(d.rate_bps(), 10_000_000_000);
        // Below the minimum rate: the minimum.
        d.take_pbfs_rate(us(5001.0), 1);
        assert_eq!(d.rate_bps(), 1_000_000_000);
        d.take_pbfs_rate(us(5002.0), 10_000_000_000);
        // The first CNP makes the rate the target (rate on the first CNP: 1.0 x); the check cuts it;
        // recovery goes back towards 10 Gb/s (+ AI), not towards line rate.
        d.on_cnp(us(6000.0));
        assert_eq!(d.target_bps(), 10_000_000_000);
        d.on_wake(us(6004.0) + 1000);
        let alpha = (1.0 - G) * (1.0 - G) * (1.0 - G) * (1.0 - G);
        let cut = (10_000_000_000f64 * (1.0 - alpha / 2.0)) as u64;
        assert_eq!(d.rate_bps(), cut);
        d.on_wake(us(6304.0) + 1000);
        assert_eq!(d.target_bps(), 10_000_000_000, "F = 1: the first increase is fast recovery");
        assert_eq!(d.rate_bps(), cut / 2 + 5_000_000_000);
        // set_rate (the slow-start hand-over) instead starts the increase timer.
        let mut e = Dcqcn::new(law());
        e.set_rate(us(5.0), 10_000_000_000);
        assert_eq!(e.wake_at(), Some(us(305.0)));
        e.on_wake(us(305.0));
        assert_eq!(e.rate_bps(), 10_000_000_000 / 2 + LINE / 2);
    }
}
