//! Packets: one compact plain struct, kept in a pool and referred to by a `PacketId` (u32 index).
//! Nothing is allocated per packet once the pool has grown to the peak number in flight.
//!
//! The generic fields (`seq`, `ack`, `ts`, `aux`) mean what the owning transport says they mean;
//! each transport documents its use in its header. The network reads only `size`, `dst`, `prio`,
//! `flags` (ECN bits), `lb`, `path` and `stage`, and writes `ingress` and `hops` at every switch.
//!
//! `stage` ([`StageMarks`], `net::pipeline::marks`) holds the data of single optional switch
//! stages (Dart's deflection tokens, PB-FS's PBT mark), each field of a type its stage declares,
//! so only that stage changes it. `hops` and `ingress` stay loose fields: they are not a stage's
//! but the forwarding core's, written by every switch whatever its stages (the hop count, and the
//! ingress port that PFC and the shared buffer account the packet to).
//!
//! In-band telemetry (INT, for HPCC) does not fit in 64 bytes: the pool keeps it in a side table
//! indexed like the packets (`net::pipeline::stages::int`), reset when a slot is reused.

use crate::net::pipeline::marks::StageMarks;
use crate::net::pipeline::stages::int::{IntHop, IntTable};
use crate::record::trace::TracedPacket;
use crate::time::Time;

pub use crate::ids::{FlowId, HostId, PacketId};

/// What a packet is, as far as transports and switches care. Names, not numeric codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum PacketKind {
    Data,
    Ack,
    Nack,
    Pull,
    Credit,
    CreditRequest,
    /// A data packet whose payload a switch cut off (NDP-style trimming); `seq` is kept.
    Header,
    /// A trimmed header that a switch returned to its sender because its header queue was full.
    Bounced,
    /// Link-level flow control (PFC) or a switch-generated feedback packet.
    Control,
}

impl PacketKind {
    /// Every kind (tests deliver each to transports that must ignore what they do not use).
    pub const ALL: [PacketKind; 9] = [
        PacketKind::Data,
        PacketKind::Ack,
        PacketKind::Nack,
        PacketKind::Pull,
        PacketKind::Credit,
        PacketKind::CreditRequest,
        PacketKind::Header,
        PacketKind::Bounced,
        PacketKind::Control,
    ];

    /// The kind's name in result tables, indexed like `ALL` (the `repr(u8)` order).
    pub const NAMES: [&'static str; 9] =
        ["data", "ack", "nack", "pull", "credit", "credit_request", "header", "bounced", "control"];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// Flag bits in `Packet::flags`.
pub mod flags {
    /// ECN-capable transport: the network may mark instead of dropping.
    pub const ECT: u8 = 1 << 0;
    /// Congestion experienced, set by a switch.
    pub const CE: u8 = 1 << 1;
    /// ECN echo, set by a receiver on an ACK for a CE-marked packet.
    pub const ECE: u8 = 1 << 2;
    /// First packet(s) of a connection (zero-RTT connection set-up).
    pub const SYN: u8 = 1 << 3;
    /// Last packet of a flow or message.
    pub const LAST: u8 = 1 << 4;
    /// A retransmission.
    pub const RETX: u8 = 1 << 5;
    /// Protocol-specific bit (SIRD: sender-congestion notification).
    pub const PROTO1: u8 = 1 << 6;
    /// Protocol-specific bit.
    pub const PROTO2: u8 = 1 << 7;
}

/// How switches pick among equal-cost next hops for this packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum LoadBalancing {
    /// Hash of `path` (the flow's key) with a per-switch seed: every packet of a flow takes one path.
    Ecmp,
    /// An independent uniform choice at every switch, per packet.
    Spray,
    /// The sender chose the path: `path` holds mixed-radix digits consumed hop by hop.
    Source,
    /// ECMP whose hash of `path` is the same at every switch of a tier, over next hops in link
    /// order: a flow's packets in the two directions take the same links (ExpressPass's credits
    /// and data; the authors' ns-2 `symmetric_` multipath classifier). Chosen by transports.
    Symmetric,
}

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    /// Global flow id (index into the flow table).
    pub flow: FlowId,
    pub src: HostId,
    pub dst: HostId,
    /// Bytes on the wire, headers included.
    pub size: u32,
    /// Application bytes carried (0 for control packets and trimmed headers).
    pub payload: u32,
    /// Transport-defined (DCTCP: byte offset of the first payload byte).
    pub seq: u64,
    /// Transport-defined (DCTCP: cumulative acknowledgement).
    pub ack: u64,
    /// Transport-defined time stamp (DCTCP: send time, echoed by the ACK).
    pub ts: Time,
    /// Transport-defined.
    pub aux: u32,
    /// Load-balancing state: ECMP key, or the source route's remaining digits.
    pub path: u32,
    pub kind: PacketKind,
    pub flags: u8,
    /// Strict-priority class, 0 = highest.
    pub prio: u8,
    pub lb: LoadBalancing,
    /// Switches this packet has entered so far (Swift scales its target delay by it).
    pub hops: u8,
    /// The port whose link delivered this packet to the switch holding it (the ingress that PFC
    /// and the shared buffer account it to); `NO_PORT` before its first switch.
    pub ingress: u32,
    /// The optional switch stages' own data (deflection tokens, the PBT mark): set by the sender's
    /// transport, changed only by its stage.
    pub stage: StageMarks,
}

impl TracedPacket for Packet {
    const KIND_NAMES: &'static [&'static str] = &PacketKind::NAMES;
    fn flow(&self) -> FlowId {
        self.flow
    }
    fn kind_code(&self) -> u32 {
        self.kind as u32
    }
    fn seq(&self) -> u64 {
        self.seq
    }
    fn ack(&self) -> u64 {
        self.ack
    }
    fn size_bytes(&self) -> u64 {
        self.size as u64
    }
}

// A packet fits one cache line (the pool is scanned and prefetched by line).
const _: () = assert!(size_of::<Packet>() <= 64, "Packet must fit a 64-byte cache line");

/// `Packet::ingress` of a packet still at its source.
pub const NO_PORT: u32 = u32::MAX;

impl Packet {
    pub fn new(kind: PacketKind, flow: FlowId, src: HostId, dst: HostId, size: u32) -> Packet {
        Packet {
            flow,
            src,
            dst,
            size,
            payload: 0,
            seq: 0,
            ack: 0,
            ts: 0,
            aux: 0,
            path: 0,
            kind,
            flags: 0,
            prio: 0,
            lb: LoadBalancing::Ecmp,
            hops: 0,
            ingress: NO_PORT,
            stage: StageMarks::default(),
        }
    }

    #[inline]
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}

/// Why a packet left the network; every packet leaves exactly once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Handed to the destination host's transport.
    Delivered,
    /// Dropped by a queue.
    Dropped,
}

/// The packet pool with packet-conservation accounting.
///
/// Invariant (checked by `check_conservation`): created == delivered + dropped + live.
pub struct PacketPool {
    slots: Vec<Packet>,
    /// Bit `id % 64` of word `id / 64`: slot `id` holds a live packet. Bits, not a `bool` per
    /// slot: `release` tests and clears it for every packet; at 3,456 hosts (123 k slots) the bits
    /// take 15 KB where the bytes took 123 KB (the test showed in the profile; no clear gain).
    live: Vec<u64>,
    free: Vec<PacketId>,
    pub created: u64,
    pub delivered: u64,
    pub dropped: u64,
    /// Payload cut from packets by trimming switches (the packet itself lives on as a header).
    pub trimmed: u64,
    /// INT records per slot, when switches stamp them (`[switch] int = true`).
    pub int: Option<Box<IntTable>>,
}

pub use crate::limits::MAX_LIVE_PACKETS;

impl Default for PacketPool {
    fn default() -> Self {
        Self::new()
    }
}

impl PacketPool {
    pub fn new() -> PacketPool {
        PacketPool {
            slots: Vec::new(),
            live: Vec::new(),
            free: Vec::new(),
            created: 0,
            delivered: 0,
            dropped: 0,
            trimmed: 0,
            int: None,
        }
    }

    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PacketId {
        self.created += 1;
        let id = if let Some(id) = self.free.pop() {
            debug_assert!(!self.is_live(id));
            self.slots[id as usize] = p;
            self.live[id as usize / 64] |= 1 << (id % 64);
            id
        } else {
            let id = self.slots.len();
            assert!(id < MAX_LIVE_PACKETS, "more than {MAX_LIVE_PACKETS} packets alive: the run is diverging");
            self.slots.push(p);
            if id.is_multiple_of(64) {
                self.live.push(0);
            }
            self.live[id / 64] |= 1 << (id % 64);
            id as PacketId
        };
        if self.int.is_some() {
            self.int_reset(id);
        }
        id
    }

    #[cold]
    #[inline(never)]
    fn int_reset(&mut self, id: PacketId) {
        if let Some(t) = self.int.as_deref_mut() {
            t.reset(id);
        }
    }

    #[cold]
    #[inline(never)]
    fn int_keep_delivered(&mut self, id: PacketId) {
        if let Some(t) = self.int.as_deref_mut() {
            t.keep_delivered(id);
        }
    }

    /// Switches stamp INT records into packets from now on.
    pub fn enable_int(&mut self) {
        let mut t = Box::<IntTable>::default();
        for id in 0..self.slots.len() {
            t.reset(id as PacketId);
        }
        self.int = Some(t);
    }

    /// The INT records a packet carries (empty without INT).
    pub fn int_hops(&self, id: PacketId) -> &[IntHop] {
        self.int.as_deref().map_or(&[], |t| t.hops(id))
    }

    /// The INT records of the packet last delivered to a host (for its transport's callback: the
    /// slot itself may be reused by then).
    pub fn delivered_int_hops(&self) -> &[IntHop] {
        self.int.as_deref().map_or(&[], |t| t.delivered())
    }

    #[inline]
    pub fn release(&mut self, id: PacketId, fate: Fate) {
        let (word, bit) = (&mut self.live[id as usize / 64], 1u64 << (id % 64));
        assert!(*word & bit != 0, "packet {id} released twice");
        *word &= !bit;
        self.free.push(id);
        if self.int.is_some() && fate == Fate::Delivered {
            self.int_keep_delivered(id);
        }
        match fate {
            Fate::Delivered => self.delivered += 1,
            Fate::Dropped => self.dropped += 1,
        }
    }

    /// Hints the CPU to fetch a packet (no effect on results).
    #[inline(always)]
    pub fn prefetch(&self, id: PacketId) {
        #[cfg(not(target_arch = "x86_64"))]
        let _ = id;
        #[cfg(target_arch = "x86_64")]
        if let Some(p) = self.slots.get(id as usize) {
            // SAFETY: prefetching is a hint; the address is the packet's.
            unsafe { std::arch::x86_64::_mm_prefetch(p as *const Packet as *const i8, std::arch::x86_64::_MM_HINT_T0) }
        }
    }

    /// A slot's packet, live or not, for prefetch hints that may name a stale id.
    #[inline(always)]
    pub fn peek(&self, id: PacketId) -> Option<&Packet> {
        self.slots.get(id as usize)
    }

    /// Slot `id` holds a live packet.
    #[inline]
    fn is_live(&self, id: PacketId) -> bool {
        self.live[id as usize / 64] & (1 << (id % 64)) != 0
    }

    #[inline]
    pub fn get(&self, id: PacketId) -> &Packet {
        debug_assert!(self.is_live(id));
        &self.slots[id as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        debug_assert!(self.is_live(id));
        &mut self.slots[id as usize]
    }

    pub fn live(&self) -> u64 {
        (self.slots.len() - self.free.len()) as u64
    }

    /// Peak number of packets alive at once (the pool never shrinks).
    pub fn capacity_used(&self) -> usize {
        self.slots.len()
    }

    pub fn check_conservation(&self) -> Result<(), String> {
        let accounted = self.delivered + self.dropped + self.live();
        if accounted == self.created {
            Ok(())
        } else {
            Err(format!(
                "packet conservation violated: created {} != delivered {} + dropped {} + in flight {}",
                self.created,
                self.delivered,
                self.dropped,
                self.live()
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_reuses_and_accounts() {
        let mut pool = PacketPool::new();
        let a = pool.alloc(Packet::new(PacketKind::Data, 0, 0, 1, 100));
        let b = pool.alloc(Packet::new(PacketKind::Ack, 0, 1, 0, 64));
        pool.release(a, Fate::Delivered);
        let c = pool.alloc(Packet::new(PacketKind::Data, 0, 0, 1, 100));
        assert_eq!(a, c);
        pool.release(b, Fate::Dropped);
        assert_eq!(pool.live(), 1);
        pool.check_conservation().unwrap();
    }

    #[test]
    #[should_panic(expected = "released twice")]
    fn double_release_panics() {
        let mut pool = PacketPool::new();
        let a = pool.alloc(Packet::new(PacketKind::Data, 0, 0, 1, 100));
        pool.release(a, Fate::Delivered);
        pool.release(a, Fate::Delivered);
    }
}
