//! A three-tier Clos with free counts per tier (the `three_tier` kind): `pods` pods of
//! `tors_per_pod` ToRs and `aggs_per_pod` aggregation switches, every ToR linked to every
//! aggregation switch of its pod; aggregation switch j of every pod linked to its own group of
//! `cores_per_agg` core switches, j * cores_per_agg .. (j + 1) * cores_per_agg, so the core layer
//! has aggs_per_pod x cores_per_agg switches. Host h is under ToR h / hosts_per_tor.
//!
//! ExpressPass's realistic-workload fabric (SIGCOMM'17 section 6.3, the authors'
//! large-scale-fattree.tcl) is pods = 8, tors_per_pod = 4, aggs_per_pod = 2, cores_per_agg = 4,
//! hosts_per_tor = 6: 192 hosts, 32 ToRs, 16 aggregation and 8 core switches, 3:1 oversubscribed
//! at the ToR (the script stripes cores over aggregation switches, even/odd; the same wiring up to
//! the cores' names).

use super::{Graph, Link, SwitchInfo, Tier};
use crate::time::{from_us, Rate, Time};

#[derive(Clone, Debug, PartialEq)]
pub struct ThreeTierSpec {
    pub pods: u32,
    pub tors_per_pod: u32,
    pub aggs_per_pod: u32,
    pub cores_per_agg: u32,
    pub hosts_per_tor: u32,
    pub host_rate_gbps: f64,
    pub core_rate_gbps: f64,
    pub host_delay_us: f64,
    pub core_delay_us: f64,
}

impl ThreeTierSpec {
    pub fn hosts(&self) -> u64 {
        self.pods as u64 * self.tors_per_pod as u64 * self.hosts_per_tor as u64
    }

    pub fn build(&self) -> Graph {
        let (hr, cr) = (Rate::from_gbps(self.host_rate_gbps), Rate::from_gbps(self.core_rate_gbps));
        let (hd, cd) = (from_us(self.host_delay_us), from_us(self.core_delay_us));
        let mut g = Graph { hosts: self.hosts() as u32, ..Default::default() };
        let add = |g: &mut Graph, name: String, tier: Tier| {
            g.switches.push(SwitchInfo { name, tier });
            g.hosts + g.switches.len() as u32 - 1
        };
        let link = |g: &mut Graph, a: u32, b: u32, rate: Rate, delay: Time| {
            g.links.push(Link { a, b, rate_ab: rate, rate_ba: rate, delay, loss_ab: 0.0, loss_ba: 0.0 });
        };
        let (mut tors, mut aggs) = (Vec::new(), Vec::new());
        for p in 0..self.pods {
            tors.extend((0..self.tors_per_pod).map(|t| add(&mut g, format!("tor{p}_{t}"), Tier::Edge)));
            aggs.extend((0..self.aggs_per_pod).map(|a| add(&mut g, format!("agg{p}_{a}"), Tier::Aggregation)));
        }
        let ncores = self.aggs_per_pod * self.cores_per_agg;
        let cores: Vec<u32> = (0..ncores).map(|c| add(&mut g, format!("core{c}"), Tier::Core)).collect();
        for (t, &tor) in tors.iter().enumerate() {
            for i in 0..self.hosts_per_tor {
                link(&mut g, t as u32 * self.hosts_per_tor + i, tor, hr, hd);
            }
        }
        for p in 0..self.pods as usize {
            let pod_aggs = &aggs[p * self.aggs_per_pod as usize..(p + 1) * self.aggs_per_pod as usize];
            for &tor in &tors[p * self.tors_per_pod as usize..(p + 1) * self.tors_per_pod as usize] {
                for &agg in pod_aggs {
                    link(&mut g, tor, agg, cr, cd);
                }
            }
            for (a, &agg) in pod_aggs.iter().enumerate() {
                let group = a * self.cores_per_agg as usize..(a + 1) * self.cores_per_agg as usize;
                for &core in &cores[group] {
                    link(&mut g, agg, core, cr, cd);
                }
            }
        }
        g
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_expresspass_fabric_has_the_papers_counts() {
        let t = ThreeTierSpec {
            pods: 8,
            tors_per_pod: 4,
            aggs_per_pod: 2,
            cores_per_agg: 4,
            hosts_per_tor: 6,
            host_rate_gbps: 10.0,
            core_rate_gbps: 10.0,
            host_delay_us: 4.5,
            core_delay_us: 4.0,
        };
        let g = t.build();
        let count = |tier| g.switches.iter().filter(|s| s.tier == tier).count();
        assert_eq!((g.hosts, count(Tier::Edge), count(Tier::Aggregation), count(Tier::Core)), (192, 32, 16, 8));
        // 192 host links, 32 x 2 ToR uplinks, 16 x 4 aggregation uplinks.
        assert_eq!(g.links.len(), 192 + 64 + 64);
    }
}
