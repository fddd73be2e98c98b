//! Giving the network its switch features from `[switch]`: the shared buffers (per-link headroom
//! and threshold shifts, checked against the buffer size), PFC state, the registered stages. Errors name the spec
//! field and the switch or link that does not fit.

use super::deflection::Deflection;
use super::pfc::{Pfc, PFC_FRAME_BYTES};
use super::shared_buffer::{BufferPort, Buffers, SwitchBuffer, ALPHA_ONE};
use super::switch_spec::SwitchConfig;
use crate::net::network::Network;
use crate::net::port::{PortId, PortRole};
use crate::spec_reader::SpecError;

impl Network {
    /// Sets up what `[switch]` asks for; `max_packet` is the largest wire size (MTU or control).
    pub fn configure_switches(&mut self, sw: &SwitchConfig, max_packet: u32) -> Result<(), SpecError> {
        if let Some(size) = sw.buffer_bytes {
            self.cfgs[PortRole::ToHost as usize].shared_buffer = true;
            self.cfgs[PortRole::Fabric as usize].shared_buffer = true;
            self.buffers = Some(Box::new(self.shared_buffers(sw, size, max_packet)?));
        }
        self.build_stages(&sw.stages, max_packet);
        if sw.lossless != 0 {
            self.pfc = Some(Box::new(Pfc::new(self.ports.len(), sw.lossless, sw.deadlock_check)));
        }
        if let Some(cfg) = sw.iofd {
            self.deflection = Some(Box::new(Deflection::new(cfg, self.tiers.len(), self.seed)));
        }
        self.set_port_stages();
        Ok(())
    }

    /// Headroom a lossless class of ingress `p` needs: everything the upstream port can still
    /// start after the switch decides to pause, until the PAUSE reaches it. The decision waits for
    /// nothing; the frame waits for the packet on the reverse link and the other frames queued
    /// ahead of it, then crosses; meanwhile the upstream port keeps sending and what it sent in the
    /// last link delay before the decision is still arriving. Plus the packet that triggered the
    /// pause and two packets cut by the interval's ends.
    pub fn pfc_headroom_needed(&self, p: PortId, lossless_classes: u32, max_packet: u32) -> u64 {
        let (up, back) = (&self.ports[p as usize], &self.ports[Network::reverse(p) as usize]);
        let frame_wait = back.busy_time(max_packet) + 2 * lossless_classes as u64 * back.rate.tx_time(PFC_FRAME_BYTES);
        let window = up.delay + frame_wait + back.rate.tx_time(PFC_FRAME_BYTES) + back.delay;
        up.rate.bytes_in(window) + 3 * max_packet as u64
    }

    /// The headroom of the HPCC authors' ns-3 switches (`third.cc`): 3 x rate x link delay of the
    /// ingress link, whether PFC is on or not.
    pub fn ns3_headroom(&self, p: PortId) -> u64 {
        let up = &self.ports[p as usize];
        3 * up.rate.bytes_in(up.delay)
    }

    /// A port's dynamic-threshold alpha (units of 2^-16): listed by its rate, or the shift rule
    /// (one less per doubling of the rate above the hosts').
    fn buffer_alpha(&self, sw: &SwitchConfig, p: PortId, host_rate: u64) -> Result<u64, SpecError> {
        let bps = self.ports[p as usize].rate.bps();
        if !sw.alpha_by_rate.is_empty() {
            let listed = sw.alpha_by_rate.iter().find(|e| e.0 == bps).map(|e| e.1);
            return listed.ok_or_else(|| SpecError {
                field: "switch.buffer_alpha_by_rate".into(),
                message: format!(
                    "no alpha for the {} Gb/s port {}: list every port rate of the fabric",
                    self.ports[p as usize].rate.gbps(),
                    self.port_name(p)
                ),
            });
        }
        let (mut shift, mut r) = (sw.alpha_shift, host_rate);
        while r < bps && shift > 0 {
            r = r.saturating_mul(2);
            shift -= 1;
        }
        Ok(ALPHA_ONE >> shift)
    }

    fn shared_buffers(&self, sw: &SwitchConfig, size: u64, max_packet: u32) -> Result<Buffers, SpecError> {
        let host_rate = (0..self.hosts).map(|h| self.nic_rate(h).bps()).min().unwrap_or(1);
        let lossless_classes = sw.lossless.count_ones();
        let alpha_of = |p: PortId| self.buffer_alpha(sw, p, host_rate);
        let mut b = Buffers {
            switches: vec![SwitchBuffer { size, ..Default::default() }; self.tiers.len()],
            ports: vec![BufferPort::default(); self.ports.len()],
            reserve: sw.reserve_bytes,
            resume_offset: sw.resume_offset_bytes,
            lossless: sw.lossless,
            ingress_lossy: sw.ingress_lossy,
            unaccounted: sw.unaccounted,
        };
        // Classes with a reserve and a headroom per ingress (PFC's, or lossy ones the ns-3 way).
        let by_ingress = lossless_classes + sw.ingress_lossy.count_ones();
        let field = |key: &str, message: String| SpecError { field: format!("switch.{key}"), message };
        for (s, buffer) in b.switches.iter_mut().enumerate() {
            let node = self.hosts + s as u32;
            for &egress in &self.ports_of[node as usize] {
                let p = Network::reverse(egress);
                let needed = self.pfc_headroom_needed(p, lossless_classes, max_packet);
                let headroom = match sw.headroom_bytes {
                    _ if sw.ingress_lossy != 0 => self.ns3_headroom(p),
                    _ if lossless_classes == 0 => 0,
                    None => needed,
                    Some(h) if h >= needed || sw.allow_small_headroom => h,
                    Some(h) => {
                        return Err(field(
                            "pfc_headroom_bytes",
                            format!(
                                "{h} bytes is too small for the link {} ({} Gb/s): a pause takes effect only after {needed} more bytes may arrive; set at least that, unset it (sized per link), or set pfc_allow_small_headroom = true",
                                self.port_name(p),
                                self.ports[p as usize].rate.gbps()
                            ),
                        ))
                    }
                };
                let ingress = &mut b.ports[p as usize];
                (ingress.into, ingress.headroom, ingress.alpha_q16) = (s as u32, headroom, alpha_of(p)?);
                let out = &mut b.ports[egress as usize];
                (out.owner, out.alpha_q16) = (s as u32, alpha_of(egress)?);
                buffer.headroom_total += by_ingress as u64 * headroom;
                buffer.reserve_total += by_ingress as u64 * sw.reserve_bytes;
            }
            let set_aside = buffer.headroom_total + buffer.reserve_total;
            if size < set_aside + max_packet as u64 {
                return Err(field(
                    "buffer_bytes",
                    format!(
                        "switch {} sets aside {} bytes of PFC headroom and {} bytes of reserves; the buffer needs at least {} bytes (one packet of shared space more)",
                        self.node_names[node as usize],
                        buffer.headroom_total,
                        buffer.reserve_total,
                        set_aside + max_packet as u64
                    ),
                ));
            }
        }
        Ok(b)
    }
}
