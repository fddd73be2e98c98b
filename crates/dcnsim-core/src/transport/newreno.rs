//! TCP NewReno: the window sender with Reno's window and NewReno's fast recovery, reacting to loss
//! only (data is not ECN-capable).
//!
//! References: RFC 5681 (congestion control), RFC 6582 (NewReno fast recovery), RFC 6298 (RTO).
//! The sender is [`super::window`]; the controller is [`super::window::cc::reno`].
//!
//! Modelled: slow start (or a fixed initial window), congestion avoidance of one MSS per window,
//! fast retransmit after `dupack_threshold` duplicate ACKs, fast recovery with window inflation
//! and partial ACKs, RTO with exponential back-off and go-back-N, out-of-order buffering at the
//! receiver, one ACK per data packet.
//!
//! Connection set-up: optional SYN / SYN-ACK round trip (`connection_setup`, as DCTCP).
//!
//! Not modelled: connection tear-down, delayed ACKs, SACK, receive windows, Nagle,
//! pacing, limited transmit (RFC 3042), TSO.

use super::window::cc::reno::Reno;
use super::window::cc::WindowSetup;
use super::window::WindowProtocol;
use crate::spec_reader::{Section, SpecResult};

/// NewReno as a [`WindowProtocol`]; the registered transport is `WindowTransport<NewReno>`.
pub struct NewReno;

impl WindowProtocol for NewReno {
    const NAMES: &'static [(&'static str, &'static str)] =
        &[("newreno", "TCP NewReno: the same sender with ECN off (reacts to loss only)")];
    const ECN: bool = false;
    const CONFORMANCE_SPEC: &'static str = "[transport]\ninitial_window_packets = 32\n";
    type Control = Reno;
    type Params = ();

    fn read_params(_s: &mut Section) -> SpecResult<()> {
        Ok(())
    }

    fn control(_p: &(), w: &WindowSetup) -> Reno {
        Reno::new(w)
    }
}
