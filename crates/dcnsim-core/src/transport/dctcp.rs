//! DCTCP: the window sender with DCTCP's ECN-driven window control.
//!
//! Paper: M. Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010; loss recovery per
//! RFC 6582 (NewReno) and RFC 6298 (RTO). The sender is [`super::window`]; the controller is
//! [`super::window::cc::dctcp`]. NewReno (`newreno.rs`) is the same sender with Reno's controller.
//!
//! Modelled:
//! - byte-counted window; slow start from `initial_window_packets` or a fixed initial window
//!   (`slow_start = false` starts in congestion avoidance); additive increase of one MSS per window
//! - ECN: data is ECN-capable; the receiver echoes CE on the ACK of that very packet (one ACK per
//!   data packet, so the echo is exact); the sender keeps alpha <- (1-g) alpha + g F, F = fraction of
//!   bytes acked with ECE over the last window of data, and cuts cwnd by alpha/2 at most once per window
//! - a window under one packet: by default a cut leaves at least one MSS (Linux keeps two); with
//!   `window_floor = "none"` it may leave less, and the sender then waits for its retransmission
//!   timer, backing it off on repeated echoes at one packet (RFC 3168 6.1.2), as ns-2's TcpAgent and
//!   FullTcp do in the DCTCP patch the ExpressPass authors ran (`TcpAgent::slowdown(CLOSE_CWND_DCTCP)`
//!   has no floor; `ssthresh_` is floored at 2 packets)
//! - fast retransmit on `dupack_threshold` duplicate ACKs and NewReno fast recovery with partial ACKs
//! - RTO from SRTT/RTTVAR (timestamps echoed in ACKs, so no Karn ambiguity), `min_rto_us`
//!   floor, exponential back-off, go-back-N after a timeout; the receiver buffers out-of-order data
//!
//! Connection set-up: off by default (data flows from the first instant); `connection_setup =
//! "handshake"` spends a SYN / SYN-ACK round trip first (window/handshake.rs, as ns-2 FullTcp and htsim).
//!
//! Not modelled: connection tear-down, the handshake's third ACK, delayed
//! ACKs (and so the paper's two-state ACK machine), SACK, receive windows, Nagle, pacing,
//! TSO/segmentation offload.

use super::window::cc::dctcp::{DctcpControl, DctcpParams};
use super::window::cc::WindowSetup;
use super::window::WindowProtocol;
use crate::spec_reader::{Section, SpecResult};

/// DCTCP as a [`WindowProtocol`]; the registered transport is `WindowTransport<Dctcp>`.
pub struct Dctcp;

impl WindowProtocol for Dctcp {
    const NAMES: &'static [(&'static str, &'static str)] =
        &[("dctcp", "DCTCP (Alizadeh et al., SIGCOMM'10): ECN-driven window control over NewReno")];
    const ECN: bool = true;
    const CONFORMANCE_SPEC: &'static str =
        "[queue]\necn = \"step\"\necn_k_packets = 20\n[transport]\ninitial_window_packets = 32\n";
    type Control = DctcpControl;
    type Params = DctcpParams;

    fn read_params(s: &mut Section) -> SpecResult<DctcpParams> {
        s.renamed("init_alpha", "initial_alpha")?;
        let g =
            s.f64_or("g", 1.0 / 16.0, "", "[dctcp] alpha EWMA gain (the DCTCP paper: 1/16; SIRD's evaluation: 0.08)")?;
        s.ensure(g > 0.0 && g <= 1.0, "g", format!("must be in (0, 1], got {g}"))?;
        let a = s.f64_or("initial_alpha", 1.0, "", "[dctcp] alpha before the first window of ACKs (Linux: 1)")?;
        s.ensure((0.0..=1.0).contains(&a), "initial_alpha", "must be in [0, 1]")?;
        Ok(DctcpParams { g, initial_alpha: a })
    }

    fn control(p: &DctcpParams, w: &WindowSetup) -> DctcpControl {
        DctcpControl::new(p, w)
    }
}
