//! Dart's receiver apportioning and state machine end to end through the test harness: N
//! staggered senders to one receiver reach line rate / N within one RTT of the last one's start
//! (DCQCN alone does not); the look-ahead counts an incast group at its first packet; each state
//! of Figure 5 is entered in a scenario built for it.

use crate::net::packet::FlowId;
use crate::scenario::read_spec;
use crate::time::{from_us, Time};
use crate::transport::dart::dasr::Dasr;
use crate::transport::dart::Dart;
use crate::transport::rate::{RateTransport, RateTransportConfig};
use crate::transport::registry::TransportConfig;
use crate::transport::testbed::{FlowSpec, Testbed};
use crate::transport::Protocol;

type DartTransport = RateTransport<Dart, Dasr>;

/// One 100 Gb/s switch, 1 us host links, ECN step marking at 22.5 KB (the paper's threshold).
fn single(hosts: u32, transport: &str) -> String {
    format!(
        "seed = 3\nduration_us = 1.0\n[topology]\nkind = \"single_switch\"\nhosts = {hosts}\n\
         host_rate_gbps = 100.0\nhost_delay_us = 1.0\n[queue]\nlimit_bytes = 4000000\necn = \"step\"\n\
         ecn_k_bytes = 22500\n[transport]\nprotocol = \"dart\"\n{transport}\n\
         [[workload]]\nkind = \"incast\"\nsenders = 1\nsize_bytes = 1\nat_us = 0.0\n"
    )
}

/// Two racks of four 100 Gb/s hosts under one spine with 100 Gb/s uplinks (4:1 oversubscribed).
fn two_racks(transport: &str) -> String {
    format!(
        "seed = 3\nduration_us = 1.0\n[topology]\nkind = \"leaf_spine\"\nracks = 2\nhosts_per_rack = 4\n\
         spines = 1\nhost_rate_gbps = 100.0\ncore_rate_gbps = 100.0\nhost_delay_us = 1.0\ncore_delay_us = 1.0\n\
         [queue]\nlimit_bytes = 4000000\necn = \"step\"\necn_k_bytes = 22500\n[transport]\nprotocol = \"dart\"\n\
         {transport}\n[[workload]]\nkind = \"incast\"\nsenders = 1\nsize_bytes = 1\nat_us = 0.0\n"
    )
}

fn bed(spec: &str, flows: &[FlowSpec]) -> Testbed<DartTransport> {
    let v: toml::Value = toml::from_str(spec).unwrap();
    let (s, _) = read_spec(&serde_json::to_value(v).unwrap()).unwrap();
    let cfg: RateTransportConfig<_> = match &s.transports[0].config {
        TransportConfig::Dart(c) => c.clone(),
        other => panic!("not Dart: {other:?}"),
    };
    Testbed::new(spec, flows, |env| DartTransport::new(&cfg, env))
}

fn rate_gbps(tb: &Testbed<DartTransport>, flow: FlowId) -> f64 {
    let mut out = Vec::new();
    tb.proto.flow_state(flow, &mut out);
    out.iter().find(|v| v.0 == "rate_gbps").expect("a running flow").1
}

fn counter(tb: &Testbed<DartTransport>, name: &str) -> u64 {
    tb.proto.counters().iter().find(|c| c.0 == name).unwrap_or_else(|| panic!("counter {name}")).1
}

const LONG: u64 = 1_000_000_000;
const STEP: Time = 50_000;

/// `n` long flows from hosts 1..=n to host 0, the k-th starting at 100k us.
fn staggered(n: u32, transport: &str) -> (Testbed<DartTransport>, Time) {
    let flows: Vec<FlowSpec> = (1..=n).map(|s| (s, 0, LONG, from_us(100.0 * (s - 1) as f64))).collect();
    let last = flows.last().unwrap().3;
    (bed(&single(n + 1, transport), &flows), last)
}

/// The first time (stepping by 50 ns from `from`) every flow's rate is `gbps`, up to `until`.
fn converged_at(tb: &mut Testbed<DartTransport>, flows: u32, gbps: f64, from: Time, until: Time) -> Option<Time> {
    let mut t = from;
    while t <= until {
        tb.run(t);
        if (0..flows).all(|f| (rate_gbps(tb, f) - gbps).abs() < 1e-9) {
            return Some(t);
        }
        t += STEP;
    }
    None
}

#[test]
fn n_senders_reach_line_rate_over_n_within_one_rtt_of_the_last_join() {
    for n in [2u32, 3, 4, 5] {
        let (mut tb, last) = staggered(n, "");
        let rtt = tb.net.base_rtt(1, 0, tb.framing.mtu_bytes, tb.framing.control_bytes);
        // Just before the last join the others share the link.
        tb.run(last - 1);
        for f in 0..n - 1 {
            assert!((rate_gbps(&tb, f) - 100.0 / (n - 1) as f64).abs() < 1e-9, "n = {n}: flow {f} before the join");
        }
        // One RTT as the packets see it: the base RTT, the queue standing at the receiver's downlink
        // when the last sender joins (earlier joins left it: arrivals equal line rate after each),
        // the gap of an old sender until its next packet (n - 1 packet times at line rate / (n - 1)),
        // the n - 1 packets the newcomer queues ahead of that packet meanwhile, two packets of
        // jitter, and the 50 ns step of the search.
        let down = (0..tb.net.ports.len()).find(|&p| tb.net.ports[p].peer == 0).unwrap();
        let line = tb.net.ports[down].rate;
        let queued = line.tx_time(tb.net.ports[down].bytes as u32);
        let packets = 2 * (n as u64 - 1) + 2;
        let bound = last + rtt + queued + packets * line.tx_time(tb.framing.mtu_bytes + 64) + STEP;
        let at = converged_at(&mut tb, n, 100.0 / n as f64, last, last + from_us(50.0));
        let at = at.unwrap_or_else(|| panic!("n = {n}: never converged to 1/{n}"));
        let us = |t: Time| t as f64 / 1e6;
        eprintln!(
            "n = {n}: 1/n reached {:.3} us after the last join (base RTT {:.3} us, queue {:.3} us)",
            us(at - last),
            us(rtt),
            us(queued)
        );
        assert!(at <= bound, "n = {n}: converged {} ps after the join, bound {}", at - last, bound - last);
        assert!(at > last + rtt / 2, "n = {n}: no feedback can come back in under half an RTT");
        // It stays there: the receiver's state suppresses the ECN echoes, so DCQCN does not cut.
        tb.run(last + from_us(200.0));
        for f in 0..n {
            assert!((rate_gbps(&tb, f) - 100.0 / n as f64).abs() < 1e-9, "n = {n}: flow {f} later");
        }
        assert_eq!(counter(&tb, "ecn_echoes_received"), 0, "n = {n}");
    }
}

#[test]
fn dcqcn_alone_has_not_converged_one_rtt_after_the_join() {
    let (mut tb, last) = staggered(4, "dasr = false");
    let rtt = tb.net.base_rtt(1, 0, tb.framing.mtu_bytes, tb.framing.control_bytes);
    tb.run(last + 2 * rtt);
    let rates: Vec<f64> = (0..4).map(|f| rate_gbps(&tb, f)).collect();
    eprintln!("dcqcn rates two RTTs after the 4th join: {rates:?}");
    assert!(rates.iter().any(|r| (r - 25.0).abs() > 2.5), "DCQCN is not at 1/4 within 10%: {rates:?}");
    assert!(counter(&tb, "ecn_echoes_received") > 0);
}

#[test]
fn the_receiver_congestion_state_suppresses_echoes_and_ends_when_marks_stop() {
    // An 8-sender incast of 64 KB to host 0, then a lone flow 9 -> 0 once the queue has drained.
    let mut flows: Vec<FlowSpec> = (1..=8).map(|s| (s, 0, 64_000, 0)).collect();
    flows.push((9, 0, 64_000, from_us(100.0)));
    // Every flow counts as short here (Table I's counters: the short flows' marks, and those suppressed).
    let mut tb = bed(&single(10, "lookahead = false\nshort_flow_max_bytes = 64000"), &flows);
    tb.run(from_us(300.0));
    tb.assert_all_complete();
    let to_rc = counter(&tb, "dasr_to_receiver_congestion");
    assert!(to_rc >= 1, "entered Receiver Congestion");
    let suppressed = counter(&tb, "ecn_marks_suppressed");
    assert!(suppressed > 0);
    assert_eq!(counter(&tb, "short_flow_marks_suppressed"), suppressed);
    assert!(counter(&tb, "short_flow_marks") >= suppressed);
    assert_eq!(counter(&tb, "dasr_to_non_receiver_congestion"), 0, "never Non-Receiver Congestion");
    assert_eq!(counter(&tb, "dcqcn_fallback_ps"), 0);
    // The incast's queue drained when it ended: the next packet, unmarked, finds the state over.
    assert_eq!(counter(&tb, "dasr_to_no_congestion"), 1, "back to No Congestion");
    // Every incast sender learnt a share (n > 1) at least once.
    assert!(counter(&tb, "dasr_apportion_messages") >= 8, "{}", counter(&tb, "dasr_apportion_messages"));
}

#[test]
fn in_network_congestion_enters_non_receiver_congestion_and_falls_back_to_dcqcn() {
    // Four senders in rack 0 to four distinct receivers in rack 1 share one 100 Gb/s uplink: each
    // receiver sees a quarter of line rate and CE marks from the uplink's queue.
    let flows: Vec<FlowSpec> = (0..4).map(|s| (s, s + 4, LONG, 0)).collect();
    let mut tb = bed(&two_racks(""), &flows);
    tb.run(from_us(300.0));
    assert!(counter(&tb, "dasr_to_non_receiver_congestion") >= 1);
    assert_eq!(counter(&tb, "ecn_marks_suppressed"), 0, "marks pass to the senders");
    assert!(counter(&tb, "ecn_echoes_received") > 0);
    assert!(counter(&tb, "dcqcn_fallback_ps") > 0);
    for f in 0..4 {
        let r = rate_gbps(&tb, f);
        assert!(r < 100.0, "flow {f}: DCQCN cut the rate ({r} Gb/s)");
    }
}

#[test]
fn a_lone_flow_stays_in_no_congestion_at_line_rate() {
    let mut tb = bed(&single(2, ""), &[(1, 0, LONG, 0)]);
    tb.run(from_us(100.0));
    assert_eq!(rate_gbps(&tb, 0), 100.0);
    for c in ["dasr_to_receiver_congestion", "dasr_to_non_receiver_congestion", "dasr_apportion_messages"] {
        assert_eq!(counter(&tb, c), 0, "{c}");
    }
}

#[test]
fn the_lookahead_counts_an_incast_group_at_its_first_packet() {
    // A long flow 9 -> 0, then an 8-sender incast of 64 KB messages to host 0.
    let mut flows: Vec<FlowSpec> = vec![(9, 0, LONG, 0)];
    flows.extend((1..=8).map(|s| (s, 0, 64_000, from_us(20.0))));
    for (lookahead, announced) in [(true, 7), (false, 0)] {
        let mut tb = bed(&single(10, &format!("lookahead = {lookahead}")), &flows);
        tb.run(from_us(200.0));
        assert!((1..=8).all(|f| tb.fct(f).is_some()), "the incast completed");
        assert_eq!(counter(&tb, "dasr_lookahead_senders"), announced, "lookahead = {lookahead}");
    }
}

#[test]
fn exact_shares_leave_the_join_queue_standing_and_a_fraction_below_one_drains_it() {
    // After a join, the senders' rates add up to the line rate: the queue the newcomer built in its
    // first RTT at line rate has nowhere to go, and each further join adds to it.
    let queue_after = |fraction: f64| {
        let (mut tb, last) = staggered(3, &format!("apportion_rate_fraction = {fraction}"));
        tb.run(last + from_us(90.0));
        let down = (0..tb.net.ports.len()).find(|&p| tb.net.ports[p].peer == 0).unwrap();
        tb.net.ports[down].bytes
    };
    let (exact, below) = (queue_after(1.0), queue_after(0.9));
    eprintln!("queue 90 us after the 3rd join: {exact} B at shares of line rate, {below} B at 0.9");
    assert!(exact > 2 * 22_500, "a standing queue above the marking threshold: {exact} B");
    assert!(below < 3_000, "drained: {below} B");
}

#[test]
fn a_receiver_that_also_sends_apportions_what_its_acks_leave_of_its_link() {
    // At 10 Gb/s (a join's standing queue, about one BDP, stays below the marking threshold), hosts 1
    // and 2 send to host 0 while host 0 sends to host 3: host 0's downlink carries, besides
    // the data, the ACKs of its own flow (64 B per 1500 B packet, 4.3 % of the link at line rate).
    // Shares of the nominal line rate add up to more than the link can carry for data: the queue
    // grows by that excess for as long as the flows last, its marks suppressed (Receiver
    // Congestion), until PFC would pause the fabric. Shares of what the ACKs leave ("a rate which can
    // be sustained in steady state", section III-A) keep only the join's standing queue, below the
    // marking threshold.
    let run = |transport: &str| {
        let flows: Vec<FlowSpec> = vec![(1, 0, LONG, 0), (2, 0, LONG, from_us(50.0)), (0, 3, LONG, 0)];
        let mut tb = bed(&single(4, transport).replace("host_rate_gbps = 100.0", "host_rate_gbps = 10.0"), &flows);
        let down = (0..tb.net.ports.len()).find(|&p| tb.net.ports[p].peer == 0).unwrap();
        let at = |tb: &mut Testbed<DartTransport>, us: f64| {
            tb.run(from_us(us));
            tb.net.ports[down].bytes
        };
        let (early, late) = (at(&mut tb, 300.0), at(&mut tb, 900.0));
        (early, late, counter(&tb, "ecn_marks_suppressed"))
    };
    let (early, late, suppressed) = run("apportion_after_control = false");
    eprintln!("shares of line rate: downlink queue {early} B at 300 us, {late} B at 900 us, {suppressed} suppressed");
    assert!(late > early + 20_000 && late > 2 * 22_500, "the queue grows: {early} -> {late} B");
    assert!(suppressed > 0, "and its marks are suppressed");
    let (early, late, suppressed) = run("apportion_after_control = true");
    eprintln!("shares of what the ACKs leave: {early} B at 300 us, {late} B at 900 us, {suppressed} suppressed");
    assert!(early < 22_500 && late < 22_500 && late <= early + 3_000, "bounded below the marking threshold");
    assert_eq!(suppressed, 0, "no mark to suppress");
}

/// A long flow 9 -> 0 at line rate and, from 20 us, four 8-sender incasts of 16 KB messages to host
/// 0, 100 us apart; returns the long flow's rate 2 base RTTs after each incast completed, and its
/// bytes delivered by `until`.
fn long_flow_under_incasts(transport: &str, until: Time) -> (Testbed<DartTransport>, Vec<f64>, u64) {
    let mut flows: Vec<FlowSpec> = vec![(9, 0, LONG, 0)];
    for k in 0..4 {
        flows.extend((1..=8).map(|s| (s, 0, 16_000, from_us(20.0 + 100.0 * k as f64))));
    }
    let mut tb = bed(&single(10, transport), &flows);
    let rtt = tb.net.base_rtt(9, 0, tb.framing.mtu_bytes, tb.framing.control_bytes);
    let mut rates = Vec::new();
    for k in 0..4u32 {
        let members = 1 + 8 * k..=8 * (k + 1);
        tb.run(from_us(20.0 + 100.0 * k as f64 + 60.0));
        let end = members.map(|f| tb.flows.get(f).end.expect("the incast completed within 60 us")).max().unwrap();
        tb.run(end + 2 * rtt);
        rates.push(rate_gbps(&tb, 0));
    }
    tb.run(until);
    let delivered = tb.flows.delivered_per_flow[0];
    (tb, rates, delivered)
}

#[test]
fn incasts_at_its_receiver_do_not_cut_a_long_flow_under_dasr_but_do_under_dcqcn() {
    // Section III-B: a long flow sharing its receiver with an incast is apportioned for the incast's
    // duration only ("such throttling is short-lived and does not hurt the long flow's throughput"):
    // Receiver Congestion suppresses the incast's CE echoes, so DCQCN never cuts it, and n returns to
    // 1 when the incast's messages end. DCQCN alone is cut by those marks and recovers over its
    // increase timer (300 us), so the long flow loses throughput at every incast.
    let until = from_us(420.0);
    let (dart, dart_rates, dart_bytes) = long_flow_under_incasts("", until);
    let (_, dcqcn_rates, dcqcn_bytes) = long_flow_under_incasts("dasr = false", until);
    eprintln!("long flow after each incast: Dart {dart_rates:?} Gb/s, DCQCN {dcqcn_rates:?} Gb/s");
    eprintln!("long flow bytes by 420 us: Dart {dart_bytes}, DCQCN {dcqcn_bytes}");
    assert!(counter(&dart, "ecn_marks_suppressed") > 0, "the incasts' marks were seen and suppressed");
    assert_eq!(counter(&dart, "dasr_to_non_receiver_congestion"), 0);
    for (k, r) in dart_rates.iter().enumerate() {
        assert_eq!(*r, 100.0, "Dart: back at line rate two RTTs after incast {k}");
    }
    for (k, r) in dcqcn_rates.iter().enumerate() {
        assert!(*r < 75.0, "DCQCN: still cut two RTTs after incast {k}: {r} Gb/s");
    }
    // Line rate for 420 us is 5.25 MB of payload (less framing); the incasts take 4 x 128 KB of it.
    assert!(dart_bytes as f64 > 1.2 * dcqcn_bytes as f64, "Dart {dart_bytes} B vs DCQCN {dcqcn_bytes} B");
}

#[test]
fn with_in_network_congestion_only_dasr_changes_nothing() {
    // Figure 5's division: four senders in rack 0 to four distinct receivers in rack 1 share one uplink.
    // Every receiver has one sender (n = 1) and sees CE marks below line rate (Non-Receiver
    // Congestion: the echoes pass), so Dart is DCQCN exactly, packet for packet. This is why
    // DASR-only equals DCQCN wherever the congestion is in the fabric (the dart-scale runs).
    let flows: Vec<FlowSpec> = (0..4).map(|s| (s, s + 4, LONG, 0)).collect();
    let until = from_us(400.0);
    let run = |transport: &str| {
        let mut tb = bed(&two_racks(transport), &flows);
        tb.run(until);
        (tb.flows.delivered_per_flow.clone(), counter(&tb, "ecn_echoes_received"), tb)
    };
    let (dart_bytes, dart_echoes, dart) = run("");
    let (dcqcn_bytes, dcqcn_echoes, _) = run("dasr = false");
    assert!(counter(&dart, "dasr_to_non_receiver_congestion") >= 1);
    assert_eq!(counter(&dart, "ecn_marks_suppressed"), 0);
    assert!(dcqcn_echoes > 0, "the uplink marks");
    assert_eq!(dart_echoes, dcqcn_echoes);
    assert_eq!(dart_bytes, dcqcn_bytes, "DASR neutral: the same bytes delivered per flow");
}
