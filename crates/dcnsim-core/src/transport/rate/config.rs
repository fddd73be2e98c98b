//! The keys every rate protocol shares (recovery mode, ACK/NACK generation, timeouts, in-flight
//! cap, priority classes), with their sources in the descriptions.

use super::fast_start::{FastStart, Modes};
use super::sender::Recovery;
use crate::net::packet::LoadBalancing;
use crate::spec_reader::{Section, SpecResult};
use crate::time::{from_us, Time};
use crate::transport::parts::keys;
use crate::transport::SpecEnv;

/// The sender's parameters (the controller has its own).
#[derive(Clone, Debug, PartialEq)]
pub struct RateConfig {
    pub recovery: Recovery,
    pub nack_interval: Time,
    pub ack_every_packets: u64,
    /// RTO_high and RTO_low, and N: RTO_low applies while at most N packets are outstanding.
    pub timeout: Time,
    pub short_timeout: Time,
    pub short_timeout_packets: u64,
    /// New data stops while this many BDPs of packets are in flight; `None` = no cap.
    pub in_flight_cap_bdp: Option<f64>,
    /// `None`: the BDP between host 0 and the last host (the longest path of the built topologies).
    pub bdp_bytes: Option<u64>,
    pub data_priority: u8,
    pub control_priority: u8,
    pub ecn_capable: bool,
    pub lb: LoadBalancing,
    /// How a QP starts (line rate, slow start, PB-FS).
    pub fast_start: FastStart,
    /// Go-back-N with IRN's default timeouts on a PFC fabric: they can fire behind pauses with
    /// nothing lost (a warning; the HPCC reference's NIC has no timer).
    pub default_timeouts_on_pfc: bool,
}

impl RateConfig {
    /// Reads the keys every rate protocol shares; `name` prefixes their descriptions' scope.
    pub fn read(s: &mut Section, name: &str, env: &SpecEnv, ecn: bool) -> SpecResult<RateConfig> {
        let (recovery, nack_interval, ack_every) = read_recovery(s)?;
        let timeouts_set = s.has("timeout_us") || s.has("short_timeout_us");
        let (timeout, short, short_packets) = read_timeouts(s)?;
        let default_cap = if recovery == Recovery::SelectiveRepeat { Some(1.0) } else { None };
        let cap = s.f64_opt(
            "in_flight_cap_bdp",
            "BDP",
            "no new data while this many BDPs of packets are in flight (IRN's \
             BDP-FC: 1); default 1 with irn, none with go_back_n",
        )?;
        let cap = cap.or(default_cap);
        if let Some(c) = cap {
            s.ensure(c > 0.0 && c <= 1e6, "in_flight_cap_bdp", "must be in (0, 1e6]")?;
        }
        let bdp = s.u64_opt(
            "bdp_bytes",
            "bytes",
            "the BDP of in_flight_cap_bdp and of the windows (dctcp_rate, \
             hpcc: W); unset = host 0's link rate x base RTT to the last host (the HPCC reference's max BDP)",
        )?;
        if let Some(b) = bdp {
            s.ensure(b >= 1, "bdp_bytes", "must be at least 1")?;
        }
        let (data_priority, control_priority) =
            keys::read_classes(s, "priority class of data", "priority class of ACKs and NACKs")?;
        keys::refuse_source_routing(s, env, name)?;
        let fast_start = FastStart::read(s, env, Modes::Rate)?;
        Ok(RateConfig {
            recovery,
            nack_interval: from_us(nack_interval),
            ack_every_packets: ack_every,
            timeout: from_us(timeout),
            short_timeout: from_us(short),
            short_timeout_packets: short_packets,
            in_flight_cap_bdp: cap,
            bdp_bytes: bdp,
            data_priority,
            control_priority,
            ecn_capable: ecn,
            lb: env.load_balancing,
            fast_start,
            default_timeouts_on_pfc: env.pfc && recovery == Recovery::GoBackN && !timeouts_set,
        })
    }
}

/// Loss recovery and acknowledgement keys: (recovery, NACK interval in us, ACK every n packets).
fn read_recovery(s: &mut Section) -> SpecResult<(Recovery, f64, u64)> {
    let recovery = match s
        .choice_or(
            "recovery",
            &["go_back_n", "irn", "selective_repeat"],
            "go_back_n",
            "loss recovery: go_back_n (RoCEv2 as the HPCC reference NIC: NACK, \
             resend from the NACKed packet) or irn (IRN, Mittal et al. SIGCOMM'18: SACK per out-of-order packet, \
             resend only the holes, at most 1 BDP in flight, RTO_low/RTO_high); selective_repeat = irn",
        )?
        .as_str()
    {
        "irn" | "selective_repeat" => Recovery::SelectiveRepeat,
        _ => Recovery::GoBackN,
    };
    let nack_interval = s.f64_or(
        "nack_interval_us",
        500.0,
        "us",
        "go_back_n: at most one NACK per gap per interval (HPCC's ns-3 runs: 500)",
    )?;
    s.ensure((0.0..=crate::limits::MAX_RTO_US).contains(&nack_interval), "nack_interval_us", "must be in [0, 1e7] us")?;
    let ack_every =
        s.u64_or("ack_every_packets", 1, "packets", "ACK every this many in-order packets (and the last)")?;
    s.ensure((1..=1_000_000).contains(&ack_every), "ack_every_packets", "must be in [1, 1000000]")?;
    Ok((recovery, nack_interval, ack_every))
}

/// Timeout keys: (timeout in us, short timeout in us, packets outstanding below which it applies).
fn read_timeouts(s: &mut Section) -> SpecResult<(f64, f64, u64)> {
    let timeout = s.f64_or("timeout_us", 320.0, "us", "retransmission timeout (IRN's RTO_high: 320)")?;
    s.ensure(timeout > 0.0 && timeout <= crate::limits::MAX_RTO_US, "timeout_us", "must be in (0, 1e7] us")?;
    let short =
        s.f64_or("short_timeout_us", 100.0, "us", "timeout while few packets are outstanding (IRN's RTO_low: 100)")?;
    s.ensure(short > 0.0 && short <= timeout, "short_timeout_us", "must be in (0, timeout_us]")?;
    let short_packets = s.u64_or(
        "short_timeout_packets",
        3,
        "packets",
        "short_timeout_us applies while at most this many packets are \
         outstanding (IRN's N: 3)",
    )?;
    Ok((timeout, short, short_packets))
}
