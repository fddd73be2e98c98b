//! Homa's state as plain data: one message (the sender's half and the receiver's half, each
//! touched only by its own host), a host (its sendable messages, its inbound messages, its grant
//! pacer), and the counters.

use crate::net::packet::{FlowId, HostId};
use crate::time::{Rate, Time};
use crate::transport::parts::{MessageLayout, ReceivedSet, ReceiverPacer};
use std::collections::VecDeque;

pub(super) struct Msg {
    pub id: FlowId,
    pub src: HostId,
    pub dst: HostId,
    pub layout: MessageLayout,
    /// Packets sent unscheduled at the head of the message (RTTbytes' worth).
    pub unsched: u64,
    /// Class of the unscheduled packets (by message size).
    pub unsched_prio: u8,
    pub path_key: u32,
    // Sender.
    pub next_new: u64,
    /// Packets the sender may have sent: the unscheduled ones, then the grant frontier.
    pub granted: u64,
    /// Class of scheduled packets, from the latest grant.
    pub sched_prio: u8,
    /// Packets the receiver asked for again.
    pub rtx: VecDeque<u64>,
    /// Listed in the sender host's `ready`.
    pub tx_ready: bool,
    /// Last time the sender heard from the receiver about this message or made progress on it.
    pub tx_last: Time,
    pub tx_backoff: u32,
    pub tx_timer: bool,
    // Receiver.
    pub rx_known: bool,
    /// The receiver's grant frontier (the unscheduled packets count as granted).
    pub rx_granted: u64,
    pub rx: ReceivedSet,
    /// Payload bytes received (distinct packets).
    pub rx_payload: u64,
    pub rx_done: bool,
    /// In the receiver's `inbound` list (known, packets still to grant).
    pub rx_listed: bool,
    pub rx_last: Time,
    pub rx_timer: bool,
    pub rx_backoff: u32,
}

impl Msg {
    #[inline]
    pub fn packets(&self) -> u64 {
        self.layout.packets()
    }

    #[inline]
    pub fn sendable(&self) -> bool {
        !self.rtx.is_empty() || self.next_new < self.granted
    }

    /// Packets the sender still has to send (SRPT key at the sender: the simulator's SRBF).
    #[inline]
    pub fn left_to_send(&self) -> u64 {
        self.packets() - self.next_new + self.rtx.len() as u64
    }

    /// Payload bytes the receiver still waits for (its SRPT key).
    #[inline]
    pub fn left_to_receive(&self) -> u64 {
        self.layout.size_bytes() - self.rx_payload
    }

    /// Granted (scheduled or unscheduled) packets that have not arrived.
    #[inline]
    pub fn outstanding(&self) -> u64 {
        self.rx_granted - self.rx.count()
    }

    /// Class of packet `i` as the sender sends it now.
    #[inline]
    pub fn prio_of(&self, i: u64) -> u8 {
        if i < self.unsched {
            self.unsched_prio
        } else {
            self.sched_prio
        }
    }
}

pub(super) struct Host {
    // Sender.
    /// Messages from this host with a packet they may send now (slots).
    pub ready: Vec<u32>,
    // Receiver.
    /// Known messages to this host with packets still to grant (slots).
    pub inbound: Vec<u32>,
    pub pacer: ReceiverPacer,
    pub rate: Rate,
}

impl Host {
    pub fn new(rate: Rate) -> Host {
        Host { ready: Vec::new(), inbound: Vec::new(), pacer: ReceiverPacer::default(), rate }
    }
}

#[derive(Default)]
pub(super) struct Counters {
    pub data_sent: u64,
    pub unscheduled_sent: u64,
    pub retransmitted: u64,
    pub grants: u64,
    pub resend_requests: u64,
    pub busy_sent: u64,
    pub receiver_timeouts: u64,
    pub probes: u64,
    pub duplicates: u64,
}
