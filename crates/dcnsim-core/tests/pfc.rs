//! Priority flow control over a shared buffer: lossless incast with back-pressure on the senders,
//! pause propagation across tiers, head-of-line blocking of a victim flow, a cyclic buffer
//! dependency that deadlocks (reported with its cycle, the run stopped), a host NIC pausing its
//! switch, lossless drops reported as a configuration error, and the spec's checks.
//!
//! Senders run NewReno without ECN: on a lossless fabric nothing stops their windows but the
//! pauses, which is what these scenarios need.
mod common;
use common::*;
use dcnsim_core::api::RunOutput;

fn run_flows(name: &str, topology: &str, switch: &str, flows: &[(u32, u32, u64, f64)]) -> RunOutput {
    let f = flow_file(name, flows);
    run_checked(&spec(&format!(
        "duration_us = 20000.0\n[topology]\n{topology}\n[switch]\n{switch}\n[transport]\nprotocol = \"newreno\"\n\
         [[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n",
        f.display()
    )))
}

fn port_row(out: &RunOutput, from: &str, to: &str) -> usize {
    let (node, peer) = (strs(&out.ports, "node"), strs(&out.ports, "peer"));
    (0..node.len()).find(|&i| node[i] == from && peer[i] == to).unwrap_or_else(|| panic!("no port {from}->{to}"))
}

fn finished_all(out: &RunOutput) -> bool {
    out.summary["flows"]["unfinished"] == 0
}

#[test]
fn pfc_makes_incast_lossless_and_pauses_the_senders() {
    for n in [2u32, 8] {
        // Long host links (5 us) make the headroom work: it is sized from the link, not guessed.
        let topo = format!("kind = \"single_switch\"\nhosts = {}\nhost_rate_gbps = 10.0\nhost_delay_us = 5.0", n + 1);
        let flows: Vec<_> = (1..=n).map(|h| (h, 0, 600_000, 0.0)).collect();
        let lossy = run_flows(&format!("incast{n}_lossy"), &topo, "buffer_bytes = 600000", &flows);
        let out = run_flows(&format!("incast{n}_pfc"), &topo, "buffer_bytes = 600000\npfc = true", &flows);
        assert!(u64s(&lossy.ports, "drops").iter().sum::<u64>() > 0, "{n}:1 without PFC must overflow the buffer");

        assert!(finished_all(&out), "{n}:1 {}", out.summary["flows"]);
        assert_eq!(u64s(&out.ports, "drops").iter().sum::<u64>(), 0, "{n}:1 with PFC dropped packets");
        assert_eq!(out.summary["pfc"]["lossless_drops"], 0);
        assert!(out.summary["pfc"]["configuration_error"].is_null());
        let paused = u64s(&out.ports, "paused_ps_class0");
        let frames = u64s(&out.ports, "pause_frames_sent");
        for h in 1..=n {
            // The switch paused each sender's NIC (frames on its port towards the host), and the
            // NIC spent time paused.
            let down = port_row(&out, "switch0", &format!("host{h}"));
            let nic = port_row(&out, &format!("host{h}"), "switch0");
            assert!(frames[down] > 0, "{n}:1: no pause sent to host{h}");
            assert!(paused[nic] > 0, "{n}:1: host{h}'s NIC was never paused");
        }
        // Every pause was lifted again (the senders finished).
        assert_eq!(out.summary["pfc"]["pause_frames_sent"], out.summary["pfc"]["resume_frames_sent"]);
        // The receiver's downlink is never paused: the receiver never asks.
        assert_eq!(paused[port_row(&out, "switch0", "host0")], 0);
    }
}

#[test]
fn pauses_propagate_back_to_the_senders_nics() {
    // Four senders in rack 0 send to host 8 in rack 1 over 40 Gb/s fabric links: the bottleneck is
    // tor1's downlink. tor1 pauses the spine, the spine pauses tor0, tor0 pauses the senders.
    let topo = "kind = \"leaf_spine\"\nracks = 2\nhosts_per_rack = 8\nspines = 1\nhost_rate_gbps = 10.0\ncore_rate_gbps = 40.0";
    let flows: Vec<_> = (0..4).map(|h| (h, 8, 1_000_000, 0.0)).collect();
    let out = run_flows("propagation", topo, "buffer_bytes = 1000000\npfc = true", &flows);
    assert!(finished_all(&out));
    assert_eq!(out.summary["queues"]["drops"], 0);
    let frames = u64s(&out.ports, "pause_frames_sent");
    let paused = u64s(&out.ports, "paused_ps_class0");
    for (by, to) in [("tor1", "spine0"), ("spine0", "tor0"), ("tor0", "host0")] {
        assert!(frames[port_row(&out, by, to)] > 0, "{by} never paused {to}");
        assert!(paused[port_row(&out, to, by)] > 0, "{to}'s port to {by} was never paused");
    }
    for h in 0..4 {
        assert!(paused[port_row(&out, &format!("host{h}"), "tor0")] > 0, "host{h}'s NIC never paused");
    }
    assert_eq!(out.summary["pfc"]["host_nics_paused"], 4);
    // Hosts that send nothing are never paused.
    assert_eq!(paused[port_row(&out, "host5", "tor0")], 0);
}

#[test]
fn head_of_line_blocking_slows_a_victim_sharing_a_paused_link() {
    // Dumbbell: hosts 0-2 (left) overload host 4 (right); the victim, host 3 -> host 7, shares only
    // the 40 Gb/s left->right link, which has room for everyone. PFC pauses that link for host 4's
    // backlog, and the victim waits behind it; without PFC the incast loses packets instead and
    // the victim runs at its ideal speed.
    let topo = "kind = \"dumbbell\"\nhosts_per_side = 4\nhost_rate_gbps = 10.0\nbottleneck_rate_gbps = 40.0";
    let flows = [(0, 4, 2_000_000, 0.0), (1, 4, 2_000_000, 0.0), (2, 4, 2_000_000, 0.0), (3, 7, 1_000_000, 50.0)];
    let victim_slowdown = |out: &RunOutput| f64s(&out.flows, "slowdown")[3];
    let lossy = run_flows("hol_lossy", topo, "buffer_bytes = 1000000", &flows);
    let pfc = run_flows("hol_pfc", topo, "buffer_bytes = 1000000\npfc = true", &flows);
    assert!(finished_all(&lossy) && finished_all(&pfc));
    assert!(victim_slowdown(&lossy) < 1.05, "without PFC: {}", victim_slowdown(&lossy));
    assert!(victim_slowdown(&pfc) > 1.5 * victim_slowdown(&lossy), "with PFC: {}", victim_slowdown(&pfc));
    assert!(u64s(&pfc.ports, "paused_ps_class0")[port_row(&pfc, "left", "right")] > 0);
    // The victim's own receiver port never builds a queue worth pausing for.
    assert_eq!(u64s(&pfc.ports, "pause_frames_sent")[port_row(&pfc, "right", "host7")], 0);
}

#[test]
fn a_cyclic_buffer_dependency_deadlocks_and_the_run_stops_with_the_cycle() {
    // Five switches in a ring; host i sends to host i + 2, two hops the short way round, so every
    // ring link carries two flows and each switch's buffer waits on the next one's.
    let topo = "kind = \"ring\"\nswitches = 5\nhosts_per_switch = 1\nhost_rate_gbps = 10.0\ncore_rate_gbps = 10.0";
    let flows: Vec<_> = (0..5).map(|h| (h, (h + 2) % 5, 20_000_000, 0.0)).collect();
    let out = run_flows("ring_pfc", topo, "buffer_bytes = 1000000\npfc = true", &flows);
    let s = &out.summary;
    assert_eq!(s["deadlocked"], true, "{}", s["pfc"]);
    let d = &s["deadlock"];
    let mut cycle: Vec<String> =
        d["cycle"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
    // The cycle is the five clockwise ring links, in order, from any starting point.
    let start = cycle.iter().position(|c| c == "ring0->ring1").expect("ring0->ring1 in the cycle");
    cycle.rotate_left(start);
    let want: Vec<String> = (0..5).map(|i| format!("ring{i}->ring{}", (i + 1) % 5)).collect();
    assert_eq!(cycle, want);
    // The run stopped when the deadlock was found, long before its 20 ms, with every flow stuck.
    let end = s["sim_end_ps"].as_u64().unwrap();
    assert_eq!(d["at_ps"].as_u64().unwrap(), end);
    assert!(end < 5_000_000_000, "stopped at {end} ps");
    assert_eq!(s["flows"]["finished"], 0);
    assert_eq!(s["pfc"]["lossless_drops"], 0, "a deadlock, not a loss");
    // Each ring port is paused at the end, with packets waiting.
    let paused = u64s(&out.ports, "paused_ps_class0");
    for c in &want {
        let (a, b) = c.split_once("->").unwrap();
        assert!(paused[port_row(&out, a, b)] > 0, "{c} never paused");
    }

    // Without PFC the same traffic cannot deadlock: it loses packets and completes.
    let flows: Vec<_> = (0..5).map(|h| (h, (h + 2) % 5, 2_000_000, 0.0)).collect();
    let lossy = run_flows("ring_lossy", topo, "buffer_bytes = 1000000", &flows);
    assert!(finished_all(&lossy));
    assert!(lossy.summary.get("deadlocked").is_none());
}

#[test]
fn undersized_headroom_drops_lossless_packets_and_says_it_is_a_configuration_error() {
    let topo = "kind = \"single_switch\"\nhosts = 9\nhost_rate_gbps = 10.0\nhost_delay_us = 5.0";
    let flows: Vec<_> = (1..=8).map(|h| (h, 0, 300_000, 0.0)).collect();
    let out = run_flows(
        "small_headroom",
        topo,
        "buffer_bytes = 300000\npfc = true\npfc_headroom_bytes = 1500\npfc_allow_small_headroom = true",
        &flows,
    );
    let lost = out.summary["pfc"]["lossless_drops"].as_u64().unwrap();
    assert!(lost > 0);
    assert_eq!(lost, u64s(&out.ports, "drops").iter().sum::<u64>(), "every drop is a headroom overflow");
    assert_eq!(u64s(&out.switches, "headroom_overflows")[0], lost);
    let msg = out.summary["pfc"]["configuration_error"].as_str().expect("reported");
    assert!(msg.contains("headroom") && msg.contains("switch0"), "{msg}");
    // The default headroom, sized per link, holds the same incast.
    let sized = run_flows("sized_headroom", topo, "buffer_bytes = 300000\npfc = true", &flows);
    assert_eq!(sized.summary["pfc"]["lossless_drops"], 0);
    assert!(finished_all(&sized));
}

#[test]
fn the_headroom_sized_per_link_holds_a_loaded_fabric_with_mixed_rates() {
    // 100 Gb/s hosts, 400 Gb/s fabric (a threshold shift of 1 there), Poisson load plus a 20:1
    // incast: many pauses, no lossless drop, no deadlock.
    let text = "seed = 1\nduration_us = 1000.0\n[topology]\nkind = \"leaf_spine\"\nracks = 3\nhosts_per_rack = 8\nspines = 2\n\
                host_rate_gbps = 100.0\ncore_rate_gbps = 400.0\n[switch]\nbuffer_bytes = 2000000\npfc = true\n\
                [transport]\nprotocol = \"newreno\"\n[[workload]]\nkind = \"poisson\"\nload = 0.7\ncdf = \"websearch\"\n\
                [[workload]]\nkind = \"incast\"\nsenders = 20\nsize_bytes = 500000\nat_us = 100.0\nreceiver = 0\n";
    let out = run_checked(&spec(text));
    let pfc = &out.summary["pfc"];
    assert!(pfc["pause_frames_sent"].as_u64().unwrap() > 100, "{pfc}");
    assert_eq!(pfc["lossless_drops"], 0);
    assert_eq!(out.summary["queues"]["drops"], 0);
    assert_eq!(out.summary["deadlocked"], false);
    assert!(out.summary["buffer"]["max_headroom_bytes"].as_u64().unwrap() > 0, "the headroom was used");
}

#[test]
fn a_host_nic_pause_stops_its_switch_port_until_resumed() {
    use dcnsim_core::engine::events::Event;
    use dcnsim_core::net::packet::{Fate, Packet, PacketKind};
    use dcnsim_core::time::{Rate, US};

    let (mut net, mut ev) = lossless_switch(3);
    // Host 0 pauses its switch at once and resumes at 100 us; host 1 sends it 10 packets at 0.
    net.host_pause(0, 0, true, 0, &mut ev);
    for i in 0..10 {
        let mut p = Packet::new(PacketKind::Data, 0, 1, 0, 1500);
        p.seq = i;
        send(&mut net, &mut ev, p);
    }
    ev.schedule(100 * US, Event::FlowArrival);
    let mut arrivals = Vec::new();
    while let Some((now, e)) = ev.pop() {
        match e {
            Event::FlowArrival => net.host_pause(0, 0, false, now, &mut ev),
            Event::LinkArrival(port) => {
                let Some((pkt, node)) = net.on_link_arrival(port, now, &mut ev) else { continue };
                if node >= net.hosts {
                    net.switch_arrival(port, node, pkt, now, &mut ev);
                } else {
                    arrivals.push((now, net.pool.get(pkt).seq));
                    net.pool.release(pkt, Fate::Delivered);
                }
            }
            Event::PortFree(port) => {
                net.on_port_free(port, now, &mut ev);
            }
            Event::SwitchTimer { kind, id } => assert!(!net.on_switch_timer(kind, id, now, &mut ev)),
            other => panic!("{other:?}"),
        }
    }
    // The RESUME frame leaves host 0 at 100 us and takes 51.2 ns + 1 us to arrive; the first packet
    // then needs 1.2 us + 1 us. In order, back to back at line rate.
    let resume_lands = 100 * US + Rate::from_gbps(10.0).tx_time(64) + US;
    assert_eq!(arrivals.len(), 10);
    assert_eq!(arrivals[0].0, resume_lands + 1_200_000 + US);
    assert!(arrivals.windows(2).all(|w| w[1].0 - w[0].0 == 1_200_000 && w[1].1 == w[0].1 + 1));
    let down = net.routes.host_port[0];
    let pfc = net.pfc.as_deref().unwrap();
    let pause_lands = Rate::from_gbps(10.0).tx_time(64) + US;
    assert_eq!(pfc.paused_time(down, &net.ports[down as usize], 0, ev.now()), resume_lands - pause_lands);
    net.check_conservation().unwrap();
}

/// The PB-FS paper's thresholds (11% of the free buffer at 25 Gb/s ports, 33% at 100 Gb/s) are
/// what alpha 1/8 and 1/2 fill alone, alpha / (1 + alpha): listing those alphas per rate is the
/// shift rule's run bit for bit; a smaller alpha pauses a lossless incast earlier and more often.
#[test]
fn alpha_by_rate_matches_the_shift_rule_and_a_smaller_alpha_pauses_more() {
    let topo = "kind = \"leaf_spine\"\nracks = 2\nhosts_per_rack = 8\nspines = 1\nhost_rate_gbps = 25.0\ncore_rate_gbps = 100.0";
    let flows: Vec<_> = (0..8).map(|h| (h, 8 + h % 2, 400_000, 0.0)).collect();
    let run = |name: &str, alpha: &str| {
        run_flows(name, topo, &format!("buffer_bytes = 2000000\npfc = true\n{alpha}"), &flows)
    };
    let shift = run("alpha_shift", "buffer_alpha_shift = 3");
    let listed = run("alpha_listed", "buffer_alpha_by_rate = [[25, 0.125], [100, 0.5]]");
    let literal = run("alpha_literal", "buffer_alpha_by_rate = [[25, 0.03], [100, 0.1]]");
    assert_eq!(shift.flows, listed.flows, "alpha 1/8 and 1/2 listed by rate must be the shift rule exactly");
    assert_eq!(shift.summary["pfc"], listed.summary["pfc"]);
    for out in [&shift, &literal] {
        assert!(finished_all(out));
        assert_eq!(out.summary["queues"]["drops"], 0, "lossless");
    }
    let pauses = |o: &RunOutput| o.summary["pfc"]["pause_frames_sent"].as_u64().unwrap();
    assert!(pauses(&shift) > 0, "the incast must fill the buffer: {}", shift.summary["pfc"]);
    assert!(pauses(&literal) > pauses(&shift), "{} vs {}", pauses(&literal), pauses(&shift));
}

#[test]
fn switch_spec_errors_name_the_field() {
    let base = "duration_us = 100.0\n[topology]\nkind = \"single_switch\"\nhosts = 3\nhost_rate_gbps = 10.0\n\
                [transport]\nprotocol = \"newreno\"\n[[workload]]\nkind = \"incast\"\nsenders = 2\nsize_bytes = 10000\nreceiver = 0\nat_us = 1.0\n";
    let case = |what: &str, extra: &str, field: &str, fragment: &str| {
        (what.to_string(), spec(&format!("{base}{extra}")), field.to_string(), fragment.to_string())
    };
    let failures = spec_error_mismatches([
        case("pfc without a buffer", "[switch]\npfc = true\n", "switch.pfc", "needs a shared buffer"),
        case(
            "pfc keys without pfc",
            "[switch]\nbuffer_bytes = 100000\npfc_headroom_bytes = 9000\n",
            "switch.pfc_headroom_bytes",
            "only used with pfc",
        ),
        case(
            "alpha without a buffer",
            "[switch]\nbuffer_alpha_shift = 2\n",
            "switch.buffer_alpha_shift",
            "only used with buffer_bytes",
        ),
        case("zero buffer", "[switch]\nbuffer_bytes = 0\n", "switch.buffer_bytes", "zero-size"),
        case(
            "buffer and port limits",
            "[queue]\nlimit_packets = 10\n[switch]\nbuffer_bytes = 100000\n",
            "switch.buffer_bytes",
            "unset the per-port limit",
        ),
        case(
            "buffer and trimming",
            "[queue]\npriorities = 2\nlimit_packets = 8\ntrim = true\n[switch]\nbuffer_bytes = 100000\n",
            "switch.buffer_bytes",
            "unset the per-port limit",
        ),
        case(
            "class out of range",
            "[switch]\nbuffer_bytes = 100000\npfc = true\npfc_classes = [1]\n",
            "switch.pfc_classes[0]",
            "below queue.priorities",
        ),
        case(
            "priorities differ by role",
            "[queue]\npriorities = 2\n[queue.nic]\npriorities = 1\n[switch]\nbuffer_bytes = 100000\npfc = true\n",
            "switch.pfc",
            "same queue.priorities",
        ),
        case(
            "headroom too small",
            "[switch]\nbuffer_bytes = 1000000\npfc = true\npfc_headroom_bytes = 2000\n",
            "switch.pfc_headroom_bytes",
            "too small for the link host0->switch0",
        ),
        case(
            "buffer too small for headroom",
            "[switch]\nbuffer_bytes = 20000\npfc = true\n",
            "switch.buffer_bytes",
            "switch switch0 sets aside",
        ),
        case(
            "alpha by rate without a buffer",
            "[switch]\nbuffer_alpha_by_rate = [[10, 0.125]]\n",
            "switch.buffer_alpha_by_rate",
            "only used with buffer_bytes",
        ),
        case(
            "alpha by rate and shift",
            "[switch]\nbuffer_bytes = 100000\nbuffer_alpha_shift = 2\nbuffer_alpha_by_rate = [[10, 0.125]]\n",
            "switch.buffer_alpha_by_rate",
            "either buffer_alpha_shift or",
        ),
        case(
            "alpha by rate not a pair",
            "[switch]\nbuffer_bytes = 100000\nbuffer_alpha_by_rate = [[10, 0.125], [40]]\n",
            "switch.buffer_alpha_by_rate[1]",
            "expected [rate_gbps, alpha]",
        ),
        case(
            "alpha out of range",
            "[switch]\nbuffer_bytes = 100000\nbuffer_alpha_by_rate = [[10, 0.0]]\n",
            "switch.buffer_alpha_by_rate[0]",
            "alpha must be in",
        ),
        case(
            "rate listed twice",
            "[switch]\nbuffer_bytes = 100000\nbuffer_alpha_by_rate = [[10, 0.1], [10.0, 0.2]]\n",
            "switch.buffer_alpha_by_rate[1]",
            "listed twice",
        ),
        case(
            "a port rate not listed",
            "[switch]\nbuffer_bytes = 100000\nbuffer_alpha_by_rate = [[25, 0.11]]\n",
            "switch.buffer_alpha_by_rate",
            "no alpha for the 10 Gb/s port",
        ),
        case(
            "deadlock check interval",
            "[switch]\nbuffer_bytes = 100000\npfc = true\npfc_deadlock_check_us = 0.0\n",
            "switch.pfc_deadlock_check_us",
            "must be in",
        ),
    ]);
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn a_pfc_frame_behind_the_packet_on_the_wire_does_not_hide_that_packet_from_link_usage() {
    // A PAUSE sent while a packet is serializing goes on the link behind it: the frame is then the
    // link's last entry. The utilization accounting must still pro-rate the packet (and not read the
    // frame as a pooled packet: this panicked at the end of a 320-host DCQCN incast run).
    use dcnsim_core::net::link_usage::unsent_after;
    use dcnsim_core::net::packet::{Packet, PacketKind};

    let (mut net, mut ev) = lossless_switch(2);
    // Host 0 starts a 1500-byte packet at 0 (1.2 us at 10 Gb/s) and pauses its switch at 0.
    send(&mut net, &mut ev, Packet::new(PacketKind::Data, 0, 0, 1, 1500));
    net.host_pause(0, 0, true, 0, &mut ev);
    let nic = net.nic_port(0) as usize;
    assert_eq!(net.ports[nic].in_pipe(), 2, "the packet, then the frame");
    let unsent = unsent_after(&net, 600_000);
    assert_eq!(unsent[nic], 750.0, "half of the packet is still to go at 0.6 us");
    assert_eq!(unsent_after(&net, 1_200_000)[nic], 0.0, "sent by 1.2 us; the frame counts nothing");
}

/// `hosts` hosts on one switch at 10 Gb/s and 1 us links, unbounded queues, a 1 MB shared buffer
/// with PFC on class 0, and an empty event queue: for driving the network by hand.
fn lossless_switch(hosts: u32) -> (dcnsim_core::net::Network, dcnsim_core::engine::events::EventQueue) {
    use dcnsim_core::net::queue::QueueConfig;
    use dcnsim_core::net::{Network, QueueConfigs, SwitchConfig};
    use dcnsim_core::time::{Rate, US};
    use dcnsim_core::topology::builders::single_switch;

    let g = single_switch(hosts, Rate::from_gbps(10.0), US);
    let q = QueueConfig::infinite();
    let mut net =
        Network::build(&g, &QueueConfigs { nic: q.clone(), to_host: q.clone(), fabric: q }, 0, None, 1).unwrap();
    let sw = SwitchConfig { buffer_bytes: Some(1_000_000), lossless: 1, ..SwitchConfig::default() };
    net.configure_switches(&sw, 1500).unwrap();
    (net, dcnsim_core::engine::events::EventQueue::new())
}
