//! The ways across the fabric a flow could take, as the ideal FCT needs them: the sender's NIC, one
//! of the equal-cost crossings between the two edge switches, and the receiver's downlink.
//!
//! Only a crossing's hop profile (rate, delay, pacing of each hop in order) matters to the ideal,
//! so crossings are kept as distinct profiles, and a profile that is nowhere faster than another
//! (every hop no faster, position by position) is dropped: the ideal is monotone in every hop's
//! serialization and delay, so it can never be the fastest.
//!
//! Our builders make uniform fabrics: every port of one kind (its role and the tiers it joins) has
//! the same rate and delay, and every shortest path between two edge switches crosses the same
//! tiers, so all crossings have one profile and the first is enough. Link overrides break that;
//! then the profiles are gathered by a memoized walk over the routing tables towards the
//! destination's edge switch.

use crate::net::paths::Hop;
use crate::net::port::{NodeId, PortId};
use crate::net::Network;
use std::collections::HashMap;
use std::rc::Rc;

/// What a flow from one host to another crosses.
pub struct Crossing<'c> {
    /// The sender's NIC.
    pub first: Hop,
    /// Hop profiles between the edge switches, none slower than another everywhere (one empty
    /// profile when both hosts share an edge switch).
    pub middles: &'c [Vec<Hop>],
    /// The receiver's downlink.
    pub last: Hop,
}

/// A hop's profile, comparable and hashable.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct HopKey {
    bps: u64,
    delay: u64,
    pace_bps: u64,
}

fn hop_of(net: &Network, p: PortId) -> Hop {
    let port = &net.ports[p as usize];
    Hop { rate: port.rate, delay: port.delay, pace: port.pace }
}

impl HopKey {
    fn of(h: Hop) -> HopKey {
        HopKey { bps: h.rate.bps(), delay: h.delay, pace_bps: h.pace.map_or(u64::MAX, |r| r.bps()) }
    }

    /// No slower than `o` in serialization, pacing gap and delay.
    fn no_slower(self, o: HopKey) -> bool {
        self.bps >= o.bps && self.pace_bps >= o.pace_bps && self.delay <= o.delay
    }
}

pub struct IdealPaths<'n> {
    net: &'n Network,
    uniform: bool,
    /// Middle profiles per (source edge, destination edge).
    pairs: HashMap<(NodeId, NodeId), Vec<Vec<Hop>>>,
    /// Profiles (as hop-key lists) from a switch to a destination edge switch, by (switch, edge).
    towards: HashMap<(NodeId, NodeId), Rc<Profiles>>,
    /// The hop behind each key.
    hops: HashMap<HopKey, Hop>,
}

type Profiles = Vec<Vec<HopKey>>;

impl<'n> IdealPaths<'n> {
    pub fn new(net: &'n Network) -> IdealPaths<'n> {
        IdealPaths {
            net,
            uniform: is_uniform(net),
            pairs: HashMap::new(),
            towards: HashMap::new(),
            hops: HashMap::new(),
        }
    }

    /// What a flow from `src` to `dst` crosses.
    pub fn crossing(&mut self, src: u32, dst: u32) -> Crossing<'_> {
        let net = self.net;
        let hop = |p: PortId| hop_of(net, p);
        let (a, b) = (net.routes.edge_of_host[src as usize], net.routes.edge_of_host[dst as usize]);
        let first = hop(net.nic_port(src));
        let last = hop(net.routes.host_port[dst as usize]);
        let uniform = self.uniform;
        if !self.pairs.contains_key(&(a, b)) {
            let middles = if uniform {
                // The first equal-cost path, without its NIC and downlink.
                let ports = net.routes.walk(&net.ports, src, dst, |_, _| 0);
                vec![ports[1..ports.len() - 1].iter().map(|&p| hop(p)).collect()]
            } else {
                let profiles = self.towards(a, b, dst);
                profiles.iter().map(|p| p.iter().map(|k| self.hops[k]).collect()).collect()
            };
            self.pairs.insert((a, b), middles);
        }
        Crossing { first, middles: &self.pairs[&(a, b)], last }
    }

    /// Profiles from switch `s` to edge switch `e` (`dst` is any host under `e`, for the tables).
    fn towards(&mut self, s: NodeId, e: NodeId, dst: u32) -> Rc<Profiles> {
        if let Some(p) = self.towards.get(&(s, e)) {
            return p.clone();
        }
        let net = self.net;
        let result = if s == e {
            vec![Vec::new()]
        } else {
            // Distinct (first hop, rest) pairs: in a mostly uniform fabric most candidates agree.
            let mut branches: Vec<(HopKey, Rc<Profiles>)> = Vec::new();
            for &p in net.routes.candidates(s, dst) {
                let hop = hop_of(net, p);
                let key = HopKey::of(hop);
                self.hops.insert(key, hop);
                let rest = self.towards(net.ports[p as usize].peer, e, dst);
                if !branches.iter().any(|(k, r)| *k == key && Rc::ptr_eq(r, &rest)) {
                    branches.push((key, rest));
                }
            }
            let mut all: Profiles = Vec::new();
            for (key, rest) in &branches {
                for tail in rest.iter() {
                    let mut prof = Vec::with_capacity(tail.len() + 1);
                    prof.push(*key);
                    prof.extend_from_slice(tail);
                    all.push(prof);
                }
            }
            pareto(all)
        };
        let rc = Rc::new(result);
        self.towards.insert((s, e), rc.clone());
        rc
    }
}

/// Drops duplicate profiles and those no faster than another anywhere.
fn pareto(mut all: Profiles) -> Profiles {
    all.dedup();
    let dominated = |p: &Vec<HopKey>, q: &Vec<HopKey>| {
        p != q && p.len() == q.len() && q.iter().zip(p).all(|(a, b)| a.no_slower(*b))
    };
    let keep: Vec<bool> = all
        .iter()
        .enumerate()
        .map(|(i, p)| !all.iter().enumerate().any(|(j, q)| dominated(p, q) || (p == q && j < i)))
        .collect();
    all.into_iter().zip(keep).filter(|(_, k)| *k).map(|(p, _)| p).collect()
}

/// Whether every port of one kind (role and the tiers of its two ends) has the same profile.
fn is_uniform(net: &Network) -> bool {
    let tier = |n: NodeId| if n < net.hosts { u8::MAX } else { net.tiers[(n - net.hosts) as usize] as u8 };
    let mut seen: HashMap<(u8, u8, u8), HopKey> = HashMap::new();
    (0..net.ports.len() as PortId).all(|p| {
        let port = &net.ports[p as usize];
        let key = HopKey::of(hop_of(net, p));
        *seen.entry((port.role as u8, tier(port.owner), tier(port.peer))).or_insert(key) == key
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::Rate;
    use crate::net::queue::QueueConfig;
    use crate::net::QueueConfigs;
    use crate::topology::{builders, Graph};

    fn network(g: &Graph) -> Network {
        let q = QueueConfig::infinite();
        let qs = QueueConfigs { nic: q.clone(), to_host: q.clone(), fabric: q };
        Network::build(g, &qs, 0, None, 1).unwrap()
    }

    fn gbps(rates: &[Hop]) -> Vec<f64> {
        rates.iter().map(|h| h.rate.gbps()).collect()
    }

    /// Slows (or speeds up) both directions of the link between nodes a and b.
    fn set_rate(g: &mut Graph, a: u32, b: u32, gbps: f64) {
        let l = g.links.iter_mut().find(|l| (l.a, l.b) == (a, b) || (l.a, l.b) == (b, a)).unwrap();
        l.rate_ab = Rate::from_gbps(gbps);
        l.rate_ba = Rate::from_gbps(gbps);
    }

    #[test]
    fn builders_are_uniform_and_the_walk_agrees_with_the_first_path() {
        let r = Rate::from_gbps(10.0);
        for g in [
            builders::fat_tree(4, 1, r, Rate::from_gbps(40.0), 1_000_000, 500_000),
            builders::fat_tree(6, 2, r, r, 1_000_000, 1_000_000),
            builders::leaf_spine(3, 2, 3, r, Rate::from_gbps(25.0), 1, 2),
            builders::dumbbell(2, r, 5, Rate::from_gbps(1.0), 7),
            builders::single_switch(3, r, 9),
        ] {
            let net = network(&g);
            let mut fast = IdealPaths::new(&net);
            assert!(fast.uniform);
            let mut walked = IdealPaths { uniform: false, ..IdealPaths::new(&net) };
            for (a, b) in [(0, 1), (0, net.hosts - 1), (net.hosts - 1, 0), (1, net.hosts / 2)] {
                if a == b {
                    continue;
                }
                let (f, w) = (fast.crossing(a, b), walked.crossing(a, b));
                assert_eq!(w.middles.len(), 1, "a uniform fabric has one profile");
                assert_eq!(gbps(&f.middles[0]), gbps(&w.middles[0]));
                let delays = |m: &[Hop]| m.iter().map(|h| h.delay).collect::<Vec<_>>();
                assert_eq!(delays(&f.middles[0]), delays(&w.middles[0]));
            }
        }
    }

    #[test]
    fn a_degraded_link_leaves_the_fast_path_as_the_best() {
        // Two racks, two spines; tor0-spine0 at 1 Gb/s. Nodes: hosts 0, 1; tor0 2, tor1 3; spines 4, 5.
        let r = Rate::from_gbps(10.0);
        let mut g = builders::leaf_spine(2, 1, 2, r, r, 1, 1);
        set_rate(&mut g, 2, 4, 1.0);
        let net = network(&g);
        let mut paths = IdealPaths::new(&net);
        assert!(!paths.uniform);
        let c = paths.crossing(0, 1);
        assert_eq!(c.middles.len(), 1, "the slow path is dominated");
        assert_eq!(gbps(&c.middles[0]), vec![10.0, 10.0]);
    }

    #[test]
    fn incomparable_paths_are_all_kept_and_an_upgrade_is_used() {
        // Three spines: spine0 slow up (tor0-spine0 1G), spine1 slow down (spine1-tor1 1G), spine2
        // fast everywhere but with a 100G upgrade on tor0-spine2.
        let r = Rate::from_gbps(10.0);
        let mut g = builders::leaf_spine(2, 1, 3, r, r, 1, 1);
        set_rate(&mut g, 2, 4, 1.0);
        set_rate(&mut g, 5, 3, 1.0);
        let net = network(&g);
        let mut paths = IdealPaths::new(&net);
        assert_eq!(gbps(&paths.crossing(0, 1).middles[0]), vec![10.0, 10.0]);
        set_rate(&mut g, 2, 6, 100.0);
        let net = network(&g);
        let mut paths = IdealPaths::new(&net);
        assert_eq!(gbps(&paths.crossing(0, 1).middles[0]), vec![100.0, 10.0]);
        // Without spine2, the two slow paths are incomparable: both stay.
        let mut g = builders::leaf_spine(2, 1, 2, r, r, 1, 1);
        set_rate(&mut g, 2, 4, 1.0);
        set_rate(&mut g, 5, 3, 1.0);
        let net = network(&g);
        let mut paths = IdealPaths::new(&net);
        let mut got: Vec<Vec<f64>> = paths.crossing(0, 1).middles.iter().map(|m| gbps(m)).collect();
        got.sort_by(|a, b| a.partial_cmp(b).unwrap());
        assert_eq!(got, vec![vec![1.0, 10.0], vec![10.0, 1.0]]);
    }

    #[test]
    fn host_links_are_per_host() {
        let r = Rate::from_gbps(10.0);
        let mut g = builders::single_switch(3, r, 1);
        set_rate(&mut g, 1, 3, 2.5); // host1's link
        let net = network(&g);
        let mut paths = IdealPaths::new(&net);
        assert_eq!(paths.crossing(0, 1).last.rate.gbps(), 2.5);
        assert_eq!(paths.crossing(1, 2).first.rate.gbps(), 2.5);
        assert_eq!(paths.crossing(0, 2).last.rate.gbps(), 10.0);
        assert_eq!(paths.crossing(2, 0).first.rate.gbps(), 10.0);
    }
}
