//! Rate control for the rate-based sender: the sender ([`super::sender`], [`super::receiver`])
//! owns sequence numbers, ACK/NACK handling, loss recovery and pacing; a [`RateControl`] owns the
//! sending rate (and, optionally, a window), fed by the events the sender sees. DCQCN, TIMELY,
//! HPCC and the like are such controllers (`rate/cc/`).
//!
//! The hooks follow the HPCC authors' ns-3 RDMA NIC (`rdma-hw.cc`, `ReceiveAck`): an ACK or NACK
//! first moves the sender's state, then a CNP flag on it reaches the controller, then the
//! controller's per-ACK update runs (for ACKs and NACKs alike).

use crate::net::pipeline::stages::int::IntHop;
use crate::time::{Rate, Time};

/// An ACK or NACK as the controller sees it, after the sender's state moved.
#[derive(Clone, Copy, Debug)]
pub struct RateAck<'a> {
    pub now: Time,
    /// A NACK (a gap at the receiver) rather than an ACK.
    pub nack: bool,
    /// Payload bytes newly acknowledged cumulatively.
    pub acked_bytes: u64,
    /// The data packet this answers carried CE (the CNP flag on the ACK).
    pub ece: bool,
    /// Send time of that data packet to now.
    pub rtt_sample_ps: Time,
    /// Payload bytes acknowledged cumulatively, and sent (the next new byte), after the update.
    pub acked_total_bytes: u64,
    pub sent_total_bytes: u64,
    /// The INT records the data packet collected, echoed by the receiver (empty unless the
    /// protocol asks for them, [`super::RateProtocol::INT`], and the switches stamp them).
    pub int: &'a [IntHop],
    /// The rate the switches stamped on the data packet this answers, kb/s, echoed by the receiver
    /// (RCP, [`super::RateProtocol::RATE_HEADER`]); 0 without a rate header.
    pub rate_kbps: u32,
    /// The ACK's `aux` field: what the receiver's extension put there (Dart: DASR's sender count).
    pub aux: u32,
}

pub trait RateControl {
    /// Every ACK and NACK, after any CNP was delivered through `on_cnp`.
    fn on_ack(&mut self, ack: &RateAck<'_>);
    /// A NACK reported a gap (a loss, or reordering).
    fn on_nack(&mut self, _now: Time) {}
    /// An ECN echo (CNP) arrived.
    fn on_cnp(&mut self, _now: Time) {}
    /// The retransmission timer expired.
    fn on_rto(&mut self, _now: Time) {}
    /// A data packet of `wire_bytes` went to the NIC (DCQCN's byte counter).
    fn on_send(&mut self, _now: Time, _wire_bytes: u32) {}
    /// The current sending rate: data packets leave no closer than their serialization time at it.
    fn rate(&self) -> Rate;
    /// The start layer (`fast_start`: a PB-FS reduction, a slow-start hand-over) sets the rate to
    /// `bps` (within the controller's bounds); the controller goes on from there.
    fn set_rate(&mut self, now: Time, bps: u64);
    /// PB-FS's Algorithm 1 sets the rate to `bps` ("CurRate = NewRate"); the controller goes on
    /// from there. By default as any start layer's rate ([`Self::set_rate`]).
    fn take_pbfs_rate(&mut self, now: Time, bps: u64) {
        self.set_rate(now, bps);
    }
    /// Payload bytes that may be unacknowledged; `None` = no window (rate only).
    fn window_bytes(&self) -> Option<u64> {
        None
    }
    /// The controller's own next deadline (DCQCN's alpha and rate-increase timers), if any.
    fn wake_at(&self) -> Option<Time> {
        None
    }
    /// That deadline came.
    fn on_wake(&mut self, _now: Time) {}
    /// Control state for traces, (name with unit, value).
    fn state(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("rate_gbps", self.rate().gbps()));
    }
    /// The controller's own invariants (panics if broken); the sender calls it at the end of every
    /// handler in debug builds, after its own checks.
    fn check_invariants(&self) {}
}
