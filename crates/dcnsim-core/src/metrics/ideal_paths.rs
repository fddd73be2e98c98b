//! The ways across the fabric a flow could take, as the ideal FCT needs them: the sender's NIC, one
//! of the equal-cost crossings between the two edge switches, and the receiver's downlink.
//!
//! Only a crossing's hop profile (rate, delay, pacing of each hop in order) matters to the ideal,
//! so crossings are kept as distinct profiles, and a profile that is nowhere faster than another
//! (every hop no faster, position by position) is dropped: the ideal is monotone in every hop's
//! serialization and delay, so it can never be the fastest.
//!
//! Our builders make uniform fabrics: every switch-to-switch port of one kind (the tiers it joins)
//! has the same rate and delay, and every shortest path between two edge switches crosses the same
//! tiers, so all crossings have one profile and the first path is enough. Link overrides make
//! *exceptional* ports, whose profile differs from their kind's usual one. A switch is *dirty*
//! towards a destination edge switch when an exceptional port lies on one of its shortest paths
//! there; only from dirty switches are the profiles gathered, by a memoized walk over the routing
//! tables; from clean ones the first path stands for all. Dirty sets are found backwards from the
//! exceptional ports, so a few overrides cost little even on a k=64 fat tree.

use crate::net::paths::Hop;
use crate::net::port::{NodeId, PortId};
use crate::net::Network;
use std::collections::{HashMap, HashSet};
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
    /// Per port: a switch-to-switch port whose profile differs from its kind's usual one.
    exceptional: Vec<bool>,
    any_exceptional: bool,
    /// Per destination edge switch: the switches with an exceptional port on a shortest path to it.
    dirty: HashMap<NodeId, HashSet<NodeId>>,
    /// Middle profiles per (source edge, destination edge).
    pairs: HashMap<(NodeId, NodeId), Vec<Vec<Hop>>>,
    /// Profiles (as hop-key lists) from a dirty switch to a destination edge switch.
    towards: HashMap<(NodeId, NodeId), Rc<Profiles>>,
    /// The hop behind each key.
    hops: HashMap<HopKey, Hop>,
}

type Profiles = Vec<Vec<HopKey>>;

impl<'n> IdealPaths<'n> {
    pub fn new(net: &'n Network) -> IdealPaths<'n> {
        Self::with_exceptional(net, exceptional_ports(net))
    }

    fn with_exceptional(net: &'n Network, exceptional: Vec<bool>) -> IdealPaths<'n> {
        IdealPaths {
            net,
            any_exceptional: exceptional.iter().any(|&x| x),
            exceptional,
            dirty: HashMap::new(),
            pairs: HashMap::new(),
            towards: HashMap::new(),
            hops: HashMap::new(),
        }
    }

    /// What a flow from `src` to `dst` crosses.
    pub fn crossing(&mut self, src: u32, dst: u32) -> Crossing<'_> {
        let net = self.net;
        let (a, b) = (net.routes.edge_of_host[src as usize], net.routes.edge_of_host[dst as usize]);
        let first = hop_of(net, net.nic_port(src));
        let last = hop_of(net, net.routes.host_port[dst as usize]);
        if !self.pairs.contains_key(&(a, b)) {
            let middles = if self.is_dirty(a, b) {
                let profiles = self.towards(a, b, dst);
                profiles.iter().map(|p| p.iter().map(|k| self.hops[k]).collect()).collect()
            } else {
                vec![first_path(net, a, dst).into_iter().map(|p| hop_of(net, p)).collect()]
            };
            self.pairs.insert((a, b), middles);
        }
        Crossing { first, middles: &self.pairs[&(a, b)], last }
    }

    fn is_dirty(&mut self, s: NodeId, e: NodeId) -> bool {
        self.any_exceptional && s != e && self.dirty_towards(e).contains(&s)
    }

    /// Switches with an exceptional port on a shortest path to edge switch `e`: the owners of
    /// exceptional ports that routing uses towards `e`, then, backwards, every switch with a
    /// candidate port into a dirty one.
    fn dirty_towards(&mut self, e: NodeId) -> &HashSet<NodeId> {
        let net = self.net;
        let exceptional = &self.exceptional;
        self.dirty.entry(e).or_insert_with(|| {
            let dst = (0..net.hosts).find(|&h| net.routes.edge_of_host[h as usize] == e).expect("an edge switch");
            let uses = |s: NodeId, pred: &dyn Fn(PortId) -> bool| {
                s != e && s >= net.hosts && net.routes.candidates(s, dst).iter().any(|&p| pred(p))
            };
            let mut dirty = HashSet::new();
            let mut work: Vec<NodeId> = Vec::new();
            for (p, _) in exceptional.iter().enumerate().filter(|(_, &x)| x) {
                let owner = net.ports[p].owner;
                if uses(owner, &|q| q as usize == p) && dirty.insert(owner) {
                    work.push(owner);
                }
            }
            while let Some(m) = work.pop() {
                for &q in &net.ports_of[m as usize] {
                    let s = net.ports[q as usize].peer;
                    if !dirty.contains(&s) && uses(s, &|c| net.ports[c as usize].peer == m) {
                        dirty.insert(s);
                        work.push(s);
                    }
                }
            }
            dirty
        })
    }

    /// Profiles from switch `s` to edge switch `e` (`dst` is any host under `e`, for the tables).
    fn towards(&mut self, s: NodeId, e: NodeId, dst: u32) -> Rc<Profiles> {
        if let Some(p) = self.towards.get(&(s, e)) {
            return p.clone();
        }
        let net = self.net;
        let result = if !self.is_dirty(s, e) {
            // Every path from here is made of usual ports: the first stands for all.
            vec![first_path(net, s, dst).into_iter().map(|p| self.key(p)).collect()]
        } else {
            // Distinct (first hop, rest) pairs: most candidates agree.
            let mut branches: Vec<(HopKey, Rc<Profiles>)> = Vec::new();
            for &p in net.routes.candidates(s, dst) {
                let key = self.key(p);
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

    fn key(&mut self, p: PortId) -> HopKey {
        let hop = hop_of(self.net, p);
        let key = HopKey::of(hop);
        self.hops.insert(key, hop);
        key
    }
}

/// The ports of the first equal-cost path from switch `s` to the edge switch of host `dst`.
fn first_path(net: &Network, mut s: NodeId, dst: u32) -> Vec<PortId> {
    let e = net.routes.edge_of_host[dst as usize];
    let mut ports = Vec::new();
    while s != e {
        let p = net.routes.candidates(s, dst)[0];
        ports.push(p);
        s = net.ports[p as usize].peer;
        assert!(ports.len() < 64, "routing loop towards host {dst}");
    }
    ports
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

/// Switch-to-switch ports whose profile differs from the most common one of their kind (the
/// tiers of their two ends): the ports link overrides changed.
fn exceptional_ports(net: &Network) -> Vec<bool> {
    let tier = |n: NodeId| net.tiers[(n - net.hosts) as usize] as u8;
    let fabric = |p: &crate::net::port::Port| p.owner >= net.hosts && p.peer >= net.hosts;
    let kind = |p: &crate::net::port::Port| (tier(p.owner), tier(p.peer));
    let mut counts: HashMap<((u8, u8), HopKey), usize> = HashMap::new();
    for (i, p) in net.ports.iter().enumerate().filter(|(_, p)| fabric(p)) {
        *counts.entry((kind(p), HopKey::of(hop_of(net, i as PortId)))).or_default() += 1;
    }
    let mut usual: HashMap<(u8, u8), (usize, HopKey)> = HashMap::new();
    for (&(k, key), &n) in &counts {
        let e = usual.entry(k).or_insert((n, key));
        // The most common profile; ties to the faster-sorting key, so the choice is deterministic.
        let order = |k: HopKey| (k.bps, k.delay, k.pace_bps);
        if n > e.0 || (n == e.0 && order(key) > order(e.1)) {
            *e = (n, key);
        }
    }
    net.ports
        .iter()
        .enumerate()
        .map(|(i, p)| fabric(p) && usual[&kind(p)].1 != HopKey::of(hop_of(net, i as PortId)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::queue::QueueConfig;
    use crate::net::QueueConfigs;
    use crate::time::Rate;
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
    fn builders_are_uniform_and_every_path_agrees_with_the_first() {
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
            assert!(!fast.any_exceptional);
            // Every switch-to-switch port exceptional: profiles gathered over every path.
            let all = net.ports.iter().map(|p| p.owner >= net.hosts && p.peer >= net.hosts).collect();
            let mut walked = IdealPaths::with_exceptional(&net, all);
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
        assert!(paths.any_exceptional);
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

    #[test]
    fn dirty_sets_find_every_path_an_override_touches() {
        // Random overrides on fat trees: walking only from dirty switches gives the same profiles
        // as walking every path.
        let mut rng = crate::engine::rng::Rng::seed_from(5);
        for k in [4u32, 6] {
            for _ in 0..20 {
                let r = Rate::from_gbps(10.0);
                let mut g = builders::fat_tree(k, 1, r, r, 1, 1);
                let fabric: Vec<usize> = (0..g.links.len()).filter(|&i| g.links[i].a >= g.hosts).collect();
                for _ in 0..1 + rng.below(3) {
                    let l = &mut g.links[fabric[rng.below(fabric.len() as u64) as usize]];
                    let rate = Rate::from_gbps([1.0, 5.0, 40.0][rng.below(3) as usize]);
                    if rng.bernoulli(0.5) {
                        l.rate_ab = rate;
                    } else {
                        l.rate_ba = rate;
                    }
                }
                let net = network(&g);
                let all = net.ports.iter().map(|p| p.owner >= net.hosts && p.peer >= net.hosts).collect();
                let (mut lean, mut full) = (IdealPaths::new(&net), IdealPaths::with_exceptional(&net, all));
                for _ in 0..30 {
                    let (a, b) = (rng.below(net.hosts as u64) as u32, rng.below(net.hosts as u64) as u32);
                    if a == b {
                        continue;
                    }
                    let sorted = |c: Crossing| {
                        let mut v: Vec<Vec<f64>> = c.middles.iter().map(|m| gbps(m)).collect();
                        v.sort_by(|x, y| x.partial_cmp(y).unwrap());
                        v
                    };
                    assert_eq!(sorted(lean.crossing(a, b)), sorted(full.crossing(a, b)), "k={k} {a}->{b}");
                }
            }
        }
    }
}
