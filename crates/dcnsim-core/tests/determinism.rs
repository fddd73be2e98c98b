//! The same spec and seed give byte-identical flow tables; another seed gives a different one. The
//! summary's machine-dependent figures (wall and CPU time) stay out of that and are consistent.
mod common;
use common::*;

fn poisson_spec(seed: u64) -> serde_json::Value {
    spec(&format!(
        "seed = {seed}\nduration_us = 2000.0\n[topology]\nkind = \"leaf_spine\"\nracks = 4\nhosts_per_rack = 4\nspines = 2\n\
         host_rate_gbps = 10.0\ncore_rate_gbps = 20.0\n[queue]\nlimit_packets = 100\necn = \"step\"\necn_k_packets = 30\n\
         [routing]\nload_balancing = \"spray\"\n[transport]\nprotocol = \"dctcp\"\n\
         [[workload]]\nkind = \"poisson\"\nload = 0.6\ncdf = \"fb_hadoop\"\n"
    ))
}

fn poisson(seed: u64) -> String {
    let out = run_checked(&poisson_spec(seed));
    assert!(out.flows.rows() > 50);
    out.flows.to_csv() + &out.ports.to_csv()
}

#[test]
fn same_seed_same_bytes_other_seed_differs() {
    let a = poisson(11);
    let b = poisson(11);
    let c = poisson(12);
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn the_summary_gives_the_event_loops_cpu_time_beside_its_wall_time() {
    let s = run_checked(&poisson_spec(11)).summary;
    if !cfg!(all(target_os = "linux", target_pointer_width = "64")) {
        assert!(s["cpu_time_s"].is_null() && s["events_per_cpu_sec"].is_null(), "null where not measured");
        return;
    }
    let cpu = s["cpu_time_s"].as_f64().expect("cpu_time_s on Linux");
    let wall = s["wall_time_s"].as_f64().unwrap();
    assert!(cpu > 0.0 && cpu <= wall + 1e-3, "cpu {cpu} s, wall {wall} s (one thread runs the loop)");
    let rate = s["events_per_cpu_sec"].as_f64().unwrap();
    let events = s["events"].as_f64().unwrap();
    assert!((rate * cpu / events - 1.0).abs() < 1e-9, "events per CPU second = events / cpu_time_s");
}
