//! What the network looks like between two hosts: the hops of a path, how many equal-cost paths
//! there are, and the base round-trip time. Read-only views used by transports (through their
//! environment) and by metrics; computed on demand, never on the packet path.

use crate::net::Network;
use crate::time::{Rate, Time};

/// One hop: the rate and delay (propagation plus switch latency) of the link it crosses.
#[derive(Clone, Copy, Debug)]
pub struct Hop {
    pub rate: Rate,
    pub delay: Time,
    /// Pacing rate of this port, if it is paced below its link rate.
    pub pace: Option<Rate>,
}

impl Hop {
    /// How long the port is busy with a packet of `wire` bytes (serialization, or the pacing gap).
    pub fn busy(&self, wire: u32) -> Time {
        let tx = self.rate.tx_time(wire);
        self.pace.map_or(tx, |p| tx.max(p.tx_time(wire)))
    }
}

impl Network {
    /// The links a packet from `src` to `dst` crosses on the first equal-cost path.
    pub fn path_hops(&self, src: u32, dst: u32) -> Vec<Hop> {
        self.routes
            .walk(&self.ports, src, dst, |_, _| 0)
            .iter()
            .map(|&p| {
                let port = &self.ports[p as usize];
                Hop { rate: port.rate, delay: port.delay, pace: port.pace }
            })
            .collect()
    }

    /// Number of distinct equal-cost paths from `src` to `dst`.
    pub fn path_count(&self, src: u32, dst: u32) -> u64 {
        self.routes.path_count(&self.ports, src, dst)
    }

    /// Base RTT between two hosts on the first equal-cost path: one full data packet (`mtu_bytes`
    /// on the wire) there, one control packet (`control_bytes`) back, store-and-forward at every
    /// hop, no queueing.
    pub fn base_rtt(&self, a: u32, b: u32, mtu_bytes: u32, control_bytes: u32) -> Time {
        let one_way = |hops: &[Hop], wire: u32| hops.iter().map(|h| h.rate.tx_time(wire) + h.delay).sum::<Time>();
        one_way(&self.path_hops(a, b), mtu_bytes) + one_way(&self.path_hops(b, a), control_bytes)
    }

    /// Line rate of a host's NIC.
    pub fn nic_rate(&self, host: u32) -> Rate {
        self.ports[self.nic_port(host) as usize].rate
    }
}
