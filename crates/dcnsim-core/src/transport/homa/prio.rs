//! Homa's priority levels: which class a packet goes in. The highest `unscheduled` levels carry
//! unscheduled data, chosen by message size against cut-offs that give each level an equal share
//! of the unscheduled bytes (the Homa simulator's STATIC_FROM_CBF: the cumulative-bytes function of
//! the size distribution with every message's bytes capped at RTTbytes, read at 1/U, 2/U, ...;
//! sizes are taken at the distribution's points, as the simulator's discrete sampling does). The
//! lowest `scheduled` levels carry scheduled data: a receiver's active messages in SRPT order get
//! the scheduled levels from the highest down, and with fewer active messages than levels the
//! lowest levels are used (so a new shorter message still finds a higher level free).

use crate::workload::cdf::Cdf;

#[derive(Clone, Debug, PartialEq)]
pub struct Levels {
    /// Unscheduled levels: classes 0..unscheduled.
    unscheduled: u8,
    /// Scheduled levels: classes unscheduled..unscheduled + scheduled.
    scheduled: u8,
    /// Unscheduled level i takes messages of size <= cutoffs[i]; the last is u64::MAX.
    cutoffs: Vec<u64>,
}

impl Levels {
    /// `cutoffs`: one size per unscheduled level but the last, ascending.
    pub fn new(unscheduled: u8, scheduled: u8, cutoffs: &[u64]) -> Levels {
        assert!(unscheduled >= 1 && scheduled >= 1 && unscheduled + scheduled <= 8);
        assert!(cutoffs.len() < unscheduled as usize && cutoffs.windows(2).all(|w| w[0] < w[1]));
        let mut c = cutoffs.to_vec();
        c.push(u64::MAX);
        Levels { unscheduled, scheduled, cutoffs: c }
    }

    /// Cut-offs from a size distribution: each unscheduled level carries an equal share of the
    /// bytes messages send unscheduled (each message's size capped at `cap_bytes`).
    pub fn from_cdf(unscheduled: u8, scheduled: u8, cdf: &Cdf, cap_bytes: u64) -> Levels {
        Levels::new(unscheduled, scheduled, &cbf_cutoffs(cdf, cap_bytes, unscheduled))
    }

    /// Class of the unscheduled packets of a message of `size` bytes (0 = highest).
    #[inline]
    pub fn unscheduled(&self, size: u64) -> u8 {
        self.cutoffs.partition_point(|&c| c < size) as u8
    }

    /// Class of scheduled data granted to the message ranked `rank` (0 = fewest bytes left) among
    /// `active` messages being granted.
    #[inline]
    pub fn scheduled(&self, rank: usize, active: usize) -> u8 {
        debug_assert!(rank < active);
        let s = self.scheduled as usize;
        let first = s.saturating_sub(active);
        (self.unscheduled as usize + (first + rank).min(s - 1)) as u8
    }

    /// The cut-offs in use (the last is u64::MAX).
    pub fn cutoffs(&self) -> &[u64] {
        &self.cutoffs
    }

    pub fn scheduled_count(&self) -> u8 {
        self.scheduled
    }

    pub fn lowest(&self) -> u8 {
        self.unscheduled + self.scheduled - 1
    }
}

/// The share of a workload's bytes sent unscheduled: E[min(size, cap)] / E[size], sizes at the
/// distribution's points (as the cut-offs take them).
pub fn unscheduled_share(cdf: &Cdf, cap_bytes: u64) -> f64 {
    let (mut capped, mut all, mut prev) = (0.0, 0.0, 0.0);
    for &(size, p) in &cdf.points {
        let size = size.max(1.0);
        capped += (p - prev) * size.min(cap_bytes as f64);
        all += (p - prev) * size;
        prev = p;
    }
    capped / all
}

/// Sizes where the capped cumulative-bytes function first reaches 1/U, 2/U, ... (U - 1 of them at
/// most; a size is not repeated, so a distribution with few points may use fewer levels).
fn cbf_cutoffs(cdf: &Cdf, cap: u64, levels: u8) -> Vec<u64> {
    let cap = cap as f64;
    let mut prev_p = 0.0;
    let mut cum = Vec::with_capacity(cdf.points.len());
    let mut total = 0.0;
    for &(size, p) in &cdf.points {
        total += (p - prev_p) * size.max(1.0).min(cap);
        prev_p = p;
        cum.push((size.max(1.0).round() as u64, total));
    }
    let mut out: Vec<u64> = Vec::new();
    let mut i = 0;
    for k in 1..levels {
        let target = k as f64 / levels as f64;
        while i < cum.len() {
            let (size, bytes) = cum[i];
            i += 1;
            if out.last().is_some_and(|&c| c >= size) {
                continue;
            }
            if bytes / total >= target - 1e-12 {
                out.push(size);
                break;
            }
        }
    }
    // The last level takes everything above the last cut-off.
    if out.last().is_some_and(|&c| c >= cum.last().map_or(0, |l| l.0)) {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cdf(text: &str) -> Cdf {
        Cdf::parse(text, "test").unwrap()
    }

    #[test]
    fn each_unscheduled_level_carries_an_equal_share_of_unscheduled_bytes() {
        // Four sizes, equally likely, all under the cap: bytes 100, 200, 300, 400 of 1000. Halves
        // at 100 + 200 + 300 = 600 >= 500: one cut-off at 300 for two levels.
        let c = cdf("100 0.25\n200 0.5\n300 0.75\n400 1\n");
        let l = Levels::from_cdf(2, 6, &c, 10_000);
        assert_eq!(l.cutoffs(), &[300, u64::MAX]);
        assert_eq!((l.unscheduled(1), l.unscheduled(300), l.unscheduled(301)), (0, 0, 1));
        // With the cap at 200 the capped bytes are 100, 200, 200, 200: cumulative shares 1/7, 3/7,
        // 5/7, 1. Four levels: 1/4 is reached at 200, 1/2 at 300, 3/4 at 400 (the largest size:
        // dropped, the last level takes everything above 300).
        let l = Levels::from_cdf(4, 4, &c, 200);
        assert_eq!(l.cutoffs(), &[200, 300, u64::MAX]);
    }

    #[test]
    fn shipped_workloads_split_unscheduled_bytes_near_evenly() {
        // Homa's W3 (Google all-RPC), 4 unscheduled levels, RTTbytes 100 KB: each level's share of
        // the capped bytes (sizes at the distribution's points) is near 1/4.
        let c = crate::workload::cdf::shipped("google_rpc_w3").unwrap();
        let cap = 100_000.0;
        let l = Levels::from_cdf(4, 4, &c, cap as u64);
        assert_eq!(l.cutoffs().len(), 4, "{:?}", l.cutoffs());
        let mut share = [0.0; 4];
        let mut prev = 0.0;
        for &(size, p) in &c.points {
            share[l.unscheduled(size.round() as u64) as usize] += (p - prev) * size.min(cap);
            prev = p;
        }
        let total: f64 = share.iter().sum();
        for (i, s) in share.iter().enumerate() {
            assert!((s / total - 0.25).abs() < 0.1, "level {i}: share {} of {share:?}", s / total);
        }
        // A distribution with too few points for the levels uses fewer.
        let two = cdf("1000 0.9\n1000000 1\n");
        assert_eq!(Levels::from_cdf(4, 4, &two, 100_000).cutoffs(), &[u64::MAX]);
    }

    #[test]
    fn levels_split_by_the_unscheduled_share_of_bytes() {
        use crate::transport::homa::config::split_levels;
        // Google all-RPC under a 100 KB RTTbytes: 56% of the bytes go unscheduled (its rare large
        // messages carry the rest), so 4 of 8 levels are unscheduled.
        let w3 = crate::workload::cdf::shipped("google_rpc_w3").unwrap();
        let f = unscheduled_share(&w3, 100_000);
        assert!((0.5..0.6).contains(&f), "{f}");
        assert_eq!(split_levels(8, None, 7, Some(f)), (4, 4));
        // Hadoop W4 under the simulator's 10 KB RTTbytes: few bytes are unscheduled, so the
        // scheduled side takes 7 levels (the simulator's setting for W4).
        let w4 = crate::workload::cdf::shipped("fb_hadoop_w4").unwrap();
        assert_eq!(split_levels(8, None, 7, Some(unscheduled_share(&w4, 10_000))), (1, 7));
        // An explicit split wins; without a distribution, k levels (at most 7) are scheduled.
        assert_eq!(split_levels(8, Some(3), 7, Some(f)), (5, 3));
        assert_eq!(split_levels(8, None, 2, None), (6, 2));
        assert_eq!(split_levels(8, None, 30, None), (1, 7));
    }

    #[test]
    fn scheduled_levels_rank_from_the_highest_and_use_the_lowest_when_few_are_active() {
        let l = Levels::new(1, 7, &[]);
        // One active message: the lowest level; seven: levels 1..=7 by rank; more: the rest share 7.
        assert_eq!(l.scheduled(0, 1), 7);
        assert_eq!((l.scheduled(0, 3), l.scheduled(2, 3)), (5, 7));
        assert_eq!((0..7).map(|r| l.scheduled(r, 7)).collect::<Vec<_>>(), vec![1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(l.scheduled(9, 10), 7);
        assert_eq!(l.lowest(), 7);
        assert_eq!(l.unscheduled(u64::MAX), 0);
    }
}
