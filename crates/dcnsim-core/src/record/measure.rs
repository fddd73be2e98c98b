//! What the run loop measures for the reporters, kept apart from the simulation's state: the
//! measurement window's opening (the packets on the wire then, the first transport's counters then)
//! and the sampled time series.

use super::flows::RxBins;
use crate::time::Time;

/// A sampled time series (`metrics.sample_interval_us`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Series {
    /// Bytes queued at a switch over all its ports (index: the switch).
    SwitchQueueBytes,
    /// A host's receive rate over the last interval, Gb/s (index: the host). Filled in when the run
    /// ends (`Measurement::fill_rx_rates`): a packet arriving across a sample time counts partly
    /// before it.
    HostRxGbps,
    /// Shared-buffer bytes in use at a switch (with `[switch] buffer_bytes`).
    SwitchSharedBytes,
    /// Headroom bytes in use at a switch (with a shared buffer and PFC).
    SwitchHeadroomBytes,
}

impl Series {
    /// The series' name in the time series table.
    pub fn name(self) -> &'static str {
        match self {
            Series::SwitchQueueBytes => "switch_queue_bytes",
            Series::HostRxGbps => "host_rx_gbps",
            Series::SwitchSharedBytes => "switch_shared_bytes",
            Series::SwitchHeadroomBytes => "switch_headroom_bytes",
        }
    }

    /// Whether the series' index is a host (otherwise a switch, numbered from 0).
    pub fn per_host(self) -> bool {
        self == Series::HostRxGbps
    }
}

/// One sample of a time series.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    pub time: Time,
    pub series: Series,
    /// The host or switch (from 0) the value is of.
    pub index: u32,
    pub value: f64,
}

#[derive(Default)]
pub struct Measurement {
    /// Samples of every series in time order.
    pub samples: Vec<Sample>,
    /// Per port: bytes of the packet on the wire when the window opened still to be sent then.
    pub window_carry_in: Vec<f64>,
    /// The first transport's counters when the window opened (none with no warm-up): the
    /// summary's `window_counts` are the differences at the end. (Port counters restart instead.)
    pub at_window_open: Vec<(&'static str, u64)>,
}

impl Measurement {
    /// Records what the window starts from: the ports' unsent bytes and the transport's counters.
    pub fn open_window(&mut self, carry_in: Vec<f64>, counters: Vec<(&'static str, u64)>) {
        self.window_carry_in = carry_in;
        self.at_window_open = counters;
    }

    pub fn sample(&mut self, time: Time, series: Series, index: u32, value: f64) {
        debug_assert!(self.samples.last().is_none_or(|s| s.time <= time), "samples come in time order");
        self.samples.push(Sample { time, series, index, value });
    }

    /// The receive rates, from the bytes each host received per interval.
    pub fn fill_rx_rates(&mut self, bins: &RxBins) {
        let secs = bins.interval as f64 / 1e12;
        for s in self.samples.iter_mut().filter(|s| s.series == Series::HostRxGbps) {
            s.value = bins.ending_at(s.index, s.time) * 8.0 / secs / 1e9;
        }
    }

    /// The first transport's count of `key` when the window opened (0 with no warm-up).
    pub fn count_at_open(&self, key: &str) -> u64 {
        self.at_window_open.iter().find(|c| c.0 == key).map_or(0, |c| c.1)
    }
}
