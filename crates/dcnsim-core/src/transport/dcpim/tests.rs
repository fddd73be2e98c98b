//! dcPIM's signature effect through the test harness, on the paper's fabric (100 Gb/s hosts,
//! 400 Gb/s core, 0.65 us links): for a permutation, a perfect matching forms within the stated
//! rounds of the first epoch (every receiver matched to its sender on all k channels), no long flow
//! sends before it is installed, and from then on every sender sends at line rate (less the
//! tokens it sends as a receiver). Also: the
//! timing derived from the fabric, and flows complete under random loss.

use super::{Dcpim, DcpimConfig};
use crate::scenario::read_spec;
use crate::time::{from_us, Time};
use crate::transport::registry::TransportConfig;
use crate::transport::testbed::{FlowSpec, Testbed};

fn net(transport: &str) -> String {
    format!(
        "seed = 5\nduration_us = 1.0\n[topology]\nkind = \"leaf_spine\"\nracks = 2\nhosts_per_rack = 4\nspines = 2\n\
         host_rate_gbps = 100.0\ncore_rate_gbps = 400.0\nhost_delay_us = 0.65\ncore_delay_us = 0.65\n\
         [queue]\npriorities = 3\n[routing]\nload_balancing = \"spray\"\n\
         [transport]\nprotocol = \"dcpim\"\n{transport}\n\
         [[workload]]\nkind = \"incast\"\nsenders = 1\nsize_bytes = 1\nat_us = 0.0\n"
    )
}

fn config(text: &str) -> DcpimConfig {
    let v: toml::Value = toml::from_str(text).unwrap();
    let (spec, _) = read_spec(&serde_json::to_value(v).unwrap()).unwrap();
    match &spec.transports[0].config {
        TransportConfig::Dcpim(c) => c.clone(),
        other => panic!("not dcPIM: {other:?}"),
    }
}

fn testbed(transport: &str, flows: &[FlowSpec]) -> Testbed<Dcpim> {
    let text = net(transport);
    let cfg = config(&text);
    Testbed::new(&text, flows, |env| Dcpim::new(&cfg, env))
}

/// Host i sends 4 MB to host (i + 3) mod 8 (within and across racks), all at time 0.
fn permutation() -> Vec<FlowSpec> {
    (0..8u32).map(|i| (i, (i + 3) % 8, 4_000_000, 0)).collect()
}

/// When the first epoch's matching is installed: the first epoch boundary after the RTSs
/// arrive (the clock starts then), plus r rounds.
fn first_install(tb: &Testbed<Dcpim>) -> Time {
    let p = tb.proto.p;
    let rounds = tb.proto.cfg.rounds as u64;
    p.data_phase() + 2 * rounds * p.half_round
}

#[test]
fn timing_follows_the_fabric_as_the_simulator_derives_it() {
    let tb = testbed("", &[]);
    let p = tb.proto.p;
    // Control RTT across the spine: 8 links of 0.65 us, 64 B at 100 and 400 Gb/s each way.
    let crtt = 8 * 650_000 + 2 * (2 * 5_120 + 2 * 1_280);
    assert_eq!(p.crtt, crtt);
    assert_eq!(2 * p.half_round, (1.3 * crtt as f64).round() as u64 / 2 * 2);
    assert_eq!(p.epoch_ticks, 8, "alpha = 1: the data phase is r = 4 rounds");
    assert_eq!(p.pkt_time, 120_000);
    // The simulator's 100 Gb/s numbers: ~54 packets per channel per data phase, a 49-packet BDP.
    assert!((50..=58).contains(&p.link_pkts), "{}", p.link_pkts);
    assert!((45..=52).contains(&p.bdp_pkts), "{}", p.bdp_pkts);
}

#[test]
fn a_permutation_is_perfectly_matched_in_the_first_epoch_and_then_sends_at_line_rate() {
    for rounds in [1, 4] {
        let mut tb = testbed(&format!("rounds = {rounds}\nsrpt_rounds = 1"), &permutation());
        let install = first_install(&tb);
        tb.run(install - 1);
        assert!(tb.flows.delivered_per_flow.iter().all(|&d| d == 0), "r = {rounds}: no long flow sends unmatched");
        // Round 1 already matched everyone: one request and grant per pair, nothing after...
        let c = &tb.proto.counters;
        assert_eq!((c.requests, c.grants), (8, 8), "r = {rounds}");
        tb.run(install);
        // ... and one accept each (the last round's accepts come at the install).
        let c = &tb.proto.counters;
        assert_eq!((c.accepts, c.rejects, c.matched_channels), (8, 0, 8 * 4), "r = {rounds}");
        let k = tb.proto.cfg.channels;
        for (i, h) in tb.proto.hosts.iter().enumerate() {
            let sender = (i as u32 + 5) % 8;
            let links: Vec<(u32, u32)> = h.links.iter().map(|l| (l.peer, l.channels)).collect();
            assert_eq!(links, vec![(sender, k)], "r = {rounds}: receiver {i} is matched to its sender on all channels");
        }
        // Line rate from one token round trip after the install on, over several epochs (each
        // re-matches the permutation in its first round while the current one sends).
        let t1 = install + from_us(8.0);
        let t2 = t1 + from_us(100.0);
        tb.run(t1);
        let before = tb.flows.delivered_per_flow.clone();
        tb.run(t2);
        // Every host is also a receiver: its uplink carries one token per packet it receives.
        let (mtu, ctrl) = (tb.framing.mtu_bytes as f64, tb.framing.control_bytes as f64);
        let mss_share = tb.framing.mss() as f64 / (mtu + ctrl);
        let line = 100e9 / 8.0 * (t2 - t1) as f64 * 1e-12 * mss_share;
        for (f, (&a, &b)) in before.iter().zip(&tb.flows.delivered_per_flow).enumerate() {
            let got = (b - a) as f64;
            assert!(got >= 0.99 * line, "r = {rounds}: flow {f} got {got} of {line} bytes at line rate");
        }
    }
}

#[test]
fn flows_complete_under_random_loss_of_every_kind() {
    let mut flows: Vec<FlowSpec> = permutation().into_iter().map(|(s, d, _, t)| (s, d, 300_000, t)).collect();
    flows.extend((1..8u32).map(|s| (s, 0, 20_000 + s as u64, from_us(3.0))));
    flows.extend((1..8u32).map(|s| (s, 0, 1_000 + s as u64, from_us(5.0))));
    let mut tb = testbed("timeout_us = 100.0", &flows).with_loss(0.03, 0.03);
    tb.run(from_us(100_000.0));
    assert!(tb.lost > 0);
    tb.assert_all_complete();
    assert_eq!(tb.proto.pending_rx, 0);
    assert!(tb.proto.hosts.iter().all(|h| h.out.is_empty() && h.inbound.is_empty()));
    assert!(!tb.proto.clock_on, "the epoch clock stops once nothing is pending");
}

#[test]
fn size_classes_follow_the_simulators_powers_of_seven() {
    use super::sender::size_class;
    let got: Vec<u8> = [1, 7, 8, 49, 50, 343, 344, 2401, 2402, 16807, 16808, 1 << 40].map(size_class).to_vec();
    assert_eq!(got, vec![1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6]);
}
