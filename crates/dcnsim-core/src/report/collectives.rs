//! Training jobs' results: one row per collective (job, iteration, collective, bytes, start, end,
//! ideal, slowdown) and per iteration (compute, communication, exposed communication), and each
//! job's mean and p99 for the summary.
//!
//! **The ideal completion time** of a collective is computed as the ideal FCT is: every transfer
//! takes its exact ideal FCT alone (`ideal.rs`: packetization, headers, store-and-forward, its
//! fastest path), transfers start when the algorithm's dependencies allow, and no queue forms in
//! the fabric. Hosts are the one shared resource: a host's link serializes one transfer after
//! another (in the order they become ready), and a receiver's downlink takes one at a time, so
//! an all-to-all's N-1 transfers from one NIC cost their summed serialization, as on the wire.
//! Every rank is ready at the collective's start. For a ring all-reduce of S bytes over N ranks
//! on a non-blocking fabric this is 2(N-1) times the ideal FCT of an S/N transfer: the textbook
//! 2(N-1)/N x S/B plus each step's latency, with headers.
//!
//! A collective starts when its first transfer starts and ends when its last arrives. An
//! iteration starts when the job starts or its previous iteration ended; its compute is the time
//! until its first transfer, its exposed communication the time from the last rank's first transfer
//! (the slowest rank's compute done) to its end.

use super::ideal::{ideal_over, Hop};
use super::ideal_paths::IdealPaths;
use crate::net::packet::LoadBalancing;
use crate::record::table::{Column, OptU64s, Table};
use crate::scenario::run::Simulation;
use crate::time::Time;
use crate::workload::dag::{Dag, Milestone, TriggerKind, NONE};
use crate::workload::dag_run::untag;
use serde_json::{json, Value};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};

/// The two tables, and the summary's `jobs` part (empty when the run has no job).
pub struct JobResults {
    pub collectives: Table,
    pub iterations: Table,
    pub summary: serde_json::Map<String, Value>,
}

/// A transfer alone: its ideal FCT, and how long it holds its sender's and receiver's links.
#[derive(Clone, Copy)]
struct Alone {
    fct: Time,
    send: Time,
    receive: Time,
}

/// The exact ideal completion time of group `g` of `dag` (see the module header).
fn ideal_of_group(dag: &Dag, g: usize, alone: &dyn Fn(u32) -> Alone) -> Time {
    let range = dag.groups[g].flows.clone();
    let inside = |f: u32| range.contains(&f);
    // Triggers inside the group: every activator is one of its flows.
    let mut pending: HashMap<u32, u32> = HashMap::new();
    // (time, what, flow): what = READY (may start on its sender's link), AT_RECEIVER (could have
    // arrived, if the receiver's link was free), RECEIVED. Popped in time order, so each link
    // takes its transfers in the order they reach it.
    const READY: u8 = 0;
    const AT_RECEIVER: u8 = 1;
    let mut events: BinaryHeap<Reverse<(Time, u8, u32)>> = BinaryHeap::new();
    for f in range.clone() {
        let t = dag.flows[f as usize].start_trigger;
        let internal =
            t != NONE && !dag.triggers[t as usize].next_iteration && dag.targets(t).iter().all(|&x| inside(x));
        let activated_inside = internal && activators_inside(dag, t, &range);
        if activated_inside {
            pending.entry(t).or_insert(dag.triggers[t as usize].needed);
        } else {
            events.push(Reverse((0, READY, f)));
        }
    }
    let (mut send_free, mut receive_free) = (HashMap::<u32, Time>::new(), HashMap::<u32, Time>::new());
    let mut end = 0;
    while let Some(Reverse((now, what, f))) = events.pop() {
        let flow = dag.flows[f as usize];
        let a = alone(f);
        if what == READY {
            let start = now.max(*send_free.get(&flow.src).unwrap_or(&0));
            send_free.insert(flow.src, start + a.send);
            events.push(Reverse((start + a.fct, AT_RECEIVER, f)));
            continue;
        }
        if what == AT_RECEIVER {
            let arrive = now.max(receive_free.get(&flow.dst).unwrap_or(&0) + a.receive);
            receive_free.insert(flow.dst, arrive);
            events.push(Reverse((arrive, 2, f)));
            continue;
        }
        end = end.max(now);
        for &t in dag.activated_by(f, Milestone::Received) {
            let Some(left) = pending.get_mut(&t) else { continue };
            let fires = match dag.triggers[t as usize].kind {
                TriggerKind::Barrier => *left == 1,
                TriggerKind::OneShot | TriggerKind::MultiShot => *left == dag.triggers[t as usize].needed,
            };
            *left -= 1;
            if fires {
                let at = now + dag.triggers[t as usize].delay.mean();
                events.extend(dag.targets(t).iter().map(|&x| Reverse((at, READY, x))));
            }
        }
    }
    end
}

/// Whether every flow that activates trigger `t` is in `range`.
fn activators_inside(dag: &Dag, t: u32, range: &std::ops::Range<u32>) -> bool {
    let mut n = 0;
    for f in range.clone() {
        for m in [Milestone::Sent, Milestone::Received] {
            n += dag.activated_by(f, m).iter().filter(|&&x| x == t).count() as u32;
        }
    }
    n == dag.triggers[t as usize].needed
}

/// One collective as run: its flows' earliest start, latest end (`None` if one is unfinished).
#[derive(Default)]
struct Seen {
    start: Option<Time>,
    end: Option<Time>,
    unfinished: bool,
}

impl Seen {
    fn add(&mut self, start: Time, end: Option<Time>) {
        self.start = Some(self.start.map_or(start, |s| s.min(start)));
        match end {
            Some(e) => self.end = Some(self.end.map_or(e, |x| x.max(e))),
            None => self.unfinished = true,
        }
    }

    fn finished_end(&self) -> Option<Time> {
        self.end.filter(|_| !self.unfinished)
    }
}

pub fn job_results(sim: &Simulation) -> JobResults {
    let fr = sim.spec.framing;
    let (mss, header) = (fr.mss(), fr.header_bytes);
    let mut paths = IdealPaths::new(&sim.net);
    // (component, iteration, group) -> the collective as run; (component, iteration, src) -> that
    // rank's first transfer.
    let mut seen: BTreeMap<(u16, u32, u32), Seen> = BTreeMap::new();
    let mut first_of_rank: HashMap<(u16, u32, u32), Time> = HashMap::new();
    for r in &sim.flows.records {
        let Some(dag) = sim.workload.graph(r.component).filter(|d| !d.groups.is_empty()) else { continue };
        let (flow, iteration) = untag(r.tag);
        let g = dag.groups.partition_point(|g| g.flows.end <= flow) as u32;
        seen.entry((r.component, iteration, g)).or_default().add(r.start, r.end);
        let first = first_of_rank.entry((r.component, iteration, r.src)).or_insert(r.start);
        *first = (*first).min(r.start);
    }
    let mut ideals: HashMap<(u16, u32), Time> = HashMap::new();
    let names = sim.workload.component_names();
    let mut c = CollectiveColumns::default();
    for (&(component, iteration, g), s) in &seen {
        let dag = sim.workload.graph(component).expect("a job");
        let setup = &sim.spec.transports[sim.spec.component_transport[component as usize] as usize];
        let multipath =
            !matches!(setup.load_balancing, LoadBalancing::Ecmp | LoadBalancing::Symmetric) || setup.config.multipath();
        let ideal = *ideals.entry((component, g)).or_insert_with(|| {
            let alone = |f: u32| {
                let fl = dag.flows[f as usize];
                let crossing = paths.crossing(fl.src, fl.dst);
                let fct = ideal_over(fl.size, mss, header, &crossing, multipath);
                let (send, receive) =
                    (busy(&crossing.first, fl.size, mss, header), busy(&crossing.last, fl.size, mss, header));
                Alone { fct, send, receive }
            };
            let cache: Vec<Alone> = dag.groups[g as usize].flows.clone().map(alone).collect();
            let first = dag.groups[g as usize].flows.start;
            ideal_of_group(dag, g as usize, &|f| cache[(f - first) as usize])
        });
        let group = &dag.groups[g as usize];
        c.push(&names[component as usize], iteration, g, &group.name, group.bytes, s, ideal);
    }
    let (iterations, summary) = iteration_table(sim, &seen, &first_of_rank, &c, &names);
    JobResults { collectives: c.into_table(), iterations, summary }
}

/// How long a transfer of `size` bytes holds `hop` (full packets, then one short), packet by packet
/// as the simulator serializes them.
fn busy(hop: &Hop, size: u64, mss: u32, header: u32) -> Time {
    let (full, rest) = (size / mss as u64, (size % mss as u64) as u32);
    full * hop.busy(mss + header) + if rest > 0 { hop.busy(rest + header) } else { 0 }
}

#[derive(Default)]
struct CollectiveColumns {
    job: Vec<String>,
    iteration: Vec<u64>,
    index: Vec<u64>,
    kind: Vec<String>,
    bytes: Vec<u64>,
    start: Vec<u64>,
    end: OptU64s,
    ideal: Vec<u64>,
    slowdown: Vec<f64>,
}

impl CollectiveColumns {
    #[allow(clippy::too_many_arguments)]
    fn push(&mut self, job: &str, iteration: u32, g: u32, kind: &str, bytes: u64, s: &Seen, ideal: Time) {
        let start = s.start.expect("a collective has a flow");
        let end = s.finished_end();
        self.job.push(job.to_string());
        self.iteration.push(iteration as u64);
        self.index.push(g as u64);
        self.kind.push(kind.to_string());
        self.bytes.push(bytes);
        self.start.push(start);
        self.end.push(end);
        self.ideal.push(ideal);
        self.slowdown.push(end.map_or(f64::NAN, |e| (e - start) as f64 / ideal.max(1) as f64));
    }

    fn into_table(self) -> Table {
        let mut t = Table::default();
        t.push("job", Column::Str(self.job));
        t.push("iteration", Column::U64(self.iteration));
        t.push("collective", Column::U64(self.index));
        t.push("kind", Column::Str(self.kind));
        t.push("size_bytes", Column::U64(self.bytes));
        t.push("start_ps", Column::U64(self.start));
        t.push("end_ps", Column::OptU64(self.end));
        t.push("ideal_ps", Column::U64(self.ideal));
        t.push("slowdown", Column::F64(self.slowdown));
        t
    }
}

/// One row per (job, iteration), and each job's summary.
fn iteration_table(
    sim: &Simulation,
    seen: &BTreeMap<(u16, u32, u32), Seen>,
    first_of_rank: &HashMap<(u16, u32, u32), Time>,
    collectives: &CollectiveColumns,
    names: &[String],
) -> (Table, serde_json::Map<String, Value>) {
    let mut per: BTreeMap<(u16, u32), Seen> = BTreeMap::new();
    for (&(component, iteration, _), s) in seen {
        let e = per.entry((component, iteration)).or_default();
        e.add(s.start.expect("a collective has a flow"), s.finished_end());
    }
    let mut last_ready: HashMap<(u16, u32), Time> = HashMap::new();
    for (&(component, iteration, _), &t) in first_of_rank {
        let e = last_ready.entry((component, iteration)).or_insert(t);
        *e = (*e).max(t);
    }
    let (mut job, mut iter, mut start, mut end) = (Vec::new(), Vec::new(), Vec::new(), OptU64s::default());
    let (mut compute, mut comm, mut exposed, mut total) =
        (Vec::new(), OptU64s::default(), OptU64s::default(), OptU64s::default());
    let mut previous_end: Option<(u16, Time)> = None;
    let mut times: BTreeMap<u16, Vec<f64>> = BTreeMap::new();
    for (&(component, iteration), s) in &per {
        let began = match previous_end {
            Some((c, e)) if c == component && iteration > 0 => e,
            _ => sim.workload.graph_start(component),
        };
        let first = s.start.expect("an iteration has a flow");
        let finished = s.finished_end();
        job.push(names[component as usize].clone());
        iter.push(iteration as u64);
        start.push(began);
        end.push(finished);
        compute.push(first.saturating_sub(began));
        comm.push(finished.map(|e| e - first));
        exposed.push(finished.map(|e| e.saturating_sub(last_ready[&(component, iteration)])));
        total.push(finished.map(|e| e - began));
        if let Some(e) = finished {
            times.entry(component).or_default().push((e - began) as f64 / 1e6);
            previous_end = Some((component, e));
        } else {
            previous_end = None;
        }
    }
    let mut t = Table::default();
    t.push("job", Column::Str(job));
    t.push("iteration", Column::U64(iter));
    t.push("start_ps", Column::U64(start));
    t.push("end_ps", Column::OptU64(end));
    t.push("iteration_ps", Column::OptU64(total));
    t.push("compute_ps", Column::U64(compute));
    t.push("communication_ps", Column::OptU64(comm));
    t.push("exposed_communication_ps", Column::OptU64(exposed));
    let jobs: Vec<u16> = per.keys().map(|k| k.0).collect();
    let summary = jobs_summary(&jobs, &times, collectives, names);
    (t, summary)
}

fn mean_p99(mut v: Vec<f64>) -> (Value, Value) {
    if v.is_empty() {
        return (Value::Null, Value::Null);
    }
    v.sort_by(f64::total_cmp);
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let p99 = v[((v.len() as f64 * 0.99).ceil() as usize).clamp(1, v.len()) - 1];
    (super::output::num(mean), super::output::num(p99))
}

fn jobs_summary(
    jobs: &[u16],
    times: &BTreeMap<u16, Vec<f64>>,
    c: &CollectiveColumns,
    names: &[String],
) -> serde_json::Map<String, Value> {
    let mut out = serde_json::Map::new();
    for &component in jobs {
        let name = &names[component as usize];
        let slowdowns: Vec<f64> =
            c.job.iter().zip(&c.slowdown).filter(|(j, s)| *j == name && s.is_finite()).map(|(_, s)| *s).collect();
        let its = times.get(&component).cloned().unwrap_or_default();
        let finished = its.len();
        let (mean_it, p99_it) = mean_p99(its);
        let (mean_sd, p99_sd) = mean_p99(slowdowns);
        out.insert(
            name.clone(),
            json!({
                "iterations_finished": finished,
                "iteration_us_mean": mean_it,
                "iteration_us_p99": p99_it,
                "collective_slowdown_mean": mean_sd,
                "collective_slowdown_p99": p99_sd,
            }),
        );
    }
    out
}
