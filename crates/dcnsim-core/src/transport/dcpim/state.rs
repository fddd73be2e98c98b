//! dcPIM's state as plain data: the timing fixed from the fabric, one flow (both halves), a
//! matched link, a matching message held for the next step, a token held by a sender, a host.

use crate::net::packet::{FlowId, HostId};
use crate::time::Time;
use crate::transport::parts::{MessageLayout, ReceivedSet};

/// Times and sizes fixed once the network is known.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Derived {
    pub bdp_bytes: u64,
    /// BDP in full packets, rounded up (the simulator's `BDP`).
    pub bdp_pkts: u64,
    /// Flows of at most this many packets are short (sent whole, unscheduled).
    pub short_pkts: u64,
    /// Serialization time of a full packet at the host rate.
    pub pkt_time: Time,
    /// Control-packet RTT of the longest host pair.
    pub crtt: Time,
    /// Half a round: the step between a receiver's and a sender's half of a round.
    pub half_round: Time,
    /// Half rounds per epoch (epochs start this often; the matching takes 2r of them).
    pub epoch_ticks: u64,
    /// Packets a channel carries in one data phase (`pim_link_pkts`).
    pub link_pkts: u64,
    /// Token window over all k channels, in packets.
    pub window_pkts: f64,
    pub window_timeout: Time,
    pub resend_timeout: Time,
    pub timeout: Time,
}

impl Derived {
    pub fn data_phase(&self) -> Time {
        self.epoch_ticks * self.half_round
    }
}

/// One flow: the sender's half and the receiver's half (each touched only by its own host).
pub(super) struct Conn {
    pub id: FlowId,
    pub src: HostId,
    pub dst: HostId,
    pub layout: MessageLayout,
    pub start: Time,
    /// At most `short_pkts` packets: sent whole at once, never matched unless packets are lost.
    pub short: bool,
    // Sender.
    /// Unscheduled packets sent so far (short flows).
    pub next_new: u64,
    /// Packets sent at least once.
    pub tx_sent: ReceivedSet,
    /// Packets left as the receiver last said (the sender's SRPT key for tokens).
    pub tx_remaining: u64,
    pub tx_last: Time,
    pub tx_backoff: u32,
    pub tx_timer: bool,
    // Receiver.
    pub rx_known: bool,
    pub rx: ReceivedSet,
    pub rx_done: bool,
    /// Tokens issued (token sequence numbers run 0, 1, ...; a short flow's packets use the first).
    pub tokens: u64,
    /// Highest token sequence number seen in arriving data, or -1.
    pub token_seen: i64,
    /// The data packet the last token asked for.
    pub last_tokened: Option<u64>,
    pub last_token_at: Time,
    /// Every missing packet was tokened: no tokens (nor requests) until then; 0 = not waiting.
    pub resend_until: Time,
}

impl Conn {
    /// Packets the receiver still lacks.
    pub fn rx_remaining(&self) -> u64 {
        self.layout.packets() - self.rx.count()
    }

    /// Tokens issued whose data has not been seen (the simulator's `token_gap`).
    pub fn token_gap(&self) -> i64 {
        self.tokens as i64 - self.token_seen - 1
    }

    /// The next packet to token: after the last tokened one, skipping received packets, wrapping
    /// to the first missing one (the simulator's `get_next_token_seq_num`).
    pub fn next_to_token(&self) -> u64 {
        let n = self.layout.packets();
        debug_assert!(self.rx.count() < n, "flow {} is complete", self.id);
        let mut seq = self.last_tokened.map_or(0, |l| (l + 1) % n);
        loop {
            if seq >= n {
                seq = self.rx.cumulative();
            }
            if !self.rx.contains(seq) {
                return seq;
            }
            seq += 1;
        }
    }
}

/// A receiver's matched sender for one data phase: `channels` of the k, tokens paced at
/// channels/k of the link rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Link {
    pub peer: HostId,
    pub channels: u32,
    /// Smallest flow of the grant that made the link (links are served in this order).
    pub shortest: u64,
    /// When the pending link timer fires (stale timers do not match it).
    pub timer_at: Option<Time>,
    /// The pending timer waits for a full token window to time out (a data arrival may cut it short).
    pub timer_is_timeout: bool,
}

/// A request (held by a sender) or a grant (held by a receiver) until the host's next step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Offer {
    pub slot: u32,
    pub peer: HostId,
    pub channels: u32,
    /// Packets left of the flow it names (the choice key of the first `srpt_rounds` rounds).
    pub remaining: u64,
    pub start: Time,
    pub id: FlowId,
    /// Epoch x 16 + round.
    pub round: u64,
}

/// A token held by a sender: send packet `seq` of the flow in `slot` before `expiry`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Token {
    pub slot: u32,
    pub id: FlowId,
    pub seq: u64,
    pub token_seq: u64,
    pub expiry: Time,
}

#[derive(Default)]
pub(super) struct Host {
    // Sender.
    /// Flows this host sends that are not yet acknowledged.
    pub out: Vec<u32>,
    pub tokens: Vec<Token>,
    /// Channels receivers accepted from this host in the epoch being matched.
    pub tx_matched: u32,
    pub requests: Vec<Offer>,
    // Receiver.
    /// Flows known to this receiver and not complete.
    pub inbound: Vec<u32>,
    /// The data phase's links, and when the phase ends.
    pub links: Vec<Link>,
    pub links_epoch: u64,
    pub phase_end: Time,
    /// Channels this host accepted in the epoch being matched, and the links they form.
    pub rx_matched: u32,
    pub pending: Vec<Link>,
    pub grants: Vec<Offer>,
}

#[derive(Default)]
pub(super) struct Counters {
    pub data_sent: u64,
    pub unscheduled_sent: u64,
    pub retransmitted: u64,
    pub duplicates: u64,
    pub tokens: u64,
    pub tokens_expired: u64,
    pub rts: u64,
    pub probes: u64,
    pub requests: u64,
    pub grants: u64,
    pub accepts: u64,
    pub rejects: u64,
    pub epochs: u64,
    pub matched_channels: u64,
}
