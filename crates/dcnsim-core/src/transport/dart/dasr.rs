//! The receiver half of Dart: direct apportioning of sending rates (DASR, section III-A/B), its
//! look-ahead (accelerated DASR, III-D) and the congestion state machine (Figure 5, III-C), as
//! the rate sender's extension ([`RateExt`]): it sees every data packet at its receiver and
//! decides what the ACK carries (the sender count n in `aux`, and whether the CE echo goes).
//!
//! Per receiver NIC:
//! - AUSS: the active unique senders, each with its count of in-flight messages and the time of
//!   its last packet. A message counts from its first packet (or its look-ahead announcement) to
//!   its last (the receiver holds every packet); a sender leaves when its count reaches zero, or
//!   after `idle_timeout` without a packet (the paper's soft state, 2 s)
//! - n = |AUSS| goes on every ACK; the sender's rate is at most its line rate / n, and, with
//!   `apportion_after_control`, line rate x (1 - c) / n, where c is the share of the receiver's link
//!   taken by the control packets (its own flows' ACKs and NACKs) over the last `control_window`:
//!   the shares then add up to what the link can carry for data, so the apportioned rates "can be
//!   sustained in steady state" (section III-A). With shares of the nominal line rate a receiver that
//!   also sends overfills its own link by its ACKs (1 / 23 of it at 1500 B packets and 64 B ACKs) and,
//!   its marks suppressed, the queue grows until PFC pauses the fabric
//! - look-ahead: the flows released together to one receiver by one workload component at one
//!   instant are an incast group (the application knows its groups); the first packet of any of
//!   them puts every member's sender in the AUSS at once
//! - state machine, on each data packet: a CE mark with the receive throughput at line rate
//!   (at least `throughput_rate_fraction` of it over the last `throughput_window_packets` arrivals)
//!   (of the part of the link left to data) means Receiver Congestion: n goes out, the CE echo is
//!   suppressed; a CE mark below that
//!   throughput means Non-Receiver Congestion: the echo goes (the senders' DCQCN acts) and n = 1
//!   (DASR neutralised); no CE mark for `quiet` means No Congestion (n goes out, no echo to give)

use super::control::SHARE_SCALE;
use super::DartParams;
use crate::net::packet::{flags, FlowId, HostId, Packet};
use crate::net::pipeline::deflection::DeflectTokens;
use crate::record::flows::FlowRecord;
use crate::time::{Rate, Time};
use crate::transport::rate::{AckMarks, FlowMarks, RateExt};
use crate::transport::TransportEnv;
use std::collections::{HashMap, VecDeque};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    NoCongestion,
    ReceiverCongestion,
    NonReceiverCongestion,
}

#[derive(Clone, Copy, Debug)]
struct Sender {
    host: HostId,
    messages: u32,
    last_seen: Time,
}

struct Receiver {
    auss: Vec<Sender>,
    state: State,
    entered: Time,
    last_ce: Time,
    /// The last data arrivals: (time, wire bytes).
    arrivals: VecDeque<(Time, u32)>,
    /// Control packets that arrived at this host within the control window: (time, wire bytes).
    control: VecDeque<(Time, u32)>,
    control_bytes: u64,
    line: Rate,
}

impl Receiver {
    /// Forgets the control arrivals older than `window`.
    fn expire_control(&mut self, now: Time, window: Time) {
        while let Some(&(t, b)) = self.control.front() {
            if t + window > now {
                break;
            }
            self.control.pop_front();
            self.control_bytes -= b as u64;
        }
        debug_assert_eq!(self.control_bytes, self.control.iter().map(|c| c.1 as u64).sum::<u64>());
    }
}

struct FlowEntry {
    src: HostId,
    dst: HostId,
    counted: bool,
    /// At most `short_flow_max_bytes` (Table I counts the short flows' marks).
    short: bool,
    /// The value the last ACK of this flow carried (0: none yet).
    last_value: u32,
}

/// Flows released together to one receiver by one component: (receiver, component, start).
type GroupKey = (HostId, u16, Time);

#[derive(Clone, Copy, Debug, Default)]
struct Counters {
    to_receiver: u64,
    to_non_receiver: u64,
    to_none: u64,
    apportion: u64,
    lookahead: u64,
    suppressed: u64,
    short_marks: u64,
    short_suppressed: u64,
    fallback_ps: u64,
}

/// The extension: its state is boxed (the transport enum holds every protocol by value).
pub struct Dasr(Box<DasrState>);

pub struct DasrState {
    cfg: DartParams,
    quiet: Time,
    control_window: Time,
    receivers: Vec<Receiver>,
    flows: HashMap<FlowId, FlowEntry>,
    groups: HashMap<GroupKey, Vec<FlowId>>,
    group_of: HashMap<FlowId, GroupKey>,
    counters: Counters,
}

impl DasrState {
    /// The throughput over the last arrivals is at least the configured fraction of the line rate
    /// left to data.
    fn at_line_rate(&self, r: &Receiver, now: Time) -> bool {
        let Some(&(first, _)) = r.arrivals.front() else { return false };
        if r.arrivals.len() < 2 || now <= first {
            return false;
        }
        let bytes: u64 = r.arrivals.iter().skip(1).map(|a| a.1 as u64).sum();
        let data_rate = self.data_fraction(r) * r.line.bytes_in(now - first) as f64;
        bytes as f64 >= self.cfg.throughput_rate_fraction * data_rate
    }

    /// The fraction of the receiver's link left to data: 1 less its control packets' share over the
    /// control window (at least a half; exactly 1 without `apportion_after_control`).
    fn data_fraction(&self, r: &Receiver) -> f64 {
        if !self.cfg.apportion_after_control || r.control_bytes == 0 {
            return 1.0;
        }
        let capacity = r.line.bytes_in(self.control_window).max(1) as f64;
        (1.0 - r.control_bytes as f64 / capacity).max(0.5)
    }

    fn add_sender(r: &mut Receiver, host: HostId, now: Time) {
        match r.auss.iter_mut().find(|s| s.host == host) {
            Some(s) => s.messages += 1,
            None => r.auss.push(Sender { host, messages: 1, last_seen: now }),
        }
    }

    /// Counts the flow's message (and, with the look-ahead, its group's) in the AUSS.
    fn count(&mut self, now: Time, id: FlowId, dst: HostId) {
        let Some(f) = self.flows.get_mut(&id) else { return };
        if f.counted {
            return;
        }
        f.counted = true;
        let src = f.src;
        Self::add_sender(&mut self.receivers[dst as usize], src, now);
        if !self.cfg.lookahead {
            return;
        }
        let key = self.group_of.remove(&id);
        let Some(members) = key.and_then(|k| self.groups.remove(&k)) else { return };
        for m in members {
            let Some(f) = self.flows.get_mut(&m) else { continue };
            if !f.counted {
                f.counted = true;
                Self::add_sender(&mut self.receivers[dst as usize], f.src, now);
                self.counters.lookahead += 1;
            }
        }
    }

    fn enter(&mut self, host: HostId, state: State, now: Time) {
        let r = &mut self.receivers[host as usize];
        if r.state == state {
            return;
        }
        if r.state == State::NonReceiverCongestion {
            self.counters.fallback_ps += now - r.entered;
        }
        (r.state, r.entered) = (state, now);
        let c = &mut self.counters;
        match state {
            State::NoCongestion => c.to_none += 1,
            State::ReceiverCongestion => c.to_receiver += 1,
            State::NonReceiverCongestion => c.to_non_receiver += 1,
        }
    }

    /// Moves the receiver's state machine on a data packet; returns whether to suppress its echo.
    fn step(&mut self, now: Time, pkt: &Packet) -> bool {
        let host = pkt.dst;
        let r = &self.receivers[host as usize];
        let ce = pkt.has(flags::CE);
        if ce {
            let state =
                if self.at_line_rate(r, now) { State::ReceiverCongestion } else { State::NonReceiverCongestion };
            self.receivers[host as usize].last_ce = now;
            self.enter(host, state, now);
        } else if r.state != State::NoCongestion && now >= r.last_ce + self.quiet {
            self.enter(host, State::NoCongestion, now);
        }
        let suppress = ce && self.receivers[host as usize].state == State::ReceiverCongestion;
        self.counters.suppressed += suppress as u64;
        suppress
    }

    /// The receiver's state (tests and traces).
    pub fn state(&self, host: HostId) -> State {
        self.receivers[host as usize].state
    }
}

impl std::ops::Deref for Dasr {
    type Target = DasrState;
    fn deref(&self) -> &DasrState {
        &self.0
    }
}

impl std::ops::DerefMut for Dasr {
    fn deref_mut(&mut self) -> &mut DasrState {
        &mut self.0
    }
}

impl RateExt<DartParams> for Dasr {
    fn new(cfg: &DartParams, env: &TransportEnv) -> Dasr {
        let hosts = env.hosts();
        let rtt = env.base_rtt(0, hosts.saturating_sub(1));
        let quiet = cfg.quiet.unwrap_or(2 * rtt);
        let receivers = (0..hosts)
            .map(|h| Receiver {
                auss: Vec::new(),
                state: State::NoCongestion,
                entered: 0,
                last_ce: 0,
                arrivals: VecDeque::with_capacity(cfg.throughput_window_packets),
                control: VecDeque::new(),
                control_bytes: 0,
                line: env.nic_rate(h),
            })
            .collect();
        Dasr(Box::new(DasrState {
            cfg: cfg.clone(),
            quiet,
            control_window: cfg.control_window.unwrap_or(2 * rtt),
            receivers,
            flows: HashMap::new(),
            groups: HashMap::new(),
            group_of: HashMap::new(),
            counters: Counters::default(),
        }))
    }

    fn on_flow_start(&mut self, _now: Time, id: FlowId, rec: &FlowRecord) -> FlowMarks {
        let this = &mut *self.0;
        if this.cfg.dasr {
            let short = rec.size <= this.cfg.short_flow_max_bytes;
            this.flows.insert(id, FlowEntry { src: rec.src, dst: rec.dst, counted: false, short, last_value: 0 });
            if this.cfg.lookahead {
                let key = (rec.dst, rec.component, rec.start);
                this.groups.entry(key).or_default().push(id);
                this.group_of.insert(id, key);
            }
        }
        let short = rec.size <= this.cfg.short_flow_max_bytes;
        let tokens = this.cfg.deflection_tokens.min(DeflectTokens::MAX);
        FlowMarks {
            deflect: if short && tokens > 0 { DeflectTokens::deflectable(tokens) } else { DeflectTokens::default() },
            data_priority: if short { this.cfg.short_flow_priority } else { None },
        }
    }

    fn on_data(&mut self, now: Time, pkt: &Packet) -> AckMarks {
        let this = &mut *self.0;
        if !this.cfg.dasr {
            return AckMarks::default();
        }
        let (dst, timeout, window) = (pkt.dst, this.cfg.idle_timeout, this.cfg.throughput_window_packets);
        this.count(now, pkt.flow, dst);
        let r = &mut this.receivers[dst as usize];
        if r.arrivals.len() == window {
            r.arrivals.pop_front();
        }
        r.arrivals.push_back((now, pkt.size));
        r.auss.retain(|s| s.last_seen + timeout >= now);
        if let Some(s) = r.auss.iter_mut().find(|s| s.host == pkt.src) {
            s.last_seen = now;
        }
        r.expire_control(now, this.control_window);
        let suppress = this.step(now, pkt);
        let r = &this.receivers[dst as usize];
        let value = if r.state == State::NonReceiverCongestion { 1 } else { r.auss.len().max(1) as u32 };
        // n over the data's fraction of the link; exactly 1 in Non-Receiver Congestion (DASR neutral).
        let factor = match r.state {
            State::NonReceiverCongestion => SHARE_SCALE,
            _ => (value as f64 * SHARE_SCALE as f64 / this.data_fraction(r)).round() as u32,
        };
        if let Some(f) = this.flows.get_mut(&pkt.flow) {
            if f.short && pkt.has(flags::CE) {
                this.counters.short_marks += 1;
                this.counters.short_suppressed += suppress as u64;
            }
            if value != f.last_value && (f.last_value != 0 || value != 1) {
                this.counters.apportion += 1;
            }
            f.last_value = value;
        }
        AckMarks { aux: factor, suppress_ece: suppress }
    }

    fn on_finished(&mut self, _now: Time, id: FlowId) {
        let this = &mut *self.0;
        this.group_of.remove(&id);
        let Some(f) = this.flows.remove(&id) else { return };
        if !f.counted {
            return;
        }
        let r = &mut this.receivers[f.dst as usize];
        // The sender may have left already by the idle timeout.
        if let Some(i) = r.auss.iter().position(|s| s.host == f.src) {
            r.auss[i].messages -= 1;
            if r.auss[i].messages == 0 {
                r.auss.swap_remove(i);
            }
        }
    }

    fn on_control(&mut self, now: Time, host: HostId, pkt: &Packet) {
        let this = &mut *self.0;
        if !this.cfg.dasr || !this.cfg.apportion_after_control {
            return;
        }
        let r = &mut this.receivers[host as usize];
        r.control.push_back((now, pkt.size));
        r.control_bytes += pkt.size as u64;
        r.expire_control(now, this.control_window);
    }

    fn counters(&self, out: &mut Vec<(&'static str, u64)>) {
        let c = &self.counters;
        out.extend([
            ("dasr_to_receiver_congestion", c.to_receiver),
            ("dasr_to_non_receiver_congestion", c.to_non_receiver),
            ("dasr_to_no_congestion", c.to_none),
            ("dasr_apportion_messages", c.apportion),
            ("dasr_lookahead_senders", c.lookahead),
            ("ecn_marks_suppressed", c.suppressed),
            ("short_flow_marks", c.short_marks),
            ("short_flow_marks_suppressed", c.short_suppressed),
            ("dcqcn_fallback_ps", c.fallback_ps),
        ]);
    }
}
