//! The flow log: one record per flow, written by the simulator when the flow starts and by the
//! transport when the receiver has every byte. Goodput is counted here, inside the measurement
//! window only.

use crate::engine::time::Time;
use crate::net::packet::{FlowId, HostId};

#[derive(Clone, Debug)]
pub struct FlowRecord {
    pub src: HostId,
    pub dst: HostId,
    /// Application bytes.
    pub size: u64,
    pub start: Time,
    /// When the receiver had every byte; `None` while unfinished.
    pub end: Option<Time>,
    /// The workload component that made the flow.
    pub component: u16,
}

pub struct FlowLog {
    pub records: Vec<FlowRecord>,
    pub finished: u64,
    /// Payload bytes delivered to each host (as receiver) inside the measurement window.
    pub delivered_in_window: Vec<u64>,
    /// Payload bytes delivered per flow over the whole run (for throughput of long flows).
    pub delivered_per_flow: Vec<u64>,
    /// Delivered payload per flow inside the measurement window.
    pub delivered_per_flow_in_window: Vec<u64>,
    /// Payload bytes delivered to each host over the whole run (for time series).
    pub delivered_per_host: Vec<u64>,
    pub measuring: bool,
    /// Per workload component: does a completion start the source's next flow (closed loop)?
    pub closed_loop: Vec<bool>,
    /// Closed-loop flows finished since the simulator last looked (it starts their successors).
    pub closed_loop_done: Vec<FlowId>,
}

pub use crate::limits::MAX_FLOWS;

impl FlowLog {
    pub fn new(hosts: u32) -> FlowLog {
        FlowLog {
            records: Vec::new(),
            finished: 0,
            delivered_in_window: vec![0; hosts as usize],
            delivered_per_flow: Vec::new(),
            delivered_per_flow_in_window: Vec::new(),
            delivered_per_host: vec![0; hosts as usize],
            measuring: false,
            closed_loop: Vec::new(),
            closed_loop_done: Vec::new(),
        }
    }

    pub fn start(&mut self, rec: FlowRecord) -> FlowId {
        assert!(self.records.len() < MAX_FLOWS, "more than {MAX_FLOWS} flows");
        self.records.push(rec);
        self.delivered_per_flow.push(0);
        self.delivered_per_flow_in_window.push(0);
        (self.records.len() - 1) as FlowId
    }

    #[inline]
    pub fn get(&self, id: FlowId) -> &FlowRecord {
        &self.records[id as usize]
    }

    #[inline]
    pub fn delivered(&mut self, id: FlowId, bytes: u64, _now: Time) {
        let i = id as usize;
        self.delivered_per_flow[i] += bytes;
        assert!(self.delivered_per_flow[i] <= self.records[i].size, "flow {id} delivered more bytes than its size");
        self.delivered_per_host[self.records[i].dst as usize] += bytes;
        if self.measuring {
            self.delivered_in_window[self.records[i].dst as usize] += bytes;
            self.delivered_per_flow_in_window[i] += bytes;
        }
    }

    pub fn finish(&mut self, id: FlowId, now: Time) {
        let r = &mut self.records[id as usize];
        assert!(r.end.is_none(), "flow {id} finished twice");
        assert_eq!(self.delivered_per_flow[id as usize], r.size, "flow {id} finished before all bytes arrived");
        r.end = Some(now);
        self.finished += 1;
        if self.closed_loop.get(r.component as usize).copied().unwrap_or(false) {
            self.closed_loop_done.push(id);
        }
    }

    pub fn open_window(&mut self) {
        self.measuring = true;
        self.delivered_in_window.iter_mut().for_each(|b| *b = 0);
        self.delivered_per_flow_in_window.iter_mut().for_each(|b| *b = 0);
    }
}
