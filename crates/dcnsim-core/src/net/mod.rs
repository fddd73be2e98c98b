//! The network model: packets, egress ports with their queue disciplines and links, routing.
pub mod network;
pub mod packet;
pub mod paths;
pub mod port;
pub mod queue;
pub mod routing;

pub use network::{Network, QueueConfigs};
