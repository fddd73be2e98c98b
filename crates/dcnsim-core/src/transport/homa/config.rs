//! Homa's keys: RTTbytes, the priority levels and their split, the overcommitment degree, grant
//! pacing and the loss-recovery timeout. Defaults are the Homa simulator's (homaTransportConfig.ini)
//! scaled as the SIRD paper's port runs it: 8 levels, 7 of them scheduled, overcommitment 7.

use crate::net::packet::LoadBalancing;
use crate::spec_reader::{Section, SpecResult};
use crate::time::{from_us, Time};
use crate::transport::parts::keys::read_timeout_us;

#[derive(Clone, Debug, PartialEq)]
pub struct HomaConfig {
    /// RTTbytes: unscheduled bytes per message and granted-but-not-received bytes per scheduled
    /// message. `None`: host link rate x base RTT of the run.
    pub rtt_bytes: Option<u64>,
    /// Network priority levels Homa uses (classes 0..levels, 0 highest).
    pub levels: u8,
    /// Of those, the lowest `scheduled_levels` carry scheduled data; the rest unscheduled data.
    /// `None`: split by the workload's unscheduled share of bytes ([`split_levels`]).
    pub scheduled_levels: Option<u8>,
    /// Overcommitment degree k: messages a receiver keeps granted at once.
    pub overcommitment: u32,
    /// Explicit unscheduled cut-offs (message sizes, one per unscheduled level but the last);
    /// `None`: computed from the workload's size distribution.
    pub cutoffs_bytes: Option<Vec<u64>>,
    pub pace_grants: bool,
    /// Silence after which a receiver sends RESEND and a sender probes.
    pub timeout: Time,
    pub lb: LoadBalancing,
}

impl HomaConfig {
    pub fn read(s: &mut Section, lb: LoadBalancing) -> SpecResult<HomaConfig> {
        let rtt = s.u64_opt("rtt_bytes", "bytes",
            "[homa] RTTbytes: each message sends this many wire bytes unscheduled, and a receiver keeps this many granted but not received per scheduled message; unset = host link rate x base RTT of the run (the simulator: 10,000 B at 10 Gb/s; the SIRD paper's port: 100,000 B at 100 Gb/s)")?;
        if let Some(r) = rtt {
            s.ensure((1..=1 << 40).contains(&r), "rtt_bytes", format!("must be in [1, 2^40] bytes, got {r}"))?;
        }
        let levels = s.u64_or("priority_levels", 8, "levels",
            "[homa] network priority levels Homa uses, classes 0 (highest) to priority_levels - 1; needs [queue] priorities >= this (the paper: 8)")?;
        s.ensure((2..=8).contains(&levels), "priority_levels", format!("must be in [2, 8], got {levels}"))?;
        let k = s.u64_or("overcommitment", 7, "messages",
            "[homa] overcommitment degree k: a receiver grants to the k messages with the fewest bytes left (the simulator per workload: W1 1, W2 3, W3 4, W4-W5 7; the SIRD paper's port: 7)")?;
        s.ensure((1..=1024).contains(&k), "overcommitment", format!("must be in [1, 1024], got {k}"))?;
        let sched = s.u64_opt("scheduled_levels", "levels",
            "[homa] of the priority levels, how many (the lowest) carry scheduled data; the rest carry unscheduled data; unset = in proportion to the share of the workload's bytes that go scheduled (section 3.4; each kind keeps at least one level), or min(overcommitment, priority_levels - 1) without a size distribution")?;
        if let Some(n) = sched {
            s.ensure(
                (1..levels).contains(&n),
                "scheduled_levels",
                format!(
                    "must be in [1, priority_levels - 1 = {}] so that both kinds of data have a level, got {n}",
                    levels - 1
                ),
            )?;
        }
        let cutoffs = Self::read_cutoffs(s, levels, sched)?;
        let pace = s.bool_or("pace_grants", true,
            "[homa] pace grants at the receiver's link rate (one per packet time of the data granted, as the simulator's grant pacer); false = grant on every arrival")?;
        let timeout = read_timeout_us(s, "timeout_us", 1000.0,
            "[homa] loss recovery: silence after which a receiver sends RESEND for granted data that has not arrived and a sender probes (doubling up to 64x); the simulator has no loss")?;
        s.ensure(lb != LoadBalancing::Source, "protocol",
            "Homa does not choose source routes: set routing.load_balancing = \"spray\" (the SIRD paper's runs) or \"ecmp\"")?;
        Ok(HomaConfig {
            rtt_bytes: rtt,
            levels: levels as u8,
            scheduled_levels: sched.map(|n| n as u8),
            overcommitment: k as u32,
            cutoffs_bytes: cutoffs,
            pace_grants: pace,
            timeout: from_us(timeout),
            lb,
        })
    }

    /// Explicit cut-offs need an explicit split (their count is the unscheduled levels less one).
    fn read_cutoffs(s: &mut Section, levels: u64, sched: Option<u64>) -> SpecResult<Option<Vec<u64>>> {
        if !s.has("unscheduled_cutoffs_bytes") && !s.is_describe() {
            return Ok(None);
        }
        let c = s.u64_list("unscheduled_cutoffs_bytes", "bytes",
            "[homa] message sizes separating the unscheduled levels (ascending, one fewer than the unscheduled levels): a message of size <= c[i] sends its unscheduled bytes at level i; unset = computed from the workload's size distribution so each level carries an equal share of unscheduled bytes (the simulator's STATIC_FROM_CBF)")?;
        if s.is_describe() {
            return Ok(None);
        }
        let Some(sched) = sched else {
            let why = "needs scheduled_levels set (the cut-offs are one fewer than the unscheduled levels)";
            return Err(s.err("unscheduled_cutoffs_bytes", why));
        };
        let unscheduled = levels - sched;
        s.ensure(
            c.len() as u64 + 1 == unscheduled,
            "unscheduled_cutoffs_bytes",
            format!("needs {} sizes (the unscheduled levels less one), got {}", unscheduled - 1, c.len()),
        )?;
        s.ensure(c.windows(2).all(|w| w[0] < w[1]), "unscheduled_cutoffs_bytes", "sizes must be strictly ascending")?;
        Ok(Some(c))
    }
}

/// (unscheduled, scheduled) levels of `levels`: `scheduled` if given; else in proportion to the
/// unscheduled share of bytes `unscheduled_share` (Homa section 3.4), each kind at least one level;
/// without a share, `overcommitment` scheduled levels (at most `levels - 1`).
pub fn split_levels(
    levels: u8,
    scheduled: Option<u8>,
    overcommitment: u32,
    unscheduled_share: Option<f64>,
) -> (u8, u8) {
    let sched = match (scheduled, unscheduled_share) {
        (Some(n), _) => n,
        (None, Some(f)) => levels - ((f * levels as f64).round() as u8).clamp(1, levels - 1),
        (None, None) => overcommitment.min(levels as u32 - 1) as u8,
    };
    debug_assert!(sched >= 1 && sched < levels);
    (levels - sched, sched)
}
