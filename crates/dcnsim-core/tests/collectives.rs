//! Training jobs: collectives on an idle non-blocking fabric against their exact ideal and the
//! textbook formula, iterations with compute, stragglers, and errors naming the key.
mod common;
use common::*;
use dcnsim_core::api::{run, RunOptions, RunOutput};

const MSS: u64 = 1436;
const HEADER: u64 = 64;
const GBPS: f64 = 100.0;
const DELAY_US: f64 = 1.0;

fn job(ranks: u32, body: &str) -> String {
    format!(
        "seed = 3\nduration_us = 200000.0\n[topology]\nkind = \"single_switch\"\nhosts = {ranks}\nhost_rate_gbps = {GBPS}\n\
         host_delay_us = {DELAY_US}\n[transport]\nprotocol = \"dctcp\"\ninitial_window_packets = 1000\n[queue]\necn = \"step\"\n\
         ecn_k_packets = 65\n[[workload]]\nkind = \"collective\"\nranks = {ranks}\n{body}\n"
    )
}

fn run_job(text: &str) -> RunOutput {
    run_checked(&spec(text))
}

/// The ideal FCT of `bytes` alone between two hosts of the single switch: every packet
/// serialized on the sender's link, the last one again on the receiver's, two propagation delays.
fn lone_ideal(bytes: u64) -> u64 {
    let tx = |b: u64| b * 80; // 100 Gb/s is exactly 80 ps per byte
    let (full, rest) = (bytes / MSS, bytes % MSS);
    let packets: Vec<u64> = (0..full).map(|_| MSS + HEADER).chain((rest > 0).then_some(rest + HEADER)).collect();
    packets.iter().map(|&b| tx(b)).sum::<u64>() + tx(*packets.last().unwrap()) + 2 * (DELAY_US * 1e6) as u64
}

#[test]
fn a_ring_allreduce_on_an_idle_fabric_meets_the_textbook_ideal() {
    let (n, step_bytes) = (8u64, 20 * MSS);
    let out = run_job(&job(n as u32, &format!("collective = \"ring_allreduce\"\nsize_bytes = {}", n * step_bytes)));
    let c = &out.collectives;
    assert_eq!(c.rows(), 1);
    assert_eq!(out.flows.rows() as u64, 2 * (n - 1) * n, "2(N-1) steps of N transfers");
    let ideal = u64s(c, "ideal_ps")[0];
    // 2(N-1) steps, each an S/N transfer alone: 2(N-1)/N x S/B (with headers) plus each step's
    // latency (the last packet's second serialization and two propagation delays).
    assert_eq!(ideal, 2 * (n - 1) * lone_ideal(step_bytes));
    let took = opt_u64s(c, "end_ps")[0].unwrap() - u64s(c, "start_ps")[0];
    let slowdown = took as f64 / ideal as f64;
    assert!((1.0..1.05).contains(&slowdown), "ring all-reduce took {slowdown} x its ideal");
}

#[test]
fn halving_doubling_and_alltoall_ideals_follow_their_formulas() {
    let n = 8u64;
    let size = 64 * MSS;
    let out = run_job(&job(
        n as u32,
        &format!("collective = [\"halving_doubling_allreduce\", \"alltoall\"]\nsize_bytes = {size}"),
    ));
    let ideal = u64s(&out.collectives, "ideal_ps");
    // Halving: S/2, S/4, S/8 exchanged, then doubling back: each a lone transfer.
    let hd: u64 = [size / 2, size / 4, size / 8].iter().map(|&b| 2 * lone_ideal(b)).sum();
    assert_eq!(ideal[0], hd, "lone S/2 {}", lone_ideal(size / 2));
    // All-to-all: each NIC sends N-1 transfers of S/N back to back; the last arrives one lone
    // transfer's latency after the NIC finished the others.
    let one = size / n;
    let ser = |b: u64| ((b / MSS) * (MSS + HEADER) + if !b.is_multiple_of(MSS) { b % MSS + HEADER } else { 0 }) * 80;
    assert_eq!(ideal[1], (n - 2) * ser(one) + lone_ideal(one));
    let sd = f64s(&out.collectives, "slowdown");
    assert!(sd.iter().all(|s| (1.0..1.3).contains(s)), "slowdowns {sd:?}");
}

#[test]
fn iterations_repeat_after_compute_and_a_straggler_stretches_every_iteration() {
    let body = "collective = \"ring_allreduce\"\nsize_bytes = 100000\niterations = 4\ncompute_us = 50.0\n";
    let base = run_job(&job(4, body));
    let slow = run_job(&job(4, &format!("{body}stragglers = [2]\nstraggler_factor = 3.0\n")));
    let it =
        |o: &RunOutput| opt_u64s(&o.iterations, "iteration_ps").into_iter().map(|x| x.unwrap()).collect::<Vec<_>>();
    let (b, s) = (it(&base), it(&slow));
    assert_eq!((b.len(), s.len()), (4, 4));
    assert_eq!(base.collectives.rows(), 4);
    let compute = u64s(&base.iterations, "compute_ps");
    assert!(compute.iter().all(|&c| c == 50_000_000), "compute {compute:?}");
    // The straggler computes 100 us longer each iteration and every rank waits for it, less what
    // the others can do before they need its data (at most one all-reduce's duration, `c`).
    let c = opt_u64s(&base.iterations, "communication_ps").iter().map(|x| x.unwrap()).max().unwrap() as i64;
    for (i, (si, bi)) in s.iter().zip(&b).enumerate() {
        let extra = *si as i64 - *bi as i64;
        assert!((100_000_000 - c..=100_000_000 + c).contains(&extra), "iteration {i}: {extra} ps longer (c = {c})");
    }
    let end = |o: &RunOutput| opt_u64s(&o.iterations, "end_ps")[3].unwrap() as i64;
    let extra = end(&slow) - end(&base);
    assert!((400_000_000 - 4 * c..=400_000_000).contains(&extra), "the job took {extra} ps longer (c = {c})");
    let exposed = opt_u64s(&slow.iterations, "exposed_communication_ps");
    let comm = opt_u64s(&slow.iterations, "communication_ps");
    assert!(exposed[1].unwrap() < comm[1].unwrap(), "the straggler's wait is not exposed communication");
    let jobs = &slow.summary["jobs"];
    assert_eq!(jobs["collective"]["iterations_finished"], 4, "{jobs}");
}

#[test]
fn a_job_is_deterministic_and_bad_keys_name_the_field() {
    let text = job(6, "collective = \"alltoall_serial\"\nsize_bytes = 600000\nplacement = \"random\"\nchunks = 2\n");
    let (a, b) = (run_job(&text), run_job(&text));
    assert_eq!(a.collectives, b.collectives);
    assert_eq!(a.flows.rows(), 6 * 5 * 2);
    for (body, field) in [
        ("collective = \"ring\"\nsize_bytes = 10", "collective"),
        ("collective = \"halving_doubling_allreduce\"\nsize_bytes = 10", "ranks"),
        ("collective = \"alltoall\"\nsize_bytes = 10\nplacement = \"hosts\"\nhosts = [0, 1]", "hosts"),
        ("collective = \"alltoall\"\nsize_bytes = 10\nplacement = \"strided\"\nstride = 2", "placement"),
        ("collective = \"alltoall\"\nsize_bytes = 10\nstragglers = [9]", "stragglers"),
    ] {
        let e = run(&spec(&job(6, body)), &RunOptions::default()).err().expect("an error").to_string();
        assert!(e.contains(&format!("workload[0].{field}")), "{body}: {e}");
    }
}

#[test]
fn the_two_job_example_of_the_workloads_page_runs_as_written() {
    let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/workloads.md")).unwrap();
    let block = page.split("```toml\n").nth(1).and_then(|b| b.split("```").next()).expect("a TOML example");
    let out = run_job(&format!("seed = 1\nduration_us = 50000.0\n{block}"));
    let jobs = &out.summary["jobs"];
    for name in ["job-a", "job-b"] {
        assert_eq!(jobs[name]["iterations_finished"], 3, "{jobs}");
    }
    assert_eq!(out.iterations.rows(), 6);
    let sd = f64s(&out.collectives, "slowdown");
    assert!(sd.iter().all(|s| *s >= 1.0), "no collective beats its ideal: {sd:?}");
}
