//! ExpressPass's per-flow invariants, checked at the end of every handler in debug builds.

use super::Xpass;
use crate::net::packet::FlowId;

impl Xpass {
    /// Flow `id`'s invariants, if it is still live (a handler may have closed it).
    pub(super) fn check(&self, id: FlowId) {
        if !cfg!(debug_assertions) {
            return;
        }
        let Some(slot) = self.conns.slot(id) else { return };
        let c = &self.conns[slot];
        let packets = c.layout.packets();
        // Sender: a rewind (NACK) only moves next_seq back, below the highest packet sent.
        assert!(c.next_seq <= c.sent_max && c.sent_max <= packets, "flow {id}: next {} max {}", c.next_seq, c.sent_max);
        assert!(!c.got_credit || c.request_due.is_none(), "flow {id}: request timer armed after a credit");
        // Receiver: in-order delivery, done exactly when every packet is in.
        assert!(c.next_expected <= packets, "flow {id}: received past the end");
        assert_eq!(c.done, c.next_expected == packets, "flow {id}: done out of step");
        assert!(c.echo_next <= c.credit_seq, "flow {id}: a credit echoed before it was sent");
        match &c.rc {
            Some(rc) => {
                let max = self.max_rate[c.dst as usize];
                assert!(rc.rate > 0.0 && rc.rate <= max * (1.0 + 1e-9), "flow {id}: credit rate {} of {max}", rc.rate);
                assert!(rc.dropped <= rc.total, "flow {id}: more credits lost than accounted");
            }
            None => assert!(c.credit_seq == 0 && !c.crediting, "flow {id}: credits before the request"),
        }
        // A crediting receiver always has its next credit scheduled (else its credits stall).
        assert!(!c.crediting || c.credit_due.is_some(), "flow {id}: crediting with no credit timer");
    }
}
