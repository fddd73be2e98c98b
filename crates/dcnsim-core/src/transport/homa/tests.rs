//! Homa end to end on a small network through the test harness: the overcommitment bound on the
//! receiver's grants, and recovery from random loss (RESEND, BUSY, probes).

use super::{Homa, HomaConfig};
use crate::scenario::read_spec;
use crate::time::from_us;
use crate::transport::registry::TransportConfig;
use crate::transport::testbed::{FlowSpec, Testbed};

const NET: &str = "seed = 3\nduration_us = 1.0\n[topology]\nkind = \"single_switch\"\nhosts = 7\n\
    host_rate_gbps = 10.0\nhost_delay_us = 1.0\n[queue]\npriorities = 8\n\
    [transport]\nprotocol = \"homa\"\novercommitment = 2\ntimeout_us = 50.0\n\
    [[workload]]\nkind = \"incast\"\nsenders = 1\nsize_bytes = 1\nat_us = 0.0\n";

fn config() -> HomaConfig {
    let v: toml::Value = toml::from_str(NET).unwrap();
    let (spec, _) = read_spec(&serde_json::to_value(v).unwrap()).unwrap();
    match &spec.transports[0].config {
        TransportConfig::Homa(c) => c.clone(),
        other => panic!("not Homa: {other:?}"),
    }
}

/// Messages from hosts 1..=5 to host 0, started 0.1 us apart and each 50 KB longer than the one
/// before, so the receiver's SRPT order is the start order throughout (no active message is ever
/// displaced by a shorter newcomer).
fn staggered() -> Vec<FlowSpec> {
    (1..=5u32).map(|s| (s, 0, 200_000 + 50_000 * s as u64, from_us(0.1 * s as f64))).collect()
}

#[test]
fn a_receiver_grants_only_its_k_shortest_scheduled_messages_each_up_to_rtt_bytes() {
    let cfg = config();
    let mut tb = Testbed::new(NET, &staggered(), |env| Homa::new(&cfg, env));
    let (k, rtt) = (cfg.overcommitment as usize, tb.proto.rtt_packets);
    let mut most = 0;
    let mut t = 0;
    while t < from_us(2000.0) {
        t += from_us(0.5);
        tb.run(t);
        let h = &tb.proto;
        // Messages still being scheduled (packets left to grant) that hold scheduled grants whose
        // data has not all arrived. (A fully granted message leaves the scheduler: its last
        // RTTbytes are outstanding while the next message is granted, as in Homa.)
        let listed: Vec<&super::state::Msg> =
            (0..5u32).filter_map(|id| h.msgs.slot(id).map(|s| &h.msgs[s])).filter(|m| m.rx_listed).collect();
        let granted: Vec<(u32, u64)> = listed
            .iter()
            .filter(|m| m.rx_granted > m.unsched && m.outstanding() > 0)
            .map(|m| (m.id, m.outstanding()))
            .collect();
        assert!(granted.len() <= k, "at {t} ps: {granted:?} hold grants, k = {k}");
        assert!(granted.iter().all(|&(_, o)| o <= rtt), "at {t} ps: more than RTTbytes outstanding: {granted:?}");
        // And they are the shortest of the messages being scheduled.
        let shortest: Vec<u32> = listed.iter().take(k).map(|m| m.id).collect();
        assert!(granted.iter().all(|(id, _)| shortest.contains(id)), "at {t} ps: {granted:?} vs {shortest:?}");
        most = most.max(granted.len());
    }
    assert_eq!(most, k, "the receiver overcommits to exactly k messages");
    tb.assert_all_complete();
    // Completion in SRPT order.
    let ends: Vec<u64> = (0..5).map(|id| tb.flows.get(id).end.unwrap()).collect();
    assert!(ends.windows(2).all(|w| w[0] < w[1]), "{ends:?}");
}

#[test]
fn random_loss_of_every_kind_is_recovered() {
    let cfg = config();
    let mut flows = staggered();
    // Short messages too (entirely unscheduled), some sharing senders with the long ones.
    for i in 0..12u32 {
        flows.push((1 + i % 6, (i + 2) % 7, 1_000 + 3_000 * i as u64, from_us(5.0 * i as f64)));
    }
    flows.retain(|f| f.0 != f.1);
    flows.sort_by_key(|f| f.3);
    for seed_loss in [0.02, 0.1] {
        let mut tb = Testbed::new(NET, &flows, |env| Homa::new(&cfg, env)).with_loss(seed_loss, seed_loss);
        tb.run(from_us(1e6));
        assert!(tb.lost > 0);
        tb.assert_all_complete();
        let h = &tb.proto;
        for id in 0..flows.len() as u32 {
            assert!(h.msgs.slot(id).is_none(), "loss {seed_loss}: message {id} still has state");
        }
        assert!(h.counters.resend_requests > 0 && h.counters.retransmitted > 0, "loss {seed_loss}");
        for host in &h.hosts {
            assert!(host.ready.is_empty() && host.inbound.is_empty());
        }
    }
}
