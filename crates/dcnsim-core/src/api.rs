//! The entry every front end shares (the CLI and Python bindings through `dcnsim-py`, the bench
//! binary): read a spec, simulate it, report the results. The top floor: it may import every layer,
//! and nothing imports it.

use crate::record::cpu_time::thread_cpu_s;
use crate::report::{summary, trace::TraceOutput};
use std::time::Instant;

pub use crate::report::schema::FieldDoc;
pub use crate::report::summary::summary_schema;
pub use crate::report::RunOutput;
pub use crate::scenario::setups::Setup;
pub use crate::scenario::{describe, read_spec, Description, RunError, RunOptions, Simulation};

/// Reads the spec, simulates, and collects the results.
pub fn run(spec: &serde_json::Value, opts: &RunOptions) -> Result<RunOutput, RunError> {
    let (parsed, resolved) = read_spec(spec)?;
    let from_spec = parsed.warnings.len();
    parsed.warnings.iter().for_each(print_warning);
    let mut sim = Simulation::new_with(parsed, opts)?;
    let (wall, cpu) = (Instant::now(), thread_cpu_s());
    let events = sim.run(opts)?;
    let wall_s = wall.elapsed().as_secs_f64();
    let cpu_s = cpu.and_then(|c| Some(thread_cpu_s()? - c));
    let traces = TraceOutput::take(&mut sim);
    let mut out = summary::collect(&sim, resolved, events, wall_s, !opts.summary_only)?;
    summary::add_cpu_time(&mut out.summary, events, cpu_s);
    traces.attach(&mut out);
    let warnings = out.summary["warnings"].as_array().map_or(&[][..], |w| w.as_slice());
    warnings.iter().skip(from_spec).filter_map(|w| w.as_str()).for_each(print_warning);
    Ok(out)
}

/// Warnings go to stderr as they are found, and into the summary's `warnings`.
fn print_warning(w: impl AsRef<str>) {
    eprintln!("[dcnsim] warning at {}", w.as_ref());
}
