//! Loss recovery of the receiver-driven protocols (Homa, SIRD, dcPIM): a lazy, backed-off silence
//! timer per side of a message, and the RESEND requests a receiver sends for what is missing.
//!
//! The timer is lazy: progress only moves `last` on, and a timer event that fires before the
//! deadline (silence measured from the newer `last`) re-arms for the new deadline instead of
//! acting. Each expiry without progress doubles the timeout, up to `MAX_BACKOFF` doublings; the
//! protocol resets the back-off when the message makes progress its own way.
//!
//! Use: `arm(timeout, now)` gives the time to set a timer for, unless one is pending; the timer's
//! handler calls `fired(timeout, now)` (it disarms) and acts only when that is true, typically
//! `back_off()`, stamping `heard(now)`, sending, and arming again. Only the arithmetic lives here;
//! the protocol sets the timers and sends the packets.

use crate::time::Time;
use crate::transport::parts::ReceivedSet;

/// Timeouts back off up to timeout x 2^this.
pub const MAX_BACKOFF: u32 = 6;
const _: () = assert!(MAX_BACKOFF <= crate::limits::MAX_RTO_BACKOFF_SHIFT, "limits.rs bounds timers by this shift");
/// RESEND requests per receiver timeout (further runs go at the next timeout).
pub const MAX_RESEND_RUNS: usize = 16;

/// One side's silence timer: when it last heard from the other side (or made progress), how often
/// the timeout has doubled, and whether a timer event is pending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SilenceTimer {
    pub last: Time,
    pub backoff: u32,
    pub armed: bool,
}

impl SilenceTimer {
    /// Silent since `now`, not backed off, no timer pending.
    pub fn new(now: Time) -> SilenceTimer {
        SilenceTimer { last: now, backoff: 0, armed: false }
    }

    /// When silence since `last` lasts the (backed-off) `timeout`.
    #[inline]
    pub fn deadline(&self, timeout: Time) -> Time {
        self.last + (timeout << self.backoff)
    }

    /// The other side was heard from (or the side made progress) at `now`.
    #[inline]
    pub fn heard(&mut self, now: Time) {
        self.last = now;
    }

    /// The next silence starts afresh: the timeout is no longer backed off.
    #[inline]
    pub fn end_back_off(&mut self) {
        self.backoff = 0;
    }

    /// Progress at `now` that ends the back-off too (`heard` and `end_back_off`).
    #[inline]
    pub fn progressed(&mut self, now: Time) {
        self.heard(now);
        self.end_back_off();
    }

    /// Marks a timer pending and returns when it should fire (the deadline, not in the past), or
    /// `None` if one already is.
    #[inline]
    pub fn arm(&mut self, timeout: Time, now: Time) -> Option<Time> {
        if self.armed {
            return None;
        }
        self.armed = true;
        Some(self.deadline(timeout).max(now))
    }

    /// The pending timer fired at `now` (no longer pending): whether the whole timeout passed in
    /// silence. If not, the protocol arms again for the later deadline.
    #[inline]
    pub fn fired(&mut self, timeout: Time, now: Time) -> bool {
        self.armed = false;
        now >= self.deadline(timeout)
    }

    /// One more expiry without progress: the next timeout is twice as long (up to the cap).
    #[inline]
    pub fn back_off(&mut self) {
        self.backoff = (self.backoff + 1).min(MAX_BACKOFF);
    }
}

/// The RESEND requests for the packets missing below `frontier` (granted or credited): one per
/// run of missing packets, as (first packet, packets in the run clamped to `u32`), lowest first,
/// at most `MAX_RESEND_RUNS` of them.
pub fn resend_requests(rx: &ReceivedSet, frontier: u64) -> impl Iterator<Item = (u64, u32)> {
    rx.missing_runs(frontier, MAX_RESEND_RUNS).into_iter().map(|(a, b)| (a, (b - a).min(u32::MAX as u64) as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timer_arms_once_and_fires_only_after_a_whole_silence() {
        let mut t = SilenceTimer::new(1_000);
        assert_eq!(t.arm(100, 1_000), Some(1_100));
        assert_eq!(t.arm(100, 1_050), None, "one pending timer at a time");
        t.heard(1_080); // progress moves the deadline on
        assert!(!t.fired(100, 1_100), "fired before the newer deadline");
        assert_eq!(t.arm(100, 1_100), Some(1_180));
        assert!(t.fired(100, 1_180));
        assert!(!t.armed);
    }

    #[test]
    fn back_off_doubles_the_timeout_up_to_the_cap_and_progress_resets_it() {
        let mut t = SilenceTimer::new(0);
        t.back_off();
        assert_eq!(t.deadline(100), 200);
        for _ in 0..20 {
            t.back_off();
        }
        assert_eq!(t.backoff, MAX_BACKOFF);
        assert_eq!(t.deadline(100), 100 << MAX_BACKOFF);
        t.progressed(500);
        assert_eq!(t.deadline(100), 600);
        // A deadline in the past arms for now.
        assert_eq!(t.arm(100, 700), Some(700));
    }

    #[test]
    fn resend_requests_cover_each_missing_run_below_the_frontier() {
        let mut rx = ReceivedSet::default();
        for i in [0, 1, 4, 7, 8] {
            rx.insert(i);
        }
        let runs: Vec<_> = resend_requests(&rx, 12).collect();
        assert_eq!(runs, [(2, 2), (5, 2), (9, 3)]);
        assert_eq!(resend_requests(&rx, 6).collect::<Vec<_>>(), [(2, 2), (5, 1)]);
        let mut sparse = ReceivedSet::default();
        for i in (1..100).step_by(2) {
            sparse.insert(i);
        }
        assert_eq!(resend_requests(&sparse, 100).count(), MAX_RESEND_RUNS);
    }
}
