//! Routes, computed once: for every switch and every edge switch (the switch a destination host
//! hangs off), the set of ports on shortest paths towards it. Tables are indexed by edge switch,
//! not by host, so they stay small (switches x edge switches) even for large fabrics.
//!
//! Which member of an equal-cost set a packet takes is the packet's `lb` mode:
//! per-flow ECMP (hash of the flow key with a per-switch seed), per-packet spraying, or a route the
//! sender chose, encoded as mixed-radix digits in `path` and consumed one per choice point.

use crate::engine::rng::{mix64, stable_hash, Rng};
use crate::net::packet::{LoadBalancing, Packet};
use crate::net::port::{NodeId, Port, PortId};
use crate::topology::Tier;
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
    /// For switch s (local index s - hosts) and edge e: the index in `sets` of its candidate set.
    /// Two bytes an entry where the sets allow (switches x edge switches entries: 0.4 MB rather than
    /// 1.6 MB at 3,456 hosts), since this lookup is on every hop and its misses grow with the fabric.
    table: SetIds,
    /// Each distinct candidate set: (offset, count) into `choices`.
    sets: Vec<(u32, u32)>,
    /// Distinct candidate sets, each stored once: a switch has the same uplinks towards every
    /// remote edge, so sharing keeps this small enough to stay in cache on the per-hop lookup.
    choices: Vec<PortId>,
    /// Per-switch ECMP seed.
    seeds: Vec<u64>,
    /// Per-node seed of symmetric ECMP: one per switch tier (empty until `set_tiers`).
    tier_seeds: Vec<u64>,
}

impl Routes {
    /// Builds the tables by one breadth-first search per edge switch over the switch graph.
    ///
    /// The searches run 64 edge switches at a time, one bit each in a word per switch, over a
    /// compact adjacency (the ports themselves are large and would make every step a cache miss).
    /// A switch's candidate sets are rebuilt only where they change from one edge to the next, and
    /// interned by a hash of their members. Cost: edge switches / 64 x switch links x diameter, plus
    /// the switches x edge switches table.
    pub fn build(
        hosts: u32,
        nodes: u32,
        ports: &[Port],
        ports_of: &[Vec<PortId>],
        seed: u64,
    ) -> Result<Routes, String> {
        let (edge_of_host, host_port, nic_port) = attach_hosts(hosts, ports, ports_of)?;
        let mut edge_index = vec![u32::MAX; nodes as usize];
        let mut edge_nodes = Vec::new();
        for &sw in &edge_of_host {
            if edge_index[sw as usize] == u32::MAX {
                edge_index[sw as usize] = edge_nodes.len() as u32;
                edge_nodes.push(sw - hosts);
            }
        }
        let adj = SwitchAdjacency::new(hosts, nodes - hosts, ports, ports_of);
        let (table, choices) = Tables::build(&adj, &edge_nodes).map_err(|(sw, e)| {
            format!("switch {} cannot reach edge switch {}: the topology is disconnected", sw + hosts, e + hosts)
        })?;
        let mut rng = Rng::for_component(seed, "ecmp");
        let seeds = (0..nodes).map(|_| rng.next_u64()).collect();
        let edges = edge_nodes.len() as u32;
        let (table, sets) = SetIds::index(&table);
        Ok(Routes {
            hosts,
            edge_of_host,
            host_port,
            nic_port,
            edge_index,
            edges,
            table,
            sets,
            choices,
            seeds,
            tier_seeds: Vec::new(),
        })
    }

    /// The equal-cost egress ports at switch `node` towards host `dst`. Always inlined: it is the
    /// per-hop lookup of the event loop (through `next_port`), and with callers in `metrics` the
    /// compiler had stopped inlining it (the call cost 0.35% of the NDP bench's instructions).
    #[inline(always)]
    pub fn candidates(&self, node: NodeId, dst: u32) -> &[PortId] {
        let edge = self.edge_of_host[dst as usize];
        if edge == node {
            return std::slice::from_ref(&self.host_port[dst as usize]);
        }
        let e = self.edge_index[edge as usize];
        let (off, n) = self.sets[self.table.get(((node - self.hosts) * self.edges + e) as usize)];
        &self.choices[off as usize..(off + n) as usize]
    }

    /// The egress port for `pkt` at `node`; updates the packet's source-route digits. Always
    /// inlined: it is on every packet's path at every switch.
    #[inline(always)]
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
            LoadBalancing::Symmetric => mix64(pkt.path as u64 ^ self.tier_seeds[node as usize]) % n,
        };
        c[i as usize]
    }

    /// Hints the CPU to fetch the table entry `candidates(node, dst)` will read at switch `node`
    /// (no effect on results): on large fabrics the table does not stay in cache.
    #[inline(always)]
    pub fn prefetch_entry(&self, node: NodeId, dst: u32) {
        let Some(&edge) = self.edge_of_host.get(dst as usize) else { return };
        if node < self.hosts || edge == node {
            return;
        }
        let e = self.edge_index[edge as usize];
        self.table.prefetch(((node - self.hosts) * self.edges + e) as usize);
    }

    /// The egress port `next_port` will pick for `pkt` at switch `node`, read-only, where that is
    /// known before the hop (not for spraying, which draws from the switch's random stream): lets
    /// the event loop fetch the egress port an event ahead. Only a hint.
    #[inline(always)]
    pub fn predict_port(&self, node: NodeId, pkt: &Packet) -> Option<PortId> {
        if node < self.hosts || pkt.dst >= self.hosts {
            return None;
        }
        let c = self.candidates(node, pkt.dst);
        let n = c.len() as u64;
        let i = match pkt.lb {
            _ if n == 1 => 0,
            LoadBalancing::Ecmp => mix64(pkt.path as u64 ^ self.seeds[node as usize]) % n,
            LoadBalancing::Spray => return None,
            LoadBalancing::Source => pkt.path as u64 % n,
            LoadBalancing::Symmetric => mix64(pkt.path as u64 ^ self.tier_seeds[node as usize]) % n,
        };
        Some(c[i as usize])
    }

    /// Seeds symmetric ECMP: switches of one tier hash alike. With next hops in link order, the
    /// i-th uplink of a ToR meets the i-th aggregation switch of every pod, whose j-th uplink meets
    /// the same core, so a flow's key picks mirrored links from either end (fat tree, leaf-spine).
    pub fn set_tiers(&mut self, tiers: &[Tier], seed: u64) {
        let base = mix64(seed ^ stable_hash("symmetric-ecmp"));
        self.tier_seeds = vec![0; self.hosts as usize];
        self.tier_seeds.extend(tiers.iter().map(|&t| mix64(base ^ (t as u64 + 1))));
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

/// Edge switches searched at once, one bit each.
const BLOCK: usize = 64;

/// Breadth-first search from up to 64 edge switches at once: `levels[d][s]` has bit j set when
/// switch `s` is `d` switch-to-switch hops from `edges[j]`.
fn bfs_levels(adj: &SwitchAdjacency, edges: &[u32]) -> Vec<Vec<u64>> {
    let n = adj.start.len() - 1;
    let mut front = vec![0u64; n];
    for (j, &e) in edges.iter().enumerate() {
        front[e as usize] |= 1 << j;
    }
    let mut reached = front.clone();
    let mut levels = Vec::new();
    loop {
        let mut next = vec![0u64; n];
        for (s, &f) in front.iter().enumerate().filter(|(_, &f)| f != 0) {
            for &(_, m) in adj.of(s as u32) {
                next[m as usize] |= f;
            }
        }
        let mut any = false;
        for (x, r) in next.iter_mut().zip(reached.iter_mut()) {
            *x &= !*r;
            *r |= *x;
            any |= *x != 0;
        }
        levels.push(std::mem::replace(&mut front, next));
        if !any {
            return levels;
        }
    }
}

/// Each host's edge switch, the switch's port back to it, and the host's NIC port.
fn attach_hosts(hosts: u32, ports: &[Port], ports_of: &[Vec<PortId>]) -> Result<HostPorts, String> {
    let (mut edge_of_host, mut host_port, mut nic_port) = (Vec::new(), Vec::new(), Vec::new());
    for h in 0..hosts {
        let ps = &ports_of[h as usize];
        if ps.len() != 1 {
            return Err(format!("host {h} has {} links; every host needs exactly one", ps.len()));
        }
        let nic = ps[0];
        let sw = ports[nic as usize].peer;
        if sw < hosts {
            return Err(format!("host {h} is linked directly to host {sw}; hosts attach to switches"));
        }
        let back = ports_of[sw as usize].iter().find(|&&p| ports[p as usize].peer == h);
        host_port.push(*back.ok_or_else(|| format!("switch {sw} has no port back to host {h}"))?);
        edge_of_host.push(sw);
        nic_port.push(nic);
    }
    Ok((edge_of_host, host_port, nic_port))
}

type HostPorts = (Vec<NodeId>, Vec<PortId>, Vec<PortId>);

/// (offset, count) into the candidate sets, per switch and edge switch.
type Table = Vec<(u32, u32)>;

/// Per (switch, edge switch): the index of its candidate set, as narrow as the number of sets allows.
enum SetIds {
    Narrow(Vec<u16>),
    Wide(Vec<u32>),
}

impl SetIds {
    /// Numbers the distinct (offset, count) entries of `table` in order of first appearance.
    fn index(table: &Table) -> (SetIds, Vec<(u32, u32)>) {
        let mut id_of: HashMap<(u32, u32), u32> = HashMap::new();
        let mut sets = Vec::new();
        let ids: Vec<u32> = table
            .iter()
            .map(|&entry| {
                *id_of.entry(entry).or_insert_with(|| {
                    sets.push(entry);
                    (sets.len() - 1) as u32
                })
            })
            .collect();
        let table = if sets.len() <= 1 << 16 {
            SetIds::Narrow(ids.iter().map(|&i| i as u16).collect())
        } else {
            SetIds::Wide(ids)
        };
        (table, sets)
    }

    #[inline(always)]
    fn get(&self, i: usize) -> usize {
        match self {
            SetIds::Narrow(v) => v[i] as usize,
            SetIds::Wide(v) => v[i] as usize,
        }
    }

    /// Hints the CPU to fetch entry `i` (no effect on results).
    #[inline(always)]
    fn prefetch(&self, i: usize) {
        #[cfg(target_arch = "x86_64")]
        {
            let at = match self {
                SetIds::Narrow(v) => v.get(i).map(|e| e as *const u16 as *const i8),
                SetIds::Wide(v) => v.get(i).map(|e| e as *const u32 as *const i8),
            };
            if let Some(at) = at {
                // SAFETY: prefetching is a hint; the address is the entry's.
                unsafe { std::arch::x86_64::_mm_prefetch(at, std::arch::x86_64::_MM_HINT_T0) }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = i;
    }
}

/// Builds the (switch, edge switch) table and the interned candidate sets it points into.
struct Tables {
    table: Table,
    choices: Vec<PortId>,
    interner: SetInterner,
    /// The entry each switch wrote last: most switches have one set towards edge after edge.
    last: Vec<(u32, u32)>,
    set: Vec<PortId>,
    masks: Vec<u64>,
}

impl Tables {
    /// The table, indexed switch * edges + edge, and the candidate sets; on a disconnected fabric,
    /// the (switch, edge switch) pair, as indices among switches, that has no path.
    fn build(adj: &SwitchAdjacency, edge_nodes: &[u32]) -> Result<(Table, Vec<PortId>), (u32, u32)> {
        let (switches, edges) = (adj.start.len() - 1, edge_nodes.len());
        let mut t = Tables {
            table: vec![(0, 0); switches * edges],
            choices: Vec::new(),
            interner: SetInterner::default(),
            last: vec![(0, 0); switches],
            set: Vec::new(),
            masks: Vec::new(),
        };
        let mut block = vec![(0u32, 0u32); switches * BLOCK];
        for first in (0..edges).step_by(BLOCK) {
            let width = BLOCK.min(edges - first);
            let levels = bfs_levels(adj, &edge_nodes[first..first + width]);
            let all = if width == 64 { u64::MAX } else { (1 << width) - 1 };
            for sw in 0..switches {
                let reached = levels.iter().fold(0, |r, l| r | l[sw]);
                if reached != all {
                    return Err((sw as u32, edge_nodes[first + (!reached & all).trailing_zeros() as usize]));
                }
                t.fill(adj, &levels, sw, &mut block[sw * BLOCK..sw * BLOCK + width]);
            }
            for sw in 0..switches {
                let row = sw * edges + first;
                t.table[row..row + width].copy_from_slice(&block[sw * BLOCK..sw * BLOCK + width]);
            }
        }
        Ok((t.table, t.choices))
    }

    /// Switch `sw`'s entries towards the edge switches of one block (`levels` from `bfs_levels`).
    fn fill(&mut self, adj: &SwitchAdjacency, levels: &[Vec<u64>], sw: usize, out: &mut [(u32, u32)]) {
        // Bit j of masks[i]: the i-th link of the switch is on a shortest path to edge j.
        let links = adj.of(sw as u32);
        self.masks.clear();
        self.masks.extend(
            links
                .iter()
                .map(|&(_, m)| (1..levels.len()).fold(0, |acc, d| acc | (levels[d][sw] & levels[d - 1][m as usize]))),
        );
        // Bit j set: the set towards edge j differs from the one towards edge j - 1.
        let changed = self.masks.iter().fold(1, |acc, &k| acc | (k ^ (k << 1)));
        for (j, entry) in out.iter_mut().enumerate() {
            if changed & (1 << j) != 0 {
                self.set.clear();
                let on = links.iter().zip(&self.masks).filter(|(_, &k)| k & (1 << j) != 0);
                self.set.extend(on.map(|(&(p, _), _)| p));
                let (off, len) = self.last[sw];
                self.last[sw] = if self.set.is_empty() {
                    debug_assert!(levels[0][sw] & (1 << j) != 0, "only an edge switch has no way to itself");
                    (0, 0) // the destination's own edge switch uses host_port
                } else if self.choices.get(off as usize..(off + len) as usize) == Some(&self.set[..]) {
                    (off, len)
                } else {
                    (self.interner.intern(&self.set, &mut self.choices), self.set.len() as u32)
                };
            }
            *entry = self.last[sw];
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::net::queue::QueueConfig;
    use crate::net::{Network, QueueConfigs};
    use crate::time::Rate;
    use crate::topology::builders;

    /// Every table entry against a plain breadth-first search from each edge switch, on fabrics
    /// with more edge switches than one 64-wide block, and a partial last block.
    #[test]
    fn tables_match_a_plain_search() {
        let r = Rate::from_gbps(10.0);
        for g in [
            builders::fat_tree(12, 1, r, r, 1, 1),
            builders::leaf_spine(130, 1, 3, r, r, 1, 1),
            builders::dumbbell(3, r, 1, r, 1),
        ] {
            let q = QueueConfig::infinite();
            let net = Network::build(&g, &QueueConfigs { nic: q.clone(), to_host: q.clone(), fabric: q }, 0, None, 1)
                .unwrap();
            let nodes = net.ports_of.len() as u32;
            let is_switch = |n: u32| n >= net.hosts;
            for dst in 0..net.hosts {
                let e = net.routes.edge_of_host[dst as usize];
                let mut dist = vec![u32::MAX; nodes as usize];
                dist[e as usize] = 0;
                let mut queue = std::collections::VecDeque::from([e]);
                while let Some(n) = queue.pop_front() {
                    for &p in &net.ports_of[n as usize] {
                        let m = net.ports[p as usize].peer;
                        if is_switch(m) && dist[m as usize] == u32::MAX {
                            dist[m as usize] = dist[n as usize] + 1;
                            queue.push_back(m);
                        }
                    }
                }
                for s in (net.hosts..nodes).filter(|&s| s != e) {
                    let want: Vec<u32> = net.ports_of[s as usize]
                        .iter()
                        .copied()
                        .filter(|&p| {
                            let m = net.ports[p as usize].peer;
                            is_switch(m) && dist[m as usize] + 1 == dist[s as usize]
                        })
                        .collect();
                    assert_eq!(net.routes.candidates(s, dst), &want[..], "switch {s} towards host {dst}");
                }
            }
        }
    }
}
