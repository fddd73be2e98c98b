//! Per-connection state for a transport: a slab of connections reused as flows come and go, found
//! by flow id. Memory tracks the connections alive, not the flows ever started (plus 4 bytes per
//! flow id for the index).

use crate::net::packet::FlowId;
use std::ops::{Index, IndexMut};

const NO_SLOT: u32 = u32::MAX;

pub struct ConnTable<T> {
    conns: Vec<T>,
    free: Vec<u32>,
    /// Slot of each flow id; `NO_SLOT` before it starts and once it is released.
    slot_of: Vec<u32>,
}

impl<T> Default for ConnTable<T> {
    fn default() -> Self {
        ConnTable { conns: Vec::new(), free: Vec::new(), slot_of: Vec::new() }
    }
}

impl<T> ConnTable<T> {
    /// Stores a new connection for flow `id`; returns its slot.
    pub fn insert(&mut self, id: FlowId, conn: T) -> u32 {
        let slot = match self.free.pop() {
            Some(s) => {
                self.conns[s as usize] = conn;
                s
            }
            None => {
                self.conns.push(conn);
                self.conns.len() as u32 - 1
            }
        };
        if self.slot_of.len() <= id as usize {
            self.slot_of.resize(id as usize + 1, NO_SLOT);
        }
        debug_assert_eq!(self.slot_of[id as usize], NO_SLOT, "flow {id} started twice");
        self.slot_of[id as usize] = slot;
        slot
    }

    /// The live connection of flow `id`, if any (stragglers of finished flows find none).
    #[inline]
    pub fn slot(&self, id: FlowId) -> Option<u32> {
        self.slot_of.get(id as usize).copied().filter(|&s| s != NO_SLOT)
    }

    /// Flow `id` is done: it is no longer found by id, but its slot stays reserved until
    /// `recycle` (for protocols whose queues may still refer to it).
    pub fn release(&mut self, id: FlowId) {
        self.slot_of[id as usize] = NO_SLOT;
    }

    /// Makes a released slot available to new connections.
    pub fn recycle(&mut self, slot: u32) {
        self.free.push(slot);
    }

    /// Prefetching (`Protocol::prefetch_flow`): the index entry of flow `id` (`early`), or the
    /// first `lines` cache lines of its connection (the entry should be in cache by then). Hints
    /// only.
    #[inline(always)]
    pub fn prefetch(&self, id: FlowId, early: bool, lines: usize) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let Some(entry) = self.slot_of.get(id as usize) else { return };
            if early {
                // SAFETY: prefetching is a hint; the address is the entry's.
                unsafe { _mm_prefetch(entry as *const u32 as *const i8, _MM_HINT_T0) }
            } else if let Some(c) = self.conns.get(*entry as usize) {
                // Slots are not line-aligned: up to one more line than the size takes.
                let (base, size) = (c as *const T as *const i8, std::mem::size_of::<T>());
                for offset in (0..size.min(lines * 64)).step_by(64).chain([size.saturating_sub(1)]) {
                    // SAFETY: a hint, and every address lies inside the connection.
                    unsafe { _mm_prefetch(base.add(offset), _MM_HINT_T0) }
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (id, early, lines);
    }

    /// `release` and `recycle` at once.
    pub fn remove(&mut self, id: FlowId, slot: u32) {
        self.release(id);
        self.recycle(slot);
    }
}

impl<T> Index<u32> for ConnTable<T> {
    type Output = T;
    #[inline]
    fn index(&self, slot: u32) -> &T {
        &self.conns[slot as usize]
    }
}

impl<T> IndexMut<u32> for ConnTable<T> {
    #[inline]
    fn index_mut(&mut self, slot: u32) -> &mut T {
        &mut self.conns[slot as usize]
    }
}
