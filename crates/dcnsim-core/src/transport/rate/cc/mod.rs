//! Rate controllers of the RDMA family, each a [`super::RateControl`] written after its paper and
//! the HPCC authors' ns-3 simulator (`alibaba-edu/High-Precision-Congestion-Control`,
//! `simulation/src/point-to-point/model/rdma-hw.cc`), which runs all four side by side:
//! [`dcqcn`] (CC_MODE 1), [`timely`] (7), [`hpcc`] (3), [`dctcp`] (8). The protocols that register
//! them, with their keys, are `transport/{dcqcn,timely,hpcc,dctcp_rate}.rs`.
//!
//! Rates are integers in bits per second, as the reference's `DataRate`: a product or quotient
//! with a real number is truncated ([`scaled`], [`divided`]), so the arithmetic of every update
//! matches the reference's step by step. The sender's [`Rate`] is derived once per change.

pub mod dcqcn;
pub mod dctcp;
pub mod hpcc;
pub mod rcp;
pub mod timely;

use crate::spec_reader::{Section, SpecResult};
use crate::time::Rate;

/// `bps x c`, truncated (ns-3 `DataRate * double`).
#[inline]
pub fn scaled(bps: u64, c: f64) -> u64 {
    (bps as f64 * c) as u64
}

/// `bps / c`, truncated (ns-3 `DataRate / double`).
#[inline]
pub fn divided(bps: u64, c: f64) -> u64 {
    (bps as f64 / c) as u64
}

/// A QP's sending rate: the integer the control law works on and the sender's [`Rate`] for it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QpRate {
    bps: u64,
    rate: Rate,
}

impl QpRate {
    pub fn new(bps: u64) -> QpRate {
        let bps = bps.max(1);
        QpRate { bps, rate: Rate::from_bps(bps) }
    }

    #[inline]
    pub fn bps(&self) -> u64 {
        self.bps
    }

    #[inline]
    pub fn rate(&self) -> Rate {
        self.rate
    }

    #[inline]
    pub fn set(&mut self, bps: u64) {
        if bps != self.bps {
            *self = QpRate::new(bps);
        }
    }
}

/// A rate increment given as a key in Gb/s, or unset: the reference's value for a NIC of
/// `line_bps`, `line_bps / per_line` (run.py scales its increments with the NIC rate).
pub fn increment_bps(key: Option<f64>, line_bps: u64, per_line: u64) -> u64 {
    key.map_or(line_bps / per_line, gbps_to_bps)
}

pub fn gbps_to_bps(gbps: f64) -> u64 {
    (gbps * 1e9).round() as u64
}

/// Reads an optional rate in Gb/s (an increment), positive and at most 10 Tb/s.
pub fn rate_opt(s: &mut Section, key: &str, doc: &'static str) -> SpecResult<Option<f64>> {
    let v = s.f64_opt(key, "Gb/s", doc)?;
    if let Some(g) = v {
        s.ensure(g > 0.0 && g <= 1e4, key, format!("must be in (0, 10000] Gb/s, got {g}"))?;
    }
    Ok(v)
}

/// Reads `min_rate_gbps` (every controller here clamps its rate at it).
pub fn min_rate(s: &mut Section) -> SpecResult<u64> {
    let g = s.f64_or(
        "min_rate_gbps",
        1.0,
        "Gb/s",
        "floor of the sending rate (the HPCC reference's run.py: MIN_RATE \
         1000 Mb/s; its config.txt and code default: 100 Mb/s)",
    )?;
    s.ensure(g > 0.0 && g <= 1e4, "min_rate_gbps", format!("must be in (0, 10000] Gb/s, got {g}"))?;
    Ok(gbps_to_bps(g))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_truncates_as_the_reference() {
        assert_eq!(scaled(100_000_000_001, 0.5), 50_000_000_000);
        assert_eq!(divided(10, 3.0), 3);
        assert_eq!(increment_bps(None, 100_000_000_000, 5000), 20_000_000);
        assert_eq!(increment_bps(Some(0.05), 100_000_000_000, 5000), 50_000_000);
        let mut r = QpRate::new(0);
        assert_eq!(r.bps(), 1, "a rate is never zero");
        r.set(25_000_000_000);
        assert_eq!(r.rate(), Rate::from_gbps(25.0));
    }
}
