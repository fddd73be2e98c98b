//! Multipath TCP with linked increases: a flow split over K subflows, each a NewReno window on its
//! own path, their congestion-avoidance increases coupled so that the connection is no more
//! aggressive than one TCP on its best path and moves traffic off congested paths.
//!
//! References: C. Raiciu, D. Wischik, M. Handley, "Design, implementation and evaluation of
//! congestion control for multipath TCP", NSDI 2011; RFC 6356 (the Linked Increases Algorithm,
//! [`lia`]); C. Raiciu et al., "Improving datacenter performance and robustness with Multipath
//! TCP", SIGCOMM 2011 (the datacenter setting: 8 subflows on distinct paths of a fat tree). It is
//! the NDP paper's (SIGCOMM'17) multipath baseline, run in htsim; htsim's `MultipathTcpSrc`
//! (`COUPLED_INC`) over `TcpSrc` subflows is the reference for the choices below.
//!
//! Modelled:
//! - K subflows (`subflows`, default 8, the SIGCOMM'11 paper's and htsim's datacenter runs), capped
//!   at the number of equal-cost paths between the hosts (htsim opens min(K, paths)). With source
//!   routing (`routing.load_balancing = "source"`, as htsim) each subflow is pinned to a path drawn
//!   at random: distinct paths by default (`path_choice = "distinct"`), or each drawn independently
//!   so that subflows may share one (`"random"`: the NDP authors' htsim MPTCP driver,
//!   nets-cs-pub-ro/NDP sim/datacenter/main.cpp, draws `rand() % paths` per subflow, its loop that
//!   rejected repeats commented out); with ECMP each subflow has its own hash key, so subflows may
//!   collide as real subflows with distinct ports do.
//! - Each subflow is the window sender ([`crate::transport::window::sender`]): slow start, fast
//!   retransmit, NewReno fast recovery, RTO with back-off and go-back-N, its own RTT estimator.
//! - LIA in congestion avoidance ([`lia`]; `coupling = "uncoupled"` makes every subflow a plain
//!   Reno, htsim's `UNCOUPLED`, for comparison): alpha from every subflow's window and smoothed RTT at
//!   each ACK (htsim recomputes it when a window crosses an MSS boundary; a subflow without an RTT
//!   sample counts with the ACK's sample). Cuts are per subflow (Reno's halving; timeout to 1 MSS).
//! - `rto_jitter` (default 0): each subflow's RTO scaled by a uniform factor in [1, 1 + x]
//!   (Vasudevan et al., SIGCOMM'09, desynchronise retransmissions with RTO x (1 + rand(0.5)));
//!   it spreads the timeouts of the many subflows an incast loses at once.
//! - A connection-level scheduler: data goes, a segment at a time, to whichever subflow's window
//!   has room (each subflow pulls data as its ACKs open its window) ([`conn`]).
//! - Reassembly at the receiver: per-subflow cumulative ACKs, connection-level delivery counting
//!   each byte once.
//!
//! - Subflow set-up (`connection_setup = "handshake"`, [`setup`]): each subflow spends its own SYN /
//!   SYN-ACK round trip, all at the start, as htsim's `TcpSrc` subflows do; default `"none"`: every
//!   subflow sends data at once.
//!
//! Not modelled: MP_CAPABLE / MP_JOIN semantics (the first subflow is not opened ahead of the
//! others, as in htsim), a data-level ACK and receive window (the receiver buffers without limit),
//! reinjection of a subflow's unacknowledged data onto another subflow, the "lowest RTT first"
//! choice among several subflows with room at the same instant (they fill in index order), delayed
//! ACKs, SACK, ECN (data is not ECN-capable), OLIA/BALIA. htsim's initial ssthresh (15 packets in
//! its MPTCP runs) is the key `initial_ssthresh_packets` (unset: slow start runs to the first loss).
//!
//! Packet fields: `seq` = subflow byte offset; `ack` = the subflow's cumulative ACK; `ts` = send
//! time, echoed; `aux` = subflow index; `path` = the subflow's ECMP key or source route. Timers:
//! kind = the window sender's kind + 2 x subflow, id = flow.

pub mod conn;
pub mod lia;
pub mod setup;

use super::conns::ConnTable;
use super::window::cc::{CongestionControl, WindowSetup};
use super::window::handshake::{self, ConnectionSetup};
use super::window::read_shared;
use super::window::sender::{Conn, Counters, SenderConfig, Status};
use super::window::timer::{WindowTimer, SUBFLOWS};
use super::{ClassUse, Conformance, Ctx, LoneFlow, Needs, Protocol, SpecEnv, TransportEnv};
use crate::engine::rng::{mix64, Rng};
use crate::net::packet::{flags, FlowId, HostId, LoadBalancing, Packet, PacketKind};
use crate::spec_reader::{Section, SpecResult};
use conn::MpConn;
use lia::Lia;

/// The most subflows a connection may open (the subflow index rides in the timer kind).
pub const MAX_SUBFLOWS: u64 = 64;
const _: () = assert!(MAX_SUBFLOWS <= SUBFLOWS as u64, "a subflow without timer kinds");

#[derive(Clone, Debug, PartialEq)]
pub struct MptcpConfig {
    pub window: WindowSetup,
    pub sender: SenderConfig,
    /// Subflows per connection (fewer when the hosts have fewer equal-cost paths).
    pub subflows: u32,
    /// LIA's coupled increase (`coupling = "lia"`), or independent Reno subflows (`"uncoupled"`).
    pub coupled: bool,
    /// Where each subflow's first slow start ends (bytes); `None` = at the first loss.
    pub initial_ssthresh: Option<f64>,
    /// Each RTO is scaled by a uniform factor in [1, 1 + x]; 0 = exact.
    pub rto_jitter: f64,
    /// Whether each subflow first spends a SYN / SYN-ACK round trip ([`setup`]).
    pub connection_setup: ConnectionSetup,
    /// Source routing: subflows on distinct paths (`true`), or each path drawn independently.
    pub distinct_paths: bool,
}

pub struct Mptcp {
    cfg: MptcpConfig,
    conns: ConnTable<MpConn>,
    counters: Counters,
    subflows_opened: u64,
    /// Subflows whose SYN-ACK arrived, and SYNs sent again (with the handshake on).
    handshakes: u64,
    syn_retransmits: u64,
    /// Draws each connection's distinct source routes.
    rng: Rng,
}

impl Mptcp {
    /// The ECMP keys or source routes of a connection's `k` subflows out of `paths` paths.
    fn path_keys(&mut self, id: FlowId, k: u64, paths: u64) -> Vec<u32> {
        if self.cfg.sender.lb != LoadBalancing::Source {
            // Subflow 0 hashes as a single-path connection of the window sender does (so one subflow
            // is NewReno exactly), the others on keys of their own.
            return (0..k).map(|i| mix64((id as u64 ^ 0x5eed).wrapping_add(i << 40)) as u32).collect();
        }
        let paths = paths.min(u32::MAX as u64);
        debug_assert!(k <= paths, "subflows are capped at the path count");
        let mut keys: Vec<u32> = Vec::with_capacity(k as usize);
        while (keys.len() as u64) < k {
            let p = self.rng.below(paths) as u32;
            if !self.cfg.distinct_paths || !keys.contains(&p) {
                keys.push(p);
            }
        }
        keys
    }

    #[inline]
    fn check(&self, slot: u32) {
        if cfg!(debug_assertions) {
            self.conns[slot].check_invariants(&self.cfg.sender);
        }
    }

    fn settle(&mut self, id: FlowId, slot: u32, status: Status) {
        match status {
            Status::Done => self.conns.remove(id, slot),
            Status::Open => self.check(slot),
        }
    }
}

impl Protocol for Mptcp {
    const NAMES: &'static [(&'static str, &'static str)] = &[(
        "mptcp",
        "Multipath TCP: K NewReno subflows on distinct paths with coupled linked increases (RFC 6356; Raiciu et al., NSDI'11)",
    )];
    type Config = MptcpConfig;
    type Timer = WindowTimer;

    fn read(s: &mut Section, _name: &str, env: &SpecEnv) -> SpecResult<MptcpConfig> {
        let subflows = s.u64_or("subflows", 8, "subflows",
            "[mptcp] subflows per connection, each on its own path (capped at the hosts' equal-cost paths); 8 as in the MPTCP datacenter paper and the NDP paper's htsim runs")?;
        s.ensure(
            (1..=MAX_SUBFLOWS).contains(&subflows),
            "subflows",
            format!("must be in [1, {MAX_SUBFLOWS}], got {subflows}"),
        )?;
        let coupling = s.choice_or("coupling", &["lia", "uncoupled"], "lia",
            "[mptcp] \"lia\": RFC 6356's linked increases; \"uncoupled\": every subflow a plain Reno (htsim's UNCOUPLED, the baseline LIA improves on)")?;
        let ssthresh = s.u64_opt(
            "initial_ssthresh_packets",
            "packets",
            "[mptcp] where each subflow's first slow start ends (htsim's MPTCP runs: 15); unset = at the first loss",
        )?;
        if let Some(p) = ssthresh {
            s.ensure(
                (1..=1_000_000).contains(&p),
                "initial_ssthresh_packets",
                format!("must be in [1, 1000000], got {p}"),
            )?;
        }
        let rto_jitter = s.f64_or("rto_jitter", 0.0, "fraction",
            "[mptcp] each retransmission timeout is scaled by a uniform factor in [1, 1 + x], desynchronising the subflows' timeouts (Vasudevan et al., SIGCOMM'09: 0.5); 0 = exact")?;
        s.ensure((0.0..=1.0).contains(&rto_jitter), "rto_jitter", format!("must be in [0, 1], got {rto_jitter}"))?;
        let path_choice = s.choice_or("path_choice", &["distinct", "random"], "distinct",
            "[mptcp] with source routing: \"distinct\": each subflow on a path no other subflow of the connection uses; \"random\": each subflow's path drawn independently, so two may share one (the NDP authors' htsim MPTCP driver)")?;
        let (window, sender) = read_shared(s, env, false)?;
        let connection_setup = handshake::read(s)?;
        let initial_ssthresh = ssthresh.map(|p| (p * window.mss_bytes) as f64);
        Ok(MptcpConfig {
            window,
            sender,
            subflows: subflows as u32,
            coupled: coupling == "lia",
            initial_ssthresh,
            rto_jitter,
            connection_setup,
            distinct_paths: path_choice == "distinct",
        })
    }

    fn name(_cfg: &MptcpConfig) -> &'static str {
        "mptcp"
    }

    fn conformance(_name: &str) -> Conformance {
        // Several subflows make the ideal the multipath one (packets on the fastest path for their
        // size, the short one first if that is sooner); a lone flow whose initial window covers it
        // goes on its first subflow, in order, so it ends a few packet times above that bound
        // (exactly at the single-path ideal).
        let lone_flow = LoneFlow::Bounded { max_extra_rtts: 0.1 };
        Conformance { spec: "[transport]\ninitial_window_packets = 32\n", lone_flow, exempt: &[] }
    }

    /// Subflows have ECMP keys of their own: a flow of several spreads whatever the routing.
    fn multipath(cfg: &MptcpConfig) -> bool {
        cfg.subflows > 1
    }

    fn needs(cfg: &MptcpConfig) -> Needs {
        let class = |key, class, purpose| ClassUse { key, class, explicit: true, purpose };
        let (data, control) = (cfg.sender.data_priority, cfg.sender.control_priority);
        Needs {
            classes: vec![class("data_priority", data, "data"), class("control_priority", control, "ACKs")],
            ..Needs::default()
        }
    }

    fn new(cfg: &MptcpConfig, env: &TransportEnv) -> Self {
        debug_assert_eq!(cfg.sender.framing, env.framing);
        Mptcp {
            cfg: cfg.clone(),
            conns: ConnTable::default(),
            counters: Counters::default(),
            subflows_opened: 0,
            handshakes: 0,
            syn_retransmits: 0,
            rng: env.rng("mptcp"),
        }
    }

    fn start_flow(&mut self, ctx: &mut Ctx, id: FlowId) {
        let rec = ctx.flow(id);
        let (src, dst, size) = (rec.src, rec.dst, rec.size);
        let paths = ctx.path_count(src, dst).max(1);
        let k = (self.cfg.subflows as u64).min(paths);
        let subs = self
            .path_keys(id, k, paths)
            .into_iter()
            .enumerate()
            .map(|(i, key)| {
                let cc = Lia::new(&self.cfg.window, self.cfg.coupled, self.cfg.initial_ssthresh);
                let sub = Conn::new(id, src, dst, 0, &self.cfg.sender, cc).on_subflow(i as u8, key);
                if self.cfg.rto_jitter > 0.0 {
                    sub.with_rto_jitter(self.cfg.rto_jitter, Rng::seed_from(self.rng.next_u64()))
                } else {
                    sub
                }
            })
            .collect();
        self.subflows_opened += k;
        let slot = self.conns.insert(id, MpConn::new(id, src, dst, size, subs));
        if self.cfg.connection_setup == ConnectionSetup::Handshake {
            self.conns[slot].open_subflows(ctx, &self.cfg.sender);
            return self.check(slot);
        }
        for i in 0..k as usize {
            self.conns[slot].fill(ctx, i, &self.cfg.sender, &mut self.counters);
        }
        self.check(slot);
    }

    fn on_packet(&mut self, ctx: &mut Ctx, host: HostId, pkt: &Packet) {
        let Some(slot) = self.conns.slot(pkt.flow) else { return };
        let c = &mut self.conns[slot];
        let i = pkt.aux as usize;
        if i >= c.subs.len() {
            return; // not a subflow of this connection
        }
        if pkt.has(flags::SYN) {
            if self.cfg.connection_setup == ConnectionSetup::Handshake && (host == c.src || host == c.dst) {
                if c.on_syn(ctx, &self.cfg.sender, i, host == c.src, pkt) {
                    self.handshakes += 1;
                    c.fill(ctx, i, &self.cfg.sender, &mut self.counters);
                }
                self.check(slot);
            }
            return;
        }
        if host == c.src && c.is_opening(i) {
            return; // a stray: nothing but the SYN-ACK moves a subflow that is opening
        }
        let status = match pkt.kind {
            PacketKind::Data if host == c.dst => {
                c.on_data(ctx, i, &self.cfg.sender, pkt);
                Status::Open
            }
            PacketKind::Ack if host == c.src => c.on_ack(ctx, i, &self.cfg.sender, pkt, &mut self.counters),
            _ => return, // a kind this transport does not use, or at the wrong host
        };
        self.settle(pkt.flow, slot, status);
    }

    fn on_timer(&mut self, ctx: &mut Ctx, kind: WindowTimer, id: u32) {
        let Some(slot) = self.conns.slot(id) else { return };
        let i = match kind {
            WindowTimer::SubflowSyn(i) => {
                if self.conns[slot].on_syn_timer(ctx, &self.cfg.sender, i as usize) {
                    self.syn_retransmits += 1;
                }
                return;
            }
            WindowTimer::Rto(i) => i as usize,
            // LIA does not pace, and the subflows' handshake is MPTCP's own (`SubflowSyn`).
            WindowTimer::Pace(_) | WindowTimer::Start | WindowTimer::Syn => return,
        };
        if i >= self.conns[slot].subs.len() {
            return;
        }
        let status = self.conns[slot].on_rto_timer(ctx, i, &self.cfg.sender, &mut self.counters);
        self.settle(id, slot, status);
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let n = &self.counters;
        let mut out = vec![
            ("retransmitted_packets", n.retransmitted_packets),
            ("fast_retransmits", n.fast_retransmits),
            ("timeouts", n.timeouts),
            ("subflows_opened", self.subflows_opened),
        ];
        // Only with the handshake on, so the default's counters stay as they were.
        if self.cfg.connection_setup == ConnectionSetup::Handshake {
            out.push(("handshakes", self.handshakes));
            out.push(("syn_retransmits", self.syn_retransmits));
        }
        out
    }

    fn flow_state(&self, flow: FlowId, out: &mut Vec<(&'static str, f64)>) {
        let Some(slot) = self.conns.slot(flow) else { return };
        let c = &self.conns[slot];
        out.push(("cwnd_bytes", c.subs.iter().map(|s| s.cc.window_bytes()).sum()));
        out.push(("in_flight_bytes", c.subs.iter().map(|s| s.in_flight_bytes() as f64).sum()));
        out.push(("subflows", c.subs.len() as f64));
        out.push(("lia_alpha", c.alpha));
    }
}
