//! Collecting a finished simulation into tables and a summary: slowdown and FCT statistics (per flow
//! in `flow_table`), goodput over the measurement window, queue occupancy per port and per switch.

use super::flow_table::{flow_table, FlowResults};
use super::output::RunOutput;
use super::queues::Queues;
use super::schema::{summary_part, FieldDoc, SummaryPart, SummaryValue};
use crate::record::measure::Sample;
use crate::record::table::{Column, Table};
use crate::scenario::run::Simulation;
use crate::scenario::RunError;
use crate::time::Rate;
use serde_json::{json, Map, Value};

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

summary_part! {
    /// Statistics over finished flows, with the counted flows that did not finish beside them: a
    /// tail that never finished is missing from every quantile (survivorship).
    pub struct Stats {
        count: usize => ("", "flows", "finished counted flows the statistics cover"),
        unfinished: usize => ("{prefix}_unfinished", "flows", "counted flows that had not finished when the run ended (left out)"),
        mean: f64 => ("{prefix}_mean", "", "mean over finished counted flows"),
        median: f64 => ("{prefix}_median", "", "median over finished counted flows"),
        p99: f64 => ("{prefix}_p99", "", "99th percentile over finished counted flows"),
        max: f64 => ("", "", "maximum over finished counted flows"),
    }
}

summary_part! {
    /// Slowdown statistics of one flow-size group.
    pub struct SizeGroup {
        count: usize => ("", "flows", "finished counted flows of this size"),
        unfinished: usize => ("slowdown_{key}_unfinished", "flows", "counted flows of this size that had not finished"),
        mean: f64 => ("", "", "mean slowdown"),
        median: f64 => ("slowdown_{key}_median", "", "median slowdown"),
        p99: f64 => ("slowdown_{key}_p99", "", "99th-percentile slowdown"),
        max: f64 => ("", "", "maximum slowdown"),
        group: String => ("", "", "the group's letter: A for the smallest flows"),
        label: String => ("size_group_{key}", "", "the group's size range, e.g. <1.4KB"),
        min_bytes: u64 => ("", "bytes", "smallest flow size in the group"),
        max_bytes: Option<u64> => ("", "bytes", "flow sizes in the group are below this; null for the last group"),
    }
}

fn stats(mut v: Vec<f64>, unfinished: usize) -> Stats {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let mean = if v.is_empty() { f64::NAN } else { v.iter().sum::<f64>() / v.len() as f64 };
    let (median, p99) = (quantile(&v, 0.5), quantile(&v, 0.99));
    Stats { count: v.len(), unfinished, mean, median, p99, max: v.last().copied().unwrap_or(f64::NAN) }
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
fn size_groups(edges: &[u64], slowdowns: &[(u64, f64)], unfinished_sizes: &[u64]) -> Vec<SizeGroup> {
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
        let Stats { count, unfinished, mean, median, p99, max } = stats(in_group, unfinished);
        let group = ((b'A' + gi as u8) as char).to_string();
        groups.push(SizeGroup {
            count,
            unfinished,
            mean,
            median,
            p99,
            max,
            group,
            label,
            min_bytes: lo,
            max_bytes: hi,
        });
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
fn counters(t: &crate::transport::Transport) -> Map<String, Value> {
    t.counters().into_iter().map(|(k, v)| (k.to_string(), json!(v))).collect()
}

summary_part! {
    /// Drops and the first transport's counters since the measurement window opened (the whole run
    /// without a warm-up). Port counters, drops included, restart with the window (`queues.drops` is
    /// the window's too); the transport's run from the start, so `transport` counts the whole run and
    /// these the window. Counters that are maxima (`max_*`) are left out: they do not subtract.
    pub struct WindowCounts {
        drops: u64 => ("", "packets", "packets dropped by every queue in the window (as queues.drops)"),
        transport: Map<String, Value> => ("transport_{key}", "", "the first transport's counters over the window: timeouts, retransmissions, credits wasted, pauses..."),
    }
}

fn window_counts(sim: &Simulation) -> WindowCounts {
    let drops: u64 = sim.net.ports.iter().map(|p| p.counters.drops).sum();
    let before = |k: &str| sim.measure.count_at_open(k);
    let transport = sim.transports[0]
        .counters()
        .into_iter()
        .filter(|(k, _)| !k.starts_with("max_"))
        .map(|(k, v)| (k.to_string(), json!(v.saturating_sub(before(k)))))
        .collect();
    WindowCounts { drops, transport }
}

/// Several transports in one run: each setup's protocol and counters, in spec order.
fn transports_summary(sim: &Simulation) -> Value {
    let setups = sim.spec.transports.iter().zip(&sim.transports);
    let all: Vec<Value> = setups
        .map(|(setup, t)| json!({"name": setup.name, "protocol": setup.config.name(), "counters": counters(t)}))
        .collect();
    json!(all)
}

summary_part! {
    /// The event loop's CPU time beside the wall-clock figures; null where the platform does not
    /// tell (see `record::cpu_time`). Written after every other part.
    pub struct CpuTime {
        cpu_time_s: Option<f64> => ("cpu_time_s", "s", "CPU seconds of the event loop (unlike wall time, not inflated by other work on the machine)"),
        events_per_cpu_sec: Option<f64> => ("", "events/s", "events per CPU second"),
    }
}

/// Adds the event loop's CPU time (`cpu_time_s`) and events per CPU second to the summary.
pub fn add_cpu_time(summary: &mut Value, events: u64, cpu_s: Option<f64>) {
    let cpu = CpuTime { cpu_time_s: cpu_s, events_per_cpu_sec: cpu_s.filter(|&c| c > 0.0).map(|c| events as f64 / c) };
    if let (Some(out), Value::Object(add)) = (summary.as_object_mut(), cpu.to_json()) {
        out.extend(add);
    }
}

summary_part! {
    /// Flows of the run: all of them, and those the statistics count (started inside the window).
    pub struct FlowCounts {
        started: u64 => ("flows_started", "flows", "flows that started"),
        finished: u64 => ("flows_finished", "flows", "flows that finished"),
        unfinished: u64 => ("", "flows", "flows that had not finished when the run ended"),
        counted: u64 => ("", "flows", "flows that started inside the measurement window"),
        counted_finished: u64 => ("", "flows", "counted flows that finished (the statistics cover these)"),
        counted_unfinished: u64 => ("", "flows", "counted flows that had not finished"),
    }
}

summary_part! {
    /// The packet pool over the whole run.
    pub struct Packets {
        created: u64 => ("", "packets", "packets created"),
        delivered: u64 => ("", "packets", "packets delivered to a host"),
        dropped: u64 => ("", "packets", "packets dropped or lost"),
        trimmed: u64 => ("", "packets", "packets whose payload a switch trimmed"),
        in_flight: u64 => ("", "packets", "packets alive when the run ended"),
        peak_alive: u64 => ("", "packets", "most packets alive at once"),
    }
}

summary_part! {
    /// A finished run's aggregates and provenance (`summary.json`). Runs that use switch features
    /// add their own parts after these (`fabric::extend`: buffer, pfc, postcards, ...), then `CpuTime`.
    pub struct Summary {
        name: String => ("", "", "the run's label (the spec's name)"),
        version: &'static str => ("", "", "dcnsim version that ran it"),
        seed: u64 => ("", "", "the run seed"),
        protocol: &'static str => ("protocol", "", "the first transport's protocol"),
        hosts: u64 => ("hosts", "hosts", "hosts in the topology"),
        host_rate_gbps: f64 => ("", "Gb/s", "host link rate"),
        mss_bytes: u64 => ("", "bytes", "payload bytes of a full-sized data packet"),
        base_rtt_ps: u64 => ("", "ps", "base RTT between the first and the last host"),
        bdp_bytes: u64 => ("bdp_bytes", "bytes", "host rate x base RTT"),
        sim_end_ps: u64 => ("", "ps", "simulated time when the run ended"),
        window_start_ps: u64 => ("", "ps", "start of the measurement window (the warm-up)"),
        window_ps: u64 => ("window_ps", "ps", "length of the measurement window"),
        wall_time_s: f64 => ("wall_time_s", "s", "wall-clock seconds, set-up included"),
        setup_time_s: f64 => ("", "s", "wall-clock seconds of the set-up"),
        events: u64 => ("events", "events", "events the loop processed"),
        events_per_sec: f64 => ("", "events/s", "events per wall-clock second of the event loop"),
        data_packets_delivered: u64 => ("", "packets", "data packets delivered to their receivers"),
        flows: FlowCounts => ("", "", "flow counts"),
        offered_load_gbps: f64 => ("offered_load_gbps", "Gb/s", "load the workload offers (its mean rate)"),
        offered_window_gbps: f64 => ("offered_window_gbps", "Gb/s", "bytes of flows that arrived in the window, over the window"),
        goodput_gbps: f64 => ("goodput_gbps", "Gb/s", "payload delivered in the window, over the window"),
        goodput_per_host_gbps: f64 => ("goodput_per_host_gbps", "Gb/s", "goodput per host"),
        goodput_normalized: f64 => ("goodput_normalized", "", "goodput over the hosts' total capacity"),
        goodput_per_host_min_gbps: f64 => ("", "Gb/s", "the lowest host's goodput"),
        slowdown: Stats => ("", "", "slowdown (FCT over ideal FCT) of counted flows"),
        slowdown_by_size: Vec<SizeGroup> => ("", "", "slowdown per flow-size group"),
        fct_us: Stats => ("", "us", "flow completion times of counted flows, us"),
        queues: Queues => ("", "", "queues, drops and marks over the window"),
        packets: Packets => ("", "", "the packet pool"),
        transport: Map<String, Value> => ("", "", "the first transport's counters over the whole run"),
        window_counts: WindowCounts => ("", "", "counters over the measurement window"),
        jobs: Map<String, Value> => ("", "", "training jobs (kind = collective) by name: iterations_finished, iteration_us_mean and _p99, collective_slowdown_mean and _p99"),
        warnings: Vec<String> => ("", "", "what the results cannot say, each \"`field`: message\""),
        spec: Value => ("", "", "the resolved spec"),
    }
}

/// Every field of the summary, in the order `summary.json` has them (the parts switch features
/// add left out: they appear only in runs that use them).
pub fn summary_schema() -> Vec<FieldDoc> {
    let mut fields = Summary::fields("");
    fields.extend(CpuTime::fields(""));
    fields
}

/// The run's flows, and the counted ones (`finished` and `unfinished` of them).
fn flow_counts(sim: &Simulation, finished: usize, unfinished: usize) -> FlowCounts {
    let started = sim.flows.records.len() as u64;
    FlowCounts {
        started,
        finished: sim.flows.finished,
        unfinished: started - sim.flows.finished,
        counted: (finished + unfinished) as u64,
        counted_finished: finished as u64,
        counted_unfinished: unfinished as u64,
    }
}

fn packets(pool: &crate::net::packet::PacketPool) -> Packets {
    Packets {
        created: pool.created,
        delivered: pool.delivered,
        dropped: pool.dropped,
        trimmed: pool.trimmed,
        in_flight: pool.live(),
        peak_alive: pool.capacity_used() as u64,
    }
}

/// `wall_s`: wall-clock seconds of the event loop. Fails if a flow beat its ideal FCT (a bug).
/// The result of a finished simulation; the flow table only `with_flow_table` (the summary's
/// statistics are computed either way).
/// The run's output from its tables (flows, ports, switches, time series, collectives,
/// iterations); the traces are attached by the caller.
fn output(tables: (Table, Table, Table, Table, Table, Table), summary: Value, resolved: Value) -> RunOutput {
    let (flows, ports, switches, timeseries, collectives, iterations) = tables;
    let (trace, flow_state) = (Table::default(), Table::default());
    RunOutput {
        flows,
        ports,
        switches,
        timeseries,
        trace,
        flow_state,
        collectives,
        iterations,
        summary,
        resolved_spec: resolved,
    }
}

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
    let mut warnings = spec.warnings.clone();
    warnings.extend(run_warnings(sim, slowdowns.len(), unfinished_sizes.len()));
    let jobs = super::collectives::job_results(sim);
    let summary = Summary {
        name: spec.name.clone(),
        version: crate::VERSION,
        seed: spec.seed,
        protocol: spec.transports[0].config.name(),
        hosts,
        host_rate_gbps: host_rate.gbps(),
        mss_bytes: fr.mss() as u64,
        base_rtt_ps: rtt,
        bdp_bytes: bdp,
        sim_end_ps: sim.ended_at,
        window_start_ps: window_start,
        window_ps: window,
        wall_time_s: sim.setup_s + wall_s,
        setup_time_s: sim.setup_s,
        events,
        events_per_sec: events as f64 / wall_s.max(1e-9),
        data_packets_delivered: sim.data_packets_delivered(),
        flows: flow_counts(sim, slowdowns.len(), unfinished_sizes.len()),
        offered_load_gbps: sim.workload.offered_load_bytes_per_sec() * 8.0 / 1e9,
        offered_window_gbps: gbps(offered_window, secs),
        goodput_gbps,
        goodput_per_host_gbps: goodput_gbps / hosts as f64,
        goodput_normalized: goodput_gbps / (hosts as f64 * host_rate.gbps()),
        goodput_per_host_min_gbps: per_host_min,
        slowdown: stats(slowdowns.iter().map(|s| s.1).collect(), unfinished_sizes.len()),
        slowdown_by_size: size_groups(&edges, &slowdowns, &unfinished_sizes),
        fct_us: stats(fcts_us, unfinished_sizes.len()),
        queues: super::queues::queues_summary(sim, &sw),
        packets: packets(&net.pool),
        transport: counters(&sim.transports[0]),
        window_counts: window_counts(sim),
        jobs: jobs.summary,
        warnings,
        spec: resolved.clone(),
    };
    let mut summary = summary.to_json();
    if sim.transports.len() > 1 {
        summary["transports"] = transports_summary(sim);
    }
    let timeseries = timeseries_table(sim);
    // The traces are taken out of the simulation and attached by the caller (`TraceOutput`).
    let mut switches = sw.table;
    super::fabric::extend(sim, &mut ports, &mut switches, &mut summary);
    let tables = (flows, ports, switches, timeseries, jobs.collectives, jobs.iterations);
    Ok(output(tables, summary, resolved))
}

/// The time series: switch queues (and shared-buffer use) per switch, receive rates per host.
fn timeseries_table(sim: &Simulation) -> Table {
    let (net, sm) = (&sim.net, &sim.measure.samples);
    let node = |s: &Sample| if s.series.per_host() { s.index } else { net.hosts + s.index };
    let mut t = Table::default();
    t.push("time_ps", Column::U64(sm.iter().map(|s| s.time).collect()));
    t.push("series", Column::Str(sm.iter().map(|s| s.series.name().to_string()).collect()));
    t.push("name", Column::Str(sm.iter().map(|s| net.node_names[node(s) as usize].clone()).collect()));
    t.push("value", Column::F64(sm.iter().map(|s| s.value).collect()));
    t
}
