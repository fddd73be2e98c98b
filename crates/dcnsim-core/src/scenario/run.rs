//! The simulation: build the network, the transport and the workload from a spec, then pop events
//! until the end. The loop only dispatches; the network, transport and metrics do the work.

use super::errors::RunError;
use super::options::{RunOptions, CANCEL_CHECK_EVENTS};
use super::setup_clock::SetupClock;
use super::spec::RunSpec;
use crate::engine::events::{Event, EventQueue};
use crate::net::dispatch::{self, NetStep};
use crate::net::framing::Framing;
use crate::net::link_usage;
use crate::net::packet::{Fate, HostId, Packet, PacketId, PacketKind};
use crate::net::port::PortId;
use crate::net::Network;
use crate::record::flow_state::FlowStateSeries;
use crate::record::flows::{FlowLog, FlowRecord, RxBins};
use crate::record::measure::{Measurement, Series};
use crate::record::trace::PacketTrace;
use crate::time::{to_us, Time};
use crate::transport::{Ctx, Transport, TransportEnv};
use crate::workload::{FlowArrival, Workload, WorkloadEnv};
use std::time::Instant;

/// How many events ahead `prefetch_next` fetches each link of a hop's chain of reads: two events
/// apart, as one event (about 200 ns at 3,456 hosts) was too little for a miss to be served, and
/// the egress port one event ahead rather than just before the hop. Measured (NDP, CPU time
/// against 3/2/1/0): 6/4/2/0 0.94 at k = 24; 7/5/3/1 0.91 at k = 24 and 0.90 at k = 12; 9/6/3/1
/// a further 0.96 at k = 24 but 1.04 at k = 12 (small fabrics' slots hold fewer events, so deep
/// hints fall off the slot). Since the stages run only on large fabrics (k >= 16 fat trees),
/// 9/6/3/1: against 7/5/3/1 0.97 at k = 24 (5 rounds); 12/8/4/1 1.02.
const STAGE_PORT: usize = 9;
const STAGE_PACKET: usize = 6;
const STAGE_ROUTE: usize = 3;
const STAGE_EGRESS: usize = 1;
/// For a packet reaching a host: the transport's state behind its connection (fetched at
/// `STAGE_EGRESS`), `Protocol::prefetch_flow_state`.
const STAGE_FLOW_STATE: usize = 0;
/// Transport timers: the connection's index entry this many events after the next, the
/// connection itself `STAGE_TIMER_CONN`.
const STAGE_TIMER_INDEX: usize = 3;
const STAGE_TIMER_CONN: usize = 1;
/// The stages run on fabrics whose ports outgrow this (about the L2 cache), while the slot being
/// drained has at least `DEEP_SLOT` events left. Where ports stay in cache the stages cost more
/// than they save (a second routing computation per hop: CPU time 1.1x on NDP at k = 12 and 1.2x
/// on DCTCP's 144-host leaf-spine on a quiet machine), and the loop fetches only the next event's
/// port and packet and the port of the one after, as before.
const DEEP_PORT_BYTES: usize = 2 << 20;
const DEEP_SLOT: usize = 8;

pub struct Simulation {
    pub spec: RunSpec,
    pub events: EventQueue,
    pub net: Network,
    /// The run's transports, in the spec's order (`[transport]` first).
    pub transports: Vec<Transport>,
    /// Index into `transports` of each workload component.
    component_transport: Vec<u8>,
    pub flows: FlowLog,
    pub workload: Workload,
    next_arrival: Option<FlowArrival>,
    /// Time of the FlowArrival event that is current; an event at any other time is stale (a
    /// closed-loop restart moved the next arrival earlier) and is ignored.
    arrival_at: Option<Time>,
    /// When the run actually ended (the duration, or earlier once all work is done).
    pub ended_at: Time,
    data_delivered: u64,
    /// The measurement window and the sampled time series, for the reporters.
    pub measure: Measurement,
    /// The traced flows' control state over time (with a `[trace]` table).
    pub flow_state: Option<FlowStateSeries>,
    /// Wall-clock seconds spent building the run (not part of events per second).
    pub setup_s: f64,
    /// Staged prefetching (`prefetch_next`): the fabric's ports do not fit in cache.
    deep_prefetch: bool,
}

impl Simulation {
    pub fn new(spec: RunSpec) -> Result<Simulation, RunError> {
        Self::new_with(spec, &RunOptions::default())
    }

    /// As `new`; with `opts.progress`, a set-up that takes over a second reports its phases.
    pub fn new_with(spec: RunSpec, opts: &RunOptions) -> Result<Simulation, RunError> {
        let mut clock = SetupClock::new(opts.progress);
        let mut net = Self::build_network(&spec, &mut clock)?;
        let env = WorkloadEnv {
            hosts: net.hosts,
            host_rate: spec.topology.kind.host_rate(),
            rack_of: (0..net.hosts).map(|h| net.routes.edge_of_host[h as usize] - net.hosts).collect(),
            seed: spec.seed,
            end: spec.duration,
            mss_bytes: spec.framing.mss(),
        };
        let mut workload = Workload::build(&spec.workload, &env)?;
        clock.done(|| "workload".into());
        let transports = Self::build_transports(&spec, &mut net);
        clock.done(|| format!("{} transport(s)", transports.len()));
        let component_transport = spec.component_transport.clone();
        let mut events = EventQueue::new();
        let next_arrival = workload.next();
        let arrival_at = next_arrival.map(|a| a.start);
        if let Some(t) = arrival_at {
            events.schedule(t, Event::FlowArrival);
        }
        if spec.warmup > 0 {
            events.schedule(spec.warmup, Event::MeasureStart);
        }
        if let Some(i) = spec.metrics.sample_interval {
            events.schedule(i, Event::Sample);
        }
        let flow_state = spec.trace.as_ref().map(|t| {
            net.tracer = Some(Box::new(PacketTrace::new(t)));
            events.schedule(t.state_interval, Event::FlowStateSample);
            FlowStateSeries::new(t)
        });
        let mut flows = FlowLog::new(net.hosts);
        flows.watched = workload.watched_components();
        if spec.warmup == 0 {
            flows.open_window(0);
        }
        if let Some(i) = spec.metrics.sample_interval {
            flows.rx_bins = Some(RxBins::new(i, net.hosts));
        }
        let deep_prefetch = net.ports.len() * std::mem::size_of::<crate::net::port::Port>() > DEEP_PORT_BYTES;
        Ok(Simulation {
            spec,
            events,
            net,
            transports,
            component_transport,
            flows,
            workload,
            next_arrival,
            arrival_at,
            ended_at: 0,
            data_delivered: 0,
            measure: Measurement::default(),
            flow_state,
            setup_s: clock.elapsed_s(),
            deep_prefetch,
        })
    }

    /// The topology's graph, then its network with the switch stages the spec and transports ask for.
    fn build_network(spec: &RunSpec, clock: &mut SetupClock) -> Result<Network, RunError> {
        let graph = spec.topology.build()?;
        clock.done(|| {
            format!("topology: {} hosts, {} switches, {} links", graph.hosts, graph.switches.len(), graph.links.len())
        });
        let mut net = Network::build(&graph, &spec.queues, spec.switch_latency, spec.nic_pacing, spec.seed)
            .map_err(|m| RunError::Spec(crate::spec_reader::SpecError { field: "topology".into(), message: m }))?;
        net.configure_switches(&spec.switch, spec.framing.mtu_bytes.max(spec.framing.control_bytes))?;
        net.configure_postcards(spec.switch.postcards, spec.framing.mtu_bytes, spec.framing.control_bytes)?;
        if let Some(cs) = spec.transports.iter().find_map(|t| t.config.needs().credit_shaping) {
            net.enable_credit_shaping(&cs);
        }
        clock.done(|| format!("network: {} ports and their routes", net.ports.len()));
        Ok(net)
    }

    /// Builds each transport with its environment, and asks NICs to report idleness for those
    /// that want it.
    fn build_transports(spec: &RunSpec, net: &mut Network) -> Vec<Transport> {
        let mut transports = Vec::with_capacity(spec.transports.len());
        for (index, setup) in spec.transports.iter().enumerate() {
            let size_cdf = spec
                .workload
                .components
                .iter()
                .zip(&spec.component_transport)
                .filter(|(_, &t)| t as usize == index)
                .find_map(|(c, _)| c.kind.size_cdf());
            let env = TransportEnv::new(net, spec.framing, setup.load_balancing, spec.seed, index as u8, size_cdf);
            transports.push(Transport::new(&setup.config, &env));
            if setup.config.wants_nic_idle() {
                for h in 0..net.hosts {
                    let port = net.nic_port(h) as usize;
                    net.ports[port].notify_idle = true;
                }
            }
        }
        transports
    }

    /// The transport that carries `flow` (a lookup only when the run has several).
    #[inline]
    fn transport_of_flow(&self, flow: u32) -> usize {
        if self.transports.len() == 1 {
            0
        } else {
            self.component_transport[self.flows.get(flow).component as usize] as usize
        }
    }

    /// Ports, packets, routing entries are cold on large fabrics: fetches them in stages along a
    /// hop's chain of reads (`net::prefetch`), each stage reading what an earlier one fetched: the
    /// port `STAGE_PORT` events ahead, its arriving packet, the packet's routing entry, then its
    /// egress port (in slots with many events; see `DEEP_SLOT`); and the next event's port and
    /// packet whether or not it went through the stages. No effect on results.
    #[inline(always)]
    fn prefetch_next(&self) {
        let (ev, net) = (&self.events, &self.net);
        if self.deep_prefetch && ev.draining() >= DEEP_SLOT {
            if let Some(Event::LinkArrival(p) | Event::PortFree(p)) = ev.peek_ahead(STAGE_PORT) {
                net.prefetch_port(p);
            }
            match ev.peek_ahead(STAGE_PACKET) {
                Some(Event::LinkArrival(p)) => net.prefetch_arriving_packet(p),
                Some(Event::PortFree(p)) => net.prefetch_departure(p),
                _ => {}
            }
            if let Some(Event::LinkArrival(p)) = ev.peek_ahead(STAGE_ROUTE) {
                net.prefetch_arrival_route(p);
                self.prefetch_flow(net.host_arrival_flow(p), true);
            }
            if let Some(Event::LinkArrival(p)) = ev.peek_ahead(STAGE_EGRESS) {
                net.prefetch_egress(p);
                self.prefetch_flow(net.host_arrival_flow(p), false);
            }
            if let Some(Event::LinkArrival(p)) = ev.peek_ahead(STAGE_FLOW_STATE) {
                if let (Some(pkt), [t]) = (net.host_arrival_packet(p), &self.transports[..]) {
                    t.prefetch_flow_state(pkt);
                }
            }
        } else if let Some(Event::LinkArrival(p) | Event::PortFree(p)) = ev.peek_ahead(1) {
            net.prefetch_port(p);
        }
        // A transport's timer: its connection's index entry a few events ahead, the connection
        // itself a stage later (a credit timer per flow touches a connection out of cache).
        if let Some(Event::Timer { transport, id, .. }) = ev.peek_ahead(STAGE_TIMER_INDEX) {
            self.transports[transport as usize].prefetch_timer(id, false);
        }
        if let Some(Event::Timer { transport, id, .. }) = ev.peek_ahead(STAGE_TIMER_CONN) {
            self.transports[transport as usize].prefetch_timer(id, true);
        }
        // The next event's port and packet in any case: it may have skipped the stages (scheduled
        // into this slot late, or in the next slot); a hint for what is in cache costs little.
        match ev.peek_hint() {
            Some(Event::LinkArrival(p)) => net.prefetch_arrival(p),
            Some(Event::PortFree(p)) => net.prefetch_departure(p),
            _ => {}
        }
    }

    /// The transport's state for a packet about to reach a host (`Protocol::prefetch_flow`): in
    /// runs with one transport (with several, finding the flow's would be a miss of its own).
    #[inline(always)]
    fn prefetch_flow(&self, flow: Option<u32>, early: bool) {
        if let (Some(f), [t]) = (flow, &self.transports[..]) {
            t.prefetch_flow(f, early);
        }
    }

    /// Runs to the end. Returns the number of events processed.
    pub fn run(&mut self, opts: &RunOptions) -> Result<u64, RunError> {
        let end = self.spec.duration;
        let started = Instant::now();
        let mut last_report = started;
        let framing = self.spec.framing;
        while let Some((now, ev)) = self.events.pop() {
            if now > end {
                break; // the event is dropped: nothing after the end is simulated
            }
            self.prefetch_next();
            match dispatch::step(&mut self.net, ev, now, &mut self.events) {
                NetStep::Done => {}
                NetStep::Deliver { pkt, host, port } => self.deliver(pkt, host, port, now),
                NetStep::NicIdle { host } => {
                    for (t, transport) in self.transports.iter_mut().enumerate() {
                        let mut ctx = Ctx::new(now, &mut self.net, &mut self.events, &mut self.flows, framing, t as u8);
                        transport.on_nic_idle(&mut ctx, host);
                    }
                }
                NetStep::Deadlocked => {
                    self.ended_at = now; // nothing can move any more
                    return self.finish();
                }
                NetStep::NotNetwork(ev) => self.on_own_event(ev, now, framing),
            }
            if !self.flows.milestones.is_empty() {
                self.on_milestones(now);
            }
            self.ended_at = now;
            if self.all_done() {
                break; // (a pending Sample event alone does not keep the run alive)
            }
            if self.events.processed.is_multiple_of(CANCEL_CHECK_EVENTS) {
                self.checkpoint(now, opts, started, &mut last_report)?;
            }
        }
        if !self.all_done() {
            self.ended_at = end;
        }
        self.finish()
    }

    /// The run loop's own events: transport timers, flow arrivals, the window's opening, samples.
    fn on_own_event(&mut self, ev: Event, now: Time, framing: Framing) {
        match ev {
            Event::Timer { kind, transport, id } => {
                let mut ctx = Ctx::new(now, &mut self.net, &mut self.events, &mut self.flows, framing, transport);
                self.transports[transport as usize].on_timer(&mut ctx, kind, id);
            }
            Event::FlowArrival => {
                if self.arrival_at == Some(now) {
                    self.arrival_at = None;
                    self.start_flows(now);
                }
            }
            Event::MeasureStart => self.open_window(now),
            Event::Sample => self.sample(now),
            Event::FlowStateSample => self.sample_flow_state(now),
            Event::LinkArrival(_) | Event::PortFree(_) | Event::SwitchTimer { .. } => {
                unreachable!("network events are handled by net::dispatch")
            }
        }
    }

    /// The run ended (at its end, when all work was done, or deadlocked): checks conservation and
    /// completes the receive-rate samples.
    fn finish(&mut self) -> Result<u64, RunError> {
        self.net.check_conservation().map_err(RunError::Invariant)?;
        if let Some(bins) = &self.flows.rx_bins {
            self.measure.fill_rx_rates(bins);
        }
        Ok(self.events.processed)
    }

    /// Every `CANCEL_CHECK_EVENTS` events: stops a cancelled run, and prints progress every couple
    /// of seconds when asked to.
    #[cold]
    fn checkpoint(&self, now: Time, opts: &RunOptions, started: Instant, last: &mut Instant) -> Result<(), RunError> {
        if opts.cancelled() {
            return Err(RunError::Cancelled);
        }
        if opts.progress && self.events.processed & 0xFFFFF == 0 && last.elapsed().as_secs_f64() >= 2.0 {
            *last = Instant::now();
            let end = self.spec.duration;
            eprintln!(
                "[dcnsim] {:.3} of {:.3} ms simulated ({:.0}%), {} flows started, {} finished, {:.2} M events/s",
                to_us(now) / 1e3,
                to_us(end) / 1e3,
                100.0 * now as f64 / end as f64,
                self.flows.records.len(),
                self.flows.finished,
                self.events.processed as f64 / started.elapsed().as_secs_f64() / 1e6
            );
        }
        Ok(())
    }

    /// A packet reached its destination host: it leaves the network and goes to its transport.
    #[inline]
    fn deliver(&mut self, pkt: PacketId, host: HostId, downlink: PortId, now: Time) {
        let p = *self.net.pool.get(pkt);
        debug_assert_eq!(p.dst, host, "packet for host {} reached host {host}", p.dst);
        // The bytes it delivers arrived over its serialization on the downlink.
        self.flows.receiving(now - self.net.ports[downlink as usize].rate.tx_time(p.size), now);
        self.net.pool.release(pkt, Fate::Delivered);
        self.data_delivered += u64::from(p.kind == PacketKind::Data);
        let t = self.transport_of_flow(p.flow);
        let framing = self.spec.framing;
        let mut ctx = Ctx::new(now, &mut self.net, &mut self.events, &mut self.flows, framing, t as u8);
        self.transports[t].on_packet(&mut ctx, host, &p);
    }

    /// Hands `pkt`, which never crossed the network, to `host`'s transport as if it had just
    /// arrived (for tests: stray and duplicate packets must be ignored). A flow id that never
    /// started goes to the run's first transport.
    pub fn deliver_stray(&mut self, host: HostId, pkt: &Packet) {
        assert!(host < self.net.hosts, "host {host} does not exist");
        let t = if (pkt.flow as usize) < self.flows.records.len() { self.transport_of_flow(pkt.flow) } else { 0 };
        let now = self.events.now();
        let framing = self.spec.framing;
        self.flows.receiving(now, now);
        let mut ctx = Ctx::new(now, &mut self.net, &mut self.events, &mut self.flows, framing, t as u8);
        self.transports[t].on_packet(&mut ctx, host, pkt);
    }

    /// The run may stop early: no more arrivals and every flow finished (with `stop_when_done`).
    fn all_done(&self) -> bool {
        self.spec.stop_when_done
            && self.next_arrival.is_none()
            && self.flows.finished == self.flows.records.len() as u64
    }

    /// Opens the measurement window: statistics restart, the packets on the wire are pro-rated.
    fn open_window(&mut self, now: Time) {
        self.net.reset_stats(now);
        let carry_in = link_usage::unsent_after(&self.net, now);
        self.flows.open_window(now);
        self.measure.open_window(carry_in, self.transports[0].counters());
    }

    fn sample(&mut self, now: Time) {
        let interval = self.spec.metrics.sample_interval.expect("sampling is on");
        for (s, &b) in self.net.switch_bytes.iter().enumerate() {
            self.measure.sample(now, Series::SwitchQueueBytes, s as u32, b as f64);
        }
        if let Some(b) = self.net.buffers.as_deref() {
            for (s, sw) in b.switches.iter().enumerate() {
                self.measure.sample(now, Series::SwitchSharedBytes, s as u32, sw.shared_used as f64);
                self.measure.sample(now, Series::SwitchHeadroomBytes, s as u32, sw.headroom_used as f64);
            }
        }
        for h in 0..self.net.hosts {
            self.measure.sample(now, Series::HostRxGbps, h, f64::NAN); // see `fill_rx_rates`
        }
        self.events.schedule(now + interval, Event::Sample);
    }

    /// Samples the traced flows' control state, and schedules the next sample while needed.
    fn sample_flow_state(&mut self, now: Time) {
        let Some(series) = self.flow_state.as_mut() else { return };
        let (transports, flows, ct) = (&self.transports, &self.flows, &self.component_transport);
        let of = |f| &transports[if transports.len() == 1 { 0 } else { ct[flows.get(f).component as usize] as usize }];
        if series.tick(now, flows.records.len(), of) {
            self.events.schedule(now + series.interval, Event::FlowStateSample);
        }
    }

    /// Data packets handed to receiving hosts (the bench's throughput measure).
    pub fn data_packets_delivered(&self) -> u64 {
        self.data_delivered
    }

    /// Starts every flow due now, then schedules the next arrival.
    fn start_flows(&mut self, now: Time) {
        while let Some(a) = self.next_arrival.filter(|a| a.start <= now) {
            debug_assert_eq!(a.start, now);
            let id = self.flows.start(FlowRecord {
                src: a.src,
                dst: a.dst,
                size: a.size_bytes,
                start: now,
                end: None,
                component: a.component,
                tag: a.tag,
            });
            let t = self.component_transport[a.component as usize] as usize;
            let mut ctx = Ctx::new(now, &mut self.net, &mut self.events, &mut self.flows, self.spec.framing, t as u8);
            self.transports[t].start_flow(&mut ctx, id);
            if let Some(series) = self.flow_state.as_mut().filter(|s| s.is_traced(id)) {
                series.sample_flow(now, id, &self.transports[t]);
            }
            self.next_arrival = self.workload.next();
        }
        self.schedule_arrival();
    }

    /// Makes sure a FlowArrival event is pending for the next arrival.
    fn schedule_arrival(&mut self) {
        if let Some(a) = &self.next_arrival {
            if self.arrival_at.is_none_or(|t| a.start < t) {
                self.arrival_at = Some(a.start);
                self.events.schedule(a.start, Event::FlowArrival);
            }
        }
    }

    /// Hands the milestones of watched flows (closed loops, dependency graphs) to their workload,
    /// which may queue new arrivals.
    fn on_milestones(&mut self, now: Time) {
        let mut milestones = std::mem::take(&mut self.flows.milestones);
        let mut queued = false;
        for &(id, milestone) in &milestones {
            let r = self.flows.get(id);
            let flow = FlowArrival {
                start: r.start,
                src: r.src,
                dst: r.dst,
                size_bytes: r.size,
                component: r.component,
                tag: r.tag,
            };
            queued |= self.workload.on_milestone(&flow, milestone, now);
        }
        if queued {
            // A new arrival may precede the one already taken: hand that one back.
            if let Some(a) = self.next_arrival.take() {
                self.workload.unget(a);
            }
            self.next_arrival = self.workload.next();
        }
        milestones.clear();
        self.flows.milestones = milestones;
        self.schedule_arrival();
    }
}
