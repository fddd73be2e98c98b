//! Lazy generators, one per component, merged into one time-ordered stream. Nothing unbounded is
//! generated ahead of time: a Poisson component holds only its next arrival and an incast overlay
//! only its next event, so memory does not grow with simulated time.

use super::dag::Milestone;
use super::dag_run::{self, DagRun};
use super::spec::{ComponentSpec, IncastMode, Kind, ListedFlow, LoopSizes, WorkloadSpec};
use super::{FlowArrival, WorkloadEnv};
use crate::engine::rng::Rng;
use crate::spec_reader::SpecResult;
use crate::time::Time;
use std::collections::VecDeque;

enum Source {
    /// Open-loop Poisson: `next` is the next arrival time (f64 picoseconds, so rounding never
    /// accumulates), `gap` the mean inter-arrival time.
    Poisson { next: f64, gap: f64, stop: Time, cdf: super::cdf::Cdf, rule: super::cdf::Interpolation },
    /// Incast events at a rate; each releases `senders` flows at once. `pool` holds every host;
    /// each event draws its receiver into `pool[0]` and its senders into `pool[1..=senders]`.
    Overlay { next: f64, gap: f64, periodic: bool, stop: Time, senders: u32, size: u64, pool: Vec<u32> },
    /// Flows fixed in advance (permutation, one incast, a flow list), in start order.
    Fixed,
    /// `connections` messages per source from `start`; each completion starts the next
    /// (`Workload::on_finished`), to the fixed receiver or a random host, of a fixed or drawn size.
    ClosedLoop { think: Time, think_exponential: bool, receiver: Option<u32>, sizes: LoopSizes, stop: Time },
    /// A dependency graph: flows start at times or when triggers fire (`dag_run`); its due flows
    /// are held by the run, not in `ready`.
    Dag(Box<DagRun>),
}

struct Component {
    source: Source,
    /// Arrivals already drawn and due in order.
    ready: VecDeque<FlowArrival>,
    rng: Rng,
    index: u16,
}

pub struct Workload {
    components: Vec<Component>,
    names: Vec<String>,
    excluded: Vec<bool>,
    hosts: u32,
    /// No arrival at or after this time starts.
    end: Time,
    offered_bytes_per_sec: f64,
}

/// A uniformly random host other than `not`.
fn other_host(rng: &mut Rng, hosts: u32, not: u32) -> u32 {
    let d = rng.below(hosts as u64 - 1) as u32;
    if d >= not {
        d + 1
    } else {
        d
    }
}

/// Puts `k` uniformly random distinct entries of `pool` into `pool[..k]` (partial Fisher-Yates).
/// `pool` stays a permutation of the same hosts and each step picks uniformly among the entries not
/// yet chosen whatever their order, so a pool can be reused draw after draw: O(k), no allocation.
fn draw_distinct(rng: &mut Rng, pool: &mut [u32], k: usize) {
    for i in 0..k {
        let j = i + rng.below((pool.len() - i) as u64) as usize;
        pool.swap(i, j);
    }
}

/// Host ids of a flow list exist in the topology; an error names the row (inline) or the line (CSV).
fn check_listed_hosts(c: &ComponentSpec, file: &str, flows: &[ListedFlow], inline: bool, hosts: u32) -> SpecResult<()> {
    let Some(f) = flows.iter().find(|f| f.src >= hosts || f.dst >= hosts) else { return Ok(()) };
    let what = format!("flow {} -> {} names a host that does not exist (hosts are 0..{hosts})", f.src, f.dst);
    Err(if inline {
        c.err(&format!("flows[{}]", f.line), what)
    } else {
        c.err("path", format!("{file} line {}: {what}", f.line))
    })
}

/// A closed-loop component's source and first messages (`connections` per source, in start order).
fn closed_loop(
    c: &ComponentSpec,
    env: &WorkloadEnv,
    rng: &mut Rng,
    index: u16,
) -> SpecResult<(Source, Vec<FlowArrival>)> {
    let Kind::ClosedLoop { sources, receiver, sizes, think, think_exponential, connections, start, stop } = &c.kind
    else {
        unreachable!("not a closed loop")
    };
    for (i, &h) in sources.iter().chain(receiver).enumerate() {
        if h >= env.hosts {
            let key = if i < sources.len() { "sources" } else { "receiver" };
            return Err(c.err(key, format!("host {h} does not exist (hosts are 0..{})", env.hosts)));
        }
    }
    if receiver.is_none() {
        check_hosts(c, env.hosts, 2)?;
    }
    let source = Source::ClosedLoop {
        think: *think,
        think_exponential: *think_exponential,
        receiver: *receiver,
        sizes: sizes.clone(),
        stop: stop.unwrap_or(env.end).min(env.end),
    };
    let mut first = Vec::new();
    for &src in sources {
        for _ in 0..*connections {
            let wait = if *think_exponential { rng.exponential(*think as f64).round() as Time } else { 0 };
            let (dst, size_bytes) = next_message(&source, rng, env.hosts, src);
            first.push(FlowArrival { start: *start + wait, src, dst, size_bytes, component: index, tag: 0 });
        }
    }
    first.sort_by_key(|a| a.start);
    Ok((source, first))
}

/// A closed loop's next message from `src`: to its receiver or a random other host, of its size or
/// one drawn from its CDF.
fn next_message(source: &Source, rng: &mut Rng, hosts: u32, src: u32) -> (u32, u64) {
    let Source::ClosedLoop { receiver, sizes, .. } = source else { unreachable!("not a closed loop") };
    let dst = match receiver {
        Some(r) => *r,
        None => other_host(rng, hosts, src),
    };
    let size = match sizes {
        LoopSizes::Fixed(n) => *n,
        LoopSizes::Cdf { cdf, rule } => cdf.sample(rng, *rule),
    };
    (dst, size)
}

/// A uniformly random derangement (rejection sampling over shuffles; about e tries).
fn derangement(rng: &mut Rng, n: u32) -> Vec<u32> {
    loop {
        let mut p: Vec<u32> = (0..n).collect();
        rng.shuffle(&mut p);
        if p.iter().enumerate().all(|(i, &d)| i as u32 != d) {
            return p;
        }
    }
}

/// One component as built: where its later arrivals come from, the arrivals already drawn, and the
/// load it offers (bytes per second; 0 for a fixed set of flows).
struct BuiltComponent {
    source: Source,
    ready: VecDeque<FlowArrival>,
    offered: f64,
}

/// A component without a generator: its flows are all known at build time.
fn fixed(ready: VecDeque<FlowArrival>) -> BuiltComponent {
    BuiltComponent { source: Source::Fixed, ready, offered: 0.0 }
}

/// Builds component `c` (number `index`); `capacity` is the sum of host link rates, bytes per second.
fn build_component(
    c: &ComponentSpec,
    index: u16,
    env: &WorkloadEnv,
    rng: &mut Rng,
    capacity: f64,
) -> SpecResult<BuiltComponent> {
    let arrival = |start: Time, src: u32, dst: u32, size: u64| FlowArrival {
        start,
        src,
        dst,
        size_bytes: size,
        component: index,
        tag: 0,
    };
    Ok(match &c.kind {
        Kind::Poisson { load, cdf, rule, start, stop } => {
            check_hosts(c, env.hosts, 2)?;
            let rate = load * capacity / cdf.mean(*rule); // flows per second
            let gap = 1e12 / rate;
            let first = *start as f64 + rng.exponential(gap);
            let stop = stop.unwrap_or(env.end).min(env.end);
            let source = Source::Poisson { next: first, gap, stop, cdf: cdf.clone(), rule: *rule };
            BuiltComponent { source, ready: VecDeque::new(), offered: load * capacity }
        }
        Kind::Permutation { size, start } => {
            check_hosts(c, env.hosts, 2)?;
            let pairs = derangement(rng, env.hosts);
            fixed(pairs.iter().enumerate().map(|(src, &dst)| arrival(*start, src as u32, dst, *size)).collect())
        }
        Kind::Incast { senders, size, mode } => {
            if *senders >= env.hosts {
                let what = format!("must be less than the number of hosts ({}), got {senders}", env.hosts);
                return Err(c.err("senders", what));
            }
            match mode {
                IncastMode::Once { at, receiver } => {
                    let r = match receiver {
                        Some(r) if *r >= env.hosts => {
                            return Err(c.err("receiver", format!("host {r} does not exist ({} hosts)", env.hosts)))
                        }
                        Some(r) => *r,
                        None => rng.below(env.hosts as u64) as u32,
                    };
                    let mut others: Vec<u32> = (0..env.hosts).filter(|&h| h != r).collect();
                    draw_distinct(rng, &mut others, *senders as usize);
                    fixed(others[..*senders as usize].iter().map(|&s| arrival(*at, s, r, *size)).collect())
                }
                IncastMode::Overlay { load, periodic, start, stop } => {
                    overlay(rng, env, capacity, (*senders, *size), (*load, *periodic, *start, *stop))
                }
            }
        }
        Kind::FlowList { file, flows, inline } => {
            check_listed_hosts(c, file, flows, *inline, env.hosts)?;
            fixed(flows.iter().map(|f| arrival(f.start, f.src, f.dst, f.size)).collect())
        }
        Kind::ClosedLoop { .. } => {
            let (source, first) = closed_loop(c, env, rng, index)?;
            BuiltComponent { source, ready: first.into(), offered: 0.0 }
        }
        Kind::Dag { dag, file } => {
            if let Some(f) = dag.flows.iter().find(|f| f.src >= env.hosts || f.dst >= env.hosts) {
                let what = format!(
                    "flow {} -> {} names a host that does not exist (hosts are 0..{})",
                    f.src, f.dst, env.hosts
                );
                return Err(c.err("path", format!("{file}: {what}")));
            }
            let run = DagRun::new((**dag).clone(), rng.clone());
            BuiltComponent { source: Source::Dag(Box::new(run)), ready: VecDeque::new(), offered: 0.0 }
        }
    })
}

/// An incast overlay: `senders` x `size` bytes into a random receiver, at `load` of `capacity`.
fn overlay(
    rng: &mut Rng,
    env: &WorkloadEnv,
    capacity: f64,
    (senders, size): (u32, u64),
    (load, periodic, start, stop): (f64, bool, Time, Option<Time>),
) -> BuiltComponent {
    let events_per_sec = load * capacity / (senders as f64 * size as f64);
    let gap = 1e12 / events_per_sec;
    // A periodic overlay starts at a uniformly random phase, so the expected number of events in
    // any window is exactly its length / gap.
    let first = start as f64 + if periodic { rng.uniform() * gap } else { rng.exponential(gap) };
    let stop = stop.unwrap_or(env.end).min(env.end);
    let pool = (0..env.hosts).collect();
    let source = Source::Overlay { next: first, gap, periodic, stop, senders, size, pool };
    BuiltComponent { source, ready: VecDeque::new(), offered: load * capacity }
}

impl Workload {
    pub fn build(spec: &WorkloadSpec, env: &WorkloadEnv) -> SpecResult<Workload> {
        let capacity = env.hosts as f64 * env.host_rate.bps() as f64 / 8.0;
        let mut components = Vec::new();
        let mut offered = 0.0;
        for (i, c) in spec.components.iter().enumerate() {
            let mut rng = Rng::for_component(env.seed, &format!("workload[{i}]"));
            let index = i as u16;
            let BuiltComponent { source, mut ready, offered: load } =
                build_component(c, index, env, &mut rng, capacity)?;
            offered += load;
            // Fixed flows at or after the end never start.
            ready.retain(|a| a.start < env.end);
            components.push(Component { source, ready, rng, index });
        }
        Ok(Workload {
            components,
            names: spec.components.iter().map(|c| c.name.clone()).collect(),
            excluded: spec.components.iter().map(|c| c.exclude_from_slowdown).collect(),
            hosts: env.hosts,
            end: env.end,
            offered_bytes_per_sec: offered,
        })
    }

    /// Draws the component's next batch into `ready` if it is empty.
    fn refill(c: &mut Component, hosts: u32) {
        if !c.ready.is_empty() {
            return;
        }
        match &mut c.source {
            Source::Poisson { next, gap, stop, cdf, rule } => {
                let t = next.round() as Time;
                if t >= *stop {
                    return;
                }
                let src = c.rng.below(hosts as u64) as u32;
                let dst = other_host(&mut c.rng, hosts, src);
                let size = cdf.sample(&mut c.rng, *rule);
                c.ready.push_back(FlowArrival { start: t, src, dst, size_bytes: size, component: c.index, tag: 0 });
                *next += c.rng.exponential(*gap);
            }
            Source::Overlay { next, gap, periodic, stop, senders, size, pool } => {
                let t = next.round() as Time;
                if t >= *stop {
                    return;
                }
                let k = *senders as usize;
                draw_distinct(&mut c.rng, pool, k + 1);
                let r = pool[0];
                for &s in &pool[1..=k] {
                    c.ready.push_back(FlowArrival {
                        start: t,
                        src: s,
                        dst: r,
                        size_bytes: *size,
                        component: c.index,
                        tag: 0,
                    });
                }
                *next += if *periodic { *gap } else { c.rng.exponential(*gap) };
            }
            Source::Fixed | Source::ClosedLoop { .. } | Source::Dag(_) => {}
        }
    }

    /// The component's next arrival, if any is due before the end of the run.
    fn front(c: &Component, end: Time) -> Option<FlowArrival> {
        let Source::Dag(run) = &c.source else { return c.ready.front().copied() };
        let (start, flow, iteration) = run.peek().filter(|d| d.0 < end)?;
        let f = &run.dag.flows[flow as usize];
        let tag = dag_run::tag(flow, iteration);
        Some(FlowArrival { start, src: f.src, dst: f.dst, size_bytes: f.size, component: c.index, tag })
    }

    /// Which components wait for their flows' milestones (for the flow log to watch).
    pub fn watched_components(&self) -> Vec<bool> {
        self.components.iter().map(|c| matches!(c.source, Source::ClosedLoop { .. } | Source::Dag(_))).collect()
    }

    /// A watched flow reached `milestone` at `now`: a closed loop queues its source's next message
    /// on `Received`, a dependency graph activates the flow's trigger. Returns whether an arrival
    /// was queued.
    pub fn on_milestone(&mut self, flow: &FlowArrival, milestone: Milestone, now: Time) -> bool {
        match &mut self.components[flow.component as usize].source {
            Source::Dag(run) => run.on_milestone(flow.tag, milestone, now),
            Source::ClosedLoop { .. } if milestone == Milestone::Received => {
                self.on_finished(flow.component, flow.src, flow.dst, flow.size_bytes, now)
            }
            _ => false,
        }
    }

    /// A closed-loop flow finished at `now`: its source's next message. Returns whether one was
    /// queued (not past the component's stop). Completions come in time order, so the
    /// component's arrivals stay in start order.
    /// (The finished message's `_dst` and `_size` are not needed: the loop's are fixed or drawn.)
    fn on_finished(&mut self, component: u16, src: u32, _dst: u32, _size: u64, now: Time) -> bool {
        let hosts = self.hosts;
        let c = &mut self.components[component as usize];
        let Source::ClosedLoop { think, think_exponential, stop, .. } = c.source else {
            panic!("component {component} is not closed-loop");
        };
        let wait = if think_exponential { c.rng.exponential(think as f64).round() as Time } else { think };
        let start = now + wait;
        if start >= stop {
            return false;
        }
        let (dst, size) = next_message(&c.source, &mut c.rng, hosts, src);
        // Random waits break completion order: keep the component's arrivals in start order.
        let at = c.ready.partition_point(|a| a.start <= start);
        debug_assert!(think_exponential || at == c.ready.len(), "fixed waits keep completion order");
        c.ready.insert(at, FlowArrival { start, src, dst, size_bytes: size, component, tag: 0 });
        true
    }

    /// Returns an arrival taken by `next` to the front of its component, so that an earlier one
    /// queued since (a closed-loop restart) can go first.
    pub fn unget(&mut self, a: FlowArrival) {
        let c = &mut self.components[a.component as usize];
        match &mut c.source {
            Source::Dag(run) => {
                let (flow, iteration) = dag_run::untag(a.tag);
                run.unpop(a.start, flow, iteration);
            }
            _ => c.ready.push_front(a),
        }
    }
}

impl Iterator for Workload {
    type Item = FlowArrival;

    /// The next arrival over all components: earliest start, ties to the lower component index,
    /// then generation order. A linear scan: runs have a handful of components, not hundreds.
    fn next(&mut self) -> Option<FlowArrival> {
        let (hosts, end) = (self.hosts, self.end);
        let mut best: Option<(usize, FlowArrival)> = None;
        for i in 0..self.components.len() {
            Self::refill(&mut self.components[i], hosts);
            if let Some(a) = Self::front(&self.components[i], end) {
                if best.is_none_or(|(_, b)| a.start < b.start) {
                    best = Some((i, a));
                }
            }
        }
        let (i, a) = best?;
        match &mut self.components[i].source {
            Source::Dag(run) => run.pop(),
            _ => {
                self.components[i].ready.pop_front();
            }
        }
        Some(a)
    }
}

impl Workload {
    pub fn component_names(&self) -> Vec<String> {
        self.names.clone()
    }

    pub fn excluded_from_slowdown(&self, component: u16) -> bool {
        self.excluded[component as usize]
    }

    /// Offered load of the rate-based components (Poisson and incast overlays) while they are
    /// active, in application bytes per second, from the exact CDF means; fixed flows (permutation,
    /// one incast, flow lists) are not a rate and are not counted.
    pub fn offered_load_bytes_per_sec(&self) -> f64 {
        self.offered_bytes_per_sec
    }
}

fn check_hosts(c: &ComponentSpec, hosts: u32, min: u32) -> SpecResult<()> {
    if hosts < min {
        return Err(c.err("kind", format!("needs at least {min} hosts, the topology has {hosts}")));
    }
    Ok(())
}
