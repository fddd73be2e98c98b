//! Flow state series: the control state of each traced flow (window, rate, credit; whatever its
//! protocol reports through `Protocol::flow_state`) sampled when the flow starts and then every
//! `state_interval_us` while the protocol still holds state for it. Sampling only reads transport
//! state, so it never changes a run's results.

use super::table::{Column, Table};
use super::trace::TraceSpec;
use crate::net::packet::FlowId;
use crate::time::Time;
use crate::transport::Transport;

pub struct FlowStateSeries {
    /// Traced flow ids, sorted.
    flows: Vec<FlowId>,
    pub interval: Time,
    max_rows: usize,
    /// Per traced flow: it started and its protocol no longer reports state (it is done).
    gone: Vec<bool>,
    /// When the row cap stopped the sampling.
    pub truncated_at: Option<Time>,
    scratch: Vec<(&'static str, f64)>,
    /// Variable names seen so far; `var` holds indices into it.
    names: Vec<&'static str>,
    time: Vec<u64>,
    flow: Vec<u64>,
    var: Vec<u32>,
    value: Vec<f64>,
}

impl FlowStateSeries {
    pub fn new(spec: &TraceSpec) -> FlowStateSeries {
        FlowStateSeries {
            flows: spec.flows.clone(),
            interval: spec.state_interval,
            max_rows: spec.max_rows as usize,
            gone: vec![false; spec.flows.len()],
            truncated_at: None,
            scratch: Vec::new(),
            names: Vec::new(),
            time: Vec::new(),
            flow: Vec::new(),
            var: Vec::new(),
            value: Vec::new(),
        }
    }

    pub fn rows(&self) -> usize {
        self.time.len()
    }

    pub fn is_traced(&self, flow: FlowId) -> bool {
        self.flows.binary_search(&flow).is_ok()
    }

    /// Records the flow's state now; returns whether its protocol reported any.
    pub fn sample_flow(&mut self, now: Time, flow: FlowId, transport: &Transport) -> bool {
        self.scratch.clear();
        transport.flow_state(flow, &mut self.scratch);
        for i in 0..self.scratch.len() {
            if self.time.len() >= self.max_rows {
                self.truncated_at.get_or_insert(now);
                break;
            }
            let (name, v) = self.scratch[i];
            let code = match self.names.iter().position(|&n| n == name) {
                Some(c) => c,
                None => {
                    self.names.push(name);
                    self.names.len() - 1
                }
            };
            self.time.push(now);
            self.flow.push(flow as u64);
            self.var.push(code as u32);
            self.value.push(v);
        }
        !self.scratch.is_empty()
    }

    /// A periodic sample of every traced flow that has started (`started` flows exist) and is
    /// not done. Returns whether another tick is needed: some traced flow has yet to start or
    /// still has state, and the row cap was not reached.
    pub fn tick<'t>(&mut self, now: Time, started: usize, transport_of: impl Fn(FlowId) -> &'t Transport) -> bool {
        let mut more = false;
        for i in 0..self.flows.len() {
            let f = self.flows[i];
            if f as usize >= started {
                more = true; // flows start in id order: the rest have not started either
                break;
            }
            if !self.gone[i] {
                self.gone[i] = !self.sample_flow(now, f, transport_of(f));
                more |= !self.gone[i];
            }
        }
        more && self.truncated_at.is_none()
    }

    /// The series as a table: time_ps, flow_id, variable, value.
    pub fn into_table(self) -> Table {
        let mut t = Table::default();
        t.push("time_ps", Column::U64(self.time));
        t.push("flow_id", Column::U64(self.flow));
        t.push(
            "variable",
            Column::Cat { categories: self.names.iter().map(|n| n.to_string()).collect(), codes: self.var },
        );
        t.push("value", Column::F64(self.value));
        t
    }
}

/// The empty flow state table (a run without `[trace]`), with the columns of a real one.
pub fn empty_table() -> Table {
    FlowStateSeries::new(&TraceSpec { flows: Vec::new(), state_interval: 1, max_rows: 0 }).into_table()
}
