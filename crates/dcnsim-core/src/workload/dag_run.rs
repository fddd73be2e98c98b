//! A dependency graph being played (`dag.rs`): the triggers' states and the flows due to start.
//!
//! Flows carry a tag, `iteration << 32 | flow index`, through the flow log, so that a flow's
//! milestones find their trigger. Trigger states are kept per iteration only while a trigger is
//! partly activated (a barrier) or has fired once (a one-shot, so that later activations are
//! ignored); one-shot states two iterations behind the newest are dropped, so memory stays flat
//! over iterations.

use super::dag::{Dag, Milestone, TriggerKind};
use crate::engine::rng::Rng;
use crate::time::Time;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// A flow due: (start, order of scheduling, flow index, iteration).
type Due = Reverse<(Time, u64, u32, u32)>;

/// One-shot trigger state: fired.
const FIRED: u32 = u32::MAX;

pub struct DagRun {
    pub dag: Dag,
    rng: Rng,
    due: BinaryHeap<Due>,
    order: u64,
    /// Activations so far per (iteration, trigger) (`FIRED` for a one-shot that fired).
    state: HashMap<(u32, u32), u32>,
    newest_iteration: u32,
}

pub fn tag(flow: u32, iteration: u32) -> u64 {
    (iteration as u64) << 32 | flow as u64
}

pub fn untag(tag: u64) -> (u32, u32) {
    (tag as u32, (tag >> 32) as u32)
}

impl DagRun {
    /// Flows without a start trigger, or whose trigger is a loop-back from the previous iteration,
    /// are due at their start times in the first iteration.
    pub fn new(dag: Dag, rng: Rng) -> DagRun {
        let mut run = DagRun { dag, rng, due: BinaryHeap::new(), order: 0, state: HashMap::new(), newest_iteration: 0 };
        // A loop-back trigger "fires" at the start of the first iteration too: its delay (a rank's
        // compute) is drawn once and precedes the flows it starts there.
        let mut first_delay: Vec<Option<Time>> = vec![None; run.dag.triggers.len()];
        for i in 0..run.dag.flows.len() as u32 {
            if run.dag.starts_at_time(i) {
                let f = run.dag.flows[i as usize];
                let delay = match f.start_trigger {
                    super::dag::NONE => 0,
                    t => *first_delay[t as usize].get_or_insert_with(|| run.draw_delay(t)),
                };
                run.push(f.start + delay, i, 0);
            }
        }
        run
    }

    fn push(&mut self, at: Time, flow: u32, iteration: u32) {
        self.order += 1;
        self.due.push(Reverse((at, self.order, flow, iteration)));
    }

    /// The next flow due: (start, flow index, iteration).
    pub fn peek(&self) -> Option<(Time, u32, u32)> {
        self.due.peek().map(|Reverse((at, _, f, i))| (*at, *f, *i))
    }

    pub fn pop(&mut self) {
        self.due.pop();
    }

    /// Puts back the flow `peek` gave and `pop` took, ahead of any other due at the same time.
    pub fn unpop(&mut self, at: Time, flow: u32, iteration: u32) {
        self.due.push(Reverse((at, 0, flow, iteration)));
    }

    /// A flow of the graph reached `milestone` at `now`: activates the trigger it names, if any.
    /// Returns whether flows became due.
    pub fn on_milestone(&mut self, tag: u64, milestone: Milestone, now: Time) -> bool {
        let (flow, iteration) = untag(tag);
        let mut queued = false;
        for k in 0..self.dag.activated_by(flow, milestone).len() {
            let t = self.dag.activated_by(flow, milestone)[k];
            queued |= self.activate(t, iteration, now);
        }
        queued
    }

    fn activate(&mut self, t: u32, iteration: u32, now: Time) -> bool {
        let trigger = self.dag.triggers[t as usize];
        let fires = match trigger.kind {
            TriggerKind::MultiShot => true,
            TriggerKind::OneShot => {
                let s = self.state.entry((iteration, t)).or_insert(0);
                std::mem::replace(s, FIRED) != FIRED
            }
            TriggerKind::Barrier => {
                let s = self.state.entry((iteration, t)).or_insert(0);
                *s += 1;
                debug_assert!(*s <= trigger.needed, "barrier activated more often than it has activators");
                let done = *s == trigger.needed;
                if done {
                    self.state.remove(&(iteration, t));
                }
                done
            }
        };
        let target_iteration = iteration + trigger.next_iteration as u32;
        if !fires || target_iteration >= self.dag.iterations {
            return false;
        }
        if target_iteration > self.newest_iteration {
            self.newest_iteration = target_iteration;
            let keep_from = target_iteration.saturating_sub(2);
            self.state.retain(|&(i, _), _| i >= keep_from);
        }
        let start = now + self.draw_delay(t);
        let targets = self.dag.targets(t).len();
        for k in 0..targets {
            let g = self.dag.targets(t)[k];
            self.push(start, g, target_iteration);
        }
        targets > 0
    }

    /// A firing's delay: drawn from the trigger's law, scaled (a straggler computes slower).
    fn draw_delay(&mut self, t: u32) -> Time {
        let trigger = &self.dag.triggers[t as usize];
        let (delay, scale) = (trigger.delay, trigger.scale);
        if scale == 1.0 {
            delay.draw(&mut self.rng)
        } else {
            (delay.draw(&mut self.rng) as f64 * scale).round() as Time
        }
    }

    /// Trigger states held (for memory tests).
    pub fn live_states(&self) -> usize {
        self.state.len()
    }
}

#[cfg(test)]
mod tests {
    use super::super::dag::{DagFlow, Delay, Trigger};
    use super::*;

    /// Two ranks ping-pong; each reception starts the next flow after 5 ps of compute, and the
    /// second flow's reception starts the first in the next iteration.
    fn ping_pong(iterations: u32) -> DagRun {
        let mut d = Dag::new();
        d.iterations = iterations;
        let there = d.trigger(Trigger::new(TriggerKind::OneShot, Delay::Fixed(5)));
        let back = d.trigger(Trigger::new(TriggerKind::OneShot, Delay::Fixed(5)).into_next_iteration());
        let a = d.flow(DagFlow { start_trigger: back, ..DagFlow::at(0, 1, 100, 10) });
        let b = d.flow(DagFlow::after(1, 0, 100, there));
        d.activate(a, Milestone::Received, there);
        d.activate(b, Milestone::Received, back);
        d.seal().unwrap();
        DagRun::new(d, Rng::seed_from(1))
    }

    #[test]
    fn flows_start_when_their_trigger_fires_and_loop_into_the_next_iteration() {
        let mut run = ping_pong(10);
        let mut now = 0;
        for iteration in 0..10 {
            let first = run.peek().unwrap();
            assert_eq!(
                first,
                (if iteration == 0 { 15 } else { now + 5 }, 0, iteration),
                "compute precedes every iteration"
            );
            run.pop();
            assert!(run.peek().is_none(), "flow 1 waits for flow 0");
            now = first.0 + 40;
            assert!(!run.on_milestone(tag(0, iteration), Milestone::Sent, now - 1), "no sent trigger");
            assert!(run.on_milestone(tag(0, iteration), Milestone::Received, now));
            assert_eq!(run.peek(), Some((now + 5, 1, iteration)));
            run.pop();
            now += 45;
            let more = run.on_milestone(tag(1, iteration), Milestone::Received, now);
            assert_eq!(more, iteration < 9, "the last iteration's loop-back starts nothing");
        }
        assert!(run.peek().is_none());
        assert!(run.live_states() <= 6, "one-shot states of old iterations are dropped");
    }

    #[test]
    fn a_barrier_waits_for_every_activator_and_a_one_shot_fires_once() {
        let mut d = Dag::new();
        let barrier = d.trigger(Trigger::new(TriggerKind::Barrier, Delay::NONE));
        let once = d.trigger(Trigger::new(TriggerKind::OneShot, Delay::NONE));
        for s in 0..3 {
            let f = d.flow(DagFlow::at(s, 3, 10, 0));
            d.activate(f, Milestone::Received, barrier);
            d.activate(f, Milestone::Sent, once);
        }
        d.flow(DagFlow::after(3, 0, 10, barrier));
        d.flow(DagFlow::after(3, 1, 10, once));
        d.seal().unwrap();
        let mut run = DagRun::new(d, Rng::seed_from(1));
        for _ in 0..3 {
            run.pop();
        }
        assert!(run.on_milestone(tag(0, 0), Milestone::Sent, 1));
        assert!(!run.on_milestone(tag(1, 0), Milestone::Sent, 2), "a one-shot fires once");
        assert_eq!(run.peek(), Some((1, 4, 0)));
        run.pop();
        assert!(!run.on_milestone(tag(0, 0), Milestone::Received, 3));
        assert!(!run.on_milestone(tag(1, 0), Milestone::Received, 4));
        assert!(run.on_milestone(tag(2, 0), Milestone::Received, 5));
        assert_eq!(run.peek(), Some((5, 3, 0)));
        assert_eq!(run.live_states(), 1, "the barrier's state is gone once it fired");
    }
}
