//! Routes, computed once: for every switch and every edge switch (the switch a destination host
//! hangs off), the set of ports on shortest paths towards it. Tables are indexed by edge switch,
//! not by host, so they stay small (switches x edge switches) even for large fabrics.
//!
//! Which member of an equal-cost set a packet takes is the packet's `lb` mode:
//! per-flow ECMP (hash of the flow key with a per-switch seed), per-packet spraying, or a route the
//! sender chose, encoded as mixed-radix digits in `path` and consumed one per choice point.

use crate::engine::rng::{mix64, Rng};
use crate::net::packet::{LoadBalancing, Packet};
use crate::net::port::{NodeId, Port, PortId};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

pub struct Routes {
    hosts: u32,
    /// Edge switch of each host, and the port on it that faces the host.
    pub edge_of_host: Vec<NodeId>,
    pub host_port: Vec<PortId>,
    /// Host NIC port of each host.
    pub nic_port: Vec<PortId>,
    /// Index of each edge switch among edge switches (u32::MAX for other nodes).
    edge_index: Vec<u32>,
    edges: u32,
    /// For switch s (local index s - hosts) and edge e: (offset, count) into `choices`.
    table: Vec<(u32, u32)>,
    /// Distinct candidate sets, each stored once: a switch has the same uplinks towards every
    /// remote edge, so sharing keeps this small enough to stay in cache on the per-hop lookup.
    choices: Vec<PortId>,
    /// Per-switch ECMP seed.
    seeds: Vec<u64>,
}

impl Routes {
    /// Builds the tables by one breadth-first search per edge switch over the switch graph.
    ///
    /// Cost: edge switches x switch-to-switch links, on a compact adjacency (the ports themselves
    /// are large and would make every step a cache miss); candidate sets are interned by a hash of
    /// their members. A k=64 fat tree (65,536 hosts) builds in about a second.
    pub fn build(
        hosts: u32,
        nodes: u32,
        ports: &[Port],
        ports_of: &[Vec<PortId>],
        seed: u64,
    ) -> Result<Routes, String> {
        let mut edge_of_host = vec![u32::MAX; hosts as usize];
        let mut host_port = vec![u32::MAX; hosts as usize];
        let mut nic_port = vec![u32::MAX; hosts as usize];
        for h in 0..hosts {
            let ps = &ports_of[h as usize];
            if ps.len() != 1 {
                return Err(format!("host {h} has {} links; every host needs exactly one", ps.len()));
            }
            let nic = ps[0];
            nic_port[h as usize] = nic;
            let sw = ports[nic as usize].peer;
            if sw < hosts {
                return Err(format!("host {h} is linked directly to host {sw}; hosts attach to switches"));
            }
            edge_of_host[h as usize] = sw;
            host_port[h as usize] = *ports_of[sw as usize]
                .iter()
                .find(|&&p| ports[p as usize].peer == h)
                .ok_or_else(|| format!("switch {sw} has no port back to host {h}"))?;
        }
        let mut edge_index = vec![u32::MAX; nodes as usize];
        let mut edges = 0u32;
        for &sw in &edge_of_host {
            if edge_index[sw as usize] == u32::MAX {
                edge_index[sw as usize] = edges;
                edges += 1;
            }
        }
        let switches = nodes - hosts;
        let adj = SwitchAdjacency::new(hosts, switches, ports, ports_of);
        let mut table = vec![(0u32, 0u32); switches as usize * edges as usize];
        let mut choices: Vec<PortId> = Vec::new();
        let mut interner = SetInterner::default();
        let mut set: Vec<PortId> = Vec::new();
        let mut dist = vec![u32::MAX; switches as usize];
        let mut queue: Vec<u32> = Vec::with_capacity(switches as usize);
        let mut last = vec![(0u32, 0u32); switches as usize];
        for (e_node, &e_idx) in edge_index.iter().enumerate() {
            if e_idx == u32::MAX {
                continue;
            }
            // BFS from the edge switch over switch-to-switch links (links are bidirectional).
            dist.fill(u32::MAX);
            let e_local = e_node as u32 - hosts;
            dist[e_local as usize] = 0;
            queue.clear();
            queue.push(e_local);
            let mut head = 0;
            while head < queue.len() {
                let n = queue[head];
                head += 1;
                let next = dist[n as usize] + 1;
                for &(_, m) in adj.of(n) {
                    if dist[m as usize] == u32::MAX {
                        dist[m as usize] = next;
                        queue.push(m);
                    }
                }
            }
            for s in 0..switches {
                let ds = dist[s as usize];
                if ds == 0 {
                    continue; // the destination's own edge switch uses host_port
                }
                if ds == u32::MAX {
                    return Err(format!(
                        "switch {} cannot reach edge switch {e_node}: the topology is disconnected",
                        s + hosts
                    ));
                }
                set.clear();
                set.extend(adj.of(s).iter().filter(|&&(_, m)| dist[m as usize] == ds - 1).map(|&(p, _)| p));
                debug_assert!(!set.is_empty());
                // A switch mostly has the same set towards edge after edge (its uplinks): try that first.
                let (last_off, last_len) = last[s as usize];
                let off = if choices[last_off as usize..(last_off + last_len) as usize] == set[..] {
                    last_off
                } else {
                    interner.intern(&set, &mut choices)
                };
                last[s as usize] = (off, set.len() as u32);
                table[(s as usize) * edges as usize + e_idx as usize] = (off, set.len() as u32);
            }
        }
        let mut rng = Rng::for_component(seed, "ecmp");
        let seeds = (0..nodes).map(|_| rng.next_u64()).collect();
        Ok(Routes { hosts, edge_of_host, host_port, nic_port, edge_index, edges, table, choices, seeds })
    }

    /// The equal-cost egress ports at switch `node` towards host `dst`.
    #[inline]
    pub fn candidates(&self, node: NodeId, dst: u32) -> &[PortId] {
        let edge = self.edge_of_host[dst as usize];
        if edge == node {
            return std::slice::from_ref(&self.host_port[dst as usize]);
        }
        let e = self.edge_index[edge as usize];
        let (off, n) = self.table[((node - self.hosts) * self.edges + e) as usize];
        &self.choices[off as usize..(off + n) as usize]
    }

    /// The egress port for `pkt` at `node`; updates the packet's source-route digits.
    #[inline]
    pub fn next_port(&self, node: NodeId, pkt: &mut Packet, rng: &mut Rng) -> PortId {
        if node < self.hosts {
            return self.nic_port[node as usize];
        }
        let c = self.candidates(node, pkt.dst);
        if c.len() == 1 {
            return c[0];
        }
        let n = c.len() as u64;
        let i = match pkt.lb {
            LoadBalancing::Ecmp => mix64(pkt.path as u64 ^ self.seeds[node as usize]) % n,
            LoadBalancing::Spray => rng.below(n),
            LoadBalancing::Source => {
                let d = pkt.path as u64 % n;
                pkt.path = (pkt.path as u64 / n) as u32;
                d
            }
        };
        c[i as usize]
    }

    /// Walks from `src` to `dst`, taking candidate `pick(k, n)` at the k-th choice point among n.
    /// Returns the egress ports in order, from the source NIC to the destination's downlink.
    pub fn walk(&self, ports: &[Port], src: u32, dst: u32, mut pick: impl FnMut(usize, usize) -> usize) -> Vec<PortId> {
        let mut path = vec![self.nic_port[src as usize]];
        let mut node = ports[path[0] as usize].peer;
        let mut k = 0;
        while node != dst {
            let c = self.candidates(node, dst);
            let i = if c.len() > 1 {
                k += 1;
                pick(k - 1, c.len())
            } else {
                0
            };
            let p = c[i];
            path.push(p);
            node = ports[p as usize].peer;
            assert!(path.len() < 64, "routing loop from {src} to {dst}");
        }
        path
    }

    /// Number of distinct source routes from `src` to `dst` (product of the fan-outs on the way).
    /// Exact for the symmetric fabrics we build, where every path meets the same fan-outs.
    pub fn path_count(&self, ports: &[Port], src: u32, dst: u32) -> u64 {
        let mut count = 1u64;
        self.walk(ports, src, dst, |_, n| {
            count *= n as u64;
            0
        });
        count
    }
}

/// Switch-to-switch links only, as (egress port, peer switch index) lists in one array: the BFS
/// and the candidate scan read nothing else.
struct SwitchAdjacency {
    start: Vec<u32>,
    links: Vec<(PortId, u32)>,
}

impl SwitchAdjacency {
    fn new(hosts: u32, switches: u32, ports: &[Port], ports_of: &[Vec<PortId>]) -> SwitchAdjacency {
        let mut start = Vec::with_capacity(switches as usize + 1);
        let mut links = Vec::new();
        for s in 0..switches {
            start.push(links.len() as u32);
            for &p in &ports_of[(s + hosts) as usize] {
                let m = ports[p as usize].peer;
                if m >= hosts {
                    links.push((p, m - hosts));
                }
            }
        }
        start.push(links.len() as u32);
        SwitchAdjacency { start, links }
    }

    #[inline]
    fn of(&self, s: u32) -> &[(PortId, u32)] {
        &self.links[self.start[s as usize] as usize..self.start[s as usize + 1] as usize]
    }
}

/// Stores each distinct candidate set once in `choices`, found again by a hash of its members.
#[derive(Default)]
struct SetInterner {
    /// Hash of a set's members -> its offset in `choices` (hash collisions probe the next key).
    offsets: HashMap<u64, u32, BuildHasherDefault<PremixedHasher>>,
}

impl SetInterner {
    fn intern(&mut self, set: &[PortId], choices: &mut Vec<PortId>) -> u32 {
        let mut key =
            mix64(set.iter().fold(set.len() as u64, |h, &p| (h ^ p as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)));
        loop {
            match self.offsets.get(&key) {
                Some(&off) if choices.get(off as usize..off as usize + set.len()) == Some(set) => return off,
                Some(_) => key = mix64(key.wrapping_add(1)),
                None => {
                    let off = choices.len() as u32;
                    choices.extend_from_slice(set);
                    self.offsets.insert(key, off);
                    return off;
                }
            }
        }
    }
}

/// The interner's keys are already well mixed: hash them as they are.
#[derive(Default)]
struct PremixedHasher(u64);

impl Hasher for PremixedHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("only u64 keys")
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = x;
    }
}
