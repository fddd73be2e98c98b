//! Measurement: the flow log, the exact ideal FCT, the aggregates of a run, and traces of chosen flows.
pub mod cpu_time;
pub mod fabric;
pub mod flow_state;
pub mod flow_table;
pub mod flows;
pub mod ideal;
pub mod ideal_deflected;
pub mod ideal_paths;
pub mod link_usage;
pub mod queues;
pub mod summary;
pub mod table;
pub mod trace;
