//! The sender's path choice (NDP section 3.2.3, thresholds from htsim): a random permutation of
//! the equal-cost paths used one packet per path, re-permuted after each pass, and a per-path
//! scoreboard of ACKs and NACKs that takes outlier paths out of the rotation. Also the short
//! feedback history behind the return-to-sender decision.

use crate::engine::prefetch;
use crate::engine::rng::Rng;

/// What the sender heard about one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feedback {
    Ack,
    Nack,
    /// The header came back from a full switch queue.
    Bounce,
    /// The RTO declared the packet lost (section 3.2.3's per-path loss counter; htsim has none).
    Loss,
}

#[derive(Clone, Copy, Default)]
struct PathScore {
    acks: u32,
    nacks: u32,
    /// Penalty count (htsim's avoid ratio): +1 per feedback that finds the path an outlier, -1 per
    /// feedback that does not; the path is skipped while it is positive.
    avoid: u32,
}

/// One connection's paths: the permutation being walked and each path's score.
#[derive(Default)]
pub struct PathScoreboard {
    order: Vec<u32>,
    cursor: usize,
    scores: Vec<PathScore>,
    /// Sums of ACKs and NACKs over all paths (for the outlier test's means).
    total_acks: u64,
    total_nacks: u64,
    /// The path after the cursor in the permutation (or `u32::MAX` at its end), remembered while
    /// `order` is in cache: a prefetch hint for the next send, whose score lies in a cold line
    /// (`prefetch_next`). Not read by the path choice.
    upcoming: u32,
}

impl PathScoreboard {
    /// `n` paths (1 without source routing), in a random order drawn from `rng`.
    pub fn new(n: u32, rng: &mut Rng) -> PathScoreboard {
        let mut order: Vec<u32> = (0..n).collect();
        rng.shuffle(&mut order);
        PathScoreboard { order, scores: vec![PathScore::default(); n as usize], ..PathScoreboard::default() }
    }

    /// The next path in the permutation, skipping penalized paths (with `penalty`) and `avoid`
    /// (a retransmission's last path); after 4 passes without a candidate, whatever comes next.
    pub fn next(&mut self, rng: &mut Rng, penalty: bool, avoid: Option<u16>) -> u32 {
        let n = self.order.len();
        if n <= 1 {
            return 0;
        }
        for _ in 0..4 * n {
            self.cursor += 1;
            if self.cursor >= n {
                rng.shuffle(&mut self.order);
                self.cursor = 0;
            }
            let p = self.order[self.cursor];
            // As in htsim, a penalized path stays out of the rotation until feedback from packets
            // still in flight on it brings its count back to zero.
            if penalty && self.scores[p as usize].avoid > 0 {
                continue;
            }
            if avoid == Some(p as u16) {
                continue;
            }
            self.upcoming = self.order.get(self.cursor + 1).copied().unwrap_or(u32::MAX);
            return p;
        }
        self.order[self.cursor]
    }

    /// Scores feedback for a packet sent on `path`; with `penalty`, updates its outlier count.
    pub fn record(&mut self, path: u16, fb: Feedback, penalty: bool) {
        if self.scores.len() <= 1 {
            return;
        }
        let n = self.scores.len() as u64;
        let s = &mut self.scores[path as usize];
        // A return or a loss is a more severe NACK (htsim weighs returns so).
        let (acks, nacks) = match fb {
            Feedback::Ack => (1, 0),
            Feedback::Nack => (0, 1),
            Feedback::Bounce | Feedback::Loss => (0, 3),
        };
        s.acks += acks;
        s.nacks += nacks;
        self.total_acks += acks as u64;
        self.total_nacks += nacks as u64;
        if !penalty {
            return;
        }
        // htsim's outlier test: enough samples, NACK ratio above 30% and 1.25x the mean ratio.
        let (ma, mn) = (self.total_acks / n, self.total_nacks / n);
        let ratio = if s.acks > 10 { s.nacks as u64 * 100 / s.acks as u64 } else { 0 };
        let mean_ratio = (mn * 100).checked_div(ma).unwrap_or(100);
        if s.acks + s.nacks > 100 && ratio * 4 > mean_ratio * 5 && ratio > 30 {
            s.avoid += 1;
        } else if s.avoid > 0 {
            s.avoid -= 1;
        }
    }

    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Prefetch hint: the score feedback for `path` updates.
    #[inline(always)]
    pub fn prefetch_score(&self, path: u16) {
        if let Some(s) = self.scores.get(path as usize) {
            prefetch::line(s);
        }
    }

    /// Prefetch hint: what the next `next` probably reads (the permutation at the cursor and the
    /// upcoming path's score).
    #[inline(always)]
    pub fn prefetch_next(&self) {
        if let Some(p) = self.order.get(self.cursor + 1) {
            prefetch::line(p);
        }
        if let Some(s) = self.scores.get(self.upcoming as usize) {
            prefetch::line(s);
        }
    }

    /// The cursor is inside the permutation, the permutation covers every path once, and the
    /// totals are the sums of the per-path counts.
    pub fn check_invariants(&self) {
        let n = self.order.len();
        assert_eq!(self.scores.len(), n, "a score per path");
        assert!(self.cursor < n.max(1), "path cursor {} of {n}", self.cursor);
        let mut seen = vec![false; n];
        for &p in &self.order {
            assert!((p as usize) < n && !seen[p as usize], "path order is a permutation: {:?}", self.order);
            seen[p as usize] = true;
        }
        let acks: u64 = self.scores.iter().map(|s| s.acks as u64).sum();
        let nacks: u64 = self.scores.iter().map(|s| s.nacks as u64).sum();
        assert_eq!((acks, nacks), (self.total_acks, self.total_nacks), "path score totals");
    }
}

/// Feedback events remembered per connection for the return-to-sender decision (htsim: 12).
const HISTORY: usize = 12;

/// The last [`HISTORY`] feedback events of a connection.
#[derive(Default)]
pub struct FeedbackHistory {
    events: [Option<Feedback>; HISTORY],
    at: usize,
}

impl FeedbackHistory {
    pub fn push(&mut self, fb: Feedback) {
        self.events[self.at] = Some(fb);
        self.at = (self.at + 1) % HISTORY;
    }

    /// More than a quarter of the recent feedback was ACKs: a returned header then points at a bad
    /// path rather than an incast (htsim's test: events / ACKs <= 3 in integers).
    pub fn looks_like_bad_path(&self) -> bool {
        let (mut acks, mut total) = (0u32, 0u32);
        for fb in self.events.iter().flatten() {
            total += 1;
            acks += u32::from(*fb == Feedback::Ack);
        }
        acks > 0 && total / acks <= 3
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_pass_visits_every_path_once_in_a_fresh_order() {
        let mut rng = Rng::seed_from(3);
        let mut b = PathScoreboard::new(8, &mut rng);
        // Walk to the end of the first permutation; from there each 8 calls are one pass.
        while b.cursor != 7 {
            b.next(&mut rng, true, None);
        }
        let mut passes = Vec::new();
        for _ in 0..4 {
            let pass: Vec<u32> = (0..8).map(|_| b.next(&mut rng, true, None)).collect();
            let mut sorted = pass.clone();
            sorted.sort();
            assert_eq!(sorted, (0..8).collect::<Vec<_>>(), "{pass:?}");
            passes.push(pass);
            b.check_invariants();
        }
        passes.dedup();
        assert!(passes.len() > 1, "re-permuted after each pass");
    }

    #[test]
    fn a_retransmission_avoids_its_last_path() {
        let mut rng = Rng::seed_from(5);
        let mut b = PathScoreboard::new(2, &mut rng);
        for _ in 0..50 {
            assert_eq!(b.next(&mut rng, true, Some(1)), 0);
        }
        let mut one = PathScoreboard::new(1, &mut rng);
        assert_eq!(one.next(&mut rng, true, Some(0)), 0, "a single path is used regardless");
    }

    #[test]
    fn an_outlier_path_is_skipped_until_its_feedback_looks_normal() {
        let mut rng = Rng::seed_from(9);
        let mut b = PathScoreboard::new(4, &mut rng);
        // Paths 0-2 healthy; path 3 NACKs 40% of its packets.
        for i in 0..200u32 {
            for p in 0..3 {
                b.record(p, Feedback::Ack, true);
            }
            b.record(3, if i % 5 < 2 { Feedback::Nack } else { Feedback::Ack }, true);
        }
        assert!(b.scores[3].avoid > 0);
        assert!((0..100).all(|_| b.next(&mut rng, true, None) != 3), "penalized path left out");
        assert!((0..100).any(|_| b.next(&mut rng, false, None) == 3), "used without penalties");
        // A feedback that does not find it an outlier takes one step back.
        let avoid = b.scores[3].avoid;
        b.scores[3].nacks = 0;
        b.total_nacks = 0;
        b.record(3, Feedback::Ack, true);
        assert_eq!(b.scores[3].avoid, avoid - 1);
        b.check_invariants();
    }

    #[test]
    fn returns_and_losses_weigh_three_nacks() {
        let mut rng = Rng::seed_from(1);
        let mut b = PathScoreboard::new(3, &mut rng);
        b.record(1, Feedback::Bounce, false);
        b.record(1, Feedback::Loss, false);
        b.record(2, Feedback::Nack, false);
        assert_eq!((b.scores[1].nacks, b.scores[2].nacks, b.total_nacks), (6, 1, 7));
        b.check_invariants();
    }

    #[test]
    fn a_bad_path_needs_over_a_quarter_acks_among_recent_feedback() {
        let mut h = FeedbackHistory::default();
        assert!(!h.looks_like_bad_path(), "no feedback: an incast until shown otherwise");
        for _ in 0..9 {
            h.push(Feedback::Nack);
        }
        h.push(Feedback::Ack);
        assert!(!h.looks_like_bad_path(), "1 ACK in 10");
        h.push(Feedback::Ack);
        h.push(Feedback::Ack);
        assert!(!h.looks_like_bad_path(), "3 ACKs in 12: exactly a quarter");
        h.push(Feedback::Ack);
        assert!(h.looks_like_bad_path(), "4 ACKs in 12 (the oldest NACK dropped out)");
        // The ring keeps only the last 12.
        for _ in 0..12 {
            h.push(Feedback::Bounce);
        }
        assert!(!h.looks_like_bad_path());
    }
}
