//! Measurement: the flow log, the exact ideal FCT, and the aggregates of a run.
pub mod flows;
pub mod ideal;
pub mod summary;
pub mod table;
