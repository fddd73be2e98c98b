//! The event queue: one binary heap of (time, insertion sequence, event). Ties on time are broken
//! by insertion order, which makes every run a pure function of its spec and seed.
//!
//! Events are 8-byte plain enums; a heap entry is 24 bytes. The pending set stays small because the
//! network schedules at most one event per link in propagation and one per backlogged port, never
//! one per packet in flight.

use super::time::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The packet at the head of this port's link reaches the far end.
    LinkArrival(u32),
    /// This port finished serializing a packet and may start the next.
    PortFree(u32),
    /// The workload's next flow starts.
    FlowArrival,
    /// A transport timer; `kind` and `id` mean what the transport says.
    Timer { kind: u8, id: u32 },
    /// The measurement window opens: statistics are reset.
    MeasureStart,
    /// Periodic sampling of queue lengths (when enabled).
    Sample,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: Time,
    seq: u64,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    // Reversed: BinaryHeap is a max-heap and we want the earliest (time, seq) first.
    fn cmp(&self, o: &Self) -> Ordering {
        o.time.cmp(&self.time).then(o.seq.cmp(&self.seq))
    }
}

#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
    now: Time,
    /// Events popped so far.
    pub processed: u64,
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
        self.heap.push(Entry { time, seq: self.seq, event });
    }

    /// Pops the earliest event and advances the clock to it.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        let e = self.heap.pop()?;
        debug_assert!(e.time >= self.now);
        self.now = e.time;
        self.processed += 1;
        Some((e.time, e.event))
    }

    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.time)
    }

    pub fn pending(&self) -> usize {
        self.heap.len()
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
    #[should_panic(expected = "in the past")]
    fn past_events_are_rejected() {
        let mut q = EventQueue::new();
        q.schedule(10, Event::FlowArrival);
        q.pop();
        q.schedule(9, Event::FlowArrival);
    }

    #[test]
    fn event_is_small() {
        assert_eq!(std::mem::size_of::<Event>(), 8);
    }
}
