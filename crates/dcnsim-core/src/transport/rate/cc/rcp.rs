//! RCP's end-host rate (Dukkipati and McKeown, CCR 2006): the sender transmits at the rate the
//! routers last stamped on its data, echoed by the receiver. Before the first echo it knows no
//! rate: its first data packet doubles as RCP's SYN (one packet, then nothing until its ACK brings
//! the path's rate, one RTT later). The router side is `net::pipeline::stages::rcp`; the protocol and its
//! keys are in `transport/rcp.rs`.

use super::QpRate;
use crate::time::{Rate, Time};
use crate::transport::rate::{RateAck, RateControl};

#[derive(Clone, Debug)]
pub struct Rcp {
    line_bps: u64,
    /// One packet's payload: the window before the first echo.
    mss_bytes: u64,
    rate: QpRate,
    /// A rate came back (the SYN's round trip is over).
    learned: bool,
}

impl Rcp {
    pub fn new(line_bps: u64, mss_bytes: u64) -> Rcp {
        debug_assert!(line_bps > 0 && mss_bytes > 0);
        Rcp { line_bps, mss_bytes, rate: QpRate::new(line_bps), learned: false }
    }

    pub fn learned(&self) -> bool {
        self.learned
    }

    pub fn rate_bps(&self) -> u64 {
        self.rate.bps()
    }
}

impl RateControl for Rcp {
    fn on_ack(&mut self, ack: &RateAck<'_>) {
        if ack.rate_kbps == 0 {
            return; // no rate header (cannot happen for rcp's own ACKs)
        }
        // u32::MAX: no RCP port on the path lowered it; the NIC's rate is the limit.
        let bps = (ack.rate_kbps as u64).saturating_mul(1000).min(self.line_bps);
        self.rate.set(bps);
        self.learned = true;
    }
    fn rate(&self) -> Rate {
        self.rate.rate()
    }
    /// A start layer's rate holds until the next echo brings the routers' rate.
    fn set_rate(&mut self, _now: Time, bps: u64) {
        self.rate.set(bps.min(self.line_bps));
    }
    fn window_bytes(&self) -> Option<u64> {
        (!self.learned).then_some(self.mss_bytes)
    }
    fn state(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("rate_gbps", self.rate.bps() as f64 / 1e9));
    }
    /// The echoed rate is capped at line rate.
    fn check_invariants(&self) {
        assert!(self.rate.bps() <= self.line_bps, "rate {} over line rate {}", self.rate.bps(), self.line_bps);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(rate_kbps: u32) -> RateAck<'static> {
        RateAck {
            now: 0,
            nack: false,
            acked_bytes: 1000,
            ece: false,
            rtt_sample_ps: 0,
            acked_total_bytes: 0,
            sent_total_bytes: 0,
            int: &[],
            rate_kbps,
            aux: 0,
        }
    }

    #[test]
    fn one_packet_until_the_first_echo_then_the_echoed_rate() {
        let mut r = Rcp::new(10_000_000_000, 1000);
        assert_eq!(r.window_bytes(), Some(1000));
        r.on_ack(&ack(0));
        assert!(!r.learned(), "an ACK without a rate header teaches nothing");
        r.on_ack(&ack(3_333_333));
        assert_eq!((r.window_bytes(), r.rate_bps()), (None, 3_333_333_000));
        r.on_ack(&ack(u32::MAX));
        assert_eq!(r.rate_bps(), 10_000_000_000, "capped at the NIC's rate");
    }
}
