//! Recorders: what the network and the transports write while a run goes (the flow log, packet
//! traces, flow state series, the measurement window's carry-in), in plain columns. Below `net` and
//! `transport`, which call them; above the engine. Turning them into results is `report`'s job.
pub mod cpu_time;
pub mod flow_state;
pub mod flows;
pub mod measure;
pub mod table;
pub mod trace;
