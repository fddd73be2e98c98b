//! PFC deadlock detection. A cyclic buffer dependency (Hu et al., "Deadlocks in Datacenter
//! Networks: Why Do They Form, and How to Avoid Them", HotNets'16) can leave a ring of ports
//! paused forever, each waiting for buffer space held by packets that wait on the next.
//!
//! The check runs on a switch-side timer every `pfc_deadlock_check_us` while any class is paused.
//! A (port P, class c) pair is *stuck* when P is paused for c, the switch it feeds still holds it
//! paused with bytes of (P, c) in its buffer, no PFC frame is on the way back to P, and every one
//! of those packets waits in a class-c queue of an egress port that is itself stuck. Such a set
//! can never move again: a pause is lifted only when a packet of its pair leaves (the shared
//! buffer checks resumption on departures), and none can. The greatest such set is computed by
//! discarding pairs that wait on anything outside it until nothing changes; if it is not empty, the
//! run stops and reports a cycle through it.

use crate::engine::events::{Event, EventQueue};
use crate::net::network::Network;
use crate::net::pipeline::mac_frame::is_mac_frame;
use crate::net::port::PortId;
use crate::net::queue::MAX_PRIORITIES;
use crate::time::Time;
use std::collections::{BTreeSet, HashMap};

/// `Event::SwitchTimer` kind of the deadlock check.
pub const DEADLOCK_CHECK: u8 = 0;

/// A deadlock found: when, in which class, and a cycle of ports each waiting on the next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deadlock {
    pub at: Time,
    pub class: u8,
    pub cycle: Vec<PortId>,
    /// Stuck (port, class) pairs in all, the cycle's included.
    pub stuck_pairs: usize,
}

impl Network {
    /// The deadlock check's timer fired. Returns true when the run must stop (a deadlock was found).
    pub(crate) fn on_deadlock_check(&mut self, now: Time, ev: &mut EventQueue) -> bool {
        let found = self.find_deadlock(now);
        let Some(pfc) = self.pfc.as_deref_mut() else { return false };
        pfc.check_pending = false;
        if let Some(d) = found {
            pfc.deadlock = Some(d);
            return true;
        }
        if pfc.active > 0 {
            pfc.check_pending = true;
            ev.schedule(now + pfc.check_interval, Event::SwitchTimer { kind: DEADLOCK_CHECK, id: 0 });
        }
        false
    }

    /// The stuck pairs, if any, as a deadlock with one cycle through them.
    pub fn find_deadlock(&self, now: Time) -> Option<Deadlock> {
        let pairs = self.paused_pairs_holding_bytes()?;
        let index: HashMap<(PortId, u8), usize> = pairs.iter().enumerate().map(|(k, &pc)| (pc, k)).collect();
        let (waits_on, waits_outside) = self.waits(&pairs, &index);
        let mut stuck: Vec<bool> = (0..pairs.len()).map(|u| !waits_outside[u] && !waits_on[u].is_empty()).collect();
        // Discard pairs that wait on a pair no longer stuck, until nothing changes.
        loop {
            let mut changed = false;
            for u in 0..pairs.len() {
                if stuck[u] && waits_on[u].iter().any(|&v| !stuck[v]) {
                    stuck[u] = false;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let start = (0..pairs.len()).find(|&u| stuck[u])?;
        let cycle = cycle_from(start, &waits_on, &stuck).into_iter().map(|w| pairs[w].0).collect();
        Some(Deadlock { at: now, class: pairs[start].1, cycle, stuck_pairs: stuck.iter().filter(|&&s| s).count() })
    }

    /// (port, class) pairs paused at the port, still held paused by the switch it feeds, with bytes
    /// in that switch's buffer and no PFC frame on the way back; `None` if there are none.
    fn paused_pairs_holding_bytes(&self) -> Option<Vec<(PortId, u8)>> {
        let b = self.buffers.as_deref()?;
        let mut pairs = Vec::new();
        for (id, p) in self.ports.iter().enumerate() {
            let i = &b.ports[id];
            let held_paused = p.paused & i.paused;
            if held_paused == 0 || i.into == u32::MAX {
                continue;
            }
            if self.ports[Network::reverse(id as PortId) as usize].pipe_packets().any(is_mac_frame) {
                continue;
            }
            for c in 0..MAX_PRIORITIES {
                if held_paused & (1 << c) != 0 && b.held(id as PortId, c as usize) > 0 {
                    pairs.push((id as PortId, c));
                }
            }
        }
        (!pairs.is_empty()).then_some(pairs)
    }

    /// For each pair, the pairs among `pairs` its queued packets wait on (the egress ports and
    /// classes holding them), and whether any waits on something else.
    fn waits(&self, pairs: &[(PortId, u8)], index: &HashMap<(PortId, u8), usize>) -> (Vec<BTreeSet<usize>>, Vec<bool>) {
        let mut waits_on: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); pairs.len()];
        let mut waits_outside = vec![false; pairs.len()];
        let switches: BTreeSet<u32> = pairs.iter().map(|&(p, _)| self.ports[p as usize].peer).collect();
        for s in switches {
            for &egress in &self.ports_of[s as usize] {
                let e = &self.ports[egress as usize];
                for c in 0..e.priorities() {
                    for pkt in e.class_packets(c as usize) {
                        let Some(&u) = index.get(&(self.pool.get(pkt).ingress, c)) else { continue };
                        match index.get(&(egress, c)) {
                            Some(&v) => {
                                waits_on[u].insert(v);
                            }
                            None => waits_outside[u] = true,
                        }
                    }
                }
            }
        }
        (waits_on, waits_outside)
    }

    /// A port as "owner->peer" (for reports).
    pub fn port_name(&self, port: PortId) -> String {
        let p = &self.ports[port as usize];
        format!("{}->{}", self.node_names[p.owner as usize], self.node_names[p.peer as usize])
    }
}

/// Walks from a stuck pair along what it waits on until a pair repeats; returns that cycle. Every
/// stuck pair waits only on stuck pairs, so the walk never ends before repeating.
fn cycle_from(start: usize, waits_on: &[BTreeSet<usize>], stuck: &[bool]) -> Vec<usize> {
    let mut seen: HashMap<usize, usize> = HashMap::new();
    let mut walk = vec![start];
    let mut u = start;
    loop {
        seen.insert(u, walk.len() - 1);
        u = *waits_on[u].iter().find(|&&v| stuck[v]).expect("a stuck pair waits on a stuck pair");
        if let Some(&k) = seen.get(&u) {
            return walk.split_off(k);
        }
        walk.push(u);
    }
}
