//! A lone flow's FCT equals the exact ideal, to the picosecond, on every topology and for sizes
//! from one packet to many BDPs. The initial window covers the BDP so the sender never stalls.
mod common;
use common::*;

const TOPOLOGIES: &[(&str, &str, u32)] = &[
    ("single_switch", "kind = \"single_switch\"\nhosts = 4\nhost_rate_gbps = 10.0\nhost_delay_us = 1.0", 3),
    ("dumbbell", "kind = \"dumbbell\"\nhosts_per_side = 2\nhost_rate_gbps = 10.0\nbottleneck_rate_gbps = 10.0\nhost_delay_us = 1.0\nbottleneck_delay_us = 2.0", 3),
    ("leaf_spine", "kind = \"leaf_spine\"\nracks = 3\nhosts_per_rack = 2\nspines = 2\nhost_rate_gbps = 100.0\ncore_rate_gbps = 400.0\nhost_delay_us = 1.25\ncore_delay_us = 0.5", 5),
    ("fat_tree", "kind = \"fat_tree\"\nk = 4\nhost_rate_gbps = 10.0\ncore_rate_gbps = 40.0\nhost_delay_us = 1.0\ncore_delay_us = 1.0\n", 15),
];

fn lone(topo: &str, dst: u32, size: u64, protocol: &str, latency: f64) -> (u64, u64) {
    lone_with(topo, dst, size, protocol, &format!("switch_latency_us = {latency}"))
}

fn lone_with(topo: &str, dst: u32, size: u64, protocol: &str, net: &str) -> (u64, u64) {
    // The file name must differ between any two calls that can run at once (tests are threads).
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (topo, dst, size, protocol, net).hash(&mut h);
    let f = flow_file(&format!("lone-{:016x}", h.finish()), &[(0, dst, size, 3.0)]);
    let s = spec(&format!(
        "seed = 1\nduration_us = 100000.0\n[net]\n{net}\n[topology]\n{topo}\n[queue]\necn = \"step\"\necn_k_packets = 65\n\
         [transport]\nprotocol = \"{protocol}\"\ninitial_window_packets = 1000\n[[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n",
        f.display()
    ));
    let out = run_checked(&s);
    let fct = opt_u64s(&out.flows, "fct_ps")[0].expect("the lone flow finishes");
    (fct, u64s(&out.flows, "ideal_fct_ps")[0])
}

#[test]
fn lone_flow_fct_is_ideal_on_every_topology() {
    for &(name, topo, far) in TOPOLOGIES {
        for size in [1u64, 1000, 1436, 1437, 5 * 1436 + 7, 2_000_000] {
            for dst in [1, far] {
                let (fct, ideal) = lone(topo, dst, size, "dctcp", 0.0);
                assert_eq!(fct, ideal, "{name}: {size} B to host {dst}");
            }
        }
    }
}

#[test]
fn lone_flow_ideal_includes_switch_latency_and_newreno_matches_too() {
    let (name, topo, far) = TOPOLOGIES[3];
    let (fct0, ideal0) = lone(topo, far, 100_000, "newreno", 0.0);
    let (fct1, ideal1) = lone(topo, far, 100_000, "newreno", 0.5);
    assert_eq!(fct0, ideal0, "{name}");
    assert_eq!(fct1, ideal1, "{name}");
    // Five switches on the inter-pod path, 0.5 us each.
    assert_eq!(ideal1 - ideal0, 5 * 500_000);
}

#[test]
fn one_packet_ideal_is_hand_computed() {
    // single switch, 10 Gb/s, 1 us links: 1000 B payload + 64 B header, two hops.
    let (_, topo, _) = TOPOLOGIES[0];
    let (fct, ideal) = lone(topo, 1, 1000, "dctcp", 0.0);
    let ser = 1064 * 800; // 0.8 ns per byte at 10 Gb/s
    assert_eq!(ideal, 2 * ser + 2 * 1_000_000);
    assert_eq!(fct, ideal);
}

#[test]
fn paced_nic_lone_flow_is_ideal_and_slower() {
    let (_, topo, far) = TOPOLOGIES[2];
    let (fast, fast_ideal) = lone_with(topo, far, 1_000_000, "dctcp", "");
    let (paced, paced_ideal) = lone_with(topo, far, 1_000_000, "dctcp", "nic_pacing_gbps = 40.0");
    assert_eq!(fast, fast_ideal);
    assert_eq!(paced, paced_ideal);
    // 1 MB at 40 Gb/s instead of 100 Gb/s: about 120 us more.
    let extra = paced as f64 - fast as f64;
    assert!((extra - 1_000_000.0 * 1500.0 / 1436.0 * 8.0 * (1.0 / 40e9 - 1.0 / 100e9) * 1e12).abs() < 1e6, "{extra}");
}

#[test]
fn a_degraded_link_sets_the_ideal_and_the_fct() {
    // The dumbbell's bottleneck overridden to 1 Gb/s: the lone flow is exactly as fast as the
    // 1 Gb/s pipeline allows, and ten times slower than at 10 Gb/s.
    let (_, topo, far) = TOPOLOGIES[1];
    let (fast, fast_ideal) = lone(topo, far, 1_000_000, "dctcp", 0.0);
    let slow_topo = format!("{topo}\n[[topology.link_overrides]]\na = \"left\"\nb = \"right\"\nrate_gbps = 1.0");
    let (slow, slow_ideal) = lone(&slow_topo, far, 1_000_000, "dctcp", 0.0);
    assert_eq!(fast, fast_ideal);
    assert_eq!(slow, slow_ideal);
    assert!((slow as f64 / fast as f64) > 8.0, "{slow} vs {fast}");
}

#[test]
fn a_one_way_override_slows_only_its_direction() {
    // Data flows left -> right; the ACKs' direction alone at 1 Gb/s changes nothing (the window
    // covers the flow), the data's direction alone is as slow as the whole link at 1 Gb/s.
    let (_, topo, far) = TOPOLOGIES[1];
    let one_way = |a: &str, b: &str| {
        format!("{topo}\n[[topology.link_overrides]]\na = \"{a}\"\nb = \"{b}\"\nrate_gbps = 1.0\none_way = true")
    };
    let both = format!("{topo}\n[[topology.link_overrides]]\na = \"left\"\nb = \"right\"\nrate_gbps = 1.0");
    let (fast, _) = lone(topo, far, 1_000_000, "dctcp", 0.0);
    let (slow, _) = lone(&both, far, 1_000_000, "dctcp", 0.0);
    let (acks_slow, ideal) = lone(&one_way("right", "left"), far, 1_000_000, "dctcp", 0.0);
    assert_eq!((acks_slow, ideal), (fast, fast));
    let (data_slow, ideal) = lone(&one_way("left", "right"), far, 1_000_000, "dctcp", 0.0);
    assert_eq!((data_slow, ideal), (slow, slow));
}

#[test]
fn lone_flow_fct_is_ideal_at_the_rate_limits() {
    use dcnsim_core::limits::{MAX_PACKET_BYTES, MAX_RATE_GBPS, MIN_MTU_BYTES, MIN_RATE_GBPS};
    // The slowest rate with the largest packets (the largest fixed-point serialization time, half
    // a second per packet) and the fastest rate with the smallest: exact, no overflow. Timeouts
    // at their maximum so that no spurious retransmission muddles the slow case.
    let cases =
        [(MIN_RATE_GBPS, MAX_PACKET_BYTES, 64, 200_000, 1e7), (MAX_RATE_GBPS, MIN_MTU_BYTES, 32, 20_000, 100.0)];
    for (gbps, mtu, header, size, duration_us) in cases {
        let f = flow_file(&format!("lone-limits-{mtu}"), &[(0, 1, size, 3.0)]);
        let s = spec(&format!(
            "seed = 1\nduration_us = {duration_us}\n[net]\nmtu_bytes = {mtu}\nheader_bytes = {header}\n\
             control_bytes = {header}\n[topology]\nkind = \"single_switch\"\nhosts = 2\nhost_rate_gbps = {gbps}\n\
             host_delay_us = 1.0\n[queue]\nlimit_packets = 10000\n[transport]\nprotocol = \"newreno\"\n\
             initial_window_packets = 1000\nmin_rto_us = 1e7\ninitial_rto_us = 1e7\n[[workload]]\nkind = \"flow_list\"\n\
             path = \"{}\"\n",
            f.display()
        ));
        let out = run_checked(&s);
        let fct = opt_u64s(&out.flows, "fct_ps")[0].expect("the lone flow finishes");
        assert_eq!(fct, u64s(&out.flows, "ideal_fct_ps")[0], "{gbps} Gb/s, {mtu} B packets");
    }
}

#[test]
fn an_os_overhead_read_from_the_spec_adds_exactly_itself_to_a_window_protocols_lone_flow() {
    // `os_overhead_us` (the Dart paper's kernel cost per transfer) read from the spec: the message
    // enters the stack that much later, and the FCT, counted from its arrival, is the ideal plus it.
    let (_, topo, far) = TOPOLOGIES[3];
    for protocol in ["dctcp", "newreno", "dx"] {
        for (size, os) in [(8000u64, 24.0), (300_000, 0.0), (300_000, 180.5)] {
            let f = flow_file(&format!("lone-os-{protocol}-{size}-{os}"), &[(0, far, size, 3.0)]);
            let s = spec(&format!(
                "seed = 1\nduration_us = 100000.0\n[topology]\n{topo}\n[queue]\necn = \"step\"\necn_k_packets = 65\n\
                 [transport]\nprotocol = \"{protocol}\"\ninitial_window_packets = 1000\nos_overhead_us = {os}\n\
                 [[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n",
                f.display()
            ));
            let out = run_checked(&s);
            let fct = opt_u64s(&out.flows, "fct_ps")[0].expect("the lone flow finishes");
            let ideal = u64s(&out.flows, "ideal_fct_ps")[0];
            assert_eq!(fct, ideal + (os * 1e6) as u64, "{protocol}: {size} B with {os} us");
        }
    }
}

#[test]
fn a_handshake_read_from_the_spec_adds_exactly_one_header_round_trip_to_a_window_protocols_lone_flow() {
    // `connection_setup = "handshake"`: a SYN and a SYN-ACK (64 B control frames) cross the two
    // 10 Gb/s hops each way before the first data packet, so the FCT is the ideal plus the base RTT
    // with the data packet's serialization swapped for a header's on the two forward hops.
    let (_, topo, far) = TOPOLOGIES[0];
    let tx = |bytes: u64| bytes * 800; // ps at 10 Gb/s
    for protocol in ["dctcp", "newreno", "dx", "swift"] {
        for size in [1u64, 1436, 8000, 300_000] {
            let f = flow_file(&format!("lone-syn-{protocol}-{size}"), &[(0, far, size, 3.0)]);
            let s = spec(&format!(
                "seed = 1\nduration_us = 100000.0\n[topology]\n{topo}\n[queue]\necn = \"step\"\necn_k_packets = 65\n\
                 [transport]\nprotocol = \"{protocol}\"\ninitial_window_packets = 1000\nconnection_setup = \"handshake\"\n\
                 [[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n",
                f.display()
            ));
            let out = run_checked(&s);
            let fct = opt_u64s(&out.flows, "fct_ps")[0].expect("the lone flow finishes");
            let ideal = u64s(&out.flows, "ideal_fct_ps")[0];
            let header_rtt = out.summary["base_rtt_ps"].as_u64().unwrap() - 2 * tx(1500) + 2 * tx(64);
            assert_eq!(fct, ideal + header_rtt, "{protocol}: {size} B");
            assert_eq!(out.summary["transport"]["handshakes"].as_u64(), Some(1), "{protocol}");
            assert_eq!(out.summary["transport"]["syn_retransmits"].as_u64(), Some(0), "{protocol}");
        }
    }
}
