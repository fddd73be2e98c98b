//! HPCC: rate and window control from in-band network telemetry (INT).
//!
//! Paper: Y. Li, R. Miao, H. H. Liu, Y. Zhuang, F. Feng, L. Tang, Z. Cao, M. Zhang, F. Kelly,
//! M. Alizadeh, M. Yu, "HPCC: High Precision Congestion Control", SIGCOMM 2019 (section 3,
//! Algorithm 1). Reference simulator: the authors' ns-3 (alibaba-edu/High-Precision-Congestion-
//! Control, `rdma-hw.cc` CC_MODE 3, `switch-node.cc` `SwitchNotifyDequeue`), whose `run.py --cc hp`
//! settings are the defaults here. The sender is [`super::rate`]; the control law is
//! [`super::rate::cc::hpcc`] (its header has the algorithm).
//!
//! Modelled:
//! - INT: every switch egress pushes (dequeue time, bytes sent before the packet, queue bytes as it
//!   leaves, port rate) onto data packets at dequeue (`[switch] int = true`; the fabric's stage);
//!   the receiver copies the data packet's records into its ACK (or NACK), as the reference's
//!   `ReceiveUdp` does; the sender reacts per ACK
//! - the control law: per-hop utilization, the bottleneck hop, U's EWMA over the base RTT, eta,
//!   maxStage, W_AI as a rate, fast reaction per ACK with a reference rate committed once per RTT
//! - window = W x rate / line rate with W the max BDP and T the max base RTT (GLOBAL_T 1: host 0 to
//!   the last host, the longest path of the built topologies; `bdp_bytes` and `base_rtt_us` set them)
//! - start at line rate; go-back-N or IRN recovery (the rate sender's keys)
//!
//! Differences from the paper: the paper states the law on a window (W = W / (U / eta) + W_AI,
//! pacing at W / T); the reference (and this) keep a rate, R = R / k + R_AI, the window following
//! as W x R / C — the same law with R_AI = W_AI / T. The paper's maxStage is 5; run.py's default
//! is 0 (every update multiplicative), used here. The reference's records are quantized (24-bit
//! ns timestamps, 20-bit byte counts in 128-byte units x INT_MULTI, 17-bit queue lengths in 80-byte
//! units); here they are exact.
//!
//! Not modelled: PINT and the per-hop rates (MULTI_RATE), feedback sampling (SAMPLE_FEEDBACK), the
//! INT header's bytes on the wire (the reference adds 42 bytes to every data packet; here the
//! framing's `header_bytes` stays as set).

use super::rate::cc::hpcc::{Hpcc as HpccControl, HpccLaw};
use super::rate::cc::{increment_bps, min_rate, rate_opt};
use super::rate::{QpSetup, RateProtocol};
use crate::spec_reader::{Section, SpecResult};
use crate::time::{from_us, Time};

/// HPCC as a [`RateProtocol`]; the registered transport is `RateTransport<Hpcc>`.
pub struct Hpcc;

#[derive(Clone, Debug, PartialEq)]
pub struct HpccParams {
    pub eta: f64,
    pub max_stage: u32,
    pub ai_rate_gbps: Option<f64>,
    pub min_bps: u64,
    pub fast_react: bool,
    pub use_window: bool,
    /// `None` = the rate sender's base RTT (host 0 to the last host).
    pub base_rtt: Option<Time>,
}

impl RateProtocol for Hpcc {
    const NAMES: &'static [(&'static str, &'static str)] = &[(
        "hpcc",
        "HPCC (Li et al., SIGCOMM'19): rate and window from per-hop INT (utilization, queue), as the authors' ns-3 \
         runs it",
    )];
    const ECN: bool = false;
    const INT: bool = true;
    /// A lone flow holds line rate only with eta = 1 (at 0.95 it settles at 95% of line rate after
    /// its first RTT, which the behaviour tests check).
    const CONFORMANCE_SPEC: &'static str = "[switch]\nint = true\n[transport]\ntarget_utilization = 1.0\n";
    type Control = HpccControl;
    type Params = HpccParams;

    fn read_params(s: &mut Section) -> SpecResult<HpccParams> {
        let eta = s.f64_or(
            "target_utilization",
            0.95,
            "",
            "[hpcc] eta: the bottleneck utilization HPCC aims at (paper and reference: 0.95)",
        )?;
        s.ensure(eta > 0.0 && eta <= 1.0, "target_utilization", format!("must be in (0, 1], got {eta}"))?;
        let max_stage = s.u64_or(
            "max_stage",
            0,
            "updates",
            "[hpcc] additive steps before a multiplicative one while below eta (reference run.py: 0; the paper \
             and the code default: 5)",
        )?;
        s.ensure(max_stage <= 1000, "max_stage", "must be at most 1000")?;
        let ai = rate_opt(
            s,
            "ai_rate_gbps",
            "[hpcc] W_AI as a rate (R_AI = W_AI / T); unset = 10 Mb/s x NIC rate / 25 Gb/s (reference run.py: \
             40 Mb/s at 100G)",
        )?;
        let min_bps = min_rate(s)?;
        let fast_react = s.bool_or(
            "fast_react",
            true,
            "[hpcc] react to every ACK, committing the reference rate once per RTT (reference run.py: FAST_REACT \
             1); false = once per RTT only",
        )?;
        let use_window = s.bool_or(
            "use_window",
            true,
            "[hpcc] bound the bytes in flight by W x rate / line rate (reference run.py: HAS_WIN 1, VAR_WIN 1)",
        )?;
        let rtt = s.f64_opt(
            "base_rtt_us",
            "us",
            "[hpcc] T, the base RTT of U's EWMA; unset = the base RTT from host 0 to the last host (the \
             reference's max RTT, GLOBAL_T 1)",
        )?;
        if let Some(t) = rtt {
            s.ensure(t > 0.0 && t <= 1e6, "base_rtt_us", format!("must be in (0, 1000000] us, got {t}"))?;
        }
        Ok(HpccParams {
            eta,
            max_stage: max_stage as u32,
            ai_rate_gbps: ai,
            min_bps,
            fast_react,
            use_window,
            base_rtt: rtt.map(from_us),
        })
    }

    fn control(p: &HpccParams, qp: &QpSetup) -> HpccControl {
        let line = qp.line_rate.bps();
        HpccControl::new(HpccLaw {
            eta: p.eta,
            max_stage: p.max_stage,
            ai_bps: increment_bps(p.ai_rate_gbps, line, 2500),
            line_bps: line,
            min_bps: p.min_bps.min(line),
            base_rtt: p.base_rtt.unwrap_or(qp.base_rtt).max(1),
            window_bytes: qp.bdp_bytes.max(1),
            fast_react: p.fast_react,
            use_window: p.use_window,
        })
    }
}
