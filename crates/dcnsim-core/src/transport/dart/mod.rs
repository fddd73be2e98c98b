//! Dart: divide-and-specialize congestion response for RDMA. Receiver congestion is handled by
//! direct apportioning of sending rates (DASR: the receiver counts its active senders and each
//! sends at line rate / n, in one RTT), localized in-network congestion by in-order flow
//! deflection in the switches (IOFD), and the rest by DCQCN, to which Dart falls back.
//!
//! Paper: J. Xue, M. U. Chaudhry, B. Vamanan, T. N. Vijaykumar, M. Thottethodi, "Dart: Divide
//! and Specialize for Fast Response to Congestion in RDMA-based Datacenter Networks", IEEE/ACM
//! Transactions on Networking 28(1), 2020 (arXiv 1805.11158). No public code exists; the paper is
//! the specification. Parts:
//! - [`dasr`]: the receiver NIC: AUSS, n on every ACK, look-ahead, the Figure 5 state machine,
//!   ECN-echo suppression in Receiver Congestion, n = 1 in Non-Receiver Congestion
//! - [`control`]: the sender: DCQCN's reaction point under the cap line rate / n
//! - IOFD is a switch stage, `net/pipeline/deflection.rs` (`[switch] iofd = true`); this
//!   transport marks short flows' data packets deflectable with `deflection_tokens` tokens
//! - the sender itself is the rate sender (`transport/rate/`): pacing, go-back-N (or IRN), ACK per
//!   packet at `control_priority` (the paper: ACKs in high-priority queues for every scheme)
//!
//! Ablations (section VI-C) are settings: full Dart = defaults + `[switch] iofd = true`;
//! DASR-only = iofd off; DASR without look-ahead = `lookahead = false`, iofd off; IOFD-only =
//! `dasr = false` + iofd on (DCQCN + deflection); Pri-Q = `dasr = false`, iofd off,
//! `short_flow_priority = 0` with `data_priority = 1` and two queue classes (DCQCN with short
//! flows in a higher class).
//!
//! Numbers the paper sets in math that our copy of its text lost, and what we use instead (each a
//! key): the throughput at which the receiver deems itself at line rate (`throughput_rate_fraction`
//! 0.9, over the last `throughput_window_packets` 8 arrivals: the paper says only "equal to line
//! rate"); how long without CE marks before No Congestion (`ecn_quiet_us`, unset = 2 base RTTs:
//! Figure 5's arcs are not in the text); the short-flow bound for IOFD and Pri-Q
//! (`short_flow_max_bytes` 16384: the paper's short flows are 2-8 KB, its long flows much
//! larger); n in Non-Receiver Congestion (1, read from "DASR's value neutralised"). Recovered from
//! the published abstract: 60 % (2.5x) testbed and 79 % (4.8x) simulated p99 reductions, 58 %
//! higher throughput than TIMELY and DCQCN. From the text: DFT 8 entries, deflection threshold
//! 15 KB, ECN threshold 22.5 KB, 4 tokens, AUSS soft-state timeout 2 s. DCQCN's parameters are
//! the `dcqcn` protocol's keys and defaults (the HPCC reference's tuning); the paper "follows
//! DCQCN's recommendations" with values lost from our text, which `dart-scale` sets (CNP every
//! 50 us, g 1/256, byte counter 10 MB, timer 55 us). Every published version we could reach (arXiv HTML and LaTeX
//! listings, the ToN pages) loses the same math except the abstract's; the evaluation's set-up
//! numbers (link speed and delay, buffer, long-flow size, load definition, DCTCP's OS overhead,
//! TIMELY's thresholds) are therefore choices of the `dart-scale` reproduction, each listed with its
//! reason in docs/protocols/dart.md.
//!
//! What the rates add up to. The paper's senders get line rate / n, "which can be sustained in steady
//! state" (III-A), and the text gives no way to drain a queue: with exact shares the queue a newcomer
//! built in its first RTT at line rate stands (about a BDP: below the marking threshold at 10 Gb/s,
//! above it at 100 Gb/s, where its marks are then suppressed); `apportion_rate_fraction` below 1
//! drains it (not the paper). A receiver's link also carries the ACKs of the receiver's own flows
//! (1/23 of it at 1500 B packets and 64 B ACKs): shares of the nominal line rate then overfill it and
//! the queue grows, its marks suppressed, until PFC pauses the fabric (measured at scale with a
//! rack-local background: thousands of pause frames). So DASR apportions what the control traffic
//! leaves of the link (`apportion_after_control`, default on: our reading of "sustained"; off = the
//! nominal line rate). docs/protocols/dart.md has the measurements.
//!
//! Not modelled: the look-ahead's header bytes (40 B per 20 senders, 2% of a 2 KB payload), CNPs
//! as packets (the echo rides on the ACK, as the rate sender's DCQCN), weighted shares, tenant
//! isolation of the AUSS, NIC firmware timing (the receiver's decision is instantaneous), source
//! congestion marking at NICs (section III-C assumes SmartNICs that mark).

pub mod control;
pub mod dasr;
#[cfg(test)]
mod tests;

use crate::spec_reader::{Section, SpecResult};
use crate::time::{from_us, Time};
use crate::transport::dcqcn::{Dcqcn, DcqcnParams};
use crate::transport::rate::{QpSetup, RateProtocol};
use crate::transport::ClassUse;
use control::DartControl;

/// Dart as a [`RateProtocol`]; the registered transport is `RateTransport<Dart, Dasr>`.
pub struct Dart;

#[derive(Clone, Debug, PartialEq)]
pub struct DartParams {
    pub dcqcn: DcqcnParams,
    /// DASR on (off: IOFD-only and Pri-Q, i.e. DCQCN with the switch stage or priorities).
    pub dasr: bool,
    pub lookahead: bool,
    pub throughput_rate_fraction: f64,
    pub throughput_window_packets: usize,
    /// `None`: 2 base RTTs.
    pub quiet: Option<Time>,
    pub idle_timeout: Time,
    pub short_flow_max_bytes: u64,
    pub deflection_tokens: u8,
    pub short_flow_priority: Option<u8>,
    /// The senders share this fraction of line rate (1: the paper's line rate / n).
    pub apportion_rate_fraction: f64,
    /// Apportion the line rate less the receiver's incoming control traffic (its own flows' ACKs).
    pub apportion_after_control: bool,
    /// The window over which that control traffic is measured (`None`: 2 base RTTs).
    pub control_window: Option<Time>,
}

fn read_dasr(s: &mut Section, p: &mut DartParams) -> SpecResult<()> {
    // Fractions of line rate end in `_rate_fraction` (the key naming convention).
    s.renamed("throughput_fraction", "throughput_rate_fraction")?;
    s.renamed("apportion_fraction", "apportion_rate_fraction")?;
    p.dasr = s.bool_or("dasr", true, "[dart] receiver apportioning (false: DCQCN only, for IOFD-only and Pri-Q)")?;
    p.lookahead = s.bool_or(
        "lookahead",
        true,
        "[dart] accelerated DASR: the first packet of an incast group (flows one workload component releases to \
         one receiver at one instant) puts all its senders in the receiver's count",
    )?;
    p.throughput_rate_fraction = s.f64_or(
        "throughput_rate_fraction",
        0.9,
        "",
        "[dart] a CE mark means Receiver Congestion if the receive throughput is at least this fraction of line \
         rate, else Non-Receiver Congestion (our choice; the paper: 'equal to line rate')",
    )?;
    let f = p.throughput_rate_fraction;
    s.ensure(f > 0.0 && f <= 1.0, "throughput_rate_fraction", format!("must be in (0, 1], got {f}"))?;
    let w = s.u64_or(
        "throughput_window_packets",
        8,
        "packets",
        "[dart] the receive throughput is measured over this many last data arrivals (our choice)",
    )?;
    s.ensure((2..=4096).contains(&w), "throughput_window_packets", format!("must be in [2, 4096], got {w}"))?;
    p.throughput_window_packets = w as usize;
    let quiet = s.f64_opt(
        "ecn_quiet_us",
        "us",
        "[dart] back to No Congestion after this long without a CE mark; unset = 2 base RTTs (our choice)",
    )?;
    if let Some(q) = quiet {
        s.ensure(q > 0.0 && q <= 1e7, "ecn_quiet_us", format!("must be in (0, 1e7] us, got {q}"))?;
    }
    p.quiet = quiet.map(from_us);
    let idle = s.f64_or(
        "auss_idle_timeout_us",
        2e6,
        "us",
        "[dart] a sender without a packet for this long leaves the count (the paper's soft state: 2 s)",
    )?;
    s.ensure(idle > 0.0 && idle <= 1e8, "auss_idle_timeout_us", format!("must be in (0, 1e8] us, got {idle}"))?;
    p.idle_timeout = from_us(idle);
    read_apportioning(s, p)
}

/// How much of the line rate DASR apportions.
fn read_apportioning(s: &mut Section, p: &mut DartParams) -> SpecResult<()> {
    p.apportion_rate_fraction = s.f64_or(
        "apportion_rate_fraction",
        1.0,
        "",
        "[dart] each of n senders gets this fraction of line rate / n (the paper: 1). Below 1 the queue a join \
         builds drains; at 1 it stands (arrivals equal the line rate) and keeps being marked",
    )?;
    let a = p.apportion_rate_fraction;
    s.ensure(a > 0.0 && a <= 1.0, "apportion_rate_fraction", format!("must be in (0, 1], got {a}"))?;
    p.apportion_after_control = s.bool_or(
        "apportion_after_control",
        true,
        "[dart] apportion the line rate less the share of the receiver's link its incoming control packets take \
         (the ACKs of its own flows), so the shares add up to what the link can carry for data (false: the nominal \
         line rate, which a receiver that also sends overfills by its ACKs)",
    )?;
    let w = s.f64_opt(
        "control_window_us",
        "us",
        "[dart] the receiver measures its incoming control traffic over this window; unset = 2 base RTTs (our choice)",
    )?;
    if let Some(w) = w {
        s.ensure(w > 0.0 && w <= 1e7, "control_window_us", format!("must be in (0, 1e7] us, got {w}"))?;
    }
    p.control_window = w.map(from_us);
    Ok(())
}

fn read_short_flows(s: &mut Section, p: &mut DartParams) -> SpecResult<()> {
    p.short_flow_max_bytes = s.u64_or(
        "short_flow_max_bytes",
        16_384,
        "bytes",
        "[dart] flows up to this size are short: deflectable (IOFD) and in short_flow_priority (Pri-Q); the \
         paper's short flows are 2-8 KB",
    )?;
    let t = s.u64_or(
        "deflection_tokens",
        4,
        "tokens",
        "[dart] deflections a short flow's packets may take (the paper: 4); 0 = never deflected. Switches deflect \
         only with [switch] iofd = true",
    )?;
    s.ensure(t <= 127, "deflection_tokens", format!("must be at most 127, got {t}"))?;
    p.deflection_tokens = t as u8;
    let prio = s.u64_opt(
        "short_flow_priority",
        "class",
        "[dart] data class of short flows (the Pri-Q ablation: DCQCN with short flows above long ones); unset = \
         data_priority",
    )?;
    if let Some(c) = prio {
        s.ensure(c < 8, "short_flow_priority", format!("must be a class below 8, got {c}"))?;
    }
    p.short_flow_priority = prio.map(|c| c as u8);
    Ok(())
}

impl RateProtocol for Dart {
    const NAMES: &'static [(&'static str, &'static str)] = &[(
        "dart",
        "Dart (Xue et al., ToN'20): receiver apportioning (DASR) with look-ahead, switch in-order flow deflection \
         ([switch] iofd), DCQCN fall-back",
    )];
    const ECN: bool = true;
    const CONFORMANCE_SPEC: &'static str = "[queue]\necn = \"step\"\necn_k_bytes = 22500\n";
    type Control = DartControl;
    type Params = DartParams;

    fn extra_classes(p: &DartParams) -> Vec<ClassUse> {
        let purpose = "short flows' data (Pri-Q)";
        p.short_flow_priority
            .map(|class| ClassUse { key: "short_flow_priority", class, explicit: true, purpose })
            .into_iter()
            .collect()
    }

    fn read_params(s: &mut Section) -> SpecResult<DartParams> {
        let dcqcn = Dcqcn::read_params(s)?;
        let mut p = DartParams {
            dcqcn,
            dasr: true,
            lookahead: true,
            throughput_rate_fraction: 0.9,
            throughput_window_packets: 8,
            quiet: None,
            idle_timeout: 0,
            short_flow_max_bytes: 0,
            deflection_tokens: 0,
            short_flow_priority: None,
            apportion_rate_fraction: 1.0,
            apportion_after_control: true,
            control_window: None,
        };
        read_dasr(s, &mut p)?;
        read_short_flows(s, &mut p)?;
        Ok(p)
    }

    fn control(p: &DartParams, qp: &QpSetup) -> DartControl {
        DartControl::new(Dcqcn::control(&p.dcqcn, qp), qp.line_rate, p.apportion_rate_fraction)
    }

    fn cnp_interval(p: &DartParams) -> Time {
        Dcqcn::cnp_interval(&p.dcqcn)
    }
}
