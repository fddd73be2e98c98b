//! Per-packet data of single switch stages, carried in `Packet::stage`. Each field's type is
//! declared by the stage that reads it ([`DeflectTokens`] by Dart's deflection, [`PbtMark`] by the
//! PB-FS postcard stage) and keeps its representation private there, so only that stage can change
//! it on the way (deflection spends tokens); the source's transport sets it once, through the
//! setters here, with the stage's own constructors. Data of more than a byte or two per packet
//! goes in a side table instead, as INT's records do (`stages::int`): the packet is one cache line.

use super::deflection::DeflectTokens;
use super::postcard::PbtMark;

/// A packet's stage-owned data (`Packet::stage`); the default is unmarked for every stage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StageMarks {
    /// In-order flow deflection (Dart's IOFD, `deflection`): none unless the sender sets them.
    pub(super) deflect: DeflectTokens,
    /// PB-FS's PBT-triggering mark (`postcard`).
    pub(super) pbt: PbtMark,
}

impl StageMarks {
    #[inline]
    pub fn deflect(&self) -> DeflectTokens {
        self.deflect
    }

    #[inline]
    pub fn pbt(&self) -> PbtMark {
        self.pbt
    }

    /// At the source: the tokens the packet's message may spend on deflections.
    #[inline]
    pub fn set_deflect(&mut self, tokens: DeflectTokens) {
        self.deflect = tokens;
    }

    /// At the source: the PB-FS sender's mark.
    #[inline]
    pub fn set_pbt(&mut self, mark: PbtMark) {
        self.pbt = mark;
    }
}
