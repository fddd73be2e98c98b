//! Timer kinds, typed. A timer comes back to its protocol as `Event::Timer { kind: u8, .. }` (a
//! byte, so the event stays small). Each dispatch domain (a protocol, or a family sharing one, as
//! the window transports and MPTCP share `window::timer::WindowTimer`) declares its kinds once, as
//! an enum implementing [`TimerKind`]: [`Ctx::set_timer`](super::Ctx::set_timer) encodes it, the
//! registry decodes the byte before `Protocol::on_timer`, which matches the enum exhaustively.
//! Two kinds of one protocol cannot share a byte: a fieldless enum's bytes are its discriminants
//! ([`timer_kinds!`], where a repeated one does not compile), and the registry's unit test holds
//! every protocol's encoding to a round trip that is injective ([`assert_round_trip`]).

/// A protocol's timer kinds and their bytes.
pub trait TimerKind: Copy + Eq + std::fmt::Debug {
    /// The protocol, named when a byte decodes to none of its kinds.
    const PROTOCOL: &'static str;
    fn encode(self) -> u8;
    /// The kind `byte` encodes; `None` if none does.
    fn decode(byte: u8) -> Option<Self>;
    /// Every kind (for the round-trip test).
    fn all() -> Vec<Self>;
}

/// The kind `byte` encodes; a byte that is none of them is a bug (a debug panic naming the
/// protocol; a release build ignores the timer).
#[inline]
pub fn decode<K: TimerKind>(byte: u8) -> Option<K> {
    let kind = K::decode(byte);
    debug_assert!(kind.is_some(), "unknown {} timer kind {byte}", K::PROTOCOL);
    kind
}

/// Every kind of `K` encodes to a byte of its own that decodes back to it, and no other byte
/// decodes.
#[cfg(test)]
pub fn assert_round_trip<K: TimerKind>() {
    let mut owner = [None; 256];
    for kind in K::all() {
        let byte = kind.encode();
        assert_eq!(owner[byte as usize], None, "{}: {kind:?} shares byte {byte}", K::PROTOCOL);
        owner[byte as usize] = Some(kind);
    }
    for byte in 0..=u8::MAX {
        assert_eq!(K::decode(byte), owner[byte as usize], "{}: byte {byte}", K::PROTOCOL);
    }
}

/// Declares a fieldless timer-kind enum whose bytes are its (explicit) discriminants:
/// `timer_kinds! { pub(super) enum HomaTimer for "Homa" { Pacer = 0, Rx = 1 } }`.
macro_rules! timer_kinds {
    ($(#[$meta:meta])* $vis:vis enum $name:ident for $protocol:literal {
        $($(#[$vmeta:meta])* $variant:ident = $byte:literal),+ $(,)?
    }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u8)]
        $vis enum $name {
            $($(#[$vmeta])* $variant = $byte),+
        }

        impl $crate::transport::timer::TimerKind for $name {
            const PROTOCOL: &'static str = $protocol;
            #[inline]
            fn encode(self) -> u8 {
                self as u8
            }
            #[inline]
            fn decode(byte: u8) -> Option<Self> {
                match byte {
                    $($byte => Some($name::$variant),)+
                    _ => None,
                }
            }
            fn all() -> Vec<Self> {
                vec![$($name::$variant),+]
            }
        }
    };
}
pub(crate) use timer_kinds;
