//! What a protocol needs from the rest of the run — priority classes, trimming switches, hosts it
//! names — declared by each protocol (`Protocol::needs`) and checked once for all of them after the
//! spec is read (`scenario::spec`), so a run that cannot mean what it says fails or warns there.

/// The key that chose the protocol: what a message names for a need the design fixes.
pub const PROTOCOL_KEY: &str = "protocol";

/// One priority class a protocol puts packets in.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassUse {
    /// The transport key that sets or switches on this class (`data_priority`, `use_priorities`),
    /// or [`PROTOCOL_KEY`] for a class the design fixes. Must be a key the protocol's reader
    /// documents (`TransportConfig::undocumented_need_keys`).
    pub key: &'static str,
    pub class: u8,
    /// A class chosen explicitly is an error when the queues lack it (packets would silently land
    /// in the lowest class); a class the design uses by default is a warning.
    pub explicit: bool,
    /// What is lost without the class, for the message.
    pub purpose: &'static str,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Needs {
    pub classes: Vec<ClassUse>,
    /// Trimming switches are essential: without them the run is an error with this hint.
    pub trimming: Option<&'static str>,
    /// Hosts named by a key (`prioritize_senders`): each must exist.
    pub hosts: Vec<(&'static str, u64)>,
    /// Every port shapes credits (ExpressPass; `net::pipeline::credit_shaper`).
    pub credit_shaping: Option<crate::net::pipeline::credit_shaper::CreditShaping>,
    /// The protocol's data packets carry a rate header in `aux` that switches may lower (RCP's;
    /// a stage that rewrites `aux` accepts only such protocols).
    pub rate_header: bool,
    /// Settings that probably are not meant: (key, message), printed and listed in the summary.
    pub warnings: Vec<(&'static str, &'static str)>,
}

impl Needs {
    /// Every transport key these needs name in messages (classes, hosts, warnings).
    pub fn keys(&self) -> impl Iterator<Item = &'static str> + '_ {
        let classes = self.classes.iter().map(|c| c.key);
        classes.chain(self.hosts.iter().map(|h| h.0)).chain(self.warnings.iter().map(|w| w.0))
    }

    /// The keys named here that are not in `documented` (the protocol's reader's keys), the key
    /// choosing the protocol aside.
    pub fn undocumented_keys(&self, documented: &[String]) -> Vec<&'static str> {
        self.keys().filter(|&k| k != PROTOCOL_KEY && !documented.iter().any(|d| d == k)).collect()
    }
}
