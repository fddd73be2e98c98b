//! Test harness: runs one protocol instance — registered or not, e.g. a sender with a test-only
//! controller — on a network built from a spec, through the network's share of the event loop that
//! the simulation uses too (`net::dispatch`), with a given list of flows. It can drop delivered packets at
//! random (loss on the last link) and inject stray packets, for loss-recovery and robustness
//! tests. Test builds only.

use super::{timer, Ctx, Framing, Protocol, TransportEnv};
use crate::engine::events::{Event, EventQueue};
use crate::engine::rng::Rng;
use crate::net::dispatch::{self, NetStep};
use crate::net::packet::{flags, Fate, FlowId, HostId, Packet, PacketId, PacketKind};
use crate::net::Network;
use crate::record::flows::{FlowLog, FlowRecord};
use crate::report::ideal::ideal_fct;
use crate::scenario::read_spec;
use crate::time::Time;

/// A flow to start: (src, dst, size in bytes, start time).
pub type FlowSpec = (HostId, HostId, u64, Time);

pub struct Testbed<P: Protocol> {
    pub net: Network,
    pub events: EventQueue,
    pub flows: FlowLog,
    pub proto: P,
    pub framing: Framing,
    arrivals: Vec<FlowSpec>,
    next: usize,
    /// Probability that a packet reaching a host is lost instead (per kind: data, others).
    loss: (f64, f64),
    /// Every ECN-capable data packet reaching a host carries CE (an always-congested path).
    mark_all: bool,
    rng: Rng,
    pub lost: u64,
    /// Every packet handed to a host's transport, in order, when `recording` (tests of what
    /// arrives when).
    pub delivered: Vec<(Time, Packet)>,
    pub recording: bool,
}

impl<P: Protocol> Testbed<P> {
    /// `spec_toml` is a run spec (its `[transport]` and workload are only read, not used); the
    /// protocol is built by `make` from the network's environment.
    pub fn new(spec_toml: &str, flows: &[FlowSpec], make: impl FnOnce(&TransportEnv) -> P) -> Testbed<P> {
        let value: toml::Value = toml::from_str(spec_toml).expect("test spec parses");
        let (spec, _) = read_spec(&serde_json::to_value(value).unwrap()).expect("test spec is valid");
        let graph = spec.topology.build().expect("topology builds");
        let mut net = Network::build(&graph, &spec.queues, spec.switch_latency, spec.nic_pacing, spec.seed).unwrap();
        let lb = spec.transports[0].load_balancing;
        let env = TransportEnv::new(&net, spec.framing, lb, spec.seed, 0, None);
        let proto = make(&env);
        if P::WANTS_NIC_IDLE {
            for h in 0..net.hosts {
                let port = net.nic_port(h) as usize;
                net.ports[port].notify_idle = true;
            }
        }
        let mut arrivals = flows.to_vec();
        arrivals.sort_by_key(|f| f.3);
        let mut events = EventQueue::new();
        if let Some(first) = arrivals.first() {
            events.schedule(first.3, Event::FlowArrival);
        }
        let mut log = FlowLog::new(net.hosts);
        log.open_window(0);
        Testbed {
            net,
            events,
            flows: log,
            proto,
            framing: spec.framing,
            arrivals,
            next: 0,
            loss: (0.0, 0.0),
            mark_all: false,
            rng: Rng::seed_from(spec.seed ^ 0x1055),
            lost: 0,
            delivered: Vec::new(),
            recording: false,
        }
    }

    /// Loses each packet reaching a host with these probabilities (data, other kinds).
    pub fn with_loss(mut self, data: f64, control: f64) -> Self {
        self.loss = (data, control);
        self
    }

    /// Marks CE on every ECN-capable data packet reaching a host, as a switch whose queue never
    /// drains below its threshold would.
    pub fn with_all_marked(mut self) -> Self {
        self.mark_all = true;
        self
    }

    /// Runs until no event is left or the next is past `until`.
    pub fn run(&mut self, until: Time) {
        let framing = self.framing;
        while let Some(t) = self.events.peek_time() {
            if t > until {
                break;
            }
            let (now, ev) = self.events.pop().unwrap();
            match dispatch::step(&mut self.net, ev, now, &mut self.events) {
                NetStep::Deliver { pkt, host, .. } => self.deliver(pkt, host, now),
                NetStep::NicIdle { host } => {
                    let mut ctx = Ctx::new(now, &mut self.net, &mut self.events, &mut self.flows, framing, 0);
                    self.proto.on_nic_idle(&mut ctx, host);
                }
                NetStep::NotNetwork(Event::Timer { kind, id, .. }) => {
                    let mut ctx = Ctx::new(now, &mut self.net, &mut self.events, &mut self.flows, framing, 0);
                    if let Some(kind) = timer::decode(kind) {
                        self.proto.on_timer(&mut ctx, kind, id);
                    }
                }
                NetStep::NotNetwork(Event::FlowArrival) => self.start_flows(now),
                NetStep::Done | NetStep::Deadlocked | NetStep::NotNetwork(_) => {}
            }
        }
        self.net.check_conservation().unwrap();
    }

    /// A packet reached `host`: marked or lost here as the testbed is set to, then handed over.
    fn deliver(&mut self, pkt: PacketId, host: HostId, now: Time) {
        let mut p = *self.net.pool.get(pkt);
        if self.mark_all && p.kind == PacketKind::Data && p.has(flags::ECT) {
            p.flags |= flags::CE;
        }
        let loss = if p.kind == PacketKind::Data { self.loss.0 } else { self.loss.1 };
        if loss > 0.0 && self.rng.bernoulli(loss) {
            self.net.pool.release(pkt, Fate::Dropped);
            self.lost += 1;
            return;
        }
        self.net.pool.release(pkt, Fate::Delivered);
        if self.recording {
            self.delivered.push((now, p));
        }
        let mut ctx = Ctx::new(now, &mut self.net, &mut self.events, &mut self.flows, self.framing, 0);
        self.proto.on_packet(&mut ctx, host, &p);
    }

    fn start_flows(&mut self, now: Time) {
        while let Some(&(src, dst, size, start)) = self.arrivals.get(self.next) {
            if start > now {
                self.events.schedule(start, Event::FlowArrival);
                return;
            }
            self.next += 1;
            let rec = FlowRecord { src, dst, size, start, end: None, component: 0, tag: 0 };
            let id = self.flows.start(rec);
            let mut ctx = Ctx::new(now, &mut self.net, &mut self.events, &mut self.flows, self.framing, 0);
            self.proto.start_flow(&mut ctx, id);
        }
    }

    /// Hands `pkt` to its source's NIC now, as a transport would (for stray-packet tests).
    pub fn inject(&mut self, pkt: Packet) {
        let now = self.events.now();
        let mut ctx = Ctx::new(now, &mut self.net, &mut self.events, &mut self.flows, self.framing, 0);
        ctx.send(pkt);
    }

    /// Completion time of a flow, if it finished.
    pub fn fct(&self, id: FlowId) -> Option<Time> {
        let r = self.flows.get(id);
        r.end.map(|e| e - r.start)
    }

    /// The flow's exact ideal completion time over its (single) path.
    pub fn ideal_fct(&self, id: FlowId) -> Time {
        let r = self.flows.get(id);
        let hops = self.net.path_hops(r.src, r.dst);
        ideal_fct(r.size, self.framing.mss(), self.framing.header_bytes, &hops)
    }

    /// Every started flow finished with exactly its bytes delivered.
    pub fn assert_all_complete(&self) {
        for (id, r) in self.flows.records.iter().enumerate() {
            assert!(r.end.is_some(), "flow {id} ({} bytes) did not finish", r.size);
            assert_eq!(self.flows.delivered_per_flow[id], r.size, "flow {id}");
        }
    }
}
