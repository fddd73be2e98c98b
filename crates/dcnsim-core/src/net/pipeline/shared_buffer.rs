//! Admission by a switch's shared buffer, as in the HPCC authors' ns-3 switches (`SwitchMmu`;
//! Broadcom-style ingress accounting with dynamic thresholds, Choudhury & Hahne, ToN 1998).
//!
//! Every byte a switch holds is accounted to the port it came in on (its *ingress*: the link from
//! the upstream node) and its priority class. Per (ingress, class) the first `reserve` bytes are
//! guaranteed; beyond that, bytes come from the shared pool while the pair's shared use stays within
//! the dynamic threshold
//!
//!   T(ingress) = (buffer - all headroom - all reserve - shared in use) >> shift(ingress),
//!
//! where `shift` is the alpha shift at ports of the host rate, one less per doubling of the port's
//! rate (ns-3: 3 at 100 G, 1 at 400 G). A packet that does not fit goes, for a lossless (PFC)
//! class, into that pair's headroom, and is otherwise dropped; a lossless packet that overflows the
//! headroom too is dropped and counted as a configuration error (the headroom is too small for the
//! link). PFC (`pipeline::pfc`) pauses a lossless pair when it uses headroom or reaches T, and
//! resumes it when its headroom is empty and its shared use is zero or `resume_offset` below T.
//!
//! Differences from ns-3, on purpose: reserve and headroom are per (ingress, class), so the totals
//! set aside count every class (ns-3 sets aside one reserve and one headroom per port); a pair within
//! its reserve is never paused; lossy classes share the buffer under the same threshold (ns-3 runs
//! every class through PFC admission and exempts only queue 0).

use crate::engine::events::EventQueue;
use crate::engine::time::Time;
use crate::metrics::trace::TraceEvent;
use crate::net::network::Network;
use crate::net::packet::{Fate, PacketId, NO_PORT};
use crate::net::port::PortId;
use crate::net::queue::MAX_PRIORITIES;

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

/// The accounting of one ingress (the port whose link enters a switch), per class.
#[derive(Clone, Debug, Default)]
pub struct Ingress {
    /// Index of the switch the link enters (node - hosts); `u32::MAX` for links into hosts.
    pub switch: u32,
    /// Reserve and shared bytes held.
    pub used: [u64; CLASSES],
    /// Headroom bytes held.
    pub hdrm: [u64; CLASSES],
    /// Headroom of each lossless class.
    pub headroom: u64,
    pub shift: u8,
    /// Classes the switch has paused on this ingress (the last PFC frame it sent was a PAUSE).
    pub paused: u8,
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
    /// By the `PortId` of the ingress link.
    pub ingress: Vec<Ingress>,
    pub reserve: u64,
    pub resume_offset: u64,
    /// Lossless classes (bit c), 0 without PFC.
    pub lossless: u8,
}

impl Buffers {
    #[inline]
    pub fn is_lossless(&self, class: usize) -> bool {
        self.lossless & (1 << class) != 0
    }

    /// The dynamic threshold on one pair's shared use, for an ingress.
    #[inline]
    pub fn threshold(&self, ingress: PortId) -> u64 {
        let i = &self.ingress[ingress as usize];
        let s = &self.switches[i.switch as usize];
        s.size.saturating_sub(s.headroom_total + s.reserve_total + s.shared_used) >> i.shift
    }

    #[inline]
    pub fn shared_of(&self, ingress: PortId, class: usize) -> u64 {
        self.ingress[ingress as usize].used[class].saturating_sub(self.reserve)
    }

    /// Accounts `size` bytes arriving on `ingress` in `class`, or refuses them.
    pub fn admit(&mut self, ingress: PortId, class: usize, size: u64) -> Verdict {
        let t = self.threshold(ingress);
        let reserve = self.reserve;
        let lossless = self.is_lossless(class);
        let i = &mut self.ingress[ingress as usize];
        let s = &mut self.switches[i.switch as usize];
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
        if lossless {
            if i.hdrm[class] + size <= i.headroom {
                i.hdrm[class] += size;
                s.headroom_used += size;
                s.max_headroom = s.max_headroom.max(s.headroom_used);
                return Verdict::Headroom;
            }
            s.headroom_overflows += 1;
        }
        Verdict::Drop
    }

    /// Returns `size` bytes of `class` from `ingress` as they leave: headroom first, then shared,
    /// then reserve.
    pub fn release(&mut self, ingress: PortId, class: usize, size: u64) {
        let reserve = self.reserve;
        let i = &mut self.ingress[ingress as usize];
        let s = &mut self.switches[i.switch as usize];
        debug_assert!(size <= i.used[class] + i.hdrm[class], "releasing bytes never admitted");
        let from_hdrm = i.hdrm[class].min(size);
        i.hdrm[class] -= from_hdrm;
        s.headroom_used -= from_hdrm;
        let rest = size - from_hdrm;
        let shared_before = i.used[class].saturating_sub(reserve);
        i.used[class] -= rest;
        s.shared_used -= shared_before - i.used[class].saturating_sub(reserve);
    }

    /// A lossless pair that uses headroom, or whose shared use reached the threshold, is paused.
    pub fn should_pause(&self, ingress: PortId, class: usize) -> bool {
        let i = &self.ingress[ingress as usize];
        if i.paused & (1 << class) != 0 {
            return false;
        }
        let shared = self.shared_of(ingress, class);
        i.hdrm[class] > 0 || (shared > 0 && shared >= self.threshold(ingress))
    }

    /// A paused pair resumes once its headroom is empty and its shared use is zero or
    /// `resume_offset` below the threshold.
    pub fn should_resume(&self, ingress: PortId, class: usize) -> bool {
        let i = &self.ingress[ingress as usize];
        if i.paused & (1 << class) == 0 || i.hdrm[class] > 0 {
            return false;
        }
        let shared = self.shared_of(ingress, class);
        shared == 0 || shared + self.resume_offset <= self.threshold(ingress)
    }

    /// Bytes of `class` from `ingress` held by its switch.
    pub fn held(&self, ingress: PortId, class: usize) -> u64 {
        let i = &self.ingress[ingress as usize];
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
        if b.admit(ingress, class, size as u64) == Verdict::Drop {
            p.counters.drops += 1;
            if self.tracer.is_some() {
                self.trace_in_class(now, pkt, port, TraceEvent::Drop, class);
            }
            self.pool.release(pkt, Fate::Dropped);
            return;
        }
        if b.is_lossless(class) && b.should_pause(ingress, class) {
            b.ingress[ingress as usize].paused |= 1 << class;
            self.send_pfc(Network::reverse(ingress), class, true, now, ev);
        }
        self.mark_on_enqueue(port, pkt, class, now);
        self.admit(port, pkt, class, now, ev);
    }

    /// A packet accounted to the shared buffer leaves its switch: free its bytes, and resume its
    /// ingress if PFC paused it and it has drained enough.
    pub(crate) fn release_shared(&mut self, pkt: PacketId, class: usize, size: u32, now: Time, ev: &mut EventQueue) {
        let ingress = self.pool.get(pkt).ingress;
        let b = self.buffers.as_deref_mut().expect("ports with a shared buffer have one");
        b.release(ingress, class, size as u64);
        if b.is_lossless(class) && b.should_resume(ingress, class) {
            b.ingress[ingress as usize].paused &= !(1 << class);
            self.send_pfc(Network::reverse(ingress), class, false, now, ev);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One switch, two ingress ports (0 and 1), class 1 lossless, class 0 lossy.
    fn buffers(size: u64, headroom: u64, shift: u8) -> Buffers {
        let ingress = |_| Ingress { switch: 0, headroom, shift, ..Default::default() };
        Buffers {
            switches: vec![SwitchBuffer {
                size,
                headroom_total: 2 * headroom,
                reserve_total: 4 * 1000,
                ..Default::default()
            }],
            ingress: (0..2).map(ingress).collect(),
            reserve: 1000,
            resume_offset: 500,
            lossless: 0b10,
        }
    }

    #[test]
    fn reserve_then_shared_then_headroom_then_drop() {
        // Shared pool 20000 - 2000 - 4000 = 14000; shift 1: T = (14000 - shared) / 2.
        let mut b = buffers(20_000, 1000, 1);
        assert_eq!(b.admit(0, 1, 1000), Verdict::Reserve);
        assert_eq!(b.threshold(0), 7000);
        // The pair's shared use s may grow to T = (14000 - s) / 2: 1000, ..., 5000 (T 5000), and
        // then 6000 > 4500.
        let verdicts: Vec<Verdict> = (0..6).map(|_| b.admit(0, 1, 1000)).collect();
        assert_eq!(verdicts, [Verdict::Shared; 5].iter().copied().chain([Verdict::Headroom]).collect::<Vec<_>>());
        assert_eq!(b.switches[0].shared_used, 5000);
        assert!(b.should_pause(0, 1));
        assert_eq!(b.admit(0, 1, 1000), Verdict::Drop, "the headroom holds 1000 bytes");
        assert_eq!(b.switches[0].headroom_overflows, 1);
        // A lossy class does not get headroom.
        b.admit(1, 0, 1000);
        let mut v = Verdict::Reserve;
        while v != Verdict::Drop {
            v = b.admit(1, 0, 1000);
            assert_ne!(v, Verdict::Headroom);
        }
        assert_eq!(b.switches[0].headroom_overflows, 1, "lossy drops are not configuration errors");
    }

    #[test]
    fn release_restores_every_counter_and_resumes() {
        let mut b = buffers(20_000, 2000, 1);
        let mut admitted = 0;
        while b.admit(0, 1, 700) != Verdict::Drop {
            admitted += 1;
        }
        b.ingress[0].paused = 0b10;
        assert!(b.switches[0].headroom_used > 0 && b.switches[0].shared_used > 0);
        let mut resumed_at = None;
        for k in 0..admitted {
            b.release(0, 1, 700);
            if resumed_at.is_none() && b.should_resume(0, 1) {
                resumed_at = Some(k);
            }
        }
        assert!(resumed_at.is_some_and(|k| k + 1 < admitted), "resumes before it drains: {resumed_at:?}");
        assert_eq!((b.switches[0].shared_used, b.switches[0].headroom_used, b.held(0, 1)), (0, 0, 0));
    }

    #[test]
    fn within_its_reserve_a_pair_is_never_paused() {
        // No shared pool at all: T = 0.
        let mut b = buffers(6000, 1000, 0);
        assert_eq!(b.threshold(0), 0);
        assert_eq!(b.admit(0, 1, 800), Verdict::Reserve);
        assert!(!b.should_pause(0, 1));
        assert_eq!(b.admit(0, 1, 800), Verdict::Headroom);
        assert!(b.should_pause(0, 1));
    }
}
