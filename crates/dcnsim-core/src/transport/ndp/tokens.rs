//! pHost's receiver token state of one flow (`phost.rs` issues the tokens; the receiver keeps this
//! state with each connection).

use crate::time::Time;

/// The receiver's token state of one flow (pHost only).
#[derive(Default)]
pub(super) struct Tokens {
    /// The receiver has heard of the flow.
    pub(super) known: bool,
    /// Tokens issued so far; the first window counts as tokens `0..IW`.
    pub(super) issued: u64,
    /// One more than the highest token number a received data packet echoed (0: none yet).
    pub(super) echoed: u64,
    /// The packet the next token names, before skipping received ones.
    pub(super) cursor: u64,
    /// Tokens to issue before a pause for stragglers: the packets, then each round what is missing.
    pub(super) goal: u64,
    /// A round of tokens is complete: no token before this time.
    pub(super) resend_at: Option<Time>,
    /// When the last token went out (the window timeout counts from it).
    pub(super) last_token_at: Time,
    /// A wake-up is set for this time.
    pub(super) wake_at: Option<Time>,
}

impl Tokens {
    /// Tokens out beyond the highest echoed, i.e. not yet known to have been used.
    pub(super) fn gap(&self) -> u64 {
        self.issued - self.echoed
    }

    /// Echoes are of issued tokens, and the window (or the first window, if larger) bounds the
    /// tokens out.
    pub(super) fn check_invariants(&self, max_gap: u64) {
        assert!(self.echoed <= self.issued, "token {} echoed of {} issued", self.echoed, self.issued);
        assert!(self.gap() <= max_gap, "{} tokens out (at most {max_gap})", self.gap());
        assert!(!self.known || self.issued <= self.goal, "{} tokens issued, round goal {}", self.issued, self.goal);
    }
}
