//! How a rate sender's queue pair starts (`fast_start`), a layer over any rate controller:
//! - `line_rate` (FS, the default): the controller's own start, at line rate;
//! - `slow_start` (SS, the PB-FS paper's lossy baseline): the QP starts at
//!   `slow_start_initial_rate_gbps` and adds, per ACK, the bytes it acknowledges per DC_RTT (the
//!   rate doubles every RTT, as TCP's window); the first congestion signal (ECN echo, NACK,
//!   timeout) or reaching line rate hands over: the controller continues from the rate reached;
//! - `pbfs`: PB-FS (D. Aaronson and R. Cohen, "PB-FS: Postcard-Based Fast Start", IFIP Networking
//!   2024, section III): line rate, PBT-triggering marks on the first RTT's packets (Figure 2), and
//!   the rate reduction of Algorithm 1 from the switches' CC-postcards (`net::pipeline::postcard`).
//!
//! PB-FS as modelled here:
//! - eligibility: a flow uses PB-FS when sending it at line rate takes at least tau
//!   (`pbfs_min_duration_us`, default DC_RTT / 2 as in the paper's runs), i.e. size >= T tau;
//! - marking: the Delta-th, 2 Delta-th, ... packets (PSNs Delta - 1, 2 Delta - 1, ...) carry the PBT
//!   mark on their first transmission, until the first ACK or CC-postcard arrives;
//! - Algorithm 1 per postcard p: I_PBT = Delta p.recentMarkedBytes / p.recentBytes x p.I_p (capped
//!   at I_p), I_nonPBT = I_p - I_PBT, I = max(p.T DC_RTT - p.Q^1 - I_nonPBT, I_min),
//!   c = I_PBT / (mu I), L[switch] = c; if c > 1 the proposed rate is MaxRate / c (MaxRate = the
//!   NIC's line rate), applied if no switch determines the rate yet, or this switch does, or c
//!   exceeds the determining switch's latest c; the controller takes the rate
//!   ([`super::RateControl::set_rate`]);
//! - the PBT interval ends with the first ACK after which the controller's rate differs from its
//!   rate before it ("the first ACK that updates the sender's transmission rate"); later
//!   postcards are ignored (and counted).
//!
//! Choices where the paper is silent or its text is lost (also in docs/protocols/pbfs.md):
//! I_min = 20% of the sender's BDP (`pbfs_min_available_bdp`, the paper's "network's maximum
//! BDP"; ours is the rate sender's `bdp_bytes`), mu = 0.95 (`pbfs_target_utilization`), DC_RTT =
//! the rate sender's base RTT (host 0 to the last host) unless `pbfs_dc_rtt_us`; a postcard whose
//! recentBytes is 0 counts all of I_p as PB-FS traffic; a retransmission is never marked.

use crate::net::pipeline::postcard::Postcard;
use crate::spec_reader::{Section, SpecResult};
use crate::time::{from_us, Rate, Time};
use crate::transport::SpecEnv;

/// The start mode and its keys.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FastStart {
    LineRate,
    SlowStart { initial_bps: u64 },
    Pbfs(PbfsKeys),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PbfsKeys {
    /// Delta: marking offset and distance, in packets.
    pub delta: u64,
    /// tau; `None`: DC_RTT / 2.
    pub min_duration: Option<Time>,
    /// `None`: the sender's base RTT.
    pub dc_rtt: Option<Time>,
    pub target_utilization: f64,
    pub min_available_bdp: f64,
}

/// Which start modes a sender offers (the window sender has its own slow start).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Modes {
    /// line_rate, slow_start, pbfs (the rate sender).
    Rate,
    /// line_rate, pbfs (the window sender).
    Window,
}

const RATE_DOC: &str = "how a flow starts: line_rate (the controller's own start), slow_start \
     (from slow_start_initial_rate_gbps, doubling per RTT until the first congestion signal), pbfs (PB-FS, \
     Aaronson and Cohen, IFIP Networking 2024: line rate, corrected by the switches' CC-postcards; needs \
     [switch] postcards = true)";
const WINDOW_DOC: &str = "how a flow starts: line_rate (the controller's own start, from its initial window), \
     pbfs (PB-FS, Aaronson and Cohen, IFIP Networking 2024: corrected by the switches' CC-postcards; needs \
     [switch] postcards = true; meant for initial windows of about one BDP)";
const PBFS_KEYS: [&str; 5] = [
    "pbfs_marking_distance_packets",
    "pbfs_min_duration_us",
    "pbfs_dc_rtt_us",
    "pbfs_target_utilization",
    "pbfs_min_available_bdp",
];

impl FastStart {
    /// `fast_start` and the keys of its modes; only the rate sender reads (and documents)
    /// `slow_start_initial_rate_gbps`.
    pub fn read(s: &mut Section, env: &SpecEnv, modes: Modes) -> SpecResult<FastStart> {
        let (choices, doc): (&[&str], _) = match modes {
            Modes::Rate => (&["line_rate", "slow_start", "pbfs"], RATE_DOC),
            Modes::Window => (&["line_rate", "pbfs"], WINDOW_DOC),
        };
        let mode = s.choice_or("fast_start", choices, "line_rate", doc).map_err(|mut e| {
            if modes == Modes::Window && e.message.starts_with("unknown value \"slow_start\"") {
                e.message = "slow_start is the rate sender's start mode; window protocols have their own \
                             slow_start key"
                    .into();
            }
            e
        })?;
        for k in PBFS_KEYS {
            s.ensure(mode == "pbfs" || s.is_describe() || !s.has(k), k, "only used with fast_start = \"pbfs\"")?;
        }
        let initial = if modes == Modes::Rate { Self::read_slow_start(s, &mode)? } else { 0 };
        let pbfs = Self::read_pbfs(s)?;
        s.ensure(
            mode != "pbfs" || env.postcards,
            "fast_start",
            "pbfs needs CC-postcards from the switches: set [switch] postcards = true",
        )?;
        Ok(match mode.as_str() {
            "slow_start" => FastStart::SlowStart { initial_bps: initial },
            "pbfs" => FastStart::Pbfs(pbfs),
            _ => FastStart::LineRate,
        })
    }

    /// `slow_start_initial_rate_gbps` (b/s), refused with another mode.
    fn read_slow_start(s: &mut Section, mode: &str) -> SpecResult<u64> {
        let key = "slow_start_initial_rate_gbps";
        s.ensure(
            mode == "slow_start" || s.is_describe() || !s.has(key),
            key,
            "only used with fast_start = \"slow_start\"",
        )?;
        let initial = s.f64_or(
            key,
            1.0,
            "Gb/s",
            "slow_start: the starting rate (the paper's \"minimum rate\"; our \
             controllers' min_rate_gbps default)",
        )?;
        s.ensure(initial > 0.0 && initial <= 1e4, key, "must be in (0, 10000] Gb/s")?;
        Ok((initial * 1e9).round() as u64)
    }

    fn read_pbfs(s: &mut Section) -> SpecResult<PbfsKeys> {
        let delta = s.u64_or(
            "pbfs_marking_distance_packets",
            6,
            "packets",
            "pbfs: Delta, every Delta-th packet of the first RTT is PBT-triggering, \
             from the Delta-th (paper: 6; match [switch] postcard_recent_packets)",
        )?;
        s.ensure((1..=10_000).contains(&delta), "pbfs_marking_distance_packets", "must be in [1, 10000]")?;
        let tau = s.f64_opt(
            "pbfs_min_duration_us",
            "us",
            "pbfs: tau, a flow uses PB-FS if it needs at least this long at line \
             rate; unset = DC_RTT / 2 (the paper's runs)",
        )?;
        let dc_rtt = s.f64_opt(
            "pbfs_dc_rtt_us",
            "us",
            "pbfs: DC_RTT of Algorithm 1 (BDP = T x DC_RTT); unset = the base RTT \
             from host 0 to the last host (as the switches' default)",
        )?;
        for (key, v) in [("pbfs_min_duration_us", tau), ("pbfs_dc_rtt_us", dc_rtt)] {
            if let Some(v) = v {
                s.ensure((0.0..=1e6).contains(&v), key, "must be in [0, 1e6] us")?;
            }
        }
        let mu = s.f64_or(
            "pbfs_target_utilization",
            0.95,
            "fraction",
            "pbfs: mu, the target utilization of Algorithm 1 (paper: 0.95)",
        )?;
        s.ensure(mu > 0.0 && mu <= 1.0, "pbfs_target_utilization", "must be in (0, 1]")?;
        let min_bdp = s.f64_or(
            "pbfs_min_available_bdp",
            0.2,
            "BDP",
            "pbfs: I_min, the least available bytes a postcard can leave PB-FS \
             flows, in BDPs of the sender (paper: 20% of the maximum BDP)",
        )?;
        s.ensure(min_bdp > 0.0 && min_bdp <= 100.0, "pbfs_min_available_bdp", "must be in (0, 100]")?;
        Ok(PbfsKeys {
            delta,
            min_duration: tau.map(from_us),
            dc_rtt: dc_rtt.map(from_us),
            target_utilization: mu,
            min_available_bdp: min_bdp,
        })
    }
}

/// PB-FS resolved for a run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pbfs {
    pub delta: u64,
    pub tau: Time,
    pub dc_rtt: Time,
    pub mu: f64,
    pub min_available_bytes: f64,
}

impl Pbfs {
    pub fn new(k: &PbfsKeys, base_rtt: Time, bdp_bytes: u64) -> Pbfs {
        let dc_rtt = k.dc_rtt.unwrap_or(base_rtt);
        Pbfs {
            delta: k.delta,
            tau: k.min_duration.unwrap_or(dc_rtt / 2),
            dc_rtt,
            mu: k.target_utilization,
            min_available_bytes: k.min_available_bdp * bdp_bytes as f64,
        }
    }

    /// Whether a flow of `size` bytes needs at least tau at `line` (the paper's size >= T tau).
    pub fn eligible(&self, size: u64, line: Rate) -> bool {
        size >= line.bytes_in(self.tau)
    }

    /// Algorithm 1, lines 4-8: the reduction factor c of one postcard.
    pub fn factor(&self, p: &Postcard) -> f64 {
        let ip = p.ip_bytes as f64;
        let share = if p.recent_bytes == 0 {
            1.0
        } else {
            (self.delta as f64 * p.recent_marked_bytes as f64 / p.recent_bytes as f64).min(1.0)
        };
        let i_pbt = share * ip;
        let i_non = ip - i_pbt;
        let bdp = p.rate_bps() as f64 * self.dc_rtt as f64 / 8e12;
        let available = (bdp - p.q1_bytes as f64 - i_non).max(self.min_available_bytes);
        i_pbt / (self.mu * available)
    }
}

/// One QP's PB-FS state (Algorithm 1's variables).
#[derive(Clone, Debug, Default)]
pub struct PbfsFlow {
    /// Still marking (no ACK or postcard yet).
    pub marking: bool,
    /// The PBT interval ended: postcards are ignored.
    pub ignore: bool,
    /// ID: the switch whose postcard set the current rate.
    determining: Option<u32>,
    /// L: the latest c per switch.
    latest: Vec<(u32, f64)>,
    pub postcards: u32,
}

impl PbfsFlow {
    pub fn new() -> PbfsFlow {
        PbfsFlow { marking: true, ..Default::default() }
    }

    fn latest_of(&self, switch: u32) -> Option<f64> {
        self.latest.iter().find(|e| e.0 == switch).map(|e| e.1)
    }

    /// Algorithm 1 for a postcard with factor `c` from `switch`: the rate to apply, if any.
    pub fn on_postcard(&mut self, switch: u32, c: f64, max_bps: u64) -> Option<u64> {
        self.marking = false;
        self.postcards += 1;
        match self.latest.iter_mut().find(|e| e.0 == switch) {
            Some(e) => e.1 = c,
            None => self.latest.push((switch, c)),
        }
        if c <= 1.0 {
            return None;
        }
        let take = match self.determining {
            None => true,
            Some(id) if id == switch => true,
            Some(id) => self.latest_of(id).is_none_or(|l| c > l),
        };
        if !take {
            return None;
        }
        self.determining = Some(switch);
        Some(((max_bps as f64 / c) as u64).max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card(switch: u32, ip: u64, q1: u64, gbps: u32, recent: u32, marked: u32) -> Postcard {
        Postcard {
            switch,
            distance: 1,
            ip_bytes: ip,
            q1_bytes: q1,
            rate_mbps: gbps * 1000,
            recent_bytes: recent,
            recent_marked_bytes: marked,
        }
    }

    fn pbfs() -> Pbfs {
        // DC_RTT 24 us: BDP at 25 Gb/s = 75000 bytes; I_min = 20% of 75000.
        Pbfs { delta: 6, tau: 12_000_000, dc_rtt: 24_000_000, mu: 0.95, min_available_bytes: 15_000.0 }
    }

    #[test]
    fn factor_follows_algorithm_one() {
        let p = pbfs();
        // All PB-FS traffic (one marked packet in six): I_PBT = I_p = 150000, I = 75000 - 5000.
        let c = p.factor(&card(1, 150_000, 5_000, 25, 6_000, 1_000));
        assert!((c - 150_000.0 / (0.95 * 70_000.0)).abs() < 1e-9);
        // Half the recent bytes from non-PB-FS flows: I_PBT = 75000, I_nonPBT = 75000, I = I_min.
        let c = p.factor(&card(1, 150_000, 5_000, 25, 12_000, 1_000));
        assert!((c - 75_000.0 / (0.95 * 15_000.0)).abs() < 1e-9);
    }

    #[test]
    fn the_most_congested_switch_determines_the_rate() {
        let mut f = PbfsFlow::new();
        let line = 25_000_000_000;
        assert_eq!(f.on_postcard(7, 2.0, line), Some(line / 2));
        assert!(!f.marking, "a postcard stops marking");
        // Another switch, less congested: no change; more congested: it takes over.
        assert_eq!(f.on_postcard(9, 1.5, line), None);
        assert_eq!(f.on_postcard(9, 4.0, line), Some(line / 4));
        // The first switch again, below switch 9's latest: ignored; switch 9 itself may raise the rate.
        assert_eq!(f.on_postcard(7, 3.0, line), None);
        assert_eq!(f.on_postcard(9, 2.5, line), Some(10_000_000_000));
        assert_eq!(f.on_postcard(9, 0.5, line), None, "c <= 1 changes nothing");
        assert_eq!(f.postcards, 6);
    }

    #[test]
    fn postcards_from_two_switches_give_the_papers_rate() {
        let (p, line) = (pbfs(), 25_000_000_000u64);
        let mut f = PbfsFlow::new();
        // The sender's ToR uplink (100 Gb/s, BDP 300000): a quarter of the recent bytes from PB-FS
        // flows, I_p = 400000: I_PBT = 100000, I_nonPBT = 300000, I = max(300000 - 300000, I_min).
        let up = card(3, 400_000, 0, 100, 24_000, 1_000);
        let c_up = 100_000.0 / (0.95 * 15_000.0);
        assert!((p.factor(&up) - c_up).abs() < 1e-9);
        // The receiver's downlink (25 Gb/s): all PB-FS, I = 75000 - 5000.
        let down = card(8, 150_000, 5_000, 25, 6_000, 1_000);
        let c_down = 150_000.0 / (0.95 * 70_000.0);
        assert!((p.factor(&down) - c_down).abs() < 1e-9);
        // Downlink first, then the more congested uplink takes over; the downlink again changes nothing:
        // the rate is MaxRate / max(c).
        assert_eq!(f.on_postcard(8, p.factor(&down), line), Some((line as f64 / c_down) as u64));
        assert_eq!(f.on_postcard(3, p.factor(&up), line), Some((line as f64 / c_up) as u64));
        assert_eq!(f.on_postcard(8, p.factor(&down), line), None);
    }

    #[test]
    fn eligibility_is_tau_at_line_rate() {
        let p = pbfs();
        let line = Rate::from_gbps(25.0);
        assert!(p.eligible(37_500, line), "12 us at 25 Gb/s = 37500 bytes");
        assert!(!p.eligible(37_499, line));
    }
}
