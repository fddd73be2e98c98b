//! What a transport learns about the run when it is built: the fabric as seen from its hosts, the
//! packet format, the workload's flow sizes, and its random streams. Read-only; computed on demand.

use super::Framing;
use crate::engine::rng::Rng;
use crate::net::packet::{HostId, LoadBalancing};
use crate::net::port::PortRole;
use crate::net::Network;
use crate::time::{Rate, Time};
use crate::workload::cdf::Cdf;

pub struct TransportEnv<'a> {
    net: &'a Network,
    pub framing: Framing,
    pub load_balancing: LoadBalancing,
    /// The run's seed.
    pub seed: u64,
    /// This transport's index in the run (0 = `[transport]`, then `[transports.*]` in order).
    pub index: u8,
    /// The flow-size distribution of the first workload component using this transport that has one.
    pub size_cdf: Option<&'a Cdf>,
}

impl<'a> TransportEnv<'a> {
    pub fn new(
        net: &'a Network,
        framing: Framing,
        load_balancing: LoadBalancing,
        seed: u64,
        index: u8,
        size_cdf: Option<&'a Cdf>,
    ) -> TransportEnv<'a> {
        TransportEnv { net, framing, load_balancing, seed, index, size_cdf }
    }

    pub fn hosts(&self) -> u32 {
        self.net.hosts
    }

    /// Line rate of a host's NIC.
    pub fn nic_rate(&self, host: HostId) -> Rate {
        self.net.nic_rate(host)
    }

    /// Base RTT between two hosts: a full data packet there, a control packet back, no queueing.
    pub fn base_rtt(&self, a: HostId, b: HostId) -> Time {
        self.net.base_rtt(a, b, self.framing.mtu_bytes, self.framing.control_bytes)
    }

    /// Round trip of a control packet each way between two hosts, no queueing (dcPIM's round length).
    pub fn control_rtt(&self, a: HostId, b: HostId) -> Time {
        self.net.base_rtt(a, b, self.framing.control_bytes, self.framing.control_bytes)
    }

    /// Bandwidth-delay product of `a`'s NIC rate and the base RTT to `b`, in bytes (at least 1).
    pub fn bdp_bytes(&self, a: HostId, b: HostId) -> u64 {
        self.nic_rate(a).bytes_in(self.base_rtt(a, b)).max(1)
    }

    /// Number of equal-cost paths between two hosts.
    pub fn path_count(&self, a: HostId, b: HostId) -> u64 {
        self.net.path_count(a, b)
    }

    /// Priority classes of the egress queues of ports in `role`.
    pub fn priorities(&self, role: PortRole) -> u8 {
        self.net.cfgs[role as usize].priorities
    }

    /// Whether switch ports trim data packets to headers instead of dropping them.
    pub fn trimming(&self) -> bool {
        self.net.cfgs[PortRole::Fabric as usize].trim.is_some()
    }

    /// A random stream of this transport, named so that streams never collide across components
    /// or across transports of the same protocol in one run.
    pub fn rng(&self, name: &str) -> Rng {
        if self.index == 0 {
            Rng::for_component(self.seed, name)
        } else {
            Rng::for_component(self.seed, &format!("{name}#{}", self.index))
        }
    }
}
