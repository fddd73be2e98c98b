//! What a run returns: result tables plus a summary with provenance.

use crate::record::table::Table;
use serde_json::{json, Value};

pub struct RunOutput {
    /// One row per flow: flow_id, src, dst, size_bytes, start_ps, end_ps, fct_ps, ideal_fct_ps,
    /// slowdown, workload, counted (included in slowdown statistics).
    pub flows: Table,
    /// One row per egress port (switch ports and host NICs): occupancy, drops, marks, bytes sent.
    pub ports: Table,
    /// One row per switch: occupancy summed over its ports (what SIRD calls "ToR queuing").
    pub switches: Table,
    /// Time series (empty unless `metrics.sample_interval_us` is set): time_ps, series, name, value.
    pub timeseries: Table,
    /// Every hop of every packet of the traced flows (empty without a `[trace]` table): time_ps,
    /// flow_id, kind, seq, ack, size_bytes, node, port_id, event, queue_bytes, priority_class.
    pub trace: Table,
    /// The traced flows' control state over time (empty without `[trace]`): time_ps, flow_id,
    /// variable, value.
    pub flow_state: Table,
    /// Training jobs (`kind = "collective"`): one row per collective run (job, iteration,
    /// collective, kind, size_bytes, start_ps, end_ps, ideal_ps, slowdown).
    pub collectives: Table,
    /// One row per job iteration: job, iteration, start_ps, end_ps, iteration_ps, compute_ps,
    /// communication_ps, exposed_communication_ps.
    pub iterations: Table,
    /// Aggregates and provenance (spec, seed, version, wall time, events), as JSON.
    pub summary: serde_json::Value,
    /// The spec with every default filled in.
    pub resolved_spec: serde_json::Value,
}

/// A summary number: JSON has no NaN or infinity, so a value that is not finite is `null`.
pub fn num(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
    }
}
