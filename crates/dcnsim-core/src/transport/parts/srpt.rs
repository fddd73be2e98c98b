//! Shortest remaining processing time first: pick the entry with the fewest units left (packets
//! or bytes), ties to the one inserted first, as pHost, Homa and SIRD grant. A linear scan: the
//! sets these protocols choose from (a receiver's active senders) are small, and the scan keeps the
//! tie-break exact without a heap's bookkeeping.

/// Index of the smallest of `remaining`, the first one on ties; `None` when empty.
#[inline]
pub fn srpt_pick<I: IntoIterator<Item = u64>>(remaining: I) -> Option<usize> {
    let mut best: Option<(usize, u64)> = None;
    for (i, r) in remaining.into_iter().enumerate() {
        if best.is_none_or(|(_, b)| r < b) {
            best = Some((i, r));
        }
    }
    best.map(|(i, _)| i)
}

/// A set of keys with their remaining work, kept in insertion order.
#[derive(Clone, Debug)]
pub struct SrptChooser<K> {
    entries: Vec<(K, u64)>,
}

impl<K> Default for SrptChooser<K> {
    fn default() -> Self {
        SrptChooser { entries: Vec::new() }
    }
}

impl<K: Copy + Eq + std::fmt::Debug> SrptChooser<K> {
    /// Adds `key` behind every entry present (it loses ties to them).
    pub fn insert(&mut self, key: K, remaining: u64) {
        debug_assert!(!self.contains(key), "{key:?} inserted twice");
        self.entries.push((key, remaining));
    }

    pub fn contains(&self, key: K) -> bool {
        self.entries.iter().any(|&(k, _)| k == key)
    }

    /// Updates `key`'s remaining work, keeping its place in the tie order; false if absent.
    pub fn set_remaining(&mut self, key: K, remaining: u64) -> bool {
        match self.entries.iter_mut().find(|(k, _)| *k == key) {
            Some(e) => {
                e.1 = remaining;
                true
            }
            None => false,
        }
    }

    /// Removes `key`; false if absent.
    pub fn remove(&mut self, key: K) -> bool {
        match self.entries.iter().position(|&(k, _)| k == key) {
            Some(i) => {
                self.entries.remove(i);
                true
            }
            None => false,
        }
    }

    /// The entry with the fewest remaining, the earliest inserted on ties.
    pub fn pick(&self) -> Option<K> {
        self.pick_where(|_| true)
    }

    /// As [`pick`](Self::pick), among the entries `eligible` accepts.
    pub fn pick_where(&self, mut eligible: impl FnMut(K) -> bool) -> Option<K> {
        let mut best: Option<(K, u64)> = None;
        for &(k, r) in &self.entries {
            if best.is_none_or(|(_, b)| r < b) && eligible(k) {
                best = Some((k, r));
            }
        }
        best.map(|(k, _)| k)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Entries in insertion order with their remaining work.
    pub fn iter(&self) -> impl Iterator<Item = (K, u64)> + '_ {
        self.entries.iter().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_fewest_remaining_first_inserted_on_ties() {
        assert_eq!(srpt_pick([]), None);
        assert_eq!(srpt_pick([5, 3, 7, 3]), Some(1));
        let mut s = SrptChooser::default();
        s.insert(10u32, 5);
        s.insert(11, 3);
        s.insert(12, 3);
        assert_eq!(s.pick(), Some(11));
        assert!(s.remove(11));
        assert_eq!(s.pick(), Some(12));
        // A later entry needs strictly less to win.
        s.set_remaining(10, 3);
        assert_eq!(s.pick(), Some(10));
        s.set_remaining(12, 2);
        assert_eq!(s.pick(), Some(12));
        assert_eq!(s.pick_where(|k| k != 12), Some(10));
        assert_eq!(s.pick_where(|_| false), None);
        assert!(!s.remove(99));
        assert!(!s.set_remaining(99, 1));
    }

    #[test]
    fn pick_agrees_with_a_sort_by_remaining_then_order() {
        let mut x: u64 = 99;
        let mut s = SrptChooser::default();
        let mut model: Vec<(u32, u64)> = Vec::new();
        for step in 0..2000u32 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            match (x >> 60) % 3 {
                0 => {
                    let r = (x >> 20) % 8;
                    s.insert(step, r);
                    model.push((step, r));
                }
                1 if !model.is_empty() => {
                    let i = (x >> 30) as usize % model.len();
                    let r = (x >> 10) % 8;
                    model[i].1 = r;
                    s.set_remaining(model[i].0, r);
                }
                _ if !model.is_empty() => {
                    let i = (x >> 30) as usize % model.len();
                    s.remove(model.remove(i).0);
                }
                _ => {}
            }
            let mut sorted: Vec<(usize, &(u32, u64))> = model.iter().enumerate().collect();
            sorted.sort_by_key(|&(pos, &(_, r))| (r, pos));
            assert_eq!(s.pick(), sorted.first().map(|&(_, &(k, _))| k));
            assert_eq!(srpt_pick(model.iter().map(|&(_, r)| r)), sorted.first().map(|&(pos, _)| pos));
            assert_eq!(s.len(), model.len());
        }
    }
}
