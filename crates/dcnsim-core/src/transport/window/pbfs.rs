//! PB-FS over the window sender (D. Aaronson and R. Cohen, "PB-FS: Postcard-Based Fast Start",
//! IFIP Networking 2024): the rate sender's layer (`transport/rate/fast_start.rs`) for window
//! congestion controls, `fast_start = "pbfs"` on dctcp, newreno, swift, dx and hull.
//!
//! PB-FS corrects flows that start at line rate. A window sender does so when its initial window
//! covers the path's BDP (`initial_window_packets` >= BDP / MSS, e.g. SIRD's DCTCP and Swift with
//! ~1 BDP); with a smaller initial window the first RTT is already bounded by it, and a postcard's
//! window (below) may exceed it. Modelled as the rate layer, in windows:
//! - eligibility (size >= line rate x tau), marking of every Delta-th segment of the first RTT
//!   (`sender::Conn::marks_pbt`, first transmissions only) until the first ACK or CC-postcard,
//!   Algorithm 1 with the same keys and code ([`Pbfs::factor`], [`PbfsFlow::on_postcard`]);
//! - the proposed rate MaxRate / c is the window MaxRate / c x DC_RTT (a line-rate window of one
//!   DC_RTT, scaled), which the controller takes as after a congestion cut
//!   ([`super::cc::CongestionControl::set_window`]: Reno-based ones set cwnd = ssthresh, so no
//!   slow start follows; Swift its cwnd, within its bounds);
//! - the PBT interval ends with the first ACK after which the window differs from before it
//!   (window controllers change it on almost every ACK: in effect the first ACK).
//!
//! Not modelled: `slow_start` as a start mode (window protocols have their own `slow_start` key).

use super::{WindowProtocol, WindowTransport};
use crate::net::packet::{HostId, Packet};
use crate::net::pipeline::postcard::Postcard;
use crate::spec_reader::{Section, SpecResult};
use crate::time::{Rate, Time};
use crate::transport::rate::fast_start::{FastStart, Modes, Pbfs, PbfsFlow};
use crate::transport::rate::start::StartCounters;
use crate::transport::window::cc::CongestionControl;
use crate::transport::{Ctx, SpecEnv, TransportEnv};

/// `fast_start` for a window protocol: `line_rate` (the controller's own start) or `pbfs`.
pub fn read(s: &mut Section, env: &SpecEnv) -> SpecResult<FastStart> {
    FastStart::read(s, env, Modes::Window)
}

/// PB-FS resolved for a run, as the rate sender does (DC_RTT and BDP from host 0 to the last host).
pub fn resolve(mode: &FastStart, env: &TransportEnv) -> Option<Pbfs> {
    let FastStart::Pbfs(k) = mode else { return None };
    let last = env.hosts().saturating_sub(1);
    Some(Pbfs::new(k, env.base_rtt(0, last), env.bdp_bytes(0, last)))
}

/// The window that sends at `bps` over one DC_RTT: Algorithm 1's NewRate as a window.
pub fn window_of(bps: u64, dc_rtt: Time) -> f64 {
    bps as f64 * dc_rtt as f64 / 8e12
}

impl<P: WindowProtocol> WindowTransport<P> {
    /// A new flow's PB-FS state: `Some` when PB-FS is on and the flow is eligible at `line`.
    pub(super) fn pbfs_flow(&mut self, size: u64, line: Rate) -> Option<PbfsFlow> {
        let eligible = self.pbfs.is_some_and(|p| p.eligible(size, line));
        self.start_counters.pbfs_eligible_flows += u64::from(eligible);
        eligible.then(PbfsFlow::new)
    }

    /// Before the sender takes an ACK: marking stops. Returns the window to compare after it.
    pub(super) fn pbfs_before_ack(&mut self, slot: u32) -> f64 {
        let c = &mut self.conns[slot];
        if let Some(f) = c.pbfs.as_mut() {
            f.marking = false;
        }
        c.cc.window_bytes()
    }

    /// After it: the PBT interval ends if the ACK changed the window.
    pub(super) fn pbfs_after_ack(&mut self, slot: u32, before: f64) {
        let c = &mut self.conns[slot];
        let changed = c.cc.window_bytes() != before;
        if let Some(f) = c.pbfs.as_mut().filter(|_| changed) {
            f.ignore = true;
        }
    }

    /// A CC-postcard reached its flow's sender `host`: Algorithm 1, then the window follows.
    pub(super) fn on_postcard(&mut self, ctx: &mut Ctx, host: HostId, slot: u32, pkt: &Packet) {
        let Some(pbfs) = self.pbfs else { return };
        let card = Postcard::read(pkt);
        let n = &mut self.start_counters;
        n.postcards_received += 1;
        n.by_distance[(card.distance.max(1) as usize - 1).min(5)] += 1;
        let line = ctx.nic_rate(host).bps();
        let c = &mut self.conns[slot];
        let Some(f) = c.pbfs.as_mut().filter(|f| !f.ignore) else {
            n.postcards_ignored += 1;
            return;
        };
        let rate = f.on_postcard(card.switch, Pbfs::factor(&pbfs, &card), line);
        n.flows_with_postcards += u64::from(f.postcards == 1);
        n.max_postcards_per_flow = n.max_postcards_per_flow.max(f.postcards as u64);
        let Some(bps) = rate else { return };
        c.cc.set_window(ctx.now(), window_of(bps, pbfs.dc_rtt));
        n.pbfs_rate_reductions += 1;
        c.send_window(ctx, &self.cfg.sender, &mut self.counters);
    }

    /// The PB-FS counters (only with `fast_start = "pbfs"`).
    pub(super) fn pbfs_counters(&self, out: &mut Vec<(&'static str, u64)>) {
        let n = StartCounters { pbt_packets_sent: self.counters.pbt_packets_sent, ..self.start_counters };
        n.report(&self.cfg.fast_start, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_new_rate_is_a_window_of_one_dc_rtt() {
        // Line rate (c = 1) is one BDP; MaxRate / c is one BDP / c.
        let (line, dc_rtt) = (Rate::from_gbps(25.0), 25_000_000);
        assert!((window_of(line.bps(), dc_rtt) - line.bytes_in(dc_rtt) as f64).abs() < 1.0);
        assert!((window_of(line.bps() / 4, dc_rtt) - 78_125.0 / 4.0).abs() < 1e-6);
    }
}
