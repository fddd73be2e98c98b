//! The connection handshake end to end (`connection_setup = "handshake"`): exact completion times
//! of a lone message, SYN and SYN-ACK losses, pooled connections.

use super::handshake::ConnectionSetup;
use super::tests::{dctcp_setup, NET};
use crate::time::{from_us, Time};
use crate::transport::dctcp::Dctcp;
use crate::transport::testbed::Testbed;
use crate::transport::Protocol;

type Bed = Testbed<super::WindowTransport<Dctcp>>;

/// The testbed's initial RTO (`dctcp_setup`'s sender config).
const INITIAL_RTO_US: f64 = 1000.0;
const AT: Time = 3_000_000;

fn bed(flows: &[(u32, u32, u64, u64)], pool: u32) -> Bed {
    Testbed::new(NET, flows, |env| dctcp_setup(env, pool, 0, ConnectionSetup::Handshake))
}

/// One way of a header-only packet from `a` to `b`: serialization and delay at every hop.
fn header_one_way(tb: &Bed, a: u32, b: u32) -> Time {
    let wire = tb.framing.control_bytes;
    tb.net.path_hops(a, b).iter().map(|h| h.rate.tx_time(wire) + h.delay).sum()
}

fn counter(tb: &Bed, name: &str) -> u64 {
    tb.proto.counters().into_iter().find(|(k, _)| *k == name).map(|(_, v)| v).expect(name)
}

#[test]
fn a_lone_message_completes_one_header_round_trip_after_the_ideal() {
    for size in [1, 1436, 8_000, 14_360, 100_000] {
        for pool in [0, 1] {
            let mut tb = bed(&[(1, 0, size, AT)], pool);
            let rtt = header_one_way(&tb, 1, 0) + header_one_way(&tb, 0, 1);
            tb.run(u64::MAX);
            tb.assert_all_complete();
            assert_eq!(tb.fct(0).unwrap(), tb.ideal_fct(0) + rtt, "{size} B (pool {pool})");
            assert_eq!((counter(&tb, "handshakes"), counter(&tb, "syn_retransmits")), (1, 0));
        }
    }
}

/// FCT of a lone 20 KB message whose host-bound control packets are lost in the windows
/// `[from, to]` (picoseconds after `AT`), and the SYN retransmissions it took.
fn with_control_losses(windows: &[(Time, Time)]) -> (Time, Time, u64) {
    let mut tb = bed(&[(1, 0, 20_000, AT)], 0);
    for &(from, to) in windows {
        tb = tb.with_loss(0.0, 0.0);
        tb.run(AT + from - 1);
        tb = tb.with_loss(0.0, 1.0);
        tb.run(AT + to);
    }
    tb = tb.with_loss(0.0, 0.0);
    tb.run(u64::MAX);
    tb.assert_all_complete();
    let rtt = header_one_way(&tb, 1, 0) + header_one_way(&tb, 0, 1);
    assert_eq!(counter(&tb, "handshakes"), 1);
    (tb.fct(0).unwrap(), tb.ideal_fct(0) + rtt, counter(&tb, "syn_retransmits"))
}

#[test]
fn a_lost_syn_or_syn_ack_is_sent_again_after_the_initial_rto_doubling() {
    let rto = from_us(INITIAL_RTO_US);
    // The first SYN is lost: the second leaves one initial RTO later.
    let (fct, ideal_with_handshake, syns) = with_control_losses(&[(0, rto - 1)]);
    assert_eq!((fct, syns), (ideal_with_handshake + rto, 1), "lost SYN");
    // The SYN arrives, its SYN-ACK is lost (dropped at the sender): the resent SYN is answered again.
    let (fct, _, syns) = with_control_losses(&[(from_us(1.0), rto - 1)]);
    assert_eq!((fct, syns), (ideal_with_handshake + rto, 1), "lost SYN-ACK");
    // Two SYNs lost: the third leaves after one RTO and then a doubled one.
    let (fct, _, syns) = with_control_losses(&[(0, 3 * rto - 1)]);
    assert_eq!((fct, syns), (ideal_with_handshake + 3 * rto, 2), "two lost SYNs");
}

#[test]
fn only_a_pooled_connections_first_message_pays_the_handshake() {
    // Two messages one after the other between the same hosts: on a pool of one the second reuses
    // the open connection and starts at once; without a pool each opens its own.
    let flows = [(1, 0, 14_360, AT), (1, 0, 14_360, AT + from_us(100.0))];
    for (pool, second_pays, opened) in [(1, false, 1), (0, true, 2)] {
        let mut tb = bed(&flows, pool);
        let rtt = header_one_way(&tb, 1, 0) + header_one_way(&tb, 0, 1);
        tb.run(u64::MAX);
        tb.assert_all_complete();
        assert_eq!(tb.fct(0).unwrap(), tb.ideal_fct(0) + rtt, "pool {pool}: the first message opens a connection");
        let extra = if second_pays { rtt } else { 0 };
        assert_eq!(tb.fct(1).unwrap(), tb.ideal_fct(1) + extra, "pool {pool}: the second message");
        assert_eq!(counter(&tb, "handshakes"), opened, "pool {pool}");
    }
}

#[test]
fn the_default_opens_no_handshake_and_reports_no_handshake_counters() {
    let mut tb = Testbed::new(NET, &[(1, 0, 14_360, AT)], |env| dctcp_setup(env, 0, 0, ConnectionSetup::None));
    tb.run(u64::MAX);
    assert_eq!(tb.fct(0).unwrap(), tb.ideal_fct(0));
    assert!(tb.proto.counters().iter().all(|(k, _)| *k != "handshakes" && *k != "syn_retransmits"));
}

#[test]
fn every_flow_opens_and_completes_under_random_loss_and_strays_move_no_opening_connection() {
    // Heavy control loss: SYNs and SYN-ACKs are lost too, and each connection still opens once.
    let flows: Vec<(u32, u32, u64, u64)> = (0..5).map(|s| (s + 1, 0, 50_000 + s as u64, s as u64 * 1000)).collect();
    let mut tb = bed(&flows, 0).with_loss(0.05, 0.3);
    tb.run(u64::MAX);
    tb.assert_all_complete();
    assert_eq!(counter(&tb, "handshakes"), 5);
    assert!(counter(&tb, "syn_retransmits") > 0, "some SYN or SYN-ACK was lost");
    // An ACK (not a SYN-ACK) reaching a connection that is still opening sends no data.
    let mut tb = bed(&[(1, 0, 20_000, AT)], 0);
    tb.run(AT);
    let mut ack = crate::net::packet::Packet::new(crate::net::packet::PacketKind::Ack, 0, 0, 1, 64);
    ack.ack = 0;
    tb.inject(ack);
    tb.run(u64::MAX);
    let rtt = header_one_way(&tb, 1, 0) + header_one_way(&tb, 0, 1);
    assert_eq!(tb.fct(0).unwrap(), tb.ideal_fct(0) + rtt);
}

#[test]
fn with_fct_end_last_ack_a_message_completes_when_its_last_ack_reaches_the_sender() {
    for size in [1, 14_360, 100_000] {
        let mut by_byte = bed(&[(1, 0, size, AT)], 0);
        by_byte.run(u64::MAX);
        let mut by_ack = Testbed::new(NET, &[(1, 0, size, AT)], |env| {
            let mut t = dctcp_setup(env, 0, 0, ConnectionSetup::Handshake);
            t.cfg.sender.fct_at_last_ack = true;
            t
        });
        let ack_way = header_one_way(&by_ack, 0, 1);
        by_ack.run(u64::MAX);
        by_ack.assert_all_complete();
        assert_eq!(by_ack.fct(0).unwrap(), by_byte.fct(0).unwrap() + ack_way, "{size} B");
    }
}
