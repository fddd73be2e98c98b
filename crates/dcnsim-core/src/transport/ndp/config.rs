//! NDP's and pHost's keys. One reader serves both names; each documents its own defaults (what
//! `dcnsim describe` prints under the protocol's scope).

use crate::engine::time::{from_us, Time};
use crate::net::packet::LoadBalancing;
use crate::scenario::reader::{Section, SpecResult};

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
    /// pHost: a token whose packet has not arrived this long after it is re-issued.
    pub token_timeout_us: f64,
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
        let token_timeout_us = if phost {
            let t = s.f64_or(
                "token_timeout_us",
                150.0,
                "us",
                "[phost] a token whose packet has not arrived this long after it was sent is issued again (pHost's \
                 recovery from drops; 150 us is about three loaded RTTs of the 432-host tree, not from the papers)",
            )?;
            s.ensure(t > 0.0 && t <= crate::limits::MAX_RTO_US, "token_timeout_us", "must be in (0, 1e7] us")?;
            t
        } else {
            0.0
        };
        Ok(NdpConfig {
            token_timeout_us,
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
        })
    }
}

/// A timeout in microseconds, at least one picosecond and at most 10 s.
fn read_us(s: &mut Section, key: &str, (default, doc): (f64, &'static str)) -> SpecResult<Time> {
    let us = s.f64_or(key, default, "us", doc)?;
    s.ensure(us > 0.0 && us <= crate::limits::MAX_RTO_US && from_us(us) > 0, key, "must be in (0, 1e7] us")?;
    Ok(from_us(us))
}
