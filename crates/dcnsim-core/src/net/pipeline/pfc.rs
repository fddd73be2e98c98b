//! Priority flow control (IEEE 802.1Qbb), as the HPCC authors' ns-3 model uses it
//! (`qbb-net-device.cc`, `switch-node.cc`): a switch whose shared buffer (`pipeline::shared_buffer`)
//! decides to pause a lossless class of an ingress sends a PAUSE frame back over that link; the
//! upstream port stops starting packets of that class when the frame arrives (a packet already on
//! the wire finishes), until a RESUME frame arrives. A pause lasts until resumed (no quanta timer),
//! as in ns-3. Host NICs honour pauses like any port, and may send them (`Network::host_pause`).
//!
//! Frames are 64 bytes and take the link's serialization and propagation delay. They are MAC
//! control frames, not queued packets: a frame goes on the wire as soon as the packet being
//! serialized is done, ahead of everything queued, whatever its class and even if every class is
//! paused. They are not pooled packets either: on a link they are a `PacketId` with the top bit
//! set, carrying the class and the pause/resume bit.
//!
//! Metrics: frames sent per port, time paused per port and class over the measurement window; a
//! periodic check (`pipeline::deadlock`) runs while any class is paused.

use crate::engine::events::{Event, EventQueue};
use crate::net::network::Network;
use crate::net::packet::{HostId, PacketId};
use crate::net::pipeline::deadlock::{Deadlock, DEADLOCK_CHECK};
use crate::net::port::{Port, PortId};
use crate::net::queue::MAX_PRIORITIES;
use crate::time::Time;

/// Wire size of a PFC frame (a minimum Ethernet frame).
pub const PFC_FRAME_BYTES: u32 = 64;
pub use super::mac_frame::is_mac_frame;
use super::mac_frame::{class_of, frame, is_resume};

/// PFC state: pause accounting and the deadlock check.
pub struct Pfc {
    /// Lossless classes (bit c).
    pub lossless: u8,
    /// Per port and class: when the current pause began (meaningful while paused).
    since: Vec<[Time; MAX_PRIORITIES as usize]>,
    /// Per port and class: time paused within the measurement window, finished pauses only.
    paused_time: Vec<[Time; MAX_PRIORITIES as usize]>,
    /// Per port: PAUSE and RESUME frames it sent within the measurement window.
    pub frames_sent: Vec<[u64; 2]>,
    /// (port, class) pairs paused right now.
    pub active: u32,
    pub check_interval: Time,
    pub(crate) check_pending: bool,
    /// Set when the run stopped on a deadlock.
    pub deadlock: Option<Deadlock>,
}

impl Pfc {
    pub fn new(ports: usize, lossless: u8, check_interval: Time) -> Pfc {
        Pfc {
            lossless,
            since: vec![[0; MAX_PRIORITIES as usize]; ports],
            paused_time: vec![[0; MAX_PRIORITIES as usize]; ports],
            frames_sent: vec![[0; 2]; ports],
            active: 0,
            check_interval,
            check_pending: false,
            deadlock: None,
        }
    }

    /// Time `port` has had `class` paused within the window, up to `now`.
    pub fn paused_time(&self, port: PortId, p: &Port, class: usize, now: Time) -> Time {
        let open = if p.paused & (1 << class) != 0 { now - self.since[port as usize][class] } else { 0 };
        self.paused_time[port as usize][class] + open
    }

    /// Opens the measurement window: pauses under way count from now.
    pub fn reset_stats(&mut self, now: Time) {
        for t in &mut self.paused_time {
            *t = [0; MAX_PRIORITIES as usize];
        }
        for f in &mut self.frames_sent {
            *f = [0; 2];
        }
        for s in &mut self.since {
            *s = [now; MAX_PRIORITIES as usize];
        }
    }
}

impl Network {
    /// Sends a PAUSE (or RESUME) frame for `class` over `port`'s link, right after the packet on
    /// the wire: the peer's port back towards us stops (or resumes) sending that class.
    pub fn send_pfc(&mut self, port: PortId, class: usize, pause: bool, now: Time, ev: &mut EventQueue) {
        let p = &mut self.ports[port as usize];
        let start = p.busy_until.max(now);
        let tx = p.rate.tx_time(PFC_FRAME_BYTES);
        // The port's next packet waits for the frame; a pending PortFree finds the port busy and
        // sleeps until then.
        p.busy_until = start + tx;
        let arrival = start + tx + p.delay;
        if p.pipe_push(arrival, frame(class, pause)) {
            ev.schedule(arrival, Event::LinkArrival(port));
        }
        self.mac_frames_in_flight += 1;
        if let Some(pfc) = self.pfc.as_deref_mut() {
            pfc.frames_sent[port as usize][usize::from(!pause)] += 1;
        }
    }

    /// A PFC frame crossed `port`'s link: apply it to the far node's port back over that link.
    pub(crate) fn on_mac_frame(&mut self, port: PortId, id: PacketId, now: Time, ev: &mut EventQueue) {
        self.mac_frames_in_flight -= 1;
        let class = class_of(id);
        self.set_paused(Network::reverse(port), class, !is_resume(id), now, ev);
    }

    /// Host `host` asks its switch to stop (or resume) sending it `class`: a PFC frame from its
    /// NIC (a receiver that cannot keep up, or a test).
    pub fn host_pause(&mut self, host: HostId, class: usize, pause: bool, now: Time, ev: &mut EventQueue) {
        let nic = self.nic_port(host);
        self.send_pfc(nic, class, pause, now, ev);
    }

    /// Pauses or resumes priority class `class` of a port (link-level flow control).
    pub fn set_paused(&mut self, port: PortId, class: u8, paused: bool, now: Time, ev: &mut EventQueue) {
        let p = &mut self.ports[port as usize];
        let bit = 1u8 << class;
        let was = p.paused & bit != 0;
        if paused {
            p.paused |= bit;
        } else {
            p.paused &= !bit;
            if p.has_sendable() && !p.wake_pending {
                p.wake_pending = true;
                ev.schedule(p.busy_until.max(now), Event::PortFree(port));
            }
        }
        let Some(pfc) = self.pfc.as_deref_mut() else { return };
        let c = class as usize;
        if paused && !was {
            pfc.since[port as usize][c] = now;
            pfc.active += 1;
            if !pfc.check_pending {
                pfc.check_pending = true;
                ev.schedule(now + pfc.check_interval, Event::SwitchTimer { kind: DEADLOCK_CHECK, id: 0 });
            }
        } else if !paused && was {
            pfc.paused_time[port as usize][c] += now - pfc.since[port as usize][c];
            pfc.active -= 1;
        }
    }
}
