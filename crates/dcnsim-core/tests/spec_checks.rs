//! Specs that used to crash or to run as silent nonsense (exit 0 with results that cannot mean
//! anything): each is now an error naming the field, or a warning printed and listed in the
//! summary's `warnings` naming it. One test per class; docs/spec.md states the rule.
mod common;
use common::*;
use dcnsim_core::api::{run, RunOptions, RunOutput};

/// A small valid DCTCP run that each case edits.
const BASE: &str = SMALL_DCTCP_SPEC;

/// NDP as its paper runs it, for the transport-specific cases.
const NDP: &str = r#"
seed = 1
duration_us = 300.0
[net]
mtu_bytes = 9000
[topology]
kind = "fat_tree"
k = 4
host_rate_gbps = 10.0
[queue]
priorities = 2
limit_packets = 8
trim = true
scheduling = "wrr"
wrr_weights = [10, 1]
[routing]
load_balancing = "source"
[transport]
protocol = "ndp"
[[workload]]
kind = "permutation"
size_bytes = 100000
"#;

/// `base` with `from` replaced by `to` (which must occur), then `extra` appended.
fn edit(base: &str, from: &str, to: &str, extra: &str) -> String {
    assert!(from.is_empty() || base.contains(from), "{from} not in the base spec");
    let text = if from.is_empty() { base.to_string() } else { base.replacen(from, to, 1) };
    text + extra
}

fn check_errors(cases: Vec<(&str, String, &str, &str)>) {
    let failures = spec_error_mismatches(
        cases
            .into_iter()
            .map(|(what, text, field, fragment)| (what.into(), spec(&text), field.into(), fragment.into())),
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn warnings(out: &RunOutput) -> Vec<String> {
    out.summary["warnings"].as_array().unwrap().iter().map(|w| w.as_str().unwrap().to_string()).collect()
}

/// Runs `text` (it must succeed) and checks that one warning names `field` and says `fragment`.
fn assert_warns(text: &str, field: &str, fragment: &str) -> RunOutput {
    let out = run(&spec(text), &RunOptions::default()).unwrap_or_else(|e| panic!("{e}\n{text}"));
    check_invariants(&out);
    let w = warnings(&out);
    assert!(
        w.iter().any(|w| w.starts_with(&format!("`{field}`")) && w.contains(fragment)),
        "no `{field}` warning: {w:?}"
    );
    out
}

fn workload_file(name: &str, flows: &[(u32, u32, u64, f64)]) -> String {
    format!("[[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n", flow_file(name, flows).display())
}

const POISSON: &str = "[[workload]]\nkind = \"poisson\"\nload = 0.5\ncdf = \"websearch\"\n";

#[test]
fn rates_the_engine_cannot_represent_are_errors() {
    let host = "host_rate_gbps = 10.0";
    check_errors(vec![
        (
            "host rate rounds to 0 b/s",
            edit(BASE, host, "host_rate_gbps = 1e-10", ""),
            "topology.host_rate_gbps",
            "must be in",
        ),
        (
            "core rate too slow",
            edit(BASE, "core_rate_gbps = 10.0", "core_rate_gbps = 1e-7", ""),
            "topology.core_rate_gbps",
            "must be in",
        ),
        ("host rate too fast", edit(BASE, host, "host_rate_gbps = 1e7", ""), "topology.host_rate_gbps", "must be in"),
        (
            "bottleneck rate",
            edit(
                BASE,
                "kind = \"leaf_spine\"\nracks = 2\nhosts_per_rack = 2\nspines = 1",
                "kind = \"dumbbell\"\nhosts_per_side = 2\nbottleneck_rate_gbps = 1e-12",
                "",
            )
            .replace("core_rate_gbps = 10.0\n", ""),
            "topology.bottleneck_rate_gbps",
            "must be in",
        ),
        (
            "override rate",
            edit(BASE, "", "", "[[topology.link_overrides]]\na = \"tor0\"\nb = \"spine0\"\nrate_gbps = 1e-10\n"),
            "topology.link_overrides[0].rate_gbps",
            "must be in",
        ),
        ("NIC pacing", edit(BASE, "", "", "[net]\nnic_pacing_gbps = 1e-10\n"), "net.nic_pacing_gbps", "must be in"),
    ]);
}

#[test]
fn nan_and_infinity_are_errors_naming_the_field() {
    check_errors(vec![
        ("nan duration", edit(BASE, "duration_us = 100.0", "duration_us = nan", ""), "duration_us", "finite"),
        (
            "infinite rate",
            edit(BASE, "host_rate_gbps = 10.0", "host_rate_gbps = inf", ""),
            "topology.host_rate_gbps",
            "finite",
        ),
        (
            "-inf core rate",
            edit(BASE, "core_rate_gbps = 10.0", "core_rate_gbps = -inf", ""),
            "topology.core_rate_gbps",
            "finite",
        ),
        ("infinite load", edit(BASE, "load = 0.5", "load = inf", ""), "workload[0].load", "finite"),
        (
            "nan for an integer",
            edit(BASE, "limit_packets = 100", "limit_packets = nan", ""),
            "queue.limit_packets",
            "finite",
        ),
        ("nan warm-up", edit(BASE, "", "", "[measure]\nwarmup_us = nan\n"), "measure.warmup_us", "finite"),
        (
            "nan transport key",
            edit(BASE, "protocol = \"dctcp\"", "protocol = \"dctcp\"\nmin_rto_us = nan", ""),
            "transport.min_rto_us",
            "finite",
        ),
        (
            "nan in a list",
            edit(BASE, "", "", "[metrics]\nsize_group_edges_bytes = [1000.0, nan]\n"),
            "metrics.size_group_edges_bytes[1]",
            "finite",
        ),
        (
            "a time past the clock",
            edit(BASE, "load = 0.5", "load = 0.5\nstart_us = 1e300", ""),
            "workload[0].start_us",
            "at most",
        ),
    ]);
}

#[test]
fn a_buffer_under_one_packet_is_an_error() {
    let limit = "limit_packets = 100";
    check_errors(vec![
        (
            "switch buffer",
            edit(BASE, limit, "limit_bytes = 1000", ""),
            "queue.limit_bytes",
            "cannot hold one full packet",
        ),
        (
            "NIC buffer",
            edit(BASE, "", "", "[queue.nic]\nlimit_bytes = 1499\n").replace(limit, "limit_bytes = 100000"),
            "queue.nic.limit_bytes",
            "cannot hold one full packet",
        ),
        (
            "zero packets (the key the user wrote)",
            edit(BASE, limit, "limit_packets = 0", ""),
            "queue.limit_packets",
            "zero-size buffer",
        ),
        (
            "header queue",
            edit(NDP, "trim = true", "trim = true\nheader_limit_bytes = 10", ""),
            "queue.header_limit_bytes",
            "cannot hold one header",
        ),
        (
            "cut payload returning headers",
            edit(NDP, "trim = true", "trim = true\ntrim_mode = \"cut_payload\"\nbounce = true", ""),
            "queue.bounce",
            "drops what it cannot queue",
        ),
        (
            "cut payload without trimming",
            edit(NDP, "trim = true", "trim_mode = \"cut_payload\"", ""),
            "queue.trim_mode",
            "only used with trim = true",
        ),
    ]);
}

#[test]
fn workloads_that_start_nothing_are_errors() {
    let no_workload = BASE.split("[[workload]]").next().unwrap().to_string();
    check_errors(vec![
        ("empty workload", no_workload.replacen("seed = 1", "seed = 1\nworkload = []", 1), "workload", "is empty"),
        (
            "poisson after the end",
            edit(BASE, "load = 0.5", "load = 0.5\nstart_us = 100.0", ""),
            "workload[0].start_us",
            "after the end",
        ),
        (
            "incast after the end",
            no_workload.clone() + "[[workload]]\nkind = \"incast\"\nsenders = 2\nsize_bytes = 1000\nat_us = 250.0\n",
            "workload[0].at_us",
            "after the end",
        ),
        (
            "permutation after the end",
            no_workload.clone() + "[[workload]]\nkind = \"permutation\"\nsize_bytes = 1000\nstart_us = 100.0\n",
            "workload[0].start_us",
            "after the end",
        ),
        (
            "flow list after the end",
            no_workload.clone() + &workload_file("checks-late", &[(0, 1, 1000, 100.0), (1, 2, 1000, 150.0)]),
            "workload[0].path",
            "after the end",
        ),
        (
            "flow list of a header only",
            no_workload + &workload_file("checks-empty", &[]),
            "workload[0].path",
            "header but no flows",
        ),
    ]);
}

#[test]
fn pacing_above_line_rate_is_an_error() {
    check_errors(vec![(
        "pacing above line rate",
        edit(BASE, "", "", "[net]\nnic_pacing_gbps = 25.0\n"),
        "net.nic_pacing_gbps",
        "no effect",
    )]);
    // Above the host rate but below a NIC an override speeds up: that NIC alone is paced.
    let sped_up = edit(
        BASE,
        "",
        "",
        "[net]\nnic_pacing_gbps = 25.0\n[[topology.link_overrides]]\na = \"host0\"\nb = \"tor0\"\nrate_gbps = 40.0\n",
    );
    assert_warns(&sped_up, "net.nic_pacing_gbps", "paces only the 1 NIC");
}

#[test]
fn what_a_transport_needs_is_checked_against_queues_and_hosts() {
    check_errors(vec![
        (
            "a class the queues lack",
            edit(BASE, "protocol = \"dctcp\"", "protocol = \"dctcp\"\ndata_priority = 3", ""),
            "transport.data_priority",
            "1 class(es) (queue.priorities)",
        ),
        (
            "a class the NIC queues lack",
            edit(
                BASE,
                "protocol = \"dctcp\"",
                "protocol = \"dctcp\"\ncontrol_priority = 1",
                "[queue.to_host]\npriorities = 2\n[queue.fabric]\npriorities = 2\n",
            ),
            "transport.control_priority",
            "queue.nic.priorities",
        ),
        (
            "a named setup's class",
            edit(BASE, "", "", "[transports.bg]\nprotocol = \"newreno\"\ndata_priority = 2\n"),
            "transports.bg.data_priority",
            "class 2",
        ),
        (
            "prioritize a host that does not exist",
            edit(NDP, "protocol = \"ndp\"", "protocol = \"ndp\"\nprioritize_senders = [3, 16]", ""),
            "transport.prioritize_senders",
            "host 16 does not exist",
        ),
        (
            "NDP without trimming",
            edit(NDP, "trim = true\n", "", "").replace("scheduling = \"wrr\"\nwrr_weights = [10, 1]\n", ""),
            "queue.trim",
            "trimming",
        ),
    ]);
    // Classes a design uses by default warn: SIRD's scheduled data, pHost's data under its pulls.
    let sird = edit(BASE, "protocol = \"dctcp\"", "protocol = \"sird\"", "[routing]\nload_balancing = \"spray\"\n");
    assert_warns(&sird, "transport.priorities", "scheduled data");
    let phost = edit(NDP, "trim = true\n", "", "")
        .replace("priorities = 2\n", "")
        .replace("scheduling = \"wrr\"\nwrr_weights = [10, 1]\n", "");
    assert_warns(&phost.replace("\"ndp\"", "\"phost\""), "transport.protocol", "below control packets");
}

#[test]
fn a_run_that_ends_before_its_warm_up_warns() {
    let text = edit(BASE, "seed = 1", "seed = 1\nstop_when_done = true", "[measure]\nwarmup_us = 90.0\n")
        .replace(POISSON, &workload_file("checks-early", &[(0, 1, 1000, 1.0)]));
    let out = assert_warns(&text, "measure.warmup_us", "before the warm-up ended");
    assert!(out.summary["sim_end_ps"].as_u64().unwrap() < 90_000_000);
}

#[test]
fn unfinished_counted_flows_are_reported_and_warned() {
    // Short flows finish; 2 MB flows (1.6 ms at 10 Gb/s) cannot within the 100 us run.
    let flows: Vec<(u32, u32, u64, f64)> =
        (0..12).map(|i| (i % 4, (i + 1) % 4, if i % 3 == 0 { 2_000_000 } else { 2000 }, i as f64)).collect();
    let text = BASE.replace(POISSON, &workload_file("checks-unfinished", &flows));
    let out = assert_warns(&text, "duration_us", "had not finished");
    let s = &out.summary;
    let unfinished = s["flows"]["counted_unfinished"].as_u64().unwrap();
    assert!(unfinished > 0);
    assert_eq!(s["slowdown"]["unfinished"].as_u64().unwrap(), unfinished);
    assert_eq!(s["fct_us"]["unfinished"].as_u64().unwrap(), unfinished);
    let by_size: u64 =
        s["slowdown_by_size"].as_array().unwrap().iter().map(|g| g["unfinished"].as_u64().unwrap()).sum();
    assert_eq!(by_size, unfinished);
}

#[test]
fn flow_lists_partly_past_the_end_and_idle_components_warn() {
    let late = workload_file("checks-partly-late", &[(0, 1, 1000, 1.0), (1, 2, 1000, 150.0)]);
    assert_warns(&BASE.replace(POISSON, &late), "workload[0].path", "1 of the 2 flows");
    // Websearch flows average 1.6 MB: at 1% load four 10G hosts expect well under one in 100 us.
    assert_warns(&BASE.replace("load = 0.5", "load = 0.01"), "workload[0]", "expects 0.");
}

#[test]
fn every_drop_is_counted_nic_drops_included() {
    // A sender whose window floods a 4-packet NIC queue: drops happen at the NIC, not in switches.
    let text = BASE
        .replace(POISSON, &workload_file("checks-nic-drops", &[(0, 3, 2_000_000, 0.0)]))
        .replace("protocol = \"dctcp\"", "protocol = \"newreno\"\ninitial_window_packets = 50")
        .replace("ecn = \"step\"\necn_k_packets = 20\n", "")
        + "[queue.nic]\nlimit_packets = 4\n";
    let out = run_checked(&spec(&text));
    let q = &out.summary["queues"];
    let (nic, switch, all) =
        (q["nic_drops"].as_u64().unwrap(), q["switch_drops"].as_u64().unwrap(), q["drops"].as_u64().unwrap());
    assert!(nic > 0, "{q}");
    assert_eq!(all, nic + switch);
    assert_eq!(all, out.summary["packets"]["dropped"].as_u64().unwrap());
}

/// The newer protocols: each switch feature or queue class a protocol depends on is checked, so a
/// run without it fails naming what to set (or warns, for classes the design uses by default).
#[test]
fn newer_protocols_name_the_switch_features_and_classes_they_need() {
    let dctcp = "protocol = \"dctcp\"";
    let with = |transport: &str, extra: &str| edit(BASE, dctcp, transport, extra);
    check_errors(vec![
        ("HULL without phantom queues", with("protocol = \"hull\"", ""), "transport.protocol", "phantom_queue = true"),
        ("HPCC without INT", with("protocol = \"hpcc\"", ""), "transport.protocol", "int = true"),
        ("RCP without RCP switches", with("protocol = \"rcp\"", ""), "transport.protocol", "rcp = true"),
        (
            "PB-FS without postcards",
            with("protocol = \"dcqcn\"\nfast_start = \"pbfs\"", ""),
            "transport.fast_start",
            "postcards = true",
        ),
        (
            "PB-FS on a window CC without postcards",
            with("protocol = \"dctcp\"\nfast_start = \"pbfs\"", ""),
            "transport.fast_start",
            "set [switch] postcards = true",
        ),
        (
            "ExpressPass data in a class the queues lack",
            with("protocol = \"expresspass\"\ndata_priority = 5", ""),
            "transport.data_priority",
            "1 class(es)",
        ),
        (
            "ExpressPass credit requests in a class the queues lack",
            with("protocol = \"expresspass\"\ncontrol_priority = 2", "[queue.fabric]\npriorities = 2\n"),
            "transport.control_priority",
            "class 2",
        ),
        (
            "Dart's short flows in a class the queues lack",
            with("protocol = \"dart\"\nshort_flow_priority = 1", ""),
            "transport.short_flow_priority",
            "short flows' data",
        ),
    ]);
    // Default classes of a design warn: Homa's priority levels, dcPIM's three classes.
    assert_warns(
        &with("protocol = \"homa\"", "[routing]\nload_balancing = \"spray\"\n"),
        "transport.priority_levels",
        "class 7",
    );
    assert_warns(&with("protocol = \"dcpim\"", ""), "transport.use_priorities", "class 2");
}

/// Go-back-N RDMA with IRN's default timeouts on a PFC fabric warns (they fire behind pauses with
/// nothing lost); set timeouts, selective repeat or a lossy fabric do not.
#[test]
fn default_rdma_timeouts_on_a_lossless_fabric_warn() {
    let rdma = |transport: &str, switch: &str| {
        format!(
            "seed = 1\nduration_us = 100.0\n[topology]\nkind = \"single_switch\"\nhosts = 4\nhost_rate_gbps = 100.0\n\
             [switch]\n{switch}\n[transport]\nprotocol = \"dcqcn\"\n{transport}\n[[workload]]\nkind = \"incast\"\n\
             senders = 3\nsize_bytes = 10000\nat_us = 0.0\nreceiver = 0\n"
        )
    };
    let lossless = "buffer_bytes = 1000000\npfc = true";
    assert_warns(&rdma("", lossless), "transport.timeout_us", "no timer");
    for (transport, switch) in [
        ("timeout_us = 10000.0\nshort_timeout_us = 10000.0", lossless),
        ("short_timeout_us = 50.0", lossless),
        ("recovery = \"irn\"", lossless),
        ("", "buffer_bytes = 1000000"),
    ] {
        let out = run(&spec(&rdma(transport, switch)), &RunOptions::default()).unwrap();
        assert!(warnings(&out).iter().all(|w| !w.contains("no timer")), "{transport} / {switch}: {:?}", warnings(&out));
    }
}
