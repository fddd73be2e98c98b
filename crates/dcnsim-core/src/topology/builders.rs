//! The graph builders, one per topology kind.

use super::{Graph, Link, SwitchInfo, Tier};
use crate::time::{Rate, Time};

impl Graph {
    fn add_switch(&mut self, name: String, tier: Tier) -> u32 {
        self.switches.push(SwitchInfo { name, tier });
        self.hosts + self.switches.len() as u32 - 1
    }

    fn link(&mut self, a: u32, b: u32, rate: Rate, delay: Time) {
        self.links.push(Link { a, b, rate_ab: rate, rate_ba: rate, delay, loss_ab: 0.0, loss_ba: 0.0 });
    }
}

pub fn single_switch(hosts: u32, rate: Rate, delay: Time) -> Graph {
    let mut g = Graph { hosts, ..Default::default() };
    let sw = g.add_switch("switch0".into(), Tier::Edge);
    for h in 0..hosts {
        g.link(h, sw, rate, delay);
    }
    g
}

/// Hosts 0..n on the left switch, n..2n on the right.
pub fn dumbbell(n: u32, rate: Rate, delay: Time, b_rate: Rate, b_delay: Time) -> Graph {
    let mut g = Graph { hosts: 2 * n, ..Default::default() };
    let left = g.add_switch("left".into(), Tier::Edge);
    let right = g.add_switch("right".into(), Tier::Edge);
    for h in 0..n {
        g.link(h, left, rate, delay);
        g.link(n + h, right, rate, delay);
    }
    g.link(left, right, b_rate, b_delay);
    g
}

/// Host h is in rack h / hosts_per_rack.
pub fn leaf_spine(
    racks: u32,
    per_rack: u32,
    spines: u32,
    host_rate: Rate,
    core_rate: Rate,
    host_delay: Time,
    core_delay: Time,
) -> Graph {
    let mut g = Graph { hosts: racks * per_rack, ..Default::default() };
    let leaves: Vec<u32> = (0..racks).map(|r| g.add_switch(format!("tor{r}"), Tier::Edge)).collect();
    let spine_ids: Vec<u32> = (0..spines).map(|s| g.add_switch(format!("spine{s}"), Tier::Core)).collect();
    for (r, &leaf) in leaves.iter().enumerate() {
        for i in 0..per_rack {
            g.link(r as u32 * per_rack + i, leaf, host_rate, host_delay);
        }
        for &s in &spine_ids {
            g.link(leaf, s, core_rate, core_delay);
        }
    }
    g
}

/// The k-ary fat tree of Al-Fares et al.: k pods of k/2 ToRs and k/2 aggregation switches,
/// (k/2)^2 core switches; aggregation switch j of every pod links to cores j*k/2 .. (j+1)*k/2.
/// Each ToR has `over * k/2` hosts. Host h is under ToR h / (over * k/2).
pub fn fat_tree(k: u32, over: u32, host_rate: Rate, core_rate: Rate, host_delay: Time, core_delay: Time) -> Graph {
    fat_tree_pods(k, k, over, host_rate, core_rate, host_delay, core_delay)
}

/// A k-ary fat tree with only `pods` of its k pods built (cores keep (k/2)^2 switches, each using
/// `pods` of its k ports). The HPCC paper's fabric is k = 8, 5 pods, 16 hosts per ToR: 320 hosts,
/// 20 ToRs, 20 aggregation and 16 core switches, 160 fabric links (the ns-3 mix/fat.txt).
pub fn fat_tree_pods(
    k: u32,
    pods: u32,
    over: u32,
    host_rate: Rate,
    core_rate: Rate,
    host_delay: Time,
    core_delay: Time,
) -> Graph {
    debug_assert!(pods >= 1 && pods <= k, "pods {pods} outside [1, {k}]");
    let half = k / 2;
    let per_tor = over * half;
    let mut g = Graph { hosts: pods * half * per_tor, ..Default::default() };
    let mut tors = Vec::new();
    let mut aggs = Vec::new();
    for p in 0..pods {
        for t in 0..half {
            tors.push(g.add_switch(format!("tor{p}_{t}"), Tier::Edge));
        }
        for a in 0..half {
            aggs.push(g.add_switch(format!("agg{p}_{a}"), Tier::Aggregation));
        }
    }
    let cores: Vec<u32> = (0..half * half).map(|c| g.add_switch(format!("core{c}"), Tier::Core)).collect();
    for (t, &tor) in tors.iter().enumerate() {
        for i in 0..per_tor {
            g.link(t as u32 * per_tor + i, tor, host_rate, host_delay);
        }
    }
    for p in 0..pods {
        for t in 0..half {
            for a in 0..half {
                g.link(tors[(p * half + t) as usize], aggs[(p * half + a) as usize], core_rate, core_delay);
            }
        }
        for a in 0..half {
            for c in 0..half {
                g.link(aggs[(p * half + a) as usize], cores[(a * half + c) as usize], core_rate, core_delay);
            }
        }
    }
    g
}

/// `n` switches in a ring, switch i linked to switch (i + 1) mod n, with `per_switch` hosts each:
/// host h is under switch h / per_switch. With shortest-path routing on an odd ring, traffic from
/// switch i to switch i + 2 goes one way round, the smallest fabric with a cyclic buffer dependency.
pub fn ring(n: u32, per_switch: u32, host_rate: Rate, core_rate: Rate, host_delay: Time, core_delay: Time) -> Graph {
    let mut g = Graph { hosts: n * per_switch, ..Default::default() };
    let sw: Vec<u32> = (0..n).map(|i| g.add_switch(format!("ring{i}"), Tier::Edge)).collect();
    for (i, &s) in sw.iter().enumerate() {
        for h in 0..per_switch {
            g.link(i as u32 * per_switch + h, s, host_rate, host_delay);
        }
    }
    for i in 0..n as usize {
        g.link(sw[i], sw[(i + 1) % n as usize], core_rate, core_delay);
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fat_tree_counts() {
        for k in [2u32, 4, 8, 12] {
            let g = fat_tree(k, 1, Rate::from_gbps(10.0), Rate::from_gbps(10.0), 1, 1);
            assert_eq!(g.hosts, k * k * k / 4);
            assert_eq!(g.switches.len() as u32, k * k + k * k / 4);
            // host links + tor-agg + agg-core
            assert_eq!(g.links.len() as u32, k * k * k / 4 * 3);
        }
    }

    #[test]
    fn the_pbfs_fabric_has_320_hosts_20_tors_20_aggregation_and_16_core_switches() {
        let g = fat_tree_pods(8, 5, 4, Rate::from_gbps(25.0), Rate::from_gbps(100.0), 1, 1);
        let count = |t: Tier| g.switches.iter().filter(|s| s.tier == t).count();
        assert_eq!((g.hosts, count(Tier::Edge), count(Tier::Aggregation), count(Tier::Core)), (320, 20, 20, 16));
        // host links + 4 uplinks per ToR + 4 uplinks per aggregation switch
        assert_eq!(g.links.len(), 320 + 80 + 80);
    }

    #[test]
    fn hpcc_paper_fabric_counts() {
        // mix/fat.txt of the HPCC ns-3 simulator: 320 hosts, 56 switches, 160 fabric links.
        let g = fat_tree_pods(8, 5, 4, Rate::from_gbps(100.0), Rate::from_gbps(400.0), 1, 1);
        assert_eq!((g.hosts, g.switches.len(), g.links.len()), (320, 56, 320 + 160));
    }

    #[test]
    fn ring_counts() {
        let g = ring(5, 2, Rate::from_gbps(10.0), Rate::from_gbps(10.0), 1, 1);
        assert_eq!((g.hosts, g.switches.len(), g.links.len()), (10, 5, 15));
    }

    #[test]
    fn leaf_spine_counts() {
        let g = leaf_spine(9, 16, 4, Rate::from_gbps(100.0), Rate::from_gbps(400.0), 1, 1);
        assert_eq!(g.hosts, 144);
        assert_eq!(g.switches.len(), 13);
        assert_eq!(g.links.len(), 144 + 36);
    }
}
