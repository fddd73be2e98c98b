//! The receiver's credit (Algorithm 1): the per-sender bucket's two AIMD loops, the paced
//! issue of credit, and which message gets it.

use super::state::{srpt_key, Host, NOT_CANDIDATE};
use super::{ReceiverPolicy, Sird, SirdTimer, SrptKey, MD_SPACING_WINDOWS};
use crate::net::packet::{HostId, PacketKind};
use crate::transport::parts::srpt_pick;
use crate::transport::Ctx;

impl Sird {
    /// Updates SB(s) from one data packet: the network loop on CE, the sender loop on csn
    /// (DCTCP's AIMD as the reference runs it, see the module header).
    pub(super) fn aimd(&mut self, pi: u32, ce: bool, csn: bool) {
        let mtu = self.framing.mtu_bytes as f64;
        let g = self.cfg.loops.ce_gain;
        let ai = self.cfg.loops.additive_increase_mtu * mtu * mtu;
        let (sb_max, floors) = (self.p.sb_max, self.p.floors);
        let p = &mut self.pairs[pi as usize];
        p.since_ratio += 1;
        let update = p.since_ratio >= p.next_ratio;
        let window = p.cap();
        for (k, marked) in [ce, csn].into_iter().enumerate() {
            let l = &mut p.loops[k];
            l.since_cut += 1;
            l.marked += u32::from(marked);
            if update {
                l.alpha = (1.0 - g) * l.alpha + g * l.marked as f64 / p.since_ratio as f64;
                l.marked = 0;
            }
            let mut change = ai / window;
            if marked && l.since_cut >= l.next_cut {
                change -= l.size * l.alpha / 2.0;
                l.since_cut = 0;
                l.next_cut = ((MD_SPACING_WINDOWS * window / mtu) as u32).max(1);
                if k == 0 {
                    self.counters.cuts_network += 1;
                } else {
                    self.counters.cuts_sender += 1;
                }
            }
            l.size = (l.size + change).clamp(floors[k], sb_max);
        }
        if update {
            p.since_ratio = 0;
            p.next_ratio = ((p.cap() / mtu) as u32).max(1);
        }
    }

    /// Issues credit now, or arms the pacer for the next credit slot.
    pub(super) fn kick(&mut self, ctx: &mut Ctx, host: HostId) {
        if !self.cfg.pace_credits {
            while self.try_credit(ctx, host).is_some() {}
            return;
        }
        let h = &mut self.hosts[host as usize];
        if h.pacer.is_armed() || h.inbound.is_empty() {
            return;
        }
        if !h.pacer.ready(ctx.now()) {
            let at = h.pacer.arm(ctx.now()).expect("the pacer was not armed");
            ctx.set_timer(at, SirdTimer::Pacer, host);
            return;
        }
        if let Some(w) = self.try_credit(ctx, host) {
            let h = &mut self.hosts[host as usize];
            h.pacer.sent_for(ctx.now(), h.rate, w as u32);
            if !h.inbound.is_empty() {
                let at = h.pacer.arm(ctx.now()).expect("the pacer was not armed");
                ctx.set_timer(at, SirdTimer::Pacer, host);
            }
        }
        // Nothing creditable: the next data arrival or new message kicks again.
    }

    /// Algorithm 1, sendCredit: credits the next packet of the message the policy picks among
    /// those the buckets admit. Returns the credited wire bytes.
    fn try_credit(&mut self, ctx: &mut Ctx, host: HostId) -> Option<i64> {
        let k = self.pick_creditable(host)?;
        Some(self.grant(ctx, host, k))
    }

    /// Wire bytes of the next packet of message `slot` (inbound at `h`) if B and its sender's
    /// bucket admit it. A bucket admits credit while it is not full; one smaller than a packet
    /// still admits a packet at a time.
    #[inline]
    fn admits(&self, h: &Host, slot: u32) -> Option<i64> {
        let c = &self.conns[slot];
        let w = c.wire(c.rx_granted, c.rx_granted + 1);
        let pair = &self.pairs[c.pair as usize];
        let global = h.b + w <= self.p.budget || h.b <= 0;
        let sender = (pair.sb as f64) < pair.cap() || pair.sb <= 0;
        (global && sender).then_some(w)
    }

    /// Index in the host's `inbound` of the message to credit: the policy's choice among those
    /// the buckets admit.
    fn pick_creditable(&self, host: HostId) -> Option<usize> {
        let h = &self.hosts[host as usize];
        let n = h.inbound.len();
        match self.cfg.receiver_policy {
            ReceiverPolicy::Srpt => {
                let keys = h.inbound.iter().map(|&slot| match self.admits(h, slot) {
                    Some(_) => {
                        let c = &self.conns[slot];
                        let left = match self.cfg.receiver_srpt_key {
                            SrptKey::BytesToReceive => c.layout.size_bytes() - c.rx_payload,
                            SrptKey::PacketsToCredit => c.packets() - c.rx_granted,
                        };
                        srpt_key(left, c.id)
                    }
                    None => NOT_CANDIDATE,
                });
                // When nothing is admitted the smallest key is NOT_CANDIDATE.
                srpt_pick(keys).filter(|&k| self.admits(h, h.inbound[k]).is_some())
            }
            ReceiverPolicy::RoundRobin => {
                (0..n).map(|j| (h.rr + j) % n).find(|&k| self.admits(h, h.inbound[k]).is_some())
            }
        }
    }

    /// Grants the next packet of the message at `inbound[k]`; returns its wire bytes.
    fn grant(&mut self, ctx: &mut Ctx, host: HostId, k: usize) -> i64 {
        let h = &mut self.hosts[host as usize];
        let slot = h.inbound[k];
        let c = &mut self.conns[slot];
        let w = c.wire(c.rx_granted, c.rx_granted + 1);
        h.rr = k + 1;
        h.b += w;
        c.rx_granted += 1;
        c.rx_silence.heard(ctx.now());
        self.pairs[c.pair as usize].sb += w;
        if c.rx_granted == c.packets() {
            c.rx_listed = false;
            h.inbound.swap_remove(k);
        }
        self.counters.credits += 1;
        self.send_control(ctx, slot, PacketKind::Credit, false);
        self.arm_rx(ctx, slot);
        w
    }
}
