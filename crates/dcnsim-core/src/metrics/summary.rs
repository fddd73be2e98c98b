//! Collecting a finished simulation into tables and a summary: slowdown and FCT statistics (per flow
//! in `flow_table`), goodput over the measurement window, queue occupancy per port and per switch.

use super::flow_table::{flow_table, FlowResults};
use super::table::{Column, Table};
use crate::report::output::{RunError, RunOutput};
use crate::scenario::run::Simulation;
use crate::time::Rate;
use serde_json::{json, Value};

/// Linear-interpolated quantile of sorted data (numpy's default), NaN when empty.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// Statistics over finished flows, with the counted flows that did not finish beside them: a
/// tail that never finished is missing from every quantile (survivorship).
fn stats(mut v: Vec<f64>, unfinished: usize) -> Value {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let mean = if v.is_empty() { f64::NAN } else { v.iter().sum::<f64>() / v.len() as f64 };
    json!({"count": v.len(), "unfinished": unfinished, "mean": num(mean), "median": num(quantile(&v, 0.5)), "p99": num(quantile(&v, 0.99)), "max": num(v.last().copied().unwrap_or(f64::NAN))})
}

/// Counted flows that had not finished when the run ended, above this fraction, get a warning.
const UNFINISHED_WARNING: f64 = 0.01;

/// What the results cannot say, found once the run is over (each "`field`: message").
pub fn run_warnings(sim: &Simulation, finished: usize, unfinished: usize) -> Vec<String> {
    let warmup = sim.spec.warmup;
    if sim.ended_at < warmup {
        return vec![format!(
            "`measure.warmup_us`: the run ended at {} us, before the warm-up ended ({} us): there is no measurement window and no statistics; lower warmup_us or set stop_when_done = false",
            sim.ended_at as f64 / 1e6,
            warmup as f64 / 1e6
        )];
    }
    let counted = finished + unfinished;
    if counted == 0 {
        return vec![
            "`measure.warmup_us`: no counted flow started inside the measurement window: slowdown and FCT statistics are empty"
                .into(),
        ];
    }
    let share = unfinished as f64 / counted as f64;
    if share > UNFINISHED_WARNING {
        return vec![format!(
            "`duration_us`: {unfinished} of {counted} counted flows ({:.1}%) had not finished when the run ended; slowdown and FCT statistics cover finished flows only and understate the tail (stop arrivals earlier with the workload's stop_us, or run longer)",
            100.0 * share
        )];
    }
    Vec::new()
}

/// JSON has no NaN: missing statistics are null.
pub(super) fn num(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
    }
}

pub fn human_bytes(b: u64) -> String {
    let (v, u) = if b >= 1_000_000 {
        (b as f64 / 1e6, "MB")
    } else if b >= 1_000 {
        (b as f64 / 1e3, "KB")
    } else {
        (b as f64, "B")
    };
    let s = format!("{v:.1}");
    format!("{}{u}", s.trim_end_matches(".0"))
}

/// Slowdown statistics per flow-size group: groups bounded by `edges` (bytes; the last group is
/// open), each with the counted flows of that size that did not finish.
fn size_groups(edges: &[u64], slowdowns: &[(u64, f64)], unfinished_sizes: &[u64]) -> Vec<Value> {
    let mut groups = Vec::new();
    let mut lo = 0u64;
    for (gi, hi) in edges.iter().copied().map(Some).chain([None]).enumerate() {
        let in_group = |s: u64| s >= lo && hi.is_none_or(|h| s < h);
        let unfinished = unfinished_sizes.iter().filter(|&&s| in_group(s)).count();
        let in_group: Vec<f64> = slowdowns.iter().filter(|(s, _)| in_group(*s)).map(|&(_, v)| v).collect();
        let label = match hi {
            Some(h) if lo == 0 => format!("<{}", human_bytes(h)),
            Some(h) => format!("{}-{}", human_bytes(lo), human_bytes(h)),
            None => format!(">={}", human_bytes(lo)),
        };
        let mut g = stats(in_group, unfinished);
        let o = g.as_object_mut().unwrap();
        o.insert("group".into(), json!(((b'A' + gi as u8) as char).to_string()));
        o.insert("label".into(), json!(label));
        o.insert("min_bytes".into(), json!(lo));
        o.insert("max_bytes".into(), hi.map_or(Value::Null, |h| json!(h)));
        groups.push(g);
        lo = hi.unwrap_or(0);
    }
    groups
}

/// Gb/s of `bytes` over `secs`, NaN for an empty window.
fn gbps(bytes: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        bytes as f64 * 8.0 / secs / 1e9
    } else {
        f64::NAN
    }
}

/// A transport's counters as a JSON object.
fn counters(t: &crate::transport::Transport) -> serde_json::Map<String, Value> {
    t.counters().into_iter().map(|(k, v)| (k.to_string(), json!(v))).collect()
}

/// Drops and the first transport's counters since the measurement window opened (the whole run
/// without a warm-up). Port counters, drops included, restart with the window (`queues.drops` is
/// the window's too); the transport's run from the start, so `transport` counts the whole run and
/// these the window. Counters that are maxima (`max_*`) are left out: they do not subtract.
fn window_counts(sim: &Simulation) -> Value {
    let drops: u64 = sim.net.ports.iter().map(|p| p.counters.drops).sum();
    let before = |k: &str| sim.at_window_open.iter().find(|c| c.0 == k).map_or(0, |c| c.1);
    let transport: serde_json::Map<String, Value> = sim.transports[0]
        .counters()
        .into_iter()
        .filter(|(k, _)| !k.starts_with("max_"))
        .map(|(k, v)| (k.to_string(), json!(v.saturating_sub(before(k)))))
        .collect();
    json!({"drops": drops, "transport": transport})
}

/// Several transports in one run: each setup's protocol and counters, in spec order.
fn transports_summary(sim: &Simulation) -> Value {
    let setups = sim.spec.transports.iter().zip(&sim.transports);
    let all: Vec<Value> = setups
        .map(|(setup, t)| json!({"name": setup.name, "protocol": setup.config.name(), "counters": counters(t)}))
        .collect();
    json!(all)
}

/// The event loop's CPU time (`cpu_time_s`) and events per CPU second beside the wall-clock figures;
/// null where the platform does not tell (see `metrics::cpu_time`).
pub fn add_cpu_time(summary: &mut Value, events: u64, cpu_s: Option<f64>) {
    summary["cpu_time_s"] = json!(cpu_s);
    summary["events_per_cpu_sec"] = json!(cpu_s.filter(|&c| c > 0.0).map(|c| events as f64 / c));
}

/// `wall_s`: wall-clock seconds of the event loop. Fails if a flow beat its ideal FCT (a bug).
/// The result of a finished simulation; the flow table only `with_flow_table` (the summary's
/// statistics are computed either way).
pub fn collect(
    sim: &Simulation,
    resolved: Value,
    events: u64,
    wall_s: f64,
    with_flow_table: bool,
) -> Result<RunOutput, RunError> {
    let (net, spec, fr) = (&sim.net, &sim.spec, sim.spec.framing);
    let host_rate: Rate = spec.topology.kind.host_rate();
    let window_start = spec.warmup;
    let window = sim.ended_at.saturating_sub(window_start);
    let FlowResults { table: flows, slowdowns, fcts_us, unfinished_sizes } = flow_table(sim, with_flow_table)?;
    let n = sim.flows.records.len();
    let mut ports = super::queues::port_table(sim);
    let sw = super::queues::switch_queues(sim);
    let hosts = net.hosts as u64;
    let rtt = net.base_rtt(0, net.hosts - 1, fr.mtu_bytes, fr.control_bytes);
    let bdp = host_rate.bytes_in(rtt);
    let edges: Vec<u64> = spec.metrics.size_group_edges.clone().unwrap_or_else(|| vec![fr.mss() as u64, bdp, 8 * bdp]);
    let secs = window as f64 / 1e12;
    let goodput_gbps = gbps(sim.flows.delivered_in_window.iter().sum(), secs);
    let per_host_min = sim.flows.delivered_in_window.iter().map(|&b| gbps(b, secs)).fold(f64::INFINITY, f64::min);
    // What arrived inside the window: with goodput, whether the run kept up with its load (a
    // backlog that grows through the window means the protocol could not deliver it).
    let offered_window: u64 = sim.flows.records.iter().filter(|r| r.start >= window_start).map(|r| r.size).sum();
    let pool = &net.pool;
    let unfinished = n as u64 - sim.flows.finished;
    let mut warnings = spec.warnings.clone();
    warnings.extend(run_warnings(sim, slowdowns.len(), unfinished_sizes.len()));
    let mut summary = json!({
        "name": spec.name,
        "version": crate::VERSION,
        "seed": spec.seed,
        "protocol": spec.transports[0].config.name(),
        "hosts": hosts,
        "host_rate_gbps": host_rate.gbps(),
        "mss_bytes": fr.mss(),
        "base_rtt_ps": rtt,
        "bdp_bytes": bdp,
        "sim_end_ps": sim.ended_at,
        "window_start_ps": window_start,
        "window_ps": window,
        "wall_time_s": sim.setup_s + wall_s,
        "setup_time_s": sim.setup_s,
        "events": events,
        "events_per_sec": events as f64 / wall_s.max(1e-9),
        "data_packets_delivered": sim.data_packets_delivered(),
        "flows": {"started": n, "finished": sim.flows.finished, "unfinished": unfinished, "counted": slowdowns.len() + unfinished_sizes.len(), "counted_finished": slowdowns.len(), "counted_unfinished": unfinished_sizes.len()},
        "offered_load_gbps": sim.workload.offered_load_bytes_per_sec() * 8.0 / 1e9,
        "offered_window_gbps": num(gbps(offered_window, secs)),
        "goodput_gbps": num(goodput_gbps),
        "goodput_per_host_gbps": num(goodput_gbps / hosts as f64),
        "goodput_normalized": num(goodput_gbps / (hosts as f64 * host_rate.gbps())),
        "goodput_per_host_min_gbps": num(per_host_min),
        "slowdown": stats(slowdowns.iter().map(|s| s.1).collect(), unfinished_sizes.len()),
        "slowdown_by_size": size_groups(&edges, &slowdowns, &unfinished_sizes),
        "fct_us": stats(fcts_us, unfinished_sizes.len()),
        "queues": super::queues::queues_summary(sim, &sw),
        "packets": {"created": pool.created, "delivered": pool.delivered, "dropped": pool.dropped, "trimmed": pool.trimmed, "in_flight": pool.live(), "peak_alive": pool.capacity_used()},
        "transport": counters(&sim.transports[0]),
        "window_counts": window_counts(sim),
        "warnings": warnings,
        "spec": resolved.clone(),
    });
    if sim.transports.len() > 1 {
        summary["transports"] = transports_summary(sim);
    }
    let timeseries = timeseries_table(sim);
    // The traces are taken out of the simulation and attached by the caller (`TraceOutput`).
    let (trace, flow_state) = (Table::default(), Table::default());
    let mut switches = sw.table;
    super::fabric::extend(sim, &mut ports, &mut switches, &mut summary);
    Ok(RunOutput { flows, ports, switches, timeseries, trace, flow_state, summary, resolved_spec: resolved })
}

/// The time series: switch queues (and shared-buffer use) per switch, receive rates per host.
fn timeseries_table(sim: &Simulation) -> Table {
    const SERIES: [&str; 4] = ["switch_queue_bytes", "host_rx_gbps", "switch_shared_bytes", "switch_headroom_bytes"];
    let (net, sm) = (&sim.net, &sim.samples);
    // Series 1 is per host; the others are per switch.
    let node = |s: &(u64, u8, u32, f64)| if s.1 == 1 { s.2 } else { net.hosts + s.2 };
    let mut t = Table::default();
    t.push("time_ps", Column::U64(sm.iter().map(|s| s.0).collect()));
    t.push("series", Column::Str(sm.iter().map(|s| SERIES[s.1 as usize].to_string()).collect()));
    t.push("name", Column::Str(sm.iter().map(|s| net.node_names[node(s) as usize].clone()).collect()));
    t.push("value", Column::F64(sm.iter().map(|s| s.3).collect()));
    t
}
