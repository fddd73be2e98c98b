//! Swift's defining behaviour (Kumar et al., SIGCOMM 2020, sections 3.2-3.5): long flows sharing a
//! bottleneck converge to fair shares with the link busy, and the delay they see settles at the
//! target (base + hops x per_hop, plus flow scaling), so the bottleneck queue holds the target
//! minus the base RTT; a path with more switches settles at a delay higher by per_hop per extra
//! switch. Delay and target are read from the flow-state series (`delay_us`, `target_delay_us`).
mod common;
use common::*;
use dcnsim_core::api::RunOutput;
use dcnsim_core::record::table::{Column, Table};

const SETTLE_US: f64 = 5000.0;
/// Serialization of a 1500 B packet at 10 Gb/s, us.
const PACKET_US: f64 = 1.2;

/// The settled delay of `n` AIMD flows sits at the target or a little above it: each flow adds
/// `ai` = 1 packet per RTT and the cut comes an RTT after the queue crosses the target, so the
/// queue overshoots by up to about n packets.
fn assert_settles_at(n: u32, delay: f64, target: f64, what: &str) {
    let hi = target + n as f64 * PACKET_US;
    assert!(delay > target - 0.5 && delay < hi, "{what}: delay {delay} us, target {target} us (band up to {hi})");
}

/// `n` long flows from the left of a 10 Gb/s dumbbell to the right, staggered starts.
fn dumbbell(n: u32, transport: &str) -> RunOutput {
    let flows: Vec<(u32, u32, u64, f64)> = (0..n).map(|i| (i, n + i, 1_000_000_000, 1.0 + 23.0 * i as f64)).collect();
    let f = flow_file(&format!("swift-dumbbell-{n}-{}", transport.len()), &flows);
    run_checked(&spec(&format!(
        "seed = 5\nduration_us = 20000.0\n[measure]\nwarmup_us = {SETTLE_US}\n[topology]\nkind = \"dumbbell\"\n\
         hosts_per_side = {n}\nhost_rate_gbps = 10.0\nbottleneck_rate_gbps = 10.0\nhost_delay_us = 1.0\n\
         bottleneck_delay_us = 1.0\n[queue]\nlimit_packets = 400\n[transport]\nprotocol = \"swift\"\n{transport}\n\
         [trace]\nflows = [{}]\nstate_interval_us = 5.0\n[[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n",
        (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(", "),
        f.display()
    )))
}

fn cats(t: &Table, name: &str) -> Vec<String> {
    match t.get(name) {
        Some(Column::Cat { categories, codes }) => codes.iter().map(|&c| categories[c as usize].clone()).collect(),
        _ => panic!("column {name} is not categorical"),
    }
}

/// Mean of flow-state variable `name` over every traced flow after the settling time.
fn settled_mean(out: &RunOutput, name: &str) -> f64 {
    let t = &out.flow_state;
    let (time, value) = (u64s(t, "time_ps"), f64s(t, "value"));
    let var = cats(t, "variable");
    let v: Vec<f64> =
        (0..t.rows()).filter(|&i| var[i] == name && time[i] as f64 >= SETTLE_US * 1e6).map(|i| value[i]).collect();
    assert!(v.len() > 100, "too few `{name}` samples: {}", v.len());
    v.iter().sum::<f64>() / v.len() as f64
}

#[test]
fn long_flows_share_fairly_and_the_delay_settles_at_the_target() {
    for n in [2u32, 4, 8] {
        let out = dumbbell(n, "");
        let bytes: Vec<f64> = u64s(&out.flows, "window_bytes").iter().map(|&b| b as f64).collect();
        let j = jain(&bytes);
        assert!(j > 0.95, "{n} flows: Jain index {j}, bytes {bytes:?}");
        let (queue, util, drops) = bottleneck(&out);
        assert!(util > 0.95, "{n} flows: bottleneck utilization {util}");
        assert_eq!(drops, 0, "{n} flows: Swift keeps the queue far below the buffer");
        let (delay, target) = (settled_mean(&out, "delay_us"), settled_mean(&out, "target_delay_us"));
        eprintln!("{n} flows: delay {delay:.2} us, target {target:.2} us, queue {queue:.0} B, Jain {j:.4}");
        assert_settles_at(n, delay, target, &format!("{n} flows"));
    }
}

#[test]
fn without_flow_scaling_the_queue_holds_the_target_less_the_base_rtt() {
    // Target = 15 us + 2 switches x 1 us. Base RTT: a 1500 B packet over three 10 Gb/s links of
    // 1 us, and a 64 B ACK back (see `base_rtt`): 3 (1.2 + 1) + 3 (0.0512 + 1) = 9.75 us.
    let target = 17.0;
    let base = 3.0 * (1.2 + 1.0) + 3.0 * (64.0 * 8.0 / 10e3 + 1.0);
    for n in [2u32, 8] {
        let out = dumbbell(n, "fs_range_us = 0.0");
        let (queue, util, _) = bottleneck(&out);
        let queue_us = queue * 8.0 / 10e3;
        let delay = settled_mean(&out, "delay_us");
        eprintln!("{n} flows: queue {queue_us:.2} us, delay {delay:.2} us, base {base:.2} us");
        assert!(util > 0.95, "{n} flows: utilization {util}");
        assert!((settled_mean(&out, "target_delay_us") - target).abs() < 1e-9);
        assert_settles_at(n, delay, target, &format!("{n} flows"));
        // The delay Swift sees is the base RTT plus the bottleneck queue (no other queue builds).
        assert!(
            (queue_us - (delay - base)).abs() < 0.5,
            "{n} flows: queue {queue_us} us, delay - base {}",
            delay - base
        );
    }
}

/// `n` long flows into host 0 of a two-rack leaf-spine, from its own rack (one switch) or from the
/// other (three switches); the core is 4x faster, so the bottleneck is host 0's downlink.
fn incast(n: u32, cross_rack: bool, per_hop_us: f64) -> RunOutput {
    let first = if cross_rack { n + 1 } else { 1 };
    let flows: Vec<(u32, u32, u64, f64)> =
        (0..n).map(|i| (first + i, 0, 1_000_000_000, 1.0 + 23.0 * i as f64)).collect();
    let f = flow_file(&format!("swift-incast-{n}-{cross_rack}-{per_hop_us}"), &flows);
    run_checked(&spec(&format!(
        "seed = 5\nduration_us = 20000.0\n[measure]\nwarmup_us = {SETTLE_US}\n[topology]\nkind = \"leaf_spine\"\n\
         racks = 2\nhosts_per_rack = {}\nspines = 2\nhost_rate_gbps = 10.0\ncore_rate_gbps = 40.0\n\
         host_delay_us = 1.0\ncore_delay_us = 1.0\n[queue]\nlimit_packets = 400\n[transport]\nprotocol = \"swift\"\n\
         fs_range_us = 0.0\nper_hop_us = {per_hop_us}\n[trace]\nflows = [{}]\nstate_interval_us = 5.0\n\
         [[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n",
        n + 1,
        (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(", "),
        f.display()
    )))
}

#[test]
fn more_switches_settle_at_a_higher_delay_by_per_hop_each() {
    // At the default 1 us per switch the 2 us step hides inside the AIMD band (up to n packets,
    // 4.8 us here), so the step is measured at larger per-hop values, with 0 as the control.
    for per_hop in [0.0, 5.0, 10.0] {
        let near = incast(4, false, per_hop);
        let far = incast(4, true, per_hop);
        let (dn, df) = (settled_mean(&near, "delay_us"), settled_mean(&far, "delay_us"));
        let (tn, tf) = (settled_mean(&near, "target_delay_us"), settled_mean(&far, "target_delay_us"));
        eprintln!("per_hop {per_hop} us: one switch {dn:.2} us (target {tn}), three {df:.2} us (target {tf})");
        assert!((tn - (15.0 + per_hop)).abs() < 1e-9 && (tf - (15.0 + 3.0 * per_hop)).abs() < 1e-9);
        assert_settles_at(4, dn, tn, "one switch");
        assert_settles_at(4, df, tf, "three switches");
        let rise = df - dn;
        assert!(
            (rise - 2.0 * per_hop).abs() < 2.5,
            "per_hop {per_hop} us: delay rises by {rise} us, not ~{}",
            2.0 * per_hop
        );
    }
}

#[test]
fn bad_swift_keys_are_spec_errors_naming_the_field() {
    let base = "duration_us = 100.0\n[topology]\nkind = \"single_switch\"\nhosts = 2\nhost_rate_gbps = 10.0\n\
                host_delay_us = 1.0\n[[workload]]\nkind = \"incast\"\nsenders = 1\nsize_bytes = 1000\nat_us = 1.0\n\
                receiver = 0\n[transport]\nprotocol = \"swift\"\n";
    let cases = [
        ("slow_start = false", "transport.slow_start", "no slow start"),
        ("beta = 1.5", "transport.beta", "(0, 1]"),
        ("max_mdf = 1.0", "transport.max_mdf", "(0, 1)"),
        ("fs_max_window_packets = 0.05", "transport.fs_max_window_packets", "must exceed"),
        ("min_window_packets = 0.0", "transport.min_window_packets", "(0, 1]"),
        ("per_hop_us = -1.0", "transport.per_hop_us", "[0, 1e4]"),
        ("base_target_us = 0.0", "transport.base_target_us", "(0, 1e6]"),
        ("min_cwnd_packets = 0.01", "transport.min_cwnd_packets", "renamed to `min_window_packets`"),
        ("fs_min_cwnd_packets = 0.1", "transport.fs_min_cwnd_packets", "renamed to `fs_min_window_packets`"),
        ("fs_max_cwnd_packets = 100.0", "transport.fs_max_cwnd_packets", "renamed to `fs_max_window_packets`"),
    ];
    let failures = spec_error_mismatches(
        cases.map(|(line, field, msg)| (line.to_string(), spec(&format!("{base}{line}\n")), field.into(), msg.into())),
    );
    assert!(failures.is_empty(), "{failures:#?}");
}

/// 32 long flows into host 0 of a single 10 Gb/s switch, target 10 us + flow scaling up to
/// `fs_range_us`, base RTT ~2.9 us: the fair window is under one packet. Returns (mean window
/// bytes, mean delay us, Jain index of the bytes, utilization of host 0's downlink).
fn many_into_one(fs_range_us: f64) -> (f64, f64, f64, f64) {
    let n = 32u32;
    let flows: Vec<(u32, u32, u64, f64)> = (1..=n).map(|i| (i, 0, 1_000_000_000, 1.0 + 3.0 * i as f64)).collect();
    let f = flow_file(&format!("swift-many-{fs_range_us}"), &flows);
    let out = run_checked(&spec(&format!(
        "seed = 5\nduration_us = 20000.0\n[measure]\nwarmup_us = {SETTLE_US}\n[topology]\nkind = \"single_switch\"\n\
         hosts = {}\nhost_rate_gbps = 10.0\nhost_delay_us = 0.1\n[queue]\nlimit_packets = 400\n[transport]\n\
         protocol = \"swift\"\nbase_target_us = 10.0\nper_hop_us = 0.0\nfs_range_us = {fs_range_us}\n[trace]\n\
         flows = [{}]\nstate_interval_us = 5.0\n[[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n",
        n + 1,
        (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(", "),
        f.display()
    )));
    assert_eq!(u64s(&out.ports, "drops").iter().sum::<u64>(), 0);
    let bytes: Vec<f64> = u64s(&out.flows, "window_bytes").iter().map(|&b| b as f64).collect();
    let (nodes, peers) = (strs(&out.ports, "node"), strs(&out.ports, "peer"));
    let down = (0..nodes.len()).find(|&i| nodes[i] == "switch0" && peers[i] == "host0").unwrap();
    let r = (
        settled_mean(&out, "cwnd_bytes"),
        settled_mean(&out, "delay_us"),
        jain(&bytes),
        f64s(&out.ports, "utilization")[down],
    );
    eprintln!(
        "{n} flows, fs_range {fs_range_us} us: window {:.0} B, delay {:.2} us, Jain {:.4}, utilization {:.4}",
        r.0, r.1, r.2, r.3
    );
    r
}

#[test]
fn flow_scaling_keeps_sub_packet_windows_fair() {
    // Section 3.5: at large fan-in the windows fall below one packet, where AIMD alone is unfair;
    // the flow-scaling target (higher for smaller windows) restores fairness.
    let mss = 1500.0 - 64.0; // the default mtu_bytes less header_bytes
    let (cwnd, delay, j, util) = many_into_one(20.0);
    assert!(cwnd < mss, "mean window {cwnd} B is not below one packet (paced)");
    assert!(j > 0.95, "with flow scaling: Jain index {j}");
    assert!(util > 0.95, "utilization {util}");
    assert!(delay < 10.0 + 20.0 + 32.0 * PACKET_US, "delay {delay} us");
    let (cwnd0, _, j0, util0) = many_into_one(0.0);
    assert!(cwnd0 < mss && util0 > 0.95, "window {cwnd0} B, utilization {util0}");
    assert!(j0 < 0.8, "without flow scaling sub-packet windows should be unfair: Jain {j0}");
}
