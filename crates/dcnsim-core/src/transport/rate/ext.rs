//! What a protocol may add to the rate sender beyond its controller: marks on a flow's data
//! packets (deflection tokens, a data class) and receiver-side state that decorates ACKs (Dart's
//! receiver apportioning). `()` adds nothing, and a transport without an extension runs exactly as
//! before the hooks existed.

use crate::net::packet::{FlowId, HostId, Packet};
use crate::net::pipeline::deflection::DeflectTokens;
use crate::record::flows::FlowRecord;
use crate::time::Time;
use crate::transport::TransportEnv;

/// Marks on every data packet of one flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowMarks {
    /// The deflection tokens of its data packets (`Packet::stage`; the default: never deflected).
    pub deflect: DeflectTokens,
    /// The data class instead of `data_priority`.
    pub data_priority: Option<u8>,
}

/// What the receiver puts on the ACK or NACK of one data packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckMarks {
    /// `Packet::aux` of the ACK (the controller reads it as `RateAck::aux`).
    pub aux: u32,
    /// Do not echo this packet's CE mark.
    pub suppress_ece: bool,
}

pub trait RateExt<Params>: Sized {
    fn new(params: &Params, env: &TransportEnv) -> Self;
    /// Flow `id` starts at its sender.
    fn on_flow_start(&mut self, _now: Time, _id: FlowId, _rec: &FlowRecord) -> FlowMarks {
        FlowMarks::default()
    }
    /// A data packet reached its receiver (every one, duplicates included), before its answer.
    fn on_data(&mut self, _now: Time, _pkt: &Packet) -> AckMarks {
        AckMarks::default()
    }
    /// The receiver holds every packet of flow `id`.
    fn on_finished(&mut self, _now: Time, _id: FlowId) {}
    /// An ACK or NACK reached host `host` (its flow's sender), whether or not the flow still runs:
    /// control bytes on that host's link (Dart counts them off the rate it apportions).
    fn on_control(&mut self, _now: Time, _host: HostId, _pkt: &Packet) {}
    fn counters(&self, _out: &mut Vec<(&'static str, u64)>) {}
}

impl<P> RateExt<P> for () {
    fn new(_: &P, _: &TransportEnv) {}
}
