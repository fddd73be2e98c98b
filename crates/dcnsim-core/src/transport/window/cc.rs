//! Congestion control for the window sender, split from reliable delivery: the sender
//! ([`super::sender`]) owns sequence numbers, ACK clocking, loss detection and retransmission, and
//! tells a [`CongestionControl`] what happened; the controller owns the window (and, optionally,
//! a pacing rate) and nothing else.
//!
//! Recovery is the sender's decision (RFC 6582's `recover` point); the window arithmetic during
//! recovery (inflation by one MSS per duplicate ACK, deflation on partial ACKs) is the
//! controller's, since it is written in terms of cwnd. [`reno::RenoWindow`] implements it once
//! for controllers built on Reno's window.

pub mod dctcp;
pub mod dx;
pub mod hull;
pub mod reno;
pub mod swift;

use crate::time::{Rate, Time};

/// Where an ACK of new data falls relative to loss recovery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckPhase {
    /// Not in recovery.
    Open,
    /// In recovery, and the ACK stops short of the recovery point: the next hole was resent.
    PartialAck,
    /// The ACK covers the recovery point: recovery is over.
    RecoveryEnd,
}

/// An ACK that acknowledged new data (duplicate ACKs go to [`CongestionControl::on_dupack`]).
#[derive(Clone, Copy, Debug)]
pub struct AckInfo {
    pub now: Time,
    /// Bytes newly acknowledged by this cumulative ACK.
    pub acked_bytes: u64,
    /// The receiver echoed a CE mark for the data packet this ACK answers.
    pub ece: bool,
    /// Send time of that data packet to now (echoed time stamp, so no Karn ambiguity).
    pub rtt_sample_ps: Time,
    /// The sender's state after the ACK.
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub snd_max: u64,
    pub phase: AckPhase,
}

/// A loss the sender detected (fast retransmit or timeout).
#[derive(Clone, Copy, Debug)]
pub struct LossInfo {
    pub now: Time,
    pub snd_una: u64,
    pub snd_max: u64,
    /// Duplicate ACKs seen (the threshold, for fast retransmit; 0 for a timeout).
    pub dupacks: u32,
}

impl LossInfo {
    /// Bytes sent and not acknowledged (RFC 5681's FlightSize).
    pub fn flight_bytes(&self) -> u64 {
        self.snd_max - self.snd_una
    }
}

/// A window-based congestion controller. Plain data, dispatched statically (each protocol is the
/// window sender instantiated with its controller).
pub trait CongestionControl {
    /// New data was acknowledged. Returns true if the controller cut its window for a congestion
    /// signal carried by the ACK (an ECN echo), for the protocol's counters.
    fn on_ack(&mut self, ack: &AckInfo) -> bool;
    /// A duplicate ACK arrived while in recovery (one segment left the network).
    fn on_dupack(&mut self);
    /// Duplicate ACKs reached the threshold: the first unacknowledged segment is resent and
    /// recovery starts.
    fn on_fast_retransmit(&mut self, loss: &LossInfo);
    /// The retransmission timer expired: the sender goes back to the first unacknowledged byte.
    fn on_rto(&mut self, loss: &LossInfo);
    /// Bytes that may be in flight: at least one MSS, unless `WindowSetup::sub_packet_ecn_cuts` lets
    /// an ECN cut take it under (it stays above zero).
    fn window_bytes(&self) -> f64;
    /// Sets the window to `bytes` (within the controller's bounds), as after a congestion cut: the
    /// controller continues from it without slow start (PB-FS's rate correction, `window::pbfs`).
    fn set_window(&mut self, now: Time, bytes: f64);
    /// When set, the sender spaces data packets at this rate (else it sends as the window opens).
    fn pacing_rate(&self) -> Option<Rate> {
        None
    }
    /// Control state for traces, (name with unit, value); the sender adds `in_flight_bytes` and
    /// `srtt_us` (docs/tracing.md lists each protocol's variables).
    fn state(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("cwnd_bytes", self.window_bytes()));
    }
    /// The controller's own invariants (panics if broken); the sender calls it at the end of every
    /// handler in debug builds, after its own checks.
    fn check_invariants(&self) {}
}

/// The window keys shared by window-based controllers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WindowSetup {
    pub mss_bytes: u64,
    pub initial_window_packets: u64,
    /// Cap on the window; `None` = none.
    pub max_window_packets: Option<u64>,
    /// Start in slow start (ssthresh infinite); false = start in congestion avoidance.
    pub slow_start: bool,
    /// An ECN cut may take the window under one MSS, and ssthresh stays at least two (RFC 3168
    /// 6.1.2, ns-2's TcpAgent; `window_floor = "none"`); false = every cut floors at one MSS.
    pub sub_packet_ecn_cuts: bool,
}
