//! The summary's `window_counts`: drops and transport counters since the measurement window opened.
//! Port counters restart with the window, the transport's do not. The warm-up changes no packet, and
//! a run cut at the warm-up is the longer run's prefix (same seed, same arrivals), so the window's
//! transport counts are the whole run's minus the prefix's; without a warm-up they are the whole run's.
mod common;
use common::*;
use dcnsim_core::api::RunOutput;

fn lossy_run(duration_us: f64, warmup_us: f64) -> RunOutput {
    run_checked(&spec(&format!(
        "seed = 3\nduration_us = {duration_us}\n[measure]\nwarmup_us = {warmup_us}\n[topology]\nkind = \"single_switch\"\n\
         hosts = 8\nhost_rate_gbps = 10.0\n[switch]\nbuffer_bytes = 150000\n[transport]\nprotocol = \"newreno\"\n\
         [[workload]]\nkind = \"poisson\"\nload = 0.9\ncdf = \"websearch\"\n"
    )))
}

fn count(out: &RunOutput, path: &[&str]) -> u64 {
    path.iter().fold(&out.summary, |v, k| &v[*k]).as_u64().unwrap_or_else(|| panic!("no {path:?}"))
}

#[test]
fn window_counts_are_the_run_minus_its_prefix() {
    let whole = lossy_run(3000.0, 0.0);
    assert!(count(&whole, &["queues", "drops"]) > 0, "the scenario must drop");
    assert_eq!(whole.summary["window_counts"]["drops"], whole.summary["queues"]["drops"]);
    assert_eq!(whole.summary["window_counts"]["transport"]["timeouts"], whole.summary["transport"]["timeouts"]);

    let (prefix, run) = (lossy_run(1500.0, 100.0), lossy_run(3000.0, 1500.0));
    // Drops count the window only, like every port counter.
    let drops = count(&run, &["window_counts", "drops"]);
    assert_eq!(drops, count(&run, &["queues", "drops"]));
    assert!(drops > 0 && drops < count(&whole, &["queues", "drops"]), "{drops}");
    for key in ["retransmitted_packets", "timeouts"] {
        let all = |o: &RunOutput| count(o, &["transport", key]);
        let w = count(&run, &["window_counts", "transport", key]);
        assert_eq!(w, all(&run) - all(&prefix), "{key}");
        assert!(w > 0 && w < all(&run), "{key}: {w} of {}", all(&run));
    }
    // Whole-run transport counters do not depend on the warm-up: it changes no packet.
    assert_eq!(whole.summary["transport"], run.summary["transport"]);
}
