//! The exact ideal flow completion time: the time a flow takes alone in the empty network, with
//! the same packetization, headers, path and store-and-forward hops as the simulation.
//!
//! The sender's NIC serializes packets back to back from the flow's start; at every hop a packet
//! starts serializing when it has fully arrived and the port is free again (a tandem of
//! store-and-forward queues). Packet i starts on hop j at
//!   start[j][i] = max(start[j-1][i] + tx[j-1](s_i) + d[j-1], start[j][i-1] + busy[j](s_{i-1})),
//! where busy is the serialization time, or the pacing gap on a paced NIC, and the flow completes
//! when the last packet crosses the last link. The same integer serialization times as the
//! simulator are used, so the result is exact to the picosecond, not an approximation.
//!
//! With per-packet multipath (spraying, source routing) packets need not queue behind each other
//! in the fabric: a short last packet on another path can overtake. There the ideal assumes
//! perfect spraying — every packet finds its middle hops free — while the sender's NIC and the
//! receiver's downlink still carry every packet one at a time (in arrival order).
//!
//! Equal-cost paths need not be equally fast (a degraded link, `topology.link_overrides`). The
//! ideal is then defined so that no flow can beat it: with per-flow ECMP, the fastest of the flow's
//! equal-cost paths (the path it would have been luckiest to be hashed onto); with per-packet
//! multipath, every packet crosses the fabric on the fastest path for its size. A flow hashed onto
//! a slow path therefore shows a slowdown above 1 even alone: that is the cost of the asymmetry.

use super::ideal_paths::Crossing;
use crate::engine::time::Time;
pub use crate::net::paths::Hop;

/// Completion time of `size` application bytes cut into packets of at most `mss` payload bytes,
/// each with `header` bytes of headers, over `hops`.
pub fn ideal_fct(size: u64, mss: u32, header: u32, hops: &[Hop]) -> Time {
    assert!(size > 0 && mss > 0 && !hops.is_empty());
    let full = size / mss as u64;
    let rest = (size % mss as u64) as u32;
    // free[j]: when hop j can start the next packet; arrive: when the last packet crossed hop h-1.
    let mut free = vec![0 as Time; hops.len()];
    let mut arrive = 0;
    let mut run = |wire: u32, count: u64| {
        let tx: Vec<Time> = hops.iter().map(|h| h.rate.tx_time(wire)).collect();
        let busy: Vec<Time> = hops.iter().map(|h| h.busy(wire)).collect();
        for _ in 0..count {
            let mut ready = 0; // the sender has all data at time 0
            for j in 0..hops.len() {
                let start = ready.max(free[j]);
                free[j] = start + busy[j];
                ready = start + tx[j] + hops[j].delay;
            }
            arrive = ready;
        }
    };
    run(mss + header, full);
    if rest > 0 {
        run(rest + header, 1);
    }
    arrive
}

/// The ideal under perfect per-packet multipath (see the module doc).
pub fn ideal_fct_multipath(size: u64, mss: u32, header: u32, hops: &[Hop]) -> Time {
    assert!(size > 0 && mss > 0 && !hops.is_empty());
    if hops.len() <= 2 {
        return ideal_fct(size, mss, header, hops);
    }
    let (first, last, middle) = (hops[0], hops[hops.len() - 1], &hops[1..hops.len() - 1]);
    multipath(size, mss, header, first, last, &|wire| first.delay + transit(middle, wire))
}

/// Serialization plus delay of a packet of `wire` bytes over `hops`, queueing nowhere.
fn transit(hops: &[Hop], wire: u32) -> Time {
    hops.iter().map(|h| h.rate.tx_time(wire) + h.delay).sum()
}

/// The multipath ideal given the NIC, the downlink and `reach(wire)`: when a packet that left the
/// NIC at 0 reaches the downlink, crossing the fabric without queueing.
fn multipath(size: u64, mss: u32, header: u32, first: Hop, last: Hop, reach: &dyn Fn(u32) -> Time) -> Time {
    let full = size / mss as u64;
    let rest = (size % mss as u64) as u32;
    let mut arrivals: Vec<(Time, u32)> = Vec::with_capacity(full as usize + 1);
    let mut nic_free = 0;
    for wire in std::iter::repeat_n(mss + header, full as usize).chain((rest > 0).then_some(rest + header)) {
        let done = nic_free + first.rate.tx_time(wire);
        nic_free += first.busy(wire);
        arrivals.push((done + reach(wire), wire));
    }
    arrivals.sort(); // the downlink serves packets in the order they reach it
    let mut free = 0;
    let mut end = 0;
    for (at, wire) in arrivals {
        let start = at.max(free);
        free = start + last.busy(wire);
        end = end.max(start + last.rate.tx_time(wire) + last.delay);
    }
    end
}

/// `ideal_fct_multipath` in O(hops) for any size, as `ideal_fct_fast`: past the first packets
/// the first and last hops advance by the slower of the two per full packet.
pub fn ideal_fct_multipath_fast(size: u64, mss: u32, header: u32, hops: &[Hop]) -> Time {
    if hops.len() <= 2 {
        return ideal_fct_fast(size, mss, header, hops);
    }
    let (first, last, middle) = (hops[0], hops[hops.len() - 1], &hops[1..hops.len() - 1]);
    multipath_fast(size, mss, header, first, last, &|wire| first.delay + transit(middle, wire))
}

fn multipath_fast(size: u64, mss: u32, header: u32, first: Hop, last: Hop, reach: &dyn Fn(u32) -> Time) -> Time {
    const WARM: u64 = 64;
    assert!(size > 0 && mss > 0);
    let full = size / mss as u64;
    if full <= 2 * WARM {
        return multipath(size, mss, header, first, last, reach);
    }
    let wire = mss + header;
    let step = first.busy(wire).max(last.busy(wire));
    let head = WARM * mss as u64;
    let tail = size - (full - WARM) * mss as u64;
    multipath(head + tail, mss, header, first, last, reach) + (full - 2 * WARM) * step
}

/// The ideal FCT of `size` bytes over a crossing (see the module doc). Per-flow routing: the best
/// of the equal-cost paths, the one the flow would have been luckiest to be hashed onto. Per-packet
/// multipath: every packet crosses the fabric on the fastest path for its size, queueing nowhere
/// between the NIC and the downlink. Either way no flow can finish sooner.
pub fn ideal_over(size: u64, mss: u32, header: u32, c: &Crossing, multipath_lb: bool) -> Time {
    assert!(!c.middles.is_empty());
    let path = |m: &[Hop]| -> Vec<Hop> { [&[c.first][..], m, &[c.last][..]].concat() };
    if !multipath_lb || c.middles.iter().all(|m| m.is_empty()) {
        return c.middles.iter().map(|m| ideal_fct_fast(size, mss, header, &path(m))).min().expect("a crossing");
    }
    let reach = |wire: u32| c.first.delay + c.middles.iter().map(|m| transit(m, wire)).min().expect("a crossing");
    multipath_fast(size, mss, header, c.first, c.last, &reach)
}

/// Same as `ideal_fct` but O(hops) for any size: after the pipeline fills, each further full
/// packet advances the last hop by the bottleneck's serialization time. Used for long flows.
pub fn ideal_fct_fast(size: u64, mss: u32, header: u32, hops: &[Hop]) -> Time {
    const WARM: u64 = 64;
    let full = size / mss as u64;
    if full <= 2 * WARM {
        return ideal_fct(size, mss, header, hops);
    }
    // Simulate WARM packets, skip the steady state, then simulate the tail exactly.
    let wire = mss + header;
    let bottleneck = hops.iter().map(|h| h.busy(wire)).max().unwrap();
    let head = WARM * mss as u64;
    let tail = size - (full - WARM) * mss as u64; // last WARM full packets plus the remainder
    let skipped = full - 2 * WARM;
    // Once the pipeline is full every hop advances by exactly `bottleneck` per packet, so
    // the completion of (head + skipped + tail) equals completion of (head + tail) + skipped * bottleneck.
    ideal_fct(head + tail, mss, header, hops) + skipped * bottleneck
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::Rate;

    fn hops(rates: &[f64], delay: Time) -> Vec<Hop> {
        rates.iter().map(|&g| Hop { rate: Rate::from_gbps(g), delay, pace: None }).collect()
    }

    #[test]
    fn one_packet_is_sum_of_serializations_and_delays() {
        let h = hops(&[10.0, 10.0], 1_000_000);
        assert_eq!(ideal_fct(1000, 1436, 64, &h), 2 * (1_064 * 800) + 2_000_000);
    }

    #[test]
    fn many_packets_pipeline_through_the_bottleneck() {
        // 10 full packets over 10G then 40G: the first hop is the bottleneck.
        let h = hops(&[10.0, 40.0], 0);
        let t10 = Rate::from_gbps(10.0).tx_time(1500);
        let t40 = Rate::from_gbps(40.0).tx_time(1500);
        assert_eq!(ideal_fct(14360, 1436, 64, &h), 10 * t10 + t40);
        // And with the bottleneck second: first packet's time on hop 1, then 10 at the bottleneck.
        let h = hops(&[40.0, 10.0], 0);
        assert_eq!(ideal_fct(14360, 1436, 64, &h), t40 + 10 * t10);
    }

    #[test]
    fn pacing_spaces_packets_without_slowing_serialization() {
        // A 10G NIC paced at 5G, then a 10G hop: packets leave every 2 tx times.
        let mut h = hops(&[10.0, 10.0], 0);
        h[0].pace = Some(Rate::from_gbps(5.0));
        let t = Rate::from_gbps(10.0).tx_time(1500);
        assert_eq!(ideal_fct(3 * 1436, 1436, 64, &h), 2 * (2 * t) + 2 * t);
    }

    #[test]
    fn multipath_lets_the_short_last_packet_overtake() {
        // 10G host links, 20G fabric, 1 us per hop: a 1436 + 343 byte flow over 4 hops.
        let mut h = hops(&[10.0, 20.0, 20.0, 10.0], 1_000_000);
        assert_eq!(ideal_fct(1779, 1436, 64, &h), 7_925_600);
        // The last packet overtakes in the fabric and waits for nothing; the first packet's
        // 1.2 + 0.6 + 0.6 + 1.2 us of serialization plus 4 us of delay decide.
        assert_eq!(ideal_fct_multipath(1779, 1436, 64, &h), 7_600_000);
        // Never slower than single path, equal on two hops.
        for size in [1u64, 1436, 5000, 100_000] {
            assert!(ideal_fct_multipath(size, 1436, 64, &h) <= ideal_fct(size, 1436, 64, &h));
        }
        h.truncate(2);
        assert_eq!(ideal_fct_multipath(5000, 1436, 64, &h), ideal_fct(5000, 1436, 64, &h));
    }

    #[test]
    fn multipath_fast_path_matches_exact() {
        for rates in [
            [10.0, 40.0, 40.0, 10.0],
            [100.0, 400.0, 400.0, 100.0],
            [40.0, 10.0, 10.0, 40.0],
            [10.0, 10.0, 10.0, 25.0],
            [25.0, 10.0, 10.0, 10.0],
        ] {
            let h = hops(&rates, 500_000);
            for size in [1u64, 1437, 100_000, 1_000_000, 3_333_333] {
                assert_eq!(
                    ideal_fct_multipath_fast(size, 1436, 64, &h),
                    ideal_fct_multipath(size, 1436, 64, &h),
                    "size {size} rates {rates:?}"
                );
            }
        }
    }

    #[test]
    fn fast_path_matches_exact() {
        for rates in [
            [10.0, 40.0, 40.0, 10.0],
            [100.0, 400.0, 400.0, 100.0],
            [10.0, 10.0, 10.0, 10.0],
            [40.0, 10.0, 25.0, 100.0],
        ] {
            let mut h = hops(&rates, 500_000);
            if rates[0] == 40.0 {
                h[0].pace = Some(Rate::from_gbps(7.0));
            }
            for size in [1u64, 1436, 1437, 100_000, 1_000_000, 3_333_333] {
                assert_eq!(
                    ideal_fct_fast(size, 1436, 64, &h),
                    ideal_fct(size, 1436, 64, &h),
                    "size {size} rates {rates:?}"
                );
            }
        }
    }
}
