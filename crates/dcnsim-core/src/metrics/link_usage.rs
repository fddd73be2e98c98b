//! How much of a link's capacity was used inside the measurement window. A port counts a packet's
//! bytes when it starts serializing it, so a packet on the wire when the window opens or closes is
//! split: only the share serialized inside the window counts, and utilization can never exceed 1.

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

/// Utilization of each port over `[start, end]`: bytes serialized inside the window (`tx_bytes`
/// counted from `start`, plus what the packet on the wire at `start` still had to send, minus what
/// the packet on the wire at `end` had left) over what the link could carry.
pub fn utilization(net: &Network, carry_in: &[f64], start: Time, end: Time) -> Vec<f64> {
    let carry_out = unsent_after(net, end);
    net.ports
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let capacity = p.rate.bps() as f64 / 8.0 * (end.saturating_sub(start)) as f64 / 1e12;
            let sent = p.counters.tx_bytes as f64 + carry_in.get(i).copied().unwrap_or(0.0) - carry_out[i];
            if capacity > 0.0 {
                sent.max(0.0) / capacity
            } else {
                f64::NAN
            }
        })
        .collect()
}
