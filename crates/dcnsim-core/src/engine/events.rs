//! The event queue: a calendar wheel plus a coarse wheel for far timers (see `EventQueue`, `far`), ordered by
//! (time, insertion sequence). Ties on time are broken by insertion order, which makes every run a
//! pure function of its spec and seed.
//!
//! Events are 8-byte plain enums; a wheel entry is 16 bytes (a far timer's 24). The pending set stays small because the
//! network schedules at most one event per link in propagation and one per backlogged port, never
//! one per packet in flight.

use super::far::{FarEntry, FarTimers, COARSE_SHIFT};
use super::slot_sort;
use crate::time::Time;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The packet at the head of this port's link reaches the far end.
    LinkArrival(u32),
    /// This port finished serializing a packet and may start the next.
    PortFree(u32),
    /// The workload's next flow starts.
    FlowArrival,
    /// A timer of the run's transport number `transport`; `kind` and `id` mean what it says.
    Timer { kind: u8, transport: u8, id: u32 },
    /// A switch-side timer for a pipeline stage that needs one (`net::pipeline`; the PFC deadlock
    /// check); `kind` and `id` mean what that stage says.
    SwitchTimer { kind: u8, id: u32 },
    /// The measurement window opens: statistics are reset.
    MeasureStart,
    /// Periodic sampling of queue lengths (when enabled).
    Sample,
    /// Periodic sampling of the traced flows' control state (with a `[trace]` table).
    FlowStateSample,
}

// The hot structures keep their size: an event is 8 bytes (16 with its key in a wheel slot).
const _: () = assert!(size_of::<Event>() == 8, "Event must stay 8 bytes");

/// An event in the wheel. Every entry of a slot shares the slot's start time, so one `u64` orders
/// them: the time's offset into the slot above the insertion sequence (`slot_key`). Sorting a
/// drained slot compares one integer and moves 16 bytes per entry instead of two integers and 24.
#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u64,
    event: Event,
}

/// Bits of a wheel entry's key that hold the insertion sequence (the rest hold the time offset
/// into the slot). 2^51 events is decades of simulation at today's speed; `schedule` checks it.
const SEQ_BITS: u32 = 64 - SLOT_SHIFT;
const SEQ_MASK: u64 = (1 << SEQ_BITS) - 1;
const SLOT_MASK: Time = (1 << SLOT_SHIFT) - 1;

/// The key of an event at `time` scheduled as number `seq`, within its slot.
#[inline(always)]
fn slot_key(time: Time, seq: u64) -> u64 {
    ((time & SLOT_MASK) << SEQ_BITS) | seq
}

/// Width of a calendar slot: 2^13 ps = 8.2 ns, about one 1 KB packet at 1 Tb/s.
const SLOT_SHIFT: u32 = 13;
/// Slots in the wheel: 2^14 slots span 134 us ahead of now.
const SLOT_BITS: u32 = 14;
const SLOTS: usize = 1 << SLOT_BITS;
const _: () = assert!(SLOT_SHIFT + SLOT_BITS == COARSE_SHIFT, "a coarse slot spans the fine wheel");
const WORDS: usize = SLOTS / 64;

/// A calendar queue: a wheel of time slots for events in the near future, a binary heap for the
/// rest (long timers). Almost every network event lands a few microseconds ahead, so popping is a
/// bitmap scan plus a search of a slot holding a handful of events. The order is exactly (time,
/// insertion sequence), the same as a heap's.
///
/// A slot is a list of blocks of `BLOCK` entries from one arena (its head is a 4-byte index), not a
/// `Vec` of its own: 16,384 `Vec`s would cost a cold header and a cold buffer per `schedule`, while
/// the heads fit in cache and a block comes off a LIFO free list, recently used and warm. Blocks,
/// not single entries: on large fabrics a slot holds hundreds of events, and walking them one
/// scattered node at a time was a cache miss per event (a third of the event loop at 3,456 hosts).
pub struct EventQueue {
    /// Per slot: the block being filled (the newest; it links to older ones), or NIL.
    heads: Vec<u32>,
    blocks: Vec<Block>,
    /// Free blocks, linked through `next`.
    free: u32,
    /// The slot being drained and its events in `drain[cursor..]`, sorted earliest-first. Other
    /// slots stay unsorted until they are reached (many events can share a slot when pacers tick
    /// in step). Earliest-first, so an event scheduled into this slot (usually later than the
    /// rest) is inserted near the end, not shifted in at the front.
    current: Option<usize>,
    drain: Vec<Entry>,
    /// Scratch buffer of the slot sort (`slot_sort`), kept to reuse its allocation.
    sort_scratch: Vec<Entry>,
    /// Scratch: the blocks of the slot being gathered, newest first.
    block_order: Vec<u32>,
    cursor: usize,
    /// Start time of the slot being drained (its entries' keys hold offsets from it).
    drain_base: Time,
    /// While a large slot drains, the next occupied slot's blocks are fetched one per pop, along
    /// its list (`walk_next_slot`): this block was fetched last, or NIL. Drained, a slot's list is
    /// a chain of dependent misses otherwise (at 3,456 hosts about 100 blocks of 176 bytes written
    /// a microsecond of simulated time earlier, long evicted: 8% of the event loop).
    walk: u32,
    /// Bit i set: slot i is non-empty.
    occupied: Vec<u64>,
    in_wheel: usize,
    far: FarTimers<Event>,
    /// Scratch for moving a due coarse slot into the wheel.
    moving: Vec<FarEntry<Event>>,
    seq: u64,
    now: Time,
    /// Events popped so far.
    pub processed: u64,
}

const NIL: u32 = u32::MAX;
/// A drained slot with at least this many events starts the walk of the next slot's blocks (on
/// small fabrics slots hold an event or two and the next slot is as likely to be far away).
const WALK_MIN_EVENTS: usize = 16;
/// Entries per block: 7 x 16 + 8 = 120 bytes, under two cache lines.
const BLOCK: usize = 7;

#[derive(Clone, Copy, Debug)]
struct Block {
    /// Entries in use, from the front.
    len: u32,
    /// The next older block of the same slot, or NIL.
    next: u32,
    entries: [Entry; BLOCK],
}

const EMPTY_ENTRY: Entry = Entry { key: 0, event: Event::FlowArrival };

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            heads: vec![NIL; SLOTS],
            blocks: Vec::new(),
            free: NIL,
            current: None,
            drain: Vec::new(),
            sort_scratch: Vec::new(),
            block_order: Vec::new(),
            cursor: 0,
            drain_base: 0,
            walk: NIL,
            occupied: vec![0; WORDS],
            in_wheel: 0,
            far: Default::default(),
            moving: Vec::new(),
            seq: 0,
            now: 0,
            processed: 0,
        }
    }
}

impl EventQueue {
    pub fn new() -> EventQueue {
        EventQueue::default()
    }

    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    /// Schedules `event` at `time`, which must not be in the past.
    #[inline]
    pub fn schedule(&mut self, time: Time, event: Event) {
        assert!(time >= self.now, "event {event:?} scheduled in the past ({time} < {})", self.now);
        self.seq += 1;
        assert!(self.seq <= SEQ_MASK, "more than 2^{SEQ_BITS} events scheduled");
        // Every wheel entry lies in [now's slot, now's slot + SLOTS), so slots never alias.
        if (time >> SLOT_SHIFT) - (self.now >> SLOT_SHIFT) < SLOTS as u64 {
            self.insert_near(time, self.seq, event);
        } else {
            self.far.push(self.now, FarEntry { time, seq: self.seq, event });
        }
    }

    /// Puts an event into the wheel (its time within the wheel's span).
    #[inline(always)]
    fn insert_near(&mut self, time: Time, seq: u64, event: Event) {
        debug_assert!((time >> SLOT_SHIFT) - (self.now >> SLOT_SHIFT) < SLOTS as u64, "{time} beyond the wheel");
        let i = (time >> SLOT_SHIFT) as usize & (SLOTS - 1);
        let e = Entry { key: slot_key(time, seq), event };
        if self.current == Some(i) {
            // A new event has the largest `seq`, so it goes after every entry at its time.
            let at = self.cursor + self.drain[self.cursor..].partition_point(|x| x.key < e.key);
            self.drain.insert(at, e);
        } else {
            self.push_entry(i, e);
        }
        self.occupied[i / 64] |= 1 << (i % 64);
        self.in_wheel += 1;
    }

    /// Moves the earliest coarse slot of far timers into the wheel once nothing is earlier: the
    /// first occupied slot (if any) and the earliest timer beyond the coarse span start at or after
    /// it. The clock moves to the slot's start, so the wheel's span covers it.
    #[inline]
    fn move_due_far(&mut self, first: Option<usize>) -> bool {
        let due = self.far.due();
        if due == Time::MAX || first.is_some_and(|s| self.slot_start(s) < due) {
            return false;
        }
        if self.far.beyond_peek().is_some_and(|f| f.time < due) {
            return false;
        }
        self.now = self.now.max(due);
        let mut moving = std::mem::take(&mut self.moving);
        self.far.take_due(self.now, &mut moving);
        for e in moving.drain(..) {
            self.insert_near(e.time, e.seq, e.event);
        }
        self.moving = moving;
        true
    }

    #[inline(always)]
    fn push_entry(&mut self, slot: usize, e: Entry) {
        let h = self.heads[slot];
        if h != NIL {
            let b = &mut self.blocks[h as usize];
            if (b.len as usize) < BLOCK {
                b.entries[b.len as usize] = e;
                b.len += 1;
                return;
            }
        }
        let n = if self.free != NIL {
            // A recycled block: only its header and first entry are written (on small fabrics most
            // slots hold one event, and copying a whole empty block in was 2% of all instructions).
            let n = self.free;
            let b = &mut self.blocks[n as usize];
            self.free = b.next;
            b.len = 1;
            b.next = h;
            b.entries[0] = e;
            n
        } else {
            assert!(self.blocks.len() < NIL as usize, "more than 2^32 blocks of pending events");
            let mut entries = [EMPTY_ENTRY; BLOCK];
            entries[0] = e;
            self.blocks.push(Block { len: 1, next: h, entries });
            (self.blocks.len() - 1) as u32
        };
        self.heads[slot] = n;
    }

    /// Start time of wheel slot `s`: the one in [now's slot, now's slot + SLOTS) with that index.
    #[inline(always)]
    fn slot_start(&self, s: usize) -> Time {
        let now_slot = self.now >> SLOT_SHIFT;
        let ahead = (s as u64).wrapping_sub(now_slot) & (SLOTS as u64 - 1);
        (now_slot + ahead) << SLOT_SHIFT
    }

    /// The first non-empty slot at or after now's slot (cyclically), if any.
    #[inline]
    fn first_slot(&self) -> Option<usize> {
        if self.in_wheel == 0 {
            return None;
        }
        let start = (self.now >> SLOT_SHIFT) as usize & (SLOTS - 1);
        let (w0, b0) = (start / 64, start % 64);
        let first = self.occupied[w0] & (!0u64 << b0);
        if first != 0 {
            return Some(w0 * 64 + first.trailing_zeros() as usize);
        }
        for k in 1..=WORDS {
            let w = (w0 + k) % WORDS;
            let bits = if k == WORDS { self.occupied[w] & !(!0u64 << b0) } else { self.occupied[w] };
            if bits != 0 {
                return Some(w * 64 + bits.trailing_zeros() as usize);
            }
        }
        unreachable!("in_wheel > 0 but no slot is marked")
    }

    /// Moves slot `s`'s entries into `drain`, sorted earliest-first (once, when it is reached).
    #[inline]
    fn drain_from(&mut self, s: usize) {
        if self.current == Some(s) {
            return;
        }
        if let Some(c) = self.current.take() {
            // A far timer moved the clock to before the slot being drained and an event landed in
            // between: that slot's remaining events go back to its list.
            let rest: Vec<Entry> = self.drain.drain(self.cursor..).collect();
            for e in rest {
                self.push_entry(c, e);
            }
        }
        self.drain.clear();
        self.cursor = 0;
        // Oldest block first, so the entries come in insertion order (what `slot_sort` relies on).
        let mut n = std::mem::replace(&mut self.heads[s], NIL);
        self.block_order.clear();
        while n != NIL {
            self.block_order.push(n);
            n = self.blocks[n as usize].next;
        }
        for &n in self.block_order.iter().rev() {
            let b = &mut self.blocks[n as usize];
            self.drain.extend_from_slice(&b.entries[..b.len as usize]);
            b.next = self.free;
            self.free = n;
        }
        slot_sort::sort_slot(&mut self.drain, &mut self.sort_scratch, SEQ_BITS, |e| e.key);
        self.drain_base = self.slot_start(s);
        self.current = Some(s);
        self.walk = NIL;
        if self.drain.len() >= WALK_MIN_EVENTS {
            self.walk_next_slot(s);
        }
    }

    /// Starts fetching the blocks of the first occupied slot after `s` (looking in the next 128
    /// slots only): its newest block now, one more per `pop`. A hint: no effect on the order.
    #[inline]
    fn walk_next_slot(&mut self, s: usize) {
        let from = (s + 1) & (SLOTS - 1);
        let (w, b) = (from / 64, from % 64);
        let bits = self.occupied[w] & (!0u64 << b);
        let t = if bits != 0 {
            w * 64 + bits.trailing_zeros() as usize
        } else {
            let w2 = (w + 1) % WORDS;
            match self.occupied[w2] {
                0 => return,
                bits => w2 * 64 + bits.trailing_zeros() as usize,
            }
        };
        self.walk = self.heads[t];
        self.prefetch_block(self.walk);
    }

    /// One step of the walk started by `walk_next_slot`: the block fetched at the last pop has
    /// arrived by now, so reading its link does not stall; fetches the one it links to.
    #[inline(always)]
    fn walk_step(&mut self) {
        if let Some(b) = self.blocks.get(self.walk as usize) {
            self.walk = b.next;
            self.prefetch_block(self.walk);
        }
    }

    #[inline(always)]
    fn prefetch_block(&self, n: u32) {
        #[cfg(target_arch = "x86_64")]
        if let Some(b) = self.blocks.get(n as usize) {
            let base = b as *const Block as *const i8;
            for off in [0, 64, std::mem::size_of::<Block>() - 1] {
                // SAFETY: prefetching is a hint, and every address lies inside the block.
                unsafe { std::arch::x86_64::_mm_prefetch(base.add(off), std::arch::x86_64::_MM_HINT_T0) }
            }
        }
    }

    /// Pops the earliest event and advances the clock to it.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        let mut first = self.first_slot();
        if self.move_due_far(first) {
            first = self.first_slot();
        }
        if let Some(s) = first {
            self.drain_from(s);
        }
        let take_far = match (first, self.far.beyond_peek()) {
            (None, None) => return None,
            (None, Some(_)) => true,
            (Some(_), None) => false,
            (Some(_), Some(f)) => {
                let d = self.drain[self.cursor].key;
                f.key() < (self.drain_base + (d >> SEQ_BITS), d & SEQ_MASK)
            }
        };
        let (time, event) = if take_far {
            let f = self.far.beyond_pop().expect("peeked");
            (f.time, f.event)
        } else {
            let s = first.expect("checked");
            let e = self.drain[self.cursor];
            self.cursor += 1;
            if self.walk != NIL {
                self.walk_step();
            }
            if self.cursor == self.drain.len() {
                self.occupied[s / 64] &= !(1 << (s % 64));
                self.current = None;
                self.drain.clear();
                self.cursor = 0;
            }
            self.in_wheel -= 1;
            (self.drain_base + (e.key >> SEQ_BITS), e.event)
        };
        debug_assert!(time >= self.now);
        self.now = time;
        self.processed += 1;
        Some((time, event))
    }

    /// Probably the next event, cheaply, for prefetching: the next in the slot being drained, else
    /// the newest in the next occupied slot (exact when that slot holds one event).
    #[inline(always)]
    pub fn peek_hint(&self) -> Option<Event> {
        if let Some(e) = self.drain.get(self.cursor) {
            return Some(e.event);
        }
        let s = self.first_slot()?;
        let n = self.heads[s];
        (n != NIL).then(|| {
            let b = &self.blocks[n as usize];
            b.entries[b.len as usize - 1].event
        })
    }

    /// Events left in the slot being drained (0 when the next is in another slot).
    #[inline(always)]
    pub fn draining(&self) -> usize {
        self.drain.len() - self.cursor
    }

    /// The event `i` places after the next within the slot being drained, if it is there (for
    /// staged prefetching; `peek_ahead(0)` is the next event when it is in that slot).
    #[inline(always)]
    pub fn peek_ahead(&self, i: usize) -> Option<Event> {
        self.drain.get(self.cursor + i).map(|e| e.event)
    }

    pub fn peek_time(&self) -> Option<Time> {
        let wheel = self.first_slot().map(|s| {
            if self.current == Some(s) {
                return self.drain_base + (self.drain[self.cursor].key >> SEQ_BITS);
            }
            let (mut n, mut t) = (self.heads[s], Time::MAX);
            while n != NIL {
                let b = &self.blocks[n as usize];
                t = b.entries[..b.len as usize].iter().fold(t, |t, e| t.min(e.key >> SEQ_BITS));
                n = b.next;
            }
            self.slot_start(s) + t
        });
        match (wheel, self.far.peek_time()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    pub fn pending(&self) -> usize {
        self.in_wheel + self.far.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_break_by_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(10, Event::PortFree(1));
        q.schedule(5, Event::PortFree(2));
        q.schedule(10, Event::PortFree(3));
        q.schedule(10, Event::PortFree(4));
        let order: Vec<Event> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec![Event::PortFree(2), Event::PortFree(1), Event::PortFree(3), Event::PortFree(4)]);
    }

    #[test]
    fn far_timers_tie_with_near_events_by_insertion_order() {
        let mut q = EventQueue::new();
        let (coarse, beyond) = (200_000_000u64, 500_000_000_000u64); // 200 us, 0.5 s
        q.schedule(coarse, Event::PortFree(1)); // coarse wheel
        q.schedule(beyond, Event::PortFree(2)); // beyond the coarse span
        q.schedule(coarse - 1, Event::PortFree(3));
        assert_eq!(q.pop(), Some((coarse - 1, Event::PortFree(3))));
        // Now the same times land in the wheel and in the coarse wheel: older first.
        q.schedule(coarse, Event::PortFree(4));
        assert_eq!(q.peek_time(), Some(coarse));
        assert_eq!(q.pop(), Some((coarse, Event::PortFree(1))));
        assert_eq!(q.pop(), Some((coarse, Event::PortFree(4))));
        q.schedule(beyond, Event::PortFree(5)); // now within the coarse span
        q.schedule(beyond - 100_000_000, Event::PortFree(6));
        assert_eq!(q.pending(), 3);
        assert_eq!(q.pop(), Some((beyond - 100_000_000, Event::PortFree(6))));
        q.schedule(beyond, Event::PortFree(7)); // in the wheel by now
        let rest: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            rest,
            vec![(beyond, Event::PortFree(2)), (beyond, Event::PortFree(5)), (beyond, Event::PortFree(7))]
        );
    }

    #[test]
    #[should_panic(expected = "in the past")]
    fn past_events_are_rejected() {
        let mut q = EventQueue::new();
        q.schedule(10, Event::FlowArrival);
        q.pop();
        q.schedule(9, Event::FlowArrival);
    }

    #[test]
    fn matches_a_sorted_order_on_random_input() {
        // Mixes near events, far timers (beyond the wheel), and ties.
        let mut rng = crate::engine::rng::Rng::seed_from(9);
        let mut q = EventQueue::new();
        let mut expect = Vec::new();
        let mut seq = 0u32;
        for round in 0..200 {
            for _ in 0..(rng.below(100) + 1) {
                // Near, in the wheel, in the coarse far wheel, beyond it (0.3 s).
                let horizon = [50u64, 100_000, 10_000_000, 1_000_000_000, 300_000_000_000][rng.below(5) as usize];
                let t = q.now() + rng.below(horizon);
                q.schedule(t, Event::PortFree(seq));
                expect.push((t, seq));
                seq += 1;
            }
            expect.sort();
            for _ in 0..(rng.below(80) + round % 40) {
                assert_eq!(q.peek_time(), expect.first().map(|e| e.0));
                let Some((t, e)) = q.pop() else { break };
                let (et, es) = expect.remove(0);
                assert_eq!((t, e), (et, Event::PortFree(es)));
            }
        }
        while let Some((t, e)) = q.pop() {
            let (et, es) = expect.remove(0);
            assert_eq!((t, e), (et, Event::PortFree(es)));
        }
        assert!(expect.is_empty());
        assert_eq!(q.pending(), 0);
    }
}
