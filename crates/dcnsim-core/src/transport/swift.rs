//! Swift: the window sender with Swift's delay-driven window control.
//!
//! Paper: G. Kumar et al., "Swift: Delay is Simple and Effective for Congestion Control in the
//! Datacenter", SIGCOMM 2020 (Algorithm 1; section 3.5 for the target). Defaults where the paper
//! leaves values open are the SIRD evaluation's Swift settings (Le et al., NSDI 2025; see
//! docs/protocols/swift.md). The sender is [`super::window`]; the controller is
//! [`super::window::cc::swift`].
//!
//! Modelled:
//! - window in packets as a float, allowed below one packet; below one packet the sender paces one
//!   packet per rtt / cwnd (the window sender's pacing hook)
//! - delay = the RTT of each ACK, from the data packet's send time echoed by its ACK (the
//!   simulator's exact clock stands in for NIC timestamps)
//! - target = base_target + hops x per_hop + clamp(alpha / sqrt(cwnd) + beta_fs, 0, fs_range); hops =
//!   switches on the flow's (first equal-cost) path
//! - AI of `ai_packets` per RTT under the target; MD by beta (delay - target) / delay, at most
//!   `max_mdf`, at most once per RTT, over it
//! - fast retransmit (duplicate ACKs, NewReno-style recovery in the sender) cuts by `max_mdf` once
//!   per RTT; a timeout cuts by `max_mdf`, and `retx_reset_threshold` consecutive timeouts reset the
//!   window to `min_window_packets`; go-back-N after a timeout (the sender's)
//!
//! Not modelled:
//! - the fabric / endpoint split: there is one target for the whole RTT, which includes the
//!   sender's own NIC queue (the time stamp is taken when the packet is handed to the NIC) and no
//!   host processing delay (the simulator has none), so there is no endpoint window
//! - delayed or coalesced ACKs (one ACK per data packet), SACK, the RTO estimate's Swift-specific
//!   tuning (the sender's RFC 6298 timer is used), multipath hop counts (the first path's)
//! - slow start: the window starts at `initial_window_packets` (setting `slow_start` is an error)

use super::window::cc::swift::{SwiftControl, SwiftParams};
use super::window::cc::WindowSetup;
use super::window::WindowProtocol;
use crate::spec_reader::{Section, SpecResult};
use crate::time::from_us;

/// Swift as a [`WindowProtocol`]; the registered transport is `WindowTransport<Swift>`.
pub struct Swift;

/// Swift's window keys (flow scaling's two windows, the floor), in packets. They end in
/// `_window_packets`, as the window sender's (`initial_window_packets`, `max_window_packets`); the
/// old `cwnd` names fail with the new name.
fn read_window_keys(s: &mut Section) -> SpecResult<(f64, f64, f64)> {
    for (old, new) in [
        ("min_cwnd_packets", "min_window_packets"),
        ("fs_min_cwnd_packets", "fs_min_window_packets"),
        ("fs_max_cwnd_packets", "fs_max_window_packets"),
    ] {
        s.renamed(old, new)?;
    }
    let fs_min = s.f64_or(
        "fs_min_window_packets",
        0.1,
        "packets",
        "[swift] window at which flow scaling adds the whole fs_range (SIRD's Swift: 0.1)",
    )?;
    s.ensure(fs_min > 0.0, "fs_min_window_packets", "must be positive")?;
    let fs_max = s.f64_or(
        "fs_max_window_packets",
        100.0,
        "packets",
        "[swift] window from which flow scaling adds nothing (SIRD's Swift: 100)",
    )?;
    s.ensure(fs_max > fs_min, "fs_max_window_packets", format!("must exceed fs_min_window_packets ({fs_min})"))?;
    let min_cwnd = s.f64_or(
        "min_window_packets",
        0.001,
        "packets",
        "[swift] floor of the window (the paper lets it fall far below one packet; 0.001 is our choice)",
    )?;
    s.ensure(min_cwnd > 0.0 && min_cwnd <= 1.0, "min_window_packets", "must be in (0, 1]")?;
    Ok((fs_min, fs_max, min_cwnd))
}

impl WindowProtocol for Swift {
    const NAMES: &'static [(&'static str, &'static str)] =
        &[("swift", "Swift (Kumar et al., SIGCOMM'20): delay-target AIMD window control with hop and flow scaling")];
    const ECN: bool = false;
    const CONFORMANCE_SPEC: &'static str = "[transport]\ninitial_window_packets = 16\n";
    const WANTS_HOPS: bool = true;
    const CUT_COUNTER: &'static str = "delay_window_cuts";
    type Control = SwiftControl;
    type Params = SwiftParams;

    fn read_params(s: &mut Section) -> SpecResult<SwiftParams> {
        s.ensure(
            !s.has("slow_start"),
            "slow_start",
            "swift has no slow start: its window starts at initial_window_packets",
        )?;
        let ai = s.f64_or("ai_packets", 1.0, "packets", "[swift] additive increase per RTT (SIRD's Swift: 1)")?;
        s.ensure(ai > 0.0 && ai <= 1000.0, "ai_packets", "must be in (0, 1000]")?;
        let beta = s.f64_or("beta", 0.8, "", "[swift] multiplicative-decrease gain (SIRD's Swift: 0.8)")?;
        s.ensure(beta > 0.0 && beta <= 1.0, "beta", "must be in (0, 1]")?;
        let max_mdf = s.f64_or(
            "max_mdf",
            0.5,
            "",
            "[swift] largest fraction of the window one decrease removes (SIRD's Swift: 0.5)",
        )?;
        s.ensure(max_mdf > 0.0 && max_mdf < 1.0, "max_mdf", "must be in (0, 1)")?;
        let base = s.f64_or("base_target_us", 15.0, "us", "[swift] base target delay (SIRD's Swift: 15 us)")?;
        s.ensure(base > 0.0 && base <= 1e6, "base_target_us", "must be in (0, 1e6] us")?;
        let per_hop =
            s.f64_or("per_hop_us", 1.0, "us", "[swift] target added per switch on the path (SIRD's Swift: 1 us)")?;
        s.ensure((0.0..=1e4).contains(&per_hop), "per_hop_us", "must be in [0, 1e4] us")?;
        let fs_range = s.f64_or(
            "fs_range_us",
            75.0,
            "us",
            "[swift] largest flow-scaling addition to the target, 0 = none (SIRD's Swift: 75 us)",
        )?;
        s.ensure((0.0..=1e6).contains(&fs_range), "fs_range_us", "must be in [0, 1e6] us")?;
        let (fs_min, fs_max, min_cwnd) = read_window_keys(s)?;
        let reset = s.u64_or(
            "retx_reset_threshold",
            5,
            "timeouts",
            "[swift] consecutive timeouts that reset the window to min_window_packets (the paper names no value; ours)",
        )?;
        s.ensure((1..=1000).contains(&reset), "retx_reset_threshold", "must be in [1, 1000]")?;
        Ok(SwiftParams {
            ai_packets: ai,
            beta,
            max_mdf,
            base_target_ps: from_us(base) as f64,
            per_hop_ps: from_us(per_hop) as f64,
            fs_range_ps: from_us(fs_range) as f64,
            fs_min_window_packets: fs_min,
            fs_max_window_packets: fs_max,
            min_window_packets: min_cwnd,
            retx_reset_threshold: reset as u32,
        })
    }

    fn control(p: &SwiftParams, w: &WindowSetup) -> SwiftControl {
        SwiftControl::new(p, w, 0)
    }

    fn control_on_path(p: &SwiftParams, w: &WindowSetup, hops: u32) -> SwiftControl {
        SwiftControl::new(p, w, hops)
    }
}
