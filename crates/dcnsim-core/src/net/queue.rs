//! The configuration of an egress port's pipeline (`net::pipeline`), per port role, and its spec
//! table: priority classes, admission (a drop-tail limit in bytes or packets shared by the classes,
//! or NDP trimming; a switch's shared buffer is configured in `[switch]`), ECN marking, scheduling.
//!
//! Occupancy counts the packets waiting in the port's queues, not the one being serialized.

use crate::net::pipeline::{marking, scheduler};
use crate::spec_reader::{Section, SpecResult};

pub use crate::limits::MAX_PRIORITIES;
pub use crate::net::pipeline::marking::{Ecn, EcnAt};
pub use crate::net::pipeline::scheduler::Scheduling;

/// A threshold measured either in bytes or in packets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Amount {
    Bytes(u64),
    Packets(u64),
}

impl Amount {
    /// The occupancy measure this threshold is in.
    #[inline]
    pub fn of(self, bytes: u64, packets: u64) -> u64 {
        match self {
            Amount::Bytes(_) => bytes,
            Amount::Packets(_) => packets,
        }
    }

    #[inline]
    pub fn value(self) -> u64 {
        match self {
            Amount::Bytes(v) | Amount::Packets(v) => v,
        }
    }
}

/// NDP-style payload trimming (Handley et al., SIGCOMM'17, section 3.1; details as in htsim's
/// CompositeQueue). Data packets queue in their class, up to the data limit, which counts the data
/// packet being serialized. A data packet arriving to a full data queue is trimmed to a header with
/// probability 1/2; otherwise the packet at the tail of the data queue is trimmed and the arrival
/// admitted (breaking phase effects). Headers, and every non-data packet, go to class 0. When class
/// 0 is over its own limit the header is returned to its sender (once), or dropped.
///
/// With `cut_payload`, the naive trimming the NDP paper's Fig. 2 compares against (CP, Cheng et
/// al., NSDI'14; the NDP authors' `CutPayloadQueue`): one FIFO for everything; a data packet that
/// would take it over the data limit is cut to its header, which queues behind the data; a packet
/// that would take it over `header_limit_bytes` (then the total limit) is dropped. No header
/// priority, no random tail trim, no return to sender.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trim {
    pub header_limit_bytes: u64,
    pub bounce: bool,
    /// Wire size of a trimmed header.
    pub header_bytes: u32,
    pub cut_payload: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct QueueConfig {
    /// Priority classes, 1..=8; a packet's `prio` picks its class (clamped to the lowest).
    pub priorities: u8,
    pub scheduling: Scheduling,
    /// With trimming, the limit of the data queue (not a drop threshold).
    pub trim: Option<Trim>,
    /// Admission limit on the total occupancy; `None` is an infinite buffer.
    pub limit: Option<Amount>,
    pub ecn: Ecn,
    pub ecn_at: EcnAt,
    /// WRR/DRR: classes below this are served by strict priority first.
    pub strict_classes: u8,
    /// Admission by the switch's shared buffer (set from `[switch] buffer_bytes`, switch ports only).
    pub shared_buffer: bool,
}

impl QueueConfig {
    pub fn infinite() -> QueueConfig {
        QueueConfig {
            priorities: 1,
            scheduling: Scheduling::Strict,
            trim: None,
            limit: None,
            ecn: Ecn::None,
            ecn_at: EcnAt::Enqueue,
            strict_classes: 0,
            shared_buffer: false,
        }
    }

    /// Reads a queue table. `base` supplies the defaults (for override tables); `mtu` and
    /// `header_bytes` (wire size of a control packet) size the trimming defaults.
    pub fn read(s: &mut Section, base: &QueueConfig, mtu: u32, header_bytes: u32) -> SpecResult<QueueConfig> {
        let priorities = s.u64_or(
            "priorities",
            base.priorities as u64,
            "classes",
            "strict-priority classes per port (1-8); a packet's priority 0 is served first",
        )?;
        s.ensure((1..=MAX_PRIORITIES as u64).contains(&priorities), "priorities", "must be between 1 and 8")?;

        let limit = read_limit(s, base, mtu)?;

        let (ecn, ecn_at) = marking::read(s, base)?;
        let (scheduling, strict_classes) = scheduler::read(s, base, priorities as u8, mtu.max(header_bytes))?;

        let trim = read_trim(s, base, limit, priorities, mtu, header_bytes)?;
        Ok(QueueConfig {
            priorities: priorities as u8,
            scheduling,
            trim,
            limit,
            ecn,
            ecn_at,
            strict_classes,
            shared_buffer: base.shared_buffer,
        })
    }
}

/// The admission limit, this table's or `base`'s: a buffer must hold at least one full packet.
fn read_limit(s: &mut Section, base: &QueueConfig, mtu: u32) -> SpecResult<Option<Amount>> {
    let limit = read_amount(s, "limit", "admission limit (drop-tail); unset = infinite buffer")?;
    let limit = limit.or(base.limit);
    if let Some(l) = limit {
        let key = if matches!(l, Amount::Packets(_)) { "limit_packets" } else { "limit_bytes" };
        s.ensure(l.value() > 0, key, "a zero-size buffer cannot hold any packet")?;
        // A packet is admitted if it fits beside what waits, so a buffer under one full packet
        // drops (or trims) every full packet, even at an idle port.
        if let Amount::Bytes(b) = l {
            s.ensure(
                b >= mtu as u64,
                "limit_bytes",
                format!(
                    "{b} bytes cannot hold one full packet (mtu_bytes = {mtu}): every data packet would be dropped"
                ),
            )?;
        }
    }
    Ok(limit)
}

/// NDP trimming (`trim`, `header_limit_bytes`, `bounce`): needs a data limit and a header class.
fn read_trim(
    s: &mut Section,
    base: &QueueConfig,
    limit: Option<Amount>,
    priorities: u64,
    mtu: u32,
    header_bytes: u32,
) -> SpecResult<Option<Trim>> {
    let trim_on = s.bool_or(
        "trim",
        base.trim.is_some(),
        "NDP payload trimming: a full data queue trims packets to headers instead of dropping them",
    )?;
    let hl = s.u64_opt(
        "header_limit_bytes",
        "bytes",
        "trim: limit of the header queue (class 0); default twice the data limit in bytes, as htsim",
    )?;
    let mode = s.choice_or(
        "trim_mode",
        &["ndp", "cut_payload"],
        if base.trim.is_some_and(|t| t.cut_payload) { "cut_payload" } else { "ndp" },
        "trim: ndp = headers in class 0 ahead of data, random tail trim (NDP); cut_payload = CP, the naive \
         trimming of the NDP paper's Fig. 2: one FIFO, a data packet over the data limit is cut to a header \
         queued behind the data, header_limit_bytes limits the whole queue (drops beyond it)",
    )?;
    let cut_payload = mode == "cut_payload";
    let bounce = s.bool_or(
        "bounce",
        base.trim.is_none_or(|t| t.bounce) && !cut_payload,
        "trim: return a header to its sender when the header queue is full (else drop it)",
    )?;
    if trim_on {
        s.ensure(!(cut_payload && bounce), "bounce", "trim_mode = \"cut_payload\" drops what it cannot queue")?;
        let Some(limit) = limit else {
            return Err(s.err("trim", "trimming needs a data queue limit: set limit_packets or limit_bytes"));
        };
        s.ensure(
            priorities >= 2 || cut_payload,
            "priorities",
            "trimming needs at least 2 classes: headers in class 0, data below",
        )?;
        let data_bytes = match limit {
            Amount::Bytes(b) => b,
            Amount::Packets(p) => p * mtu as u64,
        };
        let header_limit_bytes = hl.or(base.trim.map(|t| t.header_limit_bytes)).unwrap_or(2 * data_bytes);
        s.ensure(
            header_limit_bytes >= header_bytes as u64,
            "header_limit_bytes",
            format!(
                "{header_limit_bytes} bytes cannot hold one header ({header_bytes} bytes): every header would be lost"
            ),
        )?;
        Ok(Some(Trim { header_limit_bytes, bounce, header_bytes, cut_payload }))
    } else {
        s.ensure(hl.is_none() || s.is_describe(), "header_limit_bytes", "only used with trim = true")?;
        s.ensure(!cut_payload || s.is_describe(), "trim_mode", "only used with trim = true")?;
        Ok(None)
    }
}

/// Reads `<stem>_bytes` or `<stem>_packets` (at most one of them).
pub(crate) fn read_amount(s: &mut Section, stem: &str, doc: &'static str) -> SpecResult<Option<Amount>> {
    let kb = format!("{stem}_bytes");
    let kp = format!("{stem}_packets");
    let b = s.u64_opt(&kb, "bytes", doc)?;
    let p = s.u64_opt(&kp, "packets", doc)?;
    match (b, p) {
        (Some(_), Some(_)) => Err(s.err(&kp, format!("set either {kb} or {kp}, not both"))),
        (Some(v), None) => Ok(Some(Amount::Bytes(v))),
        (None, Some(v)) => Ok(Some(Amount::Packets(v))),
        (None, None) => Ok(None),
    }
}
