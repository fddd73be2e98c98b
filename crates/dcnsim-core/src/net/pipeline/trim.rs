//! Admission by NDP-style payload trimming (Handley et al., SIGCOMM'17, section 3.1; details as in
//! htsim's CompositeQueue): see `queue::Trim`. Data packets queue in their class up to the data
//! limit, which counts the data packet being serialized. A data packet arriving to a full data queue
//! is trimmed to a header with probability 1/2; otherwise the packet at the tail of the data queue is
//! trimmed and the arrival admitted (breaking phase effects). Headers, and every non-data packet, go
//! to class 0; when class 0 is over its own limit a header is returned to its sender, or dropped.
//! `Trim::cut_payload` is the naive CP queue of the NDP paper's Fig. 2 instead: one FIFO, no tail trim.

use crate::engine::events::EventQueue;
use crate::net::network::Network;
use crate::net::packet::{flags, Fate, LoadBalancing, PacketId, PacketKind};
use crate::net::port::PortId;
use crate::net::queue::{EcnAt, Trim};
use crate::record::trace::TraceEvent;
use crate::time::Time;

impl Network {
    /// The trimming discipline (see `queue::Trim`).
    pub(crate) fn enqueue_trimming(&mut self, port: PortId, pkt: PacketId, trim: Trim, now: Time, ev: &mut EventQueue) {
        if trim.cut_payload {
            return self.enqueue_cut_payload(port, pkt, trim, now, ev);
        }
        let packet = *self.pool.get(pkt);
        if packet.kind != PacketKind::Data {
            return self.admit_header(port, pkt, trim, now, ev);
        }
        let p = &self.ports[port as usize];
        let cfg = &self.cfgs[p.cfg as usize];
        let class = p.class_of(packet.prio);
        debug_assert!(class > 0, "data must not share the header class when trimming");
        let in_service = if p.busy_until > now { p.wire_data_bytes } else { 0 };
        let data_bytes = p.class_bytes(class) + in_service as u64;
        let data_packets = p.class_len(class) as u64 + u64::from(in_service > 0);
        if !cfg.overflows(data_bytes, data_packets, packet.size) {
            if cfg.ecn_at == EcnAt::Enqueue
                && packet.has(flags::ECT)
                && cfg.should_mark(data_bytes, data_packets, &mut self.rng)
            {
                self.pool.get_mut(pkt).flags |= flags::CE;
                self.ports[port as usize].counters.marks += 1;
                if self.tracer.is_some() {
                    self.trace(now, pkt, port, TraceEvent::Mark);
                }
            }
            return self.admit(port, pkt, class, now, ev);
        }
        // Full: trim the arrival, or (with probability 1/2) the newest queued data packet.
        if p.class_len(class) > 0 && self.rng.bernoulli(0.5) {
            let (victim, vsize) = self.ports[port as usize].pop_tail(class).expect("non-empty");
            self.change_occupancy(port, -(vsize as i64), -1, now);
            self.trim_to_header(port, victim, trim, now);
            self.admit_header(port, victim, trim, now, ev);
            let p = &self.ports[port as usize];
            let data_bytes = p.class_bytes(class) + in_service as u64;
            let data_packets = p.class_len(class) as u64 + u64::from(in_service > 0);
            if !self.cfgs[p.cfg as usize].overflows(data_bytes, data_packets, packet.size) {
                return self.admit(port, pkt, class, now, ev);
            }
        }
        self.trim_to_header(port, pkt, trim, now);
        self.admit_header(port, pkt, trim, now, ev);
    }

    /// CP (`Trim::cut_payload`): one FIFO (the lowest class); a data packet over the data limit
    /// is cut to a header; whatever would take the queue over `header_limit_bytes` is dropped.
    /// Both limits count the data packet being serialized (htsim's queue size holds it).
    fn enqueue_cut_payload(&mut self, port: PortId, pkt: PacketId, trim: Trim, now: Time, ev: &mut EventQueue) {
        let packet = *self.pool.get(pkt);
        let p = &self.ports[port as usize];
        let class = p.class_of(u8::MAX);
        let in_service = if p.busy_until > now { p.wire_data_bytes } else { 0 };
        let bytes = p.class_bytes(class) + in_service as u64;
        let packets = p.class_len(class) as u64 + u64::from(in_service > 0);
        if packet.kind == PacketKind::Data && self.cfgs[p.cfg as usize].overflows(bytes, packets, packet.size) {
            self.trim_to_header(port, pkt, trim, now);
        }
        let size = self.pool.get(pkt).size as u64;
        if self.ports[port as usize].class_bytes(class) + in_service as u64 + size <= trim.header_limit_bytes {
            return self.admit(port, pkt, class, now, ev);
        }
        if self.tracer.is_some() {
            self.trace_in_class(now, pkt, port, TraceEvent::Drop, class);
        }
        self.ports[port as usize].counters.drops += 1;
        self.pool.release(pkt, Fate::Dropped);
    }

    fn trim_to_header(&mut self, port: PortId, pkt: PacketId, trim: Trim, now: Time) {
        if self.tracer.is_some() {
            self.trace(now, pkt, port, TraceEvent::Trim);
        }
        self.pool.trimmed += 1;
        let p = self.pool.get_mut(pkt);
        debug_assert_eq!(p.kind, PacketKind::Data);
        p.kind = PacketKind::Header;
        p.size = trim.header_bytes;
        p.payload = 0;
        p.prio = 0;
        self.ports[port as usize].counters.trims += 1;
    }

    /// Headers and control packets share class 0; when it is full, return-to-sender or drop.
    fn admit_header(&mut self, port: PortId, pkt: PacketId, trim: Trim, now: Time, ev: &mut EventQueue) {
        let p = &self.ports[port as usize];
        let size = self.pool.get(pkt).size;
        if p.class_bytes(0) + size as u64 <= trim.header_limit_bytes {
            return self.admit(port, pkt, 0, now, ev);
        }
        let bounce = trim.bounce && self.pool.get(pkt).kind == PacketKind::Header;
        if self.tracer.is_some() {
            let event = if bounce { TraceEvent::Bounce } else { TraceEvent::Drop };
            self.trace_in_class(now, pkt, port, event, 0);
        }
        let p = &mut self.ports[port as usize];
        let packet = self.pool.get_mut(pkt);
        if bounce {
            p.counters.bounces += 1;
            std::mem::swap(&mut packet.src, &mut packet.dst);
            packet.kind = PacketKind::Bounced;
            packet.lb = LoadBalancing::Spray;
            let node = p.owner;
            return self.forward(node, pkt, now, ev);
        }
        p.counters.drops += 1;
        self.pool.release(pkt, Fate::Dropped);
    }
}
