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
