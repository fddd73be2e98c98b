//! NDP and pHost end to end on a small fat tree (through the test harness): strays, loss. The
//! connection and pull-queue invariants are checked after every handler (debug builds).

use super::{Ndp, NdpConfig};
use crate::net::packet::{LoadBalancing, Packet, PacketKind};
use crate::spec_reader::Section;
use crate::transport::testbed::{FlowSpec, Testbed};
use crate::transport::{Protocol, TransportEnv};

/// k = 4 fat tree at 10 Gb/s, 9 KB packets, 8-packet queues: trimming for NDP, drop-tail for pHost.
fn net(protocol: &str) -> String {
    let (queue, lb) = match protocol {
        "ndp" => ("trim = true\nscheduling = \"wrr\"\nwrr_weights = [10, 1]\n", "source"),
        _ => ("", "spray"),
    };
    format!(
        "seed = 3\nduration_us = 1.0\n[net]\nmtu_bytes = 9000\n\
         [topology]\nkind = \"fat_tree\"\nk = 4\nhost_rate_gbps = 10.0\n\
         [queue]\npriorities = 2\nlimit_packets = 8\n{queue}[routing]\nload_balancing = \"{lb}\"\n\
         [transport]\nprotocol = \"{protocol}\"\n\
         [[workload]]\nkind = \"incast\"\nsenders = 1\nsize_bytes = 1\nat_us = 0.0\n"
    )
}

/// The protocol with its defaults (and the key values given in `keys`).
fn make(protocol: &'static str, keys: serde_json::Value) -> impl FnOnce(&TransportEnv) -> Ndp {
    move |env| {
        let table = keys.as_object().cloned().unwrap_or_default();
        let mut s = Section::new("transport", &table);
        let cfg = NdpConfig::read(&mut s, env.load_balancing, protocol == "phost").unwrap();
        s.finish().unwrap();
        <Ndp as Protocol>::new(&cfg, env)
    }
}

/// An 8-to-1 incast of flows of different sizes (one packet to 60), plus a flow the other way.
fn incast() -> Vec<FlowSpec> {
    let mut flows: Vec<FlowSpec> = (1..9).map(|s| (s * 2 - 1, 0, 1 + s as u64 * 67_000, 0)).collect();
    flows.push((0, 15, 300_000, 5_000_000));
    flows
}

/// Packets of every kind for the flows and an unknown one, in both directions. Data and headers
/// are early copies of real packets or beyond the flow's end. Feedback and pulls are beyond
/// anything sent, unless `plausible` (for flows that are over: an ACK or a pull number that a
/// live flow could be waiting for is indistinguishable from the real one).
fn strays(flows: &[FlowSpec], plausible: bool) -> Vec<Packet> {
    let mut out = Vec::new();
    for f in 0..=flows.len() {
        let (src, dst) = flows.get(f).map_or((2, 3), |x| (x.0, x.1));
        for kind in [
            PacketKind::Data,
            PacketKind::Header,
            PacketKind::Ack,
            PacketKind::Nack,
            PacketKind::Pull,
            PacketKind::Bounced,
            PacketKind::Credit,
            PacketKind::CreditRequest,
            PacketKind::Control,
        ] {
            let arrival = matches!(kind, PacketKind::Data | PacketKind::Header);
            for (a, b) in [(src, dst), (dst, src)] {
                for (seq, ack) in [(0, 0), (1, 1), (u64::MAX / 2, u64::MAX / 2)] {
                    if !(arrival || plausible || seq == u64::MAX / 2 || (kind == PacketKind::Pull && ack == 0)) {
                        continue;
                    }
                    let mut p = Packet::new(kind, f as u32, a, b, 100);
                    if kind == PacketKind::Data {
                        p.payload = 8936;
                        p.prio = 1; // data never shares the header class of a trimming queue
                    }
                    p.seq = seq;
                    p.ack = ack;
                    p.flags = if kind == PacketKind::Ack && seq == 1 { super::PULL_BIT } else { 0 };
                    out.push(p);
                }
            }
        }
    }
    out
}

#[test]
fn stray_duplicate_and_unknown_packets_are_ignored() {
    for protocol in ["ndp", "phost"] {
        let flows = incast();
        let mut tb = Testbed::new(&net(protocol), &flows, make(protocol, serde_json::json!({})));
        // Injected at the start: they arrive mid-flow, as duplicates, forgeries and nonsense.
        for p in strays(&flows, false) {
            tb.inject(p);
        }
        tb.run(u64::MAX);
        tb.assert_all_complete();
        let ends: Vec<_> = tb.flows.records.iter().map(|r| r.end).collect();
        // After the flows are gone: everything again.
        for p in strays(&flows, true) {
            tb.inject(p);
        }
        tb.run(u64::MAX);
        assert_eq!(tb.flows.records.iter().map(|r| r.end).collect::<Vec<_>>(), ends, "{protocol}");
        assert!(tb.events.peek_time().is_none(), "{protocol}: strays of finished flows cause no further events");
    }
}

#[test]
fn every_flow_completes_under_random_loss() {
    // Loss at the receiving host: data (true loss, beyond trimming), and control packets (ACKs,
    // NACKs, pulls, returned headers), so that NDP's RTO and cumulative pull numbers, and pHost's
    // re-issued tokens, must recover.
    for protocol in ["ndp", "phost"] {
        for (data_loss, control_loss) in [(0.01, 0.0), (0.0, 0.05), (0.05, 0.05), (0.2, 0.2)] {
            let keys = serde_json::json!({"min_rto_us": 200.0, "initial_rto_us": 500.0});
            let mut tb =
                Testbed::new(&net(protocol), &incast(), make(protocol, keys)).with_loss(data_loss, control_loss);
            tb.run(u64::MAX);
            tb.assert_all_complete();
            assert!(tb.lost > 0, "{protocol} loss {data_loss}/{control_loss}: packets were lost");
            let recovery = if protocol == "ndp" { "timeouts" } else { "reissued_tokens" };
            let n = tb.proto.counters().iter().find(|c| c.0 == recovery).unwrap().1;
            assert!(n > 0, "{protocol} loss {data_loss}/{control_loss}: {recovery} recovered something");
        }
    }
}

#[test]
fn queued_retransmissions_wait_for_pulls_without_timeouts() {
    // 15 x 2 MB into one host with a 1 ms RTO: headers are trimmed and returned in the first RTT,
    // and the queued retransmissions wait their turn at the receiver's round robin while the run
    // lasts many RTOs. Pulls keep coming, nothing is lost, so no timeout may fire (htsim never
    // times out a queued retransmission).
    let flows: Vec<FlowSpec> = (1..16).map(|s| (s, 0, 2_000_000, 0)).collect();
    let keys = serde_json::json!({"min_rto_us": 1000.0, "initial_rto_us": 1000.0});
    let mut tb = Testbed::new(&net("ndp"), &flows, make("ndp", keys));
    tb.run(u64::MAX);
    tb.assert_all_complete();
    let counter = |name: &str| tb.proto.counters().iter().find(|c| c.0 == name).unwrap().1;
    assert!(counter("nacks") + counter("bounces") > 0, "the incast trimmed packets");
    assert!(tb.flows.records.iter().any(|r| r.end.unwrap() > 20_000_000_000), "the incast lasts 20 RTOs");
    assert_eq!(counter("timeouts"), 0, "no timeout without a loss");
}

#[test]
fn the_timeout_follows_the_rto_down_from_its_initial_value() {
    // NDP with 2% of data packets lost at the receiver: the losses are found by the RTO, whose
    // deadline must fall with the first RTT samples to its 1 ms floor rather than wait out the
    // 20 ms initial RTO.
    let keys = serde_json::json!({"min_rto_us": 1000.0});
    let mut tb = Testbed::new(&net("ndp"), &incast(), make("ndp", keys)).with_loss(0.02, 0.0);
    tb.run(u64::MAX);
    tb.assert_all_complete();
    assert!(tb.lost > 0 && tb.proto.counters().iter().any(|c| c.0 == "timeouts" && c.1 > 0));
    let last = tb.flows.records.iter().map(|r| r.end.unwrap()).max().unwrap();
    assert!(last < 15_000_000_000, "last flow ends at {} us", last / 1_000_000);
}

#[test]
fn phost_recovers_drop_tail_losses_by_reissuing_tokens() {
    // 8 first windows of 8 packets overflow the receiver's 8-packet drop-tail queue: the receiver
    // (told of each flow by its request) re-issues the tokens of the lost packets, without any
    // sender timeout, long before the 20 ms initial RTO.
    let flows: Vec<FlowSpec> = (1..9).map(|s| (s * 2 - 1, 0, 200_000, 0)).collect();
    let mut tb = Testbed::new(&net("phost"), &flows, make("phost", serde_json::json!({})));
    tb.run(u64::MAX);
    tb.assert_all_complete();
    let counter = |name: &str| tb.proto.counters().iter().find(|c| c.0 == name).unwrap().1;
    assert!(counter("reissued_tokens") > 0 && counter("timeouts") == 0);
    let last = tb.flows.records.iter().map(|r| r.end.unwrap()).max().unwrap();
    assert!(last < 5_000_000_000, "last flow ends at {} us", last / 1_000_000);
}

#[test]
fn a_phost_flow_is_paced_by_its_token_window() {
    // A lone 200-packet flow between pods: with a window of 8 tokens (one BDP here) the
    // receiver's tokens run at line rate; with 2 each token waits for the echo of the one two
    // before it, so the flow moves 2 packets per token round trip, and takes about
    // RTT / (2 packet times) as long.
    let fct = |window: u64| {
        let keys = serde_json::json!({"token_window_packets": window, "initial_window_packets": window});
        let mut tb = Testbed::new(&net("phost"), &[(15, 0, 1_787_200, 0)], make("phost", keys));
        tb.run(u64::MAX);
        tb.assert_all_complete();
        tb.flows.records[0].end.unwrap() as f64
    };
    let (wide, narrow) = (fct(8), fct(2));
    let ideal = 200.0 * 9000.0 * 8.0 / 10.0 * 1000.0; // ps at 10 Gb/s
    assert!(wide < ideal * 1.05, "window 8: {wide} ps, ideal {ideal}");
    // The token and data round trip across the k = 4 tree, six 9 KB store-and-forwards of the
    // data plus the token's way and the link delays, is about 7.5 packet times (54 us): 2 tokens
    // per round trip take about 3.7x as long.
    assert!(narrow > wide * 3.2 && narrow < wide * 4.2, "window 2: {narrow} ps vs {wide}");
}

#[test]
fn phost_tokens_name_only_missing_packets_and_rounds_recover_losses() {
    // 5% of data lost at the receiver: every loss is recovered by a later round of tokens over
    // the missing packets (no sender timeout: the receiver knows each flow), and no token names a
    // packet already received (debug-asserted in `send_token`). A round starts 9 packet times
    // after the last one, when some of its last window may still be on the way (the authors'
    // pause is shorter than a loaded RTT): those are sent twice, but far fewer than every lost
    // packet's worth (the earlier per-token timeout model resent ~40% of all packets here).
    let flows: Vec<FlowSpec> = (1..5).map(|s| (s, 0, 446_800, 0)).collect();
    let mut tb = Testbed::new(&net("phost"), &flows, make("phost", serde_json::json!({}))).with_loss(0.05, 0.0);
    tb.run(u64::MAX);
    tb.assert_all_complete();
    let counter = |name: &str| tb.proto.counters().iter().find(|c| c.0 == name).unwrap().1;
    assert!(tb.lost > 0 && counter("token_rounds") > 0 && counter("reissued_tokens") >= tb.lost);
    assert_eq!(counter("timeouts"), 0);
    let duplicates = counter("data_packets_sent") - 200 - tb.lost;
    assert!(duplicates * 5 < 200, "{duplicates} packets sent twice needlessly");
}

#[test]
fn a_queued_pull_takes_the_path_of_the_feedback_that_owes_it_and_arrives_after_it() {
    // A one-packet flow whose packet is trimmed gets one NACK and one pull; a pull sprayed on its
    // own can overtake the NACK, find nothing to resend, and leave the packet queued until the RTO
    // (the 20 ms tail of NDP's Fig. 23 before this). htsim's pacer sends a copy of the ACK or NACK,
    // on its path: so here every pull shares its ECMP key with a feedback packet of its flow that
    // reached the sender before it.
    let mut flows: Vec<FlowSpec> = (4..16).map(|s| (s, s % 2, 3_000_000, 0)).collect();
    flows.extend((0..200u64).map(|i| (2 + (i % 14) as u32, (i % 2) as u32, 1_000, 100_000_000 + i * 2_000_000)));
    let mut tb = Testbed::new(&net("ndp"), &flows, make("ndp", serde_json::json!({})));
    tb.recording = true;
    tb.run(u64::MAX);
    tb.assert_all_complete();
    let mut feedback_seen = std::collections::HashSet::new();
    let mut pulls = 0;
    for (_, p) in &tb.delivered {
        match p.kind {
            PacketKind::Ack | PacketKind::Nack => {
                assert_eq!(p.lb, LoadBalancing::Ecmp, "feedback carries its pull's ECMP key");
                feedback_seen.insert((p.flow, p.path));
            }
            PacketKind::Pull => {
                pulls += 1;
                assert!(
                    feedback_seen.contains(&(p.flow, p.path)),
                    "pull {} of flow {} before its feedback",
                    p.ack,
                    p.flow
                );
            }
            _ => {}
        }
    }
    assert!(pulls > 100, "pulls were queued at the pacer ({pulls})");
}
