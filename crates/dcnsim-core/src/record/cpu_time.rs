//! CPU time of the calling thread, beside wall time in a run's summary. On a shared machine wall
//! time measures the neighbours too: stored runs of one spec, with identical event counts, took
//! 32 s and 755 s of wall time (docs/performance.md, the SIRD Table 5 cells); their CPU time does
//! not depend on what else runs.

/// Seconds the calling thread has run on a CPU so far (`CLOCK_THREAD_CPUTIME_ID`, exact to the
/// nanosecond; `/proc/thread-self/schedstat` would lag by up to a scheduler tick); `None` off
/// 64-bit Linux.
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
pub fn thread_cpu_s() -> Option<f64> {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, tp: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut t = Timespec { sec: 0, nsec: 0 };
    // SAFETY: clock_gettime writes one timespec (two 64-bit fields on 64-bit Linux) into `t`.
    let ok = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut t) } == 0;
    ok.then(|| t.sec as f64 + t.nsec as f64 / 1e9)
}

#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
pub fn thread_cpu_s() -> Option<f64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_grows_with_work_and_never_outruns_the_clock() {
        let Some(before) = thread_cpu_s() else { return }; // not Linux: nothing to check
        let wall = std::time::Instant::now();
        let mut x = 1u64;
        for i in 0..20_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
        }
        let cpu = thread_cpu_s().expect("available once") - before;
        let wall = wall.elapsed().as_secs_f64();
        assert!(cpu > 0.0, "20 M multiplications took no CPU time");
        // One thread cannot run longer than the clock (1 ms of slack for the two reads).
        assert!(cpu <= wall + 1e-3, "thread CPU {cpu} s > wall {wall} s");
    }
}
