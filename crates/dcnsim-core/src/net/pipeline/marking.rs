//! Marking stage: ECN on enqueue or on dequeue.
//!
//! On enqueue (the default, as in the DCTCP paper: "queue occupancy greater than K upon its
//! arrival"), an arriving ECN-capable packet is compared with the port's occupancy before it joins.
//! On dequeue (HPCC's and DCQCN's ns-3 switches, `SwitchMmu::ShouldSendCN`), a departing packet is
//! compared with what its class queue still holds once it has left. Thresholds: a step K, or
//! RED-style marking, linear from 0 at Kmin to Pmax at Kmax and certain above Kmax, on the
//! instantaneous queue (no averaging).

use crate::engine::rng::Rng;
use crate::net::network::Network;
use crate::net::packet::{flags, Packet, PacketId};
use crate::net::port::{Port, PortId};
use crate::net::queue::{read_amount, Amount, QueueConfig};
use crate::record::trace::TraceEvent;
use crate::spec_reader::{Section, SpecResult};
use crate::time::Time;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ecn {
    None,
    /// Mark when occupancy > K.
    Step(Amount),
    /// Mark with probability 0 at or below min, rising linearly to `pmax` at max, 1 above max.
    Red {
        min: Amount,
        max: Amount,
        pmax: f64,
    },
}

/// Where the marking decision is taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnAt {
    /// On the occupancy of the whole port seen by the arriving packet.
    Enqueue,
    /// On the bytes (or packets) left in the departing packet's class.
    Dequeue,
}

impl Ecn {
    /// Should an ECN-capable packet be marked at this occupancy?
    #[inline]
    pub fn should_mark(&self, bytes: u64, packets: u64, rng: &mut Rng) -> bool {
        match *self {
            Ecn::None => false,
            Ecn::Step(k) => k.of(bytes, packets) > k.value(),
            Ecn::Red { min, max, pmax } => {
                let q = min.of(bytes, packets);
                if q <= min.value() {
                    false
                } else if q > max.value() {
                    true
                } else {
                    let p = pmax * (q - min.value()) as f64 / (max.value() - min.value()) as f64;
                    rng.bernoulli(p)
                }
            }
        }
    }
}

impl QueueConfig {
    /// Should an ECN-capable packet seeing this occupancy be marked?
    #[inline]
    pub fn should_mark(&self, bytes: u64, packets: u64, rng: &mut Rng) -> bool {
        self.ecn.should_mark(bytes, packets, rng)
    }
}

/// Sets CE on an ECN-capable packet arriving at port `p` if `cfg` marks on enqueue and the port's
/// occupancy calls for it (the caller traces). Returns whether it marked. Works on references the
/// admission stage already holds: this is on every packet's path.
#[inline(always)]
pub(crate) fn mark_on_enqueue(cfg: &QueueConfig, p: &mut Port, packet: &mut Packet, rng: &mut Rng) -> bool {
    if packet.has(flags::ECT) && cfg.ecn_at == EcnAt::Enqueue && cfg.should_mark(p.bytes, p.packets, rng) {
        if !packet.has(flags::CE) {
            p.counters.marks += 1;
        }
        packet.flags |= flags::CE;
        return true;
    }
    false
}

impl Network {
    /// Marks an ECN-capable packet leaving `port` from `class` on what that class still holds.
    pub(crate) fn mark_on_dequeue(&mut self, port: PortId, pkt: PacketId, class: usize, now: Time) {
        let p = &mut self.ports[port as usize];
        let cfg = &self.cfgs[p.cfg as usize];
        let packet = self.pool.get_mut(pkt);
        let (bytes, packets) = (p.class_bytes(class), p.class_len(class) as u64);
        if packet.has(flags::ECT) && cfg.should_mark(bytes, packets, &mut self.rng) {
            if !packet.has(flags::CE) {
                p.counters.marks += 1;
            }
            packet.flags |= flags::CE;
            if self.tracer.is_some() {
                self.trace_in_class(now, pkt, port, TraceEvent::Mark, class);
            }
        }
    }
}

/// Reads the marking keys of a queue table; `base` supplies the defaults.
pub fn read(s: &mut Section, base: &QueueConfig) -> SpecResult<(Ecn, EcnAt)> {
    let ecn_kind = match base.ecn {
        Ecn::None => "none",
        Ecn::Step(_) => "step",
        Ecn::Red { .. } => "red",
    };
    let kind = s.choice_or(
        "ecn",
        &["none", "step", "red"],
        ecn_kind,
        "ECN marking: none, step threshold K, or RED-style linear marking",
    )?;
    let at = s.choice_or(
        "ecn_at",
        &["enqueue", "dequeue"],
        match base.ecn_at {
            EcnAt::Enqueue => "enqueue",
            EcnAt::Dequeue => "dequeue",
        },
        "enqueue: on the port's occupancy the arriving packet sees (DCTCP); dequeue: on what the departing packet's class still holds (HPCC/DCQCN ns-3 switches)",
    )?;
    let at = if at == "dequeue" { EcnAt::Dequeue } else { EcnAt::Enqueue };
    Ok((read_thresholds(s, base, &kind)?, at))
}

/// The thresholds of ECN marking `kind` (none, step, red), this table's or `base`'s.
fn read_thresholds(s: &mut Section, base: &QueueConfig, kind: &str) -> SpecResult<Ecn> {
    let k = read_amount(s, "ecn_k", "step marking threshold K: mark when occupancy > K")?;
    let rmin = read_amount(s, "red_min", "RED: no marking at or below this occupancy")?;
    let rmax = read_amount(s, "red_max", "RED: mark everything above this occupancy")?;
    let pmax = s.f64_or(
        "red_pmax",
        match base.ecn {
            Ecn::Red { pmax, .. } => pmax,
            _ => 1.0,
        },
        "probability",
        "RED: marking probability at red_max",
    )?;
    let ecn = match kind {
        "none" => {
            s.ensure(
                k.is_none() && rmin.is_none() && rmax.is_none(),
                "ecn",
                "ECN thresholds are set but ecn = \"none\"; set ecn = \"step\" or \"red\"",
            )?;
            Ecn::None
        }
        "step" => {
            let k = k.or(match base.ecn {
                Ecn::Step(k) => Some(k),
                _ => None,
            });
            match k {
                Some(k) => Ecn::Step(k),
                None if s.is_describe() => Ecn::None,
                None => return Err(s.err("ecn_k_packets", "ecn = \"step\" needs ecn_k_packets or ecn_k_bytes")),
            }
        }
        _ => {
            let (min, max) = match (rmin, rmax, base.ecn) {
                (Some(a), Some(b), _) => (a, b),
                (None, None, Ecn::Red { min, max, .. }) => (min, max),
                _ if s.is_describe() => (Amount::Packets(0), Amount::Packets(1)),
                _ => {
                    return Err(s.err(
                        "red_min_packets",
                        "ecn = \"red\" needs red_min_* and red_max_* (both bytes or both packets)",
                    ))
                }
            };
            s.ensure(
                std::mem::discriminant(&min) == std::mem::discriminant(&max),
                "red_max_packets",
                "red_min and red_max must use the same unit (both _bytes or both _packets)",
            )?;
            s.ensure(min.value() < max.value(), "red_max_packets", "red_max must be greater than red_min")?;
            s.ensure((0.0..=1.0).contains(&pmax), "red_pmax", "must be a probability in [0, 1]")?;
            Ecn::Red { min, max, pmax }
        }
    };
    Ok(ecn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_marks_strictly_above_k() {
        let e = Ecn::Step(Amount::Packets(2));
        let mut r = Rng::seed_from(1);
        assert!(!e.should_mark(0, 2, &mut r));
        assert!(e.should_mark(0, 3, &mut r));
    }

    #[test]
    fn red_probability_is_linear() {
        let e = Ecn::Red { min: Amount::Bytes(1000), max: Amount::Bytes(3000), pmax: 0.5 };
        let mut r = Rng::seed_from(1);
        let n = 100_000;
        let marked = (0..n).filter(|_| e.should_mark(2000, 0, &mut r)).count();
        assert!((marked as f64 / n as f64 - 0.25).abs() < 0.01);
        assert!(!e.should_mark(1000, 0, &mut r));
        assert!(e.should_mark(3001, 0, &mut r));
    }
}
