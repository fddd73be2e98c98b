//! CC-postcards of PB-FS (D. Aaronson and R. Cohen, "PB-FS: Postcard-Based Fast Start", IFIP
//! Networking 2024, section III-C): a switch that receives a PBT-triggering data packet (field
//! [`PbtMark`] in `Packet::stage`, set by the rate sender's PB-FS layer, `transport/rate/fast_start.rs`) for an egress
//! port it finds congested sends the packet's sender a CC-postcard at high priority.
//!
//! Per switch egress port the stage keeps, for the last N complete time slots (DC_RTT = 2N
//! slots), the bytes that arrived for the port (I^1 .. I^N, I^N the newest) and the port's queue at
//! the start of each slot (Q^1 .. Q^N), plus the arrivals of the last T_Delta (bytes, and bytes of
//! PBT-triggering packets). Definition 1: at the arrival t0 of a PBT-triggering packet the port is
//! congested when I_p = sum(I^i) + N I^N > T x DC_RTT - Q^1 (T the port rate). The postcard
//! carries what the sender's Algorithm 1 needs: the switch, I_p, Q^1, T, recentBytes and
//! recentMarkedBytes, and how many switches the data packet had entered (its distance).
//!
//! Modelling choices (the paper leaves them open):
//! - slots are aligned to time 0; the history is the N most recent *complete* slots (the slot in
//!   progress at t0 is not used; the triggering packet counts in it);
//! - the queue "at the beginning of a slot" is the port's queue (bytes, every class) seen by the
//!   first packet that arrives for the port in that slot (a switch pipeline sees the queue on
//!   packet arrivals); slots without arrivals take the queue seen by the next arrival;
//! - recentBytes / recentMarkedBytes cover (t0 - T_Delta, t0], the triggering packet included,
//!   with T_Delta = Delta MTU-sized packets at the host link rate (`postcard_recent_packets`);
//! - every packet to the port counts as arriving bytes (data, ACKs, other postcards);
//! - postcards are `Control` packets of `control_bytes`, in class `postcard_priority`, routed
//!   like any packet from the switch to the sender (they are counted at later switches as arrivals
//!   but never trigger postcards themselves); a shared buffer accounts a postcard to the ingress of
//!   the data packet that triggered it.
//!
//! Packet fields of a postcard (the switch writes them, the rate sender reads them):
//! `seq` = I_p (bytes), `ack` = T in Mb/s << 32 | Q^1 (bytes, saturated at 2^32 - 1),
//! `ts` = recentMarkedBytes << 32 | recentBytes, `aux` = distance << 24 | switch index.
//! The PBT mark is a packet field of its own ([`PbtMark`]), not a protocol flag bit: SIRD's probes and dcPIM's
//! RTSs use `flags::PROTO2`, and a run with several transports must not take them for PBT packets.

use std::collections::VecDeque;

use crate::engine::events::EventQueue;
use crate::net::network::Network;
use crate::net::packet::{LoadBalancing, Packet, PacketId, PacketKind};
use crate::net::port::{NodeId, PortId};
use crate::net::QueueConfigs;
use crate::spec_reader::{Section, SpecError, SpecResult};
use crate::time::{from_us, Rate, Time};

/// The most slots a port's history keeps (N).
pub const MAX_SLOTS: u32 = 64;

/// This stage's per-packet field (`Packet::stage`, `super::marks`): the PB-FS sender marked the
/// data packet PBT-triggering.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PbtMark(bool);

impl PbtMark {
    pub const TRIGGERING: PbtMark = PbtMark(true);

    #[inline]
    pub fn is_set(self) -> bool {
        self.0
    }
}

/// The `[switch]` keys of the stage.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PostcardSpec {
    pub slots: u32,
    /// `None`: the base RTT from host 0 to the last host (an MTU there, a control packet back).
    pub dc_rtt_us: Option<f64>,
    pub recent_packets: u32,
    pub priority: u8,
}

impl PostcardSpec {
    /// Reads `postcards` and its `postcard_*` keys (only with `postcards = true`).
    pub fn read(s: &mut Section, queues: &QueueConfigs) -> SpecResult<Option<PostcardSpec>> {
        let on = s.bool_or(
            "postcards",
            false,
            "PB-FS (Aaronson and Cohen, IFIP Networking 2024): a switch that receives a PBT-triggering packet for a congested egress port (Definition 1) sends its sender a CC-postcard at high priority",
        )?;
        for key in ["postcard_slots", "postcard_dc_rtt_us", "postcard_recent_packets", "postcard_priority"] {
            s.ensure(on || s.is_describe() || !s.has(key), key, "only used with postcards = true")?;
        }
        let slots =
            s.u64_or("postcard_slots", 8, "slots", "PB-FS N: history slots per port; DC_RTT = 2N slots (paper: 8)")?;
        s.ensure((1..=MAX_SLOTS as u64).contains(&slots), "postcard_slots", format!("must be in [1, {MAX_SLOTS}]"))?;
        let dc_rtt_us = s.f64_opt(
            "postcard_dc_rtt_us",
            "us",
            "PB-FS DC_RTT at the switches; unset = the base RTT from host 0 to the last host (the rate sender's)",
        )?;
        if let Some(d) = dc_rtt_us {
            s.ensure(d > 0.0 && d <= 1e6, "postcard_dc_rtt_us", "must be in (0, 1e6] us")?;
        }
        let recent = s.u64_or(
            "postcard_recent_packets",
            6,
            "packets",
            "PB-FS T_Delta, the window of recentBytes: this many MTU packets at the host link rate (the senders' Delta; paper: 6)",
        )?;
        s.ensure((1..=10_000).contains(&recent), "postcard_recent_packets", "must be in [1, 10000]")?;
        let priority = s.u64_or("postcard_priority", 0, "class", "priority class of CC-postcards (0 = highest)")?;
        s.ensure(
            priority < queues.fabric.priorities as u64,
            "postcard_priority",
            format!("must be a class below queue.priorities ({})", queues.fabric.priorities),
        )?;
        Ok(on.then_some(PostcardSpec {
            slots: slots as u32,
            dc_rtt_us,
            recent_packets: recent as u32,
            priority: priority as u8,
        }))
    }
}

/// What the stage needs, resolved against the network (`Network::configure_postcards`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PostcardParams {
    /// N: history slots; DC_RTT = 2N slots.
    pub slots: u32,
    pub dc_rtt: Time,
    /// T_Delta: the recent-arrivals window.
    pub recent: Time,
    pub bytes: u32,
    pub priority: u8,
}

/// One egress port's history.
#[derive(Clone, Debug, Default)]
struct PortHistory {
    /// Index of the slot in progress (time / slot length), its arrivals and its starting queue.
    cur_slot: u64,
    cur_bytes: u64,
    cur_queue: u64,
    /// Ring of the last N complete slots: `head` is the oldest.
    head: usize,
    arrived: Vec<u64>,
    queue: Vec<u64>,
    /// Arrivals of the last T_Delta: (time, bytes, PBT-triggering).
    recent: VecDeque<(Time, u32, bool)>,
    recent_bytes: u64,
    recent_marked: u64,
}

impl PortHistory {
    fn new(n: usize) -> PortHistory {
        PortHistory { arrived: vec![0; n], queue: vec![0; n], ..Default::default() }
    }

    fn push(&mut self, bytes: u64, queue: u64) {
        let n = self.arrived.len();
        self.arrived[self.head] = bytes;
        self.queue[self.head] = queue;
        self.head = (self.head + 1) % n;
    }

    /// Moves to slot `k`, closing the slot in progress and any empty ones in between.
    fn advance(&mut self, k: u64, queue_now: u64) {
        if k <= self.cur_slot {
            return;
        }
        let n = self.arrived.len() as u64;
        self.push(self.cur_bytes, self.cur_queue);
        for _ in 1..(k - self.cur_slot).min(n + 1) {
            self.push(0, queue_now);
        }
        (self.cur_slot, self.cur_bytes, self.cur_queue) = (k, 0, queue_now);
    }

    /// Counts an arrival in the slot in progress and the recent window `(now - recent, now]`.
    fn arrive(&mut self, now: Time, recent: Time, size: u32, marked: bool) {
        self.cur_bytes += size as u64;
        self.recent.push_back((now, size, marked));
        self.recent_bytes += size as u64;
        self.recent_marked += if marked { size as u64 } else { 0 };
        while let Some(&(t, s, m)) = self.recent.front() {
            if t + recent > now {
                break;
            }
            self.recent.pop_front();
            self.recent_bytes -= s as u64;
            self.recent_marked -= if m { s as u64 } else { 0 };
        }
    }

    /// (I_p, Q^1): the predicted arrivals over the 2N slots around now, and the oldest queue.
    fn prediction(&self) -> (u64, u64) {
        let n = self.arrived.len();
        let newest = self.arrived[(self.head + n - 1) % n];
        (self.arrived.iter().sum::<u64>() + n as u64 * newest, self.queue[self.head])
    }
}

/// Definition 1: the port is congested when the predicted arrivals exceed T x DC_RTT - Q^1.
#[inline]
pub fn congested(ip: u64, q1: u64, rate: Rate, dc_rtt: Time) -> bool {
    ip + q1 > rate.bytes_in(dc_rtt)
}

/// What a CC-postcard tells the sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Postcard {
    /// Switch index (node - hosts).
    pub switch: u32,
    /// Switches the triggering packet had entered, this one included (1 = the sender's ToR).
    pub distance: u8,
    pub ip_bytes: u64,
    pub q1_bytes: u64,
    pub rate_mbps: u32,
    pub recent_bytes: u32,
    pub recent_marked_bytes: u32,
}

impl Postcard {
    pub fn write(&self, p: &mut Packet) {
        debug_assert!(self.switch < 1 << 24);
        p.seq = self.ip_bytes;
        p.ack = (self.rate_mbps as u64) << 32 | self.q1_bytes.min(u32::MAX as u64);
        p.ts = (self.recent_marked_bytes as u64) << 32 | self.recent_bytes as u64;
        p.aux = (self.distance as u32) << 24 | self.switch;
    }

    pub fn read(p: &Packet) -> Postcard {
        Postcard {
            switch: p.aux & 0xff_ffff,
            distance: (p.aux >> 24) as u8,
            ip_bytes: p.seq,
            q1_bytes: p.ack & 0xffff_ffff,
            rate_mbps: (p.ack >> 32) as u32,
            recent_bytes: (p.ts & 0xffff_ffff) as u32,
            recent_marked_bytes: (p.ts >> 32) as u32,
        }
    }

    /// The port rate in bits per second.
    pub fn rate_bps(&self) -> u64 {
        self.rate_mbps as u64 * 1_000_000
    }
}

/// The stage's state over the whole network.
pub struct Postcards {
    pub params: PostcardParams,
    slot: Time,
    ports: Vec<PortHistory>,
    /// Postcards sent per switch (whole run).
    pub sent: Vec<u64>,
    /// PBT-triggering packets seen per switch (whole run).
    pub triggers_seen: Vec<u64>,
}

impl Postcards {
    pub fn new(params: PostcardParams, ports: usize, switches: usize) -> Postcards {
        let n = params.slots as usize;
        debug_assert!(n >= 1 && params.slots <= MAX_SLOTS);
        let slot = (params.dc_rtt / (2 * params.slots as u64)).max(1);
        Postcards {
            params,
            slot,
            ports: vec![PortHistory::new(n); ports],
            sent: vec![0; switches],
            triggers_seen: vec![0; switches],
        }
    }

    /// The slot length, DC_RTT / 2N.
    pub fn slot(&self) -> Time {
        self.slot
    }
}

impl Network {
    /// Sets up the stage from `[switch] postcards` (DC_RTT and T_Delta resolved against the network).
    pub fn configure_postcards(&mut self, spec: Option<PostcardSpec>, mtu: u32, control: u32) -> Result<(), SpecError> {
        let Some(spec) = spec else { return Ok(()) };
        let last = self.hosts.saturating_sub(1);
        let dc_rtt = spec.dc_rtt_us.map_or_else(|| self.base_rtt(0, last, mtu, control), from_us);
        let host_rate = self.nic_rate(0);
        let params = PostcardParams {
            slots: spec.slots,
            dc_rtt,
            recent: host_rate.tx_time(mtu) * spec.recent_packets as u64,
            bytes: control,
            priority: spec.priority,
        };
        if dc_rtt < 2 * spec.slots as u64 {
            return Err(SpecError { field: "switch.postcard_slots".into(), message: "slots shorter than 1 ps".into() });
        }
        self.postcards = Some(Box::new(Postcards::new(params, self.ports.len(), self.tiers.len())));
        Ok(())
    }

    /// The postcard stage for `pkt`, which arrived at switch `node` for egress `out`: updates the
    /// port's history, and sends a CC-postcard if the packet is PBT-triggering and the port is
    /// congested (Definition 1).
    #[inline(never)]
    pub(crate) fn postcard_stage(&mut self, node: NodeId, out: PortId, pkt: PacketId, now: Time, ev: &mut EventQueue) {
        let packet = *self.pool.get(pkt);
        let Some(pc) = self.postcards.as_deref_mut() else { return };
        let (queue_now, rate) = (self.ports[out as usize].bytes, self.ports[out as usize].rate);
        let marked = packet.kind == PacketKind::Data && packet.stage.pbt().is_set();
        let h = &mut pc.ports[out as usize];
        h.advance(now / pc.slot, queue_now);
        h.arrive(now, pc.params.recent, packet.size, marked);
        if !marked {
            return;
        }
        let switch = node - self.hosts;
        pc.triggers_seen[switch as usize] += 1;
        let (ip, q1) = h.prediction();
        if !congested(ip, q1, rate, pc.params.dc_rtt) {
            return;
        }
        let card = Postcard {
            switch,
            distance: packet.hops,
            ip_bytes: ip,
            q1_bytes: q1,
            rate_mbps: (rate.bps() / 1_000_000).min(u32::MAX as u64) as u32,
            recent_bytes: h.recent_bytes.min(u32::MAX as u64) as u32,
            recent_marked_bytes: h.recent_marked.min(u32::MAX as u64) as u32,
        };
        pc.sent[switch as usize] += 1;
        let mut p = Packet::new(PacketKind::Control, packet.flow, packet.dst, packet.src, pc.params.bytes);
        p.prio = pc.params.priority;
        p.path = packet.path;
        p.lb = if packet.lb == LoadBalancing::Source { LoadBalancing::Ecmp } else { packet.lb };
        // A shared buffer accounts the postcard to the link its data packet came in on.
        p.ingress = packet.ingress;
        card.write(&mut p);
        let id = self.pool.alloc(p);
        self.forward(node, id, now, ev);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::queue::QueueConfig;
    use crate::net::QueueConfigs;
    use crate::time::from_us;
    use crate::topology::builders;

    /// Three 10 Gb/s hosts on one switch (node 3); N = 4 slots of 1 us (DC_RTT = 8 us: the port
    /// can send 10000 bytes in it); T_Delta = one 1000-byte MTU at 10 Gb/s = 0.8 us.
    fn net() -> (Network, EventQueue) {
        let g = builders::single_switch(3, Rate::from_gbps(10.0), 0);
        let q = QueueConfig { priorities: 2, ..QueueConfig::infinite() };
        let qs = QueueConfigs { nic: q.clone(), to_host: q.clone(), fabric: q };
        let mut n = Network::build(&g, &qs, 0, None, 1).unwrap();
        let spec = PostcardSpec { slots: 4, dc_rtt_us: Some(8.0), recent_packets: 1, priority: 0 };
        n.configure_postcards(Some(spec), 1000, 64).unwrap();
        (n, EventQueue::new())
    }

    /// A data packet of `size` bytes from host 0 to host 2 reaches the switch at `us`.
    fn arrive(n: &mut Network, ev: &mut EventQueue, us: f64, size: u32, marked: bool) {
        let mut p = Packet::new(PacketKind::Data, 7, 0, 2, size);
        p.prio = 1;
        if marked {
            p.stage.set_pbt(PbtMark::TRIGGERING);
        }
        let id = n.pool.alloc(p);
        n.switch_arrival(0, 3, id, from_us(us), ev);
    }

    fn sent(n: &Network) -> u64 {
        n.postcards.as_deref().unwrap().sent[0]
    }

    /// One 1000-byte packet in each of slots 0-4 and `last` bytes in slot 5, then PBT-triggering
    /// packets in slot 6: the history is slots 2-5, I_p = 3000 + last + 4 last.
    fn steady(last: &[u32]) -> (Network, EventQueue) {
        let (mut n, mut ev) = net();
        for k in 0..5 {
            arrive(&mut n, &mut ev, k as f64 + 0.1, 1000, false);
        }
        for (i, &b) in last.iter().enumerate() {
            arrive(&mut n, &mut ev, 5.1 + 0.4 * i as f64, b, false);
        }
        (n, ev)
    }

    #[test]
    fn definition_one_decides_each_pbt_packet() {
        // I_p = 8000 <= 10000: no postcard.
        let (mut n, mut ev) = steady(&[1000]);
        arrive(&mut n, &mut ev, 6.1, 1000, true);
        assert_eq!(sent(&n), 0);
        // Exactly at the threshold: 3000 + 1400 + 4 x 1400 = 10000, not more: none.
        let (mut n, mut ev) = steady(&[1400]);
        arrive(&mut n, &mut ev, 6.1, 1000, true);
        assert_eq!(sent(&n), 0);
        // One byte more (I_p = 10005): congested; one postcard per PBT-triggering packet, none for
        // the unmarked ones in between.
        let (mut n, mut ev) = steady(&[1401]);
        arrive(&mut n, &mut ev, 6.1, 1000, true);
        assert_eq!(sent(&n), 1);
        arrive(&mut n, &mut ev, 6.2, 1000, false);
        arrive(&mut n, &mut ev, 6.3, 1000, true);
        assert_eq!(sent(&n), 2);
    }

    /// Other transports' protocol bits (SIRD's probe and dcPIM's RTS are `flags::PROTO2`, which
    /// was PB-FS's mark) on a data packet to a congested port trigger nothing: only `PbtMark` does.
    #[test]
    fn only_the_pbt_field_triggers_postcards() {
        let (mut n, mut ev) = steady(&[1401]);
        let mut p = Packet::new(PacketKind::Data, 9, 0, 2, 1000);
        p.flags = u8::MAX;
        let id = n.pool.alloc(p);
        n.switch_arrival(0, 3, id, from_us(6.1), &mut ev);
        assert_eq!((sent(&n), n.postcards.as_deref().unwrap().triggers_seen[0]), (0, 0));
        arrive(&mut n, &mut ev, 6.2, 1000, true);
        assert_eq!(sent(&n), 1, "the port is congested: a PBT packet gets its postcard");
    }

    #[test]
    fn a_postcard_carries_the_prediction_at_high_priority_to_the_sender() {
        // Slot 5 holds two packets (2000 bytes): I_p = 3000 + 2000 + 4 x 2000 = 13000.
        let (mut n, mut ev) = steady(&[1000, 1000]);
        arrive(&mut n, &mut ev, 6.1, 1000, true);
        assert_eq!(sent(&n), 1);
        // The postcard left on the switch's port towards host 0 (port 1: link 0's reverse).
        let ids: Vec<PacketId> = n.ports[1].pipe_packets().collect();
        assert_eq!(ids.len(), 1);
        let p = *n.pool.get(ids[0]);
        assert_eq!((p.kind, p.dst, p.flow, p.size, p.prio), (PacketKind::Control, 0, 7, 64, 0));
        let c = Postcard::read(&p);
        // Q^1 = the queue seen at slot 2's first arrival (empty); recent window (5.3, 6.1] us holds
        // the packet at 5.5 and the marked one.
        let expect = Postcard {
            switch: 0,
            distance: 1,
            ip_bytes: 13_000,
            q1_bytes: 0,
            rate_mbps: 10_000,
            recent_bytes: 2000,
            recent_marked_bytes: 1000,
        };
        assert_eq!(c, expect);
    }

    #[test]
    fn history_keeps_the_last_n_complete_slots() {
        let mut h = PortHistory::new(4);
        h.advance(0, 0);
        h.arrive(10, 5, 100, false);
        h.advance(1, 7); // slot 0 closed: 100 bytes, queue 0
        h.arrive(20, 5, 200, true);
        h.advance(3, 9); // slot 1 closed: 200, queue 7; slot 2 empty with queue 9
        assert_eq!(h.prediction(), (300, 0), "slots [initial 0, 100, 200, empty 0]: the newest is empty");
        h.advance(4, 1);
        // [100, 200, 0, 0]: newest 0, oldest queue is slot 0's.
        assert_eq!(h.prediction(), (300, 0));
        h.arrive(100, 5, 50, false);
        h.advance(5, 2);
        assert_eq!(h.prediction(), (250 + 4 * 50, 7), "[200, 0, 0, 50]: oldest is slot 1 (queue 7)");
        h.advance(100, 3);
        assert_eq!(h.prediction(), (0, 3), "a long gap empties the history");
    }

    #[test]
    fn recent_window_is_half_open() {
        let mut h = PortHistory::new(2);
        h.arrive(0, 10, 100, true);
        h.arrive(5, 10, 100, false);
        assert_eq!((h.recent_bytes, h.recent_marked), (200, 100));
        h.arrive(10, 10, 100, false); // the arrival at 0 is out: (0, 10]
        assert_eq!((h.recent_bytes, h.recent_marked), (200, 0));
    }

    #[test]
    fn postcard_fields_round_trip() {
        let c = Postcard {
            switch: 123_456,
            distance: 5,
            ip_bytes: 1 << 40,
            q1_bytes: 4_000_000,
            rate_mbps: 100_000,
            recent_bytes: 6_000,
            recent_marked_bytes: 1_000,
        };
        let mut p = Packet::new(PacketKind::Control, 1, 2, 3, 64);
        c.write(&mut p);
        assert_eq!(Postcard::read(&p), c);
        assert_eq!(c.rate_bps(), 100_000_000_000);
    }

    #[test]
    fn definition_one_threshold() {
        let r = Rate::from_gbps(100.0);
        let dc_rtt = 25_000_000; // 25 us: 312500 bytes at 100 Gb/s
        assert!(!congested(312_500 - 1000, 1000, r, dc_rtt));
        assert!(congested(312_500 - 1000, 1001, r, dc_rtt));
    }
}
