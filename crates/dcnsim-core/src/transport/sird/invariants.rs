//! SIRD's bookkeeping, checked in debug builds after every handler on what it touched: the
//! message (if it still exists), its host pair and both hosts. Each cached sum is recomputed from
//! the level below (messages -> pair -> host), and the buckets are checked against their bounds.
//! Release builds compile the checks to nothing.

use super::Sird;
use crate::net::packet::HostId;

impl Sird {
    /// After a handler that touched message `slot` (`None` once freed) of pair `pi`, src -> dst.
    #[inline]
    pub(super) fn check_after(&self, slot: Option<u32>, pi: u32, src: HostId, dst: HostId) {
        #[cfg(debug_assertions)]
        {
            if let Some(slot) = slot {
                self.check_conn(slot);
            }
            self.check_pair(pi);
            self.check_host(src);
            self.check_host(dst);
        }
        let _ = (slot, pi, src, dst);
    }

    /// After a handler that touched host `h` (its pacer, its NIC).
    #[inline]
    pub(super) fn check_host(&self, h: HostId) {
        #[cfg(debug_assertions)]
        {
            self.check_sender_host(h);
            self.check_receiver_host(h);
        }
        let _ = h;
    }
}

#[cfg(debug_assertions)]
impl Sird {
    fn check_conn(&self, slot: u32) {
        let c = &self.conns[slot];
        let (n, id) = (c.packets(), c.id);
        assert!(c.prefix <= n, "flow {id}: prefix {} of {n} packets", c.prefix);
        // Sender.
        assert!(
            c.next_new <= c.granted && c.granted <= n,
            "flow {id}: sent {} granted {} of {n}",
            c.next_new,
            c.granted
        );
        assert!(c.rtx.iter().all(|&i| i < c.next_new), "flow {id}: resend of an unsent packet");
        let mut rtx: Vec<u64> = c.rtx.iter().copied().collect();
        rtx.sort_unstable();
        rtx.dedup();
        assert_eq!(rtx.len(), c.rtx.len(), "flow {id}: a resend queued twice");
        assert_eq!(c.tx_ready, c.sendable(), "flow {id}: stale ready flag");
        // Receiver.
        let held = c.rx.count();
        assert_eq!(c.rx_done, held == n, "flow {id}: {held} of {n} packets held, done {}", c.rx_done);
        if c.rx_known {
            assert!(c.prefix <= c.rx_granted && c.rx_granted <= n, "flow {id}: frontier {}", c.rx_granted);
            assert!(held <= c.rx_granted, "flow {id}: {held} packets held beyond the frontier {}", c.rx_granted);
        } else {
            assert_eq!((c.rx_granted, held), (0, 0), "flow {id}: unknown to the receiver");
        }
        assert_eq!(c.rx_listed, c.rx_known && c.rx_granted < n, "flow {id}: inbound listing");
        // Across the halves: the sender holds no credit the receiver did not grant.
        assert!(c.granted <= c.rx_granted.max(c.prefix), "flow {id}: sender frontier {} > {}", c.granted, c.rx_granted);
    }

    fn check_pair(&self, pi: u32) {
        let p = &self.pairs[pi as usize];
        assert!(p.credit >= 0 && p.sb >= 0, "pair {pi}: credit held {} outstanding {}", p.credit, p.sb);
        for (k, l) in p.loops.iter().enumerate() {
            assert!(
                self.p.floors[k] <= l.size && l.size <= self.p.sb_max,
                "pair {pi}: loop {k} bucket {} outside [{}, {}]",
                l.size,
                self.p.floors[k],
                self.p.sb_max
            );
            assert!((0.0..=1.0).contains(&l.alpha), "pair {pi}: loop {k} alpha {}", l.alpha);
        }
        let (mut credit, mut sb, mut unsent, mut ready) = (0, 0, 0, 0);
        for &slot in &p.msgs {
            let c = &self.conns[slot];
            assert_eq!(c.pair, pi);
            credit += c.credit_held();
            sb += c.rx_outstanding();
            unsent += u32::from(c.next_new < c.packets());
            ready += u32::from(c.tx_ready);
        }
        assert_eq!((credit, sb), (p.credit, p.sb), "pair {pi}: credit held, credit outstanding");
        assert_eq!((unsent, ready), (p.unsent, p.ready), "pair {pi}: unsent, ready messages");
        assert!(p.ready > 0 || p.deficit == 0.0, "pair {pi}: deficit {} while idle", p.deficit);
    }

    fn check_sender_host(&self, h: HostId) {
        let host = &self.hosts[h as usize];
        assert!(host.credit >= 0, "host {h}: credit held {}", host.credit);
        let (mut credit, mut sending, mut unsent, mut ready, mut ready_pairs) = (0, 0, 0, 0, 0);
        for &pi in &host.out_pairs {
            let p = &self.pairs[pi as usize];
            credit += p.credit;
            sending += u32::from(p.unsent > 0);
            unsent += p.unsent;
            ready += p.ready;
            if p.ready > 0 {
                ready_pairs += 1;
                assert!(host.ready_pairs.contains(&pi), "host {h}: ready pair {pi} not listed");
            }
        }
        assert_eq!(
            (credit, sending, unsent, ready, ready_pairs),
            (host.credit, host.sending_receivers, host.unsent_msgs, host.ready, host.ready_pairs.len()),
            "host {h}: credit held, receivers and messages with unsent data, ready messages, ready pairs"
        );
    }

    fn check_receiver_host(&self, h: HostId) {
        let host = &self.hosts[h as usize];
        let (mut b, mut listed) = (0, 0);
        for &pi in &host.in_pairs {
            let p = &self.pairs[pi as usize];
            b += p.sb;
            listed += p.msgs.iter().filter(|&&s| self.conns[s].rx_listed).count();
        }
        assert_eq!(b, host.b, "host {h}: b is the sum of its senders' outstanding credit");
        assert!(0 <= host.unscheduled && host.unscheduled <= host.b, "host {h}: unscheduled {}", host.unscheduled);
        // B caps scheduled credit; a bucket smaller than a packet still admits one.
        let cap = self.p.budget.max(self.framing.mtu_bytes as i64);
        assert!(host.b - host.unscheduled <= cap, "host {h}: scheduled credit {} > B", host.b - host.unscheduled);
        let mut inbound = host.inbound.clone();
        inbound.sort_unstable();
        inbound.dedup();
        assert_eq!((inbound.len(), host.inbound.len()), (listed, listed), "host {h}: inbound list");
        for &slot in &host.inbound {
            let c = &self.conns[slot];
            assert!(c.rx_listed && c.dst == h, "host {h}: flow {} listed wrongly", c.id);
        }
    }
}
