//! An egress port: its queues (one FIFO per priority class), the link it drives (rate and
//! propagation delay) and the packets on that link (the pipe). Ports are store-and-forward: a packet
//! reaches the far end `tx_time + delay` after it starts serializing, and only then is forwarded.
//!
//! The pipe is a FIFO of (arrival time, packet); arrivals are in order because serializations on
//! one link never overlap. One pending `LinkArrival` event per non-empty pipe suffices.

use crate::net::packet::PacketId;
use crate::net::pipeline::credit_shaper::CreditShaper;
use crate::net::pipeline::scheduler::Dequeued;
use crate::net::queue::MAX_PRIORITIES;
use crate::time::{Rate, Time};
use std::collections::VecDeque;

pub type NodeId = u32;

/// Marks data packets in a queue entry's size field.
const DATA_BIT: u32 = 1 << 31;
/// Class queues stored inside the port (see `Port::classes`).
const INLINE_CLASSES: usize = 2;
/// Packets on a link kept in the port itself (two cache lines). At 100 Gb/s with 1 us links an NDP
/// fabric's links hold 3 to 8 packets (data, headers and pulls) nearly all the time.
const PIPE_INLINE: usize = 8;
pub type PortId = u32;
/// Cache lines `Port::prefetch` fetches: up to the end of the pipe.
const PREFETCH_LINES: usize =
    (std::mem::offset_of!(Port, pipe) + std::mem::size_of::<[(Time, PacketId); PIPE_INLINE]>()).div_ceil(64);
const _: () = assert!(std::mem::size_of::<Port>() == 512, "a port is eight cache lines");

/// Where a port sits; queue settings can differ per role.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortRole {
    /// A host's NIC, towards its edge switch.
    HostNic,
    /// A switch port facing a host (the downlink to the receiver).
    ToHost,
    /// A switch port facing another switch.
    Fabric,
}

impl PortRole {
    pub fn name(self) -> &'static str {
        match self {
            PortRole::HostNic => "host_nic",
            PortRole::ToHost => "to_host",
            PortRole::Fabric => "fabric",
        }
    }
}

/// Occupancy and counters over the measurement window.
#[derive(Clone, Debug, Default)]
pub struct OccupancyStats {
    pub max_bytes: u64,
    /// Integral of occupancy over time, in byte-picoseconds.
    pub area: u128,
    pub last_change: Time,
}

impl OccupancyStats {
    /// Records that occupancy changes from `before` to `after` at `now`.
    #[inline]
    pub fn update(&mut self, before: u64, after: u64, now: Time) {
        self.area += before as u128 * (now - self.last_change) as u128;
        self.last_change = now;
        if after > self.max_bytes {
            self.max_bytes = after;
        }
    }

    pub fn reset(&mut self, current: u64, now: Time) {
        *self = OccupancyStats { max_bytes: current, area: 0, last_change: now };
    }

    /// Time-weighted mean occupancy from `since` to `now` (closing the last interval).
    pub fn mean(&self, current: u64, since: Time, now: Time) -> f64 {
        if now <= since {
            return current as f64;
        }
        let area = self.area + current as u128 * (now - self.last_change) as u128;
        area as f64 / (now - since) as f64
    }
}

#[derive(Clone, Debug, Default)]
pub struct PortCounters {
    pub tx_bytes: u64,
    pub tx_packets: u64,
    /// Packets dropped by the queue (full buffer, or a full header queue when trimming).
    pub drops: u64,
    /// Packets the link lost at its far end (random loss, `loss_probability`).
    pub losses: u64,
    pub marks: u64,
    /// Data packets trimmed to headers here.
    pub trims: u64,
    /// Headers returned to their sender from here.
    pub bounces: u64,
}

/// Fields in the order the hot path reads them (`repr(C)`: the compiler's own order had put the
/// credit shaper's pointer, tested on every enqueue, on a line of its own): the first five cache
/// lines hold what an enqueue, a dequeue and a transmission touch, then the link's packets, then
/// what is rarely used. `prefetch` fetches the hot lines and the pipe.
#[repr(C, align(64))]
pub struct Port {
    /// The link is busy serializing until this time.
    pub busy_until: Time,
    pub rate: Rate,
    /// Bytes waiting in the queues (not counting the packet on the wire).
    pub bytes: u64,
    pub packets: u64,
    /// ExpressPass credit queue and token bucket (`pipeline::credit_shaper`); `None`: unshaped.
    pub shaper: Option<Box<CreditShaper>>,
    /// Index of this port's queue configuration.
    pub cfg: u16,
    pub role: PortRole,
    /// A `PortFree` event is pending for this port.
    pub wake_pending: bool,
    /// The owner wants to hear when this port goes idle (a host transport that pulls its packets).
    pub notify_idle: bool,
    /// Bit c set: class c is paused (link-level flow control).
    pub paused: u8,
    /// Something happens when a packet leaves: marking at dequeue, INT, shared-buffer release
    /// (`pipeline::dequeue`). Off, the transmission path skips the stage with one test.
    pub dequeue_stage: bool,
    nclasses: u8,
    /// Wire bytes of the data packet being serialized (0 if the packet on the wire is not data);
    /// trimming counts it as part of the data queue, as htsim does.
    pub wire_data_bytes: u32,
    /// WRR: what the class being served may still send this turn.
    pub(crate) rr_left: u32,
    /// Per class: (packet, wire size with DATA_BIT set for data packets). Keeping the size here
    /// means dequeuing never touches the pooled packet, which is cold by then. The first
    /// `INLINE_CLASSES` queues live in the port itself, one pointer hop closer than `more_classes`
    /// (the dequeue is a cache miss per hop otherwise; most runs use one or two classes).
    classes: [VecDeque<(PacketId, u32)>; INLINE_CLASSES],
    pub occupancy: OccupancyStats,
    /// Pacing: after a packet the port stays busy until the packet would have left at this rate
    /// (serialization itself is at the link rate). `None`: back to back at the link rate.
    pub pace: Option<Rate>,
    /// Propagation delay, plus the far switch's processing latency.
    pub delay: Time,
    pub counters: PortCounters,
    pub owner: NodeId,
    pub peer: NodeId,
    /// Bytes waiting per class.
    class_bytes: [u64; MAX_PRIORITIES as usize],
    /// Probability that the link loses a packet at its far end (0 for a lossless link).
    pub loss: f64,
    /// Index in `pipe` of the packet nearest the far end, and how many `pipe` holds.
    pipe_start: u8,
    pipe_len: u8,
    /// Round robin (WRR, DRR): the class being served.
    pub(crate) rr_class: u8,
    /// `pipe_rest` holds packets (the ring behind it is full).
    pipe_spilled: bool,
    /// The first packets on the link, nearest its far end first (arrival time, packet): a ring of
    /// `PIPE_INLINE` kept in the port, so the arrival handler rarely touches `pipe_rest` (its
    /// buffer is a cache miss of its own; at 3,456 hosts it cost a seventh of the event loop).
    pipe: [(Time, PacketId); PIPE_INLINE],
    more_classes: Vec<VecDeque<(PacketId, u32)>>,
    /// DRR: each class's credit in bytes (`None` under other disciplines; boxed, since ports are
    /// hot and most never use it).
    pub(crate) deficits: Option<Box<[u32; MAX_PRIORITIES as usize]>>,
    /// The packets behind the inline ones, in arrival order (empty unless `pipe` is full; boxed,
    /// allocated when first needed: most links never hold more than `PIPE_INLINE`).
    #[allow(clippy::box_collection)] // 8 bytes in the port where a `VecDeque` takes 32
    pipe_rest: Option<Box<VecDeque<(Time, PacketId)>>>,
}

impl Port {
    pub fn new(owner: NodeId, peer: NodeId, rate: Rate, delay: Time, role: PortRole, cfg: u16, priorities: u8) -> Port {
        Port {
            busy_until: 0,
            rate,
            delay,
            pace: None,
            loss: 0.0,
            owner,
            peer,
            bytes: 0,
            packets: 0,
            cfg,
            role,
            wake_pending: false,
            notify_idle: false,
            paused: 0,
            dequeue_stage: false,
            classes: Default::default(),
            more_classes: (INLINE_CLASSES as u8..priorities.max(INLINE_CLASSES as u8))
                .map(|_| VecDeque::new())
                .collect(),
            nclasses: priorities,
            class_bytes: [0; MAX_PRIORITIES as usize],
            rr_class: 0,
            rr_left: 0,
            deficits: None,
            wire_data_bytes: 0,
            pipe: [(0, 0); PIPE_INLINE],
            pipe_start: 0,
            pipe_len: 0,
            pipe_rest: None,
            pipe_spilled: false,
            occupancy: OccupancyStats::default(),
            counters: PortCounters::default(),
            shaper: None,
        }
    }

    /// How long the port is busy with a packet of `size` bytes (serialization, or the pacing gap).
    #[inline]
    pub fn busy_time(&self, size: u32) -> Time {
        let tx = self.rate.tx_time(size);
        match self.pace {
            None => tx,
            Some(p) => tx.max(p.tx_time(size)),
        }
    }

    pub fn priorities(&self) -> u8 {
        self.nclasses
    }

    #[inline]
    fn queue(&self, c: usize) -> &VecDeque<(PacketId, u32)> {
        if c < INLINE_CLASSES {
            &self.classes[c]
        } else {
            &self.more_classes[c - INLINE_CLASSES]
        }
    }

    #[inline]
    fn queue_mut(&mut self, c: usize) -> &mut VecDeque<(PacketId, u32)> {
        if c < INLINE_CLASSES {
            &mut self.classes[c]
        } else {
            &mut self.more_classes[c - INLINE_CLASSES]
        }
    }

    #[inline]
    pub fn class_of(&self, prio: u8) -> usize {
        (prio as usize).min(self.nclasses as usize - 1)
    }

    /// Appends a packet of `size` wire bytes to a class. Occupancy totals are the network's job.
    #[inline]
    pub fn push(&mut self, class: usize, pkt: PacketId, size: u32, is_data: bool) {
        debug_assert!(size < DATA_BIT);
        self.queue_mut(class).push_back((pkt, size | if is_data { DATA_BIT } else { 0 }));
        self.class_bytes[class] += size as u64;
    }

    /// Removes the newest packet of a class (trimming evicts the tail).
    pub fn pop_tail(&mut self, class: usize) -> Option<(PacketId, u32)> {
        let (p, meta) = self.queue_mut(class).pop_back()?;
        self.class_bytes[class] -= (meta & !DATA_BIT) as u64;
        Some((p, meta & !DATA_BIT))
    }

    pub fn class_len(&self, class: usize) -> usize {
        self.queue(class).len()
    }

    pub fn class_bytes(&self, class: usize) -> u64 {
        self.class_bytes[class]
    }

    /// Class `c` has a packet and is not paused.
    #[inline]
    pub(crate) fn sendable(&self, c: usize) -> bool {
        self.paused & (1 << c) == 0 && !self.queue(c).is_empty()
    }

    /// Wire bytes of the packet at the head of class `c` (which must have one).
    #[inline]
    pub(crate) fn head_size(&self, c: usize) -> u32 {
        self.queue(c).front().expect("non-empty class").1 & !DATA_BIT
    }

    /// Takes the head packet of class `c` (which must have one). Occupancy totals are the network's.
    #[inline]
    pub(crate) fn pop_class(&mut self, c: usize) -> Dequeued {
        let (pkt, meta) = self.queue_mut(c).pop_front().expect("sendable class is non-empty");
        let size = meta & !DATA_BIT;
        self.class_bytes[c] -= size as u64;
        Dequeued { pkt, size, is_data: meta & DATA_BIT != 0, class: c }
    }

    /// The packets waiting in class `c`, oldest first.
    pub fn class_packets(&self, c: usize) -> impl Iterator<Item = PacketId> + '_ {
        self.queue(c).iter().map(|&(p, _)| p)
    }

    /// Whether some unpaused class has a packet waiting.
    #[inline]
    pub fn has_sendable(&self) -> bool {
        self.packets > 0 && (0..self.nclasses as usize).any(|c| self.sendable(c))
    }

    /// Puts a packet on the link; returns true if the link was empty (its arrival is the next).
    #[inline]
    pub fn pipe_push(&mut self, arrival: Time, pkt: PacketId) -> bool {
        debug_assert!(self.pipe_tail().is_none_or(|(t, _)| t <= arrival), "links deliver in order");
        let len = self.pipe_len as usize;
        if len < PIPE_INLINE {
            debug_assert!(self.pipe_rest.as_ref().is_none_or(|r| r.is_empty()), "the ring fills first");
            self.pipe[(self.pipe_start as usize + len) % PIPE_INLINE] = (arrival, pkt);
            self.pipe_len += 1;
            len == 0
        } else {
            self.pipe_rest.get_or_insert_default().push_back((arrival, pkt));
            self.pipe_spilled = true;
            false
        }
    }

    #[inline]
    pub fn pipe_pop(&mut self) -> (Time, PacketId) {
        assert!(self.pipe_len > 0, "LinkArrival on an empty pipe");
        let start = self.pipe_start as usize;
        let head = self.pipe[start];
        self.pipe_start = ((start + 1) % PIPE_INLINE) as u8;
        let was_full = self.pipe_len as usize == PIPE_INLINE;
        self.pipe_len -= 1;
        // `pipe_rest` is non-empty only behind a full ring, whose end is the slot just freed. Tested
        // through the ring's length and a flag in the port: once allocated, the box stays, and
        // reading it on every arrival was a cache miss (7% of the time at 3,456 hosts, where bursts
        // of headers overfill links; and still 3.5% of the loop when read at every full ring's pop:
        // 6.6% of arrivals there, two thirds of them with nothing behind the ring).
        debug_assert!(was_full || self.pipe_rest.as_ref().is_none_or(|r| r.is_empty()));
        debug_assert_eq!(self.pipe_spilled, self.pipe_rest.as_ref().is_some_and(|r| !r.is_empty()));
        if was_full && self.pipe_spilled {
            let rest = self.pipe_rest.as_mut().expect("a spilled pipe has its box");
            self.pipe[start] = rest.pop_front().expect("a spilled pipe holds packets");
            self.pipe_len += 1;
            self.pipe_spilled = !rest.is_empty();
        }
        head
    }

    /// Hints the CPU to fetch the port: an event handler touches its first five lines and the
    /// pipe's (the whole port but for its last, rarely used, fields). No effect on results.
    #[inline(always)]
    pub fn prefetch(&self) {
        #[cfg(target_arch = "x86_64")]
        {
            let base = self as *const Port as *const i8;
            for line in 0..PREFETCH_LINES {
                // SAFETY: prefetching is a hint, and every line lies inside the port.
                unsafe { std::arch::x86_64::_mm_prefetch(base.add(line * 64), std::arch::x86_64::_MM_HINT_T0) }
            }
        }
    }

    /// Hints the CPU to fetch the head entry of each inline class queue (their ring buffers are
    /// allocations of their own: reading the head to dequeue was a sixth of the time at 3,456
    /// hosts). Reads the port, so it should be in cache already. No effect on results.
    #[inline(always)]
    pub fn prefetch_queue_heads(&self) {
        #[cfg(target_arch = "x86_64")]
        for q in &self.classes {
            if let Some(e) = q.front() {
                // SAFETY: prefetching is a hint; the address is the entry's.
                unsafe { std::arch::x86_64::_mm_prefetch(e as *const _ as *const i8, std::arch::x86_64::_MM_HINT_T0) }
            }
        }
    }

    #[inline]
    fn pipe_head(&self) -> Option<(Time, PacketId)> {
        (self.pipe_len > 0).then(|| self.pipe[self.pipe_start as usize])
    }

    #[inline]
    pub fn pipe_head_packet(&self) -> Option<PacketId> {
        self.pipe_head().map(|(_, p)| p)
    }

    #[inline]
    pub fn pipe_head_time(&self) -> Option<Time> {
        self.pipe_head().map(|(t, _)| t)
    }

    /// The packet most recently put on the link (arrival time, packet).
    pub fn pipe_tail(&self) -> Option<(Time, PacketId)> {
        let last = (self.pipe_len > 0).then(|| self.pipe[(self.pipe_start + self.pipe_len - 1) as usize % PIPE_INLINE]);
        self.pipe_rest.as_ref().and_then(|r| r.back().copied()).or(last)
    }

    pub fn in_pipe(&self) -> usize {
        self.pipe_len as usize + self.pipe_rest.as_ref().map_or(0, |r| r.len())
    }

    /// What is on the link with arrival times, nearest the far end first (PFC frames included).
    pub fn pipe_entries(&self) -> impl DoubleEndedIterator<Item = (Time, PacketId)> + '_ {
        let inline = (0..self.pipe_len as usize).map(|i| self.pipe[(self.pipe_start as usize + i) % PIPE_INLINE]);
        inline.chain(self.pipe_rest.iter().flat_map(|r| r.iter().copied()))
    }

    /// What is on the link, nearest the far end first.
    pub fn pipe_packets(&self) -> impl Iterator<Item = PacketId> + '_ {
        self.pipe_entries().map(|(_, p)| p)
    }
}
