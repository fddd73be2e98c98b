//! ExpressPass: credit-scheduled, delay-bounded congestion control.
//!
//! Paper: I. Cho, K. Jang, D. Han, "Credit-Scheduled Delay-Bounded Congestion Control for
//! Datacenters", SIGCOMM'17. The mechanism follows the authors' ns-2 code (kaist-ina/ns2-xpass,
//! xpass/xpass.cc and queue/xpass-drop-tail.cc).
//!
//! Modelled:
//! - a sender asks for credit (CREDIT_REQUEST, re-sent every `timeout_us` until a credit comes);
//!   the receiver sends credits paced at its current credit rate, the gap jittered by
//!   U[-10 %, +10 %], each credit 76-92 B on the wire (uniform, from the run's seed), carrying a
//!   credit sequence number and its send time;
//! - one data packet per credit, echoing the credit's number and time; once all data is sent the
//!   sender sends CREDIT_STOP; early credit stop: once per RTT, if the credits of the last RTT
//!   cover the packets left, CREDIT_STOP goes at once. Credits that find no data are wasted
//!   (counted; a sender still receiving credits re-sends CREDIT_STOP after 2 RTTs);
//! - the receiver counts credits lost from gaps in the echoed numbers and runs the credit feedback
//!   control before each credit, at most once per RTT (`feedback.rs`: the code's dynamic target
//!   loss, w steps and measured rate, or the paper's Algorithm 1), RTT = EWMA (0.8/0.2) of
//!   now - echoed credit time;
//! - every port shapes credits (`net::pipeline::credit_shaper`: 8-credit drop-tail queue, token
//!   bucket at avg credit / (avg credit + MTU) of the link), switched on for the whole network by
//!   this transport's `Needs`; routing is symmetric ECMP (`LoadBalancing::Symmetric`) when the run
//!   uses ECMP, so credits and data of a flow cross the same links in opposite directions;
//! - loss recovery: the receiver accepts data in order; a gap makes it NACK the first missing
//!   packet (at most once per 2 RTTs), and the sender rewinds to it (go-back-N on credits); as in
//!   the code, a sender whose early credit stop left data unsent asks for credit again 2
//!   first-credit RTTs later, and the receiver restarts its credits at alpha x max; a receiver
//!   with a NACK unanswered, or stopped with data missing, for `timeout_us` NACKs again and
//!   resumes credits (a fallback for a lost last packet, which the code leaves stuck);
//! - the code's adaptive initial rate (AIR, added in 2018, after the paper's evaluation; the SIRD
//!   paper's runs use it): `adaptive_start_packets` = 40 starts a flow with n < 40 packets left at
//!   alpha x n / 40 of the maximum; off by default, as the paper's evaluation.
//!
//! Not modelled: the 2 ms CLOSE_WAIT linger (state is freed once the receiver has all data and the
//! stop); host processing delay. The
//! receiver knows the flow's size only to count delivery; it stops crediting only on CREDIT_STOP.
//!
//! Packet fields: CREDIT_REQUEST `ack` = packets left to send (the code's `sendbuffer_`); CREDIT `seq` = credit number, `ts` =
//! send time, `ack` = the receiver's RTT estimate (ps; the sender's ECS period); DATA `seq` =
//! packet index, `ack` = echoed credit number, `ts` = echoed credit time; CREDIT_STOP travels as
//! kind `Ack`; NACK `seq` = first missing packet. Every packet of a flow carries one path key.

mod config;
mod feedback;
mod flow;
mod invariants;

pub use config::{Feedback, XpassConfig};

use super::conns::ConnTable;
use super::{ClassUse, Conformance, Ctx, Framing, LoneFlow, Needs, Protocol, SpecEnv, TransportEnv};
use crate::engine::rng::Rng;
use crate::net::packet::{FlowId, HostId, Packet};
use crate::spec_reader::{Section, SpecResult};
use crate::transport::timer::timer_kinds;
use flow::Conn;

timer_kinds! {
    /// ExpressPass's timers (id = flow; each stale unless it is the connection's due one).
    pub enum XpassTimer for "ExpressPass" {
        /// The next credit of a crediting receiver.
        Credit = 0,
        /// Send CREDIT_REQUEST again (no credit came).
        Request = 1,
        /// The receiver's silence timer.
        Rx = 2,
        /// Credits stopped: check that the data all came.
        StopCheck = 3,
    }
}

#[derive(Clone, Debug, Default)]
struct Counters {
    requests: u64,
    credits_sent: u64,
    credits_received: u64,
    credits_wasted: u64,
    credits_lost: u64,
    data_sent: u64,
    retransmitted: u64,
    nacks: u64,
    rx_timeouts: u64,
    stops: u64,
    early_stops: u64,
    duplicates: u64,
}

pub struct Xpass {
    cfg: XpassConfig,
    framing: Framing,
    conns: ConnTable<Conn>,
    /// Each host's maximum credit rate, credit bytes per second.
    max_rate: Vec<f64>,
    rng: Rng,
    counters: Counters,
}

impl Xpass {
    fn new(cfg: &XpassConfig, env: &TransportEnv) -> Xpass {
        let frac = cfg.credit_rate_fraction();
        Xpass {
            cfg: cfg.clone(),
            framing: env.framing,
            conns: ConnTable::default(),
            max_rate: (0..env.hosts()).map(|h| env.nic_rate(h).bps() as f64 / 8.0 * frac).collect(),
            rng: env.rng("expresspass"),
            counters: Counters::default(),
        }
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let c = &self.counters;
        vec![
            ("credit_requests_sent", c.requests),
            ("credits_sent", c.credits_sent),
            ("credits_received", c.credits_received),
            ("credits_wasted", c.credits_wasted),
            ("credits_lost", c.credits_lost),
            ("data_packets_sent", c.data_sent),
            ("retransmitted_packets", c.retransmitted),
            ("nacks_sent", c.nacks),
            ("receiver_timeouts", c.rx_timeouts),
            ("credit_stops_sent", c.stops),
            ("early_credit_stops", c.early_stops),
            ("duplicate_packets", c.duplicates),
        ]
    }
}

impl Protocol for Xpass {
    const NAMES: &'static [(&'static str, &'static str)] = &[(
        "expresspass",
        "ExpressPass (Cho, Jang, Han, SIGCOMM'17): receivers pace credits, switches rate-limit credits to ~5 % of each link, one data packet per credit",
    )];
    type Config = XpassConfig;
    type Timer = XpassTimer;

    fn read(s: &mut Section, _name: &str, env: &SpecEnv) -> SpecResult<XpassConfig> {
        XpassConfig::read(s, env)
    }
    fn name(_cfg: &XpassConfig) -> &'static str {
        "expresspass"
    }
    fn needs(cfg: &XpassConfig) -> Needs {
        let class = |key, class, purpose| ClassUse { key, class, explicit: true, purpose };
        let classes = vec![
            class("data_priority", cfg.data_priority, "data"),
            class("control_priority", cfg.control_priority, "credit requests, credit stops and NACKs"),
        ];
        Needs { classes, credit_shaping: Some(cfg.shaping()), ..Needs::default() }
    }
    fn new(cfg: &XpassConfig, env: &TransportEnv) -> Xpass {
        Xpass::new(cfg, env)
    }
    fn start_flow(&mut self, ctx: &mut Ctx, flow: FlowId) {
        self.start(ctx, flow);
        self.check(flow);
    }
    fn on_packet(&mut self, ctx: &mut Ctx, host: HostId, pkt: &Packet) {
        self.packet(ctx, host, pkt);
        self.check(pkt.flow);
    }
    fn on_timer(&mut self, ctx: &mut Ctx, kind: XpassTimer, id: u32) {
        self.timer(ctx, kind, id);
        self.check(id);
    }
    /// A credit timer per crediting flow, tens of thousands in a shuffle: fetch the connection.
    #[inline(always)]
    fn prefetch_timer(&self, id: u32, near: bool) {
        self.conns.prefetch(id, !near, std::mem::size_of::<Conn>().div_ceil(64));
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Xpass::counters(self)
    }
    /// Receiver: credit rate and w. Sender: packets sent so far.
    fn flow_state(&self, flow: FlowId, out: &mut Vec<(&'static str, f64)>) {
        let Some(slot) = self.conns.slot(flow) else { return };
        let c = &self.conns[slot];
        if let Some(rc) = &c.rc {
            out.push(("credit_rate_gbps", rc.rate * 8.0 / 1e9));
            out.push(("w", rc.w));
        }
        out.push(("sent_packets", c.next_seq as f64));
    }
    /// Every flow waits one round trip for its first credit and starts at alpha of the credit
    /// rate, and data never exceeds MTU / (MTU + credit) of the link (credits take the rest of the
    /// reverse direction's share), so no flow meets the exact ideal.
    fn conformance(_name: &str) -> Conformance {
        Conformance {
            spec: "",
            lone_flow: LoneFlow::Handshake { exact_up_to_bdp: 0.0, max_extra_rtts: 60.0 },
            exempt: &[],
        }
    }
}
