//! SIRD end to end on a small network through the test harness: stray packets of every kind and
//! random loss leave every message complete and every credit account at zero (the invariants are
//! checked after each handler as well, in these debug-assertion builds).

use super::{Sird, SirdConfig, CSN, PROBE};
use crate::net::packet::{flags, Packet, PacketKind};
use crate::scenario::read_spec;
use crate::time::from_us;
use crate::transport::registry::TransportConfig;
use crate::transport::testbed::{FlowSpec, Testbed};

const NET: &str = "seed = 3\nduration_us = 1.0\n[topology]\nkind = \"single_switch\"\nhosts = 6\n\
    host_rate_gbps = 10.0\nhost_delay_us = 1.0\n[queue]\npriorities = 2\n\
    [transport]\nprotocol = \"sird\"\ntimeout_us = 30.0\n\
    [[workload]]\nkind = \"incast\"\nsenders = 1\nsize_bytes = 1\nat_us = 0.0\n";

fn config() -> SirdConfig {
    let v: toml::Value = toml::from_str(NET).unwrap();
    let (spec, _) = read_spec(&serde_json::to_value(v).unwrap()).unwrap();
    match &spec.transports[0].config {
        TransportConfig::Sird(c) => c.clone(),
        other => panic!("not SIRD: {other:?}"),
    }
}

/// One 1 MB message 5 -> 1, and unscheduled (1 KB, 5 KB), unscheduled plus scheduled (one BDP
/// and more: 30 KB) and scheduled messages (200 KB) from hosts 1-4 to host 0. In start order, so
/// flow ids are indexes.
fn flows() -> Vec<FlowSpec> {
    let mut f: Vec<FlowSpec> = vec![(5, 1, 1_000_000, 0)];
    for (i, size) in [1_000u64, 5_000, 30_000, 200_000].into_iter().enumerate() {
        for s in 1..=4u32 {
            f.push((s, 0, size + s as u64, from_us(i as f64 * 3.0)));
        }
    }
    f
}

fn testbed() -> Testbed<Sird> {
    let cfg = config();
    Testbed::new(NET, &flows(), |env| Sird::new(&cfg, env))
}

fn assert_settled(tb: &Testbed<Sird>) {
    assert_settled_flows(tb, flows().len());
}

/// Every credit account is back to zero and the `n` messages are complete and freed.
fn assert_settled_flows(tb: &Testbed<Sird>, n: usize) {
    tb.assert_all_complete();
    let s = &tb.proto;
    for (h, host) in s.hosts.iter().enumerate() {
        assert_eq!((host.b, host.unscheduled, host.credit), (0, 0, 0), "host {h}: b, unscheduled, credit held");
        assert!(host.inbound.is_empty() && host.ready_pairs.is_empty() && host.ready == 0, "host {h}");
        assert_eq!((host.sending_receivers, host.unsent_msgs), (0, 0), "host {h}");
    }
    for (i, p) in s.pairs.iter().enumerate() {
        assert_eq!((p.credit, p.sb, p.unsent, p.ready), (0, 0, 0, 0), "pair {i}");
        assert!(p.msgs.is_empty(), "pair {i}: messages left");
    }
    for id in 0..n as u32 {
        assert!(s.conns.slot(id).is_none(), "flow {id} still has state");
    }
}

/// Packets of every kind for flows `0..=n` (flow n does not exist), both ways between the flow's
/// hosts: copies of real packets, stale feedback, and values no real packet carries.
fn strays(n: u32, flows: &[FlowSpec], bdp: u64) -> Vec<Packet> {
    let kinds = PacketKind::ALL;
    let mut out = Vec::new();
    for f in 0..=n {
        let (src, dst, size) = flows.get(f as usize).map(|f| (f.0, f.1, f.2)).unwrap_or((2, 3, 5000));
        let packets = size.div_ceil(1436);
        let prefix = if size <= bdp { size.min(bdp).div_ceil(1436) } else { 0 };
        for kind in kinds {
            for (a, b) in [(src, dst), (dst, src)] {
                for (seq, ack, aux) in [
                    (0, size, prefix),
                    (1, size, prefix),
                    (packets - 1, size, prefix),
                    (packets - 1, packets, prefix),
                    (0, packets / 2, 1),
                    (0, 0, 0),
                    (1, 1, 1),
                    (u64::MAX / 2, u64::MAX / 2, u32::MAX as u64),
                ] {
                    for fl in [0, CSN | flags::CE, PROBE] {
                        let mut p = Packet::new(kind, f, a, b, 100);
                        p.payload = if kind == PacketKind::Data { 1436 } else { 0 };
                        (p.seq, p.ack, p.aux, p.flags) = (seq, ack, aux as u32, fl);
                        out.push(p);
                    }
                }
            }
        }
    }
    out
}

#[test]
fn the_strays_know_the_flow_ids_mss_and_bdp() {
    let mut tb = testbed();
    assert_eq!(tb.framing.mss(), 1436);
    tb.run(from_us(10.0));
    for (id, f) in flows().iter().enumerate() {
        let r = tb.flows.get(id as u32);
        assert_eq!((r.src, r.dst, r.size), (f.0, f.1, f.2), "flow {id}");
    }
    assert!(tb.proto.p.bdp > 5_000 && tb.proto.p.bdp < 30_000, "{}", tb.proto.p.bdp);
}

#[test]
fn stray_duplicate_and_unknown_packets_are_ignored() {
    let flows = flows();
    let mut tb = testbed();
    let bdp = tb.proto.p.bdp;
    // Injected as the messages start and while they run: copies, stale feedback and nonsense.
    for at_us in [0.0, 5.0, 12.0, 60.0, 300.0] {
        tb.run(from_us(at_us));
        for p in strays(flows.len() as u32, &flows, bdp) {
            tb.inject(p);
        }
    }
    tb.run(u64::MAX);
    assert_settled(&tb);
    let ends: Vec<_> = tb.flows.records.iter().map(|r| r.end).collect();
    // After the messages are gone: everything again.
    for p in strays(flows.len() as u32, &flows, bdp) {
        tb.inject(p);
    }
    tb.run(u64::MAX);
    assert_eq!(tb.flows.records.iter().map(|r| r.end).collect::<Vec<_>>(), ends);
    assert!(tb.events.peek_time().is_none(), "strays of finished messages cause no further events");
    assert_settled(&tb);
}

#[test]
fn every_message_completes_and_every_credit_returns_under_random_loss() {
    for (data_loss, control_loss) in [(0.0, 0.0), (0.02, 0.0), (0.0, 0.1), (0.1, 0.1), (0.3, 0.3)] {
        let mut tb = testbed().with_loss(data_loss, control_loss);
        tb.run(u64::MAX);
        assert_settled(&tb);
        let counters = tb.proto.counters();
        let get = |name: &str| counters.iter().find(|c| c.0 == name).unwrap().1;
        if data_loss + control_loss == 0.0 {
            assert_eq!(tb.lost, 0);
            // (Senders may probe: a message SRPT keeps waiting hears nothing for a while.)
            assert_eq!((get("retransmitted_packets"), get("receiver_timeouts")), (0, 0), "{counters:?}");
        } else {
            assert!(tb.lost > 0, "loss {data_loss}/{control_loss}: packets were lost");
            assert!(get("receiver_timeouts") + get("sender_probes") > 0, "loss {data_loss}/{control_loss}");
        }
        if data_loss > 0.0 {
            assert!(get("retransmitted_packets") > 0, "loss {data_loss}: data was resent");
        }
    }
}

#[test]
fn a_lone_unscheduled_message_meets_the_exact_ideal() {
    let cfg = config();
    for size in [1u64, 1436, 1437, 5_000] {
        let mut tb = Testbed::new(NET, &[(2, 3, size, from_us(1.0))], |env| Sird::new(&cfg, env));
        tb.run(u64::MAX);
        assert_settled_flows(&tb, 1);
        assert_eq!(tb.fct(0), Some(tb.ideal_fct(0)), "{size} B");
    }
}
