//! Reporters: a finished simulation turned into results (the summary, flow, port and switch tables,
//! the exact ideal FCT, traces). Above the run loop; they read `scenario::Simulation` and everything
//! below it, and only `api` imports them.
pub mod collectives;
pub mod fabric;
pub mod flow_table;
pub mod ideal;
pub mod ideal_deflected;
pub mod ideal_paths;
pub mod link_usage;
pub mod output;
pub mod queues;
pub mod schema;
pub mod summary;
pub mod trace;

pub use output::RunOutput;
