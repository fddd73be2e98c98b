//! NDP and pHost end to end on a small fat tree (through the test harness): strays, loss. The
//! connection and pull-queue invariants are checked after every handler (debug builds).

use super::{Ndp, NdpConfig};
use crate::net::packet::{Packet, PacketKind};
use crate::scenario::reader::Section;
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
    // NACKs, pulls, returned headers), so that the RTO and cumulative pull numbers must recover.
    for protocol in ["ndp", "phost"] {
        for (data_loss, control_loss) in [(0.01, 0.0), (0.0, 0.05), (0.05, 0.05), (0.2, 0.2)] {
            let keys = serde_json::json!({"min_rto_us": 200.0, "initial_rto_us": 500.0});
            let mut tb =
                Testbed::new(&net(protocol), &incast(), make(protocol, keys)).with_loss(data_loss, control_loss);
            tb.run(u64::MAX);
            tb.assert_all_complete();
            assert!(tb.lost > 0, "{protocol} loss {data_loss}/{control_loss}: packets were lost");
            let timeouts = tb.proto.counters().iter().find(|c| c.0 == "timeouts").unwrap().1;
            assert!(timeouts > 0, "{protocol} loss {data_loss}/{control_loss}: the RTO recovered something");
        }
    }
}
