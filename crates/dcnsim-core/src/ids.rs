//! The identifiers every layer passes around: plain integers, named for what they count. Their widths
//! are bounded by `limits.rs` (compile-time relations there).

/// A packet's slot in the network's packet pool.
pub type PacketId = u32;
/// A host, numbered from 0; switches follow the hosts in the node numbering.
pub type HostId = u32;
/// A flow, numbered from 0 in order of arrival.
pub type FlowId = u32;
/// A node of the network: hosts first (`0..hosts`), then switches.
pub type NodeId = u32;
/// An egress port of the network.
pub type PortId = u32;
