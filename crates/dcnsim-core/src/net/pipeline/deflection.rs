//! In-order flow deflection (IOFD), the switch half of Dart (Xue et al., "Dart: Divide and
//! Specialize for Fast Response to Congestion in RDMA-based Datacenter Networks", IEEE/ACM ToN
//! 2020, section IV): a routing stage that sends a short message around a congested egress queue
//! while keeping its packets in order, as RDMA requires.
//!
//! Modelled (section IV-A/B, VI-A):
//! - a deflected-flow table (DFT) per switch, `entries` wide (the paper: an 8-entry CAM): flow id
//!   (and the ingress port, see below) -> the output port chosen for the message
//! - the message's start packet (a data packet with `seq` 0) is deflected when the queue of its
//!   normal egress port holds more than `threshold` bytes (15 KB, below the ECN threshold 22.5 KB,
//!   so deflection acts before ECN), it has a token left and a DFT entry is free; the entry is
//!   allocated then and never overwritten
//! - every later packet of that message that reaches the switch over the same ingress port
//!   matches the entry and takes the same port (one path, one FIFO per hop: in order); the end
//!   packet (flag LAST) frees the entry as it passes
//! - deflection tokens in the header ([`DeflectTokens`], 4 at the sender): each misrouted packet
//!   loses one; a message out of tokens follows normal routing (livelock freedom). Packets of one
//!   message share their path, so they spend tokens identically and decide identically
//! - the deflected port is random among the switch's other ports, never a port facing a host (a
//!   ToR never deflects towards end-nodes), never back where the packet came from, and (a choice,
//!   see below) never a port whose own queue is above the threshold
//! - never a start packet whose normal port faces its destination host: congestion there is the
//!   receiver's, which DASR handles ("flows colliding at the receiver should not be deflected")
//! - only packets whose sender marked them deflectable (bit 7 of [`DeflectTokens`]: Dart's short
//!   flows; long flows carry no tokens)
//!
//! Choices where the paper is silent: the DFT key includes the ingress port and the tokens the
//! start packet arrived with, so a message that comes back to a switch it was deflected at (over
//! another link, or over the same one with fewer tokens) is routed afresh, and an end packet frees
//! only the entry of its own visit (freeing the first visit's entry would send the end packet the
//! short way on its second visit, ahead of the packets before it); candidate ports above the threshold are skipped (deflecting into
//! another congested queue gains nothing); the queue measure is the egress port's bytes over all
//! classes. Not modelled: virtual lanes for deadlock avoidance (the fabric is not PFC-blocked
//! here unless `[switch] pfc` is set), router failures.
//!
//! Optional (`ceiling_bytes`, off by default): deflect only while the normal queue is at most a
//! ceiling, one reading of "IOFD activates before ECN" (section IV-B) under which a 20 KB threshold
//! below a 22.5 KB ECN threshold leaves IOFD all but disabled, as section VI-C reports.
//!
//! Counters per switch: deflections (start packets deflected), DFT-full events (a start packet
//! that qualified but found no free entry), tokens exhausted (one that qualified but had no token).

use crate::engine::rng::Rng;
use crate::net::packet::{flags, Packet, PacketKind, NO_PORT};
use crate::net::port::{NodeId, Port, PortId, PortRole};

/// Bit 7 of [`DeflectTokens`]: the message may be deflected.
const DEFLECTABLE: u8 = 0x80;
/// Bits 0-6: tokens left.
const TOKENS: u8 = 0x7f;

/// This stage's per-packet header field (`Packet::stage`, `super::marks`): whether the packet's
/// message may be deflected, and the tokens it has left. The sender sets it
/// ([`DeflectTokens::deflectable`]); only this stage spends a token.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeflectTokens(u8);

impl DeflectTokens {
    /// The most tokens a packet can carry.
    pub const MAX: u8 = TOKENS;

    /// A packet of a deflectable message (Dart's short flows) with `tokens` (at most `MAX`) to spend.
    #[inline]
    pub fn deflectable(tokens: u8) -> DeflectTokens {
        debug_assert!(tokens <= TOKENS, "{tokens} deflection tokens");
        DeflectTokens(DEFLECTABLE | tokens)
    }

    #[inline]
    pub fn is_deflectable(self) -> bool {
        self.0 & DEFLECTABLE != 0
    }

    #[inline]
    pub fn tokens(self) -> u8 {
        self.0 & TOKENS
    }

    /// A misrouted packet loses a token.
    #[inline]
    fn spend(&mut self) {
        debug_assert!(self.tokens() > 0, "no token to spend");
        self.0 -= 1;
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeflectionConfig {
    /// Queue bytes at the normal egress port above which a start packet is deflected.
    pub threshold_bytes: u64,
    /// DFT entries per switch.
    pub entries: usize,
    /// Deflect only while the normal queue holds at most this (`None`: no ceiling). A reading of
    /// "IOFD before ECN" in which a queue already above the ECN threshold is left to the fall-back.
    pub ceiling_bytes: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    flow: u32,
    ingress: PortId,
    /// Tokens the start packet arrived with: a message that loops back to this switch over the same
    /// link arrives with fewer, so each visit has its own entry and the end packet frees only its own.
    tokens: u8,
    port: PortId,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeflectionCounters {
    pub deflections: u64,
    pub dft_full: u64,
    pub tokens_exhausted: u64,
    /// Packets that followed a DFT entry (start packets included).
    pub misrouted_packets: u64,
}

/// The DFTs of every switch and their counters (indexed by node - hosts).
pub struct Deflection {
    cfg: DeflectionConfig,
    tables: Vec<Vec<Entry>>,
    pub counters: Vec<DeflectionCounters>,
    rng: Rng,
    candidates: Vec<PortId>,
}

impl Deflection {
    pub fn new(cfg: DeflectionConfig, switches: usize, seed: u64) -> Deflection {
        Deflection {
            cfg,
            tables: vec![Vec::with_capacity(cfg.entries); switches],
            counters: vec![DeflectionCounters::default(); switches],
            rng: Rng::for_component(seed, "deflection"),
            candidates: Vec::new(),
        }
    }

    /// Entries in use at switch `s` (node - hosts).
    pub fn in_use(&self, s: usize) -> usize {
        self.tables[s].len()
    }

    /// The egress port for `pkt` at switch `node` (index `s` = node - hosts), given the port normal
    /// routing chose. Spends a token of a misrouted packet and frees the entry of an end packet.
    pub fn route(&mut self, s: usize, pkt: &mut Packet, normal: PortId, ports: &[Port], own: &[PortId]) -> PortId {
        if !pkt.stage.deflect.is_deflectable() || pkt.kind != PacketKind::Data {
            return normal;
        }
        let tokens = pkt.stage.deflect.tokens();
        let table = &mut self.tables[s];
        if let Some(i) = table.iter().position(|e| e.flow == pkt.flow && e.ingress == pkt.ingress && e.tokens == tokens)
        {
            let port = table[i].port;
            if pkt.has(flags::LAST) {
                table.swap_remove(i);
            }
            if tokens == 0 {
                // Only a packet whose path differs from its start packet's (a retransmission after
                // a reroute) gets here; it goes the normal way.
                return normal;
            }
            pkt.stage.deflect.spend();
            self.counters[s].misrouted_packets += 1;
            return port;
        }
        // Receiver congestion (the queue towards the destination host) is DASR's, not IOFD's:
        // "flows colliding at the receiver should not be deflected" (section I).
        let out = &ports[normal as usize];
        if pkt.seq != 0 || out.bytes <= self.cfg.threshold_bytes || out.role == PortRole::ToHost {
            return normal;
        }
        if self.cfg.ceiling_bytes.is_some_and(|c| out.bytes > c) {
            return normal;
        }
        if tokens == 0 {
            self.counters[s].tokens_exhausted += 1;
            return normal;
        }
        if table.len() >= self.cfg.entries {
            self.counters[s].dft_full += 1;
            return normal;
        }
        let back = if pkt.ingress == NO_PORT { NO_PORT } else { pkt.ingress ^ 1 };
        self.candidates.clear();
        self.candidates.extend(own.iter().copied().filter(|&p| {
            let port = &ports[p as usize];
            p != normal && p != back && port.role != PortRole::ToHost && port.bytes <= self.cfg.threshold_bytes
        }));
        if self.candidates.is_empty() {
            return normal;
        }
        let port = self.candidates[self.rng.below(self.candidates.len() as u64) as usize];
        if !pkt.has(flags::LAST) {
            table.push(Entry { flow: pkt.flow, ingress: pkt.ingress, tokens, port });
        }
        debug_assert!(table.len() <= self.cfg.entries);
        pkt.stage.deflect.spend();
        self.counters[s].deflections += 1;
        self.counters[s].misrouted_packets += 1;
        port
    }

    /// Switch `node`'s index, for callers holding a node id.
    #[inline]
    pub fn index(node: NodeId, hosts: u32) -> usize {
        (node - hosts) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Rate;

    /// A switch with ports 0 (to a host), 1, 2, 3 (fabric); port 1 is the normal route.
    fn ports(queued: [u64; 4]) -> Vec<Port> {
        (0..4)
            .map(|i| {
                let role = if i == 0 { PortRole::ToHost } else { PortRole::Fabric };
                let mut p = Port::new(10, i, Rate::from_gbps(100.0), 1, role, role as u16, 1);
                p.bytes = queued[i as usize];
                p
            })
            .collect()
    }

    fn data(flow: u32, seq: u64, last: bool, deflect: u8) -> Packet {
        let mut p = Packet::new(PacketKind::Data, flow, 0, 1, 1000);
        p.seq = seq;
        p.stage.deflect = DeflectTokens(deflect);
        p.ingress = 100; // its reverse (101) is not a port of this switch
        if last {
            p.flags |= flags::LAST;
        }
        p
    }

    const OWN: [PortId; 4] = [0, 1, 2, 3];
    const CFG: DeflectionConfig = DeflectionConfig { threshold_bytes: 15_000, entries: 2, ceiling_bytes: None };

    #[test]
    fn a_deflected_message_keeps_its_port_and_its_end_frees_the_entry() {
        let mut d = Deflection::new(CFG, 1, 7);
        let busy = ports([0, 20_000, 0, 0]);
        let mut start = data(5, 0, false, DEFLECTABLE | 4);
        let port = d.route(0, &mut start, 1, &busy, &OWN);
        assert!(port == 2 || port == 3, "deflected to another fabric port, never the host port: {port}");
        assert_eq!(start.stage.deflect().tokens(), 3, "a token spent");
        assert_eq!(d.in_use(0), 1);
        // Later packets follow even once the normal queue has drained.
        let idle = ports([0, 0, 0, 0]);
        for seq in 1..5 {
            let mut p = data(5, seq, seq == 4, DEFLECTABLE | 4);
            assert_eq!(d.route(0, &mut p, 1, &idle, &OWN), port, "packet {seq} on the deflected port");
        }
        assert_eq!(d.in_use(0), 0, "the end packet freed the entry");
        assert_eq!(d.counters[0].deflections, 1);
        assert_eq!(d.counters[0].misrouted_packets, 5);
    }

    #[test]
    fn only_start_packets_of_deflectable_messages_above_the_threshold_are_deflected() {
        let mut d = Deflection::new(CFG, 1, 7);
        let busy = ports([0, 20_000, 0, 0]);
        assert_eq!(d.route(0, &mut data(1, 3, false, DEFLECTABLE | 4), 1, &busy, &OWN), 1, "not a start packet");
        assert_eq!(d.route(0, &mut data(1, 0, false, 0), 1, &busy, &OWN), 1, "a long flow (no mark)");
        let below = ports([0, 15_000, 0, 0]);
        assert_eq!(d.route(0, &mut data(1, 0, false, DEFLECTABLE | 4), 1, &below, &OWN), 1, "at the threshold");
        let receiver_congested = ports([20_000, 0, 0, 0]);
        assert_eq!(d.route(0, &mut data(1, 0, false, DEFLECTABLE | 4), 0, &receiver_congested, &OWN), 0, "to a host");
        assert_eq!(d.counters[0].deflections, 0);
    }

    #[test]
    fn a_full_table_and_spent_tokens_stop_deflection() {
        let mut d = Deflection::new(CFG, 1, 7);
        let busy = ports([0, 20_000, 0, 0]);
        for f in 0..2 {
            assert_ne!(d.route(0, &mut data(f, 0, false, DEFLECTABLE | 4), 1, &busy, &OWN), 1);
        }
        assert_eq!(d.route(0, &mut data(9, 0, false, DEFLECTABLE | 4), 1, &busy, &OWN), 1, "DFT full");
        assert_eq!(d.counters[0].dft_full, 1);
        // Entries are never overwritten: the two messages still own them.
        assert_eq!(d.in_use(0), 2);
        let mut d = Deflection::new(CFG, 1, 7);
        assert_eq!(d.route(0, &mut data(9, 0, false, DEFLECTABLE), 1, &busy, &OWN), 1, "no token left");
        assert_eq!(d.counters[0].tokens_exhausted, 1);
    }

    #[test]
    fn a_message_back_over_the_same_link_with_fewer_tokens_is_a_new_visit() {
        let mut d = Deflection::new(DeflectionConfig { entries: 8, ..CFG }, 1, 7);
        let busy = ports([0, 20_000, 0, 0]);
        let first = d.route(0, &mut data(5, 0, false, DEFLECTABLE | 4), 1, &busy, &OWN);
        // The start packet loops back (3 tokens left) and is deflected again: a second entry.
        let second = d.route(0, &mut data(5, 0, false, DEFLECTABLE | 3), 1, &busy, &OWN);
        assert_ne!(second, 1);
        assert_eq!(d.in_use(0), 2);
        // The end packet's first visit frees the first entry only; its second visit finds its own.
        let idle = ports([0, 0, 0, 0]);
        assert_eq!(d.route(0, &mut data(5, 3, true, DEFLECTABLE | 4), 1, &idle, &OWN), first);
        assert_eq!(d.in_use(0), 1);
        assert_eq!(d.route(0, &mut data(5, 3, true, DEFLECTABLE | 3), 1, &idle, &OWN), second);
        assert_eq!(d.in_use(0), 0);
    }

    #[test]
    fn a_queue_above_the_ceiling_is_left_to_the_fall_back() {
        let mut d = Deflection::new(DeflectionConfig { ceiling_bytes: Some(22_500), ..CFG }, 1, 7);
        let between = ports([0, 20_000, 0, 0]);
        assert_ne!(d.route(0, &mut data(1, 0, false, DEFLECTABLE | 4), 1, &between, &OWN), 1, "in the band");
        let above = ports([0, 22_501, 0, 0]);
        assert_eq!(d.route(0, &mut data(2, 0, false, DEFLECTABLE | 4), 1, &above, &OWN), 1, "above the ceiling");
        assert_eq!(d.counters[0].deflections, 1);
    }

    #[test]
    fn no_candidate_no_deflection() {
        let mut d = Deflection::new(CFG, 1, 7);
        // Every other fabric port is congested too.
        let all_busy = ports([0, 20_000, 16_000, 30_000]);
        assert_eq!(d.route(0, &mut data(1, 0, false, DEFLECTABLE | 4), 1, &all_busy, &OWN), 1);
        // The only other fabric port is where the packet came from.
        let mut p = data(1, 0, false, DEFLECTABLE | 4);
        p.ingress = 3; // reverse is 2
        let busy = ports([0, 20_000, 0, 16_000]);
        assert_eq!(d.route(0, &mut p, 1, &busy, &OWN), 1);
        assert_eq!(d.in_use(0), 0);
    }
}
