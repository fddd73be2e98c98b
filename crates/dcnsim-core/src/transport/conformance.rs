//! What the conformance suite (`crates/dcnsim-core/tests/conformance.rs`) must know to run a
//! protocol, and what the protocol promises there. Every registered protocol declares one
//! ([`super::Protocol::conformance`]), so a new protocol is held to the whole suite — lone flows
//! against the exact ideal, an incast into small buffers, determinism, counters, stray packets,
//! random loss, and packet conservation in every run — without the suite being written again.

/// One protocol's conformance setup.
#[derive(Clone, Copy, Debug)]
pub struct Conformance {
    /// Spec text (TOML) merged key by key over every spec the suite builds (this text wins): the
    /// queue features (priority classes, trimming, ECN), the routing mode and the `[transport]`
    /// keys the protocol needs to run as its paper intends. The suite picks the topology, the
    /// workload and, for its incast, a small `queue.limit_packets` (kept if this text sets one).
    pub spec: &'static str,
    /// What a lone flow's FCT is against the exact ideal (`ideal_fct_ps`).
    pub lone_flow: LoneFlow,
    /// Cases the protocol does not pass, each with the documented reason. The suite reports every
    /// exemption by protocol and case, and fails if an exempt case passes (the exemption is stale).
    pub exempt: &'static [(Case, &'static str)],
}

/// A lone flow's completion time in an empty network.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LoneFlow {
    /// Equal to the ideal to the picosecond, at every size: data leaves at line rate from the
    /// first instant and the window (or the pulls) never let the sender's link idle.
    Exact,
    /// Flows of at most `exact_up_to_bdp` BDPs (the run's `bdp_bytes`) go out before any
    /// feedback and equal the ideal exactly; larger ones first pay a request/grant handshake, so
    /// their FCT exceeds the ideal, by at most `max_extra_rtts` base RTTs (`base_rtt_ps`).
    Handshake { exact_up_to_bdp: f64, max_extra_rtts: f64 },
    /// Never faster than the ideal, and slower by at most `max_extra_rtts` base RTTs: a protocol
    /// that learns its rate in the first round trip (RCP: a one-packet flow is exact), or whose
    /// delay-based window dips below the BDP when it answers its own NIC queue (DX).
    Bounded { max_extra_rtts: f64 },
}

/// The suite's cases, for exemptions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Case {
    LoneFlow,
    Incast,
    Determinism,
    Counters,
    StrayPackets,
    RandomLoss,
    /// Every finished flow reported its `Sent` milestone (`Ctx::sent`) exactly once, between its
    /// start and its finish, with and without loss.
    Sent,
}
