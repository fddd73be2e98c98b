//! Loss recovery: an incast into a tiny drop-tail buffer loses packets, yet every flow finishes
//! and every packet is accounted for exactly once.
mod common;
use common::*;

#[test]
fn incast_into_small_buffer_completes_with_drops() {
    for protocol in ["dctcp", "newreno"] {
        let flows: Vec<(u32, u32, u64, f64)> = (1..=16).map(|s| (s, 0, 200_000, 0.0)).collect();
        let f = flow_file(&format!("incast-{protocol}"), &flows);
        let ecn = if protocol == "dctcp" { "ecn = \"step\"\necn_k_packets = 10\n" } else { "" };
        let s = spec(&format!(
            "seed = 5\nduration_us = 1000000.0\n[topology]\nkind = \"single_switch\"\nhosts = 17\nhost_rate_gbps = 10.0\n\
             [queue]\nlimit_packets = 20\n{ecn}[transport]\nprotocol = \"{protocol}\"\nmin_rto_us = 1000.0\n\
             [[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n",
            f.display()
        ));
        let out = run_checked(&s);
        let ends = opt_u64s(&out.flows, "end_ps");
        assert!(ends.iter().all(|e| e.is_some()), "{protocol}: every flow finishes");
        let drops = out.summary["queues"]["drops"].as_u64().unwrap();
        assert!(drops > 0, "{protocol}: 16 x 10 initial packets overflow a 20-packet buffer");
        assert!(out.summary["transport"]["retransmitted_packets"].as_u64().unwrap() > 0);
        // Goodput is the receiver's link at best: all 3.2 MB cannot arrive faster than 10 Gb/s allows.
        let last = ends.iter().map(|e| e.unwrap()).max().unwrap();
        assert!(last as f64 >= 3_200_000.0 * 8.0 / 10e9 * 1e12);
        assert!(
            out.summary["transport"]["timeouts"].as_u64().unwrap()
                + out.summary["transport"]["fast_retransmits"].as_u64().unwrap()
                > 0
        );
    }
}
