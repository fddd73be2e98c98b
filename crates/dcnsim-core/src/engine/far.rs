//! Far timers: events beyond the calendar wheel's span (134 us), mostly retransmission timeouts,
//! most of which are stale by the time they fire (a message finished long before its timer).
//! A second, coarse wheel holds them: a slot per wheel span (2^27 ps), 1,024 slots (137 ms), so
//! a push is an append to its slot's list and nothing is sorted until the slot is due; then the
//! event queue moves the whole slot into the fine wheel, whose slot sort restores the exact
//! (time, insertion sequence) order. Timers beyond the coarse span (an RTO backed off towards
//! 1 s) wait in a binary heap. Before, every far timer went through one heap: a DCTCP run with
//! 186 k pending timers walked 17 levels of cold memory per pop.

use crate::time::Time;
use std::collections::BinaryHeap;

/// Width of a coarse slot: the fine wheel's whole span (`SLOT_SHIFT + SLOT_BITS` in events.rs).
pub(super) const COARSE_SHIFT: u32 = 27;
const COARSE_BITS: u32 = 10;
const COARSE_SLOTS: usize = 1 << COARSE_BITS;
const WORDS: usize = COARSE_SLOTS / 64;

/// A far timer: its time, insertion sequence and event (the event queue's `Event`).
#[derive(Clone, Copy, Debug)]
pub(super) struct FarEntry<E> {
    pub time: Time,
    pub seq: u64,
    pub event: E,
}

impl<E> FarEntry<E> {
    #[inline(always)]
    pub fn key(&self) -> (Time, u64) {
        (self.time, self.seq)
    }
}

impl<E> PartialEq for FarEntry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.key() == o.key()
    }
}
impl<E> Eq for FarEntry<E> {}
impl<E> PartialOrd for FarEntry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for FarEntry<E> {
    // Reversed: BinaryHeap is a max-heap and we want the earliest (time, seq) first.
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        o.key().cmp(&self.key())
    }
}

pub(super) struct FarTimers<E> {
    /// Per coarse slot, its timers in insertion order. Every entry lies in the slots
    /// (now's coarse slot, now's coarse slot + COARSE_SLOTS), so slots never alias.
    slots: Vec<Vec<FarEntry<E>>>,
    /// Bit i set: coarse slot i is non-empty.
    occupied: [u64; WORDS],
    in_slots: usize,
    /// Start time of the earliest non-empty coarse slot; `Time::MAX` if none.
    due: Time,
    /// Timers beyond the coarse span.
    beyond: BinaryHeap<FarEntry<E>>,
}

impl<E: Copy> Default for FarTimers<E> {
    fn default() -> Self {
        FarTimers {
            slots: (0..COARSE_SLOTS).map(|_| Vec::new()).collect(),
            occupied: [0; WORDS],
            in_slots: 0,
            due: Time::MAX,
            beyond: BinaryHeap::new(),
        }
    }
}

impl<E: Copy> FarTimers<E> {
    /// Stores a timer that lies beyond the fine wheel at `now` (so in a later coarse slot).
    #[inline]
    pub fn push(&mut self, now: Time, e: FarEntry<E>) {
        let ahead = (e.time >> COARSE_SHIFT) - (now >> COARSE_SHIFT);
        debug_assert!(ahead > 0, "a far timer in now's coarse slot belongs to the fine wheel");
        if ahead < COARSE_SLOTS as u64 {
            let i = (e.time >> COARSE_SHIFT) as usize & (COARSE_SLOTS - 1);
            self.slots[i].push(e);
            self.occupied[i / 64] |= 1 << (i % 64);
            self.in_slots += 1;
            self.due = self.due.min((e.time >> COARSE_SHIFT) << COARSE_SHIFT);
        } else {
            self.beyond.push(e);
        }
    }

    /// When the earliest coarse slot begins (`Time::MAX` if all are empty): once nothing else is
    /// earlier, its timers must move to the fine wheel (`take_due`).
    #[inline(always)]
    pub fn due(&self) -> Time {
        self.due
    }

    /// Empties the earliest coarse slot into `out` (in insertion order) and finds the next; `now`
    /// must have reached the slot's start.
    pub fn take_due(&mut self, now: Time, out: &mut Vec<FarEntry<E>>) {
        debug_assert!(self.due != Time::MAX && now >= self.due);
        let i = (self.due >> COARSE_SHIFT) as usize & (COARSE_SLOTS - 1);
        out.append(&mut self.slots[i]);
        self.occupied[i / 64] &= !(1 << (i % 64));
        self.in_slots -= out.len();
        self.due = self.next_due(now);
    }

    /// The start of the first non-empty coarse slot after now's (cyclically), or `Time::MAX`.
    fn next_due(&self, now: Time) -> Time {
        if self.in_slots == 0 {
            return Time::MAX;
        }
        let now_c = now >> COARSE_SHIFT;
        let start = now_c as usize & (COARSE_SLOTS - 1);
        for k in 0..=WORDS {
            let w = (start / 64 + k) % WORDS;
            let mut bits = self.occupied[w];
            if k == 0 {
                bits &= !0u64 << (start % 64);
            } else if k == WORDS {
                bits &= !(!0u64 << (start % 64));
            }
            if bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                let ahead = (i as u64).wrapping_sub(now_c) & (COARSE_SLOTS as u64 - 1);
                return (now_c + ahead) << COARSE_SHIFT;
            }
        }
        unreachable!("far timers counted but no coarse slot is marked")
    }

    /// The earliest timer beyond the coarse span.
    #[inline(always)]
    pub fn beyond_peek(&self) -> Option<&FarEntry<E>> {
        self.beyond.peek()
    }

    pub fn beyond_pop(&mut self) -> Option<FarEntry<E>> {
        self.beyond.pop()
    }

    /// The earliest far timer's time.
    pub fn peek_time(&self) -> Option<Time> {
        let coarse = (self.due != Time::MAX).then(|| {
            let i = (self.due >> COARSE_SHIFT) as usize & (COARSE_SLOTS - 1);
            self.slots[i].iter().map(|e| e.time).min().expect("the due slot is non-empty")
        });
        match (coarse, self.beyond.peek().map(|e| e.time)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    pub fn len(&self) -> usize {
        self.in_slots + self.beyond.len()
    }
}
