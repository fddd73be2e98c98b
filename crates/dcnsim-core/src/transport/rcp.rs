//! RCP: the Rate Control Protocol, routers computing one fair-share rate per link.
//!
//! Papers: N. Dukkipati and N. McKeown, "Why Flow-Completion Time is the Right Metric for
//! Congestion Control", ACM CCR 36(1), 2006; N. Dukkipati, M. Kobayashi, R. Zhang-Shen and
//! N. McKeown, "Processor Sharing Flows in the Internet", IWQoS 2005. Reference: the authors' ns-2
//! code (`rcp.cc`, `rcp-host.cc`). The router side is `net::pipeline::stages::rcp` (`[switch] rcp = true`,
//! with `rcp_alpha` 0.1 and `rcp_beta` 1 as the papers recommend); the sender is [`super::rate`]
//! with the controller [`super::rate::cc::rcp`].
//!
//! Modelled:
//! - every switch egress port updates R each control interval from spare capacity and queue and
//!   stamps min(header, R) on each data packet as it leaves; the receiver echoes the header in its
//!   ACK (and NACK); the sender paces at the latest echo (the NIC's rate at most)
//! - start: the first data packet acts as the SYN (RCP learns the rate in the SYN's round trip):
//!   one packet, then nothing until its ACK, then the learned rate. A flow on an idle path thus
//!   starts at R = line rate one RTT after its first packet
//! - loss recovery: the rate sender's go-back-N or IRN (RCP's own hosts use TCP-like
//!   retransmission; the switch's drop-tail queues can overflow when many flows start at once)
//!
//! Not modelled: the SYN as a separate packet (it carries data here), the RTT field and the
//! routers' running average of it (d0 is fixed per run: `rcp_rtt_us`), the rate request field of
//! `rcp-host.cc` (a sender always asks for line rate), FIN packets.
//!
//! Packet fields: as the rate sender, plus data `aux` = the rate header in kb/s (the sender writes
//! u32::MAX, switches lower it), ACK/NACK `aux` = its echo.

use super::rate::cc::rcp::Rcp as RcpControl;
use super::rate::{QpSetup, RateProtocol};
use super::LoneFlow;
use crate::spec_reader::{Section, SpecResult};

/// RCP as a [`RateProtocol`]; the registered transport is `RateTransport<Rcp>`.
pub struct Rcp;

impl RateProtocol for Rcp {
    const NAMES: &'static [(&'static str, &'static str)] = &[(
        "rcp",
        "RCP (Dukkipati and McKeown, CCR'06): switches compute a fair-share rate per link from spare capacity \
         and queue; senders pace at the path's minimum (needs [switch] rcp = true)",
    )];
    const ECN: bool = false;
    const RATE_HEADER: bool = true;
    const CONFORMANCE_SPEC: &'static str = "[switch]\nrcp = true\n";
    /// The first packet's round trip (RCP's SYN) comes before the rest: one base RTT at most (a
    /// one-packet flow is exact).
    const LONE_FLOW: LoneFlow = LoneFlow::Bounded { max_extra_rtts: 1.0 };
    type Control = RcpControl;
    type Params = ();

    fn read_params(_s: &mut Section) -> SpecResult<()> {
        Ok(())
    }

    fn control(_p: &(), qp: &QpSetup) -> RcpControl {
        RcpControl::new(qp.line_rate.bps(), qp.framing.mss() as u64)
    }
}
