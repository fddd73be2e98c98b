//! NDP's and pHost's keys. One reader serves both names; each documents its own defaults (what
//! `dcnsim describe` prints under the protocol's scope).

use crate::net::packet::LoadBalancing;
use crate::spec_reader::{Section, SpecResult};
use crate::time::{from_us, Time};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PullOrder {
    /// Round robin over connections (NDP's default).
    Fair,
    /// The connection with the fewest packets left first (pHost's default).
    Srpt,
}

#[derive(Clone, Debug, PartialEq)]
pub struct NdpConfig {
    /// pHost rather than NDP (only changes defaults and the protocol name).
    pub phost: bool,
    pub initial_window_packets: u64,
    pub pull_order: PullOrder,
    /// Pull rate as a fraction of the receiver's link rate.
    pub pull_rate_fraction: f64,
    pub min_rto: Time,
    pub initial_rto: Time,
    pub path_penalty: bool,
    pub return_to_sender_resend: bool,
    pub prioritize_senders: Vec<u32>,
    pub lb: LoadBalancing,
    /// NDP: a queued pull takes the path of the ACK or NACK that owes it (htsim), so it never
    /// overtakes that feedback; else it is sprayed on its own.
    pub pull_follows_feedback: bool,
    /// pHost: tokens a flow may have out beyond the highest one its data echoed.
    pub token_window_packets: u64,
    /// pHost: after this many packet times without a token, a full window is presumed lost.
    pub token_window_timeout_packet_times: f64,
    /// pHost: pause, in packet times, after a round of tokens has covered a flow, before the next
    /// round over its missing packets.
    pub token_resend_timeout_packet_times: f64,
}

/// A protocol's defaults and the descriptions that state them.
struct Defaults {
    initial_window_packets: (u64, &'static str),
    pull_order: (&'static str, &'static str),
    pull_rate_fraction: &'static str,
    min_rto_us: (f64, &'static str),
    initial_rto_us: (f64, &'static str),
    path_penalty: (bool, &'static str),
    return_to_sender_resend: &'static str,
    prioritize_senders: &'static str,
}

const NDP: Defaults = Defaults {
    initial_window_packets: (30, "[ndp] packets sent at line rate before the first pull (the paper's simulations: 30)"),
    pull_order: (
        "fair",
        "[ndp] which connection a receiver pulls next: fair = round robin (NDP), srpt = fewest packets left first",
    ),
    pull_rate_fraction: "[ndp] pulls are paced at this fraction of the receiver's link rate \
                         (one pull per MTU + control packet time)",
    min_rto_us: (5000.0, "[ndp] floor of the retransmission timeout, which only true losses need (htsim: 5 ms)"),
    initial_rto_us: (20000.0, "[ndp] retransmission timeout before the first RTT sample (htsim: 20 ms)"),
    path_penalty: (
        true,
        "[ndp] leave paths whose NACK ratio (returns and RTO losses weigh 3) is an outlier out of use \
         (section 3.2.3); needs source routing",
    ),
    return_to_sender_resend: "[ndp] resend a returned header at once when no more pulls are expected or the path \
                              looks bad (else it waits for a pull)",
    prioritize_senders: "[ndp] receivers serve pulls for flows from these senders first (strict priority)",
};

const PHOST: Defaults = Defaults {
    initial_window_packets: (8, "[phost] packets sent unscheduled at line rate before the first token (1 BDP)"),
    pull_order: (
        "srpt",
        "[phost] which connection a receiver sends a token next: srpt = fewest packets left first (pHost), \
         fair = round robin",
    ),
    pull_rate_fraction: "[phost] tokens are paced at this fraction of the receiver's link rate \
                         (one token per MTU + control packet time)",
    min_rto_us: (
        1000.0,
        "[phost] floor of the sender's timeout, which only resends the request while the receiver has not \
         answered (drops are recovered by the receiver's token timeout)",
    ),
    initial_rto_us: (
        1000.0,
        "[phost] timeout before the receiver has answered: the sender then sends a request (pHost's RTS), \
         jittered +-25% and doubled per timeout (not from the papers: the floor, as no RTT sample exists yet)",
    ),
    path_penalty: (
        false,
        "[phost] leave outlier paths out of use as NDP does (off: pHost sprays blindly); needs source routing",
    ),
    return_to_sender_resend: "[phost] with trimming switches only: resend a returned header at once as NDP does",
    prioritize_senders: "[phost] receivers serve tokens for flows from these senders first (strict priority)",
};

const PULL_FOLLOWS_FEEDBACK_DOC: &str =
    "[ndp] a queued pull takes the path of the ACK or NACK that owes it, as htsim's pacer sends a copy of that \
     packet, so it cannot overtake it (a pull that arrives before its NACK finds nothing to resend and the \
     packet waits for the RTO); false: pulls are sprayed on their own";

impl NdpConfig {
    pub fn read(s: &mut Section, lb: LoadBalancing, phost: bool) -> SpecResult<NdpConfig> {
        let d = if phost { &PHOST } else { &NDP };
        s.renamed("pull_rate", "pull_rate_fraction")?;
        let (iw_default, iw_doc) = d.initial_window_packets;
        let iw = s.u64_or("initial_window_packets", iw_default, "packets", iw_doc)?;
        s.ensure((1..=100_000).contains(&iw), "initial_window_packets", "must be in [1, 100000]")?;
        let order = s.choice_or("pull_order", &["fair", "srpt"], d.pull_order.0, d.pull_order.1)?;
        let pull_rate = s.f64_or("pull_rate_fraction", 1.0, "fraction", d.pull_rate_fraction)?;
        s.ensure(pull_rate > 0.0 && pull_rate <= 10.0, "pull_rate_fraction", "must be in (0, 10]")?;
        let min_rto = read_us(s, "min_rto_us", d.min_rto_us)?;
        let initial_rto = read_us(s, "initial_rto_us", d.initial_rto_us)?;
        let path_penalty = s.bool_or("path_penalty", d.path_penalty.0, d.path_penalty.1)?;
        let rts = s.bool_or("return_to_sender_resend", true, d.return_to_sender_resend)?;
        let prio: Vec<f64> = s.f64_list_or("prioritize_senders", &[], "hosts", d.prioritize_senders)?;
        s.ensure(prio.iter().all(|&h| h >= 0.0 && h.fract() == 0.0), "prioritize_senders", "must be host ids")?;
        s.ensure(
            lb != LoadBalancing::Ecmp || s.is_describe(),
            "protocol",
            "NDP and pHost spray every packet: set routing.load_balancing = \"source\" or \"spray\"",
        )?;
        let tokens = if phost { read_tokens(s)? } else { (0, 0.0, 0.0) };
        let pull_follows_feedback = !phost && s.bool_or("pull_follows_feedback", true, PULL_FOLLOWS_FEEDBACK_DOC)?;
        Ok(NdpConfig {
            token_window_packets: tokens.0,
            token_window_timeout_packet_times: tokens.1,
            token_resend_timeout_packet_times: tokens.2,
            phost,
            initial_window_packets: iw,
            pull_order: if order == "srpt" { PullOrder::Srpt } else { PullOrder::Fair },
            pull_rate_fraction: pull_rate,
            min_rto,
            initial_rto,
            path_penalty,
            return_to_sender_resend: rts,
            prioritize_senders: prio.iter().map(|&h| h as u32).collect(),
            lb,
            pull_follows_feedback,
        })
    }
}

/// pHost's token keys: window, window timeout and resend pause, the timeouts in packet times of
/// the receiver's pacer (MTU + control packet). Defaults are the pHost authors' simulator's
/// (`capability_window` 8, `capability_window_timeout` 25, `capability_resend_timeout` 9 packet
/// times), whose BDP of 8 packets matches the NDP paper's tree with 9 KB packets.
fn read_tokens(s: &mut Section) -> SpecResult<(u64, f64, f64)> {
    s.renamed("token_timeout_us", "token_resend_timeout_packet_times")?;
    let window = s.u64_or(
        "token_window_packets",
        8,
        "packets",
        "[phost] a flow with this many tokens out beyond the highest its data packets echoed gets no token (the \
         pacer serves the next flow): one BDP (the pHost authors' simulator: 8)",
    )?;
    s.ensure((1..=100_000).contains(&window), "token_window_packets", "must be in [1, 100000]")?;
    let mut times = |key: &str, default: f64, doc: &'static str| -> SpecResult<f64> {
        let v = s.f64_or(key, default, "packet times", doc)?;
        s.ensure(v > 0.0 && v <= 1e6, key, "must be in (0, 1e6] packet times")?;
        Ok(v)
    };
    let window_timeout = times(
        "token_window_timeout_packet_times",
        25.0,
        "[phost] after this many packet times (MTU + control packet at the receiver's rate) without a token, a \
         flow's full token window is presumed lost and slides by one (the pHost authors' simulator: 25)",
    )?;
    let resend = times(
        "token_resend_timeout_packet_times",
        9.0,
        "[phost] once a round of tokens has named every packet of a flow, the receiver waits this many packet \
         times before a round over the packets still missing (recovery from drops; the pHost authors' \
         simulator: 9)",
    )?;
    Ok((window, window_timeout, resend))
}

/// A timeout in microseconds, at least one picosecond and at most 10 s.
fn read_us(s: &mut Section, key: &str, (default, doc): (f64, &'static str)) -> SpecResult<Time> {
    let us = s.f64_or(key, default, "us", doc)?;
    s.ensure(us > 0.0 && us <= crate::limits::MAX_RTO_US && from_us(us) > 0, key, "must be in (0, 1e7] us")?;
    Ok(from_us(us))
}
