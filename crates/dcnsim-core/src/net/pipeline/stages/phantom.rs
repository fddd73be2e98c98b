//! Phantom queues (Alizadeh et al., "Less Is More: Trading a Little Bandwidth for Ultra-Low
//! Latency in the Data Center", NSDI 2012, section 3.2): a counter beside each switch egress link
//! that grows by the size of every packet the link sends and drains at gamma x the line rate. It
//! holds no packets; when it exceeds its marking threshold, ECN-capable packets leaving the port
//! are marked CE. The link therefore signals congestion as its utilization approaches gamma, before
//! a real queue forms, leaving "bandwidth headroom".
//!
//! Defaults and their sources: gamma = 0.95 (HULL's drain rate, section 3.2 and the evaluation);
//! marking threshold 1 KB (HULL's phantom-queue threshold in its evaluation). The counter is
//! compared before the departing packet is added, so a link sending at exactly gamma x C never
//! marks (one packet's worth never accumulates).
//!
//! Modelled: the counter at every switch egress port (host NICs have none), marking at dequeue of
//! ECN-capable packets, on top of any real-queue marking the port has. Not modelled: HULL's
//! implementation details (the NetFPGA counter's update granularity).

use crate::net::network::Network;
use crate::net::packet::{flags, PacketId};
use crate::net::pipeline::stage::Stage;
use crate::net::port::{PortId, PortRole};
use crate::net::QueueConfigs;
use crate::record::trace::TraceEvent;
use crate::spec_reader::{Section, SpecResult};
use crate::time::Time;

/// `[switch]` phantom-queue keys.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PhantomQueue {
    /// gamma: the counter drains at this fraction of the port's rate.
    pub drain_rate_fraction: f64,
    /// Mark while the counter holds more than this.
    pub mark_threshold_bytes: u64,
}

/// One port's counter.
#[derive(Clone, Copy, Debug, Default)]
pub struct PhantomPort {
    pub enabled: bool,
    /// Drain rate, bytes per picosecond.
    pub drain_bytes_per_ps: f64,
    pub bytes: f64,
    pub updated_at: Time,
    /// Packets this counter marked (a packet already CE is not counted).
    pub marks: u64,
}

/// The network's phantom queues, indexed by port.
#[derive(Clone, Debug)]
pub struct Phantoms {
    pub cfg: PhantomQueue,
    pub ports: Vec<PhantomPort>,
}

impl PhantomPort {
    /// Drains to `now`, returns whether the counter is over `threshold`, then adds `size`.
    #[inline]
    pub fn on_departure(&mut self, size: u32, now: Time, threshold: u64) -> bool {
        debug_assert!(now >= self.updated_at);
        let drained = (now - self.updated_at) as f64 * self.drain_bytes_per_ps;
        self.bytes = (self.bytes - drained).max(0.0);
        self.updated_at = now;
        let over = self.bytes > threshold as f64;
        self.bytes += size as f64;
        over
    }
}

impl Stage for Phantoms {
    const NAME: &'static str = "phantom_queue";
    const CONFORMANCE: &'static str = "[switch]\nphantom_queue = true\n";
    const ON_DEQUEUE: bool = true;
    type Config = PhantomQueue;

    fn read(s: &mut Section, _queues: &QueueConfigs) -> SpecResult<Option<PhantomQueue>> {
        read(s)
    }

    /// A phantom queue at every switch egress, draining at gamma x the port's rate.
    fn build(ph: &PhantomQueue, net: &mut Network, _max_packet: u32) -> Phantoms {
        let ports = net
            .ports
            .iter()
            .map(|p| PhantomPort {
                enabled: p.role != PortRole::HostNic,
                drain_bytes_per_ps: p.rate.bps() as f64 * ph.drain_rate_fraction / 8e12,
                ..PhantomPort::default()
            })
            .collect();
        Phantoms { cfg: *ph, ports }
    }

    /// The port's phantom queue counts the departing packet and may mark it.
    #[inline]
    fn on_dequeue(net: &mut Network, port: PortId, pkt: PacketId, size: u32, _class: usize, now: Time) {
        let Some(ph) = net.stages.get_mut::<Phantoms>() else { return };
        let threshold = ph.cfg.mark_threshold_bytes;
        let q = &mut ph.ports[port as usize];
        if !q.enabled || !q.on_departure(size, now, threshold) {
            return;
        }
        let packet = net.pool.get_mut(pkt);
        if packet.has(flags::ECT) {
            if !packet.has(flags::CE) {
                q.marks += 1;
                net.ports[port as usize].counters.marks += 1;
            }
            packet.flags |= flags::CE;
            if net.tracer.is_some() {
                net.trace(now, pkt, port, TraceEvent::Mark);
            }
        }
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("marks", self.marks())]
    }
}

impl Phantoms {
    /// Marks made by phantom queues over all ports (whole run).
    pub fn marks(&self) -> u64 {
        self.ports.iter().map(|q| q.marks).sum()
    }
}

/// Reads the `phantom_*` keys of `[switch]`; `None` unless `phantom_queue = true`.
pub fn read(s: &mut Section) -> SpecResult<Option<PhantomQueue>> {
    let on = s.bool_or(
        "phantom_queue",
        false,
        "HULL phantom queues: a counter at every switch egress drains at a fraction of the line rate and marks \
         ECN-capable packets while it exceeds a threshold (Alizadeh et al., NSDI'12)",
    )?;
    for key in ["phantom_drain_rate_fraction", "phantom_mark_threshold_bytes"] {
        s.ensure(on || s.is_describe() || !s.has(key), key, "only used with phantom_queue = true")?;
    }
    let gamma = s.f64_or(
        "phantom_drain_rate_fraction",
        0.95,
        "",
        "phantom queue: drain rate as a fraction of the port's rate, gamma (HULL: 0.95)",
    )?;
    s.ensure(gamma > 0.0 && gamma <= 1.0, "phantom_drain_rate_fraction", format!("must be in (0, 1], got {gamma}"))?;
    let threshold = s.u64_or(
        "phantom_mark_threshold_bytes",
        1000,
        "bytes",
        "phantom queue: mark while the counter exceeds this (HULL: 1 KB)",
    )?;
    Ok(on.then_some(PhantomQueue { drain_rate_fraction: gamma, mark_threshold_bytes: threshold }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 10 Gb/s at gamma 0.95: 1.1875e-3 bytes per ps.
    fn port() -> PhantomPort {
        PhantomPort { enabled: true, drain_bytes_per_ps: 10e9 * 0.95 / 8e12, ..Default::default() }
    }

    #[test]
    fn gamma_rate_never_marks_line_rate_does() {
        let tx = 1_200_000; // 1500 B at 10 Gb/s, ps
                            // Back-to-back at gamma x line rate: the counter empties between packets.
        let mut q = port();
        let gap = (1500.0 / q.drain_bytes_per_ps) as Time + 1;
        assert!((0..1000).all(|k| !q.on_departure(1500, k * gap, 1000)));
        // At line rate it keeps 75 B per packet: before the k-th departure it holds 75 k bytes.
        let mut q = port();
        let marked: Vec<bool> = (0..40).map(|k| q.on_departure(1500, k * tx, 1000)).collect();
        for (k, &m) in marked.iter().enumerate() {
            assert_eq!(m, 75 * k > 1000, "packet {k}");
        }
        assert!((q.bytes - (1500.0 + 39.0 * 75.0)).abs() < 1e-6, "{}", q.bytes);
    }
}
