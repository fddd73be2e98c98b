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
use std::collections::VecDeque;

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
        let mut table = vec![(0u32, 0u32); (switches * edges) as usize];
        let mut choices: Vec<PortId> = Vec::new();
        let mut interned: std::collections::HashMap<Vec<PortId>, u32> = Default::default();
        let mut set: Vec<PortId> = Vec::new();
        let mut dist = vec![u32::MAX; nodes as usize];
        for (e_node, &e_idx) in edge_index.iter().enumerate() {
            if e_idx == u32::MAX {
                continue;
            }
            // BFS from the edge switch over switch-to-switch links (links are bidirectional).
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            dist[e_node] = 0;
            let mut q = VecDeque::from([e_node as NodeId]);
            while let Some(n) = q.pop_front() {
                for &p in &ports_of[n as usize] {
                    let m = ports[p as usize].peer;
                    if m >= hosts && dist[m as usize] == u32::MAX {
                        dist[m as usize] = dist[n as usize] + 1;
                        q.push_back(m);
                    }
                }
            }
            for s in hosts..nodes {
                let ds = dist[s as usize];
                if ds == 0 {
                    continue; // the destination's own edge switch uses host_port
                }
                if ds == u32::MAX {
                    return Err(format!("switch {s} cannot reach edge switch {e_node}: the topology is disconnected"));
                }
                set.clear();
                for &p in &ports_of[s as usize] {
                    let m = ports[p as usize].peer;
                    if m >= hosts && dist[m as usize] == ds - 1 {
                        set.push(p);
                    }
                }
                debug_assert!(!set.is_empty());
                let off = *interned.entry(set.clone()).or_insert_with(|| {
                    choices.extend_from_slice(&set);
                    (choices.len() - set.len()) as u32
                });
                table[((s - hosts) * edges + e_idx) as usize] = (off, set.len() as u32);
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
