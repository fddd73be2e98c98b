//! DX: the window sender with DX's latency-driven window control.
//!
//! Papers: C. Lee, C. Park, K. Jang, S. Moon and D. Han, "Accurate Latency-based Congestion
//! Feedback for Datacenters", USENIX ATC 2015, and "DX: Latency-Based Congestion Control for
//! Datacenters", IEEE/ACM ToN 25(1), 2017. The sender is [`super::window`]; the controller is
//! [`super::window::cc::dx`] (its header has the window rule and where V comes from).
//!
//! Modelled:
//! - queuing delay = RTT - base RTT per ACK, base RTT = the smallest RTT the flow has seen, RTT from
//!   the data packet's send time echoed by its ACK (the simulator's exact clock plays the part of
//!   DX's hardware timestamps, so there is no measurement noise to filter)
//! - once per round trip: +1 MSS if the round's mean queuing delay is at most the target (0, DX's
//!   rule), else cwnd x (1 - Q / V) with V the round's mean RTT
//! - Reno slow start until the first round with queuing; NewReno fast recovery and RFC 6298
//!   timeouts (the window sender's)
//!
//! Not modelled: DX's latency measurement machinery (NIC/driver timestamps, the one-way delay
//! decomposition, the filtering of host-side delay), delayed ACKs, SACK.

use super::window::cc::dx::{DxControl, DxParams};
use super::window::cc::WindowSetup;
use super::window::WindowProtocol;
use super::LoneFlow;
use crate::spec_reader::{Section, SpecResult};
use crate::time::from_us;

/// DX as a [`WindowProtocol`]; the registered transport is `WindowTransport<Dx>`.
pub struct Dx;

impl WindowProtocol for Dx {
    const NAMES: &'static [(&'static str, &'static str)] = &[(
        "dx",
        "DX (Lee et al., ATC'15 / ToN'17): latency-based window, +1 MSS per RTT without queuing, else a cut by \
         queuing delay / RTT",
    )];
    const ECN: bool = false;
    const CONFORMANCE_SPEC: &'static str = "[transport]\ninitial_window_packets = 32\n";
    const CUT_COUNTER: &'static str = "delay_window_cuts";
    /// A window above the BDP queues at the sender's own NIC; DX measures that queue and cuts to
    /// about the BDP, sometimes just under it: a lone flow pays a few base RTTs over the ideal.
    const LONE_FLOW: LoneFlow = LoneFlow::Bounded { max_extra_rtts: 3.0 };
    type Control = DxControl;
    type Params = DxParams;

    fn read_params(s: &mut Section) -> SpecResult<DxParams> {
        let target = s.f64_or(
            "target_queuing_delay_us",
            0.0,
            "us",
            "[dx] mean queuing delay per RTT at or below which the window grows (DX: 0, grow only without queuing)",
        )?;
        s.ensure(
            (0.0..=1e6).contains(&target),
            "target_queuing_delay_us",
            format!("must be in [0, 1e6] us, got {target}"),
        )?;
        Ok(DxParams { target_ps: from_us(target) as f64 })
    }

    fn control(p: &DxParams, w: &WindowSetup) -> DxControl {
        DxControl::new(p, w)
    }
}
