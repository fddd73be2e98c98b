//! The network: ports (queues + links), routes and the packet pool, and the three things that
//! happen to a packet in it — it is enqueued at an egress port, it starts serializing when the port
//! is free, and it arrives at the far end of the link. Switches forward on arrival; hosts hand the
//! packet to the transport (the simulator loop does that dispatch).
//!
//! Events per packet per hop: one `LinkArrival`, plus one `PortFree` only when the port is
//! backlogged. A packet that finds its port idle starts serializing at once.
//!
//! What an egress port does to a packet is a pipeline of stages (`net::pipeline`): admission,
//! marking, class queues, scheduling, and a dequeue stage; this file holds the mechanics the stages
//! share (occupancy, the class queues' fast path, transmission, arrival).
//!
//! With a `[trace]` table, `tracer` records what happens to the traced flows' packets; without
//! one, each hook is a test of an empty `Option` that the branch predictor always gets right.
//!
//! A lossy link (`loss_probability` > 0) loses each packet at its far end with that probability,
//! drawn from its own random stream: lossless runs draw nothing, so their results do not depend
//! on whether loss exists.

use crate::engine::events::{Event, EventQueue};
use crate::engine::rng::Rng;
use crate::net::packet::{Fate, PacketId, PacketKind, PacketPool};
use crate::net::pipeline::deflection::Deflection;
use crate::net::pipeline::pfc::{is_mac_frame, Pfc};
use crate::net::pipeline::postcard::Postcards;
use crate::net::pipeline::shared_buffer::Buffers;
use crate::net::pipeline::stages::{Stages, ANY_ON_ADMIT};
use crate::net::port::{NodeId, OccupancyStats, Port, PortId, PortRole};
use crate::net::queue::{EcnAt, QueueConfig, Scheduling};
use crate::net::routing::Routes;
use crate::record::trace::{PacketTrace, TraceEvent};
use crate::time::{Rate, Time};
use crate::topology::{Graph, Tier};

/// Queue configurations by port role.
#[derive(Clone, Debug)]
pub struct QueueConfigs {
    pub nic: QueueConfig,
    pub to_host: QueueConfig,
    pub fabric: QueueConfig,
}

pub struct Network {
    pub hosts: u32,
    pub ports: Vec<Port>,
    pub ports_of: Vec<Vec<PortId>>,
    pub node_names: Vec<String>,
    /// Tier of each switch, indexed by `node - hosts`.
    pub tiers: Vec<Tier>,
    /// Bytes queued at each switch over all its ports, and their statistics (indexed by node - hosts).
    pub switch_bytes: Vec<u64>,
    pub switch_occupancy: Vec<OccupancyStats>,
    pub routes: Routes,
    pub pool: PacketPool,
    pub cfgs: Vec<QueueConfig>,
    pub(crate) rng: Rng,
    /// Records the traced flows' packets, when the run traces any.
    pub tracer: Option<Box<PacketTrace>>,
    /// The switches' shared buffers (`[switch] buffer_bytes`).
    pub buffers: Option<Box<Buffers>>,
    /// Priority flow control state (`[switch] pfc`).
    pub pfc: Option<Box<Pfc>>,
    /// PB-FS CC-postcard generation (`[switch] postcards`).
    pub postcards: Option<Box<Postcards>>,
    /// In-order flow deflection (`[switch] iofd`).
    pub deflection: Option<Box<Deflection>>,
    /// The registered switch stages' state (`pipeline::stages`; each `None` while off).
    pub stages: Stages,
    /// PFC frames on links (they sit in pipes but are not pooled packets).
    pub(crate) mac_frames_in_flight: u64,
    /// Random link loss draws only (kept apart so lossless runs never touch it).
    loss_rng: Rng,
    /// The run's seed (switch stages built later derive their own streams from it).
    pub(crate) seed: u64,
}

impl Network {
    /// Builds ports from the graph's links (two per link: ports 2i and 2i + 1 are the two
    /// directions of link i, so `port ^ 1` is a port's reverse) and computes the routes.
    /// `switch_latency` is added to the delay of every link into a switch.
    pub fn build(
        g: &Graph,
        queues: &QueueConfigs,
        switch_latency: Time,
        nic_pacing: Option<Rate>,
        seed: u64,
    ) -> Result<Network, String> {
        let hosts = g.hosts;
        let nodes = hosts + g.switches.len() as u32;
        let cfgs = vec![queues.nic.clone(), queues.to_host.clone(), queues.fabric.clone()];
        let (ports, ports_of) = Self::build_ports(g, nodes, &cfgs, switch_latency, nic_pacing)?;
        let mut routes = Routes::build(hosts, nodes, &ports, &ports_of, seed)?;
        routes.set_tiers(&g.switches.iter().map(|s| s.tier).collect::<Vec<_>>(), seed);
        let mut node_names: Vec<String> = (0..hosts).map(|h| format!("host{h}")).collect();
        node_names.extend(g.switches.iter().map(|s| s.name.clone()));
        let switches = g.switches.len();
        let mut net = Network {
            hosts,
            ports,
            ports_of,
            node_names,
            tiers: g.switches.iter().map(|s| s.tier).collect(),
            switch_bytes: vec![0; switches],
            switch_occupancy: vec![OccupancyStats::default(); switches],
            routes,
            pool: PacketPool::new(),
            cfgs,
            rng: Rng::for_component(seed, "network"),
            tracer: None,
            buffers: None,
            pfc: None,
            postcards: None,
            deflection: None,
            stages: Stages::default(),
            mac_frames_in_flight: 0,
            loss_rng: Rng::for_component(seed, "link-loss"),
            seed,
        };
        net.set_port_stages();
        Ok(net)
    }

    /// Two ports per link (port i ^ 1 is port i's peer), and each node's ports.
    fn build_ports(
        g: &Graph,
        nodes: u32,
        cfgs: &[QueueConfig],
        switch_latency: Time,
        nic_pacing: Option<Rate>,
    ) -> Result<(Vec<Port>, Vec<Vec<PortId>>), String> {
        let hosts = g.hosts;
        let mut ports = Vec::with_capacity(g.links.len() * 2);
        let mut ports_of: Vec<Vec<PortId>> = vec![Vec::new(); nodes as usize];
        let mut add = |from: NodeId, to: NodeId, rate: Rate, loss: f64, link: &crate::topology::Link| {
            let role = if from < hosts {
                PortRole::HostNic
            } else if to < hosts {
                PortRole::ToHost
            } else {
                PortRole::Fabric
            };
            let cfg = role as u16;
            let delay = link.delay + if to >= hosts { switch_latency } else { 0 };
            let id = ports.len() as PortId;
            let mut port = Port::new(from, to, rate, delay, role, cfg, cfgs[cfg as usize].priorities);
            if role == PortRole::HostNic {
                port.pace = nic_pacing.filter(|p| p.bps() < rate.bps());
            }
            port.loss = loss;
            ports.push(port);
            ports_of[from as usize].push(id);
        };
        for l in &g.links {
            if l.a >= nodes || l.b >= nodes || l.a == l.b {
                return Err(format!("link {}-{} does not join two distinct nodes", l.a, l.b));
            }
            if !((0.0..1.0).contains(&l.loss_ab) && (0.0..1.0).contains(&l.loss_ba)) {
                return Err(format!("link {}-{} has a loss probability outside [0, 1)", l.a, l.b));
            }
            add(l.a, l.b, l.rate_ab, l.loss_ab, l);
            add(l.b, l.a, l.rate_ba, l.loss_ba, l);
        }
        debug_assert!(ports
            .iter()
            .enumerate()
            .all(|(i, p)| ports[i ^ 1].owner == p.peer && ports[i ^ 1].peer == p.owner));
        Ok((ports, ports_of))
    }

    /// Sets each port's stage state from its configuration: DRR credit, and whether a dequeue stage
    /// runs (marking at dequeue, a registered stage's dequeue hook, shared-buffer release).
    pub(crate) fn set_port_stages(&mut self) {
        for id in 0..self.ports.len() {
            let stage_hook = self.stages_dequeue_at(&self.ports[id]);
            let p = &mut self.ports[id];
            let cfg = &self.cfgs[p.cfg as usize];
            p.deficits = match cfg.scheduling {
                Scheduling::Drr(_) => Some(Box::default()),
                _ => None,
            };
            p.dequeue_stage = cfg.ecn_at == EcnAt::Dequeue || cfg.shared_buffer || stage_hook;
        }
    }

    /// The port carrying the opposite direction of `port`'s link.
    #[inline]
    pub fn reverse(port: PortId) -> PortId {
        port ^ 1
    }

    #[inline]
    pub fn nic_port(&self, host: u32) -> PortId {
        self.routes.nic_port[host as usize]
    }

    #[inline]
    pub(crate) fn change_occupancy(&mut self, port: PortId, delta_bytes: i64, delta_packets: i64, now: Time) {
        let p = &mut self.ports[port as usize];
        let before = p.bytes;
        p.bytes = (p.bytes as i64 + delta_bytes) as u64;
        p.packets = (p.packets as i64 + delta_packets) as u64;
        p.occupancy.update(before, p.bytes, now);
        let owner = p.owner;
        if owner >= self.hosts {
            let s = (owner - self.hosts) as usize;
            let before = self.switch_bytes[s];
            self.switch_bytes[s] = (before as i64 + delta_bytes) as u64;
            self.switch_occupancy[s].update(before, self.switch_bytes[s], now);
        }
    }

    /// Queues an accepted packet in `class`, or starts sending it if the port is idle.
    #[inline]
    pub(crate) fn admit(&mut self, port: PortId, pkt: PacketId, class: usize, now: Time, ev: &mut EventQueue) {
        if self.tracer.is_some() {
            self.trace_in_class(now, pkt, port, TraceEvent::Enqueue, class);
        }
        if ANY_ON_ADMIT {
            self.stages_on_admit(port, pkt, class, now);
        }
        let p = &mut self.ports[port as usize];
        let packet = self.pool.get(pkt);
        let (size, is_data) = (packet.size, packet.kind == PacketKind::Data);
        if p.busy_until <= now && p.packets == 0 && p.paused & (1 << class) == 0 {
            self.start_tx(port, pkt, size, is_data, class, now, ev);
            return;
        }
        p.push(class, pkt, size, is_data);
        if !p.wake_pending && p.paused & (1 << class) == 0 {
            p.wake_pending = true;
            ev.schedule(p.busy_until.max(now), Event::PortFree(port));
        }
        self.change_occupancy(port, size as i64, 1, now);
    }

    /// Puts a packet (taken from `class`) on the wire now, then runs the port's dequeue stage. The
    /// link must be free: this is where "a link never carries more than its rate" is enforced.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn start_tx(
        &mut self,
        port: PortId,
        pkt: PacketId,
        size: u32,
        is_data: bool,
        class: usize,
        now: Time,
        ev: &mut EventQueue,
    ) {
        let p = &mut self.ports[port as usize];
        assert!(p.busy_until <= now, "port {port} starts a packet while busy until {}", p.busy_until);
        p.wire_data_bytes = if is_data { size } else { 0 };
        let arrival = now + p.rate.tx_time(size) + p.delay;
        p.busy_until = now + p.busy_time(size);
        p.counters.tx_bytes += size as u64;
        p.counters.tx_packets += 1;
        if p.pipe_push(arrival, pkt) {
            ev.schedule(arrival, Event::LinkArrival(port));
        }
        if p.notify_idle && !p.wake_pending {
            p.wake_pending = true;
            ev.schedule(p.busy_until, Event::PortFree(port));
        }
        let dequeue_stage = p.dequeue_stage;
        if self.tracer.is_some() {
            self.trace(now, pkt, port, TraceEvent::TxStart);
        }
        if dequeue_stage {
            self.on_dequeue(port, pkt, size, class, now, ev);
        }
    }

    /// The port finished serializing. Starts the next packet; returns true when the port is now
    /// idle with nothing queued and its owner asked to be told (`notify_idle`).
    pub fn on_port_free(&mut self, port: PortId, now: Time, ev: &mut EventQueue) -> bool {
        let p = &mut self.ports[port as usize];
        p.wake_pending = false;
        if p.busy_until > now {
            // Woken early (a pause was lifted while busy): wait for the wire.
            p.wake_pending = true;
            ev.schedule(p.busy_until, Event::PortFree(port));
            return false;
        }
        if p.shaper.is_some() {
            return self.on_shaped_port_free(port, now, ev);
        }
        let Some(d) = p.pop_next(&self.cfgs[p.cfg as usize]) else {
            // Nothing sendable: empty, or every waiting class is paused (then not idle).
            return p.notify_idle && p.packets == 0;
        };
        self.change_occupancy(port, -(d.size as i64), -1, now);
        self.start_tx(port, d.pkt, d.size, d.is_data, d.class, now, ev);
        let p = &mut self.ports[port as usize];
        if p.has_sendable() && !p.wake_pending {
            p.wake_pending = true;
            ev.schedule(p.busy_until, Event::PortFree(port));
        }
        false
    }

    /// `on_port_free` for a port with a credit queue (`pipeline::credit_shaper`).
    fn on_shaped_port_free(&mut self, port: PortId, now: Time, ev: &mut EventQueue) -> bool {
        let Some((d, credit)) = self.shaped_next(port, now, ev) else {
            let p = &self.ports[port as usize];
            return p.notify_idle && p.packets == 0 && p.shaper.as_deref().is_some_and(|s| s.is_empty());
        };
        if !credit {
            self.change_occupancy(port, -(d.size as i64), -1, now);
        }
        self.start_tx(port, d.pkt, d.size, d.is_data, d.class, now, ev);
        self.shaped_rearm(port, now, ev);
        false
    }

    /// Hints the CPU to fetch a port's hot fields (no effect on results).
    #[inline(always)]
    pub fn prefetch_port(&self, port: PortId) {
        if let Some(p) = self.ports.get(port as usize) {
            p.prefetch();
        }
    }

    /// As `prefetch_port`, and the heads of its class queues (a `PortFree` dequeues one).
    #[inline(always)]
    pub fn prefetch_departure(&self, port: PortId) {
        if let Some(p) = self.ports.get(port as usize) {
            p.prefetch();
            p.prefetch_queue_heads();
        }
    }

    /// As `prefetch_port`, and the packet about to arrive over that port's link.
    #[inline(always)]
    pub fn prefetch_arrival(&self, port: PortId) {
        if let Some(p) = self.ports.get(port as usize) {
            p.prefetch();
            if let Some(pkt) = p.pipe_head_packet() {
                self.pool.prefetch(pkt);
            }
        }
    }

    /// The head of the port's pipe reached the far end. Returns the packet and the node it
    /// reached, or `None` when it ends there: a PFC frame (applied here to the far node's port), or
    /// a packet a lossy link lost (counted as a loss of this port).
    #[inline]
    pub fn on_link_arrival(&mut self, port: PortId, now: Time, ev: &mut EventQueue) -> Option<(PacketId, NodeId)> {
        let p = &mut self.ports[port as usize];
        let (t, pkt) = p.pipe_pop();
        debug_assert_eq!(t, now);
        if let Some(next) = p.pipe_head_time() {
            ev.schedule(next, Event::LinkArrival(port));
        }
        let (peer, loss) = (p.peer, p.loss);
        if is_mac_frame(pkt) {
            self.on_mac_frame(port, pkt, now, ev);
            return None;
        }
        // Draw only on lossy links: a lossless run's random streams are untouched.
        if loss > 0.0 && self.loss_rng.bernoulli(loss) {
            self.ports[port as usize].counters.losses += 1;
            if self.tracer.is_some() {
                self.trace_loss(now, pkt, port);
            }
            self.pool.release(pkt, Fate::Dropped);
            return None;
        }
        if self.tracer.is_some() {
            self.trace_arrival(now, pkt, port);
        }
        Some((pkt, peer))
    }

    // Tracing: out of line and cold, so that a run without a trace pays one test of `tracer` per
    // hook and nothing else.

    /// Records `event` for a packet at a port, in the port's class for the packet's priority.
    #[cold]
    #[inline(never)]
    pub(crate) fn trace(&mut self, now: Time, pkt: PacketId, port: PortId, event: TraceEvent) {
        let class = self.ports[port as usize].class_of(self.pool.get(pkt).prio);
        self.trace_in_class(now, pkt, port, event, class);
    }

    /// Records `event` for a packet at a port (the node that owns it), in priority class `class`.
    #[cold]
    #[inline(never)]
    pub(crate) fn trace_in_class(&mut self, now: Time, pkt: PacketId, port: PortId, event: TraceEvent, class: usize) {
        let (p, packet) = (&self.ports[port as usize], self.pool.get(pkt));
        if let Some(t) = self.tracer.as_deref_mut() {
            t.record(now, packet, p.owner, port, event, p.bytes, class);
        }
    }

    /// Records a packet reaching the far end of `port`'s link, and its delivery if that is a host.
    #[cold]
    #[inline(never)]
    fn trace_arrival(&mut self, now: Time, pkt: PacketId, port: PortId) {
        let (p, packet) = (&self.ports[port as usize], self.pool.get(pkt));
        let class = p.class_of(packet.prio);
        if let Some(t) = self.tracer.as_deref_mut() {
            t.record(now, packet, p.peer, port, TraceEvent::Arrive, p.bytes, class);
            if p.peer < self.hosts {
                // The caller hands it to the host's transport now.
                t.record(now, packet, p.peer, port, TraceEvent::Deliver, p.bytes, class);
            }
        }
    }

    /// Records a packet lost by `port`'s link at its far end.
    #[cold]
    #[inline(never)]
    fn trace_loss(&mut self, now: Time, pkt: PacketId, port: PortId) {
        let (p, packet) = (&self.ports[port as usize], self.pool.get(pkt));
        let class = p.class_of(packet.prio);
        if let Some(t) = self.tracer.as_deref_mut() {
            t.record(now, packet, p.peer, port, TraceEvent::Lose, p.bytes, class);
        }
    }

    /// `pkt` reached switch `node` over `port`'s link: count the hop, note its ingress (the shared
    /// buffer accounts it there), pick the egress port and enqueue.
    #[inline]
    pub fn switch_arrival(&mut self, port: PortId, node: NodeId, pkt: PacketId, now: Time, ev: &mut EventQueue) {
        let packet = self.pool.get_mut(pkt);
        packet.ingress = port;
        packet.hops = packet.hops.wrapping_add(1);
        let mut out = self.routes.next_port(node, packet, &mut self.rng);
        if let Some(d) = self.deflection.as_deref_mut() {
            let s = Deflection::index(node, self.hosts);
            out = d.route(s, packet, out, &self.ports, &self.ports_of[node as usize]);
        }
        // The egress port is known only now and is cold on large fabrics: asking for all its lines
        // at once lets enqueueing wait for one miss rather than one per line it reads.
        self.ports[out as usize].prefetch();
        if self.postcards.is_some() {
            self.postcard_stage(node, out, pkt, now, ev);
        }
        self.enqueue(out, pkt, now, ev);
    }

    /// A switch forwards `pkt` again (a header it returns to its sender): pick the egress port and
    /// enqueue.
    #[inline]
    pub fn forward(&mut self, node: NodeId, pkt: PacketId, now: Time, ev: &mut EventQueue) {
        let packet = self.pool.get_mut(pkt);
        let mut port = self.routes.next_port(node, packet, &mut self.rng);
        if let Some(d) = self.deflection.as_deref_mut() {
            let s = Deflection::index(node, self.hosts);
            port = d.route(s, packet, port, &self.ports, &self.ports_of[node as usize]);
        }
        self.enqueue(port, pkt, now, ev);
    }

    /// Opens the measurement window: occupancy maxima and integrals and counters restart.
    pub fn reset_stats(&mut self, now: Time) {
        for p in &mut self.ports {
            p.occupancy.reset(p.bytes, now);
            p.counters = Default::default();
            if let Some(sh) = p.shaper.as_deref_mut() {
                sh.counters = Default::default();
            }
        }
        for (s, o) in self.switch_occupancy.iter_mut().enumerate() {
            o.reset(self.switch_bytes[s], now);
        }
        if let Some(b) = self.buffers.as_deref_mut() {
            b.reset_stats();
        }
        if let Some(pfc) = self.pfc.as_deref_mut() {
            pfc.reset_stats(now);
        }
        self.reset_stage_stats(now);
    }

    /// Packets physically in the network: waiting in a queue or on a link (PFC frames, which are
    /// not pooled packets, excepted).
    pub fn resident_packets(&self) -> u64 {
        self.ports.iter().map(|p| p.packets + p.in_pipe() as u64).sum::<u64>() - self.mac_frames_in_flight
            + self.shaped_credits_waiting()
    }

    /// Conservation: every packet created was delivered or dropped, or is in a queue or on a
    /// link right now (so none leaked out of the pool unaccounted).
    pub fn check_conservation(&self) -> Result<(), String> {
        self.pool.check_conservation()?;
        let resident = self.resident_packets();
        if resident != self.pool.live() {
            return Err(format!(
                "{} packets alive in the pool but {resident} in queues and on links",
                self.pool.live()
            ));
        }
        Ok(())
    }
}
