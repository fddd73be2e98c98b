//! Stages of the switch pipeline seen from outside: DRR shares bytes by quantum (WRR shares
//! packets), ECN marking at dequeue follows the queue a packet leaves behind (at enqueue, the queue
//! it finds), INT records one entry per switch hop with monotone times, and packets count their
//! hops and know their ingress.
mod common;
use common::*;
use dcnsim_core::engine::events::{Event, EventQueue};
use dcnsim_core::net::packet::{flags, Fate, Packet, PacketId, PacketKind};
use dcnsim_core::net::pipeline::stages::StageConfigs;
use dcnsim_core::net::queue::{Amount, Ecn, EcnAt, QueueConfig, Scheduling};
use dcnsim_core::net::{Network, QueueConfigs, SwitchConfig};
use dcnsim_core::time::{Rate, Time, US};
use dcnsim_core::topology::builders::{fat_tree, single_switch};

fn network(hosts: u32, switch_q: QueueConfig) -> Network {
    let g = single_switch(hosts, Rate::from_gbps(10.0), US);
    let nic = QueueConfig { priorities: switch_q.priorities, ..QueueConfig::infinite() };
    Network::build(&g, &QueueConfigs { nic, to_host: switch_q.clone(), fabric: switch_q }, 0, None, 1).unwrap()
}

fn packet(src: u32, dst: u32, size: u32, prio: u8, seq: u64) -> Packet {
    let mut p = Packet::new(PacketKind::Data, 0, src, dst, size);
    p.prio = prio;
    p.seq = seq;
    p
}

/// Runs the network empty; `watch` sees the network after every event; `deliver` sees each
/// packet reaching a host (still in the pool) and the time.
fn run(
    net: &mut Network,
    ev: &mut EventQueue,
    mut watch: impl FnMut(&Network),
    mut deliver: impl FnMut(&Network, PacketId, Time),
) {
    while let Some((now, e)) = ev.pop() {
        match e {
            Event::LinkArrival(port) => {
                if let Some((pkt, node)) = net.on_link_arrival(port, now, ev) {
                    if node >= net.hosts {
                        net.switch_arrival(port, node, pkt, now, ev);
                    } else {
                        deliver(net, pkt, now);
                        net.pool.release(pkt, Fate::Delivered);
                    }
                }
            }
            Event::PortFree(port) => {
                net.on_port_free(port, now, ev);
            }
            other => panic!("unexpected {other:?}"),
        }
        watch(net);
    }
    net.check_conservation().unwrap();
}

/// Bytes per class delivered to host 0 while both senders' traffic is still arriving at the
/// switch: host 1 sends 200 packets of 1500 B in class 0, host 2 600 of 500 B in class 1.
fn shares(scheduling: Scheduling) -> [u64; 2] {
    let mut net = network(3, QueueConfig { priorities: 2, scheduling, ..QueueConfig::infinite() });
    let mut ev = EventQueue::new();
    for i in 0..200 {
        send(&mut net, &mut ev, packet(1, 0, 1500, 0, i));
    }
    for i in 0..600 {
        send(&mut net, &mut ev, packet(2, 0, 500, 1, i));
    }
    // Each sender needs 240 us to push its 300 KB into the switch: count the first 200 us.
    let mut bytes = [0u64; 2];
    run(
        &mut net,
        &mut ev,
        |_| {},
        |net, pkt, now| {
            let p = net.pool.get(pkt);
            if now < 200 * US {
                bytes[p.prio as usize] += p.size as u64;
            }
        },
    );
    bytes
}

#[test]
fn drr_shares_bytes_by_quantum_where_wrr_shares_packets() {
    let [a, b] = shares(Scheduling::Drr(vec![1500, 1500]));
    assert!((a as f64 / b as f64 - 1.0).abs() < 0.02, "equal quanta, equal bytes: {a} vs {b}");
    let [a, b] = shares(Scheduling::Drr(vec![3000, 1500]));
    assert!((a as f64 / b as f64 - 2.0).abs() < 0.04, "quanta 2:1, bytes 2:1: {a} vs {b}");
    // WRR counts packets: one 1500 B packet per 500 B packet, bytes 3:1.
    let [a, b] = shares(Scheduling::Wrr(vec![1, 1]));
    assert!((a as f64 / b as f64 - 3.0).abs() < 0.06, "WRR 1:1 packets: {a} vs {b}");
}

#[test]
fn drr_strict_classes_go_first() {
    // Class 0 strict ahead of DRR between classes 1 and 2: class 0 leaves as soon as it arrives.
    let q = QueueConfig {
        priorities: 3,
        scheduling: Scheduling::Drr(vec![1500; 3]),
        strict_classes: 1,
        ..QueueConfig::infinite()
    };
    let mut net = network(4, q);
    let mut ev = EventQueue::new();
    for i in 0..20 {
        send(&mut net, &mut ev, packet(1, 0, 1500, 1, i));
        send(&mut net, &mut ev, packet(2, 0, 1500, 2, 100 + i));
    }
    for i in 0..5 {
        send(&mut net, &mut ev, packet(3, 0, 1500, 0, 200 + i));
    }
    let mut order = Vec::new();
    run(&mut net, &mut ev, |_| {}, |net, pkt, _| order.push(net.pool.get(pkt).seq));
    // The five class-0 packets arrive 1.2 us apart behind the first arrivals and overtake the
    // backlog: all are among the first eight delivered.
    let pos: Vec<usize> = (200..205).map(|s| order.iter().position(|&x| x == s).unwrap()).collect();
    assert!(pos.iter().all(|&p| p < 8), "{pos:?} in {order:?}");
    // Classes 1 and 2 alternate packet by packet (equal quanta, equal sizes).
    let rest: Vec<u64> = order.iter().copied().filter(|&s| s < 200).collect();
    let ones = rest[..20].iter().filter(|&&s| s < 100).count();
    assert!((9..=11).contains(&ones), "{rest:?}");
}

/// Two senders burst 20 ECN-capable packets each into host 0's downlink; returns, per packet
/// (by seq), whether it was marked and the queue the marking rule looks at.
fn marking(at: EcnAt) -> Vec<(bool, u64)> {
    let k = 6000;
    let q = QueueConfig { ecn: Ecn::Step(Amount::Bytes(k)), ecn_at: at, ..QueueConfig::infinite() };
    let mut net = network(3, q);
    let down = net.routes.host_port[0];
    let mut ev = EventQueue::new();
    for i in 0..20 {
        for src in [1, 2] {
            let mut p = packet(src, 0, 1500, 0, src as u64 * 100 + i);
            p.flags |= flags::ECT;
            send(&mut net, &mut ev, p);
        }
    }
    let mut seen = std::collections::HashMap::new();
    let mut queued: Vec<PacketId> = Vec::new();
    let mut out = Vec::new();
    run(
        &mut net,
        &mut ev,
        |net| {
            let port = &net.ports[down as usize];
            // A packet that just went on the wire leaves `port.bytes` behind (dequeue rule); one
            // that just joined found the queue without itself (enqueue rule).
            if let Some(pkt) = port.pipe_packets().last() {
                let seq = net.pool.get(pkt).seq;
                if at == EcnAt::Dequeue {
                    seen.entry(seq).or_insert(port.bytes);
                }
            }
            let now_queued: Vec<PacketId> = port.class_packets(0).collect();
            if at == EcnAt::Enqueue {
                for &pkt in now_queued.iter().filter(|p| !queued.contains(p)) {
                    let size = net.pool.get(pkt).size as u64;
                    seen.entry(net.pool.get(pkt).seq).or_insert(port.bytes - size);
                }
            }
            queued = now_queued;
        },
        |net, pkt, _| {
            let p = net.pool.get(pkt);
            out.push((p.has(flags::CE), p.seq));
        },
    );
    // Packets that found the port idle never queued: they saw nothing.
    out.into_iter().map(|(ce, seq)| (ce, seen.get(&seq).copied().unwrap_or(0))).collect()
}

#[test]
fn ecn_at_dequeue_marks_by_the_queue_left_behind() {
    let k = 6000;
    let deq = marking(EcnAt::Dequeue);
    assert_eq!(deq.len(), 40);
    for (i, &(ce, q)) in deq.iter().enumerate() {
        assert_eq!(ce, q > k, "packet {i} left {q} bytes behind");
    }
    // The queue peaks mid-burst and drains: the last packets to leave are unmarked.
    assert!(deq.iter().filter(|d| d.0).count() > 10);
    assert!(deq[36..].iter().all(|d| !d.0), "{deq:?}");

    let enq = marking(EcnAt::Enqueue);
    for (i, &(ce, q)) in enq.iter().enumerate() {
        assert_eq!(ce, q > k, "packet {i} found {q} bytes");
    }
    // Marking on arrival marks the late arrivals that the dequeue rule spares.
    assert!(enq[36..].iter().any(|d| d.0));
}

#[test]
fn int_records_one_hop_per_switch_with_monotone_times() {
    let rate = Rate::from_gbps(10.0);
    let g = fat_tree(4, 1, rate, rate, US, US);
    let q = QueueConfig::infinite();
    let mut net =
        Network::build(&g, &QueueConfigs { nic: q.clone(), to_host: q.clone(), fabric: q }, 0, None, 1).unwrap();
    net.configure_switches(
        &SwitchConfig { stages: StageConfigs { int: Some(()), ..Default::default() }, ..SwitchConfig::default() },
        1500,
    )
    .unwrap();
    let mut ev = EventQueue::new();
    // Host 0 to host 15 (another pod: 5 switches) and to host 1 (same ToR: 1 switch); an ACK too.
    for i in 0..4 {
        send(&mut net, &mut ev, packet(0, 15, 1500, 0, i));
    }
    send(&mut net, &mut ev, packet(0, 1, 1500, 0, 10));
    let mut ack = packet(0, 15, 64, 0, 20);
    ack.kind = PacketKind::Ack;
    send(&mut net, &mut ev, ack);
    let mut got = Vec::new();
    run(
        &mut net,
        &mut ev,
        |_| {},
        |net, pkt, _| {
            let p = *net.pool.get(pkt);
            got.push((p, net.pool.int_hops(pkt).to_vec()));
        },
    );
    let far: Vec<_> = got.iter().filter(|(p, _)| p.dst == 15 && p.kind == PacketKind::Data).collect();
    assert_eq!(far.len(), 4);
    for (p, hops) in &far {
        assert_eq!(p.hops, 5, "switches crossed");
        assert_eq!(hops.len(), 5);
        for w in hops.windows(2) {
            // Store and forward: a hop stamps no earlier than serialization + propagation later.
            assert!(w[1].ts >= w[0].ts + rate.tx_time(1500) + US, "{hops:?}");
        }
        assert!(hops.iter().all(|h| h.rate_bps == 10_000_000_000));
    }
    // Back to back on the same path: each packet finds the first hop's counter one packet further,
    // and the first packet found its port's queue empty.
    for k in 0..3 {
        assert_eq!(far[k + 1].1[0].tx_bytes, far[k].1[0].tx_bytes + 1500);
    }
    assert_eq!(far[0].1[0].qlen_bytes, 0);
    let near = got.iter().find(|(p, _)| p.dst == 1).unwrap();
    assert_eq!((near.0.hops, near.1.len()), (1, 1));
    let a = got.iter().find(|(p, _)| p.kind == PacketKind::Ack).unwrap();
    assert_eq!((a.0.hops, a.1.len()), (5, 0), "only data packets carry INT");
}

#[test]
fn a_packet_in_a_switch_knows_its_ingress() {
    // Hosts 1 and 2 send to host 0 at once: one packet waits at the switch's downlink, and knows
    // it came in from its sender's NIC.
    let mut net = network(3, QueueConfig::infinite());
    let mut ev = EventQueue::new();
    send(&mut net, &mut ev, packet(1, 0, 1500, 0, 0));
    send(&mut net, &mut ev, packet(2, 0, 1500, 0, 0));
    let down = net.routes.host_port[0] as usize;
    let mut seen = Vec::new();
    run(
        &mut net,
        &mut ev,
        |net| {
            let waiting = net.ports[down].class_packets(0).map(|p| *net.pool.get(p));
            seen.extend(waiting.map(|p| (p.ingress == net.nic_port(p.src), p.hops)));
        },
        |_, _, _| {},
    );
    assert!(!seen.is_empty());
    assert!(seen.iter().all(|&s| s == (true, 1)), "{seen:?}");
}

#[test]
fn stage_spec_keys_and_errors() {
    let base = "duration_us = 200.0\n[topology]\nkind = \"single_switch\"\nhosts = 3\nhost_rate_gbps = 10.0\n\
                [transport]\nprotocol = \"dctcp\"\n[[workload]]\nkind = \"incast\"\nsenders = 2\nsize_bytes = 100000\nreceiver = 0\nat_us = 1.0\n";
    let ok = run_checked(&spec(&format!(
        "{base}[queue]\npriorities = 2\nscheduling = \"drr\"\ndrr_quanta_bytes = [3000, 1500]\nstrict_classes = 1\n\
         ecn = \"red\"\necn_at = \"dequeue\"\nred_min_bytes = 10000\nred_max_bytes = 40000\nred_pmax = 0.2\n[switch]\nint = true\n"
    )));
    assert_eq!(ok.summary["flows"]["unfinished"], 0);
    assert!(ok.summary["queues"]["ecn_marks"].as_u64().unwrap() > 0, "marks at dequeue");
    let case = |what: &str, extra: &str, field: &str, fragment: &str| {
        (what.to_string(), spec(&format!("{base}{extra}")), field.to_string(), fragment.to_string())
    };
    let failures = spec_error_mismatches([
        case(
            "quantum below an MTU",
            "[queue]\npriorities = 2\nscheduling = \"drr\"\ndrr_quanta_bytes = [1000, 1500]\n",
            "queue.drr_quanta_bytes",
            "at least one packet",
        ),
        case(
            "one quantum per class",
            "[queue]\npriorities = 2\nscheduling = \"drr\"\ndrr_quanta_bytes = [1500]\n",
            "queue.drr_quanta_bytes",
            "one quantum per class",
        ),
        case("quanta without drr", "[queue]\ndrr_quanta_bytes = [1500]\n", "queue.drr_quanta_bytes", "only used with"),
        case(
            "strict classes with strict",
            "[queue]\npriorities = 2\nstrict_classes = 1\n",
            "queue.strict_classes",
            "only used with",
        ),
        case(
            "all classes strict",
            "[queue]\npriorities = 2\nscheduling = \"drr\"\nstrict_classes = 2\n",
            "queue.strict_classes",
            "at least one weighted class",
        ),
        case("ecn_at typo", "[queue]\necn_at = \"dequeu\"\n", "queue.ecn_at", "did you mean \"dequeue\""),
    ]);
    assert!(failures.is_empty(), "{failures:#?}");
}
