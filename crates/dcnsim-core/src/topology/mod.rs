//! Topologies are data: a spec table becomes a `Graph` (hosts, switches, links) that the network
//! is built from. Hosts are nodes 0..hosts; switches follow. Every host has exactly one link, to
//! its edge switch (ToR).

pub mod builders;
pub mod three_tier;

use crate::spec_reader::{Section, SpecResult};
use crate::time::{from_us, Rate, Time};
use std::collections::HashMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    /// Top-of-rack / leaf: the switch hosts attach to.
    Edge,
    /// Aggregation (fat-tree middle tier).
    Aggregation,
    /// Spine / core.
    Core,
}

impl Tier {
    pub fn name(self) -> &'static str {
        match self {
            Tier::Edge => "edge",
            Tier::Aggregation => "aggregation",
            Tier::Core => "core",
        }
    }
}

#[derive(Clone, Debug)]
pub struct SwitchInfo {
    pub name: String,
    pub tier: Tier,
}

/// A bidirectional link with the same delay both ways; the rates (and loss probabilities) differ
/// only when an override changes one direction.
#[derive(Clone, Debug)]
pub struct Link {
    pub a: u32,
    pub b: u32,
    /// Rate from `a` to `b`.
    pub rate_ab: Rate,
    /// Rate from `b` to `a`.
    pub rate_ba: Rate,
    pub delay: Time,
    /// Probability that a packet from `a` is lost at `b`'s end, independently of every other.
    pub loss_ab: f64,
    /// Probability that a packet from `b` is lost at `a`'s end.
    pub loss_ba: f64,
}

#[derive(Clone, Debug, Default)]
pub struct Graph {
    pub hosts: u32,
    pub switches: Vec<SwitchInfo>,
    pub links: Vec<Link>,
}

pub use crate::limits::MAX_HOSTS;
use crate::limits::{MAX_DELAY_US, MAX_FAT_TREE_K, MAX_RATE_GBPS, MIN_RATE_GBPS};

/// A link whose rate or loss differs from what the topology gives it (a degraded, upgraded or
/// lossy link), named by the two nodes it joins (e.g. "core0" and "agg1_0"; hosts are "host<i>").
#[derive(Clone, Debug, PartialEq)]
pub struct LinkOverride {
    pub a: String,
    pub b: String,
    /// The new rate; `None` keeps the topology's.
    pub rate_gbps: Option<f64>,
    /// The new loss probability; `None` keeps `topology.loss_probability`.
    pub loss_probability: Option<f64>,
    /// Only the direction from `a` to `b` changes (htsim's failed core link is one-way).
    pub one_way: bool,
    /// Index in `topology.link_overrides`, for errors.
    pub index: usize,
}

/// The topology, its random link loss and its link overrides.
#[derive(Clone, Debug, PartialEq)]
pub struct Topology {
    pub kind: TopologySpec,
    /// Probability that any link loses a packet (each packet independently), unless overridden.
    pub loss_probability: f64,
    pub overrides: Vec<LinkOverride>,
}

/// Checks a loss probability: in [0, 1), since a link that loses everything carries nothing.
fn check_loss(s: &Section, key: &str, p: f64) -> SpecResult<()> {
    s.ensure((0.0..1.0).contains(&p), key, format!("must be in [0, 1), got {p}"))
}

impl Topology {
    pub fn read(s: &mut Section) -> SpecResult<Topology> {
        let kind = TopologySpec::read(s)?;
        let loss_probability = s.f64_or(
            "loss_probability",
            0.0,
            "probability",
            "probability that a link loses a packet at its far end, each packet independently (counted as `losses` of the sending port)",
        )?;
        check_loss(s, "loss_probability", loss_probability)?;
        let mut overrides = Vec::new();
        for (index, mut o) in s
            .tables_opt("link_overrides", "links whose rate or loss differs, e.g. a degraded core link")?
            .into_iter()
            .enumerate()
        {
            let a = o.string(
                "a",
                "[link_overrides] one end of the link (a node name: host3, tor0, agg1_0, core5, spine2, left, ...)",
            )?;
            let b = o.string("b", "[link_overrides] the other end")?;
            let rate_gbps =
                o.f64_opt("rate_gbps", "Gb/s", "[link_overrides] the link's new rate; unset = unchanged")?;
            if let Some(r) = rate_gbps {
                check_rate(&o, "rate_gbps", r)?;
            }
            let loss_probability = o.f64_opt(
                "loss_probability",
                "probability",
                "[link_overrides] the link's loss probability; unset = topology.loss_probability",
            )?;
            if let Some(p) = loss_probability {
                check_loss(&o, "loss_probability", p)?;
            }
            let one_way =
                o.bool_or("one_way", false, "[link_overrides] change only the direction from a to b (default: both)")?;
            if !o.is_describe() && rate_gbps.is_none() && loss_probability.is_none() {
                return Err(crate::spec_reader::SpecError {
                    field: o.path().to_string(),
                    message: "an override needs rate_gbps, loss_probability or both".into(),
                });
            }
            o.finish()?;
            overrides.push(LinkOverride { a, b, rate_gbps, loss_probability, one_way, index });
        }
        Ok(Topology { kind, loss_probability, overrides })
    }

    /// Builds the graph and applies the loss and the overrides; errors name the override that
    /// matches no link.
    pub fn build(&self) -> SpecResult<Graph> {
        let mut g = self.kind.build();
        for l in &mut g.links {
            (l.loss_ab, l.loss_ba) = (self.loss_probability, self.loss_probability);
        }
        if self.overrides.is_empty() {
            return Ok(g);
        }
        // Node names and links by their ends, looked up once per override (not a scan per override).
        let mut node_of: HashMap<String, u32> = (0..g.hosts).map(|h| (format!("host{h}"), h)).collect();
        node_of.extend(g.switches.iter().enumerate().map(|(i, s)| (s.name.clone(), g.hosts + i as u32)));
        let mut link_of: HashMap<(u32, u32), usize> = HashMap::with_capacity(g.links.len());
        for (i, l) in g.links.iter().enumerate() {
            link_of.entry((l.a.min(l.b), l.a.max(l.b))).or_insert(i);
        }
        for o in &self.overrides {
            let ends = node_of.get(&o.a).zip(node_of.get(&o.b));
            let found = ends.and_then(|(&a, &b)| link_of.get(&(a.min(b), a.max(b))).map(|&i| (i, a)));
            let Some((i, a)) = found else {
                return Err(crate::spec_reader::SpecError {
                    field: format!("topology.link_overrides[{}]", o.index),
                    message: format!("no link joins {} and {}", o.a, o.b),
                });
            };
            // The link joins o.a and o.b in one of two orders; `forward` when it is stored a -> b.
            let forward = g.links[i].a == a;
            let l = &mut g.links[i];
            let (ab, ba) = (!o.one_way || forward, !o.one_way || !forward);
            if let Some(r) = o.rate_gbps.map(Rate::from_gbps) {
                if ab {
                    l.rate_ab = r;
                }
                if ba {
                    l.rate_ba = r;
                }
            }
            if let Some(p) = o.loss_probability {
                if ab {
                    l.loss_ab = p;
                }
                if ba {
                    l.loss_ba = p;
                }
            }
        }
        Ok(g)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum TopologySpec {
    SingleSwitch {
        hosts: u32,
        host_rate_gbps: f64,
        host_delay_us: f64,
    },
    Dumbbell {
        hosts_per_side: u32,
        host_rate_gbps: f64,
        host_delay_us: f64,
        bottleneck_rate_gbps: f64,
        bottleneck_delay_us: f64,
    },
    LeafSpine {
        racks: u32,
        hosts_per_rack: u32,
        spines: u32,
        host_rate_gbps: f64,
        core_rate_gbps: f64,
        host_delay_us: f64,
        core_delay_us: f64,
    },
    FatTree {
        k: u32,
        /// Pods built (k for the full tree).
        pods: u32,
        oversubscription: u32,
        host_rate_gbps: f64,
        core_rate_gbps: f64,
        host_delay_us: f64,
        core_delay_us: f64,
    },
    ThreeTier(three_tier::ThreeTierSpec),
    Ring {
        switches: u32,
        hosts_per_switch: u32,
        host_rate_gbps: f64,
        core_rate_gbps: f64,
        host_delay_us: f64,
        core_delay_us: f64,
    },
}

pub const KINDS: &[(&str, &str)] = &[
    ("single_switch", "N hosts on one switch"),
    ("dumbbell", "two switches joined by one bottleneck link, hosts_per_side hosts on each"),
    ("leaf_spine", "two tiers: racks of hosts under leaf switches, every leaf linked to every spine"),
    ("fat_tree", "three-tier k-ary fat tree (k^3/4 hosts at oversubscription 1)"),
    (
        "three_tier",
        "three tiers with free counts: pods of ToRs and aggregation switches, each aggregation switch with its own core group",
    ),
    (
        "ring",
        "switches in a ring, each with its hosts; shortest-path routes (cyclic buffer dependencies, PFC deadlocks)",
    ),
];

/// A rate the engine can represent (the `_gbps` suffix has the reader check it).
fn rate(s: &mut Section, key: &str, doc: &'static str) -> SpecResult<f64> {
    debug_assert!(key.ends_with("_gbps"));
    s.f64(key, "Gb/s", doc)
}

/// A link or pacing rate (Gb/s) within the limits: below the slowest, serialization times overflow
/// their fixed-point arithmetic (and under 1 b/s the rate rounds to zero).
pub(crate) fn check_rate(s: &Section, key: &str, gbps: f64) -> SpecResult<()> {
    let (min, max) = (MIN_RATE_GBPS, MAX_RATE_GBPS);
    s.ensure((min..=max).contains(&gbps), key, format!("must be in [{min}, {max}] Gb/s, got {gbps}"))
}

fn delay(s: &mut Section, key: &str, default: f64, doc: &'static str) -> SpecResult<f64> {
    let v = s.f64_or(key, default, "us", doc)?;
    s.ensure((0.0..=MAX_DELAY_US).contains(&v), key, format!("must be in [0, {MAX_DELAY_US:e}] us, got {v}"))?;
    Ok(v)
}

fn count(s: &mut Section, key: &str, min: u64, doc: &'static str) -> SpecResult<u32> {
    let v = s.u64(key, "count", doc)?;
    s.ensure(v >= min, key, format!("must be at least {min}, got {v}"))?;
    s.ensure(v <= MAX_HOSTS, key, format!("must be at most {MAX_HOSTS}, got {v}"))?;
    Ok(v as u32)
}

const CORE_RATE_DOC: &str = "[leaf_spine, fat_tree, ring, three_tier] rate of switch-to-switch links";
const CORE_DELAY_DOC: &str = "[leaf_spine, fat_tree, ring, three_tier] delay of switch-to-switch links";

/// The `ring` kind's keys.
fn read_ring(s: &mut Section, host_rate_doc: &'static str, host_delay_doc: &'static str) -> SpecResult<TopologySpec> {
    Ok(TopologySpec::Ring {
        switches: count(s, "switches", 3, "[ring] switches in the ring, each linked to the next")?,
        hosts_per_switch: count(s, "hosts_per_switch", 1, "[ring] hosts under each switch")?,
        host_rate_gbps: rate(s, "host_rate_gbps", host_rate_doc)?,
        core_rate_gbps: rate(s, "core_rate_gbps", CORE_RATE_DOC)?,
        host_delay_us: delay(s, "host_delay_us", 1.0, host_delay_doc)?,
        core_delay_us: delay(s, "core_delay_us", 1.0, CORE_DELAY_DOC)?,
    })
}

/// The `three_tier` kind's keys.
fn read_three_tier(
    s: &mut Section,
    host_rate_doc: &'static str,
    host_delay_doc: &'static str,
) -> SpecResult<TopologySpec> {
    Ok(TopologySpec::ThreeTier(three_tier::ThreeTierSpec {
        pods: count(s, "pods", 1, "[three_tier] pods, each of ToRs and aggregation switches")?,
        tors_per_pod: count(s, "tors_per_pod", 1, "[three_tier] ToRs per pod, each linked to every aggregation switch of its pod")?,
        aggs_per_pod: count(s, "aggs_per_pod", 1, "[three_tier] aggregation switches per pod")?,
        cores_per_agg: count(s, "cores_per_agg", 1, "[three_tier] core switches each aggregation switch links to (aggregation switch j of every pod shares core group j)")?,
        hosts_per_tor: count(s, "hosts_per_tor", 1, "[three_tier] hosts under each ToR")?,
        host_rate_gbps: rate(s, "host_rate_gbps", host_rate_doc)?,
        core_rate_gbps: rate(s, "core_rate_gbps", CORE_RATE_DOC)?,
        host_delay_us: delay(s, "host_delay_us", 1.0, host_delay_doc)?,
        core_delay_us: delay(s, "core_delay_us", 1.0, CORE_DELAY_DOC)?,
    }))
}

impl TopologySpec {
    /// Reads `[topology]`; in describe mode documents every kind's keys.
    pub fn read(s: &mut Section) -> SpecResult<TopologySpec> {
        if s.is_describe() {
            for (kind, _) in KINDS {
                Self::read_kind(s, kind)?;
            }
            s.choice("kind", &KINDS.iter().map(|k| k.0).collect::<Vec<_>>(), "topology kind")?;
            return Ok(TopologySpec::SingleSwitch { hosts: 2, host_rate_gbps: 1.0, host_delay_us: 1.0 });
        }
        let kind = s.choice("kind", &KINDS.iter().map(|k| k.0).collect::<Vec<_>>(), "topology kind")?;
        let t = Self::read_kind(s, &kind)?;
        let hosts = t.host_count();
        s.ensure(hosts <= MAX_HOSTS, "kind", format!("{hosts} hosts exceeds the limit of {MAX_HOSTS}"))?;
        Ok(t)
    }

    fn read_kind(s: &mut Section, kind: &str) -> SpecResult<TopologySpec> {
        let host_rate_doc = "rate of every host link";
        let host_delay_doc = "propagation delay of every host link";
        Ok(match kind {
            "single_switch" => TopologySpec::SingleSwitch {
                hosts: count(s, "hosts", 2, "[single_switch] number of hosts")?,
                host_rate_gbps: rate(s, "host_rate_gbps", host_rate_doc)?,
                host_delay_us: delay(s, "host_delay_us", 1.0, host_delay_doc)?,
            },
            "dumbbell" => TopologySpec::Dumbbell {
                hosts_per_side: count(s, "hosts_per_side", 1, "[dumbbell] hosts on each side")?,
                host_rate_gbps: rate(s, "host_rate_gbps", host_rate_doc)?,
                host_delay_us: delay(s, "host_delay_us", 1.0, host_delay_doc)?,
                bottleneck_rate_gbps: rate(s, "bottleneck_rate_gbps", "[dumbbell] rate of the switch-to-switch link")?,
                bottleneck_delay_us: delay(
                    s,
                    "bottleneck_delay_us",
                    1.0,
                    "[dumbbell] delay of the switch-to-switch link",
                )?,
            },
            "leaf_spine" => TopologySpec::LeafSpine {
                racks: count(s, "racks", 1, "[leaf_spine] leaf switches (racks)")?,
                hosts_per_rack: count(s, "hosts_per_rack", 1, "[leaf_spine] hosts under each leaf")?,
                spines: count(s, "spines", 1, "[leaf_spine] spine switches; each leaf has one link to each")?,
                host_rate_gbps: rate(s, "host_rate_gbps", host_rate_doc)?,
                core_rate_gbps: rate(s, "core_rate_gbps", CORE_RATE_DOC)?,
                host_delay_us: delay(s, "host_delay_us", 1.0, host_delay_doc)?,
                core_delay_us: delay(s, "core_delay_us", 1.0, CORE_DELAY_DOC)?,
            },
            "fat_tree" => {
                let k = s.u64("k", "ports", "[fat_tree] switch radix k: k pods, k^3/4 hosts")?;
                s.ensure(k >= 2 && k % 2 == 0, "k", format!("must be an even number >= 2, got {k}"))?;
                s.ensure(k <= MAX_FAT_TREE_K, "k", format!("must be at most {MAX_FAT_TREE_K}, got {k}"))?;
                let over = s.u64_or(
                    "oversubscription",
                    1,
                    "ratio",
                    "[fat_tree] hosts per ToR = oversubscription x k/2 (1 = full bisection)",
                )?;
                s.ensure((1..=64).contains(&over), "oversubscription", "must be an integer in [1, 64]")?;
                let pods = s.u64_opt("pods", "pods", "[fat_tree] pods built, at most k; unset = k (the full tree)")?;
                let pods = pods.unwrap_or(k);
                s.ensure((1..=k).contains(&pods), "pods", format!("must be in [1, k = {k}], got {pods}"))?;
                let host_rate_gbps = rate(s, "host_rate_gbps", host_rate_doc)?;
                TopologySpec::FatTree {
                    k: k as u32,
                    pods: pods as u32,
                    oversubscription: over as u32,
                    host_rate_gbps,
                    core_rate_gbps: if s.has("core_rate_gbps") || s.is_describe() {
                        rate(s, "core_rate_gbps", CORE_RATE_DOC)?
                    } else {
                        s.f64_or("core_rate_gbps", host_rate_gbps, "Gb/s", "")?
                    },
                    host_delay_us: delay(s, "host_delay_us", 1.0, host_delay_doc)?,
                    core_delay_us: delay(s, "core_delay_us", 1.0, CORE_DELAY_DOC)?,
                }
            }
            "ring" => read_ring(s, host_rate_doc, host_delay_doc)?,
            "three_tier" => read_three_tier(s, host_rate_doc, host_delay_doc)?,
            other => unreachable!("unknown topology kind {other}"),
        })
    }

    pub fn host_count(&self) -> u64 {
        match *self {
            TopologySpec::SingleSwitch { hosts, .. } => hosts as u64,
            TopologySpec::Dumbbell { hosts_per_side, .. } => 2 * hosts_per_side as u64,
            TopologySpec::LeafSpine { racks, hosts_per_rack, .. } => racks as u64 * hosts_per_rack as u64,
            TopologySpec::FatTree { k, pods, oversubscription, .. } => {
                let k = k as u64;
                pods as u64 * k / 2 * (k / 2) * oversubscription as u64
            }
            TopologySpec::Ring { switches, hosts_per_switch, .. } => switches as u64 * hosts_per_switch as u64,
            TopologySpec::ThreeTier(ref t) => t.hosts(),
        }
    }

    pub fn host_rate(&self) -> Rate {
        let g = match *self {
            TopologySpec::SingleSwitch { host_rate_gbps, .. }
            | TopologySpec::Dumbbell { host_rate_gbps, .. }
            | TopologySpec::LeafSpine { host_rate_gbps, .. }
            | TopologySpec::FatTree { host_rate_gbps, .. }
            | TopologySpec::Ring { host_rate_gbps, .. } => host_rate_gbps,
            TopologySpec::ThreeTier(ref t) => t.host_rate_gbps,
        };
        Rate::from_gbps(g)
    }

    pub fn build(&self) -> Graph {
        match *self {
            TopologySpec::ThreeTier(ref t) => t.build(),
            TopologySpec::SingleSwitch { hosts, host_rate_gbps, host_delay_us } => {
                builders::single_switch(hosts, Rate::from_gbps(host_rate_gbps), from_us(host_delay_us))
            }
            TopologySpec::Dumbbell {
                hosts_per_side,
                host_rate_gbps,
                host_delay_us,
                bottleneck_rate_gbps,
                bottleneck_delay_us,
            } => builders::dumbbell(
                hosts_per_side,
                Rate::from_gbps(host_rate_gbps),
                from_us(host_delay_us),
                Rate::from_gbps(bottleneck_rate_gbps),
                from_us(bottleneck_delay_us),
            ),
            TopologySpec::LeafSpine {
                racks,
                hosts_per_rack,
                spines,
                host_rate_gbps,
                core_rate_gbps,
                host_delay_us,
                core_delay_us,
            } => builders::leaf_spine(
                racks,
                hosts_per_rack,
                spines,
                Rate::from_gbps(host_rate_gbps),
                Rate::from_gbps(core_rate_gbps),
                from_us(host_delay_us),
                from_us(core_delay_us),
            ),
            TopologySpec::FatTree {
                k,
                pods,
                oversubscription,
                host_rate_gbps,
                core_rate_gbps,
                host_delay_us,
                core_delay_us,
            } => builders::fat_tree_pods(
                k,
                pods,
                oversubscription,
                Rate::from_gbps(host_rate_gbps),
                Rate::from_gbps(core_rate_gbps),
                from_us(host_delay_us),
                from_us(core_delay_us),
            ),
            TopologySpec::Ring {
                switches,
                hosts_per_switch,
                host_rate_gbps,
                core_rate_gbps,
                host_delay_us,
                core_delay_us,
            } => builders::ring(
                switches,
                hosts_per_switch,
                Rate::from_gbps(host_rate_gbps),
                Rate::from_gbps(core_rate_gbps),
                from_us(host_delay_us),
                from_us(core_delay_us),
            ),
        }
    }
}
