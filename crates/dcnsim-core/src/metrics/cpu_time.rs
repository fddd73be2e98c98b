//! CPU time of the calling thread, beside wall time in a run's summary. On a shared machine wall
//! time measures the neighbours too: stored runs of one spec, with identical event counts, took
//! 32 s and 755 s of wall time (docs/performance.md, the SIRD Table 5 cells); their CPU time does
//! not depend on what else runs.

/// Seconds the calling thread has run on a CPU so far (Linux: `/proc/thread-self/schedstat`, in
/// ns); `None` where that is not available.
pub fn thread_cpu_s() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
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
