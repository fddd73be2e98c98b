//! SIRD's keys: the buckets and thresholds in BDPs (Table 2), the two AIMD loops of the
//! per-sender buckets, the policies, priorities, credit pacing and the loss-recovery timeout.

use crate::net::packet::LoadBalancing;
use crate::spec_reader::{Section, SpecResult};
use crate::time::{from_us, Time};
use crate::transport::parts::keys::read_timeout_us;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReceiverPolicy {
    /// The message with the fewest bytes still to receive (or packets to credit, by
    /// `receiver_srpt_key`) first (the paper's evaluation).
    Srpt,
    /// Messages in turn.
    RoundRobin,
}

/// What a message's size is compared with UnschT in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnschCount {
    /// Wire bytes, headers included (the reference's `add_header_overhead(size) <= UnschT`).
    Wire,
    /// Application payload bytes.
    Payload,
}

/// How much of a message <= UnschT goes unscheduled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnschPrefix {
    /// The reference's: the whole message if its wire bytes fit in SBmax less the credit the sender
    /// already holds for that receiver (at least one full packet's worth), else as many full
    /// packets as fit there (at least one).
    Capped,
    /// The paper's text: the first min(BDP, size) bytes, rounded up to whole packets.
    Whole,
}

/// The receiver's SRPT order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SrptKey {
    /// Payload bytes still to receive (the reference's `data_bytes_expected - data_bytes_received`).
    BytesToReceive,
    /// Packets still to credit.
    PacketsToCredit,
}

/// What a sender must have besides SThr of unused credit to mark csn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CsnRequires {
    /// At least two messages with unsent data (the reference's `num_outbound() >= 2`).
    TwoMessages,
    /// Unsent data for at least two receivers.
    TwoReceivers,
}

/// B, SBmax, UnschT and SThr, in BDPs of `bdp_bytes`.
#[derive(Clone, Debug, PartialEq)]
pub struct BucketConfig {
    /// `None`: host link rate x base RTT of the run.
    pub bdp_bytes: Option<u64>,
    /// B, in BDP.
    pub budget_bdp: f64,
    /// SBmax, in BDP.
    pub sb_max_bdp: f64,
    /// UnschT, in BDP.
    pub unsch_thr_bdp: f64,
    /// SThr, in BDP.
    pub sthr_bdp: f64,
}

/// The two AIMD loops sizing each per-sender bucket (network CE and sender csn).
#[derive(Clone, Debug, PartialEq)]
pub struct LoopConfig {
    /// EWMA gain of the marked fraction in both loops.
    pub ce_gain: f64,
    /// Floor of the sender (csn) loop as a fraction of SBmax.
    pub sender_floor: f64,
    /// Floor of the network (CE) loop as a fraction of SBmax.
    pub network_floor: f64,
    /// Additive increase per window, in MTUs.
    pub additive_increase_mtu: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SirdConfig {
    pub buckets: BucketConfig,
    pub loops: LoopConfig,
    pub receiver_policy: ReceiverPolicy,
    pub unsch_thr_counts: UnschCount,
    pub unscheduled_prefix: UnschPrefix,
    pub receiver_srpt_key: SrptKey,
    pub csn_requires: CsnRequires,
    /// Share of the sender's uplink given to the receiver with the shortest message.
    pub sender_srpt_share: f64,
    pub use_priorities: bool,
    pub pace_credits: bool,
    /// Loss recovery: the silence after which a receiver asks again and a sender probes.
    pub timeout: Time,
    pub lb: LoadBalancing,
}

impl SirdConfig {
    pub fn read(s: &mut Section, lb: LoadBalancing) -> SpecResult<SirdConfig> {
        s.renamed("priorities", "use_priorities")?;
        s.renamed("rto_us", "timeout_us")?;
        let buckets = BucketConfig::read(s)?;
        let loops = LoopConfig::read(s)?;
        let policy = s.choice_or("receiver_policy", &["srpt", "round_robin"], "srpt",
            "[sird] which message a receiver credits next: the shortest remainder (receiver_srpt_key; the paper's evaluation), or in turn")?;
        let counts = s.choice_or("unsch_thr_counts", &["wire", "payload"], "wire",
            "[sird] what a message's size is compared with UnschT in: wire bytes, headers included (the authors' simulator), or payload bytes")?;
        let prefix = s.choice_or("unscheduled_prefix", &["capped", "whole"], "capped",
            "[sird] unscheduled part of a message <= UnschT: capped = whole packets within SBmax less the credit the sender already holds for that receiver, at least one (the authors' simulator); whole = the first min(BDP, size) bytes (the paper's text)")?;
        let key = s.choice_or("receiver_srpt_key", &["bytes_to_receive", "packets_to_credit"], "bytes_to_receive",
            "[sird] the receiver's SRPT order: payload bytes still to receive (the authors' simulator) or packets still to credit")?;
        let csn = s.choice_or("csn_requires", &["two_messages", "two_receivers"], "two_messages",
            "[sird] besides SThr of unused credit, a sender marks csn only with unsent data in at least two messages (the authors' simulator) or for at least two receivers")?;
        let share = s.f64_or("sender_srpt_share", 0.5, "fraction",
            "[sird] share of a sender's uplink for the receiver with its shortest message; the rest is fair-shared over receivers (section 5.4: 0.5; 0 = fair sharing only)")?;
        s.ensure((0.0..=1.0).contains(&share), "sender_srpt_share", format!("must be in [0, 1], got {share}"))?;
        let use_priorities = s.bool_or("use_priorities", true,
            "[sird] control packets and unscheduled data in priority class 0, scheduled data in class 1 (section 4.6); needs [queue] priorities = 2 to take effect")?;
        let pace_credits = s.bool_or("pace_credits", true,
            "[sird] pace credits at the receiver's link rate (section 4.5); false = send credit as soon as the buckets allow")?;
        let timeout = read_timeout_us(s, "timeout_us", 100.0,
            "[sird] loss recovery: silence after which a receiver asks for missing packets and a sender probes (Homa-style timeouts, doubling up to 64x)")?;
        s.ensure(lb != LoadBalancing::Source, "protocol",
            "SIRD does not choose source routes: set routing.load_balancing = \"spray\" (the paper's packet spraying) or \"ecmp\"")?;
        Ok(SirdConfig {
            buckets,
            loops,
            receiver_policy: if policy == "srpt" { ReceiverPolicy::Srpt } else { ReceiverPolicy::RoundRobin },
            unsch_thr_counts: if counts == "wire" { UnschCount::Wire } else { UnschCount::Payload },
            unscheduled_prefix: if prefix == "capped" { UnschPrefix::Capped } else { UnschPrefix::Whole },
            receiver_srpt_key: if key == "bytes_to_receive" {
                SrptKey::BytesToReceive
            } else {
                SrptKey::PacketsToCredit
            },
            csn_requires: if csn == "two_messages" { CsnRequires::TwoMessages } else { CsnRequires::TwoReceivers },
            sender_srpt_share: share,
            use_priorities,
            pace_credits,
            timeout: from_us(timeout),
            lb,
        })
    }
}

impl BucketConfig {
    fn read(s: &mut Section) -> SpecResult<BucketConfig> {
        let bdp = s.u64_opt(
            "bdp_bytes",
            "bytes",
            "[sird] the BDP the *_bdp parameters are multiples of; unset = host link rate x base RTT of the run \
             (the summary's bdp_bytes; ~91 KB on the paper's 100 Gb/s leaf-spine, whose Table 2 rounds it to 100 KB)",
        )?;
        if let Some(b) = bdp {
            s.ensure((1..=1 << 40).contains(&b), "bdp_bytes", format!("must be in [1, 2^40] bytes, got {b}"))?;
        }
        let budget = s.f64_or("budget_bdp", 1.5, "BDP",
            "[sird] B: the receiver's global credit bucket, credit granted but not yet received over all senders (Table 2: 1.5; section 4.2: >= 1 for line rate)")?;
        s.ensure(budget > 0.0 && budget <= 1000.0, "budget_bdp", format!("must be in (0, 1000] BDP, got {budget}"))?;
        let sb_max =
            s.f64_or("sb_max_bdp", 1.0, "BDP", "[sird] SBmax: ceiling of each per-sender bucket (section 4.2: 1)")?;
        s.ensure(
            sb_max > 0.0 && sb_max <= budget,
            "sb_max_bdp",
            format!("must be in (0, budget_bdp = {budget}] BDP, got {sb_max}"),
        )?;
        let unsch = s.f64_or("unsch_thr_bdp", 1.0, "BDP",
            "[sird] UnschT: a message up to this size sends its first min(BDP, size) bytes unscheduled; a larger one asks for credit first (Table 2: 1; 0 = every message is scheduled)")?;
        s.ensure((0.0..=1e6).contains(&unsch), "unsch_thr_bdp", format!("must be in [0, 1e6] BDP, got {unsch}"))?;
        let sthr = s.f64_or("sthr_bdp", 0.5, "BDP",
            "[sird] SThr: a sender marks csn on its data while the unused credit it holds exceeds this (Table 2: 0.5); a huge value such as 1e9 disables informed overcommitment (the paper's SThr = inf)")?;
        s.ensure(sthr >= 0.0, "sthr_bdp", format!("must be >= 0 BDP, got {sthr}"))?;
        Ok(BucketConfig {
            bdp_bytes: bdp,
            budget_bdp: budget,
            sb_max_bdp: sb_max,
            unsch_thr_bdp: unsch,
            sthr_bdp: sthr,
        })
    }
}

impl LoopConfig {
    fn read(s: &mut Section) -> SpecResult<LoopConfig> {
        let g = s.f64_or(
            "ce_gain",
            0.08,
            "",
            "[sird] EWMA gain of the marked fraction in both bucket loops (the reference's ce_new_weight)",
        )?;
        s.ensure(g > 0.0 && g <= 1.0, "ce_gain", format!("must be in (0, 1], got {g}"))?;
        let sf = s.f64_or(
            "sender_floor",
            0.1,
            "fraction of SBmax",
            "[sird] floor of the per-sender bucket's sender-congestion (csn) loop (the reference's ecn_min_mul)",
        )?;
        s.ensure(sf > 0.0 && sf <= 1.0, "sender_floor", format!("must be in (0, 1], got {sf}"))?;
        let nf = s.f64_or(
            "network_floor",
            0.03,
            "fraction of SBmax",
            "[sird] floor of the per-sender bucket's network (ECN CE) loop (the reference's ecn_min_mul_nw)",
        )?;
        s.ensure(nf > 0.0 && nf <= 1.0, "network_floor", format!("must be in (0, 1], got {nf}"))?;
        let ai = s.f64_or(
            "additive_increase_mtu",
            1.0,
            "MTU per window",
            "[sird] additive increase of both bucket loops (the reference's additive_incr_mul)",
        )?;
        s.ensure(ai > 0.0 && ai <= 1000.0, "additive_increase_mtu", format!("must be in (0, 1000], got {ai}"))?;
        Ok(LoopConfig { ce_gain: g, sender_floor: sf, network_floor: nf, additive_increase_mtu: ai })
    }
}
