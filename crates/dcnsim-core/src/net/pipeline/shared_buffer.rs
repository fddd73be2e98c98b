//! Admission by a switch's shared buffer, after the HPCC authors' ns-3 switches (`SwitchMmu`) and
//! the dynamic thresholds of Choudhury & Hahne (ToN 1998). Each switch has `buffer_bytes`; from it
//! are set aside a reserve and a PFC headroom per (ingress port, lossless class); the rest is the
//! shared pool. With `free` the shared pool not in use, a port's threshold is
//!
//!   T(port) = alpha(port) x free,
//!
//! alpha by default 2^-shift, `shift` being the alpha shift at ports of the host rate, one less per
//! doubling of the port's rate (ns-3: 3 at 100 G, 1 at 400 G); or given per port rate
//! (`buffer_alpha_by_rate`). Alpha is kept in units of 2^-16, so a power of two is exact (the
//! threshold is the shift's).
//!
//! Lossless (PFC) classes are accounted to the port they came in on (their *ingress*: the link from
//! the upstream node), as in ns-3: per (ingress, class) the first `reserve` bytes are guaranteed,
//! then bytes come from the shared pool while the pair's shared use stays within T(ingress), then
//! from the pair's headroom. A packet overflowing the headroom too is dropped and counted as a
//! configuration error (the headroom is too small for the link). PFC (`pipeline::pfc`) pauses a
//! pair that uses headroom or whose shared use reached T, and resumes it when its headroom is empty
//! and its shared use is zero or `resume_offset` below T.
//!
//! Lossy classes are admitted per egress queue, as shared-buffer switches do for lossy traffic:
//! a packet joins if its (egress port, class) queue stays within T(egress), else it is dropped.
//! They take no reserve and no headroom. Or (`lossy_admission = "ingress"`, `ingress_lossy`) as the
//! HPCC authors' ns-3 switch with PFC off, which keeps its MMU and ignores the PAUSE frames: lossy
//! classes are accounted to their ingress exactly as lossless ones (reserve, shared within
//! T(ingress), headroom) and a packet beyond the headroom is dropped; no PAUSE is sent. The
//! highest class is then not accounted at all (`unaccounted`, ns-3's queue 0).
//!
//! Differences from ns-3, on purpose: reserve and headroom are per (ingress, lossless class), so the
//! totals set aside count every lossless class (ns-3 sets aside one reserve and one headroom per
//! port); a pair within its reserve is never paused; ns-3 has no lossy classes besides its
//! unaccounted queue 0.

use crate::engine::events::EventQueue;
use crate::net::network::Network;
use crate::net::packet::{Fate, PacketId, PacketKind, NO_PORT};
use crate::net::pipeline::marking::mark_on_enqueue;
use crate::net::port::PortId;
use crate::net::queue::MAX_PRIORITIES;
use crate::record::trace::TraceEvent;
use crate::time::Time;

const CLASSES: usize = MAX_PRIORITIES as usize;

/// One switch's buffer.
#[derive(Clone, Debug, Default)]
pub struct SwitchBuffer {
    pub size: u64,
    /// Set aside for headroom and reserves: not part of the shared pool.
    pub headroom_total: u64,
    pub reserve_total: u64,
    /// Bytes taken from the shared pool, and held in headroom, right now.
    pub shared_used: u64,
    pub headroom_used: u64,
    /// Maxima over the measurement window.
    pub max_shared: u64,
    pub max_headroom: u64,
    /// Lossless packets dropped because their headroom was full, over the whole run.
    pub headroom_overflows: u64,
}

impl SwitchBuffer {
    /// The shared pool not in use.
    #[inline]
    fn free(&self) -> u64 {
        self.size.saturating_sub(self.headroom_total + self.reserve_total + self.shared_used)
    }
}

/// Alpha in units of 2^-16 (`ALPHA_ONE` = 1).
pub const ALPHA_ONE: u64 = 1 << 16;

/// `alpha x free`, alpha in units of 2^-16; a power of two gives exactly `free >> shift`.
#[inline]
pub fn dynamic_threshold(free: u64, alpha_q16: u64) -> u64 {
    ((free as u128 * alpha_q16 as u128) >> 16) as u64
}

/// Buffer state by port: as the ingress of the switch its link enters (lossless accounting), and
/// its threshold's alpha as an ingress or an egress (both by its rate).
#[derive(Clone, Debug)]
pub struct BufferPort {
    /// Index (node - hosts) of the switch this port's link enters; `u32::MAX` for links into hosts.
    pub into: u32,
    /// Index of the switch that owns this port; `u32::MAX` for host NICs.
    pub owner: u32,
    /// Dynamic threshold factor, in units of 2^-16.
    pub alpha_q16: u64,
    /// As an ingress: reserve and shared bytes held, per class.
    pub used: [u64; CLASSES],
    /// As an ingress: headroom bytes held, per class.
    pub hdrm: [u64; CLASSES],
    /// As an ingress: the headroom of each lossless class.
    pub headroom: u64,
    /// As an ingress: classes the switch has paused (the last PFC frame it sent was a PAUSE).
    pub paused: u8,
}

impl Default for BufferPort {
    fn default() -> Self {
        BufferPort {
            into: u32::MAX,
            owner: u32::MAX,
            alpha_q16: ALPHA_ONE,
            used: [0; CLASSES],
            hdrm: [0; CLASSES],
            headroom: 0,
            paused: 0,
        }
    }
}

/// Where an admitted packet's bytes went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Reserve,
    Shared,
    Headroom,
    Drop,
}

/// The shared buffers of all switches.
#[derive(Clone, Debug, Default)]
pub struct Buffers {
    pub switches: Vec<SwitchBuffer>,
    /// By `PortId`.
    pub ports: Vec<BufferPort>,
    pub reserve: u64,
    pub resume_offset: u64,
    /// Lossless classes (bit c), 0 without PFC.
    pub lossless: u8,
    /// Lossy classes accounted to their ingress (bit c), and classes not accounted at all.
    pub ingress_lossy: u8,
    pub unaccounted: u8,
}

impl Buffers {
    #[inline]
    pub fn is_lossless(&self, class: usize) -> bool {
        self.lossless & (1 << class) != 0
    }

    /// The class is accounted to the port it came in on (lossless, or lossy the ns-3 way).
    #[inline]
    pub fn by_ingress(&self, class: usize) -> bool {
        (self.lossless | self.ingress_lossy) & (1 << class) != 0
    }

    #[inline]
    pub fn is_accounted(&self, class: usize) -> bool {
        self.unaccounted & (1 << class) == 0
    }

    /// The dynamic threshold on a lossless pair's shared use, for an ingress.
    #[inline]
    pub fn ingress_threshold(&self, ingress: PortId) -> u64 {
        let i = &self.ports[ingress as usize];
        dynamic_threshold(self.switches[i.into as usize].free(), i.alpha_q16)
    }

    /// The dynamic threshold on a lossy egress queue.
    #[inline]
    pub fn egress_threshold(&self, egress: PortId) -> u64 {
        let e = &self.ports[egress as usize];
        dynamic_threshold(self.switches[e.owner as usize].free(), e.alpha_q16)
    }

    #[inline]
    pub fn shared_of(&self, ingress: PortId, class: usize) -> u64 {
        self.ports[ingress as usize].used[class].saturating_sub(self.reserve)
    }

    /// Accounts `size` bytes of a class arriving on `ingress`, or refuses them (for a lossless
    /// class a configuration error: its headroom was too small).
    pub fn admit_by_ingress(&mut self, ingress: PortId, class: usize, size: u64) -> Verdict {
        debug_assert!(self.by_ingress(class));
        let lossless = self.is_lossless(class);
        let t = self.ingress_threshold(ingress);
        let reserve = self.reserve;
        let i = &mut self.ports[ingress as usize];
        let s = &mut self.switches[i.into as usize];
        let new = i.used[class] + size;
        if new <= reserve {
            i.used[class] = new;
            return Verdict::Reserve;
        }
        if new - reserve <= t {
            s.shared_used += (new - reserve) - i.used[class].saturating_sub(reserve);
            s.max_shared = s.max_shared.max(s.shared_used);
            i.used[class] = new;
            return Verdict::Shared;
        }
        if i.hdrm[class] + size <= i.headroom {
            i.hdrm[class] += size;
            s.headroom_used += size;
            s.max_headroom = s.max_headroom.max(s.headroom_used);
            return Verdict::Headroom;
        }
        s.headroom_overflows += lossless as u64;
        Verdict::Drop
    }

    /// Accounts `size` bytes of a lossy class joining `egress`, whose class queue holds `queued`
    /// bytes, or refuses them.
    pub fn admit_lossy(&mut self, egress: PortId, queued: u64, size: u64) -> Verdict {
        if queued + size > self.egress_threshold(egress) {
            return Verdict::Drop;
        }
        let s = &mut self.switches[self.ports[egress as usize].owner as usize];
        s.shared_used += size;
        s.max_shared = s.max_shared.max(s.shared_used);
        Verdict::Shared
    }

    /// Returns `size` bytes of a class accounted to `ingress` as they leave: headroom first, then
    /// shared, then reserve.
    pub fn release_by_ingress(&mut self, ingress: PortId, class: usize, size: u64) {
        let reserve = self.reserve;
        let i = &mut self.ports[ingress as usize];
        let s = &mut self.switches[i.into as usize];
        debug_assert!(size <= i.used[class] + i.hdrm[class], "releasing bytes never admitted");
        let from_hdrm = i.hdrm[class].min(size);
        i.hdrm[class] -= from_hdrm;
        s.headroom_used -= from_hdrm;
        let rest = size - from_hdrm;
        let shared_before = i.used[class].saturating_sub(reserve);
        i.used[class] -= rest;
        s.shared_used -= shared_before - i.used[class].saturating_sub(reserve);
    }

    /// Returns `size` bytes of a lossy class leaving `egress`.
    pub fn release_lossy(&mut self, egress: PortId, size: u64) {
        let s = &mut self.switches[self.ports[egress as usize].owner as usize];
        debug_assert!(s.shared_used >= size, "releasing bytes never admitted");
        s.shared_used -= size;
    }

    /// A lossless pair that uses headroom, or whose shared use reached the threshold, is paused.
    pub fn should_pause(&self, ingress: PortId, class: usize) -> bool {
        let i = &self.ports[ingress as usize];
        if i.paused & (1 << class) != 0 {
            return false;
        }
        let shared = self.shared_of(ingress, class);
        i.hdrm[class] > 0 || (shared > 0 && shared >= self.ingress_threshold(ingress))
    }

    /// A paused pair resumes once its headroom is empty and its shared use is zero or
    /// `resume_offset` below the threshold.
    pub fn should_resume(&self, ingress: PortId, class: usize) -> bool {
        let i = &self.ports[ingress as usize];
        if i.paused & (1 << class) == 0 || i.hdrm[class] > 0 {
            return false;
        }
        let shared = self.shared_of(ingress, class);
        shared == 0 || shared + self.resume_offset <= self.ingress_threshold(ingress)
    }

    /// Bytes of a lossless `class` from `ingress` held by its switch.
    pub fn held(&self, ingress: PortId, class: usize) -> u64 {
        let i = &self.ports[ingress as usize];
        i.used[class] + i.hdrm[class]
    }

    pub fn reset_stats(&mut self) {
        for s in &mut self.switches {
            s.max_shared = s.shared_used;
            s.max_headroom = s.headroom_used;
        }
    }
}

impl Network {
    /// Admission through the switch's shared buffer, then PFC, marking and the class queue.
    pub(crate) fn enqueue_shared(&mut self, port: PortId, pkt: PacketId, now: Time, ev: &mut EventQueue) {
        let packet = self.pool.get(pkt);
        let (size, ingress) = (packet.size, packet.ingress);
        debug_assert!(
            ingress != NO_PORT && self.ports[ingress as usize].peer == self.ports[port as usize].owner,
            "ingress unknown"
        );
        let p = &mut self.ports[port as usize];
        let class = p.class_of(packet.prio);
        let b = self.buffers.as_deref_mut().expect("ports with a shared buffer have one");
        let lossless = b.is_lossless(class);
        let verdict = if !b.is_accounted(class) {
            Verdict::Shared
        } else if b.by_ingress(class) {
            b.admit_by_ingress(ingress, class, size as u64)
        } else {
            b.admit_lossy(port, p.class_bytes(class), size as u64)
        };
        if verdict == Verdict::Drop {
            p.counters.drops += 1;
            if self.tracer.is_some() {
                self.trace_in_class(now, pkt, port, TraceEvent::Drop, class);
            }
            self.pool.release(pkt, Fate::Dropped);
            return;
        }
        if lossless && b.should_pause(ingress, class) {
            b.ports[ingress as usize].paused |= 1 << class;
            self.send_pfc(Network::reverse(ingress), class, true, now, ev);
        }
        let (cfg, p) = (&self.cfgs[self.ports[port as usize].cfg as usize], &mut self.ports[port as usize]);
        if mark_on_enqueue(cfg, p, self.pool.get_mut(pkt), &mut self.rng) && self.tracer.is_some() {
            self.trace_in_class(now, pkt, port, TraceEvent::Mark, class);
        }
        self.admit(port, pkt, class, now, ev);
    }

    /// A packet accounted to the shared buffer leaves its switch by `port`: free its bytes, and
    /// resume its ingress if PFC paused it and it has drained enough.
    pub(crate) fn release_shared(
        &mut self,
        port: PortId,
        pkt: PacketId,
        class: usize,
        size: u32,
        now: Time,
        ev: &mut EventQueue,
    ) {
        if self.ports[port as usize].shaper.is_some() && self.pool.get(pkt).kind == PacketKind::Credit {
            return; // credits wait in the port's credit queue, never in the shared buffer
        }
        let b = self.buffers.as_deref_mut().expect("ports with a shared buffer have one");
        if !b.is_accounted(class) {
            return;
        }
        if !b.by_ingress(class) {
            return b.release_lossy(port, size as u64);
        }
        let ingress = self.pool.get(pkt).ingress;
        b.release_by_ingress(ingress, class, size as u64);
        if b.is_lossless(class) && b.should_resume(ingress, class) {
            b.ports[ingress as usize].paused &= !(1 << class);
            self.send_pfc(Network::reverse(ingress), class, false, now, ev);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One switch; ports 0 and 1 enter it, port 2 leaves it; class 1 lossless, class 0 lossy.
    fn buffers(size: u64, headroom: u64, shift: u8) -> Buffers {
        let alpha_q16 = ALPHA_ONE >> shift;
        let into = |_| BufferPort { into: 0, headroom, alpha_q16, ..Default::default() };
        let mut ports: Vec<BufferPort> = (0..2).map(into).collect();
        ports.push(BufferPort { owner: 0, alpha_q16, ..Default::default() });
        Buffers {
            switches: vec![SwitchBuffer {
                size,
                headroom_total: 2 * headroom,
                reserve_total: 2 * 1000,
                ..Default::default()
            }],
            ports,
            reserve: 1000,
            resume_offset: 500,
            lossless: 0b10,
            ingress_lossy: 0,
            unaccounted: 0,
        }
    }

    #[test]
    fn reserve_then_shared_then_headroom_then_drop() {
        // Shared pool 18000 - 2000 - 2000 = 14000; shift 1: T = (14000 - shared) / 2.
        let mut b = buffers(18_000, 1000, 1);
        assert_eq!(b.admit_by_ingress(0, 1, 1000), Verdict::Reserve);
        assert_eq!(b.ingress_threshold(0), 7000);
        // The pair's shared use s may grow to T = (14000 - s) / 2: 1000, ..., 5000 (T 5000), and
        // then 6000 > 4500.
        let verdicts: Vec<Verdict> = (0..6).map(|_| b.admit_by_ingress(0, 1, 1000)).collect();
        assert_eq!(verdicts, [Verdict::Shared; 5].iter().copied().chain([Verdict::Headroom]).collect::<Vec<_>>());
        assert_eq!(b.switches[0].shared_used, 5000);
        assert!(b.should_pause(0, 1));
        assert_eq!(b.admit_by_ingress(0, 1, 1000), Verdict::Drop, "the headroom holds 1000 bytes");
        assert_eq!(b.switches[0].headroom_overflows, 1);
    }

    #[test]
    fn lossy_queues_get_a_dynamic_share_of_what_is_free() {
        // Shared pool 14000 and nothing in use: T = 7000 for the egress queue.
        let mut b = buffers(18_000, 1000, 1);
        let mut queued = 0;
        while b.admit_lossy(2, queued, 1000) == Verdict::Shared {
            queued += 1000;
        }
        // q joins while q + 1000 <= (14000 - q) / 2: up to q = 4000, so 5 packets.
        assert_eq!(queued, 5000);
        assert_eq!(b.switches[0].headroom_overflows, 0, "lossy drops are not configuration errors");
        for _ in 0..5 {
            b.release_lossy(2, 1000);
        }
        assert_eq!(b.switches[0].shared_used, 0);
    }

    #[test]
    fn release_restores_every_counter_and_resumes() {
        let mut b = buffers(20_000, 2000, 1);
        let mut admitted = 0;
        while b.admit_by_ingress(0, 1, 700) != Verdict::Drop {
            admitted += 1;
        }
        b.ports[0].paused = 0b10;
        assert!(b.switches[0].headroom_used > 0 && b.switches[0].shared_used > 0);
        let mut resumed_at = None;
        for k in 0..admitted {
            b.release_by_ingress(0, 1, 700);
            if resumed_at.is_none() && b.should_resume(0, 1) {
                resumed_at = Some(k);
            }
        }
        assert!(resumed_at.is_some_and(|k| k + 1 < admitted), "resumes before it drains: {resumed_at:?}");
        assert_eq!((b.switches[0].shared_used, b.switches[0].headroom_used, b.held(0, 1)), (0, 0, 0));
    }

    #[test]
    fn a_power_of_two_alpha_is_the_shift_and_a_fraction_scales_free() {
        for free in [0, 1, 7, 1000, 123_456_789, u64::from(u32::MAX) * 1000] {
            for shift in 0..=16 {
                assert_eq!(dynamic_threshold(free, ALPHA_ONE >> shift), free >> shift, "free {free} shift {shift}");
            }
        }
        // alpha = 0.33 (21627 / 65536): 8 MB free gives 0.33 x 8 MB to within 2^-16 of it.
        let q = (0.33 * ALPHA_ONE as f64).round() as u64;
        let t = dynamic_threshold(8_000_000, q);
        assert!((t as f64 - 0.33 * 8e6).abs() <= 8e6 / ALPHA_ONE as f64, "{t}");
    }

    /// A lossless pair alone under alpha holds alpha / (1 + alpha) of the shared pool at most
    /// (Choudhury & Hahne): 1/9 = 11% for alpha 1/8, 1/3 = 33% for alpha 1/2.
    #[test]
    fn alone_a_pair_fills_alpha_over_one_plus_alpha_of_the_pool() {
        for (shift, share) in [(3u8, 1.0 / 9.0), (1, 1.0 / 3.0)] {
            let pool = 900_000u64;
            let mut b = buffers(pool + 2 * 1000 + 2 * 100_000, 100_000, shift);
            while b.admit_by_ingress(0, 1, 100) != Verdict::Headroom {}
            let got = b.switches[0].shared_used as f64 / pool as f64;
            assert!((got - share).abs() < 0.001, "shift {shift}: {got} of the pool, expected {share}");
        }
    }

    /// ns-3 with PFC off: a lossy class accounted to its ingress fills reserve, shared share and
    /// headroom as a lossless one, then drops (a loss, not a configuration error) and never pauses.
    #[test]
    fn lossy_by_ingress_fills_the_headroom_then_drops() {
        let mut b = buffers(18_000, 1000, 1);
        (b.lossless, b.ingress_lossy, b.unaccounted) = (0, 0b10, 0b01);
        assert!(b.by_ingress(1) && !b.is_lossless(1) && !b.is_accounted(0));
        // As in `reserve_then_shared_then_headroom_then_drop`: 1000 reserve, 5000 shared, 1000 headroom.
        let verdicts: Vec<Verdict> = (0..8).map(|_| b.admit_by_ingress(0, 1, 1000)).collect();
        use Verdict::*;
        assert_eq!(verdicts, [Reserve, Shared, Shared, Shared, Shared, Shared, Headroom, Drop]);
        assert_eq!(b.switches[0].headroom_overflows, 0, "a lossy drop is no configuration error");
        // Another ingress still gets its own share of what is free: T = (14000 - 5000) / 2.
        assert_eq!(b.ingress_threshold(1), 4500);
        for _ in 0..7 {
            b.release_by_ingress(0, 1, 1000);
        }
        assert_eq!((b.switches[0].shared_used, b.switches[0].headroom_used, b.held(0, 1)), (0, 0, 0));
    }

    #[test]
    fn within_its_reserve_a_pair_is_never_paused() {
        // No shared pool at all: T = 0.
        let mut b = buffers(4000, 1000, 0);
        assert_eq!(b.ingress_threshold(0), 0);
        assert_eq!(b.admit_by_ingress(0, 1, 800), Verdict::Reserve);
        assert!(!b.should_pause(0, 1));
        assert_eq!(b.admit_by_ingress(0, 1, 800), Verdict::Headroom);
        assert!(b.should_pause(0, 1));
    }
}
