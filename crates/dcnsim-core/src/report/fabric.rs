//! What the switch features report, only in runs that use them (other runs' tables and summary
//! stay exactly as they were): shared-buffer use per switch, PFC frames and paused time per port
//! and class, lossless drops (a configuration error: the headroom is too small), a deadlock, and
//! PB-FS CC-postcards per switch and tier (whole run).

use crate::record::table::{Column, Table};
use crate::scenario::run::Simulation;
use serde_json::{json, Value};

/// Adds the buffer and PFC columns and summary entries.
pub fn extend(sim: &Simulation, ports: &mut Table, switches: &mut Table, summary: &mut Value) {
    let net = &sim.net;
    let now = sim.ended_at;
    if let Some(s) = net.stage_counters() {
        summary["stages"] = s;
    }
    if let Some(c) = net.credit_summary() {
        summary["credit_shaping"] = c;
    }
    if let Some(b) = net.buffers.as_deref() {
        let sw = &b.switches;
        switches.push("buffer_bytes", Column::U64(sw.iter().map(|s| s.size).collect()));
        switches.push("max_shared_bytes", Column::U64(sw.iter().map(|s| s.max_shared).collect()));
        switches.push("max_headroom_bytes", Column::U64(sw.iter().map(|s| s.max_headroom).collect()));
        switches.push("headroom_overflows", Column::U64(sw.iter().map(|s| s.headroom_overflows).collect()));
        summary["buffer"] = json!({
            "max_shared_bytes": sw.iter().map(|s| s.max_shared).max().unwrap_or(0),
            "max_headroom_bytes": sw.iter().map(|s| s.max_headroom).max().unwrap_or(0),
        });
    }
    postcards(sim, switches, summary);
    iofd(net, switches, summary);
    let Some(pfc) = net.pfc.as_deref() else { return };
    let ps = &net.ports;
    ports.push("pause_frames_sent", Column::U64(pfc.frames_sent.iter().map(|f| f[0]).collect()));
    ports.push("resume_frames_sent", Column::U64(pfc.frames_sent.iter().map(|f| f[1]).collect()));
    let mut paused_by_class = serde_json::Map::new();
    for c in (0..8).filter(|c| pfc.lossless & (1 << c) != 0) {
        let t: Vec<u64> = ps.iter().enumerate().map(|(i, p)| pfc.paused_time(i as u32, p, c, now)).collect();
        paused_by_class.insert(c.to_string(), json!(t.iter().copied().max().unwrap_or(0)));
        ports.push(&format!("paused_ps_class{c}"), Column::U64(t));
    }
    let overflows: u64 = net.buffers.as_deref().map_or(0, |b| b.switches.iter().map(|s| s.headroom_overflows).sum());
    let error = (overflows > 0).then(|| {
        let worst = net.buffers.as_deref().and_then(|b| {
            (0..b.switches.len()).max_by_key(|&s| b.switches[s].headroom_overflows).map(|s| net.node_names[net.hosts as usize + s].clone())
        });
        format!(
            "{overflows} packets of lossless classes were dropped because their PFC headroom was full (most at {}): the headroom is too small for the links; unset switch.pfc_headroom_bytes to size it per link",
            worst.unwrap_or_default()
        )
    });
    let nic_paused = ps
        .iter()
        .enumerate()
        .filter(|(_, p)| p.owner < net.hosts)
        .filter(|(i, p)| (0..8).any(|c| pfc.lossless & (1 << c) != 0 && pfc.paused_time(*i as u32, p, c, now) > 0))
        .count();
    summary["pfc"] = json!({
        "pause_frames_sent": pfc.frames_sent.iter().map(|f| f[0]).sum::<u64>(),
        "resume_frames_sent": pfc.frames_sent.iter().map(|f| f[1]).sum::<u64>(),
        "max_paused_ps_by_class": paused_by_class,
        "host_nics_paused": nic_paused,
        "lossless_drops": overflows,
        "configuration_error": error,
    });
    summary["deadlocked"] = json!(pfc.deadlock.is_some());
    summary["deadlock"] = match &pfc.deadlock {
        None => Value::Null,
        Some(d) => json!({
            "at_ps": d.at,
            "class": d.class,
            "cycle": d.cycle.iter().map(|&p| net.port_name(p)).collect::<Vec<_>>(),
            "cycle_port_ids": d.cycle,
            "stuck_pairs": d.stuck_pairs,
        }),
    };
}

/// PB-FS CC-postcards per switch, and their sum by tier.
fn postcards(sim: &Simulation, switches: &mut Table, summary: &mut Value) {
    let net = &sim.net;
    let Some(pc) = net.postcards.as_deref() else { return };
    switches.push("postcards_sent", Column::U64(pc.sent.clone()));
    switches.push("pbt_packets_seen", Column::U64(pc.triggers_seen.clone()));
    let mut by_tier = serde_json::Map::new();
    for (s, t) in net.tiers.iter().enumerate() {
        let e = by_tier.entry(t.name()).or_insert(json!(0u64));
        *e = json!(e.as_u64().unwrap_or(0) + pc.sent[s]);
    }
    summary["postcards"] = json!({
        "sent": pc.sent.iter().sum::<u64>(),
        "sent_by_tier": by_tier,
        "pbt_packets_seen": pc.triggers_seen.iter().sum::<u64>(),
        "slot_ps": pc.slot(),
        "dc_rtt_ps": pc.params.dc_rtt,
    });
}

/// Dart's in-order flow deflection: per-switch counters and their totals.
fn iofd(net: &crate::net::Network, switches: &mut Table, summary: &mut Value) {
    let Some(d) = net.deflection.as_deref() else { return };
    {
        let c = &d.counters;
        switches.push("iofd_deflections", Column::U64(c.iter().map(|c| c.deflections).collect()));
        switches.push("iofd_dft_full", Column::U64(c.iter().map(|c| c.dft_full).collect()));
        switches.push("iofd_tokens_exhausted", Column::U64(c.iter().map(|c| c.tokens_exhausted).collect()));
        summary["iofd"] = json!({
            "deflections": c.iter().map(|c| c.deflections).sum::<u64>(),
            "dft_full": c.iter().map(|c| c.dft_full).sum::<u64>(),
            "tokens_exhausted": c.iter().map(|c| c.tokens_exhausted).sum::<u64>(),
            "misrouted_packets": c.iter().map(|c| c.misrouted_packets).sum::<u64>(),
        });
    }
}
