//! DCTCP in the hardware rate-based form the HPCC authors' ns-3 runs (CC_MODE 8), beside the
//! window DCTCP (`dctcp.rs`).
//!
//! Paper: M. Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010 (section 3.1: alpha and
//! the cut by alpha / 2). Reference simulator: alibaba-edu/High-Precision-Congestion-Control,
//! `rdma-hw.cc` `HandleAckDctcp`, with `run.py --cc dctcp` settings as the defaults here. The
//! sender is [`super::rate`]; the control law is [`super::rate::cc::dctcp`].
//!
//! Modelled: start at line rate; alpha per window of ACKs (F = echoes / packets of the window, as
//! the reference counts them), a cut of the rate by alpha / 2 at an echo outside CWR and CWR until
//! the data sent before the cut is acknowledged, additive increase of `ai_rate_gbps` (615 Mb/s,
//! the reference's "1 MTU per 13 us RTT") once per window outside CWR, the window W = BDP x rate /
//! line rate (HAS_WIN 1, VAR_WIN 1; BDP of host 0 to the last host, as GLOBAL_T), the minimum
//! rate; ECN echoed on the ACK of each marked packet (no delayed ACKs). The reference marks
//! with Kmin = Kmax = 30 KB x rate / 10G, Pmax 1 (a step at K): `[queue] ecn = "step"` with
//! `ecn_k_bytes`. Go-back-N or IRN recovery: the rate sender's keys.
//!
//! Differences from the paper: the paper's DCTCP is a TCP window (slow start, a cwnd cut, one MSS
//! per RTT); here the NIC holds a rate and derives the window from it, so a cut halves both,
//! and growth is a fixed rate step per window, not per RTT of the flow's own window.
//!
//! Not modelled: slow start, delayed ACKs, TCP loss recovery (the rate sender's go-back-N/IRN
//! replaces it).

use super::rate::cc::dctcp::{DctcpRate as DctcpRateControl, DctcpRateLaw};
use super::rate::cc::{gbps_to_bps, min_rate};
use super::rate::{QpSetup, RateProtocol};
use crate::spec_reader::{Section, SpecResult};

/// Rate-based DCTCP as a [`RateProtocol`]; the registered transport is `RateTransport<DctcpRate>`.
pub struct DctcpRate;

#[derive(Clone, Debug, PartialEq)]
pub struct DctcpRateParams {
    pub g: f64,
    pub initial_alpha: f64,
    pub ai_bps: u64,
    pub min_bps: u64,
    pub use_window: bool,
}

impl RateProtocol for DctcpRate {
    const NAMES: &'static [(&'static str, &'static str)] = &[(
        "dctcp_rate",
        "DCTCP as a NIC rate controller (the HPCC authors' ns-3 CC_MODE 8): rate cut by alpha/2, +615 Mb/s per \
         window, window = BDP x rate",
    )];
    const ECN: bool = true;
    const CONFORMANCE_SPEC: &'static str = "[queue]\necn = \"step\"\necn_k_bytes = 30000\n";
    type Control = DctcpRateControl;
    type Params = DctcpRateParams;

    fn read_params(s: &mut Section) -> SpecResult<DctcpRateParams> {
        let g = s.f64_or("g", 1.0 / 16.0, "", "[dctcp_rate] alpha EWMA gain (reference and DCTCP paper: 1/16)")?;
        s.ensure(g > 0.0 && g <= 1.0, "g", format!("must be in (0, 1], got {g}"))?;
        let a = s.f64_or("initial_alpha", 1.0, "", "[dctcp_rate] alpha before the first window (reference: 1)")?;
        s.ensure((0.0..=1.0).contains(&a), "initial_alpha", format!("must be in [0, 1], got {a}"))?;
        let ai = s.f64_or(
            "ai_rate_gbps",
            0.615,
            "Gb/s",
            "[dctcp_rate] rate added once per window of ACKs outside CWR (reference run.py: 615 Mb/s = 1 KB per \
             13 us at any NIC rate)",
        )?;
        s.ensure(ai > 0.0 && ai <= 1e4, "ai_rate_gbps", format!("must be in (0, 10000] Gb/s, got {ai}"))?;
        let min_bps = min_rate(s)?;
        let use_window = s.bool_or(
            "use_window",
            true,
            "[dctcp_rate] bound the bytes in flight by BDP x rate / line rate (reference run.py: HAS_WIN 1, VAR_WIN 1)",
        )?;
        Ok(DctcpRateParams { g, initial_alpha: a, ai_bps: gbps_to_bps(ai), min_bps, use_window })
    }

    fn control(p: &DctcpRateParams, qp: &QpSetup) -> DctcpRateControl {
        let line = qp.line_rate.bps();
        DctcpRateControl::new(DctcpRateLaw {
            g: p.g,
            initial_alpha: p.initial_alpha,
            ai_bps: p.ai_bps,
            line_bps: line,
            min_bps: p.min_bps.min(line),
            mss_bytes: qp.framing.mss() as u64,
            window_bytes: p.use_window.then_some(qp.bdp_bytes),
        })
    }
}
