//! Queue disciplines of an egress port, composable: strict-priority classes, an admission limit
//! (none, bytes or packets, shared by the classes), and ECN marking on arrival (none, a step
//! threshold K, or RED-style linear marking between Kmin and Kmax on the instantaneous queue).
//!
//! Occupancy counts the packets waiting in the port's queues, not the one being serialized.
//! Marking compares the occupancy seen by the arriving packet (before it joins) with the
//! threshold, as in the DCTCP paper ("queue occupancy greater than K upon its arrival").

use crate::engine::rng::Rng;
use crate::scenario::reader::{Section, SpecResult};

pub const MAX_PRIORITIES: u8 = 8;

/// A threshold measured either in bytes or in packets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Amount {
    Bytes(u64),
    Packets(u64),
}

impl Amount {
    #[inline]
    fn of(self, bytes: u64, packets: u64) -> u64 {
        match self {
            Amount::Bytes(_) => bytes,
            Amount::Packets(_) => packets,
        }
    }

    #[inline]
    fn value(self) -> u64 {
        match self {
            Amount::Bytes(v) | Amount::Packets(v) => v,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ecn {
    None,
    /// Mark when occupancy > K.
    Step(Amount),
    /// Mark with probability 0 at or below min, rising linearly to `pmax` at max, 1 above max.
    Red { min: Amount, max: Amount, pmax: f64 },
}

#[derive(Clone, Debug, PartialEq)]
pub struct QueueConfig {
    /// Strict-priority classes, 1..=8; a packet's `prio` picks its class (clamped to the lowest).
    pub priorities: u8,
    /// Admission limit on the total occupancy; `None` is an infinite buffer.
    pub limit: Option<Amount>,
    pub ecn: Ecn,
}

impl QueueConfig {
    pub fn infinite() -> QueueConfig {
        QueueConfig { priorities: 1, limit: None, ecn: Ecn::None }
    }

    /// Would a packet of `size` bytes overflow the limit?
    #[inline]
    pub fn overflows(&self, bytes: u64, packets: u64, size: u32) -> bool {
        match self.limit {
            None => false,
            Some(Amount::Bytes(l)) => bytes + size as u64 > l,
            Some(Amount::Packets(l)) => packets + 1 > l,
        }
    }

    /// Should an ECN-capable packet arriving to this occupancy be marked?
    #[inline]
    pub fn should_mark(&self, bytes: u64, packets: u64, rng: &mut Rng) -> bool {
        match self.ecn {
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

    /// Reads a queue table. `base` supplies the defaults (for override tables).
    pub fn read(s: &mut Section, base: &QueueConfig) -> SpecResult<QueueConfig> {
        let priorities = s.u64_or("priorities", base.priorities as u64, "classes",
            "strict-priority classes per port (1-8); a packet's priority 0 is served first")?;
        s.ensure((1..=MAX_PRIORITIES as u64).contains(&priorities), "priorities", "must be between 1 and 8")?;

        let limit = read_amount(s, "limit", "admission limit (drop-tail); unset = infinite buffer")?;
        let limit = limit.or(base.limit);
        if let Some(l) = limit {
            s.ensure(l.value() > 0, "limit_bytes", "a zero-size buffer cannot hold any packet")?;
        }

        let ecn_kind = match base.ecn {
            Ecn::None => "none",
            Ecn::Step(_) => "step",
            Ecn::Red { .. } => "red",
        };
        let kind = s.choice_or("ecn", &["none", "step", "red"], ecn_kind,
            "ECN marking on arrival: none, step threshold K, or RED-style linear marking")?;
        let k = read_amount(s, "ecn_k", "step marking threshold K: mark when occupancy on arrival > K")?;
        let rmin = read_amount(s, "red_min", "RED: no marking at or below this occupancy")?;
        let rmax = read_amount(s, "red_max", "RED: mark everything above this occupancy")?;
        let pmax = s.f64_or("red_pmax", match base.ecn { Ecn::Red { pmax, .. } => pmax, _ => 1.0 }, "probability",
            "RED: marking probability at red_max")?;
        let ecn = match kind.as_str() {
            "none" => {
                s.ensure(k.is_none() && rmin.is_none() && rmax.is_none(), "ecn",
                    "ECN thresholds are set but ecn = \"none\"; set ecn = \"step\" or \"red\"")?;
                Ecn::None
            }
            "step" => {
                let k = k.or(match base.ecn { Ecn::Step(k) => Some(k), _ => None });
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
                    _ => return Err(s.err("red_min_packets", "ecn = \"red\" needs red_min_* and red_max_* (both bytes or both packets)")),
                };
                s.ensure(std::mem::discriminant(&min) == std::mem::discriminant(&max), "red_max_packets",
                    "red_min and red_max must use the same unit (both _bytes or both _packets)")?;
                s.ensure(min.value() < max.value(), "red_max_packets", "red_max must be greater than red_min")?;
                s.ensure((0.0..=1.0).contains(&pmax), "red_pmax", "must be a probability in [0, 1]")?;
                Ecn::Red { min, max, pmax }
            }
        };
        Ok(QueueConfig { priorities: priorities as u8, limit, ecn })
    }
}

/// Reads `<stem>_bytes` or `<stem>_packets` (at most one of them).
fn read_amount(s: &mut Section, stem: &str, doc: &'static str) -> SpecResult<Option<Amount>> {
    let kb = format!("{stem}_bytes");
    let kp = format!("{stem}_packets");
    let b = s.u64_opt(&kb, "bytes", doc)?;
    let p = s.u64_opt(&kp, "packets", doc)?;
    match (b, p) {
        (Some(_), Some(_)) => Err(s.err(&kp, format!("set either {kb} or {kp}, not both"))),
        (Some(v), None) => Ok(Some(Amount::Bytes(v))),
        (None, Some(v)) => Ok(Some(Amount::Packets(v))),
        (None, None) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_marks_strictly_above_k() {
        let q = QueueConfig { priorities: 1, limit: None, ecn: Ecn::Step(Amount::Packets(2)) };
        let mut r = Rng::seed_from(1);
        assert!(!q.should_mark(0, 2, &mut r));
        assert!(q.should_mark(0, 3, &mut r));
    }

    #[test]
    fn red_probability_is_linear() {
        let q = QueueConfig { priorities: 1, limit: None,
            ecn: Ecn::Red { min: Amount::Bytes(1000), max: Amount::Bytes(3000), pmax: 0.5 } };
        let mut r = Rng::seed_from(1);
        let n = 100_000;
        let marked = (0..n).filter(|_| q.should_mark(2000, 0, &mut r)).count();
        assert!((marked as f64 / n as f64 - 0.25).abs() < 0.01);
        assert!(!q.should_mark(1000, 0, &mut r));
        assert!(q.should_mark(3001, 0, &mut r));
    }

    #[test]
    fn limits() {
        let q = QueueConfig { priorities: 1, limit: Some(Amount::Bytes(3000)), ecn: Ecn::None };
        assert!(!q.overflows(1500, 1, 1500));
        assert!(q.overflows(1501, 1, 1500));
        let q = QueueConfig { priorities: 1, limit: Some(Amount::Packets(2)), ecn: Ecn::None };
        assert!(!q.overflows(0, 1, 9000));
        assert!(q.overflows(0, 2, 64));
    }
}
