//! How much of a link's capacity was used inside the measurement window. A port counts a packet's
//! bytes when it starts serializing it, so a packet on the wire when the window opens or closes is
//! split: only the share serialized inside the window counts, and utilization can never exceed 1.

use crate::net::link_usage::unsent_after;
use crate::net::Network;
use crate::time::Time;

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
