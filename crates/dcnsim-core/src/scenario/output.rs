//! What a run returns: result tables plus a summary with provenance.

use crate::record::table::Table;
use crate::spec_reader::SpecError;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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
    /// Aggregates and provenance (spec, seed, version, wall time, events), as JSON.
    pub summary: serde_json::Value,
    /// The spec with every default filled in.
    pub resolved_spec: serde_json::Value,
}

#[derive(Debug)]
pub enum RunError {
    /// The spec is malformed or impossible; names the field.
    Spec(SpecError),
    /// An internal invariant failed (a bug in dcnsim, or a run that diverged); the message says which.
    Invariant(String),
    /// A file the spec names could not be read.
    Io(String),
    /// `RunOptions::cancel` was set (e.g. Ctrl-C in Python); the run stopped early.
    Cancelled,
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Spec(e) => write!(f, "{e}"),
            RunError::Invariant(m) => write!(f, "invariant violated: {m}"),
            RunError::Io(m) => write!(f, "{m}"),
            RunError::Cancelled => write!(f, "cancelled"),
        }
    }
}

impl std::error::Error for RunError {}

impl From<SpecError> for RunError {
    fn from(e: SpecError) -> Self {
        RunError::Spec(e)
    }
}

#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Print progress (simulated time, events/s) to stderr every couple of seconds.
    pub progress: bool,
    /// Set from another thread to stop the run (checked every `CANCEL_CHECK_EVENTS` events); the
    /// run then returns `RunError::Cancelled`.
    pub cancel: Option<Arc<AtomicBool>>,
    /// Leave the flow table out of the result (`RunOutput::flows` has no columns): at tens of
    /// millions of flows its rows are most of a run's memory (about 90 bytes a flow, the flow log
    /// itself 64). The summary is the same either way.
    pub summary_only: bool,
}

/// Events between two looks at `RunOptions::cancel`: a few milliseconds of wall time.
pub const CANCEL_CHECK_EVENTS: u64 = 1 << 16;

impl RunOptions {
    pub fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed))
    }
}
