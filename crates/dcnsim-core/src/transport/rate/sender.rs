//! The sending half of a queue pair, as a pure state machine over packet sequence numbers (PSNs,
//! packet indexes of the message): what to send next, and how ACKs, NACKs and timeouts move it.
//! Pacing, windows and timers are the caller's.
//!
//! Go-back-N (RoCEv2 as the HPCC authors' ns-3 NIC models it, `rdma-hw.cc`): a cumulative ACK
//! moves snd_una (`Acknowledge`); a NACK acknowledges cumulatively too, then sends the sender
//! back to the NACKed sequence, snd_nxt = snd_una (`RecoverQueue`); everything after it is sent
//! again. A timeout does the same (the reference has no timeout: its fabric is lossless).
//!
//! Selective repeat (IRN: R. Mittal et al., "Revisiting Network Support for RDMA", SIGCOMM 2018,
//! section 3.1): a NACK carries the cumulative ACK and the PSN that arrived out of order (a
//! one-packet SACK). The first NACK starts recovery with `recover` = snd_max; a packet is lost
//! when a later one was SACKed; lost packets go before new ones, each once per recovery
//! (a lost retransmission waits for the timeout); recovery ends when the cumulative ACK passes
//! `recover`. A timeout treats every packet sent and not SACKed as lost.

use crate::transport::parts::{MessageLayout, ReceivedSet};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    GoBackN,
    SelectiveRepeat,
}

/// What the sender would send next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// A packet on the new-data path (in go-back-N also a resend after going back), gated by the
    /// window and the in-flight cap; `retx` if it was sent before.
    Data { psn: u64, retx: bool },
    /// A selective-repeat retransmission of a lost packet (not gated: it adds nothing in flight).
    Lost { psn: u64 },
}

#[derive(Clone, Debug)]
pub struct QpSender {
    pub layout: MessageLayout,
    mode: Recovery,
    /// First PSN not cumulatively acknowledged.
    snd_una: u64,
    /// Next PSN on the new-data path.
    snd_nxt: u64,
    /// One past the highest PSN ever sent.
    snd_max: u64,
    /// Selective repeat: PSNs the receiver is known to hold (cumulatively up to snd_una, plus SACKs).
    sacked: ReceivedSet,
    in_recovery: bool,
    recover: u64,
    /// Next candidate for retransmission, and the bound below which unSACKed packets are lost.
    rtx_next: u64,
    rtx_limit: u64,
}

impl QpSender {
    pub fn new(layout: MessageLayout, mode: Recovery) -> QpSender {
        QpSender {
            layout,
            mode,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            sacked: ReceivedSet::default(),
            in_recovery: false,
            recover: 0,
            rtx_next: 0,
            rtx_limit: 0,
        }
    }

    #[inline]
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }

    #[inline]
    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }

    /// Packets sent and not yet cumulatively acknowledged.
    #[inline]
    pub fn outstanding(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    /// Packets on the new-data path not yet acknowledged (IRN's in-flight count, go-back-N's
    /// on-the-fly count).
    #[inline]
    pub fn in_flight(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }

    /// Payload bytes on the new-data path not yet acknowledged.
    #[inline]
    pub fn in_flight_bytes(&self) -> u64 {
        self.layout.offset(self.snd_nxt) - self.layout.offset(self.snd_una)
    }

    #[inline]
    pub fn done(&self) -> bool {
        self.snd_una == self.layout.packets()
    }

    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    /// The next packet to send, if any.
    pub fn peek(&mut self) -> Option<Next> {
        if self.mode == Recovery::SelectiveRepeat {
            self.rtx_next = self.rtx_next.max(self.snd_una);
            while self.rtx_next < self.rtx_limit && self.sacked.contains(self.rtx_next) {
                self.rtx_next += 1;
            }
            if self.rtx_next < self.rtx_limit {
                return Some(Next::Lost { psn: self.rtx_next });
            }
        }
        (self.snd_nxt < self.layout.packets())
            .then_some(Next::Data { psn: self.snd_nxt, retx: self.snd_nxt < self.snd_max })
    }

    /// `next` (as `peek` returned it) went out. Returns whether it carried the message's last
    /// byte for the first time (the flow's `Sent` milestone; a resend never does).
    pub fn sent(&mut self, next: Next) -> bool {
        match next {
            Next::Lost { psn } => {
                debug_assert_eq!(psn, self.rtx_next);
                self.rtx_next += 1;
                false
            }
            Next::Data { psn, .. } => {
                debug_assert_eq!(psn, self.snd_nxt);
                let packets = self.layout.packets();
                let first_last = psn + 1 == packets && self.snd_max < packets;
                self.snd_nxt += 1;
                self.snd_max = self.snd_max.max(self.snd_nxt);
                first_last
            }
        }
    }

    /// A cumulative ACK: every PSN below `cum` arrived. Returns the packets newly acknowledged;
    /// an ACK for more than was sent is ignored.
    pub fn on_ack(&mut self, cum: u64) -> u64 {
        if cum <= self.snd_una || cum > self.snd_max {
            return 0;
        }
        let acked = cum - self.snd_una;
        self.snd_una = cum;
        self.snd_nxt = self.snd_nxt.max(cum); // go-back-N: the receiver had more than we resent
        if self.mode == Recovery::SelectiveRepeat {
            self.sacked.advance_to(cum);
            if self.in_recovery && self.snd_una >= self.recover {
                self.in_recovery = false;
            }
        }
        acked
    }

    /// A NACK: cumulative ACK `cum`, and `sack`, the PSN that arrived out of order. Returns the
    /// packets newly acknowledged.
    pub fn on_nack(&mut self, cum: u64, sack: u64) -> u64 {
        if cum > self.snd_max {
            return 0;
        }
        let acked = self.on_ack(cum);
        match self.mode {
            Recovery::GoBackN => self.snd_nxt = self.snd_una,
            Recovery::SelectiveRepeat => {
                // A real NACK's SACK lies above its cumulative ACK, within what was sent.
                if sack <= self.snd_una || sack >= self.snd_max {
                    return acked;
                }
                self.sacked.insert(sack);
                if !self.in_recovery {
                    self.in_recovery = true;
                    self.recover = self.snd_max;
                    self.rtx_next = self.snd_una;
                    self.rtx_limit = sack;
                } else {
                    self.rtx_limit = self.rtx_limit.max(sack);
                }
            }
        }
        acked
    }

    /// The retransmission timer expired.
    pub fn on_timeout(&mut self) {
        match self.mode {
            Recovery::GoBackN => self.snd_nxt = self.snd_una,
            Recovery::SelectiveRepeat => {
                self.in_recovery = true;
                self.recover = self.snd_max;
                self.rtx_next = self.snd_una;
                self.rtx_limit = self.snd_max;
            }
        }
    }

    pub fn check_invariants(&self) {
        let n = self.layout.packets();
        assert!(self.snd_una <= self.snd_nxt && self.snd_nxt <= self.snd_max && self.snd_max <= n);
        if self.mode == Recovery::SelectiveRepeat {
            assert_eq!(self.snd_nxt, self.snd_max, "selective repeat never goes back");
            assert_eq!(self.sacked.cumulative(), self.snd_una);
            assert!(self.rtx_limit <= self.snd_max);
            assert!(!self.in_recovery || self.recover > self.snd_una);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::Framing;

    fn qp(packets: u64, mode: Recovery) -> QpSender {
        let f = Framing { mtu_bytes: 1000, header_bytes: 0, control_bytes: 64 };
        QpSender::new(MessageLayout::new(packets * 1000, f), mode)
    }

    /// Sends everything peek offers, up to `n` packets; returns what went.
    fn send(q: &mut QpSender, n: usize) -> Vec<Next> {
        let mut out = Vec::new();
        while out.len() < n {
            let Some(x) = q.peek() else { break };
            q.sent(x);
            out.push(x);
        }
        out
    }

    fn data(psns: std::ops::Range<u64>, retx: bool) -> Vec<Next> {
        psns.map(|psn| Next::Data { psn, retx }).collect()
    }

    #[test]
    fn go_back_n_resends_everything_from_the_nacked_sequence() {
        let mut q = qp(10, Recovery::GoBackN);
        assert_eq!(send(&mut q, 6), data(0..6, false));
        // Packet 2 lost: the receiver ACKs 0, 1 then NACKs at 2.
        assert_eq!(q.on_ack(2), 2);
        assert_eq!(q.on_nack(2, 3), 0);
        assert_eq!((q.snd_una(), q.snd_nxt(), q.outstanding()), (2, 2, 4));
        assert_eq!(send(&mut q, 5), [data(2..6, true), data(6..7, false)].concat());
        q.check_invariants();
        // A late ACK beyond what was resent moves snd_nxt forward too.
        q.on_nack(3, 5);
        assert_eq!(q.snd_nxt(), 3);
        assert_eq!(q.on_ack(6), 3);
        assert_eq!(q.snd_nxt(), 6);
        assert_eq!(send(&mut q, 10), [data(6..7, true), data(7..10, false)].concat());
        assert_eq!(q.on_ack(11), 0, "an ACK beyond what was sent is ignored");
        q.on_ack(10);
        assert!(q.done());
        q.check_invariants();
    }

    #[test]
    fn only_the_first_transmission_of_the_last_packet_is_the_flows_sent_milestone() {
        for mode in [Recovery::GoBackN, Recovery::SelectiveRepeat] {
            let mut q = qp(3, mode);
            let firsts: Vec<bool> = (0..3).map(|_| q.peek().map(|x| q.sent(x)).unwrap()).collect();
            assert_eq!(firsts, [false, false, true], "{mode:?}");
            // Everything lost: the timeout resends all three, the last one included, and none is
            // the milestone again.
            q.on_timeout();
            while let Some(x) = q.peek() {
                assert!(!q.sent(x), "{mode:?}: the resend of {x:?}");
            }
        }
        let mut one = qp(1, Recovery::GoBackN);
        let x = one.peek().unwrap();
        assert!(one.sent(x), "a one-packet message is sent by its only packet");
    }

    #[test]
    fn selective_repeat_resends_only_the_holes_once_per_recovery() {
        let mut q = qp(20, Recovery::SelectiveRepeat);
        send(&mut q, 10);
        // 2 and 5 lost; 3, 4, 6 arrive out of order, each NACKed with its PSN.
        q.on_ack(2);
        q.on_nack(2, 3);
        assert!(q.in_recovery());
        assert_eq!(send(&mut q, 1), vec![Next::Lost { psn: 2 }]);
        q.on_nack(2, 4);
        q.on_nack(2, 6);
        // 5 is lost now (6 was SACKed); 2 is not resent again in this recovery.
        assert_eq!(send(&mut q, 1), vec![Next::Lost { psn: 5 }]);
        // Then new data.
        assert_eq!(send(&mut q, 2), data(10..12, false));
        q.check_invariants();
        // The resent 2 arrives: cumulative ACK up to 5 (3, 4 held); then 5, 6 and the rest.
        q.on_ack(5);
        assert!(q.in_recovery(), "recover = 10 not passed yet");
        q.on_ack(7);
        assert_eq!(q.peek(), Some(Next::Data { psn: 12, retx: false }));
        q.on_ack(10);
        assert!(!q.in_recovery());
        q.check_invariants();
    }

    #[test]
    fn a_selective_repeat_timeout_resends_every_unsacked_packet() {
        let mut q = qp(8, Recovery::SelectiveRepeat);
        send(&mut q, 8);
        q.on_ack(1);
        q.on_nack(1, 4);
        send(&mut q, 3); // 1, 2, 3 resent
        q.on_timeout();
        let again: Vec<u64> = send(&mut q, 20)
            .into_iter()
            .map(|n| match n {
                Next::Lost { psn } => psn,
                Next::Data { psn, .. } => panic!("no new data left, got {psn}"),
            })
            .collect();
        assert_eq!(again, vec![1, 2, 3, 5, 6, 7]);
        q.check_invariants();
    }

    #[test]
    fn stale_and_bogus_feedback_is_ignored() {
        for mode in [Recovery::GoBackN, Recovery::SelectiveRepeat] {
            let mut q = qp(5, mode);
            send(&mut q, 3);
            q.on_ack(2);
            assert_eq!(q.on_ack(1), 0);
            assert_eq!(q.on_nack(9, 9), 0);
            q.on_nack(2, 100);
            q.on_nack(2, 0);
            q.on_nack(2, 2);
            assert_eq!(q.snd_una(), 2);
            q.check_invariants();
        }
    }
}
