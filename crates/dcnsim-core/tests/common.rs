//! Helpers shared by the integration tests: specs as TOML text, flow lists as temp files, and the
//! invariants every run must satisfy.
#![allow(dead_code)]

use dcnsim_core::api::{run, RunOptions, RunOutput};
use dcnsim_core::record::table::{Column, Table};
use std::path::PathBuf;

pub fn spec(toml_text: &str) -> serde_json::Value {
    let v: toml::Value = toml::from_str(toml_text).expect("test spec is valid TOML");
    serde_json::to_value(v).unwrap()
}

/// Writes a flow list (src, dst, size_bytes, start_us) to a unique temp file.
pub fn flow_file(name: &str, flows: &[(u32, u32, u64, f64)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dcnsim-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut s = String::from("src,dst,size_bytes,start_us\n");
    for (a, b, sz, t) in flows {
        s.push_str(&format!("{a},{b},{sz},{t}\n"));
    }
    // Tests run as threads, and two may pass the same name with different flows: every call gets a
    // file of its own (a shared name let one test read the other's flows now and then).
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let p = dir.join(format!("{name}-{n}.csv"));
    std::fs::write(&p, s).unwrap();
    p
}

/// Runs a spec and checks the invariants every run must satisfy.
pub fn run_checked(spec: &serde_json::Value) -> RunOutput {
    let out = run(spec, &RunOptions::default()).unwrap_or_else(|e| panic!("run failed: {e}"));
    check_invariants(&out);
    out
}

pub fn check_invariants(out: &RunOutput) {
    let p = &out.summary["packets"];
    let created = p["created"].as_u64().unwrap();
    let accounted =
        p["delivered"].as_u64().unwrap() + p["dropped"].as_u64().unwrap() + p["in_flight"].as_u64().unwrap();
    assert_eq!(created, accounted, "packet conservation: {p}");
    // No reported rate exceeds a capacity: a port's utilization, a host's receive rate in the time
    // series, a flow's throughput in the window (bytes straddling an edge are pro-rated).
    const SLACK: f64 = 1e-9;
    for (i, u) in f64s(&out.ports, "utilization").iter().enumerate() {
        assert!(u.is_nan() || *u <= 1.0 + SLACK, "port {i} utilization {u}");
    }
    let downlink = downlink_gbps(out);
    let ts = &out.timeseries;
    if ts.rows() > 0 {
        let (series, names, values) = (strs(ts, "series"), strs(ts, "name"), f64s(ts, "value"));
        for i in 0..ts.rows() {
            if series[i] == "host_rx_gbps" {
                let cap = downlink[&names[i]];
                assert!(
                    values[i] <= cap * (1.0 + SLACK),
                    "{} received at {} Gb/s on a {cap} Gb/s link",
                    names[i],
                    values[i]
                );
            }
        }
    }
    let window_s = out.summary["window_ps"].as_u64().unwrap() as f64 / 1e12;
    let (dst, window_bytes, size) =
        (u64s(&out.flows, "dst"), u64s(&out.flows, "window_bytes"), u64s(&out.flows, "size_bytes"));
    let mut per_host: std::collections::HashMap<u64, u64> = Default::default();
    for i in 0..dst.len() {
        assert!(window_bytes[i] <= size[i]);
        *per_host.entry(dst[i]).or_default() += window_bytes[i];
    }
    if window_s > 0.0 {
        for (h, b) in per_host {
            let gbps = b as f64 * 8.0 / window_s / 1e9;
            let cap = downlink[&format!("host{h}")];
            assert!(gbps <= cap * (1.0 + SLACK), "host{h} received {gbps} Gb/s in the window on a {cap} Gb/s link");
        }
    }
    // Finished flows are never faster than the ideal.
    let (fct, ideal) = (opt_u64s(&out.flows, "fct_ps"), u64s(&out.flows, "ideal_fct_ps"));
    for i in 0..fct.len() {
        assert!(fct[i].is_none_or(|f| f >= ideal[i]), "flow {i} beat its ideal FCT: {:?} < {}", fct[i], ideal[i]);
    }
    let slow = f64s(&out.flows, "slowdown");
    assert!(slow.iter().all(|s| s.is_nan() || *s >= 1.0), "a flow beat its ideal FCT");
}

/// Rate of the link into each host, by host name.
pub fn downlink_gbps(out: &RunOutput) -> std::collections::HashMap<String, f64> {
    let (role, peer, rate) = (strs(&out.ports, "role"), strs(&out.ports, "peer"), f64s(&out.ports, "rate_gbps"));
    (0..role.len()).filter(|&i| role[i] == "to_host").map(|i| (peer[i].clone(), rate[i])).collect()
}

pub fn u64s(t: &Table, name: &str) -> Vec<u64> {
    match t.get(name) {
        Some(Column::U64(v)) => v.clone(),
        Some(Column::OptU64(v)) => v.iter().map(|x| x.expect("value present")).collect(),
        other => panic!("column {name}: {other:?}"),
    }
}

pub fn opt_u64s(t: &Table, name: &str) -> Vec<Option<u64>> {
    match t.get(name) {
        Some(Column::OptU64(v)) => v.iter().collect(),
        other => panic!("column {name}: {other:?}"),
    }
}

pub fn f64s(t: &Table, name: &str) -> Vec<f64> {
    match t.get(name) {
        Some(Column::F64(v)) => v.clone(),
        other => panic!("column {name}: {other:?}"),
    }
}

/// Row of the dumbbell's bottleneck port (left switch to right switch) in the ports table.
pub fn bottleneck_port(out: &RunOutput) -> usize {
    let (nodes, peers) = (strs(&out.ports, "node"), strs(&out.ports, "peer"));
    (0..nodes.len()).find(|&i| nodes[i] == "left" && peers[i] == "right").expect("a dumbbell's bottleneck port")
}

/// (mean queue bytes, utilization, drops) of the dumbbell's bottleneck port.
pub fn bottleneck(out: &RunOutput) -> (f64, f64, u64) {
    let i = bottleneck_port(out);
    (f64s(&out.ports, "mean_bytes")[i], f64s(&out.ports, "utilization")[i], u64s(&out.ports, "drops")[i])
}

pub fn strs(t: &Table, name: &str) -> Vec<String> {
    match t.get(name) {
        Some(Column::Str(v)) => v.clone(),
        Some(Column::Cat { categories, codes }) => codes.iter().map(|&c| categories[c as usize].clone()).collect(),
        other => panic!("column {name}: {other:?}"),
    }
}

pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * s2)
}

use dcnsim_core::engine::events::{Event, EventQueue};
use dcnsim_core::net::packet::{Fate, Packet};
use dcnsim_core::net::Network;

/// Drives a bare network (no transport) until it is empty; returns the packets hosts received,
/// in arrival order. `inject` is called for `Event::FlowArrival` events the test scheduled.
pub fn drain(
    net: &mut Network,
    ev: &mut EventQueue,
    mut inject: impl FnMut(&mut Network, &mut EventQueue),
) -> Vec<Packet> {
    let mut got = Vec::new();
    while let Some((now, e)) = ev.pop() {
        match e {
            Event::FlowArrival => inject(net, ev),
            Event::LinkArrival(port) => {
                let Some((pkt, node)) = net.on_link_arrival(port, now, ev) else {
                    continue; // lost on a lossy link
                };
                if node >= net.hosts {
                    net.switch_arrival(port, node, pkt, now, ev);
                } else {
                    got.push(*net.pool.get(pkt));
                    net.pool.release(pkt, Fate::Delivered);
                }
            }
            Event::PortFree(port) => {
                net.on_port_free(port, now, ev);
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    net.check_conservation().unwrap();
    got
}

pub fn send(net: &mut Network, ev: &mut EventQueue, mut p: Packet) {
    p.lb = dcnsim_core::net::packet::LoadBalancing::Ecmp;
    let id = net.pool.alloc(p);
    let port = net.nic_port(p.src);
    net.enqueue(port, id, ev.now(), ev);
}

/// Runs each case — (description, spec, expected error field, fragment of the message) — and
/// lists every case that was accepted, failed otherwise, or named another field.
pub fn spec_error_mismatches(
    cases: impl IntoIterator<Item = (String, serde_json::Value, String, String)>,
) -> Vec<String> {
    use dcnsim_core::api::{run, RunError, RunOptions};
    let mut failures = Vec::new();
    for (what, spec, field, fragment) in cases {
        match run(&spec, &RunOptions::default()) {
            Err(RunError::Spec(e)) => {
                if e.field != field || !e.message.contains(&fragment) {
                    failures.push(format!("{what}: got `{}`: {}", e.field, e.message));
                }
            }
            Err(other) => failures.push(format!("{what}: not a spec error: {other}")),
            Ok(_) => failures.push(format!("{what}: accepted")),
        }
    }
    failures
}

/// A small valid DCTCP spec (leaf-spine, Poisson websearch) that spec-error tests edit.
pub const SMALL_DCTCP_SPEC: &str = r#"
seed = 1
duration_us = 100.0
[topology]
kind = "leaf_spine"
racks = 2
hosts_per_rack = 2
spines = 1
host_rate_gbps = 10.0
core_rate_gbps = 10.0
[queue]
limit_packets = 100
ecn = "step"
ecn_k_packets = 20
[transport]
protocol = "dctcp"
[[workload]]
kind = "poisson"
load = 0.5
cdf = "websearch"
"#;

/// Merges `over` into `base` key by key (tables recursively; `over` wins). A queue-size limit in
/// `over` replaces the suite's (a spec may set only one of the two kinds).
pub fn merge_spec(base: &mut toml::Table, over: &toml::Table) {
    for (k, v) in over {
        if let (Some(toml::Value::Table(b)), toml::Value::Table(o)) = (base.get_mut(k), v) {
            if o.contains_key("limit_bytes") || o.contains_key("limit_packets") {
                b.remove("limit_bytes");
                b.remove("limit_packets");
            }
            merge_spec(b, o);
        } else {
            base.insert(k.clone(), v.clone());
        }
    }
}
