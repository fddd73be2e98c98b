//! The rate sender end to end (through the test harness) with a test-only controller that sends
//! at a constant rate: exact ideal FCTs, pacing, round robin, in-flight cap, loss recovery.

use super::*;
use crate::net::packet::LoadBalancing;
use crate::time::from_us;
use crate::transport::testbed::{FlowSpec, Testbed};

/// Constant rate, no window.
struct Constant(Rate);

impl RateControl for Constant {
    fn on_ack(&mut self, _: &RateAck<'_>) {}
    fn rate(&self) -> Rate {
        self.0
    }
    fn set_rate(&mut self, _now: Time, bps: u64) {
        self.0 = Rate::from_bps(bps);
    }
}

/// The test controller's parameter: a fraction of line rate in percent.
struct ConstantRate;

impl RateProtocol for ConstantRate {
    const NAMES: &'static [(&'static str, &'static str)] = &[("constant-rate-test", "test only")];
    const ECN: bool = false;
    type Control = Constant;
    type Params = u64;
    fn read_params(_: &mut Section) -> SpecResult<u64> {
        unreachable!("built directly by the tests")
    }
    fn control(percent: &u64, qp: &QpSetup) -> Constant {
        Constant(Rate::from_bps(qp.line_rate.bps() * percent / 100))
    }
}

const SINGLE: &str = "seed = 9\nduration_us = 1.0\n[topology]\nkind = \"single_switch\"\nhosts = 9\n\
    host_rate_gbps = 10.0\nhost_delay_us = 1.0\n[queue]\nlimit_packets = 1000\n[transport]\nprotocol = \"dctcp\"\n\
    [[workload]]\nkind = \"incast\"\nsenders = 1\nsize_bytes = 1\nat_us = 0.0\n";
const LEAF_SPINE: &str =
    "seed = 9\nduration_us = 1.0\n[topology]\nkind = \"leaf_spine\"\nracks = 3\nhosts_per_rack = 2\n\
    spines = 2\nhost_rate_gbps = 100.0\ncore_rate_gbps = 400.0\nhost_delay_us = 1.25\ncore_delay_us = 0.5\n\
    [queue]\nlimit_packets = 1000\n[transport]\nprotocol = \"dctcp\"\n\
    [[workload]]\nkind = \"incast\"\nsenders = 1\nsize_bytes = 1\nat_us = 0.0\n";

fn config(recovery: Recovery) -> RateConfig {
    RateConfig {
        recovery,
        nack_interval: from_us(500.0),
        ack_every_packets: 1,
        timeout: from_us(320.0),
        short_timeout: from_us(100.0),
        short_timeout_packets: 3,
        in_flight_cap_bdp: if recovery == Recovery::SelectiveRepeat { Some(1.0) } else { None },
        bdp_bytes: None,
        data_priority: 0,
        control_priority: 0,
        ecn_capable: false,
        lb: LoadBalancing::Ecmp,
        fast_start: fast_start::FastStart::LineRate,
        default_timeouts_on_pfc: false,
    }
}

fn bed(net: &str, flows: &[FlowSpec], sender: RateConfig, percent: u64) -> Testbed<RateTransport<ConstantRate>> {
    Testbed::new(net, flows, |env| RateTransport::new(&RateTransportConfig { params: percent, sender }, env))
}

const MODES: [Recovery; 2] = [Recovery::GoBackN, Recovery::SelectiveRepeat];

#[test]
fn a_lone_flow_at_line_rate_meets_the_exact_ideal_fct() {
    for mode in MODES {
        for (net, dst) in [(SINGLE, 1), (LEAF_SPINE, 1), (LEAF_SPINE, 5)] {
            for size in [1u64, 1000, 1436, 1437, 5 * 1436 + 7, 300_000, 2_000_000] {
                let mut tb = bed(net, &[(0, dst, size, 2_000_000)], config(mode), 100);
                tb.run(u64::MAX);
                tb.assert_all_complete();
                assert_eq!(tb.fct(0), Some(tb.ideal_fct(0)), "{mode:?}: {size} B to host {dst}");
            }
        }
    }
}

#[test]
fn pacing_below_line_rate_spaces_packets_by_the_rate() {
    // At 25% of line rate packet i leaves at i x 4 x tx(MTU), each onto an empty path.
    let mut tb = bed(SINGLE, &[], config(Recovery::GoBackN), 25);
    let mss = tb.framing.mss() as u64;
    let size = 40 * mss + 300;
    tb = bed(SINGLE, &[(0, 1, size, 0)], config(Recovery::GoBackN), 25);
    tb.run(u64::MAX);
    let fr = tb.framing;
    let last_alone = crate::report::ideal::ideal_fct(300, fr.mss(), fr.header_bytes, &tb.net.path_hops(0, 1));
    let gap = Rate::from_gbps(2.5).tx_time(fr.mtu_bytes);
    assert_eq!(tb.fct(0), Some(40 * gap + last_alone));
}

#[test]
fn queue_pairs_of_one_host_share_its_nic_in_round_robin() {
    // Three equal flows from host 0 at line rate each: the NIC alternates between them and never
    // idles, so their last packets go one after the other (the ends are within two packet times),
    // the last once every byte has crossed the NIC and then the switch.
    let size = 300_000;
    let flows: Vec<FlowSpec> = (1..=3).map(|d| (0, d, size, 0)).collect();
    let mut tb = bed(SINGLE, &flows, config(Recovery::GoBackN), 100);
    tb.run(u64::MAX);
    tb.assert_all_complete();
    let ends: Vec<u64> = (0..3).map(|f| tb.fct(f).unwrap()).collect();
    let line = Rate::from_gbps(10.0);
    let mtu = line.tx_time(tb.framing.mtu_bytes);
    let (lo, hi) = (*ends.iter().min().unwrap(), *ends.iter().max().unwrap());
    assert!(hi - lo <= 2 * mtu, "ends {ends:?}");
    let layout = MessageLayout::new(size, tb.framing);
    let nic_busy = line.tx_time(3 * layout.wire_bytes_of(0, layout.packets()) as u32);
    let two_links = 2 * from_us(1.0);
    assert!(hi > nic_busy + two_links && hi <= nic_busy + two_links + mtu, "last end {hi}, NIC busy {nic_busy}");
}

#[test]
fn the_in_flight_cap_bounds_packets_outstanding() {
    // Selective repeat caps new data at one BDP: on a 9-host 10G switch the BDP is a few packets,
    // so a long flow is window-bound and runs below line rate only if the cap were too small.
    let mut tb = bed(SINGLE, &[(0, 1, 1_000_000, 0)], config(Recovery::SelectiveRepeat), 100);
    let cap = tb.proto.cap_packets.unwrap();
    let mss = tb.framing.mss() as u64;
    assert_eq!(cap, tb.proto.bdp_bytes.div_ceil(tb.framing.mtu_bytes as u64));
    let mut seen = 0;
    let mut now = 0;
    while tb.events.peek_time().is_some() {
        now += 100_000;
        tb.run(now);
        let mut st = Vec::new();
        tb.proto.flow_state(0, &mut st);
        if let Some(&(_, b)) = st.iter().find(|(n, _)| *n == "in_flight_bytes") {
            assert!(b <= (cap * mss) as f64, "{b} bytes in flight, cap {cap} packets");
            seen = seen.max(b as u64);
        }
    }
    tb.assert_all_complete();
    assert!(seen > (cap - 1) * mss, "the cap is reached ({seen} bytes)");
    // One BDP in flight keeps the link busy: the flow still meets the ideal.
    assert_eq!(tb.fct(0), Some(tb.ideal_fct(0)));
}

#[test]
fn short_timeout_when_few_packets_are_outstanding() {
    let tb = bed(SINGLE, &[], config(Recovery::SelectiveRepeat), 100);
    assert_eq!(tb.proto.rto(1), from_us(100.0));
    assert_eq!(tb.proto.rto(3), from_us(100.0));
    assert_eq!(tb.proto.rto(4), from_us(320.0));
}

fn lossy(mode: Recovery, data_loss: f64, ack_loss: f64, limit: u32) -> Testbed<RateTransport<ConstantRate>> {
    let net = SINGLE.replace("limit_packets = 1000", &format!("limit_packets = {limit}"));
    // An 8-to-1 incast of unequal messages plus a lone long flow elsewhere.
    let mut flows: Vec<FlowSpec> = (1..=7).map(|s| (s, 0, 100_000 + s as u64 * 3001, s as u64 * 500_000)).collect();
    flows.push((8, 7, 1_500_000, 0));
    let mut tb = bed(&net, &flows, config(mode), 100).with_loss(data_loss, ack_loss);
    tb.run(u64::MAX);
    tb
}

#[test]
fn every_flow_completes_with_exactly_its_bytes_under_incast_drops_and_link_loss() {
    for mode in MODES {
        // Small buffers: the incast overflows them.
        let tb = lossy(mode, 0.0, 0.0, 8);
        tb.assert_all_complete();
        assert!(tb.net.pool.dropped > 0, "{mode:?}: the incast drops packets");
        let c = tb.proto.counters;
        assert!(c.retransmitted > 0 && c.nacks > 0, "{mode:?}: {c:?}");
        // Random loss of data and of ACKs/NACKs, with roomy buffers.
        for (d, a) in [(0.01, 0.0), (0.05, 0.05), (0.2, 0.2)] {
            let tb = lossy(mode, d, a, 1000);
            tb.assert_all_complete();
            assert!(tb.lost > 0);
            assert!(tb.proto.counters.retransmitted > 0, "{mode:?} at loss {d}");
        }
    }
}

#[test]
fn selective_repeat_resends_less_than_go_back_n() {
    let gbn = lossy(Recovery::GoBackN, 0.02, 0.0, 1000).proto.counters.retransmitted;
    let sr = lossy(Recovery::SelectiveRepeat, 0.02, 0.0, 1000).proto.counters.retransmitted;
    assert!(sr * 3 < gbn, "selective repeat {sr} vs go-back-N {gbn} retransmissions");
}

#[test]
fn stray_and_unknown_packets_are_ignored() {
    for mode in MODES {
        let flows: Vec<FlowSpec> = (1..=4).map(|s| (s, 0, 50_000, 0)).collect();
        let mut tb = bed(SINGLE, &flows, config(mode), 100);
        let strays = |tb: &mut Testbed<RateTransport<ConstantRate>>| {
            for f in 0..6u32 {
                let (s, d) = if f < 4 { (f + 1, 0) } else { (5, 6) };
                for kind in [PacketKind::Data, PacketKind::Ack, PacketKind::Nack, PacketKind::Pull, PacketKind::Header]
                {
                    // Data: duplicates or early copies of real packets; feedback: stale, or beyond
                    // anything sent (an ACK for unsent data that a receiver could hold is forgery,
                    // which no transport can tell from a real ACK).
                    let values: &[u64] = if kind == PacketKind::Data { &[0, 3, 1 << 40] } else { &[0, 1 << 40] };
                    for &v in values {
                        for (a, b) in [(s, d), (d, s)] {
                            let mut p = Packet::new(kind, f, a, b, 64);
                            p.seq = v;
                            p.ack = v;
                            p.payload = if kind == PacketKind::Data { 1436 } else { 0 };
                            tb.inject(p);
                        }
                    }
                }
            }
        };
        strays(&mut tb);
        tb.run(u64::MAX);
        tb.assert_all_complete();
        let ends: Vec<_> = tb.flows.records.iter().map(|r| r.end).collect();
        strays(&mut tb);
        tb.run(u64::MAX);
        assert_eq!(tb.flows.records.iter().map(|r| r.end).collect::<Vec<_>>(), ends);
    }
}

fn read(keys: serde_json::Value, lb: LoadBalancing) -> SpecResult<RateConfig> {
    let value: toml::Value = toml::from_str(SINGLE).unwrap();
    let (spec, _) = crate::scenario::read_spec(&serde_json::to_value(value).unwrap()).unwrap();
    let env = SpecEnv {
        load_balancing: lb,
        framing: spec.framing,
        queues: &spec.queues,
        stages: Default::default(),
        postcards: false,
        pfc: false,
    };
    let map = keys.as_object().unwrap().clone();
    let mut s = Section::new("transport", &map);
    let cfg = RateConfig::read(&mut s, "rate-test", &env, true)?;
    s.finish()?;
    Ok(cfg)
}

#[test]
fn config_defaults_follow_the_recovery_mode_and_errors_name_the_field() {
    use serde_json::json;
    let gbn = read(json!({}), LoadBalancing::Ecmp).unwrap();
    assert_eq!((gbn.recovery, gbn.in_flight_cap_bdp), (Recovery::GoBackN, None));
    assert_eq!((gbn.nack_interval, gbn.timeout, gbn.short_timeout), (from_us(500.0), from_us(320.0), from_us(100.0)));
    let sr = read(json!({"recovery": "selective_repeat"}), LoadBalancing::Spray).unwrap();
    assert_eq!(
        (sr.recovery, sr.in_flight_cap_bdp, sr.lb),
        (Recovery::SelectiveRepeat, Some(1.0), LoadBalancing::Spray)
    );
    for (keys, field) in [
        (json!({"recovery": "go_back_zero"}), "transport.recovery"),
        (json!({"short_timeout_us": 400.0}), "transport.short_timeout_us"),
        (json!({"ack_every_packets": 0}), "transport.ack_every_packets"),
        (json!({"in_flight_cap_bdp": 0.0}), "transport.in_flight_cap_bdp"),
        (json!({"control_priority": 8}), "transport.control_priority"),
        (json!({"nack_interval": 5}), "transport.nack_interval"),
    ] {
        let e = read(keys.clone(), LoadBalancing::Ecmp).expect_err(&keys.to_string());
        assert_eq!(e.field, field, "{keys}: {}", e.message);
    }
    let e = read(json!({}), LoadBalancing::Source).unwrap_err();
    assert!(e.field == "transport.protocol" && e.message.contains("source routes"), "{e:?}");
}
