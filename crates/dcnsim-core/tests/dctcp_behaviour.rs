//! DCTCP's defining behaviour on a dumbbell: long flows share the bottleneck fairly and the
//! bottleneck queue hovers around the marking threshold K (DCTCP paper, section 3.3: the queue
//! oscillates between K and K + N packets with a small amplitude), while NewReno on the same
//! fabric fills the buffer.
mod common;
use common::*;

const K: u64 = 65;

fn dumbbell(n: u32, protocol: &str, ecn: bool) -> dcnsim_core::api::RunOutput {
    // n senders on the left, n receivers on the right, staggered starts to break symmetry.
    let flows: Vec<(u32, u32, u64, f64)> = (0..n).map(|i| (i, n + i, 1_000_000_000, 1.0 + 37.0 * i as f64)).collect();
    let f = flow_file(&format!("dumbbell-{n}-{protocol}"), &flows);
    let ecn_line = if ecn { format!("ecn = \"step\"\necn_k_packets = {K}") } else { String::new() };
    let s = spec(&format!(
        "seed = 3\nduration_us = 60000.0\n[measure]\nwarmup_us = 20000.0\n[topology]\nkind = \"dumbbell\"\nhosts_per_side = {n}\n\
         host_rate_gbps = 10.0\nbottleneck_rate_gbps = 10.0\nhost_delay_us = 5.0\nbottleneck_delay_us = 10.0\n\
         [queue]\nlimit_packets = 400\n{ecn_line}\n[transport]\nprotocol = \"{protocol}\"\ng = 0.0625\n[[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n",
        f.display()
    ).replace(if protocol == "newreno" { "g = 0.0625\n" } else { "\u{0}" }, ""));
    run_checked(&s)
}

/// (mean queue bytes, max queue bytes, utilization) of the bottleneck port.
fn bottleneck_queue(out: &dcnsim_core::api::RunOutput) -> (f64, u64, f64) {
    let i = bottleneck_port(out);
    (f64s(&out.ports, "mean_bytes")[i], u64s(&out.ports, "max_bytes")[i], f64s(&out.ports, "utilization")[i])
}

#[test]
fn two_and_four_flows_share_fairly_and_the_queue_stays_near_k() {
    for n in [2u32, 4] {
        let out = dumbbell(n, "dctcp", true);
        let bytes: Vec<f64> = u64s(&out.flows, "window_bytes").iter().map(|&b| b as f64).collect();
        let j = jain(&bytes);
        assert!(j > 0.95, "{n} flows: Jain index {j}, bytes {bytes:?}");
        let (mean, max, util) = bottleneck_queue(&out);
        let mean_pkts = mean / 1500.0;
        let max_pkts = max as f64 / 1500.0;
        assert!(util > 0.95, "{n} flows: bottleneck utilization {util}");
        assert!(
            mean_pkts > 0.5 * K as f64 && mean_pkts < 1.3 * K as f64,
            "{n} flows: mean queue {mean_pkts} packets, K = {K}"
        );
        assert!(max_pkts < K as f64 + 30.0, "{n} flows: max queue {max_pkts} packets, K = {K}");
        assert_eq!(u64s(&out.ports, "drops").iter().sum::<u64>(), 0, "DCTCP should not overflow a 400-packet buffer");
    }
}

#[test]
fn newreno_fills_the_buffer_that_dctcp_keeps_short() {
    let dctcp = dumbbell(2, "dctcp", true);
    let reno = dumbbell(2, "newreno", false);
    let (dq, _, _) = bottleneck_queue(&dctcp);
    let (rq, rmax, rutil) = bottleneck_queue(&reno);
    assert!(rq > 3.0 * dq, "NewReno mean queue {rq} vs DCTCP {dq}");
    assert!(rmax as f64 > 0.9 * 400.0 * 1500.0, "NewReno should reach the buffer limit, max {rmax}");
    assert!(rutil > 0.9, "NewReno keeps the link busy: {rutil}");
    assert!(u64s(&reno.ports, "drops").iter().sum::<u64>() > 0, "NewReno overflows the buffer");
    assert!(reno.summary["transport"]["fast_retransmits"].as_u64().unwrap() > 0);
}
