//! The network: ports (queues + links), routes and the packet pool, and the three things that
//! happen to a packet in it — it is enqueued at an egress port, it starts serializing when the port
//! is free, and it arrives at the far end of the link. Switches forward on arrival; hosts hand the
//! packet to the transport (the simulator loop does that dispatch).
//!
//! Events per packet per hop: one `LinkArrival`, plus one `PortFree` only when the port is
//! backlogged. A packet that finds its port idle starts serializing at once.
//!
//! With a `[trace]` table, `tracer` records what happens to the traced flows' packets; without
//! one, each hook is a test of an empty `Option` that the branch predictor always gets right.
//!
//! A lossy link (`loss_probability` > 0) loses each packet at its far end with that probability,
//! drawn from its own random stream: lossless runs draw nothing, so their results do not depend
//! on whether loss exists.

use crate::engine::events::{Event, EventQueue};
use crate::engine::rng::Rng;
use crate::engine::time::{Rate, Time};
use crate::metrics::trace::{PacketTrace, TraceEvent};
use crate::net::packet::{flags, Fate, LoadBalancing, PacketId, PacketKind, PacketPool};
use crate::net::port::{NodeId, OccupancyStats, Port, PortId, PortRole};
use crate::net::queue::{QueueConfig, Scheduling, Trim};
use crate::net::routing::Routes;
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
    rng: Rng,
    /// Records the traced flows' packets, when the run traces any.
    pub tracer: Option<Box<PacketTrace>>,
    /// Random link loss draws only (kept apart so lossless runs never touch it).
    loss_rng: Rng,
}

impl Network {
    /// Builds ports from the graph's links (two per link) and computes the routes.
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
        let routes = Routes::build(hosts, nodes, &ports, &ports_of, seed)?;
        let mut node_names: Vec<String> = (0..hosts).map(|h| format!("host{h}")).collect();
        node_names.extend(g.switches.iter().map(|s| s.name.clone()));
        let switches = g.switches.len();
        Ok(Network {
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
            loss_rng: Rng::for_component(seed, "link-loss"),
        })
    }

    #[inline]
    pub fn nic_port(&self, host: u32) -> PortId {
        self.routes.nic_port[host as usize]
    }

    #[inline]
    fn change_occupancy(&mut self, port: PortId, delta_bytes: i64, delta_packets: i64, now: Time) {
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

    /// Offers a packet to an egress port: drop (or trim), mark, and queue or start sending at once.
    pub fn enqueue(&mut self, port: PortId, pkt: PacketId, now: Time, ev: &mut EventQueue) {
        let p = &mut self.ports[port as usize];
        let cfg = &self.cfgs[p.cfg as usize];
        if let Some(trim) = cfg.trim {
            return self.enqueue_trimming(port, pkt, trim, now, ev);
        }
        let packet = self.pool.get_mut(pkt);
        let size = packet.size;
        if cfg.overflows(p.bytes, p.packets, size) {
            p.counters.drops += 1;
            if self.tracer.is_some() {
                self.trace(now, pkt, port, TraceEvent::Drop);
            }
            self.pool.release(pkt, Fate::Dropped);
            return;
        }
        let class = p.class_of(packet.prio);
        if packet.has(flags::ECT) && cfg.should_mark(p.bytes, p.packets, &mut self.rng) {
            if !packet.has(flags::CE) {
                p.counters.marks += 1;
            }
            packet.flags |= flags::CE;
            if self.tracer.is_some() {
                self.trace_in_class(now, pkt, port, TraceEvent::Mark, class);
            }
        }
        self.admit(port, pkt, class, now, ev);
    }

    /// Queues an accepted packet in `class`, or starts sending it if the port is idle.
    #[inline]
    fn admit(&mut self, port: PortId, pkt: PacketId, class: usize, now: Time, ev: &mut EventQueue) {
        if self.tracer.is_some() {
            self.trace_in_class(now, pkt, port, TraceEvent::Enqueue, class);
        }
        let p = &mut self.ports[port as usize];
        let packet = self.pool.get(pkt);
        let (size, is_data) = (packet.size, packet.kind == PacketKind::Data);
        if p.busy_until <= now && p.packets == 0 && p.paused & (1 << class) == 0 {
            self.start_tx(port, pkt, size, is_data, now, ev);
            return;
        }
        p.push(class, pkt, size, is_data);
        if !p.wake_pending && p.paused & (1 << class) == 0 {
            p.wake_pending = true;
            ev.schedule(p.busy_until.max(now), Event::PortFree(port));
        }
        self.change_occupancy(port, size as i64, 1, now);
    }

    /// The trimming discipline (see `queue::Trim`).
    fn enqueue_trimming(&mut self, port: PortId, pkt: PacketId, trim: Trim, now: Time, ev: &mut EventQueue) {
        let packet = *self.pool.get(pkt);
        if packet.kind != PacketKind::Data {
            return self.admit_header(port, pkt, trim, now, ev);
        }
        let p = &self.ports[port as usize];
        let cfg = &self.cfgs[p.cfg as usize];
        let class = p.class_of(packet.prio);
        debug_assert!(class > 0, "data must not share the header class when trimming");
        let in_service = if p.busy_until > now { p.wire_data_bytes } else { 0 };
        let data_bytes = p.class_bytes(class) + in_service as u64;
        let data_packets = p.class_len(class) as u64 + u64::from(in_service > 0);
        if !cfg.overflows(data_bytes, data_packets, packet.size) {
            if packet.has(flags::ECT) && cfg.should_mark(data_bytes, data_packets, &mut self.rng) {
                self.pool.get_mut(pkt).flags |= flags::CE;
                self.ports[port as usize].counters.marks += 1;
                if self.tracer.is_some() {
                    self.trace(now, pkt, port, TraceEvent::Mark);
                }
            }
            return self.admit(port, pkt, class, now, ev);
        }
        // Full: trim the arrival, or (with probability 1/2) the newest queued data packet.
        if p.class_len(class) > 0 && self.rng.bernoulli(0.5) {
            let (victim, vsize) = self.ports[port as usize].pop_tail(class).expect("non-empty");
            self.change_occupancy(port, -(vsize as i64), -1, now);
            self.trim_to_header(port, victim, trim, now);
            self.admit_header(port, victim, trim, now, ev);
            let p = &self.ports[port as usize];
            let data_bytes = p.class_bytes(class) + in_service as u64;
            let data_packets = p.class_len(class) as u64 + u64::from(in_service > 0);
            if !self.cfgs[p.cfg as usize].overflows(data_bytes, data_packets, packet.size) {
                return self.admit(port, pkt, class, now, ev);
            }
        }
        self.trim_to_header(port, pkt, trim, now);
        self.admit_header(port, pkt, trim, now, ev);
    }

    fn trim_to_header(&mut self, port: PortId, pkt: PacketId, trim: Trim, now: Time) {
        if self.tracer.is_some() {
            self.trace(now, pkt, port, TraceEvent::Trim);
        }
        self.pool.trimmed += 1;
        let p = self.pool.get_mut(pkt);
        debug_assert_eq!(p.kind, PacketKind::Data);
        p.kind = PacketKind::Header;
        p.size = trim.header_bytes;
        p.payload = 0;
        p.prio = 0;
        self.ports[port as usize].counters.trims += 1;
    }

    /// Headers and control packets share class 0; when it is full, return-to-sender or drop.
    fn admit_header(&mut self, port: PortId, pkt: PacketId, trim: Trim, now: Time, ev: &mut EventQueue) {
        let p = &self.ports[port as usize];
        let size = self.pool.get(pkt).size;
        if p.class_bytes(0) + size as u64 <= trim.header_limit_bytes {
            return self.admit(port, pkt, 0, now, ev);
        }
        let bounce = trim.bounce && self.pool.get(pkt).kind == PacketKind::Header;
        if self.tracer.is_some() {
            let event = if bounce { TraceEvent::Bounce } else { TraceEvent::Drop };
            self.trace_in_class(now, pkt, port, event, 0);
        }
        let p = &mut self.ports[port as usize];
        let packet = self.pool.get_mut(pkt);
        if bounce {
            p.counters.bounces += 1;
            std::mem::swap(&mut packet.src, &mut packet.dst);
            packet.kind = PacketKind::Bounced;
            packet.lb = LoadBalancing::Spray;
            let node = p.owner;
            return self.forward(node, pkt, now, ev);
        }
        p.counters.drops += 1;
        self.pool.release(pkt, Fate::Dropped);
    }

    /// Puts a packet on the wire now. The link must be free: this is where "a link never carries
    /// more than its rate" is enforced.
    #[inline]
    fn start_tx(&mut self, port: PortId, pkt: PacketId, size: u32, is_data: bool, now: Time, ev: &mut EventQueue) {
        if self.tracer.is_some() {
            return self.start_tx_traced(port, pkt, size, is_data, now, ev);
        }
        self.start_tx_untraced(port, pkt, size, is_data, now, ev);
    }

    // Tracing as a tail call to a cold copy: a trace call after the body kept the arguments live
    // across it, and the register saving that cost showed in every transmission (+13% of
    // `start_tx`'s instructions on the DCTCP leaf-spine bench).
    #[cold]
    #[inline(never)]
    fn start_tx_traced(
        &mut self,
        port: PortId,
        pkt: PacketId,
        size: u32,
        is_data: bool,
        now: Time,
        ev: &mut EventQueue,
    ) {
        self.start_tx_untraced(port, pkt, size, is_data, now, ev);
        self.trace(now, pkt, port, TraceEvent::TxStart);
    }

    #[inline(always)]
    fn start_tx_untraced(
        &mut self,
        port: PortId,
        pkt: PacketId,
        size: u32,
        is_data: bool,
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
        let weights = match &self.cfgs[p.cfg as usize].scheduling {
            Scheduling::Strict => None,
            Scheduling::Wrr(w) => Some(w.as_slice()),
        };
        let Some((pkt, size, is_data)) = p.pop_next(weights) else {
            return p.notify_idle;
        };
        self.change_occupancy(port, -(size as i64), -1, now);
        self.start_tx(port, pkt, size, is_data, now, ev);
        let p = &mut self.ports[port as usize];
        if p.has_sendable() && !p.wake_pending {
            p.wake_pending = true;
            ev.schedule(p.busy_until, Event::PortFree(port));
        }
        false
    }

    /// Hints the CPU to fetch a port's hot fields (no effect on results).
    #[inline(always)]
    pub fn prefetch_port(&self, port: PortId) {
        if let Some(p) = self.ports.get(port as usize) {
            p.prefetch();
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
    /// reached, or `None` if a lossy link lost it there (counted as a loss of this port).
    #[inline]
    pub fn on_link_arrival(&mut self, port: PortId, now: Time, ev: &mut EventQueue) -> Option<(PacketId, NodeId)> {
        let p = &mut self.ports[port as usize];
        let (t, pkt) = p.pipe_pop();
        debug_assert_eq!(t, now);
        if let Some(next) = p.pipe_head_time() {
            ev.schedule(next, Event::LinkArrival(port));
        }
        let peer = p.peer;
        // Draw only on lossy links: a lossless run's random streams are untouched.
        if p.loss > 0.0 && self.loss_rng.bernoulli(p.loss) {
            p.counters.losses += 1;
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
    fn trace(&mut self, now: Time, pkt: PacketId, port: PortId, event: TraceEvent) {
        let class = self.ports[port as usize].class_of(self.pool.get(pkt).prio);
        self.trace_in_class(now, pkt, port, event, class);
    }

    /// Records `event` for a packet at a port (the node that owns it), in priority class `class`.
    #[cold]
    #[inline(never)]
    fn trace_in_class(&mut self, now: Time, pkt: PacketId, port: PortId, event: TraceEvent, class: usize) {
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

    /// A switch received `pkt`: pick the egress port and enqueue.
    #[inline]
    pub fn forward(&mut self, node: NodeId, pkt: PacketId, now: Time, ev: &mut EventQueue) {
        let packet = self.pool.get_mut(pkt);
        let port = self.routes.next_port(node, packet, &mut self.rng);
        self.enqueue(port, pkt, now, ev);
    }

    /// Pauses or resumes priority class `class` of a port (link-level flow control).
    pub fn set_paused(&mut self, port: PortId, class: u8, paused: bool, now: Time, ev: &mut EventQueue) {
        let p = &mut self.ports[port as usize];
        if paused {
            p.paused |= 1 << class;
        } else {
            p.paused &= !(1 << class);
            if p.has_sendable() && !p.wake_pending {
                p.wake_pending = true;
                ev.schedule(p.busy_until.max(now), Event::PortFree(port));
            }
        }
    }

    /// Opens the measurement window: occupancy maxima and integrals and counters restart.
    pub fn reset_stats(&mut self, now: Time) {
        for p in &mut self.ports {
            p.occupancy.reset(p.bytes, now);
            p.counters = Default::default();
        }
        for (s, o) in self.switch_occupancy.iter_mut().enumerate() {
            o.reset(self.switch_bytes[s], now);
        }
    }

    /// Packets physically in the network: waiting in a queue or on a link.
    pub fn resident_packets(&self) -> u64 {
        self.ports.iter().map(|p| p.packets + p.in_pipe() as u64).sum()
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
