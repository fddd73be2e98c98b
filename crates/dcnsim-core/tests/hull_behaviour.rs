//! HULL's defining behaviour (Alizadeh et al., NSDI 2012, sections 3 and 5): with phantom queues
//! draining at gamma = 0.95 of line rate, long flows hold the bottleneck near gamma x its rate and
//! the real queue near empty, where DCTCP on the same link (marking at K = 20 packets) keeps about
//! K packets queued at full rate.
mod common;
use common::*;
use dcnsim_core::api::RunOutput;

/// `n` long flows from the left of a 10 Gb/s dumbbell to the right, staggered starts.
fn dumbbell(n: u32, transport: &str, switch: &str, queue: &str) -> RunOutput {
    let flows: Vec<(u32, u32, u64, f64)> = (0..n).map(|i| (i, n + i, 1_000_000_000, 1.0 + 23.0 * i as f64)).collect();
    let f = flow_file(&format!("hull-dumbbell-{n}-{}-{}", transport.len(), switch.len()), &flows);
    run_checked(&spec(&format!(
        "seed = 5\nduration_us = 15000.0\n[measure]\nwarmup_us = 5000.0\n[topology]\nkind = \"dumbbell\"\n\
         hosts_per_side = {n}\nhost_rate_gbps = 10.0\nbottleneck_rate_gbps = 10.0\nhost_delay_us = 1.0\n\
         bottleneck_delay_us = 1.0\n[transport]\n{transport}\n[switch]\n{switch}\n[queue]\nlimit_packets = 400\n\
         {queue}\n[[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n",
        f.display()
    )))
}

#[test]
fn phantom_queues_trade_a_little_bandwidth_for_a_near_empty_queue() {
    // (With 8 flows each window is down to about one packet of this 12 KB BDP, DCTCP's floor: the
    // windows alone overfill the link and a real queue forms, as the docs note.)
    for n in [2u32, 4] {
        let hull = dumbbell(n, "protocol = \"hull\"", "phantom_queue = true", "");
        let (queue, util, drops) = bottleneck(&hull);
        let bytes: Vec<f64> = u64s(&hull.flows, "window_bytes").iter().map(|&b| b as f64).collect();
        let dctcp = dumbbell(n, "protocol = \"dctcp\"", "", "ecn = \"step\"\necn_k_packets = 20");
        let (dctcp_queue, dctcp_util, _) = bottleneck(&dctcp);
        eprintln!(
            "{n} flows: HULL queue {queue:.0} B, utilization {util:.4}, Jain {:.4}; DCTCP queue {dctcp_queue:.0} B, \
             utilization {dctcp_util:.4}",
            jain(&bytes)
        );
        assert!(util > 0.85 && util < 0.96, "{n} flows: utilization {util}, gamma 0.95");
        assert!(queue < 3000.0, "{n} flows: mean real queue {queue} B");
        assert!(queue < dctcp_queue / 10.0, "{n} flows: HULL {queue} B vs DCTCP {dctcp_queue} B");
        assert!(dctcp_util > util, "{n} flows: DCTCP uses the headroom HULL leaves");
        assert_eq!(drops, 0, "{n} flows");
        assert!(jain(&bytes) > 0.9, "{n} flows: bytes {bytes:?}");
    }
}

#[test]
fn a_lower_gamma_leaves_more_headroom() {
    let run = |gamma: f64| {
        let sw = format!("phantom_queue = true\nphantom_drain_rate_fraction = {gamma}");
        bottleneck(&dumbbell(4, "protocol = \"hull\"", &sw, "")).1
    };
    let (u90, u95) = (run(0.9), run(0.95));
    eprintln!("utilization at gamma 0.90: {u90:.4}, at 0.95: {u95:.4}");
    assert!(u90 < u95 && u90 < 0.91, "gamma 0.9: {u90}, gamma 0.95: {u95}");
}

#[test]
fn hull_needs_phantom_queues() {
    let base = "duration_us = 100.0\n[topology]\nkind = \"single_switch\"\nhosts = 2\nhost_rate_gbps = 10.0\n\
                host_delay_us = 1.0\n[[workload]]\nkind = \"flow_list\"\nflows = [[0, 1, 1000, 0.0]]\n";
    let case = |what: &str, extra: &str, field: &str, fragment: &str| {
        (what.to_string(), spec(&format!("{base}{extra}")), field.to_string(), fragment.to_string())
    };
    let failures = spec_error_mismatches([
        case("no phantom queues", "[transport]\nprotocol = \"hull\"\n", "transport.protocol", "phantom_queue = true"),
        case(
            "gamma out of range",
            "[switch]\nphantom_queue = true\nphantom_drain_rate_fraction = 1.5\n[transport]\nprotocol = \"hull\"\n",
            "switch.phantom_drain_rate_fraction",
            "(0, 1]",
        ),
        case(
            "threshold without phantom queues",
            "[switch]\nphantom_mark_threshold_bytes = 3000\n[transport]\nprotocol = \"dctcp\"\n",
            "switch.phantom_mark_threshold_bytes",
            "only used with phantom_queue = true",
        ),
    ]);
    assert!(failures.is_empty(), "{failures:#?}");
}
