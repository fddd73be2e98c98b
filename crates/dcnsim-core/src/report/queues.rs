//! Queues and counters at the end of a run: the per-port and per-switch tables and the summary's
//! `queues` object (maxima, means over the measurement window, every drop, mark, trim, bounce).

use super::link_usage;
use super::schema::summary_part;
use crate::net::port::PortRole;
use crate::record::table::{Column, Table};
use crate::scenario::run::Simulation;
use serde_json::{json, Map, Value};

/// One row per port: identity, rate, occupancy over the window, counters, utilisation.
pub fn port_table(sim: &Simulation) -> Table {
    let net = &sim.net;
    let (window_start, now) = (sim.spec.warmup, sim.ended_at);
    let mut ports = Table::default();
    let tier_of = |node: u32| if node < net.hosts { "host" } else { net.tiers[(node - net.hosts) as usize].name() };
    let ps = &net.ports;
    ports.push("port_id", Column::U64((0..ps.len() as u64).collect()));
    ports.push("node", Column::Str(ps.iter().map(|p| net.node_names[p.owner as usize].clone()).collect()));
    ports.push("peer", Column::Str(ps.iter().map(|p| net.node_names[p.peer as usize].clone()).collect()));
    ports.push("role", Column::Str(ps.iter().map(|p| p.role.name().to_string()).collect()));
    ports.push("tier", Column::Str(ps.iter().map(|p| tier_of(p.owner).to_string()).collect()));
    ports.push("rate_gbps", Column::F64(ps.iter().map(|p| p.rate.gbps()).collect()));
    ports.push("max_bytes", Column::U64(ps.iter().map(|p| p.occupancy.max_bytes).collect()));
    ports.push("mean_bytes", Column::F64(ps.iter().map(|p| p.occupancy.mean(p.bytes, window_start, now)).collect()));
    ports.push("drops", Column::U64(ps.iter().map(|p| p.counters.drops).collect()));
    ports.push("losses", Column::U64(ps.iter().map(|p| p.counters.losses).collect()));
    ports.push("ecn_marks", Column::U64(ps.iter().map(|p| p.counters.marks).collect()));
    ports.push("trims", Column::U64(ps.iter().map(|p| p.counters.trims).collect()));
    ports.push("bounces", Column::U64(ps.iter().map(|p| p.counters.bounces).collect()));
    ports.push("tx_bytes", Column::U64(ps.iter().map(|p| p.counters.tx_bytes).collect()));
    ports.push("tx_packets", Column::U64(ps.iter().map(|p| p.counters.tx_packets).collect()));
    ports.push(
        "utilization",
        Column::F64(link_usage::utilization(net, &sim.measure.window_carry_in, window_start, now)),
    );
    ports
}

/// Per switch (index = switch number): the table and the columns the summary aggregates.
pub struct SwitchQueues {
    pub table: Table,
    /// Largest total occupancy of the switch's buffer, bytes.
    pub max_bytes: Vec<u64>,
    /// Time-averaged total occupancy over the measurement window, bytes.
    pub mean_bytes: Vec<f64>,
    /// Drops at the switch's ports.
    pub drops: Vec<u64>,
    /// ECN marks at the switch's ports.
    pub marks: Vec<u64>,
}

/// One row per switch: tier, buffer occupancy (max and mean), drops and marks over its ports.
pub fn switch_queues(sim: &Simulation) -> SwitchQueues {
    let net = &sim.net;
    let nsw = net.tiers.len();
    let mut drops = vec![0u64; nsw];
    let mut marks = vec![0u64; nsw];
    for p in net.ports.iter().filter(|p| p.owner >= net.hosts) {
        drops[(p.owner - net.hosts) as usize] += p.counters.drops;
        marks[(p.owner - net.hosts) as usize] += p.counters.marks;
    }
    let max_bytes: Vec<u64> = net.switch_occupancy.iter().map(|o| o.max_bytes).collect();
    let mean_bytes: Vec<f64> =
        (0..nsw).map(|s| net.switch_occupancy[s].mean(net.switch_bytes[s], sim.spec.warmup, sim.ended_at)).collect();
    let mut table = Table::default();
    table.push("switch", Column::Str((0..nsw).map(|s| net.node_names[net.hosts as usize + s].clone()).collect()));
    table.push("tier", Column::Str(net.tiers.iter().map(|t| t.name().to_string()).collect()));
    table.push("max_bytes", Column::U64(max_bytes.clone()));
    table.push("mean_bytes", Column::F64(mean_bytes.clone()));
    table.push("drops", Column::U64(drops.clone()));
    table.push("ecn_marks", Column::U64(marks.clone()));
    SwitchQueues { table, max_bytes, mean_bytes, drops, marks }
}

summary_part! {
    /// Queue occupancy, drops and marks over the measurement window. Every drop counts: switch
    /// ports and host NICs (a NIC drops when its sender outruns it); losses on lossy links are
    /// counted apart from drops.
    pub struct Queues {
        max_switch_bytes: u64 => ("max_switch_bytes", "bytes", "the largest occupancy of a switch (its ports summed)"),
        max_switch_bytes_by_tier: Map<String, Value> => ("max_switch_bytes_{key}", "bytes", "max_switch_bytes per switch tier"),
        mean_switch_bytes_max: f64 => ("mean_switch_bytes_max", "bytes", "the largest time-averaged occupancy of a switch"),
        mean_switch_bytes_by_tier: Map<String, Value> => ("mean_switch_bytes_{key}", "bytes", "mean_switch_bytes_max per switch tier"),
        switch_bytes_at_end: u64 => ("switch_bytes_at_end", "bytes", "bytes queued in switches when the run ended"),
        max_switch_port_bytes: u64 => ("", "bytes", "the largest occupancy of a switch port"),
        max_nic_bytes: u64 => ("", "bytes", "the largest occupancy of a host NIC"),
        drops: u64 => ("drops", "packets", "packets dropped by a queue (switch ports and host NICs)"),
        switch_drops: u64 => ("", "packets", "drops at switch ports"),
        nic_drops: u64 => ("", "packets", "drops at host NICs"),
        losses: u64 => ("", "packets", "packets lost on lossy links (not dropped by a queue)"),
        ecn_marks: u64 => ("ecn_marks", "packets", "packets marked with ECN at switch ports"),
        trims: u64 => ("trims", "packets", "packets trimmed to their header"),
        bounces: u64 => ("", "packets", "packets bounced back to their sender"),
    }
}

/// The summary's `queues` part.
pub fn queues_summary(sim: &Simulation, sw: &SwitchQueues) -> Queues {
    let net = &sim.net;
    let ps = &net.ports;
    let mut tiers = Map::new();
    let mut tier_means = Map::new();
    for (s, t) in net.tiers.iter().enumerate() {
        let e = tiers.entry(t.name()).or_insert(json!(0u64));
        *e = json!(e.as_u64().unwrap().max(sw.max_bytes[s]));
        let m = tier_means.entry(t.name()).or_insert(json!(0.0));
        *m = json!(m.as_f64().unwrap().max(sw.mean_bytes[s]));
    }
    let is_nic = |role: PortRole| role == PortRole::HostNic;
    let nic_max = ps.iter().filter(|p| is_nic(p.role)).map(|p| p.occupancy.max_bytes).max().unwrap_or(0);
    let switch_port_max = ps.iter().filter(|p| !is_nic(p.role)).map(|p| p.occupancy.max_bytes).max().unwrap_or(0);
    let switch_drops: u64 = sw.drops.iter().sum();
    let nic_drops: u64 = ps.iter().filter(|p| is_nic(p.role)).map(|p| p.counters.drops).sum();
    Queues {
        max_switch_bytes: sw.max_bytes.iter().copied().max().unwrap_or(0),
        max_switch_bytes_by_tier: tiers,
        mean_switch_bytes_max: sw.mean_bytes.iter().copied().fold(0.0, f64::max),
        mean_switch_bytes_by_tier: tier_means,
        switch_bytes_at_end: net.switch_bytes.iter().sum::<u64>(),
        max_switch_port_bytes: switch_port_max,
        max_nic_bytes: nic_max,
        drops: switch_drops + nic_drops,
        switch_drops,
        nic_drops,
        losses: ps.iter().map(|p| p.counters.losses).sum::<u64>(),
        ecn_marks: sw.marks.iter().sum::<u64>(),
        trims: ps.iter().map(|p| p.counters.trims).sum::<u64>(),
        bounces: ps.iter().map(|p| p.counters.bounces).sum::<u64>(),
    }
}
