//! The set of packet indexes a receiver holds: everything below `cum`, plus sorted disjoint
//! ranges above it. Memory follows the holes, not the message size.

#[derive(Default, Debug)]
pub(super) struct Received {
    /// Every packet below this has arrived.
    cum: u64,
    /// Arrived packets above `cum`: sorted, disjoint, non-adjacent [start, end) ranges.
    ooo: Vec<(u64, u64)>,
    count: u64,
}

impl Received {
    /// Distinct packets held.
    #[inline]
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Records packet `i`; returns whether it is new.
    pub fn insert(&mut self, i: u64) -> bool {
        if i < self.cum {
            return false;
        }
        if i == self.cum {
            self.cum += 1;
            if let Some(&(s, e)) = self.ooo.first() {
                if s == self.cum {
                    self.cum = e;
                    self.ooo.remove(0);
                }
            }
            self.count += 1;
            return true;
        }
        let k = self.ooo.partition_point(|&(_, e)| e < i);
        if let Some(&(s, e)) = self.ooo.get(k) {
            if s <= i && i < e {
                return false;
            }
            if e == i {
                self.ooo[k].1 = i + 1;
                if let Some(&(ns, ne)) = self.ooo.get(k + 1) {
                    if ns == i + 1 {
                        self.ooo[k].1 = ne;
                        self.ooo.remove(k + 1);
                    }
                }
            } else if s == i + 1 {
                self.ooo[k].0 = i;
            } else {
                self.ooo.insert(k, (i, i + 1));
            }
        } else {
            self.ooo.push((i, i + 1));
        }
        self.count += 1;
        true
    }

    /// Up to `max` runs [a, b) of missing packets below `below`, lowest first.
    pub fn missing_runs(&self, below: u64, max: usize) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let mut at = self.cum;
        for &(s, e) in &self.ooo {
            if at >= below || out.len() >= max {
                return out;
            }
            if s > at {
                out.push((at, s.min(below)));
            }
            at = at.max(e);
        }
        if at < below && out.len() < max {
            out.push((at, below));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::Received;

    #[test]
    fn in_order_and_out_of_order_arrivals_merge() {
        let mut r = Received::default();
        assert!(r.insert(0));
        assert!(!r.insert(0));
        assert!(r.insert(5));
        assert!(r.insert(3));
        assert!(r.insert(4));
        assert!(!r.insert(4));
        assert_eq!(r.ooo, vec![(3, 6)]);
        assert!(r.insert(7));
        assert!(r.insert(6));
        assert_eq!(r.ooo, vec![(3, 8)]);
        assert_eq!(r.missing_runs(10, 8), vec![(1, 3), (8, 10)]);
        assert_eq!(r.missing_runs(10, 1), vec![(1, 3)]);
        assert_eq!(r.missing_runs(2, 8), vec![(1, 2)]);
        assert!(r.insert(1));
        assert!(r.insert(2));
        assert_eq!((r.cum, r.ooo.len(), r.count()), (8, 0, 8));
        assert_eq!(r.missing_runs(8, 8), vec![]);
        assert!(r.insert(9));
        assert_eq!(r.missing_runs(12, 8), vec![(8, 9), (10, 12)]);
    }

    #[test]
    fn matches_a_bitmap_under_random_arrivals() {
        let mut x: u64 = 12345;
        for _ in 0..50 {
            let n = 200;
            let mut bits = vec![false; n];
            let mut r = Received::default();
            for _ in 0..300 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let i = (x >> 33) as usize % n;
                assert_eq!(r.insert(i as u64), !bits[i]);
                bits[i] = true;
                assert_eq!(r.count(), bits.iter().filter(|b| **b).count() as u64);
            }
            let runs = r.missing_runs(n as u64, usize::MAX);
            let mut missing = vec![false; n];
            for (a, b) in runs {
                assert!(a < b);
                for m in &mut missing[a as usize..b as usize] {
                    *m = true;
                }
            }
            for i in 0..n {
                assert_eq!(missing[i], !bits[i], "packet {i}");
            }
        }
    }
}
