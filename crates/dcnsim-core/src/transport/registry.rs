//! The protocol registry: registering a protocol is one line in the `registry!` call at the end of
//! this file. The macro generates the config and transport enums and their dispatch, so the hot
//! path calls each protocol's methods directly (a `match`, no trait objects).

use super::rate::RateTransport;
use super::window::WindowTransport;
use super::{
    dart, dcpim, dcqcn, dctcp, dctcp_rate, dx, expresspass, homa, hpcc, hull, mptcp, ndp, newreno, rcp, sird, swift,
    timely,
};
use super::{timer, Conformance, Ctx, Protocol, SpecEnv, TransportEnv};
use crate::net::packet::{FlowId, HostId, Packet};
use crate::spec_reader::{Section, SpecResult};
use std::cell::RefCell;

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

        /// Every registered protocol's timer kinds round-trip through their bytes, none shared.
        #[cfg(test)]
        #[test]
        fn every_protocols_timer_kinds_round_trip() {
            $(timer::assert_round_trip::<<$ty as Protocol>::Timer>();)*
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

            /// See `Protocol::multipath`: the ideal FCT is the multipath one.
            pub fn multipath(&self) -> bool {
                match self {
                    $(TransportConfig::$variant(c) => <$ty as Protocol>::multipath(c)),*
                }
            }

            /// See `Protocol::deflectable`: the ideal FCT of a flow of `size` bytes allows for
            /// deflected routes.
            pub fn deflectable(&self, size: u64) -> bool {
                match self {
                    $(TransportConfig::$variant(c) => <$ty as Protocol>::deflectable(c, size)),*
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
                    $(Transport::$variant(t) => if let Some(kind) = timer::decode(kind) {
                        t.on_timer(ctx, kind, id)
                    }),*
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
        let cfg =
            TransportConfig::read_named(s, &protocol, env)?.expect("the choice check admits registered names only");
        #[cfg(debug_assertions)]
        if !s.is_describe() {
            let unknown = cfg.undocumented_need_keys(s.path(), env);
            assert!(unknown.is_empty(), "{protocol}'s needs name keys its reader does not document: {unknown:?}");
        }
        Ok(cfg)
    }

    /// Keys that this config's needs name in messages (`Protocol::needs`) and its protocol's
    /// reader does not document under `path`: a warning or error would point at a key that does
    /// not exist (SIRD's once named `priorities` after its reader had renamed it). Checked on every
    /// spec read in debug builds, and by the tests.
    pub fn undocumented_need_keys(&self, path: &str, env: &SpecEnv) -> Vec<&'static str> {
        self.needs().undocumented_keys(&self.documented_keys(path, env))
    }

    /// The keys this config's protocol documents (its reader in describe mode), relative to `path`.
    pub fn documented_keys(&self, path: &str, env: &SpecEnv) -> Vec<String> {
        let docs = RefCell::new(Vec::new());
        let mut scoped = Section::describe_scoped(path, &docs, self.name());
        TransportConfig::read_named(&mut scoped, self.name(), env).expect("describe mode never fails");
        let prefix = format!("{path}.");
        docs.into_inner().into_iter().filter_map(|d| d.path.strip_prefix(&prefix).map(str::to_string)).collect()
    }
}

/// The flow state recorder (`record::flow_state`) samples a traced flow through its transport.
impl crate::record::flow_state::StateSource for Transport {
    fn flow_state(&self, flow: FlowId, out: &mut Vec<(&'static str, f64)>) {
        Transport::flow_state(self, flow, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::LoadBalancing;
    use crate::net::queue::QueueConfig;
    use crate::net::QueueConfigs;
    use crate::transport::{ClassUse, Framing, Needs};

    fn with_env<T>(f: impl FnOnce(&SpecEnv) -> T) -> T {
        let q = QueueConfig::infinite();
        let queues = QueueConfigs { nic: q.clone(), to_host: q.clone(), fabric: q };
        let framing = Framing { mtu_bytes: 1500, header_bytes: 40, control_bytes: 64 };
        let (postcards, pfc) = (false, false);
        let stages = crate::net::pipeline::stages::StageSet::default();
        f(&SpecEnv { load_balancing: LoadBalancing::Spray, framing, queues: &queues, stages, postcards, pfc })
    }

    /// A protocol's defaults, as its reader resolves them with no keys given.
    fn defaults(name: &str, env: &SpecEnv) -> TransportConfig {
        let docs = RefCell::new(Vec::new());
        let mut s = Section::describe("transport", &docs);
        TransportConfig::read_named(&mut s, name, env).unwrap().unwrap()
    }

    #[test]
    fn every_protocols_needs_name_keys_its_reader_documents() {
        with_env(|env| {
            for (name, _) in protocols() {
                let cfg = defaults(name, env);
                assert_eq!(cfg.undocumented_need_keys("transport", env), Vec::<&str>::new(), "{name}");
            }
        });
    }

    #[test]
    fn a_need_naming_a_renamed_key_is_caught() {
        with_env(|env| {
            let TransportConfig::Sird(cfg) = defaults("sird", env) else { panic!("sird reads as Sird") };
            assert!(cfg.use_priorities, "SIRD uses its priority classes by default");
            assert_eq!(sird::Sird::needs(&cfg).classes[0].key, "use_priorities");
            // The check itself: a key the reader renamed away is reported.
            let renamed = Needs {
                classes: vec![ClassUse { key: "priorities", class: 1, explicit: false, purpose: "test" }],
                ..Needs::default()
            };
            let documented = TransportConfig::Sird(cfg).documented_keys("transport", env);
            assert!(documented.iter().any(|k| k == "use_priorities"));
            assert_eq!(renamed.undocumented_keys(&documented), ["priorities"]);
        });
    }

    /// The ideal-FCT model's hooks: only the protocols that declare them spread or deflect.
    #[test]
    fn multipath_and_deflectable_flows_are_declared_by_their_protocols() {
        with_env(|env| {
            for (name, _) in protocols() {
                let cfg = defaults(name, env);
                assert_eq!(cfg.multipath(), name == "mptcp", "{name}");
                assert_eq!(cfg.deflectable(8_000), name == "dart", "{name}");
                assert!(!cfg.deflectable(1 << 20), "{name}: a long flow is never deflected");
            }
            let TransportConfig::Mptcp(mut one) = defaults("mptcp", env) else { panic!("mptcp reads as Mptcp") };
            one.subflows = 1;
            assert!(!TransportConfig::Mptcp(one).multipath());
            let TransportConfig::Dart(mut never) = defaults("dart", env) else { panic!("dart reads as Dart") };
            never.params.deflection_tokens = 0;
            assert!(!TransportConfig::Dart(never).deflectable(8_000));
        });
    }
}
