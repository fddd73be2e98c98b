//! SIRD's effects from the paper (Prasopoulos, Bugnion, Kogias), at small scale: lone messages at
//! (or within one RTT of) the exact ideal, informed overcommitment rescuing the receivers of a
//! congested sender (Fig. 10), B bounding the receiver's downlink queue (section 4.2), the network
//! loop holding a shared core link near NThr (section 4.3), less queuing than DCTCP at the same
//! load (section 5.2), receiver policies, loss recovery on drop-tail buffers, and the rules taken
//! from the authors' simulator (issue 18), each against its alternative.
mod common;
use common::*;
use dcnsim_core::api::RunOutput;

/// The paper's fabric (Table 2, section 5.1), two racks: 100 Gb/s hosts, 400 Gb/s core, 1.25 us
/// host links, 0.5 us core links; BDP = host rate x base RTT = 91,410 B.
const PAPER_LS: &str = "kind = \"leaf_spine\"\nracks = 2\nhosts_per_rack = 2\nspines = 2\nhost_rate_gbps = 100.0\n\
                        core_rate_gbps = 400.0\nhost_delay_us = 1.25\ncore_delay_us = 0.5";
/// ECN at NThr = 1.25 BDP (Table 2) on core links only, two priority classes.
const SIRD_QUEUE: &str = "priorities = 2\n[queue.fabric]\necn = \"step\"\necn_k_bytes = 114000";

fn sird_spec(
    topo: &str,
    queue: &str,
    transport: &str,
    workload: &str,
    duration_us: f64,
    warmup_us: f64,
) -> serde_json::Value {
    sird_spec_lb("spray", topo, queue, transport, workload, duration_us, warmup_us)
}

fn sird_spec_lb(
    lb: &str,
    topo: &str,
    queue: &str,
    transport: &str,
    workload: &str,
    duration_us: f64,
    warmup_us: f64,
) -> serde_json::Value {
    spec(&format!(
        "seed = 1\nduration_us = {duration_us}\n[measure]\nwarmup_us = {warmup_us}\n[topology]\n{topo}\n[queue]\n{queue}\n\
         [routing]\nload_balancing = \"{lb}\"\n[transport]\nprotocol = \"sird\"\n{transport}\n{workload}"
    ))
}

fn flow_list(name: &str, flows: &[(u32, u32, u64, f64)]) -> String {
    let f = flow_file(name, flows);
    format!("[[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n", f.display())
}

/// The largest payload whose wire bytes (64 B of headers per packet of up to 1436 B) fit in
/// `limit` bytes.
fn largest_unscheduled(limit: u64) -> u64 {
    (1..=limit).rev().find(|&s| s + 64 * s.div_ceil(1436) <= limit).unwrap()
}

fn counter(out: &RunOutput, name: &str) -> u64 {
    out.summary["transport"][name].as_u64().unwrap_or_else(|| panic!("no counter {name}"))
}

fn fcts(out: &RunOutput) -> Vec<u64> {
    opt_u64s(&out.flows, "fct_ps").into_iter().map(|f| f.expect("every flow finishes")).collect()
}

/// Max occupancy of the switch port facing `host`.
fn downlink_max(out: &RunOutput, host: u32) -> u64 {
    let (peer, role, max) = (strs(&out.ports, "peer"), strs(&out.ports, "role"), u64s(&out.ports, "max_bytes"));
    let name = format!("host{host}");
    (0..peer.len()).find(|&i| peer[i] == name && role[i] == "to_host").map(|i| max[i]).unwrap()
}

#[test]
fn a_lone_message_up_to_unscht_is_exactly_ideal() {
    // Unscheduled at line rate from the first instant (section 3, "Starting at line rate"). With
    // ECMP every packet takes one path and the ideal is exact; with spraying the ideal assumes
    // each packet finds its core hops free, which random choices achieve only up to a short
    // wait of a packet behind its predecessor at a core port.
    for (topo, bdp) in [
        (PAPER_LS, 91_410u64),
        ("kind = \"single_switch\"\nhosts = 3\nhost_rate_gbps = 10.0\nhost_delay_us = 1.0", 8_128),
    ] {
        // UnschT counts wire bytes (1436 B of payload per 1500 B packet), as the reference does.
        let largest = largest_unscheduled(bdp);
        for size in [1u64, 1000, 1436, 1437, bdp / 2, largest - 1000, largest] {
            for (dst, lb) in [(1, "ecmp"), (2, "ecmp"), (2, "spray")] {
                let wl = flow_list(&format!("sird-lone-{size}-{dst}-{bdp}-{lb}"), &[(0, dst, size, 3.0)]);
                let out = run_checked(&sird_spec_lb(lb, topo, SIRD_QUEUE, "", &wl, 10_000.0, 0.0));
                assert_eq!(out.summary["bdp_bytes"].as_u64().unwrap(), bdp);
                let (fct, ideal) = (fcts(&out)[0], u64s(&out.flows, "ideal_fct_ps")[0]);
                if lb == "ecmp" {
                    assert_eq!(fct, ideal, "{size} B to host {dst}");
                } else {
                    assert!(
                        fct <= ideal + 30_000,
                        "{size} B to host {dst} sprayed: {fct} vs {ideal}: more than one 400G packet time"
                    );
                }
                assert_eq!(
                    counter(&out, "credits_sent") + counter(&out, "credit_requests_sent"),
                    0,
                    "no control exchange"
                );
                assert_eq!(counter(&out, "unscheduled_packets_sent"), size.div_ceil(1436));
            }
        }
    }
}

#[test]
fn a_lone_scheduled_message_finishes_within_one_rtt_of_ideal() {
    for size in [91_411u64, 200_000, 2_000_000, 20_000_000] {
        let out = run_checked(&sird_spec(
            PAPER_LS,
            SIRD_QUEUE,
            "",
            &flow_list(&format!("sird-sched-{size}"), &[(0, 3, size, 3.0)]),
            10_000.0,
            0.0,
        ));
        let (fct, ideal) = (fcts(&out)[0], u64s(&out.flows, "ideal_fct_ps")[0]);
        let rtt = out.summary["base_rtt_ps"].as_u64().unwrap();
        // The CREDITREQ and the first credit cost one control-packet round trip, then the paced
        // credits keep the link busy (SB = 1 BDP of credit in flight).
        assert!(fct > ideal && fct - ideal <= rtt, "{size} B: fct {fct} ps, ideal {ideal} ps, base RTT {rtt} ps");
        assert_eq!(counter(&out, "unscheduled_packets_sent"), 0);
        assert_eq!(counter(&out, "credit_requests_sent"), 1);
        assert_eq!(counter(&out, "credits_sent"), size.div_ceil(1436));
    }
}

#[test]
fn with_unscht_above_bdp_the_unscheduled_prefix_hides_the_credit_round_trip() {
    // UnschT = 3 BDP: the first SBmax = 1 BDP of wire bytes goes unscheduled in whole packets
    // (91,410 / 1,500: 60 packets, as the reference), its first packet asks for the rest, and the
    // credits arrive as the prefix ends: the message is ideal but for the 1,410 B the prefix falls
    // short of a BDP (113 ns at 100 Gb/s, under one packet time).
    for size in [150_000u64, 250_000] {
        let out = run_checked(&sird_spec(
            PAPER_LS,
            SIRD_QUEUE,
            "unsch_thr_bdp = 3.0",
            &flow_list(&format!("sird-mixed-{size}"), &[(0, 3, size, 3.0)]),
            10_000.0,
            0.0,
        ));
        let (fct, ideal) = (fcts(&out)[0], u64s(&out.flows, "ideal_fct_ps")[0]);
        assert!(fct >= ideal && fct - ideal < 120_000, "{size} B: fct {fct} ps, ideal {ideal} ps");
        let prefix = 91_410u64 / 1500;
        assert_eq!(counter(&out, "unscheduled_packets_sent"), prefix);
        assert_eq!(counter(&out, "credits_sent"), size.div_ceil(1436) - prefix);
        assert_eq!(counter(&out, "credit_requests_sent"), 0);
    }
}

#[test]
fn informed_overcommitment_rescues_the_receivers_of_a_congested_sender_fig10() {
    // Section 6, Fig. 10 on 10 Gb/s links: host 0 sends to receivers 1-4 and can fill only a
    // quarter of each downlink; later hosts 5-8 each send to one of them. Host 0 has been sending
    // for a while (its messages have fewer bytes left), so the receivers' SRPT keeps crediting it.
    // With SThr = inf each receiver leaves up to SBmax = 1 BDP of credit stranded at host 0 and
    // has B - BDP = 0.5 BDP for its other sender; with SThr = BDP/2 host 0's csn bit shrinks its
    // buckets to what it can use. Paper: ~30 vs ~40 Gb/s at the four receivers.
    let topo = "kind = \"single_switch\"\nhosts = 9\nhost_rate_gbps = 10.0\nhost_delay_us = 2.0";
    let mut flows: Vec<(u32, u32, u64, f64)> = (1..=4).map(|r| (0, r, 100_000_000, 0.0)).collect();
    flows.extend((1..=4).map(|r| (4 + r, r, 200_000_000, 100.0)));
    let wl = flow_list("sird-fig10", &flows);
    let goodput = |sthr: &str| {
        let out = run_checked(&sird_spec(topo, "priorities = 2", &format!("sthr_bdp = {sthr}"), &wl, 3000.0, 1000.0));
        (out.summary["goodput_gbps"].as_f64().unwrap(), out)
    };
    let (informed, io) = goodput("0.5");
    let (blind, bo) = goodput("1e9");
    // Payload rate of four full 10 Gb/s links (1436 B of every 1500 B on the wire).
    let max = 40.0 * 1436.0 / 1500.0;
    println!("Fig. 10: SThr = BDP/2 -> {informed:.2} Gb/s, SThr = inf -> {blind:.2} Gb/s (max {max:.2})");
    assert!(informed > 0.95 * max, "SThr = BDP/2: {informed:.2} Gb/s");
    assert!(blind < 30.0, "SThr = inf: {blind:.2} Gb/s");
    assert!(informed - blind > 8.0);
    assert!(counter(&io, "csn_marked_packets") > 0 && counter(&io, "sb_cuts_sender") > 0);
    assert_eq!(counter(&bo, "csn_marked_packets"), 0);
}

#[test]
fn the_global_bucket_bounds_the_receivers_downlink_queue() {
    // Section 4.2: B bounds the queue of scheduled data at the ToR downlink to B - BDP. A 16-to-1
    // incast of 2 MB messages (all scheduled) on a 100 Gb/s switch.
    let topo = "kind = \"single_switch\"\nhosts = 17\nhost_rate_gbps = 100.0\nhost_delay_us = 1.0";
    let wl = flow_list("sird-incast", &(1..=16).map(|s| (s, 0, 2_000_000u64, 1.0)).collect::<Vec<_>>());
    let slack = 3 * 1500;
    // Optimum: the downlink busy with every packet of every message (plus the first RTT, < 1%).
    let optimum = 16.0 * (1392.0 * 1500.0 + 1152.0) * 8.0 / 100e9 * 1e12;
    for (b, pace) in [(1.5, true), (3.0, true), (1.5, false), (3.0, false)] {
        let out = run_checked(&sird_spec(
            topo,
            "priorities = 2",
            &format!("budget_bdp = {b}\npace_credits = {pace}"),
            &wl,
            100_000.0,
            0.0,
        ));
        let bdp = out.summary["bdp_bytes"].as_u64().unwrap() as f64;
        let q = downlink_max(&out, 0);
        let bound = (b - 1.0) * bdp;
        println!("B = {b} BDP, paced {pace}: max downlink queue {q} B, B - BDP = {bound:.0} B");
        assert!(q as f64 <= bound + slack as f64, "B = {b}, paced {pace}: queue {q} > B - BDP = {bound:.0} + 3 MTU");
        if !pace {
            // Unpaced, the bucket is what holds the queue back: it fills to the bound.
            assert!(q as f64 >= bound - slack as f64, "B = {b}: queue {q} well below B - BDP = {bound:.0}");
        }
        let last = *fcts(&out).iter().max().unwrap() as f64;
        assert!(last < 1.01 * optimum, "last message at {last} ps, optimum {optimum} ps");
    }
}

#[test]
fn the_network_loop_holds_a_congested_core_link_near_nthr() {
    // Section 4.3: 8 senders in one rack to 8 receivers in the other over one 200 Gb/s core link
    // (4:1). With ECN at NThr on the core the per-sender buckets shrink until the core queue
    // hovers at NThr; without it each receiver keeps SBmax in flight and the queue is ~5x larger.
    let topo = "kind = \"leaf_spine\"\nracks = 2\nhosts_per_rack = 8\nspines = 1\nhost_rate_gbps = 100.0\n\
                core_rate_gbps = 200.0\nhost_delay_us = 1.25\ncore_delay_us = 0.5";
    let wl = flow_list("sird-core", &(0..8).map(|i| (i, 8 + i, 500_000_000u64, 0.0)).collect::<Vec<_>>());
    let fabric_max = |out: &RunOutput| {
        let (role, max) = (strs(&out.ports, "role"), u64s(&out.ports, "max_bytes"));
        (0..role.len()).filter(|&i| role[i] == "fabric").map(|i| max[i]).max().unwrap()
    };
    let ecn = run_checked(&sird_spec(topo, SIRD_QUEUE, "", &wl, 3000.0, 1000.0));
    let plain = run_checked(&sird_spec(topo, "priorities = 2", "", &wl, 3000.0, 1000.0));
    let (qe, qp) = (fabric_max(&ecn), fabric_max(&plain));
    let (ge, gp) = (ecn.summary["goodput_gbps"].as_f64().unwrap(), plain.summary["goodput_gbps"].as_f64().unwrap());
    println!("core link: with ECN max queue {qe} B at {ge:.1} Gb/s; without {qp} B at {gp:.1} Gb/s");
    assert!((qe as f64) < 1.2 * 114_000.0, "{qe}");
    assert!(qp > 3 * qe, "{qp} vs {qe}");
    assert!(ge > 0.97 * 200.0 * 1436.0 / 1500.0, "the core link stays full: {ge}");
    assert!(counter(&ecn, "sb_cuts_network") > 0 && counter(&plain, "sb_cuts_network") == 0);
}

#[test]
fn sird_queues_less_than_dctcp_at_the_same_load() {
    // Section 5.2 at small scale: 12 hosts of the paper's fabric, Facebook Hadoop (WKb) at 50%
    // load. DCTCP as in Table 2 (K = NThr = 1.25 BDP on every switch port, initial window 1 BDP,
    // g = 0.08, ECMP); SIRD with ECN on core links only and packet spraying.
    let topo = "kind = \"leaf_spine\"\nracks = 3\nhosts_per_rack = 4\nspines = 2\nhost_rate_gbps = 100.0\n\
                core_rate_gbps = 400.0\nhost_delay_us = 1.25\ncore_delay_us = 0.5";
    let wl = "[[workload]]\nkind = \"poisson\"\nload = 0.5\ncdf = \"fb_hadoop_w4\"\nstop_us = 2000.0\n";
    let sird = run_checked(&spec(&format!(
        "seed = 1\nduration_us = 2000.0\nstop_when_done = false\n[measure]\nwarmup_us = 300.0\n[topology]\n{topo}\n[queue]\n{SIRD_QUEUE}\n\
         [routing]\nload_balancing = \"spray\"\n[transport]\nprotocol = \"sird\"\n{wl}")));
    let dctcp = run_checked(&spec(&format!(
        "seed = 1\nduration_us = 2000.0\nstop_when_done = false\n[measure]\nwarmup_us = 300.0\n[topology]\n{topo}\n[queue]\necn = \"step\"\n\
         ecn_k_bytes = 114000\n[transport]\nprotocol = \"dctcp\"\ng = 0.08\ninitial_window_packets = 64\n{wl}")));
    let q = |o: &RunOutput| o.summary["queues"]["max_switch_bytes"].as_u64().unwrap();
    let g = |o: &RunOutput| o.summary["goodput_gbps"].as_f64().unwrap();
    let p99 = |o: &RunOutput| o.summary["slowdown"]["p99"].as_f64().unwrap();
    println!(
        "max switch queue: SIRD {} B, DCTCP {} B; goodput {:.1} vs {:.1} Gb/s; p99 slowdown {:.2} vs {:.2}",
        q(&sird),
        q(&dctcp),
        g(&sird),
        g(&dctcp),
        p99(&sird),
        p99(&dctcp)
    );
    assert!((q(&sird) as f64) < 0.6 * q(&dctcp) as f64, "SIRD {} vs DCTCP {}", q(&sird), q(&dctcp));
    assert!(g(&sird) > 0.97 * g(&dctcp), "SIRD does not trade goodput for it");
    assert_eq!(counter(&sird, "retransmitted_packets"), 0, "no loss, no spurious resends");
}

#[test]
fn srpt_receivers_finish_the_short_message_first_round_robin_shares() {
    let topo = "kind = \"single_switch\"\nhosts = 3\nhost_rate_gbps = 100.0\nhost_delay_us = 1.0";
    let wl = flow_list("sird-policy", &[(1, 0, 1_000_000, 1.0), (2, 0, 3_000_000, 1.0)]);
    let run = |policy: &str| {
        let out = run_checked(&sird_spec(
            topo,
            "priorities = 2",
            &format!("receiver_policy = \"{policy}\""),
            &wl,
            10_000.0,
            0.0,
        ));
        let (f, i) = (fcts(&out), u64s(&out.flows, "ideal_fct_ps"));
        (f[0] as f64 / i[0] as f64, f[1] as f64 / i[1] as f64)
    };
    let (srpt_short, srpt_long) = run("srpt");
    let (rr_short, rr_long) = run("round_robin");
    assert!(srpt_short < 1.1, "SRPT: the 1 MB message runs nearly alone ({srpt_short:.3} x ideal)");
    assert!(rr_short > 1.8, "round robin: it shares the downlink ({rr_short:.3} x ideal)");
    // Either way the downlink stays busy: the long message ends when all 4 MB are through.
    assert!((srpt_long - rr_long).abs() < 0.01 && srpt_long < 1.4, "{srpt_long} {rr_long}");
}

#[test]
fn every_flow_completes_on_drop_tail_buffers() {
    // Shallow drop-tail buffers (5 packets per port), incasts of unscheduled and scheduled
    // messages on top of an RPC load: data, credits, requests and ACKs are all lost at times, and
    // the Homa-style timeouts recover every message.
    let topo = "kind = \"leaf_spine\"\nracks = 3\nhosts_per_rack = 8\nspines = 2\nhost_rate_gbps = 100.0\n\
                core_rate_gbps = 400.0\nhost_delay_us = 1.25\ncore_delay_us = 0.5";
    let wl = "[[workload]]\nkind = \"incast\"\nsenders = 23\nsize_bytes = 1000\nat_us = 10.0\nreceiver = 0\n\
              [[workload]]\nkind = \"incast\"\nsenders = 23\nsize_bytes = 50000\nat_us = 10.0\nreceiver = 0\n\
              [[workload]]\nkind = \"incast\"\nsenders = 23\nsize_bytes = 300000\nat_us = 10.0\nreceiver = 0\n\
              [[workload]]\nkind = \"poisson\"\nload = 0.6\ncdf = \"google_rpc_w3\"\nstop_us = 300.0\n\
              [[workload]]\nkind = \"poisson\"\nload = 0.3\ncdf = \"fb_hadoop_w4\"\nstop_us = 300.0\n";
    let out = run_checked(&sird_spec(topo, "priorities = 2\nlimit_packets = 5", "", wl, 1_000_000.0, 0.0));
    let flows = &out.summary["flows"];
    assert_eq!(flows["unfinished"].as_u64().unwrap(), 0, "{flows}");
    assert!(flows["started"].as_u64().unwrap() > 10_000);
    assert!(out.summary["queues"]["drops"].as_u64().unwrap() > 1000, "the buffers do overflow");
    for c in ["retransmitted_packets", "resend_requests", "receiver_timeouts", "sender_probes"] {
        assert!(counter(&out, c) > 0, "{c}: {}", out.summary["transport"]);
    }
}

#[test]
fn runs_are_deterministic() {
    let topo = "kind = \"leaf_spine\"\nracks = 2\nhosts_per_rack = 4\nspines = 2\nhost_rate_gbps = 100.0\ncore_rate_gbps = 400.0";
    let wl = "[[workload]]\nkind = \"poisson\"\nload = 0.7\ncdf = \"fb_hadoop_w4\"\nstop_us = 300.0\n";
    let a = run_checked(&sird_spec(topo, "priorities = 2\nlimit_packets = 20", "", wl, 100_000.0, 0.0));
    let b = run_checked(&sird_spec(topo, "priorities = 2\nlimit_packets = 20", "", wl, 100_000.0, 0.0));
    assert_eq!(opt_u64s(&a.flows, "end_ps"), opt_u64s(&b.flows, "end_ps"));
    assert_eq!(a.summary["transport"], b.summary["transport"]);
}

// The authors' simulator's rules where the paper's text leaves a choice (issue 18), each against
// the alternative on one small scenario.

#[test]
fn unscht_counts_wire_bytes_unless_told_payload() {
    // 90,000 B of payload is 94,032 B on the wire: below UnschT = BDP = 91,410 B in payload bytes,
    // above it in wire bytes (the reference's `add_header_overhead(size) <= UnschT`).
    let wl = flow_list("sird-unscht-wire", &[(0, 3, 90_000, 3.0)]);
    let run = |counts: &str| {
        run_checked(&sird_spec(PAPER_LS, SIRD_QUEUE, &format!("unsch_thr_counts = \"{counts}\""), &wl, 1000.0, 0.0))
    };
    let (wire, payload) = (run("wire"), run("payload"));
    assert_eq!(counter(&wire, "unscheduled_packets_sent"), 0);
    assert_eq!(counter(&wire, "credit_requests_sent"), 1);
    // Counted in payload, it goes unscheduled up to SBmax in whole packets (91,410 / 1,500 = 60);
    // its first packet asks for the other 3.
    assert_eq!(counter(&payload, "unscheduled_packets_sent"), 60);
    assert_eq!(counter(&payload, "credits_sent"), 90_000u64.div_ceil(1436) - 60);
    assert_eq!(counter(&payload, "credit_requests_sent"), 0);
    // Scheduled, the message pays the credit round trip.
    let rtt = wire.summary["base_rtt_ps"].as_u64().unwrap();
    assert!(fcts(&wire)[0] > fcts(&payload)[0] && fcts(&wire)[0] - fcts(&payload)[0] <= rtt);
}

#[test]
fn unscheduled_self_credit_is_capped_by_the_credit_already_held() {
    // Two 60,000 B messages (62,688 B on the wire) start together to one receiver. Whole
    // prefixes: both go unscheduled, 125 KB at once. The reference's cap: the second may
    // self-credit only SBmax less what the sender already holds for that receiver, in whole
    // packets (91,410 - 62,688 + the 1,500 B already sent = 30,222 B: 20 packets); its first
    // packet asks for the rest.
    let wl = flow_list("sird-unsch-cap", &[(0, 3, 60_000, 3.0), (0, 3, 60_000, 3.0)]);
    let run = |prefix: &str| {
        run_checked(&sird_spec(PAPER_LS, SIRD_QUEUE, &format!("unscheduled_prefix = \"{prefix}\""), &wl, 1000.0, 0.0))
    };
    let (capped, whole) = (run("capped"), run("whole"));
    let packets = 60_000u64.div_ceil(1436);
    assert_eq!(counter(&whole, "unscheduled_packets_sent"), 2 * packets);
    assert_eq!(counter(&whole, "credits_sent"), 0);
    assert_eq!(counter(&capped, "unscheduled_packets_sent"), packets + 20);
    assert_eq!(counter(&capped, "credits_sent"), packets - 20);
    assert_eq!(counter(&capped, "credit_requests_sent"), 0, "the first unscheduled packet asks");
}

#[test]
fn csn_needs_two_messages_with_unsent_data_not_two_receivers() {
    // Unscheduled self-credit counts as credit held. Two 60 KB messages to one receiver hold
    // ~91 KB > SThr = 45.7 KB: the reference (`num_outbound() >= 2`) marks csn, the two-receivers
    // rule does not; one message alone (62.7 KB held) is never marked.
    let run = |name: &str, flows: &[(u32, u32, u64, f64)], rule: &str| {
        let out = run_checked(&sird_spec(
            PAPER_LS,
            SIRD_QUEUE,
            &format!("csn_requires = \"{rule}\""),
            &flow_list(name, flows),
            1000.0,
            0.0,
        ));
        counter(&out, "csn_marked_packets")
    };
    let two = [(0, 3, 60_000, 3.0), (0, 3, 60_000, 3.0)];
    assert!(run("sird-csn-two", &two, "two_messages") > 0);
    assert_eq!(run("sird-csn-two", &two, "two_receivers"), 0);
    assert_eq!(run("sird-csn-one", &[(0, 3, 60_000, 3.0)], "two_messages"), 0);
}

#[test]
fn receiver_srpt_orders_by_bytes_still_to_receive() {
    // BDP = 253 KB (100 Gb/s, 5 us host links). A 1 MB message to host 0 has run for 44 us when
    // a 500 KB one joins: the first has a little over 500 KB still to receive, of which up to
    // 1 BDP is credited and in flight, so under 500 KB still to credit. The reference orders by
    // bytes still to receive and switches to the newcomer; by packets still to credit the first
    // keeps the link.
    let topo = "kind = \"single_switch\"\nhosts = 3\nhost_rate_gbps = 100.0\nhost_delay_us = 5.0";
    let wl = flow_list("sird-srpt-key", &[(1, 0, 1_000_000, 1.0), (2, 0, 500_000, 45.0)]);
    let ends = |key: &str| {
        let out = run_checked(&sird_spec(
            topo,
            "priorities = 2",
            &format!("receiver_srpt_key = \"{key}\""),
            &wl,
            10_000.0,
            0.0,
        ));
        let (f, start) = (fcts(&out), [1_000_000u64, 45_000_000]);
        (f[0] + start[0], f[1] + start[1])
    };
    let (old_end, new_end) = ends("bytes_to_receive");
    assert!(new_end < old_end, "bytes to receive: the newcomer first ({new_end} vs {old_end} ps)");
    let (old_end, new_end) = ends("packets_to_credit");
    assert!(old_end < new_end, "packets to credit: the first message first ({old_end} vs {new_end} ps)");
}

#[test]
fn fig10_needs_the_receivers_to_keep_crediting_the_congested_sender() {
    // Fig. 10's loss comes from receivers that keep crediting host 0. SRPT does so only while host
    // 0's messages are the shorter: with equal sizes it hands each downlink to the newcomer, which
    // fills it with or without informed overcommitment. Round robin credits both whatever the
    // sizes, and informed overcommitment again recovers the links.
    let topo = "kind = \"single_switch\"\nhosts = 9\nhost_rate_gbps = 10.0\nhost_delay_us = 2.0";
    let goodput = |name: &str, first: u64, policy: &str, sthr: &str| {
        let mut flows: Vec<(u32, u32, u64, f64)> = (1..=4).map(|r| (0, r, first, 0.0)).collect();
        flows.extend((1..=4).map(|r| (4 + r, r, 200_000_000, 100.0)));
        let transport = format!("receiver_policy = \"{policy}\"\nsthr_bdp = {sthr}");
        let out = run_checked(&sird_spec(topo, "priorities = 2", &transport, &flow_list(name, &flows), 3000.0, 1000.0));
        out.summary["goodput_gbps"].as_f64().unwrap()
    };
    let max = 40.0 * 1436.0 / 1500.0;
    let equal_blind = goodput("sird-fig10-equal", 200_000_000, "srpt", "1e9");
    assert!(equal_blind > 0.99 * max, "equal sizes, SRPT, SThr = inf: {equal_blind:.2} Gb/s");
    let rr_informed = goodput("sird-fig10-rr", 100_000_000, "round_robin", "0.5");
    let rr_blind = goodput("sird-fig10-rr", 100_000_000, "round_robin", "1e9");
    println!("equal sizes SRPT SThr = inf: {equal_blind:.2}; round robin: {rr_informed:.2} vs {rr_blind:.2} Gb/s");
    assert!(rr_informed > 0.95 * max && rr_blind < 30.0, "round robin: {rr_informed:.2} vs {rr_blind:.2} Gb/s");
}
