//! Our own random numbers, so results never change when a dependency is upgraded.
//!
//! Generator: xoshiro256++ (Blackman & Vigna), seeded through splitmix64. Every component gets its
//! own stream derived from the run seed and a stable component name, so adding a component does not
//! shift the numbers any other component draws.

#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a of a name: stable across platforms and versions (unlike std's hasher).
pub fn stable_hash(name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

/// A 64-bit mixer (the splitmix64 finalizer), used for ECMP hashing.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    pub fn seed_from(seed: u64) -> Rng {
        let mut st = seed;
        let s = [splitmix64(&mut st), splitmix64(&mut st), splitmix64(&mut st), splitmix64(&mut st)];
        Rng { s }
    }

    /// The stream for component `name` of the run seeded with `seed`.
    pub fn for_component(seed: u64, name: &str) -> Rng {
        Rng::seed_from(seed ^ stable_hash(name).rotate_left(17))
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = (s[0].wrapping_add(s[3])).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1) with 53 random bits.
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in [0, n), unbiased (Lemire's multiply-and-reject).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0);
        loop {
            let x = self.next_u64();
            let m = (x as u128) * (n as u128);
            let lo = m as u64;
            if lo >= n || lo >= n.wrapping_neg() % n {
                return (m >> 64) as u64;
            }
        }
    }

    /// Exponential with the given mean.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        // 1 - U is in (0, 1], so the log is finite.
        -mean * (1.0 - self.uniform()).ln()
    }

    pub fn bernoulli(&mut self, p: f64) -> bool {
        self.uniform() < p
    }

    /// Fisher-Yates shuffle.
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_vector_is_stable() {
        // Pins the generator against hard-coded outputs: a change here changes every published
        // result, so it must be deliberate (and the golden hashes updated with it).
        let mut r = Rng::seed_from(42);
        let v: Vec<u64> = (0..3).map(|_| r.next_u64()).collect();
        assert_eq!(v, PINNED_SEED_42, "Rng::seed_from(42) changed: {v:#x?}");
        let mut c = Rng::for_component(1, "network");
        assert_eq!(
            c.next_u64(),
            PINNED_COMPONENT,
            "Rng::for_component changed: {:#x}",
            Rng::for_component(1, "network").next_u64()
        );
        assert_eq!(mix64(12345), PINNED_MIX64, "mix64 changed: {:#x}", mix64(12345));
        assert_eq!(stable_hash("dcnsim"), PINNED_HASH, "stable_hash changed: {:#x}", stable_hash("dcnsim"));
        let mut u = Rng::seed_from(9);
        assert_eq!(u.below(1000), PINNED_BELOW, "below changed");
    }

    const PINNED_SEED_42: [u64; 3] = [15021278609987233951, 5881210131331364753, 18149643915985481100];
    const PINNED_COMPONENT: u64 = 0x10a5_47e8_b98a_77a7;
    const PINNED_MIX64: u64 = 0xf36c_f116_4265_dd51;
    const PINNED_HASH: u64 = 0x52d7_469d_8294_a7d1;
    const PINNED_BELOW: u64 = 599;

    #[test]
    fn below_is_in_range_and_covers() {
        let mut r = Rng::seed_from(7);
        let mut seen = [0u32; 6];
        for _ in 0..6000 {
            seen[r.below(6) as usize] += 1;
        }
        assert!(seen.iter().all(|&c| c > 850 && c < 1150), "{seen:?}");
    }

    #[test]
    fn exponential_mean() {
        let mut r = Rng::seed_from(3);
        let n = 200_000;
        let m: f64 = (0..n).map(|_| r.exponential(5.0)).sum::<f64>() / n as f64;
        assert!((m - 5.0).abs() < 0.05, "{m}");
    }

    #[test]
    fn shuffle_is_a_permutation() {
        let mut r = Rng::seed_from(1);
        let mut v: Vec<u32> = (0..100).collect();
        r.shuffle(&mut v);
        let mut s = v.clone();
        s.sort();
        assert_eq!(s, (0..100).collect::<Vec<_>>());
        assert_ne!(v, s);
    }
}
