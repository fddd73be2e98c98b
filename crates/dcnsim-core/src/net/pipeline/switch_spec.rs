//! The `[switch]` table: what a switch has beyond its ports' queues — a shared buffer with dynamic
//! thresholds, PFC on some classes, INT stamping. Everything is off by default, and a spec without
//! `[switch]` runs exactly as before it existed.

use super::deflection::DeflectionConfig;
use super::stages::StageConfigs;
use crate::net::QueueConfigs;
use crate::spec_reader::{Section, SpecResult};
use crate::time::{from_us, Time};

#[derive(Clone, Debug, PartialEq)]
pub struct SwitchConfig {
    /// Shared buffer per switch; `None`: each port has its own queue limit (`[queue]`).
    pub buffer_bytes: Option<u64>,
    /// Dynamic threshold shift at ports of the host rate (one less per doubling of port rate).
    pub alpha_shift: u8,
    /// Alpha per port rate instead of the shift rule: (rate in b/s, alpha in units of 2^-16).
    pub alpha_by_rate: Vec<(u64, u64)>,
    /// Guaranteed bytes per (ingress port, lossless class).
    pub reserve_bytes: u64,
    /// PFC on the classes in `lossless` (bit c); 0 = no PFC.
    pub lossless: u8,
    /// `lossy_admission = "ingress"`: lossy classes (bit c) accounted to their ingress and dropped
    /// beyond its headroom, as the HPCC authors' ns-3 MMU with PFC off (`shared_buffer.rs`).
    pub ingress_lossy: u8,
    /// Classes the buffer does not account (ns-3's queue 0 in that mode: never dropped).
    pub unaccounted: u8,
    /// Headroom per (ingress port, lossless class); `None`: sized per link.
    pub headroom_bytes: Option<u64>,
    pub allow_small_headroom: bool,
    pub resume_offset_bytes: u64,
    pub deadlock_check: Time,
    /// The registered stages' configurations (`pipeline::stages`), each read by its stage.
    pub stages: StageConfigs,
    /// PB-FS CC-postcards (`pipeline::postcard`); `None` = off.
    pub postcards: Option<super::postcard::PostcardSpec>,
    /// In-order flow deflection (Dart's IOFD, `deflection.rs`); `None` = off.
    pub iofd: Option<DeflectionConfig>,
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            buffer_bytes: None,
            alpha_shift: 3,
            alpha_by_rate: Vec::new(),
            reserve_bytes: 4096,
            lossless: 0,
            ingress_lossy: 0,
            unaccounted: 0,
            headroom_bytes: None,
            allow_small_headroom: false,
            resume_offset_bytes: 3072,
            deadlock_check: from_us(100.0),
            stages: StageConfigs::default(),
            postcards: None,
            iofd: None,
        }
    }
}

impl SwitchConfig {
    /// Switches send PB-FS CC-postcards.
    pub fn pbfs(&self) -> bool {
        self.postcards.is_some()
    }

    /// Reads the `[switch]` table of the spec.
    pub fn read_table(top: &mut Section, queues: &QueueConfigs) -> SpecResult<SwitchConfig> {
        let mut sw = top.table("switch", "switch features: shared buffer, PFC, INT")?;
        let switch = SwitchConfig::read(&mut sw, queues)?;
        sw.finish()?;
        Ok(switch)
    }

    /// Reads `[switch]`, checking it against the port queues it changes.
    pub fn read(s: &mut Section, queues: &QueueConfigs) -> SpecResult<SwitchConfig> {
        let mut c = SwitchConfig::default();
        let has_buffer = c.read_buffer(s, queues)?;
        let pfc = s.bool_or(
            "pfc",
            false,
            "priority flow control: a switch pauses an ingress class that fills its share of the buffer instead of dropping (lossless classes)",
        )?;
        s.ensure(!pfc || has_buffer, "pfc", "PFC needs a shared buffer: set switch.buffer_bytes")?;
        c.read_pfc(s, queues, pfc)?;
        c.read_lossy_admission(s, queues, has_buffer, pfc)?;
        c.stages = StageConfigs::read(s, queues)?;
        c.postcards = super::postcard::PostcardSpec::read(s, queues)?;
        c.iofd = read_iofd(s)?;
        Ok(c)
    }

    /// `buffer_bytes` and `buffer_alpha_shift`; returns whether there is a buffer (or docs).
    fn read_buffer(&mut self, s: &mut Section, queues: &QueueConfigs) -> SpecResult<bool> {
        self.buffer_bytes = s.u64_opt(
            "buffer_bytes",
            "bytes",
            "a buffer shared by all ports of each switch and handed out by dynamic thresholds (HPCC's ns-3: 32 MB at 100 Gb/s); unset = per-port queue limits",
        )?;
        let has_buffer = self.buffer_bytes.is_some() || s.is_describe();
        s.ensure(
            has_buffer || !s.has("buffer_alpha_shift"),
            "buffer_alpha_shift",
            "only used with buffer_bytes (a shared buffer)",
        )?;
        let alpha_shift = s.u64_or(
            "buffer_alpha_shift",
            self.alpha_shift as u64,
            "shift",
            "dynamic threshold: a queue may hold up to (free shared buffer) >> shift at ports of the host rate (3: alpha = 1/8), one less per doubling of a port's rate",
        )?;
        s.ensure(alpha_shift <= 16, "buffer_alpha_shift", format!("must be at most 16, got {alpha_shift}"))?;
        self.alpha_shift = alpha_shift as u8;
        self.alpha_by_rate = read_alpha_by_rate(s, has_buffer)?;
        if let Some(b) = self.buffer_bytes {
            s.ensure(b > 0, "buffer_bytes", "a zero-size buffer cannot hold any packet")?;
            for (role, q) in [("to_host", &queues.to_host), ("fabric", &queues.fabric)] {
                s.ensure(
                    q.limit.is_none(),
                    "buffer_bytes",
                    format!("the shared buffer admits packets at switch ports; unset the per-port limit (queue.limit_* or queue.{role}.limit_*)"),
                )?;
                s.ensure(q.trim.is_none(), "buffer_bytes", "trimming and a shared buffer cannot be combined")?;
            }
        }
        Ok(has_buffer)
    }

    /// `lossy_admission`: per egress queue (the default) or, as the HPCC authors' ns-3 switch with
    /// PFC off, per ingress; then the highest class (0) is not accounted, as ns-3's queue 0.
    fn read_lossy_admission(
        &mut self,
        s: &mut Section,
        queues: &QueueConfigs,
        has_buffer: bool,
        pfc: bool,
    ) -> SpecResult<()> {
        const KEY: &str = "lossy_admission";
        let given = s.has(KEY);
        let mode = s.choice_or(
            KEY,
            &["egress", "ingress"],
            "egress",
            "how the shared buffer admits lossy classes: egress = a class queue joins within alpha(egress) x free; ingress = as the HPCC authors' ns-3 switch with PFC off (PAUSE frames ignored): accounted to the ingress port like a lossless class (a reserve, then shared within alpha(ingress) x free, then a headroom of 3 x rate x link delay) and dropped beyond that headroom; class 0 is then not accounted (never dropped), as ns-3's queue 0",
        )?;
        s.ensure(!given || has_buffer, KEY, "only used with buffer_bytes (a shared buffer)")?;
        s.ensure(mode == "egress" || !pfc, KEY, "\"ingress\" is for lossy fabrics: unset it with pfc = true")?;
        if mode == "ingress" {
            let n = queues.fabric.priorities.max(queues.to_host.priorities).max(1) as u32;
            let all = ((1u32 << n) - 1) as u8;
            self.unaccounted = if n >= 2 { 1 } else { 0 };
            self.ingress_lossy = all & !self.unaccounted;
        }
        Ok(())
    }

    /// The `pfc_*` keys (only with `pfc = true`).
    fn read_pfc(&mut self, s: &mut Section, queues: &QueueConfigs, pfc: bool) -> SpecResult<()> {
        for key in [
            "pfc_classes",
            "pfc_reserve_bytes",
            "pfc_headroom_bytes",
            "pfc_allow_small_headroom",
            "pfc_resume_offset_bytes",
            "pfc_deadlock_check_us",
        ] {
            s.ensure(pfc || s.is_describe() || !s.has(key), key, "only used with pfc = true")?;
        }
        let lossless = read_classes(s, queues, pfc)?;
        self.lossless = if pfc { lossless } else { 0 };
        self.reserve_bytes = s.u64_or(
            "pfc_reserve_bytes",
            self.reserve_bytes,
            "bytes",
            "bytes guaranteed to each (ingress port, lossless class), outside the shared pool",
        )?;
        self.headroom_bytes = s.u64_opt(
            "pfc_headroom_bytes",
            "bytes",
            "buffer set aside per (ingress port, lossless class) for what is in flight while a pause takes effect; unset = sized per link: rate x (delay both ways + an MTU and the pause frames on the reverse link) + 3 MTU",
        )?;
        self.allow_small_headroom = s.bool_or(
            "pfc_allow_small_headroom",
            false,
            "accept pfc_headroom_bytes below what a link needs (lossless drops then become possible and are reported as a configuration error)",
        )?;
        self.resume_offset_bytes = s.u64_or(
            "pfc_resume_offset_bytes",
            self.resume_offset_bytes,
            "bytes",
            "resume a paused pair once its shared use is this far below its threshold (or zero)",
        )?;
        let check_us = s.f64_or(
            "pfc_deadlock_check_us",
            100.0,
            "us",
            "while any class is paused, look for a deadlock (a cycle of ports that can never resume) this often; a deadlocked run stops and reports the cycle",
        )?;
        s.ensure((0.1..=1e6).contains(&check_us), "pfc_deadlock_check_us", "must be in [0.1, 1e6] us")?;
        self.deadlock_check = from_us(check_us);
        Ok(())
    }
}

/// `buffer_alpha_by_rate`: `[[rate_gbps, alpha], ...]`, one entry per port rate of the fabric.
fn read_alpha_by_rate(s: &mut Section, has_buffer: bool) -> SpecResult<Vec<(u64, u64)>> {
    const KEY: &str = "buffer_alpha_by_rate";
    let given = s.has(KEY);
    let rows = s.array_opt(
        KEY,
        "array of [rate_gbps, alpha]",
        "dynamic threshold per port rate, instead of buffer_alpha_shift's rule: a queue (or lossless ingress) of a port of rate_gbps may hold up to alpha x (free shared buffer); alone it then fills alpha / (1 + alpha) of it (alpha 1/8: 11%, 1/2: 33%); every port rate of the fabric must be listed; unset = buffer_alpha_shift",
    )?;
    s.ensure(!given || has_buffer, KEY, "only used with buffer_bytes (a shared buffer)")?;
    s.ensure(!given || !s.has("buffer_alpha_shift"), KEY, "set either buffer_alpha_shift or buffer_alpha_by_rate")?;
    let mut out: Vec<(u64, u64)> = Vec::new();
    for (i, row) in rows.into_iter().flatten().enumerate() {
        let field = format!("{KEY}[{i}]");
        let pair = row.as_array().map(|a| a.iter().map(|v| v.as_f64()).collect::<Vec<_>>());
        let Some([Some(gbps), Some(alpha)]) = pair.as_deref() else {
            return Err(s.err(&field, "expected [rate_gbps, alpha], two numbers"));
        };
        if !(gbps.is_finite() && *gbps > 0.0 && *gbps <= 1e5) {
            return Err(s.err(&field, format!("rate must be in (0, 100000] Gb/s, got {gbps}")));
        }
        if !(alpha.is_finite() && *alpha >= 1.0 / 65536.0 && *alpha <= 256.0) {
            return Err(s.err(&field, format!("alpha must be in [2^-16, 256], got {alpha}")));
        }
        let bps = (gbps * 1e9).round() as u64;
        if out.iter().any(|e| e.0 == bps) {
            return Err(s.err(&field, format!("{gbps} Gb/s is listed twice")));
        }
        out.push((bps, (alpha * 65536.0).round() as u64));
    }
    s.ensure(!given || !out.is_empty(), KEY, "list at least one [rate_gbps, alpha]")?;
    Ok(out)
}

/// `pfc_classes` as a class mask (default every class), checked against the port queues.
fn read_classes(s: &mut Section, queues: &QueueConfigs, pfc: bool) -> SpecResult<u8> {
    let priorities = queues.fabric.priorities;
    let classes =
        s.f64_list_or("pfc_classes", &[], "classes", "lossless classes (priority numbers); default: every class")?;
    let mut lossless = 0u8;
    for (i, &c) in classes.iter().enumerate() {
        s.ensure(
            c >= 0.0 && c.fract() == 0.0 && c < priorities as f64,
            &format!("pfc_classes[{i}]"),
            format!("must be a class below queue.priorities ({priorities}), got {c}"),
        )?;
        lossless |= 1 << (c as u8);
    }
    if !pfc {
        return Ok(0);
    }
    s.ensure(
        queues.nic.priorities == priorities && queues.to_host.priorities == priorities,
        "pfc",
        "PFC pauses a class on the upstream port: every port role needs the same queue.priorities",
    )?;
    s.ensure(queues.nic.limit.is_none(), "pfc", "a host NIC must not drop lossless packets: unset queue.nic.limit_*")?;
    Ok(if classes.is_empty() { ((1u16 << priorities) - 1) as u8 } else { lossless })
}

/// `iofd` and its keys (Dart's in-order flow deflection).
fn read_iofd(s: &mut Section) -> SpecResult<Option<DeflectionConfig>> {
    let on = s.bool_or(
        "iofd",
        false,
        "in-order flow deflection (Dart, Xue et al. ToN'20): a switch deflects the start packet of a short message (one its sender marked, e.g. dart's short flows) away from an egress queue above iofd_threshold_bytes and pins the message's later packets to the same port in a deflected-flow table",
    )?;
    for key in ["iofd_threshold_bytes", "iofd_table_entries", "iofd_ceiling_bytes"] {
        s.ensure(on || s.is_describe() || !s.has(key), key, "only used with iofd = true")?;
    }
    let threshold = s.u64_or(
        "iofd_threshold_bytes",
        15_000,
        "bytes",
        "deflect a start packet when its egress queue holds more than this (Dart: 15 KB, below its ECN threshold 22.5 KB)",
    )?;
    let entries =
        s.u64_or("iofd_table_entries", 8, "entries", "deflected-flow table entries per switch (Dart: an 8-entry CAM)")?;
    s.ensure((1..=1024).contains(&entries), "iofd_table_entries", format!("must be in [1, 1024], got {entries}"))?;
    let ceiling = s.u64_opt(
        "iofd_ceiling_bytes",
        "bytes",
        "deflect only while the egress queue holds at most this (a reading of Dart's 'IOFD before ECN': set it to the ECN threshold); unset = no ceiling",
    )?;
    if let Some(c) = ceiling {
        s.ensure(
            c > threshold,
            "iofd_ceiling_bytes",
            format!("must be above iofd_threshold_bytes ({threshold}), got {c}"),
        )?;
    }
    Ok(on.then_some(DeflectionConfig { threshold_bytes: threshold, entries: entries as usize, ceiling_bytes: ceiling }))
}
