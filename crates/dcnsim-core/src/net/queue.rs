//! Queue disciplines of an egress port, composable: strict-priority classes, an admission limit
//! (none, bytes or packets, shared by the classes), and ECN marking on arrival (none, a step
//! threshold K, or RED-style linear marking between Kmin and Kmax on the instantaneous queue).
//!
//! Occupancy counts the packets waiting in the port's queues, not the one being serialized.
//! Marking compares the occupancy seen by the arriving packet (before it joins) with the
//! threshold, as in the DCTCP paper ("queue occupancy greater than K upon its arrival").

use crate::engine::rng::Rng;
use crate::scenario::reader::{Section, SpecResult};

pub use crate::limits::MAX_PRIORITIES;

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
    Red {
        min: Amount,
        max: Amount,
        pmax: f64,
    },
}

/// NDP-style payload trimming (Handley et al., SIGCOMM'17, section 3.1; details as in htsim's
/// CompositeQueue). Data packets queue in their class, up to the data limit, which counts the data
/// packet being serialized. A data packet arriving to a full data queue is trimmed to a header with
/// probability 1/2; otherwise the packet at the tail of the data queue is trimmed and the arrival
/// admitted (breaking phase effects). Headers, and every non-data packet, go to class 0. When class
/// 0 is over its own limit the header is returned to its sender (once), or dropped.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trim {
    pub header_limit_bytes: u64,
    pub bounce: bool,
    /// Wire size of a trimmed header.
    pub header_bytes: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Scheduling {
    /// Always the highest non-empty class.
    Strict,
    /// Weighted round robin: class c sends up to weights[c] packets per turn.
    Wrr(Vec<u32>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct QueueConfig {
    /// Priority classes, 1..=8; a packet's `prio` picks its class (clamped to the lowest).
    pub priorities: u8,
    pub scheduling: Scheduling,
    /// With trimming, the limit of the data queue (not a drop threshold).
    pub trim: Option<Trim>,
    /// Admission limit on the total occupancy; `None` is an infinite buffer.
    pub limit: Option<Amount>,
    pub ecn: Ecn,
}

impl QueueConfig {
    pub fn infinite() -> QueueConfig {
        QueueConfig { priorities: 1, scheduling: Scheduling::Strict, trim: None, limit: None, ecn: Ecn::None }
    }

    /// Would a packet of `size` bytes overflow the limit, given the occupancy it would join?
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

    /// Reads a queue table. `base` supplies the defaults (for override tables); `mtu` and
    /// `header_bytes` (wire size of a control packet) size the trimming defaults.
    pub fn read(s: &mut Section, base: &QueueConfig, mtu: u32, header_bytes: u32) -> SpecResult<QueueConfig> {
        let priorities = s.u64_or(
            "priorities",
            base.priorities as u64,
            "classes",
            "strict-priority classes per port (1-8); a packet's priority 0 is served first",
        )?;
        s.ensure((1..=MAX_PRIORITIES as u64).contains(&priorities), "priorities", "must be between 1 and 8")?;

        let limit = read_limit(s, base, mtu)?;

        let ecn_kind = match base.ecn {
            Ecn::None => "none",
            Ecn::Step(_) => "step",
            Ecn::Red { .. } => "red",
        };
        let kind = s.choice_or(
            "ecn",
            &["none", "step", "red"],
            ecn_kind,
            "ECN marking on arrival: none, step threshold K, or RED-style linear marking",
        )?;
        let k = read_amount(s, "ecn_k", "step marking threshold K: mark when occupancy on arrival > K")?;
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
        let ecn = match kind.as_str() {
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
        let sched_default = match base.scheduling {
            Scheduling::Strict => "strict",
            Scheduling::Wrr(_) => "wrr",
        };
        let sched = s.choice_or(
            "scheduling",
            &["strict", "wrr"],
            sched_default,
            "how classes share the link: strict priority, or weighted round robin (wrr_weights)",
        )?;
        let base_weights: Vec<f64> = match &base.scheduling {
            Scheduling::Wrr(w) => w.iter().map(|&x| x as f64).collect(),
            _ => vec![],
        };
        let weights = s.f64_list_or(
            "wrr_weights",
            &base_weights,
            "packets",
            "wrr: packets each class may send per turn, one entry per class (NDP: [10, 1], headers:data)",
        )?;
        let scheduling = if sched == "wrr" {
            s.ensure(
                weights.len() == priorities as usize,
                "wrr_weights",
                format!("needs one weight per class ({priorities}), got {}", weights.len()),
            )?;
            s.ensure(
                weights.iter().all(|&w| w >= 1.0 && w.fract() == 0.0 && w <= 1e6),
                "wrr_weights",
                "weights must be whole numbers >= 1",
            )?;
            Scheduling::Wrr(weights.iter().map(|&w| w as u32).collect())
        } else {
            s.ensure(!s.has("wrr_weights") || s.is_describe(), "wrr_weights", "only used with scheduling = \"wrr\"")?;
            Scheduling::Strict
        };

        let trim = read_trim(s, base, limit, priorities, mtu, header_bytes)?;
        Ok(QueueConfig { priorities: priorities as u8, scheduling, trim, limit, ecn })
    }
}

/// The admission limit, this table's or `base`'s: a buffer must hold at least one full packet.
fn read_limit(s: &mut Section, base: &QueueConfig, mtu: u32) -> SpecResult<Option<Amount>> {
    let limit = read_amount(s, "limit", "admission limit (drop-tail); unset = infinite buffer")?;
    let limit = limit.or(base.limit);
    if let Some(l) = limit {
        s.ensure(l.value() > 0, "limit_bytes", "a zero-size buffer cannot hold any packet")?;
        // A packet is admitted if it fits beside what waits, so a buffer under one full packet
        // drops (or trims) every full packet, even at an idle port.
        if let Amount::Bytes(b) = l {
            s.ensure(
                b >= mtu as u64,
                "limit_bytes",
                format!(
                    "{b} bytes cannot hold one full packet (mtu_bytes = {mtu}): every data packet would be dropped"
                ),
            )?;
        }
    }
    Ok(limit)
}

/// NDP trimming (`trim`, `header_limit_bytes`, `bounce`): needs a data limit and a header class.
fn read_trim(
    s: &mut Section,
    base: &QueueConfig,
    limit: Option<Amount>,
    priorities: u64,
    mtu: u32,
    header_bytes: u32,
) -> SpecResult<Option<Trim>> {
    let trim_on = s.bool_or(
        "trim",
        base.trim.is_some(),
        "NDP payload trimming: a full data queue trims packets to headers instead of dropping them",
    )?;
    let hl = s.u64_opt(
        "header_limit_bytes",
        "bytes",
        "trim: limit of the header queue (class 0); default twice the data limit in bytes, as htsim",
    )?;
    let bounce = s.bool_or(
        "bounce",
        base.trim.is_none_or(|t| t.bounce),
        "trim: return a header to its sender when the header queue is full (else drop it)",
    )?;
    if trim_on {
        let Some(limit) = limit else {
            return Err(s.err("trim", "trimming needs a data queue limit: set limit_packets or limit_bytes"));
        };
        s.ensure(priorities >= 2, "priorities", "trimming needs at least 2 classes: headers in class 0, data below")?;
        let data_bytes = match limit {
            Amount::Bytes(b) => b,
            Amount::Packets(p) => p * mtu as u64,
        };
        let header_limit_bytes = hl.or(base.trim.map(|t| t.header_limit_bytes)).unwrap_or(2 * data_bytes);
        s.ensure(
            header_limit_bytes >= header_bytes as u64,
            "header_limit_bytes",
            format!(
                "{header_limit_bytes} bytes cannot hold one header ({header_bytes} bytes): every header would be lost"
            ),
        )?;
        Ok(Some(Trim { header_limit_bytes, bounce, header_bytes }))
    } else {
        s.ensure(hl.is_none() || s.is_describe(), "header_limit_bytes", "only used with trim = true")?;
        Ok(None)
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
        let q = QueueConfig { ecn: Ecn::Step(Amount::Packets(2)), ..QueueConfig::infinite() };
        let mut r = Rng::seed_from(1);
        assert!(!q.should_mark(0, 2, &mut r));
        assert!(q.should_mark(0, 3, &mut r));
    }

    #[test]
    fn red_probability_is_linear() {
        let q = QueueConfig {
            ecn: Ecn::Red { min: Amount::Bytes(1000), max: Amount::Bytes(3000), pmax: 0.5 },
            ..QueueConfig::infinite()
        };
        let mut r = Rng::seed_from(1);
        let n = 100_000;
        let marked = (0..n).filter(|_| q.should_mark(2000, 0, &mut r)).count();
        assert!((marked as f64 / n as f64 - 0.25).abs() < 0.01);
        assert!(!q.should_mark(1000, 0, &mut r));
        assert!(q.should_mark(3001, 0, &mut r));
    }

    #[test]
    fn limits() {
        let q = QueueConfig { limit: Some(Amount::Bytes(3000)), ..QueueConfig::infinite() };
        assert!(!q.overflows(1500, 1, 1500));
        assert!(q.overflows(1501, 1, 1500));
        let q = QueueConfig { limit: Some(Amount::Packets(2)), ..QueueConfig::infinite() };
        assert!(!q.overflows(0, 1, 9000));
        assert!(q.overflows(0, 2, 64));
    }
}
