//! Packet traces: every hop of every packet of a few chosen flows (the `[trace]` table), as htsim
//! and ns-3 users debug with. The network calls `PacketTrace::record` at each thing that happens to
//! a packet; with no `[trace]` table the network holds no recorder and each hook is one
//! untaken branch. Recording never changes what the network does.
//!
//! Rows are kept column by column, in the types the output table uses, so a capped trace of
//! millions of rows is converted without a second copy. Past `max_rows` rows are counted, not
//! kept, and the summary says where the trace was cut.

use super::table::{Column, Table};
use crate::net::packet::{FlowId, Packet, PacketKind};
use crate::net::port::{NodeId, PortId};
use crate::report::output::RunOutput;
use crate::scenario::run::Simulation;
use crate::scenario::spec::MAX_DURATION_US;
use crate::spec_reader::{Section, SpecResult};
use crate::time::{from_us, Time};
use serde_json::json;

/// Most flows one run may trace: a trace is for looking inside a few flows, not for all of them.
pub const MAX_TRACED_FLOWS: usize = 1024;
/// Largest `max_rows`: about 7 GB of packet trace.
pub const MAX_ROWS_LIMIT: u64 = 100_000_000;

/// The `[trace]` table.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceSpec {
    /// Traced flow ids, sorted and distinct.
    pub flows: Vec<FlowId>,
    /// Sampling interval of the flow state series.
    pub state_interval: Time,
    /// Cap on the rows of each of the two trace tables.
    pub max_rows: u64,
}

impl TraceSpec {
    /// Reads the optional `[trace]` table; `None` when it is absent (nothing is traced).
    pub fn read(top: &mut Section) -> SpecResult<Option<TraceSpec>> {
        let Some(mut t) = top.table_opt(
            "trace",
            "per-packet trace and control-state time series of chosen flows (trace.parquet, flow_state.parquet)",
        )?
        else {
            return Ok(None);
        };
        let ids = t.u64_list("flows", "flow ids",
            "flows to trace, by flow_id of the flow table (flows are numbered from 0 in order of arrival); at most 1024")?;
        t.ensure(!ids.is_empty(), "flows", "must list at least one flow id (leave out [trace] to trace nothing)")?;
        t.ensure(
            ids.len() <= MAX_TRACED_FLOWS,
            "flows",
            format!("at most {MAX_TRACED_FLOWS} flows may be traced, got {}", ids.len()),
        )?;
        if let Some(&big) = ids.iter().find(|&&f| f >= u32::MAX as u64) {
            return Err(t.err("flows", format!("flow ids are below 2^32 - 1, got {big}")));
        }
        let mut flows: Vec<FlowId> = ids.iter().map(|&f| f as FlowId).collect();
        flows.sort_unstable();
        if let Some(w) = flows.windows(2).find(|w| w[0] == w[1]) {
            return Err(t.err("flows", format!("flow {} is listed twice", w[0])));
        }
        let interval = t.f64_or(
            "state_interval_us",
            10.0,
            "us",
            "sample each traced flow's control state (window, rate, credit) at this interval while it is alive",
        )?;
        t.ensure(
            (0.01..=MAX_DURATION_US).contains(&interval),
            "state_interval_us",
            format!("must be in [0.01, {MAX_DURATION_US}] us, got {interval}"),
        )?;
        let max_rows = t.u64_or(
            "max_rows",
            10_000_000,
            "rows",
            "cap on the rows of the packet trace and of the state series each; the summary reports a cut",
        )?;
        t.ensure(
            (1..=MAX_ROWS_LIMIT).contains(&max_rows),
            "max_rows",
            format!("must be in [1, {MAX_ROWS_LIMIT}], got {max_rows}"),
        )?;
        t.finish()?;
        Ok(Some(TraceSpec { flows, state_interval: from_us(interval), max_rows }))
    }
}

/// What happened to a packet at a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum TraceEvent {
    /// Accepted by an egress port (queued, or sent at once if the port was idle).
    Enqueue,
    /// Refused by a full egress queue.
    Drop,
    /// ECN CE set on arrival at an egress port.
    Mark,
    /// Payload cut off by a full trimming queue (the packet lives on as a header).
    Trim,
    /// A trimmed header returned to its sender by a full header queue.
    Bounce,
    /// Started serializing onto the port's link.
    TxStart,
    /// Reached the far end of the port's link.
    Arrive,
    /// Handed to the destination host's transport.
    Deliver,
    /// Lost by a lossy link at its far end (`loss_probability`).
    Lose,
}

impl TraceEvent {
    pub const ALL: [TraceEvent; 9] = [
        TraceEvent::Enqueue,
        TraceEvent::Drop,
        TraceEvent::Mark,
        TraceEvent::Trim,
        TraceEvent::Bounce,
        TraceEvent::TxStart,
        TraceEvent::Arrive,
        TraceEvent::Deliver,
        TraceEvent::Lose,
    ];

    pub fn name(self) -> &'static str {
        match self {
            TraceEvent::Enqueue => "enqueue",
            TraceEvent::Drop => "drop",
            TraceEvent::Mark => "mark",
            TraceEvent::Trim => "trim",
            TraceEvent::Bounce => "bounce",
            TraceEvent::TxStart => "tx_start",
            TraceEvent::Arrive => "arrive",
            TraceEvent::Deliver => "deliver",
            TraceEvent::Lose => "lose",
        }
    }
}

/// Every packet kind, by its `repr(u8)` value (the order of `PacketKind`).
const KINDS: [PacketKind; 9] = PacketKind::ALL;

pub fn kind_name(k: PacketKind) -> &'static str {
    match k {
        PacketKind::Data => "data",
        PacketKind::Ack => "ack",
        PacketKind::Nack => "nack",
        PacketKind::Pull => "pull",
        PacketKind::Credit => "credit",
        PacketKind::CreditRequest => "credit_request",
        PacketKind::Header => "header",
        PacketKind::Bounced => "bounced",
        PacketKind::Control => "control",
    }
}

/// The packet trace being recorded (owned by the network while the run lasts).
pub struct PacketTrace {
    flows: Vec<FlowId>,
    max_rows: usize,
    /// Rows not kept because the cap was reached, and the time of the first of them.
    pub rows_dropped: u64,
    pub truncated_at: Option<Time>,
    time: Vec<u64>,
    flow: Vec<u64>,
    kind: Vec<u32>,
    seq: Vec<u64>,
    ack: Vec<u64>,
    size: Vec<u64>,
    node: Vec<u32>,
    port: Vec<u64>,
    event: Vec<u32>,
    queue_bytes: Vec<u64>,
    class: Vec<u64>,
}

impl PacketTrace {
    pub fn new(spec: &TraceSpec) -> PacketTrace {
        debug_assert!(spec.flows.windows(2).all(|w| w[0] < w[1]), "traced flows are sorted and distinct");
        PacketTrace {
            flows: spec.flows.clone(),
            max_rows: spec.max_rows as usize,
            rows_dropped: 0,
            truncated_at: None,
            time: Vec::new(),
            flow: Vec::new(),
            kind: Vec::new(),
            seq: Vec::new(),
            ack: Vec::new(),
            size: Vec::new(),
            node: Vec::new(),
            port: Vec::new(),
            event: Vec::new(),
            queue_bytes: Vec::new(),
            class: Vec::new(),
        }
    }

    pub fn rows(&self) -> usize {
        self.time.len()
    }

    /// Records `event` for `pkt` at `node`/`port` if its flow is traced. `queue_bytes` is what
    /// waits in the port's queues at that moment, not counting this packet; `class` is the
    /// port's priority class for it. Cold: only runs with a `[trace]` table get here.
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &mut self,
        now: Time,
        pkt: &Packet,
        node: NodeId,
        port: PortId,
        event: TraceEvent,
        queue_bytes: u64,
        class: usize,
    ) {
        if self.flows.binary_search(&pkt.flow).is_err() {
            return;
        }
        if self.time.len() >= self.max_rows {
            self.rows_dropped += 1;
            self.truncated_at.get_or_insert(now);
            return;
        }
        debug_assert!(self.time.last().is_none_or(|&t| t <= now), "trace rows are recorded in time order");
        self.time.push(now);
        self.flow.push(pkt.flow as u64);
        self.kind.push(pkt.kind as u32);
        self.seq.push(pkt.seq);
        self.ack.push(pkt.ack);
        self.size.push(pkt.size as u64);
        self.node.push(node);
        self.port.push(port as u64);
        self.event.push(event as u32);
        self.queue_bytes.push(queue_bytes);
        self.class.push(class as u64);
    }

    /// The trace as a table: time_ps, flow_id, kind, seq, ack, size_bytes, node, port_id, event,
    /// queue_bytes, priority_class. `node_names` names the nodes by id.
    pub fn into_table(self, node_names: &[String]) -> Table {
        debug_assert!(KINDS.iter().enumerate().all(|(i, &k)| k as usize == i));
        // Only the nodes that appear, in first-seen order (as the other string columns cross).
        let mut code_of = vec![u32::MAX; node_names.len()];
        let mut names = Vec::new();
        let node: Vec<u32> = self
            .node
            .iter()
            .map(|&n| {
                let c = &mut code_of[n as usize];
                if *c == u32::MAX {
                    *c = names.len() as u32;
                    names.push(node_names[n as usize].clone());
                }
                *c
            })
            .collect();
        let mut t = Table::default();
        t.push("time_ps", Column::U64(self.time));
        t.push("flow_id", Column::U64(self.flow));
        t.push(
            "kind",
            Column::Cat { categories: KINDS.iter().map(|&k| kind_name(k).into()).collect(), codes: self.kind },
        );
        t.push("seq", Column::U64(self.seq));
        t.push("ack", Column::U64(self.ack));
        t.push("size_bytes", Column::U64(self.size));
        t.push("node", Column::Cat { categories: names, codes: node });
        t.push("port_id", Column::U64(self.port));
        t.push(
            "event",
            Column::Cat { categories: TraceEvent::ALL.iter().map(|e| e.name().into()).collect(), codes: self.event },
        );
        t.push("queue_bytes", Column::U64(self.queue_bytes));
        t.push("priority_class", Column::U64(self.class));
        t
    }
}

/// The empty packet trace table (a run without `[trace]`), with the columns of a real one.
pub fn empty_table() -> Table {
    PacketTrace::new(&TraceSpec { flows: Vec::new(), state_interval: 1, max_rows: 0 }).into_table(&[])
}

/// A finished run's traces and what the summary says about them.
pub struct TraceOutput {
    pub packets: Table,
    pub flow_state: Table,
    /// The summary's `trace` entry; `None` for a run without `[trace]`.
    pub summary: Option<serde_json::Value>,
}

impl TraceOutput {
    /// Takes the recorded traces out of a finished simulation.
    pub fn take(sim: &mut Simulation) -> TraceOutput {
        let (Some(spec), Some(packets), Some(series)) =
            (sim.spec.trace.as_ref(), sim.net.tracer.take(), sim.flow_state.take())
        else {
            return TraceOutput { packets: empty_table(), flow_state: super::flow_state::empty_table(), summary: None };
        };
        let started = sim.flows.records.len() as u64;
        let not_started: Vec<FlowId> = spec.flows.iter().copied().filter(|&f| f as u64 >= started).collect();
        let truncated = packets.truncated_at.is_some() || series.truncated_at.is_some();
        let summary = json!({
            "flows": spec.flows,
            "flows_not_started": not_started,
            "state_interval_ps": spec.state_interval,
            "max_rows": spec.max_rows,
            "packet_rows": packets.rows(),
            "packet_rows_dropped": packets.rows_dropped,
            "packet_truncated_at_ps": packets.truncated_at,
            "state_rows": series.rows(),
            "state_truncated_at_ps": series.truncated_at,
            "truncated": truncated,
        });
        TraceOutput {
            packets: packets.into_table(&sim.net.node_names),
            flow_state: series.into_table(),
            summary: Some(summary),
        }
    }

    /// Puts the traces into a run's output.
    pub fn attach(self, out: &mut RunOutput) {
        out.trace = self.packets;
        out.flow_state = self.flow_state;
        if let Some(s) = self.summary {
            out.summary["trace"] = s;
        }
    }
}
