//! Named setups outside Python: a spec that names one runs from any client, the bench binary
//! included, with the setup's tables in its resolved spec.
mod common;
use common::*;
use dcnsim_core::api::read_spec;

const NDP_PAPER_RUN: &str = "setup = \"ndp-paper\"\nseed = 1\nduration_us = 300.0\n\
    [topology]\nkind = \"fat_tree\"\nk = 4\nhost_rate_gbps = 10.0\n\
    [transport]\ninitial_window_packets = 15\n\
    [[workload]]\nkind = \"permutation\"\nsize_bytes = 100000\n";

#[test]
fn the_resolved_spec_holds_the_setups_tables_with_the_specs_own_keys_over_them() {
    let (_, resolved) = read_spec(&spec(NDP_PAPER_RUN)).unwrap();
    assert_eq!(resolved["transport"]["protocol"], "ndp");
    assert_eq!(resolved["transport"]["initial_window_packets"], 15);
    assert_eq!(resolved["queue"]["trim"], true);
    assert_eq!(resolved["routing"]["load_balancing"], "source");
    assert_eq!(resolved["net"]["mtu_bytes"], 9000);
    assert!(resolved.get("setup").is_none());
}

#[test]
fn an_unknown_setup_is_a_spec_error_at_setup() {
    let text = NDP_PAPER_RUN.replace("ndp-paper", "ndp-papre");
    let e = read_spec(&spec(&text)).unwrap_err().to_string();
    assert!(e.starts_with("spec error at `setup`: unknown setup \"ndp-papre\"; known: ndp-paper,"), "{e}");
}

#[test]
fn the_bench_binary_runs_a_spec_that_names_a_setup() {
    let dir = std::env::temp_dir().join(format!("dcnsim-setups-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ndp_paper_permutation.toml");
    std::fs::write(&path, NDP_PAPER_RUN).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dcnsim-bench")).arg(&path).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let row = stdout.lines().find(|l| l.starts_with("ndp_paper_permutation")).expect("a row for the spec");
    let data_packets: u64 = row.split_whitespace().nth(5).unwrap().parse().unwrap();
    assert!(data_packets > 0, "{row}");
}
