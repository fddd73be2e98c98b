//! Spec keys that every sender family reads the same way: the priority classes of data and of
//! control packets, and the refusal of source routing by senders that do not choose paths.

use crate::net::packet::LoadBalancing;
use crate::scenario::reader::{Section, SpecResult};
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
