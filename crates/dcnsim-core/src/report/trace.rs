//! The traces a run recorded (`record::trace`, `record::flow_state`), taken out of the finished
//! simulation as tables, with what the summary says about them.

use super::output::RunOutput;
use crate::ids::FlowId;
use crate::net::packet::Packet;
use crate::record::table::Table;
use crate::record::trace::TracedPacket;
use crate::record::{flow_state, trace};
use crate::scenario::Simulation;
use serde_json::json;

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
            return TraceOutput {
                packets: trace::empty_table(Packet::KIND_NAMES),
                flow_state: flow_state::empty_table(),
                summary: None,
            };
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
            packets: packets.into_table(&sim.net.node_names, Packet::KIND_NAMES),
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
