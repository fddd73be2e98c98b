//! The sender's half: at each transmission opportunity one packet of the message with the fewest
//! packets left to send (SRBF); grants, RESEND (answered with BUSY when the packets wait behind
//! other messages), the final ACK, and the probe of a silent receiver.

use super::{Homa, HomaTimer, BUSY};
use crate::net::packet::{flags, HostId, Packet, PacketKind};
use crate::transport::Ctx;

impl Homa {
    /// Sends one data packet if the host's NIC is idle and a message may send.
    pub(super) fn pump(&mut self, ctx: &mut Ctx, host: HostId) {
        let ready = &self.hosts[host as usize].ready;
        if ready.is_empty() || !ctx.nic_is_idle(host) {
            return;
        }
        let key = |slot: u32| {
            let m = &self.msgs[slot];
            (m.left_to_send(), m.id)
        };
        let slot = *ready.iter().min_by_key(|&&s| key(s)).expect("not empty");
        self.send_data(ctx, slot);
    }

    fn send_data(&mut self, ctx: &mut Ctx, slot: u32) {
        let m = &mut self.msgs[slot];
        let (idx, retx) = match m.rtx.pop_front() {
            Some(i) => (i, true),
            None => {
                m.next_new += 1;
                (m.next_new - 1, false)
            }
        };
        m.tx_silence.heard(ctx.now());
        let p = self.data_packet(ctx, slot, idx, retx);
        self.counters.data_sent += 1;
        self.counters.retransmitted += u64::from(retx);
        self.counters.unscheduled_sent += u64::from(!retx && idx < self.msgs[slot].unsched);
        ctx.send(p);
        // New packets go in order (`next_new`): the last one's first transmission is `Sent`.
        let m = &self.msgs[slot];
        if !retx && m.layout.is_last(idx) {
            ctx.sent(m.id);
        }
        self.sync_ready(slot);
    }

    fn data_packet(&self, ctx: &Ctx, slot: u32, idx: u64, retx: bool) -> Packet {
        let m = &self.msgs[slot];
        let mut p = Packet::new(PacketKind::Data, m.id, m.src, m.dst, m.layout.wire_bytes(idx));
        p.payload = m.layout.payload(idx);
        p.seq = idx;
        p.ack = m.layout.size_bytes();
        p.aux = m.unsched.min(u32::MAX as u64) as u32;
        p.ts = ctx.now();
        p.path = m.path_key;
        p.lb = self.cfg.lb;
        p.prio = m.prio_of(idx);
        if m.layout.is_last(idx) {
            p.flags |= flags::LAST;
        }
        if retx {
            p.flags |= flags::RETX;
        }
        p
    }

    /// Keeps the host's list of sendable messages in step with the message.
    pub(super) fn sync_ready(&mut self, slot: u32) {
        let m = &mut self.msgs[slot];
        let now = m.sendable();
        if now == m.tx_ready {
            return;
        }
        m.tx_ready = now;
        let ready = &mut self.hosts[m.src as usize].ready;
        if now {
            ready.push(slot);
        } else {
            let k = ready.iter().position(|&s| s == slot).expect("a ready message is listed");
            ready.swap_remove(k);
        }
    }

    /// A GRANT or RESEND restates the receiver's frontier; the sender moves up to it. A frontier
    /// beyond what the receiver granted cannot have been sent: a stray, `false`.
    fn heard_from_receiver(&mut self, ctx: &Ctx, slot: u32, frontier: u64, prio: Option<u8>) -> bool {
        let lowest = self.levels.lowest();
        let m = &mut self.msgs[slot];
        if frontier > m.rx_granted {
            return false;
        }
        m.tx_silence.progressed(ctx.now());
        if frontier > m.granted {
            m.granted = frontier;
            if let Some(p) = prio {
                m.sched_prio = p.min(lowest);
            }
        }
        true
    }

    pub(super) fn on_grant(&mut self, ctx: &mut Ctx, slot: u32, pkt: &Packet) {
        if self.heard_from_receiver(ctx, slot, pkt.ack, Some(pkt.aux.min(7) as u8)) {
            self.sync_ready(slot);
            self.pump(ctx, self.msgs[slot].src);
        }
    }

    /// RESEND of [seq, seq + aux): packets sent before are queued again; packets not sent yet
    /// need nothing (the frontier covers them). If nothing had to be resent while the message
    /// still waits to send, the sender is busy with shorter messages: it says so (BUSY).
    pub(super) fn on_resend(&mut self, ctx: &mut Ctx, slot: u32, pkt: &Packet) {
        if !self.heard_from_receiver(ctx, slot, pkt.ack, None) {
            return;
        }
        let m = &mut self.msgs[slot];
        let end = pkt.seq.saturating_add(pkt.aux as u64).min(m.next_new);
        let mut added = 0;
        for i in pkt.seq..end {
            if !m.rtx.contains(&i) {
                m.rtx.push_back(i);
                added += 1;
            }
        }
        let busy = added == 0 && m.sendable();
        let src = m.src;
        if busy {
            let mut p = self.control(ctx, slot, PacketKind::Ack, false);
            p.flags |= BUSY;
            ctx.send(p);
            self.counters.busy_sent += 1;
        }
        self.sync_ready(slot);
        self.pump(ctx, src);
    }

    /// ACK: the receiver has the whole message; both halves are done (returns true). An ACK before
    /// the receiver has every packet cannot have been sent: ignored.
    pub(super) fn on_ack(&mut self, slot: u32) -> bool {
        let m = &mut self.msgs[slot];
        if !m.rx_done {
            return false;
        }
        m.rtx.clear();
        m.granted = m.granted.max(m.next_new);
        m.next_new = m.granted;
        self.sync_ready(slot);
        debug_assert!(!self.msgs[slot].rx_listed);
        let id = self.msgs[slot].id;
        self.msgs.remove(id, slot);
        true
    }

    pub(super) fn arm_tx(&mut self, ctx: &mut Ctx, slot: u32) {
        let timeout = self.cfg.timeout;
        let m = &mut self.msgs[slot];
        if let Some(at) = m.tx_silence.arm(timeout, ctx.now()) {
            ctx.set_timer(at, HomaTimer::Tx, m.id);
        }
    }

    /// The sender heard nothing for a while and can send nothing: probe with the first packet.
    pub(super) fn on_tx_timer(&mut self, ctx: &mut Ctx, slot: u32) {
        let timeout = self.cfg.timeout;
        let m = &mut self.msgs[slot];
        if !m.tx_silence.fired(timeout, ctx.now()) {
            return self.arm_tx(ctx, slot);
        }
        m.tx_silence.heard(ctx.now());
        if !m.sendable() {
            m.tx_silence.back_off();
            let p = self.data_packet(ctx, slot, 0, true);
            self.counters.probes += 1;
            ctx.send(p);
        }
        self.arm_tx(ctx, slot);
    }
}
