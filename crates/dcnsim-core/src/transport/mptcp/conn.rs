//! One MPTCP connection: its subflows (window senders, [`Conn`], under [`Lia`]), the scheduler that
//! maps the connection's data onto subflows with window room, and the receiver's two levels of
//! reassembly (each subflow's byte stream for its cumulative ACK; the connection's data for
//! delivery, so a byte counts once whichever subflow carried it).
//!
//! Data sequence mapping: the scheduler hands out whole data segments (one MSS, the last one
//! shorter), one per subflow segment, so subflow segment `k` (bytes `k MSS ..`) carries the data
//! segment `map[k]`. Real MPTCP carries that mapping in the DSS option of the packet; here the
//! receiver reads it from the connection's table, which is the same because a subflow segment's
//! mapping never changes after it is made (retransmissions resend the same subflow bytes). The table
//! drops entries below the subflow's cumulative ACK (duplicates there were delivered already).

use super::lia::{coupling, Lia};
use crate::net::packet::{flags, FlowId, HostId, Packet, PacketKind};
use crate::time::Time;
use crate::transport::parts::ReceivedBytes;
use crate::transport::window::cc::CongestionControl;
use crate::transport::window::sender::{Conn, Counters, SenderConfig, Status};
use crate::transport::Ctx;
use std::collections::VecDeque;

/// A subflow waiting for its SYN-ACK.
#[derive(Clone, Copy, Debug)]
pub struct Opening {
    /// When the first SYN left (the RTT sample's start).
    pub(super) first_sent: Time,
    /// SYNs sent again so far.
    pub(super) retries: u32,
}

/// The data offset of each of a subflow's segments not yet cumulatively received.
#[derive(Default)]
struct SegmentMap {
    /// Subflow segment index of `data[0]`.
    base: u64,
    data: VecDeque<u64>,
}

pub struct MpConn {
    pub id: FlowId,
    pub src: HostId,
    pub dst: HostId,
    size: u64,
    /// First data byte not yet mapped to a subflow.
    next_data: u64,
    pub subs: Vec<Conn<Lia>>,
    maps: Vec<SegmentMap>,
    // Receiver.
    rx_sub: Vec<ReceivedBytes>,
    rx_data: ReceivedBytes,
    /// The last coupling handed to a subflow (for traces).
    pub alpha: f64,
    /// Per subflow, its handshake while it waits for its SYN-ACK ([`super::setup`]).
    pub(super) opening: Vec<Option<Opening>>,
}

impl MpConn {
    pub fn new(id: FlowId, src: HostId, dst: HostId, size: u64, subs: Vec<Conn<Lia>>) -> MpConn {
        let n = subs.len();
        debug_assert!((1..=64).contains(&n));
        MpConn {
            id,
            src,
            dst,
            size,
            next_data: 0,
            subs,
            maps: (0..n).map(|_| SegmentMap::default()).collect(),
            rx_sub: vec![ReceivedBytes::default(); n],
            rx_data: ReceivedBytes::default(),
            alpha: 1.0,
            opening: vec![None; n],
        }
    }

    /// Scheduler: maps new data segments onto subflow `i` while its window has room, and sends.
    /// Each subflow pulls data as its ACKs open its window, so data goes where there is room.
    pub fn fill(&mut self, ctx: &mut Ctx, i: usize, cfg: &SenderConfig, n: &mut Counters) {
        if self.is_opening(i) {
            return; // data goes on a subflow once its SYN-ACK arrives
        }
        let mss = cfg.framing.mss() as u64;
        let sub = &mut self.subs[i];
        while self.next_data < self.size && sub.unsent_bytes() == 0 {
            let len = mss.min(self.size - self.next_data);
            if !sub.has_room(len, mss) {
                break;
            }
            debug_assert_eq!(sub.size() % mss, 0, "a short segment is the connection's last");
            self.maps[i].data.push_back(self.next_data);
            sub.extend(len);
            self.next_data += len;
            sub.send_window(ctx, cfg, n);
            // A mapped segment goes out at once (the window had room; LIA does not pace), so the
            // connection's last segment is mapped and first sent here: the flow's `Sent` milestone
            // (its subflows, streams of their own, report none).
            if self.next_data == self.size {
                debug_assert_eq!(sub.unsent_bytes(), 0, "the last segment went out when mapped");
                ctx.sent(self.id);
            }
        }
        sub.send_window(ctx, cfg, n);
    }

    /// Sender: an ACK for subflow `i`. Returns `Done` once every byte is mapped and acknowledged.
    pub fn on_ack(&mut self, ctx: &mut Ctx, i: usize, cfg: &SenderConfig, pkt: &Packet, n: &mut Counters) -> Status {
        // Subflows without an RTT sample yet count with this ACK's (same host pair, same fabric).
        let sample_us = ctx.now().saturating_sub(pkt.ts).max(1) as f64 / 1e6;
        let c = coupling(self.subs.iter().map(|s| (s.cc.window_bytes(), s.srtt_us().unwrap_or(sample_us))));
        self.alpha = c.0;
        self.subs[i].cc.couple(c);
        self.subs[i].on_ack(ctx, cfg, pkt, n);
        self.fill(ctx, i, cfg, n);
        self.status()
    }

    /// The retransmission timer of subflow `i` fired.
    pub fn on_rto_timer(&mut self, ctx: &mut Ctx, i: usize, cfg: &SenderConfig, n: &mut Counters) -> Status {
        self.subs[i].on_rto_timer(ctx, cfg, n);
        self.fill(ctx, i, cfg, n);
        self.status()
    }

    fn status(&self) -> Status {
        if self.next_data == self.size && self.subs.iter().all(|s| s.all_acked()) {
            Status::Done
        } else {
            Status::Open
        }
    }

    /// Receiver: a data packet of subflow `i`; delivers what is new to the connection and ACKs the
    /// subflow. Packets that fit no mapped segment (strays) are ignored.
    pub fn on_data(&mut self, ctx: &mut Ctx, i: usize, cfg: &SenderConfig, pkt: &Packet) {
        let mss = cfg.framing.mss() as u64;
        let len = pkt.payload as u64;
        let seg = pkt.seq / mss;
        let map = &mut self.maps[i];
        if len == 0 || !pkt.seq.is_multiple_of(mss) || seg >= map.base + map.data.len() as u64 {
            return;
        }
        if seg >= map.base {
            let off = map.data[(seg - map.base) as usize];
            if len != mss.min(self.size - off) {
                return;
            }
            let fresh = self.rx_data.insert(off, off + len);
            if fresh > 0 {
                ctx.delivered(self.id, fresh);
                if self.rx_data.next_expected() == self.size {
                    ctx.finished(self.id);
                }
            }
        }
        let rx = &mut self.rx_sub[i];
        rx.insert(pkt.seq, pkt.seq + len);
        while map.base < rx.next_expected() / mss && !map.data.is_empty() {
            map.data.pop_front();
            map.base += 1;
        }
        self.ack(ctx, i, cfg, pkt);
    }

    fn ack(&self, ctx: &mut Ctx, i: usize, cfg: &SenderConfig, pkt: &Packet) {
        let mut ack = Packet::new(PacketKind::Ack, self.id, self.dst, self.src, cfg.framing.control_bytes);
        ack.ack = self.rx_sub[i].next_expected();
        ack.ts = pkt.ts;
        ack.aux = i as u32;
        ack.path = self.subs[i].path_key();
        ack.lb = cfg.lb;
        ack.prio = cfg.control_priority;
        if pkt.has(flags::CE) {
            ack.flags |= flags::ECE;
        }
        ctx.send(ack);
    }

    /// The connection's invariants (debug builds, after every handler).
    pub fn check_invariants(&self, cfg: &SenderConfig) {
        let mapped: u64 = self.subs.iter().map(|s| s.size()).sum();
        assert_eq!(mapped, self.next_data, "flow {}: subflows carry exactly the mapped data", self.id);
        assert!(self.next_data <= self.size && self.rx_data.next_expected() <= self.size);
        for (i, s) in self.subs.iter().enumerate() {
            s.check_invariants(cfg);
            assert!(!self.is_opening(i) || s.size() == 0, "flow {} subflow {i}: data before its SYN-ACK", self.id);
            let m = &self.maps[i];
            let segs = s.size().div_ceil(cfg.framing.mss() as u64);
            assert_eq!(m.base + m.data.len() as u64, segs, "flow {} subflow {i}: map covers its segments", self.id);
        }
    }
}
