//! The conformance suite: every registered protocol (`transport::protocols()`), run as its own
//! `Protocol::conformance` declaration says, must pass every case here; a protocol that offers
//! PB-FS (`fast_start = "pbfs"`) passes them again with it on (`<name>+pbfs`, the same declaration
//! with switches sending CC-postcards). A new protocol is picked up by registering it; nothing here
//! names a protocol.
//!
//! Cases: a lone flow against the exact ideal FCT (or the declared handshake) on a single switch and
//! a leaf-spine, from 1 byte to 1 MB; a 16-to-1 incast into small buffers delivers every byte of
//! every flow exactly once; the same seed gives the same tables and another seed other ones;
//! counters are present, snake_case and unique; stray and duplicate packets of every kind, for
//! finished and never-started flows, change nothing (nor report `Sent` again); with random loss on
//! every link every flow still completes with exactly its bytes; every finished flow reported
//! `Sent` (its sender handed the last new byte to its NIC) exactly once, no sooner than its start
//! and no later than its finish, with and without loss. Every run also checks packet conservation and the
//! other run invariants (`common::check_invariants`, and the simulator's own check at the end).
//!
//! A protocol that cannot pass a case says so in its declaration (`exempt`, with the reason); the
//! suite prints every exemption and fails if an exempt case passes.
mod common;
use common::*;
use dcnsim_core::api::{read_spec, RunOptions, RunOutput, Simulation};
use dcnsim_core::net::packet::{flags, Packet, PacketKind};
use dcnsim_core::transport::{conformance, protocols, Case, Conformance, LoneFlow};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// 17 hosts on one switch (room for the 16-to-1 incast).
const SINGLE_SWITCH: &str = "kind = \"single_switch\"\nhosts = 17\nhost_rate_gbps = 10.0\nhost_delay_us = 1.0";
/// Two racks of three hosts under two spines, core links 4x the host links.
const LEAF_SPINE: &str = "kind = \"leaf_spine\"\nracks = 2\nhosts_per_rack = 3\nspines = 2\nhost_rate_gbps = 10.0\n\
                          core_rate_gbps = 40.0\nhost_delay_us = 1.0\ncore_delay_us = 1.0";
/// (name, topology, a host far from host 0).
const TOPOLOGIES: [(&str, &str, u32); 2] = [("single_switch", SINGLE_SWITCH, 16), ("leaf_spine", LEAF_SPINE, 5)];
/// The incast's buffers: a fraction of the 16 senders' first windows.
const INCAST_LIMIT_PACKETS: i64 = 32;

/// PB-FS as a start layer: merged over the declaration of every protocol that offers
/// `fast_start = "pbfs"` (`dcnsim describe` lists it under the protocol's name), which then runs
/// every case a second time as `<name>+pbfs`.
const PBFS: &str = "[switch]\npostcards = true\n[transport]\nfast_start = \"pbfs\"\n";

/// The protocol's declaration, and with PB-FS on if the protocol offers it.
fn variants(name: &str, c: Conformance) -> Vec<(String, Conformance)> {
    let d = dcnsim_core::api::describe();
    let pbfs =
        d.params.iter().any(|p| p.scope == Some(name) && p.path == "transport.fast_start" && p.kind.contains("pbfs"));
    let mut v = vec![(name.to_string(), c)];
    if pbfs {
        let mut spec: toml::Table = toml::from_str(c.spec).expect("checked by protocol_spec");
        merge_spec(&mut spec, &toml::from_str(PBFS).unwrap());
        let spec: &'static str = Box::leak(toml::to_string(&spec).unwrap().into_boxed_str());
        v.push((format!("{name}+pbfs"), Conformance { spec, ..c }));
    }
    v
}

/// Runs `check` for every registered protocol, each in isolation (a panic is a failure of that
/// protocol), and again with PB-FS on where the protocol offers it; honours and reports
/// exemptions; fails with every protocol's failures at once.
fn for_each_protocol(case: Case, check: impl Fn(&str, &Conformance) -> Vec<String>) {
    let mut report = Vec::new();
    for (proto, _) in protocols() {
        let declared = conformance(proto).expect("every registered protocol declares its conformance");
        for (name, c) in variants(proto, declared) {
            let failures = match catch_unwind(AssertUnwindSafe(|| check(proto, &c))) {
                Ok(f) => f,
                Err(e) => vec![format!(
                    "panicked: {}",
                    e.downcast_ref::<String>()
                        .cloned()
                        .or(e.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default()
                )],
            };
            match c.exempt.iter().find(|(c, _)| *c == case) {
                Some((_, why)) => {
                    eprintln!("conformance: {name} is exempt from {case:?}: {why}");
                    if failures.is_empty() {
                        report.push(format!("{name}: exempt from {case:?} ({why}) yet passes: drop the exemption"));
                    }
                }
                None => report.extend(failures.into_iter().map(|f| format!("{name}: {f}"))),
            }
        }
    }
    assert!(report.is_empty(), "{case:?} fails:\n{}", report.join("\n"));
}

/// A spec for `protocol`: the suite's `text` (topology, workload, ...) with the protocol's
/// declared fragment merged over it.
fn protocol_spec(protocol: &str, c: &Conformance, text: &str) -> toml::Table {
    let mut t: toml::Table = toml::from_str(&format!("{text}\n[transport]\nprotocol = \"{protocol}\"\n"))
        .unwrap_or_else(|e| panic!("suite spec: {e}\n{text}"));
    let frag: toml::Table =
        toml::from_str(c.spec).unwrap_or_else(|e| panic!("{protocol}'s conformance spec is not TOML: {e}"));
    merge_spec(&mut t, &frag);
    t
}

fn json(t: &toml::Table) -> serde_json::Value {
    serde_json::to_value(t).unwrap()
}

/// Payload bytes of a full packet in this spec.
fn mss(t: &toml::Table) -> u64 {
    let net = t.get("net").and_then(|n| n.as_table());
    let get = |k: &str, d: i64| net.and_then(|n| n.get(k)).and_then(|v| v.as_integer()).unwrap_or(d);
    (get("mtu_bytes", 1500) - get("header_bytes", 64)) as u64
}

/// What random per-packet spraying may add to a lone flow of `size` bytes. The multipath ideal
/// lets a short last packet overtake its predecessor on another path; a random choice may put it on
/// the same path, behind that packet, so that it reaches the receiver's link after it instead:
/// later by its own serialization there. Full-sized packets cannot overtake each other, so
/// nothing else changes. 0 for any other routing, and for flows of whole packets.
fn spray_slack_ps(t: &toml::Table, size: u64) -> u64 {
    let get = |sec: &str, k: &str| t.get(sec).and_then(|s| s.get(k)).cloned();
    let spray = get("routing", "load_balancing").and_then(|v| v.as_str().map(String::from)).as_deref() == Some("spray");
    let last = size % mss(t);
    if !spray || size <= mss(t) || last == 0 {
        return 0;
    }
    let header = get("net", "header_bytes").and_then(|v| v.as_integer()).unwrap_or(64) as u64;
    let gbps = get("topology", "host_rate_gbps").and_then(|v| v.as_float()).unwrap();
    ((last + header) as f64 * 8.0 / gbps * 1e3).ceil() as u64
}

/// A `[[workload]]` table listing `flows` (src, dst, size, start_us), in a file named after `tag`.
fn flow_list(tag: &str, flows: &[(u32, u32, u64, f64)]) -> String {
    let f = flow_file(&format!("conformance-{tag}"), flows);
    format!("[[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n", f.display())
}

/// Runs a spec; a spec or run error is a failure, not a panic.
fn try_run(t: &toml::Table) -> Result<RunOutput, String> {
    let out = dcnsim_core::api::run(&json(t), &RunOptions::default()).map_err(|e| format!("run failed: {e}"))?;
    check_invariants(&out);
    Ok(out)
}

/// Every flow finished with exactly its bytes delivered (`window_bytes`: the window is the whole run).
fn all_delivered(out: &RunOutput) -> Vec<String> {
    let (ends, sizes, got) =
        (opt_u64s(&out.flows, "end_ps"), u64s(&out.flows, "size_bytes"), u64s(&out.flows, "window_bytes"));
    let mut f = Vec::new();
    for i in 0..ends.len() {
        if ends[i].is_none() || got[i] != sizes[i] {
            f.push(format!("flow {i}: {} of {} bytes delivered, finished: {}", got[i], sizes[i], ends[i].is_some()));
        }
    }
    f
}

#[test]
fn a_lone_flow_takes_the_ideal_time_or_the_declared_handshake() {
    for_each_protocol(Case::LoneFlow, |p, c| {
        let mut failures = Vec::new();
        for (topo_name, topo, far) in TOPOLOGIES {
            let probe = protocol_spec(p, c, &format!("duration_us = 1.0\n[topology]\n{topo}"));
            let m = mss(&probe);
            for size in [1, m, m + 1, 30 * m, 1_000_000] {
                let wl = flow_list(&format!("lone-{p}-{topo_name}-{size}"), &[(0, far, size, 2.0)]);
                let t = protocol_spec(p, c, &format!("seed = 1\nduration_us = 100000.0\n[topology]\n{topo}\n{wl}"));
                let out = match try_run(&t) {
                    Ok(o) => o,
                    Err(e) => {
                        failures.push(format!("{topo_name}, {size} B: {e}"));
                        continue;
                    }
                };
                let Some(fct) = opt_u64s(&out.flows, "fct_ps")[0] else {
                    failures.push(format!("{topo_name}, {size} B: the lone flow did not finish"));
                    continue;
                };
                let ideal = u64s(&out.flows, "ideal_fct_ps")[0];
                let bdp = out.summary["bdp_bytes"].as_u64().unwrap();
                let rtt = out.summary["base_rtt_ps"].as_u64().unwrap();
                let extra = fct as i64 - ideal as i64;
                let slack = spray_slack_ps(&t, size) as i64;
                let ok = match c.lone_flow {
                    LoneFlow::Exact => (0..=slack).contains(&extra),
                    LoneFlow::Handshake { exact_up_to_bdp, max_extra_rtts } => {
                        if size as f64 <= exact_up_to_bdp * bdp as f64 {
                            (0..=slack).contains(&extra)
                        } else {
                            extra > 0 && extra as f64 <= max_extra_rtts * rtt as f64 + slack as f64
                        }
                    }
                    LoneFlow::Bounded { max_extra_rtts } => {
                        extra >= 0 && extra as f64 <= max_extra_rtts * rtt as f64 + slack as f64
                    }
                };
                if !ok {
                    failures.push(format!(
                        "{topo_name}, {size} B: fct {fct} ps, ideal {ideal} ps ({extra:+} ps; base RTT {rtt} ps, \
                         BDP {bdp} B; declared {:?})",
                        c.lone_flow
                    ));
                }
            }
        }
        failures
    });
}

#[test]
fn an_incast_into_small_buffers_delivers_every_byte_once() {
    for_each_protocol(Case::Incast, |p, c| {
        // Every other host sends host 0 a short and a long flow at once: the short ones go out
        // before any feedback in most protocols, the long ones need the protocol's control loop.
        let flows: Vec<_> = (1..=16).flat_map(|s| [(s, 0, 4_000, 1.0), (s, 0, 100_000, 1.0)]).collect();
        let wl = flow_list(&format!("incast-{p}"), &flows);
        let t = protocol_spec(
            p,
            c,
            &format!(
                "seed = 3\nduration_us = 2000000.0\n[topology]\n{SINGLE_SWITCH}\n[queue]\nlimit_packets = {INCAST_LIMIT_PACKETS}\n{wl}"
            ),
        );
        let out = match try_run(&t) {
            Ok(o) => o,
            Err(e) => return vec![e],
        };
        let q = &out.summary["queues"];
        eprintln!("conformance: {p} incast: {} drops, {} trims", q["drops"], q["trims"]);
        all_delivered(&out)
    });
}

/// Background traffic on the leaf-spine with a little loss: every random stream is in play.
fn busy(p: &str, c: &Conformance, seed: u64) -> toml::Table {
    protocol_spec(
        p,
        c,
        &format!(
            "seed = {seed}\nduration_us = 400.0\nstop_when_done = false\n[topology]\n{LEAF_SPINE}\nloss_probability = 0.01\n\
             [[workload]]\nkind = \"poisson\"\nload = 0.6\ncdf = \"fb_hadoop\"\n"
        ),
    )
}

#[test]
fn the_same_seed_gives_the_same_tables_and_another_seed_others() {
    for_each_protocol(Case::Determinism, |p, c| {
        let tables = |seed| try_run(&busy(p, c, seed)).map(|o| (o.flows.rows(), o.flows.to_csv() + &o.ports.to_csv()));
        let (a, b, other) = match (tables(11), tables(11), tables(12)) {
            (Ok(a), Ok(b), Ok(c)) => (a, b, c),
            (a, b, c) => return [a.err(), b.err(), c.err()].into_iter().flatten().collect(),
        };
        let mut f = Vec::new();
        if a.0 < 10 {
            f.push(format!("only {} flows: too few to tell runs apart", a.0));
        }
        if a.1 != b.1 {
            f.push("the same spec and seed gave different flow or port tables".into());
        }
        if a.1 == other.1 {
            f.push("seeds 11 and 12 gave identical tables".into());
        }
        f
    });
}

/// Builds and runs a simulation (for cases that look inside it), logging every `Sent` report
/// (`FlowLog::sent_log`).
fn simulate(t: &toml::Table) -> Result<Simulation, String> {
    let (rs, _) = read_spec(&json(t)).map_err(|e| format!("{e}"))?;
    let mut sim = Simulation::new(rs).map_err(|e| format!("{e}"))?;
    sim.flows.sent_log = Some(Vec::new());
    sim.run(&RunOptions::default()).map_err(|e| format!("{e}"))?;
    Ok(sim)
}

#[test]
fn counters_are_present_snake_case_and_unique() {
    for_each_protocol(Case::Counters, |p, c| {
        let sim = match simulate(&busy(p, c, 1)) {
            Ok(s) => s,
            Err(e) => return vec![e],
        };
        let counters = sim.transports[0].counters();
        let mut f = Vec::new();
        if counters.is_empty() {
            f.push("no counters".to_string());
        }
        let mut seen = std::collections::HashSet::new();
        for (name, _) in &counters {
            let snake = name.starts_with(|c: char| c.is_ascii_lowercase())
                && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                && !name.ends_with('_')
                && !name.contains("__");
            if !snake {
                f.push(format!("counter `{name}` is not snake_case"));
            }
            if !seen.insert(*name) {
                f.push(format!("counter `{name}` appears twice"));
            }
        }
        if counters.iter().all(|&(_, v)| v == 0) {
            f.push(format!("every counter is zero after a busy lossy run: {counters:?}"));
        }
        f
    });
}

/// What the run recorded about its flows: (end, delivered bytes) per flow, the finished count and
/// the `Sent` reports.
fn flow_snapshot(sim: &Simulation) -> (Vec<(Option<u64>, u64)>, u64, usize) {
    let f = &sim.flows;
    let sent = f.sent_log.as_ref().map_or(0, Vec::len);
    (f.records.iter().zip(&f.delivered_per_flow).map(|(r, &d)| (r.end, d)).collect(), f.finished, sent)
}

/// Plausible stray packets of every kind between `a` and `b` for `flow` of `size` bytes: copies of
/// its first and (if it has one) second packet, with no and with a full acknowledgement, with no
/// flags, the first/last/ECN flags, or every flag (protocol bits included).
fn strays(flow: u32, a: u32, b: u32, size: u64, mss: u32) -> Vec<(u32, Packet)> {
    let mut v = Vec::new();
    let seqs: &[u64] = if size > mss as u64 { &[0, 1] } else { &[0] };
    for kind in PacketKind::ALL {
        for (src, dst) in [(a, b), (b, a)] {
            for &seq in seqs {
                for ack in [0, size] {
                    for fl in [0, flags::SYN | flags::LAST | flags::ECT, u8::MAX] {
                        let payload = if kind == PacketKind::Data { mss.min(size as u32) } else { 0 };
                        let mut p = Packet::new(kind, flow, src, dst, payload + 64);
                        (p.payload, p.seq, p.ack, p.flags) = (payload, seq, ack, fl);
                        v.push((dst, p));
                    }
                }
            }
        }
    }
    v
}

#[test]
fn stray_and_duplicate_packets_after_a_flow_ends_change_nothing() {
    for_each_protocol(Case::StrayPackets, |p, c| {
        let probe = protocol_spec(p, c, &format!("duration_us = 1.0\n[topology]\n{LEAF_SPINE}"));
        let m = mss(&probe);
        let size = 3 * m;
        let wl = flow_list(&format!("stray-{p}"), &[(0, 5, size, 1.0), (5, 0, m, 1.0)]);
        let t = protocol_spec(p, c, &format!("seed = 2\nduration_us = 50000.0\n[topology]\n{LEAF_SPINE}\n{wl}"));
        let mut sim = match simulate(&t) {
            Ok(s) => s,
            Err(e) => return vec![e],
        };
        let before = flow_snapshot(&sim);
        let mut f = Vec::new();
        if before.1 != 2 {
            return vec![format!("{} of 2 flows finished", before.1)];
        }
        // Twice: right after the last flow finished (senders may still hold state), and once the
        // network has drained (every connection gone). Flow 2 and a far id never started.
        for round in 0..2 {
            let created = sim.net.pool.created;
            for (flow, flow_size) in [(0u32, size), (1, m), (2, size), (1 << 20, m)] {
                for (host, pkt) in strays(flow, 0, 5, flow_size, m as u32) {
                    sim.deliver_stray(host, &pkt);
                }
            }
            eprintln!(
                "conformance: {p} stray round {round}: {} packets sent in response",
                sim.net.pool.created - created
            );
            // Let whatever the transports sent in response play out.
            sim.spec.stop_when_done = false;
            if let Err(e) = sim.run(&RunOptions::default()) {
                f.push(format!("round {round}: {e}"));
            }
            let after = flow_snapshot(&sim);
            if after != before {
                f.push(format!("round {round}: flow records changed from {before:?} to {after:?}"));
            }
        }
        f
    });
}

#[test]
fn with_random_loss_on_every_link_every_flow_completes_with_its_bytes() {
    for_each_protocol(Case::RandomLoss, |p, c| {
        let probe = protocol_spec(p, c, &format!("duration_us = 1.0\n[topology]\n{LEAF_SPINE}"));
        let m = mss(&probe);
        // Sizes from one byte to 1 MB, within a rack and across, and three flows into host 0.
        let flows = [
            (0, 5, 1, 1.0),
            (1, 4, m, 1.0),
            (2, 3, m + 1, 1.0),
            (3, 1, 30 * m, 1.0),
            (4, 2, 1_000_000, 1.0),
            (5, 0, 200_000, 1.0),
            (3, 0, 200_000, 2.0),
            (1, 0, 200_000, 3.0),
        ];
        let wl = flow_list(&format!("loss-{p}"), &flows);
        // Several seeds: each loses other packets (data, ACKs, pulls, credits, last packets).
        let mut f = Vec::new();
        for seed in 1..=5 {
            let t = protocol_spec(
                p,
                c,
                &format!(
                    "seed = {seed}\nduration_us = 5000000.0\n[topology]\n{LEAF_SPINE}\nloss_probability = 0.02\n{wl}"
                ),
            );
            let out = match try_run(&t) {
                Ok(o) => o,
                Err(e) => {
                    f.push(format!("seed {seed}: {e}"));
                    continue;
                }
            };
            f.extend(all_delivered(&out).into_iter().map(|x| format!("seed {seed}: {x}")));
            if out.summary["queues"]["losses"].as_u64().unwrap() == 0 {
                f.push(format!("seed {seed}: no packet was lost: the case tests nothing"));
            }
        }
        f
    });
}

/// Each flow's `Sent` reports against its record: every flow finished, and reported `Sent` exactly
/// once, at or after its start (a one-packet flow goes out at once) and at or before its finish.
fn sent_once_between_start_and_finish(sim: &Simulation) -> Vec<String> {
    let f = &sim.flows;
    let log = f.sent_log.as_deref().expect("simulate logs Sent reports");
    let mut at: Vec<Vec<u64>> = vec![Vec::new(); f.records.len()];
    let mut out = Vec::new();
    for &(id, t) in log {
        match at.get_mut(id as usize) {
            Some(v) => v.push(t),
            None => out.push(format!("Sent reported for flow {id}, which never started")),
        }
    }
    for (i, (r, sent)) in f.records.iter().zip(&at).enumerate() {
        let Some(end) = r.end else {
            out.push(format!("flow {i} ({} B) did not finish", r.size));
            continue;
        };
        match sent[..] {
            [t] if r.start <= t && t <= end => {}
            [t] => out.push(format!("flow {i} ({} B): Sent at {t} ps, outside [start {}, end {end}]", r.size, r.start)),
            _ => out.push(format!("flow {i} ({} B): Sent reported {} times ({sent:?}), not once", r.size, sent.len())),
        }
    }
    out
}

#[test]
fn every_finished_flow_reports_sent_once_between_its_start_and_its_finish() {
    for_each_protocol(Case::Sent, |p, c| {
        let probe = protocol_spec(p, c, &format!("duration_us = 1.0\n[topology]\n{LEAF_SPINE}"));
        let m = mss(&probe);
        // One-packet flows, a short last packet, long flows, and three flows into host 0 at once.
        let flows = [
            (0, 5, 1, 1.0),
            (1, 4, m, 1.0),
            (2, 3, m + 1, 1.5),
            (3, 1, 30 * m, 1.0),
            (4, 2, 300_000, 2.0),
            (5, 0, 100_000, 1.0),
            (3, 0, 100_000, 1.0),
            (1, 0, 100_000, 1.0),
        ];
        let wl = flow_list(&format!("sent-{p}"), &flows);
        let mut f = Vec::new();
        // Lossless, then lossy: retransmissions (of the last packet too) must not report again.
        for (seed, loss) in [(1, 0.0), (2, 0.02)] {
            let t = protocol_spec(
                p,
                c,
                &format!(
                    "seed = {seed}\nduration_us = 5000000.0\n[topology]\n{LEAF_SPINE}\nloss_probability = {loss:?}\n{wl}"
                ),
            );
            match simulate(&t) {
                Ok(sim) => {
                    f.extend(sent_once_between_start_and_finish(&sim).into_iter().map(|x| format!("loss {loss}: {x}")));
                    if loss > 0.0 && sim.net.ports.iter().all(|p| p.counters.losses == 0) {
                        f.push(format!("loss {loss}: no packet was lost: the lossy run tests nothing"));
                    }
                }
                Err(e) => f.push(format!("loss {loss}: {e}")),
            }
        }
        f
    });
}
