//! HULL: DCTCP at the hosts, paced, over switches whose phantom queues mark ECN before the links
//! fill ("bandwidth headroom").
//!
//! Paper: M. Alizadeh, A. Kabbani, T. Edsall, B. Prabhakar, A. Vahdat, M. Yasuda, "Less Is More:
//! Trading a Little Bandwidth for Ultra-Low Latency in the Data Center", NSDI 2012. The switch part
//! is `net::pipeline::stages::phantom` (`[switch] phantom_queue = true`, gamma 0.95 and a 1 KB marking
//! threshold by default, as the paper); the protocol requires it. The host part is the window
//! sender with [`super::window::cc::hull`] (DCTCP plus a pacer).
//!
//! Modelled:
//! - phantom queues at every switch egress: a counter drained at gamma x line rate, marking CE on
//!   departing ECN-capable packets while over the threshold (on top of any real-queue marking the
//!   `[queue]` table sets; HULL's switches mark on the phantom queue only, so leave `ecn` unset)
//! - DCTCP at the hosts (alpha EWMA with `g`, cut by alpha / 2 once per window; NewReno recovery;
//!   `window_floor = "none"` lets a cut leave under one packet, as ns-2's DCTCP agent: `dctcp.rs`)
//! - pacing (`pace_data`): each flow paces at cwnd / srtt, the rate HULL's hardware pacer converges
//!   to for a window-limited flow
//!
//! Not modelled: the pacer's token bucket and its own update law (eta, beta, Tr) and its
//! association of flows to the pacer (HULL paces only flows the NIC deems large); interrupt
//! coalescing and LSO bursts, which the pacer exists to counter, do not occur in the simulator.

use super::window::cc::dctcp::DctcpParams;
use super::window::cc::hull::{HullControl, HullParams};
use super::window::cc::WindowSetup;
use super::window::WindowProtocol;
use super::SpecEnv;
use crate::spec_reader::{Section, SpecResult};

/// HULL as a [`WindowProtocol`]; the registered transport is `WindowTransport<Hull>`.
pub struct Hull;

impl WindowProtocol for Hull {
    const NAMES: &'static [(&'static str, &'static str)] = &[(
        "hull",
        "HULL (Alizadeh et al., NSDI'12): paced DCTCP over phantom queues that mark at 0.95 of line rate (needs \
         [switch] phantom_queue = true)",
    )];
    const ECN: bool = true;
    /// At gamma 0.95 a lone flow settles at about 0.93 of line rate by design; at gamma 1 the
    /// phantom queues run but a lone flow at line rate never marks, so it is exact.
    const CONFORMANCE_SPEC: &'static str =
        "[switch]\nphantom_queue = true\nphantom_drain_rate_fraction = 1.0\n[transport]\ninitial_window_packets = 32\n";
    type Control = HullControl;
    type Params = HullParams;

    fn read_params(s: &mut Section) -> SpecResult<HullParams> {
        let g = s.f64_or("g", 1.0 / 16.0, "", "[hull] DCTCP's alpha EWMA gain (the DCTCP paper: 1/16)")?;
        s.ensure(g > 0.0 && g <= 1.0, "g", format!("must be in (0, 1], got {g}"))?;
        let a = s.f64_or("initial_alpha", 1.0, "", "[hull] alpha before the first window of ACKs (Linux: 1)")?;
        s.ensure((0.0..=1.0).contains(&a), "initial_alpha", "must be in [0, 1]")?;
        let pace = s.bool_or(
            "pace_data",
            true,
            "[hull] pace each flow at cwnd / srtt (HULL's hardware pacer); false = DCTCP over phantom queues",
        )?;
        Ok(HullParams { dctcp: DctcpParams { g, initial_alpha: a }, pace })
    }

    fn check_env(s: &mut Section, name: &str, env: &SpecEnv) -> SpecResult<()> {
        s.ensure(
            env.stages.has::<crate::net::pipeline::stages::phantom::Phantoms>(),
            "protocol",
            format!("{name} marks on phantom queues: set [switch] phantom_queue = true"),
        )
    }

    fn control(p: &HullParams, w: &WindowSetup) -> HullControl {
        HullControl::new(p, w)
    }
}
