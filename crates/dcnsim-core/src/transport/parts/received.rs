//! What a receiver holds, in memory that follows the holes rather than the message size:
//! [`ReceivedSet`] of packet indexes (everything below a cumulative point plus sorted disjoint
//! ranges above it), and [`ReceivedBytes`], the same for byte ranges of a stream (a TCP receiver's
//! out-of-order queue).

#[derive(Clone, Default, Debug)]
pub struct ReceivedSet {
    /// Every packet below this has arrived.
    cum: u64,
    /// Arrived packets above `cum`: sorted, disjoint, non-adjacent [start, end) ranges.
    ooo: Vec<(u64, u64)>,
    count: u64,
}

impl ReceivedSet {
    /// Every packet below this has arrived (the next in-order packet expected).
    #[inline]
    pub fn cumulative(&self) -> u64 {
        self.cum
    }

    pub fn contains(&self, i: u64) -> bool {
        if i < self.cum {
            return true;
        }
        let k = self.ooo.partition_point(|&(_, e)| e <= i);
        self.ooo.get(k).is_some_and(|&(s, _)| s <= i)
    }

    /// Prefetch hint for `insert`: the ranges its search reads first (the front and the middle).
    #[inline(always)]
    pub fn prefetch(&self) {
        if let Some(first) = self.ooo.first() {
            crate::engine::prefetch::line(first);
            crate::engine::prefetch::line(&self.ooo[self.ooo.len() / 2]);
        }
    }

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

    /// Everything below `cum` has arrived (a cumulative acknowledgement); returns how many
    /// packets that added.
    pub fn advance_to(&mut self, cum: u64) -> u64 {
        if cum <= self.cum {
            return 0;
        }
        let mut added = cum - self.cum;
        let mut next = cum;
        let mut k = 0;
        while let Some(&(s, e)) = self.ooo.get(k) {
            if s > next {
                break;
            }
            // The range overlaps [old cum, cum) or touches cum: its packets below cum were counted.
            added -= e.min(cum) - s;
            next = next.max(e);
            k += 1;
        }
        self.ooo.drain(..k);
        self.cum = next;
        self.count += added;
        added
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

/// Bytes of a stream a receiver holds: everything below `next_expected` (TCP's rcv_nxt), plus
/// sorted, disjoint, non-adjacent [start, end) ranges above it.
#[derive(Clone, Default, Debug)]
pub struct ReceivedBytes {
    next: u64,
    ooo: Vec<(u64, u64)>,
}

impl ReceivedBytes {
    /// The first byte not yet received: the cumulative ACK.
    #[inline]
    pub fn next_expected(&self) -> u64 {
        self.next
    }

    /// Ranges held above `next_expected`, lowest first.
    pub fn out_of_order(&self) -> &[(u64, u64)] {
        &self.ooo
    }

    /// Records bytes [start, end); returns how many of them are new.
    pub fn insert(&mut self, start: u64, end: u64) -> u64 {
        debug_assert!(start <= end);
        let start = start.max(self.next);
        if start >= end {
            return 0;
        }
        let i = self.ooo.partition_point(|&(_, re)| re < start);
        let (mut ns, mut ne) = (start, end);
        let mut covered = 0;
        let mut j = i;
        while j < self.ooo.len() && self.ooo[j].0 <= ne {
            let (rs, re) = self.ooo[j];
            covered += re.min(end).saturating_sub(rs.max(start));
            ns = ns.min(rs);
            ne = ne.max(re);
            j += 1;
        }
        if ns == self.next {
            self.ooo.drain(i..j);
            debug_assert_eq!(i, 0);
            self.next = ne;
        } else {
            self.ooo.splice(i..j, [(ns, ne)]);
        }
        (end - start) - covered
    }

    /// Frees the out-of-order buffer (the stream is done).
    pub fn clear_out_of_order(&mut self) {
        self.ooo = Vec::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_order_and_out_of_order_arrivals_merge() {
        let mut r = ReceivedSet::default();
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
            let mut r = ReceivedSet::default();
            for _ in 0..300 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let i = (x >> 33) as usize % n;
                assert_eq!(r.contains(i as u64), bits[i]);
                assert_eq!(r.insert(i as u64), !bits[i]);
                assert!(r.contains(i as u64));
                bits[i] = true;
                assert_eq!(r.count(), bits.iter().filter(|b| **b).count() as u64);
            }
            // A cumulative advance over part of what is missing, then the set must still match.
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let upto = (x >> 33) as usize % (n + 1);
            let newly = bits[..upto].iter().filter(|b| !**b).count() as u64;
            assert_eq!(r.advance_to(upto as u64), newly);
            bits[..upto].iter_mut().for_each(|b| *b = true);
            assert_eq!(r.count(), bits.iter().filter(|b| **b).count() as u64);
            let cum = bits.iter().position(|b| !b).unwrap_or(n) as u64;
            assert_eq!(r.cumulative(), cum);
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

    #[test]
    fn byte_ranges_merge_and_count_new_bytes() {
        let mut r = ReceivedBytes::default();
        assert_eq!(r.insert(10, 20), 10);
        assert_eq!(r.insert(30, 40), 10);
        assert_eq!(r.insert(10, 20), 0);
        assert_eq!(r.insert(20, 30), 10);
        assert_eq!(r.out_of_order(), &[(10, 40)]);
        assert_eq!(r.insert(5, 45), 10);
        assert_eq!(r.out_of_order(), &[(5, 45)]);
        assert_eq!(r.next_expected(), 0);
        assert_eq!(r.insert(0, 5), 5);
        assert_eq!((r.next_expected(), r.out_of_order().len()), (45, 0));
        assert_eq!(r.insert(0, 50), 5);
        assert_eq!(r.next_expected(), 50);
    }

    #[test]
    fn byte_ranges_match_a_bitmap_under_random_segments() {
        let mut x: u64 = 777;
        for _ in 0..50 {
            let n = 300usize;
            let mut bits = vec![false; n];
            let mut r = ReceivedBytes::default();
            for _ in 0..100 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let s = (x >> 33) as usize % n;
                let e = (s + 1 + (x >> 20) as usize % 20).min(n);
                let fresh = bits[s..e].iter().filter(|b| !**b).count() as u64;
                assert_eq!(r.insert(s as u64, e as u64), fresh);
                bits[s..e].iter_mut().for_each(|b| *b = true);
                let next = bits.iter().position(|b| !b).unwrap_or(n) as u64;
                assert_eq!(r.next_expected(), next);
                let mut prev_end = next;
                for &(a, b) in r.out_of_order() {
                    assert!(a > prev_end && a < b, "ranges sorted, disjoint, non-adjacent");
                    assert!(bits[a as usize..b as usize].iter().all(|b| *b));
                    assert!(!bits[a as usize - 1]);
                    prev_end = b;
                }
                let held: u64 = r.out_of_order().iter().map(|&(a, b)| b - a).sum::<u64>() + next;
                assert_eq!(held, bits.iter().filter(|b| **b).count() as u64);
            }
        }
    }
}
