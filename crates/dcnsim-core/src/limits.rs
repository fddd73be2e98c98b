//! Every limit of dcnsim in one place: what it bounds, in which unit, and why. Spec readers reject a
//! value past one of these with an error naming the field; the hot path relies on them (and on the
//! relations checked at compile time at the end of this file) to stay inside its integer types.
//!
//! Protocol knobs (window sizes, gains, floors) keep their sanity ranges beside their readers: they
//! bound one protocol's behaviour, not the simulator's arithmetic or memory.

use crate::ids::{FlowId, HostId, PacketId};
use crate::time::{Rate, Time, US};

// ---- Run size: memory and index widths ----

/// Packets alive at once (queued, on a link, or held by a transport). A run that needs more is
/// diverging (unbounded queues under overload) and is stopped with a clear error rather than
/// eating all memory; 2^28 packets of 64 B are 16 GiB.
pub const MAX_LIVE_PACKETS: usize = 1 << 28;

/// Flows in one run: flow ids are `u32` and the last value is kept free. Beyond this the flow table
/// alone would not fit a machine.
pub const MAX_FLOWS: usize = u32::MAX as usize - 1;

/// Hosts in a topology (about a million): keeps a typo from allocating the machine away.
pub const MAX_HOSTS: u64 = 1 << 20;

/// Fat-tree switch radix k (k^3/4 hosts: 524,288 at k = 128).
pub const MAX_FAT_TREE_K: u64 = 128;

/// Strict-priority classes per port: per-class state is a fixed array of this length.
pub const MAX_PRIORITIES: u8 = 8;

/// Transport setups in one run (`[transport]` plus `[transports.NAME]`): timers carry the index in
/// a byte.
pub const MAX_TRANSPORTS: usize = 16;

/// `[[workload]]` components in one run: flow records carry the component index in a `u16`.
pub const MAX_WORKLOAD_COMPONENTS: usize = u16::MAX as usize;

/// Bytes in one flow: 1 TiB, far beyond any simulated duration, small enough for exact integer
/// arithmetic on byte counts (sums over flows stay far below 2^64).
pub const MAX_FLOW_BYTES: u64 = 1 << 40;

/// Iterations of a dependency graph (a training job's loop); a flow's tag holds its iteration in
/// 32 bits.
pub const MAX_ITERATIONS: u64 = 1 << 24;

/// Pipelined chunks of each transfer of a collective.
pub const MAX_CHUNKS: u64 = 1 << 12;

// ---- Packets and links ----

/// Largest packet on the wire (MTU and control packets), bytes: jumbo frames are 9 KB; 64 KiB is
/// the largest IP packet. Packet sizes are `u32` from there on.
pub const MAX_PACKET_BYTES: u64 = 65_536;

/// Smallest MTU, bytes: the minimum Ethernet frame.
pub const MIN_MTU_BYTES: u64 = 64;

/// Slowest link or pacing rate, bits/s (1 Mb/s): below it a full-size packet's serialization time,
/// computed in fixed point (`Rate`), would overflow a `u64`.
pub const MIN_RATE_BPS: u64 = 1_000_000;
/// `MIN_RATE_BPS` in the specs' unit, Gb/s.
pub const MIN_RATE_GBPS: f64 = MIN_RATE_BPS as f64 / 1e9;

/// Fastest link or pacing rate, Gb/s (100 Tb/s): a guard against a unit slip (b/s typed as Gb/s).
pub const MAX_RATE_GBPS: f64 = 100_000.0;
/// `MAX_RATE_GBPS` in bits/s.
pub const MAX_RATE_BPS: u64 = MAX_RATE_GBPS as u64 * 1_000_000_000;

/// Longest link propagation delay or switch latency, us (1 s): a guard against a unit slip.
pub const MAX_DELAY_US: f64 = 1e6;

// ---- Time ----

/// Longest run, us of simulated time (100 s): guards against a unit slip (e.g. ns typed as us).
pub const MAX_DURATION_US: f64 = 1e8;

/// Longest retransmission timeout a transport accepts (minimum or initial), us (10 s).
pub const MAX_RTO_US: f64 = 1e7;

/// Longest closed-loop think time, us (1000 s; a longer one simply never ends inside a run).
pub const MAX_THINK_US: f64 = 1e9;

/// Most doublings of a timeout on consecutive expiries (the transports' exponential backoff,
/// `transport/parts/rtt.rs`, stops doubling here); bounds the timer arithmetic below.
pub const MAX_RTO_BACKOFF_SHIFT: u32 = 16;

const fn us_to_ps(us: f64) -> Time {
    us as Time * US
}

/// Whether `gbps` is a rate the engine represents (`MIN_RATE_GBPS` to `MAX_RATE_GBPS`);
/// the error says why not. NaN and infinity are not rates.
pub fn check_gbps(gbps: f64) -> Result<(), String> {
    let (min, max) = (MIN_RATE_GBPS, MAX_RATE_GBPS);
    if (min..=max).contains(&gbps) {
        Ok(())
    } else {
        Err(format!("must be in [{min}, {max}] Gb/s, got {gbps}"))
    }
}

// ---- Relations, checked when the crate compiles ----

// The hot structures keep their size (an 8-byte event, a packet in one cache line): asserted beside
// their types, in `engine/events.rs` and `net/packet.rs`.

// Limits fit the integer types that carry them.
const _: () = assert!(MAX_LIVE_PACKETS <= PacketId::MAX as usize, "packet ids are u32");
const _: () = assert!(MAX_LIVE_PACKETS < 1 << 31, "a PFC frame on a link is an id with the top bit set");
const _: () = assert!(MAX_FLOWS < FlowId::MAX as usize, "flow ids are u32, u32::MAX kept free");
const _: () = assert!(MAX_HOSTS <= HostId::MAX as u64, "host ids are u32");
const _: () = assert!(MAX_FAT_TREE_K * MAX_FAT_TREE_K * MAX_FAT_TREE_K / 4 <= MAX_HOSTS, "a full fat tree fits");
const _: () = assert!(MAX_PRIORITIES as u32 <= u8::BITS, "paused classes are bits of a u8");
const _: () = assert!(MAX_TRANSPORTS <= u8::MAX as usize + 1, "timers carry the transport index in a u8");
const _: () = assert!(MAX_WORKLOAD_COMPONENTS <= u16::MAX as usize + 1, "flows carry the component in a u16");
const _: () = assert!(MAX_PACKET_BYTES <= u32::MAX as u64, "packet sizes are u32");
const _: () = assert!(MAX_ITERATIONS <= u32::MAX as u64, "a flow's tag holds its iteration in 32 bits");
const _: () = assert!(MIN_MTU_BYTES < MAX_PACKET_BYTES);
const _: () = assert!(MAX_FLOW_BYTES <= u64::MAX >> 20, "a million such flows still sum within a u64");

// Serialization time (`Rate::tx_time`, ps in fixed point) is exact and in range at both extremes:
// the largest packet at the slowest rate does not overflow, and at the fastest rate one byte still
// costs a picosecond (a rate whose ps-per-byte rounded to zero would make transmissions free).
const _: () = assert!(MIN_RATE_BPS <= MAX_RATE_BPS);
const _: () = assert!(
    (MAX_PACKET_BYTES as u128) * (8 * 1_000_000_000_000 * 65_536 / MIN_RATE_BPS as u128 + 1) < u64::MAX as u128,
    "the largest packet at the slowest rate overflows tx_time"
);
const _: () = assert!(Rate::from_bps(MIN_RATE_BPS).tx_time(MAX_PACKET_BYTES as u32) == 524_288 * US);
const _: () = assert!(Rate::from_bps(MAX_RATE_BPS).tx_time(1) >= 1, "a byte at the fastest rate takes >= 1 ps");

// Time stays far inside a u64: the end of the longest run plus the longest timer any component may
// set from there (a fully backed-off timeout, a think time, a propagation delay, a serialization)
// leaves a margin of 16x.
const LONGEST_TIMER_PS: Time = (us_to_ps(MAX_RTO_US) << MAX_RTO_BACKOFF_SHIFT)
    + us_to_ps(MAX_THINK_US)
    + us_to_ps(MAX_DELAY_US)
    + Rate::from_bps(MIN_RATE_BPS).tx_time(MAX_PACKET_BYTES as u32);
const _: () = assert!(us_to_ps(MAX_DURATION_US) + LONGEST_TIMER_PS <= u64::MAX / 16, "time overflows a u64");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_outside_the_limits_are_refused() {
        assert!(check_gbps(1e-10).is_err() && check_gbps(f64::NAN).is_err() && check_gbps(2e5).is_err());
        assert!(check_gbps(MIN_RATE_GBPS).is_ok() && check_gbps(400.0).is_ok());
    }
}
