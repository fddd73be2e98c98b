//! Simulated time: integer picoseconds. A `u64` of picoseconds spans 213 days, far beyond any run.

/// Picoseconds since the start of the run.
pub type Time = u64;

pub const PS: Time = 1;
pub const NS: Time = 1_000;
pub const US: Time = 1_000_000;
pub const MS: Time = 1_000_000_000;
pub const SEC: Time = 1_000_000_000_000;

/// Converts microseconds (as written in specs) to picoseconds, rounding to the nearest picosecond.
pub fn from_us(us: f64) -> Time {
    debug_assert!(us >= 0.0 && us.is_finite());
    (us * 1e6).round() as Time
}

pub fn to_us(t: Time) -> f64 {
    t as f64 / 1e6
}

/// A link rate, stored as picoseconds per byte scaled by 2^16 so that serialization time is an
/// exact integer computation for every rate we use (1, 10, 25, 40, 100, 200, 400 Gb/s, ...).
///
/// Serialization of `b` bytes takes `ceil(b * ps_per_byte_x65536 / 65536)` picoseconds. For rates
/// that divide 8e12 bits/s evenly (all usual Ethernet rates) this is exact: 100 Gb/s = 80 ps/byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rate {
    bits_per_sec: u64,
    ps_per_byte_x65536: u64,
}

impl Rate {
    /// Panics on zero: callers validate specs first (rates must be > 0).
    pub const fn from_bps(bits_per_sec: u64) -> Rate {
        assert!(bits_per_sec > 0, "link rate must be positive");
        // 8 bits/byte * 1e12 ps/s * 65536 / rate, rounded to nearest.
        let num: u128 = 8u128 * 1_000_000_000_000u128 * 65536u128;
        let ps = (num + bits_per_sec as u128 / 2) / bits_per_sec as u128;
        Rate { bits_per_sec, ps_per_byte_x65536: ps as u64 }
    }

    pub fn from_gbps(gbps: f64) -> Rate {
        Rate::from_bps((gbps * 1e9).round() as u64)
    }

    pub fn bps(self) -> u64 {
        self.bits_per_sec
    }

    pub fn gbps(self) -> f64 {
        self.bits_per_sec as f64 / 1e9
    }

    /// Time to put `bytes` on the wire.
    #[inline]
    pub const fn tx_time(self, bytes: u32) -> Time {
        (bytes as u64 * self.ps_per_byte_x65536 + 65535) >> 16
    }

    /// Bytes this rate carries in `t` picoseconds (floor).
    pub fn bytes_in(self, t: Time) -> u64 {
        ((t as u128 * self.bits_per_sec as u128) / 8_000_000_000_000u128) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usual_rates_are_exact() {
        assert_eq!(Rate::from_gbps(100.0).tx_time(1500), 120_000);
        assert_eq!(Rate::from_gbps(10.0).tx_time(9000), 7_200_000);
        assert_eq!(Rate::from_gbps(400.0).tx_time(1538), 30_760);
        assert_eq!(Rate::from_gbps(25.0).tx_time(64), 20_480);
        assert_eq!(Rate::from_gbps(1.0).tx_time(1), 8_000);
    }

    #[test]
    fn bytes_in_inverts_tx_time() {
        let r = Rate::from_gbps(40.0);
        assert_eq!(r.bytes_in(r.tx_time(1_000_000)), 1_000_000);
    }

    #[test]
    fn us_conversion_rounds() {
        assert_eq!(from_us(0.1), 100_000);
        assert_eq!(from_us(1.25), 1_250_000);
    }
}
