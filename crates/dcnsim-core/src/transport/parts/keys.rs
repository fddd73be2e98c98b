//! Spec keys that every sender family reads the same way: the priority classes of data and of
//! control packets, fixed timeouts, and the refusal of source routing by senders that do not
//! choose paths.

use crate::limits::MAX_RTO_US;
use crate::net::packet::LoadBalancing;
use crate::spec_reader::{Section, SpecResult};
use crate::transport::SpecEnv;

/// Reads `data_priority` and `control_priority` (class numbers, 0 = highest; default 0).
pub fn read_classes(s: &mut Section, data_doc: &'static str, control_doc: &'static str) -> SpecResult<(u8, u8)> {
    let data = s.u64_or("data_priority", 0, "class", data_doc)?;
    let control = s.u64_or("control_priority", 0, "class", control_doc)?;
    s.ensure(data < 8, "data_priority", "must be in 0..7")?;
    s.ensure(control < 8, "control_priority", "must be in 0..7")?;
    Ok((data as u8, control as u8))
}

/// An error unless the transport's packets are routed by the network (ECMP or spraying).
pub fn refuse_source_routing(s: &Section, env: &SpecEnv, name: &str) -> SpecResult<()> {
    s.ensure(
        env.load_balancing != LoadBalancing::Source,
        "protocol",
        format!("{name} does not choose source routes; use routing.load_balancing = \"ecmp\" or \"spray\""),
    )
}

/// Reads a fixed timeout `key` in microseconds (default `default`), in (0, `MAX_RTO_US`].
pub fn read_timeout_us(s: &mut Section, key: &'static str, default: f64, doc: &'static str) -> SpecResult<f64> {
    let us = s.f64_or(key, default, "us", doc)?;
    check_timeout_us(s, key, us)?;
    Ok(us)
}

/// An error unless `us` (the value of `key`) is a usable timeout: in (0, `MAX_RTO_US`].
pub fn check_timeout_us(s: &Section, key: &'static str, us: f64) -> SpecResult<()> {
    s.ensure(us > 0.0 && us <= MAX_RTO_US, key, format!("must be in (0, 1e7] us, got {us}"))
}
