//! The flow log: one record per flow, written by the simulator when the flow starts and by the
//! transport when the receiver has every byte. Goodput is counted here, inside the measurement
//! window only.
//!
//! Delivered bytes are spread over the time their packet took to arrive (its serialization on the
//! receiver's downlink, `[rx_start, now]`), so that a packet straddling the window's start, or a
//! time-series bin's edge, counts only its share on each side: no reported receive rate can exceed
//! the link's.

use crate::ids::{FlowId, HostId};
use crate::time::Time;

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
    /// The component's mark for the flow (`FlowArrival::tag`).
    pub tag: u64,
}

/// What happened to a flow that its workload may wait for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Milestone {
    /// The sender has handed the flow's last new byte to its NIC.
    Sent,
    /// The receiver has every byte.
    Received,
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
    pub measuring: bool,
    window_start: Time,
    /// When the packet being handed to a transport started to arrive, and when it arrived (see
    /// `receiving`); bytes delivered at any other time count at that instant.
    rx_start: Time,
    rx_end: Time,
    /// Receive-rate time series, if sampled.
    pub rx_bins: Option<RxBins>,
    /// Per workload component: does it wait for its flows' milestones (a closed loop's
    /// completions, a dependency graph's triggers)?
    pub watched: Vec<bool>,
    /// Milestones of watched flows since the simulator last looked (it starts their successors).
    pub milestones: Vec<(FlowId, Milestone)>,
    /// Every `Sent` report of every flow, watched or not, with its time, when `Some`: off (`None`)
    /// unless a caller turns it on before the run (the conformance suite does, to check that each
    /// protocol reports `Sent` once per flow, between the flow's start and its finish).
    pub sent_log: Option<Vec<(FlowId, Time)>>,
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
            measuring: false,
            window_start: 0,
            rx_start: 0,
            rx_end: 0,
            rx_bins: None,
            watched: Vec::new(),
            milestones: Vec::new(),
            sent_log: None,
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

    /// A packet that started arriving at `start` reaches its host now (`now`); the bytes a
    /// transport delivers while handling it are spread over that interval.
    #[inline]
    pub fn receiving(&mut self, start: Time, now: Time) {
        debug_assert!(start <= now);
        self.rx_start = start;
        self.rx_end = now;
    }

    #[inline]
    pub fn delivered(&mut self, id: FlowId, bytes: u64, now: Time) {
        let i = id as usize;
        self.delivered_per_flow[i] += bytes;
        assert!(self.delivered_per_flow[i] <= self.records[i].size, "flow {id} delivered more bytes than its size");
        let dst = self.records[i].dst;
        let from = if self.rx_end == now { self.rx_start } else { now };
        if self.measuring {
            // Only the share received after the window opened (whole bytes, rounded down).
            let counted = if from >= self.window_start {
                bytes
            } else {
                (bytes as u128 * (now - self.window_start) as u128 / (now - from) as u128) as u64
            };
            self.delivered_in_window[dst as usize] += counted;
            self.delivered_per_flow_in_window[i] += counted;
        }
        if let Some(bins) = &mut self.rx_bins {
            bins.add(dst, bytes, from, now);
        }
    }

    pub fn finish(&mut self, id: FlowId, now: Time) {
        let r = &mut self.records[id as usize];
        assert!(r.end.is_none(), "flow {id} finished twice");
        assert_eq!(self.delivered_per_flow[id as usize], r.size, "flow {id} finished before all bytes arrived");
        r.end = Some(now);
        self.finished += 1;
        let component = r.component;
        if self.is_watched(component) {
            self.milestones.push((id, Milestone::Received));
        }
    }

    #[inline]
    fn is_watched(&self, component: u16) -> bool {
        self.watched.get(component as usize).copied().unwrap_or(false)
    }

    /// The flow's sender has handed its last new byte to the NIC at `now` (each transport reports it
    /// once per flow, before or when the flow finishes).
    #[inline]
    pub fn sent(&mut self, id: FlowId, now: Time) {
        if let Some(log) = &mut self.sent_log {
            log.push((id, now));
        }
        if self.is_watched(self.records[id as usize].component) {
            self.milestones.push((id, Milestone::Sent));
        }
    }

    pub fn open_window(&mut self, now: Time) {
        self.measuring = true;
        self.window_start = now;
        self.delivered_in_window.iter_mut().for_each(|b| *b = 0);
        self.delivered_per_flow_in_window.iter_mut().for_each(|b| *b = 0);
    }
}

/// Payload bytes each host received per time bin, each packet's bytes spread over its arrival.
pub struct RxBins {
    pub interval: Time,
    hosts: usize,
    /// Bytes by [bin * hosts + host]; bin b covers [b * interval, (b + 1) * interval).
    pub bytes: Vec<f64>,
}

impl RxBins {
    pub fn new(interval: Time, hosts: u32) -> RxBins {
        assert!(interval > 0);
        RxBins { interval, hosts: hosts as usize, bytes: Vec::new() }
    }

    fn add(&mut self, host: u32, bytes: u64, from: Time, to: Time) {
        let last = (to / self.interval) as usize;
        if self.bytes.len() < (last + 1) * self.hosts {
            self.bytes.resize((last + 1) * self.hosts, 0.0);
        }
        if from == to {
            self.bytes[last * self.hosts + host as usize] += bytes as f64;
            return;
        }
        let per_ps = bytes as f64 / (to - from) as f64;
        for bin in (from / self.interval) as usize..=last {
            let lo = (bin as Time * self.interval).max(from);
            let hi = ((bin as Time + 1) * self.interval).min(to);
            if hi > lo {
                self.bytes[bin * self.hosts + host as usize] += per_ps * (hi - lo) as f64;
            }
        }
    }

    /// Bytes `host` received in the bin ending at `end` (a multiple of the interval).
    pub fn ending_at(&self, host: u32, end: Time) -> f64 {
        debug_assert!(end.is_multiple_of(self.interval) && end > 0);
        let bin = (end / self.interval - 1) as usize;
        self.bytes.get(bin * self.hosts + host as usize).copied().unwrap_or(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log() -> FlowLog {
        let mut l = FlowLog::new(2);
        l.start(FlowRecord { src: 0, dst: 1, size: 10_000, start: 0, end: None, component: 0, tag: 0 });
        l
    }

    #[test]
    fn a_packet_straddling_the_window_start_counts_its_share() {
        let mut l = log();
        l.open_window(1_000);
        l.receiving(600, 1_600); // 1000 bytes over 1000 ps, 600 of them after the window opened
        l.delivered(0, 1_000, 1_600);
        assert_eq!(l.delivered_in_window[1], 600);
        assert_eq!(l.delivered_per_flow_in_window[0], 600);
        assert_eq!(l.delivered_per_flow[0], 1_000);
    }

    #[test]
    fn bins_split_a_packet_at_their_edges() {
        let mut l = log();
        l.rx_bins = Some(RxBins::new(100, 2));
        l.receiving(50, 250);
        l.delivered(0, 400, 250);
        let b = l.rx_bins.as_ref().unwrap();
        assert_eq!([b.ending_at(1, 100), b.ending_at(1, 200), b.ending_at(1, 300)], [100.0, 200.0, 100.0]);
        assert_eq!(b.ending_at(0, 200), 0.0);
        // Bytes delivered outside a packet arrival (a timer) count at that instant.
        l.delivered(0, 7, 420);
        assert_eq!(l.rx_bins.as_ref().unwrap().ending_at(1, 500), 7.0);
    }
}
