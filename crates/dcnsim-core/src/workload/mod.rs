//! Workloads: where flows come from. A run has one or more workload components (`[[workload]]`
//! tables); their arrivals are merged into one time-ordered stream, so the simulator keeps a single
//! pending arrival event however many flows a run has.
//!
//! Contract used by the simulator (scenario/run.rs):
//! - `WorkloadSpec::read(sections, ...)` parses the `[[workload]]` tables (errors name the field).
//! - `Workload::build(&spec, &WorkloadEnv)` makes the generator; `next()` yields arrivals in
//!   non-decreasing `start` order, ties in a deterministic order, `None` when exhausted.
//! - Every draw comes from `Rng::for_component(seed, ...)` streams, so a run is a pure function of
//!   its spec and seed.

pub mod cdf;
pub mod collective;
pub mod collective_spec;
pub mod dag;
pub mod dag_run;
pub mod flow_list;
pub mod generators;
pub mod spec;

pub use generators::Workload;
pub use spec::{ComponentSpec, WorkloadSpec};

use crate::net::packet::HostId;
use crate::time::{Rate, Time};

/// One flow (or message) to start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowArrival {
    pub start: Time,
    pub src: HostId,
    pub dst: HostId,
    /// Application bytes.
    pub size_bytes: u64,
    /// Index of the `[[workload]]` component that made it.
    pub component: u16,
    /// The component's own mark, returned with the flow's milestones (a dependency graph's flow
    /// and iteration, `dag_run::tag`); 0 elsewhere.
    pub tag: u64,
}

/// What a workload needs to know about the run.
#[derive(Clone, Debug)]
pub struct WorkloadEnv {
    pub hosts: u32,
    /// Rate of each host's link, for loads given as a fraction of host link capacity.
    pub host_rate: Rate,
    /// Rack (edge switch) of each host, for workloads that care about locality.
    pub rack_of: Vec<u32>,
    pub seed: u64,
    /// No arrivals at or after this time are generated.
    pub end: Time,
    /// Application payload bytes per full-sized packet (MSS), for sizes given in packets.
    pub mss_bytes: u32,
}

#[cfg(test)]
mod tests;
