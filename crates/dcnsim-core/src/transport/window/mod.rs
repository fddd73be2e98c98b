//! The window sender: a reliable byte stream ([`sender`]) whose window comes from a congestion
//! controller ([`cc`]). A protocol built on it is a [`WindowProtocol`]: its names, its
//! controller and the controller's own spec keys; [`WindowTransport`] makes it a [`Protocol`].
//! DCTCP (`transport/dctcp.rs`), NewReno (`transport/newreno.rs`) and Swift (`transport/swift.rs`) are such
//! protocols. A new connection opens at once, or after a SYN / SYN-ACK round trip ([`handshake`]).
//!
//! Kernel cost (`os_overhead_us`, default 0): the Dart paper runs its DCTCP baseline with "an OS overhead
//! of [lost] for each data transfer". Modelled as one delay per message at the sender: the message
//! enters the stack (its connection opens, or it queues for a pooled one) that long after it arrives,
//! so its completion time is the network's plus exactly the overhead. Not modelled: a receive-side
//! delay (a lone message's completion time is the same either way; under contention only when its
//! packets meet others differs), a variable or heavy-tailed kernel delay, CPU contention between
//! transfers, per-packet costs (so the overhead costs latency, never throughput).

pub mod cc;
pub mod handshake;
#[cfg(test)]
mod handshake_tests;
pub mod pbfs;
pub mod pool;
pub mod sender;
#[cfg(test)]
mod tests;
pub mod timer;

use super::conns::ConnTable;
use super::parts::keys;
use super::{ClassUse, Conformance, Ctx, LoneFlow, Needs, Protocol, SpecEnv, TransportEnv};
use crate::net::packet::{flags, FlowId, HostId, Packet, PacketKind};
use crate::spec_reader::{Section, SpecResult};
use crate::time::{from_us, Time};
use crate::transport::rate::fast_start::{FastStart, Pbfs};
use crate::transport::rate::start::StartCounters;
use cc::{CongestionControl, WindowSetup};
use handshake::{ConnectionSetup, Handshakes};
use pool::{Pools, Take, Warm};
use sender::{Conn, Counters, SenderConfig, Status};
use timer::WindowTimer;

/// A protocol made of the window sender and a congestion controller.
pub trait WindowProtocol {
    /// The registered name(s) with a one-line description citing the paper.
    const NAMES: &'static [(&'static str, &'static str)];
    /// Data packets are ECN-capable.
    const ECN: bool;
    type Control: CongestionControl + Clone;
    type Params: Clone + std::fmt::Debug + PartialEq;

    /// The spec fragment the conformance suite runs the protocol with (its lone flows are exact:
    /// data leaves at line rate from the first instant when the initial window covers the BDP).
    const CONFORMANCE_SPEC: &'static str = "";
    /// How the conformance suite judges a lone flow.
    const LONE_FLOW: LoneFlow = LoneFlow::Exact;

    /// Reads the controller's own keys (read before the sender's shared ones).
    fn read_params(s: &mut Section) -> SpecResult<Self::Params>;
    fn control(params: &Self::Params, window: &WindowSetup) -> Self::Control;

    /// The counter of window cuts for congestion signals (the controller's `on_ack` returning true).
    const CUT_COUNTER: &'static str = "ecn_window_cuts";

    /// The controller scales with the path's switch count (Swift's per-hop target): the sender then
    /// builds each flow's controller with [`WindowProtocol::control_on_path`].
    const WANTS_HOPS: bool = false;
    /// Checks the run's spec beyond the protocol's own keys (e.g. a switch feature it needs).
    fn check_env(_s: &mut Section, _name: &str, _env: &SpecEnv) -> SpecResult<()> {
        Ok(())
    }

    /// The controller of a flow whose path crosses `hops` switches (0 unless `WANTS_HOPS`).
    fn control_on_path(params: &Self::Params, window: &WindowSetup, hops: u32) -> Self::Control {
        debug_assert!(Self::WANTS_HOPS || hops == 0);
        Self::control(params, window)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct WindowConfig<P> {
    pub params: P,
    pub window: WindowSetup,
    pub sender: SenderConfig,
    /// Persistent connections per host pair that messages reuse ([`pool`]); 0 = a new connection
    /// per message.
    pub connection_pool: u32,
    /// `line_rate` (the controller's own start) or PB-FS ([`pbfs`]).
    pub fast_start: FastStart,
    /// The kernel's per-transfer cost (`os_overhead_us`): a message enters the sender's stack this long
    /// after it arrives, so its completion time counts it once; 0 = none.
    pub os_overhead: Time,
    /// Whether a new connection first spends a SYN / SYN-ACK round trip ([`handshake`]).
    pub connection_setup: ConnectionSetup,
}

/// Reads the keys every window protocol shares (MPTCP's subflows read them too; the caller refuses
/// source routing where it does not choose routes).
pub(crate) fn read_shared(s: &mut Section, env: &SpecEnv, ecn: bool) -> SpecResult<(WindowSetup, SenderConfig)> {
    s.renamed("init_cwnd_packets", "initial_window_packets")?;
    s.renamed("max_cwnd_packets", "max_window_packets")?;
    s.renamed("ack_priority", "control_priority")?;
    let iw =
        s.u64_or("initial_window_packets", 10, "packets", "initial congestion window (SIRD's evaluation: ~1 BDP)")?;
    s.ensure((1..=1_000_000).contains(&iw), "initial_window_packets", "must be in [1, 1000000]")?;
    let slow_start = s.bool_or(
        "slow_start",
        true,
        "grow exponentially up to ssthresh; false = fixed initial window, additive increase only (an error for swift)",
    )?;
    let max_window = s.u64_opt("max_window_packets", "packets", "cap on the congestion window; unset = none")?;
    if let Some(m) = max_window {
        s.ensure(m >= 1, "max_window_packets", "must be at least 1")?;
    }
    let min_rto = s.f64_or("min_rto_us", 200.0, "us", "floor of the retransmission timeout")?;
    s.ensure(min_rto > 0.0 && min_rto <= crate::limits::MAX_RTO_US, "min_rto_us", "must be in (0, 1e7] us")?;
    let init_rto = s.f64_or("initial_rto_us", 1000.0, "us", "retransmission timeout before the first RTT sample")?;
    s.ensure(init_rto > 0.0 && init_rto <= crate::limits::MAX_RTO_US, "initial_rto_us", "must be in (0, 1e7] us")?;
    let dupack = s.u64_or("dupack_threshold", 3, "ACKs", "duplicate ACKs that trigger fast retransmit")?;
    s.ensure((1..=100).contains(&dupack), "dupack_threshold", "must be in [1, 100]")?;
    let (data_priority, control_priority) =
        keys::read_classes(s, "priority class of data packets (0 = highest)", "priority class of ACKs (0 = highest)")?;
    let sub_packet = ecn && read_window_floor(s)?;
    let window = WindowSetup {
        mss_bytes: env.framing.mss() as u64,
        initial_window_packets: iw,
        max_window_packets: max_window,
        slow_start,
        sub_packet_ecn_cuts: sub_packet,
    };
    let sender = SenderConfig {
        framing: env.framing,
        dupack_threshold: dupack as u32,
        min_rto: from_us(min_rto),
        initial_rto: from_us(init_rto),
        data_priority,
        control_priority,
        ecn_capable: ecn,
        lb: env.load_balancing,
        pbt_distance: None,
        fct_at_last_ack: false,
        sub_packet_wait: sub_packet,
    };
    Ok((window, sender))
}

/// Reads `window_floor` (ECN protocols only): true when an ECN cut may leave under one packet.
fn read_window_floor(s: &mut Section) -> SpecResult<bool> {
    let floor = s.choice_or(
        "window_floor",
        &["one_packet", "none"],
        "one_packet",
        "one_packet = an ECN cut leaves at least one packet of window, and one segment may always go when nothing \
         is in flight (Linux); none = a cut may leave less, and the connection then sends nothing until its \
         retransmission timer fires (restarted by each ACK, backed off on repeated echoes at one packet): \
         RFC 3168 6.1.2, as ns-2's TcpAgent (and so the ExpressPass authors' DCTCP) does it",
    )?;
    Ok(floor == "none")
}

/// Reads `fct_end`: true when a flow completes at its sender's last ACK.
fn read_fct_end(s: &mut Section) -> SpecResult<bool> {
    let end = s.choice_or(
        "fct_end",
        &["last_byte", "last_ack"],
        "last_byte",
        "when a flow completes: last_byte = the receiver has every byte; last_ack = the sender has the ACK of the \
         last byte, half a round trip later (the ExpressPass authors' ns-2 FullTcp writes its FCT there: \
         tcp-full.cc newack)",
    )?;
    Ok(end == "last_ack")
}

/// A window protocol as a transport: its connections and counters.
pub struct WindowTransport<P: WindowProtocol> {
    cfg: WindowConfig<P::Params>,
    conns: ConnTable<Conn<P::Control>>,
    counters: Counters,
    /// With `connection_pool` > 0.
    pools: Option<Pools<P::Control>>,
    /// PB-FS resolved for the run (`fast_start = "pbfs"`).
    pbfs: Option<Pbfs>,
    start_counters: StartCounters,
    /// With `connection_setup = "handshake"`.
    handshakes: Option<Handshakes>,
}

impl<P: WindowProtocol> WindowTransport<P> {
    /// Starts message `id`, on a pooled connection (`warm`: its state; a fresh one has only a path) or,
    /// without pools, on a new connection.
    fn launch(&mut self, ctx: &mut Ctx, id: FlowId, pooled: Option<(u32, Option<Warm<P::Control>>)>) {
        let rec = ctx.flow(id);
        let start = self.pbfs_flow(rec.size, ctx.nic_rate(rec.src));
        let warm_start = matches!(pooled, Some((_, Some(_))));
        let mut conn = match &pooled {
            Some((_, Some(w))) => Conn::new(id, rec.src, rec.dst, rec.size, &self.cfg.sender, w.cc.clone()),
            _ => {
                let hops = if P::WANTS_HOPS { ctx.hops(rec.src, rec.dst) } else { 0 };
                let cc = P::control_on_path(&self.cfg.params, &self.cfg.window, hops);
                Conn::new(id, rec.src, rec.dst, rec.size, &self.cfg.sender, cc)
            }
        };
        if let Some((path_key, warm)) = pooled {
            conn = conn.on_connection(path_key, warm.map(|w| w.rtt));
        }
        conn.pbfs = start;
        let slot = self.conns.insert(id, conn);
        if self.handshakes.is_some() && !warm_start {
            return self.open_connection(ctx, slot);
        }
        self.conns[slot].send_window(ctx, &self.cfg.sender, &mut self.counters);
        self.check(slot);
    }

    /// The message on `slot` is done: its connection goes back to the pool (and to the next message
    /// waiting for one).
    fn release(&mut self, ctx: &mut Ctx, id: FlowId, slot: u32) {
        let Some(pools) = self.pools.as_mut() else {
            self.conns.remove(id, slot);
            return;
        };
        let c = &self.conns[slot];
        let ((src, dst), warm) = (c.endpoints(), c.warm());
        self.conns.remove(id, slot);
        if let Some((next, warm)) = pools.give_back(src, dst, warm) {
            self.launch(ctx, next, Some((warm.path_key, Some(warm))));
        }
    }

    /// Message `id` enters the sender's stack (after its OS overhead): on a pooled connection, or a new one.
    fn enter_stack(&mut self, ctx: &mut Ctx, id: FlowId) {
        let Some(pools) = self.pools.as_mut() else {
            return self.launch(ctx, id, None);
        };
        let rec = ctx.flow(id);
        match pools.take(id, rec.src, rec.dst) {
            Take::Warm(w) => self.launch(ctx, id, Some((w.path_key, Some(w)))),
            Take::Fresh(path_key) => self.launch(ctx, id, Some((path_key, None))),
            Take::Wait => {} // started when a connection of the pair comes free
        }
    }

    #[inline]
    fn check(&self, slot: u32) {
        if cfg!(debug_assertions) {
            self.conns[slot].check_invariants(&self.cfg.sender);
        }
    }
}

impl<P: WindowProtocol> Protocol for WindowTransport<P> {
    const NAMES: &'static [(&'static str, &'static str)] = P::NAMES;
    type Config = WindowConfig<P::Params>;
    type Timer = WindowTimer;

    fn read(s: &mut Section, name: &str, env: &SpecEnv) -> SpecResult<Self::Config> {
        let params = P::read_params(s)?;
        let (window, mut sender) = read_shared(s, env, P::ECN)?;
        keys::refuse_source_routing(s, env, name)?;
        let fast_start = pbfs::read(s, env)?;
        sender.pbt_distance = if let FastStart::Pbfs(k) = fast_start { Some(k.delta) } else { None };
        P::check_env(s, name, env)?;
        let pool = s.u64_or("connection_pool", 0, "connections",
            "messages between a host pair reuse this many persistent connections, starting with the window the connection's last message left (the SIRD paper's DCTCP and Swift: 40); 0 = a new connection per message")?;
        s.ensure(pool <= 1_000_000, "connection_pool", format!("must be in [0, 1000000], got {pool}"))?;
        let os = s.f64_or("os_overhead_us", 0.0, "us",
            "the kernel's cost per transfer: a message enters the sender's stack this long after it arrives, and its completion time counts it (the Dart paper's DCTCP baseline; dart-scale uses 24)")?;
        s.ensure((0.0..=1e6).contains(&os), "os_overhead_us", format!("must be in [0, 1e6] us, got {os}"))?;
        let os_overhead = from_us(os);
        let connection_setup = handshake::read(s)?;
        sender.fct_at_last_ack = read_fct_end(s)?;
        Ok(WindowConfig {
            params,
            window,
            sender,
            connection_pool: pool as u32,
            fast_start,
            os_overhead,
            connection_setup,
        })
    }

    fn name(_cfg: &Self::Config) -> &'static str {
        P::NAMES[0].0
    }

    fn conformance(_name: &str) -> Conformance {
        Conformance { spec: P::CONFORMANCE_SPEC, lone_flow: P::LONE_FLOW, exempt: &[] }
    }

    fn needs(cfg: &Self::Config) -> Needs {
        let class = |key, class, purpose| ClassUse { key, class, explicit: true, purpose };
        let (data, control) = (cfg.sender.data_priority, cfg.sender.control_priority);
        Needs {
            classes: vec![class("data_priority", data, "data"), class("control_priority", control, "ACKs")],
            ..Needs::default()
        }
    }

    fn new(cfg: &Self::Config, env: &TransportEnv) -> Self {
        debug_assert_eq!(cfg.sender.framing, env.framing);
        let pools = (cfg.connection_pool > 0).then(|| Pools::new(cfg.connection_pool));
        WindowTransport {
            cfg: cfg.clone(),
            conns: ConnTable::default(),
            counters: Counters::default(),
            pools,
            pbfs: pbfs::resolve(&cfg.fast_start, env),
            start_counters: StartCounters::default(),
            handshakes: (cfg.connection_setup == ConnectionSetup::Handshake).then(Handshakes::default),
        }
    }

    fn start_flow(&mut self, ctx: &mut Ctx, id: FlowId) {
        if self.cfg.os_overhead > 0 {
            return ctx.set_timer(ctx.now() + self.cfg.os_overhead, WindowTimer::Start, id);
        }
        self.enter_stack(ctx, id);
    }

    fn on_packet(&mut self, ctx: &mut Ctx, host: HostId, pkt: &Packet) {
        let Some(slot) = self.conns.slot(pkt.flow) else {
            return; // a straggler for a connection that already finished
        };
        if let Some(hs) = &self.handshakes {
            if pkt.has(flags::SYN) {
                return self.on_syn(ctx, host, slot, pkt);
            }
            if hs.is_opening(pkt.flow) {
                return; // a stray: nothing but the SYN-ACK moves a connection that is opening
            }
        }
        let c = &mut self.conns[slot];
        let (src, dst) = c.endpoints();
        match pkt.kind {
            PacketKind::Data if host == dst => c.on_data(ctx, &self.cfg.sender, pkt),
            PacketKind::Ack if host == src => {
                let before = self.pbfs_before_ack(slot);
                let c = &mut self.conns[slot];
                if c.on_ack(ctx, &self.cfg.sender, pkt, &mut self.counters) == Status::Done {
                    if self.cfg.sender.fct_at_last_ack {
                        ctx.finished(pkt.flow);
                    }
                    self.release(ctx, pkt.flow, slot);
                    return;
                }
                self.pbfs_after_ack(slot, before);
            }
            PacketKind::Control if host == src => self.on_postcard(ctx, host, slot, pkt),
            _ => return, // not a kind this sender uses (e.g. a trimmed header), or at the wrong host
        }
        self.check(slot);
    }

    fn on_timer(&mut self, ctx: &mut Ctx, kind: WindowTimer, id: u32) {
        let rto = match kind {
            WindowTimer::Start => return self.enter_stack(ctx, id),
            WindowTimer::Syn => return self.on_syn_timer(ctx, id),
            WindowTimer::Rto(_) => true,
            WindowTimer::Pace(_) => false,
            WindowTimer::SubflowSyn(_) => return debug_assert!(false, "MPTCP's SYN timer at a window transport"),
        };
        let Some(slot) = self.conns.slot(id) else { return };
        let c = &mut self.conns[slot];
        if rto {
            c.on_rto_timer(ctx, &self.cfg.sender, &mut self.counters);
        } else {
            c.on_pace_timer(ctx, &self.cfg.sender, &mut self.counters);
        }
        self.check(slot);
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let n = &self.counters;
        let mut out = vec![
            ("retransmitted_packets", n.retransmitted_packets),
            ("fast_retransmits", n.fast_retransmits),
            ("timeouts", n.timeouts),
            (P::CUT_COUNTER, n.window_cuts),
        ];
        if self.cfg.sender.sub_packet_wait {
            out.push(("sub_packet_waits", n.sub_packet_waits));
        }
        self.pbfs_counters(&mut out);
        self.handshake_counters(&mut out);
        out
    }

    fn flow_state(&self, flow: FlowId, out: &mut Vec<(&'static str, f64)>) {
        if let Some(slot) = self.conns.slot(flow) {
            let c = &self.conns[slot];
            c.cc.state(out);
            out.push(("in_flight_bytes", c.in_flight_bytes() as f64));
            if let Some(srtt) = c.srtt_us() {
                out.push(("srtt_us", srtt));
            }
        }
    }
}
