//! What a caller controls while a run goes: progress output, cancellation, whether flows are kept.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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
