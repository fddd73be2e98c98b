//! NDP's switch: a full data queue trims instead of dropping, headers get through ahead of data,
//! a full header queue returns headers to their senders, and weighted round robin shares the link.
mod common;
use common::*;
use dcnsim_core::engine::events::EventQueue;
use dcnsim_core::net::packet::{Packet, PacketKind};
use dcnsim_core::net::queue::{Amount, QueueConfig, Scheduling, Trim};
use dcnsim_core::net::{Network, QueueConfigs};
use dcnsim_core::time::Rate;
use dcnsim_core::topology::builders::single_switch;

fn ndp_net(hosts: u32, data_packets: u64, header_limit_bytes: u64, bounce: bool, scheduling: Scheduling) -> Network {
    let g = single_switch(hosts, Rate::from_gbps(10.0), 1_000_000);
    let sw = QueueConfig {
        priorities: 2,
        scheduling,
        trim: Some(Trim { header_limit_bytes, bounce, header_bytes: 64, cut_payload: false }),
        limit: Some(Amount::Packets(data_packets)),
        ..QueueConfig::infinite()
    };
    let nic = QueueConfig { priorities: 2, ..QueueConfig::infinite() };
    Network::build(&g, &QueueConfigs { nic, to_host: sw.clone(), fabric: sw }, 0, None, 1).unwrap()
}

fn data(src: u32, dst: u32, seq: u64) -> Packet {
    let mut p = Packet::new(PacketKind::Data, src, src, dst, 9000);
    p.payload = 8936;
    p.seq = seq;
    p.prio = 1;
    p
}

#[test]
fn incast_trims_instead_of_dropping() {
    // 8 senders x 10 packets into one 8-packet data queue: every packet arrives, whole or trimmed.
    let mut net = ndp_net(9, 8, 1 << 30, true, Scheduling::Strict);
    let mut ev = EventQueue::new();
    for s in 1..=8 {
        for k in 0..10 {
            send(&mut net, &mut ev, data(s, 0, k));
        }
    }
    let got = drain(&mut net, &mut ev, |_, _| {});
    assert_eq!(got.len(), 80, "nothing is lost");
    let whole = got.iter().filter(|p| p.kind == PacketKind::Data).count();
    let headers = got.iter().filter(|p| p.kind == PacketKind::Header).count();
    assert_eq!(whole + headers, 80);
    assert!(headers > 40, "most of an 8-to-1 burst is trimmed: {headers}");
    assert!(got.iter().filter(|p| p.kind == PacketKind::Header).all(|p| p.size == 64 && p.payload == 0));
    assert_eq!(net.pool.trimmed as usize, headers);
    assert_eq!(net.pool.dropped, 0);
    // Headers are strict priority: the last header arrives long before the last data packet.
    let last_header = got.iter().rposition(|p| p.kind == PacketKind::Header).unwrap();
    assert!(last_header < got.len() - 5, "headers overtake queued data");
    // Both trimming branches happen: some trimmed packets are older than data delivered whole.
    let first_trimmed_seq = got.iter().filter(|p| p.kind == PacketKind::Header).map(|p| p.seq).min().unwrap();
    assert!(first_trimmed_seq < 9, "tail trimming evicts queued packets too");
}

#[test]
fn full_header_queue_returns_headers_to_sender_or_drops() {
    for bounce in [true, false] {
        // A header queue of only two headers overflows during a 16-to-1 burst.
        let mut net = ndp_net(17, 2, 128, bounce, Scheduling::Strict);
        let mut ev = EventQueue::new();
        for s in 1..=16 {
            for k in 0..4 {
                send(&mut net, &mut ev, data(s, 0, k));
            }
        }
        let got = drain(&mut net, &mut ev, |_, _| {});
        let bounced: Vec<&Packet> = got.iter().filter(|p| p.kind == PacketKind::Bounced).collect();
        if bounce {
            assert!(!bounced.is_empty(), "some headers are returned");
            assert!(bounced.iter().all(|p| p.dst == p.flow && p.src == 0), "returned to their sender");
            assert_eq!(net.pool.dropped, 0);
            assert_eq!(got.len(), 64);
        } else {
            assert!(bounced.is_empty());
            assert!(net.pool.dropped > 0);
            assert_eq!(got.len() as u64 + net.pool.dropped, 64);
        }
    }
}

#[test]
fn weighted_round_robin_serves_classes_in_proportion() {
    // Class 0 gets 3 packets per turn, class 1 gets 1, while both are backlogged at the NIC.
    let g = single_switch(2, Rate::from_gbps(10.0), 0);
    let q = QueueConfig { priorities: 2, scheduling: Scheduling::Wrr(vec![3, 1]), ..QueueConfig::infinite() };
    let mut net =
        Network::build(&g, &QueueConfigs { nic: q.clone(), to_host: q.clone(), fabric: q }, 0, None, 1).unwrap();
    let mut ev = EventQueue::new();
    for k in 0..12 {
        let mut p = Packet::new(PacketKind::Data, 0, 0, 1, 1500);
        p.prio = (k % 2) as u8;
        p.seq = k;
        send(&mut net, &mut ev, p);
    }
    let got = drain(&mut net, &mut ev, |_, _| {});
    let classes: String = got.iter().map(|p| if p.prio == 0 { 'H' } else { 'L' }).collect();
    // The first packet found the port idle; then WRR alternates 1 low, 3 high.
    assert_eq!(&classes[..9], "HLHHHLHHL", "{classes}");
}

fn cut_payload_net(hosts: u32, data_packets: u64, total_bytes: u64) -> Network {
    let g = single_switch(hosts, Rate::from_gbps(10.0), 1_000_000);
    let trim = Trim { header_limit_bytes: total_bytes, bounce: false, header_bytes: 64, cut_payload: true };
    let sw = QueueConfig {
        priorities: 1,
        trim: Some(trim),
        limit: Some(Amount::Packets(data_packets)),
        ..QueueConfig::infinite()
    };
    let nic = QueueConfig { priorities: 1, ..QueueConfig::infinite() };
    Network::build(&g, &QueueConfigs { nic, to_host: sw.clone(), fabric: sw }, 0, None, 1).unwrap()
}

#[test]
fn cut_payload_queues_headers_behind_data_and_never_trims_the_tail() {
    // 8 senders x 10 packets into CP's one FIFO with a 4-packet data threshold and room for all.
    let mut net = cut_payload_net(9, 4, 1 << 30);
    let mut ev = EventQueue::new();
    for s in 1..=8 {
        for k in 0..10 {
            send(&mut net, &mut ev, data(s, 0, k));
        }
    }
    let got = drain(&mut net, &mut ev, |_, _| {});
    assert_eq!(got.len(), 80, "nothing is lost below the total limit");
    assert_eq!(net.pool.dropped, 0);
    let kinds: String = got.iter().map(|p| if p.kind == PacketKind::Header { 'h' } else { 'D' }).collect();
    // FIFO: the first round's four admitted packets leave before any header (NDP's priority would
    // send the headers first), and no queued packet is trimmed later, so the first round's
    // admitted packets all arrive whole.
    assert!(kinds.starts_with("DDDD"), "{kinds}");
    let whole_first_round = got.iter().filter(|p| p.seq == 0 && p.kind == PacketKind::Data).count();
    assert_eq!(whole_first_round, 4, "{kinds}");
    assert!(got.iter().all(|p| p.kind != PacketKind::Bounced));
    assert_eq!(net.pool.trimmed as usize, kinds.matches('h').count());
}

#[test]
fn cut_payload_drops_beyond_the_total_limit() {
    // Room for 3 data packets (the one being sent counts) and 4 headers: a 16-to-1 burst loses
    // headers.
    let mut net = cut_payload_net(17, 4, 3 * 9000 + 4 * 64);
    let mut ev = EventQueue::new();
    for s in 1..=16 {
        for k in 0..4 {
            send(&mut net, &mut ev, data(s, 0, k));
        }
    }
    let got = drain(&mut net, &mut ev, |_, _| {});
    assert!(net.pool.dropped > 0, "headers beyond the total limit are dropped");
    assert_eq!(got.len() as u64 + net.pool.dropped, 64);
    assert!(got.iter().all(|p| p.kind != PacketKind::Bounced), "CP never returns a header");
}
