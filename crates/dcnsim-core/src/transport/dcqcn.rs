//! DCQCN: RoCEv2 congestion control with ECN marks, a notification point at the receiver and a
//! rate-based reaction point at the sender.
//!
//! Paper: Y. Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015
//! (section 3: CP, NP and RP algorithms). Reference simulator: the HPCC authors' ns-3
//! (alibaba-edu/High-Precision-Congestion-Control, `simulation/src/point-to-point/model/
//! rdma-hw.cc`, CC_MODE 1, "Mellanox's version of DCQCN"), whose `run.py --cc dcqcn` settings are
//! the defaults here. The sender is [`super::rate`]; the reaction point is
//! [`super::rate::cc::dcqcn`] (its header has the algorithm and the order of events).
//!
//! Modelled:
//! - congestion point: RED-style ECN marking with Kmin/Kmax/Pmax is the switch's (`[queue] ecn =
//!   "red"`); the reference marks at egress dequeue (`ecn_at = "dequeue"`, `switch-node.cc`
//!   `SwitchNotifyDequeue`, `switch-mmu.cc` `ShouldSendCN`) with Kmin = 100 KB, Kmax = 400 KB x
//!   rate/25G, Pmax 0.2 — set those in the spec (docs/protocols/dcqcn.md has the lines). Data is
//!   ECN-capable
//! - notification point: the CE mark of a data packet is echoed on the ACK (or NACK) of that
//!   packet as the CNP, at most once per `cnp_interval_us` per QP; 0 (every marked packet) is the
//!   reference (`ReceiveUdp`: no coalescing); the paper's NP sends at most one CNP per 50 us
//! - reaction point: alpha with its update timer, target and current rate, rate-decrease check
//!   timer, fast recovery, additive and hyper increase on the rate-increase timer, clamp-target
//!   option, rate on the first CNP, minimum rate; byte counter as an option (the paper's; the
//!   reference has none)
//! - every QP starts at line rate; no window (the reference's HAS_WIN 0 for DCQCN); go-back-N or
//!   IRN recovery (`recovery`), ACK per packet, NACK interval: the rate sender's keys
//!
//! Differences from the paper, each a key: the paper's RP cuts on every CNP and updates alpha at
//! that moment (alpha timer K = 55 us restarted by each CNP), increases on a timer T and a byte
//! counter B with QCN's stages, F = 5, and AI 40 Mb/s at 40G; the reference (and this default)
//! checks for CNPs every 4 us, updates alpha every 1 us, increases every 300 us, F = 1, no byte
//! counter, g = 1/256, AI/HAI 5/50 Mb/s x rate/25G. The reference's "dcqcn_paper" config is
//! alpha 50 us, decrease 50 us, increase 55 us. The DCQCN authors' own ns-3
//! (bobzhuyb/ns3-rdma, `mix/config.txt`) uses CNP interval 50 us, alpha 55 us, RP timer 60 us,
//! byte counter 300 KB, F = 5, AI 40 Mb/s, HAI 200 Mb/s, clamp on.
//!
//! Not modelled: CNPs as separate packets (the echo rides on the ACK: with `ack_every_packets` >
//! 1 an echo on a packet that is not ACKed is lost, as in the reference), CNP priority (ACKs use
//! `control_priority`; the reference's ACK_HIGH_PRIO 1 puts them in a strict-priority class:
//! `data_priority = 1` with two queue classes does the same), PFC (the fabric's), the NP's
//! sampling, the byte counter's halving in hyper increase (the DCQCN authors' simulator), QCN's
//! per-hop rates.
//!
//! Packet fields: as the rate sender (`rate/mod.rs`); flag ECE on an ACK/NACK = CNP.

use super::rate::cc::dcqcn::{Dcqcn as DcqcnControl, DcqcnLaw};
use super::rate::cc::{increment_bps, min_rate, rate_opt};
use super::rate::{QpSetup, RateProtocol};
use crate::spec_reader::{Section, SpecResult};
use crate::time::{from_us, Time};

/// DCQCN as a [`RateProtocol`]; the registered transport is `RateTransport<Dcqcn>`.
pub struct Dcqcn;

#[derive(Clone, Debug, PartialEq)]
pub struct DcqcnParams {
    pub g: f64,
    pub alpha_interval: Time,
    pub decrease_interval: Time,
    pub increase_interval: Time,
    pub fast_recovery_steps: u32,
    /// Gb/s; `None` = the reference's scaling with the NIC rate.
    pub ai_rate_gbps: Option<f64>,
    pub hai_rate_gbps: Option<f64>,
    pub min_bps: u64,
    pub clamp_target: bool,
    pub first_cnp_fraction: f64,
    pub byte_counter: Option<u64>,
    pub cnp_interval: Time,
}

/// Reads an interval in us, in (0, 1 s].
fn interval(s: &mut Section, key: &str, default: f64, doc: &'static str) -> SpecResult<Time> {
    let v = s.f64_or(key, default, "us", doc)?;
    s.ensure(v > 0.0 && v <= 1e6, key, format!("must be in (0, 1000000] us, got {v}"))?;
    Ok(from_us(v))
}

/// The alpha, rate-decrease and rate-increase timers.
fn read_timers(s: &mut Section) -> SpecResult<(Time, Time, Time)> {
    let alpha = interval(
        s,
        "alpha_update_interval_us",
        1.0,
        "alpha update period (reference run.py: 1; its dcqcn_paper: 50; the paper's K: 55)",
    )?;
    let decrease = interval(
        s,
        "rate_decrease_interval_us",
        4.0,
        "period of the check that cuts the rate if a CNP came (reference run.py: 4; its dcqcn_paper: 50; \
         the paper cuts on each CNP, which the NP spaces by 50 us)",
    )?;
    let increase = interval(
        s,
        "rate_increase_interval_us",
        300.0,
        "rate-increase timer (reference run.py: 300; its dcqcn_paper: 55; DCQCN authors' ns-3: 60)",
    )?;
    Ok((alpha, decrease, increase))
}

/// The increase and cut keys (the timers, g, the minimum rate and the NP are filled in by the caller).
fn read_increase(s: &mut Section) -> SpecResult<DcqcnParams> {
    let f = s.u64_or(
        "fast_recovery_steps",
        1,
        "events",
        "F: increase events of fast recovery before additive increase (reference run.py: 1; the paper and \
         the code default: 5)",
    )?;
    s.ensure(f <= 1000, "fast_recovery_steps", "must be at most 1000")?;
    let ai = rate_opt(
        s,
        "ai_rate_gbps",
        "additive increase step of the target rate; unset = 5 Mb/s x NIC rate / 25 Gb/s (reference run.py: \
         20 Mb/s at 100G; the paper: 40 Mb/s at 40G)",
    )?;
    let hai = rate_opt(
        s,
        "hai_rate_gbps",
        "hyper increase step; unset = 50 Mb/s x NIC rate / 25 Gb/s (reference run.py: 200 Mb/s at 100G)",
    )?;
    let clamp_target = s.bool_or(
        "clamp_target_rate",
        false,
        "a cut always sets the target to the current rate (reference run.py: false: only if the rate \
         increased since the last cut; DCQCN authors' ns-3: true)",
    )?;
    let first = s.f64_or(
        "first_cnp_rate_fraction",
        1.0,
        "",
        "the first CNP sets the rate and target to this fraction of the rate (reference: 1.0)",
    )?;
    s.ensure(first > 0.0 && first <= 1.0, "first_cnp_rate_fraction", format!("must be in (0, 1], got {first}"))?;
    let bc = s.u64_opt(
        "byte_counter_bytes",
        "bytes",
        "every this many bytes sent after a cut is an increase event too (the paper's byte counter); \
         unset = none (the reference; DCQCN authors' ns-3: 300000)",
    )?;
    if let Some(b) = bc {
        s.ensure(b >= 64, "byte_counter_bytes", "must be at least 64 bytes")?;
    }
    Ok(DcqcnParams {
        g: 0.0,
        alpha_interval: 0,
        decrease_interval: 0,
        increase_interval: 0,
        fast_recovery_steps: f as u32,
        ai_rate_gbps: ai,
        hai_rate_gbps: hai,
        min_bps: 0,
        clamp_target,
        first_cnp_fraction: first,
        byte_counter: bc,
        cnp_interval: 0,
    })
}

impl RateProtocol for Dcqcn {
    const NAMES: &'static [(&'static str, &'static str)] = &[(
        "dcqcn",
        "DCQCN (Zhu et al., SIGCOMM'15): ECN-driven rate control for RoCEv2, as the HPCC authors' ns-3 runs it",
    )];
    const ECN: bool = true;
    const CONFORMANCE_SPEC: &'static str = "[queue]\necn = \"red\"\necn_at = \"dequeue\"\nred_min_bytes = 40000\n\
                                            red_max_bytes = 160000\nred_pmax = 0.2\n";
    type Control = DcqcnControl;
    type Params = DcqcnParams;

    fn read_params(s: &mut Section) -> SpecResult<DcqcnParams> {
        let g = s.f64_or("g", 1.0 / 256.0, "", "alpha EWMA gain (reference run.py and the paper: 1/256)")?;
        s.ensure(g > 0.0 && g <= 1.0, "g", format!("must be in (0, 1], got {g}"))?;
        let (alpha_interval, decrease_interval, increase_interval) = read_timers(s)?;
        let mut p = read_increase(s)?;
        p.g = g;
        p.alpha_interval = alpha_interval;
        p.decrease_interval = decrease_interval;
        p.increase_interval = increase_interval;
        p.min_bps = min_rate(s)?;
        let cnp = s.f64_or(
            "cnp_interval_us",
            0.0,
            "us",
            "the receiver echoes at most one CNP per QP per interval; 0 = one per marked packet (the \
             reference run.py); the paper's NP: 50",
        )?;
        s.ensure((0.0..=1e6).contains(&cnp), "cnp_interval_us", format!("must be in [0, 1000000] us, got {cnp}"))?;
        p.cnp_interval = from_us(cnp);
        Ok(p)
    }

    fn control(p: &DcqcnParams, qp: &QpSetup) -> DcqcnControl {
        let line = qp.line_rate.bps();
        DcqcnControl::new(DcqcnLaw {
            g: p.g,
            alpha_interval: p.alpha_interval,
            decrease_interval: p.decrease_interval,
            increase_interval: p.increase_interval,
            fast_recovery_steps: p.fast_recovery_steps,
            line_bps: line,
            ai_bps: increment_bps(p.ai_rate_gbps, line, 5000),
            hai_bps: increment_bps(p.hai_rate_gbps, line, 500),
            min_bps: p.min_bps.min(line),
            clamp_target: p.clamp_target,
            first_cnp_fraction: p.first_cnp_fraction,
            byte_counter: p.byte_counter,
        })
    }

    fn cnp_interval(p: &DcqcnParams) -> Time {
        p.cnp_interval
    }
}
