//! The network model: packets, egress ports with their pipelines of queue stages and links, routing.
pub mod dispatch;
pub mod framing;
pub mod link_usage;
pub mod network;
pub mod packet;
pub mod paths;
pub mod pipeline;
pub mod port;
pub mod prefetch;
pub mod queue;
pub mod routing;

pub use network::{Network, QueueConfigs};
pub use pipeline::SwitchConfig;
