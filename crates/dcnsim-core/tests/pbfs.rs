//! PB-FS (Aaronson and Cohen, IFIP Networking 2024) and the other `fast_start` modes over every
//! rate-based congestion control, end to end on one 25 Gb/s switch: flows too short for PB-FS
//! never mark and change nothing; marking stops at the first ACK; an incast gets postcards, rate
//! reductions and a shorter queue than at line rate; with PB-FS on, every CC delivers every byte
//! of a lossy incast exactly once and the same seed gives the same tables; slow start starts slow
//! and queues less; bad keys name the field. Definition 1 and Algorithm 1 are tested against
//! their formulas in `net/pipeline/postcard.rs` and `transport/rate/fast_start.rs`.
mod common;
use common::*;
use dcnsim_core::api::RunOutput;

/// The rate-based CCs PB-FS layers over (each skipped if not registered).
const CCS: [&str; 4] = ["dcqcn", "timely", "hpcc", "dctcp_rate"];

fn registered(p: &str) -> bool {
    dcnsim_core::transport::protocols().iter().any(|(n, _)| *n == p)
}

/// `flows` on one switch with 17 hosts at 25 Gb/s, 1 us links; two classes (postcards and ACKs in
/// 0, data in 1); RED marking as the HPCC reference's at 25 Gb/s; INT and postcards on.
fn run_with(protocol: &str, transport: &str, queue: &str, flows: &[(u32, u32, u64, f64)], seed: u64) -> RunOutput {
    run_on(protocol, transport, queue, "", "", flows, seed)
}

/// As [`run_with`], with more `[switch]` and `[topology]` keys.
fn run_on(
    protocol: &str,
    transport: &str,
    queue: &str,
    switch: &str,
    topology: &str,
    flows: &[(u32, u32, u64, f64)],
    seed: u64,
) -> RunOutput {
    let tag = format!("pbfs-{protocol}-{}-{:x}", flows.len(), (transport.len() * 131 + queue.len()) as u64);
    let f = flow_file(&tag, flows);
    run_checked(&spec(&format!(
        "seed = {seed}\nduration_us = 3000.0\n\
         [topology]\nkind = \"single_switch\"\nhosts = 17\nhost_rate_gbps = 25.0\nhost_delay_us = 1.0\n{topology}\n\
         [queue]\npriorities = 2\necn = \"red\"\necn_at = \"dequeue\"\nred_min_bytes = 100000\n\
         red_max_bytes = 400000\nred_pmax = 0.2\n{queue}\n\
         [switch]\nint = true\npostcards = true\n{switch}\n\
         [transport]\nprotocol = \"{protocol}\"\ndata_priority = 1\ncontrol_priority = 0\n{transport}\n\
         [[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n",
        f.display()
    )))
}

fn run(protocol: &str, transport: &str, flows: &[(u32, u32, u64, f64)]) -> RunOutput {
    run_with(protocol, transport, "limit_bytes = 8000000", flows, 1)
}

fn counter(out: &RunOutput, name: &str) -> u64 {
    out.summary["transport"][name].as_u64().unwrap_or_else(|| panic!("counter {name}: {}", out.summary["transport"]))
}

/// Max bytes of the switch port towards host 0.
fn queue_to_host0(out: &RunOutput) -> u64 {
    let (nodes, peers) = (strs(&out.ports, "node"), strs(&out.ports, "peer"));
    let i = (0..nodes.len()).find(|&i| nodes[i] == "switch0" && peers[i] == "host0").expect("port to host0");
    u64s(&out.ports, "max_bytes")[i]
}

/// `senders` hosts (1, 2, ...) each send `size` bytes to host 0 at time 1 us.
fn incast(senders: u32, size: u64) -> Vec<(u32, u32, u64, f64)> {
    (1..=senders).map(|h| (h, 0, size, 1.0)).collect()
}

const PBFS: &str = "fast_start = \"pbfs\"";

#[test]
fn flows_shorter_than_tau_never_mark_and_change_nothing() {
    // tau = DC_RTT / 2, about 2.5 us here: 25 Gb/s x 2.5 us = 7.8 KB; these flows are 3 KB.
    let flows = incast(16, 3000);
    for p in CCS.into_iter().filter(|p| registered(p)) {
        let off = run(p, "", &flows);
        let on = run(p, PBFS, &flows);
        assert_eq!(counter(&on, "pbfs_eligible_flows"), 0, "{p}");
        assert_eq!(counter(&on, "pbt_packets_sent"), 0, "{p}");
        assert_eq!(on.summary["postcards"]["sent"], 0, "{p}");
        assert_eq!(opt_u64s(&on.flows, "end_ps"), opt_u64s(&off.flows, "end_ps"), "{p}: short flows are untouched");
    }
}

#[test]
fn marking_stops_at_the_first_ack() {
    // A lone 1 MB flow (667 packets of 1436 payload bytes): unstopped, it would mark 111 packets.
    // The first ACK returns after one base RTT (about 5 us: 10 packets at 25 Gb/s), so at most
    // two of Delta = 6 are marked.
    for p in CCS.into_iter().filter(|p| registered(p)) {
        let out = run(p, PBFS, &[(1, 0, 1_000_000, 1.0)]);
        assert_eq!(counter(&out, "pbfs_eligible_flows"), 1, "{p}");
        let marked = counter(&out, "pbt_packets_sent");
        assert!((1..=2).contains(&marked), "{p}: {marked} PBT-triggering packets");
        assert_eq!(out.summary["postcards"]["pbt_packets_seen"], marked, "{p}: the switch saw each once");
    }
}

#[test]
fn an_incast_gets_postcards_and_a_shorter_queue_than_at_line_rate() {
    // 16 x 100 KB into one 25 Gb/s port (the paper's large incast, scaled): PB-FS cuts the
    // senders within the first RTT, at line rate only the CC and the queue do.
    let flows = incast(16, 100_000);
    for p in CCS.into_iter().filter(|p| registered(p)) {
        let fs = run(p, "", &flows);
        let pb = run(p, PBFS, &flows);
        let (received, reductions) = (counter(&pb, "postcards_received"), counter(&pb, "pbfs_rate_reductions"));
        assert_eq!(counter(&pb, "pbfs_eligible_flows"), 16, "{p}");
        assert!(reductions >= 16, "{p}: every sender cut ({reductions} reductions)");
        assert!(received <= 4 * 16, "{p}: {received} postcards for 16 flows (the paper: fewer than 4 each)");
        assert_eq!(counter(&pb, "postcards_from_distance_1"), received, "{p}: one switch");
        let (q_fs, q_pb) = (queue_to_host0(&fs), queue_to_host0(&pb));
        // DCQCN and TIMELY keep sending at line rate until their first cut: PB-FS's early cut
        // more than halves the queue (the paper: 63% and 87% lower maxima; here 61% and 84%).
        // HPCC and rate DCTCP cap each flow's first RTT at one BDP by their window, which is all the
        // queue there is on one switch: PB-FS may not add to it.
        let windowed = p == "hpcc" || p == "dctcp_rate";
        let bound = if windowed { q_fs as f64 } else { 0.5 * q_fs as f64 };
        assert!(q_pb as f64 <= bound, "{p}: max queue {q_pb} with PB-FS vs {q_fs} at line rate");
    }
}

#[test]
fn with_pbfs_every_cc_delivers_a_lossy_incast_exactly_once_and_deterministically() {
    // 16 x 50 KB into 60 KB buffers: drops, recovered by go-back-N and by IRN.
    let flows = incast(16, 50_000);
    for p in CCS.into_iter().filter(|p| registered(p)) {
        for recovery in ["go_back_n", "irn"] {
            let t = format!("{PBFS}\nrecovery = \"{recovery}\"");
            let a = run_with(p, &t, "limit_bytes = 60000", &flows, 3);
            let (ends, sizes, got) =
                (opt_u64s(&a.flows, "end_ps"), u64s(&a.flows, "size_bytes"), u64s(&a.flows, "window_bytes"));
            for i in 0..ends.len() {
                assert!(ends[i].is_some() && got[i] == sizes[i], "{p} {recovery}: flow {i} got {} bytes", got[i]);
            }
            let b = run_with(p, &t, "limit_bytes = 60000", &flows, 3);
            assert_eq!(opt_u64s(&a.flows, "end_ps"), opt_u64s(&b.flows, "end_ps"), "{p} {recovery}: same seed");
            assert_eq!(a.summary["transport"], b.summary["transport"], "{p} {recovery}");
        }
    }
}

#[test]
fn with_pbfs_and_random_loss_on_every_link_every_flow_completes() {
    // 2% of packets lost on every link (data, ACKs, postcards): an incast and two long flows.
    let mut flows = incast(8, 50_000);
    flows.extend([(9, 10, 1_000_000, 1.0), (11, 0, 200_000, 2.0)]);
    for p in CCS.into_iter().filter(|p| registered(p)) {
        for recovery in ["go_back_n", "irn"] {
            let t = format!("{PBFS}\nrecovery = \"{recovery}\"");
            let out = run_on(p, &t, "limit_bytes = 8000000", "", "loss_probability = 0.02", &flows, 2);
            assert!(out.summary["queues"]["losses"].as_u64().unwrap() > 0, "{p} {recovery}: nothing lost");
            let (ends, sizes, got) =
                (opt_u64s(&out.flows, "end_ps"), u64s(&out.flows, "size_bytes"), u64s(&out.flows, "window_bytes"));
            assert!((0..ends.len()).all(|i| ends[i].is_some() && got[i] == sizes[i]), "{p} {recovery}");
        }
    }
}

#[test]
fn postcards_cross_a_lossless_shared_buffer_fabric() {
    // PFC on a 1 MB shared buffer: postcards are admitted (accounted to their data packet's
    // ingress), nothing is dropped, every byte arrives.
    let flows = incast(16, 100_000);
    for p in CCS.into_iter().filter(|p| registered(p)) {
        let out = run_on(p, PBFS, "", "buffer_bytes = 1000000\npfc = true", "", &flows, 1);
        assert_eq!(out.summary["queues"]["drops"], 0, "{p}");
        assert!(counter(&out, "postcards_received") >= 16, "{p}");
        let (ends, sizes, got) =
            (opt_u64s(&out.flows, "end_ps"), u64s(&out.flows, "size_bytes"), u64s(&out.flows, "window_bytes"));
        assert!((0..ends.len()).all(|i| ends[i].is_some() && got[i] == sizes[i]), "{p}");
    }
}

#[test]
fn slow_start_starts_slow_and_queues_less() {
    let flows = incast(16, 100_000);
    for p in CCS.into_iter().filter(|p| registered(p)) {
        let ss = run(p, "fast_start = \"slow_start\"", &flows);
        let fs = run(p, "", &flows);
        // (rate DCTCP's window already caps the incast's queue at 16 BDPs: equal there.)
        let (q_ss, q_fs) = (queue_to_host0(&ss), queue_to_host0(&fs));
        assert!(q_ss < q_fs || (p == "dctcp_rate" && q_ss == q_fs), "{p}: max queue {q_ss} in slow start vs {q_fs}");
        // A lone flow ramps from 1 Gb/s: later than at line rate.
        let lone = [(1, 0, 200_000, 1.0)];
        let (a, b) = (run(p, "fast_start = \"slow_start\"", &lone), run(p, "", &lone));
        let (ea, eb) = (opt_u64s(&a.flows, "end_ps")[0].unwrap(), opt_u64s(&b.flows, "end_ps")[0].unwrap());
        assert!(ea > eb + 10_000_000, "{p}: slow start {ea} ps vs line rate {eb} ps");
        assert_eq!(counter(&a, "slow_start_handovers"), 1, "{p}: reaches line rate and hands over");
    }
}

#[test]
fn bad_keys_name_the_field() {
    let base = "seed = 1\nduration_us = 10.0\n[topology]\nkind = \"single_switch\"\nhosts = 2\nhost_rate_gbps = 25.0\n\
                [[workload]]\nkind = \"incast\"\nsenders = 1\nsize_bytes = 1000\nat_us = 0.0\n";
    let cases = [
        ("[transport]\nprotocol = \"dcqcn\"\nfast_start = \"pbfs\"\n", "transport.fast_start", "postcards = true"),
        ("[transport]\nprotocol = \"dcqcn\"\npbfs_target_utilization = 0.9\n", "pbfs_target_utilization", "only used"),
        ("[switch]\npostcard_slots = 4\n[transport]\nprotocol = \"dcqcn\"\n", "postcard_slots", "only used"),
        (
            "[switch]\npostcards = true\npostcard_slots = 0\n[transport]\nprotocol = \"dcqcn\"\n",
            "postcard_slots",
            "must be",
        ),
        ("[transport]\nprotocol = \"dcqcn\"\nfast_start = \"fast\"\n", "fast_start", "line_rate"),
        (
            "[switch]\npostcards = true\n[transport]\nprotocol = \"dctcp\"\nfast_start = \"slow_start\"\n",
            "transport.fast_start",
            "own slow_start key",
        ),
    ];
    for (extra, field, words) in cases {
        let err = dcnsim_core::api::run(&spec(&format!("{base}{extra}")), &Default::default())
            .err()
            .unwrap_or_else(|| panic!("{extra} accepted"))
            .to_string();
        assert!(err.contains(field) && err.contains(words), "{extra}: {err}");
    }
}

/// PB-FS over window controllers that start with a window of about one BDP (fast start for a
/// window sender): here 25 Gb/s x ~5 us = 15.6 KB, 11 segments of 1436 bytes.
const WINDOW_CCS: [&str; 2] = ["dctcp", "swift"];
const ONE_BDP_WINDOW: &str = "initial_window_packets = 11";

#[test]
fn window_ccs_with_pbfs_take_postcard_cuts_and_leave_short_flows_alone() {
    let big = incast(16, 100_000);
    let short = incast(16, 3000);
    for p in WINDOW_CCS.into_iter().filter(|p| registered(p)) {
        let fs = run(p, ONE_BDP_WINDOW, &big);
        let pb = run(p, &format!("{ONE_BDP_WINDOW}\n{PBFS}"), &big);
        assert_eq!(counter(&pb, "pbfs_eligible_flows"), 16, "{p}");
        let (marked, received) = (counter(&pb, "pbt_packets_sent"), counter(&pb, "postcards_received"));
        assert!((16..=32).contains(&marked), "{p}: {marked} PBT packets (one or two per flow before its first ACK)");
        assert_eq!(pb.summary["postcards"]["pbt_packets_seen"], marked, "{p}");
        assert!(counter(&pb, "pbfs_rate_reductions") >= 16, "{p}: every sender's window cut");
        assert!(received <= 4 * 16, "{p}: {received} postcards for 16 flows");
        let (q_fs, q_pb) = (queue_to_host0(&fs), queue_to_host0(&pb));
        eprintln!("{p}: max queue {q_fs} without, {q_pb} with PB-FS; marked {marked}, postcards {received}");
        // The first RTT's windows (16 x one BDP) are the queue PB-FS cannot prevent; DCTCP's slow
        // start would double them in the second RTT, PB-FS's cut (to about 1/16 each) stops that.
        // Swift's delay target keeps its second RTT near the first already.
        let bound = if p == "dctcp" { 0.85 * q_fs as f64 } else { q_fs as f64 - 1.0 };
        assert!(q_pb as f64 <= bound, "{p}: max queue {q_pb} with PB-FS vs {q_fs} without");
        assert_eq!(u64s(&pb.flows, "end_ps").len(), 16);
        // Flows shorter than tau: nothing marks, nothing changes.
        let off = run(p, ONE_BDP_WINDOW, &short);
        let on = run(p, &format!("{ONE_BDP_WINDOW}\n{PBFS}"), &short);
        assert_eq!((counter(&on, "pbfs_eligible_flows"), counter(&on, "pbt_packets_sent")), (0, 0), "{p}");
        assert_eq!(opt_u64s(&on.flows, "end_ps"), opt_u64s(&off.flows, "end_ps"), "{p}: short flows are untouched");
    }
}

/// `dcnsim describe` lists under each protocol only the start keys it reads: the slow-start rate
/// under the protocols whose `fast_start` offers `slow_start` (the rate sender's), not under the
/// window protocols, which offer only line_rate and pbfs; both list the PB-FS keys.
#[test]
fn describe_lists_the_slow_start_rate_only_where_slow_start_is_a_mode() {
    let d = dcnsim_core::api::describe();
    let key = |name: &str, path: &str| d.params.iter().find(|p| p.scope == Some(name) && p.path == path).cloned();
    let (mut with, mut without) = (0, 0);
    for (name, _) in dcnsim_core::transport::protocols() {
        let Some(mode) = key(name, "transport.fast_start") else { continue };
        let slow = mode.kind.contains("slow_start");
        let listed = key(name, "transport.slow_start_initial_rate_gbps").is_some();
        assert_eq!(listed, slow, "{name}: fast_start is {}, slow_start_initial_rate_gbps listed: {listed}", mode.kind);
        assert!(key(name, "transport.pbfs_marking_distance_packets").is_some(), "{name}: PB-FS keys not listed");
        (with, without) = if slow { (with + 1, without) } else { (with, without + 1) };
    }
    assert!(with >= 3 && without >= 3, "rate protocols {with}, window protocols {without}");
    for (name, slow) in [("dcqcn", true), ("dctcp", false)] {
        if registered(name) {
            assert_eq!(key(name, "transport.fast_start").unwrap().kind.contains("slow_start"), slow, "{name}");
        }
    }
}
