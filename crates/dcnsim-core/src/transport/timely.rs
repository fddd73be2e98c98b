//! TIMELY: RTT-gradient rate control for RDMA.
//!
//! Paper: R. Mittal et al., "TIMELY: RTT-based Congestion Control for the Datacenter", SIGCOMM
//! 2015 (section 4, Algorithm 1). Reference simulator: the HPCC authors' ns-3
//! (alibaba-edu/High-Precision-Congestion-Control, `rdma-hw.cc`, CC_MODE 7), whose `run.py --cc
//! timely` settings are the defaults here. The sender is [`super::rate`]; the control law is
//! [`super::rate::cc::timely`] (its header has the algorithm).
//!
//! Modelled: RTT from the send time echoed on every ACK (the reference stamps it when the NIC
//! builds the packet, which is when it starts on the wire, as here); rtt_diff EWMA, normalized
//! gradient, T_low/T_high bands, additive increase and hyper-active increase after `hai_after`
//! consecutive increases, multiplicative decrease by beta; one update per RTT (when the ACKed
//! sequence passes the `snd_nxt` of the previous update); start at line rate; minimum rate; no
//! window (the reference's HAS_WIN 0); no ECN. Go-back-N or IRN recovery: the rate sender's keys.
//!
//! Differences from the paper: the paper samples the RTT once per completion event of a 16-64 KB
//! segment and paces segments; the reference (and this) takes one sample per RTT from per-packet
//! ACKs and paces packets. The paper's HAI mode adds N x delta after N = 5 increases in a row;
//! the reference's HAI of 50 Mb/s per 10G is 5 x its AI, the same rule. The reference scales AI
//! and HAI with the NIC rate (10 and 50 Mb/s x rate / 10G); the paper's 10G parameters are the
//! reference's at 10G (delta 10 Mb/s, T_low 50 us, T_high 500 us, beta 0.8, alpha 0.875 and
//! minRTT 20 us as the reference's code defaults; not re-checked against the paper text here).
//!
//! Not modelled: NIC timestamp resolution and ACK turnaround delay at the receiver (the RTT is
//! exact), TIMELY's per-segment completion events, the reference's empty fast-react path (no
//! per-ACK reaction). The reference's ACK_HIGH_PRIO 1 (ACKs in a strict-priority class) is
//! `data_priority = 1` with two queue classes.

use super::rate::cc::timely::{Timely as TimelyControl, TimelyLaw};
use super::rate::cc::{increment_bps, min_rate, rate_opt};
use super::rate::{QpSetup, RateProtocol};
use crate::spec_reader::{Section, SpecResult};
use crate::time::{from_us, Time};

/// TIMELY as a [`RateProtocol`]; the registered transport is `RateTransport<Timely>`.
pub struct Timely;

#[derive(Clone, Debug, PartialEq)]
pub struct TimelyParams {
    pub alpha: f64,
    pub beta: f64,
    pub t_low: Time,
    pub t_high: Time,
    pub min_rtt: Time,
    pub ai_rate_gbps: Option<f64>,
    pub hai_rate_gbps: Option<f64>,
    pub hai_after: u32,
    pub min_bps: u64,
}

fn micros(s: &mut Section, key: &str, default: f64, doc: &'static str) -> SpecResult<f64> {
    let v = s.f64_or(key, default, "us", doc)?;
    s.ensure(v > 0.0 && v <= 1e6, key, format!("must be in (0, 1000000] us, got {v}"))?;
    Ok(v)
}

impl RateProtocol for Timely {
    const NAMES: &'static [(&'static str, &'static str)] = &[(
        "timely",
        "TIMELY (Mittal et al., SIGCOMM'15): RTT-gradient rate control, as the HPCC authors' ns-3 runs it",
    )];
    const ECN: bool = false;
    type Control = TimelyControl;
    type Params = TimelyParams;

    fn read_params(s: &mut Section) -> SpecResult<TimelyParams> {
        let alpha =
            s.f64_or("ewma_alpha", 0.875, "", "[timely] EWMA weight of the newest RTT difference (reference: 0.875)")?;
        s.ensure(alpha > 0.0 && alpha <= 1.0, "ewma_alpha", format!("must be in (0, 1], got {alpha}"))?;
        let beta = s.f64_or("beta", 0.8, "", "[timely] multiplicative decrease factor (reference and paper: 0.8)")?;
        s.ensure(beta > 0.0 && beta <= 1.0, "beta", format!("must be in (0, 1], got {beta}"))?;
        let t_low = micros(s, "t_low_us", 50.0, "[timely] below this RTT the rate always increases (reference: 50)")?;
        let t_high = micros(
            s,
            "t_high_us",
            500.0,
            "[timely] above this RTT the rate decreases by beta (1 - T_high / rtt) (reference: 500)",
        )?;
        s.ensure(t_low < t_high, "t_high_us", format!("must be above t_low_us ({t_low})"))?;
        let min_rtt = micros(s, "min_rtt_us", 20.0, "[timely] the gradient's normalizer (reference: 20)")?;
        let ai = rate_opt(
            s,
            "ai_rate_gbps",
            "[timely] additive increase per update (delta); unset = 10 Mb/s x NIC rate / 10 Gb/s (reference run.py)",
        )?;
        let hai = rate_opt(
            s,
            "hai_rate_gbps",
            "[timely] increase per update after hai_after increases in a row; unset = 50 Mb/s x NIC rate / 10 Gb/s \
             (reference run.py: 5 x delta, as the paper's N delta)",
        )?;
        let hai_after = s.u64_or(
            "hai_after_increases",
            5,
            "updates",
            "[timely] consecutive increases before hyper-active increase (paper and reference: N = 5)",
        )?;
        s.ensure(hai_after <= 1_000_000, "hai_after_increases", "must be at most 1000000")?;
        let min_bps = min_rate(s)?;
        Ok(TimelyParams {
            alpha,
            beta,
            t_low: from_us(t_low),
            t_high: from_us(t_high),
            min_rtt: from_us(min_rtt),
            ai_rate_gbps: ai,
            hai_rate_gbps: hai,
            hai_after: hai_after as u32,
            min_bps,
        })
    }

    fn control(p: &TimelyParams, qp: &QpSetup) -> TimelyControl {
        let line = qp.line_rate.bps();
        TimelyControl::new(TimelyLaw {
            alpha: p.alpha,
            beta: p.beta,
            t_low: p.t_low,
            t_high: p.t_high,
            min_rtt: p.min_rtt,
            ai_bps: increment_bps(p.ai_rate_gbps, line, 1000),
            hai_bps: increment_bps(p.hai_rate_gbps, line, 200),
            hai_after: p.hai_after,
            line_bps: line,
            min_bps: p.min_bps.min(line),
        })
    }
}
