//! Flow lists given inline (`flows = [[src, dst, size_bytes, start_us], ...]`) run exactly like the
//! same list from a CSV file, and their errors name the row; a set cancel flag stops a run.
mod common;
use common::{flow_file, spec, spec_error_mismatches};
use dcnsim_core::api::{run, RunError, RunOptions};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

const HEAD: &str = r#"
seed = 1
duration_us = 2000.0
[topology]
kind = "single_switch"
hosts = 4
host_rate_gbps = 10.0
[queue]
limit_packets = 100
[transport]
protocol = "dctcp"
[[workload]]
kind = "flow_list"
"#;

const FLOWS: &[(u32, u32, u64, f64)] = &[(0, 1, 30_000, 5.0), (2, 1, 20_000, 0.0), (3, 0, 1_000_000, 1.5)];

fn inline(rows: &str) -> serde_json::Value {
    spec(&format!("{HEAD}flows = {rows}\n"))
}

#[test]
fn inline_rows_give_the_same_run_as_the_csv_file() {
    let file = flow_file("inline-same", FLOWS);
    let from_file = run(&spec(&format!("{HEAD}path = \"{}\"\n", file.display())), &RunOptions::default()).unwrap();
    let rows: Vec<String> = FLOWS.iter().map(|(a, b, s, t)| format!("[{a}, {b}, {s}, {t}]")).collect();
    let from_rows = run(&inline(&format!("[{}]", rows.join(", "))), &RunOptions::default()).unwrap();
    assert_eq!(from_file.flows, from_rows.flows);
    assert_eq!(common::u64s(&from_rows.flows, "size_bytes"), vec![20_000, 1_000_000, 30_000]);
    // The resolved spec keeps the rows, so two different inline lists never look alike.
    assert_eq!(from_rows.resolved_spec["workload"][0]["flows"].as_array().unwrap().len(), 3);
}

#[test]
fn inline_errors_name_the_row() {
    let base = |rows: &str| inline(rows);
    let both = {
        let mut s = inline("[[0, 1, 10, 0]]");
        s["workload"][0]["path"] = "x.csv".into();
        s
    };
    let neither = {
        let mut s = inline("[[0, 1, 10, 0]]");
        s["workload"][0].as_object_mut().unwrap().remove("flows");
        s
    };
    let cases = vec![
        ("short row", base("[[0, 1, 10, 0], [0, 1, 10]]"), "workload[0].flows[1]", "expected [src, dst"),
        ("same host", base("[[2, 2, 10, 0]]"), "workload[0].flows[0]", "the same host"),
        ("negative size", base("[[0, 1, -10, 0]]"), "workload[0].flows[0]", "size_bytes -10"),
        ("no such host", base("[[0, 1, 10, 0], [0, 9, 10, 0]]"), "workload[0].flows[1]", "does not exist"),
        ("not a list", base("3"), "workload[0].flows", "expected an array"),
        ("empty", base("[]"), "workload[0].flows", "is empty"),
        ("both", both, "workload[0].flows", "not both"),
        ("neither", neither, "workload[0].path", "needs `path`"),
    ];
    let failures =
        spec_error_mismatches(cases.into_iter().map(|(w, s, f, m)| (w.to_string(), s, f.to_string(), m.to_string())));
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn a_set_cancel_flag_stops_the_run() {
    // 100 ms at 10 Gb/s: far more events than the check interval.
    let mut s = inline("[[0, 1, 1000000000, 0]]");
    s["duration_us"] = 100_000.0.into();
    let opts = RunOptions { cancel: Some(Arc::new(AtomicBool::new(true))), ..Default::default() };
    assert!(matches!(run(&s, &opts), Err(RunError::Cancelled)));
    let idle = RunOptions { cancel: Some(Arc::new(AtomicBool::new(false))), ..Default::default() };
    assert!(run(&s, &idle).is_ok());
}

#[test]
fn a_summary_only_run_has_the_same_summary_and_no_flow_table() {
    let s = inline("[[0, 1, 20000, 0], [1, 0, 300000, 5], [2, 0, 1000, 7]]");
    let full = run(&s, &RunOptions::default()).unwrap();
    let lean = run(&s, &RunOptions { summary_only: true, ..Default::default() }).unwrap();
    assert_eq!((full.flows.rows(), lean.flows.rows(), lean.flows.columns.len()), (3, 0, 0));
    let stable = |o: &dcnsim_core::api::RunOutput| {
        let mut v = o.summary.clone();
        for k in ["wall_time_s", "setup_time_s", "events_per_sec", "cpu_time_s", "events_per_cpu_sec"] {
            v.as_object_mut().unwrap().remove(k);
        }
        v
    };
    assert_eq!(stable(&full), stable(&lean));
    assert_eq!(full.ports, lean.ports);
}
