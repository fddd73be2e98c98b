//! Flows that wait for flows: a dependency graph of flows and triggers, as htsim's connection
//! matrices define it (`sim/trigger.h` in csg-htsim), with compute delays and iterations.
//!
//! - A **flow** starts at a time, or when its start trigger fires. When it has finished *sending*
//!   (its sender has handed its last new byte to the NIC) it may activate triggers, and when it
//!   has been *received* (the receiver has every byte) others.
//! - A **trigger** fires on activation: a one-shot on its first activation (later ones are ignored),
//!   a multi-shot on every activation, a barrier once every flow that names it has activated it.
//!   When it fires, its targets (the flows it starts) start after its delay (compute time: fixed or
//!   drawn per firing).
//! - **Iterations.** A trigger marked `next_iteration` starts its targets in the next iteration of
//!   the graph (a training job's loop: a rank computes, then communicates, then computes again). Flows
//!   and trigger states carry their iteration; an iteration past `iterations` starts nothing. Edges
//!   into the next iteration are the only back edges allowed: any other cycle is an error naming a
//!   flow on it.
//!
//! Memory is O(flows + triggers) for the graph (targets in one array, CSR style) plus the states of
//! the triggers that are partly activated; nothing scans the graph per event.

use crate::engine::rng::Rng;
use crate::time::Time;

/// No trigger / no flow.
pub const NONE: u32 = u32::MAX;

/// A trigger's delay between firing and starting its targets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Delay {
    Fixed(Time),
    /// Uniform in [low, high].
    Uniform(Time, Time),
    Exponential {
        mean: Time,
    },
    /// Normal, truncated at zero.
    Normal {
        mean: Time,
        sd: Time,
    },
}

impl Delay {
    pub const NONE: Delay = Delay::Fixed(0);

    pub fn draw(&self, rng: &mut Rng) -> Time {
        match *self {
            Delay::Fixed(t) => t,
            Delay::Uniform(low, high) => low + (rng.uniform() * (high - low) as f64).round() as Time,
            Delay::Exponential { mean } => rng.exponential(mean as f64).round() as Time,
            Delay::Normal { mean, sd } => {
                // Box-Muller; `1 - uniform` is in (0, 1], so the logarithm is finite.
                let (u1, u2) = (1.0 - rng.uniform(), rng.uniform());
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                (mean as f64 + z * sd as f64).max(0.0).round() as Time
            }
        }
    }

    /// The expected delay, for ideal completion times.
    pub fn mean(&self) -> Time {
        match *self {
            Delay::Fixed(t) => t,
            Delay::Uniform(low, high) => (low + high) / 2,
            Delay::Exponential { mean } | Delay::Normal { mean, .. } => mean,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TriggerKind {
    OneShot,
    MultiShot,
    Barrier,
}

impl TriggerKind {
    pub fn name(self) -> &'static str {
        match self {
            TriggerKind::OneShot => "oneshot",
            TriggerKind::MultiShot => "multishot",
            TriggerKind::Barrier => "barrier",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trigger {
    pub kind: TriggerKind,
    pub delay: Delay,
    /// The delay is scaled by this (a straggling rank computes slower).
    pub scale: f64,
    /// Its targets start in the next iteration.
    pub next_iteration: bool,
    /// Activations it waits for (a barrier: the flows that name it); set by `Dag::seal`.
    pub needed: u32,
    /// Its targets: `Dag::targets[first..first + count]`.
    first: u32,
    count: u32,
}

impl Trigger {
    pub fn new(kind: TriggerKind, delay: Delay) -> Trigger {
        Trigger { kind, delay, scale: 1.0, next_iteration: false, needed: 0, first: 0, count: 0 }
    }

    /// The same trigger, starting its targets in the next iteration.
    pub fn into_next_iteration(self) -> Trigger {
        Trigger { next_iteration: true, ..self }
    }
}

/// One flow of the graph.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DagFlow {
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    /// Start time in the first iteration, when `start_trigger` is `NONE` or a `next_iteration`
    /// trigger (which starts the flow in later iterations).
    pub start: Time,
    pub start_trigger: u32,
}

impl DagFlow {
    pub fn at(src: u32, dst: u32, size: u64, start: Time) -> DagFlow {
        DagFlow { src, dst, size, start, start_trigger: NONE }
    }

    pub fn after(src: u32, dst: u32, size: u64, trigger: u32) -> DagFlow {
        DagFlow { start_trigger: trigger, ..DagFlow::at(src, dst, size, 0) }
    }
}

pub use crate::record::flows::Milestone;

/// The graph. Build it with `flow` and `trigger`, then `seal` (which checks it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Dag {
    pub flows: Vec<DagFlow>,
    pub triggers: Vec<Trigger>,
    /// Flows started by each trigger, grouped by trigger (see `Trigger::first`).
    targets: Vec<u32>,
    /// What each flow's milestones activate, as added: (flow, milestone, trigger).
    edges: Vec<(u32, Milestone, u32)>,
    /// After `seal`: the triggers flow f activates on a milestone are
    /// `activated[offsets[2f + m]..offsets[2f + m + 1]]` (m = 0 sent, 1 received).
    offsets: Vec<u32>,
    activated: Vec<u32>,
    /// Names used in errors: a flow's or trigger's id in the user's file (its index when empty).
    pub flow_names: Vec<String>,
    pub trigger_names: Vec<String>,
    /// Iterations of the whole graph (1 = no loop).
    pub iterations: u32,
}

impl Dag {
    pub fn new() -> Dag {
        Dag { iterations: 1, ..Dag::default() }
    }

    pub fn trigger(&mut self, t: Trigger) -> u32 {
        self.triggers.push(t);
        (self.triggers.len() - 1) as u32
    }

    pub fn flow(&mut self, f: DagFlow) -> u32 {
        self.flows.push(f);
        (self.flows.len() - 1) as u32
    }

    /// Flow `flow` reaching `milestone` activates trigger `trigger` (a flow may activate several).
    pub fn activate(&mut self, flow: u32, milestone: Milestone, trigger: u32) {
        self.edges.push((flow, milestone, trigger));
    }

    /// The triggers flow `flow` activates on `milestone` (after `seal`).
    pub fn activated_by(&self, flow: u32, milestone: Milestone) -> &[u32] {
        let k = 2 * flow as usize + (milestone == Milestone::Received) as usize;
        &self.activated[self.offsets[k] as usize..self.offsets[k + 1] as usize]
    }

    fn flow_name(&self, i: u32) -> String {
        self.flow_names.get(i as usize).cloned().unwrap_or_else(|| i.to_string())
    }

    fn trigger_name(&self, i: u32) -> String {
        self.trigger_names.get(i as usize).cloned().unwrap_or_else(|| i.to_string())
    }

    /// Flow `i` starts at its `start` time in the first iteration (see `DagFlow::start`).
    pub fn starts_at_time(&self, i: u32) -> bool {
        let t = self.flows[i as usize].start_trigger;
        t == NONE || self.triggers[t as usize].next_iteration
    }

    /// The flows trigger `t` starts.
    pub fn targets(&self, t: u32) -> &[u32] {
        let tr = &self.triggers[t as usize];
        &self.targets[tr.first as usize..(tr.first + tr.count) as usize]
    }

    /// Groups targets per trigger, counts each trigger's activators, and checks the graph: every
    /// reference exists, every trigger is activated by some flow and starts some flow, and there is
    /// no cycle except through a `next_iteration` trigger. Errors name the flow or trigger.
    pub fn seal(&mut self) -> Result<(), String> {
        let (nf, nt) = (self.flows.len() as u32, self.triggers.len() as u32);
        for (i, f) in self.flows.iter().enumerate() {
            if f.start_trigger != NONE && f.start_trigger >= nt {
                let t = f.start_trigger;
                return Err(format!("flow {} starts on trigger {t}, which does not exist", self.flow_name(i as u32)));
            }
        }
        for &(f, m, t) in &self.edges {
            if f >= nf {
                return Err(format!("a dependency names flow {f}, which does not exist"));
            }
            if t >= nt {
                let what = if m == Milestone::Sent { "when sent" } else { "when received" };
                return Err(format!("flow {} activates {what} trigger {t}, which does not exist", self.flow_name(f)));
            }
        }
        // Activations grouped per (flow, milestone), in the order they were added.
        let key = |&(f, m, _): &(u32, Milestone, u32)| 2 * f as usize + (m == Milestone::Received) as usize;
        self.edges.sort_by_key(key);
        self.offsets = vec![0; 2 * nf as usize + 1];
        for e in &self.edges {
            self.offsets[key(e) + 1] += 1;
        }
        for k in 1..self.offsets.len() {
            self.offsets[k] += self.offsets[k - 1];
        }
        self.activated = self.edges.iter().map(|e| e.2).collect();
        let mut count = vec![0u32; nt as usize];
        let mut needed = vec![0u32; nt as usize];
        for f in &self.flows {
            if f.start_trigger != NONE {
                count[f.start_trigger as usize] += 1;
            }
        }
        for &(_, _, t) in &self.edges {
            needed[t as usize] += 1;
        }
        self.edges = Vec::new();
        let mut first = 0;
        for (t, tr) in self.triggers.iter_mut().enumerate() {
            tr.first = first;
            tr.count = count[t];
            tr.needed = needed[t];
            first += count[t];
        }
        let mut fill: Vec<u32> = self.triggers.iter().map(|t| t.first).collect();
        self.targets = vec![0; first as usize];
        for (i, f) in self.flows.iter().enumerate() {
            if f.start_trigger != NONE {
                let slot = &mut fill[f.start_trigger as usize];
                self.targets[*slot as usize] = i as u32;
                *slot += 1;
            }
        }
        for t in 0..nt {
            let tr = &self.triggers[t as usize];
            if tr.needed == 0 {
                let name = self.trigger_name(t);
                return Err(format!("trigger {name} is never activated: no flow activates it when sent or received"));
            }
            if tr.count == 0 {
                return Err(format!("trigger {} starts no flow", self.trigger_name(t)));
            }
        }
        if nf > 0 && !(0..nf).any(|i| self.starts_at_time(i)) {
            return Err("every flow waits for a trigger: at least one must start at a time".into());
        }
        self.check_acyclic()
    }

    /// Kahn's algorithm over flow -> trigger -> flow edges, `next_iteration` triggers cut.
    fn check_acyclic(&self) -> Result<(), String> {
        let nf = self.flows.len();
        // In-degree of each flow: 1 if it waits for a trigger that is not a loop-back.
        let waits = |f: &DagFlow| f.start_trigger != NONE && !self.triggers[f.start_trigger as usize].next_iteration;
        let mut indegree: Vec<u32> = self.flows.iter().map(|f| waits(f) as u32).collect();
        // A trigger is ready once all its activators are: track what it still waits for.
        let mut pending: Vec<u32> = self.triggers.iter().map(|t| t.needed).collect();
        let mut stack: Vec<u32> = (0..nf as u32).filter(|&i| indegree[i as usize] == 0).collect();
        let mut seen = 0;
        while let Some(i) = stack.pop() {
            seen += 1;
            let sent = self.activated_by(i, Milestone::Sent).iter();
            for &t in sent.chain(self.activated_by(i, Milestone::Received)) {
                if self.triggers[t as usize].next_iteration {
                    continue;
                }
                // A barrier fires with its last activator, a one-shot or multi-shot with its first.
                let before = pending[t as usize];
                pending[t as usize] -= 1;
                let fires = match self.triggers[t as usize].kind {
                    TriggerKind::Barrier => before == 1,
                    TriggerKind::OneShot | TriggerKind::MultiShot => before == self.triggers[t as usize].needed,
                };
                if fires {
                    for &g in self.targets(t) {
                        indegree[g as usize] -= 1;
                        if indegree[g as usize] == 0 {
                            stack.push(g);
                        }
                    }
                }
            }
        }
        if seen == nf {
            return Ok(());
        }
        let on_cycle = (0..nf as u32).find(|&i| indegree[i as usize] > 0).expect("a flow was not reached");
        Err(format!(
            "flow {} waits on a cycle of dependencies (it can never start); only a next_iteration trigger may close a loop",
            self.flow_name(on_cycle)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn barrier() -> Trigger {
        Trigger::new(TriggerKind::Barrier, Delay::NONE)
    }

    #[test]
    fn seal_groups_targets_and_counts_activators() {
        let mut d = Dag::new();
        let t = d.trigger(barrier());
        let a = d.flow(DagFlow::at(0, 1, 10, 0));
        let b = d.flow(DagFlow::at(1, 2, 10, 0));
        let c = d.flow(DagFlow::after(2, 0, 10, t));
        d.activate(b, Milestone::Sent, t);
        d.activate(a, Milestone::Received, t);
        d.seal().unwrap();
        assert_eq!(d.targets(t), &[c]);
        assert_eq!(d.triggers[t as usize].needed, 2);
        assert_eq!(d.activated_by(a, Milestone::Received), &[t]);
        assert_eq!(d.activated_by(b, Milestone::Sent), &[t]);
        assert!(d.activated_by(a, Milestone::Sent).is_empty() && d.activated_by(c, Milestone::Received).is_empty());
    }

    #[test]
    fn a_cycle_is_an_error_naming_a_flow_unless_it_is_a_loop_into_the_next_iteration() {
        let mut d = Dag::new();
        d.flow(DagFlow::at(0, 1, 10, 0));
        let t1 = d.trigger(barrier());
        let t2 = d.trigger(barrier());
        let b = d.flow(DagFlow::after(0, 1, 10, t1));
        let c = d.flow(DagFlow::after(1, 0, 10, t2));
        d.activate(b, Milestone::Received, t2);
        d.activate(c, Milestone::Received, t1);
        d.flow_names = vec!["a".into(), "b".into(), "c".into()];
        let e = d.clone().seal().unwrap_err();
        assert!(e.contains("cycle") && (e.contains("flow b") || e.contains("flow c")), "{e}");
        d.triggers[t1 as usize].next_iteration = true;
        d.seal().unwrap();
    }

    #[test]
    fn dangling_and_unused_triggers_are_errors() {
        let mut d = Dag::new();
        let a = d.flow(DagFlow::at(0, 1, 10, 0));
        d.activate(a, Milestone::Sent, 7);
        assert!(d.clone().seal().unwrap_err().contains("trigger 7, which does not exist"));
        let mut d = Dag::new();
        d.trigger(barrier());
        d.flow(DagFlow::at(0, 1, 10, 0));
        assert!(d.seal().unwrap_err().contains("never activated"));
    }

    #[test]
    fn delays_are_drawn_within_their_law() {
        let mut rng = Rng::seed_from(1);
        for _ in 0..1000 {
            let u = Delay::Uniform(10, 20).draw(&mut rng);
            assert!((10..=20).contains(&u));
            assert!(Delay::Normal { mean: 5, sd: 100 }.draw(&mut rng) < u64::MAX / 2);
        }
        assert_eq!(Delay::Fixed(3).draw(&mut rng), 3);
    }
}
