//! Subflow set-up with `connection_setup = "handshake"`: every subflow opens with its own SYN /
//! SYN-ACK round trip, all at the connection's start, and takes data once its own SYN-ACK arrives;
//! no subflow waits for another. This is how htsim (the NDP paper's simulator) opens MPTCP: its
//! `MultipathTcpSrc` is a set of `TcpSrc` subflows, each connected with the same start time in the
//! datacenter runs, and a `TcpSrc` that is not yet established sends a SYN and waits for the
//! SYN/ACK (the sink's cumulative ACK of it) before any data (Broadcom/csg-htsim, sim/tcp.cpp
//! `TcpSrc::send_packets`; sim/mtcp.cpp `addSubflow`).
//!
//! SYN and SYN-ACK are header-only ACK-kind packets flagged `SYN` on the subflow's path
//! (`aux` = subflow), as the window sender's ([`crate::transport::window::handshake`]); a lost one
//! is recovered by the subflow's SYN timer: initial RTO, doubled per retry (htsim: its 3 s initial
//! `_rto`, doubled by the timer scanner). The SYN-ACK's round trip is the subflow's first RTT sample
//! unless the SYN went again (Karn's rule).
//!
//! Not modelled: MP_CAPABLE / MP_JOIN semantics (keys, tokens; real MPTCP opens the first subflow
//! before the others join, htsim does not), and htsim's slow-start credit for the SYN-ACK (its
//! `inflate_window` counts the SYN-ACK as one acknowledged segment, so a subflow starts at IW + 1).

use super::conn::{MpConn, Opening};
use crate::net::packet::{flags, Packet, PacketKind};
use crate::time::Time;
use crate::transport::parts::rtt::MAX_BACKOFF_SHIFT;
use crate::transport::window::sender::SenderConfig;
use crate::transport::window::timer::WindowTimer;
use crate::transport::Ctx;

impl MpConn {
    /// Opens every subflow: a SYN each, and the timers that resend them.
    pub fn open_subflows(&mut self, ctx: &mut Ctx, cfg: &SenderConfig) {
        for i in 0..self.subs.len() {
            debug_assert!(self.subs[i].size() == 0);
            self.opening[i] = Some(Opening { first_sent: ctx.now(), retries: 0 });
            self.send_syn(ctx, cfg, i, 0);
        }
    }

    /// Subflow `i` waits for its SYN-ACK (no data may go on it).
    #[inline]
    pub fn is_opening(&self, i: usize) -> bool {
        self.opening.get(i).is_some_and(|o| o.is_some())
    }

    fn send_syn(&self, ctx: &mut Ctx, cfg: &SenderConfig, i: usize, retries: u32) {
        ctx.send(self.syn_packet(cfg, i, true, ctx.now()));
        let rto = cfg.initial_rto << retries.min(MAX_BACKOFF_SHIFT);
        ctx.set_timer(ctx.now() + rto, WindowTimer::SubflowSyn(i as u8), self.id);
    }

    /// A SYN of subflow `i` (`forward`) or its SYN-ACK.
    fn syn_packet(&self, cfg: &SenderConfig, i: usize, forward: bool, ts: Time) -> Packet {
        let (from, to) = if forward { (self.src, self.dst) } else { (self.dst, self.src) };
        let mut p = Packet::new(PacketKind::Ack, self.id, from, to, cfg.framing.control_bytes);
        p.flags |= flags::SYN;
        p.ts = ts;
        p.aux = i as u32;
        p.path = self.subs[i].path_key();
        p.lb = cfg.lb;
        p.prio = cfg.control_priority;
        p
    }

    /// A SYN-flagged packet of subflow `i` reached `at_sender` (a SYN-ACK) or the receiver (a SYN,
    /// answered every time, so a lost SYN-ACK is recovered by the SYN's timer). Returns true when
    /// the subflow just opened (the caller then fills it).
    pub fn on_syn(&mut self, ctx: &mut Ctx, cfg: &SenderConfig, i: usize, at_sender: bool, pkt: &Packet) -> bool {
        if !at_sender {
            ctx.send(self.syn_packet(cfg, i, false, pkt.ts));
            return false;
        }
        let Some(o) = self.opening[i].take() else {
            return false; // a duplicate SYN-ACK
        };
        if o.retries == 0 {
            self.subs[i].on_rtt_sample(ctx.now() - o.first_sent);
        }
        true
    }

    /// Subflow `i`'s SYN timer fired: the SYN goes again unless the SYN-ACK came.
    pub fn on_syn_timer(&mut self, ctx: &mut Ctx, cfg: &SenderConfig, i: usize) -> bool {
        let Some(o) = self.opening.get_mut(i).and_then(|o| o.as_mut()) else { return false };
        o.retries += 1;
        let retries = o.retries;
        self.send_syn(ctx, cfg, i, retries);
        true
    }
}
