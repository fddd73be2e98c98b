//! What is still on the wire at a moment: the share of the packet each port is serializing that goes
//! out after it. The measurement window counts a packet on the wire at its edges pro rata
//! (`report::link_usage`).

use crate::net::pipeline::pfc::is_mac_frame;
use crate::net::Network;
use crate::time::Time;

/// Per port: bytes of the packet being serialized at `t` that go out after `t` (pro-rated; 0 when
/// the port is not serializing). The last packet put on a link is the only one that can be. PFC
/// frames are not pooled packets and not counted in `tx_bytes`: they are skipped (a frame queued
/// behind the packet on the wire is the link's last entry while that packet is still going out).
pub fn unsent_after(net: &Network, t: Time) -> Vec<f64> {
    net.ports
        .iter()
        .map(|p| {
            let last = p.pipe_entries().rev().find(|&(_, id)| !is_mac_frame(id));
            let Some((arrival, pkt)) = last else { return 0.0 };
            let size = net.pool.get(pkt).size;
            let end = arrival - p.delay;
            let tx = p.rate.tx_time(size);
            if end <= t || tx == 0 {
                return 0.0;
            }
            debug_assert!(end - tx <= t, "a packet on the wire started after {t}");
            size as f64 * (end - t).min(tx) as f64 / tx as f64
        })
        .collect()
}
