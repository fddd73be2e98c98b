//! The window sender end to end on a small network (through the test harness): pacing, strays.

use super::cc::dctcp::DctcpParams;
use super::cc::{AckInfo, CongestionControl, LossInfo, WindowSetup};
use super::handshake::ConnectionSetup;
use super::sender::SenderConfig;
use super::{WindowConfig, WindowProtocol, WindowTransport};
use crate::net::packet::{LoadBalancing, Packet, PacketKind};
use crate::spec_reader::{Section, SpecResult};
use crate::time::{from_us, Rate, Time};
use crate::transport::rate::fast_start::FastStart;
use crate::transport::testbed::Testbed;
use crate::transport::{Protocol, TransportEnv};

pub(crate) const NET: &str = "seed = 5\nduration_us = 1.0\n[topology]\nkind = \"single_switch\"\nhosts = 6\n\
    host_rate_gbps = 10.0\nhost_delay_us = 1.0\n[queue]\nlimit_packets = 1000\necn = \"step\"\necn_k_packets = 20\n\
    [transport]\nprotocol = \"dctcp\"\n[[workload]]\nkind = \"incast\"\nsenders = 1\nsize_bytes = 1\nat_us = 0.0\n";

fn sender_config(env: &TransportEnv, ecn: bool) -> SenderConfig {
    SenderConfig {
        framing: env.framing,
        dupack_threshold: 3,
        min_rto: from_us(200.0),
        initial_rto: from_us(1000.0),
        data_priority: 0,
        control_priority: 0,
        ecn_capable: ecn,
        lb: LoadBalancing::Ecmp,
        pbt_distance: None,
        fct_at_last_ack: false,
        sub_packet_wait: false,
    }
}

/// A test-only controller: an unbounded window, packets paced at a fixed rate.
#[derive(Clone)]
struct Paced(Rate);

impl CongestionControl for Paced {
    fn on_ack(&mut self, _: &AckInfo) -> bool {
        false
    }
    fn on_dupack(&mut self) {}
    fn on_fast_retransmit(&mut self, _: &LossInfo) {}
    fn on_rto(&mut self, _: &LossInfo) {}
    fn window_bytes(&self) -> f64 {
        1e15
    }
    fn set_window(&mut self, _: Time, _: f64) {}
    fn pacing_rate(&self) -> Option<Rate> {
        Some(self.0)
    }
}

struct PacedProtocol;

impl WindowProtocol for PacedProtocol {
    const NAMES: &'static [(&'static str, &'static str)] = &[("paced-test", "test only")];
    const ECN: bool = false;
    type Control = Paced;
    type Params = u64;
    fn read_params(_: &mut Section) -> SpecResult<u64> {
        unreachable!("built directly by the test")
    }
    fn control(bps: &u64, _: &WindowSetup) -> Paced {
        Paced(Rate::from_bps(*bps))
    }
}

fn paced(bps: u64, size: u64) -> (u64, u64, u64) {
    let mut tb = Testbed::new(NET, &[(0, 1, size, 3_000_000)], |env| {
        let cfg = config(bps, window_setup(env, 1, true, false), sender_config(env, false));
        WindowTransport::<PacedProtocol>::new(&cfg, env)
    });
    tb.run(u64::MAX);
    tb.assert_all_complete();
    let fr = tb.framing;
    let last = size - (size.div_ceil(fr.mss() as u64) - 1) * fr.mss() as u64;
    let hops = tb.net.path_hops(0, 1);
    let last_alone = crate::report::ideal::ideal_fct(last, fr.mss(), fr.header_bytes, &hops);
    (tb.fct(0).unwrap(), tb.ideal_fct(0), last_alone)
}

#[test]
fn pacing_at_line_rate_meets_the_ideal_fct_and_slower_pacing_spaces_packets_exactly() {
    for size in [1, 1436, 1437, 100_000, 1_000_001] {
        let (fct, ideal, _) = paced(10_000_000_000, size);
        assert_eq!(fct, ideal, "{size} B paced at line rate");
    }
    // At a quarter of line rate, packet i leaves at i x 4 x tx(MTU) and the path is empty each time.
    let size = 50 * 1460 + 100;
    let (fct, _, last_alone) = paced(2_500_000_000, size);
    let gap = Rate::from_bps(2_500_000_000).tx_time(1500);
    assert_eq!(fct, 50 * gap + last_alone);
}

fn dctcp(env: &TransportEnv) -> WindowTransport<crate::transport::dctcp::Dctcp> {
    dctcp_pooled(env, 0)
}

fn dctcp_pooled(env: &TransportEnv, connection_pool: u32) -> WindowTransport<crate::transport::dctcp::Dctcp> {
    dctcp_with(env, connection_pool, 0)
}

fn dctcp_with(
    env: &TransportEnv,
    connection_pool: u32,
    os_overhead: u64,
) -> WindowTransport<crate::transport::dctcp::Dctcp> {
    dctcp_setup(env, connection_pool, os_overhead, ConnectionSetup::None)
}

pub(super) fn dctcp_setup(
    env: &TransportEnv,
    connection_pool: u32,
    os_overhead: u64,
    connection_setup: ConnectionSetup,
) -> WindowTransport<crate::transport::dctcp::Dctcp> {
    let params = DctcpParams { g: 1.0 / 16.0, initial_alpha: 1.0 };
    let base = config(params, window_setup(env, 10, true, false), sender_config(env, true));
    let cfg = WindowConfig { connection_pool, os_overhead, connection_setup, ..base };
    WindowTransport::new(&cfg, env)
}

/// The window keys: no cap; `sub_packet` = `window_floor = "none"`.
fn window_setup(env: &TransportEnv, initial_window_packets: u64, slow_start: bool, sub_packet: bool) -> WindowSetup {
    WindowSetup {
        mss_bytes: env.framing.mss() as u64,
        initial_window_packets,
        max_window_packets: None,
        slow_start,
        sub_packet_ecn_cuts: sub_packet,
    }
}

/// A window transport's configuration: no pool, line-rate start, no OS overhead, no handshake.
fn config<P>(params: P, window: WindowSetup, sender: SenderConfig) -> WindowConfig<P> {
    WindowConfig {
        params,
        window,
        sender,
        connection_pool: 0,
        fast_start: FastStart::LineRate,
        os_overhead: 0,
        connection_setup: ConnectionSetup::None,
    }
}

/// Packets of every kind, for flows `0..n` and an unknown one, in both directions.
fn strays(n: u32, flows: &[(u32, u32)]) -> Vec<Packet> {
    let mut out = Vec::new();
    for f in 0..=n {
        let (src, dst) = flows.get(f as usize).copied().unwrap_or((2, 3));
        for kind in PacketKind::ALL {
            // Every kind in both directions: to the host that expects it and to the one that does not.
            // Data: duplicates or early copies of real segments; feedback: stale, or beyond
            // anything sent (an ACK for unsent data a receiver could hold is forgery).
            for (a, b) in [(src, dst), (dst, src)] {
                for (seq, ack) in [(0, 0), (1436, 0), (u64::MAX / 2, u64::MAX / 2)] {
                    let mut p = Packet::new(kind, f, a, b, 100);
                    p.payload = if kind == PacketKind::Data { 1436 } else { 0 };
                    p.seq = seq;
                    p.ack = ack;
                    out.push(p);
                }
            }
        }
    }
    out
}

#[test]
fn stray_duplicate_and_unknown_packets_are_ignored() {
    let flows: Vec<(u32, u32, u64, u64)> = (0..4).map(|s| (s + 1, 0, 200_000, 0)).collect();
    let pairs: Vec<(u32, u32)> = flows.iter().map(|f| (f.0, f.1)).collect();
    let mut tb = Testbed::new(NET, &flows, dctcp);
    // Injected before the flows start: they arrive mid-flow, as duplicates and nonsense.
    for p in strays(4, &pairs) {
        tb.inject(p);
    }
    tb.run(u64::MAX);
    tb.assert_all_complete();
    let ends: Vec<_> = tb.flows.records.iter().map(|r| r.end).collect();
    // After the flows are gone: everything again.
    for p in strays(4, &pairs) {
        tb.inject(p);
    }
    tb.run(u64::MAX);
    assert_eq!(tb.flows.records.iter().map(|r| r.end).collect::<Vec<_>>(), ends);
    assert!(tb.events.peek_time().is_none(), "strays of finished flows cause no further events");
}

#[test]
fn every_flow_completes_under_random_loss() {
    for (data_loss, ack_loss) in [(0.01, 0.0), (0.05, 0.05), (0.2, 0.1)] {
        let flows: Vec<(u32, u32, u64, u64)> =
            (0..5).map(|s| (s + 1, 0, 150_000 + s as u64 * 7, s as u64 * 1000)).collect();
        let mut tb = Testbed::new(NET, &flows, dctcp).with_loss(data_loss, ack_loss);
        tb.run(u64::MAX);
        tb.assert_all_complete();
        assert!(tb.lost > 0, "loss {data_loss}: packets were lost");
        let counters = tb.proto.counters();
        assert!(counters[0].1 > 0, "loss {data_loss}: retransmissions happened");
    }
}

fn cwnd(t: &WindowTransport<crate::transport::dctcp::Dctcp>, flow: u32) -> Option<f64> {
    let mut v = Vec::new();
    t.flow_state(flow, &mut v);
    v.iter().find(|(k, _)| *k == "cwnd_bytes").map(|&(_, x)| x)
}

#[test]
fn a_second_message_on_a_pooled_connection_starts_with_the_window_the_first_left() {
    // 300 KB then, long after it is done, 100 KB, from host 1 to host 0; one connection per pair.
    let flows = [(1, 0, 300_000, 0), (1, 0, 100_000, from_us(2000.0))];
    let mut starts = Vec::new();
    let mut initial = 0.0;
    for pool in [1, 0] {
        let mut tb = Testbed::new(NET, &flows, |env| dctcp_pooled(env, pool));
        initial = 10.0 * tb.framing.mss() as f64;
        tb.run(from_us(1999.0));
        assert!(tb.fct(0).is_some() && cwnd(&tb.proto, 0).is_none(), "the first message is done and gone");
        let left = tb.proto.pools.as_ref().map(|p| p.idle(1, 0)[0].cc.window_bytes());
        // Just after the second starts: no ACK can have arrived yet.
        tb.run(from_us(2000.5));
        let second = cwnd(&tb.proto, 1).expect("the second message is running");
        starts.push((left, second));
        tb.run(u64::MAX);
        tb.assert_all_complete();
    }
    let (left, pooled) = (starts[0].0.unwrap(), starts[0].1);
    assert!(left > 2.0 * initial, "slow start grew the first message's window: {left}");
    assert_eq!(pooled, left, "pooled: the second message starts with the window the first left");
    assert_eq!(starts[1], (None, initial), "without a pool every message starts at the initial window");
}

#[test]
fn messages_wait_for_a_busy_pool_and_reuse_its_connections() {
    // Three messages at once on a pool of two: the third starts when the first connection frees.
    let flows = [(1, 0, 50_000, 0), (1, 0, 200_000, 0), (1, 0, 20_000, 0)];
    let mut tb = Testbed::new(NET, &flows, |env| dctcp_pooled(env, 2));
    tb.run(from_us(1.0));
    assert!(cwnd(&tb.proto, 0).is_some() && cwnd(&tb.proto, 1).is_some());
    assert!(cwnd(&tb.proto, 2).is_none(), "the third message waits for a connection");
    tb.run(u64::MAX);
    tb.assert_all_complete();
    let (e0, e2) = (tb.flows.get(0).end.unwrap(), tb.flows.get(2).end.unwrap());
    assert!(e2 > e0, "the third message ran after the first freed its connection");
    assert_eq!(tb.proto.pools.as_ref().unwrap().idle(1, 0).len(), 2, "both connections idle at the end");
}

/// (FCT, ideal FCT, end) of a lone DCTCP message of `size` bytes from host 1 to host 0 arriving at
/// `at`, with this OS overhead and connection pool.
fn lone(size: u64, at: u64, os_overhead: u64, pool: u32) -> (u64, u64, u64) {
    let mut tb = Testbed::new(NET, &[(1, 0, size, at)], |env| dctcp_with(env, pool, os_overhead));
    tb.run(u64::MAX);
    tb.assert_all_complete();
    (tb.fct(0).unwrap(), tb.ideal_fct(0), tb.flows.get(0).end.unwrap())
}

#[test]
fn a_lone_message_completes_exactly_its_os_overhead_after_the_ideal() {
    // The initial window (10 packets) covers this path's BDP, so a lone message is exactly ideal;
    // the overhead adds itself once, whatever the size (1 packet, one window, several windows).
    for size in [1, 1436, 8_000, 14_360, 100_000] {
        for pool in [0, 1] {
            let (fct, ideal, end) = lone(size, from_us(3.0), 0, pool);
            assert_eq!(fct, ideal, "{size} B without overhead (pool {pool})");
            for us in [0.5, 24.0, 1000.0] {
                let (with, _, end_with) = lone(size, from_us(3.0), from_us(us), pool);
                assert_eq!(with, ideal + from_us(us), "{size} B with {us} us (pool {pool})");
                assert_eq!(end_with, end + from_us(us), "{size} B: the whole transfer shifts by {us} us");
            }
        }
    }
}

#[test]
fn an_os_overhead_shifts_a_contended_run_by_exactly_itself_and_zero_changes_nothing() {
    // Five messages into one receiver under random loss. Every message waits the same overhead, so
    // the whole run moves later by it (the network sees the same traffic, later): each end time
    // shifts by exactly the overhead, and by nothing at 0.
    let flows: Vec<(u32, u32, u64, u64)> = (0..5).map(|s| (s + 1, 0, 60_000 + s as u64, s as u64 * 900)).collect();
    let ends = |os| {
        let mut tb = Testbed::new(NET, &flows, |env| dctcp_with(env, 0, os)).with_loss(0.02, 0.0);
        tb.run(u64::MAX);
        tb.assert_all_complete();
        assert!(tb.lost > 0, "the run has losses to recover from");
        tb.flows.records.iter().map(|r| r.end.unwrap()).collect::<Vec<_>>()
    };
    let base = ends(0);
    for us in [0.0, 7.0, 24.0] {
        let shifted: Vec<u64> = base.iter().map(|e| e + from_us(us)).collect();
        assert_eq!(ends(from_us(us)), shifted, "{us} us");
    }
}

/// DCTCP with one packet of window, no slow start, alpha = 1 and a 1 ms minimum RTO; `sub_packet`
/// sets `window_floor = "none"`.
fn dctcp_one_packet(env: &TransportEnv, sub_packet: bool) -> WindowTransport<crate::transport::dctcp::Dctcp> {
    let mut sender = sender_config(env, true);
    sender.min_rto = from_us(1000.0);
    sender.sub_packet_wait = sub_packet;
    let params = DctcpParams { g: 1.0 / 16.0, initial_alpha: 1.0 };
    WindowTransport::new(&config(params, window_setup(env, 1, false, sub_packet), sender), env)
}

/// (FCT, transport counters) of a lone 3-packet flow whose every data packet arrives marked.
fn marked_lone_flow(sub_packet: bool) -> (Time, Vec<(&'static str, u64)>) {
    let mut tb = Testbed::new(NET, &[(1, 0, 3_000, 0)], |env| dctcp_one_packet(env, sub_packet)).with_all_marked();
    tb.run(u64::MAX);
    tb.assert_all_complete();
    (tb.fct(0).unwrap(), tb.proto.counters())
}

#[test]
fn a_cut_under_one_packet_waits_for_the_retransmission_timer() {
    // RFC 3168 6.1.2 as ns-2 does it: every ACK echoes CE and alpha = 1 halves one packet of window
    // to half a packet, so the sender waits for its timer (1 ms: the RTT is microseconds) before
    // each next packet. The second answer at one packet backs the timer off once (2 ms) and its
    // expiry once more (4 ms before the third packet): 1 + 4 = 5 ms longer than with the window
    // floored at one packet (one packet per round trip), to the picosecond.
    let (floored, n1) = marked_lone_flow(false);
    let (waiting, n2) = marked_lone_flow(true);
    let get = |n: &[(&str, u64)], k: &str| n.iter().find(|c| c.0 == k).map(|c| c.1);
    assert_eq!(waiting - floored, from_us(5000.0), "floored {floored} ps, waiting {waiting} ps");
    assert!(floored < from_us(100.0), "one packet per round trip: {floored} ps");
    assert_eq!(get(&n1, "ecn_window_cuts"), Some(3), "{n1:?}");
    assert_eq!(get(&n1, "sub_packet_waits"), None, "{n1:?}");
    assert_eq!(get(&n2, "ecn_window_cuts"), Some(3), "{n2:?}");
    assert_eq!(get(&n2, "sub_packet_waits"), Some(3), "{n2:?}");
    assert_eq!(get(&n2, "timeouts"), Some(0), "the timer ended waits, no loss: {n2:?}");
    assert_eq!(get(&n2, "retransmitted_packets"), Some(0), "{n2:?}");
}
