//! SIRD's state as plain data: one message (both halves), an ordered host pair (the sender's
//! credit from a receiver and the receiver's bucket for that sender), and a host.

use crate::net::packet::{FlowId, HostId};
use crate::time::{Rate, Time};
use crate::transport::parts::{MessageLayout, ReceivedSet, ReceiverPacer};
use std::collections::VecDeque;

/// The parameters in bytes, fixed once the network is known.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Derived {
    pub bdp: u64,
    pub budget: i64,
    pub sb_max: f64,
    pub unsch_thr: u64,
    pub sthr: f64,
    /// Loop floors in bytes: [network, sender].
    pub floors: [f64; 2],
}

/// One message: the sender's half and the receiver's half (each touched only by its own host).
pub(super) struct Conn {
    pub id: FlowId,
    pub src: HostId,
    pub dst: HostId,
    pub layout: MessageLayout,
    /// Unscheduled packets at the head of the message.
    pub prefix: u64,
    pub pair: u32,
    pub path_key: u32,
    // Sender.
    pub next_new: u64,
    /// Packets the sender may have sent (unscheduled prefix, then credit).
    pub granted: u64,
    /// Packets the receiver asked to be sent again.
    pub rtx: VecDeque<u64>,
    /// Last time the sender heard about this message or sent a packet of it.
    pub tx_last: Time,
    pub tx_backoff: u32,
    pub tx_timer: bool,
    /// Counted in its pair's and host's `ready` (cached `sendable()`).
    pub tx_ready: bool,
    // Receiver.
    pub rx_known: bool,
    /// Credit frontier: packets below it were granted (or unscheduled).
    pub rx_granted: u64,
    pub rx: ReceivedSet,
    /// Payload bytes received (distinct packets).
    pub rx_payload: u64,
    pub rx_done: bool,
    /// In the receiver's `inbound` list (known, packets still to credit).
    pub rx_listed: bool,
    /// Last data arrival, credit or resend request for this message.
    pub rx_last: Time,
    pub rx_timer: bool,
    /// Receiver timeouts since the message last had nothing outstanding: the next waits
    /// timeout x 2^this.
    pub rx_backoff: u32,
}

impl Conn {
    #[inline]
    pub fn packets(&self) -> u64 {
        self.layout.packets()
    }

    #[inline]
    pub fn sendable(&self) -> bool {
        !self.rtx.is_empty() || self.next_new < self.granted
    }

    /// Wire bytes of packets [a, b), signed for the credit arithmetic.
    #[inline]
    pub fn wire(&self, a: u64, b: u64) -> i64 {
        self.layout.wire_bytes_of(a, b) as i64
    }

    /// Packets the sender still has to send: never-sent ones plus requested resends.
    #[inline]
    pub fn left_to_send(&self) -> u64 {
        self.packets() - self.next_new + self.rtx.len() as u64
    }

    /// Unused credit the sender holds for this message (wire bytes): granted but never sent, plus
    /// requested resends.
    pub fn credit_held(&self) -> i64 {
        self.wire(self.next_new, self.granted) + self.rtx.iter().map(|&i| self.wire(i, i + 1)).sum::<i64>()
    }

    /// Credit the receiver granted (unscheduled prefix included) whose data has not arrived (wire
    /// bytes); 0 before the receiver knows the message. (For the invariant checks.)
    #[cfg(debug_assertions)]
    pub fn rx_outstanding(&self) -> i64 {
        let count = self.rx.count();
        let last_in = count > 0 && self.rx.contains(self.layout.last_packet());
        // Every packet held is full-sized but the last, if held.
        let held = if last_in { self.wire(self.packets() - count, self.packets()) } else { self.wire(0, count) };
        self.wire(0, self.rx_granted) - held
    }
}

/// SRPT order of messages: fewest packets (at the receiver by default, payload bytes) left, ties to
/// the lower flow id, as one integer for [`srpt_pick`](crate::transport::parts::srpt_pick). The
/// count saturates at 2^32 - 2 (beyond that, ties go by id), so `NOT_CANDIDATE` stays above every key.
#[inline]
pub(super) fn srpt_key(left: u64, id: FlowId) -> u64 {
    left.min(u32::MAX as u64 - 1) << 32 | id as u64
}

/// The key of an entry the choice must skip.
pub(super) const NOT_CANDIDATE: u64 = u64::MAX;

/// A DCTCP-like loop sizing a per-sender bucket.
#[derive(Clone, Copy, Debug)]
pub(super) struct Loop {
    pub size: f64,
    pub alpha: f64,
    pub marked: u32,
    pub since_cut: u32,
    pub next_cut: u32,
}

/// An ordered host pair src -> dst: the sender's credit from dst, and dst's bucket for src.
pub(super) struct Pair {
    // Sender side (at src).
    /// Wire bytes src may send to dst: credited or unscheduled but unsent, plus requested resends.
    pub credit: i64,
    /// Messages src -> dst not yet acknowledged (conn slots).
    pub msgs: Vec<u32>,
    /// Of those, how many still have never-sent packets.
    pub unsent: u32,
    /// The sender's fair-share deficit for this receiver (0 while it has nothing to send).
    pub deficit: f64,
    /// Of those, how many have a packet they may send now.
    pub ready: u32,
    // Receiver side (at dst).
    /// Credit outstanding to src (granted or unscheduled, not yet received), wire bytes.
    pub sb: i64,
    /// [network (CE), sender (csn)].
    pub loops: [Loop; 2],
    pub since_ratio: u32,
    pub next_ratio: u32,
}

impl Pair {
    pub fn new(sb_max: f64, mtu: f64) -> Pair {
        let l = Loop { size: sb_max, alpha: 0.0, marked: 0, since_cut: 0, next_cut: ((sb_max / mtu) as u32).max(1) };
        Pair {
            credit: 0,
            msgs: Vec::new(),
            unsent: 0,
            deficit: 0.0,
            ready: 0,
            sb: 0,
            loops: [l, l],
            since_ratio: 0,
            next_ratio: 1,
        }
    }

    /// SB(s): the most conservative of the two loops.
    #[inline]
    pub fn cap(&self) -> f64 {
        self.loops[0].size.min(self.loops[1].size)
    }
}

pub(super) struct Host {
    // Sender.
    /// Pairs (receivers) this host has a packet for that it may send now.
    pub ready_pairs: Vec<u32>,
    /// Unused credit held over all receivers (wire bytes).
    pub credit: i64,
    /// Receivers this host still has never-sent data for.
    pub sending_receivers: u32,
    /// Messages from this host with never-sent packets (the sum of its pairs' `unsent`).
    pub unsent_msgs: u32,
    /// Messages from this host with a packet they may send now.
    pub ready: u32,
    // Receiver.
    /// b: credit outstanding over all senders (wire bytes); may exceed B through unscheduled data.
    pub b: i64,
    /// Of b, the unscheduled prefixes not yet received (B caps the rest).
    pub unscheduled: i64,
    /// Known messages with packets still to credit (conn slots).
    pub inbound: Vec<u32>,
    pub rr: usize,
    pub pacer: ReceiverPacer,
    pub rate: Rate,
    /// Pairs this host sends on and receives on, for the invariant checks.
    #[cfg(debug_assertions)]
    pub out_pairs: Vec<u32>,
    #[cfg(debug_assertions)]
    pub in_pairs: Vec<u32>,
}

impl Host {
    pub fn new(rate: Rate) -> Host {
        Host {
            ready_pairs: Vec::new(),
            credit: 0,
            sending_receivers: 0,
            unsent_msgs: 0,
            ready: 0,
            b: 0,
            unscheduled: 0,
            inbound: Vec::new(),
            rr: 0,
            pacer: ReceiverPacer::default(),
            rate,
            #[cfg(debug_assertions)]
            out_pairs: Vec::new(),
            #[cfg(debug_assertions)]
            in_pairs: Vec::new(),
        }
    }
}

#[derive(Default)]
pub(super) struct Counters {
    pub data_sent: u64,
    pub unscheduled_sent: u64,
    pub retransmitted: u64,
    pub credits: u64,
    pub credit_requests: u64,
    pub probes: u64,
    pub resend_requests: u64,
    pub receiver_timeouts: u64,
    pub csn_marked: u64,
    pub cuts_network: u64,
    pub cuts_sender: u64,
    pub duplicates: u64,
}
