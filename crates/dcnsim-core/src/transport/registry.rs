//! The protocol registry: registering a protocol is one line in the `registry!` call at the end of
//! this file. The macro generates the config and transport enums and their dispatch, so the hot
//! path calls each protocol's methods directly (a `match`, no trait objects).

use super::rate::RateTransport;
use super::window::WindowTransport;
use super::{
    dart, dcpim, dcqcn, dctcp, dctcp_rate, dx, expresspass, homa, hpcc, hull, mptcp, ndp, newreno, rcp, sird, swift,
    timely,
};
use super::{Conformance, Ctx, Protocol, SpecEnv, TransportEnv};
use crate::net::packet::{FlowId, HostId, Packet};
use crate::spec_reader::{Section, SpecResult};

macro_rules! registry {
    ($($variant:ident => $ty:ty),* $(,)?) => {
        /// A protocol's resolved parameters.
        #[derive(Clone, Debug, PartialEq)]
        pub enum TransportConfig {
            $($variant(<$ty as Protocol>::Config)),*
        }

        /// One transport instance of a run.
        pub enum Transport {
            $($variant($ty)),*
        }

        /// Every registered (name, description), in registry order.
        pub fn protocols() -> Vec<(&'static str, &'static str)> {
            let mut v = Vec::new();
            $(v.extend_from_slice(<$ty as Protocol>::NAMES);)*
            v
        }

        /// How the conformance suite runs protocol `name`; `None` if no protocol has that name.
        pub fn conformance(name: &str) -> Option<Conformance> {
            $(
                if <$ty as Protocol>::NAMES.iter().any(|n| n.0 == name) {
                    return Some(<$ty as Protocol>::conformance(name));
                }
            )*
            None
        }

        impl TransportConfig {
            /// Reads the parameters of protocol `name`; `None` if no protocol has that name.
            pub fn read_named(s: &mut Section, name: &str, env: &SpecEnv) -> SpecResult<Option<TransportConfig>> {
                $(
                    if <$ty as Protocol>::NAMES.iter().any(|n| n.0 == name) {
                        return Ok(Some(TransportConfig::$variant(<$ty as Protocol>::read(s, name, env)?)));
                    }
                )*
                Ok(None)
            }

            pub fn name(&self) -> &'static str {
                match self {
                    $(TransportConfig::$variant(c) => <$ty as Protocol>::name(c)),*
                }
            }

            pub fn needs(&self) -> super::Needs {
                match self {
                    $(TransportConfig::$variant(c) => <$ty as Protocol>::needs(c)),*
                }
            }

            pub fn wants_nic_idle(&self) -> bool {
                match self {
                    $(TransportConfig::$variant(_) => <$ty as Protocol>::WANTS_NIC_IDLE),*
                }
            }
        }

        impl Transport {
            pub fn new(cfg: &TransportConfig, env: &TransportEnv) -> Transport {
                match cfg {
                    $(TransportConfig::$variant(c) => Transport::$variant(<$ty as Protocol>::new(c, env))),*
                }
            }

            #[inline]
            pub fn start_flow(&mut self, ctx: &mut Ctx, flow: FlowId) {
                match self {
                    $(Transport::$variant(t) => t.start_flow(ctx, flow)),*
                }
            }

            #[inline]
            pub fn on_packet(&mut self, ctx: &mut Ctx, host: HostId, pkt: &Packet) {
                match self {
                    $(Transport::$variant(t) => t.on_packet(ctx, host, pkt)),*
                }
            }

            #[inline]
            pub fn on_timer(&mut self, ctx: &mut Ctx, kind: u8, id: u32) {
                match self {
                    $(Transport::$variant(t) => t.on_timer(ctx, kind, id)),*
                }
            }

            #[inline(always)]
            pub fn prefetch_timer(&self, id: u32, near: bool) {
                match self {
                    $(Transport::$variant(t) => t.prefetch_timer(id, near)),*
                }
            }

            #[inline]
            pub fn on_nic_idle(&mut self, ctx: &mut Ctx, host: HostId) {
                match self {
                    $(Transport::$variant(t) => t.on_nic_idle(ctx, host)),*
                }
            }

            /// See `Protocol::prefetch_flow`.
            #[inline(always)]
            pub fn prefetch_flow(&self, flow: FlowId, early: bool) {
                match self {
                    $(Transport::$variant(t) => t.prefetch_flow(flow, early)),*
                }
            }

            /// See `Protocol::prefetch_flow_state`.
            #[inline(always)]
            pub fn prefetch_flow_state(&self, pkt: &Packet) {
                match self {
                    $(Transport::$variant(t) => t.prefetch_flow_state(pkt)),*
                }
            }

            pub fn counters(&self) -> Vec<(&'static str, u64)> {
                match self {
                    $(Transport::$variant(t) => t.counters()),*
                }
            }

            pub fn flow_state(&self, flow: FlowId, out: &mut Vec<(&'static str, f64)>) {
                match self {
                    $(Transport::$variant(t) => t.flow_state(flow, out)),*
                }
            }
        }
    };
}

// One line per protocol: `Variant => module::Type`.
registry! {
    Dctcp => WindowTransport<dctcp::Dctcp>,
    NewReno => WindowTransport<newreno::NewReno>,
    Ndp => ndp::Ndp,
    Sird => sird::Sird,
    Swift => WindowTransport<swift::Swift>,
    Dcqcn => RateTransport<dcqcn::Dcqcn>,
    Timely => RateTransport<timely::Timely>,
    DctcpRate => RateTransport<dctcp_rate::DctcpRate>,
    Hpcc => RateTransport<hpcc::Hpcc>,
    Rcp => RateTransport<rcp::Rcp>,
    Dx => WindowTransport<dx::Dx>,
    Hull => WindowTransport<hull::Hull>,
    Dart => RateTransport<dart::Dart, dart::dasr::Dasr>,
    ExpressPass => expresspass::Xpass,
    Homa => homa::Homa,
    Dcpim => dcpim::Dcpim,
    Mptcp => mptcp::Mptcp,
}

impl TransportConfig {
    /// The transport spreads a flow over several paths whatever the routing mode (MPTCP's subflows
    /// have ECMP keys of their own): the ideal FCT is then the multipath one.
    pub fn multipath(&self) -> bool {
        matches!(self, TransportConfig::Mptcp(c) if c.subflows > 1)
    }

    /// The transport marks a flow of `size` bytes deflectable by IOFD (Dart's short flows): its
    /// ideal FCT must allow for deflected routes (`metrics/ideal_deflected.rs`).
    pub fn deflectable(&self, size: u64) -> bool {
        matches!(self, TransportConfig::Dart(c) if c.params.deflection_tokens > 0 && size <= c.params.short_flow_max_bytes)
    }

    /// Reads a `[transport]` table: `protocol` picks the protocol, which reads the other keys. In
    /// describe mode every protocol documents its keys under its own name.
    pub fn read(s: &mut Section, env: &SpecEnv) -> SpecResult<TransportConfig> {
        let all = protocols();
        let names: Vec<&str> = all.iter().map(|p| p.0).collect();
        if let Some(docs) = s.describe_docs() {
            for &name in &names {
                let mut scoped = Section::describe_scoped(s.path(), docs, name);
                TransportConfig::read_named(&mut scoped, name, env)?;
            }
        }
        let protocol = s.choice("protocol", &names, "transport protocol")?;
        Ok(TransportConfig::read_named(s, &protocol, env)?.expect("the choice check admits registered names only"))
    }
}
