//! The receiving half of a queue pair, as a pure state machine: which data it keeps and what it
//! answers (ACK, NACK or nothing).
//!
//! Go-back-N, after the HPCC authors' ns-3 NIC (`rdma-hw.cc`, `ReceiverCheckSeq`): the expected
//! packet advances the cumulative point and is ACKed every `ack_every_packets` packets (1 = every
//! packet, the reference's L2AckInterval in its runs) and at the end of the message; a later
//! packet is discarded and answered with a NACK carrying the expected PSN, unless a NACK for the
//! same expected PSN went less than the NACK interval ago (500 us in the reference's runs); an
//! earlier one is a duplicate. The reference sends nothing for duplicates (its fabric is
//! lossless); here they are ACKed, as InfiniBand responders do for duplicate requests, so a
//! sender that timed out after losing ACKs learns where the receiver is.
//!
//! Selective repeat (IRN, section 3.1): out-of-order packets are kept, and each is answered with
//! a NACK carrying the cumulative ACK and its own PSN (the SACK); duplicates are ACKed.

use super::sender::Recovery;
use crate::time::Time;
use crate::transport::parts::ReceivedSet;

/// The answer to a data packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    None,
    /// A cumulative ACK.
    Ack,
    /// A NACK; `sack` = the PSN that arrived (selective repeat uses it).
    Nack {
        sack: u64,
    },
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReceiverConfig {
    pub mode: Recovery,
    pub ack_every_packets: u64,
    pub nack_interval: Time,
}

#[derive(Clone, Debug, Default)]
pub struct QpReceiver {
    held: ReceivedSet,
    /// Go-back-N: the expected PSN of the last NACK, and when the next NACK for it may go.
    last_nack: Option<u64>,
    nack_allowed_at: Time,
}

impl QpReceiver {
    /// The cumulative ACK: every PSN below this arrived.
    #[inline]
    pub fn cumulative(&self) -> u64 {
        self.held.cumulative()
    }

    /// Distinct packets held.
    #[inline]
    pub fn count(&self) -> u64 {
        self.held.count()
    }

    /// Packet `psn` of a `packets`-packet message arrived at `now`. Returns whether it is new
    /// (to deliver) and the answer.
    pub fn on_data(&mut self, psn: u64, packets: u64, now: Time, cfg: &ReceiverConfig) -> (bool, Reply) {
        debug_assert!(psn < packets);
        let expected = self.held.cumulative();
        if psn < expected || self.held.contains(psn) {
            return (false, Reply::Ack);
        }
        if psn == expected {
            self.held.insert(psn);
            let cum = self.held.cumulative();
            let ack = cum.is_multiple_of(cfg.ack_every_packets) || cum == packets;
            return (true, if ack { Reply::Ack } else { Reply::None });
        }
        match cfg.mode {
            Recovery::SelectiveRepeat => {
                self.held.insert(psn);
                (true, Reply::Nack { sack: psn })
            }
            Recovery::GoBackN => {
                if now >= self.nack_allowed_at || self.last_nack != Some(expected) {
                    self.nack_allowed_at = now + cfg.nack_interval;
                    self.last_nack = Some(expected);
                    (false, Reply::Nack { sack: psn })
                } else {
                    (false, Reply::None)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GBN: ReceiverConfig = ReceiverConfig { mode: Recovery::GoBackN, ack_every_packets: 1, nack_interval: 500 };
    const SR: ReceiverConfig =
        ReceiverConfig { mode: Recovery::SelectiveRepeat, ack_every_packets: 1, nack_interval: 500 };

    #[test]
    fn go_back_n_discards_gaps_and_nacks_once_per_interval() {
        let mut r = QpReceiver::default();
        assert_eq!(r.on_data(0, 10, 0, &GBN), (true, Reply::Ack));
        // 1 lost: 2, 3, 4 arrive; one NACK, the rest within the interval are silent.
        assert_eq!(r.on_data(2, 10, 10, &GBN), (false, Reply::Nack { sack: 2 }));
        assert_eq!(r.on_data(3, 10, 20, &GBN), (false, Reply::None));
        assert_eq!(r.on_data(4, 10, 509, &GBN), (false, Reply::None));
        // The interval passed: another NACK for the same hole.
        assert_eq!(r.on_data(5, 10, 510, &GBN), (false, Reply::Nack { sack: 5 }));
        assert_eq!(r.cumulative(), 1);
        // The resent 1 arrives, then a new hole at 3: a NACK at once (another expected PSN).
        assert_eq!(r.on_data(1, 10, 600, &GBN), (true, Reply::Ack));
        assert_eq!(r.on_data(3, 10, 601, &GBN), (false, Reply::Nack { sack: 3 }));
        // Duplicates are ACKed (the receiver's position), not delivered.
        assert_eq!(r.on_data(0, 10, 602, &GBN), (false, Reply::Ack));
        assert_eq!(r.count(), 2);
    }

    #[test]
    fn selective_repeat_keeps_out_of_order_packets_and_sacks_each() {
        let mut r = QpReceiver::default();
        assert_eq!(r.on_data(1, 4, 0, &SR), (true, Reply::Nack { sack: 1 }));
        assert_eq!(r.on_data(3, 4, 0, &SR), (true, Reply::Nack { sack: 3 }));
        assert_eq!(r.on_data(3, 4, 0, &SR), (false, Reply::Ack));
        assert_eq!(r.on_data(0, 4, 0, &SR), (true, Reply::Ack));
        assert_eq!(r.cumulative(), 2);
        assert_eq!(r.on_data(2, 4, 0, &SR), (true, Reply::Ack));
        assert_eq!((r.cumulative(), r.count()), (4, 4));
    }

    #[test]
    fn acks_coalesce_but_the_last_packet_is_always_acked() {
        let cfg = ReceiverConfig { ack_every_packets: 4, ..GBN };
        let mut r = QpReceiver::default();
        let replies: Vec<Reply> = (0..6).map(|i| r.on_data(i, 6, 0, &cfg).1).collect();
        use Reply::*;
        assert_eq!(replies, vec![None, None, None, Ack, None, Ack]);
    }
}
