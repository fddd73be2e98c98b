//! Scheduler stage: which class an egress port serves next. Paused classes (PFC) are skipped.
//!
//! - strict priority: the lowest-numbered class with a packet;
//! - weighted round robin (NDP's header/data queues): class c sends up to `weights[c]` packets per
//!   turn;
//! - deficit round robin (Shreedhar & Varghese, SIGCOMM'95): on each visit class c earns
//!   `quanta[c]` bytes of credit and sends while its head packet fits in the credit; an emptied class
//!   loses its credit. Quanta are at least one MTU, so every visit sends a packet.
//!
//! With WRR and DRR the first `strict_classes` classes are served by strict priority ahead of the
//! weighted ones (HPCC's ns-3 switches: queue 0 strict, round robin over the others).

use crate::net::port::Port;
use crate::net::queue::{QueueConfig, MAX_PRIORITIES};
use crate::spec_reader::{Section, SpecResult};

#[derive(Clone, Debug, PartialEq)]
pub enum Scheduling {
    /// Always the highest non-empty class.
    Strict,
    /// Weighted round robin: class c sends up to weights[c] packets per turn.
    Wrr(Vec<u32>),
    /// Deficit round robin: class c earns quanta[c] bytes per turn.
    Drr(Vec<u32>),
}

/// What the scheduler took off a port's queues.
#[derive(Clone, Copy, Debug)]
pub struct Dequeued {
    pub pkt: u32,
    /// Wire bytes.
    pub size: u32,
    pub is_data: bool,
    pub class: usize,
}

impl Port {
    /// Takes the next packet by the port's discipline.
    #[inline]
    pub fn pop_next(&mut self, cfg: &QueueConfig) -> Option<Dequeued> {
        if self.packets == 0 {
            return None;
        }
        let strict = cfg.strict_classes as usize;
        let c = match &cfg.scheduling {
            Scheduling::Strict => self.first_sendable(0, self.priorities() as usize)?,
            Scheduling::Wrr(w) => match self.first_strict(strict) {
                Some(c) => c,
                None => self.wrr_class(w, strict)?,
            },
            Scheduling::Drr(q) => match self.first_strict(strict) {
                Some(c) => c,
                None => self.drr_class(q, strict)?,
            },
        };
        Some(self.pop_class(c))
    }

    #[inline]
    fn first_sendable(&self, from: usize, to: usize) -> Option<usize> {
        (from..to).find(|&c| self.sendable(c))
    }

    /// The first sendable class among the `strict` ones served ahead of WRR/DRR.
    #[inline(always)]
    fn first_strict(&self, strict: usize) -> Option<usize> {
        if strict == 0 {
            return None; // the usual case, on every dequeue: no scan
        }
        self.first_sendable(0, strict)
    }

    /// Stays on the current class while it has packets and budget, else moves on (classes
    /// `first..`; starting below `first`, it walks past the strict classes, none of which is
    /// sendable here, within its `n` tries).
    #[inline]
    fn wrr_class(&mut self, w: &[u32], first: usize) -> Option<usize> {
        let n = self.priorities() as usize;
        let mut c = self.rr_class as usize;
        let mut tries = 0;
        while !(self.rr_left > 0 && self.sendable(c)) {
            tries += 1;
            if tries > n {
                return None;
            }
            c = if c + 1 >= n { first } else { c + 1 };
            self.rr_class = c as u8;
            self.rr_left = w[c];
        }
        self.rr_left -= 1;
        Some(c)
    }

    /// Deficit round robin over classes `first..`: `rr_class` is the class being visited, and
    /// `deficits` hold each class's credit.
    fn drr_class(&mut self, quanta: &[u32], first: usize) -> Option<usize> {
        let mut deficits = self.deficits.take().expect("DRR state is set up with the port");
        let found = self.drr_visit(quanta, first, &mut deficits[..]);
        self.deficits = Some(deficits);
        found
    }

    fn drr_visit(&mut self, quanta: &[u32], first: usize, deficits: &mut [u32]) -> Option<usize> {
        let n = self.priorities() as usize;
        let mut c = (self.rr_class as usize).max(first);
        // A visit ends when the head does not fit; a class with a sendable packet gets its quantum
        // on arrival, and quanta >= MTU, so at most one full turn passes before a packet goes.
        for _ in 0..=2 * n {
            if self.sendable(c) {
                let head = self.head_size(c);
                if deficits[c] >= head {
                    deficits[c] -= head;
                    if self.class_len(c) == 1 {
                        deficits[c] = 0; // the class empties: its credit does not carry over
                    }
                    self.rr_class = c as u8;
                    return Some(c);
                }
            } else if self.class_len(c) == 0 {
                deficits[c] = 0;
            }
            c = if c + 1 >= n { first } else { c + 1 };
            if self.sendable(c) {
                deficits[c] = deficits[c].saturating_add(quanta[c]);
            }
        }
        debug_assert!(!(first..n).any(|c| self.sendable(c)), "DRR found no class although one is sendable");
        None
    }
}

/// Reads the scheduling keys of a queue table: the discipline and `strict_classes`. `min_quantum`
/// is the largest packet (DRR quanta must be at least that).
pub fn read(s: &mut Section, base: &QueueConfig, priorities: u8, min_quantum: u32) -> SpecResult<(Scheduling, u8)> {
    let sched_default = match base.scheduling {
        Scheduling::Strict => "strict",
        Scheduling::Wrr(_) => "wrr",
        Scheduling::Drr(_) => "drr",
    };
    let sched = s.choice_or(
        "scheduling",
        &["strict", "wrr", "drr"],
        sched_default,
        "how classes share the link: strict priority, weighted round robin (wrr_weights), or deficit round robin (drr_quanta_bytes)",
    )?;
    let base_weights: Vec<f64> = match &base.scheduling {
        Scheduling::Wrr(w) => w.iter().map(|&x| x as f64).collect(),
        _ => vec![],
    };
    let weights = s.f64_list_or(
        "wrr_weights",
        &base_weights,
        "packets",
        "wrr: packets each class may send per turn, one entry per class (NDP: [10, 1], headers:data)",
    )?;
    let base_quanta: Vec<f64> = match &base.scheduling {
        Scheduling::Drr(q) => q.iter().map(|&x| x as f64).collect(),
        _ => vec![min_quantum as f64; priorities as usize],
    };
    let quanta = s.f64_list_or(
        "drr_quanta_bytes",
        &base_quanta,
        "bytes",
        "drr: credit each class earns per turn, one entry per class, each at least mtu_bytes; default one MTU each",
    )?;
    debug_assert!(priorities <= MAX_PRIORITIES);
    let strict = s.u64_or(
        "strict_classes",
        base.strict_classes as u64,
        "classes",
        "wrr/drr: this many classes (0, 1, ...) are served by strict priority ahead of the weighted ones",
    )?;
    s.ensure(
        strict < priorities as u64 || s.is_describe(),
        "strict_classes",
        format!("must leave at least one weighted class: below priorities ({priorities}), got {strict}"),
    )?;
    let scheduling = check(s, &sched, &weights, &quanta, priorities, min_quantum)?;
    let strict = if scheduling == Scheduling::Strict { 0 } else { strict as u8 };
    Ok((scheduling, strict))
}

/// The discipline `sched` with its weights or quanta, checked.
fn check(
    s: &mut Section,
    sched: &str,
    weights: &[f64],
    quanta: &[f64],
    priorities: u8,
    min_quantum: u32,
) -> SpecResult<Scheduling> {
    let whole = |v: &[f64], lo: f64| v.iter().all(|&w| w >= lo && w.fract() == 0.0 && w <= 1e9);
    Ok(match sched {
        "wrr" => {
            s.ensure(
                weights.len() == priorities as usize,
                "wrr_weights",
                format!("needs one weight per class ({priorities}), got {}", weights.len()),
            )?;
            s.ensure(whole(weights, 1.0), "wrr_weights", "weights must be whole numbers >= 1")?;
            Scheduling::Wrr(weights.iter().map(|&w| w as u32).collect())
        }
        "drr" => {
            s.ensure(
                quanta.len() == priorities as usize,
                "drr_quanta_bytes",
                format!("needs one quantum per class ({priorities}), got {}", quanta.len()),
            )?;
            s.ensure(
                whole(quanta, min_quantum as f64),
                "drr_quanta_bytes",
                format!("quanta must be whole numbers of bytes, at least one packet ({min_quantum} bytes)"),
            )?;
            Scheduling::Drr(quanta.iter().map(|&q| q as u32).collect())
        }
        _ => {
            s.ensure(!s.has("wrr_weights") || s.is_describe(), "wrr_weights", "only used with scheduling = \"wrr\"")?;
            s.ensure(
                !s.has("drr_quanta_bytes") || s.is_describe(),
                "drr_quanta_bytes",
                "only used with scheduling = \"drr\"",
            )?;
            s.ensure(
                !s.has("strict_classes") || s.is_describe(),
                "strict_classes",
                "only used with scheduling = \"wrr\" or \"drr\" (strict priority serves every class strictly)",
            )?;
            Scheduling::Strict
        }
    })
}
