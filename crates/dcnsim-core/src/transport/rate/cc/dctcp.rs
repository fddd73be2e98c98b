//! DCTCP as a NIC rate controller (the HPCC authors' ns-3, CC_MODE 8: `rdma-hw.cc`,
//! `HandleAckDctcp`), after DCTCP's window law (Alizadeh et al., SIGCOMM 2010, section 3.1). The
//! protocol and its keys are in `transport/dctcp_rate.rs`.
//!
//! Per ACK (or NACK), with `seq` = its cumulative sequence and `snd_nxt` the sender's next byte:
//! - the ECN echoes are counted; when `seq` passes the sequence recorded at the last update (once
//!   per window of data): alpha <- (1 - g) alpha + g F, F = min(1, echoes / batch), where batch
//!   is the packets that were in flight at the last update plus one; the echo count restarts,
//!   and `snd_nxt` is recorded. The very first ACK only records (and keeps the echoes counted so
//!   far, as the reference does)
//! - CWR ends once `seq` passes the `snd_nxt` of the last cut
//! - an echo outside CWR: rate <- max(min, rate (1 - alpha / 2)), enter CWR
//! - once per window of data outside CWR: rate <- min(line, rate + AI)
//!
//! Window (the reference's VAR_WIN): W = BDP x rate / line rate (at least 1 byte).

use super::{scaled, QpRate};
use crate::time::Rate;
use crate::transport::rate::{RateAck, RateControl};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DctcpRateLaw {
    pub g: f64,
    pub initial_alpha: f64,
    pub ai_bps: u64,
    pub line_bps: u64,
    pub min_bps: u64,
    /// Payload bytes per full packet (the reference's MTU of 1000 payload bytes).
    pub mss_bytes: u64,
    /// W at line rate; `None` = no window.
    pub window_bytes: Option<u64>,
}

#[derive(Clone, Debug)]
pub struct DctcpRate {
    law: DctcpRateLaw,
    rate: QpRate,
    alpha: f64,
    /// The next alpha update waits for an ACK past this sequence; `None` before the first ACK.
    update_after: Option<u64>,
    echoes: u64,
    batch_packets: u64,
    /// In CWR until an ACK passes this.
    cwr_until: Option<u64>,
    cuts: u64,
}

impl DctcpRate {
    pub fn new(law: DctcpRateLaw) -> DctcpRate {
        DctcpRate {
            law,
            rate: QpRate::new(law.line_bps),
            alpha: law.initial_alpha,
            update_after: None,
            echoes: 0,
            batch_packets: 0,
            cwr_until: None,
            cuts: 0,
        }
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    pub fn rate_bps(&self) -> u64 {
        self.rate.bps()
    }

    pub fn cuts(&self) -> u64 {
        self.cuts
    }
}

impl RateControl for DctcpRate {
    fn on_ack(&mut self, ack: &RateAck<'_>) {
        let (seq, snd_nxt, mss) = (ack.acked_total_bytes, ack.sent_total_bytes, self.law.mss_bytes);
        self.echoes += ack.ece as u64;
        let mut new_batch = false;
        match self.update_after {
            None => {
                new_batch = true;
                self.update_after = Some(snd_nxt);
                self.batch_packets = snd_nxt / mss + 1;
            }
            Some(s) if seq > s => {
                new_batch = true;
                let f = (self.echoes as f64 / self.batch_packets as f64).min(1.0);
                self.alpha = (1.0 - self.law.g) * self.alpha + self.law.g * f;
                self.update_after = Some(snd_nxt);
                self.echoes = 0;
                self.batch_packets = (snd_nxt - seq) / mss + 1;
            }
            Some(_) => {}
        }
        if self.cwr_until.is_some_and(|h| seq > h) {
            self.cwr_until = None;
        }
        if ack.ece && self.cwr_until.is_none() {
            self.rate.set(scaled(self.rate.bps(), 1.0 - self.alpha / 2.0).max(self.law.min_bps));
            self.cwr_until = Some(snd_nxt);
            self.cuts += 1;
        }
        if self.cwr_until.is_none() && new_batch {
            self.rate.set((self.rate.bps() + self.law.ai_bps).min(self.law.line_bps));
        }
    }

    fn rate(&self) -> Rate {
        self.rate.rate()
    }

    fn set_rate(&mut self, _now: crate::time::Time, bps: u64) {
        self.rate.set(bps.clamp(self.law.min_bps, self.law.line_bps));
    }

    fn window_bytes(&self) -> Option<u64> {
        self.law.window_bytes.map(|w| ((w as u128 * self.rate.bps() as u128 / self.law.line_bps as u128) as u64).max(1))
    }

    fn state(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("rate_gbps", self.rate.bps() as f64 / 1e9));
        out.push(("alpha", self.alpha));
        if let Some(w) = self.window_bytes() {
            out.push(("window_bytes", w as f64));
        }
    }
    /// alpha is an EWMA of marked fractions; every update clamps the rate to [min, line].
    fn check_invariants(&self) {
        assert!((0.0..=1.0).contains(&self.alpha), "alpha {} outside [0, 1]", self.alpha);
        let (rate, l) = (self.rate.bps(), &self.law);
        assert!(rate <= l.line_bps && rate >= l.min_bps.min(l.line_bps), "rate {rate} b/s outside [min, line]");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: u64 = 100_000_000_000;
    const AI: u64 = 615_000_000;

    fn law() -> DctcpRateLaw {
        DctcpRateLaw {
            g: 1.0 / 16.0,
            initial_alpha: 1.0,
            ai_bps: AI,
            line_bps: LINE,
            min_bps: 1_000_000_000,
            mss_bytes: 1000,
            window_bytes: Some(200_000),
        }
    }

    fn ack(seq: u64, nxt: u64, ece: bool) -> RateAck<'static> {
        RateAck {
            now: 0,
            nack: false,
            acked_bytes: 1000,
            ece,
            rtt_sample_ps: 0,
            acked_total_bytes: seq,
            sent_total_bytes: nxt,
            int: &[],
            rate_kbps: 0,
            aux: 0,
        }
    }

    #[test]
    fn alpha_per_window_and_one_cut_per_window() {
        let mut d = DctcpRate::new(law());
        // First ACK, marked: recorded (batch = 10000 / 1000 + 1 = 11), and a cut by alpha / 2 = 1/2.
        d.on_ack(&ack(1000, 10_000, true));
        assert_eq!(d.alpha(), 1.0);
        assert_eq!(d.rate_bps(), LINE / 2);
        assert_eq!(d.window_bytes(), Some(100_000), "the window follows the rate");
        // More echoes in CWR (until an ACK passes 10000): no further cut, no increase.
        for seq in [2000, 5000, 10_000] {
            d.on_ack(&ack(seq, 20_000, true));
        }
        assert_eq!(d.rate_bps(), LINE / 2);
        // Past 10000: the window closes: F = min(1, 4 echoes / 11), CWR ends, and this ACK is
        // unmarked: additive increase.
        d.on_ack(&ack(11_000, 21_000, false));
        let a = (15.0 / 16.0) * 1.0 + (1.0 / 16.0) * (4.0 / 11.0);
        assert_eq!(d.alpha(), a);
        assert_eq!(d.rate_bps(), LINE / 2 + AI);
        assert_eq!(d.cuts(), 1);
        // The next window (batch = (21000 - 11000) / 1000 + 1 = 11) has no echo: alpha decays.
        d.on_ack(&ack(15_000, 30_000, false));
        assert_eq!(d.rate_bps(), LINE / 2 + AI, "one increase per window");
        d.on_ack(&ack(21_001, 31_000, false));
        assert_eq!(d.alpha(), (15.0 / 16.0) * a);
        assert_eq!(d.rate_bps(), LINE / 2 + 2 * AI);
        // An echo now cuts by the new alpha.
        d.on_ack(&ack(22_000, 31_000, true));
        assert_eq!(d.rate_bps(), ((LINE / 2 + 2 * AI) as f64 * (1.0 - (15.0 / 16.0) * a / 2.0)) as u64);
    }

    #[test]
    fn the_rate_stays_within_min_and_line() {
        let mut d = DctcpRate::new(law());
        let mut seq = 0;
        for _ in 0..200 {
            seq += 1000;
            d.on_ack(&ack(seq, seq + 1000, true));
        }
        assert_eq!(d.rate_bps(), 1_000_000_000);
        for _ in 0..1000 {
            seq += 1000;
            d.on_ack(&ack(seq, seq + 1000, false));
        }
        assert_eq!(d.rate_bps(), LINE);
        assert_eq!(d.window_bytes(), Some(200_000));
    }
}
