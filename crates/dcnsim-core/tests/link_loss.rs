//! Random link loss: a lossy link loses each packet independently with its probability, at its far
//! end, counted as a loss of the sending port; lossless links and runs are untouched; bad
//! probabilities are spec errors naming the field.
mod common;
use common::*;
use dcnsim_core::api::read_spec;
use dcnsim_core::engine::events::EventQueue;
use dcnsim_core::net::packet::{Packet, PacketKind};
use dcnsim_core::net::Network;

/// Two hosts on one switch; `topology` keys are appended to the `[topology]` table.
fn two_hosts(seed: u64, topology: &str) -> serde_json::Value {
    spec(&format!(
        "seed = {seed}\nduration_us = 100.0\n[topology]\nkind = \"single_switch\"\nhosts = 2\nhost_rate_gbps = 10.0\n\
         {topology}\n[transport]\nprotocol = \"dctcp\"\n[[workload]]\nkind = \"incast\"\nsenders = 1\nsize_bytes = 1000\nat_us = 1.0\nreceiver = 0\n"
    ))
}

/// Sends `n` packets from host 0 to host 1 over a bare network built from the spec's topology;
/// returns the network and the sequence numbers that arrived.
fn blast(spec: &serde_json::Value, n: u64) -> (Network, Vec<u64>) {
    let (rs, _) = read_spec(spec).unwrap();
    let graph = rs.topology.build().unwrap();
    let mut net = Network::build(&graph, &rs.queues, 0, None, rs.seed).unwrap();
    let mut ev = EventQueue::new();
    for seq in 0..n {
        let mut p = Packet::new(PacketKind::Data, 0, 0, 1, 1500);
        p.seq = seq;
        send(&mut net, &mut ev, p);
    }
    let got = drain(&mut net, &mut ev, |_, _| {});
    (net, got.iter().map(|p| p.seq).collect())
}

/// (losses, tx_packets) of the port from node `a` to node `b`.
fn port(net: &Network, a: &str, b: &str) -> (u64, u64) {
    let p = net
        .ports
        .iter()
        .find(|p| net.node_names[p.owner as usize] == a && net.node_names[p.peer as usize] == b)
        .unwrap();
    (p.counters.losses, p.counters.tx_packets)
}

#[test]
fn a_lossy_link_loses_its_share_in_one_direction_only() {
    // 10% on host0 -> switch0 only; 20,000 packets: the count is Binomial(20000, 0.1), sd 42.4.
    let n = 20_000u64;
    let lossy = "[[topology.link_overrides]]\na = \"host0\"\nb = \"switch0\"\nloss_probability = 0.1\none_way = true";
    let (net, got) = blast(&two_hosts(3, lossy), n);
    let (lost, sent) = port(&net, "host0", "switch0");
    assert_eq!(sent, n, "a lost packet still crossed its link");
    let (mean, sd) = (n as f64 * 0.1, (n as f64 * 0.1 * 0.9).sqrt());
    assert!((lost as f64 - mean).abs() < 5.0 * sd, "{lost} lost of {n}, expected {mean} +- {sd:.1}");
    // Everything else was delivered, in order, by the lossless rest of the path.
    assert_eq!(got.len() as u64, n - lost);
    assert!(got.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(port(&net, "switch0", "host1"), (0, n - lost));
    assert_eq!(net.pool.dropped, lost, "a loss is a dropped packet (conservation)");
    // Losses are independent: runs of consecutive losses are as rare as p^k says. A lost packet
    // is followed by another loss about 10% of the time, not more.
    let arrived: std::collections::HashSet<u64> = got.iter().copied().collect();
    let lost_seqs: Vec<u64> = (0..n).filter(|s| !arrived.contains(s)).collect();
    let pairs = lost_seqs.windows(2).filter(|w| w[1] == w[0] + 1).count() as f64;
    let p_next = pairs / lost_seqs.len() as f64;
    assert!((p_next - 0.1).abs() < 0.03, "P(loss | previous lost) = {p_next}");
}

#[test]
fn the_topology_default_applies_to_every_link_and_overrides_win() {
    // Default 5% everywhere; the switch -> host1 direction overridden to lossless.
    let n = 20_000u64;
    let topo = "loss_probability = 0.05\n[[topology.link_overrides]]\na = \"switch0\"\nb = \"host1\"\n\
                loss_probability = 0.0\none_way = true";
    let (net, got) = blast(&two_hosts(4, topo), n);
    let (lost, _) = port(&net, "host0", "switch0");
    let (mean, sd) = (n as f64 * 0.05, (n as f64 * 0.05 * 0.95).sqrt());
    assert!((lost as f64 - mean).abs() < 5.0 * sd, "{lost} lost of {n}");
    assert_eq!(port(&net, "switch0", "host1"), (0, n - lost));
    assert_eq!(got.len() as u64, n - lost);
    // Another seed loses other packets; the same seed the same ones.
    let (_, again) = blast(&two_hosts(4, topo), n);
    let (_, other) = blast(&two_hosts(5, topo), n);
    assert_eq!(got, again);
    assert_ne!(got, other);
}

#[test]
fn lossy_runs_report_losses_and_keep_every_packet_accounted() {
    let flows: Vec<(u32, u32, u64, f64)> = (1..4).map(|s| (s, 0, 300_000, 0.0)).collect();
    let f = flow_file("link-loss-run", &flows);
    let out = run_checked(&spec(&format!(
        "seed = 2\nduration_us = 1000000.0\n[topology]\nkind = \"single_switch\"\nhosts = 4\nhost_rate_gbps = 10.0\n\
         loss_probability = 0.02\n[transport]\nprotocol = \"newreno\"\nmin_rto_us = 200.0\n\
         [[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n",
        f.display()
    )));
    let losses = u64s(&out.ports, "losses");
    let total: u64 = losses.iter().sum();
    assert!(losses.iter().filter(|&&l| l > 0).count() >= 4, "data and ACK directions both lose: {losses:?}");
    assert_eq!(out.summary["queues"]["losses"].as_u64().unwrap(), total);
    assert_eq!(out.summary["queues"]["drops"].as_u64().unwrap(), 0, "infinite buffers drop nothing");
    assert_eq!(out.summary["packets"]["dropped"].as_u64().unwrap(), total);
    assert!(opt_u64s(&out.flows, "end_ps").iter().all(|e| e.is_some()), "NewReno recovers every loss");
    assert!(out.summary["transport"]["retransmitted_packets"].as_u64().unwrap() > 0);
}

#[test]
fn traced_packets_show_each_loss_where_the_port_counts_it() {
    use dcnsim_core::record::table::Column;
    let flows: Vec<(u32, u32, u64, f64)> = vec![(1, 0, 200_000, 0.0), (2, 3, 100_000, 0.0)];
    let f = flow_file("link-loss-trace", &flows);
    let out = run_checked(&spec(&format!(
        "seed = 6\nduration_us = 1000000.0\n[topology]\nkind = \"single_switch\"\nhosts = 4\nhost_rate_gbps = 10.0\n\
         loss_probability = 0.05\n[transport]\nprotocol = \"newreno\"\n\
         [[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n[trace]\nflows = [0, 1]\n",
        f.display()
    )));
    let Some(Column::Cat { categories, codes }) = out.trace.get("event") else { panic!("no event column") };
    let ports = u64s(&out.trace, "port_id");
    let mut lost = vec![0u64; out.ports.rows()];
    for (i, &c) in codes.iter().enumerate() {
        if categories[c as usize] == "lose" {
            lost[ports[i] as usize] += 1;
        }
    }
    assert!(lost.iter().sum::<u64>() > 10, "{lost:?}");
    assert_eq!(lost, u64s(&out.ports, "losses"), "every flow traced: the trace's losses are the port counters");
}

#[test]
fn bad_loss_probabilities_are_spec_errors() {
    // The cases differ from valid specs only in the loss keys.
    run_checked(&two_hosts(1, "loss_probability = 0.0"));
    run_checked(&two_hosts(1, "[[topology.link_overrides]]\na = \"host0\"\nb = \"switch0\"\nloss_probability = 0.5"));
    let over =
        |keys: &str| two_hosts(1, &format!("[[topology.link_overrides]]\na = \"host0\"\nb = \"switch0\"\n{keys}"));
    let cases = vec![
        ("certain loss", two_hosts(1, "loss_probability = 1.0"), "topology.loss_probability", "[0, 1)"),
        ("negative", two_hosts(1, "loss_probability = -0.1"), "topology.loss_probability", "[0, 1)"),
        ("not a number", two_hosts(1, "loss_probability = \"1%\""), "topology.loss_probability", "expected"),
        ("override above 1", over("loss_probability = 1.5"), "topology.link_overrides[0].loss_probability", "[0, 1)"),
        ("override with nothing to change", over(""), "topology.link_overrides[0]", "rate_gbps, loss_probability"),
    ];
    let failures = spec_error_mismatches(
        cases.into_iter().map(|(what, s, field, frag)| (what.to_string(), s, field.to_string(), frag.to_string())),
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
