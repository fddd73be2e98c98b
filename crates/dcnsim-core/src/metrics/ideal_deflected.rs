//! The ideal FCT of a flow that switches may deflect (Dart's IOFD, `net/pipeline/deflection.rs`).
//!
//! Deflection sends a message's packets out of a port routing did not choose, so they may cross
//! the fabric on a route that is not an equal-cost (shortest-hop) path. Where every
//! switch-to-switch link has one profile (rate, delay, pacing) such a route only adds hops to a
//! shortest one, and adding a store-and-forward hop never speeds a flow up: the equal-cost ideal
//! stands. Where links differ (`topology.link_overrides`), a longer route over fast links can beat
//! every equal-cost path over a slow one (a 3-switch ring whose direct link is degraded: the way
//! round the other two switches is faster), and deflection may legally take it. The ideal then
//! has to be what no deflected flow can beat, so it becomes the per-packet multipath relaxation
//! over the whole fabric: the sender's NIC and the receiver's downlink carry every packet one at
//! a time, and each packet crosses the fabric in the least time any switch-to-switch walk between
//! the two edge switches allows for its size (Dijkstra over serialization plus delay). Whatever
//! path deflection picks and however it splits a flow, no packet crosses faster, so no flow can
//! finish sooner. Only flows the transport marks deflectable, in runs with IOFD on, are affected.

use crate::net::paths::Hop;
use crate::net::port::{NodeId, PortRole};
use crate::net::Network;
use crate::time::Time;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

pub struct DeflectedPaths<'n> {
    net: &'n Network,
    /// Fastest walk per (source edge, destination edge, wire bytes).
    walks: HashMap<(NodeId, NodeId, u32), Vec<Hop>>,
}

impl<'n> DeflectedPaths<'n> {
    /// `None` when deflection cannot beat the equal-cost paths: IOFD off, or a uniform fabric.
    pub fn new(net: &'n Network) -> Option<DeflectedPaths<'n>> {
        net.deflection.as_ref()?;
        let profile = |p: &crate::net::port::Port| (p.rate.bps(), p.delay, p.pace.map(|r| r.bps()));
        let mut fabric = net.ports.iter().filter(|p| p.role == PortRole::Fabric).map(profile);
        let first = fabric.next()?;
        fabric.any(|x| x != first).then(|| DeflectedPaths { net, walks: HashMap::new() })
    }

    /// Extra middle profiles for a flow from `src` to `dst` whose packets are `wires` bytes: for each
    /// size, the walk between the edge switches that crosses fastest (empty when they share one).
    pub fn middles(&mut self, src: u32, dst: u32, wires: &[u32]) -> Vec<Vec<Hop>> {
        let (a, b) = (self.net.routes.edge_of_host[src as usize], self.net.routes.edge_of_host[dst as usize]);
        if a == b {
            return Vec::new();
        }
        let net = self.net;
        wires
            .iter()
            .map(|&w| self.walks.entry((a, b, w)).or_insert_with(|| fastest_walk(net, a, b, w)).clone())
            .collect()
    }
}

/// The switch-to-switch walk from `a` to `b` that a packet of `wire` bytes crosses in the least
/// serialization plus delay (Dijkstra; costs are positive, so the walk is a simple path).
fn fastest_walk(net: &Network, a: NodeId, b: NodeId, wire: u32) -> Vec<Hop> {
    let mut best: HashMap<NodeId, (Time, Option<u32>)> = HashMap::from([(a, (0, None))]);
    let mut heap = BinaryHeap::from([Reverse((0 as Time, a))]);
    while let Some(Reverse((t, n))) = heap.pop() {
        if n == b {
            break;
        }
        if best[&n].0 < t {
            continue;
        }
        for &p in &net.ports_of[n as usize] {
            let port = &net.ports[p as usize];
            if port.role != PortRole::Fabric {
                continue;
            }
            let at = t + port.rate.tx_time(wire) + port.delay;
            if best.get(&port.peer).is_none_or(|&(old, _)| at < old) {
                best.insert(port.peer, (at, Some(p)));
                heap.push(Reverse((at, port.peer)));
            }
        }
    }
    let mut hops = Vec::new();
    let mut n = b;
    while let Some(p) = best.get(&n).expect("edge switches are connected").1 {
        let port = &net.ports[p as usize];
        hops.push(Hop { rate: port.rate, delay: port.delay, pace: port.pace });
        n = port.owner;
    }
    hops.reverse();
    hops
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::pipeline::deflection::{Deflection, DeflectionConfig};
    use crate::net::queue::QueueConfig;
    use crate::net::QueueConfigs;
    use crate::time::Rate;
    use crate::topology::{builders, Graph};

    /// A 3-switch ring, one host a switch (hosts 0-2, ring switches 3-5), 10 Gb/s hosts, 40 Gb/s
    /// ring links of 0.1 us; IOFD on when `iofd`.
    fn ring(degrade: Option<(u32, u32)>, iofd: bool) -> Network {
        let mut g: Graph = builders::ring(3, 1, Rate::from_gbps(10.0), Rate::from_gbps(40.0), 200_000, 100_000);
        if let Some((a, b)) = degrade {
            let l = g.links.iter_mut().find(|l| (l.a, l.b) == (a, b) || (l.a, l.b) == (b, a)).unwrap();
            (l.rate_ab, l.rate_ba) = (Rate::from_gbps(2.5), Rate::from_gbps(2.5));
        }
        let q = QueueConfig::infinite();
        let qs = QueueConfigs { nic: q.clone(), to_host: q.clone(), fabric: q };
        let mut net = Network::build(&g, &qs, 0, None, 1).unwrap();
        if iofd {
            let cfg = DeflectionConfig { threshold_bytes: 3000, entries: 8, ceiling_bytes: None };
            net.deflection = Some(Box::new(Deflection::new(cfg, 3, 1)));
        }
        net
    }

    #[test]
    fn only_a_mixed_fabric_with_iofd_needs_deflected_routes() {
        assert!(DeflectedPaths::new(&ring(None, true)).is_none(), "uniform: a longer route is never faster");
        assert!(DeflectedPaths::new(&ring(Some((4, 5)), false)).is_none(), "no deflection");
        assert!(DeflectedPaths::new(&ring(Some((4, 5)), true)).is_some());
    }

    #[test]
    fn the_fastest_walk_goes_round_a_degraded_link() {
        let net = ring(Some((4, 5)), true);
        let mut d = DeflectedPaths::new(&net).unwrap();
        let gbps = |m: &[Hop]| m.iter().map(|h| h.rate.gbps()).collect::<Vec<_>>();
        // Host 2 to host 1: round ring0 (two 40 Gb/s hops) beats the direct 2.5 Gb/s link.
        let round = d.middles(2, 1, &[1064, 9000]);
        assert_eq!(round.iter().map(|m| gbps(m)).collect::<Vec<_>>(), vec![vec![40.0, 40.0]; 2]);
        assert_eq!(round[0].iter().map(|h| h.delay).sum::<Time>(), 200_000);
        // Host 0 to host 1: the direct link is the fastest; same edge switch: no middle.
        assert_eq!(gbps(&d.middles(0, 1, &[1064])[0]), vec![40.0]);
        assert!(d.middles(1, 1, &[1064]).is_empty());
    }
}
