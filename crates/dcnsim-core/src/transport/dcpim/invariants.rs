//! dcPIM's invariants per flow and per host, checked at the end of every handler in debug builds.

use super::config::MAX_CHANNELS;
use super::Dcpim;
use crate::net::packet::{FlowId, HostId};

impl Dcpim {
    /// After a handler: the flow it touched (if still live) and the host it ran at.
    pub(super) fn check_after(&self, flow: Option<FlowId>, host: Option<HostId>) {
        if !cfg!(debug_assertions) {
            return;
        }
        if let Some(slot) = flow.and_then(|f| self.conns.slot(f)) {
            self.check_flow(slot);
        }
        if let Some(h) = host.filter(|&h| (h as usize) < self.hosts.len()) {
            self.check_host(h);
        }
    }

    /// After the matching clock's tick, which touches every host.
    pub(super) fn check_all_hosts(&self) {
        if cfg!(debug_assertions) {
            (0..self.hosts.len() as HostId).for_each(|h| self.check_host(h));
        }
    }

    fn check_flow(&self, slot: u32) {
        let c = &self.conns[slot];
        let (id, n) = (c.id, c.layout.packets());
        assert!(c.next_new <= n && c.tx_sent.count() <= n && c.tx_remaining <= n, "flow {id}: sender past the end");
        assert!(c.rx.count() <= n && c.last_tokened.is_none_or(|l| l < n), "flow {id}: receiver past the end");
        assert_eq!(c.rx_done, c.rx.count() == n, "flow {id}: rx_done out of step");
        assert!(c.rx_known || c.rx.count() == 0, "flow {id}: data received for an unknown flow");
        let listed = self.hosts[c.dst as usize].inbound.contains(&slot);
        assert_eq!(listed, c.rx_known && !c.rx_done, "flow {id}: receiver's inbound list out of step");
        assert!(self.hosts[c.src as usize].out.contains(&slot), "flow {id}: not on its sender's list");
    }

    fn check_host(&self, h: HostId) {
        let host = &self.hosts[h as usize];
        let k = self.cfg.channels;
        assert!(k as u64 <= MAX_CHANNELS);
        assert!(host.tx_matched <= k && host.rx_matched <= k, "host {h}: more than k channels matched");
        for links in [&host.links, &host.pending] {
            assert!(links.len() as u32 <= k, "host {h}: more links than channels");
            assert!(links.iter().map(|l| l.channels).sum::<u32>() <= k, "host {h}: links over k channels");
        }
        for (i, &slot) in host.out.iter().enumerate() {
            assert!(!host.out[..i].contains(&slot) && self.conns[slot].src == h, "host {h}: sender list");
        }
        for (i, &slot) in host.inbound.iter().enumerate() {
            assert!(!host.inbound[..i].contains(&slot) && self.conns[slot].dst == h, "host {h}: inbound list");
        }
    }
}
