//! The run spec: every section, read and validated up front. The same reading code documents the
//! parameters (`describe`), so the docs cannot drift from what is accepted.

use super::errors::RunError;
use crate::net::framing::Framing;
use crate::net::packet::LoadBalancing;
use crate::net::pipeline::stage::PacketUse;
use crate::net::queue::QueueConfig;
use crate::net::{QueueConfigs, SwitchConfig};
use crate::record::trace::TraceSpec;
use crate::spec_reader::{resolved_to_json, Resolved, Section, SpecError, SpecResult};
use crate::time::{from_us, Rate, Time};
use crate::topology::Topology;
use crate::transport::{Needs, SpecEnv, TransportConfig};
use crate::workload::spec::RunTiming;
use crate::workload::WorkloadSpec;

#[derive(Clone, Debug)]
pub struct MetricsSpec {
    /// Edges of the slowdown size groups in bytes; `None` = the SIRD groups (MSS, BDP, 8 BDP).
    pub size_group_edges: Option<Vec<u64>>,
    /// Sample switch queues and host receive rates every this often; `None` = no time series.
    pub sample_interval: Option<Time>,
}

#[derive(Clone, Debug)]
pub struct RunSpec {
    pub name: String,
    pub seed: u64,
    pub duration: Time,
    pub warmup: Time,
    pub stop_when_done: bool,
    pub framing: Framing,
    pub switch_latency: Time,
    pub nic_pacing: Option<Rate>,
    pub topology: Topology,
    pub queues: QueueConfigs,
    /// Shared buffer, PFC, INT (`[switch]`).
    pub switch: SwitchConfig,
    pub load_balancing: LoadBalancing,
    /// The run's transports: `[transport]` first (named "default"), then each `[transports.NAME]`.
    pub transports: Vec<TransportSetup>,
    /// Index into `transports` of each workload component's transport.
    pub component_transport: Vec<u8>,
    pub workload: WorkloadSpec,
    pub metrics: MetricsSpec,
    /// Flows whose packets and control state are traced; `None` = no `[trace]` table.
    pub trace: Option<TraceSpec>,
    /// Things that are allowed but probably not what was meant, each "`field`: message"; printed
    /// when the run starts and listed in the summary's `warnings`.
    pub warnings: Vec<String>,
}

/// One transport of a run: a protocol with its parameters, and how its packets are routed.
#[derive(Clone, Debug)]
pub struct TransportSetup {
    /// "default" for `[transport]`, else the NAME of `[transports.NAME]`.
    pub name: String,
    pub config: TransportConfig,
    /// `[routing] load_balancing`, unless the transport table overrides it (so that, e.g., NDP's
    /// source-routed packets and DCTCP's ECMP flows share one fabric).
    pub load_balancing: LoadBalancing,
}

impl TransportSetup {
    fn read(s: &mut Section, name: &str, base: &SpecEnv) -> SpecResult<TransportSetup> {
        let default = match base.load_balancing {
            // Symmetric ECMP is a transport's choice for its own packets, never a run's setting.
            LoadBalancing::Ecmp | LoadBalancing::Symmetric => "ecmp",
            LoadBalancing::Spray => "spray",
            LoadBalancing::Source => "source",
        };
        let load_balancing = read_load_balancing(
            s,
            default,
            "how this transport's packets are routed; default: [routing] load_balancing",
        )?;
        let env = SpecEnv { load_balancing, ..*base };
        Ok(TransportSetup { name: name.to_string(), config: TransportConfig::read(s, &env)?, load_balancing })
    }
}

/// What each transport's packets carry that switch stages may rewrite, as the stages ask it.
fn packet_uses(transports: &[TransportSetup]) -> Vec<(&'static str, PacketUse)> {
    let of = |t: &TransportSetup| PacketUse { rate_header: t.config.needs().rate_header };
    transports.iter().map(|t| (t.config.name(), of(t))).collect()
}

/// `[transport]` and the `[transports.NAME]` setups; `base` holds the run's routing (each setup
/// may override it), framing, queues and switch features.
fn read_transports(top: &mut Section, base: &SpecEnv) -> SpecResult<Vec<TransportSetup>> {
    let mut tr = top.table("transport", "the transport protocol and its parameters")?;
    let mut transports = vec![TransportSetup::read(&mut tr, "default", base)?];
    tr.finish()?;
    for (name, mut t) in top.named_tables(
        "transports",
        "further transport setups, each a table like [transport], named for workload components to use",
    )? {
        if t.is_describe() {
            continue; // the keys are those of [transport], documented there
        }
        transports.push(TransportSetup::read(&mut t, &name, base)?);
        t.finish()?;
    }
    top.ensure(transports.len() <= MAX_TRANSPORTS, "transports", format!("at most {} setups", MAX_TRANSPORTS - 1))?;
    Ok(transports)
}

fn read_load_balancing(s: &mut Section, default: &str, doc: &'static str) -> SpecResult<LoadBalancing> {
    let lb = s.choice_or("load_balancing", &["ecmp", "spray", "source"], default, doc)?;
    Ok(match lb.as_str() {
        "ecmp" => LoadBalancing::Ecmp,
        "spray" => LoadBalancing::Spray,
        _ => LoadBalancing::Source,
    })
}

use crate::limits::{MAX_DELAY_US, MAX_PACKET_BYTES, MIN_MTU_BYTES};
pub use crate::limits::{MAX_DURATION_US, MAX_TRANSPORTS};

/// Reads `[measure]`: the warm-up before the measurement window, us.
fn read_warmup_us(top: &mut Section, duration_us: f64) -> SpecResult<f64> {
    let mut m = top.table("measure", "the measurement window")?;
    let warmup_us = m.f64_or(
        "warmup_us",
        0.0,
        "us",
        "statistics (goodput, queues, counters, slowdown) cover only flows and time after this",
    )?;
    m.ensure(
        warmup_us >= 0.0 && warmup_us < duration_us,
        "warmup_us",
        format!("must be in [0, duration_us), got {warmup_us}"),
    )?;
    m.finish()?;
    Ok(warmup_us)
}

/// `[net]`: packet format, switch latency, NIC pacing.
struct NetSpec {
    framing: Framing,
    latency_us: f64,
    pacing_gbps: Option<f64>,
}

/// Reads `[net]`.
fn read_net(top: &mut Section) -> SpecResult<NetSpec> {
    let mut n = top.table("net", "packet format and switch model")?;
    let mtu = n.u64_or("mtu_bytes", 1500, "bytes", "wire bytes of a full-sized data packet, headers included")?;
    let header = n.u64_or("header_bytes", 64, "bytes", "header bytes in every data packet (part of mtu_bytes)")?;
    let control = n.u64_or(
        "control_bytes",
        64,
        "bytes",
        "wire bytes of a control packet (ACK, NACK, PULL, credit, trimmed header)",
    )?;
    let latency = n.f64_or("switch_latency_us", 0.0, "us", "processing latency added at every switch")?;
    let pacing = n.f64_opt("nic_pacing_gbps", "Gb/s",
        "pace every host NIC to this rate (packets serialize at line rate, spaced by the pacing gap); unset = line rate")?;
    if let Some(p) = pacing {
        crate::topology::check_rate(&n, "nic_pacing_gbps", p)?;
    }
    let (min_mtu, max) = (MIN_MTU_BYTES, MAX_PACKET_BYTES);
    n.ensure((min_mtu..=max).contains(&mtu), "mtu_bytes", format!("must be in [{min_mtu}, {max}], got {mtu}"))?;
    n.ensure(header < mtu, "header_bytes", format!("must be smaller than mtu_bytes ({mtu}), got {header}"))?;
    n.ensure((1..=max).contains(&control), "control_bytes", format!("must be in [1, {max}]"))?;
    let max_us = MAX_DELAY_US;
    n.ensure((0.0..=max_us).contains(&latency), "switch_latency_us", format!("must be in [0, {max_us:e}] us"))?;
    n.finish()?;
    let framing = Framing { mtu_bytes: mtu as u32, header_bytes: header as u32, control_bytes: control as u32 };
    Ok(NetSpec { framing, latency_us: latency, pacing_gbps: pacing })
}

/// The transport setup (index into the run's setups) of each workload component.
fn component_transports(workload: &WorkloadSpec, transports: &[TransportSetup]) -> SpecResult<Vec<u8>> {
    let mut component_transport = Vec::with_capacity(workload.components.len());
    for c in &workload.components {
        let index = match &c.transport {
            None => 0,
            Some(name) => transports.iter().position(|t| &t.name == name).ok_or_else(|| {
                let known: Vec<&str> = transports[1..].iter().map(|t| t.name.as_str()).collect();
                c.err("transport", format!("no [transports.{name}] table (defined: {known:?})"))
            })?,
        };
        component_transport.push(index as u8);
    }
    Ok(component_transport)
}

impl RunSpec {
    pub fn read(top: &mut Section) -> SpecResult<RunSpec> {
        let name = top.string_opt("name", "a label for the run (free text)")?.unwrap_or_default();
        let seed = top.u64_or("seed", 1, "", "run seed: every random stream derives from it")?;
        let duration_us = top.f64("duration_us", "us", "simulated time to run")?;
        top.ensure(
            duration_us > 0.0 && duration_us <= MAX_DURATION_US,
            "duration_us",
            format!("must be in (0, {MAX_DURATION_US}] us, got {duration_us}"),
        )?;
        let stop_when_done = top.bool_or(
            "stop_when_done",
            true,
            "end early once the workload has no more arrivals and every flow has finished",
        )?;

        let warmup_us = read_warmup_us(top, duration_us)?;

        let NetSpec { framing, latency_us: latency, pacing_gbps: pacing } = read_net(top)?;

        let mut t = top.table("topology", "the fabric")?;
        let topology = Topology::read(&mut t)?;
        t.finish()?;

        let queues = read_queues(top, framing)?;
        let switch = SwitchConfig::read_table(top, &queues)?;

        let mut r = top.table("routing", "load balancing over equal-cost paths")?;
        let load_balancing = read_load_balancing(&mut r, "ecmp",
            "ecmp: per-flow hash; spray: random per packet at every switch; source: the sender picks the path per packet")?;
        r.finish()?;

        let base = SpecEnv::new(&switch, load_balancing, framing, &queues);
        let transports = read_transports(top, &base)?;
        switch.stages.check_protocols(top, &packet_uses(&transports))?;

        let workload = WorkloadSpec::read(top)?;
        let component_transport = component_transports(&workload, &transports)?;

        let metrics = MetricsSpec::read(top, duration_us)?;
        let trace = TraceSpec::read(top)?;

        let warnings = if top.is_describe() {
            Vec::new()
        } else {
            cross_checks(from_us(duration_us), pacing, &topology, &queues, &transports, &workload)?
        };

        Ok(RunSpec {
            name,
            seed,
            duration: from_us(duration_us),
            warmup: from_us(warmup_us),
            stop_when_done,
            framing,
            switch_latency: from_us(latency),
            nic_pacing: pacing.map(Rate::from_gbps),
            topology,
            queues,
            switch,
            load_balancing,
            transports,
            component_transport,
            workload,
            metrics,
            trace,
            warnings,
        })
    }
}

impl MetricsSpec {
    /// Reads `[metrics]`.
    fn read(top: &mut Section, duration_us: f64) -> SpecResult<MetricsSpec> {
        let mut me = top.table("metrics", "what to measure")?;
        let edges = if me.has("size_group_edges_bytes") || me.is_describe() {
            let e = me.f64_list_or(
                "size_group_edges_bytes",
                &[],
                "bytes",
                "edges of the slowdown size groups; default: MSS, BDP, 8 x BDP (the SIRD paper's groups)",
            )?;
            me.ensure(
                !e.is_empty() && e.windows(2).all(|w| w[0] < w[1]) && e[0] > 0.0,
                "size_group_edges_bytes",
                "must be a non-empty, strictly increasing list of positive sizes",
            )?;
            Some(e.iter().map(|&x| x as u64).collect())
        } else {
            None
        };
        let sample = me.f64_opt("sample_interval_us", "us",
            "record a time series of every switch's queued bytes and every host's receive rate at this interval; unset = none")?;
        if let Some(v) = sample {
            me.ensure(v >= 0.01 && v <= duration_us, "sample_interval_us", "must be in [0.01 us, duration_us]")?;
            me.ensure(
                duration_us / v <= 1e6,
                "sample_interval_us",
                "more than a million samples: use a longer interval",
            )?;
        }
        me.finish()?;
        Ok(MetricsSpec { size_group_edges: edges, sample_interval: sample.map(from_us) })
    }
}

/// Reads `[queue]` and its per-role overrides.
fn read_queues(top: &mut Section, framing: Framing) -> SpecResult<QueueConfigs> {
    let mut q = top.table("queue", "egress queues of switch ports; sub-tables override per port role")?;
    let switch_q = QueueConfig::read(&mut q, &QueueConfig::infinite(), framing.mtu_bytes, framing.control_bytes)?;
    let role = |q: &mut Section, key: &str, base: &QueueConfig, doc: &'static str| -> SpecResult<QueueConfig> {
        match q.table_opt(key, doc)? {
            Some(mut s) => {
                let c = QueueConfig::read(&mut s, base, framing.mtu_bytes, framing.control_bytes)?;
                s.finish()?;
                Ok(c)
            }
            None => Ok(base.clone()),
        }
    };
    let to_host = role(&mut q, "to_host", &switch_q, "overrides for switch ports facing hosts")?;
    let fabric = role(&mut q, "fabric", &switch_q, "overrides for switch-to-switch ports")?;
    // Host NICs default to the switch settings (as ns-2/ns-3 links do): a NIC that never marks
    // lets a sender whose own link is the bottleneck grow its window without bound. Trimming
    // is a switch feature and is not inherited, nor is the trimming data limit.
    let nic_limit = if switch_q.trim.is_some() { None } else { switch_q.limit };
    let nic_base = QueueConfig { trim: None, limit: nic_limit, ..switch_q.clone() };
    let nic = role(&mut q, "nic", &nic_base, "host NIC queues (default: the switch settings, without trimming)")?;
    q.finish()?;
    Ok(QueueConfigs { nic, to_host, fabric })
}

/// Checks across sections: what cannot mean anything fails, what probably is not meant warns
/// (each warning "`field`: message").
fn cross_checks(
    end: Time,
    pacing: Option<f64>,
    topology: &Topology,
    queues: &QueueConfigs,
    transports: &[TransportSetup],
    workload: &WorkloadSpec,
) -> SpecResult<Vec<String>> {
    let hosts = topology.kind.host_count();
    let host_bytes_per_sec = topology.kind.host_rate().bps() as f64 / 8.0;
    let mut warnings = workload.check_timing(&RunTiming { end, hosts, host_bytes_per_sec })?;
    if let Some(p) = pacing {
        warnings.extend(check_pacing(p, topology)?);
    }
    for (i, t) in transports.iter().enumerate() {
        let table = if i == 0 { "transport".to_string() } else { format!("transports.{}", t.name) };
        warnings.extend(check_needs(&table, &t.config.needs(), queues, topology)?);
    }
    Ok(warnings)
}

/// Pacing at or below line rate paces; above every NIC's rate it would do nothing (an error),
/// above some only (link overrides) it paces those alone (a warning).
fn check_pacing(pacing_gbps: f64, topology: &Topology) -> SpecResult<Vec<String>> {
    let host = topology.kind.host_rate().gbps();
    // NIC rates changed by overrides: the host-to-switch direction of a host link.
    let faster = topology
        .overrides
        .iter()
        .filter(|o| {
            (o.a.starts_with("host") || (o.b.starts_with("host") && !o.one_way))
                && o.rate_gbps.is_some_and(|r| r > pacing_gbps)
        })
        .count();
    if pacing_gbps <= host {
        return Ok(Vec::new());
    }
    if faster == 0 {
        return Err(SpecError {
            field: "net.nic_pacing_gbps".into(),
            message: format!(
                "{pacing_gbps} Gb/s is above the host link rate ({host} Gb/s): pacing would have no effect"
            ),
        });
    }
    Ok(vec![format!(
        "`net.nic_pacing_gbps`: {pacing_gbps} Gb/s is above the host link rate ({host} Gb/s) and paces only the {faster} NIC(s) that link overrides make faster"
    )])
}

/// Checks what a transport needs (`Protocol::needs`) against the queues and the topology:
/// classes it was told to use must exist, classes its design uses should, trimming it cannot do
/// without must be on, and hosts it names must exist.
fn check_needs(table: &str, needs: &Needs, queues: &QueueConfigs, topology: &Topology) -> SpecResult<Vec<String>> {
    let mut warnings = Vec::new();
    let roles = [("queue.nic", &queues.nic), ("queue.to_host", &queues.to_host), ("queue.fabric", &queues.fabric)];
    let (fewest_at, fewest) = roles.iter().map(|(n, q)| (*n, q.priorities)).min_by_key(|r| r.1).expect("three roles");
    let fewest_at = if roles.iter().all(|(_, q)| q.priorities == fewest) { "queue" } else { fewest_at };
    for u in &needs.classes {
        if u.class < fewest {
            continue;
        }
        let message = format!(
            "puts {} in priority class {}, but the queues have {fewest} class(es) ({fewest_at}.priorities): they would share the lowest class",
            u.purpose, u.class
        );
        if u.explicit {
            return Err(SpecError { field: format!("{table}.{}", u.key), message });
        }
        warnings.push(format!("`{table}.{}`: {message}", u.key));
    }
    if let Some(hint) = needs.trimming {
        let fabric = !matches!(topology.kind, crate::topology::TopologySpec::SingleSwitch { .. });
        let lacking = if queues.to_host.trim.is_none() {
            Some("queue.to_host.trim")
        } else if fabric && queues.fabric.trim.is_none() {
            Some("queue.fabric.trim")
        } else {
            None
        };
        if let Some(field) = lacking {
            let field =
                if queues.to_host.trim.is_none() && queues.fabric.trim.is_none() { "queue.trim" } else { field };
            return Err(SpecError { field: field.into(), message: hint.into() });
        }
    }
    warnings.extend(needs.warnings.iter().map(|(key, message)| format!("`{table}.{key}`: {message}")));
    let hosts = topology.kind.host_count();
    for &(key, h) in &needs.hosts {
        if h >= hosts {
            return Err(SpecError {
                field: format!("{table}.{key}"),
                message: format!("host {h} does not exist (hosts are 0..{})", hosts - 1),
            });
        }
    }
    Ok(warnings)
}

/// Reads and validates a spec; returns it with the resolved form (every default filled in).
pub fn read_spec(spec: &serde_json::Value) -> Result<(RunSpec, serde_json::Value), RunError> {
    let spec = super::setups::expand(spec)?;
    let Some(map) = spec.as_object() else {
        return Err(RunError::Spec(crate::spec_reader::SpecError {
            field: "(root)".into(),
            message: "the spec must be a table".into(),
        }));
    };
    let rec = Resolved::default();
    let mut top = Section::recording("", map, &rec);
    let parsed = RunSpec::read(&mut top)?;
    top.finish()?;
    let resolved = resolved_to_json(&rec.borrow());
    Ok((parsed, resolved))
}
