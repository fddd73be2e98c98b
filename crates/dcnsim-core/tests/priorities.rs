//! Strict priority: a high-priority packet that arrives behind a backlog of low-priority packets
//! is sent next, ahead of all of them; within a class, FIFO.
use dcnsim_core::engine::events::{Event, EventQueue};
use dcnsim_core::net::packet::{Packet, PacketKind};
use dcnsim_core::net::queue::QueueConfig;
use dcnsim_core::net::{Network, QueueConfigs};
use dcnsim_core::time::Rate;
use dcnsim_core::topology::builders::single_switch;

#[test]
fn high_priority_overtakes_the_backlog() {
    let g = single_switch(4, Rate::from_gbps(10.0), 1_000_000);
    let q = QueueConfig { priorities: 2, ..QueueConfig::infinite() };
    let qs = QueueConfigs { nic: q.clone(), to_host: q.clone(), fabric: q };
    let mut net = Network::build(&g, &qs, 0, None, 1).unwrap();
    let mut ev = EventQueue::new();
    // Hosts 0 and 3 each send five low-priority packets to host 2 (two senders into one downlink
    // build a backlog at the switch); host 1 then sends one high-priority packet to host 2.
    let send = |net: &mut Network, ev: &mut EventQueue, src: u32, prio: u8, tag: u64| {
        let mut p = Packet::new(PacketKind::Data, 0, src, 2, 1500);
        p.prio = prio;
        p.seq = tag;
        let id = net.pool.alloc(p);
        let port = net.nic_port(src);
        net.enqueue(port, id, ev.now(), ev);
    };
    for tag in 0..5 {
        send(&mut net, &mut ev, 0, 1, tag);
        send(&mut net, &mut ev, 3, 1, 10 + tag);
    }
    // The high-priority packet leaves host 1 a little later, reaching the switch behind the backlog.
    ev.schedule(2_000_000, Event::FlowArrival);
    let mut order = Vec::new();
    while let Some((now, e)) = ev.pop() {
        match e {
            Event::FlowArrival => send(&mut net, &mut ev, 1, 0, 99),
            Event::LinkArrival(port) => {
                let (pkt, node) = net.on_link_arrival(port, now, &mut ev).expect("lossless links");
                if node >= net.hosts {
                    net.forward(node, pkt, now, &mut ev);
                } else {
                    order.push(net.pool.get(pkt).seq);
                    net.pool.release(pkt, dcnsim_core::net::packet::Fate::Delivered);
                }
            }
            Event::PortFree(port) => {
                net.on_port_free(port, now, &mut ev);
            }
            other => panic!("{other:?}"),
        }
    }
    // Low packets reach the switch in pairs at 2.2 and 3.4 us; the downlink sends 0 (2.2-3.4) and
    // 10 (3.4-4.6) while 1 and 11 wait. The high-priority packet arrives at 4.2 us and leaves at 4.6,
    // ahead of the two waiting and all later low packets.
    assert_eq!(order.len(), 11);
    let pos = order.iter().position(|&t| t == 99).unwrap();
    assert_eq!(pos, 2, "{order:?}");
    let from0: Vec<u64> = order.iter().copied().filter(|&t| t < 10).collect();
    let from3: Vec<u64> = order.iter().copied().filter(|&t| (10..99).contains(&t)).collect();
    assert_eq!(from0, vec![0, 1, 2, 3, 4], "FIFO within a class");
    assert_eq!(from3, vec![10, 11, 12, 13, 14], "FIFO within a class");
    net.check_conservation().unwrap();
}
