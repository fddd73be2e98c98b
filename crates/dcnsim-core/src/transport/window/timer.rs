//! The window family's timer kinds, one enum for the window transports and MPTCP (whose subflows
//! are window senders): the sender's per-subflow retransmission and pacing timers, MPTCP's
//! per-subflow SYN timer, and the window transport's own two.
//!
//! Byte layout: the top two bits say which per-subflow kind, the low six bits the subflow (MPTCP
//! has at most [`SUBFLOWS`]); `0b11` is the subflow-less kinds. A plain connection is subflow 0.

use crate::transport::timer::TimerKind;

/// Subflows a per-subflow kind can name (the low six bits).
pub const SUBFLOWS: u8 = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowTimer {
    /// The retransmission timer of a subflow (id = flow).
    Rto(u8),
    /// The pacing slot of a subflow (id = flow).
    Pace(u8),
    /// MPTCP: send the SYN of a subflow again (id = flow).
    SubflowSyn(u8),
    /// The window transport hands a message to the sender's stack once its OS overhead has passed
    /// (id = flow).
    Start,
    /// The window transport's handshake sends a connection's SYN again (id = flow).
    Syn,
}

const SUBFLOW: u8 = SUBFLOWS - 1;

impl TimerKind for WindowTimer {
    const PROTOCOL: &'static str = "window";

    #[inline]
    fn encode(self) -> u8 {
        let (tag, subflow) = match self {
            WindowTimer::Rto(s) => (0, s),
            WindowTimer::Pace(s) => (1, s),
            WindowTimer::SubflowSyn(s) => (2, s),
            WindowTimer::Start => (3, 0),
            WindowTimer::Syn => (3, 1),
        };
        debug_assert!(subflow < SUBFLOWS, "subflow {subflow} has no timer kind");
        tag << 6 | subflow
    }

    #[inline]
    fn decode(byte: u8) -> Option<Self> {
        let s = byte & SUBFLOW;
        Some(match (byte >> 6, s) {
            (0, _) => WindowTimer::Rto(s),
            (1, _) => WindowTimer::Pace(s),
            (2, _) => WindowTimer::SubflowSyn(s),
            (_, 0) => WindowTimer::Start,
            (_, 1) => WindowTimer::Syn,
            _ => return None,
        })
    }

    fn all() -> Vec<Self> {
        let per_subflow = [WindowTimer::Rto, WindowTimer::Pace, WindowTimer::SubflowSyn];
        let mut all: Vec<Self> = per_subflow.iter().flat_map(|k| (0..SUBFLOWS).map(k)).collect();
        all.extend([WindowTimer::Start, WindowTimer::Syn]);
        all
    }
}
