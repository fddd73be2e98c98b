//! RCP's router side (Dukkipati and McKeown, "Why Flow-Completion Time is the Right Metric for
//! Congestion Control", CCR 2006; Dukkipati et al., "Processor Sharing Flows in the Internet",
//! IWQoS 2005; the authors' ns-2 router `rcp.cc`, `rate_fact_mode_` 0). Every switch egress port
//! keeps one fair-share rate R and updates it every control interval T:
//!
//! ```text
//!   R <- R (1 + (T / d0) (alpha (C - y) - beta q / d0) / C),   clamped to [one MTU per d0, C]
//! ```
//!
//! with C the port's rate, y the rate of the bytes that arrived at the port during the interval
//! (dropped ones included, as `rcp.cc` counts them before the drop-tail decision), q the bytes
//! queued at the update and d0 the RTT of the flows. Each data packet that carries a rate header
//! (`aux` != 0: the rate in kb/s, `u32::MAX` as the sender writes it) leaves each port with
//! `aux = min(aux, R)`; the receiver echoes it and the sender paces at it (`transport/rcp.rs`).
//!
//! Defaults and their sources: alpha = 0.1, beta = 1 (the RCP papers' recommended values, which
//! the Dart paper's section VI-D also uses); T = d0; the initial R = C (`rcp.cc` starts at
//! `init_rate_fact_` x C; at 1 a new flow on an idle path starts at line rate, RCP's "aggressive
//! ramp-up" that the ExpressPass paper notes).
//!
//! Modelled: per-port R at every switch egress (not at host NICs: a sender never exceeds its own
//! line rate anyway), arrivals counted per interval, queue feedback, stamping at dequeue.
//! Not modelled: d0 as a running average of the RTTs the packets carry (`rcp.cc` averages each
//! packet's RTT field); here d0 is fixed per run (`rcp_rtt_us`, default the base RTT from host 0 to
//! the last host), the value that average converges to on an uncongested fabric. The per-router
//! random phase of the first update (`rcp.cc` draws it from N(T, 0.2T)): all ports update together.
//!
//! Each interval's length is drawn uniformly in [0.9 T, 1.1 T] and the update uses the length
//! that passed (`rcp.cc`'s interval follows its moving-average RTT, so it is never constant; a
//! constant T phase-locks with senders pacing at equal rates, and the update then samples the
//! queue at the same point of their packet pattern every time).
//!
//! The update runs on the stage's switch-side timer (`Stage::on_timer`) that stops
//! when every RCP port is idle (no arrival in an interval, empty queue) and restarts at the next
//! arrival, first applying the missed idle intervals in closed form (R grows by 1 + alpha T / d0
//! per interval up to C), so an idle fabric costs no events and the run can end.

use super::Slot;
use crate::engine::events::{Event, EventQueue};
use crate::engine::rng::Rng;
use crate::net::network::Network;
use crate::net::packet::{PacketId, PacketKind};
use crate::net::pipeline::stage::{PacketUse, Stage};
use crate::net::port::{PortId, PortRole};
use crate::net::QueueConfigs;
use crate::spec_reader::{Section, SpecResult};
use crate::time::{from_us, Time};

/// `Event::SwitchTimer` kind of the RCP rate update.
pub const RCP_UPDATE: u8 = <Rcp as Slot>::TIMER_KIND;

/// `[switch]` RCP keys.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RcpSwitch {
    pub alpha: f64,
    pub beta: f64,
    /// d0; `None` = the base RTT from host 0 to the last host.
    pub rtt: Option<Time>,
    /// T; `None` = d0.
    pub interval: Option<Time>,
    /// R at the start, as a fraction of the port's rate.
    pub initial_rate_fraction: f64,
}

/// One port's rate state.
#[derive(Clone, Copy, Debug, Default)]
pub struct RcpPort {
    pub enabled: bool,
    /// R, bits per second.
    pub rate_bps: f64,
    /// Bytes that arrived since the last update (their share that falls in this interval).
    pub arrived_bytes: f64,
    /// The share of arrivals that falls in the next interval.
    pub spill_bytes: f64,
}

/// The network's RCP state.
#[derive(Clone, Debug)]
pub struct Rcp {
    pub cfg: RcpSwitch,
    pub d0: Time,
    pub interval: Time,
    /// Floor of R: one `mtu` per d0, in bits per second.
    pub min_rate_bps: f64,
    pub ports: Vec<RcpPort>,
    /// Time of the last update (or of the start).
    pub last_update: Time,
    /// When the pending update runs (valid while `timer_pending`).
    pub next_update: Time,
    pub timer_pending: bool,
    /// Updates run (for tests and reports).
    pub updates: u64,
    /// Draws each interval's length.
    pub rng: Rng,
}

/// R in the packet header's unit (kb/s, at least 1 so that a stamped header stays a header).
#[inline]
pub fn rate_to_header(bps: f64) -> u32 {
    (bps / 1e3).clamp(1.0, (u32::MAX - 1) as f64) as u32
}

impl Rcp {
    /// The next interval: T x U[0.9, 1.1].
    fn next_interval(&mut self) -> Time {
        ((self.interval as f64 * (0.9 + 0.2 * self.rng.uniform())) as Time).max(1)
    }

    /// One interval's update of a port of rate `c_bps` with `queued` bytes waiting, after an
    /// interval of `dt` in which `arrived_bytes` arrived.
    #[inline]
    pub fn update_rate(&self, r: f64, c_bps: f64, dt: Time, arrived_bytes: f64, queued: u64) -> f64 {
        let (t, d0) = (dt.max(1) as f64, self.d0 as f64);
        let y = arrived_bytes * 8e12 / t;
        let q_bps = queued as f64 * 8e12 / d0;
        let ratio = 1.0 + (t / d0) * (self.cfg.alpha * (c_bps - y) - self.cfg.beta * q_bps) / c_bps;
        (r * ratio).clamp(self.min_rate_bps.min(c_bps), c_bps)
    }
}

impl Stage for Rcp {
    const NAME: &'static str = "rcp";
    const CONFORMANCE: &'static str = "[switch]\nrcp = true\n";
    const ON_ARRIVAL: bool = true;
    const ON_DEQUEUE: bool = true;
    type Config = RcpSwitch;

    fn read(s: &mut Section, _queues: &QueueConfigs) -> SpecResult<Option<RcpSwitch>> {
        read(s)
    }

    /// RCP at every switch egress: R starts at the given fraction of each port's rate; d0 defaults
    /// to the base RTT from host 0 to the last host (full packets both ways), T to d0.
    fn build(r: &RcpSwitch, net: &mut Network, max_packet: u32) -> Rcp {
        let last = net.hosts.saturating_sub(1);
        let d0 = r.rtt.unwrap_or_else(|| net.base_rtt(0, last, max_packet, max_packet)).max(1);
        let ports = net
            .ports
            .iter()
            .map(|p| RcpPort {
                enabled: p.role != PortRole::HostNic,
                rate_bps: p.rate.bps() as f64 * r.initial_rate_fraction,
                arrived_bytes: 0.0,
                spill_bytes: 0.0,
            })
            .collect();
        // Its own stream, split from the network's (only RCP runs draw it).
        let rng = Rng::seed_from(net.rng.next_u64());
        let min_rate_bps = max_packet as f64 * 8e12 / d0 as f64;
        let interval = r.interval.unwrap_or(d0).max(1);
        Rcp {
            cfg: *r,
            d0,
            interval,
            min_rate_bps,
            ports,
            last_update: 0,
            next_update: 0,
            timer_pending: false,
            updates: 0,
            rng,
        }
    }

    /// RCP switches rewrite `aux` of every data packet that carries a nonzero one: every protocol
    /// of the run must declare that its `aux` is that rate header (`Needs::rate_header`).
    fn check_protocols(_cfg: &RcpSwitch, top: &Section, protocols: &[(&str, PacketUse)]) -> SpecResult<()> {
        match protocols.iter().find(|(_, uses)| !uses.rate_header) {
            None => Ok(()),
            Some((name, _)) => Err(top.err(
                "switch.rcp",
                format!(
                    "RCP switches rewrite the rate header (`aux`) of data packets, which {name} uses: run rcp alone"
                ),
            )),
        }
    }

    #[inline]
    fn on_arrival(net: &mut Network, port: PortId, pkt: PacketId, now: Time, ev: &mut EventQueue) {
        net.rcp_arrival(port, net.pool.get(pkt).size, now, ev);
    }

    #[inline]
    fn on_dequeue(net: &mut Network, port: PortId, pkt: PacketId, _size: u32, _class: usize, _now: Time) {
        net.rcp_stamp(port, pkt);
    }

    fn on_timer(net: &mut Network, _id: u32, now: Time, ev: &mut EventQueue) {
        net.rcp_update(now, ev);
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("updates", self.updates)]
    }
}

impl Network {
    /// Counts an arrival at an RCP port, restarting the update timer if it had stopped. As
    /// `rcp.cc`, a packet counts as occupying the port's line for its transmission time from its
    /// arrival, and the share of it past the interval's end counts in the next interval.
    #[inline]
    pub(crate) fn rcp_arrival(&mut self, port: PortId, size: u32, now: Time, ev: &mut EventQueue) {
        let Some(rcp) = self.stages.get_mut::<Rcp>() else { return };
        if !rcp.ports[port as usize].enabled {
            return;
        }
        if !rcp.timer_pending {
            self.rcp_restart(now, ev);
        }
        let Some(rcp) = self.stages.get_mut::<Rcp>() else { return };
        let tx = self.ports[port as usize].rate.tx_time(size).max(1);
        let beyond = (now + tx).saturating_sub(rcp.next_update).min(tx);
        let spill = size as f64 * beyond as f64 / tx as f64;
        let p = &mut rcp.ports[port as usize];
        p.arrived_bytes += size as f64 - spill;
        p.spill_bytes += spill;
    }

    /// The first arrival after an idle spell: applies the missed updates and arms the timer.
    fn rcp_restart(&mut self, now: Time, ev: &mut EventQueue) {
        let Some(rcp) = self.stages.get_mut::<Rcp>() else { return };
        // Idle since the last update: apply the missed intervals (no arrivals, empty queues).
        let missed = now.saturating_sub(rcp.last_update) / rcp.interval;
        if missed > 0 {
            let growth = 1.0 + rcp.cfg.alpha * rcp.interval as f64 / rcp.d0 as f64;
            for (id, q) in rcp.ports.iter_mut().enumerate() {
                if q.enabled {
                    let c = self.ports[id].rate.bps() as f64;
                    q.rate_bps = (q.rate_bps * growth.powi(missed.min(1 << 20) as i32)).min(c);
                }
            }
            rcp.last_update += missed * rcp.interval;
        }
        rcp.timer_pending = true;
        rcp.next_update = (rcp.last_update + rcp.next_interval()).max(now);
        ev.schedule(rcp.next_update, Event::SwitchTimer { kind: RCP_UPDATE, id: 0 });
    }

    /// The control interval ended: every RCP port updates its R.
    pub(crate) fn rcp_update(&mut self, now: Time, ev: &mut EventQueue) {
        let Some(rcp) = self.stages.get_mut::<Rcp>() else { return };
        debug_assert!(rcp.timer_pending && now > rcp.last_update);
        let dt = now - rcp.last_update;
        let mut busy = false;
        for id in 0..rcp.ports.len() {
            let q = rcp.ports[id];
            if !q.enabled {
                continue;
            }
            let port = &self.ports[id];
            let r = rcp.update_rate(q.rate_bps, port.rate.bps() as f64, dt, q.arrived_bytes, port.bytes);
            busy |= q.arrived_bytes > 0.0 || q.spill_bytes > 0.0 || port.bytes > 0;
            let q = &mut rcp.ports[id];
            (q.rate_bps, q.arrived_bytes, q.spill_bytes) = (r, q.spill_bytes, 0.0);
            debug_assert!(r.is_finite() && r > 0.0);
        }
        rcp.updates += 1;
        rcp.last_update = now;
        rcp.timer_pending = busy;
        if busy {
            rcp.next_update = now + rcp.next_interval();
            ev.schedule(rcp.next_update, Event::SwitchTimer { kind: RCP_UPDATE, id: 0 });
        }
    }

    /// Dequeue stage: a data packet with a rate header leaves with min(its rate, this port's R).
    #[inline]
    pub(crate) fn rcp_stamp(&mut self, port: PortId, pkt: PacketId) {
        let Some(rcp) = self.stages.get::<Rcp>() else { return };
        let q = &rcp.ports[port as usize];
        let packet = self.pool.get_mut(pkt);
        if q.enabled && packet.kind == PacketKind::Data && packet.aux != 0 {
            packet.aux = packet.aux.min(rate_to_header(q.rate_bps));
        }
    }

    /// R of a port in bits per second (`None` unless it is an RCP port).
    pub fn rcp_rate_bps(&self, port: PortId) -> Option<f64> {
        let q = self.stages.get::<Rcp>()?.ports.get(port as usize)?;
        q.enabled.then_some(q.rate_bps)
    }
}

/// Reads the `rcp*` keys of `[switch]`; `None` unless `rcp = true`.
pub fn read(s: &mut Section) -> SpecResult<Option<RcpSwitch>> {
    let on = s.bool_or(
        "rcp",
        false,
        "RCP routers: every switch egress port computes a fair-share rate each control interval and stamps \
         min(header, rate) on the data packets of the rcp protocol (Dukkipati and McKeown, CCR'06)",
    )?;
    let keys = ["rcp_alpha", "rcp_beta", "rcp_rtt_us", "rcp_interval_us", "rcp_initial_rate_fraction"];
    for key in keys {
        s.ensure(on || s.is_describe() || !s.has(key), key, "only used with rcp = true")?;
    }
    let alpha = s.f64_or("rcp_alpha", 0.1, "", "RCP: gain on spare capacity (the RCP papers: 0.1)")?;
    s.ensure(alpha > 0.0 && alpha <= 10.0, "rcp_alpha", format!("must be in (0, 10], got {alpha}"))?;
    let beta = s.f64_or("rcp_beta", 1.0, "", "RCP: gain on the queue (the RCP papers: 1)")?;
    s.ensure((0.0..=10.0).contains(&beta), "rcp_beta", format!("must be in [0, 10], got {beta}"))?;
    let rtt = s.f64_opt(
        "rcp_rtt_us",
        "us",
        "RCP: d0, the flows' RTT in the rate update; unset = the base RTT from host 0 to the last host",
    )?;
    let interval =
        s.f64_opt("rcp_interval_us", "us", "RCP: control interval T; unset = d0 (rcp.cc: min(d0, timeslot))")?;
    for (key, v) in [("rcp_rtt_us", rtt), ("rcp_interval_us", interval)] {
        if let Some(us) = v {
            s.ensure(us > 0.0 && us <= 1e6, key, format!("must be in (0, 1e6] us, got {us}"))?;
        }
    }
    let initial = s.f64_or(
        "rcp_initial_rate_fraction",
        1.0,
        "",
        "RCP: R at the start as a fraction of the port's rate (rcp.cc: init_rate_fact_)",
    )?;
    s.ensure(
        initial > 0.0 && initial <= 1.0,
        "rcp_initial_rate_fraction",
        format!("must be in (0, 1], got {initial}"),
    )?;
    Ok(on.then_some(RcpSwitch {
        alpha,
        beta,
        rtt: rtt.map(from_us),
        interval: interval.map(from_us),
        initial_rate_fraction: initial,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rcp(alpha: f64, beta: f64) -> Rcp {
        Rcp {
            cfg: RcpSwitch { alpha, beta, rtt: None, interval: None, initial_rate_fraction: 1.0 },
            d0: from_us(10.0),
            interval: from_us(10.0),
            min_rate_bps: 1e6,
            ports: Vec::new(),
            last_update: 0,
            next_update: 0,
            timer_pending: false,
            updates: 0,
            rng: Rng::seed_from(1),
        }
    }

    #[test]
    fn rate_update_follows_the_rcp_law() {
        let r = rcp(0.1, 1.0);
        let c = 10e9;
        const T: Time = 10_000_000;
        // Twice the capacity arrives (25 KB in 10 us = 20 Gb/s), no queue: R x (1 - 0.1).
        assert!((r.update_rate(5e9, c, T, 25_000.0, 0) - 4.5e9).abs() < 1.0);
        // Exactly C arrives and 12.5 KB wait (q / d0 = 10 Gb/s): R x (1 - 1).. floored at the minimum.
        assert_eq!(r.update_rate(5e9, c, T, 12_500.0, 12_500), 1e6);
        // Half the capacity arrives, no queue: R x 1.05, clamped at C.
        assert!((r.update_rate(4e9, c, T, 6_250.0, 0) - 4.2e9).abs() < 1.0);
        assert_eq!(r.update_rate(9.9e9, c, T, 6_250.0, 0), c);
        // At equilibrium (y = C, q = 0) R does not move.
        assert_eq!(r.update_rate(3.3e9, c, T, 12_500.0, 0), 3.3e9);
        // A longer interval weighs its spare capacity by dt / d0: 1 + 2 x 0.1 x 0.5.
        assert!((r.update_rate(4e9, c, 2 * T, 12_500.0, 0) - 4.4e9).abs() < 1.0);
    }

    #[test]
    fn header_rate_is_nonzero_kbps() {
        assert_eq!(rate_to_header(10e9), 10_000_000);
        assert_eq!(rate_to_header(0.0), 1);
        assert!(rate_to_header(1e20) < u32::MAX);
    }
}
