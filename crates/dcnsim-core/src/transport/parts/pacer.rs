//! A receiver's grant pacer (NDP pulls, SIRD credits, Homa grants): at most one grant per
//! "packet time", the time the granted data takes on the receiver's link, so the data the grants
//! release arrives at line rate (or a fraction of it). Only the arithmetic lives here — when the
//! next grant may go, and whether a timer is already pending; the protocol keeps its own queue of
//! who to grant and sets the timer itself.
//!
//! Use: `ready(now)` says a grant may go now; after sending one, `sent(now, gap_ps)` books the
//! slot. When a grant is wanted but not ready, `arm(now)` returns the time for a timer unless
//! one is already pending; the timer's handler calls `disarm()` before granting again.

use crate::time::{Rate, Time};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceiverPacer {
    /// The earliest time the next grant may go.
    next_free_ps: Time,
    /// A pacer timer is pending.
    armed: bool,
}

impl ReceiverPacer {
    /// A grant may go at `now`: the previous grant's slot has passed.
    #[inline]
    pub fn ready(&self, now: Time) -> bool {
        now >= self.next_free_ps
    }

    /// A grant may go at `now` and no timer is pending to send one (the condition for sending a
    /// grant inline, e.g. piggybacked on an ACK, without jumping ahead of a paced queue).
    #[inline]
    pub fn idle(&self, now: Time) -> bool {
        !self.armed && self.ready(now)
    }

    /// A grant went at `now`; the next may go `gap_ps` later.
    #[inline]
    pub fn sent(&mut self, now: Time, gap_ps: Time) {
        self.next_free_ps = now + gap_ps;
    }

    /// A grant for `wire_bytes` of data at `rate` went at `now`: the next may go once that data has
    /// had time to cross the link.
    #[inline]
    pub fn sent_for(&mut self, now: Time, rate: Rate, wire_bytes: u32) {
        self.sent(now, rate.tx_time(wire_bytes));
    }

    /// When the next grant may go (never before `now`).
    #[inline]
    pub fn next_free_ps(&self, now: Time) -> Time {
        self.next_free_ps.max(now)
    }

    /// Marks a timer pending and returns when it should fire, or `None` if one is pending already.
    #[inline]
    pub fn arm(&mut self, now: Time) -> Option<Time> {
        if self.armed {
            return None;
        }
        self.armed = true;
        Some(self.next_free_ps(now))
    }

    /// The pending timer fired (or the protocol gave it up).
    #[inline]
    pub fn disarm(&mut self) {
        self.armed = false;
    }

    #[inline]
    pub fn is_armed(&self) -> bool {
        self.armed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_grant_per_slot() {
        let mut p = ReceiverPacer::default();
        assert!(p.idle(0));
        p.sent(0, 120);
        assert!(!p.ready(119));
        assert!(p.ready(120));
        assert_eq!(p.next_free_ps(50), 120);
        assert_eq!(p.next_free_ps(500), 500);
    }

    #[test]
    fn arming_is_idempotent_until_disarmed() {
        let mut p = ReceiverPacer::default();
        p.sent(1000, 120);
        assert_eq!(p.arm(1010), Some(1120));
        assert!(p.is_armed());
        assert!(!p.idle(2000), "a pending timer owns the next slot");
        assert_eq!(p.arm(1020), None);
        p.disarm();
        assert!(p.idle(1120));
        // Armed late: the timer fires now, not in the past.
        assert_eq!(p.arm(5000), Some(5000));
    }

    #[test]
    fn grants_at_line_rate_release_data_at_line_rate() {
        // 100 Gb/s, 1500-byte packets: one grant per 120 ns, so 1000 grants span 120 us.
        let rate = Rate::from_gbps(100.0);
        let mut p = ReceiverPacer::default();
        let mut now = 0;
        let mut grants = 0;
        while grants < 1000 {
            if p.ready(now) {
                p.sent_for(now, rate, 1500);
                grants += 1;
            }
            now = p.next_free_ps(now);
        }
        assert_eq!(now, 1000 * 120_000);
    }
}
