//! The switch stage registry: registering a stage is one line in the `stages!` call at the end of
//! this file, and that list is the stages' order (keys read and documented, state built, hooks
//! run). The macro generates the stages' configurations (`StageConfigs`, read from `[switch]`),
//! their state in a run (`Stages`, one optional box per stage), where each stage finds its state
//! (`Slot`) and the dispatch of every hook, so the packet path calls each stage directly: a test
//! of its box per hook it has, nothing for hooks it lacks.

use super::deadlock::DEADLOCK_CHECK;
pub mod int;
pub mod phantom;
pub mod rcp;

use super::stage::Stage;
use crate::engine::events::EventQueue;
use crate::net::network::Network;
use crate::net::packet::PacketId;
use crate::net::port::{Port, PortId};
use crate::net::QueueConfigs;
use crate::spec_reader::{Section, SpecResult};
use crate::time::Time;
use int::Int;
use phantom::Phantoms;
use rcp::Rcp;

/// `Event::SwitchTimer` kinds below this are the built-in ones (the PFC deadlock check); stage
/// `i` of the registry has kind `FIRST_STAGE_TIMER + i`.
pub const FIRST_STAGE_TIMER: u8 = 1;

/// Where the registry keeps a stage's state (generated for each registered stage).
pub trait Slot: Stage {
    /// Position in the registry.
    const INDEX: u8;
    /// The stage's `Event::SwitchTimer` kind.
    const TIMER_KIND: u8 = FIRST_STAGE_TIMER + Self::INDEX;
    fn slot(stages: &Stages) -> Option<&Self>;
    fn slot_mut(stages: &mut Stages) -> Option<&mut Self>;
}

/// Which registered stages a run has on (what transports check their needs against).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StageSet(u32);

impl StageSet {
    /// Whether stage `S` is on.
    pub fn has<S: Slot>(self) -> bool {
        self.0 & (1 << S::INDEX) != 0
    }
}

impl Stages {
    /// Stage `S`'s state, when it is on.
    #[inline(always)]
    pub fn get<S: Slot>(&self) -> Option<&S> {
        S::slot(self)
    }

    #[inline(always)]
    pub fn get_mut<S: Slot>(&mut self) -> Option<&mut S> {
        S::slot_mut(self)
    }
}

impl Network {
    /// A switch-side timer fired: the PFC deadlock check, or the timer of the registered stage
    /// whose kind it is. Returns true when the run must stop (a deadlock was found).
    pub fn on_switch_timer(&mut self, kind: u8, id: u32, now: Time, ev: &mut EventQueue) -> bool {
        if kind == DEADLOCK_CHECK {
            return self.on_deadlock_check(now, ev);
        }
        let known = self.stage_timer(kind, id, now, ev);
        debug_assert!(known, "unknown switch timer kind {kind}");
        false
    }
}

/// What the stage conformance suite needs of a stage.
#[derive(Clone, Copy, Debug)]
pub struct StageInfo {
    pub name: &'static str,
    /// The spec fragment that switches it on (`Stage::CONFORMANCE`).
    pub conformance: &'static str,
}

macro_rules! stages {
    ($($field:ident => $ty:ty),* $(,)?) => {
        /// Each registered stage's configuration; `None`: off.
        #[derive(Clone, Debug, Default, PartialEq)]
        pub struct StageConfigs {
            $(pub $field: Option<<$ty as Stage>::Config>),*
        }

        /// Each registered stage's state in a run; `None`: off.
        #[derive(Default)]
        pub struct Stages {
            $(pub $field: Option<Box<$ty>>),*
        }

        #[allow(non_camel_case_types)]
        enum Position { $($field),* }

        $(
            impl Slot for $ty {
                const INDEX: u8 = Position::$field as u8;
                #[inline(always)]
                fn slot(stages: &Stages) -> Option<&Self> {
                    stages.$field.as_deref()
                }
                #[inline(always)]
                fn slot_mut(stages: &mut Stages) -> Option<&mut Self> {
                    stages.$field.as_deref_mut()
                }
            }
        )*

        /// Every registered stage, in registry order.
        pub fn stages() -> Vec<StageInfo> {
            vec![$(StageInfo { name: <$ty as Stage>::NAME, conformance: <$ty as Stage>::CONFORMANCE }),*]
        }

        /// Whether any registered stage has an `on_admit` hook (else `Network::admit` skips it).
        pub(crate) const ANY_ON_ADMIT: bool = false $(|| <$ty as Stage>::ON_ADMIT)*;

        impl StageConfigs {
            /// Reads every stage's `[switch]` keys, in registry order.
            pub fn read(s: &mut Section, queues: &QueueConfigs) -> SpecResult<StageConfigs> {
                Ok(StageConfigs { $($field: <$ty as Stage>::read(s, queues)?),* })
            }

            /// The stages that are on.
            pub fn set(&self) -> StageSet {
                let mut bits = 0;
                $(if self.$field.is_some() { bits |= 1 << <$ty as Slot>::INDEX; })*
                StageSet(bits)
            }

            /// Each stage that is on checks the run's protocols.
            pub fn check_protocols(&self, top: &Section, protocols: &[(&str, super::stage::PacketUse)]) -> SpecResult<()> {
                $(if let Some(c) = &self.$field { <$ty as Stage>::check_protocols(c, top, protocols)?; })*
                Ok(())
            }
        }

        impl Network {
            /// Builds the state of every stage that is on, in registry order.
            pub(crate) fn build_stages(&mut self, cfgs: &StageConfigs, max_packet: u32) {
                $(if let Some(c) = &cfgs.$field {
                    let state = <$ty as Stage>::build(c, self, max_packet);
                    self.stages.$field = Some(Box::new(state));
                })*
            }

            /// Whether any stage that is on has a dequeue hook at this port.
            pub(crate) fn stages_dequeue_at(&self, port: &Port) -> bool {
                false $(|| (<$ty as Stage>::ON_DEQUEUE && self.stages.$field.is_some() && <$ty as Stage>::runs_at(port)))*
            }

            #[inline(always)]
            pub(crate) fn stages_on_arrival(&mut self, port: PortId, pkt: PacketId, now: Time, ev: &mut EventQueue) {
                $(if <$ty as Stage>::ON_ARRIVAL && self.stages.$field.is_some() {
                    <$ty as Stage>::on_arrival(self, port, pkt, now, ev);
                })*
            }

            #[inline(always)]
            pub(crate) fn stages_on_admit(&mut self, port: PortId, pkt: PacketId, class: usize, now: Time) {
                $(if <$ty as Stage>::ON_ADMIT && self.stages.$field.is_some() {
                    <$ty as Stage>::on_admit(self, port, pkt, class, now);
                })*
            }

            #[inline(always)]
            pub(crate) fn stages_on_dequeue(&mut self, port: PortId, pkt: PacketId, size: u32, class: usize, now: Time) {
                $(if <$ty as Stage>::ON_DEQUEUE && self.stages.$field.is_some() {
                    <$ty as Stage>::on_dequeue(self, port, pkt, size, class, now);
                })*
            }

            /// Runs the stage whose timer kind this is; false if no stage has it.
            pub(crate) fn stage_timer(&mut self, kind: u8, id: u32, now: Time, ev: &mut EventQueue) -> bool {
                $(if kind == <$ty as Slot>::TIMER_KIND {
                    <$ty as Stage>::on_timer(self, id, now, ev);
                    return true;
                })*
                false
            }

            /// The measurement window opens: every stage that is on restarts its counters.
            pub(crate) fn reset_stage_stats(&mut self, now: Time) {
                $(if let Some(s) = self.stages.$field.as_deref_mut() { s.reset_stats(now); })*
            }

            /// Every stage that is on, with its counters (summary `stages`); `None` if none is on.
            pub fn stage_counters(&self) -> Option<serde_json::Value> {
                let mut out = serde_json::Map::new();
                $(if let Some(s) = self.stages.$field.as_deref() {
                    let c: serde_json::Map<String, serde_json::Value> =
                        s.counters().into_iter().map(|(k, v)| (k.to_string(), v.into())).collect();
                    out.insert(<$ty as Stage>::NAME.to_string(), c.into());
                })*
                (!out.is_empty()).then_some(out.into())
            }
        }
    };
}

stages! {
    int => Int,
    rcp => Rcp,
    phantom => Phantoms,
}
