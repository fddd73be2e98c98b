//! The RDMA congestion controls on small fabrics, each held to its paper's effect: two long flows
//! converge to a fair share (read from the flow state series: `rate_gbps` over time), DCQCN cuts
//! its rates on an incast and bounds the queue, TIMELY keeps the RTT between
//! T_low and T_high, rate-based DCTCP cuts by alpha / 2 and holds the queue near K; every one runs
//! with IRN recovery as well; bad keys name the field.
mod common;
use common::*;
use dcnsim_core::api::RunOutput;
use dcnsim_core::record::table::{Column, Table};

/// The reference's DCQCN/TIMELY marking at 10 Gb/s (Kmin 100 KB, Kmax 400 KB x rate/25G, Pmax 0.2,
/// at egress dequeue).
const RED_10G: &str =
    "ecn = \"red\"\necn_at = \"dequeue\"\nred_min_bytes = 40000\nred_max_bytes = 160000\nred_pmax = 0.2";
/// The same at 100 Gb/s (400 KB, 1600 KB).
const RED_100G: &str =
    "ecn = \"red\"\necn_at = \"dequeue\"\nred_min_bytes = 400000\nred_max_bytes = 1600000\nred_pmax = 0.2";
/// The reference's DCTCP marking at 10 Gb/s (K = 30 KB, Pmax 1).
const STEP_10G: &str = "ecn = \"step\"\necn_k_bytes = 30000";

fn cats(t: &Table, name: &str) -> Vec<String> {
    match t.get(name) {
        Some(Column::Cat { categories, codes }) => codes.iter().map(|&c| categories[c as usize].clone()).collect(),
        other => panic!("column {name}: {other:?}"),
    }
}

/// (time in us, value) of one variable of one flow's state series.
fn series(out: &RunOutput, flow: u64, name: &str) -> Vec<(f64, f64)> {
    let t = &out.flow_state;
    let (time, fl, var, value) = (u64s(t, "time_ps"), u64s(t, "flow_id"), cats(t, "variable"), f64s(t, "value"));
    (0..t.rows()).filter(|&i| fl[i] == flow && var[i] == name).map(|i| (time[i] as f64 / 1e6, value[i])).collect()
}

/// Mean of a series over [from, to] us.
fn mean_between(s: &[(f64, f64)], from: f64, to: f64) -> f64 {
    let v: Vec<f64> = s.iter().filter(|(t, _)| *t >= from && *t <= to).map(|p| p.1).collect();
    assert!(!v.is_empty(), "no samples in [{from}, {to}]");
    v.iter().sum::<f64>() / v.len() as f64
}

/// Switches stamp INT (HPCC): a table after `[queue]`'s keys.
const INT: &str = "[switch]\nint = true";

/// `flows` (src, dst, bytes, start us) on one 10 Gb/s switch with `hosts` hosts, every flow traced.
fn run(
    protocol: &str,
    queue: &str,
    transport: &str,
    hosts: u32,
    flows: &[(u32, u32, u64, f64)],
    duration_us: f64,
    warmup_us: f64,
) -> RunOutput {
    run_at(10.0, protocol, queue, transport, hosts, flows, duration_us, warmup_us)
}

/// As [`run`], with hosts at `gbps`.
#[allow(clippy::too_many_arguments)]
fn run_at(
    gbps: f64,
    protocol: &str,
    queue: &str,
    transport: &str,
    hosts: u32,
    flows: &[(u32, u32, u64, f64)],
    duration_us: f64,
    warmup_us: f64,
) -> RunOutput {
    let tag = format!("rdma-{protocol}-{gbps}-{}-{:x}", flows.len(), (queue.len() * 131 + transport.len()) as u64);
    let f = flow_file(&tag, flows);
    let traced: Vec<String> = (0..flows.len()).map(|i| i.to_string()).collect();
    run_checked(&spec(&format!(
        "seed = 5\nduration_us = {duration_us}\n[measure]\nwarmup_us = {warmup_us}\n\
         [topology]\nkind = \"single_switch\"\nhosts = {hosts}\nhost_rate_gbps = {gbps}\nhost_delay_us = 1.0\n\
         [queue]\nlimit_bytes = 4000000\n{queue}\n[transport]\nprotocol = \"{protocol}\"\n{transport}\n\
         [[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n[trace]\nflows = [{}]\nstate_interval_us = 10.0\n",
        f.display(),
        traced.join(", ")
    )))
}

/// The switch port towards host 0: (max bytes, mean bytes, utilization).
fn port_to_host0(out: &RunOutput) -> (u64, f64, f64) {
    let (nodes, peers) = (strs(&out.ports, "node"), strs(&out.ports, "peer"));
    let i = (0..nodes.len()).find(|&i| nodes[i] == "switch0" && peers[i] == "host0").expect("port to host0");
    (u64s(&out.ports, "max_bytes")[i], f64s(&out.ports, "mean_bytes")[i], f64s(&out.ports, "utilization")[i])
}

fn counter(out: &RunOutput, name: &str) -> u64 {
    out.summary["transport"][name].as_u64().unwrap_or_else(|| panic!("counter {name}: {}", out.summary["transport"]))
}

/// Two long flows into host 0, the second 1 ms after the first; measured over the last 10 ms.
fn two_flows(gbps: f64, protocol: &str, queue: &str) -> RunOutput {
    let flows = [(1, 0, 1_000_000_000_000, 1.0), (2, 0, 1_000_000_000_000, 1001.0)];
    run_at(gbps, protocol, queue, "", 3, &flows, 20_000.0, 10_000.0)
}

#[test]
fn two_flows_converge_to_a_fair_share() {
    // (protocol, host rate, queue, how far each flow's mean rate may be from half of line rate over
    // the last 10 ms, as a fraction). DCQCN runs at 100 Gb/s, where the reference's timers, minimum
    // rate and marking band are set (at 10 Gb/s its flows settle 15% apart).
    for (p, gbps, queue, tolerance) in
        [("dcqcn", 100.0, RED_100G, 0.1), ("timely", 10.0, "", 0.25), ("dctcp_rate", 10.0, STEP_10G, 0.1)]
    {
        let out = two_flows(gbps, p, queue);
        let bytes: Vec<f64> = u64s(&out.flows, "window_bytes").iter().map(|&b| b as f64).collect();
        let j = jain(&bytes);
        let (_, _, util) = port_to_host0(&out);
        eprintln!("{p}: Jain {j:.4}, bottleneck utilization {util:.3}");
        assert!(j > 0.99, "{p}: Jain index of the last 10 ms {j:.4}, bytes {bytes:?}");
        for f in 0..2 {
            let rate = series(&out, f, "rate_gbps");
            assert_eq!(rate[0].1, gbps, "{p}: flow {f} starts at line rate");
            if p != "dctcp_rate" {
                // dctcp_rate is window-bound here (two 1-BDP windows queue less than K): its rate
                // stays at line rate and the window shares the link.
                let m = mean_between(&rate, 10_000.0, 20_000.0);
                eprintln!("{p} flow {f}: mean rate {m:.3} Gb/s");
                assert!((m / (gbps / 2.0) - 1.0).abs() < tolerance, "{p}: flow {f} mean rate {m:.3} Gb/s");
            }
        }
        assert!(util > if p == "timely" { 0.8 } else { 0.9 }, "{p}: bottleneck utilization {util}");
    }
}

/// `n` long flows into host 0 from hosts 1..=n, all at time 1 us; port statistics after `warmup_us`.
fn incast(protocol: &str, queue: &str, transport: &str, n: u32, duration_us: f64, warmup_us: f64) -> RunOutput {
    let flows: Vec<_> = (1..=n).map(|s| (s, 0, 1_000_000_000, 1.0)).collect();
    run(protocol, queue, transport, n + 1, &flows, duration_us, warmup_us)
}

#[test]
fn dcqcn_cuts_its_rates_on_an_incast_and_bounds_the_queue() {
    let out = incast("dcqcn", RED_10G, "", 8, 5000.0, 0.0);
    let (max_q, mean_q, util) = port_to_host0(&out);
    let echoes = counter(&out, "ecn_echoes_received");
    eprintln!("dcqcn incast: max queue {max_q} B, mean {mean_q:.0} B, utilization {util:.3}, {echoes} CNPs");
    for f in 0..8 {
        let rate = series(&out, f, "rate_gbps");
        let low = rate.iter().map(|p| p.1).fold(f64::MAX, f64::min);
        let late = mean_between(&rate, 2500.0, 5000.0);
        // Eight flows share 10 Gb/s: each was cut well below line rate and settles near 1.25.
        assert!(low < 2.5, "flow {f}: lowest rate {low} Gb/s");
        assert!(late > 0.6 && late < 2.5, "flow {f}: mean rate {late:.3} Gb/s over the last 2.5 ms");
        let alpha = series(&out, f, "alpha");
        assert!(alpha.iter().any(|p| p.1 < 1.0), "flow {f}: alpha never updated");
    }
    // Without marks the same incast fills the 4 MB buffer; with them the queue stays a fraction of it.
    assert!(util > 0.95, "utilization {util}");
    assert_eq!(u64s(&out.ports, "drops").iter().sum::<u64>(), 0);
    let blind = incast("dcqcn", "", "", 8, 5000.0, 0.0);
    let (blind_max, blind_mean, _) = port_to_host0(&blind);
    eprintln!("without ECN: max queue {blind_max} B, mean {blind_mean:.0} B");
    assert_eq!(counter(&blind, "ecn_echoes_received"), 0);
    assert!(blind_max > 3_500_000, "without marks the queue grows to the buffer: max {blind_max} B");
    assert!(max_q * 3 < blind_max && mean_q * 3.0 < blind_mean, "max {max_q} B, mean {mean_q} B");
    assert!(series(&blind, 0, "rate_gbps").iter().all(|p| p.1 == 10.0), "without marks no cut");
}

#[test]
fn dcqcn_cnp_coalescing_sends_at_most_one_echo_per_interval() {
    let every = incast("dcqcn", RED_10G, "", 4, 2000.0, 0.0);
    let coalesced = incast("dcqcn", RED_10G, "cnp_interval_us = 50.0", 4, 2000.0, 0.0);
    let (a, b) = (counter(&every, "ecn_echoes_received"), counter(&coalesced, "ecn_echoes_received"));
    eprintln!("CNPs: {a} per marked packet, {b} with a 50 us interval");
    // 4 flows for 2 ms: at most 40 intervals each (the first echo at any time, then one per 50 us).
    assert!(b > 0 && b <= 4 * 41, "{b} echoes with coalescing");
    assert!(a > 2 * b, "{a} echoes without coalescing vs {b} with");
}

#[test]
fn timely_keeps_the_rtt_between_t_low_and_t_high() {
    let out = incast("timely", "", "", 8, 10_000.0, 2000.0);
    let (max_q, mean_q, util) = port_to_host0(&out);
    let (t_low, t_high) = (50.0, 500.0);
    let mut above_low = 0;
    let mut samples = 0;
    for f in 0..8 {
        let rtt: Vec<f64> = series(&out, f, "rtt_us").into_iter().filter(|p| p.0 > 2000.0).map(|p| p.1).collect();
        let max = rtt.iter().cloned().fold(0.0, f64::max);
        assert!(max < t_high, "flow {f}: RTT up to {max} us");
        above_low += rtt.iter().filter(|&&r| r >= t_low).count();
        samples += rtt.len();
    }
    eprintln!(
        "timely incast: {above_low} of {samples} RTT samples at or above T_low; queue max {max_q} B, \
         mean {mean_q:.0} B, utilization {util:.3}"
    );
    // Below T_low the rate only grows, so the queue is pushed up to T_low again and again.
    assert!(above_low * 10 > samples, "{above_low} of {samples} samples reach T_low");
    // The queue's delay stays below T_high, and on average it sits near T_low.
    let delay_us = |bytes: f64| bytes * 8.0 / 10e9 * 1e6;
    assert!(delay_us(max_q as f64) < t_high, "max queue {max_q} B");
    let mean = delay_us(mean_q);
    assert!(mean > 0.5 * t_low && mean < 0.5 * t_high, "mean queueing delay {mean} us");
    assert!(util > 0.8, "utilization {util}");
}

#[test]
fn dctcp_rate_cuts_by_half_alpha_and_holds_the_queue_near_k() {
    // Eight 1-BDP windows overfill K = 30 KB: marks, alpha, rate (and window) cuts.
    let out = incast("dctcp_rate", STEP_10G, "", 8, 5000.0, 1000.0);
    let (max_q, mean_q, util) = port_to_host0(&out);
    eprintln!("dctcp_rate incast: max queue {max_q} B, mean {mean_q:.0} B, utilization {util:.3}");
    for f in 0..8 {
        let rate = series(&out, f, "rate_gbps");
        let low = rate.iter().map(|p| p.1).fold(f64::MAX, f64::min);
        let late = mean_between(&rate, 2500.0, 5000.0);
        let alpha = mean_between(&series(&out, f, "alpha"), 2500.0, 5000.0);
        eprintln!("flow {f}: lowest rate {low:.3}, mean {late:.3} Gb/s, alpha {alpha:.4}");
        assert!(low < 5.0, "flow {f}: lowest rate {low} Gb/s: never cut by a meaningful alpha");
        assert!(alpha > 0.01 && alpha < 0.5, "flow {f}: alpha {alpha}");
    }
    assert!(mean_q > 10_000.0 && mean_q < 60_000.0, "mean queue {mean_q} B, K = 30000 B");
    assert!(util > 0.95, "utilization {util}");
}

/// Eight flows on a lossy leaf-spine (1% loss on every link), with `recovery` and the protocol's
/// marking: (every byte delivered, retransmissions).
fn lossy_run(protocol: &str, recovery: &str) -> (Vec<String>, u64) {
    let int = if protocol == "hpcc" { INT } else { "" };
    let flows: Vec<_> = (0..8u32).map(|i| (i % 6, (i + 3) % 6, 300_000 + 7919 * i as u64, 1.0 + i as f64)).collect();
    let f = flow_file(&format!("rdma-lossy-{protocol}-{recovery}"), &flows);
    let out = run_checked(&spec(&format!(
        "seed = 8\nduration_us = 2000000.0\n[topology]\nkind = \"leaf_spine\"\nracks = 2\nhosts_per_rack = 3\n\
         spines = 2\nhost_rate_gbps = 10.0\ncore_rate_gbps = 40.0\nhost_delay_us = 1.0\ncore_delay_us = 1.0\n\
         loss_probability = 0.01\n[queue]\nlimit_bytes = 1000000\n{RED_10G}\n{int}\n[transport]\n\
         protocol = \"{protocol}\"\n\
         recovery = \"{recovery}\"\n\
         [[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n",
        f.display()
    )));
    let (ends, sizes, got) =
        (opt_u64s(&out.flows, "end_ps"), u64s(&out.flows, "size_bytes"), u64s(&out.flows, "window_bytes"));
    let missing = (0..ends.len())
        .filter(|&i| ends[i].is_none() || got[i] != sizes[i])
        .map(|i| format!("{protocol}/{recovery}: flow {i} got {} of {} bytes", got[i], sizes[i]))
        .collect();
    (missing, counter(&out, "retransmitted_packets"))
}

#[test]
fn every_rdma_protocol_runs_with_irn_recovery_and_resends_less() {
    for p in ["dcqcn", "timely", "dctcp_rate", "hpcc"] {
        let (gbn_missing, gbn) = lossy_run(p, "go_back_n");
        let (irn_missing, irn) = lossy_run(p, "irn");
        assert!(gbn_missing.is_empty() && irn_missing.is_empty(), "{gbn_missing:?} {irn_missing:?}");
        eprintln!("{p}: {gbn} retransmissions with go-back-N, {irn} with IRN");
        assert!(irn > 0 && irn * 3 < gbn, "{p}: IRN resent {irn}, go-back-N {gbn}");
    }
}

#[test]
fn bad_keys_name_the_field() {
    let base = |protocol: &str, key: &str| {
        spec(&format!(
            "seed = 1\nduration_us = 10.0\n[topology]\nkind = \"single_switch\"\nhosts = 3\nhost_rate_gbps = 10.0\n\
             [transport]\nprotocol = \"{protocol}\"\n{key}\n[[workload]]\nkind = \"incast\"\nsenders = 2\n\
             size_bytes = 1000\nat_us = 0.0\n"
        ))
    };
    let cases = [
        ("dcqcn", "g = 0.0", "g", "(0, 1]"),
        ("dcqcn", "rate_decrease_interval_us = 0.0", "rate_decrease_interval_us", "(0, 1000000]"),
        ("dcqcn", "first_cnp_rate_fraction = 1.5", "first_cnp_rate_fraction", "(0, 1]"),
        ("dcqcn", "ai_rate_gbps = -1.0", "ai_rate_gbps", "Gb/s, got -1"),
        ("dcqcn", "byte_counter_bytes = 10", "byte_counter_bytes", "at least 64"),
        ("dcqcn", "cnp_interval_us = -5.0", "cnp_interval_us", "[0, 1000000]"),
        ("timely", "t_low_us = 600.0", "t_high_us", "above t_low_us"),
        ("timely", "beta = 2.0", "beta", "(0, 1]"),
        ("timely", "min_rate_gbps = 0.0", "min_rate_gbps", "Gb/s, got 0"),
        ("dctcp_rate", "initial_alpha = 2.0", "initial_alpha", "[0, 1]"),
        ("dctcp_rate", "recovery = \"sack\"", "recovery", "go_back_n"),
        ("timely", "protocl = 1", "protocl", ""),
    ];
    let failures = spec_error_mismatches(cases.iter().map(|(p, key, field, frag)| {
        (format!("{p}: {key}"), base(p, key), format!("transport.{field}"), frag.to_string())
    }));
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn hpcc_converges_to_a_fair_share_at_eta_with_an_empty_queue() {
    // The paper's setting: 100 Gb/s. A lone flow settles at eta = 95% of line rate; when a second
    // joins, both settle at half of that within a few RTTs; the queue stays near empty.
    let flows = [(1, 0, 10_000_000_000, 1.0), (2, 0, 10_000_000_000, 1001.0)];
    let out = run_at(100.0, "hpcc", INT, "", 3, &flows, 5000.0, 2000.0);
    let (max_q, mean_q, util) = port_to_host0(&out);
    let alone = mean_between(&series(&out, 0, "rate_gbps"), 200.0, 1000.0);
    eprintln!("hpcc: alone {alone:.3} Gb/s; queue max {max_q} B, mean {mean_q:.0} B; utilization {util:.3}");
    assert!((alone - 95.0).abs() < 0.5, "a lone flow at {alone} Gb/s, eta x line = 95");
    for f in 0..2 {
        let m = mean_between(&series(&out, f, "rate_gbps"), 2000.0, 5000.0);
        eprintln!("hpcc flow {f}: mean rate {m:.3} Gb/s");
        assert!((m - 47.5).abs() < 2.5, "flow {f}: mean rate {m} Gb/s, fair share 47.5");
    }
    let bytes: Vec<f64> = u64s(&out.flows, "window_bytes").iter().map(|&b| b as f64).collect();
    assert!(jain(&bytes) > 0.99, "bytes {bytes:?}");
    assert!((util - 0.95).abs() < 0.02, "utilization {util}, eta 0.95");
    // Less than one 1500-byte packet queued on average.
    assert!(mean_q < 1500.0, "mean queue {mean_q} B");
}

#[test]
fn hpcc_drains_an_incast_and_keeps_the_bottleneck_queue_near_empty() {
    // Eight flows at line rate into one 100 Gb/s port: the first RTT queues several BDPs; HPCC
    // (INT) drains it within a few RTTs and then holds the queue near zero, where DCQCN (ECN at
    // dequeue, the reference's 400/1600 KB band) on the same incast keeps hundreds of KB.
    let flows: Vec<_> = (1..=8).map(|s| (s, 0, 10_000_000_000, 1.0)).collect();
    let hpcc = run_at(100.0, "hpcc", INT, "", 9, &flows, 2000.0, 500.0);
    let (max_q, mean_q, util) = port_to_host0(&hpcc);
    let dcqcn = run_at(100.0, "dcqcn", RED_100G, "", 9, &flows, 2000.0, 500.0);
    let (_, dcqcn_mean, _) = port_to_host0(&dcqcn);
    eprintln!(
        "incast after 0.5 ms: hpcc queue max {max_q} B, mean {mean_q:.0} B, utilization {util:.3}; \
         dcqcn mean {dcqcn_mean:.0} B"
    );
    assert!(mean_q < 3000.0 && max_q < 100_000, "hpcc queue: mean {mean_q} B, max {max_q} B");
    assert!(util > 0.9, "utilization {util}");
    assert!(dcqcn_mean > 20.0 * mean_q, "dcqcn mean queue {dcqcn_mean} B vs hpcc {mean_q} B");
    // The rates add up to eta x line rate. (They do not split evenly here: each flow's queue term
    // samples the instantaneous queue at its own packets' departures, which paced flows do at
    // fixed phases; with a BDP of 35 packets one packet is 3% of U. docs/protocols/hpcc.md.)
    let rates: Vec<f64> = (0..8).map(|f| mean_between(&series(&hpcc, f, "rate_gbps"), 1000.0, 2000.0)).collect();
    let sum: f64 = rates.iter().sum();
    eprintln!("rates {rates:?}, Jain {:.3}", jain(&rates));
    assert!((sum - 95.0).abs() < 3.0, "rates {rates:?} sum to {sum}");
}

#[test]
fn hpcc_needs_int_from_the_switches() {
    let flows = [(1, 0, 10_000, 1.0)];
    let f = flow_file("rdma-hpcc-no-int", &flows);
    let text = format!(
        "seed = 1\nduration_us = 10.0\n[topology]\nkind = \"single_switch\"\nhosts = 2\nhost_rate_gbps = 10.0\n\
         [transport]\nprotocol = \"hpcc\"\n[[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n",
        f.display()
    );
    let failures =
        spec_error_mismatches([("no INT".to_string(), spec(&text), "transport.protocol".into(), "int = true".into())]);
    assert!(failures.is_empty(), "{failures:?}");
}
