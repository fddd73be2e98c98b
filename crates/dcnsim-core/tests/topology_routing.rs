//! Fat-tree structure and ECMP: k^3/4 hosts, (k/2)^2 equal-cost paths between pods, and per-flow
//! ECMP spreading flows evenly over the core.
mod common;
use common::*;
use dcnsim_core::net::queue::QueueConfig;
use dcnsim_core::net::{Network, QueueConfigs};
use dcnsim_core::time::Rate;
use dcnsim_core::topology::builders::fat_tree;

fn net(k: u32) -> Network {
    let g = fat_tree(k, 1, Rate::from_gbps(10.0), Rate::from_gbps(10.0), 1_000_000, 1_000_000);
    let q = QueueConfigs {
        nic: QueueConfig::infinite(),
        to_host: QueueConfig::infinite(),
        fabric: QueueConfig::infinite(),
    };
    Network::build(&g, &q, 0, None, 1).unwrap()
}

#[test]
fn fat_tree_has_k_cubed_over_four_hosts_and_half_k_squared_paths() {
    for k in [4u32, 6, 8, 12] {
        let n = net(k);
        let half = k / 2;
        assert_eq!(n.hosts, k * k * k / 4);
        let per_pod = half * half;
        // Another pod: (k/2)^2 paths; same pod, other ToR: k/2; same ToR: 1.
        assert_eq!(n.routes.path_count(&n.ports, 0, per_pod), (half * half) as u64, "k={k}");
        assert_eq!(n.routes.path_count(&n.ports, 0, half), half as u64, "k={k}");
        assert_eq!(n.routes.path_count(&n.ports, 0, 1), 1, "k={k}");
        // Every source route between pods is distinct and has 6 hops.
        let mut seen = std::collections::HashSet::new();
        for id in 0..(half * half) as usize {
            let mut digits = id;
            let path = n.routes.walk(&n.ports, 0, n.hosts - 1, |_, m| {
                let d = digits % m;
                digits /= m;
                d
            });
            assert_eq!(path.len(), 6);
            seen.insert(path);
        }
        assert_eq!(seen.len(), (half * half) as usize);
    }
}

#[test]
fn ecmp_spreads_flows_evenly_over_cores() {
    // 2000 inter-pod flows from pod 0 to pod 1, each a short single-packet flow: count flows per core.
    let k = 8u32;
    let per_pod = (k / 2) * (k / 2);
    let flows: Vec<(u32, u32, u64, f64)> =
        (0..2000).map(|i| (i % per_pod, per_pod + (i * 7) % per_pod, 1000, i as f64 * 0.5)).collect();
    let f = flow_file("ecmp-spread", &flows);
    let s = spec(&format!(
        "seed = 2\nduration_us = 5000.0\n[topology]\nkind = \"fat_tree\"\nk = {k}\nhost_rate_gbps = 10.0\n\
         [transport]\nprotocol = \"dctcp\"\n[[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n",
        f.display()
    ));
    let out = run_checked(&s);
    let nodes = strs(&out.ports, "node");
    let peers = strs(&out.ports, "peer");
    let pkts = u64s(&out.ports, "tx_packets");
    // Data packets go down from a core into pod 1 (agg1_*): count per core.
    let mut per_core = std::collections::BTreeMap::new();
    for i in 0..nodes.len() {
        if nodes[i].starts_with("core") && peers[i].starts_with("agg1_") {
            *per_core.entry(nodes[i].clone()).or_insert(0u64) += pkts[i];
        }
    }
    assert_eq!(per_core.len(), (k * k / 4) as usize);
    let counts: Vec<f64> = per_core.values().map(|&c| c as f64).collect();
    let mean = counts.iter().sum::<f64>() / counts.len() as f64;
    assert!((mean - 2000.0 / 16.0).abs() < 1.0, "every data packet crosses one core: {counts:?}");
    for c in &counts {
        assert!((c - mean).abs() < 0.4 * mean, "uneven ECMP spread: {counts:?}");
    }
    // Chi-square against uniform, 15 degrees of freedom: 99.9th percentile is 37.7.
    let chi2: f64 = counts.iter().map(|c| (c - mean).powi(2) / mean).sum();
    assert!(chi2 < 37.7, "chi2 {chi2}: {counts:?}");
}
