//! The receiver's half: learn messages, take data, ACK complete messages, ask for what is missing;
//! and the scheduler: grants paced at the link rate to the k messages with the fewest bytes left,
//! each kept at RTTbytes granted but not received, at the scheduled level of its SRPT rank.

use super::{Homa, HomaTimer};
use crate::net::packet::{flags, HostId, Packet, PacketKind};
use crate::transport::parts::resend::resend_requests;
use crate::transport::Ctx;

impl Homa {
    /// The receiver learns of a message from any of its data packets (each carries the size and
    /// the unscheduled count; the model takes both from the message itself).
    fn register(&mut self, ctx: &mut Ctx, slot: u32) {
        let m = &mut self.msgs[slot];
        if m.rx_known {
            return;
        }
        m.rx_known = true;
        m.rx_granted = m.unsched;
        m.rx_silence.heard(ctx.now());
        if m.unsched < m.packets() {
            m.rx_listed = true;
            self.hosts[m.dst as usize].inbound.push(slot);
        }
        self.arm_rx(ctx, slot);
    }

    pub(super) fn on_data(&mut self, ctx: &mut Ctx, slot: u32, pkt: &Packet) {
        let m = &self.msgs[slot];
        if pkt.seq >= m.rx_granted.max(m.unsched) {
            return; // beyond anything granted: cannot have been sent
        }
        let dst = m.dst;
        self.register(ctx, slot);
        let m = &mut self.msgs[slot];
        if m.rx_done || !m.rx.insert(pkt.seq) {
            self.counters.duplicates += 1;
            if pkt.has(flags::RETX) && pkt.seq == 0 {
                self.on_probe(ctx, slot);
            }
            return;
        }
        m.rx_silence.heard(ctx.now());
        let payload = m.layout.payload(pkt.seq) as u64;
        m.rx_payload += payload;
        ctx.delivered(m.id, payload);
        if m.rx.count() == m.rx_granted {
            m.rx_silence.end_back_off();
        }
        if m.rx.count() == m.packets() {
            m.rx_done = true;
            ctx.finished(m.id);
            let ack = self.control(ctx, slot, PacketKind::Ack, true);
            ctx.send(ack);
        }
        self.kick(ctx, dst);
    }

    /// A sender's probe (its first packet again) for a message the receiver holds: repeat the ACK,
    /// or ask for the missing packets if the receiver too has been waiting.
    fn on_probe(&mut self, ctx: &mut Ctx, slot: u32) {
        let m = &self.msgs[slot];
        if m.rx_done {
            let ack = self.control(ctx, slot, PacketKind::Ack, true);
            ctx.send(ack);
        } else if m.outstanding() > 0 && ctx.now() >= m.rx_silence.last + self.cfg.timeout {
            self.resend_missing(ctx, slot);
        }
    }

    /// BUSY: the sender is sending other messages; the missing packets will come.
    pub(super) fn on_busy(&mut self, ctx: &mut Ctx, slot: u32) {
        let m = &mut self.msgs[slot];
        if m.rx_known && !m.rx_done {
            m.rx_silence.heard(ctx.now());
        }
    }

    /// Grants while the pacer allows and an active message is below RTTbytes outstanding.
    pub(super) fn kick(&mut self, ctx: &mut Ctx, host: HostId) {
        loop {
            let Some((slot, rank, active)) = self.pick(host) else { return };
            let h = &mut self.hosts[host as usize];
            if self.cfg.pace_grants && !h.pacer.ready(ctx.now()) {
                if let Some(at) = h.pacer.arm(ctx.now()) {
                    ctx.set_timer(at, HomaTimer::Pacer, host);
                }
                return;
            }
            self.grant(ctx, slot, rank, active);
        }
    }

    /// The first active message (SRPT order over the k with the fewest bytes left) that is below
    /// RTTbytes outstanding: (slot, its rank, how many are active).
    fn pick(&mut self, host: HostId) -> Option<(u32, usize, usize)> {
        let inbound = &self.hosts[host as usize].inbound;
        if inbound.is_empty() {
            return None;
        }
        self.scratch.clear();
        for &slot in inbound {
            let m = &self.msgs[slot];
            self.scratch.push(((m.left_to_receive().min(u32::MAX as u64 - 1)) << 32 | m.id as u64, slot));
        }
        let k = (self.cfg.overcommitment as usize).min(self.scratch.len());
        if k < self.scratch.len() {
            self.scratch.select_nth_unstable(k - 1);
            self.scratch.truncate(k);
        }
        self.scratch.sort_unstable();
        let rank = self.scratch.iter().position(|&(_, s)| self.msgs[s].outstanding() < self.rtt_packets)?;
        Some((self.scratch[rank].1, rank, k))
    }

    /// One GRANT for the next packet of the message, at the level of its rank (or, once what is
    /// left to grant fits in RTTbytes, the unscheduled level of that remainder).
    fn grant(&mut self, ctx: &mut Ctx, slot: u32, rank: usize, active: usize) {
        let m = &mut self.msgs[slot];
        debug_assert!(m.rx_listed && m.rx_granted < m.packets());
        let wire = m.layout.wire_bytes(m.rx_granted);
        m.rx_granted += 1;
        let left = m.layout.size_bytes() - m.layout.offset(m.rx_granted).min(m.layout.size_bytes());
        let mut prio = self.levels.scheduled(rank, active);
        if left <= self.rtt_bytes {
            prio = prio.min(self.levels.unscheduled(left.max(1)));
        }
        let (dst, granted) = (m.dst, m.rx_granted);
        if granted == m.packets() {
            m.rx_listed = false;
            let inbound = &mut self.hosts[dst as usize].inbound;
            let k = inbound.iter().position(|&s| s == slot).expect("a listed message is inbound");
            inbound.swap_remove(k);
        }
        let mut p = self.control(ctx, slot, PacketKind::Credit, true);
        p.ack = granted;
        p.aux = prio as u32;
        ctx.send(p);
        self.counters.grants += 1;
        let h = &mut self.hosts[dst as usize];
        h.pacer.sent_for(ctx.now(), h.rate, wire);
        self.arm_rx(ctx, slot);
    }

    pub(super) fn arm_rx(&mut self, ctx: &mut Ctx, slot: u32) {
        let timeout = self.cfg.timeout;
        let m = &mut self.msgs[slot];
        if m.rx_done {
            return;
        }
        if let Some(at) = m.rx_silence.arm(timeout, ctx.now()) {
            ctx.set_timer(at, HomaTimer::Rx, m.id);
        }
    }

    /// Nothing arrived for the timeout while granted packets are missing: RESEND them.
    pub(super) fn on_rx_timer(&mut self, ctx: &mut Ctx, slot: u32) {
        let m = &mut self.msgs[slot];
        let silent = m.rx_silence.fired(self.cfg.timeout, ctx.now());
        if m.rx_done || m.outstanding() == 0 {
            return; // nothing outstanding; the next grant re-arms
        }
        if !silent {
            return self.arm_rx(ctx, slot);
        }
        m.rx_silence.back_off();
        self.counters.receiver_timeouts += 1;
        self.resend_missing(ctx, slot);
        self.arm_rx(ctx, slot);
    }

    /// One RESEND per run of missing granted packets; each restates the grant frontier.
    fn resend_missing(&mut self, ctx: &mut Ctx, slot: u32) {
        let m = &mut self.msgs[slot];
        m.rx_silence.heard(ctx.now());
        let runs: Vec<_> = resend_requests(&m.rx, m.rx_granted).collect();
        for (first, count) in runs {
            let mut p = self.control(ctx, slot, PacketKind::Nack, true);
            p.seq = first;
            p.aux = count;
            p.ack = self.msgs[slot].rx_granted;
            ctx.send(p);
            self.counters.resend_requests += 1;
        }
    }
}
