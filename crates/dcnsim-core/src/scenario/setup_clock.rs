//! Times the phases of building a run (topology, routes, workload, transports), so that set-up
//! time is reported apart from simulation time and, with progress on, a slow set-up says what it
//! is doing instead of sitting silent.

use std::time::Instant;

/// Set-up shorter than this prints nothing.
const QUIET_S: f64 = 1.0;

pub struct SetupClock {
    started: Instant,
    phase_started: Instant,
    progress: bool,
}

impl SetupClock {
    pub fn new(progress: bool) -> SetupClock {
        let now = Instant::now();
        SetupClock { started: now, phase_started: now, progress }
    }

    /// Marks the end of a phase; `what` describes it (called only when printing).
    pub fn done(&mut self, what: impl FnOnce() -> String) {
        let total = self.started.elapsed().as_secs_f64();
        if self.progress && total >= QUIET_S {
            let phase = self.phase_started.elapsed().as_secs_f64();
            eprintln!("[dcnsim] set-up: {} ({phase:.2} s; {total:.2} s so far)", what());
        }
        self.phase_started = Instant::now();
    }

    /// Seconds since set-up began.
    pub fn elapsed_s(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }
}
