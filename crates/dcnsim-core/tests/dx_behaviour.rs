//! DX's defining behaviour (Lee et al., ATC 2015 / ToN 2017): long flows sharing a bottleneck keep
//! it busy with the queue near DX's target of zero queuing delay (a packet or so per flow, since
//! each flow adds one MSS per RTT and cuts as soon as it measures queuing), share it fairly, and
//! drop nothing. The queuing delay a flow measures is read from the flow-state series.
mod common;
use common::*;
use dcnsim_core::api::RunOutput;

const SETTLE_US: f64 = 5000.0;

/// `n` long flows from the left of a 10 Gb/s dumbbell to the right, staggered starts.
fn dumbbell(n: u32, transport: &str, queue: &str) -> RunOutput {
    let flows: Vec<(u32, u32, u64, f64)> = (0..n).map(|i| (i, n + i, 1_000_000_000, 1.0 + 23.0 * i as f64)).collect();
    let f = flow_file(&format!("dx-dumbbell-{n}-{}", transport.len()), &flows);
    run_checked(&spec(&format!(
        "seed = 5\nduration_us = 20000.0\n[measure]\nwarmup_us = {SETTLE_US}\n[topology]\nkind = \"dumbbell\"\n\
         hosts_per_side = {n}\nhost_rate_gbps = 10.0\nbottleneck_rate_gbps = 10.0\nhost_delay_us = 1.0\n\
         bottleneck_delay_us = 1.0\n[transport]\n{transport}\n[queue]\nlimit_packets = 400\n{queue}\n\
         [[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n",
        f.display()
    )))
}

#[test]
fn long_flows_keep_the_link_busy_with_a_near_empty_queue() {
    for n in [1u32, 2, 4, 8] {
        let dx = dumbbell(n, "protocol = \"dx\"", "");
        let bytes: Vec<f64> = u64s(&dx.flows, "window_bytes").iter().map(|&b| b as f64).collect();
        let (queue, util, drops) = bottleneck(&dx);
        let j = jain(&bytes);
        // The same flows under DCTCP (K = 20 packets) for scale (one flow queues at its own NIC).
        let dctcp = dumbbell(n, "protocol = \"dctcp\"", "ecn = \"step\"\necn_k_packets = 20");
        let (dctcp_queue, _, _) = bottleneck(&dctcp);
        eprintln!(
            "{n} flows: DX queue {queue:.0} B, utilization {util:.4}, Jain {j:.4}; DCTCP queue {dctcp_queue:.0} B"
        );
        assert!(util > 0.95, "{n} flows: utilization {util}");
        assert!(j > 0.95, "{n} flows: Jain index {j}, bytes {bytes:?}");
        assert_eq!(drops, 0, "{n} flows");
        assert!(queue < 1500.0 * n as f64 + 1500.0, "{n} flows: mean queue {queue} B");
        assert!(n == 1 || queue < dctcp_queue / 3.0, "{n} flows: DX queue {queue} B vs DCTCP {dctcp_queue} B");
    }
}
