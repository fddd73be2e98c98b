//! dcPIM's keys, with the defaults of the authors' simulator (Terabit-Ethernet/dcPIM,
//! `simulator/py/load_100Gbps/load.py`, `conf_str_pim`): r = 4 rounds, k = 4 channels, round =
//! 1.3 control-packet RTTs (beta), data phase = 1 x the matching phase (alpha), SRPT in the first
//! round, flows of at most 1 BDP sent unscheduled, a token window of 1 BDP.

use crate::net::packet::LoadBalancing;
use crate::spec_reader::{Section, SpecResult};
use crate::time::{from_us, Time};
use crate::transport::parts::keys::check_timeout_us;

/// Most channels per host and rounds per epoch (link timers pack the channel index in 4 bits).
pub const MAX_CHANNELS: u64 = 16;
pub const MAX_ROUNDS: u64 = 16;

/// Which class a data packet goes in (control packets are always in class 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataPriorities {
    /// Short flows' data in class 1, long flows' in class 2 (the paper's and the SIRD paper's
    /// three levels).
    ShortLong,
    /// Classes 1-6 by flow size in powers of 7 packets: at most 7 packets in 1, 49 in 2, ... (the
    /// authors' simulator, `packet_priority`, on pFabric-style priority queues).
    BySize,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DcpimConfig {
    /// r: matching rounds per epoch (`pim_iter_limit`).
    pub rounds: u32,
    /// k: channels per host link; a host is matched to up to k peers, each channel 1/k of the link.
    pub channels: u32,
    /// beta: a round lasts this many control-packet RTTs of the fabric's longest host pair.
    pub round_length_crtts: f64,
    /// alpha: the data phase of an epoch lasts this many matching phases.
    pub data_phase_ratio: f64,
    /// Rounds (from the first) in which grants and accepts pick the smallest flow; later ones pick
    /// at random (`pim_select_min_iters`).
    pub srpt_rounds: u32,
    /// Flows of at most this many BDPs (in packets) are sent whole at once (`token_initial`).
    pub short_flow_bdp: f64,
    /// Tokens outstanding per flow on all k channels, in BDPs (`token_window`).
    pub token_window_bdp: f64,
    /// A flow whose token window is full gets tokens again after this many BDP transmission times
    /// without one (`token_window_timeout`).
    pub token_window_timeout_bdp: f64,
    /// After every missing packet of a flow was tokened once, the receiver waits this many BDP
    /// transmission times before tokening them again (`token_resend_timeout`).
    pub token_resend_timeout_bdp: f64,
    /// `None`: host link rate x base RTT of the longest host pair.
    pub bdp_bytes: Option<u64>,
    pub use_priorities: bool,
    pub data_priorities: DataPriorities,
    /// Sender probe (RTS again) after this silence; `None` = four epochs.
    pub timeout: Option<Time>,
    pub lb: LoadBalancing,
}

impl DcpimConfig {
    pub fn read(s: &mut Section, lb: LoadBalancing) -> SpecResult<DcpimConfig> {
        let rounds = s.u64_or(
            "rounds",
            4,
            "",
            "[dcpim] r: matching rounds (request, grant, accept) per epoch (the authors' simulator: 4)",
        )?;
        s.ensure((1..=MAX_ROUNDS).contains(&rounds), "rounds", format!("must be in 1..{MAX_ROUNDS}, got {rounds}"))?;
        let channels = s.u64_or("channels", 4, "", "[dcpim] k: channels per host link; a host is matched to up to k peers per epoch, each channel carrying 1/k of the link rate (the authors' simulator: 4)")?;
        s.ensure(
            (1..=MAX_CHANNELS).contains(&channels),
            "channels",
            format!("must be in 1..{MAX_CHANNELS}, got {channels}"),
        )?;
        let beta = s.f64_or("round_length_crtts", 1.3, "control-packet RTTs", "[dcpim] beta: length of a matching round in control-packet RTTs of the fabric's longest host pair (the authors' simulator: 1.3)")?;
        s.ensure((0.5..=100.0).contains(&beta), "round_length_crtts", format!("must be in [0.5, 100], got {beta}"))?;
        let alpha = s.f64_or("data_phase_ratio", 1.0, "matching phases", "[dcpim] alpha: length of an epoch's data phase in matching phases (r rounds); the next epoch's matching runs during it (the authors' simulator: 1)")?;
        s.ensure(
            (1.0..=100.0).contains(&alpha),
            "data_phase_ratio",
            format!("must be in [1, 100] (matchings of successive epochs may not overlap), got {alpha}"),
        )?;
        let srpt = s.u64_or("srpt_rounds", 1, "", "[dcpim] rounds, from the first, in which senders grant and receivers accept the smallest flow; later rounds choose at random (the authors' simulator: 1)")?;
        s.ensure(srpt <= rounds, "srpt_rounds", format!("must be at most rounds = {rounds}, got {srpt}"))?;
        let short = s.f64_or("short_flow_bdp", 1.0, "BDP", "[dcpim] flows of at most this many BDPs (counted in packets) skip matching and are sent whole at once at high priority (the authors' simulator: 1)")?;
        s.ensure((0.0..=1e6).contains(&short), "short_flow_bdp", format!("must be in [0, 1e6] BDP, got {short}"))?;
        let window = s.f64_or("token_window_bdp", 1.0, "BDP", "[dcpim] tokens a receiver keeps outstanding per flow over all k channels, in BDPs (1/k of it per channel matched)")?;
        s.ensure(
            window > 0.0 && window <= 1000.0,
            "token_window_bdp",
            format!("must be in (0, 1000] BDP, got {window}"),
        )?;
        let wto = s.f64_or("token_window_timeout_bdp", 1.1, "BDP transmission times", "[dcpim] a flow whose token window is full gets tokens again after this long without one, in BDP transmission times (the authors' simulator: 1.1)")?;
        s.ensure(wto > 0.0 && wto <= 1e6, "token_window_timeout_bdp", format!("must be in (0, 1e6], got {wto}"))?;
        let rto = s.f64_or("token_resend_timeout_bdp", 1.0, "BDP transmission times", "[dcpim] once every missing packet of a flow was tokened, the receiver waits this long before tokening the still missing ones again, in BDP transmission times (the authors' simulator: 1)")?;
        s.ensure(rto > 0.0 && rto <= 1e6, "token_resend_timeout_bdp", format!("must be in (0, 1e6], got {rto}"))?;
        let bdp = s.u64_opt("bdp_bytes", "bytes", "[dcpim] the BDP the *_bdp keys are multiples of; unset = host link rate x base RTT of the longest host pair (the summary's bdp_bytes)")?;
        if let Some(b) = bdp {
            s.ensure((1..=1 << 40).contains(&b), "bdp_bytes", format!("must be in [1, 2^40] bytes, got {b}"))?;
        }
        let use_priorities = s.bool_or("use_priorities", true, "[dcpim] three priority classes: control packets 0, short flows' data 1, matched (token) data 2; needs [queue] priorities = 3 to take effect")?;
        let data_prio = s.choice_or("data_priorities", &["short_long", "by_size"], "short_long", "[dcpim] classes of data packets: short_long = short flows' data in class 1, long flows' in 2 (the paper's three levels); by_size = classes 1-6 by flow size in powers of 7 packets, as the authors' simulator (needs [queue] priorities = 7)")?;
        let timeout = s.f64_opt("timeout_us", "us", "[dcpim] loss recovery: a sender that hears nothing of a flow for this long sends its RTS again (doubling up to 64x); unset = four epochs")?;
        if let Some(t) = timeout {
            check_timeout_us(s, "timeout_us", t)?;
        }
        s.ensure(lb != LoadBalancing::Source, "protocol", "dcPIM does not choose source routes: set routing.load_balancing = \"spray\" (the paper's per-packet spraying) or \"ecmp\"")?;
        Ok(DcpimConfig {
            rounds: rounds as u32,
            channels: channels as u32,
            round_length_crtts: beta,
            data_phase_ratio: alpha,
            srpt_rounds: srpt as u32,
            short_flow_bdp: short,
            token_window_bdp: window,
            token_window_timeout_bdp: wto,
            token_resend_timeout_bdp: rto,
            bdp_bytes: bdp,
            use_priorities,
            data_priorities: if data_prio == "by_size" { DataPriorities::BySize } else { DataPriorities::ShortLong },
            timeout: timeout.map(from_us),
            lb,
        })
    }
}
