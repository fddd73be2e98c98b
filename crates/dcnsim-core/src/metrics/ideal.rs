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
//! Packets are full-sized but for one short packet when the size is not a multiple of the MSS.
//! Transports send it last, but a flow that lost a packet before its bottleneck (say in its own
//! NIC queue) sends that one again after it, and with a paced NIC or a slower hop downstream that
//! order can be faster. So the ideal is the best order: the short packet last or first for one
//! path; under multipath, where it can also overtake in the fabric, the first few positions too.
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
//! Flows that switches may deflect off their equal-cost paths (Dart's IOFD) onto a faster route
//! have a wider ideal: `ideal_deflected.rs`.

use super::ideal_paths::Crossing;
pub use crate::net::paths::Hop;
use crate::time::Time;

/// A flow's packets: `full` of `full_wire` bytes on the wire and, when the size is not a multiple
/// of the MSS, one short packet of `short_wire` bytes.
#[derive(Clone, Copy, Debug)]
struct Packets {
    full: u64,
    full_wire: u32,
    short_wire: Option<u32>,
}

/// Full packets simulated before and after the steady state that the fast forms skip.
const WARM: u64 = 64;

/// Positions of the short packet tried under multipath (0 = sent first); later ones, short of
/// the very end, behave as these do once the pipeline is in steady state.
const SHORT_POSITIONS: u64 = 8;

impl Packets {
    fn of(size: u64, mss: u32, header: u32) -> Packets {
        assert!(size > 0 && mss > 0);
        let rest = (size % mss as u64) as u32;
        Packets { full: size / mss as u64, full_wire: mss + header, short_wire: (rest > 0).then_some(rest + header) }
    }

    /// Wire sizes in sending order, the short packet at position `at` (clamped to the end).
    fn in_order(self, at: u64) -> impl Iterator<Item = u32> {
        let at = at.min(self.full);
        let full = std::iter::repeat_n(self.full_wire, self.full as usize);
        full.clone().take(at as usize).chain(self.short_wire).chain(full.skip(at as usize))
    }

    /// Positions of the short packet worth trying, `positions` from the front and the end.
    fn short_positions(self, positions: u64) -> Vec<u64> {
        match self.short_wire {
            None => vec![0],
            Some(_) => (0..=positions.min(self.full)).chain([self.full]).collect(),
        }
    }

    /// The same flow with the full packets past 2 x WARM left out, and how many were.
    fn compressed(self) -> (Packets, u64) {
        let skipped = self.full.saturating_sub(2 * WARM);
        (Packets { full: self.full - skipped, ..self }, skipped)
    }
}

/// The store-and-forward tandem: when the last of `wires` (in sending order) crosses `hops`.
fn tandem(wires: impl Iterator<Item = u32>, hops: &[Hop]) -> Time {
    // free[j]: when hop j can start the next packet; arrive: when the last packet crossed every hop.
    let mut free = vec![0 as Time; hops.len()];
    let mut arrive = 0;
    for wire in wires {
        let mut ready = 0; // the sender has all data at time 0
        for (j, h) in hops.iter().enumerate() {
            let start = ready.max(free[j]);
            free[j] = start + h.busy(wire);
            ready = start + h.rate.tx_time(wire) + h.delay;
        }
        arrive = ready;
    }
    arrive
}

/// Per-packet multipath given the NIC, the downlink and `reach(wire)`: when a packet that left the
/// NIC at 0 reaches the downlink, crossing the fabric without queueing.
fn sprayed(wires: impl Iterator<Item = u32>, first: Hop, last: Hop, reach: &dyn Fn(u32) -> Time) -> Time {
    let mut arrivals: Vec<(Time, u32)> = Vec::new();
    let mut nic_free = 0;
    for wire in wires {
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

/// Serialization plus delay of a packet of `wire` bytes over `hops`, queueing nowhere.
fn transit(hops: &[Hop], wire: u32) -> Time {
    hops.iter().map(|h| h.rate.tx_time(wire) + h.delay).sum()
}

/// The best single-path completion: the short packet sent last (as transports do) or first (as a
/// flow whose packet was lost before the bottleneck may end up sending it), whichever is sooner.
fn single_path(p: Packets, hops: &[Hop]) -> Time {
    p.short_positions(0).into_iter().map(|at| tandem(p.in_order(at), hops)).min().expect("a position")
}

fn multipath(p: Packets, first: Hop, last: Hop, reach: &dyn Fn(u32) -> Time) -> Time {
    // Only two wire sizes occur: compute each one's reach once, not once per packet and position.
    let full = reach(p.full_wire);
    let short = p.short_wire.map(|w| (w, reach(w)));
    let cached = |wire: u32| match short {
        Some((w, t)) if w == wire => t,
        _ if wire == p.full_wire => full,
        _ => reach(wire),
    };
    let positions = p.short_positions(SHORT_POSITIONS);
    positions.into_iter().map(|at| sprayed(p.in_order(at), first, last, &cached)).min().expect("a position")
}

/// Completion time of `size` application bytes cut into packets of at most `mss` payload bytes,
/// each with `header` bytes of headers, over `hops`.
pub fn ideal_fct(size: u64, mss: u32, header: u32, hops: &[Hop]) -> Time {
    assert!(!hops.is_empty());
    single_path(Packets::of(size, mss, header), hops)
}

/// Same as `ideal_fct` but O(hops) for any size: after the pipeline fills, each further full
/// packet advances the last hop by the bottleneck's serialization time. Used for long flows.
pub fn ideal_fct_fast(size: u64, mss: u32, header: u32, hops: &[Hop]) -> Time {
    assert!(!hops.is_empty());
    let (p, skipped) = Packets::of(size, mss, header).compressed();
    let bottleneck = hops.iter().map(|h| h.busy(p.full_wire)).max().unwrap();
    single_path(p, hops) + skipped * bottleneck
}

/// The ideal under perfect per-packet multipath (see the module doc).
pub fn ideal_fct_multipath(size: u64, mss: u32, header: u32, hops: &[Hop]) -> Time {
    assert!(!hops.is_empty());
    if hops.len() <= 2 {
        return ideal_fct(size, mss, header, hops);
    }
    let (first, last, middle) = (hops[0], hops[hops.len() - 1], &hops[1..hops.len() - 1]);
    multipath(Packets::of(size, mss, header), first, last, &|wire| first.delay + transit(middle, wire))
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
    let (p, skipped) = Packets::of(size, mss, header).compressed();
    let step = first.busy(p.full_wire).max(last.busy(p.full_wire));
    multipath(p, first, last, reach) + skipped * step
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Rate;

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

    #[test]
    fn a_paced_nic_makes_sending_the_short_packet_first_faster() {
        // A 400G NIC paced at 30G, a 100G downlink: the short packet first shortens the pacing gap
        // every later packet waits behind (the case a randomized run found flows beating).
        let mut h = hops(&[400.0, 100.0], 200_000);
        h[0].pace = Some(Rate::from_gbps(30.0));
        let p = Packets::of(1_223_897, 8936, 64);
        let (last, first) = (tandem(p.in_order(u64::MAX), &h), tandem(p.in_order(0), &h));
        assert!(first < last);
        assert_eq!(ideal_fct(1_223_897, 8936, 64, &h), first);
        assert_eq!(ideal_fct_fast(1_223_897, 8936, 64, &h), first);
    }

    #[test]
    fn no_order_of_the_packets_beats_the_ideal() {
        let mut rng = crate::engine::rng::Rng::seed_from(3);
        let rates = [1.0, 2.5, 10.0, 25.0, 40.0, 100.0];
        let pick = |rng: &mut crate::engine::rng::Rng| rates[rng.below(rates.len() as u64) as usize];
        for _ in 0..3000 {
            let n = 2 + rng.below(4) as usize;
            let mut h: Vec<Hop> = (0..n)
                .map(|_| Hop { rate: Rate::from_gbps(pick(&mut rng)), delay: rng.below(3) * 500_000, pace: None })
                .collect();
            if rng.bernoulli(0.4) {
                h[0].pace = Some(Rate::from_gbps(pick(&mut rng)));
            }
            let most = if rng.bernoulli(0.2) { 60 } else { 12 };
            let size = 1 + rng.below(most * 1436);
            let p = Packets::of(size, 1436, 64);
            let single = ideal_fct(size, 1436, 64, &h);
            let multi = ideal_fct_multipath(size, 1436, 64, &h);
            let (first, last, middle) = (h[0], h[n - 1], &h[1..n - 1]);
            for at in 0..=p.full {
                assert!(single <= tandem(p.in_order(at), &h), "{h:?} size {size} short at {at}");
                let reach = |w: u32| first.delay + transit(middle, w);
                assert!(multi <= sprayed(p.in_order(at), first, last, &reach), "{h:?} size {size} at {at}");
            }
            assert!(multi <= single);
        }
    }

    #[test]
    fn fast_forms_match_exact_with_pacing_and_every_short_position() {
        for rates in [[40.0, 10.0, 10.0, 100.0], [100.0, 400.0, 400.0, 25.0], [10.0, 2.5, 40.0, 10.0]] {
            for pace in [None, Some(7.0), Some(30.0)] {
                let mut h = hops(&rates, 300_000);
                h[0].pace = pace.map(Rate::from_gbps);
                for size in [1u64, 1437, 200_000, 1_000_001, 3_333_333] {
                    assert_eq!(
                        ideal_fct_fast(size, 1436, 64, &h),
                        ideal_fct(size, 1436, 64, &h),
                        "{rates:?} {pace:?} {size}"
                    );
                    assert_eq!(
                        ideal_fct_multipath_fast(size, 1436, 64, &h),
                        ideal_fct_multipath(size, 1436, 64, &h),
                        "{rates:?} {pace:?} {size}"
                    );
                }
            }
        }
    }
}
